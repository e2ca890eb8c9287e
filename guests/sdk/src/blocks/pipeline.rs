//! A reconcile pass as a table of named steps.
//!
//! A step returns `Ok(None)` to let the pass go on, `Ok(Some(after))` to end the pass and
//! run again after `after`, or an error to end the pass. The pass stops at the first step
//! that does not return `Ok(None)`. A parallel group runs every member, whatever the others
//! returned; its result is the first member error in member order, else the shortest
//! requeue of its members, else `Ok(None)`. [`run_pass`] writes the status at the end of
//! every pass, whatever the steps returned.
//!
//! DECISION: the members of a parallel group run one after another. A guest has one thread,
//! so the group keeps CobaltCore's semantics (every member runs, first error wins,
//! shortest requeue) without its goroutines, and without the deep copy of the CR each
//! goroutine needed: members share the pass state in turn.
//!
//! DECISION: a zero requeue (`Some(Duration::ZERO)`) means "run again now". It ends the pass
//! like any requeue and is the shortest in a group.

use std::time::Duration;

/// What a step returns: go on (`None`), requeue after a while, or fail.
pub type StepResult<E> = Result<Option<Duration>, E>;

type StepFn<'a, S, E> = Box<dyn FnMut(&mut S) -> StepResult<E> + 'a>;

/// One named entry of a pipeline: a step, or a group whose members all run.
pub enum Step<'a, S, E> {
    /// A single step.
    One {
        /// The step's name, used in logs.
        name: &'static str,
        run: StepFn<'a, S, E>,
    },
    /// A group whose members all run.
    Parallel {
        /// The group's name, used in logs.
        name: &'static str,
        members: Vec<Step<'a, S, E>>,
    },
}

impl<'a, S, E> Step<'a, S, E> {
    /// A step named `name` running `run` on the pass state.
    pub fn new(name: &'static str, run: impl FnMut(&mut S) -> StepResult<E> + 'a) -> Self {
        Self::One {
            name,
            run: Box::new(run),
        }
    }

    /// A group named `name` whose members all run.
    pub fn parallel(name: &'static str, members: Vec<Step<'a, S, E>>) -> Self {
        Self::Parallel { name, members }
    }

    /// The step's name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::One { name, .. } | Self::Parallel { name, .. } => name,
        }
    }

    fn run(&mut self, state: &mut S) -> StepResult<E> {
        match self {
            Self::One { run, .. } => run(state),
            Self::Parallel { members, .. } => run_group(members, state),
        }
    }
}

