//! wasm-operator: a Kubernetes operator whose reconcilers run as WebAssembly components.
//!
//! - [`runtime`]: the plugin runtime — one wasmtime engine, precompiled-artifact cache,
//!   contract checks, one store per pass with a deadline and a memory cap.
//! - [`capabilities`]: the WIT imports the host implements for its guests (cluster,
//!   logging, crypto).
//! - [`controller`]: the controller runtime (the work queue so far).
//! - [`cluster`]: the cluster backends the `cluster` capability serves from.
//! - [`native`]: the same reconcilers run natively against the same backend.
//! - [`wasi_run`]: the `wasm32-wasip2` test runner (`wasm-operator wasi-run`).
//! - [`cli`]: the subcommands of the `wasm-operator` binary.

mod bindings;
pub mod capabilities;
pub mod cli;
pub mod cluster;
pub mod controller;
pub mod native;
pub mod runtime;
pub mod wasi_run;

pub use bindings::{CONTRACT_PACKAGE, CONTRACT_VERSION, planner};
pub use runtime::{Limits, LoadError, PassError, Plugin, PluginKind, Runtime, RuntimeConfig};
