//! The tensor value: packed storage shared behind an `Rc`, with shape,
//! strides and offset, so transposes and slices are views that copy
//! nothing. Tensors have value semantics: anything that would change
//! elements works on its own copy (copy-on-write through `Rc::make_mut`).
//!
//! Every tensor is made by [`Tensor::from_storage`] (or a view of one made
//! by it), which checks that the shape describes the storage; the storage
//! itself guarantees the buffer invariant (see `storage`).

use std::rc::Rc;

use crate::convert::Scalar;
use crate::dtype::DType;
pub use crate::error::TensorError;
use crate::storage::{try_collect, Element, Storage};

/// The broadcast of two shapes (NumPy rules), or an error naming both.
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Result<Vec<usize>, TensorError> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let x = if i + a.len() >= n { a[i + a.len() - n] } else { 1 };
        let y = if i + b.len() >= n { b[i + b.len() - n] } else { 1 };
        out[i] = if x == y || y == 1 {
            x
        } else if x == 1 {
            y
        } else {
            return Err(TensorError(format!(
                "shapes {} and {} cannot be broadcast together",
                shape_str(a),
                shape_str(b)
            )));
        };
    }
    Ok(out)
}

/// An axis argument (negative counts from the end) as an index below `ndim`.
pub fn normalize_axis(axis: i64, ndim: usize) -> Result<usize, TensorError> {
    let n = ndim as i64;
    let a = if axis < 0 { axis + n } else { axis };
    if a < 0 || a >= n.max(1) || (ndim == 0 && axis != 0 && axis != -1) {
        return Err(TensorError(format!(
            "axis {axis} is out of range for a tensor of rank {ndim}"
        )));
    }
    Ok(a as usize)
}

/// Shapes print as NumPy's tuples do, but with brackets: `[2, 3]`.
pub fn shape_str(shape: &[usize]) -> String {
    let parts: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// The element count of a shape, or an error if it overflows.
pub fn numel_of(shape: &[usize]) -> Result<usize, TensorError> {
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .filter(|n| n.checked_mul(8).is_some_and(|b| b <= isize::MAX as usize))
        .ok_or_else(|| TensorError(format!("shape {} has too many elements", shape_str(shape))))
}

/// Checks, before an operation starts work, that a `dtype` tensor of
/// `shape` can exist and that the allocator can provide it now, so that a
/// result too large for memory is an error naming it rather than a failure
/// deep inside a kernel (or after minutes of work). Small results are not
/// tried: they cannot fail in a way worth an extra allocation.
pub fn ensure_room(dtype: DType, shape: &[usize]) -> Result<usize, TensorError> {
    let n = numel_of(shape)?;
    let bytes = n * dtype.size_in_bytes();
    if bytes >= 1 << 24 {
        let mut probe: Vec<u8> = Vec::new();
        probe
            .try_reserve_exact(bytes)
            .map_err(|_| crate::error::AllocError::of::<u8>(bytes).for_tensor(dtype, shape))?;
    }
    Ok(n)
}

fn contiguous_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for (s, d) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        acc = acc.saturating_mul(*d as isize);
    }
    strides
}

#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    data: Rc<Storage>,
    shape: Vec<usize>,
    strides: Vec<isize>,
    offset: usize,
}

impl Tensor {
    /// The one constructor: a contiguous row-major tensor over `data`.
    pub fn from_storage(data: Storage, shape: Vec<usize>) -> Result<Tensor, TensorError> {
        let n = numel_of(&shape)?;
        if n != data.len() {
            return Err(TensorError(format!(
                "{} elements cannot have shape {}",
                data.len(),
                shape_str(&shape)
            )));
        }
        Ok(Tensor {
            strides: contiguous_strides(&shape),
            data: Rc::new(data),
            shape,
            offset: 0,
        })
    }

    /// A rank-0 tensor holding one element.
    pub fn scalar(s: Scalar) -> Tensor {
        Tensor {
            data: Rc::new(Storage::of_scalar(s)),
            shape: Vec::new(),
            strides: Vec::new(),
            offset: 0,
        }
    }

