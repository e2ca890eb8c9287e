//! Admission (contract 1.2): defaulting and validation of writes, exported by the same
//! plugin as its reconciler and served by the host as webhooks.
//!
//! A plugin names the kinds it admits in [`Description::admission`](crate::Description)
//! and implements [`Reconciler::default_object`](crate::Reconciler::default_object) and
//! [`Reconciler::validate_object`](crate::Reconciler::validate_object). The helpers here
//! keep those functions typed:
//!
//! - [`FieldErrors`] collects field errors worded as kube-apiserver words them
//!   (`spec.fernet.maxActiveKeys: Invalid value: 2: must be at least 3`) and turns them into
//!   the [`Denial`] kubectl prints;
//! - [`typed`] reads the request's object (and old object) as a typed value;
//! - [`default_typed`] defaults through a typed value without losing a field the type does
//!   not know.

mod field;
mod typed;

pub use field::FieldErrors;
pub use typed::{default_typed, typed};
pub use wasm_operator_types::admission::{
    AdmissionRequest, AdmittedKind, Defaulted, Denial, FailurePolicy, FieldError, Operation,
    UserInfo, Validated,
};

/// The answer of a `default` that changes nothing: the request's object as it came.
pub fn unchanged(request: &AdmissionRequest) -> Defaulted {
    Defaulted {
        object: request.object.clone().unwrap_or(serde_json::Value::Null),
        warnings: Vec::new(),
    }
}
