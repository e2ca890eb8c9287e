//! Verbs and metadata: get, list, create, update, delete, deletecollection, status.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use serde_json::json;

use crate::support::{config_map, get, post, raw, raw_bytes, rv, server, widget};

#[tokio::test]
async fn a_created_object_gets_uid_creation_timestamp_and_a_resource_version() {
    let (_server, client) = server().await;
    let before = rv(&get(&client, "/api/v1/namespaces/default/configmaps")
        .await
        .body);
    let created = post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("a", json!({"k": "v"})),
    )
    .await;
    assert_eq!(created.status, 201);
    let meta = &created.body["metadata"];
    assert_eq!(meta["uid"].as_str().map(str::len), Some(36));
    assert!(
        meta["creationTimestamp"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );
    assert!(
        rv(&created.body) > before,
        "the new object's resourceVersion is newer than the list's before it"
    );
    assert_eq!(meta["namespace"], "default");
    let again = post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("a", json!({})),
    )
    .await;
    assert_eq!(again.status, 409);
    assert_eq!(again.body["reason"], "AlreadyExists");
    assert_eq!(again.body["message"], "configmaps \"a\" already exists");
}

/// kube-apiserver keeps `metadata.generation` for custom resources and the built-ins with a
/// spec a controller observes, and none for ConfigMaps and the like — even when the client
/// sends one.
#[tokio::test]
async fn generation_is_set_on_custom_resources_and_deployments_and_not_on_config_maps() {
    let (_server, client) = server().await;
    crate::support::install_widgets(&client).await;
    let mut cm = config_map("plain", json!({"k": "v"}));
    cm["metadata"]["generation"] = json!(7);
    let cm = post(&client, "/api/v1/namespaces/default/configmaps", cm).await;
    assert_eq!(cm.status, 201, "{}", cm.body);
    assert!(
        cm.body["metadata"].get("generation").is_none(),
        "{}",
        cm.body
    );
    let widget = post(
        &client,
        "/apis/example.com/v1/namespaces/default/widgets",
        widget("w", json!({"size": 1})),
    )
    .await;
    assert_eq!(widget.body["metadata"]["generation"], 1, "{}", widget.body);
    let deployment = post(
        &client,
        "/apis/apps/v1/namespaces/default/deployments",
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"selector": {"matchLabels": {"app": "d"}},
                "template": {"metadata": {"labels": {"app": "d"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]}}}}),
    )
    .await;
    assert_eq!(deployment.status, 201, "{}", deployment.body);
    assert_eq!(deployment.body["metadata"]["generation"], 1);
    let changed = raw(
        &client,
        "PATCH",
        "/api/v1/namespaces/default/configmaps/plain",
        "application/merge-patch+json",
        Some(json!({"data": {"k": "w"}})),
    )
    .await;
    assert_eq!(changed.status, 200, "{}", changed.body);
    assert!(changed.body["metadata"].get("generation").is_none());
}

#[tokio::test]
async fn resource_versions_grow_monotonically_across_kinds() {
    let (_server, client) = server().await;
    let a = post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("a", json!({})),
    )
    .await;
    let s = post(
        &client,
        "/api/v1/namespaces/default/secrets",
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}),
    )
    .await;
    let b = post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("b", json!({})),
    )
    .await;
    assert!(rv(&a.body) < rv(&s.body) && rv(&s.body) < rv(&b.body));
}

