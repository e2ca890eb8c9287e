//! The WIT shim (wasm32 only): exports `gitlab:secretgen/planner` of the `planner-plugin`
//! world (`wit/secretgen/`), converting the WIT records to the crate's Rust types and back,
//! and generates keys through the host's `crypto` import (`wasm-operator:plugin`). No logic
//! lives here.

use std::time::Instant;

wit_bindgen::generate!({
    path: "../../wit/secretgen",
    world: "planner-plugin",
    // crypto and logging come from a dependency package (`wit/secretgen/deps`).
    generate_all,
});

use exports::gitlab::secretgen::planner as wit;
use wasm_operator::plugin::crypto;
use wasm_operator::plugin::logging::{self, Level};

use crate::{Curve, KeyAlgorithm, KeySource, SourceError};

/// Generates keys natively in the host.
struct HostKeys;

impl KeySource for HostKeys {
    /// Contract 1.1's `generate`: the host tells an unsupported algorithm from a failure.
    fn generate_key(&self, algorithm: KeyAlgorithm) -> Result<Vec<u8>, SourceError> {
        crypto::generate(algorithm.into()).map_err(|e| match e {
            crypto::KeyError::Unsupported(m) => SourceError::Unsupported(m),
            crypto::KeyError::Failed(m) => SourceError::Failed(m),
        })
    }
}

struct Planner;

impl wit::Guest for Planner {
    fn plan(request: wit::SecretRequest) -> Result<wit::SecretPlan, wit::PlanError> {
        let started = request.generate.then(Instant::now);
        let request = crate::SecretRequest::from(request);
        let result = crate::plan(&request, &HostKeys);
        log_outcome(
            &request.name,
            result.as_ref().map(|p| (p.add.len(), p.reports.len())),
            started,
        );
        result.map(Into::into).map_err(Into::into)
    }

    fn plan_certificates(
        request: wit::CertificatesRequest,
    ) -> Result<wit::CertificatesPlan, wit::PlanError> {
        let started = request.generate.then(Instant::now);
        let request = crate::CertificatesRequest::from(request);
        let result = crate::plan_certificates(&request, &HostKeys);
        let counts = result.as_ref().map(|p| {
            let add = p.secrets.iter().map(|s| s.add.len()).sum();
            let reports = p.secrets.iter().map(|s| s.reports.len()).sum();
            (add, reports)
        });
        log_outcome("certificate set", counts, started);
        result.map(Into::into).map_err(Into::into)
    }
}

/// Logs what a plan decided, never a value: keys to add or reports (with the time taken
/// when it generated, `started` set), or its failure. A plan with nothing to add or report
/// (a converged Secret, planned in every pass) is not logged.
fn log_outcome(
    subject: &str,
    outcome: Result<(usize, usize), &crate::PlanError>,
    started: Option<Instant>,
) {
    match outcome {
        Ok((0, 0)) => {}
        Ok((add, reports)) => {
            let took = started
                .map(|s| format!(", {} ms", s.elapsed().as_millis()))
                .unwrap_or_default();
            logging::log(
                Level::Debug,
                &format!("planned {subject}: {add} keys to add, {reports} reports{took}"),
            )
        }
        Err(error) => logging::log(Level::Warn, &format!("planning failed: {error}")),
    }
}

// The records of the `planner` export and the `crypto` import, to and from the crate's
// types (the planner records of `wasm-operator-planner`): one `From` per record.

impl From<KeyAlgorithm> for crypto::KeyAlgorithm {
    fn from(algorithm: KeyAlgorithm) -> Self {
        match algorithm {
            KeyAlgorithm::Rsa(bits) => Self::Rsa(bits),
            KeyAlgorithm::Ecdsa(Curve::P256) => Self::Ecdsa(crypto::Curve::P256),
            KeyAlgorithm::Ecdsa(Curve::P384) => Self::Ecdsa(crypto::Curve::P384),
            KeyAlgorithm::Ecdsa(Curve::P521) => Self::Ecdsa(crypto::Curve::P521),
            KeyAlgorithm::Ed25519 => Self::Ed25519,
        }
    }
}

impl From<wit::SecretRequest> for crate::SecretRequest {
    fn from(r: wit::SecretRequest) -> Self {
        Self {
            name: r.name,
            entries: r.entries,
            existing: r.existing,
            ready_units: r.ready_units,
            generate: r.generate,
        }
    }
}

impl From<wit::CertificatesRequest> for crate::CertificatesRequest {
    fn from(r: wit::CertificatesRequest) -> Self {
        Self {
            certificate: r.certificate,
            ca_secret: r.ca_secret,
            tls_secret: r.tls_secret,
            chain_secret: r.chain_secret,
            ready_units: r.ready_units,
            generate: r.generate,
        }
    }
}

impl From<crate::Entry> for wit::Entry {
    fn from(e: crate::Entry) -> Self {
        Self {
            key: e.key,
            value: e.value,
        }
    }
}

impl From<crate::SecretPlan> for wit::SecretPlan {
    fn from(p: crate::SecretPlan) -> Self {
        Self {
            name: p.name,
            secret_type: p.secret_type,
            add: p.add.into_iter().map(Into::into).collect(),
            reports: p.reports,
            declared_units: p.declared_units,
            next_ready_units: p.next_ready_units,
            type_kept: p.type_kept,
            ready: p.ready,
        }
    }
}

impl From<crate::CertificateAction> for wit::CertificateAction {
    fn from(action: crate::CertificateAction) -> Self {
        match action {
            crate::CertificateAction::None => Self::None,
            crate::CertificateAction::Issue => Self::Issue,
            crate::CertificateAction::DeriveChain => Self::DeriveChain,
            crate::CertificateAction::Report => Self::Report,
        }
    }
}

impl From<crate::CertificatesPlan> for wit::CertificatesPlan {
    fn from(p: crate::CertificatesPlan) -> Self {
        Self {
            action: p.action.into(),
            secrets: p.secrets.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<crate::PlanError> for wit::PlanError {
    fn from(error: crate::PlanError) -> Self {
        Self {
            message: error.message(),
            subject: error.subject,
        }
    }
}

export!(Planner);
