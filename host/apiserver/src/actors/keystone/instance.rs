//! One stand-in Keystone: its data and its HTTP listener on a loopback port.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::task::JoinHandle;

use super::identity::Identity;

/// One Keystone: the data behind its API, and what its fault toggle and counters hold.
pub(crate) struct Instance {
    identity: Mutex<Identity>,
    /// Where it listens (127.0.0.1, a free port).
    pub addr: SocketAddr,
    /// While set, every request is answered 503.
    pub unavailable: AtomicBool,
    /// Requests served (every one, also those answered 503).
    pub requests: AtomicU64,
    /// The uid of the bootstrap Job whose completion set the admin password.
    pub bootstrapped_by: Mutex<Option<String>>,
    /// The uid of the last bootstrap Job the actor looked at (completed or not).
    pub observed_bootstrap: Mutex<Option<String>>,
}

impl Instance {
    /// A fresh Keystone, as `keystone-manage bootstrap` leaves one (without an admin
    /// password until [`Identity::set_admin_password`]), serving on 127.0.0.1.
    pub(crate) async fn spawn() -> std::io::Result<(Arc<Self>, JoinHandle<()>)> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let instance = Arc::new(Self {
            identity: Mutex::new(Identity::bootstrapped()),
            addr: listener.local_addr()?,
            unavailable: AtomicBool::new(false),
            requests: AtomicU64::new(0),
            bootstrapped_by: Mutex::new(None),
            observed_bootstrap: Mutex::new(None),
        });
        let app = axum::Router::new()
            .fallback(super::api::handle)
            .with_state(instance.clone());
        let task = tokio::spawn(async move {
            if let Err(error) = axum::serve(listener, app).await {
                tracing::error!(%error, "the Keystone stand-in stopped serving");
            }
        });
        Ok((instance, task))
    }

    /// Locks the data (a handler that panicked leaves consistent data: each handler's
    /// writes are single inserts and removals).
    pub(crate) fn lock(&self) -> MutexGuard<'_, Identity> {
        self.identity
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
