//! The OpenBao actor's managed mode: an OpenBaoCluster gets a server of its own, the CA
//! Secret, Service, EndpointSlice and provisioner ServiceAccount a managed
//! BarbicanSecretStore reads, and `Available=True`; a client runs the store controller's
//! managed flow against it over HTTPS at `https://{instance}.{ns}.svc:8200`.

use serde_json::{Value, json};
use wasm_operator_apiserver::{
    Actor, ApiServer, ENDPOINTSLICE_MANAGER, NOT_READY_ANNOTATION, OPENBAO_CHILD_MANAGER,
    OPENBAO_STATUS_MANAGER, ServerConfig,
};

use crate::support::http::{Answer, eventually, try_send_via};
use crate::support::{get, post, raw};

const NS: &str = "default";
const INSTANCE: &str = "cp-barbican-bao";
const CLUSTERS: &str = "/apis/openbao.org/v1alpha1/namespaces/default/openbaoclusters";

async fn server() -> (ApiServer, kube::Client) {
    let server = ApiServer::start(ServerConfig {
        actors: vec![Actor::OpenBao],
        ..ServerConfig::default()
    })
    .await
    .expect("the server starts with the OpenBao actor");
    let client = server.client().expect("a client");
    (server, client)
}

/// The OpenBaoCluster CobaltCore's ControlPlane writes for a dedicated Barbican store.
async fn create_cluster(client: &kube::Client, annotations: Value) {
    let created = post(
        client,
        CLUSTERS,
        json!({
            "apiVersion": "openbao.org/v1alpha1", "kind": "OpenBaoCluster",
            "metadata": {"name": INSTANCE, "annotations": annotations},
            "spec": {"profile": "Development", "version": "2.6.1", "replicas": 1,
                     "tls": {"enabled": true, "mode": "External"}, "unseal": {"type": "static"},
                     "deletionPolicy": "DeletePVCs", "storage": {"size": "1Gi"},
                     "selfInit": {"enabled": true, "requests": [{"name": "barbican_kv",
                         "operation": "create", "path": "sys/mounts/barbican",
                         "secretEngine": {"type": "kv", "options": {"version": "2"}}}]}},
        }),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
}

/// The cluster's `Available` condition, once the actor has written one.
async fn available(client: &kube::Client) -> Value {
    let path = format!("{CLUSTERS}/{INSTANCE}");
    let cluster = get(client, &path).await.body;
    cluster["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Available"))
        .cloned()
        .unwrap_or(Value::Null)
}

async fn until_available(client: &kube::Client, status: &str) -> Value {
    eventually(&format!("Available={status}"), || async {
        let condition = available(client).await;
        (condition["status"] == status).then_some(condition)
    })
    .await
}

/// `ip:port` of the ready endpoint of the instance's Service port `api`.
async fn endpoint(client: &kube::Client) -> String {
    eventually("a ready endpoint", || async {
        let slice = get(
            client,
            &format!(
                "/apis/discovery.k8s.io/v1/namespaces/{NS}/endpointslices/{INSTANCE}-stand-in"
            ),
        )
        .await
        .body;
        let ready = slice["endpoints"][0]["conditions"]["ready"] == true;
        let port = slice["ports"]
            .as_array()?
            .iter()
            .find(|p| p["name"] == "api")?["port"]
            .as_u64()?;
        let address = slice["endpoints"][0]["addresses"][0].as_str()?;
        ready.then(|| format!("{address}:{port}"))
    })
    .await
}

/// The CA the instance's `{instance}-tls-ca` Secret publishes.
async fn published_ca(client: &kube::Client) -> String {
    let secret = get(
        client,
        &format!("/api/v1/namespaces/{NS}/secrets/{INSTANCE}-tls-ca"),
    )
    .await;
    assert_eq!(secret.status, 200, "{}", secret.body);
    use base64::Engine as _;
    let pem = base64::engine::general_purpose::STANDARD
        .decode(secret.body["data"]["ca.crt"].as_str().expect("a ca.crt"))
        .expect("base64");
    String::from_utf8(pem).expect("PEM text")
}

