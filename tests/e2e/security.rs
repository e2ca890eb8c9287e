//! Plugins cannot reach past what they declared: the rogue plugins try each escape against
//! the real host and the embedded API server, and the host refuses it with a named error
//! while the fixture keeps serving.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use wasm_operator::operator::{OperatorConfig, RunningOperator};
use wasm_operator_e2e::{Cluster, cluster_with, config_map, eventually};
use wasm_operator_sdk::ObjectRef;

const WAIT: Duration = Duration::from_secs(20);

/// The operator over a plugin directory holding `files` (built plugin files, copied under
/// the stems given), with `plugins_toml`.
struct Harness {
    cluster: Cluster,
    operator: Option<RunningOperator>,
    _plugins: tempfile::TempDir,
}

impl Harness {
    async fn start(files: &[(PathBuf, &str)], plugins_toml: &str) -> Self {
        wasm_operator_e2e::init_logs();
        let other = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}});
        let cluster = cluster_with(&[other]).await;
        for object in [
            config_map("ns", "operator", json!({}), None),
            config_map("ns", "victim", json!({}), None),
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "theirs", "namespace": "other"}, "stringData": {"k": "v"}}),
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "mine", "namespace": "ns"}, "stringData": {"k": "v"}}),
        ] {
            cluster.create(object).await;
        }
        let plugins = tempfile::tempdir().expect("plugins");
        let built = wasm_operator::cli::test_plugin_dir();
        for (file, stem) in files {
            std::fs::copy(
                built.join(file),
                plugins.path().join(format!("{stem}.wasm")),
            )
            .expect("a test plugin is copied");
        }
        std::fs::write(plugins.path().join("plugins.toml"), plugins_toml).expect("plugins.toml");
        let cache = wasm_operator_e2e::shared_cache();
        let mut config = OperatorConfig::new(plugins.path());
        config.report_to = Some(ObjectRef {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some("ns".into()),
            name: "operator".into(),
        });
        let operator = cluster.start_operator(cache, config).await;
        Self {
            cluster,
            operator: Some(operator),
            _plugins: plugins,
        }
    }

    /// Creates a primary asking the rogue for `attempt`, and returns what the host answered.
    async fn attempt(&self, name: &str, attempt: &str) -> String {
        let mut primary = config_map("ns", name, json!({}), None);
        primary["metadata"]["annotations"] = json!({ "rogue.wasm-operator.dev/attempt": attempt });
        self.cluster.create(primary).await;
        let result = format!("{name}-result");
        eventually(&format!("the rogue's {attempt} result"), WAIT, || async {
            let found = self.cluster.get("v1", "ConfigMap", "ns", &result).await?;
            found["data"]["outcome"].as_str().map(str::to_owned)
        })
        .await
    }

    async fn refusals(&self) -> Vec<String> {
        self.cluster
            .events_with_reason("ns", "PluginRefused")
            .await
            .iter()
            .filter_map(|e| e["note"].as_str().map(str::to_owned))
            .collect()
    }

    /// Proves the fixture serves: a new ConfigMap gets its echo.
    async fn fixture_serves(&self, name: &str) {
        self.cluster
            .create(config_map("ns", name, json!({"k": "v"}), None))
            .await;
        eventually(&format!("the fixture's echo of {name}"), WAIT, || async {
            self.cluster.echo(name).await
        })
        .await;
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        if let Some(operator) = self.operator.take() {
            operator.kill();
        }
    }
}

/// A test plugin file, as the plugin directory holds it under `stem`.
fn test_plugin(file: &str, stem: &'static str) -> (PathBuf, &'static str) {
    (wasm_operator::cli::test_plugin_dir().join(file), stem)
}

fn rogue() -> (PathBuf, &'static str) {
    test_plugin("rogue-reconciler.wasm", "rogue")
}

fn fixture() -> (PathBuf, &'static str) {
    test_plugin("fixture-reconciler.wasm", "fixture")
}

#[tokio::test]
async fn a_plugin_declaring_a_kind_with_another_kinds_plural_is_refused_and_the_others_keep_serving()
 {
    let harness = Harness::start(
        &[
            fixture(),
            test_plugin("rogue-kinds-reconciler.wasm", "rogue-kinds"),
        ],
        "",
    )
    .await;
    let refusals = eventually("the PluginRefused event", WAIT, || async {
        let found = harness.refusals().await;
        (!found.is_empty()).then_some(found)
    })
    .await;
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert!(
        refusals[0].ends_with(
            "rogue-kinds.wasm: plugin rogue-kinds: primary v1/ConfigMap declares plural \
             \"secrets\", but the API server serves v1/ConfigMap as \"configmaps\""
        ),
        "{refusals:?}"
    );
    harness.fixture_serves("served").await;
    let operator = harness.operator.as_ref().expect("running");
    assert!(operator.controller("rogue-kinds").is_none());
    assert!(operator.controller("fixture").is_some());
}

