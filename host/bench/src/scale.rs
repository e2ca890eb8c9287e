//! Scenario 4, scale: N GitLabSecrets (one per namespace) created at once against an
//! operator process, converging from empty; then the operator restarts over the converged
//! cluster and resyncs all N (every primary gets one pass, which changes nothing).

use std::time::Duration;

use tokio::time::Instant;

use super::BenchOptions;
use super::cluster::{BenchCluster, Variant, namespace_names};
use super::process::{OperatorProcess, PASSES, mib};
use super::report::{Cell, Section};

const REQUESTS: &str = "wasm_operator_api_requests_total";

/// What one run measured.
struct Run {
    variant: Variant,
    n: usize,
    ready: Duration,
    peak_rss: f64,
    requests: f64,
    passes: f64,
    resync_rate: f64,
    resync_requests: f64,
    resync_rss: f64,
}

/// One run of `n` GitLabSecrets of `variant`, the operator's compiled plugins kept in
/// `cache` (compiling is not what a run measures).
async fn one(
    options: &BenchOptions,
    cache: &std::path::Path,
    variant: Variant,
    n: usize,
) -> anyhow::Result<Run> {
    let scratch = tempfile::tempdir()?;
    let cluster = BenchCluster::start().await?;
    let kubeconfig = scratch.path().join("kubeconfig");
    cluster.server.write_kubeconfig(&kubeconfig)?;
    let namespaces = namespace_names("scale", n);
    cluster.namespaces(&namespaces).await?;
    // Logs outlive the run, so a failure's "see <log>" can be followed.
    let logs = options.out.join("logs");
    std::fs::create_dir_all(&logs)?;
    let label = if variant == Variant::Full {
        "full"
    } else {
        "light"
    };
    let start = |step: &str| {
        OperatorProcess::start(
            &options.exe,
            &kubeconfig,
            &options.plugins,
            cache,
            &logs.join(format!("scale-{label}-{n}-{step}.log")),
            &[],
        )
    };

    let mut operator = start("converge")?;
    operator
        .wait_ready(Instant::now(), Duration::from_secs(120))
        .await?;
    let per_object = if variant == Variant::Full { 20 } else { 3 };
    let timeout = Duration::from_secs(60 + per_object * n as u64);
    let started = Instant::now();
    cluster.gitlabsecrets(variant, &namespaces).await?;
    let ready = cluster.wait_ready(n, started, timeout).await?;
    // The pass that wrote the last Ready may still be ending.
    let passes = operator
        .wait_passes_counted(Instant::now(), Duration::from_secs(30))
        .await?;
    let memory = operator.memory();
    let requests = operator.metric(REQUESTS).await?;
    operator.stop().await;

    // Restart over the converged cluster: the informers list all N, each gets a pass.
    // Timed from the first pass (caches synced) to the N-th; a Secret's replay may pass a
    // primary twice, so the rate counts every pass in that window.
    let started = Instant::now();
    let mut operator = start("resync")?;
    let timeout = Duration::from_secs(120 + n as u64);
    let (first_at, first) = operator.wait_metric(PASSES, 1.0, started, timeout).await?;
    let (done_at, done) = operator
        .wait_metric(PASSES, n as f64, started, timeout)
        .await?;
    let resync_requests = operator.metric(REQUESTS).await?;
    let resync_rss = operator.memory().map_or(f64::NAN, |m| mib(m.rss));
    operator.stop().await;
    cluster.server.stop();
    let resync = done_at
        .saturating_sub(first_at)
        .max(Duration::from_millis(1));
    Ok(Run {
        variant,
        n,
        ready,
        peak_rss: memory.map_or(f64::NAN, |m| mib(m.peak)),
        requests,
        passes,
        resync_rate: (done - first).max(1.0) / resync.as_secs_f64(),
        resync_requests,
        resync_rss,
    })
}

