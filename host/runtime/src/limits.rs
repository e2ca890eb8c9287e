//! Per-pass limits: a deadline, a memory cap and optional fuel.

use std::time::Duration;

/// The limits of one pass of a plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time a pass may take, host calls included.
    pub deadline: Duration,
    /// Bytes of linear memory the guest may grow to.
    pub memory_bytes: usize,
    /// Wasm instructions (fuel units) a pass may execute; `None` for no count. Only
    /// enforced by a runtime built with [`RuntimeConfig::fuel`](super::RuntimeConfig).
    pub fuel: Option<u64>,
}

impl Limits {
    /// 30 s: the slowest legitimate pass generates an RSA-8192 key natively (~10 s).
    pub(crate) const DEFAULT_DEADLINE: Duration = Duration::from_secs(30);
    /// 256 MiB.
    pub(crate) const DEFAULT_MEMORY_BYTES: usize = 256 << 20;
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            deadline: Self::DEFAULT_DEADLINE,
            memory_bytes: Self::DEFAULT_MEMORY_BYTES,
            fuel: None,
        }
    }
}

/// Caps a store's linear memory and remembers whether the cap was hit, so that the abort a
/// guest makes when its allocation fails is told apart from any other trap.
#[derive(Debug)]
pub(crate) struct MemoryCap {
    limit: usize,
    denied: Option<usize>,
}

impl MemoryCap {
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            limit,
            denied: None,
        }
    }

    /// The size a refused growth asked for, if any growth was refused.
    pub(crate) fn denied(&self) -> Option<usize> {
        self.denied
    }
}

/// Most table elements a guest may grow to (Rust guests need a few hundred).
const MAX_TABLE_ELEMENTS: usize = 1 << 20;

impl wasmtime::ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.limit {
            self.denied = Some(desired);
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}
