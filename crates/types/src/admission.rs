//! Admission (contract 1.2): which writes a plugin defaults and validates, the request it
//! is asked about, and what it answers.

use crate::object::KindRef;

/// A write admission is asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    Create,
    Update,
    Delete,
}

impl Operation {
    /// The operation as AdmissionReview and webhook rules spell it (`CREATE`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
        }
    }

    /// The operation of an AdmissionReview's `request.operation`; `None` for `CONNECT` and
    /// anything else.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "CREATE" => Some(Operation::Create),
            "UPDATE" => Some(Operation::Update),
            "DELETE" => Some(Operation::Delete),
            _ => None,
        }
    }
}

/// What the API server does when an admission call fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FailurePolicy {
    /// Refuse the write.
    #[default]
    Fail,
    /// Store it as if the plugin had not been asked.
    Ignore,
}

impl FailurePolicy {
    /// As a webhook configuration spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            FailurePolicy::Fail => "Fail",
            FailurePolicy::Ignore => "Ignore",
        }
    }
}

/// The two kinds of admission call, each served on its own webhook path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    /// `default`: a mutating webhook.
    Default,
    /// `validate`: a validating webhook.
    Validate,
}

impl Phase {
    /// `default` or `validate`, as paths and webhook names spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Default => "default",
            Phase::Validate => "validate",
        }
    }
}

/// A kind a plugin admits, and for which writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdmittedKind {
    pub kind: KindRef,
    /// The writes `default` is called for; empty: not defaulted.
    pub default_on: Vec<Operation>,
    /// The writes `validate` is called for; empty: not validated.
    pub validate_on: Vec<Operation>,
    pub failure_policy: FailurePolicy,
}

impl AdmittedKind {
    /// The operations of `phase`.
    pub fn operations(&self, phase: Phase) -> &[Operation] {
        match phase {
            Phase::Default => &self.default_on,
            Phase::Validate => &self.validate_on,
        }
    }
}

/// Who asked for a write.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserInfo {
    pub username: String,
    pub uid: String,
    pub groups: Vec<String>,
}

/// One write to admit.
#[derive(Debug, Clone, PartialEq)]
pub struct AdmissionRequest {
    pub operation: Operation,
    pub kind: KindRef,
    pub namespace: Option<String>,
    /// Empty for a create with `generateName`.
    pub name: String,
    /// The object to store; `None` on delete.
    pub object: Option<serde_json::Value>,
    /// The stored object on update and delete.
    pub old_object: Option<serde_json::Value>,
    pub user: UserInfo,
    pub dry_run: bool,
}

/// One invalid field, as kube-apiserver names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// E.g. `spec.fernet.maxActiveKeys`.
    pub field: String,
    /// E.g. `Invalid value: 2: must be at least 3`.
    pub message: String,
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// A refused write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    /// Why, for the user.
    pub message: String,
    /// The fields at fault.
    pub fields: Vec<FieldError>,
}

/// What `default` answered: the object to store and warnings.
#[derive(Debug, Clone, PartialEq)]
pub struct Defaulted {
    pub object: serde_json::Value,
    pub warnings: Vec<String>,
}

/// What `validate` answered.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Validated {
    /// `None`: allowed.
    pub denial: Option<Denial>,
    pub warnings: Vec<String>,
}
