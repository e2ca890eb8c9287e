//! A plugin's own writes, served by its cache reads until the watch catches up (what
//! client-go's `MutationCache` does).
//!
//! A pass that starts right after the plugin's previous write, before the informer has
//! seen that write, would otherwise read the object as it was before: its status write
//! then conflicts, and whatever that pass alone could say (a rotation it committed, the id
//! of a domain it created) is lost or, worse, decided again from the older object. Every
//! object a write answers is kept here; a cache read returns it while the informer holds
//! an older version of the same object, and drops it once the informer holds that version
//! or a later one. A kept object has no `metadata.managedFields`, as the informer's.
//!
//! | The informer holds | A read from the cache answers |
//! |---|---|
//! | no object (not seen yet, or deleted since) | nothing: a write never resurrects an object |
//! | an older resourceVersion than the write's | the written object |
//! | the write's resourceVersion or a later one | the informer's object (the entry is dropped) |
//! | a resourceVersion that is not a number | the informer's object |
//!
//! resourceVersions are compared as numbers, as client-go's mutation cache does: the API
//! contract calls them opaque, but kube-apiserver's (etcd revisions) and the embedded
//! server's are increasing integers; one that is not is never taken as newer. An entry
//! also goes after [`TTL`], so a watch that skipped the version (a relist) cannot pin it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;
use wasm_operator_types::ObjectRef;
use wasm_operator_types::object::object_key;

/// How long a written object is served at the most, caught up or not.
pub(crate) const TTL: Duration = Duration::from_secs(30);

/// apiVersion and kind.
type KindKey = (String, String);

struct Entry {
    object: Arc<Value>,
    version: u64,
    stored: Instant,
}

/// The kept objects of one kind, by `namespace/name`.
type OfKind = HashMap<String, Entry>;

/// The objects a plugin's writes answered, by kind and object: a list of a kind the plugin
/// wrote nothing of costs one lookup.
pub(crate) struct MutationCache {
    entries: Mutex<HashMap<KindKey, OfKind>>,
    ttl: Duration,
}

impl Default for MutationCache {
    fn default() -> Self {
        Self::with_ttl(TTL)
    }
}

fn version_of(object: &Value) -> Option<u64> {
    object
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .and_then(|v| v.parse().ok())
}

fn kind_key(api_version: &str, kind: &str) -> KindKey {
    (api_version.to_owned(), kind.to_owned())
}

impl MutationCache {
    /// Entries served for `ttl` at the most.
    pub(crate) fn with_ttl(ttl: Duration) -> Self {
        Self {
            entries: Mutex::default(),
            ttl,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<KindKey, OfKind>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps `written`, the object a write answered (one without apiVersion, kind, name or
    /// a numeric resourceVersion is not kept); drops the entries past their time.
    pub(crate) fn record(&self, written: &Value) {
        let (Ok(object), Some(version)) = (ObjectRef::from_object(written), version_of(written))
        else {
            return;
        };
        let mut entries = self.lock();
        let ttl = self.ttl;
        entries.retain(|_, of_kind| {
            of_kind.retain(|_, e| e.stored.elapsed() < ttl);
            !of_kind.is_empty()
        });
        // As the informer keeps it: without managedFields.
        let mut stripped = written.clone();
        if let Some(metadata) = stripped.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.remove("managedFields");
        }
        let entry = Entry {
            object: Arc::new(stripped),
            version,
            stored: Instant::now(),
        };
        let of_kind = entries
            .entry(kind_key(&object.api_version, &object.kind))
            .or_default();
        let key = object_key(object.namespace.as_deref(), &object.name);
        match of_kind.get(&key) {
            Some(kept) if kept.version >= version => {}
            _ => {
                of_kind.insert(key, entry);
            }
        }
    }

    /// Forgets `object` (it was deleted).
    pub(crate) fn forget(&self, object: &ObjectRef) {
        if let Some(of_kind) = self
            .lock()
            .get_mut(&kind_key(&object.api_version, &object.kind))
        {
            of_kind.remove(&object_key(object.namespace.as_deref(), &object.name));
        }
    }

    /// What a cache read of `object` answers, the informer holding `cached`.
    pub(crate) fn read(
        &self,
        object: &ObjectRef,
        cached: Option<Arc<Value>>,
    ) -> Option<Arc<Value>> {
        let cached = cached?;
        let mut entries = self.lock();
        let Some(of_kind) = entries.get_mut(&kind_key(&object.api_version, &object.kind)) else {
            return Some(cached);
        };
        let key = object_key(object.namespace.as_deref(), &object.name);
        Some(self.newer(of_kind, &key, cached))
    }

    /// What a cache list of `kind` answers, the informer holding `cached` (the selection
    /// stays the informer's; each object is answered as [`read`](Self::read) answers it).
    pub(crate) fn read_all(
        &self,
        api_version: &str,
        kind: &str,
        cached: Vec<Arc<Value>>,
    ) -> Vec<Arc<Value>> {
        let mut entries = self.lock();
        let Some(of_kind) = entries.get_mut(&kind_key(api_version, kind)) else {
            return cached;
        };
        cached
            .into_iter()
            .map(|o| {
                let metadata = o.get("metadata");
                let field = |f: &str| metadata.and_then(|m| m.get(f)).and_then(Value::as_str);
                let key = field("name").map(|name| object_key(field("namespace"), name));
                match key {
                    Some(key) => self.newer(of_kind, &key, o),
                    None => o,
                }
            })
            .collect()
    }

    /// The kept object under `key` when `cached` is older than it and it is still in time;
    /// `cached` otherwise, the entry dropped.
    fn newer(&self, of_kind: &mut OfKind, key: &str, cached: Arc<Value>) -> Arc<Value> {
        let Some(entry) = of_kind.get(key) else {
            return cached;
        };
        let stale = version_of(&cached).is_some_and(|v| v < entry.version);
        if stale && entry.stored.elapsed() < self.ttl {
            return entry.object.clone();
        }
        of_kind.remove(key);
        cached
    }

    /// How many written objects are kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().values().map(HashMap::len).sum()
    }
}

#[cfg(test)]
#[path = "mutation_cache_tests.rs"]
mod tests;
