//! The field tables of the kinds client-go's typed clients create (numbers from the
//! Kubernetes API's `generated.proto`). A field not listed is skipped, as JSON decoding
//! skips an unknown field; `managedFields` (ObjectMeta 17) among them.

/// How a field's payload reads.
#[derive(Debug, Clone, Copy)]
pub(super) enum Kind {
    Str,
    Bool,
    Int,
    /// `metav1.Time`.
    Time,
    /// `intstr.IntOrString`.
    IntOrString,
    /// `map<string, string>`.
    StrMap,
    /// `map<string, bytes>`, base64 values in JSON.
    BytesMap,
    Msg(&'static [Field]),
}

/// One field of a message.
#[derive(Debug, Clone, Copy)]
pub(super) struct Field {
    pub number: u64,
    pub name: &'static str,
    pub kind: Kind,
    pub repeated: bool,
}

const fn one(number: u64, name: &'static str, kind: Kind) -> Field {
    Field {
        number,
        name,
        kind,
        repeated: false,
    }
}

const fn many(number: u64, name: &'static str, kind: Kind) -> Field {
    Field {
        number,
        name,
        kind,
        repeated: true,
    }
}

use Kind::{Bool, BytesMap, Int, IntOrString, Msg, Str, StrMap, Time};

const METADATA: Field = one(1, "metadata", Msg(OBJECT_META));

const OBJECT_META: &[Field] = &[
    one(1, "name", Str),
    one(2, "generateName", Str),
    one(3, "namespace", Str),
    one(5, "uid", Str),
    one(6, "resourceVersion", Str),
    one(7, "generation", Int),
    one(8, "creationTimestamp", Time),
    one(9, "deletionTimestamp", Time),
    one(10, "deletionGracePeriodSeconds", Int),
    one(11, "labels", StrMap),
    one(12, "annotations", StrMap),
    many(13, "ownerReferences", Msg(OWNER_REFERENCE)),
    many(14, "finalizers", Str),
];

const OWNER_REFERENCE: &[Field] = &[
    one(1, "kind", Str),
    one(3, "name", Str),
    one(4, "uid", Str),
    one(5, "apiVersion", Str),
    one(6, "controller", Bool),
    one(7, "blockOwnerDeletion", Bool),
];

const OBJECT_REFERENCE: &[Field] = &[
    one(1, "kind", Str),
    one(2, "namespace", Str),
    one(3, "name", Str),
    one(4, "uid", Str),
    one(5, "apiVersion", Str),
    one(6, "resourceVersion", Str),
    one(7, "fieldPath", Str),
];

const LOCAL_OBJECT_REFERENCE: &[Field] = &[one(1, "name", Str)];

const LABEL_SELECTOR: &[Field] = &[
    one(1, "matchLabels", StrMap),
    many(2, "matchExpressions", Msg(LABEL_SELECTOR_REQUIREMENT)),
];

const LABEL_SELECTOR_REQUIREMENT: &[Field] = &[
    one(1, "key", Str),
    one(2, "operator", Str),
    many(3, "values", Str),
];

const NAMESPACE: &[Field] = &[METADATA, one(2, "spec", Msg(&[many(1, "finalizers", Str)]))];

const CONFIG_MAP: &[Field] = &[
    METADATA,
    one(2, "data", StrMap),
    one(3, "binaryData", BytesMap),
    one(4, "immutable", Bool),
];

const SECRET: &[Field] = &[
    METADATA,
    one(2, "data", BytesMap),
    one(3, "type", Str),
    one(4, "stringData", StrMap),
    one(5, "immutable", Bool),
];

const SERVICE_ACCOUNT: &[Field] = &[
    METADATA,
    many(2, "secrets", Msg(OBJECT_REFERENCE)),
    many(3, "imagePullSecrets", Msg(LOCAL_OBJECT_REFERENCE)),
    one(4, "automountServiceAccountToken", Bool),
];

const SERVICE: &[Field] = &[METADATA, one(2, "spec", Msg(SERVICE_SPEC))];

const SERVICE_SPEC: &[Field] = &[
    many(1, "ports", Msg(SERVICE_PORT)),
    one(2, "selector", StrMap),
    one(3, "clusterIP", Str),
    one(4, "type", Str),
    many(5, "externalIPs", Str),
    one(7, "sessionAffinity", Str),
    one(8, "loadBalancerIP", Str),
    many(9, "loadBalancerSourceRanges", Str),
    one(10, "externalName", Str),
    one(11, "externalTrafficPolicy", Str),
    one(13, "publishNotReadyAddresses", Bool),
    one(17, "ipFamilyPolicy", Str),
    many(18, "clusterIPs", Str),
    many(19, "ipFamilies", Str),
    one(22, "internalTrafficPolicy", Str),
];

const SERVICE_PORT: &[Field] = &[
    one(1, "name", Str),
    one(2, "protocol", Str),
    one(3, "port", Int),
    one(4, "targetPort", IntOrString),
    one(5, "nodePort", Int),
    one(6, "appProtocol", Str),
];

const POLICY_RULE: &[Field] = &[
    many(1, "verbs", Str),
    many(2, "apiGroups", Str),
    many(3, "resources", Str),
    many(4, "resourceNames", Str),
    many(5, "nonResourceURLs", Str),
];

const ROLE: &[Field] = &[METADATA, many(2, "rules", Msg(POLICY_RULE))];

const CLUSTER_ROLE: &[Field] = &[
    METADATA,
    many(2, "rules", Msg(POLICY_RULE)),
    one(
        3,
        "aggregationRule",
        Msg(&[many(1, "clusterRoleSelectors", Msg(LABEL_SELECTOR))]),
    ),
];

const BINDING: &[Field] = &[
    METADATA,
    many(
        2,
        "subjects",
        Msg(&[
            one(1, "kind", Str),
            one(2, "apiGroup", Str),
            one(3, "name", Str),
            one(4, "namespace", Str),
        ]),
    ),
    one(
        3,
        "roleRef",
        Msg(&[
            one(1, "apiGroup", Str),
            one(2, "kind", Str),
            one(3, "name", Str),
        ]),
    ),
];

const TOKEN_REQUEST: &[Field] = &[
    METADATA,
    one(
        2,
        "spec",
        Msg(&[
            many(1, "audiences", Str),
            one(
                3,
                "boundObjectRef",
                Msg(&[
                    one(1, "kind", Str),
                    one(2, "apiVersion", Str),
                    one(3, "name", Str),
                    one(4, "uid", Str),
                ]),
            ),
            one(4, "expirationSeconds", Int),
        ]),
    ),
];

const SELF_SUBJECT_ACCESS_REVIEW: &[Field] = &[
    METADATA,
    one(
        2,
        "spec",
        Msg(&[
            one(
                1,
                "resourceAttributes",
                Msg(&[
                    one(1, "namespace", Str),
                    one(2, "verb", Str),
                    one(3, "group", Str),
                    one(4, "version", Str),
                    one(5, "resource", Str),
                    one(6, "subresource", Str),
                    one(7, "name", Str),
                ]),
            ),
            one(
                2,
                "nonResourceAttributes",
                Msg(&[one(1, "path", Str), one(2, "verb", Str)]),
            ),
        ]),
    ),
];

const SELF_SUBJECT_RULES_REVIEW: &[Field] =
    &[METADATA, one(2, "spec", Msg(&[one(1, "namespace", Str)]))];

const POD_DISRUPTION_BUDGET: &[Field] = &[
    METADATA,
    one(
        2,
        "spec",
        Msg(&[
            one(1, "minAvailable", IntOrString),
            one(2, "selector", Msg(LABEL_SELECTOR)),
            one(3, "maxUnavailable", IntOrString),
            one(4, "unhealthyPodEvictionPolicy", Str),
        ]),
    ),
];

const PRIORITY_CLASS: &[Field] = &[
    METADATA,
    one(2, "value", Int),
    one(3, "globalDefault", Bool),
    one(4, "description", Str),
    one(5, "preemptionPolicy", Str),
];

/// The table of `kind` in `api_version`, when it is read from protobuf.
pub(super) fn of(api_version: &str, kind: &str) -> Option<&'static [Field]> {
    Some(match (api_version, kind) {
        ("v1", "Namespace") => NAMESPACE,
        ("v1", "ConfigMap") => CONFIG_MAP,
        ("v1", "Secret") => SECRET,
        ("v1", "ServiceAccount") => SERVICE_ACCOUNT,
        ("v1", "Service") => SERVICE,
        ("rbac.authorization.k8s.io/v1", "Role") => ROLE,
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => CLUSTER_ROLE,
        ("rbac.authorization.k8s.io/v1", "RoleBinding" | "ClusterRoleBinding") => BINDING,
        ("authentication.k8s.io/v1", "TokenRequest") => TOKEN_REQUEST,
        ("authentication.k8s.io/v1", "SelfSubjectReview") => &[METADATA],
        ("authorization.k8s.io/v1", "SelfSubjectAccessReview") => SELF_SUBJECT_ACCESS_REVIEW,
        ("authorization.k8s.io/v1", "SelfSubjectRulesReview") => SELF_SUBJECT_RULES_REVIEW,
        ("policy/v1", "PodDisruptionBudget") => POD_DISRUPTION_BUDGET,
        ("scheduling.k8s.io/v1", "PriorityClass") => PRIORITY_CLASS,
        _ => return None,
    })
}
