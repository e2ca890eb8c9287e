//! What the operator stand-ins (cert-manager, mariadb-operator, External Secrets) share:
//! installing their CRDs, a watch-driven level-triggered loop, conditions, and status
//! writes through the status subresource under a field manager.
//!
//! Each of these actors runs one loop: a watcher per kind it reads wakes it, a resync tick
//! wakes it anyway, and every pass reconciles every object it serves from what the cluster
//! holds. A write happens only when the computed status differs from the stored one, so a
//! converged cluster sees no writes.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use kube::api::{Patch, PatchParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Api, Client};
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::{Actor, ActorError};

/// The annotation that keeps an object of an operator stand-in not ready: set it (to the
/// message the condition should carry, or to anything) on an Issuer, ClusterIssuer,
/// Certificate, MariaDB, Database, User, Grant, SecretStore, ClusterSecretStore,
/// ExternalSecret or PushSecret and the actor reports `Ready=False` with that message (on an
/// OpenBaoCluster: `Available=False`)
/// (`kubectl annotate clustersecretstore openbao actors.wasm-operator.dev/not-ready=down`);
/// remove it and the object becomes ready again.
pub const NOT_READY_ANNOTATION: &str = "actors.wasm-operator.dev/not-ready";

/// How often a loop reconciles everything even when no watch event arrived.
pub(crate) const RESYNC: Duration = Duration::from_secs(1);

/// A kind an actor reads or writes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Kind {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    pub namespaced: bool,
}

impl Kind {
    pub(crate) fn resource(&self) -> ApiResource {
        let gvk = GroupVersionKind::gvk(self.group, self.version, self.kind);
        ApiResource::from_gvk_with_plural(&gvk, self.plural)
    }

    pub(crate) fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_owned()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The API of this kind in `namespace` (ignored for a cluster-scoped kind).
    pub(crate) fn api(&self, client: &Client, namespace: Option<&str>) -> Api<DynamicObject> {
        match namespace {
            Some(ns) if self.namespaced => {
                Api::namespaced_with(client.clone(), ns, &self.resource())
            }
            _ => Api::all_with(client.clone(), &self.resource()),
        }
    }

    /// Every object of this kind, in every namespace.
    pub(crate) async fn list(&self, client: &Client) -> Result<Vec<Value>, kube::Error> {
        let list = self.api(client, None).list(&Default::default()).await?;
        Ok(list
            .items
            .into_iter()
            .filter_map(|o| serde_json::to_value(o).ok())
            .collect())
    }
}

/// The Secret kind.
pub(crate) const SECRET: Kind = Kind {
    group: "",
    version: "v1",
    kind: "Secret",
    plural: "secrets",
    namespaced: true,
};

/// Installs every CRD of `yaml` (a multi-document CRD file) by server-side apply under
/// `manager`; applying an unchanged CRD again changes nothing.
pub(crate) async fn install_crds(
    client: &Client,
    actor: Actor,
    manager: &str,
    yaml: &str,
) -> Result<(), ActorError> {
    let crds: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "customresourcedefinitions",
        ),
    );
    for doc in serde_yaml_ng::Deserializer::from_str(yaml) {
        let crd: Value = serde::Deserialize::deserialize(doc).map_err(|e| ActorError::Crd {
            actor,
            crd: "(unparsable document)".into(),
            message: e.to_string(),
        })?;
        let name = crd
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        crds.patch(
            &name,
            &PatchParams::apply(manager).force(),
            &Patch::Apply(&crd),
        )
        .await
        .map_err(|e| ActorError::Crd {
            actor,
            crd: name.clone(),
            message: e.to_string(),
        })?;
    }
    Ok(())
}

/// Wakes `wake` on every event of every kind in `kinds` (all namespaces).
pub(crate) fn spawn_watchers(
    actor: Actor,
    client: &Client,
    kinds: &[Kind],
    wake: &Arc<Notify>,
) -> Vec<JoinHandle<()>> {
    kinds
        .iter()
        .map(|kind| {
            let api = kind.api(client, None);
            let wake = wake.clone();
            let kind = *kind;
            tokio::spawn(async move {
                let mut events = watcher(api, watcher::Config::default())
                    .default_backoff()
                    .boxed();
                while let Some(event) = events.next().await {
                    if let Err(error) = event {
                        tracing::debug!(%actor, kind = kind.kind, %error, "watch error; retrying");
                    }
                    wake.notify_one();
                }
            })
        })
        .collect()
}

/// One reconciliation of everything an actor serves.
pub(crate) trait Pass: Send + Sync + 'static {
    fn pass(&self) -> impl Future<Output = ()> + Send;
}

/// Runs `pass` now, on every wake and at least every [`RESYNC`].
pub(crate) fn spawn_loop<P: Pass>(pass: Arc<P>, wake: Arc<Notify>) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            pass.pass().await;
            tokio::select! {
                () = wake.notified() => {}
                () = tokio::time::sleep(RESYNC) => {}
            }
        }
    })
}

