//! Walking objects with a schema: field sets, merging, comparing, pruning.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::error::ApplyError;
use super::fieldset::{FieldSet, Path, PathElement, path_to_string};
use super::schema::{ListType, MergeSchema};

/// How a node of an object is treated at a path.
enum Node<'a> {
    /// A granular object.
    Map(&'a Map<String, Value>),
    /// A set or list-map, its items identified, in list order.
    List(Vec<(PathElement, &'a Value)>),
    /// A scalar, null, atomic list or atomic map.
    Leaf,
}

/// Strict reading (applied configurations: malformed lists are errors) or
/// lenient (stored objects: a list that cannot be keyed is atomic).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Strict,
    Lenient,
}

fn invalid(path: &[PathElement], msg: String) -> ApplyError {
    ApplyError::InvalidObject(format!("{}: {msg}", path_to_string(path)))
}

/// Identifies the items of a granular list (`Ok(None)`: read as a leaf).
fn list_items<'a>(
    items: &'a [Value],
    path: &[PathElement],
    lt: &ListType,
    schema: &dyn MergeSchema,
    mode: Mode,
) -> Result<Option<Vec<(PathElement, &'a Value)>>, ApplyError> {
    if *lt == ListType::Atomic {
        // A leaf, even when empty.
        return Ok(None);
    }
    let mut out: Vec<(PathElement, &Value)> = Vec::with_capacity(items.len());
    let mut seen = std::collections::BTreeSet::new();
    for (i, item) in items.iter().enumerate() {
        let pe = match lt {
            ListType::Atomic => return Ok(None),
            ListType::Set => {
                if item.is_object() || item.is_array() {
                    if mode == Mode::Lenient {
                        return Ok(None);
                    }
                    let msg = format!(
                        "element {i}: associative list without keys has an element that's a map or list"
                    );
                    return Err(invalid(path, msg));
                }
                PathElement::Value(item.clone())
            }
            ListType::Map(keys) => {
                let Value::Object(obj) = item else {
                    if mode == Mode::Lenient {
                        return Ok(None);
                    }
                    let msg = format!(
                        "element {i}: associative list with keys has an element that is not a map"
                    );
                    return Err(invalid(path, msg));
                };
                let mut fields = Vec::with_capacity(keys.len());
                for key in keys {
                    match obj
                        .get(key)
                        .cloned()
                        .or_else(|| schema.list_key_default(path, key))
                    {
                        Some(v) => fields.push((key.clone(), v)),
                        None if mode == Mode::Lenient => return Ok(None),
                        None => {
                            let msg = format!(
                                "element {i}: associative list with keys has an element that omits key field {key:?} (and doesn't have default value)"
                            );
                            return Err(invalid(path, msg));
                        }
                    }
                }
                PathElement::key(fields)
            }
        };
        if !seen.insert(pe.clone()) {
            if mode == Mode::Lenient {
                return Ok(None);
            }
            return Err(invalid(path, format!("duplicate entries for key {pe}")));
        }
        out.push((pe, item));
    }
    Ok(Some(out))
}

fn classify<'a>(
    v: &'a Value,
    path: &[PathElement],
    schema: &dyn MergeSchema,
    mode: Mode,
) -> Result<Node<'a>, ApplyError> {
    Ok(match v {
        Value::Object(m) if path.is_empty() || !schema.map_is_atomic(path) => Node::Map(m),
        Value::Array(items) => {
            match list_items(items, path, &schema.list_type(path), schema, mode)? {
                Some(items) => Node::List(items),
                None => Node::Leaf,
            }
        }
        _ => Node::Leaf,
    })
}

/// The field set of `object` as server-side apply sees it: every scalar,
/// null and atomic list/map is a leaf; list-map and set items are members
/// themselves (`.`), objects are not; an empty granular map or list claims no
/// field (structured-merge-diff's `ToFieldSet` inserts only leaves and items),
/// unless it is the value of a map key rather than of a declared field.
/// Nothing is stripped (see [`super::managed`] for the untracked fields).
pub(crate) fn field_set(object: &Value, schema: &dyn MergeSchema) -> Result<FieldSet, ApplyError> {
    let mut set = FieldSet::new();
    collect(object, &mut Vec::new(), schema, Mode::Strict, &mut set)?;
    Ok(set)
}

