//! Unknown fields of built-in kinds, for `fieldValidation`.
//!
//! A built-in object is decoded into its k8s-openapi type and encoded back; a field of the
//! request that does not survive the round trip is one the type does not declare — what
//! kube-apiserver's strict decoding reports.

use serde_json::Value;

/// The request's fields that `kind` (of `group`) does not declare, as `spec.foo` paths;
/// `None` for a kind without a typed model here.
pub(crate) fn unknown(group: &str, kind: &str, object: &Value) -> Option<Vec<String>> {
    use k8s_openapi::api::{
        admissionregistration, apps, autoscaling, batch, coordination, core, discovery, events,
        networking, policy, rbac,
    };
    macro_rules! round_trip {
        ($ty:ty) => {
            serde_json::from_value::<$ty>(object.clone())
                .ok()
                .and_then(|typed| serde_json::to_value(typed).ok())
        };
    }
    let known = match (group, kind) {
        ("", "Namespace") => round_trip!(core::v1::Namespace),
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration") => {
            round_trip!(admissionregistration::v1::MutatingWebhookConfiguration)
        }
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration") => {
            round_trip!(admissionregistration::v1::ValidatingWebhookConfiguration)
        }
        ("", "ConfigMap") => round_trip!(core::v1::ConfigMap),
        ("", "Secret") => round_trip!(core::v1::Secret),
        ("", "Service") => round_trip!(core::v1::Service),
        ("", "ServiceAccount") => round_trip!(core::v1::ServiceAccount),
        ("", "Event") => round_trip!(core::v1::Event),
        ("", "Pod") => round_trip!(core::v1::Pod),
        ("events.k8s.io", "Event") => round_trip!(events::v1::Event),
        ("apps", "Deployment") => round_trip!(apps::v1::Deployment),
        ("apps", "StatefulSet") => round_trip!(apps::v1::StatefulSet),
        ("apps", "DaemonSet") => round_trip!(apps::v1::DaemonSet),
        ("apps", "ReplicaSet") => round_trip!(apps::v1::ReplicaSet),
        ("", "ReplicationController") => round_trip!(core::v1::ReplicationController),
        ("", "Node") => round_trip!(core::v1::Node),
        ("batch", "Job") => round_trip!(batch::v1::Job),
        ("batch", "CronJob") => round_trip!(batch::v1::CronJob),
        ("autoscaling", "HorizontalPodAutoscaler") => {
            round_trip!(autoscaling::v2::HorizontalPodAutoscaler)
        }
        ("policy", "PodDisruptionBudget") => round_trip!(policy::v1::PodDisruptionBudget),
        ("discovery.k8s.io", "EndpointSlice") => round_trip!(discovery::v1::EndpointSlice),
        ("networking.k8s.io", "NetworkPolicy") => round_trip!(networking::v1::NetworkPolicy),
        ("coordination.k8s.io", "Lease") => round_trip!(coordination::v1::Lease),
        ("rbac.authorization.k8s.io", "Role") => round_trip!(rbac::v1::Role),
        ("rbac.authorization.k8s.io", "RoleBinding") => round_trip!(rbac::v1::RoleBinding),
        ("rbac.authorization.k8s.io", "ClusterRole") => round_trip!(rbac::v1::ClusterRole),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => {
            round_trip!(rbac::v1::ClusterRoleBinding)
        }
        _ => return None,
    }?;
    let mut out = Vec::new();
    missing(object, &known, String::new(), &mut out);
    Some(out)
}

/// Collects the paths of `request` that `known` lacks.
fn missing(request: &Value, known: &Value, path: String, out: &mut Vec<String>) {
    match (request, known) {
        (Value::Object(r), Value::Object(k)) => {
            for (field, value) in r {
                let child = if path.is_empty() {
                    field.clone()
                } else {
                    format!("{path}.{field}")
                };
                match k.get(field) {
                    Some(known_value) => missing(value, known_value, child, out),
                    // A null the type omits is no unknown field.
                    None if value.is_null() => {}
                    None => out.push(child),
                }
            }
        }
        (Value::Array(r), Value::Array(k)) => {
            for (i, (value, known_value)) in r.iter().zip(k).enumerate() {
                missing(value, known_value, format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_undeclared_field_of_a_built_in_kind_is_found_with_its_path() {
        let object = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"replicas": 1, "bogus": true, "template": {"spec": {"containers": [{"name": "a", "imagee": "x"}]}}}});
        let found = unknown("apps", "Deployment", &object).expect("a typed kind");
        assert_eq!(
            found,
            ["spec.bogus", "spec.template.spec.containers[0].imagee"]
        );
    }

    #[test]
    fn a_well_formed_built_in_object_has_no_unknown_fields() {
        let object = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {}}, "data": {"k": "v"}, "immutable": false});
        assert_eq!(unknown("", "ConfigMap", &object), Some(vec![]));
    }
}
