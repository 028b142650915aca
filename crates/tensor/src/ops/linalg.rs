//! Linear algebra (spec §11.4): `solve inv det slogdet cholesky qr eigh svd
//! lstsq pinv matrix_rank`, batched over leading axes, on the factorisations
//! of the faer crate.
//!
//! Determinism is the invariant this module keeps: faer is built without
//! its `rayon` feature, so every factorisation runs on one thread (`Par::Seq`
//! is the only parallelism that exists), and a batch is split across
//! rayon's threads one whole matrix at a time, each computed by the same
//! sequential code into its own slot of the result. The bits therefore do
//! not depend on the thread count (tested on pools of 1, 2 and 7 threads).
//! faer chooses its SIMD kernels by the CPU's features, so bits may differ
//! between machines, never between runs on one machine.
//!
//! f32 and f64 compute in their own dtype; every other dtype is converted to
//! f32 first (the checker warns), and the result is f32 (`Rule::Linalg`).
//! Each matrix is copied into a column-major faer `Mat` (the layout faer's
//! kernels want) whose storage is reserved fallibly, so a matrix too large
//! for memory is an error, not an abort; faer's own scratch space comes from
//! `MemBuffer::try_new` for the same reason.
//!
//! Errors follow NumPy's criteria, stated in docs/language.md: `solve` and
//! `inv` refuse a matrix whose LU factorisation with partial pivoting (as
//! LAPACK's getrf) meets an exactly zero pivot; `cholesky` refuses a
//! non-positive pivot; the iterative ones (`eigh svd lstsq pinv
//! matrix_rank`) refuse a NaN or an infinity, on which they cannot converge.

use faer::diag::DiagMut;
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::{cholesky, evd, householder, lu, qr, svd};
use faer::{Accum, Conj, Mat, MatMut, MatRef, Par};
use rayon::prelude::*;

use super::args::{Args, Out};
use crate::dtype::DType;
use crate::storage::{try_filled, Element, Storage};
use crate::tensor::{broadcast_shapes, shape_str, Tensor, TensorError};

/// The dtype a linear-algebra operation computes in and returns for an
/// input of dtype `d`: f64 stays f64, everything else is f32 (spec §11.4).
pub fn compute_dtype(d: DType) -> DType {
    match d {
        DType::F64 => DType::F64,
        DType::F32 | DType::Bf16 | DType::F16 | DType::I32 | DType::I8 | DType::Bool => DType::F32,
    }
}

/// The two element types factorisations run in, and the facts about them
/// the kernels need beyond faer's `RealField`.
trait Real:
    faer::traits::RealField
    + Element
    + Copy
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
    + std::ops::AddAssign
    + std::ops::MulAssign
{
    const EPS: Self;
    const ZERO: Self;
    const ONE: Self;
    fn abs(self) -> Self;
    fn ln(self) -> Self;
    fn exp(self) -> Self;
    fn finite(self) -> bool;
    fn from_usize(n: usize) -> Self;
}

macro_rules! real {
    ($t:ty) => {
        impl Real for $t {
            const EPS: $t = <$t>::EPSILON;
            const ZERO: $t = 0.0;
            const ONE: $t = 1.0;
            fn abs(self) -> $t {
                <$t>::abs(self)
            }
            fn ln(self) -> $t {
                <$t>::ln(self)
            }
            fn exp(self) -> $t {
                <$t>::exp(self)
            }
            fn finite(self) -> bool {
                <$t>::is_finite(self)
            }
            fn from_usize(n: usize) -> $t {
                n as $t
            }
        }
    };
}
real!(f32);
real!(f64);

fn fail<T>(msg: String) -> Result<T, TensorError> {
    Err(TensorError(msg))
}

/// Why one matrix of a batch failed; the batch reports its first failure
/// (in batch order, whatever thread met it).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Failure {
    Singular,
    NotPositiveDefinite,
    NotFinite,
    NoConvergence,
    OutOfMemory,
}

impl Failure {
    fn message(self, op: &str, index: usize, batched: bool) -> String {
        let which = if batched {
            format!(" (matrix {index} of the batch)")
        } else {
            String::new()
        };
        match self {
            Failure::Singular => format!("`{op}`: the matrix is singular{which}"),
            Failure::NotPositiveDefinite => format!("`{op}`: the matrix is not positive definite{which}"),
            Failure::NotFinite => format!("`{op}`: the matrix holds a NaN or an infinity{which}"),
            Failure::NoConvergence => format!("`{op}`: the iteration did not converge{which}"),
            Failure::OutOfMemory => format!("`{op}`: out of memory for the factorisation{which}"),
        }
    }
}

type Step = Result<(), Failure>;

