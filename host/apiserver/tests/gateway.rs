//! The Gateway API actor: its CRDs, and HTTPRoute parent status as Gateways come and go.

use std::time::Duration;

use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use serde_json::{Value, json};
use wasm_operator_apiserver::{Actor, ApiServer, ServerConfig};

const CONTROLLER: &str = "actors.wasm-operator.dev/gateway-controller";

async fn start(config: ServerConfig) -> (ApiServer, kube::Client) {
    let server = ApiServer::start(ServerConfig {
        actors: vec![Actor::Gateway],
        ..config
    })
    .await
    .expect("the server starts with the gateway actor");
    let client = server.client().expect("a client");
    (server, client)
}

fn api(client: &kube::Client, kind: &str) -> Api<DynamicObject> {
    let ar = ApiResource::from_gvk(&GroupVersionKind::gvk(
        "gateway.networking.k8s.io",
        "v1",
        kind,
    ));
    Api::namespaced_with(client.clone(), "default", &ar)
}

async fn create(api: &Api<DynamicObject>, body: Value) {
    let object: DynamicObject = serde_json::from_value(body).expect("an object");
    api.create(&PostParams::default(), &object)
        .await
        .expect("created");
}

fn gateway() -> Value {
    json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": {"name": "public"},
        "spec": {"gatewayClassName": "cilium", "listeners": [{"name": "https", "port": 443, "protocol": "HTTPS", "hostname": "*.example.com"}]}})
}

/// The route the Keystone reconciler applies (facts §2.18), for Service `keystone`.
fn route(section: &str) -> Value {
    json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": {"name": "keystone"},
        "spec": {"parentRefs": [{"name": "public", "sectionName": section}], "hostnames": ["identity.example.com"],
            "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                "backendRefs": [{"name": "keystone", "port": 5000}]}]}})
}

async fn service(client: &kube::Client, name: &str) {
    let svc: k8s_openapi::api::core::v1::Service =
        serde_json::from_value(json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name}, "spec": {"ports": [{"port": 5000}]}}))
        .expect("a Service");
    Api::default_namespaced(client.clone())
        .create(&PostParams::default(), &svc)
        .await
        .expect("the Service");
}

