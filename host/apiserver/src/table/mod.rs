//! `meta.k8s.io` Tables: what GET and LIST answer when the Accept header asks for one
//! (`kubectl get` does), so kubectl prints a CRD's printer columns and the built-ins' columns.
//!
//! | Accept (first clause the server can serve decides)             | answer                  |
//! |----------------------------------------------------------------|-------------------------|
//! | `…;as=Table;g=meta.k8s.io;v=v1` (or `v=v1beta1`)               | a Table of that version |
//! | `…;as=Table` of another group or version                       | skipped (next clause)   |
//! | anything else, or no Accept                                    | the object or list      |
//! | only Table clauses the server cannot serve                     | 406 NotAcceptable       |
//!
//! | `includeObject` | each row's `object`                                            |
//! |-----------------|----------------------------------------------------------------|
//! | `Metadata`, none| `PartialObjectMetadata` (the negotiated version) with metadata |
//! | `Object`        | the whole object                                               |
//! | `None`          | `null`                                                         |
//! | other           | 400 BadRequest, kube-apiserver's message                       |
//!
//! The Table's `metadata` carries the list's `resourceVersion`, `continue` and
//! `remainingItemCount` (a GET: the object's `resourceVersion`). Columns: a CRD version's
//! [`columns::crd_columns`]; a built-in kind's [`builtin::printer`], else
//! [`columns::default_columns`].
//!
//! A watch asking for a Table gets each event's object as a one-row Table
//! ([`of_event`]), so `kubectl get -w` prints rows.
//!
//! DECISION: create/update/patch/delete answers ignore `as=Table` and return the object
//! (kube-apiserver would convert them too; no client asks); an `as=PartialObjectMetadata`
//! or `as=PartialObjectMetadataList` clause gets the whole object or list, as before
//! (kube-apiserver trims them to metadata; clients read the metadata either way).

mod builtin;
mod columns;
mod jsonpath;

use axum::http::HeaderMap;
use serde_json::{Value, json};

use crate::registry::ResourceType;
use crate::route::Params;
use crate::status::{ApiError, Result};

/// A request for a Table: its `meta.k8s.io` version and what each row carries.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TableRequest {
    /// `meta.k8s.io/v1` or `meta.k8s.io/v1beta1`.
    pub api_version: &'static str,
    include: Include,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Include {
    None,
    Metadata,
    Object,
}

/// The media types a 406 names.
const ACCEPTED: &str = "application/json, application/json;as=Table;v=v1;g=meta.k8s.io, application/json;as=Table;v=v1beta1;g=meta.k8s.io";

/// Reads the Accept header (and `includeObject`) of a GET: `Some` when it asks for a Table
/// the server serves, as the table above says.
pub(crate) fn negotiate(headers: &HeaderMap, params: &Params) -> Result<Option<TableRequest>> {
    let accept = headers
        .get_all("accept")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect::<Vec<_>>()
        .join(",");
    let mut clauses = accept.split(',').map(str::trim).filter(|c| !c.is_empty());
    let mut seen = false;
    let api_version = loop {
        let Some(clause) = clauses.next() else {
            if seen {
                return Err(ApiError::not_acceptable(format!(
                    "only the following media types are accepted: {ACCEPTED}"
                )));
            }
            return Ok(None);
        };
        seen = true;
        let param = |key: &str| {
            clause.split(';').skip(1).find_map(|p| {
                let (k, v) = p.split_once('=')?;
                (k.trim() == key).then(|| v.trim())
            })
        };
        if param("as") != Some("Table") {
            return Ok(None);
        }
        match (param("g"), param("v")) {
            (Some("meta.k8s.io"), Some("v1")) => break "meta.k8s.io/v1",
            (Some("meta.k8s.io"), Some("v1beta1")) => break "meta.k8s.io/v1beta1",
            _ => continue,
        }
    };
    let include = match params.get("includeObject") {
        None | Some("Metadata") => Include::Metadata,
        Some("Object") => Include::Object,
        Some("None") => Include::None,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "Unable to convert to Table as requested: includeObject: Invalid value: \"{other}\": must be 'Metadata', 'Object', 'None', or empty"
            )));
        }
    };
    Ok(Some(TableRequest {
        api_version,
        include,
    }))
}

