//! kube-controller-manager's ServiceAccount controller: every namespace that is not being
//! deleted has a ServiceAccount named `default`, made when the namespace appears and made
//! again when deleted. Run by the lifecycle task (see [`crate::lifecycle`]).

use serde_json::{Value, json};

use crate::objects::{is_deleting, new_uid, now};
use crate::server::State;
use crate::store::StoreKey;

/// The ServiceAccount every namespace has.
const DEFAULT: &str = "default";

/// Whether a write of `object` may leave a namespace without its default ServiceAccount: a
/// namespace was written. (Removals always wake the controllers.)
pub(crate) fn concerns(object: &Value) -> bool {
    object["apiVersion"] == "v1" && object["kind"] == "Namespace"
}

/// Makes the missing default ServiceAccounts; whether any was made.
pub(crate) fn ensure_defaults(state: &mut State) -> bool {
    let missing: Vec<String> = state
        .store
        .list("", "namespaces", None)
        .filter(|(_, object)| !is_deleting(object))
        .map(|(key, _)| key.name.clone())
        .filter(|namespace| state.store.get(&account_key(namespace)).is_none())
        .collect();
    let mut made = false;
    for namespace in missing {
        let account = json!({
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {
                "name": DEFAULT,
                "namespace": namespace,
                "uid": new_uid(),
                "creationTimestamp": now(),
            },
        });
        match state.store.put(account_key(&namespace), account) {
            Ok(_) => made = true,
            Err(error) => {
                tracing::error!(%error, %namespace, "cannot store the default ServiceAccount")
            }
        }
    }
    made
}

fn account_key(namespace: &str) -> StoreKey {
    StoreKey {
        group: String::new(),
        plural: "serviceaccounts".into(),
        namespace: namespace.to_owned(),
        name: DEFAULT.to_owned(),
    }
}
