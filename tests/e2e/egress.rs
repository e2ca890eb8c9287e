//! HTTP egress through the real host and the egress test plugin (`tests/guests/egress`),
//! on the embedded API server: a plugin reaches the Services it declared (resolved from
//! their EndpointSlices, as off-cluster), and nothing else.
//!
//! The plugin declares `*.svc.cluster.local:5000` and `*.svc.cluster.local:5443`. Each
//! "Service" is a local TCP server the test starts; a Service and an EndpointSlice in the
//! embedded API server point its port at `127.0.0.1:<the server's port>`. The servers count
//! the connections they accept, so a test can prove none reached one.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use wasm_operator::operator::{OperatorConfig, RunningOperator};
use wasm_operator_e2e::{Cluster, cluster_with, eventually};

const WAIT: Duration = Duration::from_secs(30);

/// plugins.toml of every test: a 1 s ceiling on HTTP timeouts and a 1 KiB cap on bodies,
/// within a 20 s pass deadline.
const PLUGINS_TOML: &str =
    "[plugins.egress]\ndeadline_ms = 20000\nhttp_timeout_ms = 1000\nhttp_max_response_kib = 1\n";

/// What a test server answers.
#[derive(Clone)]
enum Answer {
    /// 200 with this body (with a Content-Length).
    Ok(&'static str),
    /// 200 with this many bytes, chunked (no Content-Length).
    Chunked(usize),
    /// 302 to this location.
    Redirect(String),
    /// Reads the request and never answers.
    Silence,
    /// Sends the head and part of the body, then nothing more.
    Stall,
    /// 200 with the request's framing as its body: `content-length: N` or
    /// `transfer-encoding: chunked` (the head's line, lower-cased), else `none`.
    Framing,
}

/// A local server counting the connections it accepted.
struct Server {
    port: u16,
    accepted: Arc<AtomicUsize>,
}

impl Server {
    async fn start(answer: Answer) -> Self {
        Self::start_with(answer, None).await
    }

    async fn start_with(answer: Answer, tls: Option<tokio_rustls::TlsAcceptor>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                count.fetch_add(1, Ordering::SeqCst);
                let answer = answer.clone();
                let tls = tls.clone();
                tokio::spawn(async move {
                    match tls {
                        Some(acceptor) => {
                            if let Ok(stream) = acceptor.accept(stream).await {
                                serve(stream, answer).await;
                            }
                        }
                        None => serve(stream, answer).await,
                    }
                });
            }
        });
        Self { port, accepted }
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

