//! What the host loads the Keystone plugin with: its kinds, watches and permissions.
//!
//! Permissions are exactly the verbs the steps use: a step that starts writing a kind adds
//! it here, and the test below lists them.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret, Service, ServiceAccount};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use wasm_operator_sdk::admission::{AdmittedKind, FailurePolicy, Operation};
use wasm_operator_sdk::blocks::apply::FIELD_MANAGER;
use wasm_operator_sdk::blocks::secrets::{store_permissions, store_watches};
use wasm_operator_sdk::external::certmanager::Certificate;
use wasm_operator_sdk::external::eso::{ExternalSecret, PushSecret};
use wasm_operator_sdk::external::gateway::HttpRoute;
use wasm_operator_sdk::external::mariadb::{Database, Grant, MariaDb, User};
use wasm_operator_sdk::{
    Description, FieldIndex, KindIndex, KindRef, Mapping, Permission, Predicate, TargetDescription,
    Verb, Watch,
};

use crate::indexes;

use crate::steps::identity_backends::identity_backend_kind;
use crate::types::Keystone;

/// The plugin's name.
pub const NAME: &str = "keystone";

/// The field of a KeystoneIdentityBackend that names its Keystone.
const KEYSTONE_REF: &str = "spec.keystoneRef.name";

/// Where the health check sends its requests: the Keystone Services' API port. The
/// narrowest pattern the host accepts for a Service of any Keystone's name and namespace.
const API_EGRESS: &str = "*.svc.cluster.local:5000";

fn permission(kind: KindRef, verbs: &[Verb]) -> Permission {
    Permission {
        kind,
        verbs: verbs.to_vec(),
    }
}

fn owned(kind: KindRef, optional: bool) -> Watch {
    Watch {
        kind,
        mapping: Mapping::Owner,
        optional,
    }
}

