//! What the `x509` generator and the certificate sets share: names, serials, key
//! identifiers, extensions, and signing a TBS certificate with a RustCrypto signer.
//!
//! DECISION: certificates are built with x509-cert's builder, not rcgen. rcgen 0.14 without
//! its aws-lc-rs backend has no ECDSA P-521 signature algorithm (its `PKCS_ECDSA_P521_*`
//! statics are behind the `aws_lc_rs` feature and `SignatureAlgorithm` cannot be built from
//! outside), and cfssl signs P-521 certificates with SHA-512. x509-cert takes any RustCrypto
//! signer, so one code path serves RSA and all three curves, and every field the Job's
//! output has (serial, key identifiers, string types, extension order) is set explicitly.

use std::time::SystemTime;

use der::asn1::{Any, OctetString, PrintableStringRef};
use der::oid::{AssociatedOid, ObjectIdentifier};
use der::{Decode as _, Encode, Tag};
use sha1::{Digest as _, Sha1};
use sha2::{Sha256, Sha384, Sha512};
use spki::{EncodePublicKey as _, SubjectPublicKeyInfoOwned};
use x509_cert::Certificate;
use x509_cert::attr::AttributeTypeAndValue;
use x509_cert::builder::profile::BuilderProfile;
use x509_cert::builder::{Builder as _, CertificateBuilder};
use x509_cert::ext::Extension;
use x509_cert::name::{Name, RdnSequence, RelativeDistinguishedName};
use x509_cert::serial_number::SerialNumber;
use x509_cert::time::{Time, Validity};

use crate::keys::PrivateKey;

/// `commonName` (2.5.4.3).
pub(crate) const COMMON_NAME: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.4.3");
/// `organizationName` (2.5.4.10).
pub(crate) const ORGANIZATION: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.4.10");
/// `organizationalUnitName` (2.5.4.11).
pub(crate) const ORGANIZATIONAL_UNIT: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.4.11");

/// Why a certificate could not be built.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    /// DER encoding failed (e.g. a name or SAN that its string type cannot hold).
    #[error("encoding the certificate failed: {0}")]
    Der(#[from] der::Error),
    /// The public key could not be encoded.
    #[error("encoding the public key failed: {0}")]
    PublicKey(#[from] spki::Error),
    /// The builder or the signer failed.
    #[error("signing the certificate failed: {0}")]
    Build(#[from] x509_cert::builder::Error),
    /// The key type cannot sign certificates here.
    #[error("{0} keys do not sign certificates here")]
    UnsupportedKey(&'static str),
    /// A validity bound is beyond what X.509 time holds.
    #[error("the validity period ends beyond the year 9999")]
    TimeOutOfRange,
}

/// How an attribute value of a name is encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NameStrings {
    /// PrintableString when every character is in its set, else UTF8String: Go's
    /// `encoding/asn1` rule, which cfssl's certificates follow.
    PrintableWhenPossible,
    /// UTF8String always: OpenSSL's default `string_mask = utf8only`.
    Utf8,
}

/// Builds a name of one attribute per RDN, in the given order, skipping empty values (as
/// Go's `pkix.Name` does).
pub(crate) fn name(
    attributes: &[(ObjectIdentifier, &str)],
    strings: NameStrings,
) -> Result<Name, CertError> {
    let mut rdns = RdnSequence::default();
    for (oid, value) in attributes.iter().filter(|(_, v)| !v.is_empty()) {
        let value = match strings {
            NameStrings::PrintableWhenPossible if is_printable(value) => {
                Any::encode_from(&PrintableStringRef::new(value)?)?
            }
            _ => Any::new(Tag::Utf8String, value.as_bytes())?,
        };
        let atv = AttributeTypeAndValue { oid: *oid, value };
        rdns.push(RelativeDistinguishedName::try_from(vec![atv])?);
    }
    // A `Name` is built from its DER, the way x509-cert offers without `hazmat`.
    Ok(Name::from_der(&rdns.to_der()?)?)
}

/// Whether Go would encode `s` as a PrintableString: A-Z a-z 0-9 space and `'()+,-./:=?`
/// (Go rejects `*` and `&` when marshalling).
fn is_printable(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b" '()+,-./:=?".contains(&b))
}

/// A serial of 20 random bytes with the top bit clear (cfssl's and OpenSSL's 159 bits).
pub(crate) fn random_serial() -> Result<SerialNumber, CertError> {
    let mut bytes: [u8; 20] = rand::random();
    bytes[0] &= 0x7f;
    Ok(SerialNumber::new(&bytes)?)
}

/// The SubjectPublicKeyInfo of a key's public half.
pub(crate) fn public_key_info(key: &PrivateKey) -> Result<SubjectPublicKeyInfoOwned, CertError> {
    let der = match key {
        PrivateKey::Rsa(k) => k.to_public_key().to_public_key_der()?,
        PrivateKey::P256(k) => k.public_key().to_public_key_der()?,
        PrivateKey::P384(k) => k.public_key().to_public_key_der()?,
        PrivateKey::P521(k) => k.public_key().to_public_key_der()?,
        PrivateKey::Ed25519(k) => k.verifying_key().to_public_key_der()?,
    };
    Ok(SubjectPublicKeyInfoOwned::from_der(der.as_bytes())?)
}

/// The SHA-1 key identifier of RFC 5280 4.2.1.2 (1): the hash of the subjectPublicKey bits.
pub(crate) fn key_identifier(spki: &SubjectPublicKeyInfoOwned) -> Vec<u8> {
    Sha1::digest(spki.subject_public_key.raw_bytes()).to_vec()
}

/// Encodes an extension with an explicit criticality.
pub(crate) fn extension<T: AssociatedOid + Encode>(
    value: &T,
    critical: bool,
) -> Result<Extension, CertError> {
    Ok(Extension {
        extn_id: T::OID,
        critical,
        extn_value: OctetString::new(value.to_der()?)?,
    })
}

/// Converts a time to X.509 time (the builder picks UTCTime before 2050).
pub(crate) fn x509_time(time: SystemTime) -> Result<Time, CertError> {
    Time::try_from(time).map_err(|_| CertError::TimeOutOfRange)
}

/// The digest an RSA signer uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RsaDigest {
    Sha256,
    Sha384,
    Sha512,
}

