//! `FakeCluster`: an in-memory test double of [`Cluster`] that records every call.
//!
//! It behaves like an API server in the ways the blocks depend on: `apply` merges the body
//! into the stored object and writes only when something changed, sets the controller
//! owner reference and keeps status; `create` refuses an existing name; `delete` of a
//! missing object is NotFound. Failures are injected per verb and name.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::cluster::{Cluster, Event, ListOptions, Owner, Patch, Propagation, ReadFrom};
use crate::error::ApiError;
use crate::object::{KindRef, ObjectRef};

/// One call the code under test made.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Call {
    Get(ObjectRef),
    List(String, Option<String>, ListOptions),
    /// `wrote` is false for an apply that changed nothing.
    Apply {
        object: ObjectRef,
        body: Value,
        wrote: bool,
    },
    Create(ObjectRef),
    Patch(ObjectRef),
    Delete(ObjectRef, Propagation),
    UpdateStatus(ObjectRef),
    Event(ObjectRef),
}

/// The verbs failures can be injected on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Get,
    List,
    Apply,
    Create,
    Delete,
    UpdateStatus,
}

pub(crate) struct FakeCluster {
    objects: RefCell<BTreeMap<ObjectRef, Value>>,
    calls: RefCell<Vec<Call>>,
    failures: RefCell<Vec<(Op, String, ApiError)>>,
    version: Cell<u64>,
}

/// The owner the tests apply under.
pub(crate) fn owner() -> Owner {
    Owner {
        api_version: "keystone.openstack.c5c3.io/v1alpha1".into(),
        kind: "Keystone".into(),
        name: "keystone".into(),
        uid: "owner-uid".into(),
    }
}

impl FakeCluster {
    pub(crate) fn new() -> Self {
        Self {
            objects: RefCell::new(BTreeMap::new()),
            calls: RefCell::new(Vec::new()),
            failures: RefCell::new(Vec::new()),
            version: Cell::new(0),
        }
    }

    /// Stores `object` as if the server had it; uid, resourceVersion and
    /// creationTimestamp are filled in when absent.
    pub(crate) fn with(self, object: Value) -> Self {
        let mut object = object;
        self.fill_server_fields(&mut object);
        let key = ObjectRef::from_object(&object).expect("a complete test object");
        self.objects.borrow_mut().insert(key, object);
        self
    }

    /// Makes the next `op` on an object named `name` fail with `error`.
    pub(crate) fn failing(self, op: Op, name: &str, error: ApiError) -> Self {
        self.failures.borrow_mut().push((op, name.into(), error));
        self
    }

    pub(crate) fn calls(&self) -> Vec<Call> {
        self.calls.borrow().clone()
    }

    /// The calls that changed the cluster.
    pub(crate) fn writes(&self) -> Vec<Call> {
        self.calls()
            .into_iter()
            .filter(|c| match c {
                Call::Apply { wrote, .. } => *wrote,
                Call::Create(_) | Call::Patch(_) | Call::Delete(..) | Call::UpdateStatus(_) => true,
                _ => false,
            })
            .collect()
    }

    /// The bodies of every apply.
    pub(crate) fn applied(&self) -> Vec<Value> {
        self.calls()
            .into_iter()
            .filter_map(|c| match c {
                Call::Apply { body, .. } => Some(body),
                _ => None,
            })
            .collect()
    }

    pub(crate) fn object(&self, object: &ObjectRef) -> Option<Value> {
        self.objects.borrow().get(object).cloned()
    }

    /// The names of the stored objects of `kind`.
    pub(crate) fn names(&self, kind: &str) -> Vec<String> {
        self.objects
            .borrow()
            .keys()
            .filter(|r| r.kind == kind)
            .map(|r| r.name.clone())
            .collect()
    }

    fn fail(&self, op: Op, name: &str) -> Result<(), ApiError> {
        let mut failures = self.failures.borrow_mut();
        match failures.iter().position(|(o, n, _)| *o == op && n == name) {
            Some(i) => Err(failures.remove(i).2),
            None => Ok(()),
        }
    }

    fn next_version(&self) -> String {
        self.version.set(self.version.get() + 1);
        self.version.get().to_string()
    }

    fn fill_server_fields(&self, object: &mut Value) {
        let version = self.next_version();
        let meta = object
            .as_object_mut()
            .expect("an object")
            .entry("metadata")
            .or_insert_with(|| json!({}));
        let meta = meta.as_object_mut().expect("metadata is an object");
        meta.entry("uid")
            .or_insert_with(|| json!(format!("uid-{version}")));
        meta.entry("creationTimestamp")
            .or_insert_with(|| json!("2026-01-01T00:00:00Z"));
        meta.insert("resourceVersion".into(), json!(version));
    }
}