/// A watch event whose object becomes a one-row Table (an ERROR's Status stays as is);
/// without `headers` its `columnDefinitions` is null, as kube-apiserver sends every event
/// after the first.
pub(crate) fn of_event(
    rt: &ResourceType,
    event: Value,
    request: &TableRequest,
    headers: bool,
) -> Value {
    if event["type"] == "ERROR" {
        return event;
    }
    let mut table = of_object(rt, &event["object"], request);
    if !headers {
        table["columnDefinitions"] = Value::Null;
    }
    json!({"type": event["type"], "object": table})
}

/// The Table of a list answer (`items`, `metadata`).
pub(crate) fn of_list(rt: &ResourceType, list: &Value, request: &TableRequest) -> Value {
    let items = list["items"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let mut metadata = json!({});
    for key in ["resourceVersion", "continue", "remainingItemCount"] {
        if let Some(v) = list["metadata"].get(key) {
            metadata[key] = v.clone();
        }
    }
    table(rt, items, metadata, request)
}

/// The Table of one object.
pub(crate) fn of_object(rt: &ResourceType, object: &Value, request: &TableRequest) -> Value {
    let metadata = json!({"resourceVersion": object["metadata"]["resourceVersion"]});
    table(rt, std::slice::from_ref(object), metadata, request)
}

fn table(rt: &ResourceType, items: &[Value], metadata: Value, request: &TableRequest) -> Value {
    let (definitions, cells): (Vec<Value>, Vec<Vec<Value>>) = if rt.schema.is_some() {
        let columns = columns::crd_columns(&rt.printer_columns);
        (
            columns.iter().map(|(c, _)| c.definition()).collect(),
            items
                .iter()
                .map(|o| columns::crd_cells(&columns, o))
                .collect(),
        )
    } else if let Some(printer) = builtin::printer(&rt.group, &rt.kind) {
        (
            printer
                .columns
                .iter()
                .map(columns::Column::definition)
                .collect(),
            items.iter().map(|o| builtin::row(&printer, o)).collect(),
        )
    } else {
        (
            columns::default_columns()
                .iter()
                .map(columns::Column::definition)
                .collect(),
            items.iter().map(columns::default_cells).collect(),
        )
    };
    let rows: Vec<Value> = items
        .iter()
        .zip(cells)
        .map(|(object, cells)| json!({"cells": cells, "object": row_object(object, request)}))
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": request.api_version,
        "metadata": metadata,
        "columnDefinitions": definitions,
        "rows": rows,
    })
}

fn row_object(object: &Value, request: &TableRequest) -> Value {
    match request.include {
        Include::None => Value::Null,
        Include::Object => object.clone(),
        Include::Metadata => json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": request.api_version,
            "metadata": object["metadata"],
        }),
    }
}

/// The problems of a CRD version's `additionalPrinterColumns` as kube-apiserver's
/// `ValidateCustomResourceColumnDefinition` reports them: `(field, error)` pairs, the field
/// under `path` (e.g. `spec.versions[0].additionalPrinterColumns`).
pub(crate) fn column_errors(columns: &[Value], path: &str) -> Vec<(String, String)> {
    const TYPES: &str = "boolean,date,integer,number,string";
    const FORMATS: &str = "byte,date,date-time,double,float,int32,int64,password";
    let mut errors = Vec::new();
    for (i, column) in columns.iter().enumerate() {
        let field = |name: &str| format!("{path}[{i}].{name}");
        let text = |key: &str| column[key].as_str().unwrap_or_default();
        if text("name").is_empty() {
            errors.push((field("name"), "Required value".into()));
        }
        match text("type") {
            "" => errors.push((
                field("type"),
                format!("Required value: must be one of {TYPES}"),
            )),
            t if !TYPES.split(',').any(|x| x == t) => errors.push((
                field("type"),
                format!("Invalid value: \"{t}\": must be one of {TYPES}"),
            )),
            _ => {}
        }
        match text("format") {
            "" => {}
            f if !FORMATS.split(',').any(|x| x == f) => errors.push((
                field("format"),
                format!("Invalid value: \"{f}\": must be one of {FORMATS}"),
            )),
            _ => {}
        }
        match text("jsonPath") {
            "" => errors.push((field("JSONPath"), "Required value".into())),
            p if !p.starts_with('.') => errors.push((
                field("JSONPath"),
                format!("Invalid value: \"{p}\": must be a simple json path starting with ."),
            )),
            _ => {}
        }
    }
    errors
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
