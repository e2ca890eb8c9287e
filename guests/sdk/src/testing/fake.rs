//! [`FakeCluster`]: the in-memory API server and cache behind [`Cluster`](crate::Cluster) in tests.

use std::cell::RefCell;
use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::cluster::Event;
use crate::error::ApiError;
use crate::object::ObjectRef;

use super::calls::{Call, Op};
use super::refusals::Refusal;

/// The `metadata.creationTimestamp` the fake gives an object stored without one.
pub const CREATION_TIMESTAMP: &str = "2026-01-01T00:00:00Z";

/// Runs over the object a server-side read returns, once (see
/// [`FakeCluster::after_server_read`]).
pub(super) type Hook = Box<dyn FnOnce(&mut Value)>;

/// Computes a field index: `(index name, object)` to the keys the object is indexed under.
pub(super) type Indexer = Box<dyn Fn(&str, &Value) -> Vec<String>>;

pub(super) struct Fault {
    pub(super) op: Op,
    pub(super) name: String,
    pub(super) error: ApiError,
    pub(super) times: usize,
}

pub(super) struct Recorded {
    pub(super) call: Call,
    pub(super) ok: bool,
}

#[derive(Default)]
pub(super) struct State {
    pub(super) server: BTreeMap<ObjectRef, Value>,
    pub(super) cache: BTreeMap<ObjectRef, Value>,
    /// Whether the cache stopped following the server (a lagging watch).
    pub(super) frozen: bool,
    /// The last resourceVersion (and uid number) handed out.
    pub(super) version: u64,
    pub(super) faults: Vec<Fault>,
    pub(super) after_server_read: Vec<(String, Hook)>,
    pub(super) calls: Vec<Recorded>,
    /// Kinds ([`KindRef::plural`](crate::object::KindRef::plural) of each) the cluster does
    /// not serve.
    pub(super) unserved: Vec<String>,
    /// What a create on each subresource answers.
    pub(super) subresource_answers: BTreeMap<String, Value>,
}

/// An in-memory API server and its watch cache, implementing [`Cluster`](crate::Cluster).
///
/// The contract, i.e. how it behaves like kube-apiserver and the host's cache:
///
/// - **Storage.** Every object is stored under its [`ObjectRef`]. Each write by the code
///   under test, and each [`put`](Self::put) or [`change`](Self::change) by the test, gives
///   the object a new `metadata.resourceVersion` (a counter, as a decimal string). An object
///   stored without `metadata.uid` or `metadata.creationTimestamp` gets `uid-<n>` and
///   [`CREATION_TIMESTAMP`]; [`create`](crate::Cluster::create) always assigns both, as the API
///   server does. `metadata.generation` is maintained only for the kinds named with
///   [`tracking_generation`](Self::tracking_generation): 1 when first stored, plus 1 on
///   every write that changes anything outside `metadata` and `status`.
/// - **Cache.** [`Cluster::get`](crate::Cluster::get) from
///   [`ReadFrom::Cache`](crate::ReadFrom::Cache) and [`Cluster::list`](crate::Cluster::list)
///   are served from the cache, which follows every write at once until
///   [`freeze_cache`](Self::freeze_cache) and is brought up to the server again by
///   [`sync_cache`](Self::sync_cache). [`ReadFrom::Server`](crate::ReadFrom::Server) reads
///   the server's copy. Cached objects carry no `metadata.managedFields`, as the host's
///   cache strips them.
/// - **get** of a missing object is `Ok(None)`.
/// - **list** filters by kind, namespace, label selector (the API's text form; one that
///   does not parse is [`ApiError::Invalid`]) and field index. A field index is computed by
///   the indexer given to [`with_indexer`](Self::with_indexer) (a reconciler's
///   `Reconciler::index`); listing by an index without one panics.
/// - **apply** merges the body into the stored object (or `{}`) as an RFC 7386 merge
///   patch, sets the owner, when given, as the only owner reference (controller,
///   blockOwnerDeletion), and writes only when that changed something: a converged apply
///   returns the stored object and is recorded with `wrote: false`. Unlike a real server it
///   keeps fields the caller stopped sending.
/// - **create** of an existing object is [`ApiError::Conflict`].
/// - **patch** applies an RFC 7386 merge patch or an RFC 6902 JSON patch (a JSON patch that
///   does not decode or apply is [`ApiError::Invalid`]). A missing object is
///   [`ApiError::NotFound`]; with `resource_version`, an object that has another is
///   [`ApiError::Conflict`]. Every successful patch is a write, even one that changes
///   nothing.
/// - **delete** of a missing object is [`ApiError::NotFound`].
/// - **update_status** replaces the stored object's `status` with the one sent (null when
///   absent). A missing object is [`ApiError::NotFound`]; when the object sent carries a
///   `metadata.resourceVersion` and the stored one has another, [`ApiError::Conflict`].
/// - **record_event** records the event; nothing is stored.
/// - **Failures** injected with [`fail`](Self::fail) or [`failing`](Self::failing) are
///   returned, in the order injected, by the next calls of that [`Op`] on an object of that
///   name (before the call has any effect), as many times as asked.
/// - **Refusals** registered with [`refusing`](Self::refusing) panic when the code under
///   test does what they name, so a test that never expects it fails loudly.
/// - **Calls.** Every call is recorded ([`calls`](Self::calls)), the failed ones included;
///   [`writes`](Self::writes) are the successful writes. A call that fails before naming an
///   object (a body without apiVersion, kind or metadata.name: [`ApiError::Invalid`]) is not
///   recorded.
///
/// The fake is single-threaded (`RefCell` inside): share it by reference, e.g. as
/// `&dyn Cluster`.
#[derive(Default)]
pub struct FakeCluster {
    pub(super) state: RefCell<State>,
    pub(super) refusals: Vec<Refusal>,
    pub(super) generation_kinds: Vec<String>,
    pub(super) indexer: Option<Indexer>,
    pub(super) admission: Option<super::admission::Admission>,
    /// Target clusters registered by name (contract 1.3).
    pub(super) targets: RefCell<std::collections::BTreeMap<String, super::targets::Registered>>,
}

