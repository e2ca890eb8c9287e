//! `wasm-operator bench --soak`, bounded: operator processes killed with `kill -9` under
//! API faults, the API server restarted from its write-ahead log, two replicas with leader
//! election whose leader is killed, Keystone lives; then the invariants: no acknowledged write lost, no
//! object passed by both replicas at once, no Job run twice, no Secret value changed, removed or rewritten,
//! everything converging once the faults stop, no Secret value in any log line.

use std::process::Command;

#[test]
fn killed_operators_under_faults_and_server_restarts_violate_no_invariant() {
    let out = tempfile::tempdir().expect("tempdir");
    let operator = wasm_operator_bench::operator_exe().expect("the wasm-operator binary");
    let output = Command::new(&operator)
        .args([
            "bench",
            "--soak",
            "--soak-kills",
            "20",
            "--soak-restart-every",
            "5",
            "--soak-replica-rounds",
            "2",
            "--soak-keystone-kills",
            "3",
            "--out",
        ])
        .arg(out.path())
        .output()
        .expect("runs");
    let report = std::fs::read_to_string(out.path().join("soak.md")).unwrap_or_default();
    assert!(
        output.status.success(),
        "{report}\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let count = |what: &str| -> u64 {
        report
            .lines()
            .find_map(|l| {
                l.strip_prefix(&format!("| {what} | "))?
                    .strip_suffix(" |")?
                    .parse()
                    .ok()
            })
            .unwrap_or_else(|| panic!("no {what:?} in:\n{report}"))
    };
    // 20 single lives, both replicas of 2 rounds, and 3 Keystone lives.
    assert_eq!(count("Operator kills"), 27, "{report}");
    assert_eq!(
        count("Keystones (one per life, killed 1–5 s in)"),
        3,
        "{report}"
    );
    assert!(count("Jobs they ran (each once)") >= 3, "{report}");
    assert_eq!(count("API server restarts"), 4, "{report}");
    assert_eq!(count("Rounds of two replicas (both killed)"), 2, "{report}");
    assert!(
        count("… in which the standby took over from the killed leader") >= 1,
        "{report}"
    );
    assert_eq!(count("Invariant violations"), 0, "{report}");
    assert!(count("Faults injected") >= 20, "{report}");
    assert!(
        count("… of lives that had finished a pass") >= 1,
        "some kills land after passes began: {report}"
    );
    assert!(count("Secret values tracked") >= 200, "{report}");
}
