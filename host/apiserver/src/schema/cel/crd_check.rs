//! The checks kube-apiserver makes on the rules of a CRD version's schema when the CRD is
//! written: every rule and `messageExpression` compiles against its node, `reason`,
//! `message`, `fieldPath` and `optionalOldSelf` are well formed, transition rules sit where
//! an old value can be found, and the estimated cost stays within the limits.

use serde_json::Value;

use super::super::errors::FieldError;
use super::super::listtypes::{ListType, list_type_of};
use super::super::node::{self, Additional};
use super::rules::{REASONS, Rule, Step, field_path_steps};
use super::{check, cost};

/// The errors of every rule in `schema` (a version's `openAPIV3Schema`), with paths under
/// `path`, the schema's place in the CRD.
pub(crate) fn check_rules(schema: &Value, path: &str) -> Vec<FieldError> {
    let mut walk = Walk {
        out: Vec::new(),
        total: 0,
    };
    walk.node(schema, path, &[], None);
    if walk.total > cost::TOTAL_LIMIT {
        walk.out.push(FieldError::forbidden(
            path,
            &cost::exceeds(
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                walk.total,
                cost::TOTAL_LIMIT,
            ),
        ));
    }
    walk.out
}

struct Walk {
    out: Vec<FieldError>,
    total: u64,
}

impl Walk {
    /// `parents`: the list and map nodes enclosing `s`; `uncorrelatable`: the path of the
    /// nearest enclosing list whose items have no identity (not `x-kubernetes-list-type:
    /// map`), under which `oldSelf` has nothing to refer to.
    fn node(&mut self, s: &Value, path: &str, parents: &[&Value], uncorrelatable: Option<&str>) {
        for (i, rule) in Rule::all_of(s).iter().enumerate() {
            let at = format!("{}[{i}]", node::child(path, "x-kubernetes-validations"));
            self.rule(s, rule, &at, parents, uncorrelatable);
        }
        for (name, property) in node::properties(s).into_iter().flatten() {
            let child = node::key(&node::child(path, "properties"), name);
            self.node(property, &child, parents, uncorrelatable);
        }
        let mut inner: Vec<&Value> = parents.to_vec();
        inner.push(s);
        if let Some(items) = node::items(s) {
            let child = node::child(path, "items");
            let within = match list_type_of(s) {
                ListType::Map(_) => uncorrelatable,
                _ => Some(path),
            };
            self.node(items, &child, &inner, within);
        }
        if let Additional::Schema(values) = node::additional(s) {
            let child = node::child(path, "additionalProperties");
            self.node(values, &child, &inner, uncorrelatable);
        }
    }

    fn rule(
        &mut self,
        s: &Value,
        rule: &Rule,
        at: &str,
        parents: &[&Value],
        uncorrelatable: Option<&str>,
    ) {
        let rule_path = node::child(at, "rule");
        if rule.rule.trim().is_empty() {
            self.out
                .push(FieldError::required(&rule_path, "rule is not specified"));
        } else {
            let optional = rule.optional_old_self == Some(true);
            match check::compile(rule.rule, s, optional, true) {
                Err(detail) => self.out.push(FieldError::invalid_printed(
                    &rule_path,
                    rule.go_sharp_v(),
                    &detail,
                )),
                Ok(compiled) => {
                    let each = cost::estimate(compiled.program.expression(), s);
                    let total = each.saturating_mul(cost::cardinality(s, parents));
                    if total > cost::RULE_LIMIT {
                        self.out.push(FieldError::forbidden(
                            &rule_path,
                            &cost::exceeds("estimated rule cost", total, cost::RULE_LIMIT),
                        ));
                    }
                    self.total = self.total.saturating_add(total);
                    if compiled.uses_old_self
                        && let Some(within) = uncorrelatable
                    {
                        self.out.push(FieldError::invalid(
                            &rule_path,
                            Value::from(rule.rule),
                            &format!(
                                "oldSelf cannot be used on the uncorrelatable portion of the schema within {within}"
                            ),
                        ));
                    }
                    if let Some(flag) = rule.optional_old_self
                        && !compiled.uses_old_self
                    {
                        self.out.push(FieldError::invalid(
                            &node::child(at, "optionalOldSelf"),
                            Value::Bool(flag),
                            "may not be set if oldSelf is not used in rule",
                        ));
                    }
                }
            }
        }
        self.message(rule, at);
        self.message_expression(s, rule, at);
        if let Some(reason) = &rule.reason
            && !REASONS.contains(reason)
        {
            let supported: Vec<String> = REASONS.iter().map(|r| (*r).to_owned()).collect();
            self.out.push(FieldError::not_supported(
                &node::child(at, "reason"),
                Value::from(*reason),
                &supported,
            ));
        }
        if !rule.field_path.is_empty() && !resolves(s, rule.field_path) {
            self.out.push(FieldError::invalid(
                &node::child(at, "fieldPath"),
                Value::from(rule.field_path),
                "fieldPath must be a valid path",
            ));
        }
    }

    fn message(&mut self, rule: &Rule, at: &str) {
        let path = node::child(at, "message");
        if !rule.message.is_empty() && rule.message.trim().is_empty() {
            self.out.push(FieldError::required(
                &path,
                "message must be non-empty if specified",
            ));
        } else if rule.message.contains(['\n', '\r']) {
            self.out.push(FieldError::invalid(
                &path,
                Value::from(rule.message),
                "message must not contain line breaks",
            ));
        }
    }

    fn message_expression(&mut self, s: &Value, rule: &Rule, at: &str) {
        if rule.message_expression.is_empty() {
            return;
        }
        let path = node::child(at, "messageExpression");
        if rule.message_expression.trim().is_empty() {
            self.out.push(FieldError::required(
                &path,
                "messageExpression must be non-empty if specified",
            ));
            return;
        }
        let optional = rule.optional_old_self == Some(true);
        if let Err(detail) = check::compile(rule.message_expression, s, optional, false) {
            let detail = if detail.starts_with("compilation failed") {
                format!("messageExpression {detail}")
            } else {
                detail
            };
            self.out.push(FieldError::invalid_printed(
                &path,
                rule.go_sharp_v(),
                &detail,
            ));
        }
    }
}

/// Whether a rule's `fieldPath` names a node of `schema`.
fn resolves(schema: &Value, field_path: &str) -> bool {
    let Some(steps) = field_path_steps(field_path) else {
        return false;
    };
    let mut at = schema;
    for step in &steps {
        let next = match step {
            Step::Member(name) | Step::Key(name) => node::member_schema(at, name),
            Step::Index(_) => node::items(at),
        };
        match next {
            Some(n) => at = n,
            None => return node::flag(at, "x-kubernetes-preserve-unknown-fields"),
        }
    }
    true
}