    pub fn from_vec<T: Element>(v: Vec<T>, shape: Vec<usize>) -> Result<Tensor, TensorError> {
        Tensor::from_storage(T::into_storage(v), shape)
    }

    pub fn zeros(shape: Vec<usize>, dtype: DType) -> Result<Tensor, TensorError> {
        let n = numel_of(&shape)?;
        let data = Storage::zeros(dtype, n).map_err(|e| e.for_tensor(dtype, &shape))?;
        Tensor::from_storage(data, shape)
    }

    /// A tensor of `shape` whose every element is `value` cast to `dtype`.
    pub fn full(shape: Vec<usize>, value: Scalar, dtype: DType) -> Result<Tensor, TensorError> {
        let n = numel_of(&shape)?;
        let v = value.cast(dtype)?;
        let data = Storage::filled(n, v).map_err(|e| e.for_tensor(dtype, &shape))?;
        Tensor::from_storage(data, shape)
    }

    pub fn dtype(&self) -> DType {
        self.data.dtype()
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn storage(&self) -> &Storage {
        &self.data
    }

    /// Whether the elements are the whole storage, in row-major order.
    pub fn is_contiguous(&self) -> bool {
        if self.offset != 0 || self.data.len() != self.numel() {
            return false;
        }
        // The row-major strides, compared without building them.
        let mut acc = 1isize;
        for (&s, &d) in self.strides.iter().zip(&self.shape).rev() {
            if s != acc {
                return false;
            }
            acc = acc.saturating_mul(d as isize);
        }
        true
    }

    /// The contiguous elements when the tensor is laid out row-major over
    /// its whole storage.
    pub fn as_slice<T: Element>(&self) -> Option<&[T]> {
        if self.is_contiguous() {
            T::slice(&self.data)
        } else {
            None
        }
    }

    /// Storage offsets of every element, in row-major order.
    pub fn offsets(&self) -> Offsets<'_> {
        Offsets {
            shape: &self.shape,
            strides: &self.strides,
            index: vec![0; self.shape.len()],
            next: if self.numel() == 0 {
                None
            } else {
                Some(self.offset as isize)
            },
        }
    }

