//! The plugin runtime, end to end: the real fixture `.wasm` loaded into the real runtime,
//! reconciling against the embedded API server through kube-rs.

use std::time::Duration;

use serde_json::json;
use wasm_operator_e2e::{cluster_with, config_map, fixture_wasm, runtime_with_cache};
use wasm_operator_runtime::CacheOutcome;
use wasm_operator_runtime::{Limits, PassError};
use wasm_operator_sdk::Request;

fn request(name: &str) -> Request {
    Request {
        namespace: Some("ns".into()),
        name: name.into(),
    }
}

#[tokio::test]
async fn a_pass_applies_the_echo_owned_by_the_primary_and_records_an_event() {
    let cache = tempfile::tempdir().expect("tempdir");
    let runtime = runtime_with_cache(&cache);
    let plugin = runtime
        .load(&fixture_wasm(), None)
        .await
        .expect("the fixture loads");
    let cluster = cluster_with(&[config_map("ns", "a", json!({"k": "v"}), None)]).await;

    let outcome = plugin
        .reconcile(&runtime, cluster.backend(), &request("a"))
        .await
        .expect("the pass succeeds");

    assert_eq!(outcome.requeue_after, None);
    let echo = cluster
        .get("v1", "ConfigMap", "ns", "a-echo")
        .await
        .expect("the echo exists");
    assert_eq!(echo["data"], json!({"k": "v", "served-by": "0.1.0"}));
    let owner = &echo["metadata"]["ownerReferences"][0];
    assert_eq!(
        (
            owner["kind"].as_str(),
            owner["name"].as_str(),
            owner["controller"].as_bool()
        ),
        (Some("ConfigMap"), Some("a"), Some(true))
    );
    assert_eq!(
        echo["metadata"]["managedFields"][0]["manager"],
        "fixture-reconciler"
    );
    assert_eq!(echo["metadata"]["managedFields"][0]["operation"], "Apply");
    let events = cluster.events("ns").await;
    assert_eq!(events.len(), 1);
    assert_eq!(
        (events[0]["reason"].as_str(), events[0]["type"].as_str()),
        (Some("Echoed"), Some("Normal"))
    );
    assert_eq!(events[0]["reportingController"], "wasm-operator/fixture");
}

#[tokio::test]
async fn a_converged_pass_writes_nothing_and_repeated_events_aggregate_into_a_series() {
    let cache = tempfile::tempdir().expect("tempdir");
    let runtime = runtime_with_cache(&cache);
    let plugin = runtime
        .load(&fixture_wasm(), None)
        .await
        .expect("the fixture loads");
    let cluster = cluster_with(&[config_map("ns", "a", json!({"k": "v"}), None)]).await;
    plugin
        .reconcile(&runtime, cluster.backend(), &request("a"))
        .await
        .expect("first pass");
    let echo_before = cluster
        .get("v1", "ConfigMap", "ns", "a-echo")
        .await
        .expect("echo");

    let before = cluster.counts();
    plugin
        .reconcile(&runtime, cluster.backend(), &request("a"))
        .await
        .expect("second pass");
    assert_eq!(
        cluster.counts().since(&before).stored("configmaps"),
        0,
        "the converged pass stored no change"
    );

    let echo_after = cluster
        .get("v1", "ConfigMap", "ns", "a-echo")
        .await
        .expect("echo");
    assert_eq!(
        echo_after["metadata"]["resourceVersion"], echo_before["metadata"]["resourceVersion"],
        "the converged apply wrote nothing"
    );
    let events = cluster.events("ns").await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["series"]["count"], 2);
}

