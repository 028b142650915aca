//! Checks the bf16/f16/f32 element printing in `twill_tensor::shortest`
//! against vectors from an independent derivation: `tools/oracle/printing.py`
//! computes the spec's rule with Python's exact `Fraction`s and a textbook
//! round-to-nearest-even, searching candidates by round-trip rather than by
//! interval bounds, and writes `testdata/vectors/printing_{bf16,f16,f32}.txt`.
//! Every bf16 and f16 bit pattern is covered. f32 is also compared with
//! Rust's own shortest formatting (`{:e}`), a second implementation that
//! shares nothing with ours.

// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// Test code picks the cases it checks and treats the rest alike.
#![allow(clippy::wildcard_enum_match_arm)]
// Test code reads fixtures and runs the binary: the core crates' IO rule
// (clippy.toml) is for the interpreter, not its tests.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use twill_tensor::format::shortest_digits;
use twill_tensor::shortest::{
    format_bf16, format_f16, format_f32, shortest_decimal, shortest_parts, FloatFormat,
};

fn vectors_path(name: &str) -> String {
    format!("{}/../../testdata/vectors/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Reads one vector file and checks every line against `shortest_decimal`,
/// returning how many lines were checked. Fails with up to 20 mismatches
/// printed and the total count.
fn check_file(name: &str, format: FloatFormat, hex_digits: usize, min_lines: usize) -> usize {
    let path = vectors_path(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("cannot read {path}: {e}; run `tools/oracle/.venv/bin/python tools/oracle/printing.py`")
    });
    let mut checked = 0usize;
    let mut failures = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let lineno = index + 1;
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let parsed = line.split_once(' ').and_then(|(hex, want)| {
            let well_formed =
                hex.len() == hex_digits && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
            let bits = u32::from_str_radix(hex, 16).ok().filter(|_| well_formed)?;
            Some((bits, want))
        });
        let Some((bits, want)) = parsed else {
            failures.push(format!("{name}:{lineno}: malformed: {line:?}"));
            continue;
        };
        checked += 1;
        let got = shortest_decimal(bits, format);
        if got != want {
            failures.push(format!(
                "{name}:{lineno}: bits {bits:0hex_digits$x}: want {want:?}, got {got:?}"
            ));
        }
    }
    for failure in failures.iter().take(20) {
        eprintln!("{failure}");
    }
    assert!(
        failures.is_empty(),
        "{} of {} lines in {name} failed; first 20 printed above",
        failures.len(),
        checked
    );
    // An emptied or truncated file must not pass by checking nothing.
    assert!(
        checked >= min_lines,
        "only {checked} vectors in {path}; expected at least {min_lines}"
    );
    checked
}

#[test]
fn bf16_every_bit_pattern_matches_oracle() {
    check_file("printing_bf16.txt", FloatFormat::BF16, 4, 65_536);
}

#[test]
fn f16_every_bit_pattern_matches_oracle() {
    check_file("printing_f16.txt", FloatFormat::F16, 4, 65_536);
}

#[test]
fn f32_matches_oracle() {
    check_file("printing_f32.txt", FloatFormat::F32, 8, 50_000);
}

/// Every bit pattern of 24 small formats: details of the rule that no
/// bf16/f16/f32 value happens to depend on (such as the smallest normal's
/// lower gap not being halved) change some small format's output.
#[test]
fn small_formats_every_bit_pattern_matches_oracle() {
    let name = "printing_small.txt";
    let path = vectors_path(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("cannot read {path}: {e}; run `tools/oracle/.venv/bin/python tools/oracle/printing.py`")
    });
    let mut checked = 0usize;
    let mut failures = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let lineno = index + 1;
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut fields = line.splitn(3, ' ');
        let parsed = (|| {
            let (exp, man) = fields.next()?.strip_prefix('e')?.split_once('m')?;
            let format = FloatFormat::new(exp.parse().ok()?, man.parse().ok()?)?;
            let bits = u32::from_str_radix(fields.next()?, 16).ok()?;
            Some((format, bits, fields.next()?))
        })();
        let Some((format, bits, want)) = parsed else {
            failures.push(format!("{name}:{lineno}: malformed: {line:?}"));
            continue;
        };
        checked += 1;
        let got = shortest_decimal(bits, format);
        if got != want {
            failures.push(format!("{name}:{lineno}: {line:?}: got {got:?}"));
        }
    }
    for failure in failures.iter().take(20) {
        eprintln!("{failure}");
    }
    assert!(
        failures.is_empty(),
        "{} of {} lines in {name} failed; first 20 printed above",
        failures.len(),
        checked
    );
    assert!(
        checked >= 15_000,
        "only {checked} vectors in {path}; expected at least 15000"
    );
}

