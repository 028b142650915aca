//! `twill run` and `twill check`: a session on the real host, reporting to
//! standard error, its status as the exit status; and, for `run`, Ctrl-C
//! (`ctrl_c`): the program stops at its next loop iteration or call with
//! `error: interrupted`, its output flushed, and the exit status is 130
//! (spec §12.1).

use twill_session::{Engine, ErrorKind, Mode, Options, RealHost, Session};

use crate::ctrl_c::{self, INTERRUPTED_STATUS};
use crate::render::Stderr;

/// `twill run` (with `Mode::Run`) and `twill check` (`Mode::Check`).
pub fn run_path(path: &str, args: Vec<String>, mode: Mode, engine: Engine, reference: bool) -> i32 {
    let host = RealHost::buffered(args);
    // The golden harness sets this to assert, as the program runs, every
    // tensor dtype the checker claims to know.
    let crosscheck = std::env::var_os("TWILL_CROSSCHECK").is_some_and(|v| v == "1");
    let mut reporter = Stderr::new();
    if mode == Mode::Run {
        ctrl_c::for_program();
    }
    let mut session = Session::new(
        Box::new(host),
        Options {
            crosscheck,
            types: false,
            engine,
            reference,
        },
    );
    let status = session.run_path(path, mode, &mut reporter);
    if session.last_error_kind() == Some(ErrorKind::Interrupted) {
        INTERRUPTED_STATUS
    } else {
        status.code()
    }
}
