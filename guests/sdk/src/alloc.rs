//! [`PassAllocator`]: a bump allocator for plugins whose instance lives for one pass.
//!
//! The host gives every reconcile pass a fresh instance and drops it afterwards, so a
//! plugin's heap never outlives a pass. This allocator takes that at its word: it hands out
//! memory from the end of the linear memory upwards and never reuses freed memory, except
//! the latest allocation, which a free gives back and a realloc grows or shrinks in place
//! (a growing `Vec` or `String` stays where it is). Allocation is a bounds check and an
//! add; a free is nothing. The price is the memory: a pass uses what it allocated in total,
//! not what it held at most, within the plugin's memory cap (a pass over it fails with the
//! host's memory-cap error, as any other).
//!
//! Opt in from the plugin crate, for its wasm build:
//!
//! ```ignore
//! #[cfg(target_arch = "wasm32")]
//! #[global_allocator]
//! static ALLOCATOR: wasm_operator_sdk::alloc::PassAllocator =
//!     wasm_operator_sdk::alloc::PassAllocator::new();
//! ```
//!
//! Not for a plugin the host keeps across calls (a planner serves every plan call of a pass
//! from one instance) unless its calls allocate little.

use std::alloc::Layout;
use std::cell::Cell;

/// Bytes of one wasm page.
const PAGE: usize = 64 * 1024;
/// Pages asked of the host at least at a time (128 KiB): few steps, and little memory past
/// what the pass uses (the host resets all of it after the pass).
const GROW_PAGES: usize = 2;

/// Where the free memory is: `[top, end)`, and the start of the latest allocation.
#[derive(Debug, Default)]
struct Arena {
    top: Cell<usize>,
    end: Cell<usize>,
    last: Cell<usize>,
}

/// How an arena gets more memory: `grow(pages)` adds that many pages and returns the
/// address where they start, or `None` when refused.
trait Memory {
    fn grow(&self, pages: usize) -> Option<usize>;
}

impl Arena {
    const fn new() -> Self {
        Self {
            top: Cell::new(0),
            end: Cell::new(0),
            last: Cell::new(usize::MAX),
        }
    }

    fn alloc(&self, layout: Layout, memory: &impl Memory) -> *mut u8 {
        self.try_alloc(layout, memory)
            .map_or(std::ptr::null_mut(), |start| start as *mut u8)
    }

    fn try_alloc(&self, layout: Layout, memory: &impl Memory) -> Option<usize> {
        let (size, align) = (layout.size(), layout.align());
        let mut start = align_up(self.top.get(), align)?;
        if start.checked_add(size)? > self.end.get() {
            // Enough for the block wherever the new pages start (`start` is at most
            // `align - 1` past `end`).
            let pages = size.checked_add(align)?.div_ceil(PAGE).max(GROW_PAGES);
            let base = memory.grow(pages)?;
            if base != self.end.get() {
                // Not contiguous (the first grow, or memory grown by someone else): the
                // old tail is left unused.
                start = align_up(base, align)?;
            }
            self.end.set(base.checked_add(pages.checked_mul(PAGE)?)?);
        }
        self.top.set(start + size);
        self.last.set(start);
        Some(start)
    }

    fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let start = ptr as usize;
        if start == self.last.get() && start + layout.size() == self.top.get() {
            self.top.set(start);
            self.last.set(usize::MAX);
        }
    }

    fn realloc(
        &self,
        ptr: *mut u8,
        layout: Layout,
        new_size: usize,
        memory: &impl Memory,
    ) -> *mut u8 {
        let start = ptr as usize;
        let is_last = start == self.last.get() && start + layout.size() == self.top.get();
        if is_last {
            if new_size <= layout.size() {
                self.top.set(start + new_size);
                return ptr;
            }
            if let Some(end) = start.checked_add(new_size)
                && end <= self.end.get()
            {
                self.top.set(end);
                return ptr;
            }
        } else if new_size <= layout.size() {
            return ptr;
        }
        let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
            return std::ptr::null_mut();
        };
        let new = self.alloc(new_layout, memory);
        if !new.is_null() {
            // SAFETY: both blocks are live and at least `layout.size()` long; a new block
            // never overlaps an old one (the arena only moves up).
            unsafe { std::ptr::copy_nonoverlapping(ptr, new, layout.size()) };
        }
        new
    }
}

fn align_up(address: usize, align: usize) -> Option<usize> {
    Some(address.checked_add(align - 1)? & !(align - 1))
}

/// The linear memory of a wasm instance.
#[cfg(target_arch = "wasm32")]
struct LinearMemory;

#[cfg(target_arch = "wasm32")]
impl Memory for LinearMemory {
    fn grow(&self, pages: usize) -> Option<usize> {
        let before = core::arch::wasm32::memory_grow(0, pages);
        (before != usize::MAX).then(|| before * PAGE)
    }
}

