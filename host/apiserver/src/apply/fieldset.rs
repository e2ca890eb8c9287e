//! Field paths, field sets and their `FieldsV1` wire form.
//!
//! A [`FieldSet`] is a tree like structured-merge-diff's `fieldpath.Set`:
//! every node has *members* (path elements owned at this level) and
//! *children* (non-empty sub-sets below a path element). A path element can
//! be both a member and a child: that is the `".": {}` entry of `FieldsV1`
//! ("this node itself is owned, and so are these fields below it").

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::{Map, Value};

use super::error::ApplyError;

/// One step of a field path.
#[derive(Debug, Clone)]
pub(crate) enum PathElement {
    /// A field of an object: `f:<name>`, printed `.name`.
    Field(String),
    /// An item of a list-map, identified by its key fields, sorted by name:
    /// `k:{"name":"x"}`, printed `[name="x"]`.
    Key(Vec<(String, Value)>),
    /// An item of a set (a list of scalars): `v:<json>`, printed `[=<json>]`.
    Value(Value),
    /// An item of a list by position: `i:<n>`, printed `[n]`. Never produced
    /// by this engine (atomic lists are owned whole) but parsed and kept.
    Index(usize),
}

/// A path from the root of an object; the root itself is the empty path.
pub(crate) type Path = Vec<PathElement>;

impl PathElement {
    /// A [`PathElement::Key`] with its fields sorted by name.
    pub(crate) fn key(mut fields: Vec<(String, Value)>) -> Self {
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        PathElement::Key(fields)
    }

    /// The `FieldsV1` spelling: `f:name`, `k:{..}`, `v:..`, `i:n`.
    pub(crate) fn to_fields_v1_key(&self) -> String {
        match self {
            PathElement::Field(name) => format!("f:{name}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{}:{}", Value::String(k.clone()), canonical_json(v)))
                    .collect();
                format!("k:{{{}}}", parts.join(","))
            }
            PathElement::Value(v) => format!("v:{}", canonical_json(v)),
            PathElement::Index(i) => format!("i:{i}"),
        }
    }

    /// Parses one `FieldsV1` key (not `.`).
    pub(crate) fn from_fields_v1_key(key: &str) -> Result<Self, ApplyError> {
        let bad = |why: &str| ApplyError::InvalidFieldsV1(format!("{why}: {key:?}"));
        if let Some(name) = key.strip_prefix("f:") {
            return Ok(PathElement::Field(name.to_string()));
        }
        if let Some(json) = key.strip_prefix("k:") {
            let Ok(Value::Object(map)) = serde_json::from_str::<Value>(json) else {
                return Err(bad("key element is not a JSON object"));
            };
            return Ok(PathElement::key(map.into_iter().collect()));
        }
        if let Some(json) = key.strip_prefix("v:") {
            return serde_json::from_str(json)
                .map(PathElement::Value)
                .map_err(|_| bad("value element is not JSON"));
        }
        if let Some(n) = key.strip_prefix("i:") {
            return n
                .parse()
                .map(PathElement::Index)
                .map_err(|_| bad("index element is not a number"));
        }
        Err(bad("unknown path element"))
    }
}

