//! Keys and certificates as cert-manager issues them: keys from `wasm-operator-keygen`,
//! certificates built and signed with x509-cert.
//!
//! DECISION: built here with x509-cert rather than moved out of secretgen: secretgen's
//! `cert.rs` is tied to its `PrivateKey` and `KeySource` (the planner's host-or-native key
//! source); the part shared (sign a TBS with a RustCrypto signer) is small.

use std::net::IpAddr;
use std::time::{Duration, SystemTime};

use der::asn1::{Ia5String, OctetString};
use der::oid::{AssociatedOid, ObjectIdentifier};
use der::{Decode as _, DecodePem as _, Encode, EncodePem as _};
use sha1::{Digest as _, Sha1};
use x509_cert::Certificate;
use x509_cert::builder::profile::BuilderProfile;
use x509_cert::builder::{Builder as _, CertificateBuilder};
use x509_cert::ext::Extension;
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::{
    AuthorityKeyIdentifier, BasicConstraints, ExtendedKeyUsage, KeyUsage, KeyUsages,
    SubjectAltName, SubjectKeyIdentifier,
};
use x509_cert::name::Name;
use x509_cert::serial_number::SerialNumber;
use x509_cert::time::{Time, Validity};

pub(crate) use super::keys::Key;

/// Why a key or certificate could not be made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum X509Error {
    #[error("unsupported private key: {0}")]
    UnsupportedKey(String),
    #[error("generating the private key failed: {0}")]
    Key(#[from] wasm_operator_keygen::KeyError),
    #[error("the private key cannot be decoded: {0}")]
    Decode(String),
    #[error("encoding the certificate failed: {0}")]
    Der(#[from] der::Error),
    #[error("encoding the public key failed: {0}")]
    PublicKey(#[from] spki::Error),
    #[error("signing the certificate failed: {0}")]
    Build(#[from] x509_cert::builder::Error),
    #[error("invalid {field} {value:?}")]
    Invalid { field: &'static str, value: String },
}

/// The certificate `spec` of a cert-manager Certificate asks for.
pub(crate) struct Request<'a> {
    pub common_name: Option<&'a str>,
    pub dns_names: Vec<&'a str>,
    pub ip_addresses: Vec<&'a str>,
    pub uris: Vec<&'a str>,
    pub emails: Vec<&'a str>,
    pub organizations: Vec<&'a str>,
    pub duration: Duration,
    pub usages: Vec<&'a str>,
    pub is_ca: bool,
}

/// The issuer of a certificate: itself (selfSigned) or a CA's certificate and key.
pub(crate) enum Signer<'a> {
    SelfSigned,
    Ca {
        certificate: &'a Certificate,
        key: &'a Key,
    },
}

/// Issues the certificate `request` asks for, for `key`, signed by `signer`.
pub(crate) fn issue(
    request: &Request<'_>,
    key: &Key,
    signer: &Signer<'_>,
) -> Result<Certificate, X509Error> {
    let public = key.public_key_info()?;
    let subject_key_id =
        OctetString::new(Sha1::digest(public.subject_public_key.raw_bytes()).to_vec())?;
    let subject = subject(request)?;
    let (issuer, issuer_key_id, signing_key) = match signer {
        Signer::SelfSigned => (subject.clone(), subject_key_id.clone(), key),
        Signer::Ca { certificate, key } => {
            let tbs = &certificate.tbs_certificate();
            let ca_public = tbs.subject_public_key_info();
            let id =
                OctetString::new(Sha1::digest(ca_public.subject_public_key.raw_bytes()).to_vec())?;
            (tbs.subject().clone(), id, *key)
        }
    };
    let mut extensions = vec![extension(&key_usage(request)?, true)?];
    let eku = extended_key_usages(request)?;
    if !eku.is_empty() {
        extensions.push(extension(&ExtendedKeyUsage(eku), false)?);
    }
    extensions.push(extension(
        &BasicConstraints {
            ca: request.is_ca,
            path_len_constraint: None,
        },
        true,
    )?);
    extensions.push(extension(&SubjectKeyIdentifier(subject_key_id), false)?);
    if matches!(signer, Signer::Ca { .. }) {
        extensions.push(extension(
            &AuthorityKeyIdentifier {
                key_identifier: Some(issuer_key_id),
                authority_cert_issuer: None,
                authority_cert_serial_number: None,
            },
            false,
        )?);
    }
    let names = general_names(request)?;
    if !names.is_empty() {
        // RFC 5280 4.2.1.6: critical when the subject is empty.
        extensions.push(extension(
            &SubjectAltName(names),
            request.common_name.is_none() && request.organizations.is_empty(),
        )?);
    }
    let now = SystemTime::now();
    let validity = Validity::new(time(now)?, time(now + request.duration)?);
    let mut serial: [u8; 20] = rand::random();
    serial[0] &= 0x7f;
    let profile = Exact {
        subject,
        issuer,
        extensions,
    };
    let builder = CertificateBuilder::new(profile, SerialNumber::new(&serial)?, validity, public)?;
    let certificate = match signing_key {
        Key::Rsa(k) => builder.build::<_, rsa::pkcs1v15::Signature>(&rsa::pkcs1v15::SigningKey::<
            sha2::Sha256,
        >::new(k.clone())),
        Key::P256(k) => {
            builder.build::<_, p256::ecdsa::DerSignature>(&p256::ecdsa::SigningKey::from(k))
        }
        Key::P384(k) => {
            builder.build::<_, p384::ecdsa::DerSignature>(&p384::ecdsa::SigningKey::from(k))
        }
        Key::P521(k) => {
            builder.build::<_, p521::ecdsa::DerSignature>(&p521::ecdsa::SigningKey::from(k))
        }
    }?;
    Ok(certificate)
}

/// Parses a PEM certificate (the first of a bundle).
pub(crate) fn parse_certificate(pem: &str) -> Result<Certificate, X509Error> {
    Ok(Certificate::from_pem(pem.as_bytes())?)
}

/// A certificate as PEM.
pub(crate) fn certificate_pem(certificate: &Certificate) -> Result<String, X509Error> {
    Ok(certificate.to_pem(der::pem::LineEnding::LF)?)
}

fn subject(request: &Request<'_>) -> Result<Name, X509Error> {
    let mut parts = Vec::new();
    for org in &request.organizations {
        parts.push(format!("O={}", escape(org)));
    }
    if let Some(cn) = request.common_name {
        parts.push(format!("CN={}", escape(cn)));
    }
    if parts.is_empty() {
        // An empty subject: the SANs carry the names.
        return Ok(Name::from_der(&[0x30, 0x00])?);
    }
    // RFC 4514 strings list the most specific RDN first.
    parts.reverse();
    let text = parts.join(",");
    text.parse::<Name>().map_err(|_| X509Error::Invalid {
        field: "subject",
        value: text,
    })
}

fn escape(value: &str) -> String {
    value
        .chars()
        .flat_map(|c| {
            if ",+\"\\<>;=".contains(c) {
                vec!['\\', c]
            } else {
                vec![c]
            }
        })
        .collect()
}

fn key_usage(request: &Request<'_>) -> Result<KeyUsage, X509Error> {
    let mut usage = KeyUsage(Default::default());
    let usages = if request.usages.is_empty() {
        vec!["digital signature", "key encipherment"]
    } else {
        request.usages.clone()
    };
    for name in usages {
        usage.0 |= match name {
            "signing" | "digital signature" => KeyUsages::DigitalSignature,
            "content commitment" => KeyUsages::NonRepudiation,
            "key encipherment" => KeyUsages::KeyEncipherment,
            "key agreement" => KeyUsages::KeyAgreement,
            "data encipherment" => KeyUsages::DataEncipherment,
            "cert sign" => KeyUsages::KeyCertSign,
            "crl sign" => KeyUsages::CRLSign,
            "encipher only" => KeyUsages::EncipherOnly,
            "decipher only" => KeyUsages::DecipherOnly,
            _ => continue,
        };
    }
    if request.is_ca {
        usage.0 |= KeyUsages::KeyCertSign;
    }
    if usage.0.is_empty() {
        // Only extended usages named: cert-manager's default key usages.
        usage.0 |= KeyUsages::DigitalSignature;
        usage.0 |= KeyUsages::KeyEncipherment;
    }
    Ok(usage)
}

fn extended_key_usages(request: &Request<'_>) -> Result<Vec<ObjectIdentifier>, X509Error> {
    let oid = |s: &str| {
        ObjectIdentifier::new(s).map_err(|_| X509Error::Invalid {
            field: "usage",
            value: s.to_owned(),
        })
    };
    let mut out = Vec::new();
    for usage in &request.usages {
        let id = match *usage {
            "server auth" => "1.3.6.1.5.5.7.3.1",
            "client auth" => "1.3.6.1.5.5.7.3.2",
            "code signing" => "1.3.6.1.5.5.7.3.3",
            "email protection" | "s/mime" => "1.3.6.1.5.5.7.3.4",
            "ipsec end system" => "1.3.6.1.5.5.7.3.5",
            "ipsec tunnel" => "1.3.6.1.5.5.7.3.6",
            "ipsec user" => "1.3.6.1.5.5.7.3.7",
            "timestamping" => "1.3.6.1.5.5.7.3.8",
            "ocsp signing" => "1.3.6.1.5.5.7.3.9",
            "any" => "2.5.29.37.0",
            _ => continue,
        };
        out.push(oid(id)?);
    }
    Ok(out)
}

fn general_names(request: &Request<'_>) -> Result<Vec<GeneralName>, X509Error> {
    let mut names = Vec::new();
    for dns in &request.dns_names {
        names.push(GeneralName::DnsName(Ia5String::new(dns)?));
    }
    for email in &request.emails {
        names.push(GeneralName::Rfc822Name(Ia5String::new(email)?));
    }
    for ip in &request.ip_addresses {
        let parsed: IpAddr = ip.parse().map_err(|_| X509Error::Invalid {
            field: "ipAddresses",
            value: (*ip).to_owned(),
        })?;
        let bytes = match parsed {
            IpAddr::V4(v4) => v4.octets().to_vec(),
            IpAddr::V6(v6) => v6.octets().to_vec(),
        };
        names.push(GeneralName::IpAddress(OctetString::new(bytes)?));
    }
    for uri in &request.uris {
        names.push(GeneralName::UniformResourceIdentifier(Ia5String::new(uri)?));
    }
    Ok(names)
}

fn extension<T: AssociatedOid + Encode>(value: &T, critical: bool) -> Result<Extension, X509Error> {
    Ok(Extension {
        extn_id: T::OID,
        critical,
        extn_value: OctetString::new(value.to_der()?)?,
    })
}

fn time(at: SystemTime) -> Result<Time, X509Error> {
    Time::try_from(at).map_err(|_| X509Error::Invalid {
        field: "duration",
        value: "beyond the year 9999".into(),
    })
}

/// A profile that writes exactly the names and extensions it is given.
struct Exact {
    subject: Name,
    issuer: Name,
    extensions: Vec<Extension>,
}

impl BuilderProfile for Exact {
    fn get_issuer(&self, _subject: &Name) -> Name {
        self.issuer.clone()
    }

    fn get_subject(&self) -> Name {
        self.subject.clone()
    }

    fn build_extensions(
        &self,
        _spk: spki::SubjectPublicKeyInfoRef<'_>,
        _issuer_spk: spki::SubjectPublicKeyInfoRef<'_>,
        _tbs: &x509_cert::TbsCertificate,
    ) -> x509_cert::builder::Result<Vec<Extension>> {
        Ok(self.extensions.clone())
    }
}

/// Whether `key` is the private half of `certificate`'s public key.
pub(crate) fn key_matches(key: &Key, certificate: &Certificate) -> bool {
    let Ok(public) = key.public_key_info() else {
        return false;
    };
    let theirs = certificate.tbs_certificate().subject_public_key_info();
    public.subject_public_key == theirs.subject_public_key
}
