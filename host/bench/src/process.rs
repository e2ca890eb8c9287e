//! An operator process (`wasm-operator run`) started by a benchmark, so its memory and its
//! start-up are its own: the API server and the harness live in the benchmark's process.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::Context as _;
use bytes::Bytes;
use http_body_util::{BodyExt as _, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tokio::process::{Child, Command};
use tokio::time::Instant;

/// A running `wasm-operator run`; killed when dropped.
pub struct OperatorProcess {
    child: Child,
    health: SocketAddr,
    http: Client<HttpConnector, Empty<Bytes>>,
    log: PathBuf,
}

/// A free port on 127.0.0.1 (bound, then released for the child).
fn free_addr() -> anyhow::Result<SocketAddr> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?)
}

impl OperatorProcess {
    /// Starts `exe run` over `plugins` against the cluster of `kubeconfig`, with precompiled
    /// artifacts in `cache` (sealed with a key beside it, shared by every cache of that
    /// parent directory, so a later process trusts them), unlimited API rate (the benchmark
    /// measures the operator, not its client-side limit), and `extra` arguments; its log
    /// goes to `log`.
    pub fn start(
        exe: &Path,
        kubeconfig: &Path,
        plugins: &Path,
        cache: &Path,
        log: &Path,
        extra: &[&str],
    ) -> anyhow::Result<Self> {
        Self::start_with_env(
            exe,
            kubeconfig,
            plugins,
            cache,
            log,
            extra,
            &[("RUST_LOG", "warn")],
        )
    }

    /// [`start`](Self::start) with the environment variables `env` (e.g. `RUST_LOG`,
    /// `POD_NAME`).
    pub fn start_with_env(
        exe: &Path,
        kubeconfig: &Path,
        plugins: &Path,
        cache: &Path,
        log: &Path,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> anyhow::Result<Self> {
        let health = free_addr()?;
        let key = cache
            .parent()
            .unwrap_or(Path::new("."))
            .join("artifact-cache.key");
        wasm_operator_runtime::write_cache_key(&key)
            .with_context(|| format!("cannot write the cache key {}", key.display()))?;
        let log_file = std::fs::File::create(log)
            .with_context(|| format!("cannot create {}", log.display()))?;
        let child = Command::new(exe)
            .arg("--cache-dir")
            .arg(cache)
            .arg("--cache-key-file")
            .arg(&key)
            .arg("run")
            .arg("--plugins")
            .arg(plugins)
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .arg("--health-addr")
            .arg(health.to_string())
            .args(["--api-qps", "0"])
            .args(extra)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(log_file.try_clone()?)
            .stderr(log_file)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot start {}", exe.display()))?;
        Ok(Self {
            child,
            health,
            http: Client::builder(TokioExecutor::new()).build_http(),
            log: log.to_owned(),
        })
    }

    /// The process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    async fn get(&self, path: &str) -> anyhow::Result<(u16, String)> {
        let uri: http::Uri = format!("http://{}{path}", self.health).parse()?;
        let response = self.http.get(uri).await?;
        let status = response.status().as_u16();
        let body = response.into_body().collect().await?.to_bytes();
        Ok((status, String::from_utf8_lossy(&body).into_owned()))
    }

