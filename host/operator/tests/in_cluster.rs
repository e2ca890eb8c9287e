//! The in-cluster path: `deploy/` applied with the real `kubectl apply -k` to the cluster
//! `common::Cluster` starts (the embedded API server, or the real control plane with
//! `WASM_OPERATOR_TEST_CLUSTER=real`; HTTPS under its own CA), then operator processes
//! started as the Deployment's Pods would be — its arguments and environment, the in-cluster config from
//! `KUBERNETES_SERVICE_HOST`/`_PORT`, the ServiceAccount's token and `ca.crt` in a directory
//! (the kubelet's mount), the ConfigMap's plugins.toml as a file, each Pod its own address —
//! with the ServiceAccount's RBAC only (a 403 fails the test), pulling their plugins from a
//! real registry; the API server calls their admission webhooks through deploy/'s
//! configurations and Service over TLS.

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

/// `kubectl args` against `kubeconfig`'s cluster: its output.
fn run_kubectl(kubeconfig: &Path, args: &[&str]) -> std::process::Output {
    Command::new(common::kubectl_binary())
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .expect("kubectl runs (controlplane/build.sh builds it)")
}

/// `kubectl args` succeeds; its stdout.
fn kubectl(kubeconfig: &Path, args: &[&str]) -> String {
    let output = run_kubectl(kubeconfig, args);
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
    /// Where it serves admission webhooks: the Pod's address and a free port.
    webhook: std::net::SocketAddr,
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
            webhook: format!("{ip}:{webhook_port}").parse().expect("an address"),
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

/// A dynamic API of `(group, version, kind, plural)`, in `namespace` or cluster-wide.
fn dynamic(
    client: kube::Client,
    namespace: Option<&str>,
    (group, version, kind, plural): (&str, &str, &str, &str),
) -> Api<DynamicObject> {
    let resource = kube::api::ApiResource::from_gvk_with_plural(
        &kube::api::GroupVersionKind::gvk(group, version, kind),
        plural,
    );
    match namespace {
        Some(namespace) => Api::namespaced_with(client, namespace, &resource),
        None => Api::all_with(client, &resource),
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

/// Where `wasm-operator plugin push` puts plugin `name` in `registry` (tag `stable`).
fn plugin_source(registry: &LocalRegistry, name: &str) -> String {
    format!("oci://{}/plugins/{name}:stable", registry.addr)
}

/// `deploy/` installed with `kubectl apply -k` (its plugins.toml replaced by one naming
/// `plugins` with deploy's settings and their `oci://` sources in `registry`, `crds` applied
/// first), and what its
/// Pods would be given: the Deployment's arguments and environment, a TokenRequest's token of
/// its ServiceAccount, the mounted plugins.toml and a cache key.
fn install(
    tokio: &tokio::runtime::Runtime,
    cluster: &common::Cluster,
    registry: &LocalRegistry,
    plugins: &[&str],
    crds: &[&str],
) -> Node {
    let kubeconfig = &cluster.kubeconfig;
    assert!(cluster.url().starts_with("https://"));
    let admin = cluster.client();

    let scratch = tempfile::tempdir().expect("tempdir");
    let overlay = scratch.path().join("overlay");
    std::fs::create_dir_all(&overlay).expect("overlay");
    let shipped: toml::Table = std::fs::read_to_string(repo().join("deploy/base/plugins.toml"))
        .expect("deploy/base/plugins.toml")
        .parse()
        .expect("deploy/base/plugins.toml parses");
    let mut selected = toml::Table::new();
    for name in plugins {
        let mut settings = shipped
            .get("plugins")
            .and_then(|p| p.get(*name))
            .and_then(toml::Value::as_table)
            .cloned()
            .unwrap_or_else(|| panic!("deploy/base/plugins.toml has no [plugins.{name}]"));
        settings.insert("source".into(), plugin_source(registry, name).into());
        selected.insert((*name).into(), settings.into());
    }
    let toml = toml::to_string(&toml::Table::from_iter([(
        "plugins".to_owned(),
        toml::Value::Table(selected),
    )]))
    .expect("plugins.toml");
    std::fs::write(overlay.join("plugins.toml"), toml).expect("plugins.toml");
    std::fs::write(
        overlay.join("kustomization.yaml"),
        format!(
            "resources:\n  - {}\nconfigMapGenerator:\n  - name: wasm-operator-plugins\n    namespace: {NAMESPACE}\n    behavior: replace\n    files:\n      - plugins.toml\n    options:\n      disableNameSuffixHash: true\n",
            relative(&overlay, &repo().join("deploy")).display()
        ),
    )
    .expect("kustomization");
    for crd in crds {
        let file = repo().join("crds").join(crd);
        kubectl(kubeconfig, &["apply", "-f", &file.display().to_string()]);
    }
    kubectl(kubeconfig, &["apply", "-k", &overlay.display().to_string()]);
    // The operator runs as this test's processes, not as the Deployment's Pods (which KWOK
    // would run as fake Pods on the real control plane). A patch, not `kubectl scale`: the
    // embedded server serves no scale subresource.
    kubectl(
        kubeconfig,
        &[
            "patch",
            "deployment/wasm-operator",
            "-n",
            NAMESPACE,
            "--type=merge",
            "-p",
            r#"{"spec":{"replicas":0}}"#,
        ],
    );

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
        let token = wasm_operator::cli::operator_account::token(&admin, NAMESPACE, "wasm-operator")
            .await
            .expect("a token of the ServiceAccount deploy/ made");
        let dir = scratch.path().join("serviceaccount");
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(dir.join("token"), token).expect("token");
        std::fs::write(dir.join("ca.crt"), cluster.ca_pem()).expect("ca.crt");
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
    Node {
        args,
        env,
        service_account,
        plugins_config,
        cache: scratch.path().join("cache"),
        key,
        api_port: cluster
            .url()
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("a port"),
        registry: registry.addr.clone(),
        scratch,
    }
}

#[test]
fn deploy_applied_with_kubectl_runs_in_cluster_hands_over_its_lease_and_swaps_a_plugin_from_the_registry()
 {
    let registry = LocalRegistry::start(Guard::default());
    let shipped = wasm_operator::cli::shipped_plugin_dir();
    let source = |name: &str| plugin_source(&registry, name);
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
    let admin = cluster.client();
    let node = install(
        &tokio,
        &cluster,
        &registry,
        &["gitlabsecrets", "secretgen"],
        &["apps.gitlab.com_gitlabsecrets.yaml"],
    );

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
    let gitlabsecrets: Api<DynamicObject> = dynamic(
        admin.clone(),
        Some("ns"),
        (
            "apps.gitlab.com",
            "v2alpha1",
            "GitLabSecrets",
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
    assert_no_403(&node, &[&second]);
    drop(first);
}

/// No operator process of `node` was refused anything: the generated RBAC grants all it
/// does (kube-rs and the operator log a 403 as `... is forbidden: User ...`), and no request
/// made for a plugin got a 403.
fn assert_no_403(node: &Node, pods: &[&Pod]) {
    for pod in pods {
        assert_eq!(
            metric(pod, "wasm_operator_api_requests_total", "code=\"403\""),
            0,
            "{} was refused requests made for its plugins",
            pod.name
        );
    }
    for entry in std::fs::read_dir(node.scratch.path()).expect("the Pods' logs") {
        let path = entry.expect("an entry").path();
        if path.extension().is_some_and(|e| e == "log") {
            let log = std::fs::read_to_string(&path).expect("a log");
            let refused: Vec<&str> = log
                .lines()
                .filter(|l| l.contains("forbidden") || l.contains("Forbidden"))
                .collect();
            assert!(refused.is_empty(), "{}: {refused:#?}", path.display());
        }
    }
}

/// `kubectl args` fails; its stderr.
fn kubectl_refused(kubeconfig: &Path, args: &[&str]) -> String {
    let output = run_kubectl(kubeconfig, args);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "kubectl {args:?} succeeded");
    stderr
}

/// An address of this machine other than loopback: the source address of its default route
/// (a UDP connect sends nothing). A real kube-apiserver refuses loopback and link-local
/// endpoint addresses, so the webhook Service's endpoint — this test's operator process — is
/// listed at this address, as a Pod's would be at the Pod's.
fn host_address() -> String {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").expect("a UDP socket");
    socket
        .connect("203.0.113.1:9")
        .expect("this machine has a route off loopback");
    let ip = socket.local_addr().expect("the source address").ip();
    assert!(!ip.is_loopback() && !ip.is_unspecified(), "{ip}");
    ip.to_string()
}

/// Routes the webhook Service `wasm-operator` to `pod`: its endpoint listed at `ip` as the
/// endpointslice controller lists a Pod's (the Deployment is scaled to zero, so that
/// controller lists none); returns once the operator has put its CA in the configurations'
/// caBundle (deploy/ ships none).
fn route_webhooks(tokio: &tokio::runtime::Runtime, admin: &kube::Client, pod: &Pod, ip: &str) {
    let slices: Api<DynamicObject> = dynamic(
        admin.clone(),
        Some(NAMESPACE),
        ("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices"),
    );
    let configurations: Api<DynamicObject> = dynamic(
        admin.clone(),
        None,
        (
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
        ),
    );
    tokio.block_on(async {
        slices
            .patch(
                "wasm-operator-a",
                &PatchParams::apply("test"),
                &Patch::Apply(json!({
                    "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                    "metadata": {"name": "wasm-operator-a", "namespace": NAMESPACE, "labels": {
                        "kubernetes.io/service-name": "wasm-operator",
                        "endpointslice.kubernetes.io/managed-by": "wasm-operator-tests"}},
                    "addressType": "IPv4",
                    "endpoints": [{"addresses": [ip], "conditions": {"ready": true}}],
                    "ports": [{"name": "webhook", "port": pod.webhook.port(), "protocol": "TCP"}],
                })),
            )
            .await
            .expect("the EndpointSlice");
        eventually(
            "the Keystone webhooks' caBundle",
            Duration::from_secs(60),
            || async {
                let validating = configurations.get("wasm-operator").await.ok()?;
                let webhook = validating.data["webhooks"]
                    .as_array()?
                    .iter()
                    .find(|w| w["name"] == "validate.keystone.wasm-operator.dev")?
                    .clone();
                webhook["clientConfig"]["caBundle"]
                    .as_str()
                    .is_some_and(|b| !b.is_empty())
                    .then_some(())
            },
        )
        .await;
    });
}

/// The operator started as Pod `wasm-operator-a` at this machine's address, the webhook
/// Service routed to it, and keystone serving.
fn start_admitting(tokio: &tokio::runtime::Runtime, admin: &kube::Client, node: &Node) -> Pod {
    let ip = host_address();
    let pod = node.start("wasm-operator-a", &ip);
    route_webhooks(tokio, admin, &pod, &ip);
    wait_serving_keystone(tokio, &pod);
    pod
}

/// Waits until `pod` serves keystone, its one plugin: one version serving, none refused.
fn wait_serving_keystone(tokio: &tokio::runtime::Runtime, pod: &Pod) {
    tokio.block_on(eventually(
        "the operator serves the keystone plugin",
        Duration::from_secs(60),
        || async {
            let serving = metric(pod, "wasm_operator_plugin_info", "state=\"serving\"");
            let refused = metric(pod, "wasm_operator_plugin_info", "state=\"refused\"");
            (serving == 1 && refused == 0).then_some(())
        },
    ));
}

/// keystone.wasm pushed to a registry, a cluster, and deploy/ installed on it with keystone
/// as its one plugin and `crds` applied: the registry (kept alive by the caller), the
/// cluster and what the operator's Pods are given.
fn install_keystone(
    tokio: &tokio::runtime::Runtime,
    crds: &[&str],
) -> (LocalRegistry, common::Cluster, Node) {
    let registry = LocalRegistry::start(Guard::default());
    let shipped = wasm_operator::cli::shipped_plugin_dir();
    push(
        &registry,
        &shipped.join("keystone.wasm"),
        &plugin_source(&registry, "keystone"),
    );
    let cluster = common::Cluster::start(tokio);
    let node = install(tokio, &cluster, &registry, &["keystone"], crds);
    (registry, cluster, node)
}

fn keystone(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "keystone.openstack.c5c3.io/v1alpha1", "kind": "Keystone",
        "metadata": {"name": name, "namespace": "openstack"},
        "spec": spec})
}

