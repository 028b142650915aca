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

    /// Packs consecutive panels of width `w`, as many as `out` holds
    /// (`kc * w` elements each), of the `nt` values of t from `t0`: panel
    /// `g` is what `pack` gives for `t0 + g * w`. Every panel has at least
    /// one valid t.
    #[allow(clippy::too_many_arguments)]
    fn pack_panels(&self, batch: usize, t0: usize, nt: usize, p0: usize, kc: usize, w: usize, out: &mut [C]) {
        pack_one_by_one(self, batch, t0, nt, p0, kc, w, out);
    }
}

/// [`Panels::pack_panels`] as a `pack` per panel.
#[allow(clippy::too_many_arguments)]
fn pack_one_by_one<C, P: Panels<C> + ?Sized>(
    panels: &P,
    batch: usize,
    t0: usize,
    nt: usize,
    p0: usize,
    kc: usize,
    w: usize,
    out: &mut [C],
) {
    for (g, panel) in out.chunks_exact_mut(kc * w).enumerate() {
        let done = g * w;
        panels.pack(batch, t0 + done, w.min(nt.saturating_sub(done)), p0, kc, w, panel);
    }
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
            // Runs along t are contiguous: `pack_panels`' row copy, for
            // one panel.
            self.pack_panels(batch, t0, nt, p0, kc, w, out);
        } else if self.sp == 1 && nt == w {
            // Each t's run along p is contiguous (a row-major A): the rows
            // are read side by side, so `out` is written in order.
            let row = |t: usize| {
                let start = (base + t as isize * self.st) as usize;
                &self.data[start..start + kc]
            };
            macro_rules! side_by_side {
                ($($w:literal),*) => {
                    match w {
                        $($w => pack_rows::<T, C, $w>(std::array::from_fn(row), out),)*
                        _ => self.pack_by_t(base, nt, kc, w, out),
                    }
                };
            }
            side_by_side!(4, 6, 8, 12, 14, 16, 32)
        } else {
            self.pack_by_t(base, nt, kc, w, out);
        }
    }

    fn pack_panels(&self, batch: usize, t0: usize, nt: usize, p0: usize, kc: usize, w: usize, out: &mut [C]) {
        if self.st != 1 {
            pack_one_by_one(self, batch, t0, nt, p0, kc, w, out);
            return;
        }
        // Each p's run along t is contiguous (a row-major B): it is read
        // once for all the panels, rather than a panel's width of it from
        // each of `kc` rows (a page apart in a wide B) panel by panel.
        let base = self.bases[batch] + t0 as isize + p0 as isize * self.sp;
        let panels = out.len() / (kc * w);
        let nt = nt.min(panels * w);
        for p in 0..kc {
            let start = (base + p as isize * self.sp) as usize;
            let run = &self.data[start..start + nt];
            for (g, panel) in out.chunks_exact_mut(kc * w).enumerate() {
                let row = &mut panel[p * w..(p + 1) * w];
                let src = run.get(g * w..nt.min((g + 1) * w)).unwrap_or_default();
                let (valid, pad) = row.split_at_mut(src.len());
                widen_into(valid, src);
                pad.fill(C::ZERO);
            }
        }
    }
}

impl<T: Element<Acc = C>, C: Kernels> Strided<'_, T> {
    /// The general pack: each t walked along p, its panel written `w`
    /// apart. The fallback for what `pack_panels`' row copy (runs along t
    /// contiguous) and `pack_rows` (a full panel of a width it has, runs
    /// along p contiguous) do not take: a partial panel of a row-major A,
    /// other widths, any other layout.
    fn pack_by_t(&self, base: isize, nt: usize, kc: usize, w: usize, out: &mut [C]) {
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

/// `out[i] = src[i].widen()`, eight at a time: a run as short as a panel's
/// width (16 values) is a call into `memcpy` when written as one loop.
fn widen_into<T: Element<Acc = C>, C: Copy>(out: &mut [C], src: &[T]) {
    let mut o8 = out.chunks_exact_mut(8);
    let mut s8 = src.chunks_exact(8);
    for (o, s) in (&mut o8).zip(&mut s8) {
        for i in 0..8 {
            o[i] = s[i].widen();
        }
    }
    for (o, s) in o8.into_remainder().iter_mut().zip(s8.remainder()) {
        *o = s.widen();
    }
}

/// A panel of width `W` from `W` rows of `kc` values each:
/// `out[p * W + t] = rows[t][p]`, written in order.
fn pack_rows<T: Element<Acc = C>, C: Copy, const W: usize>(rows: [&[T]; W], out: &mut [C]) {
    for (p, o) in out.chunks_exact_mut(W).enumerate() {
        for t in 0..W {
            o[t] = rows[t][p].widen();
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
/// (the L2-resident slab of A). In parallel, with at least two row blocks
/// per thread, their count is rounded up to a multiple of the thread count
/// so the threads get equal shares; with fewer the columns are cut as well,
/// so that there are enough tasks to keep every thread busy to the end
/// (each task packs its rows of A, so column cuts pack A more than once).
fn plan<C>(micro: &Micro<C>, m: usize, npanels: usize, parallel: bool) -> Vec<Task> {
    let rpanels = m.div_ceil(micro.mr);
    let per_block = (micro.mc / micro.mr).max(1);
    let mut nrb = rpanels.div_ceil(per_block);
    let threads = rayon::current_num_threads();
    let rows_suffice = parallel && nrb >= 2 * threads;
    if rows_suffice {
        nrb = nrb.next_multiple_of(threads).min(rpanels);
    }
    let ncb = if parallel && !rows_suffice {
        (8 * threads).div_ceil(nrb).clamp(1, npanels)
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
            // Panels in groups of at least 128 columns, packed together.
            let group = (128 / nr).max(1);
            let pack_b = |(q, panels): (usize, &mut [C])| {
                let j0 = jc + q * group * nr;
                b.pack_panels(batch, j0, (group * nr).min(n - j0), pc, kc, nr, panels);
            };
            if parallel {
                bpack.par_chunks_mut(group * kc * nr).enumerate().for_each(pack_b);
            } else {
                bpack.chunks_mut(group * kc * nr).enumerate().for_each(pack_b);
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
