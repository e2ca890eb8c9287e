//! The OpenBao stand-in: the part of OpenBao's HTTP API a BarbicanSecretStore's controller
//! and Barbican's vault plugin call (facts §3.6), on one loopback port per server.
//!
//! - [`api`]: routing, tokens, ACL checks, envelopes and `{"errors": [...]}` bodies;
//! - [`auth`]: AppRole and Kubernetes auth; [`kv`]: the KV v2 engine;
//! - [`state`]: policies (and their evaluation), roles, secret-ids, tokens, mounts.
//!
//! It serves HTTPS (a CA made at start, [`OpenBaoStandIn::ca_pem`], signs its certificate
//! for `127.0.0.1` and `localhost`). A reconciler reaches it at [`OpenBaoStandIn::url`] (a
//! brownfield store's `openBao.server.url`, with the CA in its `caBundleSecretRef`). It starts empty but for a root token; a test seeds what an
//! operator of OpenBao would have configured (policies, AppRoles, Kubernetes roles, KV
//! mounts) through the typed controls of [`OpenBaoStandIn`], and reads back what was written.
//! Fault toggle: [`OpenBaoStandIn::set_sealed`] answers every request 503 `Vault is sealed`.
//!
//! Not served: namespaces (`X-Vault-Namespace` is ignored: everything lives in the root
//! namespace), token renewal, response wrapping, writes to `sys/` (policies and auth roles
//! are seeded through the controls), and the managed mode's OpenBaoCluster.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use super::{Actor, ActorContext, ActorError, Started};
use crate::ApiServer;

mod api;
mod auth;
mod kv;
mod state;
mod tls;

use state::{AppRole, KubernetesRole, Token, Vault};

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

pub(crate) async fn start(ctx: ActorContext) -> Result<Started, ActorError> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|source| ActorError::Bind {
            actor: Actor::OpenBao,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| ActorError::Bind {
        actor: Actor::OpenBao,
        source,
    })?;
    let tls = tls::generate().map_err(|message| ActorError::Start {
        actor: Actor::OpenBao,
        message: format!("cannot make its TLS certificate: {message}"),
    })?;
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
        client: ctx.client,
        addr,
        root_token,
        ca_pem: tls.ca_pem,
        sealed: AtomicBool::new(false),
        requests: AtomicU64::new(0),
    });
    let app = axum::Router::new()
        .fallback(api::handle)
        .with_state(bao.clone());
    let listener = tls::TlsListener {
        tcp: listener,
        acceptor: tls.acceptor,
    };
    let task = tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, app).await {
            tracing::error!(%error, "the OpenBao stand-in stopped serving");
        }
    });
    tracing::info!(%addr, "OpenBao stand-in started");
    Ok(Started {
        tasks: vec![task],
        handle: Some(bao),
    })
}

/// Why a control was refused.
#[derive(Debug, thiserror::Error)]
pub enum OpenBaoControlError {
    #[error("policy {name:?}: {message}")]
    Policy { name: String, message: String },
    #[error("no KV v2 mount at {mount:?}")]
    NoMount { mount: String },
}

/// A test's hold on the OpenBao stand-in.
pub struct OpenBaoStandIn {
    bao: Arc<OpenBao>,
}

impl OpenBaoStandIn {
    /// `https://127.0.0.1:<port>` (the API is under `/v1/`).
    pub fn url(&self) -> String {
        format!("https://{}", self.bao.addr)
    }

    /// The CA certificate (PEM) that signed the stand-in's server certificate: what a
    /// store's `caBundleSecretRef` Secret carries as `ca.crt`.
    pub fn ca_pem(&self) -> String {
        self.bao.ca_pem.clone()
    }

    /// A token with the `root` policy.
    pub fn root_token(&self) -> String {
        self.bao.root_token.clone()
    }

    /// Writes ACL policy `name` from policy-language text (`path "…" { capabilities = […] }`).
    pub fn set_policy(&self, name: &str, text: &str) -> Result<(), OpenBaoControlError> {
        let rules = state::parse_policy(text).map_err(|message| OpenBaoControlError::Policy {
            name: name.into(),
            message,
        })?;
        self.bao.lock().policies.insert(name.into(), rules);
        Ok(())
    }

