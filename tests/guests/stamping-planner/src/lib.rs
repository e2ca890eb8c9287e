//! A test-only planner of the `gitlab:secretgen/planner` contract whose output differs from
//! secretgen's: every key the entries' generators declare that the Secret lacks gets the
//! value [`STAMP`], and the Secret is ready. Certificate sets are refused. A reconciler
//! linked to it writes `stamped` where secretgen would write a generated value, so a test
//! sees which planner it calls.
//!
//! Planning the Secrets named in [`Touch`] also calls one import (the wall clock, the hash
//! seed, `logging`), so a test sees which planner calls the host keeps answers of.

use serde_json::Value;

/// The value every planned key gets.
pub const STAMP: &[u8] = b"stamped";

/// The import planning a Secret calls besides its request, by the Secret's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Touch {
    /// `reads-clock`: reads the wall clock.
    Clock,
    /// `reads-random`: reads the hash seed (WASI randomness).
    Random,
    /// `logs`: logs a line.
    Log,
}

impl Touch {
    /// What planning the Secret `name` touches.
    pub fn of(name: &str) -> Option<Self> {
        match name {
            "reads-clock" => Some(Self::Clock),
            "reads-random" => Some(Self::Random),
            "logs" => Some(Self::Log),
            _ => None,
        }
    }
}

/// The declared keys of `entries` that the Secret `existing` (its JSON) lacks, in order,
/// and the first entry's Secret type.
pub fn keys_to_stamp(
    entries: &str,
    existing: Option<&str>,
) -> Result<(Vec<String>, String), String> {
    let (keys, secret_type) = declared_keys(entries)?;
    let existing: Value = match existing {
        Some(json) => {
            serde_json::from_str(json).map_err(|e| format!("the Secret is not JSON: {e}"))?
        }
        None => Value::Null,
    };
    let keys = keys
        .into_iter()
        .filter(|key| existing["data"].get(key).is_none())
        .collect();
    Ok((keys, secret_type))
}

/// The keys the generators of `entries` (the JSON array of spec.secrets entries) declare,
/// in order, and the first entry's Secret type.
pub fn declared_keys(entries: &str) -> Result<(Vec<String>, String), String> {
    let entries: Vec<Value> =
        serde_json::from_str(entries).map_err(|e| format!("entries are not a JSON array: {e}"))?;
    let secret_type = entries
        .first()
        .and_then(|e| e["type"].as_str())
        .unwrap_or("Opaque")
        .to_owned();
    let keys = entries
        .iter()
        .flat_map(|e| e["generators"].as_array().cloned().unwrap_or_default())
        .filter_map(|g| g["key"].as_str().map(str::to_owned))
        .collect();
    Ok((keys, secret_type))
}

#[cfg(target_arch = "wasm32")]
mod wit {
    wit_bindgen::generate!({
        path: "../../../wit/secretgen",
        world: "planner-plugin",
        generate_all,
    });

    use exports::gitlab::secretgen::planner::{
        CertificatesPlan, CertificatesRequest, Entry, Guest, PlanError, SecretPlan, SecretRequest,
    };

    struct Stamping;

    impl Guest for Stamping {
        fn plan(request: SecretRequest) -> Result<SecretPlan, PlanError> {
            match super::Touch::of(&request.name) {
                Some(super::Touch::Clock) => {
                    std::hint::black_box(std::time::SystemTime::now());
                }
                Some(super::Touch::Random) => {
                    std::hint::black_box(std::hash::RandomState::new());
                }
                Some(super::Touch::Log) => wasm_operator::plugin::logging::log(
                    wasm_operator::plugin::logging::Level::Info,
                    "planning the Secret logs",
                ),
                None => {}
            }
            let (keys, secret_type) =
                super::keys_to_stamp(&request.entries, request.existing.as_deref()).map_err(
                    |message| PlanError {
                        subject: request.name.clone(),
                        message,
                    },
                )?;
            Ok(SecretPlan {
                name: request.name,
                secret_type,
                add: keys
                    .into_iter()
                    .map(|key| Entry {
                        key,
                        value: super::STAMP.to_vec(),
                    })
                    .collect(),
                reports: Vec::new(),
                declared_units: Vec::new(),
                next_ready_units: Vec::new(),
                type_kept: None,
                ready: true,
            })
        }

        fn plan_certificates(request: CertificatesRequest) -> Result<CertificatesPlan, PlanError> {
            Err(PlanError {
                subject: request.certificate,
                message: "the stamping planner plans no certificates".into(),
            })
        }
    }

    export!(Stamping);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_declared_keys_are_read_from_the_generators_in_order() {
        let entries = r#"[{"name":"s","type":"Opaque","generators":[{"type":"random","key":"a"},{"type":"random","key":"b"}]}]"#;
        assert_eq!(
            declared_keys(entries).expect("parsed"),
            (vec!["a".to_owned(), "b".to_owned()], "Opaque".to_owned())
        );
    }

    #[test]
    fn keys_the_secret_holds_are_not_stamped_again() {
        let entries = r#"[{"name":"s","type":"Opaque","generators":[{"type":"random","key":"a"},{"type":"random","key":"b"}]}]"#;
        let existing = r#"{"data":{"a":"c3RhbXBlZA=="}}"#;
        assert_eq!(
            keys_to_stamp(entries, Some(existing)).expect("parsed"),
            (vec!["b".to_owned()], "Opaque".to_owned())
        );
        assert_eq!(keys_to_stamp(entries, None).expect("parsed").0, ["a", "b"]);
    }

    #[test]
    fn entries_that_are_not_json_fail_naming_the_cause() {
        let error = declared_keys("{").expect_err("not an array");
        assert!(error.contains("not a JSON array"), "{error}");
    }
}
