//! The fast paths against the reference arithmetic: the blocked product
//! with the SIMD microkernels, with the portable one, and on 1 and 3
//! threads, against the plain loop of spec §5.4 — on sizes that cross every
//! block boundary, which the oracle vectors are too small to reach.

// Test helpers pick a few dtypes out and treat the rest alike.
#![allow(clippy::wildcard_enum_match_arm)]

use super::gemm::{gemm, gemm_with, Strided};
use super::kernels::Kernels;
use super::*;
use crate::storage::Element;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// A value with a full-width significand and a spread of exponents and
    /// signs, so that almost every step of a sum rounds.
    fn f64(&mut self) -> f64 {
        let m = (self.next() >> 11) as f64 / (1u64 << 53) as f64 + 0.5;
        let e = (self.next() % 9) as i32 - 4;
        let s = if self.next() & 1 == 0 { 1.0 } else { -1.0 };
        s * m * 2f64.powi(e)
    }
}

fn random(rng: &mut Rng, shape: &[usize], dtype: DType) -> Tensor {
    let n = shape.iter().product();
    let v: Vec<f64> = (0..n)
        .map(|_| {
            if dtype.is_float() {
                rng.f64()
            } else {
                (rng.next() % 200) as f64 - 100.0
            }
        })
        .collect();
    let t = Tensor::from_vec(v, shape.to_vec()).expect("shape");
    match dtype {
        // Integers out of range wrap on the way in; that is fine here.
        DType::Bool => t.cast(DType::I32).and_then(|t| t.cast(DType::Bool)),
        DType::I8 => Tensor::from_vec(
            t.to_f64_vec()
                .expect("f64s")
                .iter()
                .map(|x| *x as i8)
                .collect::<Vec<i8>>(),
            shape.to_vec(),
        ),
        _ => t.cast(dtype),
    }
    .expect("cast")
}

fn bits(t: &Tensor) -> Vec<u64> {
    t.scalars().map(|s| s.to_bits()).collect()
}

/// The definition: for every batch and element, `acc ← acc ⊕ a·b` over
/// ascending k from +0, then one rounding to the result dtype.
fn naive<C: Kernels>(a: &[C], b: &[C], batches: usize, m: usize, n: usize, k: usize) -> Vec<C> {
    let mut out = Vec::with_capacity(batches * m * n);
    for bi in 0..batches {
        for i in 0..m {
            for j in 0..n {
                let mut acc = C::ZERO;
                for p in 0..k {
                    acc = C::mul_add(acc, a[bi * m * k + i * k + p], b[bi * k * n + p * n + j]);
                }
                out.push(acc);
            }
        }
    }
    out
}

fn widen_all<T: Element<Acc = C> + Copy, C>(v: &[T]) -> Vec<C> {
    v.iter().map(|x| x.widen()).collect()
}

fn check_gemm<C: Kernels + Element<Acc = C>>(a: &[C], b: &[C], batches: usize, m: usize, n: usize, k: usize) {
    let want = naive(a, b, batches, m, n, k);
    let sa = Strided {
        data: a,
        bases: (0..batches).map(|i| (i * m * k) as isize).collect(),
        st: k as isize,
        sp: 1,
    };
    let sb = Strided {
        data: b,
        bases: (0..batches).map(|i| (i * k * n) as isize).collect(),
        st: 1,
        sp: n as isize,
    };
    // The same operands stored the other way round (A by columns, B by
    // rows of Bᵀ), so that every way of packing a panel is taken.
    let transpose = |x: &[C], rows: usize, cols: usize| -> Vec<C> {
        let mut out = Vec::with_capacity(x.len());
        for mat in x.chunks_exact(rows * cols) {
            for j in 0..cols {
                out.extend((0..rows).map(|i| mat[i * cols + j]));
            }
        }
        out
    };
    let (at, bt) = (transpose(a, m, k), transpose(b, k, n));
    let sat = Strided {
        data: &at,
        bases: sa.bases.clone(),
        st: 1,
        sp: m as isize,
    };
    let sbt = Strided {
        data: &bt,
        bases: sb.bases.clone(),
        st: k as isize,
        sp: 1,
    };
    for threads in [1, 3] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        let fast = pool
            .install(|| gemm::<C>(batches, m, n, k, &sa, &sb))
            .expect("gemm");
        assert!(fast == want, "{batches}×{m}×{n}×{k} on {threads} threads");
        let fast = pool
            .install(|| gemm::<C>(batches, m, n, k, &sat, &sbt))
            .expect("gemm");
        assert!(
            fast == want,
            "{batches}×{m}×{n}×{k} transposed, on {threads} threads"
        );
        // Every microkernel this CPU has (SIMD widths, then portable).
        for (km, micro) in C::micros().into_iter().enumerate() {
            let got = pool
                .install(|| gemm_with(micro, batches, m, n, k, &sa, &sb))
                .expect("gemm");
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                // NaN-free inputs: equality is bit equality except for ±0,
                // and a sum from +0 is never −0.
                assert!(
                    g == w,
                    "{batches}×{m}×{n}×{k}, kernel {km} on {threads} threads, element {i}: got {g:?}, want {w:?}"
                );
            }
        }
    }
}