#[tokio::test]
async fn generate_name_makes_a_unique_name_and_dry_run_stores_nothing() {
    let (_server, client) = server().await;
    let body =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-"}});
    let mut names = std::collections::BTreeSet::new();
    for _ in 0..100 {
        let created = post(
            &client,
            "/api/v1/namespaces/default/configmaps",
            body.clone(),
        )
        .await;
        assert_eq!(created.status, 201, "{}", created.body);
        let name = created.body["metadata"]["name"]
            .as_str()
            .expect("a name")
            .to_owned();
        // kube's suffix: five characters of an alphabet without vowels and look-alikes.
        let suffix = name.strip_prefix("gen-").expect("the prefix");
        assert!(
            suffix.len() == 5
                && suffix
                    .bytes()
                    .all(|b| b"bcdfghjklmnpqrstvwxz2456789".contains(&b)),
            "{name}"
        );
        assert!(names.insert(name.clone()), "{name} was given twice");
    }
    let listed = get(&client, "/api/v1/namespaces/default/configmaps").await;
    let stored = listed.body["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|i| i["metadata"]["generateName"] == "gen-")
        .count();
    assert_eq!(stored, 100, "every generated name is its own object");
    let dry = post(
        &client,
        "/api/v1/namespaces/default/configmaps?dryRun=All",
        config_map("dry", json!({})),
    )
    .await;
    assert_eq!(dry.status, 201);
    assert_eq!(
        get(&client, "/api/v1/namespaces/default/configmaps/dry")
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn an_update_with_a_stale_resource_version_is_a_409_conflict() {
    let (_server, client) = server().await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let created = api
        .create(
            &PostParams::default(),
            &serde_json::from_value(config_map("a", json!({"k": "1"}))).expect("cm"),
        )
        .await
        .expect("create");
    let mut first = created.clone();
    first.data = Some([("k".to_owned(), "2".to_owned())].into());
    api.replace("a", &PostParams::default(), &first)
        .await
        .expect("first update");
    let mut stale = created;
    stale.data = Some([("k".to_owned(), "3".to_owned())].into());
    let err = api
        .replace("a", &PostParams::default(), &stale)
        .await
        .expect_err("stale");
    let kube::Error::Api(status) = err else {
        panic!("{err:?}")
    };
    assert_eq!(status.code, 409);
    assert_eq!(
        status.message,
        "Operation cannot be fulfilled on configmaps \"a\": the object has been modified; please apply your changes to the latest version and try again"
    );
}

#[tokio::test]
async fn an_update_that_changes_nothing_keeps_the_resource_version() {
    let (_server, client) = server().await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let created = api
        .create(
            &PostParams::default(),
            &serde_json::from_value(config_map("a", json!({"k": "1"}))).expect("cm"),
        )
        .await
        .expect("create");
    let same = api
        .replace("a", &PostParams::default(), &created)
        .await
        .expect("update");
    assert_eq!(
        same.metadata.resource_version,
        created.metadata.resource_version
    );
}

#[tokio::test]
async fn list_filters_by_label_and_field_selectors_and_pages_with_limit_and_continue() {
    let (_server, client) = server().await;
    for (name, app) in [("a", "x"), ("b", "y"), ("c", "x"), ("d", "x")] {
        let mut cm = config_map(name, json!({}));
        cm["metadata"]["labels"] = json!({"app": app});
        post(&client, "/api/v1/namespaces/default/configmaps", cm).await;
    }
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let names = |list: &kube::core::ObjectList<ConfigMap>| {
        list.items
            .iter()
            .filter_map(|c| c.metadata.name.clone())
            .collect::<Vec<_>>()
    };
    let x = api
        .list(&ListParams::default().labels("app=x"))
        .await
        .expect("list");
    assert_eq!(names(&x), ["a", "c", "d"]);
    let by_name = api
        .list(&ListParams::default().fields("metadata.name=b"))
        .await
        .expect("list");
    assert_eq!(names(&by_name), ["b"]);
    let first = api
        .list(&ListParams::default().limit(2))
        .await
        .expect("page 1");
    assert_eq!(names(&first), ["a", "b"]);
    let token = first.metadata.continue_.clone().expect("a continue token");
    let second = api
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .expect("page 2");
    assert_eq!(names(&second), ["c", "d"]);
    assert_eq!(second.metadata.continue_, None);
    assert_eq!(
        second.metadata.resource_version,
        first.metadata.resource_version
    );
}

#[tokio::test]
async fn a_page_that_leaves_one_object_has_a_continue_token_counting_it() {
    let (_server, client) = server().await;
    for name in ["a", "b", "c"] {
        post(
            &client,
            "/api/v1/namespaces/default/configmaps",
            config_map(name, json!({})),
        )
        .await;
    }
    let names = |list: &serde_json::Value| {
        list["items"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|i| i["metadata"]["name"].clone())
            .collect::<Vec<_>>()
    };
    let first = get(&client, "/api/v1/namespaces/default/configmaps?limit=2")
        .await
        .body;
    assert_eq!(names(&first), [json!("a"), json!("b")]);
    assert_eq!(first["metadata"]["remainingItemCount"], 1);
    let token = first["metadata"]["continue"]
        .as_str()
        .expect("a continue token while one object is left");
    let second = get(
        &client,
        &format!("/api/v1/namespaces/default/configmaps?limit=2&continue={token}"),
    )
    .await
    .body;
    assert_eq!(names(&second), [json!("c")]);
    assert!(second["metadata"].get("continue").is_none(), "{second}");
}

#[tokio::test]
async fn a_delete_with_a_failed_precondition_is_a_409_and_deletes_nothing() {
    let (_server, client) = server().await;
    post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("a", json!({})),
    )
    .await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let params = DeleteParams {
        preconditions: Some(kube::api::Preconditions {
            uid: Some("wrong".into()),
            resource_version: None,
        }),
        ..Default::default()
    };
    let err = api.delete("a", &params).await.expect_err("precondition");
    let kube::Error::Api(status) = err else {
        panic!("{err:?}")
    };
    assert_eq!(status.code, 409);
    assert!(
        status
            .message
            .contains("Precondition failed: UID in precondition: wrong"),
        "{}",
        status.message
    );
    assert!(api.get_opt("a").await.expect("get").is_some());
}

#[tokio::test]
async fn a_delete_with_a_stale_resource_version_precondition_is_a_409_naming_both() {
    let (_server, client) = server().await;
    let created = post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("a", json!({})),
    )
    .await;
    let uid = created.body["metadata"]["uid"]
        .as_str()
        .expect("uid")
        .to_owned();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let changed = api
        .patch(
            "a",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"data": {"k": "v"}})),
        )
        .await
        .expect("patched");
    let current = changed.metadata.resource_version.expect("rv");
    let stale = created.body["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_owned();
    let with = |resource_version: &str| DeleteParams {
        preconditions: Some(kube::api::Preconditions {
            uid: Some(uid.clone()),
            resource_version: Some(resource_version.to_owned()),
        }),
        ..Default::default()
    };
    let err = api.delete("a", &with(&stale)).await.expect_err("stale");
    let kube::Error::Api(status) = err else {
        panic!("{err:?}")
    };
    assert_eq!(status.code, 409);
    assert_eq!(
        status.message,
        format!(
            "Operation cannot be fulfilled on configmaps \"a\": Precondition failed: \
             ResourceVersion in precondition: {stale}, ResourceVersion in object meta: {current}"
        )
    );
    assert!(api.get_opt("a").await.expect("get").is_some());
    api.delete("a", &with(&current))
        .await
        .expect("the current uid and resourceVersion delete it");
    assert!(api.get_opt("a").await.expect("get").is_none());
}

