//! Registry credentials from a docker config JSON (`~/.docker/config.json`, or the
//! `.dockerconfigjson` key of a `kubernetes.io/dockerconfigjson` Secret mounted as a file):
//! `{"auths": {"REGISTRY": {"auth": base64("USER:PASSWORD")}}}`, or `username` and
//! `password`, or `registrytoken` (a bearer token). An entry's key may carry a scheme and a
//! path (`https://index.docker.io/v1/`): only its host and port are matched.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine;
use oci_client::secrets::RegistryAuth;
use serde::Deserialize;

/// The credentials of each registry.
#[derive(Default)]
pub struct Credentials {
    by_registry: BTreeMap<String, RegistryAuth>,
}

/// Why a docker config JSON cannot be used; never carries a secret.
#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    #[error("cannot read the registry credentials {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("the registry credentials {path} are not a docker config JSON: {reason}")]
    Parse { path: String, reason: String },
    #[error("the registry credentials {path}, auths[{registry:?}]: {reason}")]
    Entry {
        path: String,
        registry: String,
        reason: &'static str,
    },
}

#[derive(Deserialize)]
struct DockerConfig {
    #[serde(default)]
    auths: BTreeMap<String, Entry>,
}

#[derive(Deserialize)]
struct Entry {
    auth: Option<String>,
    username: Option<String>,
    password: Option<String>,
    registrytoken: Option<String>,
    identitytoken: Option<String>,
}

impl Credentials {
    /// Reads a docker config JSON.
    pub fn read(path: &Path) -> Result<Self, CredentialsError> {
        let shown = path.display().to_string();
        let text = std::fs::read(path).map_err(|source| CredentialsError::Read {
            path: shown.clone(),
            source,
        })?;
        Self::parse(&text, &shown)
    }

    fn parse(text: &[u8], path: &str) -> Result<Self, CredentialsError> {
        // serde_json's message names a line and column, never the text around it.
        let config: DockerConfig =
            serde_json::from_slice(text).map_err(|e| CredentialsError::Parse {
                path: path.to_owned(),
                reason: e.to_string(),
            })?;
        let mut by_registry = BTreeMap::new();
        for (key, entry) in config.auths {
            let error = |reason| CredentialsError::Entry {
                path: path.to_owned(),
                registry: key.clone(),
                reason,
            };
            let auth = match entry {
                Entry {
                    registrytoken: Some(token),
                    ..
                } => RegistryAuth::Bearer(token),
                Entry {
                    username: Some(user),
                    password: Some(password),
                    ..
                } => RegistryAuth::Basic(user, password),
                Entry {
                    auth: Some(auth), ..
                } => {
                    let decoded = base64::engine::general_purpose::STANDARD
                        .decode(auth.trim())
                        .map_err(|_| error("`auth` is not base64"))?;
                    let decoded =
                        String::from_utf8(decoded).map_err(|_| error("`auth` is not UTF-8"))?;
                    let (user, password) = decoded
                        .split_once(':')
                        .ok_or_else(|| error("`auth` is not base64 of USER:PASSWORD"))?;
                    RegistryAuth::Basic(user.to_owned(), password.to_owned())
                }
                Entry {
                    identitytoken: Some(_),
                    ..
                } => {
                    return Err(error(
                        "an `identitytoken` (an OAuth refresh token) is not supported: use `auth` or `registrytoken`",
                    ));
                }
                _ => {
                    return Err(error(
                        "has no `auth`, `username` and `password`, or `registrytoken`",
                    ));
                }
            };
            by_registry.insert(registry_host(&key).to_owned(), auth);
        }
        Ok(Credentials { by_registry })
    }

    /// The credentials for `registry` (host and port); anonymous when there are none.
    pub fn for_registry(&self, registry: &str) -> RegistryAuth {
        let docker_hub = ["docker.io", "index.docker.io", "registry-1.docker.io"];
        let found = self.by_registry.get(registry).or_else(|| {
            docker_hub
                .contains(&registry)
                .then(|| docker_hub.iter().find_map(|h| self.by_registry.get(*h)))
                .flatten()
        });
        found.cloned().unwrap_or(RegistryAuth::Anonymous)
    }
}

/// The host and port of an `auths` key: `https://host:port/v1/` → `host:port`.
fn registry_host(key: &str) -> &str {
    let rest = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    rest.split('/').next().unwrap_or(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basic(auth: &RegistryAuth) -> Option<(&str, &str)> {
        match auth {
            RegistryAuth::Basic(u, p) => Some((u, p)),
            _ => None,
        }
    }

    #[test]
    fn registry_credentials_come_from_a_docker_config_json() {
        let text = br#"{"auths": {
            "127.0.0.1:5000": {"auth": "cGx1Z2luczpzM2NyZXQ="},
            "https://index.docker.io/v1/": {"username": "u", "password": "p"},
            "ghcr.io": {"registrytoken": "t0ken"}
        }}"#;
        let credentials = Credentials::parse(text, "config.json").expect("valid");
        let local = credentials.for_registry("127.0.0.1:5000");
        assert_eq!(basic(&local), Some(("plugins", "s3cret")));
        assert_eq!(
            basic(&credentials.for_registry("docker.io")),
            Some(("u", "p"))
        );
        assert!(
            matches!(credentials.for_registry("ghcr.io"), RegistryAuth::Bearer(t) if t == "t0ken")
        );
        assert!(matches!(
            credentials.for_registry("quay.io"),
            RegistryAuth::Anonymous
        ));
    }

    #[test]
    fn a_docker_config_json_that_cannot_be_used_is_refused_by_entry() {
        let cases = [
            (
                r#"{"auths": {"r.io": {"auth": "not base64!"}}}"#,
                "auths[\"r.io\"]: `auth` is not base64",
            ),
            (
                r#"{"auths": {"r.io": {"auth": "bm9jb2xvbg=="}}}"#,
                "`auth` is not base64 of USER:PASSWORD",
            ),
            (
                r#"{"auths": {"r.io": {"identitytoken": "x"}}}"#,
                "`identitytoken` (an OAuth refresh token) is not supported",
            ),
            (r#"{"auths": {"r.io": {}}}"#, "has no `auth`"),
            (
                r#"{"auths": ["#,
                "not a docker config JSON: invalid type: sequence, expected a map at line 1",
            ),
        ];
        for (text, expected) in cases {
            let error = Credentials::parse(text.as_bytes(), "config.json")
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(error.contains(expected), "{text}: {error}");
            assert!(
                error.starts_with("the registry credentials config.json"),
                "{error}"
            );
        }
        assert!(Credentials::parse(br#"{"auths": {"r.io": {"auth": "dTpw"}}}"#, "c").is_ok());
    }
}
