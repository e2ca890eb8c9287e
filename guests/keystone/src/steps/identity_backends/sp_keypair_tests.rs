#[cfg(not(target_arch = "wasm32"))]
use std::io::Write as _;
#[cfg(not(target_arch = "wasm32"))]
use std::process::{Command, Stdio};

#[cfg(not(target_arch = "wasm32"))]
use rsa::pkcs1::DecodeRsaPrivateKey as _;
#[cfg(not(target_arch = "wasm32"))]
use rsa::pkcs8::DecodePublicKey as _;
#[cfg(not(target_arch = "wasm32"))]
use rsa::signature::Verifier as _;
use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;
#[cfg(not(target_arch = "wasm32"))]
use x509_cert::Certificate;

use super::*;
use crate::testing::{keystone, pass, secret};

/// The SAML backend `corp-saml` with `sp` as its `spec.saml.sp`.
fn backend(sp: Value) -> IdentityBackend {
    serde_json::from_value(json!({
        "metadata": {"name": "corp-saml", "namespace": "ns"},
        "spec": {"keystoneRef": {"name": "ks"}, "type": "SAML",
                 "saml": {"idpEntityID": "urn:idp", "sp": sp}}}))
    .expect("a backend")
}

fn ensured(cluster: &FakeCluster, backend: &IdentityBackend) -> Keypair {
    let pass = pass(cluster, &keystone());
    ensure(&pass, backend).expect("reads").expect("a keypair")
}

/// `openssl <args>` with `input` on stdin; its stdout. Fails the test when openssl is
/// missing or refuses the input.
// openssl runs as a process, which the wasi-run harness (these tests under wasmtime)
// cannot spawn; the native run of the same test checks the certificate with it.
#[cfg(not(target_arch = "wasm32"))]
fn openssl(args: &[&str], input: &str) -> String {
    let mut child = Command::new("openssl")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("openssl is installed");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("writes");
    let out = child.wait_with_output().expect("runs");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("text")
}

#[test]
fn a_generated_keypair_is_created_once_and_reused_by_the_next_pass() {
    let cluster = FakeCluster::new();
    let first = ensured(&cluster, &backend(Value::Null));
    assert_eq!(cluster.write_log(), ["create Secret ns/ks-saml-sp"]);
    let stored = cluster.server("Secret", "ks-saml-sp").expect("created");
    assert_eq!(stored["type"], "kubernetes.io/tls");
    assert_eq!(
        stored["metadata"]["labels"],
        json!({"app.kubernetes.io/instance": "ks", "app.kubernetes.io/managed-by": "keystone-operator",
               "app.kubernetes.io/name": "keystone"})
    );
    let owner = &stored["metadata"]["ownerReferences"][0];
    assert_eq!(
        (owner["uid"].as_str(), owner["controller"].as_bool()),
        (Some("ks-uid"), Some(true))
    );
    let data = cluster.secret_data("ks-saml-sp");
    assert_eq!(data["tls.crt"], first.cert_pem.as_bytes());
    assert_eq!(data["tls.key"], first.key);
    assert!(first.key.starts_with(b"-----BEGIN RSA PRIVATE KEY-----\n"));

    cluster.clear_calls();
    let second = ensured(&cluster, &backend(Value::Null));
    assert!(cluster.write_log().is_empty(), "{:?}", cluster.write_log());
    assert_eq!(
        (second.cert_pem, second.key, second.cert_der),
        (first.cert_pem, first.key, first.cert_der)
    );
}

#[test]
fn a_keypair_the_cache_does_not_show_yet_is_read_from_the_server_not_made_again() {
    let cluster = FakeCluster::new();
    cluster.freeze_cache();
    let first = ensured(&cluster, &backend(Value::Null));
    cluster.clear_calls();
    let second = ensured(&cluster, &backend(Value::Null));
    assert!(cluster.write_log().is_empty(), "{:?}", cluster.write_log());
    assert_eq!(second.cert_pem, first.cert_pem);
}

