//! The controller runtime that drives each plugin.
//!
//! - [`plugin_controller`]: one [`Controller`] per reconciler plugin, built from its
//!   `describe()`.
//! - [`mapping`]: predicates on the primary and the owner and label mappings of watched
//!   kinds.
//! - [`index`]: the plugin's field indexes over its primary kind.
//! - [`queue`]: the work queue (no two passes of one key, coalescing, backoff).
//! - [`report`]: a failed pass reported on the primary (event and condition).

pub mod index;
pub(crate) mod mapping;
pub(crate) mod plugin_controller;
pub(crate) mod queue;
pub(crate) mod report;

pub use plugin_controller::{Controller, ControllerConfig, ControllerError, Running};
pub use queue::Backoff;
pub use queue::WorkQueue;
