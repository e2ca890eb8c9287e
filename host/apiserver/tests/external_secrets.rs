//! The External Secrets actor: stores, ExternalSecrets from the in-memory backend,
//! PushSecrets into it, and Keystone's password-rotation loop through both.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use wasm_operator_apiserver::{Actor, NOT_READY_ANNOTATION};

use crate::support::{
    actor_server, condition, get, managers, post, raw, secret_value, send_ok, server,
    wait_condition, wait_for,
};

const CSS: &str = "/apis/external-secrets.io/v1/clustersecretstores";
const ES: &str = "/apis/external-secrets.io/v1/namespaces/default/externalsecrets";
const PS: &str = "/apis/external-secrets.io/v1alpha1/namespaces/default/pushsecrets";
const SECRETS: &str = "/api/v1/namespaces/default/secrets";
const MERGE: &str = "application/merge-patch+json";

fn entry(pairs: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.as_bytes().to_vec()))
        .collect()
}

async fn cluster_store(client: &kube::Client, name: &str) {
    let store = json!({
        "apiVersion": "external-secrets.io/v1", "kind": "ClusterSecretStore",
        "metadata": {"name": name},
        "spec": {"provider": {"vault": {"server": "http://openbao:8200", "path": "secret"}}},
    });
    let created = post(client, CSS, store).await;
    assert_eq!(created.status, 201, "{}", created.body);
    wait_condition(client, &format!("{CSS}/{name}"), "Ready", "True").await;
}

fn external_secret(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "external-secrets.io/v1", "kind": "ExternalSecret",
           "metadata": {"name": name}, "spec": spec})
}

fn push_secret(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "external-secrets.io/v1alpha1", "kind": "PushSecret",
           "metadata": {"name": name}, "spec": spec})
}

fn secret(name: &str, data: &[(&str, &str)]) -> Value {
    use base64::Engine as _;
    let data: serde_json::Map<String, Value> = data
        .iter()
        .map(|(k, v)| {
            (
                (*k).to_owned(),
                json!(base64::engine::general_purpose::STANDARD.encode(v)),
            )
        })
        .collect();
    json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "data": data})
}

/// Waits until the Secret `name` holds `value` under `key`; returns the Secret.
async fn wait_secret_value(client: &kube::Client, name: &str, key: &str, value: &str) -> Value {
    wait_for(&format!("Secret {name} {key}={value}"), || async {
        let got = get(client, &format!("{SECRETS}/{name}")).await;
        match secret_value(&got.body, key) {
            Some(v) if v == value.as_bytes() => Ok(got.body),
            _ => Err(got.body.to_string()),
        }
    })
    .await
}

#[tokio::test]
async fn a_secret_store_is_ready_until_the_not_ready_annotation_is_set() {
    let (_server, client) = actor_server(&[Actor::ExternalSecrets]).await;
    cluster_store(&client, "openbao").await;
    let store = get(&client, &format!("{CSS}/openbao")).await.body;
    let ready = condition(&store, "Ready").expect("a Ready condition");
    assert_eq!(
        (ready["reason"].as_str(), ready["message"].as_str()),
        (Some("Valid"), Some("store validated"))
    );
    assert_eq!(store["status"]["capabilities"], "ReadWrite");
    assert!(
        managers(&store).contains(&("external-secrets".into(), "status".into())),
        "{:?}",
        managers(&store)
    );
    send_ok(
        &client,
        "PATCH",
        &format!("{CSS}/openbao"),
        MERGE,
        json!({"metadata": {"annotations": {NOT_READY_ANNOTATION: "OpenBao is sealed"}}}),
    )
    .await;
    let store = wait_condition(&client, &format!("{CSS}/openbao"), "Ready", "False").await;
    let ready = condition(&store, "Ready").expect("a Ready condition");
    assert_eq!(ready["reason"], "ValidationFailed");
    assert_eq!(ready["message"], "OpenBao is sealed");
    send_ok(
        &client,
        "PATCH",
        &format!("{CSS}/openbao"),
        MERGE,
        json!({"metadata": {"annotations": {NOT_READY_ANNOTATION: null}}}),
    )
    .await;
    wait_condition(&client, &format!("{CSS}/openbao"), "Ready", "True").await;
}