#[tokio::test]
async fn deletecollection_deletes_what_the_selector_matches() {
    let (_server, client) = server().await;
    for (name, app) in [("a", "x"), ("b", "y")] {
        let mut cm = config_map(name, json!({}));
        cm["metadata"]["labels"] = json!({"app": app});
        post(&client, "/api/v1/namespaces/default/configmaps", cm).await;
    }
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    api.delete_collection(
        &DeleteParams::default(),
        &ListParams::default().labels("app=x"),
    )
    .await
    .expect("deletecollection");
    assert!(api.get_opt("a").await.expect("get").is_none());
    assert!(api.get_opt("b").await.expect("get").is_some());
}

#[tokio::test]
async fn status_writes_ignore_the_spec_and_main_writes_ignore_the_status() {
    let (_server, client) = server().await;
    crate::support::install_widgets(&client).await;
    let path = "/apis/example.com/v1/namespaces/default/widgets";
    let mut body = widget("w", json!({"size": 1}));
    body["status"] = json!({"ready": true});
    let created = post(&client, path, body).await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(
        created.body.get("status"),
        None,
        "status is dropped on create"
    );
    let mut status_write = created.body.clone();
    status_write["spec"]["size"] = json!(5);
    status_write["status"] = json!({"ready": true});
    let after_status = raw(
        &client,
        "PUT",
        &format!("{path}/w/status"),
        "application/json",
        Some(status_write),
    )
    .await;
    assert_eq!(after_status.status, 200, "{}", after_status.body);
    assert_eq!(after_status.body["spec"]["size"], 1);
    assert_eq!(after_status.body["status"]["ready"], true);
    assert_eq!(
        after_status.body["metadata"]["generation"], 1,
        "a status write is no spec change"
    );
    let mut main_write = after_status.body.clone();
    main_write["spec"]["size"] = json!(2);
    main_write["status"] = json!({"ready": false});
    let after_main = raw(
        &client,
        "PUT",
        &format!("{path}/w"),
        "application/json",
        Some(main_write),
    )
    .await;
    assert_eq!(after_main.body["status"]["ready"], true);
    assert_eq!(after_main.body["spec"]["size"], 2);
    assert_eq!(after_main.body["metadata"]["generation"], 2);
}

