//! The static checker: resolves names to slots, checks what can be known
//! before running (unknown names, arities, methods, annotations,
//! assignability), and lowers the AST to the HIR the evaluator runs.
//! Dtype tracking through tensor operations joins it later; the rules it
//! will use live in `twill-tensor`, never here.

pub mod builtins;
pub mod hir;
pub mod resolve;
pub mod types;

pub use resolve::{host_binop, CheckOutput, Checker};
pub use types::{RtType, Ty};
