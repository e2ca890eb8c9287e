//! `wasm-operator demo`: the project's main job, end to end on the embedded API server.
//!
//! 1. Starts the embedded API server with every cluster actor and installs the Keystone
//!    and GitLabSecrets CRDs.
//! 2. Runs the operator over the shipped plugins (gitlabsecrets linked to secretgen,
//!    keystone granted the cluster-scoped store it reads).
//! 3. Applies a Keystone whose credentials External Secrets syncs from the secret backend,
//!    prints each of its conditions as it turns True on the way to Ready, then the objects
//!    it made (Secrets as shapes, never values).
//!    With the keystoneidentitybackends plugin, an LDAP KeystoneIdentityBackend follows,
//!    shown through the satellite handshake, then listed as `kubectl get` prints it.
//! 4. Applies what the GitLab chart renders with its defaults (release `demo`, namespace
//!    `gitlab`, with the certificate set) and shows progress while it reconciles.
//! 5. Prints each Secret with its keys and their shapes (never the values), the certificate
//!    chain's subjects and expiry, and the Ready condition.
//!
//! With `--keep` the API server stays up and the kubeconfig path is printed for kubectl.

mod identity_backend;
mod keystone;
mod shape;
mod summary;
mod table;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use kube::api::{Api, DynamicObject, PostParams};
use kube::discovery::ApiResource;
use serde_json::Value;

use crate::operator::{Operator, OperatorConfig};
use wasm_operator_runtime::Runtime;

/// The GitLabSecrets CRD, as committed in `crds/`.
pub use super::GITLABSECRETS_CRD;

/// What the chart renders with its defaults for release `demo` in namespace `gitlab`.
pub const CHART_DEFAULTS: &str =
    include_str!("../../../../../guests/gitlabsecrets/testdata/chart-defaults.yaml");

/// How long the demo waits for the GitLabSecrets to be ready.
const READY_TIMEOUT: Duration = Duration::from_secs(120);

/// What the demo runs.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// The plugin directory.
    pub plugins: PathBuf,
    /// Leave the API server running afterwards (until Ctrl-C).
    pub keep: bool,
}

fn yaml(text: &str) -> anyhow::Result<Value> {
    serde_yaml_ng::from_str(text).context("embedded YAML")
}

fn resource(api_version: &str, kind: &str, plural: &str) -> ApiResource {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: api_version.into(),
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// Creates `object` as a `resource`; the error names the kind and the object.
pub async fn create(
    client: &kube::Client,
    object: Value,
    resource: &ApiResource,
) -> anyhow::Result<()> {
    let object: DynamicObject = serde_json::from_value(object).context("an object")?;
    let api: Api<DynamicObject> = match object.metadata.namespace.as_deref() {
        Some(ns) => Api::namespaced_with(client.clone(), ns, resource),
        None => Api::all_with(client.clone(), resource),
    };
    api.create(&PostParams::default(), &object)
        .await
        .with_context(|| {
            format!(
                "cannot create {} {}",
                resource.kind,
                object.metadata.name.unwrap_or_default()
            )
        })?;
    Ok(())
}

/// Runs the demo; prints to stdout.
pub async fn run(runtime: Runtime, options: &DemoOptions) -> anyhow::Result<()> {
    let started = Instant::now();
    if !options.plugins.is_dir() {
        anyhow::bail!("cannot read plugin directory {}", options.plugins.display());
    }
    // Every cluster actor runs, as with `dev-cluster --actors`.
    let server = wasm_operator_apiserver::ApiServer::start(wasm_operator_apiserver::ServerConfig {
        actors: wasm_operator_apiserver::Actor::ALL.to_vec(),
        ..Default::default()
    })
    .await?;
    let client = server.client()?;
    println!("wasm-operator demo");
    println!("  API server  {} (embedded)", server.url());

    let crd = resource(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
    );
    create(&client, yaml(GITLABSECRETS_CRD)?, &crd).await?;
    keystone::install_crds(&client).await?;
    let namespace = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gitlab"}});
    create(
        &client,
        namespace,
        &resource("v1", "Namespace", "namespaces"),
    )
    .await?;

    let plugins = plugin_dir(&options.plugins)?;
    let mut config = OperatorConfig::new(plugins.path());
    config.watch_interval = None;
    // As in a cluster: the operator is a ServiceAccount holding what `wasm-operator rbac`
    // grants its plugins.
    let operator_client =
        super::operator_account::operator_client(&server, &runtime, &config).await?;
    let operator = Operator::start(runtime.clone(), operator_client, config).await?;
    print_plugins(&runtime, &operator, &options.plugins);
    if operator.controller("gitlabsecrets").is_none() {
        anyhow::bail!(not_serving(&operator, &options.plugins));
    }

    if operator.controller("keystone").is_some() {
        keystone::apply(&server, &client).await?;
        let object = keystone::wait_ready(&client, started).await?;
        keystone::print(&client, &object).await?;
        println!();
        if operator.controller("keystoneidentitybackends").is_some() {
            identity_backend::apply(&server, &client).await?;
            identity_backend::wait_ready(&client, started).await?;
            identity_backend::print(&client).await?;
            println!();
        } else {
            println!(
                "  skipped     the KeystoneIdentityBackend: no keystoneidentitybackends plugin serves in this directory"
            );
        }
    } else {
        println!("  skipped     the Keystone: no keystone plugin serves in this directory");
    }

    let declared = yaml(CHART_DEFAULTS)?;
    let gitlabsecrets = resource("apps.gitlab.com/v2alpha1", "GitLabSecrets", "gitlabsecrets");
    create(&client, declared.clone(), &gitlabsecrets).await?;
    println!(
        "  applied     GitLabSecrets gitlab/demo: the chart's defaults for release demo, with the certificate set"
    );

    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), "gitlab", &gitlabsecrets);
    let object = wait_ready(&api, started).await?;
    summary::print(&client, &declared, &object).await?;
    println!("\ndone in {:.1} s", started.elapsed().as_secs_f64());

    if options.keep {
        let kubeconfig = std::env::temp_dir().join(format!(
            "wasm-operator-demo-{}.kubeconfig",
            std::process::id()
        ));
        server
            .write_kubeconfig(&kubeconfig)
            .with_context(|| format!("cannot write {}", kubeconfig.display()))?;
        println!("\nthe API server keeps running; the operator keeps reconciling");
        println!(
            "  kubectl --kubeconfig {} get gitlabsecrets,secrets -n gitlab",
            kubeconfig.display()
        );
        println!(
            "  kubectl --kubeconfig {} get keystones,keystoneidentitybackends -n openstack",
            kubeconfig.display()
        );
        println!("  Ctrl-C stops both");
        tokio::signal::ctrl_c()
            .await
            .context("waiting for Ctrl-C")?;
    }
    operator.shutdown().await;
    server.stop();
    Ok(())
}

