//! The shorthands the vjp rules are written in (`rules`, `linalg`): a
//! registry operation on positional arguments and the four arithmetic
//! operators on any values, each recorded when an operand is tracked, so
//! that a rule can itself be differentiated.

use twill_syntax::ast::BinOp;
use twill_tensor::ops::Op;

use super::record::{binary_values, op_pos};
use crate::value::Value;

pub(super) type Res<T> = Result<T, String>;

/// A registry operation on positional arguments, recorded when tracked.
pub(super) fn o(o: Op, pos: &[Value]) -> Res<Value> {
    op_pos(o, pos)
}

/// `a op b` on any values (host numbers too), recorded when tracked.
pub(super) fn binary(bop: BinOp, a: &Value, b: &Value) -> Res<Value> {
    binary_values(bop, a, b).map_err(|f| f.message)
}

pub(super) fn add(a: &Value, b: &Value) -> Res<Value> {
    binary(BinOp::Add, a, b)
}
pub(super) fn sub(a: &Value, b: &Value) -> Res<Value> {
    binary(BinOp::Sub, a, b)
}
pub(super) fn mul(a: &Value, b: &Value) -> Res<Value> {
    binary(BinOp::Mul, a, b)
}
pub(super) fn div(a: &Value, b: &Value) -> Res<Value> {
    binary(BinOp::Div, a, b)
}
