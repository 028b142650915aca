//! The ordering operations of spec §4.1 — `sort`, `argsort`, `topk` and
//! `argtopk` — for every dtype, along any axis.
//!
//! Every element is first mapped to an unsigned *order key*: an integer
//! whose unsigned order is the order the spec asks for (PyTorch's, spec §5
//! item 5): NaN above +inf, and -0 equal to +0. Sorting keys instead of
//! values turns NaN handling and the sign of zero into plain integer
//! comparisons, lets long lanes use an LSD radix sort (and `sort`'s bare
//! keys the vector quicksort of `vsort` where the CPU has AVX2), and makes
//! descending order the ascending order of the inverted keys. All four
//! operations are stable — ties keep the lower index first, descending
//! included — so their result is a function of the input alone: any
//! algorithm that sorts (key, index) pairs gives the same answer, which is
//! what makes the result independent of the thread count (lanes are
//! sorted in parallel, each by one thread, and so are the disjoint buckets
//! of one long lane of f64).
//!
//! The key is a bijection except on two groups of elements: the zeros
//! (+0 and -0 share a key) and the NaNs (every NaN payload shares the top
//! key). `sort` returns values, not indices, so it sorts bare keys and
//! turns them back into elements; a group that shares a key is emitted in
//! input order from a side list, which is exactly where a stable sort puts
//! its members. That keeps the fast path free of index payloads.

use std::sync::atomic::{AtomicBool, Ordering};

use half::{bf16, f16};
use rayon::prelude::*;

use super::args::{Args, Out};
use super::shape::{axis_of, packed, reshaped};
use super::vsort::VectorSort;
use crate::storage::{try_filled, try_vec, try_zeroed, Element, SharedMut, Storage};
use crate::tensor::{shape_str, Tensor, TensorError};

fn err<T>(msg: String) -> Result<T, TensorError> {
    Err(TensorError(msg))
}

// ---------------------------------------------------------------------------
// Order keys

/// An unsigned integer that serves as a sort key.
pub(super) trait RadixKey: VectorSort {
    const BITS: u32;
    /// The key zero-extended, for digit extraction.
    fn wide(self) -> u64;
    /// The key of the reversed order.
    fn inverted(self) -> Self;
    /// The key whose [`RadixKey::wide`] is `w` (the low bits of `w`).
    fn from_wide(w: u64) -> Self;
}

macro_rules! radix_key {
    ($($t:ty),*) => {$(
        impl RadixKey for $t {
            const BITS: u32 = <$t>::BITS;
            #[inline(always)]
            fn wide(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn inverted(self) -> Self {
                !self
            }
            #[inline(always)]
            fn from_wide(w: u64) -> Self {
                w as $t
            }
        }
    )*};
}
radix_key!(u8, u16, u32, u64);

/// An element type with an order key.
pub(super) trait Ordered: Element {
    type K: RadixKey;
    /// The key: unsigned order of keys is the element order of spec §5.5.
    fn key(self) -> Self::K;
    /// The element a key stands for, for keys outside the shared groups.
    fn unkey(k: Self::K) -> Self;
    /// The group of elements that share key `k`: 0 for the zeros, 1 for
    /// the NaNs; `None` when `k` stands for exactly one bit pattern.
    fn group(k: Self::K) -> Option<usize>;
    /// `out`'s memory seen as keys, where a key has the element's size and
    /// alignment and every bit pattern is an element (all but `bool`), so
    /// that `sort` can build, sort and turn back its keys in the output
    /// itself.
    fn as_keys(out: &mut [Self]) -> Option<&mut [Self::K]> {
        let _ = out;
        None
    }
}

/// [`Ordered::as_keys`] for an element type of `$t` bits that are all
/// valid, with keys `$k` of the same size.
macro_rules! plain_keys {
    ($t:ty, $k:ty) => {
        fn as_keys(out: &mut [$t]) -> Option<&mut [$k]> {
            const {
                assert!(
                    std::mem::size_of::<$t>() == std::mem::size_of::<$k>()
                        && std::mem::align_of::<$t>() >= std::mem::align_of::<$k>()
                )
            };
            // SAFETY: the types have the same size, the key's alignment is
            // no stricter, and every bit pattern is a valid value of both,
            // so the memory of `out` is `out.len()` keys, borrowed as long
            // as `out` is.
            Some(unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr() as *mut $k, out.len()) })
        }
    };
}

/// Floats: a positive number's bits with the sign bit set, a negative
/// number's bits inverted (so larger magnitudes sort lower), both zeros on
/// the key of +0, and every NaN on the top key, above +inf.
macro_rules! float_ordered {
    ($t:ty, $k:ty, $inf:expr, |$x:ident| $to:expr, |$b:ident| $from:expr) => {
        impl Ordered for $t {
            type K = $k;
            #[inline(always)]
            fn key(self) -> $k {
                const SIGN: $k = 1 << (<$k>::BITS - 1);
                let $x = self;
                let bits: $k = $to;
                let mag = bits & !SIGN;
                let flip = if bits & SIGN != 0 { <$k>::MAX } else { SIGN };
                let k = if mag == 0 { SIGN } else { bits ^ flip };
                if mag > $inf {
                    <$k>::MAX
                } else {
                    k
                }
            }
            #[inline(always)]
            fn unkey(k: $k) -> Self {
                const SIGN: $k = 1 << (<$k>::BITS - 1);
                let $b: $k = if k & SIGN != 0 { k & !SIGN } else { !k };
                $from
            }
            #[inline(always)]
            fn group(k: $k) -> Option<usize> {
                const SIGN: $k = 1 << (<$k>::BITS - 1);
                if k == SIGN {
                    Some(0)
                } else if k == <$k>::MAX {
                    Some(1)
                } else {
                    None
                }
            }
            plain_keys!($t, $k);
        }
    };
}
float_ordered!(f64, u64, 0x7ff0_0000_0000_0000, |x| x.to_bits(), |b| {
    f64::from_bits(b)
});
float_ordered!(f32, u32, 0x7f80_0000, |x| x.to_bits(), |b| f32::from_bits(b));
float_ordered!(bf16, u16, 0x7f80, |x| x.to_bits(), |b| bf16::from_bits(b));
float_ordered!(f16, u16, 0x7c00, |x| x.to_bits(), |b| f16::from_bits(b));

/// Signed integers: flipping the sign bit makes two's complement order
/// unsigned order. The key is a bijection, so there are no groups.
macro_rules! int_ordered {
    ($t:ty, $k:ty) => {
        impl Ordered for $t {
            type K = $k;
            #[inline(always)]
            fn key(self) -> $k {
                (self as $k) ^ (1 << (<$k>::BITS - 1))
            }
            #[inline(always)]
            fn unkey(k: $k) -> Self {
                (k ^ (1 << (<$k>::BITS - 1))) as $t
            }
            #[inline(always)]
            fn group(_: $k) -> Option<usize> {
                None
            }
            plain_keys!($t, $k);
        }
    };
}
int_ordered!(i32, u32);
int_ordered!(i8, u8);

impl Ordered for bool {
    type K = u8;
    #[inline(always)]
    fn key(self) -> u8 {
        u8::from(self)
    }
    #[inline(always)]
    fn unkey(k: u8) -> Self {
        k != 0
    }
    #[inline(always)]
    fn group(_: u8) -> Option<usize> {
        None
    }
}

// ---------------------------------------------------------------------------
// Sorting one lane

/// Lanes shorter than this are sorted by comparison; a radix sort's
/// bucket sweeps cost more than they save on them.
const RADIX_MIN: usize = 256;

/// Lanes at least this long use 11-bit digits for keys of 32 bits and
/// more (three passes for f32 instead of four); shorter ones 8-bit digits,
/// whose 256 buckets per pass are cheaper to sweep than 2048.
const WIDE_DIGITS_MIN: usize = 1 << 14;

/// Lanes at least this long are cut into [`STREAMS`] chunks per thread,
/// each with its own bucket counters, and a pass steps through the chunks
/// in lockstep. Real data repeats its top digits (the exponents of
/// normally distributed floats fill a few buckets), and with one set of
/// counters each element's slot would wait for the previous element's
/// increment of the same counter; with several the chains interleave.
const STREAMS_MIN: usize = 1 << 14;
const STREAMS: usize = 4;

/// Each pass over a lane at least twice this long is shared by up to one
/// task per thread, each over at least this many elements.
const PARALLEL_MIN: usize = 1 << 17;

/// How a lane is radix sorted: the digit width, the number of passes, and
/// the chunks (and tasks) a pass is cut into.
#[derive(Clone, Copy, Debug)]
struct Layout {
    digit: u32,
    passes: usize,
    /// Chunks of the lane, each with its own row of bucket counters;
    /// chunk `c` is elements `c * n / chunks .. (c + 1) * n / chunks`.
    chunks: usize,
    /// Tasks per pass: task `t` owns chunks `t * per .. (t + 1) * per`,
    /// `per = chunks / tasks`.
    tasks: usize,
}

impl Layout {
    /// The passes of `digit`-bit digits over a lane of `n` elements: one
    /// task unless `parallel` and the lane is long, then up to one per
    /// thread. Only the speed depends on the thread count: every layout
    /// yields the one stable order.
    fn new(n: usize, digit: u32, passes: usize, parallel: bool) -> Layout {
        let tasks = if parallel && n >= 2 * PARALLEL_MIN {
            rayon::current_num_threads().clamp(1, n / PARALLEL_MIN)
        } else {
            1
        };
        let per = if n >= STREAMS_MIN { STREAMS } else { 1 };
        Layout {
            digit,
            passes,
            chunks: tasks * per,
            tasks,
        }
    }

