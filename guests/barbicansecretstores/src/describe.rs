//! What the host loads the BarbicanSecretStore plugin with: its kind, watches,
//! permissions, egress and admission.
//!
//! Least privilege: exactly what the controller of facts §3.6 and the admission use.
//!
//! | Kind | Verbs | Why |
//! |---|---|---|
//! | BarbicanSecretStore | get, list, watch, patch, update-status | the primary; its status is written; admission lists the siblings (single default, one OpenBao store per Barbican); patch for a managed store's remote-children annotation and finalizer |
//! | Barbican | get, list, watch | the parent (step 1), watched (optional): its creation and changes wake its stores |
//! | Secret | get, list, patch, delete | the brownfield credentials and CA bundle, the instance's CA, the projection Secret (get); the managed store's `{store}-approle`, applied (patch); list and delete for the sweep of a target cluster |
//! | Deployment | get, list, watch | ConfigProjected reads the Barbican's Deployment (step 3), watched |
//! | OpenBaoCluster | get, list, watch | a managed store's instance (Available), watched (optional) |
//! | ServiceAccount `token` (subresource) | create | the provisioner's bound token (managed) |
//!
//! Events (Warning, named after the failed condition's reason) need no declaration: a
//! plugin records them on its primary. Only a managed store of a targeted Barbican holds a
//! finalizer ([`remote`](crate::remote)); a local store's Secret is owned.
//!
//! Egress ([`EGRESS`]): `*.svc:8200` and `*.svc.cluster.local:8200`.
//! DECISION: the host's allow-list takes `host:port` patterns whose host is a DNS name or
//! `*.` and a DNS suffix — no bare `*`, no IP, no port wildcard — so "any brownfield
//! server" cannot be declared, and nothing narrower than a suffix per port can be. A
//! managed instance is `https://{i}.{ns}.svc:8200` (the SAN of its certificate); the two
//! patterns are the narrowest covering every Service on OpenBao's port, under either
//! spelling of the cluster domain, so a brownfield server that is (or is fronted by) an
//! in-cluster Service on 8200 is reachable too. A brownfield server elsewhere (e.g.
//! `https://openbao.example.com:8200`) is refused by the host before a socket is opened,
//! and the store reports CredentialsReady False `OpenBaoUnreachable` with the host's
//! "refused: … is not a destination the plugin declared"; reaching it needs its
//! `host:port` added here (a rebuild), which is deliberate: a plugin that may call any
//! host is one a compromised store spec can point at anything.
//!
//! DECISION: the Barbican's Deployment is watched (CobaltCore wakes on the Barbican only
//! and polls every 30 s), so a rollout that mounts the section turns ConfigProjected True
//! without waiting for the poll; both watches map through the
//! [`BARBICAN_REF`](crate::indexes::BARBICAN_REF) index, since the Deployment carries the
//! Barbican's name. The OpenBaoCluster watch maps through
//! [`INSTANCE_REF`](crate::indexes::INSTANCE_REF), so an instance turning Available wakes
//! exactly its stores. The Barbican and OpenBaoCluster watches are optional: the plugin
//! loads, and its stores wait, while those CRDs are not installed. Secrets are not
//! watched: the gates poll (30 s) and a ready store revalidates (15 min, or the re-mint
//! point).

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Secret;
use wasm_operator_sdk::admission::{AdmittedKind, FailurePolicy, Operation};
use wasm_operator_sdk::blocks::apply::FIELD_MANAGER;
use wasm_operator_sdk::token::token_permission;
use wasm_operator_sdk::{
    Description, FieldIndex, KindRef, Mapping, Permission, Predicate, Verb, Watch,
};

use crate::barbican_ref::{BARBICAN_KIND, BARBICAN_PLURAL};
use crate::indexes;
use crate::instance::openbao_cluster_kind;
use crate::types::{API_VERSION, BarbicanSecretStore};

/// The plugin's name.
pub const NAME: &str = "barbicansecretstores";

/// Where the plugin sends HTTPS requests: OpenBao's port on in-cluster Services.
pub const EGRESS: [&str; 2] = ["*.svc:8200", "*.svc.cluster.local:8200"];

/// The Barbican kind (`barbican.openstack.c5c3.io/v1alpha1`).
pub fn barbican_kind() -> KindRef {
    KindRef {
        api_version: API_VERSION.into(),
        kind: BARBICAN_KIND.into(),
        plural: BARBICAN_PLURAL.into(),
        namespaced: true,
    }
}

fn permission(kind: KindRef, verbs: &[Verb]) -> Permission {
    Permission {
        kind,
        verbs: verbs.to_vec(),
    }
}

/// The plugin's description.
pub fn describe() -> Description {
    use Verb::{Delete, Get, List, Patch, UpdateStatus, Watch as W};
    let primary = KindRef::of::<BarbicanSecretStore>();
    let by_barbican = || Mapping::FieldIndex(indexes::BARBICAN_REF.into());
    let by_instance = Mapping::FieldIndex(indexes::INSTANCE_REF.into());
    Description {
        name: NAME.into(),
        version: env!("CARGO_PKG_VERSION").into(),
        field_manager: FIELD_MANAGER.into(),
        primary: primary.clone(),
        primary_predicates: vec![Predicate::GenerationChanged],
        watches: vec![
            Watch::new(barbican_kind(), by_barbican()).optional(),
            Watch::new(KindRef::of::<Deployment>(), by_barbican()),
            Watch::new(openbao_cluster_kind(), by_instance).optional(),
        ],
        indexes: vec![
            FieldIndex {
                name: indexes::BARBICAN_REF.into(),
                description: "namespace/name of the Barbican spec.barbicanRef.name names".into(),
            },
            FieldIndex {
                name: indexes::INSTANCE_REF.into(),
                description: "namespace/name of the OpenBaoCluster spec.openBao.instanceRef.name \
                              names"
                    .into(),
            },
        ],
        permissions: vec![
            permission(primary.clone(), &[Get, List, W, Patch, UpdateStatus]),
            permission(barbican_kind(), &[Get, List, W]),
            permission(KindRef::of::<Secret>(), &[Get, List, Patch, Delete]),
            permission(KindRef::of::<Deployment>(), &[Get, List, W]),
            permission(openbao_cluster_kind(), &[Get, List, W]),
        ],
        watched_indexes: vec![],
        subresources: vec![token_permission()],
        egress: EGRESS.iter().map(|e| (*e).to_owned()).collect(),
        admission: vec![AdmittedKind {
            kind: primary,
            default_on: vec![Operation::Create, Operation::Update],
            validate_on: vec![Operation::Create, Operation::Update],
            failure_policy: FailurePolicy::Fail,
        }],
        // A managed store of a targeted Barbican mints on the target (owner labels); what it
        // reads there is polled (nothing on a target maps to a store by a watch).
        targets: wasm_operator_sdk::TargetDescription {
            owner_label_prefix: wasm_operator_sdk::blocks::remote_children::OWNER_LABEL_PREFIX
                .into(),
            watches: Vec::new(),
        },
        primary_selector: None,
    }
}

#[cfg(test)]
#[path = "describe_tests.rs"]
mod tests;