#[tokio::test]
async fn an_external_secret_writes_its_target_secret_from_the_backend() {
    let (server, client) = actor_server(&[Actor::ExternalSecrets]).await;
    cluster_store(&client, "openbao").await;
    server
        .secret_backend_put(
            "app/db",
            entry(&[("username", "keystone"), ("password", "pw1")]),
        )
        .expect("the actor runs");
    server
        .secret_backend_put("app/extra", entry(&[("token", "t0k")]))
        .expect("the actor runs");
    let es = external_secret(
        "db",
        json!({
            "secretStoreRef": {"kind": "ClusterSecretStore", "name": "openbao"},
            "target": {"name": "db-credentials", "template": {"type": "Opaque", "metadata": {"labels": {"team": "id"}}}},
            "data": [
                {"secretKey": "username", "remoteRef": {"key": "app/db", "property": "username"}},
                {"secretKey": "password", "remoteRef": {"key": "app/db", "property": "password"}},
            ],
            "dataFrom": [{"extract": {"key": "app/extra"}}],
        }),
    );
    assert_eq!(post(&client, ES, es).await.status, 201);
    let es = wait_condition(&client, &format!("{ES}/db"), "Ready", "True").await;
    let ready = condition(&es, "Ready").expect("Ready");
    assert_eq!(
        (ready["reason"].as_str(), ready["message"].as_str()),
        (Some("SecretSynced"), Some("secret synced"))
    );
    assert_eq!(es["status"]["binding"]["name"], "db-credentials");
    let target = get(&client, &format!("{SECRETS}/db-credentials"))
        .await
        .body;
    assert_eq!(
        secret_value(&target, "username").as_deref(),
        Some(&b"keystone"[..])
    );
    assert_eq!(
        secret_value(&target, "password").as_deref(),
        Some(&b"pw1"[..])
    );
    assert_eq!(secret_value(&target, "token").as_deref(), Some(&b"t0k"[..]));
    assert_eq!(target["metadata"]["labels"]["team"], "id");
    assert_eq!(
        target["metadata"]["ownerReferences"][0]["kind"],
        "ExternalSecret"
    );
    assert_eq!(
        target["metadata"]["ownerReferences"][0]["uid"],
        es["metadata"]["uid"]
    );
    assert!(
        managers(&target).contains(&(
            "externalsecrets.external-secrets.io/db".into(),
            String::new()
        )),
        "{:?}",
        managers(&target)
    );
}

#[tokio::test]
async fn an_external_secret_of_a_missing_remote_key_is_not_ready_until_the_key_exists() {
    let (server, client) = actor_server(&[Actor::ExternalSecrets]).await;
    cluster_store(&client, "openbao").await;
    let es = external_secret(
        "late",
        json!({
            "secretStoreRef": {"kind": "ClusterSecretStore", "name": "openbao"},
            "data": [{"secretKey": "password", "remoteRef": {"key": "later", "property": "password"}}],
        }),
    );
    assert_eq!(post(&client, ES, es).await.status, 201);
    let es = wait_condition(&client, &format!("{ES}/late"), "Ready", "False").await;
    let ready = condition(&es, "Ready").expect("Ready");
    assert_eq!(ready["reason"], "SecretSyncedError");
    assert_eq!(ready["message"], "could not get secret data from provider");
    assert_eq!(get(&client, &format!("{SECRETS}/late")).await.status, 404);
    server
        .secret_backend_put("later", entry(&[("password", "now")]))
        .expect("the actor runs");
    wait_condition(&client, &format!("{ES}/late"), "Ready", "True").await;
    wait_secret_value(&client, "late", "password", "now").await;
}

#[tokio::test]
async fn an_external_secret_of_an_unready_store_names_the_store() {
    let (_server, client) = actor_server(&[Actor::ExternalSecrets]).await;
    let es = external_secret(
        "orphan",
        json!({
            "secretStoreRef": {"kind": "ClusterSecretStore", "name": "nowhere"},
            "data": [{"secretKey": "k", "remoteRef": {"key": "k"}}],
        }),
    );
    assert_eq!(post(&client, ES, es).await.status, 201);
    let es = wait_condition(&client, &format!("{ES}/orphan"), "Ready", "False").await;
    let ready = condition(&es, "Ready").expect("Ready");
    assert_eq!(ready["reason"], "SecretSyncedError");
    let message = ready["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("ClusterSecretStore \"nowhere\"") && message.contains("not found"),
        "{message}"
    );
}

