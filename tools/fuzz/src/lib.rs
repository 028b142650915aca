//! twill-fuzz: a fuzzer for the `twill` binary. Program number `n` of a
//! run with seed `s` is generated (`gen`, two in three) or mutated from the
//! golden corpus (`mutate`), deterministically from `(s, n)`; each program
//! is run under both `twill run` and `twill check` with a memory cap and a
//! timeout (`exec`; one that times out runs once more with twelve times
//! the timeout), and anything that is not a clean exit 0, 1 or 2 with
//! located diagnostics is a finding; a program that ran cleanly runs again
//! on the reference tree walker (`run --engine=tree`), and any difference
//! in output, errors or exit status is a finding too. Findings are told
//! apart by class and
//! first line, saved once each (the program and the reason) under the
//! findings directory, and counted in the [`Report`].
//!
//! `twill-fuzz --seconds N` (the `just fuzz` recipe) runs it on demand; a
//! fixed short budget runs in `cargo test` (crates/cli/tests/fuzz.rs).

// A fuzzer is a driver of processes and files, like the command-line
// crate: the core crates' IO rule (clippy.toml) is not for it.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod exec;
pub mod gen;
pub mod mutate;
pub mod rng;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use exec::{Class, End, Limits, Mode, Outcome};
use rng::Rng;

/// How many programs are saved for each distinct finding.
const EXAMPLES: u64 = 4;

/// What a fuzz run does.
#[derive(Clone, Debug)]
pub struct Config {
    /// The `twill` binary under test.
    pub twill: PathBuf,
    /// Where the mutator's seed programs live (`testdata/`); none found
    /// means every program is generated.
    pub corpus: PathBuf,
    /// Where findings are saved; also holds each job's scratch directory
    /// (the programs' working directory).
    pub findings: PathBuf,
    pub seed: u64,
    /// Stop after this long...
    pub budget: Duration,
    /// ...or after this many programs, whichever comes first.
    pub max_programs: Option<u64>,
    pub jobs: usize,
    pub limits: Limits,
}

/// One distinct finding.
#[derive(Clone, Debug)]
pub struct Finding {
    pub class: Class,
    pub mode: Mode,
    pub reason: String,
    /// Which program first showed it (regenerate with the same seed).
    pub program: u64,
    pub file: PathBuf,
    /// How many programs showed it.
    pub count: u64,
}

/// The result of a run.
#[derive(Debug, Default)]
pub struct Report {
    pub programs: u64,
    pub generated: u64,
    pub mutated: u64,
    /// Keyed by class, mode and reason (digits blanked), in that order.
    pub findings: BTreeMap<(Class, String), Finding>,
}

impl Report {
    /// Occurrences per class.
    pub fn by_class(&self) -> BTreeMap<Class, (usize, u64)> {
        let mut m: BTreeMap<Class, (usize, u64)> = BTreeMap::new();
        for f in self.findings.values() {
            let e = m.entry(f.class).or_default();
            e.0 += 1;
            e.1 += f.count;
        }
        m
    }

    /// The summary printed at the end of a run.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "programs run: {} ({} generated, {} mutated), each under `run` and `check`\n",
            self.programs, self.generated, self.mutated
        );
        if self.findings.is_empty() {
            s.push_str("findings: none\n");
            return s;
        }
        s.push_str("findings by class (distinct / programs):\n");
        for (class, (distinct, count)) in self.by_class() {
            s.push_str(&format!("  {:<20} {distinct} / {count}\n", class.name()));
        }
        for f in self.findings.values() {
            s.push_str(&format!(
                "  [{}] twill {} {}: {} (program {}, seen {}x)\n",
                f.class.name(),
                f.mode.arg(),
                f.file.display(),
                f.reason,
                f.program,
                f.count
            ));
        }
        s
    }
}

/// Program number `n`: its text and whether it is a mutant.
pub fn program(seed: u64, n: u64, corpus: &[Vec<u8>]) -> (Vec<u8>, bool) {
    let mut rng = Rng::for_program(seed, n);
    if !corpus.is_empty() && rng.below(3) == 0 {
        (mutate::mutant(corpus, &mut rng), true)
    } else {
        (gen::program(&mut rng).into_bytes(), false)
    }
}

