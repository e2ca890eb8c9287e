//! Keeping the plugin directory's OCI-sourced files in step with their registries.
//!
//! Each round reads `plugins.toml`, and for every enabled plugin with a `source`: resolves a
//! tag to its manifest digest (one `HEAD`; a digest reference needs none), and unless the
//! file is that artifact already — its marker `.NAME.wasm.source` names the manifest and the
//! file's bytes hash to the layer it names — pulls the manifest by digest and the wasm layer,
//! and replaces `NAME.wasm` with a rename (the directory's poll never sees half a file). A
//! failure leaves the file as it was and is reported with the plugin and the reference; the
//! next round tries again. A file the puller wrote whose plugin no longer has a source (or
//! is disabled) is removed, so the directory stops it as it does a deleted file. Rounds run
//! at start, whenever `plugins.toml` changes, and every poll interval.

use std::path::{Path, PathBuf};
use std::time::Duration;

use oci_client::manifest::{OciDescriptor, OciImageManifest};

use super::{
    MAX_PLUGIN_BYTES, OciError, OciRef, Registry, RegistryArgs, WASM_LAYER, WASM_LAYER_V1,
    digest_of,
};
use crate::operator::loader::config_file as config_file_of;
use crate::operator::plugin_config::PluginsToml;

/// Pulls the plugins of one directory.
pub struct Puller {
    args: RegistryArgs,
    registry: Registry,
    /// The credentials file's modification time when `registry` was built from it: a
    /// rotated Secret (or a short-lived token written there) is read again.
    credentials_seen: Option<std::time::SystemTime>,
    dir: PathBuf,
    config_file: PathBuf,
}

/// The longest one plugin's pull may take before the round moves on.
const PULL_TIMEOUT: Duration = Duration::from_secs(120);

/// The suffix of the marker a pulled `NAME.wasm` has beside it (`.NAME.wasm.source`): the
/// manifest digest and the layer digest it was written from.
const MARKER: &str = ".source";

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
    /// `plugins.toml`). Fails as [`Registry::new`] does (credentials or CA bundle unusable).
    pub fn new(
        args: RegistryArgs,
        dir: PathBuf,
        config_file: Option<PathBuf>,
    ) -> Result<Self, OciError> {
        let credentials_seen = modified(args.registry_auth_file.as_deref());
        Ok(Puller {
            registry: Registry::new(&args)?,
            args,
            credentials_seen,
            config_file: config_file.unwrap_or_else(|| config_file_of(&dir)),
            dir,
        })
    }

    /// Builds the client again when the credentials file changed; keeps the one it has when
    /// the new file cannot be used.
    fn refresh_credentials(&mut self) {
        let now = modified(self.args.registry_auth_file.as_deref());
        if now == self.credentials_seen {
            return;
        }
        match Registry::new(&self.args) {
            Ok(registry) => {
                self.registry = registry;
                self.credentials_seen = now;
                tracing::info!("registry credentials read again");
            }
            Err(error) => tracing::warn!(%error, "keeping the registry credentials read before"),
        }
    }

    /// One round over every enabled plugin with a source; what each did, by plugin name. A
    /// broken or missing `plugins.toml` pulls and removes nothing (the directory's loader
    /// reports a broken one).
    pub async fn sync(&mut self) -> Vec<(String, Result<Pulled, OciError>)> {
        self.refresh_credentials();
        // No file (a mount not there yet) is not "no plugins": nothing is pulled or removed.
        if !self.config_file.exists() {
            return Vec::new();
        }
        let Ok(config) = PluginsToml::read_file(&self.config_file) else {
            return Vec::new();
        };
        let mut outcomes = Vec::new();
        let mut sourced = Vec::new();
        for (name, settings) in config.plugins.iter().filter(|(_, s)| s.enabled) {
            let Some(Ok(source)) = settings.source.as_deref().map(str::parse::<OciRef>) else {
                continue;
            };
            sourced.push(name.as_str());
            let outcome = tokio::time::timeout(PULL_TIMEOUT, self.pull(name, &source))
                .await
                .unwrap_or_else(|_| {
                    Err(OciError::Timeout {
                        reference: source.to_string(),
                        after: PULL_TIMEOUT,
                    })
                });
            match &outcome {
                Ok(Pulled::Written(pinned)) => {
                    tracing::info!(plugin = %name, artifact = %pinned, "pulled plugin")
                }
                Ok(Pulled::Current) => {}
                Err(error) => tracing::warn!(plugin = %name, %error, "cannot pull plugin"),
            }
            outcomes.push((name.clone(), outcome));
        }
        self.remove_unsourced(&sourced);
        outcomes
    }

    /// Removes the files this puller wrote for plugins that no longer have a source.
    fn remove_unsourced(&self, sourced: &[&str]) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.filter_map(Result::ok) {
            let marker = entry.file_name().to_string_lossy().into_owned();
            let Some(name) = marker
                .strip_prefix('.')
                .and_then(|m| m.strip_suffix(&format!(".wasm{MARKER}")))
            else {
                continue;
            };
            if sourced.contains(&name) {
                continue;
            }
            let (file, marker) = self.files(name);
            match std::fs::remove_file(&file) {
                Ok(()) => {
                    tracing::info!(plugin = %name, "removed a pulled plugin that no longer has a source")
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => {
                    tracing::warn!(plugin = %name, %error, "cannot remove a pulled plugin");
                    continue;
                }
            }
            let _ = std::fs::remove_file(marker);
        }
    }

    /// A round now, then one whenever `plugins.toml` changes (checked every second) and
    /// every `interval`, forever (the task is dropped with the process).
    pub async fn run(mut self, interval: Duration) {
        let mut seen = std::fs::read(&self.config_file).ok();
        self.sync().await;
        let mut last = tokio::time::Instant::now();
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let now = std::fs::read(&self.config_file).ok();
            if now != seen || last.elapsed() >= interval {
                seen = now;
                self.sync().await;
                last = tokio::time::Instant::now();
            }
        }
    }

    /// Plugin `name`'s file and its marker.
    fn files(&self, name: &str) -> (PathBuf, PathBuf) {
        (
            self.dir.join(format!("{name}.wasm")),
            self.dir.join(format!(".{name}.wasm{MARKER}")),
        )
    }

    async fn pull(&self, name: &str, source: &OciRef) -> Result<Pulled, OciError> {
        let (file, marker) = self.files(name);
        let registry = &self.registry;
        let digest = match source.digest() {
            Some(digest) => digest.to_owned(),
            None => registry.resolve(source).await?,
        };
        if is_current(&file, &marker, &digest) {
            return Ok(Pulled::Current);
        }
        let pinned = source.pinned(&digest);
        let manifest = registry.manifest(&pinned).await?;
        let layer = wasm_layer(&manifest, &pinned)?;
        let recorded = format!("{digest} {}\n", layer.digest);
        let on_disk = std::fs::read(&file)
            .ok()
            .and_then(|b| digest_of(&layer.digest, &b));
        if on_disk.as_deref() == Some(layer.digest.as_str()) {
            write_atomically(&marker, recorded.as_bytes())?;
            return Ok(Pulled::Current);
        }
        let bytes = registry.layer(&pinned, layer).await?;
        write_atomically(&file, &bytes)?;
        write_atomically(&marker, recorded.as_bytes())?;
        Ok(Pulled::Written(pinned.to_string()))
    }
}

