//! Source text to syntax tree: the lexer (logos), the grammar (lalrpop), the
//! AST with byte spans, and the diagnostic type every later phase reports
//! with. This crate knows nothing about names, types or tensors.
//!
//! Invariant: parsing never panics and always returns a tree; malformed input
//! becomes diagnostics and `Error` nodes.

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
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod ast;
pub mod diagnostic;
pub mod lexer;
pub mod parser;
pub mod span;

pub use diagnostic::{Diagnostic, Severity};
pub use parser::{parse, Parsed};
pub use span::{FileId, Span};
