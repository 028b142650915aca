//! Tidy: conventions of the tree that no compiler checks. Every Rust file
//! under `crates/` opens with a `//!` paragraph saying what it owns; the
//! user-facing prose (`README.md`, `docs/*.md`) makes no claim in the future
//! tense about what exists (a phrase from [`STALE`] means the text describes
//! a plan rather than the tree) and links only to files in the repository,
//! which a clone has; and the README's tour is, line for line, the
//! golden program `testdata/spec/ok/readme_tour.tw`, whose snapshot holds
//! what it prints.

// A failing test should stop with the value it was given, so tests unwrap.
// Test code reads the tree: the core crates' IO rule (clippy.toml) is for
// the interpreter, not its tests.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;
use std::path::{Path, PathBuf};

/// Phrases that mark prose about what the tree will (or does not yet) do.
/// Matched case-insensitively, except the two markers in capitals, which are
/// case-sensitive so that the clippy lint `todo` can be named.
const STALE: &[&str] = &[
    "not built yet",
    "not yet built",
    "not implemented yet",
    "not yet implemented",
    "not supported yet",
    "not yet supported",
    "will be",
    "will come",
    "joins it later",
    "coming soon",
];
const STALE_MARKERS: &[&str] = &["TODO", "FIXME"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file below `dir`, skipping build output.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "target") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_rust_file_opens_with_a_module_doc() {
    let mut files = Vec::new();
    rust_files(&root().join("crates"), &mut files);
    // Guards against walking the wrong directory and passing on nothing.
    assert!(files.len() > 40, "found only {} .rs files", files.len());
    let missing: Vec<String> = files
        .iter()
        .filter(|f| !fs::read_to_string(f).unwrap().starts_with("//!"))
        .map(|f| f.strip_prefix(root()).unwrap_or(f).display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "these files do not open with a `//!` paragraph saying what they own:\n  {}",
        missing.join("\n  ")
    );
}

#[test]
fn docs_make_no_future_tense_claims() {
    let root = root();
    let mut docs = vec![root.join("README.md")];
    for entry in fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            docs.push(path);
        }
    }
    assert!(docs.len() > 3, "found only {} documents", docs.len());
    let mut found = Vec::new();
    for doc in &docs {
        let name = doc.strip_prefix(&root).unwrap_or(doc).display().to_string();
        // The prose as one line of single spaces, so a phrase broken across
        // lines is found too; `starts` maps an offset back to its line.
        let mut flat = String::new();
        let mut starts = Vec::new();
        for line in fs::read_to_string(doc).unwrap().lines() {
            starts.push(flat.len());
            for word in line.split_whitespace() {
                flat.push_str(word);
                flat.push(' ');
            }
        }
        let lower = flat.to_lowercase();
        // A phrase counts where a word starts: "twill be…" (say, "twill
        // bed0860" in a measurement's header) holds no "will be".
        let word_start = |at: usize| {
            lower[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric())
        };
        let hits = STALE.iter().flat_map(|p| {
            lower
                .match_indices(p)
                .filter(|&(at, _)| word_start(at))
                .map(|(at, _)| (at, *p))
        });
        let markers = STALE_MARKERS
            .iter()
            .flat_map(|m| flat.match_indices(m).map(|(at, _)| (at, *m)));
        for (at, phrase) in hits.chain(markers) {
            let line = starts.partition_point(|s| *s <= at);
            found.push(format!("{name}:{line}: `{phrase}`"));
        }
    }
    assert!(
        found.is_empty(),
        "say what exists, in the present tense:\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn the_readme_tour_is_the_golden_program() {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let after = readme.split_once("## A short tour").expect("README has a tour").1;
    let block = after.split_once("```\n").expect("the tour is a code block").1;
    let tour = block.split_once("```").expect("the code block ends").0;
    let program = fs::read_to_string(root().join("testdata/spec/ok/readme_tour.tw")).unwrap();
    // The program's first line says what it is; the rest is the tour.
    let body = program.split_once('\n').expect("the program has a header line").1;
    assert_eq!(
        tour, body,
        "README's tour and testdata/spec/ok/readme_tour.tw differ"
    );
}

#[test]
fn docs_link_only_to_files_in_the_repository() {
    let root = root().canonicalize().unwrap();
    let mut docs = vec![root.join("README.md"), root.join("testdata/README.md")];
    for entry in fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            docs.push(path);
        }
    }
    let mut links = 0;
    let mut bad = Vec::new();
    for doc in &docs {
        let text = fs::read_to_string(doc).unwrap();
        let name = doc.strip_prefix(&root).unwrap_or(doc).display().to_string();
        for (at, _) in text.match_indices("](") {
            let rest = &text[at + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = &rest[..end];
            if target.contains("://") || target.starts_with('#') || target.starts_with("mailto:") {
                continue;
            }
            links += 1;
            let file = target.split('#').next().unwrap_or(target);
            let inside = doc
                .parent()
                .unwrap()
                .join(file)
                .canonicalize()
                .is_ok_and(|p| p.starts_with(&root));
            if !inside {
                bad.push(format!("{name}: ({target})"));
            }
        }
    }
    assert!(links >= 3, "found only {links} links");
    assert!(
        bad.is_empty(),
        "links to files missing from the repository (a clone has only these):\n  {}",
        bad.join("\n  ")
    );
}
