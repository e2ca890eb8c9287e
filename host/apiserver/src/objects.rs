//! Object bookkeeping shared by the handlers: storage keys, the served form of an object,
//! and the metadata the server owns.

use serde_json::{Map, Value, json};

use crate::registry::ResourceType;
use crate::status::{ApiError, Result};
use crate::store::StoreKey;

/// The storage key of `name` of type `rt` in `namespace`.
pub(crate) fn key_for(rt: &ResourceType, namespace: Option<&str>, name: &str) -> StoreKey {
    StoreKey {
        group: rt.storage_group().to_owned(),
        plural: rt.plural.clone(),
        namespace: if rt.namespaced {
            namespace.unwrap_or_default().to_owned()
        } else {
            String::new()
        },
        name: name.to_owned(),
    }
}

/// `object` as served at `rt`'s version (every version shares one storage; the server
/// converts with the `None` strategy: only apiVersion changes), a stored Event as core/v1
/// when served there ([`crate::events`]).
pub(crate) fn served(object: &Value, rt: &ResourceType) -> Value {
    let mut object = as_written(object, rt);
    if let Some(map) = object.as_object_mut() {
        map.insert("apiVersion".into(), json!(rt.api_version()));
        map.insert("kind".into(), json!(rt.kind));
    }
    object
}

/// A stored object in the form the writes of `rt` work on: a stored Event as core/v1 for the
/// core/v1 API ([`crate::events`]); any other as it is.
pub(crate) fn as_written(object: &Value, rt: &ResourceType) -> Value {
    if crate::events::is_core_event(rt) {
        crate::events::to_core(object)
    } else {
        object.clone()
    }
}

/// `object`, written through `rt`, in the form it is stored in.
pub(crate) fn for_storage(object: Value, rt: &ResourceType) -> Value {
    if crate::events::is_core_event(rt) {
        crate::events::to_stored(&object)
    } else {
        object
    }
}

/// The metadata map of `object`, created when absent.
pub(crate) fn metadata_mut(object: &mut Value) -> Result<&mut Map<String, Value>> {
    let map = object
        .as_object_mut()
        .ok_or_else(|| ApiError::bad_request("the object is not a JSON object"))?;
    let meta = map.entry("metadata").or_insert_with(|| json!({}));
    meta.as_object_mut()
        .ok_or_else(|| ApiError::bad_request("metadata is not an object"))
}

/// A string field of metadata.
pub(crate) fn meta_str<'a>(object: &'a Value, field: &str) -> Option<&'a str> {
    object.get("metadata")?.get(field)?.as_str()
}

/// The part of an object whose change bumps `generation`: everything but metadata and
/// status (for kinds with a status subresource) — the spec, for built-ins.
pub(crate) fn generation_relevant(object: &Value, rt: &ResourceType) -> Value {
    let mut object = object.clone();
    if let Some(map) = object.as_object_mut() {
        for field in ["metadata", "apiVersion", "kind"] {
            map.remove(field);
        }
        if rt.status {
            map.remove("status");
        }
    }
    object
}

/// The object without what the server rewrites on every write, to tell whether a write
/// changes anything.
pub(crate) fn without_volatile(object: &Value) -> Value {
    let mut object = object.clone();
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("resourceVersion");
    }
    object
}

/// Whether `object` is waiting on finalizers to go.
pub(crate) fn has_finalizers(object: &Value) -> bool {
    object
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| !f.is_empty())
}

/// Whether `object` is being deleted.
pub(crate) fn is_deleting(object: &Value) -> bool {
    object
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
}

/// The current time as the API writes it (RFC 3339, seconds).
pub(crate) fn now() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    k8s_openapi::jiff::Timestamp::from_second(i64::try_from(seconds).unwrap_or(0))
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// A fresh uid (random, RFC 4122 version 4 layout).
pub(crate) fn new_uid() -> String {
    let bytes: [u8; 16] = rand::random();
    let h = |r: std::ops::Range<usize>| {
        bytes[r]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let variant = format!("{:02x}", (bytes[8] & 0x3f) | 0x80);
    let version = format!("{:02x}", (bytes[6] & 0x0f) | 0x40);
    format!(
        "{}-{}-{}{}-{}{}-{}",
        h(0..4),
        h(4..6),
        version,
        h(7..8),
        variant,
        h(9..10),
        h(10..16)
    )
}

/// What kube-apiserver says of a value that is no DNS-1123 subdomain.
pub(crate) const SUBDOMAIN_RULE: &str = "a lowercase RFC 1123 subdomain must consist of lower \
    case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric \
    character (e.g. 'example.com', regex used for validation is \
    '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// Whether `name` is a DNS-1123 subdomain: dot-separated lowercase labels of letters, digits
/// and inner '-', at most 253 characters.
pub(crate) fn is_dns_subdomain(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

/// The kube-apiserver rules for a name (DNS-1123 subdomain) — the error text when it breaks
/// them.
pub(crate) fn name_error(name: &str) -> Option<String> {
    (!is_dns_subdomain(name)).then(|| format!("Invalid value: \"{name}\": {SUBDOMAIN_RULE}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_rfc_1123_subdomain_rules() {
        for ok in ["a", "a-b", "a.b-c", "0abc"] {
            assert_eq!(name_error(ok), None, "{ok}");
        }
        for bad in ["", "A", "-a", "a-", "a..b", "a_b"] {
            assert!(name_error(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn a_uid_has_the_version_4_layout() {
        let uid = new_uid();
        assert_eq!(uid.len(), 36);
        assert_eq!(&uid[14..15], "4");
    }
}
