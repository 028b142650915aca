//! Conversions between the seven dtypes: the one place where a value changes
//! format. It owns the rounding of an f64 into the narrow float formats
//! ([`narrow`], which is the formats lab's one rounding routine,
//! `lab::round_magnitude`, applied to the dtype's IEEE format), the exact
//! widening back ([`widen`]), and the scalar cast
//! between any two dtypes ([`Scalar::cast`]) that spec §5 item 3 defines.
//! There is one narrowing and one widening routine, parameterised by the
//! format's exponent and mantissa widths ([`FloatFormat`], described once in
//! `float_format`), rather than one per format (seed
//! 000, "What is checked, and how"): the rounding step is the hard part and
//! it should exist, and be tested, once (the bit-level f32 ↔ bf16 shortcuts
//! the kernels use, [`f32_to_bf16`] and [`bf16_to_f32`], are tested against
//! it bit for bit). Every conversion works on the f64's
//! bits with integer arithmetic and never passes through an intermediate
//! format, because rounding twice (f64 → f32 → bf16) differs from rounding
//! once on exactly the values that land halfway after the first rounding.
//! The `half` crate is deliberately not used here: its correctness would be
//! one more thing to prove, and the routine below is proved by the vectors
//! in `testdata/vectors/casts*.txt`. The conversions everything else calls
//! (`f64_to_bf16_bits` and friends) take machine shortcuts for speed —
//! hardware f64 → f32 rounding, a round to odd before the final rounding,
//! exact bit shifts for widening — and the tests below compare each of
//! them with `narrow`/`widen` on every 16-bit pattern, every halfway case
//! of the narrow formats and millions of random ones.

use std::fmt;

use half::bf16;

use crate::dtype::DType;
use crate::format::format_number;

pub use crate::float_format::FloatFormat;
use crate::float_format::{F64_BIAS, F64_EXP_ALL_ONES, F64_MAN_BITS, F64_MAN_MASK};
use crate::lab::Format;

const F64_QUIET_BIT: u64 = 1 << (F64_MAN_BITS - 1);

/// Rounds `x` to the nearest value of `fmt`, ties to even, and returns its
/// bit pattern in the low [`FloatFormat::width`] bits.
///
/// The rounding is IEEE 754 round-to-nearest-even applied once to the exact
/// value of `x`: results below the smallest normal round into the
/// subnormals with the same rule (so half the smallest subnormal goes to a
/// zero of the same sign, and anything above half to the smallest
/// subnormal), and a magnitude at or beyond the largest finite value plus
/// half its ulp becomes infinity, that tie included, because the even
/// neighbour above the largest finite value is the next power of two, which
/// does not exist. Zeros and infinities keep their sign.
///
/// NaN policy, the same in [`widen`]: a NaN stays a NaN with its sign, its
/// quiet bit is set, and the top `man_bits − 1` bits of its payload are
/// kept (the bits below are dropped, as a hardware conversion drops them).
/// Setting the quiet bit is what keeps a signalling NaN whose payload lies
/// entirely in the dropped bits from turning into an infinity.
pub fn narrow(x: f64, fmt: FloatFormat) -> u32 {
    // The formats lab's one rounding routine, on the dtype's IEEE format;
    // an IEEE format encodes every f64, NaN and infinities included.
    Format::of(fmt).encode(x).map_or(0, |p| p as u32)
}