#[tokio::test]
async fn a_looping_guest_fails_its_pass_with_a_deadline_error_naming_plugin_and_object() {
    let cache = tempfile::tempdir().expect("tempdir");
    let runtime = runtime_with_cache(&cache);
    let limits = Limits {
        deadline: Duration::from_millis(200),
        ..Limits::default()
    };
    let plugin = runtime
        .load(&fixture_wasm(), Some(limits))
        .await
        .expect("the fixture loads");
    let cluster = cluster_with(&[config_map("ns", "spin", json!({}), Some("loop"))]).await;

    let err = plugin
        .reconcile(&runtime, cluster.backend(), &request("spin"))
        .await
        .expect_err("the pass loops");

    assert!(matches!(err, PassError::Deadline { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "plugin fixture: the pass for ns/spin exceeded its deadline of 200ms"
    );
}

#[tokio::test]
async fn a_guest_past_its_memory_cap_fails_its_pass_with_a_memory_cap_error() {
    let cache = tempfile::tempdir().expect("tempdir");
    let runtime = runtime_with_cache(&cache);
    let limits = Limits {
        memory_bytes: 32 << 20,
        ..Limits::default()
    };
    let plugin = runtime
        .load(&fixture_wasm(), Some(limits))
        .await
        .expect("the fixture loads");
    let cluster = cluster_with(&[config_map("ns", "bomb", json!({}), Some("allocate"))]).await;

    let err = plugin
        .reconcile(&runtime, cluster.backend(), &request("bomb"))
        .await
        .expect_err("the pass allocates");

    match &err {
        PassError::MemoryCap {
            plugin,
            object,
            limit,
            requested,
        } => {
            assert_eq!(
                (plugin.as_str(), object.as_str(), *limit),
                ("fixture", "ns/bomb", 32 << 20)
            );
            assert!(*requested > 32 << 20);
        }
        other => panic!("expected a memory-cap error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_panicking_guest_fails_its_pass_with_the_panic_message() {
    let cache = tempfile::tempdir().expect("tempdir");
    let runtime = runtime_with_cache(&cache);
    let plugin = runtime
        .load(&fixture_wasm(), None)
        .await
        .expect("the fixture loads");
    let cluster = cluster_with(&[config_map("ns", "p", json!({}), Some("panic"))]).await;

    let err = plugin
        .reconcile(&runtime, cluster.backend(), &request("p"))
        .await
        .expect_err("the pass panics");

    match &err {
        PassError::GuestPanic {
            plugin,
            object,
            message,
        } => {
            assert_eq!((plugin.as_str(), object.as_str()), ("fixture", "ns/p"));
            assert!(
                message.starts_with(fixture_reconciler::PANIC_MESSAGE),
                "{message}"
            );
        }
        other => panic!("expected a guest panic, got {other:?}"),
    }
}

#[tokio::test]
async fn a_failed_pass_leaves_the_plugin_serving_the_next_one() {
    let cache = tempfile::tempdir().expect("tempdir");
    let runtime = runtime_with_cache(&cache);
    let plugin = runtime
        .load(&fixture_wasm(), None)
        .await
        .expect("the fixture loads");
    let cluster = cluster_with(&[
        config_map("ns", "p", json!({}), Some("panic")),
        config_map("ns", "ok", json!({"x": "1"}), None),
    ])
    .await;

    let failed = plugin
        .reconcile(&runtime, cluster.backend(), &request("p"))
        .await
        .expect_err("the pass panics");
    assert!(
        matches!(failed, PassError::GuestPanic { .. }),
        "the first pass fails by the guest's panic: {failed:?}"
    );
    plugin
        .reconcile(&runtime, cluster.backend(), &request("ok"))
        .await
        .expect("the next pass succeeds");
    let echo = cluster
        .echo("ok")
        .await
        .expect("the next pass wrote its echo");
    assert_eq!(echo["data"]["x"], "1", "{echo}");
}

#[tokio::test]
async fn a_verb_the_plugin_did_not_declare_is_forbidden() {
    let cache = tempfile::tempdir().expect("tempdir");
    let runtime = runtime_with_cache(&cache);
    let plugin = runtime
        .load(&fixture_wasm(), None)
        .await
        .expect("the fixture loads");
    let cluster = cluster_with(&[config_map("ns", "f", json!({}), Some("forbidden"))]).await;

    let err = plugin
        .reconcile(&runtime, cluster.backend(), &request("f"))
        .await
        .expect_err("forbidden");

    match &err {
        PassError::Reconcile {
            message, retryable, ..
        } => {
            assert!(
                message.contains("plugin fixture: did not declare verb delete on v1/Secret"),
                "{message}"
            );
            // Retried with the backoff, as an RBAC 403 is: the pass cannot tell the host's
            // refusal from the API server's, and an administrator can fix the latter.
            assert!(retryable, "a forbidden call is retried");
        }
        other => panic!("expected a reconcile error, got {other:?}"),
    }
    assert_eq!(cluster.counts().get("delete", "secrets"), 0);
}

#[tokio::test]
async fn requeue_after_and_permanent_errors_cross_the_boundary() {
    let cache = tempfile::tempdir().expect("tempdir");
    let runtime = runtime_with_cache(&cache);
    let plugin = runtime
        .load(&fixture_wasm(), None)
        .await
        .expect("the fixture loads");
    let cluster = cluster_with(&[
        config_map("ns", "r", json!({}), Some("requeue")),
        config_map("ns", "e", json!({}), Some("fail")),
    ])
    .await;

    let outcome = plugin
        .reconcile(&runtime, cluster.backend(), &request("r"))
        .await
        .expect("requeue");
    let err = plugin
        .reconcile(&runtime, cluster.backend(), &request("e"))
        .await
        .expect_err("fail");

    assert_eq!(outcome.requeue_after, Some(Duration::from_secs(5)));
    assert!(!err.is_retryable());
    assert_eq!(
        err.to_string(),
        "plugin fixture: reconcile of ns/e failed: the fixture fails on purpose"
    );
}

#[tokio::test]
async fn a_field_index_is_computed_by_the_guest() {
    let cache = tempfile::tempdir().expect("tempdir");
    let runtime = runtime_with_cache(&cache);
    let plugin = runtime
        .load(&fixture_wasm(), None)
        .await
        .expect("the fixture loads");

    let keys = plugin
        .index(
            &runtime,
            "data-keys",
            &config_map("ns", "a", json!({"b": "1", "a": "2"}), None),
        )
        .await;

    assert_eq!(keys.expect("index"), vec!["a".to_owned(), "b".to_owned()]);
}

#[tokio::test]
async fn a_second_load_uses_the_precompiled_artifact_instead_of_compiling() {
    let cache = tempfile::tempdir().expect("tempdir");
    let first = runtime_with_cache(&cache)
        .load(&fixture_wasm(), None)
        .await
        .expect("first load");
    let second = runtime_with_cache(&cache)
        .load(&fixture_wasm(), None)
        .await
        .expect("second load");

    assert_eq!(first.cache_outcome(), CacheOutcome::Compiled);
    assert_eq!(second.cache_outcome(), CacheOutcome::Loaded);
    assert_eq!(first.sha256(), second.sha256());
    let artifacts = std::fs::read_dir(cache.path()).expect("cache dir").count();
    assert_eq!(artifacts, 1, "one artifact per component and engine");
}

#[tokio::test]
async fn the_same_reconciler_built_natively_does_what_its_wasm_build_does() {
    let cache = tempfile::tempdir().expect("tempdir");
    let runtime = runtime_with_cache(&cache);
    let plugin = runtime
        .load(&fixture_wasm(), None)
        .await
        .expect("the fixture loads");
    let objects = [config_map("ns", "a", json!({"k": "v", "l": "w"}), None)];
    let in_wasm = cluster_with(&objects).await;
    let native = cluster_with(&objects).await;
    let (wasm_before, native_before) = (in_wasm.counts(), native.counts());

    plugin
        .reconcile(&runtime, in_wasm.backend(), &request("a"))
        .await
        .expect("wasm pass");
    wasm_operator_native::reconcile_native::<fixture_reconciler::Fixture>(
        native.backend(),
        request("a"),
    )
    .await
    .expect("native pass");

    let from_wasm = in_wasm
        .get("v1", "ConfigMap", "ns", "a-echo")
        .await
        .expect("echo");
    let from_native = native
        .get("v1", "ConfigMap", "ns", "a-echo")
        .await
        .expect("echo");
    assert_eq!(from_wasm["data"], from_native["data"]);
    let fields =
        |o: &serde_json::Value| o["metadata"]["managedFields"][0]["fieldsV1"]["f:data"].clone();
    assert_eq!(fields(&from_wasm), fields(&from_native));
    assert_eq!(
        in_wasm.counts().since(&wasm_before),
        native.counts().since(&native_before),
        "the same requests"
    );
    let reasons = |events: Vec<serde_json::Value>| {
        events
            .iter()
            .map(|e| e["reason"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        reasons(in_wasm.events("ns").await),
        reasons(native.events("ns").await)
    );
}