#[tokio::test]
async fn a_status_write_to_a_missing_object_is_a_404_and_creates_nothing() {
    let (_server, client) = server().await;
    crate::support::install_widgets(&client).await;
    let path = "/apis/example.com/v1/namespaces/default/widgets";
    let mut body = widget("w", json!({"size": 1}));
    body["status"] = json!({"ready": true});
    for (method, content_type) in [
        ("PATCH", "application/apply-patch+yaml"),
        ("PATCH", "application/merge-patch+json"),
        ("PUT", "application/json"),
    ] {
        let written = raw(
            &client,
            method,
            &format!("{path}/w/status?fieldManager=actor&force=true"),
            content_type,
            Some(body.clone()),
        )
        .await;
        assert_eq!(
            written.status, 404,
            "{method} {content_type}: {}",
            written.body
        );
        assert_eq!(
            written.body["message"], "widgets.example.com \"w\" not found",
            "{method} {content_type}"
        );
    }
    // The trigger was served; the object is still missing.
    let after = get(&client, &format!("{path}/w")).await;
    assert_eq!(after.status, 404, "{}", after.body);
}

#[tokio::test]
async fn generation_is_bumped_only_when_the_spec_changes() {
    let (_server, client) = server().await;
    crate::support::install_widgets(&client).await;
    let path = "/apis/example.com/v1/namespaces/default/widgets";
    post(&client, path, widget("w", json!({"size": 1}))).await;
    let labelled = raw(
        &client,
        "PATCH",
        &format!("{path}/w"),
        "application/merge-patch+json",
        Some(json!({"metadata": {"labels": {"a": "b"}}})),
    )
    .await;
    assert_eq!(labelled.body["metadata"]["generation"], 1);
    let resized = raw(
        &client,
        "PATCH",
        &format!("{path}/w"),
        "application/merge-patch+json",
        Some(json!({"spec": {"size": 3}})),
    )
    .await;
    assert_eq!(resized.body["metadata"]["generation"], 2);
}

#[tokio::test]
async fn immutable_config_maps_and_secrets_refuse_data_changes_with_422() {
    let (_server, client) = server().await;
    let mut cm = config_map("a", json!({"k": "v"}));
    cm["immutable"] = json!(true);
    post(&client, "/api/v1/namespaces/default/configmaps", cm).await;
    let changed = raw(
        &client,
        "PATCH",
        "/api/v1/namespaces/default/configmaps/a",
        "application/merge-patch+json",
        Some(json!({"data": {"k": "w"}})),
    )
    .await;
    assert_eq!(changed.status, 422);
    assert_eq!(
        changed.body["message"],
        "ConfigMap \"a\" is invalid: data: Forbidden: field is immutable when `immutable` is set"
    );
    let labelled = raw(
        &client,
        "PATCH",
        "/api/v1/namespaces/default/configmaps/a",
        "application/merge-patch+json",
        Some(json!({"metadata": {"labels": {"l": "1"}}})),
    )
    .await;
    assert_eq!(labelled.status, 200, "metadata stays mutable");
}

