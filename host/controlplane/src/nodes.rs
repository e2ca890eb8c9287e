//! The fake Nodes KWOK manages: created with their capacity, made `Ready` by KWOK's
//! node-initialize stage and kept so by its lease heartbeat.

use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, PostParams};
use serde_json::json;

use crate::{Error, NODES};

/// The annotation KWOK selects its Nodes by (`--manage-nodes-with-annotation-selector`).
pub(crate) const KWOK_ANNOTATION: &str = "kwok.x-k8s.io/node";
pub(crate) const KWOK_VALUE: &str = "fake";
/// The taint a new Node carries until the node lifecycle controller sees it Ready.
const NOT_READY_TAINT: &str = "node.kubernetes.io/not-ready";

/// Creates [`NODES`]; one that exists (a reused directory) is kept.
pub(crate) async fn create(client: &kube::Client) -> Result<(), Error> {
    let nodes: Api<Node> = Api::all(client.clone());
    for name in NODES {
        let node: Node = serde_json::from_value(json!({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "annotations": {KWOK_ANNOTATION: KWOK_VALUE},
                "labels": {
                    "kubernetes.io/hostname": name,
                    "kubernetes.io/os": "linux",
                    "kubernetes.io/arch": "amd64",
                    "type": "kwok",
                },
            },
            "status": {
                "allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"},
                "capacity": {"cpu": "32", "memory": "256Gi", "pods": "110"},
            },
        }))
        .map_err(|e| Error::Io {
            what: format!("Node {name}"),
            source: e.into(),
        })?;
        match nodes.create(&PostParams::default(), &node).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 409 => {}
            Err(source) => {
                return Err(Error::Client {
                    what: format!("cannot create Node {name}"),
                    source,
                });
            }
        }
    }
    Ok(())
}

/// Every one of [`NODES`] has `Ready=True` and no `node.kubernetes.io/not-ready` taint
/// left: Pods can be scheduled to it.
pub(crate) async fn all_ready(client: &kube::Client) -> Result<(), String> {
    let nodes: Api<Node> = Api::all(client.clone());
    for name in NODES {
        let node = nodes.get(name).await.map_err(|e| e.to_string())?;
        let tainted = node
            .spec
            .as_ref()
            .and_then(|s| s.taints.as_ref())
            .is_some_and(|t| t.iter().any(|t| t.key == NOT_READY_TAINT));
        if tainted {
            return Err(format!("Node {name} still has the {NOT_READY_TAINT} taint"));
        }
        let ready = node
            .status
            .and_then(|s| s.conditions)
            .unwrap_or_default()
            .into_iter()
            .any(|c| c.type_ == "Ready" && c.status == "True");
        if !ready {
            return Err(format!("Node {name} not Ready yet"));
        }
    }
    Ok(())
}
