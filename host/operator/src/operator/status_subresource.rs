//! Which kinds may have a `status` subresource, for the RBAC the host needs to report a
//! failed pass on its primary's status.
//!
//! A kind of a group kube-apiserver serves itself has one exactly when kube-apiserver
//! serves `<plural>/status` for it (a ConfigMap or a Secret has none). Any other group is a
//! CustomResourceDefinition's (Gateway API's `gateway.networking.k8s.io` included), and
//! whether it declares `subresources.status` is known only to the cluster, so the host asks
//! for the permission.

use wasm_operator_types::KindRef;

/// The groups kube-apiserver serves itself.
const BUILT_IN_GROUPS: &[&str] = &[
    "",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "apps",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "internal.apiserver.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "resource.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
    "storagemigration.k8s.io",
];

/// The built-in `(group, plural)`s kube-apiserver serves a `status` subresource for.
const BUILT_IN_WITH_STATUS: &[(&str, &str)] = &[
    ("", "namespaces"),
    ("", "nodes"),
    ("", "persistentvolumeclaims"),
    ("", "persistentvolumes"),
    ("", "pods"),
    ("", "replicationcontrollers"),
    ("", "resourcequotas"),
    ("", "services"),
    (
        "admissionregistration.k8s.io",
        "validatingadmissionpolicies",
    ),
    ("apiextensions.k8s.io", "customresourcedefinitions"),
    ("apiregistration.k8s.io", "apiservices"),
    ("apps", "daemonsets"),
    ("apps", "deployments"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
    ("autoscaling", "horizontalpodautoscalers"),
    ("batch", "cronjobs"),
    ("batch", "jobs"),
    ("certificates.k8s.io", "certificatesigningrequests"),
    ("flowcontrol.apiserver.k8s.io", "flowschemas"),
    (
        "flowcontrol.apiserver.k8s.io",
        "prioritylevelconfigurations",
    ),
    ("internal.apiserver.k8s.io", "storageversions"),
    ("networking.k8s.io", "ingresses"),
    ("networking.k8s.io", "servicecidrs"),
    ("policy", "poddisruptionbudgets"),
    ("resource.k8s.io", "resourceclaims"),
    ("storage.k8s.io", "volumeattachments"),
    ("storagemigration.k8s.io", "storageversionmigrations"),
];

/// Whether `kind` has, or (a custom resource) may have, a `status` subresource.
pub(crate) fn may_have_status(kind: &KindRef) -> bool {
    let group = kind.group();
    !BUILT_IN_GROUPS.contains(&group)
        || BUILT_IN_WITH_STATUS.contains(&(group, kind.plural.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(api_version: &str, plural: &str) -> KindRef {
        KindRef {
            api_version: api_version.into(),
            kind: String::new(),
            plural: plural.into(),
            namespaced: true,
        }
    }

    #[test]
    fn built_in_kinds_have_status_only_where_kube_apiserver_serves_it_and_custom_kinds_may() {
        let cases = [
            ("v1", "configmaps", false),
            ("v1", "secrets", false),
            ("v1", "serviceaccounts", false),
            ("rbac.authorization.k8s.io/v1", "roles", false),
            ("coordination.k8s.io/v1", "leases", false),
            ("v1", "pods", true),
            ("v1", "services", true),
            ("apps/v1", "deployments", true),
            ("batch/v1", "jobs", true),
            ("policy/v1", "poddisruptionbudgets", true),
            ("apps.gitlab.com/v2alpha1", "gitlabsecrets", true),
            ("gateway.networking.k8s.io/v1", "httproutes", true),
        ];
        for (api_version, plural, expected) in cases {
            assert_eq!(
                may_have_status(&kind(api_version, plural)),
                expected,
                "{api_version} {plural}"
            );
        }
    }

    #[test]
    fn the_table_names_only_built_in_groups() {
        for (group, plural) in BUILT_IN_WITH_STATUS {
            assert!(BUILT_IN_GROUPS.contains(group), "{group}/{plural}");
        }
    }
}
