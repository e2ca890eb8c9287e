//! Field errors shaped like `k8s.io/apimachinery/pkg/util/validation/field`,
//! the 422 message and `details.causes` of `apierrors.NewInvalid`, and the
//! Go value printing (`%q`, `%v`, `%#v`) those messages embed.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

/// The machine-readable type of a field error (`field.ErrorType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum FieldErrorKind {
    /// `FieldValueRequired`, "Required value".
    Required,
    /// `FieldValueDuplicate`, "Duplicate value".
    Duplicate,
    /// `FieldValueInvalid`, "Invalid value".
    Invalid,
    /// `FieldValueNotSupported`, "Unsupported value".
    NotSupported,
    /// `FieldValueForbidden`, "Forbidden".
    Forbidden,
    /// `FieldValueTooLong`, "Too long".
    TooLong,
    /// `FieldValueTooMany`, "Too many".
    TooMany,
    /// `FieldValueTypeInvalid`, printed as "Invalid value".
    TypeInvalid,
}

impl FieldErrorKind {
    /// The `reason` of a `details.causes` entry (the Go `ErrorType` string).
    pub(crate) fn reason(self) -> &'static str {
        match self {
            Self::Required => "FieldValueRequired",
            Self::Duplicate => "FieldValueDuplicate",
            Self::Invalid => "FieldValueInvalid",
            Self::NotSupported => "FieldValueNotSupported",
            Self::Forbidden => "FieldValueForbidden",
            Self::TooLong => "FieldValueTooLong",
            Self::TooMany => "FieldValueTooMany",
            Self::TypeInvalid => "FieldValueTypeInvalid",
        }
    }

    /// The human label that starts the message body (`ErrorType.String()`).
    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::Required => "Required value",
            Self::Duplicate => "Duplicate value",
            Self::Invalid | Self::TypeInvalid => "Invalid value",
            Self::NotSupported => "Unsupported value",
            Self::Forbidden => "Forbidden",
            Self::TooLong => "Too long",
            Self::TooMany => "Too many",
        }
    }

    /// Kinds whose message never shows the bad value.
    fn hides_value(self) -> bool {
        matches!(self, Self::Required | Self::Forbidden | Self::TooLong)
    }
}

/// One field-level error. `Display` prints exactly what Go's
/// `(*field.Error).Error()` prints: `<path>: <body>`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FieldError {
    /// Field path, e.g. `spec.secrets[0].name` (no leading dot).
    pub path: String,
    /// What went wrong.
    pub kind: FieldErrorKind,
    /// The offending value; `None` means "omitted from the message".
    pub value: Option<Value>,
    /// Free-text detail appended after the value.
    pub detail: String,
    /// The value as Go already printed it (a struct's `%#v`), shown instead of `value`.
    pub printed: Option<String>,
}

impl FieldError {
    fn new(path: &str, kind: FieldErrorKind, value: Option<Value>, detail: &str) -> Self {
        Self {
            path: path.to_string(),
            kind,
            value,
            detail: detail.to_string(),
            printed: None,
        }
    }

    /// `field.Invalid` of a Go value printed elsewhere (a CRD's validation rule).
    pub(crate) fn invalid_printed(path: &str, printed: String, detail: &str) -> Self {
        Self {
            printed: Some(printed),
            ..Self::new(path, FieldErrorKind::Invalid, Some(Value::Null), detail)
        }
    }

    /// `field.Required`.
    pub(crate) fn required(path: &str, detail: &str) -> Self {
        Self::new(path, FieldErrorKind::Required, None, detail)
    }

    /// `field.Forbidden`.
    pub(crate) fn forbidden(path: &str, detail: &str) -> Self {
        Self::new(path, FieldErrorKind::Forbidden, None, detail)
    }

    /// `field.Invalid`.
    pub(crate) fn invalid(path: &str, value: Value, detail: &str) -> Self {
        Self::new(path, FieldErrorKind::Invalid, Some(value), detail)
    }

    /// `field.TypeInvalid`.
    pub(crate) fn type_invalid(path: &str, value: Value, detail: &str) -> Self {
        Self::new(path, FieldErrorKind::TypeInvalid, Some(value), detail)
    }

    /// `field.Duplicate`.
    pub(crate) fn duplicate(path: &str, value: Value) -> Self {
        Self::new(path, FieldErrorKind::Duplicate, Some(value), "")
    }

    /// `field.NotSupported`: detail lists the quoted supported values.
    pub(crate) fn not_supported(path: &str, value: Value, supported: &[String]) -> Self {
        let detail = if supported.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = supported.iter().map(|s| go_quote(s)).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        Self::new(path, FieldErrorKind::NotSupported, Some(value), &detail)
    }

