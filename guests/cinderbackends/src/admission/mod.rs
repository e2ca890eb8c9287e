//! The CinderBackend's admission (facts §3.4 "Webhook"): defaulting and validation of
//! writes of backends, as the plugin's `default_object` and `validate_object`.
//!
//! - [`default_object`] fills the documented defaults ([`defaulting`]).
//! - [`validate_object`] checks every rule of CobaltCore's validating webhook — the union
//!   and the NFS export ([`spec`]), the RBD block ([`rbd`]), the backend name
//!   ([`backend_name`], with the name budget on create), extraOptions per type
//!   ([`extra_options`]) — then the schema's CEL rules the webhook has no twin of
//!   ([`cel`]: the extraOptions bounds, and on update the immutables), for an API server
//!   that does not evaluate CEL. One denial names every field at fault, worded as
//!   kube-apiserver words field errors.
//!
//! Admission reads a backend's name and `spec`, never its status, and reads nothing from
//! the cluster.

mod backend_name;
mod cel;
mod defaulting;
mod extra_options;
mod rbd;
mod spec;
mod validation;

#[cfg(test)]
mod blocks_tests;
#[cfg(test)]
mod tests;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use crate::types::{CinderBackend, CinderBackendSpec};

pub(crate) use defaulting::default_object;
pub(crate) use validation::validate_object;

/// What admission reads of a backend: its metadata (read, never written back) and spec.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Admitted {
    #[serde(default, skip_serializing)]
    metadata: ObjectMeta,
    #[serde(default)]
    spec: CinderBackendSpec,
}

impl Admitted {
    /// The backend, named `name` when its metadata carries no name.
    fn into_backend(self, name: &str, namespace: Option<&str>) -> CinderBackend {
        let mut metadata = self.metadata;
        if metadata.name.as_deref().is_none_or(str::is_empty) {
            metadata.name = Some(name.to_owned());
        }
        if metadata.namespace.is_none() {
            metadata.namespace = namespace.map(str::to_owned);
        }
        CinderBackend {
            metadata,
            spec: self.spec,
            ..CinderBackend::default()
        }
    }
}
