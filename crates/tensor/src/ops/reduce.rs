//! The reductions of spec §4.1 — `sum mean prod max min median var std
//! argmax argmin all any logsumexp`, and §11.3's `quantile` — the scans
//! `cumsum cumprod` and the normalisers `softmax log_softmax`, for every
//! dtype, over any set of axes; and `nonzero`'s indices, which count as
//! `count_nonzero` does.
//!
//! Every accumulation follows the fixed order of spec §5 extension 4, so the
//! bits of a result depend on the shape alone, never on the thread count or
//! the instruction set: the reduced elements of one output, in row-major
//! order, are cut into blocks of [`BLOCK`]; inside a block element `i` goes to
//! lane `i mod 16`, each lane folds its elements in order starting from its
//! first, and the non-empty lanes meet in a balanced pairwise tree; the block
//! results are folded in block order. The sixteen lanes are the reason the
//! kernels are fast as well as exact: a `[f32; 16]` of independent
//! accumulators updated from chunks of sixteen elements is what LLVM turns
//! into SIMD adds, and each SIMD lane does precisely what the spec's lane
//! does. Parallelism is over output positions, or over whole blocks whose
//! results are then folded in order, so it cannot change a bit either.
//!
//! Each input element is first widened exactly to its accumulation type
//! (`bf16`, `f16` and `f32` to `f32`, `f64` stays, integers to `i32` for
//! `sum prod cumsum cumprod`), and every step is one operation in that type,
//! which is the seed's `acc_add`: an IEEE f32 addition is the f64 sum
//! rounded to f32. Derived quantities (a mean, a variance's divisor, the
//! exponentials and quotients of `softmax`) are computed in f64 and rounded
//! once. The operations whose result cannot be an integer (`mean median var
//! std softmax log_softmax logsumexp`) work on an integer input promoted to
//! f32 first, as `x.to(f32)` would (spec §5, `float_result`).

use std::mem::MaybeUninit;

use half::{bf16, f16};
use rayon::prelude::*;

use super::args::{Arg, Args, Out};
use super::order::{keys_of, rank, Ordered};
use crate::convert::f16_bits_to_f32_or_nan;
use crate::dispatch;
use crate::dtype::DType;
use crate::error::AllocError;
use crate::math;
use crate::storage::{try_collect, try_filled, try_vec, Accumulate, Element, Storage};
use crate::tensor::{normalize_axis, numel_of, shape_str, Tensor, TensorError};

/// Elements per block of the fixed reduction order (spec §5 extension 4).
pub const BLOCK: usize = 16384;
/// Lanes per block.
pub const LANES: usize = 16;

fn err<T>(msg: String) -> Result<T, TensorError> {
    Err(TensorError(msg))
}

// ---------------------------------------------------------------------------
// Number types

/// What the reductions make of an element type: the dtype `sum prod cumsum
/// cumprod` give (`Sum`: `sum_result`, which for the floats is their own
/// dtype and for bool, i8 and i32 the i32 they accumulate in, spec §5
/// extension 2), and, for the operations whose result cannot be an integer,
/// the float the element becomes (`Float`: `float_result`, f32 for the
/// integer kinds) with its value in that float's accumulation type.
pub trait Reduced: Element {
    type Sum: Element;
    type Float: Element;
    /// What `max`/`min`/`argmax`/`argmin` compare: the element itself, or
    /// for bf16 and f16 its exact f32 (compared as one instruction, where
    /// `half`'s comparisons are library code) — exact and ordered as the
    /// element is, NaNs kept NaN.
    type Key: Element + PartialOrd;
    fn key(self) -> Self::Key;
    /// The element as `Float` would hold it, widened exactly into its
    /// accumulation type (an i32 above 2^24 rounds once, as `x.to(f32)`).
    fn float_acc(self) -> FloatAcc<Self>;
}

/// The accumulation type of an element's `Float`.
type FloatAcc<T> = <<T as Reduced>::Float as Element>::Acc;

impl Reduced for bool {
    type Sum = i32;
    type Float = f32;
    type Key = bool;
    #[inline(always)]
    fn key(self) -> bool {
        self
    }
    #[inline(always)]
    fn float_acc(self) -> f32 {
        if self {
            1.0
        } else {
            0.0
        }
    }
}
impl Reduced for i8 {
    type Sum = i32;
    type Float = f32;
    type Key = i8;
    #[inline(always)]
    fn key(self) -> i8 {
        self
    }
    #[inline(always)]
    fn float_acc(self) -> f32 {
        f32::from(self)
    }
}
impl Reduced for i32 {
    type Sum = i32;
    type Float = f32;
    type Key = i32;
    #[inline(always)]
    fn key(self) -> i32 {
        self
    }
    #[inline(always)]
    fn float_acc(self) -> f32 {
        // `as` rounds an i32 to the nearest f32, ties to even: the cast.
        self as f32
    }
}
impl Reduced for bf16 {
    type Sum = bf16;
    type Float = bf16;
    type Key = f32;
    #[inline(always)]
    fn key(self) -> f32 {
        self.widen()
    }
    #[inline(always)]
    fn float_acc(self) -> f32 {
        self.widen()
    }
}
impl Reduced for f16 {
    type Sum = f16;
    type Float = f16;
    type Key = f32;
    #[inline(always)]
    fn key(self) -> f32 {
        f16_bits_to_f32_or_nan(self.to_bits())
    }
    #[inline(always)]
    fn float_acc(self) -> f32 {
        self.widen()
    }
}
impl Reduced for f32 {
    type Sum = f32;
    type Float = f32;
    type Key = f32;
    #[inline(always)]
    fn key(self) -> f32 {
        self
    }
    #[inline(always)]
    fn float_acc(self) -> f32 {
        self
    }
}
impl Reduced for f64 {
    type Sum = f64;
    type Float = f64;
    type Key = f64;
    #[inline(always)]
    fn key(self) -> f64 {
        self
    }
    #[inline(always)]
    fn float_acc(self) -> f64 {
        self
    }
}

// ---------------------------------------------------------------------------
// The fixed order of accumulation

/// The balanced pairwise tree over the first `k` lanes: (0,1), (2,3), …,
/// then pairs of those; an odd lane out passes through unchanged.
#[inline(always)]
fn tree<A: Clone>(v: &mut [A; LANES], mut k: usize, op: impl Fn(A, A) -> A) -> A {
    while k > 1 {
        let half = k.div_ceil(2);
        for j in 0..half {
            // Reads lanes 2j and 2j+1, both at or after j, so writing lane j
            // in place never clobbers a lane still to be read.
            v[j] = if 2 * j + 1 < k {
                op(v[2 * j].clone(), v[2 * j + 1].clone())
            } else {
                v[2 * j].clone()
            };
        }
        k = half;
    }
    v[0].clone()
}

/// One block: lane `i mod 16` folds element `i`, starting from its first
/// element, then the lanes meet in the tree. `None` for an empty block.
#[inline(always)]
fn fold_block<T: Copy, A: Copy>(block: &[T], w: impl Fn(T) -> A, op: impl Fn(A, A) -> A + Copy) -> Option<A> {
    let &first = block.first()?;
    let mut lanes = [w(first); LANES];
    if block.len() < LANES {
        for (l, &x) in lanes.iter_mut().zip(block) {
            *l = w(x);
        }
        return Some(tree(&mut lanes, block.len(), op));
    }
    let (head, rest) = block.split_at(LANES);
    for (l, &x) in lanes.iter_mut().zip(head) {
        *l = w(x);
    }
    let mut chunks = rest.chunks_exact(LANES);
    for c in &mut chunks {
        // Sixteen independent accumulators: this is the loop LLVM turns
        // into SIMD operations, each SIMD lane one of the spec's lanes.
        for (l, &x) in lanes.iter_mut().zip(c) {
            *l = op(*l, w(x));
        }
    }
    for (l, &x) in lanes.iter_mut().zip(chunks.remainder()) {
        *l = op(*l, w(x));
    }
    Some(tree(&mut lanes, LANES, op))
}

/// Below this many elements in all, a reduction runs on the calling
/// thread: handing work to the pool costs more than it saves. (Any split
/// gives the same bits.)
const PAR_MIN: usize = 1 << 15;

/// Rows at least this long fold their blocks in parallel.
const PAR_ROW: usize = 2 * BLOCK;

/// The reduction of one row in the fixed order; `empty` for no elements.
/// Long rows reduce their blocks in parallel and fold the block results in
/// block order afterwards, which is the same arithmetic in the same order.
#[inline(always)]
fn fold_row<T: Copy + Sync, A: Copy + Send>(
    row: &[T],
    empty: A,
    w: impl Fn(T) -> A + Sync + Copy,
    op: impl Fn(A, A) -> A + Sync + Copy,
) -> A {
    if row.len() >= PAR_ROW {
        let parts: Vec<A> = row
            .par_chunks(BLOCK)
            .filter_map(|b| fold_block(b, w, op))
            .collect();
        return in_order(parts.into_iter(), empty, op);
    }
    in_order(row.chunks(BLOCK).filter_map(|b| fold_block(b, w, op)), empty, op)
}

/// Block results folded in block order, starting from the first.
#[inline(always)]
fn in_order<A>(mut blocks: impl Iterator<Item = A>, empty: A, op: impl Fn(A, A) -> A) -> A {
    match blocks.next() {
        Some(first) => blocks.fold(first, op),
        None => empty,
    }
}

// ---------------------------------------------------------------------------
// Layout: the reduced elements of each output as one contiguous row

/// A tensor seen as `m` rows of `n` elements, row `o` holding the elements
/// that output position `o` reduces (or scans), in row-major order.
struct Rows {
    /// Row-major in storage from `start` (a view, or a packed copy).
    t: Tensor,
    start: usize,
    m: usize,
    n: usize,
}

impl Rows {
    fn data<T: Element>(&self) -> &[T] {
        T::slice(self.t.storage())
            .and_then(|s| s.get(self.start..self.start + self.m * self.n))
            .unwrap_or(&[])
    }

    /// Applies `f` to every row, in parallel over rows, collecting in order.
    /// The results are allocated up front (an error when they do not fit).
    fn map<T: Element, R: Send>(&self, f: impl Fn(&[T]) -> R + Sync + Send) -> Result<Vec<R>, TensorError> {
        let data = self.data::<T>();
        let mut out = try_vec(self.m)?;
        if self.n == 0 {
            out.extend((0..self.m).map(|_| f(&[])));
        } else if self.n >= PAR_ROW || self.m * self.n < PAR_MIN {
            // Few long rows: `f` parallelises inside the row; or too little
            // work to be worth handing to other threads.
            out.extend(data.chunks(self.n).map(f));
        } else {
            out.par_extend(
                data.par_chunks(self.n)
                    .with_min_len((BLOCK / self.n).max(1))
                    .map(f),
            );
        }
        Ok(out)
    }
}

/// Whether a view's elements, in row-major order, are consecutive in
/// storage from its offset (axes of length 1 may have any stride).
fn row_major(t: &Tensor) -> bool {
    let mut expect = 1isize;
    for (&d, &s) in t.shape().iter().zip(t.strides()).rev() {
        if d != 1 && s != expect {
            return false;
        }
        expect = expect.saturating_mul(d as isize);
    }
    true
}

