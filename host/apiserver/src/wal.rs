//! The write-ahead log of a server with a data directory.
//!
//! Each write is appended as one line, `<crc32 of the JSON, 8 hex digits> <JSON>`, and
//! fsynced before the request is acknowledged, so every acknowledged write survives a
//! `kill -9`. On start the log is replayed:
//!
//! | What the log holds | On open |
//! |---|---|
//! | whole records | replayed |
//! | a last record cut short (no newline), not UTF-8, not JSON or failing its checksum (a crash mid-append: its write was never acknowledged) | a warning, and the file truncated back to the record before it, so the next append starts a clean line |
//! | such a record before the last | refused: `line N is not a log record (why)` |
//! | lines without a checksum (a log written before checksums) | replayed as JSON |
//!
//! An append that fails (a full disk) is cut back to the last acknowledged record and
//! refused; if that cut fails too, every later write is refused until a restart, so no
//! write is acknowledged after an unreadable line. The directory is fsynced when the log is
//! created and after a compaction renames its snapshot over it. When the log grows past
//! [`COMPACT_AT`] bytes it is rewritten as a snapshot of the live objects (written to a
//! temporary file, fsynced, then renamed over the log).

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::store::StoreKey;

/// Rewrite the log once it is this large.
pub(crate) const COMPACT_AT: u64 = 64 << 20;

/// Why the log could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum WalError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: line {line} is not a log record ({reason})")]
    Corrupt {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error(
        "{path}: an earlier append failed and could not be cut back; writes are refused until a restart"
    )]
    Broken { path: PathBuf },
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
enum Record {
    Put {
        rv: u64,
        key: StoreKey,
        object: Value,
    },
    Delete {
        rv: u64,
        key: StoreKey,
    },
}

/// An open log.
pub(crate) struct Wal {
    path: PathBuf,
    file: File,
    size: u64,
    live: BTreeMap<StoreKey, Value>,
    rv: u64,
    /// An append failed and could not be cut back: every write is refused.
    broken: bool,
}

impl Wal {
    /// Opens (or creates) the log in `dir`, returning it with the objects and the
    /// resourceVersion it holds.
    pub(crate) fn open(dir: &Path) -> Result<(Self, BTreeMap<StoreKey, Value>, u64), WalError> {
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| WalError::Io { path, source }
        };
        // The log holds every object, Secrets included: its directory is created 0700 and
        // the log is kept 0600.
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io(dir))?;
        let path = dir.join("objects.wal");
        let mut live = BTreeMap::new();
        let mut rv = 1;
        let existed = path.exists();
        if existed {
            let bytes = std::fs::read(&path).map_err(io(&path))?;
            let good = replay(&path, &bytes, &mut live, &mut rv)?;
            if good < bytes.len() {
                let file = OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .map_err(io(&path))?;
                file.set_len(good as u64).map_err(io(&path))?;
                file.sync_all().map_err(io(&path))?;
            }
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&path)
            .map_err(io(&path))?;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(io(&path))?;
        if !existed {
            sync_dir(dir).map_err(io(dir))?;
        }
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        let wal = Self {
            path,
            file,
            size,
            live: live.clone(),
            rv,
            broken: false,
        };
        Ok((wal, live, rv))
    }

    /// Logs a put.
    pub(crate) fn put(&mut self, rv: u64, key: &StoreKey, object: &Value) -> Result<(), WalError> {
        self.append(&Record::Put {
            rv,
            key: key.clone(),
            object: object.clone(),
        })?;
        self.live.insert(key.clone(), object.clone());
        self.rv = rv;
        self.maybe_compact()
    }

    /// Logs a deletion.
    pub(crate) fn delete(&mut self, rv: u64, key: &StoreKey) -> Result<(), WalError> {
        self.append(&Record::Delete {
            rv,
            key: key.clone(),
        })?;
        self.live.remove(key);
        self.rv = rv;
        self.maybe_compact()
    }

    fn append(&mut self, record: &Record) -> Result<(), WalError> {
        if self.broken {
            return Err(WalError::Broken {
                path: self.path.clone(),
            });
        }
        let io = |source| WalError::Io {
            path: self.path.clone(),
            source,
        };
        let line = encode(record).map_err(io)?;
        let written = self
            .file
            .write_all(&line)
            .and_then(|()| self.file.sync_data());
        if let Err(source) = written {
            // Cut the partial line away so the next append starts clean.
            let cut = self
                .file
                .set_len(self.size)
                .and_then(|()| self.file.sync_data());
            if let Err(error) = cut {
                tracing::error!(path = %self.path.display(), %error, "cannot cut a failed append back");
                self.broken = true;
            }
            return Err(io(source));
        }
        self.size += line.len() as u64;
        Ok(())
    }

    fn maybe_compact(&mut self) -> Result<(), WalError> {
        if self.size < COMPACT_AT {
            return Ok(());
        }
        let io = |source| WalError::Io {
            path: self.path.clone(),
            source,
        };
        let tmp = self.path.with_extension("wal.tmp");
        let mut out = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(io)?;
        let mut size = 0;
        for (key, object) in &self.live {
            let record = Record::Put {
                rv: self.rv,
                key: key.clone(),
                object: object.clone(),
            };
            let line = encode(&record).map_err(io)?;
            out.write_all(&line).map_err(io)?;
            size += line.len() as u64;
        }
        out.sync_all().map_err(io)?;
        std::fs::rename(&tmp, &self.path).map_err(io)?;
        if let Some(dir) = self.path.parent() {
            sync_dir(dir).map_err(io)?;
        }
        self.file = OpenOptions::new()
            .append(true)
            .open(&self.path)
            .map_err(io)?;
        self.size = size;
        Ok(())
    }
}