    /// The elements in row-major order, as scalars (the general, slow path).
    pub fn scalars(&self) -> impl Iterator<Item = Scalar> + '_ {
        self.offsets()
            .map(move |o| self.data.get(o).unwrap_or(Scalar::F64(0.0)))
    }

    /// The elements in row-major order, packed into new contiguous storage
    /// (an error, not an abort, when there is no memory for it).
    pub fn to_storage(&self) -> Result<Storage, TensorError> {
        let n = numel_of(&self.shape)?;
        let oom = |e: crate::error::AllocError| e.for_tensor(self.dtype(), &self.shape);
        crate::dispatch!(in &*self.data, v => {
            let out = if self.is_contiguous() {
                try_collect(n, v.iter().copied())
            } else {
                view_copy(v, self.offset, &self.shape, &self.strides, n)
            };
            Ok(Element::into_storage(out.map_err(oom)?))
        })
    }

    /// A row-major copy that owns its storage exactly (the tensor itself
    /// when it already is one).
    pub fn contiguous(&self) -> Result<Tensor, TensorError> {
        if self.is_contiguous() {
            return Ok(self.clone());
        }
        Ok(Tensor {
            data: Rc::new(self.to_storage()?),
            strides: contiguous_strides(&self.shape),
            shape: self.shape.clone(),
            offset: 0,
        })
    }

    /// The single element of a one-element tensor.
    pub fn item(&self) -> Result<Scalar, TensorError> {
        if self.numel() != 1 {
            return Err(TensorError(format!(
                "item() needs a tensor of exactly one element, not shape {}",
                shape_str(&self.shape)
            )));
        }
        self.scalars()
            .next()
            .ok_or_else(|| TensorError("empty tensor".into()))
    }

    /// A view of the same storage with another layout. The layout must stay
    /// inside the storage (checked), so a view can never read out of bounds.
    pub fn with_layout(
        &self,
        shape: Vec<usize>,
        strides: Vec<isize>,
        offset: usize,
    ) -> Result<Tensor, TensorError> {
        if shape.len() != strides.len() {
            return Err(TensorError("a layout needs one stride per axis".into()));
        }
        if shape.contains(&0) {
            return Ok(Tensor {
                data: self.data.clone(),
                shape,
                strides,
                offset: 0,
            });
        }
        let (mut lo, mut hi) = (offset as isize, offset as isize);
        for (&d, &s) in shape.iter().zip(&strides) {
            let span = s.saturating_mul(d as isize - 1);
            if span < 0 {
                lo += span;
            } else {
                hi += span;
            }
        }
        if lo < 0 || hi as usize >= self.data.len() {
            return Err(TensorError("a view would reach outside its storage".into()));
        }
        Ok(Tensor {
            data: self.data.clone(),
            shape,
            strides,
            offset,
        })
    }

    /// The storage offset of the first element.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Makes this tensor the only owner of a contiguous row-major storage
    /// holding exactly its elements, copying them only when it is not
    /// already (shared storage, a view, a broadcast): the step before an
    /// element is written in place (spec §11.2).
    pub(crate) fn make_owned(&mut self) -> Result<(), TensorError> {
        if self.is_owned() {
            return Ok(());
        }
        *self = Tensor {
            data: Rc::new(self.to_storage()?),
            strides: contiguous_strides(&self.shape),
            shape: std::mem::take(&mut self.shape),
            offset: 0,
        };
        Ok(())
    }

    /// Whether this tensor alone holds its storage, packed row-major.
    pub(crate) fn is_owned(&self) -> bool {
        Rc::strong_count(&self.data) == 1 && Rc::weak_count(&self.data) == 0 && self.is_contiguous()
    }

    /// The storage, for writing, when this tensor is its only owner.
    pub(crate) fn owned_storage(&mut self) -> Option<&mut Storage> {
        Rc::get_mut(&mut self.data)
    }

    /// A view broadcast to `shape` (NumPy rules: trailing axes aligned, a
    /// size-1 axis stretches with stride 0).
    pub fn broadcast_view(&self, shape: &[usize]) -> Result<Tensor, TensorError> {
        if shape.len() < self.ndim() {
            return Err(TensorError(format!(
                "cannot broadcast shape {} to {}",
                shape_str(&self.shape),
                shape_str(shape)
            )));
        }
        let lead = shape.len() - self.ndim();
        let mut strides = vec![0isize; shape.len()];
        for (i, &d) in shape.iter().enumerate().skip(lead) {
            let (own, s) = (self.shape[i - lead], self.strides[i - lead]);
            strides[i] = if own == d {
                s
            } else if own == 1 {
                0
            } else {
                return Err(TensorError(format!(
                    "cannot broadcast shape {} to {}",
                    shape_str(&self.shape),
                    shape_str(shape)
                )));
            };
        }
        Ok(Tensor {
            data: self.data.clone(),
            shape: shape.to_vec(),
            strides,
            offset: self.offset,
        })
    }

    /// The axes reordered: axis `i` of the result is axis `perm[i]` of self.
    pub fn permuted(&self, perm: &[usize]) -> Result<Tensor, TensorError> {
        let mut seen = vec![false; self.ndim()];
        if perm.len() != self.ndim()
            || perm
                .iter()
                .any(|&p| p >= self.ndim() || std::mem::replace(&mut seen[p], true))
        {
            return Err(TensorError(format!(
                "{perm:?} is not a permutation of the axes of a rank-{} tensor",
                self.ndim()
            )));
        }
        Ok(Tensor {
            data: self.data.clone(),
            shape: perm.iter().map(|&p| self.shape[p]).collect(),
            strides: perm.iter().map(|&p| self.strides[p]).collect(),
            offset: self.offset,
        })
    }

    /// The elements in row-major order as f64 (exact: every dtype's values
    /// are f64 values).
    pub fn to_f64_vec(&self) -> Result<Vec<f64>, TensorError> {
        let n = numel_of(&self.shape)?;
        let oom = |e: crate::error::AllocError| TensorError::from(e.for_tensor(DType::F64, &self.shape));
        crate::dispatch!(in &*self.data, v => try_collect(n, self.offsets().map(|o| v[o].to_f64())).map_err(oom))
    }

    /// All axes reversed (`x.T`): a view.
    pub fn reversed_axes(&self) -> Tensor {
        let mut t = self.clone();
        t.shape.reverse();
        t.strides.reverse();
        t
    }
}

