//! `database`: the MariaDB a service keeps its state in.

use serde::{Deserialize, Serialize};

use super::refs::{LocalObjectReference, SecretRefSpec};

/// The operator provisions the MariaDB User and Grant with the password of `secretRef`.
pub const CREDENTIALS_MODE_STATIC: &str = "Static";
/// An external secrets engine issues short-lived credentials into `secretRef` (managed
/// mode only); no User or Grant is provisioned.
pub const CREDENTIALS_MODE_DYNAMIC: &str = "Dynamic";
/// The port of a database named without one.
pub const DEFAULT_DATABASE_PORT: i32 = 3306;
/// The values of `database.tls.mode`.
pub const TLS_MODES: &[&str] = &["disabled", "prefer", "require", "verify-ca", "verify-full"];

/// The database: a managed MariaDB (`clusterRef`) or an existing server (`host`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(extend("x-kubernetes-validations" = [
    {"rule": "has(self.clusterRef) != has(self.host)",
     "message": "exactly one of clusterRef or host must be set"},
    {"rule": "!has(self.credentialsMode) || self.credentialsMode != 'Dynamic' || has(self.clusterRef)",
     "message": "credentialsMode Dynamic requires clusterRef (managed mode)"}])))]
pub struct DatabaseSpec {
    /// A MariaDB in the CR's namespace (managed mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_ref: Option<LocalObjectReference>,
    /// `Static` (the default): the operator provisions the database user with the
    /// password of `secretRef`. `Dynamic`: an external engine issues short-lived
    /// credentials into `secretRef` (managed mode only).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(feature = "schemars", schemars(extend("enum" = ["Static", "Dynamic"])))]
    pub credentials_mode: String,
    /// The database server's host name or address (brownfield mode).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(
        feature = "schemars",
        schemars(length(min = 1), regex(pattern = r"^[a-zA-Z0-9._:-]+$"))
    )]
    pub host: String,
    /// The database server's port (3306 when unset).
    #[serde(default, skip_serializing_if = "super::is_zero")]
    #[cfg_attr(feature = "schemars", schemars(range(min = 1, max = 65535)))]
    pub port: i32,
    /// The database's name on the server.
    #[cfg_attr(
        feature = "schemars",
        schemars(length(min = 1, max = 64), regex(pattern = r"^[A-Za-z0-9_]+$"))
    )]
    pub database: String,
    /// The Secret with the credentials (`username`, `password`).
    pub secret_ref: SecretRefSpec,
    /// TLS, or mutual TLS, for the connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<DatabaseTlsSpec>,
    /// The managed MariaDB's replica count (read by the platform operator only).
    #[serde(default, skip_serializing_if = "super::is_zero")]
    #[cfg_attr(feature = "schemars", schemars(range(min = 1), extend("default" = 3)))]
    pub replicas: i32,
    /// The managed MariaDB's volume size per replica (read by the platform operator only).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(
        feature = "schemars",
        schemars(regex(pattern = r"^[0-9]+(Mi|Gi|Ti)$"), extend("default" = "100Gi"))
    )]
    pub storage_size: String,
}

impl DatabaseSpec {
    /// Whether the operator provisions the database (a `clusterRef`).
    pub fn is_managed(&self) -> bool {
        self.cluster_ref.is_some()
    }

    /// Whether credentials come from an external engine.
    pub fn is_dynamic(&self) -> bool {
        self.credentials_mode == CREDENTIALS_MODE_DYNAMIC
    }

    /// Whether the connection uses TLS.
    pub fn tls_enabled(&self) -> bool {
        self.tls.as_ref().is_some_and(DatabaseTlsSpec::is_enabled)
    }

    /// The port, 3306 when unset.
    pub fn effective_port(&self) -> i32 {
        if self.port == 0 {
            DEFAULT_DATABASE_PORT
        } else {
            self.port
        }
    }

    /// `host:port` the service connects to: `{clusterRef}.{namespace}.svc:{port}` for a
    /// managed database, `{host}:{port}` otherwise.
    pub fn address(&self, namespace: &str) -> String {
        match &self.cluster_ref {
            Some(r) => format!("{}.{namespace}.svc:{}", r.name, self.effective_port()),
            None => format!("{}:{}", self.host, self.effective_port()),
        }
    }
}

/// TLS for the database connection. It is on when the block is present and `mode` is
/// neither empty nor `disabled`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct DatabaseTlsSpec {
    /// `disabled`; `prefer` or `require` (encrypt only); `verify-ca` (also verify the
    /// server's chain); `verify-full` (also its host name). Admission sets `require` when
    /// empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(feature = "schemars", schemars(extend("enum" = ["disabled", "prefer", "require", "verify-ca", "verify-full"])))]
    pub mode: String,
    /// The Secret with the CA bundle (`ca.crt`) the client trusts.
    #[serde(default)]
    #[cfg_attr(feature = "schemars", schemars(extend("x-required" = true)))]
    pub ca_bundle_secret_ref: SecretRefSpec,
    /// The Secret with the client's key pair (`tls.crt`, `tls.key`).
    #[serde(default)]
    #[cfg_attr(feature = "schemars", schemars(extend("x-required" = true)))]
    pub client_cert_secret_ref: SecretRefSpec,
}

impl DatabaseTlsSpec {
    /// Whether TLS is on.
    pub fn is_enabled(&self) -> bool {
        !self.mode.is_empty() && self.mode != "disabled"
    }
}

/// The phase of a database upgrade between releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub enum UpgradePhase {
    /// `db_sync --expand`.
    Expanding,
    /// `db_sync --migrate`.
    Migrating,
    /// The Deployment rolls out the new image.
    RollingUpdate,
    /// `db_sync --contract`.
    Contracting,
}

impl UpgradePhase {
    /// The phase as the status spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Expanding => "Expanding",
            Self::Migrating => "Migrating",
            Self::RollingUpdate => "RollingUpdate",
            Self::Contracting => "Contracting",
        }
    }
}

/// Escapes `text` for the userinfo of a URL as Go's `url.UserPassword` does: letters,
/// digits, `-_.~` and `$&+,;=` stay; everything else, `:@/?` included, is `%XX`.
pub fn escape_userinfo(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                escaped.push(char::from(byte));
            }
            b'$' | b'&' | b'+' | b',' | b';' | b'=' => escaped.push(char::from(byte)),
            _ => escaped.push_str(&format!("%{byte:02X}")),
        }
    }
    escaped
}
