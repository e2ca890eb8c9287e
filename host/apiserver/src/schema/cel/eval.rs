//! Evaluating the rules of a schema on a custom resource, as kube-apiserver's CEL validator
//! does: each non-null value's node's rules with `self` (and, on an update where the old
//! value can be found, `oldSelf`), a node's rules before its children's.

use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use cel::common::types::{CelNull, CelOptional};
use cel::common::value::Val;
use cel::{Context, ExecutionError, Value as Cel};
use serde_json::Value;

use super::super::errors::FieldError;
use super::super::listtypes::{ListType, list_type_of};
use super::super::node::{self, Additional};
use super::rules::{OwnedRule, Rule, extend_path, field_path_steps};
use super::{check, library, values};

/// What the rules said of an object.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// The failures that refuse the write.
    pub errors: Vec<FieldError>,
    /// Failures on values the update did not change (ratcheting): reported, not refused.
    pub warnings: Vec<String>,
}

/// Evaluates every rule of `schema` on `object`; `old` is the stored object of an update.
pub(crate) fn validate(schema: &Arc<Value>, object: &Value, old: Option<&Value>) -> Outcome {
    let mut outcome = Outcome::default();
    let plan = plan_of(schema);
    let mut walk = Walk {
        plan: &plan,
        path: Vec::new(),
        out: &mut outcome,
    };
    walk.value(schema, object, old, true);
    outcome
}

/// The addresses of the schema nodes with a rule at or below them.
type Ruled = std::collections::HashSet<usize, std::hash::BuildHasherDefault<AddressHasher>>;

/// What evaluating a served schema's rules needs, prepared once per schema.
#[derive(Default)]
struct Plan {
    /// The nodes with a rule at or below them.
    ruled: Ruled,
    /// Per node with rules, by address: its rules' programs and the members they read.
    nodes: std::collections::HashMap<usize, NodePlan, std::hash::BuildHasherDefault<AddressHasher>>,
}

/// A node's rules compiled, in the order of its `x-kubernetes-validations`.
struct NodePlan {
    /// The rules' texts.
    rules: Vec<OwnedRule>,
    /// The node's `type`, the value of an `Invalid value` error.
    kind: Value,
    /// Each rule's program, or why it does not compile.
    programs: Vec<Result<Arc<check::Compiled>, String>>,
    /// The members of the node's value the rules (and message expressions) read.
    members: Option<Vec<String>>,
}

/// Hashes a node's address with one multiplication (SipHash showed in profiles).
#[derive(Default)]
struct AddressHasher(u64);

impl std::hash::Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// The [`Plan`] of a served schema, made once: the cache holds the schema itself, so the
/// addresses stay its own while the entry lives. Bounded; started over when full.
fn plan_of(schema: &Arc<Value>) -> Arc<Plan> {
    type Cache = Mutex<Vec<(Arc<Value>, Arc<Plan>)>>;
    static CACHE: LazyLock<Cache> = LazyLock::new(Default::default);
    const KEPT: usize = 256;
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, plan)) = cache.iter().find(|(s, _)| Arc::ptr_eq(s, schema)) {
        return plan.clone();
    }
    let mut plan = Plan::default();
    mark_ruled(schema, &mut plan);
    let plan = Arc::new(plan);
    if cache.len() >= KEPT {
        cache.clear();
    }
    cache.push((schema.clone(), plan.clone()));
    plan
}

/// Adds `s` and the nodes below it that have a rule at or below them, and the plans of
/// those with rules; whether `s` has one at or below it.
fn mark_ruled(s: &Value, plan: &mut Plan) -> bool {
    let rules = Rule::all_of(s);
    let mut any = !rules.is_empty();
    if any {
        let programs: Vec<_> = rules.iter().map(|r| check::parse(r.rule)).collect();
        let members = members_of(&rules, &programs);
        plan.nodes.insert(
            s as *const Value as usize,
            NodePlan {
                rules: rules.iter().map(OwnedRule::from).collect(),
                kind: Value::from(node::type_of(s)),
                programs,
                members,
            },
        );
    }
    for property in node::properties(s).into_iter().flatten().map(|(_, p)| p) {
        any |= mark_ruled(property, plan);
    }
    if let Some(items) = node::items(s) {
        any |= mark_ruled(items, plan);
    }
    if let Additional::Schema(values) = node::additional(s) {
        any |= mark_ruled(values, plan);
    }
    if any {
        plan.ruled.insert(s as *const Value as usize);
    }
    any
}

/// One step of the path to a value, printed only when an error names it.
enum Step<'a> {
    Member(&'a str),
    Index(usize),
}

