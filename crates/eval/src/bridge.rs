//! The bridge between host values and the tensor crate: a `Value` as a
//! kernel argument and back, host numbers as exact scalars, and the plain
//! (untracked) forms of tensor operations, casts and operators. It knows
//! nothing of the evaluator or of tapes: autodiff builds on it.

// The `other =>` arms over `Value` in this module are type errors ("needs a
// tensor, not a Str"): a new kind of value is rejected by them until it is
// taught otherwise, which is the behaviour wanted. Matches over the
// registries' enums (Op, Builtin, HostMethod, TensorField, BinOp, DType)
// have no wildcard here, except where an allow in place says why.
#![allow(clippy::wildcard_enum_match_arm)]

use std::rc::Rc;

use twill_syntax::Span;
use twill_tensor::convert::Scalar;
pub(crate) use twill_tensor::ops::OpError;
use twill_tensor::ops::{Arg, BinaryOp, Op, Operand, Out};
use twill_tensor::{DType, Tensor, TensorError};

use crate::error::{ctrl_message, fail, R};
use crate::value::Value;

pub(crate) fn terr<T>(span: Span, e: TensorError) -> R<T> {
    fail(span, e.0)
}

pub(crate) fn tensor_value(t: Tensor) -> Value {
    Value::Tensor(Rc::new(t))
}

/// An Int as an exact scalar: i32 when it fits, so that casting it rounds
/// once from the exact value; beyond i32, an f64 rounded to odd, which a
/// following rounding to any narrower float turns into the correctly
/// rounded result (round-to-odd keeps the sticky bit).
pub(crate) fn int_scalar(i: i64) -> Scalar {
    if let Ok(v) = i32::try_from(i) {
        return Scalar::I32(v);
    }
    let f = i as f64;
    let back = f as i128;
    if back == i128::from(i) {
        return Scalar::F64(f);
    }
    // Truncate toward zero, then make the last mantissa bit odd.
    let toward_zero = if back.abs() > i128::from(i).abs() {
        f64::from_bits(f.to_bits() - 1)
    } else {
        f
    };
    Scalar::F64(f64::from_bits(toward_zero.to_bits() | 1))
}

/// The host value of one element (`.item()`, iteration results).
pub(crate) fn scalar_value(s: Scalar) -> Value {
    match s {
        Scalar::Bool(b) => Value::Bool(b),
        Scalar::I8(i) => Value::Int(i64::from(i)),
        Scalar::I32(i) => Value::Int(i64::from(i)),
        Scalar::Bf16(_) | Scalar::F16(_) | Scalar::F32(_) | Scalar::F64(_) => Value::F64(s.to_f64()),
    }
}

/// A host number or one-element tensor as a scalar, for `full`.
pub(crate) fn value_scalar(v: &Value, span: Span, what: &str) -> R<Scalar> {
    match v {
        Value::Int(i) => Ok(int_scalar(*i)),
        Value::F64(x) => Ok(Scalar::F64(*x)),
        Value::Bool(b) => Ok(Scalar::Bool(*b)),
        Value::Tensor(t) if t.numel() == 1 => t.item().or_else(|e| terr(span, e)),
        other => fail(
            span,
            format!("{what} must be a number, not `{}`", other.type_name()),
        ),
    }
}

/// An integer argument: an Int, or an integral one-element tensor.
pub(crate) fn int_arg(v: &Value, span: Span, what: &str) -> R<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::Tensor(t) if t.numel() == 1 && t.ndim() == 0 => {
            let s = t.item().or_else(|e| terr(span, e))?;
            let x = s.to_f64();
            if x.fract() == 0.0 && x.abs() < 9.2e18 {
                Ok(x as i64)
            } else {
                fail(
                    span,
                    format!(
                        "{what} must be an integer, not {}",
                        twill_tensor::format_number(x)
                    ),
                )
            }
        }
        other => fail(
            span,
            format!("{what} must be an Int, not `{}`", other.type_name()),
        ),
    }
}

pub(crate) fn number_arg(v: &Value, span: Span, what: &str) -> R<f64> {
    match v {
        Value::Int(i) => Ok(*i as f64),
        Value::F64(x) => Ok(*x),
        Value::Tensor(t) if t.numel() == 1 => Ok(t.item().or_else(|e| terr(span, e))?.to_f64()),
        other => fail(
            span,
            format!("{what} must be a number, not `{}`", other.type_name()),
        ),
    }
}

pub(crate) fn dtype_arg(v: Option<&Value>, span: Span) -> R<DType> {
    match v {
        None => Ok(DType::F64),
        Some(Value::DType(d)) => Ok(*d),
        Some(other) => fail(
            span,
            format!(
                "a dtype must be one of bool i8 i32 bf16 f16 f32 f64, not `{}`",
                other.type_name()
            ),
        ),
    }
}

