//! The vjp rule of every differentiable operation. A rule gets a node's
//! arguments (primals), its primal output and its cotangent `ct`, and
//! returns one contribution per argument that needs one, already reduced
//! to that argument's shape. Rules are written with the recording
//! operations of the parent module, so a rule run on values tracked by an
//! outer tape is itself recorded there (nested differentiation). They never
//! choose a dtype: narrow primals are widened to the cotangent's dtype
//! (`wide`) so that nothing is computed narrower than the gradient, and
//! `accumulate` does the one rounding.
//!
//! At points where a function is not differentiable the rules follow
//! PyTorch: relu′(0) = 0, abs′(0) = 0, ties of maximum/minimum and of the
//! max/min/median reductions share the gradient evenly, clip passes the
//! gradient on its closed interval.

// The `other =>` arms over `Value` in this module are type errors ("needs a
// tensor, not a Str"): a new kind of value is rejected by them until it is
// taught otherwise, which is the behaviour wanted. Matches over the
// registries' enums (Op, Builtin, HostMethod, TensorField, BinOp, DType)
// have no wildcard here, except where an allow in place says why.
#![allow(clippy::wildcard_enum_match_arm)]
// Argument lists are arrays of owned values; `from_ref` would make each
// call site harder to read.
#![allow(clippy::cloned_ref_to_slice_refs)]

use std::rc::Rc;

use twill_syntax::ast::BinOp;
use twill_tensor::index::IndexItem;
use twill_tensor::DType;

use twill_tensor::ops::Op;

use super::arith::{add, binary, div, mul, o, sub, Res};
use super::record::{
    accumulate, assign, axis_list, cast, index, index_add, norm_axis, op, reduced_axes, reverse, scatter_add,
};
use crate::bridge::tensor_value;
use crate::value::{base, AdOp, Slot, Value};

type Contribs = Vec<(Slot, Value)>;

fn slot(arg: usize) -> Slot {
    Slot { arg, elem: 0 }
}

/// A registry operation on arguments by slot (absent optional ones `None`).
fn os(o: Op, slots: &[Option<Value>]) -> Res<Value> {
    op(o, slots).map_err(|e| e.message)
}

fn cmp(bop: BinOp, a: &Value, b: &Value) -> Res<Value> {
    binary(bop, a, b)
}
fn f(x: f64) -> Value {
    Value::F64(x)
}
fn int(i: usize) -> Value {
    Value::Int(i as i64)
}
fn ints(v: &[usize]) -> Value {
    Value::Arr(Rc::new(v.iter().map(|&i| Value::Int(i as i64)).collect()))
}

fn shape(v: &Value) -> Vec<usize> {
    base(v).map_or_else(Vec::new, |t| t.shape().to_vec())
}

fn dtype(v: &Value) -> Option<DType> {
    base(v).map(|t| t.dtype())
}

fn is_tensor(v: &Value) -> bool {
    base(v).is_some()
}

/// `v` widened to the cotangent's dtype `gdt` if it is narrower (every
/// dtype but f64 is narrower than an f64 cotangent; only bool, the
/// integers, bf16 and f16 are narrower than an f32 one).
fn wide(v: &Value, gdt: DType) -> Res<Value> {
    match dtype(v) {
        Some(d) if d != gdt && d != DType::F64 => cast(v, gdt),
        _ => Ok(v.clone()),
    }
}

/// A host number `v` as the rank-0 tensor of `out`'s dtype that the
/// forward pass combined (spec §5.1); any other value as it is.
fn weak(v: &Value, out: &Value) -> Res<Value> {
    let x = match v {
        Value::Int(i) => *i as f64,
        Value::F64(x) => *x,
        _ => return Ok(v.clone()),
    };
    let Some(dt) = dtype(out) else {
        return Ok(v.clone());
    };
    twill_tensor::Tensor::full(Vec::new(), twill_tensor::convert::Scalar::F64(x), dt)
        .map(tensor_value)
        .map_err(|e| e.0)
}

/// `where(c, v, 0)`.
fn masked(c: &Value, v: &Value) -> Res<Value> {
    select(c, v, &f(0.0))
}

/// `where(c, a, b)`, also for a host Bool `c` (from host operands).
fn select(c: &Value, a: &Value, b: &Value) -> Res<Value> {
    match c {
        Value::Bool(true) => Ok(a.clone()),
        Value::Bool(false) => Ok(b.clone()),
        _ => o(Op::Where, &[c.clone(), a.clone(), b.clone()]),
    }
}

/// The sum of `v` over the axes that broadcasting added or stretched, so
/// that the result has `target`'s shape.
fn sum_to(v: &Value, target: &[usize]) -> Res<Value> {
    let s = shape(v);
    if s == target {
        return Ok(v.clone());
    }
    let lead = s.len().saturating_sub(target.len());
    let mut cur = v.clone();
    if lead > 0 {
        cur = o(Op::Sum, &[cur, ints(&(0..lead).collect::<Vec<_>>())])?;
    }
    let stretched: Vec<usize> = target
        .iter()
        .enumerate()
        .filter(|&(i, &d)| d == 1 && s[lead + i] != 1)
        .map(|(i, _)| i)
        .collect();
    if !stretched.is_empty() {
        cur = o(Op::Sum, &[cur, ints(&stretched), Value::Bool(true)])?;
    }
    if shape(&cur) != target {
        cur = o(Op::Reshape, &[cur, ints(target)])?;
    }
    Ok(cur)
}

fn flag(v: &Option<Value>) -> bool {
    matches!(v, Some(Value::Bool(true)))
}

/// A reduction's cotangent (or output) brought back to the input's shape.
fn expand(v: &Value, axes: &[usize], keepdim: bool, xshape: &[usize]) -> Res<Value> {
    o(
        Op::BroadcastTo,
        &[with_kept_axes(v, axes, keepdim)?, ints(xshape)],
    )
}

/// The number of elements a reduction folded into each output.
fn count(xshape: &[usize], axes: &[usize]) -> f64 {
    axes.iter().map(|&a| xshape[a] as f64).product()
}

fn arg(args: &[Option<Value>], i: usize) -> Res<Value> {
    args.get(i)
        .cloned()
        .flatten()
        .ok_or_else(|| "internal error: a recorded argument is missing (a bug in twill)".to_string())
}

/// The contributions of a node with operation `op`.
pub(super) fn vjp(
    op: &AdOp,
    args: &[Option<Value>],
    out: &Value,
    ct: &Value,
    need: &dyn Fn(Slot) -> bool,
) -> Res<Contribs> {
    let gdt = dtype(ct).unwrap_or(DType::F32);
    let mut c: Contribs = Vec::new();
    let need0 = need(slot(0));
    match op {
        AdOp::Bin(bop) => {
            let (a, b) = (arg(args, 0)?, arg(args, 1)?);
            binary_rule(*bop, &a, &b, out, ct, gdt, need, &mut c)?;
        }
        AdOp::Cast => c.push((slot(0), ct.clone())),
        AdOp::Reverse => c.push((slot(0), reverse(ct)?)),
        AdOp::Index(items) => {
            let x = arg(args, 0)?;
            c.push((slot(0), index_adjoint(ct, items, &shape(&x))?));
        }
        AdOp::Assign(items, last) => {
            // The overwritten elements of x get nothing; v gets the
            // cotangent of the elements it wrote (with a repeated element,
            // only of its last write), summed over its broadcast axes.
            if need0 {
                c.push((slot(0), assign(ct, items, &f(0.0), None)?));
            }
            if need(slot(1)) {
                let mut g = index(ct, items)?;
                if let Some(last) = last {
                    let mask = twill_tensor::Tensor::from_vec(last.to_vec(), shape(&g))
                        .map(tensor_value)
                        .map_err(|e| e.0)?;
                    g = masked(&mask, &g)?;
                }
                c.push((slot(1), value_cotangent(&g, &arg(args, 1)?)?));
            }
        }
        AdOp::Accumulate(items) => {
            if need0 {
                c.push((slot(0), ct.clone()));
            }
            if need(slot(1)) {
                let g = index(ct, items)?;
                c.push((slot(1), value_cotangent(&g, &arg(args, 1)?)?));
            }
        }
        AdOp::IndexAdd(axis) => {
            let idx = arg(args, 1)?;
            c.push((slot(0), o(Op::IndexSelect, &[ct.clone(), int(*axis), idx])?));
        }
        AdOp::ScatterAdd(axis) => {
            let idx = arg(args, 1)?;
            c.push((slot(0), o(Op::Gather, &[ct.clone(), int(*axis), idx])?));
        }
        AdOp::Table(name) => table_rule(*name, args, out, ct, gdt, need, need0, &mut c)?,
        AdOp::Part(name, which, parts) => c = super::linalg::vjp(*name, args, parts, *which, ct, gdt, need)?,
    }
    Ok(c)
}

