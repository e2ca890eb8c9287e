use serde_json::json;
use wasm_operator_sdk::testing::{FakeCluster, Op};
use wasm_operator_sdk::{ApiError, ObjectRef};

use super::*;
use crate::testing::{condition, keystone_with, owned, pass};

fn the_certificate(cluster: &FakeCluster) -> Option<serde_json::Value> {
    cluster.object(&ObjectRef::of::<Certificate>(Some("ns"), "ks-db-client"))
}

fn stale_certificate() -> serde_json::Value {
    json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
        "metadata": {"name": "ks-db-client", "namespace": "ns"},
        "spec": {"secretName": "ks-db-client", "issuerRef": {"name": "openstack-db-ca-issuer"}}})
}

fn tls(mode: &str) -> serde_json::Value {
    json!({"database": {"tls": {"mode": mode, "caBundleSecretRef": {"name": "ca"},
        "clientCertSecretRef": {"name": "client"}}}})
}

#[test]
fn database_tls_off_deletes_a_managed_certificate_and_is_not_required() {
    for spec in [json!({}), tls("disabled")] {
        let cluster = FakeCluster::new().with(owned(stale_certificate()));
        let mut pass = pass(&cluster, &keystone_with(spec.clone()));
        assert_eq!(run(&mut pass).expect("runs"), None, "{spec}");
        assert_eq!(the_certificate(&cluster), None, "{spec}");
        assert_eq!(
            condition(&pass, DATABASE_TLS_READY),
            (
                "True".into(),
                "NotRequired".into(),
                "Database TLS is not enabled; using plaintext connection".into()
            )
        );
    }
}

#[test]
fn database_tls_off_leaves_a_certificate_of_its_name_the_keystone_does_not_control() {
    let cluster = FakeCluster::new().with(stale_certificate());
    let mut pass = pass(&cluster, &keystone_with(json!({})));
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert!(the_certificate(&cluster).is_some());
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
    assert_eq!(condition(&pass, DATABASE_TLS_READY).1, "NotRequired");
}

#[test]
fn database_tls_off_on_a_cluster_without_cert_manager_deletes_nothing() {
    let cluster = FakeCluster::new().not_serving("certificates");
    let mut pass = pass(&cluster, &keystone_with(json!({})));
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
    assert_eq!(condition(&pass, DATABASE_TLS_READY).1, "NotRequired");
}

#[test]
fn a_failed_kind_probe_is_capability_probe_failed_and_stops_the_pass() {
    let cluster = FakeCluster::new().failing(
        Op::Served,
        "certificates",
        ApiError::Unavailable("discovery is down".into()),
    );
    let mut pass = pass(&cluster, &keystone_with(json!({})));
    let error = run(&mut pass).expect_err("fails");
    assert!(
        error
            .to_string()
            .starts_with("probing the target cluster for the Certificate kind: "),
        "{error}"
    );
    let (status, reason, _) = condition(&pass, DATABASE_TLS_READY);
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "CapabilityProbeFailed")
    );
}

#[test]
fn database_tls_on_without_both_refs_is_missing_certificate_refs_and_an_error() {
    let spec = json!({"database": {"tls": {"mode": "require", "caBundleSecretRef": {"name": ""},
        "clientCertSecretRef": {"name": "client"}}}});
    let cluster = FakeCluster::new();
    let mut pass = pass(&cluster, &keystone_with(spec));
    let error = run(&mut pass).expect_err("fails");
    assert!(
        error
            .to_string()
            .contains("refusing to build an invalid certificate volume")
    );
    assert_eq!(
        condition(&pass, DATABASE_TLS_READY),
        (
            "False".into(),
            "MissingCertificateRefs".into(),
            "Database TLS is enabled but caBundleSecretRef.name and clientCertSecretRef.name must both be set".into()
        )
    );
    assert!(cluster.writes().is_empty());
}

#[test]
fn a_brownfield_database_with_tls_is_externally_managed() {
    let mut spec = tls("verify-full");
    spec["database"]["clusterRef"] = serde_json::Value::Null;
    spec["database"]["host"] = json!("db.example");
    let cluster = FakeCluster::new().with(owned(stale_certificate()));
    let mut pass = pass(&cluster, &keystone_with(spec));
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(the_certificate(&cluster), None);
    assert_eq!(
        condition(&pass, DATABASE_TLS_READY),
        (
            "True".into(),
            "ExternallyManaged".into(),
            "Database TLS uses externally managed client certificate Secret \"client\" (brownfield database)".into()
        )
    );
}

#[test]
fn a_managed_database_with_tls_waits_for_its_certificate_then_reports_it_issued() {
    let cluster = FakeCluster::new();
    let object = keystone_with(tls("require"));
    let mut first = pass(&cluster, &object);
    assert_eq!(run(&mut first).expect("runs"), Some(SECRET_POLLING));
    assert_eq!(
        condition(&first, DATABASE_TLS_READY),
        (
            "False".into(),
            "CertificatePending".into(),
            "Waiting for cert-manager to issue database client Certificate \"ks-db-client\"".into()
        )
    );
    let stored = the_certificate(&cluster).expect("applied");
    assert_eq!(stored["spec"]["commonName"], "ks");
    assert_eq!(stored["spec"]["secretName"], "ks-db-client");
    assert_eq!(
        stored["spec"]["issuerRef"],
        json!({"name": "openstack-db-ca-issuer", "kind": "ClusterIssuer", "group": "cert-manager.io"})
    );
    assert_eq!(
        stored["spec"]["usages"],
        json!(["client auth", "digital signature", "key encipherment"])
    );
    assert_eq!(
        stored["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "keystone-operator"
    );
    assert_eq!(stored["metadata"]["ownerReferences"][0]["uid"], "ks-uid");
    cluster.change("Certificate", "ks-db-client", |c| {
        c["status"] = json!({"conditions": [{"type": "Ready", "status": "True"}]});
    });
    let mut second = pass(&cluster, &object);
    assert_eq!(run(&mut second).expect("runs"), None);
    assert_eq!(
        condition(&second, DATABASE_TLS_READY),
        (
            "True".into(),
            "CertificateIssued".into(),
            "Database client Certificate \"ks-db-client\" issued into Secret \"ks-db-client\""
                .into()
        )
    );
}

#[test]
fn a_refused_certificate_is_certificate_error_and_stops_the_pass() {
    let cluster = FakeCluster::new().failing(
        Op::Apply,
        "ks-db-client",
        ApiError::Invalid("spec.issuerRef: Required value".into()),
    );
    let mut pass = pass(&cluster, &keystone_with(tls("require")));
    let error = run(&mut pass).expect_err("fails");
    assert!(
        error
            .to_string()
            .starts_with("ensuring database client Certificate ns/ks-db-client: "),
        "{error}"
    );
    let (status, reason, message) = condition(&pass, DATABASE_TLS_READY);
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "CertificateError")
    );
    assert!(
        message.contains("spec.issuerRef: Required value"),
        "{message}"
    );
}
