//! Conditions on a reconciler's own status, set the way `meta.SetStatusCondition` sets
//! them: one condition per type, `lastTransitionTime` moved only when the status changes.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;

/// `True`.
pub const TRUE: &str = "True";
/// `False`.
pub const FALSE: &str = "False";

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
}
