//! Plugin lifecycle end to end: hot swap under load, refusals, removal, pinning (of
//! reconcilers, canaries and the planner; `require_pins`), canaries, planner relinking,
//! failing guests contained and reported on their objects, and a primary selector.

mod failures;
mod places;
mod planner;
mod selection;

use std::path::Path;
use std::time::Duration;

use base64::Engine as _;

use serde_json::{Value, json};
use wasm_operator::operator::{Operator, OperatorConfig, RunningOperator};
use wasm_operator_e2e::{Cluster, cluster_with, config_map, eventually, setup};
use wasm_operator_runtime::RuntimeConfig;
use wasm_operator_runtime::backend::ClusterBackend;
use wasm_operator_sdk::{ObjectRef, Patch};

const WAIT: Duration = Duration::from_secs(30);

fn test_plugin(file: &str) -> std::path::PathBuf {
    wasm_operator::cli::test_plugin_dir().join(file)
}

/// Replaces `dir/name` with `bytes` atomically (write aside, rename), as a deploy does.
fn install(dir: &Path, name: &str, bytes: &[u8]) {
    let aside = dir.join(format!(".{name}.tmp"));
    std::fs::write(&aside, bytes).expect("written aside");
    std::fs::rename(&aside, dir.join(name)).expect("renamed into place");
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).expect("a plugin file")
}

struct Harness {
    cluster: Cluster,
    operator: RunningOperator,
    plugins: tempfile::TempDir,
    /// What the operator was started with, to grant it the RBAC of changed plugins.
    runtime: wasm_operator_runtime::Runtime,
    config: OperatorConfig,
}

impl Harness {
    /// The operator over a plugin directory holding `files` (name, content), with `toml`
    /// as plugins.toml when given.
    async fn start(files: &[(&str, Vec<u8>)], toml: Option<&str>, fuel: bool) -> Self {
        // The shipped plugins' CRD is installed first, as a chart installs it: a plugin
        // whose kinds the cluster does not serve yet is refused until it does.
        let cluster = cluster_with(&[wasm_operator_e2e::gitlabsecrets_crd()]).await;
        let plugins = tempfile::tempdir().expect("plugins");
        for (name, bytes) in files {
            install(plugins.path(), name, bytes);
        }
        if let Some(toml) = toml {
            std::fs::write(plugins.path().join("plugins.toml"), toml).expect("plugins.toml");
        }
        let cache = wasm_operator_e2e::shared_cache();
        let runtime = wasm_operator_runtime::Runtime::new(RuntimeConfig {
            cache_dir: Some(cache.path().to_owned()),
            fuel,
            ..RuntimeConfig::default()
        })
        .expect("runtime");
        let mut config = OperatorConfig::new(plugins.path());
        config.watch_interval = Some(Duration::from_millis(100));
        config.controller.backoff.base = Duration::from_millis(50);
        config.controller.backoff.max = Duration::from_secs(1);
        config.health_addr = Some(([127, 0, 0, 1], 0).into());
        config.report_to = Some(ObjectRef {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some("ns".into()),
            name: "operator".into(),
        });
        let client = wasm_operator_e2e::operator_account::operator_client(
            &cluster.server,
            &runtime,
            &config,
        )
        .await;
        let operator = Operator::start(runtime.clone(), client, config.clone())
            .await
            .expect("the operator starts");
        Self {
            cluster,
            operator,
            plugins,
            runtime,
            config,
        }
    }

    /// Applies what `wasm-operator rbac` prints for the plugin directory as it is now, as
    /// an administrator does when installing a reconciler with new kinds.
    async fn grant_rbac(&self) {
        wasm_operator_e2e::operator_account::grant(
            &self.cluster.server,
            &self.runtime,
            &self.config,
        )
        .await;
    }

    /// The operator over a directory holding only the fixture, as `fixture.wasm`.
    async fn with_fixture() -> Self {
        let fixture = read(&test_plugin("fixture-reconciler.wasm"));
        Self::start(&[("fixture.wasm", fixture)], None, false).await
    }

    async fn create(&self, object: Value) -> Value {
        self.cluster.create(object).await
    }

