//! Tensor operations: elementwise group (being written).

use super::OpSpec;

pub const OPS: &[OpSpec] = &[];

use super::{BinaryOp, Operand};
use crate::tensor::{Tensor, TensorError};

pub fn binary(op: BinaryOp, _a: Operand, _b: Operand) -> Result<Tensor, TensorError> {
    Err(TensorError(format!("`{op:?}` on tensors is not supported yet")))
}
