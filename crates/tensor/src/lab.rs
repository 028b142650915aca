//! The formats lab's float formats (spec §13): any binary format of 1–11
//! exponent bits, 0–52 mantissa bits and any bias, with or without
//! subnormals, and one of three special-value schemes ([`Special`]) — and
//! the one rounding routine, [`round_magnitude`], that rounds an exact
//! value to such a format once, to nearest, ties to even. The dtypes'
//! narrowing (`convert::narrow`) is this routine applied to bf16, f16 and
//! f32, and decoding a pattern to f64 is this routine applied to f64, so
//! there is one rounding in the runtime, not one per use.
//!
//! Values are handled exactly as `significand · 2^scale` with an integer
//! significand; an accumulation step (`a + b`, `a · b`) passes its f64
//! result together with the sign of the error the f64 operation made (its
//! `tail`, from an exact two-sum or a fused multiply-add), which is all a
//! rounding to a format no finer than f64 needs to round the exact result.

use crate::float_format::{FloatFormat, F64_BIAS, F64_EXP_ALL_ONES, F64_MAN_BITS, F64_MAN_MASK};

/// What the largest exponent field and NaN mean (spec §13 `special`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Special {
    /// IEEE 754: the all-ones exponent is ±inf (mantissa 0) and NaN;
    /// overflow gives ±inf.
    Ieee,
    /// OCP's "fn" (finite and NaN): no infinities; the all-ones pattern
    /// (exponent and mantissa) is NaN, every other one finite; overflow
    /// gives NaN, and so does an infinite input.
    Fn,
    /// Every pattern finite: overflow saturates to ±max; a NaN or an
    /// infinite input has no encoding (an error).
    None,
}

impl Special {
    pub fn from_name(name: &str) -> Option<Special> {
        match name {
            "ieee" => Some(Special::Ieee),
            "fn" => Some(Special::Fn),
            "none" => Some(Special::None),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Special::Ieee => "ieee",
            Special::Fn => "fn",
            Special::None => "none",
        }
    }
}

/// A float format of the lab. Fields are private so that every value has
/// passed [`Format::new`]'s checks (or is one of the constants).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Format {
    exp_bits: u32,
    man_bits: u32,
    bias: i32,
    subnormals: bool,
    special: Special,
}

/// The result of rounding a magnitude: a finite pattern (sign excluded),
/// or beyond the largest finite value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounded {
    Finite(u64),
    Overflow,
}

/// The largest bias magnitude accepted: exponents stay far inside `i32`.
const MAX_BIAS: i64 = 1 << 30;

impl Format {
    /// IEEE binary64, the format f64 values are decoded into.
    pub const F64: Format = Format::ieee(11, 52);

    /// The IEEE format of the given widths and the standard bias.
    pub const fn ieee(exp_bits: u32, man_bits: u32) -> Format {
        Format {
            exp_bits,
            man_bits,
            bias: (1 << (exp_bits - 1)) - 1,
            subnormals: true,
            special: Special::Ieee,
        }
    }

    /// The format a dtype stores its elements in (bf16, f16, f32).
    pub const fn of(f: FloatFormat) -> Format {
        Format::ieee(f.exp_bits(), f.man_bits())
    }

    /// A format as `float_format(...)` describes it, or why not.
    pub fn new(
        exp_bits: i64,
        man_bits: i64,
        bias: Option<i64>,
        subnormals: bool,
        special: Special,
    ) -> Result<Format, String> {
        if !(1..=11).contains(&exp_bits) {
            return Err(format!("`exp_bits` must be 1 to 11, not {exp_bits}"));
        }
        if !(0..=52).contains(&man_bits) {
            return Err(format!("`man_bits` must be 0 to 52, not {man_bits}"));
        }
        let bias = bias.unwrap_or((1 << (exp_bits - 1)) - 1);
        if bias.abs() > MAX_BIAS {
            return Err(format!("`bias` must be between -2^30 and 2^30, not {bias}"));
        }
        if special == Special::Ieee && man_bits == 0 {
            return Err("a format with special=\"ieee\" needs at least one mantissa bit (NaN is encoded in the mantissa)".into());
        }
        let f = Format {
            exp_bits: exp_bits as u32,
            man_bits: man_bits as u32,
            bias: bias as i32,
            subnormals,
            special,
        };
        let normal = f.max_pattern() >> f.man_bits != 0;
        if !normal {
            return Err(format!(
                "a format of {exp_bits} exponent bits with special=\"{}\" has no normal numbers",
                special.name()
            ));
        }
        Ok(f)
    }