/// A TokenRequest for `account` with `audience`.
async fn token(client: &kube::Client, account: &str, audience: &str) -> String {
    let answer = post(
        client,
        &format!("/api/v1/namespaces/{NS}/serviceaccounts/{account}/token"),
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
               "spec": {"audiences": [audience], "expirationSeconds": 600}}),
    )
    .await;
    assert_eq!(answer.status, 201, "{}", answer.body);
    answer.body["status"]["token"]
        .as_str()
        .expect("a token")
        .to_owned()
}

/// One request to `https://{instance}.{ns}.svc:8200/v1/{path}`, connecting to `connect`
/// and verifying the server as that name against `ca`.
async fn call(
    connect: &str,
    ca: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> Answer {
    let headers: Vec<(&str, &str)> = token.map(|t| ("X-Vault-Token", t)).into_iter().collect();
    let url = format!("https://{INSTANCE}.{NS}.svc:8200/v1/{path}");
    try_send_via(
        Some(connect),
        Some(ca),
        method,
        &url,
        &headers,
        body.as_ref(),
    )
    .await
    .expect("the instance answers")
}

fn managers(object: &Value) -> Vec<String> {
    object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["manager"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn an_openbao_cluster_becomes_available_with_its_ca_secret_service_endpoint_slice_and_provisioner_account()
 {
    let (server, client) = server().await;
    create_cluster(&client, json!({})).await;
    let condition = until_available(&client, "True").await;
    assert_eq!(condition["reason"], "AllReplicasReady");
    assert_eq!(condition["message"], "All 1 replicas are ready");
    let cluster = get(&client, &format!("{CLUSTERS}/{INSTANCE}")).await.body;
    assert_eq!(cluster["status"]["phase"], "Running");
    assert_eq!(cluster["status"]["readyReplicas"], 1);
    assert_eq!(cluster["status"]["currentVersion"], "2.6.1");
    assert!(
        managers(&cluster).contains(&OPENBAO_STATUS_MANAGER.to_owned()),
        "{:?}",
        managers(&cluster)
    );

    let stand_in = server
        .openbao_cluster(NS, INSTANCE)
        .expect("the instance's server runs");
    assert_eq!(published_ca(&client).await, stand_in.ca_pem());
    let secret = get(
        &client,
        &format!("/api/v1/namespaces/{NS}/secrets/{INSTANCE}-tls-ca"),
    )
    .await
    .body;
    assert!(managers(&secret).contains(&OPENBAO_CHILD_MANAGER.to_owned()));
    assert_eq!(
        secret["metadata"]["ownerReferences"][0]["kind"],
        "OpenBaoCluster"
    );

    let service = get(
        &client,
        &format!("/api/v1/namespaces/{NS}/services/{INSTANCE}"),
    )
    .await
    .body;
    assert_eq!(service["spec"]["clusterIP"], "None");
    assert_eq!(
        service["spec"]["ports"],
        json!([{"name": "api", "port": 8200, "protocol": "TCP", "targetPort": 8200}])
    );

    let address = endpoint(&client).await;
    assert_eq!(format!("https://{address}"), stand_in.url());
    let slice = get(
        &client,
        &format!("/apis/discovery.k8s.io/v1/namespaces/{NS}/endpointslices/{INSTANCE}-stand-in"),
    )
    .await
    .body;
    assert_eq!(
        slice["metadata"]["labels"]["kubernetes.io/service-name"],
        INSTANCE
    );
    assert!(managers(&slice).contains(&ENDPOINTSLICE_MANAGER.to_owned()));

    let account = get(
        &client,
        &format!("/api/v1/namespaces/{NS}/serviceaccounts/{INSTANCE}-provisioner"),
    )
    .await;
    assert_eq!(account.status, 200, "{}", account.body);
    assert_eq!(account.body["automountServiceAccountToken"], false);
}

#[tokio::test]
async fn the_managed_flow_logs_in_as_provisioner_reads_the_role_id_and_mints_a_secret_id_with_a_ttl()
 {
    let (server, client) = server().await;
    create_cluster(&client, json!({})).await;
    until_available(&client, "True").await;
    let ca = published_ca(&client).await;
    let connect = endpoint(&client).await;
    let jwt = token(&client, &format!("{INSTANCE}-provisioner"), INSTANCE).await;

    let login = call(
        &connect,
        &ca,
        "PUT",
        "auth/kubernetes/login",
        None,
        Some(json!({"role": "provisioner", "jwt": jwt})),
    )
    .await;
    assert_eq!(login.status, 200, "{:?}", login.body);
    assert_eq!(
        login.body["auth"]["policies"],
        json!(["default", "provisioner"])
    );
    let provisioner = login.body["auth"]["client_token"]
        .as_str()
        .expect("a token")
        .to_owned();
    let p = Some(provisioner.as_str());

    let mount = call(&connect, &ca, "GET", "sys/mounts/barbican", p, None).await;
    assert_eq!(mount.status, 200, "{:?}", mount.body);
    assert_eq!(
        (
            &mount.body["data"]["type"],
            &mount.body["data"]["options"]["version"]
        ),
        (&json!("kv"), &json!("2"))
    );
    let role = call(
        &connect,
        &ca,
        "GET",
        "auth/approle/role/barbican/role-id",
        p,
        None,
    )
    .await;
    assert_eq!(role.status, 200, "{:?}", role.body);
    let role_id = role.body["data"]["role_id"]
        .as_str()
        .expect("a role_id")
        .to_owned();
    let minted = call(
        &connect,
        &ca,
        "PUT",
        "auth/approle/role/barbican/secret-id",
        p,
        None,
    )
    .await;
    assert_eq!(minted.status, 200, "{:?}", minted.body);
    assert_eq!(
        minted.body["data"]["secret_id_ttl"],
        720 * 3600,
        "the AppRole's secret_id_ttl=720h"
    );
    let secret_id = minted.body["data"]["secret_id"]
        .as_str()
        .expect("a secret_id")
        .to_owned();
    let stand_in = server
        .openbao_cluster(NS, INSTANCE)
        .expect("the instance's server runs");
    assert_eq!(stand_in.live_secret_ids("barbican"), 1);

    let approle = call(
        &connect,
        &ca,
        "PUT",
        "auth/approle/login",
        None,
        Some(json!({"role_id": role_id, "secret_id": secret_id})),
    )
    .await;
    assert_eq!(approle.status, 200, "{:?}", approle.body);
    assert_eq!(
        approle.body["auth"]["policies"],
        json!(["default", "barbican-secretstore"])
    );
    let barbican = approle.body["auth"]["client_token"]
        .as_str()
        .expect("a token")
        .to_owned();
    let probe = call(
        &connect,
        &ca,
        "POST",
        "sys/capabilities-self",
        Some(&barbican),
        Some(json!({"paths": ["barbican/data/probe"]})),
    )
    .await;
    assert_eq!(probe.status, 200, "{:?}", probe.body);
    assert_eq!(
        probe.body["data"]["capabilities"],
        json!(["create", "delete", "list", "read", "update"])
    );
    let minting = call(
        &connect,
        &ca,
        "PUT",
        "auth/approle/role/barbican/secret-id",
        Some(&barbican),
        None,
    )
    .await;
    assert_eq!(
        minting.status, 403,
        "Barbican's own token mints nothing: {:?}",
        minting.body
    );

    let elsewhere = format!("https://other.{NS}.svc:8200/v1/sys/health");
    let refused = try_send_via(Some(&connect), Some(&ca), "GET", &elsewhere, &[], None)
        .await
        .expect_err("the certificate names the instance's Service only");
    assert!(
        refused.contains("certificate not valid for name \"other.default.svc\""),
        "{refused}"
    );
}

#[tokio::test]
async fn the_provisioner_role_refuses_a_token_of_another_service_account_or_audience() {
    let (_server, client) = server().await;
    create_cluster(&client, json!({})).await;
    until_available(&client, "True").await;
    let other = post(
        &client,
        &format!("/api/v1/namespaces/{NS}/serviceaccounts"),
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "barbican-api"}}),
    )
    .await;
    assert_eq!(other.status, 201, "{}", other.body);
    let ca = published_ca(&client).await;
    let connect = endpoint(&client).await;
    let provisioner = format!("{INSTANCE}-provisioner");
    for (account, audience, status, error) in [
        (
            "barbican-api",
            INSTANCE,
            403,
            Some("service account name not authorized"),
        ),
        (
            provisioner.as_str(),
            "openbao",
            403,
            Some("invalid audience (aud) claim"),
        ),
        (provisioner.as_str(), INSTANCE, 200, None),
    ] {
        let jwt = token(&client, account, audience).await;
        let login = call(
            &connect,
            &ca,
            "PUT",
            "auth/kubernetes/login",
            None,
            Some(json!({"role": "provisioner", "jwt": jwt})),
        )
        .await;
        assert_eq!(
            login.status, status,
            "{account}/{audience}: {:?}",
            login.body
        );
        if let Some(error) = error {
            let message = login.body["errors"][0].as_str().expect("an error");
            assert!(message.contains(error), "{message:?} should name {error:?}");
        }
    }
}

