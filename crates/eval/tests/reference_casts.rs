//! Spec §16: the cast vectors of `testdata/vectors/casts_*.txt` — the ones
//! the native conversions are tested on (`crates/tensor/tests/casts.rs`),
//! made by `tools/oracle/casts.py` from exact rational rounding and checked
//! there against NumPy and ml_dtypes — run through the self-hosted
//! `reference` module's `cast` (`twill_eval::reference::cast`, which is
//! `x.to(dt)` under `twill run --reference`). Every result must have the
//! expected bits exactly, a NaN's payload included; a cast the vectors say
//! fails (a NaN or an out-of-range value into an integer) must fail.
//!
//! Each file's inputs go through the module as whole tensors (one per
//! source and target dtype), as a program's casts do.

// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// Test code reads fixtures: the core crates' IO rule (clippy.toml) is for
// the interpreter, not its tests.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::collections::BTreeMap;

use twill_tensor::convert::Scalar;
use twill_tensor::storage::Storage;
use twill_tensor::{DType, Tensor};

/// The data lines of a vector file, split on spaces.
fn lines(name: &str) -> Vec<Vec<String>> {
    let path = format!("{}/../../testdata/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split(' ').map(str::to_owned).collect())
        .collect()
}

/// The columns of a vector file whose fields are all hex bit patterns,
/// and its number of lines.
fn columns(name: &str) -> (Vec<Vec<u64>>, usize) {
    let v = lines(name);
    let width = v.first().map_or(0, Vec::len);
    let cols = (0..width)
        .map(|i| v.iter().map(|f| hex(&f[i])).collect())
        .collect();
    (cols, v.len())
}

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s, 16).unwrap_or_else(|e| panic!("bad hex {s:?}: {e}"))
}

/// A rank-1 tensor of `dt` with these storage bits.
fn tensor_of(dt: DType, bits: &[u64]) -> Tensor {
    let scalars: Vec<Scalar> = bits.iter().map(|&b| Scalar::from_bits(dt, b)).collect();
    Tensor::from_storage(Storage::from_scalars(dt, &scalars).unwrap(), vec![bits.len()]).unwrap()
}

/// Casts `bits` of `src` to `dst` through the module and compares every
/// element's bits with `want`; returns the mismatches.
fn check(what: &str, src: DType, bits: &[u64], dst: DType, want: &[u64]) -> Vec<String> {
    let x = tensor_of(src, bits);
    let got = twill_eval::reference::cast(&x, dst).unwrap_or_else(|e| panic!("{what}: {}", e.message));
    assert_eq!(got.dtype(), dst, "{what}");
    assert_eq!(got.numel(), bits.len(), "{what}");
    got.scalars()
        .zip(bits.iter().zip(want))
        .filter(|(g, (_, w))| g.to_bits() != **w)
        .map(|(g, (b, w))| format!("{what}: {src} {b:x} -> {dst}: got {:x}, want {w:x}", g.to_bits()))
        .collect()
}

fn assert_none(failures: Vec<String>, checked: usize, at_least: usize) {
    for f in failures.iter().take(20) {
        eprintln!("{f}");
    }
    assert!(
        failures.is_empty(),
        "{} mismatches (first 20 above)",
        failures.len()
    );
    assert!(
        checked >= at_least,
        "only {checked} vectors; expected at least {at_least}"
    );
}

/// f64 → bf16, f16, f32 (casts_narrow.txt) and f32 → bf16, f16
/// (casts_narrow_f32.txt): one rounding, to nearest, ties to even.
#[test]
fn narrowing_through_the_module_matches_the_vectors() {
    twill_eval::reference::set_enabled(true);
    let (c, n64) = columns("casts_narrow.txt");
    let mut failures = Vec::new();
    for (dst, want) in [(DType::Bf16, &c[1]), (DType::F16, &c[2]), (DType::F32, &c[3])] {
        failures.extend(check("casts_narrow", DType::F64, &c[0], dst, want));
    }
    let (c, n32) = columns("casts_narrow_f32.txt");
    for (dst, want) in [(DType::Bf16, &c[1]), (DType::F16, &c[2])] {
        failures.extend(check("casts_narrow_f32", DType::F32, &c[0], dst, want));
    }
    assert_none(failures, n64 + n32, 210_000);
}

/// Every bf16 and f16 pattern widened exactly to f64 (casts_widen.txt).
#[test]
fn widening_through_the_module_matches_the_vectors() {
    twill_eval::reference::set_enabled(true);
    let (c, n) = columns("casts_widen.txt");
    let mut failures = check("casts_widen", DType::Bf16, &c[0], DType::F64, &c[1]);
    failures.extend(check("casts_widen", DType::F16, &c[0], DType::F64, &c[2]));
    assert_none(failures, n, 65_536);
}

/// Every ordered pair of the seven dtypes (casts_scalar.txt): the values
/// that cast, as one tensor per pair; each value the vectors say cannot
/// be cast, alone, must be refused.
#[test]
fn every_dtype_pair_through_the_module_matches_the_vectors() {
    twill_eval::reference::set_enabled(true);
    let v = lines("casts_scalar.txt");
    let mut ok: BTreeMap<(DType, DType), (Vec<u64>, Vec<u64>)> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut errors = 0;
    for f in &v {
        let (src, dst) = (
            DType::from_name(&f[0]).expect("dtype"),
            DType::from_name(&f[2]).expect("dtype"),
        );
        let bits = hex(&f[1]);
        if f[3] == "error" {
            errors += 1;
            if let Ok(t) = twill_eval::reference::cast(&tensor_of(src, &[bits]), dst) {
                failures.push(format!(
                    "{src} {bits:x} -> {dst}: want an error, got {:x}",
                    t.scalars().next().map_or(0, |s| s.to_bits())
                ));
            }
        } else {
            let e = ok.entry((src, dst)).or_default();
            e.0.push(bits);
            e.1.push(hex(&f[3]));
        }
    }
    assert_eq!(ok.len(), 49, "every ordered pair of dtypes has vectors");
    for ((src, dst), (bits, want)) in &ok {
        failures.extend(check("casts_scalar", *src, bits, *dst, want));
    }
    assert!(errors >= 100, "only {errors} error cases");
    assert_none(failures, v.len(), 30_000);
}