/// The exact f64 value of the `fmt` encoding in the low bits of `bits`
/// (higher bits are ignored). Every value of the three formats is an f64,
/// subnormals included, so nothing rounds; NaNs follow the policy stated on
/// [`narrow`], so `narrow(widen(p))` is `p` for every non-NaN `p` and `p`
/// with its quiet bit set for a NaN.
pub fn widen(bits: u32, fmt: FloatFormat) -> f64 {
    let man_bits = fmt.man_bits();
    let sign = if bits & fmt.sign_bit() != 0 { 1u64 << 63 } else { 0 };
    let exp_field = (bits >> man_bits) & fmt.exp_all_ones();
    let man_field = u64::from(bits & ((1 << man_bits) - 1));
    let exp_all_ones = fmt.exp_all_ones();
    let align = fmt.f64_low_bits();

    let out = if exp_field == exp_all_ones {
        let nan = if man_field == 0 {
            0
        } else {
            F64_QUIET_BIT | (man_field << align)
        };
        sign | (F64_EXP_ALL_ONES << F64_MAN_BITS) | nan
    } else if exp_field == 0 {
        if man_field == 0 {
            sign
        } else {
            // A subnormal is man_field · 2^(min_exponent − man_bits); as an
            // f64 it is normal, so move its leading one to the implicit bit.
            let top = 63 - man_field.leading_zeros();
            let exponent = top as i32 + 1 - fmt.bias() - man_bits as i32;
            let man = (man_field << (F64_MAN_BITS - top)) & F64_MAN_MASK;
            sign | (((exponent + F64_BIAS) as u64) << F64_MAN_BITS) | man
        }
    } else {
        let exponent = exp_field as i32 - fmt.bias();
        sign | (((exponent + F64_BIAS) as u64) << F64_MAN_BITS) | (man_field << align)
    };
    f64::from_bits(out)
}

/// `x` rounded to bf16, as its bit pattern: [`narrow`]'s result, computed
/// by rounding to odd into f32 and then to nearest even (see
/// [`f32_to_odd`]); a NaN takes [`narrow`] itself.
#[inline]
pub fn f64_to_bf16_bits(x: f64) -> u16 {
    if x.is_nan() {
        return narrow(x, FloatFormat::BF16) as u16;
    }
    f32_to_bf16(f32_to_odd(x)).to_bits()
}

/// `x` rounded to f16, as its bit pattern, as [`f64_to_bf16_bits`] does it.
#[inline]
pub fn f64_to_f16_bits(x: f64) -> u16 {
    if x.is_nan() {
        return narrow(x, FloatFormat::F16) as u16;
    }
    f32_to_f16_bits(f32_to_odd(x))
}

/// `x` rounded to f32. Agrees with `x as f32` on every non-NaN input; on a
/// NaN it follows the documented policy, where `as` leaves the payload to
/// the platform.
#[inline]
pub fn f64_to_f32(x: f64) -> f32 {
    if x.is_nan() {
        return f32::from_bits(narrow(x, FloatFormat::F32));
    }
    x as f32
}

#[inline]
pub fn bf16_bits_to_f64(bits: u16) -> f64 {
    if bits & 0x7fff > 0x7f80 {
        return widen(u32::from(bits), FloatFormat::BF16);
    }
    f64::from(bf16_to_f32(bf16::from_bits(bits)))
}

#[inline]
pub fn f16_bits_to_f64(bits: u16) -> f64 {
    if bits & 0x7fff > 0x7c00 {
        return widen(u32::from(bits), FloatFormat::F16);
    }
    f64::from(f16_bits_to_f32(bits))
}

#[inline]
pub fn f32_to_f64(x: f32) -> f64 {
    if x.is_nan() {
        return widen(x.to_bits(), FloatFormat::F32);
    }
    f64::from(x)
}

/// `x` (not a NaN) rounded to f32 *to odd*: kept when exact, else
/// truncated toward zero with the last bit set. Rounding that to nearest
/// even into bf16 or f16 is rounding `x` itself once, because f32 has at
/// least two more bits than either at every exponent, subnormals included
/// (the classic round-to-odd argument); a magnitude beyond f32's range
/// becomes the largest finite f32 (odd), which both formats round to
/// infinity, as they round `x`.
#[inline(always)]
pub fn f32_to_odd(x: f64) -> f32 {
    // Branch-free, so that it vectorises: step toward zero when the
    // nearest rounding went away from it, and set the last bit, both only
    // when inexact.
    let r = x as f32;
    let back = f64::from(r);
    let inexact = u32::from(back != x);
    let away = u32::from(back.abs() > x.abs());
    f32::from_bits((r.to_bits() - (inexact & away)) | inexact)
}

