//! The autodiff builtins of spec §8: `tape`, `backward`,
//! `backward_scaled`, `grads_finite`, and the functional forms `grad`,
//! `value_and_grad`, `vjp`, `jvp`, `jacobian` and `hessian`, each built on
//! tapes. `jvp` is the transpose of a vjp (the vjp is linear in its
//! cotangent, so differentiating it with respect to that cotangent on an
//! outer tape gives J·v exactly); `hessian` differentiates the gradient on
//! an outer tape. Nothing here is a finite difference.

// The `other =>` arms over `Value` in this module are type errors ("needs a
// tensor, not a Str"): a new kind of value is rejected by them until it is
// taught otherwise, which is the behaviour wanted. Matches over the
// registries' enums (Op, Builtin, HostMethod, TensorField, BinOp, DType)
// have no wildcard here, except where an allow in place says why.
#![allow(clippy::wildcard_enum_match_arm)]

use std::rc::Rc;

use twill_check::builtins::{Autodiff, Builtin};
use twill_syntax::Span;
use twill_tensor::promote::grad_dtype;
use twill_tensor::Tensor;

use twill_tensor::ops::Op;

use super::{backward, backward_scaled, binary, grads_finite, op_pos, watch};
use crate::bridge::tensor_value;
use crate::error::{fail, Cx, R};
use crate::value::{base, TapeVal, Value};

/// `v` seen from outside tape `tp`: its tracking by `tp` and by every
/// tape made after it removed.
fn outside(v: &Value, tp: &TapeVal) -> Value {
    match v {
        Value::Tracked(t) if t.node.level >= tp.level => outside(&t.primal, tp),
        Value::Arr(items) => Value::Arr(Rc::new(items.iter().map(|x| outside(x, tp)).collect())),
        other => other.clone(),
    }
}

fn arr(items: Vec<Value>) -> Value {
    Value::Arr(Rc::new(items))
}

/// Watches `x` (a tensor, or an Arr of tensors) on `tp`.
fn watch_all(tp: &TapeVal, x: &Value, what: &str, span: Span) -> R<Value> {
    match x {
        Value::Arr(items) => {
            let mut out = Vec::with_capacity(items.len());
            for it in items.iter() {
                out.push(watch(tp, it).or_else(|m| fail(span, format!("`{what}`: {m}")))?);
            }
            Ok(arr(out))
        }
        v if base(v).is_some() => watch(tp, v).or_else(|m| fail(span, format!("`{what}`: {m}"))),
        other => fail(
            span,
            format!(
                "`{what}` differentiates with respect to a tensor or an Arr of tensors, not a `{}`",
                other.type_name()
            ),
        ),
    }
}

/// f(x) recorded on a fresh tape: (tape, watched x, output).
fn record_call(cx: &mut dyn Cx, f: &Value, x: &Value, what: &str, span: Span) -> R<(TapeVal, Value)> {
    let tp = TapeVal::new();
    let xw = watch_all(&tp, x, what, span)?;
    let y = cx.call_value(f, vec![xw], span)?;
    Ok((tp, y))
}

fn run_backward(tp: &TapeVal, y: &Value, seed: &Value, multi: bool, span: Span) -> R<Value> {
    let gs = backward(tp, y, seed).or_else(|m| fail(span, m))?;
    Ok(if multi {
        arr(gs)
    } else {
        gs.into_iter().next().unwrap_or(Value::Unit)
    })
}

fn scalar_output(y: &Value, what: &str, span: Span) -> R<()> {
    match base(y) {
        Some(t) if t.numel() == 1 => Ok(()),
        Some(t) => fail(
            span,
            format!(
                "`{what}` needs a function that returns a one-element tensor, but it returned shape {}",
                twill_tensor::tensor::shape_str(t.shape())
            ),
        ),
        None => fail(
            span,
            format!(
                "`{what}` needs a function that returns a tensor, but it returned a `{}`",
                y.type_name()
            ),
        ),
    }
}

/// The gradient of scalar-valued `f` at `x`, and f(x).
fn grad_of(cx: &mut dyn Cx, f: &Value, x: &Value, what: &str, span: Span) -> R<(Value, Value)> {
    let (tp, y) = record_call(cx, f, x, what, span)?;
    scalar_output(&y, what, span)?;
    let g = run_backward(&tp, &y, &Value::F64(1.0), matches!(x, Value::Arr(_)), span)?;
    Ok((outside(&y, &tp), g))
}

