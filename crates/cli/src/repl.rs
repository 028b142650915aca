//! The REPL: reads statements, prints the value of each expression
//! statement, keeps definitions, and survives every error. On a terminal it
//! uses rustyline (history, Tab completion from the session, syntax
//! colours from the lexer unless `NO_COLOR` is set, and a validator that
//! asks for another line while brackets or a block are open); otherwise it
//! reads plain lines with no prompt, so it can be driven by a pipe. A line
//! starting with `.` or `else` continues the entry before it (`continues`).
//! Each entry goes to the `twill_session::Session`, which keeps the
//! definitions; this module only reads lines. Ctrl-C while an entry runs
//! stops that entry with `error: interrupted` and the session goes on
//! (`ctrl_c`); at the prompt it discards the line being typed.

use std::io::{BufRead, IsTerminal};

use std::cell::RefCell;
use std::rc::Rc;

use rustyline::completion::{Completer, FilenameCompleter, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::{CmdKind, Highlighter};
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Helper, Hinter};
use twill_session::{interrupt, Flow, Options, RealHost, Reporter, Session, Status};
use twill_syntax::FileId;

use crate::ctrl_c;
use crate::render::Stderr;

/// Whether the text typed so far is a whole entry (a `:command`, or
/// statements with every bracket and block closed).
fn complete(input: &str) -> bool {
    input.trim_start().starts_with(':') || !twill_syntax::parse(input, FileId::default()).incomplete
}

/// A session on the real host.
fn session() -> Session {
    Session::new(Box::new(RealHost::interactive()), Options::default())
}

/// The line editor's helper: validation (another line while brackets are
/// open) and Tab completion — the session's (`Session::complete`: names,
/// members by static type, keyword arguments), or file paths inside a
/// string literal.
#[derive(Helper, Hinter)]
struct TwillHelper {
    session: Rc<RefCell<Session>>,
    files: FilenameCompleter,
    /// Whether to colour the input line (`NO_COLOR` unset).
    colour: bool,
}

impl Highlighter for TwillHelper {
    fn highlight<'l>(&self, line: &'l str, _pos: usize) -> std::borrow::Cow<'l, str> {
        if self.colour && !line.starts_with(':') {
            std::borrow::Cow::Owned(highlight(line))
        } else {
            std::borrow::Cow::Borrowed(line)
        }
    }

    fn highlight_char(&self, _line: &str, _pos: usize, _kind: CmdKind) -> bool {
        self.colour
    }
}

/// The ANSI colour of a token: keywords magenta, numbers and Bools cyan,
/// strings green, a malformed token red; the rest as typed.
// Every other token is drawn as typed.
#[allow(clippy::wildcard_enum_match_arm)]
fn colour_of(tok: &twill_syntax::lexer::Tok) -> Option<&'static str> {
    use twill_syntax::lexer::Tok;
    Some(match tok {
        Tok::Let
        | Tok::Var
        | Tok::Fn
        | Tok::Return
        | Tok::If
        | Tok::Else
        | Tok::While
        | Tok::For
        | Tok::In
        | Tok::Break
        | Tok::Continue
        | Tok::And
        | Tok::Or
        | Tok::Not
        | Tok::Match
        | Tok::Struct
        | Tok::Import => "\x1b[35m",
        Tok::Int(_) | Tok::Float(_) | Tok::True | Tok::False => "\x1b[36m",
        Tok::Str(_) | Tok::FStart | Tok::FText(_) | Tok::FEnd => "\x1b[32m",
        Tok::Error => "\x1b[31m",
        _ => return None,
    })
}

/// `line` with its tokens coloured and its comments grey, from the lexer,
/// so the colours follow the language's own token rules.
fn highlight(line: &str) -> String {
    const RESET: &str = "\x1b[0m";
    let mut out = String::with_capacity(line.len() + 32);
    let mut last = 0;
    let gap = |out: &mut String, text: &str| match text.find('#') {
        Some(at) => {
            out.push_str(&text[..at]);
            out.push_str("\x1b[90m");
            out.push_str(&text[at..]);
            out.push_str(RESET);
        }
        None => out.push_str(text),
    };
    for (start, tok, end) in twill_syntax::lexer::Lexer::new(line, FileId::default(), None) {
        let (Some(before), Some(text)) = (line.get(last..start), line.get(start..end)) else {
            continue;
        };
        gap(&mut out, before);
        match colour_of(&tok) {
            Some(c) => {
                out.push_str(c);
                out.push_str(text);
                out.push_str(RESET);
            }
            None => out.push_str(text),
        }
        last = end;
    }
    gap(&mut out, line.get(last..).unwrap_or(""));
    out
}

impl Completer for TwillHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        ctx: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = line.get(..pos).unwrap_or(line);
        // An odd number of quotes before the cursor: inside a string.
        let quotes = before
            .matches('"')
            .count()
            .saturating_sub(before.matches("\\\"").count());
        if quotes % 2 == 1 {
            return self.files.complete(line, pos, ctx);
        }
        // While an entry runs the session is busy (and nothing is typed).
        let Ok(mut session) = self.session.try_borrow_mut() else {
            return Ok((pos, Vec::new()));
        };
        let (start, names) = session.complete(line, pos);
        let pairs = names
            .into_iter()
            .map(|n| Pair {
                display: n.clone(),
                replacement: n,
            })
            .collect();
        Ok((start, pairs))
    }
}

impl Validator for TwillHelper {
    fn validate(&self, ctx: &mut ValidationContext) -> rustyline::Result<ValidationResult> {
        if complete(ctx.input()) {
            Ok(ValidationResult::Valid(None))
        } else {
            Ok(ValidationResult::Incomplete)
        }
    }
}