/// Runs the fuzzer as `cfg` says.
pub fn fuzz(cfg: &Config) -> std::io::Result<Report> {
    std::fs::create_dir_all(&cfg.findings)?;
    // Programs run in a scratch directory, so relative paths would point
    // elsewhere there.
    let cfg = &Config {
        twill: std::fs::canonicalize(&cfg.twill)?,
        findings: std::fs::canonicalize(&cfg.findings)?,
        ..cfg.clone()
    };
    let corpus = mutate::corpus(&cfg.corpus);
    let next = AtomicU64::new(0);
    let report = Mutex::new(Report::default());
    let start = Instant::now();
    let jobs = cfg.jobs.max(1);
    let results: Vec<std::io::Result<()>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..jobs)
            .map(|job| {
                let (corpus, next, report) = (&corpus, &next, &report);
                s.spawn(move || worker(cfg, job, corpus, next, report, start))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("a fuzz job panicked")))
            })
            .collect()
    });
    for r in results {
        r?;
    }
    report
        .into_inner()
        .map_err(|_| std::io::Error::other("a fuzz job panicked holding the report"))
}

fn worker(
    cfg: &Config,
    job: usize,
    corpus: &[Vec<u8>],
    next: &AtomicU64,
    report: &Mutex<Report>,
    start: Instant,
) -> std::io::Result<()> {
    let scratch = cfg.findings.join(format!("scratch-{job}"));
    std::fs::create_dir_all(&scratch)?;
    let file = scratch.join("prog.tw");
    loop {
        if start.elapsed() >= cfg.budget {
            return Ok(());
        }
        let n = next.fetch_add(1, Ordering::SeqCst);
        if cfg.max_programs.is_some_and(|max| n >= max) {
            return Ok(());
        }
        let (text, mutated) = program(cfg.seed, n, corpus);
        // What an earlier program wrote must not change this one: a finding
        // has to reproduce from its own text.
        for left in gen::SCRATCH_FILES {
            let _ = std::fs::remove_file(scratch.join(left));
        }
        std::fs::write(&file, &text)?;
        let run = run_patiently(cfg, Mode::Run, &file, &scratch)?;
        let check = run_patiently(cfg, Mode::Check, &file, &scratch)?;
        let mut found: Vec<(Class, Mode, String, &Outcome)> = Vec::new();
        // A program that calls `exit(code)` may end with any status its
        // run chooses (spec §10.7).
        let may_exit = text.windows(5).any(|w| w == b"exit(");
        let chosen = |class: Class, mode: Mode| class == Class::Status && may_exit && mode != Mode::Check;
        for (mode, out) in [(Mode::Run, &run), (Mode::Check, &check)] {
            if let Some((class, reason)) = exec::verdict(mode, out) {
                if !chosen(class, mode) {
                    found.push((class, mode, reason, out));
                }
            }
        }
        if found.is_empty() && !may_exit {
            if let Some(reason) = disagreement(&run, &check) {
                found.push((Class::Disagree, Mode::Check, reason, &check));
            }
        }
        // The tree walker is the reference for the compiled engine: a
        // program that ran cleanly runs again on it, from the same files.
        // (`clock()` reads the time, so such a program is not compared.)
        let tree;
        if found.is_empty() && !text.windows(6).any(|w| w == b"clock(") {
            for left in gen::SCRATCH_FILES {
                let _ = std::fs::remove_file(scratch.join(left));
            }
            tree = run_patiently(cfg, Mode::Tree, &file, &scratch)?;
            if let Some((class, reason)) = exec::verdict(Mode::Tree, &tree) {
                if !chosen(class, Mode::Tree) {
                    found.push((class, Mode::Tree, reason, &tree));
                } else if let Some(reason) = divergence(&run, &tree) {
                    found.push((Class::Diverge, Mode::Tree, reason, &tree));
                }
            } else if let Some(reason) = divergence(&run, &tree) {
                found.push((Class::Diverge, Mode::Tree, reason, &tree));
            }
        }
        let mut r = report
            .lock()
            .map_err(|_| std::io::Error::other("a fuzz job panicked holding the report"))?;
        r.programs += 1;
        if mutated {
            r.mutated += 1;
        } else {
            r.generated += 1;
        }
        for (class, mode, reason, out) in found {
            let key = (class, format!("{} {}", mode.arg(), blank_digits(&reason)));
            if let Some(f) = r.findings.get_mut(&key) {
                f.count += 1;
                // A few more examples of each: one first line can stand
                // for several bugs (every `capacity overflow` reads alike).
                if f.count <= EXAMPLES {
                    let index = r.findings.len() + r.programs as usize;
                    save(cfg, class, mode, &reason, n, &text, out, index)?;
                }
                continue;
            }
            let saved = save(cfg, class, mode, &reason, n, &text, out, r.findings.len())?;
            r.findings.insert(
                key,
                Finding {
                    class,
                    mode,
                    reason,
                    program: n,
                    file: saved,
                    count: 1,
                },
            );
        }
    }
}

