//! The union and the modes (CobaltCore's webhook, the twins of the schema's CEL rules),
//! each naming the path to change:
//!
//! | Rule | Field | Message |
//! |---|---|---|
//! | exactly the block `type` names | `spec.openBao` | exactly one store block matching spec.type must be set (type OpenBao requires spec.openBao) |
//! | exactly one of instanceRef, server | `spec.openBao` | exactly one of instanceRef or server must be set |
//! | a server URL is `https://` | `spec.openBao.server.url` | url must use the https:// scheme: the AppRole credentials and every stored secret travel it |
//! | managed: kvMountpoint `barbican` | `spec.openBao.kvMountpoint` | a managed store (instanceRef) must keep kvMountpoint "barbican": the self-init contract provisions only that mount |
//! | managed: no namespace | `spec.openBao.namespace` | a managed store (instanceRef) must leave namespace unset: the self-init contract provisions at the root namespace |

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;

use crate::types::{BarbicanSecretStoreSpec, DEFAULT_KV_MOUNTPOINT, StoreType};

/// Checks the union and the modes.
pub(super) fn check(spec: &BarbicanSecretStoreSpec, errors: &mut FieldErrors) {
    if (spec.type_ == StoreType::OpenBao) != spec.open_bao.is_some() {
        errors.invalid(
            "spec.openBao",
            &json!(spec.type_.as_str()),
            "exactly one store block matching spec.type must be set (type OpenBao requires spec.openBao)",
        );
    }
    let Some(open_bao) = &spec.open_bao else {
        return;
    };
    if open_bao.instance_ref.is_some() == open_bao.server.is_some() {
        errors.invalid(
            "spec.openBao",
            &json!("object"),
            "exactly one of instanceRef or server must be set",
        );
    }
    if let Some(server) = &open_bao.server
        && !server.url.starts_with("https://")
    {
        errors.invalid(
            "spec.openBao.server.url",
            &json!(server.url),
            "url must use the https:// scheme: the AppRole credentials and every stored secret travel it",
        );
    }
    if open_bao.instance_ref.is_some() {
        if open_bao.kv_mountpoint != DEFAULT_KV_MOUNTPOINT {
            errors.invalid(
                "spec.openBao.kvMountpoint",
                &json!(open_bao.kv_mountpoint),
                &format!(
                    "a managed store (instanceRef) must keep kvMountpoint {DEFAULT_KV_MOUNTPOINT:?}: the self-init contract provisions only that mount"
                ),
            );
        }
        if !open_bao.namespace.is_empty() {
            errors.invalid(
                "spec.openBao.namespace",
                &json!(open_bao.namespace),
                "a managed store (instanceRef) must leave namespace unset: the self-init contract provisions at the root namespace",
            );
        }
    }
}
