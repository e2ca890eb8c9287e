//! Issuers and ClusterIssuers: readiness, and the signer each offers its Certificates.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use kube::Client;
use serde_json::{Value, json};

use super::x509::{self, Key};
use super::{CLUSTER_ISSUER, CLUSTER_RESOURCE_NAMESPACE, ISSUER};
use crate::actors::Actor;
use crate::actors::kit::{self, Condition};

/// What an issuer signs with.
pub(crate) enum Signing {
    SelfSigned,
    Ca {
        certificate: Box<x509_cert::Certificate>,
        /// The CA's certificate as PEM, and the chain's root (`ca.crt` of the CA Secret, or
        /// the CA certificate itself).
        certificate_pem: String,
        root_pem: String,
        key: Box<Key>,
    },
}

/// Every issuer of the cluster, by (kind, namespace or "", name): how it signs, or why
/// it cannot.
#[derive(Default)]
pub(crate) struct Issuers {
    by_name: BTreeMap<(String, String, String), Result<Arc<Signing>, String>>,
}

impl Issuers {
    /// The issuer `kind`/`name` a Certificate in `namespace` refers to.
    pub(crate) fn get(
        &self,
        kind: &str,
        name: &str,
        namespace: &str,
    ) -> Result<Arc<Signing>, String> {
        let scope = if kind == "ClusterIssuer" {
            ""
        } else {
            namespace
        };
        self.by_name
            .get(&(kind.to_owned(), scope.to_owned(), name.to_owned()))
            .cloned()
            .unwrap_or_else(|| Err(format!("{kind} {name:?} not found")))
    }
}

/// Sets every issuer's status and returns what each signs with.
pub(crate) async fn reconcile(client: &Client) -> Result<Issuers, kube::Error> {
    let mut issuers = Issuers::default();
    for (kind, manager) in [
        (ISSUER, "cert-manager-issuers"),
        (CLUSTER_ISSUER, "cert-manager-clusterissuers"),
    ] {
        for issuer in kind.list(client).await? {
            let (namespace, name) = kit::namespace_name(&issuer);
            let secret_namespace = namespace
                .clone()
                .unwrap_or_else(|| CLUSTER_RESOURCE_NAMESPACE.to_owned());
            let verdict = match kit::not_ready_toggle(&issuer) {
                Some(message) => Err(("NotReady", message)),
                None => signing(client, &issuer, &secret_namespace).await,
            };
            let condition = match &verdict {
                Ok(Signing::SelfSigned) => Condition::new("Ready", true, "IsReady", ""),
                Ok(Signing::Ca { .. }) => {
                    Condition::new("Ready", true, "KeyPairVerified", "Signing CA verified")
                }
                Err((reason, message)) => Condition::new("Ready", false, *reason, message.clone()),
            };
            let status = json!({"conditions": kit::conditions(&issuer, &[condition], true)});
            if let Err(error) = kit::apply_status(client, &kind, &issuer, manager, status).await {
                tracing::warn!(actor = %Actor::CertManager, kind = kind.kind, %name, %error, "writing the issuer status failed");
            }
            let scope = namespace.unwrap_or_default();
            issuers.by_name.insert(
                (kind.kind.to_owned(), scope, name.clone()),
                verdict.map(Arc::new).map_err(|(_, message)| {
                    format!("{} {name:?} is not ready: {message}", kind.kind)
                }),
            );
        }
    }
    Ok(issuers)
}

/// How an issuer signs, or the (reason, message) of its `Ready=False`.
async fn signing(
    client: &Client,
    issuer: &Value,
    namespace: &str,
) -> Result<Signing, (&'static str, String)> {
    if issuer.pointer("/spec/selfSigned").is_some() {
        return Ok(Signing::SelfSigned);
    }
    let Some(secret_name) = kit::str_at(issuer, "/spec/ca/secretName") else {
        return Err((
            "ErrInitIssuer",
            "the embedded cluster's cert-manager serves selfSigned and ca issuers only".into(),
        ));
    };
    let get_failed = |detail: String| {
        (
            "ErrGetKeyPair",
            format!("Error getting keypair for CA issuer: {detail}"),
        )
    };
    let invalid = |detail: String| {
        (
            "ErrInvalidKeyPair",
            format!("Error getting keypair for CA issuer: {detail}"),
        )
    };
    let secret = kit::SECRET
        .api(client, Some(namespace))
        .get_opt(secret_name)
        .await
        .map_err(|e| get_failed(e.to_string()))?
        .ok_or_else(|| get_failed(format!("secrets {secret_name:?} not found")))?;
    let secret = serde_json::to_value(&secret).unwrap_or_default();
    let field = |key: &str| {
        kit::str_at(&secret, &format!("/data/{key}"))
            .and_then(|b| STANDARD.decode(b).ok())
            .and_then(|b| String::from_utf8(b).ok())
    };
    let certificate_pem =
        field("tls.crt").ok_or_else(|| invalid("the secret has no tls.crt".into()))?;
    let key_pem = field("tls.key").ok_or_else(|| invalid("the secret has no tls.key".into()))?;
    let certificate =
        x509::parse_certificate(&certificate_pem).map_err(|e| invalid(format!("tls.crt: {e}")))?;
    let key = Key::from_pem(&key_pem).map_err(|e| invalid(format!("tls.key: {e}")))?;
    if !x509::key_matches(&key, &certificate) {
        return Err(invalid("tls.key does not match tls.crt".into()));
    }
    let root_pem = field("ca.crt").unwrap_or_else(|| certificate_pem.clone());
    Ok(Signing::Ca {
        certificate: Box::new(certificate),
        certificate_pem,
        root_pem,
        key: Box::new(key),
    })
}
