//! Contractions (spec §4.1): `matmul` (and the `@` operator), `linear`,
//! `einsum` and `conv2d`.
//!
//! They share one numeric contract, spec §5.4: every output element is a
//! sum of products accumulated from +0 in ascending order of the contracted
//! index (row-major over several contracted indices), each product exact and
//! rounded together with its add — an f32 fused multiply-add chain, which is
//! also the exact-product f32 sum that bf16 and f16 operands get; for f64
//! the product is rounded first, then the sum. Integer contractions wrap in
//! i32. The result dtype is the promotion of the operands (each operand is
//! first promoted to it, exactly as a cast would), except that integers and
//! bool give i32. `kernels` states the arithmetic of one step; `gemm` is the
//! fast blocked product that `matmul`, `linear`, `conv2d` (an implicit
//! im2col) and most two-operand `einsum`s reduce to; `einsum` also has the
//! general reference loop.

mod conv;
mod einsum;
mod gemm;
mod kernels;
mod operand;

use super::args::{Arg, Args, Out};
use crate::dtype::DType;
use crate::tensor::{shape_str, Tensor, TensorError};

use operand::{dtypes, product_dyn, promoted, Mat};

pub(crate) use einsum::einsum;

fn fail<T>(msg: String) -> Result<T, TensorError> {
    Err(TensorError(msg))
}

pub(super) fn matmul_op(args: &Args) -> Result<Out, TensorError> {
    if let Some(fmt) = args.format("acc")? {
        return super::lab::matmul_every_step(args.tensor("a")?, args.tensor("b")?, fmt).map(Out::Tensor);
    }
    matmul(args.tensor("a")?, args.tensor("b")?).map(Out::Tensor)
}

pub(super) fn linear_op(args: &Args) -> Result<Out, TensorError> {
    let bias = match args.get("b") {
        None => None,
        Some(_) => Some(args.tensor("b")?),
    };
    linear(args.tensor("x")?, args.tensor("w")?, bias).map(Out::Tensor)
}

pub(super) fn einsum_op(args: &Args) -> Result<Out, TensorError> {
    let spec = match args.get("spec") {
        Some(Arg::Str(s)) => s.as_str(),
        Some(other) => {
            return fail(format!(
                "`einsum`: the first argument must be the subscripts string, not `{}`",
                other.kind()
            ))
        }
        None => return fail("`einsum` needs its subscripts string".into()),
    };
    let mut operands = vec![args.tensor("a")?];
    for (i, a) in args.rest.iter().enumerate() {
        match a {
            Arg::Tensor(t) => operands.push(t),
            other @ (Arg::Int(_)
            | Arg::Float(_)
            | Arg::Bool(_)
            | Arg::DType(_)
            | Arg::Ints(_)
            | Arg::Tensors(_)
            | Arg::Str(_)
            | Arg::Format(_)) => {
                return fail(format!(
                    "`einsum`: operand {} must be a tensor, not `{}`",
                    i + 1,
                    other.kind()
                ))
            }
        }
    }
    einsum::einsum(spec, &operands).map(Out::Tensor)
}

pub(super) fn conv2d_op(args: &Args) -> Result<Out, TensorError> {
    let stride = pair(args, "stride", 1, 1)?;
    let padding = pair(args, "padding", 0, 0)?;
    conv::conv2d(args.tensor("x")?, args.tensor("w")?, stride, padding).map(Out::Tensor)
}

/// `stride`/`padding`: an Int for both spatial axes, or one per axis.
fn pair(args: &Args, name: &str, default: i64, min: i64) -> Result<(usize, usize), TensorError> {
    let v = args.ints(name)?.unwrap_or_else(|| vec![default]);
    let (h, w) = match v[..] {
        [x] => (x, x),
        [h, w] => (h, w),
        _ => {
            return fail(format!(
                "`conv2d`: `{name}` must be an Int or 2 Ints (height, width), not {} values",
                v.len()
            ))
        }
    };
    if h < min || w < min || h > u32::MAX as i64 || w > u32::MAX as i64 {
        return fail(format!("`conv2d`: `{name}` must be at least {min}, not {v:?}"));
    }
    Ok((h as usize, w as usize))
}

/// `dot` of two vectors of one length, the contract's one output element
/// without the blocked product's packing: [`chain`], then one rounding
/// into the result dtype — the same steps as `einsum("i,i->")`.
pub(crate) fn dot(x: &Tensor, y: &Tensor) -> Result<Tensor, TensorError> {
    let (d, r) = dtypes(&[x.dtype(), y.dtype()]);
    let (x, y) = (promoted(x, d)?.contiguous()?, promoted(y, d)?.contiguous()?);
    crate::dispatch!(d, T => {
        let (Some(xs), Some(ys)) = (x.as_slice::<T>(), y.as_slice::<T>()) else {
            return fail("internal: `dot` operands are not packed".into());
        };
        Tensor::from_vec(vec![chain(xs, ys)], Vec::new())?.cast(r)
    })
}