#[tokio::test]
async fn an_external_secret_refreshes_a_changed_backend_value_when_its_interval_passes() {
    let (server, client) = actor_server(&[Actor::ExternalSecrets]).await;
    cluster_store(&client, "openbao").await;
    server
        .secret_backend_put("rotating", entry(&[("password", "v1")]))
        .expect("the actor runs");
    let es = external_secret(
        "rotating",
        json!({
            "secretStoreRef": {"kind": "ClusterSecretStore", "name": "openbao"},
            "refreshInterval": "1s",
            "data": [{"secretKey": "password", "remoteRef": {"key": "rotating", "property": "password"}}],
        }),
    );
    assert_eq!(post(&client, ES, es).await.status, 201);
    wait_secret_value(&client, "rotating", "password", "v1").await;
    server
        .secret_backend_put("rotating", entry(&[("password", "v2")]))
        .expect("the actor runs");
    wait_secret_value(&client, "rotating", "password", "v2").await;
}

#[tokio::test]
async fn a_push_secret_with_deletion_policy_delete_has_the_finalizer_and_removes_its_entry_when_deleted()
 {
    let (server, client) = actor_server(&[Actor::ExternalSecrets]).await;
    cluster_store(&client, "openbao").await;
    assert_eq!(
        post(
            &client,
            SECRETS,
            secret("fernet", &[("0", "a"), ("1", "b")])
        )
        .await
        .status,
        201
    );
    let ps = push_secret(
        "fernet-backup",
        json!({
            "deletionPolicy": "Delete",
            "secretStoreRefs": [{"kind": "ClusterSecretStore", "name": "openbao"}],
            "selector": {"secret": {"name": "fernet"}},
            "data": [{"match": {"remoteRef": {"remoteKey": "openstack/keystone/default/k/fernet-keys"}}}],
        }),
    );
    assert_eq!(post(&client, PS, ps).await.status, 201);
    let ps = wait_condition(&client, &format!("{PS}/fernet-backup"), "Ready", "True").await;
    let ready = condition(&ps, "Ready").expect("Ready");
    assert_eq!(
        (ready["reason"].as_str(), ready["message"].as_str()),
        (Some("Synced"), Some("PushSecret synced successfully"))
    );
    assert_eq!(
        ps["metadata"]["finalizers"],
        json!(["pushsecret.externalsecrets.io/finalizer"])
    );
    assert_eq!(
        server
            .secret_backend_get("openstack/keystone/default/k/fernet-keys")
            .expect("the actor runs"),
        Some(entry(&[("0", "a"), ("1", "b")]))
    );
    let deleted = raw(
        &client,
        "DELETE",
        &format!("{PS}/fernet-backup"),
        "application/json",
        None,
    )
    .await;
    assert!(deleted.status.is_success(), "{}", deleted.body);
    wait_for("the PushSecret to be gone", || async {
        let got = get(&client, &format!("{PS}/fernet-backup")).await;
        if got.status == 404 {
            Ok(())
        } else {
            Err(got.body.to_string())
        }
    })
    .await;
    assert_eq!(
        server
            .secret_backend_get("openstack/keystone/default/k/fernet-keys")
            .expect("the actor runs"),
        None
    );
}

#[tokio::test]
async fn a_push_secret_with_deletion_policy_none_keeps_its_entry_when_deleted() {
    let (server, client) = actor_server(&[Actor::ExternalSecrets]).await;
    cluster_store(&client, "openbao").await;
    assert_eq!(
        post(&client, SECRETS, secret("next", &[("password", "p")]))
            .await
            .status,
        201
    );
    let ps = push_secret(
        "admin-backup",
        json!({
            "deletionPolicy": "None",
            "secretStoreRefs": [{"kind": "ClusterSecretStore", "name": "openbao"}],
            "selector": {"secret": {"name": "next"}},
            "data": [{"match": {"secretKey": "password", "remoteRef": {"remoteKey": "bootstrap/default/k/admin", "property": "password"}}}],
        }),
    );
    assert_eq!(post(&client, PS, ps).await.status, 201);
    let ps = wait_condition(&client, &format!("{PS}/admin-backup"), "Ready", "True").await;
    assert_eq!(ps["metadata"]["finalizers"], Value::Null, "{ps}");
    let deleted = raw(
        &client,
        "DELETE",
        &format!("{PS}/admin-backup"),
        "application/json",
        None,
    )
    .await;
    assert!(deleted.status.is_success(), "{}", deleted.body);
    assert_eq!(
        get(&client, &format!("{PS}/admin-backup")).await.status,
        404
    );
    assert_eq!(
        server
            .secret_backend_get("bootstrap/default/k/admin")
            .expect("the actor runs"),
        Some(entry(&[("password", "p")]))
    );
}

