//! Shortest decimal printing for the narrow float dtypes (bf16, f16, f32):
//! the spec's rule that an element prints as the shortest decimal which
//! rounds to nearest-even, in the element's own dtype, back to the stored
//! value — the closest such decimal, and on an exact tie the one whose last
//! digit is even. Going through f64 would be wrong: `bf16` 0.1 is
//! 0.10009765625 as an f64, and f64's shortest digits would print all of
//! them. One exact algorithm serves every format, parameterised by its
//! field widths ([`FloatFormat`]), so the three dtypes cannot drift apart;
//! it uses big integers because the decimals involved (f32 subnormals carry
//! over a hundred significant digits) do not fit any machine type. Layout
//! into ECMAScript notation is [`layout_ecmascript`]'s job, shared with f64.

use num_bigint::BigUint;

use crate::decimal::{layout_ecmascript, Decimal};
pub use crate::float_format::FloatFormat;
use crate::float_format::{F64_BIAS, F64_EXP_ALL_ONES, F64_MAN_BITS, F64_MAN_MASK};

/// What a bit pattern holds, with finite nonzero values as `m · 2^e`.
enum Decoded {
    Nan,
    Infinite {
        negative: bool,
    },
    Zero {
        negative: bool,
    },
    Finite {
        negative: bool,
        /// The full significand, hidden bit included; never zero.
        m: u64,
        e: i32,
        /// True at a power of two above the smallest normal, where the
        /// next value down is half as far away as the next value up.
        lower_gap_halved: bool,
    },
}

fn decode(bits: u32, format: FloatFormat) -> Decoded {
    let man_bits = format.man_bits();
    let exp_mask = format.exp_all_ones();
    let negative = bits & format.sign_bit() != 0;
    let field = (bits >> man_bits) & exp_mask;
    let fraction = u64::from(bits & ((1u32 << man_bits) - 1));
    // i32 throughout: exponents of formats up to 10 exponent bits and 29
    // fraction bits stay far inside its range.
    let bias = format.bias();
    let man = man_bits as i32;
    if field == exp_mask {
        return if fraction == 0 {
            Decoded::Infinite { negative }
        } else {
            Decoded::Nan
        };
    }
    if field == 0 {
        if fraction == 0 {
            return Decoded::Zero { negative };
        }
        // Subnormals share the smallest normal's ulp, so their spacing is
        // uniform down to zero and neither gap is halved.
        return Decoded::Finite {
            negative,
            m: fraction,
            e: 1 - bias - man,
            lower_gap_halved: false,
        };
    }
    Decoded::Finite {
        negative,
        m: (1u64 << man_bits) | fraction,
        e: field as i32 - bias - man,
        lower_gap_halved: fraction == 0 && field > 1,
    }
}

/// Formats the element stored as `bits` in `format` by the spec's printing
/// rule: `nan`, `inf`, `-inf`, `-0`, or the shortest closest round-tripping
/// decimal in ECMAScript notation. Bits above the format's width are
/// ignored, so any `u32` is accepted.
pub fn shortest_decimal(bits: u32, format: FloatFormat) -> String {
    let bits = format.mask(bits);
    match decode(bits, format) {
        Decoded::Nan => "nan".to_owned(),
        Decoded::Infinite { negative } => if negative { "-inf" } else { "inf" }.to_owned(),
        Decoded::Zero { negative } => if negative { "-0" } else { "0" }.to_owned(),
        Decoded::Finite {
            negative,
            m,
            e,
            lower_gap_halved,
        } => {
            let d = shortest_parts_of(m, e, lower_gap_halved);
            layout_ecmascript(negative, &d.digits, d.exponent)
        }
    }
}

/// The digits and exponent [`shortest_decimal`] lays out, without the sign;
/// `None` for NaN and infinities, a single `0` for zeros. Exposed so tests
/// can compare digits with other shortest-printing implementations.
pub fn shortest_parts(bits: u32, format: FloatFormat) -> Option<Decimal> {
    match decode(format.mask(bits), format) {
        Decoded::Nan | Decoded::Infinite { .. } => None,
        Decoded::Zero { .. } => Some(Decimal {
            digits: b"0".to_vec(),
            exponent: 0,
        }),
        Decoded::Finite {
            m,
            e,
            lower_gap_halved,
            ..
        } => Some(shortest_parts_of(m, e, lower_gap_halved)),
    }
}

/// The shortest, closest (ties to even) digits of a finite nonzero f64,
/// by the same exact algorithm; `None` for zeros, NaN and infinities.
pub fn shortest_f64_parts(x: f64) -> Option<Decimal> {
    if !x.is_finite() || x == 0.0 {
        return None;
    }
    let bits = x.to_bits();
    let field = ((bits >> F64_MAN_BITS) & F64_EXP_ALL_ONES) as i32;
    let fraction = bits & F64_MAN_MASK;
    let man = F64_MAN_BITS as i32;
    let (m, e) = if field == 0 {
        (fraction, 1 - F64_BIAS - man)
    } else {
        (fraction | (1u64 << F64_MAN_BITS), field - F64_BIAS - man)
    };
    // At a power of two the gap to the next value below is half the gap
    // above (except at the smallest normal, whose neighbour below is the
    // largest subnormal, one ulp away).
    let lower_gap_halved = field > 1 && fraction == 0;
    Some(shortest_parts_of(m, e, lower_gap_halved))
}

/// Formats a bf16 element given its bits.
pub fn format_bf16(bits: u16) -> String {
    shortest_decimal(u32::from(bits), FloatFormat::BF16)
}

/// Formats an f16 element given its bits.
pub fn format_f16(bits: u16) -> String {
    shortest_decimal(u32::from(bits), FloatFormat::F16)
}