#[tokio::test]
async fn a_deployment_selector_is_immutable_and_a_422_names_it() {
    let (_server, client) = server().await;
    let deployment = |labels: serde_json::Value, expressions: Option<serde_json::Value>| {
        let mut selector = json!({"matchLabels": labels.clone()});
        if let Some(e) = expressions {
            selector["matchExpressions"] = e;
        }
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"selector": selector, "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
        })
    };
    let path = "/apis/apps/v1/namespaces/default/deployments";
    let created = post(&client, path, deployment(json!({"app": "web"}), None)).await;
    assert_eq!(created.status, 201, "{}", created.body);

    let same = raw(
        &client,
        "PUT",
        &format!("{path}/web"),
        "application/json",
        Some({
            let mut d = deployment(json!({"app": "web"}), Some(json!([])));
            d["metadata"]["resourceVersion"] = created.body["metadata"]["resourceVersion"].clone();
            d
        }),
    )
    .await;
    assert_eq!(
        same.status, 200,
        "an empty matchExpressions is no change: {}",
        same.body
    );

    let changed = raw(
        &client,
        "PATCH",
        &format!("{path}/web"),
        "application/merge-patch+json",
        Some(json!({"spec": {"selector": {"matchLabels": {"track": "v2"}}}})),
    )
    .await;
    assert_eq!(changed.status, 422);
    let message = changed.body["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("Deployment.apps \"web\" is invalid: spec.selector: Invalid value: ")
            && message.ends_with(": field is immutable"),
        "{message}"
    );
    assert_eq!(
        changed.body["details"]["causes"][0]["field"],
        "spec.selector"
    );
}

#[tokio::test]
async fn a_secret_over_1_mib_is_a_422_and_a_body_over_the_limit_is_a_413() {
    let (_server, client) = server().await;
    use base64::Engine as _;
    let big = base64::engine::general_purpose::STANDARD.encode(vec![7u8; (1 << 20) + 1]);
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "big"}, "data": {"k": big}});
    let refused = post(&client, "/api/v1/namespaces/default/secrets", secret).await;
    assert_eq!(refused.status, 422);
    assert_eq!(
        refused.body["message"],
        "Secret \"big\" is invalid: data: Too long: must have at most 1048576 bytes"
    );
    let huge = "x".repeat(4 << 20);
    let too_large = post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("huge", json!({"k": huge})),
    )
    .await;
    assert_eq!(too_large.status, 413);
    assert_eq!(too_large.body["reason"], "RequestEntityTooLarge");
}

#[tokio::test]
async fn creating_in_a_missing_namespace_is_a_404_naming_the_namespace() {
    let (_server, client) = server().await;
    let refused = post(
        &client,
        "/api/v1/namespaces/nowhere/configmaps",
        config_map("a", json!({})),
    )
    .await;
    assert_eq!(refused.status, 404);
    assert_eq!(refused.body["message"], "namespaces \"nowhere\" not found");
}

#[tokio::test]
async fn an_undeclared_field_of_a_built_in_kind_follows_field_validation() {
    let (_server, client) = server().await;
    let mut cm = config_map("s", json!({"k": "v"}));
    cm["bogus"] = json!(1);
    let strict = post(
        &client,
        "/api/v1/namespaces/default/configmaps?fieldValidation=Strict",
        cm.clone(),
    )
    .await;
    assert_eq!(strict.status, 400);
    assert_eq!(
        strict.body["message"],
        "strict decoding error: unknown field \"bogus\""
    );
    let warned = post(&client, "/api/v1/namespaces/default/configmaps", cm).await;
    assert_eq!(warned.status, 201);
    assert_eq!(warned.body.get("bogus"), None);
    assert!(warned.headers.get("warning").is_some());
}

