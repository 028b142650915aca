//! The static checker: resolves names to slots, checks what can be known
//! before running (unknown names, arities, methods, annotations,
//! assignability), and lowers the AST to the HIR the evaluator runs.
//! Dtype tracking through tensor operations applies the rules of
//! `twill-tensor`, never rules of its own.
//!
//! The modules are layered, each using only those before it, so the
//! module graph has no cycle (`tools/modgraph.py` checks it):
//! `text` (a Str's characters, and whether they are all ASCII) and
//! `types` (static and run-time types, struct definitions, symbols) <-
//! `builtins` (the tables of builtins, host methods and tensor fields) <-
//! `help` (the help text of a name, from those tables) <- `hir` (the
//! resolved program) <- `resolve` (the checker itself).

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

pub mod builtins;
pub mod help;
pub mod hir;
pub mod resolve;
pub mod suggest;
pub mod text;
pub mod types;

pub use resolve::{host_binop, CheckOutput, Checker};
pub use types::{RtType, Ty};
