//! Everything outside the interpreter, behind one trait: files, standard
//! input, output and error, the program's arguments, the environment, the
//! clock, and progress bars on a terminal. The evaluator and the session
//! reach the world only through a [`Host`]; [`RealHost`] is the one place
//! that touches the operating system (the workspace's `clippy.toml` forbids
//! it everywhere else in the core crates), and [`CaptureHost`] keeps all of
//! it in memory so a test, a notebook kernel or an editor can run a program
//! and read what it wrote.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]
// IO only through twill_host::Host; see clippy.toml for the rule and why.
#![cfg_attr(
    not(test),
    deny(
        clippy::disallowed_methods,
        clippy::disallowed_types,
        clippy::print_stdout,
        clippy::print_stderr
    )
)]
// Unit tests may use real files and the clock.
#![cfg_attr(test, allow(clippy::disallowed_methods, clippy::disallowed_types))]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{self, IsTerminal, Write};
use std::rc::Rc;

mod atomic;
mod progress;

/// The most bytes one Str may hold: 512 MiB, the limit JavaScript's V8
/// engine puts on a string. Every operation that builds a Str checks it
/// before it allocates, so a Str doubled in a loop is an error after a
/// fraction of a second instead of after minutes of paging; bulk data
/// belongs in tensors (`read_csv`, `load_npy`), which have no such limit.
pub const STR_MAX_BYTES: usize = 1 << 29;

/// What a running program, and the session around it, may do outside.
pub trait Host {
    /// The whole content of the file at `path`.
    fn read_file(&mut self, path: &str) -> io::Result<Vec<u8>>;

    /// The file at `path` as UTF-8 text; invalid UTF-8 is an
    /// `InvalidData` error worded as the standard library words it.
    /// A file longer than [`STR_MAX_BYTES`] is a `FileTooLarge` error.
    fn read_text(&mut self, path: &str) -> io::Result<String> {
        let bytes = self.read_file(path)?;
        if bytes.len() > STR_MAX_BYTES {
            return Err(too_long_for_str());
        }
        text(bytes)
    }

    /// The names of the files in the directory `dir` (`""` is the working
    /// directory), for suggestions; none where it cannot be listed.
    fn file_names(&mut self, dir: &str) -> Vec<String> {
        let _ = dir;
        Vec::new()
    }

    /// Replaces the file at `path` with `bytes` so that a crash never
    /// leaves it half written (spec §9).
    fn write_file(&mut self, path: &str, bytes: &[u8]) -> io::Result<()>;

    /// Everything left on standard input.
    fn read_stdin(&mut self) -> io::Result<Vec<u8>>;

    /// The next line of standard input without its line ending (`\n` or
    /// `\r\n`), or `None` at the end of the input (`read_line`, spec §9).
    fn read_line(&mut self) -> io::Result<Option<String>>;

    /// Where `print` writes.
    fn stdout(&mut self) -> &mut dyn Write;

    /// Where a program's own error output goes (diagnostics are data and
    /// do not come here).
    fn stderr(&mut self) -> &mut dyn Write;

    /// The program's command-line arguments (after the file name).
    fn args(&self) -> &[String];

    /// An environment variable, if set and valid UTF-8.
    fn env_var(&self, name: &str) -> Option<String>;

    /// Seconds since the host was created (`clock()`).
    fn clock(&self) -> f64;

    /// Whether this host draws progress bars (spec §12.2): only a real
    /// terminal on standard error does; everywhere else `progress` draws
    /// nothing, so output stays byte-identical between runs.
    fn draws_progress(&self) -> bool {
        false
    }

    /// A `progress` loop of `total` steps (`None`: not known) starts; its
    /// bar is the innermost until the matching [`Host::progress_end`].
    fn progress_begin(&mut self, _label: &str, _total: Option<u64>) {}

    /// The innermost loop took one step.
    fn progress_tick(&mut self) {}

    /// The message beside the innermost bar (`progress_note`).
    fn progress_note(&mut self, _note: &str) {}

    /// The innermost loop ended, however it ended.
    fn progress_end(&mut self) {}

    /// Whether this host shows values in richer forms than text (a
    /// notebook: spec §12.4); only then does `display` render a figure.
    fn shows_rich(&self) -> bool {
        false
    }

