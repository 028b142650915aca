//! Hostile sizes through the whole `twill check`/`twill run` pipeline
//! (issue 11): inputs too large to keep as golden files are generated here,
//! and each test asserts where the diagnostic points and that its size does
//! not grow with the input. No timings: a regression to quadratic parsing
//! shows up as a test that takes minutes, a regression in rendering as
//! megabytes of stderr.

// Test code runs the binary: the core crates' IO rule (clippy.toml) is for
// the interpreter, not its tests.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `twill ARGS -` on `src`.
fn twill(args: &[&str], src: &str) -> Output {
    let mut full = args.to_vec();
    full.push("-");
    twill_raw(&full, src)
}

/// Runs `twill ARGS` with `src` on standard input.
fn twill_raw(args: &[&str], src: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_twill"))
        .args(args)
        .env("TWILL_HISTORY", "/dev/null")
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("twill starts");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(src.as_bytes())
        .expect("stdin accepts input");
    child.wait_with_output().expect("twill finishes")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The first and last characters of a long report, for a failure message.
fn ends(s: &str) -> String {
    let n = s.chars().count();
    let head: String = s.chars().take(1_000).collect();
    let tail: String = s.chars().skip(n.saturating_sub(1_000)).collect();
    format!("{head}\n[…]\n{tail}")
}

/// A static error whose report is small and names `location`.
fn assert_small_static_error(o: &Output, location: &str, message: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.len() < 2_000,
        "{} bytes of stderr:\n{}",
        err.len(),
        ends(&err)
    );
    assert!(err.contains(location), "{err}");
    assert!(err.contains(message), "{err}");
    assert!(!err.contains("internal error"), "{err}");
}

#[test]
fn two_hundred_thousand_open_braces_stop_at_the_nesting_limit() {
    let src = format!("print({}", "{".repeat(200_000));
    let o = twill(&["check"], &src);
    // `(` is level 1, so the 1,000th `{` (byte 1005) opens level 1,001.
    assert_small_static_error(&o, "<stdin>:1:1006", "nested too deeply");
    // One error: the parser never saw the input past the limit.
    assert_eq!(stderr(&o).matches("error:").count(), 1, "{}", stderr(&o));
}

#[test]
fn a_million_nested_ifs_on_one_line_give_one_short_error() {
    let open = "if true { ".repeat(1_000_000);
    let o = twill(&["check"], &open);
    assert_small_static_error(&o, "<stdin>:1:10009", "nested too deeply");
    let closed = format!("{open}1{}", " }".repeat(1_000_000));
    let o = twill(&["check"], &closed);
    assert_small_static_error(&o, "<stdin>:1:10009", "nested too deeply");
}

#[test]
fn nesting_up_to_the_limit_is_accepted() {
    let src = format!("print({}1{})\n", "[".repeat(999), "]".repeat(999));
    let o = twill(&["check"], &src);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn a_flood_of_errors_stops_after_a_hundred() {
    // Each `)` in a block is an error; recovery then drops tokens to the
    // end of the line, 100,000 of them at 999 levels of nesting.
    let src = format!("{}\n{}\n", "{".repeat(999), ") ".repeat(100_000));
    let o = twill(&["check"], &src);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.len() < 10_000, "{} bytes:\n{}", err.len(), ends(&err));
    // A stray character per line: 100,000 lexical errors.
    let o = twill(&["check"], &"$\n".repeat(100_000));
    let err = stderr(&o);
    assert_eq!(err.matches("error:").count(), 101, "{}", ends(&err));
    assert!(
        err.contains("error: too many errors (over 100)"),
        "{}",
        ends(&err)
    );
    assert!(err.len() < 100_000, "{} bytes", err.len());
}

#[test]
fn a_runtime_error_on_a_long_line_shows_a_window_of_it() {
    let src = format!("{}print(1 // 0)\n", "let v = 1; ".repeat(20_000));
    let o = twill(&["run"], &src);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.len() < 2_000, "{} bytes", err.len());
    // The column is the file's, not the window's.
    assert!(err.contains("<stdin>:1:220007"), "{err}");
    assert!(err.contains(" │ … = 1; let v = 1; "), "{err}");
    assert!(err.contains("let v = 1; print(1 // 0)\n"), "{err}");
}

#[test]
fn a_long_repl_entry_is_read_in_linear_time() {
    // The REPL used to parse the whole entry again after every line: this
    // entry took minutes.
    let src = format!("let a = [\n{}]\nprint(a.shape)\n", "1,\n".repeat(200_000));
    let o = twill_raw(&["repl"], &src);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "[200000]\n", "{}", stderr(&o));
    // Brackets opened by a `:` command do not hold it back.
    let o = twill_raw(&["repl"], ":type [1,\nprint(2)\n");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "2\n", "{}", stderr(&o));
}

/// A 12 MB chain of 3 million `+` is refused as the parser builds it (the
/// tree never exceeds the 20,000-level limit, so memory stays small): one
/// error at the chain, and a chain just under the limit is accepted.
#[test]
fn a_chain_deeper_than_the_expression_limit_is_refused_while_parsing() {
    let src = format!("let x = {}1\nprint(x)\n", "1 + ".repeat(3_000_000));
    let o = twill(&["check"], &src);
    assert_small_static_error(&o, "<stdin>:1:9", "expression nested too deeply");
    assert_eq!(stderr(&o).matches("error:").count(), 1, "{}", stderr(&o));
    // 19,998 `+` make a tree 19,999 deep, inside a `let`'s value.
    let src = format!("let x = {}1\nprint(x)\n", "1 + ".repeat(19_998));
    let o = twill(&["run"], &src);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "19999\n");
    let src = format!("let x = {}1\n", "- ".repeat(25_000));
    let o = twill(&["check"], &src);
    assert_small_static_error(&o, "<stdin>:1:", "expression nested too deeply");
}
