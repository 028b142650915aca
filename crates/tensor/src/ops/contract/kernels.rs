//! The arithmetic of one contraction step, and the register-tile
//! microkernels that perform it fast.
//!
//! Spec §5.4 fixes what one step is: `acc ← acc ⊕ a·b`, with the product
//! exact and rounded together with the add. [`Accumulate`] states that step once
//! per accumulation type — a fused multiply-add for f32 (which is also the
//! exact-product sum that bf16 and f16 operands need, since the product of
//! two 8- or 11-bit significands fits f32 exactly), a rounded product then a
//! rounded add for f64, wrapping arithmetic for i32 — and every path (the
//! reference loops, the portable microkernel, the SIMD ones) is built from
//! it or is an instruction-for-instruction vector copy of it.
//!
//! A microkernel computes an `rows × NR` tile of C over `kc` steps of the
//! contracted index, in ascending order, with the tile's accumulators held
//! in registers. It either starts them at +0 (`first`, the first block of
//! the contracted index) or reloads them from C, where the previous block
//! left them in the accumulation type; so blocking the contracted index does
//! not change any element's sequence of steps. The SIMD lanes run over the
//! output columns, never over the contracted index, for the same reason.

use crate::dtype::DType;
use crate::storage::{try_zeroed, Accumulate};
use crate::tensor::{Tensor, TensorError};

/// A microkernel: `(kc, rows, ap, bp, c, ldc, first)`.
///
/// `ap` holds `kc` groups of `rows` values of A (row-interleaved: step `p`,
/// row `i` at `p * rows + i`), `bp` holds `kc` groups of `nr` values of B
/// (column-interleaved), and `c` points at the tile's top-left element of a
/// row-major C with row stride `ldc`.
///
/// # Safety
/// `rows ≤ mr`; `ap` must be valid for `kc * rows` reads, `bp` for
/// `kc * nr` reads, and `c` for reads and writes of `rows` rows of `nr`
/// elements at stride `ldc`.
pub(crate) type MicroFn<C> = unsafe fn(usize, usize, *const C, *const C, *mut C, usize, bool);

/// A microkernel with the blocking that suits it.
#[derive(Clone, Copy)]
pub(crate) struct Micro<C> {
    /// Rows and columns of the register tile.
    pub mr: usize,
    pub nr: usize,
    /// Contracted-index block: each packed panel of B (`kc × nr`) is
    /// reused by every A panel of a row block, and a longer block amortises
    /// the load and store of the C tile over more steps.
    pub kc: usize,
    /// Row block (a packed block of A, `mc × kc`, stays in L2).
    pub mc: usize,
    /// Column block (a packed block of B, `kc × nc`, stays in L3).
    pub nc: usize,
    pub run: MicroFn<C>,
}

/// The contraction kernels of an accumulation type: f32 (for bf16, f16
/// and f32 operands), f64, i32 (for bool, i8 and i32 operands). The step
/// arithmetic itself is [`Accumulate`]'s.
pub(crate) trait Kernels: Accumulate {
    /// The microkernels this CPU supports for this type, fastest first
    /// (the portable one last).
    fn micros() -> Vec<Micro<Self>>;
    /// The fastest of them (`micros` always ends with the portable one).
    fn micro() -> Micro<Self> {
        Self::micros()
            .first()
            .copied()
            .unwrap_or_else(portable_micro::<Self>)
    }
    /// `n` zeros, or an error (not an abort) when memory runs out.
    fn zeros(n: usize) -> Result<Vec<Self>, TensorError> {
        Ok(try_zeroed::<Self>(n)?)
    }
    /// The accumulators rounded once each into the result dtype.
    fn finish(v: Vec<Self>, shape: Vec<usize>, dtype: DType) -> Result<Tensor, TensorError>;
}