/// The Jacobian of `root` (recorded on `tp`) with respect to the
/// tensor of shape `in_shape` watched there: one backward pass per
/// element of the root, seeded with a one-hot cotangent at the root's
/// gradient dtype, stacked and shaped `root.shape + in_shape`.
fn jacobian_rows(tp: &TapeVal, root: &Value, input: &Tensor, span: Span) -> R<Value> {
    let in_shape = input.shape();
    let Some(rt) = base(root).cloned() else {
        return fail(
            span,
            format!(
                "`jacobian` needs a function that returns a tensor, not a `{}`",
                root.type_name()
            ),
        );
    };
    let gdt = grad_dtype(rt.dtype());
    let mut shape = rt.shape().to_vec();
    shape.extend_from_slice(in_shape);
    // The whole Jacobian must fit before one backward pass is run for it.
    twill_tensor::tensor::ensure_room(grad_dtype(input.dtype()), &shape).or_else(|e| fail(span, e.0))?;
    let mut rows = Vec::with_capacity(rt.numel());
    for j in 0..rt.numel() {
        let mut hot = vec![0.0f64; rt.numel()];
        hot[j] = 1.0;
        let seed = Tensor::from_vec(hot, rt.shape().to_vec())
            .and_then(|t| t.cast(gdt))
            .map(tensor_value)
            .or_else(|e| fail(span, e.0))?;
        rows.push(run_backward(tp, root, &seed, false, span)?);
    }
    if rows.is_empty() {
        // No rows to stack: the empty Jacobian still has the gradient
        // dtype of the input (spec §8).
        return Tensor::zeros(shape, grad_dtype(input.dtype()))
            .map(tensor_value)
            .or_else(|e| fail(span, e.0));
    }
    let stacked = op_pos(Op::Stack, &[arr(rows)]).or_else(|m| fail(span, m))?;
    let shape_v = arr(shape.iter().map(|&d| Value::Int(d as i64)).collect());
    op_pos(Op::Reshape, &[stacked, shape_v]).or_else(|m| fail(span, m))
}

/// The autodiff builtins.
pub(crate) fn autodiff_builtin(cx: &mut dyn Cx, b: Autodiff, argv: Vec<Value>, span: Span) -> R<Value> {
    let arg = |i: usize| argv.get(i).cloned().unwrap_or(Value::Unit);
    let tape_arg = |v: &Value| -> R<Rc<TapeVal>> {
        match v {
            Value::Tape(t) => Ok(t.clone()),
            other => fail(
                span,
                format!(
                    "`{}` needs a Tape, not `{}`",
                    Builtin::Autodiff(b).name(),
                    other.type_name()
                ),
            ),
        }
    };
    let res = |r: Result<Vec<Value>, String>| -> Value {
        match r {
            Ok(gs) => Value::Ok(Rc::new(arr(gs))),
            Err(m) => Value::Err(Rc::new(Value::str(m))),
        }
    };
    match b {
        Autodiff::Tape => Ok(Value::Tape(Rc::new(TapeVal::new()))),
        Autodiff::Backward => {
            let tp = tape_arg(&arg(0))?;
            Ok(res(backward(&tp, &arg(1), &arg(2))))
        }
        Autodiff::BackwardScaled => {
            let tp = tape_arg(&arg(0))?;
            let scale = match arg(3) {
                Value::F64(s) => s,
                Value::Int(i) => i as f64,
                other => {
                    return fail(
                        span,
                        format!(
                            "`backward_scaled` needs an F64 scale, not `{}`",
                            other.type_name()
                        ),
                    )
                }
            };
            if !(scale.is_finite() && scale > 0.0) {
                return fail(
                    span,
                    format!("`backward_scaled`: the scale must be finite and positive, not {scale}"),
                );
            }
            Ok(res(backward_scaled(&tp, &arg(1), &arg(2), scale)))
        }
        Autodiff::GradsFinite => grads_finite(&arg(0)).map(Value::Bool).or_else(|m| fail(span, m)),
        Autodiff::Grad => Ok(grad_of(cx, &arg(0), &arg(1), "grad", span)?.1),
        Autodiff::ValueAndGrad => {
            let (v, g) = grad_of(cx, &arg(0), &arg(1), "value_and_grad", span)?;
            Ok(Value::Tuple(Rc::new(vec![v, g])))
        }
        Autodiff::Vjp => {
            let (tp, y) = record_call(cx, &arg(0), &arg(1), "vjp", span)?;
            run_backward(&tp, &y, &arg(2), matches!(arg(1), Value::Arr(_)), span)
        }
        Autodiff::Jvp => jvp(cx, &arg(0), &arg(1), &arg(2), span),
        Autodiff::Jacobian => {
            let (f, x) = (arg(0), arg(1));
            let Some(xt) = base(&x).cloned() else {
                return fail(
                    span,
                    format!("`jacobian` needs a tensor, not `{}`", x.type_name()),
                );
            };
            let (tp, y) = record_call(cx, &f, &x, "jacobian", span)?;
            jacobian_rows(&tp, &y, &xt, span)
        }
        Autodiff::Hessian => {
            let (f, x) = (arg(0), arg(1));
            let Some(xt) = base(&x).cloned() else {
                return fail(span, format!("`hessian` needs a tensor, not `{}`", x.type_name()));
            };
            let outer = TapeVal::new();
            let x1 = watch(&outer, &x).or_else(|m| fail(span, format!("`hessian`: {m}")))?;
            let (_, g) = grad_of(cx, &f, &x1, "hessian", span)?;
            let h = jacobian_rows(&outer, &g, &xt, span)?;
            Ok(outside(&h, &outer))
        }
    }
}

