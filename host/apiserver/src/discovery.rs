//! Discovery: `/version`, `/api`, `/apis`, the resource lists of each group/version, and
//! the minimal OpenAPI documents kubectl asks for.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::registry::Registry;
use crate::status::ApiError;

/// The Kubernetes version the server reports (k8s-openapi's `latest` feature).
pub(crate) const KUBERNETES_MINOR: &str = "37";

/// `/version`.
pub(crate) fn version() -> Value {
    json!({
        "major": "1",
        "minor": KUBERNETES_MINOR,
        "gitVersion": format!("v1.{KUBERNETES_MINOR}.0-wasm-operator"),
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "",
        "goVersion": "",
        "compiler": "rust",
        "platform": format!("{}/{}", std::env::consts::OS, std::env::consts::ARCH),
    })
}

/// `/api`.
pub(crate) fn api_versions() -> Value {
    json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
        {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}
    ]})
}

/// `/apis`: every non-core group and its versions (storage version preferred).
pub(crate) fn api_groups(registry: &Registry) -> Value {
    let mut groups: BTreeMap<&str, (Vec<&str>, Option<&str>)> = BTreeMap::new();
    for rt in registry.all().iter().filter(|rt| !rt.group.is_empty()) {
        let entry = groups.entry(&rt.group).or_default();
        if !entry.0.contains(&rt.version.as_str()) {
            entry.0.push(&rt.version);
        }
        if rt.storage && entry.1.is_none() {
            entry.1 = Some(&rt.version);
        }
    }
    let groups: Vec<Value> = groups
        .into_iter()
        .map(|(group, (versions, preferred))| {
            let gv = |v: &str| json!({"groupVersion": format!("{group}/{v}"), "version": v});
            let preferred = preferred.or(versions.first().copied()).unwrap_or("v1");
            json!({
                "name": group,
                "versions": versions.iter().map(|v| gv(v)).collect::<Vec<_>>(),
                "preferredVersion": gv(preferred),
            })
        })
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/api/v1`, `/apis/{group}/{version}`: the resources of one group/version.
pub(crate) fn resources(
    registry: &Registry,
    group: &str,
    version: &str,
) -> Result<Value, ApiError> {
    let types: Vec<_> = registry
        .all()
        .iter()
        .filter(|rt| rt.group == group && rt.version == version)
        .collect();
    if types.is_empty() {
        return Err(ApiError::no_route(&format!("/apis/{group}/{version}")));
    }
    let mut resources = Vec::new();
    for rt in types {
        resources.push(json!({
            "name": rt.plural,
            "singularName": rt.singular,
            "namespaced": rt.namespaced,
            "kind": rt.kind,
            "verbs": rt.verbs(),
            "shortNames": rt.short_names,
            "storageVersionHash": "",
        }));
        if rt.status {
            resources.push(json!({
                "name": format!("{}/status", rt.plural),
                "singularName": "",
                "namespaced": rt.namespaced,
                "kind": rt.kind,
                "verbs": ["get", "patch", "update"],
            }));
        }
    }
    let group_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    Ok(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources}),
    )
}

/// `/openapi/v2`: an empty but valid document (kubectl then validates on the server).
pub(crate) fn openapi_v2() -> Value {
    json!({"swagger": "2.0", "info": {"title": "wasm-operator embedded API server", "version": "v1"}, "paths": {}, "definitions": {}})
}

/// `/openapi/v3`: one document per served group/version.
pub(crate) fn openapi_v3(registry: &Registry) -> Value {
    let mut paths = serde_json::Map::new();
    for rt in registry.all() {
        let gv = group_version_path(&rt.group, &rt.version);
        paths.insert(
            gv.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{gv}")}),
        );
    }
    json!({"paths": paths})
}

fn group_version_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `/openapi/v3/api/v1`, `/openapi/v3/apis/{group}/{version}`: the item paths of each kind
/// with their PATCH operation, which takes `fieldValidation` — how kubectl learns that the
/// server validates fields itself. Schemas are left out (kubectl then validates on the
/// server).
pub(crate) fn openapi_v3_group(
    registry: &Registry,
    group: &str,
    version: &str,
) -> Result<Value, ApiError> {
    let types: Vec<_> = registry
        .all()
        .iter()
        .filter(|rt| rt.group == group && rt.version == version)
        .collect();
    if types.is_empty() {
        return Err(ApiError::no_route(&format!(
            "/openapi/v3/{}",
            group_version_path(group, version)
        )));
    }
    let mut paths = serde_json::Map::new();
    for rt in types {
        let prefix = format!("/{}", group_version_path(group, version));
        let item = if rt.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}/{{name}}", rt.plural)
        } else {
            format!("{prefix}/{}/{{name}}", rt.plural)
        };
        let param = |name: &str| json!({"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": true}});
        paths.insert(
            item,
            json!({"patch": {
                "operationId": format!("patch{}", rt.kind),
                "x-kubernetes-action": "patch",
                "x-kubernetes-group-version-kind": {"group": rt.group, "version": rt.version, "kind": rt.kind},
                "parameters": [param("dryRun"), param("fieldManager"), param("fieldValidation"), param("force")],
                "responses": {"200": {"description": "OK"}},
            }}),
        );
    }
    Ok(
        json!({"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": format!("v1.{KUBERNETES_MINOR}.0")}, "paths": paths, "components": {"schemas": {}}}),
    )
}