    /// `field.TooLong` as of apimachinery 1.32+ (value never shown).
    pub(crate) fn too_long(path: &str, max: i64) -> Self {
        let detail = if max >= 0 {
            format!("may not be more than {max} bytes")
        } else {
            "value is too long".to_string()
        };
        Self::new(path, FieldErrorKind::TooLong, None, &detail)
    }

    /// `field.TooMany`; `actual: None` omits the count from the message.
    pub(crate) fn too_many(path: &str, actual: Option<i64>, max: i64) -> Self {
        let detail = if max >= 0 {
            format!("must have at most {max} items")
        } else {
            "too many items".to_string()
        };
        Self::new(
            path,
            FieldErrorKind::TooMany,
            actual.map(Value::from),
            &detail,
        )
    }

    /// The message without the field (`ErrorBody()`); this is also the
    /// `message` of a `details.causes` entry.
    pub(crate) fn body(&self) -> String {
        let mut s = self.kind.label().to_string();
        if !self.kind.hides_value()
            && let Some(v) = &self.value
        {
            s.push_str(": ");
            match &self.printed {
                Some(printed) => s.push_str(printed),
                None => s.push_str(&go_value(v)),
            }
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }

    /// The `details.causes` entry kube builds for this error.
    pub(crate) fn cause(&self) -> StatusCause {
        StatusCause {
            reason: self.kind.reason().to_string(),
            message: self.body(),
            field: self.path.clone(),
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.body())
    }
}

impl std::error::Error for FieldError {}

/// One `metav1.StatusCause`, serialized as kube does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct StatusCause {
    /// `FieldValueRequired`, `FieldValueInvalid`, ...
    pub reason: String,
    /// The error body (no field prefix).
    pub message: String,
    /// The field path.
    pub field: String,
}

/// `details.causes` for a 422: one entry per error, in order, not deduplicated.
pub(crate) fn causes(errors: &[FieldError]) -> Vec<StatusCause> {
    errors.iter().map(FieldError::cause).collect()
}

/// The `message` of kube's 422 `Invalid` status:
/// `<Kind.group> "<name>" is invalid: <aggregate>` where the aggregate is
/// the single error, or `[e1, e2]` for several (identical messages are
/// reported once, first occurrence wins).
pub(crate) fn invalid_message(kind_with_group: &str, name: &str, errors: &[FieldError]) -> String {
    let head = format!("{kind_with_group} {} is invalid", go_quote(name));
    let mut seen: Vec<String> = Vec::new();
    for e in errors {
        let m = e.to_string();
        if !seen.contains(&m) {
            seen.push(m);
        }
    }
    match seen.len() {
        0 => head,
        1 => format!("{head}: {}", seen[0]),
        _ => format!("{head}: [{}]", seen.join(", ")),
    }
}

/// Go's `strconv.Quote`.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => {
                if (c as u32) <= 0xffff {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `%v` of a float64 (`strconv.FormatFloat(f, 'g', -1, 64)`).
pub(crate) fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let sci = format!("{f:e}");
    let (mantissa, exp) = match sci.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (sci.as_str(), 0),
    };
    // Shortest 'g' formatting switches to exponent form outside [-4, 6).
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        format!("{f}")
    }
}

/// A number as Go prints the decoded JSON value (int64 or float64).
fn go_number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        i.to_string()
    } else if let Some(u) = n.as_u64() {
        u.to_string()
    } else {
        go_float(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// How `ErrorBody()` prints a bad value: strings quoted, numbers and bools
/// plain, `nil` as `"null"`, maps and slices in Go syntax (`%#v`).
pub(crate) fn go_value(v: &Value) -> String {
    match v {
        Value::Null => go_quote("null"),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => go_number(n),
        Value::String(s) => go_quote(s),
        Value::Array(_) | Value::Object(_) => go_sharp_v(v),
    }
}

/// Go's `%#v` of a decoded JSON value.
pub(crate) fn go_sharp_v(v: &Value) -> String {
    match v {
        Value::Null => "interface {}(nil)".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => go_number(n),
        Value::String(s) => go_quote(s),
        Value::Array(a) => {
            let parts: Vec<String> = a.iter().map(go_sharp_v).collect();
            format!("[]interface {{}}{{{}}}", parts.join(", "))
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| format!("{}:{}", go_quote(k), go_sharp_v(&m[k.as_str()])))
                .collect();
            format!("map[string]interface {{}}{{{}}}", parts.join(", "))
        }
    }
}

#[cfg(test)]
#[path = "errors_tests.rs"]
mod tests;
