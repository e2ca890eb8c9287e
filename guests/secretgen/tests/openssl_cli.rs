//! Checks generated material with the real tools: `openssl` verifies the certificate set
//! and prints the fields of every certificate and key, `ssh-keygen` reads every host key.
//! A test fails when its tool is not installed (`.ci/run` installs Debian's `openssl` and
//! `openssh-client`): a missing tool never lets a check pass unseen.
#![cfg(not(target_arch = "wasm32"))]

use std::fs;
use std::path::Path;
use std::process::Command;

use secretgen::{
    CertificateAction, CertificatesRequest, NativeKeys, SecretPlan, SecretRequest, plan,
    plan_certificates,
};

/// Runs `tool args…` in `dir` and returns its stdout, failing the test on a non-zero exit.
fn run(dir: &Path, tool: &str, args: &[&str]) -> String {
    let output = Command::new(tool)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{tool} {args:?}: {e}"));
    assert!(
        output.status.success(),
        "{tool} {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Fails the test unless `tool` is installed (`.ci/run` installs it): a missing tool must
/// not let the test pass unseen.
fn require(tool: &str) {
    let found = Command::new("which")
        .arg(tool)
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "{tool} is not installed (.ci/run installs it; Debian: apt-get install openssl openssh-client)"
    );
}

fn write(dir: &Path, name: &str, value: &[u8]) {
    fs::write(dir.join(name), value).expect("writes");
}

fn value<'p>(plan: &'p SecretPlan, key: &str) -> &'p [u8] {
    &plan.add.iter().find(|e| e.key == key).expect("added").value
}

fn certificate_set(algorithm: &str, size: u32, domain: &str) -> Vec<SecretPlan> {
    let entry = serde_json::json!({
        "authority": {"commonName": "GitLab Helm Chart", "organization": "gitlab",
                      "organizationalUnit": "demo", "algorithm": algorithm, "keySize": size},
        "domain": domain, "caDays": 1825, "certDays": 365,
        "tlsSecret": "demo-wildcard-tls", "caSecret": "demo-wildcard-tls-ca", "caKey": "cfssl_ca",
        "chainSecret": "demo-wildcard-tls-chain", "chainKey": "gitlab.example.com.crt",
    });
    let request = CertificatesRequest {
        certificate: entry.to_string(),
        generate: true,
        ..CertificatesRequest::default()
    };
    let plan = plan_certificates(&request, &NativeKeys).expect("issues");
    assert_eq!(plan.action, CertificateAction::Issue);
    plan.secrets
}

