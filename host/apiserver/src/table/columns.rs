//! Column definitions and cells: a CRD version's printer columns (kube-apiserver's CRD
//! TableConvertor), the default table of kinds without printers, and the age formats.
//!
//! | column type | cell from the first value the JSONPath finds                         |
//! |-------------|----------------------------------------------------------------------|
//! | `string`    | a string as is; a number or boolean as text; a map or list as JSON   |
//! | `integer`   | an integer; a float truncated; anything else null                    |
//! | `number`    | a number as a float; anything else null                              |
//! | `boolean`   | a boolean; anything else null                                        |
//! | `date`      | an RFC 3339 string as a short age (`5m`); unparseable: `<invalid>`    |
//! | any         | nothing found, or a null: a null cell (kubectl prints `<none>`)      |
//!
//! Several values found: only the first is shown, as kube-apiserver does (it does not join
//! them).

use serde_json::{Value, json};

use super::jsonpath::{JsonPath, JsonPathError};

/// ObjectMeta's `name` description, which kube-apiserver gives every `Name` column.
pub(crate) const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

/// ObjectMeta's `creationTimestamp` description, given every `Age`/`Created At` column.
pub(crate) const CREATED_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// One `columnDefinitions` entry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Column {
    pub name: String,
    pub kind: String,
    pub format: String,
    pub description: String,
    pub priority: i64,
}

impl Column {
    /// A column with no format and priority 0.
    pub(crate) fn new(name: &str, kind: &str, description: &str) -> Self {
        Self {
            name: name.into(),
            kind: kind.into(),
            format: String::new(),
            description: description.into(),
            priority: 0,
        }
    }

    /// The `Name` column every table starts with.
    pub(crate) fn name() -> Self {
        Self {
            format: "name".into(),
            ..Self::new("Name", "string", NAME_DESCRIPTION)
        }
    }

    /// The same column shown only by `-o wide`.
    pub(crate) fn wide(self) -> Self {
        Self {
            priority: 1,
            ..self
        }
    }

    /// The `TableColumnDefinition` JSON.
    pub(crate) fn definition(&self) -> Value {
        json!({
            "name": self.name,
            "type": self.kind,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        })
    }
}

/// A CRD version's columns: `Name`, then its `additionalPrinterColumns` (or, when it has
/// none, kube-apiserver's default `Age` from `.metadata.creationTimestamp`), each with its
/// parsed path.
///
/// DECISION: as kube-apiserver's TableConvertor, a column whose path does not parse ends
/// the list there (the columns before it are served) and the error is logged; CRD
/// validation, like kube-apiserver's, only checks that the path starts with `.`.
pub(crate) fn crd_columns(printer_columns: &[Value]) -> Vec<(Column, Option<JsonPath>)> {
    let default = [
        json!({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp",
        "description": CREATED_DESCRIPTION}),
    ];
    let defined = if printer_columns.is_empty() {
        &default[..]
    } else {
        printer_columns
    };
    let mut columns = vec![(Column::name(), None)];
    for definition in defined {
        let text = |key: &str| definition[key].as_str().unwrap_or_default().to_owned();
        let path = text("jsonPath");
        let parsed = match JsonPath::parse(&path) {
            Ok(parsed) => parsed,
            Err(error) => {
                log_unparsed(&error);
                break;
            }
        };
        let description = match text("description") {
            d if d.is_empty() => {
                format!("Custom resource definition column (in JSONPath format): {path}")
            }
            d => d,
        };
        let column = Column {
            name: text("name"),
            kind: text("type"),
            format: text("format"),
            description,
            priority: definition["priority"].as_i64().unwrap_or(0),
        };
        columns.push((column, Some(parsed)));
    }
    columns
}

fn log_unparsed(error: &JsonPathError) {
    tracing::warn!(%error, "a CRD printer column does not parse; the columns before it are served");
}

/// The cells of `object` for CRD `columns`.
pub(crate) fn crd_cells(columns: &[(Column, Option<JsonPath>)], object: &Value) -> Vec<Value> {
    columns
        .iter()
        .map(|(column, path)| match path {
            None => object["metadata"]["name"].clone(),
            Some(path) => path
                .find(object)
                .first()
                .map_or(Value::Null, |value| cell(&column.kind, value)),
        })
        .collect()
}

