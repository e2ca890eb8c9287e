//! CustomResourceDefinitions: serving, validation, defaults, field validation modes.

use serde_json::json;

use crate::support::{get, install_widgets, post, raw, server, widget, widget_crd, widget_schema};

const WIDGETS: &str = "/apis/example.com/v1/namespaces/default/widgets";

#[tokio::test]
async fn a_created_crd_is_established_and_its_kind_is_served_until_it_is_deleted() {
    let (_server, client) = server().await;
    let created = post(
        &client,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        widget_crd(widget_schema()),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let conditions = created.body["status"]["conditions"]
        .as_array()
        .expect("conditions");
    assert!(
        conditions
            .iter()
            .any(|c| c["type"] == "Established" && c["status"] == "True")
    );
    let resources = get(&client, "/apis/example.com/v1").await;
    assert_eq!(resources.body["resources"][0]["name"], "widgets");
    assert_eq!(resources.body["resources"][0]["shortNames"], json!(["wd"]));
    assert_eq!(
        post(&client, WIDGETS, widget("w", json!({"size": 2})))
            .await
            .status,
        201
    );
    raw(
        &client,
        "DELETE",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
        "application/json",
        None,
    )
    .await;
    assert_eq!(get(&client, &format!("{WIDGETS}/w")).await.status, 404);
}

#[tokio::test]
async fn a_custom_resource_gets_its_schema_defaults() {
    let (_server, client) = server().await;
    install_widgets(&client).await;
    let created = post(&client, WIDGETS, widget("w", json!({"size": 2}))).await;
    assert_eq!(created.body["spec"]["color"], "red");
}

#[tokio::test]
async fn an_invalid_custom_resource_is_a_422_naming_each_field() {
    let (_server, client) = server().await;
    install_widgets(&client).await;
    let cases = [
        (
            json!({}),
            "Widget.example.com \"w\" is invalid: spec.size: Required value",
        ),
        (
            json!({"size": 11}),
            "Widget.example.com \"w\" is invalid: spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10",
        ),
        (
            json!({"size": 1, "color": "green"}),
            "Widget.example.com \"w\" is invalid: spec.color: Unsupported value: \"green\": supported values: \"red\", \"blue\"",
        ),
    ];
    for (spec, message) in cases {
        let refused = post(&client, WIDGETS, widget("w", spec.clone())).await;
        assert_eq!(refused.status, 422, "{spec}");
        assert_eq!(refused.body["message"], message, "{spec}");
        assert_eq!(refused.body["details"]["kind"], "Widget");
    }
}

#[tokio::test]
async fn an_undeclared_field_is_refused_by_strict_dropped_with_a_warning_by_default_and_silently_by_ignore()
 {
    let (_server, client) = server().await;
    install_widgets(&client).await;
    let body = |name: &str| widget(name, json!({"size": 1, "policy": "fill-missing"}));
    let strict = post(
        &client,
        &format!("{WIDGETS}?fieldValidation=Strict"),
        body("s"),
    )
    .await;
    assert_eq!(strict.status, 400);
    assert_eq!(
        strict.body["message"],
        "strict decoding error: unknown field \"spec.policy\""
    );
    let warn = post(&client, WIDGETS, body("w")).await;
    assert_eq!(warn.status, 201);
    assert_eq!(warn.body["spec"].get("policy"), None);
    let warning = warn
        .headers
        .get("warning")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert_eq!(warning, "299 - \"unknown field \\\"spec.policy\\\"\"");
    let ignore = post(
        &client,
        &format!("{WIDGETS}?fieldValidation=Ignore"),
        body("i"),
    )
    .await;
    assert_eq!(ignore.status, 201);
    assert!(ignore.headers.get("warning").is_none());
}
