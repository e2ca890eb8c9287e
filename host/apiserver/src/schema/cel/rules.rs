//! One `x-kubernetes-validations` entry, read leniently from the schema, and the wording
//! kube-apiserver gives it in errors.

use serde_json::Value;

use super::super::errors::go_quote;

/// The `reason`s a rule may give; anything else is refused when the CRD is written.
pub(crate) const REASONS: [&str; 4] = [
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

/// A validation rule as written in the schema.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Rule<'s> {
    pub rule: &'s str,
    pub message: &'s str,
    pub message_expression: &'s str,
    pub reason: Option<&'s str>,
    pub field_path: &'s str,
    pub optional_old_self: Option<bool>,
}

impl<'s> Rule<'s> {
    /// Reads one entry; a member of the wrong JSON type reads as absent.
    pub(crate) fn read(entry: &'s Value) -> Self {
        let text = |key: &str| entry.get(key).and_then(Value::as_str).unwrap_or_default();
        Self {
            rule: text("rule"),
            message: text("message"),
            message_expression: text("messageExpression"),
            reason: entry.get("reason").and_then(Value::as_str),
            field_path: text("fieldPath"),
            optional_old_self: entry.get("optionalOldSelf").and_then(Value::as_bool),
        }
    }

    /// The rules of a schema node, in order.
    pub(crate) fn all_of(schema: &'s Value) -> Vec<Self> {
        schema
            .get("x-kubernetes-validations")
            .and_then(Value::as_array)
            .map(|entries| entries.iter().map(Self::read).collect())
            .unwrap_or_default()
    }

    /// The message of a failed rule without a `messageExpression` (or whose expression
    /// failed): the trimmed `message`, else `failed rule: <rule>`.
    pub(crate) fn message_or_default(&self) -> String {
        if self.message.is_empty() {
            format!("failed rule: {}", self.rule.trim())
        } else {
            self.message.trim().to_owned()
        }
    }

    /// The rule as Go's `%#v` prints the internal `apiextensions.ValidationRule` in a CRD
    /// error (pointers as Go prints them: nil, or an address).
    pub(crate) fn go_sharp_v(&self) -> String {
        let reason = match &self.reason {
            None => "(*apiextensions.FieldValueErrorReason)(nil)".to_owned(),
            Some(_) => "(*apiextensions.FieldValueErrorReason)(0xc000a1b2c0)".to_owned(),
        };
        let optional = match self.optional_old_self {
            None => "(*bool)(nil)".to_owned(),
            Some(_) => "(*bool)(0xc000a1b2c8)".to_owned(),
        };
        format!(
            "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{reason}, FieldPath:{}, OptionalOldSelf:{optional}}}",
            go_quote(self.rule),
            go_quote(self.message),
            go_quote(self.message_expression),
            go_quote(self.field_path),
        )
    }
}

/// A rule's texts, owned: what a schema's evaluation plan keeps.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct OwnedRule {
    rule: String,
    message: String,
    message_expression: String,
    reason: Option<String>,
    field_path: String,
    optional_old_self: Option<bool>,
}

impl OwnedRule {
    /// The rule, borrowed.
    pub(crate) fn as_rule(&self) -> Rule<'_> {
        Rule {
            rule: &self.rule,
            message: &self.message,
            message_expression: &self.message_expression,
            reason: self.reason.as_deref(),
            field_path: &self.field_path,
            optional_old_self: self.optional_old_self,
        }
    }
}

impl From<&Rule<'_>> for OwnedRule {
    fn from(rule: &Rule<'_>) -> Self {
        Self {
            rule: rule.rule.to_owned(),
            message: rule.message.to_owned(),
            message_expression: rule.message_expression.to_owned(),
            reason: rule.reason.map(str::to_owned),
            field_path: rule.field_path.to_owned(),
            optional_old_self: rule.optional_old_self,
        }
    }
}

/// A rule's `fieldPath` (`.spec.a`, `.a['b.c']`, `.list[0]`) as the steps kube appends to
/// the error's path: members, then `[key]` or `[index]`. `None` when it does not parse.
pub(crate) fn field_path_steps(path: &str) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let name = &after[..end];
            if name.is_empty() {
                return None;
            }
            steps.push(Step::Member(name.to_owned()));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            let inner = &after[..end];
            let quoted = inner
                .strip_prefix('\'')
                .and_then(|s| s.strip_suffix('\''))
                .or_else(|| inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')));
            match (quoted, inner.parse::<usize>()) {
                (Some(key), _) => steps.push(Step::Key(key.to_owned())),
                (None, Ok(i)) => steps.push(Step::Index(i)),
                _ => return None,
            }
            rest = &after[end + 1..];
        } else {
            return None;
        }
    }
    Some(steps)
}

/// One step of a `fieldPath`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// `.name`: a property.
    Member(String),
    /// `['key']`: a property or map key.
    Key(String),
    /// `[0]`: a list index.
    Index(usize),
}

/// `base` extended by `steps`, as `field.Path` prints it (`spec.a[b]`, `spec.l[0]`).
pub(crate) fn extend_path(base: &str, steps: &[Step]) -> String {
    let mut path = base.to_owned();
    for step in steps {
        path = match step {
            Step::Member(name) => super::super::node::child(&path, name),
            Step::Key(key) => super::super::node::key(&path, key),
            Step::Index(i) => super::super::node::index(&path, *i),
        };
    }
    path
}
