//! Deployments: status as the deployment controller writes it, and rollouts in steps.
//!
//! A new Deployment first reports its replicas created but none ready (`Available=False`,
//! `MinimumReplicasUnavailable`), then, a step later, all ready. A changed pod template
//! rolls out one replica per two steps, as a RollingUpdate with one surge pod: the new pod
//! is created (replicas = desired + 1, updatedReplicas counts it, it is not ready), then it
//! is ready and an old pod is gone. `Progressing` is `ReplicaSetUpdated` while the rollout
//! runs and `NewReplicaSetAvailable` once every replica is updated and ready. A change of
//! `spec.replicas` alone is reported at once. What a rollout has done lives in the actor:
//! after a restart a Deployment that reported itself rolled out is taken as such.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use k8s_openapi::api::apps::v1::Deployment;
use kube::ResourceExt as _;
use serde_json::{Value, json};
use sha2::Digest as _;

use super::{
    CONTROLLER_MANAGER, STEP, WorkloadError, condition, conditions_of, counter, holds, patch_status,
};

/// Set (to any value but `"false"`) on a Deployment, this annotation holds its rollout (or
/// its first pods' readiness) at the step it has reached; removing it lets it go on.
pub const HOLD_ROLLOUT: &str = "actors.wasm-operator.dev/hold-rollout";

/// Where one Deployment's rollout is.
struct Rollout {
    uid: String,
    /// The template hash of the newest ReplicaSet.
    hash: String,
    /// Pods of the newest template (the surging one included).
    updated: i64,
    /// Whether the newest updated pod is not ready yet.
    surging: bool,
    /// Whether an older template still has pods (false for a new Deployment).
    rolling: bool,
    /// Whether the pods of a new Deployment are not ready yet.
    starting: bool,
    last_step: Instant,
}

/// The rollouts the actor tracks, by namespace/name.
#[derive(Default)]
pub(crate) struct Rollouts {
    by_key: BTreeMap<(String, String), Rollout>,
}

impl Rollouts {
    /// Drops what it knows of Deployments no longer in the cluster.
    pub(crate) fn forget_missing(&mut self, live: &[Arc<Deployment>]) {
        self.by_key.retain(|(ns, name), r| {
            live.iter().any(|d| {
                d.namespace().as_deref() == Some(ns)
                    && &d.name_any() == name
                    && d.uid().as_deref() == Some(&r.uid)
            })
        });
    }

    /// Advances `d`'s rollout when a step is due and writes its status when it changed.
    pub(crate) async fn step(
        &mut self,
        client: &kube::Client,
        d: &Deployment,
    ) -> Result<(), WorkloadError> {
        if d.metadata.deletion_timestamp.is_some() {
            return Ok(());
        }
        let (Some(ns), Some(uid)) = (d.namespace(), d.uid()) else {
            return Ok(());
        };
        let name = d.name_any();
        let spec = &d.spec;
        let desired = i64::from(spec.replicas.unwrap_or(1)).max(0);
        let hash = template_hash(&spec.template);
        let status = serde_json::to_value(&d.status).ok();
        let held = d
            .annotations()
            .get(HOLD_ROLLOUT)
            .is_some_and(|v| v != "false");
        let key = (ns.clone(), name.clone());
        let due = |r: &Rollout| !held && r.last_step.elapsed() >= STEP;
        match self.by_key.get_mut(&key) {
            Some(r) if r.uid == uid && r.hash == hash => {
                if due(r) {
                    advance(r, desired);
                }
            }
            Some(r) if r.uid == uid => {
                // A new template: its first pod is created at once.
                r.hash = hash;
                r.updated = desired.min(1);
                r.surging = desired > 0;
                r.rolling = desired > 0;
                r.starting = false;
                r.last_step = Instant::now();
            }
            _ => {
                let rolled_out = status.as_ref().is_some_and(|s| {
                    s["observedGeneration"].as_i64() == d.metadata.generation
                        && s["updatedReplicas"].as_i64().unwrap_or(0) == desired
                        && s["readyReplicas"].as_i64().unwrap_or(0) == desired
                });
                self.by_key.insert(
                    key.clone(),
                    Rollout {
                        uid,
                        hash,
                        updated: desired,
                        surging: false,
                        rolling: false,
                        starting: !rolled_out && desired > 0,
                        last_step: Instant::now(),
                    },
                );
            }
        }
        let Some(r) = self.by_key.get_mut(&key) else {
            return Ok(());
        };
        if !r.rolling {
            // Scaling without a new template is reported at once.
            r.updated = desired;
        }
        let want = desired_status(d, r, desired, status.as_ref());
        if holds(status.as_ref(), &want) {
            return Ok(());
        }
        patch_status::<Deployment>(client, &ns, &name, CONTROLLER_MANAGER, want).await
    }
}

