//! The per-CR secret store selection (`spec.secretStoreRef`).
//!
//! A CR routes its ExternalSecrets and PushSecrets through the store it selects: a
//! cluster-wide ClusterSecretStore (by default [`OPENBAO_CLUSTER_STORE`]) or a SecretStore
//! in its own namespace. A plugin running namespace-scoped cannot read ClusterSecretStores
//! and refuses them.
//!
//! DECISION: CobaltCore's AddStoreWatches becomes [`store_watches`] and
//! [`store_permissions`]: the host runs the watches a plugin declares in `describe()`.
//! The mapper is a [`Mapping`] value rather than a function, so the spec's "mapper must
//! not be nil" error cannot occur.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde::{Deserialize, Serialize};

use super::Error;
use crate::blocks::conditions::{FALSE, NewCondition, set_condition};
use crate::cluster::{Cluster, ClusterExt};
use crate::external::eso::{
    ClusterSecretStore, PushSecretStoreRef, SECRET_STORE_READY, SecretStore, SecretStoreRef,
};
use crate::external::{ConditionsStatus, condition_true};
use crate::object::KindRef;
use crate::plugin::{Mapping, Permission, Verb, Watch};

/// The kind of a cluster-wide store.
pub const CLUSTER_SECRET_STORE: &str = "ClusterSecretStore";
/// The kind of a namespaced store.
pub const SECRET_STORE: &str = "SecretStore";
/// The shared cluster store a CR without `spec.secretStoreRef` uses.
pub const OPENBAO_CLUSTER_STORE: &str = "openbao-cluster-store";
/// The reason of a gate condition on a store that is not ready.
pub const REASON_SECRET_STORE_NOT_READY: &str = "SecretStoreNotReady";
/// The reason of a gate condition refusing a ClusterSecretStore to a namespace-scoped
/// operator.
pub const REASON_CLUSTER_SECRET_STORE_UNSUPPORTED: &str = "ClusterSecretStoreUnsupported";

/// A CR's `spec.secretStoreRef`: the External Secrets store its ExternalSecrets and
/// PushSecrets go through.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct SecretStoreRefSpec {
    /// `ClusterSecretStore` (the default) or `SecretStore` (in the CR's namespace).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(
        feature = "schemars",
        schemars(extend("enum" = ["ClusterSecretStore", "SecretStore"], "default" = "ClusterSecretStore"))
    )]
    pub kind: String,
    /// The store's name.
    #[cfg_attr(
        feature = "schemars",
        schemars(length(min = 1), regex(pattern = crate::blocks::types::DNS1123_SUBDOMAIN))
    )]
    pub name: String,
}

/// The store a CR uses: `reference`, or the shared cluster store
/// `{ClusterSecretStore, openbao-cluster-store}` when it is absent or has no kind.
pub fn effective_store_ref(reference: Option<&SecretStoreRefSpec>) -> SecretStoreRefSpec {
    match reference {
        Some(r) if !r.kind.is_empty() => r.clone(),
        _ => SecretStoreRefSpec {
            kind: CLUSTER_SECRET_STORE.to_owned(),
            name: OPENBAO_CLUSTER_STORE.to_owned(),
        },
    }
}

fn ready(status: Option<&ConditionsStatus>) -> bool {
    status.is_some_and(|s| condition_true(&s.conditions, SECRET_STORE_READY))
}

/// Whether the ClusterSecretStore `name` reports `Ready=True`; a missing one is not ready.
pub fn is_cluster_secret_store_ready<C: Cluster + ?Sized>(
    cluster: &C,
    name: &str,
) -> Result<bool, Error> {
    let store: Option<ClusterSecretStore> =
        cluster.get_typed(None, name).map_err(|source| Error::Get {
            what: format!("ClusterSecretStore {name}"),
            source,
        })?;
    Ok(store.is_some_and(|s| ready(s.status.as_ref())))
}

/// Whether the SecretStore `namespace/name` reports `Ready=True`; a missing one is not
/// ready.
pub fn is_secret_store_ready<C: Cluster + ?Sized>(
    cluster: &C,
    name: &str,
    namespace: &str,
) -> Result<bool, Error> {
    let store: Option<SecretStore> =
        cluster
            .get_typed(Some(namespace), name)
            .map_err(|source| Error::Get {
                what: format!("SecretStore {namespace}/{name}"),
                source,
            })?;
    Ok(store.is_some_and(|s| ready(s.status.as_ref())))
}

