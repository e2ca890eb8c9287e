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
//! killed in turn. Then Keystone lives: each creates a Keystone (its MariaDB, External
//! Secrets, workloads and API served by the cluster actors) and is killed 1–5 s in. After
//! that the faults stop and one operator runs until every GitLabSecrets and Keystone is
//! Ready.
//!
//! Invariants, each violation counted and named (never with a value):
//! - no acknowledged write missing: every object the server listed before a restart is
//!   there after it, at the same resourceVersion and content;
//! - no Secret value ever changed or removed, and no Secret updated, deleted or applied
//!   (the server refuses those with 405 and counts the attempts);
//! - every GitLabSecrets converges once the faults stop;
//! - no object passed by two replicas at once (the intervals of their logged passes);
//! - no Job run twice (a Job name seen with a second uid);
//! - no Secret value in any line of the operators' logs (run at `debug`), as stored (base64)
//!   or decoded — the Keystones' credentials and keys included.
//!
//! The first two hold in the GitLabSecrets' namespaces (`soak-…`): the Keystones' keys
//! rotate and their actors write on their own.
//!
//! Certificate sets are left out: a kill between a set's CA and TLS writes leaves a set the
//! reconciler reports by design (the CA key is never stored; the report names the key to
//! delete), so it would not converge without a user.

mod invariants;
mod keystone;
mod report;
mod server;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use serde_json::Value;
use tokio::time::Instant;
use wasm_operator_apiserver::{Actor, Fault};

use self::invariants::{
    Values, acknowledged, check_values, lease_holder, overlaps, pass_intervals, passes_logged,
    scan_logs, values, values_where,
};
use self::report::write_report;
use self::server::{Rng, Server, fault};
use super::cluster::{BenchCluster, Variant};
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
    /// Operator lives, each with a new Keystone, killed 1–5 s in.
    pub keystone_kills: usize,
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
    /// Keystones created (one per Keystone life).
    pub keystones: usize,
    /// Jobs the Keystones ran.
    pub jobs: usize,
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

/// Starts a cycle: a GitLabSecrets in a new namespace `namespace`, and one or two faults.
async fn begin_cycle(
    server: &mut Server,
    rng: &mut Rng,
    report: &mut SoakReport,
    namespace: &str,
) -> anyhow::Result<()> {
    let namespace = namespace.to_owned();
    server
        .cluster
        .namespaces(std::slice::from_ref(&namespace))
        .await?;
    server.guard(&namespace);
    server
        .cluster
        .create(Variant::NoKeys.object(&namespace)?)
        .await?;
    report.gitlabsecrets += 1;
    inject_faults(server, rng, report);
    Ok(())
}

/// Injects one or two faults of the matrix, counted in the report.
fn inject_faults(server: &Server, rng: &mut Rng, report: &mut SoakReport) {
    for _ in 0..=rng.below(2) {
        let (label, fault) = fault(rng);
        server.cluster.server.inject(fault);
        *report.faults.entry(label).or_default() += 1;
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
    // The actors serve the Keystones' MariaDB, External Secrets, workloads and API.
    let actors = if options.keystone_kills > 0 {
        vec![
            Actor::Workloads,
            Actor::MariaDb,
            Actor::ExternalSecrets,
            Actor::Keystone,
        ]
    } else {
        Vec::new()
    };
    let first = Server::start(0, &data_dir, &actors).await?;
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
    let mut files = vec!["gitlabsecrets.wasm", "secretgen.wasm"];
    if options.keystone_kills > 0 {
        keystone::install(&cluster.client).await?;
        files.push("keystone.wasm");
        // Granted the ClusterSecretStore read its store gate makes. Its pass deadline is
        // raised from 30 s: in the final life of a full soak (debug build, the API server in
        // this process) Keystone passes ran past 30 s; the soak checks reliability, not
        // latency.
        std::fs::write(
            plugins.join("plugins.toml"),
            "[plugins.keystone]\ncluster_scoped = true\ndeadline_ms = 120000\n",
        )?;
    }
    for file in files {
        std::fs::copy(options.plugins.join(file), plugins.join(file))
            .with_context(|| format!("cannot copy {file} from {}", options.plugins.display()))?;
    }
    let mut server = Server {
        cluster,
        port,
        data_dir,
        rewrites: 0,
        guarded: Vec::new(),
        actors,
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
        begin_cycle(&mut server, &mut rng, &mut report, &format!("soak-{i}")).await?;
        let process = operator(&i.to_string())?;
        tokio::time::sleep(Duration::from_millis(100 + rng.below(1100))).await;
        process.stop().await;
        report.kills += 1;
        let passes = passes_logged(&logs.join(format!("soak-{i}.log")))?;
        report.passes_before_kills += passes;
        report.killed_in_passes += usize::from(passes > 0);
        server.end_faults();
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
        begin_cycle(
            &mut server,
            &mut rng,
            &mut report,
            &format!("soak-replicas-{round}"),
        )
        .await?;
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
        // Once one of this round's replicas leads (the Lease still names the last round's
        // holder until then), and some passes later, the holder is killed (either, when
        // neither came to hold it in 10 s).
        let ours = |holder: &Option<String>| {
            holder
                .as_deref()
                .filter(|h| names.iter().any(|n| n == h))
                .map(str::to_owned)
        };
        let elected = Instant::now();
        while ours(&lease_holder(&server.cluster.client).await).is_none()
            && elected.elapsed() < Duration::from_secs(10)
        {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        tokio::time::sleep(Duration::from_millis(rng.below(2000))).await;
        let holder = ours(&lease_holder(&server.cluster.client).await);
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
        server.end_faults();
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

    // Keystone lives: each with a new Keystone, killed 1–5 s in; no Job run twice.
    let mut jobs_seen = BTreeMap::new();
    for i in 0..options.keystone_kills {
        keystone::begin(&server.cluster.client, i).await?;
        report.keystones += 1;
        inject_faults(&server, &mut rng, &mut report);
        let life = format!("{}{i}", keystone::NAMESPACE_PREFIX);
        let process = operator(&life)?;
        tokio::time::sleep(Duration::from_millis(1000 + rng.below(4000))).await;
        process.stop().await;
        report.kills += 1;
        server.end_faults();
        let now = keystone::jobs(&server.cluster.client).await?;
        keystone::check_jobs(
            &mut jobs_seen,
            &now,
            &format!("after {life}"),
            &mut report.violations,
        );
    }

    // The faults stop (the refusals of Secret rewrites stay); everything converges.
    server.end_faults();
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
    if report.keystones > 0 {
        let ready = keystone::wait_ready(
            &server.cluster.client,
            report.keystones,
            Duration::from_secs(60 + 30 * report.keystones as u64),
        )
        .await;
        if let Err(error) = ready {
            report
                .violations
                .push(format!("after the faults stopped: {error}"));
        }
        let now = keystone::jobs(&server.cluster.client).await?;
        keystone::check_jobs(&mut jobs_seen, &now, "at the end", &mut report.violations);
        report.jobs = jobs_seen.len();
    }
    last.stop().await;
    // The Keystones' credentials and keys are looked for in the logs too.
    let mut needles = values_where(&server.cluster.client, |namespace| {
        namespace.starts_with(keystone::NAMESPACE_PREFIX)
    })
    .await?;
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

    needles.extend(seen.clone());
    let (lines, leaks) = scan_logs(&logs, &needles)?;
    report.log_lines = lines;
    report.violations.extend(leaks);
    report.elapsed = started.elapsed();
    write_report(options, &report)?;
    Ok(report)
}