fn merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                merge(t.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (t, p) => *t = p.clone(),
    }
}

fn labels_match(object: &Value, selector: &str) -> bool {
    selector.split(',').filter(|s| !s.is_empty()).all(|term| {
        let labels = object.pointer("/metadata/labels");
        match term.split_once('=') {
            Some((k, v)) => labels.and_then(|l| l.get(k)).and_then(Value::as_str) == Some(v),
            None => labels.and_then(|l| l.get(term)).is_some(),
        }
    })
}

impl Cluster for FakeCluster {
    fn get(&self, object: &ObjectRef, _from: ReadFrom) -> Result<Option<Value>, ApiError> {
        self.calls.borrow_mut().push(Call::Get(object.clone()));
        self.fail(Op::Get, &object.name)?;
        Ok(self.object(object))
    }

    fn list(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ApiError> {
        self.calls.borrow_mut().push(Call::List(
            kind.kind.clone(),
            namespace.map(str::to_owned),
            options.clone(),
        ));
        self.fail(Op::List, &kind.kind)?;
        Ok(self
            .objects
            .borrow()
            .iter()
            .filter(|(r, _)| kind.matches(r))
            .filter(|(r, _)| namespace.is_none() || r.namespace.as_deref() == namespace)
            .filter(|(_, v)| {
                options
                    .label_selector
                    .as_deref()
                    .is_none_or(|s| labels_match(v, s))
            })
            .map(|(_, v)| v.clone())
            .collect())
    }

    fn apply(&self, body: &Value, owner: Option<&Owner>) -> Result<Value, ApiError> {
        let key = ObjectRef::from_object(body).map_err(|e| ApiError::Invalid(e.to_string()))?;
        let result = self.fail(Op::Apply, &key.name);
        let existing = self.object(&key);
        let mut merged = existing.clone().unwrap_or_else(|| json!({}));
        merge(&mut merged, body);
        if let Some(owner) = owner {
            merged["metadata"]["ownerReferences"] = json!([{
                "apiVersion": owner.api_version, "kind": owner.kind, "name": owner.name,
                "uid": owner.uid, "controller": true, "blockOwnerDeletion": true,
            }]);
        }
        let wrote = result.is_ok() && existing.as_ref() != Some(&merged);
        self.calls.borrow_mut().push(Call::Apply {
            object: key.clone(),
            body: body.clone(),
            wrote,
        });
        result?;
        if wrote {
            self.fill_server_fields(&mut merged);
            self.objects.borrow_mut().insert(key, merged.clone());
        }
        Ok(merged)
    }

    fn create(&self, object: &Value) -> Result<Value, ApiError> {
        let key = ObjectRef::from_object(object).map_err(|e| ApiError::Invalid(e.to_string()))?;
        self.calls.borrow_mut().push(Call::Create(key.clone()));
        self.fail(Op::Create, &key.name)?;
        if self.objects.borrow().contains_key(&key) {
            return Err(ApiError::Conflict(format!("{key} already exists")));
        }
        let mut stored = object.clone();
        self.fill_server_fields(&mut stored);
        self.objects.borrow_mut().insert(key, stored.clone());
        Ok(stored)
    }

    fn patch(
        &self,
        object: &ObjectRef,
        _patch: &Patch,
        _resource_version: Option<&str>,
    ) -> Result<Value, ApiError> {
        self.calls.borrow_mut().push(Call::Patch(object.clone()));
        Err(ApiError::Other("the fake does not patch".into()))
    }

    fn delete(&self, object: &ObjectRef, propagation: Propagation) -> Result<(), ApiError> {
        self.calls
            .borrow_mut()
            .push(Call::Delete(object.clone(), propagation));
        self.fail(Op::Delete, &object.name)?;
        match self.objects.borrow_mut().remove(object) {
            Some(_) => Ok(()),
            None => Err(ApiError::NotFound(format!("{object} not found"))),
        }
    }

    fn update_status(&self, object: &Value) -> Result<Value, ApiError> {
        let key = ObjectRef::from_object(object).map_err(|e| ApiError::Invalid(e.to_string()))?;
        self.calls
            .borrow_mut()
            .push(Call::UpdateStatus(key.clone()));
        self.fail(Op::UpdateStatus, &key.name)?;
        Ok(object.clone())
    }

    fn record_event(&self, regarding: &ObjectRef, _event: &Event) -> Result<(), ApiError> {
        self.calls.borrow_mut().push(Call::Event(regarding.clone()));
        Ok(())
    }
}
