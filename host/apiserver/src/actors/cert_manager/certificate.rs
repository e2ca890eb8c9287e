//! Certificates: issuing the Secret and reporting readiness.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use kube::Client;
use kube::api::{Patch, PatchParams};
use serde_json::{Map, Value, json};

use super::CERTIFICATE;
use super::issuers::{Issuers, Signing};
use super::x509::{self, Key, Request, Signer};
use crate::actors::Actor;
use crate::actors::kit::{self, Condition};

const ISSUING_MANAGER: &str = "cert-manager-certificates-issuing";
const READINESS_MANAGER: &str = "cert-manager-certificates-readiness";
/// cert-manager's default `spec.duration`: 90 days.
const DEFAULT_DURATION: Duration = Duration::from_secs(2160 * 3600);

/// Reconciles every Certificate.
pub(crate) async fn reconcile_all(client: &Client, issuers: &Issuers) -> Result<(), kube::Error> {
    for certificate in CERTIFICATE.list(client).await? {
        if kit::is_deleting(&certificate) {
            continue;
        }
        let (namespace, name) = kit::namespace_name(&certificate);
        let namespace = namespace.unwrap_or_default();
        if let Err(error) = reconcile(client, issuers, &certificate, &namespace).await {
            tracing::warn!(actor = %Actor::CertManager, %namespace, %name, %error, "reconciling the Certificate failed");
        }
    }
    Ok(())
}

/// The issuer a Certificate names: (kind, name, group).
fn issuer_ref(spec: &Value) -> (String, String, String) {
    let part = |k: &str, default: &str| {
        kit::str_at(spec, &format!("/issuerRef/{k}"))
            .filter(|v| !v.is_empty())
            .unwrap_or(default)
            .to_owned()
    };
    (
        part("kind", "Issuer"),
        part("name", ""),
        part("group", "cert-manager.io"),
    )
}

