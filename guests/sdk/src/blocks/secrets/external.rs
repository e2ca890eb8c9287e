//! WaitForExternalSecret and EnsurePushSecret.

use super::Error;
use crate::blocks::apply::{ensure_object, name_of};
use crate::cluster::{Cluster, ClusterExt, Owner};
use crate::external::condition_true;
use crate::external::eso::{EXTERNAL_SECRET_READY, ExternalSecret, PushSecret};
use crate::object::object_key;

/// Where an ExternalSecret stands; `exists` and `ready` of CobaltCore's tri-state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExternalSecretState {
    /// Not found ("ExternalSecret not found yet").
    NotFound,
    /// Exists, but ESO has not synced it (no `Ready=True`).
    NotSynced,
    /// Exists and `Ready=True`.
    Ready,
}

impl ExternalSecretState {
    /// Whether the ExternalSecret exists.
    pub fn exists(self) -> bool {
        self != Self::NotFound
    }

    /// Whether ESO synced it.
    pub fn ready(self) -> bool {
        self == Self::Ready
    }
}

/// Where the ExternalSecret `namespace/name` stands, now: a point-in-time check, to be
/// repeated on each pass while it is not ready.
pub fn wait_for_external_secret<C: Cluster + ?Sized>(
    cluster: &C,
    namespace: &str,
    name: &str,
) -> Result<ExternalSecretState, Error> {
    let found: Option<ExternalSecret> =
        cluster
            .get_typed(Some(namespace), name)
            .map_err(|source| Error::Get {
                what: format!("ExternalSecret {namespace}/{name}"),
                source,
            })?;
    Ok(match found {
        None => ExternalSecretState::NotFound,
        Some(es)
            if es
                .status
                .as_ref()
                .is_some_and(|s| condition_true(&s.conditions, EXTERNAL_SECRET_READY)) =>
        {
            ExternalSecretState::Ready
        }
        Some(_) => ExternalSecretState::NotSynced,
    })
}

/// Creates or updates `push_secret` under `owner` by server-side apply. Fields the builder
/// leaves unset (updatePolicy, refreshInterval) keep the server's defaults, so a converged
/// PushSecret is not rewritten and ESO does not re-push an unchanged credential.
pub fn ensure_push_secret<C: Cluster + ?Sized>(
    cluster: &C,
    owner: &Owner,
    push_secret: &PushSecret,
) -> Result<(), Error> {
    let what = match name_of(push_secret) {
        Ok((namespace, name)) => format!("PushSecret {}", object_key(namespace, name)),
        Err(_) => "PushSecret".to_owned(),
    };
    ensure_object(cluster, owner, push_secret).map_err(|source| Error::Apply { what, source })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ApiError;
    use crate::external::eso::{PushSecretSecret, PushSecretSelector, PushSecretSpec};
    use crate::object::ObjectRef;
    use crate::testing::{FakeCluster, Op, owner};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use serde_json::{Value, json};

    fn external_secret(name: &str, status: Value) -> Value {
        json!({"apiVersion": "external-secrets.io/v1", "kind": "ExternalSecret",
            "metadata": {"name": name, "namespace": "ns"}, "status": status})
    }

    #[test]
    fn wait_for_external_secret_is_tri_state() {
        let cluster = FakeCluster::new()
            .with(external_secret("syncing", json!({})))
            .with(external_secret(
                "failing",
                json!({"conditions": [{"type": "Ready", "status": "False"}]}),
            ))
            .with(external_secret(
                "synced",
                json!({"conditions": [{"type": "Ready", "status": "True"}]}),
            ));
        let cases = [
            (
                "a missing ExternalSecret is not found",
                "missing",
                (false, false),
            ),
            (
                "one without conditions exists but is not synced",
                "syncing",
                (true, false),
            ),
            (
                "one with Ready=False exists but is not synced",
                "failing",
                (true, false),
            ),
            (
                "one with Ready=True exists and is ready",
                "synced",
                (true, true),
            ),
        ];
        for (case, name, (exists, ready)) in cases {
            let state = wait_for_external_secret(&cluster, "ns", name).expect(case);
            assert_eq!((state.exists(), state.ready()), (exists, ready), "{case}");
        }
    }

    #[test]
    fn wait_for_external_secret_fails_on_an_unexpected_api_failure() {
        let cluster = FakeCluster::new().failing(Op::Get, "es", ApiError::Forbidden("no".into()));
        let err = wait_for_external_secret(&cluster, "ns", "es").expect_err("fails");
        assert_eq!(
            err.to_string(),
            "getting ExternalSecret ns/es: forbidden: no"
        );
    }

    fn push_secret() -> PushSecret {
        PushSecret {
            metadata: ObjectMeta {
                name: Some("fernet-backup".into()),
                namespace: Some("ns".into()),
                ..Default::default()
            },
            spec: PushSecretSpec {
                secret_store_refs: super::super::push_secret_store_refs(
                    &super::super::effective_store_ref(None),
                ),
                selector: PushSecretSelector {
                    secret: Some(PushSecretSecret {
                        name: "fernet".into(),
                    }),
                },
                ..Default::default()
            },
            status: None,
        }
    }

    #[test]
    fn a_push_secret_body_leaves_server_defaulted_fields_unset() {
        let cluster = FakeCluster::new();
        ensure_push_secret(&cluster, &owner(), &push_secret()).expect("applies");
        let body = &cluster.applied()[0];
        assert_eq!(body["apiVersion"], "external-secrets.io/v1alpha1");
        assert_eq!(body["kind"], "PushSecret");
        assert!(body["spec"].get("updatePolicy").is_none(), "{body}");
        assert!(body["spec"].get("refreshInterval").is_none(), "{body}");
    }

    #[test]
    fn a_converged_push_secret_is_not_rewritten() {
        let cluster = FakeCluster::new();
        ensure_push_secret(&cluster, &owner(), &push_secret()).expect("1");
        ensure_push_secret(&cluster, &owner(), &push_secret()).expect("2");
        assert_eq!(cluster.writes().len(), 1);
        let stored = cluster
            .object(&ObjectRef::of::<PushSecret>(Some("ns"), "fernet-backup"))
            .expect("stored");
        assert_eq!(stored["metadata"]["ownerReferences"][0]["uid"], "owner-uid");
    }
}
