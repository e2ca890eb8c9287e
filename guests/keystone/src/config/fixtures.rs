//! The Keystones the golden tests render (`testdata/`) and the projections beside them.

use wasm_operator_sdk::blocks::policy::Rules;

use super::{ConfigInputs, FederationProjection, OidcProjection, SamlProjection};
use crate::types::Keystone;

/// A Keystone with only what its schema requires.
pub(crate) const MINIMAL: &str = include_str!("testdata/minimal.yaml");
/// A Keystone using every input of its configuration.
pub(crate) const FULL: &str = include_str!("testdata/full.yaml");

/// The Keystone of a manifest.
pub(crate) fn keystone(manifest: &str) -> Keystone {
    serde_yaml_ng::from_str(manifest).expect("the fixture is a Keystone")
}

/// What the other steps contribute for a minimal Keystone: nothing.
pub(crate) fn minimal_inputs() -> ConfigInputs {
    ConfigInputs::default()
}

/// What the other steps contribute for the full Keystone: the policy ConfigMap's rules,
/// a domains Secret, an OIDC backend naming no attribute and a SAML backend naming both.
pub(crate) fn full_inputs() -> ConfigInputs {
    ConfigInputs {
        config_map_policy: Some(rules(&[
            ("identity:get_user", "role:admin"),
            ("identity:list_users", "rule:admin_required"),
        ])),
        domains_projected: true,
        federation: Some(FederationProjection {
            oidc: Some(OidcProjection::default()),
            saml: Some(SamlProjection {
                protocol_id: "saml2".into(),
                remote_id_attribute: "MELLON_IDP".into(),
            }),
        }),
    }
}

/// Rules from pairs.
pub(crate) fn rules(entries: &[(&str, &str)]) -> Rules {
    entries
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `lines` joined as a file: one `\n` after each.
pub(crate) fn file(lines: &[&str]) -> String {
    lines.iter().map(|line| format!("{line}\n")).collect()
}
