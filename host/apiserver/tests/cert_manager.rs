//! The cert-manager actor: issuers become Ready, Certificates get a Secret with a real
//! certificate that `openssl verify` accepts against the issuer's CA.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use wasm_operator_apiserver::{Actor, NOT_READY_ANNOTATION};

use crate::support::{
    actor_server, condition, get, managers, post, secret_value, send_ok, wait_condition, wait_for,
};

const CM: &str = "/apis/cert-manager.io/v1";
const MERGE: &str = "application/merge-patch+json";

fn issuers(namespace: Option<&str>) -> String {
    match namespace {
        Some(ns) => format!("{CM}/namespaces/{ns}/issuers"),
        None => format!("{CM}/clusterissuers"),
    }
}

fn certificates(namespace: &str) -> String {
    format!("{CM}/namespaces/{namespace}/certificates")
}

async fn create_issuer(client: &kube::Client, namespace: Option<&str>, name: &str, spec: Value) {
    let kind = if namespace.is_some() {
        "Issuer"
    } else {
        "ClusterIssuer"
    };
    let body = json!({"apiVersion": "cert-manager.io/v1", "kind": kind, "metadata": {"name": name}, "spec": spec});
    let created = post(client, &issuers(namespace), body).await;
    assert_eq!(created.status, 201, "{}", created.body);
}

async fn create_certificate(client: &kube::Client, namespace: &str, name: &str, spec: Value) {
    let body = json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": name}, "spec": spec});
    let created = post(client, &certificates(namespace), body).await;
    assert_eq!(created.status, 201, "{}", created.body);
}

/// Waits for the Certificate's Secret to hold a certificate; returns the Secret.
async fn wait_secret(client: &kube::Client, namespace: &str, name: &str) -> Value {
    let path = format!("/api/v1/namespaces/{namespace}/secrets/{name}");
    wait_for(&format!("Secret {namespace}/{name}"), || async {
        let got = get(client, &path).await;
        if secret_value(&got.body, "tls.crt").is_some() {
            Ok(got.body)
        } else {
            Err(got.body.to_string())
        }
    })
    .await
}

/// Writes the Secret's `tls.crt`, `tls.key`, `ca.crt` into `dir`.
fn write_pems(secret: &Value, dir: &Path) {
    for key in ["tls.crt", "tls.key", "ca.crt"] {
        let value = secret_value(secret, key).unwrap_or_else(|| panic!("the Secret has {key}"));
        std::fs::write(dir.join(key), value).expect("write a PEM");
    }
}

/// Runs openssl (installed by `.ci/run`), returning its stdout; panics with its output on
/// failure.
fn openssl(args: &[&str], dir: &Path) -> String {
    let output = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl is on PATH");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "openssl {args:?} failed:\n{text}");
    text
}

