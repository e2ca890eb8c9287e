use serde_json::json;
use wasm_operator_sdk::testing::FakeCluster;

use super::*;
use crate::conditions::SECRETS_READY;
use crate::testing::{condition, keystone_with, pass};

fn config_maps(cluster: &FakeCluster) -> Vec<String> {
    cluster
        .names("ConfigMap")
        .into_iter()
        .filter(|n| n.starts_with("ks-config-"))
        .collect()
}

#[test]
fn the_config_lands_in_an_immutable_hashed_config_map_the_pass_remembers() {
    let cluster = FakeCluster::new();
    let mut pass = pass(&cluster, &keystone_with(json!({})));
    assert_eq!(run(&mut pass).expect("runs"), None);
    let names = config_maps(&cluster);
    assert_eq!(names.len(), 1, "{names:?}");
    assert_eq!(pass.config_map_name.as_ref(), Some(&names[0]));
    let stored = cluster.server("ConfigMap", &names[0]).expect("stored");
    assert_eq!(stored["immutable"], true);
    assert_eq!(
        stored["metadata"]["labels"]["cobaltcore.c5c3.io/config-base"],
        "ks-config"
    );
    assert!(
        stored["data"]["keystone.conf"]
            .as_str()
            .unwrap_or_default()
            .contains("[token]")
    );
    assert_eq!(
        condition(&pass, EXTRA_CONFIG_HEALTHY),
        (
            "True".into(),
            "NoOwnedKeysOverridden".into(),
            "spec.extraConfig overrides no operator-owned key".into()
        )
    );
    // The same spec is the same ConfigMap; a changed one is a new one.
    run(&mut crate::testing::pass(
        &cluster,
        &keystone_with(json!({})),
    ))
    .expect("runs");
    assert_eq!(config_maps(&cluster).len(), 1);
    let changed = json!({"extraConfig": {"token": {"expiration": "7200"}}});
    run(&mut crate::testing::pass(&cluster, &keystone_with(changed))).expect("runs");
    assert_eq!(config_maps(&cluster).len(), 2);
}

#[test]
fn an_owned_key_override_is_honoured_reported_and_warned() {
    let cluster = FakeCluster::new();
    let spec = json!({"extraConfig": {"token": {"provider": "jws"}, "cache": {"backend": "x"}}});
    let mut pass = pass(&cluster, &keystone_with(spec));
    run(&mut pass).expect("runs");
    let (status, reason, message) = condition(&pass, EXTRA_CONFIG_HEALTHY);
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "OwnedKeysOverridden")
    );
    assert_eq!(
        message,
        "spec.extraConfig overrides operator-owned keys: cache.backend, token.provider"
    );
    assert_eq!(cluster.event_reasons(), ["ExtraConfigOwnedKeyOverride"]);
    let name = pass.config_map_name.clone().expect("rendered");
    let conf = cluster.server("ConfigMap", &name).expect("stored")["data"]["keystone.conf"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(conf.contains("provider = jws"), "{conf}");
}

#[test]
fn a_missing_policy_config_map_is_a_config_error() {
    let cluster = FakeCluster::new();
    let spec = json!({"policyOverrides": {"configMapRef": {"name": "my-policy"}}});
    let mut pass = pass(&cluster, &keystone_with(spec));
    let error = run(&mut pass).expect_err("fails");
    let (status, reason, message) = condition(&pass, SECRETS_READY);
    assert_eq!((status.as_str(), reason.as_str()), ("False", "ConfigError"));
    assert_eq!(message, error.to_string());
    assert!(message.contains("ns/my-policy"), "{message}");
    assert!(config_maps(&cluster).is_empty());
}

#[test]
fn a_config_map_of_that_name_controlled_by_another_owner_is_refused() {
    let cluster = FakeCluster::new();
    let mut first = pass(&cluster, &keystone_with(json!({})));
    run(&mut first).expect("runs");
    let name = first.config_map_name.clone().expect("rendered");
    cluster.change("ConfigMap", &name, |c| {
        c["metadata"]["ownerReferences"][0]["uid"] = json!("someone-else");
    });
    let mut second = pass(&cluster, &keystone_with(json!({})));
    let error = run(&mut second).expect_err("fails");
    assert!(
        error
            .to_string()
            .contains("is not controlled by this Keystone"),
        "{error}"
    );
    assert_eq!(condition(&second, SECRETS_READY).1, "ConfigError");
}
