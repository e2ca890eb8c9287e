//! The CinderBackupBackend's validation entry: CobaltCore's webhook rules in its order —
//! the union, fileSize and compression, the NFS export ([`spec`](super::spec)), the RBD
//! block ([`rbd`](super::rbd)), extraOptions ([`extra_options`](super::extra_options)),
//! one target per Cinder ([`siblings`](super::siblings)) — then the schema's CEL rules
//! without a webhook twin ([`cel`](super::cel)). One denial names every field at fault.
//! Deletes are always allowed.

use wasm_operator_sdk::Cluster;
use wasm_operator_sdk::admission::{self, AdmissionRequest, FieldErrors, Operation, Validated};

use super::{Admitted, cel, extra_options, rbd, siblings, spec};

/// Validates the request's target. `cluster` is read for the targets of the namespace
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
    let target = new.into_target(&request.name, request.namespace.as_deref());
    let mut errors = FieldErrors::new();
    let mut warnings = Vec::new();
    spec::check_union(&target.spec, &mut errors);
    spec::check_backup(&target.spec, &mut errors);
    if let Some(nfs) = &target.spec.nfs {
        spec::check_nfs_export(&nfs.path, &nfs.mount_options, &mut errors);
    }
    if let Some(rbd) = &target.spec.rbd {
        rbd::check(rbd, &mut errors);
    }
    extra_options::check(&target.spec, &mut errors);
    siblings::check(cluster, &target, &mut errors, &mut warnings);
    cel::check_extra_options_bounds(&target.spec, &mut errors);
    if let Some(old) = &old {
        cel::check_immutables(&old.spec, &target.spec, &mut errors);
    }
    Validated {
        denial: errors.into_result(request).err(),
        warnings,
    }
}
