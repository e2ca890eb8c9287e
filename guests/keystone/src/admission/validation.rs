//! The Keystone's validation entry: every rule of facts §1.6 in the order the facts list
//! them, then on update the immutables of §1.4, then extraConfig; one denial naming every
//! field at fault, and the warnings either way. Deletes are always allowed.

use wasm_operator_sdk::Cluster;
use wasm_operator_sdk::admission::{self, AdmissionRequest, FieldErrors, Operation, Validated};

use super::{Admitted, blocks, exposure, extra_config, immutables, schedules, workload};

/// Validates the request's Keystone. `cluster` is read for the PriorityClass the spec
/// names (the plugin declares `get` on `scheduling.k8s.io/v1` PriorityClasses).
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
    let spec = &new.spec;
    let mut errors = FieldErrors::new();
    let mut warnings = exposure::warnings(spec);
    blocks::check(spec, &mut errors);
    exposure::check(spec, &mut errors);
    schedules::check(spec, &mut errors);
    workload::check(spec, &request.name, &mut errors);
    workload::check_priority_class(cluster, spec, &mut errors);
    if let Some(old) = &old {
        immutables::check(&old.spec, spec, &mut errors);
    }
    extra_config::check(
        spec,
        old.as_ref().map(|o| &o.spec),
        &mut errors,
        &mut warnings,
    );
    Validated {
        denial: errors.into_result(request).err(),
        warnings,
    }
}

#[cfg(test)]
#[path = "validation_tests.rs"]
mod tests;
