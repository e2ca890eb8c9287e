//! A guest that fails a pass (deadline, memory cap, panic, fuel) is contained and reported
//! on its object.

use super::*;

fn widget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.tests.wasm-operator.dev"},
        "spec": {
            "group": "tests.wasm-operator.dev",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "behaviour": {"type": "string"}, "value": {"type": "string"}}},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                }}},
            }],
        },
    })
}

pub(super) fn widget(name: &str, behaviour: &str) -> Value {
    json!({"apiVersion": "tests.wasm-operator.dev/v1", "kind": "Widget",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"behaviour": behaviour, "value": name}})
}

/// The operator running only widget.wasm with `toml` as plugins.toml (fuel counted when
/// `fuel`), the Widget CRD installed.
pub(super) async fn widgets(toml: &str, fuel: bool) -> Harness {
    let widget = read(&test_plugin("widget-reconciler.wasm"));
    let h = Harness::start(&[("widget.wasm", widget)], Some(toml), fuel).await;
    h.create(widget_crd()).await;
    h
}

/// Sets spec.behaviour of Widget `name`.
async fn set_behaviour(h: &Harness, name: &str, behaviour: &str) {
    let r = ObjectRef {
        api_version: "tests.wasm-operator.dev/v1".into(),
        kind: "Widget".into(),
        namespace: Some("ns".into()),
        name: name.into(),
    };
    h.cluster
        .backend
        .patch(
            &setup(),
            &r,
            &Patch::Merge(json!({"spec": {"behaviour": behaviour}})),
            None,
        )
        .await
        .expect("patched");
}

/// Waits for the Reconciled condition of Widget `name` with `reason` and returns it.
async fn reconciled(h: &Harness, name: &str, reason: &str) -> Value {
    eventually(
        &format!("{name}: Reconciled with {reason}"),
        WAIT,
        || async {
            let object = h
                .cluster
                .get("tests.wasm-operator.dev/v1", "Widget", "ns", name)
                .await?;
            let condition = object
                .pointer("/status/conditions")?
                .as_array()?
                .iter()
                .find(|c| c["type"] == "Reconciled")?
                .clone();
            (condition["reason"] == reason).then_some(condition)
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_failing_guest_is_contained_and_reported_on_its_object_with_the_limit() {
    let toml = "[plugins.widget]\ndeadline_ms = 300\nmemory_mib = 32\n";
    let h = widgets(toml, false).await;
    for (name, behaviour) in [
        ("looping", "loop"),
        ("bomb", "allocate"),
        ("panicking", "panic"),
        ("fine", ""),
    ] {
        h.create(widget(name, behaviour)).await;
    }
    let deadline = reconciled(&h, "looping", "DeadlineExceeded").await;
    assert!(deadline["status"] == "False");
    let message = deadline["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("plugin widget") && message.contains("300ms"),
        "{message}"
    );
    let memory = reconciled(&h, "bomb", "MemoryCapExceeded").await;
    assert!(
        memory["message"]
            .as_str()
            .unwrap_or_default()
            .contains(&(32u64 << 20).to_string()),
        "{memory}"
    );
    let panic = reconciled(&h, "panicking", "GuestPanicked").await;
    assert!(
        panic["message"]
            .as_str()
            .unwrap_or_default()
            .contains("the widget panics on purpose"),
        "{panic}"
    );
    eventually("the well-behaved widget reconciled", WAIT, || async {
        let fine = h
            .cluster
            .get("tests.wasm-operator.dev/v1", "Widget", "ns", "fine")
            .await?;
        (fine.pointer("/status/observedValue") == Some(&json!("fine"))).then_some(())
    })
    .await;
    let events = h.events("PassFailed").await;
    for name in ["looping", "bomb", "panicking"] {
        assert!(
            events.iter().any(|e| e["regarding"]["name"] == name),
            "a PassFailed event on {name}: {events:?}"
        );
    }
    let failures = h
        .operator
        .controller("widget")
        .expect("widget")
        .queue()
        .failures(&wasm_operator_sdk::Request {
            namespace: Some("ns".into()),
            name: "looping".into(),
        });
    assert!(failures >= 1, "the failed pass is retried with backoff");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_out_of_fuel_is_reported_with_its_fuel_limit_and_a_later_success_clears_it() {
    let toml = "[plugins.widget]\nfuel = 20000000\n";
    let h = widgets(toml, true).await;
    h.create(widget("spinner", "loop")).await;
    let condition = reconciled(&h, "spinner", "FuelExhausted").await;
    assert!(
        condition["message"]
            .as_str()
            .unwrap_or_default()
            .contains("20000000"),
        "{condition}"
    );
    set_behaviour(&h, "spinner", "").await;
    let healthy = reconciled(&h, "spinner", "PassSucceeded").await;
    assert_eq!(healthy["status"], "True");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_failure_of_another_kind_replaces_the_reconciled_reason() {
    let toml = "[plugins.widget]\ndeadline_ms = 300\n";
    let h = widgets(toml, false).await;
    h.create(widget("flaky", "loop")).await;
    reconciled(&h, "flaky", "DeadlineExceeded").await;
    set_behaviour(&h, "flaky", "fail").await;
    let failed = reconciled(&h, "flaky", "ReconcileFailed").await;
    assert_eq!(failed["status"], "False");
    assert!(
        failed["message"]
            .as_str()
            .is_some_and(|m| m.contains("the widget fails on purpose")),
        "{failed}"
    );
}
