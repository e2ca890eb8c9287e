//! Conditions on a reconciler's own status, set the way `meta.SetStatusCondition` sets
//! them: one condition per type, `lastTransitionTime` moved only when the status changes;
//! the aggregate `Ready` over a set of sub-conditions (facts §1.7, §3.0); and the merge of
//! one condition type back from a parallel group member's copy (facts §2.2).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;

/// `True`.
pub const TRUE: &str = "True";
/// `False`.
pub const FALSE: &str = "False";

/// The aggregate condition type.
pub const READY: &str = "Ready";
/// The reason of `Ready=True`: every sub-condition is True.
pub const REASON_ALL_READY: &str = "AllReady";
/// The message of `Ready=True`.
pub const MESSAGE_ALL_READY: &str = "All sub-conditions are ready";
/// The reason of `Ready=False`: a sub-condition is absent or not True.
pub const REASON_NOT_ALL_READY: &str = "NotAllReady";
/// The message of `Ready=False`.
pub const MESSAGE_NOT_ALL_READY: &str = "One or more sub-conditions are not ready";

/// A condition to set; the time of a transition is taken when it is set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCondition<'a> {
    pub type_: &'a str,
    pub status: &'a str,
    pub reason: &'a str,
    pub message: &'a str,
    pub observed_generation: i64,
}

/// Sets `new` in `conditions` at the current time: adds it when its type is absent;
/// otherwise updates reason, message and observedGeneration, and moves
/// `lastTransitionTime` only when the status changes.
pub fn set_condition(conditions: &mut Vec<Condition>, new: &NewCondition<'_>) {
    set_condition_at(conditions, new, now());
}

/// The current time, to the second (as the API server stores condition times).
pub fn now() -> Time {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    Time(Timestamp::from_second(seconds).unwrap_or(Timestamp::UNIX_EPOCH))
}

/// [`set_condition`] at a given time.
pub fn set_condition_at(conditions: &mut Vec<Condition>, new: &NewCondition<'_>, now: Time) {
    match conditions.iter_mut().find(|c| c.type_ == new.type_) {
        Some(existing) => {
            if existing.status != new.status {
                existing.status = new.status.to_owned();
                existing.last_transition_time = now;
            }
            existing.reason = new.reason.to_owned();
            existing.message = new.message.to_owned();
            existing.observed_generation = Some(new.observed_generation);
        }
        None => conditions.push(Condition {
            type_: new.type_.to_owned(),
            status: new.status.to_owned(),
            reason: new.reason.to_owned(),
            message: new.message.to_owned(),
            observed_generation: Some(new.observed_generation),
            last_transition_time: now,
        }),
    }
}

/// The condition of `type_`, if set.
pub fn find<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Whether the condition of `type_` is set and `True`.
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    find(conditions, type_).is_some_and(|c| c.status == TRUE)
}

/// Whether every one of `types` is set and `True` (vacuously true for none).
pub fn all_true(conditions: &[Condition], types: &[&str]) -> bool {
    types.iter().all(|t| is_true(conditions, t))
}

/// Recomputes [`READY`] from `sub_condition_types` at the current time: `True`
/// [`REASON_ALL_READY`] when every one is set and `True`, else `False`
/// [`REASON_NOT_ALL_READY`] (an absent sub-condition is not ready), with
/// `observed_generation` stamped. Call it on every status write, so `Ready` never stays
/// `True` after a sub-condition turned.
pub fn set_aggregate_ready(
    conditions: &mut Vec<Condition>,
    observed_generation: i64,
    sub_condition_types: &[&str],
) {
    set_aggregate_ready_at(conditions, observed_generation, sub_condition_types, now());
}

/// [`set_aggregate_ready`] at a given time.
pub fn set_aggregate_ready_at(
    conditions: &mut Vec<Condition>,
    observed_generation: i64,
    sub_condition_types: &[&str],
    now: Time,
) {
    let (status, reason, message) = if all_true(conditions, sub_condition_types) {
        (TRUE, REASON_ALL_READY, MESSAGE_ALL_READY)
    } else {
        (FALSE, REASON_NOT_ALL_READY, MESSAGE_NOT_ALL_READY)
    };
    let ready = NewCondition {
        type_: READY,
        status,
        reason,
        message,
        observed_generation,
    };
    set_condition_at(conditions, &ready, now);
}

