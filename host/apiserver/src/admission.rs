//! Admission: what the server checks and defaults on every write, per kind.
//!
//! Custom resources go through their CRD's structural schema (pruning with the
//! `fieldValidation` mode, defaulting, validation — see [`crate::schema`]). Built-in kinds
//! get the checks of kube-apiserver the operator relies on: Secret `stringData` folded into
//! `data`, the 1 MiB object limit of Secrets and ConfigMaps, immutable Secrets and
//! ConfigMaps, Services' allocated cluster IPs, the defaults a Service, a Deployment, a Job
//! (with its generated selector) and a CronJob get, and the webhook configurations'
//! defaults and validation (`crate::webhooks::config`).

use base64::Engine as _;
use serde_json::{Value, json};

use crate::objects::{is_deleting, meta_str};
use crate::registry::ResourceType;
use crate::route::Params;
use crate::server::State;
use crate::status::{ApiError, Result};

/// An admitted object and the warnings for the Warning header.
pub(crate) struct Admitted {
    pub object: Value,
    pub warnings: Vec<String>,
}

/// The most a Secret's or ConfigMap's data may hold.
pub(crate) const MAX_DATA_BYTES: usize = 1 << 20;

/// Checks and defaults `object` (a create when `old` is `None`).
pub(crate) fn admit(
    rt: &ResourceType,
    name: &str,
    mut object: Value,
    old: Option<&Value>,
    params: &Params,
) -> Result<Admitted> {
    if !params.skips_validation() {
        crate::builtin_validation::check(rt, name, &object)?;
    }
    if let Some(schema) = &rt.schema {
        return crate::crd::admit(rt, schema, name, object, old, params);
    }
    let mut warnings = Vec::new();
    if let Some(unknown) = crate::builtin_fields::unknown(&rt.group, &rt.kind, &object)
        && !unknown.is_empty()
    {
        match params.get("fieldValidation") {
            Some("Strict") => {
                return Err(ApiError::bad_request(crate::schema::strict_error(&unknown)));
            }
            Some("Ignore") => {}
            _ => warnings = crate::schema::warnings(&unknown),
        }
        for path in &unknown {
            remove_path(&mut object, path);
        }
    }
    match (rt.group.as_str(), rt.kind.as_str()) {
        ("", "Secret") => {
            crate::defaults::secret(&mut object);
            fold_string_data(&mut object);
            check_size(rt, name, &object, "data")?;
        }
        ("", "ConfigMap") => check_size(rt, name, &object, "")?,
        ("", "Service") => crate::defaults::service(&mut object, old),
        ("apps", "Deployment") => crate::defaults::deployment(&mut object),
        ("batch", "Job") => crate::defaults::job(&mut object, old),
        ("batch", "CronJob") => crate::defaults::cron_job(&mut object),
        ("apiextensions.k8s.io", "CustomResourceDefinition") if old.is_some() => {
            crate::crd::on_update(rt, name, &object)?;
        }
        (crate::webhooks::config::GROUP, _) => {
            crate::webhooks::config::admit(rt, name, &mut object)?;
        }
        _ => {}
    }
    Ok(Admitted { object, warnings })
}

/// Drops the field at `path` (`spec.a[0].b`), as decoding into the typed object does.
fn remove_path(object: &mut Value, path: &str) {
    let mut parts: Vec<String> = Vec::new();
    for segment in path.split('.') {
        match segment.split_once('[') {
            Some((field, rest)) => {
                parts.push(field.to_owned());
                parts.extend(rest.split('[').map(|i| i.trim_end_matches(']').to_owned()));
            }
            None => parts.push(segment.to_owned()),
        }
    }
    let Some((last, parents)) = parts.split_last() else {
        return;
    };
    let mut node = object;
    for p in parents {
        let next = match node {
            Value::Object(map) => map.get_mut(p),
            Value::Array(items) => p.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
            _ => None,
        };
        let Some(next) = next else { return };
        node = next;
    }
    if let Value::Object(map) = node {
        map.remove(last);
    }
}

