//! The kinds the server serves: the built-in ones and those of the CRDs it holds.

use std::sync::Arc;

use serde_json::{Value, json};

/// One served resource (a kind at one group/version).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ResourceType {
    /// The API group; empty for the core group.
    pub group: String,
    /// The version, e.g. `v1`.
    pub version: String,
    /// The kind, e.g. `ConfigMap`.
    pub kind: String,
    /// The lower-case plural, e.g. `configmaps`.
    pub plural: String,
    /// The lower-case singular.
    pub singular: String,
    /// Whether its objects live in a namespace.
    pub namespaced: bool,
    /// kubectl short names.
    pub short_names: Vec<String>,
    /// Whether it has a status subresource.
    pub status: bool,
    /// The OpenAPI v3 schema of a CRD version; `None` for built-ins. Shared: every request
    /// routed to the type holds the type.
    pub schema: Option<Arc<Value>>,
    /// Whether this is the storage version (CRDs).
    pub storage: bool,
    /// The printer columns of a CRD version (`additionalPrinterColumns`).
    pub printer_columns: Arc<[Value]>,
}

impl ResourceType {
    /// Whether the server keeps `metadata.generation` for this kind, as kube-apiserver does:
    /// every custom resource, and the built-ins whose registry strategy sets it (those with a
    /// spec a controller observes). ConfigMaps, Secrets, Services and the like have none.
    pub(crate) fn has_generation(&self) -> bool {
        self.schema.is_some()
            || matches!(
                (self.group.as_str(), self.kind.as_str()),
                ("", "Pod" | "ReplicationController")
                    | (
                        "apps",
                        "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet"
                    )
                    | ("batch", "Job" | "CronJob")
                    | ("autoscaling", "HorizontalPodAutoscaler")
                    | ("policy", "PodDisruptionBudget")
                    | ("networking.k8s.io", "NetworkPolicy")
                    | ("apiextensions.k8s.io", "CustomResourceDefinition")
            )
    }

    /// The group its objects are stored under: its own, but `events.k8s.io` for core/v1
    /// Events (one store, two APIs: [`crate::events`]).
    pub(crate) fn storage_group(&self) -> &str {
        if crate::events::is_core_event(self) {
            crate::events::STORAGE_GROUP
        } else {
            &self.group
        }
    }

    /// `group/version`, or `version` for the core group.
    pub(crate) fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `plural` or `plural.group`, as kube-apiserver names a resource in messages.
    pub(crate) fn qualified_plural(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// `Kind.group` (or `Kind`), as kube-apiserver names a kind in 422 messages.
    pub(crate) fn qualified_kind(&self) -> String {
        if self.group.is_empty() {
            self.kind.clone()
        } else {
            format!("{}.{}", self.kind, self.group)
        }
    }

    /// The verbs of its discovery entry.
    pub(crate) fn verbs(&self) -> Value {
        json!([
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch"
        ])
    }
}

/// (group, version, kind, plural, namespaced, status subresource, short names)
type Builtin = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    bool,
    bool,
    &'static [&'static str],
);

