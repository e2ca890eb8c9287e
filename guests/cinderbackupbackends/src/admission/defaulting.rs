//! The CinderBackupBackend's defaulting (CobaltCore's defaulting webhook).
//!
//! | Field | Default |
//! |---|---|
//! | `fileSize` (unset) | 52428800 |
//! | `compression` (unset or empty) | `zlib` |
//! | `nfs.mountOptions` (an nfs block without one, or empty) | `nfsvers=4.1,soft,timeo=30,retrans=2` |
//! | `rbd.clusterName` (an rbd block without one, or empty) | `ceph` |
//!
//! A default fills the field only when it is unset or empty. Only `spec` is written back,
//! as the typed spec serializes it (`admission::default_typed`); nothing else changes.

use wasm_operator_sdk::admission::{self, AdmissionRequest, Defaulted, Denial};

use super::Admitted;
use crate::types::{
    DEFAULT_CLUSTER_NAME, DEFAULT_COMPRESSION, DEFAULT_FILE_SIZE, DEFAULT_MOUNT_OPTIONS,
};

/// The admission entry: the request's target with its defaults filled, or a denial when
/// it does not read as a target.
pub(crate) fn default_object(request: &AdmissionRequest) -> Result<Defaulted, Denial> {
    admission::default_typed::<Admitted>(request, |admitted| {
        let spec = &mut admitted.spec;
        spec.file_size.get_or_insert(DEFAULT_FILE_SIZE);
        if spec.compression.is_empty() {
            spec.compression = DEFAULT_COMPRESSION.to_owned();
        }
        if let Some(nfs) = spec.nfs.as_mut()
            && nfs.mount_options.is_empty()
        {
            nfs.mount_options = DEFAULT_MOUNT_OPTIONS.to_owned();
        }
        if let Some(rbd) = spec.rbd.as_mut()
            && rbd.cluster_name.is_empty()
        {
            rbd.cluster_name = DEFAULT_CLUSTER_NAME.to_owned();
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};
    use wasm_operator_sdk::admission::Operation;

    use super::*;
    use crate::admission::tests::{nfs, rbd, request, with};

    #[test]
    fn a_target_without_its_optional_fields_gets_the_documented_defaults() {
        type Row = (fn() -> Value, &'static str, Value, Value);
        // (valid target, pointer, value written, value stored)
        let table: [Row; 8] = [
            (nfs, "/spec/fileSize", json!(null), json!(52428800)),
            (nfs, "/spec/fileSize", json!(1048576), json!(1048576)),
            (nfs, "/spec/compression", json!(null), json!("zlib")),
            (nfs, "/spec/compression", json!(""), json!("zlib")),
            (nfs, "/spec/compression", json!("zstd"), json!("zstd")),
            (
                nfs,
                "/spec/nfs/mountOptions",
                json!(""),
                json!(DEFAULT_MOUNT_OPTIONS),
            ),
            (rbd, "/spec/rbd/clusterName", json!(null), json!("ceph")),
            (rbd, "/spec/fileSize", json!(null), json!(52428800)),
        ];
        for (valid, pointer, written, expected) in table {
            let object = with(valid(), &[(pointer, written.clone())]);
            let defaulted =
                default_object(&request(Operation::Create, object, None)).expect("defaulted");
            assert_eq!(
                defaulted.object.pointer(pointer),
                Some(&expected),
                "{pointer} {written}"
            );
        }
    }
}
