//! Renderer-agnostic diagnostics. Every phase (lexing, parsing, checking,
//! evaluation) reports problems as plain data with a [`Span`]; only the CLI
//! turns a [`Diagnostic`] into text.

use crate::span::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Severity {
    Error,
    Warning,
}

/// One secondary label: a span with a short message.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// What a diagnostic rarely has: a suggested fix, and the call stack of a
/// runtime error raised inside functions (spec §10.9).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extra {
    pub help: Option<String>,
    pub trace: Vec<TraceLine>,
}

/// One line of a call stack: `at fname` with the place it names, or a
/// folded run (`… 9,995 more frames of fib …`) with none.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceLine {
    pub text: String,
    pub span: Option<Span>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    /// Where the problem is; the primary label.
    pub span: Span,
    /// Text shown under the primary span (may be empty).
    pub label: String,
    pub secondary: Vec<Label>,
    pub notes: Vec<String>,
    /// A suggested fix and a call stack, boxed so that a diagnostic stays
    /// small enough to return by value.
    pub extra: Option<Box<Extra>>,
}

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            span,
            label: String::new(),
            secondary: Vec::new(),
            notes: Vec::new(),
            extra: None,
        }
    }

    pub fn warning(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(span, message)
        }
    }

    /// The same diagnostic at another place.
    pub fn relocate(mut self, span: Span) -> Diagnostic {
        self.span = span;
        self
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = label.into();
        self
    }

    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.secondary.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// Sets the suggested fix, when there is one.
    pub fn with_help(mut self, help: Option<String>) -> Diagnostic {
        if let Some(h) = help {
            self.extra.get_or_insert_with(Box::default).help = Some(h);
        }
        self
    }

    /// Sets the call stack shown under the diagnostic.
    pub fn with_trace(mut self, trace: Vec<TraceLine>) -> Diagnostic {
        if !trace.is_empty() {
            self.extra.get_or_insert_with(Box::default).trace = trace;
        }
        self
    }

    pub fn help(&self) -> Option<&str> {
        self.extra.as_ref().and_then(|e| e.help.as_deref())
    }

    pub fn trace(&self) -> &[TraceLine] {
        self.extra.as_ref().map_or(&[], |e| &e.trace)
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}
