//! wasm-operator: a Kubernetes operator whose reconcilers run as WebAssembly components.
//!
//! - [`runtime`]: the plugin runtime — one wasmtime engine, precompiled-artifact cache,
//!   contract checks, one store per pass with a deadline and a memory cap.
//! - [`capabilities`]: the WIT imports the host implements for its guests (cluster,
//!   logging, crypto).
//! - [`controller`]: the controller of each plugin, built from its `describe()`: mappings,
//!   predicates, field indexes, the work queue.
//! - [`informer`]: the shared watch caches, one per kind.
//! - [`cluster`]: the cluster backends the `cluster` capability serves from.
//! - [`operator`]: the plugins of a directory run against a cluster, with leader
//!   election, `/metrics`, `/healthz`, `/readyz`, graceful shutdown and RBAC.
//! - [`metrics`]: the Prometheus metrics.
//! - [`native`]: the same reconcilers run natively against the same backend.
//! - [`wasi_run`]: the `wasm32-wasip2` test runner (`wasm-operator wasi-run`).
//! - [`cli`]: the subcommands of the `wasm-operator` binary.
//! - `bench` (feature `bench`): the benchmark scenarios of `wasm-operator bench`.

#[cfg(feature = "bench")]
pub mod bench;
mod bindings;
pub mod capabilities;
pub mod cli;
pub mod cluster;
pub mod controller;
pub mod informer;
pub mod metrics;
pub mod native;
pub mod operator;
pub mod runtime;
pub mod wasi_run;

pub use bindings::{CONTRACT_PACKAGE, CONTRACT_VERSION, planner};
pub use runtime::{Limits, LoadError, PassError, Plugin, PluginKind, Runtime, RuntimeConfig};
