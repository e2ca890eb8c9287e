//! The KeystoneIdentityBackend's validation entry: CobaltCore's webhook rules in its
//! order — the spec's own ([`spec`](super::spec)), the LDAP, OIDC and SAML blocks,
//! mappings, groups, extraOptions, then the other backends of the same Keystone — then
//! the schema's CEL rules without a webhook twin ([`cel`](super::cel)). One denial names
//! every field at fault. Deletes are always allowed.

use wasm_operator_sdk::Cluster;
use wasm_operator_sdk::admission::{self, AdmissionRequest, FieldErrors, Operation, Validated};

use super::{Admitted, cel, federation, ldap, oidc, saml, siblings, spec};

/// Validates the request's backend. `cluster` is read for the backends of the namespace
/// (the plugin declares `list` on its own kind).
pub(crate) fn validate_object(cluster: &dyn Cluster, request: &AdmissionRequest) -> Validated {
    if request.operation == Operation::Delete {
        return Validated::default();
    }
    let (new, old) = match admission::typed::<Admitted>(request) {
        Ok(objects) => objects,
        Err(denial) => {
            return Validated {
                denial: Some(denial),
                warnings: Vec::new(),
            };
        }
    };
    let Some(new) = new else {
        return Validated::default();
    };
    let old = old.filter(|_| request.operation == Operation::Update);
    let backend = new.into_backend(&request.name, request.namespace.as_deref());
    let spec = &backend.spec;
    let mut errors = FieldErrors::new();
    let mut warnings = Vec::new();
    spec::check(spec, &mut errors);
    if let Some(block) = &spec.ldap {
        ldap::check(block, &mut errors);
    }
    if let Some(block) = &spec.oidc {
        oidc::check(block, &mut errors);
    }
    if let Some(block) = &spec.saml {
        saml::check(block, &mut errors);
    }
    federation::check_mappings(&spec.mappings, &mut errors);
    federation::check_groups(&spec.groups, &mut errors);
    ldap::check_extra_options(spec, &mut errors);
    siblings::check(cluster, &backend, &mut errors, &mut warnings);
    cel::check_extra_options_bounds(spec, &mut errors);
    if let Some(old) = &old {
        cel::check_immutables(&old.spec, spec, &mut errors);
    }
    Validated {
        denial: errors.into_result(request).err(),
        warnings,
    }
}

#[cfg(test)]
#[path = "validation_tests.rs"]
mod tests;
