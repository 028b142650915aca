//! Checks the conversions in `convert` bit for bit against vectors from an
//! exact rational reference (`tools/oracle/casts.py`, cross-checked there
//! against numpy and ml_dtypes), and checks by itself the properties that
//! need no oracle: every bf16 and f16 pattern survives widening and
//! narrowing, and narrowing to f32 agrees with the hardware's `x as f32`.
//!
//! Each file must hold a minimum number of vectors, so an emptied or
//! truncated file fails instead of passing without checking anything.

// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// Test code picks the cases it checks and treats the rest alike.
#![allow(clippy::wildcard_enum_match_arm)]
// Test code reads fixtures and runs the binary: the core crates' IO rule
// (clippy.toml) is for the interpreter, not its tests.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use twill_tensor::convert::{
    bf16_bits_to_f64, f16_bits_to_f64, f32_to_f64, f64_to_bf16_bits, f64_to_f16_bits, f64_to_f32, narrow,
    widen, FloatFormat, Scalar,
};
use twill_tensor::DType;

fn vector_path(name: &str) -> String {
    format!("{}/../../testdata/vectors/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Reads a vector file and hands each data line, split on spaces, to
/// `check`, which returns the mismatches it finds on that line. Prints up
/// to 20 failures, then fails with their count, or with too few vectors.
fn check_file(name: &str, min_vectors: usize, mut check: impl FnMut(&[&str]) -> Vec<String>) {
    let path = vector_path(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("cannot read {path}: {e}; run `tools/oracle/.venv/bin/python tools/oracle/casts.py`")
    });
    let mut checked = 0usize;
    let mut failures = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        checked += 1;
        let fields: Vec<&str> = line.split(' ').collect();
        for failure in check(&fields) {
            failures.push(format!("{name}:{}: {line}: {failure}", index + 1));
        }
    }
    for failure in failures.iter().take(20) {
        eprintln!("{failure}");
    }
    assert!(
        failures.is_empty(),
        "{} mismatches in {checked} vectors of {name}; first 20 printed above",
        failures.len()
    );
    assert!(
        checked >= min_vectors,
        "only {checked} vectors in {name}; expected at least {min_vectors}"
    );
}

/// A lowercase hex field of exactly `digits` digits, or a failure message.
fn hex(field: Option<&&str>, digits: usize) -> Result<u64, String> {
    let field = field.ok_or("missing field")?;
    let well_formed = field.len() == digits && field.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    match u64::from_str_radix(field, 16) {
        Ok(bits) if well_formed => Ok(bits),
        _ => Err(format!(
            "malformed field {field:?} (want {digits} lowercase hex digits)"
        )),
    }
}

fn is_nan(bits: u32, fmt: FloatFormat) -> bool {
    let exp_all_ones = (1u32 << fmt.exp_bits()) - 1;
    (bits >> fmt.man_bits()) & exp_all_ones == exp_all_ones && bits & ((1 << fmt.man_bits()) - 1) != 0
}

/// What `narrow(widen(p))` must give: `p`, or `p` quieted for a NaN.
fn round_trip_expectation(p: u32, fmt: FloatFormat) -> u32 {
    if is_nan(p, fmt) {
        p | 1 << (fmt.man_bits() - 1)
    } else {
        p
    }
}

fn compare(what: &str, got: u64, want: u64, digits: usize, out: &mut Vec<String>) {
    if got != want {
        out.push(format!("{what}: got {got:0digits$x}, want {want:0digits$x}"));
    }
}

#[test]
fn widening_matches_vectors() {
    check_file("casts_widen.txt", 65_536, |f| {
        let mut out = Vec::new();
        let (Ok(p), Ok(bf16), Ok(f16)) = (hex(f.first(), 4), hex(f.get(1), 16), hex(f.get(2), 16)) else {
            return vec!["malformed line".to_owned()];
        };
        if f.len() != 3 {
            return vec![format!("want 3 fields, got {}", f.len())];
        }
        let p16 = p as u16;
        compare("widen bf16", bf16_bits_to_f64(p16).to_bits(), bf16, 16, &mut out);
        compare("widen f16", f16_bits_to_f64(p16).to_bits(), f16, 16, &mut out);
        compare(
            "Scalar::Bf16.to_f64",
            Scalar::Bf16(p16).to_f64().to_bits(),
            bf16,
            16,
            &mut out,
        );
        compare(
            "Scalar::F16.to_f64",
            Scalar::F16(p16).to_f64().to_bits(),
            f16,
            16,
            &mut out,
        );
        for (fmt, wide, name) in [(FloatFormat::BF16, bf16, "bf16"), (FloatFormat::F16, f16, "f16")] {
            let back = narrow(f64::from_bits(wide), fmt);
            let want = round_trip_expectation(p as u32, fmt);
            compare(
                &format!("narrow back to {name}"),
                back.into(),
                want.into(),
                4,
                &mut out,
            );
        }
        out
    });
}

