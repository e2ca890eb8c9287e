//! A reconcile pass as a table of named steps (facts §2.1, §2.2).
//!
//! A step returns `Ok(None)` to let the pass go on, `Ok(Some(after))` to end the pass and
//! run again after `after`, or an error to end the pass. The pass stops at the first step
//! that does not return `Ok(None)`. [`run_pass`] writes the status at the end of every
//! pass, whatever the steps returned.
//!
//! A parallel group ([`Step::parallel`]) runs every [`Member`], whatever the others
//! returned. Each member runs on its own clone of the pass state, taken when the group
//! starts, so no member sees what a peer did during the group. Once all have run, each
//! member's copy is merged back into the pass state, in member order, by
//! [`GroupState::merge_member`]: only the member's own condition type (see
//! [`adopt_condition`]) and its writes to the object's annotations and resourceVersion (see
//! [`adopt_metadata_writes`]) come back, from every member, including those that
//! succeeded before a peer failed and those that failed. Anything else a member changed in
//! its copy is dropped. The group's result is the first member error in member order, else
//! the shortest non-zero requeue of its members, else `Ok(None)`.
//!
//! DECISION: the members of a group run one after another. A guest has one thread, so the
//! group keeps CobaltCore's semantics (a deep copy of the CR per member, every member runs,
//! first error wins, shortest requeue, own condition merged back) without its goroutines.
//!
//! DECISION: a zero requeue (`Some(Duration::ZERO)`) means "run again now" (CobaltCore's
//! `Requeue: true`). A single step returning it ends the pass. In a group it is dropped,
//! as CobaltCore's shortest non-zero `RequeueAfter` drops Requeue-only results: a group
//! whose members return only zero requeues lets the pass go on.

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

pub use crate::blocks::conditions::adopt_condition;

/// What a step returns: go on (`None`), requeue after a while, or fail.
pub type StepResult<E> = Result<Option<Duration>, E>;

type StepFn<'a, S, E> = Box<dyn FnMut(&mut S) -> StepResult<E> + 'a>;

/// One named entry of a pipeline: a step, or a parallel group of [`Member`]s.
pub struct Step<'a, S, E> {
    name: &'static str,
    run: StepFn<'a, S, E>,
}

/// A member of a parallel group: a step that owns one condition type.
pub struct Member<'a, S, E> {
    name: &'static str,
    condition_type: &'static str,
    run: StepFn<'a, S, E>,
}

/// A pass state a parallel group can run on: cloned for each member, merged back after.
pub trait GroupState: Clone {
    /// Adopts into `self` what one member hands back. `member` is the copy the member ran
    /// on, cloned from `before` (the pass state when the group started); `self` already
    /// holds what earlier members handed back.
    ///
    /// An implementation adopts the member's condition of `condition_type` and nothing
    /// else of its conditions ([`adopt_condition`]), and its writes to the object's
    /// annotations and resourceVersion ([`adopt_metadata_writes`]).
    fn merge_member(&mut self, before: &Self, member: &Self, condition_type: &str);
}

impl<'a, S, E> Step<'a, S, E> {
    /// A step named `name` running `run` on the pass state.
    pub fn new(name: &'static str, run: impl FnMut(&mut S) -> StepResult<E> + 'a) -> Self {
        Self {
            name,
            run: Box::new(run),
        }
    }

    /// A member of a parallel group, named `name`, that sets the condition
    /// `condition_type`: the one condition type merged back from its copy of the state.
    pub fn member(
        name: &'static str,
        condition_type: &'static str,
        run: impl FnMut(&mut S) -> StepResult<E> + 'a,
    ) -> Member<'a, S, E> {
        Member {
            name,
            condition_type,
            run: Box::new(run),
        }
    }

    /// A group named `name` whose members all run, each on its own copy of the state.
    ///
    /// # Panics
    ///
    /// When two members name the same condition type: one would clobber the other's
    /// condition, so such a pipeline is a programming error.
    pub fn parallel(name: &'static str, mut members: Vec<Member<'a, S, E>>) -> Self
    where
        S: GroupState + 'a,
        E: 'a,
    {
        let mut types = BTreeSet::new();
        for member in &members {
            assert!(
                types.insert(member.condition_type),
                "parallel group {name}: members share the condition type {}",
                member.condition_type
            );
        }
        Self::new(name, move |state: &mut S| run_group(&mut members, state))
    }

    /// The step's name.
    pub fn name(&self) -> &'static str {
        self.name
    }
}