#[allow(clippy::too_many_arguments)]
fn binary_rule(
    bop: BinOp,
    a: &Value,
    b: &Value,
    out: &Value,
    ct: &Value,
    gdt: DType,
    need: &dyn Fn(Slot) -> bool,
    c: &mut Contribs,
) -> Res<()> {
    // A host operand is a weak scalar: the forward pass rounded it to the
    // result's dtype (spec §5.1), so the rules use that value, as a rank-0
    // tensor (which `log` also needs, for a host base of `**`).
    let (a, b) = (&weak(a, out)?, &weak(b, out)?);
    let (sa, sb) = (shape(a), shape(b));
    let (na, nb) = (need(slot(0)), need(slot(1)));
    let (wa, wb) = (wide(a, gdt)?, wide(b, gdt)?);
    match bop {
        BinOp::Add => {
            if na {
                c.push((slot(0), sum_to(ct, &sa)?));
            }
            if nb {
                c.push((slot(1), sum_to(ct, &sb)?));
            }
        }
        BinOp::Sub => {
            if na {
                c.push((slot(0), sum_to(ct, &sa)?));
            }
            if nb {
                c.push((slot(1), sum_to(&o(Op::Neg, &[ct.clone()])?, &sb)?));
            }
        }
        BinOp::Mul => {
            if na {
                c.push((slot(0), sum_to(&mul(ct, &wb)?, &sa)?));
            }
            if nb {
                c.push((slot(1), sum_to(&mul(ct, &wa)?, &sb)?));
            }
        }
        BinOp::Div => {
            if na {
                c.push((slot(0), sum_to(&div(ct, &wb)?, &sa)?));
            }
            if nb {
                // d(a/b)/db = -(a/b)/b
                let q = div(&wa, &wb)?;
                let g = o(Op::Neg, &[div(&mul(ct, &q)?, &wb)?])?;
                c.push((slot(1), sum_to(&g, &sb)?));
            }
        }
        BinOp::Mod => {
            // a - floor(a/b)·b (PyTorch's remainder)
            if na {
                c.push((slot(0), sum_to(ct, &sa)?));
            }
            if nb {
                let q = binary(BinOp::FloorDiv, &wa, &wb)?;
                let g = o(Op::Neg, &[mul(ct, &q)?])?;
                c.push((slot(1), sum_to(&g, &sb)?));
            }
        }
        BinOp::Pow => {
            if na {
                // b·a^(b-1), 0 where b == 0 (PyTorch)
                let d = mul(&wb, &binary(BinOp::Pow, &wa, &sub(&wb, &f(1.0))?)?)?;
                let d = select(&cmp(BinOp::Eq, &wb, &f(0.0))?, &f(0.0), &d)?;
                c.push((slot(0), sum_to(&mul(ct, &d)?, &sa)?));
            }
            if nb {
                // a^b·log(a), 0 where a == 0 and b >= 0 (PyTorch)
                let wo = wide(out, gdt)?;
                let d = mul(&wo, &o(Op::Log, &[wa.clone()])?)?;
                let zero = binary(
                    BinOp::BitAnd,
                    &cmp(BinOp::Eq, &wa, &f(0.0))?,
                    &cmp(BinOp::Ge, &wb, &f(0.0))?,
                )?;
                let d = select(&zero, &f(0.0), &d)?;
                c.push((slot(1), sum_to(&mul(ct, &d)?, &sb)?));
            }
        }
        // Comparisons, bitwise operators and floor division are not
        // recorded; `@` is recorded as `matmul`.
        BinOp::FloorDiv
        | BinOp::MatMul
        | BinOp::Eq
        | BinOp::Ne
        | BinOp::Lt
        | BinOp::Le
        | BinOp::Gt
        | BinOp::Ge
        | BinOp::BitAnd
        | BinOp::BitOr
        | BinOp::BitXor
        | BinOp::Shl
        | BinOp::Shr => return Err(format!("`{}` has no gradient", bop.symbol())),
    }
    Ok(())
}

/// The binary functions of spec §11.3 (PyTorch's rules): fmod gives
/// `ct` to a and `-trunc(a/b)·ct` to b; copysign `ct·(out/a)` to a (0 where
/// a is 0) and nothing to b; atan2(y, x) `ct·x/(x²+y²)` to y and
/// `-ct·y/(x²+y²)` to x; hypot `ct·a/out` and `ct·b/out`; logaddexp
/// `ct·exp(a - out)` and `ct·exp(b - out)`.
#[allow(clippy::too_many_arguments)]
fn binary_fn_rule(
    name: Op,
    a0: &Value,
    b0: &Value,
    out: &Value,
    ct: &Value,
    gdt: DType,
    need: &dyn Fn(Slot) -> bool,
    c: &mut Contribs,
) -> Res<()> {
    let (a, b) = (&weak(a0, out)?, &weak(b0, out)?);
    let (wa, wb, wo) = (wide(a, gdt)?, wide(b, gdt)?, wide(out, gdt)?);
    let (ga, gb): (Option<Value>, Option<Value>) = match name {
        Op::Fmod => (
            Some(ct.clone()),
            Some(o(Op::Neg, &[mul(ct, &o(Op::Trunc, &[div(&wa, &wb)?])?)?])?),
        ),
        Op::Copysign => {
            let zero = cmp(BinOp::Eq, &wa, &f(0.0))?;
            let ratio = select(&zero, &f(0.0), &div(&wo, &wa)?)?;
            (Some(mul(ct, &ratio)?), None)
        }
        Op::Atan2 => {
            let d = add(&mul(&wa, &wa)?, &mul(&wb, &wb)?)?;
            (
                Some(div(&mul(ct, &wb)?, &d)?),
                Some(o(Op::Neg, &[div(&mul(ct, &wa)?, &d)?])?),
            )
        }
        Op::Hypot => (Some(div(&mul(ct, &wa)?, &wo)?), Some(div(&mul(ct, &wb)?, &wo)?)),
        Op::Logaddexp => (
            Some(mul(ct, &o(Op::Exp, &[sub(&wa, &wo)?])?)?),
            Some(mul(ct, &o(Op::Exp, &[sub(&wb, &wo)?])?)?),
        ),
        other => return Err(format!("internal error: `{other}` is not a binary function")),
    };
    for (i, (g, v)) in [(ga, a0), (gb, b0)].into_iter().enumerate() {
        if let (Some(g), true) = (g, need(slot(i)) && is_tensor(v)) {
            c.push((slot(i), sum_to(&g, &shape(v))?));
        }
    }
    Ok(())
}

/// `norm`: ord 2 and "fro" give `ct·x/norm` (0 where the norm is 0), ord 1
/// `ct·sign(x)`, inf `ct·sign(x)` shared among the elements of largest |x|.
fn norm_rule(
    args: &[Option<Value>],
    x: &Value,
    out: &Value,
    ct: &Value,
    gdt: DType,
    need0: bool,
    c: &mut Contribs,
) -> Res<()> {
    if !need0 {
        return Ok(());
    }
    let xs = shape(x);
    let ord = args.get(1).cloned().flatten();
    let axes = match (&ord, args.get(2).cloned().flatten()) {
        (Some(Value::Str(_)), None) => (0..xs.len()).collect(),
        (_, axis) => reduced_axes(&axis, xs.len())?,
    };
    let keep = flag(&args.get(3).cloned().flatten());
    let w = wide(x, gdt)?;
    let ne = expand(&wide(out, gdt)?, &axes, keep, &xs)?;
    let ce = expand(ct, &axes, keep, &xs)?;
    let sign = o(Op::Sign, &[w.clone()])?;
    let g = match ord {
        Some(Value::Int(1)) => mul(&ce, &sign)?,
        Some(Value::F64(1.0)) => mul(&ce, &sign)?,
        Some(Value::F64(v)) if v == f64::INFINITY => {
            let hit = cast(&cmp(BinOp::Eq, &o(Op::Abs, &[w.clone()])?, &ne)?, gdt)?;
            let n = o(Op::Sum, &[hit.clone(), ints(&axes), Value::Bool(true)])?;
            let n = o(Op::Maximum, &[n, f(1.0)])?;
            mul(&div(&mul(&ce, &sign)?, &n)?, &hit)?
        }
        _ => {
            let zero = cmp(BinOp::Eq, &ne, &f(0.0))?;
            select(&zero, &f(0.0), &div(&mul(&ce, &w)?, &ne)?)?
        }
    };
    c.push((slot(0), g));
    Ok(())
}