#[tokio::test]
async fn a_create_or_update_body_that_is_not_json_or_yaml_is_a_415_naming_the_types_served() {
    let (_server, client) = server().await;
    // JSON sent as protobuf is a 400: the type is served, the body is no protobuf object.
    let cases = [
        ("application/json", 201),
        ("application/json; charset=utf-8", 201),
        ("application/vnd.kubernetes.protobuf", 400),
        ("text/plain", 415),
    ];
    for (i, (content_type, expected)) in cases.into_iter().enumerate() {
        let body = config_map(&format!("typed-{i}"), json!({"k": "v"}));
        let answer = raw(
            &client,
            "POST",
            "/api/v1/namespaces/default/configmaps",
            content_type,
            Some(body.clone()),
        )
        .await;
        assert_eq!(answer.status, expected, "{content_type}: {}", answer.body);
        if expected == 415 {
            assert_eq!(answer.body["reason"], "UnsupportedMediaType");
            assert_eq!(
                answer.body["message"],
                "the body of the request was in an unknown format - accepted media types \
                 include: application/json, application/yaml, application/vnd.kubernetes.protobuf"
            );
            let path = format!("/api/v1/namespaces/default/configmaps/typed-{i}");
            assert_eq!(get(&client, &path).await.status, 404, "nothing stored");
        }
    }
    // An update is refused the same way.
    let answer = raw(
        &client,
        "PUT",
        "/api/v1/namespaces/default/configmaps/typed-0",
        "text/plain",
        Some(config_map("typed-0", json!({"k": "w"}))),
    )
    .await;
    assert_eq!(answer.status, 415);
}

#[tokio::test]
async fn a_body_nested_past_128_levels_is_a_400_before_any_parsing_and_the_server_serves_on() {
    let (_server, client) = server().await;
    // Widgets whose schema keeps anything, so a nested list is a valid field.
    let crd = crate::support::widget_crd(
        json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
    );
    let installed = post(
        &client,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        crd,
    )
    .await;
    assert_eq!(installed.status, 201, "{}", installed.body);
    let path = "/apis/example.com/v1/namespaces/default/widgets";
    let nested = |levels: usize| {
        let list = format!("{}\"x\"{}", "[".repeat(levels), "]".repeat(levels));
        format!(
            r#"{{"apiVersion":"example.com/v1","kind":"Widget","metadata":{{"name":"deep-{levels}"}},"spec":{{"k":{list}}}}}"#
        )
        .into_bytes()
    };
    let cases = [
        // The one accepted row.
        ("application/json", nested(100), 201, ""),
        (
            "application/json",
            nested(100_000),
            400,
            "more than 128 levels deep",
        ),
        (
            "application/yaml",
            nested(100_000),
            400,
            "more than 128 levels deep",
        ),
        (
            "application/yaml",
            format!("a: {}", "[".repeat(100_000)).into_bytes(),
            400,
            "more than 128 levels deep",
        ),
    ];
    for (content_type, body, status, message) in cases {
        let answer = raw_bytes(&client, "POST", path, content_type, body).await;
        assert_eq!(answer.status, status, "{content_type}: {}", answer.body);
        let said = answer.body["message"].as_str().unwrap_or_default();
        assert!(said.contains(message), "{message:?} in {said}");
    }
    let created = post(
        &client,
        path,
        crate::support::widget("after", json!({"k": 1})),
    )
    .await;
    assert_eq!(
        created.status, 201,
        "the server serves on: {}",
        created.body
    );
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused_while_it_streams_not_once_it_ends() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let (server, _client) = server().await;
    let (mut stream, address) = crate::support::http::connect_to(&server).await;
    let head = format!(
        "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: {address}\r\n\
         Authorization: Bearer {}\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
        server.admin_token()
    );
    stream.write_all(head.as_bytes()).await.expect("the head");
    // 4 MiB in 64 KiB chunks, then the body never ends: only a server that counts while it
    // reads can answer.
    let chunk = format!("10000\r\n{}\r\n", "x".repeat(0x10000));
    for _ in 0..64 {
        if stream.write_all(chunk.as_bytes()).await.is_err() {
            break; // the server answered and closed: fine
        }
    }
    let mut answer = vec![0; 4096];
    let read = tokio::time::timeout(std::time::Duration::from_secs(30), stream.read(&mut answer))
        .await
        .expect("an answer before the body ends")
        .expect("reads");
    let answer = String::from_utf8_lossy(&answer[..read]);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("RequestEntityTooLarge"), "{answer}");
}

