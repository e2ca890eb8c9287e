//! kube-apiserver's columns for Events (`printEvent`), through either API: Last Seen, Type,
//! Reason, Object, Message (`-o wide` adds Subobject, Source, First Seen, Count, Name). An
//! Event's table has no leading Name column.

use serde_json::{Value, json};

use super::super::columns::{Column, seconds_since, short_age};

/// The columns, in kube-apiserver's order.
pub(super) fn columns() -> Vec<Column> {
    let string = |name: &str, description: &str| Column::new(name, "string", description);
    vec![
        string(
            "Last Seen",
            "The time at which the most recent occurrence of this event was recorded.",
        ),
        string("Type", "Type of this event (Normal, Warning)."),
        string(
            "Reason",
            "The reason for the transition into the object's current status.",
        ),
        string("Object", "The object that this event is about."),
        string("Subobject", "The part of the object this event is about.").wide(),
        string("Source", "The component reporting this event.").wide(),
        string(
            "Message",
            "A human-readable description of the status of this operation.",
        ),
        string(
            "First Seen",
            "The time at which the event was first recorded.",
        )
        .wide(),
        Column::new(
            "Count",
            "integer",
            "The number of times this event has occurred.",
        )
        .wide(),
        string("Name", "The name of the event.").wide(),
    ]
}

/// One Event's cells (core/v1 or events.k8s.io/v1 form).
pub(super) fn cells(object: &Value) -> Vec<Value> {
    let event = crate::events::to_core(object);
    let since = |stamp: &Value| stamp.as_str().and_then(seconds_since).map(short_age);
    let first = since(&event["firstTimestamp"]).or_else(|| since(&event["eventTime"]));
    let mut last = since(&event["lastTimestamp"]).or_else(|| first.clone());
    let mut count = event["count"].as_i64().unwrap_or(0);
    if let Some(series) = event["series"].as_object() {
        last = since(&series["lastObservedTime"]);
        count = series["count"].as_i64().unwrap_or(count);
    } else if count == 0 {
        count = 1;
    }
    let unknown = || "<unknown>".to_owned();
    let involved = &event["involvedObject"];
    let kind = involved["kind"].as_str().unwrap_or_default().to_lowercase();
    let object = match involved["name"].as_str().filter(|n| !n.is_empty()) {
        Some(name) => format!("{kind}/{name}"),
        None => kind,
    };
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    vec![
        json!(last.unwrap_or_else(unknown)),
        json!(text(&event["type"])),
        json!(text(&event["reason"])),
        json!(object),
        json!(text(&involved["fieldPath"])),
        json!(source(&event)),
        json!(text(&event["message"]).trim()),
        json!(first.unwrap_or_else(unknown)),
        json!(count),
        event["metadata"]["name"].clone(),
    ]
}

/// `source.component[, host]`, else `reportingComponent[, reportingInstance]`.
fn source(event: &Value) -> String {
    let pair = |a: &Value, b: &Value| {
        let a = a.as_str().unwrap_or_default();
        match b.as_str().filter(|b| !b.is_empty()) {
            Some(b) => format!("{a}, {b}"),
            None => a.to_owned(),
        }
    };
    if event["source"]["component"]
        .as_str()
        .is_some_and(|c| !c.is_empty())
    {
        pair(&event["source"]["component"], &event["source"]["host"])
    } else {
        pair(&event["reportingComponent"], &event["reportingInstance"])
    }
}
