//! Scenario 6, secretgen: the chart-default plan and each key type alone, planned natively
//! (the secretgen crate with native keys) and in-guest (the secretgen component, its keys
//! from the host's crypto capability, as the operator runs it).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::BenchOptions;
use super::cluster::Variant;
use super::report::{Cell, Section, Stats};
use wasm_operator_runtime::planner as wit;
use wasm_operator_runtime::{Plugin, Runtime, RuntimeConfig};

/// One planning job: Secrets and certificate sets planned from empty.
struct Job {
    label: String,
    secrets: Vec<(String, Value)>,
    certificates: Vec<Value>,
    samples: usize,
}

fn rsa(bits: u32) -> (String, Value) {
    (
        format!("rsa-{bits}"),
        json!([{"type": "rsa", "key": "key.pem", "bits": bits}]),
    )
}

fn certificate_set(algorithm: &str, size: u32) -> Value {
    json!({
        "authority": {"commonName": "bench", "organization": "bench", "organizationalUnit": "bench",
                      "algorithm": algorithm, "keySize": size},
        "domain": "example.com",
        "tlsSecret": "tls", "caSecret": "ca", "caKey": "cfssl_ca",
        "chainSecret": "chain", "chainKey": "chain.crt",
    })
}

fn chart_defaults() -> anyhow::Result<Job> {
    let object = Variant::Full.object("bench")?;
    let mut by_name: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for entry in object["spec"]["secrets"].as_array().into_iter().flatten() {
        let name = entry["name"].as_str().unwrap_or_default().to_owned();
        by_name.entry(name).or_default().push(entry.clone());
    }
    Ok(Job {
        label: format!(
            "chart-default plan ({} Secrets and the certificate set)",
            by_name.len()
        ),
        secrets: by_name
            .into_iter()
            .map(|(name, entries)| (name, Value::Array(entries)))
            .collect(),
        certificates: object["spec"]["certificates"]
            .as_array()
            .cloned()
            .unwrap_or_default(),
        samples: 3,
    })
}

fn jobs(options: &BenchOptions) -> anyhow::Result<Vec<Job>> {
    let secret = |(name, generators): (String, Value), samples| {
        let entries = json!([{"name": name, "type": "Opaque", "generators": generators}]);
        Job {
            label: String::new(),
            secrets: vec![(name, entries)],
            certificates: vec![],
            samples,
        }
    };
    let mut jobs = vec![chart_defaults()?];
    for (bits, samples) in [(2048, 10), (4096, 4), (8192, 2)] {
        if options.quick && bits == 8192 {
            continue;
        }
        jobs.push(Job {
            label: format!("RSA-{bits} key (rsa generator)"),
            ..secret(rsa(bits), samples)
        });
    }
    jobs.push(Job {
        label: "ECDSA P-256 certificate set (CA and wildcard keys, 3 Secrets)".into(),
        secrets: vec![],
        certificates: vec![certificate_set("ecdsa", 256)],
        samples: 10,
    });
    jobs.push(Job {
        label: "SSH host keys (RSA-3072, ECDSA P-256, Ed25519)".into(),
        ..secret(("host-keys".into(), json!([{"type": "sshHostKeys"}])), 5)
    });
    Ok(jobs)
}

fn secret_request(name: &str, entries: &Value) -> secretgen::SecretRequest {
    secretgen::SecretRequest {
        name: name.to_owned(),
        entries: entries.to_string(),
        existing: None,
        ready_units: vec![],
        generate: true,
    }
}

fn certificates_request(certificate: &Value) -> secretgen::CertificatesRequest {
    secretgen::CertificatesRequest {
        certificate: certificate.to_string(),
        ca_secret: None,
        tls_secret: None,
        chain_secret: None,
        ready_units: vec![],
        generate: true,
    }
}

/// Plans `job` natively (on a blocking thread, as a native pass would).
async fn native(job: &Job) -> anyhow::Result<Duration> {
    let requests: Vec<_> = job
        .secrets
        .iter()
        .map(|(name, entries)| secret_request(name, entries))
        .collect();
    let certificates: Vec<_> = job.certificates.iter().map(certificates_request).collect();
    let started = Instant::now();
    tokio::task::spawn_blocking(move || -> anyhow::Result<()> {
        for request in &requests {
            let plan = secretgen::plan(request, &secretgen::NativeKeys)?;
            anyhow::ensure!(plan.ready, "{}: {:?}", request.name, plan.reports);
        }
        for request in &certificates {
            secretgen::plan_certificates(request, &secretgen::NativeKeys)?;
        }
        Ok(())
    })
    .await??;
    Ok(started.elapsed())
}

/// Plans `job` with the secretgen component.
async fn in_guest(runtime: &Runtime, planner: &Plugin, job: &Job) -> anyhow::Result<Duration> {
    let started = Instant::now();
    for (name, entries) in &job.secrets {
        let request: wit::SecretRequest = secret_request(name, entries).into();
        let plan = planner
            .plan(runtime, &request)
            .await?
            .map_err(|e| anyhow::anyhow!("{}: {}", e.subject, e.message))?;
        anyhow::ensure!(plan.ready, "{name}: {:?}", plan.reports);
    }
    for certificate in &job.certificates {
        let request: wit::CertificatesRequest = certificates_request(certificate).into();
        planner
            .plan_certificates(runtime, &request)
            .await?
            .map_err(|e| anyhow::anyhow!("{}: {}", e.subject, e.message))?;
    }
    Ok(started.elapsed())
}

/// Runs the scenario.
pub async fn run(options: &BenchOptions) -> anyhow::Result<Section> {
    let mut section = Section::new(
        "secretgen",
        "6. secretgen: plans from empty, native vs in-guest",
        &["plan", "in-guest", "native", "in-guest ÷ native"],
    );
    let cache = tempfile::tempdir()?;
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(cache.path().to_owned()),
        ..RuntimeConfig::default()
    })?;
    let planner = Arc::new(
        runtime
            .load(&options.plugins.join("secretgen.wasm"), None)
            .await?,
    );
    for job in jobs(options)? {
        let (mut guest_times, mut native_times) = (Vec::new(), Vec::new());
        let samples = if options.quick { 1 } else { job.samples };
        for _ in 0..samples {
            guest_times.push(in_guest(&runtime, &planner, &job).await?);
            native_times.push(native(&job).await?);
        }
        let median = |s: &[Duration]| Stats::of(s).map_or(f64::NAN, |s| s.median_ms);
        section.row(
            job.label.clone(),
            vec![
                Cell::time(&guest_times),
                Cell::time(&native_times),
                Cell::ratio(median(&guest_times), median(&native_times)),
            ],
        );
    }
    section.note(
        "In-guest, key pairs come from the host's crypto capability (the same generator as \
         native: RSA primes searched on all cores), so the ratio is what the guest adds: \
         encoding (PEM, OpenSSH, X.509 signing), the copies and the instances. RSA times vary \
         with the luck of the prime search; compare medians over several runs.",
    );
    Ok(section)
}