/// A tensor as a batch of `rows × cols` matrices (its last two axes).
struct Batch {
    /// The leading (batch) axes.
    lead: Vec<usize>,
    rows: usize,
    cols: usize,
}

impl Batch {
    fn count(&self) -> usize {
        self.lead.iter().product()
    }
    fn shape(&self, tail: &[usize]) -> Vec<usize> {
        let mut s = self.lead.clone();
        s.extend_from_slice(tail);
        s
    }
}

fn batch_of(op: &str, a: &Tensor, square: bool) -> Result<Batch, TensorError> {
    let s = a.shape();
    if s.len() < 2 {
        return fail(format!(
            "`{op}` needs a matrix (at least 2 dimensions), not shape {}",
            shape_str(s)
        ));
    }
    let (rows, cols) = (s[s.len() - 2], s[s.len() - 1]);
    if square && rows != cols {
        return fail(format!(
            "`{op}` needs square matrices, not shape {} ({rows}×{cols})",
            shape_str(s)
        ));
    }
    Ok(Batch {
        lead: s[..s.len() - 2].to_vec(),
        rows,
        cols,
    })
}

/// `t` broadcast to `shape`, converted to the compute dtype `cd`, as
/// contiguous row-major storage.
fn prepared(t: &Tensor, shape: &[usize], cd: DType) -> Result<Storage, TensorError> {
    let v = if t.shape() == shape {
        t.clone()
    } else {
        t.broadcast_view(shape)?
    };
    let v = if v.dtype() == cd { v } else { v.cast(cd)? };
    v.to_storage()
}

/// The `n`-th matrix of `data` (`m × k` each, row-major) as a column-major
/// faer matrix, allocated fallibly.
fn load<T: Real>(data: &[T], m: usize, k: usize) -> Result<Mat<T>, Failure> {
    let mut a = Mat::<T>::new();
    a.try_reserve(m, k).map_err(|_| Failure::OutOfMemory)?;
    a.resize_with(m, k, |i, j| data[i * k + j]);
    Ok(a)
}

/// A zero matrix, allocated fallibly.
fn zeros<T: Real>(m: usize, k: usize) -> Result<Mat<T>, Failure> {
    let mut a = Mat::<T>::new();
    a.try_reserve(m, k).map_err(|_| Failure::OutOfMemory)?;
    a.resize_with(m, k, |_, _| T::ZERO);
    Ok(a)
}

/// Writes `a` into `out` row-major.
fn store<T: Real>(a: MatRef<'_, T>, out: &mut [T]) {
    let k = a.ncols();
    for i in 0..a.nrows() {
        for j in 0..k {
            out[i * k + j] = a[(i, j)];
        }
    }
}

fn scratch(req: StackReq) -> Result<MemBuffer, Failure> {
    MemBuffer::try_new(req).map_err(|_| Failure::OutOfMemory)
}

fn finite<T: Real>(data: &[T]) -> Step {
    if data.iter().all(|x| x.finite()) {
        Ok(())
    } else {
        Err(Failure::NotFinite)
    }
}

/// Runs `f` on every matrix of a batch: `f(i, outs)` gets the index of the
/// matrix and its slice of each output. Matrices are independent, so they
/// may run on any threads; the first failure in batch order is reported.
fn each<T: Real, const N: usize>(
    op: &str,
    count: usize,
    outs: &mut [Vec<T>; N],
    f: impl Fn(usize, [&mut [T]; N]) -> Step + Sync,
) -> Result<(), TensorError> {
    let per: [usize; N] = std::array::from_fn(|j| outs[j].len().checked_div(count).unwrap_or(0));
    let mut status: Vec<Option<Failure>> = try_filled(count, None)?;
    let run = |(i, st): (usize, &mut Option<Failure>), parts: [&mut [T]; N]| {
        if let Err(e) = f(i, parts) {
            *st = Some(e);
        }
    };
    if count <= 1 {
        // One matrix (or none): no thread pool involved.
        for (i, st) in status.iter_mut().enumerate() {
            let mut rest: [&mut [T]; N] = outs.each_mut().map(|v| &mut v[..]);
            let parts: [&mut [T]; N] = std::array::from_fn(|j| std::mem::take(&mut rest[j]));
            run((i, st), parts);
        }
    } else {
        // Each output cut into one chunk per matrix, then the chunks of
        // matrix i handed together to one task.
        let mut chunks: Vec<[&mut [T]; N]> = Vec::new();
        chunks
            .try_reserve_exact(count)
            .map_err(|_| crate::error::AllocError::of::<[&mut [T]; N]>(count))?;
        let mut iters: [std::slice::ChunksMut<'_, T>; N] = {
            let mut k = 0;
            outs.each_mut().map(|v| {
                let c = v.chunks_mut(per[k].max(1));
                k += 1;
                c
            })
        };
        for _ in 0..count {
            chunks.push(std::array::from_fn(|j| {
                if per[j] == 0 {
                    <&mut [T]>::default()
                } else {
                    iters[j].next().unwrap_or_default()
                }
            }));
        }
        status
            .par_iter_mut()
            .enumerate()
            .zip(chunks.into_par_iter())
            .for_each(|(s, parts)| run(s, parts));
    }
    let batched = count > 1;
    match status.iter().enumerate().find_map(|(i, s)| s.map(|e| (i, e))) {
        Some((i, e)) => fail(e.message(op, i, batched)),
        None => Ok(()),
    }
}