/// `x` with the axes of `mask` moved last (in their order), as rows.
fn rows(x: &Tensor, mask: &[bool]) -> Result<Rows, TensorError> {
    let kept = (0..x.ndim()).filter(|&i| !mask[i]);
    let reduced = (0..x.ndim()).filter(|&i| mask[i]);
    let perm: Vec<usize> = kept.chain(reduced).collect();
    let m = (0..x.ndim())
        .filter(|&i| !mask[i])
        .map(|i| x.shape()[i])
        .product();
    let n = (0..x.ndim()).filter(|&i| mask[i]).map(|i| x.shape()[i]).product();
    let v = x.permuted(&perm)?;
    let (t, start) = if row_major(&v) {
        let off = if v.numel() == 0 { 0 } else { v.offset() };
        (v, off)
    } else {
        (v.contiguous()?, 0)
    };
    Ok(Rows { t, start, m, n })
}

/// The axes a reduction's `axis` argument names, as a mask over `ndim`
/// axes: every axis when absent; negatives count from the end; a repeated
/// or out-of-range axis is an error. A rank-0 tensor accepts axis 0 or -1
/// (its one element), as PyTorch does.
fn axis_mask(a: &Args, ndim: usize) -> Result<Vec<bool>, TensorError> {
    let Some(list) = a.ints("axis")? else {
        return Ok(vec![true; ndim]);
    };
    let mut mask = vec![false; ndim];
    let mut scalar_seen = false;
    for &ax in &list {
        let i = axis_index(a, ax, ndim)?;
        let seen = if ndim == 0 {
            std::mem::replace(&mut scalar_seen, true)
        } else {
            std::mem::replace(&mut mask[i], true)
        };
        if seen {
            return Err(a.blame(
                "axis",
                TensorError(format!("`{}`: axis {i} is named twice in {list:?}", a.op)),
            ));
        }
    }
    Ok(mask)
}

/// A reduction's plan: the input, the axes it reduces, and the shape of its
/// result; `m` outputs of `n` reduced elements each.
struct Plan {
    x: Tensor,
    mask: Vec<bool>,
    shape: Vec<usize>,
    m: usize,
    n: usize,
}

impl Plan {
    /// The reduced elements of each output as one contiguous row.
    fn rows(&self) -> Result<Rows, TensorError> {
        rows(&self.x, &self.mask)
    }
}

fn plan(a: &Args) -> Result<(Tensor, Plan), TensorError> {
    let x = a.tensor("x")?.clone();
    let mask = axis_mask(a, x.ndim())?;
    let keepdim = a.bool("keepdim", false)?;
    let shape: Vec<usize> = x
        .shape()
        .iter()
        .zip(&mask)
        .filter_map(|(&d, &r)| match (r, keepdim) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect();
    // The result must be one that can exist (checked before any work).
    let m = numel_of(&shape)?;
    // With no outputs nothing is reduced, however long the reduced axes;
    // otherwise m·n is the input's element count, so n fits.
    let n = x
        .shape()
        .iter()
        .zip(&mask)
        .filter(|(_, &r)| r)
        .try_fold(1usize, |n, (&d, _)| n.checked_mul(d))
        .filter(|_| m > 0)
        .unwrap_or(0);
    Ok((x.clone(), Plan { x, mask, shape, m, n }))
}

/// The fold (sum, prod, mean's sum) of every output of a plan, in the
/// fixed order: by panels when the reduced axes are followed by kept ones
/// in a row-major input, else by rows.
fn fold_all<T: Element, A: Accumulate>(
    p: &Plan,
    empty: A,
    w: impl Fn(T) -> A + Sync + Send + Copy,
    op: impl Fn(A, A) -> A + Sync + Send + Copy,
) -> Result<Vec<A>, TensorError> {
    if let Some(pl) = Panels::of(p) {
        let data = T::slice(p.x.storage()).unwrap_or(&[]);
        return pl.fold(data, &p.shape, empty, w, op);
    }
    p.rows()?.map::<T, _>(|row| fold_row(row, empty, w, op))
}

/// Kept axes at least this long after the last reduced axis make a panel
/// reduction worthwhile.
const PANEL_MIN: usize = 8;
/// Columns per panel task: sixteen lanes of this many accumulators stay in
/// the first-level cache.
const PANEL_COLS: usize = 512;

/// A row-major input whose reduced axes are followed by kept axes of
/// `inner` elements in all (`x.sum(axis=0)` of a matrix). Each output's
/// reduced elements lie at the same offsets relative to their output's
/// own offset, so output positions next to each other in the inner axes
/// are next to each other in memory: one reduced index `i` reads a
/// contiguous run of `inner` elements, one per output, and feeds lane
/// `i mod 16` of each. The columns' accumulators are updated together,
/// which is what vectorises, and each does exactly the arithmetic of the
/// spec's order for its own output — nothing is copied or transposed.
struct Panels {
    start: usize,
    inner: usize,
    /// (length, stride) of the kept axes before the last reduced axis.
    outer: Vec<(usize, usize)>,
    /// (length, stride) of the reduced axes, in order.
    reduced: Vec<(usize, usize)>,
    n: usize,
}

impl Panels {
    fn of(p: &Plan) -> Option<Panels> {
        let x = &p.x;
        if !row_major(x) || p.m == 0 {
            return None;
        }
        let last = p.mask.iter().rposition(|&r| r)?;
        let inner: usize = x.shape()[last + 1..].iter().product();
        if inner < PANEL_MIN {
            return None;
        }
        let mut strides = vec![0usize; x.ndim()];
        let mut acc = 1usize;
        for (s, &d) in strides.iter_mut().zip(x.shape()).rev() {
            *s = acc;
            acc = acc.saturating_mul(d);
        }
        let axes = |want: bool| -> Vec<(usize, usize)> {
            (0..=last)
                .filter(|&i| p.mask[i] == want)
                .map(|i| (x.shape()[i], strides[i]))
                .collect()
        };
        Some(Panels {
            start: x.offset(),
            inner,
            outer: axes(false),
            reduced: axes(true),
            n: p.n,
        })
    }

    /// Every output's fold. Tasks are (panel, column chunk, block): each
    /// computes its block's result for its columns; the blocks of a column
    /// chunk are then folded in block order, so any thread count gives the
    /// same bits.
    fn fold<T: Copy + Sync, A: Accumulate>(
        &self,
        data: &[T],
        shape: &[usize],
        empty: A,
        w: impl Fn(T) -> A + Sync + Send + Copy,
        op: impl Fn(A, A) -> A + Sync + Send + Copy,
    ) -> Result<Vec<A>, TensorError> {
        // The results (of `shape`, accumulated in `A`) first: when they fit, so do the task lists below
        // (one entry per PANEL_COLS results and block); with nothing to
        // reduce they are all `empty`.
        let outputs = product(&self.outer) * self.inner;
        let mut out = try_vec(outputs).map_err(|e| e.for_tensor(A::DTYPE, shape))?;
        let blocks = self.n.div_ceil(BLOCK);
        if blocks == 0 {
            out.resize(outputs, empty);
            return Ok(out);
        }
        let bases: Vec<usize> = Walk::new(&self.outer, 0).take(product(&self.outer)).collect();
        let chunks: Vec<(usize, usize)> = (0..self.inner)
            .step_by(PANEL_COLS)
            .map(|c0| (c0, (c0 + PANEL_COLS).min(self.inner)))
            .collect();
        let tasks: Vec<(usize, (usize, usize), usize)> = bases
            .iter()
            .flat_map(|&b| {
                chunks
                    .iter()
                    .flat_map(move |&c| (0..blocks).map(move |k| (b, c, k)))
            })
            .collect();
        let parts: Vec<Vec<A>> = tasks
            .par_iter()
            .map(|&(base, (c0, c1), k)| self.block(data, self.start + base, c0, c1, k, empty, w, op))
            .collect();
        for group in parts.chunks(blocks) {
            let mut it = group.iter();
            let Some(first) = it.next() else { continue };
            let mut total = first.clone();
            for b in it {
                for (t, &v) in total.iter_mut().zip(b) {
                    *t = op(*t, v);
                }
            }
            out.extend(total);
        }
        Ok(out)
    }

    /// Block `k` of the columns `c0..c1` of the panel at `base`.
    #[allow(clippy::too_many_arguments)]
    fn block<T: Copy, A: Accumulate>(
        &self,
        data: &[T],
        base: usize,
        c0: usize,
        c1: usize,
        k: usize,
        empty: A,
        w: impl Fn(T) -> A + Copy,
        op: impl Fn(A, A) -> A + Copy,
    ) -> Vec<A> {
        let width = c1 - c0;
        let first = k * BLOCK;
        let len = BLOCK.min(self.n - first);
        let mut lanes = vec![empty; LANES * width];
        for (j, off) in Walk::new(&self.reduced, first).take(len).enumerate() {
            let start = base + off + c0;
            let row = data.get(start..start + width).unwrap_or(&[]);
            let lane = &mut lanes[(j % LANES) * width..][..width];
            if j < LANES {
                for (l, &x) in lane.iter_mut().zip(row) {
                    *l = w(x);
                }
            } else {
                for (l, &x) in lane.iter_mut().zip(row) {
                    *l = op(*l, w(x));
                }
            }
        }
        let used = len.min(LANES);
        (0..width)
            .map(|c| {
                let mut v = [empty; LANES];
                for (l, slot) in v.iter_mut().enumerate().take(used) {
                    *slot = lanes[l * width + c];
                }
                tree(&mut v, used, op)
            })
            .collect()
    }
}

fn product(axes: &[(usize, usize)]) -> usize {
    axes.iter().map(|a| a.0).product()
}

/// Storage offsets of the elements of some axes, (length, stride) each, in
/// row-major order from linear index `from`; endless (wraps around), so
/// callers `take` what they need.
struct Walk<'a> {
    axes: &'a [(usize, usize)],
    index: Vec<usize>,
    offset: usize,
}

impl<'a> Walk<'a> {
    fn new(axes: &'a [(usize, usize)], from: usize) -> Walk<'a> {
        let mut index = vec![0; axes.len()];
        let mut rest = from;
        let mut offset = 0;
        for (i, &(d, s)) in index.iter_mut().zip(axes).rev() {
            *i = rest % d.max(1);
            rest /= d.max(1);
            offset += *i * s;
        }
        Walk { axes, index, offset }
    }
}

impl Iterator for Walk<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let cur = self.offset;
        for (i, &(d, s)) in self.index.iter_mut().zip(self.axes).rev() {
            *i += 1;
            self.offset += s;
            if *i < d {
                return Some(cur);
            }
            self.offset -= s * d;
            *i = 0;
        }
        Some(cur)
    }
}

fn tensor_out(data: Storage, shape: Vec<usize>) -> Result<Out, TensorError> {
    Ok(Out::Tensor(Tensor::from_storage(data, shape)?))
}

