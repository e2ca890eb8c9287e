//! From a change to the primaries it concerns: the predicates on the primary and the
//! mappings of watched kinds (controller owner reference, label). Field-index mappings go
//! through [`super::index::FieldIndexes`].

use serde_json::Value;
use wasm_operator_types::{KindRef, Predicate, Request};

use crate::informer::Change;

/// Whether a change of the primary starts a pass: additions and deletions always do; an
/// update does when any declared predicate holds, or always when none is declared.
pub(crate) fn passes(predicates: &[Predicate], change: &Change) -> bool {
    let (Some(old), Some(new)) = (&change.old, &change.new) else {
        return true;
    };
    predicates.is_empty()
        || predicates.iter().any(|predicate| match predicate {
            Predicate::GenerationChanged => {
                meta(old, "generation") != meta(new, "generation")
                    // Deletion starting is a change of every reconciler's concern.
                    || meta(old, "deletionTimestamp") != meta(new, "deletionTimestamp")
            }
            Predicate::LabelsChanged => meta(old, "labels") != meta(new, "labels"),
        })
}

fn meta<'a>(object: &'a Value, field: &str) -> Option<&'a Value> {
    object.get("metadata")?.get(field)
}

/// The request for a primary object itself.
pub(crate) fn request_of(object: &Value) -> Option<Request> {
    let metadata = object.get("metadata")?;
    Some(Request {
        namespace: metadata
            .get("namespace")
            .and_then(Value::as_str)
            .filter(|ns| !ns.is_empty())
            .map(str::to_owned),
        name: metadata.get("name")?.as_str()?.to_owned(),
    })
}

/// The primary named by `object`'s controller owner reference, when that owner is of the
/// primary kind. An owner lives in its dependent's namespace (or is cluster-scoped).
pub(crate) fn by_owner(primary: &KindRef, object: &Value) -> Option<Request> {
    let owners = object.get("metadata")?.get("ownerReferences")?.as_array()?;
    let owner = owners
        .iter()
        .find(|o| o.get("controller").and_then(Value::as_bool) == Some(true))?;
    let kind = owner.get("kind")?.as_str()?;
    let api_version = owner.get("apiVersion")?.as_str()?;
    if kind != primary.kind || api_version != primary.api_version {
        return None;
    }
    let name = owner.get("name")?.as_str()?.to_owned();
    let namespace = if primary.namespaced {
        request_of(object)?.namespace
    } else {
        None
    };
    Some(Request { namespace, name })
}

/// The primary a child on a target cluster names by its owner labels (kind, name,
/// namespace: [`TargetDescription::owner_labels`]), when the kind is the primary's; the
/// namespace is the label's, the primary's cluster being another one.
///
/// [`TargetDescription::owner_labels`]: wasm_operator_types::TargetDescription::owner_labels
pub(crate) fn by_owner_labels(
    primary: &KindRef,
    labels: &[String; 3],
    object: &Value,
) -> Option<Request> {
    let values = object.get("metadata")?.get("labels")?;
    let value = |key: &String| values.get(key).and_then(Value::as_str);
    if value(&labels[0])? != primary.kind {
        return None;
    }
    let name = value(&labels[1]).filter(|n| !n.is_empty())?.to_owned();
    let namespace = match (primary.namespaced, value(&labels[2])) {
        (true, Some(ns)) if !ns.is_empty() => Some(ns.to_owned()),
        (true, _) => return None,
        (false, _) => None,
    };
    Some(Request { namespace, name })
}

/// The primary, in the object's namespace, named by the value of `label` on `object`.
pub(crate) fn by_label(primary: &KindRef, label: &str, object: &Value) -> Option<Request> {
    let name = object.get("metadata")?.get("labels")?.get(label)?;
    named(primary, name, object)
}

