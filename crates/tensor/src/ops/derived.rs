//! The operations of spec §11.3 that are made of other kernels: `flatten
//! diff tril triu diag trace outer dot isclose allclose`, the nan-reductions
//! `nansum nanmean nanmax nanmin`, `count_nonzero` and `norm`; and the bit
//! views `bits`/`from_bits`, which reinterpret storage.
//!
//! Each is written as calls to the other groups' kernels (called
//! directly: this module sits below the registry, which lists it) or the
//! contraction engine, so it inherits their numeric
//! contract: `dot`, `outer` and `norm`'s sum of squares are contractions
//! (spec §5.4: ascending order, exact products, one rounding per step in
//! the accumulation dtype), `trace`, `nansum`, `nanmean` and `norm(ord=1)`
//! are `sum`'s blocked tree, `nanmax`/`nanmin` are `max`/`min`'s search
//! with the NaNs passed over, and `isclose` is NumPy's formula evaluated in
//! the promoted dtype with the tolerances as weak scalars.

use super::args::{opt, req, Arg, Args, BinaryOp, Kernel, Operand, Out, Param};
use super::elementwise::{binary, unary, Unary};
use super::shape::axis_of;
use crate::convert::Scalar;
use crate::dtype::DType;
use crate::index::IndexItem;
use crate::promote::{accumulation_dtype, float_result, promote};
use crate::storage::Element;
use crate::tensor::{shape_str, Tensor, TensorError};

fn fail<T>(msg: String) -> Result<T, TensorError> {
    Err(TensorError(msg))
}

/// The parameters of the kernels called here (the slots are positional).
const WHERE: &[Param] = &[req("cond"), req("a"), req("b")];
const RESHAPE: &[Param] = &[req("x"), req("shape")];
const REDUCE: &[Param] = &[req("x"), opt("axis"), opt("keepdim")];

/// Runs another group's kernel on positional slots for the operation
/// `op` (whose name its messages then carry), for one tensor. The kernels
/// are called directly, not through the registry, which lists these.
fn run(
    k: Kernel,
    op: &'static str,
    params: &'static [Param],
    slots: Vec<Option<Arg>>,
) -> Result<Tensor, TensorError> {
    match k(&Args::new(op, params, slots, Vec::new()))? {
        Out::Tensor(t) => Ok(t),
        Out::Tensors(_) | Out::Bool(_) | Out::Tuple(_) => {
            fail(format!("internal error: `{op}` gave no tensor"))
        }
    }
}

fn reshape(op: &'static str, x: &Tensor, shape: Vec<i64>) -> Result<Tensor, TensorError> {
    run(
        super::shape::reshape,
        op,
        RESHAPE,
        vec![t(x), Some(Arg::Ints(shape))],
    )
}

fn select(op: &'static str, c: &Tensor, a: &Tensor, b: &Tensor) -> Result<Tensor, TensorError> {
    run(super::elementwise::run_where, op, WHERE, vec![t(c), t(a), t(b)])
}

/// `sum`, `max`, `min` or `all` of the reduction slots `x, axis, keepdim`.
fn reduce(k: Kernel, op: &'static str, slots: Vec<Option<Arg>>) -> Result<Tensor, TensorError> {
    run(k, op, REDUCE, slots)
}

fn logical_not(x: &Tensor) -> Result<Tensor, TensorError> {
    bin(
        BinaryOp::Eq,
        &x.cast(DType::Bool)?,
        &Tensor::scalar(Scalar::Bool(false)),
    )
}

fn t(x: &Tensor) -> Option<Arg> {
    Some(Arg::Tensor(x.clone()))
}