/// Results computed in f64, each rounded once into `O`, in storage
/// allocated up front.
fn stored<O: Element, I>(vals: I) -> Result<Storage, TensorError>
where
    I: IntoIterator<Item = f64>,
    I::IntoIter: ExactSizeIterator,
{
    let vals = vals.into_iter();
    Ok(O::into_storage(try_collect(vals.len(), vals.map(O::from_f64))?))
}

/// Selections (max, min, argmax, argmin) have no value for an empty row.
fn non_empty(a: &Args, p: &Plan, x: &Tensor) -> Result<(), TensorError> {
    if p.n == 0 && p.m > 0 {
        return err(format!(
            "`{}` of an empty reduction (shape {}) has no value",
            a.op,
            shape_str(x.shape())
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// sum, prod, mean, var, std, logsumexp

pub(super) fn sum(a: &Args) -> Result<Out, TensorError> {
    if let Some(fmt) = a.format("acc")? {
        return sum_every_step(a, fmt);
    }
    let (x, p) = plan(a)?;
    let data = dispatch!(x.dtype(), T => {
        let v = fold_all::<T, _>(&p, <<T as Element>::Acc as Accumulate>::ZERO, <T as Element>::widen, Accumulate::add)?;
        stored::<<T as Reduced>::Sum, _>(v.into_iter().map(Element::to_f64))?
    });
    tensor_out(data, p.shape)
}

/// `count_nonzero(x, axis=all)`: how many elements are nonzero (NaN is),
/// i32 — the `sum` of `x != 0` taken element by element where the fold
/// meets it, without first writing the bool tensor. Its adds wrap in i32
/// like every integer sum (the count cannot reach 2^31 in a tensor that
/// fits in memory, since `numel` of a size that large is refused first).
pub(super) fn count_nonzero(a: &Args) -> Result<Out, TensorError> {
    let (x, p) = plan(a)?;
    let counts = dispatch!(x.dtype(), T => {
        if Panels::of(&p).is_some() {
            fold_all::<T, i32>(&p, 0, |v: T| i32::from(nonzero(v)), Accumulate::add)?
        } else {
            p.rows()?.map::<T, _>(count_row)?
        }
    });
    tensor_out(Storage::I32(counts), p.shape)
}

/// The nonzero elements of one row, counted in chunks (in parallel for a
/// long row) whose u32 counts vectorise, where the laned fold widens
/// every element to an i32 lane; the total wraps into i32 as the fold's
/// adds would.
fn count_row<T: Reduced>(row: &[T]) -> i32 {
    const CHUNK: usize = 1 << 16;
    let part = |c: &[T]| -> usize {
        crate::isa::wide(
            #[inline(always)]
            || c.iter().fold(0u32, |n, &v| n + u32::from(nonzero(v))) as usize,
        )
    };
    let n: usize = if row.len() >= PAR_ROW {
        row.par_chunks(CHUNK).map(part).sum()
    } else {
        row.chunks(CHUNK).map(part).sum()
    };
    n as i32
}

/// `sum(x, acc=fmt)`, the formats lab's EVERY_STEP model (spec §13): each
/// element rounded to `fmt`, then this module's fixed order with every
/// addition rounded to `fmt`; the result in x's dtype (f64, or f32 when
/// the format fits in f32).
fn sum_every_step(a: &Args, fmt: crate::lab::Format) -> Result<Out, TensorError> {
    let (x, mut p) = plan(a)?;
    let (dt, wide) = super::lab::every_step_input(a, "sum", &x, fmt)?;
    p.x = wide;
    let v = fold_all::<f64, f64>(
        &p,
        0.0,
        move |e| fmt.round(e).unwrap_or(e),
        move |s, e| fmt.add(s, e),
    )?;
    Ok(Out::Tensor(super::lab::stored(v, dt, p.shape)?))
}

pub(super) fn prod(a: &Args) -> Result<Out, TensorError> {
    let (x, p) = plan(a)?;
    let data = dispatch!(x.dtype(), T => {
        let v = fold_all::<T, _>(&p, <<T as Element>::Acc as Accumulate>::ONE, <T as Element>::widen, Accumulate::mul)?;
        stored::<<T as Reduced>::Sum, _>(v.into_iter().map(Element::to_f64))?
    });
    tensor_out(data, p.shape)
}

/// mean = round_res(acc / n), the division in f64.
pub(super) fn mean(a: &Args) -> Result<Out, TensorError> {
    let (x, p) = plan(a)?;
    let n = p.n as f64;
    let data = dispatch!(x.dtype(), T => {
        let v = fold_all::<T, _>(&p, <FloatAcc<T> as Accumulate>::ZERO, <T as Reduced>::float_acc, Accumulate::add)?;
        stored::<<T as Reduced>::Float, _>(v.into_iter().map(|s| s.to_f64() / n))?
    });
    tensor_out(data, p.shape)
}

/// tree(d) / (n − ddof) in f64, for var and std: μ = acc / n unrounded,
/// d_i = round_acc((x_i − μ)²). A divisor below zero is clamped to zero,
/// as NumPy does, so too large a ddof gives inf or NaN rather than a
/// negative variance.
fn spread<T: Reduced>(row: &[T], ddof: i64) -> f64 {
    let n = row.len();
    let mu = fold_row(
        row,
        <FloatAcc<T> as Accumulate>::ZERO,
        T::float_acc,
        Accumulate::add,
    )
    .to_f64()
        / n as f64;
    let d = fold_row(
        row,
        <FloatAcc<T> as Accumulate>::ZERO,
        |x: T| {
            let t = x.float_acc().to_f64() - mu;
            <FloatAcc<T> as Element>::from_f64(t * t)
        },
        Accumulate::add,
    );
    let divisor = (n as i64).saturating_sub(ddof).max(0);
    d.to_f64() / divisor as f64
}

fn ddof(a: &Args) -> Result<i64, TensorError> {
    Ok(a.int("ddof")?.unwrap_or(0))
}

pub(super) fn var(a: &Args) -> Result<Out, TensorError> {
    let ddof = ddof(a)?;
    let (x, p) = plan(a)?;
    let data = dispatch!(x.dtype(), T => {
        stored::<<T as Reduced>::Float, _>(p.rows()?.map::<T, _>(|row| spread(row, ddof))?)?
    });
    tensor_out(data, p.shape)
}

pub(super) fn std(a: &Args) -> Result<Out, TensorError> {
    let ddof = ddof(a)?;
    let (x, p) = plan(a)?;
    let data = dispatch!(x.dtype(), T => {
        stored::<<T as Reduced>::Float, _>(p.rows()?.map::<T, _>(|row| math::sqrt(spread(row, ddof)))?)?
    });
    tensor_out(data, p.shape)
}

/// The largest element of a row as an f64, NaN if any element is NaN,
/// −inf for an empty row, as `float_acc` holds it: `max`'s search, its key
/// (the element's exact value) then rounded as `float_acc` rounds, which
/// is the largest rounded element since rounding is monotone. Only the
/// value matters here (softmax and logsumexp), so which of a −0/+0 tie it
/// names does not.
#[inline(always)]
fn max_value<T: Reduced>(row: &[T]) -> f64 {
    match select(row, true, false, false) {
        None => f64::NEG_INFINITY,
        Some(p) if p.nan => f64::NAN,
        Some(p) => T::from_f64(p.key.to_f64()).float_acc().to_f64(),
    }
}

/// NaN is the one value not equal to itself.
#[allow(clippy::eq_op)]
#[inline(always)]
fn is_nan<T: PartialEq>(x: T) -> bool {
    x != x
}

/// logsumexp = round_res(m + log s), s = tree(round_acc(exp(x_i − m))).
/// As PyTorch does, an infinite maximum shifts by 0 instead, so an all
/// −inf row gives −inf (spec §5.4) and a row holding +inf gives +inf; an
/// empty row gives log 0 = −inf.
pub(super) fn logsumexp(a: &Args) -> Result<Out, TensorError> {
    let (x, p) = plan(a)?;
    let data = dispatch!(x.dtype(), T => {
        let rows = p.rows()?.map::<T, _>(|row| -> Result<f64, AllocError> {
            let m = max_value(row);
            let shift = if m.is_infinite() { 0.0 } else { m };
            // A row's exponentials are kept for the fixed summation tree:
            // a row too long for memory is an error, not an abort.
            let mut e = crate::storage::try_vec(row.len())?;
            exps(row, shift, &mut e);
            let s = fold_row(&e, <FloatAcc<T> as Accumulate>::ZERO, |v| v, Accumulate::add);
            Ok(shift + math::log(s.to_f64()))
        })?;
        let mut v = crate::storage::try_vec(rows.len())?;
        for r in rows {
            v.push(r?);
        }
        stored::<<T as Reduced>::Float, _>(v)?
    });
    tensor_out(data, p.shape)
}

/// e_i = round_acc(exp(x_i − shift)) for every element of a row, into `e`.
fn exps<T: Reduced>(row: &[T], shift: f64, e: &mut Vec<FloatAcc<T>>) {
    #[cfg(target_arch = "x86_64")]
    if crate::isa::allows(crate::isa::Level::Avx2) && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, which is all the function asks for.
        return unsafe { exps_avx2::<T>(row, shift, e) };
    }
    exps_body::<T>(row, shift, e)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn exps_avx2<T: Reduced>(row: &[T], shift: f64, e: &mut Vec<FloatAcc<T>>) {
    exps_body::<T>(row, shift, e)
}

#[inline(always)]
fn exps_body<T: Reduced>(row: &[T], shift: f64, e: &mut Vec<FloatAcc<T>>) {
    e.clear();
    e.reserve(row.len());
    let mut chunks = row.chunks_exact(EXP_LANES);
    for c in &mut chunks {
        let mut d = [0.0; EXP_LANES];
        for (d, &x) in d.iter_mut().zip(c) {
            *d = x.float_acc().to_f64() - shift;
        }
        e.extend(
            exp_lanes(d)
                .iter()
                .map(|&v| <FloatAcc<T> as Element>::from_f64(v)),
        );
    }
    for &x in chunks.remainder() {
        e.push(<FloatAcc<T> as Element>::from_f64(math::exp(
            x.float_acc().to_f64() - shift,
        )));
    }
}

// libm's `exp` (FreeBSD's e_exp.c, which `math::exp` calls), restated for
// several arguments at once. Its constants (by their bits, as e_exp.c
// lists them), and below its operations in
// the same order, so that each lane computes exactly the bits of
// `math::exp`: IEEE arithmetic is deterministic, and Rust never fuses a
// multiply and an add on its own. Lanes whose argument needs one of the
// scalar routine's special cases make the whole group take `math::exp`.
const EXP_LANES: usize = 8;
const LN2HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
const LN2LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
const INVLN2: f64 = f64::from_bits(0x3ff7_1547_652b_82fe);
const P1: f64 = f64::from_bits(0x3fc5_5555_5555_553e);
const P2: f64 = f64::from_bits(0xbf66_c16c_16be_bd93);
const P3: f64 = f64::from_bits(0x3f11_566a_af25_de2c);
const P4: f64 = f64::from_bits(0xbebb_bd41_c5d2_6bf1);
const P5: f64 = f64::from_bits(0x3e66_3769_72be_a4d0);
const EXP_BIAS_MAGIC: f64 = 4_503_599_627_371_519.0; // 2^52 + 1023

/// `math::exp` of each lane, bit for bit; written without branches inside
/// the lane loop so that it vectorises.
#[inline(always)]
fn exp_lanes(x: [f64; EXP_LANES]) -> [f64; EXP_LANES] {
    // |x| ≥ 708.39… (overflow, underflow, inf, NaN) is the scalar routine's
    // special case; everything below it is the main path or 1 + x.
    if x.iter()
        .any(|v| (v.to_bits() >> 32) as u32 & 0x7fff_ffff >= 0x4086_232b)
    {
        return x.map(math::exp);
    }
    let mut out = [0.0; EXP_LANES];
    for (o, &v) in out.iter_mut().zip(&x) {
        let hx = (v.to_bits() >> 32) as u32 & 0x7fff_ffff;
        let negative = v.to_bits() >> 63 == 1;
        // Argument reduction, x = k·ln2 + r, choosing k as the scalar code
        // does in each of its three ranges. k is kept as an f64: the
        // scalar code's `(INVLN2 * x + ±0.5) as i32` truncates a value of
        // magnitude below 1023, which `trunc` does exactly, without the
        // saturating conversion that would not vectorise.
        let far = (INVLN2 * v + if negative { -0.5 } else { 0.5 }).trunc();
        let near = if negative { -1.0 } else { 1.0 };
        let kf = if hx >= 0x3ff0_a2b2 {
            far
        } else if hx > 0x3fd6_2e42 {
            near
        } else {
            0.0
        };
        // With k = 0 these are hi = x, lo = 0, r = x exactly, as there.
        let hi = v - kf * LN2HI;
        let lo = kf * LN2LO;
        let r = hi - lo;
        let xx = r * r;
        let c = r - xx * (P1 + xx * (P2 + xx * (P3 + xx * (P4 + xx * P5))));
        let y = 1.0 + (r * c / (2.0 - c) - lo + hi);
        // scalbn(y, k) for |k| ≤ 1022 is one multiplication by 2^k (and
        // k = 0 multiplies by 1). Adding 2^52 + 1023 puts the integer
        // k + 1023 (at most 2045) in the low mantissa bits, and the shift
        // moves it into the exponent field of 2^k.
        let biased = (kf + EXP_BIAS_MAGIC).to_bits() << 52;
        let scaled = y * f64::from_bits(biased);
        *o = if hx > 0x3e30_0000 { scaled } else { 1.0 + v };
    }
    out
}

// ---------------------------------------------------------------------------
// max, min, argmax, argmin, median, all, any

/// Elements per step of [`pick`]'s scans: a block is searched in full
/// (branch-free, so that it vectorises), and the scan stops after the block
/// that settles the answer.
const PICK_BLOCK: usize = 1024;
/// Rows at least this long are searched in parallel chunks of this length.
const PICK_PAR: usize = 1 << 16;

/// What a search of some elements found: whether there was a candidate
/// (with `skip_nan`, a part of NaNs has none), the key of the first NaN or
/// else of the extreme, and its position where the search was asked for
/// one (see [`pick`]).
#[derive(Clone, Copy)]
struct Picked<K> {
    found: bool,
    at: usize,
    key: K,
    nan: bool,
}

/// The key no element can beat, for the integer kinds (whose search may
/// stop when it meets one); none for the floats, where a later NaN wins.
fn unbeatable<T: Reduced>(want_max: bool) -> Option<T::Key> {
    let v = match (T::DTYPE, want_max) {
        (DType::Bool, true) => 1.0,
        (DType::Bool, false) => 0.0,
        (DType::I8, true) => f64::from(i8::MAX),
        (DType::I8, false) => f64::from(i8::MIN),
        (DType::I32, true) => f64::from(i32::MAX),
        (DType::I32, false) => f64::from(i32::MIN),
        (DType::Bf16 | DType::F16 | DType::F32 | DType::F64, _) => return None,
    };
    Some(<T::Key as Element>::from_f64(v))
}

/// Whether a key's position must be found even when only the value is
/// wanted: a zero, whose sign is the first tied element's.
#[inline(always)]
fn signed_zero<K: Element>(k: K) -> bool {
    K::DTYPE.is_float() && k.to_f64() == 0.0
}

/// The first position in `part` whose key `hit` accepts: blocks tested
/// in full (branch-free), then the block with a hit searched.
#[inline(always)]
fn first_where<T: Reduced>(part: &[T], hit: impl Fn(T::Key) -> bool) -> Option<usize> {
    for (b, block) in part.chunks(PICK_BLOCK).enumerate() {
        if block.iter().fold(false, |h, &x| h | hit(x.key())) {
            return block
                .iter()
                .position(|&x| hit(x.key()))
                .map(|i| b * PICK_BLOCK + i);
        }
    }
    None
}

impl<K: Element> Picked<K> {
    /// What a search of no elements found: no candidate.
    fn none() -> Picked<K> {
        Picked {
            found: false,
            at: 0,
            key: K::from_f64(0.0),
            nan: false,
        }
    }
}

/// [`select`] over a part of a float row that fits one thread: a pass for
/// the extreme key (sixteen lanes; with `skip_nan` a NaN is no candidate
/// at all), block by block, stopping at the first block with a NaN;
/// then, when `at` is wanted or the extreme is a zero, a pass for its
/// first position.
#[inline(always)]
fn pick<T: Reduced, const MAX: bool>(part: &[T], skip_nan: bool, want_at: bool) -> Picked<T::Key> {
    // A constant, so that the loops below compare one way only.
    let want_max = MAX;
    let better = |u: T::Key, v: T::Key| if MAX { u > v } else { u < v };

    let Some(&first) = part.first() else {
        return Picked::none();
    };
    let start = if skip_nan && T::DTYPE.is_float() {
        // The opposite infinity loses to every element but NaN (and ties
        // one equal to it, which is then found below).
        <T::Key as Element>::from_f64(if want_max {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        })
    } else {
        first.key()
    };
    let mut lanes = [start; LANES];
    // Whether an element that is not NaN has been met.
    let mut found = !skip_nan;
    for block in part.chunks(PICK_BLOCK) {
        // Three simple loops over a block in cache vectorise where one
        // loop doing all three would not: the extreme (a NaN never wins a
        // comparison), whether there is a NaN, whether there is another.
        let mut chunks = block.chunks_exact(LANES);
        for c in &mut chunks {
            for j in 0..LANES {
                let v = c[j].key();
                lanes[j] = if better(v, lanes[j]) { v } else { lanes[j] };
            }
        }
        for (j, &x) in chunks.remainder().iter().enumerate() {
            let v = x.key();
            lanes[j] = if better(v, lanes[j]) { v } else { lanes[j] };
        }
        let has_nan = block.iter().fold(false, |a, &x| a | is_nan(x.key()));
        if skip_nan && !found {
            found = block.iter().fold(false, |a, &x| a | !is_nan(x.key()));
        }
        if !skip_nan && has_nan {
            // The first NaN is in this block, the first block with one.
            let at = first_where(part, is_nan).unwrap_or(0);
            return Picked {
                found: true,
                at,
                key: start,
                nan: true,
            };
        }
    }
    let key = lanes.iter().fold(start, |m, &v| if better(v, m) { v } else { m });
    // Only NaNs (`skip_nan`): no candidate.
    if !found || !(want_at || signed_zero(key)) {
        return Picked {
            found,
            at: 0,
            key,
            nan: false,
        };
    }
    // Equal keys are equal values but for −0 = +0, which tie: the first
    // of the tied elements is the one `argmax` names.
    let at = first_where(part, |k| k == key).unwrap_or(0);
    Picked {
        found,
        at,
        key,
        nan: false,
    }
}

/// [`pick`] for a row that cannot hold NaN (bool, i8, i32): the extreme
/// as one fold per block, which LLVM vectorises as a max or min
/// reduction with lanes of its own choosing (any grouping gives the same
/// extreme of integers; [`pick`]'s sixteen lanes of one byte each made it
/// vectorise across its chunks instead, a byte insert per element: `max`
/// of 1e7 i8 took 1.5 ms, folded 0.3), stopping after a block that holds
/// an unbeatable element; then, when `at` is wanted, its first position.
#[inline(always)]
fn pick_int<T: Reduced, const MAX: bool>(part: &[T], want_at: bool) -> Picked<T::Key> {
    let better = |u: T::Key, v: T::Key| if MAX { u > v } else { u < v };
    let Some(&first) = part.first() else {
        return Picked::none();
    };
    let top = unbeatable::<T>(MAX);
    if let (DType::Bool, Some(top)) = (T::DTYPE, top) {
        // Two values: the first of the wanted one, or else the other one,
        // everywhere, whose first is at 0 — one pass, in 64-element
        // chunks tested in full, that stops at the chunk of the hit.
        let hit = part.chunks(64).enumerate().find_map(|(c, chunk)| {
            if chunk.iter().fold(false, |h, &x| h | (x.key() == top)) {
                chunk.iter().position(|&x| x.key() == top).map(|i| c * 64 + i)
            } else {
                None
            }
        });
        return match hit {
            Some(at) => Picked {
                found: true,
                at,
                key: top,
                nan: false,
            },
            None => Picked {
                found: true,
                at: 0,
                key: first.key(),
                nan: false,
            },
        };
    }
    let mut key = first.key();
    for block in part.chunks(PICK_BLOCK) {
        key = block.iter().fold(key, |m, &x| {
            let v = x.key();
            if better(v, m) {
                v
            } else {
                m
            }
        });
        if top == Some(key) {
            break;
        }
    }
    let at = if want_at {
        first_where(part, |k| k == key).unwrap_or(0)
    } else {
        0
    };
    Picked {
        found: true,
        at,
        key,
        nan: false,
    }
}

/// [`pick_int`] or [`pick`], as the dtype can or cannot hold NaN, on the
/// widest vector unit.
#[inline(always)]
fn pick_in<T: Reduced, const MAX: bool>(part: &[T], skip_nan: bool, want_at: bool) -> Picked<T::Key> {
    crate::isa::wide(
        #[inline(always)]
        || match T::DTYPE {
            DType::Bool | DType::I8 | DType::I32 => pick_int::<T, MAX>(part, want_at),
            DType::Bf16 | DType::F16 | DType::F32 | DType::F64 => pick::<T, MAX>(part, skip_nan, want_at),
        },
    )
}

/// The first maximum of a row (`want_max`) or its first minimum, or its
/// first NaN, which wins outright (PyTorch, spec §5 extension 5); with
/// `skip_nan`, the first extreme of the non-NaN elements (`None` when there
/// is none). The result of `max` is the element `argmax` names, so a tie
/// between −0 and +0 keeps the first. Long rows are searched in parallel
/// chunks whose answers are combined in row order, which is the same
/// answer; an integer row's first chunk is searched alone first, since an
/// unbeatable element there ends the search. The position in the result
/// is meaningful when `want_at`, or when the extreme is a NaN or a zero.
fn select<T: Reduced>(row: &[T], want_max: bool, skip_nan: bool, want_at: bool) -> Option<Picked<T::Key>> {
    let search = |part: &[T]| {
        if want_max {
            pick_in::<T, true>(part, skip_nan, want_at)
        } else {
            pick_in::<T, false>(part, skip_nan, want_at)
        }
    };
    let early = unbeatable::<T>(want_max);
    let p = if row.len() >= 2 * PICK_PAR {
        let better = |u: T::Key, v: T::Key| if want_max { u > v } else { u < v };
        let combine = |l: Picked<T::Key>, r: Picked<T::Key>| {
            // The earlier part wins unless it lacks a NaN and the later
            // part has one or a strictly better extreme.
            if !l.found || (r.found && !l.nan && (r.nan || better(r.key, l.key))) {
                r
            } else {
                l
            }
        };
        let (head, rest) = row.split_at(PICK_PAR);
        let first = search(head);
        if early.is_some_and(|t| first.found && first.key == t) {
            first
        } else {
            let later = rest
                .par_chunks(PICK_PAR)
                .enumerate()
                .map(|(c, part)| {
                    let mut p = search(part);
                    p.at += (c + 1) * PICK_PAR;
                    p
                })
                .reduce_with(combine);
            match later {
                Some(r) => combine(first, r),
                None => first,
            }
        }
    } else {
        search(row)
    };
    p.found.then_some(p)
}

/// The extreme of a row as an element: the key's value, or the element at
/// its position when the sign or payload matters (a zero, a NaN).
#[inline(always)]
fn extreme_value<T: Reduced>(row: &[T], p: Picked<T::Key>) -> Option<T> {
    if p.nan || signed_zero(p.key) {
        row.get(p.at).copied()
    } else {
        Some(T::from_f64(p.key.to_f64()))
    }
}

fn extreme(a: &Args, want_max: bool, index: bool) -> Result<Out, TensorError> {
    let (x, p) = plan(a)?;
    non_empty(a, &p, &x)?;
    if index && p.n > i32::MAX as usize {
        return err(format!("`{}`: {} elements cannot be indexed by i32", a.op, p.n));
    }
    let data = dispatch!(x.dtype(), T => {
        if index {
            Storage::I32(p.rows()?.map::<T, _>(|row| select(row, want_max, false, true).map_or(0, |p| p.at) as i32)?)
        } else {
            let picked: Option<Vec<T>> = p
                .rows()?
                .map::<T, _>(|row| select(row, want_max, false, false).and_then(|p| extreme_value(row, p)))?
                .into_iter()
                .collect();
            T::into_storage(picked.ok_or_else(|| TensorError(format!("`{}` of an empty row", a.op)))?)
        }
    });
    tensor_out(data, p.shape)
}

/// `nanmax`/`nanmin`: the first extreme of a row's non-NaN elements; NaN
/// for a row of NaNs only. An integer or bool row has no NaN: the extreme.
pub(super) fn nan_extreme(a: &Args, want_max: bool) -> Result<Out, TensorError> {
    let (x, p) = plan(a)?;
    non_empty(a, &p, &x)?;
    let data = dispatch!(x.dtype(), T => {
        let nan = T::from_f64(f64::NAN);
        let picked = p.rows()?.map::<T, _>(|row| {
            select(row, want_max, true, false).and_then(|p| extreme_value(row, p)).unwrap_or(nan)
        })?;
        T::into_storage(picked)
    });
    tensor_out(data, p.shape)
}

pub(super) fn max(a: &Args) -> Result<Out, TensorError> {
    extreme(a, true, false)
}
pub(super) fn min(a: &Args) -> Result<Out, TensorError> {
    extreme(a, false, false)
}
pub(super) fn argmax(a: &Args) -> Result<Out, TensorError> {
    extreme(a, true, true)
}
pub(super) fn argmin(a: &Args) -> Result<Out, TensorError> {
    extreme(a, false, true)
}

/// The lower middle element (PyTorch: no averaging) of a row, as the value
/// a stable ascending sort would put at index (n − 1) / 2 — −0 and +0 tie,
/// the earlier first — or the first NaN if there is one; NaN for an empty
/// row (NumPy and PyTorch give NaN for the median of nothing).
/// The rank is selected on the row's order keys (`order::rank`), copied
/// fallibly (a row of a few hundred million elements needs gigabytes).
fn median_of<T: Ordered>(row: &[T]) -> Result<f64, AllocError> {
    if row.is_empty() || row.iter().fold(false, |a, &x| a | is_nan(x)) {
        return Ok(f64::NAN);
    }
    let mut keys = keys_of(row)?;
    Ok(rank(row, &mut keys, (row.len() - 1) / 2, false).map_or(f64::NAN, |v| v.to_f64()))
}

pub(super) fn median(a: &Args) -> Result<Out, TensorError> {
    let (x, p) = plan(a)?;
    let data = dispatch!(x.dtype(), T => {
        // The f64 holds the element exactly; storing it rounds once into
        // float_result(dtype), which changes only an integer above 2^24.
        let rows = p.rows()?.map::<T, _>(median_of)?;
        let mut vals = try_vec(rows.len())?;
        for v in rows {
            vals.push(v?);
        }
        stored::<<T as Reduced>::Float, _>(vals)?
    });
    tensor_out(data, p.shape)
}

/// Where quantile `q` of `n` sorted values falls, by NumPy's default
/// `linear` method (Hyndman and Fan's seventh): the positions of the two
/// neighbours in sorted order and the weight of the second, with NumPy's
/// own arithmetic so that the bits agree — the virtual index is
/// `(n - 1)·q`; at or past the last position both neighbours are the last
/// value and the weight is `index + 1` (NumPy measures it from −1 there).
/// `n` is at least 1 and `q` in [0, 1].
pub fn quantile_pick(n: usize, q: f64) -> (usize, usize, f64) {
    let last = n.saturating_sub(1);
    let vi = last as f64 * q;
    if vi >= last as f64 {
        return (last, last, vi + 1.0);
    }
    let prev = vi.floor();
    // 0 ≤ prev < last here, so the conversion is exact.
    let p = prev as usize;
    (p, p + 1, vi - prev)
}

/// NumPy's `_lerp`: `a + (b − a)·g`, or `b − (b − a)·(1 − g)` when
/// `g ≥ 0.5`, each step one f64 operation.
fn quantile_lerp(a: f64, b: f64, g: f64) -> f64 {
    let d = b - a;
    if g >= 0.5 {
        b - d * (1.0 - g)
    } else {
        a + d * g
    }
}

/// The quantiles `qs` of one row, in f64: NaN for all of them when the row
/// is empty or holds a NaN (NumPy and PyTorch). The neighbours are the
/// elements of their ranks in a stable sort, so equal values keep their
/// order (±0 included), found on a copy of the row's order keys made
/// fallibly (`order::rank`).
fn quantiles_of<T: Ordered>(row: &[T], qs: &[f64]) -> Result<Vec<f64>, AllocError> {
    if row.is_empty() || row.iter().fold(false, |a, &x| a | is_nan(x)) {
        return try_collect(qs.len(), qs.iter().map(|_| f64::NAN));
    }
    let mut keys = keys_of(row)?;
    // A few quantiles select their neighbours; many sort the keys once.
    let sorted = qs.len() > QUANTILE_SELECTS;
    if sorted {
        keys.sort_unstable();
    }
    let mut at = |k: usize| rank(row, &mut keys, k, sorted).map_or(f64::NAN, |v| v.to_f64());
    let mut out = try_vec(qs.len())?;
    for &q in qs {
        let (i, j, g) = quantile_pick(row.len(), q);
        let a = at(i);
        let b = if j == i { a } else { at(j) };
        out.push(quantile_lerp(a, b, g));
    }
    Ok(out)
}

/// Quantiles of one row found by selection, each in linear time; more are
/// read from the row's keys sorted once.
const QUANTILE_SELECTS: usize = 4;

/// The `q` argument of `quantile`: its values, each checked to lie in
/// [0, 1], and whether it is a rank-1 tensor (whose axis then goes first in
/// the result).
fn quantile_qs(a: &Args) -> Result<(Vec<f64>, bool), TensorError> {
    let (qs, axis) = match a.get("q") {
        Some(Arg::Float(q)) => (vec![*q], false),
        Some(Arg::Int(q)) => (vec![*q as f64], false),
        Some(Arg::Tensor(t)) if t.ndim() <= 1 => (t.to_f64_vec()?, t.ndim() == 1),
        Some(Arg::Tensor(t)) => {
            return Err(a.blame(
                "q",
                TensorError(format!(
                    "`{}`: q must be an F64 or a rank-1 tensor, not a tensor of shape {}",
                    a.op,
                    shape_str(t.shape())
                )),
            ))
        }
        Some(other) => {
            return Err(a.blame(
                "q",
                TensorError(format!(
                    "`{}`: q must be an F64 or a rank-1 tensor, not `{}`",
                    a.op,
                    other.kind()
                )),
            ))
        }
        None => return err(format!("`{}` needs its `q` argument", a.op)),
    };
    if let Some(bad) = qs.iter().find(|q| !(0.0..=1.0).contains(*q)) {
        return Err(a.blame(
            "q",
            TensorError(format!("`{}`: q must be in [0, 1], not {bad}", a.op)),
        ));
    }
    Ok((qs, axis))
}

/// `quantile(x, q, axis, keepdim)`: NumPy's default linear interpolation
/// between the sorted neighbours, computed in f64 from the exact element
/// values and rounded once into `float_result(dtype)`. A rank-1 `q` puts
/// its axis first.
pub(super) fn quantile(a: &Args) -> Result<Out, TensorError> {
    let (qs, q_axis) = quantile_qs(a)?;
    let (x, p) = plan(a)?;
    let mut shape = p.shape.clone();
    if q_axis {
        shape.insert(0, qs.len());
    }
    numel_of(&shape)?;
    let data = dispatch!(x.dtype(), T => {
        let rows = p.rows()?.map::<T, _>(|row| quantiles_of(row, &qs))?;
        let mut by_row = try_vec(rows.len())?;
        for r in rows {
            by_row.push(r?);
        }
        // Row r's quantile j goes to position j·m + r: the q axis first.
        let m = by_row.len().max(1);
        let vals = (0..qs.len() * by_row.len())
            .map(|k| by_row.get(k % m).and_then(|r| r.get(k / m)).copied().unwrap_or(f64::NAN));
        stored::<<T as Reduced>::Float, _>(vals)?
    });
    tensor_out(data, shape)
}

/// `all` and `any`: an element is true when it is not zero (NaN is true,
/// −0 is false), as the cast to bool says. Empty: all true, any false.
fn truth(a: &Args, every: bool) -> Result<Out, TensorError> {
    let (x, p) = plan(a)?;
    let data = dispatch!(x.dtype(), T => {
        Storage::Bool(p.rows()?.map::<T, _>(|row| {
            crate::isa::wide(
                #[inline(always)]
                || {
                    // Block by block, each tested in full (branch-free, so
                    // that it vectorises), stopping after the block that
                    // settles the answer.
                    for block in row.chunks(PICK_BLOCK) {
                        if every {
                            if !block.iter().fold(true, |a, &v| a & nonzero(v)) {
                                return false;
                            }
                        } else if block.iter().fold(false, |a, &v| a | nonzero(v)) {
                            return true;
                        }
                    }
                    every
                },
            )
        })?)
    });
    tensor_out(data, p.shape)
}

/// Whether an element is nonzero (NaN is; −0 is not), through its key: one
/// comparison of the exact f32 for bf16 and f16, where `half`'s `!=` is
/// library code.
#[inline(always)]
fn nonzero<T: Reduced>(v: T) -> bool {
    v.key() != <T::Key as Element>::from_f64(0.0)
}

/// Elements per piece of [`nonzero_indices`]: counted, then written, one
/// piece per task.
const NZ_PIECE: usize = 1 << 16;

/// `nonzero(x)`: the indices of the nonzero elements (NaN is nonzero), one
/// row each in row-major order, as i32 of shape [count, ndim]. Two passes
/// over pieces of the row-major elements, in parallel: each piece's
/// nonzero elements are counted (a vectorised sum), the counts' running
/// sums place each piece's rows in the result, and each piece writes its
/// rows from 64-element masks, one write per set bit, carrying its
/// multi-index forward from the piece's first element. The rows and their
/// order are the row-major walk's, whatever the thread count.
pub(super) fn nonzero_indices(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    let shape = x.shape().to_vec();
    if shape.iter().any(|&d| d > i32::MAX as usize) {
        return err("`nonzero`: an axis is too long for i32 indices".into());
    }
    let c = x.contiguous()?;
    let nd = shape.len();
    let (out, count) = dispatch!(in c.storage(), v => {
        let counts: Vec<usize> = v
            .par_chunks(NZ_PIECE)
            .map(|piece| {
                crate::isa::wide(
                    #[inline(always)]
                    || piece.iter().fold(0u32, |n, &e| n + u32::from(nonzero(e))) as usize,
                )
            })
            .collect();
        let count: usize = counts.iter().sum();
        let total = count
            .checked_mul(nd)
            .ok_or_else(|| TensorError("`nonzero`: the result is too large".into()))?;
        let mut out = try_vec::<i32>(total).map_err(|e| e.for_tensor(DType::I32, &[count, nd]))?;
        {
            // Each piece's share of the result, in piece order.
            let mut rest = &mut out.spare_capacity_mut()[..total];
            let mut parts = Vec::with_capacity(counts.len());
            for &k in &counts {
                let (mine, others) = rest.split_at_mut(k * nd);
                parts.push(mine);
                rest = others;
            }
            v.par_chunks(NZ_PIECE).zip(parts).enumerate().for_each(|(i, (piece, part))| {
                crate::isa::wide(
                    #[inline(always)]
                    || write_nonzero(piece, i * NZ_PIECE, &shape, part),
                )
            });
        }
        // SAFETY: the parts cover the first `total` elements exactly (the
        // counts sum to `count`), and `write_nonzero` writes `nd` indices
        // for each of its piece's nonzero elements, which its count counted
        // with the same test, so every element is initialised.
        unsafe { out.set_len(total) };
        (out, count)
    });
    Tensor::from_vec(out, vec![count, nd]).map(Out::Tensor)
}

/// The rows of [`nonzero_indices`] for one piece whose first element is
/// element `start` of `shape` (row-major), into `part`, which has room for
/// exactly the piece's nonzero elements' rows.
#[inline(always)]
fn write_nonzero<T: Reduced>(piece: &[T], start: usize, shape: &[usize], part: &mut [MaybeUninit<i32>]) {
    let nd = shape.len();
    if nd == 0 {
        return;
    }
    let mut idx = vec![0usize; nd];
    let mut rest = start;
    for (i, &d) in idx.iter_mut().zip(shape).rev() {
        *i = rest % d;
        rest /= d;
    }
    let (mut at, mut k) = (start, 0);
    for (b, block) in piece.chunks(64).enumerate() {
        let mut mask = block
            .iter()
            .enumerate()
            .fold(0u64, |m, (j, &e)| m | (u64::from(nonzero(e)) << j));
        let base = start + b * 64;
        while mask != 0 {
            let p = base + mask.trailing_zeros() as usize;
            mask &= mask - 1;
            if nd == 1 {
                part[k].write(p as i32);
                k += 1;
                continue;
            }
            // Carry the multi-index forward from element `at` to `p`.
            let mut step = p - at;
            for (i, &d) in idx.iter_mut().zip(shape).rev() {
                let s = *i + step;
                if s < d {
                    *i = s;
                    break;
                }
                *i = s % d;
                step = s / d;
            }
            at = p;
            for (o, &i) in part[k..k + nd].iter_mut().zip(&idx) {
                o.write(i as i32);
            }
            k += nd;
        }
    }
}

pub(super) fn all(a: &Args) -> Result<Out, TensorError> {
    truth(a, true)
}
pub(super) fn any(a: &Args) -> Result<Out, TensorError> {
    truth(a, false)
}

// ---------------------------------------------------------------------------
// Scans and normalisers: one axis, result of the input's shape

/// Rows along `axis` (moved last) and the permutation that moved it.
fn along(x: &Tensor, axis: usize) -> Result<(Rows, Vec<usize>), TensorError> {
    let mut mask = vec![false; x.ndim()];
    if let Some(m) = mask.get_mut(axis) {
        *m = true;
    }
    // A rank-0 tensor is one row of one element and moves nothing.
    let perm: Vec<usize> = if x.ndim() == 0 {
        Vec::new()
    } else {
        (0..x.ndim()).filter(|&i| i != axis).chain([axis]).collect()
    };
    Ok((rows(x, &mask)?, perm))
}

/// The axis of a scan or normaliser: one Int (default for normalisers -1).
fn one_axis(a: &Args, x: &Tensor, default: Option<i64>) -> Result<usize, TensorError> {
    if let Some(Arg::Ints(_) | Arg::Tensor(_)) = a.get("axis") {
        if a.ints("axis")?.is_some_and(|v| v.len() != 1) {
            return err(format!("`{}` works along one axis: `axis` must be an Int", a.op));
        }
    }
    let ax = match (a.int("axis")?, default) {
        (Some(ax), _) | (None, Some(ax)) => ax,
        (None, None) => return err(format!("`{}` needs its `axis` argument", a.op)),
    };
    axis_index(a, ax, x.ndim())
}

/// An axis as an index below `ndim` (`tensor::normalize_axis`), except
/// that a rank-0 tensor takes 0 and -1 alike, as PyTorch does.
fn axis_index(a: &Args, ax: i64, ndim: usize) -> Result<usize, TensorError> {
    if ndim == 0 && (ax == 0 || ax == -1) {
        return Ok(0);
    }
    let r = normalize_axis(ax, ndim).map_err(|e| TensorError(format!("`{}`: {}", a.op, e.0)));
    a.about("axis", r)
}

/// Builds the result from rows written in the moved layout: the output
/// rows have `x`'s shape with `axis` last, so they are moved back.
fn unmove<O: Element>(out: Vec<O>, x: &Tensor, perm: &[usize]) -> Result<Out, TensorError> {
    let moved_shape: Vec<usize> = perm.iter().map(|&p| x.shape()[p]).collect();
    let t = Tensor::from_vec(out, moved_shape)?;
    if perm.iter().enumerate().all(|(i, &p)| i == p) {
        return Ok(Out::Tensor(t));
    }
    let mut inverse = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inverse[p] = i;
    }
    Ok(Out::Tensor(t.permuted(&inverse)?.contiguous()?))
}

/// `n` default elements in a buffer that asks for huge pages when large:
/// faulting in a big result 4 KiB at a time costs more than the kernel
/// that fills it.
fn filled<O: Element + Default>(n: usize) -> Result<Vec<O>, TensorError> {
    Ok(try_filled(n, O::default())?)
}

/// Runs `f(row, out_row)` over every row, in parallel over rows.
fn map_rows_into<T: Element, O: Element + Default>(
    r: &Rows,
    f: impl Fn(&[T], &mut [O]) + Sync + Send,
) -> Result<Vec<O>, TensorError> {
    let mut out = filled::<O>(r.m * r.n)?;
    if r.n == 0 {
        return Ok(out);
    }
    if r.m * r.n < PAR_MIN {
        for (o, x) in out.chunks_mut(r.n).zip(r.data::<T>().chunks(r.n)) {
            f(x, o);
        }
        return Ok(out);
    }
    out.par_chunks_mut(r.n)
        .zip(r.data::<T>().par_chunks(r.n))
        .with_min_len((BLOCK / r.n).max(1))
        .for_each(|(o, x)| f(x, o));
    Ok(out)
}

/// A scan: a running accumulator in the accumulation dtype, starting from
/// the first element, each output rounded from it to the result dtype.
fn scan(a: &Args, product: bool) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    let axis = one_axis(a, x, None)?;
    if let Some(fmt) = a.format("acc")? {
        return scan_every_step(a, x, axis, fmt);
    }
    let (r, perm) = along(x, axis)?;
    match x.dtype() {
        DType::Bool => {
            return unmove(
                map_rows_into::<bool, i32>(&r, |row, o| int_scan(row, o, product))?,
                x,
                &perm,
            )
        }
        DType::I8 => {
            return unmove(
                map_rows_into::<i8, i32>(&r, |row, o| int_scan(row, o, product))?,
                x,
                &perm,
            )
        }
        DType::I32 => {
            return unmove(
                map_rows_into::<i32, i32>(&r, |row, o| int_scan(row, o, product))?,
                x,
                &perm,
            )
        }
        DType::Bf16 | DType::F16 | DType::F32 | DType::F64 => {}
    }
    dispatch!(x.dtype(), T => {
        let out = map_rows_into::<T, <T as Reduced>::Sum>(&r, |row, o| {
            let mut acc = None;
            for (y, &v) in o.iter_mut().zip(row) {
                let next = match acc {
                    None => Element::widen(v),
                    Some(s) if product => Accumulate::mul(s, Element::widen(v)),
                    Some(s) => Accumulate::add(s, Element::widen(v)),
                };
                acc = Some(next);
                *y = Element::from_f64(next.to_f64());
            }
        })?;
        unmove(out, x, &perm)
    })
}

/// Elements per piece of a long integer scan.
const SCAN_PIECE: usize = 1 << 16;

/// One row of an integer `cumsum` or `cumprod`: the running wrapping sum
/// or product in i32, which is what the general scan computes (its first
/// element is the identity's sum or product with it). Wrapping arithmetic
/// is that of the integers mod 2^32, associative, so a long row is cut
/// into pieces: each piece's total, in parallel; the running totals of
/// the pieces in order; then each piece's scan from its predecessors'
/// total, in parallel — the same i32s as the one-after-another loop.
fn int_scan<T: Element<Acc = i32>>(row: &[T], out: &mut [i32], product: bool) {
    let step = move |a: i32, b: i32| {
        if product {
            a.wrapping_mul(b)
        } else {
            a.wrapping_add(b)
        }
    };
    let identity = i32::from(product);
    let run = move |row: &[T], out: &mut [i32], mut acc: i32| {
        for (y, &v) in out.iter_mut().zip(row) {
            acc = step(acc, v.widen());
            *y = acc;
        }
    };
    if row.len() < PAR_ROW {
        return run(row, out, identity);
    }
    let totals: Vec<i32> = row
        .par_chunks(SCAN_PIECE)
        .map(|piece| {
            crate::isa::wide(
                #[inline(always)]
                || piece.iter().fold(identity, |a, &v| step(a, v.widen())),
            )
        })
        .collect();
    let starts: Vec<i32> = totals
        .iter()
        .scan(identity, |acc, &t| {
            let start = *acc;
            *acc = step(*acc, t);
            Some(start)
        })
        .collect();
    out.par_chunks_mut(SCAN_PIECE)
        .zip(row.par_chunks(SCAN_PIECE))
        .zip(starts)
        .for_each(|((o, piece), start)| run(piece, o, start));
}

/// `cumsum(x, axis, acc=fmt)`, EVERY_STEP (spec §13): sequential, each
/// element rounded to `fmt` and every running sum rounded to `fmt`.
fn scan_every_step(a: &Args, x: &Tensor, axis: usize, fmt: crate::lab::Format) -> Result<Out, TensorError> {
    let (dt, wide) = super::lab::every_step_input(a, "cumsum", x, fmt)?;
    let (r, perm) = along(&wide, axis)?;
    let out = map_rows_into::<f64, f64>(&r, |row, o| {
        let mut acc = None;
        for (y, &v) in o.iter_mut().zip(row) {
            let e = fmt.round(v).unwrap_or(v);
            let next = match acc {
                None => e,
                Some(s) => fmt.add(s, e),
            };
            acc = Some(next);
            *y = next;
        }
    })?;
    match unmove(out, &wide, &perm)? {
        Out::Tensor(t) => {
            let shape = t.shape().to_vec();
            Ok(Out::Tensor(super::lab::stored(t.to_f64_vec()?, dt, shape)?))
        }
        other @ (Out::Tensors(_) | Out::Bool(_) | Out::Tuple(_)) => Ok(other),
    }
}

pub(super) fn cumsum(a: &Args) -> Result<Out, TensorError> {
    scan(a, false)
}
pub(super) fn cumprod(a: &Args) -> Result<Out, TensorError> {
    scan(a, true)
}

/// softmax and log_softmax of one row: m = max, e_i = round_acc(exp(x_i −
/// m)), s = tree(e); softmax_i = round_res(e_i / s), log_softmax_i =
/// round_res(x_i − m − log s), all in f64. A NaN maximum, or an infinite
/// one (an all −inf row), makes every x_i − m of the row NaN or −inf and
/// so gives NaN, as PyTorch does.
fn normalise_row<T: Reduced>(row: &[T], out: &mut [T::Float], e: &mut Vec<FloatAcc<T>>, log: bool) {
    #[cfg(target_arch = "x86_64")]
    if crate::isa::allows(crate::isa::Level::Avx2) && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, which is all that the function's
        // `target_feature` asks for.
        return unsafe { normalise_row_avx2::<T>(row, out, e, log) };
    }
    normalise_row_body::<T>(row, out, e, log)
}

/// The same code compiled for AVX2: four f64 lanes instead of SSE2's two
/// (and a rounding instruction for `exp_lanes`' truncation). IEEE
/// arithmetic gives the same bits at any vector width; only speed differs.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn normalise_row_avx2<T: Reduced>(
    row: &[T],
    out: &mut [T::Float],
    e: &mut Vec<FloatAcc<T>>,
    log: bool,
) {
    normalise_row_body::<T>(row, out, e, log)
}

