//! status.secrets, the Ready condition, and how a pass with failures ends.

use serde_json::json;
use wasm_operator_sdk::{ApiError, Outcome, ReconcileError};

use crate::testing::*;
use crate::types::SecretStatus;

#[test]
fn status_lists_spec_secrets_grouped_by_name_then_ca_tls_and_chain_of_each_set() {
    let cluster = fake_cluster();
    let gls = with_secret(gls("demo"), "demo-b", json!([random("one")]));
    let gls = with_secret(gls, "demo-a", json!([random("two")]));
    let gls = with_secret(gls, "demo-b", json!([random("three")]));
    cluster.put(with_certificate(gls, "demo-wildcard"));

    assert_eq!(pass(&cluster, "demo"), Ok(Outcome::done()));

    let names: Vec<String> = status(&cluster, "demo")
        .secrets
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(
        names,
        [
            "demo-b",
            "demo-a",
            "demo-wildcard-ca",
            "demo-wildcard-tls",
            "demo-wildcard-chain"
        ]
    );
    assert_eq!(cluster.secret_data("demo-b").len(), 2);
}

#[test]
fn every_secret_ready_is_reason_secrets_ready_with_the_generation_of_the_pass() {
    let cluster = fake_cluster();
    let mut gls = with_secret(gls("demo"), "demo-a", json!([random("token")]));
    gls["metadata"]["generation"] = json!(7);
    cluster.put(gls);

    pass(&cluster, "demo").expect("the pass succeeds");

    let status = status(&cluster, "demo");
    let ready = &status.conditions[0];
    assert_eq!(ready.reason, "SecretsReady");
    assert_eq!(ready.observed_generation, Some(7));
    assert_eq!(
        status.secrets,
        [SecretStatus {
            name: "demo-a".into(),
            ready: true,
            ready_units: vec!["token".into()],
        }]
    );
}

#[test]
fn a_reported_unit_is_not_ready_and_reason_secrets_reported_names_it() {
    let cluster = fake_cluster();
    let x509 = json!({"type": "x509", "commonName": "gitlab-issuer", "bits": 2048, "days": 1,
        "certKey": "c.crt", "keyKey": "c.key"});
    cluster.put(with_secret(
        gls("demo"),
        "demo-a",
        json!([x509, random("token")]),
    ));
    cluster.put(secret(
        "demo-a",
        "Opaque",
        &[("c.crt", "a certificate without its key")],
    ));

    assert_eq!(pass(&cluster, "demo"), Ok(Outcome::done()));

    let (status_, reason, message) = ready(&cluster, "demo");
    assert_eq!(
        (status_.as_str(), reason.as_str()),
        ("False", "SecretsReported")
    );
    assert!(message.starts_with("Secret demo-a: unit"), "{message}");
    assert!(!status(&cluster, "demo").secrets[0].ready);
    // Nothing of a reported Secret is added.
    assert_eq!(cluster.secret_data("demo-a").len(), 1);
}

#[test]
fn a_write_refused_as_invalid_or_too_large_is_not_retried() {
    let cases = [
        ("invalid", ApiError::Invalid("data: Invalid value".into())),
        (
            "too large",
            ApiError::TooLarge("request entity too large".into()),
        ),
    ];
    for (case, error) in cases {
        let cluster = fake_cluster();
        let gls = with_secret(gls("demo"), "demo-a", json!([random("token")]));
        cluster.put(with_secret(gls, "demo-b", json!([random("token")])));
        cluster.fail(Op::Create, "demo-a", error.clone(), 1);

        let outcome = pass(&cluster, "demo");

        assert!(
            matches!(outcome, Err(ReconcileError::Permanent(_))),
            "{case}: {outcome:?}"
        );
        let (status_, reason, message) = ready(&cluster, "demo");
        assert_eq!(
            (status_.as_str(), reason.as_str()),
            ("False", "SecretsNotWritten"),
            "{case}"
        );
        assert!(
            message.contains(&format!("Secret demo-a: cannot write it: {error}")),
            "{message}"
        );
        // The other Secret is written all the same.
        assert!(cluster.server("Secret", "demo-b").is_some(), "{case}");
    }
}

