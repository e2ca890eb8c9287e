//! The condition reasons of facts §1.7 that steps 1–9 set on a fault or a choice, each
//! reached end to end in a namespace of its own on one cluster. The reasons a healthy
//! Keystone passes through on its way to Ready are checked by the convergence test.

use serde_json::{Value, json};
use wasm_operator_apiserver::Actor;

use wasm_operator_e2e::current_condition as condition;

use crate::harness::{ACTORS, Harness, keystone_in};

/// One namespace's Keystone and what it should reach.
struct Row {
    namespace: &'static str,
    /// Fixtures left out ([`crate::harness::fixtures`]).
    without: &'static [&'static str],
    /// Objects created in the namespace before the Keystone.
    objects: fn(&str) -> Vec<Value>,
    /// Top-level spec fields of the Keystone.
    spec: fn() -> Value,
    /// How Jobs of the namespace end: `(job, outcome, message)`.
    jobs: &'static [(&'static str, &'static str, &'static str)],
    condition: &'static str,
    reason: &'static str,
    /// A part of the condition's message.
    message: &'static str,
}

fn none(_: &str) -> Vec<Value> {
    Vec::new()
}

fn no_spec() -> Value {
    json!({})
}

fn rows() -> Vec<Row> {
    vec![
        Row {
            namespace: "no-db-secret",
            without: &["ks-db"],
            objects: none,
            spec: no_spec,
            jobs: &[],
            condition: "SecretsReady",
            reason: "WaitingForDBCredentials",
            message: "Database credentials ExternalSecret no-db-secret/ks-db not found yet",
        },
        Row {
            namespace: "no-admin-secret",
            without: &["ks-admin"],
            objects: none,
            spec: no_spec,
            jobs: &[],
            condition: "SecretsReady",
            reason: "WaitingForAdminCredentials",
            message: "Admin credentials ExternalSecret no-admin-secret/ks-admin not found yet",
        },
        Row {
            namespace: "store-unready",
            without: &[],
            objects: |ns| {
                vec![
                    json!({"apiVersion": "external-secrets.io/v1", "kind": "SecretStore",
                    "metadata": {"name": "vault", "namespace": ns,
                        "annotations": {wasm_operator_apiserver::NOT_READY_ANNOTATION: "true"}},
                    "spec": {"provider": {"vault": {"server": "http://openbao:8200",
                                                    "path": "kv"}}}}),
                ]
            },
            spec: || json!({"secretStoreRef": {"kind": "SecretStore", "name": "vault"}}),
            jobs: &[],
            condition: "SecretsReady",
            reason: "SecretStoreNotReady",
            message: "SecretStore \"vault\" is not ready; upstream secret backend unreachable",
        },
        Row {
            namespace: "remote",
            without: &[],
            objects: none,
            spec: || json!({"targetClusterRef": {"name": "edge"}}),
            jobs: &[],
            condition: "SecretsReady",
            reason: "TargetClusterUnavailable",
            message: "target cluster \"edge\" is not registered",
        },
        Row {
            namespace: "brownfield-tls",
            without: &[],
            objects: none,
            spec: || {
                json!({"database": {"host": "db.example.com", "database": "keystone",
                    "secretRef": {"name": "ks-db"},
                    "tls": {"mode": "require", "caBundleSecretRef": {"name": "db-ca"},
                            "clientCertSecretRef": {"name": "db-client"}}}})
            },
            jobs: &[],
            condition: "DatabaseTLSReady",
            reason: "ExternallyManaged",
            message: "externally managed client certificate Secret \"db-client\"",
        },
        Row {
            namespace: "managed-tls",
            without: &[],
            objects: none,
            spec: || {
                json!({"database": {"clusterRef": {"name": "maria"}, "database": "keystone",
                    "secretRef": {"name": "ks-db"},
                    "tls": {"mode": "verify-full", "caBundleSecretRef": {"name": "ks-db-client"},
                            "clientCertSecretRef": {"name": "ks-db-client"}}}})
            },
            jobs: &[],
            condition: "DatabaseTLSReady",
            reason: "CertificateIssued",
            message: "Database client Certificate \"ks-db-client\" issued",
        },
        Row {
            namespace: "config-error",
            without: &[],
            objects: none,
            spec: || json!({"policyOverrides": {"configMapRef": {"name": "no-such-policy"}}}),
            jobs: &[],
            condition: "SecretsReady",
            reason: "ConfigError",
            message: "no-such-policy",
        },
        Row {
            namespace: "owned-key",
            without: &[],
            objects: none,
            spec: || json!({"extraConfig": {"database": {"connection": "sqlite://"}}}),
            jobs: &[],
            condition: "ExtraConfigHealthy",
            reason: "OwnedKeysOverridden",
            message: "database.connection",
        },
        Row {
            namespace: "network-policy",
            without: &[],
            objects: none,
            spec: || {
                json!({"networkPolicy": {"ingress": [
                    {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "gw"}}}]}})
            },
            jobs: &[],
            condition: "NetworkPolicyReady",
            reason: "NetworkPolicyReady",
            message: "",
        },
        Row {
            namespace: "cluster-unready",
            without: &["maria"],
            objects: |ns| {
                vec![
                    json!({"apiVersion": "k8s.mariadb.com/v1alpha1", "kind": "MariaDB",
                    "metadata": {"name": "maria", "namespace": ns,
                        "annotations": {wasm_operator_apiserver::NOT_READY_ANNOTATION: "true"}},
                    "spec": {"replicas": 1}}),
                ]
            },
            spec: no_spec,
            jobs: &[],
            condition: "DatabaseReady",
            reason: "ClusterNotReady",
            message: "MariaDB cluster \"maria\" is not ready",
        },
        Row {
            namespace: "db-sync-fails",
            without: &[],
            objects: none,
            spec: no_spec,
            jobs: &[("ks-db-sync", "Fail", "sqlalchemy: access denied")],
            condition: "DatabaseReady",
            reason: "DBSyncFailed",
            message: "db_sync job failed",
        },
        Row {
            namespace: "schema-drift",
            without: &[],
            objects: none,
            spec: no_spec,
            jobs: &[("ks-schema-check", "Fail", "pending migrations")],
            condition: "DatabaseReady",
            reason: "SchemaDriftDetected",
            message: "schema-check job failed",
        },
        Row {
            namespace: "policy-fails",
            without: &[],
            objects: none,
            spec: || json!({"policyOverrides": {"rules": {"identity:get_user": "rule:nobody"}}}),
            jobs: &[(
                "ks-policy-validation",
                "Fail",
                "Unknown rule \"nobody\" in identity:get_user",
            )],
            condition: "PolicyValidReady",
            reason: "PolicyValidationFailed",
            message: "Policy validation failed: Unknown rule \"nobody\" in identity:get_user",
        },
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fault_and_choice_of_steps_one_to_nine_reaches_its_condition_reason() {
    let mut actors = ACTORS.to_vec();
    actors.push(Actor::CertManager);
    let h = Harness::start_with(&actors).await;
    h.cluster
        .create(
            json!({"apiVersion": "cert-manager.io/v1", "kind": "ClusterIssuer",
            "metadata": {"name": "openstack-db-ca-issuer"}, "spec": {"selfSigned": {}}}),
        )
        .await;
    let rows = rows();
    for row in &rows {
        h.seed(row.namespace, row.without).await;
        for object in (row.objects)(row.namespace) {
            h.cluster.create(object).await;
        }
        if !row.jobs.is_empty() {
            h.job_outcomes(row.namespace, row.jobs).await;
        }
        h.cluster
            .create(keystone_in(row.namespace, (row.spec)()))
            .await;
    }
    for row in &rows {
        let object = h
            .condition_in(row.namespace, row.condition, row.reason)
            .await;
        let reached = condition(&object, row.condition).expect("the condition");
        let message = reached["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(row.message),
            "{}: {} {}: {message}",
            row.namespace,
            row.condition,
            row.reason
        );
        assert_eq!(
            condition(&object, "Ready").map(|c| c["status"].clone()),
            Some(json!("False")),
            "{}",
            row.namespace
        );
    }
    // On its way to the issued certificate the managed one waited for cert-manager.
    assert!(
        h.reasons
            .saw("managed-tls", "DatabaseTLSReady", "CertificatePending")
    );
    // A failed step stops the pass: no Deployment is built past it.
    for namespace in ["db-sync-fails", "schema-drift", "policy-fails"] {
        assert!(
            h.cluster
                .get("apps/v1", "Deployment", namespace, "ks")
                .await
                .is_none(),
            "{namespace}"
        );
    }
}
