//! Issuing a certificate set as cfssl-self-sign does: a CA and a wildcard certificate it
//! signs ("Certificate structure" and the rows after it in `gitlabsecrets-reconciler.txt`).
//!
//! | | CA | wildcard |
//! |---|---|---|
//! | subject | O=namespace, OU=release, CN=caSubject | CN=domain |
//! | issuer | itself | the CA |
//! | extensions, in Go's order | key usage (critical): certificate sign, CRL sign; basic constraints (critical): CA:TRUE; subject key ID | key usage (critical): digital signature, key encipherment, certificate sign; extended key usage: server auth; basic constraints (critical): CA:FALSE; subject key ID; authority key ID = the CA's subject key ID; SANs domain and *.domain |
//! | validity | 43800 h | 8760 h |
//!
//! Both: X.509 v3, names as PrintableString (UTF8String where Go would), a serial of 20
//! random bytes with the top bit clear, a SHA-1 subject key ID, validity from the time of
//! issue rounded to the minute (half up, as Go's `Time.Round`) minus 5 minutes, signed by
//! the CA key: RSA from 4096 bits with SHA-512, from 3072 with SHA-384, below with SHA-256;
//! ECDSA P-256 with SHA-256, P-384 SHA-384, P-521 SHA-512. tls.key is PKCS#1 `RSA PRIVATE
//! KEY` or SEC 1 `EC PRIVATE KEY` PEM; the CA key is not kept.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use der::asn1::OctetString;
use der::oid::ObjectIdentifier;
use x509_cert::ext::pkix::{
    AuthorityKeyIdentifier, BasicConstraints, ExtendedKeyUsage, KeyUsage, KeyUsages,
    SubjectAltName, SubjectKeyIdentifier,
};

use super::{CertificateError, san};
use crate::cert::{self, NameStrings, RsaDigest, Signer, TbsSpec};
use crate::entries::CertificateEntry;
use crate::keys::{self, KeyAlgorithm, KeySource, PrivateKey};

/// How long the CA is valid: cfssl's default CA expiry.
pub(crate) const CA_VALIDITY: Duration = Duration::from_secs(43_800 * 3600);
/// How long the wildcard certificate is valid: cfssl's default profile expiry.
pub(crate) const CERT_VALIDITY: Duration = Duration::from_secs(8_760 * 3600);

/// `id-kp-serverAuth`.
const SERVER_AUTH: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.3.1");

/// The PEMs of an issued set.
pub(crate) struct IssuedSet {
    /// The CA certificate (the CA Secret's `caKey`, and the chain's first part).
    pub(crate) ca_certificate: String,
    /// tls.crt.
    pub(crate) tls_certificate: String,
    /// tls.key.
    pub(crate) tls_key: String,
}

impl IssuedSet {
    /// The chain: the CA certificate, then tls.crt.
    pub(crate) fn chain(&self) -> String {
        format!("{}{}", self.ca_certificate, self.tls_certificate)
    }
}

/// The start of the validity of a set issued at `now`.
pub(crate) fn not_before(now: SystemTime) -> SystemTime {
    let since = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    let minutes = (since.as_secs() + 30) / 60;
    let rounded = UNIX_EPOCH + Duration::from_secs(minutes * 60);
    rounded
        .checked_sub(Duration::from_secs(5 * 60))
        .unwrap_or(UNIX_EPOCH)
}

/// The RSA digest cfssl picks for a key size.
pub(super) fn rsa_digest(bits: u32) -> RsaDigest {
    match bits {
        4096.. => RsaDigest::Sha512,
        3072.. => RsaDigest::Sha384,
        _ => RsaDigest::Sha256,
    }
}

