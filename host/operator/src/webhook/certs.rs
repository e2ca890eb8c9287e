//! Where the webhook server's certificate comes from: files a Secret mount provides
//! (cert-manager's usual way), read again when they change; or a CA and serving
//! certificate the host makes, keeps in a Secret it manages, and renews before expiry.
//!
//! The managed Secret (`kubernetes.io/tls`) holds `ca.crt`, `ca.key`, `tls.crt` and
//! `tls.key`; annotations record the serving certificate's expiry and DNS names. A renewal
//! keeps the CA, so the `caBundle` of the webhook configurations stays valid. Replicas
//! write it with the resourceVersion they read: on a conflict the one that lost reads and
//! serves the winner's.
//!
//! The Secret is read raw ([`RawObject`]): one whose metadata or data does not decode is
//! written anew (its resourceVersion kept), and nothing of it is logged but its name and
//! serde's reason — kube-rs would log the whole body, CA key included, on a typed read.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{ObjectMeta, PostParams};

use super::tls::{ServingCert, TlsError, certified_key};
use crate::cluster::raw::RawObject;

/// The serving certificate's lifetime.
const SERVING_LIFETIME: Duration = Duration::from_secs(90 * 24 * 3600);
/// The CA's lifetime.
const CA_LIFETIME: Duration = Duration::from_secs(10 * 365 * 24 * 3600);
/// A serving certificate with less left than this is renewed.
pub(crate) const RENEW_BEFORE: Duration = Duration::from_secs(30 * 24 * 3600);
/// How often the files, or the managed certificate's expiry, are checked.
const CHECK_EVERY: Duration = Duration::from_secs(10);

/// The annotation holding the serving certificate's expiry (seconds since the epoch).
pub const NOT_AFTER_ANNOTATION: &str = "wasm-operator.dev/webhook-not-after";
/// The annotation holding the DNS names the serving certificate is for (comma-separated).
pub const DNS_NAMES_ANNOTATION: &str = "wasm-operator.dev/webhook-dns-names";

/// Where the certificate comes from.
#[derive(Debug, Clone)]
pub enum CertSource {
    /// `tls.crt` and `tls.key` in this directory.
    Files(PathBuf),
    /// A Secret the host manages, for the Service the API server calls.
    Managed {
        secret_namespace: String,
        secret_name: String,
        service_namespace: String,
        service_name: String,
    },
}

/// Why the certificate cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Tls(#[from] TlsError),
    #[error("cannot make a certificate: {0}")]
    Generate(String),
    #[error("Secret {namespace}/{name}: {source}")]
    Secret {
        namespace: String,
        name: String,
        #[source]
        source: kube::Error,
    },
    #[error("Secret {namespace}/{name} kept changing under this replica's writes")]
    Contended { namespace: String, name: String },
}

/// The certificate, and the CA clients trust it by (for a managed one).
pub(crate) struct Loaded {
    pub cert: Arc<ServingCert>,
    pub ca_pem: Option<String>,
    /// Keeps the certificate current (file reloads, renewals).
    pub task: tokio::task::JoinHandle<()>,
}

impl CertSource {
    /// Loads the certificate and starts what keeps it current.
    pub(crate) async fn load(&self, client: &kube::Client) -> Result<Loaded, CertError> {
        match self {
            CertSource::Files(dir) => {
                let (key, stamp) = read_files(dir)?;
                let cert = ServingCert::new(key);
                let task = tokio::spawn(watch_files(dir.clone(), stamp, cert.clone()));
                Ok(Loaded {
                    cert,
                    ca_pem: None,
                    task,
                })
            }
            CertSource::Managed {
                secret_namespace,
                secret_name,
                service_namespace,
                service_name,
            } => {
                let managed = Managed {
                    api: kube::Api::namespaced(client.clone(), secret_namespace),
                    raw: kube::Api::namespaced_with(
                        client.clone(),
                        secret_namespace,
                        &kube::api::ApiResource::erase::<Secret>(&()),
                    ),
                    namespace: secret_namespace.clone(),
                    name: secret_name.clone(),
                    dns_names: dns_names(service_namespace, service_name),
                };
                let issued = managed.ensure().await?;
                let cert = ServingCert::new(issued.key);
                let ca_pem = issued.ca_pem.clone();
                let task = tokio::spawn(renew(managed, issued.not_after, cert.clone()));
                Ok(Loaded {
                    cert,
                    ca_pem: Some(ca_pem),
                    task,
                })
            }
        }
    }
}