/// Whether the store `reference` selects is ready: a ClusterSecretStore by name, a
/// SecretStore in `namespace`; any other kind is [`Error::UnknownStoreKind`].
pub fn is_store_ref_ready<C: Cluster + ?Sized>(
    cluster: &C,
    reference: &SecretStoreRefSpec,
    namespace: &str,
) -> Result<bool, Error> {
    match reference.kind.as_str() {
        CLUSTER_SECRET_STORE => is_cluster_secret_store_ready(cluster, &reference.name),
        SECRET_STORE => is_secret_store_ready(cluster, &reference.name, namespace),
        other => Err(Error::UnknownStoreKind {
            kind: other.to_owned(),
        }),
    }
}

/// The store gate of a CR: `Ok(true)` when the store `reference` selects is ready.
///
/// On a store that is not ready it sets `condition_type` False under
/// [`REASON_SECRET_STORE_NOT_READY`] (`<Kind> "<name>" is not ready; upstream secret backend
/// unreachable`) and returns `Ok(false)`. With `namespace_scoped`, a ClusterSecretStore is
/// refused without any call: the condition is set False under
/// [`REASON_CLUSTER_SECRET_STORE_UNSUPPORTED`] and the gate returns `Ok(false)`.
/// `reference` is resolved with [`effective_store_ref`] first.
#[allow(clippy::too_many_arguments)]
pub fn gate_store_ready<C: Cluster + ?Sized>(
    cluster: &C,
    reference: &SecretStoreRefSpec,
    namespace: &str,
    namespace_scoped: bool,
    conditions: &mut Vec<Condition>,
    generation: i64,
    condition_type: &str,
) -> Result<bool, Error> {
    let reference = effective_store_ref(Some(reference));
    let (reason, message) = if namespace_scoped && reference.kind == CLUSTER_SECRET_STORE {
        (
            REASON_CLUSTER_SECRET_STORE_UNSUPPORTED,
            format!(
                "ClusterSecretStore {:?} cannot be read by a namespace-scoped operator; \
                 set spec.secretStoreRef to a SecretStore in namespace {namespace:?}",
                reference.name
            ),
        )
    } else if is_store_ref_ready(cluster, &reference, namespace)? {
        return Ok(true);
    } else {
        (
            REASON_SECRET_STORE_NOT_READY,
            format!(
                "{} {:?} is not ready; upstream secret backend unreachable",
                reference.kind, reference.name
            ),
        )
    };
    set_condition(
        conditions,
        &NewCondition {
            type_: condition_type,
            status: FALSE,
            reason,
            message: &message,
            observed_generation: generation,
        },
    );
    Ok(false)
}

/// The `spec.secretStoreRef` of an ExternalSecret reading from `reference`.
pub fn eso_secret_store_ref(reference: &SecretStoreRefSpec) -> SecretStoreRef {
    SecretStoreRef {
        name: reference.name.clone(),
        kind: Some(reference.kind.clone()),
    }
}

/// The single-element `spec.secretStoreRefs` of a PushSecret writing to `reference`.
pub fn push_secret_store_refs(reference: &SecretStoreRefSpec) -> Vec<PushSecretStoreRef> {
    vec![PushSecretStoreRef {
        name: Some(reference.name.clone()),
        kind: Some(reference.kind.clone()),
    }]
}

/// The watches on the stores a CR can select, each mapped back to primaries by `mapping`:
/// ClusterSecretStore unless `namespace_scoped`, then SecretStore.
pub fn store_watches(namespace_scoped: bool, mapping: Mapping) -> Vec<Watch> {
    store_kinds(namespace_scoped)
        .into_iter()
        .map(|kind| Watch::new(kind, mapping.clone()))
        .collect()
}

/// The permissions the store reads need: get, list and watch on the kinds of
/// [`store_watches`].
pub fn store_permissions(namespace_scoped: bool) -> Vec<Permission> {
    store_kinds(namespace_scoped)
        .into_iter()
        .map(|kind| Permission {
            kind,
            verbs: vec![Verb::Get, Verb::List, Verb::Watch],
        })
        .collect()
}

fn store_kinds(namespace_scoped: bool) -> Vec<KindRef> {
    let mut kinds = Vec::new();
    if !namespace_scoped {
        kinds.push(KindRef::of::<ClusterSecretStore>());
    }
    kinds.push(KindRef::of::<SecretStore>());
    kinds
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
