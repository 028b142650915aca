//! Run-time errors and the evaluator's control flow: a failure with its
//! span ([`RuntimeError`]), `break`/`continue`/`return` travelling on the
//! `Err` side of [`R`], and [`Cx`], what the builtins and the autodiff
//! transforms may ask of the running evaluator (calling a function value,
//! the host, names for messages) without depending on it. Everything in the
//! crate above `value` may use this module; it uses only `value`.

use std::rc::Rc;

use twill_check::hir::Sym;
use twill_host::Host;
use twill_syntax::diagnostic::TraceLine;
use twill_syntax::{Diagnostic, Span};

use crate::value::Value;

/// What kind of failure a runtime error is: callers (the golden harness,
/// an editor, a notebook) can tell them apart without reading messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// An operand or argument the operation does not accept: a value of
    /// the wrong type, or outside the operation's domain.
    Invalid,
    /// Int arithmetic whose result does not fit in 64 bits.
    Overflow,
    /// Integer division or modulo by zero.
    ZeroDivision,
    /// An index out of range (Arr, Str or tensor).
    Index,
    /// A tensor operation rejected its arguments (shape, dtype, axis).
    Tensor,
    /// Reading or writing a file failed.
    Io,
    /// `assert` of a false condition.
    Assertion,
    /// Recursion deeper than the interpreter allows.
    StackOverflow,
    /// Stopped by Ctrl-C (spec §12.1).
    Interrupted,
    /// Stopped because memory ran out while the program ran (an
    /// allocation had to be served from the process's reserve).
    OutOfMemory,
    /// Not a failure: `exit(code)` ended the program (spec §10.7), with
    /// this status; nothing is reported.
    Exit(i32),
}

impl ErrorKind {
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Invalid => "invalid",
            ErrorKind::Overflow => "overflow",
            ErrorKind::ZeroDivision => "zero-division",
            ErrorKind::Index => "index",
            ErrorKind::Tensor => "tensor",
            ErrorKind::Io => "io",
            ErrorKind::Assertion => "assertion",
            ErrorKind::StackOverflow => "stack-overflow",
            ErrorKind::Interrupted => "interrupted",
            ErrorKind::OutOfMemory => "out-of-memory",
            ErrorKind::Exit(_) => "exit",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A failure below the tree walker, before it has a span: its kind and
/// message (host operators, host math).
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    pub kind: ErrorKind,
    pub message: String,
}

impl Failure {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Failure {
        Failure {
            kind,
            message: message.into(),
        }
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure::new(ErrorKind::Invalid, message)
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Failure {
        Failure::new(ErrorKind::Invalid, message)
    }
}

/// A run-time failure at a source location.
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeError {
    pub kind: ErrorKind,
    pub message: String,
    pub span: Span,
    pub notes: Vec<String>,
    /// The suggested fix, shown as the diagnostic's help line.
    pub help: Option<String>,
    /// The calls the error passed through on its way out, innermost
    /// first: each callee's name and the place it was called from.
    pub frames: Vec<(Rc<str>, Span)>,
}

/// A call stack shows at most this many lines (spec §10.9).
const MAX_TRACE: usize = 20;

impl RuntimeError {
    pub fn new(kind: ErrorKind, span: Span, message: impl Into<String>) -> RuntimeError {
        RuntimeError {
            kind,
            message: message.into(),
            span,
            notes: Vec::new(),
            help: None,
            frames: Vec::new(),
        }
    }

    pub fn to_diagnostic(&self) -> Diagnostic {
        let mut d = Diagnostic::error(self.span, self.message.clone());
        for n in &self.notes {
            d = d.with_note(n.clone());
        }
        d.with_help(self.help.clone()).with_trace(self.trace())
    }

