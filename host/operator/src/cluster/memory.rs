//! An in-memory cluster: objects in a map, with the API server's bookkeeping.
//!
//! It keeps what a reconciler observes of kube-apiserver for the calls of the WIT `cluster`
//! interface: uid, creationTimestamp, a monotonic resourceVersion, `generation` bumped only
//! on spec changes, 409 on a stale resourceVersion or an existing name, 404 for a missing
//! object, a status write that ignores everything but status, equality-based label
//! selectors, and an apply that writes nothing when it changes nothing. Counters of writes
//! per verb let tests assert "this pass made 0 writes".
//!
//! DECISION: it does not track field ownership — an apply merges the applied fields into
//! the object (maps merged, lists replaced) and never removes a field — and it has no
//! garbage collector, finalizers or watches. Those belong to the embedded API server
//! (`host/apiserver`), which replaces this store wherever those semantics matter.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use wasm_operator_sdk::{
    ApiError, Event, EventType, KindRef, ListOptions, ObjectRef, Owner, Patch, Propagation,
    ReadFrom,
};

use super::{Caller, ClusterBackend};

type Key = (String, String, Option<String>, String);

/// An event as recorded, with its repeat count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedEvent {
    pub regarding: ObjectRef,
    pub reporter: String,
    pub event_type: EventType,
    pub reason: String,
    pub action: String,
    pub note: String,
    /// 1 for a single occurrence; more once repeats aggregate into a series.
    pub count: u32,
}

/// Writes made, per verb.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteCounts {
    pub create: u64,
    pub apply: u64,
    pub patch: u64,
    pub delete: u64,
    pub update_status: u64,
}

impl WriteCounts {
    /// Every write, whatever the verb.
    pub fn total(&self) -> u64 {
        self.create + self.apply + self.patch + self.delete + self.update_status
    }
}

/// The in-memory cluster.
#[derive(Debug, Default)]
pub struct MemoryCluster {
    objects: Mutex<BTreeMap<Key, Value>>,
    events: Mutex<Vec<RecordedEvent>>,
    writes: Mutex<WriteCounts>,
    resource_version: AtomicU64,
    uid: AtomicU64,
}

impl MemoryCluster {
    /// An empty cluster.
    pub fn new() -> Self {
        Self::default()
    }

    /// The writes made so far.
    pub fn writes(&self) -> WriteCounts {
        *lock(&self.writes)
    }

    /// The events recorded so far.
    pub fn events(&self) -> Vec<RecordedEvent> {
        lock(&self.events).clone()
    }

    fn next_resource_version(&self) -> String {
        (self.resource_version.fetch_add(1, Ordering::SeqCst) + 1).to_string()
    }

    fn count(&self, verb: impl FnOnce(&mut WriteCounts)) {
        verb(&mut lock(&self.writes));
    }

    /// Stores `object` as a new object: uid, creationTimestamp, generation 1.
    fn insert_new(&self, objects: &mut BTreeMap<Key, Value>, key: Key, mut object: Value) -> Value {
        let uid = self.uid.fetch_add(1, Ordering::SeqCst) + 1;
        let meta = metadata_mut(&mut object);
        meta.insert(
            "uid".into(),
            json!(format!("00000000-0000-4000-8000-{uid:012x}")),
        );
        meta.insert("creationTimestamp".into(), json!(now()));
        meta.insert("generation".into(), json!(1));
        meta.insert(
            "resourceVersion".into(),
            json!(self.next_resource_version()),
        );
        objects.insert(key, object.clone());
        object
    }

    /// Replaces `old` by `new` when they differ: bumps resourceVersion, and generation when
    /// the spec changed. Returns the stored object.
    fn replace(
        &self,
        objects: &mut BTreeMap<Key, Value>,
        key: Key,
        old: &Value,
        mut new: Value,
    ) -> Value {
        if strip_volatile(old) == strip_volatile(&new) {
            return old.clone();
        }
        let generation = old
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(1);
        let spec_changed = old.get("spec") != new.get("spec");
        let meta = metadata_mut(&mut new);
        for field in ["uid", "creationTimestamp"] {
            if let Some(v) = old.pointer(&format!("/metadata/{field}")) {
                meta.insert(field.into(), v.clone());
            }
        }
        meta.insert(
            "generation".into(),
            json!(if spec_changed {
                generation + 1
            } else {
                generation
            }),
        );
        meta.insert(
            "resourceVersion".into(),
            json!(self.next_resource_version()),
        );
        objects.insert(key, new.clone());
        new
    }
}

