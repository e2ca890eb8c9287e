//! The `glance.openstack.c5c3.io/v1alpha1` GlanceBackend resource as Rust types (facts
//! §3.3).
//!
//! The types are the definition: `crds/glance.openstack.c5c3.io_glancebackends.yaml` is
//! generated from them (`crd.rs`). Doc comments become the CRD's field descriptions, so
//! they speak to the resource's users.
//!
//! | Field | Rules |
//! |---|---|
//! | `glanceRef.name` | required, min 1, immutable (CEL on `spec`) |
//! | `type` | required, enum `S3`, immutable (CEL on `spec`) |
//! | `s3` | exactly when type is S3 (CEL on `spec`) |
//! | `s3.host` | required, min 1, `^https?://` |
//! | `s3.bucket` | required, min 1 |
//! | `s3.credentialsSecretRef.name` | required, min 1; data keys fixed ([`S3_ACCESS_KEY_ID_KEY`], [`S3_SECRET_ACCESS_KEY_KEY`]) |
//! | `s3.bucketURLFormat` | enum `path`/`virtual`, default `path` |
//! | `s3.region`, `s3.createBucketOnPut` | optional |
//! | `s3.largeObjectSize`, `s3.largeObjectChunkSize` | optional, ≥ 1 |
//! | `isDefault` | optional; one default per Glance (admission and the parent) |
//! | `extraOptions` | ≤ 32 entries, key ≤ 256, value ≤ 1024 (CEL) |
//!
//! `type` has no default: an object without one does not decode. `bucketURLFormat`
//! defaults in serde as in the schema, so a value written before defaulting reads as
//! `path`.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use serde::{Deserialize, Serialize};
use wasm_operator_sdk::blocks::types::{is_false, is_zero};

/// The API group.
pub const GROUP: &str = <GlanceBackend as k8s_openapi::Resource>::GROUP;
/// The version.
pub const VERSION: &str = <GlanceBackend as k8s_openapi::Resource>::VERSION;
/// The kind.
pub const KIND: &str = <GlanceBackend as k8s_openapi::Resource>::KIND;
/// The resource (plural).
pub const PLURAL: &str = <GlanceBackend as k8s_openapi::Resource>::URL_PATH_SEGMENT;
/// The apiVersion.
pub const API_VERSION: &str = <GlanceBackend as k8s_openapi::Resource>::API_VERSION;

/// The data key of the S3 credentials Secret holding the access key id.
pub const S3_ACCESS_KEY_ID_KEY: &str = "access-key-id";
/// The data key of the S3 credentials Secret holding the secret access key.
pub const S3_SECRET_ACCESS_KEY_KEY: &str = "secret-access-key";

/// A GlanceBackend: one image store (an S3-compatible object store) of the Glance its
/// `spec.glanceRef` names. The Glance renders one `[<name>]` store section per attached,
/// credential-ready backend and makes the one marked `isDefault` its default store.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GlanceBackend {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: GlanceBackendSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<GlanceBackendStatus>,
}

wasm_operator_sdk::custom_resource!(
    GlanceBackend,
    "glance.openstack.c5c3.io",
    "v1alpha1",
    "GlanceBackend",
    "glancebackends",
    k8s_openapi::NamespaceResourceScope
);

impl GlanceBackend {
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
}

