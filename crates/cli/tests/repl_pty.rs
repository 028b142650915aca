//! The REPL on a real pseudo-terminal (issue 15 acceptance 1): Tab after
//! `zeros([2], f32).so` lists the tensor's methods that start so, Tab
//! after a name prefix completes it, `:help softmax` shows the registry's
//! signature and text, `:time` and `:load` work, and Ctrl-C during a
//! running loop stops it with `error: interrupted` while the session
//! keeps its definitions.

#![cfg(target_os = "linux")]
// Test code writes fixtures and runs the binary: the core crates' IO rule
// (clippy.toml) is for the interpreter, not its tests.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod pty;

use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// `twill repl` with all three streams on one terminal; what it draws
/// arrives on the channel.
struct Repl {
    child: Child,
    input: std::fs::File,
    output: mpsc::Receiver<u8>,
    seen: String,
}

impl Repl {
    /// The REPL with colours off (`NO_COLOR`) or on.
    fn start(colour: bool) -> Repl {
        let (master, slave) = pty::open(40, 100);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_twill"));
        if colour {
            cmd.env_remove("NO_COLOR");
        } else {
            cmd.env("NO_COLOR", "1");
        }
        cmd.arg("repl")
            .env("TERM", "xterm")
            .env(
                "TWILL_HISTORY",
                std::env::temp_dir().join(format!("twill-pty-history-{}", std::process::id())),
            )
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave));
        // The terminal becomes the child's controlling terminal, as a
        // shell's would, so Ctrl-C typed on it reaches the child.
        // SAFETY: setsid and ioctl are async-signal-safe.
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().unwrap();
        let input = std::fs::File::from(master.try_clone().unwrap());
        let mut reader = std::fs::File::from(master);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                for &b in &buf[..n] {
                    if tx.send(b).is_err() {
                        return;
                    }
                }
            }
        });
        let mut r = Repl {
            child,
            input,
            output: rx,
            seen: String::new(),
        };
        r.expect("twill> ");
        r
    }

    /// Types `text`, after a pause that lets the line editor take up the
    /// new prompt (input typed while it starts one may be discarded).
    fn send(&mut self, text: &str) {
        std::thread::sleep(Duration::from_millis(150));
        self.input.write_all(text.as_bytes()).unwrap();
        self.input.flush().unwrap();
    }

    /// Waits (up to 20 s) until `want` has been drawn since the last
    /// expectation; what was drawn up to it is returned.
    fn expect(&mut self, want: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut got: Vec<u8> = Vec::new();
        loop {
            let text = String::from_utf8_lossy(&got).into_owned();
            if let Some(at) = text.find(want) {
                self.seen.push_str(&text);
                return text[..at + want.len()].to_string();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.output.recv_timeout(left) {
                Ok(b) => got.push(b),
                Err(_) => panic!(
                    "`{want}` never appeared; the terminal showed {text:?} after {:?}",
                    self.seen
                ),
            }
        }
    }
}

impl Drop for Repl {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn completion_help_time_load_and_interrupt_on_a_terminal() {
    let mut r = Repl::start(false);
    // Two Tabs list the candidates (no common prefix to complete first).
    r.send("zeros([2], f32).so\t\t");
    let listed = r.expect("sort");
    assert!(
        listed.contains("softmax") && listed.contains("solve"),
        "{listed:?}"
    );
    // Ctrl-C discards the line being typed.
    r.send("\x03");
    r.expect("twill> ");
    // One Tab completes a unique prefix.
    r.send("let weights = ones([3], bf16)\r");
    r.expect("twill> ");
    r.send("weig\t.dty\t\r");
    r.expect("bf16");
    r.send(":help softmax\r");
    r.expect("softmax(x, axis=…)");
    r.expect("normalised to sum to 1");
    let dir = std::env::temp_dir().join(format!("twill-pty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lib = dir.join("lib.tw");
    std::fs::write(&lib, "fn triple(n: Int) -> Int { 3 * n }\n").unwrap();
    r.send(&format!(":load {}\r", lib.display()));
    r.expect("twill> ");
    r.send(":time triple(14)\r");
    r.expect("42");
    r.expect("time: ");
    // Ctrl-C while a loop runs: interrupted, and the session goes on.
    r.send("var n = 0\r");
    r.expect("twill> ");
    r.send("while true { n += 1 }\r");
    std::thread::sleep(Duration::from_millis(300));
    r.send("\x03");
    r.expect("error: interrupted");
    r.send("triple(n) > 0\r");
    r.expect("true");
    r.send("\x04");
    let status = r.child.wait().unwrap();
    assert!(status.success(), "{status}");
    assert!(
        !r.seen.contains("\x1b[35m"),
        "colours despite NO_COLOR: {:?}",
        r.seen
    );
}

/// On a terminal without `NO_COLOR` the line is drawn in colours as it is
/// typed: keywords, numbers, strings and comments; and a line starting
/// with `.` continues the entry before it.
#[test]
fn the_input_line_is_highlighted() {
    let mut r = Repl::start(true);
    r.send("let s = \"hi\" # note");
    r.expect("\x1b[35mlet\x1b[0m s = \x1b[32m\"hi\"\x1b[0m \x1b[90m# note\x1b[0m");
    r.send("\r");
    r.send("s.len() + 40\r");
    r.expect("42");
    // On a terminal the entry has run when `.` continues it: the two run
    // again as one.
    r.send("s\r");
    r.expect("hi");
    r.send(".upper()\r");
    r.expect("HI");
    r.send("\x04");
    assert!(r.child.wait().unwrap().success());
}
