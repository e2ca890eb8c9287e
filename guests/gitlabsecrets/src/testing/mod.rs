//! Test support: the SDK's in-memory API server ([`FakeCluster`]), set up as the
//! reconciler's tests need it ([`fake_cluster`]), and object builders.

mod fixtures;

pub use fixtures::*;
pub use wasm_operator_sdk::testing::{FakeCluster, Op};

/// `#[should_panic]` tests check that the fake refuses what the reconciler must never do;
/// wasm32 is `panic=abort`, so under wasmtime libtest reports them ignored (they run
/// natively).
mod tests {
    use serde_json::json;
    use wasm_operator_sdk::{ApiError, Cluster, ObjectRef, Patch, Propagation};

    use super::*;

    #[test]
    #[should_panic(expected = "must never apply")]
    fn the_fake_refuses_a_server_side_apply() {
        let _ = fake_cluster().apply(&secret("a", "Opaque", &[]), None);
    }

    #[test]
    #[should_panic(expected = "must never delete")]
    fn the_fake_refuses_a_delete() {
        let object = ObjectRef::of::<k8s_openapi::api::core::v1::Secret>(Some(NS), "a");
        let _ = fake_cluster().delete(&object, Propagation::Background);
    }

    #[test]
    #[should_panic(expected = "never update a Secret")]
    fn the_fake_refuses_a_status_update_of_a_secret() {
        let cluster = fake_cluster();
        cluster.put(secret("a", "Opaque", &[]));
        let _ = cluster.update_status(&secret("a", "Opaque", &[]));
    }

    #[test]
    fn the_fake_refuses_a_merge_patch_on_a_stale_resource_version_with_a_conflict() {
        let cluster = fake_cluster();
        let stored = cluster.put(secret("a", "Opaque", &[]));
        let object = ObjectRef::from_object(&stored).expect("complete");
        let read = stored["metadata"]["resourceVersion"]
            .as_str()
            .expect("a version");
        let patch = Patch::Merge(json!({"data": {"k": "dg=="}}));
        cluster.patch(&object, &patch, Some(read)).expect("current");
        let again = cluster.patch(&object, &patch, Some(read));
        assert!(matches!(again, Err(ApiError::Conflict(_))), "{again:?}");
    }
}