fn bin(op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Tensor, TensorError> {
    binary(op, Operand::Tensor(a), Operand::Tensor(b))
}

/// A rank-0 tensor of `dt` holding `v` (rounded once).
fn scalar(v: f64, dt: DType) -> Result<Tensor, TensorError> {
    Tensor::full(Vec::new(), Scalar::F64(v), dt)
}

/// `x[..., s:e, ...]` along `axis`.
fn slice_axis(x: &Tensor, axis: usize, s: usize, e: usize) -> Result<Tensor, TensorError> {
    let mut items = vec![IndexItem::Slice(None, None, None); axis];
    items.push(IndexItem::Slice(Some(s as i64), Some(e as i64), None));
    x.index(&items)
}

/// An i32 index vector.
fn indices(v: Vec<i32>) -> Result<Tensor, TensorError> {
    let n = v.len();
    Tensor::from_vec(v, vec![n])
}

pub(super) fn flatten(a: &Args) -> Result<Out, TensorError> {
    reshape(a.op, a.tensor("x")?, vec![-1]).map(Out::Tensor)
}

/// `diff(x, n=1, axis=-1)`: the n-th forward difference along `axis`
/// (`x[1:] - x[:-1]`, n times; bool uses `!=`, as NumPy does). An axis
/// shorter than n gives an empty axis.
pub(super) fn diff(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    let n = a.int("n")?.unwrap_or(1);
    if n < 0 {
        return Err(a.blame(
            "n",
            TensorError(format!("`diff`: `n` must not be negative, not {n}")),
        ));
    }
    if x.ndim() == 0 {
        return fail("`diff` needs a tensor of rank 1 or more, not a rank-0 one".into());
    }
    let ax = a.about("axis", axis_of("diff", a.int("axis")?.unwrap_or(-1), x.ndim()))?;
    let op = if x.dtype() == DType::Bool {
        BinaryOp::Ne
    } else {
        BinaryOp::Sub
    };
    let mut y = x.clone();
    for _ in 0..n {
        let len = y.shape()[ax];
        if len == 0 {
            break;
        }
        y = bin(op, &slice_axis(&y, ax, 1, len)?, &slice_axis(&y, ax, 0, len - 1)?)?;
    }
    Ok(Out::Tensor(y))
}

/// The bool mask of the lower (`j - i <= k`) or upper (`j - i >= k`)
/// triangle of an r × c matrix.
pub fn triangle(r: usize, c: usize, k: i64, lower: bool) -> Result<Tensor, TensorError> {
    let n = r
        .checked_mul(c)
        .ok_or_else(|| TensorError(format!("a {r} × {c} triangle is too large")))?;
    let mut v = crate::storage::try_vec::<bool>(n).map_err(|e| e.for_tensor(DType::Bool, &[r, c]))?;
    for i in 0..r {
        for j in 0..c {
            let d = j as i64 - i as i64;
            v.push(if lower { d <= k } else { d >= k });
        }
    }
    Tensor::from_vec(v, vec![r, c])
}

fn tri(a: &Args, lower: bool) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    if x.ndim() < 2 {
        return fail(format!(
            "`{}` needs a matrix (rank 2 or more; the last two axes), not shape {}",
            a.op,
            shape_str(x.shape())
        ));
    }
    let k = a.int("k")?.unwrap_or(0);
    let nd = x.ndim();
    let (r, c) = (x.shape()[nd - 2], x.shape()[nd - 1]);
    let x = x.contiguous()?;
    // Row i keeps the columns j with j − i ≤ k (lower) or j − i ≥ k
    // (upper): those before `cut(i)`, or those from it on.
    let cut = |i: usize| {
        (i as i64)
            .saturating_add(k)
            .saturating_add(i64::from(lower))
            .clamp(0, c as i64) as usize
    };
    let data = crate::dispatch!(x.dtype(), T => {
        let xs = T::slice(x.storage()).unwrap_or(&[]);
        let out: Vec<T> = super::elementwise::build(x.shape(), #[inline(always)] |s, chunk| {
            // The chunk's elements a row at a time (c > 0 where there are any).
            let mut p = s;
            let end = s + chunk.len();
            while p < end {
                let row = p / c;
                let (j0, j1) = (p - row * c, (end - row * c).min(c));
                let t = cut(row % r);
                let dst = chunk.get_mut(p - s..p - s + (j1 - j0)).unwrap_or_default();
                let src = xs.get(p..p + (j1 - j0)).unwrap_or_default();
                for (j, (o, &v)) in (j0..j1).zip(dst.iter_mut().zip(src)) {
                    o.write(if (j < t) == lower { v } else { T::from_f64(0.0) });
                }
                p += j1 - j0;
            }
        })?;
        T::into_storage(out)
    });
    Tensor::from_storage(data, x.shape().to_vec()).map(Out::Tensor)
}

