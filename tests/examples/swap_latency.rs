//! Swap latency: from a new plugin file written into the plugin directory to the new
//! version serving (its `plugin_info` metric), through the real operator polling its
//! directory, against the embedded API server.
//!
//! ```sh
//! cargo run -p wasm-operator-e2e --example swap_latency [ROUNDS]
//! ```
//!
//! Each round swaps fixture 0.1.0 ↔ 0.2.0 with an empty artifact cache (the new file is
//! compiled, as a never-seen upgrade is) and then once more with the artifacts cached.
//! Target: < 1 s.

use std::time::{Duration, Instant};

use wasm_operator::operator::{Operator, OperatorConfig};
use wasm_operator::{Runtime, RuntimeConfig};
use wasm_operator_e2e::cluster_with;

fn stats(label: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{label:<32} min {:>7.1} ms   median {:>7.1} ms   max {:>7.1} ms   ({} swaps)",
        ms(samples[0]),
        ms(samples[samples.len() / 2]),
        ms(samples[samples.len() - 1]),
        samples.len()
    );
}

#[tokio::main]
async fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    let test_plugins = wasm_operator::cli::test_plugin_dir();
    let versions = [
        (
            "0.1.0",
            std::fs::read(test_plugins.join("fixture-reconciler.wasm")).expect("fixture"),
        ),
        (
            "0.2.0",
            std::fs::read(test_plugins.join("fixture-next.wasm")).expect("fixture-next"),
        ),
    ];
    let cluster = cluster_with(&[]).await;
    let (mut cold, mut warm) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let cache = tempfile::tempdir().expect("cache");
        let plugins = tempfile::tempdir().expect("plugins");
        std::fs::write(plugins.path().join("fixture.wasm"), &versions[0].1).expect("write");
        let runtime = Runtime::new(RuntimeConfig {
            cache_dir: Some(cache.path().to_owned()),
            ..RuntimeConfig::default()
        })
        .expect("runtime");
        let mut config = OperatorConfig::new(plugins.path());
        config.watch_interval = Some(Duration::from_millis(100));
        let operator = Operator::start(runtime, cluster.server.client().expect("client"), config)
            .await
            .expect("operator");
        for (i, samples) in [(1, &mut cold), (0, &mut warm)] {
            let (version, bytes) = &versions[i];
            let aside = plugins.path().join(".fixture.tmp");
            let written = Instant::now();
            std::fs::write(&aside, bytes).expect("write");
            std::fs::rename(&aside, plugins.path().join("fixture.wasm")).expect("rename");
            let needle = format!(r#"version="{version}",sha256="#);
            while !operator.metrics().render().contains(&needle) {
                tokio::time::sleep(Duration::from_millis(2)).await;
                assert!(
                    written.elapsed() < Duration::from_secs(60),
                    "round {round}: no swap"
                );
            }
            samples.push(written.elapsed());
            // The warm swap back needs 0.1.0's artifact, compiled at start.
        }
        operator.shutdown().await;
    }
    println!("swap latency, file written -> new version serving (poll every 100 ms)");
    stats("new file (compiled)", cold);
    stats("known file (precompiled)", warm);
}
