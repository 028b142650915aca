//! Differential test of the self-hosted float library,
//! `crates/eval/stdlib/float.tw`, against the native Rust routines it
//! mirrors, byte for byte:
//!
//! * `float_format_number` vs `twill_tensor::format_number` on every line of
//!   `testdata/vectors/format_number.txt`;
//! * `float_narrow` vs `convert::narrow` on every f64 input of
//!   `casts_narrow.txt`, into bf16, f16 and f32;
//! * `float_widen` (f32) then `float_narrow` (bf16, f16) on every f32 input of
//!   `casts_narrow_f32.txt`;
//! * every bf16 and every f16 bit pattern widened with `float_widen` and
//!   narrowed back with `float_narrow`;
//! * `float_shortest` vs `shortest::shortest_decimal` on every pattern of
//!   `printing_{bf16,f16,f32,small}.txt`.
//!
//! The library is loaded exactly as the CLI loads it
//! (`twill_eval::stdlib::load_all` into a fresh `Checker` and `Interp`), and its
//! functions are called through `Interp::call_global`. The cases are split
//! over a few threads, each with its own interpreter, to keep the run short.
//! Every count is asserted, so a truncated vector file or a skipped family
//! cannot pass vacuously, and the library must print nothing.

// Test code reads fixtures and runs the binary: the core crates' IO rule
// (clippy.toml) is for the interpreter, not its tests.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
// A failing test should stop with the value it was given, so tests unwrap,
// and a result of any other variant than the expected one is a failure.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::wildcard_enum_match_arm
)]

use std::time::Instant;

use twill_check::Checker;
use twill_eval::{Interp, Value};
use twill_tensor::convert::{narrow, widen, FloatFormat};
use twill_tensor::format_number;
use twill_tensor::shortest::{self, shortest_decimal};

fn vector_text(name: &str) -> String {
    let path = format!("{}/../../testdata/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

/// The data lines of a vector file, with their 1-based line numbers.
fn data_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        .map(|(i, l)| (i + 1, l))
}

fn hex(field: &str, digits: usize, origin: &str) -> u64 {
    assert!(
        field.len() == digits && field.bytes().all(|b| b.is_ascii_hexdigit()),
        "{origin}: malformed field {field:?} (want {digits} hex digits)"
    );
    u64::from_str_radix(field, 16).unwrap()
}

const FORMATS: [(&str, FloatFormat); 3] = [
    ("bf16", FloatFormat::BF16),
    ("f16", FloatFormat::F16),
    ("f32", FloatFormat::F32),
];

/// One check: a twill call compared with the native routine.
#[derive(Clone, Copy)]
enum Case {
    /// `float_format_number` of the f64 with these bits.
    FormatNumber(u64),
    /// `float_narrow` of the f64 with these bits into a format.
    Narrow(u64, FloatFormat),
    /// `float_widen` of a pattern, then `float_narrow` of its result back.
    WidenNarrow(u32, FloatFormat),
    /// `float_widen` of an f32 pattern, then `float_narrow` of its result
    /// into bf16 and f16.
    WidenF32(u32),
    /// `float_shortest` of a pattern in the format (exp_bits, man_bits).
    Shortest(u32, u32, u32),
}

/// Where a case came from, for failure messages.
#[derive(Clone, Copy)]
struct Origin {
    file: &'static str,
    line: usize,
}

// The library's printing is captured (it must print nothing).
use twill_host::{CaptureHost, SharedBuf};
use twill_syntax::FileId;

/// The standard library, loaded as the CLI loads it.
struct Lib {
    interp: Interp,
    out: SharedBuf,
}

impl Lib {
    fn load() -> Lib {
        let host = CaptureHost::new();
        let out = host.stdout.clone();
        let mut checker = Checker::new();
        let mut interp = Interp::new(Box::new(host));
        // Nothing here renders a span, so every file may share one id.
        twill_eval::stdlib::load_all(&mut checker, &mut interp, &mut |_, _| FileId(0))
            .expect("the standard library loads");
        Lib { interp, out }
    }

    fn call(&mut self, name: &str, args: Vec<Value>) -> Result<Value, String> {
        self.interp
            .call_global(name, args)
            .map_err(|e| format!("{name} failed: {}", e.message))
    }

    fn format_number(&mut self, x: f64) -> Result<String, String> {
        match self.call("float.format_number", vec![Value::F64(x)])? {
            Value::Str(s) => Ok(s.to_string()),
            other => Err(format!("float.format_number returned a {}", other.type_name())),
        }
    }

    fn narrow(&mut self, x: f64, fmt: FloatFormat) -> Result<u32, String> {
        let args = vec![Value::F64(x), int(fmt.exp_bits()), int(fmt.man_bits())];
        match self.call("float.narrow", args)? {
            Value::Int(i) => u32::try_from(i).map_err(|_| format!("float.narrow returned {i}")),
            other => Err(format!("float.narrow returned a {}", other.type_name())),
        }
    }

    fn widen(&mut self, bits: u32, fmt: FloatFormat) -> Result<f64, String> {
        let args = vec![int(bits), int(fmt.exp_bits()), int(fmt.man_bits())];
        match self.call("float.widen", args)? {
            Value::F64(x) => Ok(x),
            other => Err(format!("float.widen returned a {}", other.type_name())),
        }
    }

    fn shortest(&mut self, bits: u32, exp_bits: u32, man_bits: u32) -> Result<String, String> {
        match self.call("float.shortest", vec![int(bits), int(exp_bits), int(man_bits)])? {
            Value::Str(s) => Ok(s.to_string()),
            other => Err(format!("float.shortest returned a {}", other.type_name())),
        }
    }
}

fn int(n: u32) -> Value {
    Value::Int(i64::from(n))
}

fn fmt_name(fmt: FloatFormat) -> &'static str {
    FORMATS.iter().find(|(_, f)| *f == fmt).map_or("?", |(n, _)| n)
}

