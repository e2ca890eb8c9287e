//! Patch bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge
//! patch for the built-in kinds.
//!
//! Strategic merge patch merges lists by the merge keys kube-apiserver declares for the
//! fields the operator uses (containers, env, ports, volumes, volumeMounts, …), honours the
//! `$patch: delete|replace` directives on list items and maps, and otherwise behaves as a
//! merge patch. Custom resources do not take it (415), as on a real server.

use serde_json::{Map, Value};

use crate::status::ApiError;

/// The kind of a PATCH body, from its content type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PatchKind {
    Merge,
    Json,
    Strategic,
    Apply,
}

/// The media types a PATCH takes.
pub(crate) const PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

impl PatchKind {
    /// The patch kind of `content_type`, or 415.
    pub(crate) fn from_content_type(content_type: &str, builtin: bool) -> Result<Self, ApiError> {
        let media = content_type.split(';').next().unwrap_or_default().trim();
        let kind = match media {
            "application/merge-patch+json" => Self::Merge,
            "application/json-patch+json" => Self::Json,
            "application/strategic-merge-patch+json" if builtin => Self::Strategic,
            "application/apply-patch+yaml" | "application/apply-patch+json" => Self::Apply,
            _ => {
                let accepted: Vec<&str> = PATCH_TYPES
                    .iter()
                    .copied()
                    .filter(|t| builtin || !t.contains("strategic"))
                    .collect();
                return Err(ApiError::unsupported_media_type(content_type, &accepted));
            }
        };
        Ok(kind)
    }
}

/// Applies a JSON merge patch.
pub(crate) fn merge(target: &Value, patch: &Value) -> Value {
    let mut out = target.clone();
    json_patch::merge(&mut out, patch);
    out
}

/// Applies a JSON patch; a failed operation is 422, a malformed body 400.
pub(crate) fn json(target: &Value, patch: &Value) -> Result<Value, ApiError> {
    let ops: json_patch::Patch = serde_json::from_value(patch.clone())
        .map_err(|e| ApiError::bad_request(format!("invalid JSON patch: {e}")))?;
    let mut out = target.clone();
    json_patch::patch(&mut out, &ops).map_err(|e| ApiError {
        code: 422,
        reason: "Invalid".into(),
        message: format!("the server rejected our request due to an error in our request: {e}"),
        details: None,
    })?;
    Ok(out)
}

/// The merge key of the list at `path` (field names from the root, list items skipped), as
/// the built-in types declare it.
pub(crate) fn merge_key(path: &[&str]) -> Option<&'static str> {
    let last = *path.last()?;
    let parent = path.len().checked_sub(2).map(|i| path[i]);
    Some(match (parent, last) {
        (_, "containers" | "initContainers" | "ephemeralContainers") => "name",
        (_, "env" | "volumes" | "imagePullSecrets" | "hostAliases") => {
            if last == "hostAliases" {
                "ip"
            } else {
                "name"
            }
        }
        (_, "schedulingGates" | "resourceClaims" | "claims") => "name",
        (_, "topologySpreadConstraints") => "topologyKey",
        (Some("status"), "addresses") => "type",
        (_, "volumeMounts") => "mountPath",
        (_, "volumeDevices") => "devicePath",
        (Some("metadata"), "ownerReferences") => "uid",
        (_, "ports") => {
            if path.contains(&"containers") || path.contains(&"initContainers") {
                "containerPort"
            } else {
                "port"
            }
        }
        (_, "conditions") => "type",
        (_, "tolerations") => return None,
        _ => return None,
    })
}

/// Whether the list of primitives at `path` merges (`patchStrategy: merge` without a key):
/// a patch's values are added to it, those of `$deleteFromPrimitiveList/<field>` removed.
fn merges_primitives(path: &[&str]) -> bool {
    matches!(path, ["metadata", "finalizers"])
}

/// Applies a strategic merge patch to a built-in object.
pub(crate) fn strategic(target: &Value, patch: &Value) -> Value {
    let mut path = Vec::new();
    merge_value(target, patch, &mut path)
}

