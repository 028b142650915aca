//! Bulk casts of a tensor's elements (`x.to(dt)`). Every element goes
//! through the same single rounding as `Scalar::cast`, which stays the
//! definition: the fast path below computes it with plain machine
//! conversions, in parallel chunks, and hands every element it cannot
//! prove simple (a NaN, or a float that may not fit an integer dtype) to
//! `Scalar::cast` itself, so the two can only differ if a fast conversion
//! is wrong — and the tests compare them on every bf16 and f16 pattern and
//! on millions of f32 and f64 ones, the halfway cases included.
//!
//! The fast conversions are `convert`'s shortcuts (each tested there
//! against `narrow`/`widen`): integers and bool are exact in f64; bf16 and
//! f16 widen exactly to f32; f32 → f64 is exact; f64 → f32 is the
//! hardware's round to nearest even; f64 → bf16 and f64 → f16 round *to
//! odd* into f32 first and then to nearest even into the narrow format,
//! which is one correct rounding, unlike the double rounding of going
//! through f32 to nearest.

use half::bf16;
use rayon::prelude::*;
use std::mem::MaybeUninit;

use crate::convert::{
    bf16_to_f32, f16_bits_to_f32, f16_bits_to_f32_or_nan, f32_to_bf16, f32_to_f16_bits, f32_to_odd, Scalar,
};
use crate::dtype::DType;
use crate::storage::{try_vec, Element, Storage};
use crate::tensor::{Tensor, TensorError};

/// Casts at least this long are split across rayon's threads.
const PAR_MIN: usize = 1 << 15;
/// Elements per parallel task.
const CHUNK: usize = 1 << 14;

/// The general path: every element through `Scalar::cast`.
fn generic<S: Element, D: Element>(t: &Tensor, src: &[S]) -> Result<Storage, TensorError> {
    let mut out = try_vec(t.numel()).map_err(|e| e.for_tensor(D::DTYPE, t.shape()))?;
    for o in t.offsets() {
        out.push(slow::<S, D>(src[o])?);
    }
    Ok(D::into_storage(out))
}

/// One element by the definition.
fn slow<S: Element, D: Element>(x: S) -> Result<D, TensorError> {
    let d = x.to_scalar().cast(D::DTYPE)?;
    D::from_scalar(d).ok_or_else(|| {
        TensorError(format!(
            "internal error: casting to {} gave a {} element",
            D::DTYPE,
            d.dtype()
        ))
    })
}

/// A source element's exact value, as the fast path sees it.
#[derive(Clone, Copy)]
enum Exact {
    Int(i32),
    Float(f64),
}

/// The exact value of `x`; `None` for a NaN (the definition decides its
/// payload).
#[inline(always)]
fn exact<S: Element>(x: S) -> Option<Exact> {
    match x.to_scalar() {
        Scalar::Bool(b) => Some(Exact::Int(i32::from(b))),
        Scalar::I8(i) => Some(Exact::Int(i32::from(i))),
        Scalar::I32(i) => Some(Exact::Int(i)),
        Scalar::Bf16(bits) => float(f64::from(bf16_to_f32(bf16::from_bits(bits)))),
        Scalar::F16(bits) if bits & 0x7fff > 0x7c00 => None,
        Scalar::F16(bits) => float(f64::from(f16_bits_to_f32(bits))),
        Scalar::F32(v) => float(f64::from(v)),
        Scalar::F64(v) => float(v),
    }
}

#[inline(always)]
fn float(v: f64) -> Option<Exact> {
    if v.is_nan() {
        None
    } else {
        Some(Exact::Float(v))
    }
}

/// `v` in the integer range `min..=max` after truncation, else `None`.
#[inline(always)]
fn truncated(v: Exact, min: i32, max: i32) -> Option<i32> {
    match v {
        Exact::Int(i) => Some(i),
        Exact::Float(x) => {
            let t = x.trunc();
            if t >= f64::from(min) && t <= f64::from(max) {
                Some(t as i32)
            } else {
                None
            }
        }
    }
}

