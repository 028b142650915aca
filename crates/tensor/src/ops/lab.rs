//! The tensor side of the formats lab (spec §13): `round_to` (the
//! STORAGE_ONLY model: every element rounded once to a format), the
//! EVERY_STEP `matmul(a, b, acc=fmt)`, and the elementwise pieces of a
//! Format's methods (`encode`, `decode`, `underflows`, `overflows`). The
//! EVERY_STEP `sum` and `cumsum` live with the other reductions
//! (`reduce`), whose accumulation order they share. Every rounding is
//! `lab::Format`'s, the same routine the dtypes' casts use.

use rayon::prelude::*;

use super::args::{Args, Out};
use crate::convert::f64_to_f32;
use crate::dtype::DType;
use crate::lab::{Format, Rounder, Special};
use crate::storage::{try_collect, try_vec, Element};
use crate::tensor::{shape_str, Tensor, TensorError};

fn err<T>(msg: String) -> Result<T, TensorError> {
    Err(TensorError(msg))
}

/// Below this many elements an elementwise pass runs on one thread.
const PAR_MIN: usize = 1 << 15;

/// The dtype a lab operation on `x` computes and answers in: f64, or f32
/// when every value of `fmt` is an f32 (spec §13); else an error saying
/// what to do.
pub(crate) fn lab_dtype(op: &str, dtype: DType, fmt: Format) -> Result<DType, TensorError> {
    match dtype {
        DType::F64 if fmt.fits_f64() => Ok(DType::F64),
        DType::F64 => err(format!(
            "`{op}`: this format has values that are not f64 values (bias {}, {} mantissa bits), \
             so a tensor cannot hold them; encode and decode work for any format",
            fmt.bias(),
            fmt.man_bits()
        )),
        DType::F32 if fmt.fits_f32() => Ok(DType::F32),
        DType::F32 => err(format!(
            "`{op}`: this format's values are not all f32 values; use an f64 tensor: x.to(f64)"
        )),
        DType::Bool | DType::I8 | DType::I32 | DType::Bf16 | DType::F16 => err(format!(
            "`{op}` takes an f64 tensor, or an f32 one when the format fits in f32, not {dtype}; use x.to(f64)"
        )),
    }
}

/// What an EVERY_STEP `sum`/`cumsum` of `x` works on: the dtype it answers
/// in, and `x` widened (exactly) to a row-major f64 tensor whose values
/// `fmt` can encode.
pub(crate) fn every_step_input(
    a: &Args,
    op: &str,
    x: &Tensor,
    fmt: Format,
) -> Result<(DType, Tensor), TensorError> {
    let dt = a.about("x", lab_dtype(op, x.dtype(), fmt))?;
    let wide = x.cast(DType::F64)?.contiguous()?;
    check_encodable(op, f64::slice(wide.storage()).unwrap_or(&[]), fmt)?;
    Ok((dt, wide))
}

/// An error for the first NaN or infinity of `v` when `fmt` cannot encode
/// them (special="none").
pub(crate) fn check_encodable<T: Copy + Into<f64>>(
    op: &str,
    v: &[T],
    fmt: Format,
) -> Result<(), TensorError> {
    if fmt.special() != Special::None {
        return Ok(());
    }
    match v.iter().map(|&x| x.into()).find(|x: &f64| !x.is_finite()) {
        Some(x) => err(format!(
            "`{op}`: {} has no encoding in a format with special=\"none\" (every pattern is finite)",
            crate::lab::non_finite_name(x)
        )),
        None => Ok(()),
    }
}

/// `f` applied to every element, in parallel for large inputs (the
/// elements are independent, so the split cannot change a bit).
/// The output is allocated up front: a size that does not fit is an
/// error, never an abort.
fn map_elems<T: Copy + Send + Sync, O: Send>(
    v: &[T],
    f: impl Fn(T) -> O + Sync + Send,
) -> Result<Vec<O>, TensorError> {
    map_range(v.len(), |i| f(v[i]))
}

/// `f(0), f(1), …, f(n - 1)`, in parallel for large `n`, into storage
/// allocated up front.
fn map_range<O: Send>(n: usize, f: impl Fn(usize) -> O + Sync + Send) -> Result<Vec<O>, TensorError> {
    let mut out = try_vec(n)?;
    if n < PAR_MIN {
        out.extend((0..n).map(f));
    } else {
        out.par_extend((0..n).into_par_iter().with_min_len(PAR_MIN / 4).map(f));
    }
    Ok(out)
}

/// `x.round_to(fmt)`: every element rounded once to `fmt`, in x's dtype.
pub(super) fn round_to(a: &Args) -> Result<Out, TensorError> {
    let x = a.tensor("x")?;
    let Some(fmt) = a.format("fmt")? else {
        return err("`round_to` needs its `fmt` argument, a Format".into());
    };
    let dt = a.about("x", lab_dtype("round_to", x.dtype(), fmt))?;
    let x = x.contiguous()?;
    let shape = x.shape().to_vec();
    let t = if dt == DType::F32 {
        {
            let v = f32::slice(x.storage()).unwrap_or(&[]);
            check_encodable("round_to", v, fmt)?;
            // Every value of `fmt` is an f32, so the f64 result narrows
            // exactly (a NaN by the casts' payload rule).
            let r = Rounder::new(fmt);
            let out = map_elems(v, |e| r.round_f32(e))?;
            Tensor::from_vec(out, shape)?
        }
    } else {
        let v = f64::slice(x.storage()).unwrap_or(&[]);
        check_encodable("round_to", v, fmt)?;
        let r = Rounder::new(fmt);
        let out = map_elems(v, |e| r.round(e))?;
        Tensor::from_vec(out, shape)?
    };
    Ok(Out::Tensor(t))
}