/// An output buffer of `n` elements.
fn out<T: Real>(n: usize) -> Result<Vec<T>, TensorError> {
    Ok(try_filled(n, T::ZERO)?)
}

fn tensor<T: Real>(v: Vec<T>, shape: Vec<usize>) -> Result<Tensor, TensorError> {
    Tensor::from_vec(v, shape)
}

/// Runs `$body` with `$T` the element type of compute dtype `$cd` and
/// `$v` the slice of `$storage`.
macro_rules! real_dispatch {
    ($cd:expr, $T:ident => $body:expr) => {
        match $cd {
            DType::F64 => {
                type $T = f64;
                $body
            }
            DType::F32 | DType::Bf16 | DType::F16 | DType::I32 | DType::I8 | DType::Bool => {
                type $T = f32;
                $body
            }
        }
    };
}

fn slice<T: Real>(s: &Storage) -> Result<&[T], TensorError> {
    T::slice(s)
        .ok_or_else(|| TensorError("internal error: a linear-algebra buffer has the wrong dtype".into()))
}

// ---------------------------------------------------------------- LU

/// The LU factorisation with partial pivoting of an `n × n` matrix: the
/// packed factors, the row permutation (forward, inverse) and the number
/// of row exchanges.
struct Lu<T> {
    lu: Mat<T>,
    fwd: Vec<usize>,
    inv: Vec<usize>,
    swaps: usize,
}

fn lu_factor<T: Real>(a: &[T], n: usize) -> Result<Lu<T>, Failure> {
    let mut lu = load(a, n, n)?;
    let mut fwd = try_filled(n, 0usize).map_err(|_| Failure::OutOfMemory)?;
    let mut inv = try_filled(n, 0usize).map_err(|_| Failure::OutOfMemory)?;
    let mut mem = scratch(lu::partial_pivoting::factor::lu_in_place_scratch::<usize, T>(
        n,
        n,
        Par::Seq,
        Default::default(),
    ))?;
    let (info, _) = lu::partial_pivoting::factor::lu_in_place(
        lu.as_mut(),
        &mut fwd,
        &mut inv,
        Par::Seq,
        MemStack::new(&mut mem),
        Default::default(),
    );
    Ok(Lu {
        lu,
        fwd,
        inv,
        swaps: info.transposition_count,
    })
}

impl<T: Real> Lu<T> {
    /// Whether a pivot is exactly zero (LAPACK getrf's `info > 0`).
    fn singular(&self) -> bool {
        (0..self.lu.nrows()).any(|i| self.lu[(i, i)] == T::ZERO)
    }

    /// Solves `A X = B` in place for the `n × k` right-hand side `b`.
    fn solve(&self, b: MatMut<'_, T>) -> Step {
        let n = self.lu.nrows();
        let mut mem = scratch(lu::partial_pivoting::solve::solve_in_place_scratch::<usize, T>(
            n,
            b.ncols(),
            Par::Seq,
        ))?;
        // SAFETY-free: the permutation arrays come from the factorisation
        // and are each other's inverse, which `new_checked` verifies.
        let perm = faer::perm::PermRef::new_checked(&self.fwd, &self.inv, n);
        lu::partial_pivoting::solve::solve_in_place_with_conj(
            self.lu.as_ref(),
            self.lu.as_ref(),
            perm,
            Conj::No,
            b,
            Par::Seq,
            MemStack::new(&mut mem),
        );
        Ok(())
    }

    /// (sign, log|det|) from the pivots; (0, -inf) for a zero pivot.
    fn slogdet(&self) -> (T, T) {
        if self.singular() {
            return (T::ZERO, -T::ONE / T::ZERO);
        }
        let mut sign = if self.swaps.is_multiple_of(2) {
            T::ONE
        } else {
            -T::ONE
        };
        let mut log = T::ZERO;
        for i in 0..self.lu.nrows() {
            let p = self.lu[(i, i)];
            if p < T::ZERO {
                sign = -sign;
            }
            log += p.abs().ln();
        }
        (sign, log)
    }