/// One element the fast way; `None` sends it to [`slow`].
#[inline(always)]
fn fast<S: Element, D: Element>(x: S) -> Option<D> {
    // The pairs between f32 and the 16-bit floats, directly.
    match (x.to_scalar(), D::DTYPE) {
        (Scalar::F32(f), DType::Bf16) if !f.is_nan() => {
            return Some(D::from_raw_bits(f32_to_bf16(f).to_bits().into()))
        }
        (Scalar::F32(f), DType::F16) if !f.is_nan() => {
            return Some(D::from_raw_bits(f32_to_f16_bits(f).into()))
        }
        (Scalar::Bf16(b), DType::F32) if !bf16::from_bits(b).is_nan() => {
            return Some(D::from_raw_bits(bf16_to_f32(bf16::from_bits(b)).to_bits().into()))
        }
        (Scalar::F16(b), DType::F32) if b & 0x7fff <= 0x7c00 => {
            return Some(D::from_raw_bits(f16_bits_to_f32(b).to_bits().into()))
        }
        _ => {}
    }
    let v = exact(x)?;
    let as_f64 = |v: Exact| match v {
        Exact::Int(i) => f64::from(i),
        Exact::Float(f) => f,
    };
    let bits: u64 = match D::DTYPE {
        DType::Bool => u64::from(match v {
            Exact::Int(i) => i != 0,
            Exact::Float(f) => f != 0.0,
        }),
        // Integers wrap (two's complement), floats truncate into range.
        DType::I8 => u64::from(match v {
            Exact::Int(i) => i,
            Exact::Float(_) => truncated(v, i8::MIN.into(), i8::MAX.into())?,
        } as u8),
        DType::I32 => u64::from(truncated(v, i32::MIN, i32::MAX)? as u32),
        DType::Bf16 => u64::from(f32_to_bf16(f32_to_odd(as_f64(v))).to_bits()),
        DType::F16 => u64::from(f32_to_f16_bits(f32_to_odd(as_f64(v)))),
        DType::F32 => u64::from((as_f64(v) as f32).to_bits()),
        DType::F64 => as_f64(v).to_bits(),
    };
    Some(D::from_raw_bits(bits))
}

/// Casts `src` into `out`, element for element; the first element the
/// definition refuses is returned as its error (with its index, so that
/// the earliest of several chunks' errors can be chosen). Block by block:
/// a loop with no branch out of it (which the compiler vectorises) writes
/// the fast result of every element and notes whether all had one; a block
/// where some had none (a NaN, a float out of an integer's range) is cast
/// again element by element, those elements by the definition.
#[inline(always)]
fn fill<S: Element, D: Element>(src: &[S], out: &mut [MaybeUninit<D>]) -> Option<(usize, TensorError)> {
    const BLOCK: usize = 256;
    let float_to_int = S::DTYPE.is_float() && matches!(D::DTYPE, DType::I8 | DType::I32);
    for (b, (ob, sb)) in out.chunks_mut(BLOCK).zip(src.chunks(BLOCK)).enumerate() {
        let all = if float_to_int {
            truncate_block(sb, ob)
        } else {
            let mut all = true;
            for (o, &x) in ob.iter_mut().zip(sb) {
                let d = fast::<S, D>(x);
                all &= d.is_some();
                o.write(d.unwrap_or_else(|| D::from_raw_bits(0)));
            }
            all
        };
        if all {
            continue;
        }
        for (i, (o, &x)) in ob.iter_mut().zip(sb).enumerate() {
            if fast::<S, D>(x).is_none() {
                match slow::<S, D>(x) {
                    Ok(d) => {
                        o.write(d);
                    }
                    Err(e) => return Some((b * BLOCK + i, e)),
                }
            }
        }
    }
    None
}

/// A float element's exact value as an f64 (a NaN stays a NaN), without
/// branches: bf16 and f16 on their bits.
#[inline(always)]
fn float_value<S: Element>(x: S) -> f64 {
    match x.to_scalar() {
        Scalar::Bf16(b) => f64::from(bf16_to_f32(bf16::from_bits(b))),
        Scalar::F16(b) => f64::from(f16_bits_to_f32_or_nan(b)),
        Scalar::F32(v) => f64::from(v),
        Scalar::F64(v) => v,
        Scalar::Bool(b) => f64::from(u8::from(b)),
        Scalar::I8(i) => f64::from(i),
        Scalar::I32(i) => f64::from(i),
    }
}

