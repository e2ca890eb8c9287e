//! An in-memory [`Cluster`] that behaves like the API server for what a pass relies on:
//! resourceVersions, 409 on a stale resourceVersion precondition, 409 on creating an
//! existing object, a cache that can lag the server, a field index answered from
//! [`describe::index`](crate::describe::index), and injected failures.
//!
//! It refuses what the reconciler must never do: any server-side apply, delete, or status
//! update of a Secret, and an owner reference on a Secret panic, so the test fails.

use std::cell::RefCell;
use std::collections::BTreeMap;

use serde_json::{Value, json};
use wasm_operator_sdk::{
    ApiError, Cluster, Event, KindRef, ListOptions, ObjectRef, Owner, Patch, Propagation, ReadFrom,
};

/// An operation that can be made to fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Create,
    Patch,
    UpdateStatus,
    GetServer,
}

type Hook = Box<dyn FnOnce(&mut Value)>;

#[derive(Default)]
struct State {
    server: BTreeMap<ObjectRef, Value>,
    cache: BTreeMap<ObjectRef, Value>,
    version: u64,
    /// Whether the cache follows every write at once (a watch with no lag).
    frozen: bool,
    faults: Vec<(Op, String, ApiError, usize)>,
    after_server_read: Vec<(String, Hook)>,
    events: Vec<(ObjectRef, Event)>,
    writes: Vec<String>,
}

/// The in-memory API server and its cache.
#[derive(Default)]
pub struct FakeCluster {
    state: RefCell<State>,
}

impl FakeCluster {
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `object` as a client would create it (on the server and in the cache).
    pub fn put(&self, mut object: Value) -> Value {
        let r = ObjectRef::from_object(&object).expect("a complete object");
        let mut s = self.state.borrow_mut();
        s.version += 1;
        let version = s.version.to_string();
        let meta = &mut object["metadata"];
        meta["resourceVersion"] = json!(version);
        if meta.get("uid").is_none() {
            meta["uid"] = json!(format!("uid-{}", r.name));
        }
        if r.kind == "GitLabSecrets" && meta.get("generation").is_none() {
            meta["generation"] = json!(1);
        }
        s.server.insert(r.clone(), object.clone());
        if !s.frozen {
            s.cache.insert(r, object.clone());
        }
        object
    }

    /// Changes an object on the server as another client would (the cache follows unless
    /// frozen); a spec change bumps a GitLabSecrets' generation.
    pub fn change(&self, kind: &str, name: &str, f: impl FnOnce(&mut Value)) {
        let r = self.find(kind, name);
        let mut object = self.state.borrow().server[&r].clone();
        let spec = object.get("spec").cloned();
        f(&mut object);
        if kind == "GitLabSecrets" && object.get("spec").cloned() != spec {
            let generation = object["metadata"]["generation"].as_i64().unwrap_or(1) + 1;
            object["metadata"]["generation"] = json!(generation);
        }
        self.put(object);
    }

    /// Stops the cache from following the server (a lagging watch).
    pub fn freeze_cache(&self) {
        self.state.borrow_mut().frozen = true;
    }

    /// Brings the cache up to the server and lets it follow again.
    pub fn sync_cache(&self) {
        let mut s = self.state.borrow_mut();
        s.cache = s.server.clone();
        s.frozen = false;
    }

    /// Makes `op` on the object named `name` fail with `error`, `times` times.
    pub fn fail(&self, op: Op, name: &str, error: ApiError, times: usize) {
        self.state
            .borrow_mut()
            .faults
            .push((op, name.to_owned(), error, times));
    }

    /// Runs `f` on the server's copy of `name` right after the next read of it past the
    /// cache: another client's change between a pass's read and its write.
    pub fn after_server_read(&self, name: &str, f: impl FnOnce(&mut Value) + 'static) {
        self.state
            .borrow_mut()
            .after_server_read
            .push((name.to_owned(), Box::new(f)));
    }

    /// The server's copy of the object of `kind` named `name`.
    pub fn server(&self, kind: &str, name: &str) -> Option<Value> {
        let s = self.state.borrow();
        s.server
            .iter()
            .find(|(r, _)| r.kind == kind && r.name == name)
            .map(|(_, v)| v.clone())
    }

