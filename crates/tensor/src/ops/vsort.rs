//! A vectorised quicksort of bare order keys (u32 and u64, the keys of
//! f32, i32 and f64) for CPUs with AVX2: partitions made of compare,
//! mask and permute instructions, and leaves sorted by bitonic networks
//! in registers. `sort` uses it for its keys where the CPU and the ISA
//! cap allow; the radix sort of `order` is the path everywhere else.
//!
//! Sorting bare keys has one answer whatever the algorithm (equal keys
//! are indistinguishable), so this unstable sort gives the bits of the
//! radix sort it stands in for, on any number of threads. Each partition
//! reads one buffer and writes the other, so the recursion alternates
//! between the lane and its scratch, and a leaf writes its sorted keys
//! straight into the buffer that holds the lane's result. A recursion that
//! runs out of depth (a pivot choice defeated by the data) finishes with
//! the standard library's unstable sort; the halves of a long partition
//! are sorted in parallel.

/// Keys that may have a vector sort.
pub(crate) trait VectorSort: Copy + Ord + Send + Sync + 'static {
    /// Whether this CPU and the ISA cap have a vector sort for this key.
    fn vectorised() -> bool {
        false
    }
    /// Sorts `v` ascending with `tmp` (same length) as scratch and
    /// returns true, when [`VectorSort::vectorised`]; otherwise returns
    /// false and touches nothing.
    fn vector_sort(v: &mut [Self], tmp: &mut [Self]) -> bool {
        let _ = (v, tmp);
        false
    }
}

impl VectorSort for u8 {}
impl VectorSort for u16 {}

