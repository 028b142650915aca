//! A session driven in memory: a `CaptureHost` stands in for the outside,
//! a `CollectReporter` for the terminal, so each test sees exactly what
//! `twill run` or the REPL would print, without a subprocess.

// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// Test code picks the cases it checks and treats the rest alike.
#![allow(clippy::wildcard_enum_match_arm)]

use twill_session::{CaptureHost, CollectReporter, Flow, Mode, Options, Session, Status};

fn session(host: &CaptureHost) -> Session {
    Session::new(Box::new(host.clone()), Options::default())
}

#[test]
fn a_program_prints_into_memory() {
    let host = CaptureHost::new().with_args(vec!["a1".into()]);
    host.add_file("prog.tw", "print(\"hello\", args())\nprint(1 + 2)\n");
    let mut reporter = CollectReporter::default();
    let status = session(&host).run_path("prog.tw", Mode::Run, &mut reporter);
    assert_eq!(status, Status::Ok);
    assert_eq!(host.stdout.text(), "hello [\"a1\"]\n3\n");
    assert_eq!(reporter.text, "");
}

#[test]
fn files_are_read_and_written_through_the_host() {
    let host = CaptureHost::new();
    host.add_file(
        "prog.tw",
        "write_text(\"out.txt\", \"abc\")?\nprint(read_text(\"out.txt\")?)\n\
         save_npy(\"t.npy\", ones([2]))?\nprint(load_npy(\"t.npy\")?)\n",
    );
    let mut reporter = CollectReporter::default();
    let status = session(&host).run_path("prog.tw", Mode::Run, &mut reporter);
    assert_eq!((status, reporter.text.as_str()), (Status::Ok, ""));
    assert_eq!(host.file("out.txt").as_deref(), Some(&b"abc"[..]));
    assert!(host.file("t.npy").is_some_and(|b| b.starts_with(b"\x93NUMPY")));
    let out = host.stdout.text();
    assert!(out.starts_with("abc\n"), "{out}");
}

#[test]
fn statuses_follow_the_spec() {
    let host = CaptureHost::new();
    host.add_file("static.tw", "print(1)\nlet x = nope\n");
    host.add_file("runtime.tw", "print(1)\n1 / 0 + [1][5]\n");
    let mut reporter = CollectReporter::default();
    assert_eq!(
        session(&host).run_path("static.tw", Mode::Run, &mut reporter),
        Status::Static
    );
    assert_eq!(host.stdout.text(), "", "nothing runs after a static error");
    assert_eq!(
        session(&host).run_path("runtime.tw", Mode::Check, &mut reporter),
        Status::Ok
    );
    assert_eq!(
        session(&host).run_path("runtime.tw", Mode::Run, &mut reporter),
        Status::Runtime
    );
    assert_eq!(host.stdout.text(), "1\n", "output before the error is kept");
    assert_eq!(
        session(&host).run_path("missing.tw", Mode::Run, &mut reporter),
        Status::Static
    );
    assert!(
        reporter
            .text
            .ends_with("error: cannot read `missing.tw`: file not found\n"),
        "{}",
        reporter.text
    );
    assert_eq!(
        (Status::Ok.code(), Status::Runtime.code(), Status::Static.code()),
        (0, 1, 2)
    );
}

#[test]
fn standard_input_is_read_for_a_dash() {
    let host = CaptureHost::new().with_stdin("print(7)\n");
    let mut reporter = CollectReporter::default();
    assert_eq!(session(&host).run_path("-", Mode::Run, &mut reporter), Status::Ok);
    assert_eq!(host.stdout.text(), "7\n");
}

#[test]
fn an_error_inside_the_standard_library_is_shown_in_its_file() {
    let host = CaptureHost::new();
    host.add_file(
        "prog.tw",
        "import nn\nlet x = ones([2, 3])\nlet y = nn.cross_entropy(x, ones([5, 7]))\n",
    );
    let mut reporter = CollectReporter::default();
    assert_eq!(
        session(&host).run_path("prog.tw", Mode::Run, &mut reporter),
        Status::Runtime
    );
    let want = "\
error: shapes [2, 3] and [5, 7] cannot be broadcast together
    ╭─[ <stdlib>/nn.tw:60:7 ]
    │
 60 │     -(wide.log_softmax(axis=1) * targets).sum() / float(n)
    │       ─────────────────┬────────────────  
    │                        ╰────────────────── here
────╯
  at <top level> (prog.tw:3:9)
  at nn.cross_entropy (<stdlib>/nn.tw:60:7)
";
    assert_eq!(reporter.text, want);
}

