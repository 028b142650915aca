//! Recording: every differentiable operation on tracked values runs on
//! their primals (one level down, so outer tapes record it too) and adds
//! one node at the highest level among its operands. The vjp rules and the
//! functional transforms are written with these same functions, which is
//! what makes nested differentiation exact.

// The `other =>` arms over `Value` in this module are type errors ("needs a
// tensor, not a Str"): a new kind of value is rejected by them until it is
// taught otherwise, which is the behaviour wanted. Matches over the
// registries' enums (Op, Builtin, HostMethod, TensorField, BinOp, DType)
// have no wildcard here, except where an allow in place says why.
#![allow(clippy::wildcard_enum_match_arm)]

use std::rc::Rc;

use twill_syntax::ast::BinOp;
use twill_tensor::index::IndexItem;
use twill_tensor::DType;

use twill_tensor::ops::{Grad, Op};

use crate::bridge::{plain_binary, plain_cast, plain_op, tensor_value, OpError};
use crate::error::{ErrorKind, Failure};
use crate::value::{base, next_id, AdOp, Kind, Node, Slot, TapeVal, Tracked, Value, NEXT_NODE};

/// The highest tape level among the tracked values in `v`.
fn level(v: &Value) -> Option<u64> {
    match v {
        Value::Tracked(t) => Some(t.node.level),
        Value::Arr(items) => items.iter().filter_map(level).max(),
        _ => None,
    }
}

fn max_level<'a>(vs: impl IntoIterator<Item = &'a Value>) -> Option<u64> {
    vs.into_iter().filter_map(level).max()
}

/// `v` with its level-`lv` tracking removed; a float-valued level-`lv`
/// tensor becomes a parent of the node being recorded, in `slot`.
fn strip(v: &Value, lv: u64, arg: usize, parents: &mut Vec<(Slot, Rc<Node>)>) -> Value {
    match v {
        Value::Tracked(t) if t.node.level == lv => {
            if t.node.dtype.is_float() {
                parents.push((Slot { arg, elem: 0 }, t.node.clone()));
            }
            t.primal.clone()
        }
        Value::Arr(items) if items.iter().any(|x| level(x) == Some(lv)) => {
            let mut out = Vec::with_capacity(items.len());
            for (elem, x) in items.iter().enumerate() {
                match x {
                    Value::Tracked(t) if t.node.level == lv => {
                        if t.node.dtype.is_float() {
                            parents.push((Slot { arg, elem }, t.node.clone()));
                        }
                        out.push(t.primal.clone());
                    }
                    other => out.push(other.clone()),
                }
            }
            Value::Arr(Rc::new(out))
        }
        other => other.clone(),
    }
}

/// Records a node of level `lv` whose primal output is `out`, if it has a
/// parent and a float output; otherwise `out` is the result as it is.
fn record(lv: u64, op: AdOp, args: Vec<Option<Value>>, parents: Vec<(Slot, Rc<Node>)>, out: Value) -> Value {
    let Some(t) = base(&out) else { return out };
    if parents.is_empty() || !t.dtype().is_float() {
        return out;
    }
    let node = Node {
        id: next_id(&NEXT_NODE),
        level: lv,
        dtype: t.dtype(),
        shape: t.shape().to_vec(),
        kind: Kind::Op {
            op,
            args,
            out: out.clone(),
        },
        parents,
    };
    Value::Tracked(Rc::new(Tracked {
        node: Rc::new(node),
        primal: out,
    }))
}

/// Runs registry operation `op` on arguments bound to its slots,
/// recording it if an operand is tracked. Operations the registry marks
/// non-differentiable run on the primals and are not recorded.
pub(crate) fn op(op: Op, slots: &[Option<Value>]) -> Result<Value, OpError> {
    let n = op.spec().params.len();
    let padded: Vec<Option<Value>>;
    let slots = if slots.len() < n {
        padded = slots
            .iter()
            .cloned()
            .chain(std::iter::repeat(None))
            .take(n)
            .collect();
        &padded[..]
    } else {
        slots
    };
    let Some(lv) = max_level(slots.iter().flatten()) else {
        return plain_op(op, slots);
    };
    match op.spec().grad {
        Grad::None => return plain_op(op, &strip_slots(slots)),
        Grad::Rule => {}
    }
    // Recorded through what they are made of; every other operation is
    // recorded as itself below.
    if op == Op::Split {
        return split(slots).map_err(OpError::from);
    }
    if matches!(op, Op::Sort | Op::Topk) {
        return select_sorted(op, slots).map_err(OpError::from);
    }
    if op == Op::Quantile {
        return quantile(slots).map_err(OpError::from);
    }
    let mut parents = Vec::new();
    let stripped: Vec<Option<Value>> = slots
        .iter()
        .enumerate()
        .map(|(i, a)| a.as_ref().map(|v| strip(v, lv, i, &mut parents)))
        .collect();
    let out = self::op(op, &stripped)?;
    if let Value::Tuple(results) = &out {
        // Several results (`qr`, `eigh`, `svd`, `slogdet`): one node each.
        let parts = Rc::new(results.to_vec());
        let recorded = results
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let node = AdOp::Part(op, i, parts.clone());
                record(lv, node, stripped.clone(), parents.clone(), r.clone())
            })
            .collect();
        return Ok(Value::Tuple(Rc::new(recorded)));
    }
    Ok(record(lv, AdOp::Table(op), stripped, parents, out))
}

