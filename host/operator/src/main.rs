//! The `wasm-operator` binary.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use wasm_operator::operator::plugin_config::PluginsToml;
use wasm_operator::runtime::{Runtime, RuntimeConfig};
use wasm_operator::{cli, wasi_run};

#[derive(Parser)]
#[command(
    name = "wasm-operator",
    version,
    about = "A Kubernetes operator whose reconcilers run as WebAssembly components"
)]
struct Args {
    /// Where precompiled plugin artifacts are cached (default: $XDG_CACHE_HOME/wasm-operator).
    #[arg(long, global = true, env = "WASM_OPERATOR_CACHE_DIR")]
    cache_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The main job: the embedded API server, the shipped plugins, and the GitLabSecrets the
    /// chart renders by default, reconciled and summarised.
    Demo {
        /// The plugin directory (default: the plugins this build compiled).
        #[arg(long)]
        plugins: Option<PathBuf>,
        /// Leave the API server running and print its kubeconfig (until Ctrl-C).
        #[arg(long)]
        keep: bool,
    },
    /// Print the CRDs of the shipped reconcilers.
    Crds,
    /// Run the embedded Kubernetes API server and write a kubeconfig for it.
    DevCluster {
        /// The port on 127.0.0.1 (0 picks a free one).
        #[arg(long, default_value_t = 6443)]
        port: u16,
        /// Keep objects here (write-ahead log); without it everything is in memory.
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// Where to write the kubeconfig.
        #[arg(long, default_value = "wasm-operator.kubeconfig")]
        kubeconfig: PathBuf,
    },
    /// Run the plugins of a directory as an operator against a cluster (until SIGTERM).
    Run(cli::run::RunArgs),
    /// Print the ClusterRole (or Role with --namespace) the plugins of a directory need.
    Rbac {
        /// The directory of `.wasm` plugins.
        #[arg(long)]
        plugins: PathBuf,
        /// A Role in this namespace instead of a ClusterRole.
        #[arg(long)]
        namespace: Option<String>,
        /// Include what leader election needs (Leases).
        #[arg(long)]
        leader_elect: bool,
    },
    /// Inspect plugin files.
    Plugin {
        #[command(subcommand)]
        command: PluginCommand,
    },
    /// Run the benchmark scenarios and write target/bench/report.{md,json} (a build with
    /// the `bench` feature: `cargo run --release --features bench -- bench`).
    Bench(BenchArgs),
    /// Run a wasi:cli/run command component (the wasm32-wasip2 test runner).
    WasiRun {
        /// The component.
        wasm: PathBuf,
        /// Its arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

/// The options of `bench`.
#[derive(clap::Args)]
struct BenchArgs {
    /// Where report.md and report.json go.
    #[arg(long, default_value = "target/bench")]
    out: PathBuf,
    /// Only these scenarios (repeatable; default: all).
    #[cfg(feature = "bench")]
    #[arg(long = "scenario", value_enum)]
    scenarios: Vec<wasm_operator::bench::Scenario>,
    /// Few samples and small N: checks that the scenarios run; the figures mean little.
    #[arg(long)]
    quick: bool,
    /// The directory holding gitlabsecrets.wasm and secretgen.wasm (default: the plugins
    /// this build compiled).
    #[arg(long)]
    plugins: Option<PathBuf>,
    /// GitLabSecrets counts of the scale scenario without the RSA-4096 parts.
    #[arg(long, value_delimiter = ',', default_value = "100,1000")]
    scale: Vec<usize>,
    /// GitLabSecrets counts of the scale scenario with them (the chart's defaults).
    #[arg(long, value_delimiter = ',', default_value = "100")]
    scale_full: Vec<usize>,
}

#[derive(Subcommand)]
enum PluginCommand {
    /// Print a plugin's describe() and sha256; exit 2 when it is not a loadable plugin.
    Inspect { file: PathBuf },
    /// Run every load-time check (with the plugins.toml of its directory), without a
    /// cluster; exit 2 when the file would be refused.
    Check { file: PathBuf },
}

fn main() -> ExitCode {
    let args = Args::parse();
    // Plugins' own log lines are shown, except while benchmarking thousands of passes.
    let default_filter = match args.command {
        Command::Bench(_) => "warn,wasm_operator::bench=info",
        _ => "warn,plugin=info",
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| default_filter.into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let tokio = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("wasm-operator: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match tokio.block_on(run(args)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("wasm-operator: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut config = RuntimeConfig::default();
    if args.cache_dir.is_some() {
        config.cache_dir = args.cache_dir;
    }
    let plugin_dir = match &args.command {
        Command::Run(run) => Some(run.plugins.clone()),
        Command::Plugin {
            command: PluginCommand::Check { file },
        } => file.parent().map(PathBuf::from),
        _ => None,
    };
    if let Some(dir) = plugin_dir {
        // Fuel is counted engine-wide, so it is decided before the engine is built.
        config.fuel = PluginsToml::read(&dir).is_ok_and(|c| c.uses_fuel());
    }
    let runtime = Runtime::new(config)?;
    match args.command {
        Command::Demo { plugins, keep } => {
            let options = cli::demo::DemoOptions {
                plugins: plugins.unwrap_or_else(cli::shipped_plugin_dir),
                keep,
            };
            cli::demo::run(runtime, &options).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Crds => {
            print!("{}", cli::demo::GITLABSECRETS_CRD);
            Ok(ExitCode::SUCCESS)
        }
        Command::DevCluster {
            port,
            data_dir,
            kubeconfig,
        } => {
            let config = wasm_operator_apiserver::ServerConfig {
                port,
                data_dir,
                ..Default::default()
            };
            let server = wasm_operator_apiserver::ApiServer::start(config).await?;
            server
                .write_kubeconfig(&kubeconfig)
                .with_context(|| format!("cannot write {}", kubeconfig.display()))?;
            // A closed stdout must not stop the server: these lines are informational.
            let mut out = std::io::stdout();
            let _ = writeln!(out, "serving the Kubernetes API on {}", server.url());
            let _ = writeln!(
                out,
                "kubeconfig: {0}  (kubectl --kubeconfig {0} get ns)",
                kubeconfig.display()
            );
            tokio::signal::ctrl_c()
                .await
                .context("waiting for Ctrl-C")?;
            server.stop();
            Ok(ExitCode::SUCCESS)
        }
        Command::Run(run) => {
            cli::run::run(runtime, &run).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Rbac {
            plugins,
            namespace,
            leader_elect,
        } => {
            let yaml =
                cli::run::rbac_yaml(&runtime, &plugins, namespace.as_deref(), leader_elect).await?;
            print!("{yaml}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Plugin {
            command: PluginCommand::Inspect { file },
        } => match runtime.load(&file, None).await {
            Ok(plugin) => {
                print!("{}", cli::inspect::render(&plugin));
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                eprintln!("{e}");
                Ok(ExitCode::from(2))
            }
        },
        Command::Plugin {
            command: PluginCommand::Check { file },
        } => {
            let (report, ok) = cli::check::run(&runtime, &file).await;
            print!("{report}");
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            })
        }
        Command::Bench(args) => bench(args).await,
        Command::WasiRun { wasm, args } => {
            let code = wasi_run::run(&runtime, &wasm, &args).await?;
            Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
        }
    }
}

#[cfg(feature = "bench")]
async fn bench(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe().context("the path of this binary")?;
    let mut options = wasm_operator::bench::BenchOptions::new(exe);
    options.out = args.out;
    if !args.scenarios.is_empty() {
        options.scenarios = args.scenarios;
    }
    options.quick = args.quick;
    if let Some(plugins) = args.plugins {
        options.plugins = plugins;
    }
    for file in ["gitlabsecrets.wasm", "secretgen.wasm"] {
        let path = options.plugins.join(file);
        anyhow::ensure!(path.is_file(), "bench needs {}: not a file", path.display());
    }
    options.scale = args.scale;
    options.scale_full = args.scale_full;
    let report = wasm_operator::bench::run(&options).await?;
    println!(
        "wrote {0}/report.md and {0}/report.json ({1} scenarios)",
        options.out.display(),
        report.sections.len()
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(feature = "bench"))]
async fn bench(_args: BenchArgs) -> anyhow::Result<ExitCode> {
    eprintln!(
        "wasm-operator: this build has no benchmarks; run `cargo run --release --features bench -- bench` (or `just bench`)"
    );
    Ok(ExitCode::from(2))
}