/// One step: the surge pod becomes ready (an old pod goes), or the next new pod is created.
fn advance(r: &mut Rollout, desired: i64) {
    if r.starting {
        r.starting = false;
    } else if r.surging {
        r.surging = false;
    } else if r.rolling && r.updated < desired {
        r.updated += 1;
        r.surging = true;
    } else {
        return;
    }
    if !r.surging && r.updated >= desired {
        r.rolling = false;
    }
    r.last_step = Instant::now();
}

/// The status the deployment controller would write for `r`.
fn desired_status(d: &Deployment, r: &Rollout, desired: i64, status: Option<&Value>) -> Value {
    let ready_new = r.updated - i64::from(r.surging);
    let old = if r.rolling { desired - ready_new } else { 0 };
    let replicas = old + r.updated;
    let ready = if r.starting { 0 } else { old + ready_new };
    let max_unavailable = max_unavailable(d, desired);
    let previous = conditions_of(status);
    let rs = format!("{}-{}", d.name_any(), r.hash);
    let available = ready >= desired - max_unavailable;
    let available_condition = if available {
        condition(
            &previous,
            "Available",
            true,
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
            true,
        )
    } else {
        condition(
            &previous,
            "Available",
            false,
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
            true,
        )
    };
    let complete = !r.rolling && !r.surging && !r.starting;
    let progressing = if complete {
        condition(
            &previous,
            "Progressing",
            true,
            "NewReplicaSetAvailable",
            &format!("ReplicaSet \"{rs}\" has successfully progressed."),
            true,
        )
    } else {
        condition(
            &previous,
            "Progressing",
            true,
            "ReplicaSetUpdated",
            &format!("ReplicaSet \"{rs}\" is progressing."),
            true,
        )
    };
    json!({
        "observedGeneration": d.metadata.generation,
        "replicas": counter(replicas),
        "updatedReplicas": counter(r.updated),
        "readyReplicas": counter(ready),
        "availableReplicas": counter(ready),
        "unavailableReplicas": counter((desired - ready).max(0)),
        "conditions": [available_condition, progressing],
    })
}

/// `spec.strategy.rollingUpdate.maxUnavailable` of `desired` (a count or a percentage,
/// rounded down; 25% when unset; 0 for Recreate).
fn max_unavailable(d: &Deployment, desired: i64) -> i64 {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    let strategy = d.spec.strategy.as_ref();
    if strategy.and_then(|s| s.type_.as_deref()) == Some("Recreate") {
        return 0;
    }
    match strategy
        .and_then(|s| s.rolling_update.as_ref())
        .and_then(|r| r.max_unavailable.as_ref())
    {
        Some(IntOrString::Int(n)) => i64::from(*n),
        Some(IntOrString::String(p)) => {
            let percent = p.trim_end_matches('%').parse::<i64>().unwrap_or(25);
            desired * percent / 100
        }
        None => desired * 25 / 100,
    }
}

/// A pod-template-hash: ten characters of the template's SHA-256.
fn template_hash(template: &k8s_openapi::api::core::v1::PodTemplateSpec) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let bytes = serde_json::to_vec(template).unwrap_or_default();
    sha2::Sha256::digest(&bytes)
        .iter()
        .take(10)
        .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
        .collect()
}