/// Keystone's facts §2.19: the rotation writes `-next`, its PushSecret pushes it to the
/// backend, the admin ExternalSecret syncs it into the admin Secret.
#[tokio::test]
async fn the_admin_password_rotation_loop_closes_through_push_secret_backend_and_external_secret() {
    let (server, client) = actor_server(&[Actor::ExternalSecrets]).await;
    cluster_store(&client, "openbao").await;
    server
        .secret_backend_put(
            "bootstrap/default/keystone/admin",
            entry(&[("password", "initial-password-000000000")]),
        )
        .expect("the actor runs");
    let admin = external_secret(
        "keystone-admin",
        json!({
            "secretStoreRef": {"kind": "ClusterSecretStore", "name": "openbao"},
            "refreshInterval": "1s",
            "target": {"name": "keystone-admin", "creationPolicy": "Owner"},
            "data": [{"secretKey": "password", "remoteRef": {"key": "bootstrap/default/keystone/admin", "property": "password"}}],
        }),
    );
    assert_eq!(post(&client, ES, admin).await.status, 201);
    wait_secret_value(
        &client,
        "keystone-admin",
        "password",
        "initial-password-000000000",
    )
    .await;

    let next = secret(
        "keystone-admin-password-next",
        &[("password", "rotated-password-111111111")],
    );
    assert_eq!(post(&client, SECRETS, next).await.status, 201);
    let backup = push_secret(
        "keystone-admin-password-backup",
        json!({
            "deletionPolicy": "None",
            "secretStoreRefs": [{"kind": "ClusterSecretStore", "name": "openbao"}],
            "selector": {"secret": {"name": "keystone-admin-password-next"}},
            "data": [{"match": {"secretKey": "password", "remoteRef": {"remoteKey": "bootstrap/default/keystone/admin", "property": "password"}}}],
        }),
    );
    assert_eq!(post(&client, PS, backup).await.status, 201);
    wait_secret_value(
        &client,
        "keystone-admin",
        "password",
        "rotated-password-111111111",
    )
    .await;

    // A second rotation: the staged password lands in -next and travels the same way.
    send_ok(
        &client,
        "PATCH",
        &format!("{SECRETS}/keystone-admin-password-next"),
        MERGE,
        json!({"data": {"password": "cm90YXRlZC1wYXNzd29yZC0yMjIyMjIyMjI="}}),
    )
    .await;
    wait_secret_value(
        &client,
        "keystone-admin",
        "password",
        "rotated-password-222222222",
    )
    .await;
    let es = get(&client, &format!("{ES}/keystone-admin")).await.body;
    assert_eq!(
        condition(&es, "Ready").map(|c| c["reason"].clone()),
        Some(json!("SecretSynced"))
    );
}

#[tokio::test]
async fn the_backend_controls_of_a_server_without_the_actor_name_it() {
    let (server, _client) = server().await;
    let error = server
        .secret_backend_get("k")
        .expect_err("the actor does not run");
    assert_eq!(error.actor, Actor::ExternalSecrets);
    assert!(
        error
            .to_string()
            .contains("the external-secrets actor does not run"),
        "{error}"
    );
}

#[tokio::test]
async fn an_external_secret_refreshes_at_once_when_annotated_though_its_interval_is_an_hour() {
    let (server, client) = actor_server(&[Actor::ExternalSecrets]).await;
    cluster_store(&client, "openbao").await;
    server
        .secret_backend_put("hourly", entry(&[("password", "v1")]))
        .expect("the actor runs");
    let es = external_secret(
        "hourly",
        json!({
            "secretStoreRef": {"kind": "ClusterSecretStore", "name": "openbao"},
            "refreshInterval": "1h",
            "data": [{"secretKey": "password", "remoteRef": {"key": "hourly", "property": "password"}}],
        }),
    );
    assert_eq!(post(&client, ES, es).await.status, 201);
    wait_secret_value(&client, "hourly", "password", "v1").await;
    server
        .secret_backend_put("hourly", entry(&[("password", "v2")]))
        .expect("the actor runs");
    // ESO's documented way to force a refresh.
    send_ok(
        &client,
        "PATCH",
        &format!("{ES}/hourly"),
        MERGE,
        json!({"metadata": {"annotations": {"force-sync": "1"}}}),
    )
    .await;
    wait_secret_value(&client, "hourly", "password", "v2").await;
}