#[inline(always)]
fn normalise_row_body<T: Reduced>(row: &[T], out: &mut [T::Float], e: &mut Vec<FloatAcc<T>>, log: bool) {
    let m = max_value(row);
    exps_body(row, m, e);
    let s = fold_row(e, <FloatAcc<T> as Accumulate>::ZERO, |v| v, Accumulate::add).to_f64();
    if log {
        let ls = math::log(s);
        for (o, &x) in out.iter_mut().zip(row) {
            *o = Element::from_f64(x.float_acc().to_f64() - m - ls);
        }
    } else {
        for (o, &v) in out.iter_mut().zip(e.iter()) {
            *o = Element::from_f64(v.to_f64() / s);
        }
    }
}

fn normalise(a: &Args, log: bool) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    let axis = one_axis(a, x, Some(-1))?;
    let (r, perm) = along(x, axis)?;
    dispatch!(x.dtype(), T => {
        let mut out = filled::<<T as Reduced>::Float>(r.m * r.n)?;
        if r.n > 0 && r.m * r.n < PAR_MIN {
            let mut e = Vec::new();
            for (o, x) in out.chunks_mut(r.n).zip(r.data::<T>().chunks(r.n)) {
                normalise_row::<T>(x, o, &mut e, log);
            }
        } else if r.n > 0 {
            out.par_chunks_mut(r.n)
                .zip(r.data::<T>().par_chunks(r.n))
                .with_min_len((BLOCK / r.n).max(1))
                .for_each_init(Vec::new, |e, (o, x)| normalise_row::<T>(x, o, e, log));
        }
        unmove(out, x, &perm)
    })
}

