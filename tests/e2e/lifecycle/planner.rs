//! Replacing the planner: the reconcilers that import it are relinked; a pin holds.

use super::*;

/// A GitLabSecrets whose one Secret `secret` gets key `k` from a random generator.
pub(crate) fn random_key_gitlabsecrets(name: &str, secret: &str) -> Value {
    json!({"apiVersion": "apps.gitlab.com/v2alpha1", "kind": "GitLabSecrets",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"secrets": [{"name": secret, "type": "Opaque", "generators": [
            {"type": "random", "key": "k", "charset": "hex", "length": 8}]}]}})
}

/// The decoded value of key `k` of Secret `ns/name`, once it exists.
pub(crate) async fn planned_value(h: &Harness, name: &str) -> String {
    let secret = eventually(&format!("Secret {name}"), WAIT, || async {
        h.cluster.get("v1", "Secret", "ns", name).await
    })
    .await;
    let encoded = secret["data"]["k"].as_str().expect("key k");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .expect("base64");
    String::from_utf8(bytes).expect("utf-8")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replacing_the_planner_relinks_the_reconcilers_that_import_it() {
    let shipped = wasm_operator::cli::shipped_plugin_dir();
    let h = Harness::start(
        &[
            (
                "gitlabsecrets.wasm",
                read(&shipped.join("gitlabsecrets.wasm")),
            ),
            ("secretgen.wasm", read(&shipped.join("secretgen.wasm"))),
        ],
        None,
        false,
    )
    .await;
    h.create(random_key_gitlabsecrets("before", "s-before"))
        .await;
    let generated = planned_value(&h, "s-before").await;
    assert!(
        generated.len() == 8 && generated.bytes().all(|b| b.is_ascii_hexdigit()),
        "secretgen planned 8 hex characters: {generated:?}"
    );
    assert!(
        wasm_operator_e2e::metric(&h.metrics(), "wasm_operator_planner_calls_total") >= 1,
        "the planner's calls are counted on /metrics"
    );

    // A planner whose output differs: every key is `stamped`.
    let stamping = read(&test_plugin("stamping-planner.wasm"));
    let stamping_sha = sha256_of(&stamping);
    install(h.plugins.path(), "secretgen.wasm", &stamping);
    h.wait_metric(
        "the new planner linked",
        &format!(r#"sha256="{stamping_sha}",state="serving""#),
    )
    .await;
    h.create(random_key_gitlabsecrets("after", "s-after")).await;
    assert_eq!(
        planned_value(&h, "s-after").await,
        "stamped",
        "gitlabsecrets calls the replacement planner"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replaced_planner_whose_sha256_is_not_its_pin_is_refused_and_the_pinned_one_serves_on() {
    let shipped = wasm_operator::cli::shipped_plugin_dir();
    let secretgen = read(&shipped.join("secretgen.wasm"));
    let pinned = sha256_of(&secretgen);
    let toml = format!("[plugins.secretgen]\nsha256 = \"{pinned}\"\n");
    let h = Harness::start(
        &[
            (
                "gitlabsecrets.wasm",
                read(&shipped.join("gitlabsecrets.wasm")),
            ),
            ("secretgen.wasm", secretgen.clone()),
        ],
        Some(&toml),
        false,
    )
    .await;
    h.wait_metric(
        "the pinned planner linked",
        &format!(r#"sha256="{pinned}",state="serving""#),
    )
    .await;
    // The same planner with an extra custom section: another file, another sha256.
    let mut next = secretgen;
    let name = b"wasm-operator-test";
    next.extend_from_slice(&[
        0,
        u8::try_from(name.len() + 1).expect("short"),
        u8::try_from(name.len()).expect("short"),
    ]);
    next.extend_from_slice(name);
    install(h.plugins.path(), "secretgen.wasm", &next);

    let refused = eventually("a PluginRefused event", WAIT, || async {
        h.events("PluginRefused").await.into_iter().next()
    })
    .await;
    let note = refused["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("secretgen.wasm") && note.contains("is not the pinned"),
        "{refused}"
    );
    assert!(
        h.metrics()
            .contains(&format!(r#"sha256="{pinned}",state="serving""#)),
        "the pinned planner is still linked"
    );
    h.create(
        json!({"apiVersion": "apps.gitlab.com/v2alpha1", "kind": "GitLabSecrets",
        "metadata": {"name": "app", "namespace": "ns"},
        "spec": {"secrets": [{"name": "s", "type": "Opaque", "generators": [
            {"type": "random", "key": "k", "charset": "hex", "length": 8}]}]}}),
    )
    .await;
    eventually("the Secret planned by the pinned planner", WAIT, || async {
        h.cluster.get("v1", "Secret", "ns", "s").await
    })
    .await;
}
