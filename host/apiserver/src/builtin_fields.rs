//! Unknown fields of built-in kinds, for `fieldValidation`.
//!
//! A built-in object is decoded into its k8s-openapi type and encoded back; a field of the
//! request that does not survive the round trip is one the type does not declare — what
//! kube-apiserver's strict decoding reports.

use serde_json::Value;

/// Runs `$with!(Type)` for the k8s-openapi type of built-in `$kind` of `$group`; `None` for
/// a kind without a typed model here. The one list of the typed built-in kinds.
macro_rules! with_builtin_type {
    ($group:expr, $kind:expr, $with:ident) => {{
        #[allow(unused_imports)]
        use k8s_openapi::api::{
            admissionregistration, apps, autoscaling, batch, coordination, core, discovery, events,
            networking, policy, rbac,
        };
        match ($group, $kind) {
            ("", "Namespace") => $with!(core::v1::Namespace),
            ("admissionregistration.k8s.io", "MutatingWebhookConfiguration") => {
                $with!(admissionregistration::v1::MutatingWebhookConfiguration)
            }
            ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration") => {
                $with!(admissionregistration::v1::ValidatingWebhookConfiguration)
            }
            ("", "ConfigMap") => $with!(core::v1::ConfigMap),
            ("", "Secret") => $with!(core::v1::Secret),
            ("", "Service") => $with!(core::v1::Service),
            ("", "ServiceAccount") => $with!(core::v1::ServiceAccount),
            ("", "Event") => $with!(core::v1::Event),
            ("", "Pod") => $with!(core::v1::Pod),
            ("events.k8s.io", "Event") => $with!(events::v1::Event),
            ("apps", "Deployment") => $with!(apps::v1::Deployment),
            ("apps", "StatefulSet") => $with!(apps::v1::StatefulSet),
            ("apps", "DaemonSet") => $with!(apps::v1::DaemonSet),
            ("apps", "ReplicaSet") => $with!(apps::v1::ReplicaSet),
            ("", "ReplicationController") => $with!(core::v1::ReplicationController),
            ("", "Node") => $with!(core::v1::Node),
            ("batch", "Job") => $with!(batch::v1::Job),
            ("batch", "CronJob") => $with!(batch::v1::CronJob),
            ("autoscaling", "HorizontalPodAutoscaler") => {
                $with!(autoscaling::v2::HorizontalPodAutoscaler)
            }
            ("policy", "PodDisruptionBudget") => $with!(policy::v1::PodDisruptionBudget),
            ("discovery.k8s.io", "EndpointSlice") => $with!(discovery::v1::EndpointSlice),
            ("networking.k8s.io", "NetworkPolicy") => $with!(networking::v1::NetworkPolicy),
            ("coordination.k8s.io", "Lease") => $with!(coordination::v1::Lease),
            ("rbac.authorization.k8s.io", "Role") => $with!(rbac::v1::Role),
            ("rbac.authorization.k8s.io", "RoleBinding") => $with!(rbac::v1::RoleBinding),
            ("rbac.authorization.k8s.io", "ClusterRole") => $with!(rbac::v1::ClusterRole),
            ("rbac.authorization.k8s.io", "ClusterRoleBinding") => {
                $with!(rbac::v1::ClusterRoleBinding)
            }
            _ => None,
        }
    }};
}
pub(crate) use with_builtin_type;

/// The request's fields that `kind` (of `group`) does not declare, as `spec.foo` paths;
/// `None` for a kind without a typed model here.
pub(crate) fn unknown(group: &str, kind: &str, object: &Value) -> Option<Vec<String>> {
    macro_rules! round_trip {
        ($ty:ty) => {
            serde_json::from_value::<$ty>(object.clone())
                .ok()
                .and_then(|typed| serde_json::to_value(typed).ok())
        };
    }
    let known = with_builtin_type!(group, kind, round_trip)?;
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
