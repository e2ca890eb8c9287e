//! Text a guest hands the host (panic messages, errors, log lines) is escaped and capped,
//! and a guest cannot open a socket.

use std::time::Duration;

use serde_json::json;
use wasm_operator_e2e::{cluster_with, eventually, runtime_with_cache};
use wasm_operator_runtime::PassError;

use super::{ADDR, hostile, hostile_wasm, request, start_hostile};

/// The longest guest text the host passes on (`wasm_operator_runtime::GUEST_TEXT_MAX`).
const CAP: usize = 1024;

/// Asserts `text` is the hostile plugin's ugly text, escaped and capped.
fn assert_escaped_and_capped(text: &str) {
    assert!(!text.chars().any(char::is_control), "{text:?}");
    // (A panic message is read line by line from stderr, so its `\r\n` becomes `\n`.)
    assert!(
        text.contains(r"\u{1b}[31mred\u{1b}[0m\nERROR forged line"),
        "{text}"
    );
    assert!(text.len() <= CAP + 64, "{} bytes", text.len());
    assert!(text.contains("bytes cut"), "the cut is marked: {text}");
}

#[tokio::test]
async fn a_guest_panic_message_is_escaped_and_capped() {
    let cache = tempfile::tempdir().expect("tempdir");
    let runtime = runtime_with_cache(&cache);
    let plugin = runtime.load(&hostile_wasm(), None).await.expect("loads");
    let cluster = cluster_with(&[
        hostile("panics", "ugly-panic"),
        hostile("fails", "ugly-error"),
    ])
    .await;

    let panicked = plugin
        .reconcile(&runtime, cluster.backend(), &request("panics"))
        .await
        .expect_err("panics");
    let failed = plugin
        .reconcile(&runtime, cluster.backend(), &request("fails"))
        .await
        .expect_err("fails");

    match &panicked {
        PassError::GuestPanic { message, .. } => assert_escaped_and_capped(message),
        other => panic!("expected a guest panic, got {other:?}"),
    }
    match &failed {
        PassError::Reconcile { message, .. } => assert_escaped_and_capped(message),
        other => panic!("expected the guest's error, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pass_failed_event_of_an_ugly_panic_is_escaped_and_within_the_note_limit() {
    let cluster = cluster_with(&[]).await;
    let (operator, _plugins, _cache) = start_hostile(&cluster, |_| {}).await;
    cluster.create(hostile("panics", "ugly-panic")).await;

    let events = eventually("the PassFailed event", Duration::from_secs(20), || async {
        let events = cluster.events_with_reason("ns", "PassFailed").await;
        (!events.is_empty()).then_some(events)
    })
    .await;

    let note = events[0]["note"].as_str().expect("a note");
    assert!(note.len() <= CAP, "{} bytes", note.len());
    assert!(!note.chars().any(char::is_control), "{note:?}");
    assert!(note.contains(r"\u{1b}[31mred"), "{note}");
    operator.kill();
}

#[tokio::test]
async fn a_guest_cannot_open_a_socket() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a listener");
    listener.set_nonblocking(true).expect("nonblocking");
    let addr = listener.local_addr().expect("addr");
    let cache = tempfile::tempdir().expect("tempdir");
    let runtime = runtime_with_cache(&cache);
    let plugin = runtime.load(&hostile_wasm(), None).await.expect("loads");
    let mut object = hostile("dial", "socket");
    object["metadata"]["annotations"][ADDR] = json!(addr.to_string());
    let cluster = cluster_with(&[object]).await;

    let err = plugin
        .reconcile(&runtime, cluster.backend(), &request("dial"))
        .await
        .expect_err("the guest reports what happened");

    match &err {
        PassError::Reconcile { message, .. } => {
            assert!(message.starts_with("refused: "), "{message}");
        }
        other => panic!("expected the guest's report, got {other:?}"),
    }
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        Ok((_, peer)) => panic!("the guest connected from {peer}"),
        Err(e) => panic!("accept: {e}"),
    }
}
