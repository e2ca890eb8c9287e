//! The HTTP server: shared state, the router, and the handle tests and the CLI hold.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State as AxumState};
use axum::http::{HeaderMap, Method, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::actors::{self, Actor, ActorError, Running};
use crate::authn::{self, User};
use crate::faults::{Counts, Fault, FaultAction, Hooks};
use crate::registry::Registry;
use crate::route::{Params, Route, Target, route};
use crate::status::{ApiError, Result};
use crate::store::Store;
use crate::token::TokenSigner;
use crate::wal::WalError;
use crate::{access_review, discovery, lifecycle, rbac, read, table, token, write};

/// The largest request body the server takes (kube-apiserver's 3 MiB).
pub(crate) const MAX_BODY: usize = wasm_operator_types::MAX_REQUEST_BODY;

/// How a server starts.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Where the write-ahead log lives; `None` keeps everything in memory.
    pub data_dir: Option<PathBuf>,
    /// How many changes the watch history keeps; a watch from an older version is 410 Gone.
    pub watch_history: usize,
    /// The cluster actors that run (none by default).
    pub actors: Vec<Actor>,
    /// How many watches one user outside `system:masters` may hold open at once.
    pub max_watches_per_user: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            port: 0,
            data_dir: None,
            watch_history: crate::store::HISTORY,
            actors: Vec::new(),
            max_watches_per_user: crate::watch_slots::DEFAULT_MAX_WATCHES_PER_USER,
        }
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("cannot listen on 127.0.0.1:{port}: {source}")]
    Bind {
        port: u16,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot open the data directory: {0}")]
    Storage(#[from] WalError),
    #[error("cannot make the serving certificate: {0}")]
    Tls(String),
    #[error("cannot keep the admin token in the data directory: {0}")]
    Token(#[source] std::io::Error),
    #[error("cannot build a client for the server: {0}")]
    Client(String),
    #[error(transparent)]
    Actor(#[from] ActorError),
}

/// Everything behind the lock.
pub(crate) struct State {
    pub store: Store,
    pub registry: Registry,
    pub hooks: Hooks,
    /// Authorization decisions since the roles and bindings last changed.
    pub decisions: rbac::Decisions,
    next_cluster_ip: u32,
}

impl State {
    fn new(store: Store) -> Self {
        let mut state = Self {
            store,
            registry: Registry::new(),
            hooks: Hooks::default(),
            decisions: rbac::Decisions::default(),
            next_cluster_ip: 10,
        };
        state.refresh_registry();
        state
    }

    /// Re-reads the served kinds from the stored CRDs; the objects of a kind no longer
    /// served are deleted with it.
    pub(crate) fn refresh_registry(&mut self) {
        let crds: Vec<Value> = self
            .store
            .list("apiextensions.k8s.io", "customresourcedefinitions", None)
            .map(|(_, v)| v.clone())
            .collect();
        self.registry.set_crds(crds.iter());
        let orphans: Vec<_> = self
            .store
            .iter()
            .filter(|(k, _)| {
                !self
                    .registry
                    .all()
                    .iter()
                    .any(|rt| rt.group == k.group && rt.plural == k.plural)
            })
            .map(|(k, _)| k.clone())
            .collect();
        for key in orphans {
            if let Err(e) = self.store.remove(&key) {
                tracing::error!(error = %e, "cannot delete an object of a deleted CRD");
            }
        }
    }

    /// Gives a new ClusterIP Service its address from 10.96.0.0/16.
    pub(crate) fn allocate_cluster_ip(&mut self, service: &mut Value) {
        let Some(spec) = service.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        if spec
            .get("clusterIP")
            .and_then(Value::as_str)
            .is_some_and(|ip| !ip.is_empty())
        {
            return;
        }
        if spec
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| t == "ExternalName")
        {
            return;
        }
        let n = self.next_cluster_ip;
        self.next_cluster_ip += 1;
        let ip = format!("10.96.{}.{}", n / 256, n % 256);
        spec.insert("clusterIP".into(), json!(ip));
        spec.insert("clusterIPs".into(), json!([ip]));
        spec.insert("ipFamilies".into(), json!(["IPv4"]));
        spec.insert("ipFamilyPolicy".into(), json!("SingleStack"));
    }
}

/// The state shared by every request.
pub(crate) struct Shared {
    state: Mutex<State>,
    lifecycle: Notify,
    signer: TokenSigner,
    /// The bearer token of [`User::admin`].
    admin_token: String,
    /// The watches each user holds open.
    watch_slots: Arc<crate::watch_slots::WatchSlots>,
    /// ServiceAccount tokens already verified.
    verified_tokens: crate::verified_tokens::VerifiedTokens,
}

impl Shared {
    /// Locks the state (a handler that panicked leaves consistent data: writes are single
    /// store calls).
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The key ServiceAccount tokens are signed with.
    pub(crate) fn signer(&self) -> &TokenSigner {
        &self.signer
    }

    /// The bearer token of the server's admin user.
    pub(crate) fn admin_token(&self) -> &str {
        &self.admin_token
    }

    /// Whether `user` may do `request` (RBAC, its decisions remembered until a role or
    /// binding changes).
    pub(crate) fn authorize(&self, user: &User, request: &rbac::Request<'_>) -> bool {
        let mut state = self.lock();
        let state = &mut *state;
        rbac::decide(&state.store, &mut state.decisions, user, request)
    }

    /// ServiceAccount tokens already verified.
    pub(crate) fn verified_tokens(&self) -> &crate::verified_tokens::VerifiedTokens {
        &self.verified_tokens
    }

    /// The watches each user holds open.
    pub(crate) fn watch_slots(&self) -> &Arc<crate::watch_slots::WatchSlots> {
        &self.watch_slots
    }

    /// Wakes the lifecycle controllers.
    pub(crate) fn wake_lifecycle(&self) {
        self.lifecycle.notify_one();
    }
}

/// A running server.
pub struct ApiServer {
    addr: SocketAddr,
    /// The CA that signed the serving certificate (PEM).
    ca_pem: String,
    /// Signs client certificates with that CA.
    issuer: crate::tls::ClientIssuer,
    shared: Arc<Shared>,
    actors: Running,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl ApiServer {
    /// Starts a server on 127.0.0.1 with the `default` namespace (and `kube-system`).
    pub async fn start(config: ServerConfig) -> Result<Self, ServerError> {
        let store = match &config.data_dir {
            Some(dir) => Store::open(dir, config.watch_history)?,
            None => Store::in_memory(config.watch_history),
        };
        let shared = Arc::new(Shared {
            state: Mutex::new(State::new(store)),
            lifecycle: Notify::new(),
            signer: TokenSigner::generate(),
            admin_token: match &config.data_dir {
                Some(dir) => authn::kept_admin_token(dir).map_err(ServerError::Token)?,
                None => authn::new_admin_token(),
            },
            watch_slots: crate::watch_slots::WatchSlots::new(config.max_watches_per_user),
            verified_tokens: crate::verified_tokens::VerifiedTokens::default(),
        });
        for ns in ["default", "kube-system"] {
            ensure_namespace(&shared, ns).await;
        }
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", config.port))
            .await
            .map_err(|source| ServerError::Bind {
                port: config.port,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| ServerError::Bind {
            port: config.port,
            source,
        })?;
        let names = vec!["127.0.0.1".to_owned(), "localhost".to_owned()];
        let ca_name = "wasm-operator embedded API server CA";
        let tls = match &config.data_dir {
            Some(dir) => crate::tls::kept(&dir.join("serving"), ca_name, names),
            None => crate::tls::generate(ca_name, names),
        }
        .map_err(ServerError::Tls)?;
        let ca_pem = tls.ca_pem.clone();
        let issuer = tls.issuer;
        let listener = crate::tls::TlsListener::new(listener, tls.acceptor, "the API server")
            .map_err(|source| ServerError::Bind {
                port: config.port,
                source,
            })?;
        let app = Router::new()
            .fallback(dispatch)
            .layer(DefaultBodyLimit::disable())
            .with_state(shared.clone());
        let serve = tokio::spawn(async move {
            let app = app.into_make_service_with_connect_info::<crate::tls::ClientCertificate>();
            if let Err(e) = axum::serve(listener, app).await {
                tracing::error!(error = %e, "the API server stopped");
            }
        });
        let controllers = {
            let shared = shared.clone();
            tokio::spawn(async move {
                loop {
                    shared.lifecycle.notified().await;
                    lifecycle::settle(&mut shared.lock());
                }
            })
        };
        // The namespaces there from the start (or from the data directory) get their
        // default ServiceAccounts.
        shared.wake_lifecycle();
        let mut server = Self {
            addr,
            ca_pem,
            issuer,
            shared,
            actors: Running::default(),
            tasks: vec![serve, controllers],
        };
        if !config.actors.is_empty() {
            let (running, tasks) = actors::start(server.client()?, &config.actors).await?;
            server.actors = running;
            server.tasks.extend(tasks);
        }
        Ok(server)
    }

    /// The actors that run, in start order.
    pub fn actors(&self) -> Vec<Actor> {
        self.actors.names()
    }

    /// The running actors and their control handles.
    #[allow(dead_code, reason = "used by the actors' test controls")]
    pub(crate) fn running(&self) -> &Running {
        &self.actors
    }

    /// The claims of a ServiceAccount token when this server signed it and it has not
    /// expired (what a TokenReview answers).
    pub fn review_token(&self, token: &str) -> Result<Value, crate::token::TokenError> {
        self.shared.signer().review(token)
    }

    /// `https://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// The CA (PEM) that signed the server's certificate: what a client trusts. Made when
    /// the server starts.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// A client certificate (PEM) and its key (PEM) for `user` in `groups`, signed by the
    /// server's CA: a client presenting it authenticates as that user (the common name) in
    /// those groups (the organizations) and `system:authenticated`, as kube-apiserver's
    /// x509 authenticator reads a certificate of its client CA.
    pub fn client_certificate(
        &self,
        user: &str,
        groups: &[&str],
    ) -> Result<(String, String), ServerError> {
        self.issuer.issue(user, groups).map_err(ServerError::Tls)
    }

    /// A kube client of this server, authenticated as the admin user.
    pub fn client(&self) -> Result<kube::Client, ServerError> {
        self.client_with_token(self.admin_token())
    }

    /// A kube client of this server that authenticates with `token` (a ServiceAccount's,
    /// from a TokenRequest) and trusts the server's CA.
    pub fn client_with_token(&self, token: &str) -> Result<kube::Client, ServerError> {
        let url = self
            .url()
            .parse()
            .map_err(|e: axum::http::uri::InvalidUri| ServerError::Client(e.to_string()))?;
        let mut config = kube::Config::new(url);
        config.default_namespace = "default".into();
        config.auth_info.token = Some(token.to_owned().into());
        config.root_cert = Some(vec![
            crate::tls::pem_der(&self.ca_pem).map_err(ServerError::Client)?,
        ]);
        config.read_timeout = Some(Duration::from_secs(300));
        kube::Client::try_from(config).map_err(|e| ServerError::Client(e.to_string()))
    }

    /// The bearer token of the server's admin user (group `system:masters`): what
    /// [`client`](Self::client) and [`kubeconfig`](Self::kubeconfig) authenticate with.
    pub fn admin_token(&self) -> &str {
        self.shared.admin_token()
    }

    /// A kubeconfig for this server (context `wasm-operator`, namespace `default`) that
    /// authenticates as the admin user.
    pub fn kubeconfig(&self) -> String {
        use base64::Engine as _;
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: wasm-operator\n  cluster:\n    server: {url}\n    certificate-authority-data: {ca}\ncontexts:\n- name: wasm-operator\n  context:\n    cluster: wasm-operator\n    user: wasm-operator\n    namespace: default\ncurrent-context: wasm-operator\nusers:\n- name: wasm-operator\n  user:\n    token: {token}\npreferences: {{}}\n",
            url = self.url(),
            ca = base64::engine::general_purpose::STANDARD.encode(&self.ca_pem),
            token = self.admin_token(),
        )
    }

    /// Writes [`kubeconfig`](Self::kubeconfig) to `path`, mode 0600 (it holds the admin
    /// token). A symlink at `path` is refused rather than written through.
    pub fn write_kubeconfig(&self, path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        crate::private_file::write(path, self.kubeconfig().as_bytes())
    }

    /// Injects a fault.
    pub fn inject(&self, fault: Fault) {
        self.shared.lock().hooks.inject(fault);
    }

    /// Removes every injected fault.
    pub fn clear_faults(&self) {
        self.shared.lock().hooks.clear_faults();
    }

    /// The requests served so far, by verb and resource, and the changes stored, by resource
    /// under the verb `stored`.
    pub fn counts(&self) -> Counts {
        let state = self.shared.lock();
        let mut counts = state.hooks.counters();
        for (resource, n) in state.store.stored() {
            counts.insert(("stored".into(), resource.clone()), *n);
        }
        Counts(counts)
    }

    /// Stops serving.
    pub fn stop(self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl Drop for ApiServer {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

async fn ensure_namespace(shared: &Shared, name: &str) {
    let target = route(&shared.lock().registry, "/api/v1/namespaces").ok();
    let Some(Route::Resource(target)) = target else {
        return;
    };
    let body =
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}).to_string();
    match write::create(
        shared,
        &target,
        &Params::parse(Some("fieldManager=wasm-operator-apiserver")),
        &HeaderMap::new(),
        body.as_bytes(),
        &User::admin(),
    )
    .await
    {
        Ok(_) | Err(ApiError { code: 409, .. }) => {}
        Err(e) => tracing::error!(error = %e, namespace = name, "cannot create a namespace"),
    }
}

async fn dispatch(
    AxumState(shared): AxumState<Arc<Shared>>,
    axum::extract::ConnectInfo(certificate): axum::extract::ConnectInfo<
        crate::tls::ClientCertificate,
    >,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: axum::body::Body,
) -> Response {
    if let Err(refusal) = check_origin(&headers) {
        return refusal.into_response();
    }
    let body = match read_body(body).await {
        Ok(body) => body,
        Err(e) => return e.into_response(),
    };
    match handle(shared, &certificate, &method, &uri, &headers, &body).await {
        Ok(response) => response,
        Err(e) => e.into_response(),
    }
}

/// The request body, read up to [`MAX_BODY`] bytes: a 413 as soon as it passes the limit,
/// so a client cannot make the server buffer more than that.
async fn read_body(body: axum::body::Body) -> Result<Bytes, ApiError> {
    axum::body::to_bytes(body, MAX_BODY).await.map_err(|error| {
        let over_limit = std::error::Error::source(&error)
            .is_some_and(|source| source.is::<http_body_util::LengthLimitError>());
        if over_limit {
            ApiError::too_large(MAX_BODY)
        } else {
            ApiError::bad_request(format!("cannot read the request body: {error}"))
        }
    })
}

fn json_response(code: u16, body: &Value, warnings: &[String]) -> Response {
    let mut builder = Response::builder()
        .status(code)
        .header("content-type", "application/json");
    for w in warnings {
        builder = builder.header("warning", w.as_str());
    }
    builder
        .body(body.to_string().into())
        .unwrap_or_else(|_| ApiError::internal("cannot build a response").into_response())
}

async fn handle(
    shared: Arc<Shared>,
    certificate: &crate::tls::ClientCertificate,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Response> {
    let routed = route(&shared.lock().registry, uri.path())?;
    let user = if authn::is_public(&routed) {
        None
    } else {
        Some(authn::authenticate(&shared, certificate, headers)?)
    };
    if let Some(user) = &user {
        authorize(&shared, user, &routed, method, uri, headers)?;
    }
    let registry = || shared.lock().registry.clone();
    let ok = |v: Value| Ok(json_response(200, &v, &[]));
    match routed {
        Route::Version => ok(discovery::version()),
        Route::Health => Ok((axum::http::StatusCode::OK, "ok").into_response()),
        Route::ApiVersions => ok(discovery::api_versions()),
        Route::ApiGroups => ok(discovery::api_groups(&registry())),
        Route::Resources { group, version } => {
            // Counted as verb "discover" on the group/version, so a test can see a client
            // asking again.
            let group_version = if group.is_empty() {
                version.clone()
            } else {
                format!("{group}/{version}")
            };
            shared
                .lock()
                .hooks
                .on_request("discover", &group_version, Default::default());
            ok(discovery::resources(&registry(), &group, &version)?)
        }
        Route::OpenApiV2 => {
            // kube-apiserver also serves it as gnostic protobuf (what kubectl asks for); a
            // client that takes only that gets a 406 rather than JSON it cannot read.
            let accept = headers
                .get("accept")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("*/*");
            if accept.contains("protobuf") && !accept.contains("json") && !accept.contains("*/*") {
                return Err(ApiError::not_acceptable(
                    "only application/json is served for /openapi/v2",
                ));
            }
            ok(discovery::openapi_v2(&registry()))
        }
        Route::OpenApiV3 => ok(discovery::openapi_v3(&registry())),
        Route::OpenApiV3Group { group, version } => {
            ok(discovery::openapi_v3_group(&registry(), &group, &version)?)
        }
        Route::Jwks => ok(shared.signer().jwks()),
        Route::Resource(target) => {
            let user = user.unwrap_or_else(User::admin);
            resource(shared, method, *target, uri, headers, body, &user).await
        }
    }
}

/// Refuses what a browser could send on a page's behalf: a `Host` that is not a loopback
/// name (DNS rebinding) and any `Origin` (cross-site requests).
fn check_origin(headers: &HeaderMap) -> Result<()> {
    if headers.contains_key("origin") {
        return Err(ApiError::forbidden_message(
            "requests with an Origin header (from a browser) are refused".into(),
            None,
        ));
    }
    let Some(host) = headers.get("host") else {
        return Ok(());
    };
    let host = host.to_str().unwrap_or_default();
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    let loopback = name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if loopback {
        Ok(())
    } else {
        Err(ApiError::forbidden_message(
            format!("the Host {host:?} is not a loopback name: only local clients are served"),
            None,
        ))
    }
}

/// Refuses `routed` with 403 unless RBAC lets `user` do it.
fn authorize(
    shared: &Shared,
    user: &User,
    routed: &Route,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
) -> Result<()> {
    let path = uri.path();
    let verb_of_path = method.as_str().to_ascii_lowercase();
    let request = match routed {
        Route::Resource(target) => {
            let verb = match verb(method, target, &Params::parse(uri.query()), headers) {
                "apply" => "patch",
                other => other,
            };
            rbac::Request::Resource {
                verb,
                group: &target.rt.group,
                resource: &target.rt.plural,
                subresource: target.subresource.as_deref(),
                namespace: target.namespace.as_deref(),
                name: target.name.as_deref(),
            }
        }
        _ => rbac::Request::NonResource {
            verb: &verb_of_path,
            path,
        },
    };
    if shared.authorize(user, &request) {
        Ok(())
    } else {
        Err(rbac::forbidden(user, &request))
    }
}

/// The `metadata.name` of a create's body, for faults that match by name.
fn created_name(body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Named {
        metadata: Metadata,
    }
    #[derive(serde::Deserialize)]
    struct Metadata {
        name: Option<String>,
    }
    serde_json::from_slice::<Named>(body).ok()?.metadata.name
}

/// The verb of a resource request, as RBAC and the counters name it.
fn verb(method: &Method, target: &Target, params: &Params, headers: &HeaderMap) -> &'static str {
    let apply = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/apply-patch"));
    match (method.as_str(), target.name.is_some()) {
        ("GET", true) => "get",
        ("GET", false) if params.flag("watch") => "watch",
        ("GET", false) => "list",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) if apply => "apply",
        ("PATCH", _) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        _ => "unknown",
    }
}

/// Serves a resource request; a refusal is counted under `<verb>:<code>` (see
/// [`Counts::refused`](crate::Counts::refused)), an injected one included.
async fn resource(
    shared: Arc<Shared>,
    method: &Method,
    target: Target,
    uri: &Uri,
    headers: &HeaderMap,
    body: &[u8],
    user: &User,
) -> Result<Response> {
    let verb = verb(method, &target, &Params::parse(uri.query()), headers);
    let plural = target.rt.plural.clone();
    let answer = serve_resource(shared.clone(), method, target, uri, headers, body, user).await;
    if let Err(refusal) = &answer {
        let counted = format!("{verb}:{}", refusal.code);
        shared.lock().hooks.count(&counted, &plural);
    }
    answer
}

async fn serve_resource(
    shared: Arc<Shared>,
    method: &Method,
    target: Target,
    uri: &Uri,
    headers: &HeaderMap,
    body: &[u8],
    user: &User,
) -> Result<Response> {
    // A protobuf body (client-go's typed clients) is read into JSON before anything else.
    let converted;
    let (headers, body) = match crate::protobuf::as_json(headers, body)? {
        Some(json) => {
            converted = json;
            (&converted.0, converted.1.as_slice())
        }
        None => (headers, body),
    };
    let mut params = Params::parse(uri.query());
    let verb = verb(method, &target, &params, headers);
    if matches!(
        target.rt.group.as_str(),
        "authorization.k8s.io" | "authentication.k8s.io"
    ) {
        let answer = match target.rt.plural.as_str() {
            "selfsubjectaccessreviews" => access_review::answer,
            "subjectaccessreviews" => access_review::subject,
            "tokenreviews" => authn::token_review,
            "selfsubjectreviews" => authn::self_subject_review,
            _ => access_review::rules,
        };
        return match verb {
            "create" => Ok(json_response(
                201,
                &answer(&shared, &target.rt, user, body)?,
                &[],
            )),
            _ => Err(ApiError::method_not_supported(&target.rt, method.as_str())),
        };
    }
    if matches!(verb, "create" | "update") {
        crate::write::request::check_media_type(headers)?;
    }
    let fault = {
        let mut state = shared.lock();
        let created = (verb == "create" && state.hooks.has_named_faults())
            .then(|| created_name(body))
            .flatten();
        let request = crate::faults::Requested {
            namespace: target.namespace.as_deref(),
            name: target.name.as_deref().or(created.as_deref()),
        };
        state.hooks.on_request(verb, &target.rt.plural, request)
    };
    let mut drop_watch = false;
    match fault {
        Some(FaultAction::Fail { code, message }) => {
            let reason = match code {
                404 => "NotFound",
                409 => "Conflict",
                410 => "Expired",
                413 => "RequestEntityTooLarge",
                422 => "Invalid",
                429 => "TooManyRequests",
                500 => "InternalError",
                503 => "ServiceUnavailable",
                504 => "Timeout",
                _ => "BadRequest",
            };
            return Err(ApiError {
                code,
                reason: reason.into(),
                message,
                details: None,
            });
        }
        Some(FaultAction::Delay(d)) => tokio::time::sleep(d).await,
        Some(FaultAction::DropWatch) => drop_watch = true,
        Some(FaultAction::StoreUnvalidated) => params = params.unvalidated(),
        None => {}
    }
    if body.len() > MAX_BODY {
        return Err(ApiError::too_large(MAX_BODY));
    }
    let is_service_account = target.rt.group.is_empty() && target.rt.plural == "serviceaccounts";
    match (target.subresource.as_deref(), verb, target.name.as_deref()) {
        (None, ..) => {}
        (Some("status"), ..) if target.rt.status => {}
        (Some("token"), "create", Some(name)) if is_service_account => {
            let answer = token::create(&shared, &target, name, body)?;
            return Ok(json_response(201, &answer, &[]));
        }
        _ => return Err(ApiError::no_route(uri.path())),
    }
    let written = |w: write::Written| Ok(json_response(w.code, &w.object, &w.warnings));
    let name = target.name.clone();
    let table = match verb {
        "get" | "list" | "watch" => table::negotiate(headers, &params)?,
        _ => None,
    };
    match (verb, name.as_deref()) {
        ("get", Some(name)) => {
            let object = read::get(&shared, &target, name)?;
            let answer = match &table {
                Some(request) => table::of_object(&target.rt, &object, request),
                None => object,
            };
            Ok(json_response(200, &answer, &[]))
        }
        ("list", None) => {
            let list = read::list(&shared, &target, &params)?;
            let answer = match &table {
                Some(request) => table::of_list(&target.rt, &list, request),
                None => list,
            };
            Ok(json_response(200, &answer, &[]))
        }
        ("watch", None) => {
            let slot = shared.watch_slots().take(user)?;
            read::watch(shared.clone(), &target, &params, drop_watch, table, slot)
        }
        ("create", None) => {
            written(write::create(&shared, &target, &params, headers, body, user).await?)
        }
        ("update", Some(name)) => {
            written(write::update(&shared, &target, name, &params, headers, body, user).await?)
        }
        ("patch" | "apply", Some(name)) => {
            written(write::patch(&shared, &target, name, &params, headers, body, user).await?)
        }
        ("delete", Some(name)) => {
            written(write::delete(&shared, &target, name, &params, body, user).await?)
        }
        ("deletecollection", None) => Ok(json_response(
            200,
            &write::delete_collection(&shared, &target, &params, body, user).await?,
            &[],
        )),
        _ => Err(ApiError::method_not_supported(&target.rt, method.as_str())),
    }
}