/// The `cert-manager.io/*` annotations cert-manager writes on the Secret of `certificate`.
fn secret_annotations(certificate: &Value, name: &str) -> Map<String, Value> {
    let spec = &certificate["spec"];
    let (kind, issuer, group) = issuer_ref(spec);
    let list = |field: &str| {
        spec[field]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut out = Map::new();
    out.insert("cert-manager.io/certificate-name".into(), json!(name));
    out.insert("cert-manager.io/issuer-name".into(), json!(issuer));
    out.insert("cert-manager.io/issuer-kind".into(), json!(kind));
    out.insert("cert-manager.io/issuer-group".into(), json!(group));
    out.insert(
        "cert-manager.io/common-name".into(),
        json!(kit::str_at(spec, "/commonName").unwrap_or_default()),
    );
    out.insert("cert-manager.io/alt-names".into(), json!(list("dnsNames")));
    out.insert("cert-manager.io/ip-sans".into(), json!(list("ipAddresses")));
    out.insert("cert-manager.io/uri-sans".into(), json!(list("uris")));
    out.insert(
        "cert-manager.io/email-sans".into(),
        json!(list("emailAddresses")),
    );
    out
}

async fn reconcile(
    client: &Client,
    issuers: &Issuers,
    certificate: &Value,
    namespace: &str,
) -> Result<(), kube::Error> {
    let (_, name) = kit::namespace_name(certificate);
    let spec = &certificate["spec"];
    let secret_name = kit::str_at(spec, "/secretName")
        .unwrap_or_default()
        .to_owned();
    let secrets = kit::SECRET.api(client, Some(namespace));
    let secret = secrets
        .get_opt(&secret_name)
        .await?
        .and_then(|s| serde_json::to_value(s).ok());
    let annotations = secret_annotations(certificate, &name);
    let held = secret.as_ref().and_then(|s| {
        let cert = kit::str_at(s, "/data/tls.crt")?;
        kit::str_at(s, "/data/tls.key")?;
        let current = s
            .pointer("/metadata/annotations")
            .and_then(Value::as_object);
        let matches = annotations
            .iter()
            .all(|(k, v)| current.and_then(|c| c.get(k)) == Some(v));
        let pem = String::from_utf8(STANDARD.decode(cert).ok()?).ok()?;
        Some((matches, x509::parse_certificate(&pem).ok()?))
    });
    let revision = certificate
        .pointer("/status/revision")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let issued = match held {
        Some((true, cert)) => Some((cert, revision)),
        _ => {
            let reason = if held.is_some() || secret.is_some() {
                "SecretMismatch"
            } else {
                "DoesNotExist"
            };
            let message = if reason == "DoesNotExist" {
                "Issuing certificate as Secret does not exist"
            } else {
                "Issuing certificate as Secret was previously issued by a different issuer or for other names"
            };
            let outcome = match kit::not_ready_toggle(certificate) {
                Some(toggle) => Err(Failure::Pending(toggle)),
                None => {
                    issue(
                        client,
                        issuers,
                        certificate,
                        namespace,
                        &secret_name,
                        annotations,
                    )
                    .await
                }
            };
            match outcome {
                Ok(cert) => Some((cert, revision + 1)),
                Err(failure) => {
                    let issuing = match &failure {
                        Failure::Pending(detail) => {
                            tracing::info!(actor = %Actor::CertManager, %namespace, %name, %detail, "the Certificate waits for its issuer");
                            Condition::new("Issuing", true, reason, message)
                        }
                        Failure::Failed(detail) => Condition::new(
                            "Issuing",
                            false,
                            "Failed",
                            format!(
                                "The certificate request has failed to complete and will be retried: {detail}"
                            ),
                        ),
                    };
                    let conditions = kit::conditions(
                        certificate,
                        &[Condition::new("Ready", false, reason, message), issuing],
                        true,
                    );
                    kit::apply_status(
                        client,
                        &CERTIFICATE,
                        certificate,
                        READINESS_MANAGER,
                        json!({"conditions": conditions}),
                    )
                    .await?;
                    return Ok(());
                }
            }
        }
    };
    let Some((cert, revision)) = issued else {
        return Ok(());
    };
    let validity = cert.tbs_certificate().validity();
    let not_before = validity.not_before.to_unix_duration().as_secs();
    let not_after = validity.not_after.to_unix_duration().as_secs();
    let renew_before = kit::str_at(spec, "/renewBefore")
        .and_then(kit::go_duration)
        .map(|d| d.as_secs())
        .unwrap_or((not_after.saturating_sub(not_before)) / 3);
    let conditions = kit::conditions(
        certificate,
        &[Condition::new(
            "Ready",
            true,
            "Ready",
            "Certificate is up to date and has not expired",
        )],
        true,
    );
    // The issuing controller records the revision before the readiness controller
    // reports Ready, as cert-manager's do: a client that sees Ready sees the revision.
    kit::apply_status(
        client,
        &CERTIFICATE,
        certificate,
        ISSUING_MANAGER,
        json!({"revision": revision}),
    )
    .await?;
    kit::apply_status(
        client,
        &CERTIFICATE,
        certificate,
        READINESS_MANAGER,
        json!({
            "conditions": conditions,
            "notBefore": timestamp(not_before),
            "notAfter": timestamp(not_after),
            "renewalTime": timestamp(not_after.saturating_sub(renew_before)),
        }),
    )
    .await?;
    Ok(())
}

fn timestamp(seconds: u64) -> String {
    k8s_openapi::jiff::Timestamp::from_second(i64::try_from(seconds).unwrap_or(0))
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// Why a certificate was not issued.
enum Failure {
    /// The issuer is not ready (or not there): issuing waits.
    Pending(String),
    /// Issuing itself failed (an unsupported key, a name that cannot be encoded, a write).
    Failed(String),
}

/// Issues the certificate and writes its Secret.
async fn issue(
    client: &Client,
    issuers: &Issuers,
    certificate: &Value,
    namespace: &str,
    secret_name: &str,
    annotations: Map<String, Value>,
) -> Result<x509_cert::Certificate, Failure> {
    let spec = certificate["spec"].clone();
    let (kind, issuer, group) = issuer_ref(&spec);
    if group != "cert-manager.io" {
        return Err(Failure::Pending(format!(
            "issuers of group {group} are not served"
        )));
    }
    let signing: Arc<Signing> = issuers
        .get(&kind, &issuer, namespace)
        .map_err(Failure::Pending)?;
    let material = tokio::task::spawn_blocking(move || build(&spec, &signing))
        .await
        .map_err(|e| Failure::Failed(format!("issuing panicked: {e}")))?
        .map_err(|e| Failure::Failed(e.to_string()))?;
    let (cert, tls_crt, tls_key, ca_crt) = material;
    let template = &certificate["spec"]["secretTemplate"];
    let mut labels = template.get("labels").cloned().unwrap_or(json!({}));
    labels["controller.cert-manager.io/fao"] = json!("true");
    let mut all_annotations = template
        .get("annotations")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    all_annotations.extend(annotations);
    let encode = |s: &str| json!(STANDARD.encode(s));
    let body = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": secret_name, "namespace": namespace, "labels": labels, "annotations": all_annotations},
        "type": "kubernetes.io/tls",
        "data": {"tls.crt": encode(&tls_crt), "tls.key": encode(&tls_key), "ca.crt": encode(&ca_crt)},
    });
    kit::SECRET
        .api(client, Some(namespace))
        .patch(
            secret_name,
            &PatchParams::apply(ISSUING_MANAGER).force(),
            &Patch::Apply(&body),
        )
        .await
        .map_err(|e| Failure::Failed(format!("writing Secret {secret_name}: {e}")))?;
    Ok(cert)
}

