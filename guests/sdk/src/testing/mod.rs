//! Test support for reconcilers: [`FakeCluster`], an in-memory API server and watch cache
//! that implements [`Cluster`](crate::Cluster) and records every call.
//!
//! Compiled with the SDK's `testing` feature (and in the SDK's own tests); a reconciler
//! enables it for its tests only:
//!
//! ```toml
//! [dev-dependencies]
//! wasm-operator-sdk = { workspace = true, features = ["testing"] }
//! ```
//!
//! A test seeds the fake with objects ([`FakeCluster::with`], [`FakeCluster::put`]), tells it
//! what to refuse ([`Refusal`]) and which calls to fail ([`Op`]), runs the code under test
//! against it, and then inspects what the cluster holds ([`FakeCluster::object`],
//! [`FakeCluster::server`], [`FakeCluster::secret_data`]) and which calls were made
//! ([`FakeCluster::calls`], [`FakeCluster::writes`], [`FakeCluster::write_log`]).
//! [`FakeCluster::admitting`] runs a plugin's admission (contract 1.2) on every create,
//! update, patch and delete of the kinds it admits, as the API server calls its webhooks.
//!
//! ```
//! use serde_json::json;
//! use wasm_operator_sdk::testing::{FakeCluster, Op, Refusal};
//! use wasm_operator_sdk::{ApiError, ClusterExt, Propagation};
//! use wasm_operator_sdk::k8s_openapi::api::core::v1::ConfigMap;
//!
//! let cluster = FakeCluster::new()
//!     .with(json!({"apiVersion": "v1", "kind": "ConfigMap",
//!         "metadata": {"name": "settings", "namespace": "ns"}, "data": {"a": "1"}}))
//!     .refusing(Refusal::op_on(Op::Delete, "Secret"))
//!     .failing(Op::Patch, "settings", ApiError::Unavailable("etcd".into()));
//!
//! // The first patch of `settings` fails as injected, the second one is merged.
//! let patch = json!({"data": {"b": "2", "a": null}});
//! assert!(cluster.merge_patch::<ConfigMap>(Some("ns"), "settings", patch.clone(), None).is_err());
//! let patched: ConfigMap = cluster.merge_patch(Some("ns"), "settings", patch, None).unwrap();
//! assert_eq!(patched.data.unwrap().keys().collect::<Vec<_>>(), ["b"]);
//!
//! assert!(!cluster.delete_typed::<ConfigMap>(Some("ns"), "gone", Propagation::Background).unwrap());
//! assert_eq!(cluster.write_log(), ["patch ConfigMap ns/settings"]);
//! ```

mod admission;
mod calls;
mod fake;
mod refusals;
mod served;
mod targets;

pub use calls::{Call, Op};
pub use fake::{CREATION_TIMESTAMP, FakeCluster};
pub use refusals::Refusal;

/// Asserts that `description` lets its plugin sweep `kinds` from a target cluster: the
/// owner label prefix of the remote children is declared, and each kind has list and
/// delete (the sweep's calls).
pub fn assert_can_sweep(description: &crate::Description, kinds: &[crate::KindRef]) {
    use crate::Verb;
    assert_eq!(
        description.targets.owner_label_prefix,
        crate::blocks::remote_children::OWNER_LABEL_PREFIX,
        "the owner label prefix"
    );
    for kind in kinds {
        let verbs = description
            .permissions
            .iter()
            .find(|p| p.kind == *kind)
            .map(|p| p.verbs.clone())
            .unwrap_or_default();
        for verb in [Verb::List, Verb::Delete] {
            assert!(verbs.contains(&verb), "{kind} lacks {verb:?}: {verbs:?}");
        }
    }
}

/// The owner the SDK's block tests apply under.
#[cfg(test)]
pub(crate) fn owner() -> crate::Owner {
    crate::Owner {
        api_version: "keystone.openstack.c5c3.io/v1alpha1".into(),
        kind: "Keystone".into(),
        name: "keystone".into(),
        uid: "owner-uid".into(),
    }
}

#[cfg(test)]
mod tests;
