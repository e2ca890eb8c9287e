//! Request bodies in the Kubernetes protobuf encoding (`application/vnd.kubernetes.protobuf`),
//! read into their JSON form. client-go's typed clients — kubectl's `create namespace`,
//! `create configmap|secret|serviceaccount|role|rolebinding|service`, `create token`,
//! `auth can-i` — send protobuf and do not fall back to JSON, so a server that refuses it
//! fails them. The envelope is `k8s\0` then a `runtime.Unknown` (1: typeMeta {1 apiVersion,
//! 2 kind}, 2: raw, the object's own message); the object is read by the field tables of
//! [`messages`], for the kinds those commands write. Answers stay JSON, which the same
//! clients accept.
//!
//! Go's encoder writes every non-pointer field, empty or not; what JSON would leave out
//! (an empty string, a zero number, a zero time) is left out here too, so the object reads
//! as the JSON a client would have sent.

mod messages;
#[cfg(test)]
mod tests;
mod wire;

use axum::http::HeaderValue;
use axum::http::header::CONTENT_TYPE;
use base64::Engine as _;
use serde_json::{Map, Value};

use crate::status::ApiError;

use messages::{Field, Kind};
use wire::{Scalar, fields};

/// The protobuf media type.
const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

const MAGIC: &[u8] = b"k8s\0";

/// Why a protobuf body cannot be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum DecodeError {
    #[error("the body is not a Kubernetes protobuf envelope (it must start with \"k8s\\0\")")]
    NoEnvelope,
    #[error("the protobuf envelope names no kind")]
    NoKind,
    #[error("{api_version} {kind} is not read from protobuf here; send it as application/json")]
    Unsupported { api_version: String, kind: String },
    #[error("malformed protobuf: {0}")]
    Malformed(&'static str),
}

/// For a protobuf body, the request's headers with a JSON Content-Type and the body read
/// into JSON; `None` for any other body. 415 for a kind not read from protobuf here (the
/// message says to send JSON), 400 for a body that is not a Kubernetes protobuf object.
pub(crate) fn as_json(
    headers: &axum::http::HeaderMap,
    body: &[u8],
) -> Result<Option<(axum::http::HeaderMap, Vec<u8>)>, ApiError> {
    let protobuf = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|t| t.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case(MEDIA_TYPE));
    if !protobuf || body.is_empty() {
        return Ok(None);
    }
    let object = decode(body).map_err(|error| match error {
        DecodeError::Unsupported { .. } => ApiError::unsupported_media_type_for(error.to_string()),
        other => ApiError::bad_request(format!("the request body does not decode: {other}")),
    })?;
    let mut json_headers = headers.clone();
    json_headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Ok(Some((json_headers, object.to_string().into_bytes())))
}

/// The object a protobuf `body` holds, as JSON with its apiVersion and kind.
pub(crate) fn decode(body: &[u8]) -> Result<Value, DecodeError> {
    let unknown = body.strip_prefix(MAGIC).ok_or(DecodeError::NoEnvelope)?;
    let mut type_meta = &[][..];
    let mut raw = &[][..];
    for field in fields(unknown) {
        match field? {
            (1, Scalar::Bytes(b)) => type_meta = b,
            (2, Scalar::Bytes(b)) => raw = b,
            _ => {}
        }
    }
    let (mut api_version, mut kind) = (String::new(), String::new());
    for field in fields(type_meta) {
        match field? {
            (1, Scalar::Bytes(b)) => api_version = text(b)?,
            (2, Scalar::Bytes(b)) => kind = text(b)?,
            _ => {}
        }
    }
    if kind.is_empty() {
        return Err(DecodeError::NoKind);
    }
    let Some(message) = messages::of(&api_version, &kind) else {
        return Err(DecodeError::Unsupported { api_version, kind });
    };
    let mut object = read(raw, message)?;
    object.insert("apiVersion".into(), Value::String(api_version));
    object.insert("kind".into(), Value::String(kind));
    Ok(Value::Object(object))
}

