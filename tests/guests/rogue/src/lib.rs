//! A test-only malicious reconciler: each pass tries one way past what it declared.
//!
//! Its primary kind is ConfigMap; it declares get/list/watch/create/patch on ConfigMaps and
//! get/list/create on Secrets, nothing else. The primary's `rogue.wasm-operator.dev/attempt`
//! annotation names the attempt (see [`attempt`]); a primary without one, or an owned
//! ConfigMap (a result), is left alone. The pass writes what the host answered into the
//! ConfigMap `<name>-result` (owned by the primary) under `outcome`: `allowed`, or the
//! error the host returned — which is what the tests read.
//!
//! The target namespace of cross-namespace attempts is `rogue.wasm-operator.dev/target`
//! (default `other`), the victim object `rogue.wasm-operator.dev/victim` (default
//! `victim`), a ConfigMap in the primary's namespace.

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use serde_json::{Value, json};
use wasm_operator_sdk::{
    ApiError, Cluster, ClusterExt, Description, Event, EventType, KindRef, ListOptions, ObjectRef,
    Outcome, Owner, Patch, Permission, ReadFrom, ReconcileError, Reconciler, Request, Verb,
};

/// The annotation naming the attempt.
pub const ATTEMPT: &str = "rogue.wasm-operator.dev/attempt";
/// The annotation naming the namespace cross-namespace attempts reach into.
pub const TARGET: &str = "rogue.wasm-operator.dev/target";
/// The annotation naming the victim ConfigMap.
pub const VICTIM: &str = "rogue.wasm-operator.dev/victim";

/// The rogue reconciler.
pub struct Rogue;

impl Reconciler for Rogue {
    fn describe() -> Description {
        let config_map = KindRef::of::<ConfigMap>();
        Description {
            name: "rogue".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            field_manager: "rogue".into(),
            primary: config_map.clone(),
            primary_predicates: vec![],
            watches: vec![],
            watched_indexes: vec![],
            subresources: vec![],
            admission: vec![],
            egress: vec![],
            indexes: vec![],
            permissions: vec![
                Permission {
                    kind: config_map,
                    verbs: vec![
                        Verb::Get,
                        Verb::List,
                        Verb::Watch,
                        Verb::Create,
                        Verb::Patch,
                    ],
                },
                Permission {
                    kind: KindRef::of::<Secret>(),
                    verbs: vec![Verb::Get, Verb::List, Verb::Create],
                },
            ],
            targets: Default::default(),
            primary_selector: None,
        }
    }

    fn reconcile(cluster: &dyn Cluster, request: &Request) -> Result<Outcome, ReconcileError> {
        let namespace = request.namespace.as_deref().unwrap_or_default();
        let Some(primary) = cluster.get_typed::<ConfigMap>(Some(namespace), &request.name)? else {
            return Ok(Outcome::done());
        };
        let annotations = primary.metadata.annotations.clone().unwrap_or_default();
        let owned = primary.metadata.owner_references.is_some();
        let Some(name) = annotations.get(ATTEMPT).filter(|_| !owned) else {
            return Ok(Outcome::done());
        };
        let target = annotations.get(TARGET).map_or("other", String::as_str);
        let victim = annotations.get(VICTIM).map_or("victim", String::as_str);
        let owner = Owner::of(&primary)?;
        let here = Here {
            cluster,
            namespace,
            name: &request.name,
            target,
            victim,
            owner: &owner,
        };
        let outcome = match attempt(&here, name) {
            Ok(()) => "allowed".to_owned(),
            Err(error) => error.to_string(),
        };
        let body = json!({"data": {"attempt": name, "outcome": outcome}});
        cluster.apply_typed::<ConfigMap>(
            Some(namespace),
            &format!("{}-result", request.name),
            body,
            Some(&owner),
        )?;
        Ok(Outcome::done())
    }
}

/// What an attempt works with.
struct Here<'a> {
    cluster: &'a dyn Cluster,
    namespace: &'a str,
    name: &'a str,
    target: &'a str,
    victim: &'a str,
    owner: &'a Owner,
}

fn config_map(namespace: &str, name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}})
}

fn reference(owner: &Owner) -> Value {
    json!({"apiVersion": owner.api_version, "kind": owner.kind, "name": owner.name,
        "uid": owner.uid, "controller": true})
}

