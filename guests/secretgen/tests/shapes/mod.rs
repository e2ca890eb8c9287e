//! The shape of a generated value: what the spec's fixtures record of a value and nothing
//! that differs on every run (lengths, character sets, PEM labels and line widths, key
//! types and sizes, certificate fields, YAML layout). [`shape`] reads a value as the kind
//! its expected shape names, so a value of another kind shows up as a difference.

mod certificate;
mod pem;
mod rails;
mod ssh;

use base64::Engine as _;
use serde_json::{Value, json};

pub use certificate::{IssueWindow, set_facts};

/// The shape of `value`, read as the kind `expected["kind"]` names (nested kinds are read
/// as `expected` nests them). `window` is when the value was generated.
pub fn shape(expected: &Value, value: &[u8], window: &IssueWindow) -> Value {
    match expected["kind"].as_str().unwrap_or_default() {
        "text" => text(value),
        "static" => json!({"kind": "static", "value": String::from_utf8_lossy(value)}),
        "bytes" => json!({"kind": "bytes", "length": value.len()}),
        "base64" => base64(&expected["decoded"], value, window),
        "jsonArray" => json_array(&expected["items"], value, window),
        "pem" => pem::shape(value, window),
        "opensshPrivate" => ssh::private(value),
        "opensshPublic" => ssh::public(value),
        "railsSecrets" => rails::shape(value, window),
        other => json!({"kind": format!("unknown kind {other:?} in the fixture")}),
    }
}

/// Random text: its length, the narrowest character set holding every character, and a
/// trailing newline.
pub fn text(value: &[u8]) -> Value {
    json!({
        "kind": "text",
        "length": value.len(),
        "charset": charset(value),
        "trailingNewline": value.ends_with(b"\n"),
    })
}

/// The narrowest of the generators' character sets (then base64's and printable ASCII)
/// that holds every byte of `value`.
fn charset(value: &[u8]) -> &'static str {
    let all = |f: fn(&u8) -> bool| value.iter().all(f);
    if all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b)) {
        "hex"
    } else if all(|b| b.is_ascii_digit() || b.is_ascii_lowercase()) {
        "lowerAlphanumeric"
    } else if all(u8::is_ascii_alphanumeric) {
        "alphanumeric"
    } else if all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(b)) {
        "base64"
    } else if all(|b| b.is_ascii_graphic() || *b == b' ') {
        "printable"
    } else {
        "binary"
    }
}

/// Standard base64: whether it is wrapped or ends with a newline, and the shape of what it
/// decodes to (text or bytes, as `decoded` expects).
fn base64(decoded: &Value, value: &[u8], window: &IssueWindow) -> Value {
    let trailing_newline = value.ends_with(b"\n");
    let body: Vec<u8> = value.iter().copied().filter(|b| *b != b'\n').collect();
    let wrapped = value[..value.len() - usize::from(trailing_newline)].contains(&b'\n');
    match base64::engine::general_purpose::STANDARD.decode(&body) {
        Ok(bytes) => json!({
            "kind": "base64",
            "wrapped": wrapped,
            "trailingNewline": trailing_newline,
            "decoded": shape(decoded, &bytes, window),
        }),
        Err(e) => json!({"kind": "not base64", "error": e.to_string(), "as text": text(value)}),
    }
}

/// A JSON array of strings, each read as `items[0]` expects.
fn json_array(items: &Value, value: &[u8], window: &IssueWindow) -> Value {
    match serde_json::from_slice::<Vec<String>>(value) {
        Ok(strings) => json!({
            "kind": "jsonArray",
            "items": strings
                .iter()
                .map(|s| shape(&items[0], s.as_bytes(), window))
                .collect::<Vec<_>>(),
        }),
        Err(e) => json!({"kind": "not a JSON array of strings", "error": e.to_string()}),
    }
}

/// The bit length of the big-endian unsigned integer `be` (an RSA modulus).
pub fn bits(be: &[u8]) -> usize {
    let significant: &[u8] = match be.iter().position(|b| *b != 0) {
        Some(first) => &be[first..],
        None => &[],
    };
    significant.first().map_or(0, |top| {
        significant.len() * 8 - usize::try_from(top.leading_zeros()).unwrap_or(0)
    })
}

/// The differences between `expected` and `actual`, one line per JSON pointer.
pub fn differences(expected: &Value, actual: &Value) -> Vec<String> {
    let mut found = Vec::new();
    diff("", expected, actual, &mut found);
    found
}

fn diff(at: &str, expected: &Value, actual: &Value, found: &mut Vec<String>) {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for key in e.keys().chain(a.keys().filter(|k| !e.contains_key(*k))) {
                let null = Value::Null;
                diff(
                    &format!("{at}/{key}"),
                    e.get(key).unwrap_or(&null),
                    a.get(key).unwrap_or(&null),
                    found,
                );
            }
        }
        (Value::Array(e), Value::Array(a)) if e.len() == a.len() => {
            for (i, (e, a)) in e.iter().zip(a).enumerate() {
                diff(&format!("{at}/{i}"), e, a, found);
            }
        }
        _ if expected == actual => {}
        _ => found.push(format!("{at}: expected {expected}, found {actual}")),
    }
}
