//! The key artifacts are sealed with: a file read at start (outside the cache directory),
//! or, when none is configured, a random key kept in memory for the life of the process
//! (artifacts cached by an earlier process then do not verify and are recompiled).

use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::Path;
use std::sync::Mutex;

use ring::hmac;
use ring::rand::SecureRandom as _;

use super::CacheError;

/// The fewest bytes a key file must hold.
const MIN_KEY_LEN: usize = 32;

/// The random key of this process, drawn on first use.
static PROCESS_KEY: Mutex<Option<[u8; MIN_KEY_LEN]>> = Mutex::new(None);

/// Writes a new random key to `path`, readable by its owner only (`0400`), unless a file is
/// already there: that one is kept, never overwritten (`wasm-operator cache-key`, which an
/// init container may run again over the same volume). Returns whether a key was written.
pub fn write_new_key(path: &Path) -> Result<bool, CacheError> {
    let refuse = |reason: String| CacheError::Key {
        path: path.to_owned(),
        reason,
    };
    let mut bytes = [0; MIN_KEY_LEN];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| CacheError::Random)?;
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o400)
        .open(path);
    let mut file = match created {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(refuse(format!("cannot create: {e}"))),
    };
    file.write_all(&bytes)
        .map_err(|e| refuse(format!("cannot write: {e}")))?;
    Ok(true)
}

/// An HMAC-SHA256 key. Its bytes are never logged or shown.
pub(crate) struct CacheKey(hmac::Key);

impl std::fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CacheKey(..)")
    }
}

impl CacheKey {
    /// The key in `path`: at least 32 bytes, not writable by its group or others, and not
    /// inside `cache_dir` (whoever can write artifacts must not be able to read or replace
    /// the key). A symlink is followed (Secret volumes are symlinks).
    pub(crate) fn from_file(path: &Path, cache_dir: &Path) -> Result<Self, CacheError> {
        let refuse = |reason: String| CacheError::Key {
            path: path.to_owned(),
            reason,
        };
        let bytes = std::fs::read(path).map_err(|e| refuse(format!("cannot read: {e}")))?;
        let meta = std::fs::metadata(path).map_err(|e| refuse(format!("cannot read: {e}")))?;
        let mode = meta.permissions().mode();
        if mode & 0o022 != 0 {
            return Err(refuse(format!(
                "is writable by its group or by others (mode {:o})",
                mode & 0o777
            )));
        }
        if let (Ok(key), Ok(dir)) = (path.canonicalize(), cache_dir.canonicalize())
            && key.starts_with(&dir)
        {
            return Err(refuse(format!(
                "is inside the cache directory {}",
                dir.display()
            )));
        }
        if bytes.len() < MIN_KEY_LEN {
            return Err(refuse(format!(
                "must hold at least {MIN_KEY_LEN} bytes (it holds {})",
                bytes.len()
            )));
        }
        Ok(Self(hmac::Key::new(hmac::HMAC_SHA256, &bytes)))
    }

    /// The random key of this process (the same for every runtime it starts).
    pub(crate) fn for_process() -> Result<Self, CacheError> {
        let mut slot = PROCESS_KEY
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let bytes = match *slot {
            Some(bytes) => bytes,
            None => {
                let mut bytes = [0; MIN_KEY_LEN];
                ring::rand::SystemRandom::new()
                    .fill(&mut bytes)
                    .map_err(|_| CacheError::Random)?;
                tracing::info!(
                    "no artifact cache key file is configured: using a random key for this \
                     process, so artifacts cached by earlier processes are recompiled"
                );
                *slot = Some(bytes);
                bytes
            }
        };
        Ok(Self(hmac::Key::new(hmac::HMAC_SHA256, &bytes)))
    }

    /// The tag of `message`.
    pub(super) fn tag(&self, message: &[u8]) -> [u8; 32] {
        let mut tag = [0; 32];
        tag.copy_from_slice(hmac::sign(&self.0, message).as_ref());
        tag
    }

    /// Whether `tag` is the tag of `message` (compared in constant time).
    pub(super) fn verify(&self, message: &[u8], tag: &[u8]) -> bool {
        hmac::verify(&self.0, message, tag).is_ok()
    }
}
