//! Throughput of the embedded API server in-process, through kube-rs over loopback HTTP:
//! gets, lists, server-side applies and watch events per second.
//!
//! `cargo bench -p wasm-operator-apiserver` prints one line per operation. Targets on this
//! 2-core machine: ≥ 20k gets/s and ≥ 5k applies/s.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams, WatchParams};
use serde_json::json;
use wasm_operator_apiserver::{ApiServer, ServerConfig};

/// Concurrent clients.
const CLIENTS: usize = 16;
/// How long each measurement runs.
const WINDOW: Duration = Duration::from_secs(3);

async fn measure<F, Fut>(name: &str, op: F)
where
    F: Fn(usize, u64) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let started = Instant::now();
    let mut tasks = Vec::new();
    for client in 0..CLIENTS {
        let op = op.clone();
        tasks.push(tokio::spawn(async move {
            let mut n = 0u64;
            while started.elapsed() < WINDOW {
                op(client, n).await;
                n += 1;
            }
            n
        }));
    }
    let mut total = 0;
    for t in tasks {
        total += t.await.unwrap_or(0);
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{name:<8} {:>10.0} ops/s  ({total} in {secs:.1} s, {CLIENTS} clients)",
        total as f64 / secs
    );
}

#[tokio::main]
async fn main() {
    let server = ApiServer::start(ServerConfig::default())
        .await
        .expect("server");
    let client = server.client().expect("client");
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    for i in 0..100 {
        let cm: ConfigMap = serde_json::from_value(
            json!({"metadata": {"name": format!("cm-{i}")}, "data": {"k": "v"}}),
        )
        .expect("cm");
        api.create(&PostParams::default(), &cm)
            .await
            .expect("create");
    }

    let get_api = api.clone();
    measure("get", move |_, n| {
        let api = get_api.clone();
        async move {
            api.get(&format!("cm-{}", n % 100)).await.expect("get");
        }
    })
    .await;

    let list_api = api.clone();
    measure("list", move |_, _| {
        let api = list_api.clone();
        async move {
            api.list(&ListParams::default().limit(100))
                .await
                .expect("list");
        }
    })
    .await;

    let apply_api = api.clone();
    measure("apply", move |client, n| {
        let api = apply_api.clone();
        async move {
            let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("applied-{client}")},
                "data": {"n": n.to_string()}});
            api.patch(&format!("applied-{client}"), &PatchParams::apply("bench").force(), &Patch::Apply(&body)).await.expect("apply");
        }
    })
    .await;

    // Watch: events delivered per second to one watcher while writers patch.
    use futures::StreamExt as _;
    let mut stream = api
        .watch(&WatchParams::default().disable_bookmarks(), "0")
        .await
        .expect("watch")
        .boxed();
    let counter = tokio::spawn(async move {
        let mut n = 0u64;
        let started = Instant::now();
        while started.elapsed() < WINDOW + Duration::from_millis(500) {
            match tokio::time::timeout(Duration::from_millis(500), stream.next()).await {
                Ok(Some(Ok(_))) => n += 1,
                _ => break,
            }
        }
        n
    });
    let write_api = api.clone();
    measure("patch", move |client, n| {
        let api = write_api.clone();
        async move {
            let body = json!({"data": {"n": n.to_string()}});
            api.patch(
                &format!("cm-{client}"),
                &PatchParams::default(),
                &Patch::Merge(&body),
            )
            .await
            .expect("patch");
        }
    })
    .await;
    let delivered = counter.await.unwrap_or(0);
    println!(
        "watch    {:>10.0} events/s delivered to one watcher",
        delivered as f64 / WINDOW.as_secs_f64()
    );
}