/// The plugin's description.
pub fn describe() -> Description {
    use Verb::{Create, Delete, Get, List, Patch, UpdateStatus, Watch as W};
    let primary = KindRef::of::<Keystone>();
    let mut permissions = vec![
        // Its finalizers are patched on, and off again when it is deleted.
        permission(primary.clone(), &[Get, List, W, Patch, UpdateStatus]),
        // Keys and connection Secrets are created; the staging Secrets are applied and,
        // once committed, deleted; the admin password rotation's Secrets are deleted when
        // it is disabled.
        permission(
            KindRef::of::<Secret>(),
            &[Get, List, W, Create, Patch, Delete],
        ),
        // Immutable config and script ConfigMaps, superseded ones pruned; the policy
        // ConfigMap is read.
        permission(KindRef::of::<ConfigMap>(), &[Get, List, W, Create, Delete]),
        permission(KindRef::of::<Certificate>(), &[Get, List, W, Patch, Delete]),
        permission(KindRef::of::<ExternalSecret>(), &[Get, List, W]),
        // The backups are applied, and deleted (their finalizers stripped when ESO's
        // cleanup stalls) when the Keystone is.
        permission(KindRef::of::<PushSecret>(), &[Get, List, W, Patch, Delete]),
        permission(identity_backend_kind(), &[Get, List, W]),
        permission(KindRef::of::<Deployment>(), &[Get, List, W, Patch, Delete]),
        // Deleted only when swept from a target cluster (the Keystone's deletion).
        permission(KindRef::of::<Service>(), &[Get, List, W, Patch, Delete]),
        permission(
            KindRef::of::<PodDisruptionBudget>(),
            &[Get, List, W, Patch, Delete],
        ),
        permission(
            KindRef::of::<NetworkPolicy>(),
            &[Get, List, W, Patch, Delete],
        ),
        // The rotation RBAC and CronJobs; the admin password rotation's are deleted when it
        // is disabled, the trust-flush CronJob when spec.trustFlush is absent.
        permission(
            KindRef::of::<ServiceAccount>(),
            &[Get, List, W, Patch, Delete],
        ),
        permission(KindRef::of::<Role>(), &[Get, List, W, Patch, Delete]),
        permission(KindRef::of::<RoleBinding>(), &[Get, List, W, Patch, Delete]),
        permission(KindRef::of::<CronJob>(), &[Get, List, W, Patch, Delete]),
        // Applied while spec.autoscaling / spec.gateway is set, deleted once it is not.
        permission(
            KindRef::of::<HorizontalPodAutoscaler>(),
            &[Get, List, W, Patch, Delete],
        ),
        permission(KindRef::of::<HttpRoute>(), &[Get, List, W, Patch, Delete]),
        // Admission checks that spec.deployment.priorityClassName exists.
        permission(KindRef::of::<PriorityClass>(), &[Get]),
        permission(KindRef::of::<MariaDb>(), &[Get, List, W]),
        // Applied, and deleted when the Keystone is.
        permission(KindRef::of::<Database>(), &[Get, List, W, Patch, Delete]),
        permission(KindRef::of::<User>(), &[Get, List, W, Patch, Delete]),
        permission(KindRef::of::<Grant>(), &[Get, List, W, Patch, Delete]),
        permission(KindRef::of::<Job>(), &[Get, List, W, Create, Delete]),
        // The policy-validation Job's pods, for their termination message.
        permission(KindRef::of::<Pod>(), &[List]),
    ];
    permissions.extend(store_permissions(false));
    Description {
        name: NAME.into(),
        version: env!("CARGO_PKG_VERSION").into(),
        field_manager: FIELD_MANAGER.into(),
        primary: primary.clone(),
        primary_predicates: vec![Predicate::GenerationChanged],
        watches: vec![
            owned(KindRef::of::<Secret>(), false),
            owned(KindRef::of::<ConfigMap>(), false),
            owned(KindRef::of::<Deployment>(), false),
            owned(KindRef::of::<Job>(), false),
            owned(KindRef::of::<CronJob>(), false),
            owned(KindRef::of::<Service>(), false),
            owned(KindRef::of::<PodDisruptionBudget>(), false),
            owned(KindRef::of::<NetworkPolicy>(), false),
            owned(KindRef::of::<HorizontalPodAutoscaler>(), false),
            owned(KindRef::of::<ServiceAccount>(), false),
            owned(KindRef::of::<Role>(), false),
            owned(KindRef::of::<RoleBinding>(), false),
            owned(KindRef::of::<Certificate>(), true),
            owned(KindRef::of::<HttpRoute>(), true),
            owned(KindRef::of::<PushSecret>(), true),
            owned(KindRef::of::<Database>(), true),
            owned(KindRef::of::<User>(), true),
            owned(KindRef::of::<Grant>(), true),
            Watch::new(
                KindRef::of::<MariaDb>(),
                Mapping::FieldIndex(indexes::MARIADB.into()),
            )
            .optional(),
            // The database and admin Secrets External Secrets writes: a rotated admin
            // password re-runs the bootstrap.
            Watch::new(
                KindRef::of::<Secret>(),
                Mapping::FieldIndex(indexes::SECRET_REFS.into()),
            ),
            // A backend's changes, its status flips included, reach the Keystone it names.
            Watch::new(
                identity_backend_kind(),
                Mapping::Reference(KEYSTONE_REF.into()),
            )
            .optional(),
            // The Secrets a backend reads reach the Keystone through the backend.
            Watch::new(
                KindRef::of::<Secret>(),
                Mapping::Via {
                    kind: identity_backend_kind(),
                    index: indexes::IDENTITY_BACKEND_SECRETS.into(),
                },
            ),
        ]
        .into_iter()
        .chain(
            store_watches(false, Mapping::FieldIndex(indexes::SECRET_STORE.into()))
                .into_iter()
                .map(Watch::optional),
        )
        .collect(),
        watched_indexes: vec![KindIndex {
            kind: identity_backend_kind(),
            index: FieldIndex {
                name: indexes::IDENTITY_BACKEND_SECRETS.into(),
                description: "namespace/name of every Secret the backend reads".into(),
            },
        }],
        subresources: vec![],
        admission: vec![AdmittedKind {
            kind: primary,
            default_on: vec![Operation::Create, Operation::Update],
            validate_on: vec![Operation::Create, Operation::Update],
            failure_policy: FailurePolicy::Fail,
        }],
        egress: vec![API_EGRESS.into()],
        indexes: vec![
            FieldIndex {
                name: indexes::MARIADB.into(),
                description: "namespace/name of the MariaDB spec.database.clusterRef names".into(),
            },
            FieldIndex {
                name: indexes::SECRET_STORE.into(),
                description: "the effective secret store: the name of a ClusterSecretStore, \
                              namespace/name of a SecretStore"
                    .into(),
            },
            FieldIndex {
                name: indexes::SECRET_REFS.into(),
                description: "namespace/name of the database and admin Secrets".into(),
            },
        ],
        permissions,
        targets: TargetDescription {
            owner_label_prefix: OWNER_LABEL_PREFIX.into(),
            // Every kind of child; the host watches on a target those the target serves.
            watches: vec![
                KindRef::of::<Secret>(),
                KindRef::of::<ConfigMap>(),
                KindRef::of::<ServiceAccount>(),
                KindRef::of::<Role>(),
                KindRef::of::<RoleBinding>(),
                KindRef::of::<Deployment>(),
                KindRef::of::<Job>(),
                KindRef::of::<CronJob>(),
                KindRef::of::<Service>(),
                KindRef::of::<PodDisruptionBudget>(),
                KindRef::of::<NetworkPolicy>(),
                KindRef::of::<HorizontalPodAutoscaler>(),
                KindRef::of::<Certificate>(),
                KindRef::of::<HttpRoute>(),
                KindRef::of::<PushSecret>(),
                KindRef::of::<Database>(),
                KindRef::of::<User>(),
                KindRef::of::<Grant>(),
            ],
        },
        primary_selector: None,
    }
}