/// Runs one case; returns the number of comparisons made and the
/// mismatches found.
fn run_case(lib: &mut Lib, case: Case, failures: &mut Vec<String>) -> usize {
    let mut compare = |what: String, got: Result<String, String>, want: String| {
        match got {
            Ok(got) if got == want => {}
            Ok(got) => failures.push(format!("{what}: twill {got}, rust {want}")),
            Err(e) => failures.push(format!("{what}: {e}")),
        }
        1
    };
    match case {
        Case::FormatNumber(bits) => {
            let x = f64::from_bits(bits);
            compare(
                format!("format_number({bits:016x})"),
                lib.format_number(x),
                format_number(x),
            )
        }
        Case::Narrow(bits, fmt) => {
            let x = f64::from_bits(bits);
            compare(
                format!("narrow({bits:016x}, {})", fmt_name(fmt)),
                lib.narrow(x, fmt).map(|b| format!("{b:x}")),
                format!("{:x}", narrow(x, fmt)),
            )
        }
        Case::WidenNarrow(p, fmt) => {
            let want = widen(p, fmt);
            let got = lib.widen(p, fmt);
            let mut n = compare(
                format!("widen({p:04x}, {})", fmt_name(fmt)),
                got.clone().map(|x| format!("{:016x}", x.to_bits())),
                format!("{:016x}", want.to_bits()),
            );
            if let Ok(x) = got {
                n += compare(
                    format!("narrow(widen({p:04x}), {})", fmt_name(fmt)),
                    lib.narrow(x, fmt).map(|b| format!("{b:x}")),
                    format!("{:x}", narrow(want, fmt)),
                );
            }
            n
        }
        Case::WidenF32(p) => {
            let want = widen(p, FloatFormat::F32);
            let got = lib.widen(p, FloatFormat::F32);
            let mut n = compare(
                format!("widen({p:08x}, f32)"),
                got.clone().map(|x| format!("{:016x}", x.to_bits())),
                format!("{:016x}", want.to_bits()),
            );
            if let Ok(x) = got {
                for fmt in [FloatFormat::BF16, FloatFormat::F16] {
                    n += compare(
                        format!("narrow(widen({p:08x}, f32), {})", fmt_name(fmt)),
                        lib.narrow(x, fmt).map(|b| format!("{b:x}")),
                        format!("{:x}", narrow(want, fmt)),
                    );
                }
            }
            n
        }
        Case::Shortest(bits, e, m) => {
            let fmt = shortest::FloatFormat::new(e, m).expect("a valid format");
            compare(
                format!("shortest({bits:x}, e{e}m{m})"),
                lib.shortest(bits, e, m),
                shortest_decimal(bits, fmt),
            )
        }
    }
}

