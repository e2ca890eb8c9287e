//! The `wasm-operator` binary's plugin commands, run as a user runs them.

use std::process::Command;

mod common;

fn wasm_operator(cache: &tempfile::TempDir) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_wasm-operator"));
    command.env("WASM_OPERATOR_CACHE_DIR", cache.path());
    command
}

fn fixture() -> std::path::PathBuf {
    wasm_operator::cli::test_plugin_dir().join("fixture-reconciler.wasm")
}

/// A plugin directory holding only the fixture.
fn fixture_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(fixture(), dir.path().join("fixture.wasm")).expect("copy");
    dir
}

#[test]
fn plugin_inspect_prints_the_description_and_the_sha256() {
    let cache = tempfile::tempdir().expect("tempdir");
    let output = wasm_operator(&cache)
        .args(["plugin", "inspect"])
        .arg(fixture())
        .output()
        .expect("runs");

    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let sha256 = {
        use sha2::Digest as _;
        hex::encode(sha2::Sha256::digest(
            std::fs::read(fixture()).expect("fixture"),
        ))
    };
    for expected in [
        format!("sha256:    {sha256}"),
        "kind:      reconciler".to_owned(),
        "contract:  wasm-operator:plugin@1.4.0".to_owned(),
        "name:      fixture".to_owned(),
        "version:   0.1.0".to_owned(),
        "manager:   fixture-reconciler".to_owned(),
        "primary:   v1/ConfigMap (configmaps), on every change".to_owned(),
        "watches:   v1/ConfigMap via owner reference".to_owned(),
        "watches:   v1/Secret via field index secret-refs".to_owned(),
        "index:     data-keys: the keys of the ConfigMap's data".to_owned(),
        "verbs:     v1/ConfigMap (configmaps): get, list, watch, patch, create".to_owned(),
    ] {
        assert!(
            stdout.lines().any(|l| l == expected),
            "missing {expected:?} in:\n{stdout}"
        );
    }
}

#[test]
fn plugin_inspect_of_a_reconciler_that_imports_the_planner_describes_it() {
    let cache = tempfile::tempdir().expect("tempdir");
    let output = wasm_operator(&cache)
        .args(["plugin", "inspect"])
        .arg(wasm_operator::cli::shipped_plugin_dir().join("gitlabsecrets.wasm"))
        .output()
        .expect("runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    for expected in ["kind:      reconciler", "name:      gitlabsecrets"] {
        assert!(
            stdout.lines().any(|l| l == expected),
            "missing {expected:?} in:\n{stdout}"
        );
    }
}

#[test]
fn plugin_inspect_lists_the_declared_subresource_verbs() {
    let cache = tempfile::tempdir().expect("tempdir");
    let blocks = wasm_operator::cli::test_plugin_dir().join("blocks-reconciler.wasm");
    let output = wasm_operator(&cache)
        .args(["plugin", "inspect"])
        .arg(&blocks)
        .output()
        .expect("runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout
            .lines()
            .any(|l| l == "subres:    v1/ServiceAccount (serviceaccounts/token): create"),
        "{stdout}"
    );
}

#[test]
fn plugin_inspect_of_a_bad_file_prints_one_line_and_exits_2() {
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.wasm");
    std::fs::write(&bad, "{}").expect("write");

    let output = wasm_operator(&cache)
        .args(["plugin", "inspect"])
        .arg(&bad)
        .output()
        .expect("runs");

    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        stderr,
        format!("{}: not a WebAssembly file\n", bad.display())
    );
}

