//! kube-apiserver's validation of what every object's metadata holds, and of ConfigMap and
//! Secret data, with its wording.
//!
//! A field of the wrong JSON type is what kube-apiserver fails to decode: a 400 worded as
//! Go's JSON decoder words it (a Secret whose `metadata.labels` is a list would otherwise be
//! stored and then break every client's cache). A value of the right type that breaks a
//! rule is a 422 naming the field: label keys and annotation keys are qualified names, label
//! values at most 63 characters of the label alphabet, annotations at most 256 KiB in all,
//! ConfigMap and Secret data keys config keys, Secret `data` and ConfigMap `binaryData`
//! values base64.

use base64::Engine as _;
use serde_json::{Map, Value};

use crate::objects::{SUBDOMAIN_RULE, is_dns_subdomain};
use crate::registry::ResourceType;
use crate::status::ApiError;

/// The most all of an object's annotations may hold, keys included.
const MAX_ANNOTATIONS_BYTES: usize = 256 << 10;

const QUALIFIED_NAME_RULE: &str = "must consist of alphanumeric characters, '-', '_' or '.', \
    and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or \
    '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

const LABEL_VALUE_RULE: &str = "a valid label must be an empty string or consist of \
    alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric \
    character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is \
    '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

const CONFIG_KEY_RULE: &str = "a valid config key must consist of alphanumeric characters, \
    '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for \
    validation is '[-._a-zA-Z0-9]+')";

/// Checks `object`'s metadata (every kind) and, for ConfigMaps and Secrets, their data.
pub(crate) fn check(rt: &ResourceType, name: &str, object: &Value) -> Result<(), ApiError> {
    let metadata = object.get("metadata").and_then(Value::as_object);
    let labels = string_map(metadata, "labels", "ObjectMeta.metadata.labels")?;
    let annotations = string_map(metadata, "annotations", "ObjectMeta.metadata.annotations")?;
    let invalid = |field: &str, value: &str, why: &str| {
        ApiError::invalid_field(
            rt,
            name,
            field,
            "FieldValueInvalid",
            &format!("Invalid value: {}: {why}", Value::from(value)),
        )
    };
    for (key, value) in labels.iter().flatten() {
        if let Some(why) = qualified_name_error(key) {
            return Err(invalid("metadata.labels", key, &why));
        }
        if let Some(why) = label_value_error(value) {
            return Err(invalid("metadata.labels", value, &why));
        }
    }
    let mut annotations_bytes = 0;
    for (key, value) in annotations.iter().flatten() {
        if let Some(why) = qualified_name_error(&key.to_lowercase()) {
            return Err(invalid("metadata.annotations", key, &why));
        }
        annotations_bytes += key.len() + value.len();
    }
    if annotations_bytes > MAX_ANNOTATIONS_BYTES {
        return Err(ApiError::invalid_field(
            rt,
            name,
            "metadata.annotations",
            "FieldValueTooLong",
            &format!("Too long: must have at most {MAX_ANNOTATIONS_BYTES} bytes"),
        ));
    }
    if !rt.group.is_empty() {
        return Ok(());
    }
    let data_fields: &[(&str, bool)] = match rt.kind.as_str() {
        "ConfigMap" => &[("data", false), ("binaryData", true)],
        "Secret" => &[("data", true), ("stringData", false)],
        _ => return Ok(()),
    };
    for &(field, base64) in data_fields {
        let go_field = format!("{}.{field}", rt.kind);
        let Some(entries) = string_map(object.as_object(), field, &go_field)? else {
            continue;
        };
        for (key, value) in entries {
            if let Some(why) = config_key_error(key) {
                return Err(invalid(&format!("{field}[{key}]"), key, &why));
            }
            if base64 && let Err(e) = base64::engine::general_purpose::STANDARD.decode(value) {
                return Err(ApiError::bad_request(format!(
                    "illegal base64 data at input byte {}",
                    bad_byte(&e)
                )));
            }
        }
    }
    Ok(())
}

