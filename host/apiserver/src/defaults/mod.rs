//! The defaults kube-apiserver sets on the built-in kinds the operator writes, so that a
//! converged apply, which omits them, finds them in place. Defaulting is the server's: it
//! runs on create, update, patch and apply, with or without the cluster actors.

use serde_json::{Value, json};

mod pod;

/// Sets `value` at `field` of `object` when absent.
fn default(object: &mut Value, field: &str, value: Value) {
    if let Some(map) = object.as_object_mut()
        && !map.contains_key(field)
    {
        map.insert(field.to_owned(), value);
    }
}

/// Secret defaults (`SetDefaults_Secret`): an absent or empty `type` is `Opaque`.
pub(crate) fn secret(object: &mut Value) {
    if object
        .get("type")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
        && let Some(map) = object.as_object_mut()
    {
        map.insert("type".into(), json!("Opaque"));
    }
}

/// Service defaults: type ClusterIP, session affinity, IP families, port protocol and
/// targetPort. The cluster IP itself is allocated on create and kept on update.
pub(crate) fn service(object: &mut Value, old: Option<&Value>) {
    let Some(spec) = object.get_mut("spec") else {
        return;
    };
    default(spec, "type", json!("ClusterIP"));
    default(spec, "sessionAffinity", json!("None"));
    default(spec, "internalTrafficPolicy", json!("Cluster"));
    if let Some(old_spec) = old.and_then(|o| o.get("spec")) {
        for field in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
            if let Some(v) = old_spec.get(field) {
                default(spec, field, v.clone());
            }
        }
    }
    if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for port in ports {
            default(port, "protocol", json!("TCP"));
            if let Some(p) = port.get("port").cloned() {
                default(port, "targetPort", p);
            }
        }
    }
}

/// Deployment defaults (`apps/v1` `SetDefaults_Deployment`): replicas 1, a RollingUpdate
/// strategy with 25% surge and unavailability, revision history 10, progress deadline 600 s,
/// and the pod template's defaults.
pub(crate) fn deployment(object: &mut Value) {
    let Some(spec) = object.get_mut("spec") else {
        return;
    };
    default(spec, "replicas", json!(1));
    default(spec, "revisionHistoryLimit", json!(10));
    default(spec, "progressDeadlineSeconds", json!(600));
    default(spec, "strategy", json!({}));
    if let Some(strategy) = spec.get_mut("strategy") {
        default(strategy, "type", json!("RollingUpdate"));
        if strategy["type"] == "RollingUpdate" {
            default(strategy, "rollingUpdate", json!({}));
            if let Some(rolling) = strategy.get_mut("rollingUpdate") {
                default(rolling, "maxUnavailable", json!("25%"));
                default(rolling, "maxSurge", json!("25%"));
            }
        }
    }
    if let Some(pod) = spec.pointer_mut("/template/spec") {
        pod::pod_spec(pod);
    }
}

/// The labels the server puts on a Job's pod template (and selects by) when the Job does
/// not choose its selector, legacy keys included.
pub(crate) const JOB_LABELS: [&str; 4] = [
    "batch.kubernetes.io/controller-uid",
    "batch.kubernetes.io/job-name",
    "controller-uid",
    "job-name",
];

