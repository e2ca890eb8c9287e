//! Writing one Secret: a create or a JSON merge patch, nothing else.
//!
//! A missing Secret is created with its declared type, the labels and the keys of the plan.
//! An existing Secret gets a JSON merge patch with only the added keys and the labels that
//! differ, conditional on the resourceVersion the pass read: the API server refuses it with
//! a conflict when the Secret changed after that read. No Secret is updated, deleted or
//! applied server-side, and none gets an owner reference.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Map, Value, json};
use wasm_operator_sdk::planner::SecretPlan;
use wasm_operator_sdk::{ApiError, ObjectRef, Patch};

use crate::freshness::ReadSecret;
use crate::labels;
use crate::pass::Pass;

/// What a Secret needs written: `None` when nothing.
pub fn needed(
    plan: &SecretPlan,
    existing: Option<&ReadSecret>,
    wanted_labels: &BTreeMap<String, String>,
) -> Option<Write> {
    match existing {
        None if plan.add.is_empty() => None,
        None => Some(Write::Create),
        Some(secret) => {
            let labels = labels::differing(secret.head.metadata.labels.as_ref(), wanted_labels);
            (!plan.add.is_empty() || !labels.is_empty()).then_some(Write::Patch { labels })
        }
    }
}

/// The write a Secret needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// Create the missing Secret.
    Create,
    /// Merge-patch the added keys and these labels.
    Patch { labels: BTreeMap<String, String> },
}

/// Writes `plan` to the Secret read as `existing`.
pub fn write(
    pass: &Pass<'_>,
    plan: &SecretPlan,
    existing: Option<&ReadSecret>,
    wanted_labels: &BTreeMap<String, String>,
) -> Result<(), ApiError> {
    let Some(write) = needed(plan, existing, wanted_labels) else {
        return Ok(());
    };
    let data: BTreeMap<String, ByteString> = plan
        .add
        .iter()
        .map(|e| (e.key.clone(), ByteString(e.value.clone())))
        .collect();
    match write {
        Write::Create => {
            let secret = Secret {
                metadata: ObjectMeta {
                    name: Some(plan.name.clone()),
                    namespace: pass.namespace.clone(),
                    labels: (!wanted_labels.is_empty()).then(|| wanted_labels.clone()),
                    ..Default::default()
                },
                type_: Some(plan.secret_type.clone()),
                data: Some(data),
                ..Default::default()
            };
            let mut body = encode(&secret)?;
            if let Value::Object(map) = &mut body {
                map.insert("apiVersion".into(), json!("v1"));
                map.insert("kind".into(), json!("Secret"));
            }
            pass.cluster.create(&body).map(drop)
        }
        Write::Patch { labels } => {
            let mut patch = Map::new();
            if !data.is_empty() {
                patch.insert("data".into(), encode(&data)?);
            }
            if !labels.is_empty() {
                patch.insert("metadata".into(), json!({ "labels": labels }));
            }
            let object = ObjectRef::of::<Secret>(pass.namespace.as_deref(), &plan.name);
            let read = existing.and_then(|s| s.head.resource_version());
            pass.cluster
                .patch(&object, &Patch::Merge(Value::Object(patch)), read)
                .map(drop)
        }
    }
}

fn encode<T: serde::Serialize>(value: &T) -> Result<Value, ApiError> {
    serde_json::to_value(value)
        .map_err(|e| ApiError::Other(format!("cannot encode the Secret: {e}")))
}
