use serde_json::{Value, json};
use wasm_operator_sdk::admission::{Operation, Validated};
use wasm_operator_sdk::testing::FakeCluster;

use crate::admission::tests::{Changes, Table, field_errors, keystone, request, with};
use crate::admission::validate_object;

fn create(changes: &[(&str, Value)]) -> Validated {
    let object = with(keystone(), changes);
    validate_object(
        &FakeCluster::new(),
        &request(Operation::Create, object, None),
    )
}

fn extra(config: Value) -> (&'static str, Value) {
    ("/spec/extraConfig", config)
}

#[test]
fn extra_config_is_checked_against_the_catalog_of_the_image_release() {
    let table: &[(Value, &[&str])] = &[
        (
            json!({"token": {"expiration": "7200"}, "DEFAULT": {"max_param_size": "128"}}),
            &[],
        ),
        (
            json!({"token": {"expirations": "7200"}}),
            &[
                "spec.extraConfig[token][expirations]: Invalid value: \"expirations\": no such \
               option in the keystone 2022.2 option catalog",
            ],
        ),
        (
            json!({"DEFAULT": {"log-config-append": "/x"}}),
            &[
                "spec.extraConfig[DEFAULT][log-config-append]: Invalid value: \
               \"log-config-append\": no such option in the keystone 2022.2 option catalog",
            ],
        ),
        (
            json!({"my_driver": {"url": "ldap://x", "user": "cn=admin"}}),
            &[
                "spec.extraConfig[my_driver][url]: Invalid value: \"url\": no such section in \
                 the keystone 2022.2 option catalog (a plugin's section must be declared in \
                 spec.plugins)",
                "spec.extraConfig[my_driver][user]: Invalid value: \"user\": no such section in \
                 the keystone 2022.2 option catalog (a plugin's section must be declared in \
                 spec.plugins)",
            ],
        ),
        (json!({"Token": {"expiration": "7200"}}), &[]),
        (
            json!({"default": {"debug": "true"}}),
            &[
                "spec.extraConfig[default][debug]: Invalid value: \"debug\": no such section in \
               the keystone 2022.2 option catalog (a plugin's section must be declared in \
               spec.plugins)",
            ],
        ),
    ];
    for (config, expected) in table {
        let validated = create(&[extra(config.clone())]);
        assert_eq!(field_errors(&validated), *expected, "{config}");
        assert_eq!(validated.warnings, Vec::<String>::new(), "{config}");
    }
}

