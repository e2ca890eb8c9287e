use serde_json::{Value, json};
use wasm_operator_sdk::ApiError;
use wasm_operator_sdk::testing::{Call, FakeCluster, Op};

use super::*;
use crate::testing::{CONFIG_MAP, condition, keystone_with, owned, pass, pass_with_config};

/// Who controls a fixture object.
#[derive(Clone, Copy)]
enum Controller {
    /// The Keystone `ks` of the pass.
    ThisKeystone,
    /// Another Keystone (another uid).
    Another,
    /// Nobody.
    Nobody,
}

/// An object of `kind` named `name`, labelled with config base `base` (none when `None`),
/// created `minute` minutes after midnight, controlled by `controller`.
fn object(
    kind: &str,
    name: &str,
    base: Option<&str>,
    minute: u32,
    controller: Controller,
) -> Value {
    let mut object = json!({"apiVersion": "v1", "kind": kind,
        "metadata": {"name": name, "namespace": "ns",
            "creationTimestamp": format!("2026-01-01T00:{minute:02}:00Z")}});
    if let Some(base) = base {
        object["metadata"]["labels"] = json!({"cobaltcore.c5c3.io/config-base": base});
    }
    match controller {
        Controller::ThisKeystone => owned(object),
        Controller::Another => {
            let mut object = owned(object);
            object["metadata"]["ownerReferences"][0]["uid"] = json!("other-uid");
            object
        }
        Controller::Nobody => object,
    }
}

fn config_map(name: &str, minute: u32) -> Value {
    object(
        "ConfigMap",
        name,
        Some("ks-config"),
        minute,
        Controller::ThisKeystone,
    )
}

fn secret(name: &str, base: &str, minute: u32) -> Value {
    object("Secret", name, Some(base), minute, Controller::ThisKeystone)
}

/// The names of the objects of `kind` whose name starts with `prefix`, sorted.
fn left(cluster: &FakeCluster, kind: &str, prefix: &str) -> Vec<String> {
    let mut names: Vec<String> = cluster
        .names(kind)
        .into_iter()
        .filter(|n| n.starts_with(prefix))
        .collect();
    names.sort();
    names
}

fn deletes(cluster: &FakeCluster) -> Vec<String> {
    cluster
        .writes()
        .iter()
        .filter(|c| matches!(c, Call::Delete(..)))
        .map(ToString::to_string)
        .collect()
}

#[test]
fn the_current_config_map_and_the_three_newest_others_are_kept_even_when_the_current_is_oldest() {
    // The current one is the oldest of seven.
    let mut cluster = FakeCluster::new().with(config_map(CONFIG_MAP, 0));
    for (name, minute) in [
        ("ks-config-1", 1),
        ("ks-config-2", 2),
        ("ks-config-3", 3),
        ("ks-config-4", 4),
        ("ks-config-5", 5),
        ("ks-config-6", 6),
    ] {
        cluster = cluster.with(config_map(name, minute));
    }
    let mut pass = pass_with_config(&cluster, &keystone_with(json!({})));
    assert_eq!(run(&mut pass).expect("prunes"), None);
    assert_eq!(
        left(&cluster, "ConfigMap", "ks-config-"),
        ["ks-config-4", "ks-config-5", "ks-config-6", CONFIG_MAP]
    );
    assert_eq!(
        deletes(&cluster),
        [
            "delete ConfigMap ns/ks-config-3",
            "delete ConfigMap ns/ks-config-2",
            "delete ConfigMap ns/ks-config-1"
        ]
    );
    assert!(
        pass.conditions_of(SECRETS_READY).is_none(),
        "no condition of its own"
    );
}

#[test]
fn objects_that_are_not_this_keystones_history_are_never_pruned() {
    let cases: &[(&str, Value)] = &[
        (
            "unlabelled",
            object(
                "ConfigMap",
                "ks-config-a",
                None,
                1,
                Controller::ThisKeystone,
            ),
        ),
        (
            "controlled by another Keystone",
            object(
                "ConfigMap",
                "ks-config-a",
                Some("ks-config"),
                1,
                Controller::Another,
            ),
        ),
        (
            "controlled by nobody",
            object(
                "ConfigMap",
                "ks-config-a",
                Some("ks-config"),
                1,
                Controller::Nobody,
            ),
        ),
        (
            "labelled with the base but named outside it",
            object(
                "ConfigMap",
                "other-config-a",
                Some("ks-config"),
                1,
                Controller::ThisKeystone,
            ),
        ),
        (
            "of another base sharing the prefix",
            object(
                "ConfigMap",
                "ks-config-extra-a",
                Some("ks-config-extra"),
                1,
                Controller::ThisKeystone,
            ),
        ),
    ];
    for (case, foreign) in cases {
        // Four newer history objects would push a candidate out.
        let cluster = FakeCluster::new()
            .with(foreign.clone())
            .with(config_map(CONFIG_MAP, 9))
            .with(config_map("ks-config-6", 6))
            .with(config_map("ks-config-7", 7))
            .with(config_map("ks-config-8", 8))
            .with(secret("ks-federation-x", "other-federation", 1));
        let mut pass = pass_with_config(&cluster, &keystone_with(json!({})));
        assert_eq!(run(&mut pass).expect("runs"), None, "{case}");
        assert!(
            deletes(&cluster).is_empty(),
            "{case}: {:?}",
            deletes(&cluster)
        );
        let name = foreign["metadata"]["name"].as_str().expect("named");
        assert!(
            cluster.server("ConfigMap", name).is_some(),
            "{case}: {name} kept"
        );
    }
}