fn history_path() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("TWILL_HISTORY") {
        return Some(p.into());
    }
    std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".twill_history"))
}

pub fn run() -> i32 {
    ctrl_c::for_session();
    if std::io::stdin().is_terminal() {
        interactive()
    } else {
        piped()
    }
}

/// Whether a line continues the entry before it although that entry was
/// complete (spec §12.1): it starts with `.` (a method chain) or `else`.
fn continues(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with('.')
        || t.strip_prefix("else")
            .is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
}

/// Whether more of standard input can be read at once: bytes buffered in
/// `reader`, or waiting on the descriptor (end of input counts). A writer
/// that has not written the next line yet gets `false`.
fn more_input(reader: &std::io::BufReader<std::io::Stdin>) -> bool {
    if !reader.buffer().is_empty() {
        return true;
    }
    let mut fd = libc::pollfd {
        fd: 0,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, and a zero timeout: poll only looks.
    unsafe { libc::poll(&mut fd, 1, 0) > 0 }
}

/// Reads plain lines, joining them while the input is incomplete. A
/// complete entry runs once the next line shows that it does not continue
/// it (a line starting with `.` or `else` does), or at once when no next
/// line is there yet (a program driving the REPL line by line waits for
/// each entry's output).
fn piped() -> i32 {
    let mut reporter = Stderr::new();
    let mut session = session();
    let mut buf = String::new();
    // A complete entry, run once the next line shows it is not continued.
    let mut ready: Option<String> = None;
    // Brackets open in `buf`, counted line by line.
    let mut depth = 0;
    macro_rules! run {
        ($text:expr) => {
            interrupt::clear();
            match session.entry(&$text, &mut reporter) {
                Flow::Quit => return Status::Ok.code(),
                Flow::Exit(code) => return code,
                Flow::Continue => {}
            }
        };
    }
    // Larger than standard input's own buffer, so reads bypass it and
    // everything buffered is visible here (`more_input`).
    let mut reader = std::io::BufReader::with_capacity(1 << 16, std::io::stdin());
    let mut number = 0usize;
    loop {
        if !more_input(&reader) {
            if let Some(r) = ready.take() {
                run!(r);
            }
        }
        let mut bytes = Vec::new();
        match reader.read_until(b'\n', &mut bytes) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        number += 1;
        if bytes.last() == Some(&b'\n') {
            bytes.pop();
        }
        // A line that is not UTF-8 is an error for its entry only.
        let Ok(line) = String::from_utf8(bytes) else {
            if let Some(r) = ready.take() {
                run!(r);
            }
            reporter.error(&format!(
                "<stdin>:{number}: this line is not valid UTF-8; the entry is discarded"
            ));
            buf.clear();
            depth = 0;
            continue;
        };
        let line = line.strip_suffix('\r').unwrap_or(&line);
        if buf.is_empty() {
            if let Some(r) = ready.take() {
                if continues(line) {
                    buf = r;
                } else {
                    run!(r);
                }
            }
        }
        buf.push_str(line);
        buf.push('\n');
        // While a bracket is open the entry is incomplete, and counting the
        // new line's brackets says so without parsing the whole entry again
        // (once per line, that made a long entry quadratic).
        let open = twill_syntax::lexer::bracket_depth(depth, line);
        if let Some(d) = open.filter(|d| *d > 0 && !buf.trim_start().starts_with(':')) {
            depth = d;
            continue;
        }
        depth = open.unwrap_or(0);
        if complete(&buf) {
            let entry = std::mem::take(&mut buf);
            if entry.trim_start().starts_with(':') {
                run!(entry);
            } else {
                ready = Some(entry);
            }
            depth = 0;
        }
    }
    if let Some(r) = ready.take() {
        run!(r);
    }
    if !buf.trim().is_empty() {
        if let Flow::Exit(code) = session.entry(&buf, &mut reporter) {
            return code;
        }
    }
    Status::Ok.code()
}

fn interactive() -> i32 {
    // Tab completes what all candidates share, a second Tab lists them.
    let config = rustyline::Config::builder()
        .auto_add_history(true)
        .completion_type(rustyline::CompletionType::List)
        .build();
    let Ok(mut editor) =
        rustyline::Editor::<TwillHelper, rustyline::history::DefaultHistory>::with_config(config)
    else {
        return piped();
    };
    let session = Rc::new(RefCell::new(session()));
    editor.set_helper(Some(TwillHelper {
        session: session.clone(),
        files: FilenameCompleter::new(),
        colour: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    }));
    let history = history_path();
    if let Some(h) = &history {
        let _ = editor.load_history(h);
    }
    println!(
        "twill {} — :help for help, :quit or Ctrl-D to leave",
        env!("CARGO_PKG_VERSION")
    );
    let mut reporter = Stderr::new();
    // The last entry, which a line starting with `.` or `else` continues:
    // it already ran when Enter was pressed, so the two run again as one.
    let mut last = String::new();
    loop {
        match editor.readline("twill> ") {
            Ok(line) => {
                interrupt::clear();
                let line = if continues(&line) && !last.is_empty() {
                    format!("{last}\n{line}")
                } else {
                    line
                };
                last = if line.trim_start().starts_with(':') {
                    String::new()
                } else {
                    line.clone()
                };
                let flow = session.borrow_mut().entry(&line, &mut reporter);
                match flow {
                    Flow::Quit => break,
                    Flow::Exit(code) => return code,
                    Flow::Continue => {}
                }
            }
            Err(ReadlineError::Interrupted) => continue,
            Err(_) => break,
        }
        if let Some(h) = &history {
            let _ = editor.save_history(h);
        }
    }
    Status::Ok.code()
}