    /// The product of the pivots (with the permutation's sign), in pivot
    /// order; when that product under- or overflows although no pivot is
    /// zero or infinite, sign · exp(log|det|) instead (NumPy's formula).
    fn det(&self) -> T {
        let n = self.lu.nrows();
        let mut d = if self.swaps.is_multiple_of(2) {
            T::ONE
        } else {
            -T::ONE
        };
        for i in 0..n {
            d *= self.lu[(i, i)];
        }
        let pivots_ok = (0..n).all(|i| {
            let p = self.lu[(i, i)];
            p != T::ZERO && p.finite()
        });
        if pivots_ok && (d == T::ZERO || !d.finite()) {
            let (s, l) = self.slogdet();
            return s * l.exp();
        }
        if !pivots_ok && self.singular() {
            // Later pivots may be NaN once a column was all zero.
            return T::ZERO;
        }
        d
    }
}

// ---------------------------------------------------------------- kernels

/// The right-hand side `b` of `solve`/`lstsq` against an `a` of `rows`
/// rows: its batch axes, its column count, and whether it is one vector
/// ([rows], only at rank 1, as NumPy 2 has it) rather than [..., rows, k].
fn right_hand_side(
    args: &Args,
    op: &str,
    a: &Tensor,
    b: &Tensor,
    rows: usize,
) -> Result<(Vec<usize>, usize, bool), TensorError> {
    let vector = b.ndim() == 1;
    let (lead, bn, k) = if vector {
        (Vec::new(), b.shape()[0], 1)
    } else if b.ndim() >= 2 {
        let s = b.shape();
        (s[..s.len() - 2].to_vec(), s[s.len() - 2], s[s.len() - 1])
    } else {
        return Err(args.blame(
            "b",
            TensorError(format!(
                "`{op}`: `b` must be a vector or a matrix, not a rank-0 tensor"
            )),
        ));
    };
    if bn != rows {
        return Err(args.blame(
            "b",
            TensorError(format!(
                "`{op}`: `a` has {rows} rows but `b` has {bn} (shapes {} and {})",
                shape_str(a.shape()),
                shape_str(b.shape())
            )),
        ));
    }
    Ok((lead, k, vector))
}

/// `solve(a, b)`: `a` [..., n, n]; `b` [..., n, k], or [n] (a vector, only
/// when rank 1, as NumPy 2 has it); the batch axes broadcast.
pub(super) fn solve(args: &Args) -> Result<Out, TensorError> {
    let (a, b) = (args.tensor("a")?, args.tensor("b")?);
    let ab = args.about("a", batch_of("solve", a, true))?;
    let n = ab.rows;
    let (b_lead, k, vector) = right_hand_side(args, "solve", a, b, n)?;
    let lead = broadcast_shapes(&ab.lead, &b_lead)
        .map_err(|e| TensorError(format!("`solve`: the batch axes {}", e.0)))?;
    let cd = compute_dtype(crate::promote::promote(a.dtype(), b.dtype()));
    let mut a_shape = lead.clone();
    a_shape.extend([n, n]);
    let mut b_shape = lead.clone();
    if vector {
        b_shape = vec![n];
    } else {
        b_shape.extend([n, k]);
    }
    let count: usize = lead.iter().product();
    let sa = prepared(a, &a_shape, cd)?;
    let sb = if vector {
        // A vector right-hand side is one column shared by every matrix.
        prepared(b, &[n], cd)?
    } else {
        prepared(b, &b_shape, cd)?
    };
    let mut out_shape = lead.clone();
    if vector {
        out_shape.push(n);
    } else {
        out_shape.extend([n, k]);
    }
    real_dispatch!(cd, T => {
        let (da, db) = (slice::<T>(&sa)?, slice::<T>(&sb)?);
        let mut outs = [out::<T>(crate::tensor::numel_of(&out_shape)?)?];
        each("solve", count, &mut outs, |i, [x]| {
            let lu = lu_factor(&da[i * n * n..(i + 1) * n * n], n)?;
            if lu.singular() {
                return Err(Failure::Singular);
            }
            let rhs = if vector { db } else { &db[i * n * k..(i + 1) * n * k] };
            let mut m = load(rhs, n, k)?;
            lu.solve(m.as_mut())?;
            store(m.as_ref(), x);
            Ok(())
        })?;
        let [v] = outs;
        tensor(v, out_shape).map(Out::Tensor)
    })
}

