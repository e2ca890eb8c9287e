//! MutatingWebhookConfigurations and ValidatingWebhookConfigurations on write: the
//! defaults and the validation kube-apiserver applies to them
//! (`admissionregistration/validation`), with its field-named 422 errors.
//!
//! `matchConditions` (CEL) are not served: a configuration naming them is refused with
//! `Forbidden` on the field, so no webhook is called under conditions the server ignores.

use serde_json::{Value, json};

use crate::registry::ResourceType;
use crate::schema::{FieldError, causes, invalid_message};
use crate::status::{ApiError, Result};

/// The API group of the configurations.
pub(crate) const GROUP: &str = "admissionregistration.k8s.io";

/// The AdmissionReview versions the server speaks, in kube-apiserver's order.
pub(crate) const REVIEW_VERSIONS: &[&str] = &["v1", "v1beta1"];

/// Whether `rt` is one of the two configuration kinds; `Some(true)` for the mutating one.
pub(crate) fn configuration_kind(rt: &ResourceType) -> Option<bool> {
    match (rt.group.as_str(), rt.kind.as_str()) {
        (GROUP, "MutatingWebhookConfiguration") => Some(true),
        (GROUP, "ValidatingWebhookConfiguration") => Some(false),
        _ => None,
    }
}

/// Defaults and validates a configuration object of `rt` named `name` (422 naming the
/// first failing fields otherwise).
pub(crate) fn admit(rt: &ResourceType, name: &str, object: &mut Value) -> Result<()> {
    let Some(mutating) = configuration_kind(rt) else {
        return Ok(());
    };
    default(object, mutating);
    let errors = validate(object, mutating);
    if errors.is_empty() {
        return Ok(());
    }
    let causes = causes(&errors)
        .into_iter()
        .filter_map(|c| serde_json::to_value(c).ok())
        .collect();
    Err(ApiError::invalid(
        rt,
        name,
        invalid_message(&rt.qualified_kind(), name, &errors),
        causes,
    ))
}

/// kube-apiserver's v1 defaults of every webhook of the configuration.
fn default(object: &mut Value, mutating: bool) {
    let Some(hooks) = object.get_mut("webhooks").and_then(Value::as_array_mut) else {
        return;
    };
    for hook in hooks.iter_mut().filter_map(Value::as_object_mut) {
        let mut set = |field: &str, value: Value| {
            if hook.get(field).is_none_or(Value::is_null) {
                hook.insert(field.into(), value);
            }
        };
        set("failurePolicy", json!("Fail"));
        set("matchPolicy", json!("Equivalent"));
        set("namespaceSelector", json!({}));
        set("objectSelector", json!({}));
        set("timeoutSeconds", json!(10));
        if mutating {
            set("reinvocationPolicy", json!("Never"));
        }
        if let Some(service) = hook
            .get_mut("clientConfig")
            .and_then(|c| c.get_mut("service"))
            .and_then(Value::as_object_mut)
            && service.get("port").is_none_or(Value::is_null)
        {
            service.insert("port".into(), json!(443));
        }
        if let Some(rules) = hook.get_mut("rules").and_then(Value::as_array_mut) {
            for rule in rules.iter_mut().filter_map(Value::as_object_mut) {
                if rule.get("scope").is_none_or(Value::is_null) {
                    rule.insert("scope".into(), json!("*"));
                }
            }
        }
    }
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn supported(values: &[&str]) -> Vec<String> {
    values.iter().map(|s| (*s).to_owned()).collect()
}

/// Go's `%v` of a `[]string` as `field.Invalid` prints it.
fn go_strings(values: &[String]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    format!("[]string{{{}}}", quoted.join(", "))
}

/// Every field error of the configuration, in kube-apiserver's order.
fn validate(object: &Value, mutating: bool) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let hooks = object
        .get("webhooks")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut names: Vec<String> = Vec::new();
    for (i, hook) in hooks.iter().enumerate() {
        let path = format!("webhooks[{i}]");
        validate_hook(hook, mutating, &path, &mut errors);
        review_versions(hook, &path, &mut errors);
        let name = hook["name"].as_str().unwrap_or_default();
        if !name.is_empty() {
            if names.iter().any(|n| n == name) {
                errors.push(FieldError::duplicate(&format!("{path}.name"), json!(name)));
            } else {
                names.push(name.to_owned());
            }
        }
    }
    errors
}

