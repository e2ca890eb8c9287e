//! The SAML service provider's keypair (CobaltCore's `ensureSAMLSPKeypair`).
//!
//! | Case | Keypair |
//! |---|---|
//! | `spec.saml.sp.certificateSecretRef` set | that Secret's `tls.crt` / `tls.key` (a missing Secret or key is a fault) |
//! | the `{keystone}-saml-sp` Secret exists (in the cache, else on the server) | its `tls.crt` / `tls.key`, never regenerated: the IdP registered this certificate |
//! | otherwise | a fresh RSA-2048 key from the host's crypto capability and a self-signed certificate (CN `<keystone>-saml-sp`, valid from an hour before the pass for 10 years, SHA-256 with RSA, key usage digitalSignature + keyEncipherment, CA:FALSE), created as that `kubernetes.io/tls` Secret, controlled by the Keystone, with its common labels |
//!
//! A create that finds the Secret already there (a cache that lags the previous pass's
//! create) takes the server's copy instead. A generated key is written as PKCS#1 PEM
//! (`RSA PRIVATE KEY`), the certificate as PEM. A certificate without a PEM `CERTIFICATE`
//! block, or a key without a PEM `... PRIVATE KEY` block, is a fault naming the Secret (the
//! sidecar would not start on it, and the Service points at the sidecar); a chain after
//! the certificate is kept, the SP metadata carries the first certificate.

use std::str::FromStr as _;
use std::time::{Duration, SystemTime};

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use rsa::pkcs8::DecodePrivateKey as _;
use rsa::pkcs8::der::{Decode as _, Encode as _};
use wasm_operator_sdk::blocks::apply::controller_reference;
use wasm_operator_sdk::crypto::{self, KeyAlgorithm};
use wasm_operator_sdk::{ApiError, ClusterExt, ReadFrom};
use x509_cert::builder::profile::BuilderProfile;
use x509_cert::builder::{Builder as _, CertificateBuilder};
use x509_cert::der::DateTime;
use x509_cert::der::asn1::OctetString;
use x509_cert::der::oid::AssociatedOid as _;
use x509_cert::der::pem::LineEnding;
use x509_cert::ext::Extension;
use x509_cert::ext::pkix::{BasicConstraints, KeyUsage, KeyUsages};
use x509_cert::name::Name;
use x509_cert::serial_number::SerialNumber;
use x509_cert::spki::SubjectPublicKeyInfoOwned;
use x509_cert::time::{Time, Validity};

use super::saml::{Fault, read_secret};
use crate::error::Error;
use crate::federation::sp_keypair_secret;
use crate::identity_backend::IdentityBackend;
use crate::labels::common_labels;
use crate::pass::Pass;

