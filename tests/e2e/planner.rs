//! The shipped secretgen plugin, loaded into the real runtime: its keys come from the host's
//! native `crypto` capability.

use wasm_operator_e2e::runtime_with_cache;
use wasm_operator_runtime::planner::{CertificateAction, CertificatesRequest, SecretRequest};

fn secretgen_wasm() -> std::path::PathBuf {
    wasm_operator::cli::shipped_plugin_dir().join("secretgen.wasm")
}

#[tokio::test]
async fn the_secretgen_plugin_plans_keys_generated_by_the_host() {
    let cache = tempfile::tempdir().expect("tempdir");
    let runtime = runtime_with_cache(&cache);
    let plugin = runtime
        .load(&secretgen_wasm(), None)
        .await
        .expect("secretgen loads");
    let entries = r#"[{"name":"keys","type":"Opaque","generators":[
        {"type":"rsa","key":"rsa.pem","bits":2048},
        {"type":"sshHostKeys"},
        {"type":"random","key":"token","charset":"hex","length":40}]}]"#;
    let request = SecretRequest {
        name: "keys".into(),
        entries: entries.into(),
        existing: None,
        ready_units: vec![],
        generate: true,
    };

    let plan = plugin
        .plan(&runtime, &request)
        .await
        .expect("the pass runs")
        .expect("the planner plans");

    assert!(plan.ready, "{:?}", plan.reports);
    let value = |key: &str| {
        let entry = plan
            .add
            .iter()
            .find(|e| e.key == key)
            .unwrap_or_else(|| panic!("{key} is added"));
        String::from_utf8(entry.value.clone()).expect("text")
    };
    use rsa::pkcs8::DecodePrivateKey as _;
    use rsa::traits::PublicKeyParts as _;
    let rsa = rsa::PrivateKey::from_pkcs8_pem(&value("rsa.pem")).expect("rsa.pem is PKCS#8");
    assert_eq!(rsa.n().bit_width(), 2048, "rsa.pem has the bits asked for");
    let host_key = ssh_key::PrivateKey::from_openssh(value("ssh_host_ed25519_key"))
        .expect("ssh_host_ed25519_key is an OpenSSH private key");
    assert_eq!(host_key.algorithm(), ssh_key::Algorithm::Ed25519);
    let public = ssh_key::PublicKey::from_openssh(&value("ssh_host_rsa_key.pub"))
        .expect("ssh_host_rsa_key.pub is an OpenSSH public key");
    assert_eq!(public.algorithm(), ssh_key::Algorithm::Rsa { hash: None });
    let token = value("token");
    assert_eq!(token.len(), 40);
    assert!(
        token.bytes().all(|b| b.is_ascii_hexdigit()),
        "token is hex: {token}"
    );
}

#[tokio::test]
async fn the_secretgen_plugin_issues_a_certificate_set_in_the_order_ca_tls_chain() {
    let cache = tempfile::tempdir().expect("tempdir");
    let runtime = runtime_with_cache(&cache);
    let plugin = runtime
        .load(&secretgen_wasm(), None)
        .await
        .expect("secretgen loads");
    let certificate = r#"{"authority":{"commonName":"GitLab Helm Chart","organization":"gitlab","organizationalUnit":"demo",
        "algorithm":"ecdsa","keySize":256},"domain":"example.com","caDays":1825,"certDays":365,
        "tlsSecret":"demo-wildcard-tls","caSecret":"demo-wildcard-tls-ca","caKey":"cfssl_ca",
        "chainSecret":"demo-wildcard-tls-chain","chainKey":"gitlab.example.com.crt"}"#;
    let request = CertificatesRequest {
        certificate: certificate.into(),
        ca_secret: None,
        tls_secret: None,
        chain_secret: None,
        ready_units: vec![],
        generate: true,
    };

    let plan = plugin
        .plan_certificates(&runtime, &request)
        .await
        .expect("the pass runs")
        .expect("issued");

    assert_eq!(plan.action, CertificateAction::Issue);
    let names: Vec<&str> = plan.secrets.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "demo-wildcard-tls-ca",
            "demo-wildcard-tls",
            "demo-wildcard-tls-chain"
        ]
    );
    let keys: Vec<&str> = plan.secrets[1].add.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(keys, ["tls.crt", "tls.key"]);
}
