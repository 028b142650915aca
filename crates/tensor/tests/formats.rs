//! Checks the formats lab (`lab::Format`, spec §13) bit for bit against
//! vectors from an exact rational reference (`tools/oracle/formats.py`,
//! cross-checked there against ml_dtypes' f8/f6/f4/bf16 and NumPy's f16):
//! every pattern of each format decoded, and rounding from f64 and from f32
//! inputs at every kind of boundary. Then the two agreements spec §13
//! promises: `round_to(bf16)` (and f16) equals the dtype's cast on every
//! vector, and an EVERY_STEP sum with `acc=` the f32 format equals twill's
//! f32 sum, bit for bit.
//!
//! The file must hold a minimum number of vectors of each kind, so an
//! emptied or truncated file fails instead of passing.

// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// Test code picks the cases it checks and treats the rest alike.
#![allow(clippy::wildcard_enum_match_arm)]
// Test code reads fixtures: the core crates' IO rule is for the interpreter.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::collections::BTreeMap;

use twill_tensor::lab::{Format, Rounder};
use twill_tensor::ops::{self, Arg, Op, Out};
use twill_tensor::{DType, Tensor};

#[path = "support/formats.rs"]
mod vectors;
use vectors::{load, report};

#[test]
fn every_pattern_decodes_to_the_reference_value() {
    let v = load();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, values) in &v.decode {
        let fmt = v.formats[name];
        assert_eq!(
            values.len() as u64,
            fmt.sign_bit(),
            "{name}: not every pattern listed"
        );
        for (p, &want) in values.iter().enumerate() {
            let p = p as u64;
            for (pat, want) in [(p, want), (p | fmt.sign_bit(), want | (1 << 63))] {
                checked += 1;
                let got = fmt.decode(pat).to_bits();
                if got != want {
                    failures.push(format!(
                        "{name} decode {pat:#x}: got {got:016x}, want {want:016x}"
                    ));
                }
            }
        }
    }
    // Twelve formats, six of them 16-bit (2 × 32768 patterns each).
    report("decode", checked, 390_000, &failures);
}

#[test]
fn rounding_from_f64_and_from_f32_matches_the_reference() {
    let v = load();
    let mut failures = Vec::new();
    for (name, x, want) in &v.r64 {
        let got = v.formats[name].encode(f64::from_bits(*x)).ok();
        if got != *want {
            failures.push(format!("{name} f64 {x:016x}: got {got:x?}, want {want:x?}"));
        }
    }
    report("rounding from f64", v.r64.len(), 30_000, &failures);
    let mut failures = Vec::new();
    for (name, x, want) in &v.r32 {
        let got = v.formats[name].encode(f64::from(f32::from_bits(*x))).ok();
        if got != *want {
            failures.push(format!("{name} f32 {x:08x}: got {got:x?}, want {want:x?}"));
        }
    }
    report("rounding from f32", v.r32.len(), 30_000, &failures);
}

/// The bit-level shortcut `round_to` uses ([`Rounder`]) gives the exact
/// routine's value on every vector, from f64 and from f32 inputs.
#[test]
fn the_rounding_shortcut_is_the_rounding_routine() {
    let v = load();
    let rounders: BTreeMap<&String, Rounder> = v.formats.iter().map(|(n, f)| (n, Rounder::new(*f))).collect();
    let mut failures = Vec::new();
    let inputs = v.r64.iter().map(|(n, x, p)| (n, f64::from_bits(*x), p)).chain(
        v.r32
            .iter()
            .map(|(n, x, p)| (n, f64::from(f32::from_bits(*x)), p)),
    );
    let mut checked = 0;
    for (name, x, p) in inputs {
        let Some(p) = p else { continue };
        checked += 1;
        let want = v.formats[name].decode(*p).to_bits();
        let got = rounders[name].round(x).to_bits();
        if got != want {
            failures.push(format!("{name} {x:e}: got {got:016x}, want {want:016x}"));
        }
    }
    report("the shortcut", checked, 60_000, &failures);
    let mut failures = Vec::new();
    for (name, x, p) in &v.r32 {
        let Some(p) = p else { continue };
        let f = v.formats[name];
        if !f.fits_f32() {
            continue;
        }
        let want = twill_tensor::convert::f64_to_f32(f.decode(*p)).to_bits();
        let got = rounders[name].round_f32(f32::from_bits(*x)).to_bits();
        if got != want {
            failures.push(format!("{name} f32 {x:08x}: got {got:08x}, want {want:08x}"));
        }
    }
    report("the f32 shortcut", v.r32.len(), 30_000, &failures);
}

fn run(op: Op, pos: Vec<Arg>, kw: Vec<(&str, Arg)>) -> Tensor {
    let kw = kw.into_iter().map(|(k, a)| (k.to_string(), a)).collect();
    match ops::call(op, ops::bind(op, pos, kw).unwrap()).unwrap() {
        Out::Tensor(t) => t,
        Out::Tensors(_) | Out::Bool(_) | Out::Tuple(_) => panic!("one tensor expected"),
    }
}

fn bits64(t: &Tensor) -> Vec<u64> {
    t.to_f64_vec().unwrap().iter().map(|x| x.to_bits()).collect()
}