/// The names the API server uses for a Service: `{svc}.{ns}.svc` and the fully qualified one.
pub(crate) fn dns_names(namespace: &str, service: &str) -> Vec<String> {
    vec![
        format!("{service}.{namespace}.svc"),
        format!("{service}.{namespace}.svc.cluster.local"),
    ]
}

type Stamp = Vec<(SystemTime, u64)>;

fn read_files(dir: &std::path::Path) -> Result<(rustls::sign::CertifiedKey, Stamp), CertError> {
    let read = |name: &str| {
        let path = dir.join(name);
        std::fs::read(&path).map_err(|source| CertError::Read { path, source })
    };
    let stamp = stamp(dir);
    let cert = read("tls.crt")?;
    let key = read("tls.key")?;
    let what = format!("{}/tls.crt and tls.key", dir.display());
    Ok((certified_key(&what, &cert, &key)?, stamp))
}

fn stamp(dir: &std::path::Path) -> Stamp {
    ["tls.crt", "tls.key"]
        .iter()
        .filter_map(|name| std::fs::metadata(dir.join(name)).ok())
        .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()))
        .collect()
}

/// Reads the files again whenever their modification time or size changes; a pair that
/// does not load is logged and the last good certificate kept.
async fn watch_files(dir: PathBuf, mut seen: Stamp, cert: Arc<ServingCert>) {
    loop {
        tokio::time::sleep(CHECK_EVERY).await;
        if stamp(&dir) == seen {
            continue;
        }
        match read_files(&dir) {
            Ok((key, now)) => {
                cert.replace(key);
                seen = now;
                tracing::info!(dir = %dir.display(), "the webhook certificate was reloaded");
            }
            Err(error) => {
                tracing::warn!(%error, "the webhook certificate files changed but do not load; serving the last good ones");
                seen = stamp(&dir);
            }
        }
    }
}

/// A certificate issued from the managed Secret.
/// The managed Secret as read: its metadata and the keys whose values decode.
struct Stored {
    metadata: ObjectMeta,
    data: BTreeMap<String, ByteString>,
}

struct Issued {
    key: rustls::sign::CertifiedKey,
    ca_pem: String,
    not_after: SystemTime,
}

struct Managed {
    /// Writes.
    api: kube::Api<Secret>,
    /// Reads.
    raw: kube::Api<RawObject>,
    namespace: String,
    name: String,
    dns_names: Vec<String>,
}

