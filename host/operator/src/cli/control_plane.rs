//! `wasm-operator control-plane`: the real control plane (`wasm-operator-controlplane`) on
//! loopback until Ctrl-C or SIGTERM, with an admin kubeconfig for kubectl and the operator.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use wasm_operator_controlplane::{ControlPlane, Options};

/// What `control-plane` was asked for.
pub struct ControlPlaneOptions {
    /// The binaries `controlplane/build.sh` wrote (default: this workspace's).
    pub bin_dir: Option<PathBuf>,
    /// The state, certificates and logs (default: a temporary directory).
    pub dir: Option<PathBuf>,
    /// kube-apiserver's port on 127.0.0.1 (0: a free one).
    pub port: u16,
    /// Where the admin kubeconfig is copied.
    pub kubeconfig: PathBuf,
}

/// Starts the control plane, prints where it is, and stops it on Ctrl-C or SIGTERM; a
/// component that exits meanwhile ends the command with its error.
pub async fn run(options: &ControlPlaneOptions) -> anyhow::Result<()> {
    let mut start = Options::new(
        options
            .bin_dir
            .clone()
            .unwrap_or_else(wasm_operator_controlplane::default_bin_dir),
    );
    start.dir.clone_from(&options.dir);
    start.apiserver_port = options.port;
    let began = Instant::now();
    let mut plane = ControlPlane::start(start).await?;
    let ready = began.elapsed();
    std::fs::copy(plane.kubeconfig(), &options.kubeconfig)
        .with_context(|| format!("cannot write {}", options.kubeconfig.display()))?;
    // A closed stdout must not stop the control plane: these lines are informational.
    let mut out = std::io::stdout();
    let _ = writeln!(
        out,
        "control plane ready in {:.1} s: kube-apiserver {} with etcd, kube-controller-manager, \
         kube-scheduler and kwok ({} Nodes)",
        ready.as_secs_f64(),
        plane.url(),
        wasm_operator_controlplane::NODES.len()
    );
    let _ = writeln!(out, "logs: {}", plane.dir().join("logs").display());
    let _ = writeln!(
        out,
        "kubeconfig: {0}  (kubectl --kubeconfig {0} get nodes)",
        options.kubeconfig.display()
    );
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("listening for SIGTERM")?;
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            signal = tokio::signal::ctrl_c() => {
                signal.context("waiting for Ctrl-C")?;
                break;
            }
            _ = terminate.recv() => break,
            _ = tick.tick() => plane.check()?,
        }
    }
    drop(plane);
    Ok(())
}
