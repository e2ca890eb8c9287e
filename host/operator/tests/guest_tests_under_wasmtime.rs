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

/// The packages whose unit tests run in wasm, and their directories.
const PACKAGES: &[(&str, &str)] = &[
    ("wasm-operator-sdk", "guests/sdk"),
    ("fixture-reconciler", "tests/guests/fixture"),
    ("secretgen", "guests/secretgen"),
    ("wasm-operator-types", "crates/types"),
    ("gitlabsecrets", "guests/gitlabsecrets"),
    ("keystone", "guests/keystone"),
    (
        "keystoneidentitybackends",
        "guests/keystoneidentitybackends",
    ),
    ("glance", "guests/glance"),
    ("barbican", "guests/barbican"),
    ("cinder", "guests/cinder"),
    ("glancebackends", "guests/glancebackends"),
    ("barbicansecretstores", "guests/barbicansecretstores"),
    ("cinderbackends", "guests/cinderbackends"),
    ("cinderbackupbackends", "guests/cinderbackupbackends"),
    ("wasm-operator-planner", "crates/planner"),
];

/// `(passed, ignored)` of each test binary in the merged output of `cargo test`: the
/// crate name of the `Running unittests src/lib.rs (…/deps/<crate>-<hash>.wasm)` line, and
/// the `test result: ok. N passed; F failed; I ignored; …` line that follows it.
fn results(output: &str) -> Vec<(String, Option<(usize, usize)>)> {
    let mut results: Vec<(String, Option<(usize, usize)>)> = Vec::new();
    for line in output.lines().map(str::trim) {
        if let Some(running) = line.strip_prefix("Running unittests ") {
            let file = running
                .rsplit(['/', '\\'])
                .next()
                .unwrap_or_default()
                .trim_end_matches(')');
            let name = file.rsplit_once('-').map_or(file, |(name, _)| name);
            results.push((name.to_owned(), None));
        } else if let Some(rest) = line.strip_prefix("test result: ok. ")
            && let Some((_, result @ None)) = results.last_mut()
        {
            let fields: Vec<&str> = rest.split(' ').collect();
            *result = fields
                .first()
                .and_then(|p| p.parse().ok())
                .zip(fields.get(4).and_then(|i| i.parse().ok()));
        }
    }
    results
}

/// Builds and runs every package's unit tests in one `cargo test` (so the dependencies
/// they share are compiled once, with one set of features) and checks each ran all its
/// tests and passed.
#[test]
fn the_guests_unit_tests_pass_under_wasmtime() {
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
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new("sh");
    // cargo's `Running …` lines go to stderr and the tests' results to stdout: one stream
    // keeps them in order.
    command
        .args(["-c", "exec \"$@\" 2>&1", "sh", &cargo])
        .current_dir(&workspace)
        // Release, in the guests' own target directory: the test binaries reuse the
        // dependencies the build script already compiled for the shipped plugins.
        .args([
            "test",
            "--release",
            "--no-fail-fast",
            "--target",
            "wasm32-wasip2",
            "--lib",
        ]);
    for (package, _) in PACKAGES {
        command.args(["-p", package]);
    }
    let output = command
        .arg("--target-dir")
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
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the guests failed under wasmtime:\n{text}"
    );
    let results = results(&text);
    for (package, dir) in PACKAGES {
        let crate_name = package.replace('-', "_");
        let (expected, should_panic) = count_unit_tests(&workspace.join(dir).join("src"));
        assert!(expected > 0, "{package} has no unit tests");
        let ran = results
            .iter()
            .find(|(name, _)| *name == crate_name)
            .and_then(|(_, result)| *result);
        assert_eq!(
            ran,
            Some((expected, should_panic)),
            "{package}: not every unit test passed in wasm (passed, ignored as #[should_panic]):\n{text}"
        );
    }
}

#[test]
fn the_results_of_each_test_binary_are_told_apart() {
    let output = "   Compiling x v0.1.0
     Running unittests src/lib.rs (target/wasm-guests/wasm32-wasip2/release/deps/wasm_operator_sdk-0f3a.wasm)
running 2 tests
test result: ok. 2 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s
     Running unittests src/lib.rs (target/wasm-guests/wasm32-wasip2/release/deps/keystone-77.wasm)
test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out
";
    assert_eq!(
        results(output),
        vec![
            ("wasm_operator_sdk".to_owned(), Some((2, 1))),
            ("keystone".to_owned(), None),
        ]
    );
}
