use serde_json::{Value, json};
use wasm_operator_sdk::ApiError;
use wasm_operator_sdk::testing::{FakeCluster, Op};

use super::*;
use crate::testing::secret;

/// A backend `corp-ldap` for domain `corp` with `ldap` as its LDAP block and `extra` as
/// its extra options.
fn backend(ldap: Value, extra: Value) -> IdentityBackend {
    serde_json::from_value(json!({
        "metadata": {"name": "corp-ldap", "namespace": "ns"},
        "spec": {"keystoneRef": {"name": "ks"}, "domain": {"name": "corp"}, "type": "LDAP",
                 "ldap": ldap, "extraOptions": extra}}))
    .expect("a backend")
}

fn minimal() -> Value {
    json!({"url": "ldap://ldap.example.com", "bindCredentialsSecretRef": {"name": "bind"},
           "suffix": "dc=example,dc=com", "users": {"treeDN": "ou=Users,dc=example,dc=com"}})
}

fn full() -> Value {
    json!({"url": "ldaps://ldap.example.com", "bindCredentialsSecretRef": {"name": "bind"},
        "suffix": "dc=example,dc=com",
        "users": {"treeDN": "ou=Users,dc=example,dc=com", "filter": "(objectClass=person)",
                  "objectClass": "inetOrgPerson", "idAttribute": "uid", "nameAttribute": "cn",
                  "mailAttribute": "mail"},
        "groups": {"treeDN": "ou=Groups,dc=example,dc=com", "filter": "(objectClass=groupOfNames)",
                   "objectClass": "groupOfNames", "idAttribute": "cn", "nameAttribute": "cn",
                   "memberAttribute": "member"},
        "tls": {"caBundleSecretRef": {"name": "ldap-ca"}},
        "pool": {"enabled": true, "size": 10}})
}

/// The bind Secret `bind` (its values end in the newlines tools leave) and the CA Secret.
fn cluster() -> FakeCluster {
    FakeCluster::new()
        .with(secret(
            "bind",
            &[
                ("username", "cn=admin,dc=example,dc=com\n"),
                ("password", "s3cret\r\n"),
            ],
        ))
        .with(secret(
            "ldap-ca",
            &[("ca.crt", "-----BEGIN CERTIFICATE-----\n")],
        ))
}

fn rendered(cluster: &FakeCluster, backend: &IdentityBackend) -> Rendered {
    render(cluster, "ns", backend)
        .expect("reads")
        .expect("renders")
}

#[test]
fn a_full_spec_renders_every_option_sorted_with_the_ca_bundle_beside_it() {
    let got = rendered(&cluster(), &backend(full(), json!({"query_scope": "sub"})));
    assert_eq!(
        got.conf,
        "[identity]\ndriver = ldap\n\n[ldap]\n\
         group_allow_create = false\ngroup_allow_delete = false\ngroup_allow_update = false\n\
         group_filter = (objectClass=groupOfNames)\ngroup_id_attribute = cn\n\
         group_member_attribute = member\ngroup_name_attribute = cn\n\
         group_objectclass = groupOfNames\ngroup_tree_dn = ou=Groups,dc=example,dc=com\n\
         password = s3cret\npool_size = 10\nquery_scope = sub\nsuffix = dc=example,dc=com\n\
         tls_cacertfile = /etc/keystone/domains/corp-ca.pem\nurl = ldaps://ldap.example.com\n\
         use_pool = true\nuser = cn=admin,dc=example,dc=com\n\
         user_allow_create = false\nuser_allow_delete = false\nuser_allow_update = false\n\
         user_enabled_default = false\nuser_enabled_invert = true\n\
         user_filter = (objectClass=person)\nuser_id_attribute = uid\n\
         user_mail_attribute = mail\nuser_name_attribute = cn\n\
         user_objectclass = inetOrgPerson\nuser_tree_dn = ou=Users,dc=example,dc=com\n"
    );
    assert_eq!(got.ca.as_deref(), Some("-----BEGIN CERTIFICATE-----\n"));
    assert_eq!(got.size(), got.conf.len() + 28);
}

#[test]
fn a_minimal_spec_renders_the_required_options_and_the_defaults_only() {
    let got = rendered(&cluster(), &backend(minimal(), json!({})));
    assert_eq!(
        got.conf,
        "[identity]\ndriver = ldap\n\n[ldap]\n\
         group_allow_create = false\ngroup_allow_delete = false\ngroup_allow_update = false\n\
         password = s3cret\nsuffix = dc=example,dc=com\nurl = ldap://ldap.example.com\n\
         user = cn=admin,dc=example,dc=com\n\
         user_allow_create = false\nuser_allow_delete = false\nuser_allow_update = false\n\
         user_enabled_default = false\nuser_enabled_invert = true\n\
         user_tree_dn = ou=Users,dc=example,dc=com\n"
    );
    assert_eq!(got.ca, None);
}

