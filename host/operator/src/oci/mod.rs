//! Plugins from OCI registries, the way the wasm ecosystem ships components (Kubewarden ships
//! its policies so): a plugin whose `plugins.toml` entry names a `source` is pulled into the
//! plugin directory as `NAME.wasm`, where the directory's poll loads it through the same
//! checks and swap as a dropped file; `wasm-operator plugin push FILE REF` publishes one.
//!
//! An artifact is an OCI image manifest with one layer of a wasm media type (the CNCF
//! layout, [`WASM_LAYER`] with config [`WASM_CONFIG`], or the older
//! `application/vnd.wasm.content.layer.v1+wasm`). Every byte is checked: the manifest
//! against the digest it was asked for, the layer against the manifest's digest (by the
//! client while streaming, and again here over the bytes written), and the layer's size
//! against [`MAX_PLUGIN_BYTES`] before a byte is fetched.
//!
//! DECISION: the artifact is pulled into the plugin directory rather than loaded from
//! memory, so a pulled plugin and a dropped one take one path (pins, contract checks,
//! refusals, swaps) and a restart finds the last good file without the registry.

mod credentials;
mod pull;
mod push;
mod reference;

use std::path::PathBuf;
use std::time::Duration;

use oci_client::client::{Certificate, CertificateEncoding, ClientConfig, ClientProtocol};
use oci_client::errors::OciDistributionError;
use oci_client::secrets::RegistryAuth;

pub use credentials::{Credentials, CredentialsError};
pub use pull::{Pulled, Puller};
pub use push::push;
pub use reference::{OciRef, OciRefError};

/// The layer media type of a wasm component (CNCF TAG Runtime's Wasm OCI artifact layout).
pub const WASM_LAYER: &str = "application/wasm";
/// The config media type of that layout.
pub const WASM_CONFIG: &str = "application/vnd.wasm.config.v0+json";
/// The layer media type of the earlier layout (wasm-to-oci, Kubewarden's policies).
pub const WASM_LAYER_V1: &str = oci_client::manifest::WASM_LAYER_MEDIA_TYPE;
/// The most bytes a plugin layer may have (the shipped plugins are under 4 MiB).
pub const MAX_PLUGIN_BYTES: i64 = 64 << 20;

/// How the host reaches registries.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct RegistryArgs {
    /// A docker config JSON with registry credentials (the `.dockerconfigjson` of a
    /// `kubernetes.io/dockerconfigjson` Secret, mounted).
    #[arg(long, env = "WASM_OPERATOR_REGISTRY_AUTH_FILE")]
    pub registry_auth_file: Option<PathBuf>,
    /// PEM certificates trusted for registries besides the system's roots (a private CA).
    #[arg(long, env = "WASM_OPERATOR_REGISTRY_CA_FILE")]
    pub registry_ca_file: Option<PathBuf>,
    /// A registry (`HOST:PORT`) spoken to over plain HTTP, e.g. one on loopback; every other
    /// registry is HTTPS only. Repeatable.
    #[arg(long = "plain-http-registry")]
    pub plain_http: Vec<String>,
}

/// Why a registry operation failed; names the reference, never a credential.
#[derive(Debug, thiserror::Error)]
pub enum OciError {
    #[error(transparent)]
    Credentials(#[from] CredentialsError),
    #[error("cannot read the registry CA bundle {path}: {reason}")]
    CaBundle { path: String, reason: String },
    #[error("cannot build the registry client: {0}")]
    Client(String),
    #[error("{reference}: {source}")]
    Registry {
        reference: String,
        #[source]
        source: OciDistributionError,
    },
    #[error("{reference} is not a wasm plugin artifact: {reason}")]
    NotWasm { reference: String, reason: String },
    #[error("{reference}: the wasm layer has {size} bytes, more than the {max} a plugin may have")]
    TooLarge {
        reference: String,
        size: i64,
        max: i64,
    },
    #[error(
        "{reference}: the wasm layer has {actual} bytes, not the {expected} its descriptor says"
    )]
    Size {
        reference: String,
        expected: i64,
        actual: usize,
    },
    #[error("{reference}: no answer from the registry within {after:?}")]
    Timeout { reference: String, after: Duration },
    #[error("{reference}: the wasm layer's content has digest {actual:?}, not {expected}")]
    Digest {
        reference: String,
        expected: String,
        actual: String,
    },
    #[error("{path}: {source}")]
    File {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl OciError {
    /// How a registry call's error about `reference` is told.
    fn registry(reference: &OciRef) -> impl Fn(OciDistributionError) -> OciError + Copy + '_ {
        move |source| OciError::Registry {
            reference: reference.to_string(),
            source,
        }
    }
}

/// A client of the registries `RegistryArgs` describe.
pub struct Registry {
    client: oci_client::Client,
    credentials: Credentials,
}

impl Registry {
    /// A client with the credentials and CA bundle of `args`.
    pub fn new(args: &RegistryArgs) -> Result<Self, OciError> {
        // The client's TLS has no provider of its own: the process uses ring (as kube does).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let credentials = match &args.registry_auth_file {
            Some(path) => Credentials::read(path)?,
            None => Credentials::default(),
        };
        let mut extra_root_certificates = Vec::new();
        if let Some(path) = &args.registry_ca_file {
            let shown = path.display().to_string();
            let pem = std::fs::read(path).map_err(|e| OciError::CaBundle {
                path: shown.clone(),
                reason: e.to_string(),
            })?;
            if !pem.windows(27).any(|w| w == b"-----BEGIN CERTIFICATE-----") {
                return Err(OciError::CaBundle {
                    path: shown,
                    reason: "no PEM certificate in it".into(),
                });
            }
            extra_root_certificates.push(Certificate {
                encoding: CertificateEncoding::Pem,
                data: pem,
            });
        }
        let config = ClientConfig {
            protocol: if args.plain_http.is_empty() {
                ClientProtocol::Https
            } else {
                ClientProtocol::HttpsExcept(args.plain_http.clone())
            },
            extra_root_certificates,
            connect_timeout: Some(Duration::from_secs(10)),
            read_timeout: Some(Duration::from_secs(60)),
            user_agent: concat!("wasm-operator/", env!("CARGO_PKG_VERSION")),
            ..ClientConfig::default()
        };
        let client =
            oci_client::Client::try_from(config).map_err(|e| OciError::Client(e.to_string()))?;
        Ok(Registry {
            client,
            credentials,
        })
    }

    fn auth(&self, reference: &OciRef) -> RegistryAuth {
        self.credentials.for_registry(reference.registry())
    }
}

/// The `sha256:HEX` digest of `bytes`.
fn sha256_digest(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("sha256:{}", hex::encode(sha2::Sha256::digest(bytes)))
}

/// The digest of `bytes` in the algorithm of `like` (`sha256`, `sha384` or `sha512`, the
/// OCI registered ones); `None` for another.
fn digest_of(like: &str, bytes: &[u8]) -> Option<String> {
    use sha2::Digest;
    let (algorithm, _) = like.split_once(':')?;
    let hex = match algorithm {
        "sha256" => hex::encode(sha2::Sha256::digest(bytes)),
        "sha384" => hex::encode(sha2::Sha384::digest(bytes)),
        "sha512" => hex::encode(sha2::Sha512::digest(bytes)),
        _ => return None,
    };
    Some(format!("{algorithm}:{hex}"))
}
