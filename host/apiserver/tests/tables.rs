//! `meta.k8s.io` Tables: what the real `kubectl get` prints for a CRD's printer columns, the
//! CRD default, built-in kinds; and the Table JSON a raw request with kubectl's Accept gets.

use serde_json::{Value, json};

use crate::support::http::{Answer, send};
use crate::support::kubectl::Kubectl;
use crate::support::{get, install_widgets, post, server, widget};

/// The Accept header `kubectl get` sends.
const KUBECTL_ACCEPT: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

const GADGETS: &str = "/apis/example.com/v1/namespaces/default/gadgets";

/// The Gadget CRD: printer columns Ready (a condition filter), Owner (a spec string),
/// Replicas (an integer), First Port (priority 1) and Age.
fn gadget_crd() -> Value {
    let string = json!({"type": "string"});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [
                    {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
                    {"name": "Owner", "type": "string", "jsonPath": ".spec.owner", "description": "Who owns it."},
                    {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                    {"name": "First Port", "type": "string", "jsonPath": ".spec.ports[0].name", "priority": 1},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                ],
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {"type": "object", "properties": {
                            "owner": string,
                            "replicas": {"type": "integer"},
                            "ports": {"type": "array", "items": {"type": "object", "properties": {"name": string}}},
                        }},
                        "status": {"type": "object", "properties": {
                            "conditions": {"type": "array", "items": {"type": "object",
                                "properties": {"type": string, "status": string}}},
                        }},
                    },
                }},
            }],
        },
    })
}