/// Reads one request head and answers it.
async fn serve<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin>(
    mut stream: S,
    answer: Answer,
) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte).await {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let reply = match answer {
        Answer::Framing => {
            let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
            let framing = head
                .lines()
                .find(|l| l.starts_with("content-length:") || l.starts_with("transfer-encoding:"))
                .unwrap_or("none")
                .to_owned();
            format!(
                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{framing}",
                framing.len()
            )
        }
        Answer::Ok(body) => format!(
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        ),
        Answer::Chunked(n) => {
            let chunk = "x".repeat(256);
            let mut reply = String::from(
                "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
            );
            for _ in 0..n.div_ceil(256) {
                reply.push_str(&format!("100\r\n{chunk}\r\n"));
            }
            reply.push_str("0\r\n\r\n");
            reply
        }
        Answer::Redirect(location) => format!(
            "HTTP/1.1 302 Found\r\nlocation: {location}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        ),
        Answer::Silence => {
            tokio::time::sleep(Duration::from_secs(120)).await;
            return;
        }
        Answer::Stall => {
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nfirst bytes")
                .await;
            let _ = stream.flush().await;
            tokio::time::sleep(Duration::from_secs(120)).await;
            return;
        }
    };
    let _ = stream.write_all(reply.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// The operator over the egress plugin alone.
struct Harness {
    cluster: Cluster,
    operator: Option<RunningOperator>,
    _plugins: tempfile::TempDir,
}

impl Harness {
    async fn start() -> Self {
        Self::start_with(PLUGINS_TOML).await
    }

    async fn start_with(plugins_toml: &str) -> Self {
        wasm_operator_e2e::init_logs();
        let cluster = cluster_with(&[]).await;
        let plugins = tempfile::tempdir().expect("plugins");
        std::fs::copy(
            wasm_operator::cli::test_plugin_dir().join("egress-reconciler.wasm"),
            plugins.path().join("egress.wasm"),
        )
        .expect("the egress plugin is copied");
        std::fs::write(plugins.path().join("plugins.toml"), plugins_toml).expect("plugins.toml");
        let cache = wasm_operator_e2e::shared_cache();
        let operator = cluster
            .start_operator(cache, OperatorConfig::new(plugins.path()))
            .await;
        Self {
            cluster,
            operator: Some(operator),
            _plugins: plugins,
        }
    }

    /// Service `name` in `ns` with port `port` (named `web`), and, given `target`, an
    /// EndpointSlice sending it to `127.0.0.1:target`.
    async fn service(&self, name: &str, port: u16, target: Option<u16>) {
        self.cluster
            .create(json!({
                "apiVersion": "v1", "kind": "Service",
                "metadata": {"name": name, "namespace": "ns"},
                "spec": {"ports": [{"name": "web", "port": port, "targetPort": 8080}]},
            }))
            .await;
        if let Some(target) = target {
            self.cluster
                .create(json!({
                    "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                    "metadata": {
                        "name": format!("{name}-1"), "namespace": "ns",
                        "labels": {"kubernetes.io/service-name": name},
                    },
                    "addressType": "IPv4",
                    "ports": [{"name": "web", "port": target, "protocol": "TCP"}],
                    "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}],
                }))
                .await;
        }
    }

    /// Creates a primary asking for `data` and returns the plugin's outcome.
    async fn request(&self, name: &str, data: Value) -> String {
        self.cluster
            .create(json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": "ns"},
                "data": data,
            }))
            .await;
        let result = format!("{name}-result");
        eventually(&format!("the outcome of {name}"), WAIT, || async {
            let found = self.cluster.get("v1", "ConfigMap", "ns", &result).await?;
            found["data"]["outcome"].as_str().map(str::to_owned)
        })
        .await
    }

    fn metrics(&self) -> String {
        self.operator.as_ref().expect("running").metrics().render()
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        if let Some(operator) = self.operator.take() {
            operator.kill();
        }
    }
}

