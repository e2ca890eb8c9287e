use serde_json::json;

use super::*;
use crate::testing::{
    cluster, cluster_with_store, credentials_secret, pass, pass_condition, secret, store,
};

fn state(
    cluster: &wasm_operator_sdk::testing::FakeCluster,
) -> ((String, String, String), Projection) {
    let mut pass = pass(cluster);
    assert_eq!(
        run(&mut pass).expect("runs"),
        None,
        "the step never requeues"
    );
    (pass_condition(&pass, SECRET_STORES_READY), pass.projection)
}

fn t(status: &str, reason: &str, message: &str) -> (String, String, String) {
    (status.into(), reason.into(), message.into())
}

#[test]
fn the_default_rule_and_the_single_openbao_rule_decide_validity() {
    let none =
        "No attached, credential-ready secret store is marked isDefault; exactly one is required";
    let two = "2 attached, credential-ready secret stores are marked isDefault (a, b); exactly one is required";
    let multiple = "2 attached, credential-ready stores are of type OpenBao; the [vault_plugin] section is process-global, so exactly one is supported";
    // (stores as (name, credential-ready, default), condition, valid)
    type Row<'a> = (Vec<(&'a str, bool, bool)>, (String, String, String), bool);
    let table: Vec<Row<'_>> = vec![
        (vec![], t("False", "NoDefaultSecretStore", none), false),
        (
            vec![("a", false, true)],
            t("False", "NoDefaultSecretStore", none),
            false,
        ),
        (
            vec![("a", true, true), ("b", true, true)],
            t("False", "NoDefaultSecretStore", two),
            false,
        ),
        (
            vec![("a", true, true), ("b", true, false)],
            t("False", "MultipleOpenBaoStores", multiple),
            false,
        ),
        (
            vec![("a", true, true), ("b", false, false)],
            t(
                "True",
                "AllStoresProjected",
                "All attached secret stores are projected",
            ),
            true,
        ),
    ];
    for (stores, want, valid) in table {
        let mut cluster = cluster();
        for (name, ready, default) in &stores {
            cluster = cluster
                .with(store(name, *ready, *default))
                .with(credentials_secret(name));
        }
        let (condition, projection) = state(&cluster);
        assert_eq!(condition, want, "{stores:?}");
        assert_eq!(projection.valid, valid, "{stores:?}");
    }
}

#[test]
fn the_default_store_renders_its_section_the_registry_and_the_vault_plugin() {
    let mut with_extras = store("vault", true, true);
    with_extras["spec"]["openBao"]["server"]["caBundleSecretRef"] = json!({"name": "vault-ca"});
    with_extras["spec"]["openBao"]["namespace"] = json!("tenant-a");
    with_extras["spec"]["extraOptions"] =
        json!({"timeout": "30", "vault_url": "https://evil", "root_token_id": "s.root"});
    let cluster = cluster()
        .with(with_extras)
        .with(credentials_secret("vault"));
    let (condition, projection) = state(&cluster);
    assert_eq!(condition.1, "AllStoresProjected");
    let section = |name: &str| projection.sections.get(name).cloned().unwrap_or_default();
    assert_eq!(
        section("secretstore:vault"),
        BTreeMap::from([
            ("global_default".to_owned(), "True".to_owned()),
            ("secret_store_plugin".to_owned(), "vault_plugin".to_owned()),
        ])
    );
    assert_eq!(
        section("secretstore"),
        BTreeMap::from([
            (
                "enable_multiple_secret_stores".to_owned(),
                "true".to_owned()
            ),
            ("stores_lookup_suffix".to_owned(), "vault".to_owned()),
        ])
    );
    assert_eq!(
        section("vault_plugin"),
        BTreeMap::from([
            ("approle_role_id".to_owned(), "role-1234".to_owned()),
            ("kv_mountpoint".to_owned(), "barbican".to_owned()),
            ("namespace".to_owned(), "tenant-a".to_owned()),
            ("ssl_ca_crt_file".to_owned(), CA_FILE.to_owned()),
            ("timeout".to_owned(), "30".to_owned()),
            ("use_ssl".to_owned(), "true".to_owned()),
            (
                "vault_url".to_owned(),
                "https://vault.example.com:8200".to_owned()
            ),
        ]),
        "extraOptions never override an operator key nor set a denied one"
    );
    assert_eq!(projection.credentials_secret, "vault-creds");
    assert_eq!(projection.ca_secret.as_deref(), Some("vault-ca"));
    assert_eq!(projection.secret_id_digest.len(), 64);
}

