//! The blocked, batched matrix product every fast contraction goes
//! through: `C[b] = A[b] · B[b]` with `A[b]` of shape m × k and `B[b]` of
//! k × n, each C element accumulated in ascending order of the contracted
//! index from +0 (spec §5.4).
//!
//! The shape is the classic one (Goto/BLIS): the contracted index is cut
//! into blocks of `kc`, the columns into blocks of `nc`; for each block a
//! packed copy of B (`kc × nc`, in `nr`-wide panels) is shared by all
//! threads, and each task packs its own rows of A (`mc × kc`, in `mr`-high
//! panels) and runs the register-tile microkernel over them. Packing widens
//! every element to the accumulation type, so bf16 and f16 operands cost no
//! more than f32 ones in the inner loop.
//!
//! None of this changes the arithmetic: an element's accumulator lives in a
//! register during a `kc` block and in C (in the accumulation type) between
//! blocks, the blocks run in ascending order, and each element belongs to
//! exactly one task. So the bits are those of the reference loop for any
//! blocking, any SIMD width and any number of threads.

use rayon::prelude::*;

use super::kernels::{Kernels, Micro};
use crate::storage::{Element, SharedMut};
use crate::tensor::TensorError;

/// A matrix operand seen as the microkernel wants it: element `(t, p)`,
/// where `p` is the contracted index and `t` is the row (for A) or the
/// column (for B).
pub(crate) trait Panels<C>: Sync {
    /// Packs a panel of width `w`: `out[p * w + t]` is element
    /// `(t0 + t, p0 + p)` of batch `batch` for `t < nt` and +0 for
    /// `nt ≤ t < w`, for `p < kc`. `out` holds exactly `kc * w` elements.
    #[allow(clippy::too_many_arguments)]
    fn pack(&self, batch: usize, t0: usize, nt: usize, p0: usize, kc: usize, w: usize, out: &mut [C]);
}

/// An operand stored as a strided view: element `(t, p)` of batch `b` is
/// `data[bases[b] + t * st + p * sp]`.
pub(crate) struct Strided<'a, T> {
    pub data: &'a [T],
    pub bases: Vec<isize>,
    pub st: isize,
    pub sp: isize,
}

impl<T: Element<Acc = C>, C: Kernels> Panels<C> for Strided<'_, T> {
    fn pack(&self, batch: usize, t0: usize, nt: usize, p0: usize, kc: usize, w: usize, out: &mut [C]) {
        let base = self.bases[batch] + t0 as isize * self.st + p0 as isize * self.sp;
        // Offsets below stay inside `data`: the layout came from a tensor
        // view whose bounds `Tensor::with_layout` checked.
        if self.st == 1 {
            for (p, row) in out.chunks_exact_mut(w).enumerate().take(kc) {
                let start = (base + p as isize * self.sp) as usize;
                let (valid, pad) = row.split_at_mut(nt);
                for (o, s) in valid.iter_mut().zip(&self.data[start..start + nt]) {
                    *o = s.widen();
                }
                pad.fill(C::ZERO);
            }
        } else {
            // Walk each t along p, so a row-major A is read contiguously.
            for t in 0..nt {
                let start = base + t as isize * self.st;
                for p in 0..kc {
                    out[p * w + t] = self.data[(start + p as isize * self.sp) as usize].widen();
                }
            }
            if nt < w {
                for row in out.chunks_exact_mut(w).take(kc) {
                    row[nt..].fill(C::ZERO);
                }
            }
        }
    }
}

/// Work below this many multiply-adds runs on one thread: splitting it
/// costs more than it saves. (Any split gives the same bits.)
const PARALLEL_WORK: usize = 1 << 20;

/// `batches` products of m × k by k × n, as one row-major buffer of
/// `batches × m × n` accumulators (in the accumulation type, unrounded).
pub(crate) fn gemm<C: Kernels>(
    batches: usize,
    m: usize,
    n: usize,
    k: usize,
    a: &dyn Panels<C>,
    b: &dyn Panels<C>,
) -> Result<Vec<C>, TensorError> {
    gemm_with(C::micro(), batches, m, n, k, a, b)
}

