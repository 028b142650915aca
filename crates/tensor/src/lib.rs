//! The tensor runtime: dtypes, and the number formatting that printing of
//! every numeric value goes through. Packed storage and kernels arrive with
//! the dtype-core work; this crate is where they live.

pub mod cast;
pub mod construct;
pub mod convert;
pub mod decimal;
pub mod display;
pub mod dtype;
pub mod error;
pub mod float_format;
pub mod format;
pub mod math;
pub mod ops;
pub mod promote;
pub mod shortest;
pub mod storage;
pub mod tensor;

pub use dtype::DType;
pub use format::format_number;
pub use tensor::{Tensor, TensorError};