pub(super) fn softmax(a: &Args) -> Result<Out, TensorError> {
    normalise(a, false)
}
pub(super) fn log_softmax(a: &Args) -> Result<Out, TensorError> {
    normalise(a, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lane version of exp must be `math::exp` bit for bit, on every
    /// path: each of the three reduction ranges and their boundaries, tiny
    /// arguments, and the special cases it hands back to the scalar code.
    #[test]
    fn exp_lanes_is_libm_exp() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut inputs: Vec<f64> = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -0.5,
            708.39,
            -708.39,
            709.0,
            -709.0,
            745.2,
            -745.2,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
            -1e-300,
            3.7e-9,
            -1.5e-8,
            0.346_573_590_279_972_6,
            1.039_720_770_839_917_9,
        ];
        // Around each range boundary of the high word, in both signs.
        for hw in [0x3e30_0000u64, 0x3fd6_2e42, 0x3ff0_a2b2, 0x4086_232b] {
            for lo in [0u64, 1, 0xffff_ffff, 0x8000_0000] {
                for d in [-1i64, 0, 1] {
                    let b = ((hw as i64 + d) as u64) << 32 | lo;
                    inputs.push(f64::from_bits(b));
                    inputs.push(-f64::from_bits(b));
                }
            }
        }
        for _ in 0..400_000 {
            // Uniform over [-750, 750] and over the exponent range.
            let u = (next() >> 11) as f64 / (1u64 << 53) as f64;
            inputs.push((u - 0.5) * 1500.0);
            let e = (next() % 80) as i32 - 70;
            let sgn = if next() & 1 == 0 { 1.0 } else { -1.0 };
            inputs.push(sgn * u * 2f64.powi(e));
        }
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        unsafe fn exp_lanes_avx2(x: [f64; EXP_LANES]) -> [f64; EXP_LANES] {
            exp_lanes(x)
        }
        #[cfg(target_arch = "x86_64")]
        let avx2 = std::arch::is_x86_feature_detected!("avx2");
        for chunk in inputs.chunks(EXP_LANES) {
            let mut lanes = [0.25; EXP_LANES];
            lanes[..chunk.len()].copy_from_slice(chunk);
            let mut versions = vec![("generic", exp_lanes(lanes))];
            #[cfg(target_arch = "x86_64")]
            if avx2 {
                // SAFETY: AVX2 was detected above.
                versions.push(("avx2", unsafe { exp_lanes_avx2(lanes) }));
            }
            for (name, got) in versions {
                for (&x, g) in lanes.iter().zip(got) {
                    let want = math::exp(x);
                    assert!(
                        g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                        "exp({x:e}): {name} lanes {g:e}, libm {want:e}"
                    );
                }
            }
        }
    }

    #[test]
    fn tree_pairs_neighbours_and_passes_the_odd_lane() {
        // With strings as the "numbers", the tree's shape is visible.
        let mut v: [String; LANES] = std::array::from_fn(|i| i.to_string());
        let got = tree(&mut v, 5, |a: String, b: String| format!("({a}+{b})"));
        assert_eq!(got, "(((0+1)+(2+3))+4)");
    }

    /// The definition `select` implements: one pass, the first NaN wins
    /// outright (or is passed over), else the first element no earlier one
    /// beats.
    fn select_by_definition<T: Element + PartialOrd>(
        row: &[T],
        want_max: bool,
        skip_nan: bool,
    ) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (i, &x) in row.iter().enumerate() {
            if is_nan(x) {
                if skip_nan {
                    continue;
                }
                return Some(i);
            }
            let wins = match best {
                None => true,
                Some(b) => {
                    if want_max {
                        x > row[b]
                    } else {
                        x < row[b]
                    }
                }
            };
            if wins {
                best = Some(i);
            }
        }
        best
    }

    /// `all`, `any` and `count_nonzero` (blocked, through the keys) against
    /// their definitions, and `nanmean` of a tensor that cannot hold NaN
    /// (`mean`) against the general path on its elements as f32, for every dtype: nonzero is `x != 0` with NaN nonzero
    /// and −0 zero; rows of zeros with one nonzero element, of nonzeros
    /// with one zero, early, late and around a block; over everything and
    /// along each axis.
    #[test]
    fn truth_counts_and_nanmean_follow_their_definitions() {
        use crate::ops::{call, Op};
        use crate::tensor::Tensor;
        let one = |op: Op, x: &Tensor, axis: Option<i64>| -> Tensor {
            match call(op, vec![Some(Arg::Tensor(x.clone())), axis.map(Arg::Int)]) {
                Ok(Out::Tensor(t)) => t,
                _ => panic!("{op} gave no tensor"),
            }
        };
        let specials = [f64::NAN, -0.0, 0.0, 1.0, -2.5, f64::INFINITY, 1e-30, 5e-324];
        for dt in DType::ALL {
            for n in [1usize, 2, 33, PICK_BLOCK, PICK_BLOCK + 1, 3 * PICK_BLOCK + 7] {
                for (fill, odd) in [
                    (0.0, 1.0),
                    (-0.0, f64::NAN),
                    (1.0, 0.0),
                    (f64::NAN, -0.0),
                    (0.0, 0.0),
                    (2.0, 3.0),
                ] {
                    for at in [0, n / 2, n - 1] {
                        let mut vals = vec![fill; n];
                        vals[at] = odd;
                        vals[n / 3] = if fill == 0.0 {
                            fill
                        } else {
                            specials[n % specials.len()]
                        };
                        let x = dispatch!(dt, T => Tensor::from_vec(vals.iter().map(|&v| T::from_f64(v)).collect::<Vec<T>>(), vec![n]).unwrap());
                        let truths: Vec<bool> = x.scalars().map(|v| v.to_f64() != 0.0).collect();
                        let what = format!("{dt} n={n} fill={fill} odd={odd} at={at}");
                        let b = |t: Tensor| t.scalars().map(|v| v.to_f64()).collect::<Vec<_>>();
                        assert_eq!(
                            b(one(Op::All, &x, None)),
                            vec![f64::from(u8::from(truths.iter().all(|&t| t)))],
                            "all {what}"
                        );
                        assert_eq!(
                            b(one(Op::Any, &x, None)),
                            vec![f64::from(u8::from(truths.iter().any(|&t| t)))],
                            "any {what}"
                        );
                        let count = truths.iter().filter(|&&t| t).count() as f64;
                        assert_eq!(
                            b(one(Op::CountNonzero, &x, None)),
                            vec![count],
                            "count_nonzero {what}"
                        );
                        // Along each axis of a matrix view of the same elements.
                        if n % 3 == 0 {
                            let m = Tensor::from_storage(x.to_storage().unwrap(), vec![3, n / 3]).unwrap();
                            for axis in [0i64, 1] {
                                let got = b(one(Op::CountNonzero, &m, Some(axis)));
                                let want: Vec<f64> = if axis == 0 {
                                    (0..n / 3)
                                        .map(|j| (0..3).filter(|&i| truths[i * (n / 3) + j]).count() as f64)
                                        .collect()
                                } else {
                                    (0..3)
                                        .map(|i| {
                                            truths[i * (n / 3)..(i + 1) * (n / 3)]
                                                .iter()
                                                .filter(|&&t| t)
                                                .count() as f64
                                        })
                                        .collect()
                                };
                                assert_eq!(got, want, "count_nonzero axis {axis} {what}");
                            }
                        }
                        if !dt.is_float() {
                            let bits = |t: Tensor| t.scalars().map(|v| v.to_bits()).collect::<Vec<_>>();
                            // The general path: the elements as f32 (as the
                            // accumulator takes them), NaN-free.
                            let f = x.cast(DType::F32).unwrap();
                            assert_eq!(
                                bits(one(Op::Nanmean, &x, None)),
                                bits(one(Op::Nanmean, &f, None)),
                                "nanmean {what}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// The blocked, laned, early-stopping and parallel search against the
    /// one-pass definition, for every dtype, on rows shorter than a lane
    /// and around a lane's multiples, around a block, and long enough for the parallel parts; with NaNs
    /// (first, last, in one part only, everywhere), −0/+0 ties, infinities
    /// and the integer extremes, early and late.
    #[test]
    fn select_is_the_first_extreme() {
        use crate::construct::SplitMix64;
        let mut g = SplitMix64::new(41);
        let specials = [
            f64::NAN,
            -0.0,
            0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            127.0,
            -128.0,
            2147483647.0,
            -2147483648.0,
        ];
        let lens = [
            1usize,
            2,
            15,
            17,
            31,
            33,
            63,
            65,
            PICK_BLOCK - 1,
            PICK_BLOCK + 3,
            3 * PICK_PAR + 5,
        ];
        crate::isa::tests::at_each_level(|level| {
            for dt in DType::ALL {
                for &n in &lens {
                    for pattern in 0..8 {
                        let vals: Vec<f64> = (0..n)
                            .map(|i| {
                                let r = g.next_u64();
                                match pattern {
                                    0 => (r % 7) as f64 - 3.0,
                                    1 if i == n - 1 => f64::NAN,
                                    1 => (r % 200) as f64 - 100.0,
                                    2 if i == n / 2 + 1 => specials[(r % 9) as usize],
                                    2 => (r % 5) as f64 * 0.25 - 0.5,
                                    3 => {
                                        if r.is_multiple_of(3) {
                                            -0.0
                                        } else {
                                            0.0
                                        }
                                    }
                                    4 => specials[(r % 9) as usize],
                                    5 if r.is_multiple_of(4) => f64::NAN,
                                    5 => (r % 9) as f64,
                                    6 => f64::NAN,
                                    _ => (r >> 11) as f64 / (1u64 << 53) as f64 * 4e9 - 2e9,
                                }
                            })
                            .collect();
                        dispatch!(dt, T => {
                            // Rust's `as` for the integers (saturating, NaN to 0).
                            let row: Vec<T> = vals.iter().map(|&v| T::from_f64(v)).collect();
                            let row = &row[..];
                            for want_max in [true, false] {
                                for skip_nan in [false, true] {
                                    let want = select_by_definition(row, want_max, skip_nan);
                                    let what = format!("{dt} n={n} pattern {pattern} max={want_max} skip_nan={skip_nan} {level:?}");
                                    assert_eq!(select(row, want_max, skip_nan, true).map(|p| p.at), want, "{what}");
                                    // The value alone: the same element, bit for bit.
                                    let value = select(row, want_max, skip_nan, false).and_then(|p| extreme_value(row, p));
                                    let bits = |v: Option<T>| v.map(|v| v.to_scalar().to_bits());
                                    assert_eq!(bits(value), bits(want.map(|i| row[i])), "{what} (value)");
                                }
                            }
                        });
                    }
                }
            }
        });
    }

    /// `nonzero` against the row-major walk of its definition (an element
    /// is nonzero when its f64 value is not 0; NaN is, −0 is not), for
    /// every dtype, densities from none to all, lengths across the 64-bit
    /// masks and the parallel pieces, ranks 0 to 3 (axes of 1 among them),
    /// a transposed view, on one and four threads.
    #[test]
    fn nonzero_rows_are_the_row_major_walk() {
        use crate::ops::{call, Op};
        let mut bits = super::super::order::tests::xorshift(0x9e37_79b9_7f4a_7c15);
        let specials = [f64::NAN, -0.0, 0.0, 1.0, -2.5, f64::INFINITY, 1e-30, 5e-324];
        let shapes: Vec<Vec<usize>> = vec![
            vec![],
            vec![0],
            vec![1],
            vec![63],
            vec![64],
            vec![65],
            vec![NZ_PIECE + 65],
            vec![3, 0, 2],
            vec![7, 1, 9],
            vec![5, 40_000],
            vec![3, 1000, 45],
            vec![2 * NZ_PIECE + 3, 1],
        ];
        for pool in super::super::order::tests::one_and_four_threads() {
            pool.install(|| {
                for dt in DType::ALL {
                    for shape in &shapes {
                        for density in [0u64, 1, 50, 99, 100] {
                            let n: usize = shape.iter().product();
                            let vals: Vec<f64> = (0..n)
                                .map(|_| {
                                    let r = bits();
                                    if r % 100 < density {
                                        specials[(r >> 8) as usize % specials.len()]
                                    } else {
                                        0.0
                                    }
                                })
                                .collect();
                            let x = dispatch!(dt, T => Tensor::from_vec(vals.iter().map(|&v| T::from_f64(v)).collect::<Vec<T>>(), shape.clone()).unwrap());
                            let views = if shape.len() == 2 {
                                vec![x.clone(), x.permuted(&[1, 0]).unwrap()]
                            } else {
                                vec![x]
                            };
                            for v in views {
                                let got = match call(Op::Nonzero, vec![Some(Arg::Tensor(v.clone()))]) {
                                    Ok(Out::Tensor(t)) => t,
                                    _ => panic!("nonzero gave no tensor"),
                                };
                                let (dims, flat) = (v.shape().to_vec(), v.to_f64_vec().unwrap());
                                let mut want = Vec::new();
                                for (p, &e) in flat.iter().enumerate() {
                                    if e != 0.0 {
                                        let mut rest = p;
                                        let mut idx = vec![0i32; dims.len()];
                                        for (i, &d) in idx.iter_mut().zip(&dims).rev() {
                                            *i = (rest % d) as i32;
                                            rest /= d;
                                        }
                                        want.extend(idx);
                                    }
                                }
                                let what = format!("{dt} {dims:?} density {density}");
                                assert_eq!(got.dtype(), DType::I32, "{what}");
                                let count = flat.iter().filter(|&&e| e != 0.0).count();
                                assert_eq!(got.shape(), &[count, dims.len()][..], "{what}");
                                assert_eq!(got.as_slice::<i32>().unwrap(), &want[..], "{what}");
                            }
                        }
                    }
                }
            });
        }
    }

    /// Integer `cumsum` and `cumprod` (pieces scanned in parallel for a long
    /// row) against the running wrapping sum and product of the definition,
    /// along each axis, with values that overflow i32, on one and four
    /// threads.
    #[test]
    fn integer_scans_are_the_running_wrapping_fold() {
        use crate::ops::{call, Op};
        let mut bits = super::super::order::tests::xorshift(0x51_7cc1_b727_220a);
        for pool in super::super::order::tests::one_and_four_threads() {
            pool.install(|| {
                for dt in [DType::Bool, DType::I8, DType::I32] {
                    for shape in [
                        vec![5],
                        vec![3 * SCAN_PIECE + 17],
                        vec![2, PAR_ROW + 3],
                        vec![40, 7],
                    ] {
                        let n: usize = shape.iter().product();
                        let raw: Vec<i64> = (0..n).map(|_| bits() as i64).collect();
                        let x = match dt {
                            DType::Bool => Tensor::from_vec(
                                raw.iter().map(|&v| v % 3 == 0).collect::<Vec<bool>>(),
                                shape.clone(),
                            ),
                            DType::I8 => Tensor::from_vec(
                                raw.iter().map(|&v| v as i8).collect::<Vec<i8>>(),
                                shape.clone(),
                            ),
                            DType::I32 | DType::Bf16 | DType::F16 | DType::F32 | DType::F64 => {
                                Tensor::from_vec(
                                    raw.iter().map(|&v| (v as i32) | 1).collect::<Vec<i32>>(),
                                    shape.clone(),
                                )
                            }
                        }
                        .unwrap();
                        let vals: Vec<i32> = x.scalars().map(|v| v.to_f64() as i32).collect();
                        for (op, product) in [(Op::Cumsum, false), (Op::Cumprod, true)] {
                            for axis in 0..shape.len() {
                                let slots = crate::ops::bind(
                                    op,
                                    vec![Arg::Tensor(x.clone()), Arg::Int(axis as i64)],
                                    Vec::new(),
                                )
                                .unwrap();
                                let got = match call(op, slots) {
                                    Ok(Out::Tensor(t)) => t,
                                    _ => panic!("{op} gave no tensor"),
                                };
                                // The definition: strides of the row-major shape.
                                let stride: usize = shape[axis + 1..].iter().product();
                                let mut want = vals.clone();
                                for i in 0..n {
                                    if !(i / stride).is_multiple_of(shape[axis]) {
                                        let prev = want[i - stride];
                                        want[i] = if product {
                                            prev.wrapping_mul(vals[i])
                                        } else {
                                            prev.wrapping_add(vals[i])
                                        };
                                    }
                                }
                                assert_eq!(got.dtype(), DType::I32);
                                assert_eq!(
                                    got.as_slice::<i32>().unwrap(),
                                    &want[..],
                                    "{op} {dt} {shape:?} axis {axis}"
                                );
                            }
                        }
                    }
                }
            });
        }
    }
}