/// The certificate, `tls.crt` (the certificate, then the CA's for a CA issuer), `tls.key`
/// and `ca.crt`.
fn build(
    spec: &Value,
    signing: &Signing,
) -> Result<(x509_cert::Certificate, String, String, String), x509::X509Error> {
    let strings = |field: &str| {
        spec[field]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
    };
    let duration = kit::str_at(spec, "/duration")
        .and_then(kit::go_duration)
        .unwrap_or(DEFAULT_DURATION);
    let request = Request {
        common_name: kit::str_at(spec, "/commonName"),
        dns_names: strings("dnsNames"),
        ip_addresses: strings("ipAddresses"),
        uris: strings("uris"),
        emails: strings("emailAddresses"),
        organizations: spec
            .pointer("/subject/organizations")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect(),
        duration,
        usages: strings("usages"),
        is_ca: spec["isCA"].as_bool().unwrap_or(false),
    };
    let key = Key::generate(
        kit::str_at(spec, "/privateKey/algorithm"),
        spec.pointer("/privateKey/size").and_then(Value::as_u64),
    )?;
    let pkcs8 = kit::str_at(spec, "/privateKey/encoding") == Some("PKCS8");
    let (cert, chain, root) = match signing {
        Signing::SelfSigned => {
            let cert = x509::issue(&request, &key, &Signer::SelfSigned)?;
            let pem = x509::certificate_pem(&cert)?;
            (cert, pem.clone(), pem)
        }
        Signing::Ca {
            certificate,
            certificate_pem,
            root_pem,
            key: ca_key,
        } => {
            let cert = x509::issue(
                &request,
                &key,
                &Signer::Ca {
                    certificate,
                    key: ca_key,
                },
            )?;
            let pem = x509::certificate_pem(&cert)?;
            (cert, format!("{pem}{certificate_pem}"), root_pem.clone())
        }
    };
    Ok((cert, chain, key.to_pem(pkcs8)?, root))
}