/// How many cases each source gave.
type Counts = Vec<(&'static str, usize)>;

/// Every case, with where it came from, and how many each source gave.
fn all_cases() -> (Vec<(Case, Origin)>, Counts) {
    let mut cases = Vec::new();
    let mut counts = Vec::new();
    let mut add = |file: &'static str, list: Vec<(Case, usize)>| {
        counts.push((file, list.len()));
        cases.extend(list.into_iter().map(|(c, line)| (c, Origin { file, line })));
    };

    let text = vector_text("format_number.txt");
    add(
        "format_number.txt",
        data_lines(&text)
            .map(|(line, l)| {
                let field = l.split(' ').next().unwrap_or("");
                (
                    Case::FormatNumber(hex(field, 16, &format!("format_number.txt:{line}"))),
                    line,
                )
            })
            .collect(),
    );

    let text = vector_text("casts_narrow.txt");
    add(
        "casts_narrow.txt",
        data_lines(&text)
            .flat_map(|(line, l)| {
                let field = l.split(' ').next().unwrap_or("");
                let bits = hex(field, 16, &format!("casts_narrow.txt:{line}"));
                FORMATS.map(|(_, fmt)| (Case::Narrow(bits, fmt), line))
            })
            .collect(),
    );

    let text = vector_text("casts_narrow_f32.txt");
    add(
        "casts_narrow_f32.txt",
        data_lines(&text)
            .map(|(line, l)| {
                let field = l.split(' ').next().unwrap_or("");
                let bits = hex(field, 8, &format!("casts_narrow_f32.txt:{line}")) as u32;
                (Case::WidenF32(bits), line)
            })
            .collect(),
    );

    for (file, fmt) in [
        ("every bf16 pattern", FloatFormat::BF16),
        ("every f16 pattern", FloatFormat::F16),
    ] {
        add(
            file,
            (0..=0xffff).map(|p| (Case::WidenNarrow(p, fmt), 0)).collect(),
        );
    }

    for (file, e, m, digits) in [
        ("printing_bf16.txt", 8, 7, 4),
        ("printing_f16.txt", 5, 10, 4),
        ("printing_f32.txt", 8, 23, 8),
    ] {
        let text = vector_text(file);
        add(
            file,
            data_lines(&text)
                .map(|(line, l)| {
                    let field = l.split(' ').next().unwrap_or("");
                    let bits = hex(field, digits, &format!("{file}:{line}")) as u32;
                    (Case::Shortest(bits, e, m), line)
                })
                .collect(),
        );
    }

    // `e<exp bits>m<fraction bits> <hex bits> <text>`
    let text = vector_text("printing_small.txt");
    add(
        "printing_small.txt",
        data_lines(&text)
            .map(|(line, l)| {
                let origin = format!("printing_small.txt:{line}");
                let mut fields = l.split(' ');
                let name = fields.next().unwrap_or("");
                let (e, m) = name
                    .strip_prefix('e')
                    .and_then(|r| r.split_once('m'))
                    .and_then(|(e, m)| Some((e.parse().ok()?, m.parse().ok()?)))
                    .unwrap_or_else(|| panic!("{origin}: malformed format {name:?}"));
                let field = fields.next().unwrap_or("");
                let bits = u32::from_str_radix(field, 16)
                    .unwrap_or_else(|_| panic!("{origin}: malformed bits {field:?}"));
                (Case::Shortest(bits, e, m), line)
            })
            .collect(),
    );
    (cases, counts)
}

/// At least this many cases per source, so an emptied or truncated vector
/// file fails instead of passing without checking anything (the two
/// exhaustive families are complete by construction).
const MIN_CASES: &[(&str, usize)] = &[
    ("format_number.txt", 19_000),
    ("casts_narrow.txt", 3 * 114_000),
    ("casts_narrow_f32.txt", 100_000),
    ("every bf16 pattern", 65_536),
    ("every f16 pattern", 65_536),
    ("printing_bf16.txt", 65_536),
    ("printing_f16.txt", 65_536),
    ("printing_f32.txt", 52_000),
    ("printing_small.txt", 15_000),
];