macro_rules! vector_keys {
    ($($t:ty),*) => {$(
        impl VectorSort for $t {
            #[cfg(target_arch = "x86_64")]
            fn vectorised() -> bool {
                x86::available()
            }
            #[cfg(target_arch = "x86_64")]
            fn vector_sort(v: &mut [$t], tmp: &mut [$t]) -> bool {
                x86::run(v, tmp)
            }
        }
    )*};
}
vector_keys!(u32, u64);

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! The AVX2 kernels and the quicksort that drives them.

    use std::arch::x86_64::*;

    use crate::isa::{allows, Level};

    /// Whether the CPU has the instructions and the cap allows them.
    pub(super) fn available() -> bool {
        allows(Level::Avx2)
            && std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("popcnt")
    }

    /// Sorts with the vector quicksort if [`available`].
    pub(super) fn run<K: SimdKey>(v: &mut [K], tmp: &mut [K]) -> bool {
        if v.len() != tmp.len() || !available() {
            return false;
        }
        // SAFETY: the CPU has AVX2 and POPCNT, checked above.
        unsafe { sort(v, tmp, true) };
        true
    }

    /// A key type with AVX2 partition and leaf kernels.
    pub(super) trait SimdKey: Copy + Ord + Send + Sync + 'static {
        /// The longest lane a leaf sorts.
        const LEAF: usize;
        /// The smallest key.
        const MIN: Self;
        /// The key just below `self` (never called on `MIN`).
        fn pred(self) -> Self;
        /// Writes the `n` keys of `src` to `dst`: the ones ≤ `pivot` first,
        /// then the others; returns how many are ≤ `pivot`.
        ///
        /// # Safety
        /// AVX2 and POPCNT; `src` valid for `n` reads, `dst` for `n` writes, disjoint.
        unsafe fn partition(src: *const Self, dst: *mut Self, n: usize, pivot: Self) -> usize;
        /// Writes the `n ≤ LEAF` keys of `src`, sorted, to `dst` (which may be
        /// `src`).
        ///
        /// # Safety
        /// AVX2 and POPCNT; `src` valid for `n` reads, `dst` for `n` writes.
        unsafe fn leaf(src: *const Self, n: usize, dst: *mut Self);
    }

    /// Halves of a partition at least this long are sorted in parallel.
    const PARALLEL_MIN: usize = 1 << 16;

    /// Sorts `v` ascending, with `tmp` (same length) as scratch.
    ///
    /// # Safety
    /// The CPU has AVX2 and POPCNT.
    pub(super) unsafe fn sort<K: SimdKey>(v: &mut [K], tmp: &mut [K], parallel: bool) {
        let n = v.len();
        if tmp.len() != n {
            v.sort_unstable();
            return;
        }
        let budget = 2 * (usize::BITS - n.leading_zeros()) + 4;
        quicksort(v, tmp, true, budget, parallel);
    }

    /// A pivot: the median of three medians of three, of nine keys spread
    /// evenly over the lane (of the first, middle and last keys on short
    /// lanes, where choosing costs more than a slightly worse split).
    fn pivot<K: SimdKey>(v: &[K]) -> K {
        let n = v.len();
        if n < 256 {
            return median3(v[0], v[n / 2], v[n - 1]);
        }
        let s: [K; 9] = std::array::from_fn(|i| v[(2 * i + 1) * n / 18]);
        median3(
            median3(s[0], s[1], s[2]),
            median3(s[3], s[4], s[5]),
            median3(s[6], s[7], s[8]),
        )
    }

    /// The median of three keys.
    fn median3<K: Ord + Copy>(a: K, b: K, c: K) -> K {
        a.min(b).max(a.max(b).min(c))
    }

    /// Sorts the keys in `cur`; `other` (same length) is scratch. The result
    /// goes to `cur` when `home` is true, else to `other`. `budget` is the
    /// depth left before the library sort takes over.
    ///
    /// # Safety
    /// The CPU has AVX2 and POPCNT.
    pub(super) unsafe fn quicksort<K: SimdKey>(
        cur: &mut [K],
        other: &mut [K],
        home: bool,
        budget: u32,
        parallel: bool,
    ) {
        let n = cur.len();
        if n <= K::LEAF {
            let dst = if home {
                cur.as_mut_ptr()
            } else {
                other.as_mut_ptr()
            };
            K::leaf(cur.as_ptr(), n, dst);
            return;
        }
        if budget == 0 {
            cur.sort_unstable();
            if !home {
                other.copy_from_slice(cur);
            }
            return;
        }
        let p = pivot(cur);
        let mut low = K::partition(cur.as_ptr(), other.as_mut_ptr(), n, p);
        // The pivot is a key of the lane, so `low ≥ 1`. When every key is
        // ≤ it (it is the largest), split the ones equal to it off instead:
        // they are sorted already.
        let mut equal_top = false;
        if low == n {
            if p == K::MIN {
                if !home {
                    other.copy_from_slice(cur);
                }
                return;
            }
            low = K::partition(cur.as_ptr(), other.as_mut_ptr(), n, p.pred());
            equal_top = true;
        }
        let (ol, or) = other.split_at_mut(low);
        let (cl, cr) = cur.split_at_mut(low);
        if equal_top {
            if home {
                cr.copy_from_slice(or);
            }
            quicksort(ol, cl, !home, budget - 1, parallel);
            return;
        }
        if parallel && n >= 2 * PARALLEL_MIN {
            rayon::join(
                || quicksort(ol, cl, !home, budget - 1, parallel),
                || quicksort(or, cr, !home, budget - 1, parallel),
            );
        } else {
            quicksort(ol, cl, !home, budget - 1, parallel);
            quicksort(or, cr, !home, budget - 1, parallel);
        }
    }

    /// The last keys of a partition, from `src[i..n]` into `dst[l..r]`
    /// without a branch on the keys (they are as unpredictable as the
    /// data): each key is written at both ends of the unwritten span, and
    /// only the end it belongs to moves past it.
    #[inline(always)]
    unsafe fn tail<K: Copy + Ord>(
        src: *const K,
        dst: *mut K,
        mut i: usize,
        n: usize,
        mut l: usize,
        mut r: usize,
        pivot: K,
    ) -> usize {
        while i < n {
            let x = *src.add(i);
            *dst.add(l) = x;
            *dst.add(r - 1) = x;
            let left = usize::from(x <= pivot);
            l += left;
            r -= 1 - left;
            i += 1;
        }
        l
    }

    // ---------------------------------------------------------------------------
    // u32: eight lanes

    /// For each mask of the lanes that stay left, the permutation that puts
    /// them first (in order), then the others.
    static PERM32: [[u32; 8]; 256] = perm_table::<8, 256>();
    /// The same for four 64-bit lanes, as pairs of 32-bit lanes.
    static PERM64: [[u32; 8]; 16] = perm64_table();

    const fn perm_table<const L: usize, const M: usize>() -> [[u32; L]; M] {
        let mut t = [[0u32; L]; M];
        let mut m = 0;
        while m < M {
            let mut k = 0;
            let mut i = 0;
            while i < L {
                if m & (1 << i) != 0 {
                    t[m][k] = i as u32;
                    k += 1;
                }
                i += 1;
            }
            i = 0;
            while i < L {
                if m & (1 << i) == 0 {
                    t[m][k] = i as u32;
                    k += 1;
                }
                i += 1;
            }
            m += 1;
        }
        t
    }

    const fn perm64_table() -> [[u32; 8]; 16] {
        let p = perm_table::<4, 16>();
        let mut t = [[0u32; 8]; 16];
        let mut m = 0;
        while m < 16 {
            let mut i = 0;
            while i < 4 {
                t[m][2 * i] = 2 * p[m][i];
                t[m][2 * i + 1] = 2 * p[m][i] + 1;
                i += 1;
            }
            m += 1;
        }
        t
    }

    /// The lanes (of `lanes`) that keep the minimum in the bitonic step that
    /// compares lane `i` with lane `i ^ j` inside blocks of `k`, ascending
    /// overall; each lane's bit repeated `rep` times (64-bit lanes are two
    /// bits of a 32-bit blend).
    const fn takes_min(lanes: usize, j: usize, k: usize, rep: usize) -> i32 {
        let mut m = 0;
        let mut i = 0;
        while i < lanes {
            if ((i & j) == 0) == ((i & k) == 0) {
                let mut r = 0;
                while r < rep {
                    m |= 1 << (i * rep + r);
                    r += 1;
                }
            }
            i += 1;
        }
        m
    }

    impl SimdKey for u32 {
        const LEAF: usize = 16;
        const MIN: u32 = 0;
        #[inline(always)]
        fn pred(self) -> u32 {
            self - 1
        }

        #[target_feature(enable = "avx2,popcnt")]
        unsafe fn partition(src: *const u32, dst: *mut u32, n: usize, pivot: u32) -> usize {
            let p = _mm256_set1_epi32(pivot as i32);
            let (mut l, mut r, mut i) = (0usize, n, 0usize);
            // While at least two vectors are left, the two stores of a
            // vector (its left part at `l`, its right part ending at `r`)
            // land in the unwritten span `l..r`, and what they write beyond
            // their parts is overwritten later.
            let step = |v: __m256i, l: &mut usize, r: &mut usize| {
                let le = _mm256_cmpeq_epi32(_mm256_min_epu32(v, p), v);
                let mle = _mm256_movemask_ps(_mm256_castsi256_ps(le)) as usize;
                let perm = _mm256_loadu_si256(PERM32[mle].as_ptr() as *const __m256i);
                let pv = _mm256_permutevar8x32_epi32(v, perm);
                _mm256_storeu_si256(dst.add(*l) as *mut __m256i, pv);
                _mm256_storeu_si256(dst.add(*r - 8) as *mut __m256i, pv);
                let c = mle.count_ones() as usize;
                *l += c;
                *r -= 8 - c;
            };
            while n - i >= 24 {
                let v0 = _mm256_loadu_si256(src.add(i) as *const __m256i);
                let v1 = _mm256_loadu_si256(src.add(i + 8) as *const __m256i);
                step(v0, &mut l, &mut r);
                step(v1, &mut l, &mut r);
                i += 16;
            }
            if n - i >= 16 {
                step(_mm256_loadu_si256(src.add(i) as *const __m256i), &mut l, &mut r);
                i += 8;
            }
            tail(src, dst, i, n, l, r, pivot)
        }

        #[target_feature(enable = "avx2,popcnt")]
        unsafe fn leaf(src: *const u32, n: usize, dst: *mut u32) {
            let (a, b) = load_lanes(src, n);
            let (a, b) = if n <= 8 {
                (sort8_u32(a), b)
            } else {
                sort16_u32(a, b)
            };
            store_lanes(dst, n, a, b);
        }
    }

    /// Loads `m ≤ 16` 32-bit lanes from `src` into two vectors, the lanes
    /// past `m` set to all ones (the largest key), without reading past `m`.
    #[inline(always)]
    unsafe fn load_lanes(src: *const u32, m: usize) -> (__m256i, __m256i) {
        let ones = _mm256_set1_epi32(-1);
        let lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        let first = |m: usize| _mm256_cmpgt_epi32(_mm256_set1_epi32(m as i32), lane);
        if m >= 8 {
            let a = _mm256_loadu_si256(src as *const __m256i);
            let keep = first(m - 8);
            let b = _mm256_maskload_epi32(src.add(8) as *const i32, keep);
            (a, _mm256_blendv_epi8(ones, b, keep))
        } else {
            let keep = first(m);
            let a = _mm256_maskload_epi32(src as *const i32, keep);
            (_mm256_blendv_epi8(ones, a, keep), ones)
        }
    }

    /// Stores the first `m ≤ 16` 32-bit lanes of `a` then `b` at `dst`,
    /// writing nothing past `m`: two overlapping stores, the second built by
    /// permuting the last lanes into place.
    #[inline(always)]
    unsafe fn store_lanes(dst: *mut u32, m: usize, a: __m256i, b: __m256i) {
        let lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        // Lane i of the result holds lane (i + shift) of `a` then `b`.
        let from = |shift: usize| _mm256_add_epi32(lane, _mm256_set1_epi32(shift as i32));
        if m >= 8 {
            _mm256_storeu_si256(dst as *mut __m256i, a);
            if m > 8 {
                let at = from(m - 8);
                let last = _mm256_blendv_epi8(
                    _mm256_permutevar8x32_epi32(a, at),
                    _mm256_permutevar8x32_epi32(b, at),
                    _mm256_cmpgt_epi32(at, _mm256_set1_epi32(7)),
                );
                _mm256_storeu_si256(dst.add(m - 8) as *mut __m256i, last);
            }
        } else if m >= 4 {
            _mm_storeu_si128(dst as *mut __m128i, _mm256_castsi256_si128(a));
            let last = _mm256_permutevar8x32_epi32(a, from(m - 4));
            _mm_storeu_si128(dst.add(m - 4) as *mut __m128i, _mm256_castsi256_si128(last));
        } else if m >= 2 {
            _mm_storel_epi64(dst as *mut __m128i, _mm256_castsi256_si128(a));
            let last = _mm256_permutevar8x32_epi32(a, from(m - 2));
            _mm_storel_epi64(dst.add(m - 2) as *mut __m128i, _mm256_castsi256_si128(last));
        } else if m == 1 {
            *dst = _mm256_cvtsi256_si32(a) as u32;
        }
    }

    /// One compare-exchange step of eight u32 lanes: lane `i` against the lane
    /// `shuffled` put there, keeping the minimum in the lanes of `MIN`.
    #[inline(always)]
    unsafe fn cx32<const MIN: i32>(v: __m256i, shuffled: __m256i) -> __m256i {
        let lo = _mm256_min_epu32(v, shuffled);
        let hi = _mm256_max_epu32(v, shuffled);
        _mm256_blend_epi32::<MIN>(hi, lo)
    }

    /// Partner lane `i ^ 1`, `i ^ 2`, `i ^ 4`.
    #[inline(always)]
    unsafe fn x1_32(v: __m256i) -> __m256i {
        _mm256_shuffle_epi32::<0b10_11_00_01>(v)
    }
    #[inline(always)]
    unsafe fn x2_32(v: __m256i) -> __m256i {
        _mm256_shuffle_epi32::<0b01_00_11_10>(v)
    }
    #[inline(always)]
    unsafe fn x4_32(v: __m256i) -> __m256i {
        _mm256_permute4x64_epi64::<0b01_00_11_10>(v)
    }

    /// Bitonic merge of eight lanes holding a bitonic sequence, ascending.
    #[inline(always)]
    unsafe fn merge8_u32(v: __m256i) -> __m256i {
        let v = cx32::<{ takes_min(8, 4, 16, 1) }>(v, x4_32(v));
        let v = cx32::<{ takes_min(8, 2, 16, 1) }>(v, x2_32(v));
        cx32::<{ takes_min(8, 1, 16, 1) }>(v, x1_32(v))
    }

    /// Sorts eight u32 lanes ascending (a bitonic network).
    #[inline(always)]
    unsafe fn sort8_u32(v: __m256i) -> __m256i {
        let v = cx32::<{ takes_min(8, 1, 2, 1) }>(v, x1_32(v));
        let v = cx32::<{ takes_min(8, 2, 4, 1) }>(v, x2_32(v));
        let v = cx32::<{ takes_min(8, 1, 4, 1) }>(v, x1_32(v));
        let v = cx32::<{ takes_min(8, 4, 8, 1) }>(v, x4_32(v));
        let v = cx32::<{ takes_min(8, 2, 8, 1) }>(v, x2_32(v));
        cx32::<{ takes_min(8, 1, 8, 1) }>(v, x1_32(v))
    }

    /// Sorts sixteen u32 lanes ascending: `a` then `b`.
    #[inline(always)]
    unsafe fn sort16_u32(a: __m256i, b: __m256i) -> (__m256i, __m256i) {
        let a = sort8_u32(a);
        let b = sort8_u32(b);
        let b = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0));
        let lo = _mm256_min_epu32(a, b);
        let hi = _mm256_max_epu32(a, b);
        (merge8_u32(lo), merge8_u32(hi))
    }

    // ---------------------------------------------------------------------------
    // u64: four lanes, compared as signed after flipping the sign bit

    impl SimdKey for u64 {
        const LEAF: usize = 8;
        const MIN: u64 = 0;
        #[inline(always)]
        fn pred(self) -> u64 {
            self - 1
        }

        #[target_feature(enable = "avx2,popcnt")]
        unsafe fn partition(src: *const u64, dst: *mut u64, n: usize, pivot: u64) -> usize {
            let sign = _mm256_set1_epi64x(i64::MIN);
            let p = _mm256_set1_epi64x((pivot ^ (1 << 63)) as i64);
            let (mut l, mut r, mut i) = (0usize, n, 0usize);
            // As for u32, with four lanes.
            let step = |v: __m256i, l: &mut usize, r: &mut usize| {
                let gt = _mm256_cmpgt_epi64(_mm256_xor_si256(v, sign), p);
                let mgt = _mm256_movemask_pd(_mm256_castsi256_pd(gt)) as usize;
                let perm = _mm256_loadu_si256(PERM64[mgt ^ 0xf].as_ptr() as *const __m256i);
                let pv = _mm256_permutevar8x32_epi32(v, perm);
                _mm256_storeu_si256(dst.add(*l) as *mut __m256i, pv);
                _mm256_storeu_si256(dst.add(*r - 4) as *mut __m256i, pv);
                let c = 4 - mgt.count_ones() as usize;
                *l += c;
                *r -= 4 - c;
            };
            while n - i >= 12 {
                let v0 = _mm256_loadu_si256(src.add(i) as *const __m256i);
                let v1 = _mm256_loadu_si256(src.add(i + 4) as *const __m256i);
                step(v0, &mut l, &mut r);
                step(v1, &mut l, &mut r);
                i += 8;
            }
            if n - i >= 8 {
                step(_mm256_loadu_si256(src.add(i) as *const __m256i), &mut l, &mut r);
                i += 4;
            }
            tail(src, dst, i, n, l, r, pivot)
        }

        #[target_feature(enable = "avx2,popcnt")]
        unsafe fn leaf(src: *const u64, n: usize, dst: *mut u64) {
            let sign = _mm256_set1_epi64x(i64::MIN);
            let (a, b) = load_lanes(src as *const u32, 2 * n);
            let (a, b) = (_mm256_xor_si256(a, sign), _mm256_xor_si256(b, sign));
            let (a, b) = if n <= 4 {
                (sort4_i64(a), b)
            } else {
                sort8_i64(a, b)
            };
            let (a, b) = (_mm256_xor_si256(a, sign), _mm256_xor_si256(b, sign));
            store_lanes(dst as *mut u32, 2 * n, a, b);
        }
    }

    #[inline(always)]
    unsafe fn min_max_i64(a: __m256i, b: __m256i) -> (__m256i, __m256i) {
        let gt = _mm256_cmpgt_epi64(a, b);
        (_mm256_blendv_epi8(a, b, gt), _mm256_blendv_epi8(b, a, gt))
    }

    #[inline(always)]
    unsafe fn cx64<const MIN: i32>(v: __m256i, shuffled: __m256i) -> __m256i {
        let (lo, hi) = min_max_i64(v, shuffled);
        _mm256_blend_epi32::<MIN>(hi, lo)
    }

    #[inline(always)]
    unsafe fn x1_64(v: __m256i) -> __m256i {
        _mm256_shuffle_epi32::<0b01_00_11_10>(v)
    }
    #[inline(always)]
    unsafe fn x2_64(v: __m256i) -> __m256i {
        _mm256_permute4x64_epi64::<0b01_00_11_10>(v)
    }

    #[inline(always)]
    unsafe fn sort4_i64(v: __m256i) -> __m256i {
        let v = cx64::<{ takes_min(4, 1, 2, 2) }>(v, x1_64(v));
        let v = cx64::<{ takes_min(4, 2, 4, 2) }>(v, x2_64(v));
        cx64::<{ takes_min(4, 1, 4, 2) }>(v, x1_64(v))
    }

    #[inline(always)]
    unsafe fn merge4_i64(v: __m256i) -> __m256i {
        let v = cx64::<{ takes_min(4, 2, 8, 2) }>(v, x2_64(v));
        cx64::<{ takes_min(4, 1, 8, 2) }>(v, x1_64(v))
    }

    #[inline(always)]
    unsafe fn sort8_i64(a: __m256i, b: __m256i) -> (__m256i, __m256i) {
        let a = sort4_i64(a);
        let b = sort4_i64(b);
        let b = _mm256_permute4x64_epi64::<0b00_01_10_11>(b);
        let (lo, hi) = min_max_i64(a, b);
        (merge4_i64(lo), merge4_i64(hi))
    }
}

