use std::time::{Duration, UNIX_EPOCH};

use serde_json::{Value, json};
use x509_parser::der_parser::asn1_rs::Tag;
use x509_parser::prelude::*;
use x509_parser::public_key::PublicKey;

use super::*;
use crate::api::PlanFailure;
use crate::keys::testing::{NoKeys, PooledKeys};
use crate::secret::testing::SecretBuilder;

const CA_NAME: &str = "demo-wildcard-tls-ca";
const TLS_NAME: &str = "demo-wildcard-tls";
const CHAIN_NAME: &str = "demo-wildcard-tls-chain";
const CA_KEY: &str = "cfssl_ca";
const CHAIN_KEY: &str = "gitlab.example.com.crt";

/// The chart's certificate entry with another algorithm, size and domain.
fn entry(algorithm: &str, size: u32, domain: &str) -> Value {
    let mut entry: Value = serde_json::from_str(include_str!(
        "../../tests/data/chart-defaults-certificate.json"
    ))
    .expect("fixture");
    entry["authority"]["algorithm"] = json!(algorithm);
    entry["authority"]["keySize"] = json!(size);
    entry["domain"] = json!(domain);
    entry
}

/// A request for a set.
#[derive(Clone)]
struct Request {
    entry: Value,
    ca: Option<SecretBuilder>,
    tls: Option<SecretBuilder>,
    chain: Option<SecretBuilder>,
    ready_units: Vec<String>,
    generate: bool,
}

impl Request {
    fn new(entry: Value) -> Self {
        Self {
            entry,
            ca: None,
            tls: None,
            chain: None,
            ready_units: Vec::new(),
            generate: true,
        }
    }

    fn chart() -> Self {
        Self::new(entry("ecdsa", 256, "example.com"))
    }

    fn ca(mut self, secret: SecretBuilder) -> Self {
        self.ca = Some(secret);
        self
    }

    fn tls(mut self, secret: SecretBuilder) -> Self {
        self.tls = Some(secret);
        self
    }

    fn chain(mut self, secret: SecretBuilder) -> Self {
        self.chain = Some(secret);
        self
    }

    fn ready(mut self) -> Self {
        self.ready_units = vec![CERTIFICATE_SET_UNIT.to_owned()];
        self
    }

    fn without_generate(mut self) -> Self {
        self.generate = false;
        self
    }

    fn request(&self) -> CertificatesRequest {
        CertificatesRequest {
            certificate: self.entry.to_string(),
            ca_secret: self.ca.as_ref().map(SecretBuilder::json),
            tls_secret: self.tls.as_ref().map(SecretBuilder::json),
            chain_secret: self.chain.as_ref().map(SecretBuilder::json),
            ready_units: self.ready_units.clone(),
            generate: self.generate,
        }
    }

    fn plan_at(
        &self,
        keys: &dyn KeySource,
        now: SystemTime,
    ) -> Result<CertificatesPlan, PlanError> {
        plan_certificates_at(&self.request(), keys, now)
    }

    fn plan(&self) -> CertificatesPlan {
        self.plan_at(&PooledKeys, SystemTime::now()).expect("plans")
    }
}

fn ca_secret() -> SecretBuilder {
    SecretBuilder::new(CA_NAME)
}

fn tls_secret() -> SecretBuilder {
    SecretBuilder::new(TLS_NAME).typed("kubernetes.io/tls")
}

fn chain_secret() -> SecretBuilder {
    SecretBuilder::new(CHAIN_NAME)
}

fn added(plan: &CertificatesPlan) -> Vec<Vec<&str>> {
    plan.secrets
        .iter()
        .map(|s| s.add.iter().map(|e| e.key.as_str()).collect())
        .collect()
}

fn value<'p>(plan: &'p CertificatesPlan, secret: usize, key: &str) -> &'p [u8] {
    &plan.secrets[secret]
        .add
        .iter()
        .find(|e| e.key == key)
        .expect("added")
        .value
}

fn nothing_added(plan: &CertificatesPlan) -> bool {
    plan.secrets.iter().all(|s| s.add.is_empty())
}