#[tokio::test]
async fn the_not_ready_annotation_keeps_an_openbao_cluster_unavailable_until_removed() {
    let (_server, client) = server().await;
    create_cluster(
        &client,
        json!({NOT_READY_ANNOTATION: "sealed for maintenance"}),
    )
    .await;
    let held = until_available(&client, "False").await;
    assert_eq!(held["reason"], "NoReplicasReady");
    assert_eq!(held["message"], "sealed for maintenance");
    let slice = get(
        &client,
        &format!("/apis/discovery.k8s.io/v1/namespaces/{NS}/endpointslices/{INSTANCE}-stand-in"),
    )
    .await
    .body;
    assert_eq!(
        slice["endpoints"][0]["conditions"]["ready"], false,
        "{slice}"
    );
    let cluster = get(&client, &format!("{CLUSTERS}/{INSTANCE}")).await.body;
    assert_eq!(cluster["status"]["phase"], "Initializing");

    let patched = raw(
        &client,
        "PATCH",
        &format!("{CLUSTERS}/{INSTANCE}"),
        "application/merge-patch+json",
        Some(json!({"metadata": {"annotations": {NOT_READY_ANNOTATION: null}}})),
    )
    .await;
    assert_eq!(patched.status, 200, "{}", patched.body);
    let healed = until_available(&client, "True").await;
    assert_eq!(healed["reason"], "AllReplicasReady");
    endpoint(&client).await;
}

