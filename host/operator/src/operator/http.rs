//! The operations endpoint: `/metrics` (Prometheus text), `/healthz` (the process serves),
//! `/readyz` (every plugin's controller started, a reconciler serving, and every cache
//! synced).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use tokio::sync::watch;

use crate::controller::Controller;
use crate::informer::Informers;
use crate::metrics::Metrics;

/// What the endpoint reports from.
#[derive(Clone)]
pub(crate) struct Health {
    pub metrics: Arc<Metrics>,
    pub informers: Arc<Informers>,
    /// Set once every plugin's controller has started.
    pub started: watch::Receiver<bool>,
    /// The reconcilers serving.
    pub controllers: watch::Receiver<Vec<Arc<Controller>>>,
    /// The plugin files refused as they look now.
    pub refused: watch::Receiver<Vec<String>>,
}

async fn metrics(State(health): State<Health>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        health.metrics.render(),
    )
}

async fn healthz() -> &'static str {
    "ok"
}

async fn readyz(State(health): State<Health>) -> (StatusCode, String) {
    if !*health.started.borrow() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "plugins are loading".into(),
        );
    }
    if health.controllers.borrow().is_empty() {
        let refused = health.refused.borrow();
        let why = if refused.is_empty() {
            "the plugin directory holds no reconciler".to_owned()
        } else {
            format!("refused: {}", refused.join(", "))
        };
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("no reconciler serves ({why})"),
        );
    }
    let unsynced = health.informers.unsynced();
    if unsynced.is_empty() {
        (StatusCode::OK, "ok".into())
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("caches not synced: {}", unsynced.join(", ")),
        )
    }
}

/// Binds `addr` and serves until `stop` turns true; returns the bound address.
pub(crate) async fn serve(
    addr: SocketAddr,
    health: Health,
    mut stop: watch::Receiver<bool>,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let app = Router::new()
        .route("/metrics", get(metrics))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .with_state(health);
    let task = tokio::spawn(async move {
        let shutdown = async move {
            let _ = stop.wait_for(|s| *s).await;
        };
        if let Err(error) = axum::serve(listener, app)
            .with_graceful_shutdown(shutdown)
            .await
        {
            tracing::warn!(%error, "the operations endpoint stopped");
        }
    });
    Ok((bound, task))
}
