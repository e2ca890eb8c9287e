//! The staged-rotation commit shared by fernet keys, credential keys and the admin
//! password (facts §2.11).
//!
//! A rotation CronJob writes its result into a staging Secret with the annotation
//! [`ROTATION_COMPLETED_AT`]; the operator commits it onto the target Secret the
//! Deployment mounts. Given the two, [`decide_commit`] (pure) says what to do and
//! [`commit_staged_rotation`] does it:
//!
//! - no completion annotation → nothing (staged data without it is ignored);
//! - annotation not RFC 3339 → Warning event, not applied, staging left;
//! - validation fails ([`validate`]) → Warning event, not applied; for keys the staging
//!   Secret is cleared (data and annotation removed), the admin password's is left;
//! - already committed (the target holds the same data and annotation) → the staging
//!   Secret is deleted, not applied;
//! - else data and annotation are copied onto the target (an update at the
//!   resourceVersion read), the staging Secret is deleted with its uid and
//!   resourceVersion as preconditions (NotFound and Conflict tolerated: a staging Secret
//!   the CronJob rewrote meanwhile stays for the next pass), Normal event, applied.
//!
//! Events regard the object the caller names (its CR); recording one that fails is
//! logged, not an error. No event note or error ever holds a staged value.

mod commit;
pub mod validate;

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::jiff::Timestamp;

pub use commit::{RotationError, StagedRotation, commit_staged_rotation};
pub use validate::{Rejection, parse_rfc3339, validate_keys, validate_password};

/// The annotation the rotation CronJob sets on the staging Secret: when it completed
/// (UTC RFC 3339).
pub const ROTATION_COMPLETED_AT: &str = "cobaltcore.c5c3.io/rotation-completed-at";

/// What a staged rotation rotates, with its normalized bound: decides the validation and
/// the event reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rotation {
    /// Fernet keys; N = max_active_keys.
    FernetKeys { max_active_keys: usize },
    /// Credential keys; N = max_active_keys.
    CredentialKeys { max_active_keys: usize },
    /// The admin password; at least `length` bytes.
    AdminPassword { length: usize },
}

impl Rotation {
    /// Fernet keys with `spec.fernet.maxActiveKeys` (N = max(it, 3)).
    pub fn fernet_keys(max_active_keys: i32) -> Self {
        Self::FernetKeys {
            max_active_keys: normalized_max_active_keys(max_active_keys),
        }
    }

    /// Credential keys with `spec.credentialKeys.maxActiveKeys` (N = max(it, 3)).
    pub fn credential_keys(max_active_keys: i32) -> Self {
        Self::CredentialKeys {
            max_active_keys: normalized_max_active_keys(max_active_keys),
        }
    }

    /// The admin password with `spec.passwordRotation.passwordLength` (0 → 32, below 24 →
    /// 24).
    pub fn admin_password(password_length: i32) -> Self {
        Self::AdminPassword {
            length: normalized_password_length(password_length),
        }
    }

    /// The Warning reason of a completion annotation that is not RFC 3339.
    pub fn reason_annotation_invalid(self) -> &'static str {
        match self {
            Self::AdminPassword { .. } => "AdminPasswordRotationAnnotationInvalid",
            _ => "RotationAnnotationInvalid",
        }
    }

    /// The Warning reason of staged data that fails validation.
    pub fn reason_rejected(self) -> &'static str {
        match self {
            Self::AdminPassword { .. } => "AdminPasswordRotationRejected",
            _ => "RotationRejected",
        }
    }

    /// The Normal reason of a committed rotation.
    pub fn reason_rotated(self) -> &'static str {
        match self {
            Self::FernetKeys { .. } => "FernetKeysRotated",
            Self::CredentialKeys { .. } => "CredentialKeysRotated",
            Self::AdminPassword { .. } => "AdminPasswordRotated",
        }
    }

    /// Checks staged `data`.
    pub fn validate(self, data: &BTreeMap<String, ByteString>) -> Result<(), Rejection> {
        match self {
            Self::FernetKeys { max_active_keys } | Self::CredentialKeys { max_active_keys } => {
                validate_keys(data, max_active_keys)
            }
            Self::AdminPassword { length } => validate_password(data, length),
        }
    }

    /// Whether a rejected staging Secret is cleared (keys) or left (admin password).
    pub fn clears_rejected_staging(self) -> bool {
        !matches!(self, Self::AdminPassword { .. })
    }
}

/// N of a key repository: max(`max_active_keys`, 3).
pub fn normalized_max_active_keys(max_active_keys: i32) -> usize {
    usize::try_from(max_active_keys)
        .unwrap_or(0)
        .max(validate::MIN_KEYS)
}

/// The admin password length: 32 for 0, at least 24.
pub fn normalized_password_length(password_length: i32) -> usize {
    match usize::try_from(password_length) {
        Ok(0) => 32,
        Ok(length) => length.max(24),
        Err(_) => 24,
    }
}

/// What committing a staged rotation does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommitDecision {
    /// The staging Secret has no completion annotation: nothing.
    NothingStaged,
    /// The completion annotation is not RFC 3339: Warning, not applied.
    InvalidAnnotation { value: String },
    /// The staged data fails validation: Warning, not applied; the staging Secret is
    /// cleared when the rotation [clears it](Rotation::clears_rejected_staging).
    Rejected(Rejection),
    /// The target already holds the staged data and annotation: delete the staging
    /// Secret, not applied.
    AlreadyCommitted,
    /// Copy the staged data and annotation onto the target, delete the staging Secret,
    /// Normal event, applied.
    Commit { completed_at: String },
}

pub(crate) fn completed_at(secret: &Secret) -> Option<&String> {
    secret
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(ROTATION_COMPLETED_AT))
}

/// What to do with `staging` for `target`, in the order of facts §2.11.
pub fn decide_commit(rotation: Rotation, staging: &Secret, target: &Secret) -> CommitDecision {
    let Some(value) = completed_at(staging) else {
        return CommitDecision::NothingStaged;
    };
    if parse_rfc3339(value).is_none() {
        return CommitDecision::InvalidAnnotation {
            value: value.clone(),
        };
    }
    let staged = staging.data.clone().unwrap_or_default();
    if let Err(rejection) = rotation.validate(&staged) {
        return CommitDecision::Rejected(rejection);
    }
    if target.data.clone().unwrap_or_default() == staged && completed_at(target) == Some(value) {
        return CommitDecision::AlreadyCommitted;
    }
    CommitDecision::Commit {
        completed_at: value.clone(),
    }
}

/// When the keys or password in use were rotated, from the completion annotation: the
/// target's first, the staging Secret's as fallback; `None` when neither holds an RFC
/// 3339 time. (What CobaltCore's key-age metric reads.)
pub fn rotation_completed_at(target: &Secret, staging: Option<&Secret>) -> Option<Timestamp> {
    let time = |s: &Secret| completed_at(s).and_then(|v| parse_rfc3339(v));
    time(target).or_else(|| staging.and_then(time))
}

#[cfg(test)]
mod tests;