fn validate_hook(hook: &Value, mutating: bool, path: &str, errors: &mut Vec<FieldError>) {
    let name = hook["name"].as_str().unwrap_or_default();
    if name.is_empty() {
        errors.push(FieldError::required(&format!("{path}.name"), ""));
    } else if name.split('.').filter(|s| !s.is_empty()).count() < 3 {
        errors.push(FieldError::invalid(
            &format!("{path}.name"),
            json!(name),
            "should be a domain with at least three segments separated by dots",
        ));
    }
    for (j, rule) in hook["rules"].as_array().into_iter().flatten().enumerate() {
        validate_rule(rule, &format!("{path}.rules[{j}]"), errors);
    }
    let one_of = |errors: &mut Vec<FieldError>, field: &str, allowed: &[&str]| {
        if let Some(v) = hook.get(field).filter(|v| !v.is_null())
            && !v.as_str().is_some_and(|s| allowed.contains(&s))
        {
            errors.push(FieldError::not_supported(
                &format!("{path}.{field}"),
                v.clone(),
                &supported(allowed),
            ));
        }
    };
    one_of(errors, "failurePolicy", &["Fail", "Ignore"]);
    one_of(errors, "matchPolicy", &["Equivalent", "Exact"]);
    let side_effects = &["None", "NoneOnDryRun"];
    if hook.get("sideEffects").is_none_or(Value::is_null) {
        errors.push(FieldError::required(
            &format!("{path}.sideEffects"),
            "must specify one of None, NoneOnDryRun",
        ));
    } else {
        one_of(errors, "sideEffects", side_effects);
    }
    if let Some(t) = hook.get("timeoutSeconds").and_then(Value::as_i64)
        && !(1..=30).contains(&t)
    {
        errors.push(FieldError::invalid(
            &format!("{path}.timeoutSeconds"),
            json!(t),
            "the timeout value must be between 1 and 30 seconds",
        ));
    }
    if mutating {
        one_of(errors, "reinvocationPolicy", &["IfNeeded", "Never"]);
    }
    if hook
        .get("matchConditions")
        .and_then(Value::as_array)
        .is_some_and(|c| !c.is_empty())
    {
        errors.push(FieldError::forbidden(
            &format!("{path}.matchConditions"),
            "match conditions (CEL) are not served by this API server",
        ));
    }
    client_config(
        &hook["clientConfig"],
        &format!("{path}.clientConfig"),
        errors,
    );
}

fn validate_rule(rule: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let operations = strings(rule.get("operations"));
    if operations.is_empty() {
        errors.push(FieldError::required(&format!("{path}.operations"), ""));
    }
    if operations.len() > 1 && operations.iter().any(|o| o == "*") {
        errors.push(FieldError {
            path: format!("{path}.operations"),
            kind: crate::schema::FieldErrorKind::Invalid,
            value: None,
            printed: None,
            detail: format!(
                "{}: if '*' is present, must not specify other operations",
                go_strings(&operations)
            ),
        });
    }
    let allowed = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
    for (k, op) in operations.iter().enumerate() {
        if !allowed.contains(&op.as_str()) {
            errors.push(FieldError::not_supported(
                &format!("{path}.operations[{k}]"),
                json!(op),
                &supported(&allowed),
            ));
        }
    }
    for field in ["apiGroups", "apiVersions", "resources"] {
        if strings(rule.get(field)).is_empty() {
            errors.push(FieldError::required(&format!("{path}.{field}"), ""));
        }
    }
    if let Some(scope) = rule.get("scope").filter(|v| !v.is_null())
        && !scope
            .as_str()
            .is_some_and(|s| ["*", "Cluster", "Namespaced"].contains(&s))
    {
        errors.push(FieldError::not_supported(
            &format!("{path}.scope"),
            scope.clone(),
            &supported(&["*", "Cluster", "Namespaced"]),
        ));
    }
}

fn client_config(config: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let url = config.get("url").filter(|v| !v.is_null());
    let service = config.get("service").filter(|v| !v.is_null());
    match (url, service) {
        (Some(_), Some(_)) | (None, None) => errors.push(FieldError::required(
            path,
            "exactly one of url or service is required",
        )),
        (Some(url), None) => {
            let text = url.as_str().unwrap_or_default();
            if let Some(why) = url_error(text) {
                errors.push(FieldError::invalid(
                    &format!("{path}.url"),
                    json!(text),
                    why,
                ));
            }
        }
        (None, Some(service)) => {
            for field in ["name", "namespace"] {
                if service[field].as_str().is_none_or(str::is_empty) {
                    errors.push(FieldError::required(&format!("{path}.service.{field}"), ""));
                }
            }
            if let Some(p) = service["path"].as_str()
                && !p.starts_with('/')
            {
                errors.push(FieldError::invalid(
                    &format!("{path}.service.path"),
                    json!(p),
                    "must start with a '/'",
                ));
            }
            if let Some(port) = service["port"].as_i64()
                && !(1..=65535).contains(&port)
            {
                errors.push(FieldError::invalid(
                    &format!("{path}.service.port"),
                    json!(port),
                    "port is not valid: must be between 1 and 65535, inclusive",
                ));
            }
        }
    }
}

/// Why `url` is not a webhook URL kube-apiserver accepts, if it is not.
fn url_error(url: &str) -> Option<&'static str> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Some("host must be specified");
    };
    if scheme != "https" {
        return Some("'https' is the only allowed URL scheme");
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.is_empty() {
        return Some("host must be specified");
    }
    if authority.contains('@') {
        return Some("user information is not permitted in the URL");
    }
    if rest.contains('#') {
        return Some("fragments are not permitted in the URL");
    }
    if rest.contains('?') {
        return Some("query parameters are not permitted in the URL");
    }
    None
}

fn review_versions(hook: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let path = format!("{path}.admissionReviewVersions");
    let versions = strings(hook.get("admissionReviewVersions"));
    if versions.is_empty() {
        errors.push(FieldError::required(
            &path,
            &format!("must specify one of {}", REVIEW_VERSIONS.join(", ")),
        ));
        return;
    }
    for (i, v) in versions.iter().enumerate() {
        if versions[..i].contains(v) {
            errors.push(FieldError::invalid(
                &format!("{path}[{i}]"),
                json!(v),
                "duplicate version",
            ));
        }
    }
    if !versions
        .iter()
        .any(|v| REVIEW_VERSIONS.contains(&v.as_str()))
    {
        errors.push(FieldError {
            path,
            kind: crate::schema::FieldErrorKind::Invalid,
            value: None,
            printed: None,
            detail: format!(
                "{}: must include at least one of {}",
                go_strings(&versions),
                REVIEW_VERSIONS.join(", ")
            ),
        });
    }
}
