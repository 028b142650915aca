//! Packed element storage: one `Vec` of the dtype's own width per tensor
//! (bool and i8 one byte, bf16 and f16 two, i32 and f32 four, f64 eight);
//! the [`Element`] / [`Accumulate`] trait pair that lets a kernel be written
//! once over all seven element types and the three accumulation types; and
//! [`dispatch!`](crate::dispatch), the one `match` that picks the element
//! type at run time.
//!
//! The buffer invariant of seed 000 — every element is a value representable
//! in the tensor's dtype — holds by construction: the storage *is* the
//! dtype's encoding, and every way into it (`Element::from_scalar`,
//! `Element::from_f64`, the casts of `convert`) rounds once to that encoding.
//! A scalar of the wrong dtype is refused (an error), never stored as zero.

pub use half::{bf16, f16};

use crate::convert::{bf16_bits_to_f64, f16_bits_to_f64, f64_to_bf16_bits, f64_to_f16_bits, Scalar};
use crate::dtype::DType;
use crate::error::{AllocError, TensorError};

/// One element type of packed storage, and the facts about it every kernel
/// needs: its dtype, its exact value, its one rounding from an f64, and the
/// type it accumulates in.
pub trait Element: Copy + PartialEq + Send + Sync + 'static {
    const DTYPE: DType;
    /// The type reductions and contractions of this element accumulate in:
    /// the element type of `promote::accumulation_dtype(Self::DTYPE)` (a
    /// test checks that the two agree for every dtype).
    type Acc: Accumulate;
    /// The element as the dtype-tagged scalar the casts work on.
    fn to_scalar(self) -> Scalar;
    /// The element holding `s`, or `None` when `s` is of another dtype
    /// (callers cast first; a mismatch is a bug to report, not to paper
    /// over with a zero).
    fn from_scalar(s: Scalar) -> Option<Self>;
    /// The element whose storage bits are the low bits of `bits`, as
    /// [`Scalar::from_bits`] reads them.
    fn from_raw_bits(bits: u64) -> Self;
    /// The exact value as an f64 (every dtype's values are f64 values).
    fn to_f64(self) -> f64;
    /// `x` rounded once into this type: to nearest, ties to even, for the
    /// floats (a NaN's payload is the platform's for f32, the documented
    /// one of `convert::narrow` for bf16 and f16); for the integer types,
    /// which kernels only hand exact in-range integers, Rust's `as`; for
    /// bool, `x != 0`.
    fn from_f64(x: f64) -> Self;
    /// The element widened exactly into its accumulation type.
    fn widen(self) -> Self::Acc;
    fn slice(s: &Storage) -> Option<&[Self]>;
    fn into_storage(v: Vec<Self>) -> Storage;
}

/// An accumulation type (f32, f64, i32), which accumulates in itself. Each
/// method is one operation in the type itself, so a chain of them rounds at
/// every step exactly as the spec's `acc_add` (and, for `mul_add`, the
/// contraction step of spec §5.4) does; i32 wraps.
pub trait Accumulate: Element<Acc = Self> + PartialOrd + std::fmt::Debug {
    const ZERO: Self;
    const ONE: Self;
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    /// One contraction step `self ⊕ a·b`: the product rounded together
    /// with the add where the type allows (an f32 fused multiply-add, which
    /// is also the exact-product sum that bf16 and f16 operands need, since
    /// the product of two 8- or 11-bit significands fits f32 exactly); for
    /// f64 a rounded product, then a rounded add (spec §5.4); wrapping i32.
    fn mul_add(self, a: Self, b: Self) -> Self;
}