/// `op` on positional arguments (the vjp rules' and the functional
/// transforms' shorthand).
pub(crate) fn op_pos(o: Op, pos: &[Value]) -> Result<Value, String> {
    let slots: Vec<Option<Value>> = pos.iter().cloned().map(Some).collect();
    op(o, &slots).map_err(|e| e.message)
}

/// `v` with every level of tracking removed.
fn strip_all(v: &Value) -> Value {
    match v {
        Value::Tracked(_) => base(v).map_or(Value::Unit, |t| Value::Tensor(Rc::new(t.clone()))),
        Value::Arr(items) if items.iter().any(|x| matches!(x, Value::Tracked(_))) => {
            Value::Arr(Rc::new(items.iter().map(strip_all).collect()))
        }
        other => other.clone(),
    }
}

fn strip_slots(vs: &[Option<Value>]) -> Vec<Option<Value>> {
    vs.iter().map(|v| v.as_ref().map(strip_all)).collect()
}

fn int_value(v: &Option<Value>) -> Option<i64> {
    match v {
        Some(Value::Int(i)) => Some(*i),
        _ => None,
    }
}

/// `split` of a tracked tensor, as slices along the axis (the same values,
/// each piece recorded as an index).
fn split(args: &[Option<Value>]) -> Result<Value, String> {
    let x = args[0].clone().unwrap_or(Value::Unit);
    let axis = args.get(2).cloned().flatten();
    // Let the kernel validate everything and tell the sizes.
    let pieces = plain_op(Op::Split, &strip_slots(args)).map_err(|e| e.message)?;
    let Value::Arr(pieces) = pieces else {
        return Err("`split` gave no pieces".into());
    };
    let t = base(&x).ok_or("`split` needs a tensor")?;
    let ax = match axis {
        Some(a) => int_value(&Some(a)).ok_or("`split`: axis must be an Int")?,
        None => 0,
    };
    let ax = twill_tensor::tensor::normalize_axis(ax, t.ndim()).map_err(|e| e.0)?;
    let mut out = Vec::with_capacity(pieces.len());
    let mut start = 0i64;
    for p in pieces.iter() {
        let len = base(p).map_or(0, |t| t.shape()[ax]) as i64;
        let mut items = vec![IndexItem::Slice(None, None, None); ax];
        items.push(IndexItem::Slice(Some(start), Some(start + len), None));
        out.push(index(&x, &items)?);
        start += len;
    }
    Ok(Value::Arr(Rc::new(out)))
}

/// `sort`/`topk` of a tracked tensor: the order is found on the plain
/// values, and the result is a `gather` of the tracked ones (the same bits).
fn select_sorted(which: Op, args: &[Option<Value>]) -> Result<Value, String> {
    let x = args.first().cloned().flatten().unwrap_or(Value::Unit);
    let arg_op = if which == Op::Sort {
        Op::Argsort
    } else {
        Op::Argtopk
    };
    let idx = plain_op(arg_op, &strip_slots(args)).map_err(|e| e.message)?;
    let t = base(&x).ok_or("needs a tensor")?;
    let axis_arg = if which == Op::Sort {
        args.get(1)
    } else {
        args.get(2)
    };
    let ax = match axis_arg.cloned().flatten() {
        Some(Value::Int(a)) => a,
        _ => -1,
    };
    let ax = twill_tensor::tensor::normalize_axis(ax, t.ndim().max(1)).map_err(|e| e.0)?;
    if t.ndim() == 0 {
        return Ok(x);
    }
    op_pos(Op::Gather, &[x, Value::Int(ax as i64), idx])
}

