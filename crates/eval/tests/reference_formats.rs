//! Spec §16 for the formats lab (spec §13): the rounding vectors of
//! `testdata/vectors/formats.txt` — exact rational rounding from f64 and
//! from f32 inputs into twelve formats (OCP f8/f6/f4, bf16, f16, odd biases,
//! no subnormals), made by `tools/oracle/formats.py` and cross-checked
//! there against ml_dtypes and NumPy; the native `lab::Format` is tested on
//! them in `crates/tensor/tests/formats.rs` — run through the self-hosted
//! `reference` module's `round_to` (its own rounding, `lab.tw`). A result
//! must be the value of the expected pattern (from the file's decode table)
//! bit for bit; an input the format cannot encode must be refused.

// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(clippy::wildcard_enum_match_arm)]
// Test code reads fixtures: the core crates' IO rule (clippy.toml) is for
// the interpreter, not its tests.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

#[path = "../../tensor/tests/support/formats.rs"]
mod vectors;
use vectors::{load, report, Vectors};

use twill_tensor::lab::Format;
use twill_tensor::ops::{Arg, Op, Out};
use twill_tensor::Tensor;

/// (format, input bits, expected pattern or None for "no encoding").
type Case = (String, u64, Option<u64>);

/// The f64 bits of the value of `pattern` in format `name`, from the
/// file's table of the non-negative patterns.
fn value_bits(v: &Vectors, name: &str, pattern: u64) -> u64 {
    let sign = v.formats[name].sign_bit();
    let mag = v.decode[name][(pattern & (sign - 1)) as usize];
    if pattern & sign != 0 {
        mag | (1 << 63)
    } else {
        mag
    }
}

fn round_to(x: Tensor, fmt: Format) -> Result<Tensor, String> {
    match twill_eval::reference::op(Op::RoundTo, &[Some(Arg::Tensor(x)), Some(Arg::Format(fmt))]) {
        Ok(Out::Tensor(t)) => Ok(t),
        Ok(_) => panic!("round_to answered more than a tensor"),
        Err(e) => Err(e.message),
    }
}

/// Every r64 (dtype f64) and r32 (dtype f32, for the formats whose values
/// are all f32 values) vector, one tensor per format, through the module.
#[test]
fn rounding_through_the_module_matches_the_vectors() {
    twill_eval::reference::set_enabled(true);
    let v = load();
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut refused = 0;
    let r32: Vec<Case> = v
        .r32
        .iter()
        .map(|(n, x, p)| (n.clone(), u64::from(*x), *p))
        .collect();
    for (kind, cases) in [("r64", &v.r64), ("r32", &r32)] {
        for (name, fmt) in &v.formats {
            let mine: Vec<&Case> = cases.iter().filter(|c| &c.0 == name).collect();
            let wide = kind == "r64";
            let fits_f32 = fmt.exp_bits() <= 8 && fmt.man_bits() <= 23 && fmt.fits_f32();
            if !wide && !fits_f32 {
                continue;
            }
            let input = |bits: &[u64]| -> Tensor {
                if wide {
                    Tensor::from_vec(
                        bits.iter().map(|&b| f64::from_bits(b)).collect::<Vec<f64>>(),
                        vec![bits.len()],
                    )
                } else {
                    Tensor::from_vec(
                        bits.iter()
                            .map(|&b| f32::from_bits(b as u32))
                            .collect::<Vec<f32>>(),
                        vec![bits.len()],
                    )
                }
                .unwrap()
            };
            // Inputs with no encoding, one at a time: each must be refused.
            for (_, x, _) in mine.iter().filter(|c| c.2.is_none()) {
                refused += 1;
                if let Ok(t) = round_to(input(&[*x]), *fmt) {
                    failures.push(format!(
                        "{kind} {name} {x:x}: want an error, got {:?}",
                        t.to_f64_vec()
                    ));
                }
            }
            let ok: Vec<&&Case> = mine.iter().filter(|c| c.2.is_some()).collect();
            let bits: Vec<u64> = ok.iter().map(|c| c.1).collect();
            let got = round_to(input(&bits), *fmt).unwrap_or_else(|e| panic!("{kind} {name}: {e}"));
            for (c, g) in ok.iter().zip(got.scalars()) {
                checked += 1;
                let want = value_bits(&v, name, c.2.unwrap_or(0));
                let (got_bits, want_bits) = if wide {
                    (g.to_bits(), want)
                } else {
                    // An f32 result holds the value (every value of the
                    // format is an f32); a NaN as the casts narrow it.
                    (
                        g.to_f64().to_bits(),
                        f64::from(f64::from_bits(want) as f32).to_bits(),
                    )
                };
                // From f32 a NaN is compared as a NaN; from f64 bit for bit.
                let nan_ok = !wide && f64::from_bits(got_bits).is_nan() && f64::from_bits(want_bits).is_nan();
                if got_bits != want_bits && !nan_ok {
                    failures.push(format!(
                        "{kind} {name} {:x}: got {got_bits:016x}, want {want_bits:016x}",
                        c.1
                    ));
                }
            }
        }
    }
    report("rounding through the module", checked, 60_000, &failures);
    assert!(refused >= 10, "only {refused} inputs without an encoding");
}