    /// The decoded data of the Secret named `name`.
    pub fn secret_data(&self, name: &str) -> BTreeMap<String, Vec<u8>> {
        let Some(secret) = self.server("Secret", name) else {
            return BTreeMap::new();
        };
        let data: BTreeMap<String, k8s_openapi::ByteString> =
            serde_json::from_value(secret.get("data").cloned().unwrap_or(json!({})))
                .expect("Secret data decodes");
        data.into_iter().map(|(k, v)| (k, v.0)).collect()
    }

    /// The writes made so far, e.g. `create Secret ns/a`.
    pub fn writes(&self) -> Vec<String> {
        self.state.borrow().writes.clone()
    }

    /// Forgets the writes made so far.
    pub fn clear_writes(&self) {
        self.state.borrow_mut().writes.clear();
    }

    /// The reasons of the events recorded so far.
    pub fn event_reasons(&self) -> Vec<String> {
        let s = self.state.borrow();
        s.events.iter().map(|(_, e)| e.reason.clone()).collect()
    }

    fn find(&self, kind: &str, name: &str) -> ObjectRef {
        let s = self.state.borrow();
        s.server
            .keys()
            .find(|r| r.kind == kind && r.name == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {kind} {name}"))
    }

    fn fault(&self, op: Op, name: &str) -> Result<(), ApiError> {
        let mut s = self.state.borrow_mut();
        let found = s
            .faults
            .iter_mut()
            .find(|(o, n, _, times)| *o == op && n == name && *times > 0);
        match found {
            Some((_, _, error, times)) => {
                *times -= 1;
                Err(error.clone())
            }
            None => Ok(()),
        }
    }

    fn store(&self, r: ObjectRef, mut object: Value, what: &str) -> Value {
        let mut s = self.state.borrow_mut();
        s.version += 1;
        object["metadata"]["resourceVersion"] = json!(s.version.to_string());
        s.server.insert(r.clone(), object.clone());
        if !s.frozen {
            s.cache.insert(r.clone(), object.clone());
        }
        s.writes.push(format!("{what} {} {}", r.kind, r.key()));
        object
    }
}

fn refuse_owner_references(object: &Value) {
    assert!(
        object.pointer("/metadata/ownerReferences").is_none(),
        "a Secret must never get an owner reference: {object}"
    );
}

/// RFC 7386.
fn merge(target: &mut Value, patch: &Value) {
    match patch {
        Value::Object(patch) => {
            if !target.is_object() {
                *target = json!({});
            }
            let map = target.as_object_mut().expect("an object");
            for (k, v) in patch {
                if v.is_null() {
                    map.remove(k);
                } else {
                    merge(map.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        other => *target = other.clone(),
    }
}

impl Cluster for FakeCluster {
    fn get(&self, object: &ObjectRef, from: ReadFrom) -> Result<Option<Value>, ApiError> {
        match from {
            ReadFrom::Cache => Ok(self.state.borrow().cache.get(object).cloned()),
            ReadFrom::Server => {
                self.fault(Op::GetServer, &object.name)?;
                let found = self.state.borrow().server.get(object).cloned();
                let hook = {
                    let mut s = self.state.borrow_mut();
                    s.after_server_read
                        .iter()
                        .position(|(n, _)| *n == object.name)
                        .map(|i| s.after_server_read.remove(i).1)
                };
                if let (Some(hook), Some(current)) = (hook, found.clone()) {
                    let mut changed = current;
                    hook(&mut changed);
                    let mut s = self.state.borrow_mut();
                    s.version += 1;
                    changed["metadata"]["resourceVersion"] = json!(s.version.to_string());
                    s.server.insert(object.clone(), changed);
                }
                Ok(found)
            }
        }
    }

    fn list(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ApiError> {
        assert!(options.label_selector.is_none(), "no label selectors here");
        let s = self.state.borrow();
        Ok(s.cache
            .iter()
            .filter(|(r, _)| {
                kind.matches(r) && (namespace.is_none() || r.namespace.as_deref() == namespace)
            })
            .filter(|(_, v)| match &options.field_index {
                None => true,
                Some((index, key)) => crate::describe::index(index, v).contains(key),
            })
            .map(|(_, v)| v.clone())
            .collect())
    }

    fn apply(&self, object: &Value, _owner: Option<&Owner>) -> Result<Value, ApiError> {
        panic!("the reconciler must never apply server-side: {object}");
    }

    fn create(&self, object: &Value) -> Result<Value, ApiError> {
        let r = ObjectRef::from_object(object).map_err(|e| ApiError::Invalid(e.to_string()))?;
        refuse_owner_references(object);
        self.fault(Op::Create, &r.name)?;
        if self.state.borrow().server.contains_key(&r) {
            return Err(ApiError::Conflict(format!("{r} already exists")));
        }
        let mut object = object.clone();
        object["metadata"]["uid"] = json!(format!("uid-{}", r.name));
        Ok(self.store(r, object, "create"))
    }

    fn patch(
        &self,
        object: &ObjectRef,
        patch: &Patch,
        resource_version: Option<&str>,
    ) -> Result<Value, ApiError> {
        let Patch::Merge(body) = patch else {
            panic!("the reconciler patches Secrets with JSON merge patches only: {patch:?}");
        };
        refuse_owner_references(body);
        self.fault(Op::Patch, &object.name)?;
        let current = self.state.borrow().server.get(object).cloned();
        let Some(mut current) = current else {
            return Err(ApiError::NotFound(format!("{object} not found")));
        };
        if let Some(version) = resource_version
            && current
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                != Some(version)
        {
            return Err(ApiError::Conflict(format!(
                "Operation cannot be fulfilled on {object}: the object has been modified"
            )));
        }
        merge(&mut current, body);
        Ok(self.store(object.clone(), current, "patch"))
    }

    fn delete(&self, object: &ObjectRef, _propagation: Propagation) -> Result<(), ApiError> {
        panic!("the reconciler must never delete: {object}");
    }

    fn update_status(&self, object: &Value) -> Result<Value, ApiError> {
        let r = ObjectRef::from_object(object).map_err(|e| ApiError::Invalid(e.to_string()))?;
        assert_ne!(
            r.kind, "Secret",
            "the reconciler must never update a Secret"
        );
        self.fault(Op::UpdateStatus, &r.name)?;
        let current = self.state.borrow().server.get(&r).cloned();
        let Some(mut current) = current else {
            return Err(ApiError::NotFound(format!("{r} not found")));
        };
        let sent = object
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str);
        if sent.is_some()
            && current
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                != sent
        {
            return Err(ApiError::Conflict(format!("{r} has been modified")));
        }
        current["status"] = object.get("status").cloned().unwrap_or(Value::Null);
        Ok(self.store(r, current, "update-status"))
    }

    fn record_event(&self, regarding: &ObjectRef, event: &Event) -> Result<(), ApiError> {
        self.state
            .borrow_mut()
            .events
            .push((regarding.clone(), event.clone()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{NS, secret};

    #[test]
    #[should_panic(expected = "must never apply")]
    fn the_fake_refuses_a_server_side_apply() {
        let _ = FakeCluster::new().apply(&secret("a", "Opaque", &[]), None);
    }

    #[test]
    #[should_panic(expected = "must never delete")]
    fn the_fake_refuses_a_delete() {
        let object = ObjectRef::of::<k8s_openapi::api::core::v1::Secret>(Some(NS), "a");
        let _ = FakeCluster::new().delete(&object, Propagation::Background);
    }

    #[test]
    #[should_panic(expected = "never update a Secret")]
    fn the_fake_refuses_a_status_update_of_a_secret() {
        let cluster = FakeCluster::new();
        cluster.put(secret("a", "Opaque", &[]));
        let _ = cluster.update_status(&secret("a", "Opaque", &[]));
    }

    #[test]
    fn the_fake_refuses_a_merge_patch_on_a_stale_resource_version_with_a_conflict() {
        let cluster = FakeCluster::new();
        let stored = cluster.put(secret("a", "Opaque", &[]));
        let object = ObjectRef::from_object(&stored).expect("complete");
        let read = stored["metadata"]["resourceVersion"]
            .as_str()
            .expect("a version");
        let patch = Patch::Merge(json!({"data": {"k": "dg=="}}));
        cluster.patch(&object, &patch, Some(read)).expect("current");
        let again = cluster.patch(&object, &patch, Some(read));
        assert!(matches!(again, Err(ApiError::Conflict(_))), "{again:?}");
    }
}