#[test]
fn narrowing_from_f64_matches_vectors() {
    check_file("casts_narrow.txt", 110_000, |f| {
        let mut out = Vec::new();
        if f.len() != 4 {
            return vec![format!("want 4 fields, got {}", f.len())];
        }
        let (Ok(x), Ok(bf16), Ok(f16), Ok(f32)) = (
            hex(f.first(), 16),
            hex(f.get(1), 4),
            hex(f.get(2), 4),
            hex(f.get(3), 8),
        ) else {
            return vec!["malformed line".to_owned()];
        };
        let x = f64::from_bits(x);
        compare(
            "narrow bf16",
            narrow(x, FloatFormat::BF16).into(),
            bf16,
            4,
            &mut out,
        );
        compare("narrow f16", narrow(x, FloatFormat::F16).into(), f16, 4, &mut out);
        compare("narrow f32", narrow(x, FloatFormat::F32).into(), f32, 8, &mut out);
        compare("f64_to_bf16_bits", f64_to_bf16_bits(x).into(), bf16, 4, &mut out);
        compare("f64_to_f16_bits", f64_to_f16_bits(x).into(), f16, 4, &mut out);
        compare("f64_to_f32", f64_to_f32(x).to_bits().into(), f32, 8, &mut out);
        for (dtype, want, digits) in [(DType::Bf16, bf16, 4), (DType::F16, f16, 4), (DType::F32, f32, 8)] {
            match Scalar::F64(x).cast(dtype) {
                Ok(s) if s.dtype() == dtype => compare(
                    &format!("cast f64 to {dtype}"),
                    s.to_bits(),
                    want,
                    digits,
                    &mut out,
                ),
                other => out.push(format!("cast f64 to {dtype}: got {other:?}")),
            }
        }
        out
    });
}

#[test]
fn narrowing_from_f32_matches_vectors() {
    check_file("casts_narrow_f32.txt", 100_000, |f| {
        let mut out = Vec::new();
        if f.len() != 3 {
            return vec![format!("want 3 fields, got {}", f.len())];
        }
        let (Ok(x), Ok(bf16), Ok(f16)) = (hex(f.first(), 8), hex(f.get(1), 4), hex(f.get(2), 4)) else {
            return vec!["malformed line".to_owned()];
        };
        let x = f32::from_bits(x as u32);
        compare(
            "narrow bf16",
            narrow(f32_to_f64(x), FloatFormat::BF16).into(),
            bf16,
            4,
            &mut out,
        );
        compare(
            "narrow f16",
            narrow(f32_to_f64(x), FloatFormat::F16).into(),
            f16,
            4,
            &mut out,
        );
        for (dtype, want) in [(DType::Bf16, bf16), (DType::F16, f16)] {
            match Scalar::F32(x).cast(dtype) {
                Ok(s) if s.dtype() == dtype => {
                    compare(&format!("cast f32 to {dtype}"), s.to_bits(), want, 4, &mut out)
                }
                other => out.push(format!("cast f32 to {dtype}: got {other:?}")),
            }
        }
        out
    });
}

/// Hex digits a dtype's storage bits are written with in casts_scalar.txt.
fn digits(dtype: DType) -> usize {
    match dtype {
        DType::Bool => 1,
        DType::I8 => 2,
        DType::Bf16 | DType::F16 => 4,
        DType::I32 | DType::F32 => 8,
        DType::F64 => 16,
    }
}

#[test]
fn scalar_casts_match_vectors() {
    let mut errors = 0usize;
    let mut pairs = std::collections::BTreeSet::new();
    check_file("casts_scalar.txt", 30_000, |f| {
        let mut out = Vec::new();
        if f.len() != 4 {
            return vec![format!("want 4 fields, got {}", f.len())];
        }
        let (Some(src), Some(dst)) = (DType::from_name(f[0]), DType::from_name(f[2])) else {
            return vec!["unknown dtype".to_owned()];
        };
        let Ok(bits) = hex(f.get(1), digits(src)) else {
            return vec!["malformed source bits".to_owned()];
        };
        pairs.insert((src, dst));
        let source = Scalar::from_bits(src, bits);
        if source.to_bits() != bits {
            out.push(format!(
                "from_bits/to_bits do not round-trip: {:x}",
                source.to_bits()
            ));
        }
        let got = source.cast(dst);
        if f[3] == "error" {
            errors += 1;
            match got {
                Err(e) if e.to == dst && e.value.to_bits() == source.to_f64().to_bits() => {}
                other => out.push(format!(
                    "want an error naming the source value and {dst}, got {other:?}"
                )),
            }
            return out;
        }
        let Ok(want) = hex(f.get(3), digits(dst)) else {
            return vec!["malformed target bits".to_owned()];
        };
        match got {
            Ok(s) if s.dtype() == dst => compare("cast", s.to_bits(), want, digits(dst), &mut out),
            other => out.push(format!("got {other:?}")),
        }
        out
    });
    // The file must exercise every ordered pair of dtypes and the error path.
    assert_eq!(
        pairs.len(),
        49,
        "casts_scalar.txt covers only {} of the 49 dtype pairs",
        pairs.len()
    );
    assert!(errors >= 100, "casts_scalar.txt has only {errors} error cases");
}