pub(crate) fn collect(
    v: &Value,
    path: &mut Path,
    schema: &dyn MergeSchema,
    mode: Mode,
    out: &mut FieldSet,
) -> Result<(), ApplyError> {
    match classify(v, path, schema, mode)? {
        Node::Map(m) => {
            for (k, c) in m {
                path.push(PathElement::Field(k.clone()));
                collect(c, path, schema, mode, out)?;
                if schema.is_map_key(path) {
                    out.insert(path);
                }
                path.pop();
            }
        }
        Node::List(items) => {
            for (pe, item) in items {
                path.push(pe);
                out.insert(path);
                if item.is_object() {
                    collect(item, path, schema, mode, out)?;
                }
                path.pop();
            }
        }
        Node::Leaf => out.insert(path),
    }
    Ok(())
}

/// Merges `applied` into `live`: objects field by field, list-maps by key
/// and sets by value (structured-merge-diff's order: live-only items keep
/// their place, shared and new items follow the applied order), everything
/// else replaced by the applied value.
pub(crate) fn merge(
    live: &Value,
    applied: &Value,
    path: &mut Path,
    schema: &dyn MergeSchema,
) -> Result<Value, ApplyError> {
    let l = classify(live, path, schema, Mode::Lenient)?;
    let r = classify(applied, path, schema, Mode::Strict)?;
    match (l, r) {
        (Node::Map(lm), Node::Map(rm)) => {
            let mut out = lm.clone();
            for (k, av) in rm {
                let merged = match lm.get(k) {
                    Some(lv) => {
                        path.push(PathElement::Field(k.clone()));
                        let m = merge(lv, av, path, schema);
                        path.pop();
                        m?
                    }
                    None => av.clone(),
                };
                out.insert(k.clone(), merged);
            }
            Ok(Value::Object(out))
        }
        (Node::List(li), Node::List(ri)) => {
            let order = merged_order(&li, &ri);
            let lmap: BTreeMap<&PathElement, &Value> = li.iter().map(|(p, v)| (p, *v)).collect();
            let rmap: BTreeMap<&PathElement, &Value> = ri.iter().map(|(p, v)| (p, *v)).collect();
            let mut out = Vec::with_capacity(order.len());
            for pe in order {
                let item = match (lmap.get(&pe), rmap.get(&pe)) {
                    (Some(lv), Some(rv)) if lv.is_object() && rv.is_object() => {
                        path.push(pe);
                        let m = merge(lv, rv, path, schema);
                        path.pop();
                        m?
                    }
                    (_, Some(rv)) => (*rv).clone(),
                    (Some(lv), None) => (*lv).clone(),
                    (None, None) => continue,
                };
                out.push(item);
            }
            Ok(Value::Array(out))
        }
        _ => Ok(applied.clone()),
    }
}

/// The item order of a merged list: live-only items stay where they are,
/// shared items take the applied order, applied-only items come where the
/// applied list has them (structured-merge-diff's interleaving).
fn merged_order(lhs: &[(PathElement, &Value)], rhs: &[(PathElement, &Value)]) -> Vec<PathElement> {
    let in_rhs = |pe: &PathElement| rhs.iter().any(|(p, _)| p == pe);
    let in_lhs = |pe: &PathElement| lhs.iter().any(|(p, _)| p == pe);
    let shared: Vec<&PathElement> = rhs.iter().map(|(p, _)| p).filter(|p| in_lhs(p)).collect();
    let mut next_shared = 0;
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(lhs.len() + rhs.len());
    while i < lhs.len() || j < rhs.len() {
        if i < lhs.len() && j < rhs.len() {
            if lhs[i].0 == rhs[j].0 {
                out.push(rhs[j].0.clone());
                i += 1;
                j += 1;
                next_shared += 1;
                continue;
            }
            if in_rhs(&lhs[i].0) && shared.get(next_shared).is_some_and(|s| **s != lhs[i].0) {
                i += 1;
                continue;
            }
        }
        if i < lhs.len() && !in_rhs(&lhs[i].0) {
            out.push(lhs[i].0.clone());
            i += 1;
            continue;
        }
        if j < rhs.len() {
            let pe = &rhs[j].0;
            if shared.get(next_shared).is_some_and(|s| *s == pe) {
                next_shared += 1;
            }
            out.push(pe.clone());
            j += 1;
            continue;
        }
        // Only shared live items already emitted remain: skip them.
        i += 1;
    }
    out
}

