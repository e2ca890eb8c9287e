//! [`FakeCluster`]: the in-memory API server and cache behind [`Cluster`] in tests.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value, json};
use wasm_operator_types::selector::LabelSelector;

use crate::cluster::{Cluster, DeleteOptions, Event, ListOptions, Owner, Patch, ReadFrom};
use crate::error::ApiError;
use crate::object::{KindRef, ObjectRef};

/// The `metadata.creationTimestamp` the fake gives an object stored without one.
pub const CREATION_TIMESTAMP: &str = "2026-01-01T00:00:00Z";

/// A verb of [`Cluster`], as failures are injected ([`FakeCluster::fail`]) and calls
/// refused ([`Refusal::Op`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Any [`Cluster::get`], from the cache or the server.
    Get,
    /// A [`Cluster::get`] past the cache ([`ReadFrom::Server`]) only.
    GetServer,
    /// [`Cluster::list`]; failures are keyed by the kind (e.g. `ConfigMap`), not a name.
    List,
    /// [`Cluster::apply`].
    Apply,
    /// [`Cluster::create`].
    Create,
    /// [`Cluster::patch`], merge or JSON.
    Patch,
    /// [`Cluster::delete`].
    Delete,
    /// [`Cluster::update_status`].
    UpdateStatus,
    /// [`Cluster::record_event`]; failures are keyed by the name of the object regarded.
    RecordEvent,
    /// [`Cluster::served`]; failures are keyed by the kind's plural (e.g. `certificates`).
    Served,
}

/// One call the code under test made, in the order made, whether it succeeded or not.
///
/// [`Display`](fmt::Display) renders a call as one line, e.g. `create Secret ns/a`, which is
/// what [`FakeCluster::write_log`] lists.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    /// A read of one object, and where it was served from.
    Get(ObjectRef, ReadFrom),
    /// A list: the kind's name, the namespace (`None`: all) and the options.
    List(String, Option<String>, ListOptions),
    /// A server-side apply of `body`; `wrote` is false when it changed nothing (or failed).
    Apply {
        object: ObjectRef,
        body: Value,
        owner: Option<Owner>,
        wrote: bool,
    },
    /// A create.
    Create(ObjectRef),
    /// A patch, with the patch sent.
    Patch(ObjectRef, Patch),
    /// A delete, with its propagation and preconditions.
    Delete(ObjectRef, DeleteOptions),
    /// A create on a subresource (e.g. a TokenRequest), with the body sent.
    CreateSubresource(ObjectRef, String, Value),
    /// A status update.
    UpdateStatus(ObjectRef),
    /// An event recorded about the object.
    Event(ObjectRef, Event),
}

impl Call {
    /// The object the call is about (`None` for a list).
    pub fn object(&self) -> Option<&ObjectRef> {
        match self {
            Self::Get(object, _)
            | Self::Apply { object, .. }
            | Self::Create(object)
            | Self::Patch(object, _)
            | Self::Delete(object, _)
            | Self::CreateSubresource(object, ..)
            | Self::UpdateStatus(object)
            | Self::Event(object, _) => Some(object),
            Self::List(..) => None,
        }
    }

    /// Whether the call writes to the cluster: an apply that changed something, a create,
    /// a patch, a delete or a status update (events do not count).
    pub fn is_write(&self) -> bool {
        match self {
            Self::Apply { wrote, .. } => *wrote,
            Self::Create(_)
            | Self::Patch(..)
            | Self::Delete(..)
            | Self::UpdateStatus(_)
            | Self::CreateSubresource(..) => true,
            Self::Get(..) | Self::List(..) | Self::Event(..) => false,
        }
    }
}

impl fmt::Display for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let on = |f: &mut fmt::Formatter<'_>, verb: &str, r: &ObjectRef| {
            write!(f, "{verb} {} {}", r.kind, r.key())
        };
        match self {
            Self::Get(r, ReadFrom::Cache) => on(f, "get", r),
            Self::Get(r, ReadFrom::Server) => on(f, "get-server", r),
            Self::List(kind, Some(namespace), _) => write!(f, "list {kind} {namespace}"),
            Self::List(kind, None, _) => write!(f, "list {kind}"),
            Self::Apply { object, .. } => on(f, "apply", object),
            Self::Create(r) => on(f, "create", r),
            Self::Patch(r, _) => on(f, "patch", r),
            Self::Delete(r, _) => on(f, "delete", r),
            Self::CreateSubresource(r, subresource, _) => {
                write!(f, "create {} {} {subresource}", r.kind, r.key())
            }
            Self::UpdateStatus(r) => on(f, "update-status", r),
            Self::Event(r, event) => write!(f, "event {} {} {}", event.reason, r.kind, r.key()),
        }
    }
}