#[tokio::test]
async fn a_self_signed_certificate_is_ready_with_a_secret_openssl_verifies_for_its_names() {
    let (_server, client) = actor_server(&[Actor::CertManager]).await;
    create_issuer(&client, Some("default"), "self", json!({"selfSigned": {}})).await;
    let issuer = wait_condition(
        &client,
        &format!("{}/self", issuers(Some("default"))),
        "Ready",
        "True",
    )
    .await;
    assert_eq!(
        condition(&issuer, "Ready").map(|c| c["reason"].clone()),
        Some(json!("IsReady"))
    );
    assert!(
        managers(&issuer).contains(&("cert-manager-issuers".into(), "status".into())),
        "{:?}",
        managers(&issuer)
    );
    create_certificate(
        &client,
        "default",
        "keystone-tls",
        json!({
            "secretName": "keystone-tls",
            "issuerRef": {"name": "self", "kind": "Issuer"},
            "commonName": "keystone",
            "dnsNames": ["keystone.default.svc", "keystone.example.com"],
            "ipAddresses": ["192.0.2.7"],
            "duration": "48h",
            "usages": ["server auth", "digital signature", "key encipherment"],
            "privateKey": {"algorithm": "ECDSA", "size": 256},
        }),
    )
    .await;
    let cert = wait_condition(
        &client,
        &format!("{}/keystone-tls", certificates("default")),
        "Ready",
        "True",
    )
    .await;
    let ready = condition(&cert, "Ready").expect("Ready");
    assert_eq!(ready["reason"], "Ready");
    assert_eq!(
        ready["message"],
        "Certificate is up to date and has not expired"
    );
    assert_eq!(cert["status"]["revision"], 1);
    assert!(cert["status"]["notAfter"].is_string(), "{cert}");
    let secret = wait_secret(&client, "default", "keystone-tls").await;
    assert_eq!(secret["type"], "kubernetes.io/tls");
    let annotations = &secret["metadata"]["annotations"];
    assert_eq!(
        annotations["cert-manager.io/certificate-name"],
        "keystone-tls"
    );
    assert_eq!(annotations["cert-manager.io/issuer-name"], "self");
    assert_eq!(annotations["cert-manager.io/issuer-kind"], "Issuer");
    assert_eq!(
        annotations["cert-manager.io/issuer-group"],
        "cert-manager.io"
    );
    assert_eq!(annotations["cert-manager.io/common-name"], "keystone");
    assert_eq!(
        annotations["cert-manager.io/alt-names"],
        "keystone.default.svc,keystone.example.com"
    );
    assert!(
        managers(&secret).contains(&("cert-manager-certificates-issuing".into(), String::new())),
        "{:?}",
        managers(&secret)
    );

    let dir = tempfile::tempdir().expect("a temp dir");
    write_pems(&secret, dir.path());
    openssl(&["verify", "-CAfile", "ca.crt", "tls.crt"], dir.path());
    let text = openssl(&["x509", "-in", "tls.crt", "-noout", "-text"], dir.path());
    for wanted in [
        "Subject: CN = keystone",
        "DNS:keystone.default.svc",
        "DNS:keystone.example.com",
        "IP Address:192.0.2.7",
        "TLS Web Server Authentication",
        "Digital Signature, Key Encipherment",
        "ASN1 OID: prime256v1",
    ] {
        assert!(
            text.contains(wanted),
            "the certificate lacks {wanted:?}:\n{text}"
        );
    }
    let days = openssl(
        &["x509", "-in", "tls.crt", "-noout", "-checkend", "172000"],
        dir.path(),
    );
    assert!(days.contains("will not expire"), "{days}");
    let expired = Command::new("openssl")
        .args(["x509", "-in", "tls.crt", "-noout", "-checkend", "173400"])
        .current_dir(dir.path())
        .output()
        .expect("openssl runs");
    assert!(
        !expired.status.success(),
        "a 48h certificate outlives 48h10m"
    );
    let from_key = openssl(&["pkey", "-in", "tls.key", "-pubout"], dir.path());
    let from_cert = openssl(&["x509", "-in", "tls.crt", "-noout", "-pubkey"], dir.path());
    assert_eq!(from_key, from_cert, "tls.key is the certificate's key");
}

