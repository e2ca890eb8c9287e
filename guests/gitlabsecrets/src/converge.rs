//! Bringing a group of Secrets planned together to their plan: one Secret of spec.secrets,
//! or the CA, TLS and chain Secrets of a certificate set.
//!
//! The recipe, for the group's Secrets in order:
//!
//! 1. Find whether another GitLabSecrets of the namespace declares each (then it gets no
//!    labels), from the cache through the field index.
//! 2. Read them from the cache and plan without generating.
//! 3. Nothing to write and nothing reported: done, they are what the plan says.
//! 4. Read them again past the cache; plan again (without generating) when one changed,
//!    and stop at 3 when now nothing is to be written or reported.
//! 5. Check that the cached GitLabSecrets is current, once per pass; otherwise the pass
//!    requeues, having written nothing of this group.
//! 6. Plan with generating when the plan without it was not ready (this is when a new
//!    certificate set is issued).
//! 7. A reported plan is written nowhere. Otherwise write each Secret in order and stop at
//!    the first write that fails: that Secret names the error, the later ones that an
//!    earlier write failed, and none of the group is ready.
//!
//! A Secret whose read, plan or write failed keeps the readyUnits it had, minus the units
//! no longer declared: a plan says which are (one against no Secret when the failure came
//! before any plan); only when the planner fails on the entries themselves are they all kept.
//!
//! DECISIONs: a reported Secret gets no write at all, not even of labels that differ (the
//! planner adds nothing to it, and the spec's patch carries "the added keys and the labels");
//! the planner is asked without generating first for spec.secrets too, so no key is
//! generated before the checks of steps 4 and 5.

use std::collections::BTreeMap;

use wasm_operator_sdk::ReadFrom;
use wasm_operator_sdk::planner::{PlanError, SecretPlan};

use crate::declared::EntryError;
use crate::error::{Error, Result};
use crate::events;
use crate::freshness::{self, ReadSecret, changed};
use crate::pass::{Pass, SecretResult};
use crate::write;

/// Plans a group from its Secrets (in group order), generating or not.
pub type PlanFn<'f> =
    dyn Fn(&[Option<ReadSecret>], bool) -> Result<Vec<SecretPlan>, PlanError> + 'f;

/// How converging a group ended.
#[derive(Debug)]
pub enum Converged {
    /// The group's results, in group order.
    Done(Vec<SecretResult>),
    /// The cached GitLabSecrets is stale: requeue without writing.
    Stale,
}

/// One Secret of a group, as the pass found it.
struct Member<'n> {
    name: &'n str,
    labels: BTreeMap<String, String>,
    declared_by_others: Vec<String>,
}

/// Why a group stopped short: its Secret `index` failed with `error`.
struct Failed {
    index: usize,
    error: Error,
    /// The latest plans, which say which units are still declared.
    plans: Option<Vec<SecretPlan>>,
    /// Whether the Secrets before `index` were written (a write failed).
    written_before: bool,
}

impl Failed {
    fn new(index: usize, error: Error) -> Self {
        Self {
            index,
            error,
            plans: None,
            written_before: false,
        }
    }

    fn with_plans(mut self, plans: &[SecretPlan]) -> Self {
        self.plans = Some(plans.to_vec());
        self
    }
}

/// Why the recipe stopped short.
enum Stop {
    /// A Secret of the group failed; the pass goes on.
    Secret(Failed),
    /// The pass fails.
    Pass(Error),
}

impl From<Failed> for Stop {
    fn from(failed: Failed) -> Self {
        Self::Secret(failed)
    }
}

/// Converges the Secrets `names`, planned together by `plan`.
pub fn converge(pass: &mut Pass<'_>, names: &[&str], plan: &PlanFn<'_>) -> Result<Converged> {
    match steps(pass, names, plan) {
        Ok(converged) => Ok(converged),
        Err(Stop::Pass(error)) => Err(error),
        Err(Stop::Secret(mut f)) => {
            if f.plans.is_none() {
                // Failed before any plan: the units still declared come from the entries
                // alone, planned against no Secret (nothing is generated).
                let none = vec![None; names.len()];
                f.plans = plan(&none, false).ok().filter(|p| p.len() == names.len());
            }
            Ok(Converged::Done(failed(
                pass,
                names,
                &f.error,
                f.index,
                f.plans.as_deref(),
                f.written_before,
            )))
        }
    }
}

