//! spec.secrets: what a pass creates and patches, and what it never does.

use serde_json::json;

use crate::testing::*;

#[test]
fn a_missing_secret_is_created_with_its_declared_type_the_labels_and_the_generated_keys() {
    let cluster = fake_cluster();
    let mut gls = with_secret(
        gls("demo"),
        "demo-a",
        json!([random("token"), static_value("empty", "")]),
    );
    gls["spec"]["secrets"][0]["type"] = json!("example.com/custom");
    cluster.put(gls);

    assert_eq!(
        pass(&cluster, "demo"),
        Ok(wasm_operator_sdk::Outcome::done())
    );

    let secret = cluster.server("Secret", "demo-a").expect("created");
    assert_eq!(secret["type"], "example.com/custom");
    assert_eq!(
        secret["metadata"]["labels"],
        json!({"app": "gitlab", "release": "demo"})
    );
    let data = cluster.secret_data("demo-a");
    assert_eq!(data["token"].len(), 16);
    assert_eq!(data["empty"], b"");
    assert!(secret.pointer("/metadata/ownerReferences").is_none());
}

#[test]
fn an_existing_value_is_never_changed() {
    let cluster = fake_cluster();
    cluster.put(with_secret(
        gls("demo"),
        "demo-a",
        json!([random("token"), random("other")]),
    ));
    cluster.put(secret("demo-a", "Opaque", &[("token", "mine")]));

    pass(&cluster, "demo").expect("the pass succeeds");

    let data = cluster.secret_data("demo-a");
    assert_eq!(data["token"], b"mine");
    assert_eq!(data["other"].len(), 16);
}

#[test]
fn a_user_created_secret_only_gains_missing_keys_with_a_merge_patch() {
    let cluster = fake_cluster();
    cluster.put(with_secret(gls("demo"), "demo-a", json!([random("token")])));
    cluster.put(secret("demo-a", "Opaque", &[("extra", "kept")]));

    pass(&cluster, "demo").expect("the pass succeeds");

    let data = cluster.secret_data("demo-a");
    assert_eq!(data.len(), 2);
    assert_eq!(data["extra"], b"kept");
    assert_eq!(
        cluster.write_log(),
        [
            "patch Secret gitlab/demo-a",
            "update-status GitLabSecrets gitlab/demo"
        ]
    );
}

#[test]
fn a_missing_secret_with_a_report_is_not_created() {
    let cluster = fake_cluster();
    // More data-bearing units than a status entry holds: reported.
    let generators: Vec<_> = (0..65).map(|i| random(&format!("k{i}"))).collect();
    cluster.put(with_secret(gls("demo"), "demo-a", json!(generators)));

    assert_eq!(
        pass(&cluster, "demo"),
        Ok(wasm_operator_sdk::Outcome::done())
    );

    assert!(cluster.server("Secret", "demo-a").is_none());
    let (status, reason, message) = ready(&cluster, "demo");
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "SecretsReported")
    );
    assert!(message.contains("Secret demo-a: declares 65"), "{message}");
}

#[test]
fn a_gitlabsecrets_that_is_being_deleted_gets_no_writes() {
    let cluster = fake_cluster();
    let mut gls = with_secret(gls("demo"), "demo-a", json!([random("token")]));
    gls["metadata"]["deletionTimestamp"] = json!("2026-11-29T00:00:00Z");
    gls["metadata"]["finalizers"] = json!(["someone.else/finalizer"]);
    cluster.put(gls);

    assert_eq!(
        pass(&cluster, "demo"),
        Ok(wasm_operator_sdk::Outcome::done())
    );
    assert!(cluster.write_log().is_empty());
}

#[test]
fn a_gitlabsecrets_gets_no_finalizer_and_its_secrets_no_owner_reference() {
    let cluster = fake_cluster();
    cluster.put(with_certificate(
        with_secret(gls("demo"), "demo-a", json!([random("token")])),
        "demo-wildcard",
    ));
    pass(&cluster, "demo").expect("the pass succeeds");
    let primary = cluster.server("GitLabSecrets", "demo").expect("there");
    assert!(primary.pointer("/metadata/finalizers").is_none());
    for name in [
        "demo-a",
        "demo-wildcard-ca",
        "demo-wildcard-tls",
        "demo-wildcard-chain",
    ] {
        let secret = cluster.server("Secret", name).expect(name);
        assert!(
            secret.pointer("/metadata/ownerReferences").is_none(),
            "{name}"
        );
    }
}

#[test]
fn the_chart_defaults_converge_in_one_pass_and_the_next_pass_writes_nothing() {
    let cluster = fake_cluster();
    let yaml = include_str!("../../testdata/chart-defaults.yaml");
    let mut object: serde_json::Value = serde_yaml_ng::from_str(yaml).expect("the render");
    object["metadata"]["namespace"] = json!(NS);
    cluster.put(object);

    assert_eq!(
        pass(&cluster, "demo"),
        Ok(wasm_operator_sdk::Outcome::done())
    );
    let (status, reason, _) = ready(&cluster, "demo");
    assert_eq!((status.as_str(), reason.as_str()), ("True", "SecretsReady"));
    assert_eq!(status_of_all(&cluster).len(), 13 + 3);
    assert!(cluster.secret_data("demo-rails-secret")["secrets.yml"].starts_with(b"production:"));

    cluster.clear_calls();
    assert_eq!(
        pass(&cluster, "demo"),
        Ok(wasm_operator_sdk::Outcome::done())
    );
    assert!(cluster.write_log().is_empty(), "{:?}", cluster.write_log());
}

fn status_of_all(cluster: &FakeCluster) -> Vec<String> {
    status(cluster, "demo")
        .secrets
        .into_iter()
        .filter(|s| s.ready)
        .map(|s| s.name)
        .collect()
}

// Native only: in wasm the exported reconciler plans through the host's `planner` import,
// which a unit test binary does not have (the e2e tests cover that build).
#[cfg(not(target_arch = "wasm32"))]
#[test]
fn the_exported_reconciler_plans_with_secretgen_natively() {
    use wasm_operator_sdk::Reconciler;
    let cluster = fake_cluster();
    cluster.put(with_secret(gls("demo"), "demo-a", json!([random("token")])));
    let request = wasm_operator_sdk::Request {
        namespace: Some(NS.into()),
        name: "demo".into(),
    };
    let outcome = crate::GitLabSecretsReconciler::reconcile(&cluster, &request);
    assert_eq!(outcome, Ok(wasm_operator_sdk::Outcome::done()));
    assert!(cluster.server("Secret", "demo-a").is_some());
}
