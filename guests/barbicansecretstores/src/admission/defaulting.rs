//! The BarbicanSecretStore's defaulting (CobaltCore's defaulting webhook).
//!
//! | Field | Default |
//! |---|---|
//! | `openBao.kvMountpoint` (an openBao block without one) | `barbican` |
//!
//! The default fills the field only when it is unset. It comes through serde (the type's
//! default), so it is written whenever the spec is; nothing else is changed.
//! DECISION: an explicitly empty `kvMountpoint` is left for the schema's `minLength` to
//! refuse (CobaltCore's webhook would fill it; the schema's default only fills an absent
//! field, and an empty mount path is a mistake worth naming).

use wasm_operator_sdk::admission::{self, AdmissionRequest, Defaulted, Denial};

use super::Admitted;

/// The admission entry: the request's store with its defaults filled, or a denial when
/// it does not read as a store. Only `spec` is written back, as the typed spec
/// serializes it (`admission::default_typed`).
pub(crate) fn default_object(request: &AdmissionRequest) -> Result<Defaulted, Denial> {
    admission::default_typed::<Admitted>(request, |_| {})
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use wasm_operator_sdk::admission::Operation;

    use super::*;
    use crate::admission::tests::{brownfield, request, with};

    #[test]
    fn an_openbao_block_without_a_kv_mountpoint_gets_barbican_and_a_set_one_stays() {
        // (kvMountpoint written, kvMountpoint stored)
        let table = [
            (json!(null), json!("barbican")),
            (json!("secrets"), json!("secrets")),
            (json!("barbican"), json!("barbican")),
        ];
        for (written, expected) in table {
            let object = with(
                brownfield(),
                &[("/spec/openBao/kvMountpoint", written.clone())],
            );
            let defaulted =
                default_object(&request(Operation::Create, object, None)).expect("defaulted");
            assert_eq!(
                defaulted.object["spec"]["openBao"]["kvMountpoint"], expected,
                "{written}"
            );
            assert_eq!(defaulted.object["metadata"]["name"], "vault");
        }
    }

    #[test]
    fn a_store_without_an_openbao_block_is_left_without_one() {
        let object = with(brownfield(), &[("/spec/openBao", json!(null))]);
        let defaulted =
            default_object(&request(Operation::Create, object, None)).expect("defaulted");
        assert_eq!(defaulted.object["spec"].get("openBao"), None);
        assert_eq!(defaulted.object["spec"]["type"], "OpenBao");
    }
}