#[tokio::test]
async fn a_declared_service_is_reached_through_its_endpoint_slice_and_counted() {
    let harness = Harness::start().await;
    let server = Server::start(Answer::Ok("hello")).await;
    harness.service("keystone", 5000, Some(server.port)).await;

    let outcome = harness
        .request(
            "allowed",
            json!({"url": "http://keystone.ns.svc.cluster.local:5000/v3"}),
        )
        .await;

    assert_eq!(outcome, "status 200: hello");
    assert_eq!(server.accepted(), 1);
    let metrics = harness.metrics();
    assert!(
        metrics.contains(
            r#"wasm_operator_plugin_http_requests_total{plugin="egress",destination="keystone.ns.svc.cluster.local:5000",status="200"} 1"#
        ),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_request_body_is_sent_with_its_content_length_not_chunked() {
    let harness = Harness::start().await;
    let server = Server::start(Answer::Framing).await;
    harness.service("keystone", 5000, Some(server.port)).await;

    let url = "http://keystone.ns.svc.cluster.local:5000/v3/auth/tokens";
    let framing = harness
        .request(
            "post",
            json!({"url": url, "method": "POST", "body": "{\"auth\": {}}"}),
        )
        .await;
    let empty = harness
        .request("empty", json!({"url": url, "method": "POST"}))
        .await;
    let get = harness.request("get", json!({"url": url})).await;

    assert_eq!(framing, "status 200: content-length: 12");
    assert_eq!(empty, "status 200: content-length: 0");
    assert_eq!(get, "status 200: none");
}

#[tokio::test]
async fn a_request_to_an_undeclared_destination_is_refused_before_any_connection() {
    let harness = Harness::start().await;
    let server = Server::start(Answer::Ok("secret")).await;
    harness.service("other", 5001, Some(server.port)).await;

    let outcome = harness
        .request(
            "refused",
            json!({"url": "http://other.ns.svc.cluster.local:5001/"}),
        )
        .await;

    assert_eq!(
        outcome,
        "http://other.ns.svc.cluster.local:5001/: refused: other.ns.svc.cluster.local:5001 is not a destination the plugin declared"
    );
    assert_eq!(server.accepted(), 0, "no connection reached the server");
    let metrics = harness.metrics();
    assert!(
        metrics.contains(
            r#"wasm_operator_plugin_http_requests_total{plugin="egress",destination="other.ns.svc.cluster.local:5001",status="refused"} 1"#
        ),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_redirect_out_of_the_declared_destinations_is_refused() {
    let harness = Harness::start().await;
    let elsewhere = Server::start(Answer::Ok("secret")).await;
    harness.service("other", 5001, Some(elsewhere.port)).await;
    let redirecting = Server::start(Answer::Redirect(
        "http://other.ns.svc.cluster.local:5001/x".into(),
    ))
    .await;
    harness
        .service("keystone", 5000, Some(redirecting.port))
        .await;

    let outcome = harness
        .request(
            "redirected",
            json!({"url": "http://keystone.ns.svc.cluster.local:5000/"}),
        )
        .await;

    assert!(
        outcome.ends_with(
            "refused: other.ns.svc.cluster.local:5001 is not a destination the plugin declared"
        ),
        "{outcome}"
    );
    assert_eq!(redirecting.accepted(), 1, "the first hop was sent");
    assert_eq!(elsewhere.accepted(), 0, "the redirect was not followed");
}

#[tokio::test]
async fn a_request_waiting_past_the_http_timeout_ceiling_times_out_within_the_pass_deadline() {
    let harness = Harness::start().await;
    let server = Server::start(Answer::Silence).await;
    harness.service("slow", 5000, Some(server.port)).await;

    // The plugin asks for 60 s; plugins.toml caps it at 1 s, well inside the 20 s deadline.
    let outcome = harness
        .request(
            "slow",
            json!({"url": "http://slow.ns.svc.cluster.local:5000/", "timeout_ms": "60000"}),
        )
        .await;

    assert_eq!(outcome, "http://slow.ns.svc.cluster.local:5000/: timed out");
    assert_eq!(server.accepted(), 1);

    // The same between two bytes of the body.
    let stalling = Server::start(Answer::Stall).await;
    harness.service("stalling", 5000, Some(stalling.port)).await;
    let outcome = harness
        .request(
            "stalling",
            json!({"url": "http://stalling.ns.svc.cluster.local:5000/", "timeout_ms": "60000"}),
        )
        .await;
    assert_eq!(
        outcome,
        "http://stalling.ns.svc.cluster.local:5000/: timed out"
    );
    let metrics = harness.metrics();
    assert!(
        metrics.contains(r#"destination="slow.ns.svc.cluster.local:5000",status="timeout"} 1"#),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_pass_waiting_on_a_response_past_its_deadline_fails_with_the_deadline() {
    let harness =
        Harness::start_with("[plugins.egress]\ndeadline_ms = 500\nhttp_timeout_ms = 60000\n").await;
    let server = Server::start(Answer::Silence).await;
    harness.service("slow", 5000, Some(server.port)).await;
    harness
        .cluster
        .create(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "stuck", "namespace": "ns"},
            "data": {"url": "http://slow.ns.svc.cluster.local:5000/"},
        }))
        .await;

    let note = eventually("the PassFailed event", WAIT, || async {
        let events = harness.cluster.events_with_reason("ns", "PassFailed").await;
        events
            .iter()
            .find_map(|e| e["note"].as_str().map(str::to_owned))
    })
    .await;

    assert!(
        note.contains("plugin egress: the pass for ns/stuck exceeded its deadline of 500ms"),
        "{note}"
    );
    assert!(server.accepted() >= 1, "the request was in flight");
    assert_eq!(
        harness
            .cluster
            .get("v1", "ConfigMap", "ns", "stuck-result")
            .await,
        None,
        "the pass never got to write its outcome"
    );
}

#[tokio::test]
async fn a_response_over_the_body_cap_fails_too_large_with_or_without_a_content_length() {
    let harness = Harness::start().await;
    let big: &'static str = Box::leak("y".repeat(4096).into_boxed_str());
    let sized = Server::start(Answer::Ok(big)).await;
    harness.service("sized", 5000, Some(sized.port)).await;
    let chunked = Server::start(Answer::Chunked(4096)).await;
    harness.service("chunked", 5000, Some(chunked.port)).await;

    for name in ["sized", "chunked"] {
        let url = format!("http://{name}.ns.svc.cluster.local:5000/");
        let outcome = harness.request(name, json!({"url": url})).await;
        assert_eq!(
            outcome,
            format!("{url}: the response body is over the host's limit")
        );
    }
}

#[tokio::test]
async fn a_service_without_endpoints_fails_like_a_refused_connection_and_no_service_like_no_such_host()
 {
    let harness = Harness::start().await;
    harness.service("empty", 5000, None).await;

    let outcome = harness
        .request(
            "empty",
            json!({"url": "http://empty.ns.svc.cluster.local:5000/"}),
        )
        .await;

    assert_eq!(
        outcome,
        "http://empty.ns.svc.cluster.local:5000/: cannot connect: connection refused"
    );
    // No such Service at all: as a cluster's DNS answers NXDOMAIN.
    let outcome = harness
        .request(
            "missing",
            json!({"url": "http://missing.ns.svc.cluster.local:5000/"}),
        )
        .await;
    assert_eq!(
        outcome,
        "http://missing.ns.svc.cluster.local:5000/: cannot connect: no such host missing.ns.svc.cluster.local"
    );
}

/// A CA, and a server certificate it signed for `tls.ns.svc.cluster.local`.
fn certificates() -> (String, tokio_rustls::TlsAcceptor) {
    let ca_key = rcgen::KeyPair::generate().expect("a CA key");
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).expect("the CA");
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let key = rcgen::KeyPair::generate().expect("a server key");
    let params = rcgen::CertificateParams::new(vec!["tls.ns.svc.cluster.local".to_owned()])
        .expect("server params");
    let cert = params
        .signed_by(&key, &issuer)
        .expect("the server certificate");
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_no_client_auth()
    .with_single_cert(
        vec![cert.der().clone()],
        rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
    )
    .expect("the server's TLS config");
    (ca.pem(), tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

#[tokio::test]
async fn https_is_trusted_with_the_ca_a_plugin_names_in_a_secret_and_not_without() {
    let harness = Harness::start().await;
    let (ca_pem, acceptor) = certificates();
    let server = Server::start_with(Answer::Ok("secure"), Some(acceptor)).await;
    harness.service("tls", 5443, Some(server.port)).await;
    harness
        .cluster
        .create(json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "keystone-ca", "namespace": "ns"},
            "stringData": {"ca.crt": ca_pem},
        }))
        .await;
    let url = "https://tls.ns.svc.cluster.local:5443/";

    let trusted = harness
        .request(
            "trusted",
            json!({"url": url, "ca_secret": "keystone-ca", "ca_key": "ca.crt"}),
        )
        .await;
    let untrusted = harness.request("untrusted", json!({"url": url})).await;

    assert_eq!(trusted, "status 200: secure");
    assert_eq!(
        untrusted,
        format!("{url}: cannot connect: the server's TLS certificate is not trusted")
    );
}