impl FakeCluster {
    /// An empty cluster that refuses nothing, fails nothing and tracks no generation.
    pub fn new() -> Self {
        Self::default()
    }

    // --- Setting up ---

    /// Runs `R`'s admission before every create, update (apply, patch) and delete of a kind
    /// `R` admits: its `default_object` result is stored, and a denial fails the call as
    /// the API server would (`Invalid` when it names fields, `Forbidden` otherwise). During
    /// admission the plugin reads this cluster and every write is refused.
    pub fn admitting<R: crate::Reconciler>(mut self) -> Self {
        self.admission = Some(super::admission::Admission::of::<R>());
        self
    }

    /// Registers `target` as the target cluster `name` (contract 1.3), its children tied to
    /// their primary by the owner labels under `prefix` (the plugin's
    /// `Description::targets.owner_label_prefix`), as the host writes them.
    pub fn with_target(self, name: &str, prefix: &str, target: std::rc::Rc<FakeCluster>) -> Self {
        self.targets.borrow_mut().insert(
            name.to_owned(),
            super::targets::Registered {
                cluster: target,
                prefix: prefix.to_owned(),
            },
        );
        self
    }

    /// Removes the registration of target `name`: later opens fail `NotRegistered`.
    pub fn deregister_target(&self, name: &str) {
        self.targets.borrow_mut().remove(name);
    }

    /// `new` as admission leaves it (`old` is the stored object, for an update).
    pub(super) fn admit_write(
        &self,
        key: &ObjectRef,
        new: Value,
        old: Option<Value>,
    ) -> Result<Value, ApiError> {
        let Some(admission) = &self.admission else {
            return Ok(new);
        };
        let operation = match old {
            Some(_) => crate::admission::Operation::Update,
            None => crate::admission::Operation::Create,
        };
        let fallback = new.clone();
        Ok(admission
            .admit(self, key, operation, Some(new), old)?
            .unwrap_or(fallback))
    }

    /// Whether admission lets `old` be deleted.
    pub(super) fn admit_delete(&self, key: &ObjectRef, old: Value) -> Result<(), ApiError> {
        match &self.admission {
            Some(admission) => admission
                .admit(
                    self,
                    key,
                    crate::admission::Operation::Delete,
                    None,
                    Some(old),
                )
                .map(drop),
            None => Ok(()),
        }
    }