#[test]
fn plugin_sections_and_operator_owned_keys_are_not_looked_up() {
    let plugins = (
        "/spec/plugins",
        json!([{"name": "my-driver", "configSection": "MY_DRIVER"}]),
    );
    let table: &[(Changes<'_>, usize)] = &[
        (
            &[
                extra(json!({"my_driver": {"url": "ldap://x"}})),
                plugins.clone(),
            ],
            0,
        ),
        (&[extra(json!({"my_driver": {"url": "ldap://x"}}))], 1),
        (
            &[extra(
                json!({"DEFAULT": {"keystone_user": "ks"}, "openid": {"remote_id_attribute": "x"},
                           "token": {"provider": "fernet"}}),
            )],
            0,
        ),
        (
            &[extra(
                json!({"openid": {"remote_id_attribute": "x", "other": "y"}}),
            )],
            1,
        ),
    ];
    for (changes, errors) in table {
        assert_eq!(field_errors(&create(changes)).len(), *errors, "{changes:?}");
    }
}

#[test]
fn a_deprecated_option_is_allowed_with_a_warning() {
    let table: &[(Value, &[&str])] = &[
        (json!({"token": {"expiration": "7200"}}), &[]),
        (
            json!({"token": {"cache_on_issue": "true"}}),
            &["spec.extraConfig[token][cache_on_issue]: deprecated for removal in keystone 2022.2"],
        ),
        (
            json!({"DEFAULT": {"log_config": "/etc/keystone/logging.conf"}}),
            &[
                "spec.extraConfig[DEFAULT][log_config]: a deprecated name in keystone 2022.2, read \
               as [DEFAULT] log_config_append",
            ],
        ),
        (
            json!({"DEFAULT": {"bind_host": "0.0.0.0"}}),
            &[
                "spec.extraConfig[DEFAULT][bind_host]: a deprecated name in keystone 2022.2, read \
               as [eventlet_server] admin_bind_host and [eventlet_server] public_bind_host",
            ],
        ),
    ];
    for (config, expected) in table {
        let validated = create(&[extra(config.clone())]);
        assert_eq!(validated.denial, None, "{config}");
        assert_eq!(validated.warnings, *expected, "{config}");
    }
}

#[test]
fn without_a_catalog_for_the_image_extra_config_passes_with_one_warning() {
    let unknown = extra(json!({"nowhere": {"nothing": "x"}}));
    let digest = format!("sha256:{}", "0".repeat(64));
    let table: Table<'_> = &[
        (std::slice::from_ref(&unknown), &[]),
        (
            &[unknown.clone(), ("/spec/image/tag", json!("2025.2"))],
            &[
                "spec.extraConfig was not checked against an option catalog: none is embedded \
               for release 2025.2",
            ],
        ),
        (
            &[unknown.clone(), ("/spec/image/tag", json!("latest"))],
            &[
                "spec.extraConfig was not checked against an option catalog: spec.image does not \
               name an OpenStack release (a tag YYYY.N)",
            ],
        ),
        (
            &[
                unknown.clone(),
                ("/spec/image/tag", Value::Null),
                ("/spec/image/digest", json!(digest)),
            ],
            &[
                "spec.extraConfig was not checked against an option catalog: spec.image does not \
               name an OpenStack release (a tag YYYY.N)",
            ],
        ),
        (&[("/spec/image/tag", json!("latest"))], &[]),
    ];
    for (i, (changes, warnings)) in table.iter().enumerate() {
        let validated = create(changes);
        assert_eq!(validated.warnings, *warnings, "{changes:?}");
        assert_eq!(field_errors(&validated).is_empty(), i != 0, "{changes:?}");
    }
}

#[test]
fn a_trusted_dashboard_in_extra_config_is_rejected() {
    let table: &[(Value, &[&str])] = &[
        (
            json!({"federation": {"remote_id_attribute": "HTTP_OIDC_ISS"}}),
            &[],
        ),
        (
            json!({"federation": {"trusted_dashboard": "https://evil.example/"}}),
            &[
                "spec.extraConfig[federation][trusted_dashboard]: Forbidden: is set by \
               spec.federation.trustedDashboards; extraConfig wins the merge and would silently \
               replace it",
            ],
        ),
        (
            json!({"Federation": {"trusted_dashboard": "https://evil.example/"}}),
            &[
                "spec.extraConfig[Federation][trusted_dashboard]: Forbidden: is set by \
               spec.federation.trustedDashboards; extraConfig wins the merge and would silently \
               replace it",
            ],
        ),
    ];
    for (config, expected) in table {
        let plugin = (
            "/spec/plugins",
            json!([{"name": "f", "configSection": "federation"}]),
        );
        for changes in [
            vec![extra(config.clone())],
            vec![extra(config.clone()), plugin],
        ] {
            assert_eq!(field_errors(&create(&changes)), *expected, "{changes:?}");
        }
    }
}

