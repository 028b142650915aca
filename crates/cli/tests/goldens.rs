//! The golden harness: every `testdata/**/*.tw` program (outside
//! `testdata/vectors/`) is its own test, named after its path
//! (`lang/ok/closures.tw` is `lang__ok__closures`; `build.rs` writes the
//! list). Each is run by a `twill_session::Session`, exactly as `twill run`
//! runs it (real files, relative to the workspace root; stdout captured;
//! diagnostics rendered without colour; the big stack of the binary's
//! interpreter thread), and its source, stdout, stderr and exit status are
//! compared with the insta snapshot of the same name in `goldens/` (with the
//! kind of a runtime error, `twill_eval::ErrorKind`, on a last line). The
//! folder holding a program states its outcome: under `ok/` it must exit 0,
//! under `err/` with 1 or 2. Adding a test is dropping a file; a snapshot
//! whose program no longer exists fails the run. See testdata/README.md.
//! (`tests/cli.rs` covers the binary itself.)
//!
//! Each program also runs a third time with the self-hosted reference
//! runtime on (`twill run --reference`, spec §16) and must print the same
//! bytes, unless `testdata/reference_pending.txt` excludes it with a reason.
//!
//! Every program runs with the crosscheck on (`TWILL_CROSSCHECK=1` for the
//! binary): each tensor dtype the static checker claims (at bindings and
//! `print` arguments) is asserted at run time, so a checker/evaluator
//! disagreement shows up as an error in the snapshot.

// Test code reads fixtures and runs the binary: the core crates' IO rule
// (clippy.toml) is for the interpreter, not its tests.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use twill_session::{CollectReporter, Engine, Mode, Options, RealHost, Session, SharedBuf};

/// The stack `twill` gives its interpreter thread (its first choice).
const STACK: usize = 4 << 30;

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
            // Oracle data, and modules the programs beside them import.
            if p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n == "vectors" || n.starts_with('_'))
            {
                continue;
            }
            collect(&p, out);
        } else if p.extension().is_some_and(|e| e == "tw") {
            out.push(p);
        }
    }
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

/// Runs one program as `twill run REL ARGS…` would from the workspace root
/// (the caller has made that the current directory): the snapshot text of
/// the run, and its exit status.
fn run_case(root: &Path, rel: &Path, engine: Engine, reference: bool) -> (String, Option<i32>) {
    let source = std::fs::read_to_string(root.join(rel)).expect("test program is readable");
    let args = program_args(&source);
    let path = rel.to_string_lossy().into_owned();
    let (stdout, stderr, code, kind) = std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || {
            let out = SharedBuf::default();
            let host = RealHost::with_stdout(args, Box::new(out.clone()));
            let mut reporter = CollectReporter::default();
            let mut session = Session::new(
                Box::new(host),
                Options {
                    crosscheck: true,
                    types: false,
                    engine,
                    reference,
                },
            );
            let status = session.run_path(&path, Mode::Run, &mut reporter);
            let kind = session.last_error_kind();
            (out.text(), reporter.text, status.code(), kind)
        })
        .expect("a thread for the program")
        .join()
        .expect("the session does not panic");
    let mut text = format!(
        "--- source\n{}\n--- stdout\n{}\n--- stderr\n{}\n--- exit status: {}\n",
        source.trim_end(),
        stdout.trim_end(),
        stderr.trim_end(),
        code
    );
    // A runtime error's kind, so that a snapshot asserts which failure it is.
    if let Some(kind) = kind {
        text.push_str(&format!("--- error kind: {kind}\n"));
    }
    (text, Some(code))
}

/// Why a golden is not compared under `--reference`.
#[derive(Debug, PartialEq)]
enum Exclusion {
    /// `size PATH why`: its tensors are beyond the reference runtime's
    /// size cap (spec §16 allows one), so it is not run there.
    Size,
    /// `golden PATH why`: it does not agree yet; it must still differ, so
    /// the list only shrinks.
    Pending,
}

/// The goldens testdata/reference_pending.txt excludes (`size PATH why`
/// and `golden PATH why`), read once; every line must give a reason.
fn reference_exclusions() -> &'static [(Exclusion, String)] {
    static LIST: std::sync::OnceLock<Vec<(Exclusion, String)>> = std::sync::OnceLock::new();
    LIST.get_or_init(|| {
        let text = std::fs::read_to_string(workspace_root().join("testdata/reference_pending.txt"))
            .expect("testdata/reference_pending.txt is readable");
        let mut out = Vec::new();
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let mut words = line.split_whitespace();
            let kind = match words.next() {
                Some("size") => Exclusion::Size,
                Some("golden") => Exclusion::Pending,
                _ => continue,
            };
            let rel = words.next().unwrap_or("").to_string();
            assert!(
                words.next().is_some(),
                "reference_pending.txt gives no reason for {rel}"
            );
            out.push((kind, rel));
        }
        out
    })
}