/// The victim as an owner (its real uid, read from the cache).
fn victim_owner(here: &Here<'_>) -> Result<Owner, ApiError> {
    let victim = here
        .cluster
        .get_typed::<ConfigMap>(Some(here.namespace), here.victim)
        .map_err(|e| ApiError::Other(e.to_string()))?
        .ok_or_else(|| ApiError::NotFound(format!("victim {}", here.victim)))?;
    Owner::of(&victim).map_err(|e| ApiError::Other(e.to_string()))
}

/// Runs the attempt `name`; `Ok` when the host let it through.
fn attempt(here: &Here<'_>, name: &str) -> Result<(), ApiError> {
    let cluster = here.cluster;
    let secret = |namespace: &str, name: &str| ObjectRef::of::<Secret>(Some(namespace), name);
    match name {
        // Valid: a Secret of its own namespace.
        "own-namespace" => cluster
            .get(&secret(here.namespace, "mine"), ReadFrom::Server)
            .map(drop),
        "other-namespace" => cluster
            .get(&secret(here.target, "theirs"), ReadFrom::Server)
            .map(drop),
        "every-namespace" => cluster
            .list(&KindRef::of::<Secret>(), None, &ListOptions::default())
            .map(drop),
        "create-elsewhere" => cluster
            .create(&config_map(here.target, &format!("{}-planted", here.name)))
            .map(drop),
        "foreign-owner" => {
            let victim = victim_owner(here)?;
            let body = config_map(here.namespace, &format!("{}-adopted", here.name));
            cluster.apply(&body, Some(&victim)).map(drop)
        }
        "forged-owner-uid" => {
            let forged = Owner {
                uid: "00000000-0000-0000-0000-000000000000".into(),
                ..here.owner.clone()
            };
            let body = config_map(here.namespace, &format!("{}-forged", here.name));
            cluster.apply(&body, Some(&forged)).map(drop)
        }
        "owner-in-body" => {
            let victim = victim_owner(here)?;
            let mut body = config_map(here.namespace, &format!("{}-smuggled", here.name));
            body["metadata"]["ownerReferences"] = json!([reference(&victim)]);
            cluster.create(&body).map(drop)
        }
        "owner-in-patch" => {
            let victim = victim_owner(here)?;
            let object = ObjectRef::of::<ConfigMap>(Some(here.namespace), here.victim);
            let patch = Patch::Merge(
                json!({"metadata": {"ownerReferences": [reference(&victim), reference(here.owner)]}}),
            );
            cluster.patch(&object, &patch, None).map(drop)
        }
        // Valid: a child created with the primary as its owner in the body.
        "own-child" => {
            let mut body = config_map(here.namespace, &format!("{}-child", here.name));
            body["metadata"]["ownerReferences"] = json!([reference(here.owner)]);
            cluster.create(&body).map(drop)
        }
        "service-account-token" => {
            let body = json!({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
                "metadata": {"name": format!("{}-token", here.name), "namespace": here.namespace,
                    "annotations": {"kubernetes.io/service-account.name": "default"}}});
            cluster.create(&body).map(drop)
        }
        // Declares no subresource: a ServiceAccount token is refused.
        "undeclared-token" => wasm_operator_sdk::token::request_token(
            cluster,
            here.namespace,
            "default",
            "openbao",
            std::time::Duration::from_secs(600),
        )
        .map(drop)
        .map_err(|e| match e {
            wasm_operator_sdk::Error::Api(api) => api,
            other => ApiError::Other(other.to_string()),
        }),
        "event-on-another-object" => {
            let regarding = ObjectRef::of::<ConfigMap>(Some(here.namespace), here.victim);
            cluster.record_event(&regarding, &event())
        }
        // Valid: an event about the primary itself.
        "event-on-primary" => {
            let regarding = ObjectRef::of::<ConfigMap>(Some(here.namespace), here.name);
            cluster.record_event(&regarding, &event())
        }
        other => Err(ApiError::Other(format!("unknown attempt {other:?}"))),
    }
}

fn event() -> Event {
    Event {
        event_type: EventType::Normal,
        reason: "Rogue".into(),
        action: "Attempt".into(),
        note: "an event the rogue plugin records".into(),
    }
}

wasm_operator_sdk::export_reconciler!(Rogue);
