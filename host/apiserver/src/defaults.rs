//! The defaults kube-apiserver sets on the built-in kinds the operator writes, so that a
//! converged apply, which omits them, finds them in place.

use serde_json::{Value, json};

/// Sets `value` at `field` of `object` when absent.
fn default(object: &mut Value, field: &str, value: Value) {
    if let Some(map) = object.as_object_mut()
        && !map.contains_key(field)
    {
        map.insert(field.to_owned(), value);
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

/// Deployment defaults: replicas, strategy, revision history, progress deadline, and the
/// pod template's restart, DNS, scheduler and termination settings.
pub(crate) fn deployment(object: &mut Value) {
    let Some(spec) = object.get_mut("spec") else {
        return;
    };
    default(spec, "replicas", json!(1));
    default(spec, "revisionHistoryLimit", json!(10));
    default(spec, "progressDeadlineSeconds", json!(600));
    default(
        spec,
        "strategy",
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}),
    );
    let Some(pod) = spec.pointer_mut("/template/spec") else {
        return;
    };
    default(pod, "restartPolicy", json!("Always"));
    default(pod, "terminationGracePeriodSeconds", json!(30));
    default(pod, "dnsPolicy", json!("ClusterFirst"));
    default(pod, "schedulerName", json!("default-scheduler"));
    default(pod, "securityContext", json!({}));
    if let Some(containers) = pod.get_mut("containers").and_then(Value::as_array_mut) {
        for c in containers {
            default(c, "terminationMessagePath", json!("/dev/termination-log"));
            default(c, "terminationMessagePolicy", json!("File"));
            let latest = c
                .get("image")
                .and_then(Value::as_str)
                .is_some_and(|i| !i.contains(':') || i.ends_with(":latest"));
            default(
                c,
                "imagePullPolicy",
                json!(if latest { "Always" } else { "IfNotPresent" }),
            );
            default(c, "resources", json!({}));
        }
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
