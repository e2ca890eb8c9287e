//! `wasm-operator plugin test FILE SCENARIO...`: a plugin run by the real host on an
//! embedded API server (with the cluster's actors) through the stages of a scenario, each
//! checked once the plugin has converged — what a plugin author puts in their CI.
//!
//! For each scenario directory (see [`files`] for its layout): a fresh API server; the
//! `given` objects applied (CRDs first, then Namespaces, then the rest; a namespace named
//! and not given is created); the operator started over the plugin, the files it runs
//! `with` and the scenario's `plugins.toml`; then, for the first stage and each step in
//! turn, its objects applied and deleted and its expectations waited for. A stage has
//! converged when every expectation holds, no pass of any plugin is running or ready to
//! run, and both stay so for [`QUIET`]. A stage that has not within the scenario's timeout
//! fails, printing each expectation that does not hold, field by field (see [`matcher`]),
//! and the Warning events recorded so far.

mod files;
mod matcher;
mod objects;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde_json::Value;

pub use files::ScenarioError;
use files::{Document, Scenario, Stage};
use matcher::{Mismatch, mismatches, show};
use objects::{Objects, apply_order};

use crate::operator::{Operator, OperatorConfig, RunningOperator};
use wasm_operator_runtime::Runtime;

/// How long a stage's expectations must keep holding, with no pass to run, to count as
/// converged.
const QUIET: Duration = Duration::from_millis(300);

/// How often expectations are read while waiting.
const POLL: Duration = Duration::from_millis(100);

/// How a scenario run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Every stage converged to what it expects.
    Passed,
    /// A stage did not; the report says how.
    Failed,
}

/// Runs the scenario in `dir` against `plugin`, writing the report to `out` as it goes.
/// An `Err` is a scenario or plugin that cannot run at all (a bad file, a refused plugin).
pub async fn run(
    runtime: &Runtime,
    plugin: &Path,
    dir: &Path,
    out: &mut String,
) -> anyhow::Result<Verdict> {
    let scenario = Scenario::read(dir)?;
    let actors = actors(scenario.settings.actors.as_deref())?;
    let plugins = plugin_dir(plugin, &scenario)?;
    let server = wasm_operator_apiserver::ApiServer::start(wasm_operator_apiserver::ServerConfig {
        actors,
        ..Default::default()
    })
    .await?;
    for (key, properties) in &scenario.settings.secret_backend {
        let entry = properties
            .iter()
            .map(|(k, v)| (k.clone(), v.as_bytes().to_vec()))
            .collect();
        server.secret_backend_put(key, entry).with_context(|| {
            format!(
                "{}: secretBackend needs the external-secrets actor",
                dir.join(files::SETTINGS_FILE).display()
            )
        })?;
    }
    let client = server.client()?;
    let objects = Objects::new(client.clone());
    let name = dir.file_name().map_or_else(
        || dir.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let _ = writeln!(out, "scenario {name}");

    let given = &scenario.stages[0];
    if let Err(failure) = apply_stage(&objects, &scenario, given).await {
        let _ = writeln!(out, "  {}: {failure}", given.name);
        server.stop();
        return Ok(Verdict::Failed);
    }
    let mut config = OperatorConfig::new(plugins.path());
    config.watch_interval = None;
    // The plugin runs under the RBAC `wasm-operator rbac` grants it, as in a cluster: a
    // verb it uses without declaring fails the scenario.
    let operator_client =
        super::operator_account::operator_client(&server, runtime, &config).await?;
    let operator = Operator::start(runtime.clone(), operator_client, config).await?;
    let refusals = refused(&operator);
    if !refusals.is_empty() || operator.controllers().is_empty() {
        operator.shutdown().await;
        server.stop();
        anyhow::bail!(
            "{} does not serve: {}",
            plugin.display(),
            if refusals.is_empty() {
                "it is no reconciler".to_owned()
            } else {
                refusals
            }
        );
    }
    let serving: Vec<String> = operator
        .controllers()
        .iter()
        .map(|c| format!("{} {}", c.name(), c.description().version))
        .collect();
    let _ = writeln!(out, "  serving: {}", serving.join(", "));

    let mut verdict = Verdict::Passed;
    for (index, stage) in scenario.stages.iter().enumerate() {
        if index > 0
            && let Err(failure) = apply_stage(&objects, &scenario, stage).await
        {
            let _ = writeln!(out, "  {}: {failure}", stage.name);
            verdict = Verdict::Failed;
            break;
        }
        if !converge(&objects, &operator, &scenario, stage, out).await {
            verdict = Verdict::Failed;
            warning_events(&objects, out).await;
            break;
        }
    }
    operator.shutdown().await;
    server.stop();
    let _ = writeln!(
        out,
        "{}",
        match verdict {
            Verdict::Passed => "ok",
            Verdict::Failed => "FAILED",
        }
    );
    Ok(verdict)
}

/// The actors a scenario names: every one when it names none.
fn actors(
    names: Option<&[String]>,
) -> Result<Vec<wasm_operator_apiserver::Actor>, wasm_operator_apiserver::UnknownActor> {
    match names {
        None => Ok(wasm_operator_apiserver::Actor::ALL.to_vec()),
        Some(names) => super::actors(Some(names)),
    }
}

/// A directory with `plugin`, the files it runs `with` (beside it) and the scenario's
/// `plugins.toml` (else the one beside `plugin`, when there is one).
fn plugin_dir(plugin: &Path, scenario: &Scenario) -> anyhow::Result<tempfile::TempDir> {
    let beside = plugin.parent().unwrap_or(Path::new("."));
    let mut files = vec![plugin.to_path_buf()];
    files.extend(scenario.settings.with.iter().map(|w| beside.join(w)));
    let config = scenario
        .plugins_toml
        .clone()
        .or_else(|| Some(beside.join("plugins.toml")).filter(|p| p.is_file()));
    super::temp_plugin_dir(&files, config.as_deref())
}

/// The directory's files the operator refused, with the reasons, one per line.
fn refused(operator: &RunningOperator) -> String {
    operator
        .refusals()
        .iter()
        .map(|(file, reason)| format!("\n  {}: {reason}", file.display()))
        .collect()
}

/// Applies then deletes what `stage` says; the first failure, naming its document.
async fn apply_stage(objects: &Objects, scenario: &Scenario, stage: &Stage) -> Result<(), String> {
    let failed = |document: &Document, error: String| {
        format!(
            "{}: {} {}: {error}",
            document.origin(&scenario.dir),
            document.kind(),
            id(document)
        )
    };
    let namespaces = objects.missing_namespaces(&stage.apply).await;
    for document in namespaces.iter().chain(apply_order(&stage.apply)) {
        objects
            .apply(document)
            .await
            .map_err(|e| failed(document, e))?;
    }
    for document in &stage.delete {
        objects
            .delete(document)
            .await
            .map_err(|e| failed(document, e))?;
    }
    Ok(())
}

/// `namespace/name`, `name`, or `(any)` for a document naming none.
fn id(document: &Document) -> String {
    match (document.namespace(), document.name()) {
        (Some(namespace), Some(name)) => format!("{namespace}/{name}"),
        (None, Some(name)) => name.to_owned(),
        (Some(namespace), None) => format!("{namespace}/(any)"),
        (None, None) => "(any)".to_owned(),
    }
}

/// One expectation that does not hold, and how.
struct Failure<'s> {
    document: &'s Document,
    how: Unmet,
}