pub(super) fn inv(args: &Args) -> Result<Out, TensorError> {
    let a = args.tensor("a")?;
    let ab = args.about("a", batch_of("inv", a, true))?;
    let n = ab.rows;
    let cd = compute_dtype(a.dtype());
    let sa = prepared(a, a.shape(), cd)?;
    real_dispatch!(cd, T => {
        let da = slice::<T>(&sa)?;
        let mut outs = [out::<T>(crate::tensor::numel_of(a.shape())?)?];
        each("inv", ab.count(), &mut outs, |i, [x]| {
            let lu = lu_factor(&da[i * n * n..(i + 1) * n * n], n)?;
            if lu.singular() {
                return Err(Failure::Singular);
            }
            let mut m = zeros::<T>(n, n)?;
            for j in 0..n {
                m[(j, j)] = T::ONE;
            }
            lu.solve(m.as_mut())?;
            store(m.as_ref(), x);
            Ok(())
        })?;
        let [v] = outs;
        tensor(v, a.shape().to_vec()).map(Out::Tensor)
    })
}

pub(super) fn det(args: &Args) -> Result<Out, TensorError> {
    let a = args.tensor("a")?;
    let ab = args.about("a", batch_of("det", a, true))?;
    let n = ab.rows;
    let cd = compute_dtype(a.dtype());
    let sa = prepared(a, a.shape(), cd)?;
    real_dispatch!(cd, T => {
        let da = slice::<T>(&sa)?;
        let mut outs = [out::<T>(ab.count())?];
        each("det", ab.count(), &mut outs, |i, [d]| {
            d[0] = lu_factor(&da[i * n * n..(i + 1) * n * n], n)?.det();
            Ok(())
        })?;
        let [v] = outs;
        tensor(v, ab.lead.clone()).map(Out::Tensor)
    })
}

pub(super) fn slogdet(args: &Args) -> Result<Out, TensorError> {
    let a = args.tensor("a")?;
    let ab = args.about("a", batch_of("slogdet", a, true))?;
    let n = ab.rows;
    let cd = compute_dtype(a.dtype());
    let sa = prepared(a, a.shape(), cd)?;
    real_dispatch!(cd, T => {
        let da = slice::<T>(&sa)?;
        let mut outs = [out::<T>(ab.count())?, out::<T>(ab.count())?];
        each("slogdet", ab.count(), &mut outs, |i, [s, l]| {
            let (sign, log) = lu_factor(&da[i * n * n..(i + 1) * n * n], n)?.slogdet();
            s[0] = sign;
            l[0] = log;
            Ok(())
        })?;
        let [s, l] = outs;
        Ok(Out::Tuple(vec![tensor(s, ab.lead.clone())?, tensor(l, ab.lead.clone())?]))
    })
}

pub(super) fn cholesky(args: &Args) -> Result<Out, TensorError> {
    let a = args.tensor("a")?;
    let ab = args.about("a", batch_of("cholesky", a, true))?;
    let n = ab.rows;
    let cd = compute_dtype(a.dtype());
    let sa = prepared(a, a.shape(), cd)?;
    real_dispatch!(cd, T => {
        let da = slice::<T>(&sa)?;
        let mut outs = [out::<T>(crate::tensor::numel_of(a.shape())?)?];
        each("cholesky", ab.count(), &mut outs, |i, [x]| {
            let src = &da[i * n * n..(i + 1) * n * n];
            // Only the lower triangle is read, as NumPy's cholesky does.
            let mut l = zeros::<T>(n, n)?;
            for c in 0..n {
                for r in c..n {
                    l[(r, c)] = src[r * n + c];
                }
            }
            let mut mem = scratch(cholesky::llt::factor::cholesky_in_place_scratch::<T>(
                n,
                Par::Seq,
                Default::default(),
            ))?;
            cholesky::llt::factor::cholesky_in_place(
                l.as_mut(),
                Default::default(),
                Par::Seq,
                MemStack::new(&mut mem),
                Default::default(),
            )
            .map_err(|_| Failure::NotPositiveDefinite)?;
            for c in 0..n {
                for r in 0..c {
                    l[(r, c)] = T::ZERO;
                }
            }
            if (0..n).any(|j| !l[(j, j)].finite()) {
                return Err(Failure::NotPositiveDefinite);
            }
            store(l.as_ref(), x);
            Ok(())
        })?;
        let [v] = outs;
        tensor(v, a.shape().to_vec()).map(Out::Tensor)
    })
}

