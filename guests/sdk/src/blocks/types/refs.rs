//! References to other objects.

use serde::{Deserialize, Serialize};

/// A reference to an object in the same namespace, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct LocalObjectReference {
    /// The object's name.
    #[serde(default)]
    pub name: String,
}

/// A reference to a Secret.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct SecretRefSpec {
    /// The Secret's name.
    #[cfg_attr(
        feature = "schemars",
        schemars(length(min = 1), regex(pattern = super::DNS1123_SUBDOMAIN))
    )]
    pub name: String,
    /// A data key, where the consumer reads one the user picks.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub key: String,
}

/// The cluster a CR's children live on, by the name of its target-cluster reference.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct TargetClusterRefSpec {
    /// The target cluster's name.
    #[cfg_attr(
        feature = "schemars",
        schemars(length(min = 1), regex(pattern = super::DNS1123_SUBDOMAIN))
    )]
    pub name: String,
}
