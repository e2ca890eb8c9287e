//! The shipped secretgen plugin, loaded into the real runtime: its keys come from the host's
//! native `crypto` capability.

use wasm_operator_e2e::{cluster_with, gitlabsecrets_crd, runtime_with_cache, shared_cache};
use wasm_operator_runtime::planner::{CertificateAction, CertificatesRequest, SecretRequest};
use wasm_operator_sdk::Request;

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

/// A GitLabSecrets in `ns` whose Secrets `secrets` each get one 8-character hex key `k`,
/// and `rsa`, when given, an RSA key of that many bits.
fn random_keys(secrets: &[&str], rsa: Option<(&str, u32)>) -> serde_json::Value {
    let mut entries: Vec<serde_json::Value> = secrets
        .iter()
        .map(|name| {
            serde_json::json!({"name": name, "type": "Opaque", "generators": [
                {"type": "random", "key": "k", "charset": "hex", "length": 8}]})
        })
        .collect();
    if let Some((name, bits)) = rsa {
        entries.insert(
            0,
            serde_json::json!({"name": name, "type": "Opaque", "generators": [
                {"type": "rsa", "key": "k", "bits": bits}]}),
        );
    }
    serde_json::json!({"apiVersion": "apps.gitlab.com/v2alpha1", "kind": "GitLabSecrets",
        "metadata": {"name": "demo", "namespace": "ns"},
        "spec": {"secrets": entries}})
}

/// A runtime with gitlabsecrets loaded, linked to the planner at `planner` (loaded with
/// `limits`).
async fn gitlabsecrets_planned_by(
    planner: &std::path::Path,
    limits: Option<wasm_operator_runtime::Limits>,
) -> (
    wasm_operator_runtime::Runtime,
    wasm_operator_runtime::Plugin,
) {
    let runtime = runtime_with_cache(shared_cache());
    let planner = runtime
        .load(planner, limits)
        .await
        .expect("the planner loads");
    runtime
        .link_planner(std::sync::Arc::new(planner))
        .expect("a planner");
    let reconciler = runtime
        .load(
            &wasm_operator::cli::shipped_plugin_dir().join("gitlabsecrets.wasm"),
            None,
        )
        .await
        .expect("gitlabsecrets loads");
    (runtime, reconciler)
}

fn demo() -> Request {
    Request {
        namespace: Some("ns".into()),
        name: "demo".into(),
    }
}

/// One gitlabsecrets pass over `ns/demo` planned by secretgen (loaded with `limits`); the
/// planner calls and instances it took.
async fn pass_over(
    gitlabsecrets: serde_json::Value,
    limits: Option<wasm_operator_runtime::Limits>,
) -> (wasm_operator_e2e::Cluster, u64, u64) {
    let cluster = cluster_with(&[gitlabsecrets_crd(), gitlabsecrets]).await;
    let (runtime, reconciler) = gitlabsecrets_planned_by(&secretgen_wasm(), limits).await;
    let (calls, instances) = (runtime.planner_calls(), runtime.planner_instances());
    // The pass may end with the failure of one Secret; what it wrote is what counts.
    let _ = reconciler
        .reconcile(&runtime, cluster.backend(), &demo())
        .await;
    (
        cluster,
        runtime.planner_calls() - calls,
        runtime.planner_instances() - instances,
    )
}

async fn secret_exists(cluster: &wasm_operator_e2e::Cluster, name: &str) -> bool {
    cluster.get("v1", "Secret", "ns", name).await.is_some()
}

#[tokio::test]
async fn the_planner_calls_of_one_pass_share_one_planner_instance() {
    let (cluster, calls, instances) = pass_over(random_keys(&["a", "b", "c"], None), None).await;

    assert!(calls >= 3, "one call or more per Secret: {calls}");
    assert_eq!(instances, 1, "{calls} calls, one instance");
    for name in ["a", "b", "c"] {
        assert!(secret_exists(&cluster, name).await, "Secret {name} written");
    }
}

#[tokio::test]
async fn a_planner_call_that_fails_leaves_the_next_call_a_new_instance() {
    // RSA-8192 takes seconds: generating it misses the planner's 300 ms deadline.
    let limits = wasm_operator_runtime::Limits {
        deadline: std::time::Duration::from_millis(300),
        ..wasm_operator_runtime::Limits::default()
    };
    let gitlabsecrets = random_keys(&["after"], Some(("big", 8192)));

    let (cluster, calls, instances) = pass_over(gitlabsecrets, Some(limits)).await;

    assert!(
        !secret_exists(&cluster, "big").await,
        "nothing generated in time"
    );
    assert!(
        secret_exists(&cluster, "after").await,
        "the next Secret planned"
    );
    assert!(calls >= 3, "big planned twice, then after: {calls}");
    assert_eq!(instances, 2, "the failed call's instance is not used again");
}

