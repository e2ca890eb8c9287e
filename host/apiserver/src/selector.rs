//! Label and field selectors, in the API's text form.

use serde_json::Value;

use crate::status::ApiError;

/// One requirement of a label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// A parsed label selector; an empty one selects everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector(Vec<Requirement>);

impl LabelSelector {
    /// Parses `a=b,c!=d,e in (x,y),f notin (z),g,!h`.
    pub fn parse(text: &str) -> Result<Self, ApiError> {
        let bad = |why: &str| {
            ApiError::bad_request(format!("unable to parse requirement: {why}: {text:?}"))
        };
        let mut requirements = Vec::new();
        for part in split_top_level(text) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let requirement = if let Some(key) = part.strip_prefix('!') {
                Requirement::NotExists(key.trim().to_owned())
            } else if let Some((key, values)) = split_set(part, " notin ") {
                Requirement::NotIn(
                    key,
                    values.ok_or_else(|| bad("values must be in parentheses"))?,
                )
            } else if let Some((key, values)) = split_set(part, " in ") {
                Requirement::In(
                    key,
                    values.ok_or_else(|| bad("values must be in parentheses"))?,
                )
            } else if let Some((k, v)) = part.split_once("!=") {
                Requirement::NotEquals(k.trim().to_owned(), v.trim().to_owned())
            } else if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
                Requirement::Equals(k.trim().to_owned(), v.trim().to_owned())
            } else if part.contains(char::is_whitespace) {
                return Err(bad("unexpected whitespace"));
            } else {
                Requirement::Exists(part.to_owned())
            };
            requirements.push(requirement);
        }
        Ok(Self(requirements))
    }

    /// Whether `object`'s labels satisfy every requirement.
    pub fn matches(&self, object: &Value) -> bool {
        let labels = object.pointer("/metadata/labels");
        let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            Requirement::Equals(k, v) => label(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => label(k) != Some(v.as_str()),
            Requirement::In(k, vs) => label(k).is_some_and(|l| vs.iter().any(|v| v == l)),
            Requirement::NotIn(k, vs) => label(k).is_none_or(|l| vs.iter().all(|v| v != l)),
            Requirement::Exists(k) => label(k).is_some(),
            Requirement::NotExists(k) => label(k).is_none(),
        })
    }
}

/// Splits on commas outside parentheses.
fn split_top_level(text: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// `key op (a,b)` → `(key, Some([a, b]))`; `None` when `op` is not there.
fn split_set(part: &str, op: &str) -> Option<(String, Option<Vec<String>>)> {
    let (key, rest) = part.split_once(op)?;
    let values = rest
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .map(|inner| {
            inner
                .split(',')
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
                .collect()
        });
    Some((key.trim().to_owned(), values))
}

/// The fields kube-apiserver lets a field selector name, per kind (beyond
/// `metadata.name` and `metadata.namespace`, which every kind takes).
fn extra_fields(kind: &str) -> &'static [&'static str] {
    match kind {
        "Event" => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "regarding.kind",
            "regarding.namespace",
            "regarding.name",
            "regarding.uid",
            "regarding.apiVersion",
            "reason",
            "reportingComponent",
            "reportingController",
            "source",
            "type",
        ],
        "Secret" => &["type"],
        "Pod" => &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "status.phase",
            "status.podIP",
        ],
        "Job" => &["status.successful"],
        _ => &[],
    }
}

/// A field selector over `metadata.name`, `metadata.namespace` and the fields a kind adds
/// (see [`extra_fields`]), compared as text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    /// Parses `metadata.name=x,metadata.namespace!=y`.
    pub fn parse(text: &str, kind: &str) -> Result<Self, ApiError> {
        let mut terms = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (field, equal, value) = if let Some((f, v)) = part.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
                (f, true, v)
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{text}'; can't understand '{part}'"
                )));
            };
            let field = field.trim();
            if !matches!(field, "metadata.name" | "metadata.namespace")
                && !extra_fields(kind).contains(&field)
            {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {field}"
                )));
            }
            terms.push((field.to_owned(), equal, value.trim().to_owned()));
        }
        Ok(Self(terms))
    }

    /// Whether `object` satisfies every term.
    pub fn matches(&self, object: &Value) -> bool {
        self.0.iter().all(|(field, equal, value)| {
            let pointer = format!("/{}", field.replace('.', "/"));
            let actual = match object.pointer(&pointer) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            (actual == *value) == *equal
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labelled(labels: Value) -> Value {
        json!({"metadata": {"name": "n", "namespace": "ns", "labels": labels}})
    }

    #[test]
    fn label_selector_requirements_match_as_the_api_defines_them() {
        let object = labelled(json!({"app": "web", "tier": "front"}));
        let cases = [
            ("app=web", true),
            ("app==web", true),
            ("app!=web", false),
            ("app in (web, db)", true),
            ("app notin (web)", false),
            ("tier", true),
            ("!tier", false),
            ("missing notin (x)", true),
            ("app=web,tier=back", false),
            ("", true),
        ];
        for (selector, expected) in cases {
            let parsed = LabelSelector::parse(selector).expect(selector);
            assert_eq!(parsed.matches(&object), expected, "{selector}");
        }
    }

    #[test]
    fn a_set_without_parentheses_is_a_bad_request() {
        let err = LabelSelector::parse("app in web").expect_err("no parentheses");
        assert_eq!(err.code, 400);
    }

    #[test]
    fn field_selectors_take_name_and_namespace_only() {
        let object = labelled(json!({}));
        assert!(
            FieldSelector::parse("metadata.name=n", "ConfigMap")
                .expect("name")
                .matches(&object)
        );
        assert!(
            !FieldSelector::parse("metadata.namespace!=ns", "ConfigMap")
                .expect("ns")
                .matches(&object)
        );
        assert_eq!(
            FieldSelector::parse("spec.x=1", "ConfigMap")
                .expect_err("unsupported")
                .code,
            400
        );
    }
}
