//! Elementwise functions of a narrow dtype by lookup table. A bf16 or f16
//! tensor has at most 65,536 distinct elements, an i8 tensor 256 and a
//! bool tensor 2, and every unary function is a function of the element
//! alone (`elementwise`'s contract); so for a large tensor the function is
//! applied once to every possible element — by the very kernel that would
//! otherwise run, which the caller passes in (`elementwise::unary` passes
//! `unary_direct`, and decides which functions are worth a table) — and
//! the result's elements are then read from that table. The bits are the kernel's by construction, on any ISA
//! and thread count: the table *is* the kernel's output, NaN payloads
//! included. What it saves is the work per element: the transcendentals
//! of spec §5.6 are libm's f64 functions, 10–30 ns an element, where a
//! table read is a fraction of a nanosecond.
//!
//! Tables are built on first use and kept per thread (a `Tensor` holds an
//! `Rc`), at most one per function and input dtype: 128 KiB for a 16-bit
//! input and a 16-bit result. A tensor smaller than its dtype's table
//! takes the kernel directly unless the table is already there, so a small
//! call never pays for building one.

use std::cell::RefCell;
use std::mem::MaybeUninit;

use half::{bf16, f16};

use rayon::prelude::*;

use crate::dtype::DType;
use crate::storage::{try_vec, Element};
use crate::tensor::{Tensor, TensorError};

/// An input element type with a table: every value it can hold, in the
/// order of [`Key::index`].
trait Key: Element {
    /// How many distinct elements there are (the table's length).
    const DOMAIN: usize;
    /// Every element, the one with index `i` at `i`.
    fn domain() -> Vec<Self>;
    /// The element's position in the table, below `DOMAIN`.
    fn index(self) -> usize;
}

impl Key for bf16 {
    const DOMAIN: usize = 1 << 16;
    fn domain() -> Vec<Self> {
        (0..=u16::MAX).map(bf16::from_bits).collect()
    }
    #[inline(always)]
    fn index(self) -> usize {
        usize::from(self.to_bits())
    }
}

impl Key for f16 {
    const DOMAIN: usize = 1 << 16;
    fn domain() -> Vec<Self> {
        (0..=u16::MAX).map(f16::from_bits).collect()
    }
    #[inline(always)]
    fn index(self) -> usize {
        usize::from(self.to_bits())
    }
}

impl Key for i8 {
    const DOMAIN: usize = 1 << 8;
    fn domain() -> Vec<Self> {
        (0..=u8::MAX).map(|b| b as i8).collect()
    }
    #[inline(always)]
    fn index(self) -> usize {
        usize::from(self as u8)
    }
}

impl Key for bool {
    const DOMAIN: usize = 2;
    fn domain() -> Vec<Self> {
        vec![false, true]
    }
    #[inline(always)]
    fn index(self) -> usize {
        usize::from(self)
    }
}

thread_local! {
    /// The tables built so far on this thread: the function's id, the
    /// input dtype, and the function's result on every input element.
    static TABLES: RefCell<Vec<(u32, DType, Tensor)>> = const { RefCell::new(Vec::new()) };
}

/// `f(x)` read from a table, where `id` names the function `f` among
/// those that use tables; or `None` where `f` should run directly (an
/// input dtype without a table, a tensor too small to pay for building
/// one, or a table that could not be built). `f` must be elementwise: each
/// element of its result a function of the same element of `x` alone.
pub(super) fn apply(
    id: u32,
    x: &Tensor,
    f: impl FnOnce(&Tensor) -> Result<Tensor, TensorError>,
) -> Result<Option<Tensor>, TensorError> {
    match x.dtype() {
        DType::Bf16 => with_table::<bf16>(id, x, f),
        DType::F16 => with_table::<f16>(id, x, f),
        DType::I8 => with_table::<i8>(id, x, f),
        DType::Bool => with_table::<bool>(id, x, f),
        DType::I32 | DType::F32 | DType::F64 => Ok(None),
    }
}

fn with_table<K: Key>(
    id: u32,
    x: &Tensor,
    f: impl FnOnce(&Tensor) -> Result<Tensor, TensorError>,
) -> Result<Option<Tensor>, TensorError> {
    let cached = TABLES.with(|t| {
        t.borrow()
            .iter()
            .find(|(v, d, _)| *v == id && *d == K::DTYPE)
            .map(|(_, _, table)| table.clone())
    });
    let table = match cached {
        Some(table) => table,
        // Building costs about what the kernel costs on `DOMAIN` elements.
        None if x.numel() < K::DOMAIN => return Ok(None),
        None => {
            let domain = Tensor::from_vec(K::domain(), vec![K::DOMAIN])?;
            let table = f(&domain)?.contiguous()?;
            if table.numel() != K::DOMAIN {
                return Ok(None);
            }
            TABLES.with(|t| t.borrow_mut().push((id, K::DTYPE, table.clone())));
            table
        }
    };
    match table.dtype() {
        DType::Bool => gather::<K, bool>(x, &table),
        DType::I8 => gather::<K, i8>(x, &table),
        DType::I32 => gather::<K, i32>(x, &table),
        DType::Bf16 => gather::<K, bf16>(x, &table),
        DType::F16 => gather::<K, f16>(x, &table),
        DType::F32 => gather::<K, f32>(x, &table),
        DType::F64 => gather::<K, f64>(x, &table),
    }
    .map(Some)
}