#[test]
fn read_only_and_the_enabled_options_decide_the_defaults() {
    let allow = |conf: &str| {
        READ_ONLY_FORCED
            .iter()
            .all(|o| conf.contains(&format!("{o} = false")))
    };
    let enabled = |conf: &str| {
        conf.contains("user_enabled_invert = true\n")
            && conf.contains("user_enabled_default = false\n")
    };
    let mut writable = minimal();
    writable["readOnly"] = json!(false);
    let mut read_only = minimal();
    read_only["readOnly"] = json!(true);
    let cases = [
        (
            "readOnly absent forces the six allow options off",
            minimal(),
            json!({}),
            true,
            true,
        ),
        (
            "readOnly true forces them off",
            read_only,
            json!({}),
            true,
            true,
        ),
        (
            "readOnly false leaves them to Keystone",
            writable.clone(),
            json!({}),
            false,
            true,
        ),
        (
            "an extra option starting with user_enabled_ suppresses both enabled defaults",
            writable,
            json!({"user_enabled_attribute": "userAccountControl", "user_enabled_mask": "2"}),
            false,
            false,
        ),
    ];
    for (case, ldap, extra, want_allow, want_enabled) in cases {
        let conf = rendered(&cluster(), &backend(ldap, extra)).conf;
        assert_eq!(allow(&conf), want_allow, "{case}:\n{conf}");
        assert!(conf.contains("_allow_") == want_allow, "{case}:\n{conf}");
        assert_eq!(enabled(&conf), want_enabled, "{case}:\n{conf}");
        if !want_enabled {
            assert!(
                conf.contains(
                    "user_enabled_attribute = userAccountControl\nuser_enabled_mask = 2\n"
                ),
                "{case}: the extra options render verbatim:\n{conf}"
            );
        }
    }
}

#[test]
fn render_faults_skip_the_backend_and_never_name_a_value() {
    let mut tls = minimal();
    tls["tls"] = json!({"caBundleSecretRef": {"name": "missing-ca"}});
    let cases = [
        (
            "a missing bind Secret",
            FakeCluster::new(),
            backend(minimal(), json!({})),
            "getting Secret ns/bind: not found",
        ),
        (
            "a bind Secret without its password",
            FakeCluster::new().with(secret("bind", &[("username", "u")])),
            backend(minimal(), json!({})),
            "key not found in Secret: key \"password\" in Secret ns/bind",
        ),
        (
            "a missing CA Secret",
            cluster(),
            backend(tls, json!({})),
            "getting Secret ns/missing-ca: not found",
        ),
        (
            "a newline inside the bind password",
            FakeCluster::new().with(secret(
                "bind",
                &[
                    ("username", "u"),
                    ("password", "pw\nuser_allow_create = true"),
                ],
            )),
            backend(minimal(), json!({})),
            "[ldap] option \"password\": [ldap] option name or value contains a newline or \
             carriage-return character",
        ),
        (
            "a carriage return in an extra option's value",
            cluster(),
            backend(minimal(), json!({"query_scope": "sub\rx"})),
            "[ldap] option \"query_scope\": [ldap] option name or value contains a newline or \
             carriage-return character",
        ),
        (
            "a newline in an extra option's name",
            cluster(),
            backend(minimal(), json!({"a\nb": "c"})),
            "[ldap] option \"a\\nb\": [ldap] option name or value contains a newline or \
             carriage-return character",
        ),
        (
            "an LDAP backend without its ldap block",
            cluster(),
            backend(Value::Null, json!({})),
            "backend has type \"LDAP\" but no ldap block",
        ),
    ];
    for (case, cluster, backend, want) in cases {
        let fault = render(&cluster, "ns", &backend)
            .expect("a fault is not an error")
            .expect_err(case);
        let message = fault.to_string();
        assert_eq!(message, want, "{case}");
        assert!(!message.contains("user_allow_create = true"), "{case}");
    }
}

#[test]
fn a_failed_read_of_a_secret_fails_the_pass_naming_the_backend() {
    let cluster = cluster().failing(Op::Get, "bind", ApiError::Unavailable("down".into()));
    let err = render(&cluster, "ns", &backend(minimal(), json!({}))).expect_err("fails");
    assert_eq!(
        err.to_string(),
        "rendering the domain config of backend corp-ldap: getting Secret ns/bind: unavailable: down"
    );
}
