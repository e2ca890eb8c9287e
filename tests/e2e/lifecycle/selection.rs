//! A plugin that narrows its primary watch (contract 1.4's `selection`): the widget plugin
//! declares `!tests.wasm-operator.dev/ignored`, so a labelled Widget is neither cached nor
//! passed until the label goes, and leaves the plugin's primaries when it comes back.

use super::failures::{widget, widgets};
use super::*;

const IGNORED: &str = "tests.wasm-operator.dev/ignored";

fn widget_ref(name: &str) -> ObjectRef {
    ObjectRef {
        api_version: "tests.wasm-operator.dev/v1".into(),
        kind: "Widget".into(),
        namespace: Some("ns".into()),
        name: name.into(),
    }
}

async fn observed(h: &Harness, name: &str) -> Option<Value> {
    h.cluster
        .get("tests.wasm-operator.dev/v1", "Widget", "ns", name)
        .await
        .and_then(|w| w.pointer("/status/observedValue").cloned())
}

async fn wait_observed(h: &Harness, name: &str, value: &str) {
    eventually(&format!("{name} observes {value}"), WAIT, || async {
        (observed(h, name).await == Some(json!(value))).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_primary_selector_keeps_unmatched_primaries_unpassed_until_they_match() {
    let h = widgets("", false).await;
    eventually("the widget plugin serves", WAIT, || async {
        h.operator.controller("widget").map(drop)
    })
    .await;
    let controller = h.operator.controller("widget").expect("serving");
    assert_eq!(
        controller.description().primary_selector.as_deref(),
        Some("!tests.wasm-operator.dev/ignored")
    );

    // The ignored Widget is created first: the one watch delivers in order, so once the
    // second is passed, the first would have been.
    let mut ignored = widget("ignored", "");
    ignored["metadata"]["labels"] = json!({IGNORED: "true"});
    h.create(ignored).await;
    h.create(widget("seen", "")).await;
    wait_observed(&h, "seen", "seen").await;
    assert_eq!(
        observed(&h, "ignored").await,
        None,
        "the labelled one is not passed"
    );

    // Without the label it is a primary: passed.
    h.cluster
        .merge_patch(
            &widget_ref("ignored"),
            json!({"metadata": {"labels": {IGNORED: null}}}),
        )
        .await;
    wait_observed(&h, "ignored", "ignored").await;

    // Labelled, a passed Widget leaves the primaries: its change is not passed, while a
    // later change of the other is.
    h.cluster
        .merge_patch(
            &widget_ref("seen"),
            json!({"metadata": {"labels": {IGNORED: "true"}}, "spec": {"value": "changed"}}),
        )
        .await;
    h.cluster
        .merge_patch(&widget_ref("ignored"), json!({"spec": {"value": "later"}}))
        .await;
    wait_observed(&h, "ignored", "later").await;
    assert_eq!(
        observed(&h, "seen").await,
        Some(json!("seen")),
        "a Widget that left the selector is not passed"
    );
}