pub(super) fn tril(a: &Args) -> Result<Out, TensorError> {
    tri(a, true)
}

pub(super) fn triu(a: &Args) -> Result<Out, TensorError> {
    tri(a, false)
}

/// The row and column indices of diagonal `k` of an r × c matrix.
pub fn diagonal(r: usize, c: usize, k: i64) -> Result<(Tensor, Tensor), TensorError> {
    let (r0, c0) = if k >= 0 { (0i64, k) } else { (-k, 0i64) };
    let len = (r as i64 - r0).min(c as i64 - c0).max(0);
    let big = |v: i64| i32::try_from(v).map_err(|_| TensorError("`diag`: the matrix is too large".into()));
    let mut rows = Vec::new();
    let mut cols = Vec::new();
    for i in 0..len {
        rows.push(big(r0 + i)?);
        cols.push(big(c0 + i)?);
    }
    Ok((indices(rows)?, indices(cols)?))
}

/// `diag(x, k=0)`: a vector gives the square matrix with it on diagonal
/// `k` (above the main one for k > 0), a matrix gives its diagonal `k`.
pub(super) fn diag(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    let k = a.int("k")?.unwrap_or(0);
    match x.ndim() {
        1 => {
            let m = (x.shape()[0] as u64)
                .checked_add(k.unsigned_abs())
                .and_then(|m| usize::try_from(m).ok())
                .ok_or_else(|| TensorError("`diag`: the matrix is too large".into()))?;
            let mut out = Tensor::zeros(vec![m, m], x.dtype())?;
            let (rows, cols) = diagonal(m, m, k)?;
            out.set_index(&[IndexItem::Tensor(rows), IndexItem::Tensor(cols)], x)?;
            Ok(Out::Tensor(out))
        }
        2 => {
            let (rows, cols) = diagonal(x.shape()[0], x.shape()[1], k)?;
            x.index(&[IndexItem::Tensor(rows), IndexItem::Tensor(cols)])
                .map(Out::Tensor)
        }
        _ => fail(format!(
            "`diag` needs a vector or a matrix, not shape {}",
            shape_str(x.shape())
        )),
    }
}

/// `trace(x)`: the sum of a matrix's main diagonal (`sum`'s rule and order).
pub(super) fn trace(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    if x.ndim() != 2 {
        return fail(format!(
            "`trace` needs a matrix, not shape {}",
            shape_str(x.shape())
        ));
    }
    // The diagonal as a strided view of x's storage (no index tensors, no
    // gather): element i at offset + i·(stride₀ + stride₁).
    let k = x.shape()[0].min(x.shape()[1]);
    let step = x.strides()[0].saturating_add(x.strides()[1]);
    let d = x.with_layout(vec![k], vec![step], x.offset())?;
    reduce(super::reduce::sum, a.op, vec![t(&d)]).map(Out::Tensor)
}

/// `outer(a, b)`: every product `a[i]·b[j]`, rounded once (the inputs
/// flattened, as NumPy's `outer` does).
pub(super) fn outer(a: &Args) -> Result<Out, TensorError> {
    let flat = |name: &str| reshape(a.op, a.tensor(name)?, vec![-1]);
    let (x, y) = (flat("a")?, flat("b")?);
    super::contract::einsum("i,j->ij", &[&x, &y]).map(Out::Tensor)
}