#[test]
fn openssl_verifies_the_certificate_set_and_reads_its_fields() {
    require("openssl");
    let cases = [
        (
            "rsa",
            2048,
            "example.com",
            "sha256WithRSAEncryption",
            "RSA PRIVATE KEY",
            "DNS:example.com, DNS:*.example.com",
        ),
        (
            "rsa",
            3072,
            "example.com",
            "sha384WithRSAEncryption",
            "RSA PRIVATE KEY",
            "DNS:example.com, DNS:*.example.com",
        ),
        (
            "ecdsa",
            256,
            "192.0.2.10",
            "ecdsa-with-SHA256",
            "EC PRIVATE KEY",
            "DNS:*.192.0.2.10, IP Address:192.0.2.10",
        ),
        (
            "ecdsa",
            384,
            "example.com",
            "ecdsa-with-SHA384",
            "EC PRIVATE KEY",
            "DNS:example.com, DNS:*.example.com",
        ),
        (
            "ecdsa",
            521,
            "urn:example:gitlab",
            "ecdsa-with-SHA512",
            "EC PRIVATE KEY",
            "DNS:*.urn:example:gitlab, URI:urn:example:gitlab",
        ),
    ];
    for (algorithm, size, domain, signature, key_label, sans) in cases {
        let dir = tempfile::tempdir().expect("temp dir");
        let dir = dir.path();
        let set = certificate_set(algorithm, size, domain);
        write(dir, "ca.pem", value(&set[0], "cfssl_ca"));
        write(dir, "tls.crt", value(&set[1], "tls.crt"));
        write(dir, "tls.key", value(&set[1], "tls.key"));
        write(dir, "chain.pem", value(&set[2], "gitlab.example.com.crt"));

        let verified = run(dir, "openssl", &["verify", "-CAfile", "ca.pem", "tls.crt"]);
        assert_eq!(verified.trim(), "tls.crt: OK", "{algorithm} {size}");
        run(
            dir,
            "openssl",
            &["verify", "-CAfile", "ca.pem", "chain.pem"],
        );

        let ca = run(
            dir,
            "openssl",
            &[
                "x509", "-in", "ca.pem", "-noout", "-text", "-nameopt", "RFC2253",
            ],
        );
        assert!(ca.contains("Version: 3 (0x2)"));
        assert!(
            ca.contains(&format!("Signature Algorithm: {signature}")),
            "{ca}"
        );
        assert!(
            ca.contains("Issuer: CN=GitLab Helm Chart,OU=demo,O=gitlab"),
            "{ca}"
        );
        assert!(ca.contains("Subject: CN=GitLab Helm Chart,OU=demo,O=gitlab"));
        assert!(
            ca.contains("X509v3 Basic Constraints: critical\n                CA:TRUE\n"),
            "{ca}"
        );
        assert!(
            ca.contains("X509v3 Key Usage: critical\n                Certificate Sign, CRL Sign\n"),
            "{ca}"
        );
        assert!(ca.contains("X509v3 Subject Key Identifier"));
        assert!(!ca.contains("Authority Key Identifier"));

        let tls = run(
            dir,
            "openssl",
            &["x509", "-in", "tls.crt", "-noout", "-text"],
        );
        assert!(tls.contains(&format!("Signature Algorithm: {signature}")));
        assert!(
            tls.contains("X509v3 Basic Constraints: critical\n                CA:FALSE\n"),
            "{tls}"
        );
        assert!(
            tls.contains("X509v3 Key Usage: critical\n                Digital Signature, Key Encipherment, Certificate Sign\n"),
            "{tls}"
        );
        assert!(
            tls.contains(
                "X509v3 Extended Key Usage: \n                TLS Web Server Authentication\n"
            ) || tls.contains(
                "X509v3 Extended Key Usage:\n                TLS Web Server Authentication\n"
            ),
            "{tls}"
        );
        assert!(
            tls.contains(&format!(
                "X509v3 Subject Alternative Name: \n                {sans}\n"
            )) || tls.contains(&format!(
                "X509v3 Subject Alternative Name:\n                {sans}\n"
            )),
            "{tls}"
        );

        let skid = |text: &str, label: &str| {
            let start = text.find(label).expect(label) + label.len();
            text[start..]
                .lines()
                .nth(1)
                .map(|l| l.trim().trim_start_matches("keyid:").to_owned())
        };
        assert_eq!(
            skid(&tls, "X509v3 Authority Key Identifier:"),
            skid(&ca, "X509v3 Subject Key Identifier:"),
            "{algorithm} {size}"
        );

        let key = fs::read_to_string(dir.join("tls.key")).expect("reads");
        assert!(key.starts_with(&format!("-----BEGIN {key_label}-----\n")));
        let kind = if algorithm == "rsa" { "rsa" } else { "ec" };
        run(
            dir,
            "openssl",
            &[kind, "-in", "tls.key", "-check", "-noout"],
        );
        let from_key = run(dir, "openssl", &["pkey", "-in", "tls.key", "-pubout"]);
        let from_cert = run(
            dir,
            "openssl",
            &["x509", "-in", "tls.crt", "-noout", "-pubkey"],
        );
        assert_eq!(from_key, from_cert, "tls.key is the key of tls.crt");
    }
}

fn plan_for(entry: serde_json::Value) -> SecretPlan {
    let request = SecretRequest {
        name: entry["name"].as_str().expect("name").to_owned(),
        entries: serde_json::Value::Array(vec![entry]).to_string(),
        existing: None,
        ready_units: Vec::new(),
        generate: true,
    };
    plan(&request, &NativeKeys).expect("plans")
}

