//! The operator's implementations of the runtime's
//! [`ClusterBackend`](wasm_operator_runtime::backend::ClusterBackend): [`kube`], a kube-rs
//! client against a real cluster or the embedded API server, and [`cached`], the shared
//! informer caches and field indexes in front of it for reads "from the cache"; and
//! [`discovery`], which kinds the cluster serves, for both and for the load checks;
//! [`endpoints`], how plugins' HTTP requests reach Services where there is no cluster DNS.

pub mod cached;
pub(crate) mod discovery;
pub mod endpoints;
pub mod kube;
pub(crate) mod mutation_cache;
pub(crate) mod raw;
