//! CRD validation rules (`x-kubernetes-validations`) over HTTP: a rule that does not compile
//! refuses the CRD, a custom resource that fails one is a 422 worded as kube-apiserver
//! words it, transition rules see the stored object, and unchanged values are ratcheted.

use serde_json::{Value, json};

use crate::support::kubectl::Kubectl;
use crate::support::{Raw, post, raw, server, widget, widget_crd};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const WIDGETS: &str = "/apis/example.com/v1/namespaces/default/widgets";

/// The Widget schema with `rules` on its spec.
fn ruled_schema(rules: Value) -> Value {
    json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "size": {"type": "integer"},
                    "mode": {"type": "string", "maxLength": 16},
                },
                "x-kubernetes-validations": rules,
            },
        },
    })
}

fn widget_rules() -> Value {
    json!([
        {"rule": "self.size <= 10", "messageExpression": "'size ' + string(self.size) + ' is over 10'"},
        {"rule": "self.mode == oldSelf.mode", "message": "mode is immutable", "reason": "FieldValueForbidden", "fieldPath": ".mode"},
    ])
}

async fn install(client: &kube::Client) {
    let created = post(client, CRDS, widget_crd(ruled_schema(widget_rules()))).await;
    assert_eq!(created.status, 201, "{}", created.body);
}

/// Merge-patches the Widget CRD's schema to carry `rules`.
async fn set_rules(client: &kube::Client, rules: Value) -> Raw {
    let patch = json!({"spec": {"versions": [{
        "name": "v1", "served": true, "storage": true,
        "schema": {"openAPIV3Schema": ruled_schema(rules)},
    }]}});
    raw(
        client,
        "PATCH",
        &format!("{CRDS}/widgets.example.com"),
        "application/merge-patch+json",
        Some(patch),
    )
    .await
}

