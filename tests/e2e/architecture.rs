//! The dependency rules of ARCHITECTURE.md, checked over `cargo metadata` and `cargo tree`:
//! a forbidden edge between the workspace's crates fails here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn cargo(args: &[&str]) -> String {
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(workspace())
        .args(args)
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8")
}

/// One dependency of a workspace crate on another.
#[derive(Debug, Clone)]
struct Edge {
    to: String,
    /// `normal`, `dev` or `build`.
    kind: String,
    optional: bool,
}

/// Every workspace crate with its path (relative to the root) and its edges to other
/// workspace crates.
fn graph() -> BTreeMap<String, (String, Vec<Edge>)> {
    let metadata: Value = serde_json::from_str(&cargo(&[
        "metadata",
        "--format-version",
        "1",
        "--no-deps",
        "--offline",
    ]))
    .expect("metadata JSON");
    let packages = metadata["packages"].as_array().expect("packages");
    let names: Vec<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    let root = workspace().canonicalize().expect("workspace root");
    packages
        .iter()
        .map(|p| {
            let manifest = PathBuf::from(p["manifest_path"].as_str().expect("manifest path"));
            let dir = manifest
                .parent()
                .and_then(|d| d.strip_prefix(&root).ok())
                .map(|d| d.to_string_lossy().into_owned())
                .expect("a crate inside the workspace");
            let edges = p["dependencies"]
                .as_array()
                .expect("dependencies")
                .iter()
                .filter(|d| names.contains(&d["name"].as_str().unwrap_or_default()))
                .map(|d| Edge {
                    to: d["name"].as_str().unwrap_or_default().to_owned(),
                    kind: d["kind"].as_str().unwrap_or("normal").to_owned(),
                    optional: d["optional"].as_bool().unwrap_or(false),
                })
                .collect();
            (
                p["name"].as_str().unwrap_or_default().to_owned(),
                (dir, edges),
            )
        })
        .collect()
}

/// The `[features]` of the workspace crate `name`.
fn features(name: &str) -> BTreeMap<String, Vec<String>> {
    let metadata: Value = serde_json::from_str(&cargo(&[
        "metadata",
        "--format-version",
        "1",
        "--no-deps",
        "--offline",
    ]))
    .expect("metadata JSON");
    let package = metadata["packages"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == name))
        .unwrap_or_else(|| panic!("no package {name}"));
    serde_json::from_value(package["features"].clone()).expect("features")
}

fn is_guest(dir: &str) -> bool {
    dir.starts_with("guests/") || dir.starts_with("tests/guests/")
}

fn is_host(dir: &str) -> bool {
    dir.starts_with("host/") || dir == "tests"
}

