//! The tensor backend in force on this thread: the native kernels (the
//! default, no entry here) or another backend that computes the same
//! operations — today the self-hosted reference runtime (spec §16,
//! `crate::reference`). The bridge and the constructors ask this module
//! which one runs, and so depend on no backend in particular: a backend
//! installs itself here, and may itself be written on top of the
//! evaluator without making the evaluator depend on it.

use std::cell::Cell;

use twill_tensor::index::IndexItem;
use twill_tensor::ops::{Arg, BinaryOp, Op, OpError, Operand, Out};
use twill_tensor::{DType, Tensor, TensorError};

use crate::value::Value;

/// The entry points of a backend other than the native kernels (what the
/// native `Tensor` and `ops` functions do, one field each). Each
/// takes what the native function of the same role takes and must give
/// the same result, bit for bit, and the same error messages.
pub struct Backend {
    /// A registry operation on arguments bound to its slots
    /// (`twill_tensor::ops::call`).
    pub op: fn(Op, &[Option<Arg>]) -> Result<Out, OpError>,
    /// An elementwise operator (`twill_tensor::ops::binary`).
    pub binary: fn(BinaryOp, Operand, Operand) -> Result<Tensor, OpError>,
    /// `x.to(dt)` (`Tensor::cast`).
    pub cast: fn(&Tensor, DType) -> Result<Tensor, OpError>,
    /// A constructor by the builtin's name (`zeros`, `rand`, `tensor`, …)
    /// on the arguments the builtin has already read and checked (shapes
    /// as `Arr[Int]`, a host number as the rank-0 tensor of its exact
    /// scalar).
    pub construct: fn(&str, Vec<Value>) -> Result<Tensor, TensorError>,
    /// `x[items]` (`Tensor::index`).
    pub index: fn(&Tensor, &[IndexItem]) -> Result<Tensor, TensorError>,
    /// `x[items] = v` (`None`) or `x[items] op= v`
    /// (`twill_tensor::ops::assign::assign`).
    pub assign: AssignFn,
}

/// The signature of [`Backend::assign`].
pub type AssignFn = fn(&mut Tensor, &[IndexItem], Operand, Option<BinaryOp>) -> Result<(), TensorError>;

thread_local! {
    static ACTIVE: Cell<Option<&'static Backend>> = const { Cell::new(None) };
}

/// Makes `backend` this thread's backend (`None`: the native kernels).
pub fn install(backend: Option<&'static Backend>) {
    ACTIVE.with(|a| a.set(backend));
}

/// This thread's backend, if it is not the native kernels.
pub fn active() -> Option<&'static Backend> {
    ACTIVE.with(Cell::get)
}
