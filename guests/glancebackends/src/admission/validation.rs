//! The GlanceBackend's validation entry: CobaltCore's webhook rules in its order — the
//! union ([`spec`](super::spec)), the store name ([`store_name`](super::store_name)),
//! extraOptions ([`extra_options`](super::extra_options)), the single default among the
//! backends of the same Glance ([`siblings`](super::siblings)) — then the schema's CEL
//! rules without a webhook twin ([`cel`](super::cel)). One denial names every field at
//! fault. Deletes are always allowed.

use wasm_operator_sdk::Cluster;
use wasm_operator_sdk::admission::{self, AdmissionRequest, FieldErrors, Operation, Validated};

use super::{Admitted, cel, extra_options, siblings, spec, store_name};

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
    let mut errors = FieldErrors::new();
    let mut warnings = Vec::new();
    spec::check(&backend.spec, &mut errors);
    store_name::check(backend.name(), &mut errors);
    extra_options::check(&backend.spec, &mut errors);
    siblings::check(cluster, &backend, &mut errors, &mut warnings);
    cel::check_extra_options_bounds(&backend.spec, &mut errors);
    if let Some(old) = &old {
        cel::check_immutables(&old.spec, &backend.spec, &mut errors);
    }
    Validated {
        denial: errors.into_result(request).err(),
        warnings,
    }
}