#[async_trait]
impl ClusterBackend for MemoryCluster {
    async fn get(&self, object: &ObjectRef, _from: ReadFrom) -> Result<Option<Value>, ApiError> {
        Ok(lock(&self.objects).get(&key_of(object)).cloned())
    }

    async fn list(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ApiError> {
        if let Some((index, _)) = &options.field_index {
            return Err(ApiError::Other(format!(
                "field index {index}: the in-memory cluster answers no field-index lists"
            )));
        }
        let selector = options
            .label_selector
            .as_deref()
            .map(parse_selector)
            .transpose()?;
        let objects = lock(&self.objects);
        Ok(objects
            .iter()
            .filter(|((api_version, k, ns, _), _)| {
                *api_version == kind.api_version
                    && *k == kind.kind
                    && (namespace.is_none() || ns.as_deref() == namespace)
            })
            .filter(|(_, object)| {
                selector
                    .as_ref()
                    .is_none_or(|s| s.iter().all(|r| r.matches(object)))
            })
            .map(|(_, object)| object.clone())
            .collect())
    }

    async fn apply(
        &self,
        _caller: &Caller,
        object: Value,
        owner: Option<&Owner>,
    ) -> Result<Value, ApiError> {
        let r = object_ref(&object)?;
        let key = key_of(&r);
        let mut applied = object;
        if let Some(owner) = owner {
            metadata_mut(&mut applied).insert(
                "ownerReferences".into(),
                json!([{"apiVersion": owner.api_version, "kind": owner.kind, "name": owner.name,
                        "uid": owner.uid, "controller": true, "blockOwnerDeletion": true}]),
            );
        }
        let mut objects = lock(&self.objects);
        let stored = match objects.get(&key).cloned() {
            None => self.insert_new(&mut objects, key, applied),
            Some(old) => {
                let mut merged = old.clone();
                merge_into(&mut merged, applied);
                let stored = self.replace(&mut objects, key, &old, merged);
                if stored == old {
                    return Ok(stored);
                }
                stored
            }
        };
        drop(objects);
        self.count(|w| w.apply += 1);
        Ok(stored)
    }

    async fn create(&self, _caller: &Caller, object: Value) -> Result<Value, ApiError> {
        let r = object_ref(&object)?;
        let key = key_of(&r);
        let mut objects = lock(&self.objects);
        if objects.contains_key(&key) {
            return Err(ApiError::Conflict(format!(
                "{} \"{}\" already exists",
                plural_of(&r.kind),
                r.name
            )));
        }
        let stored = self.insert_new(&mut objects, key, object);
        drop(objects);
        self.count(|w| w.create += 1);
        Ok(stored)
    }

    async fn patch(
        &self,
        _caller: &Caller,
        object: &ObjectRef,
        patch: &Patch,
        resource_version: Option<&str>,
    ) -> Result<Value, ApiError> {
        let key = key_of(object);
        let mut objects = lock(&self.objects);
        let old = objects
            .get(&key)
            .cloned()
            .ok_or_else(|| not_found(object))?;
        check_resource_version(object, &old, resource_version)?;
        let mut new = old.clone();
        match patch {
            Patch::Merge(body) => json_patch::merge(&mut new, body),
            Patch::Json(body) => {
                let ops: json_patch::Patch = serde_json::from_value(body.clone()).map_err(|e| {
                    ApiError::Other(format!("invalid JSON patch for {object}: {e}"))
                })?;
                json_patch::patch(&mut new, &ops)
                    .map_err(|e| ApiError::Invalid(format!("{object}: {e}")))?;
            }
        }
        let stored = self.replace(&mut objects, key, &old, new);
        let wrote = stored != old;
        drop(objects);
        if wrote {
            self.count(|w| w.patch += 1);
        }
        Ok(stored)
    }

    async fn delete(&self, object: &ObjectRef, _propagation: Propagation) -> Result<(), ApiError> {
        lock(&self.objects)
            .remove(&key_of(object))
            .ok_or_else(|| not_found(object))?;
        self.count(|w| w.delete += 1);
        Ok(())
    }

    async fn update_status(&self, _caller: &Caller, object: Value) -> Result<Value, ApiError> {
        let r = object_ref(&object)?;
        let key = key_of(&r);
        let mut objects = lock(&self.objects);
        let old = objects.get(&key).cloned().ok_or_else(|| not_found(&r))?;
        let precondition = object
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str);
        check_resource_version(&r, &old, precondition)?;
        let mut new = old.clone();
        if let Value::Object(map) = &mut new {
            match object.get("status") {
                Some(status) => map.insert("status".into(), status.clone()),
                None => map.remove("status"),
            };
        }
        let stored = self.replace(&mut objects, key, &old, new);
        let wrote = stored != old;
        drop(objects);
        if wrote {
            self.count(|w| w.update_status += 1);
        }
        Ok(stored)
    }