/// What changed between two objects, as structured-merge-diff's Compare:
/// leaves added/modified/removed, plus the path of every object or granular
/// list (or item) that appears or disappears.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Comparison {
    pub added: FieldSet,
    pub modified: FieldSet,
    pub removed: FieldSet,
}

pub(crate) fn compare(
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    path: &mut Path,
    schema: &dyn MergeSchema,
    c: &mut Comparison,
) -> Result<(), ApplyError> {
    let l = lhs
        .map(|v| classify(v, path, schema, Mode::Lenient))
        .transpose()?;
    let r = rhs
        .map(|v| classify(v, path, schema, Mode::Lenient))
        .transpose()?;
    let empty = |n: &Option<Node>| match n {
        None => true,
        Some(Node::Map(m)) => m.is_empty(),
        Some(Node::List(items)) => items.is_empty(),
        Some(Node::Leaf) => false,
    };
    let granular = |n: &Option<Node>| matches!(n, Some(Node::Map(_)) | Some(Node::List(_)));
    let both_empty = empty(&l) && empty(&r) && (granular(&l) || granular(&r));
    match (&l, &r) {
        _ if both_empty => leaf_compare(lhs, rhs, path, c),
        (None | Some(Node::Map(_)), None | Some(Node::Map(_))) => {
            mark_presence(lhs, rhs, path, c);
            let (lm, rm) = (as_map(&l), as_map(&r));
            let mut keys: Vec<&String> =
                lm.iter().chain(rm.iter()).flat_map(|m| m.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                path.push(PathElement::Field(k.clone()));
                let (lv, rv) = (lm.and_then(|m| m.get(k)), rm.and_then(|m| m.get(k)));
                let res = compare(lv, rv, path, schema, c);
                path.pop();
                res?;
            }
        }
        (None | Some(Node::List(_)), None | Some(Node::List(_))) => {
            mark_presence(lhs, rhs, path, c);
            let li: BTreeMap<PathElement, &Value> = as_items(&l);
            let ri: BTreeMap<PathElement, &Value> = as_items(&r);
            let mut pes: Vec<&PathElement> = li.keys().chain(ri.keys()).collect();
            pes.sort();
            pes.dedup();
            for pe in pes {
                path.push(pe.clone());
                let res = compare(li.get(pe).copied(), ri.get(pe).copied(), path, schema, c);
                path.pop();
                res?;
            }
        }
        (Some(Node::Leaf), Some(Node::Leaf))
        | (None, Some(Node::Leaf))
        | (Some(Node::Leaf), None) => leaf_compare(lhs, rhs, path, c),
        _ => {
            // The node changed shape (e.g. a scalar became an object).
            c.modified.insert(path);
            if let Some(v) = rhs {
                collect(v, &mut path.clone(), schema, Mode::Lenient, &mut c.added)?;
            }
            if let Some(v) = lhs {
                collect(v, &mut path.clone(), schema, Mode::Lenient, &mut c.removed)?;
            }
        }
    }
    Ok(())
}

fn as_map<'a>(n: &Option<Node<'a>>) -> Option<&'a Map<String, Value>> {
    match n {
        Some(Node::Map(m)) => Some(*m),
        _ => None,
    }
}