#[cfg(not(target_arch = "wasm32"))]
#[test]
fn the_generated_certificate_is_a_self_signed_rsa_2048_sp_certificate_for_ten_years() {
    let cluster = FakeCluster::new();
    let mut pass = pass(&cluster, &keystone());
    pass.now = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        "2026-02-28T12:00:00Z".parse().expect("a time"),
    );
    let keypair = ensure(&pass, &backend(Value::Null))
        .expect("reads")
        .expect("a keypair");
    let text = openssl(&["x509", "-noout", "-text"], &keypair.cert_pem);
    for want in [
        "Signature Algorithm: sha256WithRSAEncryption",
        "Issuer: CN=ks-saml-sp",
        "Subject: CN=ks-saml-sp",
        "Not Before: Feb 28 11:00:00 2026 GMT",
        "Not After : Feb 28 12:00:00 2036 GMT",
        "Public-Key: (2048 bit)",
        "X509v3 Key Usage: critical\n                Digital Signature, Key Encipherment",
        "X509v3 Basic Constraints: critical\n                CA:FALSE",
    ] {
        let flat = text.replace(" = ", "=");
        assert!(flat.contains(want), "{want:?} not in:\n{text}");
    }
    let key_modulus = openssl(
        &["rsa", "-noout", "-modulus"],
        &String::from_utf8(keypair.key.clone()).expect("PEM"),
    );
    let cert_modulus = openssl(&["x509", "-noout", "-modulus"], &keypair.cert_pem);
    assert_eq!(key_modulus, cert_modulus, "the key is the certificate's");

    // The signature verifies with the certificate's own key.
    let cert = Certificate::from_der(&keypair.cert_der).expect("DER");
    let spki = cert
        .tbs_certificate()
        .subject_public_key_info()
        .to_der()
        .expect("SPKI");
    let public = rsa::PublicKey::from_public_key_der(&spki).expect("an RSA key");
    let signature = rsa::pkcs1v15::Signature::try_from(cert.signature().raw_bytes()).expect("sig");
    rsa::pkcs1v15::VerifyingKey::<rsa::sha2::Sha256>::new(public)
        .verify(&cert.tbs_certificate().to_der().expect("TBS"), &signature)
        .expect("self-signed");
    let (_, pkcs1) = x509_cert::der::pem::decode_vec(&keypair.key).expect("PEM");
    rsa::PrivateKey::from_pkcs1_der(&pkcs1).expect("a PKCS#1 RSA key");
}