    /// Makes the cluster not serve the kind of plural `plural`: [`served`](crate::Cluster::served)
    /// answers false for it. (Calls on it are not refused: the host does that.)
    pub fn not_serving(self, plural: &str) -> Self {
        self.state.borrow_mut().unserved.push(plural.to_owned());
        self
    }

    /// What a create on subresource `subresource` of an existing object answers.
    pub fn answer_subresource(self, subresource: &str, answer: Value) -> Self {
        self.state
            .borrow_mut()
            .subresource_answers
            .insert(subresource.to_owned(), answer);
        self
    }

    /// Stores `object` (see [`put`](Self::put)) and returns the cluster, for building one
    /// in an expression.
    ///
    /// # Panics
    ///
    /// When `object` lacks apiVersion, kind or metadata.name.
    pub fn with(self, object: Value) -> Self {
        self.put(object);
        self
    }

    /// Stores `object` as another client would create or replace it, on the server and (if
    /// it follows) in the cache, and returns it as stored: with a new resourceVersion, and a
    /// uid, creationTimestamp and tracked generation when it had none.
    ///
    /// # Panics
    ///
    /// When `object` lacks apiVersion, kind or metadata.name.
    pub fn put(&self, mut object: Value) -> Value {
        let r = ObjectRef::from_object(&object)
            .unwrap_or_else(|e| panic!("FakeCluster::put of an incomplete object: {e}"));
        self.fill_server_fields(&mut object, false);
        if self.tracks_generation(&r.kind) {
            let meta = metadata_mut(&mut object);
            meta.entry("generation").or_insert_with(|| json!(1));
        }
        self.store(&r, object)
    }

    /// Changes the object of `kind` named `name` on the server as another client would: `f`
    /// edits a copy, which is then stored like [`put`](Self::put); a tracked generation is
    /// incremented when anything outside `metadata` and `status` changed.
    ///
    /// # Panics
    ///
    /// When the server holds no such object.
    pub fn change(&self, kind: &str, name: &str, f: impl FnOnce(&mut Value)) {
        let (r, before) = self
            .find(kind, name)
            .unwrap_or_else(|| panic!("FakeCluster::change: no {kind} named {name}"));
        let mut object = before.clone();
        f(&mut object);
        self.bump_generation(&r.kind, Some(&before), &mut object);
        self.put(object);
    }

    /// Computes field indexes with `indexer`, given the index name and the object: the keys
    /// the object is listed under ([`ListOptions::field_index`](crate::ListOptions::field_index)).
    pub fn with_indexer(mut self, indexer: impl Fn(&str, &Value) -> Vec<String> + 'static) -> Self {
        self.indexer = Some(Box::new(indexer));
        self
    }

    /// Maintains `metadata.generation` for objects of `kind`, as the API server does for a
    /// custom resource with a status subresource.
    pub fn tracking_generation(mut self, kind: &str) -> Self {
        self.generation_kinds.push(kind.to_owned());
        self
    }

    /// Panics whenever the code under test does what `refusal` names.
    pub fn refusing(mut self, refusal: Refusal) -> Self {
        self.refusals.push(refusal);
        self
    }

    /// Makes the next `op` on an object named `name` (the kind, for [`Op::List`]) fail with
    /// `error`, once; see [`fail`](Self::fail).
    pub fn failing(self, op: Op, name: &str, error: ApiError) -> Self {
        self.fail(op, name, error, 1);
        self
    }

    /// Makes the next `times` calls of `op` on an object named `name` (the kind, for
    /// [`Op::List`]) fail with `error`. [`Op::Get`] fails reads from either source,
    /// [`Op::GetServer`] reads past the cache only.
    pub fn fail(&self, op: Op, name: &str, error: ApiError, times: usize) {
        self.state.borrow_mut().faults.push(Fault {
            op,
            name: name.to_owned(),
            error,
            times,
        });
    }

    /// Runs `f` on the server's copy of the object named `name` right after the next read
    /// of it past the cache has returned: another client's change between a read and a
    /// write. The change gets a new resourceVersion; the cache does not see it until
    /// [`sync_cache`](Self::sync_cache).
    pub fn after_server_read(&self, name: &str, f: impl FnOnce(&mut Value) + 'static) {
        self.state
            .borrow_mut()
            .after_server_read
            .push((name.to_owned(), Box::new(f)));
    }