pub(crate) fn norm_axis(a: i64, ndim: usize) -> Result<usize, String> {
    twill_tensor::tensor::normalize_axis(a, ndim).map_err(|e| e.0)
}

/// The axes a reduction reduced (all when `axis` is absent).
pub(crate) fn reduced_axes(axis: &Option<Value>, ndim: usize) -> Result<Vec<usize>, String> {
    let mut axes = match axis {
        None => (0..ndim).collect(),
        Some(v) => axis_list(v, ndim)?,
    };
    axes.sort_unstable();
    axes.dedup();
    if ndim == 0 {
        axes.clear();
    }
    Ok(axes)
}

/// An axis argument (an Int, an `Arr[Int]` or an integral tensor) as
/// normalised axes, in the order given.
pub(crate) fn axis_list(v: &Value, ndim: usize) -> Result<Vec<usize>, String> {
    match v {
        Value::Int(a) => Ok(vec![norm_axis(*a, ndim.max(1))?]),
        Value::Arr(items) => items
            .iter()
            .map(|it| match it {
                Value::Int(a) => norm_axis(*a, ndim.max(1)),
                _ => Err("an axis must be an Int".into()),
            })
            .collect(),
        t if base(t).is_some() => base(t)
            .map(|t| t.to_f64_vec())
            .transpose()
            .map_err(|e| e.to_string())?
            .unwrap_or_default()
            .into_iter()
            .map(|a| norm_axis(a as i64, ndim.max(1)))
            .collect(),
        other => Err(format!("an axis cannot be a `{}`", other.type_name())),
    }
}

/// `quantile` of a tracked tensor: the neighbours are found on the plain
/// values (NumPy's picks, `reduce::quantile_pick`), gathered from the
/// tracked ones and interpolated in f64 by NumPy's `_lerp` as recorded
/// operations, then rounded once to the result dtype — the kernel's
/// arithmetic step for step, so the bits are the kernel's.
fn quantile(args: &[Option<Value>]) -> Result<Value, String> {
    use twill_tensor::ops::reduce::quantile_pick;
    use twill_tensor::Tensor;
    let plain = strip_slots(args);
    // The kernel validates everything and gives the result's dtype and shape.
    let want = plain_op(Op::Quantile, &plain).map_err(|e| e.message)?;
    let want = base(&want).cloned().ok_or("`quantile` gave no tensor")?;
    let x = args.first().cloned().flatten().unwrap_or(Value::Unit);
    let t = base(&x).cloned().ok_or("`quantile` needs a tensor")?;
    // The kernel has checked q; its values, one or a rank-1 tensor's.
    let qs: Vec<f64> = match plain.get(1).cloned().flatten() {
        Some(Value::Int(i)) => vec![i as f64],
        Some(Value::F64(f)) => vec![f],
        Some(v) => base(&v)
            .ok_or("`quantile`: q must be an F64 or a tensor")?
            .to_f64_vec()
            .map_err(|e| e.0)?,
        None => return Err("`quantile` needs its `q` argument".into()),
    };
    let nd = t.ndim();
    let axes = reduced_axes(&args.get(2).cloned().flatten(), nd)?;
    let kept: Vec<usize> = (0..nd).filter(|a| !axes.contains(a)).collect();
    let m: usize = kept.iter().map(|&a| t.shape()[a]).product();
    let n: usize = axes.iter().map(|&a| t.shape()[a]).product();
    if n == 0 || m == 0 || qs.is_empty() {
        // Nothing is picked: the result depends on no element.
        return Ok(tensor_value(want));
    }
    let ints = |v: &[usize]| Value::Arr(Rc::new(v.iter().map(|&i| Value::Int(i as i64)).collect()));
    let perm: Vec<usize> = kept.iter().chain(&axes).copied().collect();
    let xm = op_pos(Op::Permute, &[x.clone(), ints(&perm)])?;
    let xm = op_pos(Op::Reshape, &[xm, ints(&[m, n])])?;
    let xp = base(&xm).cloned().ok_or("`quantile` lost its tensor")?;
    let order = plain_op(
        Op::Argsort,
        &[Some(tensor_value(xp.clone())), Some(Value::Int(1)), None],
    )
    .map_err(|e| e.message)?;
    let order = base(&order)
        .ok_or("`argsort` gave no tensor")?
        .to_f64_vec()
        .map_err(|e| e.0)?;
    let vals = xp.to_f64_vec().map_err(|e| e.0)?;
    let nq = qs.len();
    let (mut lo, mut hi) = (Vec::with_capacity(m * nq), Vec::with_capacity(m * nq));
    let picks: Vec<(usize, usize, f64)> = qs.iter().map(|&q| quantile_pick(n, q)).collect();
    for r in 0..m {
        let row = &order[r * n..(r + 1) * n];
        let at = |k: usize| row.get(k).copied().unwrap_or(0.0) as i32;
        // A row holding a NaN (sorted last) gives NaN: both neighbours are it.
        let nan = vals.get(r * n + at(n - 1) as usize).is_some_and(|v| v.is_nan());
        for &(i, j, _) in &picks {
            lo.push(if nan { at(n - 1) } else { at(i) });
            hi.push(if nan { at(n - 1) } else { at(j) });
        }
    }
    let idx = |v: Vec<i32>| {
        Tensor::from_vec(v, vec![m, nq])
            .map(tensor_value)
            .map_err(|e| e.0)
    };
    let wide = |v: Value| cast(&v, DType::F64);
    let a = wide(op_pos(Op::Gather, &[xm.clone(), Value::Int(1), idx(lo)?])?)?;
    let b = wide(op_pos(Op::Gather, &[xm, Value::Int(1), idx(hi)?])?)?;
    let f64s = |v: Vec<f64>| Tensor::from_vec(v, vec![nq]).map(tensor_value).map_err(|e| e.0);
    let g = f64s(picks.iter().map(|p| p.2).collect())?;
    let rest = f64s(picks.iter().map(|p| 1.0 - p.2).collect())?;
    let upper = Tensor::from_vec(picks.iter().map(|p| p.2 >= 0.5).collect::<Vec<bool>>(), vec![nq])
        .map(tensor_value)
        .map_err(|e| e.0)?;
    // NumPy's `_lerp`: a + (b − a)·g, or b − (b − a)·(1 − g) from g = 0.5 on.
    let d = binary(BinOp::Sub, &b, &a)?;
    let from_a = binary(BinOp::Add, &a, &binary(BinOp::Mul, &d, &g)?)?;
    let from_b = binary(BinOp::Sub, &b, &binary(BinOp::Mul, &d, &rest)?)?;
    let r = op_pos(Op::Where, &[upper, from_b, from_a])?;
    let r = cast(&r, want.dtype())?;
    let r = op_pos(Op::Permute, &[r, ints(&[1, 0])])?;
    op_pos(Op::Reshape, &[r, ints(want.shape())])
}

