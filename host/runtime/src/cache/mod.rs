//! The precompiled-artifact cache.
//!
//! A component is compiled once; the artifact is stored as `<sha256>-<engine>.cwasm`, where
//! `<engine>` hashes the engine's precompile-compatibility key (wasmtime's version and every
//! compilation setting). A later start (or another host with the same engine and cache key)
//! loads the artifact instead of compiling.
//!
//! Loading an artifact runs native code from it, so nothing found in the directory is
//! trusted:
//! - each artifact is stored [sealed](seal): behind an HMAC-SHA256 tag over the artifact,
//!   the engine key and the component's sha256, under a [key](key) kept outside the
//!   directory. An artifact is deserialized only after its tag verifies; one that does not
//!   (planted, copied from another component, stored under another key, truncated) is
//!   recompiled and replaced, with a warning, and counted ([`ArtifactCache::rejected`]);
//! - artifacts are [opened](files) without following symlinks and must be regular files;
//!   the bytes verified are the bytes deserialized (read into memory, never mapped from the
//!   path);
//! - artifacts are written to a temporary file created `0600`, then renamed into place;
//!   the directory is created `0700`, and one that is writable by its group or by others,
//!   or owned by another user, is refused when the cache is opened.

mod files;
mod key;
mod seal;
#[cfg(test)]
mod tests;

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use wasmtime::Engine;
use wasmtime::component::Component;

use key::CacheKey;
pub use key::write_new_key;

/// Whether a component came from the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// The precompiled artifact was loaded; nothing was compiled.
    Loaded,
    /// The component was compiled (and stored, when a cache directory is set).
    Compiled,
    /// An artifact was found under the component's name and refused (its tag did not
    /// verify, or it was not a regular file): the component was compiled and the artifact
    /// replaced.
    Recompiled,
}

/// Why the cache cannot be used, or a component could not be compiled or loaded.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// Cranelift refused the component.
    #[error("cannot compile: {0:#}")]
    Compile(#[source] wasmtime::Error),
    /// The cache directory could not be written.
    #[error("cannot write the precompiled artifact {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The cache directory cannot be created or inspected.
    #[error("cannot create the artifact cache directory {path}: {source}")]
    Dir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The cache directory could be written by someone else than the operator.
    #[error("refusing the artifact cache directory {path}: {reason}")]
    UnsafeDir { path: PathBuf, reason: String },
    /// The key file cannot be used.
    #[error("the artifact cache key {path}: {reason}")]
    Key { path: PathBuf, reason: String },
    /// No key file is configured, and the system gave no random bytes for one.
    #[error("cannot draw a random artifact cache key from the system")]
    Random,
}

/// Compiles components, or loads them precompiled and verified.
#[derive(Debug)]
pub(crate) struct ArtifactCache {
    /// The directory and the key its artifacts are sealed with; none: compile every time.
    store: Option<(PathBuf, CacheKey)>,
    /// Whether the key is this process's random one: then every artifact an earlier
    /// process sealed fails its tag, as expected, and is replaced without a warning.
    ephemeral_key: bool,
    engine_key: String,
    rejected: AtomicU64,
}

impl ArtifactCache {
    /// A cache in `dir` (none: compile every time) for `engine`, its artifacts sealed with
    /// the key in `key_file` (none: a random key for this process). The directory is created
    /// `0700` when missing, and refused when others can write to it.
    pub(crate) fn open(
        dir: Option<PathBuf>,
        key_file: Option<&Path>,
        engine: &Engine,
    ) -> Result<Self, CacheError> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let store = match dir {
            Some(dir) => {
                files::prepare_dir(&dir)?;
                let key = match key_file {
                    Some(path) => CacheKey::from_file(path, &dir)?,
                    None => CacheKey::for_process()?,
                };
                Some((dir, key))
            }
            None => None,
        };
        Ok(Self {
            store,
            ephemeral_key: key_file.is_none(),
            engine_key: format!("{:016x}", hasher.finish()),
            rejected: AtomicU64::new(0),
        })
    }

    /// How many artifacts found in the directory were refused (and replaced) so far.
    pub(crate) fn rejected(&self) -> u64 {
        self.rejected.load(Ordering::Relaxed)
    }

    /// The artifact's path for a component with this sha256.
    fn artifact_path(dir: &Path, sha256: &str, engine_key: &str) -> PathBuf {
        dir.join(format!("{sha256}-{engine_key}.cwasm"))
    }

    /// The component for `bytes` (whose sha256 is `sha256`).
    pub(crate) fn component(
        &self,
        engine: &Engine,
        bytes: &[u8],
        sha256: &str,
    ) -> Result<(Component, CacheOutcome), CacheError> {
        let Some((dir, key)) = &self.store else {
            return Ok((
                Component::new(engine, bytes).map_err(CacheError::Compile)?,
                CacheOutcome::Compiled,
            ));
        };
        let path = Self::artifact_path(dir, sha256, &self.engine_key);
        let context = seal::Context {
            engine_key: &self.engine_key,
            sha256,
        };
        let refused: Option<std::borrow::Cow<'static, str>> = match files::read_nofollow(&path) {
            Ok(None) => None,
            Ok(Some(file)) => match seal::open(key, &context, &file) {
                Ok(artifact) => {
                    // SAFETY: `artifact` carries a tag only this cache's key can make, over
                    // these bytes, this engine key and this component's sha256: it is what
                    // `seal::header` sealed below after this engine compiled this component. The
                    // bytes are in memory, so what was verified is what is deserialized.
                    match unsafe { Component::deserialize(engine, artifact) } {
                        Ok(component) => return Ok((component, CacheOutcome::Loaded)),
                        Err(e) => Some(format!("cannot deserialize: {e:#}").into()),
                    }
                }
                Err(reason) => Some(reason.into()),
            },
            Err(e) => Some(format!("cannot open it without following links: {e}").into()),
        };
        let outcome = match refused {
            Some(reason) => {
                self.rejected.fetch_add(1, Ordering::Relaxed);
                let reason = reason.as_ref();
                if self.ephemeral_key && reason == seal::TAG_MISMATCH {
                    tracing::debug!(path = %path.display(), "replacing an artifact an earlier process cached under its own key");
                } else {
                    tracing::warn!(path = %path.display(), reason, "refusing a cached artifact: recompiling and replacing it");
                }
                CacheOutcome::Recompiled
            }
            None => CacheOutcome::Compiled,
        };
        let artifact = engine
            .precompile_component(bytes)
            .map_err(CacheError::Compile)?;
        let header = seal::header(key, &context, &artifact);
        files::write_private(dir, &path, &[&header, &artifact])?;
        // SAFETY: `artifact` was produced by this engine just above.
        let component =
            unsafe { Component::deserialize(engine, &artifact) }.map_err(CacheError::Compile)?;
        Ok((component, outcome))
    }
}

/// The default cache directory: `$XDG_CACHE_HOME/wasm-operator`, else
/// `$HOME/.cache/wasm-operator`.
pub(crate) fn default_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|d| d.join("wasm-operator"))
}