    /// LSD passes over the low `bits` bits of the keys of a lane of `n`.
    fn lsd(n: usize, bits: u32, parallel: bool) -> Layout {
        let digit = if bits >= 22 && n >= WIDE_DIGITS_MIN { 11 } else { 8 };
        Layout::new(n, digit, bits.div_ceil(digit) as usize, parallel)
    }

    fn buckets(self) -> usize {
        1 << self.digit
    }

    fn mask(self) -> u64 {
        (1u64 << self.digit) - 1
    }

    /// Where chunk `c` of a lane of `n` starts (`c = chunks` gives `n`).
    /// `n < 2³²` and `c ≤ chunks`, so the product cannot overflow.
    fn chunk_start(self, n: usize, c: usize) -> usize {
        c * n / self.chunks
    }
}

/// The chunks of one task, stepped in lockstep: `S` consecutive chunks
/// of `src` starting at chunk `first`, the task's streams. `visit(s, x)`
/// sees the elements of stream `s` in order (each stream has its own row
/// of counters); the streams' lengths differ by at most one, and the odd
/// elements come last.
fn lockstep<T: Copy, const S: usize>(src: &[T], l: Layout, first: usize, mut visit: impl FnMut(usize, T)) {
    let n = src.len();
    let starts: [usize; S] = std::array::from_fn(|s| l.chunk_start(n, first + s));
    let ends: [usize; S] = std::array::from_fn(|s| l.chunk_start(n, first + s + 1));
    let common = starts.iter().zip(&ends).map(|(a, b)| b - a).min().unwrap_or(0);
    for i in 0..common {
        for (s, &start) in starts.iter().enumerate() {
            // In bounds: start + i < the stream's end ≤ n.
            if let Some(&x) = src.get(start + i) {
                visit(s, x);
            }
        }
    }
    for (s, (&start, &end)) in starts.iter().zip(&ends).enumerate() {
        for &x in src.get(start + common..end).unwrap_or(&[]) {
            visit(s, x);
        }
    }
}

/// Runs `f(first_chunk, rows)` for every task of a pass, in parallel when
/// the layout has several, each on its own rows of `hist`.
fn per_task(l: Layout, hist: &mut [u32], f: impl Fn(usize, &mut [u32]) + Sync) {
    let per = l.chunks / l.tasks;
    let rows = per * l.buckets();
    if l.tasks > 1 {
        hist.par_chunks_mut(rows)
            .enumerate()
            .for_each(|(t, h)| f(t * per, h));
    } else {
        f(0, hist);
    }
}

/// Counts, per chunk, the digits at `shift` of `src` into `hist` (one row
/// of buckets per chunk).
fn count_chunks<T: Copy + Sync, K: RadixKey>(
    src: &[T],
    hist: &mut [u32],
    l: Layout,
    shift: u32,
    key: &(impl Fn(T) -> K + Sync),
) {
    hist.fill(0);
    let (b, mask) = (l.buckets(), l.mask());
    per_task(l, hist, |first, h| {
        let streams = h.len() / b;
        let mut bump = |s: usize, x: T| {
            let d = ((key(x).wide() >> shift) & mask) as usize;
            if let Some(c) = h.get_mut(s * b + d) {
                *c += 1;
            }
        };
        if streams == STREAMS {
            lockstep::<T, STREAMS>(src, l, first, &mut bump);
        } else {
            lockstep::<T, 1>(src, l, first, &mut bump);
        }
    });
}

/// Turns the per-chunk counts into each chunk's first slot in each
/// bucket: the buckets in order, and inside a bucket the chunks in order,
/// which is what keeps the pass stable. Returns false when one bucket
/// holds all `n` elements: that pass would move nothing and is skipped.
fn chunk_starts(hist: &mut [u32], l: Layout, n: usize) -> bool {
    let b = l.buckets();
    if (0..b).any(|d| bucket_total(hist, l, d) == n) {
        return false;
    }
    let mut sum = 0u32;
    for d in 0..b {
        for c in 0..l.chunks {
            let slot = &mut hist[c * b + d];
            let count = *slot;
            *slot = sum;
            sum += count;
        }
    }
    true
}

/// How many elements bucket `d` holds over all chunks, from the counts of
/// [`count_chunks`].
fn bucket_total(hist: &[u32], l: Layout, d: usize) -> usize {
    (0..l.chunks).map(|c| hist[c * l.buckets() + d] as usize).sum()
}

/// One stable counting-sort pass: every element of each chunk of `src`,
/// in order, goes to the next free slot of its bucket in `dst`, from the
/// chunk's own counters.
///
/// # Safety
/// `src.len() == dst.len()`, and `hist` holds the [`chunk_starts`] of the
/// exact per-chunk counts of `src`'s digits `(key >> shift) & mask`. Then
/// the slots of chunk `c` in bucket `d` are its own range, every slot
/// written is below `dst.len()`, and each is written once.
unsafe fn scatter<T: Copy + Send + Sync, K: RadixKey>(
    src: &[T],
    dst: &mut [T],
    hist: &mut [u32],
    l: Layout,
    shift: u32,
    key: &(impl Fn(T) -> K + Sync),
) {
    let (b, mask) = (l.buckets(), l.mask());
    // The tasks of a pass write disjoint slots (the contract above), and
    // `dst` outlives the parallel loop.
    let out = SharedMut(dst.as_mut_ptr());
    per_task(l, hist, |first, h| {
        let streams = h.len() / b;
        let counters = h.as_mut_ptr();
        let put = |s: usize, x: T| {
            let d = ((key(x).wide() >> shift) & mask) as usize;
            // Unchecked because this loop is the whole cost of a long
            // sort and the checks cost a tenth of it; the contract above
            // is what makes both indices valid.
            let c = counters.add(s * b + d);
            *out.ptr().add(*c as usize) = x;
            *c += 1;
        };
        if streams == STREAMS {
            lockstep::<T, STREAMS>(src, l, first, put);
        } else {
            lockstep::<T, 1>(src, l, first, put);
        }
    });
}

/// The LSD passes of layout `l` over `v` (digit `p` at bit `p *
/// l.digit`), ping-ponging with `tmp` (same length). Returns whether the
/// result ended up in `tmp`.
fn lsd<T: Copy + Send + Sync, K: RadixKey>(
    v: &mut [T],
    tmp: &mut [T],
    l: Layout,
    key: &(impl Fn(T) -> K + Sync),
) -> bool {
    let n = v.len();
    if tmp.len() != n || u32::try_from(n).is_err() {
        // Not reached: `radix_sort` sorts such lanes by comparison.
        return false;
    }
    let mut hist = vec![0u32; l.chunks * l.buckets()];
    let mut in_tmp = false;
    for p in 0..l.passes {
        let shift = p as u32 * l.digit;
        let (src, dst) = if in_tmp {
            (&*tmp, &mut *v)
        } else {
            (&*v, &mut *tmp)
        };
        count_chunks(src, &mut hist, l, shift, key);
        if !chunk_starts(&mut hist, l, n) {
            continue;
        }
        // SAFETY: `hist` was just counted from `src` with this layout and
        // shift, and the caller gave `v` and `tmp` the same length.
        unsafe { scatter(src, dst, &mut hist, l, shift, key) };
        in_tmp = !in_tmp;
    }
    in_tmp
}

/// Bits of the digit that splits a long lane first (2048 buckets).
const SPLIT_DIGIT: u32 = 11;

/// A lane (or bucket) of 64-bit keys whose elements and scratch fit in
/// this many bytes (a core's L2 cache) is sorted by LSD passes; a longer
/// one is split by its top digit first.
const LEAF_BYTES: usize = 512 << 10;

/// Keys of up to 32 bits take only three or four LSD passes, which run
/// well while the lane and its scratch fit in this many bytes (the last
/// level cache, and the reach of the TLB with huge pages); a longer lane
/// is split first, as 64-bit keys are.
const LEAF_BYTES_NARROW: usize = 16 << 20;

