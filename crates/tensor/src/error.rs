//! The crate's errors: [`TensorError`], the failure a user can cause (the
//! message names what was wrong), and [`AllocError`], a buffer the allocator
//! could not provide, which becomes a `TensorError` naming its size (and
//! the tensor's dtype and shape where known). They
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
        TensorError(e.to_string())
    }
}

/// A buffer the allocator could not provide (or whose size does not fit
/// the address space): its size in bytes and, where the caller knows it,
/// the tensor it was for. Kernels make every input-sized buffer through
/// `storage::try_vec` and friends, which return this instead of aborting.
#[derive(Clone, Debug, PartialEq)]
pub struct AllocError {
    /// Bytes asked for, computed without overflow.
    pub bytes: u128,
    /// The tensor the buffer was for, when known: its dtype and shape.
    pub tensor: Option<(DType, Vec<usize>)>,
}

impl AllocError {
    /// The failure to allocate `n` values of `T`.
    pub fn of<T>(n: usize) -> AllocError {
        AllocError {
            bytes: n as u128 * std::mem::size_of::<T>() as u128,
            tensor: None,
        }
    }

    /// The same failure, said to be for a `dtype` tensor of `shape`.
    pub fn for_tensor(self, dtype: DType, shape: &[usize]) -> AllocError {
        AllocError {
            tensor: Some((dtype, shape.to_vec())),
            ..self
        }
    }
}

impl std::fmt::Display for AllocError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.tensor {
            Some((dtype, shape)) => write!(
                f,
                // `{:?}` of a shape is `[2, 3]`, as `tensor::shape_str` writes it.
                "cannot allocate {} bytes for a {dtype} tensor of shape {shape:?}",
                self.bytes
            ),
            None => write!(f, "cannot allocate {} bytes: out of memory", self.bytes),
        }
    }
}
