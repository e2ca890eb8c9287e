//! The cache's files as the operator alone may write them: the directory `0700` and owned by
//! this process's user, artifacts opened without following symlinks and written `0600`.

use std::fs::{DirBuilder, OpenOptions};
use std::io::{Read as _, Write as _};
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use super::CacheError;

/// Creates `dir` (and missing parents) `0700`, then refuses it unless it is a directory
/// owned by this process's user that neither its group nor others can write to.
pub(super) fn prepare_dir(dir: &Path) -> Result<(), CacheError> {
    let failed = |source| CacheError::Dir {
        path: dir.to_owned(),
        source,
    };
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(failed)?;
    let meta = std::fs::metadata(dir).map_err(failed)?;
    let unsafe_dir = |reason: String| CacheError::UnsafeDir {
        path: dir.to_owned(),
        reason,
    };
    if !meta.is_dir() {
        return Err(unsafe_dir("it is not a directory".into()));
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    if meta.uid() != uid {
        return Err(unsafe_dir(format!(
            "it is owned by uid {}, not by this process's uid {uid}",
            meta.uid()
        )));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(unsafe_dir(format!(
            "it is writable by its group or by others (mode {:o}; make it 0700)",
            meta.mode() & 0o777
        )));
    }
    Ok(())
}

/// The bytes of the regular file at `path`, opened without following a symlink; `None`
/// when there is none. A symlink, a FIFO or a device is an error.
pub(super) fn read_nofollow(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    let opened = OpenOptions::new()
        .read(true)
        // O_NONBLOCK: opening a FIFO planted here must not block.
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path);
    let mut file = match opened {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}

/// Distinguishes the temporary files of concurrent writes in this process.
static WRITES: AtomicU64 = AtomicU64::new(0);

/// Writes `parts` to `path` in `dir` atomically: a new temporary file created `0600` (never
/// through a symlink), then a rename over whatever is at `path` (a symlink is replaced,
/// not written through). Not fsynced: an artifact cut short by a crash fails its tag and
/// is recompiled.
pub(super) fn write_private(dir: &Path, path: &Path, parts: &[&[u8]]) -> Result<(), CacheError> {
    let failed = |source| CacheError::Write {
        path: path.to_owned(),
        source,
    };
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(failed)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)?;
        for part in parts {
            file.write_all(part)?;
        }
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map_err(failed)
}