/// One contracted element: `acc.mul_add(a_i, b_i)` for i ascending from
/// +0 in the accumulation type, unrounded, run under `isa::wide` (so an
/// f32 step is the FMA instruction, not libm's software fma). The chain is
/// one dependent sequence, as §5.4 orders it.
#[inline(always)]
fn chain<T: crate::storage::Element>(xs: &[T], ys: &[T]) -> T::Acc {
    use crate::storage::Accumulate;
    // `Accumulate::mul_add` by name: f32 and f64 have an inherent
    // `mul_add` (self·a + b) that method syntax would pick.
    crate::isa::wide(
        #[inline(always)]
        || {
            xs.iter()
                .zip(ys)
                .fold(<T::Acc as Accumulate>::ZERO, |acc, (&a, &b)| {
                    Accumulate::mul_add(acc, a.widen(), b.widen())
                })
        },
    )
}

/// The sum of squares of each row of `m` (a [K, R] tensor):
/// `einsum("ij,ij->i", m, m)`'s elements, each [`chain`] of its row with
/// itself, unrounded in the accumulation type: the 2-norm's sum (spec
/// §5.4). Rows run in parallel when there are many elements; each row is
/// one dependent chain, so the bits do not depend on the thread count.
/// (Through einsum's general loop the same chain cost six times as much.)
pub(crate) fn row_sums_of_squares(m: &Tensor) -> Result<Tensor, TensorError> {
    use rayon::prelude::*;
    let m = m.contiguous()?;
    let (k, r) = match m.shape() {
        [k, r] => (*k, *r),
        _ => return fail("internal: `row_sums_of_squares` needs a matrix".into()),
    };
    crate::dispatch!(m.dtype(), T => {
        let Some(xs) = m.as_slice::<T>() else {
            return fail("internal: `row_sums_of_squares` operand is not packed".into());
        };
        let mut out = crate::storage::try_zeroed(k)?;
        if r == 0 {
            // Every sum is of no elements: +0.
        } else if k > 1 && k.saturating_mul(r) >= 1 << 16 {
            out.par_iter_mut()
                .zip(xs.par_chunks_exact(r))
                .for_each(|(o, row)| *o = chain(row, row));
        } else {
            for (o, row) in out.iter_mut().zip(xs.chunks_exact(r)) {
                *o = chain(row, row);
            }
        }
        Tensor::from_vec(out, vec![k])
    })
}

/// `matmul(a, b)` with NumPy's rules: a 1-D operand is a row (left) or a
/// column (right) whose axis is removed from the result, the leading axes
/// broadcast as batch axes, and the inner sizes must agree.
pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor, TensorError> {
    matmul_named("matmul", a, b)
}

fn matmul_named(op: &str, a: &Tensor, b: &Tensor) -> Result<Tensor, TensorError> {
    if a.ndim() == 0 || b.ndim() == 0 {
        return fail(format!(
            "`{op}` needs operands of at least one dimension, not shapes {} and {}",
            shape_str(a.shape()),
            shape_str(b.shape())
        ));
    }
    let (d, r) = dtypes(&[a.dtype(), b.dtype()]);
    let (pa, pb) = (promoted(a, d)?, promoted(b, d)?);
    // A 1-D left operand is one row; a 1-D right operand one column.
    let a2 = if pa.ndim() == 1 {
        pa.with_layout(vec![1, pa.shape()[0]], vec![0, pa.strides()[0]], pa.offset())?
    } else {
        pa.clone()
    };
    let b2 = if pb.ndim() == 1 {
        pb.with_layout(vec![pb.shape()[0], 1], vec![pb.strides()[0], 0], pb.offset())?
    } else {
        pb.clone()
    };
    let (na, nb) = (a2.ndim() - 2, b2.ndim() - 2);
    let (m, ka) = (a2.shape()[na], a2.shape()[na + 1]);
    let (kb, n) = (b2.shape()[nb], b2.shape()[nb + 1]);
    if ka != kb {
        return fail(format!(
            "`{op}`: shapes {} and {} do not match: the contracted axis has size {ka} in the first and {kb} in the second",
            shape_str(a.shape()),
            shape_str(b.shape())
        ));
    }
    let batch = crate::tensor::broadcast_shapes(&a2.shape()[..na], &b2.shape()[..nb]).or_else(|_| {
        fail(format!(
            "`{op}`: the batch axes of shapes {} and {} cannot be broadcast together",
            shape_str(a.shape()),
            shape_str(b.shape())
        ))
    })?;
    let mut full_a = batch.clone();
    full_a.extend([m, ka]);
    let mut full_b = batch.clone();
    full_b.extend([kb, n]);
    let va = a2.broadcast_view(&full_a)?;
    let vb = b2.broadcast_view(&full_b)?;
    let mut shape = batch.clone();
    if a.ndim() > 1 {
        shape.push(m);
    }
    if b.ndim() > 1 {
        shape.push(n);
    }
    let nbatch = batch.len();
    product_dyn(&Mat { t: &va, nb: nbatch }, &Mat { t: &vb, nb: nbatch }, shape, r)
}