/// `qr(a)`, reduced: `q` [..., m, k] with orthonormal columns and `r` [...,
/// k, n] upper triangular, k = min(m, n) (Householder, as LAPACK's geqrf;
/// the signs of r's diagonal are whatever the reflections give).
pub(super) fn qr(args: &Args) -> Result<Out, TensorError> {
    let a = args.tensor("a")?;
    let ab = args.about("a", batch_of("qr", a, false))?;
    let (m, n) = (ab.rows, ab.cols);
    let k = m.min(n);
    let cd = compute_dtype(a.dtype());
    let sa = prepared(a, a.shape(), cd)?;
    let count = ab.count();
    let nq = crate::tensor::numel_of(&ab.shape(&[m, k]))?;
    let nr = crate::tensor::numel_of(&ab.shape(&[k, n]))?;
    real_dispatch!(cd, T => {
        let da = slice::<T>(&sa)?;
        let mut outs = [out::<T>(nq)?, out::<T>(nr)?];
        each("qr", count, &mut outs, |i, [q, r]| {
            if k == 0 {
                return Ok(());
            }
            let mut f = load(&da[i * m * n..(i + 1) * m * n], m, n)?;
            let bs = qr::no_pivoting::factor::recommended_block_size::<T>(m, n);
            let mut coeff = zeros::<T>(bs, k)?;
            {
                let mut mem = scratch(qr::no_pivoting::factor::qr_in_place_scratch::<T>(
                    m,
                    n,
                    bs,
                    Par::Seq,
                    Default::default(),
                ))?;
                qr::no_pivoting::factor::qr_in_place(
                    f.as_mut(),
                    coeff.as_mut(),
                    Par::Seq,
                    MemStack::new(&mut mem),
                    Default::default(),
                );
            }
            for row in 0..k {
                for col in 0..n {
                    r[row * n + col] = if col >= row { f[(row, col)] } else { T::ZERO };
                }
            }
            let mut qm = zeros::<T>(m, k)?;
            for j in 0..k {
                qm[(j, j)] = T::ONE;
            }
            let mut mem = scratch(
                householder::apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(m, bs, k),
            )?;
            householder::apply_block_householder_sequence_on_the_left_in_place_with_conj(
                f.as_ref().subcols(0, k),
                coeff.as_ref(),
                Conj::No,
                qm.as_mut(),
                Par::Seq,
                MemStack::new(&mut mem),
            );
            store(qm.as_ref(), q);
            Ok(())
        })?;
        let [q, r] = outs;
        Ok(Out::Tuple(vec![tensor(q, ab.shape(&[m, k]))?, tensor(r, ab.shape(&[k, n]))?]))
    })
}

/// `eigh(a)`: the eigenvalues `w` [..., n] ascending and the eigenvectors
/// as the columns of `v` [..., n, n] of a symmetric matrix, of which only
/// the lower triangle is read (NumPy's default `UPLO="L"`).
pub(super) fn eigh(args: &Args) -> Result<Out, TensorError> {
    let a = args.tensor("a")?;
    let ab = args.about("a", batch_of("eigh", a, true))?;
    let n = ab.rows;
    let cd = compute_dtype(a.dtype());
    let sa = prepared(a, a.shape(), cd)?;
    real_dispatch!(cd, T => {
        let da = slice::<T>(&sa)?;
        let mut outs = [out::<T>(crate::tensor::numel_of(&ab.shape(&[n]))?)?, out::<T>(crate::tensor::numel_of(a.shape())?)?];
        each("eigh", ab.count(), &mut outs, |i, [w, v]| {
            let src = &da[i * n * n..(i + 1) * n * n];
            let mut low = zeros::<T>(n, n)?;
            for c in 0..n {
                for r in c..n {
                    let x = src[r * n + c];
                    if !x.finite() {
                        return Err(Failure::NotFinite);
                    }
                    low[(r, c)] = x;
                }
            }
            let mut u = zeros::<T>(n, n)?;
            let mut mem = scratch(evd::self_adjoint_evd_scratch::<T>(
                n,
                evd::ComputeEigenvectors::Yes,
                Par::Seq,
                Default::default(),
            ))?;
            evd::self_adjoint_evd(
                low.as_ref(),
                DiagMut::from_slice_mut(w),
                Some(u.as_mut()),
                Par::Seq,
                MemStack::new(&mut mem),
                Default::default(),
            )
            .map_err(|_| Failure::NoConvergence)?;
            store(u.as_ref(), v);
            Ok(())
        })?;
        let [w, v] = outs;
        Ok(Out::Tuple(vec![tensor(w, ab.shape(&[n]))?, tensor(v, a.shape().to_vec())?]))
    })
}

/// The thin SVD of one `m × n` matrix: `u` (m × k), `s` (k, descending),
/// `v` (n × k), k = min(m, n).
fn thin_svd<T: Real>(src: &[T], m: usize, n: usize, s: &mut [T]) -> Result<(Mat<T>, Mat<T>), Failure> {
    finite(src)?;
    let k = m.min(n);
    let a = load(src, m, n)?;
    let mut u = zeros::<T>(m, k)?;
    let mut v = zeros::<T>(n, k)?;
    if k == 0 {
        return Ok((u, v));
    }
    let mut mem = scratch(svd::svd_scratch::<T>(
        m,
        n,
        svd::ComputeSvdVectors::Thin,
        svd::ComputeSvdVectors::Thin,
        Par::Seq,
        Default::default(),
    ))?;
    svd::svd(
        a.as_ref(),
        DiagMut::from_slice_mut(s),
        Some(u.as_mut()),
        Some(v.as_mut()),
        Par::Seq,
        MemStack::new(&mut mem),
        Default::default(),
    )
    .map_err(|_| Failure::NoConvergence)?;
    Ok((u, v))
}