#[test]
fn a_new_set_is_issued_as_ca_tls_chain_and_is_ready() {
    let plan = Request::chart().plan();
    assert_eq!(plan.action, CertificateAction::Issue);
    let names: Vec<&str> = plan.secrets.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, [CA_NAME, TLS_NAME, CHAIN_NAME]);
    assert_eq!(
        added(&plan),
        [vec![CA_KEY], vec!["tls.crt", "tls.key"], vec![CHAIN_KEY]]
    );
    let types: Vec<&str> = plan
        .secrets
        .iter()
        .map(|s| s.secret_type.as_str())
        .collect();
    assert_eq!(types, ["Opaque", "kubernetes.io/tls", "Opaque"]);
    assert!(plan.secrets.iter().all(|s| s.ready && s.reports.is_empty()));
    assert_eq!(plan.secrets[TLS].declared_units, [CERTIFICATE_SET_UNIT]);
    assert_eq!(plan.secrets[TLS].next_ready_units, [CERTIFICATE_SET_UNIT]);
    assert!(plan.secrets[CA].next_ready_units.is_empty());
    assert!(plan.secrets[CHAIN].next_ready_units.is_empty());

    let chain = [value(&plan, CA, CA_KEY), value(&plan, TLS, "tls.crt")].concat();
    assert_eq!(
        value(&plan, CHAIN, CHAIN_KEY),
        chain,
        "the chain is CA then tls.crt"
    );
}

#[test]
fn a_set_is_issued_into_existing_secrets_that_hold_none_of_its_keys() {
    let plan = Request::chart()
        .ca(ca_secret().with("other", "x"))
        .tls(tls_secret().typed("Opaque"))
        .plan();
    assert_eq!(plan.action, CertificateAction::Issue);
    assert_eq!(plan.secrets[TLS].secret_type, "Opaque");
    assert_eq!(
        plan.secrets[TLS].type_kept,
        Some(("Opaque".to_owned(), "kubernetes.io/tls".to_owned()))
    );
    assert!(plan.secrets.iter().all(|s| s.ready));
}

#[test]
fn without_generate_a_new_set_is_planned_as_issue_and_adds_nothing() {
    let plan = Request::chart()
        .without_generate()
        .plan_at(&NoKeys, SystemTime::now())
        .expect("plans without keys");
    assert_eq!(plan.action, CertificateAction::Issue);
    assert!(nothing_added(&plan));
    assert!(
        plan.secrets
            .iter()
            .all(|s| !s.ready && s.reports.is_empty())
    );
}

#[test]
fn a_missing_chain_is_derived_byte_for_byte_also_after_the_set_was_ready() {
    for ready in [false, true] {
        let mut request = Request::chart()
            .ca(ca_secret().with(CA_KEY, "CA-PEM\n"))
            .tls(
                tls_secret()
                    .with("tls.crt", "TLS-PEM\n")
                    .with("tls.key", "KEY"),
            );
        if ready {
            request = request.ready();
        }
        let plan = request.plan_at(&NoKeys, SystemTime::now()).expect("plans");
        assert_eq!(
            plan.action,
            CertificateAction::DeriveChain,
            "ready: {ready}"
        );
        assert_eq!(added(&plan), [vec![], vec![], vec![CHAIN_KEY]]);
        assert_eq!(value(&plan, CHAIN, CHAIN_KEY), b"CA-PEM\nTLS-PEM\n");
        assert!(plan.secrets.iter().all(|s| s.ready));
    }
}

#[test]
fn an_empty_ca_certificate_or_tls_crt_is_kept_and_the_chain_is_reported() {
    let cases = [
        ("an empty CA certificate", "", "TLS"),
        ("an empty tls.crt", "CA", ""),
    ];
    for (name, ca, crt) in cases {
        let plan = Request::chart()
            .ca(ca_secret().with(CA_KEY, ca))
            .tls(tls_secret().with("tls.crt", crt).with("tls.key", "KEY"))
            .plan();
        assert_eq!(plan.action, CertificateAction::Report, "{name}");
        assert!(nothing_added(&plan), "{name}");
        assert_eq!(plan.secrets[CHAIN].reports.len(), 1, "{name}");
        assert!(plan.secrets.iter().all(|s| !s.ready));
    }
}

