//! Test support: an in-memory API server ([`FakeCluster`]) and object builders.

mod fake;
mod fixtures;

pub use fake::{FakeCluster, Op};
pub use fixtures::*;