#[test]
fn spec_and_brief_examples() {
    // bf16 0.1 is stored as 0.10009765625; the spec wants "0.1".
    assert_eq!(format_bf16(0x3dcd), "0.1");
    assert_eq!(format_bf16(half::bf16::from_f64(0.1).to_bits()), "0.1");
    // bf16(1/3) is 0.333984375, whose rounding interval is
    // (0.3330078125, 0.3349609375): "0.333" lies below it (it reads back as
    // 0.33203125), so the shortest is "0.334".
    let third = half::bf16::from_f64(1.0 / 3.0);
    assert_eq!(third.to_f64(), 0.333984375);
    assert_eq!(half::bf16::from_f64(0.333).to_f64(), 0.33203125);
    assert_eq!(format_bf16(third.to_bits()), "0.334");
    // f16's largest finite value 65504: 65500 reads back; 65600 would not.
    assert_eq!(format_f16(half::f16::MAX.to_bits()), "65500");
    // f16's smallest subnormal 2^-24 ≈ 5.96e-8: 5e-8 and 6e-8 both read
    // back, 6e-8 is closer.
    assert_eq!(format_f16(0x0001), "6e-8");
    assert_eq!(format_f32(0.1), "0.1");
    assert_eq!(format_f32(16777216.0), "16777216");
    assert_eq!(format_f32(-0.0), "-0");
    assert_eq!(format_bf16(0x8000), "-0");
    assert_eq!(format_f16(0x8000), "-0");
    assert_eq!(format_f32(0.0), "0");
    assert_eq!(format_f32(f32::NAN), "nan");
    assert_eq!(format_f32(f32::INFINITY), "inf");
    assert_eq!(format_f32(f32::NEG_INFINITY), "-inf");
    assert_eq!(format_f16(0xfe01), "nan");
    assert_eq!(format_bf16(0xff80), "-inf");
    // Layout thresholds apply as for f64.
    assert_eq!(format_f32(1e21), "1e+21");
    assert_eq!(format_f32(1e-7), "1e-7");
    assert_eq!(format_f32(0.000001), "0.000001");
    assert_eq!(format_f32(-1.5e-7), "-1.5e-7");
    assert_eq!(format_f32(f32::MAX), "3.4028235e+38");
    assert_eq!(format_f32(f32::from_bits(1)), "1e-45");
    // A decimal tie: 2^21 + 0.25 has ulp 0.25, so 2097152.2 and 2097152.3
    // both read back and are equally close; the even last digit wins. (Built
    // by addition because a literal with more digits than f32's shortest
    // form trips clippy's `excessive_precision`.)
    assert_eq!(format_f32(2_097_152.0 + 0.25), "2097152.2");
    assert_eq!(format_f32(2_097_152.0 + 0.75), "2097152.8");
}

/// Every finite f32 bit pattern in a sweep (a fixed stride through all
/// 2^32, plus the oracle file's patterns) gives the same digits and
/// exponent as Rust's `{:e}`, which prints the shortest round-tripping
/// digits and, among those, the closest.
///
/// The two differ only in exact decimal ties, where Rust's `{:e}` rounds
/// the last digit half up (its Grisu/Dragon shortest mode does not apply
/// ties-to-even there) while the spec asks for the even digit. Every such
/// disagreement is required to be a genuine tie of that kind, so any other
/// difference fails.
#[test]
fn f32_digits_agree_with_rust_core_except_ties() {
    let mut patterns: Vec<u32> = (0..=u32::MAX).step_by(4099).collect();
    let oracle = std::fs::read_to_string(vectors_path("printing_f32.txt")).unwrap_or_default();
    patterns.extend(
        oracle
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split_once(' '))
            .filter_map(|(hex, _)| u32::from_str_radix(hex, 16).ok()),
    );

    let mut compared = 0usize;
    let mut ties = Vec::new();
    let mut failures = Vec::new();
    for &bits in &patterns {
        let x = f32::from_bits(bits);
        if !x.is_finite() || x == 0.0 {
            continue;
        }
        compared += 1;
        let (Some(ours), Some(core)) = (shortest_parts(bits, FloatFormat::F32), shortest_digits(x)) else {
            failures.push(format!("{bits:08x}: no digits"));
            continue;
        };
        if ours == core {
            continue;
        }
        // A tie: same length and exponent, digits differ only in the last
        // place by one, ours even, and the stored value lies exactly halfway
        // (its exact decimal expansion continues with a single 5).
        let same_shape = ours.digits.len() == core.digits.len() && ours.exponent == core.exponent;
        let last = ours.digits.len() - 1;
        let prefix_same = same_shape && ours.digits[..last] == core.digits[..last];
        let halfway = prefix_same && {
            let exact = format!("{:.*e}", 120, f64::from(x.abs()));
            let exact_digits: String = exact.split('e').next().unwrap_or("").replace('.', "");
            let ours_text = std::str::from_utf8(&ours.digits).unwrap_or("");
            let core_text = std::str::from_utf8(&core.digits).unwrap_or("");
            let tail = exact_digits.get(last + 1..).unwrap_or("");
            // The exact expansion starts with the shorter candidate's digits,
            // then a 5 and nothing but zeros.
            let lower = ours_text.min(core_text);
            exact_digits.starts_with(lower) && tail.starts_with('5') && tail[1..].bytes().all(|b| b == b'0')
        };
        let even = (ours.digits[last] - b'0').is_multiple_of(2);
        if halfway && even {
            ties.push(bits);
        } else {
            failures.push(format!(
                "{bits:08x} ({x:e}): ours {:?}e{}, core {:?}e{}",
                String::from_utf8_lossy(&ours.digits),
                ours.exponent,
                String::from_utf8_lossy(&core.digits),
                core.exponent
            ));
        }
    }
    for failure in failures.iter().take(20) {
        eprintln!("{failure}");
    }
    eprintln!(
        "compared {compared} f32 values with core's {{:e}}: {} ties resolved differently (ours even), {} other differences",
        ties.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} f32 digit mismatches with core; first 20 printed above",
        failures.len()
    );
    assert!(compared >= 1_000_000, "only {compared} f32 values compared");
}
