//! The estimated cost of a rule, the limit kube-apiserver puts on it when the CRD is
//! written, and the wording of a refusal.
//!
//! The model follows cel-go's estimator in what decides the outcome: a comprehension
//! (`all`, `exists`, `map`, `filter`, ...) costs its body once per element of the largest
//! list or map its schema allows; equality costs a tenth of the smaller operand's size,
//! `startsWith` of the prefix's, `in` of the list's, `matches` and `contains` the product of both sides'
//! traversals, other string and list functions a tenth of their receiver's size; variables,
//! fields and other calls one unit. A rule on a node that can occur many times (inside
//! lists and maps) is multiplied by that count: the product of the enclosing bounds, or,
//! under an unbounded one, as many as fit in a 3 MiB request. A list, map or string with no
//! `maxItems`, `maxProperties` or `maxLength` is as large as fits in a request, as kube
//! assumes. The numbers are not cel-go's to the unit: a rule close to a limit may be judged
//! differently.

use cel::IdedExpr;
use cel::common::ast::{Expr, LiteralValue};
use serde_json::Value;

use super::super::node::{self, Additional};
use super::check::Ty;

/// The most a single rule may be estimated to cost (`StaticEstimatedCostLimit`).
pub(crate) const RULE_LIMIT: u64 = 10_000_000;
/// The most all rules of a CRD version may be estimated to cost together
/// (`StaticEstimatedCRDCostLimit`).
pub(crate) const TOTAL_LIMIT: u64 = 100_000_000;
/// kube-apiserver's request size limit, the bound of unbounded values.
const MAX_REQUEST_BYTES: u64 = 3 * 1024 * 1024;

/// The refusal message, as kube words it (`getCostErrorMessage`).
pub(crate) fn exceeds(what: &str, cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    let factor = if factor > 100.0 {
        "more than 100x".to_owned()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!(
        "{what} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

/// The smallest JSON a value of `schema` can serialize to, in bytes (an object's required
/// members included).
fn min_size(schema: &Value) -> u64 {
    match node::type_of(schema) {
        "string" => 2 + node_int(schema, "minLength").unwrap_or(0),
        "boolean" => 4,
        "integer" | "number" => 1,
        "object" => {
            let required = schema.get("required").and_then(Value::as_array);
            required
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .fold(2, |n, name| {
                    let member = node::property(schema, name).map_or(1, min_size);
                    // "name":value, and a comma.
                    n + name.len() as u64 + 4 + member
                })
        }
        _ => 2,
    }
}

fn node_int(schema: &Value, key: &str) -> Option<u64> {
    schema.get(key).and_then(Value::as_u64)
}

/// The most elements a list or map node may hold, or characters a string may.
pub(crate) fn max_size(schema: &Value) -> u64 {
    match node::type_of(schema) {
        "array" => node_int(schema, "maxItems").unwrap_or_else(|| {
            let item = node::items(schema).map_or(1, min_size);
            (MAX_REQUEST_BYTES - 2) / (item + 1)
        }),
        "object" => node_int(schema, "maxProperties").unwrap_or_else(|| {
            let value = match node::additional(schema) {
                Additional::Schema(values) => min_size(values),
                _ => 1,
            };
            // "":<value>, per pair.
            (MAX_REQUEST_BYTES - 2) / (value + 4)
        }),
        "string" => node_int(schema, "maxLength").unwrap_or(MAX_REQUEST_BYTES - 2),
        _ => 1,
    }
}

/// How many times `node`, under `parents` (the list and map nodes enclosing it), can occur
/// in one object: the product of the parents' bounds when they all declare one, else as
/// many as fit in a request at the node's smallest size.
pub(crate) fn cardinality(node: &Value, parents: &[&Value]) -> u64 {
    let bounded = parents.iter().all(|p| {
        let key = if node::type_of(p) == "array" {
            "maxItems"
        } else {
            "maxProperties"
        };
        node_int(p, key).is_some()
    });
    if bounded {
        parents
            .iter()
            .fold(1u64, |n, parent| n.saturating_mul(max_size(parent)))
    } else {
        MAX_REQUEST_BYTES / min_size(node).max(1)
    }
}

/// The estimated cost of one evaluation of `expr`, `self` typed by `schema`.
pub(crate) fn estimate(expr: &IdedExpr, schema: &Value) -> u64 {
    let mut scope = vec![
        ("self".to_owned(), Some(schema)),
        ("oldSelf".to_owned(), Some(schema)),
    ];
    cost(expr, &mut scope)
}

/// The schema node an expression yields, when it is a path from a typed variable.
fn schema_of<'s>(expr: &IdedExpr, scope: &[(String, Option<&'s Value>)]) -> Option<&'s Value> {
    match &expr.expr {
        Expr::Ident(name) => scope.iter().rev().find(|(n, _)| n == name)?.1,
        Expr::Select(select) if !select.test => {
            let operand = schema_of(&select.operand, scope)?;
            match Ty::Schema(operand).resolve() {
                Ty::Map(values) => match *values {
                    Ty::Schema(s) => Some(s),
                    _ => None,
                },
                _ => super::values::property_named(operand, &select.field),
            }
        }
        Expr::Call(call) if call.func_name == "_[_]" => {
            let operand = schema_of(call.args.first()?, scope)?;
            node::items(operand).or(match node::additional(operand) {
                Additional::Schema(values) => Some(values),
                _ => None,
            })
        }
        _ => None,
    }
}