struct Walk<'w, 'v> {
    plan: &'w Plan,
    path: Vec<Step<'v>>,
    out: &'w mut Outcome,
}

/// A path as `field.Path` prints it; the root's is Go's nil path, `<nil>`.
fn printed(steps: &[Step<'_>]) -> String {
    let mut path = String::new();
    for step in steps {
        path = match step {
            Step::Member(name) => node::child(&path, name),
            Step::Index(i) => node::index(&path, *i),
        };
    }
    if path.is_empty() {
        "<nil>".to_owned()
    } else {
        path
    }
}

impl<'v> Walk<'_, 'v> {
    fn is_ruled(&self, s: &Value) -> bool {
        self.plan.ruled.contains(&(s as *const Value as usize))
    }

    /// Member `key` of an object, with its stored counterpart.
    fn member(&mut self, s: &'v Value, key: &'v str, new: &'v Value, old: Option<&'v Value>) {
        let old_member = old.and_then(|o| o.get(key));
        self.path.push(Step::Member(key));
        self.value(s, new, old_member, false);
        self.path.pop();
    }

    fn value(&mut self, s: &'v Value, new: &'v Value, old: Option<&'v Value>, root: bool) {
        if new.is_null() || !self.is_ruled(s) {
            return;
        }
        if let Some(node_plan) = self.plan.nodes.get(&(s as *const Value as usize)) {
            Node {
                schema: s,
                new,
                old,
                steps: &self.path,
                root,
            }
            .evaluate(node_plan, self.out);
        }
        match new {
            Value::Object(members) => {
                // The declared properties with rules at or below them, in key order; then
                // the other members when the values' schema has rules.
                let properties = node::properties(s);
                for (key, property) in properties.into_iter().flatten() {
                    if (root && key == "metadata") || !self.is_ruled(property) {
                        continue;
                    }
                    if let Some(member) = members.get(key) {
                        self.member(property, key, member, old);
                    }
                }
                if let Additional::Schema(values) = node::additional(s)
                    && self.is_ruled(values)
                {
                    for (key, member) in members {
                        if !properties.is_some_and(|p| p.contains_key(key)) {
                            self.member(values, key, member, old);
                        }
                    }
                }
            }
            Value::Array(items) => {
                let Some(item_schema) = node::items(s) else {
                    return;
                };
                let keys = match list_type_of(s) {
                    ListType::Map(keys) => Some(keys),
                    _ => None,
                };
                let old_items = old.and_then(Value::as_array);
                for (i, item) in items.iter().enumerate() {
                    let old_item = match (&keys, old_items) {
                        (Some(keys), Some(old_items)) => old_items
                            .iter()
                            .find(|o| keys.iter().all(|k| o.get(k) == item.get(k))),
                        _ => None,
                    };
                    self.path.push(Step::Index(i));
                    self.value(item_schema, item, old_item, false);
                    self.path.pop();
                }
            }
            _ => {}
        }
    }
}

/// One value with rules: its schema node, the new and stored values, its path (printed
/// only for an error).
struct Node<'a> {
    schema: &'a Value,
    new: &'a Value,
    old: Option<&'a Value>,
    steps: &'a [Step<'a>],
    root: bool,
}

impl Node<'_> {
    /// Evaluates the node's rules in one context per way `oldSelf` is declared: the values
    /// are converted once per node, with only the members the rules read.
    fn evaluate(&self, plan: &NodePlan, out: &mut Outcome) {
        let kind = &plan.kind;
        let path = || printed(self.steps);
        let members = plan.members.as_deref();
        let convert = |value| values::to_val_members(self.schema, value, self.root, members);
        // Moved into the first context that needs them, converted again only for a second.
        let mut this = Some(convert(self.new));
        let mut before = self.old.map(convert);
        let mut contexts: [Option<Context<'_, '_>>; 2] = [None, None];
        for (owned, program) in plan.rules.iter().zip(&plan.programs) {
            let rule = &owned.as_rule();
            let compiled = match program {
                Ok(compiled) => compiled,
                Err(e) => {
                    let detail = format!("rule compile error: {e}");
                    out.errors
                        .push(FieldError::invalid(&path(), kind.clone(), &detail));
                    continue;
                }
            };
            let optional = rule.optional_old_self == Some(true);
            if compiled.uses_old_self && self.old.is_none() && !optional {
                continue;
            }
            let context = contexts[usize::from(optional)].get_or_insert_with(|| {
                let mut context = Context::with_env(library::env());
                let value = this.take().unwrap_or_else(|| convert(self.new));
                context.add_variable_as_val("self", value);
                let old = before.take().or_else(|| self.old.map(convert));
                let old_self: Box<dyn Val> = match (optional, old) {
                    (true, Some(b)) => Box::new(CelOptional::of(b)),
                    (true, None) => Box::new(CelOptional::none()),
                    (false, Some(b)) => b,
                    (false, None) => Box::new(CelNull),
                };
                context.add_variable_as_val("oldSelf", old_self);
                context
            });
            let error = match compiled.program.execute(context) {
                Ok(Cel::Bool(true)) => continue,
                Ok(Cel::Bool(false)) => failure(rule, context, &path(), kind),
                Ok(_) => FieldError::invalid(
                    &path(),
                    kind.clone(),
                    &format!(
                        "rule did not evaluate to a bool evaluating rule: {}",
                        rule.rule.trim()
                    ),
                ),
                Err(e) => FieldError::invalid(&path(), kind.clone(), &runtime_error(&e, rule)),
            };
            // Ratcheting: a value the update left as it was may keep failing a rule that
            // does not compare it with the old one.
            if !compiled.uses_old_self && self.old == Some(self.new) {
                out.warnings
                    .push(crate::status::warning_header(&error.to_string()));
            } else {
                out.errors.push(error);
            }
        }
    }
}

