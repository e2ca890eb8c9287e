//! Custom resource values as CEL sees them: a JSON value converted by its schema node, as
//! kube-apiserver's `UnstructuredToVal` does.
//!
//! * `integer` is `int`, `number` is `double` (an integral JSON number too), `string`,
//!   `boolean`, `null` as themselves; `x-kubernetes-int-or-string` is `int` or `string` by
//!   the value.
//! * An object with `properties` is a map whose keys are the property names escaped as CEL
//!   identifiers ([`escape`]); one with `additionalProperties` is a map of its raw keys.
//! * At the root, `metadata` holds only `name` and `generateName`, the two fields a rule may
//!   read.
//! * Under `x-kubernetes-preserve-unknown-fields` (and anywhere the schema says nothing),
//!   values convert by their JSON kind.

use std::borrow::Cow;
use std::collections::HashMap;

use cel::common::types::{
    CelBool, CelDouble, CelInt, CelList, CelMap, CelMapKey, CelNull, CelString, CelUInt,
};
use cel::common::value::Val;
use serde_json::Value;

use super::super::node::{self, Additional};

/// CEL's reserved words: a property with one of these names is read as `__name__`.
const RESERVED: [&str; 23] = [
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
    "__proto__",
    "prototype",
];

/// A property name as a CEL identifier, kube's escaping: `__` → `__underscores__`, `.` →
/// `__dot__`, `-` → `__dash__`, `/` → `__slash__`, a reserved word `w` → `__w__`. `None`
/// when the name has a character no escape covers (the property is then not accessible).
pub(crate) fn escape(name: &str) -> Option<Cow<'_, str>> {
    if RESERVED.contains(&name) {
        return Some(Cow::Owned(format!("__{name}__")));
    }
    let plain = name.chars().enumerate().all(|(i, c)| {
        c.is_ascii_alphabetic()
            || (c == '_' && !name.contains("__"))
            || (i > 0 && c.is_ascii_digit())
    });
    if plain {
        return Some(Cow::Borrowed(name));
    }
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars().peekable();
    let mut first = true;
    while let Some(c) = chars.next() {
        match c {
            '_' if chars.peek() == Some(&'_') => {
                chars.next();
                out.push_str("__underscores__");
            }
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c if c.is_ascii_alphabetic() || c == '_' || (!first && c.is_ascii_digit()) => {
                out.push(c)
            }
            _ => return None,
        }
        first = false;
    }
    Some(Cow::Owned(out))
}

/// The declared property of `schema` whose CEL name ([`escape`]) is `cel_name`.
pub(crate) fn property_named<'s>(schema: &'s Value, cel_name: &str) -> Option<&'s Value> {
    node::properties(schema)?
        .iter()
        .find(|(name, _)| escape(name).as_deref() == Some(cel_name))
        .map(|(_, property)| property)
}

/// `value` converted by `schema`, an object with only the `members` named (CEL names;
/// `None`: all of them) at its first level. Strings and keys borrow from `value`.
pub(crate) fn to_val_members<'v>(
    schema: &'v Value,
    value: &'v Value,
    root: bool,
    members: Option<&[String]>,
) -> Box<dyn Val + 'v> {
    match (members, value) {
        (Some(members), Value::Object(object)) => {
            object_to_val(Some(schema), object, root, |name| {
                members.iter().any(|m| m == name)
            })
        }
        _ => to_val(Some(schema), value, root),
    }
}

/// `value` converted by `schema` (`None`: no schema, convert by JSON kind). `root` limits
/// `metadata` as kube does for the object's root.
pub(crate) fn to_val<'v>(
    schema: Option<&'v Value>,
    value: &'v Value,
    root: bool,
) -> Box<dyn Val + 'v> {
    match value {
        Value::Null => Box::new(CelNull),
        Value::Bool(b) => Box::new(CelBool::from(*b)),
        Value::Number(n) => number(schema, n),
        Value::String(s) => Box::new(CelString::from(s.as_str())),
        Value::Array(items) => {
            let item_schema = schema.and_then(node::items);
            let items: Vec<Box<dyn Val + 'v>> = items
                .iter()
                .map(|v| to_val(item_schema, v, false))
                .collect();
            Box::new(CelList::from(items))
        }
        Value::Object(members) => object_to_val(schema, members, root, |_| true),
    }
}

/// An object's members whose CEL name `keep` accepts, converted by their schemas.
fn object_to_val<'v>(
    schema: Option<&'v Value>,
    members: &'v serde_json::Map<String, Value>,
    root: bool,
    keep: impl Fn(&str) -> bool,
) -> Box<dyn Val + 'v> {
    let mut map: HashMap<CelMapKey<'v>, Box<dyn Val + 'v>> = HashMap::with_capacity(members.len());
    let properties = schema.and_then(node::properties);
    let values = schema.and_then(|s| match node::additional(s) {
        Additional::Schema(values) => Some(values),
        _ => None,
    });
    for (key, member) in members {
        if root && key == "metadata" {
            if keep(key) {
                map.insert(CelMapKey::from(key.as_str()), metadata(member));
            }
            continue;
        }
        let (name, member_schema): (Option<Cow<'v, str>>, Option<&'v Value>) =
            match properties.and_then(|p| p.get(key)) {
                Some(property) => (escape(key), Some(property)),
                None => (Some(Cow::Borrowed(key.as_str())), values),
            };
        let Some(name) = name.filter(|n| keep(n)) else {
            continue;
        };
        let key = match name {
            Cow::Borrowed(k) => CelMapKey::from(k),
            Cow::Owned(k) => CelMapKey::from(k),
        };
        map.insert(key, to_val(member_schema, member, false));
    }
    Box::new(CelMap::from(map))
}

fn number<'v>(schema: Option<&Value>, n: &serde_json::Number) -> Box<dyn Val + 'v> {
    let declared = schema.map(node::type_of).unwrap_or_default();
    if declared == "number" {
        return Box::new(CelDouble::from(n.as_f64().unwrap_or_default()));
    }
    match (n.as_i64(), n.as_u64()) {
        (Some(i), _) => Box::new(CelInt::from(i)),
        (None, Some(u)) => Box::new(CelUInt::from(u)),
        _ => Box::new(CelDouble::from(n.as_f64().unwrap_or_default())),
    }
}

/// The root's `metadata` as a rule sees it: `name` and `generateName` only.
fn metadata<'v>(meta: &'v Value) -> Box<dyn Val + 'v> {
    let mut map: HashMap<CelMapKey<'v>, Box<dyn Val + 'v>> = HashMap::new();
    for key in ["name", "generateName"] {
        if let Some(Value::String(s)) = meta.get(key) {
            map.insert(CelMapKey::from(key), Box::new(CelString::from(s.as_str())));
        }
    }
    Box::new(CelMap::from(map))
}