#[tokio::test]
async fn an_external_secret_with_creation_policy_merge_adds_its_keys_to_the_existing_secret() {
    let (server, client) = actor_server(&[Actor::ExternalSecrets]).await;
    cluster_store(&client, "openbao").await;
    server
        .secret_backend_put("merge", entry(&[("token", "t")]))
        .expect("the actor runs");
    assert_eq!(
        post(&client, SECRETS, secret("existing", &[("own", "mine")]))
            .await
            .status,
        201
    );
    let es = external_secret(
        "merger",
        json!({
            "secretStoreRef": {"kind": "ClusterSecretStore", "name": "openbao"},
            "target": {"name": "existing", "creationPolicy": "Merge"},
            "data": [{"secretKey": "token", "remoteRef": {"key": "merge", "property": "token"}}],
        }),
    );
    assert_eq!(post(&client, ES, es).await.status, 201);
    let target = wait_secret_value(&client, "existing", "token", "t").await;
    assert_eq!(
        secret_value(&target, "own").as_deref(),
        Some(&b"mine"[..]),
        "the Secret's own keys stay"
    );
    assert_eq!(
        target["metadata"]["ownerReferences"],
        Value::Null,
        "Merge does not take ownership"
    );

    let es = external_secret(
        "nothing",
        json!({
            "secretStoreRef": {"kind": "ClusterSecretStore", "name": "openbao"},
            "target": {"name": "never", "creationPolicy": "None"},
            "data": [{"secretKey": "token", "remoteRef": {"key": "merge", "property": "token"}}],
        }),
    );
    assert_eq!(post(&client, ES, es).await.status, 201);
    wait_condition(&client, &format!("{ES}/nothing"), "Ready", "True").await;
    assert_eq!(
        get(&client, &format!("{SECRETS}/never")).await.status,
        404,
        "creationPolicy None writes no Secret"
    );
}

#[tokio::test]
async fn a_namespaced_secret_store_serves_the_external_secrets_of_its_namespace() {
    let (server, client) = actor_server(&[Actor::ExternalSecrets]).await;
    let store = json!({
        "apiVersion": "external-secrets.io/v1", "kind": "SecretStore",
        "metadata": {"name": "vault"},
        "spec": {"provider": {"vault": {"server": "http://openbao:8200"}}},
    });
    let path = "/apis/external-secrets.io/v1/namespaces/default/secretstores";
    assert_eq!(post(&client, path, store).await.status, 201);
    wait_condition(&client, &format!("{path}/vault"), "Ready", "True").await;
    server
        .secret_backend_put("ns/app", entry(&[("k", "v")]))
        .expect("the actor runs");
    // No kind: a SecretStore of the ExternalSecret's namespace.
    let es = external_secret(
        "app",
        json!({
            "secretStoreRef": {"name": "vault"},
            "data": [{"secretKey": "k", "remoteRef": {"key": "ns/app", "property": "k"}}],
        }),
    );
    assert_eq!(post(&client, ES, es).await.status, 201);
    wait_secret_value(&client, "app", "k", "v").await;
    // A ClusterSecretStore of that name does not exist: the kind matters.
    let es = external_secret(
        "cluster-app",
        json!({
            "secretStoreRef": {"kind": "ClusterSecretStore", "name": "vault"},
            "data": [{"secretKey": "k", "remoteRef": {"key": "ns/app", "property": "k"}}],
        }),
    );
    assert_eq!(post(&client, ES, es).await.status, 201);
    let es = wait_condition(&client, &format!("{ES}/cluster-app"), "Ready", "False").await;
    let message = condition(&es, "Ready")
        .and_then(|c| c["message"].as_str().map(str::to_owned))
        .unwrap_or_default();
    assert!(
        message.contains("ClusterSecretStore \"vault\""),
        "{message}"
    );
}