/// `a op b` on any values: with a tensor operand through [`binary`]
/// (recorded when tracked), on host values through `ops::binary`.
pub(crate) fn binary_values(bop: BinOp, a: &Value, b: &Value) -> Result<Value, Failure> {
    if a.is_tensor() || b.is_tensor() {
        binary(bop, a, b).map_err(|m| Failure::new(ErrorKind::Tensor, m))
    } else {
        crate::ops::binary(bop, a, b)
    }
}

/// `a op b` with a tensor on at least one side, recorded if one is tracked.
pub(crate) fn binary(bop: BinOp, a: &Value, b: &Value) -> Result<Value, String> {
    let Some(lv) = max_level([a, b]) else {
        return plain_binary(bop, a, b);
    };
    if bop == BinOp::MatMul {
        return op_pos(Op::Matmul, &[a.clone(), b.clone()]);
    }
    let differentiable = matches!(
        bop,
        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod | BinOp::Pow
    );
    if !differentiable {
        return binary(bop, &strip_all(a), &strip_all(b));
    }
    let mut parents = Vec::new();
    let a = strip(a, lv, 0, &mut parents);
    let b = strip(b, lv, 1, &mut parents);
    let out = binary(bop, &a, &b)?;
    Ok(record(lv, AdOp::Bin(bop), vec![Some(a), Some(b)], parents, out))
}

/// A one-tensor operation on `x`, tracked at level `lv`: `again` runs it
/// on x's primal (recording on outer tapes through the same entry point),
/// and the result is recorded as `op` with arguments `[x's primal, extra…]`.
fn through(
    x: &Value,
    lv: u64,
    op: AdOp,
    extra: &[&Value],
    again: impl FnOnce(&Value) -> Result<Value, String>,
) -> Result<Value, String> {
    let mut parents = Vec::new();
    let p = strip(x, lv, 0, &mut parents);
    let out = again(&p)?;
    let mut args = vec![Some(p)];
    args.extend(extra.iter().map(|v| Some((*v).clone())));
    Ok(record(lv, op, args, parents, out))
}

