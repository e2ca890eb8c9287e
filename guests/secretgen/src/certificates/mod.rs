//! `plan_certificates`: the CA, TLS and chain Secrets of one spec.certificates entry,
//! planned together as the one unit [`CERTIFICATE_SET_UNIT`], held by the TLS Secret.
//!
//! The rules (`gitlabsecrets-reconciler.txt`, "Generation"):
//!
//! - No key of the set present (in missing or existing Secrets) and the unit never ready:
//!   issue a CA and a wildcard certificate (`issue`) — only with `generate`; without it the
//!   plan says [`CertificateAction::Issue`] and adds nothing. The algorithm is checked first,
//!   so a refused one fails even the plan without `generate`.
//! - CA certificate, tls.crt and tls.key present, chain missing: derive the chain (the CA
//!   certificate, then tls.crt, byte for byte), also after the set was ready. An empty CA
//!   certificate or tls.crt is kept and the chain is reported instead.
//! - Any other partial set, and a ready set that is missing, is reported on the TLS Secret.
//! - An existing set is never reissued, renewed or checked (an expired or Ed25519 one
//!   included).
//! - A reported set gains nothing, so none of its missing Secrets is created. A Secret of
//!   the set is ready when the whole set is; an existing Secret keeps its type; an
//!   immutable Secret that lacks a key, and a Secret that would exceed 1 MiB, are reported.
//!
//! DECISION: the validity is cfssl's fixed 43800 h (CA) and 8760 h (wildcard), not the
//! schema's `caDays`/`certDays`. The reconciler page, which wins where the two disagree,
//! records that the Job's script read `EXPIRE` while the Job set `EXPIRY`, so no configured
//! expiry ever applied, and the shape test issues with no accepted difference.
//!
//! DECISION (an issuance interrupted between its writes): the set is written CA, TLS, chain,
//! and a crash or a failed write after the CA leaves the CA certificate stored and every
//! other key of the set missing. No completion exists within the rules: the CA key and
//! tls.key existed only in the pass that stopped (the CA key is never stored), so no
//! certificate can be issued under the stored CA, and a new CA would mean updating or
//! deleting the CA Secret, which the reconciler never does. So that footprint — the CA key
//! present, tls.crt, tls.key and the chain absent, the set never ready — gets its own report,
//! which says what stopped and exactly which key to delete (no stored certificate chains to
//! that CA) for the next pass to issue a new set.
//!
//! Refusals use cfssl's messages: RSA below 2048 bits "RSA key is too weak", above 8192
//! "RSA key size too large", ECDSA other than 256/384/521 "invalid curve", another algorithm
//! "invalid algorithm"; Ed25519 is refused because browsers do not accept an Ed25519 TLS
//! server certificate.

mod issue;
mod san;

use std::time::SystemTime;

use crate::Clock;
use crate::api::{
    CertificateAction, CertificatesPlan, CertificatesRequest, Entry, PlanError, SecretPlan,
};
use crate::cert::CertError;
use crate::entries::{
    Authority, CertificateEntry, EntryError, check_key, decode_certificate_entry,
};
use crate::keys::{Curve, KeyAlgorithm, KeyError, KeySource};
use crate::secret::{self, ExistingSecret, MAX_SECRET_BYTES, OPAQUE};

/// The unit of a certificate set, held only by its TLS Secret.
pub const CERTIFICATE_SET_UNIT: &str = "certificate-set";

/// The type of the TLS Secret.
const TLS_TYPE: &str = "kubernetes.io/tls";