/// [`gemm`] with a given microkernel (tests run the portable one too).
pub(crate) fn gemm_with<C: Kernels>(
    micro: Micro<C>,
    batches: usize,
    m: usize,
    n: usize,
    k: usize,
    a: &dyn Panels<C>,
    b: &dyn Panels<C>,
) -> Result<Vec<C>, TensorError> {
    let len = batches
        .checked_mul(m)
        .and_then(|x| x.checked_mul(n))
        .ok_or_else(|| TensorError("a contraction result has too many elements".into()))?;
    // Zeroed memory from the allocator: untouched pages cost nothing
    // until written, and a failed allocation is an error.
    let mut c: Vec<C> = C::zeros(len)?;
    if len == 0 || k == 0 {
        // An empty sum is +0 (spec §5.4).
        return Ok(c);
    }
    if n < micro.nr && n < m {
        // A narrow B would fill most of each packed panel with padding.
        // Cᵀ = Bᵀ·Aᵀ has the same products in the same order (a·b = b·a
        // exactly, and fma(a, b, c) = fma(b, a, c)), so compute that and
        // transpose it.
        let ct = gemm_with(micro, batches, n, m, k, b, a)?;
        for (dst, src) in c.chunks_exact_mut(m * n).zip(ct.chunks_exact(m * n)) {
            for (j, col) in src.chunks_exact(m).enumerate() {
                for (i, x) in col.iter().enumerate() {
                    dst[i * n + j] = *x;
                }
            }
        }
        return Ok(c);
    }
    let per = m.saturating_mul(n).saturating_mul(k);
    let threads = rayon::current_num_threads();
    if batches > 1 && threads > 1 && (per < PARALLEL_WORK * 8 || batches >= 4 * threads) {
        // Many small products: one task per group of whole batches.
        let group = batches.div_ceil(4 * threads).max(1);
        c.par_chunks_mut(group * m * n)
            .enumerate()
            .for_each(|(g, chunk)| {
                let mut scratch = Scratch::default();
                for (i, cb) in chunk.chunks_exact_mut(m * n).enumerate() {
                    one(&micro, g * group + i, m, n, k, a, b, cb, false, &mut scratch);
                }
            });
    } else {
        let parallel = threads > 1 && per >= PARALLEL_WORK;
        let mut scratch = Scratch::default();
        for (bi, cb) in c.chunks_exact_mut(m * n).enumerate() {
            one(&micro, bi, m, n, k, a, b, cb, parallel, &mut scratch);
        }
    }
    Ok(c)
}

/// Buffers reused from one block to the next.
struct Scratch<C> {
    bpack: Vec<C>,
    apack: Vec<C>,
    tile: Vec<C>,
}

impl<C> Default for Scratch<C> {
    fn default() -> Self {
        Scratch {
            bpack: Vec::new(),
            apack: Vec::new(),
            tile: Vec::new(),
        }
    }
}

/// One task: rows `[r0, r1)` of the product (whole `mr` panels apart from
/// the last), against B panels `[q0, q1)` of the current column block.
#[derive(Clone, Copy)]
struct Task {
    r0: usize,
    r1: usize,
    q0: usize,
    q1: usize,
}

/// Cuts the current block into tasks. Rows go in blocks of at most `mc`
/// (the L2-resident slab of A); when running in parallel the columns are
/// cut as well, so that there are enough tasks to keep every thread busy
/// to the end.
fn plan<C>(micro: &Micro<C>, m: usize, npanels: usize, parallel: bool) -> Vec<Task> {
    let rpanels = m.div_ceil(micro.mr);
    let per_block = (micro.mc / micro.mr).max(1);
    let nrb = rpanels.div_ceil(per_block);
    let ncb = if parallel {
        (8 * rayon::current_num_threads()).div_ceil(nrb).clamp(1, npanels)
    } else {
        1
    };
    let mut tasks = Vec::with_capacity(nrb * ncb);
    for r in 0..nrb {
        // Even shares of panels, so no block is a sliver.
        let (p0, p1) = (r * rpanels / nrb, (r + 1) * rpanels / nrb);
        let (r0, r1) = (p0 * micro.mr, (p1 * micro.mr).min(m));
        for q in 0..ncb {
            tasks.push(Task {
                r0,
                r1,
                q0: q * npanels / ncb,
                q1: (q + 1) * npanels / ncb,
            });
        }
    }
    tasks
}

