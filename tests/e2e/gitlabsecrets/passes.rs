//! "The reconciler": what a pass writes, on the embedded API server.

use serde_json::json;
use wasm_operator_e2e::{chart_defaults, counter_rises, eventually, passes, settled};

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chart_defaults_converge_to_ready_secrets_with_the_certificate_set() {
    let h = Harness::start().await;
    let declared = chart_defaults();
    h.create(declared.clone()).await;
    let object = h.ready_with("gitlab", "demo", "SecretsReady").await;
    let names: Vec<&str> = declared["spec"]["secrets"]
        .as_array()
        .expect("secrets")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .chain([
            "demo-wildcard-tls-ca",
            "demo-wildcard-tls",
            "demo-wildcard-tls-chain",
        ])
        .collect();
    for name in &names {
        let secret = h
            .secret("gitlab", name)
            .await
            .unwrap_or_else(|| panic!("{name} exists"));
        assert!(
            secret
                .get("data")
                .is_some_and(|d| d.as_object().is_some_and(|d| !d.is_empty())),
            "{name} holds keys"
        );
        assert!(
            secret.pointer("/metadata/ownerReferences").is_none(),
            "{name} has no owner"
        );
        assert_eq!(
            secret.pointer("/metadata/labels/app"),
            Some(&json!("gitlab")),
            "{name} labelled"
        );
        assert!(
            secret
                .pointer("/metadata/labels/operator.gitlab.com~1release-name")
                .is_none(),
            "release-* labels are not copied to {name}"
        );
    }
    let statuses = object
        .pointer("/status/secrets")
        .and_then(|s| s.as_array())
        .expect("status.secrets");
    assert!(statuses.iter().all(|s| s["ready"] == true), "{statuses:?}");
    assert!(
        object.pointer("/metadata/finalizers").is_none(),
        "no finalizer"
    );
    h.assert_no_secret_rewrites();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_converged_gitlabsecrets_is_left_alone_by_the_next_pass() {
    let h = Harness::start().await;
    h.create(gitlabsecrets("app", json!([random("s", "token", 16)])))
        .await;
    h.ready_with("ns", "app", "SecretsReady").await;
    let secret = h.secret("ns", "s").await.expect("s");
    let before = h.cluster.counts();
    let operator = h.operator.as_ref().expect("running");
    settled(operator).await;
    let passes_before = passes(operator, "gitlabsecrets");
    // A label change starts a pass (labels-changed predicate). An
    // operator.gitlab.com/release-* label is not propagated to the Secrets, so
    // the pass has nothing to write.
    h.cluster
        .backend
        .patch(
            &setup(),
            &gitlabsecrets_ref("ns", "app"),
            &Patch::Merge(
                json!({"metadata": {"labels": {"operator.gitlab.com/release-touched": "yes"}}}),
            ),
            None,
        )
        .await
        .expect("labelled");
    counter_rises(
        "the pass the label change started",
        WAIT,
        passes_before,
        || passes(operator, "gitlabsecrets"),
    )
    .await;
    let after = h.secret("ns", "s").await.expect("s");
    assert_eq!(
        secret["metadata"]["resourceVersion"],
        after["metadata"]["resourceVersion"]
    );
    let since = h.cluster.counts().since(&before);
    assert_eq!(
        since.get("patch", "secrets") + since.get("create", "secrets"),
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_existing_value_is_never_changed_and_a_user_created_secret_only_gains_missing_keys() {
    let h = Harness::start().await;
    h.create(json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "ns", "labels": {"mine": "yes"}},
        "type": "Opaque", "stringData": {"token": "chosen-by-the-user", "extra": "kept"}}))
        .await;
    h.create(gitlabsecrets(
        "app",
        json!([{"name": "s", "type": "Opaque", "generators": [
        {"type": "random", "key": "token", "charset": "alphanumeric", "length": 32},
        {"type": "random", "key": "other", "charset": "hex", "length": 8}]}]),
    ))
    .await;
    h.ready_with("ns", "app", "SecretsReady").await;
    let secret = h.secret("ns", "s").await.expect("s");
    assert_eq!(
        secret_value(&secret, "token").as_deref(),
        Some(&b"chosen-by-the-user"[..])
    );
    assert_eq!(
        secret_value(&secret, "extra").as_deref(),
        Some(&b"kept"[..])
    );
    assert_eq!(secret_value(&secret, "other").map(|v| v.len()), Some(8));
    assert_eq!(
        secret.pointer("/metadata/labels/mine"),
        Some(&json!("yes")),
        "no label removed"
    );
    assert_eq!(
        secret.pointer("/metadata/labels/app"),
        Some(&json!("gitlab"))
    );
    h.assert_no_secret_rewrites();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_the_gitlabsecrets_leaves_every_secret() {
    let h = Harness::start().await;
    h.create(gitlabsecrets(
        "app",
        json!([random("a", "k", 8), random("b", "k", 8)]),
    ))
    .await;
    h.ready_with("ns", "app", "SecretsReady").await;
    h.cluster
        .backend
        .delete(
            &gitlabsecrets_ref("ns", "app"),
            &wasm_operator_sdk::Propagation::Background.into(),
        )
        .await
        .expect("deleted");
    eventually("the GitLabSecrets gone", WAIT, || async {
        h.gitlabsecrets("ns", "app").await.is_none().then_some(())
    })
    .await;
    // What keeps them: no Secret names the GitLabSecrets as its owner, so the garbage
    // collector (which runs as the owner goes) has nothing to take.
    for name in ["a", "b"] {
        let secret = h.secret("ns", name).await.expect("the Secret is left");
        assert!(
            secret["metadata"]["ownerReferences"].is_null(),
            "{name} has no owner: {secret}"
        );
    }
    h.assert_no_secret_rewrites();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_declared_secret_is_created_again_through_the_field_index() {
    let h = Harness::start().await;
    h.create(gitlabsecrets("app", json!([random("a", "k", 8)])))
        .await;
    h.ready_with("ns", "app", "SecretsReady").await;
    // Deleting is the test's doing (the fault refuses the operator's deletes only by verb;
    // clear it for this one request).
    h.cluster.server.clear_faults();
    h.cluster
        .backend
        .delete(
            &secret_ref("ns", "a"),
            &wasm_operator_sdk::Propagation::Background.into(),
        )
        .await
        .expect("deleted");
    let deletes = h.cluster.counts().get("delete", "secrets");
    assert_eq!(deletes, 1);
    eventually("a created again", WAIT, || async {
        h.secret("ns", "a").await
    })
    .await;
    assert_eq!(
        h.cluster.counts().get("delete", "secrets"),
        1,
        "only the test deleted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_declared_by_two_gitlabsecrets_is_labelled_by_neither_with_a_warning() {
    let h = Harness::start().await;
    h.create(gitlabsecrets("one", json!([random("shared", "k", 8)])))
        .await;
    let mut two = gitlabsecrets("two", json!([random("shared", "k", 8)]));
    two["metadata"]["labels"] = json!({"team": "two"});
    h.create(two).await;
    h.ready_with("ns", "one", "SecretsReady").await;
    h.ready_with("ns", "two", "SecretsReady").await;
    eventually("a SecretDeclaredTwice warning", WAIT, || async {
        let events = h.events("SecretDeclaredTwice").await;
        (!events.is_empty()).then_some(events)
    })
    .await;
    let secret = h.secret("ns", "shared").await.expect("shared");
    assert!(
        secret.pointer("/metadata/labels/team").is_none(),
        "not labelled by two: {secret}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_existing_secret_of_another_type_keeps_it_with_a_secret_type_kept_event() {
    let h = Harness::start().await;
    h.create(
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "ns"},
        "type": "kubernetes.io/basic-auth", "stringData": {"username": "u", "password": "p"}}),
    )
    .await;
    h.create(gitlabsecrets("app", json!([random("s", "token", 8)])))
        .await;
    h.ready_with("ns", "app", "SecretsReady").await;
    let secret = h.secret("ns", "s").await.expect("s");
    assert_eq!(secret["type"], "kubernetes.io/basic-auth");
    eventually("a SecretTypeKept event", WAIT, || async {
        let events = h.events("SecretTypeKept").await;
        (!events.is_empty()).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_key_of_a_ready_secret_is_generated_again_and_the_others_are_kept() {
    let h = Harness::start().await;
    h.create(gitlabsecrets(
        "app",
        json!([{"name": "s", "type": "Opaque", "generators": [
            {"type": "random", "key": "kept", "charset": "alphanumeric", "length": 16},
            {"type": "random", "key": "deleted", "charset": "hex", "length": 12}]}]),
    ))
    .await;
    h.ready_with("ns", "app", "SecretsReady").await;
    let before = h.secret("ns", "s").await.expect("s");
    let deleted = secret_value(&before, "deleted").expect("deleted");
    h.patch_secret("s", json!({"data": {"deleted": null}}))
        .await;
    let after = eventually("the deleted key generated again", WAIT, || async {
        let secret = h.secret("ns", "s").await?;
        secret_value(&secret, "deleted").is_some().then_some(secret)
    })
    .await;
    let regenerated = secret_value(&after, "deleted").expect("deleted");
    assert_eq!(regenerated.len(), 12);
    assert!(regenerated.iter().all(u8::is_ascii_hexdigit), "hex");
    assert_ne!(regenerated, deleted, "a new value, not a remembered one");
    assert_eq!(
        secret_value(&after, "kept"),
        secret_value(&before, "kept"),
        "the other key is kept"
    );
    h.ready_with("ns", "app", "SecretsReady").await;
    h.assert_no_secret_rewrites();
}

/// The chain Secret's `chain.crt` as the CA certificate followed by `tls.crt`.
async fn expected_chain(h: &Harness) -> Vec<u8> {
    let ca = h.secret("ns", "wildcard-ca").await.expect("wildcard-ca");
    let tls = h.secret("ns", "wildcard").await.expect("wildcard");
    [
        secret_value(&ca, "cfssl_ca").expect("the CA certificate"),
        secret_value(&tls, "tls.crt").expect("tls.crt"),
    ]
    .concat()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_chain_key_is_derived_again_byte_for_byte() {
    let h = Harness::start().await;
    h.create(certificate_set("app")).await;
    h.ready_with("ns", "app", "SecretsReady").await;
    let expected = expected_chain(&h).await;
    h.patch_secret("wildcard-chain", json!({"data": {"chain.crt": null}}))
        .await;
    let chain = eventually("the chain derived again", WAIT, || async {
        secret_value(&h.secret("ns", "wildcard-chain").await?, "chain.crt")
    })
    .await;
    assert_eq!(chain, expected, "the CA certificate, then tls.crt");
    h.assert_no_secret_rewrites();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_chain_secret_reaches_the_gitlabsecrets_through_the_field_index() {
    let h = Harness::start().await;
    h.create(certificate_set("app")).await;
    h.ready_with("ns", "app", "SecretsReady").await;
    let expected = expected_chain(&h).await;
    let operator = h.operator.as_ref().expect("running");
    settled(operator).await;
    let passes_before = passes(operator, "gitlabsecrets");
    // A converged GitLabSecrets is not requeued: only the Secret's deletion, mapped to the
    // GitLabSecrets that declares it by the field index, can start the pass that recreates it.
    h.cluster.server.clear_faults();
    h.cluster
        .backend
        .delete(
            &secret_ref("ns", "wildcard-chain"),
            &wasm_operator_sdk::Propagation::Background.into(),
        )
        .await
        .expect("deleted");
    let chain = eventually("the chain Secret created again", WAIT, || async {
        secret_value(&h.secret("ns", "wildcard-chain").await?, "chain.crt")
    })
    .await;
    // The Secret is written inside the pass; the pass is counted when it returns.
    counter_rises("the pass the deletion started", WAIT, passes_before, || {
        passes(operator, "gitlabsecrets")
    })
    .await;
    assert_eq!(chain, expected, "the CA certificate, then tls.crt");
    assert_eq!(
        h.cluster.counts().get("delete", "secrets"),
        1,
        "only the test deleted"
    );
}
