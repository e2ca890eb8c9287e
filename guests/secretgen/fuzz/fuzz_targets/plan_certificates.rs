//! Fuzzes `plan_certificates` with arbitrary entries, existing Secrets and readyUnits. It
//! must never panic; an error is a fine answer.
#![no_main]

#[path = "common.rs"]
mod common;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use secretgen::{CertificatesRequest, plan_certificates};
use serde_json::json;

#[derive(Arbitrary, Debug)]
struct Input {
    algorithm: u8,
    key_size: u16,
    domain: String,
    ca_key: String,
    chain_key: String,
    secrets: [Option<(bool, bool, Vec<(String, Vec<u8>)>)>; 3],
    ready: bool,
    generate: bool,
    raw_entry: Option<String>,
}

fuzz_target!(|input: Input| {
    let algorithm = ["rsa", "ecdsa", "ed25519", "other"][usize::from(input.algorithm % 4)];
    // Keep RSA to sizes whose key the cache already holds after the first run.
    let key_size = if algorithm == "rsa" && input.key_size >= 2048 {
        2048
    } else {
        input.key_size
    };
    let entry = input.raw_entry.clone().unwrap_or_else(|| {
        json!({
            "authority": {"commonName": "GitLab Helm Chart", "organization": "ns",
                          "organizationalUnit": "rel", "algorithm": algorithm, "keySize": key_size},
            "domain": input.domain,
            "tlsSecret": "tls", "caSecret": "ca", "caKey": input.ca_key,
            "chainSecret": "chain", "chainKey": input.chain_key,
        })
        .to_string()
    });
    let names = ["ca", "tls", "chain"];
    let [ca, tls, chain] = std::array::from_fn(|i| {
        input.secrets[i]
            .as_ref()
            .map(|(tls_type, immutable, data)| {
                let secret_type = if *tls_type {
                    "kubernetes.io/tls"
                } else {
                    "Opaque"
                };
                common::secret_json(names[i], secret_type, *immutable, data)
            })
    });
    let request = CertificatesRequest {
        certificate: entry,
        ca_secret: ca,
        tls_secret: tls,
        chain_secret: chain,
        ready_units: if input.ready {
            vec!["certificate-set".to_owned()]
        } else {
            Vec::new()
        },
        generate: input.generate,
    };
    if let Ok(plan) = plan_certificates(&request, &common::CachedKeys) {
        assert_eq!(plan.secrets.len(), 3);
        let reported = plan.secrets.iter().any(|s| !s.reports.is_empty());
        assert!(!reported || plan.secrets.iter().all(|s| s.add.is_empty()));
    }
});
