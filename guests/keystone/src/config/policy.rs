//! `policy.yaml`: the rules of `spec.policyOverrides` — those of its ConfigMap, with the
//! inline rules over them — as the YAML map oslo.policy reads (facts §2.7).
//!
//! The file is rendered whenever `spec.policyOverrides` is set, also when the rules come
//! out empty (`{}`): its presence is what makes keystone.conf name it as `policy_file` and
//! what the PolicyValidation step validates.

use wasm_operator_sdk::blocks::policy::{Rules, merge_policies, render_policy_yaml};
use wasm_operator_sdk::blocks::types::PolicySpec;

use super::ConfigError;

/// The `policy.yaml` of `overrides`, `None` without overrides. `config_map_rules` are the
/// rules loaded from `overrides.configMapRef`; a reference without them is an error.
pub fn render(
    overrides: Option<&PolicySpec>,
    config_map_rules: Option<&Rules>,
) -> Result<Option<String>, ConfigError> {
    let Some(overrides) = overrides else {
        return Ok(None);
    };
    let external = match (&overrides.config_map_ref, config_map_rules) {
        (Some(reference), None) => {
            return Err(ConfigError::PolicyNotLoaded {
                config_map: reference.name.clone(),
            });
        }
        (Some(_), Some(rules)) => rules.clone(),
        (None, _) => Rules::new(),
    };
    let merged = merge_policies(&external, &overrides.rules);
    render_policy_yaml(&merged)
        .map(Some)
        .map_err(|source| ConfigError::PolicyYaml {
            source: Box::new(source),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_operator_sdk::blocks::types::LocalObjectReference;

    fn rules(entries: &[(&str, &str)]) -> Rules {
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn spec(inline: &[(&str, &str)], config_map: Option<&str>) -> PolicySpec {
        PolicySpec {
            rules: rules(inline),
            config_map_ref: config_map.map(|name| LocalObjectReference { name: name.into() }),
        }
    }

    #[test]
    fn inline_rules_override_the_config_maps_and_all_render_sorted() {
        let overrides = spec(
            &[
                ("identity:get_user", "role:admin or role:reader"),
                ("identity:create_user", "role:admin"),
            ],
            Some("keystone-policy"),
        );
        let loaded = rules(&[
            ("identity:get_user", "role:admin"),
            ("identity:list_users", "rule:admin_required"),
        ]);
        let rendered = render(Some(&overrides), Some(&loaded)).expect("renders");
        assert_eq!(
            rendered.as_deref(),
            Some(
                "identity:create_user: role:admin\n\
                 identity:get_user: role:admin or role:reader\n\
                 identity:list_users: rule:admin_required\n"
            )
        );
    }

    #[test]
    fn no_policy_overrides_render_no_policy() {
        assert_eq!(render(None, None).expect("renders"), None);
    }

    #[test]
    fn overrides_whose_rules_come_out_empty_still_render_an_empty_map() {
        let overrides = spec(&[], Some("empty-policy"));
        let rendered = render(Some(&overrides), Some(&Rules::new())).expect("renders");
        assert_eq!(rendered.as_deref(), Some("{}\n"));
    }

    #[test]
    fn rules_yaml_would_misread_are_quoted() {
        let overrides = spec(&[("identity:get_user", "!"), ("a: b", "@")], None);
        let rendered = render(Some(&overrides), None)
            .expect("renders")
            .expect("a policy");
        let parsed: Rules = serde_yaml_ng::from_str(&rendered).expect("parses");
        assert_eq!(parsed, overrides.rules, "{rendered}");
    }

    #[test]
    fn a_referenced_config_map_whose_rules_were_not_loaded_is_an_error() {
        let overrides = spec(&[("a", "role:admin")], Some("keystone-policy"));
        let err = render(Some(&overrides), None).expect_err("not loaded");
        assert!(
            matches!(&err, ConfigError::PolicyNotLoaded { config_map } if config_map == "keystone-policy"),
            "{err:?}"
        );
        assert!(
            err.to_string().contains("its rules were not loaded"),
            "{err}"
        );
    }
}