/// Something the code under test must never do. The fake panics when it is done, so the
/// test fails naming it; register refusals with [`FakeCluster::refusing`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// `op` on an object of `kind`, or of any kind with `None`.
    Op { op: Op, kind: Option<String> },
    /// An RFC 6902 JSON patch of an object of `kind` (any kind with `None`): only merge
    /// patches are expected.
    JsonPatch { kind: Option<String> },
    /// A create, apply or patch that gives an object of `kind` (any kind with `None`) an
    /// owner reference: a body that carries `metadata.ownerReferences`, an apply with an
    /// owner, a JSON patch operation under `/metadata/ownerReferences`.
    OwnerReference { kind: Option<String> },
}

impl Refusal {
    /// `op` on any object.
    pub fn op(op: Op) -> Self {
        Self::Op { op, kind: None }
    }

    /// `op` on any object of `kind`.
    pub fn op_on(op: Op, kind: &str) -> Self {
        Self::Op {
            op,
            kind: Some(kind.to_owned()),
        }
    }

    /// A JSON patch of any object.
    pub fn json_patch() -> Self {
        Self::JsonPatch { kind: None }
    }

    /// A JSON patch of any object of `kind`.
    pub fn json_patch_on(kind: &str) -> Self {
        Self::JsonPatch {
            kind: Some(kind.to_owned()),
        }
    }

    /// An owner reference on any object.
    pub fn owner_reference() -> Self {
        Self::OwnerReference { kind: None }
    }

    /// An owner reference on any object of `kind`.
    pub fn owner_reference_on(kind: &str) -> Self {
        Self::OwnerReference {
            kind: Some(kind.to_owned()),
        }
    }
}

/// Runs over the object a server-side read returns, once (see
/// [`FakeCluster::after_server_read`]).
type Hook = Box<dyn FnOnce(&mut Value)>;

/// Computes a field index: `(index name, object)` to the keys the object is indexed under.
type Indexer = Box<dyn Fn(&str, &Value) -> Vec<String>>;

struct Fault {
    op: Op,
    name: String,
    error: ApiError,
    times: usize,
}

struct Recorded {
    call: Call,
    ok: bool,
}

#[derive(Default)]
struct State {
    server: BTreeMap<ObjectRef, Value>,
    cache: BTreeMap<ObjectRef, Value>,
    /// Whether the cache stopped following the server (a lagging watch).
    frozen: bool,
    /// The last resourceVersion (and uid number) handed out.
    version: u64,
    faults: Vec<Fault>,
    after_server_read: Vec<(String, Hook)>,
    calls: Vec<Recorded>,
    /// Kinds ([`KindRef::plural`] of each) the cluster does not serve.
    unserved: Vec<String>,
    /// What a create on each subresource answers.
    subresource_answers: BTreeMap<String, Value>,
}