    /// Stops the cache from following the server (a lagging watch).
    pub fn freeze_cache(&self) {
        self.state.borrow_mut().frozen = true;
    }

    /// Brings the cache up to the server and lets it follow again.
    pub fn sync_cache(&self) {
        let mut s = self.state.borrow_mut();
        s.cache = s
            .server
            .iter()
            .map(|(r, o)| (r.clone(), cache_entry(o)))
            .collect();
        s.frozen = false;
    }

    // --- Inspecting ---

    /// The server's copy of `object`.
    pub fn object(&self, object: &ObjectRef) -> Option<Value> {
        self.state.borrow().server.get(object).cloned()
    }

    /// The cache's copy of `object`.
    pub fn cached(&self, object: &ObjectRef) -> Option<Value> {
        self.state.borrow().cache.get(object).cloned()
    }

    /// The server's copy of the object of `kind` named `name` (the first in any namespace).
    pub fn server(&self, kind: &str, name: &str) -> Option<Value> {
        self.find(kind, name).map(|(_, v)| v)
    }

    /// The names of the objects of `kind` on the server, ordered by apiVersion, namespace
    /// and name.
    pub fn names(&self, kind: &str) -> Vec<String> {
        self.state
            .borrow()
            .server
            .keys()
            .filter(|r| r.kind == kind)
            .map(|r| r.name.clone())
            .collect()
    }

    /// The decoded `data` of the Secret named `name` (the first in any namespace); empty
    /// when there is none.
    ///
    /// # Panics
    ///
    /// When the Secret's data is not base64.
    pub fn secret_data(&self, name: &str) -> BTreeMap<String, Vec<u8>> {
        let Some(secret) = self.server("Secret", name) else {
            return BTreeMap::new();
        };
        let data: BTreeMap<String, k8s_openapi::ByteString> =
            serde_json::from_value(secret.get("data").cloned().unwrap_or(json!({})))
                .expect("the Secret's data decodes");
        data.into_iter().map(|(k, v)| (k, v.0)).collect()
    }

    /// Every call made since the start (or [`clear_calls`](Self::clear_calls)), failed ones
    /// included.
    pub fn calls(&self) -> Vec<Call> {
        let s = self.state.borrow();
        s.calls.iter().map(|c| c.call.clone()).collect()
    }

    /// `kind name` of every delete sent, in order, failed ones included.
    pub fn deletes(&self) -> Vec<String> {
        let s = self.state.borrow();
        s.calls
            .iter()
            .filter_map(|c| match &c.call {
                Call::Delete(object, _) => Some(format!("{} {}", object.kind, object.name)),
                _ => None,
            })
            .collect()
    }

    /// The successful calls that wrote to the cluster ([`Call::is_write`]).
    pub fn writes(&self) -> Vec<Call> {
        let s = self.state.borrow();
        s.calls
            .iter()
            .filter(|c| c.ok && c.call.is_write())
            .map(|c| c.call.clone())
            .collect()
    }

    /// [`writes`](Self::writes) as lines, e.g. `create Secret ns/a`,
    /// `patch Secret ns/a`, `update-status GitLabSecrets ns/demo`.
    pub fn write_log(&self) -> Vec<String> {
        self.writes().iter().map(Call::to_string).collect()
    }

    /// The bodies of every apply, in order.
    pub fn applied(&self) -> Vec<Value> {
        let s = self.state.borrow();
        s.calls
            .iter()
            .filter_map(|c| match &c.call {
                Call::Apply { body, .. } => Some(body.clone()),
                _ => None,
            })
            .collect()
    }

    /// The events recorded, with the object each regards.
    pub fn events(&self) -> Vec<(ObjectRef, Event)> {
        let s = self.state.borrow();
        s.calls
            .iter()
            .filter(|c| c.ok)
            .filter_map(|c| match &c.call {
                Call::Event(r, event) => Some((r.clone(), event.clone())),
                _ => None,
            })
            .collect()
    }