/// Writes the `Element` impl of one element type from its parts.
macro_rules! element {
    ($t:ty, $dt:ident, acc $acc:ty,
     to_scalar |$x:ident| $to_scalar:expr,
     from_bits |$b:ident| $from_bits:expr,
     to_f64 |$y:ident| $to_f64:expr,
     from_f64 |$z:ident| $from_f64:expr,
     widen |$w:ident| $widen:expr,
     scalar $sv:ident => $from_scalar:expr) => {
        impl Element for $t {
            const DTYPE: DType = DType::$dt;
            type Acc = $acc;
            #[inline(always)]
            fn to_scalar(self) -> Scalar {
                let $x = self;
                $to_scalar
            }
            #[inline(always)]
            fn from_scalar(s: Scalar) -> Option<Self> {
                match s {
                    Scalar::$dt($sv) => Some($from_scalar),
                    _ => None,
                }
            }
            #[inline(always)]
            fn from_raw_bits(bits: u64) -> Self {
                let $b = bits;
                $from_bits
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                let $y = self;
                $to_f64
            }
            #[inline(always)]
            fn from_f64(x: f64) -> Self {
                let $z = x;
                $from_f64
            }
            #[inline(always)]
            fn widen(self) -> $acc {
                let $w = self;
                $widen
            }
            fn slice(s: &Storage) -> Option<&[Self]> {
                match s {
                    Storage::$dt(v) => Some(v),
                    _ => None,
                }
            }
            fn into_storage(v: Vec<Self>) -> Storage {
                Storage::$dt(v)
            }
        }
    };
}

element!(bool, Bool, acc i32,
    to_scalar |x| Scalar::Bool(x),
    from_bits |b| b as u8 != 0,
    to_f64 |y| if y { 1.0 } else { 0.0 },
    from_f64 |z| z != 0.0,
    widen |w| i32::from(w),
    scalar v => v);
element!(i8, I8, acc i32,
    to_scalar |x| Scalar::I8(x),
    from_bits |b| b as u8 as i8,
    to_f64 |y| f64::from(y),
    from_f64 |z| z as i8,
    widen |w| i32::from(w),
    scalar v => v);
element!(i32, I32, acc i32,
    to_scalar |x| Scalar::I32(x),
    from_bits |b| b as u32 as i32,
    to_f64 |y| f64::from(y),
    from_f64 |z| z as i32,
    widen |w| w,
    scalar v => v);
element!(bf16, Bf16, acc f32,
    to_scalar |x| Scalar::Bf16(x.to_bits()),
    from_bits |b| bf16::from_bits(b as u16),
    to_f64 |y| bf16_bits_to_f64(y.to_bits()),
    from_f64 |z| bf16::from_bits(f64_to_bf16_bits(z)),
    // Exact, and a shift, so that it vectorises.
    widen |w| crate::convert::bf16_to_f32(w),
    scalar v => bf16::from_bits(v));
element!(f16, F16, acc f32,
    to_scalar |x| Scalar::F16(x.to_bits()),
    from_bits |b| f16::from_bits(b as u16),
    to_f64 |y| f16_bits_to_f64(y.to_bits()),
    from_f64 |z| f16::from_bits(f64_to_f16_bits(z)),
    // Exact: every f16 is an f32 value.
    widen |w| w.to_f32(),
    scalar v => f16::from_bits(v));
element!(f32, F32, acc f32,
    to_scalar |x| Scalar::F32(x),
    from_bits |b| f32::from_bits(b as u32),
    to_f64 |y| f64::from(y),
    // `as` rounds to nearest, ties to even, overflowing to ±inf: the single
    // rounding of `convert::narrow`, which only differs in the payload it
    // gives a NaN (and any NaN is a NaN result).
    from_f64 |z| z as f32,
    widen |w| w,
    scalar v => v);
element!(f64, F64, acc f64,
    to_scalar |x| Scalar::F64(x),
    from_bits |b| f64::from_bits(b),
    to_f64 |y| y,
    from_f64 |z| z,
    widen |w| w,
    scalar v => v);

impl Accumulate for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
    #[inline(always)]
    fn add(self, o: f32) -> f32 {
        self + o
    }
    #[inline(always)]
    fn mul(self, o: f32) -> f32 {
        self * o
    }
    #[inline(always)]
    fn mul_add(self, a: f32, b: f32) -> f32 {
        // Correctly rounded everywhere: an FMA instruction where the target
        // has one, libm's exact software fma otherwise.
        a.mul_add(b, self)
    }
}

