//! Which kinds the cluster serves, from API discovery: one `APIResourceList` per
//! group/version, cached.
//!
//! What is served changes when a CustomResourceDefinition is created, changed or deleted:
//! [`Discovery::watch_crds`] watches them and forgets everything it learned on each change,
//! and tells its subscribers ([`Discovery::changes`]), so an optional watch starts when its
//! kind appears. A group/version or kind found missing is asked again after
//! [`NOT_SERVED_TTL`] even without a CRD event (a cluster whose RBAC denies watching CRDs,
//! an aggregated API coming up); what is served is believed until a CRD event.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::Api;
use kube::runtime::watcher;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use wasm_operator_types::{ApiError, split_api_version};

/// How long a group/version found missing is believed missing without a CRD event.
pub(crate) const NOT_SERVED_TTL: Duration = Duration::from_secs(5);

/// How the cluster serves one kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServedKind {
    /// The resource (lower-case plural).
    pub(crate) plural: String,
    /// Whether its objects live in namespaces.
    pub(crate) namespaced: bool,
}

/// What discovery said about one group/version, and when.
#[derive(Debug, Clone)]
enum GroupVersion {
    /// Served, with these kinds (by kind name).
    Served(HashMap<String, ServedKind>, Instant),
    /// Not served.
    Missing(Instant),
}

/// The kinds a cluster serves, cached per group/version.
pub(crate) struct Discovery {
    client: kube::Client,
    groups: Mutex<HashMap<String, GroupVersion>>,
    changes: watch::Sender<u64>,
}

impl Discovery {
    /// Discovery over `client`, with nothing cached.
    pub(crate) fn new(client: kube::Client) -> Self {
        Self {
            client,
            groups: Mutex::default(),
            changes: watch::channel(0).0,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, GroupVersion>> {
        self.groups
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// How the cluster serves `kind` of `api_version`; `None` when it does not.
    pub(crate) async fn kind(
        &self,
        api_version: &str,
        kind: &str,
    ) -> Result<Option<ServedKind>, ApiError> {
        let cached = self.lock().get(api_version).cloned();
        // What is served is believed until a CRD event; what is missing (a group/version,
        // or a kind of a served one) for NOT_SERVED_TTL.
        let group = match cached {
            Some(GroupVersion::Served(kinds, at)) => match kinds.get(kind) {
                Some(found) => return Ok(Some(found.clone())),
                None if at.elapsed() < NOT_SERVED_TTL => return Ok(None),
                None => self.fetch(api_version).await?,
            },
            Some(GroupVersion::Missing(at)) if at.elapsed() < NOT_SERVED_TTL => return Ok(None),
            _ => self.fetch(api_version).await?,
        };
        let found = match &group {
            GroupVersion::Served(kinds, _) => kinds.get(kind).cloned(),
            GroupVersion::Missing(_) => None,
        };
        self.lock().insert(api_version.to_owned(), group);
        Ok(found)
    }

    /// Asks the API server for the resources of `api_version`.
    async fn fetch(&self, api_version: &str) -> Result<GroupVersion, ApiError> {
        let listed = match split_api_version(api_version) {
            ("", version) => self.client.list_core_api_resources(version).await,
            _ => self.client.list_api_group_resources(api_version).await,
        };
        let list = match listed {
            Ok(list) => list,
            Err(kube::Error::Api(status)) if status.code == 404 => {
                return Ok(GroupVersion::Missing(Instant::now()));
            }
            Err(other) => return Err(super::kube::to_api_error(other)),
        };
        let kinds = list
            .resources
            .into_iter()
            // `deployments/status` and the like are subresources, not kinds.
            .filter(|r| !r.name.contains('/'))
            .map(|r| {
                (
                    r.kind,
                    ServedKind {
                        plural: r.name,
                        namespaced: r.namespaced,
                    },
                )
            })
            .collect();
        Ok(GroupVersion::Served(kinds, Instant::now()))
    }

    /// Forgets everything learned, and tells the subscribers.
    pub(crate) fn invalidate(&self) {
        self.lock().clear();
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Ticks on every [`invalidate`](Self::invalidate).
    pub(crate) fn changes(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Watches CustomResourceDefinitions and invalidates on each change. A watch the server
    /// refuses (no RBAC for CRDs) is logged and retried with the watcher's backoff; the
    /// [`NOT_SERVED_TTL`] covers the meantime.
    pub(crate) fn watch_crds(self: &Arc<Self>) -> JoinHandle<()> {
        let this = self.clone();
        tokio::spawn(async move {
            let api: Api<CustomResourceDefinition> = Api::all(this.client.clone());
            let mut events = std::pin::pin!(watcher::watcher(api, watcher::Config::default()));
            while let Some(event) = events.next().await {
                match event {
                    Ok(
                        watcher::Event::Apply(_)
                        | watcher::Event::Delete(_)
                        | watcher::Event::InitDone,
                    ) => this.invalidate(),
                    Ok(watcher::Event::Init | watcher::Event::InitApply(_)) => {}
                    Err(error) => {
                        tracing::warn!(%error, "cannot watch CustomResourceDefinitions; unserved kinds are asked again every 5 s");
                        tokio::time::sleep(NOT_SERVED_TTL).await;
                    }
                }
            }
        })
    }
}
