//! A test-only reconciler of `tests.wasm-operator.dev/v1` Parents and their Satellites, the
//! shape of a CobaltCore parent and its satellite family, over contract 1.1's watches:
//!
//! - Satellites are watched **optionally** (their CRD may be installed after the operator
//!   starts) and map to the Parent named by `spec.parentRef.name` (**reference**).
//! - Two **indexes on Satellites**: `satellites-by-parent` (`ns/spec.parentRef.name`) and
//!   `satellite-secrets` (`ns/spec.secretName`).
//! - Secrets map **via** `satellite-secrets` to the Satellites naming them, and on to their
//!   Parent.
//!
//! A pass writes to the Parent's status: `served` (the kind probe of Satellites), and then
//! either `satellites` (the names listed through `satellites-by-parent` from the cache) and
//! `secrets` (each satellite's Secret's `data.v`), or `listError` (`not-served` when the
//! cluster does not serve Satellites). Primary changes pass only on a new generation, so its
//! own status writes start no pass.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use wasm_operator_sdk::{
    ApiError, Cluster, Description, FieldIndex, KindIndex, KindRef, ListOptions, Mapping,
    ObjectRef, Outcome, Permission, Predicate, ReadFrom, ReconcileError, Reconciler, Request, Verb,
    Watch,
};

/// The index of Satellites by the Parent they name.
pub const BY_PARENT: &str = "satellites-by-parent";
/// The index of Satellites by the Secret they name.
pub const SECRETS: &str = "satellite-secrets";

fn kind(kind: &str, plural: &str) -> KindRef {
    KindRef {
        api_version: "tests.wasm-operator.dev/v1".into(),
        kind: kind.into(),
        plural: plural.into(),
        namespaced: true,
    }
}

/// The Parent kind.
pub fn parent_kind() -> KindRef {
    kind("Parent", "parents")
}

/// The Satellite kind.
pub fn satellite_kind() -> KindRef {
    kind("Satellite", "satellites")
}

fn secret_kind() -> KindRef {
    KindRef {
        api_version: "v1".into(),
        kind: "Secret".into(),
        plural: "secrets".into(),
        namespaced: true,
    }
}

/// The watcher reconciler.
pub struct Watcher;

impl Reconciler for Watcher {
    fn describe() -> Description {
        let read = vec![Verb::Get, Verb::List, Verb::Watch];
        Description {
            name: "watcher".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            field_manager: "watcher-reconciler".into(),
            primary: parent_kind(),
            primary_predicates: vec![Predicate::GenerationChanged],
            watches: vec![
                Watch::new(
                    satellite_kind(),
                    Mapping::Reference("spec.parentRef.name".into()),
                )
                .optional(),
                Watch::new(
                    secret_kind(),
                    Mapping::Via {
                        kind: satellite_kind(),
                        index: SECRETS.into(),
                    },
                ),
            ],
            indexes: vec![],
            watched_indexes: [
                (BY_PARENT, "namespace/name of the Parent a Satellite names"),
                (SECRETS, "namespace/name of the Secret a Satellite names"),
            ]
            .into_iter()
            .map(|(name, description)| KindIndex {
                kind: satellite_kind(),
                index: FieldIndex {
                    name: name.into(),
                    description: description.into(),
                },
            })
            .collect(),
            subresources: vec![],
            admission: vec![],
            egress: vec![],
            permissions: vec![
                Permission {
                    kind: parent_kind(),
                    verbs: vec![Verb::Get, Verb::List, Verb::Watch, Verb::UpdateStatus],
                },
                Permission {
                    kind: satellite_kind(),
                    verbs: read.clone(),
                },
                Permission {
                    kind: secret_kind(),
                    verbs: read,
                },
            ],
            targets: Default::default(),
            primary_selector: None,
        }
    }

    fn reconcile(cluster: &dyn Cluster, request: &Request) -> Result<Outcome, ReconcileError> {
        let namespace = request.namespace.clone().unwrap_or_default();
        let parent_ref = ObjectRef {
            api_version: parent_kind().api_version,
            kind: parent_kind().kind,
            namespace: request.namespace.clone(),
            name: request.name.clone(),
        };
        let Some(mut parent) = cluster.get(&parent_ref, ReadFrom::Cache).map_err(api)? else {
            return Ok(Outcome::done());
        };
        let served = cluster.served(&satellite_kind()).map_err(api)?;
        let mut status = json!({"served": served});
        if served {
            let by_parent = ListOptions {
                label_selector: None,
                field_index: Some((BY_PARENT.into(), format!("{namespace}/{}", request.name))),
            };
            let satellites = cluster
                .list(&satellite_kind(), Some(&namespace), &by_parent)
                .map_err(api)?;
            let mut names = Vec::new();
            let mut secrets = BTreeMap::new();
            for satellite in &satellites {
                let name = text(satellite, "/metadata/name");
                if let Some(secret) = satellite
                    .pointer("/spec/secretName")
                    .and_then(Value::as_str)
                {
                    let secret_ref = ObjectRef {
                        api_version: "v1".into(),
                        kind: "Secret".into(),
                        namespace: Some(namespace.clone()),
                        name: secret.into(),
                    };
                    let value = cluster
                        .get(&secret_ref, ReadFrom::Cache)
                        .map_err(api)?
                        .map(|s| text(&s, "/data/v"));
                    secrets.insert(name.clone(), value);
                }
                names.push(name);
            }
            names.sort();
            status["satellites"] = json!(names);
            status["secrets"] = json!(secrets);
        } else {
            let listed = cluster.list(&satellite_kind(), Some(&namespace), &ListOptions::default());
            status["listError"] = json!(match listed {
                Err(ApiError::NotServed(_)) => "not-served".to_owned(),
                Err(other) => format!("other: {other}"),
                Ok(_) => "listed".to_owned(),
            });
        }
        if parent.get("status") != Some(&status) {
            parent["status"] = status;
            cluster.update_status(&parent).map_err(api)?;
        }
        Ok(Outcome::done())
    }

    fn index(name: &str, object: &Value) -> Vec<String> {
        let field = match name {
            BY_PARENT => "/spec/parentRef/name",
            SECRETS => "/spec/secretName",
            _ => return Vec::new(),
        };
        let namespace = text(object, "/metadata/namespace");
        object
            .pointer(field)
            .and_then(Value::as_str)
            .map(|v| vec![format!("{namespace}/{v}")])
            .unwrap_or_default()
    }
}

fn text(object: &Value, pointer: &str) -> String {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn api(error: ApiError) -> ReconcileError {
    wasm_operator_sdk::Error::from(error).into()
}

wasm_operator_sdk::export_reconciler!(Watcher);
