//! Label selectors in the API's text form: parsed once, matched against objects' labels.
//! One implementation for the API server, the informer cache and canary routing.

use serde_json::Value;

/// A label selector that does not parse, with kube-apiserver's wording.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unable to parse requirement: {why}: {text:?}")]
pub struct SelectorError {
    /// What is wrong with it.
    pub why: &'static str,
    /// The selector as given.
    pub text: String,
}

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
    pub fn parse(text: &str) -> Result<Self, SelectorError> {
        let bad = |why: &'static str| SelectorError {
            why,
            text: text.to_owned(),
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
    fn a_set_without_parentheses_is_an_error_naming_the_selector() {
        let err = LabelSelector::parse("app in web").expect_err("no parentheses");
        assert_eq!(
            err.to_string(),
            "unable to parse requirement: values must be in parentheses: \"app in web\""
        );
    }
}
