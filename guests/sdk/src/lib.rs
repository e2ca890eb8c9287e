//! The guest side of wasm-operator.
//!
//! A reconciler is written against the [`Cluster`] trait and implements [`Reconciler`]; the
//! [`export_reconciler!`] macro turns it into the WIT `reconciler` export when the crate is
//! built for `wasm32-wasip2`. The same crate builds natively, where the host hands it a
//! native [`Cluster`] — reconciler code never touches a WIT type.
//!
//! - [`object`]: object and kind references, and how to read them off objects.
//! - [`cluster`]: the [`Cluster`] trait (the WIT `cluster` interface in Rust types) and
//!   [`ClusterExt`], its typed helpers over k8s-openapi and serde types.
//! - [`json`]: a read as the host passed it ([`Json`]), to decode into just the fields
//!   wanted.
//! - [`plugin`]: what a plugin describes and returns ([`Description`], [`Outcome`], …).
//! - [`admission`]: defaulting and validation of writes (contract 1.2): kube-worded field
//!   errors, typed defaulting.
//! - [`log`]: logging into the host's `tracing`.
//! - [`http`]: HTTP(S) requests to the destinations the plugin declares (contract 1.1).
//! - [`crypto`]: fresh private keys (PKCS#8) from the host's key generation.
//! - [`token`]: ServiceAccount tokens ([`token::request_token`], a TokenRequest on the
//!   `token` subresource).
//! - [`blocks`]: the CobaltCore building blocks (apply, config, database, deployment, job,
//!   optional, policy, satellite, secrets, tls, pipeline) that reconcilers are assembled
//!   from.
//! - [`external`]: types for the CRDs of mariadb-operator, External Secrets,
//!   cert-manager and the Gateway API.
//! - [`planner`]: the [`Planner`] trait (the WIT `planner` interface in Rust types), for
//!   reconcilers that plan Secrets with secretgen.
//! - `crd` (with the `schemars` feature): CRDs generated from a reconciler's Rust types,
//!   for its tests to compare with the committed YAML.
//! - `testing` (with the `testing` feature): `FakeCluster`, an in-memory [`Cluster`] for
//!   reconcilers' tests.

pub mod admission;
pub mod blocks;
pub mod cluster;
#[cfg(feature = "schemars")]
pub mod crd;
pub mod crypto;
pub mod error;
pub mod external;
pub mod http;
pub mod json;
pub mod log;
pub mod object;
pub mod planner;
pub mod plugin;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod token;

#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod wit;

pub use cluster::{
    Applied, Cluster, ClusterExt, DeleteOptions, Event, EventType, ListOptions, Owner, Patch,
    Preconditions, Propagation, ReadFrom, TargetError, has_finalizer,
};
pub use error::{ApiError, Error, Result};
pub use json::Json;
pub use object::{KindRef, ObjectRef};
pub use planner::Planner;
pub use plugin::{
    Description, FieldIndex, KindIndex, Mapping, Outcome, Permission, Predicate, ReconcileError,
    Reconciler, Request, SubresourcePermission, TargetDescription, Verb, Watch,
};

/// Re-exported so guests name the same versions the SDK's helpers take.
pub use k8s_openapi;
pub use serde_json;

/// Implements [`k8s_openapi::Resource`] and [`k8s_openapi::Metadata`] for a custom
/// resource type with a `metadata: ObjectMeta` field:
/// `custom_resource!(Keystone, "keystone.openstack.c5c3.io", "v1alpha1", "Keystone",
/// "keystones", k8s_openapi::NamespaceResourceScope)`.
#[macro_export]
macro_rules! custom_resource {
    ($ty:ty, $group:literal, $version:literal, $kind:literal, $plural:literal, $scope:ty) => {
        impl $crate::k8s_openapi::Resource for $ty {
            const API_VERSION: &'static str = concat!($group, "/", $version);
            const GROUP: &'static str = $group;
            const KIND: &'static str = $kind;
            const VERSION: &'static str = $version;
            const URL_PATH_SEGMENT: &'static str = $plural;
            type Scope = $scope;
        }

        impl $crate::k8s_openapi::Metadata for $ty {
            type Ty = $crate::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
            fn metadata(&self) -> &Self::Ty {
                &self.metadata
            }
            fn metadata_mut(&mut self) -> &mut Self::Ty {
                &mut self.metadata
            }
        }
    };
}

/// Exports a [`Reconciler`] as the plugin's WIT `reconciler` interface.
///
/// Expands to nothing when the crate is not built for wasm32, so the same crate builds
/// natively.
#[macro_export]
macro_rules! export_reconciler {
    ($reconciler:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type WasmOperatorExport = $crate::wit::Exported<$reconciler>;
    $crate::wit::export_plugin!(WasmOperatorExport with_types_in $crate::wit::bindings);
        };
    };
}