/// Why a certificate set could not be planned or issued.
#[derive(Debug, thiserror::Error)]
pub enum CertificateError {
    /// The entry asks for an algorithm or size that is refused.
    #[error("{0}")]
    Refused(String),
    /// A key could not be had.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// A certificate could not be built.
    #[error(transparent)]
    Certificate(#[from] CertError),
    /// A key could not be encoded.
    #[error("encoding tls.key failed: {0}")]
    Encode(String),
}

/// Plans the CA, TLS and chain Secrets of one certificate entry together.
pub fn plan_certificates(
    request: &CertificatesRequest,
    keys: &dyn KeySource,
) -> Result<CertificatesPlan, PlanError> {
    plan_certificates_with_clock(request, keys, &SystemTime::now)
}

/// The three Secrets of a set, in the order CA, TLS, chain.
const CA: usize = 0;
const TLS: usize = 1;
const CHAIN: usize = 2;

/// [`plan_certificates`] at a given time of issue.
#[cfg(test)]
pub(crate) fn plan_certificates_at(
    request: &CertificatesRequest,
    keys: &dyn KeySource,
    now: SystemTime,
) -> Result<CertificatesPlan, PlanError> {
    plan_certificates_with_clock(request, keys, &move || now)
}

/// [`plan_certificates`] with the time of issue read from `clock`, only when a set is
/// issued.
fn plan_certificates_with_clock(
    request: &CertificatesRequest,
    keys: &dyn KeySource,
    clock: Clock<'_>,
) -> Result<CertificatesPlan, PlanError> {
    let entry = decode_certificate_entry(&request.certificate)
        .map_err(|e| PlanError::new("spec.certificates entry", e))?;
    let subject = entry.tls_secret.clone();
    let fail = |cause: crate::api::PlanFailure| PlanError {
        subject: subject.clone(),
        cause,
    };
    validate(&entry).map_err(|e| fail(e.into()))?;
    let names = [&entry.ca_secret, &entry.tls_secret, &entry.chain_secret];
    let declared_types = [OPAQUE, TLS_TYPE, OPAQUE];
    let secrets = [
        &request.ca_secret,
        &request.tls_secret,
        &request.chain_secret,
    ]
    .map(|json| ExistingSecret::from_optional(json.as_deref()));
    let [ca, tls, chain] = secrets;
    let existing = [
        ca.map_err(|e| fail(e.into()))?,
        tls.map_err(|e| fail(e.into()))?,
        chain.map_err(|e| fail(e.into()))?,
    ];
    // The keys of the set: (Secret, key).
    let set_keys = [
        (CA, entry.ca_key.as_str()),
        (TLS, "tls.crt"),
        (TLS, "tls.key"),
        (CHAIN, entry.chain_key.as_str()),
    ];
    let value = |(secret, key): (usize, &str)| existing[secret].as_ref().and_then(|s| s.get(key));
    let present: Vec<bool> = set_keys.iter().map(|&k| value(k).is_some()).collect();
    let was_ready = request
        .ready_units
        .iter()
        .any(|u| u == CERTIFICATE_SET_UNIT);

    let mut reports: [Vec<String>; 3] = Default::default();
    let mut add: [Vec<Entry>; 3] = Default::default();
    let lacks = |secret: usize, key: &str, reports: &mut [Vec<String>; 3]| {
        if existing[secret].as_ref().is_some_and(|s| s.immutable) {
            reports[secret].push(format!("is immutable and lacks {key}"));
        }
    };
    let mut action = if present.iter().all(|&p| p) {
        CertificateAction::None
    } else if present.iter().all(|&p| !p) && !was_ready {
        let algorithm = key_algorithm(&entry.authority).map_err(|e| fail(e.into()))?;
        for &(secret, key) in &set_keys {
            lacks(secret, key, &mut reports);
        }
        if request.generate && reports.iter().all(Vec::is_empty) {
            let issued =
                issue::issue(&entry, algorithm, keys, clock()).map_err(|e| fail(e.into()))?;
            add[CA].push(entry_of(&entry.ca_key, &issued.ca_certificate));
            add[TLS].push(entry_of("tls.crt", &issued.tls_certificate));
            add[TLS].push(entry_of("tls.key", &issued.tls_key));
            add[CHAIN].push(entry_of(&entry.chain_key, &issued.chain()));
        }
        CertificateAction::Issue
    } else if present == [true, true, true, false] {
        let ca_certificate = value(set_keys[0]).unwrap_or_default();
        let tls_certificate = value(set_keys[1]).unwrap_or_default();
        if ca_certificate.is_empty() || tls_certificate.is_empty() {
            reports[CHAIN].push(format!(
                "certificate set: the chain {} is not derived from an empty {}",
                entry.chain_key,
                if ca_certificate.is_empty() {
                    entry.ca_key.as_str()
                } else {
                    "tls.crt"
                }
            ));
        } else {
            lacks(CHAIN, &entry.chain_key, &mut reports);
            add[CHAIN].push(Entry {
                key: entry.chain_key.clone(),
                value: [ca_certificate, tls_certificate].concat(),
            });
        }
        CertificateAction::DeriveChain
    } else {
        let report = if present == [true, false, false, false] && !was_ready {
            interrupted_issuance_report(&entry, &names)
        } else {
            partial_report(&set_keys, &present, &names)
        };
        reports[TLS].push(report);
        CertificateAction::Report
    };

    for secret in [CA, TLS, CHAIN] {
        let size = secret::size_after(existing[secret].as_ref(), &add[secret]);
        if size > MAX_SECRET_BYTES {
            reports[secret].push(format!(
                "would hold {size} bytes, more than the {MAX_SECRET_BYTES} the API server stores"
            ));
        }
    }
    if reports.iter().any(|r| !r.is_empty()) {
        action = CertificateAction::Report;
        add = Default::default();
    }
    let ready = match action {
        CertificateAction::None | CertificateAction::DeriveChain => true,
        CertificateAction::Issue => request.generate,
        CertificateAction::Report => false,
    };

    let secrets = [CA, TLS, CHAIN]
        .into_iter()
        .zip(add)
        .zip(reports)
        .map(|((secret, add), reports)| {
            let (secret_type, type_kept) =
                secret::planned_type(existing[secret].as_ref(), declared_types[secret]);
            let declared_units: Vec<String> = if secret == TLS {
                vec![CERTIFICATE_SET_UNIT.to_owned()]
            } else {
                Vec::new()
            };
            let next_ready_units = if ready {
                declared_units.clone()
            } else {
                declared_units
                    .iter()
                    .filter(|u| secret == TLS && request.ready_units.contains(u))
                    .cloned()
                    .collect()
            };
            SecretPlan {
                name: names[secret].clone(),
                secret_type,
                add,
                reports: reports
                    .into_iter()
                    .map(|r| format!("Secret {}: {r}", names[secret]))
                    .collect(),
                declared_units,
                next_ready_units,
                type_kept,
                ready,
            }
        })
        .collect();
    Ok(CertificatesPlan { action, secrets })
}

fn entry_of(key: &str, pem: &str) -> Entry {
    Entry {
        key: key.to_owned(),
        value: pem.as_bytes().to_vec(),
    }
}

/// The report of a partial set, or of a ready set that is gone, naming what it holds.
fn partial_report(set_keys: &[(usize, &str); 4], present: &[bool], names: &[&String; 3]) -> String {
    let describe = |want: bool| {
        set_keys
            .iter()
            .zip(present)
            .filter(|(_, p)| **p == want)
            .map(|((secret, key), _)| format!("{}/{key}", names[*secret]))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if present.iter().all(|p| !p) {
        "certificate set: it was ready and every key of it is gone; it is not issued again \
         (restore the Secrets, or remove certificate-set from the status to issue a new set)"
            .to_owned()
    } else {
        format!(
            "certificate set: holds {} but lacks {}; it is neither completed nor reissued",
            describe(true),
            describe(false)
        )
    }
}

/// The report of the footprint an issuance leaves when it stops after writing the CA.
fn interrupted_issuance_report(entry: &CertificateEntry, names: &[&String; 3]) -> String {
    let [ca, tls, chain] = names;
    let ca_key = &entry.ca_key;
    format!(
        "certificate set: an issuance stopped after writing the CA: {ca}/{ca_key} is present \
         but {tls}/tls.crt, {tls}/tls.key and {chain}/{chain_key} are not, and the set was \
         never ready. The CA's key is never stored, so this set cannot be completed, and it \
         is not issued again while {ca}/{ca_key} exists. No stored certificate chains to that \
         CA: delete key {ca_key} from Secret {ca} (or the Secret, if it holds nothing else) \
         and the next pass issues a new set",
        chain_key = entry.chain_key,
    )
}

/// Checks the names and keys of an entry: three distinct Secrets, valid keys, a domain.
fn validate(entry: &CertificateEntry) -> Result<(), EntryError> {
    let names = [&entry.ca_secret, &entry.tls_secret, &entry.chain_secret];
    if names.iter().any(|n| n.is_empty()) {
        return Err(EntryError::invalid(
            "spec.certificates",
            "a Secret name is empty",
        ));
    }
    if names[0] == names[1] || names[0] == names[2] || names[1] == names[2] {
        return Err(EntryError::invalid(
            "spec.certificates",
            "caSecret, tlsSecret and chainSecret must be three different Secrets",
        ));
    }
    check_key(&entry.ca_key)?;
    check_key(&entry.chain_key)?;
    if entry.domain.is_empty() {
        return Err(EntryError::invalid("spec.certificates", "domain is empty"));
    }
    Ok(())
}

/// The key algorithm of the set, or cfssl's refusal.
pub(crate) fn key_algorithm(authority: &Authority) -> Result<KeyAlgorithm, CertificateError> {
    let refuse = |why: &str| Err(CertificateError::Refused(why.to_owned()));
    match authority.algorithm.as_str() {
        "rsa" => match authority.key_size.unwrap_or(2048) {
            ..2048 => refuse("RSA key is too weak"),
            8193.. => refuse("RSA key size too large"),
            bits => Ok(KeyAlgorithm::Rsa(bits)),
        },
        "ecdsa" => match authority.key_size.unwrap_or(256) {
            256 => Ok(KeyAlgorithm::Ecdsa(Curve::P256)),
            384 => Ok(KeyAlgorithm::Ecdsa(Curve::P384)),
            521 => Ok(KeyAlgorithm::Ecdsa(Curve::P521)),
            _ => refuse("invalid curve"),
        },
        "ed25519" => refuse(
            "ed25519 is refused: Chrome and Firefox do not support an Ed25519 TLS server \
             certificate",
        ),
        _ => refuse("invalid algorithm"),
    }
}

#[cfg(test)]
mod tests;
