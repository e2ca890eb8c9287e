//! An embedded Kubernetes API server: the cluster every wasm-operator test, the demo and
//! `wasm-operator dev-cluster` run against.
//!
//! It speaks the Kubernetes REST API over HTTP on 127.0.0.1 with kube-apiserver's semantics
//! for what an operator relies on: discovery; get, list and watch with resourceVersions;
//! create, update, patch (merge, JSON, strategic, server-side apply with managedFields) and
//! delete; the status subresource; CRDs served from their structural schemas; finalizers,
//! garbage collection and namespace deletion; real `Status` error bodies. Tests reach into
//! it through fault injection and request counters.
//!
//! - [`server`]: start, stop, client, kubeconfig, test hooks.
//! - [`store`] and [`wal`]: objects, resourceVersions, watch history, durability.
//! - [`read`] and [`write`]: the verbs; [`patch`], [`managed`] and [`admission`] behind them.
//! - [`registry`]: the served kinds; [`discovery`]: what clients learn of them.
//! - [`lifecycle`]: garbage collection and namespace deletion.
//! - [`faults`]: fault injection and request counters.

mod admission;
pub mod apply;
mod builtin_fields;
mod crd;
mod defaults;
pub mod discovery;
pub mod faults;
pub mod lifecycle;
mod managed;
mod objects;
pub mod patch;
pub mod read;
pub mod registry;
mod route;
pub mod schema;
pub mod selector;
pub mod server;
pub mod status;
pub mod store;
pub mod wal;
pub mod write;

pub use faults::{Counts, Fault, FaultAction};
pub use server::{ApiServer, ServerConfig, ServerError};
