//! The GlanceBackend fields the Backends step reads (facts §3.3): a typed view, not the
//! kind's definition (that is the `glancebackends` plugin's).
//!
//! The view is lenient: unknown fields are ignored and every field defaults, so a backend
//! written by a newer version of the kind, or one that bypassed admission, still decodes
//! as far as the step needs it; what is missing is the step's to judge.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use wasm_operator_sdk::KindRef;

/// The gate the step reads: the backend's own controller sets it.
pub(crate) const CREDENTIALS_READY: &str = "CredentialsReady";
/// The field of a GlanceBackend that names its Glance.
pub(crate) const GLANCE_REF: &str = "spec.glanceRef.name";
/// The S3 access key's data key in the credentials Secret.
pub(crate) const ACCESS_KEY_ID: &str = "access-key-id";
/// The S3 secret key's data key in the credentials Secret.
pub(crate) const SECRET_ACCESS_KEY: &str = "secret-access-key";
/// `s3.bucketURLFormat` when unset.
pub(crate) const DEFAULT_BUCKET_URL_FORMAT: &str = "path";

/// The GlanceBackend kind.
pub(crate) fn backend_kind() -> KindRef {
    KindRef {
        api_version: "glance.openstack.c5c3.io/v1alpha1".into(),
        kind: "GlanceBackend".into(),
        plural: "glancebackends".into(),
        namespaced: true,
    }
}

/// A GlanceBackend as the Glance side reads it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct GlanceBackend {
    pub(crate) metadata: ObjectMeta,
    pub(crate) spec: BackendSpec,
    pub(crate) status: BackendStatus,
}

wasm_operator_sdk::custom_resource!(
    GlanceBackend,
    "glance.openstack.c5c3.io",
    "v1alpha1",
    "GlanceBackend",
    "glancebackends",
    k8s_openapi::NamespaceResourceScope
);

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct BackendSpec {
    #[serde(rename = "type")]
    pub(crate) type_: String,
    pub(crate) is_default: bool,
    pub(crate) s3: Option<S3Spec>,
    pub(crate) extra_options: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct S3Spec {
    pub(crate) host: String,
    pub(crate) bucket: String,
    pub(crate) credentials_secret_ref: NameRef,
    #[serde(rename = "bucketURLFormat")]
    pub(crate) bucket_url_format: String,
    pub(crate) region: String,
    pub(crate) create_bucket_on_put: bool,
    pub(crate) large_object_size: Option<i64>,
    pub(crate) large_object_chunk_size: Option<i64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct NameRef {
    pub(crate) name: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct BackendStatus {
    pub(crate) conditions: Vec<ConditionView>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ConditionView {
    #[serde(rename = "type")]
    pub(crate) type_: String,
    pub(crate) status: String,
}

impl GlanceBackend {
    /// The backend's name.
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
}
