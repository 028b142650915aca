//! Robustness: every golden program, mutated deterministically (tokens
//! inserted, spans deleted, the text cut short), run through the real
//! binary. Whatever the input, twill must answer with exit status 0, 1 or 2
//! within a time limit, and never with a panic or an internal error.

// Test code reads fixtures and runs the binary: the core crates' IO rule
// (clippy.toml) is for the interpreter, not its tests.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CASES: usize = 300;
const LIMIT: Duration = Duration::from_secs(20);

const TOKENS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ".",
    ":",
    "?",
    "=",
    "==",
    "+",
    "-",
    "*",
    "/",
    "//",
    "%",
    "**",
    "@",
    "fn",
    "let",
    "var",
    "if",
    "else",
    "while",
    "for",
    "in",
    "match",
    "return",
    "break",
    "0",
    "-1",
    "1e308",
    "nan",
    "\"s\"",
    "x",
    "zeros([3])",
    "[1.0, 2.0]",
    "bf16",
    "\n",
    ";",
    "9223372036854775807",
    "[[1], [2, 3]]",
    "arr(range(3))",
    ".to(i8)",
    "[0]",
    "[-1]",
    "[::0]",
    ".T",
    ".shape",
    "\"\\u{zz}\"",
    "#",
    "struct S { a: Int }",
];

/// A small deterministic generator (64-bit LCG, Knuth's constants).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

fn programs() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else { return };
        let mut entries: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "tw") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata"),
        &mut files,
    );
    files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .collect()
}

fn char_floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn mutate(src: &str, rng: &mut Lcg) -> String {
    let mut s = src.to_string();
    for _ in 0..1 + rng.next(4) {
        let pos = char_floor(&s, rng.next(s.len() + 1));
        match rng.next(10) {
            0..=3 => s.insert_str(pos, TOKENS[rng.next(TOKENS.len())]),
            4..=6 => {
                let end = char_floor(&s, pos + 1 + rng.next(10));
                s.replace_range(pos..end.max(pos), "");
            }
            _ => s.truncate(pos),
        }
    }
    s
}

#[test]
fn mutated_programs_never_crash() {
    let sources = programs();
    assert!(sources.len() >= 40, "the golden programs are the seed corpus");
    let mut rng = Lcg(0x7477_696c_6c21);
    let mut failures = Vec::new();
    for case in 0..CASES {
        let src = mutate(&sources[rng.next(sources.len())], &mut rng);
        let mut child = Command::new(env!("CARGO_BIN_EXE_twill"))
            .args(["run", "-"])
            .env("NO_COLOR", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("twill starts");
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(src.as_bytes());
        }
        let start = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if start.elapsed() > LIMIT => {
                    let _ = child.kill();
                    break None;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(2)),
                Err(_) => break None,
            }
        };
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut err);
        }
        let ok = status
            .and_then(|s| s.code())
            .is_some_and(|c| (0..=2).contains(&c))
            && !err.contains("internal error")
            && !err.contains("panicked");
        if !ok {
            failures.push(format!("case {case} ({status:?}):\n{src}\n--- stderr\n{err}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {CASES} mutated programs crashed or hung:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
