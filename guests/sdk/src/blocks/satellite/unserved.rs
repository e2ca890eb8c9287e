//! The cluster as a satellite controller reads it: a kind the cluster does not serve has
//! no objects.
//!
//! | Read | Answer |
//! |---|---|
//! | `get` of a kind the cluster serves | the cluster's answer |
//! | `get` of a kind it does not serve (`NotServed`) | `None`: the object does not exist |
//! | `open_target` | the target, read the same way |
//! | any other call | the cluster's answer, unchanged |
//!
//! A satellite plugin loads while its parent's CRD (or ESO's) is not installed yet. A
//! parent of an unserved kind cannot exist, so [`resolve_parent_children`] reads it as a
//! missing parent (the gate False with the waiting reason, a requeue) rather than failing
//! the pass; an optional watch of the parent kind wakes the satellite once the kind is
//! served. Likewise an ExternalSecret of an unserved kind reads as "not found yet".
//!
//! [`resolve_parent_children`]: super::resolve_parent_children

use serde_json::Value;

use std::ops::Deref;

use crate::cluster::{
    Cluster, DeleteOptions, Event, ListOptions, Owner, Patch, ReadFrom, TargetError,
};
use crate::error::ApiError;
use crate::object::{KindRef, ObjectRef};

/// `cluster` (a `&dyn Cluster`, or a target opened from one), with a `get` of an unserved
/// kind answering `None`.
pub struct UnservedIsAbsent<C>(pub C);

impl<C> Cluster for UnservedIsAbsent<C>
where
    C: Deref,
    C::Target: Cluster,
{
    fn get(&self, object: &ObjectRef, from: ReadFrom) -> Result<Option<Value>, ApiError> {
        match self.0.get(object, from) {
            Err(ApiError::NotServed(_)) => Ok(None),
            other => other,
        }
    }
    fn list(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ApiError> {
        self.0.list(kind, namespace, options)
    }
    fn apply(&self, object: &Value, owner: Option<&Owner>) -> Result<Value, ApiError> {
        self.0.apply(object, owner)
    }
    fn create(&self, object: &Value) -> Result<Value, ApiError> {
        self.0.create(object)
    }
    fn patch(
        &self,
        object: &ObjectRef,
        patch: &Patch,
        resource_version: Option<&str>,
    ) -> Result<Value, ApiError> {
        self.0.patch(object, patch, resource_version)
    }
    fn delete_with(&self, object: &ObjectRef, options: &DeleteOptions) -> Result<(), ApiError> {
        self.0.delete_with(object, options)
    }
    fn update_status(&self, object: &Value) -> Result<Value, ApiError> {
        self.0.update_status(object)
    }
    fn record_event(&self, regarding: &ObjectRef, event: &Event) -> Result<(), ApiError> {
        self.0.record_event(regarding, event)
    }
    fn served(&self, kind: &KindRef) -> Result<bool, ApiError> {
        self.0.served(kind)
    }
    fn create_subresource(
        &self,
        object: &ObjectRef,
        subresource: &str,
        body: &Value,
    ) -> Result<Value, ApiError> {
        self.0.create_subresource(object, subresource, body)
    }
    fn open_target(&self, name: &str) -> Result<Box<dyn Cluster + '_>, TargetError> {
        let target = self.0.open_target(name)?;
        Ok(Box::new(UnservedIsAbsent(target)))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::testing::{FakeCluster, Op};

    fn secret() -> ObjectRef {
        ObjectRef {
            api_version: "v1".into(),
            kind: "Secret".into(),
            namespace: Some("openstack".into()),
            name: "s3".into(),
        }
    }

    #[test]
    fn a_get_of_an_unserved_kind_reads_as_absent_and_other_answers_pass_through() {
        let stored = json!({"apiVersion": "v1", "kind": "Secret",
                            "metadata": {"name": "s3", "namespace": "openstack"}});
        // (the failure injected on the get, what the get answers)
        let table: Vec<(Option<ApiError>, Result<bool, ApiError>)> = vec![
            (None, Ok(true)),
            (Some(ApiError::NotServed("secrets".into())), Ok(false)),
            (
                Some(ApiError::Forbidden("no".into())),
                Err(ApiError::Forbidden("no".into())),
            ),
        ];
        for (failure, expected) in table {
            let mut cluster = FakeCluster::new().with(stored.clone());
            if let Some(failure) = failure.clone() {
                cluster = cluster.failing(Op::Get, "s3", failure);
            }
            let got = UnservedIsAbsent(&cluster)
                .get(&secret(), ReadFrom::Cache)
                .map(|found| found.is_some());
            assert_eq!(got, expected, "{failure:?}");
        }
    }

    #[test]
    fn a_list_of_an_unserved_kind_is_not_rewritten() {
        let kind = KindRef {
            api_version: "external-secrets.io/v1".into(),
            kind: "ExternalSecret".into(),
            plural: "externalsecrets".into(),
            namespaced: true,
        };
        let cluster = FakeCluster::new().failing(
            Op::List,
            "ExternalSecret",
            ApiError::NotServed("externalsecrets".into()),
        );
        let got =
            UnservedIsAbsent(&cluster).list(&kind, Some("openstack"), &ListOptions::default());
        assert_eq!(got, Err(ApiError::NotServed("externalsecrets".into())));
    }
}
