//! What a file may become: a planner copied over a reconciler's file, a second planner, a
//! refused file removed, and `/readyz` while no reconciler serves.

use wasm_operator_e2e::http_get;

use super::*;
use crate::planner::{planned_value, random_key_gitlabsecrets};

/// The operator over the shipped gitlabsecrets.wasm and secretgen.wasm.
async fn shipped() -> Harness {
    let shipped = wasm_operator::cli::shipped_plugin_dir();
    Harness::start(
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
    .await
}

/// The note of the first PluginRefused event that names `file`.
async fn refusal_of(h: &Harness, file: &str) -> String {
    eventually(
        &format!("a PluginRefused event for {file}"),
        WAIT,
        || async {
            h.events("PluginRefused")
                .await
                .into_iter()
                .filter_map(|e| e["note"].as_str().map(str::to_owned))
                .find(|note| note.contains(file))
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planner_copied_over_a_reconcilers_file_is_refused_by_name_and_the_reconciler_serves_on()
{
    let h = shipped().await;
    let secretgen = read(&wasm_operator::cli::shipped_plugin_dir().join("secretgen.wasm"));
    install(h.plugins.path(), "gitlabsecrets.wasm", &secretgen);
    let note = refusal_of(&h, "gitlabsecrets.wasm").await;
    assert!(
        note.contains("is a planner, but this file serves reconciler gitlabsecrets"),
        "{note}"
    );
    h.wait_metric(
        "the refusal",
        r#"plugin="gitlabsecrets",version="",sha256="",state="refused""#,
    )
    .await;
    h.create(random_key_gitlabsecrets("after", "s-after")).await;
    let value = planned_value(&h, "s-after").await;
    assert_eq!(value.len(), 8, "the reconciler serves on: {value:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_planner_is_refused_naming_the_linked_one_which_serves_on() {
    let h = shipped().await;
    install(
        h.plugins.path(),
        "other.wasm",
        &read(&test_plugin("stamping-planner.wasm")),
    );
    let note = refusal_of(&h, "other.wasm").await;
    assert!(
        note.contains("is a second planner: the planner of secretgen.wasm is linked"),
        "{note}"
    );
    h.create(random_key_gitlabsecrets("after", "s-after")).await;
    let value = planned_value(&h, "s-after").await;
    assert_ne!(value, "stamped", "secretgen still plans");
    assert_eq!(value.len(), 8, "{value:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_refused_file_leaves_the_metrics() {
    let h = Harness::with_fixture().await;
    install(h.plugins.path(), "broken.wasm", b"not wasm at all");
    let refused = r#"plugin="broken",version="",sha256="",state="refused""#;
    h.wait_metric("the refusal", refused).await;
    std::fs::remove_file(h.plugins.path().join("broken.wasm")).expect("removed");
    eventually("the refusal gone from /metrics", WAIT, || async {
        (!h.metrics().contains(refused)).then_some(())
    })
    .await;
    assert!(
        h.metrics().contains(r#"plugin="fixture""#),
        "the serving plugin stays"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_is_not_ready_while_no_reconciler_serves_and_names_the_refused_files() {
    // After a restart over a directory whose reconciler was overwritten by a planner: two
    // planners, no reconciler.
    let secretgen = read(&wasm_operator::cli::shipped_plugin_dir().join("secretgen.wasm"));
    let h = Harness::start(
        &[
            ("gitlabsecrets.wasm", secretgen.clone()),
            ("secretgen.wasm", secretgen),
        ],
        None,
        false,
    )
    .await;
    let addr = h.operator.health_addr().expect("served");
    let (code, body) = http_get(addr, "/readyz").await;
    assert_eq!(code, 503, "{body}");
    assert_eq!(body, "no reconciler serves (refused: secretgen.wasm)");
    let note = refusal_of(&h, "secretgen.wasm").await;
    assert!(
        note.contains("is a second planner: the planner of gitlabsecrets.wasm is linked"),
        "{note}"
    );

    // Putting the reconciler back (and granting the operator its kinds) serves it, and the
    // planner refused as second is linked.
    install(
        h.plugins.path(),
        "gitlabsecrets.wasm",
        &read(&wasm_operator::cli::shipped_plugin_dir().join("gitlabsecrets.wasm")),
    );
    h.grant_rbac().await;
    eventually("/readyz ready", WAIT, || async {
        let (code, body) = http_get(addr, "/readyz").await;
        (code == 200).then_some(body)
    })
    .await;
    let secretgen_sha = sha256_of(&read(
        &wasm_operator::cli::shipped_plugin_dir().join("secretgen.wasm"),
    ));
    h.wait_metric(
        "secretgen linked",
        &format!(r#"plugin="secretgen",version="",sha256="{secretgen_sha}",state="serving""#),
    )
    .await;
    h.create(random_key_gitlabsecrets("after", "s-after")).await;
    assert_eq!(planned_value(&h, "s-after").await.len(), 8);
}