/// The names of the packages `cargo tree` lists for `args`.
fn tree(args: &[&str]) -> Vec<String> {
    let mut all = vec![
        "tree",
        "--prefix",
        "none",
        "--offline",
        "-e",
        "normal,build",
    ];
    all.extend_from_slice(args);
    let mut names: Vec<String> = cargo(&all)
        .lines()
        .filter_map(|l| l.split(' ').next())
        .map(str::to_owned)
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_workspace_is_laid_out_as_architecture_md_says() {
    let graph = graph();
    for crate_ in [
        "wasm-operator-types",
        "wasm-operator-runtime",
        "wasm-operator",
        "wasm-operator-native",
        "wasm-operator-bench",
        "wasm-operator-apiserver",
        "wasm-operator-controlplane",
        "wasm-operator-sdk",
    ] {
        assert!(
            graph.contains_key(crate_),
            "{crate_} is not in the workspace"
        );
    }
}

#[test]
fn architecture_md_names_every_workspace_crate_by_its_path() {
    let page =
        std::fs::read_to_string(workspace().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let missing: Vec<String> = graph()
        .into_values()
        .map(|(dir, _)| dir)
        .filter(|dir| !page.contains(&format!("`{dir}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md does not name {missing:?}"
    );
}

#[test]
fn guests_and_shared_crates_never_depend_on_host_crates() {
    let graph = graph();
    let mut forbidden = Vec::new();
    for (name, (dir, edges)) in &graph {
        if is_host(dir) {
            continue;
        }
        for edge in edges {
            let (to_dir, _) = &graph[&edge.to];
            if is_host(to_dir) {
                forbidden.push(format!(
                    "{name} ({dir}) -> {} ({to_dir}, {})",
                    edge.to, edge.kind
                ));
            }
        }
    }
    assert!(
        forbidden.is_empty(),
        "guest or shared crates on host crates: {forbidden:#?}"
    );
}

#[test]
fn shared_crates_never_depend_on_guest_crates() {
    let graph = graph();
    let mut forbidden = Vec::new();
    for (name, (dir, edges)) in &graph {
        if !dir.starts_with("crates/") {
            continue;
        }
        for edge in edges.iter().filter(|e| e.kind != "dev") {
            let (to_dir, _) = &graph[&edge.to];
            if is_guest(to_dir) {
                forbidden.push(format!("{name} -> {}", edge.to));
            }
        }
    }
    assert!(forbidden.is_empty(), "{forbidden:#?}");
}

#[test]
fn no_crate_depends_on_the_benchmarks() {
    let graph = graph();
    let dependents: Vec<&String> = graph
        .iter()
        .filter(|(_, (_, edges))| edges.iter().any(|e| e.to == "wasm-operator-bench"))
        .map(|(name, _)| name)
        .collect();
    assert!(
        dependents.is_empty(),
        "{dependents:?} depend on the benchmarks"
    );
}

#[test]
fn the_operator_reaches_the_api_server_only_through_its_demo_feature_and_no_guest_at_all() {
    let graph = graph();
    let (_, edges) = &graph["wasm-operator"];
    for edge in edges {
        let (to_dir, _) = &graph[&edge.to];
        assert!(
            !is_guest(to_dir),
            "the operator depends on the guest crate {}",
            edge.to
        );
        assert!(
            !["wasm-operator-native", "wasm-operator-bench"].contains(&edge.to.as_str()),
            "the operator depends on {}",
            edge.to
        );
        if ["wasm-operator-apiserver", "wasm-operator-controlplane"].contains(&edge.to.as_str()) {
            assert!(
                edge.optional && edge.kind == "normal",
                "the API server and the control plane must be optional dependencies: {edge:?}"
            );
        }
    }
    let features = features("wasm-operator");
    for dependency in [
        "dep:wasm-operator-apiserver",
        "dep:wasm-operator-controlplane",
    ] {
        let enabling: Vec<&String> = features
            .iter()
            .filter(|(_, enables)| enables.iter().any(|e| e == dependency))
            .map(|(name, _)| name)
            .collect();
        assert_eq!(
            enabling,
            ["demo"],
            "only the demo feature links {dependency}"
        );
    }

    // What the in-cluster image builds: no guest crate, no API server, no benchmarks.
    let image = tree(&["-p", "wasm-operator", "--no-default-features"]);
    let leaked: Vec<&String> = image
        .iter()
        .filter(|name| {
            graph.get(name.as_str()).is_some_and(|(dir, _)| {
                is_guest(dir) || ["host/apiserver", "host/controlplane"].contains(&dir.as_str())
            }) || name.as_str() == "wasm-operator-bench"
                || name.as_str() == "wasm-operator-native"
        })
        .collect();
    assert!(
        leaked.is_empty(),
        "the operator without its default features links {leaked:?}"
    );
    assert!(
        image.iter().any(|n| n == "wasm-operator-runtime"),
        "{image:?}"
    );
}

#[test]
fn the_runtime_links_no_kubernetes_client_and_the_types_no_engine_client_or_async_runtime() {
    let runtime = tree(&["-p", "wasm-operator-runtime"]);
    for forbidden in [
        "kube",
        "kube-client",
        "wasm-operator-apiserver",
        "wasm-operator-sdk",
    ] {
        assert!(
            !runtime.iter().any(|n| n == forbidden),
            "the runtime links {forbidden}"
        );
    }
    assert!(runtime.iter().any(|n| n == "wasmtime"), "{runtime:?}");
    let types = tree(&["-p", "wasm-operator-types"]);
    for forbidden in ["wasmtime", "kube", "kube-client", "tokio"] {
        assert!(
            !types.iter().any(|n| n == forbidden),
            "the types crate links {forbidden}"
        );
    }
    assert!(types.iter().any(|n| n == "k8s-openapi"), "{types:?}");
}
