//! Packed element storage: one `Vec` of the dtype's own width per tensor
//! (bool and i8 one byte, bf16 and f16 two, i32 and f32 four, f64 eight),
//! and the `Element` trait that lets a kernel be written once over all seven
//! element types and dispatched by one `match` per arity.
//!
//! The buffer invariant of seed 000 — every element is a value representable
//! in the tensor's dtype — holds by construction: the storage *is* the
//! dtype's encoding, and every way into it (`Element::from_scalar`, the
//! casts of `convert`) rounds once to that encoding.

use half::{bf16, f16};

use crate::convert::Scalar;
use crate::dtype::DType;

/// One element type of packed storage.
pub trait Element: Copy + PartialEq + Send + Sync + 'static {
    const DTYPE: DType;
    /// The element as the dtype-tagged scalar the casts work on.
    fn to_scalar(self) -> Scalar;
    /// The element of this type holding `s`; `s` must already be of this
    /// dtype (callers cast first), otherwise the zero element is returned.
    fn from_scalar(s: Scalar) -> Self;
    /// The exact value as an f64 (every dtype's values are f64 values).
    fn to_f64(self) -> f64;
    fn slice(s: &Storage) -> Option<&[Self]>;
    fn into_storage(v: Vec<Self>) -> Storage;
}

macro_rules! element {
    ($t:ty, $dt:ident, $var:ident, |$x:ident| $to_scalar:expr, |$s:ident| $from:expr, |$y:ident| $to_f64:expr) => {
        impl Element for $t {
            const DTYPE: DType = DType::$dt;
            fn to_scalar(self) -> Scalar {
                let $x = self;
                $to_scalar
            }
            fn from_scalar(s: Scalar) -> Self {
                match s {
                    Scalar::$var($s) => $from,
                    _ => Self::from_scalar_zero(),
                }
            }
            fn to_f64(self) -> f64 {
                let $y = self;
                $to_f64
            }
            fn slice(s: &Storage) -> Option<&[Self]> {
                match s {
                    Storage::$var(v) => Some(v),
                    _ => None,
                }
            }
            fn into_storage(v: Vec<Self>) -> Storage {
                Storage::$var(v)
            }
        }
    };
}

/// The zero of each element type (all-zero bits), used as a safe fallback.
trait ZeroElement {
    fn from_scalar_zero() -> Self;
}
macro_rules! zero {
    ($($t:ty => $z:expr),*) => { $(impl ZeroElement for $t { fn from_scalar_zero() -> Self { $z } })* };
}
zero!(bool => false, i8 => 0, i32 => 0, bf16 => bf16::from_bits(0), f16 => f16::from_bits(0), f32 => 0.0, f64 => 0.0);

element!(bool, Bool, Bool, |x| Scalar::Bool(x), |b| b, |y| if y {
    1.0
} else {
    0.0
});
element!(i8, I8, I8, |x| Scalar::I8(x), |i| i, |y| f64::from(y));
element!(i32, I32, I32, |x| Scalar::I32(x), |i| i, |y| f64::from(y));
element!(
    bf16,
    Bf16,
    Bf16,
    |x| Scalar::Bf16(x.to_bits()),
    |b| bf16::from_bits(b),
    |y| crate::convert::bf16_bits_to_f64(y.to_bits())
);
element!(
    f16,
    F16,
    F16,
    |x| Scalar::F16(x.to_bits()),
    |b| f16::from_bits(b),
    |y| crate::convert::f16_bits_to_f64(y.to_bits())
);
element!(f32, F32, F32, |x| Scalar::F32(x), |v| v, |y| f64::from(y));
element!(f64, F64, F64, |x| Scalar::F64(x), |v| v, |y| y);

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

