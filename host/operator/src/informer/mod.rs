//! Shared watch caches: one watch and one in-memory copy per kind, shared by every plugin.
//!
//! An [`Informer`] lists and watches one kind with kube-runtime's [`watcher`] (which
//! relists after a `410 Gone` and resumes from bookmarks), keeps the objects as JSON, and
//! tells its subscribers every change as a [`Change`] holding the object before and after —
//! what predicates such as "generation changed" need. A subscriber that joins late first
//! receives every cached object as an addition, so no subscriber misses an object.
//!
//! [`Informers`] holds one informer per kind and starts it on first use; reads served "from
//! the cache" go through it (see [`crate::cluster::cached`]).
//!
//! DECISION: objects are kept as `serde_json::Value`, the form they cross the WIT boundary
//! in, so a cached read costs a clone of the JSON and no re-encoding.

mod registry;

pub use registry::Informers;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use futures::StreamExt as _;
use kube::api::{Api, ApiResource};

use crate::cluster::raw::RawObject;
use kube::runtime::watcher::{self, Event};
use serde_json::Value;
use tokio::sync::{mpsc, watch};
use wasm_operator_types::KindRef;

/// One change of one object: `old` is `None` for an addition, `new` is `None` for a
/// deletion.
#[derive(Debug, Clone)]
pub(crate) struct Change {
    pub old: Option<Arc<Value>>,
    pub new: Option<Arc<Value>>,
}

impl Change {
    /// The object as it is now, or as it was last seen when deleted.
    pub(crate) fn object(&self) -> Option<&Value> {
        self.new.as_deref().or(self.old.as_deref())
    }
}

/// The key of an object in a cache: `namespace/name`, or `name` for a cluster-scoped one.
pub(crate) fn key_of(object: &Value) -> Option<String> {
    let meta = object.get("metadata")?;
    let name = meta.get("name")?.as_str()?;
    Some(match meta.get("namespace").and_then(Value::as_str) {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name.to_owned(),
    })
}

/// The watch cache of one kind.
pub struct Informer {
    kind: KindRef,
    objects: RwLock<HashMap<String, Arc<Value>>>,
    subscribers: Mutex<Vec<mpsc::UnboundedSender<Change>>>,
    synced: watch::Sender<bool>,
}

impl Informer {
    fn new(kind: KindRef) -> Self {
        Self {
            kind,
            objects: RwLock::default(),
            subscribers: Mutex::default(),
            synced: watch::Sender::new(false),
        }
    }

    /// Whether the first list has completed.
    pub(crate) fn is_synced(&self) -> bool {
        *self.synced.borrow()
    }

    /// Waits until the first list has completed.
    pub async fn wait_synced(&self) {
        let mut rx = self.synced.subscribe();
        // The sender lives as long as `self`, so this only ends when synced.
        let _ = rx.wait_for(|synced| *synced).await;
    }

    /// The cached object with `key` (`namespace/name`).
    pub fn get(&self, key: &str) -> Option<Arc<Value>> {
        self.read().get(key).cloned()
    }

    /// Every cached object for which `keep` holds.
    pub fn filter(&self, mut keep: impl FnMut(&Value) -> bool) -> Vec<Arc<Value>> {
        let mut found: Vec<Arc<Value>> =
            self.read().values().filter(|o| keep(o)).cloned().collect();
        found.sort_by_key(|o| key_of(o));
        found
    }

