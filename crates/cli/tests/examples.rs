//! The shipped examples run, deterministically, and the training example
//! reaches the accuracy the issue asks for (at least 95% on the held-out
//! digits in f32, bf16 and f16), with the same bytes for any thread count.

// Test code reads fixtures and runs the binary: the core crates' IO rule
// (clippy.toml) is for the interpreter, not its tests.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::{Command, Output};

fn run_example(name: &str) -> Output {
    run_example_with_threads(name, None)
}

fn run_example_with_threads(name: &str, threads: Option<usize>) -> Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_twill"));
    if let Some(n) = threads {
        cmd.env("RAYON_NUM_THREADS", n.to_string());
    }
    cmd.arg("run")
        .arg(format!("examples/{name}"))
        .current_dir(root)
        .output()
        .expect("the twill binary runs")
}

#[test]
fn train_digits_reaches_95_percent_in_every_dtype_and_is_deterministic() {
    let first = run_example("train_digits.tw");
    assert_eq!(
        first.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&first.stderr)
    );
    let out = String::from_utf8_lossy(&first.stdout).into_owned();
    let accuracies: Vec<(String, f64)> = out
        .lines()
        .filter_map(|l| {
            let (name, acc) = l.split_once(" test accuracy ")?;
            Some((name.to_string(), acc.trim().parse().ok()?))
        })
        .collect();
    let names: Vec<&str> = accuracies.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["f32", "bf16", "f16"], "output:\n{out}");
    for (name, acc) in &accuracies {
        assert!(*acc >= 0.95, "{name} reached only {acc}:\n{out}");
    }
    let second = run_example("train_digits.tw");
    assert_eq!(first.stdout, second.stdout, "two runs printed different bytes");
    // The same bytes with one thread and with several.
    for n in [1, 3] {
        let other = run_example_with_threads("train_digits.tw", Some(n));
        assert_eq!(first.stdout, other.stdout, "{n} threads printed different bytes");
    }
}

#[test]
fn accumulation_reproduces_the_seed_table() {
    let o = run_example("accumulation.tw");
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    // The bf16 accumulator sticks at 32 (seed 003: 0.68 and 0.94 lost);
    // twill's f32-accumulated sum is exact after its one rounding.
    assert!(out.contains("1000   32   0.68   100   0"), "{out}");
    assert!(out.contains("5000   32   0.936   500   0"), "{out}");
}

#[test]
fn wordfreq_prints_the_top_ten_in_aligned_columns() {
    let o = run_example("wordfreq.tw");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0], "examples/data/numbers.txt: 393 words, 168 distinct",
        "{out}"
    );
    assert_eq!(lines[1], "rank  word         count   share");
    assert_eq!(lines[3], "   1  the             48  12.21%");
    assert_eq!(lines.len(), 13, "a header, a rule and ten rows:\n{out}");
    // Every row is as wide as the header: the columns line up.
    assert!(lines[1..].iter().all(|l| l.len() == lines[1].len()), "{out}");
}

#[test]
fn stats_summarises_csv_columns_by_name() {
    let o = run_example("stats.tw");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    // The figures agree with Python's statistics module on the same file
    // (population standard deviation, NumPy's default quantiles).
    assert!(
        out.contains("p20         1,797    7.098    6.174    0.000    1.000    6.000   13.000   16.000"),
        "{out}"
    );
    assert!(
        out.contains("label       1,797    4.491    2.865    0.000    2.000    4.000    7.000    9.000"),
        "{out}"
    );
    assert!(out.contains("     8    174    9.7%  #########"), "{out}");
}
