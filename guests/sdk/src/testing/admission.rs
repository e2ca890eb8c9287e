//! A plugin's admission run by the fake before it stores an object, as the API server
//! calls the plugin's webhooks: [`FakeCluster::admitting`](super::FakeCluster::admitting).

use serde_json::Value;
use wasm_operator_types::admission::{AdmissionRequest, AdmittedKind, Operation, UserInfo};

use crate::cluster::{Cluster, DeleteOptions, Event, ListOptions, Owner, Patch, ReadFrom};
use crate::error::ApiError;
use crate::object::{KindRef, ObjectRef};
use crate::plugin::Reconciler;

type DefaultFn = fn(
    &dyn Cluster,
    &AdmissionRequest,
) -> Result<crate::admission::Defaulted, crate::admission::Denial>;
type ValidateFn = fn(&dyn Cluster, &AdmissionRequest) -> crate::admission::Validated;

/// A reconciler's admission: its admitted kinds and its two calls.
pub(crate) struct Admission {
    kinds: Vec<AdmittedKind>,
    default: DefaultFn,
    validate: ValidateFn,
}

impl Admission {
    pub(crate) fn of<R: Reconciler>() -> Self {
        Self {
            kinds: R::describe().admission,
            default: R::default_object,
            validate: R::validate_object,
        }
    }

    /// `object` (`None` on delete) as the plugin admits it, `old` the stored one: the
    /// object to store, or the denial as the API server's error (`invalid` when it names
    /// fields, `forbidden` otherwise).
    pub(crate) fn admit(
        &self,
        cluster: &dyn Cluster,
        key: &ObjectRef,
        operation: Operation,
        object: Option<Value>,
        old: Option<Value>,
    ) -> Result<Option<Value>, ApiError> {
        let Some(admitted) = self
            .kinds
            .iter()
            .find(|a| a.kind.api_version == key.api_version && a.kind.kind == key.kind)
        else {
            return Ok(object);
        };
        let mut request = AdmissionRequest {
            operation,
            kind: admitted.kind.clone(),
            namespace: key.namespace.clone(),
            name: key.name.clone(),
            object,
            old_object: old,
            user: UserInfo::default(),
            dry_run: false,
        };
        let read_only = ReadOnly(cluster);
        let refused = |d: crate::admission::Denial| {
            if d.fields.is_empty() {
                ApiError::Forbidden(d.message)
            } else {
                ApiError::Invalid(d.message)
            }
        };
        if admitted.default_on.contains(&operation) {
            let defaulted = (self.default)(&read_only, &request).map_err(refused)?;
            request.object = Some(defaulted.object);
        }
        if admitted.validate_on.contains(&operation)
            && let Some(denial) = (self.validate)(&read_only, &request).denial
        {
            return Err(refused(denial));
        }
        Ok(request.object)
    }
}

/// The cluster as admission sees it: reads pass, writes are refused.
struct ReadOnly<'a>(&'a dyn Cluster);

fn refused(what: &str) -> ApiError {
    ApiError::Forbidden(format!("admission may not write to the cluster (a {what})"))
}

impl Cluster for ReadOnly<'_> {
    fn get(&self, object: &ObjectRef, from: ReadFrom) -> Result<Option<Value>, ApiError> {
        self.0.get(object, from)
    }

    fn list(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ApiError> {
        self.0.list(kind, namespace, options)
    }

    fn apply(&self, _object: &Value, _owner: Option<&Owner>) -> Result<Value, ApiError> {
        Err(refused("server-side apply"))
    }

    fn create(&self, _object: &Value) -> Result<Value, ApiError> {
        Err(refused("create"))
    }

    fn patch(&self, _: &ObjectRef, _: &Patch, _: Option<&str>) -> Result<Value, ApiError> {
        Err(refused("patch"))
    }

    fn delete_with(&self, _: &ObjectRef, _: &DeleteOptions) -> Result<(), ApiError> {
        Err(refused("delete"))
    }

    fn update_status(&self, _object: &Value) -> Result<Value, ApiError> {
        Err(refused("status update"))
    }

    fn record_event(&self, _: &ObjectRef, _: &Event) -> Result<(), ApiError> {
        Err(refused("event"))
    }

    fn served(&self, kind: &KindRef) -> Result<bool, ApiError> {
        self.0.served(kind)
    }

    fn create_subresource(&self, _: &ObjectRef, _: &str, _: &Value) -> Result<Value, ApiError> {
        Err(refused("subresource create"))
    }
}
