//! Step 2 — the Keystone the backend attaches to (facts §3.2 step 2), read on the
//! management cluster as `{ns}/{spec.keystoneRef.name}`, and what the later steps read
//! of it.
//!
//! | Case | DomainReady | Pass |
//! |---|---|---|
//! | the Keystone does not exist (or its kind is not served) | False `KeystoneNotFound` "Keystone k not found in namespace ns" | ends; the Keystone watch wakes it |
//! | reading it fails otherwise | False `KeystoneNotFound` "fetching Keystone k: <error>" | ends, 15 s |
//! | `KeystoneAPIReady` absent or not True | False `WaitingForKeystoneAPI` "Keystone k API is not ready yet" (a True DomainReady stays) | ends; the Keystone watch wakes it |
//! | `KeystoneAPIReady` True | — | goes on with the Keystone |
//!
//! DECISION: a Keystone kind the cluster does not serve (its CRD not installed yet) is
//! read as a missing Keystone: the optional watch wakes the backend once it is served.
//!
//! DECISION: a Keystone without `spec.bootstrap.adminUser` (written past its defaulting)
//! authenticates as `admin`, the Keystone schema's default.

use std::ops::ControlFlow;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use wasm_operator_sdk::blocks::types::SecretRefSpec;
use wasm_operator_sdk::{ApiError, Cluster, ClusterExt};

use crate::conditions::{DOMAIN_READY, KEYSTONE_NOT_FOUND, WAITING_FOR_KEYSTONE_API};
use crate::error::Error;
use crate::pass::{Flow, Pass, SECRET_POLLING};

/// The Keystone condition that gates the identity calls.
pub(crate) const KEYSTONE_API_READY: &str = "KeystoneAPIReady";
/// The bootstrap admin user when the Keystone names none (its schema's default).
pub(crate) const DEFAULT_ADMIN_USER: &str = "admin";
/// The Keystone API port of its Service.
const API_PORT: u16 = 5000;

/// What the backend reads of its Keystone: the bootstrap admin, and the API's condition.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct Keystone {
    #[serde(default)]
    pub(crate) metadata: ObjectMeta,
    #[serde(default)]
    pub(crate) spec: KeystoneSpec,
    #[serde(default)]
    pub(crate) status: Option<KeystoneStatus>,
}

wasm_operator_sdk::custom_resource!(
    Keystone,
    "keystone.openstack.c5c3.io",
    "v1alpha1",
    "Keystone",
    "keystones",
    k8s_openapi::NamespaceResourceScope
);

/// The Keystone's spec, as far as it is read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct KeystoneSpec {
    #[serde(default)]
    pub(crate) bootstrap: BootstrapSpec,
    /// The cluster the Keystone's children (its Deployment, admin Secret and Service) live
    /// on; absent: the Keystone's own.
    #[serde(default)]
    pub(crate) target_cluster_ref: Option<TargetClusterRef>,
}

/// `spec.targetClusterRef`.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct TargetClusterRef {
    #[serde(default)]
    pub(crate) name: String,
}

/// The cluster `keystone`'s children live on, opened from `cluster` when it names a target
/// (`None`: `cluster` itself). Opening a target also routes the pass's HTTP requests to the
/// target's Services, where the Keystone API is.
pub(crate) fn children<'c>(
    cluster: &'c dyn Cluster,
    keystone: &Keystone,
) -> Result<Option<Box<dyn Cluster + 'c>>, Error> {
    let Some(target) = &keystone.spec.target_cluster_ref else {
        return Ok(None);
    };
    cluster
        .open_target(&target.name)
        .map(Some)
        .map_err(|source| Error::Target {
            keystone: format!("{}/{}", keystone.namespace(), keystone.name()),
            target: target.name.clone(),
            source,
        })
}

/// `spec.bootstrap`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BootstrapSpec {
    #[serde(default)]
    pub(crate) admin_user: String,
    #[serde(default)]
    pub(crate) admin_password_secret_ref: SecretRefSpec,
}

/// The Keystone's status, as far as it is read.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct KeystoneStatus {
    #[serde(default)]
    pub(crate) conditions: Vec<ConditionView>,
}

/// A condition's type and status.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ConditionView {
    #[serde(rename = "type", default)]
    pub(crate) type_: String,
    #[serde(default)]
    pub(crate) status: String,
}

impl Keystone {
    /// Its name.
    pub(crate) fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// Its namespace.
    pub(crate) fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or_default()
    }

    /// The bootstrap admin user.
    pub(crate) fn admin_user(&self) -> &str {
        match self.spec.bootstrap.admin_user.as_str() {
            "" => DEFAULT_ADMIN_USER,
            user => user,
        }
    }

    /// Whether `KeystoneAPIReady` is True.
    pub(crate) fn api_ready(&self) -> bool {
        self.status
            .iter()
            .flat_map(|s| &s.conditions)
            .any(|c| c.type_ == KEYSTONE_API_READY && c.status == "True")
    }

    /// The identity API inside the cluster:
    /// `http://{keystone}.{ns}.svc.cluster.local:5000/v3`.
    pub(crate) fn api_endpoint(&self) -> String {
        format!(
            "http://{}.{}.svc.cluster.local:{API_PORT}/v3",
            self.name(),
            self.namespace()
        )
    }
}

/// Reads the Keystone `name` of `namespace`; `None` when it does not exist or its kind is
/// not served.
pub(crate) fn read(
    cluster: &dyn Cluster,
    namespace: &str,
    name: &str,
) -> Result<Option<Keystone>, wasm_operator_sdk::Error> {
    match cluster.get_typed::<Keystone>(Some(namespace), name) {
        Err(wasm_operator_sdk::Error::Api(ApiError::NotFound(_) | ApiError::NotServed(_))) => {
            Ok(None)
        }
        other => other,
    }
}

/// Runs step 2: the Keystone, once its API is ready.
pub(crate) fn run(pass: &mut Pass<'_>) -> Flow<Keystone> {
    let name = pass.backend.spec.keystone_ref.name.clone();
    let namespace = pass.namespace().to_owned();
    let keystone = match read(pass.cluster, &namespace, &name) {
        Ok(Some(keystone)) => keystone,
        Ok(None) => {
            let message = format!("Keystone {name} not found in namespace {namespace}");
            pass.condition(DOMAIN_READY, false, KEYSTONE_NOT_FOUND, &message);
            return Ok(ControlFlow::Break(None));
        }
        Err(e) => {
            let message = format!("fetching Keystone {name}: {e}");
            pass.condition(DOMAIN_READY, false, KEYSTONE_NOT_FOUND, &message);
            return Ok(ControlFlow::Break(Some(SECRET_POLLING)));
        }
    };
    if !keystone.api_ready() {
        let message = format!("Keystone {name} API is not ready yet");
        pass.condition(DOMAIN_READY, false, WAITING_FOR_KEYSTONE_API, &message);
        return Ok(ControlFlow::Break(None));
    }
    Ok(ControlFlow::Continue(keystone))
}

#[cfg(test)]
#[path = "keystone_ref_tests.rs"]
mod tests;