#[test]
fn every_other_partial_set_is_reported_on_the_tls_secret_and_gains_nothing() {
    let full_ca = || ca_secret().with(CA_KEY, "CA");
    let full_tls = || tls_secret().with("tls.crt", "C").with("tls.key", "K");
    let full_chain = || chain_secret().with(CHAIN_KEY, "CHAIN");
    let cases = [
        (
            "only the CA, once ready",
            Request::chart().ready().ca(full_ca()),
        ),
        ("only the chain", Request::chart().chain(full_chain())),
        (
            "the CA missing",
            Request::chart().tls(full_tls()).chain(full_chain()),
        ),
        (
            "tls.key missing",
            Request::chart()
                .ca(full_ca())
                .tls(tls_secret().with("tls.crt", "C"))
                .chain(full_chain()),
        ),
        (
            "tls.crt missing, chain missing",
            Request::chart()
                .ca(full_ca())
                .tls(tls_secret().with("tls.key", "K")),
        ),
        ("a ready set that is gone", Request::chart().ready()),
        (
            "a ready set whose Secrets exist without its keys",
            Request::chart()
                .ready()
                .ca(ca_secret())
                .tls(tls_secret())
                .chain(chain_secret()),
        ),
    ];
    for (name, request) in cases {
        let plan = request.plan_at(&NoKeys, SystemTime::now()).expect(name);
        assert_eq!(plan.action, CertificateAction::Report, "{name}");
        assert!(nothing_added(&plan), "{name}");
        assert_eq!(plan.secrets[TLS].reports.len(), 1, "{name}");
        assert!(plan.secrets[CA].reports.is_empty() && plan.secrets[CHAIN].reports.is_empty());
        assert!(plan.secrets.iter().all(|s| !s.ready), "{name}");
        assert_eq!(
            plan.secrets[TLS].next_ready_units, request.ready_units,
            "{name}: the TLS Secret keeps the readyUnits it had"
        );
    }
}

#[test]
fn an_issuance_stopped_after_the_ca_write_is_reported_with_the_key_to_delete() {
    let cases = [
        ("the TLS and chain Secrets missing", Request::chart()),
        (
            "the TLS and chain Secrets existing without their keys",
            Request::chart().tls(tls_secret()).chain(chain_secret()),
        ),
    ];
    for (name, request) in cases {
        let plan = request
            .ca(ca_secret().with(CA_KEY, "CA"))
            .plan_at(&NoKeys, SystemTime::now())
            .expect(name);
        assert_eq!(plan.action, CertificateAction::Report, "{name}");
        assert!(nothing_added(&plan), "{name}");
        let [report] = plan.secrets[TLS].reports.as_slice() else {
            panic!("{name}: one report on the TLS Secret: {:?}", plan.secrets);
        };
        let ca = &plan.secrets[CA].name;
        for said in [
            "an issuance stopped after writing the CA".to_owned(),
            format!("delete key {CA_KEY} from Secret {ca}"),
            "the next pass issues a new set".to_owned(),
        ] {
            assert!(report.contains(&said), "{name}: {report:?} says {said:?}");
        }
        assert!(plan.secrets.iter().all(|s| !s.ready), "{name}");
    }
}

#[test]
fn an_existing_set_is_never_reissued_or_checked() {
    let plan = Request::new(entry("ed25519", 0, "example.com"))
        .ca(ca_secret().with(CA_KEY, "expired or not even PEM"))
        .tls(tls_secret().with("tls.crt", "x").with("tls.key", "y"))
        .chain(chain_secret().with(CHAIN_KEY, "whatever"))
        .plan_at(&NoKeys, SystemTime::now())
        .expect("plans");
    assert_eq!(plan.action, CertificateAction::None);
    assert!(nothing_added(&plan));
    assert!(plan.secrets.iter().all(|s| s.ready));
    assert_eq!(plan.secrets[TLS].next_ready_units, [CERTIFICATE_SET_UNIT]);
}

