//! Reads, and how a pass knows they are current.
//!
//! Reads come from the cache. Before a pass writes or reports a Secret it reads it again
//! past the cache ([`read_secrets`] with [`ReadFrom::Server`]) and plans again when it
//! changed ([`changed`]). Before its first write, and before it skips a status update that
//! would change nothing, it checks that the cached GitLabSecrets is current
//! ([`primary_is_current`]); when it is not, the pass requeues after [`STALE_REQUEUE`].

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use serde_json::Value;
use wasm_operator_sdk::{ObjectRef, ReadFrom};

use crate::error::{Error, Result};
use crate::pass::Pass;
use crate::types::GitLabSecrets;

/// How long a pass that found a stale cache, or a conflicting status update, waits.
pub const STALE_REQUEUE: Duration = Duration::from_secs(1);

/// Reads `names`, in order; on failure the index of the Secret that failed and why.
pub fn read_secrets(
    pass: &Pass<'_>,
    names: &[&str],
    from: ReadFrom,
) -> Result<Vec<Option<Value>>, (usize, Error)> {
    names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let object = ObjectRef::of::<Secret>(pass.namespace.as_deref(), name);
            pass.cluster.get(&object, from).map_err(|source| {
                (
                    i,
                    Error::ReadSecret {
                        secret: (*name).to_owned(),
                        source,
                    },
                )
            })
        })
        .collect()
}

/// Whether a Secret changed between two reads: it appeared, went, or has another
/// resourceVersion.
pub fn changed(before: &Option<Value>, after: &Option<Value>) -> bool {
    match (before, after) {
        (None, None) => false,
        (Some(a), Some(b)) => resource_version(a) != resource_version(b),
        _ => true,
    }
}

/// The metadata.resourceVersion of an object.
pub fn resource_version(object: &Value) -> Option<&str> {
    object
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
}

/// Whether the cached GitLabSecrets is the one the server holds (same resourceVersion).
/// Remembered for the rest of the pass once it is.
pub fn primary_is_current(pass: &mut Pass<'_>) -> Result<bool> {
    let object = ObjectRef::of::<GitLabSecrets>(pass.namespace.as_deref(), &pass.name);
    let server = pass
        .cluster
        .get(&object, ReadFrom::Server)
        .map_err(|source| Error::ReadPrimary {
            object: pass.key(),
            source,
        })?;
    let current = server.as_ref().and_then(resource_version)
        == pass.primary.metadata.resource_version.as_deref()
        && server.is_some();
    pass.primary_current = current;
    Ok(current)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_secret_changed_when_it_appeared_went_or_has_another_version() {
        let v = |rv: &str| Some(json!({"metadata": {"resourceVersion": rv}}));
        assert!(!changed(&None, &None));
        assert!(!changed(&v("1"), &v("1")));
        assert!(changed(&v("1"), &v("2")));
        assert!(changed(&None, &v("1")));
        assert!(changed(&v("1"), &None));
    }
}
