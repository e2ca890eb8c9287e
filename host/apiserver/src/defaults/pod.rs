//! The defaults kube-apiserver sets on a pod template (`k8s.io/kubernetes/pkg/apis/core/v1`
//! `SetDefaults_PodSpec`, `_Container`, `_ContainerPort`, `_Probe`, `_HTTPGetAction` and the
//! volume sources), shared by Deployments, Jobs and CronJobs.

use serde_json::{Value, json};

use super::default;

/// A volume source's `defaultMode` when unset (0644).
const DEFAULT_MODE: i64 = 0o644;

/// Defaults the pod spec of a template (`spec.template.spec`): restart policy, DNS policy,
/// scheduler, termination grace period, an empty security context, and each container's
/// and volume's defaults.
pub(crate) fn pod_spec(pod: &mut Value) {
    if !pod.is_object() {
        return;
    }
    default(pod, "restartPolicy", json!("Always"));
    default(pod, "terminationGracePeriodSeconds", json!(30));
    default(pod, "dnsPolicy", json!("ClusterFirst"));
    default(pod, "schedulerName", json!("default-scheduler"));
    default(pod, "securityContext", json!({}));
    for list in ["initContainers", "containers"] {
        if let Some(containers) = pod.get_mut(list).and_then(Value::as_array_mut) {
            containers.iter_mut().for_each(container);
        }
    }
    if let Some(volumes) = pod.get_mut("volumes").and_then(Value::as_array_mut) {
        volumes.iter_mut().for_each(volume);
    }
}

/// A container: termination message path and policy, image pull policy (`Always` for an
/// untagged or `:latest` image), empty resources, port protocols and probe settings.
fn container(c: &mut Value) {
    default(c, "terminationMessagePath", json!("/dev/termination-log"));
    default(c, "terminationMessagePolicy", json!("File"));
    let latest = c.get("image").and_then(Value::as_str).is_some_and(|image| {
        // A digest pins the image; otherwise the tag is what follows the last `:` after
        // the last `/` (a registry's port is no tag).
        !image.contains('@') && {
            let last = image.rsplit('/').next().unwrap_or(image);
            !last.contains(':') || last.ends_with(":latest")
        }
    });
    default(
        c,
        "imagePullPolicy",
        json!(if latest { "Always" } else { "IfNotPresent" }),
    );
    default(c, "resources", json!({}));
    if let Some(ports) = c.get_mut("ports").and_then(Value::as_array_mut) {
        for port in ports {
            default(port, "protocol", json!("TCP"));
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = c.get_mut(probe) {
            default(p, "timeoutSeconds", json!(1));
            default(p, "periodSeconds", json!(10));
            default(p, "successThreshold", json!(1));
            default(p, "failureThreshold", json!(3));
            if let Some(get) = p.get_mut("httpGet") {
                default(get, "path", json!("/"));
                default(get, "scheme", json!("HTTP"));
            }
        }
    }
    if let Some(env) = c.get_mut("env").and_then(Value::as_array_mut) {
        for var in env {
            if let Some(field) = var.pointer_mut("/valueFrom/fieldRef") {
                default(field, "apiVersion", json!("v1"));
            }
        }
    }
}

/// A volume: the file mode of Secret, ConfigMap, projected and downward API sources.
fn volume(v: &mut Value) {
    for source in ["secret", "configMap", "projected", "downwardAPI"] {
        if let Some(s) = v.get_mut(source) {
            default(s, "defaultMode", json!(DEFAULT_MODE));
        }
    }
}