/// The demo's plugin directory: the `.wasm` files of `source`, with `source`'s
/// `plugins.toml` when it has one, else one granting keystone the cluster-scoped
/// ClusterSecretStore its store gate reads (as `deploy/base/plugins.toml` does).
fn plugin_dir(source: &Path) -> anyhow::Result<tempfile::TempDir> {
    let files = super::plugin_files(source)
        .with_context(|| format!("cannot read plugin directory {}", source.display()))?;
    let config = Some(source.join("plugins.toml")).filter(|c| c.is_file());
    let dir = super::temp_plugin_dir(&files, config.as_deref())?;
    if config.is_none() {
        let target = dir.path().join("plugins.toml");
        std::fs::write(&target, "[plugins.keystone]\ncluster_scoped = true\n")
            .with_context(|| format!("cannot write {}", target.display()))?;
    }
    Ok(dir)
}

fn origin(plugin: &wasm_operator_runtime::Plugin) -> &'static str {
    match plugin.cache_outcome() {
        wasm_operator_runtime::CacheOutcome::Loaded => "precompiled artifact",
        _ => "compiled now",
    }
}

fn print_plugins(runtime: &Runtime, operator: &crate::operator::RunningOperator, dir: &Path) {
    println!("  plugins     {}", dir.display());
    for controller in operator.controllers() {
        let plugin = controller.plugin();
        println!(
            "    {} {} (reconciler of {}, {}{})",
            controller.name(),
            controller.description().version,
            controller.description().primary,
            origin(&plugin),
            if plugin.imports_planner() {
                ", linked to the planner"
            } else {
                ""
            }
        );
    }
    if let Some(planner) = runtime.planner() {
        println!("    {} (planner, {})", planner.name(), origin(&planner));
    }
    for (file, reason) in operator.refusals() {
        println!("    refused {}: {reason}", file.display());
    }
}

/// Why the demo cannot run: the gitlabsecrets plugin was refused (the refusal is printed
/// above), or the directory has none.
fn not_serving(operator: &crate::operator::RunningOperator, dir: &Path) -> String {
    let refused = operator.refusals().iter().any(|(file, _)| {
        file.file_stem()
            .is_some_and(|stem| stem == "gitlabsecrets" || stem == "secretgen")
    });
    if refused {
        return "the gitlabsecrets plugin is not serving: see its refusal above".into();
    }
    let serving: Vec<String> = operator
        .controllers()
        .iter()
        .map(|c| c.name().to_owned())
        .collect();
    format!(
        "{} has no gitlabsecrets plugin: the demo creates a GitLabSecrets, so it needs \
         gitlabsecrets.wasm and secretgen.wasm there (serving: {})",
        dir.display(),
        if serving.is_empty() {
            "nothing".to_owned()
        } else {
            serving.join(", ")
        }
    )
}

/// Polls the GitLabSecrets until its Ready condition is about the current generation and
/// says SecretsReady, printing progress as Secrets become ready.
async fn wait_ready(api: &Api<DynamicObject>, started: Instant) -> anyhow::Result<Value> {
    let mut last = None;
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        let object = serde_json::to_value(api.get("demo").await.context("reading gitlab/demo")?)?;
        let secrets = object.pointer("/status/secrets").and_then(Value::as_array);
        let ready = secrets.map_or(0, |s| s.iter().filter(|s| s["ready"] == true).count());
        let total = secrets.map_or(0, Vec::len);
        let condition = summary::ready_condition(&object);
        let current = condition
            .as_ref()
            .is_some_and(|c| c.get("observedGeneration") == object.pointer("/metadata/generation"));
        let reason = condition
            .as_ref()
            .and_then(|c| c["reason"].as_str())
            .unwrap_or("pending")
            .to_owned();
        let progress = (ready, total, reason.clone());
        if last.as_ref() != Some(&progress) {
            println!(
                "  [{:>5.1} s]  {ready}/{total} Secrets ready  ({reason})",
                started.elapsed().as_secs_f64()
            );
            last = Some(progress);
        }
        if current && reason == "SecretsReady" {
            return Ok(object);
        }
        if Instant::now() > deadline {
            anyhow::bail!("gitlab/demo was not ready after {READY_TIMEOUT:?}: {reason}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
