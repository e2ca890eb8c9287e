use sha2::{Digest, Sha256};

use super::*;
use crate::config::fixtures::{FULL, MINIMAL, full_inputs, keystone, minimal_inputs};

fn keys(rendered: &Rendered) -> Vec<&str> {
    rendered.data.keys().map(String::as_str).collect()
}

/// §2.7's hash, computed here from its definition: SHA-256 over the sorted entries, each
/// `<len(key)>:<key>=<len(value)>:<value>\n`, first 8 hex characters.
fn spec_hash(data: &BTreeMap<String, String>) -> String {
    let mut hasher = Sha256::new();
    for (key, value) in data {
        hasher.update(key.len().to_string());
        hasher.update(b":");
        hasher.update(key);
        hasher.update(b"=");
        hasher.update(value.len().to_string());
        hasher.update(b":");
        hasher.update(value);
        hasher.update(b"\n");
    }
    hex::encode(hasher.finalize())[..8].to_owned()
}

#[test]
fn a_minimal_keystone_ships_keystone_conf_and_api_paste_only() {
    let rendered = render(&keystone(MINIMAL), &minimal_inputs()).expect("renders");
    assert_eq!(keys(&rendered), ["api-paste.ini", "keystone.conf"]);
}

#[test]
fn a_full_keystone_ships_every_file() {
    let rendered = render(&keystone(FULL), &full_inputs()).expect("renders");
    assert_eq!(
        keys(&rendered),
        [
            "api-paste.ini",
            "keystone.conf",
            "logging.conf",
            "policy.yaml",
            "sso_callback_template.html",
        ]
    );
    assert_eq!(
        rendered.data["policy.yaml"],
        "identity:get_user: role:admin or role:reader\n\
         identity:list_users: rule:admin_required\n"
    );
    assert!(
        rendered.data["logging.conf"].contains("[logger_root]\nlevel = WARNING\n"),
        "{}",
        rendered.data["logging.conf"]
    );
    assert_eq!(
        rendered.data["sso_callback_template.html"],
        sso_template::SSO_CALLBACK_TEMPLATE_HTML
    );
}

#[test]
fn each_optional_file_follows_its_own_input() {
    let full = keystone(FULL);
    let mut no_policy = full.clone();
    no_policy.spec.policy_overrides = None;
    let mut text_logging = full.clone();
    if let Some(logging) = text_logging.spec.logging.as_mut() {
        logging.format = "text".into();
    }
    let mut no_federation = full_inputs();
    no_federation.federation = None;
    let cases = [
        ("no policyOverrides", &no_policy, full_inputs(), POLICY_YAML),
        ("text logging", &text_logging, full_inputs(), LOGGING_CONF),
        (
            "no federation projection",
            &full,
            no_federation,
            SSO_CALLBACK_TEMPLATE,
        ),
    ];
    for (case, ks, inputs, missing) in cases {
        let rendered = render(ks, &inputs).expect("renders");
        assert_eq!(rendered.data.len(), 4, "{case}: {:?}", keys(&rendered));
        assert!(!rendered.data.contains_key(missing), "{case}");
    }
    let conf = &render(&no_policy, &full_inputs()).expect("renders").data[KEYSTONE_CONF];
    assert!(
        conf.contains("policy_file = /etc/keystone/elsewhere.yaml\n"),
        "without a policy extraConfig's policy_file stays: {conf}"
    );
    let conf = &render(&text_logging, &full_inputs()).expect("renders").data[KEYSTONE_CONF];
    assert!(!conf.contains("log_config_append"), "{conf}");
}

#[test]
fn the_config_map_is_named_base_dash_the_content_hash_of_its_data() {
    let rendered = render(&keystone(FULL), &full_inputs()).expect("renders");
    assert_eq!(rendered.base_name, "keystone-config");
    assert_eq!(
        rendered.config_map_name,
        format!("keystone-config-{}", spec_hash(&rendered.data))
    );
}

#[test]
fn a_change_of_any_input_is_a_change_of_name() {
    let base = render(&keystone(MINIMAL), &minimal_inputs()).expect("renders");
    let again = render(&keystone(MINIMAL), &minimal_inputs()).expect("renders");
    assert_eq!(base.config_map_name, again.config_map_name);
    let domains = ConfigInputs {
        domains_projected: true,
        ..Default::default()
    };
    let changed = render(&keystone(MINIMAL), &domains).expect("renders");
    assert_ne!(base.config_map_name, changed.config_map_name);
}

#[test]
fn the_shipped_paths_are_the_data_keys_in_the_mounted_directory() {
    let cases = [
        (keystone_conf::POLICY_FILE, POLICY_YAML),
        (keystone_conf::LOGGING_CONF_FILE, LOGGING_CONF),
        (keystone_conf::API_PASTE_FILE, API_PASTE_INI),
        (
            keystone_conf::SSO_CALLBACK_TEMPLATE_FILE,
            SSO_CALLBACK_TEMPLATE,
        ),
    ];
    for (path, key) in cases {
        assert_eq!(path, format!("{CONFIG_DIR}/{key}"));
    }
}

#[test]
fn a_keystone_without_a_name_is_an_error() {
    let mut ks = keystone(MINIMAL);
    ks.metadata.name = None;
    let err = render(&ks, &minimal_inputs()).expect_err("unnamed");
    assert!(matches!(err, ConfigError::Unnamed), "{err:?}");
    assert_eq!(err.to_string(), "the Keystone has no metadata.name");
}
