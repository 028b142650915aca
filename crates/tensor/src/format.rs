//! Number formatting: the single place that turns a numeric element into the
//! text every printing path (REPL echo, `print`, tensor display, error
//! messages) shows, so all of them agree digit for digit. It owns the spec's
//! `format_number` rule: the shortest decimal that reads back to the same
//! value, laid out in ECMAScript `Number.prototype.toString` notation, with
//! twill's own spellings `-0`, `nan`, `inf` and `-inf`.
//!
//! The work is split in two: a step that finds the shortest round-tripping
//! digits and decimal exponent ([`shortest_digits`], core's fast formatting,
//! with `shortest`'s exact algorithm on the rare ties it gets wrong), and
//! the dtype-independent [`layout_ecmascript`] of `decimal`, which the
//! narrow dtypes' printing in `shortest` shares.

use std::fmt::LowerExp;

use crate::decimal::{layout_ecmascript, Decimal};

/// Formats an f64 as the spec's `format_number` prescribes.
pub fn format_number(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_owned();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf" } else { "inf" }.to_owned();
    }
    // ECMAScript prints both zeros as "0"; twill keeps the sign visible.
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    // core's shortest formatting is fast and right except on an exact tie
    // between two shortest candidates, where it rounds up instead of to the
    // even digit. A tie at n digits means the value's exact expansion has
    // n + 1 significant digits ending in 5, so only when the correctly
    // rounded (n + 1)-digit form ends in 5 is the exact algorithm needed.
    let fast = shortest_digits(x.abs());
    let tie_possible = fast.as_ref().is_none_or(|d| {
        let text = format!("{:.*e}", d.digits.len(), x.abs());
        text.split_once('e').is_some_and(|(m, _)| m.ends_with('5'))
    });
    let digits = if tie_possible {
        crate::shortest::shortest_f64_parts(x).or(fast)
    } else {
        fast
    };
    match digits {
        Some(d) => layout_ecmascript(x.is_sign_negative(), &d.digits, d.exponent),
        // core's `{:e}` always yields `<digits>e<exp>` for finite values, so
        // this is unreachable; Display still round-trips, which beats a panic.
        None => x.to_string(),
    }
}

/// The shortest digits that read back to `x`, choosing the closest candidate
/// when several qualify, for any type whose `{:e}` core implements with its
/// shortest-round-trip algorithm (f64 and f32 today).
///
/// Returns `None` for NaN and infinities, which have no digits. The sign is
/// dropped: callers decide how to show it. Zero gives the single digit `0`.
pub fn shortest_digits<T: LowerExp>(x: T) -> Option<Decimal> {
    let text = format!("{x:e}");
    let text = text.strip_prefix('-').unwrap_or(&text);
    let (mantissa, exponent) = text.split_once('e')?;
    let exponent: i32 = exponent.parse().ok()?;
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    // Reject anything but `d` or `d.ddd` so a surprise from core can never be
    // laid out as if it were a number.
    if int_part.len() != 1 || !mantissa.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    if !frac_part.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut digits = Vec::with_capacity(1 + frac_part.len());
    digits.extend_from_slice(int_part.as_bytes());
    digits.extend_from_slice(frac_part.as_bytes());
    Some(Decimal { digits, exponent })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_examples() {
        let cases: &[(f64, &str)] = &[
            (0.000001, "0.000001"),
            (123.5, "123.5"),
            (100000000000000000000.0, "100000000000000000000"),
            (1.5e-7, "1.5e-7"),
            (1e21, "1e+21"),
            (-0.0, "-0"),
            (0.0, "0"),
            (f64::NAN, "nan"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (0.1, "0.1"),
            (1e-7, "1e-7"),
            (123456789012345680000.0, "123456789012345680000"),
            (-123.5, "-123.5"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1.0, "1"),
            (-1.5e-7, "-1.5e-7"),
        ];
        for &(x, want) in cases {
            assert_eq!(format_number(x), want, "format_number({x:?})");
        }
    }

    #[test]
    fn shortest_digits_parts() {
        assert_eq!(
            shortest_digits(1.5e-7_f64),
            Some(Decimal {
                digits: b"15".to_vec(),
                exponent: -7
            })
        );
        assert_eq!(
            shortest_digits(0.1_f32),
            Some(Decimal {
                digits: b"1".to_vec(),
                exponent: -1
            })
        );
        assert_eq!(shortest_digits(f64::NAN), None);
        assert_eq!(shortest_digits(f64::NEG_INFINITY), None);
    }
}
