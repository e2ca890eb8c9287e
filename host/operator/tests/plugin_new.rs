//! `wasm-operator plugin new`: the generated crate, outside this workspace, builds its
//! `.wasm`, passes its test natively and under wasmtime, and passes `plugin check`, as an
//! author following its README would run them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn operator() -> Command {
    Command::new(env!("CARGO_BIN_EXE_wasm-operator"))
}

/// Where the generated crate builds: kept between runs beside this workspace's target, so
/// the SDK's dependencies compile once.
fn target_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("scaffold")
}

/// `cargo ARGS` in `dir`, with none of the variables this test was run with.
fn cargo(dir: &Path, args: &[&str]) -> Output {
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if key.starts_with("CARGO_") && key != "CARGO_HOME" {
            cargo.env_remove(key.as_ref());
        }
    }
    cargo
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target_dir())
        .args(args)
        .output()
        .expect("cargo runs")
}

fn succeeded(what: &str, output: &Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{what} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// What an author runs on a generated crate, each step required to succeed: the `.wasm`
/// build, the tests natively and under wasmtime (each containing `tests`), `plugin check`
/// and `plugin test` of `scenario` (its report holding a line starting with each of
/// `stages`). Returns the check's report.
fn build_test_check_and_run(
    dir: &Path,
    crate_name: &str,
    tests: &[&str],
    scenario: &str,
    stages: &[&str],
) -> String {
    succeeded(
        "the wasm build",
        &cargo(dir, &["build", "--release", "--target", "wasm32-wasip2"]),
    );
    let native = succeeded("the native tests", &cargo(dir, &["test"]));
    let wasm = succeeded(
        "the tests under wasmtime",
        &cargo(dir, &["test", "--target", "wasm32-wasip2"]),
    );
    for test in tests {
        assert!(native.contains(test), "{test} natively in\n{native}");
        assert!(wasm.contains(test), "{test} under wasmtime in\n{wasm}");
    }

    let plugin = target_dir().join(format!("wasm32-wasip2/release/{crate_name}.wasm"));
    let check = operator()
        .args(["plugin", "check"])
        .arg(&plugin)
        .output()
        .expect("runs");
    let check = succeeded("plugin check", &check);
    assert!(
        check.contains("ok: every load-time check passed"),
        "{check}"
    );

    // Its scenario runs the plugin on the real host and an embedded API server.
    let test = operator()
        .args(["plugin", "test"])
        .arg(&plugin)
        .arg(dir.join("scenarios").join(scenario))
        .output()
        .expect("runs");
    let report = succeeded("plugin test", &test);
    for line in stages.iter().chain(&["ok"]) {
        assert!(
            report.lines().any(|l| l.starts_with(line)),
            "{line:?} in\n{report}"
        );
    }
    check
}

#[test]
fn plugin_new_writes_a_crate_that_builds_tests_natively_and_under_wasmtime_and_loads() {
    let parent = tempfile::tempdir().expect("tempdir");
    let output = operator()
        .args(["plugin", "new", "config-copier", "--dir"])
        .arg(parent.path())
        .output()
        .expect("runs");
    succeeded("plugin new", &output);
    let dir = parent.path().join("config-copier");
    for file in [
        "Cargo.toml",
        ".cargo/config.toml",
        "src/lib.rs",
        "README.md",
    ] {
        assert!(dir.join(file).is_file(), "{file} written");
    }

    let report = build_test_check_and_run(
        &dir,
        "config_copier",
        &["tests::a_config_map_is_copied_once_with_one_event ... ok"],
        "copies-a-configmap",
        &[
            "  serving: config-copier 0.1.0",
            "  given: converged in",
            "  01-a-changed-source-is-copied-again: converged in",
            "  02-the-copy-goes-with-its-source: converged in",
        ],
    );
    for expected in [
        "name:      config-copier",
        "verbs:     v1/ConfigMap (configmaps): get, list, watch, patch",
        "selector:  !config-copier.example.com/copy-of (only the primaries it matches)",
    ] {
        assert!(report.contains(expected), "{expected:?} in\n{report}");
    }

    // A second `plugin new` over the same directory writes nothing.
    let again = operator()
        .args(["plugin", "new", "config-copier", "--dir"])
        .arg(parent.path())
        .output()
        .expect("runs");
    assert!(!again.status.success());
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("exists: nothing was written"), "{stderr}");
}

#[test]
fn plugin_new_with_a_custom_kind_writes_a_crate_whose_crd_types_tests_and_scenario_hold() {
    let parent = tempfile::tempdir().expect("tempdir");
    let output = operator()
        .args([
            "plugin",
            "new",
            "gadgets",
            "--kind",
            "example.com/v1alpha1/Gadget",
            "--dir",
        ])
        .arg(parent.path())
        .output()
        .expect("runs");
    succeeded("plugin new --kind", &output);
    let dir = parent.path().join("gadgets");
    let crd = std::fs::read_to_string(dir.join("crds/gadgets.example.com.yaml")).expect("the CRD");
    for expected in [
        "  name: gadgets.example.com",
        "    kind: Gadget",
        "    name: v1alpha1",
    ] {
        assert!(crd.lines().any(|l| l == expected), "{expected:?} in\n{crd}");
    }

    // The committed CRD is the one generated from the types, and the reconciler's test holds.
    let report = build_test_check_and_run(
        &dir,
        "gadgets",
        &["tests::the_message_is_written_into_an_owned_config_map_and_ready_says_so ... ok"],
        "writes-its-configmap",
        &[
            "  given: converged in",
            "  01-a-changed-message-is-written-again: converged in",
            "  02-the-configmap-goes-with-it: converged in",
        ],
    );
    assert!(
        report.contains("primary:   example.com/v1alpha1/Gadget (gadgets), on GenerationChanged"),
        "{report}"
    );
    let native = succeeded("the native tests", &cargo(&dir, &["test"]));
    assert!(
        native.contains("crd::the_committed_crd_is_generated_from_the_types ... ok"),
        "{native}"
    );

    let bad = operator()
        .args([
            "plugin",
            "new",
            "gadgets",
            "--kind",
            "example/v1/Gadget",
            "--dir",
        ])
        .arg(parent.path())
        .output()
        .expect("runs");
    assert!(!bad.status.success());
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("the group is a lowercase DNS name"),
        "{stderr}"
    );
}
