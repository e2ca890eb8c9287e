//! The rendered configuration read by the real OpenStack tools of python3-keystone 22.0.2
//! (Debian's `/usr/bin/python3`): `oslo-config-validator` over keystone.conf,
//! `oslopolicy-validator` over the config directory as the PolicyValidation Job runs it,
//! Python's `logging.config` over logging.conf and `string.Template` over the WebSSO
//! template. A missing tool fails the test.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use keystone::Keystone;
use keystone::config::{
    ConfigInputs, FederationProjection, KEYSTONE_CONF, LOGGING_CONF, OidcProjection, POLICY_YAML,
    Rendered, SSO_CALLBACK_TEMPLATE, keystone_conf, render,
};

const CONFIG_VALIDATOR: &str = "/usr/bin/oslo-config-validator";
const POLICY_VALIDATOR: &str = "/usr/bin/oslopolicy-validator";
const PYTHON: &str = "/usr/bin/python3";

/// The option namespaces of keystone's `config-generator/keystone.conf` (the sample
/// config's sources), each an `oslo.config.opts` entry point of the installed packages.
const NAMESPACES: [&str; 8] = [
    "keystone",
    "oslo.cache",
    "oslo.log",
    "oslo.messaging",
    "oslo.policy",
    "oslo.db",
    "oslo.middleware",
    "osprofiler",
];

/// The options facts §2.7 renders that keystone 22.0.2 registers in none of
/// [`NAMESPACES`], as the validator names them. `[openid] remote_id_attribute` is
/// registered per federation protocol at run time (`keystone.federation.utils`); the
/// others are no options of this release (keystone_user/keystone_group are
/// `keystone-manage` flags; `[credential]` has no max_active_keys, `[memcache]` no
/// servers, and there is no `[paste_deploy]` group).
const NOT_REGISTERED_BY_KEYSTONE_22: [&str; 5] = [
    "DEFAULT/keystone_group",
    "DEFAULT/keystone_user",
    "credential/max_active_keys",
    "memcache/servers",
    "paste_deploy/config_file",
];
const OIDC_ATTRIBUTE: &str = "openid/remote_id_attribute";

/// A Keystone using every input of its configuration (the golden tests' full one).
const FULL: &str = include_str!("../src/config/testdata/full.yaml");

fn keystone(manifest: &str) -> Keystone {
    serde_yaml_ng::from_str(manifest).expect("the fixture is a Keystone")
}

/// The full Keystone's projections: its policy ConfigMap, a domains Secret and an OIDC
/// backend.
fn full_inputs() -> ConfigInputs {
    ConfigInputs {
        config_map_policy: Some(BTreeMap::from([
            ("identity:get_user".to_owned(), "role:admin".to_owned()),
            (
                "identity:list_users".to_owned(),
                "rule:admin_required".to_owned(),
            ),
        ])),
        domains_projected: true,
        federation: Some(FederationProjection {
            oidc: Some(OidcProjection::default()),
            saml: None,
        }),
    }
}

/// An empty directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("oslo_tools")
        .join(test);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).expect("clears the scratch directory");
    }
    std::fs::create_dir_all(&dir).expect("creates the scratch directory");
    dir
}

/// Writes every data key of `rendered` into `dir`, as the ConfigMap volume shows them.
fn write_all(dir: &Path, rendered: &Rendered) {
    for (key, value) in &rendered.data {
        std::fs::write(dir.join(key), value).expect("writes a rendered file");
    }
}

fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|err| panic!("{program} did not run ({err}): install python3-keystone"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// What `oslo-config-validator --fatal-warnings` reports about `conf`: whether it
/// passed, the `group/option`s it does not know, and its warnings.
fn validate_config(dir: &Path, conf: &str) -> (bool, Vec<String>, Vec<String>) {
    let path = dir.join(KEYSTONE_CONF);
    std::fs::write(&path, conf).expect("writes keystone.conf");
    let path = path.to_str().expect("a UTF-8 path");
    let mut args = vec!["--fatal-warnings", "--input-file", path];
    for namespace in NAMESPACES {
        args.extend(["--namespace", namespace]);
    }
    let out = run(CONFIG_VALIDATOR, &args);
    let stderr = text(&out.stderr);
    let unknown = stderr
        .lines()
        .filter_map(|line| line.strip_prefix("ERROR:root:"))
        .map(|line| {
            line.strip_suffix(" is not part of the sample config")
                .unwrap_or_else(|| panic!("an unexpected error: {line}\n{stderr}"))
                .to_owned()
        })
        .collect();
    let warnings = stderr
        .lines()
        .filter(|line| line.starts_with("WARNING:"))
        .map(str::to_owned)
        .collect();
    (out.status.success(), unknown, warnings)
}

#[test]
fn oslo_config_validator_knows_every_option_of_the_full_keystone_conf_but_the_facts_own() {
    let dir = scratch("config_validator");
    let full = keystone(FULL);
    let mut unknown_option = full.clone();
    unknown_option.spec.extra_config.insert(
        "DEFAULT".into(),
        BTreeMap::from([("no_such_option".to_owned(), "1".to_owned())]),
    );
    let mut unknown_section = full.clone();
    unknown_section.spec.extra_config.insert(
        "no_such_section".into(),
        BTreeMap::from([("enabled".to_owned(), "true".to_owned())]),
    );
    let mut known: Vec<&str> = NOT_REGISTERED_BY_KEYSTONE_22
        .into_iter()
        .chain([OIDC_ATTRIBUTE])
        .collect();
    known.sort_unstable();
    let with = |extra: &'static str| {
        let mut all = known.clone();
        all.push(extra);
        all.sort_unstable();
        all
    };
    let cases = [
        ("the full Keystone", &full, known.clone()),
        (
            "an option keystone does not have",
            &unknown_option,
            with("DEFAULT/no_such_option"),
        ),
        (
            "a section keystone does not have",
            &unknown_section,
            with("no_such_section/enabled"),
        ),
    ];
    for (case, ks, expected) in cases {
        let rendered = render(ks, &full_inputs()).expect("renders");
        let (passed, mut unknown, warnings) = validate_config(&dir, &rendered.data[KEYSTONE_CONF]);
        unknown.sort_unstable();
        assert_eq!(unknown, expected, "{case}");
        assert!(
            warnings.is_empty(),
            "{case}: no deprecated option, every namespace loaded: {warnings:?}"
        );
        assert!(!passed, "{case}: the facts' own options fail the validator");
    }
}

