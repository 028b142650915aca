//! `progress` and `progress_note` (spec §12.2, issue 15 acceptance 4): with
//! standard error on a real pseudo-terminal the bar is drawn there — its
//! label, its count of the total and its note — and standard output is
//! exactly what it is without one; with standard error a pipe nothing at
//! all is drawn. Both engines.

#![cfg(target_os = "linux")]
// Test code writes fixtures and runs the binary: the core crates' IO rule
// (clippy.toml) is for the interpreter, not its tests.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod pty;

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// A loop long enough for the bar to be drawn more than once (it redraws
/// at most ten times a second), nested bars, a note, every kind of
/// iterable, and `progress` used as a plain value.
const PROGRAM: &str = r#"
fn busy(n: Int) -> Int {
    var s = 0
    for i in range(n) { s = (s + i * i) % 1000003 }
    s
}
var total = 0
for step in progress(range(12), label="training") {
    total += busy(300000)
    progress_note(f"step {step}")
}
print(total)
for e in progress([1, 2], label="outer") {
    for b in progress(tensor([1.0, 2.0, 3.0]), label="inner") { print(e, b.item()) }
}
for k in progress(["a": 1, "b": 2]) { print(k) }
for c in progress("hé", total=2) { print(c) }
let xs = progress([3, 4, 5])
print(len(xs), xs[2])
"#;

const STDOUT: &str = "\
3192000
1 1
1 2
1 3
2 1
2 2
2 3
a
b
h
é
3 5
";

fn program(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("twill-progress-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("p.tw");
    std::fs::write(&path, PROGRAM).unwrap();
    path
}

fn command(engine: &str, prog: &PathBuf) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_twill"));
    cmd.arg("run")
        .arg(format!("--engine={engine}"))
        .arg(prog)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    cmd
}

#[test]
fn a_bar_is_drawn_on_a_terminal_and_stdout_is_unchanged() {
    let prog = program("pty");
    for engine in ["compiled", "tree"] {
        let (master, slave) = pty::open(24, 100);
        // A copy of the slave kept here: when the child's copy, the last
        // one, closes, Linux hangs the terminal up and may drop what the
        // reader has not read yet; this one is closed once it has.
        let keep = slave.try_clone().unwrap();
        let mut child = command(engine, &prog).stderr(Stdio::from(slave)).spawn().unwrap();
        // Drain the terminal while the program runs (a full pty would
        // block it), then read its standard output.
        let mut term = std::fs::File::from(master);
        let shared = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = shared.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // EIO once the slave is closed.
            while let Ok(n) = term.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let mut stdout = String::new();
        child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
        let status = child.wait().unwrap();
        let erased = |b: &[u8]| {
            String::from_utf8_lossy(b)
                .trim_end_matches(['\r', '\n'])
                .ends_with("\x1b[2K")
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !erased(&shared.lock().unwrap()) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        drop(keep);
        reader.join().unwrap();
        let drawn = String::from_utf8_lossy(&shared.lock().unwrap()).into_owned();
        assert!(status.success(), "{engine}: {status}, terminal: {drawn}");
        assert_eq!(stdout, STDOUT, "{engine}: stdout");
        for want in ["training", "/12", "step ", "it/s", "outer", "inner", "/3"] {
            assert!(
                drawn.contains(want),
                "{engine}: no `{want}` on the terminal: {drawn:?}"
            );
        }
        // Every bar is cleared when its loop ends: the last thing drawn
        // is a line erase.
        assert!(
            drawn.trim_end_matches(['\r', '\n']).ends_with("\x1b[2K"),
            "{engine}: {drawn:?}"
        );
    }
}

#[test]
fn nothing_is_drawn_when_stderr_is_a_pipe() {
    let prog = program("pipe");
    for engine in ["compiled", "tree"] {
        let out = command(engine, &prog).stderr(Stdio::piped()).output().unwrap();
        assert!(out.status.success(), "{engine}: {:?}", out);
        assert_eq!(String::from_utf8(out.stdout).unwrap(), STDOUT, "{engine}");
        assert!(
            out.stderr.is_empty(),
            "{engine}: stderr {:?}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
