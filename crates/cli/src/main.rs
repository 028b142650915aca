//! The `twill` command: `run`, `check`, `repl`, `jupyter`, `lsp`,
//! `--help`, `--version`.
//! All work happens on a thread with a large stack so that deep (but not
//! runaway) recursion in a program works; a panic, which would be a bug in
//! twill, is reported as an `error:` line, never as a Rust backtrace.

// The command-line crate is the edge: it owns the terminal, the process and
// the real host, so the core crates' IO rule (clippy.toml) does not apply.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod ctrl_c;
mod driver;
mod render;
mod repl;

use std::io::Write;

use twill_session::{Engine, Mode, Status};

const USAGE: &str = "\
twill — a small language for numerical work

usage:
  twill run FILE.tw [ARGS…]   check, then run a program (`-` reads standard input)
  twill run --engine=tree FILE.tw [ARGS…]
                              the same on the reference tree walker
  twill run --reference FILE.tw [ARGS…]
                              the same with every tensor operation run by
                              the self-hosted `reference` module
  twill check FILE.tw         check a program without running it
  twill repl                  interactive session (also: `twill` alone)
  twill jupyter install [--user | --prefix DIR | --sys-prefix]
                              install the Jupyter kernel spec
  twill jupyter kernel FILE   serve a notebook (Jupyter starts this)
  twill lsp                   the language server, on stdin and stdout (editors start this)
  twill --version             print the version
  twill --help                print this help

exit status: 0 success, 1 runtime error, 2 static error";

/// Stack for the interpreter thread: only touched pages are committed, so
/// a large reservation costs nothing until deep recursion needs it.
const STACKS: [usize; 3] = [4 << 30, 1 << 30, 256 << 20];

/// Running out of memory is an `error: out of memory` at the program's
/// line, not an abort (`twill_session::reserve`).
#[global_allocator]
static ALLOCATOR: twill_session::reserve::WithReserve = twill_session::reserve::WithReserve;

fn cli(args: Vec<String>) -> i32 {
    // Taken once the interpreter thread has its stack: the stack is what
    // a low address-space limit must leave room for first.
    twill_session::reserve::arm();
    // A cap on the kernels' instruction set (`TWILL_ISA`, docs/language.md
    // §13.3) that names no level is a mistake to report, not a setting to
    // ignore: timings taken under it would claim a path they did not run.
    if let Some(v) = std::env::var_os("TWILL_ISA").filter(|v| !v.is_empty()) {
        match v.to_str().and_then(twill_tensor::isa::Level::parse) {
            Some(level) => twill_tensor::isa::set_cap(level),
            None => {
                let _ = writeln!(
                    std::io::stderr(),
                    "error: TWILL_ISA={:?} is not an instruction-set level: expected portable, avx2 or avx512",
                    v.to_string_lossy()
                );
                return Status::Static.code();
            }
        }
    }
    let rest: Vec<String> = args.iter().skip(2).cloned().collect();
    match args.get(1).map(String::as_str) {
        None | Some("repl") => repl::run(),
        Some("run") => {
            let mut engine = Engine::Compiled;
            let mut reference = false;
            let mut rest = rest.as_slice();
            // The options come before the file; what follows it is the
            // program's.
            while let Some((flag, after)) = rest.split_first() {
                if let Some(name) = flag.strip_prefix("--engine=") {
                    engine = match name {
                        "tree" => Engine::Tree,
                        "compiled" => Engine::Compiled,
                        other => {
                            return usage_error(&format!("unknown engine `{other}` (`tree` or `compiled`)"))
                        }
                    };
                } else if flag == "--reference" {
                    reference = true;
                } else {
                    break;
                }
                rest = after;
            }
            match rest.split_first() {
                Some((file, prog_args)) => {
                    driver::run_path(file, prog_args.to_vec(), Mode::Run, engine, reference)
                }
                None => usage_error("`twill run` needs a FILE (or `-` for standard input)"),
            }
        }
        Some("check") => match rest.as_slice() {
            [file] => driver::run_path(file, Vec::new(), Mode::Check, Engine::Compiled, false),
            _ => usage_error("`twill check` needs exactly one FILE"),
        },
        Some("jupyter") => match rest.split_first() {
            Some((cmd, args)) if cmd == "install" => twill_kernel::install(args),
            Some((cmd, [file])) if cmd == "kernel" => {
                // Ctrl-C where the notebook server runs stops the cell,
                // as an interrupt request does; the session goes on.
                ctrl_c::for_session();
                twill_kernel::kernel(file)
            }
            _ => usage_error(
                "`twill jupyter` needs `install [--user | --prefix DIR | --sys-prefix]` or `kernel FILE`",
            ),
        },
        Some("lsp") => twill_lsp::serve(),
        Some("--version" | "-V" | "version") => {
            println!("twill {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Some("--help" | "-h" | "help") => {
            println!("{USAGE}");
            0
        }
        Some(file) if file.ends_with(".tw") => {
            driver::run_path(file, rest, Mode::Run, Engine::Compiled, false)
        }
        Some(other) => usage_error(&format!("unknown command `{other}`")),
    }
}

fn usage_error(msg: &str) -> i32 {
    let _ = writeln!(std::io::stderr(), "error: {msg}\n\n{USAGE}");
    Status::Static.code()
}

fn main() {
    std::panic::set_hook(Box::new(|info| {
        let loc = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown cause".into());
        let _ = writeln!(
            std::io::stderr(),
            "error: internal error in twill (please report it): {msg}{loc}"
        );
    }));
    let args: Vec<String> = std::env::args().collect();
    for size in STACKS {
        let a = args.clone();
        if let Ok(handle) = std::thread::Builder::new()
            .name("twill".into())
            .stack_size(size)
            .spawn(move || cli(a))
        {
            let code = handle.join().unwrap_or(Status::Runtime.code());
            std::process::exit(code);
        }
    }
    std::process::exit(cli(args));
}
