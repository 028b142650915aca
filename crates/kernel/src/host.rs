//! The kernel's [`Host`]: a program's files, environment and clock are the
//! real ones ([`RealHost`]), but what it prints, displays and reads goes
//! over the Jupyter protocol. Standard output and error collect in the
//! [`Outbox`] and go out as `stream` messages (at most every 50 ms, and
//! always before any other message, so output keeps its order); `display`
//! and a cell's value go out as `display_data` and `execute_result` with
//! every form the value has; a `progress` loop is a `display_data` bar
//! updated in place (`update_display_data`); `read_line` asks the
//! notebook through the stdin channel when the request allows it.

use std::io::{self, Write};
use std::sync::{mpsc, Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use jupyter_protocol::{
    DisplayData, ExecuteResult, ExecutionCount, InputRequest, JupyterMessage, JupyterMessageContent, Media,
    MediaType, StreamContent, Transient, UpdateDisplayData,
};
use tokio::sync::mpsc::UnboundedSender;
use twill_session::{interrupt, Host, RealHost};

/// What the interpreter thread (or the control task) hands the writer.
pub(crate) enum Outgoing {
    Iopub(JupyterMessage),
    Shell(JupyterMessage),
    Stdin(JupyterMessage),
    /// Everything handed before this is sent; then the process exits with
    /// this status (`shutdown`, `exit(n)`, `:quit`).
    Exit(i32),
}

/// The request being served: the parent of every message the cell sends.
#[derive(Default)]
struct Current {
    parent: Option<JupyterMessage>,
    count: ExecutionCount,
    allow_stdin: bool,
    /// Output of a silent request is still sent; its value is not.
    silent: bool,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Messages on their way to the sockets, with the streams' pending bytes.
/// Shared by the interpreter thread and the socket runtime's stream
/// flusher; every send holds the lock, so the order is the order of the
/// calls.
pub(crate) struct Outbox {
    tx: UnboundedSender<Outgoing>,
    current: Mutex<Current>,
}

/// Which of the program's output streams.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stream {
    Stdout,
    Stderr,
}

/// The longest prefix of `bytes` that is whole UTF-8 characters (the rest
/// waits for the bytes that complete it); invalid bytes are replaced.
fn take_text(bytes: &mut Vec<u8>) -> String {
    let cut = match std::str::from_utf8(bytes) {
        Ok(_) => bytes.len(),
        // An incomplete character at the end waits; anything else is
        // replaced now.
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        Err(_) => bytes.len(),
    };
    let text = String::from_utf8_lossy(&bytes[..cut]).into_owned();
    bytes.drain(..cut);
    text
}

impl Outbox {
    pub(crate) fn new(tx: UnboundedSender<Outgoing>) -> Outbox {
        Outbox {
            tx,
            current: Mutex::new(Current::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Current> {
        self.current.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A socket task has gone only when the kernel is exiting; what is
    /// sent then has nowhere to go.
    pub(crate) fn send(&self, out: Outgoing) {
        let _ = self.tx.send(out);
    }

    /// Starts serving `parent`: the messages of the cell are its children.
    pub(crate) fn begin(
        &self,
        parent: &JupyterMessage,
        count: ExecutionCount,
        allow_stdin: bool,
        silent: bool,
    ) {
        let mut cur = self.lock();
        cur.parent = Some(parent.clone());
        cur.count = count;
        cur.allow_stdin = allow_stdin;
        cur.silent = silent;
    }

    /// The cell is done: its output is sent, and what is printed later
    /// (there is nothing running to print it) has no parent.
    pub(crate) fn end(&self) {
        let mut cur = self.lock();
        self.flush_locked(&mut cur);
        cur.parent = None;
    }

    fn flush_locked(&self, cur: &mut Current) {
        for stream in [Stream::Stdout, Stream::Stderr] {
            self.flush_stream(cur, stream);
        }
    }

    fn flush_stream(&self, cur: &mut Current, stream: Stream) {
        let bytes = match stream {
            Stream::Stdout => &mut cur.stdout,
            Stream::Stderr => &mut cur.stderr,
        };
        if bytes.is_empty() {
            return;
        }
        let text = take_text(bytes);
        if text.is_empty() {
            return;
        }
        let content = match stream {
            Stream::Stdout => StreamContent::stdout(&text),
            Stream::Stderr => StreamContent::stderr(&text),
        };
        let msg = JupyterMessage::new(content, cur.parent.as_ref());
        self.send(Outgoing::Iopub(msg));
    }

    /// Sends whatever the streams hold (the flusher's tick, and before
    /// every other message).
    pub(crate) fn flush(&self) {
        let mut cur = self.lock();
        self.flush_locked(&mut cur);
    }

    fn write(&self, stream: Stream, bytes: &[u8]) {
        let mut cur = self.lock();
        // The other stream's pending text was written first: it goes first.
        let other = match stream {
            Stream::Stdout => Stream::Stderr,
            Stream::Stderr => Stream::Stdout,
        };
        self.flush_stream(&mut cur, other);
        match stream {
            Stream::Stdout => cur.stdout.extend_from_slice(bytes),
            Stream::Stderr => cur.stderr.extend_from_slice(bytes),
        }
    }

    /// An iopub message, a child of the request being served, after the
    /// output printed before it.
    pub(crate) fn iopub(&self, content: impl Into<JupyterMessageContent>) {
        let mut cur = self.lock();
        self.flush_locked(&mut cur);
        let msg = JupyterMessage::new(content, cur.parent.as_ref());
        self.send(Outgoing::Iopub(msg));
    }

    fn count(&self) -> (ExecutionCount, bool) {
        let cur = self.lock();
        (cur.count, cur.silent)
    }

    /// Asks the notebook for a line on the stdin channel, if the request
    /// allows it.
    fn input_request(&self) -> bool {
        let mut cur = self.lock();
        if !cur.allow_stdin {
            return false;
        }
        self.flush_locked(&mut cur);
        let Some(parent) = cur.parent.as_ref() else {
            return false;
        };
        let request = InputRequest {
            prompt: String::new(),
            password: false,
        };
        self.send(Outgoing::Stdin(JupyterMessage::new(request, Some(parent))));
        true
    }
}

/// One of the program's output streams, into the outbox.
struct StreamWriter {
    outbox: Arc<Outbox>,
    stream: Stream,
}

impl Write for StreamWriter {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.outbox.write(self.stream, b);
        Ok(b.len())
    }

    /// The flusher sends within 50 ms, and every other message sends the
    /// streams first: a flush need not make a message per `print`.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One running `progress` loop's bar.
struct Bar {
    id: String,
    label: String,
    total: Option<u64>,
    done: u64,
    note: String,
    start: f64,
    /// When the bar was last sent.
    shown: f64,
}

/// How often a bar is redrawn, at most (seconds).
const BAR_INTERVAL: f64 = 0.2;
/// The width of a bar's filled part, in characters.
const BAR_WIDTH: usize = 30;

/// `secs` as `mm:ss`, or `h:mm:ss` past an hour.
fn clock_text(secs: f64) -> String {
    let s = if secs.is_finite() && secs > 0.0 {
        secs as u64
    } else {
        0
    };
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{:02}:{:02}", s / 60, s % 60)
    }
}

impl Bar {
    /// The bar as text, as a terminal shows it (`label ███▌   12/40
    /// [00:03<00:07, 3.98 it/s] note`), and as HTML with a `<progress>`
    /// element.
    fn media(&self, now: f64) -> Media {
        let elapsed = now - self.start;
        let rate = if elapsed > 0.0 {
            self.done as f64 / elapsed
        } else {
            0.0
        };
        let rate_text = if rate >= 1e6 {
            format!("{:.2}M it/s", rate / 1e6)
        } else if rate >= 1e3 {
            format!("{:.2}k it/s", rate / 1e3)
        } else {
            format!("{rate:.2} it/s")
        };
        let label = if self.label.is_empty() {
            String::new()
        } else {
            format!("{} ", self.label)
        };
        let (text, html_bar) = match self.total {
            Some(total) => {
                let frac = if total == 0 {
                    1.0
                } else {
                    (self.done as f64 / total as f64).min(1.0)
                };
                let eighths = (frac * (BAR_WIDTH * 8) as f64).round() as usize;
                let mut bar = "█".repeat(eighths / 8);
                if !eighths.is_multiple_of(8) {
                    bar.push(['▏', '▎', '▍', '▌', '▋', '▊', '▉'][eighths % 8 - 1]);
                }
                let pad = BAR_WIDTH.saturating_sub(bar.chars().count());
                let left = if rate > 0.0 {
                    (total.saturating_sub(self.done)) as f64 / rate
                } else {
                    0.0
                };
                (
                    format!(
                        "{label}{:>3}%|{bar}{}| {}/{total} [{}<{}, {rate_text}]",
                        (frac * 100.0).floor() as u64,
                        " ".repeat(pad),
                        self.done,
                        clock_text(elapsed),
                        clock_text(left)
                    ),
                    format!("<progress value=\"{}\" max=\"{total}\"></progress>", self.done),
                )
            }
            None => (
                format!("{label}{} [{}, {rate_text}]", self.done, clock_text(elapsed)),
                "<progress></progress>".to_string(),
            ),
        };
        let text = if self.note.is_empty() {
            text
        } else {
            format!("{text} {}", self.note)
        };
        let html = format!(
            "<div class=\"twill-progress\">{html_bar} <code>{}</code></div>",
            escape_html(&text)
        );
        Media::new(vec![MediaType::Plain(text), MediaType::Html(html)])
    }
}

/// `text` safe inside HTML.
pub(crate) fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// The media bundle of a shown value: every form it has.
fn media(shown: &twill_session::Display) -> Media {
    let mut forms = vec![MediaType::Plain(shown.text.clone())];
    if let Some(html) = &shown.html {
        forms.push(MediaType::Html(html.clone()));
    }
    if let Some(png) = &shown.png {
        forms.push(MediaType::Png(twill_plot::base64(png)));
    }
    if let Some(svg) = &shown.svg {
        forms.push(MediaType::Svg(svg.clone()));
    }
    Media::new(forms)
}

/// The host a kernel's session runs on.
pub(crate) struct KernelHost {
    real: RealHost,
    outbox: Arc<Outbox>,
    stdout: StreamWriter,
    stderr: StreamWriter,
    /// Lines the notebook typed in answer to `input_request`.
    input: mpsc::Receiver<String>,
    bars: Vec<Bar>,
    /// Bars shown so far, for their display ids.
    bars_made: u64,
}

impl KernelHost {
    pub(crate) fn new(outbox: Arc<Outbox>, input: mpsc::Receiver<String>) -> KernelHost {
        KernelHost {
            real: RealHost::with_stdout(Vec::new(), Box::new(io::sink())),
            stdout: StreamWriter {
                outbox: outbox.clone(),
                stream: Stream::Stdout,
            },
            stderr: StreamWriter {
                outbox: outbox.clone(),
                stream: Stream::Stderr,
            },
            outbox,
            input,
            bars: Vec::new(),
            bars_made: 0,
        }
    }

    fn bar_update(&mut self, force: bool) {
        let now = self.real.clock();
        let Some(bar) = self.bars.last_mut() else {
            return;
        };
        if !force && now - bar.shown < BAR_INTERVAL {
            return;
        }
        bar.shown = now;
        let update = UpdateDisplayData::new(bar.media(now), &bar.id);
        self.outbox.iopub(update);
    }
}

fn unavailable(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, what.to_string())
}

impl Host for KernelHost {
    fn read_file(&mut self, path: &str) -> io::Result<Vec<u8>> {
        self.real.read_file(path)
    }

    fn file_names(&mut self, dir: &str) -> Vec<String> {
        self.real.file_names(dir)
    }

    fn read_text(&mut self, path: &str) -> io::Result<String> {
        self.real.read_text(path)
    }

    fn write_file(&mut self, path: &str, bytes: &[u8]) -> io::Result<()> {
        self.real.write_file(path, bytes)
    }

    fn read_stdin(&mut self) -> io::Result<Vec<u8>> {
        Err(unavailable(
            "a notebook has no standard input to read to its end (read a file instead)",
        ))
    }

    /// The notebook shows an input box; the line typed is the answer.
    /// Ctrl-C (an interrupt) while it waits stops the program as anywhere.
    fn read_line(&mut self) -> io::Result<Option<String>> {
        if !self.outbox.input_request() {
            return Err(unavailable("this notebook does not take input"));
        }
        loop {
            match self.input.recv_timeout(Duration::from_millis(50)) {
                Ok(line) => return Ok(Some(line)),
                Err(mpsc::RecvTimeoutError::Timeout) if interrupt::requested() => {
                    return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"))
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(None),
            }
        }
    }

    fn stdout(&mut self) -> &mut dyn Write {
        &mut self.stdout
    }

    fn stderr(&mut self) -> &mut dyn Write {
        &mut self.stderr
    }

    fn args(&self) -> &[String] {
        self.real.args()
    }

    fn env_var(&self, name: &str) -> Option<String> {
        self.real.env_var(name)
    }

    fn clock(&self) -> f64 {
        self.real.clock()
    }

    fn draws_progress(&self) -> bool {
        true
    }

    fn progress_begin(&mut self, label: &str, total: Option<u64>) {
        self.bars_made += 1;
        let now = self.real.clock();
        let bar = Bar {
            id: format!("twill-progress-{}-{}", std::process::id(), self.bars_made),
            label: label.to_string(),
            total,
            done: 0,
            note: String::new(),
            start: now,
            shown: now,
        };
        let display = DisplayData {
            data: bar.media(now),
            metadata: Default::default(),
            transient: Some(Transient {
                display_id: Some(bar.id.clone()),
            }),
        };
        self.bars.push(bar);
        self.outbox.iopub(display);
    }

    fn progress_tick(&mut self) {
        if let Some(bar) = self.bars.last_mut() {
            bar.done += 1;
        }
        self.bar_update(false);
    }

    fn progress_note(&mut self, note: &str) {
        if let Some(bar) = self.bars.last_mut() {
            bar.note = note.to_string();
        }
        self.bar_update(false);
    }

    /// The bar stays, drawn at its final count (as tqdm's notebook bar
    /// does), so the notebook keeps how long the loop took.
    fn progress_end(&mut self) {
        self.bar_update(true);
        self.bars.pop();
    }

    fn shows_rich(&self) -> bool {
        true
    }

    fn display(&mut self, shown: &twill_session::Display) -> io::Result<()> {
        self.outbox.iopub(DisplayData::new(media(shown)));
        Ok(())
    }

    fn result(&mut self, shown: &twill_session::Display) -> io::Result<()> {
        let (count, silent) = self.outbox.count();
        if !silent {
            self.outbox.iopub(ExecuteResult::new(count, media(shown)));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_waits_for_a_whole_character() {
        let mut bytes = "aé".as_bytes()[..2].to_vec();
        assert_eq!(take_text(&mut bytes), "a");
        assert_eq!(bytes, vec![0xC3]);
        bytes.push(0xA9);
        assert_eq!(take_text(&mut bytes), "é");
        let mut bad = vec![b'x', 0xFF, b'y'];
        assert_eq!(take_text(&mut bad), "x\u{FFFD}y");
    }

    #[test]
    fn a_bar_shows_its_count_eta_and_note() {
        let bar = Bar {
            id: "b".into(),
            label: "epoch".into(),
            total: Some(40),
            done: 10,
            note: "loss 0.5".into(),
            start: 0.0,
            shown: 0.0,
        };
        let Some(MediaType::Plain(text)) = bar.media(5.0).content.first().cloned() else {
            panic!("no text form");
        };
        assert_eq!(
            text,
            "epoch  25%|███████▌                      | 10/40 [00:05<00:15, 2.00 it/s] loss 0.5"
        );
        assert_eq!(clock_text(3725.0), "1:02:05");
    }
}