/// An in-memory API server and its watch cache, implementing [`Cluster`].
///
/// The contract, i.e. how it behaves like kube-apiserver and the host's cache:
///
/// - **Storage.** Every object is stored under its [`ObjectRef`]. Each write by the code
///   under test, and each [`put`](Self::put) or [`change`](Self::change) by the test, gives
///   the object a new `metadata.resourceVersion` (a counter, as a decimal string). An object
///   stored without `metadata.uid` or `metadata.creationTimestamp` gets `uid-<n>` and
///   [`CREATION_TIMESTAMP`]; [`create`](Cluster::create) always assigns both, as the API
///   server does. `metadata.generation` is maintained only for the kinds named with
///   [`tracking_generation`](Self::tracking_generation): 1 when first stored, plus 1 on
///   every write that changes anything outside `metadata` and `status`.
/// - **Cache.** [`Cluster::get`] from [`ReadFrom::Cache`] and [`Cluster::list`] are served
///   from the cache, which follows every write at once until
///   [`freeze_cache`](Self::freeze_cache) and is brought up to the server again by
///   [`sync_cache`](Self::sync_cache). [`ReadFrom::Server`] reads the server's copy.
///   Cached objects carry no `metadata.managedFields`, as the host's cache strips them.
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
    state: RefCell<State>,
    refusals: Vec<Refusal>,
    generation_kinds: Vec<String>,
    indexer: Option<Indexer>,
    admission: Option<super::admission::Admission>,
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

    /// `new` as admission leaves it (`old` is the stored object, for an update).
    fn admit_write(
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
    fn admit_delete(&self, key: &ObjectRef, old: Value) -> Result<(), ApiError> {
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

    /// Makes the cluster not serve the kind of plural `plural`: [`served`](Cluster::served)
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
    /// the object is listed under ([`ListOptions::field_index`]).
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

    fn find(&self, kind: &str, name: &str) -> Option<(ObjectRef, Value)> {
        self.state
            .borrow()
            .server
            .iter()
            .find(|(r, _)| r.kind == kind && r.name == name)
            .map(|(r, v)| (r.clone(), v.clone()))
    }

    fn tracks_generation(&self, kind: &str) -> bool {
        self.generation_kinds.iter().any(|k| k == kind)
    }

    /// Increments a tracked generation when `after` differs from `before` outside metadata
    /// and status; a new object starts at 1.
    fn bump_generation(&self, kind: &str, before: Option<&Value>, after: &mut Value) {
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
    fn fill_server_fields(&self, object: &mut Value, assign: bool) {
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
    fn store(&self, r: &ObjectRef, mut object: Value) -> Value {
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

    fn record(&self, call: Call, ok: bool) {
        self.state.borrow_mut().calls.push(Recorded { call, ok });
    }

    /// The first injected failure of one of `ops` on `name` that has times left.
    fn fault(&self, ops: &[Op], name: &str) -> Result<(), ApiError> {
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

    // --- Refusals ---

    fn refuse_op(&self, op: Op, kind: &str, what: &dyn fmt::Display) {
        for refusal in &self.refusals {
            if let Refusal::Op {
                op: refused,
                kind: k,
            } = refusal
                && *refused == op
                && applies(k, kind)
            {
                panic!(
                    "the code under test must never {}: {what}",
                    phrase(op, k.as_deref())
                );
            }
        }
    }

    fn refuse_json_patch(&self, kind: &str, patch: &Patch, object: &ObjectRef) {
        if let Patch::Json(body) = patch {
            for refusal in &self.refusals {
                if let Refusal::JsonPatch { kind: k } = refusal
                    && applies(k, kind)
                {
                    panic!(
                        "the code under test must never JSON-patch {}, only merge-patch it: \
                         {object}: {body}",
                        article(k.as_deref())
                    );
                }
            }
        }
    }

    fn refuse_owner_reference(&self, kind: &str, sets_owner: bool, what: &dyn fmt::Display) {
        if !sets_owner {
            return;
        }
        for refusal in &self.refusals {
            if let Refusal::OwnerReference { kind: k } = refusal
                && applies(k, kind)
            {
                let subject = match k.as_deref() {
                    None => "An object".to_owned(),
                    Some(k) if starts_with_vowel(k) => format!("An {k}"),
                    Some(k) => format!("A {k}"),
                };
                panic!("{subject} must never get an owner reference: {what}");
            }
        }
    }
}

/// Whether a refusal for `refused` (any kind with `None`) applies to `kind`.
fn applies(refused: &Option<String>, kind: &str) -> bool {
    refused.as_deref().is_none_or(|k| k == kind)
}

/// `a Secret`, `an Ingress`, or `an object` for any kind.
fn article(kind: Option<&str>) -> String {
    match kind {
        None => "an object".to_owned(),
        Some(kind) if starts_with_vowel(kind) => format!("an {kind}"),
        Some(kind) => format!("a {kind}"),
    }
}

fn starts_with_vowel(kind: &str) -> bool {
    kind.starts_with(['A', 'E', 'I', 'O', 'U'])
}

/// What refusing `op` on `kind` forbids, e.g. `apply a Secret server-side`.
fn phrase(op: Op, kind: Option<&str>) -> String {
    let object = article(kind);
    match op {
        Op::Get => format!("read {object}"),
        Op::GetServer => format!("read {object} past the cache"),
        Op::List => format!(
            "list {}",
            kind.map_or("objects".to_owned(), |k| format!("{k}s"))
        ),
        Op::Apply => format!("apply {object} server-side"),
        Op::Create => format!("create {object}"),
        Op::Patch => format!("patch {object}"),
        Op::Delete => format!("delete {object}"),
        Op::UpdateStatus => format!("update {object}'s status"),
        Op::RecordEvent => format!("record an event about {object}"),
        Op::Served => format!("ask whether {object} is served"),
    }
}

/// Whether `body` carries `metadata.ownerReferences` (not null).
fn has_owner_references(body: &Value) -> bool {
    body.pointer("/metadata/ownerReferences")
        .is_some_and(|v| !v.is_null())
}

/// Whether `patch` sets an owner reference.
fn patch_sets_owner_references(patch: &Patch) -> bool {
    match patch {
        Patch::Merge(body) => has_owner_references(body),
        Patch::Json(ops) => ops.as_array().into_iter().flatten().any(|op| {
            op.get("op").and_then(Value::as_str) != Some("remove")
                && op
                    .get("path")
                    .and_then(Value::as_str)
                    .is_some_and(|p| p.starts_with("/metadata/ownerReferences"))
        }),
    }
}

/// The object's metadata, made an object if it is not one.
/// `object` as the cache holds it: without `metadata.managedFields`.
fn cache_entry(object: &Value) -> Value {
    let mut entry = object.clone();
    if let Some(meta) = entry.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    entry
}

fn metadata_mut(object: &mut Value) -> &mut Map<String, Value> {
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
fn without_metadata_and_status(object: &Value) -> Map<String, Value> {
    let mut map = object.as_object().cloned().unwrap_or_default();
    map.remove("metadata");
    map.remove("status");
    map
}

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
}