impl Registry {
    /// The digest of the manifest `reference` (a tag) names now.
    pub(crate) async fn resolve(&self, reference: &OciRef) -> Result<String, OciError> {
        self.client
            .fetch_manifest_digest(reference.as_client_ref(), &self.auth(reference))
            .await
            .map_err(OciError::registry(reference))
    }

    /// The image manifest `reference` pins (the client checks its bytes against the digest).
    pub(crate) async fn manifest(&self, reference: &OciRef) -> Result<OciImageManifest, OciError> {
        let (manifest, _) = self
            .client
            .pull_image_manifest(reference.as_client_ref(), &self.auth(reference))
            .await
            .map_err(OciError::registry(reference))?;
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
            .map_err(OciError::registry(reference))?;
        let bytes = bytes.bytes;
        if bytes.len() as i64 != layer.size {
            return Err(OciError::Size {
                reference: reference.to_string(),
                expected: layer.size,
                actual: bytes.len(),
            });
        }
        let actual = digest_of(&layer.digest, &bytes).unwrap_or_default();
        if actual != layer.digest {
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

fn modified(file: Option<&Path>) -> Option<std::time::SystemTime> {
    std::fs::metadata(file?).ok()?.modified().ok()
}

/// Whether `file` is the artifact `manifest` names: its marker records that manifest and a
/// layer digest the file's bytes have.
fn is_current(file: &Path, marker: &Path, manifest: &str) -> bool {
    let Ok(recorded) = std::fs::read_to_string(marker) else {
        return false;
    };
    let Some((recorded_manifest, layer)) = recorded.trim().split_once(' ') else {
        return false;
    };
    recorded_manifest == manifest
        && std::fs::read(file)
            .ok()
            .and_then(|b| digest_of(layer, &b))
            .is_some_and(|actual| actual == layer)
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