/// Job defaults (`batch/v1` `SetDefaults_Job`): completions and parallelism 1, backoffLimit
/// 6, completionMode NonIndexed, suspend false, podReplacementPolicy TerminatingOrFailed
/// (Failed with a pod failure policy), and the pod template's defaults. On an update that
/// omits them, the stored Job's generated selector and template labels are kept.
pub(crate) fn job(object: &mut Value, old: Option<&Value>) {
    let Some(spec) = object.get_mut("spec") else {
        return;
    };
    if spec.get("completions").is_none() && spec.get("parallelism").is_none() {
        default(spec, "completions", json!(1));
    }
    default(spec, "parallelism", json!(1));
    let per_index = spec
        .get("backoffLimitPerIndex")
        .is_some_and(|v| !v.is_null());
    default(
        spec,
        "backoffLimit",
        json!(if per_index { i64::from(i32::MAX) } else { 6 }),
    );
    default(spec, "completionMode", json!("NonIndexed"));
    default(spec, "suspend", json!(false));
    let failure_policy = spec.get("podFailurePolicy").is_some_and(|v| !v.is_null());
    default(
        spec,
        "podReplacementPolicy",
        json!(if failure_policy {
            "Failed"
        } else {
            "TerminatingOrFailed"
        }),
    );
    if let Some(old_spec) = old.and_then(|o| o.get("spec")) {
        if let Some(selector) = old_spec.get("selector") {
            default(spec, "selector", selector.clone());
        }
        let old_labels = old_spec.pointer("/template/metadata/labels");
        if let (Some(template), Some(Value::Object(old_labels))) =
            (spec.get_mut("template"), old_labels)
        {
            default(template, "metadata", json!({}));
            if let Some(meta) = template.get_mut("metadata") {
                default(meta, "labels", json!({}));
                if let Some(labels) = meta.get_mut("labels") {
                    for key in JOB_LABELS {
                        if let Some(v) = old_labels.get(key) {
                            default(labels, key, v.clone());
                        }
                    }
                }
            }
        }
    }
    if let Some(pod) = spec.pointer_mut("/template/spec") {
        pod::pod_spec(pod);
    }
}

/// On a new Job without `manualSelector: true`: the selector
/// `batch.kubernetes.io/controller-uid=<uid>`, the [`JOB_LABELS`] on its pod template, and
/// the template's labels as the Job's own when it has none.
pub(crate) fn job_selector(object: &mut Value) {
    let uid = object.pointer("/metadata/uid").cloned();
    let name = object.pointer("/metadata/name").cloned();
    let (Some(uid), Some(name)) = (uid, name) else {
        return;
    };
    let Some(spec) = object.get_mut("spec") else {
        return;
    };
    if spec.get("manualSelector") == Some(&json!(true)) {
        return;
    }
    spec["selector"] = json!({"matchLabels": {JOB_LABELS[0]: uid}});
    default(spec, "template", json!({}));
    let Some(template) = spec.get_mut("template") else {
        return;
    };
    default(template, "metadata", json!({}));
    let Some(meta) = template.get_mut("metadata") else {
        return;
    };
    default(meta, "labels", json!({}));
    let Some(labels) = meta.get_mut("labels").and_then(Value::as_object_mut) else {
        return;
    };
    for (key, value) in JOB_LABELS.into_iter().zip([&uid, &name, &uid, &name]) {
        labels.insert(key.to_owned(), value.clone());
    }
    let labels = Value::Object(labels.clone());
    if let Some(meta) = object.get_mut("metadata") {
        let empty = meta
            .get("labels")
            .and_then(Value::as_object)
            .is_none_or(serde_json::Map::is_empty);
        if empty {
            meta["labels"] = labels;
        }
    }
}

/// CronJob defaults (`batch/v1` `SetDefaults_CronJob`): concurrencyPolicy Allow, suspend
/// false, 3 successful and 1 failed Jobs kept, and the job template's pod defaults (the
/// job template's own spec is not defaulted).
pub(crate) fn cron_job(object: &mut Value) {
    let Some(spec) = object.get_mut("spec") else {
        return;
    };
    default(spec, "concurrencyPolicy", json!("Allow"));
    default(spec, "suspend", json!(false));
    default(spec, "successfulJobsHistoryLimit", json!(3));
    default(spec, "failedJobsHistoryLimit", json!(1));
    if let Some(pod) = spec.pointer_mut("/jobTemplate/spec/template/spec") {
        pod::pod_spec(pod);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_keeps_its_allocated_cluster_ip_when_an_update_omits_it() {
        let old =
            json!({"spec": {"clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"], "ports": []}});
        let mut new = json!({"spec": {"ports": [{"port": 80}]}});
        service(&mut new, Some(&old));
        assert_eq!(new["spec"]["clusterIP"], "10.96.0.10");
        assert_eq!(
            new["spec"]["ports"][0],
            json!({"port": 80, "protocol": "TCP", "targetPort": 80})
        );
    }

    #[test]
    fn a_deployment_gets_the_server_defaults() {
        let mut d = json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "x:1"}]}}}});
        deployment(&mut d);
        assert_eq!(d["spec"]["replicas"], 1);
        assert_eq!(
            d["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
            "IfNotPresent"
        );
    }
}