#[test]
fn what_reaches_an_ini_file_verbatim_may_not_break_its_lines() {
    let key_rule = "must be an option name an INI file can hold: not empty, no line break, '=' or \
                    ':', no leading or trailing space, and not starting with '#', ';' or '['";
    let value_rule = "must not contain a newline or carriage return: the value is rendered \
                      verbatim, where a line break starts a new option";
    let section_rule = "must be a section name an INI file can hold: not empty, and no line \
                        break, '[', ']', or leading or trailing space";
    let plugin = |section: &str, config: Value| {
        (
            "/spec/plugins",
            json!([{"name": "p", "configSection": section, "config": config}]),
        )
    };
    let table: &[(Changes<'_>, Vec<String>)] = &[
        (
            &[extra(
                json!({"federation": {"remote_id_attribute": "HTTP_OIDC_ISS"}}),
            )],
            vec![],
        ),
        (
            &[extra(
                json!({"federation": {"remote_id_attribute": "x\ntrusted_dashboard = https://evil/"}}),
            )],
            vec![format!(
                "spec.extraConfig[federation][remote_id_attribute]: Invalid value: \
                 \"<value redacted>\": {value_rule}"
            )],
        ),
        (
            &[extra(
                json!({"federation": {"trusted_dashboard = https://evil/ #": "x"}}),
            )],
            vec![
                format!(
                    "spec.extraConfig[federation][trusted_dashboard = https://evil/ #]: Invalid \
                     value: \"trusted_dashboard = https://evil/ #\": {key_rule}"
                ),
                "spec.extraConfig[federation][trusted_dashboard = https://evil/ #]: Invalid \
                 value: \"trusted_dashboard = https://evil/ #\": no such option in the keystone \
                 2022.2 option catalog"
                    .into(),
            ],
        ),
        (
            &[extra(json!({"token]\n[token": {"provider": "uuid"}}))],
            vec![
                format!(
                    "spec.extraConfig[token]\n[token]: Invalid value: \"token]\\n[token\": {section_rule}"
                ),
                "spec.extraConfig[token]\n[token][provider]: Invalid value: \"provider\": no \
                 such section in the keystone 2022.2 option catalog (a plugin's section must be \
                 declared in spec.plugins)"
                    .into(),
            ],
        ),
        (
            &[plugin(
                "ldap_pool",
                json!({" url": "ldap://x", "user": "a\rb"}),
            )],
            vec![
                format!("spec.plugins[0].config[ url]: Invalid value: \" url\": {key_rule}"),
                format!(
                    "spec.plugins[0].config[user]: Invalid value: \"<value redacted>\": {value_rule}"
                ),
            ],
        ),
        (
            &[plugin("", json!({}))],
            vec![format!(
                "spec.plugins[0].configSection: Invalid value: \"\": {section_rule}"
            )],
        ),
        (
            &[(
                "/spec/middleware",
                json!([{"name": "audit\n[filter:x]",
                "filterFactory": "audit:filter_factory", "position": "before",
                "config": {"#x": "1"}}]),
            )],
            vec![
                format!(
                    "spec.middleware[0].name: Invalid value: \"audit\\n[filter:x]\": {value_rule}"
                ),
                format!("spec.middleware[0].config[#x]: Invalid value: \"#x\": {key_rule}"),
            ],
        ),
    ];
    for (changes, expected) in table {
        assert_eq!(field_errors(&create(changes)), *expected, "{changes:?}");
    }
}

#[test]
fn an_update_rechecks_extra_config_only_when_the_catalog_inputs_change() {
    // Stored before the catalog knew better: an option 2022.2 does not have.
    let stale = extra(json!({"token": {"expirations": "7200"}}));
    let old = with(keystone(), std::slice::from_ref(&stale));
    let unknown = "spec.extraConfig[token][expirations]: Invalid value: \"expirations\": no such \
                   option in the keystone 2022.2 option catalog";
    let too_few = "spec.fernet.maxActiveKeys: Invalid value: 2: must be at least 3";
    let plugins = (
        "/spec/plugins",
        json!([{"name": "p", "configSection": "ldap_pool"}]),
    );
    let table: Table<'_> = &[
        (
            &[stale.clone(), ("/spec/deployment/replicas", json!(5))],
            &[],
        ),
        // Validation ran (another rule fires) yet the stale option is not held against it.
        (
            &[stale.clone(), ("/spec/fernet/maxActiveKeys", json!(2))],
            &[too_few],
        ),
        (
            &[extra(
                json!({"token": {"expirations": "7200", "expiration": "3600"}}),
            )],
            &[unknown],
        ),
        (
            &[stale.clone(), ("/spec/image/tag", json!("2022.2-p1"))],
            &[unknown],
        ),
        (&[stale.clone(), plugins], &[unknown]),
    ];
    for (changes, expected) in table {
        let new = with(keystone(), changes);
        let validated = validate_object(
            &FakeCluster::new(),
            &request(Operation::Update, new, Some(old.clone())),
        );
        assert_eq!(field_errors(&validated), *expected, "{changes:?}");
    }
}
