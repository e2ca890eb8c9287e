//! The HealthCheck member (facts §2.18) against Debian's real Keystone: the endpoint of
//! the Keystone's Service is what the test registers (no stand-in runs), so each reason
//! comes from what really answers there.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use wasm_operator_e2e::current_condition;
use wasm_operator_e2e::real_keystone::RealKeystone;
use wasm_operator_sdk::ObjectRef;

use crate::harness::{Harness, WAIT, keystone};

/// The URL the health check probes.
const URL: &str = "http://ks.ns.svc.cluster.local:5000/v3";
/// The body of the failing server: longer than the 256-byte excerpt.
fn failing_body() -> String {
    format!("database unavailable: {}", "x".repeat(300))
}

/// A loopback server answering every request 500 with [`failing_body`]; its port.
async fn failing_server() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a listener");
    let port = listener.local_addr().expect("its address").port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buffer = [0u8; 4096];
                let _ = stream.read(&mut buffer).await;
                let body = failing_body();
                let answer = format!(
                    "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
            });
        }
    });
    port
}

/// The EndpointSlice `ks-probe` of Service `ks`: one ready endpoint 127.0.0.1:`port` for
/// the Service's port `keystone`.
fn endpoints(port: u16) -> Value {
    json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "ks-probe", "namespace": "ns",
                     "labels": {"kubernetes.io/service-name": "ks"}},
        "addressType": "IPv4",
        "ports": [{"name": "keystone", "port": port, "protocol": "TCP"}],
        "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}]})
}

fn slice_ref() -> ObjectRef {
    ObjectRef {
        api_version: "discovery.k8s.io/v1".into(),
        kind: "EndpointSlice".into(),
        namespace: Some("ns".into()),
        name: "ks-probe".into(),
    }
}

fn message(object: &Value) -> String {
    current_condition(object, "KeystoneAPIReady")
        .and_then(|c| c["message"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_health_check_reports_what_answers_at_the_keystone_service_the_real_keystone_included()
{
    // The real Keystone sets up (about 30 s) while the Keystone converges.
    let real = tokio::task::spawn_blocking(|| RealKeystone::start("health-admin"));
    let h = Harness::start().await;
    h.cluster.create(keystone(json!({}))).await;

    // The Service has no endpoint yet: nothing to connect to.
    let object = h.condition("KeystoneAPIReady", "ConnectionFailed").await;
    assert!(message(&object).contains(URL), "{}", message(&object));

    // A server that answers 500: the status and the body's first 256 bytes.
    h.cluster.create(endpoints(failing_server().await)).await;
    let object = h.condition("KeystoneAPIReady", "APIUnhealthy").await;
    assert_eq!(
        message(&object),
        format!("Keystone API returned HTTP 500: {}", &failing_body()[..256])
    );

    // The real Keystone behind the Service.
    let mut real = real.await.expect("the real Keystone starts");
    h.cluster
        .merge_patch(
            &slice_ref(),
            json!({"ports": [{"name": "keystone", "port": real.port(), "protocol": "TCP"}]}),
        )
        .await;
    let object = h.condition("KeystoneAPIReady", "APIHealthy").await;
    assert_eq!(
        message(&object),
        format!("Keystone API is responding at {URL}")
    );

    // Stopped: once the 30 s probe cache has run out, the next pass finds nothing there.
    real.stop();
    tokio::time::sleep(Duration::from_secs(31)).await;
    let service = ObjectRef {
        api_version: "v1".into(),
        kind: "Service".into(),
        namespace: Some("ns".into()),
        name: "ks".into(),
    };
    let failed = wasm_operator_e2e::eventually("ConnectionFailed after the stop", WAIT, || {
        let (h, service) = (&h, &service);
        async move {
            // A change of an owned object starts a pass.
            let touched = format!("{:?}", std::time::Instant::now());
            h.cluster
                .merge_patch(
                    service,
                    json!({"metadata": {"annotations": {"test/touched": touched}}}),
                )
                .await;
            tokio::time::sleep(Duration::from_secs(2)).await;
            let object = h.keystone().await?;
            let condition = current_condition(&object, "KeystoneAPIReady")?;
            (condition["reason"] == "ConnectionFailed").then_some(object)
        }
    })
    .await;
    assert!(message(&failed).contains(URL), "{}", message(&failed));
}