/// `dot(a, b)` of two vectors: a contraction (spec §5.4).
pub(super) fn dot(a: &Args) -> Result<Out, TensorError> {
    let (x, y) = (a.tensor("a")?, a.tensor("b")?);
    if x.ndim() != 1 || y.ndim() != 1 || x.shape() != y.shape() {
        return fail(format!(
            "`dot` needs two vectors of one length, not shapes {} and {} (`matmul` or `@` multiplies matrices)",
            shape_str(x.shape()),
            shape_str(y.shape())
        ));
    }
    super::contract::dot(x, y).map(Out::Tensor)
}

/// NumPy's `isclose`: `|a - b| <= atol + rtol·|b|` where b is finite, or
/// `a == b`, or (with `equal_nan`) both NaN — evaluated in the promoted
/// float dtype, each step rounded there, the tolerances weak scalars.
fn close(a: &Args) -> Result<Tensor, TensorError> {
    let (x, y) = (a.tensor("a")?, a.tensor("b")?);
    let rtol = a.float("rtol")?.unwrap_or(1e-5);
    let atol = a.float("atol")?.unwrap_or(1e-8);
    let equal_nan = a.bool("equal_nan", false)?;
    let dt = float_result(promote(x.dtype(), y.dtype()));
    let (x, y) = (x.cast(dt)?, y.cast(dt)?);
    let abs = |v: &Tensor| unary(Unary::Abs, v);
    let d = abs(&bin(BinaryOp::Sub, &x, &y)?)?;
    let tol = binary(
        BinaryOp::Add,
        Operand::Float(atol),
        Operand::Tensor(&binary(
            BinaryOp::Mul,
            Operand::Float(rtol),
            Operand::Tensor(&abs(&y)?),
        )?),
    )?;
    let within = bin(BinaryOp::Le, &d, &tol)?;
    let finite = unary(Unary::IsFinite, &y)?;
    let mut r = bin(
        BinaryOp::BitOr,
        &bin(BinaryOp::BitAnd, &within, &finite)?,
        &bin(BinaryOp::Eq, &x, &y)?,
    )?;
    if equal_nan {
        let both = bin(
            BinaryOp::BitAnd,
            &unary(Unary::IsNan, &x)?,
            &unary(Unary::IsNan, &y)?,
        )?;
        r = bin(BinaryOp::BitOr, &r, &both)?;
    }
    Ok(r)
}

pub(super) fn isclose(a: &Args) -> Result<Out, TensorError> {
    close(a).map(Out::Tensor)
}

/// `allclose(…)`: whether `isclose` holds everywhere, a host Bool.
pub(super) fn allclose(a: &Args) -> Result<Out, TensorError> {
    let all = reduce(super::reduce::all, a.op, vec![t(&close(a)?)])?;
    Ok(Out::Bool(matches!(all.item()?, Scalar::Bool(true))))
}

/// The reduction slots `x, axis, keepdim` of `a`, with x replaced.
fn reduce_slots(a: &Args, x: &Tensor) -> Vec<Option<Arg>> {
    vec![t(x), a.get("axis").cloned(), a.get("keepdim").cloned()]
}

/// x with NaN replaced by `v` (x itself when it cannot hold NaN).
fn nan_to(op: &'static str, x: &Tensor, v: f64) -> Result<Tensor, TensorError> {
    if !x.dtype().is_float() {
        return Ok(x.clone());
    }
    select(op, &unary(Unary::IsNan, x)?, &scalar(v, x.dtype())?, x)
}

/// The number of non-NaN elements along the reduction (i32).
fn not_nan_count(a: &Args, x: &Tensor) -> Result<Tensor, TensorError> {
    let ok = logical_not(&unary(Unary::IsNan, x)?)?;
    reduce(super::reduce::sum, a.op, reduce_slots(a, &ok))
}