/// Runs `$body` with `$v` bound to the storage's `Vec` (as `&Vec<T>` or
/// whatever `$s` yields), for each of the seven element types: the one
/// place a kernel's dtype dispatch is written.
#[macro_export]
macro_rules! with_storage {
    ($s:expr, $v:ident => $body:expr) => {
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
}

/// Why storage could not be made.
#[derive(Clone, Debug, PartialEq)]
pub struct AllocError {
    pub elements: usize,
    pub dtype: DType,
}

/// Buffers at least this large ask the kernel for transparent huge pages:
/// a fresh buffer is otherwise faulted in 4 KiB at a time, which costs more
/// than the work of a fast kernel that fills it (NumPy does the same).
const HUGE_PAGE_THRESHOLD: usize = 4 << 20;

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

/// An empty vector with room for `n` elements, backed by huge pages when
/// large. Kernels fill it with `extend`/`push`.
pub fn vec_with_capacity<T>(n: usize) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    advise_huge_pages(v.as_mut_ptr() as *mut u8, n * std::mem::size_of::<T>());
    v
}

/// A zero-filled vector obtained from the allocator's zeroed memory, so a
/// large tensor of zeros costs address space, not resident memory, until it
/// is written; and a failed allocation is an error, not an abort.
fn try_zeroed<T: Element>(n: usize) -> Result<Vec<T>, AllocError> {
    let err = || AllocError {
        elements: n,
        dtype: T::DTYPE,
    };
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
        with_storage!(self, v => v.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `n` zeros of `dtype`.
    pub fn zeros(dtype: DType, n: usize) -> Result<Storage, AllocError> {
        Ok(match dtype {
            DType::Bool => Storage::Bool(try_zeroed(n)?),
            DType::I8 => Storage::I8(try_zeroed(n)?),
            DType::I32 => Storage::I32(try_zeroed(n)?),
            DType::Bf16 => Storage::Bf16(try_zeroed(n)?),
            DType::F16 => Storage::F16(try_zeroed(n)?),
            DType::F32 => Storage::F32(try_zeroed(n)?),
            DType::F64 => Storage::F64(try_zeroed(n)?),
        })
    }

    /// `n` copies of `s`, which must already be of `dtype`.
    pub fn filled(dtype: DType, n: usize, s: Scalar) -> Result<Storage, AllocError> {
        fn fill<T: Element>(n: usize, s: Scalar) -> Result<Storage, AllocError> {
            let x = T::from_scalar(s);
            let mut v: Vec<T> = try_zeroed(n)?;
            if x.to_scalar().to_bits() != 0 {
                v.fill(x);
            }
            Ok(T::into_storage(v))
        }
        match dtype {
            DType::Bool => fill::<bool>(n, s),
            DType::I8 => fill::<i8>(n, s),
            DType::I32 => fill::<i32>(n, s),
            DType::Bf16 => fill::<bf16>(n, s),
            DType::F16 => fill::<f16>(n, s),
            DType::F32 => fill::<f32>(n, s),
            DType::F64 => fill::<f64>(n, s),
        }
    }

    /// The element at a flat index, as a scalar.
    pub fn get(&self, i: usize) -> Option<Scalar> {
        with_storage!(self, v => v.get(i).map(|x| x.to_scalar()))
    }

    /// Storage built from scalars that are already of `dtype`.
    pub fn from_scalars(dtype: DType, items: &[Scalar]) -> Storage {
        fn build<T: Element>(items: &[Scalar]) -> Storage {
            T::into_storage(items.iter().map(|s| T::from_scalar(*s)).collect())
        }
        match dtype {
            DType::Bool => build::<bool>(items),
            DType::I8 => build::<i8>(items),
            DType::I32 => build::<i32>(items),
            DType::Bf16 => build::<bf16>(items),
            DType::F16 => build::<f16>(items),
            DType::F32 => build::<f32>(items),
            DType::F64 => build::<f64>(items),
        }
    }

    /// Bytes the elements occupy.
    pub fn nbytes(&self) -> usize {
        self.len() * self.dtype().size_in_bytes()
    }
}
