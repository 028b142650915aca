//! `twill-fuzz --seconds N --seed S [--jobs J]`: runs the fuzzer against a
//! built `twill` (default `target/release/twill`), prints the summary and
//! exits 1 when there are findings, 0 when there are none, 2 on a usage
//! error or when the fuzzer itself could not run.

// The fuzzer drives processes and files: the core crates' IO rule
// (clippy.toml) is not for it.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::path::PathBuf;
use std::time::Duration;

use twill_fuzz::exec::Limits;
use twill_fuzz::Config;

const USAGE: &str = "\
usage: twill-fuzz [--seconds N] [--seed S] [--jobs J] [--programs N]
                  [--twill PATH] [--corpus DIR] [--findings DIR]
                  [--timeout SECS] [--memory-mib M]
       twill-fuzz --print N [--seed S]   (writes program N to standard output)

defaults: 60 seconds, seed 1, 1 job, no program limit,
          target/release/twill, testdata, target/fuzz-findings,
          a 5 s timeout and a 4096 MiB address-space cap per child";

fn parse() -> Result<Config, String> {
    let mut seconds = 60u64;
    let mut cfg = Config {
        twill: PathBuf::from("target/release/twill"),
        corpus: PathBuf::from("testdata"),
        findings: PathBuf::new(),
        seed: 1,
        budget: Duration::ZERO,
        max_programs: None,
        jobs: 1,
        limits: Limits {
            timeout: Duration::from_secs(5),
            memory_bytes: 4096 << 20,
        },
    };
    let mut findings = None;
    let mut print = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--help" || flag == "-h" {
            return Err(String::new());
        }
        let value = args.next().ok_or(format!("`{flag}` needs a value"))?;
        let num = |v: &str| {
            v.parse::<u64>()
                .map_err(|_| format!("`{flag}` needs a number, not `{v}`"))
        };
        match flag.as_str() {
            "--seconds" => seconds = num(&value)?,
            "--seed" => cfg.seed = num(&value)?,
            "--print" => print = Some(num(&value)?),
            "--jobs" => cfg.jobs = usize::try_from(num(&value)?.max(1)).unwrap_or(1),
            "--programs" => cfg.max_programs = Some(num(&value)?),
            "--timeout" => cfg.limits.timeout = Duration::from_secs(num(&value)?.max(1)),
            "--memory-mib" => cfg.limits.memory_bytes = num(&value)?.saturating_mul(1 << 20),
            "--twill" => cfg.twill = PathBuf::from(value),
            "--corpus" => cfg.corpus = PathBuf::from(value),
            "--findings" => findings = Some(PathBuf::from(value)),
            other => return Err(format!("unknown option `{other}`")),
        }
    }
    if let Some(n) = print {
        let corpus = twill_fuzz::mutate::corpus(&cfg.corpus);
        let (text, _) = twill_fuzz::program(cfg.seed, n, &corpus);
        use std::io::Write;
        let _ = std::io::stdout().write_all(&text);
        std::process::exit(0);
    }
    cfg.budget = Duration::from_secs(seconds);
    cfg.findings = findings.unwrap_or_else(|| twill_fuzz::default_findings(&cfg.twill));
    if !cfg.twill.is_file() {
        return Err(format!(
            "no twill binary at {} (build it with `cargo build --release`)",
            cfg.twill.display()
        ));
    }
    Ok(cfg)
}

fn main() {
    let cfg = match parse() {
        Ok(cfg) => cfg,
        Err(msg) => {
            if !msg.is_empty() {
                eprintln!("error: {msg}\n");
            }
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    };
    println!(
        "fuzzing {} for {} s (seed {}, {} job(s)); findings go to {}",
        cfg.twill.display(),
        cfg.budget.as_secs(),
        cfg.seed,
        cfg.jobs,
        cfg.findings.display()
    );
    match twill_fuzz::fuzz(&cfg) {
        Ok(report) => {
            print!("{}", report.summary());
            std::process::exit(if report.findings.is_empty() { 0 } else { 1 });
        }
        Err(e) => {
            eprintln!("error: the fuzzer could not run: {e}");
            std::process::exit(2);
        }
    }
}
