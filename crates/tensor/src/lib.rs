//! The tensor runtime: dtypes, and the number formatting that printing of
//! every numeric value goes through. Packed storage and kernels arrive with
//! the dtype-core work; this crate is where they live.

pub mod convert;
pub mod dtype;
pub mod format;
pub mod math;
pub mod shortest;

pub use dtype::DType;
pub use format::format_number;
