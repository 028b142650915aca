//! The evaluator: runs the checker's HIR over host values, with builtins,
//! printing (spec §6) and run-time errors that carry spans. It never
//! resolves a name and never panics on a user program.

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

pub mod autodiff;
pub mod backend;
mod bridge;
mod builtins;
mod code;
mod data;
mod error;
pub mod figure;
mod interp;
pub mod interrupt;
mod ops;
pub mod print;
pub mod reference;
pub mod reserve;
pub mod stdlib;
pub mod value;

pub use error::{ErrorKind, RuntimeError};
pub use interp::{Engine, Interp};
pub use twill_host::Host;
pub use value::Value;
