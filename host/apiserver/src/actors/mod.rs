//! The cluster's other actors: stand-ins for the controllers and services a reconciler's
//! children depend on (workload controllers, cert-manager, mariadb-operator, External
//! Secrets, Gateway API, Keystone, OpenBao).
//!
//! Each actor is off unless [`ServerConfig::actors`](crate::ServerConfig::actors) names it.
//! An actor is a client of the server like the controller it stands in for: it watches
//! through the HTTP API and writes through the server's normal write path, under its own
//! field manager, so its writes carry resourceVersions, watch events and managedFields.
//! An actor that serves kinds installs their CRDs (from `crds/external/`) when it starts.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use tokio::task::JoinHandle;

pub use external_secrets::BackendEntry;
pub use kit::{ActorNotRunning, NOT_READY_ANNOTATION};

pub(crate) mod cert_manager;
mod external_secrets;
pub(crate) mod gateway;
pub(crate) mod keystone;
mod kit;
mod mariadb;
pub(crate) mod openbao;
pub(crate) mod workloads;

/// One actor of the embedded cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Actor {
    /// Deployments, Jobs and HorizontalPodAutoscalers: status, rollouts, pods of Jobs.
    Workloads,
    /// cert-manager: Issuers, ClusterIssuers and Certificates.
    CertManager,
    /// mariadb-operator: MariaDB, Database, User, Grant.
    MariaDb,
    /// External Secrets: stores, ExternalSecrets, PushSecrets, an in-memory backend.
    ExternalSecrets,
    /// Gateway API: HTTPRoute parent status.
    Gateway,
    /// A Keystone Identity v3 API stand-in, the endpoint of a Keystone's Service.
    Keystone,
    /// An OpenBao HTTP API stand-in.
    OpenBao,
}

impl Actor {
    /// Every actor, in the order they start.
    pub const ALL: [Actor; 7] = [
        Actor::Workloads,
        Actor::CertManager,
        Actor::MariaDb,
        Actor::ExternalSecrets,
        Actor::Gateway,
        Actor::Keystone,
        Actor::OpenBao,
    ];

    /// The name `dev-cluster --actors` takes and prints.
    pub fn name(self) -> &'static str {
        match self {
            Actor::Workloads => "workloads",
            Actor::CertManager => "cert-manager",
            Actor::MariaDb => "mariadb",
            Actor::ExternalSecrets => "external-secrets",
            Actor::Gateway => "gateway",
            Actor::Keystone => "keystone",
            Actor::OpenBao => "openbao",
        }
    }
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An actor name that names none.
#[derive(Debug, thiserror::Error)]
#[error("no actor is named {name:?} (actors: {known})")]
pub struct UnknownActor {
    name: String,
    known: String,
}

impl FromStr for Actor {
    type Err = UnknownActor;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Actor::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| UnknownActor {
                name: s.to_owned(),
                known: Actor::ALL.map(Actor::name).join(", "),
            })
    }
}

/// Why an actor could not start.
#[derive(Debug, thiserror::Error)]
pub enum ActorError {
    #[error("actor {actor}: cannot install CRD {crd}: {message}")]
    Crd {
        actor: Actor,
        crd: String,
        message: String,
    },
    #[error("actor {actor}: cannot listen on 127.0.0.1: {source}")]
    Bind {
        actor: Actor,
        #[source]
        source: std::io::Error,
    },
    #[error("actor {actor}: {message}")]
    Start { actor: Actor, message: String },
}

/// What an actor gets to start with.
pub(crate) struct ActorContext {
    /// A client of the server, as the real controller would hold.
    pub client: kube::Client,
}

/// A started actor: its tasks, and the handle the server's test controls reach it by.
pub(crate) struct Started {
    pub tasks: Vec<JoinHandle<()>>,
    pub handle: Option<Arc<dyn Any + Send + Sync>>,
}

/// The actors that run, by actor.
#[derive(Default)]
pub(crate) struct Running {
    handles: BTreeMap<Actor, Option<Arc<dyn Any + Send + Sync>>>,
}

impl Running {
    /// Whether `actor` runs.
    #[allow(dead_code, reason = "used by the actors' test controls")]
    pub(crate) fn runs(&self, actor: Actor) -> bool {
        self.handles.contains_key(&actor)
    }

    /// The running actors, in start order.
    pub(crate) fn names(&self) -> Vec<Actor> {
        self.handles.keys().copied().collect()
    }

    #[allow(dead_code, reason = "used by the actors' test controls")]
    /// The control handle of `actor`, when it runs and has one of type `T`.
    pub(crate) fn handle<T: Any + Send + Sync>(&self, actor: Actor) -> Option<Arc<T>> {
        self.handles
            .get(&actor)?
            .clone()
            .and_then(|h| h.downcast::<T>().ok())
    }
}

/// Starts `actors` (each once, in [`Actor::ALL`]'s order) against the server `client` talks to.
pub(crate) async fn start(
    client: kube::Client,
    actors: &[Actor],
) -> Result<(Running, Vec<JoinHandle<()>>), ActorError> {
    let mut running = Running::default();
    let mut tasks = Vec::new();
    for actor in Actor::ALL.into_iter().filter(|a| actors.contains(a)) {
        let ctx = ActorContext {
            client: client.clone(),
        };
        let started = match actor {
            Actor::Workloads => workloads::start(ctx).await,
            Actor::CertManager => cert_manager::start(ctx).await,
            Actor::MariaDb => mariadb::start(ctx).await,
            Actor::ExternalSecrets => external_secrets::start(ctx).await,
            Actor::Gateway => gateway::start(ctx).await,
            Actor::Keystone => keystone::start(ctx).await,
            Actor::OpenBao => openbao::start(ctx).await,
        }?;
        tasks.extend(started.tasks);
        running.handles.insert(actor, started.handle);
    }
    Ok((running, tasks))
}
