//! `metadata.managedFields` entries and the two write paths that maintain
//! them: [`apply`] (server-side apply) and [`update`] (every other write).

use serde_json::{Map, Value};

use super::error::{ApplyError, Conflict, Conflicts};
use super::fieldset::{FieldSet, PathElement};
use super::merge::{Comparison, compare, field_set, merge, prune};
use super::schema::MergeSchema;

/// The `operation` of a managedFields entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Operation {
    /// Written by server-side apply.
    Apply,
    /// Written by create, update or a non-apply patch.
    Update,
}

impl Operation {
    /// `"Apply"` or `"Update"`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// One decoded `metadata.managedFields[]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ManagedFieldsEntry {
    /// `manager`.
    pub manager: String,
    /// `operation`.
    pub operation: Operation,
    /// `apiVersion` the fields were written with.
    pub api_version: String,
    /// `time` (RFC 3339), if any.
    pub time: Option<String>,
    /// `subresource`, if any (an empty string reads as none).
    pub subresource: Option<String>,
    /// `fieldsV1`.
    pub fields: FieldSet,
}

impl ManagedFieldsEntry {
    /// True when this entry is the one `manager` writes with `operation`
    /// (appliers are one entry whatever their apiVersion, updaters one entry
    /// per apiVersion), as kube-apiserver's manager identifier decides.
    pub(crate) fn is(
        &self,
        manager: &str,
        operation: Operation,
        api_version: &str,
        subresource: Option<&str>,
    ) -> bool {
        self.manager == manager
            && self.operation == operation
            && self.subresource.as_deref() == subresource
            && (operation == Operation::Apply || self.api_version == api_version)
    }

    /// The entry as the server writes it.
    pub(crate) fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("manager".into(), self.manager.clone().into());
        m.insert("operation".into(), self.operation.as_str().into());
        m.insert("apiVersion".into(), self.api_version.clone().into());
        if let Some(t) = &self.time {
            m.insert("time".into(), t.clone().into());
        }
        m.insert("fieldsType".into(), "FieldsV1".into());
        m.insert("fieldsV1".into(), self.fields.to_fields_v1());
        if let Some(s) = &self.subresource {
            m.insert("subresource".into(), s.clone().into());
        }
        Value::Object(m)
    }

    /// Decodes one entry.
    pub(crate) fn from_json(v: &Value) -> Result<Self, ApplyError> {
        let bad = |why: &str| ApplyError::InvalidFieldsV1(format!("managedFields entry: {why}"));
        let Value::Object(m) = v else {
            return Err(bad("not an object"));
        };
        let text = |k: &str| m.get(k).and_then(Value::as_str).map(str::to_string);
        let operation = match text("operation").as_deref() {
            Some("Apply") => Operation::Apply,
            Some("Update") => Operation::Update,
            _ => return Err(bad("operation must be Apply or Update")),
        };
        let fields = match m.get("fieldsV1") {
            None | Some(Value::Null) => FieldSet::new(),
            Some(f) => {
                if text("fieldsType").as_deref() != Some("FieldsV1") {
                    return Err(bad("fieldsType must be FieldsV1"));
                }
                FieldSet::from_fields_v1(f)?
            }
        };
        Ok(ManagedFieldsEntry {
            manager: text("manager").unwrap_or_default(),
            operation,
            api_version: text("apiVersion").unwrap_or_default(),
            time: text("time"),
            subresource: text("subresource").filter(|s| !s.is_empty()),
            fields,
        })
    }
}

/// Decodes `metadata.managedFields` (absent or null: no entries).
pub(crate) fn decode_managed_fields(object: &Value) -> Result<Vec<ManagedFieldsEntry>, ApplyError> {
    match object.pointer("/metadata/managedFields") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items.iter().map(ManagedFieldsEntry::from_json).collect(),
        Some(_) => Err(ApplyError::InvalidFieldsV1(
            "managedFields is not a list".into(),
        )),
    }
}

