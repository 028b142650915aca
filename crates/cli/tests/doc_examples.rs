//! Doc examples: `docs/language.md` stays true. Every ```` ```twill ```` block
//! there is followed by a ```` ```text ```` block holding exactly what
//! `twill run example.tw` prints, stdout and stderr together, as
//! `sh -c 'twill run example.tw 2>&1'` shows it in a fresh directory with
//! `NO_COLOR=1`. This test runs every example that way and lists each one
//! whose output differs from its block, with the line it starts on and a
//! diff, so the reference cannot drift from the interpreter.

// Test code writes the examples to temporary files and runs the binary: the
// core crates' IO rule (clippy.toml) is for the interpreter, not its tests.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;
use std::path::Path;
use std::process::Command;

/// One fenced block of the document: its info string (`twill`, `text`, …),
/// the 1-based line of its opening fence, its body (each line ending in a
/// newline) and the 1-based line of its closing fence.
struct Block {
    lang: String,
    line: usize,
    body: String,
    end: usize,
}

/// The fenced blocks of `doc`, in order. An unclosed fence is an error, not a
/// block that silently runs to the end of the file.
fn blocks(doc: &str) -> Result<Vec<Block>, String> {
    let mut out = Vec::new();
    let mut lines = doc.lines().enumerate();
    while let Some((at, line)) = lines.next() {
        let Some(lang) = line.strip_prefix("```") else {
            continue;
        };
        let mut body = String::new();
        let end = loop {
            match lines.next() {
                Some((end, "```")) => break end,
                Some((_, text)) => {
                    body.push_str(text);
                    body.push('\n');
                }
                None => return Err(format!("line {}: the block never closes", at + 1)),
            }
        };
        out.push(Block {
            lang: lang.trim().to_string(),
            line: at + 1,
            body,
            end: end + 1,
        });
    }
    Ok(out)
}

/// A line diff of `expected` against `actual` (longest common subsequence):
/// `-` lines the document has and the run did not print, `+` lines the run
/// printed and the document lacks. Whitespace the eye cannot see is shown,
/// so a trailing space or a missing final newline reads as a difference.
fn diff(expected: &str, actual: &str) -> String {
    let show = |l: &str| l.replace('\t', "\\t").replace(' ', "·");
    let e: Vec<&str> = expected.split_inclusive('\n').collect();
    let a: Vec<&str> = actual.split_inclusive('\n').collect();
    // lcs[i][j]: the longest common subsequence of e[i..] and a[j..].
    let mut lcs = vec![vec![0usize; a.len() + 1]; e.len() + 1];
    for i in (0..e.len()).rev() {
        for j in (0..a.len()).rev() {
            lcs[i][j] = if e[i] == a[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let line = |mark: char, l: &str| match l.strip_suffix('\n') {
        Some(l) => format!("    {mark} {}\n", show(l)),
        None => format!("    {mark} {}   (no newline at the end)\n", show(l)),
    };
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < e.len() || j < a.len() {
        if i < e.len() && j < a.len() && e[i] == a[j] {
            out.push_str(&line(' ', e[i]));
            i += 1;
            j += 1;
        } else if i < e.len() && (j == a.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push_str(&line('-', e[i]));
            i += 1;
        } else {
            out.push_str(&line('+', a[j]));
            j += 1;
        }
    }
    out
}

/// What `twill run example.tw` prints for `source`, stdout and stderr
/// interleaved as a terminal shows them, run in a fresh directory of its own
/// so that an example writing a file sees no other example's.
fn run(source: &str, index: usize) -> String {
    let dir = std::env::temp_dir().join(format!("twill-doc-{}-{index}", std::process::id()));
    // A directory left by a killed earlier run with the same pid is stale.
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("example.tw"), source).unwrap();
    let bin = env!("CARGO_BIN_EXE_twill");
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("'{bin}' run example.tw 2>&1"))
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("sh runs");
    fs::remove_dir_all(&dir).unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Each example paired with what the document says it prints, or a failure
/// for an example with no ```` ```text ```` block right after it (nothing
/// but blank lines between the two).
fn check(doc: &str) -> Result<usize, Vec<String>> {
    let blocks = blocks(doc).map_err(|e| vec![e])?;
    let lines: Vec<&str> = doc.lines().collect();
    let mut failures = Vec::new();
    let mut examples = 0;
    for (index, block) in blocks.iter().enumerate().filter(|(_, b)| b.lang == "twill") {
        examples += 1;
        let expected = blocks.get(index + 1).filter(|next| {
            next.lang == "text"
                && lines[block.end..next.line - 1]
                    .iter()
                    .all(|l| l.trim().is_empty())
        });
        let Some(expected) = expected else {
            failures.push(format!(
                "line {}: the example has no ```text block right after it saying what it prints",
                block.line
            ));
            continue;
        };
        let actual = run(&block.body, index);
        if actual != expected.body {
            failures.push(format!(
                "line {}: the example prints other text than its block at line {} \
                 (- the document, + the run):\n{}",
                block.line,
                expected.line,
                diff(&expected.body, &actual)
            ));
        }
    }
    if failures.is_empty() {
        Ok(examples)
    } else {
        Err(failures)
    }
}

#[test]
fn every_language_example_prints_what_the_reference_says() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/language.md");
    let doc = fs::read_to_string(path).unwrap();
    match check(&doc) {
        // Guards against a parse that finds no examples and passes on nothing.
        Ok(examples) => assert!(examples > 20, "found only {examples} examples"),
        Err(failures) => panic!(
            "docs/language.md disagrees with `twill run` in {} place(s):\n\n{}",
            failures.len(),
            failures.join("\n")
        ),
    }
}

/// The checker itself can fail: a wrong expected line, a missing output
/// block and output separated from its example by prose are all reported.
#[test]
fn a_wrong_or_missing_output_block_is_reported() {
    let wrong = "```twill\nprint(1)\nprint(2)\n```\n\n```text\n1\n3\n```\n";
    let failures = check(wrong).unwrap_err();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(failures[0].starts_with("line 1:"), "{}", failures[0]);
    assert!(failures[0].contains("    - 3\n    + 2\n"), "{}", failures[0]);

    let missing = "```twill\nprint(1)\n```\n\nprose\n\n```text\n1\n```\n";
    let failures = check(missing).unwrap_err();
    assert!(failures[0].contains("no ```text block"), "{failures:?}");

    let right = "```twill\nprint(1)\n```\n\n```text\n1\n```\n";
    assert_eq!(check(right), Ok(1));
}