/// Stable radix sort of `v` by the low `bits` bits of `key` (the keys'
/// higher bits are all equal), with `tmp` (same length) as scratch.
/// Returns whether the result is in `tmp` (else it is in `v`).
///
/// A lane that fits in cache runs LSD passes, least significant digit
/// first. A longer one is split by its top digit first (one stable pass,
/// MSD) and each bucket is sorted the same way by the bits below: the LSD
/// passes would each sweep the whole lane through memory, while after a
/// split most buckets sort in cache and only the ones still too long
/// (real data spreads its top digits unevenly: normally distributed floats
/// fill a few exponents) are split again. The buckets are disjoint, so
/// they are sorted in parallel, and each is left in whichever buffer most
/// of the lane ended in (the others are copied there). (Measured on Zen 3
/// with normally distributed values: splitting at 1e6 elements makes f64
/// 25 % faster and f32 10 % slower, and at 1e7 both much faster.) The
/// result is the one stable order of the keys whatever the thread count.
fn radix_sort<T, K>(
    v: &mut [T],
    tmp: &mut [T],
    bits: u32,
    parallel: bool,
    key: &(impl Fn(T) -> K + Sync),
) -> bool
where
    T: Copy + Ord + Send + Sync,
    K: RadixKey,
{
    let n = v.len();
    if bits == 0 || n < 2 {
        return false;
    }
    if n < RADIX_MIN || tmp.len() != n || u32::try_from(n).is_err() {
        // Elements are distinct or interchangeable (keys alone, or (key,
        // index) pairs), and agree above `bits`, so this is the stable
        // order. (A lane too long for u32 counters, which no indexable
        // tensor has, comes here too.)
        v.sort_unstable();
        return false;
    }
    let leaf = if K::BITS <= 32 {
        LEAF_BYTES_NARROW
    } else {
        LEAF_BYTES
    };
    if bits <= SPLIT_DIGIT || n.saturating_mul(2 * std::mem::size_of::<T>()) <= leaf {
        return lsd(v, tmp, Layout::lsd(n, bits, parallel), key);
    }
    let lo = bits - SPLIT_DIGIT;
    let l = Layout::new(n, SPLIT_DIGIT, 1, parallel);
    let mut hist = vec![0u32; l.chunks * l.buckets()];
    count_chunks(v, &mut hist, l, lo, key);
    let b = l.buckets();
    let sizes: Vec<usize> = (0..b).map(|d| bucket_total(&hist, l, d)).collect();
    if !chunk_starts(&mut hist, l, n) {
        // One bucket holds everything: go straight to the next digit.
        return radix_sort(v, tmp, lo, parallel, key);
    }
    // SAFETY: `hist` was just counted from `v` for the digit at `lo`, and
    // `tmp` has `v`'s length.
    unsafe { scatter(v, tmp, &mut hist, l, lo, key) };
    let mut buckets = Vec::with_capacity(b);
    let (mut rest_t, mut rest_v) = (tmp, v);
    for &size in &sizes {
        let (bt, rt) = std::mem::take(&mut rest_t).split_at_mut(size);
        let (bv, rv) = std::mem::take(&mut rest_v).split_at_mut(size);
        buckets.push((bt, bv));
        (rest_t, rest_v) = (rt, rv);
    }
    // Each bucket is sorted where the split left it (in `tmp`, with its
    // part of `v` as scratch), and says where its result is.
    let sort_bucket = |(bt, bv): &mut (&mut [T], &mut [T])| {
        radix_sort(bt, bv, lo, parallel && bt.len() >= 2 * PARALLEL_MIN, key)
    };
    let in_v: Vec<bool> = if parallel {
        buckets.par_iter_mut().map(sort_bucket).collect()
    } else {
        buckets.iter_mut().map(sort_bucket).collect()
    };
    let in_v_len: usize = buckets
        .iter()
        .zip(&in_v)
        .filter(|(_, &x)| x)
        .map(|(bk, _)| bk.0.len())
        .sum();
    let to_tmp = 2 * in_v_len < n;
    let gather = |((bt, bv), &x): (&mut (&mut [T], &mut [T]), &bool)| {
        if x && to_tmp {
            bt.copy_from_slice(bv);
        } else if !x && !to_tmp {
            bv.copy_from_slice(bt);
        }
    };
    if parallel {
        buckets.par_iter_mut().zip(in_v.par_iter()).for_each(gather);
    } else {
        buckets.iter_mut().zip(&in_v).for_each(gather);
    }
    to_tmp
}

/// Whether a lane is long enough that building its keys and writing its
/// result are shared by several threads too (each element's work is its
/// own, so the split changes nothing but the speed).
fn long_lane(n: usize) -> bool {
    n >= 2 * PARALLEL_MIN
}

/// Sorts a whole lane stably by `key`, with `tmp` as the radix scratch.
fn sort_all<T, K>(v: &mut Vec<T>, tmp: &mut Vec<T>, key: impl Fn(T) -> K + Sync)
where
    T: Copy + Ord + Send + Sync,
    K: RadixKey,
{
    let Some(&first) = v.first() else {
        return;
    };
    let n = v.len();
    tmp.clear();
    if n >= RADIX_MIN {
        reserve(tmp, n);
        tmp.resize(n, first);
    }
    if radix_sort(v, tmp, K::BITS, true, &key) {
        std::mem::swap(v, tmp);
    }
}

/// Makes room for `n` elements in an empty `v`, backed by huge pages when
/// long (a long lane's passes touch every page of two buffers, and a TLB
/// miss on every element costs more than the sort). Without the room, `v`
/// grows as usual: `per_lane` has already checked that the memory exists.
fn reserve<T>(v: &mut Vec<T>, n: usize) {
    if v.capacity() < n {
        if let Ok(room) = try_vec(n) {
            *v = room;
        }
    }
}

/// Buffers reused across the lanes one thread sorts.
struct Scratch<T: Ordered> {
    keys: Vec<T::K>,
    keys_tmp: Vec<T::K>,
    pairs: Vec<(T::K, u32)>,
    pairs_tmp: Vec<(T::K, u32)>,
    zeros: Vec<T>,
    nans: Vec<T>,
    /// The vector sort's scratch, as elements (seen as keys through
    /// [`Ordered::as_keys`]) so that it can come from zeroed memory.
    values_tmp: Vec<T>,
}

impl<T: Ordered> Scratch<T> {
    fn new() -> Self {
        Scratch {
            keys: Vec::new(),
            keys_tmp: Vec::new(),
            pairs: Vec::new(),
            pairs_tmp: Vec::new(),
            zeros: Vec::new(),
            nans: Vec::new(),
            values_tmp: Vec::new(),
        }
    }

    /// Notes the lane's zeros and NaNs, in input order, in the side lists.
    fn collect_groups(&mut self, lane: &[T]) {
        for &x in lane {
            match T::group(x.key()) {
                None => {}
                Some(0) => self.zeros.push(x),
                Some(_) => self.nans.push(x),
            }
        }
    }
}

/// The element a sorted key stands for: the next member of its group from
/// the side lists, or the one element the key encodes.
fn element<'a, T: Ordered>(
    k: T::K,
    zeros: &mut std::slice::Iter<'a, T>,
    nans: &mut std::slice::Iter<'a, T>,
) -> T {
    let side = match T::group(k) {
        None => None,
        Some(0) => zeros.next(),
        Some(_) => nans.next(),
    };
    side.copied().unwrap_or_else(|| T::unkey(k))
}

/// Sorts one lane's values into `out` (same length). Only keys move; the
/// zeros and NaNs, whose keys are shared, come back from side lists in
/// input order, which is where a stable sort leaves them.
fn sort_lane<T: Ordered>(lane: &[T], out: &mut [T], descending: bool, s: &mut Scratch<T>) {
    if counting_sort(lane, out, descending) {
        return;
    }
    if T::K::vectorised() {
        if let Some(keys) = T::as_keys(out) {
            sort_lane_in_place(lane, keys, descending, s);
            return;
        }
    }
    s.keys.clear();
    reserve(&mut s.keys, lane.len());
    s.zeros.clear();
    s.nans.clear();
    let long = long_lane(lane.len());
    // Inverting is its own inverse: it orients a key and restores it.
    let orient = |k: T::K| if descending { k.inverted() } else { k };
    // Keys first, noting only whether any falls in a shared group, so the
    // hot loop has no data-dependent branch; the groups' members are
    // collected by a second pass over the rare lanes that have them. (A
    // long lane's keys are built on every thread, each raising the flag
    // when it meets a group's member: a branch that real data never
    // takes, where a second pass over the keys would read them all again.)
    let shared = if long {
        let flag = AtomicBool::new(false);
        s.keys.par_extend(lane.par_iter().map(|&x| {
            let k = x.key();
            if T::group(k).is_some() {
                flag.store(true, Ordering::Relaxed);
            }
            orient(k)
        }));
        flag.into_inner()
    } else {
        let mut shared = false;
        s.keys.extend(lane.iter().map(|&x| {
            let k = x.key();
            shared |= T::group(k).is_some();
            orient(k)
        }));
        shared
    };
    if shared {
        s.collect_groups(lane);
    }
    // Equal keys are indistinguishable here, so an unstable sort of keys
    // is as good as a stable one.
    sort_all(&mut s.keys, &mut s.keys_tmp, |k| k);
    if !shared {
        let unkey = |(o, &k): (&mut T, &T::K)| *o = T::unkey(orient(k));
        if long {
            out.par_iter_mut().zip(s.keys.par_iter()).for_each(unkey);
        } else {
            out.iter_mut().zip(&s.keys).for_each(unkey);
        }
        return;
    }
    let (mut zeros, mut nans) = (s.zeros.iter(), s.nans.iter());
    for (o, &k) in out.iter_mut().zip(&s.keys) {
        *o = element(orient(k), &mut zeros, &mut nans);
    }
}

/// The order keys of `row`, in a vector made fallibly (for [`rank`]).
pub(super) fn keys_of<T: Ordered>(row: &[T]) -> Result<Vec<T::K>, crate::error::AllocError> {
    crate::storage::try_collect(row.len(), row.iter().map(|&x| x.key()))
}

/// The element of rank `k` (from 0) in `sort`'s stable ascending order of
/// `row`, where −0 and +0 tie and keep their input order: `median` and
/// `quantile` without sorting. `keys` are the row's keys ([`keys_of`]), in
/// any order, which this reorders; `sorted` says they are already
/// ascending, so the rank is read instead of selected. The row holds no
/// NaN (the callers answer NaN first). `None` when `k` is out of range.
pub(super) fn rank<T: Ordered>(row: &[T], keys: &mut [T::K], k: usize, sorted: bool) -> Option<T> {
    if k >= keys.len() {
        return None;
    }
    let km = if sorted {
        *keys.get(k)?
    } else {
        *keys.select_nth_unstable(k).1
    };
    if T::group(km).is_none() {
        return Some(T::unkey(km));
    }
    // A shared key (a zero): the tied elements stand in input order, after
    // every smaller key.
    let below = if sorted {
        keys.partition_point(|&x| x < km)
    } else {
        keys.iter().filter(|&&x| x < km).count()
    };
    row.iter().filter(|&&x| x.key() == km).nth(k - below).copied()
}

