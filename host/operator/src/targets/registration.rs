//! A target cluster's registration: a Secret in the clusters namespace, named after the
//! cluster, labelled `sigs.k8s.io/multicluster-runtime-kubeconfig=true`, with data key
//! `kubeconfig` and optional `namespaces` (comma-separated), as multicluster-runtime's
//! kubeconfig provider reads it.
//!
//! Whoever may write Secrets in the clusters namespace decides what the host connects to,
//! not what it runs or reads: a kubeconfig that would make the host run a command (`exec`,
//! `auth-provider`) or read a file of its own filesystem (`tokenFile`, certificate and key
//! paths) is refused, so only inline credentials and certificates are taken.

use k8s_openapi::api::core::v1::Secret;
use kube::config::{KubeConfigOptions, Kubeconfig};

/// The label that marks a registration Secret.
pub const REGISTRATION_LABEL: &str = "sigs.k8s.io/multicluster-runtime-kubeconfig";

/// The data key of the kubeconfig.
const KUBECONFIG_KEY: &str = "kubeconfig";

/// The data key of the namespace scope.
const NAMESPACES_KEY: &str = "namespaces";

/// A registration read from its Secret.
#[derive(Debug, Clone)]
pub(crate) struct Registration {
    /// The cluster's name (the Secret's).
    pub(crate) name: String,
    /// The Secret's resourceVersion: a changed Secret is engaged anew.
    pub(crate) version: String,
    pub(crate) kubeconfig: Kubeconfig,
    /// The namespaces the host's caches and calls are scoped to; `None`: all.
    pub(crate) namespaces: Option<Vec<String>>,
}

/// A registration Secret the host cannot use.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RegistrationError {
    #[error("registration Secret {secret}: data key {KUBECONFIG_KEY:?} is missing")]
    MissingKubeconfig { secret: String },
    #[error(
        "registration Secret {secret}: data key {KUBECONFIG_KEY:?} is not a kubeconfig: {reason}"
    )]
    Kubeconfig { secret: String, reason: String },
    #[error(
        "registration Secret {secret}: data key {KUBECONFIG_KEY:?}: {field} is refused (the host takes only inline credentials and certificates)"
    )]
    Refused { secret: String, field: String },
    #[error(
        "registration Secret {secret}: data key {NAMESPACES_KEY:?}: {value:?} is not a namespace name"
    )]
    Namespace { secret: String, value: String },
    #[error("target cluster {name:?}: {reason}")]
    Client { name: String, reason: String },
    #[error("registration Secret {secret} does not decode: {reason}")]
    Malformed { secret: String, reason: String },
}

impl Registration {
    /// Reads `secret`.
    pub(crate) fn of(secret: &Secret) -> Result<Self, RegistrationError> {
        let name = secret.metadata.name.clone().unwrap_or_default();
        let key = format!(
            "{}/{name}",
            secret.metadata.namespace.as_deref().unwrap_or_default()
        );
        let data = secret.data.as_ref();
        let text = data.and_then(|d| d.get(KUBECONFIG_KEY)).ok_or_else(|| {
            RegistrationError::MissingKubeconfig {
                secret: key.clone(),
            }
        })?;
        let text = std::str::from_utf8(&text.0).map_err(|e| RegistrationError::Kubeconfig {
            secret: key.clone(),
            reason: e.to_string(),
        })?;
        let kubeconfig =
            Kubeconfig::from_yaml(text).map_err(|e| RegistrationError::Kubeconfig {
                secret: key.clone(),
                // The parser's message names a position, never the document's content.
                reason: e.to_string(),
            })?;
        refuse_indirection(&kubeconfig, &key)?;
        let namespaces = match data.and_then(|d| d.get(NAMESPACES_KEY)) {
            None => None,
            Some(list) => Some(namespaces(&String::from_utf8_lossy(&list.0), &key)?),
        };
        Ok(Self {
            name,
            version: secret.metadata.resource_version.clone().unwrap_or_default(),
            kubeconfig,
            namespaces,
        })
    }

    /// A client of the target, from its kubeconfig's current context.
    pub(crate) async fn client(&self) -> Result<kube::Client, RegistrationError> {
        let failed = |reason: String| RegistrationError::Client {
            name: self.name.clone(),
            reason,
        };
        let config = kube::Config::from_custom_kubeconfig(
            self.kubeconfig.clone(),
            &KubeConfigOptions::default(),
        )
        .await
        .map_err(|e| failed(format!("its kubeconfig does not load: {e}")))?;
        kube::Client::try_from(config).map_err(|e| failed(format!("no client: {e}")))
    }
}