#[cfg(test)]
mod tests {
    use super::VectorSort;
    use crate::isa::tests::at_each_level;
    use crate::isa::Level;

    /// Keys of every shape the sort meets: random over all bits, few
    /// distinct values, all equal, ascending, descending, organ pipe, the
    /// extremes only, and the order keys of normally distributed floats
    /// (few distinct high bits).
    fn lanes<K: Copy>(n: usize, next: &mut impl FnMut() -> u64, of: impl Fn(u64) -> K) -> Vec<Vec<K>> {
        let mut out = Vec::new();
        for kind in 0..8 {
            out.push(
                (0..n)
                    .map(|i| {
                        let i = i as u64;
                        let n = n as u64;
                        of(match kind {
                            0 => next(),
                            1 => next() % 3,
                            2 => 5,
                            3 => i,
                            4 => n - i,
                            5 => i.min(n - i),
                            6 => (next() % 2).wrapping_neg(),
                            _ => {
                                // A float's order key: sign set for
                                // positive values, bits inverted for
                                // negative ones, exponents near the bias.
                                let e = 1008 + next() % 32;
                                let bits = (e << 52) | (next() >> 12);
                                if next().is_multiple_of(2) {
                                    bits | 1 << 63
                                } else {
                                    !bits
                                }
                            }
                        })
                    })
                    .collect(),
            );
        }
        out
    }