/// `x.to(dt)`, recorded between float dtypes.
pub(crate) fn cast(x: &Value, dt: DType) -> Result<Value, String> {
    match level(x) {
        None => plain_cast(x, dt),
        Some(lv) => through(x, lv, AdOp::Cast, &[], |p| cast(p, dt)),
    }
}

/// `x[items]`, recorded.
pub(crate) fn index(x: &Value, items: &[IndexItem]) -> Result<Value, String> {
    match level(x) {
        None => {
            let t = base(x).ok_or("only a tensor can be indexed here")?;
            let out = match crate::backend::active() {
                Some(b) => (b.index)(t, items),
                None => t.index(items),
            };
            out.map(tensor_value).map_err(|e| e.0)
        }
        Some(lv) => through(x, lv, AdOp::Index(items.to_vec()), &[], |p| index(p, items)),
    }
}

/// The tensor of `x`, tracked or not, as a plain value to write into.
fn plain_tensor(x: &Value, what: &str) -> Result<twill_tensor::Tensor, String> {
    base(x)
        .cloned()
        .ok_or_else(|| format!("{what} needs a tensor, not a `{}`", x.type_name()))
}

/// An assigned value as the tensor kernels' operand (a host number weak).
fn operand(v: &Value) -> Result<twill_tensor::ops::Operand<'_>, String> {
    use twill_tensor::ops::Operand;
    match v {
        Value::Int(i) => Ok(Operand::Int(*i)),
        Value::F64(x) => Ok(Operand::Float(*x)),
        Value::Bool(b) => Ok(Operand::Bool(*b)),
        other => match base(other) {
            Some(t) => Ok(Operand::Tensor(t)),
            None => Err(format!("cannot assign a `{}` into a tensor", other.type_name())),
        },
    }
}

/// `x[items] = v` or `x[items] op= v` (spec §11.2) as a new value,
/// recorded when `x` or `v` is tracked: a compound assignment is the read,
/// the operation and the write, except that `+=` and `-=` with a repeated
/// element accumulate (recorded as [`AdOp::Accumulate`]).
pub(crate) fn assign(x: &Value, items: &[IndexItem], v: &Value, op: Option<BinOp>) -> Result<Value, String> {
    let Some(lv) = max_level([x, v]) else {
        let mut t = plain_tensor(x, "assignment into a subscript")?;
        let bop = op.map(crate::bridge::binary_op).transpose()?;
        match crate::backend::active() {
            Some(b) => (b.assign)(&mut t, items, operand(v)?, bop),
            None => twill_tensor::ops::assign::assign(&mut t, items, operand(v)?, bop),
        }
        .map_err(|e| e.0)?;
        return Ok(tensor_value(t));
    };
    let t = plain_tensor(x, "assignment into a subscript")?;
    let dt = t.dtype();
    let repeats = twill_tensor::index::last_writes(t.shape(), items).map_err(|e| e.0)?;
    let Some(op) = op else {
        twill_tensor::ops::assign::check_value(&operand(v)?, dt).map_err(|e| e.0)?;
        return set(x, items, v, lv, repeats);
    };
    let bop = crate::bridge::binary_op(op)?;
    match op {
        BinOp::Add | BinOp::Sub if repeats.is_some() => {
            twill_tensor::ops::assign::check_value(&operand(v)?, dt).map_err(|e| e.0)?;
            // The value in x's dtype first, as the plain path converts it.
            let v = match v {
                Value::Int(_) | Value::F64(_) | Value::Bool(_) => {
                    let s = twill_tensor::Tensor::zeros(Vec::new(), dt).map_err(|e| e.0)?;
                    binary(BinOp::Add, &tensor_value(s), v)?
                }
                other => other.clone(),
            };
            let v = if op == BinOp::Sub {
                op_pos(Op::Neg, &[v])?
            } else {
                v
            };
            accumulate(x, items, &v)
        }
        _ => {
            let cur = index(x, items)?;
            let new = binary(op, &cur, v)?;
            let got = base(&new).map_or(dt, |n| n.dtype());
            twill_tensor::ops::assign::check_compound(bop, got, dt).map_err(|e| e.0)?;
            twill_tensor::ops::assign::check_repeat(bop, t.shape(), items).map_err(|e| e.0)?;
            set(x, items, &new, lv, None)
        }
    }
}

