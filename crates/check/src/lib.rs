//! The static checker: resolves names to slots, checks what can be known
//! before running (unknown names, arities, methods, annotations,
//! assignability), and lowers the AST to the HIR the evaluator runs.
//! Dtype tracking through tensor operations joins it later; the rules it
//! will use live in `twill-tensor`, never here.

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

pub mod builtins;
pub mod hir;
pub mod resolve;
pub mod types;

pub use resolve::{host_binop, CheckOutput, Checker};
pub use types::{RtType, Ty};
