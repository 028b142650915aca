//! The vectors of `testdata/vectors/formats.txt` (the formats lab, spec
//! §13: every pattern of twelve formats decoded, and rounding from f64 and
//! f32 inputs, by exact rational arithmetic in `tools/oracle/formats.py`),
//! read for the native test (`tests/formats.rs`) and the reference
//! runtime's (`crates/eval/tests/reference_formats.rs`).

use std::collections::BTreeMap;

use twill_tensor::lab::{Format, Special};

pub struct Vectors {
    pub formats: BTreeMap<String, Format>,
    /// Format name → the f64 bits of each non-negative pattern's value.
    pub decode: BTreeMap<String, Vec<u64>>,
    /// (format, input f64 bits, pattern or None for "no encoding").
    pub r64: Vec<(String, u64, Option<u64>)>,
    /// (format, input f32 bits, pattern or None).
    pub r32: Vec<(String, u32, Option<u64>)>,
}

pub fn load() -> Vectors {
    let path = format!(
        "{}/../../testdata/vectors/formats.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("cannot read {path}: {e}; run `tools/oracle/.venv/bin/python tools/oracle/formats.py`")
    });
    let mut v = Vectors {
        formats: BTreeMap::new(),
        decode: BTreeMap::new(),
        r64: Vec::new(),
        r32: Vec::new(),
    };
    let pattern = |s: &str| (s != "E").then(|| u64::from_str_radix(s, 16).unwrap());
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let f: Vec<&str> = line.split(' ').collect();
        match f[0] {
            "format" => {
                let special = Special::from_name(f[6]).unwrap();
                let fmt = Format::new(
                    f[2].parse().unwrap(),
                    f[3].parse().unwrap(),
                    Some(f[4].parse().unwrap()),
                    f[5] == "1",
                    special,
                )
                .unwrap();
                v.formats.insert(f[1].to_string(), fmt);
            }
            "decode" => v
                .decode
                .entry(f[1].to_string())
                .or_default()
                .extend(f[2..].iter().map(|h| u64::from_str_radix(h, 16).unwrap())),
            "r64" => v.r64.push((
                f[1].to_string(),
                u64::from_str_radix(f[2], 16).unwrap(),
                pattern(f[3]),
            )),
            "r32" => v.r32.push((
                f[1].to_string(),
                u32::from_str_radix(f[2], 16).unwrap(),
                pattern(f[3]),
            )),
            other => panic!("unknown line kind {other}"),
        }
    }
    v
}

pub fn report(what: &str, checked: usize, min: usize, failures: &[String]) {
    for f in failures.iter().take(20) {
        eprintln!("{f}");
    }
    assert!(
        failures.is_empty(),
        "{what}: {} of {checked} vectors disagree",
        failures.len()
    );
    assert!(
        checked >= min,
        "{what}: only {checked} vectors (at least {min} expected)"
    );
}
