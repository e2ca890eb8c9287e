//! Fuzzes the secrets.yml rewrite through `plan`: an arbitrary existing document for the
//! chart's railsSecrets fields. It must never panic, and a document it fills must need
//! nothing more when planned again.
//!
//! With `SECRETGEN_FUZZ_STRICT` set it also fails when the writer cannot write a document
//! back (the plan then fails safely with "would not read back the same"); this still finds
//! exotic plain scalars, e.g. a multi-line or colon-laden plain value YAML 1.1 reads as a
//! Ruby symbol, that the writer can only quote.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use secretgen::{SecretRequest, plan};
use serde_json::json;

fn request(existing: &[u8]) -> SecretRequest {
    let entry = json!({"name": "rails", "generators": [{
        "type": "railsSecrets", "key": "secrets.yml", "env": "production",
        "fields": [
            {"path": "secret_key_base", "shape": "scalar", "charset": "hex", "length": 2},
            {"path": "openid_connect_signing_key", "shape": "pem", "bits": 2048},
            {"path": "active_record_encryption_primary_key", "shape": "list",
             "charset": "alphanumeric", "length": 1},
        ],
    }]});
    SecretRequest {
        name: "rails".to_owned(),
        entries: json!([entry]).to_string(),
        existing: Some(common::secret_json(
            "rails",
            "Opaque",
            false,
            &[("secrets.yml".to_owned(), existing.to_vec())],
        )),
        ready_units: Vec::new(),
        generate: true,
    }
}

fuzz_target!(|data: &[u8]| {
    let first = match plan(&request(data), &common::CachedKeys) {
        Ok(first) => first,
        Err(error) => {
            let strict = std::env::var_os("SECRETGEN_FUZZ_STRICT").is_some();
            assert!(
                !strict || !error.message().contains("would not read back"),
                "the writer failed on {:?}",
                String::from_utf8_lossy(data)
            );
            return;
        }
    };
    let Some(filled) = first.add.iter().find(|e| e.key == "secrets.yml") else {
        return;
    };
    let again =
        plan(&request(&filled.value), &common::CachedKeys).expect("a filled document plans again");
    assert!(
        again.add.is_empty() && again.ready,
        "a filled document needs nothing more: {:?}\n{}",
        again.reports,
        String::from_utf8_lossy(&filled.value)
    );
});
