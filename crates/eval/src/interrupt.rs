//! The interrupt request (spec §12.1): one flag that a Ctrl-C handler sets
//! and the tree walker polls at every loop iteration and call, so a running
//! program stops at the next such boundary with `error: interrupted`, its
//! output flushed, instead of dying with its buffered output unwritten.
//! Setting the flag is a single atomic store, safe inside a signal handler.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Asks the running program to stop; returns whether a request was
/// already pending (a second Ctrl-C before the program noticed the first).
pub fn request() -> bool {
    REQUESTED.swap(true, Ordering::Relaxed)
}

/// Whether an interrupt was requested since the last call (clearing it).
pub(crate) fn take() -> bool {
    REQUESTED.load(Ordering::Relaxed) && REQUESTED.swap(false, Ordering::Relaxed)
}

/// Whether an interrupt has been requested and not yet taken (for a host
/// waiting on something other than the program, such as a notebook's
/// input box).
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// Forgets a request made while nothing was running (a REPL clears it
/// before each entry, so a Ctrl-C at the prompt does not stop the next).
pub fn clear() {
    REQUESTED.store(false, Ordering::Relaxed);
}
