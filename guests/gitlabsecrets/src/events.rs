//! The events a pass records on its GitLabSecrets.
//!
//! | Type    | Reason              | When |
//! |---------|---------------------|------|
//! | Normal  | SecretTypeKept      | an existing Secret has another type than the declared one |
//! | Warning | SecretDeclaredTwice | another GitLabSecrets of the namespace declares the Secret |
//!
//! Both repeat on every pass that finds their cause and writes the Secret or needs no write;
//! the host aggregates repeats into a series. A failed event is logged, never fails a pass.
//!
//! DECISION: a reported Secret counts as one that needs no write (nothing of it is written),
//! so it gets its events; a Secret whose read, plan or write failed gets none.

use wasm_operator_sdk::{Event, EventType, ObjectRef, log};

use crate::pass::Pass;
use crate::types::GitLabSecrets;

/// The action of every event.
const ACTION: &str = "Reconcile";

/// An existing Secret keeps a type other than the declared one.
pub fn type_kept(secret: &str, existing: &str, declared: &str) -> Event {
    Event {
        event_type: EventType::Normal,
        reason: "SecretTypeKept".into(),
        action: ACTION.into(),
        note: format!(
            "Secret {secret} has type {existing}, not the declared {declared}; it keeps its type"
        ),
    }
}

/// Another GitLabSecrets of the namespace declares the Secret.
pub fn declared_twice(secret: &str, others: &[String]) -> Event {
    Event {
        event_type: EventType::Warning,
        reason: "SecretDeclaredTwice".into(),
        action: ACTION.into(),
        note: format!(
            "Secret {secret} is also declared by GitLabSecrets {}; it keeps its labels",
            others.join(", ")
        ),
    }
}

/// Records the events the pass collected.
pub fn record(pass: &mut Pass<'_>) {
    let regarding = ObjectRef::of::<GitLabSecrets>(pass.namespace.as_deref(), &pass.name);
    for event in std::mem::take(&mut pass.events) {
        if let Err(e) = pass.cluster.record_event(&regarding, &event) {
            log::warn(&format!("{regarding}: cannot record {}: {e}", event.reason));
        }
    }
}
