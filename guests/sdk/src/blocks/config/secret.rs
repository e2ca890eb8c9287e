//! Immutable Secrets named by a hash of their content (CreateImmutableSecret; facts §2.6
//! items 5–6, §3.0): the Secret twin of [`super::configmap`], with the same hash, name
//! and label (see [`super::immutable`]), used for the projections a Deployment mounts
//! (Keystone's domains and federation Secrets, the satellites' parents' config).
//!
//! A Secret already stored under the computed name is accepted only when it is the one
//! this owner would have created: controlled by the owner, immutable, and holding exactly
//! the same data. Anything else there — another owner's Secret, one whose owner reference
//! was forged, a mutable one, a hash collision — is refused with an error instead of
//! being mounted as this owner's projection. (CobaltCore checks the controller; the data
//! and immutability checks are this SDK's, and cost nothing on the normal path: the name
//! is a hash of the data.)

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;

use super::immutable;
use crate::blocks::apply::is_controlled_by;
use crate::cluster::{Cluster, ClusterExt, Owner, ReadFrom};
use crate::error::ApiError;

/// Why creating an immutable Secret failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The API server refused the create for a reason other than AlreadyExists.
    #[error("creating Secret {namespace}/{name}: {source}")]
    Create {
        namespace: String,
        name: String,
        #[source]
        source: crate::Error,
    },
    /// Reading the Secret that already exists under the name failed.
    #[error("reading the existing Secret {namespace}/{name}: {source}")]
    ReadExisting {
        namespace: String,
        name: String,
        #[source]
        source: crate::Error,
    },
    /// A Secret under the name exists and `owner` does not control it.
    #[error("Secret {namespace}/{name} already exists and is not controlled by {owner}")]
    NotControlled {
        namespace: String,
        name: String,
        /// `<Kind> <name>` of the owner.
        owner: String,
    },
    /// A Secret under the name exists, controlled by the owner, but is not the immutable
    /// Secret of this data.
    #[error("Secret {namespace}/{name} already exists but does not hold this data immutably")]
    OtherContent { namespace: String, name: String },
}

/// The first 8 hex characters of the SHA-256 over `data` (see [`super::immutable`]).
pub fn secret_content_hash(data: &BTreeMap<String, ByteString>) -> String {
    immutable::hash_entries(data.iter().map(|(k, v)| (k.as_str(), v.0.as_slice())))
}

/// The name of the immutable Secret for `data`: `<base_name>-<hash>`.
pub fn immutable_secret_name(base_name: &str, data: &BTreeMap<String, ByteString>) -> String {
    immutable::name_for(base_name, &secret_content_hash(data))
}

/// The Secret [`create_immutable_secret`] creates: Opaque, immutable, labelled with its
/// base name and controlled by `owner`.
pub fn immutable_secret(
    owner: &Owner,
    base_name: &str,
    namespace: &str,
    data: &BTreeMap<String, ByteString>,
) -> Secret {
    Secret {
        metadata: immutable::metadata(
            owner,
            base_name,
            immutable_secret_name(base_name, data),
            namespace,
        ),
        data: Some(data.clone()),
        immutable: Some(true),
        type_: Some("Opaque".to_owned()),
        ..Default::default()
    }
}

/// Creates the immutable Secret `<base_name>-<hash>` holding `data`, controlled by `owner`
/// and labelled with its base name, and returns its name. One the cache holds, controlled
/// by `owner` and holding `data` immutably, is success without a request (a converged pass
/// writes nothing). Otherwise it is created; one that already exists is success only when
/// `owner` controls it and it holds `data` immutably (read past the cache); otherwise
/// [`Error::NotControlled`] or [`Error::OtherContent`].
pub fn create_immutable_secret<C: Cluster + ?Sized>(
    cluster: &C,
    owner: &Owner,
    base_name: &str,
    namespace: &str,
    data: &BTreeMap<String, ByteString>,
) -> Result<String, Error> {
    let secret = immutable_secret(owner, base_name, namespace, data);
    let name = immutable_secret_name(base_name, data);
    let cached: Option<Secret> = cluster
        .get_typed_from(Some(namespace), &name, ReadFrom::Cache)
        .unwrap_or_default();
    if cached.is_some_and(|c| {
        is_controlled_by(&c.metadata, &owner.uid)
            && c.immutable == Some(true)
            && c.data.as_ref() == Some(data)
    }) {
        return Ok(name);
    }
    let conflict = match cluster.create_typed(&secret) {
        Ok(_) => return Ok(name),
        Err(crate::Error::Api(ApiError::Conflict(message))) => message,
        Err(source) => {
            return Err(Error::Create {
                namespace: namespace.to_owned(),
                name,
                source,
            });
        }
    };
    let existing: Option<Secret> = cluster
        .get_typed_from(Some(namespace), &name, ReadFrom::Server)
        .map_err(|source| Error::ReadExisting {
            namespace: namespace.to_owned(),
            name: name.clone(),
            source,
        })?;
    let Some(existing) = existing else {
        // Deleted between the create and the read: the create's answer stands.
        return Err(Error::Create {
            namespace: namespace.to_owned(),
            name,
            source: ApiError::Conflict(conflict).into(),
        });
    };
    if !is_controlled_by(&existing.metadata, &owner.uid) {
        return Err(Error::NotControlled {
            namespace: namespace.to_owned(),
            name,
            owner: format!("{} {}", owner.kind, owner.name),
        });
    }
    let same_data = existing.data.unwrap_or_default() == *data;
    if !same_data || existing.immutable != Some(true) {
        return Err(Error::OtherContent {
            namespace: namespace.to_owned(),
            name,
        });
    }
    Ok(name)
}

#[cfg(test)]
#[path = "secret_tests.rs"]
mod tests;
