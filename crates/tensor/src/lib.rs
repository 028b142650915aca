//! The tensor runtime: the seven dtypes and their promotion rules, packed
//! storage and the tensor value over it, the casts between dtypes, the
//! number formatting every printed value goes through, and the kernels of
//! the tensor operations (`ops`).
//!
//! The modules are layered, and the module graph is acyclic
//! (`tools/modgraph.py crates/tensor/src` checks it): `dtype`, `promote`,
//! `math`, `decimal`, `float_format` and `isa` depend on nothing else (`lab`, the formats lab's formats and the one rounding routine, on `float_format` only); `shortest`
//! and `format` print numbers; `convert` owns every change of format,
//! `error` the error types, `storage` the element traits and the one
//! `dispatch!`, `tensor` the value, `index` NumPy's subscripts over it,
//! `cast`, `construct` and `display` build on it, and `ops` on all of them, never the reverse.
//!
//! Non-test code never panics on purpose: `unwrap`, `expect`, `panic!`,
//! `unreachable!`, `todo!` and `unimplemented!` are denied below, so every
//! failure a caller can cause is a [`TensorError`].

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::todo,
    clippy::unimplemented,
    clippy::unreachable
)]
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::todo,
        clippy::unimplemented,
        clippy::unreachable
    )
)]
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

pub mod cast;
pub mod construct;
pub mod convert;
pub mod decimal;
pub mod display;
pub mod dtype;
pub mod error;
pub mod float_format;
pub mod fmtspec;
pub mod format;
pub mod index;
pub mod isa;
pub mod lab;
pub mod math;
pub mod ops;
pub mod promote;
pub mod shortest;
pub mod storage;
pub mod tensor;

pub use dtype::DType;
pub use error::TensorError;
pub use format::format_number;
pub use tensor::Tensor;
