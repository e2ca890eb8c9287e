//! `core/v1` and `events.k8s.io/v1` Events are one store seen through two APIs, as in
//! kube-apiserver: what the operator records through `events.k8s.io` is what `kubectl get
//! events` lists and `kubectl describe` finds by `involvedObject`. Events are stored in
//! their `events.k8s.io/v1` form; a core Event is converted on the way in and out, field by
//! field as kube-apiserver's conversion does (`regarding` ⇄ `involvedObject`, `note` ⇄
//! `message`, `reportingController` ⇄ `reportingComponent`, the `deprecated*` fields ⇄
//! `source`, `firstTimestamp`, `lastTimestamp`, `count`). Which form an object is in is told
//! by its apiVersion, so converting twice changes nothing.

use serde_json::{Map, Value, json};

use crate::registry::ResourceType;

/// The API group Events are stored under.
pub(crate) const STORAGE_GROUP: &str = "events.k8s.io";

const STORED_API_VERSION: &str = "events.k8s.io/v1";

/// `(events.k8s.io/v1 field, core/v1 field)`.
const RENAMED: &[(&str, &str)] = &[
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
];

/// Whether `rt` is the core/v1 Event, the view converted from the stored form.
pub(crate) fn is_core_event(rt: &ResourceType) -> bool {
    rt.group.is_empty() && rt.kind == "Event"
}

/// A stored Event as core/v1 serves it; any other object as it is.
pub(crate) fn to_core(object: &Value) -> Value {
    if object["apiVersion"] != STORED_API_VERSION {
        return object.clone();
    }
    rename(object, "v1", |(stored, core)| (stored, core))
}

/// A core/v1 Event in the stored form; an object already stored as it is.
pub(crate) fn to_stored(object: &Value) -> Value {
    if object["apiVersion"] == STORED_API_VERSION {
        return object.clone();
    }
    rename(object, STORED_API_VERSION, |(stored, core)| (core, stored))
}

/// `object` with each field renamed `from` → `to` and the given apiVersion.
fn rename(
    object: &Value,
    api_version: &str,
    direction: fn((&'static str, &'static str)) -> (&'static str, &'static str),
) -> Value {
    let Some(fields) = object.as_object() else {
        return object.clone();
    };
    let renames: Vec<(&str, &str)> = RENAMED.iter().map(|pair| direction(*pair)).collect();
    let mut out = Map::new();
    for (field, value) in fields {
        let name = renames
            .iter()
            .find(|(from, _)| from == field)
            .map_or(field.as_str(), |(_, to)| to);
        out.insert(name.to_owned(), value.clone());
    }
    out.insert("apiVersion".into(), json!(api_version));
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_converts_field_by_field_and_back() {
        let stored = json!({
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "cm.1", "namespace": "ns"},
            "regarding": {"kind": "ConfigMap", "name": "cm", "uid": "u-1"},
            "note": "copied", "reason": "Copied", "type": "Normal", "action": "Apply",
            "reportingController": "wasm-operator/copier", "reportingInstance": "pod-1",
            "eventTime": "2026-12-06T04:00:00.000000Z",
            "deprecatedSource": {"component": "copier"},
            "deprecatedFirstTimestamp": "2026-12-06T04:00:00Z",
            "deprecatedLastTimestamp": "2026-12-06T04:01:00Z",
            "deprecatedCount": 2,
            "series": {"count": 2, "lastObservedTime": "2026-12-06T04:01:00.000000Z"},
        });
        let core = to_core(&stored);
        assert_eq!(
            core,
            json!({
                "apiVersion": "v1", "kind": "Event",
                "metadata": {"name": "cm.1", "namespace": "ns"},
                "involvedObject": {"kind": "ConfigMap", "name": "cm", "uid": "u-1"},
                "message": "copied", "reason": "Copied", "type": "Normal", "action": "Apply",
                "reportingComponent": "wasm-operator/copier", "reportingInstance": "pod-1",
                "eventTime": "2026-12-06T04:00:00.000000Z",
                "source": {"component": "copier"},
                "firstTimestamp": "2026-12-06T04:00:00Z",
                "lastTimestamp": "2026-12-06T04:01:00Z",
                "count": 2,
                "series": {"count": 2, "lastObservedTime": "2026-12-06T04:01:00.000000Z"},
            })
        );
        assert_eq!(to_core(&core), core, "a core Event stays as it is");
        assert_eq!(to_stored(&core), stored);
        assert_eq!(to_stored(&stored), stored, "a stored Event stays as it is");
    }
}
