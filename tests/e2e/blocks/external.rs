//! EnsureDatabase, EnsureDatabaseUser, EnsureCertificate, EnsurePushSecret and the secret
//! reads in the real host, against the mariadb-operator, External Secrets and cert-manager
//! CRDs of `crds/external`.

use serde_json::json;

use crate::{Harness, in_ns, true_condition};

const MARIADB: &str = "k8s.mariadb.com/v1alpha1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ensure_database_creates_an_owned_database_that_follows_its_ready_condition() {
    let h = Harness::start().await;
    let db = in_ns(MARIADB, "Database", "keystone");
    let scenario = h.scenario("keystone", "database", json!({})).await;
    assert_eq!(h.first_outcome("keystone").await, json!({"ready": false}));
    let stored = h.must(&db).await;
    assert_eq!(
        stored["metadata"]["ownerReferences"][0]["uid"],
        scenario["metadata"]["uid"]
    );
    assert_eq!(stored["spec"]["characterSet"], "utf8", "the CRD's default");
    h.assert_converged_pass_writes_nothing("keystone", &[("databases", db.clone())])
        .await;
    h.set_status(&db, json!({"conditions": true_condition("Ready")}))
        .await;
    let generation = h.rerun("keystone").await;
    h.outcome("keystone", generation, |o| o["ready"] == true)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ensure_database_user_keeps_the_server_default_max_user_connections() {
    let h = Harness::start().await;
    let user = in_ns(MARIADB, "User", "keystone");
    let grant = in_ns(MARIADB, "Grant", "keystone");
    h.scenario(
        "keystone",
        "database-user",
        json!({"privileges": ["ALL PRIVILEGES"], "database": "keystone"}),
    )
    .await;
    assert_eq!(h.first_outcome("keystone").await, json!({"ready": false}));
    assert_eq!(h.must(&user).await["spec"]["maxUserConnections"], 10);
    assert_eq!(h.must(&grant).await["spec"]["table"], "*");
    h.assert_converged_pass_writes_nothing(
        "keystone",
        &[("users", user.clone()), ("grants", grant.clone())],
    )
    .await;
    let generation = h
        .patch_spec("keystone", json!({"params": {"privileges": ["SELECT"]}}))
        .await;
    h.outcome("keystone", generation, |_| true).await;
    assert_eq!(
        h.must(&grant).await["spec"]["privileges"],
        json!(["SELECT"])
    );
    assert_eq!(h.must(&user).await["spec"]["maxUserConnections"], 10);
    for r in [&user, &grant] {
        h.set_status(r, json!({"conditions": true_condition("Ready")}))
            .await;
    }
    let generation = h.rerun("keystone").await;
    h.outcome("keystone", generation, |o| o["ready"] == true)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ensure_certificate_applies_the_spec_and_reports_ready_from_cert_manager() {
    let h = Harness::start().await;
    let cert = in_ns("cert-manager.io/v1", "Certificate", "db-client");
    let scenario = h
        .scenario(
            "db-client",
            "certificate",
            json!({"commonName": "keystone"}),
        )
        .await;
    assert_eq!(h.first_outcome("db-client").await, json!({"ready": false}));
    let stored = h.must(&cert).await;
    assert_eq!(stored["spec"]["commonName"], "keystone");
    assert_eq!(stored["spec"]["secretName"], "db-client-tls");
    assert_eq!(
        stored["metadata"]["ownerReferences"][0]["uid"],
        scenario["metadata"]["uid"]
    );
    h.assert_converged_pass_writes_nothing("db-client", &[("certificates", cert.clone())])
        .await;
    h.set_status(&cert, json!({"conditions": true_condition("Ready")}))
        .await;
    let generation = h
        .patch_spec("db-client", json!({"params": {"commonName": "keystone-2"}}))
        .await;
    h.outcome("db-client", generation, |o| o["ready"] == true)
        .await;
    assert_eq!(h.must(&cert).await["spec"]["commonName"], "keystone-2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ensure_push_secret_keeps_the_server_defaults_and_a_converged_one_makes_no_write() {
    let h = Harness::start().await;
    let push = in_ns(
        "external-secrets.io/v1alpha1",
        "PushSecret",
        "fernet-backup",
    );
    h.scenario("fernet-backup", "push-secret", json!({"secret": "fernet"}))
        .await;
    assert_eq!(
        h.first_outcome("fernet-backup").await,
        json!({"applied": true})
    );
    let stored = h.must(&push).await;
    assert_eq!(stored["spec"]["updatePolicy"], "Replace");
    assert_eq!(stored["spec"]["refreshInterval"], "1h");
    assert_eq!(stored["spec"]["selector"]["secret"]["name"], "fernet");
    assert_eq!(
        stored["spec"]["secretStoreRefs"],
        json!([{"name": "openbao-cluster-store", "kind": "ClusterSecretStore"}])
    );
    h.assert_converged_pass_writes_nothing("fernet-backup", &[("pushsecrets", push.clone())])
        .await;
    assert_eq!(h.must(&push).await["spec"]["updatePolicy"], "Replace");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secret_reads_see_the_secret_its_keys_and_the_external_secret_state() {
    let h = Harness::start().await;
    h.scenario(
        "reads",
        "secret-reads",
        json!({"secret": "db", "key": "password", "expectedKeys": ["username", "password"],
            "externalSecret": "db"}),
    )
    .await;
    let missing = h.first_outcome("reads").await;
    assert_eq!(missing["secretReady"], false);
    assert_eq!(
        missing["externalSecret"],
        json!({"exists": false, "ready": false})
    );
    assert!(missing["value"]["error"].is_string(), "{missing}");
    h.create(json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "db", "namespace": "ns"},
        "stringData": {"username": "keystone", "password": "s3cret"}}))
        .await;
    h.create(
        json!({"apiVersion": "external-secrets.io/v1", "kind": "ExternalSecret",
        "metadata": {"name": "db", "namespace": "ns"},
        "spec": {"secretStoreRef": {"name": "openbao-cluster-store", "kind": "ClusterSecretStore"},
            "target": {"name": "db"}}}),
    )
    .await;
    let generation = h.rerun("reads").await;
    let found = h.outcome("reads", generation, |_| true).await;
    assert_eq!(found["secretReady"], true);
    assert_eq!(found["value"], json!({"value": "s3cret"}));
    assert_eq!(
        found["externalSecret"],
        json!({"exists": true, "ready": false})
    );
    h.set_status(
        &in_ns("external-secrets.io/v1", "ExternalSecret", "db"),
        json!({"conditions": true_condition("Ready")}),
    )
    .await;
    let generation = h.rerun("reads").await;
    let synced = h.outcome("reads", generation, |_| true).await;
    assert_eq!(
        synced["externalSecret"],
        json!({"exists": true, "ready": true})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_satellite_section_is_observed_through_the_deployment_and_its_mounted_secret() {
    let h = Harness::start().await;
    let scenario = h
        .scenario(
            "observe",
            "satellite-observe",
            json!({"deployment": "parent"}),
        )
        .await;
    assert_eq!(
        h.first_outcome("observe").await,
        json!({"projected": false})
    );
    h.create(json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "parent-config", "namespace": "ns"},
        "stringData": {"app.conf": "[DEFAULT]\ndebug = false\n[store]\nbackend = s3\n"}}))
        .await;
    // The parent's Deployment, owned by the scenario: its watch event starts the pass
    // once the Deployment is in the host's cache.
    h.create(json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "parent", "namespace": "ns", "ownerReferences": [{
            "apiVersion": crate::SCENARIOS, "kind": "BlockScenario", "name": "observe",
            "uid": scenario["metadata"]["uid"], "controller": true}]},
        "spec": {"selector": {"matchLabels": {"app": "parent"}},
            "template": {"metadata": {"labels": {"app": "parent"}},
                "spec": {"containers": [{"name": "main", "image": "x:1"}],
                    "volumes": [{"name": "config", "secret": {"secretName": "parent-config"}}]}}}}))
        .await;
    h.outcome("observe", 1, |o| o["projected"] == true).await;
}