impl Kernels for f32 {
    fn micros() -> Vec<Micro<f32>> {
        let mut v = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            if crate::isa::allows(crate::isa::Level::Avx512) && std::is_x86_feature_detected!("avx512f") {
                v.push(Micro {
                    mr: 14,
                    nr: 32,
                    kc: 512,
                    mc: 112,
                    nc: 4096,
                    run: x86::f32_avx512,
                });
            }
            if crate::isa::allows(crate::isa::Level::Avx2)
                && std::is_x86_feature_detected!("avx2")
                && std::is_x86_feature_detected!("fma")
            {
                v.push(Micro {
                    mr: 6,
                    nr: 16,
                    kc: 256,
                    mc: 96,
                    nc: 4096,
                    run: x86::f32_avx2,
                });
            }
        }
        v.push(portable_micro::<f32>());
        v
    }
    fn finish(v: Vec<f32>, shape: Vec<usize>, dtype: DType) -> Result<Tensor, TensorError> {
        match dtype {
            DType::F32 => Tensor::from_vec(v, shape),
            DType::Bf16 => {
                let out: Vec<half::bf16> = v.into_iter().map(crate::convert::f32_to_bf16).collect();
                Tensor::from_vec(out, shape)
            }
            DType::F16 => {
                let out: Vec<half::f16> = v
                    .into_iter()
                    .map(|x| half::f16::from_bits(crate::convert::f64_to_f16_bits(f64::from(x))))
                    .collect();
                Tensor::from_vec(out, shape)
            }
            DType::Bool | DType::I8 | DType::I32 | DType::F64 => Err(internal(dtype, "f32")),
        }
    }
}

impl Kernels for f64 {
    fn micros() -> Vec<Micro<f64>> {
        let mut v = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            if crate::isa::allows(crate::isa::Level::Avx512) && std::is_x86_feature_detected!("avx512f") {
                v.push(Micro {
                    mr: 12,
                    nr: 16,
                    kc: 512,
                    mc: 96,
                    nc: 4096,
                    run: x86::f64_avx512,
                });
            }
            if crate::isa::allows(crate::isa::Level::Avx2) && std::is_x86_feature_detected!("avx") {
                v.push(Micro {
                    mr: 6,
                    nr: 8,
                    kc: 256,
                    mc: 96,
                    nc: 4096,
                    run: x86::f64_avx,
                });
            }
        }
        v.push(portable_micro::<f64>());
        v
    }
    fn finish(v: Vec<f64>, shape: Vec<usize>, dtype: DType) -> Result<Tensor, TensorError> {
        match dtype {
            DType::F64 => Tensor::from_vec(v, shape),
            DType::Bool | DType::I8 | DType::I32 | DType::Bf16 | DType::F16 | DType::F32 => {
                Err(internal(dtype, "f64"))
            }
        }
    }
}

impl Kernels for i32 {
    fn micros() -> Vec<Micro<i32>> {
        let mut v = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            if crate::isa::allows(crate::isa::Level::Avx2) && std::is_x86_feature_detected!("avx2") {
                v.push(Micro {
                    mr: 4,
                    nr: 16,
                    kc: 256,
                    mc: 96,
                    nc: 4096,
                    run: x86::i32_avx2,
                });
            }
        }
        v.push(portable_micro::<i32>());
        v
    }
    fn finish(v: Vec<i32>, shape: Vec<usize>, dtype: DType) -> Result<Tensor, TensorError> {
        match dtype {
            DType::I32 => Tensor::from_vec(v, shape),
            DType::Bool | DType::I8 | DType::Bf16 | DType::F16 | DType::F32 | DType::F64 => {
                Err(internal(dtype, "i32"))
            }
        }
    }
}

fn internal(dtype: DType, acc: &str) -> TensorError {
    TensorError(format!(
        "internal error: a contraction accumulated in {acc} cannot produce {dtype}"
    ))
}

const PORTABLE_MR: usize = 4;
const PORTABLE_NR: usize = 8;

fn portable_micro<C: Kernels>() -> Micro<C> {
    Micro {
        mr: PORTABLE_MR,
        nr: PORTABLE_NR,
        kc: 256,
        mc: 64,
        nc: 2048,
        run: portable::<C>,
    }
}

