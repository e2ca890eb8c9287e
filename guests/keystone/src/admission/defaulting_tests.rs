use serde_json::{Value, json};
use wasm_operator_sdk::admission::Operation;

use super::*;
use crate::admission::tests::{request, with};
use crate::types::{API_VERSION, KIND};

/// A Keystone with only `spec`.
fn object(spec: Value) -> Value {
    json!({"apiVersion": API_VERSION, "kind": KIND,
           "metadata": {"name": "keystone", "namespace": "openstack"}, "spec": spec})
}

/// `spec` as defaulting leaves it.
fn defaulted(spec: Value) -> Value {
    let answer =
        default_object(&request(Operation::Create, object(spec), None)).expect("defaulted");
    answer.object["spec"].clone()
}

#[test]
fn an_empty_spec_gets_every_default_of_section_1_5() {
    let spec = defaulted(json!({}));
    let table: &[(&str, Value)] = &[
        ("/deployment/replicas", json!(3)),
        (
            "/deployment/resources",
            json!({"requests": {"memory": "256Mi", "cpu": "100m"},
                   "limits": {"memory": "512Mi", "cpu": "500m"}}),
        ),
        ("/fernet/maxActiveKeys", json!(3)),
        ("/credentialKeys/maxActiveKeys", json!(3)),
        ("/cache/backend", json!("dogpile.cache.pymemcache")),
        ("/bootstrap/adminUser", json!("admin")),
        ("/bootstrap/region", json!("RegionOne")),
        ("/trustFlush", json!({"schedule": "0 * * * *"})),
        (
            "/logging",
            json!({"format": "text", "level": "INFO", "debug": false}),
        ),
        ("/database/credentialsMode", json!("Static")),
    ];
    for (pointer, expected) in table {
        assert_eq!(spec.pointer(pointer), Some(expected), "{pointer} in {spec}");
    }
    let absent = [
        "/passwordRotation",
        "/uwsgi",
        "/database/tls",
        "/fernet/rotationSchedule",
    ];
    for pointer in absent {
        assert_eq!(spec.pointer(pointer), None, "{pointer} in {spec}");
    }
}

#[test]
fn a_typed_keystone_gets_its_defaults_in_place() {
    let mut keystone = Keystone::default();
    keystone.spec.fernet.max_active_keys = 5;
    crate::admission::defaulting::default_keystone(&mut keystone);
    assert_eq!(
        (
            keystone.spec.fernet.max_active_keys,
            keystone.spec.credential_keys.max_active_keys
        ),
        (5, 3)
    );
    assert_eq!(keystone.spec.deployment.replicas, 3);
    assert!(keystone.spec.trust_flush.is_some() && keystone.spec.logging.is_some());
}

#[test]
fn a_value_the_user_set_is_never_changed() {
    let spec = json!({
        "deployment": {"replicas": 5,
                       "resources": {"requests": {"cpu": "1"}}},
        "fernet": {"maxActiveKeys": 7},
        "credentialKeys": {"maxActiveKeys": 4},
        "cache": {"backend": "oslo_cache.memcache_pool"},
        "bootstrap": {"adminUser": "root", "region": "RegionTwo"},
        "trustFlush": {"schedule": "30 2 * * *", "suspend": true},
        "passwordRotation": {"enabled": true, "schedule": "0 3 * * 1", "passwordLength": 40},
        "uwsgi": {"processes": 4, "threads": 2, "httpKeepAlive": false},
        "logging": {"format": "json", "level": "DEBUG", "debug": true},
        "database": {"database": "keystone", "secretRef": {"name": "db"},
                     "credentialsMode": "Dynamic", "tls": {"mode": "verify-full"}}
    });
    let got = defaulted(spec.clone());
    let table = [
        "/deployment/replicas",
        "/deployment/resources",
        "/fernet/maxActiveKeys",
        "/credentialKeys/maxActiveKeys",
        "/cache/backend",
        "/bootstrap/adminUser",
        "/bootstrap/region",
        "/trustFlush",
        "/passwordRotation",
        "/uwsgi",
        "/logging",
        "/database/credentialsMode",
        "/database/tls/mode",
    ];
    for pointer in table {
        assert_eq!(got.pointer(pointer), spec.pointer(pointer), "{pointer}");
    }
}

