//! The BarbicanSecretStore fields the SecretStores step reads (facts §3.6): a typed view,
//! not the kind's definition (that is the `barbicansecretstores` plugin's).
//!
//! The view is lenient: unknown fields are ignored and every field defaults, so a store
//! written by a newer version of the kind, or one that bypassed admission, still decodes
//! as far as the step needs it; what is missing is the step's to judge.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use wasm_operator_sdk::KindRef;

/// The gate the step reads: the store's own controller sets it.
pub(crate) const CREDENTIALS_READY: &str = "CredentialsReady";
/// The field of a BarbicanSecretStore that names its Barbican.
pub(crate) const BARBICAN_REF: &str = "spec.barbicanRef.name";
/// The store type every supported store has.
pub(crate) const OPENBAO: &str = "OpenBao";
/// The AppRole keys of a credentials Secret, and the CA key of a CA Secret.
pub(crate) const ROLE_ID_KEY: &str = "role-id";
pub(crate) const SECRET_ID_KEY: &str = "secret-id";
pub(crate) const CA_KEY: &str = "ca.crt";
/// The options a store's extraOptions never set (the plugin's denylist, kept here as the
/// backstop for a store that bypassed admission).
pub(crate) const DENIED_OPTIONS: [&str; 11] = [
    "vault_url",
    "use_ssl",
    "ssl_ca_crt_file",
    "approle_role_id",
    "approle_secret_id",
    "root_token_id",
    "kv_mountpoint",
    "namespace",
    "secret_store_plugin",
    "crypto_plugin",
    "global_default",
];

/// The BarbicanSecretStore kind.
pub(crate) fn store_kind() -> KindRef {
    KindRef {
        api_version: "barbican.openstack.c5c3.io/v1alpha1".into(),
        kind: "BarbicanSecretStore".into(),
        plural: "barbicansecretstores".into(),
        namespaced: true,
    }
}

/// A BarbicanSecretStore as the Barbican side reads it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct SecretStore {
    pub(crate) metadata: ObjectMeta,
    pub(crate) spec: StoreSpec,
    pub(crate) status: StoreStatus,
}

wasm_operator_sdk::custom_resource!(
    SecretStore,
    "barbican.openstack.c5c3.io",
    "v1alpha1",
    "BarbicanSecretStore",
    "barbicansecretstores",
    k8s_openapi::NamespaceResourceScope
);

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct StoreSpec {
    #[serde(rename = "type")]
    pub(crate) type_: String,
    pub(crate) is_default: bool,
    pub(crate) open_bao: Option<OpenBaoSpec>,
    pub(crate) extra_options: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct OpenBaoSpec {
    pub(crate) instance_ref: Option<NameRef>,
    pub(crate) server: Option<ServerSpec>,
    pub(crate) kv_mountpoint: String,
    pub(crate) namespace: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct ServerSpec {
    pub(crate) url: String,
    pub(crate) credentials_secret_ref: NameRef,
    pub(crate) ca_bundle_secret_ref: Option<NameRef>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct NameRef {
    pub(crate) name: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct StoreStatus {
    pub(crate) conditions: Vec<ConditionView>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ConditionView {
    #[serde(rename = "type")]
    pub(crate) type_: String,
    pub(crate) status: String,
}

impl SecretStore {
    /// The store's name.
    pub(crate) fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// Whether CredentialsReady is present and True (the gate; never Ready, which needs
    /// the projection this step makes).
    pub(crate) fn credentials_ready(&self) -> bool {
        self.status
            .conditions
            .iter()
            .any(|c| c.type_ == CREDENTIALS_READY && c.status == "True")
    }

    /// The server the store addresses: `https://{instance}.{ns}.svc:8200` for a managed
    /// store, `spec.openBao.server.url` otherwise; empty without an openBao block.
    pub(crate) fn server_url(&self, namespace: &str) -> String {
        match &self.spec.open_bao {
            Some(OpenBaoSpec {
                instance_ref: Some(instance),
                ..
            }) => format!("https://{}.{namespace}.svc:8200", instance.name),
            Some(OpenBaoSpec {
                server: Some(server),
                ..
            }) => server.url.clone(),
            _ => String::new(),
        }
    }

    /// The Secret with the AppRole credentials (`{store}-approle` for a managed store) and
    /// the Secret with the server's CA (`{instance}-tls-ca` for a managed store; none when
    /// a brownfield store names none).
    pub(crate) fn secrets(&self) -> (String, Option<String>) {
        match &self.spec.open_bao {
            Some(OpenBaoSpec {
                instance_ref: Some(instance),
                ..
            }) => (
                format!("{}-approle", self.name()),
                Some(format!("{}-tls-ca", instance.name)),
            ),
            Some(OpenBaoSpec {
                server: Some(server),
                ..
            }) => (
                server.credentials_secret_ref.name.clone(),
                server.ca_bundle_secret_ref.as_ref().map(|r| r.name.clone()),
            ),
            _ => (String::new(), None),
        }
    }
}
