//! Decimal layout: a decimal as digits and an exponent ([`Decimal`]), and
//! the one routine that writes it out in ECMAScript `Number::toString`
//! notation ([`layout_ecmascript`]). Every printing path ends here — f64's
//! `format_number` and the narrow dtypes' shortest printing alike — so the
//! choice between plain and exponential notation is made in one place. It
//! depends on nothing else in the crate: the algorithms that find the
//! digits (`format`, `shortest`) build on it.

/// A positive decimal `d.ddd × 10^exponent`, with `digits` as ASCII bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decimal {
    /// ASCII digits, most significant first; the point sits after the first.
    pub digits: Vec<u8>,
    /// Power of ten of the first digit (scientific-notation exponent).
    pub exponent: i32,
}

/// Lays out `±d.ddd × 10^exponent` (ASCII `digits`, point after the first)
/// the way ECMAScript `Number::toString` does, steps 6–10 of the algorithm:
/// with k digits and n = exponent + 1,
/// - k ≤ n ≤ 21: the digits then n − k zeros (`100000000000000000000`);
/// - 0 < n ≤ 21: the digits with a point after the n-th (`123.5`);
/// - −6 < n ≤ 0: `0.`, then −n zeros, then the digits (`0.000001`);
/// - otherwise exponential: `1e+21`, `1.5e-7`.
///
/// Leading and trailing zero digits are tolerated and normalised away, so
/// callers with fixed-width digit buffers need not trim. No digits, or only
/// zeros, gives `0` (or `-0`, since twill shows the sign of zero).
pub fn layout_ecmascript(negative: bool, digits: &[u8], exponent: i32) -> String {
    let lead = digits.iter().take_while(|&&d| d == b'0').count();
    let digits = &digits[lead..];
    let trail = digits.iter().rev().take_while(|&&d| d == b'0').count();
    let digits = &digits[..digits.len() - trail];

    let mut out = String::with_capacity(digits.len() + 24);
    if negative {
        out.push('-');
    }
    if digits.is_empty() {
        out.push('0');
        return out;
    }

    // i64 so that exponents near i32's ends cannot overflow when shifted.
    let k = digits.len() as i64;
    let n = i64::from(exponent) - lead as i64 + 1;
    let push_digits = |out: &mut String, ds: &[u8]| out.extend(ds.iter().map(|&d| char::from(d)));

    if k <= n && n <= 21 {
        push_digits(&mut out, digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        for (i, &d) in digits.iter().enumerate() {
            if i as i64 == n {
                out.push('.');
            }
            out.push(char::from(d));
        }
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        push_digits(&mut out, digits);
    } else {
        let mut rest = digits.iter();
        if let Some(&first) = rest.next() {
            out.push(char::from(first));
        }
        if k > 1 {
            out.push('.');
            out.extend(rest.map(|&d| char::from(d)));
        }
        let e = n - 1;
        out.push('e');
        out.push(if e < 0 { '-' } else { '+' });
        out.push_str(&e.unsigned_abs().to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_thresholds() {
        assert_eq!(layout_ecmascript(false, b"1", -7), "1e-7");
        assert_eq!(layout_ecmascript(false, b"1", -6), "0.000001");
        assert_eq!(layout_ecmascript(false, b"1", 20), "100000000000000000000");
        assert_eq!(layout_ecmascript(false, b"1", 21), "1e+21");
        assert_eq!(layout_ecmascript(false, b"15", 0), "1.5");
        assert_eq!(layout_ecmascript(true, b"25", -1), "-0.25");
    }

    #[test]
    fn layout_normalises_and_never_panics() {
        assert_eq!(layout_ecmascript(false, b"001500", 2), "1.5");
        assert_eq!(layout_ecmascript(true, b"", 7), "-0");
        assert_eq!(layout_ecmascript(false, b"000", 7), "0");
        assert_eq!(layout_ecmascript(false, b"12", i32::MAX), "1.2e+2147483647");
        assert_eq!(layout_ecmascript(false, b"12", i32::MIN), "1.2e-2147483648");
        assert_eq!(layout_ecmascript(false, b"012", i32::MIN), "1.2e-2147483649");
    }
}