    /// The call stack, outermost call first, each function with the place
    /// in it where the next call (or the error) happened: top-level code
    /// first, then `at f (FILE:LINE:COL)` per frame. A run of more than
    /// three frames of one function shows its first two and last one
    /// around `… N more frames of f …`; at most [`MAX_TRACE`] lines.
    fn trace(&self) -> Vec<TraceLine> {
        if self.frames.is_empty() {
            return Vec::new();
        }
        // (function, place in it), outermost first.
        let mut frames: Vec<(&str, Span)> = Vec::with_capacity(self.frames.len() + 1);
        let places = self
            .frames
            .iter()
            .rev()
            .map(|(_, s)| *s)
            .chain(std::iter::once(self.span));
        let names = std::iter::once("<top level>").chain(self.frames.iter().rev().map(|(n, _)| &**n));
        frames.extend(names.zip(places));
        let mut lines: Vec<TraceLine> = Vec::new();
        let mut i = 0;
        while i < frames.len() {
            let name = frames[i].0;
            let run = frames[i..].iter().take_while(|(n, _)| *n == name).count();
            let at = |(n, s): (&str, Span)| TraceLine {
                text: format!("at {n}"),
                span: Some(s),
            };
            if run > 3 {
                lines.push(at(frames[i]));
                lines.push(at(frames[i + 1]));
                lines.push(TraceLine {
                    text: format!(
                        "… {} more frame{} of {name} …",
                        grouped(run - 3),
                        if run - 3 == 1 { "" } else { "s" }
                    ),
                    span: None,
                });
                lines.push(at(frames[i + run - 1]));
            } else {
                lines.extend(frames[i..i + run].iter().map(|f| at(*f)));
            }
            i += run;
        }
        if lines.len() > MAX_TRACE {
            let head = MAX_TRACE / 2;
            let tail = lines.split_off(lines.len() - (MAX_TRACE - head - 1));
            let hidden = lines.len() - head;
            lines.truncate(head);
            lines.push(TraceLine {
                text: format!("… {} more lines of the call stack …", grouped(hidden)),
                span: None,
            });
            lines.extend(tail);
        }
        lines
    }
}

/// `n` with a comma every three digits.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub(crate) enum Ctrl {
    Break,
    Continue,
    Return(Value),
    Error(RuntimeError),
}

/// Every evaluation returns this. Boxing the control-flow side keeps
/// `R<Value>` at 16 bytes, so it comes back in two registers: the common
/// path (a value) pays nothing for the rare one (break, return, an error).
pub(crate) type R<T> = Result<T, Box<Ctrl>>;

// A `Value`'s unused tags hold the error: an `R<Value>` is as small as
// the value (see `Value`'s layout).
const _: () = assert!(std::mem::size_of::<R<crate::value::Value>>() == 16);

/// An [`ErrorKind::Invalid`] error at `span`: the common case.
pub(crate) fn fail<T>(span: Span, message: impl Into<String>) -> R<T> {
    fail_as(ErrorKind::Invalid, span, message)
}

/// A `Failure` at `span`.
pub(crate) fn fail_with<T>(span: Span, f: Failure) -> R<T> {
    fail_as(f.kind, span, f.message)
}

pub(crate) fn fail_as<T>(kind: ErrorKind, span: Span, message: impl Into<String>) -> R<T> {
    Err(Box::new(Ctrl::Error(RuntimeError {
        kind,
        message: message.into(),
        span,
        notes: Vec::new(),
        help: None,
        frames: Vec::new(),
    })))
}

/// The message of an error, for callers that report it elsewhere.
#[allow(clippy::boxed_local)] // the evaluator's error type is boxed
pub(crate) fn ctrl_message(c: Box<Ctrl>) -> String {
    match *c {
        Ctrl::Error(e) => e.message,
        Ctrl::Break | Ctrl::Continue | Ctrl::Return(_) => "invalid argument".into(),
    }
}

/// What code below the tree walker needs from it: calling a function
/// value (the autodiff transforms call the user's function), the host for
/// input and output, and the names behind symbols for messages.
pub(crate) trait Cx {
    fn call_value(&mut self, callee: &Value, args: Vec<Value>, span: Span) -> R<Value>;
    fn host(&mut self) -> &mut dyn Host;
    fn sym_name(&self, sym: Sym) -> Rc<str>;
    /// The symbol the checker interned for `name` (`Sym(u32::MAX)`, which
    /// names nothing, if it did not).
    fn sym_of(&self, name: &str) -> Sym;
    /// The next number of the program's random generator (spec §11.5).
    fn next_seed(&mut self) -> u64;
    /// Restarts the program's random generator from `n` (`seed(n)`).
    fn reseed(&mut self, n: u64);
    /// `progress(it, …)` marked `it`: the `for` loop that next starts over
    /// this very value (the same object, not an equal one) draws a bar.
    /// Called only when the host draws progress bars.
    fn mark_progress(&mut self, it: &Value, total: Option<u64>, label: String);
}