/// The bump allocator of a plugin's wasm build (see the module documentation).
#[cfg(target_arch = "wasm32")]
pub struct PassAllocator {
    arena: Arena,
}

#[cfg(target_arch = "wasm32")]
impl PassAllocator {
    /// The allocator; it takes memory from the host at the first allocation.
    pub const fn new() -> Self {
        Self {
            arena: Arena::new(),
        }
    }
}

#[cfg(target_arch = "wasm32")]
impl Default for PassAllocator {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: a wasm32 plugin instance runs one thread.
#[cfg(target_arch = "wasm32")]
unsafe impl Sync for PassAllocator {}

#[cfg(target_arch = "wasm32")]
// SAFETY: blocks are disjoint, aligned as asked and at least as long as asked; a block is
// only reused after its own free or realloc.
unsafe impl std::alloc::GlobalAlloc for PassAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.arena.alloc(layout, &LinearMemory)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.arena.dealloc(ptr, layout);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        self.arena.realloc(ptr, layout, new_size, &LinearMemory)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Up to `limit` pages of a buffer, handed out in order.
    struct Buffer {
        base: usize,
        pages: Cell<usize>,
        limit: usize,
        _bytes: Vec<u8>,
    }

    impl Buffer {
        fn new(limit: usize) -> Self {
            let bytes = vec![0u8; (limit + 1) * PAGE];
            let base = align_up(bytes.as_ptr() as usize, PAGE).expect("aligned");
            Self {
                base,
                pages: Cell::new(0),
                limit,
                _bytes: bytes,
            }
        }
    }

    impl Memory for Buffer {
        fn grow(&self, pages: usize) -> Option<usize> {
            let used = self.pages.get();
            (used + pages <= self.limit).then(|| {
                self.pages.set(used + pages);
                self.base + used * PAGE
            })
        }
    }

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).expect("layout")
    }

    #[test]
    fn blocks_are_aligned_and_disjoint_and_memory_grows_a_mebibyte_at_a_time() {
        let memory = Buffer::new(128);
        let arena = Arena::new();
        let a = arena.alloc(layout(3, 1), &memory) as usize;
        let b = arena.alloc(layout(16, 8), &memory) as usize;
        let c = arena.alloc(layout(5, 64), &memory) as usize;
        assert_eq!((b % 8, c % 64), (0, 0));
        assert!(a + 3 <= b && b + 16 <= c, "{a} {b} {c}");
        assert_eq!(memory.pages.get(), GROW_PAGES, "one grow for small blocks");
        let big = arena.alloc(layout(3 * 1024 * 1024, 8), &memory) as usize;
        assert!(big >= c + 5);
        assert_eq!(
            memory.pages.get(),
            GROW_PAGES + 49,
            "3 MiB and 8 bytes take 49 pages"
        );
    }

    #[test]
    fn the_latest_block_is_given_back_by_a_free_and_resized_in_place() {
        let memory = Buffer::new(64);
        let arena = Arena::new();
        let a = arena.alloc(layout(10, 1), &memory);
        let b = arena.alloc(layout(10, 1), &memory);
        let grown = arena.realloc(b, layout(10, 1), 1000, &memory);
        assert_eq!(grown, b, "the latest block grows where it is");
        arena.dealloc(grown, layout(1000, 1));
        let again = arena.alloc(layout(4, 1), &memory);
        assert_eq!(again, b, "its memory is used again");
        arena.dealloc(a, layout(10, 1));
        let after = arena.alloc(layout(4, 1), &memory);
        assert!(after > again, "an earlier block's memory is not reused");
    }

    #[test]
    fn an_earlier_block_grown_moves_with_its_bytes() {
        let memory = Buffer::new(64);
        let arena = Arena::new();
        let a = arena.alloc(layout(4, 1), &memory);
        // SAFETY: `a` is a live block of 4 bytes inside the buffer.
        unsafe { std::ptr::copy_nonoverlapping(b"abcd".as_ptr(), a, 4) };
        let _b = arena.alloc(layout(4, 1), &memory);
        let moved = arena.realloc(a, layout(4, 1), 8, &memory);
        assert_ne!(moved, a);
        // SAFETY: `moved` is a live block of 8 bytes whose first 4 were copied.
        let bytes = unsafe { std::slice::from_raw_parts(moved, 4) };
        assert_eq!(bytes, b"abcd");
    }

    #[test]
    fn an_allocation_the_memory_cannot_grow_for_is_a_null_pointer() {
        let memory = Buffer::new(20);
        let arena = Arena::new();
        assert!(!arena.alloc(layout(PAGE, 8), &memory).is_null(), "16 pages");
        assert!(
            arena.alloc(layout(16 * PAGE, 8), &memory).is_null(),
            "17 more pages are over the 20"
        );
        assert!(
            !arena.alloc(layout(8, 8), &memory).is_null(),
            "what is left serves"
        );
    }
}
