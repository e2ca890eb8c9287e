//! The admission webhook server: each plugin's `admission` export (contract 1.2) served as
//! AdmissionReview v1 over HTTPS, on `POST /admission/{plugin}/default` (a mutating webhook)
//! and `POST /admission/{plugin}/validate` (a validating one).
//!
//! Every replica serves it, leader or not. A review goes to the plugin version the
//! controller runs now, so a hot-swapped `.wasm` admits with its new rules at once. A call
//! that traps, runs past the deadline or the memory cap answers as the kind's
//! `failure-policy` says (`Fail`: refused with a 500 Status; `Ignore`: allowed unchanged);
//! a review for a plugin this host does not run answers 404, so the API server applies the
//! configuration's own `failurePolicy`. Defaulting may not change the object's identity,
//! owners or status (see [`admit`]).
//!
//! - [`review`]: AdmissionReview in and out; [`admit`]: one review answered by a plugin;
//! - [`tls`]: the listener and the swappable certificate; [`certs`]: files or the managed
//!   Secret; [`configurations`]: the Mutating/ValidatingWebhookConfigurations; [`inject`]:
//!   the managed CA kept in their `caBundle`.

mod admit;
pub mod certs;
pub mod configurations;
pub mod inject;
mod review;
mod timeout;
mod tls;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use tokio::sync::watch;
use wasm_operator_types::admission::Phase;

pub use certs::CertSource;
pub use tls::TlsError;

use crate::controller::Controller;
use crate::metrics::Metrics;

/// The largest review body served: an object and its old version, each up to the API
/// server's 3 MiB request limit.
const MAX_REVIEW: usize = 8 << 20;

/// Where and with which certificate the webhooks are served.
#[derive(Debug, Clone)]
pub struct WebhookConfig {
    pub addr: SocketAddr,
    pub cert: CertSource,
}

/// Why the webhook server cannot start.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    #[error("the webhook certificate: {0}")]
    Cert(#[from] certs::CertError),
    #[error("the webhook TLS configuration: {0}")]
    Tls(#[from] TlsError),
    #[error("cannot serve webhooks on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
}

/// A serving webhook server.
pub(crate) struct WebhookServer {
    pub addr: SocketAddr,
    /// The CA of a managed certificate (what a configuration's `caBundle` holds).
    pub ca_pem: Option<String>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl WebhookServer {
    pub(crate) fn abort(&self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

#[derive(Clone)]
struct Served {
    controllers: watch::Receiver<Vec<Arc<Controller>>>,
    metrics: Arc<Metrics>,
}

/// Starts serving until `stop` turns true.
pub(crate) async fn serve(
    config: &WebhookConfig,
    client: &kube::Client,
    controllers: watch::Receiver<Vec<Arc<Controller>>>,
    metrics: Arc<Metrics>,
    mut stop: watch::Receiver<bool>,
) -> Result<WebhookServer, WebhookError> {
    let loaded = config.cert.load(client).await?;
    let acceptor = loaded.cert.acceptor()?;
    let tcp = tokio::net::TcpListener::bind(config.addr)
        .await
        .map_err(|source| WebhookError::Bind {
            addr: config.addr,
            source,
        })?;
    let addr = tcp.local_addr().map_err(|source| WebhookError::Bind {
        addr: config.addr,
        source,
    })?;
    let app = Router::new()
        .route("/admission/{plugin}/{phase}", post(handle))
        .layer(DefaultBodyLimit::max(MAX_REVIEW))
        .with_state(Served {
            controllers,
            metrics,
        });
    let listener = tls::TlsListener::new(tcp, acceptor).map_err(|source| WebhookError::Bind {
        addr: config.addr,
        source,
    })?;
    let server = tokio::spawn(async move {
        let shutdown = async move {
            let _ = stop.wait_for(|s| *s).await;
        };
        if let Err(error) = axum::serve(listener, app)
            .with_graceful_shutdown(shutdown)
            .await
        {
            tracing::warn!(%error, "the webhook server stopped");
        }
    });
    tracing::info!(%addr, "serving admission webhooks");
    let mut tasks = vec![server, loaded.task];
    if let (
        Some(ca_pem),
        CertSource::Managed {
            service_namespace,
            service_name,
            ..
        },
    ) = (&loaded.ca_pem, &config.cert)
    {
        tasks.push(tokio::spawn(inject::keep(
            client.clone(),
            inject::Target {
                namespace: service_namespace.clone(),
                name: service_name.clone(),
                ca_pem: ca_pem.clone(),
            },
        )));
    }
    Ok(WebhookServer {
        addr,
        ca_pem: loaded.ca_pem,
        tasks,
    })
}

/// The query of a review's URL.
#[derive(serde::Deserialize)]
struct ReviewQuery {
    /// How long the API server waits for the answer (Go's duration form).
    timeout: Option<String>,
}

async fn handle(
    State(served): State<Served>,
    Path((plugin, phase)): Path<(String, String)>,
    Query(query): Query<ReviewQuery>,
    body: Bytes,
) -> Response {
    let phase = match phase.as_str() {
        "default" => Phase::Default,
        "validate" => Phase::Validate,
        _ => return (StatusCode::NOT_FOUND, "no such admission phase").into_response(),
    };
    let controller = served
        .controllers
        .borrow()
        .iter()
        .find(|c| c.name() == plugin)
        .cloned();
    let Some(controller) = controller else {
        return (
            StatusCode::NOT_FOUND,
            format!("no plugin named {plugin:?} runs on this host"),
        )
            .into_response();
    };
    let review = match review::Review::parse(&body) {
        Ok(review) => review,
        Err(error) => return (StatusCode::BAD_REQUEST, error.to_string()).into_response(),
    };
    let budget = timeout::budget(query.timeout.as_deref());
    let (answer, outcome) = admit::answer(&controller, phase, &review, budget).await;
    served.metrics.admission(&plugin, phase.as_str(), outcome);
    tracing::debug!(
        plugin,
        phase = phase.as_str(),
        outcome,
        uid = review.uid,
        "admission review"
    );
    let body = review::response(&review, &answer).to_string();
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}
