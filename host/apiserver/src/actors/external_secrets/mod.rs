//! External Secrets Operator (`external-secrets.io`) stand-in: SecretStores and
//! ClusterSecretStores become `Ready`, ExternalSecrets write their target Secret from an
//! in-memory secret backend, PushSecrets write a Secret's data into that backend.
//!
//! Every store, whatever its provider, reads and writes the one in-memory backend (the
//! cluster's OpenBao/Vault): a map of remote keys, each holding named properties. A test
//! seeds and inspects it through [`ApiServer::secret_backend_put`] and its siblings.
//!
//! As ESO does:
//! - stores: `Ready=True`/`Valid` ("store validated") and `status.capabilities: ReadWrite`;
//!   [`NOT_READY_ANNOTATION`](super::kit::NOT_READY_ANNOTATION) on a store makes it
//!   `Ready=False`/`ValidationFailed`.
//! - ExternalSecrets refresh when their generation, labels or annotations changed
//!   (`kubectl annotate es x force-sync=$(date +%s) --overwrite`), when the target Secret is
//!   gone, and when `spec.refreshInterval` (a Go duration, `0` = never) has passed since
//!   `status.refreshTime`; `refreshPolicy` `CreatedOnce` and `OnChange` are honoured.
//!   Status is written under `external-secrets`, the target Secret under
//!   `externalsecrets.external-secrets.io/<name>`.
//! - PushSecrets push on every pass; with `deletionPolicy: Delete` they carry the finalizer
//!   `pushsecret.externalsecrets.io/finalizer` and deleting one removes what it pushed;
//!   with `None` (the default) the finalizer is removed and the backend keeps the entries.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use kube::Client;
use tokio::sync::Notify;

use super::kit::{self, ActorNotRunning, Kind, Pass};
use super::{Actor, ActorContext, ActorError, Started};
use crate::ApiServer;

mod external_secret;
mod push_secret;
mod stores;

const CRDS: &str = include_str!("../../../../../crds/external/external-secrets.yaml");

/// The field manager of ESO's controllers (status, finalizers).
pub(crate) const MANAGER: &str = "external-secrets";

pub(crate) const EXTERNAL_SECRET: Kind = Kind {
    group: "external-secrets.io",
    version: "v1",
    kind: "ExternalSecret",
    plural: "externalsecrets",
    namespaced: true,
};
pub(crate) const SECRET_STORE: Kind = Kind {
    group: "external-secrets.io",
    version: "v1",
    kind: "SecretStore",
    plural: "secretstores",
    namespaced: true,
};
pub(crate) const CLUSTER_SECRET_STORE: Kind = Kind {
    group: "external-secrets.io",
    version: "v1",
    kind: "ClusterSecretStore",
    plural: "clustersecretstores",
    namespaced: false,
};
pub(crate) const PUSH_SECRET: Kind = Kind {
    group: "external-secrets.io",
    version: "v1alpha1",
    kind: "PushSecret",
    plural: "pushsecrets",
    namespaced: true,
};

/// One remote secret: its properties by name.
pub type BackendEntry = BTreeMap<String, Vec<u8>>;

/// The in-memory secret backend every store reads and writes.
#[derive(Default)]
pub(crate) struct Backend {
    entries: Mutex<BTreeMap<String, BackendEntry>>,
    wake: Arc<Notify>,
}

impl Backend {
    pub(crate) fn lock(&self) -> MutexGuard<'_, BTreeMap<String, BackendEntry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A snapshot of one entry.
    pub(crate) fn get(&self, key: &str) -> Option<BackendEntry> {
        self.lock().get(key).cloned()
    }
}

struct Eso {
    client: Client,
    backend: Arc<Backend>,
}

impl Pass for Eso {
    async fn pass(&self) {
        let stores = match stores::reconcile(&self.client).await {
            Ok(stores) => stores,
            Err(error) => {
                tracing::warn!(actor = %Actor::ExternalSecrets, %error, "listing the secret stores failed");
                return;
            }
        };
        if let Err(error) = push_secret::reconcile_all(&self.client, &stores, &self.backend).await {
            tracing::warn!(actor = %Actor::ExternalSecrets, %error, "a PushSecret pass failed");
        }
        if let Err(error) =
            external_secret::reconcile_all(&self.client, &stores, &self.backend).await
        {
            tracing::warn!(actor = %Actor::ExternalSecrets, %error, "an ExternalSecret pass failed");
        }
    }
}

pub(crate) async fn start(ctx: ActorContext) -> Result<Started, ActorError> {
    kit::install_crds(&ctx.client, Actor::ExternalSecrets, MANAGER, CRDS).await?;
    let backend = Arc::new(Backend::default());
    let wake = backend.wake.clone();
    let mut tasks = kit::spawn_watchers(
        Actor::ExternalSecrets,
        &ctx.client,
        &[
            EXTERNAL_SECRET,
            SECRET_STORE,
            CLUSTER_SECRET_STORE,
            PUSH_SECRET,
            kit::SECRET,
        ],
        &wake,
    );
    let eso = Arc::new(Eso {
        client: ctx.client,
        backend: backend.clone(),
    });
    tasks.push(kit::spawn_loop(eso, wake));
    Ok(Started {
        tasks,
        handle: Some(backend as Arc<dyn std::any::Any + Send + Sync>),
    })
}

/// The External Secrets actor's secret backend, seeded and inspected by tests and the demo.
impl ApiServer {
    fn secret_backend(&self) -> Result<Arc<Backend>, ActorNotRunning> {
        self.running()
            .handle::<Backend>(Actor::ExternalSecrets)
            .ok_or(ActorNotRunning {
                actor: Actor::ExternalSecrets,
            })
    }

    /// Sets the remote secret `key` to `properties` (replacing what it held), as an
    /// operator writing to OpenBao would; ExternalSecrets see it at their next refresh.
    pub fn secret_backend_put(
        &self,
        key: &str,
        properties: BackendEntry,
    ) -> Result<(), ActorNotRunning> {
        let backend = self.secret_backend()?;
        backend.lock().insert(key.to_owned(), properties);
        backend.wake.notify_one();
        Ok(())
    }

    /// The remote secret `key`, if the backend holds it.
    pub fn secret_backend_get(&self, key: &str) -> Result<Option<BackendEntry>, ActorNotRunning> {
        Ok(self.secret_backend()?.get(key))
    }

    /// Removes the remote secret `key`; whether it was there.
    pub fn secret_backend_delete(&self, key: &str) -> Result<bool, ActorNotRunning> {
        let backend = self.secret_backend()?;
        let removed = backend.lock().remove(key).is_some();
        backend.wake.notify_one();
        Ok(removed)
    }
}