/// A shape: an `Arr[Int]`, an integral rank-1 tensor, or a single Int.
pub(crate) fn shape_arg(v: &Value, span: Span) -> R<Vec<usize>> {
    let dims: Vec<i64> = match v {
        Value::Int(i) => vec![*i],
        Value::Arr(items) => {
            let mut out = Vec::with_capacity(items.len());
            for it in items.iter() {
                match it {
                    Value::Int(i) => out.push(*i),
                    other => return fail(span, format!("a shape holds Ints, not `{}`", other.type_name())),
                }
            }
            out
        }
        Value::Tensor(t) if t.ndim() == 1 => {
            let mut out: Vec<i64> = Vec::new();
            if out.try_reserve_exact(t.numel()).is_err() {
                return fail(
                    span,
                    format!("a shape of {} dimensions cannot be held", t.numel()),
                );
            }
            for s in t.scalars() {
                let x = s.to_f64();
                if x.fract() != 0.0 || !x.is_finite() {
                    return fail(
                        span,
                        format!("a shape holds integers, not {}", twill_tensor::format_number(x)),
                    );
                }
                out.push(x as i64);
            }
            out
        }
        other => {
            return fail(
                span,
                format!(
                    "a shape must be an Arr[Int] or a rank-1 tensor, not `{}`",
                    other.type_name()
                ),
            )
        }
    };
    let mut shape = Vec::with_capacity(dims.len());
    for d in dims {
        match usize::try_from(d) {
            Ok(u) => shape.push(u),
            Err(_) => return fail(span, format!("a shape cannot have a negative size ({d})")),
        }
    }
    Ok(shape)
}

/// A host value as an operation argument.
pub(crate) fn to_arg(v: &Value, span: Span) -> R<Arg> {
    Ok(match v {
        Value::Tensor(t) => Arg::Tensor((**t).clone()),
        Value::Tracked(_) => Arg::Tensor(
            v.as_tensor()
                .cloned()
                .unwrap_or_else(|| Tensor::scalar(Scalar::F64(0.0))),
        ),
        Value::Int(i) => Arg::Int(*i),
        Value::F64(x) => Arg::Float(*x),
        Value::Bool(b) => Arg::Bool(*b),
        Value::DType(d) => Arg::DType(*d),
        Value::Format(f) => Arg::Format(**f),
        Value::Str(s) => Arg::Str(s.to_string()),
        Value::Arr(items) => {
            if items.iter().all(|v| matches!(v, Value::Int(_))) {
                Arg::Ints(
                    items
                        .iter()
                        .map(|v| if let Value::Int(i) = v { *i } else { 0 })
                        .collect(),
                )
            } else if items.iter().all(Value::is_tensor) {
                Arg::Tensors(items.iter().filter_map(|v| v.as_tensor().cloned()).collect())
            } else {
                return fail(span, "an Arr argument must hold only Ints or only tensors");
            }
        }
        other => {
            return fail(
                span,
                format!("a tensor operation cannot take a `{}`", other.type_name()),
            )
        }
    })
}

pub(crate) fn from_out(out: Out) -> Value {
    match out {
        Out::Tensor(t) => tensor_value(t),
        Out::Tensors(ts) => Value::Arr(Rc::new(ts.into_iter().map(tensor_value).collect())),
        Out::Bool(b) => Value::Bool(b),
        Out::Tuple(ts) => Value::Tuple(Rc::new(ts.into_iter().map(tensor_value).collect())),
    }
}

/// Runs a tensor operation on untracked values bound to its slots.
pub(crate) fn plain_op(op: Op, slots: &[Option<Value>]) -> Result<Value, OpError> {
    let span = Span::default();
    let mut args = Vec::with_capacity(slots.len());
    for (i, v) in slots.iter().enumerate() {
        args.push(match v {
            Some(v) => Some(to_arg(v, span).map_err(|c| OpError {
                message: ctrl_message(c),
                arg: Some(i),
            })?),
            None => None,
        });
    }
    if let Some(b) = crate::backend::active() {
        return (b.op)(op, &args).map(from_out);
    }
    twill_tensor::ops::call(op, args).map(from_out)
}

/// `x.to(dt)` on an untracked tensor.
pub(crate) fn plain_cast(x: &Value, dt: DType) -> Result<Value, String> {
    let t = x
        .as_tensor()
        .ok_or_else(|| format!("`to` needs a tensor, not `{}`", x.type_name()))?;
    if let Some(b) = crate::backend::active() {
        return (b.cast)(t, dt).map(tensor_value).map_err(|e| e.message);
    }
    t.cast(dt).map(tensor_value).map_err(|e| e.0)
}