/// The largest size of what `expr` yields: a literal's own, a schema node's bound, as large
/// as a request for a computed string or list, else 1 (a scalar).
fn size_of(expr: &IdedExpr, scope: &[(String, Option<&Value>)]) -> u64 {
    match &expr.expr {
        Expr::Literal(LiteralValue::String(s)) => s.chars().count() as u64,
        Expr::Literal(_) => 1,
        Expr::List(list) => list.elements.len() as u64,
        Expr::Call(call)
            if matches!(
                call.func_name.as_str(),
                "_+_"
                    | "string"
                    | "lowerAscii"
                    | "upperAscii"
                    | "trim"
                    | "replace"
                    | "substring"
                    | "join"
                    | "split"
                    | "findAll"
                    | "find"
                    | "format"
            ) =>
        {
            MAX_REQUEST_BYTES
        }
        _ => schema_of(expr, scope).map_or(1, max_size),
    }
}

/// `ceil(size × factor)`, cel-go's traversal cost of a string or list.
fn traversal(size: u64, factor: f64) -> u64 {
    (size as f64 * factor).ceil() as u64
}

fn cost(expr: &IdedExpr, scope: &mut Vec<(String, Option<&Value>)>) -> u64 {
    match &expr.expr {
        Expr::Ident(_) => 1,
        Expr::Select(select) => cost(&select.operand, scope).saturating_add(1),
        Expr::Call(call) => {
            let mut total: u64 = 1;
            if let Some(target) = &call.target {
                total = total.saturating_add(cost(target, scope));
            }
            for arg in &call.args {
                total = total.saturating_add(cost(arg, scope));
            }
            let mut operands = call.target.as_deref().into_iter().chain(call.args.iter());
            let first = operands.next().map_or(1, |e| size_of(e, scope));
            let second = operands.next().map_or(1, |e| size_of(e, scope));
            let own = match call.func_name.as_str() {
                "_==_" | "_!=_" => traversal(first.min(second), 0.1),
                "startsWith" | "endsWith" | "@in" => traversal(second, 0.1),
                "matches" | "find" | "findAll" => {
                    traversal(first + 1, 0.1).saturating_mul(traversal(second, 0.25))
                }
                "contains" => traversal(first + 1, 0.1).saturating_mul(traversal(second, 0.1)),
                "_+_" | "split" | "replace" | "lowerAscii" | "upperAscii" | "trim" | "join"
                | "indexOf" | "lastIndexOf" | "isSorted" | "sum" | "min" | "max"
                | "sets.contains" | "sets.equivalent" | "sets.intersects" | "url" | "isURL" => {
                    traversal(first, 0.1)
                }
                _ => 0,
            };
            total.saturating_add(own)
        }
        Expr::Comprehension(c) => {
            let range = schema_of(&c.iter_range, scope);
            let iterations = range.map_or(1, max_size);
            let element = range.and_then(|r| {
                node::items(r).or(match node::additional(r) {
                    Additional::Schema(values) => Some(values),
                    _ => None,
                })
            });
            let depth = scope.len();
            let list = range.is_some_and(|r| node::type_of(r) == "array");
            match &c.iter_var2 {
                Some(var2) => {
                    scope.push((c.iter_var.clone(), None));
                    scope.push((var2.clone(), element));
                }
                None => scope.push((c.iter_var.clone(), if list { element } else { None })),
            }
            scope.push((c.accu_var.clone(), None));
            let body = cost(&c.loop_cond, scope).saturating_add(cost(&c.loop_step, scope));
            let result = cost(&c.result, scope);
            scope.truncate(depth);
            cost(&c.iter_range, scope)
                .saturating_add(cost(&c.accu_init, scope))
                .saturating_add(iterations.saturating_mul(body))
                .saturating_add(result)
        }
        Expr::List(list) => list
            .elements
            .iter()
            .fold(1u64, |n, x| n.saturating_add(cost(x, scope))),
        Expr::Map(map) => map.entries.iter().fold(1u64, |n, entry| match &entry.expr {
            cel::common::ast::EntryExpr::MapEntry(m) => n
                .saturating_add(cost(&m.key, scope))
                .saturating_add(cost(&m.value, scope)),
            _ => n,
        }),
        _ => 0,
    }
}
