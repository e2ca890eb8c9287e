//! `wasm-operator bench --soak`: the operator killed (`kill -9`) at random points of its
//! passes, under injected API faults, with the API server restarted from its write-ahead
//! log between lives; then the invariants a user relies on are checked and counted in
//! `soak.md`.
//!
//! Each cycle creates one GitLabSecrets (the chart's Secrets without key pairs, in a
//! namespace of its own), injects one or two faults of the matrix (409, 410, 429, 500,
//! latency, a dropped watch; each for 1–3 requests), starts an operator process, kills it
//! after 0.1–1.2 s, and checks every Secret value seen so far. Every `restart_every`
//! cycles the API server is stopped and started again on the same port and data
//! directory. After the last cycle the faults stop and one operator runs until every
//! GitLabSecrets is Ready.
//!
//! Invariants, each violation counted and named (never with a value):
//! - no acknowledged write missing: every object the server listed before a restart is
//!   there after it, at the same resourceVersion and content;
//! - no Secret value ever changed or removed, and no Secret updated, deleted or applied
//!   (the server refuses those with 405 and counts the attempts);
//! - every GitLabSecrets converges once the faults stop;
//! - no Secret value in any line of the operators' logs (run at `debug`), as stored (base64)
//!   or decoded.
//!
//! Certificate sets are left out: a kill between a set's CA and TLS writes leaves a set the
//! reconciler reports by design (the CA key is never stored; the report names the key to
//! delete), so it would not converge without a user.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject, ListParams};
use serde_json::Value;
use tokio::time::Instant;
use wasm_operator_apiserver::{ApiServer, Fault, FaultAction, ServerConfig};

use wasm_operator::informer::api_resource;

use super::cluster::{BenchCluster, Variant, gitlabsecrets_kind};
use super::process::OperatorProcess;

/// What a soak runs.
#[derive(Debug, Clone)]
pub struct SoakOptions {
    /// Where `soak.md` and the operators' logs go.
    pub out: PathBuf,
    /// The `wasm-operator` binary.
    pub exe: PathBuf,
    /// The shipped plugins.
    pub plugins: PathBuf,
    /// How many operator lives end in `kill -9`.
    pub kills: usize,
    /// The API server restarts after every this many kills.
    pub restart_every: usize,
    /// The seed of the random delays and faults (printed in the report, to replay a run).
    pub seed: u64,
}

/// What a soak counted.
#[derive(Debug, Default)]
pub struct SoakReport {
    pub kills: usize,
    pub restarts: usize,
    pub faults: BTreeMap<&'static str, usize>,
    pub gitlabsecrets: usize,
    pub values: usize,
    /// Killed lives that had finished at least one pass (the others died starting).
    pub killed_in_passes: usize,
    /// Passes the killed lives finished.
    pub passes_before_kills: usize,
    pub log_lines: usize,
    pub violations: Vec<String>,
    pub elapsed: Duration,
}

/// The operators log at debug, but for the compiler's own (a compile logs millions of
/// lines, none of them about objects).
const LOG_FILTER: &str = "debug,cranelift_codegen=info,wasmtime_internal_cranelift=info";

/// A xorshift generator: the soak needs reproducible choices, not good randomness.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// The fault matrix: a label and the fault.
fn fault(rng: &mut Rng) -> (&'static str, Fault) {
    let fail = |verb: &str, resource: &str, code: u16, message: &str| {
        Fault::fail(verb, resource, code, message)
    };
    let (label, mut fault) = match rng.below(8) {
        0 => (
            "500 on Secret create",
            fail("create", "secrets", 500, "etcd timeout"),
        ),
        1 => (
            "409 on Secret patch",
            fail("patch", "secrets", 409, "the object has been modified"),
        ),
        2 => (
            "429 on Secret get",
            fail("get", "secrets", 429, "too many requests"),
        ),
        3 => (
            "500 on GitLabSecrets list",
            fail("list", "gitlabsecrets", 500, "etcd timeout"),
        ),
        4 => (
            "410 on Secret watch",
            fail("watch", "secrets", 410, "too old resource version"),
        ),
        5 => (
            "409 on status update",
            fail(
                "update",
                "gitlabsecrets",
                409,
                "the object has been modified",
            ),
        ),
        6 => ("dropped GitLabSecrets watch", {
            let mut f = fail("watch", "gitlabsecrets", 500, "");
            f.action = FaultAction::DropWatch;
            f
        }),
        _ => ("300 ms on Secret patch", {
            let mut f = fail("patch", "secrets", 500, "");
            f.action = FaultAction::Delay(Duration::from_millis(300));
            f
        }),
    };
    fault.remaining = Some(1 + rng.below(3) as u32);
    (label, fault)
}