/// The members of `self` every rule (and `messageExpression`) of a node reads together;
/// `None` when one of them uses a whole value.
fn members_of(
    rules: &[Rule],
    programs: &[Result<Arc<check::Compiled>, String>],
) -> Option<Vec<String>> {
    let mut members: Vec<String> = Vec::new();
    for (rule, program) in rules.iter().zip(programs) {
        let Ok(program) = program else { continue };
        let mut read = vec![program.members.clone()?];
        if !rule.message_expression.trim().is_empty() {
            read.push(
                check::parse(rule.message_expression)
                    .ok()?
                    .members
                    .clone()?,
            );
        }
        for name in read.into_iter().flatten() {
            if !members.contains(&name) {
                members.push(name);
            }
        }
    }
    Some(members)
}

/// The error of a rule that evaluated to false: its `reason`, at its `fieldPath`, with the
/// `messageExpression`'s text when that yields a usable one, else the message.
fn failure(rule: &Rule, context: &Context, path: &str, kind: &Value) -> FieldError {
    let at = match field_path_steps(rule.field_path) {
        Some(steps) if !steps.is_empty() => extend_path(path.trim_start_matches("<nil>"), &steps),
        _ => path.to_owned(),
    };
    let message = message_expression(rule, context).unwrap_or_else(|| rule.message_or_default());
    match rule.reason {
        Some("FieldValueForbidden") => FieldError::forbidden(&at, &message),
        Some("FieldValueRequired") => FieldError::required(&at, &message),
        Some("FieldValueDuplicate") => FieldError::duplicate(&at, kind.clone()),
        _ => FieldError::invalid(&at, kind.clone(), &message),
    }
}

/// The text of a rule's `messageExpression`: `None` when there is none, or it fails, or it
/// yields an empty string or one with a line break (kube then uses the message).
fn message_expression(rule: &Rule, context: &Context) -> Option<String> {
    if rule.message_expression.trim().is_empty() {
        return None;
    }
    let compiled = check::parse(rule.message_expression).ok()?;
    match compiled.program.execute(context) {
        Ok(Cel::String(text)) if !text.trim().is_empty() && !text.contains(['\n', '\r']) => {
            Some(text.trim().to_owned())
        }
        _ => None,
    }
}

/// An evaluation error as kube words it, in cel-go's terms.
fn runtime_error(e: &ExecutionError, rule: &Rule) -> String {
    let rule_text = rule.rule.trim();
    let cause = match e {
        ExecutionError::NoSuchOverload(_) | ExecutionError::UnsupportedBinaryOperator(..) => {
            return format!(
                "'no such overload': call arguments did not match a supported operator, function or macro signature for rule: {rule_text}"
            );
        }
        ExecutionError::NoSuchKey(key) => format!("no such key: {key}"),
        ExecutionError::IndexOutOfBounds(index) => {
            format!("index out of bounds: {}", cel_text(index))
        }
        ExecutionError::DivisionByZero(_) => "division by zero".to_owned(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".to_owned(),
        ExecutionError::Overflow(..) => "integer overflow".to_owned(),
        other => other.to_string(),
    };
    format!("{cause} evaluating rule: {rule_text}")
}

fn cel_text(value: &Cel) -> String {
    match value {
        Cel::Int(i) => i.to_string(),
        Cel::UInt(u) => u.to_string(),
        other => format!("{other:?}"),
    }
}
