//! The commit of a staged password (facts §2.11) and what follows from it: the normalized
//! length, the events, the PushSecret gate and the converged pass.

use serde_json::json;
use wasm_operator_sdk::testing::FakeCluster;

use super::tests::{
    BACKUP, COMPLETED_AT, NEXT, ROTATE, STAGING, complete, configured, data, enabled, ready, stage,
    step,
};
use super::*;
use crate::testing::events;

#[test]
fn the_password_length_is_normalized_for_the_cron_job_and_the_commit_alike() {
    for (length, normalized) in [(0, 32), (10, 24), (24, 24), (40, 40)] {
        let cluster = FakeCluster::new();
        let spec = enabled(json!({"passwordLength": length}));
        step(&cluster, spec.clone()).0.expect("configures");
        let cron = cluster.server("CronJob", ROTATE).expect("cron job");
        let env = &cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["env"];
        assert_eq!(
            env[2],
            json!({"name": "PASSWORD_LENGTH", "value": normalized.to_string()})
        );
        stage(
            &cluster,
            &[("password", &"s".repeat(normalized - 1))],
            "2026-03-01T00:00:00Z",
        );
        step(&cluster, spec.clone()).0.expect("rejects");
        let rejected = events(&cluster);
        assert_eq!(
            rejected.last().map(|e| (e.1.as_str(), e.2.as_str())),
            Some((
                "AdminPasswordRotationRejected",
                format!(
                    "Staged rotation in Secret ns/{STAGING} rejected: the staged password is {} \
                     characters long, want at least {normalized}",
                    normalized - 1
                )
                .as_str()
            )),
            "passwordLength {length}"
        );
        stage(
            &cluster,
            &[("password", &"s".repeat(normalized))],
            "2026-03-02T00:00:00Z",
        );
        let (result, _) = step(&cluster, spec);
        assert_eq!(
            result.expect("commits"),
            Some(NEXT_PASS),
            "passwordLength {length}"
        );
    }
}

#[test]
fn a_staged_password_is_committed_onto_the_push_source_and_the_next_pass_comes_at_once() {
    let cluster = FakeCluster::new();
    step(&cluster, enabled(json!({}))).0.expect("configures");
    let password = "Q".repeat(32);
    stage(&cluster, &[("password", &password)], "2026-03-01T12:00:00Z");
    cluster.clear_calls();
    let (result, pass) = step(&cluster, enabled(json!({})));
    assert_eq!(result.expect("commits"), Some(NEXT_PASS));
    assert_eq!(
        ready(&pass),
        [
            "True",
            "AdminPasswordRotated",
            "rotation applied; staging secret cleared"
        ]
    );
    let next = cluster.server("Secret", NEXT).expect("push-source");
    assert_eq!(next["data"], data(&[("password", &password)]));
    assert_eq!(
        next["metadata"]["annotations"][COMPLETED_AT],
        "2026-03-01T12:00:00Z"
    );
    assert!(cluster.server("Secret", STAGING).is_none());
    assert_eq!(
        events(&cluster),
        [(
            "Normal".to_owned(),
            "AdminPasswordRotated".to_owned(),
            format!(
                "Committed the rotation completed at 2026-03-01T12:00:00Z from Secret \
                 ns/{STAGING} onto ns/{NEXT}"
            )
        )]
    );
    assert_eq!(
        cluster.write_log(),
        [
            format!("patch Secret ns/{NEXT}"),
            format!("delete Secret ns/{STAGING}")
        ]
    );
}

#[test]
fn a_password_already_committed_only_has_its_staging_secret_deleted() {
    let cluster = FakeCluster::new();
    step(&cluster, enabled(json!({}))).0.expect("configures");
    let password = "C".repeat(32);
    stage(&cluster, &[("password", &password)], "2026-03-01T12:00:00Z");
    complete(
        &cluster,
        NEXT,
        &[("password", &password)],
        "2026-03-01T12:00:00Z",
    );
    cluster.clear_calls();
    let (result, pass) = step(&cluster, enabled(json!({})));
    assert_eq!(result.expect("runs"), None);
    assert_eq!(ready(&pass), configured());
    assert!(cluster.server("Secret", STAGING).is_none());
    assert!(cluster.events().is_empty());
    assert_eq!(
        cluster.write_log(),
        [
            format!("delete Secret ns/{STAGING}"),
            format!("apply PushSecret ns/{BACKUP}")
        ]
    );
}

