//! The in-cluster path: `deploy/` applied with the real `kubectl apply -k` to the embedded
//! API server (HTTPS under its own CA), then two operator processes started as the
//! Deployment's Pods would be — its arguments and environment, the in-cluster config from
//! `KUBERNETES_SERVICE_HOST`/`_PORT`, the ServiceAccount's token and `ca.crt` in a directory
//! (the kubelet's mount), the ConfigMap's plugins.toml as a file, each Pod its own address —
//! with the ServiceAccount's RBAC only, pulling their plugins from a real registry.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};

mod common;
use common::registry::{Guard, LocalRegistry, push_cli};

const NAMESPACE: &str = "wasm-operator";
/// `run`'s Lease duration (the Deployment leaves the default) and how often a standby reads
/// the Lease.
const LEASE_DURATION: Duration = Duration::from_secs(15);
const READ_INTERVAL: Duration = Duration::from_secs(2);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn wasm_operator() -> Command {
    Command::new(env!("CARGO_BIN_EXE_wasm-operator"))
}

fn kubectl(kubeconfig: &Path, args: &[&str]) -> String {
    let output = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .expect("kubectl runs (.ci/run installs it)");
    assert!(
        output.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `to` as a path relative to the directory `from` (kustomize refuses absolute bases).
fn relative(from: &Path, to: &Path) -> PathBuf {
    let from = from.canonicalize().expect("from");
    let to = to.canonicalize().expect("to");
    let mut path: PathBuf = from.components().skip(1).map(|_| "..").collect();
    path.push(to.strip_prefix("/").expect("absolute"));
    path
}

/// `wasm-operator plugin push FILE REF` to the plain-HTTP registry; the pinned reference.
fn push(registry: &LocalRegistry, file: &Path, reference: &str) -> String {
    let reference = reference.parse().expect("a reference");
    let output = push_cli(file, &reference, &["--plain-http-registry", &registry.addr]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// A component with the same code and other bytes: `file` with a custom section appended
/// (a new version as far as digests, pins and swaps go).
fn another_version(file: &Path, dir: &Path) -> PathBuf {
    let mut bytes = std::fs::read(file).expect("plugin");
    let name = b"wasm-operator-test-version";
    let payload = b"2";
    bytes.push(0); // a custom section
    bytes.push(u8::try_from(1 + name.len() + payload.len()).expect("short"));
    bytes.push(u8::try_from(name.len()).expect("short"));
    bytes.extend_from_slice(name);
    bytes.extend_from_slice(payload);
    let out = dir.join("gitlabsecrets-2.wasm");
    std::fs::write(&out, bytes).expect("written");
    out
}

/// One operator process as a Pod of the Deployment runs it.
struct Pod {
    child: Child,
    name: String,
    /// Where it serves /metrics: the Pod's address and a free port (the manifest's 8080
    /// could be taken on this machine).
    metrics: std::net::SocketAddr,
}

impl Drop for Pod {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What every Pod of the Deployment shares on this machine.
struct Node {
    /// The operator container's arguments and literal environment, from `kubectl kustomize`.
    args: Vec<String>,
    env: Vec<(String, String)>,
    service_account: PathBuf,
    plugins_config: PathBuf,
    cache: PathBuf,
    key: PathBuf,
    api_port: u16,
    registry: String,
    scratch: tempfile::TempDir,
}

impl Node {
    /// Starts the Pod `name` on address `ip`: the manifest's paths mapped to this machine,
    /// `$(VAR)` expanded as the kubelet does, the registry polled every second.
    fn start(&self, name: &str, ip: &str) -> Pod {
        let metrics_port = common::free_port(ip);
        let webhook_port = common::free_port(ip);
        let plugins = self.scratch.path().join(name);
        std::fs::create_dir_all(&plugins).expect("the Pod's plugin emptyDir");
        let args: Vec<String> = self
            .args
            .iter()
            .map(|arg| {
                let arg = arg.replace("$(POD_IP)", ip);
                match arg.split_once('=') {
                    Some(("--plugins", _)) => format!("--plugins={}", plugins.display()),
                    Some(("--plugins-config", _)) => {
                        format!("--plugins-config={}", self.plugins_config.display())
                    }
                    Some(("--registry-poll-s", _)) => "--registry-poll-s=1".to_owned(),
                    Some(("--health-addr", _)) => format!("--health-addr={ip}:{metrics_port}"),
                    Some(("--webhook-addr", _)) => format!("--webhook-addr={ip}:{webhook_port}"),
                    _ => arg,
                }
            })
            .chain([format!("--plain-http-registry={}", self.registry)])
            .collect();
        let log = std::fs::File::create(self.scratch.path().join(format!("{name}.log")))
            .expect("log file");
        let child = wasm_operator()
            .args(&args)
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env("WASM_OPERATOR_CACHE_DIR", self.cache.join("artifacts"))
            .env("WASM_OPERATOR_CACHE_KEY_FILE", &self.key)
            .env("WASM_OPERATOR_SERVICE_ACCOUNT_DIR", &self.service_account)
            .env("KUBERNETES_SERVICE_HOST", "127.0.0.1")
            .env("KUBERNETES_SERVICE_PORT", self.api_port.to_string())
            .env("POD_IP", ip)
            .env("POD_NAME", name)
            .env("POD_NAMESPACE", NAMESPACE)
            .env("RUST_LOG", "warn,wasm_operator=info")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("the operator runs");
        Pod {
            child,
            name: name.to_owned(),
            metrics: format!("{ip}:{metrics_port}").parse().expect("an address"),
        }
    }
}

/// The sum of a metric's samples on `pod`'s /metrics (0 when it has none yet).
fn metric(pod: &Pod, name: &str, labels: &str) -> u64 {
    common::http_get(&pod.metrics.to_string(), "/metrics")
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with(name) && l.contains(labels))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

async fn eventually<T, F: std::future::Future<Output = Option<T>>>(
    what: &str,
    within: Duration,
    mut probe: impl FnMut() -> F,
) -> T {
    let start = Instant::now();
    loop {
        if let Some(found) = probe().await {
            return found;
        }
        assert!(start.elapsed() < within, "{what}: not within {within:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn holder(leases: &Api<Lease>) -> Option<String> {
    leases
        .get_opt("wasm-operator-leader")
        .await
        .ok()
        .flatten()
        .and_then(|l| l.spec?.holder_identity)
}

#[test]
fn deploy_applied_with_kubectl_runs_in_cluster_hands_over_its_lease_and_swaps_a_plugin_from_the_registry()
 {
    let registry = LocalRegistry::start(Guard::default());
    let shipped = wasm_operator::cli::shipped_plugin_dir();
    let source = |name: &str| format!("oci://{}/plugins/{name}:stable", registry.addr);
    push(
        &registry,
        &shipped.join("gitlabsecrets.wasm"),
        &source("gitlabsecrets"),
    );
    push(
        &registry,
        &shipped.join("secretgen.wasm"),
        &source("secretgen"),
    );

    let tokio = tokio::runtime::Runtime::new().expect("tokio");
    let _context = tokio.enter();
    let cluster = common::Cluster::start(&tokio);
    let kubeconfig = &cluster.kubeconfig;
    assert!(cluster.server.url().starts_with("https://"));
    let admin = cluster.server.client().expect("admin client");

    // deploy/, with the plugins' ConfigMap naming this registry: an overlay, as an
    // administrator pointing the install at a mirror would write.
    let scratch = tempfile::tempdir().expect("tempdir");
    let overlay = scratch.path().join("overlay");
    std::fs::create_dir_all(&overlay).expect("overlay");
    std::fs::write(
        overlay.join("plugins.toml"),
        format!(
            "[plugins.gitlabsecrets]\nsource = \"{}\"\n[plugins.secretgen]\nsource = \"{}\"\n",
            source("gitlabsecrets"),
            source("secretgen")
        ),
    )
    .expect("plugins.toml");
    std::fs::write(
        overlay.join("kustomization.yaml"),
        format!(
            "resources:\n  - {}\nconfigMapGenerator:\n  - name: wasm-operator-plugins\n    namespace: {NAMESPACE}\n    behavior: replace\n    files:\n      - plugins.toml\n    options:\n      disableNameSuffixHash: true\n",
            relative(&overlay, &repo().join("deploy")).display()
        ),
    )
    .expect("kustomization");
    kubectl(
        kubeconfig,
        &[
            "apply",
            "-f",
            &repo()
                .join("crds/apps.gitlab.com_gitlabsecrets.yaml")
                .display()
                .to_string(),
        ],
    );
    kubectl(kubeconfig, &["apply", "-k", &overlay.display().to_string()]);

    // The operator container as `kubectl kustomize` renders it.
    let rendered = kubectl(kubeconfig, &["kustomize", &overlay.display().to_string()]);
    let deployment: Value = common::yaml_documents(&rendered)
        .into_iter()
        .find(|d| d["kind"] == "Deployment")
        .expect("the Deployment");
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect()
    };
    let args = strings(&container["args"]);
    let env: Vec<(String, String)> = container["env"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| {
            Some((
                e["name"].as_str()?.to_owned(),
                e["value"].as_str()?.to_owned(),
            ))
        })
        .filter(|(name, _)| !name.starts_with("WASM_OPERATOR_CACHE"))
        .collect();
    assert!(args.contains(&"--in-cluster".to_owned()), "{args:?}");

    let (service_account, plugins_config) = tokio.block_on(async {
        // The kubelet's mount of the ServiceAccount, and of the ConfigMap.
        let token = wasm_operator::cli::operator_account::token(&admin, NAMESPACE, "wasm-operator")
            .await
            .expect("a token of the ServiceAccount deploy/ made");
        let dir = scratch.path().join("serviceaccount");
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(dir.join("token"), token).expect("token");
        std::fs::write(dir.join("ca.crt"), cluster.server.ca_pem()).expect("ca.crt");
        std::fs::write(dir.join("namespace"), NAMESPACE).expect("namespace");
        let config_maps: Api<ConfigMap> = Api::namespaced(admin.clone(), NAMESPACE);
        let plugins = config_maps
            .get("wasm-operator-plugins")
            .await
            .expect("the ConfigMap kubectl applied");
        let mounted = scratch.path().join("etc");
        std::fs::create_dir_all(&mounted).expect("dir");
        let text = plugins
            .data
            .unwrap_or_default()
            .remove("plugins.toml")
            .expect("plugins.toml");
        std::fs::write(mounted.join("plugins.toml"), text).expect("plugins.toml");
        (dir, mounted.join("plugins.toml"))
    });
    let key = scratch.path().join("cache-key/key");
    std::fs::create_dir_all(key.parent().expect("dir")).expect("dir");
    assert!(
        wasm_operator()
            .arg("cache-key")
            .arg(&key)
            .status()
            .expect("runs")
            .success()
    );
    let node = Node {
        args,
        env,
        service_account,
        plugins_config,
        cache: scratch.path().join("cache"),
        key,
        api_port: cluster
            .server
            .url()
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("a port"),
        registry: registry.addr.clone(),
        scratch,
    };

    let leases: Api<Lease> = Api::namespaced(admin.clone(), NAMESPACE);
    let mut first = node.start("wasm-operator-a", "127.0.0.2");
    tokio.block_on(eventually(
        "a holds the Lease",
        Duration::from_secs(60),
        || async { (holder(&leases).await.as_deref() == Some("wasm-operator-a")).then_some(()) },
    ));
    let second = node.start("wasm-operator-b", "127.0.0.3");

    // A GitLabSecrets converges under the ServiceAccount's RBAC.
    let secrets: Api<Secret> = Api::namespaced(admin.clone(), "ns");
    let gitlabsecrets: Api<DynamicObject> = Api::namespaced_with(
        admin.clone(),
        "ns",
        &kube::api::ApiResource::from_gvk_with_plural(
            &kube::api::GroupVersionKind::gvk("apps.gitlab.com", "v2alpha1", "GitLabSecrets"),
            "gitlabsecrets",
        ),
    );
    let declare = |secrets: Value| {
        json!({"apiVersion": "apps.gitlab.com/v2alpha1", "kind": "GitLabSecrets",
            "metadata": {"name": "gitlab", "namespace": "ns", "labels": {"app": "gitlab"}},
            "spec": {"secrets": secrets}})
    };
    let random = |name: &str| {
        json!({"name": name, "type": "Opaque",
            "generators": [{"type": "random", "key": "password", "charset": "alphanumeric", "length": 32}]})
    };
    tokio.block_on(async {
        kube::Api::<k8s_openapi::api::core::v1::Namespace>::all(admin.clone())
            .patch(
                "ns",
                &PatchParams::apply("test"),
                &Patch::Apply(
                    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}}),
                ),
            )
            .await
            .expect("ns");
        gitlabsecrets
            .patch(
                "gitlab",
                &PatchParams::apply("test"),
                &Patch::Apply(declare(json!([random("one")]))),
            )
            .await
            .expect("the GitLabSecrets");
        eventually(
            "the Secret of the first GitLabSecrets",
            Duration::from_secs(60),
            || async { secrets.get_opt("one").await.ok().flatten() },
        )
        .await;
    });
    let passes = |pod: &Pod| {
        metric(
            pod,
            "wasm_operator_passes_total",
            "plugin=\"gitlabsecrets\"",
        )
    };
    // The standby is up, its plugins loaded and its caches warm, and has run no pass.
    tokio.block_on(eventually(
        "the standby serves its plugins",
        Duration::from_secs(60),
        || async {
            let serving = "plugin=\"gitlabsecrets\"";
            (metric(&second, "wasm_operator_plugin_info", serving) == 1).then_some(())
        },
    ));
    assert!(passes(&first) > 0, "the leader ran the passes");
    assert_eq!(passes(&second), 0, "the standby ran none");

    // The leader dies without releasing the Lease: the standby takes it within the Lease's
    // duration (the Deployment's, the default 15 s) and the standby's read interval (2 s),
    // with a second's slack.
    let killed = Instant::now();
    let _ = first.child.kill();
    let _ = first.child.wait();
    let took = tokio.block_on(eventually(
        "b takes the Lease",
        Duration::from_secs(30),
        || async {
            (holder(&leases).await.as_deref() == Some("wasm-operator-b")).then(|| killed.elapsed())
        },
    ));
    eprintln!("the Lease was handed over {took:?} after the leader was killed");
    assert!(
        took <= LEASE_DURATION + READ_INTERVAL + Duration::from_secs(1),
        "handed over after {took:?}"
    );
    tokio.block_on(async {
        gitlabsecrets
            .patch(
                "gitlab",
                &PatchParams::apply("test"),
                &Patch::Apply(declare(json!([random("one"), random("two")]))),
            )
            .await
            .expect("a second Secret declared");
        eventually(
            "the new leader converges",
            Duration::from_secs(60),
            || async { secrets.get_opt("two").await.ok().flatten() },
        )
        .await;
    });
    assert!(passes(&second) > 0, "the new leader ran passes");

    // A new version pushed to the tag is pulled and swapped in by the running process.
    let next = another_version(&shipped.join("gitlabsecrets.wasm"), node.scratch.path());
    let pinned = push(&registry, &next, &source("gitlabsecrets"));
    let sha = {
        use sha2::Digest as _;
        hex::encode(sha2::Sha256::digest(std::fs::read(&next).expect("next")))
    };
    assert!(pinned.contains("@sha256:"), "{pinned}");
    let mut second = second;
    tokio.block_on(eventually(
        "the new version serves",
        Duration::from_secs(60),
        || async {
            (metric(
                &second,
                "wasm_operator_plugin_info",
                &format!("sha256=\"{sha}\",state=\"serving\""),
            ) == 1)
                .then_some(())
        },
    ));
    assert!(
        second.child.try_wait().expect("status").is_none(),
        "{} kept running through the swap",
        second.name
    );
    drop(first);
}