/// The elements of `x` as f64 (exact), row-major.
fn values(x: &Tensor) -> Result<Vec<f64>, TensorError> {
    x.to_f64_vec()
}

/// `fmt.encode(x)`: the bit patterns, as i32 (a 32-bit pattern's top bit
/// is the i32's sign).
pub fn encode(fmt: Format, x: &Tensor) -> Result<Tensor, TensorError> {
    if fmt.bits() > 32 {
        return err(format!(
            "`encode` gives i32 patterns, so it takes a format of at most 32 bits, not {}",
            fmt.bits()
        ));
    }
    let v = values(x)?;
    check_encodable("encode", &v, fmt)?;
    let out: Vec<i32> = map_elems(&v, |e| fmt.encode(e).unwrap_or(0) as u32 as i32)?;
    Tensor::from_vec(out, x.shape().to_vec())
}

/// `fmt.decode(t)`: the values of the patterns in an integer tensor (the
/// low `bits` bits of each), exact in f64 when the format fits in f64.
pub fn decode(fmt: Format, t: &Tensor) -> Result<Tensor, TensorError> {
    if !matches!(t.dtype(), DType::I32 | DType::I8) {
        return err(format!(
            "`decode` takes an integer tensor of bit patterns (i32), not {}",
            t.dtype()
        ));
    }
    let v = values(t)?;
    // An i32 pattern's sign bit is bit 31 of the pattern.
    let out: Vec<f64> = map_elems(&v, |e| fmt.decode(e as i64 as u32 as u64))?;
    Tensor::from_vec(out, t.shape().to_vec())
}

/// `fmt.underflows(x)`: the non-zero elements that round to zero.
pub fn underflows(fmt: Format, x: &Tensor) -> Result<usize, TensorError> {
    Ok(values(x)?.iter().filter(|&&e| fmt.underflows(e)).count())
}

/// `fmt.overflows(x)`: the finite elements beyond the largest finite
/// value after rounding.
pub fn overflows(fmt: Format, x: &Tensor) -> Result<usize, TensorError> {
    Ok(values(x)?.iter().filter(|&&e| fmt.overflows(e)).count())
}

/// `matmul(a, b, acc=fmt)`, the EVERY_STEP model: the inputs rounded to
/// `fmt`, then each output element accumulates its products in ascending
/// order of the contracted index from +0 (spec §5.4), every product and
/// every addition rounded to `fmt`. Operands of rank 1 or 2.
pub(crate) fn matmul_every_step(a: &Tensor, b: &Tensor, fmt: Format) -> Result<Tensor, TensorError> {
    let dt = crate::promote::promote(a.dtype(), b.dtype());
    let dt = lab_dtype("matmul", dt, fmt)?;
    if a.ndim() == 0 || b.ndim() == 0 || a.ndim() > 2 || b.ndim() > 2 {
        return err(format!(
            "`matmul` with acc= takes operands of rank 1 or 2, not shapes {} and {}",
            shape_str(a.shape()),
            shape_str(b.shape())
        ));
    }
    let (m, k) = if a.ndim() == 2 {
        (a.shape()[0], a.shape()[1])
    } else {
        (1, a.shape()[0])
    };
    let (k2, n) = if b.ndim() == 2 {
        (b.shape()[0], b.shape()[1])
    } else {
        (b.shape()[0], 1)
    };
    if k != k2 {
        return err(format!(
            "`matmul`: shapes {} and {} do not match (the contracted sizes are {k} and {k2})",
            shape_str(a.shape()),
            shape_str(b.shape())
        ));
    }
    let (av, bv) = (values(a)?, values(b)?);
    check_encodable("matmul", &av, fmt)?;
    check_encodable("matmul", &bv, fmt)?;
    let round = |v: Vec<f64>| map_elems(&v, |e| fmt.round(e).unwrap_or(f64::NAN));
    let (av, bv) = (round(av)?, round(bv)?);
    let cells = m
        .checked_mul(n)
        .ok_or_else(|| TensorError(format!("`matmul`: a result of {m} x {n} is too large")))?;
    let out: Vec<f64> = map_range(cells, |c| {
        let (i, j) = (c / n, c % n);
        let mut acc = 0.0;
        for p in 0..k {
            let prod = fmt.mul(av[i * k + p], bv[p * n + j]);
            acc = fmt.add(acc, prod);
        }
        acc
    })?;
    let shape = match (a.ndim(), b.ndim()) {
        (2, 2) => vec![m, n],
        (2, _) => vec![m],
        (_, 2) => vec![n],
        _ => vec![],
    };
    stored(out, dt, shape)
}

/// Values of `fmt` computed in f64, stored in `dt` (f32 or f64: exact,
/// since every value of the format is a value of `dt`).
pub(crate) fn stored(v: Vec<f64>, dt: DType, shape: Vec<usize>) -> Result<Tensor, TensorError> {
    if dt == DType::F32 {
        let n = v.len();
        Tensor::from_vec(try_collect(n, v.into_iter().map(f64_to_f32))?, shape)
    } else {
        Tensor::from_vec(v, shape)
    }
}