    fn check<K: VectorSort + std::fmt::Debug>(keys: &[K], vectorised: bool) {
        let mut want = keys.to_vec();
        want.sort_unstable();
        let mut v = keys.to_vec();
        let mut tmp = keys.to_vec();
        assert_eq!(K::vector_sort(&mut v, &mut tmp), vectorised);
        if vectorised {
            assert!(v == want, "{} keys", keys.len());
        } else {
            assert!(v == keys, "{} keys touched", keys.len());
        }
    }

    #[test]
    fn vector_sort_is_the_sorted_order() {
        let mut next = crate::ops::order::tests::xorshift(0x9e37_79b9_7f4a_7c15u64);
        let pools = crate::ops::order::tests::one_and_four_threads();
        // Every leaf length and its neighbours, partitions with vector
        // loops and scalar tails of every length, and lanes long enough
        // for parallel halves.
        let mut sizes: Vec<usize> = (0..=70).collect();
        sizes.extend([255, 256, 1000, 4097, 70_001, 300_000]);
        at_each_level(|level| {
            let on = level >= Level::Avx2 && std::is_x86_feature_detected!("avx2");
            assert_eq!(u32::vectorised(), on);
            assert_eq!(u64::vectorised(), on);
            assert!(!u16::vectorised() && !u8::vectorised());
            for &n in &sizes {
                let narrow = lanes(n, &mut next, |x| (x >> 32) as u32);
                let wide = lanes(n, &mut next, |x| x);
                for p in &pools {
                    p.install(|| {
                        narrow.iter().for_each(|k| check(k, on));
                        wide.iter().for_each(|k| check(k, on));
                    });
                }
            }
        });
    }

    /// A recursion out of depth finishes with the library sort, into
    /// whichever buffer the lane's result belongs in.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn out_of_depth_is_still_sorted() {
        if !super::x86::available() {
            return;
        }
        let keys: Vec<u32> = (0..5000u32).map(|i| i.wrapping_mul(2_654_435_761) >> 7).collect();
        let mut want = keys.clone();
        want.sort_unstable();
        for budget in 0..4 {
            for home in [true, false] {
                let mut v = keys.clone();
                let mut tmp = vec![0u32; v.len()];
                // SAFETY: `available` checked the CPU.
                unsafe { super::x86::quicksort(&mut v, &mut tmp, home, budget, false) };
                assert!(
                    if home { &v } else { &tmp } == &want,
                    "budget {budget}, home {home}"
                );
            }
        }
    }
}