/// The condition `kind` of the route's parent entry of our controller: (status, reason).
fn parent_condition(route: &DynamicObject, kind: &str) -> Option<(String, String)> {
    let parents = route.data["status"]["parents"].as_array()?;
    let ours = parents.iter().find(|p| p["controllerName"] == CONTROLLER)?;
    let c = ours["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)?;
    Some((
        c["status"].as_str()?.to_owned(),
        c["reason"].as_str()?.to_owned(),
    ))
}

async fn wait_for(routes: &Api<DynamicObject>, kind: &str, want: (&str, &str)) -> DynamicObject {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let route = routes.get("keystone").await.expect("the route");
        if parent_condition(&route, kind)
            .as_ref()
            .map(|(s, r)| (s.as_str(), r.as_str()))
            == Some(want)
        {
            return route;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no {kind}={want:?}: {:#}",
            route.data["status"]
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn an_httproute_to_an_existing_gateway_is_accepted_with_its_refs_resolved() {
    let (_server, client) = start(ServerConfig::default()).await;
    service(&client, "keystone").await;
    create(&api(&client, "Gateway"), gateway()).await;
    let routes = api(&client, "HTTPRoute");
    create(&routes, route("https")).await;
    let accepted = wait_for(&routes, "Accepted", ("True", "Accepted")).await;
    assert_eq!(
        parent_condition(&accepted, "ResolvedRefs"),
        Some(("True".into(), "ResolvedRefs".into()))
    );
    let parent = &accepted.data["status"]["parents"][0];
    assert_eq!(
        parent["parentRef"],
        json!({"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "public", "sectionName": "https"}),
        "the parentRef as stored, with the CRD's defaults"
    );
    assert_eq!(parent["conditions"][0]["observedGeneration"], 1);
    let managers: Vec<_> = accepted
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|m| {
            (
                m.manager.clone().unwrap_or_default(),
                m.subresource.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert!(
        managers.contains(&("gateway-api-controller".into(), "status".into())),
        "{managers:?}"
    );
    let gw = api(&client, "Gateway")
        .get("public")
        .await
        .expect("the Gateway");
    let programmed = gw.data["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Programmed").cloned());
    assert_eq!(programmed.map(|c| c["status"].clone()), Some(json!("True")));
}

#[tokio::test]
async fn an_httproute_is_re_evaluated_as_its_gateway_comes_and_goes() {
    let (_server, client) = start(ServerConfig::default()).await;
    service(&client, "keystone").await;
    let routes = api(&client, "HTTPRoute");
    create(&routes, route("https")).await;
    let orphan = wait_for(&routes, "Accepted", ("False", "NoMatchingParent")).await;
    let message = orphan.data["status"]["parents"][0]["conditions"][0]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        message.contains("default/public"),
        "the message names the missing Gateway: {message}"
    );
    let gateways = api(&client, "Gateway");
    create(&gateways, gateway()).await;
    wait_for(&routes, "Accepted", ("True", "Accepted")).await;
    gateways
        .delete("public", &DeleteParams::default())
        .await
        .expect("deleted");
    wait_for(&routes, "Accepted", ("False", "NoMatchingParent")).await;
}

#[tokio::test]
async fn an_httproute_to_a_missing_listener_or_service_is_not_accepted_or_resolved() {
    let (_server, client) = start(ServerConfig::default()).await;
    create(&api(&client, "Gateway"), gateway()).await;
    let routes = api(&client, "HTTPRoute");
    create(&routes, route("http")).await;
    let route = wait_for(&routes, "Accepted", ("False", "NoMatchingParent")).await;
    assert_eq!(
        parent_condition(&route, "ResolvedRefs"),
        Some(("False".into(), "BackendNotFound".into()))
    );
    // Pointing at the listener that exists and adding the Service fix both.
    let fix = json!({"spec": {"parentRefs": [{"name": "public", "sectionName": "https"}]}});
    routes
        .patch("keystone", &PatchParams::default(), &Patch::Merge(fix))
        .await
        .expect("patched");
    wait_for(&routes, "Accepted", ("True", "Accepted")).await;
    service(&client, "keystone").await;
    wait_for(&routes, "ResolvedRefs", ("True", "ResolvedRefs")).await;
}

#[tokio::test]
async fn the_gateway_actor_installs_its_crds_again_on_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = ServerConfig {
        data_dir: Some(dir.path().to_owned()),
        ..ServerConfig::default()
    };
    let (server, client) = start(config.clone()).await;
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> = Api::all(client);
    let first = crds
        .get("httproutes.gateway.networking.k8s.io")
        .await
        .expect("the HTTPRoute CRD");
    server.stop();
    let (_server, client) = start(config).await;
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> = Api::all(client.clone());
    let again = crds
        .get("httproutes.gateway.networking.k8s.io")
        .await
        .expect("the HTTPRoute CRD");
    assert_eq!(again.metadata.uid, first.metadata.uid, "the same CRD");
    assert_eq!(
        again.metadata.resource_version, first.metadata.resource_version,
        "an unchanged apply stores nothing"
    );
    for name in ["gatewayclasses", "gateways"] {
        crds.get(&format!("{name}.gateway.networking.k8s.io"))
            .await
            .expect("the CRD");
    }
}

#[tokio::test]
async fn kubectl_shows_the_routes_accepted_parent() {
    let (server, client) = start(ServerConfig::default()).await;
    service(&client, "keystone").await;
    create(&api(&client, "Gateway"), gateway()).await;
    let routes = api(&client, "HTTPRoute");
    create(&routes, route("https")).await;
    wait_for(&routes, "Accepted", ("True", "Accepted")).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    let out = tokio::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args(["get", "httproute", "keystone", "-o", r#"jsonpath={.status.parents[0].controllerName} {.status.parents[0].conditions[?(@.type=="Accepted")].status}"#])
        .output()
        .await
        .expect("kubectl runs");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{CONTROLLER} True")
    );
}

#[tokio::test]
async fn a_gateway_class_of_the_actors_controller_is_accepted_and_another_is_left_alone() {
    let (_server, client) = start(ServerConfig::default()).await;
    let ar = ApiResource::from_gvk(&GroupVersionKind::gvk(
        "gateway.networking.k8s.io",
        "v1",
        "GatewayClass",
    ));
    let classes: Api<DynamicObject> = Api::all_with(client, &ar);
    let class = |name: &str, controller: &str| {
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
            "metadata": {"name": name}, "spec": {"controllerName": controller}})
    };
    // The foreign class comes first: by the time ours is accepted, the actor has seen it.
    create(&classes, class("foreign", "example.com/gateway-controller")).await;
    create(&classes, class("ours", CONTROLLER)).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let ours = classes.get("ours").await.expect("the class");
        let accepted = ours.data["status"]["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == "Accepted").cloned());
        if let Some(c) = accepted {
            assert_eq!(
                (&c["status"], &c["reason"]),
                (&json!("True"), &json!("Accepted"))
            );
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "ours was never accepted"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let foreign = classes.get("foreign").await.expect("the class");
    assert_eq!(
        foreign.data.get("status"),
        None,
        "another controller's class has no status from the actor"
    );
}
