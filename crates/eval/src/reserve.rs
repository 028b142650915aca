//! An allocator for the process (the `twill` binary installs it): the
//! system allocator with a reserve, so that
//! running out of memory is an `error: out of memory` at the program's line
//! and not an abort that loses the buffered output (the quality bar:
//! nothing may crash the interpreter). At start-up the reserve takes 256
//! MiB of address space, never touched (so it costs no physical memory):
//! enough for the C allocator to map a fresh heap for a thread's arena,
//! which takes twice its 64 MiB heap size while it aligns it. When memory
//! is still held after an error (a REPL variable that grew), the reserve
//! is taken again at the largest size that fits, down to 16 MiB. When
//! an allocation the reserve could cover fails, the reserve is given back,
//! the running program is asked to stop (`interrupt::out_of_memory`, which
//! the evaluators poll at every loop iteration and call), and the
//! allocation is tried again: it succeeds, the program stops at its next
//! boundary, and its values are released as the error unwinds. A request
//! larger than the reserve fails as before (the interpreter asks for such
//! sizes with `try_reserve` and reports `cannot allocate`). The binary
//! calls [`arm`] at start-up; after each run or session entry, [`rearm`]
//! takes the reserve again if it was spent. Where [`arm`] was never
//! called (a library user with its own allocator), nothing is reserved.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

use crate::interrupt;

/// The sizes the reserve is taken at, the first that fits.
const RESERVE_SIZES: [usize; 5] = [256 << 20, 128 << 20, 64 << 20, 32 << 20, 16 << 20];
/// The largest failed request that the reserve is released for: one that
/// would still fail afterwards is left to its caller's `try_reserve`.
const LARGEST_COVERED: usize = 32 << 20;
const RESERVE_ALIGN: usize = 4096;

static RESERVE: AtomicPtr<u8> = AtomicPtr::new(ptr::null_mut());
/// The size of the block in `RESERVE`, written before it is published.
static RESERVE_SIZE: AtomicUsize = AtomicUsize::new(0);
/// Whether the process installed [`WithReserve`] and called [`arm`].
static ARMED: AtomicBool = AtomicBool::new(false);

fn reserve_layout(size: usize) -> Layout {
    // A size far below isize::MAX and a power-of-two alignment: never an
    // error.
    Layout::from_size_align(size, RESERVE_ALIGN).unwrap_or(Layout::new::<u8>())
}

/// The system allocator with the reserve (see the module comment).
pub struct WithReserve;

/// Takes the reserve, once, at start-up, in a process whose global
/// allocator is [`WithReserve`].
pub fn arm() {
    ARMED.store(true, Ordering::Relaxed);
    rearm();
}

/// Takes the reserve again if it was spent (after an entry that ran
/// memory out) and [`arm`] was called. Does nothing when the address space
/// is too full to take it.
pub fn rearm() {
    if !ARMED.load(Ordering::Relaxed) || !RESERVE.load(Ordering::Relaxed).is_null() {
        return;
    }
    for size in RESERVE_SIZES {
        // SAFETY: the layout has a nonzero size.
        let p = unsafe { System.alloc(reserve_layout(size)) };
        if p.is_null() {
            continue;
        }
        RESERVE_SIZE.store(size, Ordering::Relaxed);
        if RESERVE
            .compare_exchange(ptr::null_mut(), p, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            // SAFETY: `p` was allocated just above with this layout.
            unsafe { System.dealloc(p, reserve_layout(size)) };
        }
        return;
    }
}

/// Gives the reserve back after a failed request of `size` bytes that it
/// can cover, and asks the program to stop; whether it was released (and
/// the request is worth trying again).
#[cold]
fn release(size: usize) -> bool {
    if size > LARGEST_COVERED {
        return false;
    }
    let p = RESERVE.swap(ptr::null_mut(), Ordering::AcqRel);
    if p.is_null() {
        return false;
    }
    let size = RESERVE_SIZE.load(Ordering::Relaxed);
    // SAFETY: the reserve was allocated by `rearm` with this layout (its
    // size was stored before it was published), and the swap above made
    // this the only owner.
    unsafe { System.dealloc(p, reserve_layout(size)) };
    interrupt::out_of_memory();
    true
}

// SAFETY: every method forwards to `System` with the caller's arguments;
// the reserve is a separate `System` block owned through `RESERVE`.
unsafe impl GlobalAlloc for WithReserve {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if p.is_null() && release(layout.size()) {
            return System.alloc(layout);
        }
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if p.is_null() && release(layout.size()) {
            return System.alloc_zeroed(layout);
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if p.is_null() && release(new_size) {
            return System.realloc(ptr, layout, new_size);
        }
        p
    }
}