/// Sizes around every block edge: mr, nr, kc (256), mc, B's groups of
/// panels (128 columns), the transposed narrow case, and batches; on 3
/// threads, both ways of planning (columns cut, and enough row blocks to
/// need no column cut).
const SIZES: &[(usize, usize, usize, usize)] = &[
    (1, 1, 1, 1),
    (1, 7, 5, 3),
    (1, 13, 33, 257),
    (1, 97, 65, 300),
    (1, 130, 17, 520),
    (1, 250, 3, 40),
    (1, 5, 1, 700),
    (1, 1, 100, 9),
    (3, 15, 31, 29),
    (40, 6, 5, 4),
    (1, 231, 113, 513),
    (1, 20, 300, 70),
    (2, 9, 129, 33),
    (1, 700, 20, 80),
];

#[test]
fn blocked_f32_matches_the_fma_chain() {
    let mut rng = Rng(7);
    for &(bt, m, n, k) in SIZES {
        let a: Vec<f32> = (0..bt * m * k).map(|_| rng.f64() as f32).collect();
        let b: Vec<f32> = (0..bt * k * n).map(|_| rng.f64() as f32).collect();
        check_gemm(&a, &b, bt, m, n, k);
    }
}

#[test]
fn blocked_f64_matches_product_then_sum() {
    let mut rng = Rng(11);
    for &(bt, m, n, k) in SIZES {
        let a: Vec<f64> = (0..bt * m * k).map(|_| rng.f64()).collect();
        let b: Vec<f64> = (0..bt * k * n).map(|_| rng.f64()).collect();
        check_gemm(&a, &b, bt, m, n, k);
    }
}

#[test]
fn blocked_i32_wraps() {
    let mut rng = Rng(13);
    for &(bt, m, n, k) in SIZES {
        let a: Vec<i32> = (0..bt * m * k).map(|_| rng.next() as i32).collect();
        let b: Vec<i32> = (0..bt * k * n).map(|_| rng.next() as i32).collect();
        check_gemm(&a, &b, bt, m, n, k);
    }
}

#[test]
fn blocked_bf16_and_f16_widen_exactly() {
    let mut rng = Rng(17);
    for &(bt, m, n, k) in SIZES {
        let a: Vec<half::bf16> = (0..bt * m * k)
            .map(|_| crate::convert::f32_to_bf16(rng.f64() as f32))
            .collect();
        let b: Vec<half::f16> = (0..bt * k * n)
            .map(|_| half::f16::from_bits(crate::convert::f64_to_f16_bits(rng.f64())))
            .collect();
        check_gemm::<f32>(&widen_all(&a), &widen_all(&b), bt, m, n, k);
    }
}