impl Accumulate for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    #[inline(always)]
    fn add(self, o: f64) -> f64 {
        self + o
    }
    #[inline(always)]
    fn mul(self, o: f64) -> f64 {
        self * o
    }
    #[inline(always)]
    fn mul_add(self, a: f64, b: f64) -> f64 {
        // Two roundings on purpose (spec §5.4): Rust never contracts this
        // into an FMA.
        self + a * b
    }
}

impl Accumulate for i32 {
    const ZERO: i32 = 0;
    const ONE: i32 = 1;
    #[inline(always)]
    fn add(self, o: i32) -> i32 {
        self.wrapping_add(o)
    }
    #[inline(always)]
    fn mul(self, o: i32) -> i32 {
        self.wrapping_mul(o)
    }
    #[inline(always)]
    fn mul_add(self, a: i32, b: i32) -> i32 {
        self.wrapping_add(a.wrapping_mul(b))
    }
}

/// A tensor's elements, packed at their dtype's width.
#[derive(Clone, Debug, PartialEq)]
pub enum Storage {
    Bool(Vec<bool>),
    I8(Vec<i8>),
    I32(Vec<i32>),
    Bf16(Vec<bf16>),
    F16(Vec<f16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// The one dtype dispatch of the crate: a `match` over the seven element
/// types, with the body written once and compiled for each.
///
/// * `dispatch!(dtype, T => body)` runs `body` with the type `T` naming the
///   element type of `dtype` (a `DType`); `<T as Element>::Acc` is then its
///   accumulation type.
/// * `dispatch!(in storage, v => body)` runs `body` with `v` bound to the
///   storage's `Vec` (as whatever `storage` yields: `&Vec<T>`, `&mut
///   Vec<T>`, `Vec<T>`).
#[macro_export]
macro_rules! dispatch {
    (in $s:expr, $v:ident => $body:expr) => {
        match $s {
            $crate::storage::Storage::Bool($v) => $body,
            $crate::storage::Storage::I8($v) => $body,
            $crate::storage::Storage::I32($v) => $body,
            $crate::storage::Storage::Bf16($v) => $body,
            $crate::storage::Storage::F16($v) => $body,
            $crate::storage::Storage::F32($v) => $body,
            $crate::storage::Storage::F64($v) => $body,
        }
    };
    ($dt:expr, $T:ident => $body:expr) => {
        match $dt {
            $crate::dtype::DType::Bool => {
                type $T = bool;
                $body
            }
            $crate::dtype::DType::I8 => {
                type $T = i8;
                $body
            }
            $crate::dtype::DType::I32 => {
                type $T = i32;
                $body
            }
            $crate::dtype::DType::Bf16 => {
                type $T = $crate::storage::bf16;
                $body
            }
            $crate::dtype::DType::F16 => {
                type $T = $crate::storage::f16;
                $body
            }
            $crate::dtype::DType::F32 => {
                type $T = f32;
                $body
            }
            $crate::dtype::DType::F64 => {
                type $T = f64;
                $body
            }
        }
    };
}

/// Buffers at least this large ask the kernel for transparent huge pages:
/// a fresh buffer is otherwise faulted in 4 KiB at a time, which costs more
/// than the work of a fast kernel that fills it (NumPy does the same).
#[cfg(target_os = "linux")]
const HUGE_PAGE_THRESHOLD: usize = 4 << 20;

/// Asks Linux to back the whole pages of a buffer with huge pages. Only a
/// hint: elsewhere there is no portable equivalent, and the buffer works
/// the same without it.
#[cfg(target_os = "linux")]
fn advise_huge_pages(ptr: *mut u8, bytes: usize) {
    if bytes < HUGE_PAGE_THRESHOLD {
        return;
    }
    // Only whole pages inside the buffer are advised.
    let page = 4096usize;
    let start = (ptr as usize).div_ceil(page) * page;
    let end = (ptr as usize + bytes) / page * page;
    if end > start {
        // SAFETY: the range lies inside a live allocation owned by the
        // caller; MADV_HUGEPAGE changes only how the kernel backs it, never
        // its contents, and a failure (e.g. no THP support) is harmless.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_ptr: *mut u8, _bytes: usize) {}

/// An empty vector with room for `n` values, backed by huge pages when
/// large; kernels fill it with `extend`/`push`. This (with [`try_collect`],
/// [`try_filled`] and `try_zeroed`) is how every buffer whose size depends
/// on the input is made, so that running out of memory, or a size past the
/// address space, is an error at the operation and never an abort.
pub fn try_vec<T>(n: usize) -> Result<Vec<T>, AllocError> {
    let mut v: Vec<T> = Vec::new();
    v.try_reserve_exact(n).map_err(|_| AllocError::of::<T>(n))?;
    advise_huge_pages(v.as_mut_ptr() as *mut u8, n * std::mem::size_of::<T>());
    Ok(v)
}

/// The first `n` items of `items` (all of them, if fewer) in a vector
/// allocated up front by [`try_vec`].
pub fn try_collect<T>(n: usize, items: impl IntoIterator<Item = T>) -> Result<Vec<T>, AllocError> {
    let mut v = try_vec(n)?;
    v.extend(items.into_iter().take(n));
    Ok(v)
}

/// `n` copies of `x` (`vec![x; n]`, fallibly).
pub fn try_filled<T: Clone>(n: usize, x: T) -> Result<Vec<T>, AllocError> {
    let mut v = try_vec(n)?;
    v.resize(n, x);
    Ok(v)
}

/// A zero-filled vector obtained from the allocator's zeroed memory, so a
/// large tensor of zeros costs address space, not resident memory, until it
/// is written; and a failed allocation is an error, not an abort.
pub(crate) fn try_zeroed<T: Element>(n: usize) -> Result<Vec<T>, AllocError> {
    let err = || AllocError::of::<T>(n);
    if n == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<T>(n).map_err(|_| err())?;
    // SAFETY: `layout` has non-zero size (n > 0 and no element type is
    // zero-sized). All seven element types are valid when every bit is zero
    // (false, 0, +0.0), so the zeroed block holds `n` initialised elements,
    // and it was allocated by the global allocator with `T`'s layout, which
    // is what `Vec::from_raw_parts` requires.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout) as *mut T;
        if ptr.is_null() {
            return Err(err());
        }
        advise_huge_pages(ptr as *mut u8, layout.size());
        Ok(Vec::from_raw_parts(ptr, n, n))
    }
}

/// A raw pointer to a buffer that the tasks of a parallel loop write at
/// disjoint positions (the GEMM's C tiles, a radix pass's bucket slots).
/// Whoever makes one owes the proof that the positions are disjoint and
/// that the buffer outlives the loop.
#[derive(Clone, Copy)]
pub(crate) struct SharedMut<T>(pub(crate) *mut T);
// SAFETY: sending or sharing the pointer is harmless in itself; each
// write through it is an `unsafe` block of its user, whose disjointness
// argument makes the writes race-free.
unsafe impl<T: Send> Send for SharedMut<T> {}
unsafe impl<T: Send> Sync for SharedMut<T> {}

impl<T> SharedMut<T> {
    /// Through a method, so closures capture the whole (Sync) wrapper
    /// rather than its raw-pointer field.
    pub(crate) fn ptr(self) -> *mut T {
        self.0
    }
}

/// `n` copies of `x`, zero bits straight from the allocator.
fn fill<T: Element>(n: usize, x: T) -> Result<Storage, AllocError> {
    let mut v: Vec<T> = try_zeroed(n)?;
    if x.to_scalar().to_bits() != 0 {
        v.fill(x);
    }
    Ok(T::into_storage(v))
}

impl Storage {
    pub fn dtype(&self) -> DType {
        match self {
            Storage::Bool(_) => DType::Bool,
            Storage::I8(_) => DType::I8,
            Storage::I32(_) => DType::I32,
            Storage::Bf16(_) => DType::Bf16,
            Storage::F16(_) => DType::F16,
            Storage::F32(_) => DType::F32,
            Storage::F64(_) => DType::F64,
        }
    }

    pub fn len(&self) -> usize {
        crate::dispatch!(in self, v => v.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `n` zeros of `dtype`.
    pub fn zeros(dtype: DType, n: usize) -> Result<Storage, AllocError> {
        crate::dispatch!(dtype, T => Ok(T::into_storage(try_zeroed::<T>(n)?)))
    }

    /// `n` copies of `s`, in `s`'s own dtype.
    pub fn filled(n: usize, s: Scalar) -> Result<Storage, AllocError> {
        match s {
            Scalar::Bool(x) => fill(n, x),
            Scalar::I8(x) => fill(n, x),
            Scalar::I32(x) => fill(n, x),
            Scalar::Bf16(bits) => fill(n, bf16::from_bits(bits)),
            Scalar::F16(bits) => fill(n, f16::from_bits(bits)),
            Scalar::F32(x) => fill(n, x),
            Scalar::F64(x) => fill(n, x),
        }
    }

    /// The element at a flat index, as a scalar.
    pub fn get(&self, i: usize) -> Option<Scalar> {
        crate::dispatch!(in self, v => v.get(i).map(|x| x.to_scalar()))
    }

    /// Storage of `dtype` built from scalars, which must already be of
    /// `dtype` (cast them first); one of another dtype is an error.
    pub fn from_scalars(dtype: DType, items: &[Scalar]) -> Result<Storage, TensorError> {
        crate::dispatch!(dtype, T => {
            let mut out: Vec<T> = try_vec(items.len())?;
            for &s in items {
                out.push(T::from_scalar(s).ok_or_else(|| {
                    TensorError(format!(
                        "internal error: a {} element cannot be stored in a {dtype} tensor",
                        s.dtype()
                    ))
                })?);
            }
            Ok(T::into_storage(out))
        })
    }

    /// Storage holding the one element `s`, in its own dtype.
    pub fn of_scalar(s: Scalar) -> Storage {
        match s {
            Scalar::Bool(x) => Storage::Bool(vec![x]),
            Scalar::I8(x) => Storage::I8(vec![x]),
            Scalar::I32(x) => Storage::I32(vec![x]),
            Scalar::Bf16(bits) => Storage::Bf16(vec![bf16::from_bits(bits)]),
            Scalar::F16(bits) => Storage::F16(vec![f16::from_bits(bits)]),
            Scalar::F32(x) => Storage::F32(vec![x]),
            Scalar::F64(x) => Storage::F64(vec![x]),
        }
    }

    /// Bytes the elements occupy.
    pub fn nbytes(&self) -> usize {
        self.len() * self.dtype().size_in_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::promote::accumulation_dtype;

    /// `Element::Acc` — what every kernel accumulates in — is the dtype
    /// rule `accumulation_dtype` that the checker and the docs state.
    #[test]
    fn accumulation_type_agrees_with_the_dtype_rule() {
        fn acc_dtype<T: Element>() -> DType {
            <T::Acc as Element>::DTYPE
        }
        for d in DType::ALL {
            let acc = crate::dispatch!(d, T => acc_dtype::<T>());
            assert_eq!(acc, accumulation_dtype(d), "{d}");
            // Each accumulation type accumulates in itself.
            assert_eq!(accumulation_dtype(acc), acc, "{d}");
        }
    }

    #[test]
    fn scalars_of_another_dtype_are_refused() {
        assert!(Storage::from_scalars(DType::F32, &[Scalar::F64(1.0)]).is_err());
        assert_eq!(
            Storage::from_scalars(DType::I8, &[Scalar::I8(-3)]),
            Ok(Storage::I8(vec![-3]))
        );
        assert_eq!(bool::from_scalar(Scalar::I8(1)), None);
    }

    #[test]
    fn bits_round_trip_through_every_element_type() {
        for d in DType::ALL {
            let s = Scalar::from_bits(d, 0x3c01);
            let back = crate::dispatch!(d, T => T::from_raw_bits(s.to_bits()).to_scalar());
            assert_eq!(back.to_bits(), s.to_bits(), "{d}");
        }
    }
}
