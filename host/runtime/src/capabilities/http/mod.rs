//! HTTP egress: the standard `wasi:http/outgoing-handler`, served only towards the
//! destinations a plugin declared (contract 1.1, `description-extensions.egress`).
//!
//! Every request goes through [`EgressHooks::send_request`] (wasmtime-wasi-http's send
//! hook), which
//!
//! 1. checks the request's `host:port` against the plugin's [allow-list](allow) and refuses
//!    anything else with `HTTP-request-denied` before a socket is opened (logged, and
//!    counted as `refused`);
//! 2. resolves `{service}.{namespace}.svc[.cluster.local]` through the operator's
//!    [`ServiceResolver`] when one is set (off-cluster: the Service's EndpointSlices), and
//!    any other name through the system's resolver;
//! 3. connects with the request's timeouts, each capped by the plugin's
//!    [`Limits::http_timeout`](crate::Limits::http_timeout) (also the value of any timeout the
//!    guest leaves unset), over rustls for `https` (the platform's roots plus the PEM
//!    certificates `egress.trust-ca` added in this pass);
//! 4. hands back a response whose body fails `HTTP-response-body-size` past
//!    [`Limits::http_response_bytes`](crate::Limits::http_response_bytes).
//!
//! wasi-http follows no redirects: the guest does (the SDK's client), and every hop is a new
//! request through this hook, so the allow-list applies to each. The pass's deadline covers
//! the time a guest waits on a response (the wall-clock timeout of the pass drops the store
//! and with it every request in flight).

mod allow;
mod send;
mod tls;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use wasmtime_wasi_http::{RequestOptions, WasiBody, WasiHttpHooks};

pub(crate) use allow::AllowList;
pub(crate) use tls::parse_pem;

/// Resolves Service names where there is no cluster DNS (off-cluster: `dev-cluster`, the
/// demo, tests), the way kube-proxy would route them.
#[async_trait::async_trait]
pub trait ServiceResolver: Send + Sync {
    /// The addresses serving port `port` of Service `service` in `namespace`.
    async fn resolve(
        &self,
        namespace: &str,
        service: &str,
        port: u16,
    ) -> Result<Vec<SocketAddr>, ResolveError>;
}

/// Why a Service name did not resolve.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// No such Service, or it has no such port (a cluster's DNS answers NXDOMAIN).
    #[error("no Service {namespace}/{service} with port {port}")]
    NoService {
        namespace: String,
        service: String,
        port: u16,
    },
    /// The Service has no ready endpoint (in a cluster the connection is refused).
    #[error("Service {namespace}/{service} has no ready endpoint for port {port}")]
    NoEndpoints {
        namespace: String,
        service: String,
        port: u16,
    },
    /// The lookup itself failed (the API server did not answer).
    #[error("cannot resolve Service {namespace}/{service}: {message}")]
    Lookup {
        namespace: String,
        service: String,
        message: String,
    },
}

/// Is told the outcome of every HTTP request a plugin made (the operator's metrics).
pub trait EgressObserver: Send + Sync {
    /// One request of `plugin` to `destination` (`host:port`) ended with `status`: the HTTP
    /// status code, or `refused`, `timeout` or `error`.
    fn request(&self, plugin: &str, destination: &str, status: &str);
}

/// What the runtime's embedder supplies to egress: set once with
/// [`Runtime::set_egress`](crate::Runtime::set_egress).
#[derive(Clone, Default)]
pub struct EgressEnv {
    /// Resolves `*.svc.cluster.local` names; `None` uses the system's resolver (in a
    /// cluster, the cluster's DNS).
    pub resolver: Option<Arc<dyn ServiceResolver>>,
    /// Counts requests; `None` counts nothing.
    pub observer: Option<Arc<dyn EgressObserver>>,
}

impl std::fmt::Debug for EgressEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EgressEnv")
            .field("resolver", &self.resolver.is_some())
            .field("observer", &self.observer.is_some())
            .finish()
    }
}

/// The PEM certificates `egress.trust-ca` added in one pass, shared by the `egress`
/// capability (which reads them from a Secret) and the send hook.
pub(crate) type TrustedCas = Arc<Mutex<Vec<rustls::pki_types::CertificateDer<'static>>>>;

/// The Services of the target cluster a pass opened (contract 1.3), shared by the
/// `targets` capability (which sets it on open) and the send hook: a pass that works on a
/// target reaches that cluster's Services, as its children are there.
pub(crate) type TargetServices = Arc<Mutex<Option<Arc<dyn ServiceResolver>>>>;

/// What one request of a pass is sent with besides the policy.
pub(crate) struct PassEgress {
    trusted: Vec<rustls::pki_types::CertificateDer<'static>>,
    services: Option<Arc<dyn ServiceResolver>>,
}

/// The egress of one pass: what the plugin declared and may use.
#[derive(Clone)]
pub(crate) struct EgressHooks {
    inner: Arc<send::Policy>,
    trusted: TrustedCas,
    services: TargetServices,
}

impl EgressHooks {
    /// The egress of one pass of `plugin`, allowed towards `allow`.
    pub(crate) fn new(
        plugin: &str,
        allow: AllowList,
        limits: &crate::Limits,
        env: EgressEnv,
        trusted: TrustedCas,
        services: TargetServices,
    ) -> Self {
        Self {
            inner: Arc::new(send::Policy {
                plugin: plugin.to_owned(),
                allow,
                timeout: limits.http_timeout,
                max_body: limits.http_response_bytes,
                env,
            }),
            trusted,
            services,
        }
    }
}

/// The connection's I/O, driven to completion beside the response (wasi-http's shape).
pub(crate) type IoFuture = Box<dyn Future<Output = Result<(), wasmtime_wasi_http::Error>> + Send>;

/// What a send hook returns: the response head and body, and the connection's I/O.
pub(crate) type SendFuture = Box<
    dyn Future<Output = Result<(http::Response<WasiBody>, IoFuture), wasmtime_wasi_http::Error>>
        + Send,
>;

impl WasiHttpHooks for EgressHooks {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        _fut: IoFuture,
    ) -> SendFuture {
        let policy = self.inner.clone();
        let pass = PassEgress {
            trusted: self
                .trusted
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone(),
            services: self
                .services
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone(),
        };
        Box::new(async move { policy.send(request, options, pass).await })
    }
}

/// The timeout of one phase: what the guest asked for, at most `ceiling`; `ceiling` when
/// it asked for none.
fn capped(asked: Option<Duration>, ceiling: Duration) -> Duration {
    asked.map_or(ceiling, |d| d.min(ceiling))
}