    /// Polls `probe` every 5 ms until it returns a value; that value and the time since
    /// `since`. Fails, naming `what` and the log, when the process exits or `timeout` passes.
    async fn poll<T>(
        &mut self,
        what: &str,
        since: Instant,
        timeout: Duration,
        probe: impl AsyncFn(&Self) -> Option<T>,
    ) -> anyhow::Result<(Duration, T)> {
        loop {
            if let Some(value) = probe(self).await {
                return Ok((since.elapsed(), value));
            }
            if let Some(status) = self.child.try_wait()? {
                anyhow::bail!(
                    "the operator exited with {status} before {what}: see {}",
                    self.log.display()
                );
            }
            anyhow::ensure!(
                since.elapsed() < timeout,
                "no {what} after {timeout:?}: see {}",
                self.log.display()
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Waits until `/readyz` answers 200 (plugins started, caches synced); the time since
    /// `since`.
    pub async fn wait_ready(
        &mut self,
        since: Instant,
        timeout: Duration,
    ) -> anyhow::Result<Duration> {
        let ready = async |p: &Self| matches!(p.get("/readyz").await, Ok((200, _))).then_some(());
        Ok(self.poll("/readyz 200", since, timeout, ready).await?.0)
    }

    /// The sum of every sample of metric `name` (all label sets) in `/metrics`.
    pub async fn metric(&self, name: &str) -> anyhow::Result<f64> {
        let (status, text) = self.get("/metrics").await?;
        anyhow::ensure!(status == 200, "/metrics answered {status}");
        Ok(metric_sum(&text, name))
    }

    /// Waits until metric `name` reaches `at_least`; the time since `since` and the value
    /// then.
    pub async fn wait_metric(
        &mut self,
        name: &str,
        at_least: f64,
        since: Instant,
        timeout: Duration,
    ) -> anyhow::Result<(Duration, f64)> {
        let reached = async |p: &Self| p.metric(name).await.ok().filter(|v| *v >= at_least);
        self.poll(&format!("{name} ≥ {at_least}"), since, timeout, reached)
            .await
    }

    /// Waits until no pass is in flight, then returns `passes_total`. A pass leaves
    /// `passes_in_flight` only once it is counted, so a status observed before this call
    /// was written by a pass the returned count includes.
    pub async fn wait_passes_counted(
        &mut self,
        since: Instant,
        timeout: Duration,
    ) -> anyhow::Result<f64> {
        let idle = async |p: &Self| {
            let (status, text) = p.get("/metrics").await.ok()?;
            (status == 200 && metric_sum(&text, IN_FLIGHT) == 0.0)
                .then(|| metric_sum(&text, PASSES))
        };
        Ok(self
            .poll("no pass in flight", since, timeout, idle)
            .await?
            .1)
    }

    /// Resident memory now and its peak, in bytes (Linux `/proc`).
    pub fn memory(&self) -> Option<Memory> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()?)).ok()?;
        let field = |name: &str| -> Option<u64> {
            let line = status.lines().find(|l| l.starts_with(name))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib * 1024)
        };
        Some(Memory {
            rss: field("VmRSS:")?,
            peak: field("VmHWM:")?,
        })
    }

    /// Stops the process (SIGKILL: the benchmarks measure nothing after this).
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

/// Resident memory of a process.
#[derive(Debug, Clone, Copy)]
pub struct Memory {
    /// Resident now.
    pub rss: u64,
    /// The most it was resident.
    pub peak: u64,
}

/// Bytes as MiB.
pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Passes by how they ended (every label set summed by [`metric_sum`]).
pub(super) const PASSES: &str = "wasm_operator_passes_total";
const IN_FLIGHT: &str = "wasm_operator_passes_in_flight";

/// The sum of the samples of `name` in a Prometheus text exposition; 0 when it has none.
pub(super) fn metric_sum(text: &str, name: &str) -> f64 {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .filter(|line| {
            line.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
        })
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .fold(0.0, |sum, sample| sum + sample)
}

#[cfg(test)]
mod tests {
    use super::metric_sum;

    #[test]
    fn a_metric_is_summed_over_its_label_sets_and_no_other_metric() {
        let text = "# HELP x\nwasm_operator_passes_total{result=\"success\"} 3\n\
                    wasm_operator_passes_total{result=\"error\"} 2\n\
                    wasm_operator_passes_total_other 7\nwasm_operator_leader 1\n";
        assert_eq!(metric_sum(text, "wasm_operator_passes_total"), 5.0);
        assert_eq!(metric_sum(text, "wasm_operator_leader"), 1.0);
        let missing = metric_sum(text, "missing");
        assert!(missing == 0.0 && missing.is_sign_positive(), "{missing}");
    }
}
