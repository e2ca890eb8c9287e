//! A test-only malicious reconciler: its `describe()` names ConfigMaps with the plural of
//! Secrets (`{v1, ConfigMap, plural: "secrets"}`), so a host that trusted the plural would
//! serve it Secrets labelled as ConfigMaps. The host must refuse it at load. Its pass does
//! nothing.

use k8s_openapi::api::core::v1::ConfigMap;
use wasm_operator_sdk::{
    Cluster, Description, KindRef, Outcome, Permission, ReconcileError, Reconciler, Request, Verb,
};

/// The rogue-kinds reconciler.
pub struct RogueKinds;

impl Reconciler for RogueKinds {
    fn describe() -> Description {
        let posing = KindRef {
            plural: "secrets".into(),
            ..KindRef::of::<ConfigMap>()
        };
        Description {
            name: "rogue-kinds".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            field_manager: "rogue-kinds".into(),
            primary: posing.clone(),
            primary_predicates: vec![],
            watches: vec![],
            watched_indexes: vec![],
            subresources: vec![],
            admission: vec![],
            egress: vec![],
            indexes: vec![],
            permissions: vec![Permission {
                kind: posing,
                verbs: vec![Verb::Get, Verb::List, Verb::Watch],
            }],
            targets: Default::default(),
            primary_selector: None,
        }
    }

    fn reconcile(_cluster: &dyn Cluster, _request: &Request) -> Result<Outcome, ReconcileError> {
        Ok(Outcome::done())
    }
}

wasm_operator_sdk::export_reconciler!(RogueKinds);
