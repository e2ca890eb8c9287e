//! `wasm-operator plugin test FILE SCENARIO...`, run as a plugin author's CI runs it: the
//! shipped GitLabSecrets and Keystone scenarios converge, a scenario that does not converge
//! is printed field by field (a Secret's values never), and one that cannot run says why.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn wasm_operator(cache: &tempfile::TempDir) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_wasm-operator"));
    command.env("WASM_OPERATOR_CACHE_DIR", cache.path());
    command
}

fn gitlabsecrets() -> PathBuf {
    wasm_operator::cli::shipped_plugin_dir().join("gitlabsecrets.wasm")
}

fn chart_defaults() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../guests/gitlabsecrets/scenarios/chart-defaults")
}

fn plugin_test(plugin: &Path, scenario: &Path) -> Output {
    let cache = tempfile::tempdir().expect("tempdir");
    wasm_operator(&cache)
        .args(["plugin", "test"])
        .arg(plugin)
        .arg(scenario)
        .output()
        .expect("runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A copy of the chart-defaults scenario whose includes are absolute, with `edit` applied
/// to its expect.yaml and each stage given `timeout` seconds.
fn edited_chart_defaults(timeout: u64, edit: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let source = chart_defaults().canonicalize().expect("the scenario");
    let settings = std::fs::read_to_string(source.join("scenario.yaml")).expect("settings");
    let includes = source.join("../../../..").canonicalize().expect("the root");
    let settings = settings
        .replace("../../../../", &format!("{}/", includes.display()))
        .replace(
            "../../testdata",
            &format!("{}/guests/gitlabsecrets/testdata", includes.display()),
        );
    std::fs::write(
        dir.path().join("scenario.yaml"),
        format!("{settings}timeoutSeconds: {timeout}\n"),
    )
    .expect("write");
    let expect = std::fs::read_to_string(source.join("expect.yaml")).expect("expect");
    std::fs::write(
        dir.path().join("expect.yaml"),
        format!("{expect}---\n{edit}"),
    )
    .expect("write");
    dir
}

/// Runs `plugin test` of `plugin` on `scenario` and requires it to pass, its report holding
/// a line starting with each of `lines`.
fn passes(plugin: &Path, scenario: &Path, lines: &[&str]) {
    let output = plugin_test(plugin, scenario);
    let report = stdout(&output);
    assert!(
        output.status.success(),
        "{report}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for line in lines.iter().chain(&["ok"]) {
        assert!(
            report.lines().any(|l| l.starts_with(line)),
            "{line:?} in\n{report}"
        );
    }
}

#[test]
fn plugin_test_converges_the_shipped_gitlabsecrets_scenario_through_its_steps() {
    passes(
        &gitlabsecrets(),
        &chart_defaults(),
        &[
            "scenario chart-defaults",
            "  serving: gitlabsecrets 0.1.0",
            "  given: converged in",
            "  01-a-deleted-secret-is-made-again: converged in",
            "  02-deleting-the-gitlabsecrets-leaves-every-secret: converged in",
        ],
    );
}

#[test]
fn plugin_test_converges_the_shipped_keystone_scenario_with_every_actor_and_the_secret_backend() {
    passes(
        &wasm_operator::cli::shipped_plugin_dir().join("keystone.wasm"),
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../guests/keystone/scenarios/credentials-from-the-secret-backend"),
        &[
            "  serving: keystone 0.1.0",
            "  given: converged in",
            "  01-a-changed-schedule-reaches-its-cronjob: converged in",
            "  02-a-deleted-keystone-takes-its-children: converged in",
        ],
    );
}

#[test]
fn plugin_test_prints_what_did_not_converge_field_by_field_and_exits_1_never_showing_a_secret_value()
 {
    // Long enough for every other expectation to hold on a busy machine (the pass makes an
    // RSA-4096 key in a debug build), so the report names the one that cannot.
    let scenario = edited_chart_defaults(
        30,
        "apiVersion: v1\nkind: Secret\n\
         metadata: {name: demo-gitlab-shell-secret, namespace: gitlab, labels: {colour: blue}}\n\
         stringData: {secret: hello}\n",
    );
    let output = plugin_test(&gitlabsecrets(), scenario.path());
    let report = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{report}");
    let expected = "  given: not converged after 30 s";
    assert!(report.contains(expected), "{expected:?} in\n{report}");
    let diff = "    expect.yaml, document 9: Secret gitlab/demo-gitlab-shell-secret\n\
                \x20     data.secret\n\
                \x20       expected: (a value of 5 bytes)\n\
                \x20       found:    (a value of 64 bytes)\n\
                \x20     metadata.labels.colour\n\
                \x20       expected: \"blue\"\n\
                \x20       found:    (missing)\n";
    assert!(report.contains(diff), "{diff}\nin\n{report}");
    assert!(report.ends_with("FAILED\n"), "{report}");
    // Only the one expectation that cannot hold is reported.
    assert!(
        report.contains("1 of 9 expectations do not hold"),
        "{report}"
    );
}

#[test]
fn plugin_test_of_a_scenario_that_cannot_run_says_why_and_exits_2() {
    let scenario = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        scenario.path().join("given.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: a}\n",
    )
    .expect("write");
    std::fs::write(
        scenario.path().join("expect.yaml"),
        "apiVersion: v1\nkind: ConfigMap\n",
    )
    .expect("write");
    let output = plugin_test(&gitlabsecrets(), scenario.path());
    let report = stdout(&output);
    assert_eq!(output.status.code(), Some(2), "{report}");
    assert!(
        report.contains("given.yaml, document 1: ConfigMap without metadata.name"),
        "{report}"
    );

    let output = plugin_test(Path::new("/nonexistent/plugin.wasm"), &chart_defaults());
    let report = stdout(&output);
    assert_eq!(output.status.code(), Some(2), "{report}");
    assert!(
        report.contains("cannot copy plugin /nonexistent/plugin.wasm"),
        "{report}"
    );
}