#[tokio::test]
async fn a_ca_cluster_issuer_signs_certificates_that_openssl_verifies_against_its_ca() {
    let (_server, client) = actor_server(&[Actor::CertManager]).await;
    let ns = post(
        &client,
        "/api/v1/namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "cert-manager"}}),
    )
    .await;
    assert!(ns.status.is_success() || ns.status == 409, "{}", ns.body);
    create_issuer(&client, None, "bootstrap", json!({"selfSigned": {}})).await;
    create_certificate(
        &client,
        "cert-manager",
        "openstack-db-ca",
        json!({
            "secretName": "openstack-db-ca",
            "issuerRef": {"name": "bootstrap", "kind": "ClusterIssuer", "group": "cert-manager.io"},
            "commonName": "openstack-db-ca",
            "isCA": true,
            "privateKey": {"algorithm": "RSA", "size": 2048},
        }),
    )
    .await;
    wait_condition(
        &client,
        &format!("{}/openstack-db-ca", certificates("cert-manager")),
        "Ready",
        "True",
    )
    .await;
    create_issuer(
        &client,
        None,
        "openstack-db-ca-issuer",
        json!({"ca": {"secretName": "openstack-db-ca"}}),
    )
    .await;
    let issuer = wait_condition(
        &client,
        &format!("{}/openstack-db-ca-issuer", issuers(None)),
        "Ready",
        "True",
    )
    .await;
    let ready = condition(&issuer, "Ready").expect("Ready");
    assert_eq!(
        (ready["reason"].as_str(), ready["message"].as_str()),
        (Some("KeyPairVerified"), Some("Signing CA verified"))
    );
    assert!(
        managers(&issuer).contains(&("cert-manager-clusterissuers".into(), "status".into())),
        "{:?}",
        managers(&issuer)
    );

    create_certificate(&client, "default", "keystone-db-client", json!({
        "secretName": "keystone-db-client",
        "issuerRef": {"name": "openstack-db-ca-issuer", "kind": "ClusterIssuer", "group": "cert-manager.io"},
        "commonName": "keystone",
        "usages": ["client auth", "digital signature", "key encipherment"],
    })).await;
    wait_condition(
        &client,
        &format!("{}/keystone-db-client", certificates("default")),
        "Ready",
        "True",
    )
    .await;
    let secret = wait_secret(&client, "default", "keystone-db-client").await;
    let ca_secret = wait_secret(&client, "cert-manager", "openstack-db-ca").await;
    assert_eq!(
        secret_value(&secret, "ca.crt"),
        secret_value(&ca_secret, "tls.crt"),
        "ca.crt is the CA's certificate"
    );
    let dir = tempfile::tempdir().expect("a temp dir");
    write_pems(&secret, dir.path());
    openssl(
        &[
            "verify",
            "-CAfile",
            "ca.crt",
            "-purpose",
            "sslclient",
            "tls.crt",
        ],
        dir.path(),
    );
    let text = openssl(&["x509", "-in", "tls.crt", "-noout", "-text"], dir.path());
    for wanted in [
        "Issuer: CN = openstack-db-ca",
        "Subject: CN = keystone",
        "TLS Web Client Authentication",
        "rsaEncryption",
        "Public-Key: (2048 bit)",
    ] {
        assert!(
            text.contains(wanted),
            "the certificate lacks {wanted:?}:\n{text}"
        );
    }
    let chain = String::from_utf8(secret_value(&secret, "tls.crt").expect("tls.crt")).expect("PEM");
    assert_eq!(
        chain.matches("BEGIN CERTIFICATE").count(),
        2,
        "tls.crt is the certificate and its CA"
    );
    // Against another CA the same check fails: the verification above is a real one.
    openssl(
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "other.key",
            "-out",
            "other.crt",
            "-subj",
            "/CN=openstack-db-ca",
            "-days",
            "1",
        ],
        dir.path(),
    );
    let other = Command::new("openssl")
        .args(["verify", "-CAfile", "other.crt", "tls.crt"])
        .current_dir(dir.path())
        .output()
        .expect("openssl runs");
    assert!(
        !other.status.success(),
        "a certificate verifies against an unrelated CA"
    );
}

#[tokio::test]
async fn a_ca_issuer_without_its_secret_is_not_ready_until_the_secret_exists() {
    let (_server, client) = actor_server(&[Actor::CertManager]).await;
    create_issuer(
        &client,
        Some("default"),
        "ca",
        json!({"ca": {"secretName": "missing-ca"}}),
    )
    .await;
    let path = format!("{}/ca", issuers(Some("default")));
    let issuer = wait_condition(&client, &path, "Ready", "False").await;
    let ready = condition(&issuer, "Ready").expect("Ready");
    assert_eq!(ready["reason"], "ErrGetKeyPair");
    let message = ready["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("Error getting keypair for CA issuer")
            && message.contains("missing-ca"),
        "{message}"
    );
    create_issuer(&client, Some("default"), "self", json!({"selfSigned": {}})).await;
    create_certificate(&client, "default", "missing-ca", json!({
        "secretName": "missing-ca", "issuerRef": {"name": "self"}, "commonName": "ca", "isCA": true,
    })).await;
    let issuer = wait_condition(&client, &path, "Ready", "True").await;
    assert_eq!(
        condition(&issuer, "Ready").map(|c| c["reason"].clone()),
        Some(json!("KeyPairVerified"))
    );
}