/// A key that signs certificates, with its signature algorithm fixed.
pub(crate) enum Signer {
    RsaSha256(rsa::pkcs1v15::SigningKey<Sha256>),
    RsaSha384(rsa::pkcs1v15::SigningKey<Sha384>),
    RsaSha512(rsa::pkcs1v15::SigningKey<Sha512>),
    /// ECDSA with SHA-256.
    P256(p256::ecdsa::SigningKey),
    /// ECDSA with SHA-384.
    P384(p384::ecdsa::SigningKey),
    /// ECDSA with SHA-512.
    P521(p521::ecdsa::SigningKey),
}

impl Signer {
    /// A signer for `key`; RSA keys sign with `rsa_digest`, ECDSA keys with their curve's
    /// hash (P-256 SHA-256, P-384 SHA-384, P-521 SHA-512).
    pub(crate) fn new(key: &PrivateKey, rsa_digest: RsaDigest) -> Result<Self, CertError> {
        Ok(match (key, rsa_digest) {
            (PrivateKey::Rsa(k), RsaDigest::Sha256) => {
                Self::RsaSha256(rsa::pkcs1v15::SigningKey::new(k.clone()))
            }
            (PrivateKey::Rsa(k), RsaDigest::Sha384) => {
                Self::RsaSha384(rsa::pkcs1v15::SigningKey::new(k.clone()))
            }
            (PrivateKey::Rsa(k), RsaDigest::Sha512) => {
                Self::RsaSha512(rsa::pkcs1v15::SigningKey::new(k.clone()))
            }
            (PrivateKey::P256(k), _) => Self::P256(k.into()),
            (PrivateKey::P384(k), _) => Self::P384(k.into()),
            (PrivateKey::P521(k), _) => Self::P521(k.into()),
            (PrivateKey::Ed25519(_), _) => return Err(CertError::UnsupportedKey("Ed25519")),
        })
    }
}

/// Everything of a certificate but its signature.
pub(crate) struct TbsSpec {
    pub(crate) serial: SerialNumber,
    pub(crate) subject: Name,
    pub(crate) issuer: Name,
    pub(crate) not_before: SystemTime,
    pub(crate) not_after: SystemTime,
    pub(crate) public_key: SubjectPublicKeyInfoOwned,
    /// In the order they are written.
    pub(crate) extensions: Vec<Extension>,
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

/// Signs `spec` with `signer` and returns the certificate.
pub(crate) fn sign(spec: TbsSpec, signer: &Signer) -> Result<Certificate, CertError> {
    let validity = Validity::new(x509_time(spec.not_before)?, x509_time(spec.not_after)?);
    let profile = Exact {
        subject: spec.subject,
        issuer: spec.issuer,
        extensions: spec.extensions,
    };
    let builder = CertificateBuilder::new(profile, spec.serial, validity, spec.public_key)?;
    let certificate = match signer {
        Signer::RsaSha256(s) => builder.build::<_, rsa::pkcs1v15::Signature>(s),
        Signer::RsaSha384(s) => builder.build::<_, rsa::pkcs1v15::Signature>(s),
        Signer::RsaSha512(s) => builder.build::<_, rsa::pkcs1v15::Signature>(s),
        Signer::P256(s) => builder.build::<_, p256::ecdsa::DerSignature>(s),
        Signer::P384(s) => builder.build::<_, p384::ecdsa::DerSignature>(s),
        Signer::P521(s) => builder.build::<_, p521::ecdsa::DerSignature>(s),
    }?;
    Ok(certificate)
}

/// The PEM of a certificate (`CERTIFICATE`, 64-character lines, LF, trailing newline).
pub(crate) fn certificate_pem(certificate: &Certificate) -> Result<String, CertError> {
    use der::EncodePem as _;
    Ok(certificate.to_pem(der::pem::LineEnding::LF)?)
}

#[cfg(test)]
pub(crate) mod testing {
    //! Checks certificates parsed by x509-parser with RustCrypto verifiers.