/// Encodes entries in kube-apiserver's order: operation (Apply first),
/// time, manager, apiVersion, subresource. Times are compared as strings,
/// which orders them for the server's own `YYYY-MM-DDTHH:MM:SSZ` format.
pub(crate) fn encode_managed_fields(entries: &[ManagedFieldsEntry]) -> Value {
    let mut sorted: Vec<&ManagedFieldsEntry> = entries.iter().collect();
    sorted.sort_by(|p, q| {
        (
            p.operation,
            p.time.as_deref().unwrap_or(""),
            &p.manager,
            &p.api_version,
            &p.subresource,
        )
            .cmp(&(
                q.operation,
                q.time.as_deref().unwrap_or(""),
                &q.manager,
                &q.api_version,
                &q.subresource,
            ))
    });
    Value::Array(
        sorted
            .into_iter()
            .map(ManagedFieldsEntry::to_json)
            .collect(),
    )
}

/// kube-apiserver resets undecodable managedFields instead of failing.
fn decode_or_reset(object: &Value) -> Vec<ManagedFieldsEntry> {
    decode_managed_fields(object).unwrap_or_default()
}

/// Metadata fields no manager ever owns.
const UNTRACKED_METADATA: [&str; 8] = [
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "selfLink",
];

/// Which part of the object a write may touch and own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// The main resource; `status` excluded when it is a subresource.
    Main { ignore_status: bool },
    /// The status subresource: only `status`.
    Status,
}

fn field(name: &str) -> PathElement {
    PathElement::Field(name.to_string())
}

impl Scope {
    fn new(subresource: Option<&str>, schema: &dyn MergeSchema) -> Self {
        match subresource {
            Some("status") => Scope::Status,
            _ => Scope::Main {
                ignore_status: schema.status_is_subresource(),
            },
        }
    }

    /// Drops the paths nobody owns in this scope.
    fn filter(self, set: &FieldSet) -> FieldSet {
        let mut out = match self {
            Scope::Status => return set.subtree(&[field("status")]),
            Scope::Main { .. } => set.clone(),
        };
        out.remove_subtree(&[field("apiVersion")]);
        out.remove_subtree(&[field("kind")]);
        for f in UNTRACKED_METADATA {
            out.remove_subtree(&[field("metadata"), field(f)]);
        }
        let mut metadata_node = FieldSet::new();
        metadata_node.insert(&[field("metadata")]);
        out = out.difference(&metadata_node);
        if self
            == (Scope::Main {
                ignore_status: true,
            })
        {
            out.remove_subtree(&[field("status")]);
        }
        out
    }

    fn filter_comparison(self, c: Comparison) -> Comparison {
        Comparison {
            added: self.filter(&c.added),
            modified: self.filter(&c.modified),
            removed: self.filter(&c.removed),
        }
    }

    /// The part of an applied configuration that is merged: untracked
    /// metadata dropped (identity fields kept only when creating), and
    /// `status` or everything but `status` dropped per scope.
    fn strip_applied(self, applied: &Map<String, Value>, creating: bool) -> Value {
        if self == Scope::Status {
            let mut m = Map::new();
            if let Some(s) = applied.get("status") {
                m.insert("status".into(), s.clone());
            }
            return Value::Object(m);
        }
        let mut out = applied.clone();
        if let Some(Value::Object(meta)) = out.get_mut("metadata") {
            for f in UNTRACKED_METADATA {
                if !(creating && (f == "name" || f == "namespace")) {
                    meta.remove(f);
                }
            }
        }
        if !creating {
            out.remove("apiVersion");
            out.remove("kind");
        }
        if self
            == (Scope::Main {
                ignore_status: true,
            })
        {
            out.remove("status");
        }
        Value::Object(out)
    }
}

fn without_managed_fields(v: &Value) -> Value {
    let mut out = v.clone();
    if let Some(Value::Object(meta)) = out.get_mut("metadata") {
        meta.remove("managedFields");
    }
    out
}

