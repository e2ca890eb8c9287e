//! A read-only view of the OpenBaoCluster (`openbao.org/v1alpha1`) a managed store names:
//! the kind the OpenBao operator serves (and the host's stand-in,
//! `host/apiserver/src/actors/openbao/managed.rs`), read for its `Available` condition
//! only. This crate never writes it nor creates its CRD.
//!
//! What the managed flow derives from the instance name `i` in namespace `ns`:
//!
//! | What | Name |
//! |---|---|
//! | CA Secret (key `ca.crt`) | `i-tls-ca` |
//! | provisioner ServiceAccount (token audience `i`) | `i-provisioner` |
//! | server URL (the SAN of its certificate) | `https://i.ns.svc:8200` |
//! | Kubernetes auth role | `provisioner` |
//! | AppRole Barbican authenticates with | `barbican` |

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use serde::Deserialize;
use wasm_operator_sdk::KindRef;

/// The instance's CA Secret: `{instance}` + this.
pub(crate) const CA_SECRET_SUFFIX: &str = "-tls-ca";
/// The ServiceAccount a bound token is requested for: `{instance}` + this.
pub(crate) const PROVISIONER_SA_SUFFIX: &str = "-provisioner";
/// The port the instance serves its API on.
pub(crate) const API_PORT: u16 = 8200;
/// The Kubernetes auth role the operator logs in under.
pub(crate) const PROVISIONER_ROLE: &str = "provisioner";
/// The AppRole Barbican authenticates with.
pub(crate) const STORE_APPROLE: &str = "barbican";
/// The self-init requests a managed instance must have run.
pub(crate) const SELF_INIT_REQUESTS: &str = "barbican_kv, approle_auth, barbican_approle_role";
/// The condition type an instance reports its availability under.
pub(crate) const AVAILABLE: &str = "Available";

/// What a store reads of an OpenBaoCluster.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct OpenBaoCluster {
    #[serde(default)]
    pub(crate) metadata: ObjectMeta,
    #[serde(default)]
    pub(crate) status: Option<OpenBaoClusterStatus>,
}

wasm_operator_sdk::custom_resource!(
    OpenBaoCluster,
    "openbao.org",
    "v1alpha1",
    "OpenBaoCluster",
    "openbaoclusters",
    k8s_openapi::NamespaceResourceScope
);

/// Its status, as far as it is read.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct OpenBaoClusterStatus {
    #[serde(default)]
    pub(crate) conditions: Vec<Condition>,
}

impl OpenBaoCluster {
    /// Whether its `Available` condition is True.
    pub(crate) fn is_available(&self) -> bool {
        self.status.as_ref().is_some_and(|s| {
            s.conditions
                .iter()
                .any(|c| c.type_ == AVAILABLE && c.status == "True")
        })
    }
}

/// The OpenBaoCluster kind.
pub fn openbao_cluster_kind() -> KindRef {
    KindRef::of::<OpenBaoCluster>()
}

/// The API URL of instance `name` in `namespace`.
pub(crate) fn instance_url(name: &str, namespace: &str) -> String {
    format!("https://{name}.{namespace}.svc:{API_PORT}")
}

/// `"<gap>; the instance must run the self-init requests …"`.
pub(crate) fn not_provisioned(gap: &str) -> String {
    format!("{gap}; the instance must run the self-init requests {SELF_INIT_REQUESTS}")
}
