//! A test-only reconciler of `tests.wasm-operator.dev/v1` Widgets, which have a status.
//!
//! A pass reads the Widget from the cache and, by `spec.behaviour`: `loop` spins forever,
//! `allocate` allocates until memory runs out, `panic` panics; otherwise it writes
//! `status.observedValue` = `spec.value` (keeping the rest of the status). A Widget labelled
//! [`IGNORED_LABEL`] is not its primary (contract 1.4's selection): never cached, never passed.

use wasm_operator_sdk::{
    Cluster, Description, KindRef, ObjectRef, Outcome, Permission, ReadFrom, ReconcileError,
    Reconciler, Request, Verb,
};

/// The label that takes a Widget out of the plugin's primaries.
pub const IGNORED_LABEL: &str = "tests.wasm-operator.dev/ignored";

/// The Widget kind.
pub fn widget_kind() -> KindRef {
    KindRef {
        api_version: "tests.wasm-operator.dev/v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
        namespaced: true,
    }
}

/// The widget reconciler.
pub struct Widgets;

impl Reconciler for Widgets {
    fn describe() -> Description {
        Description {
            name: "widget".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            field_manager: "widget-reconciler".into(),
            primary: widget_kind(),
            primary_predicates: vec![],
            watches: vec![],
            watched_indexes: vec![],
            subresources: vec![],
            admission: vec![],
            egress: vec![],
            indexes: vec![],
            permissions: vec![Permission {
                kind: widget_kind(),
                verbs: vec![Verb::Get, Verb::List, Verb::Watch, Verb::UpdateStatus],
            }],
            targets: Default::default(),
            primary_selector: Some(format!("!{IGNORED_LABEL}")),
        }
    }

    fn reconcile(cluster: &dyn Cluster, request: &Request) -> Result<Outcome, ReconcileError> {
        let kind = widget_kind();
        let r = ObjectRef {
            api_version: kind.api_version,
            kind: kind.kind,
            namespace: request.namespace.clone(),
            name: request.name.clone(),
        };
        let Some(mut widget) = cluster
            .get(&r, ReadFrom::Cache)
            .map_err(wasm_operator_sdk::Error::from)?
        else {
            return Ok(Outcome::done());
        };
        match widget.pointer("/spec/behaviour").and_then(|b| b.as_str()) {
            Some("loop") => spin(),
            Some("allocate") => allocate(),
            Some("panic") => panic!("the widget panics on purpose"),
            Some("fail") => {
                return Err(ReconcileError::Transient(
                    "the widget fails on purpose".into(),
                ));
            }
            _ => {}
        }
        let value = widget.pointer("/spec/value").cloned().unwrap_or_default();
        if widget.pointer("/status/observedValue") == Some(&value) {
            return Ok(Outcome::done());
        }
        if !widget.get("status").is_some_and(|s| s.is_object()) {
            widget["status"] = serde_json::json!({});
        }
        widget["status"]["observedValue"] = value;
        cluster
            .update_status(&widget)
            .map_err(wasm_operator_sdk::Error::from)?;
        Ok(Outcome::done())
    }

    fn index(_name: &str, _object: &serde_json::Value) -> Vec<String> {
        Vec::new()
    }
}

fn spin() -> ! {
    let mut n: u64 = 0;
    loop {
        n = std::hint::black_box(n.wrapping_add(1));
    }
}

fn allocate() -> ! {
    let mut blocks: Vec<Vec<u8>> = Vec::new();
    loop {
        blocks.push(vec![1u8; 1 << 20]);
        std::hint::black_box(&blocks);
    }
}

wasm_operator_sdk::export_reconciler!(Widgets);
