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
    /// A suggested fix (`Help: did you mean …?`), boxed so that a
    /// diagnostic stays small enough to return by value.
    pub help: Option<Box<String>>,
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
            help: None,
        }
    }

    pub fn warning(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(span, message)
        }
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
            self.help = Some(Box::new(h));
        }
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}
