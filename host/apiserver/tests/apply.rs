//! Server-side apply: managedFields per manager, conflicts, force, removal, no-op applies.

use serde_json::{Value, json};

use crate::support::{config_map, post, raw, rv, server};

const CM: &str = "/api/v1/namespaces/default/configmaps/a";

async fn apply(
    client: &kube::Client,
    manager: &str,
    force: bool,
    body: Value,
) -> crate::support::Raw {
    let path = format!(
        "{CM}?fieldManager={manager}{}",
        if force { "&force=true" } else { "" }
    );
    raw(
        client,
        "PATCH",
        &path,
        "application/apply-patch+yaml",
        Some(body),
    )
    .await
}

fn managers(object: &Value) -> Vec<(String, String)> {
    object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            (
                e["manager"].as_str().unwrap_or_default().to_owned(),
                e["operation"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn an_apply_creates_the_object_and_records_the_managers_fields() {
    let (_server, client) = server().await;
    let created = apply(&client, "alice", false, config_map("a", json!({"k": "v"}))).await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(
        managers(&created.body),
        [("alice".to_owned(), "Apply".to_owned())]
    );
    let entry = &created.body["metadata"]["managedFields"][0];
    assert_eq!(entry["fieldsType"], "FieldsV1");
    assert_eq!(entry["apiVersion"], "v1");
    assert_eq!(
        entry["fieldsV1"],
        json!({"f:data": {"f:k": {}}}),
        "an applied set holds leaves"
    );
}

#[tokio::test]
async fn an_apply_that_changes_nothing_writes_nothing() {
    let (_server, client) = server().await;
    let first = apply(&client, "alice", false, config_map("a", json!({"k": "v"}))).await;
    let second = apply(&client, "alice", false, config_map("a", json!({"k": "v"}))).await;
    assert_eq!(second.status, 200);
    assert_eq!(rv(&second.body), rv(&first.body));
}

#[tokio::test]
async fn applying_a_field_another_manager_owns_with_another_value_is_a_409_naming_field_and_manager()
 {
    let (_server, client) = server().await;
    apply(&client, "alice", false, config_map("a", json!({"k": "v"}))).await;
    let conflict = apply(&client, "bob", false, config_map("a", json!({"k": "w"}))).await;
    assert_eq!(conflict.status, 409);
    assert_eq!(
        conflict.body["message"],
        "Apply failed with 1 conflict: conflict with \"alice\": .data.k"
    );
    assert_eq!(conflict.body["details"]["causes"][0]["field"], ".data.k");
    let forced = apply(&client, "bob", true, config_map("a", json!({"k": "w"}))).await;
    assert_eq!(forced.status, 200);
    assert_eq!(forced.body["data"]["k"], "w");
    let owners = managers(&forced.body);
    assert!(owners.contains(&("bob".into(), "Apply".into())));
}

#[tokio::test]
async fn a_field_its_sole_owner_stops_applying_is_removed_but_one_still_owned_stays() {
    let (_server, client) = server().await;
    apply(
        &client,
        "alice",
        false,
        config_map("a", json!({"mine": "1", "shared": "s"})),
    )
    .await;
    apply(
        &client,
        "bob",
        false,
        config_map("a", json!({"shared": "s"})),
    )
    .await;
    let after = apply(&client, "alice", false, config_map("a", json!({}))).await;
    assert_eq!(after.body["data"], json!({"shared": "s"}));
}

#[tokio::test]
async fn an_update_by_another_manager_takes_the_fields_it_changes() {
    let (_server, client) = server().await;
    apply(&client, "alice", false, config_map("a", json!({"k": "v"}))).await;
    let patched = raw(
        &client,
        "PATCH",
        &format!("{CM}?fieldManager=editor"),
        "application/merge-patch+json",
        Some(json!({"data": {"k": "edited"}})),
    )
    .await;
    let owners = managers(&patched.body);
    assert!(
        owners.contains(&("editor".into(), "Update".into())),
        "{owners:?}"
    );
    let conflict = apply(&client, "alice", false, config_map("a", json!({"k": "v"}))).await;
    assert_eq!(conflict.status, 409, "alice no longer owns .data.k");
}

/// structured-merge-diff's field sets: an applied empty granular list or map claims no
/// field, a key of a map (`additionalProperties`) is claimed even when its value is empty,
/// and a manager that a forced apply leaves owning nothing is dropped from managedFields.
#[tokio::test]
async fn empty_granular_values_claim_no_field_and_a_manager_owning_nothing_is_dropped() {
    let (_server, client) = server().await;
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "slots": {"type": "object",
            "additionalProperties": {"type": "object", "properties": {"size": {"type": "integer"}}}},
        "extra": {"type": "object", "properties": {"note": {"type": "string"}}},
    }}}});
    let crd = post(
        &client,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        crate::support::widget_crd(schema),
    )
    .await;
    assert_eq!(crd.status, 201, "{}", crd.body);
    let path = "/apis/example.com/v1/namespaces/default/widgets/w";
    let apply = |manager: &'static str, force: bool, spec: Value| {
        let client = client.clone();
        async move {
            let url = format!(
                "{path}?fieldManager={manager}{}",
                if force { "&force=true" } else { "" }
            );
            let body = json!({"apiVersion": "example.com/v1", "kind": "Widget",
                "metadata": {"name": "w"}, "spec": spec});
            let answer = raw(
                &client,
                "PATCH",
                &url,
                "application/apply-patch+yaml",
                Some(body),
            )
            .await;
            assert_eq!(
                answer.status.as_u16() / 100,
                2,
                "{manager}: {}",
                answer.body
            );
            answer.body
        }
    };
    let first = apply(
        "alice",
        false,
        json!({"size": 1, "tags": [], "labels": {}, "slots": {"a": {}}, "extra": {}}),
    )
    .await;
    let fields = |object: &Value, manager: &str| {
        object["metadata"]["managedFields"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|e| e["manager"] == manager)
            .map(|e| e["fieldsV1"].clone())
    };
    assert_eq!(
        fields(&first, "alice"),
        Some(json!({"f:spec": {"f:size": {}, "f:slots": {"f:a": {}}}})),
        "{first}"
    );
    let shrunk = apply("alice", false, json!({"size": 1})).await;
    assert_eq!(
        fields(&shrunk, "alice"),
        Some(json!({"f:spec": {"f:size": {}}}))
    );
    // Applying the same value shares the field; a forced other value takes it.
    let shared = apply("bob", false, json!({"size": 1})).await;
    assert!(fields(&shared, "alice").is_some() && fields(&shared, "bob").is_some());
    let taken = apply("bob", true, json!({"size": 2})).await;
    assert_eq!(fields(&taken, "alice"), None, "alice owns nothing: {taken}");
    assert_eq!(
        fields(&taken, "bob"),
        Some(json!({"f:spec": {"f:size": {}}}))
    );
}