/// Runs `steps` in order and stops at the first that returns a requeue or an error.
pub fn run_steps<S, E>(steps: &mut [Step<'_, S, E>], state: &mut S) -> StepResult<E> {
    for step in steps.iter_mut() {
        let result = step.run(state);
        if !matches!(result, Ok(None)) {
            crate::log::debug(&format!("pass ended at step {}", step.name()));
            return result;
        }
    }
    Ok(None)
}

/// Runs every member; the first error in member order wins, else the shortest requeue.
fn run_group<S, E>(members: &mut [Step<'_, S, E>], state: &mut S) -> StepResult<E> {
    let mut first_error = None;
    let mut requeues = Vec::new();
    for member in members.iter_mut() {
        match member.run(state) {
            Err(e) if first_error.is_none() => first_error = Some(e),
            Err(_) => {}
            Ok(requeue) => requeues.push(requeue),
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(shortest_requeue(requeues)),
    }
}

/// The shortest requeue among `results`; `None` when none requeues.
pub fn shortest_requeue(results: impl IntoIterator<Item = Option<Duration>>) -> Option<Duration> {
    results.into_iter().flatten().min()
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
mod tests {
    use super::*;

    type Trace = Vec<&'static str>;

    fn step(name: &'static str, result: StepResult<String>) -> Step<'static, Trace, String> {
        Step::new(name, move |trace: &mut Trace| {
            trace.push(name);
            result.clone()
        })
    }

    fn secs(s: u64) -> Option<Duration> {
        Some(Duration::from_secs(s))
    }

    #[test]
    fn steps_returning_nothing_run_in_order_and_the_pass_goes_on() {
        let mut steps = vec![step("a", Ok(None)), step("b", Ok(None))];
        let mut trace = Trace::new();
        assert_eq!(run_steps(&mut steps, &mut trace), Ok(None));
        assert_eq!(trace, ["a", "b"]);
    }

    #[test]
    fn the_pass_stops_at_the_first_step_that_requeues() {
        let mut steps = vec![step("a", Ok(secs(15))), step("b", Ok(None))];
        let mut trace = Trace::new();
        assert_eq!(run_steps(&mut steps, &mut trace), Ok(secs(15)));
        assert_eq!(trace, ["a"]);
    }

    #[test]
    fn the_pass_stops_at_the_first_step_that_fails() {
        let mut steps = vec![
            step("a", Ok(None)),
            step("b", Err("boom".into())),
            step("c", Ok(None)),
        ];
        let mut trace = Trace::new();
        assert_eq!(run_steps(&mut steps, &mut trace), Err("boom".into()));
        assert_eq!(trace, ["a", "b"]);
    }

    #[test]
    fn a_zero_requeue_still_ends_the_pass() {
        let mut steps = vec![step("a", Ok(secs(0))), step("b", Ok(None))];
        let mut trace = Trace::new();
        assert_eq!(run_steps(&mut steps, &mut trace), Ok(secs(0)));
        assert_eq!(trace, ["a"]);
    }

    #[test]
    fn a_parallel_group_runs_every_member_and_returns_the_shortest_requeue() {
        let group = Step::parallel(
            "group",
            vec![
                step("a", Ok(secs(60))),
                step("b", Ok(None)),
                step("c", Ok(secs(10))),
            ],
        );
        let mut steps = vec![group, step("after", Ok(None))];
        let mut trace = Trace::new();
        assert_eq!(run_steps(&mut steps, &mut trace), Ok(secs(10)));
        assert_eq!(trace, ["a", "b", "c"]);
    }

    #[test]
    fn a_parallel_group_runs_every_member_even_after_one_fails_and_returns_the_first_error() {
        let group = Step::parallel(
            "group",
            vec![
                step("a", Ok(secs(10))),
                step("b", Err("first".into())),
                step("c", Err("second".into())),
            ],
        );
        let mut steps = vec![group];
        let mut trace = Trace::new();
        assert_eq!(run_steps(&mut steps, &mut trace), Err("first".into()));
        assert_eq!(trace, ["a", "b", "c"]);
    }

    #[test]
    fn a_parallel_group_whose_members_all_go_on_lets_the_pass_go_on() {
        let group = Step::parallel("group", vec![step("a", Ok(None)), step("b", Ok(None))]);
        let mut steps = vec![group, step("after", Ok(None))];
        let mut trace = Trace::new();
        assert_eq!(run_steps(&mut steps, &mut trace), Ok(None));
        assert_eq!(trace, ["a", "b", "after"]);
    }

    #[test]
    fn the_status_is_written_after_a_pass_that_completes_requeues_or_fails() {
        let cases: Vec<(&str, StepResult<String>)> = vec![
            ("completes", Ok(None)),
            ("requeues", Ok(secs(15))),
            ("fails", Err("boom".into())),
        ];
        for (case, result) in cases {
            let mut steps = vec![step("only", result.clone())];
            let mut trace = Trace::new();
            let got = run_pass(&mut steps, &mut trace, |trace, seen| {
                assert_eq!(seen, &result, "{case}");
                trace.push("status");
                Ok(())
            });
            assert_eq!(got, result, "{case}");
            assert_eq!(trace, ["only", "status"], "{case}");
        }
    }

    #[test]
    fn a_step_error_wins_over_a_status_write_error() {
        let mut steps = vec![step("a", Err("step".into()))];
        let got = run_pass(&mut steps, &mut Trace::new(), |_, _| Err("status".into()));
        assert_eq!(got, Err("step".into()));
    }

    #[test]
    fn a_status_write_error_fails_an_otherwise_successful_pass() {
        let mut steps = vec![step("a", Ok(secs(5)))];
        let got = run_pass(&mut steps, &mut Trace::new(), |_, _| Err("status".into()));
        assert_eq!(got, Err("status".into()));
    }
}