/// `svd(a)`, reduced: `u` [..., m, k], `s` [..., k] descending, `vh` [...,
/// k, n], k = min(m, n), with a = u · diag(s) · vh.
pub(super) fn svd_op(args: &Args) -> Result<Out, TensorError> {
    let a = args.tensor("a")?;
    let ab = args.about("a", batch_of("svd", a, false))?;
    let (m, n) = (ab.rows, ab.cols);
    let k = m.min(n);
    let cd = compute_dtype(a.dtype());
    let sa = prepared(a, a.shape(), cd)?;
    let (su, ss, sv) = (ab.shape(&[m, k]), ab.shape(&[k]), ab.shape(&[k, n]));
    real_dispatch!(cd, T => {
        let da = slice::<T>(&sa)?;
        let mut outs = [
            out::<T>(crate::tensor::numel_of(&su)?)?,
            out::<T>(crate::tensor::numel_of(&ss)?)?,
            out::<T>(crate::tensor::numel_of(&sv)?)?,
        ];
        each("svd", ab.count(), &mut outs, |i, [u, s, vh]| {
            let (um, vm) = thin_svd(&da[i * m * n..(i + 1) * m * n], m, n, s)?;
            store(um.as_ref(), u);
            store(vm.as_ref().transpose(), vh);
            Ok(())
        })?;
        let [u, s, vh] = outs;
        Ok(Out::Tuple(vec![tensor(u, su)?, tensor(s, ss)?, tensor(vh, sv)?]))
    })
}

/// The cutoff below which singular values count as zero: NumPy's
/// `max(m, n) · eps · s_max` (pinv's default `rtol`, matrix_rank's and
/// lstsq's default tolerance).
fn cutoff<T: Real>(s: &[T], m: usize, n: usize) -> T {
    let smax = s.first().copied().unwrap_or(T::ZERO);
    T::from_usize(m.max(n)) * T::EPS * smax
}

/// `v · diag(1/s) · uᵀ · b` over the singular values above the cutoff
/// (`b` m × r); with `b` the identity, the pseudo-inverse.
/// The least-squares solution of the m × n matrix `a` against `b` through
/// its thin SVD, singular values at or below NumPy's cutoff taken as zero
/// (`lstsq`, and `pinv` as the solution against the identity).
fn svd_solve<T: Real>(a: &[T], m: usize, n: usize, b: MatRef<'_, T>) -> Result<Mat<T>, Failure> {
    let mut s = try_filled(m.min(n), T::ZERO).map_err(|_| Failure::OutOfMemory)?;
    let (u, v) = thin_svd(a, m, n, &mut s)?;
    pseudo_solve(&u, &s, &v, b, cutoff(&s, m, n))
}

fn pseudo_solve<T: Real>(
    u: &Mat<T>,
    s: &[T],
    v: &Mat<T>,
    b: MatRef<'_, T>,
    cut: T,
) -> Result<Mat<T>, Failure> {
    let k = s.len();
    let r = b.ncols();
    let mut c = zeros::<T>(k, r)?;
    faer::linalg::matmul::matmul(
        c.as_mut(),
        Accum::Replace,
        u.as_ref().transpose(),
        b,
        T::ONE,
        Par::Seq,
    );
    for (i, &si) in s.iter().enumerate() {
        let scale = if si > cut { T::ONE / si } else { T::ZERO };
        for j in 0..r {
            c[(i, j)] *= scale;
        }
    }
    let mut x = zeros::<T>(v.nrows(), r)?;
    faer::linalg::matmul::matmul(
        x.as_mut(),
        Accum::Replace,
        v.as_ref(),
        c.as_ref(),
        T::ONE,
        Par::Seq,
    );
    Ok(x)
}