/// What `oslopolicy-validator --namespace keystone` says about `rendered`, read from its
/// config directory as the PolicyValidation Job reads it, with `policy_file` pointed at
/// this directory's `policy.yaml` by a later config file.
fn validate_policy(dir: &Path, rendered: &Rendered) -> (bool, String) {
    write_all(dir, rendered);
    let policy = dir.join(POLICY_YAML);
    let repoint = dir.join("repoint.ini");
    std::fs::write(
        &repoint,
        format!("[oslo_policy]\npolicy_file = {}\n", policy.display()),
    )
    .expect("writes the repointing config");
    let out = run(
        POLICY_VALIDATOR,
        &[
            "--namespace",
            "keystone",
            "--config-dir",
            dir.to_str().expect("a UTF-8 path"),
            "--config-file",
            repoint.to_str().expect("a UTF-8 path"),
        ],
    );
    (out.status.success(), text(&out.stdout) + &text(&out.stderr))
}

#[test]
fn oslopolicy_validator_accepts_the_rendered_policy_and_refuses_an_invalid_rule() {
    let dir = scratch("policy_validator");
    let with_rule = |name: &str, rule: &str| {
        let mut ks = keystone(FULL);
        if let Some(policy) = ks.spec.policy_overrides.as_mut() {
            policy.rules.insert(name.into(), rule.into());
        }
        ks
    };
    let cases = [
        ("the full Keystone's policy", keystone(FULL), None),
        (
            "a rule that does not parse",
            with_rule("identity:list_projects", "role:admin or ("),
            Some("Failed to parse rule: role:admin or ("),
        ),
        (
            "a rule keystone does not have",
            with_rule("identity:no_such_api", "role:admin"),
            Some("Unknown rule found in policy file: identity:no_such_api"),
        ),
        (
            "a rule naming a rule that does not exist",
            with_rule("identity:list_projects", "rule:no_such_rule"),
            Some("Invalid rules found"),
        ),
    ];
    for (case, ks, refusal) in cases {
        let rendered = render(&ks, &full_inputs()).expect("renders");
        assert!(
            rendered.data[KEYSTONE_CONF]
                .contains(&format!("policy_file = {}\n", keystone_conf::POLICY_FILE)),
            "{case}: keystone.conf names the shipped policy"
        );
        let (passed, output) = validate_policy(&dir, &rendered);
        match refusal {
            None => assert!(passed, "{case}: {output}"),
            Some(message) => {
                assert!(!passed, "{case} passed: {output}");
                assert!(output.contains(message), "{case}: {output}");
            }
        }
    }
}

#[test]
fn python_logging_reads_the_json_logging_conf_and_writes_json_to_stderr() {
    let dir = scratch("logging_conf");
    let rendered = render(&keystone(FULL), &full_inputs()).expect("renders");
    write_all(&dir, &rendered);
    let script = "import logging, logging.config, sys\n\
        logging.config.fileConfig(sys.argv[1])\n\
        root = logging.getLogger()\n\
        handler = root.handlers[0]\n\
        formatter = type(handler.formatter)\n\
        print(logging.getLevelName(root.level), type(handler).__name__, \
        formatter.__module__ + '.' + formatter.__name__, handler.stream is sys.stderr)\n\
        root.warning('rendered by the keystone reconciler')\n\
        root.info('filtered out')\n";
    let conf = dir.join(LOGGING_CONF);
    let out = run(
        PYTHON,
        &["-c", script, conf.to_str().expect("a UTF-8 path")],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "WARNING StreamHandler oslo_log.formatters.JSONFormatter True\n"
    );
    let stderr = text(&out.stderr);
    let records: Vec<serde_json::Value> = stderr
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    assert_eq!(records.len(), 1, "{stderr}");
    assert_eq!(records[0]["message"], "rendered by the keystone reconciler");
    assert_eq!(records[0]["levelname"], "WARNING");
}

#[test]
fn keystones_string_template_fills_the_sso_callback_template() {
    let dir = scratch("sso_template");
    let rendered = render(&keystone(FULL), &full_inputs()).expect("renders");
    write_all(&dir, &rendered);
    // What keystone.api.auth does with the file: string.Template(...).substitute.
    let script = "import string, sys\n\
        src = string.Template(open(sys.argv[1]).read())\n\
        sys.stdout.write(src.substitute({'host': 'https://horizon.example.com/auth/websso/', \
        'token': 'gAAAAABtoken'}))\n";
    let template = dir.join(SSO_CALLBACK_TEMPLATE);
    let out = run(
        PYTHON,
        &["-c", script, template.to_str().expect("a UTF-8 path")],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let page = text(&out.stdout);
    for fragment in [
        r#"action="https://horizon.example.com/auth/websso/" method="post""#,
        r#"name="token" id="token" value="gAAAAABtoken""#,
    ] {
        assert!(page.contains(fragment), "{fragment}\n{page}");
    }
    assert!(!page.contains('$'), "{page}");
}