/// Keys spanning fewer values than this are counted instead of sorted.
const COUNT_SPAN: u64 = 1 << 16;
/// Lanes shorter than this sort their wider keys (one-byte keys are always
/// counted); it is also the sample whose span is checked first.
const COUNT_MIN: usize = 1 << 12;

/// [`sort_lane`] by counting, for keys of one byte (i8, bool) and for lanes
/// whose keys span fewer than [`COUNT_SPAN`] values (an i32 lane of small
/// integers): the keys' histogram (a long lane counted in one piece per
/// thread and the counts added; four histograms taken in turn, so that
/// runs of one key do not wait on their own increments), then each key's element
/// written as many times as it occurs, in key order. Equal keys are equal
/// elements, so this is the sorted lane. False, touching nothing, when the
/// keys spread wider (found on a sample first, then on the whole lane) or
/// a key has a group (zeros and NaNs come from side lists).
fn counting_sort<T: Ordered>(lane: &[T], out: &mut [T], descending: bool) -> bool {
    const CHUNK: usize = 1 << 16;
    let orient = |k: T::K| if descending { k.inverted() } else { k };
    let span = |part: &[T]| {
        crate::isa::wide(
            #[inline(always)]
            || {
                part.iter().fold((u64::MAX, 0u64), |(lo, hi), &x| {
                    let w = orient(x.key()).wide();
                    (lo.min(w), hi.max(w))
                })
            },
        )
    };
    let (lo, hi) = if T::K::BITS == 8 {
        (0, 255)
    } else {
        let Some(sample) = lane.get(..COUNT_MIN) else {
            return false;
        };
        let (lo, hi) = span(sample);
        if hi - lo >= COUNT_SPAN {
            return false;
        }
        let (lo, hi) = if long_lane(lane.len()) {
            lane.par_chunks(CHUNK)
                .map(span)
                .reduce(|| (u64::MAX, 0), |a, b| (a.0.min(b.0), a.1.max(b.1)))
        } else {
            span(lane)
        };
        if hi < lo || hi - lo >= COUNT_SPAN {
            return false;
        }
        (lo, hi)
    };
    let bins = (hi - lo + 1) as usize;
    // Four histograms, the elements of each quad going one to each.
    let count = |part: &[T]| -> Option<Vec<usize>> {
        let mut h = vec![0usize; 4 * bins];
        let mut grouped = false;
        {
            let (h01, h23) = h.split_at_mut(2 * bins);
            let (h0, h1) = h01.split_at_mut(bins);
            let (h2, h3) = h23.split_at_mut(bins);
            let mut tally = |hj: &mut [usize], x: T| {
                let k = x.key();
                grouped |= T::group(k).is_some();
                if let Some(c) = hj.get_mut(orient(k).wide().wrapping_sub(lo) as usize) {
                    *c += 1;
                }
            };
            let mut quads = part.chunks_exact(4);
            for q in &mut quads {
                tally(h0, q[0]);
                tally(h1, q[1]);
                tally(h2, q[2]);
                tally(h3, q[3]);
            }
            for &x in quads.remainder() {
                tally(h0, x);
            }
        }
        (!grouped).then_some(h)
    };
    let add = |a: Option<Vec<usize>>, b: Option<Vec<usize>>| {
        let (mut a, b) = (a?, b?);
        for (x, y) in a.iter_mut().zip(&b) {
            *x += y;
        }
        Some(a)
    };
    // One piece per thread, so that there are as many histograms.
    let hist = if long_lane(lane.len()) {
        let piece = lane
            .len()
            .div_ceil(rayon::current_num_threads().max(1))
            .max(CHUNK);
        lane.par_chunks(piece).map(count).reduce_with(add).flatten()
    } else {
        count(lane)
    };
    let Some(hist) = hist else {
        return false;
    };
    let mut at = 0;
    for b in 0..bins {
        let c = hist[b] + hist[bins + b] + hist[2 * bins + b] + hist[3 * bins + b];
        if c > 0 {
            if let Some(run) = out.get_mut(at..at + c) {
                run.fill(T::unkey(orient(T::K::from_wide(lo + b as u64))));
            }
            at += c;
        }
    }
    true
}

/// [`sort_lane`] where the vector sort takes the keys: they are built in
/// the output's own memory (`keys`), sorted there with one scratch buffer,
/// and turned back into elements in place, so a long lane touches two
/// buffers besides its input instead of three.
fn sort_lane_in_place<T: Ordered>(lane: &[T], keys: &mut [T::K], descending: bool, s: &mut Scratch<T>) {
    s.zeros.clear();
    s.nans.clear();
    let n = lane.len();
    let long = long_lane(n);
    let orient = |k: T::K| if descending { k.inverted() } else { k };
    // As in `sort_lane`: the keys, and whether any is a group's, noted
    // without a branch; a long lane's on every thread.
    let build = |(keys, lane): (&mut [T::K], &[T])| {
        let mut shared = false;
        for (o, &x) in keys.iter_mut().zip(lane) {
            let k = x.key();
            shared |= T::group(k).is_some();
            *o = orient(k);
        }
        shared
    };
    let shared = if long {
        const CHUNK: usize = 1 << 14;
        keys.par_chunks_mut(CHUNK)
            .zip(lane.par_chunks(CHUNK))
            .map(build)
            .reduce(|| false, |a, b| a | b)
    } else {
        build((keys, lane))
    };
    if shared {
        s.collect_groups(lane);
    }
    // The scratch is kept for the thread's next lane, and grown from
    // zeroed memory, whose pages cost nothing until the sort writes them
    // (a fill would first write them all on this thread). Without the
    // memory (`per_lane` checked it exists), the keys are sorted in place.
    if s.values_tmp.len() < n {
        s.values_tmp = Vec::new();
        s.values_tmp = try_zeroed(n).unwrap_or_default();
    }
    let sorted = match T::as_keys(&mut s.values_tmp) {
        Some(tmp) if tmp.len() >= n => T::K::vector_sort(keys, &mut tmp[..n]),
        _ => false,
    };
    if !sorted {
        keys.sort_unstable();
    }
    // Each slot's key becomes its element, written over it: the two have
    // the same size (`as_keys`).
    let put = |slot: &mut T::K, x: T| {
        // SAFETY: `slot` is one element's memory (`as_keys`), which any
        // value of `T` may occupy; nothing reads it as a key again.
        unsafe { (slot as *mut T::K).cast::<T>().write(x) }
    };
    if !shared {
        let unkey = |slot: &mut T::K| put(slot, T::unkey(orient(*slot)));
        if long {
            keys.par_iter_mut().for_each(unkey);
        } else {
            keys.iter_mut().for_each(unkey);
        }
        return;
    }
    let (mut zeros, mut nans) = (s.zeros.iter(), s.nans.iter());
    for slot in keys.iter_mut() {
        put(slot, element(orient(*slot), &mut zeros, &mut nans));
    }
}

/// Sorts the (key, index) pairs of a lane stably by key into `s.pairs`,
/// keys inverted for descending order. Pairs are distinct (the indices
/// are), so on short lanes an unstable sort of whole pairs is the stable
/// order.
fn sorted_pairs<T: Ordered>(lane: &[T], descending: bool, s: &mut Scratch<T>) {
    s.pairs.clear();
    reserve(&mut s.pairs, lane.len());
    let pair = |(i, &x): (usize, &T)| {
        let k = x.key();
        // `check_index_range` keeps lanes within i32 indices.
        (if descending { k.inverted() } else { k }, i as u32)
    };
    if long_lane(lane.len()) {
        s.pairs.par_extend(lane.par_iter().enumerate().map(pair));
    } else {
        s.pairs.extend(lane.iter().enumerate().map(pair));
    }
    sort_all(&mut s.pairs, &mut s.pairs_tmp, |p| p.0);
}

/// The indices of a stable sort of one lane.
fn argsort_lane<T: Ordered>(lane: &[T], out: &mut [i32], descending: bool, s: &mut Scratch<T>) {
    sorted_pairs(lane, descending, s);
    let index = |(o, p): (&mut i32, &(T::K, u32))| *o = p.1 as i32;
    if long_lane(lane.len()) {
        out.par_iter_mut().zip(s.pairs.par_iter()).for_each(index);
    } else {
        out.iter_mut().zip(&s.pairs).for_each(index);
    }
}

/// Leaves the `k` largest elements of the lane, largest first (NaN above
/// everything, ties by lower index), in `s.pairs[..k]`.
///
/// A large `k` sorts the whole lane. A small one makes one pass that keeps
/// candidates as (inverted key, index) pairs: whenever `2k` have gathered,
/// a selection keeps the best `k`, and from then on an element whose key
/// is not better than the k-th kept one cannot enter (its index is higher
/// than every kept one, so it would lose the tie too). The pairs are all
/// distinct, so the `k` smallest are one set whatever finds them.
fn topk_pairs<T: Ordered>(lane: &[T], k: usize, largest: bool, s: &mut Scratch<T>) {
    s.pairs.clear();
    if k == 0 {
        return;
    }
    if k >= lane.len() / 8 {
        sorted_pairs(lane, largest, s);
        return;
    }
    // The k best keys are the k smallest of these: inverted for the
    // largest elements, as they are for the smallest (NaN is largest).
    let key_of = |x: T| if largest { x.key().inverted() } else { x.key() };
    let cap = (2 * k).max(64);
    let mut bound: Option<T::K> = None;
    // Blocks whose best key cannot enter are skipped after one branch-free
    // (vectorisable) scan; once the bound has settled that is nearly all.
    const BLOCK: usize = 512;
    for (c, block) in lane.chunks(BLOCK).enumerate() {
        if let Some(b) = bound {
            if block.iter().map(|&x| key_of(x)).min().is_none_or(|m| m >= b) {
                continue;
            }
        }
        for (j, &x) in block.iter().enumerate() {
            let key = key_of(x);
            if bound.is_some_and(|b| key >= b) {
                continue;
            }
            s.pairs.push((key, (c * BLOCK + j) as u32));
            if s.pairs.len() >= cap {
                s.pairs.select_nth_unstable(k - 1);
                s.pairs.truncate(k);
                bound = s.pairs.get(k - 1).map(|p| p.0);
            }
        }
    }
    if s.pairs.len() > k {
        s.pairs.select_nth_unstable(k - 1);
        s.pairs.truncate(k);
    }
    s.pairs.sort_unstable();
}

