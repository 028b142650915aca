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
    run_example_with(name, None, None)
}

fn run_example_engine(name: &str, engine: &str) -> Output {
    run_example_with(name, None, Some(engine))
}

fn run_example_with_threads(name: &str, threads: Option<usize>) -> Output {
    run_example_with(name, threads, None)
}

fn run_example_with(name: &str, threads: Option<usize>, engine: Option<&str>) -> Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_twill"));
    if let Some(n) = threads {
        cmd.env("RAYON_NUM_THREADS", n.to_string());
    }
    cmd.arg("run");
    if let Some(e) = engine {
        cmd.arg(format!("--engine={e}"));
    }
    cmd.arg(format!("examples/{name}"))
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

/// The formats lab's examples (seed 003's tables) print what their
/// reviewed snapshots say, under both engines; `docs/formats.md` discusses
/// the figures. The stagnation table must reproduce the seed's eight
/// numbers exactly, and the bias shift must find no difference.
#[test]
fn formats_examples_reproduce_seed_003() {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/examples"));
    for name in ["stagnation", "gradients", "bias_shift"] {
        let o = run_example(&format!("formats/{name}.tw"));
        assert_eq!(
            o.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        let tree = run_example_engine(&format!("formats/{name}.tw"), "tree");
        assert_eq!(o.stdout, tree.stdout, "{name}: the engines disagree");
        settings.bind(|| insta::assert_snapshot!(format!("formats_{name}"), out));
        match name {
            "stagnation" => {
                for seed in [
                    "1.11e-16", "1.95e-15", "1.41e-14", "9.04e-14", "7.81e-03", "6.25e-03", "6.80e-01",
                    "9.36e-01",
                ] {
                    assert!(out.contains(seed), "{seed} missing:\n{out}");
                }
            }
            "bias_shift" => {
                let rows: Vec<&str> = out.lines().skip(2).collect();
                assert_eq!(rows.len(), 12, "{out}");
                assert!(
                    rows.iter().all(|r| r.ends_with(" 0  true")),
                    "a difference:\n{out}"
                );
            }
            _ => {}
        }
    }
}

#[test]
fn kmeans_recovers_the_three_blobs_under_both_engines_and_any_thread_count() {
    let o = run_example("kmeans.tw");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    for other in [
        run_example_engine("kmeans.tw", "tree"),
        run_example_with_threads("kmeans.tw", Some(1)),
        run_example_with_threads("kmeans.tw", Some(4)),
    ] {
        assert_eq!(
            o.stdout, other.stdout,
            "the output depends on the engine or thread count"
        );
    }
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let lines: Vec<&str> = out.lines().collect();
    let rounds = lines.iter().filter(|l| l.starts_with("round ")).count();
    assert!(rounds >= 3, "it should take a few rounds from one blob:\n{out}");
    assert!(lines[rounds - 1].contains(": 0 points changed"), "{out}");
    // Every blob is found whole, its centroid near the centre it was drawn
    // around (0.8 standard deviation, 120 points: within 0.25).
    let mut found = Vec::new();
    for l in &lines[rounds..] {
        assert!(l.contains(": 120 points, centroid ("), "{out}");
        let inner = l
            .split('(')
            .nth(1)
            .and_then(|r| r.strip_suffix(')'))
            .expect("a centroid");
        let xy: Vec<f64> = inner.split(", ").map(|v| v.parse().expect("a number")).collect();
        found.push((xy[0], xy[1]));
    }
    for (cx, cy) in [(0.0, 0.0), (4.0, 4.0), (-4.0, 5.0)] {
        assert!(
            found
                .iter()
                .any(|&(x, y)| (x - cx).abs() < 0.25 && (y - cy).abs() < 0.25),
            "no centroid near ({cx}, {cy}):\n{out}"
        );
    }
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../goldens/examples"));
    settings.bind(|| insta::assert_snapshot!("kmeans", out));
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
