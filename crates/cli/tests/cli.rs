//! End-to-end tests of the `twill` command itself: the REPL driven through
//! a pipe, `run -`, `check`, exit statuses, `--help` and `--version`.

// Test code reads fixtures and runs the binary: the core crates' IO rule
// (clippy.toml) is for the interpreter, not its tests.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn twill(args: &[&str], stdin: &str) -> Output {
    twill_bytes(args, stdin.as_bytes())
}

fn twill_bytes(args: &[&str], stdin: &[u8]) -> Output {
    twill_with_env(args, stdin, &[])
}

/// [`twill_bytes`] with extra environment variables.
fn twill_with_env(args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_twill"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("TWILL_HISTORY", "/dev/null")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("twill starts");
    let written = child.stdin.take().expect("stdin is piped").write_all(stdin);
    // A run that stops before reading its input (a usage error such as
    // `--engine=jit`) may close the pipe first: that is not a failure.
    if let Err(e) = written {
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::BrokenPipe,
            "stdin accepts input: {e}"
        );
    }
    child.wait_with_output().expect("twill finishes")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn repl_prints_expression_values() {
    let o = twill(&["repl"], "let x = 2\nx * 3\n");
    assert_eq!(stdout(&o), "6\n");
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn repl_keeps_definitions_across_entries() {
    let o = twill(
        &[],
        "fn sq(n) { n * n }\nvar total = 0\ntotal += sq(4)\ntotal\nstruct P { a: Int }\nP { a: total }\n",
    );
    assert_eq!(stdout(&o), "16\nP { a: 16 }\n");
}

#[test]
fn repl_reads_multi_line_input() {
    let o = twill(&["repl"], "fn f(n) {\n  if n > 1 {\n    n * f(n - 1)\n  } else {\n    1\n  }\n}\nf(5)\nlet xs = [\n  \"a\",\n  \"b\"\n]\nxs.len()\n");
    assert_eq!(stdout(&o), "120\n2\n", "stderr: {}", stderr(&o));
}

#[test]
fn repl_survives_errors() {
    let o = twill(
        &["repl"],
        "let a = 1\nundefined_name\nlet b = )\n1 / 0\n9223372036854775807 + 1\na + 1\n",
    );
    assert_eq!(stdout(&o), "inf\n2\n");
    let err = stderr(&o);
    assert!(err.contains("error: unknown name `undefined_name`"), "{err}");
    assert!(err.contains("error: unexpected"), "{err}");
    assert!(err.contains("error: Int overflow"), "{err}");
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn repl_does_not_keep_a_failed_definition() {
    let o = twill(&["repl"], "let a = 1\nlet a2 = nope\na2\n");
    assert!(stderr(&o).contains("unknown name `a2`"), "{}", stderr(&o));
}

#[test]
fn repl_seeds_the_program_generator_once_per_session() {
    // Spec §11.5: the entries of one session draw one stream (two calls
    // differ), and a new session starts it again.
    let input = "let a = rand([2])\nlet b = rand([2])\nprint((a == b).all())\nprint(a)\n";
    let first = twill(&["repl"], input);
    let second = twill(&["repl"], input);
    assert_eq!(stdout(&first), stdout(&second));
    assert!(stdout(&first).starts_with("false bool\n["), "{}", stdout(&first));
    let run = twill(&["run", "-"], "print(rand([2]))\n");
    assert_eq!(stdout(&first).lines().nth(1), stdout(&run).lines().next());
}

#[test]
fn exit_ends_run_and_repl_with_its_status_after_flushing() {
    // Spec §10.7: the status is exit's, and what was printed is kept (to a
    // pipe, whose output is buffered until the end).
    let run = twill(
        &["run", "-"],
        "print(\"kept\", end=\"\")\nexit(7)\nprint(\"lost\")\n",
    );
    assert_eq!(stdout(&run), "kept");
    assert_eq!(stderr(&run), "");
    assert_eq!(run.status.code(), Some(7));
    let repl = twill(&["repl"], "let a = 1\nprint(a)\nexit(4)\nprint(2)\n");
    assert_eq!(stdout(&repl), "1\n");
    assert_eq!(repl.status.code(), Some(4));
}

#[test]
fn repl_prints_nothing_for_unit_and_statements() {
    let o = twill(&["repl"], "print(\"hi\")\nlet q = 5\nif q > 1 { q }\n");
    assert_eq!(stdout(&o), "hi\n5\n");
}

#[test]
fn repl_type_and_help_commands() {
    let o = twill(
        &["repl"],
        ":type 1 + 2.5\n:type \"s\".len()\n:help\n:type zeros\n:type nope + 1\n",
    );
    let out = stdout(&o);
    assert!(out.starts_with("F64\nInt\n"), "{out}");
    assert!(out.contains(":quit"), "{out}");
    // A builtin's type is its signature; an error points into the text
    // as typed, not into a wrapper around it.
    assert!(out.ends_with("builtin zeros(shape, dt=…)\n"), "{out}");
    let err = stderr(&o);
    assert!(
        err.contains("unknown name `nope`") && err.contains(" 1 │ nope + 1"),
        "{err}"
    );
    assert!(!err.contains("__type_probe__"), "{err}");
}

/// `:help NAME` (spec §12.1): an operation's signature and text from the
/// registry, a user function's header and the comment block above it (one
/// entry), a module member's, and an error for a name with no help.
#[test]
fn repl_help_of_a_name() {
    let o = twill(
        &["repl"],
        ":help softmax
# Squares n.
# (Twice.)
fn sq(n: Int) -> Int {
  n * n
}
:help sq
import nn
:h nn.mlp_init
:help nope
help(sq)
",
    );
    let out = stdout(&o);
    assert!(
        out.starts_with(
            "softmax(x, axis=…)
  exp(x) normalised to sum to 1 along `axis`"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "fn sq(n: Int) -> Int
  Squares n.
  (Twice.)
"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "fn mlp_init(sizes: Arr[Int], seed: Int) -> Arr[Tensor]
  The parameters of an MLP"
        ),
        "{out}"
    );
    // `help(name)` in code is the same text, as a Str.
    assert!(
        out.ends_with(
            "fn sq(n: Int) -> Int
  Squares n.
  (Twice.)
"
        ),
        "{out}"
    );
    assert!(stderr(&o).contains("no help for `nope`"), "{}", stderr(&o));
    assert_eq!(o.status.code(), Some(0));
}

/// `:load FILE` runs a file into the session, `:time` runs an entry and
/// shows its time (and a tensor's shape and dtype), `:vars` lists what is
/// defined (spec §12.1).
#[test]
fn repl_load_time_and_vars() {
    let dir = std::env::temp_dir().join(format!("twill-repl-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lib = dir.join("lib.tw");
    std::fs::write(&lib, "fn sq(n: Int) -> Int { n * n }\nlet base = 10\n").unwrap();
    let input = format!(
        ":vars\n:load {}\nsq(base)\nlet w = zeros([3, 2], f32)\n:time (w + 1).sum(axis=0)\n:vars\n:load {}\n",
        lib.display(),
        dir.join("missing.tw").display()
    );
    let o = twill(&["repl"], &input);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "(nothing defined yet)", "{out}");
    assert_eq!(lines[1], "100", "{out}");
    assert_eq!(lines[2], "[3, 3] f32", "{out}");
    assert!(
        lines[3].starts_with("time: ") && lines[3].ends_with(", a tensor of shape [2] and dtype f32"),
        "{out}"
    );
    assert_eq!(
        &lines[4..],
        [
            "base: Int",
            "sq: Fn(Int) -> Int",
            "w: Tensor[f32] = shape [3, 2] f32"
        ],
        "{out}"
    );
    assert!(
        stderr(&o).contains("missing.tw`: file not found"),
        "{}",
        stderr(&o)
    );
    assert_eq!(o.status.code(), Some(0));
}

/// A line starting with `.` or `else` continues the entry before it,
/// though that entry was complete (spec §12.1); `elsewhere` is a name.
#[test]
fn repl_continues_an_entry_with_a_dot_or_else_line() {
    let o = twill(
        &["repl"],
        "let x = ones([3])\nx\n  .sum()\n  .item()\nif false { 1 }\nelse { 2 }\nlet elsewhere = 5\nelsewhere\n",
    );
    assert_eq!(stdout(&o), "3\n2\n5\n", "{}", stderr(&o));
    assert_eq!(o.status.code(), Some(0));
}

/// `:reset` forgets every definition and import; the same names can be
/// defined again, with other types.
#[test]
fn repl_reset_forgets_definitions() {
    let o = twill(
        &["repl"],
        "let a = 5\nimport nn\n:reset\n:vars\na\nlet a = \"again\"\na\nnn.mlp_init\n",
    );
    assert_eq!(stdout(&o), "(nothing defined yet)\nagain\n");
    let err = stderr(&o);
    assert!(
        err.contains("unknown name `a`") && err.contains("unknown name `nn`"),
        "{err}"
    );
}

/// `_` is the last value the REPL printed (spec §12.1); a statement or a
/// Unit value leaves it as it was.
#[test]
fn repl_underscore_is_the_last_value() {
    let o = twill(
        &["repl"],
        "1 + 2\n_ * 10\nprint(7)\n_ + 1\nones([2], f32)\n_.sum()\n",
    );
    assert_eq!(stdout(&o), "3\n30\n7\n31\n[1, 1] f32\n2 f32\n");
    assert_eq!(o.status.code(), Some(0));
}

/// `var` types are inferred (spec §10): the first value's type, joined with
/// every assignment's; tensors of two dtypes join to `Tensor`, anything
/// else that disagrees to unknown, never an error.
#[test]
fn repl_type_of_inferred_vars() {
    let o = twill(
        &["repl"],
        concat!(
            "var w = zeros([3], f32)\n:type w\n",
            "var v = zeros([2], f32)\nfor i in range(2) { v = v.to(bf16) }\n:type v\n",
            "var n = 0\nn += 1\n:type n\n",
            "var k = 1\nk = \"now a Str\"\n:type k\n",
            "var m = 1\nfn bump() { m = m + 0.5 }\n:type m\n",
        ),
    );
    assert_eq!(
        stdout(&o),
        "Tensor[f32]\nTensor\nInt\n?\n?\n",
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn run_reads_standard_input() {
    let o = twill(&["run", "-"], "print(\"from stdin\", args())\n");
    assert_eq!(stdout(&o), "from stdin []\n");
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn run_passes_arguments() {
    let o = twill(&["run", "-", "a", "b c"], "print(args())\n");
    assert_eq!(stdout(&o), "[\"a\", \"b c\"]\n");
}

#[test]
fn runtime_error_exits_1_and_keeps_output() {
    let o = twill(
        &["run", "-"],
        "print(\"first\")\nlet a = [\"x\"]\nprint(a[3])\nprint(\"never\")\n",
    );
    assert_eq!(stdout(&o), "first\n");
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.starts_with("error: index 3 is out of range for length 1"),
        "{err}"
    );
    assert!(err.contains("<stdin>:3:"), "{err}");
}

#[test]
fn static_error_exits_2_and_runs_nothing() {
    let o = twill(&["run", "-"], "print(\"first\")\nprint(nope)\n");
    assert_eq!(stdout(&o), "");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("<stdin>:2:7"), "{}", stderr(&o));
}

#[test]
fn check_reports_without_running() {
    let dir = std::env::temp_dir().join(format!("twill-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let good = dir.join("good.tw");
    let bad = dir.join("bad.tw");
    std::fs::write(&good, "print(\"should not print\")\n").expect("write");
    std::fs::write(&bad, "let x: Int = \"s\"\n").expect("write");
    let o = twill(&["check", good.to_str().expect("utf-8 path")], "");
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(0), ""));
    let o = twill(&["check", bad.to_str().expect("utf-8 path")], "");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("error: `x` is annotated `Int` but this value is `Str`"),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn missing_program_file_is_an_error() {
    let o = twill(&["run", "definitely/not/here.tw"], "");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("error: cannot read `definitely/not/here.tw`: file not found"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn version_and_help() {
    let o = twill(&["--version"], "");
    assert!(stdout(&o).starts_with("twill "));
    let o = twill(&["--help"], "");
    assert!(stdout(&o).contains("twill run FILE.tw"));
    let o = twill(&["frobnicate"], "");
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn malformed_input_never_panics() {
    // Each of these once could have tripped a careless parser or evaluator.
    for src in [
        "",
        "(",
        ")",
        "}",
        "{",
        "[",
        "\"",
        "\\",
        "fn",
        "fn (",
        "let",
        "let x",
        "match",
        "match x {",
        "x[",
        "a.b.",
        "1 +",
        "¿",
        "\u{0}",
        "if { }",
        "struct",
        "struct S {",
        "for in",
        "-",
        "**",
        "x?",
        ":",
        "=>",
        "0x",
        "0b2",
        "1e",
        "1.",
        "\"\\u{110000}\"",
        "\"\\u{zz}\"",
        "let a = [[[[[[[[[[",
        "print(1)\n\n\n)",
        "# only a comment",
    ] {
        let o = twill(&["run", "-"], src);
        let err = stderr(&o);
        assert!(
            !err.contains("internal error") && !err.contains("panicked"),
            "{src:?}: {err}"
        );
        assert!(
            matches!(o.status.code(), Some(0) | Some(1) | Some(2)),
            "{src:?}: {:?}",
            o.status
        );
    }
}

#[test]
fn deeply_nested_expression_is_an_error_not_a_crash() {
    let src = format!("print({}1{})\n", "-(".repeat(50_000), ")".repeat(50_000));
    let o = twill(&["run", "-"], &src);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("nested too deeply"), "{}", stderr(&o));
}

#[test]
fn repl_reports_a_line_that_is_not_utf8_and_goes_on() {
    let o = twill_bytes(&["repl"], b"let a = 1\nprint(\"\xff\")\na + 1\n");
    assert_eq!(stdout(&o), "2\n", "stderr: {}", stderr(&o));
    assert!(
        stderr(&o).contains("error: <stdin>:2: this line is not valid UTF-8"),
        "{}",
        stderr(&o)
    );
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn repl_unterminated_string_is_an_error_for_its_entry_only() {
    let o = twill(&["repl"], "print(\"abc\nprint(1)\nprint(2)\n");
    assert_eq!(stdout(&o), "1\n2\n", "stderr: {}", stderr(&o));
    assert!(
        stderr(&o).contains("unterminated string literal"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_byte_order_mark_is_not_part_of_the_program() {
    let o = twill_bytes(&["run", "-"], b"\xef\xbb\xbfprint(\"bom\")\n");
    assert_eq!(stdout(&o), "bom\n", "stderr: {}", stderr(&o));
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn bad_utf8_in_a_program_is_reported_at_its_line_and_column() {
    let o = twill_bytes(&["run", "-"], b"print(1)\nlet s = \"a\xffb\"\n");
    assert_eq!(stdout(&o), "");
    assert!(
        stderr(&o).contains("error: <stdin>:2:11: not valid UTF-8 (byte 0xff)"),
        "{}",
        stderr(&o)
    );
    assert_eq!(o.status.code(), Some(2));
}

/// `--engine=tree` runs the reference tree walker; both engines print the
/// same bytes and report the same error; an unknown engine is a usage
/// error.
#[test]
fn the_engine_can_be_chosen_and_both_agree() {
    let src =
        "fn f(n) { var s = 0\n for i in range(n) { s += i * i }\n s }\nprint(f(10), f(100))\nprint(1 // 0)\n";
    let compiled = twill(&["run", "-"], src);
    let tree = twill(&["run", "--engine=tree", "-"], src);
    let explicit = twill(&["run", "--engine=compiled", "-"], src);
    assert_eq!(stdout(&compiled), "285 328350\n");
    for o in [&tree, &explicit] {
        assert_eq!(stdout(o), stdout(&compiled));
        assert_eq!(stderr(o), stderr(&compiled));
        assert_eq!(o.status.code(), Some(1));
    }
    assert!(stderr(&compiled).contains("<stdin>:5:7"), "{}", stderr(&compiled));
    let bad = twill(&["run", "--engine=jit", "-"], src);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("unknown engine `jit`"), "{}", stderr(&bad));
}

/// `--reference` (spec §16) runs the tensor operations on the self-hosted
/// `reference` module: the same bytes as natively, combined with either
/// engine, and an operation's error with the native message and place.
#[test]
fn the_reference_runtime_can_be_chosen_and_agrees() {
    let src = "let x = tensor([1.5, -2.0, 3.25], bf16)\nprint(-x)\nprint(-(-x))\nprint(neg(x))\n";
    let native = twill(&["run", "-"], src);
    assert_eq!(
        stdout(&native),
        "[-1.5, 2, -3.25] bf16\n[1.5, -2, 3.25] bf16\n[-1.5, 2, -3.25] bf16\n"
    );
    for args in [
        &["run", "--reference", "-"][..],
        &["run", "--engine=tree", "--reference", "-"][..],
    ] {
        let o = twill(args, src);
        assert_eq!(stdout(&o), stdout(&native), "{args:?}: {}", stderr(&o));
        assert_eq!(o.status.code(), Some(0));
    }
}

/// Spec §16 on a real program: `examples/train_digits.tw` for three steps
/// of each of its runs (f32; bf16; f16 with loss scaling) prints the same
/// losses and accuracies under `--reference` as natively — the forward
/// passes, the cross-entropy and the optimiser's tensor arithmetic computed
/// by the module, autodiff on top.
#[test]
fn train_digits_for_a_few_steps_agrees_under_the_reference_runtime() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let run = |reference: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_twill"));
        cmd.current_dir(&root).arg("run");
        if reference {
            cmd.arg("--reference");
        }
        cmd.args(["examples/train_digits.tw", "3"])
            .env("NO_COLOR", "1")
            .output()
            .expect("twill runs")
    };
    let native = run(false);
    assert_eq!(native.status.code(), Some(0), "{}", stderr(&native));
    let out = stdout(&native);
    assert_eq!(
        out.matches("  step ").count(),
        9,
        "three steps of three runs: {out}"
    );
    assert_eq!(out.matches("test accuracy").count(), 3, "{out}");
    let on_reference = run(true);
    assert_eq!(on_reference.status.code(), Some(0), "{}", stderr(&on_reference));
    assert_eq!(stdout(&on_reference), out);
}

/// Modules (spec §10.8): a program importing two modules of its own (one
/// of which imports the other) and one found on `TWILL_PATH`; and a
/// program whose own module has a static error, reported in that file at
/// its line, with exit 2 and nothing run. Without `TWILL_PATH` the third
/// module is not found.
#[test]
fn modules_from_the_program_directory_and_twill_path() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let run = |file: &str, path: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_twill"));
        cmd.current_dir(&root)
            .args(["run", file])
            .env("NO_COLOR", "1")
            .env_remove("TWILL_PATH");
        if let Some(p) = path {
            cmd.env("TWILL_PATH", p);
        }
        cmd.output().expect("twill runs")
    };
    let ok = run("testdata/modules/_app/main.tw", Some("testdata/modules/_path"));
    assert_eq!(String::from_utf8_lossy(&ok.stdout), "90 180\n");
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );

    let bad = run(
        "testdata/modules/_app/broken_main.tw",
        Some("/nonexistent:testdata/modules/_path"),
    );
    let err = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{err}");
    assert!(bad.stdout.is_empty(), "nothing runs");
    assert!(
        err.starts_with("error: argument 1 of `scales.double` must be `F64`, not `Str`"),
        "{err}"
    );
    assert!(err.contains("testdata/modules/_app/faulty.tw:3:21"), "{err}");

    let missing = run("testdata/modules/_app/main.tw", None);
    let err = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(missing.status.code(), Some(2), "{err}");
    assert!(err.contains("error: no module `scales`"), "{err}");
    assert!(err.contains("testdata/modules/_app/main.tw:5:8"), "{err}");
}

/// `read_line()` (spec §9): the lines of standard input without their
/// endings (`\r\n` too), the last one even without a newline, then `None`.
#[test]
fn read_line_reads_standard_input_a_line_at_a_time() {
    let src = "var n = 0\nwhile true {\n    match read_line() {\n        \
               Some(l) => { n += 1; print(f\"{n}: {l}\") },\n        None => { break },\n    }\n}\n\
               print(read_line())\n";
    let dir = std::env::temp_dir().join(format!("twill-read-line-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = dir.join("lines.tw");
    std::fs::write(&prog, src).unwrap();
    let o = twill(&["run", prog.to_str().unwrap()], "one\r\ntwo\n\nthree");
    assert_eq!(stdout(&o), "1: one\n2: two\n3: \n4: three\nNone\n");
    assert_eq!(o.status.code(), Some(0));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `TWILL_ISA` holds the kernels to a lower instruction set without
/// changing a bit: matmul (the GEMM microkernels), the fast f32
/// transcendentals, softmax rows, casts, a sort and the elementwise loops
/// print the same at every level (a sum of f64 values shows any element
/// that differs, in its shortest round-trip digits); a value naming no
/// level is refused before anything runs.
#[test]
fn twill_isa_caps_the_kernels_without_changing_a_bit() {
    let src = "let a = randn([67, 129], f32, 1)\nlet b = randn([129, 45], f32, 2)\n\
               let d = randn([67, 129], seed=3)\nlet e = randn([129, 45], seed=4)\n\
               print((a @ b).to(f64).sum(), (d @ e).sum())\n\
               print(a.exp().to(f64).sum(), a.tanh().to(f64).sum(), a.sigmoid().to(f64).sum())\n\
               print(a.softmax().to(f64).sum(), d.log_softmax(axis=0).sum())\n\
               print(a.to(bf16).to(f64).sum(), d.to(f16).to(f64).sum(), (a > 0.5).to(f32).sum())\n\
               print(a.flatten().sort()[100], (a * a + 1.5).to(f64).sum(), d.floor().sum())\n";
    let run = |isa: &str| twill_with_env(&["run", "-"], src.as_bytes(), &[("TWILL_ISA", isa)]);
    let top = run("avx512");
    assert_eq!(
        top.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&top.stderr)
    );
    assert_eq!(stdout(&top).lines().count(), 5, "{}", stdout(&top));
    for isa in ["avx2", "portable"] {
        let capped = run(isa);
        assert_eq!(capped.status.code(), Some(0), "{isa}");
        assert_eq!(stdout(&capped), stdout(&top), "TWILL_ISA={isa}");
    }
    let bad = run("avx3");
    assert_eq!(bad.status.code(), Some(2));
    assert!(bad.stdout.is_empty(), "nothing runs");
    assert_eq!(
        String::from_utf8_lossy(&bad.stderr),
        "error: TWILL_ISA=\"avx3\" is not an instruction-set level: expected portable, avx2 or avx512\n"
    );
}
