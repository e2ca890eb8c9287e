//! The guests' unit tests, compiled for wasm32-wasip2 and run under this host's wasmtime
//! (`wasm-operator wasi-run` as cargo's runner): every test that passes natively must pass
//! in wasm too.

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `#[test]` functions in a package's `src/`.
fn count_unit_tests(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .map(|p| {
            if p.is_dir() {
                count_unit_tests(&p)
            } else if p.extension().is_some_and(|e| e == "rs") {
                std::fs::read_to_string(&p)
                    .map(|s| s.lines().filter(|l| l.trim() == "#[test]").count())
                    .unwrap_or(0)
            } else {
                0
            }
        })
        .sum()
}

/// `N` of the `test result: ok. N passed; …` line.
fn passed(stdout: &str) -> Option<usize> {
    stdout.lines().find_map(|l| {
        l.strip_prefix("test result: ok. ")?
            .split(' ')
            .next()?
            .parse()
            .ok()
    })
}

fn run_in_wasm(package: &str, dir: &str) {
    let workspace = workspace();
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target"));
    let runner = format!("{} wasi-run", env!("CARGO_BIN_EXE_wasm-operator"));
    // One key for every run, so the test binaries' artifacts stay trusted between runs.
    let key = target_dir.join("wasm-guests/artifacts.key");
    let made = Command::new(env!("CARGO_BIN_EXE_wasm-operator"))
        .arg("cache-key")
        .arg(&key)
        .status()
        .expect("cache-key runs");
    assert!(made.success(), "cache-key {}: {made}", key.display());
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(&workspace)
        // Release, in the guests' own target directory: the test binaries reuse the
        // dependencies the build script already compiled for the shipped plugins.
        .args([
            "test",
            "--release",
            "--target",
            "wasm32-wasip2",
            "--lib",
            "-p",
            package,
            "--target-dir",
        ])
        .arg(target_dir.join("wasm-guests"))
        .env("CARGO_TARGET_WASM32_WASIP2_RUNNER", runner)
        .env(
            "WASM_OPERATOR_CACHE_DIR",
            target_dir.join("wasm-guests/artifacts"),
        )
        .env("WASM_OPERATOR_CACHE_KEY_FILE", &key)
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{package} failed under wasmtime:\n{stdout}\n{stderr}"
    );
    let expected = count_unit_tests(&workspace.join(dir).join("src"));
    assert!(expected > 0, "{package} has no unit tests");
    assert_eq!(
        passed(&stdout),
        Some(expected),
        "{package}: not every unit test passed in wasm:\n{stdout}"
    );
}

#[test]
fn the_sdk_unit_tests_pass_under_wasmtime() {
    run_in_wasm("wasm-operator-sdk", "guests/sdk");
}

#[test]
fn the_fixture_unit_tests_pass_under_wasmtime() {
    run_in_wasm("fixture-reconciler", "tests/guests/fixture");
}

#[test]
fn the_secretgen_unit_tests_pass_under_wasmtime() {
    run_in_wasm("secretgen", "guests/secretgen");
}

#[test]
fn the_shared_types_unit_tests_pass_under_wasmtime() {
    run_in_wasm("wasm-operator-types", "crates/types");
}

#[test]
fn the_planner_records_unit_tests_pass_under_wasmtime() {
    run_in_wasm("wasm-operator-planner", "crates/planner");
}
