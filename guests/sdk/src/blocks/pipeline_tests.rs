use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use super::*;
use crate::blocks::conditions::{FALSE, NewCondition, TRUE, find, is_true, set_condition};

/// The state of the sequential tests: deliberately not `Clone`, so a pipeline without a
/// group needs no `Clone` state.
#[derive(Default)]
struct Trace(Vec<&'static str>);

fn step(name: &'static str, result: StepResult<String>) -> Step<'static, Trace, String> {
    Step::new(name, move |trace: &mut Trace| {
        trace.0.push(name);
        result.clone()
    })
}

fn secs(s: u64) -> Option<Duration> {
    Some(Duration::from_secs(s))
}

#[test]
fn steps_returning_nothing_run_in_order_and_the_pass_goes_on() {
    let mut steps = vec![step("a", Ok(None)), step("b", Ok(None))];
    let mut trace = Trace::default();
    assert_eq!(run_steps(&mut steps, &mut trace), Ok(None));
    assert_eq!(trace.0, ["a", "b"]);
}

#[test]
fn the_pass_stops_at_the_first_step_that_requeues() {
    let mut steps = vec![step("a", Ok(secs(15))), step("b", Ok(None))];
    let mut trace = Trace::default();
    assert_eq!(run_steps(&mut steps, &mut trace), Ok(secs(15)));
    assert_eq!(trace.0, ["a"]);
}

#[test]
fn the_pass_stops_at_the_first_step_that_fails() {
    let mut steps = vec![
        step("a", Ok(None)),
        step("b", Err("boom".into())),
        step("c", Ok(None)),
    ];
    let mut trace = Trace::default();
    assert_eq!(run_steps(&mut steps, &mut trace), Err("boom".into()));
    assert_eq!(trace.0, ["a", "b"]);
}

#[test]
fn a_zero_requeue_of_a_single_step_still_ends_the_pass() {
    let mut steps = vec![step("a", Ok(secs(0))), step("b", Ok(None))];
    let mut trace = Trace::default();
    assert_eq!(run_steps(&mut steps, &mut trace), Ok(secs(0)));
    assert_eq!(trace.0, ["a"]);
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
        let mut trace = Trace::default();
        let got = run_pass(&mut steps, &mut trace, |trace, seen| {
            assert_eq!(seen, &result, "{case}");
            trace.0.push("status");
            Ok(())
        });
        assert_eq!(got, result, "{case}");
        assert_eq!(trace.0, ["only", "status"], "{case}");
    }
}

#[test]
fn a_step_error_wins_over_a_status_write_error() {
    let mut steps = vec![step("a", Err("step".into()))];
    let got = run_pass(&mut steps, &mut Trace::default(), |_, _| {
        Err("status".into())
    });
    assert_eq!(got, Err("step".into()));
}

#[test]
fn a_status_write_error_fails_an_otherwise_successful_pass() {
    let mut steps = vec![step("a", Ok(secs(5)))];
    let got = run_pass(&mut steps, &mut Trace::default(), |_, _| {
        Err("status".into())
    });
    assert_eq!(got, Err("status".into()));
}

// --- Parallel groups ---

/// A CR as a group sees it: metadata and conditions, merged the way the contract asks.
#[derive(Clone, Default, Debug)]
struct Cr {
    meta: ObjectMeta,
    conditions: Vec<Condition>,
    /// A pass-local value: never merged back.
    scratch: Vec<&'static str>,
}

impl GroupState for Cr {
    fn merge_member(&mut self, before: &Self, member: &Self, condition_type: &str) {
        adopt_condition(&mut self.conditions, &member.conditions, condition_type);
        adopt_metadata_writes(&mut self.meta, &before.meta, &member.meta);
    }
}

fn set(cr: &mut Cr, type_: &str, status: &str) {
    set_condition(
        &mut cr.conditions,
        &NewCondition {
            type_,
            status,
            reason: "R",
            message: "m",
            observed_generation: 1,
        },
    );
}

type Log = Rc<RefCell<Vec<&'static str>>>;

/// A member owning `type_` that logs its name, sets `type_` True and returns `result`.
fn member(
    log: &Log,
    name: &'static str,
    type_: &'static str,
    result: StepResult<String>,
) -> Member<'static, Cr, String> {
    let log = Rc::clone(log);
    Step::member(name, type_, move |cr: &mut Cr| {
        log.borrow_mut().push(name);
        set(cr, type_, TRUE);
        result.clone()
    })
}