/// Folds a Secret's `stringData` into `data` (base64), as the API server does on write.
fn fold_string_data(object: &mut Value) {
    let Some(map) = object.as_object_mut() else {
        return;
    };
    let Some(Value::Object(string_data)) = map.remove("stringData") else {
        return;
    };
    let data = map.entry("data").or_insert_with(|| json!({}));
    if let Some(data) = data.as_object_mut() {
        for (k, v) in string_data {
            let text = v.as_str().unwrap_or_default();
            data.insert(
                k,
                json!(base64::engine::general_purpose::STANDARD.encode(text)),
            );
        }
    }
}

/// The 1 MiB limit of a Secret's (`field` = "data") or ConfigMap's (`field` = "") data.
fn check_size(rt: &ResourceType, name: &str, object: &Value, field: &str) -> Result<()> {
    let decoded = |v: &Value| {
        v.as_str()
            .map(|s| {
                base64::engine::general_purpose::STANDARD
                    .decode(s)
                    .map(|b| b.len())
                    .unwrap_or(s.len())
            })
            .unwrap_or(0)
    };
    let text = |v: &Value| v.as_str().map(str::len).unwrap_or(0);
    let sum = |field: &str, size: &dyn Fn(&Value) -> usize| -> usize {
        object
            .get(field)
            .and_then(Value::as_object)
            .map(|m| m.iter().map(|(k, v)| k.len() + size(v)).sum())
            .unwrap_or(0)
    };
    let total = if rt.kind == "Secret" {
        sum("data", &decoded)
    } else {
        sum("data", &text) + sum("binaryData", &decoded)
    };
    if total > MAX_DATA_BYTES {
        let shown = if field.is_empty() { "[]" } else { field };
        return Err(ApiError::invalid_field(
            rt,
            name,
            shown,
            "FieldValueTooLong",
            &format!("Too long: must have at most {MAX_DATA_BYTES} bytes"),
        ));
    }
    Ok(())
}

/// Checks what an update may not change.
pub(crate) fn check_update(rt: &ResourceType, name: &str, old: &Value, new: &Value) -> Result<()> {
    if rt.group.is_empty()
        && matches!(rt.kind.as_str(), "Secret" | "ConfigMap")
        && old["immutable"] == json!(true)
    {
        for field in ["data", "binaryData", "stringData"] {
            if old.get(field) != new.get(field) {
                return Err(ApiError::invalid_field(
                    rt,
                    name,
                    field,
                    "FieldValueForbidden",
                    "Forbidden: field is immutable when `immutable` is set",
                ));
            }
        }
        if new["immutable"] != json!(true) {
            return Err(ApiError::invalid_field(
                rt,
                name,
                "immutable",
                "FieldValueForbidden",
                "Forbidden: field is immutable when `immutable` is set",
            ));
        }
    }
    if rt.group.is_empty() && rt.kind == "Service" {
        let (before, after) = (
            old.pointer("/spec/clusterIP"),
            new.pointer("/spec/clusterIP"),
        );
        if before.is_some() && after != before {
            let shown = after.and_then(Value::as_str).unwrap_or_default();
            return Err(ApiError::invalid_field(
                rt,
                name,
                "spec.clusterIPs[0]",
                "FieldValueInvalid",
                &format!("Invalid value: []string{{\"{shown}\"}}: may not change once set"),
            ));
        }
    }
    if rt.group == "apps" && matches!(rt.kind.as_str(), "Deployment" | "ReplicaSet" | "DaemonSet") {
        let (before, after) = (
            selector(old.pointer("/spec/selector")),
            selector(new.pointer("/spec/selector")),
        );
        if before != after {
            return Err(ApiError::invalid_field(
                rt,
                name,
                "spec.selector",
                "FieldValueInvalid",
                &format!("Invalid value: {after}: field is immutable"),
            ));
        }
    }
    if rt.group == "batch"
        && rt.kind == "Job"
        && old.pointer("/spec/template") != new.pointer("/spec/template")
    {
        return Err(ApiError::invalid_field(
            rt,
            name,
            "spec.template",
            "FieldValueInvalid",
            "Invalid value: field is immutable",
        ));
    }
    Ok(())
}

