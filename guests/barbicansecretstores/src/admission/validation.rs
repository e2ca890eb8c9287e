//! The BarbicanSecretStore's validation entry: CobaltCore's webhook rules in its order — on
//! create the name's length ([`store_name`](super::store_name)), the union and the modes
//! ([`spec`](super::spec)), the reserved names, extraOptions
//! ([`extra_options`](super::extra_options)), the single default and the one OpenBao
//! store among the stores of the same Barbican ([`siblings`](super::siblings)) — then the
//! schema's CEL
//! rules without a webhook twin ([`cel`](super::cel)). One denial names every field at
//! fault. Deletes are always allowed.

use wasm_operator_sdk::Cluster;
use wasm_operator_sdk::admission::{self, AdmissionRequest, FieldErrors, Operation, Validated};

use super::{Admitted, cel, extra_options, siblings, spec, store_name};

/// Validates the request's store. `cluster` is read for the stores of the namespace
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
    let store = new.into_store(&request.name, request.namespace.as_deref());
    let mut errors = FieldErrors::new();
    let mut warnings = Vec::new();
    if request.operation == Operation::Create {
        store_name::check_length(store.name(), &mut errors);
    }
    spec::check(&store.spec, &mut errors);
    store_name::check(store.name(), &mut errors);
    extra_options::check(&store.spec, &mut errors);
    siblings::check(cluster, &store, &mut errors, &mut warnings);
    cel::check_extra_options_bounds(&store.spec, &mut errors);
    if let Some(old) = &old {
        cel::check_immutables(&old.spec, &store.spec, &mut errors);
    }
    Validated {
        denial: errors.into_result(request).err(),
        warnings,
    }
}