    /// `display(v)`: a host that shows rich forms shows the best it can,
    /// any other prints the text and a newline on standard output.
    fn display(&mut self, shown: &Display) -> io::Result<()> {
        let out = self.stdout();
        out.write_all(shown.text.as_bytes())?;
        out.write_all(b"\n")
    }

    /// The value of a REPL entry or notebook cell (spec §12.1, §12.4): a
    /// notebook shows it as the cell's result, in every form it has; any
    /// other host prints the text and a newline on standard output.
    fn result(&mut self, shown: &Display) -> io::Result<()> {
        let out = self.stdout();
        out.write_all(shown.text.as_bytes())?;
        out.write_all(b"\n")?;
        out.flush()
    }
}

/// A value as `display` shows it: its text (as `print` writes it) and the
/// richer forms a notebook shows, each present only where the value has it
/// (spec §12.4: a figure as PNG and SVG, a small tensor as an HTML table).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Display {
    pub text: String,
    pub html: Option<String>,
    pub png: Option<Vec<u8>>,
    pub svg: Option<String>,
}

/// A standard stream that hides the progress bars while it writes, so
/// that printed lines and bars do not overwrite each other.
struct Shown<W: Write> {
    inner: W,
    bars: Option<Rc<RefCell<progress::Bars>>>,
}

impl<W: Write> Write for Shown<W> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        if let Some(bars) = &self.bars {
            let bars = bars.borrow();
            if bars.active() {
                bars.suspend(&mut self.inner, b)?;
                return Ok(b.len());
            }
        }
        self.inner.write(b)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The operating system: real files, the process's standard streams, its
/// environment and a monotonic clock.
pub struct RealHost {
    args: Vec<String>,
    stdout: Shown<Box<dyn Write>>,
    stderr: Shown<io::Stderr>,
    start: std::time::Instant,
    /// The progress bars, when standard error is a terminal.
    bars: Option<Rc<RefCell<progress::Bars>>>,
}

/// The error for text longer than a Str may be.
fn too_long_for_str() -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!("it is longer than the {STR_MAX_BYTES} bytes (512 MiB) a Str can hold"),
    )
}

/// `bytes` as text, or an `InvalidData` error worded as the standard
/// library words it.
/// A line's text without its line ending.
fn line_text(mut bytes: Vec<u8>) -> io::Result<String> {
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
    }
    String::from_utf8(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "the line is not UTF-8 text"))
}

fn text(bytes: Vec<u8>) -> io::Result<String> {
    String::from_utf8(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "stream did not contain valid UTF-8"))
}

/// Everything `source` yields, in a buffer that grows fallibly (room for
/// `hint` bytes, the file's size, first): a file larger than memory, or an
/// endless device such as `/dev/zero`, is an `OutOfMemory` error naming the
/// size, never an abort. More than `limit` bytes is a `FileTooLarge` error,
/// found before they are all read.
fn read_all(mut source: impl io::Read, hint: u64, limit: usize) -> io::Result<Vec<u8>> {
    let oom = |n: usize| {
        io::Error::new(
            io::ErrorKind::OutOfMemory,
            format!("cannot allocate {n} bytes to read it"),
        )
    };
    let mut bytes: Vec<u8> = Vec::new();
    let first = usize::try_from(hint).unwrap_or(usize::MAX);
    if first > limit {
        return Err(too_long_for_str());
    }
    bytes.try_reserve_exact(first).map_err(|_| oom(first))?;
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let n = match source.read(&mut chunk) {
            Ok(0) => return Ok(bytes),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if bytes.len().saturating_add(n) > limit {
            return Err(too_long_for_str());
        }
        bytes
            .try_reserve(n)
            .map_err(|_| oom(bytes.len().saturating_add(n)))?;
        bytes.extend_from_slice(&chunk[..n]);
    }
}

// RealHost is the operating system: the one place in the core crates that
// may touch it (clippy.toml forbids it everywhere else).
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
impl RealHost {
    /// For `twill run`: standard output to a file or pipe is
    /// block-buffered (64 KiB), so a program printing many lines does not
    /// pay a system call per line; it is flushed when the program ends or
    /// fails. To a terminal it is flushed at every newline (spec §10.7), so
    /// progress shows as it is printed.
    pub fn buffered(args: Vec<String>) -> RealHost {
        let stdout: Box<dyn Write> = if io::stdout().is_terminal() {
            Box::new(io::stdout())
        } else {
            Box::new(io::BufWriter::with_capacity(1 << 16, io::stdout()))
        };
        RealHost::with_stdout(args, stdout)
    }

