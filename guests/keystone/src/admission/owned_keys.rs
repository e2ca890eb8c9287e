//! The `keystone.conf` keys the operator renders itself (facts §1.6). `spec.extraConfig`
//! may override them — the override is honoured and reported by the Config step's
//! `ExtraConfigHealthy` condition — except the keys a typed spec field owns, which admission
//! rejects.

use std::collections::{BTreeMap, BTreeSet};

use super::catalog::section_key;

/// `(section, key)` of every operator-owned key an override is reported for.
pub(crate) const OWNED_KEYS: &[(&str, &str)] = &[
    ("DEFAULT", "keystone_user"),
    ("DEFAULT", "keystone_group"),
    ("DEFAULT", "use_stderr"),
    ("DEFAULT", "debug"),
    ("DEFAULT", "default_log_levels"),
    ("DEFAULT", "log_config_append"),
    ("token", "provider"),
    ("fernet_tokens", "key_repository"),
    ("fernet_tokens", "max_active_keys"),
    ("credential", "key_repository"),
    ("credential", "max_active_keys"),
    ("cache", "backend"),
    ("cache", "memcache_servers"),
    ("memcache", "servers"),
    ("paste_deploy", "config_file"),
    ("oslo_middleware", "enable_proxy_headers_parsing"),
    ("oslo_policy", "enforce_scope"),
    ("oslo_policy", "enforce_new_defaults"),
    ("oslo_policy", "policy_file"),
    ("identity", "default_domain_id"),
    ("identity", "domain_specific_drivers_enabled"),
    ("identity", "domain_config_dir"),
    ("database", "max_retries"),
    ("database", "connection_recycle_time"),
    ("database", "connection"),
    ("auth", "methods"),
    ("federation", "sso_callback_template"),
    ("openid", "remote_id_attribute"),
];

/// `(section, key, the spec field that owns it)` of every key `spec.extraConfig` may not
/// set.
pub(crate) const REJECTED_KEYS: &[(&str, &str, &str)] = &[(
    "federation",
    "trusted_dashboard",
    "spec.federation.trustedDashboards",
)];

/// Whether `[section] key` (the section spelled as the user wrote it) is an owned key.
pub(crate) fn is_owned(section: &str, key: &str) -> bool {
    let section = section_key(section);
    OWNED_KEYS
        .iter()
        .any(|(s, k)| *s == section.as_ref() && *k == key)
}

/// The spec field that owns `[section] key`, when extraConfig may not set it.
pub(crate) fn rejected_by(section: &str, key: &str) -> Option<&'static str> {
    let section = section_key(section);
    REJECTED_KEYS
        .iter()
        .find(|(s, k, _)| *s == section.as_ref() && *k == key)
        .map(|(_, _, owner)| *owner)
}

/// The owned keys `extra_config` overrides, as `section.key` (the section as oslo.config
/// reads it, so `[Token] provider` is `token.provider`), sorted and once each.
pub(crate) fn owned_keys_overridden(
    extra_config: &BTreeMap<String, BTreeMap<String, String>>,
) -> Vec<String> {
    let overridden: BTreeSet<String> = extra_config
        .iter()
        .flat_map(|(section, keys)| {
            keys.keys()
                .filter(|key| is_owned(section, key))
                .map(move |key| format!("{}.{key}", section_key(section)))
        })
        .collect();
    overridden.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use crate::admission::owned_keys_overridden;

    fn extra(entries: &[(&str, &str)]) -> BTreeMap<String, BTreeMap<String, String>> {
        let mut config: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for (section, key) in entries {
            config
                .entry((*section).to_owned())
                .or_default()
                .insert((*key).to_owned(), "x".into());
        }
        config
    }

    #[test]
    fn overridden_owned_keys_are_named_sorted_once_each_as_oslo_reads_their_section() {
        type Row<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str]);
        let table: &[Row<'_>] = &[
            (&[("DEFAULT", "verbose"), ("ldap", "url")], &[]),
            (&[("token", "provider")], &["token.provider"]),
            (
                &[
                    ("token", "expiration"),
                    ("database", "connection"),
                    ("DEFAULT", "debug"),
                    ("openid", "remote_id_attribute"),
                ],
                &[
                    "DEFAULT.debug",
                    "database.connection",
                    "openid.remote_id_attribute",
                ],
            ),
            (
                &[("Token", "provider"), ("token", "provider")],
                &["token.provider"],
            ),
            (&[("default", "debug"), ("token", "Provider")], &[]),
            (&[("federation", "trusted_dashboard")], &[]),
        ];
        for (entries, expected) in table {
            assert_eq!(
                owned_keys_overridden(&extra(entries)),
                *expected,
                "{entries:?}"
            );
        }
    }
}