    pub const fn exp_bits(self) -> u32 {
        self.exp_bits
    }

    pub const fn man_bits(self) -> u32 {
        self.man_bits
    }

    pub const fn bias(self) -> i32 {
        self.bias
    }

    pub const fn subnormals(self) -> bool {
        self.subnormals
    }

    pub const fn special(self) -> Special {
        self.special
    }

    /// Total width of a pattern, sign included.
    pub const fn bits(self) -> u32 {
        1 + self.exp_bits + self.man_bits
    }

    const fn man_mask(self) -> u64 {
        (1 << self.man_bits) - 1
    }

    const fn exp_all_ones(self) -> u64 {
        (1 << self.exp_bits) - 1
    }

    pub const fn sign_bit(self) -> u64 {
        1 << (self.exp_bits + self.man_bits)
    }

    /// The pattern of the largest finite magnitude.
    pub const fn max_pattern(self) -> u64 {
        let m = self.man_bits;
        match self.special {
            Special::Ieee => ((self.exp_all_ones() - 1) << m) | self.man_mask(),
            Special::Fn if m > 0 => (self.exp_all_ones() << m) | (self.man_mask() - 1),
            Special::Fn => (self.exp_all_ones() - 1) << m,
            Special::None => (self.exp_all_ones() << m) | self.man_mask(),
        }
    }

    /// The pattern of +inf (`Ieee`) or of +NaN's canonical form.
    const fn nan_pattern(self) -> u64 {
        match self.special {
            Special::Ieee => (self.exp_all_ones() << self.man_bits) | (1 << (self.man_bits - 1)),
            Special::Fn | Special::None => (self.exp_all_ones() << self.man_bits) | self.man_mask(),
        }
    }

    /// The exact value of a magnitude pattern of a finite number, as
    /// `(significand, scale)`.
    #[inline(always)]
    const fn parts(self, p: u64) -> (u64, i32) {
        let field = p >> self.man_bits;
        let m = p & self.man_mask();
        if field == 0 {
            if self.subnormals {
                (m, 1 - self.bias - self.man_bits as i32)
            } else {
                (0, 0)
            }
        } else {
            (
                m | (1 << self.man_bits),
                field as i32 - self.bias - self.man_bits as i32,
            )
        }
    }

    /// Whether the magnitude pattern `p` is NaN or infinite.
    #[inline(always)]
    const fn special_pattern(self, p: u64) -> bool {
        let field = p >> self.man_bits;
        match self.special {
            Special::Ieee => field == self.exp_all_ones(),
            Special::Fn => p == (self.exp_all_ones() << self.man_bits) | self.man_mask(),
            Special::None => false,
        }
    }

    /// The value of the pattern `p` (its low [`bits`](Self::bits) bits) as
    /// an f64: exact when every value of the format is an f64 (see
    /// [`fits`](Self::fits)), otherwise rounded once to f64.
    pub fn decode(self, p: u64) -> f64 {
        let p = if self.bits() == 64 {
            p
        } else {
            p & ((1 << self.bits()) - 1)
        };
        let negative = p & self.sign_bit() != 0;
        let mag = p & (self.sign_bit() - 1);
        let sign = if negative { 1u64 << 63 } else { 0 };
        if self.special_pattern(mag) {
            let m = mag & self.man_mask();
            let out = match self.special {
                Special::Ieee if m == 0 => F64_EXP_ALL_ONES << F64_MAN_BITS,
                // A NaN keeps its payload's top bits, as `convert::widen`.
                Special::Ieee => {
                    (F64_EXP_ALL_ONES << F64_MAN_BITS)
                        | (1 << (F64_MAN_BITS - 1))
                        | (m << (F64_MAN_BITS - self.man_bits))
                }
                Special::Fn | Special::None => (F64_EXP_ALL_ONES << F64_MAN_BITS) | (1 << (F64_MAN_BITS - 1)),
            };
            return f64::from_bits(sign | out);
        }
        let (sig, scale) = self.parts(mag);
        let out = match round_magnitude(sig, scale, 0, Format::F64) {
            Rounded::Finite(b) => b,
            Rounded::Overflow => F64_EXP_ALL_ONES << F64_MAN_BITS,
        };
        f64::from_bits(sign | out)
    }