/// The planner's counters after a pass: calls it ran, instances made, calls answered from
/// its memo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PlannerCounts {
    calls: u64,
    instances: u64,
    memo_hits: u64,
}

impl PlannerCounts {
    fn of(runtime: &wasm_operator_runtime::Runtime) -> Self {
        Self {
            calls: runtime.planner_calls(),
            instances: runtime.planner_instances(),
            memo_hits: runtime.planner_memo_hits(),
        }
    }

    fn since(self, before: Self) -> Self {
        Self {
            calls: self.calls - before.calls,
            instances: self.instances - before.instances,
            memo_hits: self.memo_hits - before.memo_hits,
        }
    }
}

/// gitlabsecrets passes over `ns/demo` in `cluster`, planned by the planner at `planner`;
/// what each pass took of the planner.
async fn passes_with(
    cluster: &wasm_operator_e2e::Cluster,
    planner: &std::path::Path,
    passes: usize,
) -> Vec<PlannerCounts> {
    let (runtime, reconciler) = gitlabsecrets_planned_by(planner, None).await;
    let mut counts = Vec::new();
    for _ in 0..passes {
        let before = PlannerCounts::of(&runtime);
        reconciler
            .reconcile(&runtime, cluster.backend(), &demo())
            .await
            .expect("the pass succeeds");
        counts.push(PlannerCounts::of(&runtime).since(before));
    }
    counts
}

async fn secret_data(cluster: &wasm_operator_e2e::Cluster, name: &str) -> serde_json::Value {
    let secret = cluster
        .get("v1", "Secret", "ns", name)
        .await
        .unwrap_or_else(|| panic!("Secret {name} exists"));
    secret["data"].clone()
}

#[tokio::test]
async fn a_request_planned_again_is_answered_from_the_memo_without_running_the_planner() {
    let names = ["a", "b", "c"];
    let cluster = cluster_with(&[gitlabsecrets_crd(), random_keys(&names, None)]).await;
    let first = passes_with(&cluster, &secretgen_wasm(), 2).await;
    let mut before = Vec::new();
    for name in names {
        before.push(secret_data(&cluster, name).await);
    }

    // A new runtime: a new planner plugin, whose memo starts empty.
    let again = passes_with(&cluster, &secretgen_wasm(), 2).await;

    let [generating, converged] = first[..] else {
        panic!("two passes: {first:?}")
    };
    assert!(
        generating.calls >= 3,
        "the first pass plans: {generating:?}"
    );
    assert_eq!(
        converged.memo_hits, 0,
        "the converged Secrets' requests are new: {converged:?}"
    );
    assert_eq!(
        again[0], converged,
        "a reloaded planner starts with an empty memo"
    );
    assert!(converged.calls >= 3, "{converged:?}");
    assert_eq!(
        again[1],
        PlannerCounts {
            calls: 0,
            instances: 0,
            memo_hits: converged.calls,
        },
        "every call of the same converged pass is answered from the memo"
    );
    for (name, data) in names.into_iter().zip(before) {
        assert_eq!(
            secret_data(&cluster, name).await,
            data,
            "Secret {name} unchanged"
        );
    }
}

#[tokio::test]
async fn a_planner_call_that_calls_an_import_is_not_kept() {
    // The stamping planner reads the clock, the hash seed or logs when it plans the Secret of
    // that name; "plain" reads nothing but its request (the one valid row).
    let cases = [
        ("plain", true),
        ("reads-clock", false),
        ("reads-random", false),
        ("logs", false),
    ];
    let stamping = wasm_operator::cli::test_plugin_dir().join("stamping-planner.wasm");
    for (name, kept) in cases {
        let cluster = cluster_with(&[gitlabsecrets_crd(), random_keys(&[name], None)]).await;

        let counts = passes_with(&cluster, &stamping, 3).await;

        let [stamping_pass, converged, again] = counts[..] else {
            panic!("three passes: {counts:?}")
        };
        assert!(stamping_pass.calls >= 1, "{name}: {stamping_pass:?}");
        assert!(converged.calls >= 1, "{name}: {converged:?}");
        let expected = if kept {
            PlannerCounts {
                calls: 0,
                instances: 0,
                memo_hits: converged.calls,
            }
        } else {
            PlannerCounts {
                memo_hits: 0,
                ..converged
            }
        };
        assert_eq!(again, expected, "{name}");
        let data = secret_data(&cluster, name).await;
        assert_eq!(data["k"], "c3RhbXBlZA==", "{name}: k is `stamped`");
    }
}