/// `nansum`: `sum` with NaN taken as 0 (NumPy's definition; all-NaN is 0).
pub(super) fn nansum(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    reduce(super::reduce::sum, a.op, reduce_slots(a, &nan_to(a.op, x, 0.0)?)).map(Out::Tensor)
}

/// `nanmean`: the sum of the non-NaN elements (accumulated as `mean`
/// accumulates, in the accumulation dtype) over their count, divided in
/// f64 and rounded once; NaN where every element is NaN.
pub(super) fn nanmean(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    if !x.dtype().is_float() {
        // No NaN to skip: `mean`, whose sum is this one's (each element
        // widened to the same f32 accumulator, the same order) over the
        // same count, divided in f64 and rounded once.
        return reduce(super::reduce::mean, a.op, reduce_slots(a, x)).map(Out::Tensor);
    }
    let rt = float_result(x.dtype());
    let acc = x.cast(accumulation_dtype(rt))?;
    let s = reduce(
        super::reduce::sum,
        a.op,
        reduce_slots(a, &nan_to(a.op, &acc, 0.0)?),
    )?;
    let n = not_nan_count(a, &acc)?;
    let q = bin(BinaryOp::Div, &s.cast(DType::F64)?, &n.cast(DType::F64)?)?;
    q.cast(rt).map(Out::Tensor)
}

pub(super) fn nanmax(a: &Args) -> Result<Out, TensorError> {
    super::reduce::nan_extreme(a, true)
}

pub(super) fn nanmin(a: &Args) -> Result<Out, TensorError> {
    super::reduce::nan_extreme(a, false)
}

/// The reduced axes named by `axis` (an Int or Ints; every axis when
/// absent), ascending and distinct.
fn axes(a: &Args, nd: usize) -> Result<Vec<usize>, TensorError> {
    let list = match a.get("axis") {
        None => return Ok((0..nd).collect()),
        Some(Arg::Int(i)) => vec![*i],
        Some(Arg::Ints(v)) => v.clone(),
        Some(other) => {
            return Err(a.blame(
                "axis",
                TensorError(format!(
                    "`{}`: `axis` must be an Int or an Arr[Int], not `{}`",
                    a.op,
                    other.kind()
                )),
            ))
        }
    };
    let mut out = Vec::with_capacity(list.len());
    for i in list {
        let ax = a.about("axis", axis_of(a.op, i, nd))?;
        if out.contains(&ax) {
            return Err(a.blame(
                "axis",
                TensorError(format!("`{}`: axis {i} is given twice", a.op)),
            ));
        }
        out.push(ax);
    }
    out.sort_unstable();
    Ok(out)
}

/// x with the `red` axes moved last and flattened: shape [kept…, R] as
/// [K, R], with the kept shape (and the keepdim shape).
fn rows_of(x: &Tensor, red: &[usize]) -> Result<(Tensor, Vec<usize>, Vec<usize>), TensorError> {
    let nd = x.ndim();
    let kept: Vec<usize> = (0..nd).filter(|i| !red.contains(i)).collect();
    let perm: Vec<usize> = kept.iter().chain(red).copied().collect();
    let p = x.permuted(&perm)?;
    let kshape: Vec<usize> = kept.iter().map(|&i| x.shape()[i]).collect();
    let keep: Vec<usize> = (0..nd)
        .map(|i| if red.contains(&i) { 1 } else { x.shape()[i] })
        .collect();
    let k: usize = kshape.iter().product();
    let r: usize = red.iter().map(|&i| x.shape()[i]).product();
    let m = reshape("norm", &p, vec![k as i64, r as i64])?;
    Ok((m, kshape, keep))
}

/// The order of `norm`.
enum Ord {
    One,
    Two,
    Inf,
    Fro,
}

