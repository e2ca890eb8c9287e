//! A plugin's OCI reference, as `plugins.toml` and `plugin push` take it:
//! `oci://REGISTRY/REPOSITORY:TAG`, `oci://REGISTRY/REPOSITORY@sha256:DIGEST`, or both (the
//! digest wins). The registry host is always named (no implicit Docker Hub) and so is a
//! tag or a digest (no implicit `latest`): what a plugin runs is never a default.

use std::fmt;
use std::str::FromStr;

/// The scheme every OCI source starts with.
pub(crate) const SCHEME: &str = "oci://";

/// A parsed OCI reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciRef {
    inner: oci_client::Reference,
}

impl OciRef {
    /// The registry's host (and port).
    pub fn registry(&self) -> &str {
        self.inner.registry()
    }

    /// The manifest digest it pins, if it does.
    pub fn digest(&self) -> Option<&str> {
        self.inner.digest()
    }

    /// The same reference pinned to `digest` (the tag dropped).
    pub fn pinned(&self, digest: &str) -> OciRef {
        OciRef {
            inner: oci_client::Reference::with_digest(
                self.inner.registry().to_owned(),
                self.inner.repository().to_owned(),
                digest.to_owned(),
            ),
        }
    }

    pub(crate) fn as_client_ref(&self) -> &oci_client::Reference {
        &self.inner
    }
}

/// Why a text is not an OCI reference.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum OciRefError {
    #[error("{0:?} does not start with {SCHEME}")]
    Scheme(String),
    #[error("{0:?} names no registry host: write it out, e.g. oci://ghcr.io/org/plugin:1.0")]
    NoRegistry(String),
    #[error("{0:?} names no tag and no digest: add :TAG or @sha256:DIGEST")]
    NoVersion(String),
    #[error("{text:?} is not an OCI reference: {reason}")]
    Invalid { text: String, reason: String },
}

impl FromStr for OciRef {
    type Err = OciRefError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let rest = text
            .strip_prefix(SCHEME)
            .ok_or_else(|| OciRefError::Scheme(text.to_owned()))?;
        let (host, path) = rest
            .split_once('/')
            .ok_or_else(|| OciRefError::NoRegistry(text.to_owned()))?;
        // A registry host has a dot or a port, or is localhost (docker's rule); anything else
        // would be read as a Docker Hub repository.
        if !(host.contains(['.', ':']) || host == "localhost") {
            return Err(OciRefError::NoRegistry(text.to_owned()));
        }
        let last = path.rsplit('/').next().unwrap_or(path);
        if !last.contains([':', '@']) {
            return Err(OciRefError::NoVersion(text.to_owned()));
        }
        let inner = oci_client::Reference::from_str(rest).map_err(|e| OciRefError::Invalid {
            text: text.to_owned(),
            reason: e.to_string(),
        })?;
        Ok(OciRef { inner })
    }
}

impl fmt::Display for OciRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}", self.inner.whole())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_oci_reference_names_its_registry_and_a_version() {
        let digest = format!("sha256:{}", "a".repeat(64));
        let pinned: OciRef = format!("oci://127.0.0.1:5000/plugins/keystone@{digest}")
            .parse()
            .expect("a digest reference");
        assert_eq!(pinned.registry(), "127.0.0.1:5000");
        assert_eq!(pinned.digest(), Some(digest.as_str()));
        let tagged: OciRef = "oci://ghcr.io/org/keystone:1.2".parse().expect("a tag");
        assert_eq!(tagged.to_string(), "oci://ghcr.io/org/keystone:1.2");
        assert_eq!(
            tagged.pinned(&digest).to_string(),
            format!("oci://ghcr.io/org/keystone@{digest}")
        );
        type Expected = fn(String) -> OciRefError;
        let cases: [(&str, Expected); 4] = [
            ("ghcr.io/org/keystone:1.2", OciRefError::Scheme),
            ("oci://org/keystone:1.2", OciRefError::NoRegistry),
            ("oci://keystone", OciRefError::NoRegistry),
            ("oci://ghcr.io/org/keystone", OciRefError::NoVersion),
        ];
        for (text, error) in cases {
            assert_eq!(
                text.parse::<OciRef>(),
                Err(error(text.to_owned())),
                "{text}"
            );
        }
        let bad = "oci://ghcr.io/Org/keystone:1.2".parse::<OciRef>();
        assert!(
            matches!(&bad, Err(OciRefError::Invalid { reason, .. }) if reason == "invalid reference format"),
            "{bad:?}"
        );
    }
}