/// The smallest Keystone a user writes, with `changes` merged into its spec.
fn keystone_spec(changes: Value) -> Value {
    let mut spec = json!({
        "image": {"repository": "ghcr.io/c5c3/keystone", "tag": "2022.2"},
        "database": {"clusterRef": {"name": "mariadb"}, "database": "keystone",
                     "secretRef": {"name": "keystone-db"}},
        "cache": {"clusterRef": {"name": "memcached"}},
        "bootstrap": {"adminPasswordSecretRef": {"name": "keystone-admin"}},
    });
    json_patch::merge(&mut spec, &changes);
    spec
}

#[test]
fn deploy_applied_with_kubectl_serves_admission_to_the_api_server_over_tls_and_its_failure_policy_holds()
 {
    let tokio = tokio::runtime::Runtime::new().expect("tokio");
    let _context = tokio.enter();
    let (_registry, cluster, node) =
        install_keystone(&tokio, &["keystone.openstack.c5c3.io_keystones.yaml"]);
    let admin = cluster.client();
    let kubeconfig = &cluster.kubeconfig;
    let pod = start_admitting(&tokio, &admin, &node);
    kubectl(kubeconfig, &["create", "namespace", "openstack"]);

    // An invalid Keystone (an option the plugin's catalog lacks, which no schema rule sees):
    // the API server calls the plugin's validation over TLS, and kubectl shows its message.
    let write = |name: &str, object: &Value| {
        let file = node.scratch.path().join(format!("{name}.json"));
        std::fs::write(&file, object.to_string()).expect("written");
        file.display().to_string()
    };
    let invalid = write(
        "invalid",
        &keystone(
            "invalid",
            keystone_spec(json!({"extraConfig": {"token": {"expirations": "1"}}})),
        ),
    );
    let refused = kubectl_refused(kubeconfig, &["apply", "-f", &invalid]);
    // kubectl words an Invalid status by its causes: the plugin's field error, which only
    // its option catalog can produce.
    assert!(
        refused.contains(
            "The Keystone \"invalid\" is invalid: spec.extraConfig[token][expirations]: Invalid \
             value: \"expirations\": no such option in the keystone 2022.2 option catalog"
        ),
        "{refused}"
    );

    // A valid one: stored with what the plugin's defaulting fills (the CRD defaults the cache
    // backend to "", the plugin to its backend).
    let valid = write("valid", &keystone("keystone", keystone_spec(json!({}))));
    kubectl(kubeconfig, &["apply", "-f", &valid]);
    let stored: Value = serde_json::from_str(&kubectl(
        kubeconfig,
        &[
            "get",
            "keystone",
            "keystone",
            "-n",
            "openstack",
            "-o",
            "json",
        ],
    ))
    .expect("JSON");
    assert_eq!(
        stored["spec"]["cache"]["backend"], "dogpile.cache.pymemcache",
        "{stored}"
    );
    assert_eq!(
        stored["spec"]["deployment"]["resources"]["requests"]["memory"], "256Mi",
        "{stored}"
    );

    assert_no_403(&node, &[&pod]);

    // The operator down: the webhooks' failure policy is Fail, so writes of admitted kinds
    // are refused, naming the webhook that could not be called.
    drop(pod);
    let again = write("again", &keystone("another", keystone_spec(json!({}))));
    let refused = kubectl_refused(kubeconfig, &["apply", "-f", &again]);
    assert!(
        refused.contains("failed calling webhook \"default.keystone.wasm-operator.dev\""),
        "{refused}"
    );
    let absent = kubectl_refused(
        kubeconfig,
        &["get", "keystone", "another", "-n", "openstack"],
    );
    assert!(
        absent.contains("NotFound") || absent.contains("not found"),
        "{absent}"
    );
}