/// `matmul` on views (transposed, sliced, broadcast batches) against the
/// same product of contiguous copies computed by the plain loop.
#[test]
fn matmul_on_views_and_dtypes() {
    let mut rng = Rng(23);
    for dt in [
        DType::F32,
        DType::Bf16,
        DType::F16,
        DType::F64,
        DType::I32,
        DType::I8,
        DType::Bool,
    ] {
        let a = random(&mut rng, &[2, 1, 40, 300], dt);
        let b = random(&mut rng, &[3, 37, 300], dt)
            .permuted(&[0, 2, 1])
            .expect("perm");
        // b is a transposed view: its rows have stride 1.
        let got = matmul(&a, &b).expect("matmul");
        assert_eq!(got.shape(), &[2, 3, 40, 37]);
        let (_, r) = dtypes(&[dt, dt]);
        assert_eq!(got.dtype(), r);
        // Reference: contiguous copies, batches expanded.
        let av = a
            .broadcast_view(&[2, 3, 40, 300])
            .expect("bcast")
            .contiguous()
            .expect("copy");
        let bv = b
            .broadcast_view(&[2, 3, 300, 37])
            .expect("bcast")
            .contiguous()
            .expect("copy");
        let want = match accumulation_of(dt) {
            0 => {
                let (x, y) = (f32s(&av), f32s(&bv));
                let acc = naive(&x, &y, 6, 40, 37, 300);
                <f32 as Kernels>::finish(acc, vec![2, 3, 40, 37], r)
            }
            1 => {
                let acc = naive(
                    &av.to_f64_vec().expect("f64s"),
                    &bv.to_f64_vec().expect("f64s"),
                    6,
                    40,
                    37,
                    300,
                );
                <f64 as Kernels>::finish(acc, vec![2, 3, 40, 37], r)
            }
            _ => {
                let x: Vec<i32> = av.to_f64_vec().expect("f64s").iter().map(|v| *v as i32).collect();
                let y: Vec<i32> = bv.to_f64_vec().expect("f64s").iter().map(|v| *v as i32).collect();
                let acc = naive(&x, &y, 6, 40, 37, 300);
                <i32 as Kernels>::finish(acc, vec![2, 3, 40, 37], r)
            }
        }
        .expect("finish");
        assert_eq!(bits(&got), bits(&want), "{dt}");
    }
}

fn accumulation_of(dt: DType) -> u8 {
    match crate::promote::accumulation_dtype(dt) {
        DType::F32 => 0,
        DType::F64 => 1,
        _ => 2,
    }
}

fn f32s(t: &Tensor) -> Vec<f32> {
    t.to_f64_vec().expect("f64s").iter().map(|v| *v as f32).collect()
}

/// Two-operand einsums that go through `gemm` against the reference loop.
#[test]
fn einsum_fast_path_equals_the_reference_loop() {
    let mut rng = Rng(29);
    let cases: &[(&str, &[usize], &[usize])] = &[
        ("ij,jk->ik", &[30, 300], &[300, 20]),
        ("ij,kj->ki", &[30, 50], &[20, 50]),
        ("bij,bjk->bik", &[4, 9, 17], &[4, 17, 33]),
        ("ijk,jkl->li", &[5, 6, 7], &[6, 7, 8]),
        ("ikj,lkj->il", &[5, 7, 6], &[8, 7, 6]),
        ("...ij,...jk", &[3, 1, 4, 5], &[2, 5, 6]),
        ("ij,ij->i", &[20, 70], &[20, 70]),
        ("i,j->ij", &[20], &[30]),
        ("ab,ba", &[12, 9], &[9, 12]),
        ("ij,jk", &[1, 5], &[5, 3]),
        ("ij,ij->ij", &[1, 3], &[2, 3]),
    ];
    for dt in [DType::F32, DType::Bf16, DType::F64, DType::I8] {
        for (spec, sa, sb) in cases {
            let a = random(&mut rng, sa, dt);
            let b = random(&mut rng, sb, dt);
            let fast = einsum::einsum(spec, &[&a, &b]).expect("einsum");
            let slow = einsum::einsum_reference(spec, &[&a, &b]).expect("reference");
            assert_eq!(fast.shape(), slow.shape(), "{spec}");
            assert_eq!(bits(&fast), bits(&slow), "{spec} {dt}");
        }
    }
}