/// A condition as a controller computes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Condition {
    pub type_: &'static str,
    pub status: bool,
    pub reason: String,
    pub message: String,
}

impl Condition {
    pub(crate) fn new(
        type_: &'static str,
        status: bool,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            type_,
            status,
            reason: reason.into(),
            message: message.into(),
        }
    }
}

/// The conditions array for `object`: each condition keeps its stored lastTransitionTime
/// while its status is unchanged, and carries the object's generation when `generation`
/// (the controllers that write `observedGeneration` on conditions).
pub(crate) fn conditions(object: &Value, wanted: &[Condition], generation: bool) -> Value {
    let stored = object
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let generation = object
        .pointer("/metadata/generation")
        .filter(|_| generation)
        .cloned();
    let now = crate::objects::now();
    let list = wanted
        .iter()
        .map(|c| {
            let status = if c.status { "True" } else { "False" };
            let since = stored
                .iter()
                .find(|s| s["type"] == c.type_ && s["status"] == status)
                .and_then(|s| s.get("lastTransitionTime").cloned())
                .unwrap_or_else(|| Value::String(now.clone()));
            let mut out = json!({
                "type": c.type_,
                "status": status,
                "reason": c.reason,
                "message": c.message,
                "lastTransitionTime": since,
            });
            if let Some(generation) = &generation {
                out["observedGeneration"] = generation.clone();
            }
            out
        })
        .collect();
    Value::Array(list)
}

/// Writes `status` (an object of status fields) onto `object` through the status
/// subresource by server-side apply under `manager`, unless every field already holds
/// that value. Returns whether it wrote.
pub(crate) async fn apply_status(
    client: &Client,
    kind: &Kind,
    object: &Value,
    manager: &str,
    status: Value,
) -> Result<bool, kube::Error> {
    let current = object.get("status").cloned().unwrap_or(Value::Null);
    let unchanged = status
        .as_object()
        .is_some_and(|fields| fields.iter().all(|(k, v)| current.get(k) == Some(v)));
    if unchanged {
        return Ok(false);
    }
    let (namespace, name) = namespace_name(object);
    let body = json!({
        "apiVersion": kind.api_version(),
        "kind": kind.kind,
        "metadata": {"name": name},
        "status": status,
    });
    kind.api(client, namespace.as_deref())
        .patch_status(
            &name,
            &PatchParams::apply(manager).force(),
            &Patch::Apply(&body),
        )
        .await?;
    Ok(true)
}

/// The namespace (if any) and name of an object.
pub(crate) fn namespace_name(object: &Value) -> (Option<String>, String) {
    let meta = |k: &str| {
        object
            .pointer(&format!("/metadata/{k}"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    (meta("namespace"), meta("name").unwrap_or_default())
}

/// A string field of an object by JSON pointer.
pub(crate) fn str_at<'a>(object: &'a Value, pointer: &str) -> Option<&'a str> {
    object.pointer(pointer).and_then(Value::as_str)
}

/// The message of the not-ready toggle, when the object carries it.
pub(crate) fn not_ready_toggle(object: &Value) -> Option<String> {
    let annotations = object.pointer("/metadata/annotations")?;
    let value = annotations.get(NOT_READY_ANNOTATION)?.as_str()?;
    Some(if value.is_empty() {
        format!("kept not ready by the {NOT_READY_ANNOTATION} annotation")
    } else {
        value.to_owned()
    })
}

/// Whether an object has a `Ready=True` condition.
pub(crate) fn is_ready(object: &Value) -> bool {
    object
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
}

/// An actor's typed control was used on a server where the actor does not run.
#[derive(Debug, thiserror::Error)]
#[error("the {actor} actor does not run on this server (ServerConfig::actors does not name it)")]
pub struct ActorNotRunning {
    pub actor: Actor,
}

/// Whether an object is being deleted.
pub(crate) fn is_deleting(object: &Value) -> bool {
    crate::objects::is_deleting(object)
}

/// Parses a Go duration (`1h30m`, `90s`, `500ms`, `0`), as Kubernetes' `metav1.Duration`.
pub(crate) fn go_duration(text: &str) -> Option<Duration> {
    if text == "0" {
        return Some(Duration::ZERO);
    }
    let mut total = 0f64;
    let mut rest = text;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        total += number * scale;
        rest = &rest[unit_len..];
    }
    Duration::try_from_secs_f64(total).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_parse_as_metav1_duration_does() {
        let cases = [
            ("1h", Some(3600)),
            ("2160h", Some(2160 * 3600)),
            ("1h30m", Some(5400)),
            ("90s", Some(90)),
            ("0", Some(0)),
            ("10d", None),
            ("", None),
        ];
        for (text, seconds) in cases {
            assert_eq!(go_duration(text).map(|d| d.as_secs()), seconds, "{text}");
        }
    }
}