#[test]
fn float_tw_matches_the_native_routines() {
    let start = Instant::now();
    let (cases, counts) = all_cases();
    for &(file, min) in MIN_CASES {
        let n = counts.iter().find(|(f, _)| *f == file).map_or(0, |(_, n)| *n);
        assert!(n >= min, "only {n} cases from {file}; expected at least {min}");
    }

    // Interleave the cases over the threads so that each gets a share of
    // the slow ones (f64 values far from 1 need the biggest numbers).
    let threads = std::thread::available_parallelism()
        .map_or(4, |n| n.get())
        .clamp(1, 16);
    // Each failure is kept with its case's index, to report them in order.
    type Failures = Vec<(usize, String)>;
    let results: Vec<(usize, Failures, Vec<u8>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let cases = &cases;
                s.spawn(move || {
                    let mut lib = Lib::load();
                    let mut compared = 0;
                    let mut failures = Vec::new();
                    let mut found = Vec::new();
                    for (index, (case, origin)) in cases.iter().enumerate().skip(t).step_by(threads) {
                        compared += run_case(&mut lib, *case, &mut found);
                        for f in found.drain(..) {
                            let at = if origin.line > 0 {
                                format!("{}:{}", origin.file, origin.line)
                            } else {
                                origin.file.to_owned()
                            };
                            failures.push((index, format!("{at}: {f}")));
                        }
                    }
                    let printed = lib.out.bytes();
                    (compared, failures, printed)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a worker thread"))
            .collect()
    });

    let compared: usize = results.iter().map(|r| r.0).sum();
    let mut failures: Vec<&(usize, String)> = results.iter().flat_map(|r| &r.1).collect();
    failures.sort_by_key(|f| f.0);
    let printed: Vec<u8> = results.iter().flat_map(|r| r.2.iter().copied()).collect();
    eprintln!(
        "float.tw: {} cases, {compared} comparisons, {} mismatches, {:.1?} on {threads} threads",
        cases.len(),
        failures.len(),
        start.elapsed()
    );
    for (file, n) in &counts {
        eprintln!("  {file}: {n} cases");
    }
    for (_, f) in failures.iter().take(20) {
        eprintln!("{f}");
    }
    assert!(
        failures.is_empty(),
        "{} of {compared} comparisons differ between float.tw and the native routines; first 20 printed above",
        failures.len()
    );
    assert!(
        printed.is_empty(),
        "the standard library printed: {:?}",
        String::from_utf8_lossy(&printed)
    );
    // Each narrow, format and shortest case is one comparison, each
    // widen-and-narrow-back two, each f32 widening three.
    let expected: usize = counts
        .iter()
        .map(|(file, n)| match *file {
            "every bf16 pattern" | "every f16 pattern" => 2 * n,
            "casts_narrow_f32.txt" => 3 * n,
            _ => *n,
        })
        .sum();
    assert_eq!(compared, expected, "some comparisons were skipped");
}

/// Exact ties between the two nearest shortest decimals go to the even last
/// digit, as ECMAScript `Number::toString` says and Node prints. These
/// values are not in the vector files, and Rust's own shortest formatting
/// (`{:e}`, which `twill_tensor::format_number` uses) rounds such ties up,
/// so they are checked against Node's output rather than the native routine.
#[test]
fn format_number_breaks_exact_ties_to_even() {
    let mut lib = Lib::load();
    // Written as sums because each is exact, while a literal such as
    // 1125899906842624.25 trips clippy's `excessive_precision`, which
    // judges by Rust's formatting and so by the same round-ties-up.
    let cases: &[(f64, &str)] = &[
        // m odd with 2^-2 spacing: halfway between two 17-digit decimals.
        (1125899906842624.0 + 0.25, "1125899906842624.2"),
        (1125899906842624.0 + 0.75, "1125899906842624.8"),
        (-1125899906842625.0 - 0.25, "-1125899906842625.2"),
        // 2^-3 spacing below 10^15: halfway between two 16-digit decimals.
        (932557216346518.0 + 0.25, "932557216346518.2"),
        (932557216346518.0 + 0.75, "932557216346518.8"),
    ];
    for &(x, want) in cases {
        assert_eq!(
            lib.format_number(x).as_deref(),
            Ok(want),
            "float.format_number({x:?})"
        );
    }
}