/// The SP's certificate and key.
pub(crate) struct Keypair {
    pub(crate) cert_pem: String,
    /// The key as the Secret holds it (PEM).
    pub(crate) key: Vec<u8>,
    /// The certificate's DER (the SP metadata's `X509Certificate`).
    pub(crate) cert_der: Vec<u8>,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The SP keypair of `backend`: a [`Fault`] skips the backend, an `Err` (a failed read,
/// write or key generation) fails the pass.
pub(crate) fn ensure(
    pass: &Pass<'_>,
    backend: &IdentityBackend,
) -> Result<Result<Keypair, Fault>, Error> {
    let spec_ref = backend
        .spec
        .saml
        .as_ref()
        .and_then(|s| s.sp.as_ref())
        .and_then(|sp| sp.certificate_secret_ref.as_ref());
    if let Some(reference) = spec_ref {
        let cert = match read_secret(pass, backend, &reference.name, "tls.crt")? {
            Ok(v) => v,
            Err(fault) => return Ok(Err(fault)),
        };
        let key = match read_secret(pass, backend, &reference.name, "tls.key")? {
            Ok(v) => v,
            Err(fault) => return Ok(Err(fault)),
        };
        return Ok(keypair(
            pass,
            &reference.name,
            cert.into_bytes(),
            key.into_bytes(),
        ));
    }
    let name = sp_keypair_secret(pass.name());
    let read = |from: ReadFrom| {
        pass.cluster
            .get_typed_from::<Secret>(Some(pass.namespace()), &name, from)
            .map_err(Error::cluster(format!(
                "reading Secret {}",
                pass.key(&name)
            )))
    };
    let existing = match read(ReadFrom::Cache)? {
        Some(secret) => Some(secret),
        None => read(ReadFrom::Server)?,
    };
    let secret = match existing {
        Some(secret) => secret,
        None => match pass.cluster.create_typed(&generated(pass, &name)?) {
            Ok(created) => created,
            Err(e) => {
                let exists = matches!(e, wasm_operator_sdk::Error::Api(ApiError::Conflict(_)));
                match exists
                    .then(|| read(ReadFrom::Server))
                    .transpose()?
                    .flatten()
                {
                    Some(theirs) => theirs,
                    None => {
                        let what = format!("creating Secret {}", pass.key(&name));
                        return Err(Error::cluster(what)(e));
                    }
                }
            }
        },
    };
    let value = |key: &str| {
        secret
            .data
            .as_ref()
            .and_then(|d| d.get(key))
            .map(|v| v.0.clone())
            .filter(|v| !v.is_empty())
    };
    match (value("tls.crt"), value("tls.key")) {
        (Some(cert), Some(key)) => Ok(keypair(pass, &name, cert, key)),
        _ => Ok(Err(Fault::SpKeypairIncomplete {
            secret: pass.key(&name),
        })),
    }
}

/// The keypair of PEM `cert` and `key` from Secret `secret`: the certificate is the first
/// `CERTIFICATE` block (a chain may follow), the key must hold a `... PRIVATE KEY` block.
fn keypair(pass: &Pass<'_>, secret: &str, cert: Vec<u8>, key: Vec<u8>) -> Result<Keypair, Fault> {
    let secret = pass.key(secret);
    let cert_pem = String::from_utf8(cert).unwrap_or_default();
    let Some(cert_der) = first_pem_block(&cert_pem, |label| label == "CERTIFICATE") else {
        return Err(Fault::SpCertificate { secret });
    };
    let key_text = std::str::from_utf8(&key).unwrap_or_default();
    if first_pem_block(key_text, |label| label.ends_with("PRIVATE KEY")).is_none() {
        return Err(Fault::SpKey { secret });
    }
    Ok(Keypair {
        cert_pem,
        key,
        cert_der,
    })
}

/// The content of the first PEM block in `text` whose label `accept`s and which decodes.
fn first_pem_block(text: &str, accept: impl Fn(&str) -> bool) -> Option<Vec<u8>> {
    const BEGIN: &str = "-----BEGIN ";
    let mut rest = text;
    while let Some(at) = rest.find(BEGIN) {
        let block = &rest[at..];
        let label = block[BEGIN.len()..]
            .split("-----")
            .next()
            .unwrap_or_default();
        let end = format!("-----END {label}-----");
        let decoded = block.find(&end).and_then(|e| {
            let pem = &block[..e + end.len()];
            x509_cert::der::pem::decode_vec(pem.as_bytes()).ok()
        });
        match decoded {
            Some((_, der)) if accept(label) => return Some(der),
            _ => rest = &block[BEGIN.len()..],
        }
    }
    None
}

/// A new keypair Secret `name` with a fresh key and certificate.
fn generated(pass: &Pass<'_>, name: &str) -> Result<Secret, Error> {
    let failed = |source: BoxError| Error::SpKeypair {
        what: format!(
            "generating the SAML SP keypair for Secret {}",
            pass.key(name)
        ),
        source,
    };
    let pkcs8 = crypto::generate(KeyAlgorithm::Rsa(2048)).map_err(|e| failed(e.into()))?;
    let (cert_pem, key_pem) =
        self_signed(&pkcs8, &format!("{}-saml-sp", pass.name()), pass.now.0).map_err(failed)?;
    Ok(Secret {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(pass.namespace().to_owned()),
            labels: Some(common_labels(pass.name())),
            owner_references: Some(vec![controller_reference(&pass.owner)]),
            ..Default::default()
        },
        type_: Some("kubernetes.io/tls".to_owned()),
        data: Some(
            [
                ("tls.crt".to_owned(), ByteString(cert_pem.into_bytes())),
                ("tls.key".to_owned(), ByteString(key_pem.into_bytes())),
            ]
            .into(),
        ),
        ..Default::default()
    })
}

/// A certificate for the RSA key `pkcs8` (PKCS#8 DER), self-signed as `CN=<cn>`, valid
/// from an hour before `now` for 10 years; the certificate's and the key's (PKCS#1) PEM.
pub(crate) fn self_signed(
    pkcs8: &[u8],
    cn: &str,
    now: k8s_openapi::jiff::Timestamp,
) -> Result<(String, String), BoxError> {
    let key = rsa::PrivateKey::from_pkcs8_der(pkcs8)?;
    let info = rsa::pkcs8::PrivateKeyInfoRef::from_der(pkcs8)?;
    let pkcs1 = info.private_key.as_bytes();
    let name = Name::from_str(&format!("CN={cn}"))?;
    let mut serial: [u8; 16] = [0; 16];
    getrandom::fill(&mut serial).map_err(|e| format!("drawing a serial number: {e}"))?;
    serial[0] &= 0x7f;
    let validity = Validity::new(
        Time::try_from(at(now.as_second() - 3600)?)?,
        Time::try_from(ten_years_after(now.as_second())?)?,
    );
    let extension = |oid, value: Vec<u8>| -> Result<Extension, BoxError> {
        Ok(Extension {
            extn_id: oid,
            critical: true,
            extn_value: OctetString::new(value)?,
        })
    };
    let usage = KeyUsage(KeyUsages::DigitalSignature | KeyUsages::KeyEncipherment);
    let basic = BasicConstraints {
        ca: false,
        path_len_constraint: None,
    };
    let profile = SelfSigned {
        name,
        extensions: vec![
            extension(KeyUsage::OID, usage.to_der()?)?,
            extension(BasicConstraints::OID, basic.to_der()?)?,
        ],
    };
    let public = SubjectPublicKeyInfoOwned::from_key(&key.to_public_key())?;
    let builder = CertificateBuilder::new(profile, SerialNumber::new(&serial)?, validity, public)?;
    let signer = rsa::pkcs1v15::SigningKey::<rsa::sha2::Sha256>::new(key);
    let certificate = builder.build::<_, rsa::pkcs1v15::Signature>(&signer)?;
    let cert_pem =
        x509_cert::der::pem::encode_string("CERTIFICATE", LineEnding::LF, &certificate.to_der()?)?;
    let key_pem = x509_cert::der::pem::encode_string("RSA PRIVATE KEY", LineEnding::LF, pkcs1)?;
    Ok((cert_pem, key_pem))
}

/// The time `seconds` after the Unix epoch.
fn at(seconds: i64) -> Result<SystemTime, BoxError> {
    let seconds = u64::try_from(seconds).map_err(|_| "a time before 1970")?;
    Ok(SystemTime::UNIX_EPOCH + Duration::from_secs(seconds))
}

/// The same time of day ten calendar years after `seconds` past the epoch; the 29th of
/// February becomes the 1st of March when that year has none (as Go's `AddDate`).
fn ten_years_after(seconds: i64) -> Result<SystemTime, BoxError> {
    let seconds = u64::try_from(seconds).map_err(|_| "a time before 1970")?;
    let now = DateTime::from_unix_duration(Duration::from_secs(seconds))?;
    let (h, m, s) = (now.hour(), now.minutes(), now.seconds());
    let year = now.year() + 10;
    let then = DateTime::new(year, now.month(), now.day(), h, m, s)
        .or_else(|_| DateTime::new(year, 3, 1, h, m, s))?;
    Ok(SystemTime::from(&then))
}

/// A profile writing the one name as subject and issuer, and exactly the extensions given.
struct SelfSigned {
    name: Name,
    extensions: Vec<Extension>,
}

impl BuilderProfile for SelfSigned {
    fn get_issuer(&self, _subject: &Name) -> Name {
        self.name.clone()
    }

    fn get_subject(&self) -> Name {
        self.name.clone()
    }

    fn build_extensions(
        &self,
        _spk: x509_cert::spki::SubjectPublicKeyInfoRef<'_>,
        _issuer_spk: x509_cert::spki::SubjectPublicKeyInfoRef<'_>,
        _tbs: &x509_cert::TbsCertificate,
    ) -> x509_cert::builder::Result<Vec<Extension>> {
        Ok(self.extensions.clone())
    }
}

#[cfg(test)]
#[path = "sp_keypair_tests.rs"]
mod tests;