// ---------------------------------------------------------------------------
// Lanes of a tensor

/// How an ordering operation lays out its work: the input with the sorted
/// axis moved last and packed row-major, and the permutation that did it.
struct Lanes {
    packed: Tensor,
    perm: Vec<usize>,
    /// Length of each lane (the sorted axis).
    n: usize,
    /// Number of lanes.
    rows: usize,
}

fn lanes(op: &str, x: &Tensor, axis: i64) -> Result<Lanes, TensorError> {
    let ax = axis_of(op, axis, x.ndim())?;
    if x.ndim() == 0 {
        // A rank-0 tensor is one lane of one element (as in PyTorch).
        let one = x.with_layout(vec![1], vec![1], x.offset())?;
        return Ok(Lanes {
            packed: one.contiguous()?,
            perm: vec![0],
            n: 1,
            rows: 1,
        });
    }
    let mut perm: Vec<usize> = (0..x.ndim()).filter(|&a| a != ax).collect();
    perm.push(ax);
    let packed = packed(&x.permuted(&perm)?)?;
    let n = x.shape()[ax];
    let rows = x
        .shape()
        .iter()
        .enumerate()
        .filter(|&(a, _)| a != ax)
        .map(|(_, d)| d)
        .product();
    Ok(Lanes {
        packed,
        perm,
        n,
        rows,
    })
}

/// Runs `f` on every lane (in parallel over lanes; each lane by one
/// thread, so the result cannot depend on the thread count) and assembles
/// the `m` outputs per lane into a tensor of the input's axis order.
fn per_lane<T: Ordered, O: Element>(
    x: &Tensor,
    l: &Lanes,
    m: usize,
    scratch: usize,
    f: impl Fn(&[T], &mut [O], &mut Scratch<T>) + Sync,
) -> Result<Tensor, TensorError> {
    let data: &[T] = l
        .packed
        .as_slice::<T>()
        .ok_or_else(|| TensorError("internal: lanes are not packed".into()))?;
    let total = l.rows.checked_mul(m).ok_or_else(|| {
        TensorError(format!(
            "{} rows of {m} results are more than can be counted",
            l.rows
        ))
    })?;
    // Zeroed memory: every slot is written by `f`, and the pages are
    // first touched there, on every thread, instead of by a fill here.
    let mut out: Vec<O> = try_zeroed(total).map_err(|e| e.for_tensor(O::DTYPE, &[l.rows, m]))?;
    if total > 0 {
        // Each thread works in its own scratch of `scratch` bytes per lane:
        // ask for that room once, up front, so a lane too long for memory
        // is an error here rather than an abort inside a worker.
        let workers = rayon::current_num_threads().min(l.rows).max(1);
        let probe = try_vec::<u8>(scratch.saturating_mul(workers))?;
        drop(probe);
        // Enough lanes per task that a task is worth scheduling.
        let n = l.n;
        let per_task = (16384 / n.max(1)).max(1);
        out.par_chunks_mut(m * per_task)
            .zip(data.par_chunks(n.max(1) * per_task))
            .for_each_init(Scratch::<T>::new, |s, (o, i)| {
                for (orow, irow) in o.chunks_mut(m).zip(i.chunks(n.max(1))) {
                    f(irow, orow, s);
                }
            });
    }
    if x.ndim() == 0 {
        // A rank-0 input gives a rank-0 result, unless `k = 0` asked for
        // no element at all.
        let shape = if m == 1 { Vec::new() } else { vec![m] };
        return Tensor::from_vec(out, shape);
    }
    let mut shape: Vec<usize> = l.perm.iter().map(|&a| x.shape()[a]).collect();
    if let Some(last) = shape.last_mut() {
        *last = m;
    }
    let t = Tensor::from_vec(out, shape)?;
    let mut inverse = vec![0; l.perm.len()];
    for (i, &p) in l.perm.iter().enumerate() {
        inverse[p] = i;
    }
    packed(&t.permuted(&inverse)?)
}

/// One ordering kernel, written once over the element type and dispatched
/// on the dtype in one place ([`dispatch`]).
trait LaneOp {
    fn run<T: Ordered>(&self, x: &Tensor, l: &Lanes) -> Result<Tensor, TensorError>;
}

fn dispatch(op: &impl LaneOp, x: &Tensor, l: &Lanes) -> Result<Tensor, TensorError> {
    crate::dispatch!(x.dtype(), T => op.run::<T>(x, l))
}

/// The zero element of `T` (all bits clear).
fn zero<T: Element>() -> T {
    T::from_raw_bits(0)
}

struct SortOp {
    descending: bool,
}

impl LaneOp for SortOp {
    fn run<T: Ordered>(&self, x: &Tensor, l: &Lanes) -> Result<Tensor, TensorError> {
        // Keys and their radix buffer.
        let scratch = l.n.saturating_mul(2 * std::mem::size_of::<T::K>());
        per_lane::<T, T>(x, l, l.n, scratch, |lane, out, s| {
            sort_lane(lane, out, self.descending, s)
        })
    }
}

struct ArgsortOp {
    descending: bool,
}

impl LaneOp for ArgsortOp {
    fn run<T: Ordered>(&self, x: &Tensor, l: &Lanes) -> Result<Tensor, TensorError> {
        // (key, index) pairs and their radix buffer.
        let scratch = l.n.saturating_mul(2 * std::mem::size_of::<(T::K, u32)>());
        per_lane::<T, i32>(x, l, l.n, scratch, |lane, out, s| {
            argsort_lane(lane, out, self.descending, s)
        })
    }
}

struct TopkOp {
    k: usize,
    values: bool,
    largest: bool,
}

impl LaneOp for TopkOp {
    fn run<T: Ordered>(&self, x: &Tensor, l: &Lanes) -> Result<Tensor, TensorError> {
        let k = self.k;
        // A large k sorts every pair (see `topk_pairs`); a small one keeps
        // at most 2k candidates.
        let pair = std::mem::size_of::<(T::K, u32)>();
        let scratch = if k >= l.n / 8 {
            l.n.saturating_mul(2 * pair)
        } else {
            k.saturating_mul(2 * pair)
        };
        if self.values {
            let fill = zero::<T>();
            per_lane::<T, T>(x, l, k, scratch, |lane, out, s| {
                topk_pairs(lane, k, self.largest, s);
                for (o, p) in out.iter_mut().zip(&s.pairs) {
                    *o = lane.get(p.1 as usize).copied().unwrap_or(fill);
                }
            })
        } else {
            per_lane::<T, i32>(x, l, k, scratch, |lane, out, s| {
                topk_pairs(lane, k, self.largest, s);
                for (o, p) in out.iter_mut().zip(&s.pairs) {
                    *o = p.1 as i32;
                }
            })
        }
    }
}

// ---------------------------------------------------------------------------
// The operations

fn axis_arg(a: &Args) -> Result<i64, TensorError> {
    Ok(a.int("axis")?.unwrap_or(-1))
}

/// Indices are i32 (spec §5), and the pair sorts carry u32 indices.
fn check_index_range(op: &str, l: &Lanes) -> Result<(), TensorError> {
    if l.n > i32::MAX as usize {
        return err(format!(
            "`{op}`: an axis of {} elements is too long for i32 indices",
            l.n
        ));
    }
    Ok(())
}

pub(super) fn sort(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    let descending = a.bool("descending", false)?;
    let l = a.about("axis", lanes(a.op, x, axis_arg(a)?))?;
    dispatch(&SortOp { descending }, x, &l).map(Out::Tensor)
}

pub(super) fn argsort(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    let descending = a.bool("descending", false)?;
    let l = a.about("axis", lanes(a.op, x, axis_arg(a)?))?;
    check_index_range(a.op, &l)?;
    dispatch(&ArgsortOp { descending }, x, &l).map(Out::Tensor)
}

fn topk_common(a: &Args, values: bool) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    let axis = axis_arg(a)?;
    let l = a.about("axis", lanes(a.op, x, axis))?;
    check_index_range(a.op, &l)?;
    let k = a.int("k")?.unwrap_or(0);
    if k < 0 || k as u64 > l.n as u64 {
        return err(format!(
            "`{}`: k = {k} is out of range for an axis of length {} (shape {})",
            a.op,
            l.n,
            shape_str(x.shape())
        ));
    }
    // `sorted=false` is accepted and the result is sorted anyway (the
    // spec lets any order be returned; this one is the sorted one).
    a.bool("sorted", true)?;
    dispatch(
        &TopkOp {
            k: k as usize,
            values,
            largest: a.bool("largest", true)?,
        },
        x,
        &l,
    )
    .map(Out::Tensor)
}