    /// The pattern `x` rounds to (spec §13's rounding: once, to nearest,
    /// ties to even, from the exact value of `x`); an error for a NaN or an
    /// infinity in a format with no encoding for it.
    #[inline(always)]
    pub fn encode(self, x: f64) -> Result<u64, String> {
        let bits = x.to_bits();
        let sign = if bits >> 63 == 1 { self.sign_bit() } else { 0 };
        let exp_field = (bits >> F64_MAN_BITS) & F64_EXP_ALL_ONES;
        let man_field = bits & F64_MAN_MASK;
        if exp_field == F64_EXP_ALL_ONES {
            return match (self.special, man_field == 0) {
                (Special::Ieee, true) => Ok(sign | (self.exp_all_ones() << self.man_bits)),
                // The top `man_bits - 1` payload bits survive, quiet.
                (Special::Ieee, false) => {
                    let payload = man_field >> (F64_MAN_BITS - self.man_bits);
                    Ok(sign | self.nan_pattern() | payload)
                }
                (Special::Fn, _) => Ok(sign | self.nan_pattern()),
                (Special::None, _) => Err(format!(
                    "{} has no encoding in a format with special=\"none\" (every pattern is finite)",
                    non_finite_name(x)
                )),
            };
        }
        Ok(sign | self.round_finite(exp_field, man_field))
    }

    /// The magnitude pattern of the finite f64 whose fields are given.
    #[inline(always)]
    fn round_finite(self, exp_field: u64, man_field: u64) -> u64 {
        let (sig, scale) = if exp_field == 0 {
            (man_field, 1 - F64_BIAS - F64_MAN_BITS as i32)
        } else {
            (
                man_field | (1 << F64_MAN_BITS),
                exp_field as i32 - F64_BIAS - F64_MAN_BITS as i32,
            )
        };
        match round_magnitude(sig, scale, 0, self) {
            Rounded::Finite(p) => p,
            Rounded::Overflow => self.overflow_pattern(),
        }
    }

    /// What a magnitude beyond the largest finite value becomes.
    const fn overflow_pattern(self) -> u64 {
        match self.special {
            Special::Ieee => self.exp_all_ones() << self.man_bits,
            Special::Fn => self.nan_pattern(),
            Special::None => self.max_pattern(),
        }
    }

    /// `x` rounded to the format, as an f64 (`round_to` of an f64).
    #[inline(always)]
    pub fn round(self, x: f64) -> Result<f64, String> {
        Ok(self.decode(self.encode(x)?))
    }

    /// The exact value `x + tail` rounded to the format, where `x` is an
    /// f64 result and `tail` the error its operation made (so `|tail|` is
    /// at most half an ulp of `x`): one accumulation step of the
    /// EVERY_STEP model. An infinite `x` is an overflow, whatever the
    /// special values (a finite step result overflowed f64).
    #[inline(always)]
    pub fn round_step(self, x: f64, tail: f64) -> f64 {
        let bits = x.to_bits();
        let negative = bits >> 63 == 1;
        let exp_field = (bits >> F64_MAN_BITS) & F64_EXP_ALL_ONES;
        let man_field = bits & F64_MAN_MASK;
        let mag = if exp_field == F64_EXP_ALL_ONES {
            if man_field != 0 {
                return x;
            }
            self.overflow_pattern()
        } else {
            let (sig, scale) = if exp_field == 0 {
                (man_field, 1 - F64_BIAS - F64_MAN_BITS as i32)
            } else {
                (
                    man_field | (1 << F64_MAN_BITS),
                    exp_field as i32 - F64_BIAS - F64_MAN_BITS as i32,
                )
            };
            // The tail's direction, relative to the magnitude.
            let dir = if tail == 0.0 || tail.is_nan() {
                0
            } else if (tail > 0.0) != negative {
                1
            } else {
                -1
            };
            match round_magnitude(sig, scale, dir, self) {
                Rounded::Finite(p) => p,
                Rounded::Overflow => self.overflow_pattern(),
            }
        };
        let sign = if negative { self.sign_bit() } else { 0 };
        self.decode(sign | mag)
    }

