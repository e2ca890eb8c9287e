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
//! directory. Then come rounds of two replicas with leader election (a 2 s Lease, faults on
//! the Lease too): once one holds the Lease it is killed, the standby takes over, and it is
//! killed in turn. After the last round the faults stop and one operator runs until every
//! GitLabSecrets is Ready.
//!
//! Invariants, each violation counted and named (never with a value):
//! - no acknowledged write missing: every object the server listed before a restart is
//!   there after it, at the same resourceVersion and content;
//! - no Secret value ever changed or removed, and no Secret updated, deleted or applied
//!   (the server refuses those with 405 and counts the attempts);
//! - every GitLabSecrets converges once the faults stop;
//! - no object passed by two replicas at once (the intervals of their logged passes);
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
    /// Rounds of two replicas with leader election, one killed, then the other.
    pub replica_rounds: usize,
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
    pub replica_rounds: usize,
    /// Rounds whose killed replica held the Lease and whose survivor then passed.
    pub takeovers: usize,
    /// Passes the replicas of those rounds finished.
    pub replica_passes: usize,
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

/// Who holds the leader Lease, if anyone.
async fn lease_holder(client: &kube::Client) -> Option<String> {
    let leases: Api<k8s_openapi::api::coordination::v1::Lease> =
        Api::namespaced(client.clone(), "default");
    let lease = leases.get_opt("wasm-operator-leader").await.ok()??;
    lease.spec?.holder_identity.filter(|h| !h.is_empty())
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
    let replica = |life: &str, extra: &[&str]| {
        OperatorProcess::start_with_env(
            &options.exe,
            &kubeconfig,
            &plugins,
            &cache,
            &logs.join(format!("soak-{life}.log")),
            extra,
            &[("RUST_LOG", LOG_FILTER), ("POD_NAME", life)],
        )
    };
    let operator = |life: &str| replica(life, &[]);
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

    // Two replicas with leader election (a 2 s Lease), under the faults and faults on the
    // Lease: one is killed, the other takes over, then it is killed too. No object may be
    // passed by both at once.
    for round in 0..options.replica_rounds {
        let namespace = format!("soak-replicas-{round}");
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
        let mut lease_fault = Fault::fail("update", "leases", 500, "etcd timeout");
        lease_fault.verb = None;
        lease_fault.remaining = Some(1 + rng.below(2) as u32);
        server.cluster.server.inject(lease_fault);
        *report.faults.entry("500 on Lease requests").or_default() += 1;
        let election = [
            "--leader-elect",
            "--lease-duration-s",
            "2",
            "--lease-renew-before-s",
            "1",
        ];
        let names = [format!("replicas-{round}-a"), format!("replicas-{round}-b")];
        let mut lives = vec![
            replica(&names[0], &election)?,
            replica(&names[1], &election)?,
        ];
        // Once one leads, and some passes later, the holder of the Lease is killed (either,
        // when none came to hold it in 10 s).
        let elected = Instant::now();
        while lease_holder(&server.cluster.client).await.is_none()
            && elected.elapsed() < Duration::from_secs(10)
        {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        tokio::time::sleep(Duration::from_millis(rng.below(2000))).await;
        let holder = lease_holder(&server.cluster.client).await;
        let killed = match holder.as_deref() {
            Some(h) if h == names[1] => 1,
            Some(h) if h == names[0] => 0,
            _ => rng.below(2) as usize,
        };
        lives.remove(killed).stop().await;
        // Past the Lease's expiry and the standby's next look at it: it leads and passes.
        tokio::time::sleep(Duration::from_millis(6000)).await;
        for life in lives {
            life.stop().await;
        }
        report.kills += 2;
        report.replica_rounds += 1;
        end_faults(&server.cluster.server);
        let passes = [
            pass_intervals(&logs.join(format!("soak-{}.log", names[0])))?,
            pass_intervals(&logs.join(format!("soak-{}.log", names[1])))?,
        ];
        report.replica_passes += passes[0].len() + passes[1].len();
        report.takeovers += usize::from(holder.is_some() && !passes[1 - killed].is_empty());
        for overlap in overlaps(&passes[0], &passes[1]) {
            report.violations.push(format!(
                "replicas round {round}: {overlap} passed by both replicas at once"
            ));
        }
        let now = values(&server.cluster.client).await?;
        check_values(
            &mut seen,
            &now,
            &format!("after replicas round {round}"),
            &mut report.violations,
        );
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

/// A pass as its log line tells it: the object, and when it started and ended.
#[derive(Debug, Clone, PartialEq)]
struct PassInterval {
    object: String,
    start: k8s_openapi::jiff::Timestamp,
    end: k8s_openapi::jiff::Timestamp,
}

/// The passes an operator's log `log` tells of (its `pass` debug lines: the time at the
/// end, `namespace`, `name` and `elapsed`).
fn pass_intervals(log: &Path) -> anyhow::Result<Vec<PassInterval>> {
    let text =
        std::fs::read_to_string(log).with_context(|| format!("cannot read {}", log.display()))?;
    Ok(text.lines().filter_map(parse_pass).collect())
}

fn parse_pass(line: &str) -> Option<PassInterval> {
    let line = strip_ansi(line);
    if !(line.contains("plugin_controller") && line.contains(" pass ")) {
        return None;
    }
    let field = |name: &str| -> Option<String> {
        let rest = line.split(&format!(" {name}=")).nth(1)?;
        Some(rest.split(' ').next()?.trim_matches('"').to_owned())
    };
    let end: k8s_openapi::jiff::Timestamp = line.split(' ').next()?.parse().ok()?;
    let elapsed = parse_duration(&field("elapsed")?)?;
    let start = end
        .checked_sub(k8s_openapi::jiff::SignedDuration::try_from(elapsed).ok()?)
        .ok()?;
    Some(PassInterval {
        object: format!("{}/{}", field("namespace")?, field("name")?),
        start,
        end,
    })
}

/// A `Duration` as its `Debug` writes it (`12.8ms`, `850µs`, `1.2s`, `3ns`).
fn parse_duration(text: &str) -> Option<Duration> {
    let (number, unit) = ["ns", "µs", "ms", "s"]
        .iter()
        .find_map(|unit| Some((text.strip_suffix(unit)?, *unit)))?;
    let value: f64 = number.parse().ok()?;
    let seconds = match unit {
        "ns" => value / 1e9,
        "µs" => value / 1e6,
        "ms" => value / 1e3,
        _ => value,
    };
    Duration::try_from_secs_f64(seconds).ok()
}

fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The objects passed by `a` and `b` at overlapping times.
fn overlaps(a: &[PassInterval], b: &[PassInterval]) -> Vec<String> {
    let mut found: Vec<String> = a
        .iter()
        .filter(|x| {
            b.iter()
                .any(|y| x.object == y.object && x.start < y.end && y.start < x.end)
        })
        .map(|x| x.object.clone())
        .collect();
    found.dedup();
    found
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
        (
            "Rounds of two replicas (both killed)",
            report.replica_rounds,
        ),
        (
            "… in which the standby took over from the killed leader",
            report.takeovers,
        ),
        ("Passes the replicas finished", report.replica_passes),
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

    #[test]
    fn passes_are_read_from_their_log_lines_and_overlaps_found_per_object() {
        let line = "\u{1b}[2m2026-12-05T04:19:59.850764Z\u{1b}[0m DEBUG wasm_operator::controller::plugin_controller: pass plugin=\"gitlabsecrets\" version=\"0.1.0\" namespace=\"soak-0\" name=\"demo\" elapsed=12.5ms outcome=Ok(None)";
        let pass = parse_pass(line).expect("a pass line");
        assert_eq!(pass.object, "soak-0/demo");
        assert_eq!(
            pass.end.duration_since(pass.start),
            k8s_openapi::jiff::SignedDuration::from_micros(12_500)
        );
        assert_eq!(parse_pass("DEBUG something else"), None);
        assert_eq!(parse_duration("850µs"), Some(Duration::from_micros(850)));
        assert_eq!(parse_duration("1.5s"), Some(Duration::from_millis(1500)));
        let at = |object: &str, from: i64, to: i64| PassInterval {
            object: object.into(),
            start: k8s_openapi::jiff::Timestamp::from_second(from).expect("a time"),
            end: k8s_openapi::jiff::Timestamp::from_second(to).expect("a time"),
        };
        let a = [at("ns/x", 0, 2), at("ns/y", 0, 2)];
        let b = [at("ns/x", 1, 3), at("ns/y", 2, 4), at("ns/z", 0, 9)];
        assert_eq!(overlaps(&a, &b), ["ns/x"]);
    }
}
