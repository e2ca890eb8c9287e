//! Fuzzes `plan` with arbitrary entries and existing Secrets: structured ones built from
//! the generator types (with arbitrary keys, sizes and existing values, secrets.yml text
//! included) and raw JSON text. It must never panic; an error is a fine answer.
#![no_main]

#[path = "common.rs"]
mod common;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use secretgen::{SecretRequest, plan};
use serde_json::{Value, json};

#[derive(Arbitrary, Debug)]
enum Gen {
    Random {
        key: String,
        charset: u8,
        length: u16,
        encoding: u8,
        wrap: bool,
    },
    Bytes {
        key: String,
        length: u16,
        base64: bool,
    },
    Static {
        key: String,
        value: String,
    },
    Rsa {
        key: String,
    },
    X509 {
        cn: String,
        days: u32,
        cert_key: String,
        key_key: String,
    },
    SshHostKeys,
    Rails {
        key: String,
        env: String,
        fields: Vec<(String, u8, u8)>,
    },
    Raw(String),
}

impl Gen {
    fn json(&self) -> Value {
        let charset = |c: u8| ["alphanumeric", "hex", "lowerAlphanumeric"][usize::from(c % 3)];
        match self {
            Gen::Random {
                key,
                charset: c,
                length,
                encoding,
                wrap,
            } => json!({
                "type": "random", "key": key, "charset": charset(*c), "length": length,
                "encoding": (["none", "base64", "base64-nowrap"][usize::from(encoding % 3)]),
                "wrap": if *wrap { "jsonArray" } else { "none" },
            }),
            Gen::Bytes {
                key,
                length,
                base64,
            } => json!({
                "type": "bytes", "key": key, "length": length,
                "encoding": if *base64 { "base64" } else { "raw" },
            }),
            Gen::Static { key, value } => json!({"type": "static", "key": key, "value": value}),
            Gen::Rsa { key } => json!({"type": "rsa", "key": key, "bits": 2048}),
            Gen::X509 {
                cn,
                days,
                cert_key,
                key_key,
            } => json!({
                "type": "x509", "commonName": cn, "bits": 2048, "days": days,
                "certKey": cert_key, "keyKey": key_key,
            }),
            Gen::SshHostKeys => json!({"type": "sshHostKeys"}),
            Gen::Rails { key, env, fields } => json!({
                "type": "railsSecrets", "key": key, "env": env,
                "fields": fields.iter().take(8).map(|(path, shape, length)| json!({
                    "path": path, "shape": (["scalar", "pem", "list"][usize::from(shape % 3)]),
                    "charset": charset(*length), "length": length, "bits": 2048,
                })).collect::<Vec<_>>(),
            }),
            Gen::Raw(text) => serde_json::from_str(text).unwrap_or(Value::Null),
        }
    }
}

#[derive(Arbitrary, Debug)]
struct Input {
    secret_type: String,
    entries: Vec<Vec<Gen>>,
    existing: Option<(String, bool, Vec<(String, Vec<u8>)>)>,
    secrets_yml: Option<String>,
    ready_units: Vec<String>,
    generate: bool,
    raw_entries: Option<String>,
    raw_existing: Option<String>,
}

fuzz_target!(|input: Input| {
    let name = "s";
    let entries = input.raw_entries.clone().unwrap_or_else(|| {
        Value::Array(
            input
                .entries
                .iter()
                .take(4)
                .map(|gens| {
                    json!({
                        "name": name, "type": input.secret_type,
                        "generators": gens.iter().take(8).map(Gen::json).collect::<Vec<_>>(),
                    })
                })
                .collect(),
        )
        .to_string()
    });
    let existing = input.raw_existing.clone().or_else(|| {
        input
            .existing
            .as_ref()
            .map(|(secret_type, immutable, data)| {
                let mut data = data.clone();
                if let Some(yml) = &input.secrets_yml {
                    data.push(("secrets.yml".to_owned(), yml.clone().into_bytes()));
                }
                common::secret_json(name, secret_type, *immutable, &data)
            })
    });
    let request = SecretRequest {
        name: name.to_owned(),
        entries,
        existing,
        ready_units: input.ready_units,
        generate: input.generate,
    };
    if let Ok(plan) = plan(&request, &common::CachedKeys) {
        assert!(
            plan.reports.is_empty() || plan.add.is_empty(),
            "a reported Secret gains nothing"
        );
        assert_eq!(plan.ready, plan.reports.is_empty());
    }
});