    /// `a + b` rounded once to the format (EVERY_STEP).
    #[inline(always)]
    pub fn add(self, a: f64, b: f64) -> f64 {
        let s = a + b;
        if !s.is_finite() {
            return self.round_step(s, 0.0);
        }
        // Knuth's two-sum: the exact error of the f64 addition.
        let bb = s - a;
        let tail = (a - (s - bb)) + (b - bb);
        self.round_step(s, tail)
    }

    /// `a · b` rounded once to the format (EVERY_STEP's products).
    #[inline(always)]
    pub fn mul(self, a: f64, b: f64) -> f64 {
        let p = a * b;
        if !p.is_finite() {
            return self.round_step(p, 0.0);
        }
        let tail = a.mul_add(b, -p);
        self.round_step(p, tail)
    }

    /// Whether every value of the format is a value of the binary format
    /// of `man_bits` mantissa bits, smallest quantum `2^min_quantum` and
    /// largest finite `max`: then rounding to the format can be done on
    /// (and its result stored in) that type.
    fn fits_in(self, man_bits: u32, min_quantum: i32, max: f64) -> bool {
        self.man_bits <= man_bits
            && 1 - self.bias - self.man_bits as i32 >= min_quantum
            && self.decode(self.max_pattern()) <= max
    }

    /// Whether every value of the format is an f64.
    pub fn fits_f64(self) -> bool {
        self.fits_in(52, -1074, f64::MAX)
    }

    /// Whether every value of the format is an f32 (spec §13: at most 8
    /// exponent and 23 mantissa bits, and its range inside f32's).
    pub fn fits_f32(self) -> bool {
        self.exp_bits <= 8 && self.fits_in(23, -149, f64::from(f32::MAX))
    }

    /// The largest finite value.
    pub fn max(self) -> f64 {
        self.decode(self.max_pattern())
    }

    /// The smallest positive normal value, 2^(1 − bias).
    pub fn min_normal(self) -> f64 {
        self.decode(1 << self.man_bits)
    }

    /// The smallest positive value: the smallest subnormal, or the smallest
    /// normal in a format without subnormals (or without mantissa bits).
    pub fn min_subnormal(self) -> f64 {
        if self.subnormals && self.man_bits > 0 {
            self.decode(1)
        } else {
            self.min_normal()
        }
    }

    /// The distance from 1 to the next larger value, 2^−man_bits.
    pub fn eps(self) -> f64 {
        // 2^-man_bits with man_bits ≤ 52 is a normal f64.
        f64::from_bits(((F64_BIAS - self.man_bits as i32) as u64) << F64_MAN_BITS)
    }

    /// Half the smallest positive value: the largest magnitude that rounds
    /// to zero (a tie goes to zero, the even neighbour).
    pub fn underflow_cliff(self) -> f64 {
        self.min_subnormal() / 2.0
    }

    /// Whether the non-zero finite `x` rounds to zero in this format.
    pub fn underflows(self, x: f64) -> bool {
        x != 0.0 && x.is_finite() && self.encode(x).is_ok_and(|p| p & (self.sign_bit() - 1) == 0)
    }

    /// Whether the finite `x` lies beyond the largest finite value after
    /// rounding (it becomes ±inf, NaN, or saturates).
    pub fn overflows(self, x: f64) -> bool {
        if !x.is_finite() {
            return false;
        }
        let bits = x.to_bits();
        let exp_field = (bits >> F64_MAN_BITS) & F64_EXP_ALL_ONES;
        let (sig, scale) = if exp_field == 0 {
            (bits & F64_MAN_MASK, 1 - F64_BIAS - F64_MAN_BITS as i32)
        } else {
            (
                (bits & F64_MAN_MASK) | (1 << F64_MAN_BITS),
                exp_field as i32 - F64_BIAS - F64_MAN_BITS as i32,
            )
        };
        round_magnitude(sig, scale, 0, self) == Rounded::Overflow
    }
}

/// [`Format::round`] for many values: the same results (tested against it
/// on every vector), found on the f64's bits where they can be — a
/// normal result is the f64 with its mantissa rounded to `man_bits` bits
/// by one integer addition (a carry into the exponent is the next
/// binade), a result below the smallest normal is a multiple of the
/// smallest subnormal, by one exact scaling — and by `round` itself for
/// NaN, infinities, overflow and formats too wide for the shortcut.
#[derive(Clone, Copy, Debug)]
pub struct Rounder {
    f: Format,
    /// f64 mantissa bits below the format's last one.
    shift: u32,
    min_normal: f64,
    half_min_normal: f64,
    max_bits: u64,
    /// 2^−q and 2^q for the smallest subnormal 2^q; `None`: not both are
    /// normal f64s, so the general routine rounds below the normals.
    scale: Option<(f64, f64)>,
    /// The same constants for f32 inputs, when every value of the format
    /// is an f32 ([`Format::fits_f32`]).
    f32: Option<Rounder32>,
}