#[test]
fn domains_secrets_keep_three_while_projected_and_none_when_nothing_is() {
    let history = || {
        let mut cluster = FakeCluster::new().with(config_map(CONFIG_MAP, 0));
        for minute in 1..=5 {
            let name = format!("ks-domains-{minute}");
            cluster = cluster.with(secret(&name, "ks-domains", minute));
        }
        cluster.with(secret("ks-fernet-keys", "ks-fernet", 1))
    };
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "the current projection, oldest, and the three newest are kept",
            "ks-domains-1",
            &[
                "ks-domains-1",
                "ks-domains-3",
                "ks-domains-4",
                "ks-domains-5",
            ],
        ),
        ("nothing projected: none is kept", "", &[]),
    ];
    for (case, current, kept) in cases {
        let cluster = history();
        let mut pass = pass_with_config(&cluster, &keystone_with(json!({})));
        pass.domains_secret_name = (*current).to_owned();
        assert_eq!(run(&mut pass).expect("prunes"), None, "{case}");
        assert_eq!(left(&cluster, "Secret", "ks-domains-"), *kept, "{case}");
        assert!(
            cluster.server("Secret", "ks-fernet-keys").is_some(),
            "{case}: other Secrets untouched"
        );
    }
}

#[test]
fn every_federation_secret_is_pruned_while_no_federation_is_projected() {
    let cluster = FakeCluster::new()
        .with(config_map(CONFIG_MAP, 0))
        .with(secret("ks-federation-1", "ks-federation", 1))
        .with(secret("ks-federation-2", "ks-federation", 2))
        .with(object(
            "Secret",
            "ks-federation-3",
            Some("ks-federation"),
            3,
            Controller::Another,
        ));
    let mut pass = pass_with_config(&cluster, &keystone_with(json!({})));
    assert_eq!(run(&mut pass).expect("prunes"), None);
    assert_eq!(
        left(&cluster, "Secret", "ks-federation-"),
        ["ks-federation-3"]
    );
    assert_eq!(
        deletes(&cluster),
        [
            "delete Secret ns/ks-federation-2",
            "delete Secret ns/ks-federation-1"
        ]
    );
}

#[test]
fn a_projected_federation_keeps_its_secret_and_the_three_newest_before_it() {
    let mut cluster = FakeCluster::new().with(config_map(CONFIG_MAP, 0));
    for n in 1..=5 {
        cluster = cluster.with(secret(&format!("ks-federation-{n}"), "ks-federation", n));
    }
    let mut pass = pass_with_config(&cluster, &keystone_with(json!({})));
    pass.federation = Some(crate::federation::Federation {
        secret_name: "ks-federation-2".into(),
        ..Default::default()
    });
    assert_eq!(run(&mut pass).expect("prunes"), None);
    assert_eq!(
        left(&cluster, "Secret", "ks-federation-"),
        [
            "ks-federation-2",
            "ks-federation-3",
            "ks-federation-4",
            "ks-federation-5"
        ]
    );
    assert_eq!(deletes(&cluster), ["delete Secret ns/ks-federation-1"]);
}

#[test]
fn a_converged_history_makes_no_write() {
    let cluster = FakeCluster::new()
        .with(config_map(CONFIG_MAP, 0))
        .with(config_map("ks-config-1", 1))
        .with(secret("ks-domains-1", "ks-domains", 1));
    let mut pass = pass_with_config(&cluster, &keystone_with(json!({})));
    pass.domains_secret_name = "ks-domains-1".into();
    assert_eq!(run(&mut pass).expect("runs"), None);
    let lists = cluster
        .calls()
        .iter()
        .filter(|c| matches!(c, Call::List(..)))
        .count();
    assert_eq!(lists, 3, "the three histories were listed");
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
}

#[test]
fn a_failed_list_or_delete_is_a_config_error_naming_the_cause() {
    let listing = FakeCluster::new().with(config_map(CONFIG_MAP, 0));
    listing.fail(
        Op::List,
        "Secret",
        ApiError::Unavailable("etcd down".into()),
        1,
    );
    let deleting = FakeCluster::new()
        .with(config_map(CONFIG_MAP, 0))
        .with(secret("ks-federation-1", "ks-federation", 1));
    deleting.fail(
        Op::Delete,
        "ks-federation-1",
        ApiError::Forbidden("no delete".into()),
        1,
    );
    let cases = [
        (
            "list",
            listing,
            "listing Secrets ks-domains-* in namespace ns: unavailable: etcd down",
        ),
        (
            "delete",
            deleting,
            "deleting stale Secret ns/ks-federation-1: forbidden: no delete",
        ),
    ];
    for (case, cluster, message) in cases {
        let mut pass = pass_with_config(&cluster, &keystone_with(json!({})));
        let error = run(&mut pass).expect_err(case);
        assert!(matches!(error, Error::Prune { .. }), "{case}: {error:?}");
        let message = format!("pruning superseded configuration: {message}");
        assert_eq!(error.to_string(), message, "{case}");
        assert_eq!(
            condition(&pass, SECRETS_READY),
            ("False".into(), "ConfigError".into(), message.clone()),
            "{case}"
        );
    }
}

#[test]
fn pruning_before_the_config_step_ran_is_a_step_order_error() {
    let cluster = FakeCluster::new();
    let mut plain = pass(&cluster, &keystone_with(json!({})));
    let error = run(&mut plain).expect_err("no ConfigMap name");
    assert!(
        matches!(error, Error::StepOrder { step: "prune", .. }),
        "{error:?}"
    );
    assert!(cluster.calls().is_empty());
}