fn merge_value(target: &Value, patch: &Value, path: &mut Vec<String>) -> Value {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            if p.get("$patch").and_then(Value::as_str) == Some("replace") {
                let mut replaced = p.clone();
                replaced.remove("$patch");
                return Value::Object(replaced);
            }
            let mut out = t.clone();
            for (k, v) in p {
                if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/") {
                    if let (Some(Value::Array(items)), Value::Array(removed)) =
                        (out.get_mut(field), v)
                    {
                        items.retain(|item| !removed.contains(item));
                    }
                    continue;
                }
                if k.starts_with('$') {
                    continue;
                }
                if v.is_null() {
                    out.remove(k);
                    continue;
                }
                path.push(k.clone());
                let merged = match out.get(k) {
                    Some(existing) => merge_value(existing, v, path),
                    None => strip_directives(v),
                };
                path.pop();
                out.insert(k.clone(), merged);
            }
            for (k, order) in p {
                if let (Some(field), Value::Array(order)) =
                    (k.strip_prefix("$setElementOrder/"), order)
                {
                    path.push(field.to_owned());
                    let names: Vec<&str> = path.iter().map(String::as_str).collect();
                    let key = merge_key(&names);
                    if let (Some(Value::Array(items)), Some(original)) =
                        (out.get_mut(field), t.get(field).and_then(Value::as_array))
                    {
                        *items = set_element_order(items, original, order, key);
                    }
                    path.pop();
                }
            }
            // `$retainKeys` (a union such as a Deployment's strategy): fields not named go.
            if let Some(Value::Array(retained)) = p.get("$retainKeys") {
                out.retain(|k, _| retained.iter().any(|r| r.as_str() == Some(k.as_str())));
            }
            Value::Object(out)
        }
        (Value::Array(t), Value::Array(p)) => {
            let names: Vec<&str> = path.iter().map(String::as_str).collect();
            match merge_key(&names) {
                Some(key) => merge_list(t, p, key, path),
                None if merges_primitives(&names) => {
                    let mut out = t.clone();
                    for item in p {
                        if !out.contains(item) {
                            out.push(item.clone());
                        }
                    }
                    Value::Array(out)
                }
                None => Value::Array(p.iter().map(strip_directives).collect()),
            }
        }
        (_, p) => strip_directives(p),
    }
}

fn merge_list(target: &[Value], patch: &[Value], key: &str, path: &mut Vec<String>) -> Value {
    let mut out: Vec<Value> = target.to_vec();
    for item in patch {
        let Some(id) = item.get(key) else {
            out.push(strip_directives(item));
            continue;
        };
        let position = out.iter().position(|o| o.get(key) == Some(id));
        let directive = item.get("$patch").and_then(Value::as_str);
        match (position, directive) {
            (Some(i), Some("delete")) => {
                out.remove(i);
            }
            (None, Some("delete")) => {}
            (Some(i), _) => out[i] = merge_value(&out[i], item, path),
            (None, _) => out.push(strip_directives(item)),
        }
    }
    Value::Array(out)
}

/// `$setElementOrder/<field>`: the merged `items` in the patch's `order` (items named by
/// their merge `key`, or by value in a list of primitives); an item the order does not name
/// (one the patch left on the server) keeps its place after the item that preceded it in
/// the stored list, as apimachinery's merge of the two sorted lists places it.
fn set_element_order(
    items: &[Value],
    stored: &[Value],
    order: &[Value],
    key: Option<&str>,
) -> Vec<Value> {
    // An item's identity, in the list and in the order alike.
    let id = |item: &Value| -> Value {
        match key {
            Some(key) => item.get(key).cloned().unwrap_or(Value::Null),
            None => item.clone(),
        }
    };
    let named: Vec<Value> = order.iter().map(id).collect();
    let mut out: Vec<Value> = named
        .iter()
        .filter_map(|n| items.iter().find(|i| &id(i) == n).cloned())
        .collect();
    let mut previous: Option<Value> = None;
    for stored_item in stored {
        let stored_id = id(stored_item);
        let unnamed = !named.contains(&stored_id);
        if let (true, Some(current)) = (unnamed, items.iter().find(|i| id(i) == stored_id)) {
            let at = previous
                .as_ref()
                .and_then(|p| out.iter().position(|o| &id(o) == p))
                .map_or(0, |i| i + 1);
            out.insert(at, current.clone());
        }
        previous = Some(stored_id);
    }
    // Items neither named nor stored (a patch item the order forgot) go last.
    for item in items {
        if !out.iter().any(|o| id(o) == id(item)) {
            out.push(item.clone());
        }
    }
    out
}

