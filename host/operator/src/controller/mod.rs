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
pub mod mapping;
pub mod plugin_controller;
pub mod queue;
pub mod report;

pub use plugin_controller::{Controller, ControllerConfig, ControllerError, Running};
pub use queue::{Backoff, Done, WorkQueue};
