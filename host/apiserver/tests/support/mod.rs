//! Shared helpers of the API server tests: a server per test, raw requests, fixtures.

#![allow(dead_code)]

pub mod http;
pub mod keystone;
pub mod kubectl;

use axum::http::{HeaderMap, Request, StatusCode};
use serde_json::{Value, json};
use wasm_operator_apiserver::{ApiServer, ServerConfig};

/// A fresh in-memory server and a kube client of it.
pub async fn server() -> (ApiServer, kube::Client) {
    let server = ApiServer::start(ServerConfig::default())
        .await
        .expect("the server starts");
    let client = server.client().expect("a client");
    (server, client)
}

/// A raw response.
pub struct Raw {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

/// Sends one request with a JSON (or other) body and reads the JSON answer.
pub async fn raw(
    client: &kube::Client,
    method: &str,
    path: &str,
    content_type: &str,
    body: Option<Value>,
) -> Raw {
    let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
    raw_bytes(client, method, path, content_type, bytes).await
}

/// [`raw`] with a body of any bytes.
pub async fn raw_bytes(
    client: &kube::Client,
    method: &str,
    path: &str,
    content_type: &str,
    bytes: Vec<u8>,
) -> Raw {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", content_type)
        .body(kube::client::Body::from(bytes))
        .expect("a request");
    let response = client.send(request).await.expect("the server answers");
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect_bytes().await.expect("a body");
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    Raw {
        status,
        headers,
        body,
    }
}

/// GET.
pub async fn get(client: &kube::Client, path: &str) -> Raw {
    raw(client, "GET", path, "application/json", None).await
}

/// POST a JSON body.
pub async fn post(client: &kube::Client, path: &str, body: Value) -> Raw {
    raw(client, "POST", path, "application/json", Some(body)).await
}

/// A ConfigMap body.
pub fn config_map(name: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data})
}

/// The resourceVersion of an object, as a number.
pub fn rv(object: &Value) -> u64 {
    object["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("a numeric resourceVersion")
}

/// A CRD of `widgets.example.com` (Widget, namespaced, v1 served and stored, status
/// subresource) with `schema` as its openAPIV3Schema.
pub fn widget_crd(schema: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": schema},
            }],
        },
    })
}

/// The schema of the Widget test kind.
pub fn widget_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["size"],
                "properties": {
                    "size": {"type": "integer", "minimum": 1, "maximum": 10},
                    "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
                    "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
                },
            },
            "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
        },
    })
}

/// Creates the Widget CRD.
pub async fn install_widgets(client: &kube::Client) {
    let created = post(
        client,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        widget_crd(widget_schema()),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
}

/// A Widget body.
pub fn widget(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec})
}

/// A fresh server running `actors`, and a kube client of it.
pub async fn actor_server(actors: &[wasm_operator_apiserver::Actor]) -> (ApiServer, kube::Client) {
    let server = ApiServer::start(ServerConfig {
        actors: actors.to_vec(),
        ..ServerConfig::default()
    })
    .await
    .expect("the server starts with its actors");
    let client = server.client().expect("a client");
    (server, client)
}

/// Polls `probe` until it yields a value (every 50 ms, for up to a generous 60 s); panics
/// naming `what` and the last observation otherwise.
pub async fn wait_for<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, String>>,
{
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        match probe().await {
            Ok(value) => return value,
            Err(last) if std::time::Instant::now() > deadline => {
                panic!("timed out waiting for {what}; last seen: {last}")
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
        }
    }
}

/// The condition of `type_` of an object, if it has one.
pub fn condition<'a>(object: &'a Value, type_: &str) -> Option<&'a Value> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

/// Waits until `path` answers an object whose condition `type_` has `status`; returns it.
pub async fn wait_condition(client: &kube::Client, path: &str, type_: &str, status: &str) -> Value {
    wait_for(&format!("{path} {type_}={status}"), || async {
        let got = get(client, path).await;
        match condition(&got.body, type_) {
            Some(c) if c["status"] == status => Ok(got.body),
            _ => Err(got.body.to_string()),
        }
    })
    .await
}

/// The managers of an object's managedFields entries (with their subresource, if any).
pub fn managers(object: &Value) -> Vec<(String, String)> {
    object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            (
                m["manager"].as_str().unwrap_or_default().to_owned(),
                m["subresource"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// Decodes one key of a Secret's data.
pub fn secret_value(secret: &Value, key: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let text = secret["data"][key].as_str()?;
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

/// Sends `body` with a method and content type and asserts a 2xx answer.
pub async fn send_ok(
    client: &kube::Client,
    method: &str,
    path: &str,
    content_type: &str,
    body: Value,
) -> Value {
    let answer = raw(client, method, path, content_type, Some(body)).await;
    assert!(
        answer.status.is_success(),
        "{method} {path}: {} {}",
        answer.status,
        answer.body
    );
    answer.body
}
