//! A test-only plugin that admits writes of two `tests.wasm-operator.dev/v1` kinds
//! (contract 1.2), the subject of the admission tests.
//!
//! **Gadget** (failure policy `Fail`), on create and update:
//! - default: `spec.size` missing → 1 (typed, with a warning `spec.size defaulted to 1`);
//!   `spec.mode: rename` also renames the object (which the host must refuse);
//! - validate: `spec.size` at most [`max_size`] (10 at version 0.1.0, 5 at 0.2.0 — the
//!   hot-swap test), a warning above half of it; at most one Gadget per namespace with
//!   `spec.primary: true` (a list of siblings from the cache); `spec.mode: trap` panics;
//!   `spec.mode: write` tries to create a ConfigMap and is refused with the host's answer;
//!   `spec.mode: spin` never returns; `spec.mode: hog` asks for 1 GiB of memory.
//! - on delete: a Gadget with `spec.protected: true` is refused.
//!
//! **Gizmo** (failure policy `Ignore`), on create: the modes `trap`, `spin` and `hog` as
//! for a Gadget; anything else is allowed.
//!
//! Its reconciler does nothing.

use serde_json::{Value, json};
use wasm_operator_sdk::admission::{
    self, AdmissionRequest, AdmittedKind, Defaulted, Denial, FailurePolicy, FieldErrors, Operation,
    Validated,
};
use wasm_operator_sdk::{
    Cluster, Description, KindRef, ListOptions, Outcome, Permission, ReconcileError, Reconciler,
    Request, Verb,
};

fn kind(name: &str, plural: &str) -> KindRef {
    KindRef {
        api_version: "tests.wasm-operator.dev/v1".into(),
        kind: name.into(),
        plural: plural.into(),
        namespaced: true,
    }
}

/// The Gadget kind.
pub fn gadget_kind() -> KindRef {
    kind("Gadget", "gadgets")
}

/// The Gizmo kind.
pub fn gizmo_kind() -> KindRef {
    kind("Gizmo", "gizmos")
}

/// The largest `spec.size` this version allows.
pub fn max_size() -> u64 {
    if env!("CARGO_PKG_VERSION").starts_with("0.1.") {
        10
    } else {
        5
    }
}

#[derive(serde::Deserialize, serde::Serialize)]
struct Gadget {
    #[serde(default)]
    spec: GadgetSpec,
}

#[derive(serde::Deserialize, serde::Serialize, Default)]
struct GadgetSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
}

/// The gatekeeper.
pub struct Gatekeeper;

impl Reconciler for Gatekeeper {
    fn describe() -> Description {
        let read = vec![Verb::Get, Verb::List, Verb::Watch];
        Description {
            name: "gatekeeper".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            field_manager: "gatekeeper".into(),
            primary: gadget_kind(),
            primary_predicates: vec![],
            watches: vec![],
            watched_indexes: vec![],
            subresources: vec![],
            admission: vec![
                AdmittedKind {
                    kind: gadget_kind(),
                    default_on: vec![Operation::Create, Operation::Update],
                    validate_on: vec![Operation::Create, Operation::Update, Operation::Delete],
                    failure_policy: FailurePolicy::Fail,
                },
                AdmittedKind {
                    kind: gizmo_kind(),
                    default_on: vec![],
                    validate_on: vec![Operation::Create],
                    failure_policy: FailurePolicy::Ignore,
                },
            ],
            egress: vec![],
            indexes: vec![],
            permissions: vec![
                Permission {
                    kind: gadget_kind(),
                    verbs: read.clone(),
                },
                Permission {
                    kind: gizmo_kind(),
                    verbs: read,
                },
                Permission {
                    kind: KindRef {
                        api_version: "v1".into(),
                        kind: "ConfigMap".into(),
                        plural: "configmaps".into(),
                        namespaced: true,
                    },
                    verbs: vec![Verb::Create],
                },
            ],
            targets: Default::default(),
            primary_selector: None,
        }
    }

    fn reconcile(_cluster: &dyn Cluster, _request: &Request) -> Result<Outcome, ReconcileError> {
        Ok(Outcome::done())
    }

    fn default_object(
        _cluster: &dyn Cluster,
        request: &AdmissionRequest,
    ) -> Result<Defaulted, Denial> {
        let mut defaulted_size = false;
        let mut answer = admission::default_typed::<Gadget>(request, |gadget| {
            if gadget.spec.size.is_none() {
                gadget.spec.size = Some(1);
                defaulted_size = true;
            }
        })?;
        if defaulted_size {
            answer.warnings.push("spec.size defaulted to 1".into());
        }
        if answer.object.pointer("/spec/mode") == Some(&json!("rename")) {
            answer.object["metadata"]["name"] = json!(format!("{}-renamed", request.name));
        }
        Ok(answer)
    }

    fn validate_object(cluster: &dyn Cluster, request: &AdmissionRequest) -> Validated {
        let spec = |object: &Option<Value>, field: &str| {
            object
                .as_ref()
                .and_then(|o| o.pointer(&format!("/spec/{field}")))
                .cloned()
        };
        let mode = spec(&request.object, "mode");
        match mode.as_ref().and_then(Value::as_str) {
            Some("trap") => panic!("the gatekeeper traps on purpose"),
            Some("spin") => loop {
                std::hint::black_box(());
            },
            Some("hog") => {
                let hoard = vec![1u8; 1 << 30];
                std::hint::black_box(&hoard);
            }
            _ => {}
        }
        if request.kind.kind == "Gizmo" {
            return Validated::default();
        }
        let mut validated = Validated::default();
        if request.operation == Operation::Delete {
            if spec(&request.old_object, "protected") == Some(json!(true)) {
                validated.denial = Some(Denial {
                    message: format!("Gadget {:?} is protected", request.name),
                    fields: vec![],
                });
            }
            return validated;
        }
        if mode == Some(json!("write")) {
            let written = cluster.create(&json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "written-in-admission", "namespace": request.namespace}}));
            validated.denial = Some(Denial {
                message: match written {
                    Ok(_) => "the write succeeded".into(),
                    Err(e) => format!("the write was refused: {e}"),
                },
                fields: vec![],
            });
            return validated;
        }
        let mut errors = FieldErrors::new();
        let max = max_size();
        if let Some(size) = spec(&request.object, "size").and_then(|s| s.as_u64()) {
            if size > max {
                errors.invalid("spec.size", &json!(size), &format!("must be at most {max}"));
            } else if size > max / 2 {
                validated.warnings.push(format!(
                    "spec.size {size} is more than half of the limit {max}"
                ));
            }
        }
        if spec(&request.object, "primary") == Some(json!(true)) {
            match cluster.list(
                &gadget_kind(),
                request.namespace.as_deref(),
                &ListOptions::default(),
            ) {
                Ok(siblings) => {
                    let other = siblings.iter().find(|g| {
                        g.pointer("/spec/primary") == Some(&json!(true))
                            && g.pointer("/metadata/name").and_then(Value::as_str)
                                != Some(request.name.as_str())
                    });
                    if let Some(other) = other {
                        let name = other
                            .pointer("/metadata/name")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        errors.invalid(
                            "spec.primary",
                            &json!(true),
                            &format!("Gadget {name} is already the primary of this namespace"),
                        );
                    }
                }
                Err(e) => {
                    errors.forbidden("spec.primary", &format!("cannot list Gadgets: {e}"));
                }
            }
        }
        validated.denial = errors.into_result(request).err();
        validated
    }
}

wasm_operator_sdk::export_reconciler!(Gatekeeper);