/// `norm(x, ord=2, axis=all, keepdim=false)`: the vector norm of the
/// reduced elements taken as one flat vector (ord 1, 2 or inf), or the
/// Frobenius norm of a matrix (`"fro"`, over the last two axes by default).
/// The 2-norm is the square root (in f64, rounded once) of the sum of
/// squares accumulated as a contraction (spec §5.4); ord 1 is `sum`'s tree
/// of |x|; inf is the largest |x|. Integers give f32.
pub(super) fn norm(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    let ord = match a.get("ord") {
        None => Ord::Two,
        Some(Arg::Int(1)) => Ord::One,
        Some(Arg::Int(2)) => Ord::Two,
        Some(Arg::Float(v)) if *v == 1.0 => Ord::One,
        Some(Arg::Float(v)) if *v == 2.0 => Ord::Two,
        Some(Arg::Float(v)) if *v == f64::INFINITY => Ord::Inf,
        Some(Arg::Str(s)) if s == "fro" => Ord::Fro,
        Some(other) => {
            let shown = match other {
                Arg::Int(i) => i.to_string(),
                Arg::Float(v) => v.to_string(),
                Arg::Str(s) => format!("{s:?}"),
                Arg::Tensor(_)
                | Arg::Bool(_)
                | Arg::DType(_)
                | Arg::Ints(_)
                | Arg::Tensors(_)
                | Arg::Format(_) => other.kind().to_string(),
            };
            return Err(a.blame(
                "ord",
                TensorError(format!("`norm`: `ord` must be 1, 2, inf or \"fro\", not {shown}")),
            ));
        }
    };
    let rt = float_result(x.dtype());
    let xf = x.cast(rt)?;
    let red = match (&ord, a.get("axis")) {
        (Ord::Fro, None) if x.ndim() == 2 => vec![0, 1],
        (Ord::Fro, None) => {
            return fail(format!(
                "`norm(ord=\"fro\")` needs a matrix or two axes, not shape {}",
                shape_str(x.shape())
            ))
        }
        (Ord::Fro, Some(_)) => {
            let r = axes(a, x.ndim())?;
            if r.len() != 2 {
                return Err(a.blame(
                    "axis",
                    TensorError("`norm(ord=\"fro\")` needs exactly two axes".into()),
                ));
            }
            r
        }
        (Ord::One | Ord::Two | Ord::Inf, _) => axes(a, x.ndim())?,
    };
    let keepdim = a.bool("keepdim", false)?;
    let axis_arg = Some(Arg::Ints(red.iter().map(|&i| i as i64).collect()));
    let out = match ord {
        Ord::One | Ord::Inf => {
            let abs = unary(Unary::Abs, &xf)?;
            // The inf-norm of no elements is 0, the largest |x| of none
            // (the sum of none has the shape and the value).
            let empty = red.iter().any(|&i| x.shape()[i] == 0);
            let k: Kernel = if matches!(ord, Ord::One) || empty {
                super::reduce::sum
            } else {
                super::reduce::max
            };
            reduce(k, a.op, vec![t(&abs), axis_arg, Some(Arg::Bool(keepdim))])?
        }
        Ord::Two | Ord::Fro => {
            let acc = xf.cast(accumulation_dtype(rt))?;
            let (m, kshape, keep) = rows_of(&acc, &red)?;
            let ss = super::contract::row_sums_of_squares(&m)?;
            let r = unary(Unary::Sqrt, &ss.cast(DType::F64)?)?.cast(rt)?;
            let shape = if keepdim { keep } else { kshape };
            reshape(a.op, &r, shape.iter().map(|&d| d as i64).collect())?
        }
    };
    Ok(Out::Tensor(out))
}

/// The integer dtype `x.bits()` gives for a tensor of `dt`: i32 for f32
/// and i32, i32 holding the zero-extended 16-bit pattern for bf16 and
/// f16, i8 for i8 and bool; none for f64 (there is no i64).
pub fn bits_dtype(dt: DType) -> Option<DType> {
    match dt {
        DType::F32 | DType::I32 | DType::Bf16 | DType::F16 => Some(DType::I32),
        DType::I8 | DType::Bool => Some(DType::I8),
        DType::F64 => None,
    }
}

