//! The evaluator: runs the checker's HIR over host values, with builtins,
//! printing (spec §6) and run-time errors that carry spans. It never
//! resolves a name and never panics on a user program.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

// `clippy::wildcard_enum_match_arm` is allowed in the modules being rewritten
// for typed operations (issue 10): their `_`/`other` arms over Value, Ty,
// BinOp, Builtin and MathFn are catch-all type errors today, and the rewrite
// replaces them; the allow goes when it lands.
#[allow(clippy::wildcard_enum_match_arm)]
pub mod autodiff;
#[allow(clippy::wildcard_enum_match_arm)]
mod builtins;
mod data;
#[allow(clippy::wildcard_enum_match_arm)]
mod interp;
mod ops;
pub mod print;
pub mod stdlib;
#[allow(clippy::wildcard_enum_match_arm)]
mod tensors;
pub mod value;

pub use interp::{Interp, RuntimeError};
pub use value::Value;