fn epoch_seconds(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl Managed {
    fn secret_error(&self, source: kube::Error) -> CertError {
        CertError::Secret {
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            source,
        }
    }

    /// The Secret's certificate when it is for these names and not due for renewal;
    /// otherwise a new one (from the Secret's CA when it has one), written back.
    async fn ensure(&self) -> Result<Issued, CertError> {
        for _ in 0..3 {
            let existing = self
                .raw
                .get_opt(&self.name)
                .await
                .map_err(|e| self.secret_error(e))?
                .map(|raw| self.stored(raw));
            if let Some(issued) = existing.as_ref().and_then(|s| self.current(s)) {
                return Ok(issued);
            }
            let data = existing
                .as_ref()
                .map(|s| s.data.clone())
                .unwrap_or_default();
            let ca = match (text(&data, "ca.crt"), text(&data, "ca.key")) {
                (Some(cert), Some(key)) => Ca::from_pem(&cert, &key)?,
                _ => Ca::generate()?,
            };
            let not_after = SystemTime::now() + SERVING_LIFETIME;
            let (cert_pem, key_pem) = ca.issue(&self.dns_names, not_after)?;
            let secret = self.secret(&ca, &cert_pem, &key_pem, not_after, existing.as_ref());
            let written = match &existing {
                Some(_) => {
                    self.api
                        .replace(&self.name, &PostParams::default(), &secret)
                        .await
                }
                None => self.api.create(&PostParams::default(), &secret).await,
            };
            match written {
                Ok(_) => {
                    tracing::info!(secret = %format!("{}/{}", self.namespace, self.name), "issued the webhook serving certificate");
                    return Ok(Issued {
                        key: certified_key(
                            "the issued certificate",
                            cert_pem.as_bytes(),
                            key_pem.as_bytes(),
                        )?,
                        ca_pem: ca.cert_pem.clone(),
                        not_after,
                    });
                }
                // Another replica wrote first: serve what it wrote.
                Err(kube::Error::Api(status)) if status.code == 409 => continue,
                Err(e) => return Err(self.secret_error(e)),
            }
        }
        Err(CertError::Contended {
            namespace: self.namespace.clone(),
            name: self.name.clone(),
        })
    }

    /// The Secret as read: its metadata, and the keys whose values are base64.
    fn stored(&self, raw: RawObject) -> Stored {
        if let Some(reason) = raw.malformed() {
            tracing::warn!(
                secret = %raw.key(),
                reason,
                "the webhook Secret's metadata does not decode: it is written anew"
            );
        }
        let metadata = raw.metadata().clone();
        let value = raw.into_value();
        let data = value
            .get("data")
            .and_then(serde_json::Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(key, encoded)| {
                use base64::Engine as _;
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(encoded.as_str()?)
                    .ok()?;
                Some((key.clone(), ByteString(bytes)))
            })
            .collect();
        Stored { metadata, data }
    }

    /// The Secret's certificate, when it is for these names and has more than
    /// [`RENEW_BEFORE`] left.
    fn current(&self, secret: &Stored) -> Option<Issued> {
        let annotations = secret.metadata.annotations.as_ref()?;
        let not_after: u64 = annotations.get(NOT_AFTER_ANNOTATION)?.parse().ok()?;
        let names = annotations.get(DNS_NAMES_ANNOTATION)?;
        if *names != self.dns_names.join(",")
            || not_after < epoch_seconds(SystemTime::now() + RENEW_BEFORE)
        {
            return None;
        }
        let data = &secret.data;
        let key = certified_key(
            "the managed Secret",
            text(data, "tls.crt")?.as_bytes(),
            text(data, "tls.key")?.as_bytes(),
        )
        .ok()?;
        Some(Issued {
            key,
            ca_pem: text(data, "ca.crt")?,
            not_after: SystemTime::UNIX_EPOCH + Duration::from_secs(not_after),
        })
    }

    fn secret(
        &self,
        ca: &Ca,
        cert_pem: &str,
        key_pem: &str,
        not_after: SystemTime,
        existing: Option<&Stored>,
    ) -> Secret {
        let mut metadata = existing.map(|s| s.metadata.clone()).unwrap_or(ObjectMeta {
            name: Some(self.name.clone()),
            namespace: Some(self.namespace.clone()),
            ..ObjectMeta::default()
        });
        metadata.managed_fields = None;
        let annotations = metadata.annotations.get_or_insert_with(BTreeMap::new);
        annotations.insert(
            NOT_AFTER_ANNOTATION.into(),
            epoch_seconds(not_after).to_string(),
        );
        annotations.insert(DNS_NAMES_ANNOTATION.into(), self.dns_names.join(","));
        let data = BTreeMap::from([
            (
                "ca.crt".to_owned(),
                ByteString(ca.cert_pem.clone().into_bytes()),
            ),
            (
                "ca.key".to_owned(),
                ByteString(ca.key_pem.clone().into_bytes()),
            ),
            (
                "tls.crt".to_owned(),
                ByteString(cert_pem.as_bytes().to_vec()),
            ),
            (
                "tls.key".to_owned(),
                ByteString(key_pem.as_bytes().to_vec()),
            ),
        ]);
        Secret {
            metadata,
            type_: Some("kubernetes.io/tls".into()),
            data: Some(data),
            ..Secret::default()
        }
    }
}

fn text(data: &BTreeMap<String, ByteString>, key: &str) -> Option<String> {
    data.get(key)
        .and_then(|v| String::from_utf8(v.0.clone()).ok())
        .filter(|t| !t.trim().is_empty())
}

/// Renews the managed certificate [`RENEW_BEFORE`] its expiry (checking at least hourly,
/// so a Secret renewed by another replica is picked up); a failure is retried.
async fn renew(managed: Managed, mut not_after: SystemTime, cert: Arc<ServingCert>) {
    loop {
        let due = not_after
            .checked_sub(RENEW_BEFORE)
            .and_then(|t| t.duration_since(SystemTime::now()).ok())
            .unwrap_or_default();
        tokio::time::sleep(due.min(Duration::from_secs(3600)).max(CHECK_EVERY)).await;
        match managed.ensure().await {
            Ok(issued) => {
                if issued.not_after != not_after {
                    cert.replace(issued.key);
                    not_after = issued.not_after;
                }
            }
            Err(error) => tracing::warn!(%error, "cannot renew the webhook serving certificate"),
        }
    }
}

/// The webhook CA: its certificate and key, PEM.
struct Ca {
    cert_pem: String,
    key_pem: String,
    key: rcgen::KeyPair,
}

const CA_NAME: &str = "wasm-operator webhook CA";

fn ca_params() -> Result<rcgen::CertificateParams, CertError> {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new())
        .map_err(|e| CertError::Generate(e.to_string()))?;
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Constrained(0));
    params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
    ];
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, CA_NAME);
    Ok(params)
}

