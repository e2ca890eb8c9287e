//! The spec's shape test: every value the planner generates has the shape of what the
//! chart's Job (`testdata/job`) and its cfssl-self-sign Job (`testdata/cfssl`) write, with no
//! difference but the two the spec accepts (an SSH host key without a comment, a
//! `secrets.yml` that ends with a newline). The fixtures are in `tests/data/job` and
//! `tests/data/cfssl`, each with its source.
#![cfg(not(target_arch = "wasm32"))]

mod shapes;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use secretgen::{
    CertificateAction, CertificatesRequest, NativeKeys, SecretPlan, SecretRequest, plan,
    plan_certificates,
};
use serde_json::{Value, json};
use shapes::{IssueWindow, differences, shape};

fn fixture(path: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(path);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The recorded shape of a key with the differences the spec accepts applied: "An SSH host
/// key carries no comment, in its .pub or in its private key" and "secrets.yml ends with a
/// newline".
fn accepted(mut expected: Value) -> Value {
    match expected["kind"].as_str() {
        Some("opensshPrivate" | "opensshPublic") => expected["comment"] = json!(false),
        Some("railsSecrets") => expected["trailingNewline"] = json!(true),
        _ => {}
    }
    expected
}

/// The differences between the keys `plan` adds and their recorded shapes, one line each.
fn compare(secret: &str, recorded: &Value, plan: &SecretPlan, window: &IssueWindow) -> Vec<String> {
    let added: BTreeMap<&str, &[u8]> = plan
        .add
        .iter()
        .map(|e| (e.key.as_str(), e.value.as_slice()))
        .collect();
    let recorded = recorded.as_object().cloned().unwrap_or_default();
    let mut found: Vec<String> = added
        .keys()
        .filter(|k| !recorded.contains_key(**k))
        .map(|k| format!("{secret}/{k}: generated, but the Job writes no such key"))
        .collect();
    for (key, expected) in recorded {
        let Some(value) = added.get(key.as_str()) else {
            found.push(format!(
                "{secret}/{key}: the Job writes it, the planner did not"
            ));
            continue;
        };
        let expected = accepted(expected);
        let actual = shape(&expected, value, window);
        found.extend(
            differences(&expected, &actual)
                .into_iter()
                .map(|d| format!("{secret}/{key}{d}")),
        );
    }
    found
}

#[test]
fn every_generated_value_has_the_shape_of_the_jobs_output() {
    let render = fixture("job/gitlabsecrets.json");
    let recorded = fixture("job/shapes.json");
    let mut by_name: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for entry in render["spec"]["secrets"].as_array().expect("spec.secrets") {
        by_name
            .entry(entry["name"].as_str().expect("a name"))
            .or_default()
            .push(entry);
    }
    assert_eq!(
        by_name.keys().copied().collect::<Vec<_>>(),
        recorded["secrets"]
            .as_object()
            .expect("secrets")
            .keys()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        "the render and the recorded shapes name the same Secrets"
    );
    let mut found = Vec::new();
    for (name, entries) in by_name {
        let request = SecretRequest {
            name: name.to_owned(),
            entries: serde_json::to_string(&entries).expect("entries"),
            generate: true,
            ..SecretRequest::default()
        };
        let (plan, window) = IssueWindow::around(|| plan(&request, &NativeKeys));
        let plan = plan.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(plan.reports.is_empty(), "{name}: {:?}", plan.reports);
        found.extend(compare(name, &recorded["secrets"][name], &plan, &window));
    }
    assert!(
        found.is_empty(),
        "differences from the Job's output:\n{}",
        found.join("\n")
    );
}

#[test]
fn every_certificate_set_has_the_shape_of_the_cfssl_self_sign_output() {
    let render = fixture("job/gitlabsecrets.json");
    let recorded = fixture("cfssl/shapes.json");
    let mut found = Vec::new();
    for run in recorded["runs"].as_array().expect("runs") {
        let mut entry = render["spec"]["certificates"][0].clone();
        entry["authority"]["algorithm"] = run["algorithm"].clone();
        entry["authority"]["keySize"] = run["keySize"].clone();
        entry["domain"] = run["domain"].clone();
        let label = format!("{} {} {}", run["algorithm"], run["keySize"], run["domain"]);
        let request = CertificatesRequest {
            certificate: entry.to_string(),
            generate: true,
            ..CertificatesRequest::default()
        };
        let (plan, window) = IssueWindow::around(|| plan_certificates(&request, &NativeKeys));
        let plan = plan.unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(plan.action, CertificateAction::Issue, "{label}");
        let mut values = BTreeMap::new();
        for secret in &plan.secrets {
            found.extend(
                compare(&secret.name, &run["secrets"][&secret.name], secret, &window)
                    .into_iter()
                    .map(|d| format!("{label}: {d}")),
            );
            for entry in &secret.add {
                values.insert(entry.key.clone(), entry.value.clone());
            }
        }
        let value = |key: &str| values.get(key).map(Vec::as_slice).unwrap_or_default();
        let mut facts = shapes::set_facts(
            value("cfssl_ca"),
            value("tls.crt"),
            value("tls.key"),
            value("gitlab.example.com.crt"),
        );
        facts["tlsSignedByTheCa"] = json!(openssl_verifies(value("cfssl_ca"), value("tls.crt")));
        found.extend(
            differences(&run["set"], &facts)
                .into_iter()
                .map(|d| format!("{label}: set{d}")),
        );
    }
    assert!(
        found.is_empty(),
        "differences from cfssl-self-sign's output:\n{}",
        found.join("\n")
    );
}

/// Whether `openssl verify` accepts `tls_crt` as issued by `ca` (signature, chain, usage).
fn openssl_verifies(ca: &[u8], tls_crt: &[u8]) -> bool {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("ca.pem"), ca).expect("ca.pem");
    std::fs::write(dir.path().join("tls.crt"), tls_crt).expect("tls.crt");
    let output = Command::new("openssl")
        .args(["verify", "-CAfile", "ca.pem", "tls.crt"])
        .current_dir(dir.path())
        .output()
        .expect("openssl runs (.ci/run installs it)");
    output.status.success()
}