/// Refuses every update, delete and apply of a Secret (counted by the server).
fn refuse_rewrites(server: &ApiServer) {
    for verb in ["update", "delete", "apply", "deletecollection"] {
        server.inject(Fault::fail(
            verb,
            "secrets",
            405,
            "Secrets are never rewritten",
        ));
    }
}

/// Ends the injected faults (the operator is dead, or the soak is over), so the soak's own
/// reads neither fail nor use them up; the refusals of rewrites stay.
fn end_faults(server: &ApiServer) {
    server.clear_faults();
    refuse_rewrites(server);
}

/// The embedded API server on a fixed port and data directory, restartable.
struct Server {
    cluster: BenchCluster,
    port: u16,
    data_dir: PathBuf,
    /// Secret updates, deletes and applies refused so far (counted before each restart).
    rewrites: u64,
}

impl Server {
    async fn start(port: u16, data_dir: &Path) -> anyhow::Result<ApiServer> {
        let started = Instant::now();
        loop {
            let config = ServerConfig {
                port,
                data_dir: Some(data_dir.to_owned()),
                ..ServerConfig::default()
            };
            match ApiServer::start(config).await {
                Ok(server) => {
                    refuse_rewrites(&server);
                    return Ok(server);
                }
                // The old listener may take a moment to go.
                Err(error) if port != 0 && started.elapsed() < Duration::from_secs(5) => {
                    tracing::debug!(%error, "the port is not free yet");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(error) => return Err(error.into()),
            }
        }
    }

    fn refused_rewrites(&self) -> u64 {
        let counts = self.cluster.server.counts();
        ["update", "delete", "apply", "deletecollection"]
            .iter()
            .map(|verb| counts.get(verb, "secrets"))
            .sum()
    }

    async fn restart(self) -> anyhow::Result<Self> {
        let rewrites = self.rewrites + self.refused_rewrites();
        let Self {
            cluster,
            port,
            data_dir,
            ..
        } = self;
        cluster.server.stop();
        let server = Self::start(port, &data_dir).await?;
        let client = server.client()?;
        Ok(Self {
            cluster: BenchCluster { server, client },
            port,
            data_dir,
            rewrites,
        })
    }
}

/// Every object of the kinds the soak writes, by kind and key: the acknowledged state.
async fn acknowledged(client: &kube::Client) -> anyhow::Result<BTreeMap<String, Value>> {
    let mut objects = BTreeMap::new();
    let secrets = api_resource(&wasm_operator_types::KindRef {
        api_version: "v1".into(),
        kind: "Secret".into(),
        plural: "secrets".into(),
        namespaced: true,
    });
    for (kind, resource) in [
        ("Secret", secrets),
        ("GitLabSecrets", api_resource(&gitlabsecrets_kind())),
    ] {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        for object in api.list(&ListParams::default()).await?.items {
            let value = serde_json::to_value(&object)?;
            let key = format!(
                "{kind} {}/{}",
                object.metadata.namespace.unwrap_or_default(),
                object.metadata.name.unwrap_or_default()
            );
            objects.insert(key, value);
        }
    }
    Ok(objects)
}

/// Every Secret value: (namespace/name, key) → the stored (base64) value.
type Values = BTreeMap<(String, String), Vec<u8>>;

async fn values(client: &kube::Client) -> anyhow::Result<Values> {
    let api: Api<Secret> = Api::all(client.clone());
    let mut values = Values::new();
    for secret in api.list(&ListParams::default()).await?.items {
        let name = format!(
            "{}/{}",
            secret.metadata.namespace.unwrap_or_default(),
            secret.metadata.name.unwrap_or_default()
        );
        for (key, value) in secret.data.unwrap_or_default() {
            values.insert((name.clone(), key), value.0);
        }
    }
    Ok(values)
}

/// Checks that every value in `seen` is still in `now`, unchanged; adds the new ones.
fn check_values(seen: &mut Values, now: &Values, when: &str, violations: &mut Vec<String>) {
    for ((secret, key), value) in seen.iter() {
        match now.get(&(secret.clone(), key.clone())) {
            None => violations.push(format!("{when}: Secret {secret} lost key {key}")),
            Some(current) if current != value => {
                violations.push(format!("{when}: Secret {secret} key {key} changed"))
            }
            Some(_) => {}
        }
    }
    for (k, v) in now {
        seen.entry(k.clone()).or_insert_with(|| v.clone());
    }
}

/// Runs the soak.
pub async fn soak(options: &SoakOptions) -> anyhow::Result<SoakReport> {
    let started = Instant::now();
    let mut report = SoakReport::default();
    let mut rng = Rng(options.seed.max(1));
    let scratch = tempfile::tempdir()?;
    let logs = options.out.join("soak-logs");
    std::fs::create_dir_all(&logs)?;
    let cache = options.out.join("artifact-cache");
    let data_dir = scratch.path().join("data");
    let first = Server::start(0, &data_dir).await?;
    let port: u16 = first
        .url()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .context("the server's port")?;
    let client = first.client()?;
    let cluster = BenchCluster {
        server: first,
        client,
    };
    let crd: Value = serde_yaml_ng::from_str(wasm_operator::cli::demo::GITLABSECRETS_CRD)?;
    cluster.create(crd).await?;
    let kubeconfig = scratch.path().join("kubeconfig");
    cluster.server.write_kubeconfig(&kubeconfig)?;
    let plugins = scratch.path().join("plugins");
    std::fs::create_dir_all(&plugins)?;
    for file in ["gitlabsecrets.wasm", "secretgen.wasm"] {
        std::fs::copy(options.plugins.join(file), plugins.join(file))
            .with_context(|| format!("cannot copy {file} from {}", options.plugins.display()))?;
    }
    let mut server = Server {
        cluster,
        port,
        data_dir,
        rewrites: 0,
    };
    let mut seen = Values::new();
    let operator = |life: &str| {
        OperatorProcess::start_logging(
            &options.exe,
            &kubeconfig,
            &plugins,
            &cache,
            &logs.join(format!("soak-{life}.log")),
            &[],
            LOG_FILTER,
        )
    };
    // One life to fill the artifact cache, so the killed lives spend their time in passes
    // rather than compiling.
    let mut warm = operator("warm")?;
    warm.wait_ready(Instant::now(), Duration::from_secs(300))
        .await?;
    warm.stop().await;

    for i in 0..options.kills {
        let namespace = format!("soak-{i}");
        server
            .cluster
            .namespaces(std::slice::from_ref(&namespace))
            .await?;
        server
            .cluster
            .create(Variant::NoKeys.object(&namespace)?)
            .await?;
        report.gitlabsecrets += 1;
        for _ in 0..=rng.below(2) {
            let (label, fault) = fault(&mut rng);
            server.cluster.server.inject(fault);
            *report.faults.entry(label).or_default() += 1;
        }
        let process = operator(&i.to_string())?;
        tokio::time::sleep(Duration::from_millis(100 + rng.below(1100))).await;
        process.stop().await;
        report.kills += 1;
        let passes = passes_logged(&logs.join(format!("soak-{i}.log")))?;
        report.passes_before_kills += passes;
        report.killed_in_passes += usize::from(passes > 0);
        end_faults(&server.cluster.server);
        let now = values(&server.cluster.client).await?;
        check_values(
            &mut seen,
            &now,
            &format!("after kill {}", i + 1),
            &mut report.violations,
        );

        if (i + 1) % options.restart_every.max(1) == 0 {
            let before = acknowledged(&server.cluster.client).await?;
            server = server.restart().await?;
            report.restarts += 1;
            let after = acknowledged(&server.cluster.client).await?;
            for (key, object) in &before {
                match after.get(key) {
                    None => report
                        .violations
                        .push(format!("restart {}: {key} missing", report.restarts)),
                    Some(found) if found != object => report
                        .violations
                        .push(format!("restart {}: {key} differs", report.restarts)),
                    Some(_) => {}
                }
            }
        }
    }

    // The faults stop (the refusals of Secret rewrites stay); everything converges.
    end_faults(&server.cluster.server);
    let mut last = operator("final")?;
    last.wait_ready(Instant::now(), Duration::from_secs(120))
        .await?;
    if let Err(error) = server
        .cluster
        .wait_ready(
            report.gitlabsecrets,
            Instant::now(),
            Duration::from_secs(180),
        )
        .await
    {
        report
            .violations
            .push(format!("after the faults stopped: {error}"));
    }
    last.stop().await;
    let now = values(&server.cluster.client).await?;
    check_values(&mut seen, &now, "at the end", &mut report.violations);
    report.values = seen.len();
    let rewrites = server.rewrites + server.refused_rewrites();
    if rewrites > 0 {
        report.violations.push(format!(
            "{rewrites} Secret updates, deletes or applies were sent"
        ));
    }
    server.cluster.server.stop();

    let (lines, leaks) = scan_logs(&logs, &seen)?;
    report.log_lines = lines;
    report.violations.extend(leaks);
    report.elapsed = started.elapsed();
    write_report(options, &report)?;
    Ok(report)
}

/// How many passes the operator whose log is `log` finished.
fn passes_logged(log: &Path) -> anyhow::Result<usize> {
    let text =
        std::fs::read_to_string(log).with_context(|| format!("cannot read {}", log.display()))?;
    Ok(text
        .lines()
        .filter(|l| l.contains("plugin_controller") && l.contains(" pass "))
        .count())
}

/// Counts the log lines under `dir` and names each file holding a Secret value of `seen`
/// (as stored in base64, or decoded when it is 16 bytes or more).
fn scan_logs(dir: &Path, seen: &Values) -> anyhow::Result<(usize, Vec<String>)> {
    use base64::Engine as _;
    let needles: Vec<(String, String)> = seen
        .iter()
        .flat_map(|((secret, key), value)| {
            let label = format!("Secret {secret} key {key}");
            let stored = base64::engine::general_purpose::STANDARD.encode(value);
            let decoded = String::from_utf8(value.clone()).ok();
            [Some(stored), decoded]
                .into_iter()
                .flatten()
                .filter(|n| n.len() >= 16)
                .map(move |n| (label.clone(), n))
        })
        .collect();
    let mut lines = 0;
    let mut leaks = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        lines += text.lines().count();
        for (label, needle) in &needles {
            if text.contains(needle.as_str()) {
                leaks.push(format!("a value of {label} is in {}", path.display()));
            }
        }
    }
    Ok((lines, leaks))
}

