//! wasm-operator: a Kubernetes operator whose reconcilers run as WebAssembly components.
//!
//! The plugin runtime (engine, artifact cache, capabilities, passes) is the
//! `wasm-operator-runtime` crate; this crate runs its plugins against a cluster:
//!
//! - [`controller`]: the controller of each plugin, built from its `describe()`: mappings,
//!   predicates, field indexes, the work queue.
//! - [`informer`]: the shared watch caches, one per kind.
//! - [`cluster`]: the cluster backends passes are served from (kube-rs, the caches).
//! - [`operator`]: the plugins of a directory run against a cluster, with leader
//!   election, `/metrics`, `/healthz`, `/readyz`, graceful shutdown and RBAC.
//! - [`metrics`]: the Prometheus metrics.
//! - [`cli`]: the subcommands of the `wasm-operator` binary (`demo` and `dev-cluster`,
//!   with the embedded API server, behind the default feature `demo`).

pub mod cli;
pub mod cluster;
pub mod controller;
pub mod informer;
pub(crate) mod metrics;
pub mod oci;
pub mod operator;
pub mod targets;
pub mod webhook;

pub use metrics::Metrics;