fn warning(answer: &Raw) -> String {
    answer
        .headers
        .get("warning")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_crd_whose_rule_does_not_compile_is_refused_at_create_and_at_update() {
    let (_server, client) = server().await;
    let bad = json!([{"rule": "self.sise <= 10"}]);
    let refused = post(&client, CRDS, widget_crd(ruled_schema(bad.clone()))).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    let field =
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule";
    let body = "Invalid value: apiextensions.ValidationRule{Rule:\"self.sise <= 10\", Message:\"\", MessageExpression:\"\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:5: undefined field 'sise'\n | self.sise <= 10\n | ....^";
    assert_eq!(
        refused.body["message"],
        format!(
            "CustomResourceDefinition.apiextensions.k8s.io \"widgets.example.com\" is invalid: {field}: {body}"
        )
    );
    assert_eq!(
        refused.body["details"]["causes"],
        json!([{"reason": "FieldValueInvalid", "message": body, "field": field}])
    );
    assert_eq!(
        raw(
            &client,
            "GET",
            &format!("{CRDS}/widgets.example.com"),
            "application/json",
            None
        )
        .await
        .status,
        404
    );

    install(&client).await;
    let updated = set_rules(&client, bad).await;
    assert_eq!(updated.status, 422, "{}", updated.body);
    assert_eq!(updated.body["details"]["causes"][0]["field"], field);
}

#[tokio::test]
async fn a_custom_resource_failing_a_rule_is_a_422_worded_as_kube_apiserver_words_it() {
    let (_server, client) = server().await;
    install(&client).await;
    assert_eq!(
        post(
            &client,
            WIDGETS,
            widget("ok", json!({"size": 10, "mode": "a"}))
        )
        .await
        .status,
        201
    );
    let refused = post(
        &client,
        WIDGETS,
        widget("big", json!({"size": 11, "mode": "a"})),
    )
    .await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert_eq!(
        refused.body["message"],
        "Widget.example.com \"big\" is invalid: spec: Invalid value: \"object\": size 11 is over 10"
    );
    assert_eq!(
        refused.body["details"]["causes"],
        json!([{"reason": "FieldValueInvalid", "message": "Invalid value: \"object\": size 11 is over 10", "field": "spec"}])
    );
    // A value of the wrong type is not given to the rules.
    let mistyped = post(&client, WIDGETS, widget("typed", json!({"size": "eleven"}))).await;
    assert_eq!(mistyped.status, 422);
    assert_eq!(
        mistyped.body["message"],
        "Widget.example.com \"typed\" is invalid: [spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\", <nil>: Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]"
    );
}

#[tokio::test]
async fn a_transition_rule_refuses_a_change_and_an_unchanged_failing_value_is_a_warning() {
    let (_server, client) = server().await;
    install(&client).await;
    let created = post(
        &client,
        WIDGETS,
        widget("w", json!({"size": 3, "mode": "a"})),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let merge = |spec: Value| {
        let client = client.clone();
        async move {
            raw(
                &client,
                "PATCH",
                &format!("{WIDGETS}/w"),
                "application/merge-patch+json",
                Some(json!({"spec": spec})),
            )
            .await
        }
    };
    let changed = merge(json!({"mode": "b"})).await;
    assert_eq!(changed.status, 422, "{}", changed.body);
    assert_eq!(
        changed.body["message"],
        "Widget.example.com \"w\" is invalid: spec.mode: Forbidden: mode is immutable"
    );
    assert_eq!(merge(json!({"size": 4})).await.status, 200);

    // The rule is tightened under a stored object: the stored size 4 now fails it, but an
    // update that leaves spec as it is passes with the failure as a warning.
    let tightened = json!([{"rule": "self.size <= 2", "message": "size is over 2"}]);
    let crd = set_rules(&client, tightened).await;
    assert_eq!(crd.status, 200, "{}", crd.body);
    let labelled = raw(
        &client,
        "PATCH",
        &format!("{WIDGETS}/w"),
        "application/merge-patch+json",
        Some(json!({"metadata": {"labels": {"team": "a"}}})),
    )
    .await;
    assert_eq!(labelled.status, 200, "{}", labelled.body);
    assert_eq!(
        warning(&labelled),
        "299 - \"spec: Invalid value: \\\"object\\\": size is over 2\""
    );
    let grown = merge(json!({"size": 5})).await;
    assert_eq!(grown.status, 422);
    assert_eq!(
        grown.body["message"],
        "Widget.example.com \"w\" is invalid: spec: Invalid value: \"object\": size is over 2"
    );
}

#[tokio::test]
async fn kubectl_prints_the_rules_message_and_the_shipped_crds_rules_hold() {
    let (server, client) = server().await;
    let kubectl = Kubectl::for_server(&server);
    let crd = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../crds/glance.openstack.c5c3.io_glancebackends.yaml"),
    )
    .expect("the GlanceBackend CRD");
    kubectl.ok(&["apply", "-f", "-"], Some(&crd)).await;
    let backend = |backend_type: &str, block: &str| {
        format!(
            "apiVersion: glance.openstack.c5c3.io/v1alpha1\nkind: GlanceBackend\nmetadata:\n  name: images\n  namespace: default\nspec:\n  glanceRef:\n    name: glance\n  type: {backend_type}\n{block}"
        )
    };
    let s3 = "  s3:\n    bucket: images\n    host: https://s3.example.com\n    credentialsSecretRef:\n      name: s3\n";
    let (ok, out) = kubectl
        .run(&["apply", "-f", "-"], Some(&backend("S3", "")))
        .await;
    assert!(!ok, "{out}");
    assert!(
        out.contains("The GlanceBackend \"images\" is invalid: spec: Invalid value: \"object\": exactly one backend block matching spec.type must be set (type S3 requires spec.s3)"),
        "{out}"
    );
    let (ok, out) = kubectl
        .run(&["apply", "-f", "-"], Some(&backend("S3", s3)))
        .await;
    assert!(ok, "{out}");
    let path = "/apis/glance.openstack.c5c3.io/v1alpha1/namespaces/default/glancebackends/images";
    let renamed = raw(
        &client,
        "PATCH",
        path,
        "application/merge-patch+json",
        Some(json!({"spec": {"glanceRef": {"name": "other"}}})),
    )
    .await;
    assert_eq!(renamed.status, 422, "{}", renamed.body);
    assert_eq!(
        renamed.body["message"],
        "GlanceBackend.glance.openstack.c5c3.io \"images\" is invalid: spec: Invalid value: \"object\": glanceRef is immutable"
    );
}