fn offset(t: SystemTime) -> time::OffsetDateTime {
    time::OffsetDateTime::from_unix_timestamp(i64::try_from(epoch_seconds(t)).unwrap_or(i64::MAX))
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH)
}

impl Ca {
    fn generate() -> Result<Self, CertError> {
        let generate = |e: rcgen::Error| CertError::Generate(e.to_string());
        let key = rcgen::KeyPair::generate().map_err(generate)?;
        let mut params = ca_params()?;
        params.not_before = offset(SystemTime::now() - Duration::from_secs(3600));
        params.not_after = offset(SystemTime::now() + CA_LIFETIME);
        let cert = params.self_signed(&key).map_err(generate)?;
        Ok(Self {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            key,
        })
    }

    /// The CA kept in the Secret: its certificate as stored, its key to sign with.
    fn from_pem(cert_pem: &str, key_pem: &str) -> Result<Self, CertError> {
        let key = rcgen::KeyPair::from_pem(key_pem)
            .map_err(|e| CertError::Generate(format!("ca.key: {e}")))?;
        Ok(Self {
            cert_pem: cert_pem.to_owned(),
            key_pem: key_pem.to_owned(),
            key,
        })
    }

    /// A serving certificate for `dns_names` until `not_after`: (certificate, key) PEM.
    fn issue(
        &self,
        dns_names: &[String],
        not_after: SystemTime,
    ) -> Result<(String, String), CertError> {
        let generate = |e: rcgen::Error| CertError::Generate(e.to_string());
        // The issuer is named and keyed as the stored CA certificate is.
        let issuer = rcgen::Issuer::new(ca_params()?, &self.key);
        let key = rcgen::KeyPair::generate().map_err(generate)?;
        let mut params = rcgen::CertificateParams::new(dns_names.to_vec()).map_err(generate)?;
        params.distinguished_name.push(
            rcgen::DnType::CommonName,
            dns_names.first().cloned().unwrap_or_default(),
        );
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
        params.not_before = offset(SystemTime::now() - Duration::from_secs(3600));
        params.not_after = offset(not_after);
        let cert = params.signed_by(&key, &issuer).map_err(generate)?;
        Ok((cert.pem(), key.serialize_pem()))
    }
}