/// `x.bits()`: each element's storage bit pattern as an integer.
pub(super) fn bits(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    let Some(bt) = bits_dtype(x.dtype()) else {
        return fail(
            "`bits` of an f64 tensor needs 64-bit integers, which twill does not have; `f64_bits(x)` gives a host F64's pattern as an Int"
                .into(),
        );
    };
    reinterpret(x, bt, None).map(Out::Tensor)
}

/// `from_bits(t, dt)`: the tensor of `dt` whose storage bits are t's
/// integers, the inverse of `bits` (t of the dtype `bits` gives for `dt`;
/// a 16-bit pattern must lie in 0 … 65535 and a bool's in 0 … 1).
pub(super) fn from_bits(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("t")?;
    let dt = match a.get("dt") {
        Some(Arg::DType(d)) => *d,
        Some(other) => {
            return Err(a.blame(
                "dt",
                TensorError(format!(
                    "`from_bits`: `dt` must be a dtype, not `{}`",
                    other.kind()
                )),
            ))
        }
        None => return fail("`from_bits` needs its `dt` argument".into()),
    };
    let Some(bt) = bits_dtype(dt) else {
        return fail("`from_bits` cannot make f64 from 32-bit integers (twill has no i64)".into());
    };
    if x.dtype() != bt {
        return fail(format!(
            "`from_bits` makes {dt} from {bt} bit patterns, not from {}",
            x.dtype()
        ));
    }
    let limit: Option<i64> = match dt {
        DType::Bf16 | DType::F16 => Some(0xFFFF),
        DType::Bool => Some(1),
        DType::F32 | DType::I32 | DType::I8 | DType::F64 => None,
    };
    reinterpret(x, dt, limit).map(Out::Tensor)
}

/// An integer element's value (`from_bits`' patterns are i8 or i32).
#[inline(always)]
fn int_value<S: Element>(e: S) -> i64 {
    match e.to_scalar() {
        Scalar::I8(i) => i64::from(i),
        Scalar::I32(i) => i64::from(i),
        s @ (Scalar::Bool(_) | Scalar::Bf16(_) | Scalar::F16(_) | Scalar::F32(_) | Scalar::F64(_)) => {
            s.to_f64() as i64
        }
    }
}

