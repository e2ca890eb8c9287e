//! The Table JSON of raw requests with kubectl's Accept header: column definitions, cells,
//! rows' objects, `includeObject`, the negotiated version, paging, watches; and the CRD
//! printer column validation.

use serde_json::{Value, json};

use super::{GADGETS, KUBECTL_ACCEPT, first_cells, gadget_crd, install_gadgets, is_age};
use crate::support::http::{Answer, send_trusting};
use crate::support::{get, post, server};

/// The `Authorization` header of `server`'s admin.
fn bearer(server: &wasm_operator_apiserver::ApiServer) -> String {
    format!("Bearer {}", server.admin_token())
}

async fn table_request(server: &wasm_operator_apiserver::ApiServer, path: &str) -> Answer {
    send_trusting(
        server.ca_pem(),
        "GET",
        &format!("{}{path}", server.url()),
        &[
            ("accept", KUBECTL_ACCEPT),
            ("authorization", &bearer(server)),
        ],
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
        first_cells(&rows[0], 5),
        [
            json!("alpha"),
            json!("True"),
            json!("team-a"),
            json!(3),
            json!("http")
        ]
    );
    assert_eq!(
        first_cells(&rows[1], 5),
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

    let beta1 = send_trusting(
        server.ca_pem(),
        "GET",
        &format!("{}{GADGETS}", server.url()),
        &[
            (
                "accept",
                "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
            ),
            ("authorization", &bearer(&server)),
        ],
        None,
    )
    .await;
    assert_eq!(beta1.body["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(
        beta1.body["rows"][0]["object"]["apiVersion"],
        "meta.k8s.io/v1beta1"
    );

    let plain = send_trusting(
        server.ca_pem(),
        "GET",
        &format!("{}{GADGETS}", server.url()),
        &[
            ("accept", "application/json"),
            ("authorization", &bearer(&server)),
        ],
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
async fn a_watch_asking_for_a_table_streams_one_row_tables_with_headers_first() {
    let (server, client) = server().await;
    install_gadgets(&client).await;
    // The backlog of a watch without a version: both gadgets as ADDED, then the timeout.
    let answer = send_trusting(
        server.ca_pem(),
        "GET",
        &format!("{}{GADGETS}?watch=true&timeoutSeconds=1", server.url()),
        &[
            ("accept", KUBECTL_ACCEPT),
            ("authorization", &bearer(&server)),
        ],
        None,
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let text = answer
        .body
        .as_str()
        .expect("newline-delimited events")
        .to_owned();
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON event"))
        .collect();
    assert_eq!(events.len(), 2, "{text}");
    assert_eq!(events[0]["type"], "ADDED");
    assert_eq!(events[0]["object"]["kind"], "Table");
    assert_eq!(events[0]["object"]["columnDefinitions"][1]["name"], "Ready");
    assert_eq!(
        first_cells(&events[0]["object"]["rows"][0], 3),
        [json!("alpha"), json!("True"), json!("team-a")]
    );
    assert_eq!(events[1]["object"]["columnDefinitions"], Value::Null);
    assert_eq!(events[1]["object"]["rows"][0]["cells"][0], "beta");
    assert_eq!(
        events[1]["object"]["rows"][0]["object"]["kind"],
        "PartialObjectMetadata"
    );
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
