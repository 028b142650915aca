//! The crate's errors: [`TensorError`], the failure a user can cause (the
//! message names what was wrong), and [`AllocError`], a buffer the allocator
//! could not provide, which becomes a `TensorError` naming its size. They
//! live apart from the tensor type so that storage and the casts can report
//! errors without depending on `tensor`.

use crate::convert::CastError;
use crate::dtype::DType;

/// A failure a user can cause: the message names what was wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorError(pub String);

impl std::fmt::Display for TensorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<CastError> for TensorError {
    fn from(e: CastError) -> Self {
        TensorError(e.to_string())
    }
}

impl From<AllocError> for TensorError {
    fn from(e: AllocError) -> Self {
        TensorError(format!(
            "cannot allocate a tensor of {} {} elements ({:.1} GB): out of memory",
            e.elements,
            e.dtype,
            e.elements as f64 * e.dtype.size_in_bytes() as f64 / 1e9
        ))
    }
}

/// Why storage could not be made.
#[derive(Clone, Debug, PartialEq)]
pub struct AllocError {
    pub elements: usize,
    pub dtype: DType,
}