/// Python slice semantics for one axis of length `n`: the first index, the
/// number of elements, and the step.
pub fn slice_bounds(
    start: Option<i64>,
    stop: Option<i64>,
    step: Option<i64>,
    n: i64,
) -> Result<(i64, i64, i64), TensorError> {
    let step = step.unwrap_or(1);
    if step == 0 {
        return Err(TensorError("slice step cannot be zero".into()));
    }
    let clamp = |v: i64, lo: i64, hi: i64| {
        let v = if v < 0 { v.saturating_add(n) } else { v };
        v.clamp(lo, hi)
    };
    let (lo, hi) = if step > 0 { (0, n) } else { (-1, n - 1) };
    let first = start
        .map(|v| clamp(v, lo, hi))
        .unwrap_or(if step > 0 { 0 } else { n - 1 });
    let last = stop
        .map(|v| clamp(v, lo, hi))
        .unwrap_or(if step > 0 { n } else { -1 });
    // In i128: with a step near ±2^63, `last - first + step - 1` and
    // `-step` do not fit in an i64. The count is at most `n`, so it fits.
    let (first_w, last_w, step_w) = (i128::from(first), i128::from(last), i128::from(step));
    let len = if step > 0 {
        if last > first {
            (last_w - first_w + step_w - 1) / step_w
        } else {
            0
        }
    } else if first > last {
        (first_w - last_w - step_w - 1) / -step_w
    } else {
        0
    };
    let len =
        i64::try_from(len).map_err(|_| TensorError(format!("a slice of an axis of size {n} is too long")))?;
    Ok((if len == 0 { 0 } else { first }, len, step))
}

/// Iterator over the storage offsets of a strided view in row-major order.
pub struct Offsets<'a> {
    shape: &'a [usize],
    strides: &'a [isize],
    index: Vec<usize>,
    next: Option<isize>,
}

impl Iterator for Offsets<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let cur = self.next?;
        // Advance the odometer: the last axis fastest.
        let mut off = cur;
        let mut axis = self.shape.len();
        loop {
            if axis == 0 {
                self.next = None;
                break;
            }
            axis -= 1;
            self.index[axis] += 1;
            off += self.strides[axis];
            if self.index[axis] < self.shape[axis] {
                self.next = Some(off);
                break;
            }
            off -= self.strides[axis] * self.shape[axis] as isize;
            self.index[axis] = 0;
        }
        Some(cur as usize)
    }
}

/// Rows of the output at least this many elements long in all are copied
/// by several threads.
const COPY_PAR_MIN: usize = 1 << 16;
/// The side of the square tiles in which a transposed view is copied:
/// its reads then stay within a few lines per column of the tile.
const TILE: usize = 32;

