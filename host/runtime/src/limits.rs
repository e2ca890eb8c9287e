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
    /// The longest an HTTP request may wait to connect, for its response head, and between
    /// two frames of its body; also the timeout of each of those the guest leaves unset.
    pub http_timeout: Duration,
    /// The most bytes of one HTTP response body.
    pub http_response_bytes: usize,
}

impl Limits {
    /// 30 s: the slowest legitimate pass generates an RSA-8192 key natively (~10 s).
    pub(crate) const DEFAULT_DEADLINE: Duration = Duration::from_secs(30);
    /// 256 MiB.
    pub(crate) const DEFAULT_MEMORY_BYTES: usize = 256 << 20;
    /// 10 s.
    pub const DEFAULT_HTTP_TIMEOUT: Duration = Duration::from_secs(10);
    /// 3 MiB: as large as any object the API server takes.
    pub const DEFAULT_HTTP_RESPONSE_BYTES: usize = wasm_operator_types::MAX_REQUEST_BODY;
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            deadline: Self::DEFAULT_DEADLINE,
            memory_bytes: Self::DEFAULT_MEMORY_BYTES,
            fuel: None,
            http_timeout: Self::DEFAULT_HTTP_TIMEOUT,
            http_response_bytes: Self::DEFAULT_HTTP_RESPONSE_BYTES,
        }
    }
}

/// Caps the sum of a store's linear memories (a component may hold several) and remembers
/// whether the cap was hit, so that the abort a guest makes when its allocation fails is
/// told apart from any other trap.
///
/// wasmtime asks before creating or growing any memory of the store with the memory's
/// current and desired size: the difference is what the store's total grows by. Memories
/// never shrink and are freed only with the store, so the total only rises.
#[derive(Debug)]
pub(crate) struct MemoryCap {
    limit: usize,
    total: usize,
    /// The growth allowed last, taken back if wasmtime then fails it.
    pending: usize,
    denied: Option<usize>,
}

impl MemoryCap {
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            limit,
            total: 0,
            pending: 0,
            denied: None,
        }
    }

    /// The store's total a refused growth asked for, if any growth was refused.
    pub(crate) fn denied(&self) -> Option<usize> {
        self.denied
    }
}

/// Most table elements a guest may grow to (Rust guests need a few hundred).
const MAX_TABLE_ELEMENTS: usize = 1 << 20;

impl wasmtime::ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let growth = desired.saturating_sub(current);
        let total = self.total.saturating_add(growth);
        if total > self.limit {
            self.denied = Some(total);
            return Ok(false);
        }
        self.total = total;
        self.pending = growth;
        Ok(true)
    }

    fn memory_grow_failed(&mut self, _error: wasmtime::Error) -> wasmtime::Result<()> {
        self.total -= std::mem::take(&mut self.pending);
        Ok(())
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

#[cfg(test)]
mod tests {
    use wasmtime::component::{Component, Linker};
    use wasmtime::{ResourceLimiter as _, Store};

    use super::MemoryCap;
    use crate::{Runtime, RuntimeConfig};

    /// A component of two core instances, each with a memory of one page that its start
    /// function grows by `pages` (trapping when the growth is refused).
    fn two_growing_memories(pages: u32) -> Vec<u8> {
        let module = format!(
            "(core module $m (memory 1)
               (func $grow (if (i32.eq (memory.grow (i32.const {pages})) (i32.const -1))
                 (then unreachable)))
               (start $grow))"
        );
        wat::parse_str(format!(
            "(component {module} (core instance $a (instantiate $m)) (core instance $b (instantiate $m)))"
        ))
        .expect("the component text parses")
    }

    async fn instantiate(cap: usize) -> (Result<(), wasmtime::Error>, Option<usize>) {
        let runtime = Runtime::new(RuntimeConfig {
            cache_dir: None,
            ..RuntimeConfig::default()
        })
        .expect("the runtime starts");
        // 20 MiB a memory (320 pages of 64 KiB), 40 MiB in all.
        let component =
            Component::new(runtime.engine(), two_growing_memories(319)).expect("compiles");
        let mut store = Store::new(runtime.engine(), MemoryCap::new(cap));
        store.limiter(|cap| cap);
        store.set_epoch_deadline(u64::MAX / 2);
        let result = Linker::new(runtime.engine())
            .instantiate_async(&mut store, &component)
            .await
            .map(drop);
        (result, store.data().denied())
    }

    #[tokio::test]
    async fn the_memory_cap_counts_every_memory_of_the_store() {
        let (within, denied) = instantiate(48 << 20).await;
        within.expect("40 MiB fit a 48 MiB cap");
        assert_eq!(denied, None);

        let (over, denied) = instantiate(32 << 20).await;
        assert!(over.is_err(), "two 20 MiB memories exceed a 32 MiB cap");
        assert_eq!(denied, Some(40 << 20), "the total asked for");
    }

    #[test]
    fn a_growth_wasmtime_fails_is_taken_back() {
        let mut cap = MemoryCap::new(10);
        assert!(cap.memory_growing(0, 6, None).expect("asks"));
        cap.memory_grow_failed(wasmtime::Error::msg("no slot"))
            .expect("taken back");
        assert!(
            cap.memory_growing(0, 10, None).expect("asks"),
            "the 6 came back"
        );
        assert!(!cap.memory_growing(10, 11, None).expect("asks"));
        assert_eq!(cap.denied(), Some(11));
    }
}
