//! Running one program under the real `twill` binary — `twill run FILE` or
//! `twill check FILE` — with an address-space cap (RLIMIT_AS, set in the
//! child before exec), no core files, a wall-clock timeout after which the
//! child is killed, standard output discarded and standard error kept (up
//! to a bound); and the verdict on what came back: the classes of finding
//! the fuzzer fails on.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How much of a child's standard error is kept; the rest is read and
/// dropped so that the child never blocks on a full pipe.
const STDERR_KEEP: usize = 64 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Run,
    Check,
    /// `run` on the reference tree walker, to compare with `Run`.
    Tree,
}

impl Mode {
    /// The name of the mode in findings (the command for `Run`/`Check`).
    pub fn arg(self) -> &'static str {
        match self {
            Mode::Run => "run",
            Mode::Check => "check",
            Mode::Tree => "run-tree",
        }
    }

    fn args(self) -> &'static [&'static str] {
        match self {
            Mode::Run => &["run"],
            Mode::Check => &["check"],
            Mode::Tree => &["run", "--engine=tree"],
        }
    }
}

/// How a child ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    Exit(i32),
    Signal(i32),
    Timeout,
}

#[derive(Clone, Debug)]
pub struct Outcome {
    pub end: End,
    pub stderr: String,
    /// The first [`STDOUT_KEEP`] bytes the program printed.
    pub stdout: Vec<u8>,
}

/// How much of a program's standard output is kept to compare engines.
const STDOUT_KEEP: u64 = 1 << 20;

/// Limits for one child.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub timeout: Duration,
    pub memory_bytes: u64,
}

/// Runs `twill MODE file` in `dir`.
pub fn run(twill: &Path, mode: Mode, file: &Path, dir: &Path, limits: Limits) -> std::io::Result<Outcome> {
    // Standard output goes to a file (a pipe could fill while nobody
    // reads it), read back when the program has ended.
    let out_path = dir.join(format!("stdout-{}.txt", mode.arg()));
    let out_file = std::fs::File::create(&out_path)?;
    let mut cmd = Command::new(twill);
    cmd.args(mode.args())
        .arg(file)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("RUST_BACKTRACE")
        .env_remove("TWILL_CROSSCHECK")
        .stdin(Stdio::null())
        .stdout(out_file)
        .stderr(Stdio::piped());
    let memory = limits.memory_bytes;
    // SAFETY: between fork and exec the closure calls only setrlimit,
    // which is async-signal-safe, on values it owns; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            let cap = libc::rlimit {
                rlim_cur: memory,
                rlim_max: memory,
            };
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &cap) != 0 || libc::setrlimit(libc::RLIMIT_CORE, &none) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn()?;
    let reader = child.stderr.take().map(|mut err| {
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            let mut buf = [0u8; 8192];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let room = STDERR_KEEP.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
            kept
        })
    });
    let start = Instant::now();
    let end = loop {
        if let Some(status) = child.try_wait()? {
            break match (status.code(), status.signal()) {
                (Some(code), _) => End::Exit(code),
                (None, Some(sig)) => End::Signal(sig),
                (None, None) => End::Signal(0),
            };
        }
        if start.elapsed() >= limits.timeout {
            // The child may have ended just now; either way it is reaped.
            let _ = child.kill();
            let _ = child.wait();
            break End::Timeout;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stderr = reader
        .and_then(|r| r.join().ok())
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default();
    let mut stdout = Vec::new();
    if let Ok(f) = std::fs::File::open(&out_path) {
        let _ = f.take(STDOUT_KEEP).read_to_end(&mut stdout);
    }
    let _ = std::fs::remove_file(&out_path);
    Ok(Outcome { end, stderr, stdout })
}

/// A kind of finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// An internal error, a Rust panic or backtrace on standard error.
    Panic,
    /// A failed allocation that aborted the process ("memory allocation of
    /// N bytes failed"), instead of a runtime error.
    AllocAbort,
    /// Any other death by a signal.
    Signal,
    /// An exit status other than 0, 1 or 2.
    Status,
    Timeout,
    /// An `error:` without FILE:LINE:COL.
    Unlocated,
    /// `twill check` exited 1, which is the runtime-error status.
    CheckRuntime,
    /// `run` and `check` disagree on whether the program has a static
    /// error (exit 2).
    Disagree,
    /// The compiled engine and the tree walker printed different output,
    /// different errors or ended differently.
    Diverge,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::Panic => "panic",
            Class::AllocAbort => "alloc-abort",
            Class::Signal => "signal",
            Class::Status => "status",
            Class::Timeout => "timeout",
            Class::Unlocated => "unlocated",
            Class::CheckRuntime => "check-exit-1",
            Class::Disagree => "run-check-disagree",
            Class::Diverge => "engines-diverge",
        }
    }
}

