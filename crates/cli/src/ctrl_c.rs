//! Ctrl-C (SIGINT) for both front ends (spec §12.1). The handler only sets
//! the interpreter's interrupt request (`twill_session::interrupt`), which
//! running code polls at every loop iteration and call, so it stops there
//! with `error: interrupted`. Under `twill run` a second Ctrl-C before the
//! program noticed the first ends the process at once (exit 130); in the
//! REPL the session must survive, so further presses only repeat the
//! request.

use twill_session::interrupt;

/// The exit status of a program ended by Ctrl-C (128 + SIGINT, as shells
/// report it).
pub const INTERRUPTED_STATUS: i32 = 130;

#[cfg(unix)]
extern "C" fn for_run(_: libc::c_int) {
    if interrupt::request() {
        // SAFETY: `_exit` is async-signal-safe; this is the user insisting.
        unsafe { libc::_exit(INTERRUPTED_STATUS) };
    }
}

#[cfg(unix)]
extern "C" fn for_repl(_: libc::c_int) {
    interrupt::request();
}

#[cfg(unix)]
fn install(handler: extern "C" fn(libc::c_int)) {
    // SAFETY: both handlers only perform an atomic swap and `_exit`, which
    // are async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
    }
}

/// Ctrl-C stops the program; a second one ends the process.
pub fn for_program() {
    #[cfg(unix)]
    install(for_run);
}

/// Ctrl-C stops the running entry; the session goes on.
pub fn for_session() {
    #[cfg(unix)]
    install(for_repl);
}
