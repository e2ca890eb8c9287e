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

    succeeded(
        "the wasm build",
        &cargo(&dir, &["build", "--release", "--target", "wasm32-wasip2"]),
    );
    let test = "tests::a_config_map_is_copied_once_with_one_event ... ok";
    let native = succeeded("the native tests", &cargo(&dir, &["test"]));
    assert!(native.contains(test), "{native}");
    let wasm = succeeded(
        "the tests under wasmtime",
        &cargo(&dir, &["test", "--target", "wasm32-wasip2"]),
    );
    assert!(wasm.contains(test), "{wasm}");

    let plugin = target_dir().join("wasm32-wasip2/release/config_copier.wasm");
    let check = operator()
        .args(["plugin", "check"])
        .arg(&plugin)
        .output()
        .expect("runs");
    let report = succeeded("plugin check", &check);
    for expected in [
        "name:      config-copier",
        "verbs:     v1/ConfigMap (configmaps): get, list, watch, patch",
        "selector:  !config-copier.example.com/copy-of (only the primaries it matches)",
        "ok: every load-time check passed",
    ] {
        assert!(report.contains(expected), "{expected:?} in\n{report}");
    }

    // Its scenario runs the plugin on the real host and an embedded API server.
    let scenarios = dir.join("scenarios/copies-a-configmap");
    let test = operator()
        .args(["plugin", "test"])
        .arg(&plugin)
        .arg(&scenarios)
        .output()
        .expect("runs");
    let report = succeeded("plugin test", &test);
    for line in [
        "  serving: config-copier 0.1.0",
        "  given: converged in",
        "  01-a-changed-source-is-copied-again: converged in",
        "  02-the-copy-goes-with-its-source: converged in",
        "ok",
    ] {
        assert!(
            report.lines().any(|l| l.starts_with(line)),
            "{line:?} in\n{report}"
        );
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