pub(super) fn topk(a: &Args) -> Result<Out, TensorError> {
    topk_common(a, true)
}

pub(super) fn argtopk(a: &Args) -> Result<Out, TensorError> {
    topk_common(a, false)
}

// ---------------------------------------------------------------------------
// unique, unique_counts, searchsorted, bincount (spec §11.3; `nonzero` is in reduce.rs, beside `count_nonzero`)

/// The order of these operations on element values (exact in f64):
/// ascending, -0 equal to +0, NaN after everything and equal to NaN.
fn value_order(a: f64, b: f64) -> std::cmp::Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => std::cmp::Ordering::Equal,
        (true, false) => std::cmp::Ordering::Greater,
        (false, true) => std::cmp::Ordering::Less,
        (false, false) => a.partial_cmp(&b).unwrap_or(std::cmp::Ordering::Equal),
    }
}

/// The distinct values of x in ascending order with how often each
/// occurs: the flattened elements through `sort`'s kernel (stable), then
/// one value per run of equal order keys — the run's first element, so of
/// -0 and +0 the one met first, and of the NaNs (which collapse to one,
/// last) the first NaN.
fn runs(x: &Tensor, with_counts: bool) -> Result<(Tensor, Vec<i32>), TensorError> {
    if x.numel() > i32::MAX as usize {
        return err(format!(
            "`unique`: {} elements are too many for i32 counts",
            x.numel()
        ));
    }
    let flat = reshaped(x, vec![x.numel()])?;
    let l = lanes("unique", &flat, 0)?;
    let sorted = dispatch(&SortOp { descending: false }, &flat, &l)?;
    crate::dispatch!(sorted.dtype(), T => runs_of::<T>(&sorted, with_counts))
}

/// The runs of equal keys of a sorted rank-1 tensor: each run's first
/// element and (`with_counts`; none otherwise) its length.
fn runs_of<T: Ordered>(sorted: &Tensor, with_counts: bool) -> Result<(Tensor, Vec<i32>), TensorError> {
    let v = sorted
        .as_slice::<T>()
        .ok_or_else(|| TensorError("internal: `unique` sorted into a view".into()))?;
    // A run starts at 0 and wherever a key differs from the one before:
    // the starts counted first (a vectorised pass over neighbouring
    // pairs), then each run's first element and length.
    let m = usize::from(!v.is_empty())
        + crate::isa::wide(
            #[inline(always)]
            || {
                v.windows(2)
                    .fold(0usize, |n, w| n + usize::from(w[0].key() != w[1].key()))
            },
        );
    let mut vals: Vec<T> = try_vec(m)?;
    let mut counts: Vec<i32> = try_vec(if with_counts { m } else { 0 })?;
    let mut start = 0;
    for (i, w) in v.windows(2).enumerate() {
        if w[0].key() != w[1].key() {
            vals.extend(v.get(start).copied());
            if with_counts {
                counts.push((i + 1 - start) as i32);
            }
            start = i + 1;
        }
    }
    if let Some(&first) = v.get(start) {
        vals.push(first);
        if with_counts {
            counts.push((v.len() - start) as i32);
        }
    }
    Ok((Tensor::from_vec(vals, vec![m])?, counts))
}

/// `unique(x)`: the distinct elements, sorted, flattened; NaNs collapse to
/// one, last (NumPy's `equal_nan=True`).
pub(super) fn unique(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    let (vals, _) = runs(x, false)?;
    Ok(Out::Tensor(vals))
}

/// `unique_counts(x) -> (values, counts)`, the counts i32.
pub(super) fn unique_counts(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    let (vals, counts) = runs(x, true)?;
    let n = counts.len();
    Ok(Out::Tuple(vec![vals, Tensor::from_vec(counts, vec![n])?]))
}

/// `searchsorted(sorted, values, side="left")`: for each value, the number
/// of elements of the rank-1 `sorted` below it (`"left"`) or not above it
/// (`"right"`), in the order above (NaN last), as i32 of values' shape.
pub(super) fn searchsorted(a: &Args) -> Result<Out, TensorError> {
    let s = a.tensor("sorted")?;
    let v = a.tensor("values")?;
    if s.ndim() != 1 {
        return err(format!(
            "`searchsorted` needs a rank-1 sorted tensor, not shape {}",
            shape_str(s.shape())
        ));
    }
    if s.numel() > i32::MAX as usize {
        return err("`searchsorted`: the sorted tensor is too long for i32 positions".into());
    }
    let right = match a.get("side") {
        None => false,
        Some(super::args::Arg::Str(t)) if t == "left" => false,
        Some(super::args::Arg::Str(t)) if t == "right" => true,
        Some(other) => {
            return Err(a.blame(
                "side",
                TensorError(format!(
                    "`searchsorted`: `side` must be \"left\" or \"right\", not {}",
                    other.kind()
                )),
            ))
        }
    };
    let sv = s.to_f64_vec()?;
    let pos: Vec<i32> = v
        .to_f64_vec()?
        .into_iter()
        .map(|x| {
            sv.partition_point(|&e| {
                let o = value_order(e, x);
                o == std::cmp::Ordering::Less || (right && o == std::cmp::Ordering::Equal)
            }) as i32
        })
        .collect();
    Tensor::from_vec(pos, v.shape().to_vec()).map(Out::Tensor)
}

/// `bincount(x, minlength=0)`: how often each of 0, 1, … occurs in the
/// rank-1 non-negative integer tensor x, i32, of length max(max(x) + 1,
/// minlength).
pub(super) fn bincount(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    if x.dtype().is_float() || x.ndim() != 1 {
        return err(format!(
            "`bincount` needs a rank-1 integer tensor, not {} of shape {}",
            x.dtype(),
            shape_str(x.shape())
        ));
    }
    let min = a.int("minlength")?.unwrap_or(0);
    if min < 0 {
        return Err(a.blame(
            "minlength",
            TensorError(format!("`bincount`: minlength must not be negative, not {min}")),
        ));
    }
    if x.numel() > i32::MAX as usize {
        return err("`bincount`: too many elements for i32 counts".into());
    }
    let min = usize::try_from(min).unwrap_or(usize::MAX);
    let c = x.contiguous()?;
    let counts = match c.storage() {
        Storage::Bool(v) => count_bins(v, min, |e: bool| i32::from(e)),
        Storage::I8(v) => count_bins(v, min, i32::from),
        Storage::I32(v) => count_bins(v, min, |e: i32| e),
        Storage::Bf16(_) | Storage::F16(_) | Storage::F32(_) | Storage::F64(_) => {
            err("internal error: `bincount` of floats".into())
        }
    }?;
    let len = counts.len();
    Tensor::from_vec(counts, vec![len]).map(Out::Tensor)
}

