use std::collections::BTreeMap;

use wasm_operator_sdk::blocks::types::PluginSpec;

use super::*;
use crate::config::fixtures::{FULL, MINIMAL, file, full_inputs, keystone, minimal_inputs};
use crate::config::{FederationProjection, OidcProjection, SamlProjection};

fn section<'a>(conf: &'a str, name: &str) -> Vec<&'a str> {
    let header = format!("[{name}]");
    conf.lines()
        .skip_while(|line| *line != header)
        .skip(1)
        .take_while(|line| !line.is_empty())
        .collect()
}

fn plugin(name: &str, section: &str, config: &[(&str, &str)]) -> PluginSpec {
    PluginSpec {
        name: name.into(),
        config_section: section.into(),
        config: config
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

#[test]
fn a_minimal_keystone_renders_the_operator_defaults_only() {
    let conf = render(&keystone(MINIMAL), &minimal_inputs(), false).expect("renders");
    let expected = file(&[
        "[DEFAULT]",
        "debug = false",
        "keystone_group = ",
        "keystone_user = ",
        "use_stderr = true",
        "",
        "[cache]",
        "backend = dogpile.cache.pymemcache",
        "enabled = true",
        "memcache_servers = memcached:11211",
        "",
        "[credential]",
        "key_repository = /etc/keystone/credential-keys",
        "max_active_keys = 3",
        "",
        "[database]",
        "connection = mysql+pymysql://placeholder",
        "connection_recycle_time = 600",
        "max_retries = -1",
        "",
        "[fernet_tokens]",
        "key_repository = /etc/keystone/fernet-keys",
        "max_active_keys = 3",
        "",
        "[identity]",
        "default_domain_id = default",
        "",
        "[memcache]",
        "servers = memcached:11211",
        "",
        "[oslo_middleware]",
        "enable_proxy_headers_parsing = true",
        "",
        "[oslo_policy]",
        "enforce_new_defaults = true",
        "enforce_scope = true",
        "",
        "[paste_deploy]",
        "config_file = /etc/keystone/keystone.conf.d/api-paste.ini",
        "",
        "[token]",
        "provider = fernet",
    ]);
    assert_eq!(conf, expected);
}

#[test]
fn a_full_keystone_merges_plugins_under_defaults_and_extra_config_over_everything() {
    let conf = render(&keystone(FULL), &full_inputs(), true).expect("renders");
    let expected = file(&[
        "[DEFAULT]",
        "debug = true",
        "default_log_levels = keystonemiddleware=ERROR,sqlalchemy=WARNING",
        "keystone_group = ",
        "keystone_user = ",
        "log_config_append = /etc/keystone/keystone.conf.d/logging.conf",
        "max_param_size = 128",
        "use_stderr = true",
        "",
        "[auth]",
        "methods = external,password,token,oauth1,mapped,application_credential,openid",
        "",
        "[cache]",
        "backend = dogpile.cache.pymemcache",
        "enabled = false",
        "expiration_time = 600",
        "memcache_servers = mc-0.memcached:11211,mc-1.memcached:11211",
        "",
        "[credential]",
        "key_repository = /etc/keystone/credential-keys",
        "max_active_keys = 4",
        "",
        "[database]",
        "connection = mysql+pymysql://placeholder",
        "connection_recycle_time = 600",
        "max_retries = -1",
        "",
        "[federation]",
        "sso_callback_template = /etc/keystone/keystone.conf.d/sso_callback_template.html",
        "trusted_dashboard = https://horizon.example.com/auth/websso/",
        "trusted_dashboard = https://dashboard.example.com/auth/websso/",
        "",
        "[fernet_tokens]",
        "key_repository = /etc/keystone/fernet-keys",
        "max_active_keys = 5",
        "",
        "[identity]",
        "default_domain_id = default",
        "domain_config_dir = /etc/keystone/domains",
        "domain_specific_drivers_enabled = true",
        "",
        "[memcache]",
        "servers = mc-0.memcached:11211,mc-1.memcached:11211",
        "",
        "[openid]",
        "remote_id_attribute = HTTP_OIDC_ISS",
        "",
        "[oslo_middleware]",
        "enable_proxy_headers_parsing = true",
        "",
        "[oslo_policy]",
        "enforce_new_defaults = true",
        "enforce_scope = true",
        "policy_file = /etc/keystone/keystone.conf.d/policy.yaml",
        "",
        "[paste_deploy]",
        "config_file = /etc/keystone/keystone.conf.d/api-paste.ini",
        "",
        "[saml2]",
        "remote_id_attribute = MELLON_IDP",
        "",
        "[security_compliance]",
        "lockout_duration = 1800",
        "lockout_failure_attempts = 3",
        "",
        "[token]",
        "expiration = 7200",
        "provider = fernet",
    ]);
    assert_eq!(conf, expected);
}

#[test]
fn an_operator_default_wins_over_a_plugin_and_extra_config_wins_over_both() {
    let mut ks = keystone(MINIMAL);
    ks.spec.plugins = vec![plugin(
        "tuning",
        "token",
        &[("provider", "jws"), ("expiration", "600")],
    )];
    let conf = render(&ks, &minimal_inputs(), false).expect("renders");
    assert_eq!(
        section(&conf, "token"),
        ["expiration = 600", "provider = fernet"]
    );

    ks.spec.extra_config = BTreeMap::from([(
        "token".to_owned(),
        BTreeMap::from([
            ("provider".to_owned(), "jws".to_owned()),
            ("expiration".to_owned(), "60".to_owned()),
        ]),
    )]);
    let conf = render(&ks, &minimal_inputs(), false).expect("renders");
    assert_eq!(
        section(&conf, "token"),
        ["expiration = 60", "provider = jws"]
    );
}

#[test]
fn a_rendered_policy_forces_policy_file_over_extra_config() {
    let mut ks = keystone(MINIMAL);
    ks.spec.extra_config = BTreeMap::from([(
        "oslo_policy".to_owned(),
        BTreeMap::from([("policy_file".to_owned(), "/tmp/mine.yaml".to_owned())]),
    )]);
    let without = render(&ks, &minimal_inputs(), false).expect("renders");
    assert!(
        section(&without, "oslo_policy").contains(&"policy_file = /tmp/mine.yaml"),
        "{without}"
    );
    let with = render(&ks, &minimal_inputs(), true).expect("renders");
    assert!(
        section(&with, "oslo_policy")
            .contains(&"policy_file = /etc/keystone/keystone.conf.d/policy.yaml"),
        "{with}"
    );
}

#[test]
fn trusted_dashboards_render_one_line_each_even_without_federation() {
    let mut ks = keystone(FULL);
    ks.spec.extra_config.clear();
    let conf = render(&ks, &minimal_inputs(), false).expect("renders");
    assert_eq!(
        section(&conf, "federation"),
        [
            "trusted_dashboard = https://horizon.example.com/auth/websso/",
            "trusted_dashboard = https://dashboard.example.com/auth/websso/",
        ]
    );
    assert!(section(&conf, "auth").is_empty(), "{conf}");
    assert!(section(&conf, "openid").is_empty(), "{conf}");
}

#[test]
fn the_typed_dashboards_replace_a_trusted_dashboard_of_extra_config() {
    let mut ks = keystone(FULL);
    ks.spec.extra_config = BTreeMap::from([(
        "federation".to_owned(),
        BTreeMap::from([(
            "trusted_dashboard".to_owned(),
            "https://other.example.com/".to_owned(),
        )]),
    )]);
    let conf = render(&ks, &minimal_inputs(), false).expect("renders");
    assert!(!conf.contains("other.example.com"), "{conf}");
}

#[test]
fn federation_without_backend_attributes_uses_the_defaults() {
    let inputs = ConfigInputs {
        federation: Some(FederationProjection {
            oidc: Some(OidcProjection::default()),
            saml: Some(SamlProjection::default()),
        }),
        ..Default::default()
    };
    let conf = render(&keystone(MINIMAL), &inputs, false).expect("renders");
    assert_eq!(
        section(&conf, "openid"),
        ["remote_id_attribute = HTTP_OIDC_ISS"]
    );
    assert_eq!(
        section(&conf, "mapped"),
        ["remote_id_attribute = HTTP_MELLON_IDP"]
    );
    assert_eq!(
        section(&conf, "federation"),
        ["sso_callback_template = /etc/keystone/keystone.conf.d/sso_callback_template.html"]
    );
}

#[test]
fn federation_with_only_saml_renders_no_openid_section() {
    let inputs = ConfigInputs {
        federation: Some(FederationProjection {
            oidc: None,
            saml: Some(SamlProjection {
                protocol_id: "saml2".into(),
                remote_id_attribute: String::new(),
            }),
        }),
        ..Default::default()
    };
    let conf = render(&keystone(MINIMAL), &inputs, false).expect("renders");
    assert!(section(&conf, "openid").is_empty(), "{conf}");
    assert_eq!(
        section(&conf, "saml2"),
        ["remote_id_attribute = HTTP_MELLON_IDP"]
    );
    assert_eq!(
        section(&conf, "auth"),
        ["methods = external,password,token,oauth1,mapped,application_credential,openid"]
    );
}

#[test]
fn a_saml_protocol_id_naming_an_operator_section_is_refused() {
    for (protocol, refused) in [("saml2", false), ("identity", true), ("openid", true)] {
        let inputs = ConfigInputs {
            federation: Some(FederationProjection {
                oidc: Some(OidcProjection::default()),
                saml: Some(SamlProjection {
                    protocol_id: protocol.into(),
                    remote_id_attribute: String::new(),
                }),
            }),
            ..Default::default()
        };
        match render(&keystone(MINIMAL), &inputs, false) {
            Ok(_) => assert!(!refused, "{protocol} rendered"),
            Err(err @ ConfigError::SamlProtocolCollides { .. }) => {
                assert!(refused, "{protocol}: {err}");
                assert!(
                    err.to_string().contains(&format!(
                        "SAML protocol id {protocol:?} names a keystone.conf section"
                    )),
                    "{err}"
                );
            }
            Err(other) => panic!("{protocol}: {other}"),
        }
    }
}

#[test]
fn a_backend_attribute_with_a_line_break_cannot_add_options() {
    let inputs = ConfigInputs {
        federation: Some(FederationProjection {
            oidc: Some(OidcProjection {
                remote_id_attribute: "HTTP_OIDC_ISS\n[oslo_policy]\nenforce_scope = false".into(),
            }),
            saml: None,
        }),
        ..Default::default()
    };
    let err = render(&keystone(MINIMAL), &inputs, false).expect_err("refused");
    assert!(matches!(err, ConfigError::Line { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "keystone.conf: [openid] remote_id_attribute: the value contains a line break"
    );
}

#[test]
fn a_plugin_value_with_a_line_break_cannot_override_an_operator_default() {
    let mut ks = keystone(MINIMAL);
    ks.spec.plugins = vec![plugin(
        "sneaky",
        "security_compliance",
        &[("lockout_duration", "1\n[token]\nprovider = jws")],
    )];
    let err = render(&ks, &minimal_inputs(), false).expect_err("refused");
    assert_eq!(
        err.to_string(),
        "keystone.conf: [security_compliance] lockout_duration: the value contains a line break"
    );
}

#[test]
fn invalid_plugins_are_refused_naming_the_plugin() {
    let cases: Vec<(&str, Vec<PluginSpec>, Option<&str>)> = vec![
        (
            "two plugins in their own sections",
            vec![plugin("a", "s1", &[]), plugin("b", "s2", &[])],
            None,
        ),
        (
            "a plugin without a name",
            vec![plugin("a", "s1", &[]), plugin("", "s2", &[])],
            Some("spec.plugins[1]: the plugin's name must not be empty"),
        ),
        (
            "a plugin without a section",
            vec![plugin("a", "", &[])],
            Some("plugin \"a\": configSection must not be empty"),
        ),
        (
            "two plugins in one section",
            vec![plugin("a", "s1", &[]), plugin("b", "s1", &[])],
            Some("plugin \"b\": configSection \"s1\" is already configured by plugin \"a\""),
        ),
    ];
    for (case, plugins, expected) in cases {
        match (plugin_sections(&plugins), expected) {
            (Ok(sections), None) => assert_eq!(sections.len(), plugins.len(), "{case}"),
            (Err(err), Some(message)) => {
                assert!(
                    matches!(
                        err,
                        ConfigError::PluginNameEmpty { .. }
                            | ConfigError::PluginSectionEmpty { .. }
                            | ConfigError::PluginSectionDuplicate { .. }
                    ),
                    "{case}: {err:?}"
                );
                assert_eq!(err.to_string(), message, "{case}");
            }
            (got, expected) => panic!("{case}: expected {expected:?}, got {got:?}"),
        }
    }
}

#[test]
fn a_plugin_without_options_renders_its_section_header() {
    let mut ks = keystone(MINIMAL);
    ks.spec.plugins = vec![plugin("empty", "totp", &[])];
    let conf = render(&ks, &minimal_inputs(), false).expect("renders");
    assert!(
        conf.ends_with("\n[token]\nprovider = fernet\n\n[totp]\n"),
        "{conf}"
    );
}