#[test]
fn demo_reconciles_a_keystone_its_identity_backend_and_the_chart_defaults_and_prints_shapes_never_values_despite_a_bad_file()
 {
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    for file in [
        "gitlabsecrets.wasm",
        "keystone.wasm",
        "keystoneidentitybackends.wasm",
        "secretgen.wasm",
    ] {
        std::fs::copy(
            wasm_operator::cli::shipped_plugin_dir().join(file),
            dir.path().join(file),
        )
        .expect("copy");
    }
    std::fs::write(dir.path().join("b-broken.wasm"), "nope").expect("write");

    let output = wasm_operator(&cache)
        .args(["demo", "--plugins"])
        .arg(dir.path())
        .output()
        .expect("runs");

    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for expected in [
        "gitlabsecrets 0.1.0 (reconciler of apps.gitlab.com/v2alpha1/GitLabSecrets",
        "secretgen (planner",
        "b-broken.wasm: not a WebAssembly file",
        "16/16 Secrets ready  (SecretsReady)",
        "  demo-wildcard-tls  (kubernetes.io/tls)",
        "      tls.key                          PEM RSA PRIVATE KEY",
        "      password                         64 chars, alphanumeric",
        "  2. subject CN=example.com",
        "Ready: True (SecretsReady)",
        "keystone 0.1.0 (reconciler of keystone.openstack.c5c3.io/v1alpha1/Keystone",
        "applied     Keystone openstack/keystone",
        "DatabaseReady          DatabaseSynced",
        "KeystoneAPIReady       APIHealthy",
        "BootstrapReady         BootstrapComplete",
        "Ready                  AllReady",
        "Secret               keystone-fernet-keys",
        "Job                  keystone-bootstrap                           Complete",
        "Ready: True (AllReady): All sub-conditions are ready",
        "Endpoint: http://keystone.openstack.svc.cluster.local:5000/v3   Release: 2025.2",
        "applied     KeystoneIdentityBackend openstack/corp-ldap: LDAP, domain corp of Keystone keystone",
        "DomainReady            DomainProvisioned",
        "ConfigProjected        ConfigProjected",
        "mounts Secret keystone-domains-",
        "kubectl get keystoneidentitybackends -n openstack",
        "  NAME        READY   DOMAIN   KEYSTONE   AGE",
        "  corp-ldap   True    corp     keystone   ",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in:\n{stdout}"
        );
    }
    assert!(
        !stdout.contains("-----BEGIN"),
        "no value is printed:\n{stdout}"
    );
    for password in [
        "demo-db-password",
        "demo-admin-password",
        "demo-ldap-bind-password",
    ] {
        assert!(!stdout.contains(password), "{password} printed:\n{stdout}");
    }
}

#[test]
fn demo_with_a_missing_plugin_directory_names_it_and_fails() {
    let cache = tempfile::tempdir().expect("tempdir");
    let output = wasm_operator(&cache)
        .args(["demo", "--plugins", "/nonexistent/plugins"])
        .output()
        .expect("runs");

    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot read plugin directory /nonexistent/plugins"),
        "{stderr}"
    );
}