#[test]
fn openssl_reads_the_x509_and_rsa_generators_output() {
    require("openssl");
    let dir = tempfile::tempdir().expect("temp dir");
    let dir = dir.path();
    let plan = plan_for(serde_json::json!({"name": "registry", "generators": [
        {"type": "x509", "commonName": "gitlab-issuer", "bits": 2048, "days": 3650,
         "certKey": "registry-auth.crt", "keyKey": "registry-auth.key"},
        {"type": "rsa", "key": "signing.key", "bits": 2048}]}));
    write(dir, "cert.pem", value(&plan, "registry-auth.crt"));
    write(dir, "key.pem", value(&plan, "registry-auth.key"));
    write(dir, "rsa.pem", value(&plan, "signing.key"));

    let text = run(
        dir,
        "openssl",
        &["x509", "-in", "cert.pem", "-noout", "-text"],
    );
    assert!(text.contains("Version: 3 (0x2)"));
    assert!(text.contains("Signature Algorithm: sha256WithRSAEncryption"));
    assert!(
        text.contains("Issuer: CN = gitlab-issuer") && text.contains("Subject: CN = gitlab-issuer")
    );
    assert!(
        text.contains("X509v3 Basic Constraints: critical\n                CA:TRUE\n"),
        "{text}"
    );
    assert!(
        text.contains("X509v3 Subject Key Identifier")
            && text.contains("X509v3 Authority Key Identifier")
    );
    run(
        dir,
        "openssl",
        &["verify", "-CAfile", "cert.pem", "cert.pem"],
    );
    let parsed = run(dir, "openssl", &["asn1parse", "-in", "cert.pem"]);
    assert!(
        parsed.contains("UTF8STRING        :gitlab-issuer"),
        "{parsed}"
    );

    for key in ["key.pem", "rsa.pem"] {
        let pem = fs::read_to_string(dir.join(key)).expect("reads");
        assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----\n"), "{key}");
        run(dir, "openssl", &["pkey", "-in", key, "-check", "-noout"]);
    }
    let from_key = run(dir, "openssl", &["pkey", "-in", "key.pem", "-pubout"]);
    let from_cert = run(
        dir,
        "openssl",
        &["x509", "-in", "cert.pem", "-noout", "-pubkey"],
    );
    assert_eq!(from_key, from_cert);
}

#[test]
fn ssh_keygen_reads_every_host_key() {
    require("ssh-keygen");
    let dir = tempfile::tempdir().expect("temp dir");
    let dir = dir.path();
    let plan =
        plan_for(serde_json::json!({"name": "host-keys", "generators": [{"type": "sshHostKeys"}]}));
    let cases = [
        ("ssh_host_rsa_key", "3072", "(RSA)"),
        ("ssh_host_ecdsa_key", "256", "(ECDSA)"),
        ("ssh_host_ed25519_key", "256", "(ED25519)"),
    ];
    for (file, bits, kind) in cases {
        write(dir, file, value(&plan, file));
        write(
            dir,
            &format!("{file}.pub"),
            value(&plan, &format!("{file}.pub")),
        );
        fs::set_permissions(
            dir.join(file),
            std::os::unix::fs::PermissionsExt::from_mode(0o600),
        )
        .expect("chmod");

        let private = run(dir, "ssh-keygen", &["-l", "-f", file]);
        let public = run(dir, "ssh-keygen", &["-l", "-f", &format!("{file}.pub")]);
        assert!(private.starts_with(&format!("{bits} SHA256:")), "{private}");
        assert!(private.trim_end().ends_with(kind), "{private}");
        let fingerprint = |line: &str| line.split(' ').take(2).collect::<Vec<_>>().join(" ");
        assert_eq!(
            fingerprint(&private),
            fingerprint(&public),
            "{file}: the .pub is the private key's"
        );
        assert!(public.contains(" no comment "), "{public}");
        // `-y` derives the public key from the private one: the same line, no comment.
        let derived = run(dir, "ssh-keygen", &["-y", "-f", file]);
        assert_eq!(derived.as_bytes(), value(&plan, &format!("{file}.pub")));
    }
}
