//! `wasm-operator bench --quick`: every scenario runs end to end (real binaries, real
//! `.wasm`, embedded API server, operator processes) and writes its report. The figures
//! of a quick run mean little; what is asserted is what holds whatever the machine: the
//! report's shape and the zero-write goals.

use std::process::Command;

use serde_json::Value;

fn section<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["sections"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["id"] == id))
        .unwrap_or_else(|| panic!("no section {id} in {report}"))
}

/// The value of the row named `row` in the first data column of section `id`.
fn value(report: &Value, id: &str, row: &str) -> f64 {
    let section = section(report, id);
    let cells = section["rows"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r[0] == row))
        .unwrap_or_else(|| panic!("no row {row:?} in {section}"));
    cells[1][0]["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("{row:?} has no number: {cells}"))
}

/// Every cell of the row named `row` of section `id`.
fn cells(report: &Value, id: &str, row: &str) -> Vec<f64> {
    let section = section(report, id);
    let cells = section["rows"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r[0] == row))
        .unwrap_or_else(|| panic!("no row {row:?} in {section}"));
    cells[1]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            c["value"]
                .as_f64()
                .unwrap_or_else(|| panic!("{row:?} has no number: {c}"))
        })
        .collect()
}

#[test]
fn a_quick_bench_runs_every_scenario_and_writes_markdown_and_json() {
    let out = tempfile::tempdir().expect("tempdir");
    let cache = tempfile::tempdir().expect("tempdir");
    // As a user runs it: `wasm-operator bench` runs the `wasm-operator-bench` binary beside
    // it, whose process scenarios start that `wasm-operator` (`cargo test --workspace`
    // builds both into one directory).
    let operator = wasm_operator_bench::operator_exe().expect("the wasm-operator binary");
    let bench = std::path::Path::new(env!("CARGO_BIN_EXE_wasm-operator-bench"));
    assert_eq!(operator.parent(), bench.parent(), "one build directory");
    let output = Command::new(&operator)
        .args(["bench", "--quick", "--out"])
        .arg(out.path())
        .env("WASM_OPERATOR_CACHE_DIR", cache.path())
        .output()
        .expect("runs");
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );

    let markdown = std::fs::read_to_string(out.path().join("report.md")).expect("report.md");
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("report.json")).expect("report.json"),
    )
    .expect("JSON");
    let ids: Vec<&str> = report["sections"]
        .as_array()
        .expect("sections")
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect();
    assert_eq!(
        ids,
        [
            "wasm-native",
            "boundary",
            "api",
            "scale",
            "plugin-ops",
            "secretgen",
            "keystone",
            "keystone-scale",
            "authorizer",
            "cel"
        ]
    );
    for title in [
        "wasm vs native",
        "Boundary costs",
        "Scale",
        "secretgen",
        "Keystone reconciler",
        "Keystone scale",
        "API server authorizer",
        "API server CEL validation rules",
    ] {
        assert!(markdown.contains(title), "{title} missing from\n{markdown}");
    }
    // Both builds' converged passes were timed in CPU as well.
    let cpu = cells(
        &report,
        "wasm-native",
        "converged: CPU time per pass (whole process)",
    );
    assert!(cpu.len() == 3 && cpu[0] > 0.0 && cpu[1] > 0.0, "{cpu:?}");
    // Both identities' applies went through.
    let rates = cells(
        &report,
        "authorizer",
        "applies per second (median of 2 rounds of 50)",
    );
    assert!(
        rates.len() == 3 && rates[0] > 0.0 && rates[1] > 0.0,
        "{rates:?}"
    );
    // Both CRDs' applies went through.
    let rates = cells(
        &report,
        "cel",
        "applies per second (median of 2 rounds of 50)",
    );
    assert!(
        rates.len() == 3 && rates[0] > 0.0 && rates[1] > 0.0,
        "{rates:?}"
    );
    // A converged GitLabSecrets pass writes nothing.
    assert_eq!(
        value(&report, "api", "write requests per converged pass (goal 0)"),
        0.0
    );
    assert_eq!(
        value(&report, "api", "stored changes per converged pass (goal 0)"),
        0.0
    );
    // A converged Keystone pass, as .wasm and natively, writes nothing and reads only the
    // cache.
    for row in [
        "write requests per converged pass (goal 0)",
        "stored changes per converged pass (goal 0)",
        "server reads per converged pass (goal 0: the cache serves them)",
    ] {
        assert_eq!(cells(&report, "keystone", row), [0.0, 0.0], "{row}");
    }
    // Every scale run converged: N GitLabSecrets took at least N passes, and the restart
    // over the converged cluster passed each of them again.
    let scale = section(&report, "scale");
    let columns = scale["columns"].as_array().expect("columns");
    let cells = |row: &str| -> Vec<f64> {
        scale["rows"]
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r[0] == row))
            .unwrap_or_else(|| panic!("no row {row:?} in {scale}"))[1]
            .as_array()
            .expect("cells")
            .iter()
            .map(|c| {
                c["value"]
                    .as_f64()
                    .unwrap_or_else(|| panic!("{row:?}: {c}"))
            })
            .collect()
    };
    let passes = cells("passes to converge");
    let rss = cells("peak RSS of the operator");
    assert_eq!(passes.len(), columns.len() - 1, "one cell per run");
    for (i, column) in columns.iter().skip(1).enumerate() {
        let n: f64 = column
            .as_str()
            .and_then(|c| c.strip_prefix("N="))
            .and_then(|c| c.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("column {column}"));
        assert!(passes[i] >= n, "{column}: {} passes for N={n}", passes[i]);
        assert!(
            rss[i].is_finite() && rss[i] > 1.0,
            "{column}: peak RSS {}",
            rss[i]
        );
    }
    // The Keystone scale run reached Ready: every Keystone took its passes (the finalizers
    // alone are two each).
    let keystone_scale = section(&report, "keystone-scale");
    let passes = keystone_scale["rows"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r[0] == "passes to converge"))
        .and_then(|row| row[1][0]["value"].as_f64())
        .unwrap_or_else(|| panic!("no passes in {keystone_scale}"));
    assert!(passes >= 2.0 * 2.0, "{passes} passes for N=2");
}