#[test]
fn demo_with_a_directory_without_gitlabsecrets_says_what_it_needs_and_what_serves() {
    let cache = tempfile::tempdir().expect("tempdir");
    let plugins = fixture_dir();
    let output = wasm_operator(&cache)
        .args(["demo", "--plugins"])
        .arg(plugins.path())
        .output()
        .expect("runs");

    assert!(!output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The fixture loaded (the directory was read), and the error names what is missing.
    assert!(stdout.contains("fixture 0.1.0 (reconciler of"), "{stdout}");
    assert!(
        stderr.contains("has no gitlabsecrets plugin")
            && stderr.contains("needs gitlabsecrets.wasm and secretgen.wasm")
            && stderr.contains("(serving: fixture)"),
        "{stderr}"
    );
}

#[test]
fn rbac_prints_the_cluster_role_the_plugins_need_and_nothing_more() {
    let cache = tempfile::tempdir().expect("tempdir");
    let plugins = fixture_dir();
    let rules = rbac_rules(&cache, plugins.path(), &[]).expect("rbac");
    assert_eq!(
        rules,
        [
            "/configmaps: create,get,list,patch,watch",
            "/secrets: get,list,watch",
            "events.k8s.io/events: create,patch",
        ]
    );
}

#[test]
fn rbac_with_leader_election_adds_a_role_on_the_one_lease_in_its_namespace() {
    let cache = tempfile::tempdir().expect("tempdir");
    let plugins = fixture_dir();
    let output = wasm_operator(&cache)
        .args([
            "rbac",
            "--leader-elect",
            "--lease-namespace",
            "ops",
            "--plugins",
        ])
        .arg(plugins.path())
        .output()
        .expect("runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let yaml = String::from_utf8_lossy(&output.stdout);
    let docs: Vec<&str> = yaml.split("---\n").collect();
    assert_eq!(docs.len(), 2, "{yaml}");
    assert!(!docs[0].contains("leases"), "{yaml}");
    let role: k8s_openapi::api::rbac::v1::Role = serde_yaml_ng::from_str(docs[1]).expect("a Role");
    assert_eq!(role.metadata.namespace.as_deref(), Some("ops"));
    let rules: Vec<String> = role
        .rules
        .unwrap_or_default()
        .iter()
        .map(|r| {
            format!(
                "{:?}: {}",
                r.resource_names.as_deref().unwrap_or_default(),
                r.verbs.join(",")
            )
        })
        .collect();
    assert_eq!(
        rules,
        ["[]: create", "[\"wasm-operator-leader\"]: get,patch,update"]
    );
}

/// The rules of the ClusterRole `wasm-operator rbac` prints for `plugins`, as
/// `groups/resources: verbs`; `Err(stderr)` when it fails.
fn rbac_rules(
    cache: &tempfile::TempDir,
    plugins: &std::path::Path,
    extra: &[&str],
) -> Result<Vec<String>, String> {
    let output = wasm_operator(cache)
        .args(["rbac", "--plugins"])
        .arg(plugins)
        .args(extra)
        .output()
        .expect("runs");
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    let yaml = String::from_utf8_lossy(&output.stdout);
    let first = yaml.split("---\n").next().unwrap_or_default();
    let role: k8s_openapi::api::rbac::v1::ClusterRole =
        serde_yaml_ng::from_str(first).expect("a ClusterRole");
    Ok(role
        .rules
        .unwrap_or_default()
        .iter()
        .map(|r| {
            format!(
                "{}/{}: {}",
                r.api_groups.as_deref().unwrap_or_default().join(","),
                r.resources.as_deref().unwrap_or_default().join(","),
                r.verbs.join(",")
            )
        })
        .collect())
}

#[test]
fn rbac_honours_plugins_toml_a_disabled_plugin_gets_none_and_a_canary_its_primarys_once() {
    let cache = tempfile::tempdir().expect("tempdir");
    let plugins = fixture_dir();
    let test_plugins = wasm_operator::cli::test_plugin_dir();
    std::fs::copy(
        test_plugins.join("widget-reconciler.wasm"),
        plugins.path().join("widget.wasm"),
    )
    .expect("copy");
    let fixture_alone = [
        "/configmaps: create,get,list,patch,watch",
        "/secrets: get,list,watch",
        "events.k8s.io/events: create,patch",
    ];
    // Enabled, the widget adds its kind's rules: the trigger of the disabled case below.
    let enabled = rbac_rules(&cache, plugins.path(), &[]).expect("rbac");
    assert!(
        enabled
            .iter()
            .any(|r| r.starts_with("tests.wasm-operator.dev/widgets:")),
        "{enabled:?}"
    );

    // A canary that is not a plugin: rbac loads canaries, so it refuses the directory.
    std::fs::write(plugins.path().join("fixture-next.wasm"), b"not wasm").expect("write");
    let toml = "[plugins.widget]\nenabled = false\n\n[plugins.fixture.canary]\nfile = \"fixture-next.wasm\"\nselector = \"track=canary\"\n";
    std::fs::write(plugins.path().join("plugins.toml"), toml).expect("plugins.toml");
    let refused = rbac_rules(&cache, plugins.path(), &[]).expect_err("a broken canary");
    assert!(refused.contains("fixture-next.wasm"), "{refused}");

    // The real canary (the fixture at 0.2.0, the same kinds): the fixture's rules, once,
    // and nothing of the disabled widget.
    std::fs::copy(
        test_plugins.join("fixture-next.wasm"),
        plugins.path().join("fixture-next.wasm"),
    )
    .expect("copy");
    assert_eq!(
        rbac_rules(&cache, plugins.path(), &[]).expect("rbac"),
        fixture_alone
    );
}

#[test]
fn run_reconciles_against_the_kubeconfigs_cluster_and_exits_cleanly_on_sigterm() {
    let tokio = tokio::runtime::Runtime::new().expect("tokio");
    let _context = tokio.enter();
    let cluster = common::Cluster::start(&tokio);
    let kubeconfig = &cluster.kubeconfig;
    let client = cluster.client();
    let cache = tempfile::tempdir().expect("tempdir");
    let plugins = fixture_dir();
    let mut child = wasm_operator(&cache)
        .args(["run", "--health-addr", "127.0.0.1:0", "--plugins"])
        .arg(plugins.path())
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("runs");
    let found = tokio.block_on(async {
        let config_maps = common::config_map_to_echo(client).await;
        for _ in 0..1000 {
            if let Some(echo) = config_maps.get_opt("a-echo").await.expect("get") {
                return Some(echo);
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        None
    });
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let exit = child.wait().expect("exits");
    let echo = found.expect("the operator reconciled the ConfigMap within 20 s");
    assert_eq!(
        echo.data.unwrap_or_default().get("x").map(String::as_str),
        Some("1")
    );
    assert!(exit.success(), "exit after SIGTERM: {exit:?}");
}

#[derive(clap::Parser)]
struct RunCli {
    #[command(subcommand)]
    command: RunSub,
}

#[derive(clap::Subcommand)]
enum RunSub {
    Run(wasm_operator::cli::run::RunArgs),
}

/// `run`'s options parsed from `args` (after the binary's name).
fn run_args(args: impl IntoIterator<Item = String>) -> wasm_operator::cli::run::RunArgs {
    let cli = <RunCli as clap::Parser>::try_parse_from(
        std::iter::once("wasm-operator".to_owned()).chain(args),
    )
    .expect("run accepts the arguments");
    let RunSub::Run(run) = cli.command;
    run
}

/// The Pod template of deploy/base/operator.yaml's one Deployment.
fn deployed_pod() -> k8s_openapi::api::core::v1::PodSpec {
    use k8s_openapi::api::apps::v1::Deployment;

    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../deploy/base/operator.yaml"
    ))
    .expect("deploy/base/operator.yaml");
    let mut deployments: Vec<Deployment> = common::yaml_documents(&text)
        .into_iter()
        .filter(|d| d["kind"] == "Deployment")
        .map(|d| serde_json::from_value(d).expect("a Deployment"))
        .collect();
    assert_eq!(deployments.len(), 1);
    deployments
        .remove(0)
        .spec
        .template
        .spec
        .expect("a pod spec")
}

/// `container`'s arguments with `$(VAR)` expanded as the kubelet does, each variable the
/// downward API fills with `field` replaced by `value(field)`.
fn expanded_args(
    container: &k8s_openapi::api::core::v1::Container,
    value: impl Fn(&str) -> String,
) -> Vec<String> {
    let mut args = container.args.clone().unwrap_or_default();
    for var in container.env.clone().unwrap_or_default() {
        let field = var
            .value_from
            .and_then(|v| v.field_ref)
            .map(|f| f.field_path);
        let Some(field) = field else { continue };
        for arg in &mut args {
            *arg = arg.replace(&format!("$({})", var.name), &value(&field));
        }
    }
    args
}

#[test]
fn the_deploy_manifests_parse_and_their_arguments_are_accepted_by_run() {
    let pod = deployed_pod();
    let run = run_args(expanded_args(&pod.containers[0], |_| "10.1.2.3".into()));
    assert!(run.in_cluster && run.leader_elect);
    assert!(run.config().leader_election.is_some());
    let webhook = run
        .config()
        .webhook
        .expect("the deployment serves webhooks");
    assert_eq!(webhook.addr.to_string(), "10.1.2.3:9443");
    assert!(
        matches!(
            &webhook.cert,
            wasm_operator::webhook::CertSource::Managed { secret_namespace, secret_name, service_namespace, service_name }
                if (secret_namespace.as_str(), secret_name.as_str(), service_namespace.as_str(), service_name.as_str())
                    == ("wasm-operator", "wasm-operator-webhook", "wasm-operator", "wasm-operator")
        ),
        "{:?}",
        webhook.cert
    );
}

#[test]
fn run_serves_metrics_and_health_on_loopback_unless_told_an_address() {
    let run = run_args(["run".into(), "--plugins".into(), "p".into()]);

    assert!(run.health_addr.ip().is_loopback(), "{}", run.health_addr);
}

#[test]
fn the_deployment_serves_metrics_on_the_pod_address_where_its_probes_reach_them() {
    let pod = deployed_pod();
    let container = &pod.containers[0];
    let run = run_args(expanded_args(container, |field| match field {
        "status.podIP" => "10.1.2.3".into(),
        other => format!("<{other}>"),
    }));

    assert_eq!(run.health_addr.to_string(), "10.1.2.3:8080");
    let ports = container.ports.clone().unwrap_or_default();
    let metrics = ports
        .iter()
        .find(|p| p.name.as_deref() == Some("metrics"))
        .expect("a metrics port");
    assert_eq!(metrics.container_port, 8080);
    for probe in [&container.liveness_probe, &container.readiness_probe] {
        let http = probe
            .as_ref()
            .and_then(|p| p.http_get.as_ref())
            .expect("an HTTP probe");
        // No host: the kubelet probes the Pod's IP, where the operator listens.
        assert_eq!(http.host, None);
        assert_eq!(
            http.port,
            k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String("metrics".into())
        );
    }
}

#[test]
fn the_deployment_draws_the_cache_key_into_a_memory_volume_the_operator_mounts_read_only() {
    let pod = deployed_pod();
    let inits = pod.init_containers.clone().unwrap_or_default();
    let init = inits.first().expect("an init container");
    let operator = &pod.containers[0];
    let env = |name: &str| {
        operator
            .env
            .clone()
            .unwrap_or_default()
            .into_iter()
            .find(|v| v.name == name)
            .and_then(|v| v.value)
    };
    let key = env("WASM_OPERATOR_CACHE_KEY_FILE").expect("a key file");
    let cache = env("WASM_OPERATOR_CACHE_DIR").expect("a cache dir");

    assert_eq!(
        init.args.clone().unwrap_or_default(),
        ["cache-key", key.as_str()]
    );
    assert!(
        !key.starts_with(&format!("{cache}/")),
        "the key is outside the cache"
    );
    let mount = operator
        .volume_mounts
        .clone()
        .unwrap_or_default()
        .into_iter()
        .find(|m| key.starts_with(&format!("{}/", m.mount_path)))
        .expect("the key's volume is mounted");
    assert_eq!(mount.read_only, Some(true));
    let volume = pod
        .volumes
        .clone()
        .unwrap_or_default()
        .into_iter()
        .find(|v| v.name == mount.name)
        .expect("the key's volume");
    assert_eq!(
        volume.empty_dir.and_then(|e| e.medium).as_deref(),
        Some("Memory")
    );
}

#[test]
fn cache_key_writes_a_private_key_the_cache_accepts_and_keeps_an_existing_one() {
    use std::os::unix::fs::PermissionsExt as _;
    let cache = tempfile::tempdir().expect("tempdir");
    let keys = tempfile::tempdir().expect("tempdir");
    let key = keys.path().join("key");

    let cache_key = || {
        let output = wasm_operator(&cache)
            .arg("cache-key")
            .arg(&key)
            .output()
            .expect("runs");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    cache_key();
    let written = std::fs::read(&key).expect("the key");
    let mode = std::fs::metadata(&key)
        .expect("metadata")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!((written.len(), format!("{mode:o}")), (32, "400".to_owned()));

    cache_key();
    assert_eq!(
        std::fs::read(&key).expect("the key"),
        written,
        "kept, not overwritten"
    );

    let plugins = fixture_dir();
    let check = |key: &std::path::Path| {
        wasm_operator(&cache)
            .arg("--cache-key-file")
            .arg(key)
            .args(["plugin", "check"])
            .arg(plugins.path().join("fixture.wasm"))
            .output()
            .expect("runs")
    };
    let accepted = check(&key);
    assert!(
        accepted.status.success(),
        "{}",
        String::from_utf8_lossy(&accepted.stderr)
    );
    let short = keys.path().join("short");
    std::fs::write(&short, b"too short").expect("written");
    let refused = check(&short);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && stderr.contains("at least 32 bytes"),
        "{stderr}"
    );
}

#[test]
fn the_deployments_memory_limit_covers_the_guest_memory_its_arguments_allow() {
    // secretgen is a planner: its calls run in a second store of gitlabsecrets' pass.
    const PLANNER: &str = "secretgen";
    const PLANNER_IMPORTER: &str = "gitlabsecrets";
    // The host itself: informer caches, warm pool slots, key generation (README, "Limits").
    const HOST_ROOM: u64 = 256 << 20;
    let pod = deployed_pod();
    let run = run_args(expanded_args(&pod.containers[0], |_| "10.1.2.3".into()));
    let limit = pod.containers[0]
        .resources
        .as_ref()
        .and_then(|r| r.limits.as_ref())
        .and_then(|l| l.get("memory"))
        .expect("a memory limit")
        .0
        .clone();
    let (number, unit) = limit.split_at(
        limit
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(limit.len()),
    );
    let shift = match unit {
        "Mi" => 20,
        "Gi" => 30,
        other => panic!("a memory limit in Mi or Gi, not {other:?}"),
    };
    let limit_bytes = number.parse::<u64>().expect("a number") << shift;
    let concurrency = u64::try_from(run.config().controller.concurrency).expect("fits");
    let default_cap =
        u64::try_from(wasm_operator_runtime::Limits::default().memory_bytes).expect("fits");
    let config = wasm_operator::operator::plugin_config::PluginsToml::read_file(
        std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../deploy/base/plugins.toml"
        )),
    )
    .expect("deploy/base/plugins.toml");
    let mut guests = 0;
    let mut reconcilers = 0;
    for file in std::fs::read_dir(wasm_operator::cli::shipped_plugin_dir()).expect("plugins") {
        let path = file.expect("entry").path();
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_owned();
        if stem == PLANNER {
            continue;
        }
        let settings = config.plugins.get(&stem).unwrap_or_else(|| {
            panic!("deploy/base/plugins.toml has no entry for the shipped plugin {stem}")
        });
        let cap = settings.memory_mib.map_or(default_cap, |mib| mib << 20);
        let stores = if stem == PLANNER_IMPORTER { 2 } else { 1 };
        guests += concurrency * stores * cap;
        reconcilers += 1;
    }
    assert_eq!(reconcilers, 10, "the shipped reconcilers");
    assert!(
        limit_bytes >= guests + HOST_ROOM,
        "limit {limit} < {} MiB of guest memory + {} MiB for the host",
        guests >> 20,
        HOST_ROOM >> 20
    );
}