fn strip_directives(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !k.starts_with('$'))
                .map(|(k, v)| (k.clone(), strip_directives(v)))
                .collect::<Map<_, _>>(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip_directives).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_strategic_patch_merges_containers_and_env_by_name() {
        let target = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}]},
            {"name": "b", "image": "b:1"}
        ]}}}});
        let patch = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "env": [{"name": "Y", "value": "2"}]}
        ]}}}});
        let out = strategic(&target, &patch);
        let containers = &out["spec"]["template"]["spec"]["containers"];
        assert_eq!(containers.as_array().map(Vec::len), Some(2));
        assert_eq!(containers[0]["image"], "a:1");
        assert_eq!(
            containers[0]["env"],
            json!([{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}])
        );
    }

    #[test]
    fn a_delete_directive_removes_the_list_item() {
        let target = json!({"spec": {"volumes": [{"name": "a"}, {"name": "b"}]}});
        let out = strategic(
            &target,
            &json!({"spec": {"volumes": [{"name": "a", "$patch": "delete"}]}}),
        );
        assert_eq!(out["spec"]["volumes"], json!([{"name": "b"}]));
    }

    #[test]
    fn pod_and_node_lists_merge_by_the_keys_kube_declares() {
        let cases = [
            (
                vec!["spec", "topologySpreadConstraints"],
                Some("topologyKey"),
            ),
            (vec!["spec", "schedulingGates"], Some("name")),
            (
                vec!["spec", "containers", "resources", "claims"],
                Some("name"),
            ),
            (vec!["status", "addresses"], Some("type")),
            (vec!["spec", "tolerations"], None),
        ];
        for (path, key) in cases {
            assert_eq!(merge_key(&path), key, "{path:?}");
        }
        let node =
            json!({"status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.1"}]}});
        let patch = json!({"status": {"addresses": [{"type": "Hostname", "address": "n1"}]}});
        let out = strategic(&node, &patch);
        assert_eq!(out["status"]["addresses"].as_array().map(Vec::len), Some(2));
    }

    #[test]
    fn a_list_without_a_merge_key_is_replaced_and_null_deletes() {
        let target = json!({"spec": {"args": ["a"], "x": 1}});
        let out = strategic(&target, &json!({"spec": {"args": ["b"], "x": null}}));
        assert_eq!(out, json!({"spec": {"args": ["b"]}}));
    }

    #[test]
    fn finalizers_merge_as_a_set_and_a_delete_from_primitive_list_removes_one() {
        let target = json!({"metadata": {"finalizers": ["a", "b"]}, "spec": {"args": ["x"]}});
        let added = strategic(&target, &json!({"metadata": {"finalizers": ["c", "a"]}}));
        assert_eq!(added["metadata"]["finalizers"], json!(["a", "b", "c"]));
        let removed = strategic(
            &target,
            &json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}),
        );
        assert_eq!(removed["metadata"]["finalizers"], json!(["b"]));
        let replaced = strategic(&target, &json!({"spec": {"args": ["y"]}}));
        assert_eq!(
            replaced["spec"]["args"],
            json!(["y"]),
            "other primitive lists are replaced"
        );
    }

    #[test]
    fn set_element_order_orders_the_merged_list_and_keeps_server_only_items_in_place() {
        let pod = json!({"spec": {"containers": [
            {"name": "a", "image": "a:1"},
            {"name": "sidecar", "image": "s:1"},
            {"name": "b", "image": "b:1"},
        ]}, "metadata": {"finalizers": ["x", "y"]}});
        let patch = json!({
            "spec": {
                "$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
                "containers": [{"name": "b", "image": "b:2"}],
            },
            "metadata": {"$setElementOrder/finalizers": ["y", "x"]},
        });
        let merged = strategic(&pod, &patch);
        assert_eq!(
            merged["spec"]["containers"],
            json!([
                {"name": "b", "image": "b:2"},
                {"name": "a", "image": "a:1"},
                {"name": "sidecar", "image": "s:1"},
            ])
        );
        assert_eq!(merged["metadata"]["finalizers"], json!(["y", "x"]));
    }

    #[test]
    fn retain_keys_drops_the_fields_of_a_union_it_does_not_name() {
        let target = json!({"spec": {"strategy": {"type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": 1}}}});
        let patch = json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}});
        let out = strategic(&target, &patch);
        assert_eq!(out["spec"]["strategy"], json!({"type": "Recreate"}));
        let kept = strategic(
            &target,
            &json!({"spec": {"strategy": {"type": "Recreate"}}}),
        );
        assert!(
            kept["spec"]["strategy"].get("rollingUpdate").is_some(),
            "without it, kept"
        );
    }

    #[test]
    fn custom_resources_do_not_take_strategic_merge_patch() {
        let err = PatchKind::from_content_type("application/strategic-merge-patch+json", false)
            .expect_err("415");
        assert_eq!(err.code, 415);
        assert!(!err.message.contains("strategic"));
        assert_eq!(
            PatchKind::from_content_type("application/merge-patch+json; charset=utf-8", false).ok(),
            Some(PatchKind::Merge)
        );
    }
}