/// The `n` elements of a view of `v` (at `offset`, with `shape` and
/// `strides`) in row-major order. When the last two axes are transposed
/// (the next-to-last has the smaller stride) the copy goes in square
/// tiles, so that reads are not a stride apart; otherwise row by row of
/// the last axis (a slice copy where its stride is 1). The rows of a large
/// view are shared by several threads: each element is copied once
/// whatever the split. Offsets outside `v` cannot occur for a view made by
/// `from_storage` and its view methods; were one to, its element would be
/// the view's first.
fn view_copy<T: Element>(
    v: &[T],
    offset: usize,
    shape: &[usize],
    strides: &[isize],
    n: usize,
) -> Result<Vec<T>, crate::error::AllocError> {
    use rayon::prelude::*;
    let Some(&first) = v.get(offset) else {
        return Ok(Vec::new());
    };
    if n == 0 {
        return Ok(Vec::new());
    }
    // Axes of length 1 move nothing.
    let (dims, steps): (Vec<usize>, Vec<isize>) = shape
        .iter()
        .zip(strides)
        .filter(|(&d, _)| d != 1)
        .map(|(&d, &st)| (d, st))
        .unzip();
    let nd = dims.len();
    let mut out = crate::storage::try_filled(n, first)?;
    if nd == 0 {
        return Ok(out);
    }
    let at = |o: isize| v.get(o as usize).copied().unwrap_or(first);
    let (c, sc) = (dims[nd - 1], steps[nd - 1]);
    let tiled = nd >= 2 && steps[nd - 2].unsigned_abs() < sc.unsigned_abs();
    // The offset of the first element of each block of `block` output
    // elements: rows of the last axis, or (tiled) whole matrices of the
    // last two.
    let (block, outer) = if tiled {
        (dims[nd - 2] * c, nd - 2)
    } else {
        (c, nd - 1)
    };
    let base_of = |mut b: usize| -> isize {
        let mut o = offset as isize;
        for ax in (0..outer).rev() {
            o += (b % dims[ax]) as isize * steps[ax];
            b /= dims[ax];
        }
        o
    };
    let fill_rows = |(b, row): (usize, &mut [T])| {
        let o = base_of(b);
        if sc == 1 {
            if let Some(src) = v.get(o as usize..o as usize + c) {
                row.copy_from_slice(src);
            }
        } else {
            for (j, x) in row.iter_mut().enumerate() {
                *x = at(o + j as isize * sc);
            }
        }
    };
    // Rows i0.. (whole rows of c elements) of the matrix at `o`, a tile of
    // TILE columns at a time.
    let fill_band = |o: isize, i0: usize, band: &mut [T]| {
        let sr = steps[nd - 2];
        for j0 in (0..c).step_by(TILE) {
            let j1 = (j0 + TILE).min(c);
            for (di, dst) in band.chunks_mut(c).enumerate() {
                let src = o + (i0 + di) as isize * sr;
                for (j, x) in (j0..j1).zip(&mut dst[j0..j1]) {
                    *x = at(src + j as isize * sc);
                }
            }
        }
    };
    let parallel = n >= COPY_PAR_MIN;
    if tiled && parallel {
        out.par_chunks_mut(block).enumerate().for_each(|(b, m)| {
            let o = base_of(b);
            m.par_chunks_mut(TILE * c)
                .enumerate()
                .for_each(|(t, band)| fill_band(o, t * TILE, band));
        });
    } else if tiled {
        for (b, m) in out.chunks_mut(block).enumerate() {
            let o = base_of(b);
            for (t, band) in m.chunks_mut(TILE * c).enumerate() {
                fill_band(o, t * TILE, band);
            }
        }
    } else if parallel {
        out.par_chunks_mut(block).enumerate().for_each(fill_rows);
    } else {
        out.chunks_mut(block).enumerate().for_each(fill_rows);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::IndexItem;

    fn t(v: Vec<f64>, shape: Vec<usize>) -> Tensor {
        Tensor::from_vec(v, shape).expect("valid")
    }

    /// `contiguous` of views (transposes, permutations of three axes,
    /// stepped and reversed slices, broadcasts, axes of length 1), small
    /// and large enough to be copied on several threads, in tiles or by
    /// rows, against the element-by-element walk of `offsets`.
    #[test]
    fn view_copies_match_the_offset_walk() {
        let base: Vec<i32> = (0..700_000).collect();
        let x = Tensor::from_vec(base.clone(), vec![700_000]).expect("tensor");
        let f = Tensor::from_vec(
            base.iter().map(|&i| i as f32 * 0.5).collect::<Vec<f32>>(),
            vec![700_000],
        )
        .expect("tensor");
        let layouts: Vec<(Vec<usize>, Vec<isize>, usize)> = vec![
            (vec![7, 5], vec![1, 7], 0),
            (vec![300, 700], vec![1, 300], 0),
            (vec![600, 1000], vec![1, 600], 5),
            (vec![33, 65], vec![2, 70], 11),
            (vec![4, 50, 60], vec![3000, 1, 50], 0),
            (vec![4, 50, 60], vec![1, 240, 4], 0),
            (vec![60, 4, 50], vec![1, 15000, 60], 7),
            (vec![2, 1, 300, 1, 400], vec![120_000, 9, 1, 9, 300], 100),
            (vec![500, 600], vec![600, -1], 599),
            (vec![400, 700], vec![-700, 1], 399 * 700),
            (vec![800, 300], vec![0, 1], 3),
            (vec![300, 800], vec![1, 0], 3),
            (vec![90_000], vec![7], 1),
            (vec![3, 1], vec![1, 1], 2),
        ];
        for (shape, strides, offset) in layouts {
            for t in [&x, &f] {
                let v = t
                    .with_layout(shape.clone(), strides.clone(), offset)
                    .expect("view");
                let want: Vec<u64> = v
                    .offsets()
                    .map(|o| v.data.get(o).map_or(u64::MAX, |s| s.to_bits()))
                    .collect();
                let got = v.contiguous().expect("copy");
                assert_eq!(got.shape(), &shape[..]);
                let got: Vec<u64> = got.scalars().map(|s| s.to_bits()).collect();
                assert!(got == want, "{:?} {shape:?} {strides:?} +{offset}", t.dtype());
            }
        }
    }

    fn values(t: &Tensor) -> Vec<f64> {
        t.scalars().map(|s| s.to_f64()).collect()
    }

    #[test]
    fn views_share_storage_and_index_right() {
        let x = t((0..6).map(f64::from).collect(), vec![2, 3]);
        assert_eq!(values(&x.reversed_axes()), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
        let row = x.index(&[IndexItem::Single(-1)]).expect("ok");
        assert_eq!(
            (row.shape().to_vec(), values(&row)),
            (vec![3], vec![3.0, 4.0, 5.0])
        );
        let col = x
            .index(&[IndexItem::Slice(None, None, None), IndexItem::Single(0)])
            .expect("ok");
        assert_eq!(values(&col), vec![0.0, 3.0]);
        let rev = x
            .index(&[
                IndexItem::Slice(None, None, Some(-1)),
                IndexItem::Slice(None, None, Some(-2)),
            ])
            .expect("ok");
        assert_eq!(values(&rev), vec![5.0, 3.0, 2.0, 0.0]);
        assert!(x.index(&[IndexItem::Single(2)]).is_err());
        assert!(x
            .index(&[IndexItem::Single(0), IndexItem::Single(0), IndexItem::Single(0)])
            .is_err());
    }

    #[test]
    fn slices_follow_python() {
        assert_eq!(slice_bounds(None, None, Some(-1), 4), Ok((3, 4, -1)));
        assert_eq!(slice_bounds(Some(1), Some(100), None, 4), Ok((1, 3, 1)));
        assert_eq!(slice_bounds(Some(3), Some(1), None, 5), Ok((0, 0, 1)));
        assert_eq!(slice_bounds(None, None, Some(2), 5), Ok((0, 3, 2)));
        assert!(slice_bounds(None, None, Some(0), 5).is_err());
        // Steps near ±2^63 (NumPy: one element), and a huge axis.
        assert_eq!(slice_bounds(None, None, Some(i64::MAX), 10), Ok((0, 1, i64::MAX)));
        assert_eq!(slice_bounds(None, None, Some(i64::MIN), 10), Ok((9, 1, i64::MIN)));
        assert_eq!(
            slice_bounds(None, None, Some(1 << 62), i64::MAX),
            Ok((0, 2, 1 << 62))
        );
    }

    #[test]
    fn huge_shapes_are_errors() {
        assert!(Tensor::zeros(vec![1 << 40, 1 << 40], DType::F64).is_err());
        assert!(numel_of(&[usize::MAX, 2]).is_err());
    }
}