#[test]
fn the_clock_is_read_only_when_a_set_is_issued() {
    let new = Request::new(entry("ecdsa", 256, "example.com"));
    let existing = new
        .clone()
        .ca(ca_secret().with(CA_KEY, "pem"))
        .tls(tls_secret().with("tls.crt", "pem").with("tls.key", "pem"))
        .chain(chain_secret().with(CHAIN_KEY, "pem"));
    let derived = existing.clone().chain(chain_secret());
    let cases = [
        ("a new set is issued", new, true),
        ("an existing set", existing, false),
        ("a chain derived", derived, false),
    ];
    for (name, request, reads) in cases {
        let clock_reads = std::cell::Cell::new(0);
        let clock = || {
            clock_reads.set(clock_reads.get() + 1);
            SystemTime::now()
        };
        plan_certificates_with_clock(&request.request(), &PooledKeys, &clock).expect(name);
        assert_eq!(clock_reads.get() > 0, reads, "{name}");
    }
}

#[test]
fn an_immutable_secret_lacking_a_key_is_reported_and_the_set_gains_nothing() {
    let plan = Request::chart().ca(ca_secret().immutable()).plan();
    assert_eq!(plan.action, CertificateAction::Report);
    assert!(nothing_added(&plan));
    assert_eq!(
        plan.secrets[CA].reports,
        [format!("Secret {CA_NAME}: is immutable and lacks {CA_KEY}")]
    );

    let plan = Request::chart()
        .ca(ca_secret().with(CA_KEY, "CA"))
        .tls(tls_secret().with("tls.crt", "C").with("tls.key", "K"))
        .chain(chain_secret().immutable())
        .plan();
    assert_eq!(plan.action, CertificateAction::Report);
    assert_eq!(plan.secrets[CHAIN].reports.len(), 1);
}

#[test]
fn a_secret_of_the_set_over_1_mib_is_reported() {
    let big = vec![b'x'; crate::MAX_SECRET_BYTES - 2];
    let plan = Request::chart()
        .ca(ca_secret().with(CA_KEY, "CA"))
        .tls(tls_secret().with("tls.crt", "C").with("tls.key", "K"))
        .chain(chain_secret().with("padding", big))
        .plan();
    assert_eq!(plan.action, CertificateAction::Report);
    assert!(plan.secrets[CHAIN].reports[0].contains("1048576"));
    assert!(nothing_added(&plan));
}

#[test]
fn refused_algorithms_fail_with_cfssls_reasons_even_without_generate() {
    let cases = [
        ("rsa", 1024, "RSA key is too weak"),
        ("rsa", 2047, "RSA key is too weak"),
        ("rsa", 8193, "RSA key size too large"),
        ("rsa", 8194, "RSA key size too large"),
        ("ecdsa", 224, "invalid curve"),
        ("ecdsa", 512, "invalid curve"),
        (
            "ed25519",
            0,
            "ed25519 is refused: Chrome and Firefox do not support",
        ),
        ("dsa", 2048, "invalid algorithm"),
    ];
    for (algorithm, size, reason) in cases {
        let error = Request::new(entry(algorithm, size, "example.com"))
            .without_generate()
            .plan_at(&NoKeys, SystemTime::now())
            .expect_err(reason);
        assert_eq!(error.subject, TLS_NAME);
        assert!(
            error.message().starts_with(reason),
            "{algorithm} {size}: {error}"
        );
    }
}

