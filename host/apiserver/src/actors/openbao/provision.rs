//! What a managed instance holds once OpenBao's self-initialization ran: the requests
//! CobaltCore's ControlPlane puts into a dedicated Barbican secret store's OpenBaoCluster
//! (`spec.selfInit.requests`, in this order), applied to a fresh server.
//!
//! | request | path | what it leaves |
//! |---|---|---|
//! | `barbican_kv` | `sys/mounts/barbican` | the KV v2 mount `barbican` |
//! | `barbican_secretstore_policy` | `sys/policies/acl/barbican-secretstore` | [`SECRETSTORE_POLICY`] |
//! | `approle_auth`, `barbican_approle_role` | `auth/approle/role/barbican` | AppRole `barbican`: policy `barbican-secretstore`, token TTL 1h, secret-id TTL 720h |
//! | `kubernetes_auth`, `kubernetes_auth_config` | `auth/kubernetes/config` | Kubernetes auth against this cluster's key set |
//! | `provisioner_policy` | `sys/policies/acl/provisioner` | [`PROVISIONER_POLICY`] |
//! | `provisioner_k8s_role` | `auth/kubernetes/role/provisioner` | role `provisioner`: ServiceAccount `{instance}-provisioner` in the instance's namespace, audience `{instance}`, policy `provisioner`, token TTL 1h |
//!
//! The actor applies this fixed ensemble; it does not interpret `spec.selfInit` itself.

use super::OpenBaoControlError;
use super::controls::OpenBaoStandIn;

/// The KV v2 mount Barbican stores tenant key material in.
pub(crate) const KV_MOUNT: &str = "barbican";
/// The AppRole Barbican's vault plugin authenticates with.
pub(crate) const APPROLE: &str = "barbican";
/// The Kubernetes auth role the barbican-operator logs in under.
pub(crate) const PROVISIONER_ROLE: &str = "provisioner";
/// The suffix of the ServiceAccount the `provisioner` role binds.
pub(crate) const PROVISIONER_SA_SUFFIX: &str = "-provisioner";
/// `secret_id_ttl=720h` of the `barbican` AppRole, in seconds.
pub(crate) const SECRET_ID_TTL: i64 = 720 * 3600;

/// Policy `barbican-secretstore`, the `barbican` AppRole's.
pub(crate) const SECRETSTORE_POLICY: &str = r#"path "barbican/data/*" {
  capabilities = ["create", "read", "update", "delete", "list"]
}

path "barbican/metadata/*" {
  capabilities = ["create", "read", "update", "list"]
}
"#;

/// Policy `provisioner`, the `provisioner` Kubernetes role's.
pub(crate) const PROVISIONER_POLICY: &str = r#"path "auth/approle/role/barbican/role-id" {
  capabilities = ["read"]
}

path "auth/approle/role/barbican/secret-id" {
  capabilities = ["create", "update"]
}

path "barbican/data/*" {
  capabilities = ["create", "read", "update", "delete", "list"]
}

path "barbican/metadata/*" {
  capabilities = ["create", "read", "update", "list"]
}

path "sys/mounts/barbican" {
  capabilities = ["read", "update"]
}
"#;

/// Applies the self-init ensemble of instance `name` in `namespace` to `server`.
pub(crate) fn self_init(
    server: &OpenBaoStandIn,
    namespace: &str,
    name: &str,
) -> Result<(), OpenBaoControlError> {
    server.enable_kv(KV_MOUNT);
    server.set_policy("barbican-secretstore", SECRETSTORE_POLICY)?;
    server.set_approle(APPROLE, &["barbican-secretstore"], SECRET_ID_TTL);
    server.set_policy("provisioner", PROVISIONER_POLICY)?;
    let account = format!("{name}{PROVISIONER_SA_SUFFIX}");
    server.set_kubernetes_role(
        PROVISIONER_ROLE,
        &[account.as_str()],
        &[namespace],
        Some(name),
        &["provisioner"],
    );
    Ok(())
}