/// Float → i8 or i32 over one block: each value truncated toward zero
/// (the definition's conversion when the result is in range), in a loop
/// the compiler vectorises; false, with zeros written for them, when some
/// element is a NaN or out of range, which the caller then casts by the
/// definition.
#[inline(always)]
fn truncate_block<S: Element, D: Element>(src: &[S], out: &mut [MaybeUninit<D>]) -> bool {
    let (lo, hi) = match D::DTYPE {
        DType::I8 => (f64::from(i8::MIN), f64::from(i8::MAX)),
        DType::Bool | DType::I32 | DType::Bf16 | DType::F16 | DType::F32 | DType::F64 => {
            (f64::from(i32::MIN), f64::from(i32::MAX))
        }
    };
    let mut all = true;
    for (o, &x) in out.iter_mut().zip(src) {
        let t = float_value(x).trunc();
        let ok = (t >= lo) & (t <= hi);
        all &= ok;
        // SAFETY: the value converted is an integer in i32's range (the
        // truncated value, or 0 where it is not one in range).
        let i: i32 = unsafe { (if ok { t } else { 0.0 }).to_int_unchecked() };
        o.write(D::from_raw_bits(u64::from(i as u32)));
    }
    all
}

/// f64 values cast to `D` into `out`, as `Tensor::cast` casts them (for
/// the constructors, which compute in f64 and round once).
pub(crate) fn f64s_into<D: Element>(src: &[f64], out: &mut [MaybeUninit<D>]) -> Option<(usize, TensorError)> {
    fill(src, out)
}

/// The fast path over a contiguous source, in parallel chunks.
fn contiguous<S: Element, D: Element>(t: &Tensor, src: &[S]) -> Result<Storage, TensorError> {
    let n = src.len();
    let mut out: Vec<D> = try_vec(n).map_err(|e| e.for_tensor(D::DTYPE, t.shape()))?;
    let spare = &mut out.spare_capacity_mut()[..n];
    let failed = if n >= PAR_MIN {
        spare
            .par_chunks_mut(CHUNK)
            .zip(src.par_chunks(CHUNK))
            .enumerate()
            .filter_map(|(c, (o, s))| {
                crate::isa::wide(
                    #[inline(always)]
                    || fill(s, o),
                )
                .map(|(i, e)| (c * CHUNK + i, e))
            })
            .min_by_key(|(i, _)| *i)
    } else {
        crate::isa::wide(
            #[inline(always)]
            || fill(src, spare),
        )
    };
    if let Some((_, e)) = failed {
        return Err(e);
    }
    // SAFETY: the capacity is at least `n`, and `fill` wrote every one of
    // the first `n` elements (each chunk in full, since none failed).
    unsafe { out.set_len(n) };
    Ok(D::into_storage(out))
}

impl Tensor {
    /// The tensor converted to `dtype`, each element rounded once from its
    /// own value (spec §5.3). Defined here, not in `tensor`, so that the
    /// tensor type does not depend on the casts built on top of it.
    pub fn cast(&self, dtype: DType) -> Result<Tensor, TensorError> {
        if dtype == self.dtype() {
            return Ok(self.clone());
        }
        let data = cast_storage(self, dtype)?;
        Tensor::from_storage(data, self.shape().to_vec())
    }
}

/// The elements of `t`, in row-major order, cast to `dtype`.
pub fn cast_storage(t: &Tensor, dtype: DType) -> Result<Storage, TensorError> {
    // Exponent fields whose results are normal: bf16 has f32's exponent
    // range (2^-126 up to 2^127), f16 2^-14 up to 2^15.
    match (t.as_slice::<f64>(), dtype) {
        (Some(src), DType::Bf16) => return narrow_f64::<bf16>(t, src, 7, 1023 - 126, 1023 + 127),
        (Some(src), DType::F16) => return narrow_f64::<half::f16>(t, src, 10, 1023 - 14, 1023 + 15),
        _ => {}
    }
    crate::dispatch!(in t.storage(), v => crate::dispatch!(dtype, D => match element_slice(t, v) {
        Some(src) => contiguous::<_, D>(t, src),
        None => generic::<_, D>(t, v),
    }))
}

