//! Spec §16: every case of `testdata/vectors/indexing.jsonl` — NumPy's
//! indexing and assignment over random subscripts, the vectors the native
//! kernels are tested on (`crates/tensor/tests/indexing.rs`, whose case
//! runner this includes) — run through the self-hosted `reference`
//! module's `index` and `assign`, which `twill run --reference` uses for
//! `x[s]`, `x[s] = v` and `x[s] op= v`.

// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(clippy::wildcard_enum_match_arm)]
// Test code reads fixtures: the core crates' IO rule (clippy.toml) is for
// the interpreter, not its tests.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

#[path = "../../tensor/tests/support/indexing.rs"]
mod indexing;

use indexing::{run_all, Backend};

const REFERENCE: Backend = Backend {
    index: twill_eval::reference::index,
    assign: twill_eval::reference::assign,
};

#[test]
fn every_indexing_case_passes_through_the_reference_module() {
    twill_eval::reference::set_enabled(true);
    let n = run_all(&REFERENCE);
    assert!(n >= 1000, "only {n} cases");
}