/// `x[items] = v`, recorded at level `lv`.
fn set(x: &Value, items: &[IndexItem], v: &Value, lv: u64, last: Option<Vec<bool>>) -> Result<Value, String> {
    let mut parents = Vec::new();
    let px = strip(x, lv, 0, &mut parents);
    let pv = strip(v, lv, 1, &mut parents);
    let out = assign(&px, items, &pv, None)?;
    let op = AdOp::Assign(items.to_vec(), last.map(Rc::new));
    Ok(record(lv, op, vec![Some(px), Some(pv)], parents, out))
}

/// `x[items] += v` with every occurrence of a repeated element added, in
/// index order (the adjoint of indexing), recorded.
pub(crate) fn accumulate(x: &Value, items: &[IndexItem], v: &Value) -> Result<Value, String> {
    match max_level([x, v]) {
        None => {
            let mut t = plain_tensor(x, "accumulation into a subscript")?;
            let w = plain_tensor(v, "accumulation into a subscript")?;
            let w = w.cast(t.dtype()).map_err(|e| e.0)?;
            twill_tensor::ops::assign::accumulate(&mut t, items, &w).map_err(|e| e.0)?;
            Ok(tensor_value(t))
        }
        Some(lv) => {
            let mut parents = Vec::new();
            let px = strip(x, lv, 0, &mut parents);
            let pv = strip(v, lv, 1, &mut parents);
            let out = accumulate(&px, items, &pv)?;
            Ok(record(
                lv,
                AdOp::Accumulate(items.to_vec()),
                vec![Some(px), Some(pv)],
                parents,
                out,
            ))
        }
    }
}

/// `x.T`, recorded.
pub(crate) fn reverse(x: &Value) -> Result<Value, String> {
    match level(x) {
        None => {
            let t = base(x).ok_or("`.T` needs a tensor")?;
            Ok(tensor_value(t.reversed_axes()))
        }
        Some(lv) => through(x, lv, AdOp::Reverse, &[], reverse),
    }
}

/// The adjoint of `index_select`, recorded (its own vjp is `index_select`).
pub(crate) fn index_add(src: &Value, axis: usize, idx: &Value, size: usize) -> Result<Value, String> {
    match level(src) {
        None => {
            let (s, i) = (
                base(src).ok_or("index_add: src")?,
                base(idx).ok_or("index_add: idx")?,
            );
            twill_tensor::ops::adjoint::index_add(s, axis, i, size)
                .map(tensor_value)
                .map_err(|e| e.0)
        }
        Some(lv) => through(src, lv, AdOp::IndexAdd(axis), &[idx], |p| {
            index_add(p, axis, idx, size)
        }),
    }
}

/// The adjoint of `gather`, recorded (its own vjp is `gather`).
pub(crate) fn scatter_add(src: &Value, axis: usize, idx: &Value, shape: &[usize]) -> Result<Value, String> {
    match level(src) {
        None => {
            let (s, i) = (
                base(src).ok_or("scatter_add: src")?,
                base(idx).ok_or("scatter_add: idx")?,
            );
            twill_tensor::ops::adjoint::scatter_add(s, axis, i, shape)
                .map(tensor_value)
                .map_err(|e| e.0)
        }
        Some(lv) => through(src, lv, AdOp::ScatterAdd(axis), &[idx], |p| {
            scatter_add(p, axis, idx, shape)
        }),
    }
}

/// `tp.watch(t)`: a leaf of the tape's level around `t`.
pub(crate) fn watch(tape: &TapeVal, v: &Value) -> Result<Value, String> {
    let t = base(v).ok_or_else(|| format!("only a tensor can be watched, not `{}`", v.type_name()))?;
    if let Some(l) = level(v) {
        if l >= tape.level {
            return Err(if l == tape.level {
                "this tensor is already watched by this tape".to_string()
            } else {
                "this tensor is already watched by a tape made after this one; \
                 watch it on the outer (earlier) tape first"
                    .to_string()
            });
        }
    }
    let node = Rc::new(Node {
        id: next_id(&NEXT_NODE),
        level: tape.level,
        kind: Kind::Leaf,
        parents: Vec::new(),
        dtype: t.dtype(),
        shape: t.shape().to_vec(),
    });
    tape.leaves.borrow_mut().push(node.clone());
    Ok(Value::Tracked(Rc::new(Tracked {
        node,
        primal: v.clone(),
    })))
}