fn as_items<'a>(n: &Option<Node<'a>>) -> BTreeMap<PathElement, &'a Value> {
    match n {
        Some(Node::List(items)) => items.iter().map(|(p, v)| (p.clone(), *v)).collect(),
        _ => BTreeMap::new(),
    }
}

fn mark_presence(
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    path: &[PathElement],
    c: &mut Comparison,
) {
    match (lhs, rhs) {
        (None, Some(_)) => c.added.insert(path),
        (Some(_), None) => c.removed.insert(path),
        _ => {}
    }
}

fn leaf_compare(
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    path: &[PathElement],
    c: &mut Comparison,
) {
    match (lhs, rhs) {
        (None, Some(_)) => c.added.insert(path),
        (Some(_), None) => c.removed.insert(path),
        (Some(l), Some(r)) if l != r => c.modified.insert(path),
        _ => {}
    }
}

/// Removes from `obj` every path of `remove` that nothing in `keep` sits
/// at or below, never removing the key fields of a surviving list-map item;
/// objects and lists emptied by a removal go too unless `keep` owns them.
pub(crate) fn prune(obj: &mut Value, remove: &FieldSet, keep: &FieldSet, schema: &dyn MergeSchema) {
    for p in remove.paths() {
        if keep.contains_prefix(&p) || is_key_field(&p) {
            continue;
        }
        if !remove_at(obj, &p, schema) {
            continue;
        }
        for depth in (1..p.len()).rev() {
            let ancestor = &p[..depth];
            let emptied = get_at(obj, ancestor, schema).is_some_and(|n| match n {
                Value::Object(m) => m.is_empty(),
                Value::Array(a) => a.is_empty(),
                _ => false,
            });
            let is_field = matches!(ancestor.last(), Some(PathElement::Field(_)));
            if !emptied || !is_field || keep.contains_prefix(ancestor) {
                break;
            }
            remove_at(obj, ancestor, schema);
        }
    }
}

fn is_key_field(p: &[PathElement]) -> bool {
    match p {
        [.., PathElement::Key(keys), PathElement::Field(f)] => keys.iter().any(|(k, _)| k == f),
        _ => false,
    }
}

/// Index of the item of the list at `path` that `pe` names.
fn item_index(
    items: &[Value],
    path: &[PathElement],
    pe: &PathElement,
    schema: &dyn MergeSchema,
) -> Option<usize> {
    if let PathElement::Index(i) = pe {
        return (*i < items.len()).then_some(*i);
    }
    let keyed = list_items(items, path, &schema.list_type(path), schema, Mode::Lenient).ok()??;
    keyed.iter().position(|(p, _)| p == pe)
}

fn get_at<'a>(obj: &'a Value, path: &[PathElement], schema: &dyn MergeSchema) -> Option<&'a Value> {
    let mut cur = obj;
    for (depth, pe) in path.iter().enumerate() {
        cur = match (cur, pe) {
            (Value::Object(m), PathElement::Field(f)) => m.get(f)?,
            (Value::Array(items), _) => &items[item_index(items, &path[..depth], pe, schema)?],
            _ => return None,
        };
    }
    Some(cur)
}

fn remove_at(obj: &mut Value, path: &[PathElement], schema: &dyn MergeSchema) -> bool {
    let Some((last, parent_path)) = path.split_last() else {
        return false;
    };
    let mut cur = obj;
    for (depth, pe) in parent_path.iter().enumerate() {
        cur = match (cur, pe) {
            (Value::Object(m), PathElement::Field(f)) => match m.get_mut(f) {
                Some(v) => v,
                None => return false,
            },
            (Value::Array(items), _) => {
                match item_index(items, &parent_path[..depth], pe, schema) {
                    Some(i) => &mut items[i],
                    None => return false,
                }
            }
            _ => return false,
        };
    }
    match (cur, last) {
        (Value::Object(m), PathElement::Field(f)) => m.remove(f).is_some(),
        (Value::Array(items), pe) => match item_index(items, parent_path, pe, schema) {
            Some(i) => {
                items.remove(i);
                true
            }
            None => false,
        },
        _ => false,
    }
}