    use spki::DecodePublicKey as _;
    use x509_parser::prelude::*;

    /// Asserts that `cert` carries a valid signature of `issuer` under its signature algorithm.
    pub(crate) fn assert_signed_by(cert: &X509Certificate<'_>, issuer: &SubjectPublicKeyInfo<'_>) {
        use rsa::signature::Verifier as _;
        let tbs = cert.tbs_certificate.as_ref();
        let signature = &cert.signature_value.data;
        let algorithm = cert.signature_algorithm.algorithm.to_id_string();
        let verified = match algorithm.as_str() {
            "1.2.840.113549.1.1.11" => rsa_verify::<sha2::Sha256>(issuer.raw, tbs, signature),
            "1.2.840.113549.1.1.12" => rsa_verify::<sha2::Sha384>(issuer.raw, tbs, signature),
            "1.2.840.113549.1.1.13" => rsa_verify::<sha2::Sha512>(issuer.raw, tbs, signature),
            "1.2.840.10045.4.3.2" => p256::ecdsa::VerifyingKey::from_public_key_der(issuer.raw)
                .ok()
                .zip(p256::ecdsa::DerSignature::from_bytes(signature).ok())
                .is_some_and(|(key, sig)| key.verify(tbs, &sig).is_ok()),
            "1.2.840.10045.4.3.3" => p384::ecdsa::VerifyingKey::from_public_key_der(issuer.raw)
                .ok()
                .zip(p384::ecdsa::DerSignature::from_bytes(signature).ok())
                .is_some_and(|(key, sig)| key.verify(tbs, &sig).is_ok()),
            "1.2.840.10045.4.3.4" => p521::ecdsa::VerifyingKey::from_public_key_der(issuer.raw)
                .ok()
                .zip(p521::ecdsa::DerSignature::from_bytes(signature).ok())
                .is_some_and(|(key, sig)| key.verify(tbs, &sig).is_ok()),
            other => panic!("unexpected signature algorithm {other}"),
        };
        assert!(verified, "the signature ({algorithm}) does not verify");
    }

    fn rsa_verify<D>(spki: &[u8], tbs: &[u8], signature: &[u8]) -> bool
    where
        D: sha2::Digest + der::oid::AssociatedOid,
    {
        use rsa::signature::Verifier as _;
        let Ok(key) = rsa::PublicKey::from_public_key_der(spki) else {
            return false;
        };
        let Ok(signature) = rsa::pkcs1v15::Signature::try_from(signature) else {
            return false;
        };
        rsa::pkcs1v15::VerifyingKey::<D>::new(key)
            .verify(tbs, &signature)
            .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use der::Tagged as _;

    use super::*;

    #[test]
    fn names_use_printable_string_exactly_when_go_would() {
        let cases = [
            ("GitLab Helm Chart", Tag::PrintableString),
            ("example.com", Tag::PrintableString),
            ("urn:example:gitlab", Tag::PrintableString),
            ("user@example.com", Tag::Utf8String),
            ("*.example.com", Tag::Utf8String),
            ("a&b", Tag::Utf8String),
            ("Grüße", Tag::Utf8String),
        ];
        for (value, tag) in cases {
            let name =
                name(&[(COMMON_NAME, value)], NameStrings::PrintableWhenPossible).expect("encodes");
            let atv = name.iter().next().expect("one attribute");
            assert_eq!(atv.value.tag(), tag, "{value}");
        }
    }

    #[test]
    fn openssl_style_names_are_utf8() {
        let name = name(&[(COMMON_NAME, "gitlab-issuer")], NameStrings::Utf8).expect("encodes");
        let atv = name.iter().next().expect("one attribute");
        assert_eq!(atv.value.tag(), Tag::Utf8String);
    }

    #[test]
    fn empty_attributes_are_left_out() {
        let name = name(
            &[(ORGANIZATION, ""), (COMMON_NAME, "x")],
            NameStrings::PrintableWhenPossible,
        )
        .expect("encodes");
        assert_eq!(name.iter().count(), 1);
    }

    #[test]
    fn serials_are_positive_and_at_most_20_bytes() {
        for _ in 0..64 {
            let serial = random_serial().expect("serial");
            let bytes = serial.as_bytes();
            assert!(bytes.len() <= 20 && bytes[0] & 0x80 == 0, "{bytes:02x?}");
        }
    }
}