/// `x.round_to(formats.bf16)` and `x.to(bf16).to(f64)` agree on every f64
/// input of the vectors, NaN payloads included; f16 and f32 likewise.
#[test]
fn round_to_a_dtype_format_is_its_cast() {
    let v = load();
    // Every f64 input of every format's vectors, into each dtype's format.
    let all: Vec<f64> = v.r64.iter().map(|r| f64::from_bits(r.1)).collect();
    assert!(all.len() > 30_000, "too few vectors");
    for (name, dt) in [("bf16", DType::Bf16), ("f16", DType::F16), ("f32", DType::F32)] {
        let fmt = match v.formats.get(name) {
            Some(f) => *f,
            None => Format::of(twill_tensor::convert::FloatFormat::F32),
        };
        let n = all.len();
        let x = Tensor::from_vec(all.clone(), vec![n]).unwrap();
        let rounded = run(
            Op::RoundTo,
            vec![Arg::Tensor(x.clone()), Arg::Format(fmt)],
            vec![],
        );
        let cast = x.cast(dt).unwrap().cast(DType::F64).unwrap();
        assert_eq!(
            bits64(&rounded),
            bits64(&cast),
            "{name}: round_to and the cast differ"
        );
    }
}

/// A deterministic stream of awkward f32 values (wide exponents, both
/// signs, exact zeros), for the EVERY_STEP sums.
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let m = ((s >> 40) as f32) / (1u64 << 24) as f32 - 0.5;
            let e = ((s >> 20) % 40) as i32 - 20;
            if s.is_multiple_of(97) {
                0.0
            } else {
                m * 2f32.powi(e)
            }
        })
        .collect()
}

/// `sum(x, acc=formats.f32)` is the f32 sum of x.to(f32), bit for bit, in
/// the same blocked order: over everything (across several blocks), along
/// an axis, and for f32 input as well as f64.
#[test]
fn every_step_sum_in_the_f32_format_is_the_f32_sum() {
    let f32fmt = Format::of(twill_tensor::convert::FloatFormat::F32);
    for (n, shape) in [
        (1usize, vec![1usize]),
        (37, vec![37]),
        (40_000, vec![40_000]),
        (6 * 700, vec![6, 700]),
    ] {
        let xs = values(n, n as u64);
        let x32 = Tensor::from_vec(xs.clone(), shape.clone()).unwrap();
        let x64 = x32.cast(DType::F64).unwrap();
        let axes: Vec<Option<i64>> = if shape.len() > 1 {
            vec![None, Some(0), Some(1)]
        } else {
            vec![None]
        };
        for axis in axes {
            let mut kw = vec![("acc", Arg::Format(f32fmt))];
            let mut plain = vec![];
            if let Some(a) = axis {
                kw.push(("axis", Arg::Int(a)));
                plain.push(("axis", Arg::Int(a)));
            }
            let want = run(Op::Sum, vec![Arg::Tensor(x32.clone())], plain);
            let from64 = run(Op::Sum, vec![Arg::Tensor(x64.clone())], kw.clone());
            let from32 = run(Op::Sum, vec![Arg::Tensor(x32.clone())], kw);
            assert_eq!(from64.dtype(), DType::F64);
            assert_eq!(from32.dtype(), DType::F32);
            assert_eq!(bits64(&from64), bits64(&want), "n={n} axis={axis:?} (f64 input)");
            assert_eq!(bits64(&from32), bits64(&want), "n={n} axis={axis:?} (f32 input)");
        }
        // cumsum's sequential order, against a running f32 sum.
        if shape.len() == 1 {
            let got = run(
                Op::Cumsum,
                vec![Arg::Tensor(x64.clone()), Arg::Int(0)],
                vec![("acc", Arg::Format(f32fmt))],
            );
            let mut acc = 0f32;
            let want: Vec<u64> = xs
                .iter()
                .enumerate()
                .map(|(i, &e)| {
                    acc = if i == 0 { e } else { acc + e };
                    f64::from(acc).to_bits()
                })
                .collect();
            assert_eq!(bits64(&got), want, "cumsum n={n}");
        }
    }
}

/// `matmul(a, b, acc=formats.f32)` of f32 inputs: each product rounded to
/// f32 and each step too, from +0 in ascending k — which is not an FMA
/// chain, so it is checked against that loop written out.
#[test]
fn every_step_matmul_rounds_each_product_and_each_step() {
    let f32fmt = Format::of(twill_tensor::convert::FloatFormat::F32);
    let (m, k, n) = (3, 50, 4);
    let a = values(m * k, 7);
    let b = values(k * n, 8);
    let ta = Tensor::from_vec(a.clone(), vec![m, k]).unwrap();
    let tb = Tensor::from_vec(b.clone(), vec![k, n]).unwrap();
    let got = run(
        Op::Matmul,
        vec![Arg::Tensor(ta), Arg::Tensor(tb)],
        vec![("acc", Arg::Format(f32fmt))],
    );
    let mut want = Vec::new();
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0f32;
            for p in 0..k {
                acc += a[i * k + p] * b[p * n + j];
            }
            want.push(f64::from(acc).to_bits());
        }
    }
    assert_eq!(got.shape(), &[m, n]);
    assert_eq!(bits64(&got), want);
}
