//! The golden harness: every `testdata/**/*.tw` program (outside
//! `testdata/vectors/`) is run through the real `twill` binary, and its
//! source, stdout, stderr and exit status are compared with an insta
//! snapshot in `goldens/`. Adding a test is dropping a file; a snapshot
//! whose program no longer exists fails the run. See testdata/README.md.
//!
//! Every program runs with `TWILL_CROSSCHECK=1`: each tensor dtype the
//! static checker claims (at bindings and `print` arguments) is asserted at
//! run time, so a checker/evaluator disagreement shows up as an error in
//! the snapshot.

// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root exists")
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "vectors") {
                continue;
            }
            collect(&p, out);
        } else if p.extension().is_some_and(|e| e == "tw") {
            out.push(p);
        }
    }
}

/// `core/fib.tw` → `core__fib`.
fn snapshot_name(rel: &Path) -> String {
    rel.with_extension("")
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("__")
}

/// A program may pass command-line arguments with a first line
/// `# args: a b c`.
fn program_args(source: &str) -> Vec<String> {
    source
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("# args:"))
        .map(|rest| rest.split_whitespace().map(String::from).collect())
        .unwrap_or_default()
}

fn run_case(root: &Path, rel: &Path) -> String {
    let source = std::fs::read_to_string(root.join(rel)).expect("test program is readable");
    let output = Command::new(env!("CARGO_BIN_EXE_twill"))
        .current_dir(root)
        .arg("run")
        .arg(rel)
        .args(program_args(&source))
        .env("NO_COLOR", "1")
        .env("TWILL_CROSSCHECK", "1")
        .output()
        .expect("twill binary runs");
    let code = output
        .status
        .code()
        .map(|c| c.to_string())
        .unwrap_or_else(|| "killed by a signal".into());
    format!(
        "--- source\n{}\n--- stdout\n{}\n--- stderr\n{}\n--- exit status: {}\n",
        source.trim_end(),
        String::from_utf8_lossy(&output.stdout).trim_end(),
        String::from_utf8_lossy(&output.stderr).trim_end(),
        code
    )
}

/// Snapshots in `dir` that no program produced: a test that silently
/// stopped running.
fn unreferenced_snapshots(dir: &Path, names: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.filter_map(Result::ok) {
            let file = e.file_name().to_string_lossy().into_owned();
            if let Some(stem) = file.strip_suffix(".snap") {
                if !names.iter().any(|n| n == stem) {
                    out.push(file);
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_stray_snapshot_is_reported() {
    let dir = std::env::temp_dir().join(format!("twill-goldens-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("lang__kept.snap"), "x").expect("write");
    std::fs::write(dir.join("lang__gone.snap"), "x").expect("write");
    std::fs::write(dir.join("notes.txt"), "x").expect("write");
    let stray = unreferenced_snapshots(&dir, &["lang__kept".to_string()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(stray, vec!["lang__gone.snap".to_string()]);
}

#[test]
fn goldens() {
    let root = workspace_root();
    let mut programs = Vec::new();
    collect(&root.join("testdata"), &mut programs);
    assert!(
        programs.len() >= 40,
        "expected at least 40 golden programs, found {}",
        programs.len()
    );

    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root.join("goldens"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);

    let mut names = Vec::new();
    let mut failures = Vec::new();
    for path in &programs {
        let rel = path
            .strip_prefix(&root)
            .expect("program is under the workspace")
            .to_path_buf();
        let name = snapshot_name(rel.strip_prefix("testdata").unwrap_or(&rel));
        names.push(name.clone());
        let content = run_case(&root, &rel);
        settings.set_input_file(path);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            settings.bind(|| insta::assert_snapshot!(name.as_str(), content));
        }));
        if result.is_err() {
            failures.push(rel.display().to_string());
        }
    }

    let unreferenced = unreferenced_snapshots(&root.join("goldens"), &names);
    assert!(
        failures.is_empty() && unreferenced.is_empty(),
        "golden mismatches: {failures:?}\nunreferenced snapshots (delete them or restore their programs): {unreferenced:?}"
    );
}