    async fn record_event(
        &self,
        caller: &Caller,
        regarding: &ObjectRef,
        event: &Event,
    ) -> Result<(), ApiError> {
        let mut events = lock(&self.events);
        let repeat = events.iter_mut().find(|e| {
            e.regarding == *regarding
                && e.reporter == caller.plugin
                && e.event_type == event.event_type
                && e.reason == event.reason
                && e.note == event.note
        });
        match repeat {
            Some(existing) => existing.count += 1,
            None => events.push(RecordedEvent {
                regarding: regarding.clone(),
                reporter: caller.plugin.clone(),
                event_type: event.event_type,
                reason: event.reason.clone(),
                action: event.action.clone(),
                note: event.note.clone(),
                count: 1,
            }),
        }
        Ok(())
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding the lock leaves plain data behind; keep serving it.
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn key_of(r: &ObjectRef) -> Key {
    (
        r.api_version.clone(),
        r.kind.clone(),
        r.namespace.clone(),
        r.name.clone(),
    )
}

fn object_ref(object: &Value) -> Result<ObjectRef, ApiError> {
    ObjectRef::from_object(object).map_err(|e| ApiError::Invalid(e.to_string()))
}

fn plural_of(kind: &str) -> String {
    format!("{}s", kind.to_lowercase())
}

fn not_found(r: &ObjectRef) -> ApiError {
    ApiError::NotFound(format!("{} \"{}\" not found", plural_of(&r.kind), r.name))
}

fn check_resource_version(
    r: &ObjectRef,
    stored: &Value,
    wanted: Option<&str>,
) -> Result<(), ApiError> {
    let Some(wanted) = wanted else { return Ok(()) };
    let current = stored
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if current == wanted {
        Ok(())
    } else {
        Err(ApiError::Conflict(format!(
            "Operation cannot be fulfilled on {} \"{}\": the object has been modified; please apply your changes to the latest version and try again",
            plural_of(&r.kind),
            r.name
        )))
    }
}

fn metadata_mut(object: &mut Value) -> &mut Map<String, Value> {
    if !object.is_object() {
        *object = json!({});
    }
    let map = object.as_object_mut().expect("made an object above");
    let meta = map.entry("metadata").or_insert_with(|| json!({}));
    if !meta.is_object() {
        *meta = json!({});
    }
    meta.as_object_mut().expect("made an object above")
}

/// The object without the fields the server sets on every write.
fn strip_volatile(object: &Value) -> Value {
    let mut object = object.clone();
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in [
            "resourceVersion",
            "generation",
            "uid",
            "creationTimestamp",
            "managedFields",
        ] {
            meta.remove(field);
        }
    }
    object
}

/// Merges `applied` into `target`: maps recursively, everything else replaced.
fn merge_into(target: &mut Value, applied: Value) {
    match (target, applied) {
        (Value::Object(target), Value::Object(applied)) => {
            for (k, v) in applied {
                match target.get_mut(&k) {
                    Some(existing) => merge_into(existing, v),
                    None => {
                        target.insert(k, v);
                    }
                }
            }
        }
        (target, applied) => *target = applied,
    }
}

fn now() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    k8s_openapi::jiff::Timestamp::from_second(i64::try_from(seconds).unwrap_or(0))
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// One requirement of an equality-based label selector.
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    NotExists(String),
}

