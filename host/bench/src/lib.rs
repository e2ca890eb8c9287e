//! `wasm-operator bench` (this crate's `wasm-operator-bench` binary): what wasm costs, how
//! fast the operator converges, how it scales. Nothing depends on this crate; it links the
//! shipped reconciler, the planner and the test fixture natively (`wasm-operator-native`) to compare
//! each with its `.wasm` build, and starts `wasm-operator` processes for the end-to-end
//! scenarios.
//!
//! Every scenario runs against the embedded API server on this machine and ends as one
//! [`Section`] of the report, written to `target/bench/report.{md,json}`:
//!
//! 1. [`wasm_native`]: the GitLabSecrets reconciler as `.wasm` and natively, same host,
//!    same cache, same server: pass latency and passes per second, cold and converged,
//!    and the process's CPU time per converged pass.
//! 2. [`boundary`]: instantiation, passes on 1/10/100 KB objects and one host call round
//!    trip (on an in-memory cluster), compile vs precompiled-artifact load.
//! 3. [`api`]: requests and stored changes per converged pass of each shipped reconciler,
//!    through the real operator.
//! 4. [`scale`]: N GitLabSecrets converging from empty in an operator process: time to
//!    Ready, peak RSS, requests; the passes per second of a resync after convergence.
//! 5. [`plugin_ops`]: hot-swap latency under load, start → first pass with and without the
//!    precompiled cache, idle RSS.
//! 6. [`secretgen`]: the chart-default plan and each key type, native vs in-guest.
//! 7. [`keystone`]: the Keystone reconciler as `.wasm` and natively over converged
//!    Keystones: pass latency, and the writes and server reads of a converged pass.
//! 8. [`keystone_scale`]: N Keystones converging from empty to Ready in an operator
//!    process: time to Ready, peak RSS, requests and passes.
//! 9. [`authorizer`]: the embedded API server's server-side applies per second as the admin
//!    (no RBAC rule read) and as a ServiceAccount among many roles and bindings.
//! 10. [`cel`]: the embedded API server's server-side applies per second of Keystones under
//!     the shipped CRD with and without its CEL validation rules.
//!
//! Absolute times drift on shared machines; the report gives ratios where two runs are
//! compared in one process.

mod api;
mod authorizer;
mod boundary;
mod cel;
pub mod cluster;
mod keystone;
mod keystone_scale;
mod memory;
mod passes;
mod plugin_ops;
mod process;
pub mod report;
mod scale;
mod secretgen;
pub mod soak;
mod wasm_native;

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;

pub use report::{Cell, Report, Section, Stats};

/// A benchmark scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scenario {
    /// 1. GitLabSecrets as wasm vs native.
    WasmNative,
    /// 2. Boundary costs.
    Boundary,
    /// 3. API requests and writes per converged pass.
    Api,
    /// 4. N GitLabSecrets from empty.
    Scale,
    /// 5. Hot swap, start-up, idle RSS.
    PluginOps,
    /// 6. secretgen plans and key types.
    Secretgen,
    /// 7. Keystone as wasm vs native, converged.
    Keystone,
    /// 8. N Keystones from empty.
    KeystoneScale,
    /// 9. The API server's authorizer on apply throughput.
    Authorizer,
    /// 10. The API server's CEL validation rules on apply throughput.
    Cel,
}

impl Scenario {
    /// Every scenario, in report order.
    pub const ALL: [Scenario; 10] = [
        Self::WasmNative,
        Self::Boundary,
        Self::Api,
        Self::Scale,
        Self::PluginOps,
        Self::Secretgen,
        Self::Keystone,
        Self::KeystoneScale,
        Self::Authorizer,
        Self::Cel,
    ];
}

/// What a run measures and where it writes.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Where `report.md` and `report.json` go.
    pub out: PathBuf,
    /// The scenarios to run, in report order.
    pub scenarios: Vec<Scenario>,
    /// Few samples and small N: checks that every scenario runs, measures little.
    pub quick: bool,
    /// The GitLabSecrets counts of the scale scenario without the RSA-4096 parts.
    pub scale: Vec<usize>,
    /// The GitLabSecrets counts of the scale scenario with them (the chart's defaults).
    pub scale_full: Vec<usize>,
    /// The Keystone counts of the Keystone scale scenario.
    pub keystone_scale: Vec<usize>,
    /// The shipped plugins (gitlabsecrets, secretgen, keystone).
    pub plugins: PathBuf,
    /// The test-only plugins (the fixture).
    pub test_plugins: PathBuf,
    /// The `wasm-operator` binary the process scenarios start (see [`operator_exe`]).
    pub exe: PathBuf,
}

impl BenchOptions {
    /// The defaults of `wasm-operator bench`: every scenario, written to `target/bench`.
    pub fn new(exe: PathBuf) -> Self {
        Self {
            out: PathBuf::from("target/bench"),
            scenarios: Scenario::ALL.to_vec(),
            quick: false,
            scale: vec![100, 1000],
            scale_full: vec![100],
            keystone_scale: vec![5, 20],
            plugins: wasm_operator::cli::shipped_plugin_dir(),
            test_plugins: wasm_operator::cli::test_plugin_dir(),
            exe,
        }
    }

