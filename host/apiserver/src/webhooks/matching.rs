//! Which webhooks a request concerns: `rules` (operations, apiGroups, apiVersions,
//! resources with `*`, `*/status`, `pods/*`, scope), `namespaceSelector`, `objectSelector`
//! and `matchPolicy`, as kube-apiserver's webhook dispatcher matches them.

use serde_json::{Value, json};

use crate::registry::{Registry, ResourceType};

/// What a request is, as rules see it.
pub(crate) struct Subject<'a> {
    /// `CREATE`, `UPDATE` or `DELETE`.
    pub operation: &'a str,
    pub rt: &'a ResourceType,
    pub subresource: Option<&'a str>,
}

/// The resource type a webhook is called with: the request's own when a rule names it,
/// else (matchPolicy `Equivalent`) another served version of the same group and resource
/// that a rule names. `None` when no rule matches.
pub(crate) fn matched_type(
    hook: &Value,
    subject: &Subject,
    registry: &Registry,
) -> Option<ResourceType> {
    let rules = hook["rules"].as_array().cloned().unwrap_or_default();
    let matches = |rt: &ResourceType| rules.iter().any(|r| rule_matches(r, subject, rt));
    if matches(subject.rt) {
        return Some(subject.rt.clone());
    }
    if hook["matchPolicy"].as_str() == Some("Exact") {
        return None;
    }
    registry
        .all()
        .iter()
        .filter(|rt| {
            rt.group == subject.rt.group
                && rt.plural == subject.rt.plural
                && rt.version != subject.rt.version
        })
        .find(|rt| matches(rt))
        .cloned()
}

fn listed(rule: &Value, field: &str, value: &str) -> bool {
    rule[field]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .any(|v| v == "*" || v == value)
}

fn rule_matches(rule: &Value, subject: &Subject, rt: &ResourceType) -> bool {
    let scope_ok = match rule["scope"].as_str().unwrap_or("*") {
        "Cluster" => !rt.namespaced,
        "Namespaced" => rt.namespaced,
        _ => true,
    };
    scope_ok
        && listed(rule, "operations", subject.operation)
        && listed(rule, "apiGroups", &rt.group)
        && listed(rule, "apiVersions", &rt.version)
        && rule["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .any(|r| resource_matches(r, &rt.plural, subject.subresource))
}

/// `pods`, `pods/status`, `pods/*`, `*`, `*/status`, `*/*` against a resource and
/// subresource.
fn resource_matches(pattern: &str, plural: &str, subresource: Option<&str>) -> bool {
    let (res, sub) = match pattern.split_once('/') {
        Some((r, s)) => (r, Some(s)),
        None => (pattern, None),
    };
    let res_ok = res == "*" || res == plural;
    let sub_ok = match (sub, subresource) {
        (None, None) => true,
        (None, Some(_)) => false,
        (Some("*"), _) => true,
        (Some(s), Some(actual)) => s == actual,
        (Some(_), None) => false,
    };
    res_ok && sub_ok
}

/// Whether a structured label selector (`matchLabels`, `matchExpressions`) selects
/// `labels`; an empty or missing selector selects everything.
pub(crate) fn selects(selector: &Value, labels: &Value) -> bool {
    let label = |k: &str| labels.get(k).and_then(Value::as_str);
    let by_labels = selector["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .all(|(k, v)| label(k) == v.as_str());
    let by_expressions = selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
        .all(|e| {
            let key = e["key"].as_str().unwrap_or_default();
            let values: Vec<&str> = e["values"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            match e["operator"].as_str() {
                Some("In") => label(key).is_some_and(|v| values.contains(&v)),
                Some("NotIn") => label(key).is_none_or(|v| !values.contains(&v)),
                Some("Exists") => label(key).is_some(),
                Some("DoesNotExist") => label(key).is_none(),
                _ => false,
            }
        });
    by_labels && by_expressions
}

/// The objectSelector test: the new or the old object's labels are selected.
pub(crate) fn object_selected(hook: &Value, object: Option<&Value>, old: Option<&Value>) -> bool {
    let selector = &hook["objectSelector"];
    let labels = |o: Option<&Value>| {
        o.and_then(|o| o.pointer("/metadata/labels").cloned())
            .unwrap_or_else(|| json!({}))
    };
    selects(selector, &labels(object)) || (old.is_some() && selects(selector, &labels(old)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_patterns_match_as_the_dispatcher_matches_them() {
        assert!(resource_matches("pods", "pods", None));
        assert!(!resource_matches("pods", "pods", Some("status")));
        assert!(resource_matches("pods/status", "pods", Some("status")));
        assert!(resource_matches("pods/*", "pods", Some("status")));
        assert!(resource_matches("pods/*", "pods", None));
        assert!(resource_matches("*", "configmaps", None));
        assert!(!resource_matches("*", "configmaps", Some("status")));
        assert!(resource_matches("*/status", "configmaps", Some("status")));
        assert!(!resource_matches("*/status", "configmaps", None));
        assert!(!resource_matches("secrets", "configmaps", None));
    }

    #[test]
    fn structured_selectors_select_as_metav1_defines_them() {
        let labels = json!({"env": "prod", "tier": "web"});
        assert!(selects(&json!({}), &labels));
        assert!(selects(&json!({"matchLabels": {"env": "prod"}}), &labels));
        assert!(!selects(&json!({"matchLabels": {"env": "dev"}}), &labels));
        let expr = |op: &str, values: Value| json!({"matchExpressions": [{"key": "env", "operator": op, "values": values}]});
        assert!(selects(&expr("In", json!(["prod", "dev"])), &labels));
        assert!(!selects(&expr("NotIn", json!(["prod"])), &labels));
        assert!(selects(&expr("Exists", json!([])), &labels));
        assert!(!selects(&expr("DoesNotExist", json!([])), &labels));
        assert!(selects(&expr("DoesNotExist", json!([])), &json!({})));
    }
}