    /// The reasons of the events recorded, in order.
    pub fn event_reasons(&self) -> Vec<String> {
        self.events().into_iter().map(|(_, e)| e.reason).collect()
    }

    /// Forgets the calls made so far (and so the writes and events).
    pub fn clear_calls(&self) {
        self.state.borrow_mut().calls.clear();
    }

    // --- The server ---

    pub(super) fn find(&self, kind: &str, name: &str) -> Option<(ObjectRef, Value)> {
        self.state
            .borrow()
            .server
            .iter()
            .find(|(r, _)| r.kind == kind && r.name == name)
            .map(|(r, v)| (r.clone(), v.clone()))
    }

    pub(super) fn tracks_generation(&self, kind: &str) -> bool {
        self.generation_kinds.iter().any(|k| k == kind)
    }

    /// Increments a tracked generation when `after` differs from `before` outside metadata
    /// and status; a new object starts at 1.
    pub(super) fn bump_generation(&self, kind: &str, before: Option<&Value>, after: &mut Value) {
        if !self.tracks_generation(kind) {
            return;
        }
        let generation = match before {
            None => 1,
            Some(before)
                if without_metadata_and_status(before) != without_metadata_and_status(after) =>
            {
                after
                    .pointer("/metadata/generation")
                    .and_then(Value::as_i64)
                    .unwrap_or(1)
                    + 1
            }
            Some(_) => return,
        };
        metadata_mut(after).insert("generation".into(), json!(generation));
    }

    /// Gives `object` a uid and creationTimestamp: always with `assign`, otherwise when it
    /// has none.
    pub(super) fn fill_server_fields(&self, object: &mut Value, assign: bool) {
        let uid = {
            let mut s = self.state.borrow_mut();
            s.version += 1;
            format!("uid-{}", s.version)
        };
        let meta = metadata_mut(object);
        if assign || !meta.contains_key("uid") {
            meta.insert("uid".into(), json!(uid));
        }
        if assign || !meta.contains_key("creationTimestamp") {
            meta.insert("creationTimestamp".into(), json!(CREATION_TIMESTAMP));
        }
    }

    /// Stores `object` under `r` with a new resourceVersion, on the server and, unless
    /// frozen, in the cache.
    pub(super) fn store(&self, r: &ObjectRef, mut object: Value) -> Value {
        let mut s = self.state.borrow_mut();
        s.version += 1;
        let version = s.version.to_string();
        metadata_mut(&mut object).insert("resourceVersion".into(), json!(version));
        s.server.insert(r.clone(), object.clone());
        if !s.frozen {
            s.cache.insert(r.clone(), cache_entry(&object));
        }
        object
    }

    pub(super) fn record(&self, call: Call, ok: bool) {
        self.state.borrow_mut().calls.push(Recorded { call, ok });
    }

    /// The first injected failure of one of `ops` on `name` that has times left.
    pub(super) fn fault(&self, ops: &[Op], name: &str) -> Result<(), ApiError> {
        let mut s = self.state.borrow_mut();
        let found = s
            .faults
            .iter_mut()
            .find(|f| ops.contains(&f.op) && f.name == name && f.times > 0);
        match found {
            Some(fault) => {
                fault.times -= 1;
                Err(fault.error.clone())
            }
            None => Ok(()),
        }
    }
}

/// `object` as the cache holds it: without `metadata.managedFields`.
pub(super) fn cache_entry(object: &Value) -> Value {
    let mut entry = object.clone();
    if let Some(meta) = entry.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    entry
}

/// The object's metadata, made an object if it is not one.
pub(super) fn metadata_mut(object: &mut Value) -> &mut Map<String, Value> {
    if !object.is_object() {
        *object = json!({});
    }
    let map = object.as_object_mut().expect("an object");
    let meta = map.entry("metadata").or_insert_with(|| json!({}));
    if !meta.is_object() {
        *meta = json!({});
    }
    meta.as_object_mut().expect("metadata is an object")
}

/// The object's fields but metadata and status: what a generation counts.
pub(super) fn without_metadata_and_status(object: &Value) -> Map<String, Value> {
    let mut map = object.as_object().cloned().unwrap_or_default();
    map.remove("metadata");
    map.remove("status");
    map
}
