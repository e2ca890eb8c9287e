//! Storage: objects by key, one monotonic resourceVersion, the watch history, and the
//! write-ahead log when the server has a data directory.
//!
//! Every write gets the next resourceVersion (a decimal string of a counter shared by all
//! kinds, as etcd's revision is) and an event in the history; watchers resume from the
//! history and get `410 Gone` for a version older than its oldest entry.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::broadcast;

use crate::wal::{Wal, WalError};

/// Where an object is stored: its group and resource (not version: every served version of
/// a resource shares one storage), namespace ("" when cluster-scoped) and name.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub(crate) struct StoreKey {
    pub group: String,
    pub plural: String,
    pub namespace: String,
    pub name: String,
}

/// What happened to an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    /// The watch event type as the API spells it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change, as watchers see it.
#[derive(Debug, Clone)]
pub(crate) struct Change {
    pub resource_version: u64,
    pub event: EventType,
    pub key: StoreKey,
    /// The object after the change (its last state for a deletion).
    pub object: Value,
    /// The object before the change, for selector transitions.
    pub old: Option<Value>,
}

/// How many changes the watch history keeps by default.
pub(crate) const HISTORY: usize = 50_000;

/// The object store.
pub(crate) struct Store {
    objects: BTreeMap<StoreKey, Value>,
    resource_version: u64,
    history: VecDeque<Arc<Change>>,
    history_len: usize,
    changes: broadcast::Sender<Arc<Change>>,
    wal: Option<Wal>,
    /// Stored changes (creations, modifications, deletions) per resource plural.
    stored: BTreeMap<String, u64>,
}

impl Store {
    /// An empty in-memory store whose watch history keeps `history_len` changes.
    pub(crate) fn in_memory(history_len: usize) -> Self {
        let (changes, _) = broadcast::channel(4096);
        Self {
            objects: BTreeMap::new(),
            resource_version: 1,
            history: VecDeque::new(),
            history_len,
            changes,
            wal: None,
            stored: BTreeMap::new(),
        }
    }

    /// A store backed by the write-ahead log in `dir`, holding what the log holds.
    pub(crate) fn open(dir: &std::path::Path, history_len: usize) -> Result<Self, WalError> {
        let (wal, objects, resource_version) = Wal::open(dir)?;
        let (changes, _) = broadcast::channel(4096);
        Ok(Self {
            objects,
            resource_version,
            history: VecDeque::new(),
            history_len,
            changes,
            wal: Some(wal),
            stored: BTreeMap::new(),
        })
    }

    /// The current resourceVersion.
    pub(crate) fn resource_version(&self) -> u64 {
        self.resource_version
    }

    /// The object at `key`.
    pub(crate) fn get(&self, key: &StoreKey) -> Option<&Value> {
        self.objects.get(key)
    }

    /// The objects of a resource, in key order, optionally of one namespace.
    pub(crate) fn list<'a>(
        &'a self,
        group: &'a str,
        plural: &'a str,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = (&'a StoreKey, &'a Value)> {
        // Keys order by group, plural, namespace, name: the objects asked for are one range.
        let start = StoreKey {
            group: group.to_owned(),
            plural: plural.to_owned(),
            namespace: namespace.unwrap_or_default().to_owned(),
            name: String::new(),
        };
        self.objects.range(start..).take_while(move |(k, _)| {
            k.group == group && k.plural == plural && namespace.is_none_or(|ns| k.namespace == ns)
        })
    }

    /// Every stored object.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&StoreKey, &Value)> {
        self.objects.iter()
    }

    /// Stores `object` at `key` with the next resourceVersion; returns the stored object.
    pub(crate) fn put(&mut self, key: StoreKey, mut object: Value) -> Result<Value, WalError> {
        let rv = self.resource_version + 1;
        if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("resourceVersion".into(), Value::String(rv.to_string()));
        }
        if let Some(wal) = &mut self.wal {
            wal.put(rv, &key, &object)?;
        }
        self.resource_version = rv;
        let old = self.objects.insert(key.clone(), object.clone());
        let event = if old.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.record(Change {
            resource_version: rv,
            event,
            key,
            object: object.clone(),
            old,
        });
        Ok(object)
    }

    /// Removes the object at `key`; returns its last state (with the deletion's
    /// resourceVersion).
    pub(crate) fn remove(&mut self, key: &StoreKey) -> Result<Option<Value>, WalError> {
        let Some(mut object) = self.objects.get(key).cloned() else {
            return Ok(None);
        };
        let rv = self.resource_version + 1;
        if let Some(wal) = &mut self.wal {
            wal.delete(rv, key)?;
        }
        self.resource_version = rv;
        self.objects.remove(key);
        if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("resourceVersion".into(), Value::String(rv.to_string()));
        }
        self.record(Change {
            resource_version: rv,
            event: EventType::Deleted,
            key: key.clone(),
            object: object.clone(),
            old: None,
        });
        Ok(Some(object))
    }

    fn record(&mut self, change: Change) {
        *self.stored.entry(change.key.plural.clone()).or_insert(0) += 1;
        let change = Arc::new(change);
        if self.history.len() >= self.history_len.max(1) {
            self.history.pop_front();
        }
        self.history.push_back(change.clone());
        // No receiver is fine: nobody is watching.
        let _ = self.changes.send(change);
    }

    /// How many changes were stored per resource plural since the server started (a request
    /// that changes nothing, such as a converged apply, stores none).
    pub(crate) fn stored(&self) -> &BTreeMap<String, u64> {
        &self.stored
    }

    /// The changes after `resource_version`, or `Err(oldest)` when the history no longer
    /// reaches back that far.
    pub(crate) fn changes_since(&self, resource_version: u64) -> Result<Vec<Arc<Change>>, u64> {
        let oldest = self
            .history
            .front()
            .map(|c| c.resource_version)
            .unwrap_or(self.resource_version + 1);
        if resource_version + 1 < oldest && resource_version < self.resource_version {
            return Err(oldest);
        }
        Ok(self
            .history
            .iter()
            .filter(|c| c.resource_version > resource_version)
            .cloned()
            .collect())
    }

    /// A receiver of every later change.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Arc<Change>> {
        self.changes.subscribe()
    }
}
