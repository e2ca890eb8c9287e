//! The types the wasm-operator host and its guests share — the role kube-core plays for
//! kube-rs: plain data, no I/O.
//!
//! - [`admission`]: which writes a plugin admits, the request and the answers (contract 1.2).
//! - [`object`]: object and kind references ([`ObjectRef`], [`KindRef`]) and object keys.
//! - [`plugin`]: what a plugin describes ([`Description`] and its parts) and the request and
//!   outcome of a pass.
//! - [`call`]: the shapes of the `cluster` interface's calls (reads, lists, patches,
//!   deletion propagation, owner references, events).
//! - [`error`]: [`ApiError`], why a cluster call failed, and [`MissingField`].
//! - [`selector`]: label selectors, parsed and matched.
//! - [`names`]: the Kubernetes name rules checked before a call ([`is_dns_label`]).
//!
//! No wasmtime, no kube client, no tokio: guests link this crate into their `.wasm`, and
//! the embedded API server, the host's informer cache and its canary routing use the same
//! [`LabelSelector`].

pub mod admission;
pub mod call;
pub mod error;
pub mod names;
pub mod object;
pub mod plugin;
pub mod selector;

pub use call::{
    DeleteOptions, Event, EventType, ListOptions, MAX_REQUEST_BODY, Owner, Patch, Preconditions,
    Propagation, ReadFrom,
};
pub use error::{ApiError, MissingField};
pub use names::is_dns_label;
pub use object::{KindRef, ObjectRef, object_key, split_api_version};
pub use plugin::{
    Description, FieldIndex, KindIndex, Mapping, Outcome, Permission, Predicate, Request,
    SubresourcePermission, TargetDescription, Verb, Watch,
};
pub use selector::{LabelSelector, SelectorError};
