//! The cells of the workload kinds: Pod, Deployment, Job (kube-apiserver's `printPod`,
//! `printDeployment`, `printJob`).

use serde_json::{Value, json};

use super::int;
use crate::table::columns::{age, human_age, seconds_since};

/// A LabelSelector as a selector string (`app=web,tier in (a,b)`), `<none>` when empty.
fn selector(selector: &Value) -> String {
    let mut parts: Vec<(String, String)> = selector["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), format!("{k}={}", v.as_str().unwrap_or_default())))
        .collect();
    for expression in selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let key = expression["key"].as_str().unwrap_or_default().to_owned();
        let mut values: Vec<&str> = expression["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        values.sort_unstable();
        let text = match expression["operator"].as_str().unwrap_or_default() {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.clone(),
            _ => format!("!{key}"),
        };
        parts.push((key, text));
    }
    parts.sort();
    if parts.is_empty() {
        "<none>".into()
    } else {
        parts
            .into_iter()
            .map(|(_, t)| t)
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// Containers, Images and Selector of a pod-template workload.
fn template_cells(object: &Value) -> [Value; 3] {
    let containers = object["spec"]["template"]["spec"]["containers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let join = |key: &str| {
        containers
            .iter()
            .map(|c| c[key].as_str().unwrap_or_default())
            .collect::<Vec<_>>()
            .join(",")
    };
    [
        json!(join("name")),
        json!(join("image")),
        json!(selector(&object["spec"]["selector"])),
    ]
}

pub(super) fn deployment(o: &Value) -> Vec<Value> {
    let status = &o["status"];
    let desired = o["spec"]["replicas"].as_i64().unwrap_or(1);
    let mut cells = vec![
        json!(format!("{}/{desired}", int(&status["readyReplicas"]))),
        json!(int(&status["updatedReplicas"])),
        json!(int(&status["availableReplicas"])),
        age(o),
    ];
    cells.extend(template_cells(o));
    cells
}

pub(super) fn job(o: &Value) -> Vec<Value> {
    let status = &o["status"];
    let has = |kind: &str| {
        status["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == kind && c["status"] == "True")
    };
    let state = if has("Complete") {
        "Complete"
    } else if has("Failed") {
        "Failed"
    } else if o["metadata"].get("deletionTimestamp").is_some() {
        "Terminating"
    } else if has("Suspended") {
        "Suspended"
    } else if has("FailureTarget") {
        "FailureTarget"
    } else if has("SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    };
    let succeeded = int(&status["succeeded"]);
    let completions = match o["spec"]["completions"].as_i64() {
        Some(wanted) => format!("{succeeded}/{wanted}"),
        None => match o["spec"]["parallelism"].as_i64().unwrap_or(1) {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    };
    let since = |key: &str| status[key].as_str().and_then(seconds_since);
    let duration = match (since("startTime"), since("completionTime")) {
        (Some(start), Some(end)) => human_age(start - end),
        (Some(start), None) => human_age(start),
        _ => String::new(),
    };
    let mut cells = vec![json!(state), json!(completions), json!(duration), age(o)];
    cells.extend(template_cells(o));
    cells
}

pub(super) fn pod(o: &Value) -> Vec<Value> {
    let status = &o["status"];
    let total = o["spec"]["containers"].as_array().map_or(0, Vec::len);
    let phase = status["phase"].as_str().unwrap_or_default();
    let mut reason = status["reason"]
        .as_str()
        .filter(|r| !r.is_empty())
        .unwrap_or(phase)
        .to_owned();
    let (mut ready, mut restarts, mut running) = (0, 0, false);
    let statuses = status["containerStatuses"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for container in statuses.iter().rev() {
        restarts += int(&container["restartCount"]);
        let state = &container["state"];
        if let Some(r) = state["waiting"]["reason"]
            .as_str()
            .filter(|r| !r.is_empty())
        {
            reason = r.into();
        } else if let Some(r) = state["terminated"]["reason"]
            .as_str()
            .filter(|r| !r.is_empty())
        {
            reason = r.into();
        } else if state.get("terminated").is_some() {
            reason = match int(&state["terminated"]["signal"]) {
                0 => format!("ExitCode:{}", int(&state["terminated"]["exitCode"])),
                signal => format!("Signal:{signal}"),
            };
        } else if container["ready"] == json!(true) && state.get("running").is_some() {
            running = true;
            ready += 1;
        }
    }
    if reason == "Completed" && running {
        reason = "Running".into();
    }
    if o["metadata"].get("deletionTimestamp").is_some() && !matches!(phase, "Succeeded" | "Failed")
    {
        reason = "Terminating".into();
    }
    let or_none = |v: &Value| json!(v.as_str().filter(|s| !s.is_empty()).unwrap_or("<none>"));
    let gates = o["spec"]["readinessGates"].as_array().map_or(0, Vec::len);
    let gates = if gates == 0 {
        json!("<none>")
    } else {
        let met = o["spec"]["readinessGates"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|g| {
                status["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| c["type"] == g["conditionType"] && c["status"] == "True")
            })
            .count();
        json!(format!("{met}/{gates}"))
    };
    vec![
        json!(format!("{ready}/{total}")),
        json!(reason),
        json!(restarts),
        age(o),
        or_none(&status["podIP"]),
        or_none(&o["spec"]["nodeName"]),
        or_none(&status["nominatedNodeName"]),
        gates,
    ]
}
