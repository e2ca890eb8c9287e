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

/// `/openapi/v2`: the Swagger 2.0 document of every served kind — the v3 group documents
/// merged, their components as `definitions` (references rewritten, `nullable` dropped as
/// kube-apiserver drops it from v2) and their PATCH operations with v2 parameters.
pub(crate) fn openapi_v2(registry: &Registry) -> Value {
    let mut group_versions: Vec<(String, String)> = registry
        .all()
        .iter()
        .map(|rt| (rt.group.clone(), rt.version.clone()))
        .collect();
    group_versions.sort();
    group_versions.dedup();
    let mut paths = serde_json::Map::new();
    let mut definitions = serde_json::Map::new();
    for (group, version) in group_versions {
        let Ok(document) = openapi_v3_group(registry, &group, &version) else {
            continue;
        };
        for (path, item) in document["paths"].as_object().into_iter().flatten() {
            let mut item = item.clone();
            for parameter in item["patch"]["parameters"]
                .as_array_mut()
                .into_iter()
                .flatten()
            {
                if let Some(object) = parameter.as_object_mut() {
                    object.remove("schema");
                    object.insert("type".into(), json!("string"));
                    object.insert("uniqueItems".into(), json!(true));
                }
            }
            paths.insert(path.clone(), item);
        }
        for (name, schema) in document["components"]["schemas"]
            .as_object()
            .into_iter()
            .flatten()
        {
            definitions.insert(name.clone(), to_swagger_v2(schema));
        }
    }
    json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": format!("v1.{KUBERNETES_MINOR}.0")},
        "paths": paths,
        "definitions": definitions,
    })
}

/// A v3 component schema as a v2 definition.
fn to_swagger_v2(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "nullable")
                .map(|(k, v)| {
                    let v = match (k.as_str(), v) {
                        ("$ref", Value::String(r)) => {
                            Value::String(r.replace("#/components/schemas/", "#/definitions/"))
                        }
                        _ => to_swagger_v2(v),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(to_swagger_v2).collect()),
        other => other.clone(),
    }
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
/// server validates fields itself — and the schema of each custom resource (its CRD's, with
/// `x-kubernetes-group-version-kind`, `apiVersion`, `kind` and `metadata`) and of each
/// built-in kind (k8s-openapi's), which `kubectl explain` reads.
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
    let mut schemas = serde_json::Map::new();
    for rt in &types {
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
        match &rt.schema {
            Some(schema) => {
                schemas.insert(
                    schema_name(&rt.group, &rt.version, &rt.kind),
                    custom_resource_schema(rt, schema),
                );
            }
            None => builtin_schemas(rt, &mut schemas),
        }
    }
    // The ObjectMeta every custom resource's `metadata` refers to, generated once.
    if types.iter().any(|rt| rt.schema.is_some()) {
        schemas.extend(
            components_of::<k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta>().1,
        );
    }
    Ok(
        json!({"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": format!("v1.{KUBERNETES_MINOR}.0")}, "paths": paths, "components": {"schemas": schemas}}),
    )
}

/// The schema of built-in `rt` and those it refers to (k8s-openapi's, which are
/// kube-apiserver's), the kind's own with `x-kubernetes-group-version-kind`.
fn builtin_schemas(
    rt: &crate::registry::ResourceType,
    schemas: &mut serde_json::Map<String, Value>,
) {
    macro_rules! components {
        ($ty:ty) => {
            Some(components_of::<$ty>())
        };
    }
    let Some((name, definitions)) =
        crate::builtin_fields::with_builtin_type!(rt.group.as_str(), rt.kind.as_str(), components)
    else {
        return;
    };
    schemas.extend(definitions);
    if let Some(kind) = schemas.get_mut(&name).and_then(Value::as_object_mut) {
        kind.insert(
            "x-kubernetes-group-version-kind".into(),
            group_version_kind(rt),
        );
    }
}

/// The component name of `T`'s schema and the components it needs, its own among them.
fn components_of<T: schemars::JsonSchema>() -> (String, serde_json::Map<String, Value>) {
    let mut generator = schemars::generate::SchemaSettings::openapi3().into_generator();
    generator.subschema_for::<T>();
    (
        T::schema_name().into_owned(),
        generator.take_definitions(true),
    )
}

/// `x-kubernetes-group-version-kind` of a kind's schema.
fn group_version_kind(rt: &crate::registry::ResourceType) -> Value {
    json!([{"group": rt.group, "version": rt.version, "kind": rt.kind}])
}

/// The component name of ObjectMeta's schema.
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// kube-apiserver's component name of a custom resource: its group reversed, the version,
/// the kind (`io.c5c3.openstack.keystone.v1alpha1.Keystone`).
fn schema_name(group: &str, version: &str, kind: &str) -> String {
    let reversed: Vec<&str> = group.split('.').rev().collect();
    format!("{}.{version}.{kind}", reversed.join("."))
}

/// A CRD version's schema as the OpenAPI document publishes it.
fn custom_resource_schema(rt: &crate::registry::ResourceType, schema: &Value) -> Value {
    let mut published = schema.clone();
    if let Some(object) = published.as_object_mut() {
        object.insert(
            "x-kubernetes-group-version-kind".into(),
            group_version_kind(rt),
        );
        let properties = object.entry("properties").or_insert_with(|| json!({}));
        if let Some(properties) = properties.as_object_mut() {
            properties.insert("apiVersion".into(), json!({"type": "string",
                "description": "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values."}));
            properties.insert("kind".into(), json!({"type": "string",
                "description": "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase."}));
            properties.insert(
                "metadata".into(),
                json!({"allOf": [{"$ref": format!("#/components/schemas/{OBJECT_META}")}],
                "description": "Standard object's metadata."}),
            );
        }
    }
    published
}
