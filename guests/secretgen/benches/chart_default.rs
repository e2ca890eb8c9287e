//! A full chart-default plan: every Secret of the GitLabSecrets the chart renders with its
//! defaults (13 Secrets, with the x509 RSA-4096 registry certificate, the SSH host keys and
//! the rails RSA-2048 PEM) plus its certificate set, planned from empty with native keys.
//!
//! `cargo bench -p secretgen` prints the time of each run. Target on this 2-core machine:
//! under 2 s.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use secretgen::{CertificatesRequest, NativeKeys, SecretRequest, plan, plan_certificates};
use serde_json::Value;

const RUNS: usize = 5;

fn main() {
    let read = |file: &str| -> Value {
        let path = format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(&path).expect("fixture")).expect("JSON")
    };
    // spec.secrets and spec.certificates[0] of examples/gitlabsecrets-chart-defaults.yaml.
    let secrets = read("chart-defaults-secrets.json");
    let certificates = vec![read("chart-defaults-certificate.json")];
    let mut by_name: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for entry in secrets.as_array().expect("spec.secrets") {
        by_name
            .entry(entry["name"].as_str().expect("name").to_owned())
            .or_default()
            .push(entry.clone());
    }
    let mut times = Vec::new();
    for _ in 0..RUNS {
        let started = Instant::now();
        for (name, entries) in &by_name {
            let request = SecretRequest {
                name: name.clone(),
                entries: Value::Array(entries.clone()).to_string(),
                existing: None,
                ready_units: vec![],
                generate: true,
            };
            let planned = plan(&request, &NativeKeys).expect("plans");
            assert!(planned.ready, "{name}: {:?}", planned.reports);
        }
        for certificate in &certificates {
            let request = CertificatesRequest {
                certificate: certificate.to_string(),
                ca_secret: None,
                tls_secret: None,
                chain_secret: None,
                ready_units: vec![],
                generate: true,
            };
            plan_certificates(&request, &NativeKeys).expect("issues");
        }
        times.push(started.elapsed());
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "chart-default plan ({} Secrets, {} certificate set): min {:.0} ms, median {:.0} ms, max {:.0} ms over {RUNS} runs",
        by_name.len(),
        certificates.len(),
        ms(times[0]),
        ms(times[RUNS / 2]),
        ms(times[RUNS - 1])
    );
}
