//! The terminal end of diagnostics: decides on colour (only when stderr is
//! a terminal, never with NO_COLOR set) and writes what the session's
//! renderer made of each diagnostic to standard error.

use std::io::{IsTerminal, Write};

use twill_session::{render, Reporter, SourceMap};
use twill_syntax::Diagnostic;

/// Whether colour is used: only on a terminal, and never with NO_COLOR set.
fn use_color() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Reports to standard error.
pub struct Stderr {
    color: bool,
}

impl Stderr {
    pub fn new() -> Stderr {
        Stderr { color: use_color() }
    }
}

impl Reporter for Stderr {
    fn diagnostics(&mut self, sources: &SourceMap, diagnostics: &[Diagnostic]) {
        let mut err = std::io::stderr().lock();
        for d in diagnostics {
            let _ = err.write_all(render(sources, d, self.color).as_bytes());
        }
        let _ = err.flush();
    }

    fn error(&mut self, message: &str) {
        let _ = writeln!(std::io::stderr(), "error: {message}");
    }
}