#[tokio::test]
async fn deleting_an_openbao_cluster_removes_its_children_and_stops_its_server() {
    let (server, client) = server().await;
    create_cluster(&client, json!({})).await;
    until_available(&client, "True").await;
    let connect = endpoint(&client).await;
    let ca = published_ca(&client).await;
    let health = call(&connect, &ca, "GET", "sys/health", None, None).await;
    assert_eq!(health.status, 200, "{:?}", health.body);

    let deleted = raw(
        &client,
        "DELETE",
        &format!("{CLUSTERS}/{INSTANCE}"),
        "application/json",
        None,
    )
    .await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    for path in [
        format!("/api/v1/namespaces/{NS}/secrets/{INSTANCE}-tls-ca"),
        format!("/api/v1/namespaces/{NS}/services/{INSTANCE}"),
        format!("/api/v1/namespaces/{NS}/serviceaccounts/{INSTANCE}-provisioner"),
        format!("/apis/discovery.k8s.io/v1/namespaces/{NS}/endpointslices/{INSTANCE}-stand-in"),
    ] {
        eventually(&format!("{path} deleted"), || async {
            (get(&client, &path).await.status == 404).then_some(())
        })
        .await;
    }
    eventually("the server stopped", || async {
        server.openbao_cluster(NS, INSTANCE).is_none().then_some(())
    })
    .await;
    let url = format!("https://{INSTANCE}.{NS}.svc:8200/v1/sys/health");
    let gone = try_send_via(Some(&connect), Some(&ca), "GET", &url, &[], None).await;
    assert!(gone.is_err(), "the stopped server still answers: {gone:?}");
}
