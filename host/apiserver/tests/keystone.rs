//! The Keystone actor: a stand-in Identity API per Keystone, registered as its Service's
//! endpoint once the Deployment is available, bootstrapped from the bootstrap Job, with
//! Keystone's domain rules and the unavailable toggle.

use kube::Api;
use serde_json::{Value, json};
use wasm_operator_apiserver::{
    Actor, ApiServer, ENDPOINTSLICE_MANAGER, KEYSTONE_UNAVAILABLE_ANNOTATION, ServerConfig,
};

use crate::support::http::{Answer, eventually, send};
use crate::support::keystone::{
    bootstrap, bootstrapped, complete_bootstrap, keystone, password_auth, ready_endpoint,
    set_available, slices,
};

async fn server() -> (ApiServer, kube::Client) {
    let server = ApiServer::start(ServerConfig {
        actors: vec![Actor::Keystone],
        ..ServerConfig::default()
    })
    .await
    .expect("the server starts with the Keystone actor");
    let client = server.client().expect("a client");
    (server, client)
}

async fn token(url: &str, password: &str) -> String {
    let answer = send(
        "POST",
        &format!("{url}/v3/auth/tokens"),
        &[],
        Some(&password_auth(password)),
    )
    .await;
    assert_eq!(answer.status, 201, "{:?}", answer.body);
    answer
        .headers
        .get("x-subject-token")
        .cloned()
        .expect("an X-Subject-Token")
}

async fn call(method: &str, url: &str, token: &str, body: Option<Value>) -> Answer {
    send(method, url, &[("X-Auth-Token", token)], body.as_ref()).await
}

#[tokio::test]
async fn a_keystones_service_gets_a_ready_endpoint_of_the_stand_in_once_its_deployment_is_available()
 {
    let (server, client) = server().await;
    keystone(&client, "default", "keystone").await;
    let unready = eventually("an EndpointSlice", || async {
        slices(&client, "default", "keystone")
            .await
            .into_iter()
            .next()
    })
    .await;
    let conditions = unready.endpoints.expect("endpoints")[0]
        .conditions
        .clone()
        .expect("conditions");
    assert_eq!(
        conditions.ready,
        Some(false),
        "not available yet: not ready"
    );
    set_available(&client, "default", "keystone", true).await;
    let url = ready_endpoint(&client, "default", "keystone").await;
    let stand_in = server
        .keystone("default", "keystone")
        .expect("the stand-in runs");
    assert_eq!(url, stand_in.url());
    let slice = slices(&client, "default", "keystone").await.remove(0);
    let ports = slice.ports.expect("ports");
    assert_eq!(
        ports[0].name.as_deref(),
        Some("api"),
        "named as the Service's port"
    );
    let managers: Vec<_> = slice
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter_map(|m| m.manager.clone())
        .collect();
    assert_eq!(managers, [ENDPOINTSLICE_MANAGER]);
    assert_eq!(
        slice.metadata.labels.expect("labels")["kubernetes.io/service-name"],
        "keystone"
    );
    let version = send("GET", &format!("{url}/v3"), &[], None).await;
    assert_eq!(version.status, 200);
    assert_eq!(version.body["version"]["id"], "v3.14");
    assert_eq!(
        version.body["version"]["links"][0]["href"],
        format!("{url}/v3/")
    );

    set_available(&client, "default", "keystone", false).await;
    eventually("the endpoint to turn unready", || async {
        let slice = slices(&client, "default", "keystone")
            .await
            .into_iter()
            .next()?;
        (slice.endpoints?[0].conditions.as_ref()?.ready == Some(false)).then_some(())
    })
    .await;
}