/// How many times the timeout a program that timed out gets on its second
/// run.
pub const PATIENCE: u32 = 12;

/// Runs the program; one that times out runs again, from clean scratch
/// files, with [`PATIENCE`] times the timeout. A program that is only slow
/// (a large tensor printed on a busy machine) then ends and is judged by
/// how it ended, which also shows an abort that the first timeout hid;
/// one that times out again is a timeout finding, to be read: most are
/// mutants that never end (a loop whose step was duplicated away).
fn run_patiently(cfg: &Config, mode: Mode, file: &Path, scratch: &Path) -> std::io::Result<Outcome> {
    let first = exec::run(&cfg.twill, mode, file, scratch, cfg.limits)?;
    if !matches!(first.end, End::Timeout) {
        return Ok(first);
    }
    for left in gen::SCRATCH_FILES {
        let _ = std::fs::remove_file(scratch.join(left));
    }
    let limits = Limits {
        timeout: cfg.limits.timeout.saturating_mul(PATIENCE),
        ..cfg.limits
    };
    exec::run(&cfg.twill, mode, file, scratch, limits)
}

/// `check` says exit 2 exactly when `run` does: both check the program
/// first, so they must agree on whether it has a static error.
fn disagreement(run: &Outcome, check: &Outcome) -> Option<String> {
    match (&run.end, &check.end) {
        (End::Exit(r), End::Exit(c)) if (*r == 2) != (*c == 2) => {
            Some(format!("`run` exited {r} but `check` exited {c}"))
        }
        _ => None,
    }
}

/// How the compiled engine's run differs from the tree walker's, if it
/// does: the exit status, then standard error, then standard output.
fn divergence(run: &Outcome, tree: &Outcome) -> Option<String> {
    if run.end != tree.end {
        return Some(format!("compiled: {:?}, tree walker: {:?}", run.end, tree.end));
    }
    if run.stderr != tree.stderr {
        let line = first_difference(&run.stderr, &tree.stderr);
        return Some(format!("standard error differs: {line}"));
    }
    if run.stdout != tree.stdout {
        let (a, b) = (
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&tree.stdout),
        );
        return Some(format!("standard output differs: {}", first_difference(&a, &b)));
    }
    None
}

/// The first line where `a` and `b` differ, as `compiled | tree`.
fn first_difference(a: &str, b: &str) -> String {
    let mut la = a.lines();
    let mut lb = b.lines();
    loop {
        match (la.next(), lb.next()) {
            (Some(x), Some(y)) if x == y => continue,
            (x, y) => {
                let cut = |s: Option<&str>| s.unwrap_or("<end>").chars().take(70).collect::<String>();
                return format!("{} | {}", cut(x), cut(y));
            }
        }
    }
}

