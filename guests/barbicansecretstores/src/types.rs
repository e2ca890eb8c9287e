//! The `barbican.openstack.c5c3.io/v1alpha1` BarbicanSecretStore resource as Rust types
//! (facts §3.6).
//!
//! The types are the definition:
//! `crds/barbican.openstack.c5c3.io_barbicansecretstores.yaml` is generated from them
//! (`crd.rs`). Doc comments become the CRD's field descriptions, so they speak to the
//! resource's users.
//!
//! | Field | Rules |
//! |---|---|
//! | `barbicanRef.name` | required, min 1, immutable (CEL on `spec`) |
//! | `type` | required, enum `OpenBao`, immutable (CEL on `spec`) |
//! | `openBao` | exactly when type is OpenBao (CEL on `spec`) |
//! | `openBao.instanceRef.name` | min 1; managed mode (an OpenBaoCluster in the namespace) |
//! | `openBao.server.url` | brownfield; required, min 1, `^https://` |
//! | `openBao.server.credentialsSecretRef.name` | required, min 1; data keys fixed ([`ROLE_ID_KEY`], [`SECRET_ID_KEY`]) |
//! | `openBao.server.caBundleSecretRef.name` | optional, min 1; data key fixed ([`CA_KEY`]) |
//! | `openBao.kvMountpoint` | default `barbican`, min 1, immutable (CEL on `openBao`) |
//! | `openBao.namespace` | brownfield only (CEL on `openBao`) |
//! | `openBao` (CEL) | exactly one of instanceRef/server; managed ⇒ kvMountpoint `barbican` and no namespace; the mode is immutable |
//! | `isDefault` | optional; one default per Barbican (admission and the parent) |
//! | `extraOptions` | ≤ 32 entries, key ≤ 256, value ≤ 1024 (CEL) |
//!
//! `type` has no default: an object without one does not decode. `kvMountpoint` defaults
//! in serde as in the schema, so a value written before defaulting reads as `barbican`.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use serde::{Deserialize, Serialize};
use wasm_operator_sdk::blocks::types::{is_false, is_zero};

/// The API group.
pub const GROUP: &str = <BarbicanSecretStore as k8s_openapi::Resource>::GROUP;
/// The version.
pub const VERSION: &str = <BarbicanSecretStore as k8s_openapi::Resource>::VERSION;
/// The kind.
pub const KIND: &str = <BarbicanSecretStore as k8s_openapi::Resource>::KIND;
/// The resource (plural).
pub const PLURAL: &str = <BarbicanSecretStore as k8s_openapi::Resource>::URL_PATH_SEGMENT;
/// The apiVersion.
pub const API_VERSION: &str = <BarbicanSecretStore as k8s_openapi::Resource>::API_VERSION;

/// The data key of a credentials Secret holding the AppRole role ID.
pub const ROLE_ID_KEY: &str = "role-id";
/// The data key of a credentials Secret holding the AppRole secret ID.
pub const SECRET_ID_KEY: &str = "secret-id";
/// The data key of a CA bundle Secret holding the PEM certificates.
pub const CA_KEY: &str = "ca.crt";
/// The KV v2 mount a store defaults to, and the only one a managed store may use.
pub const DEFAULT_KV_MOUNTPOINT: &str = "barbican";
/// What the operator appends to a store's name to name its minted credentials Secret.
pub const APPROLE_SECRET_SUFFIX: &str = "-approle";

/// A BarbicanSecretStore: one secret store (an OpenBao or API-compatible Vault server) of
/// the Barbican its `spec.barbicanRef` names. The Barbican renders one
/// `[secretstore:<name>]` section per attached, credential-ready store and makes the one
/// marked `isDefault` its global default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BarbicanSecretStore {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: BarbicanSecretStoreSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<BarbicanSecretStoreStatus>,
}

wasm_operator_sdk::custom_resource!(
    BarbicanSecretStore,
    "barbican.openstack.c5c3.io",
    "v1alpha1",
    "BarbicanSecretStore",
    "barbicansecretstores",
    k8s_openapi::NamespaceResourceScope
);

impl BarbicanSecretStore {
    /// Its name.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// Its namespace.
    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or_default()
    }

    /// Whether it is being deleted.
    pub fn is_deleting(&self) -> bool {
        self.metadata.deletion_timestamp.is_some()
    }

    /// Its `metadata.generation` (0 when unset).
    pub fn generation(&self) -> i64 {
        self.metadata.generation.unwrap_or_default()
    }

    /// Whether it names an OpenBaoCluster (managed mode).
    pub fn is_managed(&self) -> bool {
        self.spec
            .open_bao
            .as_ref()
            .is_some_and(|o| o.instance_ref.is_some())
    }
}

/// Which Barbican the store attaches to, and the store.
///
/// `barbicanRef` and `type` are fixed at creation: re-pointing a store would leave the old
/// Barbican with a store nothing manages, and secrets written through one plugin cannot be
/// read through another. Exactly the block `type` names is set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(extend("x-kubernetes-validations" = [
    {"rule": "self.barbicanRef.name == oldSelf.barbicanRef.name", "message": "barbicanRef is immutable"},
    {"rule": "self.type == oldSelf.type", "message": "type is immutable"},
    {"rule": "(self.type == 'OpenBao') == has(self.openBao)",
     "message": "exactly one store block matching spec.type must be set (type OpenBao requires spec.openBao)"},
])))]
pub struct BarbicanSecretStoreSpec {
    /// The Barbican in this namespace the store attaches to. It need not exist yet: a
    /// store applied first waits for it (Ready False). Fixed at creation.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub barbican_ref: BarbicanRefSpec,
    /// The secret-store plugin: `OpenBao` (Barbican's vault plugin against an OpenBao or
    /// API-compatible HashiCorp Vault server). Fixed at creation.
    #[serde(rename = "type")]
    pub type_: StoreType,
    /// The OpenBao-backed store (exactly when type is OpenBao).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_bao: Option<OpenBaoStoreSpec>,
    /// Makes this store the Barbican's global default store. Exactly one attached,
    /// credential-ready store of a Barbican must be the default.
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_default: bool,
    /// `[vault_plugin]` options the typed fields do not cover, by bare option name. Options
    /// the operator renders from the typed fields are refused.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[cfg_attr(test, schemars(extend("maxProperties" = 32, "x-kubernetes-validations" = [
        {"rule": "self.all(k, size(k) <= 256 && size(self[k]) <= 1024)",
         "message": "each extraOptions key must be <=256 characters and each value <=1024 characters"}])))]
    pub extra_options: BTreeMap<String, String>,
}