    /// For the REPL: standard output as the process has it (line-buffered),
    /// so each entry's output appears as it is printed.
    pub fn interactive() -> RealHost {
        RealHost::with_stdout(Vec::new(), Box::new(io::stdout()))
    }

    /// Real files, environment and clock, with standard output going to
    /// `stdout` instead (the golden harness captures it this way).
    pub fn with_stdout(args: Vec<String>, stdout: Box<dyn Write>) -> RealHost {
        let bars = io::stderr()
            .is_terminal()
            .then(|| Rc::new(RefCell::new(progress::Bars::new())));
        RealHost {
            args,
            stdout: Shown {
                inner: stdout,
                bars: bars.clone(),
            },
            stderr: Shown {
                inner: io::stderr(),
                bars: bars.clone(),
            },
            start: std::time::Instant::now(),
            bars,
        }
    }
}

// RealHost is the operating system: the one place in the core crates that
// may touch it (clippy.toml forbids it everywhere else).
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
impl Host for RealHost {
    fn file_names(&mut self, dir: &str) -> Vec<String> {
        let dir = if dir.is_empty() { "." } else { dir };
        std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn read_file(&mut self, path: &str) -> io::Result<Vec<u8>> {
        let file = std::fs::File::open(path).map_err(atomic::user_facing)?;
        let hint = file.metadata().map_or(0, |m| m.len());
        read_all(file, hint, usize::MAX).map_err(atomic::user_facing)
    }

    /// As the trait's, but a long file or an endless device stops being
    /// read as soon as it passes the limit.
    fn read_text(&mut self, path: &str) -> io::Result<String> {
        let file = std::fs::File::open(path).map_err(atomic::user_facing)?;
        let hint = file.metadata().map_or(0, |m| m.len());
        text(read_all(file, hint, STR_MAX_BYTES).map_err(atomic::user_facing)?)
    }

    /// Per spec §9, by way of the `atomic` module: a regular file (a symbolic
    /// link's target included) is replaced by renaming a complete temporary
    /// file over it; anything else is written directly. A direct write may
    /// reach whatever standard output goes to (`/dev/stdout`), so what
    /// `print` has buffered goes out first and the two keep their order.
    fn write_file(&mut self, path: &str, bytes: &[u8]) -> io::Result<()> {
        let plan = atomic::plan(path)?;
        if plan.is_direct() {
            // A failed flush is not this write's error: the output stays
            // buffered and the flush at the end of the program reports it.
            let _ = self.stdout.flush();
        }
        plan.write(bytes)
    }

    fn read_stdin(&mut self) -> io::Result<Vec<u8>> {
        read_all(io::stdin(), 0, usize::MAX)
    }

    /// A prompt the program printed goes out before the wait for input.
    fn read_line(&mut self) -> io::Result<Option<String>> {
        let _ = self.stdout.flush();
        let mut bytes = Vec::new();
        let n = io::BufRead::read_until(&mut io::stdin().lock(), b'\n', &mut bytes)?;
        if n == 0 {
            return Ok(None);
        }
        line_text(bytes).map(Some)
    }

    fn stdout(&mut self) -> &mut dyn Write {
        &mut self.stdout
    }

    fn stderr(&mut self) -> &mut dyn Write {
        &mut self.stderr
    }

    fn args(&self) -> &[String] {
        &self.args
    }

    fn env_var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }

    fn clock(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    fn draws_progress(&self) -> bool {
        self.bars.is_some()
    }

    fn progress_begin(&mut self, label: &str, total: Option<u64>) {
        if let Some(bars) = &self.bars {
            // What `print` has buffered goes out before the bar appears.
            let _ = self.stdout.flush();
            bars.borrow_mut().begin(label, total);
        }
    }

    fn progress_tick(&mut self) {
        if let Some(bars) = &self.bars {
            bars.borrow_mut().tick();
        }
    }

    fn progress_note(&mut self, note: &str) {
        if let Some(bars) = &self.bars {
            bars.borrow_mut().note(note);
        }
    }

    fn progress_end(&mut self) {
        if let Some(bars) = &self.bars {
            bars.borrow_mut().end();
        }
    }
}

/// Bytes shared between a [`CaptureHost`] and whoever reads them after the
/// host has been handed to an interpreter.
#[derive(Clone, Debug, Default)]
pub struct SharedBuf(Rc<RefCell<Vec<u8>>>);

impl SharedBuf {
    /// Everything written so far, as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.borrow()).into_owned()
    }