/// The elements of `t`, of type `T`.
fn typed<T: Element>(t: &Tensor) -> Result<&[T], TensorError> {
    T::slice(t.storage()).ok_or_else(|| {
        TensorError(format!(
            "internal error: a {} table read as {}",
            t.dtype(),
            T::DTYPE
        ))
    })
}

/// Elements a thread reads at a time.
const CHUNK: usize = 1 << 14;

/// Each element of `x` replaced by its entry in `table` (`DOMAIN` long),
/// in parallel chunks (each output element depends on its input alone).
fn gather<K: Key, O: Element>(x: &Tensor, table: &Tensor) -> Result<Tensor, TensorError> {
    let table = typed::<O>(table)?;
    let Some(table) = table.get(..K::DOMAIN) else {
        return Err(TensorError(
            "internal error: a lookup table of the wrong length".into(),
        ));
    };
    let x = x.contiguous()?;
    let xs = typed::<K>(&x)?;
    let n = xs.len();
    let mut out: Vec<O> = try_vec(n).map_err(|e| e.for_tensor(O::DTYPE, x.shape()))?;
    let fill = |o: &mut [MaybeUninit<O>], k: &[K]| {
        for (o, &k) in o.iter_mut().zip(k) {
            // `index` is below `DOMAIN`, the table's length.
            o.write(table[k.index()]);
        }
    };
    {
        let spare = &mut out.spare_capacity_mut()[..n];
        if n > CHUNK {
            spare
                .par_chunks_mut(CHUNK)
                .zip(xs.par_chunks(CHUNK))
                .for_each(|(o, k)| fill(o, k));
        } else {
            fill(spare, xs);
        }
    }
    // SAFETY: the capacity is at least `n`, and `fill` wrote each of the
    // first `n` elements (the chunks of `spare` and of `xs` pair up one to
    // one, both `n` long); a panic inside it unwinds before this line.
    unsafe { out.set_len(n) };
    Tensor::from_vec(out, x.shape().to_vec())
}
#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    fn table_count() -> usize {
        TABLES.with(|t| t.borrow().len())
    }

    /// A function of the element alone, that counts the elements it sees.
    fn counted(seen: &std::cell::Cell<usize>) -> impl FnOnce(&Tensor) -> Result<Tensor, TensorError> + '_ {
        move |t: &Tensor| {
            seen.set(seen.get() + t.numel());
            t.cast(DType::F64)
        }
    }

    #[test]
    fn a_large_tensor_builds_a_table_once_and_reads_it() {
        let n = 3 * 65_536 + 5;
        let v: Vec<f16> = (0..n).map(|i| f16::from_bits((i * 40_503 + 17) as u16)).collect();
        let x = Tensor::from_vec(v, vec![n]).unwrap();
        let seen = std::cell::Cell::new(0);
        let before = table_count();
        let y = apply(7, &x, counted(&seen)).unwrap().expect("a table");
        // The function ran on the 65,536 elements of the domain, not on x.
        assert_eq!(seen.get(), 65_536);
        assert_eq!(table_count(), before + 1);
        let want = x.cast(DType::F64).unwrap();
        let (Some(w), Some(g)) = (f64::slice(want.storage()), f64::slice(y.storage())) else {
            panic!("f64 results")
        };
        assert!(w.iter().zip(g).all(|(a, b)| a.to_bits() == b.to_bits()));
        // A second call, even on a small tensor, reads the same table.
        let small = Tensor::from_vec(vec![f16::from_f32(1.5); 3], vec![3]).unwrap();
        let y = apply(7, &small, counted(&seen)).unwrap().expect("the table");
        assert_eq!(seen.get(), 65_536);
        assert_eq!(f64::slice(y.storage()), Some(&[1.5, 1.5, 1.5][..]));
    }

    #[test]
    fn a_small_tensor_builds_no_table_and_wide_dtypes_none_at_all() {
        let seen = std::cell::Cell::new(0);
        let x = Tensor::from_vec(vec![bf16::from_f32(0.5); 100], vec![100]).unwrap();
        assert!(apply(8, &x, counted(&seen)).unwrap().is_none());
        let x = Tensor::from_vec(vec![0.5f32; 100_000], vec![100_000]).unwrap();
        assert!(apply(8, &x, counted(&seen)).unwrap().is_none());
        assert_eq!(seen.get(), 0);
        assert_eq!(table_count(), 0);
    }

    #[test]
    fn the_domains_are_every_value_in_index_order() {
        fn check<K: Key>() {
            let d = K::domain();
            assert_eq!(d.len(), K::DOMAIN);
            assert!(d.iter().enumerate().all(|(i, k)| k.index() == i), "{}", K::DTYPE);
        }
        check::<bf16>();
        check::<f16>();
        check::<i8>();
        check::<bool>();
    }
}
