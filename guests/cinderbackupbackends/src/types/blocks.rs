//! The driver blocks of a CinderBackupBackend (facts §3.5): the NFS export and the Ceph
//! RBD pool, as CinderBackend's (the RBD block without `secretUUID`).

use serde::{Deserialize, Serialize};

/// The NFS mount options a target without any is mounted with: NFSv4.1, a soft mount.
pub const DEFAULT_MOUNT_OPTIONS: &str = "nfsvers=4.1,soft,timeo=30,retrans=2";
/// The Ceph cluster name a target without one names.
pub const DEFAULT_CLUSTER_NAME: &str = "ceph";

fn default_mount_options() -> String {
    DEFAULT_MOUNT_OPTIONS.to_owned()
}

fn default_cluster_name() -> String {
    DEFAULT_CLUSTER_NAME.to_owned()
}

/// An NFS export: the cinder-backup pod mounts it and writes the backup chunks onto it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct NfsBackupBackendSpec {
    /// The NFS server, a hostname or an IPv4 address.
    #[serde(default)]
    #[cfg_attr(
        test,
        schemars(
            length(min = 1),
            regex(pattern = r"^[A-Za-z0-9.-]+$"),
            extend("x-required" = true)
        )
    )]
    pub server: String,
    /// The absolute export path on the server, printable ASCII only.
    #[serde(default)]
    #[cfg_attr(
        test,
        schemars(regex(pattern = r"^/[!-~]*$"), extend("x-required" = true))
    )]
    pub path: String,
    /// The comma-separated mount options. Defaults to a soft NFSv4.1 mount
    /// (`nfsvers=4.1,soft,timeo=30,retrans=2`); keep the mount soft.
    #[serde(default = "default_mount_options")]
    #[cfg_attr(test, schemars(regex(pattern = r"^[^\n\r]*$")))]
    pub mount_options: String,
}

impl Default for NfsBackupBackendSpec {
    fn default() -> Self {
        Self {
            server: String::new(),
            path: String::new(),
            mount_options: default_mount_options(),
        }
    }
}

/// A Ceph RBD pool backups are kept in. The pool and the cephx user exist beforehand;
/// the user's key reaches the operator through the Secret `keySecretRef` names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RbdBackupBackendSpec {
    /// The pool the backups are kept in (`backup_ceph_pool`).
    #[serde(default)]
    #[cfg_attr(
        test,
        schemars(
            length(min = 1, max = 64),
            regex(pattern = r"^[A-Za-z0-9._-]+$"),
            extend("x-required" = true)
        )
    )]
    pub pool: String,
    /// The cephx user, without its `client.` prefix (`backup_ceph_user`).
    #[serde(default)]
    #[cfg_attr(
        test,
        schemars(
            length(min = 1, max = 64),
            regex(pattern = r"^[A-Za-z0-9._-]+$"),
            extend("x-required" = true, "x-kubernetes-validations" = [
                {"rule": "!self.startsWith('client.')",
                 "message": "user is the cephx name without its client. prefix (write cinder, not client.cinder)"}])
        )
    )]
    pub user: String,
    /// The Ceph monitors, each a hostname or an IPv4 address with an optional port,
    /// rendered comma-joined in this order as `mon_host`.
    #[serde(default)]
    #[cfg_attr(
        test,
        schemars(
            length(min = 1, max = 16),
            inner(length(min = 1, max = 253), regex(pattern = r"^[A-Za-z0-9.-]+(:[0-9]{1,5})?$")),
            extend("x-required" = true)
        )
    )]
    pub monitors: Vec<String>,
    /// The IPv4 CIDRs the Ceph cluster (monitors and OSDs) answers on: the egress the
    /// Cinder's NetworkPolicy opens.
    #[serde(default)]
    #[cfg_attr(
        test,
        schemars(
            length(min = 1, max = 16),
            inner(regex(pattern = r"^([0-9]{1,3}\.){3}[0-9]{1,3}/[0-9]{1,2}$")),
            extend("x-required" = true)
        )
    )]
    pub networks: Vec<String>,
    /// The Ceph cluster name (the `/etc/ceph/<cluster>.conf` file `backup_ceph_conf` names).
    /// Defaults to `ceph`.
    #[serde(default = "default_cluster_name")]
    #[cfg_attr(test, schemars(length(max = 63), regex(pattern = r"^[A-Za-z0-9_-]+$")))]
    pub cluster_name: String,
    /// The Secret holding the user's cephx key under the fixed data key `userKey`, in the
    /// target's namespace on the cluster the Cinder's backup pod runs on.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub key_secret_ref: KeySecretRef,
}

impl Default for RbdBackupBackendSpec {
    fn default() -> Self {
        Self {
            pool: String::new(),
            user: String::new(),
            monitors: Vec::new(),
            networks: Vec::new(),
            cluster_name: default_cluster_name(),
            key_secret_ref: KeySecretRef::default(),
        }
    }
}

/// The RBD key Secret, by name (its data key is fixed).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct KeySecretRef {
    /// The Secret's name, a DNS-1123 subdomain.
    #[serde(default)]
    #[cfg_attr(
        test,
        schemars(
            length(min = 1, max = 253),
            regex(pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"),
            extend("x-required" = true)
        )
    )]
    pub name: String,
}
