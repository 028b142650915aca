//! The operands of a contraction as the kernels read them: the promotion
//! of the operands and the result dtype ([`dtypes`], [`promoted`]), a batch
//! of matrices over a strided view ([`Mat`]), the one dtype dispatch that
//! hands a kernel its storage slice typed by accumulation type
//! ([`FromStorage`], [`Visit`]), and the batched product that
//! `matmul`, `linear`, `conv2d` and two-operand `einsum`s share
//! ([`product`]). It lives apart from the operation table in `mod.rs` so
//! that `conv` and `einsum` depend on it and not on their parent.

use super::gemm::{self, Panels, Strided};
use super::kernels::Kernels;
use crate::dispatch;
use crate::dtype::DType;
use crate::promote::promote;
use crate::storage::{try_vec, Element, Storage};
use crate::tensor::{ensure_room, numel_of, Tensor, TensorError};

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
pub(crate) trait FromStorage: Kernels {
    fn visit<'a, V: Visit<'a, Self>>(s: &'a Storage, v: V) -> Result<V::Out, TensorError>;
}

pub(crate) trait Visit<'a, C> {
    type Out;
    fn visit<T: Element<Acc = C>>(self, data: &'a [T]) -> Self::Out;
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

impl<'a, C: Kernels> Visit<'a, C> for MakeStrided {
    type Out = Box<dyn Panels<C> + 'a>;
    fn visit<T: Element<Acc = C>>(self, data: &'a [T]) -> Self::Out {
        Box::new(Strided {
            data,
            bases: self.bases,
            st: self.st,
            sp: self.sp,
        })
    }
}

/// The storage offsets of element `[.., 0, 0]` of every batch of `t`,
/// whose leading `nb` axes are batch axes, in row-major batch order.
pub(crate) fn batch_bases(t: &Tensor, nb: usize) -> Result<Vec<isize>, TensorError> {
    let shape = &t.shape()[..nb];
    let strides = &t.strides()[..nb];
    let count = numel_of(shape)?;
    let mut out = try_vec(count)?;
    if count == 0 {
        return Ok(out);
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
    Ok(out)
}

/// A batch of matrices for [`gemm::gemm`]: a tensor whose last two axes
/// are the matrix (rows, columns), its leading axes already broadcast to
/// the batch shape.
pub(crate) struct Mat<'t> {
    pub t: &'t Tensor,
    pub nb: usize,
}

impl Mat<'_> {
    pub(crate) fn rows(&self) -> usize {
        self.t.shape()[self.nb]
    }
    pub(crate) fn cols(&self) -> usize {
        self.t.shape()[self.nb + 1]
    }
    /// As the left operand: t = row, p = column.
    pub(crate) fn left<'a, C: FromStorage>(&'a self) -> Result<Box<dyn Panels<C> + 'a>, TensorError> {
        let s = self.t.strides();
        C::visit(
            self.t.storage(),
            MakeStrided {
                bases: batch_bases(self.t, self.nb)?,
                st: s[self.nb],
                sp: s[self.nb + 1],
            },
        )
    }
    /// As the right operand: t = column, p = row.
    pub(crate) fn right<'a, C: FromStorage>(&'a self) -> Result<Box<dyn Panels<C> + 'a>, TensorError> {
        let s = self.t.strides();
        C::visit(
            self.t.storage(),
            MakeStrided {
                bases: batch_bases(self.t, self.nb)?,
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
    // The result must fit before any work buffer is made for it.
    ensure_room(result, &shape)?;
    let acc = gemm::gemm::<C>(batches, m, n, k, &*a.left::<C>()?, &*b.right::<C>()?)?;
    C::finish(acc, shape, result)
}

pub(crate) fn product_dyn(a: &Mat, b: &Mat, shape: Vec<usize>, result: DType) -> Result<Tensor, TensorError> {
    dispatch!(a.t.dtype(), T => product::<<T as Element>::Acc>(a, b, shape, result))
}
