//! The columns kube-apiserver prints for the built-in kinds users look at most (its
//! `pkg/printers/internalversion`); every other built-in kind gets the default table
//! (`Name`, `Created At`).
//!
//! | kind       | columns (`-o wide` adds)                                                  |
//! |------------|---------------------------------------------------------------------------|
//! | Namespace  | Name, Status, Age                                                         |
//! | ConfigMap  | Name, Data, Age                                                           |
//! | Secret     | Name, Type, Data, Age                                                     |
//! | Service    | Name, Type, Cluster-IP, External-IP, Port(s), Age (Selector)              |
//! | Pod        | Name, Ready, Status, Restarts, Age (IP, Node, Nominated Node, Readiness Gates) |
//! | Deployment | Name, Ready, Up-to-date, Available, Age (Containers, Images, Selector)     |
//! | Job        | Name, Status, Completions, Duration, Age (Containers, Images, Selector)   |
//! | Event      | Last Seen, Type, Reason, Object, Message (Subobject, Source, First Seen, Count, Name) — no leading Name |
//!
//! DECISION: the descriptions of the kind-specific columns are short (kubectl never shows
//! them); `Name` and `Age` carry ObjectMeta's, as kube-apiserver's do. A Pod's Restarts is
//! the plain count (kube-apiserver adds "(5m ago)" after a restart).

use serde_json::{Value, json};

mod events;
mod workloads;

use super::columns::{CREATED_DESCRIPTION, Column, age};
use workloads::{deployment, job, pod};

/// The cells after `Name` of one object (all of them for a printer without it).
type Cells = fn(&Value) -> Vec<Value>;

/// A built-in kind's columns and how a row's cells are made.
pub(crate) struct Printer {
    pub columns: Vec<Column>,
    pub cells: Cells,
    /// Whether the row starts with the object's name (every kind but Event).
    pub name_first: bool,
}

/// The printer of `group`/`kind`, if it has its own columns.
pub(crate) fn printer(group: &str, kind: &str) -> Option<Printer> {
    let string = |name: &str, description: &str| Column::new(name, "string", description);
    let age_column = || Column::new("Age", "string", CREATED_DESCRIPTION);
    let template = || {
        [
            string("Containers", "Names of each container in the template.").wide(),
            string(
                "Images",
                "Images referenced by each container in the template.",
            )
            .wide(),
            string("Selector", "The label selector of the pods.").wide(),
        ]
    };
    if kind == "Event" && matches!(group, "" | "events.k8s.io") {
        return Some(Printer {
            columns: events::columns(),
            cells: events::cells,
            name_first: false,
        });
    }
    let (columns, cells): (Vec<Column>, Cells) = match (group, kind) {
        ("", "Namespace") => (
            vec![string("Status", "The status of the namespace"), age_column()],
            |o| vec![str_or(&o["status"]["phase"], ""), age(o)],
        ),
        ("", "ConfigMap") => (
            vec![string("Data", "The number of keys in data and binaryData."), age_column()],
            |o| vec![json!(len(&o["data"]) + len(&o["binaryData"])), age(o)],
        ),
        ("", "Secret") => (
            vec![
                string("Type", "The type of the secret."),
                string("Data", "The number of keys in data."),
                age_column(),
            ],
            |o| vec![str_or(&o["type"], ""), json!(len(&o["data"])), age(o)],
        ),
        ("", "Service") => (
            vec![
                string("Type", "How the Service is exposed."),
                string("Cluster-IP", "The cluster IP of the service."),
                string("External-IP", "The external IPs of the service."),
                string("Port(s)", "The ports the service exposes."),
                age_column(),
                string("Selector", "The selector of the pods behind the service.").wide(),
            ],
            service,
        ),
        ("", "Pod") => (
            vec![
                string("Ready", "The aggregate readiness state of this pod for accepting traffic."),
                string("Status", "The aggregate status of the containers in this pod."),
                Column::new("Restarts", "string", "The number of times the containers in this pod have been restarted."),
                age_column(),
                string("IP", "The IP address of the pod.").wide(),
                string("Node", "The node the pod runs on.").wide(),
                string("Nominated Node", "The node the scheduler nominated for the pod.").wide(),
                string("Readiness Gates", "The readiness gates of the pod.").wide(),
            ],
            pod,
        ),
        ("apps", "Deployment") => (
            [
                string("Ready", "Number of the pod with ready state"),
                string("Up-to-date", "Total number of non-terminating pods targeted by this deployment that have the desired template spec."),
                string("Available", "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment."),
                age_column(),
            ]
            .into_iter()
            .chain(template())
            .collect(),
            deployment,
        ),
        ("batch", "Job") => (
            [
                string("Status", "Status of the job execution"),
                string("Completions", "The completed pods of the job, out of those wanted."),
                string("Duration", "Time required to complete the job."),
                age_column(),
            ]
            .into_iter()
            .chain(template())
            .collect(),
            job,
        ),
        _ => return None,
    };
    Some(Printer {
        columns: std::iter::once(Column::name()).chain(columns).collect(),
        cells,
        name_first: true,
    })
}