impl Requirement {
    fn matches(&self, object: &Value) -> bool {
        let label = |k: &str| {
            object
                .pointer("/metadata/labels")
                .and_then(|l| l.get(k))
                .and_then(Value::as_str)
        };
        match self {
            Requirement::Equals(k, v) => label(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => label(k) != Some(v.as_str()),
            Requirement::Exists(k) => label(k).is_some(),
            Requirement::NotExists(k) => label(k).is_none(),
        }
    }
}

fn parse_selector(selector: &str) -> Result<Vec<Requirement>, ApiError> {
    selector
        .split(',')
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(|r| {
            if let Some((k, v)) = r.split_once("!=") {
                Ok(Requirement::NotEquals(k.trim().into(), v.trim().into()))
            } else if let Some((k, v)) = r.split_once("==").or_else(|| r.split_once('=')) {
                Ok(Requirement::Equals(k.trim().into(), v.trim().into()))
            } else if let Some(k) = r.strip_prefix('!') {
                Ok(Requirement::NotExists(k.trim().into()))
            } else if r.contains(' ') || r.contains('(') {
                Err(ApiError::Other(format!(
                    "label selector {selector:?}: set-based requirements are not served by the in-memory cluster"
                )))
            } else {
                Ok(Requirement::Exists(r.into()))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller() -> Caller {
        Caller {
            plugin: "t".into(),
            field_manager: "t".into(),
        }
    }

    fn cm(data: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns"}, "data": data})
    }

    #[tokio::test]
    async fn an_apply_that_changes_nothing_writes_nothing() {
        let cluster = MemoryCluster::new();
        let first = cluster
            .apply(&caller(), cm(json!({"k": "v"})), None)
            .await
            .expect("apply");
        let second = cluster
            .apply(&caller(), cm(json!({"k": "v"})), None)
            .await
            .expect("apply");
        assert_eq!(
            first["metadata"]["resourceVersion"],
            second["metadata"]["resourceVersion"]
        );
        assert_eq!(cluster.writes().apply, 1);
    }

    #[tokio::test]
    async fn a_patch_with_a_stale_resource_version_conflicts() {
        let cluster = MemoryCluster::new();
        cluster
            .create(&caller(), cm(json!({})))
            .await
            .expect("create");
        let r = ObjectRef::from_object(&cm(json!({}))).expect("ref");
        let err = cluster
            .patch(
                &caller(),
                &r,
                &Patch::Merge(json!({"data": {"x": "1"}})),
                Some("999"),
            )
            .await
            .expect_err("stale");
        assert!(matches!(err, ApiError::Conflict(_)), "{err:?}");
    }

    #[tokio::test]
    async fn generation_is_bumped_only_on_spec_changes() {
        let cluster = MemoryCluster::new();
        let object =
            json!({"apiVersion": "x/v1", "kind": "T", "metadata": {"name": "a"}, "spec": {"n": 1}});
        cluster
            .create(&caller(), object.clone())
            .await
            .expect("create");
        let r = ObjectRef::from_object(&object).expect("ref");
        let labelled = cluster
            .patch(
                &caller(),
                &r,
                &Patch::Merge(json!({"metadata": {"labels": {"l": "1"}}})),
                None,
            )
            .await
            .expect("patch");
        assert_eq!(labelled["metadata"]["generation"], 1);
        let changed = cluster
            .patch(
                &caller(),
                &r,
                &Patch::Merge(json!({"spec": {"n": 2}})),
                None,
            )
            .await
            .expect("patch");
        assert_eq!(changed["metadata"]["generation"], 2);
    }

    #[tokio::test]
    async fn a_status_write_ignores_the_spec() {
        let cluster = MemoryCluster::new();
        let object =
            json!({"apiVersion": "x/v1", "kind": "T", "metadata": {"name": "a"}, "spec": {"n": 1}});
        cluster.create(&caller(), object).await.expect("create");
        let write = json!({"apiVersion": "x/v1", "kind": "T", "metadata": {"name": "a"}, "spec": {"n": 9}, "status": {"ok": true}});
        let stored = cluster
            .update_status(&caller(), write)
            .await
            .expect("status");
        assert_eq!(stored["spec"]["n"], 1);
        assert_eq!(stored["status"]["ok"], true);
    }

    #[tokio::test]
    async fn repeated_events_aggregate_into_a_series() {
        let cluster = MemoryCluster::new();
        let r = ObjectRef::from_object(&cm(json!({}))).expect("ref");
        let event = Event {
            event_type: EventType::Normal,
            reason: "R".into(),
            action: "A".into(),
            note: "n".into(),
        };
        cluster
            .record_event(&caller(), &r, &event)
            .await
            .expect("event");
        cluster
            .record_event(&caller(), &r, &event)
            .await
            .expect("event");
        assert_eq!(cluster.events().len(), 1);
        assert_eq!(cluster.events()[0].count, 2);
    }

    #[tokio::test]
    async fn a_label_selector_narrows_a_list() {
        let cluster = MemoryCluster::new();
        for (name, app) in [("a", "x"), ("b", "y")] {
            let object = json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": "ns", "labels": {"app": app}}});
            cluster.create(&caller(), object).await.expect("create");
        }
        let kind = KindRef::of::<k8s_openapi::api::core::v1::ConfigMap>();
        let options = ListOptions {
            label_selector: Some("app=x".into()),
            field_index: None,
        };
        let listed = cluster
            .list(&kind, Some("ns"), &options)
            .await
            .expect("list");
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0]["metadata"]["name"], "a");
    }
}
