//! `SelfSubjectAccessReview` (`authorization.k8s.io/v1`): what `kubectl auth can-i` asks.
//! The answer is the review with `status.allowed` as RBAC decides it for the asking user;
//! nothing is stored. kubectl sends the review as Kubernetes protobuf
//! (`application/vnd.kubernetes.protobuf`), which is read here for this one kind; the answer
//! is JSON, which kubectl also accepts.

use serde_json::{Value, json};

use crate::authn::User;
use crate::rbac::{self, Request};
use crate::registry::ResourceType;
use crate::server::Shared;
use crate::status::{ApiError, Result};

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// The review `body` asks, answered for `user`.
pub(crate) fn answer(
    shared: &Shared,
    rt: &ResourceType,
    user: &User,
    headers: &axum::http::HeaderMap,
    body: &[u8],
) -> Result<Value> {
    let protobuf = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with(PROTOBUF));
    let decoded = if protobuf {
        protobuf::review(body)
    } else {
        serde_json::from_slice(body).map_err(|e| e.to_string())
    };
    let mut review: Value = decoded.map_err(|e| {
        ApiError::bad_request(format!("the SelfSubjectAccessReview does not decode: {e}"))
    })?;
    let spec = &review["spec"];
    let text = |v: &Value, field: &str| v[field].as_str().unwrap_or_default().to_owned();
    let allowed = if let Some(attributes) = spec.get("resourceAttributes") {
        let (verb, group, resource) = (
            text(attributes, "verb"),
            text(attributes, "group"),
            text(attributes, "resource"),
        );
        let (subresource, namespace, name) = (
            text(attributes, "subresource"),
            text(attributes, "namespace"),
            text(attributes, "name"),
        );
        let request = Request::Resource {
            verb: &verb,
            group: &group,
            resource: &resource,
            subresource: some(&subresource),
            namespace: some(&namespace),
            name: some(&name),
        };
        rbac::allowed(&shared.lock().store, user, &request)
    } else if let Some(attributes) = spec.get("nonResourceAttributes") {
        let (verb, path) = (text(attributes, "verb"), text(attributes, "path"));
        let request = Request::NonResource {
            verb: &verb,
            path: &path,
        };
        rbac::allowed(&shared.lock().store, user, &request)
    } else {
        return Err(ApiError::invalid_field(
            rt,
            "",
            "spec.resourceAttributes",
            "FieldValueRequired",
            "Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ));
    };
    review["status"] = if allowed {
        json!({"allowed": true, "reason": "RBAC: allowed"})
    } else {
        json!({"allowed": false})
    };
    if let Some(map) = review.as_object_mut() {
        map.insert("apiVersion".into(), json!("authorization.k8s.io/v1"));
        map.insert("kind".into(), json!("SelfSubjectAccessReview"));
        map.entry("metadata")
            .or_insert_with(|| json!({"creationTimestamp": null}));
    }
    Ok(review)
}

/// `s`, unless it is empty (an attribute the review leaves out).
fn some(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}

/// The Kubernetes protobuf encoding of a SelfSubjectAccessReview, read into its JSON form:
/// the `k8s\0` envelope (a `runtime.Unknown` whose field 2 is the object), then
/// `spec` (2) with `resourceAttributes` (1: namespace 1, verb 2, group 3, version 4,
/// resource 5, subresource 6, name 7) or `nonResourceAttributes` (2: path 1, verb 2).
mod protobuf {
    use serde_json::{Map, Value, json};

    const MAGIC: &[u8] = b"k8s\0";

    pub(super) fn review(body: &[u8]) -> Result<Value, String> {
        let unknown = body
            .strip_prefix(MAGIC)
            .ok_or("not a Kubernetes protobuf envelope")?;
        let raw = field(unknown, 2)?.ok_or("the envelope holds no object")?;
        let spec = field(raw, 2)?.unwrap_or_default();
        let mut out = Map::new();
        if let Some(attributes) = field(spec, 1)? {
            let names = [
                "namespace",
                "verb",
                "group",
                "version",
                "resource",
                "subresource",
                "name",
            ];
            out.insert("resourceAttributes".into(), strings(attributes, &names)?);
        } else if let Some(attributes) = field(spec, 2)? {
            out.insert(
                "nonResourceAttributes".into(),
                strings(attributes, &["path", "verb"])?,
            );
        }
        Ok(json!({"spec": out}))
    }

    /// The string fields `1..=names.len()` of `message`, by name.
    fn strings(message: &[u8], names: &[&str]) -> Result<Value, String> {
        let mut out = Map::new();
        for (number, name) in (1..).zip(names) {
            if let Some(bytes) = field(message, number)? {
                let text = std::str::from_utf8(bytes).map_err(|e| e.to_string())?;
                out.insert((*name).into(), text.into());
            }
        }
        Ok(Value::Object(out))
    }

    /// The last length-delimited field `number` of `message`.
    fn field(mut message: &[u8], number: u64) -> Result<Option<&[u8]>, String> {
        let mut found = None;
        while !message.is_empty() {
            let key = varint(&mut message)?;
            match key & 7 {
                0 => {
                    varint(&mut message)?;
                }
                1 => message = message.get(8..).ok_or("a truncated fixed64")?,
                5 => message = message.get(4..).ok_or("a truncated fixed32")?,
                2 => {
                    let len = usize::try_from(varint(&mut message)?).map_err(|e| e.to_string())?;
                    if len > message.len() {
                        return Err("a truncated field".into());
                    }
                    let (value, rest) = message.split_at(len);
                    if key >> 3 == number {
                        found = Some(value);
                    }
                    message = rest;
                }
                wire => return Err(format!("wire type {wire} is not supported")),
            }
        }
        Ok(found)
    }

    fn varint(message: &mut &[u8]) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = message.split_first().ok_or("a truncated varint")?;
            *message = rest;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("a varint longer than 64 bits".into())
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn message(fields: &[(u64, &[u8])]) -> Vec<u8> {
            let mut out = Vec::new();
            for (number, bytes) in fields {
                out.push(u8::try_from(number << 3 | 2).expect("small"));
                out.push(u8::try_from(bytes.len()).expect("short"));
                out.extend_from_slice(bytes);
            }
            out
        }

        #[test]
        fn a_protobuf_review_reads_as_its_json_form() {
            let attributes = message(&[(1, b"ops"), (2, b"get"), (5, b"configmaps")]);
            let spec = message(&[(1, &attributes)]);
            let object = message(&[(1, b""), (2, &spec)]);
            let unknown = message(&[(1, b"type"), (2, &object)]);
            let body = [MAGIC, &unknown].concat();
            assert_eq!(
                review_of(&body),
                json!({"spec": {"resourceAttributes": {"namespace": "ops", "verb": "get", "resource": "configmaps"}}})
            );
            let refusals = [
                (&b"{}"[..], "not a Kubernetes protobuf envelope"),
                (
                    &[MAGIC, &[0x12, 0x05, 0x01]].concat()[..],
                    "a truncated field",
                ),
            ];
            for (body, error) in refusals {
                assert_eq!(review(body).expect_err("refused"), error);
            }
        }

        fn review_of(body: &[u8]) -> Value {
            review(body).expect("decodes")
        }
    }
}
