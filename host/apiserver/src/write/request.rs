//! What a write request carries besides its target: the body, decoded and checked against
//! the URL; the patch kind its Content-Type names; the field manager it writes as.

use axum::http::HeaderMap;
use serde_json::Value;

use crate::objects::meta_str;
use crate::patch::PatchKind;
use crate::registry::ResourceType;
use crate::route::{Params, Target};
use crate::status::{ApiError, Result};

/// The field manager of a request: `fieldManager`, else the user agent's program name
/// (the part before the first `/`), else `unknown`.
pub(super) fn field_manager(params: &Params, headers: &HeaderMap) -> String {
    if let Some(m) = params.get("fieldManager") {
        return m.to_owned();
    }
    let agent = headers
        .get("user-agent")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("unknown");
    agent.split('/').next().unwrap_or("unknown").to_owned()
}

/// The media types a create or update body may have: JSON, and YAML (what `kubectl`
/// sends for some bodies). A body in any other (Protocol Buffers, which kubectl 1.32's
/// imperative `create configmap|secret|namespace` sends, or `text/plain`) is refused with
/// 415 before it is read, as kube-apiserver refuses a type it does not serve for a kind.
/// (kubectl 1.32 does not fall back to JSON on that 415: it prints the message.)
pub(crate) const BODY_MEDIA_TYPES: &[&str] = &["application/json", "application/yaml"];

/// 415 unless the request's Content-Type is absent or one of [`BODY_MEDIA_TYPES`].
pub(crate) fn check_media_type(headers: &HeaderMap) -> Result<()> {
    let Some(value) = headers.get("content-type") else {
        return Ok(());
    };
    let text = value.to_str().unwrap_or_default();
    let media_type = text.split(';').next().unwrap_or_default().trim();
    if BODY_MEDIA_TYPES
        .iter()
        .any(|t| t.eq_ignore_ascii_case(media_type))
    {
        return Ok(());
    }
    // Protobuf bodies are read into JSON before this check (crate::protobuf).
    let accepted = [BODY_MEDIA_TYPES, &["application/vnd.kubernetes.protobuf"]].concat();
    Err(ApiError::unsupported_media_type(text, &accepted))
}

/// How deep a request body may nest mappings and lists: serde_json's own limit, applied to
/// YAML too (whose parser takes quadratic time over deeply nested flow collections: 100,000
/// brackets held the server 47 s).
const MAX_NESTING: usize = 128;

/// Decodes a request body: JSON, else YAML (apply bodies, delete options). 400 when it is
/// neither, or nests deeper than [`MAX_NESTING`] (refused before any YAML parsing).
pub(super) fn decode(body: &[u8]) -> Result<Value> {
    let too_deep = || {
        ApiError::bad_request(format!(
            "the request body nests mappings and lists more than {MAX_NESTING} levels deep"
        ))
    };
    match serde_json::from_slice(body) {
        Ok(v) => return Ok(v),
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
            return Err(too_deep());
        }
        Err(_) => {}
    }
    if bracket_depth(body) > MAX_NESTING {
        return Err(too_deep());
    }
    let text = std::str::from_utf8(body)
        .map_err(|_| ApiError::bad_request("the request body is not UTF-8"))?;
    serde_yaml_ng::from_str(text)
        .map_err(|e| ApiError::bad_request(format!("error decoding the request body: {e}")))
}

/// The deepest nesting of `[` and `{` in `body`, counting those inside strings too: never
/// less than the nesting a YAML parser would build from it.
fn bracket_depth(body: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for &byte in body {
        match byte {
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Decodes a whole object (the body of a create or update), takes what it leaves out of
/// its type from the URL ([`type_from_url`]) and checks it with [`check_type`].
pub(super) fn decode_object(body: &[u8], target: &Target) -> Result<Value> {
    let mut object = decode(body)?;
    type_from_url(&mut object, target);
    check_type(&object, target)?;
    Ok(object)
}

/// Fills a missing `kind` and a missing `apiVersion` from the resource the URL addresses,
/// as kube-apiserver's decoder defaults them: a body from a client that leaves them out (a
/// bare dict, the Python client's models) is the URL's kind. Present values are kept, to
/// be checked.
fn type_from_url(object: &mut Value, target: &Target) {
    let Some(fields) = object.as_object_mut() else {
        return;
    };
    let present = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_owned();
    let kind = present(fields.get("kind"));
    if kind.is_empty() {
        fields.insert("kind".into(), Value::String(target.rt.kind.clone()));
    }
    if present(fields.get("apiVersion")).is_empty() {
        fields.insert("apiVersion".into(), Value::String(target.rt.api_version()));
    }
}

/// 400 unless `object`'s apiVersion and kind are the target's, and its namespace (when it
/// names one) is the URL's.
///
/// A wrong kind is reported as the kind; a missing kind, or a wrong apiVersion, as the
/// apiVersion.
pub(super) fn check_type(object: &Value, target: &Target) -> Result<()> {
    let rt = &target.rt;
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if api_version != rt.api_version() || kind != rt.kind {
        let expected = &rt.kind;
        let message = if kind != expected && !kind.is_empty() {
            format!("the kind in the data ({kind}) does not match the expected kind ({expected})")
        } else {
            format!(
                "the API version in the data ({api_version}) does not match the expected API version ({})",
                rt.api_version()
            )
        };
        return Err(ApiError::bad_request(message));
    }
    if let (Some(url_ns), Some(body_ns)) =
        (target.namespace.as_deref(), meta_str(object, "namespace"))
        && url_ns != body_ns
    {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    Ok(())
}

/// The patch kind the request's Content-Type names, or 415 (strategic merge only for
/// built-in kinds, which have no schema).
pub(super) fn patch_kind(headers: &HeaderMap, rt: &ResourceType) -> Result<PatchKind> {
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    PatchKind::from_content_type(content_type, rt.schema.is_none())
}