    async fn echo(&self, name: &str) -> Option<Value> {
        self.cluster.echo(name).await
    }

    async fn served_by(&self, name: &str) -> Option<String> {
        self.echo(name)
            .await
            .and_then(|e| e["data"]["served-by"].as_str().map(str::to_owned))
    }

    fn metrics(&self) -> String {
        self.operator.metrics().render()
    }

    async fn wait_metric(&self, what: &str, needle: &str) {
        eventually(what, WAIT, || async {
            self.metrics().contains(needle).then_some(())
        })
        .await;
    }

    /// The events of namespace `ns` with `reason`.
    async fn events(&self, reason: &str) -> Vec<Value> {
        self.cluster.events_with_reason("ns", reason).await
    }
}

const SERVING_0_2_0: &str = r#"version="0.2.0",sha256="#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swapping_a_plugin_under_steady_load_loses_no_pass() {
    let h = Harness::with_fixture().await;
    let names: Vec<String> = (0..12).map(|i| format!("c{i}")).collect();
    for name in &names {
        h.create(config_map("ns", name, json!({"n": "0"}), None))
            .await;
    }
    // The load runs until 10 rounds after the new version serves, so passes run on both
    // versions and across the swap, however long the compile takes on a busy machine.
    let swapped = std::sync::Arc::new(tokio::sync::Notify::new());
    let load = {
        let backend = h.cluster.backend.clone();
        let names = names.clone();
        let swapped = swapped.clone();
        tokio::spawn(async move {
            let mut after_swap = None;
            let notified = swapped.notified();
            tokio::pin!(notified);
            let mut round = 0;
            while after_swap.is_none_or(|left| left > 0) {
                round += 1;
                for name in &names {
                    let r = ObjectRef {
                        api_version: "v1".into(),
                        kind: "ConfigMap".into(),
                        namespace: Some("ns".into()),
                        name: name.clone(),
                    };
                    backend
                        .patch(
                            &setup(),
                            &r,
                            &Patch::Merge(json!({"data": {"n": round.to_string()}})),
                            None,
                        )
                        .await
                        .expect("updated");
                }
                tokio::select! {
                    _ = &mut notified, if after_swap.is_none() => after_swap = Some(10),
                    _ = tokio::time::sleep(Duration::from_millis(60)) => {
                        after_swap = after_swap.map(|left: u32| left - 1);
                    }
                }
            }
            round
        })
    };
    tokio::time::sleep(Duration::from_millis(600)).await;
    install(
        h.plugins.path(),
        "fixture.wasm",
        &read(&test_plugin("fixture-next.wasm")),
    );
    h.wait_metric("0.2.0 serving", SERVING_0_2_0).await;
    swapped.notify_one();
    let last = load.await.expect("the load ran").to_string();
    for name in &names {
        eventually(
            &format!("{name}'s last change echoed by 0.2.0"),
            WAIT,
            || async {
                let echo = h.echo(name).await?;
                (echo["data"]["n"] == last.as_str() && echo["data"]["served-by"] == "0.2.0")
                    .then_some(())
            },
        )
        .await;
    }
    let metrics = h.metrics();
    assert!(
        !metrics.contains(r#"result="error""#),
        "no pass failed:\n{metrics}"
    );
    assert!(
        !metrics.contains(r#"version="0.1.0""#),
        "0.1.0 is retired:\n{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_swapped_in_version_passes_every_existing_primary_without_a_change() {
    let h = Harness::with_fixture().await;
    let names = ["s0", "s1", "s2"];
    for name in names {
        h.create(config_map("ns", name, json!({"n": "0"}), None))
            .await;
    }
    for name in names {
        let served = eventually(&format!("{name} echoed"), WAIT, || async {
            h.served_by(name).await
        })
        .await;
        assert_eq!(served, "0.1.0");
    }
    install(
        h.plugins.path(),
        "fixture.wasm",
        &read(&test_plugin("fixture-next.wasm")),
    );
    h.wait_metric("0.2.0 serving", SERVING_0_2_0).await;
    // Nothing touches the ConfigMaps: the swap alone passes each of them again.
    for name in names {
        eventually(&format!("{name} passed by 0.2.0"), WAIT, || async {
            (h.served_by(name).await? == "0.2.0").then_some(())
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_file_is_refused_with_the_reason_and_the_old_version_keeps_serving() {
    let h = Harness::with_fixture().await;
    h.create(config_map("ns", "before", json!({}), None)).await;
    eventually("before echoed", WAIT, || async { h.echo("before").await }).await;

    install(h.plugins.path(), "fixture.wasm", b"not wasm at all");
    h.wait_metric(
        "the refusal",
        r#"plugin="fixture",version="",sha256="",state="refused""#,
    )
    .await;
    let refused = eventually("a PluginRefused event", WAIT, || async {
        h.events("PluginRefused").await.into_iter().next()
    })
    .await;
    assert!(
        refused["note"]
            .as_str()
            .is_some_and(|n| n.contains("not a WebAssembly file")),
        "{refused}"
    );
    h.create(config_map("ns", "after", json!({}), None)).await;
    let served = eventually("after echoed", WAIT, || async {
        h.served_by("after").await
    })
    .await;
    assert_eq!(served, "0.1.0", "the old version serves on");

    install(
        h.plugins.path(),
        "fixture.wasm",
        &read(&test_plugin("fixture-next.wasm")),
    );
    h.wait_metric("the good file swapped in", SERVING_0_2_0)
        .await;
    // The recovered file's refusal leaves plugin_info.
    eventually("the refused row cleared", WAIT, || async {
        (!h.metrics().contains(r#"state="refused""#)).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_plugin_stops_its_controller() {
    let h = Harness::with_fixture().await;
    assert!(h.operator.controller("fixture").is_some());
    std::fs::remove_file(h.plugins.path().join("fixture.wasm")).expect("removed");
    eventually("the controller gone", WAIT, || async {
        h.operator.controller("fixture").is_none().then_some(())
    })
    .await;
    h.create(config_map("ns", "late", json!({}), None)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(h.echo("late").await.is_none());
    assert!(!h.metrics().contains(r#"state="serving""#));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_whose_sha256_is_not_the_pinned_one_is_refused() {
    let fixture = read(&test_plugin("fixture-reconciler.wasm"));
    let sha = {
        use sha2::Digest as _;
        hex::encode(sha2::Sha256::digest(&fixture))
    };
    let toml = format!("[plugins.fixture]\nsha256 = \"{sha}\"\n");
    let h = Harness::start(&[("fixture.wasm", fixture)], Some(&toml), false).await;
    assert!(
        h.operator.controller("fixture").is_some(),
        "the pinned file serves"
    );
    install(
        h.plugins.path(),
        "fixture.wasm",
        &read(&test_plugin("fixture-next.wasm")),
    );
    let refused = eventually("a PluginRefused event", WAIT, || async {
        h.events("PluginRefused").await.into_iter().next()
    })
    .await;
    assert!(
        refused["note"]
            .as_str()
            .is_some_and(|n| n.contains("is not the pinned")),
        "{refused}"
    );
    h.create(config_map("ns", "a", json!({}), None)).await;
    let served = eventually("a echoed", WAIT, || async { h.served_by("a").await }).await;
    assert_eq!(served, "0.1.0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_canary_reconciles_only_the_objects_its_selector_matches() {
    let toml =
        "[plugins.fixture.canary]\nfile = \"fixture-next.wasm\"\nselector = \"track=canary\"\n";
    let h = Harness::start(
        &[
            (
                "fixture.wasm",
                read(&test_plugin("fixture-reconciler.wasm")),
            ),
            ("fixture-next.wasm", read(&test_plugin("fixture-next.wasm"))),
        ],
        Some(toml),
        false,
    )
    .await;
    assert_eq!(
        h.operator.controllers().len(),
        1,
        "the canary file is not a plugin of its own"
    );
    eventually("the canary set", WAIT, || async {
        h.operator.controller("fixture")?.canary().map(|_| ())
    })
    .await;
    h.create(config_map("ns", "stable", json!({}), None)).await;
    let mut canary = config_map("ns", "tried", json!({}), None);
    canary["metadata"]["labels"] = json!({"track": "canary"});
    h.create(canary).await;
    let stable = eventually("stable echoed", WAIT, || async {
        h.served_by("stable").await
    })
    .await;
    let tried = eventually("tried echoed", WAIT, || async {
        h.served_by("tried").await
    })
    .await;
    assert_eq!((stable.as_str(), tried.as_str()), ("0.1.0", "0.2.0"));
}

fn sha256_of(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// The fixture as `fixture.wasm` and fixture-next as its canary, with `pins` (the
/// primary's, the canary's) in plugins.toml.
async fn with_pinned_canary(primary_pin: &str, canary_pin: &str) -> Harness {
    let toml = format!(
        "[plugins.fixture]\nsha256 = \"{primary_pin}\"\n\
         [plugins.fixture.canary]\nfile = \"fixture-next.wasm\"\nselector = \"track=canary\"\n\
         sha256 = \"{canary_pin}\"\n"
    );
    Harness::start(
        &[
            (
                "fixture.wasm",
                read(&test_plugin("fixture-reconciler.wasm")),
            ),
            ("fixture-next.wasm", read(&test_plugin("fixture-next.wasm"))),
        ],
        Some(&toml),
        false,
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_canary_with_its_own_pin_serves_beside_a_pinned_primary() {
    let primary = sha256_of(&read(&test_plugin("fixture-reconciler.wasm")));
    let canary = sha256_of(&read(&test_plugin("fixture-next.wasm")));
    let h = with_pinned_canary(&primary, &canary).await;

    eventually("the canary set", WAIT, || async {
        h.operator.controller("fixture")?.canary().map(|_| ())
    })
    .await;
    let mut tried = config_map("ns", "tried", json!({}), None);
    tried["metadata"]["labels"] = json!({"track": "canary"});
    h.create(tried).await;
    let served = eventually("tried echoed", WAIT, || async {
        h.served_by("tried").await
    })
    .await;
    assert_eq!(served, "0.2.0", "the pinned canary serves its primaries");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_canary_whose_own_pin_does_not_match_is_refused_while_its_primary_serves() {
    let primary = sha256_of(&read(&test_plugin("fixture-reconciler.wasm")));
    // The primary's sha256 as the canary's pin: fixture-next.wasm is not that file.
    let h = with_pinned_canary(&primary, &primary).await;

    let refused = eventually("a PluginRefused event", WAIT, || async {
        h.events("PluginRefused").await.into_iter().next()
    })
    .await;
    let note = refused["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("fixture-next.wasm") && note.contains("is not the pinned"),
        "{refused}"
    );
    assert!(
        h.operator
            .controller("fixture")
            .is_some_and(|c| c.canary().is_none())
    );
    let mut tried = config_map("ns", "tried", json!({}), None);
    tried["metadata"]["labels"] = json!({"track": "canary"});
    h.create(tried).await;
    let served = eventually("tried echoed", WAIT, || async {
        h.served_by("tried").await
    })
    .await;
    assert_eq!(served, "0.1.0", "the primary serves the canary's objects");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn require_pins_refuses_an_unpinned_file_and_accepts_a_pinned_one() {
    let fixture = read(&test_plugin("fixture-reconciler.wasm"));
    let toml = format!(
        "require_pins = true\n[plugins.fixture]\nsha256 = \"{}\"\n",
        sha256_of(&fixture)
    );
    let h = Harness::start(
        &[
            ("fixture.wasm", fixture),
            ("widget.wasm", read(&test_plugin("widget-reconciler.wasm"))),
        ],
        Some(&toml),
        false,
    )
    .await;

    let refused = eventually("a PluginRefused event", WAIT, || async {
        h.events("PluginRefused").await.into_iter().next()
    })
    .await;
    let note = refused["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("widget.wasm") && note.contains("no sha256 pin is set"),
        "{refused}"
    );
    assert!(
        h.operator.controller("widget").is_none(),
        "the unpinned file does not run"
    );
    h.create(config_map("ns", "a", json!({}), None)).await;
    let served = eventually("a echoed", WAIT, || async { h.served_by("a").await }).await;
    assert_eq!(served, "0.1.0", "the pinned file serves");
}