enum Unmet {
    /// The named object is not there.
    NotFound,
    /// It is there, and differs.
    Differs(Vec<Mismatch>),
    /// No object of the kind matches; the nearest, if any, and how it differs.
    NoneMatches(Option<(String, Vec<Mismatch>)>),
    /// An absent object is there.
    StillThere,
    /// The server could not be asked.
    Unreadable(String),
}

/// Waits for `stage`'s expectations to hold with the operator idle; reports either way.
async fn converge(
    objects: &Objects,
    operator: &RunningOperator,
    scenario: &Scenario,
    stage: &Stage,
    out: &mut String,
) -> bool {
    let started = Instant::now();
    let passes_before = passes(operator);
    let deadline = started + scenario.timeout();
    let mut quiet_since: Option<Instant> = None;
    loop {
        let failures = unmet(objects, stage).await;
        let idle = operator.controllers().iter().all(|c| c.queue().is_idle());
        if failures.is_empty() && idle {
            let since = *quiet_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= QUIET {
                let _ = writeln!(
                    out,
                    "  {}: converged in {:.1} s ({} passes): {} expected, {} absent",
                    stage.name,
                    started.elapsed().as_secs_f64(),
                    passes(operator) - passes_before,
                    stage.expect.len(),
                    stage.absent.len(),
                );
                return true;
            }
        } else {
            quiet_since = None;
        }
        if Instant::now() > deadline {
            let _ = writeln!(
                out,
                "  {}: not converged after {} s ({} passes{}): {} of {} expectations do not hold",
                stage.name,
                scenario.timeout().as_secs(),
                passes(operator) - passes_before,
                if idle { "" } else { ", still passing" },
                failures.len(),
                stage.expect.len() + stage.absent.len(),
            );
            for failure in &failures {
                report(failure, &scenario.dir, out);
            }
            return false;
        }
        tokio::time::sleep(POLL).await;
    }
}

fn passes(operator: &RunningOperator) -> u64 {
    operator
        .controllers()
        .iter()
        .map(|c| operator.metrics().passes(c.name()))
        .sum()
}