/// One record as its line: checksum, space, JSON, newline.
fn encode(record: &Record) -> Result<Vec<u8>, std::io::Error> {
    let json = serde_json::to_vec(record).map_err(std::io::Error::other)?;
    let mut line = format!("{:08x} ", crc32fast::hash(&json)).into_bytes();
    line.extend_from_slice(&json);
    line.push(b'\n');
    Ok(line)
}

/// The record of one line (without its newline), or why it is none.
fn decode(line: &[u8]) -> Result<Record, String> {
    let text = std::str::from_utf8(line).map_err(|_| "it is not UTF-8".to_owned())?;
    let json = match text.split_once(' ') {
        Some((sum, json)) if sum.len() == 8 && !text.starts_with('{') => {
            let expected = u32::from_str_radix(sum, 16)
                .map_err(|_| "its checksum is not hexadecimal".to_owned())?;
            if crc32fast::hash(json.as_bytes()) != expected {
                return Err("its checksum does not match".into());
            }
            json
        }
        // A log written before checksums: the JSON alone.
        _ => text,
    };
    serde_json::from_str(json).map_err(|e| format!("it is not a record: {e}"))
}

/// Replays `bytes` into `live` and `rv`; returns how many bytes hold whole records (what
/// the file is cut back to when a torn last record follows them).
fn replay(
    path: &Path,
    bytes: &[u8],
    live: &mut BTreeMap<StoreKey, Value>,
    rv: &mut u64,
) -> Result<usize, WalError> {
    let mut good = 0;
    let mut line_number = 0;
    while good < bytes.len() {
        line_number += 1;
        let rest = &bytes[good..];
        let (line, end) = match rest.iter().position(|b| *b == b'\n') {
            Some(newline) => (&rest[..newline], good + newline + 1),
            None => (rest, bytes.len()),
        };
        let last = end == bytes.len();
        let complete = rest.len() > line.len();
        let record = if complete {
            decode(line)
        } else {
            Err("it is cut short".to_owned())
        };
        match record {
            Ok(Record::Put { rv: r, key, object }) => {
                *rv = (*rv).max(r);
                live.insert(key, object);
            }
            Ok(Record::Delete { rv: r, key }) => {
                *rv = (*rv).max(r);
                live.remove(&key);
            }
            Err(reason) if last => {
                tracing::warn!(path = %path.display(), line = line_number, reason, "dropping a torn last record");
                return Ok(good);
            }
            Err(reason) => {
                return Err(WalError::Corrupt {
                    path: path.to_owned(),
                    line: line_number,
                    reason,
                });
            }
        }
        good = end;
    }
    Ok(good)
}

/// Makes a rename or a creation in `dir` durable.
fn sync_dir(dir: &Path) -> Result<(), std::io::Error> {
    File::open(dir)?.sync_all()
}

#[cfg(test)]
#[path = "wal_tests.rs"]
mod tests;