/// The reason with its numbers blanked, so that one bug seen with many
/// sizes counts as one finding.
fn blank_digits(s: &str) -> String {
    let mut out = String::new();
    let mut in_digits = false;
    for c in s.chars().take(160) {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('N');
            }
            in_digits = true;
        } else {
            in_digits = false;
            out.push(c);
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn save(
    cfg: &Config,
    class: Class,
    mode: Mode,
    reason: &str,
    n: u64,
    text: &[u8],
    out: &Outcome,
    index: usize,
) -> std::io::Result<PathBuf> {
    let stem = format!("{}-seed{}-prog{n}-{index}", class.name(), cfg.seed);
    let program = cfg.findings.join(format!("{stem}.tw"));
    std::fs::write(&program, text)?;
    let mut stderr: String = out.stderr.chars().take(4000).collect();
    if stderr.len() < out.stderr.len() {
        stderr.push_str("\n[…]\n");
    }
    let note = format!(
        "class: {}\ncommand: {} {} {}\nreason: {reason}\nend: {:?}\nseed {} program {n}\n--- stderr ---\n{stderr}",
        class.name(),
        cfg.twill.display(),
        mode.arg(),
        program.display(),
        out.end,
        cfg.seed,
    );
    std::fs::write(cfg.findings.join(format!("{stem}.txt")), note)?;
    Ok(program)
}

/// The default findings directory: `target/fuzz-findings` of the
/// workspace the binary under test was built in.
pub fn default_findings(twill: &Path) -> PathBuf {
    twill
        .parent()
        .and_then(Path::parent)
        .map_or_else(|| PathBuf::from("target"), Path::to_path_buf)
        .join("fuzz-findings")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_that_times_out_runs_once_more_with_more_time() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("twill-fuzz-patience-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // A stand-in for twill that hangs the first time and then ends.
        let fake = dir.join("slow-once.sh");
        std::fs::write(
            &fake,
            "#!/bin/sh\nif [ -e once ]; then echo ended; exit 0; fi\ntouch once\nexec sleep 60\n",
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let cfg = Config {
            twill: fake,
            corpus: dir.clone(),
            findings: dir.clone(),
            seed: 0,
            budget: Duration::ZERO,
            max_programs: None,
            jobs: 1,
            limits: Limits {
                timeout: Duration::from_millis(300),
                memory_bytes: 1 << 32,
            },
        };
        let out = run_patiently(&cfg, Mode::Run, &dir.join("prog.tw"), &dir).unwrap();
        assert!(matches!(out.end, End::Exit(0)), "{:?}", out.end);
        assert_eq!(out.stdout, b"ended\n");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn numbers_are_blanked_in_keys() {
        assert_eq!(
            blank_digits("memory allocation of 800 bytes failed at 12:3"),
            "memory allocation of N bytes failed at N:N"
        );
    }

    #[test]
    fn only_a_static_error_on_one_side_is_a_disagreement() {
        let o = |c| Outcome {
            stdout: Vec::new(),
            end: End::Exit(c),
            stderr: String::new(),
        };
        assert!(disagreement(&o(2), &o(0)).is_some());
        assert!(disagreement(&o(0), &o(2)).is_some());
        assert!(disagreement(&o(1), &o(0)).is_none());
        assert!(disagreement(&o(2), &o(2)).is_none());
    }

    #[test]
    fn any_difference_between_the_engines_is_a_divergence() {
        let o = |c, err: &str, out: &str| Outcome {
            end: End::Exit(c),
            stderr: err.into(),
            stdout: out.as_bytes().to_vec(),
        };
        assert!(divergence(&o(0, "", "1\n2\n"), &o(0, "", "1\n2\n")).is_none());
        assert!(divergence(&o(0, "", "1\n"), &o(1, "", "1\n")).is_some());
        let err = divergence(&o(1, "error: a\n", ""), &o(1, "error: b\n", "")).unwrap();
        assert!(err.contains("error: a | error: b"), "{err}");
        let out = divergence(&o(0, "", "1\n2\n"), &o(0, "", "1\n3\n")).unwrap();
        assert!(out.contains("2 | 3"), "{out}");
        assert!(divergence(&o(0, "", "1\n"), &o(0, "", "1\n2\n"))
            .unwrap()
            .contains("<end> | 2"));
    }

    #[test]
    fn programs_are_a_function_of_seed_and_number() {
        let corpus = vec![b"print(1)\n".to_vec()];
        assert_eq!(program(4, 17, &corpus), program(4, 17, &corpus));
        let kinds: Vec<bool> = (0..60).map(|n| program(4, n, &corpus).1).collect();
        assert!(kinds.contains(&true) && kinds.contains(&false));
    }
}
