//! `x509`: a self-signed certificate and its key, as
//! `openssl req -new -newkey rsa:<bits> -subj /CN=<cn> -nodes -x509 -days <days>` writes them
//! with OpenSSL 3's default configuration: X.509 v3, a random 159-bit serial,
//! sha256WithRSAEncryption whatever the size, subject = issuer = CN as UTF8String
//! (`string_mask = utf8only`), validity from now (to the second) for `days` × 24 h, and the
//! `v3_ca` extensions in their order: subject key ID (SHA-1), authority key ID (key ID only),
//! basic constraints CA:TRUE (critical). The key is PKCS#8 `PRIVATE KEY`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use der::asn1::OctetString;
use x509_cert::ext::pkix::{AuthorityKeyIdentifier, BasicConstraints, SubjectKeyIdentifier};

use super::GenerateError;
use crate::cert::{self, CertError, NameStrings, RsaDigest, Signer, TbsSpec};
use crate::entries::X509;
use crate::keys::{self, KeyAlgorithm, KeySource};

/// The certificate PEM and the key PEM of an `x509` generator.
pub(crate) struct SelfSigned {
    pub(crate) certificate: String,
    pub(crate) key: String,
}

/// Issues the self-signed certificate of `x509` at `now`.
pub(crate) fn generate(
    keys: &dyn KeySource,
    x509: &X509,
    now: SystemTime,
) -> Result<SelfSigned, GenerateError> {
    let key = keys::generate(keys, KeyAlgorithm::Rsa(x509.bits))?;
    let public_key = cert::public_key_info(&key)?;
    let key_id = OctetString::new(cert::key_identifier(&public_key)).map_err(CertError::from)?;
    let name = cert::name(&[(cert::COMMON_NAME, &x509.common_name)], NameStrings::Utf8)?;

    let not_before = truncate_to_second(now);
    let not_after = not_before
        .checked_add(Duration::from_secs(u64::from(x509.days) * 86_400))
        .ok_or(CertError::TimeOutOfRange)?;

    let extensions = vec![
        cert::extension(&SubjectKeyIdentifier(key_id.clone()), false)?,
        cert::extension(
            &AuthorityKeyIdentifier {
                key_identifier: Some(key_id),
                authority_cert_issuer: None,
                authority_cert_serial_number: None,
            },
            false,
        )?,
        cert::extension(
            &BasicConstraints {
                ca: true,
                path_len_constraint: None,
            },
            true,
        )?,
    ];
    let spec = TbsSpec {
        serial: cert::random_serial()?,
        subject: name.clone(),
        issuer: name,
        not_before,
        not_after,
        public_key,
        extensions,
    };
    let certificate = cert::sign(spec, &Signer::new(&key, RsaDigest::Sha256)?)?;
    Ok(SelfSigned {
        certificate: cert::certificate_pem(&certificate)?,
        key: super::rsa::pkcs8_pem(&key)?,
    })
}

/// `time` without its fraction of a second.
fn truncate_to_second(time: SystemTime) -> SystemTime {
    let seconds = time
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    UNIX_EPOCH + Duration::from_secs(seconds)
}

#[cfg(test)]
mod tests {
    use x509_parser::der_parser::asn1_rs::Tag;
    use x509_parser::prelude::*;

    use super::*;
    use crate::keys::testing::PooledKeys;

    fn registry() -> X509 {
        X509 {
            common_name: "gitlab-issuer".into(),
            bits: 2048,
            days: 3650,
            cert_key: "registry-auth.crt".into(),
            key_key: "registry-auth.key".into(),
        }
    }

    #[test]
    fn the_certificate_is_what_openssl_req_x509_writes() {
        let now = UNIX_EPOCH + Duration::from_millis(1_790_000_000_750);
        let issued = generate(&PooledKeys, &registry(), now).expect("issues");
        let (_, pem) = parse_x509_pem(issued.certificate.as_bytes()).expect("PEM");
        assert_eq!(pem.label, "CERTIFICATE");
        let cert = pem.parse_x509().expect("X.509");

        assert_eq!(cert.version(), X509Version::V3);
        assert_eq!(
            cert.signature_algorithm.algorithm,
            oid_registry::OID_PKCS1_SHA256WITHRSA
        );
        assert_eq!(cert.subject().to_string(), "CN=gitlab-issuer");
        assert_eq!(cert.issuer().to_string(), "CN=gitlab-issuer");
        let cn = cert.subject().iter_common_name().next().expect("CN");
        assert_eq!(cn.attr_value().header.tag(), Tag::Utf8String);
        assert!(cert.raw_serial().len() <= 20 && cert.raw_serial()[0] & 0x80 == 0);

        let not_before = cert.validity().not_before.timestamp();
        assert_eq!(not_before, 1_790_000_000);
        assert_eq!(
            cert.validity().not_after.timestamp() - not_before,
            3650 * 86_400
        );

        let oids: Vec<String> = cert
            .extensions()
            .iter()
            .map(|e| e.oid.to_id_string())
            .collect();
        assert_eq!(oids, ["2.5.29.14", "2.5.29.35", "2.5.29.19"]);
        let constraints = cert.basic_constraints().expect("valid").expect("present");
        assert!(constraints.critical && constraints.value.ca);
        assert_eq!(constraints.value.path_len_constraint, None);

        let mut ski = None;
        let mut aki = None;
        for extension in cert.extensions() {
            match extension.parsed_extension() {
                ParsedExtension::SubjectKeyIdentifier(id) => ski = Some(id.0.to_vec()),
                ParsedExtension::AuthorityKeyIdentifier(id) => {
                    assert!(id.authority_cert_issuer.is_none());
                    aki = id.key_identifier.as_ref().map(|k| k.0.to_vec());
                }
                _ => {}
            }
        }
        let spki_bits = cert.public_key().subject_public_key.data.to_vec();
        let expected = <sha1::Sha1 as sha1::Digest>::digest(&spki_bits).to_vec();
        assert_eq!(ski.as_deref(), Some(&expected[..]));
        assert_eq!(aki, ski);
        crate::cert::testing::assert_signed_by(&cert, cert.public_key());
    }

    #[test]
    fn the_key_is_pkcs8_and_matches_the_certificate() {
        let issued = generate(&PooledKeys, &registry(), SystemTime::now()).expect("issues");
        assert!(issued.key.starts_with("-----BEGIN PRIVATE KEY-----\n"));
        let key = <rsa::PrivateKey as pkcs8::DecodePrivateKey>::from_pkcs8_pem(&issued.key)
            .expect("PKCS#8");
        let (_, pem) = parse_x509_pem(issued.certificate.as_bytes()).expect("PEM");
        let cert = pem.parse_x509().expect("X.509");
        let public =
            <rsa::PublicKey as spki::EncodePublicKey>::to_public_key_der(&key.to_public_key())
                .expect("encodes");
        assert_eq!(cert.public_key().raw, public.as_bytes());
    }

    #[test]
    fn a_validity_beyond_the_year_9999_fails_instead_of_panicking() {
        let mut x509 = registry();
        x509.days = u32::MAX;
        assert!(generate(&PooledKeys, &x509, SystemTime::now()).is_err());
    }
}
