//! `deploy/`, the kustomization a cluster administrator applies as is: its generated parts
//! are what `wasm-operator rbac` and `webhooks` print for the shipped plugins, and it builds
//! with the real `kubectl kustomize` into what `run` accepts.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod common;

const REGENERATE: &str = "UPDATE_DEPLOY=1 cargo test -p wasm-operator --test deploy";

fn deploy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy")
}

/// A file `deploy/` keeps from a command's output.
struct Generated {
    /// Under `deploy/`.
    file: &'static str,
    /// The command, after `wasm-operator` and before `--plugins` and `--plugins-config`.
    args: Vec<&'static str>,
}

/// What the Deployment's arguments need of the RBAC: its Lease, its webhook Secret, cluster
/// DNS; each role bound to its ServiceAccount.
const RBAC: [&str; 5] = [
    "--service-account=wasm-operator/wasm-operator",
    "--leader-elect",
    "--lease-namespace=wasm-operator",
    "--webhook-secret=wasm-operator/wasm-operator-webhook",
    "--cluster-dns",
];

fn generated_files() -> [Generated; 3] {
    [
        Generated {
            file: "rbac.yaml",
            args: [["rbac"].as_slice(), &RBAC].concat(),
        },
        Generated {
            file: "namespaced/rbac.yaml",
            args: [["rbac", "--namespace=openstack"].as_slice(), &RBAC].concat(),
        },
        Generated {
            file: "base/webhooks.yaml",
            args: vec!["webhooks", "--service=wasm-operator/wasm-operator"],
        },
    ]
}

/// The text `generated` holds: a header naming the command, then its output.
fn render(generated: &Generated, cache: &Path, key: &Path) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_wasm-operator"))
        .env("WASM_OPERATOR_CACHE_DIR", cache)
        .env("WASM_OPERATOR_CACHE_KEY_FILE", key)
        .args(&generated.args)
        .arg("--plugins")
        .arg(wasm_operator::cli::shipped_plugin_dir())
        .arg("--plugins-config")
        .arg(deploy().join("base/plugins.toml"))
        .output()
        .expect("wasm-operator runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    format!(
        "# Generated for the shipped plugins (target/wasm-guests/plugins) and\n\
         # deploy/base/plugins.toml by:\n\
         #   wasm-operator {} --plugins=DIR --plugins-config=deploy/base/plugins.toml\n\
         # `{REGENERATE}` writes it again; a test fails while it is stale.\n{}",
        generated.args.join(" "),
        String::from_utf8_lossy(&output.stdout)
    )
}

#[test]
fn the_deploy_rbac_and_webhooks_are_what_the_commands_print_for_the_shipped_plugins() {
    // One cache under one key: the plugins compile once for the three commands.
    let cache = tempfile::tempdir().expect("tempdir");
    let key = tempfile::tempdir().expect("tempdir");
    let key = key.path().join("key");
    let made = Command::new(env!("CARGO_BIN_EXE_wasm-operator"))
        .arg("cache-key")
        .arg(&key)
        .status()
        .expect("wasm-operator runs");
    assert!(made.success());
    let mut stale = Vec::new();
    for generated in &generated_files() {
        let path = deploy().join(generated.file);
        let expected = render(generated, cache.path(), &key);
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if committed != expected {
            if std::env::var_os("UPDATE_DEPLOY").is_some() {
                std::fs::write(&path, &expected).expect("writes");
            }
            stale.push(generated.file);
        }
    }
    assert!(
        stale.is_empty(),
        "deploy/{stale:?} stale: run `{REGENERATE}` and commit (already written when UPDATE_DEPLOY is set)"
    );
}

/// `kubectl kustomize DIR`'s objects.
fn kustomize(dir: &Path) -> Vec<Value> {
    let output = Command::new("kubectl")
        .arg("kustomize")
        .arg(dir)
        .output()
        .expect("kubectl runs (.ci/run installs it)");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    common::yaml_documents(&String::from_utf8_lossy(&output.stdout))
}

fn named<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

#[test]
fn the_kustomization_builds_the_whole_install_bound_to_the_operators_service_account() {
    let objects = kustomize(&deploy());
    let mut kinds: Vec<&str> = objects.iter().filter_map(|o| o["kind"].as_str()).collect();
    kinds.sort();
    kinds.dedup();
    assert_eq!(
        kinds,
        [
            "ClusterRole",
            "ClusterRoleBinding",
            "ConfigMap",
            "Deployment",
            "MutatingWebhookConfiguration",
            "Namespace",
            "PodDisruptionBudget",
            "Role",
            "RoleBinding",
            "Service",
            "ServiceAccount",
            "ValidatingWebhookConfiguration",
        ]
    );
    for binding in objects
        .iter()
        .filter(|o| o["kind"] == "ClusterRoleBinding" || o["kind"] == "RoleBinding")
    {
        assert_eq!(
            binding["subjects"],
            serde_json::json!([{"kind": "ServiceAccount", "name": "wasm-operator", "namespace": "wasm-operator"}]),
            "{binding}"
        );
    }
    let config = named(&objects, "ConfigMap", "wasm-operator-plugins");
    assert_eq!(
        config["data"]["plugins.toml"].as_str(),
        Some(
            std::fs::read_to_string(deploy().join("base/plugins.toml"))
                .expect("plugins.toml")
                .as_str()
        )
    );
    let pod = &named(&objects, "Deployment", "wasm-operator")["spec"]["template"]["spec"];
    assert_eq!(pod["serviceAccountName"], "wasm-operator");
    let mounted = pod["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|v| v["configMap"]["name"] == "wasm-operator-plugins")
        .expect("the plugins' ConfigMap is a volume");
    let mount = pod["containers"][0]["volumeMounts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["name"] == mounted["name"])
        .expect("mounted");
    let args: Vec<&str> = pod["containers"][0]["args"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        args.contains(
            &format!(
                "--plugins-config={}/plugins.toml",
                mount["mountPath"].as_str().unwrap_or_default()
            )
            .as_str()
        ),
        "{args:?}"
    );
    let pdb = named(&objects, "PodDisruptionBudget", "wasm-operator");
    assert_eq!(pdb["spec"]["minAvailable"], 1);
    assert_eq!(pdb["spec"]["selector"]["matchLabels"], pod_labels(&objects));
    let service = named(&objects, "Service", "wasm-operator");
    let ports: Vec<&str> = service["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["targetPort"].as_str())
        .collect();
    assert_eq!(ports, ["webhook", "metrics"]);
}

fn pod_labels(objects: &[Value]) -> Value {
    named(objects, "Deployment", "wasm-operator")["spec"]["template"]["metadata"]["labels"].clone()
}

#[test]
fn the_namespaced_overlay_reconciles_one_namespace_with_roles_there() {
    let objects = kustomize(&deploy().join("namespaced"));
    let pod = &named(&objects, "Deployment", "wasm-operator")["spec"]["template"]["spec"];
    let args = &pod["containers"][0]["args"];
    assert!(
        args.as_array()
            .is_some_and(|a| a.iter().any(|a| a == "--namespace=openstack")),
        "{args}"
    );
    named(&objects, "Namespace", "openstack");
    let role = named(&objects, "Role", "wasm-operator");
    assert_eq!(role["metadata"]["namespace"], "openstack");
    // Cluster-wide only what keystone's cluster_scoped grant reads: cluster-scoped kinds.
    let cluster_role = named(&objects, "ClusterRole", "wasm-operator");
    let resources: Vec<&str> = cluster_role["rules"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| r["resources"].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(resources, ["clustersecretstores", "priorityclasses"]);
}
