//! `twill run` and `twill check`: a session on the real host, reporting to
//! standard error, its status as the exit status.

use twill_session::{Mode, Options, RealHost, Reporter, Session, Status};

use crate::render::Stderr;

/// `twill run` (with `Mode::Run`) and `twill check` (`Mode::Check`).
pub fn run_path(path: &str, args: Vec<String>, mode: Mode) -> i32 {
    let host = RealHost::buffered(args);
    // The golden harness sets this to assert, as the program runs, every
    // tensor dtype the checker claims to know.
    let crosscheck = std::env::var_os("TWILL_CROSSCHECK").is_some_and(|v| v == "1");
    let mut reporter = Stderr::new();
    match Session::new(Box::new(host), Options { crosscheck }) {
        Ok(mut session) => session.run_path(path, mode, &mut reporter).code(),
        Err(msg) => {
            reporter.error(&msg);
            Status::Runtime.code()
        }
    }
}