#[derive(Clone, Copy, Debug)]
struct Rounder32 {
    shift: u32,
    min_normal: f32,
    half_min_normal: f32,
    max_bits: u32,
    scale: Option<(f32, f32)>,
}

impl Rounder {
    /// The shortcut for `f`, whose values must all be f64 values
    /// ([`Format::fits_f64`]; otherwise every value takes the general path).
    pub fn new(f: Format) -> Rounder {
        let q = 1 - f.bias - f.man_bits as i32;
        let pow2 = |e: i32| {
            (-1022..=1023)
                .contains(&e)
                .then(|| f64::from_bits(((e + F64_BIAS) as u64) << F64_MAN_BITS))
        };
        let fits = f.fits_f64();
        Rounder {
            f,
            shift: F64_MAN_BITS - f.man_bits,
            min_normal: if fits { f.min_normal() } else { f64::INFINITY },
            half_min_normal: f.min_normal() / 2.0,
            max_bits: f.max().to_bits(),
            scale: pow2(-q).zip(pow2(q)),
            f32: f.fits_f32().then(|| {
                let pow2 = |e: i32| {
                    (-126..=127)
                        .contains(&e)
                        .then(|| f32::from_bits(((e + 127) as u32) << 23))
                };
                Rounder32 {
                    shift: 23 - f.man_bits,
                    min_normal: f.min_normal() as f32,
                    half_min_normal: (f.min_normal() / 2.0) as f32,
                    max_bits: (f.max() as f32).to_bits(),
                    scale: pow2(-q).zip(pow2(q)),
                }
            }),
        }
    }

    /// `x` rounded to the format, for an f32 `x` and a format whose values
    /// are all f32s: [`round`](Self::round)'s value, on the f32's bits
    /// (the format's values are f32 values, so the conversions are exact;
    /// a NaN keeps the casts' payload rule).
    #[inline(always)]
    pub fn round_f32(&self, x: f32) -> f32 {
        if let Some(c) = &self.f32 {
            let a = x.abs();
            if a >= c.min_normal && a < f32::INFINITY {
                let b = a.to_bits();
                let r = if c.shift == 0 {
                    b
                } else {
                    let half = 1u32 << (c.shift - 1);
                    let lsb = (b >> c.shift) & 1;
                    (b + half - 1 + lsb) & !((1u32 << c.shift) - 1)
                };
                if r <= c.max_bits {
                    return f32::from_bits(r).copysign(x);
                }
            } else if a < c.min_normal {
                if !self.f.subnormals {
                    let r = if a > c.half_min_normal { c.min_normal } else { 0.0 };
                    return r.copysign(x);
                }
                if let Some((up, down)) = c.scale {
                    return ((a * up).round_ties_even() * down).copysign(x);
                }
            }
        }
        let y = self.round(f64::from(x));
        if y.is_nan() {
            // The casts' NaN rule: narrowed by the same routine.
            let p = Format::of(FloatFormat::F32).encode(y).unwrap_or(0);
            f32::from_bits(p as u32)
        } else {
            y as f32
        }
    }

    /// `x` rounded to the format: [`Format::round`]'s value (an error
    /// there, for a NaN or infinite input of a special="none" format, is
    /// NaN here; callers check for such inputs first).
    #[inline(always)]
    pub fn round(&self, x: f64) -> f64 {
        let a = x.abs();
        if a >= self.min_normal && a < f64::INFINITY {
            let b = a.to_bits();
            let r = if self.shift == 0 {
                b
            } else {
                let half = 1u64 << (self.shift - 1);
                let lsb = (b >> self.shift) & 1;
                (b + half - 1 + lsb) & !((1u64 << self.shift) - 1)
            };
            if r <= self.max_bits {
                return f64::from_bits(r).copysign(x);
            }
        } else if a < self.min_normal {
            if !self.f.subnormals {
                let r = if a > self.half_min_normal {
                    self.min_normal
                } else {
                    0.0
                };
                return r.copysign(x);
            }
            if let Some((up, down)) = self.scale {
                return ((a * up).round_ties_even() * down).copysign(x);
            }
        }
        self.f.round(x).unwrap_or(f64::NAN)
    }
}