/// `lstsq(a, b)`: the least-squares solution of minimum norm, through the
/// SVD with NumPy's default cutoff (`rcond = max(m, n) · eps`), as NumPy's
/// gelsd-based `lstsq`. Only `x` is returned (not NumPy's residuals, rank
/// and singular values). `b` [..., m, r] or [m]; batched like `solve`.
pub(super) fn lstsq(args: &Args) -> Result<Out, TensorError> {
    let (a, b) = (args.tensor("a")?, args.tensor("b")?);
    let ab = args.about("a", batch_of("lstsq", a, false))?;
    let (m, n) = (ab.rows, ab.cols);
    let (b_lead, r, vector) = right_hand_side(args, "lstsq", a, b, m)?;
    let lead = broadcast_shapes(&ab.lead, &b_lead)
        .map_err(|e| TensorError(format!("`lstsq`: the batch axes {}", e.0)))?;
    let cd = compute_dtype(crate::promote::promote(a.dtype(), b.dtype()));
    let mut a_shape = lead.clone();
    a_shape.extend([m, n]);
    let sa = prepared(a, &a_shape, cd)?;
    let sb = if vector {
        prepared(b, &[m], cd)?
    } else {
        let mut s = lead.clone();
        s.extend([m, r]);
        prepared(b, &s, cd)?
    };
    let mut out_shape = lead.clone();
    if vector {
        out_shape.push(n);
    } else {
        out_shape.extend([n, r]);
    }
    let count: usize = lead.iter().product();
    real_dispatch!(cd, T => {
        let (da, db) = (slice::<T>(&sa)?, slice::<T>(&sb)?);
        let mut outs = [out::<T>(crate::tensor::numel_of(&out_shape)?)?];
        each("lstsq", count, &mut outs, |i, [x]| {
            let rhs = if vector { db } else { &db[i * m * r..(i + 1) * m * r] };
            finite(rhs)?;
            let bm = load(rhs, m, r)?;
            let sol = svd_solve(&da[i * m * n..(i + 1) * m * n], m, n, bm.as_ref())?;
            store(sol.as_ref(), x);
            Ok(())
        })?;
        let [v] = outs;
        tensor(v, out_shape).map(Out::Tensor)
    })
}

/// `pinv(a)`: the Moore–Penrose pseudo-inverse [..., n, m] through the
/// SVD, singular values at or below NumPy's default cutoff taken as zero.
pub(super) fn pinv(args: &Args) -> Result<Out, TensorError> {
    let a = args.tensor("a")?;
    let ab = args.about("a", batch_of("pinv", a, false))?;
    let (m, n) = (ab.rows, ab.cols);
    let cd = compute_dtype(a.dtype());
    let sa = prepared(a, a.shape(), cd)?;
    let shape = ab.shape(&[n, m]);
    real_dispatch!(cd, T => {
        let da = slice::<T>(&sa)?;
        let mut outs = [out::<T>(crate::tensor::numel_of(&shape)?)?];
        each("pinv", ab.count(), &mut outs, |i, [x]| {
            let mut eye = zeros::<T>(m, m)?;
            for j in 0..m {
                eye[(j, j)] = T::ONE;
            }
            let sol = svd_solve(&da[i * m * n..(i + 1) * m * n], m, n, eye.as_ref())?;
            store(sol.as_ref(), x);
            Ok(())
        })?;
        let [v] = outs;
        tensor(v, shape).map(Out::Tensor)
    })
}

/// `matrix_rank(a)`: the number of singular values above NumPy's default
/// tolerance, as i32 [...] (the batch shape).
pub(super) fn matrix_rank(args: &Args) -> Result<Out, TensorError> {
    let a = args.tensor("a")?;
    let ab = args.about("a", batch_of("matrix_rank", a, false))?;
    let (m, n) = (ab.rows, ab.cols);
    let k = m.min(n);
    let cd = compute_dtype(a.dtype());
    let sa = prepared(a, a.shape(), cd)?;
    real_dispatch!(cd, T => {
        let da = slice::<T>(&sa)?;
        let mut outs = [out::<T>(ab.count())?];
        each("matrix_rank", ab.count(), &mut outs, |i, [rank]| {
            let mut s = try_filled(k, T::ZERO).map_err(|_| Failure::OutOfMemory)?;
            let src = &da[i * m * n..(i + 1) * m * n];
            finite(src)?;
            if k > 0 {
                let a = load(src, m, n)?;
                let mut mem = scratch(svd::svd_scratch::<T>(
                    m,
                    n,
                    svd::ComputeSvdVectors::No,
                    svd::ComputeSvdVectors::No,
                    Par::Seq,
                    Default::default(),
                ))?;
                svd::svd(
                    a.as_ref(),
                    DiagMut::from_slice_mut(&mut s),
                    None,
                    None,
                    Par::Seq,
                    MemStack::new(&mut mem),
                    Default::default(),
                )
                .map_err(|_| Failure::NoConvergence)?;
            }
            let cut = cutoff(&s, m, n);
            rank[0] = T::from_usize(s.iter().filter(|&&x| x > cut).count());
            Ok(())
        })?;
        let [v] = outs;
        let ranks: Vec<i32> = crate::storage::try_collect(v.len(), v.iter().map(|x| x.to_f64() as i32))?;
        Tensor::from_vec(ranks, ab.lead.clone()).map(Out::Tensor)
    })
}