/// f64 → bf16 or f16 over one block, on the bits alone: for a normal
/// result the f64's mantissa is rounded to nearest even at the target's
/// width by adding half an ulp less one plus the kept last bit (a carry
/// into the exponent is the right result, infinity included), and the
/// exponent is rebased. Returns false, having written garbage, when some
/// element's result is not normal or the source a NaN (its exponent field
/// out of `lo..=hi`); the caller then casts that block the general way.
#[inline(always)]
fn narrow_block<D: Element>(src: &[f64], out: &mut [MaybeUninit<D>], man: u32, lo: u64, hi: u64) -> bool {
    let drop = 52 - man;
    let half = (1u64 << (drop - 1)) - 1;
    // The target's bias is hi − 1023 (its largest exponent).
    let rebase = (1023 - (hi - 1023)) << man;
    let mut bad = 0u64;
    for (o, &x) in out.iter_mut().zip(src) {
        let b = x.to_bits();
        let e = (b >> 52) & 0x7ff;
        bad |= u64::from(e < lo) | u64::from(e > hi);
        let mag = b & 0x7fff_ffff_ffff_ffff;
        let r = ((mag + half + ((mag >> drop) & 1)) >> drop).wrapping_sub(rebase);
        o.write(D::from_raw_bits(((b >> 48) & 0x8000) | (r & 0x7fff)));
    }
    bad == 0
}

/// One chunk of [`narrow_f64`]: blocks of normal results on the bits,
/// any other block through [`fill`]; the first error.
#[inline(always)]
fn narrow_chunk<D: Element>(
    o: &mut [MaybeUninit<D>],
    s: &[f64],
    man: u32,
    lo: u64,
    hi: u64,
) -> Option<TensorError> {
    for (ob, sb) in o.chunks_mut(NARROW_BLOCK).zip(s.chunks(NARROW_BLOCK)) {
        if !narrow_block(sb, ob, man, lo, hi) {
            if let Some((_, e)) = fill(sb, ob) {
                return Some(e);
            }
        }
    }
    None
}

/// Elements per block of [`narrow_f64`]'s rounding on the bits.
const NARROW_BLOCK: usize = 256;

/// f64 → a 16-bit float in parallel chunks, blocks of normal results on
/// the bits ([`narrow_block`]), any other block element by element.
fn narrow_f64<D: Element>(
    t: &Tensor,
    src: &[f64],
    man: u32,
    lo: u64,
    hi: u64,
) -> Result<Storage, TensorError> {
    let n = src.len();
    let mut out: Vec<D> = try_vec(n).map_err(|e| e.for_tensor(D::DTYPE, t.shape()))?;
    let spare = &mut out.spare_capacity_mut()[..n];
    let failed = if n >= PAR_MIN {
        spare
            .par_chunks_mut(CHUNK)
            .zip(src.par_chunks(CHUNK))
            .find_map_first(|(o, s)| {
                crate::isa::wide(
                    #[inline(always)]
                    || narrow_chunk(o, s, man, lo, hi),
                )
            })
    } else {
        crate::isa::wide(
            #[inline(always)]
            || narrow_chunk(spare, src, man, lo, hi),
        )
    };
    if let Some(e) = failed {
        return Err(e);
    }
    // SAFETY: every block was written in full, by one path or the other.
    unsafe { out.set_len(n) };
    Ok(D::into_storage(out))
}

/// The elements of `t` as one run of `v`'s type, when they are one.
fn element_slice<'a, S: Element>(t: &'a Tensor, _v: &[S]) -> Option<&'a [S]> {
    t.as_slice::<S>()
}

#[cfg(test)]
mod tests {
    //! The fast path against the definition (`Scalar::cast`), element for
    //! element: every bf16, f16, i8 and bool pattern, and for f32, f64 and
    //! i32 the edges, every halfway point of the narrow formats and its two
    //! neighbours, and a million random patterns each.
    #![allow(clippy::unwrap_used)]
    use super::*;
    use half::f16;

    use crate::construct::SplitMix64;

