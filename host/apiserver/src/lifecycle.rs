//! The cluster's background controllers: garbage collection through owner references
//! (background, foreground, orphan), and namespace deletion.
//!
//! They run as one task, woken after every write, and repeat until nothing changes:
//! - an object whose every owner (by uid) is gone is deleted (background propagation);
//! - an object being deleted with the `foregroundDeletion` finalizer has its dependents
//!   deleted, and loses the finalizer once no dependent with `blockOwnerDeletion` remains;
//! - an object being deleted with the `orphan` finalizer has its dependents' owner
//!   references to it removed, then loses the finalizer;
//! - a terminating namespace has its content deleted, then loses its `kubernetes`
//!   finalizer and goes;
//! - an object being deleted whose finalizers are all gone is removed;
//! - every namespace not being deleted has its `default` ServiceAccount
//!   ([`crate::service_accounts`]).

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};

use crate::objects::{has_finalizers, is_deleting, meta_str, now};
use crate::server::State;
use crate::store::StoreKey;

/// Whether a write of `object` may give the controllers work: it is being deleted, it
/// has owners (which may be gone already), or it is a namespace. Removals always do.
pub(crate) fn concerns(object: &Value) -> bool {
    crate::service_accounts::concerns(object)
        || is_deleting(object)
        || object
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .is_some_and(|r| !r.is_empty())
}

/// Runs every controller until the store stops changing.
pub(crate) fn settle(state: &mut State) {
    for _ in 0..100 {
        if !step(state) {
            return;
        }
    }
    tracing::warn!("lifecycle controllers did not settle after 100 rounds");
}

fn owners(object: &Value) -> Vec<(String, bool)> {
    object
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| {
            Some((
                r.get("uid")?.as_str()?.to_owned(),
                r.get("blockOwnerDeletion")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            ))
        })
        .collect()
}

/// What one round reads from the store, in one pass over it (a round is O(objects): it runs
/// after every write that concerns the controllers, under the server's lock).
struct Snapshot {
    /// The uids of every stored object.
    uids: HashSet<String>,
    /// The dependents of each owner uid, each with its `blockOwnerDeletion`.
    dependents: HashMap<String, Vec<(StoreKey, bool)>>,
    /// The objects a controller may act on: those with owners and those being deleted.
    candidates: Vec<StoreKey>,
}

impl Snapshot {
    fn of(state: &State) -> Self {
        let mut snapshot = Self {
            uids: HashSet::new(),
            dependents: HashMap::new(),
            candidates: Vec::new(),
        };
        for (key, object) in state.store.iter() {
            if let Some(uid) = meta_str(object, "uid") {
                snapshot.uids.insert(uid.to_owned());
            }
            let own = owners(object);
            if !own.is_empty() || is_deleting(object) {
                snapshot.candidates.push(key.clone());
            }
            for (uid, block) in own {
                snapshot
                    .dependents
                    .entry(uid)
                    .or_default()
                    .push((key.clone(), block));
            }
        }
        snapshot
    }

    fn dependents_of(&self, uid: &str) -> &[(StoreKey, bool)] {
        self.dependents.get(uid).map_or(&[], Vec::as_slice)
    }
}

/// One round; whether anything changed. Each object is read as the store holds it when
/// its turn comes, so an earlier action of the round is seen.
fn step(state: &mut State) -> bool {
    let snapshot = Snapshot::of(state);
    let mut changed = crate::service_accounts::ensure_defaults(state);
    for key in &snapshot.candidates {
        let Some(object) = state.store.get(key).cloned() else {
            continue;
        };
        let finalizers: Vec<String> = object
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|f| f.as_str().map(str::to_owned))
            .collect();
        let uid = meta_str(&object, "uid").unwrap_or_default().to_owned();
        let dependents = snapshot.dependents_of(&uid);

        // Background: every owner gone.
        let own = owners(&object);
        if !own.is_empty()
            && own.iter().all(|(u, _)| !snapshot.uids.contains(u))
            && !is_deleting(&object)
        {
            changed |= delete(state, key, &object);
            continue;
        }
        if !is_deleting(&object) {
            continue;
        }
        if finalizers.iter().any(|f| f == "foregroundDeletion") {
            for (dk, _) in dependents {
                if let Some(dependent) = state.store.get(dk).cloned()
                    && !is_deleting(&dependent)
                {
                    changed |= delete(state, dk, &dependent);
                }
            }
            let blocking = dependents
                .iter()
                .any(|(dk, block)| *block && state.store.get(dk).is_some());
            if !blocking {
                changed |= drop_finalizer(state, key, &object, "foregroundDeletion");
            }
            continue;
        }
        if finalizers.iter().any(|f| f == "orphan") {
            for (dk, _) in dependents {
                let Some(mut freed) = state.store.get(dk).cloned() else {
                    continue;
                };
                if let Some(refs) = freed
                    .pointer_mut("/metadata/ownerReferences")
                    .and_then(Value::as_array_mut)
                {
                    refs.retain(|r| r.get("uid").and_then(Value::as_str) != Some(uid.as_str()));
                }
                changed |= put(state, dk, freed);
            }
            changed |= drop_finalizer(state, key, &object, "orphan");
            continue;
        }
        if key.group.is_empty() && key.plural == "namespaces" {
            let content: Vec<(StoreKey, Value)> = state
                .store
                .iter()
                .filter(|(k, _)| k.namespace == key.name)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            for (ck, c) in &content {
                if !is_deleting(c) {
                    changed |= delete(state, ck, c);
                }
            }
            if content.is_empty() {
                let mut done = object.clone();
                done["spec"] = json!({"finalizers": []});
                changed |= put(state, key, done);
                changed |= remove(state, key);
            }
            continue;
        }
        if !has_finalizers(&object) {
            changed |= remove(state, key);
        }
    }
    changed
}

/// Deletes an object as a background delete would: marks it when it has finalizers.
fn delete(state: &mut State, key: &StoreKey, object: &Value) -> bool {
    if has_finalizers(object) {
        let mut marked = object.clone();
        marked["metadata"]["deletionTimestamp"] = json!(now());
        marked["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        put(state, key, marked)
    } else {
        remove(state, key)
    }
}

fn drop_finalizer(state: &mut State, key: &StoreKey, object: &Value, finalizer: &str) -> bool {
    let mut next = object.clone();
    if let Some(list) = next
        .pointer_mut("/metadata/finalizers")
        .and_then(Value::as_array_mut)
    {
        list.retain(|f| f != finalizer);
    }
    if has_finalizers(&next) {
        put(state, key, next)
    } else {
        remove(state, key)
    }
}

fn put(state: &mut State, key: &StoreKey, object: Value) -> bool {
    if state.store.get(key) == Some(&object) {
        return false;
    }
    if let Err(e) = state.store.put(key.clone(), object) {
        tracing::error!(error = %e, "garbage collector write failed");
        return false;
    }
    true
}

fn remove(state: &mut State, key: &StoreKey) -> bool {
    let removed = match state.store.remove(key) {
        Ok(removed) => removed.is_some(),
        Err(e) => {
            tracing::error!(error = %e, "garbage collector delete failed");
            false
        }
    };
    if removed && key.group == "apiextensions.k8s.io" {
        state.refresh_registry();
    }
    removed
}