/// Runs the scenario.
pub async fn run(options: &BenchOptions) -> anyhow::Result<Section> {
    let (light, full) = if options.quick {
        (vec![3], vec![1])
    } else {
        (options.scale.clone(), options.scale_full.clone())
    };
    let cache = options.artifacts();
    let mut runs = Vec::new();
    for (variant, counts) in [(Variant::NoRsa4096, &light), (Variant::Full, &full)] {
        for &n in counts {
            tracing::info!(variant = variant.label(), n, "scale run");
            runs.push(one(options, &cache, variant, n).await?);
        }
    }
    let mut columns = vec!["measure".to_owned()];
    columns.extend(runs.iter().map(|r| {
        let short = if r.variant == Variant::Full {
            "with RSA-4096"
        } else {
            "without RSA-4096"
        };
        format!("N={} {short}", r.n)
    }));
    let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut section = Section::new("scale", "4. Scale: N GitLabSecrets from empty", &columns);
    let row = |f: &dyn Fn(&Run) -> Cell| runs.iter().map(f).collect::<Vec<_>>();
    let secs = |d: Duration| Cell::number(d.as_secs_f64(), "s");
    section.row("time to all Ready", row(&|r| secs(r.ready)));
    section.row(
        "… per GitLabSecrets",
        row(&|r| Cell::number(r.ready.as_secs_f64() * 1e3 / r.n as f64, "ms")),
    );
    section.row(
        "peak RSS of the operator",
        row(&|r| Cell::number(r.peak_rss, "MiB")),
    );
    section.row(
        "API requests by the operator",
        row(&|r| Cell::number(r.requests, "")),
    );
    section.row(
        "… per GitLabSecrets",
        row(&|r| Cell::number(r.requests / r.n as f64, "")),
    );
    section.row("passes to converge", row(&|r| Cell::number(r.passes, "")));
    section.row(
        "steady state: resync passes per second (restart over N converged)",
        row(&|r| Cell::number(r.resync_rate, "/s")),
    );
    section.row(
        "… API requests during the resync",
        row(&|r| Cell::number(r.resync_requests, "")),
    );
    section.row(
        "RSS after the resync",
        row(&|r| Cell::number(r.resync_rss, "MiB")),
    );

    section.note(
        "Each GitLabSecrets is the chart's defaults in a namespace of its own, all created at \
         once (16 requests in flight) after the operator process reported ready; Ready is \
         polled every 100 ms. The operator runs with its defaults (4 passes at once) and no \
         client-side rate limit (--api-qps 0): at the default 50 requests/s, time to Ready is \
         bounded by requests ÷ 50.",
    );
    section.note(
        "Without RSA-4096 each GitLabSecrets still makes an RSA-2048 key (rails) and an \
         RSA-3072 key (SSH host keys); with them, three RSA-4096 keys more. Key generation \
         is CPU-bound on the 2 cores, so time to Ready grows linearly with N and with the key \
         sizes, not with the operator's bookkeeping.",
    );
    growth_note(&runs, &mut section);
    Ok(section)
}

/// States how time, memory and requests grow between the smallest and largest N of a
/// variant.
fn growth_note(runs: &[Run], section: &mut Section) {
    for variant in [Variant::NoRsa4096, Variant::Full] {
        let of: Vec<&Run> = runs.iter().filter(|r| r.variant == variant).collect();
        let (Some(small), Some(large)) =
            (of.iter().min_by_key(|r| r.n), of.iter().max_by_key(|r| r.n))
        else {
            continue;
        };
        if small.n == large.n {
            continue;
        }
        let factor = large.n as f64 / small.n as f64;
        section.note(format!(
            "{}: ×{factor:.0} GitLabSecrets took ×{:.1} the time to Ready, ×{:.1} the API \
             requests and ×{:.2} the peak RSS ({:.0} → {:.0} MiB).",
            variant.label(),
            large.ready.as_secs_f64() / small.ready.as_secs_f64(),
            large.requests / small.requests.max(1.0),
            large.peak_rss / small.peak_rss,
            small.peak_rss,
            large.peak_rss,
        ));
    }
}