#[tokio::test]
async fn the_admin_password_is_the_bootstrap_jobs_secret_once_the_job_completes() {
    let (server, client) = server().await;
    keystone(&client, "default", "keystone").await;
    set_available(&client, "default", "keystone", true).await;
    let url = ready_endpoint(&client, "default", "keystone").await;
    bootstrap(&client, "default", "keystone", "first-password").await;
    let tokens = format!("{url}/v3/auth/tokens");
    let stand_in = server
        .keystone("default", "keystone")
        .expect("the stand-in runs");
    let job = Api::<k8s_openapi::api::batch::v1::Job>::namespaced(client.clone(), "default")
        .get("keystone-bootstrap")
        .await
        .expect("the Job");
    eventually("the actor to look at the running Job", || async {
        (stand_in.observed_bootstrap_job() == job.metadata.uid).then_some(())
    })
    .await;
    let before = stand_in.requests();
    let refused = send("POST", &tokens, &[], Some(&password_auth("first-password"))).await;
    assert_eq!(
        refused.status, 401,
        "before the bootstrap completes: {:?}",
        refused.body
    );
    assert_eq!(
        refused.body["error"]["message"],
        "The request you have made requires authentication."
    );
    assert!(stand_in.requests() > before);

    complete_bootstrap(&client, "default", "keystone").await;
    eventually("the bootstrap's password", || async {
        stand_in.admin_password_is("first-password").then_some(())
    })
    .await;
    let issued = send("POST", &tokens, &[], Some(&password_auth("first-password"))).await;
    assert_eq!(issued.status, 201, "{:?}", issued.body);
    let token = issued
        .headers
        .get("x-subject-token")
        .cloned()
        .expect("X-Subject-Token");
    let catalog = &issued.body["token"]["catalog"][0]["endpoints"][0];
    assert_eq!(
        catalog["url"],
        "http://keystone.default.svc.cluster.local:5000/v3"
    );
    assert_eq!(catalog["region_id"], "RegionOne");
    let roles: Vec<_> = issued.body["token"]["roles"]
        .as_array()
        .expect("roles")
        .iter()
        .map(|r| r["name"].clone())
        .collect();
    assert!(roles.contains(&json!("admin")), "{roles:?}");
    let wrong = send("POST", &tokens, &[], Some(&password_auth("other"))).await;
    assert_eq!(wrong.status, 401);
    let listed = call(
        "GET",
        &format!("{url}/v3/domains?name=Default"),
        &token,
        None,
    )
    .await;
    assert_eq!(listed.status, 200, "{:?}", listed.body);
    assert_eq!(listed.body["domains"][0]["id"], "default");

    // A new password takes when the bootstrap re-runs (a new Job completing), as the Keystone
    // reconciler re-runs it on a changed password digest.
    Api::<k8s_openapi::api::batch::v1::Job>::namespaced(client.clone(), "default")
        .delete("keystone-bootstrap", &Default::default())
        .await
        .expect("the Job is deleted");
    eventually("the Job to be gone", || async {
        Api::<k8s_openapi::api::batch::v1::Job>::namespaced(client.clone(), "default")
            .get_opt("keystone-bootstrap")
            .await
            .expect("a read")
            .is_none()
            .then_some(())
    })
    .await;
    bootstrap(&client, "default", "keystone", "second-password").await;
    complete_bootstrap(&client, "default", "keystone").await;
    eventually("the re-run's password", || async {
        stand_in.admin_password_is("second-password").then_some(())
    })
    .await;
    let old = send("POST", &tokens, &[], Some(&password_auth("first-password"))).await;
    assert_eq!(old.status, 401);
}