/// Issues a new CA and wildcard certificate for `entry` with keys of `algorithm`.
pub(crate) fn issue(
    entry: &CertificateEntry,
    algorithm: KeyAlgorithm,
    keys: &dyn KeySource,
    now: SystemTime,
) -> Result<IssuedSet, CertificateError> {
    let ca_key = keys::generate(keys, algorithm)?;
    let tls_key = keys::generate(keys, algorithm)?;
    let digest = match algorithm {
        KeyAlgorithm::Rsa(bits) => rsa_digest(bits),
        _ => RsaDigest::Sha256,
    };
    let signer = Signer::new(&ca_key, digest)?;
    let start = not_before(now);
    let end = |validity| {
        start
            .checked_add(validity)
            .ok_or(cert::CertError::TimeOutOfRange)
    };

    let authority = &entry.authority;
    let ca_name = cert::name(
        &[
            (cert::ORGANIZATION, name_of(&authority.organization)),
            (
                cert::ORGANIZATIONAL_UNIT,
                name_of(&authority.organizational_unit),
            ),
            (cert::COMMON_NAME, name_of(&authority.common_name)),
        ],
        NameStrings::PrintableWhenPossible,
    )?;
    let ca_public = cert::public_key_info(&ca_key)?;
    let ca_key_id =
        OctetString::new(cert::key_identifier(&ca_public)).map_err(cert::CertError::from)?;
    let ca = cert::sign(
        TbsSpec {
            serial: cert::random_serial()?,
            subject: ca_name.clone(),
            issuer: ca_name.clone(),
            not_before: start,
            not_after: end(CA_VALIDITY)?,
            public_key: ca_public,
            extensions: vec![
                cert::extension(&KeyUsage(KeyUsages::KeyCertSign | KeyUsages::CRLSign), true)?,
                cert::extension(
                    &BasicConstraints {
                        ca: true,
                        path_len_constraint: None,
                    },
                    true,
                )?,
                cert::extension(&SubjectKeyIdentifier(ca_key_id.clone()), false)?,
            ],
        },
        &signer,
    )?;

    let domain = entry.domain.as_str();
    let wildcard = format!("*.{domain}");
    let tls_public = cert::public_key_info(&tls_key)?;
    let tls_key_id =
        OctetString::new(cert::key_identifier(&tls_public)).map_err(cert::CertError::from)?;
    let tls = cert::sign(
        TbsSpec {
            serial: cert::random_serial()?,
            subject: cert::name(
                &[(cert::COMMON_NAME, domain)],
                NameStrings::PrintableWhenPossible,
            )?,
            issuer: ca_name,
            not_before: start,
            not_after: end(CERT_VALIDITY)?,
            public_key: tls_public,
            extensions: vec![
                cert::extension(
                    &KeyUsage(
                        KeyUsages::DigitalSignature
                            | KeyUsages::KeyEncipherment
                            | KeyUsages::KeyCertSign,
                    ),
                    true,
                )?,
                cert::extension(&ExtendedKeyUsage(vec![SERVER_AUTH]), false)?,
                cert::extension(
                    &BasicConstraints {
                        ca: false,
                        path_len_constraint: None,
                    },
                    true,
                )?,
                cert::extension(&SubjectKeyIdentifier(tls_key_id), false)?,
                cert::extension(
                    &AuthorityKeyIdentifier {
                        key_identifier: Some(ca_key_id),
                        authority_cert_issuer: None,
                        authority_cert_serial_number: None,
                    },
                    false,
                )?,
                cert::extension(
                    &SubjectAltName(san::general_names(&[domain, &wildcard])?),
                    false,
                )?,
            ],
        },
        &signer,
    )?;

    Ok(IssuedSet {
        ca_certificate: cert::certificate_pem(&ca)?,
        tls_certificate: cert::certificate_pem(&tls)?,
        tls_key: traditional_pem(&tls_key)?,
    })
}

/// A name attribute of the authority; an absent one is empty, and so left out.
fn name_of(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or_default()
}

/// A key as cfssl writes it: PKCS#1 for RSA, SEC 1 for ECDSA.
fn traditional_pem(key: &PrivateKey) -> Result<String, CertificateError> {
    use pkcs1::EncodeRsaPrivateKey as _;

    let lf = pkcs8::LineEnding::LF;
    let pem = match key {
        PrivateKey::Rsa(k) => k.to_pkcs1_pem(lf).map_err(|e| e.to_string()),
        PrivateKey::P256(k) => k.to_sec1_pem(lf).map_err(|e| e.to_string()),
        PrivateKey::P384(k) => k.to_sec1_pem(lf).map_err(|e| e.to_string()),
        PrivateKey::P521(k) => k.to_sec1_pem(lf).map_err(|e| e.to_string()),
        PrivateKey::Ed25519(_) => Err("Ed25519 keys have no traditional PEM".to_owned()),
    };
    pem.map(|pem| pem.to_string())
        .map_err(CertificateError::Encode)
}
