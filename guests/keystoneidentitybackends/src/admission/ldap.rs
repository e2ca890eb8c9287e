//! The LDAP rules (CobaltCore's webhook): the block, and `spec.extraOptions`.
//!
//! | Rule | Field | Message |
//! |---|---|---|
//! | url is `ldap://` or `ldaps://` | `spec.ldap.url` | url must use the ldap:// or ldaps:// scheme |
//! | no CR/LF in url, suffix, the users' and groups' fields | that field | value must not contain newline or carriage-return characters |
//! | bind Secret ref without `key` | `spec.ldap.bindCredentialsSecretRef.key` | key must be empty: … ("username" and "password") |
//! | CA Secret ref without `key` | `spec.ldap.tls.caBundleSecretRef.key` | key must be empty: … ("ca.crt") |
//!
//! extraOptions, each key in sorted order, the first failing rule only:
//!
//! | Rule | Field | Message |
//! |---|---|---|
//! | a key | `spec.extraOptions` | option name must not be empty |
//! | key matches `^[A-Za-z0-9_]+$` | `spec.extraOptions[key]` | option name must match … |
//! | key not a typed field's or the operator's option | `spec.extraOptions[key]` | option "k" is owned by <owner> and must not be set via extraOptions |
//! | while readOnly (unset counts), no `*_allow_*` write option | `spec.extraOptions[key]` | option "k" conflicts with readOnly: true … |
//!
//! then, for a key past the denylist, no CR/LF in the value. The charset check comes
//! first: the denylist matches exact strings, and a variant with a trailing space or a
//! newline is not equal to the option oslo.config reads it as.

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;

use super::has_line_break;
use crate::types::KeystoneIdentityBackendSpec;
use crate::types::ldap::{LdapBackendSpec, READ_ONLY_FORCED_OPTIONS};

/// The `[ldap]` options extraOptions may not set, and what owns each.
pub(crate) const DENYLIST: &[(&str, &str)] = &[
    ("url", "spec.ldap.url"),
    ("suffix", "spec.ldap.suffix"),
    ("user", "spec.ldap.bindCredentialsSecretRef"),
    ("password", "spec.ldap.bindCredentialsSecretRef"),
    ("tls_cacertfile", "spec.ldap.tls"),
    ("use_pool", "spec.ldap.pool"),
    ("pool_size", "spec.ldap.pool.size"),
    ("user_tree_dn", "spec.ldap.users.treeDN"),
    ("user_filter", "spec.ldap.users.filter"),
    ("user_objectclass", "spec.ldap.users.objectClass"),
    ("user_id_attribute", "spec.ldap.users.idAttribute"),
    ("user_name_attribute", "spec.ldap.users.nameAttribute"),
    ("user_mail_attribute", "spec.ldap.users.mailAttribute"),
    ("group_tree_dn", "spec.ldap.groups.treeDN"),
    ("group_filter", "spec.ldap.groups.filter"),
    ("group_objectclass", "spec.ldap.groups.objectClass"),
    ("group_id_attribute", "spec.ldap.groups.idAttribute"),
    ("group_name_attribute", "spec.ldap.groups.nameAttribute"),
    ("group_member_attribute", "spec.ldap.groups.memberAttribute"),
    ("driver", "the operator (identity driver wiring)"),
    ("domain_config_dir", "the operator (domain config wiring)"),
];

const LINE_BREAK: &str = "value must not contain newline or carriage-return characters";

/// Checks `spec.ldap`.
pub(super) fn check(ldap: &LdapBackendSpec, errors: &mut FieldErrors) {
    if !ldap.url.starts_with("ldap://") && !ldap.url.starts_with("ldaps://") {
        errors.invalid(
            "spec.ldap.url",
            &json!(ldap.url),
            "url must use the ldap:// or ldaps:// scheme",
        );
    }
    let users = &ldap.users;
    let mut rendered = vec![
        ("url", &ldap.url),
        ("suffix", &ldap.suffix),
        ("users.treeDN", &users.tree_dn),
        ("users.filter", &users.filter),
        ("users.objectClass", &users.object_class),
        ("users.idAttribute", &users.id_attribute),
        ("users.nameAttribute", &users.name_attribute),
        ("users.mailAttribute", &users.mail_attribute),
    ];
    if let Some(groups) = &ldap.groups {
        rendered.extend([
            ("groups.treeDN", &groups.tree_dn),
            ("groups.filter", &groups.filter),
            ("groups.objectClass", &groups.object_class),
            ("groups.idAttribute", &groups.id_attribute),
            ("groups.nameAttribute", &groups.name_attribute),
            ("groups.memberAttribute", &groups.member_attribute),
        ]);
    }
    for (field, value) in rendered {
        if has_line_break(value) {
            errors.invalid(&format!("spec.ldap.{field}"), &json!(value), LINE_BREAK);
        }
    }
    let key = &ldap.bind_credentials_secret_ref.key;
    if !key.is_empty() {
        errors.invalid(
            "spec.ldap.bindCredentialsSecretRef.key",
            &json!(key),
            r#"key must be empty: the bind Secret's data keys are fixed ("username" and "password")"#,
        );
    }
    if let Some(tls) = ldap
        .tls
        .as_ref()
        .filter(|t| !t.ca_bundle_secret_ref.key.is_empty())
    {
        errors.invalid(
            "spec.ldap.tls.caBundleSecretRef.key",
            &json!(tls.ca_bundle_secret_ref.key),
            r#"key must be empty: the CA bundle Secret's data key is fixed ("ca.crt")"#,
        );
    }
}

/// Whether `key` is an option name: letters, digits and underscores.
fn is_option_name(key: &str) -> bool {
    key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Checks `spec.extraOptions` (whatever the type: the type rule is [`super::spec`]'s).
pub(super) fn check_extra_options(spec: &KeystoneIdentityBackendSpec, errors: &mut FieldErrors) {
    let read_only = spec.ldap.as_ref().is_none_or(LdapBackendSpec::read_only);
    for (key, value) in &spec.extra_options {
        let field = format!("spec.extraOptions[{key}]");
        if key.is_empty() {
            errors.invalid(
                "spec.extraOptions",
                &json!(key),
                "option name must not be empty",
            );
            continue;
        }
        if !is_option_name(key) {
            errors.invalid(
                &field,
                &json!(key),
                "option name must match ^[A-Za-z0-9_]+$ (letters, digits, and underscore)",
            );
            continue;
        }
        if let Some((_, owner)) = DENYLIST.iter().find(|(option, _)| option == key) {
            errors.invalid(
                &field,
                &json!(value),
                &format!("option {key:?} is owned by {owner} and must not be set via extraOptions"),
            );
            continue;
        }
        if read_only && READ_ONLY_FORCED_OPTIONS.contains(&key.as_str()) {
            errors.invalid(
                &field,
                &json!(value),
                &format!(
                    "option {key:?} conflicts with readOnly: true (the default), which forces it to false"
                ),
            );
        }
        if has_line_break(value) {
            errors.invalid(&field, &json!(value), LINE_BREAK);
        }
    }
}

#[cfg(test)]
#[path = "ldap_tests.rs"]
mod tests;