/// maximum/minimum: the gradient goes to the larger (smaller) operand, and
/// is shared evenly on a tie (PyTorch).
fn extremum_rule(
    a: &Value,
    b: &Value,
    ct: &Value,
    gdt: DType,
    is_max: bool,
    need: &dyn Fn(Slot) -> bool,
    c: &mut Contribs,
) -> Res<()> {
    let (wa, wb) = (wide(a, gdt)?, wide(b, gdt)?);
    let half = mul(ct, &f(0.5))?;
    let wins = |x: &Value, y: &Value| cmp(if is_max { BinOp::Gt } else { BinOp::Lt }, x, y);
    let tie = cmp(BinOp::Eq, &wa, &wb)?;
    for (i, (x, y)) in [(&wa, &wb), (&wb, &wa)].into_iter().enumerate() {
        if !need(slot(i)) || !is_tensor(if i == 0 { a } else { b }) {
            continue;
        }
        // NaN propagates: a NaN operand takes the whole gradient.
        let nan = o(Op::IsNan, &[x.clone()])?;
        let g = o(Op::Where, &[wins(x, y)?, ct.clone(), masked(&tie, &half)?])?;
        let g = o(Op::Where, &[nan, ct.clone(), g])?;
        let s = shape(if i == 0 { a } else { b });
        c.push((slot(i), sum_to(&g, &s)?));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn table_rule(
    name: Op,
    args: &[Option<Value>],
    out: &Value,
    ct: &Value,
    gdt: DType,
    need: &dyn Fn(Slot) -> bool,
    need0: bool,
    c: &mut Contribs,
) -> Res<()> {
    match rule_kind(name) {
        RuleKind::Vjp => {}
        RuleKind::Composite | RuleKind::NotDifferentiable => {
            return Err(format!("`{name}` has no vjp rule of its own"));
        }
    }
    let x = arg(args, 0)?;
    let xs = shape(&x);
    let wx = || wide(&x, gdt);
    let wo = || wide(out, gdt);
    let one = |g: Value| -> Res<Value> { Ok(g) };
    let unary = |c: &mut Contribs, g: Res<Value>| -> Res<()> {
        if need0 {
            c.push((slot(0), g?));
        }
        Ok(())
    };
    match name {
        Op::Maximum | Op::Minimum => {
            extremum_rule(&x, &arg(args, 1)?, ct, gdt, name == Op::Maximum, need, c)?
        }
        Op::Fmod | Op::Copysign | Op::Atan2 | Op::Hypot | Op::Logaddexp => {
            binary_fn_rule(name, &x, &arg(args, 1)?, out, ct, gdt, need, c)?
        }
        Op::Lgamma => unary(c, mul(ct, &o(Op::Digamma, &[wx()?])?))?,
        // ψ' is ψ⁽¹⁾ and ψ⁽ⁿ⁾' is ψ⁽ⁿ⁺¹⁾: every order differentiates again.
        Op::Digamma => unary(c, mul(ct, &o(Op::Polygamma, &[wx()?, Value::Int(1)])?))?,
        Op::Polygamma => {
            let next = match arg(args, 1)? {
                Value::Int(n) => n.checked_add(1),
                _ => None,
            };
            let Some(next) = next else {
                return Err(
                    "`polygamma`: the order `n` cannot be differentiated past the largest Int".into(),
                );
            };
            unary(c, mul(ct, &o(Op::Polygamma, &[wx()?, Value::Int(next)])?))?
        }
        Op::Where => {
            let (cond, a, b) = (x.clone(), arg(args, 1)?, arg(args, 2)?);
            if need(slot(1)) {
                c.push((slot(1), sum_to(&masked(&cond, ct)?, &shape(&a))?));
            }
            if need(slot(2)) {
                let g = o(Op::Where, &[cond, f(0.0), ct.clone()])?;
                c.push((slot(2), sum_to(&g, &shape(&b))?));
            }
        }
        Op::Neg => unary(c, o(Op::Neg, &[ct.clone()]))?,
        Op::Abs => unary(c, mul(ct, &o(Op::Sign, &[wx()?])?))?,
        Op::Relu => unary(c, masked(&cmp(BinOp::Gt, &wx()?, &f(0.0))?, ct))?,
        Op::Square => unary(c, mul(ct, &mul(&wx()?, &f(2.0))?))?,
        Op::Clip => {
            // PyTorch's clamp: x gets the gradient on lo <= x <= hi.
            let w = wx()?;
            let widen = |i: usize| args.get(i).cloned().flatten().map(|v| wide(&v, gdt)).transpose();
            let (lo, hi) = (widen(1)?, widen(2)?);
            let mut inside = cmp(BinOp::Eq, &w, &w)?; // false only at NaN
            if let Some(l) = &lo {
                inside = binary(BinOp::BitAnd, &inside, &cmp(BinOp::Ge, &w, l)?)?;
            }
            if let Some(h) = &hi {
                inside = binary(BinOp::BitAnd, &inside, &cmp(BinOp::Le, &w, h)?)?;
            }
            if need0 {
                c.push((slot(0), masked(&inside, ct)?));
            }
            // lo > hi gives hi everywhere, so there lo gets nothing and hi
            // everything (PyTorch's clamp_backward_min_max).
            if let (Some(l), true) = (&lo, need(slot(1))) {
                let mut below = cmp(BinOp::Lt, &w, l)?;
                if let Some(h) = &hi {
                    below = binary(BinOp::BitAnd, &below, &cmp(BinOp::Lt, l, h)?)?;
                }
                c.push((slot(1), sum_to(&masked(&below, ct)?, &shape(l))?));
            }
            if let (Some(h), true) = (&hi, need(slot(2))) {
                let mut above = cmp(BinOp::Gt, &w, h)?;
                if let Some(l) = &lo {
                    above = binary(BinOp::BitOr, &above, &cmp(BinOp::Gt, l, h)?)?;
                }
                c.push((slot(2), sum_to(&masked(&above, ct)?, &shape(h))?));
            }
        }
        Op::Exp => unary(c, mul(ct, &wo()?))?,
        Op::Log => unary(c, div(ct, &wx()?))?,
        Op::Log1p => unary(c, div(ct, &add(&wx()?, &f(1.0))?))?,
        Op::Expm1 => unary(c, mul(ct, &add(&wo()?, &f(1.0))?))?,
        Op::Sqrt => unary(c, div(&mul(ct, &f(0.5))?, &wo()?))?,
        Op::Rsqrt => {
            // d/dx x^(-1/2) = -1/2 · out³
            let w = wo()?;
            unary(c, mul(&mul(ct, &f(-0.5))?, &mul(&w, &mul(&w, &w)?)?))?
        }
        Op::Sin => unary(c, mul(ct, &o(Op::Cos, &[wx()?])?))?,
        Op::Cos => unary(c, o(Op::Neg, &[mul(ct, &o(Op::Sin, &[wx()?])?)?]))?,
        Op::Tan => {
            let w = wo()?;
            unary(c, mul(ct, &add(&mul(&w, &w)?, &f(1.0))?))?
        }
        Op::Tanh => {
            let w = wo()?;
            unary(c, mul(ct, &sub(&f(1.0), &mul(&w, &w)?)?))?
        }
        Op::Sigmoid => {
            let w = wo()?;
            unary(c, mul(ct, &mul(&w, &sub(&f(1.0), &w)?)?))?
        }
        Op::Reciprocal => {
            let w = wo()?;
            unary(c, o(Op::Neg, &[mul(ct, &mul(&w, &w)?)?]))?
        }
        Op::Exp2 => unary(c, mul(ct, &mul(&wo()?, &f(std::f64::consts::LN_2))?))?,
        Op::Log2 => unary(c, div(ct, &mul(&wx()?, &f(std::f64::consts::LN_2))?))?,
        Op::Log10 => unary(c, div(ct, &mul(&wx()?, &f(std::f64::consts::LN_10))?))?,
        Op::Cbrt => {
            let w = wo()?;
            unary(c, div(ct, &mul(&mul(&w, &w)?, &f(3.0))?))?
        }
        Op::Sinh => unary(c, mul(ct, &o(Op::Cosh, &[wx()?])?))?,
        Op::Cosh => unary(c, mul(ct, &o(Op::Sinh, &[wx()?])?))?,
        Op::Asin | Op::Acos => {
            // ±1 / sqrt(1 - x²)
            let w = wx()?;
            let g = div(ct, &o(Op::Sqrt, &[sub(&f(1.0), &mul(&w, &w)?)?])?)?;
            unary(c, if name == Op::Acos { o(Op::Neg, &[g]) } else { Ok(g) })?
        }
        Op::Atan => {
            let w = wx()?;
            unary(c, div(ct, &add(&mul(&w, &w)?, &f(1.0))?))?
        }
        Op::Asinh => {
            let w = wx()?;
            unary(c, div(ct, &o(Op::Sqrt, &[add(&mul(&w, &w)?, &f(1.0))?])?))?
        }
        Op::Acosh => {
            let w = wx()?;
            unary(c, div(ct, &o(Op::Sqrt, &[sub(&mul(&w, &w)?, &f(1.0))?])?))?
        }
        Op::Atanh => {
            let w = wx()?;
            unary(c, div(ct, &sub(&f(1.0), &mul(&w, &w)?)?))?
        }
        Op::Erf | Op::Erfc => {
            // ±2/√π · exp(-x²)
            let w = wx()?;
            let k = if name == Op::Erf { 2.0 } else { -2.0 } / std::f64::consts::PI.sqrt();
            let e = o(Op::Exp, &[o(Op::Neg, &[mul(&w, &w)?])?])?;
            unary(c, mul(ct, &mul(&e, &f(k))?))?
        }
        Op::Sum | Op::Mean => {
            let axes = reduced_axes(&args.get(1).cloned().flatten(), xs.len())?;
            let mut g = expand(ct, &axes, flag(&args.get(2).cloned().flatten()), &xs)?;
            if name == Op::Mean {
                g = div(&g, &f(count(&xs, &axes)))?;
            }
            unary(c, one(g))?
        }
        Op::Prod => unary(
            c,
            prod_rule(
                &wx()?,
                &args.get(1).cloned().flatten(),
                flag(&args.get(2).cloned().flatten()),
                ct,
            ),
        )?,
        Op::Max | Op::Min | Op::Median => {
            // Shared evenly among the elements equal to the result (all the
            // NaNs when the result is NaN), as PyTorch's amax/amin/median.
            let axes = reduced_axes(&args.get(1).cloned().flatten(), xs.len())?;
            let keep = flag(&args.get(2).cloned().flatten());
            let w = wx()?;
            let oe = expand(&wo()?, &axes, keep, &xs)?;
            let hit = binary(
                BinOp::BitOr,
                &cmp(BinOp::Eq, &w, &oe)?,
                &binary(
                    BinOp::BitAnd,
                    &o(Op::IsNan, &[w.clone()])?,
                    &o(Op::IsNan, &[oe.clone()])?,
                )?,
            )?;
            let hitf = cast(&hit, gdt)?;
            let n = o(Op::Sum, &[hitf.clone(), ints(&axes), Value::Bool(true)])?;
            let share = div(&expand(ct, &axes, keep, &xs)?, &n)?;
            unary(c, mul(&share, &hitf))?
        }
        Op::Nanmax | Op::Nanmin => {
            // As max/min of x with NaN replaced: shared among the elements
            // equal to the result; nothing where a slice is all NaN.
            let axes = reduced_axes(&args.get(1).cloned().flatten(), xs.len())?;
            let keep = flag(&args.get(2).cloned().flatten());
            let w = wx()?;
            let oe = expand(&wo()?, &axes, keep, &xs)?;
            let hitf = cast(&cmp(BinOp::Eq, &w, &oe)?, gdt)?;
            let n = o(Op::Sum, &[hitf.clone(), ints(&axes), Value::Bool(true)])?;
            let n = o(Op::Maximum, &[n, f(1.0)])?;
            let share = div(&expand(ct, &axes, keep, &xs)?, &n)?;
            unary(c, mul(&share, &hitf))?
        }
        Op::Nansum | Op::Nanmean => {
            let axes = reduced_axes(&args.get(1).cloned().flatten(), xs.len())?;
            let keep = flag(&args.get(2).cloned().flatten());
            let ok = o(Op::LogicalNot, &[o(Op::IsNan, &[x.clone()])?])?;
            let mut g = masked(&ok, &expand(ct, &axes, keep, &xs)?)?;
            if name == Op::Nanmean {
                let n = o(Op::Sum, &[cast(&ok, gdt)?, ints(&axes), Value::Bool(true)])?;
                g = div(&g, &n)?;
            }
            unary(c, Ok(g))?
        }
        Op::Norm => norm_rule(args, &x, out, ct, gdt, need0, c)?,
        Op::Flatten => unary(c, o(Op::Reshape, &[ct.clone(), ints(&xs)]))?,
        Op::Diff => {
            // Each difference step y = x[1:] - x[:-1] sends g to x as
            // [0, g] - [g, 0] along the axis; the steps in reverse.
            let n = match args.get(1).cloned().flatten() {
                Some(Value::Int(n)) => n.max(0) as usize,
                _ => 1,
            };
            let ax = match args.get(2).cloned().flatten() {
                Some(Value::Int(a)) => norm_axis(a, xs.len())?,
                _ => xs.len().saturating_sub(1),
            };
            let mut g = ct.clone();
            let steps = n.min(xs.get(ax).copied().unwrap_or(0));
            for _ in 0..steps {
                let mut zs = shape(&g);
                zs[ax] = 1;
                let z = tensor_value(twill_tensor::Tensor::zeros(zs, gdt).map_err(|e| e.0)?);
                let front = o(
                    Op::Concat,
                    &[Value::Arr(Rc::new(vec![z.clone(), g.clone()])), int(ax)],
                )?;
                let back = o(Op::Concat, &[Value::Arr(Rc::new(vec![g, z])), int(ax)])?;
                g = sub(&front, &back)?;
            }
            unary(c, Ok(g))?
        }
        Op::Tril | Op::Triu => {
            let k = args.get(1).cloned().flatten().unwrap_or(Value::Int(0));
            unary(c, o(name, &[ct.clone(), k]))?
        }
        Op::Diag | Op::Trace => {
            let k = match args.get(1).cloned().flatten() {
                Some(Value::Int(k)) if name == Op::Diag => k,
                _ => 0,
            };
            let g = if xs.len() == 1 {
                o(Op::Diag, &[ct.clone(), Value::Int(k)])?
            } else {
                // The cotangent of the diagonal, put back on it.
                let (rows, cols) = twill_tensor::ops::derived::diagonal(xs[0], xs[1], k).map_err(|e| e.0)?;
                let z = tensor_value(twill_tensor::Tensor::zeros(xs.clone(), gdt).map_err(|e| e.0)?);
                assign(&z, &[IndexItem::Tensor(rows), IndexItem::Tensor(cols)], ct, None)?
            };
            unary(c, Ok(g))?
        }
        Op::Outer | Op::Dot => {
            let b = arg(args, 1)?;
            let (wa, wb) = (wx()?, wide(&b, gdt)?);
            let flat = |v: &Value| {
                o(
                    Op::Reshape,
                    &[v.clone(), Value::Arr(Rc::new(vec![Value::Int(-1)]))],
                )
            };
            if name == Op::Dot {
                if need0 {
                    c.push((slot(0), mul(ct, &wb)?));
                }
                if need(slot(1)) {
                    c.push((slot(1), mul(ct, &wa)?));
                }
            } else {
                if need0 {
                    let g = o(Op::Matmul, &[ct.clone(), flat(&wb)?])?;
                    c.push((slot(0), o(Op::Reshape, &[g, ints(&xs)])?));
                }
                if need(slot(1)) {
                    let g = o(Op::Matmul, &[flat(&wa)?, ct.clone()])?;
                    c.push((slot(1), o(Op::Reshape, &[g, ints(&shape(&b))])?));
                }
            }
        }
        Op::Var | Op::Std => {
            let axis = args.get(1).cloned().flatten();
            let axes = reduced_axes(&axis, xs.len())?;
            let keep = flag(&args.get(2).cloned().flatten());
            let ddof = match args.get(3).cloned().flatten() {
                Some(Value::Int(d)) => d as f64,
                Some(Value::F64(d)) => d,
                _ => 0.0,
            };
            let w = wx()?;
            let mean = os(
                Op::Mean,
                &[Some(w.clone()), axis.clone(), Some(Value::Bool(true))],
            )?;
            let centred = sub(&w, &mean)?;
            let n = count(&xs, &axes) - ddof;
            let ge = expand(ct, &axes, keep, &xs)?;
            let g = if name == Op::Var {
                mul(&ge, &mul(&centred, &f(2.0 / n))?)?
            } else {
                let so = expand(&wo()?, &axes, keep, &xs)?;
                let g = div(&mul(&ge, &centred)?, &mul(&so, &f(n))?)?;
                o(Op::Where, &[cmp(BinOp::Eq, &so, &f(0.0))?, f(0.0), g])?
            };
            unary(c, one(g))?
        }
        Op::Logsumexp => {
            let axes = reduced_axes(&args.get(1).cloned().flatten(), xs.len())?;
            let keep = flag(&args.get(2).cloned().flatten());
            let w = wx()?;
            let oe = expand(&wo()?, &axes, keep, &xs)?;
            let p = o(Op::Exp, &[sub(&w, &oe)?])?;
            // A row of -inf: no gradient (0, not NaN).
            let p = o(
                Op::Where,
                &[cmp(BinOp::Eq, &w, &f(f64::NEG_INFINITY))?, f(0.0), p],
            )?;
            unary(c, mul(&expand(ct, &axes, keep, &xs)?, &p))?
        }
        Op::Cumsum => {
            let ax = arg(args, 1)?;
            let r = o(
                Op::Flip,
                &[
                    o(Op::Cumsum, &[o(Op::Flip, &[ct.clone(), ax.clone()])?, ax.clone()])?,
                    ax,
                ],
            )?;
            unary(c, one(r))?
        }
        Op::Cumprod => {
            let ax = arg(args, 1)?;
            let w = wx()?;
            let has_zero = base(&w).is_some_and(|t| t.scalars().any(|s| s.to_f64() == 0.0));
            if has_zero {
                unary(c, cumprod_with_zeros(&w, &ax, ct))?
            } else {
                // Σ_{j>=i} ct_j·out_j / x_i, for inputs without a zero.
                let s = mul(ct, &wo()?)?;
                let r = o(
                    Op::Flip,
                    &[o(Op::Cumsum, &[o(Op::Flip, &[s, ax.clone()])?, ax.clone()])?, ax],
                )?;
                unary(c, div(&r, &w))?
            }
        }
        Op::Softmax => {
            let axis = args.get(1).cloned().flatten().unwrap_or(Value::Int(-1));
            let w = wo()?;
            let dot = o(Op::Sum, &[mul(ct, &w)?, axis, Value::Bool(true)])?;
            unary(c, mul(&w, &sub(ct, &dot)?))?
        }
        Op::LogSoftmax => {
            let axis = args.get(1).cloned().flatten().unwrap_or(Value::Int(-1));
            let p = o(Op::Exp, &[wo()?])?;
            let s = o(Op::Sum, &[ct.clone(), axis, Value::Bool(true)])?;
            unary(c, sub(ct, &mul(&p, &s)?))?
        }
        Op::Reshape | Op::Squeeze | Op::Unsqueeze => unary(c, o(Op::Reshape, &[ct.clone(), ints(&xs)]))?,
        Op::BroadcastTo => unary(c, sum_to(ct, &xs))?,
        Op::Transpose => unary(c, o(Op::Transpose, &[ct.clone(), arg(args, 1)?, arg(args, 2)?]))?,
        Op::Permute => {
            let axes = axis_list(&arg(args, 1)?, xs.len())?;
            let mut inv = vec![0usize; axes.len()];
            for (i, &a) in axes.iter().enumerate() {
                inv[a] = i;
            }
            unary(c, o(Op::Permute, &[ct.clone(), ints(&inv)]))?
        }
        Op::Flip => {
            let mut pos = vec![ct.clone()];
            if let Some(a) = args.get(1).cloned().flatten() {
                pos.push(a);
            }
            unary(c, o(Op::Flip, &pos))?
        }
        Op::Roll => {
            let shift = match arg(args, 1)? {
                Value::Int(s) => Value::Int(-s),
                Value::Arr(items) => Value::Arr(Rc::new(
                    items
                        .iter()
                        .map(|v| match v {
                            Value::Int(s) => Value::Int(-s),
                            other => other.clone(),
                        })
                        .collect(),
                )),
                // A list literal of shifts is an f64 tensor (spec §4).
                t if is_tensor(&t) => o(Op::Neg, &[t])?,
                other => return Err(format!("`roll`: a shift cannot be a `{}`", other.type_name())),
            };
            let mut pos = vec![ct.clone(), shift];
            if let Some(a) = args.get(2).cloned().flatten() {
                pos.push(a);
            }
            unary(c, o(Op::Roll, &pos))?
        }
        Op::Concat | Op::Stack => {
            let Value::Arr(items) = &x else {
                return Err(format!("`{name}` needs an Arr of tensors"));
            };
            let axis = match args.get(1).cloned().flatten() {
                Some(Value::Int(a)) => a,
                _ => 0,
            };
            let rank = shape(ct).len();
            let ax = norm_axis(axis, rank.max(1))?;
            let sizes: Vec<usize> = items
                .iter()
                .map(|t| {
                    if name == Op::Concat {
                        shape(t).get(ax).copied().unwrap_or(0)
                    } else {
                        1
                    }
                })
                .collect();
            let pieces = o(Op::Split, &[ct.clone(), ints(&sizes), int(ax)])?;
            let Value::Arr(pieces) = pieces else {
                return Err("`split` gave no pieces".into());
            };
            for (elem, (p, t)) in pieces.iter().zip(items.iter()).enumerate() {
                let s = Slot { arg: 0, elem };
                if need(s) {
                    let g = if name == Op::Stack {
                        o(Op::Reshape, &[p.clone(), ints(&shape(t))])?
                    } else {
                        p.clone()
                    };
                    c.push((s, g));
                }
            }
        }
        Op::Gather => {
            let ax = match arg(args, 1)? {
                Value::Int(a) => norm_axis(a, xs.len().max(1))?,
                _ => return Err("`gather`: axis must be an Int".into()),
            };
            unary(c, scatter_add(ct, ax, &arg(args, 2)?, &xs))?
        }
        Op::IndexSelect => {
            let ax = match arg(args, 1)? {
                Value::Int(a) => norm_axis(a, xs.len().max(1))?,
                _ => return Err("`index_select`: axis must be an Int".into()),
            };
            unary(
                c,
                index_add(ct, ax, &arg(args, 2)?, xs.get(ax).copied().unwrap_or(0)),
            )?
        }
        Op::Matmul => matmul_rule(&x, &arg(args, 1)?, ct, gdt, need, c)?,
        Op::Linear => {
            let (w, b) = (arg(args, 1)?, args.get(2).cloned().flatten());
            let ws = shape(&w);
            let ww = wide(&w, gdt)?;
            if need0 {
                let g = if ws.len() == 1 {
                    mul(&o(Op::Unsqueeze, &[ct.clone(), Value::Int(-1)])?, &ww)?
                } else {
                    o(Op::Matmul, &[ct.clone(), ww.clone()])?
                };
                c.push((slot(0), sum_to(&g, &xs)?));
            }
            if need(slot(1)) {
                // Σ over the batch of ctᵀ x.
                let wxv = wx()?;
                let outs = if ws.len() == 1 { 1 } else { ws[0] };
                let ins = *ws.last().unwrap_or(&1);
                let rows: usize = xs.iter().product::<usize>() / ins.max(1);
                let x2 = o(Op::Reshape, &[wxv, ints(&[rows, ins])])?;
                let c2 = o(Op::Reshape, &[ct.clone(), ints(&[rows, outs])])?;
                let g = o(Op::Matmul, &[reverse(&c2)?, x2])?;
                c.push((slot(1), o(Op::Reshape, &[g, ints(&ws)])?));
            }
            if let (Some(b), true) = (&b, need(slot(2))) {
                c.push((slot(2), sum_to(ct, &shape(b))?));
            }
        }
        Op::Einsum => einsum_rule(args, ct, gdt, need, c)?,
        Op::Conv2d => conv2d_rule(&x, &arg(args, 1)?, args, ct, gdt, need, c)?,
        // Linear algebra (spec §11.4): the rules live in `autodiff::linalg`.
        Op::Solve
        | Op::Inv
        | Op::Det
        | Op::Slogdet
        | Op::Cholesky
        | Op::Qr
        | Op::Eigh
        | Op::Svd
        | Op::Lstsq
        | Op::Pinv => c.extend(super::linalg::vjp(name, args, &[out.clone()], 0, ct, gdt, need)?),
        // Recorded through what they are made of (`sort`/`topk` as a
        // gather of the tracked values, `split` as slices), never as
        // themselves.
        Op::Sort | Op::Topk | Op::Split | Op::Quantile => {
            return Err(format!(
                "`{name}` is recorded through the operations it is made of"
            ))
        }
        // The registry marks these non-differentiable: they are never
        // recorded, so no node of theirs reaches the backward pass.
        Op::Sign
        | Op::Floor
        | Op::Ceil
        | Op::Round
        | Op::IsNan
        | Op::IsInf
        | Op::IsFinite
        | Op::Argmax
        | Op::Argmin
        | Op::All
        | Op::Any
        | Op::Argsort
        | Op::Argtopk
        | Op::RoundTo
        | Op::Trunc
        | Op::Signbit
        | Op::Nextafter
        | Op::LogicalAnd
        | Op::LogicalOr
        | Op::LogicalXor
        | Op::LogicalNot
        | Op::CountNonzero
        | Op::Isclose
        | Op::Allclose
        | Op::MatrixRank
        | Op::Unique
        | Op::UniqueCounts
        | Op::Searchsorted
        | Op::Bincount
        | Op::Nonzero
        | Op::Bits
        | Op::FromBits => return Err(format!("`{name}` has no gradient rule: it is not differentiable")),
    }
    Ok(())
}

/// `ct` with the reduced axes restored as size-1 axes.
fn with_kept_axes(ct: &Value, axes: &[usize], keepdim: bool) -> Res<Value> {
    if keepdim {
        return Ok(ct.clone());
    }
    let mut kept = shape(ct);
    for &a in axes {
        kept.insert(a, 1);
    }
    o(Op::Reshape, &[ct.clone(), ints(&kept)])
}

/// prod: each element's gradient is the product of the others in its
/// group, computed as exclusive products from both ends (exact with
/// zeros, no division).
fn prod_rule(w: &Value, axis: &Option<Value>, keepdim: bool, ct: &Value) -> Res<Value> {
    let xs = shape(w);
    let axes = reduced_axes(axis, xs.len())?;
    if xs.is_empty() {
        return Ok(ct.clone());
    }
    let kept: Vec<usize> = (0..xs.len()).filter(|a| !axes.contains(a)).collect();
    let mut perm = kept.clone();
    perm.extend(&axes);
    let n: usize = axes.iter().map(|&a| xs[a]).product();
    let m: usize = kept.iter().map(|&a| xs[a]).product();
    let rows = o(
        Op::Reshape,
        &[o(Op::Permute, &[w.clone(), ints(&perm)])?, ints(&[m, n])],
    )?;
    let onecol = twill_tensor::Tensor::full(
        vec![m, 1],
        twill_tensor::convert::Scalar::I32(1),
        dtype(w).unwrap_or(DType::F32),
    )
    .map(tensor_value)
    .map_err(|e| e.0)?;
    let others = if n == 0 {
        rows.clone()
    } else {
        let left_in = o(
            Op::Concat,
            &[
                Value::Arr(Rc::new(vec![
                    onecol.clone(),
                    index(
                        &rows,
                        &[
                            IndexItem::Slice(None, None, None),
                            IndexItem::Slice(None, Some(n as i64 - 1), None),
                        ],
                    )?,
                ])),
                int(1),
            ],
        )?;
        let left = o(Op::Cumprod, &[left_in, int(1)])?;
        let rflip = o(Op::Flip, &[rows.clone(), int(1)])?;
        let right_in = o(
            Op::Concat,
            &[
                Value::Arr(Rc::new(vec![
                    onecol,
                    index(
                        &rflip,
                        &[
                            IndexItem::Slice(None, None, None),
                            IndexItem::Slice(None, Some(n as i64 - 1), None),
                        ],
                    )?,
                ])),
                int(1),
            ],
        )?;
        let right = o(Op::Flip, &[o(Op::Cumprod, &[right_in, int(1)])?, int(1)])?;
        mul(&left, &right)?
    };
    // Back to x's layout.
    let mut pshape: Vec<usize> = kept.iter().map(|&a| xs[a]).collect();
    pshape.extend(axes.iter().map(|&a| xs[a]));
    let mut inv = vec![0usize; perm.len()];
    for (i, &a) in perm.iter().enumerate() {
        inv[a] = i;
    }
    let others = o(
        Op::Permute,
        &[o(Op::Reshape, &[others, ints(&pshape)])?, ints(&inv)],
    )?;
    mul(&expand(ct, &axes, keepdim, &xs)?, &others)
}

/// cumprod's gradient where the input has zeros, without dividing:
/// g_i = (x_0 ⋯ x_{i-1}) · Σ_{j>=i} ct_j · (x_{i+1} ⋯ x_j), the inner
/// products as a cumprod over a masked [n, n] copy of each lane (O(n²)
/// memory per lane, so used only when a zero makes the division wrong).
fn cumprod_with_zeros(w: &Value, ax: &Value, ct: &Value) -> Res<Value> {
    let xs = shape(w);
    let nd = xs.len();
    let a = match ax {
        Value::Int(a) => norm_axis(*a, nd.max(1))?,
        _ => return Err("`cumprod`: axis must be an Int".into()),
    };
    if nd == 0 {
        return Ok(ct.clone());
    }
    let n = xs[a];
    let mut perm: Vec<usize> = (0..nd).filter(|&i| i != a).collect();
    perm.push(a);
    let mut inv = vec![0usize; nd];
    for (i, &p) in perm.iter().enumerate() {
        inv[p] = i;
    }
    let xt = o(Op::Permute, &[w.clone(), ints(&perm)])?;
    let ctt = o(Op::Permute, &[ct.clone(), ints(&perm)])?;
    let mask = |keep: &dyn Fn(usize, usize) -> bool| -> Res<Value> {
        let v: Vec<bool> = (0..n * n).map(|q| keep(q / n, q % n)).collect();
        twill_tensor::Tensor::from_vec(v, vec![n, n])
            .map(tensor_value)
            .map_err(|e| e.0)
    };
    // A[.., i, k] = x_k for k > i, else 1; C = cumprod over k.
    let a_mat = select(
        &mask(&|i, k| k > i)?,
        &o(Op::Unsqueeze, &[xt.clone(), Value::Int(-2)])?,
        &f(1.0),
    )?;
    let c_mat = o(Op::Cumprod, &[a_mat, Value::Int(-1)])?;
    let terms = mul(&o(Op::Unsqueeze, &[ctt, Value::Int(-2)])?, &c_mat)?;
    let sums = o(
        Op::Sum,
        &[masked(&mask(&|i, j| j >= i)?, &terms)?, Value::Int(-1)],
    )?;
    // x_0 ⋯ x_{i-1}: the cumprod of [1, x_0, …, x_{n-2}].
    let lead: Vec<usize> = xs
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != a)
        .map(|(_, &d)| d)
        .collect();
    let mut one_shape = lead.clone();
    one_shape.push(1);
    let dt = dtype(w).unwrap_or(DType::F32);
    let ones = twill_tensor::Tensor::full(one_shape, twill_tensor::convert::Scalar::I32(1), dt)
        .map(tensor_value)
        .map_err(|e| e.0)?;
    let mut items = vec![IndexItem::Slice(None, None, None); lead.len()];
    items.push(IndexItem::Slice(None, Some(n as i64 - 1), None));
    let shifted = o(
        Op::Concat,
        &[
            Value::Arr(Rc::new(vec![ones, index(&xt, &items)?])),
            Value::Int(-1),
        ],
    )?;
    let before = o(Op::Cumprod, &[shifted, Value::Int(-1)])?;
    o(Op::Permute, &[mul(&before, &sums)?, ints(&inv)])
}

/// NumPy matmul: 1-D operands gain an axis, batches broadcast.
fn matmul_rule(
    a: &Value,
    b: &Value,
    ct: &Value,
    gdt: DType,
    need: &dyn Fn(Slot) -> bool,
    c: &mut Contribs,
) -> Res<()> {
    let (sa, sb) = (shape(a), shape(b));
    let (wa, wb) = (wide(a, gdt)?, wide(b, gdt)?);
    let a2 = if sa.len() == 1 {
        o(Op::Unsqueeze, &[wa, int(0)])?
    } else {
        wa
    };
    let b2 = if sb.len() == 1 {
        o(Op::Unsqueeze, &[wb, Value::Int(-1)])?
    } else {
        wb
    };
    // The cotangent with the axes the 1-D operands dropped put back.
    let mut cs = shape(ct);
    if sa.len() == 1 {
        let at = cs.len() - if sb.len() == 1 { 0 } else { 1 };
        cs.insert(at, 1);
    }
    if sb.len() == 1 {
        cs.push(1);
    }
    let ct2 = o(Op::Reshape, &[ct.clone(), ints(&cs)])?;
    let swap = |v: &Value| o(Op::Transpose, &[v.clone(), Value::Int(-1), Value::Int(-2)]);
    if need(slot(0)) {
        let g = o(Op::Matmul, &[ct2.clone(), swap(&b2)?])?;
        let g = sum_to(&g, &shape(&a2))?;
        c.push((slot(0), o(Op::Reshape, &[g, ints(&sa)])?));
    }
    if need(slot(1)) {
        let g = o(Op::Matmul, &[swap(&a2)?, ct2])?;
        let g = sum_to(&g, &shape(&b2))?;
        c.push((slot(1), o(Op::Reshape, &[g, ints(&sb)])?));
    }
    Ok(())
}

/// The adjoint of indexing (basic or advanced): the cotangent added back
/// into zeros of x's shape at the selected elements, a repeated index
/// getting every occurrence (recorded, so nested differentiation works).
fn index_adjoint(ct: &Value, items: &[IndexItem], xs: &[usize]) -> Res<Value> {
    let dt = dtype(ct).unwrap_or(DType::F32);
    let zeros = twill_tensor::Tensor::zeros(xs.to_vec(), dt)
        .map(tensor_value)
        .map_err(|e| e.0)?;
    accumulate(&zeros, items, ct)
}

/// The cotangent of an assigned value `v` from that of the selection it
/// was broadcast to (`v` may also have had extra leading size-1 axes).
fn value_cotangent(g: &Value, v: &Value) -> Res<Value> {
    let vs = shape(v);
    let lead = vs.iter().take_while(|&&d| d == 1).count();
    let kept = lead.min(vs.len().saturating_sub(shape(g).len()));
    let g = sum_to(g, &vs[kept..])?;
    if kept > 0 {
        return o(Op::Reshape, &[g, ints(&vs)]);
    }
    Ok(g)
}

/// An einsum spec with every `...` written out as letters and the output
/// made explicit: one letter list per operand, and the output's.
fn expand_spec(spec: &str, ranks: &[usize]) -> Res<(Vec<Vec<char>>, Vec<char>)> {
    let compact: String = spec.chars().filter(|c| !c.is_whitespace()).collect();
    let (ins, out) = match compact.split_once("->") {
        Some((i, o)) => (i.to_string(), Some(o.to_string())),
        None => (compact.clone(), None),
    };
    let raw: Vec<&str> = ins.split(',').collect();
    if raw.len() != ranks.len() {
        return Err("`einsum`: the spec does not match the operands".into());
    }
    let used: Vec<char> = compact.chars().filter(|c| c.is_ascii_alphabetic()).collect();
    let mut fresh = ('A'..='Z').chain('a'..='z').filter(|c| !used.contains(c));
    let letters = |t: &str| t.chars().filter(|c| c.is_ascii_alphabetic()).count();
    let ell: Vec<usize> = raw
        .iter()
        .zip(ranks)
        .map(|(t, &r)| {
            if t.contains("...") {
                r.saturating_sub(letters(t))
            } else {
                0
            }
        })
        .collect();
    let max_ell = ell.iter().copied().max().unwrap_or(0);
    let mut ell_letters = Vec::with_capacity(max_ell);
    for _ in 0..max_ell {
        ell_letters.push(fresh.next().ok_or("`einsum`: too many axes to name")?);
    }
    let expand = |t: &str, k: usize| -> Vec<char> {
        match t.split_once("...") {
            Some((a, b)) => a
                .chars()
                .chain(ell_letters[max_ell - k..].iter().copied())
                .chain(b.chars())
                .collect(),
            None => t.chars().collect(),
        }
    };
    let terms: Vec<Vec<char>> = raw.iter().zip(&ell).map(|(t, &k)| expand(t, k)).collect();
    let out = match out {
        Some(o) => expand(&o, max_ell),
        None => {
            let all: Vec<char> = terms.concat();
            let mut once: Vec<char> = all
                .iter()
                .copied()
                .filter(|l| !ell_letters.contains(l) && all.iter().filter(|m| *m == l).count() == 1)
                .collect();
            once.sort_unstable();
            ell_letters.iter().copied().chain(once).collect()
        }
    };
    Ok((terms, out))
}

/// einsum: the gradient of operand i is the einsum of the cotangent with
/// the other operands, giving operand i's distinct letters; a letter that
/// only operand i has (summed away alone) is broadcast back, and a letter
/// repeated within operand i (a diagonal) is put back on the diagonal by an
/// einsum with identity matrices. `...` is written out as letters first.
fn einsum_rule(
    args: &[Option<Value>],
    ct: &Value,
    gdt: DType,
    need: &dyn Fn(Slot) -> bool,
    c: &mut Contribs,
) -> Res<()> {
    let Some(Value::Str(spec)) = args.first().cloned().flatten() else {
        return Err("`einsum` needs its spec".into());
    };
    let operands: Vec<Value> = args[1..].iter().filter_map(|a| a.clone()).collect();
    let ranks: Vec<usize> = operands.iter().map(|v| shape(v).len()).collect();
    let (terms, out) = expand_spec(&spec, &ranks)?;
    let all_used: Vec<char> = terms.concat().into_iter().chain(out.iter().copied()).collect();
    let mut fresh = ('A'..='Z').chain('a'..='z').filter(|l| !all_used.contains(l));
    let text = |t: &[char]| t.iter().collect::<String>();
    for (i, chars) in terms.iter().enumerate() {
        let s = slot(i + 1);
        if !need(s) {
            continue;
        }
        let target = shape(&operands[i]);
        let mut uniq: Vec<char> = Vec::new();
        for l in chars {
            if !uniq.contains(l) {
                uniq.push(*l);
            }
        }
        let size_of = |l: char| chars.iter().position(|m| *m == l).map_or(1, |p| target[p]);
        let mut spec_terms = vec![text(&out)];
        let mut ops = vec![ct.clone()];
        for (j, (t, v)) in terms.iter().zip(&operands).enumerate() {
            if j != i {
                spec_terms.push(text(t));
                ops.push(wide(v, gdt)?);
            }
        }
        let present: String = spec_terms.concat();
        let kept: Vec<char> = uniq.iter().copied().filter(|l| present.contains(*l)).collect();
        let mut pos = vec![Value::str(format!("{}->{}", spec_terms.join(","), text(&kept)))];
        pos.extend(ops);
        let mut g = o(Op::Einsum, &pos)?;
        if kept.len() != uniq.len() {
            let gs = shape(&g);
            let mut with_ones = Vec::new();
            let mut k = 0;
            for l in &uniq {
                if kept.contains(l) {
                    with_ones.push(gs[k]);
                    k += 1;
                } else {
                    with_ones.push(1);
                }
            }
            let full: Vec<usize> = uniq.iter().map(|&l| size_of(l)).collect();
            g = o(
                Op::BroadcastTo,
                &[o(Op::Reshape, &[g, ints(&with_ones)])?, ints(&full)],
            )?;
        }
        if uniq.len() != chars.len() {
            // A repeated letter: each later occurrence gets a fresh letter
            // tied to the first by an identity matrix.
            let mut full_term = Vec::with_capacity(chars.len());
            let mut seen: Vec<char> = Vec::new();
            let mut eye_terms = Vec::new();
            let mut eyes = Vec::new();
            for &l in chars {
                if seen.contains(&l) {
                    let f = fresh.next().ok_or("`einsum`: too many axes to name")?;
                    full_term.push(f);
                    eye_terms.push(format!("{l}{f}"));
                    let n = size_of(l);
                    eyes.push(
                        twill_tensor::construct::eye(n, gdt)
                            .map(tensor_value)
                            .map_err(|e| e.0)?,
                    );
                } else {
                    seen.push(l);
                    full_term.push(l);
                }
            }
            let spec_g = format!("{},{}->{}", text(&uniq), eye_terms.join(","), text(&full_term));
            let mut pos = vec![Value::str(spec_g), g];
            pos.extend(eyes);
            g = o(Op::Einsum, &pos)?;
        }
        // A label of size 1 in this operand and n in another broadcasts (as
        // in NumPy): the gradient then has n there and is summed back; with
        // the sizes the other way round it has 1 and is broadcast out.
        let gs = shape(&g);
        let mut g = g;
        if gs.len() == target.len() && gs != target {
            let summed: Vec<usize> = (0..gs.len()).filter(|&a| target[a] == 1 && gs[a] != 1).collect();
            if !summed.is_empty() {
                g = o(Op::Sum, &[g, ints(&summed), Value::Bool(true)])?;
            }
            if shape(&g) != target {
                g = o(Op::BroadcastTo, &[g, ints(&target)])?;
            }
        }
        c.push((s, g));
    }
    Ok(())
}

fn pair(v: Option<Value>, default: usize) -> Res<(usize, usize)> {
    let get = |x: &Value| match x {
        Value::Int(i) if *i >= 0 => Ok(*i as usize),
        _ => Err("`conv2d`: stride and padding must be non-negative Ints".to_string()),
    };
    match v {
        None => Ok((default, default)),
        Some(Value::Int(i)) => {
            let i = get(&Value::Int(i))?;
            Ok((i, i))
        }
        Some(Value::Arr(items)) if items.len() == 2 => Ok((get(&items[0])?, get(&items[1])?)),
        Some(Value::Arr(items)) if items.len() == 1 => {
            let i = get(&items[0])?;
            Ok((i, i))
        }
        // A list literal `[2, 1]` is an f64 tensor (spec §4).
        Some(t) if is_tensor(&t) => {
            let v = base(&t)
                .map(|t| t.to_f64_vec())
                .transpose()
                .map_err(|e| e.to_string())?
                .unwrap_or_default();
            let items: Vec<Value> = v.iter().map(|&x| Value::Int(x as i64)).collect();
            pair(Some(Value::Arr(Rc::new(items))), default)
        }
        Some(_) => Err("`conv2d`: stride and padding must be an Int or two".into()),
    }
}

fn arange_idx(n: usize, f: impl Fn(usize) -> usize) -> Res<Value> {
    let v: Vec<f64> = (0..n).map(|i| f(i) as f64).collect();
    twill_tensor::Tensor::from_vec(v, vec![n])
        .map(tensor_value)
        .map_err(|e| e.0)
}

/// conv2d through its patches: P[n,c,i,k,j,l] = xp[n, c, i·sh + k, j·sw + l]
/// (two `index_select`s of the padded input), so that the output is
/// einsum("ncikjl,ockl->noij", P, w). Then dw = einsum of ct with P, and
/// dx is dP put back with `index_add` and the padding cut off.
#[allow(clippy::too_many_arguments)]
fn conv2d_rule(
    x: &Value,
    w: &Value,
    args: &[Option<Value>],
    ct: &Value,
    gdt: DType,
    need: &dyn Fn(Slot) -> bool,
    c: &mut Contribs,
) -> Res<()> {
    let (sh, sw) = pair(args.get(2).cloned().flatten(), 1)?;
    let (ph, pw) = pair(args.get(3).cloned().flatten(), 0)?;
    let xs0 = shape(x);
    let one_image = xs0.len() == 3;
    let (wx, ww) = (wide(x, gdt)?, wide(w, gdt)?);
    let wx = if one_image {
        o(Op::Unsqueeze, &[wx, int(0)])?
    } else {
        wx
    };
    let ct4 = if one_image {
        o(Op::Unsqueeze, &[ct.clone(), int(0)])?
    } else {
        ct.clone()
    };
    let xs = shape(&wx);
    let ks = shape(&ww);
    let cs = shape(&ct4);
    let (n, ch, h, wd) = (xs[0], xs[1], xs[2], xs[3]);
    let (kh, kw) = (ks[2], ks[3]);
    let (oh, ow) = (cs[2], cs[3]);
    let (hp, wp) = (h + 2 * ph, wd + 2 * pw);
    let pad = |v: Value| -> Res<Value> {
        let mut v = v;
        if ph > 0 {
            let z = twill_tensor::Tensor::zeros(vec![n, ch, ph, wd], gdt)
                .map(tensor_value)
                .map_err(|e| e.0)?;
            v = o(Op::Concat, &[Value::Arr(Rc::new(vec![z.clone(), v, z])), int(2)])?;
        }
        if pw > 0 {
            let z = twill_tensor::Tensor::zeros(vec![n, ch, hp, pw], gdt)
                .map(tensor_value)
                .map_err(|e| e.0)?;
            v = o(Op::Concat, &[Value::Arr(Rc::new(vec![z.clone(), v, z])), int(3)])?;
        }
        Ok(v)
    };
    let ih = arange_idx(oh * kh, |q| (q / kh) * sh + q % kh)?;
    let iw = arange_idx(ow * kw, |q| (q / kw) * sw + q % kw)?;
    if need(slot(1)) {
        let xp = pad(wx.clone())?;
        let p = o(
            Op::IndexSelect,
            &[o(Op::IndexSelect, &[xp, int(2), ih.clone()])?, int(3), iw.clone()],
        )?;
        let p = o(Op::Reshape, &[p, ints(&[n, ch, oh, kh, ow, kw])])?;
        let g = o(Op::Einsum, &[Value::str("noij,ncikjl->ockl"), ct4.clone(), p])?;
        c.push((slot(1), g));
    }
    if need(slot(0)) {
        let dp = o(Op::Einsum, &[Value::str("noij,ockl->ncikjl"), ct4, ww])?;
        let dp = o(Op::Reshape, &[dp, ints(&[n, ch, oh * kh, ow * kw])])?;
        let dxp = index_add(&index_add(&dp, 3, &iw, wp)?, 2, &ih, hp)?;
        let all = IndexItem::Slice(None, None, None);
        let dx = index(
            &dxp,
            &[
                all.clone(),
                all,
                IndexItem::Slice(Some(ph as i64), Some((ph + h) as i64), None),
                IndexItem::Slice(Some(pw as i64), Some((pw + wd) as i64), None),
            ],
        )?;
        let dx = if one_image {
            o(Op::Reshape, &[dx, ints(&xs0)])?
        } else {
            dx
        };
        c.push((slot(0), dx));
    }
    Ok(())
}

/// How the backward pass treats each registry operation; an exhaustive
/// match, so a new `Op` does not compile until it is classified here (and
/// given an arm in `table_rule`). The test below checks that it agrees
/// with the registry's `grad` column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RuleKind {
    /// `table_rule` has its vjp.
    Vjp,
    /// Recorded as the operations it is built from (`sort`, `topk`, `split`,
    /// `quantile`).
    Composite,
    /// Not recorded: zero derivative, or an integer or bool result.
    NotDifferentiable,
}

