//! What immutable ConfigMaps and Secrets share: the content hash in their names, their
//! metadata (the [`CONFIG_BASE_LABEL`] and the controller reference).
//!
//! The hash is SHA-256 over the entries, keys sorted, each written as
//! `<len(key)>:<key>=<len(value)>:<value>\n` (lengths in bytes), so that entries delimit
//! themselves whatever they contain; the name carries its first 8 hex characters:
//! `<base_name>-<hash>`. A ConfigMap and a Secret of the same entries get the same hash.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use sha2::{Digest, Sha256};

use crate::blocks::apply::controller_reference;
use crate::cluster::Owner;

/// The label naming the base name an immutable ConfigMap or Secret was created for.
pub const CONFIG_BASE_LABEL: &str = "cobaltcore.c5c3.io/config-base";

/// How many hex characters of the SHA-256 the name carries.
const HASH_LEN: usize = 8;

/// The content hash of `entries`, which must come sorted by key (a `BTreeMap`'s order).
pub(crate) fn hash_entries<'a>(entries: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> String {
    let mut hasher = Sha256::new();
    for (key, value) in entries {
        hasher.update(format!("{}:{key}={}:", key.len(), value.len()));
        hasher.update(value);
        hasher.update(b"\n");
    }
    let mut hash = hex::encode(hasher.finalize());
    hash.truncate(HASH_LEN);
    hash
}

/// `<base_name>-<hash>`.
pub(crate) fn name_for(base_name: &str, hash: &str) -> String {
    format!("{base_name}-{hash}")
}

/// The metadata of the immutable object `name`: namespace, the [`CONFIG_BASE_LABEL`] of
/// `base_name`, and `owner` as controller.
pub(crate) fn metadata(
    owner: &Owner,
    base_name: &str,
    name: String,
    namespace: &str,
) -> ObjectMeta {
    ObjectMeta {
        name: Some(name),
        namespace: Some(namespace.to_owned()),
        labels: Some(BTreeMap::from([(
            CONFIG_BASE_LABEL.to_owned(),
            base_name.to_owned(),
        )])),
        owner_references: Some(vec![controller_reference(owner)]),
        ..Default::default()
    }
}