fn run_group_of(members: Vec<Member<'static, Cr, String>>, cr: &mut Cr) -> StepResult<String> {
    let mut steps = vec![Step::parallel("group", members)];
    run_steps(&mut steps, cr)
}

#[test]
fn a_group_runs_every_member_and_returns_the_shortest_requeue() {
    let log = Log::default();
    let members = vec![
        member(&log, "a", "A", Ok(secs(60))),
        member(&log, "b", "B", Ok(None)),
        member(&log, "c", "C", Ok(secs(10))),
    ];
    let mut steps = vec![Step::parallel("group", members)];
    assert_eq!(run_steps(&mut steps, &mut Cr::default()), Ok(secs(10)));
    assert_eq!(*log.borrow(), ["a", "b", "c"]);
}

#[test]
fn a_group_runs_every_member_even_after_one_fails_and_returns_the_first_error() {
    let log = Log::default();
    let members = vec![
        member(&log, "a", "A", Ok(secs(10))),
        member(&log, "b", "B", Err("first".into())),
        member(&log, "c", "C", Err("second".into())),
    ];
    assert_eq!(
        run_group_of(members, &mut Cr::default()),
        Err("first".into())
    );
    assert_eq!(*log.borrow(), ["a", "b", "c"]);
}

#[test]
fn a_group_whose_members_all_go_on_lets_the_pass_go_on() {
    let log = Log::default();
    let group = Step::parallel(
        "group",
        vec![
            member(&log, "a", "A", Ok(None)),
            member(&log, "b", "B", Ok(None)),
        ],
    );
    let after = {
        let log = Rc::clone(&log);
        Step::new("after", move |_: &mut Cr| {
            log.borrow_mut().push("after");
            Ok(None)
        })
    };
    let mut steps = vec![group, after];
    assert_eq!(run_steps(&mut steps, &mut Cr::default()), Ok(None));
    assert_eq!(*log.borrow(), ["a", "b", "after"]);
}

#[test]
fn a_group_drops_zero_requeues_from_the_shortest_requeue() {
    let log = Log::default();
    let members = vec![
        member(&log, "a", "A", Ok(secs(60))),
        member(&log, "b", "B", Ok(secs(0))),
        member(&log, "c", "C", Ok(secs(10))),
    ];
    assert_eq!(run_group_of(members, &mut Cr::default()), Ok(secs(10)));
    assert_eq!(
        log.borrow().len(),
        3,
        "every member ran: {:?}",
        log.borrow()
    );
}

#[test]
fn a_group_whose_members_only_ask_to_run_again_now_lets_the_pass_go_on() {
    let log = Log::default();
    let members = vec![
        member(&log, "a", "A", Ok(secs(0))),
        member(&log, "b", "B", Ok(None)),
    ];
    assert_eq!(run_group_of(members, &mut Cr::default()), Ok(None));
    assert_eq!(*log.borrow(), ["a", "b"], "both members ran");
}

#[test]
fn a_group_member_does_not_see_a_peers_condition_set_during_the_group() {
    let seen: Rc<RefCell<Option<bool>>> = Rc::default();
    let log = Log::default();
    let observer = {
        let seen = Rc::clone(&seen);
        Step::member("b", "B", move |cr: &mut Cr| {
            *seen.borrow_mut() = Some(find(&cr.conditions, "A").is_some());
            set(cr, "B", TRUE);
            Ok(None)
        })
    };
    let members = vec![member(&log, "a", "A", Ok(None)), observer];
    let mut cr = Cr::default();
    assert_eq!(run_group_of(members, &mut cr), Ok(None));
    assert_eq!(
        *seen.borrow(),
        Some(false),
        "b ran, on a copy without a's A"
    );
    assert!(is_true(&cr.conditions, "A") && is_true(&cr.conditions, "B"));
}

