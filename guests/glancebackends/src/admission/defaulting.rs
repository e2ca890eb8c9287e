//! The GlanceBackend's defaulting (CobaltCore's defaulting webhook).
//!
//! | Field | Default |
//! |---|---|
//! | `s3.bucketURLFormat` (an s3 block without one) | `path` |
//!
//! The default fills the field only when it is unset. It comes through serde (the type's
//! default), so it is written whenever the spec is; nothing else is changed.

use wasm_operator_sdk::admission::{self, AdmissionRequest, Defaulted, Denial};

use super::Admitted;

/// The admission entry: the request's backend with its defaults filled, or a denial when
/// it does not read as a backend. Only `spec` is written back, as the typed spec
/// serializes it (`admission::default_typed`).
pub(crate) fn default_object(request: &AdmissionRequest) -> Result<Defaulted, Denial> {
    admission::default_typed::<Admitted>(request, |_| {})
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use wasm_operator_sdk::admission::Operation;

    use super::*;
    use crate::admission::tests::{request, s3, with};

    #[test]
    fn an_s3_block_without_a_bucket_url_format_gets_path_and_a_set_one_stays() {
        // (bucketURLFormat written, bucketURLFormat stored)
        let table = [
            (json!(null), json!("path")),
            (json!("virtual"), json!("virtual")),
            (json!("path"), json!("path")),
        ];
        for (written, expected) in table {
            let object = with(s3(), &[("/spec/s3/bucketURLFormat", written.clone())]);
            let defaulted =
                default_object(&request(Operation::Create, object, None)).expect("defaulted");
            assert_eq!(
                defaulted.object["spec"]["s3"]["bucketURLFormat"], expected,
                "{written}"
            );
            assert_eq!(defaulted.object["metadata"]["name"], "images");
        }
    }

    #[test]
    fn a_backend_without_an_s3_block_is_left_without_one() {
        let object = with(s3(), &[("/spec/s3", json!(null))]);
        let defaulted =
            default_object(&request(Operation::Create, object, None)).expect("defaulted");
        assert_eq!(defaulted.object["spec"].get("s3"), None);
        assert_eq!(defaulted.object["spec"]["type"], "S3");
    }
}