/// The cell of a value found for a column of `kind`, as the table above says.
pub(crate) fn cell(kind: &str, value: &Value) -> Value {
    match (kind, value) {
        (_, Value::Null) => Value::Null,
        ("string", Value::String(s)) => json!(s),
        ("string", Value::Number(n)) => json!(n.to_string()),
        ("string", Value::Bool(b)) => json!(b.to_string()),
        ("string", other) => json!(other.to_string()),
        ("integer", Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f as i64))
            .map_or(Value::Null, |i| json!(i)),
        ("number", Value::Number(n)) => n.as_f64().map_or(Value::Null, |f| json!(f)),
        ("boolean", Value::Bool(b)) => json!(b),
        ("date", Value::String(s)) => json!(match seconds_since(s) {
            Some(seconds) => short_age(seconds),
            None => "<invalid>".to_owned(),
        }),
        _ => Value::Null,
    }
}

/// The default table of a kind without printers: `Name` and `Created At` (RFC 3339).
pub(crate) fn default_columns() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new("Created At", "date", CREATED_DESCRIPTION),
    ]
}

/// The default table's cells.
pub(crate) fn default_cells(object: &Value) -> Vec<Value> {
    let created = object["metadata"]["creationTimestamp"]
        .as_str()
        .unwrap_or("0001-01-01T00:00:00Z");
    vec![object["metadata"]["name"].clone(), json!(created)]
}

/// Seconds from `timestamp` (RFC 3339) to now; `None` when it does not parse.
pub(crate) fn seconds_since(timestamp: &str) -> Option<i64> {
    let then: k8s_openapi::jiff::Timestamp = timestamp.parse().ok()?;
    Some(k8s_openapi::jiff::Timestamp::now().as_second() - then.as_second())
}

/// `Age` of a built-in kind's object (kubectl's `translateTimestampSince`): a human age
/// (`3m20s`), `<unknown>` without a creation timestamp.
pub(crate) fn age(object: &Value) -> Value {
    match object["metadata"]["creationTimestamp"]
        .as_str()
        .and_then(seconds_since)
    {
        Some(seconds) => json!(human_age(seconds)),
        None => json!("<unknown>"),
    }
}

/// apimachinery's `ShortHumanDuration`: one unit (`45s`, `5m`, `3h`, `2d`, `1y`).
pub(crate) fn short_age(seconds: i64) -> String {
    match seconds {
        s if s < -1 => "<invalid>".into(),
        s if s < 0 => "0s".into(),
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3600),
        s if s < 86_400 * 365 => format!("{}d", s / 86_400),
        s => format!("{}y", s / 86_400 / 365),
    }
}

/// apimachinery's `HumanDuration`: two or three significant figures (`90s`, `3m20s`,
/// `5h10m`, `3d4h`, `2y30d`).
pub(crate) fn human_age(seconds: i64) -> String {
    let (minutes, hours) = (seconds / 60, seconds / 3600);
    let with = |big: i64, big_unit: &str, small: i64, small_unit: &str| {
        if small == 0 {
            format!("{big}{big_unit}")
        } else {
            format!("{big}{big_unit}{small}{small_unit}")
        }
    };
    match seconds {
        s if s < -1 => "<invalid>".into(),
        s if s < 0 => "0s".into(),
        s if s < 120 => format!("{s}s"),
        _ if minutes < 10 => with(minutes, "m", seconds % 60, "s"),
        _ if minutes < 180 => format!("{minutes}m"),
        _ if hours < 8 => with(hours, "h", minutes % 60, "m"),
        _ if hours < 48 => format!("{hours}h"),
        _ if hours < 24 * 8 => with(hours / 24, "d", hours % 24, "h"),
        _ if hours < 24 * 365 * 2 => format!("{}d", hours / 24),
        _ if hours < 24 * 365 * 8 => with(hours / 24 / 365, "y", (hours / 24) % 365, "d"),
        _ => format!("{}y", hours / 24 / 365),
    }
}

#[cfg(test)]
#[path = "columns_tests.rs"]
mod tests;
