//! oslo.policy rules: loading them from a ConfigMap, merging, validating and rendering.
//!
//! Rules are `action → rule expression`, kept in a [`BTreeMap`] so that everything
//! rendered from them is sorted and stable across passes.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;

use crate::cluster::{Cluster, ClusterExt};

/// The ConfigMap data key holding the policy.
pub const POLICY_KEY: &str = "policy.yaml";

/// oslo.policy rules: action → rule expression.
pub type Rules = BTreeMap<String, String>;

/// Why loading a policy failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The ConfigMap does not exist.
    #[error("fetching ConfigMap {key}: not found")]
    NotFound { key: String },
    /// Reading the ConfigMap failed.
    #[error("fetching ConfigMap {key}: {source}")]
    Get {
        key: String,
        #[source]
        source: crate::Error,
    },
    /// The ConfigMap has no `policy.yaml` key.
    #[error("ConfigMap {key} does not contain key \"policy.yaml\"")]
    MissingKey { key: String },
    /// `policy.yaml` is not a YAML map of strings.
    #[error("parsing policy.yaml from ConfigMap {key}: {source}")]
    Parse {
        key: String,
        #[source]
        source: serde_yaml_ng::Error,
    },
}

impl Error {
    /// Whether the ConfigMap did not exist (`apierrors.IsNotFound`).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::NotFound { .. })
    }
}

/// The rules in the `policy.yaml` key of the ConfigMap `namespace/name`.
pub fn load_policy_from_config_map<C: Cluster + ?Sized>(
    cluster: &C,
    namespace: &str,
    name: &str,
) -> Result<Rules, Error> {
    let key = format!("{namespace}/{name}");
    let config_map: ConfigMap = cluster
        .get_typed(Some(namespace), name)
        .map_err(|source| Error::Get {
            key: key.clone(),
            source,
        })?
        .ok_or_else(|| Error::NotFound { key: key.clone() })?;
    let raw = config_map
        .data
        .and_then(|mut d| d.remove(POLICY_KEY))
        .ok_or_else(|| Error::MissingKey { key: key.clone() })?;
    parse_policy(&raw).map_err(|source| Error::Parse { key, source })
}

/// Parses a policy document; an empty document is no rules.
pub fn parse_policy(raw: &str) -> Result<Rules, serde_yaml_ng::Error> {
    let rules: Option<Rules> = serde_yaml_ng::from_str(raw)?;
    Ok(rules.unwrap_or_default())
}

/// `inline` over `external`: every rule of both, the inline one winning a collision.
pub fn merge_policies(external: &Rules, inline: &Rules) -> Rules {
    let mut merged = external.clone();
    merged.extend(inline.iter().map(|(k, v)| (k.clone(), v.clone())));
    merged
}

/// One invalid rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct RuleError {
    /// The field path, e.g. `spec.policyOverrides.rules[identity:get_user]`.
    pub field: String,
    pub message: &'static str,
}

/// The invalid rules of `rules` under the field path `path`, in key order: an empty key,
/// an empty value.
pub fn validate_policy_rules(rules: &Rules, path: &str) -> Vec<RuleError> {
    let mut errors = Vec::new();
    for (key, value) in rules {
        if key.is_empty() {
            errors.push(RuleError {
                field: path.to_owned(),
                message: "policy rule key must not be empty",
            });
        }
        if value.is_empty() {
            errors.push(RuleError {
                field: format!("{path}[{key}]"),
                message: "policy rule value must not be empty",
            });
        }
    }
    errors
}