/// The full row of `printer` for `object`: the name (when it leads), then the kind's cells.
pub(crate) fn row(printer: &Printer, object: &Value) -> Vec<Value> {
    let name = printer
        .name_first
        .then(|| object["metadata"]["name"].clone());
    name.into_iter().chain((printer.cells)(object)).collect()
}

fn str_or(value: &Value, fallback: &str) -> Value {
    json!(value.as_str().unwrap_or(fallback))
}

fn len(value: &Value) -> usize {
    value.as_object().map_or(0, |m| m.len())
}

pub(super) fn int(value: &Value) -> i64 {
    value.as_i64().unwrap_or(0)
}

/// `k=v,...` of a label map, sorted; `<none>` when empty.
fn labels(map: &Value) -> String {
    let mut pairs: Vec<String> = map
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    pairs.sort();
    if pairs.is_empty() {
        "<none>".into()
    } else {
        pairs.join(",")
    }
}

fn service(o: &Value) -> Vec<Value> {
    let spec = &o["spec"];
    let kind = spec["type"].as_str().unwrap_or("ClusterIP");
    let cluster_ip = spec["clusterIPs"][0]
        .as_str()
        .or(spec["clusterIP"].as_str())
        .filter(|ip| !ip.is_empty())
        .unwrap_or("<none>");
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect()
    };
    let external = strings(&spec["externalIPs"]);
    let external_ip = match kind {
        "ExternalName" => spec["externalName"].as_str().unwrap_or("<none>").to_owned(),
        "LoadBalancer" => {
            let mut ips: Vec<String> = o["status"]["loadBalancer"]["ingress"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|i| i["ip"].as_str().or(i["hostname"].as_str()))
                .map(str::to_owned)
                .collect();
            ips.extend(external);
            if ips.is_empty() {
                "<pending>".into()
            } else {
                ips.join(",")
            }
        }
        _ if external.is_empty() => "<none>".into(),
        _ => external.join(","),
    };
    let ports: Vec<String> = spec["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let protocol = p["protocol"].as_str().unwrap_or("TCP");
            match p["nodePort"].as_i64().filter(|n| *n != 0) {
                Some(node) => format!("{}:{node}/{protocol}", int(&p["port"])),
                None => format!("{}/{protocol}", int(&p["port"])),
            }
        })
        .collect();
    let ports = if ports.is_empty() {
        "<none>".into()
    } else {
        ports.join(",")
    };
    vec![
        json!(kind),
        json!(cluster_ip),
        json!(external_ip),
        json!(ports),
        age(o),
        json!(labels(&spec["selector"])),
    ]
}

#[cfg(test)]
mod tests;
