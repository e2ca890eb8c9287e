//! An X.509 certificate's shape: every field the Job's table fixes, and none that differs
//! on every issue (the serial's and keys' values, the time of issue itself).

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use x509_parser::prelude::*;

/// When a value was generated: the Unix seconds before and after the call.
#[derive(Debug, Clone, Copy)]
pub struct IssueWindow {
    pub from: i64,
    pub to: i64,
}

impl IssueWindow {
    /// Runs `generate`, recording the window it ran in.
    pub fn around<T>(generate: impl FnOnce() -> T) -> (T, Self) {
        let from = unix_now();
        let value = generate();
        (
            value,
            Self {
                from,
                to: unix_now(),
            },
        )
    }

    /// How `not_before` relates to the time of issue.
    fn not_before(&self, not_before: i64) -> &'static str {
        let rounded = |t: i64| (t + 30).div_euclid(60) * 60;
        if [self.from, self.to]
            .iter()
            .any(|t| rounded(*t) - 300 == not_before)
        {
            "the time of issue rounded to the minute, minus 5 minutes"
        } else if (self.from - 1..=self.to + 1).contains(&not_before) {
            "the time of issue"
        } else {
            "another time"
        }
    }
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs().try_into().unwrap_or(i64::MAX))
}

/// The shape of the DER certificate `der`.
pub fn shape(der: &[u8], window: &IssueWindow) -> Value {
    let cert = match parse_x509_certificate(der) {
        Ok(([], cert)) => cert,
        Ok(_) => return json!("bytes after the certificate"),
        Err(e) => return json!(format!("not a certificate: {e}")),
    };
    let extension = |oid| cert.iter_extensions().find(|e| e.oid == oid);
    let validity = cert.validity();
    let not_before = validity.not_before.timestamp();
    json!({
        "version": cert.version().0 + 1,
        "signature": signature(&cert.signature_algorithm.algorithm.to_id_string()),
        "subject": cert.subject().to_string(),
        "issuer": cert.issuer().to_string(),
        "nameStrings": name_strings(&cert),
        "basicConstraints": cert.basic_constraints().ok().flatten()
            .map(|b| json!({"ca": b.value.ca, "critical": b.critical})),
        "keyUsage": cert.key_usage().ok().flatten().map(|k| json!({
            "critical": k.critical,
            "usages": key_usages(k.value),
        })),
        "extendedKeyUsage": cert.extended_key_usage().ok().flatten().map(|e| json!({
            "critical": e.critical,
            "serverAuth": e.value.server_auth,
            "clientAuth": e.value.client_auth,
        })),
        "subjectAltNames": cert.subject_alternative_name().ok().flatten().map(|s| {
            s.value.general_names.iter().map(general_name).collect::<Vec<_>>()
        }),
        "subjectKeyId": extension(x509_parser::oid_registry::OID_X509_EXT_SUBJECT_KEY_IDENTIFIER)
            .map(|e| match e.parsed_extension() {
                ParsedExtension::SubjectKeyIdentifier(id) if id.0.len() == 20 => json!("20 bytes (SHA-1)"),
                other => json!(format!("{other:?}")),
            }),
        "authorityKeyId": extension(x509_parser::oid_registry::OID_X509_EXT_AUTHORITY_KEY_IDENTIFIER)
            .map(|_| json!("present")),
        "serial": serial(cert.raw_serial()),
        "validityHours": (validity.not_after.timestamp() - not_before) / 3600,
        "validityRemainder": (validity.not_after.timestamp() - not_before) % 3600,
        "notBefore": window.not_before(not_before),
        "publicKey": public_key(&cert),
    })
}

fn signature(oid: &str) -> String {
    match oid {
        "1.2.840.113549.1.1.11" => "sha256WithRSAEncryption".into(),
        "1.2.840.113549.1.1.12" => "sha384WithRSAEncryption".into(),
        "1.2.840.113549.1.1.13" => "sha512WithRSAEncryption".into(),
        "1.2.840.10045.4.3.2" => "ecdsa-with-SHA256".into(),
        "1.2.840.10045.4.3.3" => "ecdsa-with-SHA384".into(),
        "1.2.840.10045.4.3.4" => "ecdsa-with-SHA512".into(),
        "1.3.101.112" => "ED25519".into(),
        other => other.into(),
    }
}

/// The ASN.1 string types of the subject's and issuer's attributes, once each.
fn name_strings(cert: &X509Certificate<'_>) -> Vec<String> {
    let mut types: Vec<String> = cert
        .subject()
        .iter_attributes()
        .chain(cert.issuer().iter_attributes())
        .map(|a| match a.attr_value().tag().0 {
            12 => "UTF8String".to_owned(),
            19 => "PrintableString".to_owned(),
            22 => "IA5String".to_owned(),
            30 => "BMPString".to_owned(),
            other => format!("tag {other}"),
        })
        .collect();
    types.sort();
    types.dedup();
    types
}

