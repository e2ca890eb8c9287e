//! Server-side apply: managedFields per manager, conflicts, force, removal, no-op applies.

use serde_json::{Value, json};

use crate::support::{config_map, raw, rv, server};

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