/// The tensor of `dt` whose elements' storage bits are the low bits of
/// x's (`Scalar::to_bits`, then `Scalar::from_bits`), x's shape; with
/// `limit`, every element of x (an integer) must lie in 0 … limit, or the
/// first that does not is the error. Typed passes, which vectorise, in
/// parallel chunks.
fn reinterpret(x: &Tensor, dt: DType, limit: Option<i64>) -> Result<Tensor, TensorError> {
    let c = x.contiguous()?;
    let data = crate::dispatch!(in c.storage(), v => {
        if let (Some(limit), Some((lo, hi))) = (limit, super::shape::extremes(v)) {
            let out_of_range = |e: &_| !(0..=limit).contains(&int_value(*e));
            if out_of_range(&lo) || out_of_range(&hi) {
                let i = v.iter().find(|e| out_of_range(e)).map_or(0, |e| int_value(*e));
                return fail(format!("`from_bits`: {i} is not a {dt} bit pattern (0 … {limit})"));
            }
        }
        crate::dispatch!(dt, D => {
            let out: Vec<D> = super::elementwise::build(c.shape(), #[inline(always)] |s, chunk| {
                for (o, &e) in chunk.iter_mut().zip(&v[s..]) {
                    o.write(D::from_raw_bits(e.to_scalar().to_bits()));
                }
            })?;
            D::into_storage(out)
        })
    });
    Tensor::from_storage(data, x.shape().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{call_named, Arg};

    /// `trace` through the strided diagonal view against `sum` of the
    /// diagonal gathered by index, for every dtype, on square, wide, tall
    /// and empty matrices and on transposed and sliced views.
    #[test]
    fn trace_is_the_sum_of_the_gathered_diagonal() {
        let bits = |o: Out| match o {
            Out::Tensor(t) => (t.dtype(), t.scalars().map(|v| v.to_bits()).collect::<Vec<_>>()),
            Out::Tensors(_) | Out::Bool(_) | Out::Tuple(_) => panic!("no tensor"),
        };
        for dt in DType::ALL {
            for (r, c) in [(5, 5), (3, 7), (8, 2), (0, 4), (4, 0), (300, 300)] {
                let vals: Vec<f64> = (0..r * c).map(|i| ((i * 7919) % 23) as f64 - 11.5).collect();
                let x = crate::dispatch!(dt, T => Tensor::from_vec(vals.iter().map(|&v| T::from_f64(v)).collect::<Vec<T>>(), vec![r, c]).unwrap());
                let mut views = vec![x.clone(), x.permuted(&[1, 0]).unwrap()];
                if r > 1 && c > 1 {
                    views.push(
                        x.index(&[
                            IndexItem::Slice(Some(1), None, None),
                            IndexItem::Slice(None, None, Some(2)),
                        ])
                        .unwrap(),
                    );
                }
                for v in views {
                    let (rr, cc) = (v.shape()[0], v.shape()[1]);
                    let (rows, cols) = diagonal(rr, cc, 0).unwrap();
                    let d = v
                        .index(&[IndexItem::Tensor(rows), IndexItem::Tensor(cols)])
                        .unwrap();
                    let want = bits(call_named("sum", vec![Arg::Tensor(d)]).unwrap());
                    let got = bits(call_named("trace", vec![Arg::Tensor(v.clone())]).unwrap());
                    assert_eq!(got, want, "trace {dt} {:?} strides {:?}", v.shape(), v.strides());
                }
            }
        }
    }

    /// `tril` and `triu` against their definition on a batch of matrices
    /// long enough to be written in parallel chunks that start inside
    /// rows, for diagonals below, on, above and beyond the matrix, of
    /// three dtypes, and on a transposed view.
    #[test]
    fn triangles_keep_their_side_of_the_diagonal() {
        let (b, r, c) = (3usize, 70usize, 1001usize);
        let vals: Vec<f64> = (0..b * r * c).map(|i| (i % 251) as f64 - 125.0).collect();
        for dt in [DType::F32, DType::I8, DType::Bool] {
            let x = Tensor::from_vec(vals.clone(), vec![b, r, c])
                .unwrap()
                .cast(dt)
                .unwrap();
            let xt = Tensor::from_vec(vals.clone(), vec![b, c, r])
                .unwrap()
                .cast(dt)
                .unwrap()
                .permuted(&[0, 2, 1])
                .unwrap();
            for (x, name) in [(&x, "contiguous"), (&xt, "transposed")] {
                let want_of = |lower: bool, k: i64| -> Vec<u64> {
                    let src: Vec<u64> = x.scalars().map(|s| s.to_bits()).collect();
                    (0..b * r * c)
                        .map(|p| {
                            let (i, j) = ((p / c % r) as i64, (p % c) as i64);
                            let keep = if lower { j - i <= k } else { j - i >= k };
                            if keep {
                                src[p]
                            } else {
                                0
                            }
                        })
                        .collect()
                };
                for k in [-5i64, 0, 3, 2000, -2000] {
                    for (op, lower) in [("tril", true), ("triu", false)] {
                        let got = match call_named(op, vec![Arg::Tensor(x.clone()), Arg::Int(k)]) {
                            Ok(Out::Tensor(t)) => t,
                            other => panic!("{op}: {other:?}"),
                        };
                        assert_eq!(got.shape(), &[b, r, c]);
                        let got: Vec<u64> = got.scalars().map(|s| s.to_bits()).collect();
                        assert!(got == want_of(lower, k), "{op} k={k} of {dt} ({name})");
                    }
                }
            }
        }
    }
}
