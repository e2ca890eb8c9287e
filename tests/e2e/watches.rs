//! Contract 1.1's watches, end to end: the `watcher` test plugin (Parents and their
//! Satellites) on the real operator and the embedded API server. An optional watch waits
//! for its CRD without holding readiness and starts when it appears; a reference maps a
//! Satellite to its Parent; an index on Satellites answers the Parent's list from the
//! cache; a Secret reaches the Parent through the Satellites that name it; and a kind the
//! cluster does not serve is `not-served` to the plugin. An object that does not decode is
//! skipped by the cache of its kind, which syncs without it.

use std::time::Duration;

use serde_json::{Value, json};
use wasm_operator::operator::{OperatorConfig, RunningOperator};
use wasm_operator_e2e::{Cluster, cluster_with, eventually, http_get};

const WAIT: Duration = Duration::from_secs(20);

fn crd(kind: &str, plural: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.tests.wasm-operator.dev")},
        "spec": {
            "group": "tests.wasm-operator.dev",
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                }}},
            }],
        },
    })
}

fn parent(name: &str) -> Value {
    json!({"apiVersion": "tests.wasm-operator.dev/v1", "kind": "Parent",
        "metadata": {"name": name, "namespace": "ns"}, "spec": {}})
}

fn satellite(name: &str, parent: &str, secret: &str) -> Value {
    json!({"apiVersion": "tests.wasm-operator.dev/v1", "kind": "Satellite",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"parentRef": {"name": parent}, "secretName": secret}})
}

fn secret(name: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": "ns"},
        "stringData": {"v": value}})
}

/// The operator over the watcher plugin alone, with its health endpoint.
struct Harness {
    cluster: Cluster,
    operator: RunningOperator,
    _plugins: tempfile::TempDir,
}

impl Harness {
    async fn start(objects: &[Value]) -> Self {
        wasm_operator_e2e::init_logs();
        let cluster = cluster_with(objects).await;
        let plugins = tempfile::tempdir().expect("plugins");
        std::fs::copy(
            wasm_operator::cli::test_plugin_dir().join("watcher-reconciler.wasm"),
            plugins.path().join("watcher.wasm"),
        )
        .expect("the watcher plugin is copied");
        let cache = wasm_operator_e2e::shared_cache();
        let mut config = OperatorConfig::new(plugins.path());
        config.health_addr = Some("127.0.0.1:0".parse().expect("addr"));
        let operator = cluster.start_operator(cache, config).await;
        Self {
            cluster,
            operator,
            _plugins: plugins,
        }
    }

    /// Waits until Parent `name`'s status satisfies `check`, and returns it.
    async fn status(&self, name: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
        eventually(what, WAIT, || async {
            let parent = self
                .cluster
                .get("tests.wasm-operator.dev/v1", "Parent", "ns", name)
                .await?;
            let status = parent.get("status")?.clone();
            check(&status).then_some(status)
        })
        .await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_optional_watch_waits_for_its_crd_without_holding_readiness_and_starts_when_it_appears()
{
    let h = Harness::start(&[crd("Parent", "parents")]).await;
    assert!(
        h.operator.controller("watcher").is_some(),
        "a plugin whose optional watch is not served loads"
    );
    h.cluster.create(parent("p")).await;

    let status = h
        .status("p", "the pass without Satellites", |s| {
            s.get("served").is_some()
        })
        .await;
    assert_eq!(
        status,
        json!({"served": false, "listError": "not-served"}),
        "the probe says not served, and a list is not-served (not not-found, not unavailable)"
    );
    let addr = h.operator.health_addr().expect("served");
    // A watch holding readiness would keep this at 503 for as long as its CRD is missing.
    let body = eventually(
        "/readyz 200 while Satellites are not served",
        WAIT,
        || async {
            let (code, body) = http_get(addr, "/readyz").await;
            (code == 200).then_some(body)
        },
    )
    .await;
    assert_eq!(body, "ok");

    h.cluster.create(crd("Satellite", "satellites")).await;
    // The Satellite maps to its Parent by reference: only the new watch can start this
    // pass (the Parent's generation does not change).
    eventually("the Satellite CRD served", WAIT, || async {
        h.cluster
            .create_if_served(satellite("s1", "p", "none"))
            .await
    })
    .await;
    let status = h
        .status("p", "the pass after the Satellite", |s| s["served"] == true)
        .await;
    assert_eq!(
        status,
        json!({"served": true, "satellites": ["s1"], "secrets": {"s1": null}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_change_reaches_the_parent_through_the_satellites_that_name_it() {
    let h = Harness::start(&[crd("Parent", "parents"), crd("Satellite", "satellites")]).await;
    h.cluster.create(secret("creds", "one")).await;
    h.cluster.create(secret("other", "x")).await;
    h.cluster.create(satellite("s1", "p", "creds")).await;
    h.cluster.create(satellite("s2", "q", "other")).await;
    h.cluster.create(parent("p")).await;
    // base64 of "one" and "two".
    h.status("p", "the first pass", |s| {
        s["secrets"] == json!({"s1": "b25l"})
    })
    .await;

    let creds = wasm_operator_types::ObjectRef {
        api_version: "v1".into(),
        kind: "Secret".into(),
        namespace: Some("ns".into()),
        name: "creds".into(),
    };
    h.cluster
        .merge_patch(&creds, json!({"data": {"v": "dHdv"}}))
        .await;

    let status = h
        .status("p", "the pass the Secret started", |s| {
            s["secrets"] == json!({"s1": "dHdv"})
        })
        .await;
    assert_eq!(
        status["satellites"],
        json!(["s1"]),
        "the list through the index on Satellites holds only p's Satellite"
    );
}

/// A Secret whose `metadata.labels` is a list (stored past the server's validation by the
/// `StoreUnvalidated` hook, as a cluster may hold one from before a rule) is skipped by the
/// host's cache of Secrets, which
/// syncs with every other Secret; before, the whole list failed to decode, the cache never
/// synced, and kube-rs logged the list body (every Secret's data) on each retry.
#[tokio::test]
async fn an_object_that_does_not_decode_is_skipped_and_the_cache_of_its_kind_syncs() {
    let cluster = cluster_with(&[]).await;
    let client = cluster.server.client().expect("a client");
    let malformed = json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "malformed", "namespace": "ns", "labels": ["a", "list"]},
        "data": {"password": "bGVha2VkLXZhbHVl"}});
    cluster.server.inject(wasm_operator_apiserver::Fault {
        verb: Some("create".into()),
        resource: Some("secrets".into()),
        name: Some("malformed".into()),
        namespace: None,
        action: wasm_operator_apiserver::FaultAction::StoreUnvalidated,
        remaining: Some(1),
    });
    let request = http::Request::post("/api/v1/namespaces/ns/secrets")
        .header("content-type", "application/json")
        .body(serde_json::to_vec(&malformed).expect("JSON"))
        .expect("a request");
    let stored: Value = client.request(request).await.expect("stored by the server");
    assert_eq!(stored["metadata"]["labels"], json!(["a", "list"]));
    cluster
        .create(json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "fine", "namespace": "ns"}, "data": {"k": "dg=="}}))
        .await;

    let informers = wasm_operator::informer::Informers::new(client, None);
    let secrets = informers.ensure(&wasm_operator_types::KindRef {
        api_version: "v1".into(),
        kind: "Secret".into(),
        plural: "secrets".into(),
        namespaced: true,
    });
    eventually("the well-formed Secret cached", WAIT, || async {
        secrets.get("ns/fine").map(|_| ())
    })
    .await;
    assert!(secrets.get("ns/malformed").is_none());
}
