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

use super::{Arg, Args, Out};
use crate::dtype::DType;
use crate::promote::promote;
use crate::storage::Storage;
use crate::tensor::{shape_str, Tensor, TensorError};

use gemm::{Panels, Strided};
use kernels::{Acc, Widen};

fn fail<T>(msg: String) -> Result<T, TensorError> {
    Err(TensorError(msg))
}

pub(super) fn matmul_op(args: &Args) -> Result<Out, TensorError> {
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
            other => {
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

/// The dtype the operands are promoted to, and the result dtype: the
/// promotion, except that bool and integers give i32 (spec §5, extension 2).
pub(crate) fn dtypes(ds: &[DType]) -> (DType, DType) {
    let d = ds.iter().copied().reduce(promote).unwrap_or(DType::F64);
    let r = if d.is_float() { d } else { DType::I32 };
    (d, r)
}

/// `t` promoted to `d`. Widening is exact; an integer promoted into a
/// narrow float rounds once, as the cast would (`i32` into `bf16`).
pub(crate) fn promoted(t: &Tensor, d: DType) -> Result<Tensor, TensorError> {
    if t.dtype() == d {
        Ok(t.clone())
    } else {
        t.cast(d)
    }
}

/// Reads an operand's storage as element type `T`, for each accumulation
/// type: the one dtype dispatch of the contraction kernels. `visit` is
/// called with the storage slice when its element type widens exactly into
/// `Self` (which holds for every operand promoted to a dtype whose
/// accumulation type is `Self`).
pub(crate) trait FromStorage: Acc {
    fn visit<'a, V: Visit<'a, Self>>(s: &'a Storage, v: V) -> Result<V::Out, TensorError>;
}

pub(crate) trait Visit<'a, C> {
    type Out;
    fn visit<T: Widen<C>>(self, data: &'a [T]) -> Self::Out;
}

fn wrong_storage(s: &Storage, acc: &str) -> TensorError {
    TensorError(format!(
        "internal error: {} operands cannot accumulate in {acc}",
        s.dtype()
    ))
}

impl FromStorage for f32 {
    fn visit<'a, V: Visit<'a, f32>>(s: &'a Storage, v: V) -> Result<V::Out, TensorError> {
        match s {
            Storage::Bf16(x) => Ok(v.visit(x)),
            Storage::F16(x) => Ok(v.visit(x)),
            Storage::F32(x) => Ok(v.visit(x)),
            Storage::Bool(_) | Storage::I8(_) | Storage::I32(_) | Storage::F64(_) => {
                Err(wrong_storage(s, "f32"))
            }
        }
    }
}

impl FromStorage for f64 {
    fn visit<'a, V: Visit<'a, f64>>(s: &'a Storage, v: V) -> Result<V::Out, TensorError> {
        match s {
            Storage::F64(x) => Ok(v.visit(x)),
            Storage::Bool(_)
            | Storage::I8(_)
            | Storage::I32(_)
            | Storage::Bf16(_)
            | Storage::F16(_)
            | Storage::F32(_) => Err(wrong_storage(s, "f64")),
        }
    }
}

impl FromStorage for i32 {
    fn visit<'a, V: Visit<'a, i32>>(s: &'a Storage, v: V) -> Result<V::Out, TensorError> {
        match s {
            Storage::Bool(x) => Ok(v.visit(x)),
            Storage::I8(x) => Ok(v.visit(x)),
            Storage::I32(x) => Ok(v.visit(x)),
            Storage::Bf16(_) | Storage::F16(_) | Storage::F32(_) | Storage::F64(_) => {
                Err(wrong_storage(s, "i32"))
            }
        }
    }
}

/// Makes a [`Strided`] source over whatever element type the storage has.
struct MakeStrided {
    bases: Vec<isize>,
    st: isize,
    sp: isize,
}

impl<'a, C: Acc> Visit<'a, C> for MakeStrided {
    type Out = Box<dyn Panels<C> + 'a>;
    fn visit<T: Widen<C>>(self, data: &'a [T]) -> Self::Out {
        Box::new(Strided {
            data,
            bases: self.bases,
            st: self.st,
            sp: self.sp,
        })
    }
}

/// Runs `$f::<C>($args)` for the accumulation type of operand dtype `$d`.
macro_rules! by_acc {
    ($d:expr, $f:ident ( $($arg:expr),* )) => {
        match $crate::promote::accumulation_dtype($d) {
            $crate::dtype::DType::F32 => $f::<f32>($($arg),*),
            $crate::dtype::DType::F64 => $f::<f64>($($arg),*),
            $crate::dtype::DType::I32 => $f::<i32>($($arg),*),
            other @ ($crate::dtype::DType::Bool
            | $crate::dtype::DType::I8
            | $crate::dtype::DType::Bf16
            | $crate::dtype::DType::F16) => Err($crate::tensor::TensorError(format!(
                "internal error: no contraction accumulates in {other}"
            ))),
        }
    };
}
pub(crate) use by_acc;

/// The storage offsets of element `[.., 0, 0]` of every batch of `t`,
/// whose leading `nb` axes are batch axes, in row-major batch order.
pub(crate) fn batch_bases(t: &Tensor, nb: usize) -> Vec<isize> {
    let shape = &t.shape()[..nb];
    let strides = &t.strides()[..nb];
    let count: usize = shape.iter().product();
    let mut out = Vec::with_capacity(count);
    if count == 0 {
        return out;
    }
    let mut idx = vec![0usize; nb];
    let mut off = t.offset() as isize;
    for _ in 0..count {
        out.push(off);
        // Odometer: the last batch axis fastest.
        for ax in (0..nb).rev() {
            idx[ax] += 1;
            off += strides[ax];
            if idx[ax] < shape[ax] {
                break;
            }
            off -= strides[ax] * shape[ax] as isize;
            idx[ax] = 0;
        }
    }
    out
}

/// A batch of matrices for [`gemm::gemm`]: a tensor whose last two axes
/// are the matrix (rows, columns), its leading axes already broadcast to
/// the batch shape.
pub(crate) struct Mat<'t> {
    pub t: &'t Tensor,
    pub nb: usize,
}

impl Mat<'_> {
    fn rows(&self) -> usize {
        self.t.shape()[self.nb]
    }
    fn cols(&self) -> usize {
        self.t.shape()[self.nb + 1]
    }
    /// As the left operand: t = row, p = column.
    fn left<'a, C: FromStorage>(&'a self) -> Result<Box<dyn Panels<C> + 'a>, TensorError> {
        let s = self.t.strides();
        C::visit(
            self.t.storage(),
            MakeStrided {
                bases: batch_bases(self.t, self.nb),
                st: s[self.nb],
                sp: s[self.nb + 1],
            },
        )
    }
    /// As the right operand: t = column, p = row.
    fn right<'a, C: FromStorage>(&'a self) -> Result<Box<dyn Panels<C> + 'a>, TensorError> {
        let s = self.t.strides();
        C::visit(
            self.t.storage(),
            MakeStrided {
                bases: batch_bases(self.t, self.nb),
                st: s[self.nb + 1],
                sp: s[self.nb],
            },
        )
    }
}

/// The batched product of `a` (batch × m × k) and `b` (batch × k × n), both
/// of the operand dtype, as accumulators rounded into `result` with shape
/// `shape`.
pub(crate) fn product<C: FromStorage>(
    a: &Mat,
    b: &Mat,
    shape: Vec<usize>,
    result: DType,
) -> Result<Tensor, TensorError> {
    let batches: usize = a.t.shape()[..a.nb].iter().product();
    let (m, k, n) = (a.rows(), a.cols(), b.cols());
    if batches == 0 || m == 0 || n == 0 || k == 0 {
        // No elements, or all of them empty sums (+0): nothing to read, and
        // no per-batch offsets to list (there may be many empty batches).
        return Tensor::zeros(shape, result);
    }
    let acc = gemm::gemm::<C>(batches, m, n, k, &*a.left::<C>()?, &*b.right::<C>()?)?;
    C::finish(acc, shape, result)
}

fn product_dyn(a: &Mat, b: &Mat, shape: Vec<usize>, result: DType) -> Result<Tensor, TensorError> {
    by_acc!(a.t.dtype(), product(a, b, shape, result))
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
        let out: Vec<T> = cv.iter().zip(b.offsets()).map(|(&x, o)| f(x, bv[o])).collect();
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
