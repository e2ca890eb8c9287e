//! Certificate sets: planned together, written CA, TLS, chain, stopping at the first failed
//! write.

use serde_json::json;
use wasm_operator_sdk::{ApiError, Outcome, ReconcileError};

use crate::testing::*;

#[test]
fn a_missing_set_is_issued_and_written_in_the_order_ca_tls_chain() {
    let cluster = fake_cluster();
    cluster.put(with_certificate(gls("demo"), "demo-wildcard"));

    assert_eq!(pass(&cluster, "demo"), Ok(Outcome::done()));

    assert_eq!(
        cluster.write_log(),
        [
            "create Secret gitlab/demo-wildcard-ca",
            "create Secret gitlab/demo-wildcard-tls",
            "create Secret gitlab/demo-wildcard-chain",
            "update-status GitLabSecrets gitlab/demo",
        ]
    );
    let tls = cluster
        .server("Secret", "demo-wildcard-tls")
        .expect("created");
    assert_eq!(tls["type"], "kubernetes.io/tls");
    let ca = cluster.secret_data("demo-wildcard-ca")["cfssl_ca"].clone();
    let crt = cluster.secret_data("demo-wildcard-tls")["tls.crt"].clone();
    assert_eq!(
        cluster.secret_data("demo-wildcard-chain")["chain.crt"],
        [ca, crt].concat()
    );
    let status = status(&cluster, "demo");
    assert!(status.secrets.iter().all(|s| s.ready));
    assert_eq!(status.secrets[1].ready_units, ["certificate-set"]);
    assert!(status.secrets[0].ready_units.is_empty());
}

#[test]
fn a_set_stops_at_the_first_failed_write_and_the_rest_report_the_earlier_failure() {
    let cluster = fake_cluster();
    cluster.put(with_certificate(gls("demo"), "demo-wildcard"));
    cluster.fail(
        Op::Create,
        "demo-wildcard-tls",
        ApiError::Unavailable("etcd".into()),
        1,
    );

    assert!(matches!(
        pass(&cluster, "demo"),
        Err(ReconcileError::Transient(_))
    ));

    assert!(cluster.server("Secret", "demo-wildcard-ca").is_some());
    assert!(cluster.server("Secret", "demo-wildcard-tls").is_none());
    assert!(cluster.server("Secret", "demo-wildcard-chain").is_none());
    let status = status(&cluster, "demo");
    assert!(status.secrets.iter().all(|s| !s.ready));
    let (_, reason, message) = ready(&cluster, "demo");
    assert_eq!(reason, "SecretsNotWritten");
    assert!(
        message.contains("Secret demo-wildcard-tls: cannot write it: unavailable: etcd"),
        "{message}"
    );
    assert!(
        message.contains(
            "Secret demo-wildcard-chain: not written, because Secret demo-wildcard-tls of its \
             certificate set failed"
        ),
        "{message}"
    );
}

#[test]
fn a_set_not_written_whole_is_not_ready_and_its_tls_secret_keeps_its_ready_units() {
    let cluster = fake_cluster();
    cluster.put(with_certificate(gls("demo"), "demo-wildcard"));
    pass(&cluster, "demo").expect("the set is issued");
    // The chain is lost; deriving it again is refused.
    cluster.change("Secret", "demo-wildcard-chain", |s| s["data"] = json!({}));
    cluster.fail(
        Op::Patch,
        "demo-wildcard-chain",
        ApiError::TooLarge("big".into()),
        1,
    );

    assert!(matches!(
        pass(&cluster, "demo"),
        Err(ReconcileError::Permanent(_))
    ));

    let status = status(&cluster, "demo");
    assert!(status.secrets.iter().all(|s| !s.ready));
    assert_eq!(status.secrets[1].ready_units, ["certificate-set"]);

    // The next change starts the pass that derives the chain.
    assert_eq!(pass(&cluster, "demo"), Ok(Outcome::done()));
    assert!(
        cluster
            .secret_data("demo-wildcard-chain")
            .contains_key("chain.crt")
    );
    assert_eq!(ready(&cluster, "demo").1, "SecretsReady");
}

#[test]
fn an_existing_set_is_never_reissued() {
    let cluster = fake_cluster();
    cluster.put(with_certificate(gls("demo"), "demo-wildcard"));
    pass(&cluster, "demo").expect("the set is issued");
    let before = cluster.secret_data("demo-wildcard-tls");
    cluster.clear_calls();

    assert_eq!(pass(&cluster, "demo"), Ok(Outcome::done()));
    assert!(cluster.write_log().is_empty(), "{:?}", cluster.write_log());
    assert_eq!(cluster.secret_data("demo-wildcard-tls"), before);
}
