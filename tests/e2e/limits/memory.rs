//! Memory: a component may not hold more memories than the pool gives one plugin, and what
//! a guest sends the cluster is refused over the API server's body limit before parsing.

use wasm_operator_e2e::{cluster_with, config_map, fixture_wasm, runtime_with_cache};
use wasm_operator_runtime::{LoadError, PassError};

use super::{hostile, hostile_wasm, request};

/// A component that instantiates a one-page core module `count` times: `count` memories
/// (and `count` core instances, within the 16 a plugin may have).
fn many_memories(count: usize) -> Vec<u8> {
    let instances: String = (0..count)
        .map(|i| format!("(core instance $i{i} (instantiate $m))\n"))
        .collect();
    let text = format!("(component (core module $m (memory 1)) {instances})");
    wat::parse_str(text).expect("the component text parses")
}

#[tokio::test]
async fn a_component_with_more_memories_than_a_plugin_may_have_is_refused_at_load() {
    let cache = tempfile::tempdir().expect("tempdir");
    let runtime = runtime_with_cache(&cache);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("many-memories.wasm");
    std::fs::write(&path, many_memories(8)).expect("written");

    let Err(err) = runtime.load(&path, None).await else {
        panic!("8 memories are refused");
    };

    match &err {
        LoadError::Limits { path: p, message } => {
            assert_eq!(p, &path);
            assert!(message.contains("8 Wasm linear memories"), "{message}");
        }
        other => panic!("expected a limits refusal, got {other:?}"),
    }
    assert!(err.to_string().contains("many-memories.wasm"), "{err}");

    // The pool is intact: the fixture loads and serves a pass on the same runtime.
    let fixture = runtime.load(&fixture_wasm(), None).await.expect("loads");
    let cluster = cluster_with(&[config_map("ns", "a", serde_json::json!({"k": "v"}), None)]).await;
    fixture
        .reconcile(&runtime, cluster.backend(), &request("a"))
        .await
        .expect("the fixture keeps serving");
    assert!(cluster.echo("a").await.is_some());
}

#[tokio::test]
async fn an_object_over_the_body_limit_is_refused_before_it_reaches_the_api_server() {
    let cache = tempfile::tempdir().expect("tempdir");
    let runtime = runtime_with_cache(&cache);
    let plugin = runtime.load(&hostile_wasm(), None).await.expect("loads");
    let cluster = cluster_with(&[hostile("big", "huge-create")]).await;
    let before = cluster.counts();

    let err = plugin
        .reconcile(&runtime, cluster.backend(), &request("big"))
        .await
        .expect_err("the guest reports what happened");

    match &err {
        PassError::Reconcile { message, .. } => {
            assert!(message.starts_with("refused: TooLarge("), "{message}");
            assert!(message.contains("3145728 bytes"), "{message}");
        }
        other => panic!("expected the guest's report, got {other:?}"),
    }
    let since = cluster.counts().since(&before);
    assert_eq!(
        since.get("get", "configmaps"),
        1,
        "the pass ran: it read its primary"
    );
    assert_eq!(
        since.get("create", "configmaps"),
        0,
        "nothing reached the server"
    );
}