/// [`bincount`]'s counts of the integers `v` (each `int(e)`): a pass for
/// the smallest and the largest (vectorised), then the counting, over
/// chunks on every thread when the bins are few enough for each thread to
/// hold its own, their counts added (exact integers, so the split changes
/// nothing).
fn count_bins<T: Element>(
    v: &[T],
    min: usize,
    int: impl Fn(T) -> i32 + Sync,
) -> Result<Vec<i32>, TensorError> {
    let (lo, hi) = v
        .iter()
        .fold((i32::MAX, -1i32), |(lo, hi), &e| (lo.min(int(e)), hi.max(int(e))));
    if lo < 0 {
        let bad = v.iter().map(|&e| int(e)).find(|&e| e < 0).unwrap_or(lo);
        return err(format!("`bincount` counts non-negative integers; x holds {bad}"));
    }
    // hi + 1 ≤ 2^31 bins: no overflow in usize.
    let len = (hi as usize + 1).max(min);
    let mut counts = try_filled(len, 0i32).map_err(|e| e.for_tensor(crate::dtype::DType::I32, &[len]))?;
    let count = |counts: &mut [i32], part: &[T]| {
        for &e in part {
            if let Some(c) = counts.get_mut(int(e) as usize) {
                *c += 1;
            }
        }
    };
    const CHUNK: usize = 1 << 16;
    let bins = hi as usize + 1;
    if v.len() >= 4 * CHUNK && bins <= CHUNK {
        let partial = v
            .par_chunks(CHUNK)
            .fold(
                || vec![0i32; bins],
                |mut c, part| {
                    count(&mut c, part);
                    c
                },
            )
            .reduce_with(|mut a, b| {
                for (x, y) in a.iter_mut().zip(&b) {
                    *x += y;
                }
                a
            });
        if let Some(p) = partial {
            for (x, y) in counts.iter_mut().zip(&p) {
                *x += y;
            }
        }
    } else {
        count(&mut counts, v);
    }
    Ok(counts)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A xorshift64 generator: the tests' reproducible stream of bits.
    pub(crate) fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    /// Pools of one and of four threads: the tests that check an order
    /// does not depend on the thread count run on both.
    pub(crate) fn one_and_four_threads() -> [rayon::ThreadPool; 2] {
        let pool = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool")
        };
        [pool(1), pool(4)]
    }

    #[test]
    fn float_keys_follow_the_spec_order() {
        let xs = [
            f32::NEG_INFINITY,
            -1.5,
            -f32::MIN_POSITIVE / 2.0,
            -0.0,
            0.0,
            f32::from_bits(1),
            2.0,
            f32::INFINITY,
            f32::NAN,
            -f32::NAN,
        ];
        let keys: Vec<u32> = xs.iter().map(|x| x.key()).collect();
        assert!(keys.windows(2).all(|w| w[0] <= w[1]), "{keys:x?}");
        assert_eq!(keys[3], keys[4]);
        assert_eq!(keys[8], keys[9]);
        for x in [-1.5f32, 2.0, f32::NEG_INFINITY, f32::from_bits(1)] {
            assert_eq!(f32::unkey(x.key()).to_bits(), x.to_bits());
        }
        assert!((-7i8).key() < 3i8.key());
        assert_eq!(i32::unkey((-7i32).key()), -7);
    }

    /// Many long lanes (several parallel tasks, the radix path) give the
    /// same bits on one and on four threads, and agree with a plain stable
    /// sort under PyTorch's order.
    #[test]
    fn thread_count_does_not_matter() {
        use crate::ops::{call_named, Arg};
        use std::cmp::Ordering;
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        let specials = [f32::NAN, -f32::NAN, 0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY];
        // The reference: stable sorts by comparators written from the spec
        // (ascending: NaN after everything; descending: NaN first; -0 ==
        // +0 in both).
        let asc = |a: &f32, b: &f32| match (a.is_nan(), b.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => a.partial_cmp(b).unwrap_or(Ordering::Equal),
        };
        let desc = |a: &f32, b: &f32| match (a.is_nan(), b.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => b.partial_cmp(a).unwrap_or(Ordering::Equal),
        };
        // Short lanes (8-bit digits), long ones (11-bit digits), and one
        // long enough that its keys are built and sorted on every thread.
        for (rows, len) in [(24usize, 2000usize), (2, 70000), (1, 300_000)] {
            let v: Vec<f32> = (0..rows * len)
                .map(|_| {
                    let r = next();
                    match r % 10 {
                        0 => specials[(r >> 8) as usize % specials.len()],
                        1..=4 => ((r >> 8) % 9) as f32 - 4.0,
                        _ => {
                            f32::from_bits((r >> 16) as u32 & 0x7fff_ffff)
                                * if r & 1 == 0 { 1.0 } else { -1.0 }
                        }
                    }
                })
                .collect();
            // Tensors are not Send: each pool builds its own. Extra
            // arguments travel as plain data: an axis or k, then
            // `descending`.
            let run = |threads: usize, op: &str, extra: (Option<i64>, Option<bool>)| {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .expect("pool");
                pool.install(|| {
                    let x = Tensor::from_vec(v.clone(), vec![rows, len]).expect("tensor");
                    let mut args = vec![Arg::Tensor(x)];
                    args.extend(extra.0.map(Arg::Int));
                    args.extend(extra.1.map(Arg::Bool));
                    match call_named(op, args) {
                        Ok(Out::Tensor(t)) => t.scalars().map(|s| s.to_bits()).collect::<Vec<u64>>(),
                        other => panic!("{op}: {other:?}"),
                    }
                })
            };
            for (op, extra) in [
                ("sort", (None, None)),
                ("argsort", (Some(0), Some(true))),
                ("topk", (Some(30), None)),
                ("argtopk", (Some(len as i64 - 500), None)),
            ] {
                assert_eq!(run(1, op, extra), run(4, op, extra), "{op} on [{rows}, {len}]");
            }
            // Every path: the vector sort of the keys where the CPU has
            // AVX2, the radix sort below it.
            crate::isa::tests::at_each_level(|_| {
                for descending in [false, true] {
                    let idx = run(4, "argsort", (Some(-1), Some(descending)));
                    let vals = run(4, "sort", (Some(-1), Some(descending)));
                    let top = run(4, "argtopk", (Some(30), None));
                    for (r, row) in v.chunks(len).enumerate() {
                        let mut want: Vec<usize> = (0..len).collect();
                        if descending {
                            want.sort_by(|&i, &j| desc(&row[i], &row[j]));
                            let top_row: Vec<usize> =
                                top[r * 30..(r + 1) * 30].iter().map(|&b| b as usize).collect();
                            assert_eq!(top_row, want[..30], "argtopk row {r} of [{rows}, {len}]");
                        } else {
                            want.sort_by(|&i, &j| asc(&row[i], &row[j]));
                        }
                        let got: Vec<usize> =
                            idx[r * len..(r + 1) * len].iter().map(|&b| b as usize).collect();
                        assert_eq!(
                            got, want,
                            "argsort row {r} of [{rows}, {len}], descending {descending}"
                        );
                        let want_bits: Vec<u64> = want.iter().map(|&i| u64::from(row[i].to_bits())).collect();
                        assert_eq!(
                            vals[r * len..(r + 1) * len],
                            want_bits[..],
                            "sort row {r}, descending {descending}"
                        );
                    }
                }
            });
        }
    }

    /// `bincount` on long tensors (counted in chunks on every thread) and
    /// short ones, of each integer dtype, with and without `minlength`,
    /// against counting one element at a time; a negative element is an
    /// error naming it.
    #[test]
    fn bincount_counts_every_element_once() {
        use crate::ops::{call_named, Arg};
        let mut next = xorshift(0x00c0_ffee_0000_0042u64);
        let count = |x: Tensor, minlength: Option<i64>| match call_named(
            "bincount",
            std::iter::once(Arg::Tensor(x))
                .chain(minlength.map(Arg::Int))
                .collect(),
        ) {
            Ok(Out::Tensor(t)) => Ok(t.scalars().map(|s| s.to_f64() as i64).collect::<Vec<i64>>()),
            Ok(other) => panic!("bincount: {other:?}"),
            Err(e) => Err(e),
        };
        for n in [0usize, 1, 1000, (1 << 18) + 7] {
            for bins in [1u64, 7, 128, 70_000] {
                let i: Vec<i32> = (0..n).map(|_| (next() % bins) as i32).collect();
                let mut want = vec![0i64; i.iter().map(|&e| e as usize + 1).max().unwrap_or(0)];
                for &e in &i {
                    want[e as usize] += 1;
                }
                for minlength in [None, Some(3), Some(200_000)] {
                    let mut w = want.clone();
                    w.resize(w.len().max(minlength.unwrap_or(0) as usize), 0);
                    let x = Tensor::from_vec(i.clone(), vec![n]).expect("tensor");
                    assert_eq!(count(x, minlength).ok(), Some(w.clone()), "i32 n={n} bins={bins}");
                    if bins <= 128 {
                        let x = Tensor::from_vec(i.iter().map(|&e| e as i8).collect::<Vec<i8>>(), vec![n])
                            .expect("tensor");
                        assert_eq!(count(x, minlength).ok(), Some(w.clone()), "i8 n={n} bins={bins}");
                    }
                    if bins <= 2 || n == 0 {
                        let x = Tensor::from_vec(i.iter().map(|&e| e == 1).collect::<Vec<bool>>(), vec![n])
                            .expect("tensor");
                        assert_eq!(count(x, minlength).ok(), Some(w), "bool n={n} bins={bins}");
                    }
                }
            }
        }
        let mut v: Vec<i32> = (0..(1 << 18)).map(|_| (next() % 5) as i32).collect();
        v[200_000] = -3;
        let e = count(Tensor::from_vec(v, vec![1 << 18]).expect("tensor"), None)
            .err()
            .map(|e| e.to_string());
        assert!(e.is_some_and(|m| m.contains("x holds -3")));
    }

    /// `rank` (median's and quantile's selection) against a stable sort,
    /// for every rank, selected and read from sorted keys, on rows full of
    /// tied −0 and +0 (whose input order must come back), repeats and
    /// infinities, for every dtype.
    #[test]
    fn rank_is_the_stable_sorts_element() {
        let mut next = xorshift(0x5151_7777_0101_3333u64);
        let vals = [
            0.0,
            -0.0,
            1.5,
            -2.0,
            0.0,
            f64::INFINITY,
            -0.0,
            f64::NEG_INFINITY,
            3.0,
            1.5,
        ];
        fn check<T: Ordered>(row: &[T]) {
            let key = |x: &T| (x.to_f64() + 0.0, 0u8);
            let mut want = row.to_vec();
            want.sort_by(|a, b| key(a).partial_cmp(&key(b)).unwrap_or(std::cmp::Ordering::Equal));
            for sorted in [false, true] {
                let mut keys = keys_of(row).expect("keys");
                if sorted {
                    keys.sort_unstable();
                }
                for (k, w) in want.iter().enumerate() {
                    let got = rank(row, &mut keys, k, sorted).map(|v| v.to_scalar().to_bits());
                    assert_eq!(
                        got,
                        Some(w.to_scalar().to_bits()),
                        "{} rank {k} of {}, sorted keys {sorted}",
                        T::DTYPE,
                        row.len()
                    );
                }
                assert!(rank(row, &mut keys, row.len(), sorted).is_none());
            }
        }
        for n in [1usize, 2, 5, 40, 333] {
            let v: Vec<f64> = (0..n)
                .map(|_| vals[(next() % vals.len() as u64) as usize])
                .collect();
            check(&v);
            check(&v.iter().map(|&x| x as f32).collect::<Vec<f32>>());
            check(&v.iter().map(|&x| bf16::from_f64(x)).collect::<Vec<bf16>>());
            check(&v.iter().map(|&x| f16::from_f64(x)).collect::<Vec<f16>>());
            check(
                &v.iter()
                    .map(|&x| x.clamp(-100.0, 100.0) as i8)
                    .collect::<Vec<i8>>(),
            );
            check(&v.iter().map(|&x| x.clamp(-1e9, 1e9) as i32).collect::<Vec<i32>>());
            check(&v.iter().map(|&x| x > 0.0).collect::<Vec<bool>>());
        }
    }

    /// `sort` by counting (i8 and bool, and keys of a narrow span)
    /// against the standard library's sort, ascending and descending, on
    /// short lanes, on long ones counted in parallel chunks (with a last
    /// chunk that is not full), with every i8 value or only a few, i32 and
    /// f32 lanes whose span is or is not narrow (or only in the sample),
    /// and along each axis of a matrix.
    #[test]
    fn counting_sort_of_bytes_is_the_sorted_order() {
        use crate::ops::{call_named, Arg};
        let mut next = xorshift(0x0bad_cafe_1234_5678u64);
        let sorted = |x: Tensor, axis: i64, descending: bool| match call_named(
            "sort",
            vec![Arg::Tensor(x), Arg::Int(axis), Arg::Bool(descending)],
        ) {
            Ok(Out::Tensor(t)) => t.scalars().map(|s| s.to_f64()).collect::<Vec<f64>>(),
            other => panic!("sort: {other:?}"),
        };
        for len in [0usize, 1, 2, 7, 1000, 2 * PARALLEL_MIN + 12_345] {
            for spread in [256u64, 3] {
                let i: Vec<i8> = (0..len).map(|_| (next() % spread) as u8 as i8).collect();
                let b: Vec<bool> = i.iter().map(|&v| v & 1 == 1).collect();
                for descending in [false, true] {
                    let mut want = i.clone();
                    want.sort();
                    let mut wb = b.clone();
                    wb.sort();
                    if descending {
                        want.reverse();
                        wb.reverse();
                    }
                    let want: Vec<f64> = want.iter().map(|&v| f64::from(v)).collect();
                    let wb: Vec<f64> = wb.iter().map(|&v| f64::from(u8::from(v))).collect();
                    let x = Tensor::from_vec(i.clone(), vec![len]).expect("tensor");
                    assert!(
                        sorted(x, -1, descending) == want,
                        "i8 sort of {len}, descending {descending}"
                    );
                    let x = Tensor::from_vec(b.clone(), vec![len]).expect("tensor");
                    assert!(
                        sorted(x, -1, descending) == wb,
                        "bool sort of {len}, descending {descending}"
                    );
                }
            }
        }
        // i32 lanes of a narrow span (counted), of a wide one, and narrow in
        // the first COUNT_MIN keys only (sorted); f32 lanes of a narrow span
        // of keys, with a zero among them (a group: sorted) and without.
        for len in [100usize, COUNT_MIN, COUNT_MIN + 1, 2 * PARALLEL_MIN + 999] {
            for (lo, spread, tail) in [
                (-100i64, 200u64, 0i64),
                (500_000_000, 60_000, 0),
                (-5, 1 << 20, 0),
                (0, 10, 1 << 30),
            ] {
                let i: Vec<i32> = (0..len)
                    .map(|p| {
                        let v = lo + (next() % spread) as i64;
                        (if p == len - 1 { v + tail } else { v }) as i32
                    })
                    .collect();
                for descending in [false, true] {
                    let mut want = i.clone();
                    want.sort();
                    if descending {
                        want.reverse();
                    }
                    let want: Vec<f64> = want.iter().map(|&v| f64::from(v)).collect();
                    let x = Tensor::from_vec(i.clone(), vec![len]).expect("tensor");
                    assert!(
                        sorted(x, -1, descending) == want,
                        "i32 sort of {len} from {lo} spread {spread}"
                    );
                }
            }
            for zero in [false, true] {
                let f: Vec<f32> = (0..len)
                    .map(|p| {
                        if zero && p == len / 2 {
                            -0.0
                        } else {
                            f32::from_bits(0x3f80_0000 + (next() % 500) as u32)
                        }
                    })
                    .collect();
                let mut want = f.clone();
                want.sort_by(|a, b| a.total_cmp(b));
                let want: Vec<f64> = want.iter().map(|&v| f64::from(v)).collect();
                let x = Tensor::from_vec(f, vec![len]).expect("tensor");
                assert!(sorted(x, -1, false) == want, "f32 sort of {len}, a zero {zero}");
            }
        }
        // Along each axis of a 3 × 5 matrix.
        let m: Vec<i8> = vec![5, -1, 3, 3, -128, 127, 0, 0, -7, 2, 9, 9, -1, 4, 1];
        let x = Tensor::from_vec(m.clone(), vec![3, 5]).expect("tensor");
        assert_eq!(
            sorted(x.clone(), 1, false),
            vec![-128.0, -1.0, 3.0, 3.0, 5.0, -7.0, 0.0, 0.0, 2.0, 127.0, -1.0, 1.0, 4.0, 9.0, 9.0]
        );
        assert_eq!(
            sorted(x, 0, true),
            vec![127.0, 9.0, 3.0, 4.0, 2.0, 9.0, 0.0, 0.0, 3.0, 1.0, 5.0, -1.0, -1.0, -7.0, -128.0]
        );
    }

    /// `sort` of f64 (64-bit keys) and i32 against stable sorts written
    /// from the spec, on every ISA level, short and long lanes, with
    /// every special value, many ties and both zeros.
    #[test]
    fn sort_of_f64_and_i32_is_the_stable_order() {
        use crate::ops::{call_named, Arg};
        let mut next = xorshift(0x1234_5678_9abc_def1u64);
        let specials = [
            f64::NAN,
            -f64::NAN,
            f64::from_bits(0x7ff0_0000_dead_beef),
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::from_bits(1),
        ];
        let sorted = |x: Tensor, descending: bool| match call_named(
            "sort",
            vec![Arg::Tensor(x), Arg::Int(-1), Arg::Bool(descending)],
        ) {
            Ok(Out::Tensor(t)) => t.scalars().map(|s| s.to_bits()).collect::<Vec<u64>>(),
            other => panic!("sort: {other:?}"),
        };
        for len in [1usize, 17, 1000, 300_000] {
            let f: Vec<f64> = (0..len)
                .map(|_| {
                    let r = next();
                    match r % 8 {
                        0 => specials[(r >> 8) as usize % specials.len()],
                        1..=3 => ((r >> 8) % 9) as f64 - 4.0,
                        _ => f64::from_bits(r >> 1) * if r & 1 == 0 { 1.0 } else { -1.0 },
                    }
                })
                .collect();
            let i: Vec<i32> = (0..len).map(|_| (next() >> 40) as i32 - (1 << 23)).collect();
            let key = |x: &f64| if x.is_nan() { (1u8, 0.0) } else { (0, *x + 0.0) };
            crate::isa::tests::at_each_level(|level| {
                for descending in [false, true] {
                    let mut want: Vec<f64> = f.clone();
                    want.sort_by(|a, b| {
                        let o = key(a).partial_cmp(&key(b)).unwrap_or(std::cmp::Ordering::Equal);
                        if descending {
                            o.reverse()
                        } else {
                            o
                        }
                    });
                    let want: Vec<u64> = want.iter().map(|x| x.to_bits()).collect();
                    let x = Tensor::from_vec(f.clone(), vec![len]).expect("tensor");
                    assert!(
                        sorted(x, descending) == want,
                        "f64 sort of {len}, {level:?}, descending {descending}"
                    );
                    let mut want: Vec<i32> = i.clone();
                    want.sort();
                    if descending {
                        want.reverse();
                    }
                    let want: Vec<u64> = want.iter().map(|&x| u64::from(x as u32)).collect();
                    let x = Tensor::from_vec(i.clone(), vec![len]).expect("tensor");
                    assert!(
                        sorted(x, descending) == want,
                        "i32 sort of {len}, {level:?}, descending {descending}"
                    );
                }
            });
        }
    }

    #[test]
    fn radix_matches_a_stable_sort() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        fn check<K: RadixKey + std::fmt::Debug>(keys: Vec<K>) {
            let mut v: Vec<(K, u32)> = keys.into_iter().zip(0..).collect();
            let mut want = v.clone();
            want.sort_by_key(|p| p.0);
            sort_all(&mut v, &mut Vec::new(), |p| p.0);
            assert!(v == want, "{} keys", v.len());
        }
        // Every path: a comparison sort, LSD with 8-bit and 11-bit digits,
        // one and several streams per task, lanes of 64-bit and of 32-bit
        // keys split by their top digit (buckets that fit in cache,
        // buckets split again, one bucket holding everything, bucket
        // results left in either buffer), one and several tasks per pass;
        // with many ties, keys over all the bits, and keys whose high bits
        // take few values (as floats' exponents do). The order must not depend on
        // the thread count, so every case runs on one and on four threads.
        let pools = one_and_four_threads();
        for (n, modulus, rot) in [
            (200, 0, 0),
            (300, 300, 0),
            (5000, 300, 0),
            (20000, 0, 0),
            (70000, 1000, 0),
            (70000, 1000, 13),
            (300_000, 0, 0),
            (300_000, 7, 0),
            (300_000, 1, 0),
            (300_000, 100_000, 9),
            // Long enough that (u32, u32) pairs are split first too.
            (LEAF_BYTES_NARROW / 16 + 1000, 0, 0),
            (LEAF_BYTES_NARROW / 16 + 1000, 5000, 21),
        ] {
            let mut draw = || if modulus == 0 { next() } else { next() % modulus };
            let keys: Vec<u64> = (0..n).map(|_| draw().rotate_right(rot)).collect();
            for p in &pools {
                p.install(|| {
                    check::<u64>(keys.clone());
                    check::<u32>(keys.iter().map(|&k| (k >> 32) as u32).collect());
                    check::<u32>(keys.iter().map(|&k| k as u32).collect());
                    check::<u16>(keys.iter().map(|&k| (k >> 48) as u16).collect());
                    check::<u16>(keys.iter().map(|&k| k as u16).collect());
                });
            }
        }
    }
}
