//! The KeystoneIdentityBackend's admission (facts §3.2 "Webhook extras"): defaulting and
//! validation of writes of backends, as the plugin's `default_object` and
//! `validate_object`.
//!
//! - [`default_object`] fills the documented defaults ([`defaulting`]).
//! - [`validate_object`] checks every rule of CobaltCore's validating webhook — the spec's
//!   own ([`spec`], [`ldap`], [`oidc`], [`saml`], [`federation`]) and those against the
//!   other backends of the same Keystone ([`siblings`]) — then the schema's CEL rules the
//!   webhook has no twin of ([`cel`]: the extraOptions bounds, and on update the
//!   immutables), for an API server that does not evaluate CEL. One denial names
//!   every field at fault, worded as kube-apiserver words field errors.
//!
//! Admission reads a backend's name and `spec`, never its status: the status is the
//! controller's, so a status admission cannot read never blocks a spec edit, and
//! defaulting never patches it.

mod cel;
mod defaulting;
mod federation;
mod ldap;
mod oidc;
mod saml;
mod saml_metadata;
mod siblings;
mod spec;
mod validation;

#[cfg(test)]
mod tests;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use crate::types::{KeystoneIdentityBackend, KeystoneIdentityBackendSpec};

pub(crate) use defaulting::default_object;
pub(crate) use validation::validate_object;

/// What admission reads of a backend: its metadata (read, never written back) and spec.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Admitted {
    #[serde(default, skip_serializing)]
    metadata: ObjectMeta,
    #[serde(default)]
    spec: KeystoneIdentityBackendSpec,
}

impl Admitted {
    /// The backend, named `name` when its metadata carries no name.
    fn into_backend(self, name: &str, namespace: Option<&str>) -> KeystoneIdentityBackend {
        let mut metadata = self.metadata;
        if metadata.name.as_deref().is_none_or(str::is_empty) {
            metadata.name = Some(name.to_owned());
        }
        if metadata.namespace.is_none() {
            metadata.namespace = namespace.map(str::to_owned);
        }
        KeystoneIdentityBackend {
            metadata,
            spec: self.spec,
            ..KeystoneIdentityBackend::default()
        }
    }
}

/// Whether `value` holds a newline or a carriage return (a line injected into a rendered
/// file).
fn has_line_break(value: &str) -> bool {
    value.contains(['\n', '\r'])
}
