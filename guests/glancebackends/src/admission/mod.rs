//! The GlanceBackend's admission (facts §3.3 "Webhook"): defaulting and validation of
//! writes of backends, as the plugin's `default_object` and `validate_object`.
//!
//! - [`default_object`] fills the documented default ([`defaulting`]).
//! - [`validate_object`] checks every rule of CobaltCore's validating webhook — the union
//!   ([`spec`]), the store name ([`store_name`]), extraOptions ([`extra_options`]) and the
//!   single default among the backends of the same Glance ([`siblings`]) — then the
//!   schema's CEL rules the webhook has no twin of ([`cel`]: the extraOptions bounds, and
//!   on update the immutables), for an API server that does not evaluate CEL. One
//!   denial names every field at fault, worded as kube-apiserver words field errors.
//!
//! Admission reads a backend's name and `spec`, never its status.

mod cel;
mod defaulting;
mod extra_options;
mod siblings;
mod spec;
mod store_name;
mod validation;

#[cfg(test)]
mod tests;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use crate::types::{GlanceBackend, GlanceBackendSpec};

pub(crate) use defaulting::default_object;
pub(crate) use validation::validate_object;

/// What admission reads of a backend: its metadata (read, never written back) and spec.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Admitted {
    #[serde(default, skip_serializing)]
    metadata: ObjectMeta,
    #[serde(default)]
    spec: GlanceBackendSpec,
}

impl Admitted {
    /// The backend, named `name` when its metadata carries no name.
    fn into_backend(self, name: &str, namespace: Option<&str>) -> GlanceBackend {
        let mut metadata = self.metadata;
        if metadata.name.as_deref().is_none_or(str::is_empty) {
            metadata.name = Some(name.to_owned());
        }
        if metadata.namespace.is_none() {
            metadata.namespace = namespace.map(str::to_owned);
        }
        GlanceBackend {
            metadata,
            spec: self.spec,
            ..GlanceBackend::default()
        }
    }
}