#[test]
fn a_default_whose_credentials_cannot_be_read_is_skipped_with_a_warning() {
    // (the credentials Secret, why)
    let table = [
        (None, "Secret openstack/vault-creds not found"),
        (
            Some(secret("vault-creds", &[("role-id", "r")])),
            "Secret openstack/vault-creds has no key \"secret-id\"",
        ),
        (
            Some(secret(
                "vault-creds",
                &[("role-id", "r\n[evil]"), ("secret-id", "s")],
            )),
            "[vault_plugin] option name or value contains a newline or carriage-return character",
        ),
    ];
    for (credentials, why) in table {
        let mut cluster = cluster().with(store("vault", true, true));
        if let Some(credentials) = credentials {
            cluster = cluster.with(credentials);
        }
        let (condition, projection) = state(&cluster);
        let message = format!("Skipping secret store vault: {why}");
        assert_eq!(condition, t("False", "WaitingForSecretStores", &message));
        assert!(!projection.valid, "{why}");
        let events = cluster.events();
        assert_eq!(events.len(), 1, "{why}: {events:?}");
        assert_eq!(events[0].1.reason, "BarbicanSecretStoreSkipped");
        assert_eq!(events[0].1.note, message);
    }
}

#[test]
fn the_projected_stores_are_recorded_and_one_that_leaves_is_warned_about() {
    let cluster = cluster_with_store("vault");
    let mut first = pass(&cluster);
    run(&mut first).expect("runs");
    let status = first.barbican.status.clone().expect("status");
    assert_eq!(status.projected_secret_stores, ["vault"]);
    assert_eq!(
        status.projected_secret_store_hosts,
        ["https://vault.example.com:8200"]
    );
    // `vault` leaves; `other` becomes the default.
    cluster.change("BarbicanSecretStore", "vault", |o| {
        o["metadata"]["deletionTimestamp"] = json!("2026-12-03T09:00:00Z");
        o["metadata"]["finalizers"] = json!(["hold"]);
    });
    cluster.put(store("other", true, true));
    cluster.put(credentials_secret("other"));
    let mut second = pass(&cluster);
    second.barbican.status = Some(status);
    run(&mut second).expect("runs");
    assert_eq!(
        second
            .barbican
            .status
            .expect("status")
            .projected_secret_stores,
        ["other"]
    );
    let detached: Vec<String> = cluster
        .events()
        .into_iter()
        .filter(|(_, e)| e.reason == "SecretStoreDetached")
        .map(|(_, e)| e.note)
        .collect();
    assert_eq!(
        detached,
        [
            "Secret store \"vault\" is no longer projected: its [secretstore:vault] section is dropped from barbican.conf, so every secret barbican wrote through that store stops resolving"
        ]
    );
}

#[test]
fn stores_of_another_barbican_are_not_read() {
    let mut other = store("elsewhere", true, true);
    other["spec"]["barbicanRef"]["name"] = json!("not-this-one");
    let cluster = cluster_with_store("vault").with(other);
    let (condition, projection) = state(&cluster);
    assert_eq!(condition.1, "AllStoresProjected");
    assert!(projection.sections.contains_key("secretstore:vault"));
    assert!(!projection.sections.contains_key("secretstore:elsewhere"));
}