/// J·v: differentiate u ↦ Jᵀu (recorded on an outer tape, where u is
/// watched) with respect to u, in the direction v.
fn jvp(cx: &mut dyn Cx, f: &Value, x: &Value, v: &Value, span: Span) -> R<Value> {
    let outer = TapeVal::new();
    let (tp, y) = record_call(cx, f, x, "jvp", span)?;
    let Some(yt) = base(&y).cloned() else {
        return fail(
            span,
            format!(
                "`jvp` needs a function that returns a tensor, not a `{}`",
                y.type_name()
            ),
        );
    };
    let gdt = grad_dtype(yt.dtype());
    let u0 = Tensor::zeros(yt.shape().to_vec(), gdt)
        .map(tensor_value)
        .or_else(|e| fail(span, e.0))?;
    let u = watch(&outer, &u0).or_else(|m| fail(span, m))?;
    let gs = backward(&tp, &y, &u).or_else(|m| fail(span, m))?;
    let vs: Vec<Value> = match (x, v) {
        (Value::Arr(_), Value::Arr(vs)) => vs.iter().cloned().collect(),
        (Value::Arr(_), other) => {
            return fail(
                span,
                format!(
                    "`jvp`: x is an Arr, so v must be an Arr of tensors, not `{}`",
                    other.type_name()
                ),
            )
        }
        (_, v) => vec![v.clone()],
    };
    if vs.len() != gs.len() {
        return fail(
            span,
            format!("`jvp`: {} tangents for {} inputs", vs.len(), gs.len()),
        );
    }
    let mut total: Option<Value> = None;
    for (g, t) in gs.iter().zip(&vs) {
        let (Some(gt), Some(tt)) = (base(g), base(t)) else {
            return fail(
                span,
                format!("`jvp`: a tangent must be a tensor, not `{}`", t.type_name()),
            );
        };
        if gt.shape() != tt.shape() {
            return fail(
                span,
                format!(
                    "`jvp`: the tangent has shape {} but x has shape {}",
                    twill_tensor::tensor::shape_str(tt.shape()),
                    twill_tensor::tensor::shape_str(gt.shape())
                ),
            );
        }
        let s = op_pos(
            Op::Sum,
            &[binary(twill_syntax::ast::BinOp::Mul, g, t).or_else(|m| fail(span, m))?],
        )
        .or_else(|m| fail(span, m))?;
        total = Some(match total {
            None => s,
            Some(acc) => binary(twill_syntax::ast::BinOp::Add, &acc, &s).or_else(|m| fail(span, m))?,
        });
    }
    let Some(total) = total else {
        return fail(span, "`jvp` needs at least one input");
    };
    let jv = backward(&outer, &total, &Value::F64(1.0)).or_else(|m| fail(span, m))?;
    Ok(jv.into_iter().next().unwrap_or(Value::Unit))
}
