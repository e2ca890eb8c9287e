//! The server's side of managedFields: which merge schema a kind has, and the [`apply`]
//! engine's results as API answers.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use serde_json::Value;

use crate::apply::{
    self as ssa, ApplyError, BuiltinSchema, DefaultSchema, ListType, MergeSchema, PathElement,
};
use crate::objects::{meta_str, now};
use crate::registry::ResourceType;
use crate::schema;
use crate::status::{ApiError, Result};

/// A custom resource's merge schema: list and map types from its CRD's OpenAPI schema.
struct CrdSchema<'a> {
    openapi: &'a Value,
    status: bool,
}

fn schema_path(path: &[PathElement]) -> Vec<schema::PathElement<'_>> {
    path.iter()
        .map(|e| match e {
            PathElement::Field(name) => schema::PathElement::Field(name),
            // Any item of a list: the schema is the same for every item.
            _ => schema::PathElement::Index(0),
        })
        .collect()
}

impl MergeSchema for CrdSchema<'_> {
    fn list_type(&self, path: &[PathElement]) -> ListType {
        let fallback = DefaultSchema {
            status_subresource: self.status,
        }
        .list_type(path);
        match schema::list_type_at(self.openapi, &schema_path(path)) {
            Some(schema::ListType::Set) => ListType::Set,
            Some(schema::ListType::Map(keys)) => ListType::Map(keys),
            Some(schema::ListType::Atomic) | None => fallback,
        }
    }

    fn map_is_atomic(&self, path: &[PathElement]) -> bool {
        schema::map_is_atomic(self.openapi, &schema_path(path))
    }

    fn is_map_key(&self, path: &[PathElement]) -> bool {
        schema::is_map_key(self.openapi, &schema_path(path))
    }

    fn status_is_subresource(&self) -> bool {
        self.status
    }
}

/// A built-in kind's merge schema, with its own status subresource setting.
struct Builtin {
    inner: Arc<BuiltinSchema>,
    status: bool,
}

/// The merge schema of built-in `kind`, built once per kind.
fn builtin_schema(kind: &str) -> Arc<BuiltinSchema> {
    static SCHEMAS: LazyLock<Mutex<HashMap<String, Arc<BuiltinSchema>>>> =
        LazyLock::new(Mutex::default);
    let mut schemas = SCHEMAS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    schemas
        .entry(kind.to_owned())
        .or_insert_with(|| Arc::new(BuiltinSchema::new(kind)))
        .clone()
}

impl MergeSchema for Builtin {
    fn list_type(&self, path: &[PathElement]) -> ListType {
        self.inner.list_type(path)
    }

    fn map_is_atomic(&self, path: &[PathElement]) -> bool {
        self.inner.map_is_atomic(path)
    }

    fn list_key_default(&self, path: &[PathElement], key: &str) -> Option<Value> {
        self.inner.list_key_default(path, key)
    }

    fn status_is_subresource(&self) -> bool {
        self.status
    }
}

fn merge_schema(rt: &ResourceType) -> Box<dyn MergeSchema + '_> {
    match &rt.schema {
        Some(openapi) => Box::new(CrdSchema {
            openapi,
            status: rt.status,
        }),
        None => Box::new(Builtin {
            inner: builtin_schema(&rt.kind),
            status: rt.status,
        }),
    }
}

/// `new` with the managedFields of a non-apply write by `manager`.
pub(crate) fn on_update(
    old: Option<&Value>,
    new: Value,
    manager: &str,
    sub: Option<&str>,
    rt: &ResourceType,
) -> Result<Value> {
    Ok(ssa::update(
        old,
        &new,
        manager,
        &now(),
        sub,
        merge_schema(rt).as_ref(),
    ))
}

/// Server-side applies `applied` onto `live` (none: a create); the object to store.
pub(crate) fn apply(
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    force: bool,
    sub: Option<&str>,
    rt: &ResourceType,
    name: &str,
) -> Result<Value> {
    if let Some(openapi) = &rt.schema {
        let undeclared = crate::crd::undeclared(openapi, applied);
        if !undeclared.is_empty() {
            // kube-apiserver answers this with a 500 (kubernetes/kubernetes#139253).
            let namespace = meta_str(applied, "namespace")
                .or(live.and_then(|l| meta_str(l, "namespace")))
                .unwrap_or_default();
            let errors: Vec<String> = undeclared
                .iter()
                .map(|p| format!(".{p}: field not declared in schema"))
                .collect();
            return Err(ApiError::internal(format!(
                "failed to create typed patch object ({namespace}/{name}; {}/{}, Kind={}): {}",
                rt.group,
                rt.version,
                rt.kind,
                errors.join("\n")
            )));
        }
    }
    match ssa::apply(
        live,
        applied,
        manager,
        force,
        merge_schema(rt).as_ref(),
        sub,
        &now(),
    ) {
        Ok(result) => Ok(result.object),
        Err(ApplyError::Conflicts(conflicts)) => {
            let causes = conflicts
                .causes()
                .into_iter()
                .filter_map(|c| serde_json::to_value(c).ok())
                .collect();
            Err(ApiError::apply_conflict(
                rt,
                name,
                ApplyError::Conflicts(conflicts).to_string(),
                causes,
            ))
        }
        Err(e) => Err(ApiError::bad_request(e.to_string())),
    }
}
