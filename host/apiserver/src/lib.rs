//! An embedded Kubernetes API server: the cluster every wasm-operator test, the demo and
//! `wasm-operator dev-cluster` run against.
//!
//! It speaks the Kubernetes REST API over HTTP on 127.0.0.1 with kube-apiserver's semantics
//! for what an operator relies on: discovery; get, list and watch with resourceVersions;
//! create, update, patch (merge, JSON, strategic, server-side apply with managedFields) and
//! delete; the status subresource; ServiceAccount tokens (TokenRequest, signed, with a JWKS); CRDs served from their structural schemas; finalizers,
//! garbage collection and namespace deletion; real `Status` error bodies. Tests reach into
//! it through fault injection and request counters.
//!
//! - [`server`]: start, stop, client, kubeconfig, test hooks.
//! - [`store`] and [`wal`]: objects, resourceVersions, watch history, durability.
//! - [`read`] and [`write`]: the verbs; [`patch`], [`managed`] and [`admission`] behind them.
//! - [`table`]: `meta.k8s.io` Tables for GET and LIST (`kubectl get`'s columns: CRD printer
//!   columns, built-in kinds' columns).
//! - [`registry`]: the served kinds; [`discovery`]: what clients learn of them.
//! - [`lifecycle`]: garbage collection and namespace deletion.
//! - [`webhooks`]: the admission webhooks configurations register, called on writes.
//! - [`token`]: ServiceAccount tokens (TokenRequest) and the key set verifying them.
//! - [`faults`]: fault injection and request counters.
//! - [`actors`]: the cluster's other actors (workload controllers, cert-manager, …), each
//!   off unless the config names it.

mod access_review;
pub(crate) mod actors;
mod admission;
pub(crate) mod apply;
mod authn;
mod builtin_fields;
mod builtin_validation;
mod crd;
mod defaults;
pub(crate) mod discovery;
mod events;
pub(crate) mod faults;
pub(crate) mod lifecycle;
mod managed;
mod objects;
pub(crate) mod patch;
mod private_file;
mod protobuf;
mod rbac;
pub(crate) mod read;
pub(crate) mod registry;
mod route;
pub(crate) mod schema;
pub(crate) mod selector;
pub(crate) mod server;
mod service_accounts;
pub(crate) mod status;
pub(crate) mod store;
mod table;
mod tls;
pub mod token;
mod verified_tokens;
pub(crate) mod wal;
mod watch_slots;
mod webhooks;
pub(crate) mod write;

pub use actors::gateway::CONTROLLER_NAME as GATEWAY_CONTROLLER_NAME;
pub use actors::keystone::{
    ENDPOINT_MANAGER as ENDPOINTSLICE_MANAGER, KeystoneStandIn,
    UNAVAILABLE_ANNOTATION as KEYSTONE_UNAVAILABLE_ANNOTATION,
};
pub use actors::openbao::{
    OPENBAO_CHILD_MANAGER, OPENBAO_STATUS_MANAGER, OpenBaoControlError, OpenBaoStandIn,
};
pub use actors::workloads::{
    HOLD_ROLLOUT, JOB_FAILURE_MESSAGE, JOB_OUTCOME, JOB_OUTCOMES_CONFIG_MAP,
};
pub use actors::{
    Actor, ActorError, ActorNotRunning, BackendEntry, NOT_READY_ANNOTATION, UnknownActor,
};
pub use faults::{Counts, Fault, FaultAction};
pub use server::{ApiServer, ServerConfig, ServerError};