/// f32 (not a NaN) → f16 with one rounding to nearest even, on the bits:
/// magnitudes from 65520 (the largest f16 plus half its ulp) up become
/// infinity, those below 2^-14 are the integer nearest |x|·2^24 (exact
/// scaling, ties to even) in f16's subnormal field, and the rest drop 13
/// mantissa bits with the exponent rebased.
#[inline(always)]
pub fn f32_to_f16_bits(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let a = b & 0x7fff_ffff;
    if a >= 0x4780_0000 {
        return sign | 0x7c00;
    }
    if a < 0x3880_0000 {
        return sign | (f32::from_bits(a) * 16_777_216.0).round_ties_even() as u16;
    }
    let r = a - (112 << 23);
    let round = 0xfff + ((r >> 13) & 1);
    sign | ((r + round) >> 13) as u16
}

/// f16 (not a NaN: a NaN pattern gives an infinity) → f32, exactly.
#[inline(always)]
pub fn f16_bits_to_f32(h: u16) -> f32 {
    let sign = u32::from(h & 0x8000) << 16;
    let a = u32::from(h & 0x7fff);
    let mag = if a >= 0x7c00 {
        0x7f80_0000
    } else if a >= 0x0400 {
        (a << 13) + (112 << 23)
    } else {
        (a as f32 * (1.0 / 16_777_216.0)).to_bits()
    };
    f32::from_bits(sign | mag)
}

/// f16 → f32 for a value that is only compared or widened further: exact
/// for every non-NaN, and a NaN pattern gives f32's NaN (its payload is
/// not kept). Written without `half`'s conversion so that it vectorises.
#[inline(always)]
pub fn f16_bits_to_f32_or_nan(h: u16) -> f32 {
    if h & 0x7fff > 0x7c00 {
        f32::NAN
    } else {
        f16_bits_to_f32(h)
    }
}

/// bf16 is f32 with the low mantissa bits cut off: this many.
const BF16_DROPPED: u32 = FloatFormat::F32.man_bits() - FloatFormat::BF16.man_bits();
/// The quiet bit of a bf16 NaN.
const BF16_QUIET: u16 = FloatFormat::BF16.quiet_bit() as u16;

/// f32 → bf16 with one rounding to nearest even, on the f32's bits. Equal
/// to `narrow(f64::from(x), BF16)` because widening f32 to f64 is exact;
/// NaN keeps its sign and top payload bits and becomes quiet.
#[inline(always)]
pub fn f32_to_bf16(x: f32) -> bf16 {
    let b = x.to_bits();
    if x.is_nan() {
        return bf16::from_bits(((b >> BF16_DROPPED) as u16) | BF16_QUIET);
    }
    let half = (1 << (BF16_DROPPED - 1)) - 1;
    let round = half + ((b >> BF16_DROPPED) & 1);
    bf16::from_bits((b.wrapping_add(round) >> BF16_DROPPED) as u16)
}

/// bf16 → f32 is exact: the bf16 bits are the top half of the f32's.
/// Written as a shift so that it vectorises.
#[inline(always)]
pub fn bf16_to_f32(x: bf16) -> f32 {
    f32::from_bits(u32::from(x.to_bits()) << BF16_DROPPED)
}

/// One element of any dtype, in the representation its packed storage
/// uses: bf16 and f16 as their bit patterns, since Rust has no such types.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Bool(bool),
    I8(i8),
    I32(i32),
    Bf16(u16),
    F16(u16),
    F32(f32),
    F64(f64),
}

/// A source value before it is converted: integers (bool included) as
/// themselves, so int→int can wrap, and floats as their exact f64 value,
/// which every dtype's values are, so that each cast is one rounding from
/// the source value.
#[derive(Clone, Copy)]
enum Exact {
    Int(i64),
    Float(f64),
}