#[test]
fn the_29th_of_february_ends_on_the_1st_of_march_ten_years_later() {
    let leap = "2028-02-29T08:30:00Z"
        .parse::<k8s_openapi::jiff::Timestamp>()
        .expect("a time");
    let end = ten_years_after(leap.as_second()).expect("a time");
    let want = "2038-03-01T08:30:00Z"
        .parse::<k8s_openapi::jiff::Timestamp>()
        .expect("a time");
    let seconds = end
        .duration_since(SystemTime::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    assert_eq!(i64::try_from(seconds).ok(), Some(want.as_second()));
}

/// A `kubernetes.io/tls` Secret `sp-tls` holding a real certificate and its key.
fn tls_secret() -> (Value, String) {
    let (cert, key) = certificate("sp.example.com");
    (
        secret("sp-tls", &[("tls.crt", &cert), ("tls.key", &key)]),
        cert,
    )
}

/// A certificate and its key, as PEM.
fn certificate(cn: &str) -> (String, String) {
    let pkcs8 = crypto::generate(KeyAlgorithm::Rsa(2048)).expect("a key");
    let now = "2026-01-01T00:00:00Z".parse().expect("a time");
    self_signed(&pkcs8, cn, now).expect("a certificate")
}

#[test]
fn a_certificate_secret_ref_supplies_the_keypair_and_nothing_is_generated() {
    let (tls, cert) = tls_secret();
    let cluster = FakeCluster::new().with(tls);
    let got = ensured(
        &cluster,
        &backend(json!({"certificateSecretRef": {"name": "sp-tls"}})),
    );
    assert_eq!(got.cert_pem, cert);
    let (_, der) = x509_cert::der::pem::decode_vec(cert.as_bytes()).expect("PEM");
    assert_eq!(got.cert_der, der);
    assert!(cluster.write_log().is_empty(), "{:?}", cluster.write_log());
    assert_eq!(cluster.server("Secret", "ks-saml-sp"), None);
}

#[test]
fn a_certificate_chain_keeps_the_chain_and_describes_the_first_certificate() {
    let (leaf, key) = certificate("sp.example.com");
    let (ca, _) = certificate("ca.example.com");
    let chain = format!("{leaf}{ca}");
    let cluster =
        FakeCluster::new().with(secret("sp-tls", &[("tls.crt", &chain), ("tls.key", &key)]));
    let got = ensured(
        &cluster,
        &backend(json!({"certificateSecretRef": {"name": "sp-tls"}})),
    );
    assert_eq!(got.cert_pem, chain);
    let (_, leaf_der) = x509_cert::der::pem::decode_vec(leaf.as_bytes()).expect("PEM");
    assert_eq!(got.cert_der, leaf_der);
}

#[test]
fn an_unusable_keypair_is_a_fault_naming_its_secret() {
    let by_ref = backend(json!({"certificateSecretRef": {"name": "sp-tls"}}));
    let (tls, _) = tls_secret();
    let mut incomplete = secret("ks-saml-sp", &[("tls.crt", "x")]);
    incomplete["type"] = json!("kubernetes.io/tls");
    let cases = [
        (
            "valid: the referenced Secret",
            FakeCluster::new().with(tls),
            by_ref.clone(),
            None,
        ),
        (
            "the referenced Secret is missing",
            FakeCluster::new(),
            by_ref.clone(),
            Some("getting Secret ns/sp-tls: not found"),
        ),
        (
            "the referenced Secret lacks tls.key",
            FakeCluster::new().with(secret("sp-tls", &[("tls.crt", "x")])),
            by_ref.clone(),
            Some("key not found in Secret: key \"tls.key\" in Secret ns/sp-tls"),
        ),
        (
            "the referenced certificate is not PEM",
            FakeCluster::new().with(secret("sp-tls", &[("tls.crt", "DER?"), ("tls.key", "k")])),
            by_ref.clone(),
            Some("parsing SP certificate from Secret ns/sp-tls: no CERTIFICATE PEM block found"),
        ),
        (
            "the referenced PEM is a key, not a certificate",
            FakeCluster::new().with(secret(
                "sp-tls",
                &[
                    (
                        "tls.crt",
                        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
                    ),
                    ("tls.key", "k"),
                ],
            )),
            by_ref,
            Some("parsing SP certificate from Secret ns/sp-tls: no CERTIFICATE PEM block found"),
        ),
        (
            "the referenced key is not PEM",
            FakeCluster::new().with(secret(
                "sp-tls",
                &[("tls.crt", &tls_secret().1), ("tls.key", "not a key")],
            )),
            backend(json!({"certificateSecretRef": {"name": "sp-tls"}})),
            Some("parsing SP key from Secret ns/sp-tls: no PRIVATE KEY PEM block found"),
        ),
        (
            "the generated Secret lost its key",
            FakeCluster::new().with(incomplete),
            backend(Value::Null),
            Some("SP keypair Secret ns/ks-saml-sp carries no tls.crt/tls.key"),
        ),
    ];
    for (case, cluster, backend, want) in cases {
        let pass = pass(&cluster, &keystone());
        let got = ensure(&pass, &backend)
            .expect("a fault is not an error")
            .err()
            .map(|f| f.to_string());
        assert_eq!(got.as_deref(), want, "{case}");
    }
}