#[test]
fn a_completion_annotation_that_is_no_time_is_warned_about_and_not_applied() {
    let cluster = FakeCluster::new();
    step(&cluster, enabled(json!({}))).0.expect("configures");
    stage(&cluster, &[("password", &"x".repeat(32))], "yesterday");
    let staged = cluster.server("Secret", STAGING).expect("staging");
    let (result, pass) = step(&cluster, enabled(json!({})));
    assert_eq!(result.expect("runs"), None);
    assert_eq!(ready(&pass), configured());
    assert_eq!(
        events(&cluster),
        [(
            "Warning".to_owned(),
            "AdminPasswordRotationAnnotationInvalid".to_owned(),
            format!(
                "Staging Secret ns/{STAGING}: annotation {COMPLETED_AT} \"yesterday\" is not an \
                 RFC 3339 time; the rotation is not applied"
            )
        )]
    );
    assert_eq!(cluster.server("Secret", STAGING), Some(staged));
    assert!(cluster.secret_data(NEXT).is_empty());
    assert!(cluster.server("PushSecret", BACKUP).is_none());
}

#[test]
fn a_rejected_password_is_warned_about_and_its_staging_secret_left_as_it_is() {
    let too_short = "r".repeat(31);
    let long = "r".repeat(40);
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str);
    let cases: [Case<'_>; 3] = [
        (
            "too short",
            vec![("password", &too_short)],
            "the staged password is 31 characters long, want at least 32",
        ),
        (
            "missing key",
            vec![("secret", &long)],
            "the staged rotation has no key \"password\"",
        ),
        (
            "empty",
            vec![("password", "")],
            "the staged password is empty",
        ),
    ];
    for (case, pairs, why) in cases {
        let cluster = FakeCluster::new();
        step(&cluster, enabled(json!({}))).0.expect("configures");
        stage(&cluster, &pairs, "2026-03-01T12:00:00Z");
        let staged = cluster.server("Secret", STAGING).expect("staging");
        let (result, pass) = step(&cluster, enabled(json!({})));
        assert_eq!(result.expect(case), None, "{case}");
        assert_eq!(ready(&pass), configured(), "{case}");
        assert_eq!(
            events(&cluster),
            [(
                "Warning".to_owned(),
                "AdminPasswordRotationRejected".to_owned(),
                format!("Staged rotation in Secret ns/{STAGING} rejected: {why}")
            )],
            "{case}"
        );
        assert_eq!(cluster.server("Secret", STAGING), Some(staged), "{case}");
        assert!(cluster.secret_data(NEXT).is_empty(), "{case}");
        assert!(cluster.server("PushSecret", BACKUP).is_none(), "{case}");
    }
}

#[test]
fn the_backup_push_secret_appears_only_once_the_push_source_holds_a_valid_password() {
    let cluster = FakeCluster::new();
    step(&cluster, enabled(json!({}))).0.expect("configures");
    assert!(cluster.server("PushSecret", BACKUP).is_none());
    cluster.change("Secret", NEXT, |s| {
        s["data"] = data(&[("password", "short")]);
    });
    step(&cluster, enabled(json!({}))).0.expect("configures");
    assert!(
        cluster.server("PushSecret", BACKUP).is_none(),
        "a password shorter than the length is not pushed"
    );
    cluster.change("Secret", NEXT, |s| {
        s["data"] = data(&[("password", &"v".repeat(32))]);
    });
    let (result, pass) = step(&cluster, enabled(json!({})));
    assert_eq!(result.expect("runs"), None);
    assert_eq!(ready(&pass), configured());
    let backup = cluster.server("PushSecret", BACKUP).expect("backup");
    assert_eq!(backup["metadata"]["ownerReferences"][0]["uid"], "ks-uid");
    assert_eq!(
        backup["spec"],
        json!({"deletionPolicy": "None",
            "secretStoreRefs": [{"name": "openbao-cluster-store", "kind": "ClusterSecretStore"}],
            "selector": {"secret": {"name": NEXT}},
            "data": [{"match": {"secretKey": "password",
                "remoteRef": {"remoteKey": "bootstrap/ns/ks/admin", "property": "password"}}}]})
    );
}

#[test]
fn a_converged_pass_writes_nothing() {
    let cluster = FakeCluster::new();
    let spec = enabled(json!({"passwordLength": 30}));
    step(&cluster, spec.clone()).0.expect("configures");
    stage(
        &cluster,
        &[("password", &"k".repeat(30))],
        "2026-03-01T12:00:00Z",
    );
    step(&cluster, spec.clone()).0.expect("commits");
    step(&cluster, spec.clone()).0.expect("pushes");
    assert!(cluster.server("PushSecret", BACKUP).is_some());
    cluster.clear_calls();
    let (result, pass) = step(&cluster, spec);
    assert_eq!(result.expect("runs"), None);
    assert_eq!(ready(&pass), configured());
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
}
