//! The write-ahead log of a server with a data directory.
//!
//! Each write is appended as one JSON line and fsynced before the request is acknowledged,
//! so every acknowledged write survives a `kill -9`. On start the log is replayed; a torn
//! last line (a crash mid-append) is dropped, since its write was never acknowledged. When
//! the log grows past [`COMPACT_AT`] bytes it is rewritten as a snapshot of the live
//! objects (written to a temporary file, fsynced, then renamed over the log).

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
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
    #[error("{path}: line {line} is not a log record: {source}")]
    Corrupt {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
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
}

impl Wal {
    /// Opens (or creates) the log in `dir`, returning it with the objects and the
    /// resourceVersion it holds.
    pub(crate) fn open(dir: &Path) -> Result<(Self, BTreeMap<StoreKey, Value>, u64), WalError> {
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| WalError::Io { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let path = dir.join("objects.wal");
        let mut live = BTreeMap::new();
        let mut rv = 1;
        if path.exists() {
            let reader = BufReader::new(File::open(&path).map_err(io(&path))?);
            let lines: Vec<String> = reader
                .lines()
                .collect::<Result<_, _>>()
                .map_err(io(&path))?;
            let last = lines.len().saturating_sub(1);
            for (i, line) in lines.iter().enumerate() {
                match serde_json::from_str::<Record>(line) {
                    Ok(Record::Put { rv: r, key, object }) => {
                        rv = rv.max(r);
                        live.insert(key, object);
                    }
                    Ok(Record::Delete { rv: r, key }) => {
                        rv = rv.max(r);
                        live.remove(&key);
                    }
                    Err(e) if i == last => {
                        tracing::warn!(path = %path.display(), error = %e, "dropping a torn last record")
                    }
                    Err(source) => {
                        return Err(WalError::Corrupt {
                            path,
                            line: i + 1,
                            source,
                        });
                    }
                }
            }
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io(&path))?;
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        let wal = Self {
            path,
            file,
            size,
            live: live.clone(),
            rv,
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
        let io = |source| WalError::Io {
            path: self.path.clone(),
            source,
        };
        let mut line = serde_json::to_vec(record).map_err(|e| io(std::io::Error::other(e)))?;
        line.push(b'\n');
        self.file.write_all(&line).map_err(io)?;
        self.file.sync_data().map_err(io)?;
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
        let mut out = File::create(&tmp).map_err(io)?;
        let mut size = 0;
        for (key, object) in &self.live {
            let record = Record::Put {
                rv: self.rv,
                key: key.clone(),
                object: object.clone(),
            };
            let mut line = serde_json::to_vec(&record).map_err(|e| io(std::io::Error::other(e)))?;
            line.push(b'\n');
            out.write_all(&line).map_err(io)?;
            size += line.len() as u64;
        }
        out.sync_all().map_err(io)?;
        std::fs::rename(&tmp, &self.path).map_err(io)?;
        self.file = OpenOptions::new()
            .append(true)
            .open(&self.path)
            .map_err(io)?;
        self.size = size;
        Ok(())
    }
}