#[test]
fn invalid_entries_fail_the_plan() {
    let mut same_secret = entry("rsa", 2048, "example.com");
    same_secret["chainSecret"] = json!(CA_NAME);
    let mut no_name = entry("rsa", 2048, "example.com");
    no_name["tlsSecret"] = json!("");
    let mut no_domain = entry("rsa", 2048, "example.com");
    no_domain["domain"] = json!("");
    let mut bad_ca_key = entry("rsa", 2048, "example.com");
    bad_ca_key["caKey"] = json!("a/b");
    let mut bad_chain_key = entry("rsa", 2048, "example.com");
    bad_chain_key["chainKey"] = json!("..");
    // Keys can be had: only validation stands between these entries and a plan.
    let valid =
        Request::new(entry("rsa", 2048, "example.com")).plan_at(&PooledKeys, SystemTime::now());
    assert_eq!(
        valid.expect("the valid row plans").action,
        CertificateAction::Issue
    );
    for (name, entry, fragment) in [
        (
            "one Secret twice",
            same_secret,
            "must be three different Secrets",
        ),
        ("an empty Secret name", no_name, "a Secret name is empty"),
        ("no domain", no_domain, "domain is empty"),
        (
            "a bad caKey",
            bad_ca_key,
            r#"key "a/b" is not a valid Secret key"#,
        ),
        (
            "a bad chainKey",
            bad_chain_key,
            r#"key ".." is not a valid Secret key"#,
        ),
    ] {
        let error = Request::new(entry)
            .plan_at(&PooledKeys, SystemTime::now())
            .expect_err(name);
        assert!(
            matches!(error.cause, PlanFailure::Entry(_)),
            "{name}: {error:?}"
        );
        assert!(
            error.message().contains(fragment),
            "{name}: {}",
            error.message()
        );
    }
    let request = CertificatesRequest {
        certificate: "{".into(),
        ..CertificatesRequest::default()
    };
    let error = plan_certificates(&request, &PooledKeys).expect_err("not JSON");
    assert!(
        matches!(error.cause, PlanFailure::Entry(EntryError::Decode(_))),
        "{error:?}"
    );
}

#[test]
fn the_validity_starts_at_the_time_of_issue_rounded_to_the_minute_minus_5_minutes() {
    // 2026-09-30 04:11:06, 04:13:40 and 04:13:30 UTC.
    let day = 1_790_726_400;
    let at = |h: u64, m: u64, s: u64| UNIX_EPOCH + Duration::from_secs(day + h * 3600 + m * 60 + s);
    let cases = [
        (at(4, 11, 6), at(4, 6, 0)),
        (at(4, 13, 40), at(4, 9, 0)),
        (at(4, 13, 30), at(4, 9, 0)),
        (at(4, 13, 29) + Duration::from_millis(999), at(4, 8, 0)),
    ];
    for (now, start) in cases {
        assert_eq!(issue::not_before(now), start);
    }
}

/// Parses a PEM certificate.
fn certificate(pem: &[u8]) -> X509Certificate<'static> {
    let (_, pem) = parse_x509_pem(pem).expect("PEM");
    let der: &'static [u8] = Box::leak(pem.contents.into_boxed_slice());
    let (_, cert) = X509Certificate::from_der(der).expect("X.509");
    cert
}

fn extension_oids(cert: &X509Certificate<'_>) -> Vec<String> {
    cert.extensions()
        .iter()
        .map(|e| e.oid.to_id_string())
        .collect()
}

fn key_ids(cert: &X509Certificate<'_>) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
    let (mut ski, mut aki) = (None, None);
    for extension in cert.extensions() {
        match extension.parsed_extension() {
            ParsedExtension::SubjectKeyIdentifier(id) => ski = Some(id.0.to_vec()),
            ParsedExtension::AuthorityKeyIdentifier(id) => {
                aki = id.key_identifier.as_ref().map(|k| k.0.to_vec());
            }
            _ => {}
        }
    }
    (ski, aki)
}

fn sha1_of_key(cert: &X509Certificate<'_>) -> Vec<u8> {
    <sha1::Sha1 as sha1::Digest>::digest(&cert.public_key().subject_public_key.data).to_vec()
}