    /// Asserts that wherever `fast` answers, it answers what the definition
    /// does, and that it answers for every non-NaN float to float.
    fn agree<S: Element, D: Element>(xs: &[S]) -> usize {
        let mut answered = 0;
        for &x in xs {
            match fast::<S, D>(x) {
                Some(d) => {
                    answered += 1;
                    let want = slow::<S, D>(x).unwrap();
                    assert_eq!(
                        d.to_scalar().to_bits(),
                        want.to_scalar().to_bits(),
                        "{:?} -> {}",
                        x.to_scalar(),
                        D::DTYPE
                    );
                }
                None => {
                    let nan = x.to_f64().is_nan();
                    assert!(
                        nan || !D::DTYPE.is_float(),
                        "{:?} -> {} not answered",
                        x.to_scalar(),
                        D::DTYPE
                    );
                }
            }
        }
        answered
    }

    /// The bulk cast of the elements the definition accepts, on every
    /// instruction-set level the CPU has, against the definition element
    /// for element.
    fn bulk<S: Element, D: Element>(xs: &[S]) {
        let ok: Vec<S> = xs.iter().copied().filter(|&x| slow::<S, D>(x).is_ok()).collect();
        let want: Vec<u64> = ok
            .iter()
            .map(|&x| slow::<S, D>(x).unwrap().to_scalar().to_bits())
            .collect();
        let n = ok.len();
        let t = Tensor::from_vec(ok, vec![n]).unwrap();
        crate::isa::tests::at_each_level(|level| {
            let got = t.cast(D::DTYPE).unwrap();
            for (i, &w) in want.iter().enumerate() {
                let g = got.storage().get(i).map(|v| v.to_bits());
                assert_eq!(g, Some(w), "{} -> {} at {i} ({level:?})", S::DTYPE, D::DTYPE);
            }
        });
    }

    fn every_target<S: Element>(xs: &[S]) {
        let n = agree::<S, bool>(xs)
            + agree::<S, i8>(xs)
            + agree::<S, i32>(xs)
            + agree::<S, bf16>(xs)
            + agree::<S, f16>(xs)
            + agree::<S, f32>(xs)
            + agree::<S, f64>(xs);
        assert!(n > xs.len() * 4, "{}: only {n} answered", S::DTYPE);
        bulk::<S, bool>(xs);
        bulk::<S, i8>(xs);
        bulk::<S, i32>(xs);
        bulk::<S, bf16>(xs);
        bulk::<S, f16>(xs);
        bulk::<S, f32>(xs);
        bulk::<S, f64>(xs);
    }

    /// Every finite value of a 16-bit format (as f64), the midpoint between
    /// it and the next one up, and the midpoint's two f64 neighbours.
    fn halfway(widen: impl Fn(u16) -> f64) -> Vec<f64> {
        let mut v = Vec::new();
        for b in 0..=u16::MAX {
            let (x, y) = (widen(b), widen(b.wrapping_add(1)));
            if x.is_finite() && y.is_finite() && (b & 0x7fff) != 0x7fff {
                let m = (x + y) / 2.0;
                v.extend([x, m, m.next_up(), m.next_down(), -m]);
            }
        }
        v
    }

    fn f64_cases() -> Vec<f64> {
        let mut v = halfway(|b| f64::from(bf16_to_f32(bf16::from_bits(b))));
        v.extend(halfway(|b| f64::from(f16::from_bits(b).to_f32())));
        let mut rng = SplitMix64::new(7);
        for _ in 0..200_000 {
            let x = f32::from_bits(rng.next_u64() as u32);
            if x.is_finite() {
                let y = x.next_up();
                let m = (f64::from(x) + f64::from(y)) / 2.0;
                v.extend([m, m.next_up(), m.next_down()]);
            }
        }
        for _ in 0..1_000_000 {
            let bits = rng.next_u64();
            v.push(f64::from_bits(bits));
            // Magnitudes where the narrow formats and the integers live.
            v.push(f64::from_bits(bits) % 1e6);
            v.push(f64::from_bits(
                (bits & 0x800f_ffff_ffff_ffff) | ((0x3c0 + (bits >> 52) % 0x80) << 52),
            ));
        }
        v.extend([
            0.0,
            -0.0,
            f64::INFINITY,
            -f64::INFINITY,
            f64::NAN,
            -f64::NAN,
            f64::from_bits(0x7ff0_0000_0000_0001),
            f64::from_bits(0xfff4_0000_0000_0000),
            f64::MIN_POSITIVE,
            5e-324,
            -5e-324,
            f64::MAX,
            f64::MIN,
            f64::from(f32::MAX),
            f64::from(f32::MAX) * (1.0 + f64::EPSILON),
            3.4028235677973366e38,
            65504.0,
            65519.99,
            65520.0,
            65520.0f64.next_down(),
            3.3895313892515355e38,
            3.3961775292304046e38,
            127.9,
            128.0,
            -128.9,
            -129.0,
            2147483647.9,
            2147483648.0,
            -2147483648.9,
            -2147483649.0,
            1e-45,
            1.4e-45,
            7e-46,
            2.0f64.powi(-150),
            2.0f64.powi(-133),
            2.0f64.powi(-134),
            2.0f64.powi(-25),
            2.0f64.powi(-24),
            2.0f64.powi(-25) * 1.5,
            1.0039062509313226,
        ]);
        v
    }