/// One product of the batch, into `c` (m × n, row-major).
#[allow(clippy::too_many_arguments)]
fn one<C: Kernels>(
    micro: &Micro<C>,
    batch: usize,
    m: usize,
    n: usize,
    k: usize,
    a: &dyn Panels<C>,
    b: &dyn Panels<C>,
    c: &mut [C],
    parallel: bool,
    scratch: &mut Scratch<C>,
) {
    let (mr, nr) = (micro.mr, micro.nr);
    // Tasks only write tiles they own (disjoint row × column ranges), and
    // `c` outlives the parallel loops.
    let cptr = SharedMut(c.as_mut_ptr());
    for jc in (0..n).step_by(micro.nc) {
        let nc = micro.nc.min(n - jc);
        let npanels = nc.div_ceil(nr);
        let tasks = plan(micro, m, npanels, parallel);
        for pc in (0..k).step_by(micro.kc) {
            let kc = micro.kc.min(k - pc);
            let first = pc == 0;
            let bpack = &mut scratch.bpack;
            bpack.clear();
            bpack.resize(npanels * kc * nr, C::ZERO);
            let pack_b = |(q, panel): (usize, &mut [C])| {
                let j0 = jc + q * nr;
                b.pack(batch, j0, nr.min(n - j0), pc, kc, nr, panel);
            };
            if parallel {
                bpack.par_chunks_mut(kc * nr).enumerate().for_each(pack_b);
            } else {
                bpack.chunks_mut(kc * nr).enumerate().for_each(pack_b);
            }
            let bpack = &scratch.bpack[..];
            let run = |task: &Task, apack: &mut Vec<C>, tile: &mut Vec<C>| {
                // Pack this task's rows of A: whole mr-high panels, the
                // last one as high as the rows left.
                apack.clear();
                apack.resize((task.r1 - task.r0) * kc, C::ZERO);
                let mut off = 0;
                for i0 in (task.r0..task.r1).step_by(mr) {
                    let rows = mr.min(task.r1 - i0);
                    a.pack(batch, i0, rows, pc, kc, rows, &mut apack[off..off + rows * kc]);
                    off += rows * kc;
                }
                tile.resize(mr * nr, C::ZERO);
                for q in task.q0..task.q1 {
                    let bp = bpack[q * kc * nr..].as_ptr();
                    let j0 = jc + q * nr;
                    let cols = nr.min(n - j0);
                    for (ip, i0) in (task.r0..task.r1).step_by(mr).enumerate() {
                        let rows = mr.min(task.r1 - i0);
                        let ap = apack[ip * mr * kc..].as_ptr();
                        // SAFETY: `ap` has `rows * kc` packed values and `bp`
                        // `nr * kc` (the buffers were sized for them); the C
                        // tile (rows i0.., columns j0..j0 + nr) lies inside
                        // c when cols == nr, and belongs to this task alone;
                        // otherwise the kernel writes the `tile` buffer of
                        // `mr × nr` and only the valid part is copied out.
                        unsafe {
                            let ct = cptr.ptr().add(i0 * n + j0);
                            if cols == nr {
                                (micro.run)(kc, rows, ap, bp, ct, n, first);
                            } else {
                                let tp = tile.as_mut_ptr();
                                if !first {
                                    for i in 0..rows {
                                        std::ptr::copy_nonoverlapping(ct.add(i * n), tp.add(i * nr), cols);
                                    }
                                }
                                (micro.run)(kc, rows, ap, bp, tp, nr, first);
                                for i in 0..rows {
                                    std::ptr::copy_nonoverlapping(tp.add(i * nr), ct.add(i * n), cols);
                                }
                            }
                        }
                    }
                }
            };
            if parallel {
                tasks
                    .par_iter()
                    .for_each_init(|| (Vec::new(), Vec::new()), |(ap, t), task| run(task, ap, t));
            } else {
                for task in &tasks {
                    run(task, &mut scratch.apack, &mut scratch.tile);
                }
            }
        }
    }
}