/// `a op b` on untracked values.
pub(crate) fn plain_binary(op: twill_syntax::ast::BinOp, a: &Value, b: &Value) -> Result<Value, String> {
    use twill_syntax::ast::BinOp as B;
    fn operand(v: &Value) -> Option<Operand<'_>> {
        match v {
            Value::Tensor(t) => Some(Operand::Tensor(t)),
            Value::Int(i) => Some(Operand::Int(*i)),
            Value::F64(x) => Some(Operand::Float(*x)),
            Value::Bool(b) => Some(Operand::Bool(*b)),
            _ => None,
        }
    }
    if op == B::MatMul {
        let (Ok(x), Ok(y)) = (
            to_arg(a, twill_syntax::Span::default()),
            to_arg(b, twill_syntax::Span::default()),
        ) else {
            return Err(format!(
                "`@` needs two tensors, not `{}` and `{}`",
                a.type_name(),
                b.type_name()
            ));
        };
        let args = vec![Some(x), Some(y)];
        let out = if let Some(b) = crate::backend::active() {
            (b.op)(Op::Matmul, &args)
        } else {
            twill_tensor::ops::call(Op::Matmul, args)
        };
        return out.map(from_out).map_err(|e| e.message);
    }
    let top = binary_op(op)?;
    let (Some(x), Some(y)) = (operand(a), operand(b)) else {
        // A tensor against a value of another kind is a structural
        // comparison, as `==` is on host values (`x.shape == [2, 3]`).
        if matches!(op, B::Eq | B::Ne) {
            return Ok(Value::Bool(crate::ops::equal(a, b) == (op == B::Eq)));
        }
        return Err(format!(
            "cannot apply `{}` to a `{}` and a `{}`",
            op.symbol(),
            a.type_name(),
            b.type_name()
        ));
    };
    apply_binary(top, x, y)
}

/// The tensor kernel's operator for a language operator (`@` is
/// `matmul`, an operation of the registry, not an elementwise one).
pub(crate) fn binary_op(op: twill_syntax::ast::BinOp) -> Result<BinaryOp, String> {
    use twill_syntax::ast::BinOp as B;
    Ok(match op {
        B::Add => BinaryOp::Add,
        B::Sub => BinaryOp::Sub,
        B::Mul => BinaryOp::Mul,
        B::Div => BinaryOp::Div,
        B::FloorDiv => BinaryOp::FloorDiv,
        B::Mod => BinaryOp::Mod,
        B::Pow => BinaryOp::Pow,
        B::Eq => BinaryOp::Eq,
        B::Ne => BinaryOp::Ne,
        B::Lt => BinaryOp::Lt,
        B::Le => BinaryOp::Le,
        B::Gt => BinaryOp::Gt,
        B::Ge => BinaryOp::Ge,
        B::BitAnd => BinaryOp::BitAnd,
        B::BitOr => BinaryOp::BitOr,
        B::BitXor => BinaryOp::BitXor,
        B::Shl => BinaryOp::Shl,
        B::Shr => BinaryOp::Shr,
        B::MatMul => return Err("`@=` is not an assignment operator".into()),
    })
}

fn apply_binary(op: BinaryOp, x: Operand, y: Operand) -> Result<Value, String> {
    if let Some(b) = crate::backend::active() {
        return (b.binary)(op, x, y).map(tensor_value).map_err(|e| e.message);
    }
    twill_tensor::ops::binary(op, x, y)
        .map(tensor_value)
        .map_err(|e| e.0)
}

/// A nested list literal, evaluated but not yet decided: a tensor when all
/// leaves are numbers (or all Bools) and the nesting is regular.
pub(crate) enum Lit {
    Leaf(Value),
    List(Vec<Lit>),
}

impl Lit {
    pub(crate) fn into_value(self) -> Value {
        match self {
            Lit::Leaf(v) => v,
            Lit::List(items) => Value::Arr(Rc::new(items.into_iter().map(Lit::into_value).collect())),
        }
    }
}

pub(crate) fn collect_leaves(
    lit: &Lit,
    depth: usize,
    shape: &mut Vec<usize>,
    leaves: &mut Vec<Value>,
    regular: &mut bool,
) {
    match lit {
        Lit::Leaf(v) => {
            if depth != shape.len() {
                *regular = false;
            }
            leaves.push(v.clone());
        }
        Lit::List(items) => {
            if shape.len() == depth {
                if leaves.is_empty() || depth == 0 {
                    shape.push(items.len());
                } else {
                    *regular = false;
                }
            } else if shape.get(depth) != Some(&items.len()) {
                *regular = false;
            }
            for it in items {
                collect_leaves(it, depth + 1, shape, leaves, regular);
            }
        }
    }
}
