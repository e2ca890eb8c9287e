//! `soak.md`.

use std::fmt::Write as _;

use anyhow::Context as _;

use super::{SoakOptions, SoakReport};

pub(super) fn write_report(options: &SoakOptions, report: &SoakReport) -> anyhow::Result<()> {
    let mut md = String::new();
    let _ = writeln!(md, "# wasm-operator soak\n");
    let _ = writeln!(
        md,
        "Seed {}; {} kills (`kill -9` 0.1–1.2 s into a life), the API server restarted every {} kills; {:.0} s.\n",
        options.seed,
        report.kills,
        options.restart_every,
        report.elapsed.as_secs_f64()
    );
    let _ = writeln!(md, "| What | Count |\n|---|---|");
    let faults: usize = report.faults.values().sum();
    for (what, count) in [
        ("Operator kills", report.kills),
        (
            "… of lives that had finished a pass",
            report.killed_in_passes,
        ),
        (
            "Passes the killed lives finished",
            report.passes_before_kills,
        ),
        ("API server restarts", report.restarts),
        (
            "Rounds of two replicas (both killed)",
            report.replica_rounds,
        ),
        (
            "… in which the standby took over from the killed leader",
            report.takeovers,
        ),
        ("Passes the replicas finished", report.replica_passes),
        ("Faults injected", faults),
        ("GitLabSecrets", report.gitlabsecrets),
        (
            "Keystones (one per life, killed 1–5 s in)",
            report.keystones,
        ),
        ("Jobs they ran (each once)", report.jobs),
        ("Secret values tracked", report.values),
        ("Log lines scanned", report.log_lines),
        ("Invariant violations", report.violations.len()),
    ] {
        let _ = writeln!(md, "| {what} | {count} |");
    }
    let _ = writeln!(md, "\n| Fault | Injected |\n|---|---|");
    for (fault, count) in &report.faults {
        let _ = writeln!(md, "| {fault} | {count} |");
    }
    if !report.violations.is_empty() {
        let _ = writeln!(md, "\n## Violations\n");
        for violation in &report.violations {
            let _ = writeln!(md, "- {violation}");
        }
    }
    std::fs::create_dir_all(&options.out)?;
    let path = options.out.join("soak.md");
    std::fs::write(&path, md).with_context(|| format!("cannot write {}", path.display()))
}