    /// Everything written so far.
    pub fn bytes(&self) -> Vec<u8> {
        self.0.borrow().clone()
    }
}

impl Write for SharedBuf {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A host in memory: files in a map, standard input given up front,
/// output captured, an empty environment unless set, and a clock that
/// stays at zero (so captured output is deterministic). Clones share the
/// same files and buffers: keep one to read what the program wrote.
#[derive(Clone, Debug, Default)]
pub struct CaptureHost {
    pub stdout: SharedBuf,
    pub stderr: SharedBuf,
    files: Rc<RefCell<BTreeMap<String, Vec<u8>>>>,
    stdin: Vec<u8>,
    args: Vec<String>,
    env: BTreeMap<String, String>,
}

impl CaptureHost {
    pub fn new() -> CaptureHost {
        CaptureHost::default()
    }

    pub fn with_args(mut self, args: Vec<String>) -> CaptureHost {
        self.args = args;
        self
    }

    pub fn with_stdin(mut self, bytes: impl Into<Vec<u8>>) -> CaptureHost {
        self.stdin = bytes.into();
        self
    }

    pub fn with_env(mut self, name: &str, value: &str) -> CaptureHost {
        self.env.insert(name.to_string(), value.to_string());
        self
    }

    /// Puts a file in the in-memory file system.
    pub fn add_file(&self, path: &str, bytes: impl Into<Vec<u8>>) {
        self.files.borrow_mut().insert(path.to_string(), bytes.into());
    }

    /// A file's content, if the program (or `add_file`) wrote one.
    pub fn file(&self, path: &str) -> Option<Vec<u8>> {
        self.files.borrow().get(path).cloned()
    }
}

impl Host for CaptureHost {
    fn read_file(&mut self, path: &str) -> io::Result<Vec<u8>> {
        self.file(path)
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }

    /// A map insertion is atomic already.
    fn write_file(&mut self, path: &str, bytes: &[u8]) -> io::Result<()> {
        self.add_file(path, bytes);
        Ok(())
    }

    fn read_stdin(&mut self) -> io::Result<Vec<u8>> {
        Ok(std::mem::take(&mut self.stdin))
    }

    fn read_line(&mut self) -> io::Result<Option<String>> {
        if self.stdin.is_empty() {
            return Ok(None);
        }
        let end = self
            .stdin
            .iter()
            .position(|&b| b == b'\n')
            .map_or(self.stdin.len(), |i| i + 1);
        let rest = self.stdin.split_off(end);
        let line = std::mem::replace(&mut self.stdin, rest);
        line_text(line).map(Some)
    }

    fn stdout(&mut self) -> &mut dyn Write {
        &mut self.stdout
    }

    fn stderr(&mut self) -> &mut dyn Write {
        &mut self.stderr
    }

    fn args(&self) -> &[String] {
        &self.args
    }

    fn env_var(&self, name: &str) -> Option<String> {
        self.env.get(name).cloned()
    }

    fn clock(&self) -> f64 {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_host_round_trips_files_and_output() {
        let keep = CaptureHost::new().with_stdin("in");
        let mut host = keep.clone();
        host.write_file("a.txt", b"hello").unwrap();
        assert_eq!(host.read_text("a.txt").unwrap(), "hello");
        assert_eq!(keep.file("a.txt").as_deref(), Some(&b"hello"[..]));
        assert_eq!(
            host.read_file("missing").unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        host.stdout().write_all(b"out\n").unwrap();
        assert_eq!(keep.stdout.text(), "out\n");
        assert_eq!(host.read_stdin().unwrap(), b"in");
    }

    #[test]
    fn invalid_utf8_is_reported_as_the_standard_library_does() {
        let mut host = CaptureHost::new();
        host.add_file("bad", vec![0xff]);
        let err = host.read_text("bad").unwrap_err();
        assert_eq!(err.to_string(), "stream did not contain valid UTF-8");
    }
}