#[tokio::test]
async fn a_pass_reaches_only_its_primarys_namespace_owner_and_events() {
    let harness = Harness::start(&[fixture(), rogue()], "").await;
    // (attempt, what the host answers: "allowed" for the valid rows)
    let cases = [
        ("own-namespace", "allowed"),
        (
            "other-namespace",
            "forbidden: plugin rogue: may not get v1/Secret in namespace \"other\": it may reach \
             its primary's namespace \"ns\"",
        ),
        (
            "every-namespace",
            "forbidden: plugin rogue: may not list v1/Secret in every namespace",
        ),
        (
            "create-elsewhere",
            "forbidden: plugin rogue: may not create v1/ConfigMap in namespace \"other\"",
        ),
        (
            "foreign-owner",
            "is not the pass's primary v1/ConfigMap ns/foreign-owner",
        ),
        (
            "forged-owner-uid",
            "(uid 00000000-0000-0000-0000-000000000000) is not the pass's primary",
        ),
        (
            "owner-in-body",
            "metadata.ownerReferences names v1/ConfigMap victim",
        ),
        (
            "owner-in-patch",
            "metadata.ownerReferences names v1/ConfigMap victim",
        ),
        ("own-child", "allowed"),
        (
            "service-account-token",
            "plugins may not write Secrets of type kubernetes.io/service-account-token",
        ),
        (
            "event-on-another-object",
            "may record events only about its primary v1/ConfigMap ns/event-on-another-object \
             and objects it owns; v1/ConfigMap ns/victim is neither",
        ),
        ("event-on-primary", "allowed"),
        (
            "undeclared-token",
            "forbidden: plugin rogue: did not declare verb create on the token subresource of \
             v1/ServiceAccount in describe()",
        ),
    ];
    let mut wrong = Vec::new();
    for (attempt, expected) in cases {
        let outcome = harness.attempt(attempt, attempt).await;
        let right = if expected == "allowed" {
            outcome == "allowed"
        } else {
            outcome.contains(expected)
        };
        if !right {
            wrong.push(format!("{attempt}: {outcome:?} is not {expected:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Nothing the refused attempts tried landed.
    let cluster = &harness.cluster;
    assert!(
        cluster
            .get("v1", "ConfigMap", "other", "create-elsewhere-planted")
            .await
            .is_none()
    );
    for refused in [
        "foreign-owner-adopted",
        "forged-owner-uid-forged",
        "owner-in-body-smuggled",
    ] {
        assert!(
            cluster
                .get("v1", "ConfigMap", "ns", refused)
                .await
                .is_none(),
            "{refused} exists"
        );
    }
    let victim = cluster
        .get("v1", "ConfigMap", "ns", "victim")
        .await
        .expect("victim");
    assert_eq!(victim["metadata"].get("ownerReferences"), None, "{victim}");
    assert!(
        cluster
            .get("v1", "Secret", "ns", "service-account-token-token")
            .await
            .is_none()
    );
    let child = cluster
        .get("v1", "ConfigMap", "ns", "own-child-child")
        .await
        .expect("the allowed child");
    assert_eq!(child["metadata"]["ownerReferences"][0]["name"], "own-child");
    let rogue_events: Vec<Value> = cluster.events_with_reason("ns", "Rogue").await;
    assert_eq!(rogue_events.len(), 1, "{rogue_events:?}");
    assert_eq!(rogue_events[0]["regarding"]["name"], "event-on-primary");
    assert_eq!(
        rogue_events[0]["reportingController"],
        "wasm-operator/rogue"
    );
    harness.fixture_serves("still-served").await;
}

#[tokio::test]
async fn plugins_toml_grants_a_plugin_another_namespace() {
    let harness = Harness::start(&[rogue()], "[plugins.rogue]\nnamespaces = [\"other\"]\n").await;
    assert_eq!(
        harness.attempt("granted", "other-namespace").await,
        "allowed"
    );
    let outcome = harness.attempt("still-not-all", "every-namespace").await;
    assert!(
        outcome.contains(
            "may not list v1/Secret in every namespace: it may reach its primary's namespace \
             \"ns\" and the namespaces plugins.toml grants (other)"
        ),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_plugin_whose_kind_is_not_served_yet_is_refused_once_and_starts_when_its_crd_is_installed()
 {
    let shipped = wasm_operator::cli::shipped_plugin_dir();
    let harness = Harness::start(
        &[
            (shipped.join("gitlabsecrets.wasm"), "gitlabsecrets"),
            (shipped.join("secretgen.wasm"), "secretgen"),
        ],
        "",
    )
    .await;
    let refusals = eventually("the PluginRefused event", WAIT, || async {
        let found = harness.refusals().await;
        (!found.is_empty()).then_some(found)
    })
    .await;
    assert!(
        refusals[0].contains(
            "plugin gitlabsecrets: primary apps.gitlab.com/v2alpha1/GitLabSecrets is not served \
             by the API server"
        ),
        "{refusals:?}"
    );
    let operator = harness.operator.as_ref().expect("running");
    assert!(operator.controller("gitlabsecrets").is_none());
    // The load is tried again while the CRD is missing: discovery is asked again.
    let asked = || {
        harness
            .cluster
            .counts()
            .get("discover", "apps.gitlab.com/v2alpha1")
    };
    let first = asked();
    eventually("the load tried again", WAIT, || async {
        (asked() > first).then_some(())
    })
    .await;
    harness
        .cluster
        .create(wasm_operator_e2e::gitlabsecrets_crd())
        .await;
    eventually("the gitlabsecrets controller", WAIT, || async {
        operator.controller("gitlabsecrets")
    })
    .await;
    // Tried again every few seconds while the CRD was missing, reported once.
    let events = harness
        .cluster
        .events_with_reason("ns", "PluginRefused")
        .await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(
        events[0].get("series"),
        None,
        "reported more than once: {events:?}"
    );
}

/// The end-to-end operator runs as a ServiceAccount holding exactly what `wasm-operator rbac`
/// prints for its plugins: `kubectl auth can-i` with that ServiceAccount's token says yes to
/// every printed rule and no to what a plugin never declared.
#[tokio::test]
async fn the_operators_service_account_may_do_what_rbac_prints_and_nothing_more() {
    use wasm_operator::cli::operator_account::{NAME, NAMESPACE, token};

    let h = Harness::start(&[fixture()], "").await;
    let dir = h._plugins.path();
    let options = wasm_operator::cli::run::RbacOptions {
        namespace: None,
        lease: None,
        webhook_secret: None,
        clusters_namespace: wasm_operator::targets::DEFAULT_CLUSTERS_NAMESPACE,
        resolves_services: true,
        service_account: Some((NAMESPACE, NAME)),
    };
    let printed = wasm_operator::cli::run::rbac_yaml(
        &wasm_operator_e2e::runtime_with_cache(wasm_operator_e2e::shared_cache()),
        dir,
        None,
        &options,
    )
    .await
    .expect("rbac renders");
    let role: Value = serde_yaml_ng::from_str(printed.split("---\n").next().expect("a role"))
        .expect("the ClusterRole");
    assert_eq!(role["kind"], "ClusterRole", "{printed}");

    let admin = h.cluster.server.client().expect("an admin client");
    let token = token(&admin, NAMESPACE, NAME)
        .await
        .expect("a token of the operator's ServiceAccount");
    let kubeconfig = tempfile::NamedTempFile::new().expect("a kubeconfig file");
    h.cluster
        .server
        .write_kubeconfig(kubeconfig.path())
        .expect("kubeconfig");
    let mut asked = 0;
    for rule in role["rules"].as_array().expect("rules") {
        let group = rule["apiGroups"][0].as_str().unwrap_or_default();
        let resource = rule["resources"][0].as_str().unwrap_or_default();
        let qualified = if group.is_empty() {
            resource.to_owned()
        } else {
            match resource.split_once('/') {
                Some((r, s)) => format!("{r}.{group}/{s}"),
                None => format!("{resource}.{group}"),
            }
        };
        for verb in rule["verbs"].as_array().expect("verbs") {
            let verb = verb.as_str().unwrap_or_default().to_owned();
            assert_eq!(
                can_i(kubeconfig.path(), &token, &verb, &qualified).await,
                "yes",
                "{verb} {qualified}"
            );
            asked += 1;
        }
    }
    assert!(
        asked >= 4,
        "the fixture's ClusterRole grants something: {printed}"
    );
    for (verb, resource) in [
        ("delete", "namespaces"),
        ("create", "clusterrolebindings.rbac.authorization.k8s.io"),
        ("delete", "customresourcedefinitions.apiextensions.k8s.io"),
        ("update", "leases.coordination.k8s.io"),
    ] {
        assert_eq!(
            can_i(kubeconfig.path(), &token, verb, resource).await,
            "no",
            "{verb} {resource}"
        );
    }
}

/// What `kubectl auth can-i VERB RESOURCE[/SUBRESOURCE] -A` answers for `token` (run off
/// the test's runtime, which serves the API server kubectl asks).
async fn can_i(kubeconfig: &std::path::Path, token: &str, verb: &str, resource: &str) -> String {
    let (resource, subresource) = match resource.split_once('/') {
        Some((r, s)) => (r, Some(s)),
        None => (resource, None),
    };
    let mut command = std::process::Command::new("kubectl");
    command
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["--token", token, "auth", "can-i", "-A", verb, resource]);
    if let Some(subresource) = subresource {
        command.arg(format!("--subresource={subresource}"));
    }
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .expect("the kubectl task")
        .expect("kubectl runs (.ci/run installs it)");
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout).trim(),
        String::from_utf8_lossy(&output.stderr).trim()
    )
}
