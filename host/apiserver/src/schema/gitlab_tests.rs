//! End to end over a GitLabSecrets-like CRD: prune, default, validate, and
//! word the results as kube-apiserver would.

use super::*;
use serde_json::{Value, json};

fn gitlab_schema() -> Value {
    json!({"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
        "spec": {"type": "object", "required": ["secrets"], "properties": {
            "secrets": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "required": ["name"], "properties": {
                    "name": {"type": "string", "pattern": "^[a-z0-9-]+$"}}}},
            "certificates": {"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"},
                "authority": {"type": "object", "default": {}, "properties": {
                    "algorithm": {"type": "string", "enum": ["rsa", "ecdsa"], "default": "rsa"},
                    "keySize": {"type": "integer", "minimum": 2048, "maximum": 8192, "default": 2048}}}}}}}},
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}})
}

fn object() -> Value {
    json!({"apiVersion": "apps.gitlab.com/v1", "kind": "GitLabSecrets", "metadata": {"name": "demo"},
        "spec": {"policy": "Retain", "secrets": [{"name": "root-password"}],
                 "certificates": [{"name": "ca", "authority": {"expiry": "1y"}}]}})
}

#[test]
fn the_crd_schema_is_structural() {
    let errs = check_structural(&gitlab_schema(), "spec.versions[0].schema.openAPIV3Schema");
    assert!(errs.is_empty(), "{errs:?}");
}

#[test]
fn policy_and_authority_expiry_are_pruned_and_reported_as_unknown() {
    let mut obj = object();
    let unknown = prune(&gitlab_schema(), &mut obj);
    assert_eq!(
        unknown,
        vec!["spec.certificates[0].authority.expiry", "spec.policy"]
    );
    assert_eq!(obj["spec"].get("policy"), None);
    assert_eq!(obj["spec"]["certificates"][0]["authority"], json!({}));
    assert_eq!(
        strict_error(&unknown),
        "strict decoding error: unknown field \"spec.certificates[0].authority.expiry\", unknown field \"spec.policy\""
    );
    assert_eq!(warnings(&unknown).len(), 2);
}

#[test]
fn pruned_then_defaulted_object_is_valid() {
    let schema = gitlab_schema();
    let mut obj = object();
    prune(&schema, &mut obj);
    apply_defaults(&schema, &mut obj);
    assert_eq!(
        obj["spec"]["certificates"][0]["authority"],
        json!({"algorithm": "rsa", "keySize": 2048})
    );
    assert_eq!(validate(&schema, &obj), Vec::new());
}

#[test]
fn key_size_bounds_and_algorithm_enum_give_kube_422() {
    let schema = gitlab_schema();
    let mut obj = object();
    obj["spec"]["certificates"][0]["authority"] = json!({"algorithm": "dsa", "keySize": 9000});
    obj["spec"]["secrets"] = json!([{}]);
    let errs = validate(&schema, &obj);
    let msg = invalid_message("GitLabSecrets.apps.gitlab.com", "demo", &errs);
    assert_eq!(
        msg,
        "GitLabSecrets.apps.gitlab.com \"demo\" is invalid: [\
         spec.certificates[0].authority.algorithm: Unsupported value: \"dsa\": supported values: \"rsa\", \"ecdsa\", \
         spec.certificates[0].authority.keySize: Invalid value: 9000: spec.certificates[0].authority.keySize in body should be less than or equal to 8192, \
         spec.secrets[0].name: Required value]"
    );
    let reasons: Vec<String> = causes(&errs).into_iter().map(|c| c.reason).collect();
    assert_eq!(
        reasons,
        [
            "FieldValueNotSupported",
            "FieldValueInvalid",
            "FieldValueRequired"
        ]
    );
}

#[test]
fn key_size_at_the_lower_bound_is_accepted_and_below_is_rejected() {
    let schema = gitlab_schema();
    let mut obj = object();
    prune(&schema, &mut obj);
    obj["spec"]["certificates"][0]["authority"] = json!({"keySize": 2048});
    assert!(validate(&schema, &obj).is_empty());
    obj["spec"]["certificates"][0]["authority"] = json!({"keySize": 2047});
    let errs: Vec<String> = validate(&schema, &obj)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errs,
        vec![
            "spec.certificates[0].authority.keySize: Invalid value: 2047: spec.certificates[0].authority.keySize in body should be greater than or equal to 2048"
        ]
    );
}

#[test]
fn duplicate_secret_names_are_rejected() {
    let schema = gitlab_schema();
    let mut obj = object();
    prune(&schema, &mut obj);
    obj["spec"]["secrets"] = json!([{"name": "a"}, {"name": "a"}]);
    let errs: Vec<String> = validate(&schema, &obj)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errs,
        vec!["spec.secrets[1]: Duplicate value: map[string]interface {}{\"name\":\"a\"}"]
    );
}