/// The recipe.
fn steps(pass: &mut Pass<'_>, names: &[&str], plan: &PlanFn<'_>) -> Result<Converged, Stop> {
    // The plans of the group, or the Secret the planner names as failed.
    let plan = |read: &[Option<ReadSecret>], generate: bool| -> Result<Vec<SecretPlan>, Failed> {
        let failed = |source: PlanError| {
            let i = names.iter().position(|n| *n == source.subject).unwrap_or(0);
            let secret = names[i].to_owned();
            Failed::new(i, Error::Plan { secret, source })
        };
        let plans = plan(read, generate).map_err(failed)?;
        if plans.len() != names.len() {
            return Err(failed(PlanError {
                subject: names[0].to_owned(),
                message: format!(
                    "the planner returned {} plans for {} Secrets",
                    plans.len(),
                    names.len()
                ),
            }));
        }
        Ok(plans)
    };

    // 1: who else declares them.
    let mut members = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let others = declaring_others(pass, name).map_err(|e| Failed::new(i, e))?;
        members.push(Member {
            name,
            labels: if others.is_empty() {
                pass.labels.clone()
            } else {
                BTreeMap::new()
            },
            declared_by_others: others,
        });
    }

    // 2, 3: from the cache, without generating.
    let read = |pass: &Pass<'_>, from| {
        freshness::read_secrets(pass, names, from).map_err(|(i, e)| Failed::new(i, e))
    };
    let cached = read(pass, ReadFrom::Cache)?;
    let mut probe = plan(&cached, false)?;
    if !needs_anything(&members, &probe, &cached) {
        return Ok(Converged::Done(settled(pass, &members, &probe)));
    }

    // 4: past the cache.
    let fresh = read(pass, ReadFrom::Server).map_err(|f| f.with_plans(&probe))?;
    if cached.iter().zip(&fresh).any(|(c, f)| changed(c, f)) {
        probe = plan(&fresh, false)?;
        if !needs_anything(&members, &probe, &fresh) {
            return Ok(Converged::Done(settled(pass, &members, &probe)));
        }
    }

    // 5, 6: only on a current GitLabSecrets is anything generated or written.
    if !pass.primary_current && !freshness::primary_is_current(pass).map_err(Stop::Pass)? {
        return Ok(Converged::Stale);
    }
    let plans = if probe.iter().all(|p| p.ready) {
        probe
    } else {
        plan(&fresh, true).map_err(|f| f.with_plans(&probe))?
    };

    // 7: write in order, unless reported.
    if plans.iter().all(|p| p.ready && p.reports.is_empty()) {
        for (i, (member, plan)) in members.iter().zip(&plans).enumerate() {
            write::write(pass, plan, fresh[i].as_ref(), &member.labels).map_err(|source| {
                let secret = member.name.to_owned();
                Failed {
                    written_before: true,
                    ..Failed::new(i, Error::WriteSecret { secret, source }).with_plans(&plans)
                }
            })?;
        }
    }
    Ok(Converged::Done(settled(pass, &members, &plans)))
}

/// Whether anything of the group is to be written or reported.
fn needs_anything(
    members: &[Member<'_>],
    plans: &[SecretPlan],
    read: &[Option<ReadSecret>],
) -> bool {
    members
        .iter()
        .zip(plans)
        .zip(read)
        .any(|((member, plan), secret)| {
            !plan.ready
                || !plan.reports.is_empty()
                || write::needed(plan, secret.as_ref(), &member.labels).is_some()
        })
}

/// The results of a group the pass brought to its plans (or found reported), and their
/// events.
fn settled(pass: &mut Pass<'_>, members: &[Member<'_>], plans: &[SecretPlan]) -> Vec<SecretResult> {
    members
        .iter()
        .zip(plans)
        .map(|(member, plan)| {
            if let Some((existing, declared)) = &plan.type_kept {
                pass.events
                    .push(events::type_kept(member.name, existing, declared));
            }
            if !member.declared_by_others.is_empty() {
                pass.events.push(events::declared_twice(
                    member.name,
                    &member.declared_by_others,
                ));
            }
            SecretResult {
                name: member.name.to_owned(),
                ready: plan.ready && plan.reports.is_empty(),
                ready_units: plan.next_ready_units.clone(),
                reports: plan.reports.clone(),
                failure: None,
            }
        })
        .collect()
}

/// The results of a group whose entry does not decode: each of its Secrets fails with the
/// entry's field and keeps the readyUnits it had; nothing is read, planned or written.
pub fn undecodable(pass: &Pass<'_>, names: &[&str], error: &EntryError) -> Vec<SecretResult> {
    names
        .iter()
        .map(|name| SecretResult {
            name: (*name).to_owned(),
            ready: false,
            ready_units: pass.old_ready_units(name),
            reports: Vec::new(),
            failure: Some(Error::Entry {
                secret: (*name).to_owned(),
                source: error.clone(),
            }),
        })
        .collect()
}

/// The results of a group whose Secret `i` failed with `error`: the others are not
/// written, except those before it when `written_before` (a write failed), which are
/// written but not ready.
fn failed(
    pass: &Pass<'_>,
    names: &[&str],
    error: &Error,
    i: usize,
    plans: Option<&[SecretPlan]>,
    written_before: bool,
) -> Vec<SecretResult> {
    names
        .iter()
        .enumerate()
        .map(|(j, name)| {
            let old = pass.old_ready_units(name);
            let ready_units = match plans.and_then(|p| p.get(j)) {
                Some(plan) => old
                    .into_iter()
                    .filter(|u| plan.declared_units.contains(u))
                    .collect(),
                None => old,
            };
            let failure = if j == i {
                Some(error.clone())
            } else if j < i && written_before {
                None
            } else {
                Some(Error::SetNotWritten {
                    secret: (*name).to_owned(),
                    earlier: format!("Secret {}", names[i]),
                })
            };
            SecretResult {
                name: (*name).to_owned(),
                ready: false,
                ready_units,
                reports: Vec::new(),
                failure,
            }
        })
        .collect()
}

/// The other GitLabSecrets of the namespace that declare `secret`, as the cache holds them.
fn declaring_others(pass: &Pass<'_>, secret: &str) -> Result<Vec<String>> {
    let key = wasm_operator_sdk::object::object_key(pass.namespace.as_deref(), secret);
    match pass.declared_by_others() {
        Ok(declared) => Ok(declared.get(&key).cloned().unwrap_or_default()),
        Err(source) => Err(Error::ListDeclaring {
            secret: secret.to_owned(),
            source: source.clone(),
        }),
    }
}
