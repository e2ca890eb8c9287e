//! The guests' unit tests, compiled for wasm32-wasip2 and run under this host's wasmtime
//! (`wasm-operator wasi-run` as cargo's runner): every test that passes natively must pass
//! in wasm too.

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Native-only tests carry this attribute on the line above their `#[test]`.
const NATIVE_ONLY: &str = "#[cfg(not(target_arch = \"wasm32\"))]";

/// The `#[test]` functions in a package's `src/` that are compiled for wasm32 (those not
/// marked [`NATIVE_ONLY`]): how many run, and how many are `#[should_panic]` (wasm32 is
/// panic=abort, so libtest reports those ignored).
fn count_unit_tests(dir: &Path) -> (usize, usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (0, 0);
    };
    let mut counts = (0, 0);
    for path in entries.filter_map(Result::ok).map(|e| e.path()) {
        let (run, should_panic) = if path.is_dir() {
            count_unit_tests(&path)
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let lines: Vec<&str> = text.lines().map(str::trim).collect();
            let tests: Vec<usize> = (0..lines.len())
                .filter(|&i| lines[i] == "#[test]" && (i == 0 || lines[i - 1] != NATIVE_ONLY))
                .collect();
            let panicking = tests
                .iter()
                .filter(|&&i| {
                    lines
                        .get(i + 1)
                        .is_some_and(|l| l.starts_with("#[should_panic"))
                })
                .count();
            (tests.len() - panicking, panicking)
        } else {
            (0, 0)
        };
        counts.0 += run;
        counts.1 += should_panic;
    }
    counts
}

/// `(passed, ignored)` of the `test result: ok. N passed; F failed; I ignored; …` line.
fn result(stdout: &str) -> Option<(usize, usize)> {
    stdout.lines().find_map(|l| {
        let fields: Vec<&str> = l.strip_prefix("test result: ok. ")?.split(' ').collect();
        Some((fields.first()?.parse().ok()?, fields.get(4)?.parse().ok()?))
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
    let (expected, should_panic) = count_unit_tests(&workspace.join(dir).join("src"));
    assert!(expected > 0, "{package} has no unit tests");
    assert_eq!(
        result(&stdout),
        Some((expected, should_panic)),
        "{package}: not every unit test passed in wasm (passed, ignored as #[should_panic]):\n{stdout}"
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
fn the_gitlabsecrets_unit_tests_pass_under_wasmtime() {
    run_in_wasm("gitlabsecrets", "guests/gitlabsecrets");
}

#[test]
fn the_planner_records_unit_tests_pass_under_wasmtime() {
    run_in_wasm("wasm-operator-planner", "crates/planner");
}
