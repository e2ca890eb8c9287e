//! Keeping the plugin directory's OCI-sourced files in step with their registries.
//!
//! Each round reads `plugins.toml`, and for every plugin with a `source`: resolves a tag to
//! its manifest digest (one `HEAD`), and when that digest is not the one last written,
//! pulls the manifest by digest, then the wasm layer unless the file on disk already is
//! that layer, and replaces `NAME.wasm` with a rename (the directory's poll never sees half
//! a file). A failure leaves the file as it was and is reported with the plugin and the
//! reference; the next round tries again.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use oci_client::manifest::{OciDescriptor, OciImageManifest};

use super::{
    MAX_PLUGIN_BYTES, OciError, OciRef, Registry, WASM_LAYER, WASM_LAYER_V1, sha256_digest,
};
use crate::operator::plugin_config::PluginsToml;

/// Pulls the plugins of one directory.
pub struct Puller {
    registry: Registry,
    dir: PathBuf,
    config_file: PathBuf,
    /// Per plugin, the manifest digest its file was last written (or found to be) from.
    written: HashMap<String, String>,
}

/// What a round did for one plugin.
#[derive(Debug)]
pub enum Pulled {
    /// The file was written from this artifact (`reference@digest`).
    Written(String),
    /// The file already was this artifact.
    Current,
}

impl Puller {
    /// Pulls into `dir` the sources of `config_file` (default: the directory's
    /// `plugins.toml`).
    pub fn new(registry: Registry, dir: PathBuf, config_file: Option<PathBuf>) -> Self {
        Puller {
            registry,
            config_file: config_file.unwrap_or_else(|| dir.join("plugins.toml")),
            dir,
            written: HashMap::new(),
        }
    }

    /// One round over every enabled plugin with a source; what each did, by plugin name. A broken
    /// `plugins.toml` pulls nothing (the directory's loader reports it).
    pub async fn sync(&mut self) -> Vec<(String, Result<Pulled, OciError>)> {
        let Ok(config) = PluginsToml::read_file(&self.config_file) else {
            return Vec::new();
        };
        let mut outcomes = Vec::new();
        for (name, settings) in config.plugins.iter().filter(|(_, s)| s.enabled) {
            let Some(Ok(source)) = settings.source.as_deref().map(str::parse::<OciRef>) else {
                continue;
            };
            let outcome = self.pull(name, &source).await;
            match &outcome {
                Ok(Pulled::Written(pinned)) => {
                    tracing::info!(plugin = %name, artifact = %pinned, "pulled plugin")
                }
                Ok(Pulled::Current) => {}
                Err(error) => tracing::warn!(plugin = %name, %error, "cannot pull plugin"),
            }
            outcomes.push((name.clone(), outcome));
        }
        outcomes
    }

    /// Rounds every `interval`, forever (the task is dropped with the process).
    pub async fn poll(mut self, interval: Duration) {
        loop {
            tokio::time::sleep(interval).await;
            self.sync().await;
        }
    }

    async fn pull(&mut self, name: &str, source: &OciRef) -> Result<Pulled, OciError> {
        let file = self.dir.join(format!("{name}.wasm"));
        let registry = &self.registry;
        let digest = match source.digest() {
            Some(digest) => digest.to_owned(),
            None => registry.resolve(source).await?,
        };
        if self.written.get(name) == Some(&digest) && file.exists() {
            return Ok(Pulled::Current);
        }
        let pinned = source.pinned(&digest);
        let manifest = registry.manifest(&pinned).await?;
        let layer = wasm_layer(&manifest, &pinned)?;
        let on_disk = std::fs::read(&file).ok().map(|b| sha256_digest(&b));
        if on_disk.as_deref() == Some(layer.digest.as_str()) {
            self.written.insert(name.to_owned(), digest);
            return Ok(Pulled::Current);
        }
        let bytes = registry.layer(&pinned, layer).await?;
        write_atomically(&file, &bytes)?;
        self.written.insert(name.to_owned(), digest);
        Ok(Pulled::Written(pinned.to_string()))
    }
}

