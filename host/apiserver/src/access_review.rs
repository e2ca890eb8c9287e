//! `SelfSubjectAccessReview` (`authorization.k8s.io/v1`): what `kubectl auth can-i` asks;
//! `SelfSubjectRulesReview`: what `kubectl auth can-i --list` asks (every rule the user
//! holds in a namespace).
//! The answer is the review with `status.allowed` as RBAC decides it for the asking user;
//! nothing is stored. kubectl sends the review as Kubernetes protobuf, read into JSON
//! before it gets here ([`crate::protobuf`]); the answer is JSON, which kubectl accepts.

use serde_json::{Value, json};

use crate::authn::User;
use crate::rbac::{self, Request};
use crate::registry::ResourceType;
use crate::server::Shared;
use crate::status::{ApiError, Result};

/// The SelfSubjectAccessReview `body` asks, answered for `user`.
pub(crate) fn answer(
    shared: &Shared,
    rt: &ResourceType,
    user: &User,
    body: &[u8],
) -> Result<Value> {
    let review: Value = decoded(rt, body)?;
    decided(shared, rt, user, review)
}

/// The SubjectAccessReview `body` asks (what an aggregated server or a webhook asks about
/// another user: `spec.user`, `spec.groups`, `spec.uid`), answered as RBAC decides for that
/// user. Asking needs `create` on `subjectaccessreviews`, as kube-apiserver's
/// `system:auth-delegator` grants.
pub(crate) fn subject(
    shared: &Shared,
    rt: &ResourceType,
    _asking: &User,
    body: &[u8],
) -> Result<Value> {
    let review: Value = decoded(rt, body)?;
    let spec = &review["spec"];
    let name = spec["user"].as_str().unwrap_or_default().to_owned();
    let groups: Vec<String> = spec["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|g| g.as_str().map(str::to_owned))
        .collect();
    if name.is_empty() && groups.is_empty() {
        return Err(ApiError::invalid_field(
            rt,
            "",
            "spec.user",
            "FieldValueRequired",
            "Required value: at least one of user or group must be specified",
        ));
    }
    let user = User {
        name,
        uid: spec["uid"].as_str().map(str::to_owned),
        groups,
    };
    decided(shared, rt, &user, review)
}

/// `review` (either kind) with `status` as RBAC decides its attributes for `user`.
fn decided(shared: &Shared, rt: &ResourceType, user: &User, mut review: Value) -> Result<Value> {
    let spec = &review["spec"];
    let text = |v: &Value, field: &str| v[field].as_str().unwrap_or_default().to_owned();
    let allowed = if let Some(attributes) = spec.get("resourceAttributes") {
        let (verb, group, resource) = (
            text(attributes, "verb"),
            text(attributes, "group"),
            text(attributes, "resource"),
        );
        let (subresource, namespace, name) = (
            text(attributes, "subresource"),
            text(attributes, "namespace"),
            text(attributes, "name"),
        );
        let request = Request::Resource {
            verb: &verb,
            group: &group,
            resource: &resource,
            subresource: some(&subresource),
            namespace: some(&namespace),
            name: some(&name),
        };
        shared.authorize(user, &request)
    } else if let Some(attributes) = spec.get("nonResourceAttributes") {
        let (verb, path) = (text(attributes, "verb"), text(attributes, "path"));
        let request = Request::NonResource {
            verb: &verb,
            path: &path,
        };
        shared.authorize(user, &request)
    } else {
        return Err(ApiError::invalid_field(
            rt,
            "",
            "spec.resourceAttributes",
            "FieldValueRequired",
            "Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ));
    };
    review["status"] = if allowed {
        json!({"allowed": true, "reason": "RBAC: allowed"})
    } else {
        json!({"allowed": false})
    };
    Ok(answered(review, rt))
}

/// `s`, unless it is empty (an attribute the review leaves out).
fn some(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}

/// The SelfSubjectRulesReview `body` asks: every rule `user` holds in `spec.namespace`
/// (from ClusterRoleBindings, that namespace's RoleBindings and the bootstrap grants).
pub(crate) fn rules(shared: &Shared, rt: &ResourceType, user: &User, body: &[u8]) -> Result<Value> {
    let mut review: Value = decoded(rt, body)?;
    let Some(namespace) = review
        .pointer("/spec/namespace")
        .and_then(Value::as_str)
        .filter(|ns| !ns.is_empty())
        .map(str::to_owned)
    else {
        return Err(ApiError::invalid_field(
            rt,
            "",
            "spec.namespace",
            "FieldValueRequired",
            "Required value: namespace is required",
        ));
    };
    let (resource_rules, non_resource_rules) =
        rbac::rules_of(&shared.lock().store, user, &namespace);
    review["status"] = json!({
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": false,
    });
    Ok(answered(review, rt))
}

/// A review's request body, or a 400 naming its kind.
pub(crate) fn decoded(rt: &ResourceType, body: &[u8]) -> Result<Value> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the {} does not decode: {e}", rt.kind)))
}

/// A review as answered: the request's body with its status, typed as `rt` (the body's own
/// apiVersion and kind may be missing) and with kube-apiserver's empty metadata.
pub(crate) fn answered(mut review: Value, rt: &ResourceType) -> Value {
    if let Some(map) = review.as_object_mut() {
        map.insert("apiVersion".into(), json!(rt.api_version()));
        map.insert("kind".into(), json!(rt.kind));
        map.entry("metadata")
            .or_insert_with(|| json!({"creationTimestamp": null}));
    }
    review
}
