//! Run-time errors and the evaluator's control flow: a failure with its
//! span ([`RuntimeError`]), `break`/`continue`/`return` travelling on the
//! `Err` side of [`R`], and [`Cx`], what the builtins and the autodiff
//! transforms may ask of the running evaluator (calling a function value,
//! the host, names for messages) without depending on it. Everything in the
//! crate above `value` may use this module; it uses only `value`.

use std::rc::Rc;

use twill_check::hir::Sym;
use twill_host::Host;
use twill_syntax::{Diagnostic, Span};

use crate::value::Value;

/// A run-time failure at a source location.
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeError {
    pub message: String,
    pub span: Span,
    pub notes: Vec<String>,
}

impl RuntimeError {
    pub fn to_diagnostic(&self) -> Diagnostic {
        let mut d = Diagnostic::error(self.span, self.message.clone());
        for n in &self.notes {
            d = d.with_note(n.clone());
        }
        d
    }
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

pub(crate) fn fail<T>(span: Span, message: impl Into<String>) -> R<T> {
    Err(Box::new(Ctrl::Error(RuntimeError {
        message: message.into(),
        span,
        notes: Vec::new(),
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
}
