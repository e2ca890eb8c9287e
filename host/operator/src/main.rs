//! The `wasm-operator` binary.

#[cfg(feature = "demo")]
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use wasm_operator::cli;
use wasm_operator::operator::plugin_config::PluginsToml;
use wasm_operator_runtime::{Runtime, RuntimeConfig, wasi_run};

/// mimalloc: the host's and the embedded API server's many small, short-lived allocations
/// (JSON values, requests) made glibc's malloc trim and regrow its heap on every request;
/// with mimalloc the API server applies 40-70% more objects a second (bench scenarios 9, 10).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    /// The key cached artifacts are sealed with: a file of at least 32 bytes outside the
    /// cache directory (default: a random key per process, so nothing cached by an earlier
    /// process is trusted).
    #[arg(long, global = true, env = "WASM_OPERATOR_CACHE_KEY_FILE")]
    cache_key_file: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The main job: the embedded API server, the shipped plugins, and the GitLabSecrets the
    /// chart renders by default, reconciled and summarised.
    #[cfg(feature = "demo")]
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
    /// Write a new random artifact cache key (mode 0400) for `--cache-key-file`; an
    /// existing file is kept, never overwritten.
    CacheKey {
        /// The key file to create.
        file: PathBuf,
    },
    /// Run the embedded Kubernetes API server and write a kubeconfig for it.
    #[cfg(feature = "demo")]
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
        /// Run the cluster's actors: every one with `--actors`, or those named
        /// (`--actors workloads,cert-manager`; names: workloads, cert-manager, mariadb,
        /// external-secrets, gateway, keystone, openbao).
        #[arg(long, num_args = 0..=1, value_delimiter = ',', default_missing_value = "all")]
        actors: Option<Vec<String>>,
    },
    /// Run a real Kubernetes control plane on loopback (etcd, kube-apiserver,
    /// kube-controller-manager, kube-scheduler, KWOK with 3 Nodes) until Ctrl-C or SIGTERM;
    /// its binaries come from `controlplane/build.sh`.
    #[cfg(feature = "demo")]
    ControlPlane {
        /// The binaries' directory (default: $WASM_OPERATOR_CONTROLPLANE_BIN, else this
        /// workspace's target/controlplane/bin).
        #[arg(long)]
        bin_dir: Option<PathBuf>,
        /// Keep the state, certificates and logs here (default: a temporary directory).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// kube-apiserver's port on 127.0.0.1 (0 picks a free one).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Where to write the admin kubeconfig.
        #[arg(long, default_value = "controlplane.kubeconfig")]
        kubeconfig: PathBuf,
    },
    /// Run the plugins of a directory as an operator against a cluster (until SIGTERM).
    Run(Box<cli::run::RunArgs>),
    /// Print the ClusterRole (or Role with --namespace) the plugins of a directory need.
    Rbac {
        /// The directory of `.wasm` plugins.
        #[arg(long)]
        plugins: PathBuf,
        /// Their `plugins.toml`, when it is not the directory's own (`run --plugins-config`).
        #[arg(long)]
        plugins_config: Option<PathBuf>,
        /// A Role in this namespace instead of a ClusterRole.
        #[arg(long)]
        namespace: Option<String>,
        /// Include what leader election needs: a Role on its Lease.
        #[arg(long)]
        leader_elect: bool,
        /// The Lease's namespace (default: --namespace, $POD_NAMESPACE, then `default`).
        #[arg(long)]
        lease_namespace: Option<String>,
        /// The Lease's name.
        #[arg(long, default_value = "wasm-operator-leader")]
        lease_name: String,
        /// Include what the webhook server's managed certificate needs (`run
        /// --webhook-secret NAMESPACE/NAME`): a Role on that Secret.
        #[arg(long)]
        webhook_secret: Option<String>,
        /// The namespace of target cluster registrations (`run --clusters-namespace`).
        #[arg(long, default_value = wasm_operator::targets::DEFAULT_CLUSTERS_NAMESPACE)]
        clusters_namespace: String,
        /// The operator runs with `--cluster-dns` (in a cluster): Service names need no
        /// reading of Services and EndpointSlices.
        #[arg(long, env = "WASM_OPERATOR_CLUSTER_DNS")]
        cluster_dns: bool,
        /// `NAMESPACE/NAME` of the ServiceAccount the operator runs as: each role is
        /// followed by a binding to it, so the output applies as is.
        #[arg(long)]
        service_account: Option<String>,
    },
    /// Print the Mutating/ValidatingWebhookConfigurations the plugins of a directory need
    /// (their admitted kinds and operations), pointing at a Service or a URL.
    Webhooks {
        /// The directory of `.wasm` plugins.
        #[arg(long)]
        plugins: PathBuf,
        /// Their `plugins.toml`, when it is not the directory's own (`run --plugins-config`).
        #[arg(long)]
        plugins_config: Option<PathBuf>,
        /// `NAMESPACE/NAME` of the Service in front of `--webhook-addr`.
        #[arg(long, conflicts_with = "url", required_unless_present = "url")]
        service: Option<String>,
        /// The Service's port.
        #[arg(long, default_value_t = 443)]
        port: u16,
        /// A base URL (`https://host:port`) instead of a Service.
        #[arg(long)]
        url: Option<String>,
        /// A PEM file with the CA the API server verifies the webhooks with (`caBundle`).
        #[arg(long)]
        ca_bundle: Option<PathBuf>,
        /// The configurations' name.
        #[arg(long, default_value = "wasm-operator")]
        name: String,
    },
    /// Inspect plugin files.
    Plugin {
        #[command(subcommand)]
        command: PluginCommand,
    },
    /// Run the benchmark scenarios: runs `wasm-operator-bench` (beside this binary) with the
    /// same arguments (`wasm-operator bench --help` lists them).
    #[command(disable_help_flag = true)]
    Bench {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Run a wasi:cli/run command component (the wasm32-wasip2 test runner).
    WasiRun {
        /// The component.
        wasm: PathBuf,
        /// Its arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

#[derive(Subcommand)]
enum PluginCommand {
    /// Print a plugin's describe() and sha256; exit 2 when it is not a loadable plugin.
    Inspect { file: PathBuf },
    /// Run every load-time check (with the plugins.toml of its directory), without a
    /// cluster; exit 2 when the file would be refused.
    Check { file: PathBuf },
    /// Publish a plugin as a Wasm OCI artifact (`oci://REGISTRY/REPO:TAG`); prints the
    /// reference pinned to the manifest's digest, for `plugins.toml`'s `source`.
    Push {
        /// The plugin (a WebAssembly component).
        file: PathBuf,
        /// Where to push it.
        reference: wasm_operator::oci::OciRef,
        #[command(flatten)]
        registry: wasm_operator::oci::RegistryArgs,
    },
    /// Run a plugin through scenarios (objects to start from, steps, and the objects,
    /// conditions and events expected after each) on an embedded API server; exit 1 when
    /// one fails, 2 when one cannot run.
    #[cfg(feature = "demo")]
    Test {
        /// The plugin.
        file: PathBuf,
        /// Scenario directories (given.yaml, expect.yaml, absent.yaml, steps/, scenario.yaml).
        #[arg(required = true)]
        scenarios: Vec<PathBuf>,
    },
    /// Write a reconciler crate NAME (a ConfigMap copier, or with --kind a reconciler of a
    /// custom resource of its own) with a test and a scenario, that builds, tests natively
    /// and under wasmtime, and loads as it is.
    New {
        /// The plugin's name: lowercase letters, digits and '-'.
        name: String,
        /// What it reconciles: `ConfigMap`, or `GROUP/VERSION/KIND` for a custom resource
        /// (types, a CRD generated from them, a Ready condition), e.g. `example.com/v1/Widget`.
        #[arg(long, default_value = "ConfigMap")]
        kind: cli::scaffold::Kind,
        /// Where to create the crate's directory.
        #[arg(long, default_value = ".")]
        dir: PathBuf,
        /// The SDK to depend on (default: the checkout this binary was built from).
        #[arg(long)]
        sdk: Option<PathBuf>,
    },
}

/// Runs each scenario on its own API server: exit 0 when all pass, 1 when one fails, 2
/// when one cannot run.
#[cfg(feature = "demo")]
async fn plugin_test(
    runtime: &Runtime,
    file: &std::path::Path,
    scenarios: &[PathBuf],
) -> anyhow::Result<ExitCode> {
    let mut code = ExitCode::SUCCESS;
    for dir in scenarios {
        let mut report = String::new();
        let verdict = cli::scenario::run(runtime, file, dir, &mut report).await;
        print!("{report}");
        match verdict {
            Ok(cli::scenario::Verdict::Passed) => {}
            Ok(cli::scenario::Verdict::Failed) => {
                if code == ExitCode::SUCCESS {
                    code = ExitCode::FAILURE;
                }
            }
            Err(error) => {
                println!("cannot run {}: {error:#}", dir.display());
                code = ExitCode::from(2);
            }
        }
    }
    Ok(code)
}

fn main() -> ExitCode {
    let args = Args::parse();
    // Plugins' own log lines are shown, except while benchmarking thousands of passes.
    let default_filter = match args.command {
        Command::Bench { .. } => "warn",
        // Its readiness probes expect refused connections and 500s while components start;
        // what does not start is reported as the command's error.
        #[cfg(feature = "demo")]
        Command::ControlPlane { .. } => "warn,kube_client=off",
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
    // Commands that load no plugin open no artifact cache.
    match &args.command {
        Command::Crds => {
            print!("{}", cli::GITLABSECRETS_CRD);
            return Ok(ExitCode::SUCCESS);
        }
        Command::Plugin {
            command:
                PluginCommand::Push {
                    file,
                    reference,
                    registry,
                },
        } => {
            let registry = wasm_operator::oci::Registry::new(registry)?;
            let pinned = wasm_operator::oci::push(&registry, file, reference).await?;
            println!("{pinned}");
            return Ok(ExitCode::SUCCESS);
        }
        Command::CacheKey { file } => {
            if !wasm_operator_runtime::write_cache_key(file)? {
                eprintln!("{}: a key is already there; kept", file.display());
            }
            return Ok(ExitCode::SUCCESS);
        }
        Command::Plugin {
            command:
                PluginCommand::New {
                    name,
                    kind,
                    dir,
                    sdk,
                },
        } => {
            let sdk = sdk.clone().unwrap_or_else(cli::scaffold::default_sdk);
            let runner = std::env::current_exe().context("the path of this executable")?;
            let created = cli::scaffold::new_plugin(name, kind, dir, &sdk, &runner)?;
            println!("created {}", created.display());
            println!("  cargo build --release --target wasm32-wasip2   # the plugin");
            println!("  cargo test                                     # natively");
            println!("  cargo test --target wasm32-wasip2              # under wasmtime");
            println!(
                "  wasm-operator plugin test target/wasm32-wasip2/release/{}.wasm scenarios/*",
                name.replace('-', "_")
            );
            return Ok(ExitCode::SUCCESS);
        }
        _ => {}
    }
    let mut config = RuntimeConfig::default();
    if args.cache_dir.is_some() {
        config.cache_dir = args.cache_dir;
    }
    config.cache_key_file = args.cache_key_file;
    let plugin_dir = match &args.command {
        Command::Run(run) => Some(run.plugins.clone()),
        Command::Rbac { plugins, .. } | Command::Webhooks { plugins, .. } => Some(plugins.clone()),
        #[cfg(feature = "demo")]
        Command::Demo { plugins, .. } => {
            Some(plugins.clone().unwrap_or_else(cli::shipped_plugin_dir))
        }
        Command::Plugin {
            command: PluginCommand::Check { file } | PluginCommand::Inspect { file },
        } => file.parent().map(PathBuf::from),
        #[cfg(feature = "demo")]
        Command::Plugin {
            command: PluginCommand::Test { file, scenarios },
        } => scenarios
            .iter()
            .find(|s| s.join("plugins.toml").is_file())
            .cloned()
            .or_else(|| file.parent().map(PathBuf::from)),
        _ => None,
    };
    let config_file = match &args.command {
        Command::Run(run) => run.plugins_config.clone(),
        Command::Rbac { plugins_config, .. } | Command::Webhooks { plugins_config, .. } => {
            plugins_config.clone()
        }
        _ => None,
    }
    .or_else(|| {
        plugin_dir
            .as_deref()
            .map(wasm_operator::operator::loader::config_file)
    });
    if let Some(file) = config_file {
        // Fuel is counted engine-wide, so it is decided before the engine is built.
        config.fuel = PluginsToml::read_file(&file).is_ok_and(|c| c.uses_fuel());
    }
    let runtime = Runtime::new(config)?;
    match args.command {
        #[cfg(feature = "demo")]
        Command::Demo { plugins, keep } => {
            let options = cli::demo::DemoOptions {
                plugins: plugins.unwrap_or_else(cli::shipped_plugin_dir),
                keep,
            };
            cli::demo::run(runtime, &options).await?;
            Ok(ExitCode::SUCCESS)
        }
        // Answered before the runtime started.
        // Handled above: they load no plugin.
        Command::Crds
        | Command::CacheKey { .. }
        | Command::Plugin {
            command: PluginCommand::New { .. } | PluginCommand::Push { .. },
        } => Ok(ExitCode::SUCCESS),
        #[cfg(feature = "demo")]
        Command::DevCluster {
            port,
            data_dir,
            kubeconfig,
            actors,
        } => {
            let config = wasm_operator_apiserver::ServerConfig {
                port,
                data_dir,
                actors: cli::actors(actors.as_deref())?,
                ..Default::default()
            };
            let server = wasm_operator_apiserver::ApiServer::start(config).await?;
            server
                .write_kubeconfig(&kubeconfig)
                .with_context(|| format!("cannot write {}", kubeconfig.display()))?;
            // A closed stdout must not stop the server: these lines are informational.
            let mut out = std::io::stdout();
            let _ = writeln!(out, "serving the Kubernetes API on {}", server.url());
            let running = server.actors();
            let _ = if running.is_empty() {
                writeln!(out, "actors: none (--actors runs them)")
            } else {
                let names: Vec<&str> = running.iter().map(|a| a.name()).collect();
                writeln!(out, "actors: {}", names.join(", "))
            };
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
        #[cfg(feature = "demo")]
        Command::ControlPlane {
            bin_dir,
            dir,
            port,
            kubeconfig,
        } => {
            let options = cli::control_plane::ControlPlaneOptions {
                bin_dir,
                dir,
                port,
                kubeconfig,
            };
            cli::control_plane::run(&options).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Run(run) => {
            cli::run::run(runtime, &run).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Rbac {
            plugins,
            plugins_config,
            namespace,
            leader_elect,
            lease_namespace,
            lease_name,
            webhook_secret,
            clusters_namespace,
            cluster_dns,
            service_account,
        } => {
            let lease_namespace = lease_namespace
                .or_else(|| namespace.clone())
                .or_else(|| std::env::var("POD_NAMESPACE").ok())
                .unwrap_or_else(|| "default".into());
            let lease = leader_elect.then_some((lease_namespace.as_str(), lease_name.as_str()));
            let webhook_secret = webhook_secret
                .as_deref()
                .map(|text| namespaced_name("--webhook-secret", text))
                .transpose()?;
            let service_account = service_account
                .as_deref()
                .map(|text| namespaced_name("--service-account", text))
                .transpose()?;
            let options = cli::run::RbacOptions {
                namespace: namespace.as_deref(),
                lease,
                webhook_secret,
                clusters_namespace: &clusters_namespace,
                resolves_services: !cluster_dns,
                service_account,
            };
            let yaml = cli::run::rbac_yaml(&runtime, &plugins, plugins_config.as_deref(), &options)
                .await?;
            print!("{yaml}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Webhooks {
            plugins,
            plugins_config,
            service,
            port,
            url,
            ca_bundle,
            name,
        } => {
            use wasm_operator::webhook::configurations::Endpoint;
            let endpoint = match (service, url) {
                (Some(service), _) => {
                    let (namespace, name) = namespaced_name("--service", &service)?;
                    Endpoint::Service {
                        namespace: namespace.to_owned(),
                        name: name.to_owned(),
                        port,
                    }
                }
                (None, Some(url)) => Endpoint::Url(url),
                (None, None) => anyhow::bail!("--service or --url is required"),
            };
            let ca = match &ca_bundle {
                Some(path) => Some(
                    std::fs::read_to_string(path)
                        .with_context(|| format!("cannot read {}", path.display()))?,
                ),
                None => None,
            };
            let yaml = cli::run::webhooks_yaml(
                &runtime,
                &plugins,
                plugins_config.as_deref(),
                &endpoint,
                ca.as_deref(),
                &name,
            )
            .await?;
            print!("{yaml}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Plugin {
            command: PluginCommand::Inspect { file },
        } => match inspect(&runtime, &file).await {
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
        #[cfg(feature = "demo")]
        Command::Plugin {
            command: PluginCommand::Test { file, scenarios },
        } => plugin_test(&runtime, &file, &scenarios).await,
        Command::Bench { args } => bench(&args),
        Command::WasiRun { wasm, args } => {
            let code = wasi_run::run(&runtime, &wasm, &args).await?;
            Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
        }
    }
}

/// The plugin at `file` with its directory's `plugins.toml` settings, every load-time check
/// passed.
async fn inspect(
    runtime: &Runtime,
    file: &std::path::Path,
) -> anyhow::Result<wasm_operator_runtime::Plugin> {
    let file = wasm_operator::operator::loader::plugin_file(file)?;
    Ok(wasm_operator::operator::loader::check(runtime, &file).await?)
}

/// `wasm-operator bench ARGS`: the benchmarks are a binary of their own
/// (`wasm-operator-bench`, built with `cargo build --release -p wasm-operator-bench`), so
/// this one links none of their native reconcilers.
fn bench(args: &[String]) -> anyhow::Result<ExitCode> {
    let name = format!("wasm-operator-bench{}", std::env::consts::EXE_SUFFIX);
    let exe = std::env::current_exe().context("the path of this binary")?;
    let bench = exe.with_file_name(&name);
    anyhow::ensure!(
        bench.is_file(),
        "no {name} beside {}: build it with `cargo build --release -p wasm-operator-bench`",
        exe.display()
    );
    let status = std::process::Command::new(&bench)
        .args(args)
        .status()
        .with_context(|| format!("cannot start {}", bench.display()))?;
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::FAILURE,
    })
}

/// `NAMESPACE/NAME` given to `flag`, split.
fn namespaced_name<'a>(flag: &str, text: &'a str) -> anyhow::Result<(&'a str, &'a str)> {
    text.split_once('/')
        .filter(|(namespace, name)| !namespace.is_empty() && !name.is_empty())
        .with_context(|| format!("{flag} {text:?} is not NAMESPACE/NAME"))
}
