//! Reads from the cache, and what a pass checks past it before writing.

use std::time::Duration;

use serde_json::json;
use wasm_operator_sdk::{ApiError, Outcome, ReconcileError};

use crate::testing::*;

const A_SECOND: Outcome = Outcome {
    requeue_after: Some(Duration::from_secs(1)),
};

#[test]
fn a_concurrent_secret_change_between_read_and_patch_loses_nothing() {
    let cluster = fake_cluster();
    cluster.put(with_secret(
        gls("demo"),
        "demo-a",
        json!([random("a"), random("b")]),
    ));
    cluster.put(secret("demo-a", "Opaque", &[("a", "first")]));
    // Another client adds a key right after the pass read the Secret past the cache.
    cluster.after_server_read("demo-a", |secret| {
        secret["data"]["theirs"] = json!("dGhlaXJz"); // "theirs"
    });

    // The patch carries the version read: refused with a conflict, the pass is retried with
    // the controller's backoff (only a conflicting status update requeues after a second).
    assert!(
        matches!(pass(&cluster, "demo"), Err(ReconcileError::Transient(m)) if m.contains("conflict")),
    );
    let (_, reason, message) = ready(&cluster, "demo");
    assert_eq!(reason, "SecretsNotWritten");
    assert!(
        message.contains("Secret demo-a: cannot write it: conflict"),
        "{message}"
    );
    assert_eq!(cluster.secret_data("demo-a").len(), 2);

    // The next pass, on the changed Secret, adds b and keeps both other values.
    cluster.sync_cache();
    assert_eq!(pass(&cluster, "demo"), Ok(Outcome::done()));
    let data = cluster.secret_data("demo-a");
    assert_eq!(data["a"], b"first");
    assert_eq!(data["theirs"], b"theirs");
    assert_eq!(data["b"].len(), 16);
}

#[test]
fn a_secret_that_changed_past_the_cache_is_planned_again_before_it_is_written() {
    let cluster = fake_cluster();
    cluster.put(with_secret(gls("demo"), "demo-a", json!([random("token")])));
    cluster.put(secret("demo-a", "Opaque", &[]));
    // The user filled the key; the cache has not seen it yet.
    cluster.freeze_cache();
    cluster.change("Secret", "demo-a", |s| {
        s["data"] = json!({"token": "dXNlcg=="}); // "user"
        s["metadata"]["labels"] = json!({"app": "gitlab", "release": "demo"});
    });

    pass(&cluster, "demo").expect("the pass succeeds");
    assert_eq!(cluster.secret_data("demo-a")["token"], b"user");
    assert!(
        !cluster
            .write_log()
            .iter()
            .any(|w| w.starts_with("patch Secret")),
        "{:?}",
        cluster.write_log()
    );
}

#[test]
fn a_stale_cached_gitlabsecrets_requeues_after_a_second_before_the_first_write() {
    let cluster = fake_cluster();
    cluster.put(with_secret(gls("demo"), "demo-a", json!([random("token")])));
    cluster.freeze_cache();
    cluster.change("GitLabSecrets", "demo", |g| {
        g["metadata"]["labels"]["app"] = json!("renamed");
    });

    assert_eq!(pass(&cluster, "demo"), Ok(A_SECOND));
    assert!(cluster.write_log().is_empty(), "{:?}", cluster.write_log());

    cluster.sync_cache();
    assert_eq!(pass(&cluster, "demo"), Ok(Outcome::done()));
    let secret = cluster.server("Secret", "demo-a").expect("created");
    assert_eq!(secret["metadata"]["labels"]["app"], "renamed");
}

#[test]
fn a_status_update_that_would_change_nothing_is_skipped_only_on_a_current_gitlabsecrets() {
    let cluster = fake_cluster();
    cluster.put(with_secret(gls("demo"), "demo-a", json!([random("token")])));
    assert_eq!(pass(&cluster, "demo"), Ok(Outcome::done()));
    cluster.clear_calls();

    cluster.freeze_cache();
    cluster.change("GitLabSecrets", "demo", |g| {
        g["spec"]["secrets"][0]["generators"][0]["length"] = json!(20);
    });
    assert_eq!(pass(&cluster, "demo"), Ok(A_SECOND));
    assert!(cluster.write_log().is_empty(), "{:?}", cluster.write_log());

    cluster.sync_cache();
    assert_eq!(pass(&cluster, "demo"), Ok(Outcome::done()));
}

#[test]
fn a_status_update_that_conflicts_requeues_after_a_second() {
    let cluster = fake_cluster();
    cluster.put(with_secret(gls("demo"), "demo-a", json!([random("token")])));
    cluster.fail(
        Op::UpdateStatus,
        "demo",
        ApiError::Conflict("modified".into()),
        1,
    );

    assert_eq!(pass(&cluster, "demo"), Ok(A_SECOND));
    assert_eq!(pass(&cluster, "demo"), Ok(Outcome::done()));
    assert_eq!(ready(&cluster, "demo").1, "SecretsReady");
}

#[test]
fn a_new_certificate_set_is_issued_only_after_both_checks() {
    let cluster = fake_cluster();
    cluster.put(with_certificate(gls("demo"), "demo-wildcard"));
    cluster.freeze_cache();
    cluster.change("GitLabSecrets", "demo", |g| {
        g["metadata"]["annotations"] = json!({"touched": "yes"});
    });

    let planner = KeyCountingPlanner::default();
    assert_eq!(pass_with(&cluster, &planner, "demo"), Ok(A_SECOND));
    assert!(cluster.write_log().is_empty(), "{:?}", cluster.write_log());
    assert!(cluster.server("Secret", "demo-wildcard-ca").is_none());
    assert_eq!(
        planner.keys_generated(),
        0,
        "no key is generated before both checks pass"
    );

    cluster.sync_cache();
    assert_eq!(pass_with(&cluster, &planner, "demo"), Ok(Outcome::done()));
    assert!(
        cluster
            .secret_data("demo-wildcard-tls")
            .contains_key("tls.key")
    );
    assert_eq!(planner.keys_generated(), 2, "the CA key and tls.key");
}