/// `nan`, `inf` or `-inf`, as twill prints them.
pub fn non_finite_name(x: f64) -> &'static str {
    if x.is_nan() {
        "nan"
    } else if x > 0.0 {
        "inf"
    } else {
        "-inf"
    }
}

/// Rounds the exact magnitude `sig · 2^scale`, plus a tail far below its
/// last bit in direction `tail` (−1, 0, +1: the exact value is a little
/// below, exactly at, or a little above), to `f`: once, to nearest, ties to
/// even. The pattern carries no sign.
///
/// Below the smallest normal the spacing stops shrinking (gradual
/// underflow) when the format has subnormals; without them the only values
/// there are 0 and the smallest normal, and the halfway point goes to 0.
/// A magnitude whose rounding exceeds the largest finite value is an
/// [`Rounded::Overflow`], the tie at the largest value plus half its ulp
/// included when the even neighbour above does not exist as a finite value.
#[inline(always)]
pub fn round_magnitude(sig: u64, scale: i32, tail: i8, f: Format) -> Rounded {
    if sig == 0 {
        return Rounded::Finite(0);
    }
    let m = f.man_bits;
    let top = 63 - sig.leading_zeros() as i32;
    // 2^exponent ≤ value < 2^(exponent + 1).
    let exponent = top + scale;
    let max_pattern = f.max_pattern();
    let max_exponent = (max_pattern >> m) as i32 - f.bias;
    if exponent > max_exponent {
        return Rounded::Overflow;
    }
    let min_exponent = 1 - f.bias;
    if !f.subnormals && exponent < min_exponent {
        // Between 0 and the smallest normal, 2^min_exponent.
        if exponent < min_exponent - 1 {
            return Rounded::Finite(0);
        }
        let at_half = sig.is_power_of_two();
        return if at_half && tail <= 0 {
            Rounded::Finite(0)
        } else {
            Rounded::Finite(1 << m)
        };
    }
    let e = exponent.max(min_exponent);
    // The format's spacing here is 2^quantum; count the value in those units.
    let quantum = e - m as i32;
    let shift = quantum - scale;
    let units = if shift <= 0 {
        // Already a multiple of the spacing (and below 2^(m + 1) units);
        // a tail cannot move it to another value.
        sig << shift.unsigned_abs()
    } else if shift >= 128 {
        0
    } else {
        let s = u128::from(sig);
        let kept = (s >> shift) as u64;
        let dropped = s & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        let up = dropped > half || (dropped == half && (tail > 0 || (tail == 0 && kept & 1 == 1)));
        kept + u64::from(up)
    };
    // `units` includes the implicit one for a normal result, so adding it
    // to the biased exponent minus one gives the pattern, and a rounding
    // that carried into the next binade bumps the exponent by itself; in
    // the subnormal range the base is zero and a carry lands exactly on the
    // smallest normal.
    let base = (e + f.bias - 1) as u64;
    let p = (base << m) + units;
    if p > max_pattern {
        Rounded::Overflow
    } else {
        Rounded::Finite(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(e: i64, m: i64, bias: Option<i64>, sub: bool, special: Special) -> Format {
        Format::new(e, m, bias, sub, special).unwrap()
    }

    #[test]
    fn named_formats_have_their_published_ranges() {
        let e4m3 = fmt(4, 3, None, true, Special::Fn);
        assert_eq!(e4m3.max(), 448.0);
        assert_eq!(e4m3.min_normal(), 2f64.powi(-6));
        assert_eq!(e4m3.min_subnormal(), 2f64.powi(-9));
        let e5m2 = fmt(5, 2, None, true, Special::Ieee);
        assert_eq!(e5m2.max(), 57344.0);
        assert_eq!(fmt(3, 2, None, true, Special::None).max(), 28.0);
        assert_eq!(fmt(2, 3, None, true, Special::None).max(), 7.5);
        assert_eq!(fmt(2, 1, None, true, Special::None).max(), 6.0);
        assert_eq!(Format::of(FloatFormat::BF16).max(), f64::from(half::bf16::MAX));
        assert_eq!(
            fmt(5, 10, None, true, Special::Ieee).underflow_cliff(),
            2f64.powi(-25)
        );
    }

    #[test]
    fn rounding_follows_the_special_scheme() {
        let e4m3 = fmt(4, 3, None, true, Special::Fn);
        // 464 is the tie between 448 (even) and the NaN pattern: 448.
        assert_eq!(e4m3.round(464.0).unwrap(), 448.0);
        assert!(e4m3.round(464.5).unwrap().is_nan());
        assert!(e4m3.round(f64::INFINITY).unwrap().is_nan());
        let e2m1 = fmt(2, 1, None, true, Special::None);
        assert_eq!(e2m1.round(1e9).unwrap(), 6.0);
        assert_eq!(e2m1.round(-7.0).unwrap(), -6.0);
        assert!(e2m1.round(f64::NAN).is_err());
        let e5m2 = fmt(5, 2, None, true, Special::Ieee);
        assert_eq!(e5m2.round(61440.0).unwrap(), f64::INFINITY);
        assert_eq!(e5m2.round(61439.0).unwrap(), 57344.0);
    }

    #[test]
    fn a_format_without_subnormals_flushes_at_half_the_smallest_normal() {
        let f = fmt(4, 3, None, false, Special::Ieee);
        let n = f.min_normal();
        assert_eq!(f.min_subnormal(), n);
        assert_eq!(f.round(n / 2.0).unwrap(), 0.0);
        assert_eq!(f.round(n / 2.0 * (1.0 + f64::EPSILON)).unwrap(), n);
        assert_eq!(f.round(n * 0.9).unwrap(), n);
        assert_eq!(f.round(-n / 4.0).unwrap().to_bits(), (-0.0f64).to_bits());
    }

    #[test]
    fn a_step_rounds_the_exact_result_not_the_f64_one() {
        let bf = Format::of(FloatFormat::BF16);
        // 1 + 2^-8 is the tie between 1 and 1 + 2^-7; a tail above it
        // (here 2^-60, lost by the f64 addition) decides it upward.
        let a = 1.0 + 2f64.powi(-8);
        assert_eq!(bf.round_step(a, 0.0), 1.0);
        assert_eq!(bf.round_step(a, 2f64.powi(-60)), 1.0 + 2f64.powi(-7));
        assert_eq!(bf.round_step(a, -2f64.powi(-60)), 1.0);
        assert_eq!(bf.add(a, 2f64.powi(-60)), 1.0 + 2f64.powi(-7));
        let f32f = Format::of(FloatFormat::F32);
        let (x, y) = (0.1f32, 0.2f32);
        assert_eq!(f32f.add(f64::from(x), f64::from(y)), f64::from(x + y));
        assert_eq!(f32f.mul(f64::from(x), f64::from(y)), f64::from(x * y));
    }

    #[test]
    fn invalid_formats_are_refused() {
        assert!(Format::new(0, 3, None, true, Special::Ieee).is_err());
        assert!(Format::new(12, 3, None, true, Special::Ieee).is_err());
        assert!(Format::new(5, 53, None, true, Special::Ieee).is_err());
        assert!(Format::new(5, 0, None, true, Special::Ieee).is_err());
        assert!(Format::new(1, 3, None, false, Special::Ieee).is_err());
        assert!(Format::new(8, 0, None, true, Special::Fn).is_ok());
        assert!(Format::new(4, 3, Some(1 << 31), true, Special::Fn).is_err());
    }

    #[test]
    fn decoding_inverts_encoding_on_every_pattern_of_small_formats() {
        for (e, m, special) in [
            (4, 3, Special::Fn),
            (5, 2, Special::Ieee),
            (3, 2, Special::None),
            (2, 1, Special::None),
        ] {
            for sub in [true, false] {
                let f = fmt(e, m, Some(3), sub, special);
                for p in 0..(1u64 << f.bits()) {
                    let v = f.decode(p);
                    if v.is_nan() {
                        continue;
                    }
                    let q = f.encode(v).unwrap();
                    let mag = p & (f.sign_bit() - 1);
                    if !sub && mag >> m == 0 {
                        // Exponent field 0 holds only zeros without subnormals.
                        assert_eq!(q & (f.sign_bit() - 1), 0);
                    } else {
                        assert_eq!(q, p, "{f:?} {p:#x} {v}");
                    }
                }
            }
        }
    }
}
