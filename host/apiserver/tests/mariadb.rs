//! The mariadb-operator actor: MariaDB Ready; Database, User and Grant Ready once their
//! references resolve; the not-ready toggle.

use serde_json::{Value, json};
use wasm_operator_apiserver::{Actor, NOT_READY_ANNOTATION};

use crate::support::{
    actor_server, condition, get, managers, post, send_ok, wait_condition, wait_for,
};

const API: &str = "/apis/k8s.mariadb.com/v1alpha1/namespaces/default";
const MERGE: &str = "application/merge-patch+json";

async fn create(client: &kube::Client, plural: &str, kind: &str, name: &str, spec: Value) {
    let body = json!({"apiVersion": "k8s.mariadb.com/v1alpha1", "kind": kind, "metadata": {"name": name}, "spec": spec});
    let created = post(client, &format!("{API}/{plural}"), body).await;
    assert_eq!(created.status, 201, "{}", created.body);
}

/// Waits until the object's Ready condition has `status` and `message`; returns it.
async fn wait_ready(
    client: &kube::Client,
    plural: &str,
    name: &str,
    status: &str,
    message: &str,
) -> Value {
    let path = format!("{API}/{plural}/{name}");
    wait_for(
        &format!("{plural}/{name} Ready={status} {message:?}"),
        || async {
            let got = get(client, &path).await;
            match condition(&got.body, "Ready") {
                Some(c) if c["status"] == status && c["message"] == message => Ok(got.body),
                _ => Err(got.body.to_string()),
            }
        },
    )
    .await
}

#[tokio::test]
async fn a_database_user_and_grant_become_ready_once_their_references_resolve() {
    let (_server, client) = actor_server(&[Actor::MariaDb]).await;
    create(&client, "databases", "Database", "keystone", json!({
        "mariaDbRef": {"name": "openstack-db"}, "name": "keystone", "characterSet": "utf8", "collate": "utf8_general_ci",
    })).await;
    let database = wait_ready(
        &client,
        "databases",
        "keystone",
        "False",
        "MariaDB not found",
    )
    .await;
    assert_eq!(
        condition(&database, "Ready").map(|c| c["reason"].clone()),
        Some(json!("Failed"))
    );

    create(
        &client,
        "mariadbs",
        "MariaDB",
        "openstack-db",
        json!({"rootPasswordSecretKeyRef": {"name": "root", "key": "password"}}),
    )
    .await;
    let mariadb = wait_condition(
        &client,
        &format!("{API}/mariadbs/openstack-db"),
        "Ready",
        "True",
    )
    .await;
    let ready = condition(&mariadb, "Ready").expect("Ready");
    assert_eq!(
        (ready["reason"].as_str(), ready["message"].as_str()),
        (Some("StatefulSetReady"), Some("Running"))
    );
    assert_eq!(mariadb["status"]["currentPrimary"], "openstack-db-0");
    assert!(
        managers(&mariadb).contains(&("mariadb-operator".into(), "status".into())),
        "{:?}",
        managers(&mariadb)
    );
    let database = wait_ready(&client, "databases", "keystone", "True", "Created").await;
    assert_eq!(
        condition(&database, "Ready").map(|c| c["reason"].clone()),
        Some(json!("Created"))
    );

    create(&client, "users", "User", "keystone", json!({
        "mariaDbRef": {"name": "openstack-db"}, "passwordSecretKeyRef": {"name": "keystone-db", "key": "password"},
    })).await;
    create(&client, "grants", "Grant", "keystone", json!({
        "mariaDbRef": {"name": "openstack-db"}, "privileges": ["ALL PRIVILEGES"], "database": "keystone", "table": "*", "username": "keystone",
    })).await;
    let user = wait_ready(
        &client,
        "users",
        "keystone",
        "False",
        "Error getting password: secrets \"keystone-db\" not found",
    )
    .await;
    assert_eq!(
        condition(&user, "Ready").map(|c| c["reason"].clone()),
        Some(json!("Failed"))
    );
    wait_ready(
        &client,
        "grants",
        "keystone",
        "False",
        "User \"keystone\" not ready",
    )
    .await;

    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "keystone-db"}, "stringData": {"username": "keystone", "password": "pw"}});
    assert_eq!(
        post(&client, "/api/v1/namespaces/default/secrets", secret)
            .await
            .status,
        201
    );
    wait_ready(&client, "users", "keystone", "True", "Created").await;
    let grant = wait_ready(&client, "grants", "keystone", "True", "Created").await;
    assert!(
        managers(&grant).contains(&("mariadb-operator".into(), "status".into())),
        "{:?}",
        managers(&grant)
    );
}

#[tokio::test]
async fn the_not_ready_annotation_keeps_a_mariadb_and_what_refers_to_it_not_ready() {
    let (server, client) = actor_server(&[Actor::MariaDb]).await;
    create(&client, "mariadbs", "MariaDB", "db", json!({})).await;
    create(
        &client,
        "databases",
        "Database",
        "app",
        json!({"mariaDbRef": {"name": "db"}}),
    )
    .await;
    wait_ready(&client, "databases", "app", "True", "Created").await;
    send_ok(
        &client,
        "PATCH",
        &format!("{API}/mariadbs/db"),
        MERGE,
        json!({"metadata": {"annotations": {NOT_READY_ANNOTATION: "Galera not ready"}}}),
    )
    .await;
    let mariadb = wait_ready(&client, "mariadbs", "db", "False", "Galera not ready").await;
    assert_eq!(
        condition(&mariadb, "Ready").map(|c| c["reason"].clone()),
        Some(json!("StatefulSetNotReady"))
    );
    wait_ready(&client, "databases", "app", "False", "MariaDB not ready").await;

    // kubectl shows it as a user would see it.
    let dir = tempfile::tempdir().expect("a temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).expect("a kubeconfig");
    let kubectl = |args: &'static [&'static str]| {
        let kubeconfig = kubeconfig.clone();
        async move {
            let output = tokio::process::Command::new("kubectl")
                .arg("--kubeconfig")
                .arg(&kubeconfig)
                .args(args)
                .output()
                .await
                .expect("kubectl runs");
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            assert!(output.status.success(), "kubectl {args:?}: {text}");
            text
        }
    };
    kubectl(&[
        "wait",
        "--for=condition=Ready=false",
        "--timeout=60s",
        "mariadb/db",
    ])
    .await;
    let message = kubectl(&[
        "get",
        "mariadb",
        "db",
        "-o",
        "jsonpath={.status.conditions[?(@.type==\"Ready\")].message}",
    ])
    .await;
    assert_eq!(message, "Galera not ready");

    send_ok(
        &client,
        "PATCH",
        &format!("{API}/databases/app"),
        MERGE,
        json!({"metadata": {"annotations": {NOT_READY_ANNOTATION: ""}}}),
    )
    .await;
    send_ok(
        &client,
        "PATCH",
        &format!("{API}/mariadbs/db"),
        MERGE,
        json!({"metadata": {"annotations": {NOT_READY_ANNOTATION: null}}}),
    )
    .await;
    wait_ready(&client, "mariadbs", "db", "True", "Running").await;
    let held = format!("kept not ready by the {NOT_READY_ANNOTATION} annotation");
    wait_ready(&client, "databases", "app", "False", &held).await;
}