/// The comma-separated namespace list; empty entries are skipped, and an empty list means
/// every namespace.
fn namespaces(list: &str, secret: &str) -> Result<Vec<String>, RegistrationError> {
    let mut names = Vec::new();
    for value in list.split(',').map(str::trim).filter(|v| !v.is_empty()) {
        if !wasm_operator_types::is_dns_label(value) {
            return Err(RegistrationError::Namespace {
                secret: secret.to_owned(),
                value: value.to_owned(),
            });
        }
        names.push(value.to_owned());
    }
    names.sort();
    names.dedup();
    Ok(names)
}

fn refuse_indirection(kubeconfig: &Kubeconfig, secret: &str) -> Result<(), RegistrationError> {
    let refused = |field: String| RegistrationError::Refused {
        secret: secret.to_owned(),
        field,
    };
    for user in &kubeconfig.auth_infos {
        let Some(auth) = &user.auth_info else {
            continue;
        };
        let fields = [
            ("exec", auth.exec.is_some()),
            ("auth-provider", auth.auth_provider.is_some()),
            ("tokenFile", auth.token_file.is_some()),
            ("client-certificate", auth.client_certificate.is_some()),
            ("client-key", auth.client_key.is_some()),
        ];
        if let Some((field, _)) = fields.iter().find(|(_, set)| *set) {
            return Err(refused(format!("users[{}].user.{field}", user.name)));
        }
    }
    for cluster in &kubeconfig.clusters {
        if cluster
            .cluster
            .as_ref()
            .is_some_and(|c| c.certificate_authority.is_some())
        {
            return Err(refused(format!(
                "clusters[{}].cluster.certificate-authority",
                cluster.name
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;

    fn secret(kubeconfig: &str, namespaces: Option<&str>) -> Secret {
        let mut data = std::collections::BTreeMap::new();
        data.insert(KUBECONFIG_KEY.to_owned(), ByteString(kubeconfig.into()));
        if let Some(ns) = namespaces {
            data.insert(NAMESPACES_KEY.to_owned(), ByteString(ns.into()));
        }
        Secret {
            metadata: kube::api::ObjectMeta {
                name: Some("edge".into()),
                namespace: Some("c5c3-clusters".into()),
                resource_version: Some("7".into()),
                ..Default::default()
            },
            data: Some(data),
            ..Default::default()
        }
    }

    fn kubeconfig(user: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:6443\n\
             users:\n- name: u\n  user:\n{user}\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n\
             current-context: x\n"
        )
    }

    #[test]
    fn a_registration_reads_its_name_version_and_namespace_scope() {
        let r = Registration::of(&secret(&kubeconfig("    token: t"), Some("b, a,,a"))).unwrap();
        assert_eq!(r.name, "edge");
        assert_eq!(r.version, "7");
        assert_eq!(r.namespaces, Some(vec!["a".to_owned(), "b".to_owned()]));
        let all = Registration::of(&secret(&kubeconfig("    token: t"), None)).unwrap();
        assert_eq!(all.namespaces, None);
    }

    #[test]
    fn a_registration_that_would_run_a_command_or_read_a_file_is_refused_naming_the_field() {
        for (user, field) in [
            (
                "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh",
                "users[u].user.exec",
            ),
            (
                "    tokenFile: /var/run/secrets/token",
                "users[u].user.tokenFile",
            ),
            (
                "    client-certificate: /etc/cert.pem",
                "users[u].user.client-certificate",
            ),
            ("    client-key: /etc/key.pem", "users[u].user.client-key"),
            ("    token: t", ""),
        ] {
            let result = Registration::of(&secret(&kubeconfig(user), None));
            match (result, field) {
                (Ok(_), "") => {}
                (Err(e), field) if !field.is_empty() => {
                    let message = e.to_string();
                    assert!(
                        message.contains(field) && message.contains("c5c3-clusters/edge"),
                        "{message}"
                    );
                }
                (other, field) => panic!("{field:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_registration_without_a_kubeconfig_or_with_a_bad_namespace_is_refused() {
        let mut missing = secret("", None);
        missing.data = Some(Default::default());
        let e = Registration::of(&missing).unwrap_err().to_string();
        assert!(e.contains("data key \"kubeconfig\" is missing"), "{e}");
        let e = Registration::of(&secret(&kubeconfig("    token: t"), Some("ok,Not_A_Name")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"Not_A_Name\" is not a namespace name"), "{e}");
        let e = Registration::of(&secret("clusters: [", None))
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not a kubeconfig"), "{e}");
    }
}