    #[test]
    fn sixteen_bit_sources_agree_on_every_pattern() {
        let b: Vec<bf16> = (0..=u16::MAX).map(bf16::from_bits).collect();
        every_target(&b);
        let h: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
        every_target(&h);
    }

    #[test]
    fn small_integer_sources_agree_on_every_value() {
        every_target(&[false, true]);
        let i: Vec<i8> = (i8::MIN..=i8::MAX).collect();
        every_target(&i);
    }

    #[test]
    fn f64_sources_agree_on_edges_halfway_points_and_random_patterns() {
        every_target(&f64_cases());
    }

    #[test]
    fn f32_sources_agree_on_edges_halfway_points_and_random_patterns() {
        let mut v: Vec<f32> = f64_cases().into_iter().map(|x| x as f32).collect();
        let mut rng = SplitMix64::new(11);
        v.extend((0..1_000_000).map(|_| f32::from_bits(rng.next_u64() as u32)));
        every_target(&v);
    }

    #[test]
    fn i32_sources_agree_on_edges_and_random_values() {
        let mut rng = SplitMix64::new(13);
        let mut v: Vec<i32> = (0..1_000_000).map(|_| rng.next_u64() as i32).collect();
        v.extend((0..100_000).map(|_| (rng.next_u64() % 70_000) as i32 - 35_000));
        v.extend([
            0,
            1,
            -1,
            127,
            128,
            -128,
            -129,
            255,
            256,
            257,
            2049,
            65504,
            65520,
            16_777_217,
            i32::MAX,
            i32::MIN,
        ]);
        // Odd integers between 2^24 and 2^31 are f32's halfway cases.
        v.extend((0..10_000).map(|k| (1 << 24) + 2 * k + 1));
        every_target(&v);
    }

    #[test]
    fn a_large_cast_is_the_general_path_on_any_layout_and_reports_the_first_error() {
        let xs: Vec<f64> = f64_cases();
        let t = Tensor::from_vec(xs.clone(), vec![xs.len()]).unwrap();
        for dt in [DType::Bool, DType::Bf16, DType::F16, DType::F32] {
            let fast = t.cast(dt).unwrap();
            let general = Tensor::from_vec(xs.clone(), vec![xs.len()]).unwrap();
            let want = crate::dispatch!(in general.storage(), v => crate::dispatch!(dt, D => generic::<_, D>(&general, v))).unwrap();
            let bits = |s: &Storage| {
                (0..s.len())
                    .map(|i| s.get(i).map(|v| v.to_bits()))
                    .collect::<Vec<_>>()
            };
            let (got, want) = (bits(fast.storage()), bits(&want));
            let first = got.iter().zip(&want).position(|(a, b)| a != b);
            assert!(
                first.is_none(),
                "{dt}: {:?} at {first:?} ({:?} for {:?})",
                xs[first.unwrap_or(0)],
                got[first.unwrap_or(0)],
                want[first.unwrap_or(0)]
            );
        }
        let mut ys = vec![1.5f64; 200_000];
        ys[150_000] = 300.0;
        ys[40_000] = 1000.0;
        ys[190_000] = f64::NAN;
        let e = Tensor::from_vec(ys, vec![200_000])
            .unwrap()
            .cast(DType::I8)
            .unwrap_err();
        assert_eq!(e.to_string(), "cannot cast 1000 to i8: out of range");
    }
}