#[tokio::test]
async fn the_not_ready_annotation_keeps_an_issuer_and_its_certificates_waiting() {
    let (_server, client) = actor_server(&[Actor::CertManager]).await;
    let body = json!({"apiVersion": "cert-manager.io/v1", "kind": "Issuer",
        "metadata": {"name": "held", "annotations": {NOT_READY_ANNOTATION: "held for the test"}},
        "spec": {"selfSigned": {}}});
    assert_eq!(
        post(&client, &issuers(Some("default")), body).await.status,
        201
    );
    let path = format!("{}/held", issuers(Some("default")));
    let issuer = wait_condition(&client, &path, "Ready", "False").await;
    assert_eq!(
        condition(&issuer, "Ready").map(|c| c["message"].clone()),
        Some(json!("held for the test"))
    );
    create_certificate(
        &client,
        "default",
        "waiting",
        json!({"secretName": "waiting", "issuerRef": {"name": "held"}, "dnsNames": ["w.example"]}),
    )
    .await;
    let cert = wait_condition(
        &client,
        &format!("{}/waiting", certificates("default")),
        "Issuing",
        "True",
    )
    .await;
    let ready = condition(&cert, "Ready").expect("Ready");
    assert_eq!(
        (ready["status"].as_str(), ready["reason"].as_str()),
        (Some("False"), Some("DoesNotExist"))
    );
    assert_eq!(
        get(&client, "/api/v1/namespaces/default/secrets/waiting")
            .await
            .status,
        404
    );
    send_ok(
        &client,
        "PATCH",
        &path,
        MERGE,
        json!({"metadata": {"annotations": {NOT_READY_ANNOTATION: null}}}),
    )
    .await;
    wait_condition(&client, &path, "Ready", "True").await;
    wait_condition(
        &client,
        &format!("{}/waiting", certificates("default")),
        "Ready",
        "True",
    )
    .await;
    let secret = wait_secret(&client, "default", "waiting").await;
    let dir = tempfile::tempdir().expect("a temp dir");
    write_pems(&secret, dir.path());
    openssl(&["verify", "-CAfile", "ca.crt", "tls.crt"], dir.path());
}

#[tokio::test]
async fn a_certificate_whose_key_cannot_be_made_reports_issuing_failed_naming_the_key() {
    let (_server, client) = actor_server(&[Actor::CertManager]).await;
    create_issuer(&client, Some("default"), "self", json!({"selfSigned": {}})).await;
    create_certificate(
        &client,
        "default",
        "ed",
        json!({
            "secretName": "ed", "issuerRef": {"name": "self"}, "dnsNames": ["ed.example"],
            "privateKey": {"algorithm": "Ed25519"},
        }),
    )
    .await;
    let cert = wait_condition(
        &client,
        &format!("{}/ed", certificates("default")),
        "Issuing",
        "False",
    )
    .await;
    let issuing = condition(&cert, "Issuing").expect("Issuing");
    assert_eq!(issuing["reason"], "Failed");
    let message = issuing["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("The certificate request has failed to complete and will be retried")
            && message.contains("unsupported private key: algorithm Ed25519"),
        "{message}"
    );
    assert_eq!(
        condition(&cert, "Ready").map(|c| c["status"].clone()),
        Some(json!("False"))
    );
    assert_eq!(
        get(&client, "/api/v1/namespaces/default/secrets/ed")
            .await
            .status,
        404
    );
}