/// `bytes` as a message of `table`, in JSON form.
fn read(bytes: &[u8], table: &[Field]) -> Result<Map<String, Value>, DecodeError> {
    let mut out = Map::new();
    for field in fields(bytes) {
        let (number, scalar) = field?;
        let Some(spec) = table.iter().find(|f| f.number == number) else {
            continue;
        };
        let Some(value) = value(spec, scalar)? else {
            continue;
        };
        if spec.repeated {
            let list = out
                .entry(spec.name)
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(items) = list {
                items.push(value);
            }
        } else if let (Kind::StrMap | Kind::BytesMap, Value::Object(entry)) = (spec.kind, &value) {
            let map = out
                .entry(spec.name)
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(map) = map {
                map.extend(entry.clone());
            }
        } else {
            out.insert(spec.name.into(), value);
        }
    }
    Ok(out)
}

/// One field's value in JSON form; `None` for what JSON leaves out (an empty string, a zero
/// number), but an item of a list is kept as it is (`apiGroups: [""]` names the core group).
fn value(spec: &Field, scalar: Scalar<'_>) -> Result<Option<Value>, DecodeError> {
    fn bytes(s: Scalar<'_>) -> Result<&[u8], DecodeError> {
        match s {
            Scalar::Bytes(b) => Ok(b),
            Scalar::Varint(_) => Err(DecodeError::Malformed("a varint where bytes belong")),
        }
    }
    fn number(s: Scalar<'_>) -> Result<i64, DecodeError> {
        match s {
            // Go's int32 and int64 are written as two's-complement varints.
            Scalar::Varint(n) => Ok(n as i64),
            Scalar::Bytes(_) => Err(DecodeError::Malformed("bytes where a number belongs")),
        }
    }
    Ok(match spec.kind {
        Kind::Str => Some(text(bytes(scalar)?)?)
            .filter(|s| spec.repeated || !s.is_empty())
            .map(Value::String),
        Kind::Bool => Some(Value::Bool(number(scalar)? != 0)),
        Kind::Int => Some(number(scalar)?).filter(|n| *n != 0).map(Value::from),
        Kind::Time => time(bytes(scalar)?)?,
        Kind::IntOrString => int_or_string(bytes(scalar)?)?,
        Kind::StrMap | Kind::BytesMap => Some(map_entry(bytes(scalar)?, spec.kind)?),
        Kind::Msg(table) => Some(Value::Object(read(bytes(scalar)?, table)?)),
    })
}

/// A map entry (1: key, 2: value) as a one-key JSON object.
fn map_entry(bytes: &[u8], kind: Kind) -> Result<Value, DecodeError> {
    let (mut key, mut value) = (String::new(), Value::String(String::new()));
    for field in fields(bytes) {
        match field? {
            (1, Scalar::Bytes(b)) => key = text(b)?,
            (2, Scalar::Bytes(b)) if matches!(kind, Kind::BytesMap) => {
                value = Value::String(base64::engine::general_purpose::STANDARD.encode(b));
            }
            (2, Scalar::Bytes(b)) => value = Value::String(text(b)?),
            _ => {}
        }
    }
    let mut entry = Map::new();
    entry.insert(key, value);
    Ok(Value::Object(entry))
}

/// `metav1.Time` (1: seconds, 2: nanos) as RFC 3339; the zero time as nothing.
fn time(bytes: &[u8]) -> Result<Option<Value>, DecodeError> {
    let mut seconds = 0i64;
    for field in fields(bytes) {
        if let (1, Scalar::Varint(n)) = field? {
            seconds = n as i64;
        }
    }
    if seconds == 0 {
        return Ok(None);
    }
    let stamp = k8s_openapi::jiff::Timestamp::from_second(seconds)
        .map_err(|_| DecodeError::Malformed("a time out of range"))?;
    Ok(Some(Value::String(stamp.to_string())))
}

/// `intstr.IntOrString` (1: type, 0 int 1 string; 2: intVal; 3: strVal).
fn int_or_string(bytes: &[u8]) -> Result<Option<Value>, DecodeError> {
    let (mut is_string, mut int, mut string) = (false, 0i64, String::new());
    for field in fields(bytes) {
        match field? {
            (1, Scalar::Varint(t)) => is_string = t == 1,
            (2, Scalar::Varint(n)) => int = n as i64,
            (3, Scalar::Bytes(b)) => string = text(b)?,
            _ => {}
        }
    }
    Ok(Some(if is_string {
        Value::String(string)
    } else {
        Value::from(int)
    }))
}

fn text(bytes: &[u8]) -> Result<String, DecodeError> {
    String::from_utf8(bytes.to_vec())
        .map_err(|_| DecodeError::Malformed("a string that is not UTF-8"))
}