/// conv2d against einsum's reference loop over an explicitly padded and
/// unfolded input (the definition: padding is a stored +0).
#[test]
fn conv2d_equals_explicit_im2col() {
    let mut rng = Rng(31);
    for dt in [DType::F32, DType::F64, DType::Bf16] {
        let (n, c, h, w, o, kh, kw) = (2, 3, 9, 11, 4, 3, 2);
        let (sh, sw, ph, pw) = (2, 1, 1, 2);
        let x = random(&mut rng, &[n, c, h, w], dt);
        let wt = random(&mut rng, &[o, c, kh, kw], dt);
        let got = conv::conv2d(&x, &wt, (sh, sw), (ph, pw)).expect("conv");
        let (hp, wp) = (h + 2 * ph, w + 2 * pw);
        let (oh, ow) = ((hp - kh) / sh + 1, (wp - kw) / sw + 1);
        assert_eq!(got.shape(), &[n, o, oh, ow]);
        // cols[n, c, kh, kw, oh, ow], zeros where the window is padding.
        let xv = x.to_f64_vec().expect("f64s");
        let mut cols = Vec::new();
        for ni in 0..n {
            for ci in 0..c {
                for a in 0..kh {
                    for b in 0..kw {
                        for i in 0..oh {
                            for j in 0..ow {
                                let (y, z) = (
                                    (i * sh + a) as isize - ph as isize,
                                    (j * sw + b) as isize - pw as isize,
                                );
                                cols.push(if y >= 0 && z >= 0 && (y as usize) < h && (z as usize) < w {
                                    xv[((ni * c + ci) * h + y as usize) * w + z as usize]
                                } else {
                                    0.0
                                });
                            }
                        }
                    }
                }
            }
        }
        let cols = Tensor::from_vec(cols, vec![n, c, kh, kw, oh, ow])
            .expect("cols")
            .cast(dt)
            .expect("cast");
        let want = einsum::einsum_reference("nchwij,ochw->noij", &[&cols, &wt]).expect("reference");
        assert_eq!(bits(&got), bits(&want), "{dt}");
    }
}

/// `dot` (its own loop) is `einsum("i,i->")`'s general reference loop bit
/// for bit, for every pair of dtypes, at lengths from empty to past a
/// block, on every instruction-set path the CPU has.
#[test]
fn dot_is_the_einsum_reference() {
    let mut rng = Rng(37);
    crate::isa::tests::at_each_level(|level| {
        for &da in &DType::ALL {
            for &db in &DType::ALL {
                for n in [0usize, 1, 17, 5000] {
                    let a = random(&mut rng, &[n], da);
                    let b = random(&mut rng, &[n], db);
                    let got = super::dot(&a, &b).expect("dot");
                    let want = einsum::einsum_reference("i,i->", &[&a, &b]).expect("reference");
                    assert_eq!(got.dtype(), want.dtype(), "{da} · {db}");
                    assert_eq!(got.shape(), want.shape(), "{da} · {db}");
                    assert_eq!(bits(&got), bits(&want), "{da} · {db}, n = {n}, {level:?}");
                }
            }
        }
    });
}

/// The 2-norm's row sums of squares are `einsum("ij,ij->i", m, m)`'s
/// general reference loop bit for bit, for f32 and f64, empty rows and
/// empty matrices, one long row, and enough rows to run in parallel, on
/// every instruction-set path the CPU has.
#[test]
fn row_sums_of_squares_are_the_einsum_reference() {
    let mut rng = Rng(41);
    crate::isa::tests::at_each_level(|level| {
        for dt in [DType::F32, DType::F64] {
            for shape in [[0usize, 5], [3, 0], [1, 1], [4, 17], [1, 40_000], [3, 30_000]] {
                let m = random(&mut rng, &shape, dt);
                let got = super::row_sums_of_squares(&m).expect("sums");
                let want = einsum::einsum_reference("ij,ij->i", &[&m, &m]).expect("reference");
                assert_eq!(got.dtype(), want.dtype(), "{dt} {shape:?}");
                assert_eq!(got.shape(), want.shape(), "{dt} {shape:?}");
                assert_eq!(bits(&got), bits(&want), "{dt} {shape:?} {level:?}");
            }
        }
    });
}