#[test]
fn issued_certificates_have_the_structure_cfssl_gives_them() {
    let cases = [
        (
            "rsa",
            2048,
            "1.2.840.113549.1.1.11",
            "-----BEGIN RSA PRIVATE KEY-----",
        ),
        (
            "rsa",
            3072,
            "1.2.840.113549.1.1.12",
            "-----BEGIN RSA PRIVATE KEY-----",
        ),
        (
            "rsa",
            4096,
            "1.2.840.113549.1.1.13",
            "-----BEGIN RSA PRIVATE KEY-----",
        ),
        (
            "ecdsa",
            256,
            "1.2.840.10045.4.3.2",
            "-----BEGIN EC PRIVATE KEY-----",
        ),
        (
            "ecdsa",
            384,
            "1.2.840.10045.4.3.3",
            "-----BEGIN EC PRIVATE KEY-----",
        ),
        (
            "ecdsa",
            521,
            "1.2.840.10045.4.3.4",
            "-----BEGIN EC PRIVATE KEY-----",
        ),
    ];
    let now = UNIX_EPOCH + Duration::from_secs(1_790_741_466);
    for (algorithm, size, signature, key_label) in cases {
        let name = format!("{algorithm} {size}");
        let plan = Request::new(entry(algorithm, size, "example.com"))
            .plan_at(&PooledKeys, now)
            .expect("issues");
        let ca = certificate(value(&plan, CA, CA_KEY));
        let tls = certificate(value(&plan, TLS, "tls.crt"));

        for cert in [&ca, &tls] {
            assert_eq!(cert.version(), X509Version::V3, "{name}");
            assert_eq!(
                cert.signature_algorithm.algorithm.to_id_string(),
                signature,
                "{name}"
            );
            let serial = cert.raw_serial();
            assert!(serial.len() <= 20 && serial[0] & 0x80 == 0, "{name}");
            assert_eq!(
                cert.validity().not_before.timestamp(),
                1_790_741_160,
                "{name}"
            );
            for atv in cert.subject().iter_attributes() {
                assert_eq!(
                    atv.attr_value().header.tag(),
                    Tag::PrintableString,
                    "{name}"
                );
            }
            crate::cert::testing::assert_signed_by(cert, ca.public_key());
        }

        assert_eq!(
            ca.subject().to_string(),
            "O=gitlab, OU=demo, CN=GitLab Helm Chart"
        );
        assert_eq!(ca.issuer(), ca.subject());
        assert_eq!(
            extension_oids(&ca),
            ["2.5.29.15", "2.5.29.19", "2.5.29.14"],
            "{name}"
        );
        let usage = ca.key_usage().expect("valid").expect("present");
        assert!(usage.critical && usage.value.key_cert_sign() && usage.value.crl_sign());
        assert_eq!(
            usage.value.flags, 0b110_0000,
            "{name}: only cert sign and CRL sign"
        );
        let constraints = ca.basic_constraints().expect("valid").expect("present");
        assert!(constraints.critical && constraints.value.ca);
        assert_eq!(constraints.value.path_len_constraint, None);
        let (ca_ski, ca_aki) = key_ids(&ca);
        assert_eq!(ca_ski.as_deref(), Some(&sha1_of_key(&ca)[..]));
        assert_eq!(ca_aki, None, "the CA has no authority key ID");
        let ca_days = ca.validity().not_after.timestamp() - ca.validity().not_before.timestamp();
        assert_eq!(ca_days, 43_800 * 3600);

        assert_eq!(tls.subject().to_string(), "CN=example.com");
        assert_eq!(tls.issuer(), ca.subject());
        assert_eq!(
            extension_oids(&tls),
            [
                "2.5.29.15",
                "2.5.29.37",
                "2.5.29.19",
                "2.5.29.14",
                "2.5.29.35",
                "2.5.29.17"
            ],
            "{name}"
        );
        let usage = tls.key_usage().expect("valid").expect("present");
        assert!(usage.critical, "{name}");
        assert!(usage.value.digital_signature() && usage.value.key_encipherment());
        assert!(usage.value.key_cert_sign(), "{name}: also for ECDSA");
        assert_eq!(usage.value.flags, 0b10_0101);
        let extended = tls.extended_key_usage().expect("valid").expect("present");
        assert!(!extended.critical && extended.value.server_auth);
        assert!(extended.value.other.is_empty() && !extended.value.client_auth);
        let constraints = tls.basic_constraints().expect("valid").expect("present");
        assert!(constraints.critical && !constraints.value.ca);
        let (tls_ski, tls_aki) = key_ids(&tls);
        assert_eq!(tls_ski.as_deref(), Some(&sha1_of_key(&tls)[..]));
        assert_eq!(
            tls_aki, ca_ski,
            "the wildcard's authority key ID is the CA's key ID"
        );
        let sans = tls
            .subject_alternative_name()
            .expect("valid")
            .expect("present");
        assert!(!sans.critical);
        assert_eq!(
            sans.value.general_names,
            [
                GeneralName::DNSName("example.com"),
                GeneralName::DNSName("*.example.com")
            ]
        );
        let tls_days = tls.validity().not_after.timestamp() - tls.validity().not_before.timestamp();
        assert_eq!(tls_days, 8_760 * 3600);

        let key = std::str::from_utf8(value(&plan, TLS, "tls.key")).expect("PEM");
        assert!(key.starts_with(key_label), "{name}: {key:.40}");
        assert!(key.ends_with("-----\n"));
        assert_ne!(ca.public_key().raw, tls.public_key().raw, "two keys");
        assert_key_matches(key, &tls);
    }
}

