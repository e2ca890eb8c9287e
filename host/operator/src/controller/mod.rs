//! The controller runtime that drives each plugin: the work queue of the objects to
//! reconcile.
//!
//! (The watches, caches and controllers built from `describe()` are the next part of this
//! module; the queue is their common ground.)

pub mod queue;

pub use queue::{Backoff, Done, WorkQueue};
