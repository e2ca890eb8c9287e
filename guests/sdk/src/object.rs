//! References to objects and kinds, and how to read them off objects: the shared types of
//! `wasm-operator-types`.

pub use wasm_operator_types::object::{KindRef, ObjectRef, object_key, split_api_version};
