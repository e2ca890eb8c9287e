//! The OpenBao stand-in: the part of OpenBao's HTTP API a BarbicanSecretStore's controller
//! and Barbican's vault plugin call (facts §3.6), on one loopback port per server.
//!
//! - [`api`]: routing, tokens, ACL checks, envelopes and `{"errors": [...]}` bodies;
//! - [`auth`]: AppRole and Kubernetes auth; [`kv`]: the KV v2 engine;
//! - [`state`]: policies (and their evaluation), roles, secret-ids, tokens, mounts;
//! - [`controls`]: [`OpenBaoStandIn`], a test's typed hold on one server;
//! - [`managed`]: the managed mode, one server per OpenBaoCluster (`openbao.org/v1alpha1`),
//!   provisioned by [`provision`] as CobaltCore's self-init requests leave one.
//!
//! Two kinds of server run. The shared stand-in ([`ApiServer::openbao`]) starts with the
//! actor and serves a brownfield store's `openBao.server.url`: it answers HTTPS with a
//! certificate for `127.0.0.1` and `localhost` signed by a CA made at start
//! ([`OpenBaoStandIn::ca_pem`]), holds nothing but a root token, and a test seeds what an
//! operator of OpenBao would have configured through the controls. Each OpenBaoCluster
//! gets a server of its own, with its own data, CA and certificate
//! ([`ApiServer::openbao_cluster`]); see [`managed`] for what the actor makes around it.
//! Fault toggle: [`OpenBaoStandIn::set_sealed`] answers every request 503 `Vault is sealed`.
//!
//! Not served: namespaces (`X-Vault-Namespace` is ignored: everything lives in the root
//! namespace), token renewal, response wrapping, writes to `sys/` (policies and auth roles
//! are seeded through the controls or by the managed mode's provisioning).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::task::JoinHandle;

use super::{Actor, ActorContext, ActorError, Started};
use crate::ApiServer;

mod api;
mod auth;
mod controls;
mod kv;
mod managed;
mod provision;
mod state;
use crate::tls;

pub use controls::{OpenBaoControlError, OpenBaoStandIn};
pub use managed::{OPENBAO_CHILD_MANAGER, OPENBAO_STATUS_MANAGER};

use state::{Token, Vault};

/// The stand-in: its data, the cluster client the Kubernetes auth reads keys with, toggles.
pub(crate) struct OpenBao {
    vault: Mutex<Vault>,
    client: kube::Client,
    addr: SocketAddr,
    root_token: String,
    ca_pem: String,
    sealed: AtomicBool,
    requests: AtomicU64,
}

impl OpenBao {
    fn lock(&self) -> MutexGuard<'_, Vault> {
        self.vault
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

pub(crate) fn epoch_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// 24 random alphanumerics (token and accessor bodies).
pub(crate) fn random_id() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    (0..24)
        .map(|_| ALPHABET[rand::random_range(0..ALPHABET.len())] as char)
        .collect()
}

/// Why one stand-in server could not start.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SpawnError {
    #[error("cannot listen on 127.0.0.1: {0}")]
    Bind(#[source] std::io::Error),
    #[error("cannot make its TLS certificate: {0}")]
    Tls(String),
}

impl OpenBao {
    /// A fresh server (no data but a root token) answering HTTPS on a free loopback port,
    /// its certificate valid for `names`; the task serving it.
    pub(crate) async fn spawn(
        client: kube::Client,
        names: Vec<String>,
    ) -> Result<(Arc<Self>, JoinHandle<()>), SpawnError> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(SpawnError::Bind)?;
        let addr = listener.local_addr().map_err(SpawnError::Bind)?;
        let tls =
            tls::generate("wasm-operator OpenBao stand-in CA", names).map_err(SpawnError::Tls)?;
        let root_token = format!("s.{}", random_id());
        let mut vault = Vault::default();
        vault.tokens.insert(
            root_token.clone(),
            Token {
                accessor: random_id(),
                policies: vec!["root".into()],
                metadata: BTreeMap::new(),
                expires_at: None,
                ttl: 0,
            },
        );
        let bao = Arc::new(OpenBao {
            vault: Mutex::new(vault),
            client,
            addr,
            root_token,
            ca_pem: tls.ca_pem,
            sealed: AtomicBool::new(false),
            requests: AtomicU64::new(0),
        });
        let app = axum::Router::new()
            .fallback(api::handle)
            .with_state(bao.clone());
        let listener = tls::TlsListener::new(listener, tls.acceptor, "the OpenBao stand-in")
            .map_err(|e| SpawnError::Tls(e.to_string()))?;
        let task = tokio::spawn(async move {
            if let Err(error) = axum::serve(listener, app).await {
                tracing::error!(%error, "an OpenBao stand-in stopped serving");
            }
        });
        Ok((bao, task))
    }
}

/// The actor's handle: the shared stand-in and the OpenBaoClusters' servers.
pub(crate) struct OpenBaoActor {
    shared: Arc<OpenBao>,
    instances: Arc<managed::Instances>,
}

pub(crate) async fn start(ctx: ActorContext) -> Result<Started, ActorError> {
    let names = vec!["127.0.0.1".to_owned(), "localhost".to_owned()];
    let (shared, task) = OpenBao::spawn(ctx.client.clone(), names)
        .await
        .map_err(|e| match e {
            SpawnError::Bind(source) => ActorError::Bind {
                actor: Actor::OpenBao,
                source,
            },
            SpawnError::Tls(message) => ActorError::Start {
                actor: Actor::OpenBao,
                message: format!("cannot make its TLS certificate: {message}"),
            },
        })?;
    tracing::info!(addr = %shared.addr, "OpenBao stand-in started");
    let instances = Arc::new(managed::Instances::default());
    let mut tasks = managed::start(&ctx.client, &instances).await?;
    tasks.push(task);
    Ok(Started {
        tasks,
        handle: Some(Arc::new(OpenBaoActor { shared, instances })),
    })
}

impl ApiServer {
    /// The shared OpenBao stand-in (a brownfield store's server), when the actor runs.
    pub fn openbao(&self) -> Option<OpenBaoStandIn> {
        let actor = self.running().handle::<OpenBaoActor>(Actor::OpenBao)?;
        Some(OpenBaoStandIn {
            bao: actor.shared.clone(),
        })
    }

    /// The server of OpenBaoCluster `namespace/name`, once the actor has started it (`None`
    /// when the actor does not run, has not seen the cluster, or the cluster is gone).
    pub fn openbao_cluster(&self, namespace: &str, name: &str) -> Option<OpenBaoStandIn> {
        let actor = self.running().handle::<OpenBaoActor>(Actor::OpenBao)?;
        let bao = actor.instances.get(namespace, name)?;
        Some(OpenBaoStandIn { bao })
    }
}
