//! The precompiled-artifact cache.
//!
//! A component is compiled once; the artifact is stored as `<sha256>-<engine>.cwasm`, where
//! `<engine>` hashes the engine's precompile-compatibility key (wasmtime's version and every
//! compilation setting). A later
//! start (or another host with the same engine) loads the artifact instead of compiling.
//!
//! DECISION: loading an artifact maps native code from the file, so the cache directory
//! must be writable only by the operator (it is, under its own cache home); a file that
//! fails to load is recompiled and replaced rather than trusted.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use wasmtime::Engine;
use wasmtime::component::Component;

/// Whether a component came from the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// The precompiled artifact was loaded; nothing was compiled.
    Loaded,
    /// The component was compiled (and stored, when a cache directory is set).
    Compiled,
}

/// Why a component could not be compiled or loaded.
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
}

/// Compiles components, or loads them precompiled.
#[derive(Debug, Clone)]
pub(crate) struct ArtifactCache {
    dir: Option<PathBuf>,
    engine_key: String,
}

impl ArtifactCache {
    /// A cache in `dir` (none: compile every time) for `engine`.
    pub(crate) fn new(dir: Option<PathBuf>, engine: &Engine) -> Self {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        Self {
            dir,
            engine_key: format!("{:016x}", hasher.finish()),
        }
    }

    /// The artifact's path for a component with this sha256.
    pub(crate) fn artifact_path(&self, sha256: &str) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|d| d.join(format!("{sha256}-{}.cwasm", self.engine_key)))
    }

    /// The component for `bytes` (whose sha256 is `sha256`).
    pub(crate) fn component(
        &self,
        engine: &Engine,
        bytes: &[u8],
        sha256: &str,
    ) -> Result<(Component, CacheOutcome), CacheError> {
        let Some(path) = self.artifact_path(sha256) else {
            return Ok((
                Component::new(engine, bytes).map_err(CacheError::Compile)?,
                CacheOutcome::Compiled,
            ));
        };
        if path.exists() {
            // SAFETY: the artifact was written by `store` below into the operator's own cache
            // directory, for this engine configuration (its name carries the engine key), and
            // wasmtime checks the engine compatibility header before mapping it.
            match unsafe { Component::deserialize_file(engine, &path) } {
                Ok(component) => return Ok((component, CacheOutcome::Loaded)),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "recompiling an unreadable artifact")
                }
            }
        }
        let artifact = engine
            .precompile_component(bytes)
            .map_err(CacheError::Compile)?;
        store(&path, &artifact)?;
        // SAFETY: `artifact` was produced by this engine just above.
        let component =
            unsafe { Component::deserialize(engine, &artifact) }.map_err(CacheError::Compile)?;
        Ok((component, CacheOutcome::Compiled))
    }
}

/// Writes `artifact` to `path` atomically (temporary file, then rename).
fn store(path: &Path, artifact: &[u8]) -> Result<(), CacheError> {
    let failed = |source| CacheError::Write {
        path: path.to_owned(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(failed)?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, artifact).map_err(failed)?;
    std::fs::rename(&tmp, path).map_err(failed)
}

/// The default cache directory: `$XDG_CACHE_HOME/wasm-operator`, else
/// `$HOME/.cache/wasm-operator`.
pub(crate) fn default_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|d| d.join("wasm-operator"))
}