/// The objects of namespace `openstack` (Secrets, ConfigMaps, NetworkPolicies, Jobs,
/// CronJobs) owned
/// by the object of `uid`, as `KIND/NAME`.
async fn children(client: &kube::Client, uid: &str) -> Vec<String> {
    let mut owned = Vec::new();
    for (group, version, kind, plural) in [
        ("", "v1", "Secret", "secrets"),
        ("", "v1", "ConfigMap", "configmaps"),
        (
            "networking.k8s.io",
            "v1",
            "NetworkPolicy",
            "networkpolicies",
        ),
        ("batch", "v1", "Job", "jobs"),
        ("batch", "v1", "CronJob", "cronjobs"),
    ] {
        let api: Api<DynamicObject> = dynamic(
            client.clone(),
            Some("openstack"),
            (group, version, kind, plural),
        );
        let Ok(list) = api.list(&kube::api::ListParams::default()).await else {
            continue;
        };
        for object in list.items {
            let ours = object
                .metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.uid == uid);
            if ours {
                owned.push(format!(
                    "{kind}/{}",
                    object.metadata.name.unwrap_or_default()
                ));
            }
        }
    }
    owned.sort();
    owned
}

/// External Secrets' part in a PushSecret's deletion, which the Keystone's OpenBao finalizer
/// waits for: ESO adopts each PushSecret of `openstack` (its finalizer) and, once one is
/// deleted, purges it from OpenBao and releases it. Runs until the task is aborted.
async fn push_secret_finalizer(client: kube::Client) {
    const FINALIZER: &str = "pushsecret.externalsecrets.io/finalizer";
    let api: Api<DynamicObject> = dynamic(
        client,
        Some("openstack"),
        (
            "external-secrets.io",
            "v1alpha1",
            "PushSecret",
            "pushsecrets",
        ),
    );
    loop {
        for push in api
            .list(&kube::api::ListParams::default())
            .await
            .map(|l| l.items)
            .unwrap_or_default()
        {
            let name = push.metadata.name.clone().unwrap_or_default();
            let adopted = push
                .metadata
                .finalizers
                .iter()
                .flatten()
                .any(|f| f == FINALIZER);
            let finalizers = match (push.metadata.deletion_timestamp.is_some(), adopted) {
                (false, false) => json!([FINALIZER]),
                (true, true) => json!([]),
                _ => continue,
            };
            let _ = api
                .patch(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"metadata": {"finalizers": finalizers}})),
                )
                .await;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[test]