#[test]
fn resources_are_defaulted_when_unset_or_empty_only() {
    let defaults = json!({"requests": {"memory": "256Mi", "cpu": "100m"},
                          "limits": {"memory": "512Mi", "cpu": "500m"}});
    let table: &[(Value, Value)] = &[
        (json!(null), defaults.clone()),
        (json!({}), defaults.clone()),
        (json!({"requests": {}, "limits": {}}), defaults.clone()),
        (
            json!({"limits": {"memory": "1Gi"}}),
            json!({"limits": {"memory": "1Gi"}}),
        ),
        (
            json!({"requests": {"cpu": "2"}}),
            json!({"requests": {"cpu": "2"}}),
        ),
    ];
    for (resources, expected) in table {
        let spec = if resources.is_null() {
            json!({})
        } else {
            json!({"deployment": {"resources": resources}})
        };
        let got = defaulted(spec);
        assert_eq!(&got["deployment"]["resources"], expected, "{resources}");
    }
}

#[test]
fn optional_blocks_get_their_leaf_defaults_only_where_the_facts_say() {
    let table: &[(Value, &str, Value)] = &[
        (
            json!({"passwordRotation": {"enabled": true}}),
            "/passwordRotation",
            json!({"enabled": true, "schedule": "0 0 1 * *", "passwordLength": 32}),
        ),
        (
            json!({"passwordRotation": {"suspend": true}}),
            "/passwordRotation",
            json!({"suspend": true}),
        ),
        (
            json!({"uwsgi": {}}),
            "/uwsgi",
            json!({"processes": 2, "threads": 1, "httpKeepAlive": true}),
        ),
        (
            json!({"uwsgi": {"harakiri": 20}}),
            "/uwsgi",
            json!({"processes": 2, "threads": 1, "httpKeepAlive": true, "harakiri": 20}),
        ),
        (
            json!({"logging": {"level": "WARNING"}}),
            "/logging",
            json!({"format": "text", "level": "WARNING", "debug": false}),
        ),
        (
            json!({"database": {"database": "keystone", "secretRef": {"name": "db"},
                                "tls": {"caBundleSecretRef": {"name": "ca"},
                                        "clientCertSecretRef": {"name": "cert"}}}}),
            "/database/tls",
            json!({"mode": "require", "caBundleSecretRef": {"name": "ca"},
                   "clientCertSecretRef": {"name": "cert"}}),
        ),
        (
            json!({"trustFlush": {"suspend": true}}),
            "/trustFlush",
            json!({"suspend": true}),
        ),
    ];
    for (spec, pointer, expected) in table {
        let got = defaulted(spec.clone());
        assert_eq!(got.pointer(pointer), Some(expected), "{spec}");
    }
}

#[test]
fn defaulting_writes_only_the_spec_and_keeps_what_the_type_does_not_know() {
    let object = with(
        object(json!({"unknownField": {"kept": true}})),
        &[
            ("/metadata/labels", json!({"team": "identity"})),
            (
                "/metadata/creationTimestamp",
                json!("2024-01-01T00:00:00.5+00:00"),
            ),
            (
                "/status",
                json!({"conditions": [{"type": "Ready"}], "odd": 1}),
            ),
        ],
    );
    let answer = default_object(&request(
        Operation::Update,
        object.clone(),
        Some(object.clone()),
    ))
    .expect("defaulted");
    for pointer in [
        "/apiVersion",
        "/kind",
        "/metadata",
        "/status",
        "/spec/unknownField",
    ] {
        assert_eq!(
            answer.object.pointer(pointer),
            object.pointer(pointer),
            "{pointer}"
        );
    }
    assert_eq!(
        answer.object.pointer("/spec/deployment/replicas"),
        Some(&json!(3))
    );
    assert!(answer.warnings.is_empty());
}

#[test]
fn a_spec_that_does_not_read_as_a_keystone_is_refused_naming_the_field() {
    let table: &[(Value, Option<&str>)] = &[
        (json!({"deployment": {"replicas": 2}}), None),
        (
            json!({"deployment": {"replicas": "three"}}),
            Some(
                "Keystone \"keystone\" cannot be read: invalid type: string \"three\", expected i32",
            ),
        ),
        (
            json!({"extraConfig": {"DEFAULT": {"debug": true}}}),
            Some(
                "Keystone \"keystone\" cannot be read: invalid type: boolean `true`, expected a string",
            ),
        ),
    ];
    for (spec, expected) in table {
        let got = default_object(&request(Operation::Create, object(spec.clone()), None));
        match expected {
            None => assert!(got.is_ok(), "{spec}: {got:?}"),
            Some(prefix) => {
                let denial = got.expect_err("refused");
                assert!(
                    denial.message.starts_with(prefix),
                    "{spec}: {}",
                    denial.message
                );
            }
        }
    }
}