impl Exact {
    fn to_f64(self) -> f64 {
        match self {
            // |i| < 2^31 for every integer dtype, so this is exact.
            Exact::Int(i) => i as f64,
            Exact::Float(x) => x,
        }
    }

    fn is_nonzero(self) -> bool {
        match self {
            Exact::Int(i) => i != 0,
            // NaN != 0 holds, so NaN is true; -0 == 0, so -0 is false.
            Exact::Float(x) => x != 0.0,
        }
    }

    /// The integer a cast to `to` (range `min..=max`) starts from. Integers
    /// pass through unchanged for the caller to wrap; floats truncate
    /// toward zero and must land in range.
    fn to_integer(self, to: DType, min: i64, max: i64) -> Result<i64, CastError> {
        match self {
            Exact::Int(i) => Ok(i),
            Exact::Float(x) => {
                let t = x.trunc();
                // Comparing as f64 is exact: min and max are integers far
                // below 2^53. NaN fails both comparisons and lands in Err.
                if t >= min as f64 && t <= max as f64 {
                    Ok(t as i64)
                } else {
                    Err(CastError { value: x, to })
                }
            }
        }
    }
}

impl Scalar {
    /// The dtype this element belongs to.
    pub fn dtype(self) -> DType {
        match self {
            Scalar::Bool(_) => DType::Bool,
            Scalar::I8(_) => DType::I8,
            Scalar::I32(_) => DType::I32,
            Scalar::Bf16(_) => DType::Bf16,
            Scalar::F16(_) => DType::F16,
            Scalar::F32(_) => DType::F32,
            Scalar::F64(_) => DType::F64,
        }
    }

    /// The element's value as an f64, exactly: every value of every dtype
    /// is one (bool as 0 or 1). This is the widening the buffer invariant
    /// of seed 000 is stated in.
    pub fn to_f64(self) -> f64 {
        self.exact().to_f64()
    }

    fn exact(self) -> Exact {
        match self {
            Scalar::Bool(b) => Exact::Int(i64::from(b)),
            Scalar::I8(i) => Exact::Int(i64::from(i)),
            Scalar::I32(i) => Exact::Int(i64::from(i)),
            Scalar::Bf16(bits) => Exact::Float(bf16_bits_to_f64(bits)),
            Scalar::F16(bits) => Exact::Float(f16_bits_to_f64(bits)),
            Scalar::F32(x) => Exact::Float(f32_to_f64(x)),
            Scalar::F64(x) => Exact::Float(x),
        }
    }

    /// The element's storage bits, zero-extended: bool as 0 or 1, integers
    /// in two's complement at their own width, floats as their encoding.
    /// Inline, so that a kernel over one dtype keeps only its own arm.
    #[inline]
    pub fn to_bits(self) -> u64 {
        match self {
            Scalar::Bool(b) => u64::from(b),
            Scalar::I8(i) => u64::from(i as u8),
            Scalar::I32(i) => u64::from(i as u32),
            Scalar::Bf16(bits) | Scalar::F16(bits) => u64::from(bits),
            Scalar::F32(x) => u64::from(x.to_bits()),
            Scalar::F64(x) => x.to_bits(),
        }
    }

    /// The element of `dtype` whose storage bits are the low bits of `bits`
    /// (bits above the dtype's width are ignored; a bool byte is true when
    /// nonzero). The inverse of [`Scalar::to_bits`].
    #[inline]
    pub fn from_bits(dtype: DType, bits: u64) -> Scalar {
        match dtype {
            DType::Bool => Scalar::Bool(bits as u8 != 0),
            DType::I8 => Scalar::I8(bits as u8 as i8),
            DType::I32 => Scalar::I32(bits as u32 as i32),
            DType::Bf16 => Scalar::Bf16(bits as u16),
            DType::F16 => Scalar::F16(bits as u16),
            DType::F32 => Scalar::F32(f32::from_bits(bits as u32)),
            DType::F64 => Scalar::F64(f64::from_bits(bits)),
        }
    }