/// `parent[field]` as a map of strings (`None` when absent or null); a 400 worded as Go's
/// decoder words it when it is not one.
fn string_map<'a>(
    parent: Option<&'a Map<String, Value>>,
    field: &str,
    go_field: &str,
) -> Result<Option<Vec<(&'a String, &'a str)>>, ApiError> {
    let Some(value) = parent.and_then(|p| p.get(field)) else {
        return Ok(None);
    };
    let unmarshal = |found: &Value, of: &str| {
        ApiError::bad_request(format!(
            "json: cannot unmarshal {} into Go struct field {go_field} of type {of}",
            json_type(found)
        ))
    };
    let entries = match value {
        Value::Null => return Ok(None),
        Value::Object(entries) => entries,
        other => return Err(unmarshal(other, "map[string]string")),
    };
    entries
        .iter()
        .map(|(key, value)| match value {
            Value::String(text) => Ok((key, text.as_str())),
            other => Err(unmarshal(other, "string")),
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// How Go's decoder names a JSON value's type.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The byte Go's base64 decoder stops at.
fn bad_byte(error: &base64::DecodeError) -> usize {
    match error {
        base64::DecodeError::InvalidByte(at, _) | base64::DecodeError::InvalidLastSymbol(at, _) => {
            *at
        }
        base64::DecodeError::InvalidLength(at) => *at,
        base64::DecodeError::InvalidPadding => 0,
    }
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
fn is_name_part(text: &str) -> bool {
    let bytes = text.as_bytes();
    let alnum = |b: &u8| b.is_ascii_alphanumeric();
    bytes.first().is_some_and(alnum)
        && bytes.last().is_some_and(alnum)
        && bytes
            .iter()
            .all(|b| alnum(b) || matches!(b, b'-' | b'_' | b'.'))
}

/// Why `key` is not a qualified name (`[prefix/]name`), as kube's `IsQualifiedName` says.
fn qualified_name_error(key: &str) -> Option<String> {
    let parts: Vec<&str> = key.split('/').collect();
    let (prefix, name) = match parts[..] {
        [name] => (None, name),
        [prefix, name] => (Some(prefix), name),
        _ => {
            return Some(format!(
                "a qualified name {QUALIFIED_NAME_RULE} with an optional DNS subdomain prefix \
                 and '/' (e.g. 'example.com/MyName')"
            ));
        }
    };
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            return Some("prefix part must be non-empty".into());
        }
        if prefix.len() > 253 {
            return Some("prefix part must be no more than 253 characters".into());
        }
        if !is_dns_subdomain(prefix) {
            return Some(format!("prefix part {SUBDOMAIN_RULE}"));
        }
    }
    if name.is_empty() {
        return Some("name part must be non-empty".into());
    }
    if name.len() > 63 {
        return Some("name part must be no more than 63 characters".into());
    }
    (!is_name_part(name)).then(|| format!("name part {QUALIFIED_NAME_RULE}"))
}

/// Why `value` is not a label value.
fn label_value_error(value: &str) -> Option<String> {
    if value.len() > 63 {
        return Some("must be no more than 63 characters".into());
    }
    (!value.is_empty() && !is_name_part(value)).then(|| LABEL_VALUE_RULE.to_owned())
}

/// Why `key` is not a ConfigMap or Secret data key.
fn config_key_error(key: &str) -> Option<String> {
    if key.len() > 253 {
        return Some("must be no more than 253 characters".into());
    }
    let alphabet = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.');
    if key.is_empty() || !key.bytes().all(alphabet) {
        return Some(CONFIG_KEY_RULE.to_owned());
    }
    match key {
        "." => Some("must not be '.'".into()),
        ".." => Some("must not be '..'".into()),
        _ if key.starts_with("..") => Some("must not start with '..'".into()),
        _ => None,
    }
}

#[cfg(test)]
#[path = "builtin_validation_tests.rs"]
mod tests;