/// Compact JSON with object keys sorted (independent of serde_json features).
fn canonical_json(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| format!("{}:{}", Value::String((*k).clone()), canonical_json(&m[*k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(a) => {
            let parts: Vec<String> = a.iter().map(canonical_json).collect();
            format!("[{}]", parts.join(","))
        }
        other => other.to_string(),
    }
}

/// Value rendering of path elements in messages (Go's `value.ToString`):
/// strings quoted, numbers and booleans bare, lists `[a,b]`, maps `{k=v}`.
fn value_to_string(v: &Value) -> String {
    match v {
        Value::Array(a) => {
            let parts: Vec<String> = a.iter().map(value_to_string).collect();
            format!("[{}]", parts.join(","))
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| format!("{k}={}", value_to_string(&m[*k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        other => other.to_string(),
    }
}

impl fmt::Display for PathElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{k}={}", value_to_string(v)))
                    .collect();
                write!(f, "[{}]", parts.join(","))
            }
            PathElement::Value(v) => write!(f, "[={}]", value_to_string(v)),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// Renders a path as kube-apiserver does in conflict messages and causes,
/// e.g. `.spec.containers[name="nginx"].image`.
pub(crate) fn path_to_string(path: &[PathElement]) -> String {
    path.iter().map(ToString::to_string).collect()
}

fn type_rank(v: &Value) -> u8 {
    match v {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Number(_) => 2,
        Value::String(_) => 3,
        Value::Array(_) => 4,
        Value::Object(_) => 5,
    }
}

/// A total order on JSON values (null < bool < number < string < list < map).
pub(crate) fn value_cmp(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => {
                let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
                x.partial_cmp(&y).unwrap_or(Ordering::Equal)
            }
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (l, r) in x.iter().zip(y) {
                let c = value_cmp(l, r);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(_), Value::Object(_)) => canonical_json(a).cmp(&canonical_json(b)),
        _ => type_rank(a).cmp(&type_rank(b)),
    }
}

impl Ord for PathElement {
    /// Fields < keys < values < indexes, like structured-merge-diff.
    fn cmp(&self, other: &Self) -> Ordering {
        use PathElement::*;
        let rank = |e: &PathElement| match e {
            Field(_) => 0,
            Key(_) => 1,
            Value(_) => 2,
            Index(_) => 3,
        };
        match (self, other) {
            (Field(a), Field(b)) => a.cmp(b),
            (Key(a), Key(b)) => {
                for ((ka, va), (kb, vb)) in a.iter().zip(b) {
                    let c = ka.cmp(kb).then_with(|| value_cmp(va, vb));
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                a.len().cmp(&b.len())
            }
            (Value(a), Value(b)) => value_cmp(a, b),
            (Index(a), Index(b)) => a.cmp(b),
            _ => rank(self).cmp(&rank(other)),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

/// A set of field paths (see the module docs for the tree shape).
///
/// Invariant: children are never empty sets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FieldSet {
    members: BTreeSet<PathElement>,
    children: BTreeMap<PathElement, FieldSet>,
}

impl FieldSet {
    /// The empty set.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// True when no path is in the set.
    pub(crate) fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    /// Adds `path`. The empty path (the root) is never a member: ignored.
    pub(crate) fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    /// True when exactly `path` is in the set.
    #[cfg(test)]
    pub(crate) fn contains(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.contains(rest)),
        }
    }

    /// True when `path` or any path below it is in the set.
    pub(crate) fn contains_prefix(&self, path: &[PathElement]) -> bool {
        match path {
            [] => !self.is_empty(),
            [first, rest @ ..] => {
                (rest.is_empty() && self.members.contains(first))
                    || self
                        .children
                        .get(first)
                        .is_some_and(|c| c.contains_prefix(rest))
            }
        }
    }

    /// Every path in `self` or `other`.
    pub(crate) fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (pe, child) in &other.children {
            let merged = match out.children.get(pe) {
                Some(mine) => mine.union(child),
                None => child.clone(),
            };
            out.children.insert(pe.clone(), merged);
        }
        out
    }

    /// Every path in `self` that is not in `other` (exact paths: removing a
    /// path does not remove the paths below it).
    pub(crate) fn difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet {
            members: self.members.difference(&other.members).cloned().collect(),
            children: BTreeMap::new(),
        };
        for (pe, child) in &self.children {
            let rest = match other.children.get(pe) {
                Some(theirs) => child.difference(theirs),
                None => child.clone(),
            };
            if !rest.is_empty() {
                out.children.insert(pe.clone(), rest);
            }
        }
        out
    }

    /// Every path in both `self` and `other`.
    pub(crate) fn intersection(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet {
            members: self.members.intersection(&other.members).cloned().collect(),
            children: BTreeMap::new(),
        };
        for (pe, child) in &self.children {
            if let Some(theirs) = other.children.get(pe) {
                let both = child.intersection(theirs);
                if !both.is_empty() {
                    out.children.insert(pe.clone(), both);
                }
            }
        }
        out
    }

    /// Removes `path` and every path below it.
    pub(crate) fn remove_subtree(&mut self, path: &[PathElement]) {
        match path {
            [] => *self = FieldSet::new(),
            [last] => {
                self.members.remove(last);
                self.children.remove(last);
            }
            [first, rest @ ..] => {
                if let Some(child) = self.children.get_mut(first) {
                    child.remove_subtree(rest);
                    if child.is_empty() {
                        self.children.remove(first);
                    }
                }
            }
        }
    }

    /// Only `path` and the paths below it.
    pub(crate) fn subtree(&self, path: &[PathElement]) -> FieldSet {
        match path {
            [] => self.clone(),
            [first, rest @ ..] => {
                let mut out = FieldSet::new();
                if rest.is_empty() && self.members.contains(first) {
                    out.members.insert(first.clone());
                }
                if let Some(child) = self.children.get(first) {
                    let below = child.subtree(rest);
                    if !below.is_empty() {
                        out.children.insert(first.clone(), below);
                    }
                }
                out
            }
        }
    }

    /// All paths, in structured-merge-diff's iteration order: the members
    /// of a node (sorted) before the paths below its children (sorted).
    pub(crate) fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Path, out: &mut Vec<Path>) {
        for pe in &self.members {
            let mut p = prefix.clone();
            p.push(pe.clone());
            out.push(p);
        }
        for (pe, child) in &self.children {
            prefix.push(pe.clone());
            child.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    /// The `fieldsV1` JSON object, keys sorted like the server writes them
    /// (`.` first, then elements in path-element order).
    pub(crate) fn to_fields_v1(&self) -> Value {
        let mut all: BTreeSet<&PathElement> = self.members.iter().collect();
        all.extend(self.children.keys());
        let mut out = Map::new();
        for pe in all {
            let mut node = Map::new();
            if let Some(child) = self.children.get(pe) {
                if self.members.contains(pe) {
                    node.insert(".".to_string(), Value::Object(Map::new()));
                }
                if let Value::Object(inner) = child.to_fields_v1() {
                    node.extend(inner);
                }
            }
            out.insert(pe.to_fields_v1_key(), Value::Object(node));
        }
        Value::Object(out)
    }

    /// Parses a `fieldsV1` JSON object.
    pub(crate) fn from_fields_v1(v: &Value) -> Result<FieldSet, ApplyError> {
        let (set, dot) = Self::parse_node(v)?;
        if dot {
            return Err(ApplyError::InvalidFieldsV1(
                "\".\" at the root of fieldsV1".to_string(),
            ));
        }
        Ok(set)
    }

    fn parse_node(v: &Value) -> Result<(FieldSet, bool), ApplyError> {
        let Value::Object(map) = v else {
            return Err(ApplyError::InvalidFieldsV1(format!(
                "expected a JSON object, got {v}"
            )));
        };
        let mut set = FieldSet::new();
        let mut dot = false;
        for (k, child) in map {
            if k == "." {
                Self::parse_node(child)?;
                dot = true;
                continue;
            }
            let pe = PathElement::from_fields_v1_key(k)?;
            let (sub, sub_dot) = Self::parse_node(child)?;
            if sub_dot || sub.is_empty() {
                set.members.insert(pe.clone());
            }
            if !sub.is_empty() {
                set.children.insert(pe, sub);
            }
        }
        Ok((set, dot))
    }
}