fn key_usages(usage: &KeyUsage) -> Vec<&'static str> {
    [
        (usage.digital_signature(), "digitalSignature"),
        (usage.non_repudiation(), "nonRepudiation"),
        (usage.key_encipherment(), "keyEncipherment"),
        (usage.data_encipherment(), "dataEncipherment"),
        (usage.key_agreement(), "keyAgreement"),
        (usage.key_cert_sign(), "keyCertSign"),
        (usage.crl_sign(), "cRLSign"),
    ]
    .into_iter()
    .filter_map(|(set, name)| set.then_some(name))
    .collect()
}

fn general_name(name: &GeneralName<'_>) -> String {
    match name {
        GeneralName::DNSName(n) => format!("DNS:{n}"),
        GeneralName::RFC822Name(n) => format!("email:{n}"),
        GeneralName::URI(n) => format!("URI:{n}"),
        GeneralName::IPAddress(ip) => match <[u8; 4]>::try_from(*ip) {
            Ok(v4) => format!("IP:{}", std::net::Ipv4Addr::from(v4)),
            Err(_) => match <[u8; 16]>::try_from(*ip) {
                Ok(v6) => format!("IP:{}", std::net::Ipv6Addr::from(v6)),
                Err(_) => format!("IP:{ip:?}"),
            },
        },
        other => format!("{other:?}"),
    }
}

/// A serial of 20 random bytes with the top bit clear encodes in at most 20 bytes, its first
/// with the top bit clear (fewer only when its leading bytes happen to be zero).
fn serial(raw: &[u8]) -> &'static str {
    match raw {
        [first, ..] if raw.len() <= 20 && raw.len() >= 16 && first & 0x80 == 0 => {
            "20 random bytes, top bit clear"
        }
        _ => "another serial",
    }
}

fn public_key(cert: &X509Certificate<'_>) -> Value {
    match cert.public_key().parsed() {
        Ok(x509_parser::public_key::PublicKey::RSA(rsa)) => {
            json!({"type": "rsa", "bits": super::bits(rsa.modulus)})
        }
        Ok(x509_parser::public_key::PublicKey::EC(ec)) => match ec.data().len() {
            65 => json!({"type": "ecdsa", "curve": "P-256"}),
            97 => json!({"type": "ecdsa", "curve": "P-384"}),
            133 => json!({"type": "ecdsa", "curve": "P-521"}),
            n => json!(format!("an EC point of {n} bytes")),
        },
        Ok(other) => json!(format!("{other:?}")),
        Err(e) => json!(format!("unreadable: {e}")),
    }
}

/// The facts that tie a certificate set's Secrets together: tls.crt's issuer, authority key
/// ID and key, and the chain. (Its signature is checked by `openssl verify` in the test.)
pub fn set_facts(ca_pem: &[u8], tls_crt: &[u8], tls_key: &[u8], chain: &[u8]) -> Value {
    let der = |pem: &[u8]| {
        super::pem::blocks(pem)
            .ok()
            .and_then(|b| b.into_iter().next())
            .map(|b| b.der)
            .unwrap_or_default()
    };
    let (ca_der, tls_der) = (der(ca_pem), der(tls_crt));
    let (Ok((_, ca)), Ok((_, tls))) = (
        parse_x509_certificate(&ca_der),
        parse_x509_certificate(&tls_der),
    ) else {
        return json!("the CA certificate or tls.crt does not parse");
    };
    let key_id = |cert: &X509Certificate<'_>, subject: bool| {
        cert.iter_extensions()
            .find_map(|e| match e.parsed_extension() {
                ParsedExtension::SubjectKeyIdentifier(id) if subject => Some(id.0.to_vec()),
                ParsedExtension::AuthorityKeyIdentifier(aki) if !subject => {
                    aki.key_identifier.as_ref().map(|id| id.0.to_vec())
                }
                _ => None,
            })
    };
    json!({
        "tlsIssuerIsTheCaSubject": tls.issuer().as_raw() == ca.subject().as_raw(),
        "tlsAuthorityKeyIdIsTheCaSubjectKeyId":
            key_id(&tls, false).is_some() && key_id(&tls, false) == key_id(&ca, true),
        "tlsKeyIsTheKeyOfTlsCrt": public_key_der(tls_key).as_deref() == Some(tls.public_key().raw),
        "chainIsTheCaThenTlsCrtByteForByte": chain == [ca_pem, tls_crt].concat(),
    })
}

/// The SubjectPublicKeyInfo DER of a PKCS#1 or SEC 1 private key PEM.
fn public_key_der(pem: &[u8]) -> Option<Vec<u8>> {
    use pkcs1::DecodeRsaPrivateKey as _;
    use spki::EncodePublicKey as _;
    let block = super::pem::blocks(pem).ok()?.into_iter().next()?;
    let der = &block.der;
    let encoded = if let Ok(key) = rsa::PrivateKey::from_pkcs1_der(der) {
        rsa::PublicKey::from(&key).to_public_key_der()
    } else if let Ok(key) = p256::SecretKey::from_sec1_der(der) {
        key.public_key().to_public_key_der()
    } else if let Ok(key) = p384::SecretKey::from_sec1_der(der) {
        key.public_key().to_public_key_der()
    } else {
        p521::SecretKey::from_sec1_der(der)
            .ok()?
            .public_key()
            .to_public_key_der()
    };
    encoded.ok().map(|d| d.as_bytes().to_vec())
}
