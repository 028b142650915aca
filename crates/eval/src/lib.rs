//! The evaluator: runs the checker's HIR over host values, with builtins,
//! printing (spec §6) and run-time errors that carry spans. It never
//! resolves a name and never panics on a user program.

pub mod autodiff;
mod builtins;
mod data;
mod interp;
mod ops;
pub mod print;
pub mod stdlib;
mod tensors;
pub mod value;

pub use interp::{Interp, RuntimeError};
pub use twill_host::Host;
pub use value::Value;
