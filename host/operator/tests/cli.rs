//! The `wasm-operator` binary's plugin commands, run as a user runs them.

use std::process::Command;

fn wasm_operator(cache: &tempfile::TempDir) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_wasm-operator"));
    command.env("WASM_OPERATOR_CACHE_DIR", cache.path());
    command
}

fn fixture() -> std::path::PathBuf {
    wasm_operator::cli::test_plugin_dir().join("fixture-reconciler.wasm")
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
        "contract:  wasm-operator:plugin@1.0.0".to_owned(),
        "name:      fixture".to_owned(),
        "version:   0.1.0".to_owned(),
        "manager:   fixture-reconciler".to_owned(),
        "primary:   v1/ConfigMap (configmaps), on GenerationChanged or LabelsChanged".to_owned(),
        "watches:   v1/ConfigMap via owner reference".to_owned(),
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
fn demo_loads_the_shipped_plugins_and_reports_a_bad_file_without_stopping() {
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(fixture(), dir.path().join("a-fixture.wasm")).expect("copy");
    std::fs::write(dir.path().join("b-broken.wasm"), "nope").expect("write");

    let output = wasm_operator(&cache)
        .args(["demo", "--plugins"])
        .arg(dir.path())
        .output()
        .expect("runs");

    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("fixture loaded in"), "{stdout}");
    assert!(
        stdout.contains("b-broken.wasm: not a WebAssembly file"),
        "{stdout}"
    );
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