#[test]
fn plugin_check_passes_a_good_file_and_refuses_one_whose_pin_does_not_match() {
    let cache = tempfile::tempdir().expect("tempdir");
    let plugins = fixture_dir();
    let file = plugins.path().join("fixture.wasm");
    let output = wasm_operator(&cache)
        .args(["plugin", "check"])
        .arg(&file)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(stdout.contains("name:      fixture"), "{stdout}");
    assert!(
        stdout.contains("ok: every load-time check passed"),
        "{stdout}"
    );

    std::fs::write(
        plugins.path().join("plugins.toml"),
        format!("[plugins.fixture]\nsha256 = \"{}\"\n", "0".repeat(64)),
    )
    .expect("plugins.toml");
    let output = wasm_operator(&cache)
        .args(["plugin", "check"])
        .arg(&file)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.contains("refused:") && stdout.contains("is not the pinned"),
        "{stdout}"
    );
}

/// `wasm-operator webhooks` with `args`, over a directory holding the gatekeeper test
/// plugin (which admits) and the fixture (which does not).
fn webhooks(args: &[&str]) -> std::process::Output {
    let cache = tempfile::tempdir().expect("tempdir");
    let plugins = fixture_dir();
    std::fs::copy(
        wasm_operator::cli::test_plugin_dir().join("gatekeeper-reconciler.wasm"),
        plugins.path().join("gatekeeper.wasm"),
    )
    .expect("copy");
    wasm_operator(&cache)
        .arg("webhooks")
        .arg("--plugins")
        .arg(plugins.path())
        .args(args)
        .output()
        .expect("runs")
}