/// The prefix of the owner labels on children written to a target cluster
/// (`openstack.c5c3.io/owner-kind`, `-name`, `-namespace`; facts §2.20).
pub(crate) use wasm_operator_sdk::blocks::remote_children::OWNER_LABEL_PREFIX;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_declares_the_keystone_and_exactly_the_verbs_its_steps_use() {
        let d = describe();
        assert_eq!(d.primary.api_version, "keystone.openstack.c5c3.io/v1alpha1");
        assert_eq!(d.primary.plural, "keystones");
        let table: Vec<(String, Vec<Verb>)> = d
            .permissions
            .iter()
            .map(|p| (p.kind.kind.clone(), p.verbs.clone()))
            .collect();
        use Verb::{Create, Delete, Get, List, Patch, UpdateStatus, Watch};
        assert_eq!(
            table,
            vec![
                (
                    "Keystone".into(),
                    vec![Get, List, Watch, Patch, UpdateStatus]
                ),
                (
                    "Secret".into(),
                    vec![Get, List, Watch, Create, Patch, Delete]
                ),
                ("ConfigMap".into(), vec![Get, List, Watch, Create, Delete]),
                ("Certificate".into(), vec![Get, List, Watch, Patch, Delete]),
                ("ExternalSecret".into(), vec![Get, List, Watch]),
                ("PushSecret".into(), vec![Get, List, Watch, Patch, Delete]),
                ("KeystoneIdentityBackend".into(), vec![Get, List, Watch]),
                ("Deployment".into(), vec![Get, List, Watch, Patch, Delete]),
                ("Service".into(), vec![Get, List, Watch, Patch, Delete]),
                (
                    "PodDisruptionBudget".into(),
                    vec![Get, List, Watch, Patch, Delete]
                ),
                (
                    "NetworkPolicy".into(),
                    vec![Get, List, Watch, Patch, Delete]
                ),
                (
                    "ServiceAccount".into(),
                    vec![Get, List, Watch, Patch, Delete]
                ),
                ("Role".into(), vec![Get, List, Watch, Patch, Delete]),
                ("RoleBinding".into(), vec![Get, List, Watch, Patch, Delete]),
                ("CronJob".into(), vec![Get, List, Watch, Patch, Delete]),
                (
                    "HorizontalPodAutoscaler".into(),
                    vec![Get, List, Watch, Patch, Delete]
                ),
                ("HTTPRoute".into(), vec![Get, List, Watch, Patch, Delete]),
                ("PriorityClass".into(), vec![Get]),
                ("MariaDB".into(), vec![Get, List, Watch]),
                ("Database".into(), vec![Get, List, Watch, Patch, Delete]),
                ("User".into(), vec![Get, List, Watch, Patch, Delete]),
                ("Grant".into(), vec![Get, List, Watch, Patch, Delete]),
                ("Job".into(), vec![Get, List, Watch, Create, Delete]),
                ("Pod".into(), vec![List]),
                ("ClusterSecretStore".into(), vec![Get, List, Watch]),
                ("SecretStore".into(), vec![Get, List, Watch]),
            ]
        );
        let watched: Vec<(&str, bool)> = d
            .watches
            .iter()
            .map(|w| (w.kind.kind.as_str(), w.optional))
            .collect();
        assert_eq!(
            watched,
            [
                ("Secret", false),
                ("ConfigMap", false),
                ("Deployment", false),
                ("Job", false),
                ("CronJob", false),
                ("Service", false),
                ("PodDisruptionBudget", false),
                ("NetworkPolicy", false),
                ("HorizontalPodAutoscaler", false),
                ("ServiceAccount", false),
                ("Role", false),
                ("RoleBinding", false),
                ("Certificate", true),
                ("HTTPRoute", true),
                ("PushSecret", true),
                ("Database", true),
                ("User", true),
                ("Grant", true),
                ("MariaDB", true),
                ("Secret", false),
                ("KeystoneIdentityBackend", true),
                ("Secret", false),
                ("ClusterSecretStore", true),
                ("SecretStore", true),
            ]
        );
        let by_index = |kind: &str| {
            d.watches
                .iter()
                .find(|w| w.kind.kind == kind)
                .map(|w| w.mapping.clone())
        };
        assert_eq!(
            by_index("MariaDB"),
            Some(Mapping::FieldIndex(indexes::MARIADB.into()))
        );
        for store in ["ClusterSecretStore", "SecretStore"] {
            assert_eq!(
                by_index(store),
                Some(Mapping::FieldIndex(indexes::SECRET_STORE.into()))
            );
        }
        let secret_mappings: Vec<&Mapping> = d
            .watches
            .iter()
            .filter(|w| w.kind.kind == "Secret")
            .map(|w| &w.mapping)
            .collect();
        assert_eq!(
            secret_mappings,
            [
                &Mapping::Owner,
                &Mapping::FieldIndex(indexes::SECRET_REFS.into()),
                &Mapping::Via {
                    kind: identity_backend_kind(),
                    index: indexes::IDENTITY_BACKEND_SECRETS.into()
                },
            ]
        );
        assert_eq!(
            by_index("KeystoneIdentityBackend"),
            Some(Mapping::Reference("spec.keystoneRef.name".into()))
        );
        assert_eq!(
            d.watched_indexes
                .iter()
                .map(|x| (x.kind.kind.as_str(), x.index.name.as_str()))
                .collect::<Vec<_>>(),
            [("KeystoneIdentityBackend", indexes::IDENTITY_BACKEND_SECRETS)]
        );
        assert!(
            d.watches
                .iter()
                .take(18)
                .all(|w| w.mapping == Mapping::Owner)
        );
    }

    #[test]
    fn it_may_reach_only_the_keystone_api_port_of_services() {
        assert_eq!(describe().egress, ["*.svc.cluster.local:5000"]);
    }

    /// The CRDs of the operators Keystone builds on, as the embedded API server installs
    /// them.
    const EXTERNAL_CRDS: &[&str] = &[
        include_str!("../../../crds/external/cert-manager.yaml"),
        include_str!("../../../crds/external/mariadb-operator.yaml"),
        include_str!("../../../crds/external/external-secrets.yaml"),
        include_str!("../../../crds/external/gateway-api.yaml"),
    ];

    #[test]
    fn every_external_kind_it_declares_is_served_under_that_group_plural_and_scope() {
        let crds: Vec<serde_json::Value> = EXTERNAL_CRDS
            .iter()
            .flat_map(|text| serde_yaml_ng::Deserializer::from_str(text))
            .map(|doc| serde::Deserialize::deserialize(doc).expect("a CRD"))
            .collect();
        let description = describe();
        let external: Vec<&KindRef> = description
            .permissions
            .iter()
            .map(|p| &p.kind)
            .filter(|k| {
                // The Gateway API is a CRD group under k8s.io; the other *.k8s.io groups
                // are built in.
                k.group() == "gateway.networking.k8s.io"
                    || (k.group().contains('.')
                        && !k.group().ends_with(".k8s.io")
                        && k.group() != crate::types::GROUP)
            })
            .collect();
        let kinds: Vec<&str> = external.iter().map(|k| k.kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "Certificate",
                "ExternalSecret",
                "PushSecret",
                "HTTPRoute",
                "MariaDB",
                "Database",
                "User",
                "Grant",
                "ClusterSecretStore",
                "SecretStore"
            ]
        );
        for kind in external {
            let crd = crds
                .iter()
                .find(|c| c["spec"]["names"]["kind"] == kind.kind.as_str())
                .unwrap_or_else(|| panic!("no CRD serves {kind}"));
            assert_eq!(crd["spec"]["group"], kind.group(), "{kind}");
            assert_eq!(
                crd["spec"]["names"]["plural"],
                kind.plural.as_str(),
                "{kind}"
            );
            let scope = if kind.namespaced {
                "Namespaced"
            } else {
                "Cluster"
            };
            assert_eq!(crd["spec"]["scope"], scope, "{kind}");
            let served = crd["spec"]["versions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|v| v["name"] == kind.version() && v["served"] == true);
            assert!(served, "{kind}: version {} served", kind.version());
        }
    }
}
