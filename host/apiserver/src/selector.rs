//! Field selectors in the API's text form, and label selectors (the shared
//! [`LabelSelector`]) parsed into the API server's errors.

use serde_json::Value;

use crate::status::ApiError;

pub(crate) use wasm_operator_types::LabelSelector;

/// Parses a label selector; a bad one is a 400 with kube-apiserver's message.
pub(crate) fn parse_label_selector(text: &str) -> Result<LabelSelector, ApiError> {
    LabelSelector::parse(text).map_err(|e| ApiError::bad_request(e.to_string()))
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
pub(crate) struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    /// Parses `metadata.name=x,metadata.namespace!=y`.
    pub(crate) fn parse(text: &str, kind: &str) -> Result<Self, ApiError> {
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
    pub(crate) fn matches(&self, object: &Value) -> bool {
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
    fn a_set_without_parentheses_is_a_bad_request() {
        let err = parse_label_selector("app in web").expect_err("no parentheses");
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