/// Asserts that a traditional PEM key is the private half of `cert`'s public key.
fn assert_key_matches(pem: &str, cert: &X509Certificate<'_>) {
    use pkcs1::DecodeRsaPrivateKey as _;
    use spki::EncodePublicKey as _;
    let public = if pem.contains("RSA PRIVATE KEY") {
        rsa::PrivateKey::from_pkcs1_pem(pem)
            .expect("PKCS#1")
            .to_public_key()
            .to_public_key_der()
    } else if let Ok(key) = p256::SecretKey::from_sec1_pem(pem) {
        key.public_key().to_public_key_der()
    } else if let Ok(key) = p384::SecretKey::from_sec1_pem(pem) {
        key.public_key().to_public_key_der()
    } else {
        p521::SecretKey::from_sec1_pem(pem)
            .expect("SEC 1")
            .public_key()
            .to_public_key_der()
    };
    assert_eq!(public.expect("encodes").as_bytes(), cert.public_key().raw);
}

#[test]
fn the_san_of_each_kind_of_domain_is_the_kind_go_gives_it() {
    let cases: [(&str, Vec<GeneralName<'static>>); 4] = [
        (
            "192.0.2.10",
            vec![
                GeneralName::DNSName("*.192.0.2.10"),
                GeneralName::IPAddress(&[192, 0, 2, 10]),
            ],
        ),
        (
            "user@example.com",
            vec![
                GeneralName::RFC822Name("user@example.com"),
                GeneralName::RFC822Name("*.user@example.com"),
            ],
        ),
        (
            "urn:example:gitlab",
            vec![
                GeneralName::DNSName("*.urn:example:gitlab"),
                GeneralName::URI("urn:example:gitlab"),
            ],
        ),
        (
            "gitlab.example.com",
            vec![
                GeneralName::DNSName("gitlab.example.com"),
                GeneralName::DNSName("*.gitlab.example.com"),
            ],
        ),
    ];
    for (domain, expected) in cases {
        let plan = Request::new(entry("ecdsa", 256, domain)).plan();
        let tls = certificate(value(&plan, TLS, "tls.crt"));
        let sans = tls
            .subject_alternative_name()
            .expect("valid")
            .expect("present");
        assert_eq!(sans.value.general_names, expected, "{domain}");
        let cn = tls.subject().iter_common_name().next().expect("CN");
        let tag = if domain.contains('@') {
            Tag::Utf8String
        } else {
            Tag::PrintableString
        };
        assert_eq!(cn.attr_value().header.tag(), tag, "{domain}");
    }
}

#[test]
fn the_signature_digest_follows_the_rsa_key_size() {
    use crate::cert::RsaDigest;
    let cases = [
        (2048, RsaDigest::Sha256),
        (2049, RsaDigest::Sha256),
        (3071, RsaDigest::Sha256),
        (3072, RsaDigest::Sha384),
        (4095, RsaDigest::Sha384),
        (4096, RsaDigest::Sha512),
        (8192, RsaDigest::Sha512),
    ];
    for (bits, digest) in cases {
        assert_eq!(issue::rsa_digest(bits), digest, "{bits}");
    }
}

#[test]
fn odd_rsa_sizes_are_issued() {
    let plan = Request::new(entry("rsa", 2049, "example.com")).plan();
    let tls = certificate(value(&plan, TLS, "tls.crt"));
    let key = tls.public_key().parsed().expect("RSA");
    let PublicKey::RSA(rsa) = key else {
        panic!("RSA")
    };
    let modulus: Vec<u8> = rsa
        .modulus
        .iter()
        .copied()
        .skip_while(|&b| b == 0)
        .collect();
    let bits = modulus.len() * 8 - modulus[0].leading_zeros() as usize;
    assert_eq!(bits, 2049);
}
