//! `image`: a container image by tag or by digest.

use serde::{Deserialize, Serialize};

/// A container image reference: exactly one of `tag` or `digest`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(extend("x-kubernetes-validations" = [
    {"rule": "has(self.tag) != has(self.digest)",
     "message": "exactly one of image.tag or image.digest must be set"}])))]
pub struct ImageSpec {
    /// The OCI image repository, optionally with the registry host
    /// (`ghcr.io/c5c3/keystone`).
    #[cfg_attr(
        feature = "schemars",
        schemars(length(min = 1), regex(pattern = r"^[a-z0-9]+([._:/-][a-z0-9]+)*$"))
    )]
    pub repository: String,
    /// The image tag (`2025.2`); it names the OpenStack release the reconciler tracks.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(
        feature = "schemars",
        schemars(regex(pattern = r"^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$"))
    )]
    pub tag: String,
    /// The image's content digest (`sha256:` and 64 hex digits); pinning by digest turns
    /// release tracking and upgrades off.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(
        feature = "schemars",
        schemars(regex(pattern = r"^sha256:[a-f0-9]{64}$"))
    )]
    pub digest: String,
}

impl ImageSpec {
    /// `repository@digest` when a digest is pinned, else `repository:tag`.
    pub fn reference(&self) -> String {
        if self.digest.is_empty() {
            format!("{}:{}", self.repository, self.tag)
        } else {
            format!("{}@{}", self.repository, self.digest)
        }
    }

    /// The same repository at another tag (an upgrade Job's image).
    pub fn at_tag(&self, tag: &str) -> String {
        format!("{}:{tag}", self.repository)
    }
}