#[test]
fn webhooks_prints_a_configuration_per_phase_for_the_plugins_that_admit() {
    use base64::Engine as _;
    let ca = tempfile::NamedTempFile::new().expect("a CA file");
    std::fs::write(ca.path(), "-----BEGIN CERTIFICATE-----\nMIIB\n").expect("written");
    let ca_path = ca.path().to_str().expect("a UTF-8 path");
    let output = webhooks(&[
        "--service",
        "ops/hooks",
        "--port",
        "8443",
        "--ca-bundle",
        ca_path,
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let documents = common::yaml_documents(&String::from_utf8_lossy(&output.stdout));
    let ca_bundle =
        base64::engine::general_purpose::STANDARD.encode("-----BEGIN CERTIFICATE-----\nMIIB\n");
    let mut hooks: Vec<(String, String, String, String)> = Vec::new();
    for document in &documents {
        let kind = document["kind"].as_str().unwrap_or_default();
        for hook in document["webhooks"].as_array().into_iter().flatten() {
            let client = &hook["clientConfig"];
            assert_eq!(client["caBundle"], ca_bundle.as_str(), "{hook}");
            assert_eq!(client["service"]["namespace"], "ops", "{hook}");
            assert_eq!(client["service"]["name"], "hooks", "{hook}");
            assert_eq!(client["service"]["port"], 8443, "{hook}");
            let text = |p: &str| hook.pointer(p).and_then(|v| v.as_str()).unwrap_or_default();
            hooks.push((
                kind.to_owned(),
                text("/name").to_owned(),
                text("/clientConfig/service/path").to_owned(),
                text("/failurePolicy").to_owned(),
            ));
        }
    }
    let row = |kind: &str, name: &str, path: &str, policy: &str| {
        (kind.into(), name.into(), path.into(), policy.into())
    };
    assert_eq!(
        hooks,
        vec![
            row(
                "MutatingWebhookConfiguration",
                "default.gatekeeper.wasm-operator.dev",
                "/admission/gatekeeper/default",
                "Fail"
            ),
            row(
                "ValidatingWebhookConfiguration",
                "validate.gatekeeper.wasm-operator.dev",
                "/admission/gatekeeper/validate",
                "Fail"
            ),
            row(
                "ValidatingWebhookConfiguration",
                "validate-ignore.gatekeeper.wasm-operator.dev",
                "/admission/gatekeeper/validate",
                "Ignore"
            ),
        ]
    );
}

#[test]
fn webhooks_with_a_bad_argument_names_it_and_prints_nothing() {
    let missing = std::env::temp_dir().join("wasm-operator-no-such-ca.pem");
    let missing = missing.to_str().expect("a UTF-8 path");
    let table: [(&[&str], &str); 4] = [
        (&["--service", "ops/hooks"], ""),
        (
            &["--service", "hooks"],
            "--service \"hooks\" is not NAMESPACE/NAME",
        ),
        (
            &["--service", "ops/hooks", "--ca-bundle", missing],
            "cannot read /",
        ),
        (&[], "--service"),
    ];
    for (args, cause) in table {
        let output = webhooks(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        if cause.is_empty() {
            assert!(output.status.success(), "{args:?}: {stderr}");
            continue;
        }
        assert!(!output.status.success(), "{args:?}");
        assert!(stderr.contains(cause), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
}

/// The process's perf map, read after it exited (`None` when it wrote none).
fn perf_map_of(child: std::process::Child) -> (std::process::Output, Option<String>) {
    let path = std::path::PathBuf::from(format!("/tmp/perf-{}.map", child.id()));
    let output = child.wait_with_output().expect("runs");
    let map = std::fs::read_to_string(&path).ok();
    let _ = std::fs::remove_file(&path);
    (output, map)
}

#[test]
fn perf_map_env_writes_the_guest_functions_for_perf() {
    let plugin = wasm_operator::cli::shipped_plugin_dir().join("gitlabsecrets.wasm");
    let cache = tempfile::tempdir().expect("tempdir");
    let inspect = |perf_map: Option<&str>| {
        let mut command = wasm_operator(&cache);
        command
            .args(["plugin", "inspect"])
            .arg(&plugin)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        match perf_map {
            Some(value) => command.env(wasm_operator_runtime::PERF_MAP_ENV, value),
            None => command.env_remove(wasm_operator_runtime::PERF_MAP_ENV),
        };
        perf_map_of(command.spawn().expect("spawns"))
    };

    // Compiled in this process, then loaded from the precompiled artifact: both register.
    for round in ["compiled", "from the artifact"] {
        let (output, map) = inspect(Some("1"));
        assert!(
            output.status.success(),
            "{round}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let map = map.unwrap_or_else(|| panic!("{round}: no /tmp/perf-PID.map written"));
        let line = map
            .lines()
            .find(|l| l.contains("gitlabsecrets::reconcile::reconcile"))
            .unwrap_or_else(|| panic!("{round}: the guest's reconcile is not in the map"));
        // `ADDRESS SIZE NAME`, both numbers hex, as perf reads them.
        let fields: Vec<&str> = line.splitn(3, ' ').collect();
        assert!(
            fields.len() == 3
                && u64::from_str_radix(fields[0].trim_start_matches("0x"), 16).is_ok()
                && u64::from_str_radix(fields[1], 16).is_ok_and(|size| size > 0),
            "{round}: not a perf map line: {line:?}"
        );
        // The second round has an artifact to load: the first sealed one into the cache.
        let cached = std::fs::read_dir(cache.path()).expect("cache dir").count();
        assert!(cached > 0, "{round}: the cache directory is empty");
    }

    // Off unless asked for: the same command, with the variable unset or not `1`, writes none.
    for value in [None, Some("0")] {
        let (output, map) = inspect(value);
        assert!(output.status.success());
        assert!(map.is_none(), "{value:?}: a perf map was written");
    }
}