#[tokio::test]
async fn metadata_and_data_that_break_kube_apiservers_rules_are_refused_with_its_wording() {
    let (_server, client) = server().await;
    let config_maps = "/api/v1/namespaces/default/configmaps";
    let secrets = "/api/v1/namespaces/default/secrets";
    let object = |kind: &str, name: &str, extra: serde_json::Value| {
        let mut object = json!({"apiVersion": "v1", "kind": kind, "metadata": {"name": name}});
        for (key, value) in extra.as_object().expect("fields") {
            if key == "metadata" {
                for (k, v) in value.as_object().expect("metadata") {
                    object["metadata"][k] = v.clone();
                }
            } else {
                object[key] = value.clone();
            }
        }
        object
    };
    let big = "x".repeat(256 << 10);
    let cases = [
        // The one valid row.
        (
            config_maps,
            object(
                "ConfigMap",
                "ok",
                json!({"metadata": {"labels": {"app.kubernetes.io/name": "web"},
                "annotations": {"Example.com/Note": "any text at all"}}, "data": {"tls.crt": "x"}}),
            ),
            201,
            "",
        ),
        (
            secrets,
            object("Secret", "listed", json!({"metadata": {"labels": ["a"]}})),
            400,
            "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string",
        ),
        (
            config_maps,
            object(
                "ConfigMap",
                "bad-key",
                json!({"metadata": {"labels": {"a b": "c"}}}),
            ),
            422,
            "ConfigMap \"bad-key\" is invalid: metadata.labels: Invalid value: \"a b\": name part must consist of alphanumeric characters",
        ),
        (
            config_maps,
            object(
                "ConfigMap",
                "bad-value",
                json!({"metadata": {"labels": {"a": "b c"}}}),
            ),
            422,
            "metadata.labels: Invalid value: \"b c\": a valid label must be an empty string",
        ),
        (
            config_maps,
            object(
                "ConfigMap",
                "big-notes",
                json!({"metadata": {"annotations": {"a": big}}}),
            ),
            422,
            "metadata.annotations: Too long: must have at most 262144 bytes",
        ),
        (
            config_maps,
            object("ConfigMap", "number", json!({"data": {"k": 1}})),
            400,
            "json: cannot unmarshal number into Go struct field ConfigMap.data of type string",
        ),
        (
            config_maps,
            object("ConfigMap", "spaced", json!({"data": {"a b": "c"}})),
            422,
            "data[a b]: Invalid value: \"a b\": a valid config key must consist of",
        ),
        (
            secrets,
            object("Secret", "not-base64", json!({"data": {"k": "abc!"}})),
            400,
            "illegal base64 data at input byte 3",
        ),
    ];
    for (path, body, status, message) in cases {
        let name = body["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let answer = post(&client, path, body).await;
        assert_eq!(answer.status, status, "{name}: {}", answer.body);
        let said = answer.body["message"].as_str().unwrap_or_default();
        assert!(said.contains(message), "{name}: {message:?} in {said}");
        if status != 201 {
            let stored = get(&client, &format!("{path}/{name}")).await;
            assert_eq!(stored.status, 404, "{name}: nothing stored");
        }
    }
}

/// kube-apiserver's decoder takes a missing apiVersion and kind from the URL (what the
/// Python client's models and a bare dict send), on create and on update; a body of
/// another group/version or kind is refused with its words, on every write verb.
#[tokio::test]
async fn a_body_without_api_version_and_kind_is_the_urls_kind_and_another_version_is_refused() {
    let (_server, client) = server().await;
    let path = "/api/v1/namespaces/default/configmaps";
    let bare = json!({"metadata": {"name": "bare"}, "data": {"k": "v"}});
    let created = post(&client, path, bare).await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(
        (&created.body["apiVersion"], &created.body["kind"]),
        (&json!("v1"), &json!("ConfigMap"))
    );
    let mut update = json!({"metadata": {"name": "bare"}, "data": {"k": "w"}});
    update["metadata"]["resourceVersion"] = created.body["metadata"]["resourceVersion"].clone();
    let updated = raw(
        &client,
        "PUT",
        &format!("{path}/bare"),
        "application/json",
        Some(update),
    )
    .await;
    assert_eq!(updated.status, 200, "{}", updated.body);
    assert_eq!(updated.body["data"]["k"], "w");
    assert_eq!(updated.body["kind"], "ConfigMap");
    let only_kind = json!({"kind": "ConfigMap", "metadata": {"name": "only-kind"}});
    assert_eq!(post(&client, path, only_kind).await.status, 201);

    let version =
        "the API version in the data (apps/v1) does not match the expected API version (v1)";
    let kind = "the kind in the data (Secret) does not match the expected kind (ConfigMap)";
    let wrong_version =
        json!({"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "x"}});
    let wrong_kind = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}});
    let apply = "application/apply-patch+yaml";
    let cases = [
        (
            "POST",
            path.to_owned(),
            "application/json",
            &wrong_version,
            version,
        ),
        (
            "POST",
            path.to_owned(),
            "application/json",
            &wrong_kind,
            kind,
        ),
        (
            "PUT",
            format!("{path}/bare"),
            "application/json",
            &wrong_version,
            version,
        ),
        (
            "PATCH",
            format!("{path}/x?fieldManager=t"),
            apply,
            &wrong_version,
            version,
        ),
        (
            "PATCH",
            format!("{path}/x?fieldManager=t"),
            apply,
            &wrong_kind,
            kind,
        ),
    ];
    for (method, url, content_type, body, message) in cases {
        let answer = raw(&client, method, &url, content_type, Some(body.clone())).await;
        assert_eq!(answer.status, 400, "{method} {url}: {}", answer.body);
        assert_eq!(answer.body["reason"], "BadRequest", "{method} {url}");
        assert_eq!(answer.body["message"], message, "{method} {url}");
    }
}

