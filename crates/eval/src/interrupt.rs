//! The stop requests that running code polls (spec §12.1): Ctrl-C, and
//! memory running out. A Ctrl-C handler or the process's allocator sets a
//! flag; the evaluators poll it at every loop iteration and call, so a
//! running program stops at the next such boundary with `error:
//! interrupted` or `error: out of memory`, its output flushed, instead of
//! dying with its buffered output unwritten. Setting a flag is a single
//! atomic operation, safe inside a signal handler or an allocator.

use std::sync::atomic::{AtomicU8, Ordering};

/// Ctrl-C was pressed.
const INTERRUPT: u8 = 1;
/// An allocation failed and was served from the reserve.
const MEMORY: u8 = 2;

static REQUESTED: AtomicU8 = AtomicU8::new(0);

/// Why running code must stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    Interrupted,
    OutOfMemory,
}

/// Asks the running program to stop; returns whether a request was
/// already pending (a second Ctrl-C before the program noticed the first).
pub fn request() -> bool {
    REQUESTED.fetch_or(INTERRUPT, Ordering::Relaxed) & INTERRUPT != 0
}

/// Asks the running program to stop because memory ran out: the
/// allocator calls this when it had to draw on its reserve to serve an
/// allocation. It allocates nothing.
pub fn out_of_memory() {
    REQUESTED.fetch_or(MEMORY, Ordering::Relaxed);
}

/// Why the program must stop, if a request came since the last call
/// (clearing it). Running out of memory is reported before an interrupt
/// that came with it: both stop the program, and the memory is the cause
/// the user needs to know about.
#[inline]
pub(crate) fn take() -> Option<Stop> {
    if REQUESTED.load(Ordering::Relaxed) == 0 {
        return None;
    }
    let was = REQUESTED.swap(0, Ordering::Relaxed);
    if was & MEMORY != 0 {
        Some(Stop::OutOfMemory)
    } else if was & INTERRUPT != 0 {
        Some(Stop::Interrupted)
    } else {
        None
    }
}

/// Whether an interrupt has been requested and not yet taken (for a host
/// waiting on something other than the program, such as a notebook's
/// input box).
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed) & INTERRUPT != 0
}

/// Forgets a request made while nothing was running (a REPL clears it
/// before each entry, so a Ctrl-C at the prompt does not stop the next).
pub fn clear() {
    REQUESTED.store(0, Ordering::Relaxed);
}