#[test]
fn every_bf16_and_f16_pattern_round_trips() {
    let mut failures = Vec::new();
    for (fmt, name) in [(FloatFormat::BF16, "bf16"), (FloatFormat::F16, "f16")] {
        for p in 0..=u16::MAX {
            let p = u32::from(p);
            let wide = widen(p, fmt);
            let back = narrow(wide, fmt);
            let want = round_trip_expectation(p, fmt);
            if back != want || wide.is_nan() != is_nan(p, fmt) {
                failures.push(format!(
                    "{name} {p:04x}: widened {:016x}, narrowed back {back:04x}",
                    wide.to_bits()
                ));
            }
        }
    }
    for failure in failures.iter().take(20) {
        eprintln!("{failure}");
    }
    assert!(
        failures.is_empty(),
        "{} patterns fail to round-trip; first 20 printed above",
        failures.len()
    );
}

/// `x as f32` is the hardware's conversion, an oracle independent of both
/// the Rust code and the Python reference. On a NaN Rust leaves the result's
/// payload (and sign) to the platform, so only NaN-ness is compared there.
#[test]
fn narrowing_to_f32_agrees_with_as_cast() {
    let mut checked = 0usize;
    let mut failures = Vec::new();
    for name in ["casts_narrow.txt", "casts_scalar.txt"] {
        let text = std::fs::read_to_string(vector_path(name)).unwrap_or_default();
        let inputs = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| match name {
                "casts_narrow.txt" => l.split(' ').next(),
                _ => l.strip_prefix("f64 ").and_then(|rest| rest.split(' ').next()),
            });
        for field in inputs {
            let Ok(bits) = u64::from_str_radix(field, 16) else {
                continue;
            };
            let x = f64::from_bits(bits);
            checked += 1;
            let ours = f64_to_f32(x);
            let hardware = x as f32;
            let agree = if hardware.is_nan() {
                ours.is_nan()
            } else {
                ours.to_bits() == hardware.to_bits()
            };
            if !agree {
                failures.push(format!(
                    "{bits:016x}: narrow {:08x}, as f32 {:08x}",
                    ours.to_bits(),
                    hardware.to_bits()
                ));
            }
        }
    }
    for failure in failures.iter().take(20) {
        eprintln!("{failure}");
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} inputs disagree with `as f32`",
        failures.len()
    );
    assert!(
        checked >= 110_000,
        "only {checked} f64 inputs checked against `as f32`"
    );
}

/// `DType::float_info` and `DType::int_info` (`finfo`, `iinfo`) against
/// NumPy's and ml_dtypes' own (`tools/oracle/dtype_info.py`), every field.
#[test]
fn dtype_limits_match_numpy_and_ml_dtypes() {
    let mut seen = Vec::new();
    check_file("dtype_info.txt", 30, |f| {
        let (Some(kind), Some(dt), Some(field)) = (f.first(), f.get(1), f.get(2)) else {
            return vec!["short line".into()];
        };
        let Some(d) = DType::from_name(dt) else {
            return vec![format!("unknown dtype {dt}")];
        };
        seen.push((kind.to_string(), d));
        let got = match (*kind, d.float_info(), d.int_info()) {
            ("finfo", Some(i), _) => match *field {
                "bits" => i.bits.to_string(),
                name => {
                    let v = match name {
                        "eps" => i.eps,
                        "max" => i.max,
                        "min" => i.min,
                        "tiny" => i.tiny,
                        "smallest_subnormal" => i.smallest_subnormal,
                        other => return vec![format!("unknown field {other}")],
                    };
                    format!("{:016x}", v.to_bits())
                }
            },
            ("iinfo", _, Some(i)) => match *field {
                "min" => i.min.to_string(),
                "max" => i.max.to_string(),
                "bits" => i.bits.to_string(),
                other => return vec![format!("unknown field {other}")],
            },
            _ => return vec![format!("{dt} has no {kind}")],
        };
        match f.get(3) {
            Some(want) if *want == got => vec![],
            want => vec![format!("got {got}, want {want:?}")],
        }
    });
    // Exactly the float dtypes have finfo and the integers iinfo.
    for d in DType::ALL {
        let f = seen.iter().any(|(k, x)| k == "finfo" && *x == d);
        let i = seen.iter().any(|(k, x)| k == "iinfo" && *x == d);
        assert_eq!(d.float_info().is_some(), f, "{d}");
        assert_eq!(d.int_info().is_some(), i, "{d}");
    }
}
