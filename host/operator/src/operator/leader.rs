//! Leader election on a `coordination.k8s.io/v1` Lease, with kube-lease-manager.
//!
//! Every replica runs its informers; only the holder of the Lease runs passes. The holder
//! renews the Lease `grace` seconds before it expires; when it dies, another replica takes
//! the Lease once `duration` seconds have passed since the last renewal. A replica that
//! stops cleanly releases the Lease, and a standby takes it over within [`RETRY`]: the
//! lease manager alone would sleep until the expiry it last read, so a standby also reads
//! the Lease every [`RETRY`] (client-go's retry period) and competes afresh once it is free.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use kube_lease_manager::{LeaseManager, LeaseManagerBuilder};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

/// How often a standby reads the Lease to see it released (client-go's `RetryPeriod`).
pub(crate) const RETRY: Duration = Duration::from_secs(2);

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
    release: oneshot::Sender<Duration>,
    task: JoinHandle<()>,
}

/// One lease manager competing, and the receiver that keeps it competing. Dropped, it stops
/// the manager without releasing the Lease (what a crash leaves).
struct Competing {
    leading: watch::Receiver<bool>,
    task: Option<JoinHandle<kube_lease_manager::Result<LeaseManager>>>,
}

impl Drop for Competing {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

/// Whether a failure to start competing may pass on its own: the server unreachable, a
/// 5xx, 429 or a conflict. Anything else (403: no RBAC for Leases) fails the start.
fn transient(error: &kube_lease_manager::LeaseManagerError) -> bool {
    use kube_lease_manager::LeaseManagerError;
    match error {
        LeaseManagerError::KubeError(kube::Error::Api(status)) => {
            status.code >= 500 || status.code == 429 || status.code == 409
        }
        LeaseManagerError::KubeError(
            kube::Error::HyperError(_) | kube::Error::Service(_) | kube::Error::HttpError(_),
        ) => true,
        LeaseManagerError::LeaseAlreadyExists(_) => true,
        _ => false,
    }
}

impl Competing {
    /// Starts competing, retrying transient failures (every [`RETRY`], logged) so a replica
    /// that meets a busy or restarting API server waits for it rather than exiting.
    async fn start(client: &kube::Client, config: &LeaderElection) -> Result<Self, LeaderError> {
        loop {
            match Self::try_start(client, config).await {
                Err(error) if transient(&error.source) => {
                    tracing::warn!(%error, "leader election cannot start yet; retrying");
                    tokio::time::sleep(RETRY).await;
                }
                result => return result,
            }
        }
    }

    async fn try_start(
        client: &kube::Client,
        config: &LeaderElection,
    ) -> Result<Self, LeaderError> {
        let error = |source| LeaderError {
            name: config.lease_name.clone(),
            namespace: config.lease_namespace.clone(),
            source,
        };
        let manager = LeaseManagerBuilder::new(client.clone(), &config.lease_name)
            .with_namespace(&config.lease_namespace)
            .with_identity(&config.identity)
            .with_duration(config.duration.as_secs().max(1))
            .with_grace(config.grace.as_secs().max(1))
            .build()
            .await
            .map_err(error)?;
        let (leading, task) = manager.watch().await;
        Ok(Self {
            leading,
            task: Some(task),
        })
    }

    /// Releases the Lease (the manager does once its receiver is dropped) and waits up to
    /// `timeout` for that.
    async fn release(mut self, timeout: Duration) {
        let Some(task) = self.task.take() else {
            return;
        };
        drop(self);
        match tokio::time::timeout(timeout, task).await {
            Ok(Ok(Ok(_))) => tracing::info!("released the leader Lease"),
            Ok(Ok(Err(error))) => tracing::warn!(%error, "cannot release the leader Lease"),
            Ok(Err(_)) | Err(_) => tracing::warn!("the leader Lease was not released in time"),
        }
    }
}

impl Election {
    /// Starts competing for the Lease.
    pub(crate) async fn start(
        client: kube::Client,
        config: &LeaderElection,
    ) -> Result<Self, LeaderError> {
        let competing = Competing::start(&client, config).await?;
        let (tx, leading) = watch::channel(*competing.leading.borrow());
        let (release, released) = oneshot::channel();
        let task = tokio::spawn(supervise(client, config.clone(), competing, tx, released));
        Ok(Self {
            leading,
            release,
            task,
        })
    }

