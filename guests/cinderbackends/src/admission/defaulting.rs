//! The CinderBackend's defaulting (CobaltCore's defaulting webhook).
//!
//! | Field | Default |
//! |---|---|
//! | `nfs.mountOptions` (an nfs block without one, or empty) | `nfsvers=4.1,soft,timeo=30,retrans=2` |
//! | `rbd.clusterName` (an rbd block without one, or empty) | `ceph` |
//!
//! A default fills the field only when it is unset or empty. Only `spec` is written back,
//! as the typed spec serializes it (`admission::default_typed`); nothing else changes.

use wasm_operator_sdk::admission::{self, AdmissionRequest, Defaulted, Denial};

use super::Admitted;
use crate::types::{DEFAULT_CLUSTER_NAME, DEFAULT_MOUNT_OPTIONS};

/// The admission entry: the request's backend with its defaults filled, or a denial when
/// it does not read as a backend.
pub(crate) fn default_object(request: &AdmissionRequest) -> Result<Defaulted, Denial> {
    admission::default_typed::<Admitted>(request, |admitted| {
        if let Some(nfs) = admitted.spec.nfs.as_mut()
            && nfs.mount_options.is_empty()
        {
            nfs.mount_options = DEFAULT_MOUNT_OPTIONS.to_owned();
        }
        if let Some(rbd) = admitted.spec.rbd.as_mut()
            && rbd.cluster_name.is_empty()
        {
            rbd.cluster_name = DEFAULT_CLUSTER_NAME.to_owned();
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use wasm_operator_sdk::admission::Operation;

    use super::*;
    use crate::admission::tests::{nfs, rbd, request, with};

    #[test]
    fn an_nfs_block_without_mount_options_gets_the_soft_nfs_4_1_mount() {
        // (mountOptions written, mountOptions stored)
        let table = [
            (json!(null), json!(DEFAULT_MOUNT_OPTIONS)),
            (json!(""), json!(DEFAULT_MOUNT_OPTIONS)),
            (json!("nfsvers=3"), json!("nfsvers=3")),
        ];
        for (written, expected) in table {
            let object = with(nfs(), &[("/spec/nfs/mountOptions", written.clone())]);
            let defaulted =
                default_object(&request(Operation::Create, object, None)).expect("defaulted");
            assert_eq!(
                defaulted.object["spec"]["nfs"]["mountOptions"], expected,
                "{written}"
            );
            assert_eq!(defaulted.object["metadata"]["name"], "nfs-a");
        }
    }

    #[test]
    fn an_rbd_block_without_a_cluster_name_gets_ceph() {
        // (clusterName written, clusterName stored)
        let table = [
            (json!(null), json!("ceph")),
            (json!(""), json!("ceph")),
            (json!("backup"), json!("backup")),
        ];
        for (written, expected) in table {
            let object = with(rbd(), &[("/spec/rbd/clusterName", written.clone())]);
            let defaulted =
                default_object(&request(Operation::Create, object, None)).expect("defaulted");
            assert_eq!(
                defaulted.object["spec"]["rbd"]["clusterName"], expected,
                "{written}"
            );
            assert_eq!(defaulted.object["spec"].get("nfs"), None);
        }
    }
}