    /// The artifact cache of the scenarios that do not measure compiling (`artifact-cache`
    /// under [`out`](Self::out)): each plugin is compiled once per output directory, not
    /// once per scenario or run.
    pub fn artifacts(&self) -> PathBuf {
        self.out.join("artifact-cache")
    }

    /// A runtime whose artifact cache is [`artifacts`](Self::artifacts), sealed with the
    /// key the operator processes of the run use too (written when missing).
    pub fn artifact_runtime(&self) -> anyhow::Result<wasm_operator_runtime::Runtime> {
        let key = self.out.join("artifact-cache.key");
        std::fs::create_dir_all(&self.out)?;
        wasm_operator_runtime::write_cache_key(&key)?;
        Ok(wasm_operator_runtime::Runtime::new(
            wasm_operator_runtime::RuntimeConfig {
                cache_dir: Some(self.artifacts()),
                cache_key_file: Some(key),
                ..wasm_operator_runtime::RuntimeConfig::default()
            },
        )?)
    }

    /// `full` samples, or a tenth of them (at least 2) in a quick run.
    pub fn samples(&self, full: usize) -> usize {
        if self.quick { (full / 10).max(2) } else { full }
    }
}

/// The `wasm-operator` binary beside this executable (cargo puts every binary of a build
/// in one directory; a test or bench executable sits one level down, in `deps/`).
pub fn operator_exe() -> anyhow::Result<PathBuf> {
    use anyhow::Context as _;
    let exe = std::env::current_exe().context("the path of this executable")?;
    let name = format!("wasm-operator{}", std::env::consts::EXE_SUFFIX);
    exe.ancestors()
        .skip(1)
        .take(2)
        .map(|dir| dir.join(&name))
        .find(|candidate| candidate.is_file())
        .with_context(|| {
            format!(
                "no {name} beside {}: build it with `cargo build --release -p wasm-operator` (or pass --operator)",
                exe.display()
            )
        })
}

/// Times `run` `n` times after one untimed warm-up.
pub async fn sample<F, Fut, T>(n: usize, mut run: F) -> anyhow::Result<Vec<Duration>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = anyhow::Result<T>>,
{
    run().await?;
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        run().await?;
        times.push(started.elapsed());
    }
    Ok(times)
}

/// `rounds` alternating rounds of `first` and `second` (each returns a rate for its round),
/// written to `section` as one row: both medians and second ÷ first.
async fn alternating_rates<A, FA, B, FB>(
    section: &mut Section,
    row: String,
    rounds: usize,
    mut first: A,
    mut second: B,
) -> anyhow::Result<()>
where
    A: FnMut(usize) -> FA,
    FA: Future<Output = anyhow::Result<f64>>,
    B: FnMut(usize) -> FB,
    FB: Future<Output = anyhow::Result<f64>>,
{
    let (mut firsts, mut seconds) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        firsts.push(first(round).await?);
        seconds.push(second(round).await?);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let (a, b) = (median(&mut firsts), median(&mut seconds));
    section.row(
        row,
        vec![
            Cell::number(a, "/s"),
            Cell::number(b, "/s"),
            Cell::ratio(b, a),
        ],
    );
    Ok(())
}

fn environment(options: &BenchOptions) -> serde_json::Value {
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    json!({
        "wasm-operator": env!("CARGO_PKG_VERSION"),
        "profile": if cfg!(debug_assertions) { "debug (figures are not representative)" } else { "release" },
        "cores": cores,
        "os": format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        "quick": options.quick,
        "started": std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    })
}

/// Runs the chosen scenarios and writes the report; prints each section as it finishes.
pub async fn run(options: &BenchOptions) -> anyhow::Result<Report> {
    let mut report = Report {
        environment: environment(options),
        sections: Vec::new(),
    };
    for scenario in &options.scenarios {
        let started = Instant::now();
        tracing::info!(?scenario, "benchmark scenario starts");
        let sections = match scenario {
            Scenario::WasmNative => vec![wasm_native::run(options).await?],
            Scenario::Boundary => vec![boundary::run(options).await?],
            Scenario::Api => vec![api::run(options).await?],
            Scenario::Scale => vec![scale::run(options).await?],
            Scenario::PluginOps => vec![plugin_ops::run(options).await?],
            Scenario::Secretgen => vec![secretgen::run(options).await?],
            Scenario::Keystone => vec![keystone::run(options).await?],
            Scenario::KeystoneScale => vec![keystone_scale::run(options).await?],
            Scenario::Authorizer => vec![authorizer::run(options).await?],
            Scenario::Cel => vec![cel::run(options).await?],
        };
        for mut section in sections {
            section.note(format!(
                "Scenario time: {:.1} s.",
                started.elapsed().as_secs_f64()
            ));
            let mut text = String::new();
            section.markdown_into(&mut text);
            println!("{text}");
            report.sections.push(section);
        }
        report.write(&options.out)?;
    }
    Ok(report)
}