    /// How many objects are cached.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// Whether no object is cached.
    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }

    /// Every later change; first every cached object as an addition.
    pub(crate) fn subscribe(&self) -> mpsc::UnboundedReceiver<Change> {
        let (tx, rx) = mpsc::unbounded_channel();
        // The objects lock is held while replaying so no change slips between the replay
        // and the registration.
        let objects = self.read();
        for object in objects.values() {
            let _ = tx.send(Change {
                old: None,
                new: Some(object.clone()),
            });
        }
        self.lock_subscribers().push(tx);
        drop(objects);
        rx
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<String, Arc<Value>>> {
        self.objects
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<String, Arc<Value>>> {
        self.objects
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn lock_subscribers(&self) -> std::sync::MutexGuard<'_, Vec<mpsc::UnboundedSender<Change>>> {
        self.subscribers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn publish(&self, changes: Vec<Change>) {
        if changes.is_empty() {
            return;
        }
        let mut subscribers = self.lock_subscribers();
        subscribers.retain(|tx| changes.iter().all(|c| tx.send(c.clone()).is_ok()));
    }

    /// Applies one watch event to the cache and tells the subscribers what changed.
    /// `relist` collects a relist between `Init` and `InitDone`.
    fn apply(&self, event: Event<RawObject>, relist: &mut Option<HashMap<String, Arc<Value>>>) {
        match event {
            Event::Init => *relist = Some(HashMap::new()),
            Event::InitApply(object) => {
                if let (Some(buffer), Some((key, value))) =
                    (relist.as_mut(), entry(&self.kind, object))
                {
                    buffer.insert(key, value);
                }
            }
            Event::InitDone => {
                let fresh = relist.take().unwrap_or_default();
                let mut objects = self.write();
                let mut changes = Vec::new();
                for (key, old) in objects.iter() {
                    if !fresh.contains_key(key) {
                        changes.push(Change {
                            old: Some(old.clone()),
                            new: None,
                        });
                    }
                }
                for (key, new) in &fresh {
                    let old = objects.get(key);
                    if old.is_none_or(|old| resource_version(old) != resource_version(new)) {
                        changes.push(Change {
                            old: old.cloned(),
                            new: Some(new.clone()),
                        });
                    }
                }
                *objects = fresh;
                self.publish(changes);
                drop(objects);
                self.synced.send_replace(true);
            }
            Event::Apply(object) => {
                let gone = object.malformed().is_some().then(|| object.key());
                if let Some((key, value)) = entry(&self.kind, object) {
                    let mut objects = self.write();
                    let old = objects.insert(key, value.clone());
                    if old
                        .as_ref()
                        .is_none_or(|old| resource_version(old) != resource_version(&value))
                    {
                        self.publish(vec![Change {
                            old,
                            new: Some(value),
                        }]);
                    }
                } else if let Some(key) = gone {
                    // Changed into an object that does not decode: absent from now on.
                    let old = self.write().remove(&key);
                    if let Some(old) = old {
                        self.publish(vec![Change {
                            old: Some(old),
                            new: None,
                        }]);
                    }
                }
            }
            Event::Delete(object) => {
                let key = object.key();
                let old = self.write().remove(&key);
                if let Some(old) = old {
                    self.publish(vec![Change {
                        old: Some(old),
                        new: None,
                    }]);
                }
            }
        }
    }

    /// Lists and watches `api` until the stream ends (it does not: the watcher retries
    /// with backoff; the task is aborted when the informer is dropped).
    async fn run(self: Arc<Self>, api: Api<RawObject>, selector: Option<String>) {
        let mut config = watcher::Config::default().any_semantic();
        if let Some(selector) = &selector {
            config = config.labels(selector);
        }
        let stream = watcher::watcher(api, config);
        let mut stream = std::pin::pin!(kube::runtime::WatchStreamExt::default_backoff(stream));
        let mut relist = None;
        while let Some(event) = stream.next().await {
            match event {
                Ok(event) => self.apply(event, &mut relist),
                Err(error) => tracing::warn!(
                    kind = %self.kind.kind,
                    api_version = %self.kind.api_version,
                    %error,
                    "watch failed; retrying"
                ),
            }
        }
    }
}

fn resource_version(object: &Value) -> Option<&str> {
    object.get("metadata")?.get("resourceVersion")?.as_str()
}

/// The cache entry of `object`, with its apiVersion and kind stamped (list items may lack
/// them) and without `metadata.managedFields`, as controller-runtime's
/// `TransformStripManagedFields` does: no reconciler decides on them, and they are often
/// the larger part of a small object, in memory and in every copy to a guest. A read from
/// the server still returns them. An object whose metadata does not decode has no entry:
/// it is reported by kind, name and why, never by content, and the cache goes on without it.
fn entry(kind: &KindRef, object: RawObject) -> Option<(String, Arc<Value>)> {
    if let Some(why) = object.malformed() {
        tracing::warn!(
            kind = %kind.kind,
            api_version = %kind.api_version,
            object = object.key(),
            reason = why,
            "skipping an object that does not decode"
        );
        return None;
    }
    let mut value = object.into_value();
    let map = value.as_object_mut()?;
    map.insert("apiVersion".into(), Value::String(kind.api_version.clone()));
    map.insert("kind".into(), Value::String(kind.kind.clone()));
    if let Some(metadata) = map.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.remove("managedFields");
    }
    Some((key_of(&value)?, Arc::new(value)))
}

/// The kube-rs resource of a plugin's kind reference.
pub fn api_resource(kind: &KindRef) -> ApiResource {
    let (group, version) = kind
        .api_version
        .rsplit_once('/')
        .unwrap_or(("", &kind.api_version));
    ApiResource {
        group: group.to_owned(),
        version: version.to_owned(),
        api_version: kind.api_version.clone(),
        kind: kind.kind.clone(),
        plural: kind.plural.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_objects_carry_their_kind_and_no_managed_fields() {
        let object: RawObject = serde_json::from_value(serde_json::json!({
            "metadata": {
                "name": "a",
                "namespace": "ns",
                "labels": {"x": "y"},
                "managedFields": [{"manager": "m", "operation": "Apply", "fieldsV1": {"f:data": {}}}],
            },
            "data": {"k": "v"},
        }))
        .expect("an object");
        let kind = KindRef {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            plural: "configmaps".into(),
            namespaced: true,
        };

        let (key, cached) = entry(&kind, object).expect("an entry");

        assert_eq!(key, "ns/a");
        assert_eq!(
            (cached["apiVersion"].as_str(), cached["kind"].as_str()),
            (Some("v1"), Some("ConfigMap"))
        );
        assert!(
            cached["metadata"].get("managedFields").is_none(),
            "{cached}"
        );
        assert_eq!(cached["metadata"]["labels"]["x"], "y");
        assert_eq!(cached["data"]["k"], "v");
    }
}
