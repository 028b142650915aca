//! The fuzzer's short budget (tools/fuzz): a fixed set of generated and
//! mutated programs, run through the real binary under `twill run` and
//! `twill check` with a memory cap and a timeout. Any finding — a panic,
//! a signal, an exit status outside 0/1/2, a timeout, an unlocated
//! `error:`, `check` exiting 1, `run` and `check` disagreeing about a
//! static error — fails the test with the saved programs listed. The long
//! run is `just fuzz SECONDS`.

// Test code runs the binary and writes findings: the core crates' IO rule
// (clippy.toml) is for the interpreter, not its tests.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use twill_fuzz::exec::Limits;
use twill_fuzz::Config;

/// Programs in the budget (about 20 s on two cores); the time limit below
/// only stops a slow machine early (it is a budget, not an assertion).
const PROGRAMS: u64 = 1500;
/// Any seed: the findings of issue 11 that most seeds met within a few
/// hundred programs are fixed, and the one-hour runs find nothing.
const SEED: u64 = 1;
const BUDGET: Duration = Duration::from_secs(50);

#[test]
fn a_short_fuzz_run_finds_nothing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let twill = PathBuf::from(env!("CARGO_BIN_EXE_twill"));
    let cfg = Config {
        findings: twill_fuzz::default_findings(&twill).join("cargo-test"),
        twill,
        corpus: root.join("testdata"),
        seed: SEED,
        budget: BUDGET,
        max_programs: Some(PROGRAMS),
        jobs: 2,
        limits: Limits {
            timeout: Duration::from_secs(10),
            memory_bytes: 4096 << 20,
        },
    };
    let report = twill_fuzz::fuzz(&cfg).unwrap();
    assert!(report.programs > 0, "the fuzzer ran no program");
    assert!(
        report.findings.is_empty(),
        "the fuzzer found problems:\n{}",
        report.summary()
    );
}