/// A Barbican in the store's namespace, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct BarbicanRefSpec {
    /// The Barbican's name.
    #[serde(default)]
    #[cfg_attr(test, schemars(length(min = 1), extend("x-required" = true)))]
    pub name: String,
}

/// The store's type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum StoreType {
    /// Barbican's vault plugin against an OpenBao (or Vault) server (the default of
    /// `Default::default` only: the field itself has none).
    #[default]
    OpenBao,
}

impl StoreType {
    /// The type as the spec spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenBao => "OpenBao",
        }
    }
}

/// Barbican's vault plugin against one OpenBao server, in one of two modes: managed
/// (`instanceRef`: an OpenBaoCluster of this namespace, whose AppRole credentials the
/// operator mints) or brownfield (`server`: a server provisioned elsewhere, only
/// validated). The mount and the mode are fixed at creation: secrets written under one
/// are not reachable under another.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(extend("x-kubernetes-validations" = [
    {"rule": "has(self.instanceRef) != has(self.server)",
     "message": "exactly one of instanceRef or server must be set"},
    {"rule": "!has(self.instanceRef) || (self.kvMountpoint == 'barbican' && !has(self.__namespace__))",
     "message": "managed stores (instanceRef) must keep kvMountpoint barbican and leave namespace unset: the self-init contract provisions only the barbican/ mount at the root namespace"},
    {"rule": "self.kvMountpoint == oldSelf.kvMountpoint",
     "message": "kvMountpoint is immutable: the secret material already written under the old mount is not reachable under a new one"},
    {"rule": "has(self.instanceRef) == has(oldSelf.instanceRef)",
     "message": "the store mode (instanceRef vs server) is immutable: delete and recreate the store instead"},
])))]
pub struct OpenBaoStoreSpec {
    /// The OpenBaoCluster (`openbao.org/v1alpha1`) in this namespace to provision against
    /// (managed mode). The server URL, the CA Secret `<instance>-tls-ca` and the
    /// provisioner ServiceAccount `<instance>-provisioner` follow from its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_ref: Option<InstanceRefSpec>,
    /// An OpenBao or Vault server provisioned outside this operator (brownfield mode):
    /// its credentials are validated, nothing is written to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<OpenBaoServerSpec>,
    /// Where the KV v2 engine holding Barbican's secrets is mounted. Defaults to
    /// `barbican`, the only mount a managed store may use.
    #[serde(default = "default_kv_mountpoint")]
    #[cfg_attr(test, schemars(length(min = 1), extend("default" = "barbican")))]
    pub kv_mountpoint: String,
    /// The OpenBao/Vault namespace every request is scoped to (brownfield only; unset:
    /// the root namespace).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
}

fn default_kv_mountpoint() -> String {
    DEFAULT_KV_MOUNTPOINT.to_owned()
}

/// An OpenBaoCluster in the store's namespace, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct InstanceRefSpec {
    /// The OpenBaoCluster's name.
    #[serde(default)]
    #[cfg_attr(test, schemars(length(min = 1), extend("x-required" = true)))]
    pub name: String,
}

/// An existing OpenBao or Vault server (brownfield). Both Secrets are read in the store's
/// namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct OpenBaoServerSpec {
    /// The server's API base URL, e.g. `https://openbao.example.com:8200`. TLS is
    /// mandatory: the AppRole credentials and every stored secret travel it.
    #[serde(default)]
    #[cfg_attr(
        test,
        schemars(
            length(min = 1),
            regex(pattern = r"^https://"),
            extend("x-required" = true)
        )
    )]
    pub url: String,
    /// The Secret holding the PEM CA bundle that authenticates the server, under the
    /// fixed data key `ca.crt`. Omit it when the server's certificate chains to a trusted
    /// root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_bundle_secret_ref: Option<SecretNameRef>,
    /// The Secret holding the AppRole credentials, under the fixed data keys `role-id`
    /// and `secret-id`.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub credentials_secret_ref: SecretNameRef,
}

/// A Secret in the store's namespace, by name (its data keys are fixed).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SecretNameRef {
    /// The Secret's name.
    #[serde(default)]
    #[cfg_attr(test, schemars(length(min = 1), extend("x-required" = true)))]
    pub name: String,
}

/// What the store's controller found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct BarbicanSecretStoreStatus {
    /// CredentialsReady (the AppRole credentials exist and the server accepts them),
    /// ProvisioningReady (managed only: the OpenBaoCluster carries the KV mount and the
    /// AppRole), ConfigProjected (the Barbican's Deployment mounts the store's section)
    /// and the aggregate Ready, each for `observedGeneration`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, schemars(schema_with = "wasm_operator_sdk::crd::conditions"))]
    pub conditions: Vec<Condition>,
    /// The metadata.generation last reconciled.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub observed_generation: i64,
}
