//! The evaluator's side of tensors: list literals that become tensors,
//! the constructors, `.to`, `.item`, the tensor properties and indexing.
//! The tensor crate does the work; this file converts between host values
//! and tensor arguments and turns tensor errors into runtime errors.

use std::rc::Rc;

use twill_check::builtins::{Builtin, HostMethod, MethodRef, TensorField};
use twill_check::hir;
use twill_syntax::Span;
use twill_tensor::construct;
use twill_tensor::convert::Scalar;
pub(crate) use twill_tensor::ops::OpError;
use twill_tensor::ops::{Arg, BinaryOp, Op, Operand, Out};
use twill_tensor::tensor::IndexItem;
use twill_tensor::{DType, Tensor, TensorError};

use crate::interp::{fail, Frame, IndexKey, Interp, R};
use crate::value::Value;

fn terr<T>(span: Span, e: TensorError) -> R<T> {
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
fn value_scalar(v: &Value, span: Span, what: &str) -> R<Scalar> {
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
fn int_arg(v: &Value, span: Span, what: &str) -> R<i64> {
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

fn number_arg(v: &Value, span: Span, what: &str) -> R<f64> {
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

fn dtype_arg(v: Option<&Value>, span: Span) -> R<DType> {
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
            let mut out = Vec::with_capacity(t.numel());
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

/// A nested list literal, evaluated but not yet decided: a tensor when all
/// leaves are numbers (or all Bools) and the nesting is regular.
pub(crate) enum Lit {
    Leaf(Value),
    List(Vec<Lit>),
}

impl Lit {
    fn into_value(self) -> Value {
        match self {
            Lit::Leaf(v) => v,
            Lit::List(items) => Value::Arr(Rc::new(items.into_iter().map(Lit::into_value).collect())),
        }
    }
}

impl Interp {
    /// Evaluates a list literal, deciding between a tensor and an `Arr`
    /// (spec §4): all numbers (Int or F64, at any nesting of literal lists)
    /// make an f64 tensor, all Bools a bool tensor, anything else an Arr.
    pub(crate) fn eval_list(&mut self, items: &[hir::Expr], f: Frame, span: Span) -> R<Value> {
        let lit = self.eval_lit(items, f)?;
        let mut leaves = Vec::new();
        let mut shape = Vec::new();
        let mut regular = true;
        collect_leaves(&lit, 0, &mut shape, &mut leaves, &mut regular);
        let all_numbers =
            !leaves.is_empty() && leaves.iter().all(|v| matches!(v, Value::Int(_) | Value::F64(_)));
        let all_bools = !leaves.is_empty() && leaves.iter().all(|v| matches!(v, Value::Bool(_)));
        let nested = matches!(&lit, Lit::List(items) if items.iter().any(|i| matches!(i, Lit::List(_))));
        if all_numbers || all_bools {
            if !regular {
                return fail(
                    span,
                    "ragged nested list: every row of a tensor literal must have the same length",
                );
            }
            let t = if all_bools {
                let v: Vec<bool> = leaves.iter().map(|v| matches!(v, Value::Bool(true))).collect();
                Tensor::from_vec(v, shape)
            } else {
                let v: Vec<f64> = leaves
                    .iter()
                    .map(|v| match v {
                        Value::Int(i) => *i as f64,
                        Value::F64(x) => *x,
                        _ => 0.0,
                    })
                    .collect();
                Tensor::from_vec(v, shape)
            };
            return t.map(tensor_value).or_else(|e| terr(span, e));
        }
        if nested
            && leaves
                .iter()
                .all(|v| matches!(v, Value::Int(_) | Value::F64(_) | Value::Bool(_)))
            && !leaves.is_empty()
        {
            return fail(span, "a tensor literal cannot mix numbers and Bools");
        }
        Ok(lit.into_value())
    }

    fn eval_lit(&mut self, items: &[hir::Expr], f: Frame) -> R<Lit> {
        let mut out = Vec::with_capacity(items.len());
        for it in items {
            out.push(match &it.kind {
                hir::ExprKind::List(inner) => self.eval_lit(inner, f)?,
                _ => Lit::Leaf(self.eval(it, f)?),
            });
        }
        Ok(Lit::List(out))
    }

    pub(crate) fn tensor_builtin(&mut self, b: Builtin, a: Vec<Option<Value>>, span: Span) -> R<Value> {
        let get = |i: usize| a.get(i).and_then(|v| v.as_ref());
        let need = |i: usize, name: &str| -> R<&Value> {
            get(i).map_or_else(
                || fail(span, format!("`{}` needs its `{name}` argument", b.name())),
                Ok,
            )
        };
        let result = match b {
            Builtin::Zeros | Builtin::Ones => {
                let shape = shape_arg(need(0, "shape")?, span)?;
                let dt = dtype_arg(get(1), span)?;
                if b == Builtin::Zeros {
                    Tensor::zeros(shape, dt)
                } else {
                    Tensor::full(shape, Scalar::I32(1), dt)
                }
            }
            Builtin::Full => {
                let shape = shape_arg(need(0, "shape")?, span)?;
                let value = value_scalar(need(1, "value")?, span, "the fill value")?;
                Tensor::full(shape, value, dtype_arg(get(2), span)?)
            }
            Builtin::Arange => {
                // arange(n), arange(n, dt), arange(a, b), arange(a, b, step, dt)
                let (start, stop, step, dt) = match (get(0), get(1)) {
                    (Some(n), None) | (Some(n), Some(Value::DType(_))) => {
                        let dt = dtype_arg(get(3).or(get(1)), span)?;
                        (0.0, number_arg(n, span, "the length")?, 1.0, dt)
                    }
                    (Some(a0), Some(b0)) => {
                        let step = match get(2) {
                            Some(s) => number_arg(s, span, "the step")?,
                            None => 1.0,
                        };
                        (
                            number_arg(a0, span, "the start")?,
                            number_arg(b0, span, "the end")?,
                            step,
                            dtype_arg(get(3), span)?,
                        )
                    }
                    (None, _) => return fail(span, "`arange` needs a length or a start and an end"),
                };
                construct::arange(start, stop, step, dt)
            }
            Builtin::Linspace => {
                let start = number_arg(need(0, "a")?, span, "the start")?;
                let stop = number_arg(need(1, "b")?, span, "the end")?;
                let n = int_arg(need(2, "n")?, span, "the count")?;
                let n = usize::try_from(n)
                    .or_else(|_| fail(span, format!("`linspace` count cannot be negative ({n})")))?;
                construct::linspace(start, stop, n, dtype_arg(get(3), span)?)
            }
            Builtin::Eye => {
                let n = int_arg(need(0, "n")?, span, "the size")?;
                let n = usize::try_from(n)
                    .or_else(|_| fail(span, format!("`eye` size cannot be negative ({n})")))?;
                construct::eye(n, dtype_arg(get(1), span)?)
            }
            Builtin::Tensor => {
                let dt = dtype_arg(get(1), span)?;
                match need(0, "list")? {
                    v @ (Value::Tensor(_) | Value::Tracked(_)) => v
                        .as_tensor()
                        .map_or_else(|| Tensor::zeros(vec![0], dt), |t| t.cast(dt)),
                    Value::Arr(items) => {
                        let mut scalars = Vec::with_capacity(items.len());
                        for it in items.iter() {
                            scalars.push(value_scalar(it, span, "a tensor element")?);
                        }
                        construct::from_scalars(&scalars, vec![items.len()], dt)
                    }
                    v @ (Value::Int(_) | Value::F64(_) | Value::Bool(_)) => {
                        construct::from_scalars(&[value_scalar(v, span, "a tensor element")?], vec![], dt)
                    }
                    other => {
                        return fail(
                            span,
                            format!("`tensor` needs a list of numbers, not `{}`", other.type_name()),
                        )
                    }
                }
            }
            Builtin::ZerosLike | Builtin::OnesLike => match need(0, "x")?.as_tensor() {
                Some(t) => {
                    let v = if b == Builtin::ZerosLike {
                        Scalar::I32(0)
                    } else {
                        Scalar::I32(1)
                    };
                    Tensor::full(t.shape().to_vec(), v, t.dtype())
                }
                None => {
                    return fail(
                        span,
                        format!(
                            "`{}` needs a tensor, not `{}`",
                            b.name(),
                            need(0, "x")?.type_name()
                        ),
                    )
                }
            },
            Builtin::Rand | Builtin::Randn => {
                let shape = shape_arg(need(0, "shape")?, span)?;
                let dt = dtype_arg(get(1), span)?;
                let seed = match get(2) {
                    Some(v) => int_arg(v, span, "the seed")?,
                    None => 0,
                };
                if b == Builtin::Rand {
                    construct::rand(shape, dt, seed as u64)
                } else {
                    construct::randn(shape, dt, seed as u64)
                }
            }
            _ => return fail(span, format!("`{}` is not a tensor constructor", b.name())),
        };
        result.map(tensor_value).or_else(|e| terr(span, e))
    }

    pub(crate) fn tensor_method(
        &mut self,
        recv: &Value,
        m: MethodRef,
        name: &str,
        argv: Vec<Value>,
        span: Span,
    ) -> R<Value> {
        let want = |k: usize| -> R<()> {
            if argv.len() != k {
                fail(
                    span,
                    format!(
                        "`{name}` takes {k} argument{}, but {} were given",
                        if k == 1 { "" } else { "s" },
                        argv.len()
                    ),
                )
            } else {
                Ok(())
            }
        };
        match m.host {
            Some(HostMethod::To) => {
                want(1)?;
                let dt = dtype_arg(argv.first(), span)?;
                crate::autodiff::cast(recv, dt).or_else(|m| fail(span, m))
            }
            Some(HostMethod::Numel) => {
                want(0)?;
                Ok(Value::Int(recv.as_tensor().map_or(0, |t| t.numel()) as i64))
            }
            Some(HostMethod::Item) => {
                want(0)?;
                match recv.as_tensor() {
                    Some(t) => t.item().map(scalar_value).or_else(|e| terr(span, e)),
                    None => fail(span, "`item` needs a tensor"),
                }
            }
            _ => match m.op {
                Some(op) => {
                    let mut slots = Vec::with_capacity(argv.len() + 1);
                    slots.push(Some(recv.clone()));
                    slots.extend(argv.into_iter().map(Some));
                    crate::autodiff::op(op, &slots).or_else(|e| fail(span, e.message))
                }
                None => fail(span, format!("unknown method `{name}` on `{}`", recv.type_name())),
            },
        }
    }

    pub(crate) fn tensor_field(&mut self, recv: &Value, field: TensorField, span: Span) -> R<Value> {
        let Some(t) = recv.as_tensor() else {
            return fail(
                span,
                format!("a `{}` has no field `{}`", recv.type_name(), field.name()),
            );
        };
        match field {
            TensorField::Dtype => Ok(Value::DType(t.dtype())),
            TensorField::Shape => Ok(Value::Arr(Rc::new(
                t.shape().iter().map(|&d| Value::Int(d as i64)).collect(),
            ))),
            TensorField::Ndim => Ok(Value::Int(t.ndim() as i64)),
            TensorField::T => crate::autodiff::reverse(recv).or_else(|m| fail(span, m)),
        }
    }

    pub(crate) fn tensor_index(&mut self, recv: &Value, keys: &[IndexKey], span: Span) -> R<Value> {
        let mut items = Vec::with_capacity(keys.len());
        for k in keys {
            items.push(match k {
                IndexKey::Single(v, s) => IndexItem::Single(int_arg(v, *s, "an index")?),
                IndexKey::Slice(a, b, c) => {
                    let bound = |x: &Option<(Value, Span)>| -> R<Option<i64>> {
                        match x {
                            None => Ok(None),
                            Some((v, s)) => int_arg(v, *s, "a slice bound").map(Some),
                        }
                    };
                    IndexItem::Slice(bound(a)?, bound(b)?, bound(c)?)
                }
            });
        }
        crate::autodiff::index(recv, &items).or_else(|m| fail(span, m))
    }
}

fn collect_leaves(
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

fn from_out(out: Out) -> Value {
    match out {
        Out::Tensor(t) => tensor_value(t),
        Out::Tensors(ts) => Value::Arr(Rc::new(ts.into_iter().map(tensor_value).collect())),
    }
}

impl Interp {
    /// Runs a tensor operation of the registry on arguments bound to its
    /// slots, recorded on a tape when an operand is tracked. An error about
    /// one argument points at that argument.
    pub(crate) fn call_op(
        &mut self,
        op: Op,
        slots: Vec<Option<Value>>,
        args: &hir::Args,
        span: Span,
    ) -> R<Value> {
        crate::autodiff::op(op, &slots).or_else(|e| {
            let at = e
                .arg
                .and_then(|slot| args.items.iter().find(|(s, _)| *s as usize == slot))
                .map_or(span, |(_, expr)| expr.span);
            fail(at, e.message)
        })
    }

    /// Evaluates call arguments in source order into their slots.
    pub(crate) fn eval_slots(&mut self, args: &hir::Args, f: Frame) -> R<Vec<Option<Value>>> {
        let mut slots: Vec<Option<Value>> = vec![None; args.slots as usize];
        for (slot, e) in &args.items {
            let v = self.eval(e, f)?;
            if let Some(s) = slots.get_mut(*slot as usize) {
                *s = Some(v);
            }
        }
        Ok(slots)
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
    twill_tensor::ops::call(op, args).map(from_out)
}

#[allow(clippy::boxed_local)] // the evaluator's error type is boxed
fn ctrl_message(c: Box<crate::interp::Ctrl>) -> String {
    match *c {
        crate::interp::Ctrl::Error(e) => e.message,
        _ => "invalid argument".into(),
    }
}

/// `x.to(dt)` on an untracked tensor.
pub(crate) fn plain_cast(x: &Value, dt: DType) -> Result<Value, String> {
    let t = x
        .as_tensor()
        .ok_or_else(|| format!("`to` needs a tensor, not `{}`", x.type_name()))?;
    t.cast(dt).map(tensor_value).map_err(|e| e.0)
}

/// `a op b` with a tensor on at least one side (`@` is `matmul`), recorded
/// on a tape when an operand is tracked.
pub(crate) fn tensor_binary(op: twill_syntax::ast::BinOp, a: &Value, b: &Value) -> Result<Value, String> {
    crate::autodiff::binary(op, a, b)
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
    let top = match op {
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
        B::MatMul => {
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
            return twill_tensor::ops::call(Op::Matmul, vec![Some(x), Some(y)])
                .map(from_out)
                .map_err(|e| e.message);
        }
    };
    let (Some(x), Some(y)) = (operand(a), operand(b)) else {
        return Err(format!(
            "cannot apply `{}` to a `{}` and a `{}`",
            op.symbol(),
            a.type_name(),
            b.type_name()
        ));
    };
    apply_binary(top, x, y)
}

fn apply_binary(op: BinaryOp, x: Operand, y: Operand) -> Result<Value, String> {
    twill_tensor::ops::binary(op, x, y)
        .map(tensor_value)
        .map_err(|e| e.0)
}