impl Registry {
    /// The digest of the manifest `reference` (a tag) names now.
    pub(crate) async fn resolve(&self, reference: &OciRef) -> Result<String, OciError> {
        self.client
            .fetch_manifest_digest(reference.as_client_ref(), &self.auth(reference))
            .await
            .map_err(|source| OciError::Registry {
                reference: reference.to_string(),
                source,
            })
    }

    /// The image manifest `reference` pins (the client checks its bytes against the digest).
    pub(crate) async fn manifest(&self, reference: &OciRef) -> Result<OciImageManifest, OciError> {
        let (manifest, _) = self
            .client
            .pull_image_manifest(reference.as_client_ref(), &self.auth(reference))
            .await
            .map_err(|source| OciError::Registry {
                reference: reference.to_string(),
                source,
            })?;
        Ok(manifest)
    }

    /// The bytes of `layer`, checked against its size limit before and its digest after.
    pub(crate) async fn layer(
        &self,
        reference: &OciRef,
        layer: &OciDescriptor,
    ) -> Result<Vec<u8>, OciError> {
        if !(0..=MAX_PLUGIN_BYTES).contains(&layer.size) {
            return Err(OciError::TooLarge {
                reference: reference.to_string(),
                size: layer.size,
                max: MAX_PLUGIN_BYTES,
            });
        }
        let size = usize::try_from(layer.size).unwrap_or(0);
        let mut bytes = Bounded {
            bytes: Vec::with_capacity(size),
            max: size,
        };
        self.client
            .pull_blob(reference.as_client_ref(), layer, &mut bytes)
            .await
            .map_err(|source| OciError::Registry {
                reference: reference.to_string(),
                source,
            })?;
        let bytes = bytes.bytes;
        let actual = sha256_digest(&bytes);
        if actual != layer.digest || bytes.len() as i64 != layer.size {
            return Err(OciError::Digest {
                reference: reference.to_string(),
                expected: layer.digest.clone(),
                actual,
            });
        }
        Ok(bytes)
    }
}

/// A sink that refuses more than `max` bytes: a registry that sends more than the layer's
/// size is cut off there, not buffered until its digest fails.
struct Bounded {
    bytes: Vec<u8>,
    max: usize,
}

impl tokio::io::AsyncWrite for Bounded {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        if self.bytes.len() + buf.len() > self.max {
            return std::task::Poll::Ready(Err(std::io::Error::other(format!(
                "the registry sent more than the layer's {} bytes",
                self.max
            ))));
        }
        self.bytes.extend_from_slice(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// The one wasm layer of a plugin artifact.
fn wasm_layer<'m>(
    manifest: &'m OciImageManifest,
    reference: &OciRef,
) -> Result<&'m OciDescriptor, OciError> {
    let not_wasm = |reason: String| OciError::NotWasm {
        reference: reference.to_string(),
        reason,
    };
    match manifest.layers.as_slice() {
        [layer] if [WASM_LAYER, WASM_LAYER_V1].contains(&layer.media_type.as_str()) => Ok(layer),
        [layer] => Err(not_wasm(format!(
            "its layer has media type {:?}, not {WASM_LAYER:?} or {WASM_LAYER_V1:?}",
            layer.media_type
        ))),
        layers => Err(not_wasm(format!(
            "it has {} layers, not one wasm component",
            layers.len()
        ))),
    }
}

/// Writes `file` through a temporary file beside it and a rename. The temporary name does
/// not end in `.wasm`, so the directory's poll never loads it.
fn write_atomically(file: &Path, bytes: &[u8]) -> Result<(), OciError> {
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("plugin");
    let partial = file.with_file_name(format!(".{name}.pulling"));
    let error = |path: &Path| {
        let path = path.display().to_string();
        move |source| OciError::File { path, source }
    };
    std::fs::write(&partial, bytes).map_err(error(&partial))?;
    std::fs::rename(&partial, file).map_err(error(file))
}
