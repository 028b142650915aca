//! Spec §16: every oracle case of `testdata/vectors/ops_*.jsonl` run
//! through the self-hosted `reference` module (`twill_eval::reference`),
//! on the same vectors and with the same comparison as the native kernels'
//! test (`crates/tensor/tests/ops_oracle.rs`, whose case runner this
//! includes). An operation the module does not define yet is listed in
//! `testdata/reference_pending.txt` with why; each listed one must still
//! fail a case, so the list cannot keep an operation that has started to
//! pass, and every other operation must pass all its cases.

// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(clippy::wildcard_enum_match_arm)]
// Test code reads fixtures: the core crates' IO rule (clippy.toml) is for
// the interpreter, not its tests.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value as J;

#[path = "../../tensor/tests/support/oracle.rs"]
mod oracle;
use oracle::{run_case, vector_files, Backend};

const REFERENCE: Backend = Backend {
    call: |op, slots| twill_eval::reference::op(op, &slots),
    binary: |op, a, b| twill_eval::reference::binary(op, a, b).map_err(|e| e.message),
};

/// The operations `reference_pending.txt` lists (`op NAME why`).
fn pending_ops() -> BTreeSet<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/reference_pending.txt"
    );
    let text = std::fs::read_to_string(path).expect("testdata/reference_pending.txt is readable");
    let mut out = BTreeSet::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let mut words = line.split_whitespace();
        if words.next() == Some("op") {
            let name = words.next().expect("an op line names the operation");
            assert!(
                words.next().is_some(),
                "reference_pending.txt gives no reason for op `{name}`"
            );
            out.insert(name.to_string());
        }
    }
    out
}

/// `TWILL_REFERENCE_OPS=a,b` (for working on the module) runs only those
/// operations' cases and lists every failure; the test then passes only
/// if they all pass, and does not look at the pending list.
fn only_ops() -> Option<BTreeSet<String>> {
    std::env::var("TWILL_REFERENCE_OPS")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .map(|v| v.split(',').map(|s| s.trim().to_string()).collect())
}

#[test]
fn every_oracle_case_passes_through_the_reference_module() {
    twill_eval::reference::set_enabled(true);
    let only = only_ops();
    let pending = if only.is_some() {
        BTreeSet::new()
    } else {
        pending_ops()
    };
    let mut cases: BTreeMap<String, usize> = BTreeMap::new();
    let mut failed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in vector_files() {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?")
            .to_string();
        let text = std::fs::read_to_string(&file).expect("readable vectors");
        for (lineno, line) in text.lines().enumerate() {
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let c: J = serde_json::from_str(line).unwrap_or_else(|e| panic!("{name}:{}: {e}", lineno + 1));
            let op = c["op"].as_str().unwrap_or("?").to_string();
            if only.as_ref().is_some_and(|o| !o.contains(&op)) {
                continue;
            }
            *cases.entry(op.clone()).or_default() += 1;
            if pending.contains(&op) && failed.contains_key(&op) {
                // One failure is enough to keep it listed; skip the rest.
                continue;
            }
            if let Err(e) = run_case(&c, &REFERENCE) {
                failed.entry(op.clone()).or_default().push(format!(
                    "{name}:{} {op} ({}): {e}",
                    lineno + 1,
                    c["note"].as_str().unwrap_or("")
                ));
            }
        }
    }
    for op in &pending {
        assert!(
            cases.contains_key(op),
            "reference_pending.txt lists op `{op}`, which has no oracle cases"
        );
    }
    let mut wrong = Vec::new();
    for (op, fails) in &failed {
        if !pending.contains(op) {
            for f in fails.iter().take(if only.is_some() { 1000 } else { 5 }) {
                eprintln!("{f}");
            }
            wrong.push(format!("{op} ({} of {} cases)", fails.len(), cases[op]));
        }
    }
    let stale: Vec<&String> = pending.iter().filter(|op| !failed.contains_key(*op)).collect();
    let passed: usize = cases
        .iter()
        .filter(|(op, _)| !failed.contains_key(*op))
        .map(|(_, n)| n)
        .sum();
    eprintln!(
        "{passed} oracle cases of {} operations passed through the reference module; {} operations pending",
        cases.len() - failed.len(),
        pending.len()
    );
    assert!(
        wrong.is_empty(),
        "operations failing through the reference module: {wrong:?}"
    );
    assert!(
        stale.is_empty(),
        "these operations now pass every case; take them off testdata/reference_pending.txt: {stale:?}"
    );
}