/// `linear(x, w, b)` = `x @ wᵀ + b`. `w` is (out, in) or (in); `b` is
/// optional (as in PyTorch) and must broadcast to the product's shape. All
/// operands are promoted together first; the bias is then added
/// elementwise to the contraction's result, rounded once in the result
/// dtype, so `linear(x, w, b)` has the bits of `(x @ w.T) + b` whenever `b`
/// does not widen the dtype.
pub fn linear(x: &Tensor, w: &Tensor, b: Option<&Tensor>) -> Result<Tensor, TensorError> {
    if w.ndim() == 0 || w.ndim() > 2 {
        return fail(format!(
            "`linear`: the weight must have shape [out, in] or [in], not {}",
            shape_str(w.shape())
        ));
    }
    if x.ndim() == 0 || x.shape().last() != w.shape().last() {
        return fail(format!(
            "`linear`: input shape {} does not match weight shape {}: the last axes must agree",
            shape_str(x.shape()),
            shape_str(w.shape())
        ));
    }
    let mut ds = vec![x.dtype(), w.dtype()];
    ds.extend(b.map(|t| t.dtype()));
    let (d, r) = dtypes(&ds);
    let out = matmul_named("linear", &promoted(x, d)?, &promoted(w, d)?.reversed_axes())?;
    match b {
        None => Ok(out),
        Some(bias) => {
            let bias = promoted(&promoted(bias, d)?, r)?;
            let view = bias.broadcast_view(out.shape()).or_else(|_| {
                fail(format!(
                    "`linear`: bias shape {} does not broadcast to the output shape {}",
                    shape_str(bias.shape()),
                    shape_str(out.shape())
                ))
            })?;
            add_rounded(&out, &view)
        }
    }
}

/// `c + b` elementwise for two tensors of the same dtype and shape (`c`
/// contiguous), each sum rounded once: directly in f32, f64 and (wrapping)
/// i32, and for bf16 and f16 in f64 then rounded, which is the correctly
/// rounded narrow sum (f64 carries more than 2p + 2 bits of either).
fn add_rounded(c: &Tensor, b: &Tensor) -> Result<Tensor, TensorError> {
    fn zip<T: crate::storage::Element>(
        c: &Tensor,
        b: &Tensor,
        f: impl Fn(T, T) -> T,
    ) -> Result<Tensor, TensorError> {
        let (Some(cv), Some(bv)) = (c.as_slice::<T>(), T::slice(b.storage())) else {
            return fail("internal error: bias dtype differs from the product's".into());
        };
        // A bias along the last axis (strides 0 above it, 1 along it), the
        // usual one: row by row, without an offset per element.
        let n = c.shape().last().copied().unwrap_or(0);
        let row_bias = match b.strides().split_last() {
            Some((1, above)) if n > 0 && above.iter().all(|&s| s == 0) => {
                b.offsets().next().and_then(|o| bv.get(o..o + n))
            }
            _ => None,
        };
        let out: Vec<T> = match row_bias {
            Some(bias) => {
                let mut out = Vec::with_capacity(cv.len());
                for row in cv.chunks_exact(n) {
                    out.extend(row.iter().zip(bias).map(|(&x, &y)| f(x, y)));
                }
                out
            }
            None => cv.iter().zip(b.offsets()).map(|(&x, o)| f(x, bv[o])).collect(),
        };
        Tensor::from_vec(out, c.shape().to_vec())
    }
    use crate::convert::{f64_to_bf16_bits, f64_to_f16_bits};
    match c.dtype() {
        DType::F32 => zip::<f32>(c, b, |x, y| x + y),
        DType::F64 => zip::<f64>(c, b, |x, y| x + y),
        DType::I32 => zip::<i32>(c, b, |x, y| x.wrapping_add(y)),
        DType::Bf16 => zip::<half::bf16>(c, b, |x, y| {
            half::bf16::from_bits(f64_to_bf16_bits(x.to_f64() + y.to_f64()))
        }),
        DType::F16 => zip::<half::f16>(c, b, |x, y| {
            half::f16::from_bits(f64_to_f16_bits(x.to_f64() + y.to_f64()))
        }),
        other @ (DType::Bool | DType::I8) => {
            fail(format!("internal error: a contraction cannot produce {other}"))
        }
    }
}

#[cfg(test)]
mod tests;