/// The expectations of `stage` that do not hold now.
async fn unmet<'s>(objects: &Objects, stage: &'s Stage) -> Vec<Failure<'s>> {
    let mut failures = Vec::new();
    for document in &stage.expect {
        let how = match expect(objects, document).await {
            Ok(None) => continue,
            Ok(Some(how)) => how,
            Err(error) => Unmet::Unreadable(error),
        };
        failures.push(Failure { document, how });
    }
    for document in &stage.absent {
        let how = match objects.get(document).await {
            Ok(None) => continue,
            Ok(Some(_)) => Unmet::StillThere,
            Err(error) => Unmet::Unreadable(error),
        };
        failures.push(Failure { document, how });
    }
    failures
}

/// How an expected document is not met, or `None` when it is.
async fn expect(objects: &Objects, document: &Document) -> Result<Option<Unmet>, String> {
    if document.name().is_some() {
        let Some(actual) = objects.get(document).await? else {
            return Ok(Some(Unmet::NotFound));
        };
        let differences = mismatches(&document.object, &actual);
        return Ok((!differences.is_empty()).then_some(Unmet::Differs(differences)));
    }
    let mut nearest: Option<(String, Vec<Mismatch>)> = None;
    for actual in objects.list(document).await? {
        let differences = mismatches(&document.object, &actual);
        if differences.is_empty() {
            return Ok(None);
        }
        if nearest
            .as_ref()
            .is_none_or(|(_, n)| differences.len() < n.len())
        {
            let name = actual
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            nearest = Some((name, differences));
        }
    }
    Ok(Some(Unmet::NoneMatches(nearest)))
}

/// One failure, as the report prints it.
fn report(failure: &Failure<'_>, base: &Path, out: &mut String) {
    let document = failure.document;
    let _ = write!(
        out,
        "    {}: {} {}",
        document.origin(base),
        document.kind(),
        id(document)
    );
    let fields = match &failure.how {
        Unmet::NotFound => {
            let _ = writeln!(out, ": not found");
            return;
        }
        Unmet::StillThere => {
            let _ = writeln!(out, ": still there (expected absent)");
            return;
        }
        Unmet::Unreadable(error) => {
            let _ = writeln!(out, ": cannot be read: {error}");
            return;
        }
        Unmet::NoneMatches(None) => {
            let _ = writeln!(out, ": there is none");
            return;
        }
        Unmet::NoneMatches(Some((name, fields))) => {
            let _ = writeln!(out, ": none matches; the nearest, {name}, differs");
            fields
        }
        Unmet::Differs(fields) => {
            let _ = writeln!(out);
            fields
        }
    };
    let secret = document.kind() == "Secret";
    for field in fields {
        // A Secret's values are never printed: only their size.
        let hidden = secret && field.path.starts_with("data");
        let found = match &field.found {
            None => "(missing)".to_owned(),
            Some(Value::String(value)) if hidden => {
                format!("(a value of {} bytes)", decoded_len(value))
            }
            Some(found) => show(found),
        };
        let expected = match &field.expected {
            Value::String(value) if hidden && value != matcher::ANY => {
                format!("(a value of {} bytes)", decoded_len(value))
            }
            expected => show(expected),
        };
        let _ = writeln!(out, "      {}", field.path);
        let _ = writeln!(out, "        expected: {expected}");
        let _ = writeln!(out, "        found:    {found}");
    }
}

/// The length of a Secret value, base64-decoded (its encoded length if it is no base64).
fn decoded_len(value: &str) -> usize {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(value)
        .map_or(value.len(), |bytes| bytes.len())
}

/// The Warning events recorded so far (what a failing plugin leaves), at most ten.
async fn warning_events(objects: &Objects, out: &mut String) {
    let events = Document {
        path: PathBuf::new(),
        index: 0,
        object: serde_json::json!({"apiVersion": "events.k8s.io/v1", "kind": "Event"}),
    };
    let Ok(events) = objects.list(&events).await else {
        return;
    };
    let warnings: Vec<&Value> = events.iter().filter(|e| e["type"] == "Warning").collect();
    if warnings.is_empty() {
        return;
    }
    let _ = writeln!(out, "  Warning events:");
    for event in warnings.iter().rev().take(10) {
        let regarding = &event["regarding"];
        let _ = writeln!(
            out,
            "    {} {}/{}: {}: {}",
            regarding["kind"].as_str().unwrap_or_default(),
            regarding["namespace"].as_str().unwrap_or_default(),
            regarding["name"].as_str().unwrap_or_default(),
            event["reason"].as_str().unwrap_or_default(),
            event["note"].as_str().unwrap_or_default(),
        );
    }
}
