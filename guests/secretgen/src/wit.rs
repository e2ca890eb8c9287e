//! The WIT shim (wasm32 only): exports `planner` of the `planner-plugin` world, converting
//! the WIT records to the crate's Rust types and back, and generates keys through the
//! host's `crypto` import. No logic lives here.

use std::time::Instant;

wit_bindgen::generate!({
    path: "../../wit",
    world: "planner-plugin",
});

use exports::wasm_operator::plugin::planner as wit;
use wasm_operator::plugin::crypto;
use wasm_operator::plugin::logging::{self, Level};

use crate::{Curve, KeyAlgorithm, KeySource};

/// Generates keys natively in the host.
struct HostKeys;

impl KeySource for HostKeys {
    fn generate_key(&self, algorithm: KeyAlgorithm) -> Result<Vec<u8>, String> {
        let algorithm = match algorithm {
            KeyAlgorithm::Rsa(bits) => crypto::KeyAlgorithm::Rsa(bits),
            KeyAlgorithm::Ecdsa(Curve::P256) => crypto::KeyAlgorithm::Ecdsa(crypto::Curve::P256),
            KeyAlgorithm::Ecdsa(Curve::P384) => crypto::KeyAlgorithm::Ecdsa(crypto::Curve::P384),
            KeyAlgorithm::Ecdsa(Curve::P521) => crypto::KeyAlgorithm::Ecdsa(crypto::Curve::P521),
            KeyAlgorithm::Ed25519 => crypto::KeyAlgorithm::Ed25519,
        };
        crypto::generate_key(algorithm)
    }
}

struct Planner;

impl wit::Guest for Planner {
    fn plan(request: wit::SecretRequest) -> Result<wit::SecretPlan, wit::PlanError> {
        let started = Instant::now();
        let request = crate::SecretRequest {
            name: request.name,
            entries: request.entries,
            existing: request.existing,
            ready_units: request.ready_units,
            generate: request.generate,
        };
        let result = crate::plan(&request, &HostKeys);
        log_outcome(
            &request.name,
            result.as_ref().map(|p| (p.add.len(), p.reports.len())),
            started,
        );
        result.map(secret_plan).map_err(plan_error)
    }

    fn plan_certificates(
        request: wit::CertificatesRequest,
    ) -> Result<wit::CertificatesPlan, wit::PlanError> {
        let started = Instant::now();
        let request = crate::CertificatesRequest {
            certificate: request.certificate,
            ca_secret: request.ca_secret,
            tls_secret: request.tls_secret,
            chain_secret: request.chain_secret,
            ready_units: request.ready_units,
            generate: request.generate,
        };
        let result = crate::plan_certificates(&request, &HostKeys);
        let counts = result.as_ref().map(|p| {
            let add = p.secrets.iter().map(|s| s.add.len()).sum();
            let reports = p.secrets.iter().map(|s| s.reports.len()).sum();
            (add, reports)
        });
        log_outcome("certificate set", counts, started);
        result
            .map(|plan| wit::CertificatesPlan {
                action: match plan.action {
                    crate::CertificateAction::None => wit::CertificateAction::None,
                    crate::CertificateAction::Issue => wit::CertificateAction::Issue,
                    crate::CertificateAction::DeriveChain => wit::CertificateAction::DeriveChain,
                    crate::CertificateAction::Report => wit::CertificateAction::Report,
                },
                secrets: plan.secrets.into_iter().map(secret_plan).collect(),
            })
            .map_err(plan_error)
    }
}

/// Logs what a plan decided, never a value.
fn log_outcome(
    subject: &str,
    outcome: Result<(usize, usize), &crate::PlanError>,
    started: Instant,
) {
    let elapsed = started.elapsed().as_millis();
    match outcome {
        Ok((add, reports)) => logging::log(
            Level::Debug,
            &format!("planned {subject}: {add} keys to add, {reports} reports, {elapsed} ms"),
        ),
        Err(error) => logging::log(Level::Warn, &format!("planning failed: {error}")),
    }
}

fn secret_plan(plan: crate::SecretPlan) -> wit::SecretPlan {
    wit::SecretPlan {
        name: plan.name,
        secret_type: plan.secret_type,
        add: plan
            .add
            .into_iter()
            .map(|e| wit::Entry {
                key: e.key,
                value: e.value,
            })
            .collect(),
        reports: plan.reports,
        declared_units: plan.declared_units,
        next_ready_units: plan.next_ready_units,
        type_kept: plan.type_kept,
        ready: plan.ready,
    }
}

fn plan_error(error: crate::PlanError) -> wit::PlanError {
    wit::PlanError {
        message: error.message(),
        subject: error.subject,
    }
}

export!(Planner);