/// Copies the condition of `type_` from `from` into `into` as it is (its transition time
/// included), replacing the one `into` has; leaves `into` unchanged when `from` has none.
/// Every other condition of `into` is kept.
pub fn adopt_condition(into: &mut Vec<Condition>, from: &[Condition], type_: &str) {
    let Some(adopted) = find(from, type_) else {
        return;
    };
    match into.iter_mut().find(|c| c.type_ == type_) {
        Some(existing) => existing.clone_from(adopted),
        None => into.push(adopted.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Time {
        Time(Timestamp::from_second(seconds).expect("valid time"))
    }

    fn ready(status: &str, reason: &str) -> NewCondition<'static> {
        NewCondition {
            type_: "Ready",
            status: if status == TRUE { TRUE } else { FALSE },
            reason: if reason == "A" { "A" } else { "B" },
            message: "m",
            observed_generation: 2,
        }
    }

    #[test]
    fn an_absent_condition_is_added_with_the_time_of_setting() {
        let mut conds = Vec::new();
        set_condition_at(&mut conds, &ready(TRUE, "A"), at(10));
        assert_eq!(conds.len(), 1);
        assert_eq!(conds[0].last_transition_time, at(10));
        assert_eq!(conds[0].observed_generation, Some(2));
    }

    #[test]
    fn the_same_status_keeps_the_transition_time_and_updates_the_reason() {
        let mut conds = Vec::new();
        set_condition_at(&mut conds, &ready(TRUE, "A"), at(10));
        set_condition_at(&mut conds, &ready(TRUE, "B"), at(20));
        assert_eq!(conds[0].last_transition_time, at(10));
        assert_eq!(conds[0].reason, "B");
    }

    #[test]
    fn a_changed_status_moves_the_transition_time() {
        let mut conds = Vec::new();
        set_condition_at(&mut conds, &ready(TRUE, "A"), at(10));
        set_condition_at(&mut conds, &ready(FALSE, "A"), at(20));
        assert_eq!(conds.len(), 1);
        assert_eq!(conds[0].last_transition_time, at(20));
        assert!(!is_true(&conds, "Ready"));
    }

    fn sub(type_: &'static str, status: &'static str) -> NewCondition<'static> {
        NewCondition {
            type_,
            status,
            reason: "R",
            message: "m",
            observed_generation: 1,
        }
    }

    fn with(subs: &[NewCondition<'_>]) -> Vec<Condition> {
        let mut conds = Vec::new();
        for s in subs {
            set_condition_at(&mut conds, s, at(1));
        }
        conds
    }

    #[test]
    fn ready_is_true_all_ready_only_when_every_sub_condition_is_true() {
        let types = ["SecretsReady", "DatabaseReady"];
        let cases: &[(&str, Vec<Condition>, &str, &str, &str)] = &[
            (
                "every sub-condition True is Ready",
                with(&[sub("SecretsReady", TRUE), sub("DatabaseReady", TRUE)]),
                TRUE,
                "AllReady",
                "All sub-conditions are ready",
            ),
            (
                "one sub-condition False is not Ready",
                with(&[sub("SecretsReady", TRUE), sub("DatabaseReady", FALSE)]),
                FALSE,
                "NotAllReady",
                "One or more sub-conditions are not ready",
            ),
            (
                "one sub-condition absent is not Ready",
                with(&[sub("SecretsReady", TRUE)]),
                FALSE,
                "NotAllReady",
                "One or more sub-conditions are not ready",
            ),
            (
                "one sub-condition Unknown is not Ready",
                with(&[sub("SecretsReady", TRUE), sub("DatabaseReady", "Unknown")]),
                FALSE,
                "NotAllReady",
                "One or more sub-conditions are not ready",
            ),
            (
                "a True condition outside the set does not stand in for a missing one",
                with(&[sub("SecretsReady", TRUE), sub("HPAReady", TRUE)]),
                FALSE,
                "NotAllReady",
                "One or more sub-conditions are not ready",
            ),
        ];
        for (case, conds, status, reason, message) in cases {
            let mut conds = conds.clone();
            set_aggregate_ready_at(&mut conds, 7, &types, at(5));
            let ready = find(&conds, READY).expect(case);
            assert_eq!(
                (ready.status.as_str(), ready.reason.as_str()),
                (*status, *reason),
                "{case}"
            );
            assert_eq!(ready.message, *message, "{case}");
            assert_eq!(ready.observed_generation, Some(7), "{case}");
        }
    }

    #[test]
    fn ready_over_no_sub_conditions_is_true() {
        let mut conds = Vec::new();
        set_aggregate_ready_at(&mut conds, 1, &[], at(1));
        assert!(is_true(&conds, READY));
    }

    #[test]
    fn ready_recomputed_after_a_sub_condition_turns_false_turns_false_at_that_time() {
        let types = ["SecretsReady"];
        let mut conds = with(&[sub("SecretsReady", TRUE)]);
        set_aggregate_ready_at(&mut conds, 1, &types, at(10));
        set_condition_at(&mut conds, &sub("SecretsReady", FALSE), at(20));
        set_aggregate_ready_at(&mut conds, 2, &types, at(30));
        let ready = find(&conds, READY).expect("set");
        assert_eq!(ready.status, FALSE);
        assert_eq!(ready.last_transition_time, at(30));
        assert_eq!(ready.observed_generation, Some(2));
        assert_eq!(conds.len(), 2, "one Ready, one SecretsReady: {conds:?}");
    }

    #[test]
    fn adopting_a_condition_copies_that_type_as_it_is_and_keeps_every_other() {
        let mut into = with(&[sub("A", FALSE), sub("B", TRUE)]);
        let mut from = with(&[sub("A", FALSE), sub("B", FALSE)]);
        set_condition_at(&mut from, &sub("A", TRUE), at(9));
        adopt_condition(&mut into, &from, "A");
        let a = find(&into, "A").expect("A");
        assert_eq!((a.status.as_str(), &a.last_transition_time), (TRUE, &at(9)));
        assert!(is_true(&into, "B"), "B is not the adopted type: {into:?}");
        adopt_condition(&mut into, &from, "C");
        assert_eq!(into.len(), 2, "a type `from` lacks leaves `into` unchanged");
        let mut empty = Vec::new();
        adopt_condition(&mut empty, &from, "B");
        assert!(
            !is_true(&empty, "B") && find(&empty, "B").is_some(),
            "{empty:?}"
        );
    }
}
