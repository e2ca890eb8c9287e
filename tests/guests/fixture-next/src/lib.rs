//! The fixture reconciler's own source, built as version 0.2.0: the same controller shape,
//! another version and content — what a plugin upgrade looks like.

#[path = "../../fixture/src/lib.rs"]
pub mod fixture;