#[test]
fn a_repl_error_points_into_the_entry_that_holds_the_code() {
    let host = CaptureHost::new();
    let mut s = session(&host);
    let mut reporter = CollectReporter::default();
    s.entry("fn f(a) { a + \"s\" }\n", &mut reporter);
    s.entry("f(1)\n", &mut reporter);
    let text = &reporter.text;
    assert!(text.contains("<repl>:1:11"), "{text}");
    assert!(text.contains("fn f(a) { a + \"s\" }"), "{text}");
}

#[test]
fn repl_entries_keep_definitions_and_print_values() {
    let host = CaptureHost::new();
    let mut s = session(&host);
    let mut reporter = CollectReporter::default();
    for entry in [
        "let x = 2\n",
        "x * 3\n",
        "let bad = nope\n",
        ":type x + 0.5\n",
        ":nope\n",
    ] {
        assert_eq!(s.entry(entry, &mut reporter), Flow::Continue);
    }
    assert_eq!(s.entry(":quit\n", &mut reporter), Flow::Quit);
    assert_eq!(host.stdout.text(), "6\nF64\n");
    assert!(
        reporter.text.contains("error: unknown name `nope`"),
        "{}",
        reporter.text
    );
    assert!(
        reporter
            .text
            .ends_with("error: unknown command `:nope` (try :help)\n"),
        "{}",
        reporter.text
    );
}

#[test]
fn the_type_table_agrees_with_type_of() {
    let host = CaptureHost::new();
    let options = Options {
        types: true,
        ..Options::default()
    };
    let mut s = Session::new(Box::new(host.clone()), options);
    for text in ["1 + 2", "ones([2, 3]).to(f16)", "str(3).len() > 0", "(1, \"a\")"] {
        let file = s.add_source("<test>", text);
        let checked = s.check(file);
        assert!(checked.module.is_some(), "{text}: {:?}", checked.diagnostics);
        let whole = checked
            .types
            .iter()
            .find(|(sp, _)| sp.file == file && sp.start == 0 && sp.end as usize == text.len())
            .map(|(_, t)| t.to_string());
        let shown = s.type_of(text).ok().flatten().map(|t| t.to_string());
        assert!(whole.is_some(), "{text}: no entry for the whole expression");
        assert_eq!(whole, shown, "{text}");
    }
}

/// The names of the standard-library files a session has loaded.
fn stdlib_loaded(s: &Session) -> Vec<String> {
    s.sources()
        .iter()
        .filter(|(_, src)| src.name.starts_with("<stdlib>/"))
        .map(|(_, src)| src.name.clone())
        .collect()
}

/// A library module is loaded at its first import (spec §10.8), once per
/// session; a program that imports nothing loads nothing; a program's own
/// module of the same name next to it is found first.
#[test]
fn the_standard_library_is_loaded_when_imported() {
    let host = CaptureHost::new();
    host.add_file("plain.tw", "print(1)\n");
    host.add_file("uses_nn.tw", "import nn\nprint(nn.one_hot(tensor([1.0]), 3))\n");
    let mut reporter = CollectReporter::default();
    let mut s = session(&host);
    assert_eq!(s.run_path("plain.tw", Mode::Run, &mut reporter), Status::Ok);
    assert!(stdlib_loaded(&s).is_empty(), "{:?}", stdlib_loaded(&s));
    assert_eq!(s.run_path("uses_nn.tw", Mode::Run, &mut reporter), Status::Ok);
    assert_eq!(stdlib_loaded(&s), ["<stdlib>/nn.tw"]);
    assert_eq!(host.stdout.text(), "1\n[[0, 1, 0]] f32\n");
    // A REPL entry importing a module loads it once; later entries see it.
    assert_eq!(
        s.entry("import float\nlet x = float.narrow(0.1, 8, 7)", &mut reporter),
        Flow::Continue
    );
    assert_eq!(
        s.entry("print(x, float.narrow(1.0, 5, 10))", &mut reporter),
        Flow::Continue
    );
    assert_eq!(stdlib_loaded(&s), ["<stdlib>/nn.tw", "<stdlib>/float.tw"]);
    assert_eq!(reporter.text, "");
    // A module of the program's own beside it wins over the library's.
    host.add_file("amp.tw", "fn scaler() { 7 }\n");
    host.add_file("own.tw", "import amp\nprint(amp.scaler())\n");
    let mut fresh = session(&host);
    assert_eq!(fresh.run_path("own.tw", Mode::Run, &mut reporter), Status::Ok);
    assert!(host.stdout.text().ends_with("\n7\n"), "{}", host.stdout.text());
    assert!(stdlib_loaded(&fresh).is_empty());
}