/// Formats an f32 element.
pub fn format_f32(x: f32) -> String {
    shortest_decimal(x.to_bits(), FloatFormat::F32)
}

/// The rule for a positive finite `v = m · 2^e` (m ≥ 1).
///
/// Everything is exact integer arithmetic in one unit, `u`, small enough
/// that the value, both rounding boundaries and every decimal candidate are
/// whole multiples of it. Write `v = N · 10^p` with integer N: for e ≥ 0,
/// N = m·2^e and p = 0; for e < 0, N = m·5^−e and p = e (multiplying by 5^−e
/// turns 2^e into 10^e). Take `u = 10^p / 4` and `g` = a quarter ulp in
/// units of u, which is 2^e or 5^−e respectively. Then v is 4N; the upper
/// boundary, halfway to the next value, is 4N + 2g — for the largest finite
/// value that is the overflow threshold, beyond which values round to
/// infinity, so no special case is needed; the lower boundary is 4N − 2g, or
/// 4N − g where the gap below is halved. Round-to-nearest-even sends a
/// decimal lying exactly on a boundary to v only if v's significand is even,
/// so boundaries count as inside exactly then.
///
/// The n-significant-digit decimals nearest v are then the first n digits
/// of N (truncated, `d`) and that plus one unit in the n-th place; any
/// other n-digit decimal in the interval would be further from v than one
/// of these two on the same side, so these two decide each length. The
/// loop ends by n = digits(N) at the latest, where d·10^(L−n) = N is v
/// itself and certainly qualifies.
fn shortest_parts_of(m: u64, e: i32, lower_gap_halved: bool) -> Decimal {
    let (n_exact, g, p) = if e >= 0 {
        let g = BigUint::from(1u8) << e.unsigned_abs();
        (BigUint::from(m) * &g, g, 0i32)
    } else {
        let g = BigUint::from(5u8).pow(e.unsigned_abs());
        (BigUint::from(m) * &g, g, e)
    };
    let value = &n_exact << 2u8;
    let lower = &g * (4 * m - if lower_gap_halved { 1 } else { 2 });
    let upper = &g * (4 * m + 2);
    let inclusive = m.is_multiple_of(2);

    let n_digits = n_exact.to_string();
    let len = n_digits.len() as u32;
    let ten = BigUint::from(10u8);
    for n in 1..=len {
        let place = ten.pow(len - n); // one unit in the n-th digit, in units of 10^p
        let d = &n_exact / &place;
        let below_gap = (&n_exact % &place) << 2u8; // v minus the lower candidate, in u
        if below_gap == BigUint::ZERO {
            return decimal(d, len - n, p);
        }
        // Neither subtraction can underflow: the remainder is below both
        // `place` and N itself.
        let above_gap = (&place << 2u8) - &below_gap;
        let below = &value - &below_gap;
        let above = &value + &above_gap;
        let below_ok = below > lower || (inclusive && below == lower);
        let above_ok = above < upper || (inclusive && above == upper);
        let take_above = match (below_ok, above_ok) {
            (false, false) => continue,
            (true, false) => false,
            (false, true) => true,
            // Both round to v: the closer wins; on a tie the two differ by
            // one in the last digit, so exactly one of them is even.
            (true, true) => match above_gap.cmp(&below_gap) {
                std::cmp::Ordering::Less => true,
                std::cmp::Ordering::Greater => false,
                std::cmp::Ordering::Equal => d.bit(0),
            },
        };
        let chosen = if take_above { d + 1u8 } else { d };
        return decimal(chosen, len - n, p);
    }
    // Unreachable: at n = len the remainder is zero and the loop returns v
    // itself. Returning v's exact digits keeps this total without a panic.
    decimal(n_exact, 0, p)
}

/// `d · 10^(shift + p)` as digits with the exponent of the first digit.
/// Trailing zeros are dropped so the result is canonical: rounding up from
/// `99…9` gives `10…0`, which is the one-digit decimal `1` one place higher.
fn decimal(d: BigUint, shift: u32, p: i32) -> Decimal {
    let mut digits = d.to_string().into_bytes();
    // i64 arithmetic then saturation: values here are bounded by the
    // formats' ranges (|exponent| < 400), so saturation never bites.
    let exponent = digits.len() as i64 - 1 + i64::from(shift) + i64::from(p);
    let exponent = exponent.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
    // Keep at least one digit, although d ≥ 1 means some digit is nonzero.
    while digits.len() > 1 && digits.last() == Some(&b'0') {
        digits.pop();
    }
    Decimal { digits, exponent }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 6-bit format (1 sign, 3 exponent, 2 fraction bits) small enough to
    /// reason about by hand: 1.25 = 0b1.01 has ulp 0.25, so its interval is
    /// [1.125, 1.375] (its significand 5 is odd, so open). 1.2 and 1.3 both
    /// lie inside and are equally close, and the tie goes to the even 1.2.
    #[test]
    fn tie_goes_to_even_last_digit() {
        let tiny = FloatFormat::new(3, 2).unwrap();
        // 1.25: sign 0, exponent field 0b011 (3, the bias), fraction 0b01.
        assert_eq!(shortest_decimal(0b001101, tiny), "1.2");
        // 1.75 = 0b1.11: 1.7 and 1.8 tie, 1.8 is even.
        assert_eq!(shortest_decimal(0b001111, tiny), "1.8");
        // 1.5 = 0b1.10: interval [1.375, 1.625] holds 1.5 but neither 1 nor 2.
        assert_eq!(shortest_decimal(0b001110, tiny), "1.5");
    }

    #[test]
    fn bits_above_the_width_are_ignored() {
        assert_eq!(shortest_decimal(0xffff_3dcd, FloatFormat::BF16), "0.1");
    }
}