    /// Converts to `to` by spec §5 item 3: a float result is rounded once,
    /// to nearest, ties to even, from the exact source value (so bf16 → f16
    /// and i32 → bf16 never pass through f32); a float source truncates
    /// toward zero into an integer dtype and is an error if it is NaN,
    /// infinite or out of range; an integer source wraps into a narrower
    /// integer (two's complement); a bool result is `x != 0`, so NaN is true
    /// and -0 false; a bool source is 0 or 1. A NaN result follows the
    /// policy stated on [`narrow`].
    pub fn cast(self, to: DType) -> Result<Scalar, CastError> {
        // Casting to the element's own dtype changes nothing, not even a
        // signalling NaN's quiet bit, so `x.to(x.dtype)` is a pure copy.
        if self.dtype() == to {
            return Ok(self);
        }
        let v = self.exact();
        Ok(match to {
            DType::Bool => Scalar::Bool(v.is_nonzero()),
            // `as` on an in-range integer is a two's-complement wrap, which
            // is the int→int rule; a float source was range-checked already.
            DType::I8 => Scalar::I8(v.to_integer(to, i8::MIN.into(), i8::MAX.into())? as i8),
            DType::I32 => Scalar::I32(v.to_integer(to, i32::MIN.into(), i32::MAX.into())? as i32),
            DType::Bf16 => Scalar::Bf16(f64_to_bf16_bits(v.to_f64())),
            DType::F16 => Scalar::F16(f64_to_f16_bits(v.to_f64())),
            DType::F32 => Scalar::F32(f64_to_f32(v.to_f64())),
            DType::F64 => Scalar::F64(v.to_f64()),
        })
    }
}

/// A float that has no value in the integer dtype it was cast to: NaN, an
/// infinity, or a finite value whose truncation lies outside the range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CastError {
    /// The source value, exactly (widened to f64).
    pub value: f64,
    /// The dtype the cast asked for.
    pub to: DType,
}

impl fmt::Display for CastError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot cast {} to {}", format_number(self.value), self.to)?;
        // NaN and the infinities are not numbers of any range; a finite
        // value is one that simply does not fit.
        if self.value.is_finite() {
            f.write_str(": out of range")?;
        }
        Ok(())
    }
}