/// The built-in kinds clients expect of any cluster are served, with generation where
/// kube-apiserver keeps one (a spec a controller observes) and none on a Node.
#[tokio::test]
async fn the_workload_kinds_and_nodes_a_cluster_always_has_are_served() {
    let (_server, client) = server().await;
    let template = json!({"metadata": {"labels": {"app": "a"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
    let selector = json!({"matchLabels": {"app": "a"}});
    let cases = [
        (
            "/apis/apps/v1/namespaces/default/statefulsets",
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "a"},
                "spec": {"selector": selector, "serviceName": "a", "template": template}}),
            true,
        ),
        (
            "/apis/apps/v1/namespaces/default/daemonsets",
            json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "a"},
                "spec": {"selector": selector, "template": template}}),
            true,
        ),
        (
            "/apis/apps/v1/namespaces/default/replicasets",
            json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "a"},
                "spec": {"selector": selector, "template": template}}),
            true,
        ),
        (
            "/api/v1/namespaces/default/replicationcontrollers",
            json!({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "a"},
                "spec": {"selector": {"app": "a"}, "template": template}}),
            true,
        ),
        (
            "/api/v1/nodes",
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}}),
            false,
        ),
    ];
    for (path, object, generation) in cases {
        let created = post(&client, path, object).await;
        assert_eq!(created.status, 201, "{path}: {}", created.body);
        assert_eq!(
            created.body["metadata"].get("generation").is_some(),
            generation,
            "{path}: {}",
            created.body
        );
        let listed = get(&client, path).await;
        assert_eq!(
            listed.body["items"].as_array().map(Vec::len),
            Some(1),
            "{path}"
        );
    }
    let discovery = get(&client, "/apis/apps/v1").await;
    let names: Vec<&str> = discovery.body["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["name"].as_str())
        .collect();
    for plural in ["statefulsets", "daemonsets", "replicasets", "deployments"] {
        assert!(names.contains(&plural), "{plural} in {names:?}");
    }
}