#[test]
fn any_other_failure_is_retried_with_the_controllers_backoff() {
    let cluster = fake_cluster();
    cluster.put(with_secret(gls("demo"), "demo-a", json!([random("token")])));
    cluster.fail(
        Op::Create,
        "demo-a",
        ApiError::Unavailable("etcd".into()),
        1,
    );

    assert!(matches!(
        pass(&cluster, "demo"),
        Err(ReconcileError::Transient(_))
    ));
    assert_eq!(pass(&cluster, "demo"), Ok(Outcome::done()));
}

#[test]
fn a_secret_whose_read_or_write_failed_keeps_its_ready_units_minus_those_no_longer_declared() {
    // The write fails after a plan; the read fails before any plan.
    let cases = [
        ("write", Op::Patch, ApiError::Invalid("no".into())),
        ("read", Op::Get, ApiError::Forbidden("no".into())),
    ];
    for (case, op, error) in cases {
        let cluster = fake_cluster();
        cluster.put(with_secret(
            gls("demo"),
            "demo-a",
            json!([random("a"), random("b")]),
        ));
        pass(&cluster, "demo").expect("the pass succeeds");
        // b is no longer declared, c is new; c is missing from the Secret.
        cluster.change("GitLabSecrets", "demo", |g| {
            g["spec"]["secrets"][0]["generators"] = json!([random("a"), random("c")]);
        });
        cluster.fail(op, "demo-a", error, 1);

        assert!(pass(&cluster, "demo").is_err(), "{case}");
        let entry = &status(&cluster, "demo").secrets[0];
        assert!(!entry.ready, "{case}");
        assert_eq!(entry.ready_units, ["a"], "{case}: b is no longer declared");
    }
}

#[test]
fn the_ready_message_is_capped_at_4096_bytes() {
    let cluster = fake_cluster();
    let mut gls = gls("demo");
    for i in 0..60 {
        let name = format!("demo-a-rather-long-secret-name-to-fill-the-message-{i:02}");
        let x509 = json!({"type": "x509", "commonName": "x", "bits": 2048, "days": 1,
            "certKey": "c.crt", "keyKey": "c.key"});
        gls = with_secret(gls, &name, json!([x509]));
        cluster.put(secret(
            &name,
            "Opaque",
            &[("c.crt", "only the certificate")],
        ));
    }
    cluster.put(gls);

    pass(&cluster, "demo").expect("the pass succeeds");

    let (_, reason, message) = ready(&cluster, "demo");
    assert_eq!(reason, "SecretsReported");
    assert!(
        message.len() <= 4096 && message.len() > 4000,
        "{}",
        message.len()
    );
}

#[test]
fn a_secret_whose_read_failed_is_not_ready_and_named_with_the_error() {
    let cluster = fake_cluster();
    cluster.put(with_secret(gls("demo"), "demo-a", json!([random("token")])));
    cluster.fail(
        Op::GetServer,
        "demo-a",
        ApiError::Unavailable("timeout".into()),
        1,
    );

    assert!(matches!(
        pass(&cluster, "demo"),
        Err(ReconcileError::Transient(_))
    ));

    let (_, reason, message) = ready(&cluster, "demo");
    assert_eq!(reason, "SecretsNotWritten");
    assert_eq!(
        message,
        "Secret demo-a: cannot read it: unavailable: timeout"
    );
    assert!(cluster.server("Secret", "demo-a").is_none());
}

#[test]
fn a_secret_whose_plan_failed_is_not_ready_and_named_with_the_error() {
    let cluster = fake_cluster();
    // A random generator without its key: no state of the Secret can satisfy it.
    let keyless = json!([{"type": "random", "charset": "hex", "length": 8}]);
    let gls = with_secret(gls("demo"), "demo-a", keyless);
    cluster.put(with_secret(gls, "demo-b", json!([random("token")])));

    // No retry can fix the entry: the next change starts the next pass.
    assert!(matches!(
        pass(&cluster, "demo"),
        Err(ReconcileError::Permanent(_))
    ));

    let (_, reason, message) = ready(&cluster, "demo");
    assert_eq!(reason, "SecretsNotWritten");
    assert!(
        message.starts_with("Secret demo-a: cannot plan it: demo-a:"),
        "{message}"
    );
    assert!(cluster.server("Secret", "demo-b").is_some());
}
