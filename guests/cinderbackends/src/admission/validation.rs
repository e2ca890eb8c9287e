//! The CinderBackend's validation entry: CobaltCore's webhook rules in its order — the
//! union ([`spec`](super::spec)), the backend name ([`backend_name`](super::backend_name)),
//! the NFS export, the RBD block ([`rbd`](super::rbd)), extraOptions
//! ([`extra_options`](super::extra_options)), on create the name budget — then the
//! schema's CEL rules without a webhook twin ([`cel`](super::cel)). One denial names every
//! field at fault. Deletes are always allowed.

use wasm_operator_sdk::Cluster;
use wasm_operator_sdk::admission::{self, AdmissionRequest, FieldErrors, Operation, Validated};

use super::{Admitted, backend_name, cel, extra_options, rbd, spec};

/// Validates the request's backend. The cluster is not read.
pub(crate) fn validate_object(_cluster: &dyn Cluster, request: &AdmissionRequest) -> Validated {
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
    spec::check_union(&backend.spec, &mut errors);
    backend_name::check(backend.name(), &mut errors);
    if let Some(nfs) = &backend.spec.nfs {
        spec::check_nfs_export(&nfs.path, &nfs.mount_options, &mut errors);
    }
    if let Some(rbd) = &backend.spec.rbd {
        rbd::check(rbd, &mut errors);
    }
    extra_options::check(&backend.spec, &mut errors);
    if request.operation == Operation::Create {
        backend_name::check_budget(backend.name(), &backend.spec.cinder_ref.name, &mut errors);
    }
    cel::check_extra_options_bounds(&backend.spec, &mut errors);
    if let Some(old) = &old {
        cel::check_immutables(&old.spec, &backend.spec, &mut errors);
    }
    Validated {
        denial: errors.into_result(request).err(),
        warnings: Vec::new(),
    }
}