fn a_keystone_deleted_in_the_foreground_or_the_background_takes_its_children_with_it() {
    let tokio = tokio::runtime::Runtime::new().expect("tokio");
    let _context = tokio.enter();
    let (_registry, cluster, node) = install_keystone(
        &tokio,
        &[
            "keystone.openstack.c5c3.io_keystones.yaml",
            "external/external-secrets.yaml",
            "external/mariadb-operator.yaml",
            "external/cert-manager.yaml",
            "external/gateway-api.yaml",
        ],
    );
    let admin = cluster.client();
    let kubeconfig = &cluster.kubeconfig;
    let pod = start_admitting(&tokio, &admin, &node);
    let write = |name: &str, object: &Value| {
        let file = node.scratch.path().join(format!("{name}.json"));
        std::fs::write(&file, object.to_string()).expect("written");
        file.display().to_string()
    };
    // What the Keystone's first step gates on: its secret store Ready (written as External
    // Secrets would) and its two credentials Secrets.
    kubectl(kubeconfig, &["create", "namespace", "openstack"]);
    let store = write(
        "store",
        &json!({"apiVersion": "external-secrets.io/v1", "kind": "ClusterSecretStore",
            "metadata": {"name": "openbao-cluster-store"},
            "spec": {"provider": {"vault": {"server": "http://openbao.openbao.svc:8200", "path": "kv"}}}}),
    );
    kubectl(kubeconfig, &["apply", "-f", &store]);
    kubectl(
        kubeconfig,
        &[
            "patch",
            "clustersecretstore",
            "openbao-cluster-store",
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"status":{"conditions":[{"type":"Ready","status":"True","reason":"Valid","message":"store validated"}]}}"#,
        ],
    );
    kubectl(
        kubeconfig,
        &[
            "create",
            "secret",
            "generic",
            "keystone-db",
            "-n",
            "openstack",
            "--from-literal=username=keystone",
            "--from-literal=password=db-password",
        ],
    );
    kubectl(
        kubeconfig,
        &[
            "create",
            "secret",
            "generic",
            "keystone-admin",
            "-n",
            "openstack",
            "--from-literal=password=admin-password",
        ],
    );

    let eso = tokio.spawn(push_secret_finalizer(admin.clone()));
    for (name, cascade) in [("front", "foreground"), ("back", "background")] {
        let file = write(name, &keystone(name, keystone_spec(json!({}))));
        kubectl(kubeconfig, &["apply", "-f", &file]);
        let uid = kubectl(
            kubeconfig,
            &[
                "get",
                "keystone",
                name,
                "-n",
                "openstack",
                "-o",
                "jsonpath={.metadata.uid}",
            ],
        );
        let owned = tokio.block_on(eventually(
            &format!("{name}: the Keystone's Secrets, config and rotation CronJobs"),
            Duration::from_secs(60),
            || async {
                let owned = children(&admin, &uid).await;
                let made = owned.iter().any(|c| c.starts_with("ConfigMap/"))
                    && owned.iter().any(|c| c.starts_with("CronJob/"))
                    && owned.iter().any(|c| c.starts_with("Secret/"));
                made.then_some(owned)
            },
        ));
        kubectl(
            kubeconfig,
            &[
                "delete",
                "keystone",
                name,
                "-n",
                "openstack",
                &format!("--cascade={cascade}"),
                "--wait=false",
            ],
        );
        tokio.block_on(eventually(
            &format!("{name} ({cascade}): gone, and its children {owned:?} with it"),
            Duration::from_secs(60),
            || async {
                let gone = run_kubectl(kubeconfig, &["get", "keystone", name, "-n", "openstack"])
                    .status
                    .code()
                    == Some(1);
                (gone && children(&admin, &uid).await.is_empty()).then_some(())
            },
        ));
    }
    eso.abort();
    assert_no_403(&node, &[&pod]);
}