    /// Whether this replica leads, as a channel.
    pub(crate) fn leading(&self) -> watch::Receiver<bool> {
        self.leading.clone()
    }

    /// Releases the Lease and waits up to `timeout` for that.
    pub(crate) async fn release(self, timeout: Duration) {
        drop(self.leading);
        if self.release.send(timeout).is_ok() {
            let _ = self.task.await;
        }
    }

    /// Stops competing without releasing the Lease (a crash, for tests).
    pub(crate) fn abandon(self) {
        self.task.abort();
    }
}

/// Forwards the manager's leadership to `tx` until a release is asked for; while standing
/// by, reads the Lease every [`RETRY`] and, once it is free, competes with a fresh manager.
async fn supervise(
    client: kube::Client,
    config: LeaderElection,
    mut competing: Competing,
    tx: watch::Sender<bool>,
    mut released: oneshot::Receiver<Duration>,
) {
    let leases: Api<Lease> = Api::namespaced(client.clone(), &config.lease_namespace);
    loop {
        tokio::select! {
            timeout = &mut released => {
                competing.release(timeout.unwrap_or(Duration::ZERO)).await;
                return;
            }
            changed = competing.leading.changed() => {
                if changed.is_err() {
                    // The manager stopped (an API error): compete afresh after a while.
                    tracing::warn!("the lease manager stopped; competing again");
                    tx.send_replace(false);
                    tokio::time::sleep(RETRY).await;
                    competing = restart(&client, &config, competing).await;
                    continue;
                }
                let leading = *competing.leading.borrow_and_update();
                tx.send_replace(leading);
            }
            () = tokio::time::sleep(RETRY), if !*competing.leading.borrow() => {
                let free = match leases.get_opt(&config.lease_name).await {
                    Ok(lease) => lease.is_none_or(|l| {
                        l.spec
                            .and_then(|s| s.holder_identity)
                            .is_none_or(|h| h.is_empty())
                    }),
                    Err(error) => {
                        tracing::debug!(%error, "cannot read the leader Lease");
                        false
                    }
                };
                if free {
                    tracing::info!("the leader Lease was released; competing for it");
                    competing = restart(&client, &config, competing).await;
                    let leading = *competing.leading.borrow();
                    tx.send_replace(leading);
                }
            }
        }
    }
}

/// Stops `old` without releasing anything (it does not hold the Lease) and starts a new
/// manager; on failure keeps retrying every [`RETRY`].
async fn restart(client: &kube::Client, config: &LeaderElection, old: Competing) -> Competing {
    drop(old);
    loop {
        match Competing::start(client, config).await {
            Ok(competing) => return competing,
            Err(error) => {
                tracing::warn!(%error, "cannot compete for the leader Lease");
                tokio::time::sleep(RETRY).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use kube_lease_manager::LeaseManagerError;

    use super::transient;

    fn api(code: u16) -> LeaseManagerError {
        LeaseManagerError::KubeError(kube::Error::Api(
            kube::core::Status::failure("refused", "Reason")
                .with_code(code)
                .boxed(),
        ))
    }

    #[test]
    fn a_busy_server_is_waited_for_and_a_refusal_fails_the_start() {
        for (code, expected) in [
            (500, true),
            (503, true),
            (429, true),
            (409, true),
            (403, false),
            (404, false),
        ] {
            assert_eq!(transient(&api(code)), expected, "{code}");
        }
        assert!(!transient(&LeaseManagerError::NonexistentLease("l".into())));
    }
}