impl std::error::Error for CastError {}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::construct::SplitMix64;

    /// Every value of a 16-bit format, the midpoints to its neighbour up
    /// and the midpoints' neighbours (as f64); then f32 halfway cases,
    /// random patterns and the edges.
    fn f64_cases() -> Vec<f64> {
        let mut v = Vec::new();
        for fmt in [FloatFormat::BF16, FloatFormat::F16] {
            for b in 0..=u16::MAX {
                let (x, y) = (widen(u32::from(b), fmt), widen(u32::from(b.wrapping_add(1)), fmt));
                v.push(x);
                if x.is_finite() && y.is_finite() && (b & 0x7fff) != 0x7fff {
                    let m = (x + y) / 2.0;
                    v.extend([m, m.next_up(), m.next_down(), -m, -m.next_up()]);
                }
            }
        }
        let mut rng = SplitMix64::new(5);
        for _ in 0..300_000 {
            let x = f32::from_bits(rng.next_u64() as u32);
            if x.is_finite() {
                let m = (f64::from(x) + f64::from(x.next_up())) / 2.0;
                v.extend([m, m.next_up(), m.next_down()]);
            }
        }
        for _ in 0..1_000_000 {
            let bits = rng.next_u64();
            v.push(f64::from_bits(bits));
            // Exponents where f32, bf16 and f16 live.
            v.push(f64::from_bits(
                (bits & 0x800f_ffff_ffff_ffff) | ((0x300 + (bits >> 52) % 0x200) << 52),
            ));
        }
        v.extend([
            0.0,
            -0.0,
            f64::INFINITY,
            -f64::INFINITY,
            f64::MIN_POSITIVE,
            5e-324,
            f64::MAX,
            f64::MIN,
            f64::from(f32::MAX),
            3.4028235677973366e38,
            3.4028235677973362e38,
            65504.0,
            65519.99,
            65520.0,
            2.0f64.powi(-150),
            2.0f64.powi(-149) * 1.5,
            2.0f64.powi(-133),
            2.0f64.powi(-134),
            2.0f64.powi(-25),
            2.0f64.powi(-25) * 1.5,
            2.0f64.powi(-24),
            2.0f64.powi(-14) * (1.0 - 2.0f64.powi(-12)),
        ]);
        v
    }

    #[test]
    fn the_narrowing_shortcuts_are_narrow_bit_for_bit() {
        let mut nans = 0;
        for x in f64_cases() {
            assert_eq!(
                u32::from(f64_to_bf16_bits(x)),
                narrow(x, FloatFormat::BF16),
                "bf16 {x:e}"
            );
            assert_eq!(
                u32::from(f64_to_f16_bits(x)),
                narrow(x, FloatFormat::F16),
                "f16 {x:e}"
            );
            assert_eq!(f64_to_f32(x).to_bits(), narrow(x, FloatFormat::F32), "f32 {x:e}");
            nans += usize::from(x.is_nan());
        }
        assert!(nans > 1000, "the cases hold NaNs ({nans})");
    }

    #[test]
    fn f32_to_f16_is_narrow_on_every_exponent_and_tie() {
        let mut rng = SplitMix64::new(9);
        // Every sign and exponent and the top mantissa bits, with the low
        // 13 bits at, around and away from f16's tie.
        for hi in 0..=u16::MAX {
            for lo in [
                0u32,
                1,
                0xfff,
                0x1000,
                0x1001,
                0x1fff,
                0x2000,
                0x3000,
                rng.next_u64() as u32 & 0xffff,
            ] {
                let x = f32::from_bits((u32::from(hi) << 16) | lo);
                if !x.is_nan() {
                    assert_eq!(
                        u32::from(f32_to_f16_bits(x)),
                        narrow(f64::from(x), FloatFormat::F16),
                        "{x:e}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_widening_shortcuts_are_widen_bit_for_bit() {
        for b in 0..=u16::MAX {
            assert_eq!(
                bf16_bits_to_f64(b).to_bits(),
                widen(u32::from(b), FloatFormat::BF16).to_bits()
            );
            assert_eq!(
                f16_bits_to_f64(b).to_bits(),
                widen(u32::from(b), FloatFormat::F16).to_bits()
            );
        }
        let mut rng = SplitMix64::new(3);
        for _ in 0..2_000_000 {
            let x = f32::from_bits(rng.next_u64() as u32);
            assert_eq!(
                f32_to_f64(x).to_bits(),
                widen(x.to_bits(), FloatFormat::F32).to_bits()
            );
        }
    }

    #[test]
    fn double_rounding_trap_rounds_once() {
        // 1 + 2^-8 + 2^-30 is just above the bf16 tie between 1 and
        // 1 + 2^-7; through f32 it would land on the tie and go to 1.
        let x = 1.0039062509313226_f64;
        assert_eq!(x, 1.0 + 2f64.powi(-8) + 2f64.powi(-30));
        assert_eq!(bf16_bits_to_f64(f64_to_bf16_bits(x)), 1.0078125);
    }

    #[test]
    fn int_to_float_rounds_once() {
        let big = Scalar::I32((1 << 24) + 1);
        assert_eq!(big.cast(DType::F32), Ok(Scalar::F32(16777216.0)));
        // 2^24 + 1 is not a bf16 tie (the tie is 2^24 + 2^16), so it rounds
        // down; 2^24 + 2^16 + 1 is just above that tie and rounds up.
        assert_eq!(big.cast(DType::Bf16).map(Scalar::to_f64), Ok(16777216.0));
        let above_tie = Scalar::I32((1 << 24) + (1 << 16) + 1);
        assert_eq!(above_tie.cast(DType::Bf16).map(Scalar::to_f64), Ok(16908288.0));
    }

    #[test]
    fn float_to_int_truncates_or_errs() {
        assert_eq!(Scalar::F64(-2.9).cast(DType::I8), Ok(Scalar::I8(-2)));
        assert_eq!(Scalar::F64(127.99).cast(DType::I8), Ok(Scalar::I8(127)));
        assert_eq!(Scalar::F64(-128.99).cast(DType::I8), Ok(Scalar::I8(-128)));
        let err = |x: f64, to: DType| Scalar::F64(x).cast(to).map_err(|e| e.to_string());
        assert_eq!(
            err(f64::NAN, DType::I32),
            Err("cannot cast nan to i32".to_owned())
        );
        assert_eq!(
            err(f64::NEG_INFINITY, DType::I8),
            Err("cannot cast -inf to i8".to_owned())
        );
        assert_eq!(
            err(3e9, DType::I32),
            Err("cannot cast 3000000000 to i32: out of range".to_owned())
        );
        assert_eq!(
            err(128.0, DType::I8),
            Err("cannot cast 128 to i8: out of range".to_owned())
        );
        // The message names the value the bf16 holds: 3e9 rounded, 179 · 2^24.
        let bf16 = Scalar::Bf16(f64_to_bf16_bits(3e9));
        assert_eq!(
            bf16.cast(DType::I32).map_err(|e| e.to_string()),
            Err("cannot cast 3003121664 to i32: out of range".to_owned())
        );
    }

    #[test]
    fn int_to_int_wraps_and_bool_is_nonzero() {
        assert_eq!(Scalar::I32(300).cast(DType::I8), Ok(Scalar::I8(44)));
        assert_eq!(Scalar::I32(-129).cast(DType::I8), Ok(Scalar::I8(127)));
        assert_eq!(Scalar::I8(-1).cast(DType::I32), Ok(Scalar::I32(-1)));
        assert_eq!(Scalar::Bool(true).cast(DType::F16), Ok(Scalar::F16(0x3c00)));
        assert_eq!(Scalar::F64(f64::NAN).cast(DType::Bool), Ok(Scalar::Bool(true)));
        assert_eq!(Scalar::F64(-0.0).cast(DType::Bool), Ok(Scalar::Bool(false)));
        assert_eq!(Scalar::I32(256).cast(DType::Bool), Ok(Scalar::Bool(true)));
    }

    #[test]
    fn nan_keeps_sign_and_becomes_quiet() {
        // A signalling NaN whose payload lies below bf16's mantissa must not
        // become an infinity.
        let snan = f64::from_bits(0xfff0_0000_0000_0001);
        assert_eq!(narrow(snan, FloatFormat::BF16), 0xffc0);
        assert_eq!(widen(0x7c01, FloatFormat::F16).to_bits(), 0x7ff8_0400_0000_0000);
    }

    #[test]
    fn fast_f32_to_bf16_matches_the_one_rounding_routine() {
        // Every 2^12-th f32 pattern plus the neighbourhoods of ties.
        let mut n = 0;
        for hi in (0u32..=u32::MAX).step_by(4093) {
            for b in [
                hi,
                hi ^ 0x8000,
                hi | 0x7FFF,
                (hi & !0xFFFF) | 0x8000,
                (hi & !0xFFFF) | 0x8001,
            ] {
                let x = f32::from_bits(b);
                let fast = f32_to_bf16(x).to_bits();
                let slow = narrow(f64::from(x), FloatFormat::BF16) as u16;
                assert_eq!(fast, slow, "x = {x:e} ({b:#010x})");
                n += 1;
            }
        }
        assert!(n > 5_000_000);
    }

    #[test]
    fn bf16_widening_is_exact() {
        for b in 0..=u16::MAX {
            let x = bf16::from_bits(b);
            let w = bf16_to_f32(x);
            if w.is_nan() {
                continue;
            }
            assert_eq!(f64::from(w), bf16_bits_to_f64(b));
        }
    }
}
