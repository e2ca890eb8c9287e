//! The gatekeeper's own source, built as version 0.2.0: the same kinds and operations, a
//! size limit of 5 — what upgrading a plugin's admission rule looks like.

#[path = "../../gatekeeper/src/lib.rs"]
pub mod gatekeeper;