/// `rules` as a YAML document oslo.policy reads, keys sorted; no rules render as `{}`.
pub fn render_policy_yaml(rules: &Rules) -> Result<String, serde_yaml_ng::Error> {
    if rules.is_empty() {
        return Ok("{}\n".to_owned());
    }
    serde_yaml_ng::to_string(rules)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ApiError;
    use crate::testing::{FakeCluster, Op};
    use serde_json::json;

    fn rules(entries: &[(&str, &str)]) -> Rules {
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn cluster() -> FakeCluster {
        let cm = |name: &str, data: serde_json::Value| {
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": "openstack"}, "data": data})
        };
        FakeCluster::new()
            .with(cm(
                "good",
                json!({"policy.yaml": "identity:get_user: role:admin\n\"identity:list_users\": \"rule:admin_required\"\n"}),
            ))
            .with(cm("empty", json!({"policy.yaml": ""})))
            .with(cm("nokey", json!({"other": "x"})))
            .with(cm("bad", json!({"policy.yaml": "a: [unclosed"})))
    }

    #[test]
    fn the_policy_yaml_key_is_parsed_into_rules() {
        let got = load_policy_from_config_map(&cluster(), "openstack", "good").expect("ok");
        assert_eq!(
            got,
            rules(&[
                ("identity:get_user", "role:admin"),
                ("identity:list_users", "rule:admin_required"),
            ])
        );
    }

    #[test]
    fn an_empty_policy_document_is_no_rules() {
        let got = load_policy_from_config_map(&cluster(), "openstack", "empty").expect("ok");
        assert!(got.is_empty());
    }

    #[test]
    fn load_policy_error_conditions_have_their_texts() {
        let err = load_policy_from_config_map(&cluster(), "openstack", "gone").expect_err("gone");
        assert!(
            err.is_not_found(),
            "a missing ConfigMap is a not-found error: {err}"
        );
        let err = load_policy_from_config_map(&cluster(), "openstack", "nokey").expect_err("key");
        assert_eq!(
            err.to_string(),
            "ConfigMap openstack/nokey does not contain key \"policy.yaml\""
        );
        let err = load_policy_from_config_map(&cluster(), "openstack", "bad").expect_err("yaml");
        assert!(
            err.to_string()
                .starts_with("parsing policy.yaml from ConfigMap openstack/bad: "),
            "{err}"
        );
        let failing = cluster().failing(Op::Get, "good", ApiError::Forbidden("no".into()));
        let err = load_policy_from_config_map(&failing, "openstack", "good").expect_err("api");
        assert_eq!(
            err.to_string(),
            "fetching ConfigMap openstack/good: forbidden: no"
        );
    }

    #[test]
    fn inline_rules_win_over_external_ones_and_both_are_kept() {
        let external = rules(&[("a", "role:reader"), ("b", "role:admin")]);
        let inline = rules(&[("b", "role:member"), ("c", "!")]);
        assert_eq!(
            merge_policies(&external, &inline),
            rules(&[("a", "role:reader"), ("b", "role:member"), ("c", "!")])
        );
    }

    #[test]
    fn validation_reports_empty_keys_and_empty_values_in_key_order() {
        let cases: &[(&str, Rules, &[&str])] = &[
            (
                "valid rules have no errors",
                rules(&[("a", "role:admin")]),
                &[],
            ),
            (
                "an empty key is required",
                rules(&[("", "role:admin")]),
                &["rules: policy rule key must not be empty"],
            ),
            (
                "an empty value is invalid at its key",
                rules(&[("b", ""), ("a", "")]),
                &[
                    "rules[a]: policy rule value must not be empty",
                    "rules[b]: policy rule value must not be empty",
                ],
            ),
        ];
        for (case, input, expected) in cases {
            let got: Vec<String> = validate_policy_rules(input, "rules")
                .iter()
                .map(ToString::to_string)
                .collect();
            assert_eq!(got, *expected, "{case}");
        }
    }

    #[test]
    fn rendering_sorts_keys_quotes_what_yaml_needs_and_round_trips() {
        let input = rules(&[("z", "role:admin"), ("a", "!"), ("m", "")]);
        let rendered = render_policy_yaml(&input).expect("renders");
        let keys: Vec<&str> = rendered
            .lines()
            .map(|l| l.split(':').next().unwrap_or_default())
            .collect();
        assert_eq!(keys, ["a", "m", "z"], "{rendered}");
        assert_eq!(parse_policy(&rendered).expect("parses"), input);
    }

    #[test]
    fn no_rules_render_as_an_empty_map() {
        assert_eq!(render_policy_yaml(&Rules::new()).expect("renders"), "{}\n");
    }
}
