//! Checks `format_number` against vectors from an independent implementation:
//! Node's `String(x)`, recorded raw by `tools/oracle/format_number.mjs` into
//! `testdata/vectors/format_number.txt`. Node follows ECMAScript
//! `Number::toString`, which the spec adopts for F64 except for four
//! spellings; [`twill_spelling`] applies exactly those and nothing else, so
//! any other difference is a real mismatch.

// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// Test code picks the cases it checks and treats the rest alike.
#![allow(clippy::wildcard_enum_match_arm)]
// Test code reads fixtures and runs the binary: the core crates' IO rule
// (clippy.toml) is for the interpreter, not its tests.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use twill_tensor::format_number;

const VECTORS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../testdata/vectors/format_number.txt"
);

/// The oracle file must be substantial, so an emptied or truncated file
/// cannot make this test pass without checking anything.
const MIN_VECTORS: usize = 10_000;

/// Where the spec departs from ECMAScript's spelling.
fn twill_spelling(bits: u64, node: &str) -> &str {
    match node {
        "NaN" => "nan",
        "Infinity" => "inf",
        "-Infinity" => "-inf",
        "0" if bits == (-0.0_f64).to_bits() => "-0",
        other => other,
    }
}

#[test]
fn format_number_matches_node_vectors() {
    let text = std::fs::read_to_string(VECTORS)
        .unwrap_or_else(|e| panic!("cannot read {VECTORS}: {e}; run `node tools/oracle/format_number.mjs`"));

    let mut checked = 0usize;
    let mut malformed = 0usize;
    let mut failures = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let lineno = index + 1;
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let parsed = line.split_once(' ').and_then(|(hex, node)| {
            let well_formed = hex.len() == 16 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
            let bits = u64::from_str_radix(hex, 16).ok().filter(|_| well_formed)?;
            Some((bits, node))
        });
        let Some((bits, node)) = parsed else {
            malformed += 1;
            failures.push(format!("line {lineno}: malformed: {line:?}"));
            continue;
        };
        checked += 1;
        let want = twill_spelling(bits, node);
        let got = format_number(f64::from_bits(bits));
        if got != want {
            failures.push(format!(
                "line {lineno}: bits {bits:016x}: want {want:?} (node {node:?}), got {got:?}"
            ));
        }
    }

    for failure in failures.iter().take(20) {
        eprintln!("{failure}");
    }
    assert!(
        failures.is_empty(),
        "{} of {} vector lines failed ({malformed} malformed); first 20 printed above",
        failures.len(),
        checked + malformed
    );
    assert!(
        checked >= MIN_VECTORS,
        "only {checked} vectors in {VECTORS}; expected at least {MIN_VECTORS}"
    );
}