/// The primary, in the object's namespace, named by the string at the dot-separated field
/// `path` of `object` (e.g. `spec.keystoneRef.name`).
pub(crate) fn by_reference(primary: &KindRef, path: &str, object: &Value) -> Option<Request> {
    let name = path
        .split('.')
        .try_fold(object, |value, field| value.get(field))?;
    named(primary, name, object)
}

/// The primary named by the string `name` (none when it is empty or not a string), in
/// `object`'s namespace when the primary kind is namespaced.
fn named(primary: &KindRef, name: &Value, object: &Value) -> Option<Request> {
    let name = name.as_str().filter(|n| !n.is_empty())?.to_owned();
    let namespace = if primary.namespaced {
        request_of(object)?.namespace
    } else {
        None
    };
    Some(Request { namespace, name })
}

/// The requests of both sides of a change (an update may move an object between
/// primaries: both the old and the new one are reconciled).
pub(crate) fn both_sides(change: &Change, map: impl Fn(&Value) -> Option<Request>) -> Vec<Request> {
    let mut requests: Vec<Request> = [change.old.as_deref(), change.new.as_deref()]
        .into_iter()
        .flatten()
        .filter_map(map)
        .collect();
    requests.dedup();
    requests
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    #[test]
    fn a_remote_child_maps_to_the_primary_its_owner_labels_name() {
        let primary = KindRef {
            api_version: "example.com/v1".into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
            namespaced: true,
        };
        let labels =
            ["x.io/owner-kind", "x.io/owner-name", "x.io/owner-namespace"].map(String::from);
        let child = |kind: &str, ns: &str| {
            json!({"metadata": {"name": "c", "namespace": "remote", "labels": {
                "x.io/owner-kind": kind, "x.io/owner-name": "w", "x.io/owner-namespace": ns}}})
        };
        assert_eq!(
            by_owner_labels(&primary, &labels, &child("Widget", "ns")),
            Some(Request {
                namespace: Some("ns".into()),
                name: "w".into()
            })
        );
        assert_eq!(
            by_owner_labels(&primary, &labels, &child("Gadget", "ns")),
            None
        );
        assert_eq!(
            by_owner_labels(&primary, &labels, &child("Widget", "")),
            None
        );
        assert_eq!(
            by_owner_labels(&primary, &labels, &json!({"metadata": {}})),
            None
        );
    }

    fn object(generation: i64, labels: Value) -> Arc<Value> {
        Arc::new(json!({
            "metadata": {"name": "a", "namespace": "ns", "generation": generation, "labels": labels}
        }))
    }

    fn update(old: Arc<Value>, new: Arc<Value>) -> Change {
        Change {
            old: Some(old),
            new: Some(new),
        }
    }

    #[test]
    fn predicates_decide_which_updates_of_the_primary_start_a_pass() {
        use Predicate::*;
        let base = object(1, json!({"a": "1"}));
        let status_only = update(base.clone(), object(1, json!({"a": "1"})));
        let spec = update(base.clone(), object(2, json!({"a": "1"})));
        let labels = update(base.clone(), object(1, json!({"a": "2"})));
        let cases: &[(&str, &[Predicate], &Change, bool)] = &[
            (
                "no predicate passes a status-only update",
                &[],
                &status_only,
                true,
            ),
            (
                "generation-changed passes a spec change",
                &[GenerationChanged],
                &spec,
                true,
            ),
            (
                "generation-changed drops a status-only update",
                &[GenerationChanged],
                &status_only,
                false,
            ),
            (
                "generation-changed drops a label change",
                &[GenerationChanged],
                &labels,
                false,
            ),
            (
                "labels-changed passes a label change",
                &[LabelsChanged],
                &labels,
                true,
            ),
            (
                "labels-changed drops a spec change",
                &[LabelsChanged],
                &spec,
                false,
            ),
            (
                "either predicate passes a label change",
                &[GenerationChanged, LabelsChanged],
                &labels,
                true,
            ),
            (
                "either predicate drops a status-only update",
                &[GenerationChanged, LabelsChanged],
                &status_only,
                false,
            ),
        ];
        for (case, predicates, change, expected) in cases {
            assert_eq!(passes(predicates, change), *expected, "{case}");
        }
    }

    #[test]
    fn additions_and_deletions_of_the_primary_always_start_a_pass() {
        let o = object(1, json!({}));
        let preds = [Predicate::GenerationChanged];
        assert!(passes(
            &preds,
            &Change {
                old: None,
                new: Some(o.clone())
            }
        ));
        assert!(passes(
            &preds,
            &Change {
                old: Some(o),
                new: None
            }
        ));
    }

    #[test]
    fn a_starting_deletion_passes_the_generation_predicate() {
        let old = object(1, json!({}));
        let mut new = (*old).clone();
        new["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        assert!(passes(
            &[Predicate::GenerationChanged],
            &update(old, Arc::new(new))
        ));
    }

    #[test]
    fn an_owned_object_maps_to_its_controller_owner_of_the_primary_kind_only() {
        let primary = KindRef {
            api_version: "example.com/v1".into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
            namespaced: true,
        };
        let owned = |api_version: &str, kind: &str, controller: bool| {
            json!({"metadata": {"name": "child", "namespace": "ns", "ownerReferences": [
                {"apiVersion": api_version, "kind": kind, "name": "parent", "uid": "u", "controller": controller}
            ]}})
        };
        assert_eq!(
            by_owner(&primary, &owned("example.com/v1", "Widget", true)),
            Some(Request {
                namespace: Some("ns".into()),
                name: "parent".into()
            })
        );
        assert_eq!(
            by_owner(&primary, &owned("example.com/v1", "Widget", false)),
            None
        );
        assert_eq!(
            by_owner(&primary, &owned("example.com/v1", "Gadget", true)),
            None
        );
        assert_eq!(
            by_owner(&primary, &owned("example.com/v2", "Widget", true)),
            None
        );
    }

    #[test]
    fn a_reference_maps_to_the_primary_its_field_names_in_its_namespace() {
        let primary = KindRef::of::<k8s_openapi::api::core::v1::ConfigMap>();
        let object =
            |spec: Value| json!({"metadata": {"name": "s", "namespace": "ns"}, "spec": spec});
        let cases = [
            (json!({"parentRef": {"name": "p"}}), Some("p")),
            (json!({"parentRef": {}}), None),
            (json!({"parentRef": {"name": ""}}), None),
            (json!({"parentRef": {"name": 3}}), None),
            (json!({}), None),
        ];
        for (spec, expected) in cases {
            let got = by_reference(&primary, "spec.parentRef.name", &object(spec.clone()));
            let want = expected.map(|name| Request {
                namespace: Some("ns".into()),
                name: name.into(),
            });
            assert_eq!(got, want, "{spec}");
        }
    }

    #[test]
    fn a_labelled_object_maps_to_the_primary_its_label_names_in_its_namespace() {
        let primary = KindRef::of::<k8s_openapi::api::core::v1::ConfigMap>();
        let labelled =
            json!({"metadata": {"name": "x", "namespace": "ns", "labels": {"app/owner": "cfg"}}});
        assert_eq!(
            by_label(&primary, "app/owner", &labelled),
            Some(Request {
                namespace: Some("ns".into()),
                name: "cfg".into()
            })
        );
        assert_eq!(by_label(&primary, "other", &labelled), None);
    }

    #[test]
    fn a_relabelled_object_maps_to_its_old_and_its_new_primary() {
        let primary = KindRef::of::<k8s_openapi::api::core::v1::ConfigMap>();
        let with = |owner: &str| {
            Arc::new(json!({"metadata": {"name": "x", "namespace": "ns", "labels": {"o": owner}}}))
        };
        let change = update(with("one"), with("two"));
        let names: Vec<String> = both_sides(&change, |o| by_label(&primary, "o", o))
            .into_iter()
            .map(|r| r.name)
            .collect();
        assert_eq!(names, ["one", "two"]);
    }
}
