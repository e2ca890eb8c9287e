//! What the code under test must never do ([`Refusal`]), and the fake's checks of it.

use std::fmt;

use serde_json::Value;

use super::calls::Op;
use super::fake::FakeCluster;
use crate::cluster::Patch;
use crate::object::ObjectRef;

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

impl FakeCluster {
    pub(super) fn refuse_op(&self, op: Op, kind: &str, what: &dyn fmt::Display) {
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

    pub(super) fn refuse_json_patch(&self, kind: &str, patch: &Patch, object: &ObjectRef) {
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

    pub(super) fn refuse_owner_reference(
        &self,
        kind: &str,
        sets_owner: bool,
        what: &dyn fmt::Display,
    ) {
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
pub(super) fn has_owner_references(body: &Value) -> bool {
    body.pointer("/metadata/ownerReferences")
        .is_some_and(|v| !v.is_null())
}

/// Whether `patch` sets an owner reference.
pub(super) fn patch_sets_owner_references(patch: &Patch) -> bool {
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
