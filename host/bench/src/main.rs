//! The `wasm-operator-bench` binary, also reached as `wasm-operator bench`: runs the
//! benchmark scenarios and writes `report.md` and `report.json`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser;
use wasm_operator_bench::{BenchOptions, Scenario, operator_exe, run};

/// mimalloc, as the `wasm-operator` binary uses (see there), so what is measured is what
/// runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Run the benchmark scenarios and write target/bench/report.{md,json}.
#[derive(Parser)]
#[command(name = "wasm-operator bench", version)]
struct BenchArgs {
    /// Where report.md and report.json go.
    #[arg(long, default_value = "target/bench")]
    out: PathBuf,
    /// Only these scenarios (repeatable; default: all).
    #[arg(long = "scenario", value_enum)]
    scenarios: Vec<Scenario>,
    /// Few samples and small N: checks that the scenarios run; the figures mean little.
    #[arg(long)]
    quick: bool,
    /// The directory holding gitlabsecrets.wasm, secretgen.wasm and keystone.wasm (default: the plugins
    /// this build compiled).
    #[arg(long)]
    plugins: Option<PathBuf>,
    /// GitLabSecrets counts of the scale scenario without the RSA-4096 parts.
    #[arg(long, value_delimiter = ',', default_value = "100,1000")]
    scale: Vec<usize>,
    /// GitLabSecrets counts of the scale scenario with them (the chart's defaults).
    #[arg(long, value_delimiter = ',', default_value = "100")]
    scale_full: Vec<usize>,
    /// Keystone counts of the Keystone scale scenario.
    #[arg(long, value_delimiter = ',', default_value = "5,20")]
    keystone_scale: Vec<usize>,
    /// The `wasm-operator` binary the process scenarios start (default: the one beside
    /// this binary).
    #[arg(long)]
    operator: Option<PathBuf>,
    /// Run the soak instead of the scenarios: operator kills, API faults and server
    /// restarts, then the invariants, written to soak.md (exits 1 on any violation).
    #[arg(long)]
    soak: bool,
    /// How many operator lives the soak ends with kill -9.
    #[arg(long, default_value_t = 100)]
    soak_kills: usize,
    /// The soak restarts the API server after every this many kills.
    #[arg(long, default_value_t = 10)]
    soak_restart_every: usize,
    /// Rounds of two replicas with leader election in the soak (one killed, then the
    /// other).
    #[arg(long, default_value_t = 5)]
    soak_replica_rounds: usize,
    /// Operator lives in the soak that each start with a new Keystone (0: none).
    #[arg(long, default_value_t = 10)]
    soak_keystone_kills: usize,
    /// The soak's seed (default: from the clock; the report names it).
    #[arg(long)]
    soak_seed: Option<u64>,
}

fn main() -> ExitCode {
    let args = BenchArgs::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "warn,wasm_operator_bench=info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let result = tokio::runtime::Runtime::new()
        .context("cannot start the async runtime")
        .and_then(|tokio| tokio.block_on(bench(args)));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wasm-operator bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn bench(args: BenchArgs) -> anyhow::Result<()> {
    let exe = match args.operator.clone() {
        Some(exe) => exe,
        None => operator_exe()?,
    };
    if args.soak {
        return soak(exe, args).await;
    }
    let mut options = BenchOptions::new(exe);
    options.out = args.out;
    if !args.scenarios.is_empty() {
        options.scenarios = args.scenarios;
    }
    options.quick = args.quick;
    if let Some(plugins) = args.plugins {
        options.plugins = plugins;
    }
    for file in ["gitlabsecrets.wasm", "secretgen.wasm", "keystone.wasm"] {
        let path = options.plugins.join(file);
        anyhow::ensure!(path.is_file(), "bench needs {}: not a file", path.display());
    }
    options.scale = args.scale;
    options.scale_full = args.scale_full;
    options.keystone_scale = args.keystone_scale;
    let report = run(&options).await?;
    println!(
        "wrote {0}/report.md and {0}/report.json ({1} scenarios)",
        options.out.display(),
        report.sections.len()
    );
    Ok(())
}

async fn soak(exe: PathBuf, args: BenchArgs) -> anyhow::Result<()> {
    let seed = args.soak_seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let options = wasm_operator_bench::soak::SoakOptions {
        plugins: args
            .plugins
            .unwrap_or_else(wasm_operator::cli::shipped_plugin_dir),
        out: args.out,
        exe,
        kills: args.soak_kills,
        restart_every: args.soak_restart_every,
        replica_rounds: args.soak_replica_rounds,
        keystone_kills: args.soak_keystone_kills,
        seed,
    };
    let report = wasm_operator_bench::soak::soak(&options).await?;
    println!(
        "wrote {}/soak.md: {} kills, {} restarts, {} invariant violations",
        options.out.display(),
        report.kills,
        report.restarts,
        report.violations.len()
    );
    anyhow::ensure!(
        report.violations.is_empty(),
        "{} invariant violations: {}",
        report.violations.len(),
        report.violations.join("; ")
    );
    Ok(())
}