    /// Creates (or replaces) AppRole `name` with `policies`, its secret-ids valid for
    /// `secret_id_ttl` seconds (0: forever); answers its role-id.
    pub fn set_approle(&self, name: &str, policies: &[&str], secret_id_ttl: i64) -> String {
        let mut vault = self.bao.lock();
        let role_id = vault
            .approles
            .get(name)
            .map_or_else(crate::objects::new_uid, |r| r.role_id.clone());
        vault.approles.insert(
            name.into(),
            AppRole {
                role_id: role_id.clone(),
                policies: policies.iter().map(|p| (*p).to_owned()).collect(),
                secret_id_ttl,
                token_ttl: 3600,
            },
        );
        role_id
    }

    /// Secret-ids minted for AppRole `role` so far (not expired).
    pub fn live_secret_ids(&self, role: &str) -> usize {
        let now = epoch_seconds();
        self.bao
            .lock()
            .secret_ids
            .values()
            .filter(|s| s.role == role && s.expires_at.is_none_or(|e| e > now))
            .count()
    }

    /// Creates (or replaces) Kubernetes auth role `name`: ServiceAccount names and
    /// namespaces it binds (`*`: any), the audience the JWT must carry, its policies.
    pub fn set_kubernetes_role(
        &self,
        name: &str,
        service_accounts: &[&str],
        namespaces: &[&str],
        audience: Option<&str>,
        policies: &[&str],
    ) {
        let owned = |l: &[&str]| l.iter().map(|s| (*s).to_owned()).collect();
        self.bao.lock().kubernetes_roles.insert(
            name.into(),
            KubernetesRole {
                service_account_names: owned(service_accounts),
                service_account_namespaces: owned(namespaces),
                audience: audience.map(str::to_owned),
                policies: owned(policies),
                token_ttl: 3600,
            },
        );
    }

    /// Enables a KV v2 engine at `mount` (no-op when enabled).
    pub fn enable_kv(&self, mount: &str) {
        self.bao.lock().kv.entry(mount.into()).or_default();
    }

    /// Writes a new version of `mount`/`path` with `data` (a JSON object).
    pub fn kv_put(&self, mount: &str, path: &str, data: Value) -> Result<(), OpenBaoControlError> {
        let mut vault = self.bao.lock();
        let secrets = vault
            .kv
            .get_mut(mount)
            .ok_or_else(|| OpenBaoControlError::NoMount {
                mount: mount.into(),
            })?;
        let time = k8s_openapi::jiff::Timestamp::now().to_string();
        let secret = secrets.entry(path.into()).or_default();
        if secret.versions.is_empty() {
            secret.created_time.clone_from(&time);
        }
        secret.updated_time.clone_from(&time);
        secret.versions.push(state::Version {
            data,
            created_time: time,
            deletion_time: String::new(),
            destroyed: false,
        });
        Ok(())
    }

    /// The latest live version of `mount`/`path`, and its number.
    pub fn kv_get(&self, mount: &str, path: &str) -> Option<(usize, Value)> {
        let vault = self.bao.lock();
        let secret = vault.kv.get(mount)?.get(path)?;
        let latest = secret.versions.last()?;
        (latest.deletion_time.is_empty() && !latest.destroyed)
            .then(|| (secret.versions.len(), latest.data.clone()))
    }

    /// While `sealed`, every request is answered 503 `Vault is sealed`.
    pub fn set_sealed(&self, sealed: bool) {
        self.bao.sealed.store(sealed, Ordering::Relaxed);
    }

    /// Requests served so far (also those answered 503).
    pub fn requests(&self) -> u64 {
        self.bao.requests.load(Ordering::Relaxed)
    }
}

impl ApiServer {
    /// The OpenBao stand-in, when the actor runs.
    pub fn openbao(&self) -> Option<OpenBaoStandIn> {
        let bao = self.running().handle::<OpenBao>(Actor::OpenBao)?;
        Some(OpenBaoStandIn { bao })
    }
}
