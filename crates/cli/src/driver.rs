//! `twill run` and `twill check`: a session on the real host, reporting to
//! standard error, its status as the exit status; and, for `run`, Ctrl-C:
//! the program stops at its next loop iteration or call with `error:
//! interrupted`, its output flushed, and the exit status is 130 (spec
//! §12.1). A second Ctrl-C before that ends the process at once.

use twill_session::{interrupt, ErrorKind, Mode, Options, RealHost, Session};

use crate::render::Stderr;

/// `twill run` (with `Mode::Run`) and `twill check` (`Mode::Check`).
pub fn run_path(path: &str, args: Vec<String>, mode: Mode) -> i32 {
    let host = RealHost::buffered(args);
    // The golden harness sets this to assert, as the program runs, every
    // tensor dtype the checker claims to know.
    let crosscheck = std::env::var_os("TWILL_CROSSCHECK").is_some_and(|v| v == "1");
    let mut reporter = Stderr::new();
    if mode == Mode::Run {
        on_ctrl_c();
    }
    let mut session = Session::new(
        Box::new(host),
        Options {
            crosscheck,
            types: false,
        },
    );
    let status = session.run_path(path, mode, &mut reporter);
    if session.last_error_kind() == Some(ErrorKind::Interrupted) {
        INTERRUPTED_STATUS
    } else {
        status.code()
    }
}

/// The exit status of a program ended by Ctrl-C (128 + SIGINT, as shells
/// report it).
const INTERRUPTED_STATUS: i32 = 130;

#[cfg(unix)]
extern "C" fn sigint(_: libc::c_int) {
    if interrupt::request() {
        // SAFETY: `_exit` is async-signal-safe; this is the user insisting.
        unsafe { libc::_exit(INTERRUPTED_STATUS) };
    }
}

/// Routes Ctrl-C to the interrupt request instead of killing the process.
#[cfg(unix)]
fn on_ctrl_c() {
    let handler = sigint as extern "C" fn(libc::c_int);
    // SAFETY: the handler only performs an atomic swap and `_exit`, both
    // async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
    }
}

#[cfg(not(unix))]
fn on_ctrl_c() {}