/// Creates the Gadget CRD and two gadgets: `alpha` (Ready=True, a port) and `beta` (no
/// status, no ports).
async fn install_gadgets(client: &kube::Client) {
    let created = post(
        client,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        gadget_crd(),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    for (name, spec) in [
        (
            "alpha",
            json!({"owner": "team-a", "replicas": 3, "ports": [{"name": "http"}, {"name": "https"}]}),
        ),
        ("beta", json!({"owner": "team-b", "replicas": 1})),
    ] {
        let body = json!({"apiVersion": "example.com/v1", "kind": "Gadget",
            "metadata": {"name": name}, "spec": spec});
        let created = post(client, GADGETS, body).await;
        assert_eq!(created.status, 201, "{}", created.body);
    }
    let mut alpha = get(client, &format!("{GADGETS}/alpha")).await.body;
    alpha["status"] = json!({"conditions": [
        {"type": "Progressing", "status": "False"},
        {"type": "Ready", "status": "True"},
    ]});
    let updated = crate::support::raw(
        client,
        "PUT",
        &format!("{GADGETS}/alpha/status"),
        "application/json",
        Some(alpha),
    )
    .await;
    assert_eq!(updated.status, 200, "{}", updated.body);
}

fn is_age(cell: &str) -> bool {
    cell.strip_suffix('s')
        .is_some_and(|n| n.parse::<u32>().is_ok_and(|n| n < 120))
}

#[tokio::test]
async fn kubectl_get_prints_a_crd_s_printer_columns() {
    let (server, client) = server().await;
    install_gadgets(&client).await;
    let kubectl = Kubectl::for_server(&server);

    let table = kubectl.table(&["get", "gadgets"]).await;
    assert_eq!(table[0], ["NAME", "READY", "OWNER", "REPLICAS", "AGE"]);
    assert_eq!(table[1][..4], ["alpha", "True", "team-a", "3"]);
    assert_eq!(table[2][..4], ["beta", "<none>", "team-b", "1"]);
    assert!(is_age(&table[1][4]) && is_age(&table[2][4]), "{table:?}");
    assert_eq!(table.len(), 3, "{table:?}");

    let wide = kubectl.table(&["get", "gadgets", "-o", "wide"]).await;
    assert_eq!(
        wide[0],
        ["NAME", "READY", "OWNER", "REPLICAS", "FIRST PORT", "AGE"]
    );
    assert_eq!(wide[1][..5], ["alpha", "True", "team-a", "3", "http"]);
    assert_eq!(wide[2][..5], ["beta", "<none>", "team-b", "1", "<none>"]);

    let one = kubectl.table(&["get", "gadget", "alpha"]).await;
    assert_eq!(one[0], ["NAME", "READY", "OWNER", "REPLICAS", "AGE"]);
    assert_eq!(one[1][..4], ["alpha", "True", "team-a", "3"]);
}

#[tokio::test]
async fn kubectl_get_of_a_crd_without_printer_columns_prints_name_and_age() {
    let (server, client) = server().await;
    install_widgets(&client).await;
    let created = post(
        &client,
        "/apis/example.com/v1/namespaces/default/widgets",
        widget("w1", json!({"size": 2})),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);

    let table = Kubectl::for_server(&server)
        .table(&["get", "widgets"])
        .await;
    assert_eq!(table[0], ["NAME", "AGE"]);
    assert_eq!(table[1][0], "w1");
    assert!(is_age(&table[1][1]), "{table:?}");
}

async fn table_request(server: &wasm_operator_apiserver::ApiServer, path: &str) -> Answer {
    send(
        "GET",
        &format!("{}{path}", server.url()),
        &[("accept", KUBECTL_ACCEPT)],
        None,
    )
    .await
}

#[tokio::test]
async fn a_table_request_answers_column_definitions_cells_and_partial_metadata() {
    let (server, client) = server().await;
    install_gadgets(&client).await;
    let list = get(&client, GADGETS).await.body;

    let answer = table_request(&server, GADGETS).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let table = answer.body;
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(
        table["metadata"]["resourceVersion"],
        list["metadata"]["resourceVersion"]
    );
    let columns: Vec<(&str, &str, i64)> = table["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or_default(),
                c["type"].as_str().unwrap_or_default(),
                c["priority"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    assert_eq!(
        columns,
        [
            ("Name", "string", 0),
            ("Ready", "string", 0),
            ("Owner", "string", 0),
            ("Replicas", "integer", 0),
            ("First Port", "string", 1),
            ("Age", "date", 0),
        ]
    );
    assert_eq!(table["columnDefinitions"][0]["format"], "name");
    assert!(
        table["columnDefinitions"][0]["description"]
            .as_str()
            .is_some_and(|d| d.starts_with("Name must be unique within a namespace.")),
        "{}",
        table["columnDefinitions"][0]
    );
    assert_eq!(table["columnDefinitions"][2]["description"], "Who owns it.");
    assert_eq!(
        table["columnDefinitions"][3]["description"],
        "Custom resource definition column (in JSONPath format): .spec.replicas"
    );
    let rows = table["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 2);
    assert_eq!(
        rows[0]["cells"][..5],
        [
            json!("alpha"),
            json!("True"),
            json!("team-a"),
            json!(3),
            json!("http")
        ]
    );
    assert_eq!(
        rows[1]["cells"][..5],
        [
            json!("beta"),
            Value::Null,
            json!("team-b"),
            json!(1),
            Value::Null
        ]
    );
    assert!(
        is_age(rows[0]["cells"][5].as_str().unwrap_or_default()),
        "{}",
        rows[0]
    );
    let object = &rows[0]["object"];
    assert_eq!(object["kind"], "PartialObjectMetadata");
    assert_eq!(object["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(object["metadata"], list["items"][0]["metadata"]);
    assert!(object.get("spec").is_none(), "{object}");
}

#[tokio::test]
async fn include_object_and_the_version_asked_shape_the_rows() {
    let (server, client) = server().await;
    install_gadgets(&client).await;

    let whole = table_request(&server, &format!("{GADGETS}?includeObject=Object")).await;
    assert_eq!(whole.body["rows"][0]["object"]["kind"], "Gadget");
    assert_eq!(whole.body["rows"][0]["object"]["spec"]["owner"], "team-a");

    let none = table_request(&server, &format!("{GADGETS}?includeObject=None")).await;
    assert_eq!(none.body["rows"][0]["object"], Value::Null);
    assert_eq!(none.body["rows"][0]["cells"][0], "alpha");

    let bad = table_request(&server, &format!("{GADGETS}?includeObject=Everything")).await;
    assert_eq!(bad.status, 400);
    assert_eq!(
        bad.body["message"],
        "Unable to convert to Table as requested: includeObject: Invalid value: \"Everything\": must be 'Metadata', 'Object', 'None', or empty"
    );

    let beta1 = send(
        "GET",
        &format!("{}{GADGETS}", server.url()),
        &[(
            "accept",
            "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
        )],
        None,
    )
    .await;
    assert_eq!(beta1.body["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(
        beta1.body["rows"][0]["object"]["apiVersion"],
        "meta.k8s.io/v1beta1"
    );

    let plain = send(
        "GET",
        &format!("{}{GADGETS}", server.url()),
        &[("accept", "application/json")],
        None,
    )
    .await;
    assert_eq!(plain.body["kind"], "GadgetList");
}

#[tokio::test]
async fn a_table_of_one_object_or_one_page_keeps_its_resource_version_and_continue() {
    let (server, client) = server().await;
    install_gadgets(&client).await;
    let alpha = get(&client, &format!("{GADGETS}/alpha")).await.body;

    let one = table_request(&server, &format!("{GADGETS}/alpha"))
        .await
        .body;
    assert_eq!(one["kind"], "Table");
    assert_eq!(
        one["metadata"]["resourceVersion"],
        alpha["metadata"]["resourceVersion"]
    );
    assert_eq!(one["rows"].as_array().map(Vec::len), Some(1));
    assert_eq!(one["rows"][0]["cells"][1], "True");

    let page = table_request(&server, &format!("{GADGETS}?limit=1"))
        .await
        .body;
    let plain_page = get(&client, &format!("{GADGETS}?limit=1")).await.body;
    assert_eq!(page["rows"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        page["metadata"]["continue"],
        plain_page["metadata"]["continue"]
    );
    assert_eq!(page["metadata"]["remainingItemCount"], 1);
    let next = table_request(
        &server,
        &format!(
            "{GADGETS}?limit=1&continue={}",
            page["metadata"]["continue"]
                .as_str()
                .expect("a continue token")
        ),
    )
    .await
    .body;
    assert_eq!(next["rows"][0]["cells"][0], "beta");
}

#[tokio::test]
async fn a_watch_asking_for_a_table_is_not_acceptable() {
    let (server, client) = server().await;
    install_gadgets(&client).await;
    let answer = table_request(&server, &format!("{GADGETS}?watch=true")).await;
    assert_eq!(answer.status, 406, "{}", answer.body);
    assert_eq!(answer.body["kind"], "Status");
    assert_eq!(answer.body["reason"], "NotAcceptable");
}

#[tokio::test]
async fn a_printer_column_path_not_starting_with_a_dot_is_invalid() {
    let (_server, client) = server().await;
    let mut crd = gadget_crd();
    crd["spec"]["versions"][0]["additionalPrinterColumns"][1]["jsonPath"] = json!("spec.owner");
    let refused = post(
        &client,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        crd,
    )
    .await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert_eq!(
        refused.body["message"],
        "CustomResourceDefinition.apiextensions.k8s.io \"gadgets.example.com\" is invalid: spec.versions[0].additionalPrinterColumns[1].JSONPath: Invalid value: \"spec.owner\": must be a simple json path starting with ."
    );
}

#[tokio::test]
async fn kubectl_get_prints_the_built_in_kinds_columns() {
    let (server, client) = server().await;
    let kubectl = Kubectl::for_server(&server);
    let manifests = r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {a: "1", b: "2"}
---
apiVersion: v1
kind: Secret
metadata: {name: creds}
type: Opaque
stringData: {password: hunter2}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: "nginx:1"}]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader}
rules: []
"#;
    kubectl.ok(&["apply", "-f", "-"], Some(manifests)).await;

    let cm = kubectl.table(&["get", "configmap", "settings"]).await;
    assert_eq!(cm[0], ["NAME", "DATA", "AGE"]);
    assert_eq!(cm[1][..2], ["settings", "2"]);

    let secret = kubectl.table(&["get", "secret", "creds"]).await;
    assert_eq!(secret[0], ["NAME", "TYPE", "DATA", "AGE"]);
    assert_eq!(secret[1][..3], ["creds", "Opaque", "1"]);

    let service = kubectl
        .table(&["get", "service", "web", "-o", "wide"])
        .await;
    assert_eq!(
        service[0],
        [
            "NAME",
            "TYPE",
            "CLUSTER-IP",
            "EXTERNAL-IP",
            "PORT(S)",
            "AGE",
            "SELECTOR"
        ]
    );
    assert_eq!(service[1][..2], ["web", "ClusterIP"]);
    assert!(service[1][2].starts_with("10.96."), "{service:?}");
    assert_eq!(service[1][3..5], ["<none>", "80/TCP"]);
    assert_eq!(service[1][6], "app=web");

    let deployment = kubectl
        .table(&["get", "deployment", "web", "-o", "wide"])
        .await;
    assert_eq!(
        deployment[0],
        [
            "NAME",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR"
        ]
    );
    assert_eq!(deployment[1][..4], ["web", "0/2", "0", "0"]);
    assert_eq!(deployment[1][5..], ["app", "nginx:1", "app=web"]);

    let namespaces = kubectl.table(&["get", "namespace", "default"]).await;
    assert_eq!(namespaces[0], ["NAME", "STATUS", "AGE"]);
    assert_eq!(namespaces[1][..2], ["default", "Active"]);

    // A kind without its own columns gets kube-apiserver's default table.
    let role = get(
        &client,
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/reader",
    )
    .await
    .body;
    let roles = kubectl.table(&["get", "role", "reader"]).await;
    assert_eq!(roles[0], ["NAME", "CREATED AT"]);
    assert_eq!(
        roles[1],
        [
            "reader",
            role["metadata"]["creationTimestamp"]
                .as_str()
                .unwrap_or("?")
        ]
    );
}
