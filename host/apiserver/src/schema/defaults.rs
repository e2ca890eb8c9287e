//! Structural defaulting, as kube-apiserver runs it on every object read
//! from a request or from storage: first non-nullable `null`s without a
//! default are dropped (`PruneNonNullableNullsWithoutDefaults`), then
//! `default`s are filled in (`structuraldefaulting.Default`).

use serde_json::{Map, Value};

use super::node::{self, Additional};

/// Applies `schema`'s defaults to `object` in place.
///
/// * A member whose value is `null` and whose schema is neither `nullable`
///   nor has a `default` is removed (so it is neither defaulted nor
///   rejected as a type error).
/// * A declared property that is absent, or `null` while not `nullable`,
///   gets a copy of its `default`; the same holds for `null` array items
///   and `null` `additionalProperties` values whose schema has a default.
/// * Defaulting recurses into every value afterwards, so defaults nested in
///   a defaulted object, in array items and in map values apply too.
/// * A `nullable: true` field that is `null` stays `null`.
pub(crate) fn apply_defaults(schema: &Value, object: &mut Value) {
    prune_nulls(Some(schema), object);
    default(Some(schema), object);
}

fn is_non_nullable_null(v: &Value, s: Option<&Value>) -> bool {
    v.is_null() && s.is_some_and(|s| !node::flag(s, "nullable"))
}

fn prune_nulls(s: Option<&Value>, x: &mut Value) {
    match x {
        Value::Object(m) => {
            let drop: Vec<String> = m
                .iter()
                .filter(|(k, v)| {
                    let sub = s.and_then(|s| node::member_schema(s, k));
                    is_non_nullable_null(v, sub) && sub.is_some_and(|p| p.get("default").is_none())
                })
                .map(|(k, _)| k.clone())
                .collect();
            for k in drop {
                m.remove(&k);
            }
            for (k, v) in m.iter_mut() {
                prune_nulls(s.and_then(|s| node::member_schema(s, k)), v);
            }
        }
        Value::Array(a) => {
            let items = s.and_then(node::items);
            for v in a {
                prune_nulls(items, v);
            }
        }
        _ => {}
    }
}

fn default(s: Option<&Value>, x: &mut Value) {
    let Some(s) = s else {
        return;
    };
    match x {
        Value::Object(m) => default_object(s, m),
        Value::Array(a) => {
            let items = node::items(s);
            for v in a {
                if is_non_nullable_null(v, items)
                    && let Some(d) = items.and_then(|i| i.get("default"))
                {
                    *v = d.clone();
                }
                default(items, v);
            }
        }
        _ => {}
    }
}

fn default_object(s: &Value, m: &mut Map<String, Value>) {
    if let Some(props) = node::properties(s) {
        for (k, prop) in props {
            let Some(d) = prop.get("default") else {
                continue;
            };
            let missing = m.get(k).is_none_or(|v| is_non_nullable_null(v, Some(prop)));
            if missing {
                m.insert(k.clone(), d.clone());
            }
        }
    }
    let ap = match node::additional(s) {
        Additional::Schema(ap) => Some(ap),
        _ => None,
    };
    for (k, v) in m.iter_mut() {
        if let Some(prop) = node::property(s, k) {
            default(Some(prop), v);
        } else if let Some(ap) = ap {
            if is_non_nullable_null(v, Some(ap))
                && let Some(d) = ap.get("default")
            {
                *v = d.clone();
            }
            default(Some(ap), v);
        }
    }
}

#[cfg(test)]
#[path = "defaults_tests.rs"]
mod tests;