fn set_managed_fields(obj: &mut Value, entries: &[ManagedFieldsEntry]) {
    let Value::Object(root) = obj else { return };
    let meta = root
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        if entries.is_empty() {
            meta.remove("managedFields");
        } else {
            meta.insert("managedFields".into(), encode_managed_fields(entries));
        }
    }
}

/// The outcome of a successful [`apply`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ApplyResult {
    /// The object to store, with its updated `metadata.managedFields`
    /// (or the live object unchanged when `changed` is false).
    pub object: Value,
    /// False when nothing (object or managedFields) changed: the server then
    /// writes nothing (same resourceVersion, no watch event).
    pub changed: bool,
}

/// Server-side apply of `applied` by `manager` onto `live` (None: create).
///
/// `live` carries its managedFields; `applied` must have `apiVersion` and
/// no `metadata.managedFields`. Untracked fields (identity, `status` or
/// non-status per `subresource`) are neither merged nor owned. With
/// `force`, other managers lose the contested fields instead of the call
/// failing with [`ApplyError::Conflicts`]. `time` is the RFC 3339 time
/// recorded on the applier's entry when it or the object changes.
pub(crate) fn apply(
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    force: bool,
    schema: &dyn MergeSchema,
    subresource: Option<&str>,
    time: &str,
) -> Result<ApplyResult, ApplyError> {
    let Value::Object(applied_obj) = applied else {
        return Err(ApplyError::InvalidObject(
            "the applied configuration must be a JSON object".into(),
        ));
    };
    let api_version = match applied_obj.get("apiVersion").and_then(Value::as_str) {
        Some(v) if !v.is_empty() => v.to_string(),
        _ => return Err(ApplyError::InvalidObject("apiVersion must be set".into())),
    };
    if applied
        .pointer("/metadata/managedFields")
        .is_some_and(|v| !v.is_null())
    {
        return Err(ApplyError::InvalidObject(
            "metadata.managedFields must be nil".into(),
        ));
    }
    let scope = Scope::new(subresource, schema);
    let empty = Value::Object(Map::new());
    let base = without_managed_fields(live.unwrap_or(&empty));
    let entries = live.map(decode_or_reset).unwrap_or_default();
    let config = scope.strip_applied(applied_obj, live.is_none());
    let applied_set = scope.filter(&field_set(&config, schema)?);
    let mut merged = merge(&base, &config, &mut Vec::new(), schema)?;

    let is_me = |e: &ManagedFieldsEntry| e.is(manager, Operation::Apply, &api_version, subresource);
    let previous = entries.iter().find(|e| is_me(e));
    let others = entries
        .iter()
        .filter(|e| !is_me(e))
        .fold(FieldSet::new(), |acc, e| acc.union(&e.fields));
    if let Some(prev) = previous {
        let keep = applied_set.union(&others);
        prune(&mut merged, &prev.fields.difference(&keep), &keep, schema);
    }

    let mut cmp = Comparison::default();
    compare(
        Some(&base),
        Some(&merged),
        &mut Vec::new(),
        schema,
        &mut cmp,
    )?;
    let cmp = scope.filter_comparison(cmp);
    let changed_fields = cmp.added.union(&cmp.modified);

    let mut conflicts = Vec::new();
    let mut next: Vec<ManagedFieldsEntry> = Vec::new();
    for e in entries.iter().filter(|e| !is_me(e)) {
        let contested = e.fields.intersection(&changed_fields);
        conflicts.extend(contested.paths().into_iter().map(|path| Conflict {
            manager: e.manager.clone(),
            operation: e.operation,
            api_version: e.api_version.clone(),
            subresource: e.subresource.clone(),
            path,
        }));
        let kept = e
            .fields
            .difference(&changed_fields)
            .difference(&cmp.removed);
        if !kept.is_empty() {
            next.push(ManagedFieldsEntry {
                fields: kept,
                ..e.clone()
            });
        }
    }
    if !force && !conflicts.is_empty() {
        // Stable sort: paths keep their field-set order within a manager.
        conflicts.sort_by_key(Conflict::identifier);
        return Err(ApplyError::Conflicts(Conflicts(conflicts)));
    }

    let object_changed = merged != base;
    if !applied_set.is_empty() {
        let time = match previous {
            Some(p)
                if p.fields == applied_set && p.api_version == api_version && !object_changed =>
            {
                p.time.clone()
            }
            _ => Some(time.to_string()),
        };
        next.push(ManagedFieldsEntry {
            manager: manager.to_string(),
            operation: Operation::Apply,
            api_version,
            time,
            subresource: subresource.map(str::to_string),
            fields: applied_set,
        });
    }
    if let Some(live) = live
        && !object_changed
        && encode_managed_fields(&next) == encode_managed_fields(&entries)
    {
        return Ok(ApplyResult {
            object: live.clone(),
            changed: false,
        });
    }
    set_managed_fields(&mut merged, &next);
    Ok(ApplyResult {
        object: merged,
        changed: true,
    })
}