#[tokio::test]
async fn a_domain_must_be_disabled_before_it_is_deleted() {
    let (server, client) = server().await;
    let url = bootstrapped(&client, "default", "keystone", "secret").await;
    let token = token(&url, "secret").await;
    let domains = format!("{url}/v3/domains");
    let created = call(
        "POST",
        &domains,
        &token,
        Some(json!({"domain": {"name": "ldap1", "description": "LDAP"}})),
    )
    .await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    let id = created.body["domain"]["id"]
        .as_str()
        .expect("an id")
        .to_owned();
    assert_eq!(created.body["domain"]["enabled"], true);
    let twice = call(
        "POST",
        &domains,
        &token,
        Some(json!({"domain": {"name": "ldap1"}})),
    )
    .await;
    assert_eq!(twice.status, 409);
    assert!(
        twice.body["error"]["message"]
            .as_str()
            .expect("a message")
            .contains("same name: ldap1")
    );
    let found = call("GET", &format!("{domains}?name=ldap1"), &token, None).await;
    assert_eq!(found.body["domains"][0]["id"], id.as_str());

    let refused = call("DELETE", &format!("{domains}/{id}"), &token, None).await;
    assert_eq!(refused.status, 403);
    assert_eq!(
        refused.body["error"]["message"],
        "Cannot delete a domain that is enabled, please disable it first."
    );
    assert!(
        server
            .keystone("default", "keystone")
            .expect("runs")
            .domain("ldap1")
            .is_some()
    );
    let disabled = call(
        "PATCH",
        &format!("{domains}/{id}"),
        &token,
        Some(json!({"domain": {"enabled": false}})),
    )
    .await;
    assert_eq!(disabled.status, 200);
    assert_eq!(disabled.body["domain"]["enabled"], false);
    let deleted = call("DELETE", &format!("{domains}/{id}"), &token, None).await;
    assert_eq!(deleted.status, 204);
    let gone = call("GET", &format!("{domains}/{id}"), &token, None).await;
    assert_eq!(gone.status, 404);
    assert_eq!(
        gone.body["error"]["message"],
        format!("Could not find domain: {id}.")
    );
    assert!(
        server
            .keystone("default", "keystone")
            .expect("runs")
            .domain("ldap1")
            .is_none()
    );
}

#[tokio::test]
async fn calls_without_a_valid_token_are_refused_401() {
    let (_server, client) = server().await;
    let url = bootstrapped(&client, "default", "keystone", "secret").await;
    let valid = token(&url, "secret").await;
    let domains = format!("{url}/v3/domains");
    let ok = call("GET", &domains, &valid, None).await;
    assert_eq!(ok.status, 200);
    for answer in [
        send("GET", &domains, &[], None).await,
        call("GET", &domains, "not-a-token", None).await,
    ] {
        assert_eq!(answer.status, 401, "{:?}", answer.body);
        assert_eq!(answer.body["error"]["title"], "Unauthorized");
    }
}

/// Runs kubectl with `kubeconfig`; answers its stdout.
async fn kubectl(kubeconfig: &std::path::Path, args: &[&str]) -> String {
    let output = tokio::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .await
        .expect("kubectl runs (.ci/run installs Debian's kubernetes-client)");
    assert!(output.status.success(), "kubectl {args:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test]
async fn kubectl_shows_the_stand_in_endpoint_and_the_unavailable_annotation_makes_it_answer_503() {
    let (server, client) = server().await;
    let url = bootstrapped(&client, "default", "keystone", "secret").await;
    let dir = tempfile::tempdir().expect("a temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    server
        .write_kubeconfig(&kubeconfig)
        .expect("the kubeconfig is written");
    let endpoint = kubectl(
        &kubeconfig,
        &[
            "get",
            "endpointslices",
            "-l",
            "kubernetes.io/service-name=keystone",
            "-o",
            "jsonpath={.items[0].endpoints[0].addresses[0]}:{.items[0].ports[0].port}",
        ],
    )
    .await;
    assert_eq!(format!("http://{endpoint}"), url);

    let toggle = format!("{KEYSTONE_UNAVAILABLE_ANNOTATION}=true");
    kubectl(
        &kubeconfig,
        &["annotate", "deployment", "keystone", &toggle],
    )
    .await;
    let down = eventually("503", || async {
        let answer = send("GET", &format!("{url}/v3"), &[], None).await;
        (answer.status == 503).then_some(answer)
    })
    .await;
    assert_eq!(down.body["error"]["code"], 503);
    let remove = format!("{KEYSTONE_UNAVAILABLE_ANNOTATION}-");
    kubectl(
        &kubeconfig,
        &["annotate", "deployment", "keystone", &remove],
    )
    .await;
    eventually("200 again", || async {
        (send("GET", &format!("{url}/v3"), &[], None).await.status == 200).then_some(())
    })
    .await;
    assert!(
        server
            .keystone("default", "keystone")
            .expect("runs")
            .requests()
            >= 2
    );
}
