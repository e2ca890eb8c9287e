//! Collect: a parent's attached satellites as one pass sees them.
//!
//! Pure: no API calls and no errors; the references handed back alias the caller's items.
//! Sorting by name keeps the rendered config, and with it its content hash, stable.

use k8s_openapi::Metadata;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// A predicate over a satellite.
pub type Predicate<'a, T> = &'a dyn Fn(&T) -> bool;

/// What [`collect`] works from.
pub struct CollectParams<'a, T> {
    /// The satellites naming the parent, in any order (the caller's indexed list).
    pub items: Vec<&'a T>,
    /// Which satellites may be projected (e.g. `CredentialsReady == True`); `None` passes
    /// every one.
    pub gate: Option<Predicate<'a, T>>,
    /// Which satellite claims to be the parent's default; `None` means the parent has no
    /// default rule.
    pub is_default: Option<Predicate<'a, T>>,
}

/// One pass's view of a parent's satellites.
#[derive(Debug)]
pub struct Collection<'a, T> {
    /// The satellites not being deleted, sorted by name.
    pub attached: Vec<&'a T>,
    /// The attached satellites that pass the gate, in the same order.
    pub gated: Vec<&'a T>,
    /// The gated satellites claiming to be the default, in the same order.
    pub default_candidates: Vec<&'a T>,
    /// Whether the default rule holds: no rule, or exactly one gated candidate.
    pub valid: bool,
}

/// Turns the satellites naming a parent into one pass's [`Collection`]. A satellite being
/// deleted drops out here, so the pass de-projects it without waiting for it to go.
pub fn collect<'a, T: Metadata<Ty = ObjectMeta>>(
    params: CollectParams<'a, T>,
) -> Collection<'a, T> {
    let mut attached: Vec<&'a T> = params
        .items
        .into_iter()
        .filter(|item| item.metadata().deletion_timestamp.is_none())
        .collect();
    attached.sort_by(|a, b| a.metadata().name.cmp(&b.metadata().name));
    let gated: Vec<&'a T> = attached
        .iter()
        .copied()
        .filter(|item| params.gate.is_none_or(|gate| gate(item)))
        .collect();
    let default_candidates: Vec<&'a T> = match params.is_default {
        Some(is_default) => gated
            .iter()
            .copied()
            .filter(|item| is_default(item))
            .collect(),
        None => Vec::new(),
    };
    let valid = params.is_default.is_none() || default_candidates.len() == 1;
    Collection {
        attached,
        gated,
        default_candidates,
        valid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::jiff::Timestamp;
    use std::collections::BTreeMap;

    /// A satellite named `name`; `flags` among "ready", "default", "deleting".
    fn satellite(name: &str, flags: &[&str]) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels: Some(
                    flags
                        .iter()
                        .map(|f| (f.to_string(), "true".to_owned()))
                        .collect::<BTreeMap<_, _>>(),
                ),
                deletion_timestamp: flags
                    .contains(&"deleting")
                    .then_some(Time(Timestamp::UNIX_EPOCH)),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn has(flag: &'static str) -> impl Fn(&ConfigMap) -> bool {
        move |cm| {
            cm.metadata
                .labels
                .as_ref()
                .is_some_and(|l| l.contains_key(flag))
        }
    }

    fn names(items: &[&ConfigMap]) -> Vec<String> {
        items
            .iter()
            .filter_map(|i| i.metadata.name.clone())
            .collect()
    }

    #[test]
    fn attached_drops_deleting_satellites_and_sorts_by_name() {
        let items = [
            satellite("c", &["ready"]),
            satellite("a", &["ready"]),
            satellite("b", &["deleting", "ready"]),
        ];
        let got = collect(CollectParams {
            items: items.iter().collect(),
            gate: None,
            is_default: None,
        });
        assert_eq!(names(&got.attached), ["a", "c"]);
    }

    #[test]
    fn a_missing_gate_passes_every_attached_satellite() {
        let items = [satellite("b", &[]), satellite("a", &[])];
        let got = collect(CollectParams {
            items: items.iter().collect(),
            gate: None,
            is_default: None,
        });
        assert_eq!(names(&got.gated), ["a", "b"]);
        assert!(got.valid, "no default rule is always valid");
        assert!(got.default_candidates.is_empty());
    }

    #[test]
    fn the_gate_and_default_rule_decide_gated_candidates_and_validity() {
        let ready = has("ready");
        let default = has("default");
        type Case = (
            &'static str,
            Vec<ConfigMap>,
            &'static [&'static str],
            &'static [&'static str],
            bool,
        );
        let cases: [Case; 5] = [
            (
                "one gated default is valid",
                vec![
                    satellite("a", &["ready", "default"]),
                    satellite("b", &["ready"]),
                ],
                &["a", "b"],
                &["a"],
                true,
            ),
            (
                "no default is invalid under a default rule",
                vec![satellite("a", &["ready"])],
                &["a"],
                &[],
                false,
            ),
            (
                "two gated defaults are invalid",
                vec![
                    satellite("a", &["ready", "default"]),
                    satellite("b", &["ready", "default"]),
                ],
                &["a", "b"],
                &["a", "b"],
                false,
            ),
            (
                "a default that fails the gate is no candidate",
                vec![satellite("a", &["default"]), satellite("b", &["ready"])],
                &["b"],
                &[],
                false,
            ),
            (
                "a deleting default is no candidate",
                vec![
                    satellite("a", &["ready", "default", "deleting"]),
                    satellite("b", &["ready", "default"]),
                ],
                &["b"],
                &["b"],
                true,
            ),
        ];
        for (case, items, gated, candidates, valid) in cases {
            let got = collect(CollectParams {
                items: items.iter().collect(),
                gate: Some(&ready),
                is_default: Some(&default),
            });
            assert_eq!(names(&got.gated), *gated, "{case}");
            assert_eq!(names(&got.default_candidates), *candidates, "{case}");
            assert_eq!(got.valid, valid, "{case}");
        }
    }

    #[test]
    fn the_collection_aliases_the_callers_items() {
        let items = [satellite("a", &[])];
        let got = collect(CollectParams {
            items: items.iter().collect(),
            gate: None,
            is_default: None,
        });
        assert!(std::ptr::eq(got.attached[0], &items[0]));
    }
}