fn write_report(options: &SoakOptions, report: &SoakReport) -> anyhow::Result<()> {
    let mut md = String::new();
    let _ = writeln!(md, "# wasm-operator soak\n");
    let _ = writeln!(
        md,
        "Seed {}; {} kills (`kill -9` 0.1–1.2 s into a life), the API server restarted every {} kills; {:.0} s.\n",
        options.seed,
        report.kills,
        options.restart_every,
        report.elapsed.as_secs_f64()
    );
    let _ = writeln!(md, "| What | Count |\n|---|---|");
    let faults: usize = report.faults.values().sum();
    for (what, count) in [
        ("Operator kills", report.kills),
        (
            "… of lives that had finished a pass",
            report.killed_in_passes,
        ),
        (
            "Passes the killed lives finished",
            report.passes_before_kills,
        ),
        ("API server restarts", report.restarts),
        ("Faults injected", faults),
        ("GitLabSecrets", report.gitlabsecrets),
        ("Secret values tracked", report.values),
        ("Log lines scanned", report.log_lines),
        ("Invariant violations", report.violations.len()),
    ] {
        let _ = writeln!(md, "| {what} | {count} |");
    }
    let _ = writeln!(md, "\n| Fault | Injected |\n|---|---|");
    for (fault, count) in &report.faults {
        let _ = writeln!(md, "| {fault} | {count} |");
    }
    if !report.violations.is_empty() {
        let _ = writeln!(md, "\n## Violations\n");
        for violation in &report.violations {
            let _ = writeln!(md, "- {violation}");
        }
    }
    std::fs::create_dir_all(&options.out)?;
    let path = options.out.join("soak.md");
    std::fs::write(&path, md).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_or_lost_value_is_a_violation_named_without_the_value() {
        let key = |s: &str, k: &str| (s.to_owned(), k.to_owned());
        let mut seen = Values::from([
            (key("ns/a", "k"), b"one".to_vec()),
            (key("ns/b", "k"), b"two".to_vec()),
        ]);
        let now = Values::from([
            (key("ns/a", "k"), b"changed".to_vec()),
            (key("ns/c", "k"), b"new".to_vec()),
        ]);
        let mut violations = Vec::new();
        check_values(&mut seen, &now, "t", &mut violations);
        assert_eq!(
            violations,
            ["t: Secret ns/a key k changed", "t: Secret ns/b lost key k"]
        );
        assert!(
            seen.contains_key(&key("ns/c", "k")),
            "new values are tracked"
        );
        assert!(
            violations
                .iter()
                .all(|v| !v.contains("changed\"") && !v.contains("one"))
        );
    }

    #[test]
    fn a_value_in_a_log_is_a_violation_naming_the_file_and_the_secret_not_the_value() {
        let dir = tempfile::tempdir().expect("a directory");
        let value = b"s3cr3t-value-of-32-characters-xx".to_vec();
        let seen = Values::from([(("ns/a".to_owned(), "k".to_owned()), value.clone())]);
        std::fs::write(dir.path().join("clean.log"), "a line\nanother\n").expect("log");
        let (lines, leaks) = scan_logs(dir.path(), &seen).expect("scanned");
        assert_eq!((lines, leaks.len()), (2, 0));
        std::fs::write(
            dir.path().join("leaky.log"),
            "WARN body: czNjcjN0LXZhbHVlLW9mLTMyLWNoYXJhY3RlcnMteHg=\n",
        )
        .expect("log");
        let (_, leaks) = scan_logs(dir.path(), &seen).expect("scanned");
        assert_eq!(leaks.len(), 1, "{leaks:?}");
        assert!(
            leaks[0].starts_with("a value of Secret ns/a key k is in "),
            "{leaks:?}"
        );
        assert!(leaks[0].ends_with("leaky.log"));
    }
}