/// A label selector as kube-apiserver compares it (`equality.Semantic`: an empty map or
/// list is the same as none, at any depth, e.g. `matchExpressions[].values`).
fn selector(value: Option<&Value>) -> Value {
    fn normalized(value: &Value) -> Option<Value> {
        match value {
            Value::Null => None,
            Value::Object(map) => {
                let map: serde_json::Map<String, Value> = map
                    .iter()
                    .filter_map(|(k, v)| normalized(v).map(|v| (k.clone(), v)))
                    .collect();
                (!map.is_empty()).then_some(Value::Object(map))
            }
            Value::Array(items) => {
                let items: Vec<Value> = items
                    .iter()
                    .map(|v| normalized(v).unwrap_or(Value::Null))
                    .collect();
                (!items.is_empty()).then_some(Value::Array(items))
            }
            other => Some(other.clone()),
        }
    }
    value.and_then(normalized).unwrap_or_else(|| json!({}))
}

/// The namespace of a new object must exist and not be terminating.
pub(crate) fn check_namespace(
    state: &State,
    rt: &ResourceType,
    name: &str,
    namespace: &str,
) -> Result<()> {
    let key = crate::store::StoreKey {
        group: String::new(),
        plural: "namespaces".into(),
        namespace: String::new(),
        name: namespace.to_owned(),
    };
    match state.store.get(&key) {
        None => Err(ApiError::namespace_not_found(namespace)),
        Some(ns) if is_deleting(ns) => Err(ApiError::forbidden(
            rt,
            name,
            &format!(
                "unable to create new content in namespace {namespace} because it is being terminated"
            ),
        )),
        Some(_) => Ok(()),
    }
}

/// What the server sets on a new object of some kinds.
pub(crate) fn on_create(state: &mut State, rt: &ResourceType, object: &mut Value) -> Result<()> {
    match (rt.group.as_str(), rt.kind.as_str()) {
        ("", "Namespace") => {
            object["spec"] = json!({"finalizers": ["kubernetes"]});
            object["status"] = json!({"phase": "Active"});
            if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
                let name = meta.get("name").cloned().unwrap_or_default();
                let labels = meta.entry("labels").or_insert_with(|| json!({}));
                labels["kubernetes.io/metadata.name"] = name;
            }
        }
        ("", "Service") => {
            state.allocate_cluster_ip(object);
            // The empty status kube-apiserver's strategy gives a new Service.
            object["status"] = json!({"loadBalancer": {}});
        }
        ("batch", "Job") => crate::defaults::job_selector(object),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => crate::crd::on_create(rt, object)?,
        _ => {}
    }
    if meta_str(object, "namespace").is_some()
        && !rt.namespaced
        && let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut)
    {
        meta.remove("namespace");
    }
    Ok(())
}

/// Keeps derived state current after a write of `rt` (CRDs change what is served).
pub(crate) fn after_write(state: &mut State, rt: &ResourceType) {
    if rt.group == "apiextensions.k8s.io" && rt.kind == "CustomResourceDefinition" {
        state.refresh_registry();
    }
}

#[cfg(test)]
mod tests {
    use super::selector;
    use serde_json::json;

    #[test]
    fn selectors_compare_as_kube_semantic_equality_does() {
        let bare = json!({"matchLabels": {"app": "web"}});
        let empties = json!({"matchLabels": {"app": "web"}, "matchExpressions": []});
        assert_eq!(selector(Some(&bare)), selector(Some(&empties)));
        let no_values = json!({"matchExpressions": [{"key": "a", "operator": "Exists"}]});
        let empty_values =
            json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": []}]});
        assert_eq!(selector(Some(&no_values)), selector(Some(&empty_values)));
        assert_eq!(selector(None), selector(Some(&json!({"matchLabels": {}}))));
        let other = json!({"matchLabels": {"app": "web", "track": "v2"}});
        assert_ne!(selector(Some(&bare)), selector(Some(&other)));
    }
}