/// True when the write asks to strip managedFields: a list holding a single
/// empty entry (an empty list, like an absent field, keeps them).
fn requests_reset(new: &Value) -> bool {
    matches!(
        new.pointer("/metadata/managedFields"),
        Some(Value::Array(items)) if items.len() == 1 && items[0].as_object().is_some_and(Map::is_empty)
    )
}

/// Records a non-apply write (create, update, patch) of `new` over `old`
/// (None: create) by `manager`, returning `new` with its managedFields.
///
/// Every field added, changed or removed moves to `manager`'s Update entry
/// for `new`'s apiVersion and `subresource` (objects and list items that
/// appear are owned as nodes, `.`), and leaves every other entry; entries
/// left empty are dropped. The updater's `time` becomes `time` unless
/// neither its fields nor the object changed. Incoming managedFields are
/// ignored, except that `[{}]` strips them all (kube's documented reset).
/// Lists that cannot be keyed (duplicates, missing keys) are read as atomic.
pub(crate) fn update(
    old: Option<&Value>,
    new: &Value,
    manager: &str,
    time: &str,
    subresource: Option<&str>,
    schema: &dyn MergeSchema,
) -> Value {
    let mut out = without_managed_fields(new);
    if requests_reset(new) {
        return out;
    }
    let scope = Scope::new(subresource, schema);
    let empty = Value::Object(Map::new());
    let base = without_managed_fields(old.unwrap_or(&empty));
    let entries = old.map(decode_or_reset).unwrap_or_default();
    let mut cmp = Comparison::default();
    if compare(Some(&base), Some(&out), &mut Vec::new(), schema, &mut cmp).is_err() {
        cmp = Comparison::default();
    }
    let cmp = scope.filter_comparison(cmp);
    let touched = cmp.added.union(&cmp.modified).union(&cmp.removed);
    let api_version = new
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();

    let is_me =
        |e: &ManagedFieldsEntry| e.is(manager, Operation::Update, &api_version, subresource);
    let previous = entries.iter().find(|e| is_me(e));
    let mut next: Vec<ManagedFieldsEntry> = entries
        .iter()
        .filter(|e| !is_me(e))
        .map(|e| ManagedFieldsEntry {
            fields: e.fields.difference(&touched),
            ..e.clone()
        })
        .filter(|e| !e.fields.is_empty())
        .collect();
    let before = previous.map(|p| p.fields.clone()).unwrap_or_default();
    let fields = before
        .difference(&cmp.removed)
        .union(&cmp.modified)
        .union(&cmp.added);
    if !fields.is_empty() {
        let time = match previous {
            Some(p) if p.fields == fields && out == base => p.time.clone(),
            _ => Some(time.to_string()),
        };
        next.push(ManagedFieldsEntry {
            manager: manager.to_string(),
            operation: Operation::Update,
            api_version,
            time,
            subresource: subresource.map(str::to_string),
            fields,
        });
    }
    set_managed_fields(&mut out, &next);
    out
}
