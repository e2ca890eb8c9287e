//! Pruning of unknown fields (`structuralpruning.PruneWithOptions`) and the
//! messages of the `fieldValidation` modes that report them.

use serde_json::Value;

use super::errors::go_quote;
use super::node::{self, Additional};

const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// Removes from `object` every field `schema` does not declare, and returns
/// the removed paths, sorted, spelled as kube spells them for
/// `fieldValidation` (`spec.policy`, `spec.certificates[0].authority.expiry`:
/// no leading dot, `[i]` for indices, keys not escaped).
///
/// * The root, and every node with `x-kubernetes-embedded-resource: true`,
///   keeps `apiVersion`, `kind` and `metadata` untouched (metadata is
///   handled by the caller); `status` and everything else survives only if
///   declared.
/// * `x-kubernetes-preserve-unknown-fields: true` keeps undeclared members
///   (and does not look inside them) but still prunes inside declared ones.
/// * `additionalProperties: {schema}` declares every member, pruned by that
///   schema; `additionalProperties: true` keeps members but prunes inside
///   object values as kube does (an object value without a schema loses all
///   its fields).
pub(crate) fn prune(schema: &Value, object: &mut Value) -> Vec<String> {
    let mut pruned = Vec::new();
    if let Value::Object(m) = object {
        prune_members(Some(schema), true, false, m, "", &mut pruned);
    }
    pruned.sort();
    pruned
}

/// What applies to the members of an object: its declared property, its
/// `additionalProperties`, or nothing (the member is unknown).
enum Member<'a> {
    Declared(Option<&'a Value>),
    Unknown,
}

fn member<'a>(s: &'a Value, k: &str) -> Member<'a> {
    if let Some(p) = node::property(s, k) {
        return Member::Declared(Some(p));
    }
    match node::additional(s) {
        Additional::Schema(ap) => Member::Declared(Some(ap)),
        Additional::Allows(true) => Member::Declared(None),
        Additional::Allows(false) | Additional::Absent => Member::Unknown,
    }
}

/// Prunes the members of one object. `inherited` is kube's `skipPrune`
/// reaching an array item: unknown members are kept even though the item
/// schema does not say `x-kubernetes-preserve-unknown-fields`.
fn prune_members(
    s: Option<&Value>,
    embedded: bool,
    inherited: bool,
    m: &mut serde_json::Map<String, Value>,
    path: &str,
    pruned: &mut Vec<String>,
) {
    let preserve = inherited || s.is_some_and(preserves);
    let keys: Vec<String> = m.keys().cloned().collect();
    for k in keys {
        if embedded && META_FIELDS.contains(&k.as_str()) {
            continue;
        }
        let decl = s.map_or(Member::Unknown, |s| member(s, &k));
        match decl {
            Member::Declared(sub) => {
                if let Some(v) = m.get_mut(&k) {
                    prune_value(sub, v, &node::child(path, &k), false, pruned);
                }
            }
            Member::Unknown if preserve => {}
            Member::Unknown => {
                pruned.push(node::child(path, &k));
                m.remove(&k);
            }
        }
    }
}

fn preserves(s: &Value) -> bool {
    node::flag(s, "x-kubernetes-preserve-unknown-fields")
}

fn prune_value(
    s: Option<&Value>,
    x: &mut Value,
    path: &str,
    inherited: bool,
    pruned: &mut Vec<String>,
) {
    let preserve = inherited || s.is_some_and(preserves);
    match x {
        Value::Object(m) => {
            let embedded = s.is_some_and(|s| node::flag(s, "x-kubernetes-embedded-resource"));
            prune_members(s, embedded, inherited, m, path, pruned);
        }
        Value::Array(a) => {
            let items = s.and_then(node::items);
            if preserve && items.is_none() {
                return;
            }
            for (i, v) in a.iter_mut().enumerate() {
                prune_value(items, v, &node::index(path, i), preserve, pruned);
            }
        }
        _ => {}
    }
}

/// One `unknown field "<path>"` per pruned path, as kube words each strict
/// decoding problem.
fn unknown_field(path: &str) -> String {
    format!("unknown field {}", go_quote(path))
}

/// The message of the 400 BadRequest kube returns for
/// `fieldValidation=Strict`:
/// `strict decoding error: unknown field "spec.policy", unknown field "…"`.
/// `unknown` should be the (sorted) output of [`prune`].
pub(crate) fn strict_error(unknown: &[String]) -> String {
    let parts: Vec<String> = unknown.iter().map(|p| unknown_field(p)).collect();
    format!("strict decoding error: {}", parts.join(", "))
}

/// The `Warning` header values kube sends for `fieldValidation=Warn`, one
/// per pruned path: `299 - "unknown field \"spec.policy\""` (the text is
/// quoted with `"` and `\` escaped, as `net.NewWarningHeader` does).
pub(crate) fn warnings(unknown: &[String]) -> Vec<String> {
    unknown
        .iter()
        .map(|p| crate::status::warning_header(&unknown_field(p)))
        .collect()
}

#[cfg(test)]
#[path = "prune_tests.rs"]
mod tests;
