//! Errors of the apply engine, with kube-apiserver's conflict wording.

use std::fmt;

use serde::Serialize;

use super::fieldset::{Path, path_to_string};
use super::managed::Operation;

/// Why an apply (or a managedFields decode) failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum ApplyError {
    /// Fields of the applied configuration are owned by other managers with
    /// other values; the server answers 409 Conflict with
    /// [`Conflicts::causes`] as `details.causes`.
    #[error("{0}")]
    Conflicts(Conflicts),
    /// The object cannot be read with the schema (missing list-map key,
    /// duplicate item, non-object body, ...): the server answers 422/400.
    #[error("{0}")]
    InvalidObject(String),
    /// A `fieldsV1` value (or a managedFields entry) is malformed.
    #[error("invalid fieldsV1: {0}")]
    InvalidFieldsV1(String),
}

/// The manager side of a conflict: which managedFields entry owns the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Conflict {
    /// `manager` of the owning entry.
    pub manager: String,
    /// `operation` of the owning entry.
    pub operation: Operation,
    /// `apiVersion` of the owning entry.
    pub api_version: String,
    /// `subresource` of the owning entry, if any.
    pub subresource: Option<String>,
    /// The contested field.
    pub path: Path,
}

impl Conflict {
    /// The manager as kube-apiserver prints it: `"name"`, then
    /// ` with subresource "x"` if any, then ` using <apiVersion>` for Update
    /// entries (appliers are identified without their version).
    pub(crate) fn manager_display(&self) -> String {
        let mut s = quote(&self.manager);
        if let Some(sub) = &self.subresource {
            s.push_str(&format!(" with subresource {}", quote(sub)));
        }
        if self.operation == Operation::Update {
            s.push_str(&format!(" using {}", self.api_version));
        }
        s
    }

    /// kube-apiserver's manager identifier (a JSON object); conflicts are
    /// grouped and sorted by it in messages.
    pub(crate) fn identifier(&self) -> String {
        // Field order of the Go struct, as its JSON encoding has it.
        let mut s = format!(
            "{{\"manager\":{},\"operation\":{}",
            quote(&self.manager),
            quote(self.operation.as_str())
        );
        if self.operation == Operation::Update {
            s.push_str(&format!(",\"apiVersion\":{}", quote(&self.api_version)));
        }
        if let Some(sub) = &self.subresource {
            s.push_str(&format!(",\"subresource\":{}", quote(sub)));
        }
        s.push('}');
        s
    }
}

/// Go's `%q` for the strings we print (JSON quoting is the same for
/// printable text).
fn quote(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// One `details.causes` entry of the 409 an apply conflict answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ConflictCause {
    /// Always `FieldManagerConflict`.
    pub reason: String,
    /// `conflict with "mgr" using v1`.
    pub message: String,
    /// `.data.a`.
    pub field: String,
}

/// All conflicts of one apply, sorted by manager identifier, then in field
/// set order within a manager.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Conflicts(pub Vec<Conflict>);

impl Conflicts {
    /// The structured causes of the 409 Status, one per conflict.
    pub(crate) fn causes(&self) -> Vec<ConflictCause> {
        self.0
            .iter()
            .map(|c| ConflictCause {
                reason: "FieldManagerConflict".to_string(),
                message: format!("conflict with {}", c.manager_display()),
                field: path_to_string(&c.path),
            })
            .collect()
    }
}

impl fmt::Display for Conflicts {
    /// kube-apiserver's message: `Apply failed with 1 conflict: conflict
    /// with "m" using v1: .data.a`, or for several `Apply failed with N
    /// conflicts: conflicts with "m":\n- .a\n- .b\nconflicts with "n":...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let [only] = self.0.as_slice() {
            return write!(
                f,
                "Apply failed with 1 conflict: conflict with {}: {}",
                only.manager_display(),
                path_to_string(&only.path)
            );
        }
        let mut lines: Vec<String> = Vec::new();
        let mut current: Option<String> = None;
        for c in &self.0 {
            let id = c.identifier();
            if current.as_ref() != Some(&id) {
                lines.push(format!("conflicts with {}:", c.manager_display()));
                current = Some(id);
            }
            lines.push(format!("- {}", path_to_string(&c.path)));
        }
        write!(
            f,
            "Apply failed with {} conflicts: {}",
            self.0.len(),
            lines.join("\n")
        )
    }
}
