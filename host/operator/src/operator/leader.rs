//! Leader election on a `coordination.k8s.io/v1` Lease, with kube-lease-manager.
//!
//! Every replica runs its informers; only the holder of the Lease runs passes. The holder
//! renews the Lease `grace` seconds before it expires; when it dies, another replica takes
//! the Lease once `duration` seconds have passed since the last renewal. A replica that
//! stops cleanly releases the Lease, so the next one takes over at once.

use std::time::Duration;

use kube_lease_manager::{LeaseManager, LeaseManagerBuilder};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Where and how to elect a leader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderElection {
    /// The Lease's name.
    pub lease_name: String,
    /// The Lease's namespace.
    pub lease_namespace: String,
    /// This replica's identity (the Pod name in a cluster).
    pub identity: String,
    /// How long a Lease is valid after its last renewal.
    pub duration: Duration,
    /// How long before expiry the holder renews it.
    pub grace: Duration,
}

impl LeaderElection {
    /// controller-runtime's defaults: a 15 s lease renewed 5 s before it expires.
    pub fn new(lease_namespace: &str, identity: &str) -> Self {
        Self {
            lease_name: "wasm-operator-leader".into(),
            lease_namespace: lease_namespace.into(),
            identity: identity.into(),
            duration: Duration::from_secs(15),
            grace: Duration::from_secs(5),
        }
    }
}

/// Leader election could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot start leader election on Lease {namespace}/{name}: {source}")]
pub struct LeaderError {
    name: String,
    namespace: String,
    #[source]
    source: kube_lease_manager::LeaseManagerError,
}

/// A running election: `leading()` says whether this replica holds the Lease.
pub(crate) struct Election {
    leading: watch::Receiver<bool>,
    task: JoinHandle<kube_lease_manager::Result<LeaseManager>>,
}

impl Election {
    /// Starts competing for the Lease.
    pub(crate) async fn start(
        client: kube::Client,
        config: &LeaderElection,
    ) -> Result<Self, LeaderError> {
        let error = |source| LeaderError {
            name: config.lease_name.clone(),
            namespace: config.lease_namespace.clone(),
            source,
        };
        let manager = LeaseManagerBuilder::new(client, &config.lease_name)
            .with_namespace(&config.lease_namespace)
            .with_identity(&config.identity)
            .with_duration(config.duration.as_secs().max(1))
            .with_grace(config.grace.as_secs().max(1))
            .build()
            .await
            .map_err(error)?;
        let (leading, task) = manager.watch().await;
        Ok(Self { leading, task })
    }

    /// Whether this replica leads, as a channel.
    pub(crate) fn leading(&self) -> watch::Receiver<bool> {
        self.leading.clone()
    }

    /// Releases the Lease (once every receiver from [`leading`](Self::leading) is dropped)
    /// and waits up to `timeout` for that.
    pub(crate) async fn release(self, timeout: Duration) {
        drop(self.leading);
        match tokio::time::timeout(timeout, self.task).await {
            Ok(Ok(Ok(_))) => tracing::info!("released the leader Lease"),
            Ok(Ok(Err(error))) => tracing::warn!(%error, "cannot release the leader Lease"),
            Ok(Err(_)) | Err(_) => tracing::warn!("the leader Lease was not released in time"),
        }
    }

    /// Stops competing without releasing the Lease (a crash, for tests).
    pub(crate) fn abandon(self) {
        self.task.abort();
    }
}