const BUILTINS: &[Builtin] = &[
    ("", "v1", "Namespace", "namespaces", false, true, &["ns"]),
    ("", "v1", "ConfigMap", "configmaps", true, false, &["cm"]),
    ("", "v1", "Secret", "secrets", true, false, &[]),
    ("", "v1", "Service", "services", true, true, &["svc"]),
    (
        "",
        "v1",
        "ServiceAccount",
        "serviceaccounts",
        true,
        false,
        &["sa"],
    ),
    ("", "v1", "Event", "events", true, false, &["ev"]),
    ("", "v1", "Pod", "pods", true, true, &["po"]),
    (
        "events.k8s.io",
        "v1",
        "Event",
        "events",
        true,
        false,
        &["ev"],
    ),
    (
        "apps",
        "v1",
        "Deployment",
        "deployments",
        true,
        true,
        &["deploy"],
    ),
    (
        "apps",
        "v1",
        "StatefulSet",
        "statefulsets",
        true,
        true,
        &["sts"],
    ),
    ("apps", "v1", "DaemonSet", "daemonsets", true, true, &["ds"]),
    (
        "apps",
        "v1",
        "ReplicaSet",
        "replicasets",
        true,
        true,
        &["rs"],
    ),
    (
        "",
        "v1",
        "ReplicationController",
        "replicationcontrollers",
        true,
        true,
        &["rc"],
    ),
    ("", "v1", "Node", "nodes", false, true, &["no"]),
    ("batch", "v1", "Job", "jobs", true, true, &[]),
    ("batch", "v1", "CronJob", "cronjobs", true, true, &["cj"]),
    (
        "autoscaling",
        "v2",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        true,
        true,
        &["hpa"],
    ),
    (
        "policy",
        "v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        true,
        true,
        &["pdb"],
    ),
    (
        "discovery.k8s.io",
        "v1",
        "EndpointSlice",
        "endpointslices",
        true,
        false,
        &[],
    ),
    (
        "networking.k8s.io",
        "v1",
        "NetworkPolicy",
        "networkpolicies",
        true,
        false,
        &["netpol"],
    ),
    (
        "coordination.k8s.io",
        "v1",
        "Lease",
        "leases",
        true,
        false,
        &[],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "Role",
        "roles",
        true,
        false,
        &[],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "RoleBinding",
        "rolebindings",
        true,
        false,
        &[],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRole",
        "clusterroles",
        false,
        false,
        &[],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
        false,
        false,
        &[],
    ),
    (
        "authorization.k8s.io",
        "v1",
        "SelfSubjectAccessReview",
        "selfsubjectaccessreviews",
        false,
        false,
        &[],
    ),
    (
        "authorization.k8s.io",
        "v1",
        "SubjectAccessReview",
        "subjectaccessreviews",
        false,
        false,
        &[],
    ),
    (
        "authentication.k8s.io",
        "v1",
        "TokenReview",
        "tokenreviews",
        false,
        false,
        &[],
    ),
    (
        "authentication.k8s.io",
        "v1",
        "SelfSubjectReview",
        "selfsubjectreviews",
        false,
        false,
        &[],
    ),
    (
        "authorization.k8s.io",
        "v1",
        "SelfSubjectRulesReview",
        "selfsubjectrulesreviews",
        false,
        false,
        &[],
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
        false,
        false,
        &[],
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        false,
        false,
        &[],
    ),
    (
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        false,
        true,
        &["crd", "crds"],
    ),
];

/// The built-in resource types.
pub(crate) fn builtins() -> Vec<ResourceType> {
    BUILTINS
        .iter()
        .map(
            |&(group, version, kind, plural, namespaced, status, short)| ResourceType {
                group: group.into(),
                version: version.into(),
                kind: kind.into(),
                plural: plural.into(),
                singular: kind.to_lowercase(),
                namespaced,
                short_names: short.iter().map(|s| (*s).to_owned()).collect(),
                status,
                schema: None,
                storage: true,
                printer_columns: Arc::new([]),
            },
        )
        .collect()
}

/// The resource types a CRD object serves (its served versions).
pub(crate) fn from_crd(crd: &Value) -> Vec<ResourceType> {
    let spec = &crd["spec"];
    let str_at = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let names = &spec["names"];
    let plural = str_at(&names["plural"]);
    let kind = str_at(&names["kind"]);
    let singular = names["singular"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| kind.to_lowercase());
    let short_names: Vec<String> = names["shortNames"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let namespaced = spec["scope"].as_str() != Some("Cluster");
    spec["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["served"].as_bool().unwrap_or(false))
        .map(|v| ResourceType {
            group: str_at(&spec["group"]),
            version: str_at(&v["name"]),
            kind: kind.clone(),
            plural: plural.clone(),
            singular: singular.clone(),
            namespaced,
            short_names: short_names.clone(),
            status: v.pointer("/subresources/status").is_some(),
            schema: v.pointer("/schema/openAPIV3Schema").cloned().map(Arc::new),
            storage: v["storage"].as_bool().unwrap_or(false),
            printer_columns: v["additionalPrinterColumns"]
                .as_array()
                .map_or_else(|| Arc::new([]) as Arc<[Value]>, |c| c.as_slice().into()),
        })
        .collect()
}

/// Every served type: built-ins first, then CRDs'.
#[derive(Debug, Clone, Default)]
pub(crate) struct Registry {
    types: Vec<ResourceType>,
}

impl Registry {
    /// The built-in types only.
    pub(crate) fn new() -> Self {
        Self { types: builtins() }
    }

    /// Rebuilds the CRD-served types from `crds` (the stored CRD objects that are
    /// Established and not being deleted).
    pub(crate) fn set_crds<'a>(&mut self, crds: impl Iterator<Item = &'a Value>) {
        self.types = builtins();
        for crd in crds {
            self.types.extend(from_crd(crd));
        }
    }

    /// The type served at `group/version/plural`.
    pub(crate) fn find(&self, group: &str, version: &str, plural: &str) -> Option<&ResourceType> {
        self.types
            .iter()
            .find(|t| t.group == group && t.version == version && t.plural == plural)
    }

    /// Every served type.
    pub(crate) fn all(&self) -> &[ResourceType] {
        &self.types
    }
}
