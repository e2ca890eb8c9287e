//! Why a pass failed: the SDK's service-parent error, whose every variant names what the
//! pass was doing.

pub(crate) use wasm_operator_sdk::blocks::service::Error;