/// What is wrong with one outcome, if anything: the class and a one-line
/// reason (which also tells findings apart).
pub fn verdict(mode: Mode, out: &Outcome) -> Option<(Class, String)> {
    let err = &out.stderr;
    // An allocation failure aborts with a hint about RUST_BACKTRACE (and
    // may be killed by the timeout while it aborts): it is told apart from
    // a panic first.
    if let Some(line) = err.lines().find(|l| l.starts_with("memory allocation of")) {
        return Some((Class::AllocAbort, line.trim().to_string()));
    }
    if let Some(line) = err
        .lines()
        .find(|l| l.contains("internal error") || l.contains("panicked") || l.contains("RUST_BACKTRACE"))
    {
        return Some((Class::Panic, line.trim().to_string()));
    }
    match out.end {
        End::Timeout => return Some((Class::Timeout, "killed after the timeout".into())),
        End::Signal(sig) => return Some((Class::Signal, format!("killed by signal {sig}"))),
        End::Exit(code) if !(0..=2).contains(&code) => {
            return Some((Class::Status, format!("exit status {code}")));
        }
        End::Exit(1) if mode == Mode::Check => {
            return Some((Class::CheckRuntime, "`twill check` exited 1".into()));
        }
        End::Exit(_) => {}
    }
    unlocated_error(err).map(|line| (Class::Unlocated, line))
}

/// The first `error:` line that is not followed by its location: the
/// ariadne header `╭─[ FILE:LINE:COL ]` or the fallback `--> FILE:LINE:COL`
/// before the next diagnostic (a message may run over several lines, as an
/// assertion's text with newlines does).
pub fn unlocated_error(stderr: &str) -> Option<String> {
    let lines: Vec<&str> = stderr.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if !line.starts_with("error:") {
            continue;
        }
        // Some messages carry their location inline: `error: FILE:1:8: …`.
        let located = has_line_col(line)
            || lines[i + 1..]
                .iter()
                .take_while(|l| !l.starts_with("error:") && !l.starts_with("warning:"))
                .map(|l| l.trim())
                .any(|l| (l.starts_with("╭─[") || l.starts_with("-->")) && has_line_col(l));
        if !located {
            return Some(line.to_string());
        }
    }
    None
}

/// Whether `s` holds `:LINE:COL` (two colon-led runs of digits in a row).
fn has_line_col(s: &str) -> bool {
    let b = s.as_bytes();
    (0..b.len()).any(|i| {
        let digits = |from: usize| b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
        if b[i] != b':' {
            return false;
        }
        let n = digits(i + 1);
        n > 0 && b.get(i + 1 + n) == Some(&b':') && digits(i + 2 + n) > 0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(end: End, stderr: &str) -> Outcome {
        Outcome {
            stdout: Vec::new(),
            end,
            stderr: stderr.into(),
        }
    }

    #[test]
    fn located_diagnostics_pass_and_bare_ones_do_not() {
        let ariadne = "error: integer division by zero\n   ╭─[ p.tw:1:7 ]\n   │\n";
        let fallback = "error: boom\n  --> p.tw:12:3\n";
        assert_eq!(verdict(Mode::Run, &out(End::Exit(1), ariadne)), None);
        assert_eq!(verdict(Mode::Run, &out(End::Exit(1), fallback)), None);
        let inline = "error: p.tw:1:8: not valid UTF-8 (byte 0xff)\n";
        let multiline = "error: assertion failed: a\nb\n   ╭─[ p.tw:2:1 ]\n";
        assert_eq!(verdict(Mode::Run, &out(End::Exit(1), multiline)), None);
        let two = "error: a\n   ╭─[ p.tw:1:1 ]\nerror: b\n";
        assert!(verdict(Mode::Run, &out(End::Exit(1), two)).is_some());
        assert_eq!(verdict(Mode::Check, &out(End::Exit(2), inline)), None);
        let bare = verdict(Mode::Run, &out(End::Exit(1), "error: cannot allocate\n"));
        assert_eq!(bare.map(|v| v.0), Some(Class::Unlocated));
        let headless = verdict(Mode::Run, &out(End::Exit(2), "error: x\n   ╭─[ p.tw ]\n"));
        assert_eq!(headless.map(|v| v.0), Some(Class::Unlocated));
    }

    #[test]
    fn every_class_is_recognised() {
        let class = |mode, end, err: &str| verdict(mode, &out(end, err)).map(|v| v.0);
        assert_eq!(
            class(
                Mode::Run,
                End::Exit(1),
                "error: internal error in twill (please report it): x\n"
            ),
            Some(Class::Panic)
        );
        assert_eq!(
            class(
                Mode::Run,
                End::Signal(6),
                "memory allocation of 8 bytes failed\nnote: run with `RUST_BACKTRACE=1` …\n"
            ),
            Some(Class::AllocAbort)
        );
        assert_eq!(class(Mode::Run, End::Signal(11), ""), Some(Class::Signal));
        assert_eq!(class(Mode::Run, End::Exit(101), ""), Some(Class::Status));
        assert_eq!(class(Mode::Run, End::Timeout, ""), Some(Class::Timeout));
        assert_eq!(class(Mode::Check, End::Exit(1), ""), Some(Class::CheckRuntime));
        assert_eq!(class(Mode::Run, End::Exit(0), ""), None);
        assert_eq!(class(Mode::Check, End::Exit(2), "warning: w\n"), None);
    }
}