/// The microkernel for any target, written with [`Accumulate::mul_add`] itself:
/// the definition the SIMD kernels must reproduce.
///
/// # Safety
/// As [`MicroFn`], with `mr = 4` and `nr = 8`.
unsafe fn portable<C: Kernels>(
    kc: usize,
    rows: usize,
    ap: *const C,
    bp: *const C,
    c: *mut C,
    ldc: usize,
    first: bool,
) {
    let mut acc = [[C::ZERO; PORTABLE_NR]; PORTABLE_MR];
    let rows = rows.min(PORTABLE_MR);
    if !first {
        for (i, row) in acc.iter_mut().enumerate().take(rows) {
            for (j, x) in row.iter_mut().enumerate() {
                *x = *c.add(i * ldc + j);
            }
        }
    }
    for p in 0..kc {
        let b = bp.add(p * PORTABLE_NR);
        for (i, row) in acc.iter_mut().enumerate().take(rows) {
            let a = *ap.add(p * rows + i);
            for (j, x) in row.iter_mut().enumerate() {
                *x = C::mul_add(*x, a, *b.add(j));
            }
        }
    }
    for (i, row) in acc.iter().enumerate().take(rows) {
        for (j, x) in row.iter().enumerate() {
            *c.add(i * ldc + j) = *x;
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! The x86-64 microkernels, each compiled for the instruction set it
    //! names and chosen at run time (the default x86-64 target has no FMA,
    //! and `f32::mul_add` without it is a call into a software fma).

    use std::arch::x86_64::*;

    /// Expands to a `match` that calls `$k::<R>` for `rows` = R in 1..=MR,
    /// so every row count gets a kernel whose accumulators are all
    /// registers.
    macro_rules! by_rows {
        ($rows:expr, $k:ident, $args:tt, [$($r:literal),*]) => {
            match $rows {
                $($r => $k::<$r> $args,)*
                _ => {}
            }
        };
    }

    // ---- f32: fused multiply-add --------------------------------------

    /// Asks for the C tile's lines (rows of `w` elements from `c`, `ldc`
    /// apart) ahead of the loads and stores that end a kernel: the rows
    /// lie a page apart in a wide C and would otherwise miss one by one.
    #[inline(always)]
    unsafe fn prefetch_tile<T, const MR: usize>(c: *mut T, ldc: usize, w: usize) {
        for i in 0..MR {
            _mm_prefetch::<_MM_HINT_T0>(c.add(i * ldc) as *const i8);
            _mm_prefetch::<_MM_HINT_T0>(c.add(i * ldc + w - 1) as *const i8);
        }
    }

    /// The AVX2 kernels take the contracted index in groups of four steps,
    /// then the rest one by one: the same steps in the same order, with a
    /// quarter of the loop's own work (13 % faster in cache on Zen 3).
    const UNROLL: usize = 4;

    /// Runs `$step` for each of the `$kc` steps, in order, with `$a` and
    /// `$b` at the packed A and B of the group of [`UNROLL`] steps and `$u`
    /// the step within it (A's steps are `$mr` values apart, B's `$nr`).
    macro_rules! each_step {
        ($kc:expr, $ap:expr, $bp:expr, $mr:expr, $nr:expr, |$a:ident, $b:ident, $u:ident| $step:block) => {{
            let (mut $a, mut $b) = ($ap, $bp);
            for _ in 0..$kc / UNROLL {
                for $u in 0..UNROLL $step
                $a = $a.add(UNROLL * $mr);
                $b = $b.add(UNROLL * $nr);
            }
            for $u in 0..$kc % UNROLL $step
        }};
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn f32_avx2_tile<const MR: usize>(
        kc: usize,
        ap: *const f32,
        bp: *const f32,
        c: *mut f32,
        ldc: usize,
        first: bool,
    ) {
        prefetch_tile::<f32, MR>(c, ldc, 16);
        let mut acc = [[_mm256_setzero_ps(); 2]; MR];
        if !first {
            for (i, row) in acc.iter_mut().enumerate() {
                row[0] = _mm256_loadu_ps(c.add(i * ldc));
                row[1] = _mm256_loadu_ps(c.add(i * ldc + 8));
            }
        }
        each_step!(kc, ap, bp, MR, 16, |a, b, u| {
            let b0 = _mm256_loadu_ps(b.add(u * 16));
            let b1 = _mm256_loadu_ps(b.add(u * 16 + 8));
            for (i, row) in acc.iter_mut().enumerate() {
                let ai = _mm256_broadcast_ss(&*a.add(u * MR + i));
                row[0] = _mm256_fmadd_ps(ai, b0, row[0]);
                row[1] = _mm256_fmadd_ps(ai, b1, row[1]);
            }
        });
        for (i, row) in acc.iter().enumerate() {
            _mm256_storeu_ps(c.add(i * ldc), row[0]);
            _mm256_storeu_ps(c.add(i * ldc + 8), row[1]);
        }
    }

    /// # Safety
    /// As `MicroFn` with `mr = 6`, `nr = 16`, on a CPU with AVX2 and FMA.
    pub(super) unsafe fn f32_avx2(
        kc: usize,
        rows: usize,
        ap: *const f32,
        bp: *const f32,
        c: *mut f32,
        ldc: usize,
        first: bool,
    ) {
        by_rows!(
            rows,
            f32_avx2_tile,
            (kc, ap, bp, c, ldc, first),
            [1, 2, 3, 4, 5, 6]
        );
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn f32_avx512_tile<const MR: usize>(
        kc: usize,
        ap: *const f32,
        bp: *const f32,
        c: *mut f32,
        ldc: usize,
        first: bool,
    ) {
        let mut acc = [[_mm512_setzero_ps(); 2]; MR];
        if !first {
            for (i, row) in acc.iter_mut().enumerate() {
                row[0] = _mm512_loadu_ps(c.add(i * ldc));
                row[1] = _mm512_loadu_ps(c.add(i * ldc + 16));
            }
        }
        for p in 0..kc {
            let b0 = _mm512_loadu_ps(bp.add(p * 32));
            let b1 = _mm512_loadu_ps(bp.add(p * 32 + 16));
            let a = ap.add(p * MR);
            for (i, row) in acc.iter_mut().enumerate() {
                let ai = _mm512_set1_ps(*a.add(i));
                row[0] = _mm512_fmadd_ps(ai, b0, row[0]);
                row[1] = _mm512_fmadd_ps(ai, b1, row[1]);
            }
        }
        for (i, row) in acc.iter().enumerate() {
            _mm512_storeu_ps(c.add(i * ldc), row[0]);
            _mm512_storeu_ps(c.add(i * ldc + 16), row[1]);
        }
    }

    /// # Safety
    /// As `MicroFn` with `mr = 14`, `nr = 32`, on a CPU with AVX-512F.
    pub(super) unsafe fn f32_avx512(
        kc: usize,
        rows: usize,
        ap: *const f32,
        bp: *const f32,
        c: *mut f32,
        ldc: usize,
        first: bool,
    ) {
        by_rows!(
            rows,
            f32_avx512_tile,
            (kc, ap, bp, c, ldc, first),
            [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]
        );
    }

    // ---- f64: rounded product, then rounded add -------------------------

    #[target_feature(enable = "avx")]
    unsafe fn f64_avx_tile<const MR: usize>(
        kc: usize,
        ap: *const f64,
        bp: *const f64,
        c: *mut f64,
        ldc: usize,
        first: bool,
    ) {
        prefetch_tile::<f64, MR>(c, ldc, 8);
        let mut acc = [[_mm256_setzero_pd(); 2]; MR];
        if !first {
            for (i, row) in acc.iter_mut().enumerate() {
                row[0] = _mm256_loadu_pd(c.add(i * ldc));
                row[1] = _mm256_loadu_pd(c.add(i * ldc + 4));
            }
        }
        // The product rounded, then the sum (spec §5.4).
        each_step!(kc, ap, bp, MR, 8, |a, b, u| {
            let b0 = _mm256_loadu_pd(b.add(u * 8));
            let b1 = _mm256_loadu_pd(b.add(u * 8 + 4));
            for (i, row) in acc.iter_mut().enumerate() {
                let ai = _mm256_broadcast_sd(&*a.add(u * MR + i));
                row[0] = _mm256_add_pd(row[0], _mm256_mul_pd(ai, b0));
                row[1] = _mm256_add_pd(row[1], _mm256_mul_pd(ai, b1));
            }
        });
        for (i, row) in acc.iter().enumerate() {
            _mm256_storeu_pd(c.add(i * ldc), row[0]);
            _mm256_storeu_pd(c.add(i * ldc + 4), row[1]);
        }
    }

    /// # Safety
    /// As `MicroFn` with `mr = 6`, `nr = 8`, on a CPU with AVX.
    pub(super) unsafe fn f64_avx(
        kc: usize,
        rows: usize,
        ap: *const f64,
        bp: *const f64,
        c: *mut f64,
        ldc: usize,
        first: bool,
    ) {
        by_rows!(
            rows,
            f64_avx_tile,
            (kc, ap, bp, c, ldc, first),
            [1, 2, 3, 4, 5, 6]
        );
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn f64_avx512_tile<const MR: usize>(
        kc: usize,
        ap: *const f64,
        bp: *const f64,
        c: *mut f64,
        ldc: usize,
        first: bool,
    ) {
        let mut acc = [[_mm512_setzero_pd(); 2]; MR];
        if !first {
            for (i, row) in acc.iter_mut().enumerate() {
                row[0] = _mm512_loadu_pd(c.add(i * ldc));
                row[1] = _mm512_loadu_pd(c.add(i * ldc + 8));
            }
        }
        for p in 0..kc {
            let b0 = _mm512_loadu_pd(bp.add(p * 16));
            let b1 = _mm512_loadu_pd(bp.add(p * 16 + 8));
            let a = ap.add(p * MR);
            for (i, row) in acc.iter_mut().enumerate() {
                let ai = _mm512_set1_pd(*a.add(i));
                row[0] = _mm512_add_pd(row[0], _mm512_mul_pd(ai, b0));
                row[1] = _mm512_add_pd(row[1], _mm512_mul_pd(ai, b1));
            }
        }
        for (i, row) in acc.iter().enumerate() {
            _mm512_storeu_pd(c.add(i * ldc), row[0]);
            _mm512_storeu_pd(c.add(i * ldc + 8), row[1]);
        }
    }

    /// # Safety
    /// As `MicroFn` with `mr = 12`, `nr = 16`, on a CPU with AVX-512F.
    pub(super) unsafe fn f64_avx512(
        kc: usize,
        rows: usize,
        ap: *const f64,
        bp: *const f64,
        c: *mut f64,
        ldc: usize,
        first: bool,
    ) {
        by_rows!(
            rows,
            f64_avx512_tile,
            (kc, ap, bp, c, ldc, first),
            [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
        );
    }

    // ---- i32: wrapping ----------------------------------------------------

    #[target_feature(enable = "avx2")]
    unsafe fn i32_avx2_tile<const MR: usize>(
        kc: usize,
        ap: *const i32,
        bp: *const i32,
        c: *mut i32,
        ldc: usize,
        first: bool,
    ) {
        let mut acc = [[_mm256_setzero_si256(); 2]; MR];
        if !first {
            for (i, row) in acc.iter_mut().enumerate() {
                row[0] = _mm256_loadu_si256(c.add(i * ldc) as *const __m256i);
                row[1] = _mm256_loadu_si256(c.add(i * ldc + 8) as *const __m256i);
            }
        }
        for p in 0..kc {
            let b0 = _mm256_loadu_si256(bp.add(p * 16) as *const __m256i);
            let b1 = _mm256_loadu_si256(bp.add(p * 16 + 8) as *const __m256i);
            let a = ap.add(p * MR);
            for (i, row) in acc.iter_mut().enumerate() {
                let ai = _mm256_set1_epi32(*a.add(i));
                // vpmulld keeps the low 32 bits: the wrapping product.
                row[0] = _mm256_add_epi32(row[0], _mm256_mullo_epi32(ai, b0));
                row[1] = _mm256_add_epi32(row[1], _mm256_mullo_epi32(ai, b1));
            }
        }
        for (i, row) in acc.iter().enumerate() {
            _mm256_storeu_si256(c.add(i * ldc) as *mut __m256i, row[0]);
            _mm256_storeu_si256(c.add(i * ldc + 8) as *mut __m256i, row[1]);
        }
    }

    /// # Safety
    /// As `MicroFn` with `mr = 4`, `nr = 16`, on a CPU with AVX2.
    pub(super) unsafe fn i32_avx2(
        kc: usize,
        rows: usize,
        ap: *const i32,
        bp: *const i32,
        c: *mut i32,
        ldc: usize,
        first: bool,
    ) {
        by_rows!(rows, i32_avx2_tile, (kc, ap, bp, c, ldc, first), [1, 2, 3, 4]);
    }
}