impl<S, E> Member<'_, S, E> {
    /// The member's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The condition type the member owns.
    pub fn condition_type(&self) -> &'static str {
        self.condition_type
    }
}

/// Runs `steps` in order and stops at the first that returns a requeue or an error.
pub fn run_steps<S, E>(steps: &mut [Step<'_, S, E>], state: &mut S) -> StepResult<E> {
    for step in steps.iter_mut() {
        let result = (step.run)(state);
        if !matches!(result, Ok(None)) {
            crate::log::debug(&format!("pass ended at step {}", step.name));
            return result;
        }
    }
    Ok(None)
}

/// Runs every member on a copy of `state` taken now, merges each copy back in member
/// order, and returns the first error in member order, else the shortest non-zero
/// requeue.
fn run_group<S: GroupState, E>(members: &mut [Member<'_, S, E>], state: &mut S) -> StepResult<E> {
    let before = state.clone();
    let mut copies = Vec::with_capacity(members.len());
    let mut first_error = None;
    let mut requeues = Vec::new();
    for member in members.iter_mut() {
        let mut copy = before.clone();
        match (member.run)(&mut copy) {
            Err(e) => {
                crate::log::debug(&format!("group member {} failed", member.name));
                first_error.get_or_insert(e);
            }
            Ok(requeue) => requeues.push(requeue),
        }
        copies.push(copy);
    }
    for (member, copy) in members.iter().zip(&copies) {
        state.merge_member(&before, copy, member.condition_type);
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(shortest_requeue(requeues)),
    }
}

/// The shortest non-zero requeue among `results`; `None` when none asks for one. Zero
/// requeues ("run again now") are dropped, as CobaltCore's group result drops
/// Requeue-only results.
pub fn shortest_requeue(results: impl IntoIterator<Item = Option<Duration>>) -> Option<Duration> {
    results
        .into_iter()
        .flatten()
        .filter(|after| !after.is_zero())
        .min()
}

/// Adopts into `into` the writes a group member made to its copy of the object's
/// metadata: every annotation `member` added, changed or removed relative to `before`
/// (annotations a peer wrote and this member never touched are kept), and the
/// resourceVersion when the member's differs from `before`'s (the member wrote the
/// object). Nothing else of the member's metadata is adopted.
pub fn adopt_metadata_writes(into: &mut ObjectMeta, before: &ObjectMeta, member: &ObjectMeta) {
    let before_annotations = before.annotations.clone().unwrap_or_default();
    let member_annotations = member.annotations.clone().unwrap_or_default();
    let keys: BTreeSet<&String> = before_annotations
        .keys()
        .chain(member_annotations.keys())
        .collect();
    for key in keys {
        let (was, is) = (before_annotations.get(key), member_annotations.get(key));
        if was == is {
            continue;
        }
        let annotations = into.annotations.get_or_insert_with(Default::default);
        match is {
            Some(value) => {
                annotations.insert(key.clone(), value.clone());
            }
            None => {
                annotations.remove(key);
            }
        }
    }
    if member.resource_version != before.resource_version {
        into.resource_version.clone_from(&member.resource_version);
    }
}

/// Runs `steps`, then `write_status` with what they returned, whatever that was.
///
/// A step error wins over a status write error; a status write error is returned when
/// the steps succeeded.
pub fn run_pass<S, E>(
    steps: &mut [Step<'_, S, E>],
    state: &mut S,
    write_status: impl FnOnce(&mut S, &StepResult<E>) -> Result<(), E>,
) -> StepResult<E> {
    let result = run_steps(steps, state);
    let written = write_status(state, &result);
    match (result, written) {
        (Err(e), _) => Err(e),
        (Ok(_), Err(e)) => Err(e),
        (Ok(requeue), Ok(())) => Ok(requeue),
    }
}

#[cfg(test)]
#[path = "pipeline_tests.rs"]
mod tests;