/// Runs `tool args…` in `dir`, failing the test unless it succeeds.
fn run(dir: &Path, tool: &str, args: &[&str]) {
    let output = Command::new(tool)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{tool} (.ci/run installs it): {e}"));
    assert!(
        output.status.success(),
        "{tool} {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_recorded_shapes_of_rsa_x509_and_host_keys_are_those_the_real_tools_write_here() {
    // The Job ran OpenSSL 3.5.7 and OpenSSH 10.0p2; Debian's 3.0 and 9.2 write the same
    // shapes, comments included, so the fixture's tool-made values are checked, not assumed.
    let recorded = fixture("job/shapes.json");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let dir = dir.path();
    let mut found = Vec::new();
    let mut check = |expected: &Value, file: &str, window: &IssueWindow| {
        let value = std::fs::read(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        found.extend(
            differences(expected, &shape(expected, &value, window))
                .into_iter()
                .map(|d| format!("{file}{d}")),
        );
    };

    let ((), window) = IssueWindow::around(|| {
        run(dir, "openssl", &["genrsa", "-out", "rsa.pem", "2048"]);
    });
    check(
        &recorded["secrets"]["demo-options"]["rsa-2048.pem"],
        "rsa.pem",
        &window,
    );

    let ((), window) = IssueWindow::around(|| {
        run(
            dir,
            "openssl",
            &[
                "req",
                "-new",
                "-newkey",
                "rsa:2048",
                "-subj",
                "/CN=registry.example.com",
                "-nodes",
                "-x509",
                "-days",
                "365",
                "-keyout",
                "tls.key",
                "-out",
                "tls.crt",
            ],
        );
    });
    let x509 = &recorded["secrets"]["demo-x509-2048"];
    check(&x509["tls.crt"], "tls.crt", &window);
    check(&x509["tls.key"], "tls.key", &window);

    std::fs::create_dir_all(dir.join("etc/ssh")).expect("etc/ssh");
    let ((), window) = IssueWindow::around(|| run(dir, "ssh-keygen", &["-A", "-f", "."]));
    let host_keys = &recorded["secrets"]["demo-gitlab-shell-host-keys"];
    for (key, expected) in host_keys.as_object().expect("host keys") {
        check(expected, &format!("etc/ssh/{key}"), &window);
    }
    assert!(
        found.is_empty(),
        "the real tools write other shapes:\n{}",
        found.join("\n")
    );
}
