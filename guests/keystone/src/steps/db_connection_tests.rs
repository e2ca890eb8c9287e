use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;

use super::*;
use crate::testing::{condition, keystone_with, pass, secret};

fn db_secret(pairs: &[(&str, &str)]) -> Value {
    secret("ks-db", pairs)
}

fn connection(cluster: &FakeCluster) -> Option<String> {
    cluster
        .secret_data("ks-db-connection")
        .get(CONNECTION_KEY)
        .map(|b| String::from_utf8_lossy(b).into_owned())
}

#[test]
fn the_connection_string_escapes_the_userinfo_and_carries_the_tls_mode() {
    let tls = |mode: &str| {
        json!({"database": {"tls": {"mode": mode, "caBundleSecretRef": {"name": "ca"},
            "clientCertSecretRef": {"name": "c"}}}})
    };
    let base =
        "mysql+pymysql://ks:p%40ss%3Aw%2Frd%3F%21$&+,;=@maria.ns.svc:3306/keystone?charset=utf8";
    let files = "&ssl_ca=/etc/keystone/db-tls/ca.crt&ssl_cert=/etc/keystone/db-tls/tls.crt&ssl_key=/etc/keystone/db-tls/tls.key";
    let table = [
        (json!({}), base.to_owned()),
        (tls("disabled"), base.to_owned()),
        (tls("prefer"), format!("{base}{files}")),
        (tls("require"), format!("{base}{files}")),
        (
            tls("verify-ca"),
            format!("{base}{files}&ssl_verify_cert=true"),
        ),
        (
            tls("verify-full"),
            format!("{base}{files}&ssl_verify_cert=true&ssl_verify_identity=true"),
        ),
    ];
    for (spec, expected) in table {
        let keystone: Keystone =
            serde_json::from_value(keystone_with(spec.clone())).expect("a Keystone");
        assert_eq!(
            dsn(&keystone, "ks", "p@ss:w/rd?!$&+,;="),
            expected,
            "{spec}"
        );
    }
    let brownfield: Keystone = serde_json::from_value(keystone_with(json!({"database": {
        "clusterRef": null, "host": "db.example", "port": 3307}})))
    .expect("a Keystone");
    assert_eq!(
        dsn(&brownfield, "user name", "pw"),
        "mysql+pymysql://user%20name:pw@db.example:3307/keystone?charset=utf8"
    );
}

#[test]
fn missing_credentials_wait_with_the_reason_and_the_missing_key() {
    let brownfield = json!({"database": {"clusterRef": null, "host": "db.example"}});
    let table = [
        (
            json!({}),
            None,
            "Upstream database credentials Secret ns/ks-db not found",
        ),
        (
            json!({}),
            Some(db_secret(&[("username", "u")])),
            "Upstream database credentials Secret ns/ks-db missing key \"password\"",
        ),
        (
            brownfield.clone(),
            Some(db_secret(&[("password", "p")])),
            "Upstream database credentials Secret ns/ks-db missing key \"username\"",
        ),
    ];
    for (spec, secret, message) in table {
        let cluster = match secret {
            Some(s) => FakeCluster::new().with(s),
            None => FakeCluster::new(),
        };
        let mut pass = pass(&cluster, &keystone_with(spec));
        assert_eq!(
            run(&mut pass).expect("runs"),
            Some(SECRET_POLLING),
            "{message}"
        );
        assert_eq!(
            condition(&pass, SECRETS_READY),
            (
                "False".into(),
                "WaitingForDBCredentials".into(),
                message.into()
            )
        );
        assert_eq!(connection(&cluster), None);
    }
    // The valid row: a brownfield Secret with both keys.
    let cluster = FakeCluster::new().with(db_secret(&[("username", "u"), ("password", "p")]));
    let mut pass = pass(&cluster, &keystone_with(brownfield));
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(
        connection(&cluster).as_deref(),
        Some("mysql+pymysql://u:p@db.example:3306/keystone?charset=utf8")
    );
}

#[test]
fn a_managed_static_database_connects_as_the_keystone_and_the_hash_is_of_the_string() {
    let cluster =
        FakeCluster::new().with(db_secret(&[("username", "ignored"), ("password", "pw")]));
    let mut pass = pass(&cluster, &keystone_with(json!({})));
    assert_eq!(run(&mut pass).expect("runs"), None);
    let expected = "mysql+pymysql://ks:pw@maria.ns.svc:3306/keystone?charset=utf8";
    assert_eq!(connection(&cluster).as_deref(), Some(expected));
    assert_eq!(pass.db_connection_hash, Some(dsn_hash(expected)));
    assert_eq!(dsn_hash(expected).len(), 64);
    let stored = cluster
        .server("Secret", "ks-db-connection")
        .expect("created");
    assert_eq!(stored["type"], "Opaque");
    assert_eq!(stored["metadata"]["ownerReferences"][0]["uid"], "ks-uid");
    assert_eq!(stored["metadata"]["ownerReferences"][0]["controller"], true);
}

#[test]
fn a_dynamic_database_connects_as_the_issued_username() {
    let cluster =
        FakeCluster::new().with(db_secret(&[("username", "v-ks-123"), ("password", "pw")]));
    let mut pass = pass(
        &cluster,
        &keystone_with(json!({"database": {"credentialsMode": "Dynamic"}})),
    );
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(
        connection(&cluster).as_deref(),
        Some("mysql+pymysql://v-ks-123:pw@maria.ns.svc:3306/keystone?charset=utf8")
    );
}

#[test]
fn a_changed_or_padded_connection_secret_is_set_back_to_the_one_key_and_an_equal_one_is_left() {
    let cluster = FakeCluster::new()
        .with(db_secret(&[("password", "new")]))
        .with(secret(
            "ks-db-connection",
            &[("connection", "old"), ("extra", "x")],
        ));
    let object = keystone_with(json!({}));
    run(&mut pass(&cluster, &object)).expect("runs");
    let data = cluster.secret_data("ks-db-connection");
    assert_eq!(data.keys().collect::<Vec<_>>(), ["connection"]);
    assert_eq!(
        connection(&cluster).as_deref(),
        Some("mysql+pymysql://ks:new@maria.ns.svc:3306/keystone?charset=utf8")
    );
    cluster.clear_calls();
    run(&mut pass(&cluster, &object)).expect("runs");
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
}