/// Which Glance the backend attaches to, and the store.
///
/// `glanceRef` and `type` are fixed at creation: re-pointing a backend would leave the
/// old Glance with a store nothing manages. Exactly the block `type` names is set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(extend("x-kubernetes-validations" = [
    {"rule": "self.glanceRef.name == oldSelf.glanceRef.name", "message": "glanceRef is immutable"},
    {"rule": "self.type == oldSelf.type", "message": "type is immutable"},
    {"rule": "(self.type == 'S3') == has(self.s3)",
     "message": "exactly one backend block matching spec.type must be set (type S3 requires spec.s3)"},
])))]
pub struct GlanceBackendSpec {
    /// The Glance in this namespace the backend attaches to. It need not exist yet: a
    /// backend applied first waits for it (Ready False). Fixed at creation.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub glance_ref: GlanceRefSpec,
    /// The image-store driver: `S3` (an S3-compatible object store). Fixed at creation.
    #[serde(rename = "type")]
    pub type_: BackendType,
    /// The S3-compatible object store (exactly when type is S3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s3: Option<S3BackendSpec>,
    /// Makes this backend the Glance's default store (`default_backend`). Exactly one
    /// attached, credential-ready backend of a Glance must be the default.
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_default: bool,
    /// `[<name>]` store-section options the typed fields do not cover, by bare option
    /// name, added after them. Options a typed field renders, and `store_description`, are
    /// refused.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[cfg_attr(test, schemars(extend("maxProperties" = 32, "x-kubernetes-validations" = [
        {"rule": "self.all(k, size(k) <= 256 && size(self[k]) <= 1024)",
         "message": "each extraOptions key must be <=256 characters and each value <=1024 characters"}])))]
    pub extra_options: BTreeMap<String, String>,
}

/// A Glance in the backend's namespace, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct GlanceRefSpec {
    /// The Glance's name.
    #[serde(default)]
    #[cfg_attr(test, schemars(length(min = 1), extend("x-required" = true)))]
    pub name: String,
}

/// The backend's type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum BackendType {
    /// An S3-compatible object store (the default of `Default::default` only: the field
    /// itself has none).
    #[default]
    S3,
}

impl BackendType {
    /// The type as the spec spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::S3 => "S3",
        }
    }
}

/// An S3-compatible object store.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct S3BackendSpec {
    /// The S3 endpoint URL (`s3_store_host`), e.g. `https://s3.example.com`.
    #[serde(default)]
    #[cfg_attr(
        test,
        schemars(
            length(min = 1),
            regex(pattern = r"^https?://"),
            extend("x-required" = true)
        )
    )]
    pub host: String,
    /// The bucket images are stored in (`s3_store_bucket`).
    #[serde(default)]
    #[cfg_attr(test, schemars(length(min = 1), extend("x-required" = true)))]
    pub bucket: String,
    /// The Secret holding the credentials under the fixed data keys `access-key-id` and
    /// `secret-access-key`.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("x-required" = true)))]
    pub credentials_secret_ref: CredentialsSecretRef,
    /// How the bucket is addressed (`s3_store_bucket_url_format`): `path`
    /// (`https://host/bucket`) or `virtual` (`https://bucket.host`). Defaults to `path`.
    #[serde(rename = "bucketURLFormat", default)]
    #[cfg_attr(test, schemars(extend("default" = "path")))]
    pub bucket_url_format: BucketUrlFormat,
    /// The region the bucket lives in (`s3_store_region_name`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub region: String,
    /// Lets Glance create the bucket on first write (`s3_store_create_bucket_on_put`,
    /// rendered only when true).
    #[serde(default, skip_serializing_if = "is_false")]
    pub create_bucket_on_put: bool,
    /// The image size, in MiB, above which Glance uploads in parts
    /// (`s3_store_large_object_size`); rendered only when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub large_object_size: Option<i32>,
    /// The part size, in MiB, of those uploads (`s3_store_large_object_chunk_size`);
    /// rendered only when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub large_object_chunk_size: Option<i32>,
}

/// The Secret holding a backend's S3 credentials, by name (its data keys are fixed).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CredentialsSecretRef {
    /// The Secret's name.
    #[serde(default)]
    #[cfg_attr(test, schemars(length(min = 1), extend("x-required" = true)))]
    pub name: String,
}

/// How the bucket is addressed in request URLs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum BucketUrlFormat {
    /// `https://host/bucket`.
    #[default]
    Path,
    /// `https://bucket.host`.
    Virtual,
}

/// What the backend's controller found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct GlanceBackendStatus {
    /// CredentialsReady (the credentials Secret carries both data keys), ConfigProjected
    /// (the Glance's Deployment mounts the backend's store section) and the aggregate
    /// Ready, each for `observedGeneration`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, schemars(schema_with = "wasm_operator_sdk::crd::conditions"))]
    pub conditions: Vec<Condition>,
    /// The metadata.generation last reconciled.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub observed_generation: i64,
}