#[test]
fn a_group_member_cannot_clobber_a_peers_condition() {
    // b also writes A (and drops C), which is not its type: only its B comes back.
    let log = Log::default();
    let rogue = Step::member("b", "B", |cr: &mut Cr| {
        set(cr, "A", FALSE);
        cr.conditions.retain(|c| c.type_ != "C");
        set(cr, "B", TRUE);
        Ok(None)
    });
    let mut cr = Cr::default();
    set(&mut cr, "C", TRUE);
    let members = vec![member(&log, "a", "A", Ok(None)), rogue];
    assert_eq!(run_group_of(members, &mut cr), Ok(None));
    assert_eq!(log.borrow().len(), 1, "a ran");
    for type_ in ["A", "B", "C"] {
        assert!(
            is_true(&cr.conditions, type_),
            "{type_}: {:?}",
            cr.conditions
        );
    }
}

#[test]
fn a_group_merges_the_conditions_of_members_that_succeeded_before_a_peer_failed_and_of_the_failed_one()
 {
    let log = Log::default();
    let members = vec![
        member(&log, "a", "A", Ok(None)),
        member(&log, "b", "B", Err("boom".into())),
    ];
    let mut cr = Cr::default();
    assert_eq!(run_group_of(members, &mut cr), Err("boom".into()));
    assert!(is_true(&cr.conditions, "A"), "{:?}", cr.conditions);
    assert!(is_true(&cr.conditions, "B"), "{:?}", cr.conditions);
}

#[test]
fn a_group_adopts_annotation_and_resource_version_writes_of_its_members() {
    let annotate = |key: &'static str, value: Option<&'static str>, rv: Option<&'static str>| {
        move |cr: &mut Cr| -> StepResult<String> {
            let annotations = cr.meta.annotations.get_or_insert_with(BTreeMap::new);
            match value {
                Some(v) => annotations.insert(key.into(), v.into()),
                None => annotations.remove(key),
            };
            if let Some(rv) = rv {
                cr.meta.resource_version = Some(rv.into());
            }
            cr.scratch.push(key);
            Ok(None)
        }
    };
    let mut cr = Cr::default();
    cr.meta.resource_version = Some("4".into());
    cr.meta.annotations = Some(BTreeMap::from([
        ("old".into(), "x".into()),
        ("kept".into(), "k".into()),
    ]));
    let members = vec![
        Step::member("a", "A", annotate("a", Some("1"), Some("5"))),
        Step::member("b", "B", annotate("b", Some("2"), None)),
        Step::member("c", "C", annotate("old", None, None)),
    ];
    assert_eq!(run_group_of(members, &mut cr), Ok(None));
    let expected = BTreeMap::from([
        ("a".to_owned(), "1".to_owned()),
        ("b".to_owned(), "2".to_owned()),
        ("kept".to_owned(), "k".to_owned()),
    ]);
    assert_eq!(cr.meta.annotations, Some(expected));
    assert_eq!(
        cr.meta.resource_version.as_deref(),
        Some("5"),
        "a wrote the object; b and c did not"
    );
    assert!(
        cr.scratch.is_empty(),
        "pass-local values are not merged back"
    );
}

#[test]
#[should_panic(expected = "parallel group group: members share the condition type A")]
fn two_members_of_a_group_may_not_own_the_same_condition_type() {
    let log = Log::default();
    let _ = Step::parallel(
        "group",
        vec![
            member(&log, "a", "A", Ok(None)),
            member(&log, "b", "A", Ok(None)),
        ],
    );
}
