//! The fake's [`Cluster`]: how each call is served from its store and cache.

use std::fmt;

use serde_json::{Value, json};
use wasm_operator_types::selector::LabelSelector;

use super::calls::{Call, Op};
use super::fake::{FakeCluster, metadata_mut};
use super::refusals::{has_owner_references, patch_sets_owner_references};
use crate::cluster::{Cluster, DeleteOptions, Event, ListOptions, Owner, Patch, ReadFrom};
use crate::error::ApiError;
use crate::object::{KindRef, ObjectRef};

fn incomplete(error: impl fmt::Display) -> ApiError {
    ApiError::Invalid(error.to_string())
}

impl Cluster for FakeCluster {
    fn get(&self, object: &ObjectRef, from: ReadFrom) -> Result<Option<Value>, ApiError> {
        let op = match from {
            ReadFrom::Cache => Op::Get,
            ReadFrom::Server => Op::GetServer,
        };
        self.refuse_op(op, &object.kind, object);
        if from == ReadFrom::Server {
            self.refuse_op(Op::Get, &object.kind, object);
        }
        let result = match from {
            ReadFrom::Cache => self
                .fault(&[Op::Get], &object.name)
                .map(|()| self.cached(object)),
            ReadFrom::Server => self
                .fault(&[Op::Get, Op::GetServer], &object.name)
                .map(|()| {
                    let found = self.object(object);
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
                        let version = s.version.to_string();
                        metadata_mut(&mut changed).insert("resourceVersion".into(), json!(version));
                        s.server.insert(object.clone(), changed);
                    }
                    found
                }),
        };
        self.record(Call::Get(object.clone(), from), result.is_ok());
        result
    }

    fn list(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ApiError> {
        self.refuse_op(Op::List, &kind.kind, kind);
        let result = self.fault(&[Op::List], &kind.kind).and_then(|()| {
            let selector = options
                .label_selector
                .as_deref()
                .map(LabelSelector::parse)
                .transpose()
                .map_err(|e| ApiError::Invalid(e.to_string()))?;
            let s = self.state.borrow();
            let mut listed = Vec::new();
            for (r, v) in &s.cache {
                if !kind.matches(r)
                    || namespace.is_some_and(|ns| r.namespace.as_deref() != Some(ns))
                {
                    continue;
                }
                if selector.as_ref().is_some_and(|sel| !sel.matches(v)) {
                    continue;
                }
                if let Some((index, key)) = &options.field_index {
                    let indexer = self.indexer.as_ref().unwrap_or_else(|| {
                        panic!(
                            "a list by field index {index:?}, but the FakeCluster has no \
                             indexer: build it with `with_indexer`"
                        )
                    });
                    if !indexer(index, v).contains(key) {
                        continue;
                    }
                }
                listed.push(v.clone());
            }
            Ok(listed)
        });
        self.record(
            Call::List(
                kind.kind.clone(),
                namespace.map(str::to_owned),
                options.clone(),
            ),
            result.is_ok(),
        );
        result
    }

    fn apply(&self, body: &Value, owner: Option<&Owner>) -> Result<Value, ApiError> {
        let key = ObjectRef::from_object(body).map_err(incomplete)?;
        self.refuse_op(Op::Apply, &key.kind, body);
        self.refuse_owner_reference(
            &key.kind,
            owner.is_some() || has_owner_references(body),
            body,
        );
        let result = self.fault(&[Op::Apply], &key.name);
        let existing = self.object(&key);
        let mut merged = existing.clone().unwrap_or_else(|| json!({}));
        json_patch::merge(&mut merged, body);
        if let Some(owner) = owner {
            metadata_mut(&mut merged).insert(
                "ownerReferences".into(),
                json!([{
                    "apiVersion": owner.api_version, "kind": owner.kind, "name": owner.name,
                    "uid": owner.uid, "controller": true, "blockOwnerDeletion": true,
                }]),
            );
        }
        let (result, mut merged) = match result {
            Ok(()) => match self.admit_write(&key, merged.clone(), existing.clone()) {
                Ok(admitted) => (Ok(()), admitted),
                Err(e) => (Err(e), merged),
            },
            Err(e) => (Err(e), merged),
        };
        let wrote = result.is_ok() && existing.as_ref() != Some(&merged);
        self.record(
            Call::Apply {
                object: key.clone(),
                body: body.clone(),
                owner: owner.cloned(),
                wrote,
            },
            result.is_ok(),
        );
        result?;
        if !wrote {
            return Ok(merged);
        }
        self.fill_server_fields(&mut merged, false);
        self.bump_generation(&key.kind, existing.as_ref(), &mut merged);
        Ok(self.store(&key, merged))
    }

    fn create(&self, object: &Value) -> Result<Value, ApiError> {
        let key = ObjectRef::from_object(object).map_err(incomplete)?;
        self.refuse_op(Op::Create, &key.kind, object);
        self.refuse_owner_reference(&key.kind, has_owner_references(object), object);
        let result = self.fault(&[Op::Create], &key.name).and_then(|()| {
            let mut stored = self.admit_write(&key, object.clone(), None)?;
            if self.state.borrow().server.contains_key(&key) {
                return Err(ApiError::Conflict(format!("{key} already exists")));
            }
            self.fill_server_fields(&mut stored, true);
            self.bump_generation(&key.kind, None, &mut stored);
            Ok(self.store(&key, stored))
        });
        self.record(Call::Create(key), result.is_ok());
        result
    }

    fn patch(
        &self,
        object: &ObjectRef,
        patch: &Patch,
        resource_version: Option<&str>,
    ) -> Result<Value, ApiError> {
        self.refuse_op(Op::Patch, &object.kind, object);
        self.refuse_json_patch(&object.kind, patch, object);
        self.refuse_owner_reference(&object.kind, patch_sets_owner_references(patch), object);
        let result = self.fault(&[Op::Patch], &object.name).and_then(|()| {
            let Some(current) = self.object(object) else {
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
            let mut patched = current.clone();
            match patch {
                Patch::Merge(body) => json_patch::merge(&mut patched, body),
                Patch::Json(body) => {
                    let operations: json_patch::Patch = serde_json::from_value(body.clone())
                        .map_err(|e| ApiError::Invalid(format!("the JSON patch: {e}")))?;
                    json_patch::patch(&mut patched, &operations)
                        .map_err(|e| ApiError::Invalid(format!("the JSON patch: {e}")))?;
                }
            }
            let mut patched = self.admit_write(object, patched, Some(current.clone()))?;
            self.bump_generation(&object.kind, Some(&current), &mut patched);
            Ok(self.store(object, patched))
        });
        self.record(Call::Patch(object.clone(), patch.clone()), result.is_ok());
        result
    }

    fn delete_with(&self, object: &ObjectRef, options: &DeleteOptions) -> Result<(), ApiError> {
        self.refuse_op(Op::Delete, &object.kind, object);
        let result = self.fault(&[Op::Delete], &object.name).and_then(|()| {
            if let Some(current) = self.object(object) {
                self.admit_delete(object, current)?;
            }
            let mut s = self.state.borrow_mut();
            if let Some(current) = s.server.get(object) {
                let meta = |field: &str| {
                    current
                        .pointer(&format!("/metadata/{field}"))
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                };
                let wanted = &options.preconditions;
                if wanted.uid.is_some() && wanted.uid != meta("uid") {
                    return Err(ApiError::Conflict(format!(
                        "Precondition failed: UID in precondition: {}, UID in object meta: {}",
                        wanted.uid.as_deref().unwrap_or_default(),
                        meta("uid").unwrap_or_default()
                    )));
                }
                if wanted.resource_version.is_some()
                    && wanted.resource_version != meta("resourceVersion")
                {
                    return Err(ApiError::Conflict(format!(
                        "Precondition failed: ResourceVersion in precondition: {}, ResourceVersion in object meta: {}",
                        wanted.resource_version.as_deref().unwrap_or_default(),
                        meta("resourceVersion").unwrap_or_default()
                    )));
                }
            }
            let removed = s.server.remove(object);
            if !s.frozen {
                s.cache.remove(object);
            }
            match removed {
                Some(_) => Ok(()),
                None => Err(ApiError::NotFound(format!("{object} not found"))),
            }
        });
        self.record(
            Call::Delete(object.clone(), options.clone()),
            result.is_ok(),
        );
        result
    }

    fn served(&self, kind: &KindRef) -> Result<bool, ApiError> {
        self.fault(&[Op::Served], &kind.plural)?;
        Ok(!self.state.borrow().unserved.contains(&kind.plural))
    }

    fn create_subresource(
        &self,
        object: &ObjectRef,
        subresource: &str,
        body: &Value,
    ) -> Result<Value, ApiError> {
        let answer = self
            .state
            .borrow()
            .subresource_answers
            .get(subresource)
            .cloned();
        let result = match (self.object(object), answer) {
            (None, _) => Err(ApiError::NotFound(format!("{object} not found"))),
            (Some(_), Some(answer)) => Ok(answer),
            (Some(_), None) => Err(ApiError::Other(format!(
                "FakeCluster: no answer set for subresource {subresource:?} (answer_subresource)"
            ))),
        };
        self.record(
            Call::CreateSubresource(object.clone(), subresource.to_owned(), body.clone()),
            result.is_ok(),
        );
        result
    }

    fn update_status(&self, object: &Value) -> Result<Value, ApiError> {
        let key = ObjectRef::from_object(object).map_err(incomplete)?;
        self.refuse_op(Op::UpdateStatus, &key.kind, &key);
        let result = self.fault(&[Op::UpdateStatus], &key.name).and_then(|()| {
            let Some(mut current) = self.object(&key) else {
                return Err(ApiError::NotFound(format!("{key} not found")));
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
                return Err(ApiError::Conflict(format!("{key} has been modified")));
            }
            current["status"] = object.get("status").cloned().unwrap_or(Value::Null);
            Ok(self.store(&key, current))
        });
        self.record(Call::UpdateStatus(key), result.is_ok());
        result
    }

    fn record_event(&self, regarding: &ObjectRef, event: &Event) -> Result<(), ApiError> {
        self.refuse_op(Op::RecordEvent, &regarding.kind, regarding);
        let result = self.fault(&[Op::RecordEvent], &regarding.name);
        self.record(
            Call::Event(regarding.clone(), event.clone()),
            result.is_ok(),
        );
        result
    }

    fn open_target(&self, name: &str) -> Result<Box<dyn Cluster + '_>, crate::TargetError> {
        let target = self.targets.borrow().get(name).cloned().ok_or_else(|| {
            crate::TargetError::NotRegistered(format!("target cluster {name:?} is not registered"))
        })?;
        Ok(Box::new(super::targets::FakeTarget {
            own: self,
            name: name.to_owned(),
            target,
        }))
    }
}