pub(crate) fn rule_kind(op: Op) -> RuleKind {
    match op {
        Op::Maximum
        | Op::Minimum
        | Op::Where
        | Op::Neg
        | Op::Abs
        | Op::Relu
        | Op::Square
        | Op::Clip
        | Op::Exp
        | Op::Log
        | Op::Log1p
        | Op::Expm1
        | Op::Sqrt
        | Op::Rsqrt
        | Op::Sin
        | Op::Cos
        | Op::Tan
        | Op::Tanh
        | Op::Sigmoid
        | Op::Reciprocal
        | Op::Exp2
        | Op::Log2
        | Op::Log10
        | Op::Cbrt
        | Op::Sinh
        | Op::Cosh
        | Op::Asin
        | Op::Acos
        | Op::Atan
        | Op::Asinh
        | Op::Acosh
        | Op::Atanh
        | Op::Erf
        | Op::Erfc
        | Op::Lgamma
        | Op::Digamma
        | Op::Polygamma
        | Op::Fmod
        | Op::Copysign
        | Op::Atan2
        | Op::Hypot
        | Op::Logaddexp
        | Op::Nansum
        | Op::Nanmean
        | Op::Nanmax
        | Op::Nanmin
        | Op::Norm
        | Op::Flatten
        | Op::Diff
        | Op::Tril
        | Op::Triu
        | Op::Diag
        | Op::Trace
        | Op::Outer
        | Op::Dot
        | Op::Sum
        | Op::Mean
        | Op::Prod
        | Op::Max
        | Op::Min
        | Op::Median
        | Op::Var
        | Op::Std
        | Op::Logsumexp
        | Op::Cumsum
        | Op::Cumprod
        | Op::Softmax
        | Op::LogSoftmax
        | Op::Reshape
        | Op::Transpose
        | Op::Permute
        | Op::Flip
        | Op::Roll
        | Op::Squeeze
        | Op::Unsqueeze
        | Op::BroadcastTo
        | Op::Concat
        | Op::Stack
        | Op::Gather
        | Op::IndexSelect
        | Op::Matmul
        | Op::Linear
        | Op::Einsum
        | Op::Conv2d
        | Op::Solve
        | Op::Inv
        | Op::Det
        | Op::Slogdet
        | Op::Cholesky
        | Op::Qr
        | Op::Eigh
        | Op::Svd
        | Op::Lstsq
        | Op::Pinv => RuleKind::Vjp,
        Op::Sort | Op::Topk | Op::Split | Op::Quantile => RuleKind::Composite,
        Op::Sign
        | Op::Floor
        | Op::Ceil
        | Op::Round
        | Op::IsNan
        | Op::IsInf
        | Op::IsFinite
        | Op::Argmax
        | Op::Argmin
        | Op::All
        | Op::Any
        | Op::Argsort
        | Op::Argtopk
        | Op::RoundTo
        | Op::Trunc
        | Op::Signbit
        | Op::Nextafter
        | Op::LogicalAnd
        | Op::LogicalOr
        | Op::LogicalXor
        | Op::LogicalNot
        | Op::CountNonzero
        | Op::Isclose
        | Op::Allclose
        | Op::MatrixRank
        | Op::Unique
        | Op::UniqueCounts
        | Op::Searchsorted
        | Op::Bincount
        | Op::Nonzero
        | Op::Bits
        | Op::FromBits => RuleKind::NotDifferentiable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use twill_tensor::ops::Grad;

    #[test]
    fn every_op_has_a_vjp_or_is_marked_non_differentiable() {
        for op in Op::ALL {
            let marked = op.spec().grad == Grad::None;
            assert_eq!(
                rule_kind(*op) == RuleKind::NotDifferentiable,
                marked,
                "`{op}`: the registry's grad column and the vjp rules disagree"
            );
        }
    }
}
