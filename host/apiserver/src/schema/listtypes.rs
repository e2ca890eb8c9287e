//! `x-kubernetes-list-type` / `x-kubernetes-list-map-keys` /
//! `x-kubernetes-map-type`: the uniqueness validation kube runs after the
//! schema pass (`listtype.ValidateListSetsAndMaps`), and the list/map
//! semantics server-side apply needs.

use serde_json::{Map, Value};

use super::errors::FieldError;
use super::node::{self, Additional};

/// One step of a path into an object, for [`schema_at`] and friends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathElement<'a> {
    /// An object member (property or `additionalProperties` key).
    Field(&'a str),
    /// An array element (any index selects `items`).
    Index(usize),
}

/// How server-side apply merges a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListType {
    /// Replaced as a whole (the default when `x-kubernetes-list-type` is unset).
    Atomic,
    /// Scalars merged by value.
    Set,
    /// Objects merged by the values of these key fields.
    Map(Vec<String>),
}

/// How server-side apply merges an object (a struct or a map).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MapType {
    /// Merged field by field (the default).
    Granular,
    /// Replaced as a whole.
    Atomic,
}

/// The schema node at `path`, following `properties`, then
/// `additionalProperties`, and `items` for indices. `None` when the path
/// leaves the schema (e.g. under `x-kubernetes-preserve-unknown-fields`).
pub(crate) fn schema_at<'a>(schema: &'a Value, path: &[PathElement<'_>]) -> Option<&'a Value> {
    path.iter().try_fold(schema, |s, step| match step {
        PathElement::Field(k) => node::member_schema(s, k),
        PathElement::Index(_) => node::items(s),
    })
}

/// The list type of the array node at `path`; `None` when the path does not
/// resolve to a schema node. An unset or unknown list type is atomic.
pub(crate) fn list_type_at(schema: &Value, path: &[PathElement<'_>]) -> Option<ListType> {
    schema_at(schema, path).map(list_type_of)
}

/// The list type declared on one schema node.
pub(crate) fn list_type_of(s: &Value) -> ListType {
    match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("set") => ListType::Set,
        Some("map") => ListType::Map(map_keys(s)),
        _ => ListType::Atomic,
    }
}

/// The map type of the object node at `path`; `None` when unresolved.
pub(crate) fn map_type_at(schema: &Value, path: &[PathElement<'_>]) -> Option<MapType> {
    schema_at(schema, path).map(
        |s| match s.get("x-kubernetes-map-type").and_then(Value::as_str) {
            Some("atomic") => MapType::Atomic,
            _ => MapType::Granular,
        },
    )
}

/// Whether the last field of `path` is a key of a map rather than a declared property: its
/// parent's schema lists no such property (the key is one of `additionalProperties`, or of
/// an object that keeps unknown fields). Apply's field set claims such a key even when its
/// value is an empty object or list.
pub(crate) fn is_map_key(schema: &Value, path: &[PathElement<'_>]) -> bool {
    let Some((PathElement::Field(key), parent)) = path.split_last() else {
        return false;
    };
    schema_at(schema, parent).is_some_and(|s| {
        s.get("properties")
            .and_then(Value::as_object)
            .is_none_or(|p| !p.contains_key(*key))
    })
}

/// Whether the object at `path` is replaced as a whole by apply.
pub(crate) fn map_is_atomic(schema: &Value, path: &[PathElement<'_>]) -> bool {
    map_type_at(schema, path) == Some(MapType::Atomic)
}

fn map_keys(s: &Value) -> Vec<String> {
    s.get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// Appends `Duplicate value` errors for `set` and `map` lists under `obj`.
/// Map members under `additionalProperties` are named `path[key]`, as kube does.
pub(crate) fn validate_lists(s: &Value, obj: &Value, path: &str, out: &mut Vec<FieldError>) {
    match obj {
        Value::Object(m) => validate_object(s, m, path, out),
        Value::Array(a) => validate_array(s, a, path, out),
        _ => {}
    }
}

fn validate_object(s: &Value, m: &Map<String, Value>, path: &str, out: &mut Vec<FieldError>) {
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort();
    if let Additional::Schema(ap) = node::additional(s) {
        for k in &keys {
            validate_lists(ap, &m[k.as_str()], &node::key(path, k), out);
        }
    }
    for k in &keys {
        if let Some(prop) = node::property(s, k) {
            validate_lists(prop, &m[k.as_str()], &node::child(path, k), out);
        }
    }
}

fn validate_array(s: &Value, a: &[Value], path: &str, out: &mut Vec<FieldError>) {
    match list_type_of(s) {
        ListType::Set => {
            for i in second_occurrences(a) {
                out.push(FieldError::duplicate(&node::index(path, i), a[i].clone()));
            }
        }
        ListType::Map(keys) => validate_map_list(&keys, a, path, out),
        ListType::Atomic => {}
    }
    if let Some(items) = node::items(s) {
        for (i, item) in a.iter().enumerate() {
            validate_lists(items, item, &node::index(path, i), out);
        }
    }
}

/// Indices of the second appearance of every repeated value (later repeats
/// are not reported again), as kube's `validateListSet`.
fn second_occurrences(values: &[Value]) -> Vec<usize> {
    let mut out = Vec::new();
    for (i, v) in values.iter().enumerate() {
        let before = values[..i].iter().filter(|w| *w == v).count();
        if before == 1 {
            out.push(i);
        }
    }
    out
}

fn validate_map_list(keys: &[String], a: &[Value], path: &str, out: &mut Vec<FieldError>) {
    if let Some((i, x)) = a
        .iter()
        .enumerate()
        .find(|(_, x)| !x.is_null() && !x.is_object())
    {
        let msg = "must be an object for an array of list-type map";
        out.push(FieldError::invalid(&node::index(path, i), x.clone(), msg));
        return;
    }
    // The key of each element: the present key fields only, so elements that
    // lack a key field collide with each other.
    let key_values: Vec<Value> = a
        .iter()
        .map(|x| {
            let mut key = Map::new();
            for k in keys {
                if let Some(v) = x.get(k) {
                    key.insert(k.clone(), v.clone());
                }
            }
            Value::Object(key)
        })
        .collect();
    for i in second_occurrences(&key_values) {
        out.push(FieldError::duplicate(
            &node::index(path, i),
            key_values[i].clone(),
        ));
    }
}

#[cfg(test)]
#[path = "listtypes_tests.rs"]
mod tests;