/// Whether testdata/reference_pending.txt excludes the golden `rel` (its
/// path below testdata/), and how.
fn reference_exclusion(rel: &str) -> Option<&'static Exclusion> {
    reference_exclusions()
        .iter()
        .find(|(_, r)| r == rel)
        .map(|(kind, _)| kind)
}

#[test]
fn every_reference_exclusion_names_a_golden() {
    for (_, rel) in reference_exclusions() {
        assert!(
            PROGRAMS.iter().any(|(_, r)| r == rel),
            "reference_pending.txt names {rel:?}, which is no golden program"
        );
    }
}

/// The outcome a program's folder promises: `Some(true)` under `ok/`,
/// `Some(false)` under `err/`, `None` anywhere else.
fn expects_success(rel: &str) -> Option<bool> {
    let folder = Path::new(rel).parent()?.file_name()?;
    match folder.to_str()? {
        "ok" => Some(true),
        "err" => Some(false),
        _ => None,
    }
}

/// One golden: `rel` is the program's path below `testdata/`.
fn golden(name: &str, rel: &str) {
    let root = workspace_root();
    // Programs name their data files relative to the workspace root, as
    // `twill run` does when started there (every test sets the same one).
    std::env::set_current_dir(&root).expect("the workspace root is a directory");
    let path = Path::new("testdata").join(rel);
    let (content, status) = run_case(&root, &path, Engine::Compiled, false);
    // The tree walker is the reference: the compiled engine must print the
    // same bytes, report the same errors and end with the same status.
    let (reference, _) = run_case(&root, &path, Engine::Tree, false);
    assert_eq!(
        content, reference,
        "{rel}: the compiled engine (left) and the tree walker (right) disagree"
    );
    // Spec §16: the same bytes with every tensor operation run by the
    // self-hosted reference module (`twill run --reference`), unless
    // testdata/reference_pending.txt excludes the program, with why.
    match reference_exclusion(rel) {
        None => {
            let (on_reference, _) = run_case(&root, &path, Engine::Compiled, true);
            assert_eq!(
                content, on_reference,
                "{rel}: natively (left) and under --reference (right) the program prints differently"
            );
        }
        Some(Exclusion::Pending) => {
            let (on_reference, _) = run_case(&root, &path, Engine::Compiled, true);
            assert_ne!(
                content, on_reference,
                "{rel} now prints the same under --reference: take its `golden` line off testdata/reference_pending.txt"
            );
        }
        Some(Exclusion::Size) => {}
    }
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root.join("goldens"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.set_input_file(root.join(&path));
    settings.bind(|| insta::assert_snapshot!(name, content));
    match expects_success(rel) {
        Some(true) => assert_eq!(status, Some(0), "{rel} is under ok/ but exited with {status:?}"),
        // A status of its own only from `exit(code)`.
        Some(false) => assert!(
            matches!(status, Some(1 | 2))
                || content.contains("--- error kind: exit\n") && status.is_some_and(|s| s != 0),
            "{rel} is under err/ but exited with {status:?}"
        ),
        None => panic!("{rel} is in neither an ok/ nor an err/ folder"),
    }
}

/// Defines one test per program and `PROGRAMS`, every (test name, path).
macro_rules! goldens {
    ($($name:ident => $rel:literal,)*) => {
        const PROGRAMS: &[(&str, &str)] = &[$((stringify!($name), $rel)),*];
        $(
            // The test is named exactly like its snapshot file.
            #[allow(non_snake_case)]
            #[test]
            fn $name() {
                golden(stringify!($name), $rel);
            }
        )*
    };
}

include!(concat!(env!("OUT_DIR"), "/goldens.rs"));

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
fn every_program_has_a_test_and_states_its_outcome() {
    let root = workspace_root();
    let mut found = Vec::new();
    collect(&root.join("testdata"), &mut found);
    let found: Vec<String> = found
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(root.join("testdata")).unwrap();
            rel.iter()
                .map(|c| c.to_str().unwrap())
                .collect::<Vec<_>>()
                .join("/")
        })
        .collect();
    let listed: Vec<String> = PROGRAMS.iter().map(|(_, rel)| rel.to_string()).collect();
    assert!(
        found.len() >= 40,
        "expected at least 40 golden programs, found {}",
        found.len()
    );
    assert_eq!(found, listed, "build.rs's list of programs is stale");
    let unsorted: Vec<&String> = found
        .iter()
        .filter(|rel| expects_success(rel).is_none())
        .collect();
    assert!(
        unsorted.is_empty(),
        "programs in neither an ok/ nor an err/ folder: {unsorted:?}"
    );
}

#[test]
fn every_snapshot_has_a_program() {
    let names: Vec<String> = PROGRAMS.iter().map(|(name, _)| name.to_string()).collect();
    let unreferenced = unreferenced_snapshots(&workspace_root().join("goldens"), &names);
    assert!(
        unreferenced.is_empty(),
        "unreferenced snapshots (delete them or restore their programs): {unreferenced:?}"
    );
}
