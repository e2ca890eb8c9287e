//! A real HTTPS admission webhook for the tests: a CA and a server certificate made with
//! rcgen (as the OpenBao stand-in makes its own), rustls, and axum answering each
//! AdmissionReview with what the test's responder returns. Every review received is kept.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::routing::post;
use base64::Engine as _;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// What the webhook answers one review with.
pub struct Reply {
    /// The AdmissionReview's `response` (the uid is filled in unless it sets one).
    pub response: Value,
    /// How long to wait before answering.
    pub delay: Duration,
}

impl Reply {
    /// Allowed, nothing else.
    pub fn allow() -> Self {
        Self::with(json!({"allowed": true}))
    }

    /// This `response`, at once.
    pub fn with(response: Value) -> Self {
        Self {
            response,
            delay: Duration::ZERO,
        }
    }

    /// Allowed with this JSONPatch.
    pub fn patch(operations: Value) -> Self {
        let patch = base64::engine::general_purpose::STANDARD.encode(operations.to_string());
        Self::with(json!({"allowed": true, "patchType": "JSONPatch", "patch": patch}))
    }
}

type Responder = Arc<dyn Fn(&Value) -> Reply + Send + Sync>;

struct Shared {
    respond: Responder,
    reviews: Mutex<Vec<Value>>,
}

/// A running webhook.
pub struct Webhook {
    pub addr: SocketAddr,
    /// The CA's PEM, base64 (a `clientConfig.caBundle`).
    pub ca_bundle: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Webhook {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Webhook {
    /// A webhook on 127.0.0.1 with a certificate for `127.0.0.1` and `names`.
    pub async fn start(
        names: &[&str],
        respond: impl Fn(&Value) -> Reply + Send + Sync + 'static,
    ) -> Self {
        let (ca_pem, acceptor) = tls(names);
        let tcp = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = tcp.local_addr().expect("addr");
        let shared = Arc::new(Shared {
            respond: Arc::new(respond),
            reviews: Mutex::new(Vec::new()),
        });
        let app = Router::new()
            .route("/{*path}", post(review))
            .route("/", post(review))
            .with_state(shared.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(TlsListener { tcp, acceptor }, app).await;
        });
        Self {
            addr,
            ca_bundle: base64::engine::general_purpose::STANDARD.encode(ca_pem),
            shared,
            task,
        }
    }

    /// `https://127.0.0.1:<port>/<path>`.
    pub fn url(&self, path: &str) -> String {
        format!("https://{}/{path}", self.addr)
    }

    /// The `clientConfig` of this webhook by URL.
    pub fn client_config(&self, path: &str) -> Value {
        json!({"url": self.url(path), "caBundle": self.ca_bundle})
    }

    /// The AdmissionReview requests received so far.
    pub fn reviews(&self) -> Vec<Value> {
        self.shared.reviews.lock().expect("reviews").clone()
    }
}

async fn review(
    State(shared): State<Arc<Shared>>,
    body: String,
) -> ([(&'static str, &'static str); 1], String) {
    let review: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    shared.reviews.lock().expect("reviews").push(review.clone());
    let reply = (shared.respond)(&review);
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let mut response = reply.response;
    if response.get("uid").is_none() {
        response["uid"] = review["request"]["uid"].clone();
    }
    let review = json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": response,
    });
    ([("content-type", "application/json")], review.to_string())
}

fn tls(names: &[&str]) -> (String, TlsAcceptor) {
    let ca_key = rcgen::KeyPair::generate().expect("CA key");
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "webhook test CA");
    let ca = ca_params.self_signed(&ca_key).expect("CA");
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let key = rcgen::KeyPair::generate().expect("key");
    let mut sans = vec!["127.0.0.1".to_owned()];
    sans.extend(names.iter().map(|n| (*n).to_owned()));
    let cert = rcgen::CertificateParams::new(sans)
        .expect("params")
        .signed_by(&key, &issuer)
        .expect("certificate");
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("protocols")
    .with_no_client_auth()
    .with_single_cert(
        vec![cert.der().clone()],
        rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
    )
    .expect("server config");
    (ca.pem(), TlsAcceptor::from(Arc::new(config)))
}

struct TlsListener {
    tcp: TcpListener,
    acceptor: TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, addr)) = self.tcp.accept().await else {
                continue;
            };
            if let Ok(tls) = self.acceptor.accept(stream).await {
                return (tls, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

/// A MutatingWebhookConfiguration (`mutating`) or ValidatingWebhookConfiguration named
/// `name` with these webhooks.
pub fn configuration(mutating: bool, name: &str, webhooks: Vec<Value>) -> Value {
    let kind = if mutating {
        "MutatingWebhookConfiguration"
    } else {
        "ValidatingWebhookConfiguration"
    };
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": webhooks,
    })
}

/// One webhook entry: `name`, on `operations` of `resources` in every group and version,
/// `sideEffects: None`, admissionReviewVersions v1.
pub fn hook(name: &str, client_config: Value, operations: &[&str], resources: &[&str]) -> Value {
    json!({
        "name": name,
        "clientConfig": client_config,
        "rules": [{
            "operations": operations,
            "apiGroups": ["*"],
            "apiVersions": ["*"],
            "resources": resources,
        }],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    })
}

/// The collection path of the configurations.
pub fn path(mutating: bool) -> &'static str {
    if mutating {
        "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
    } else {
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
    }
}

/// Registers `configuration` (201 expected).
pub async fn register(client: &kube::Client, mutating: bool, configuration: Value) {
    let created = crate::support::post(client, path(mutating), configuration).await;
    assert_eq!(created.status, 201, "{}", created.body);
}
