//! The mutator: programs from `testdata/` (the golden corpus) changed at
//! the byte and token level — spans deleted, lines duplicated, swapped or
//! spliced in from other files, brackets inserted, numbers replaced with
//! edge values, tokens inserted, the text cut short, now and then a byte
//! that is not UTF-8. Real programs reach deep into the checker and the
//! evaluator; their mutants probe what is next to them.

use std::path::{Path, PathBuf};

use crate::rng::Rng;

const BRACKETS: &[&str] = &["(", ")", "[", "]", "{", "}", "\"", "{{{{", "(((("];

const EDGE_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "4611686018427387904",
    "2147483648",
    "1e308",
    "1e400",
    "5e-324",
    "nan",
    "-inf",
    "0.0",
    "-0.0",
    "100000",
];

const TOKENS: &[&str] = &[
    ",",
    ".",
    ":",
    "?",
    "=",
    "==",
    "+",
    "-",
    "*",
    "/",
    "//",
    "%",
    "**",
    "@",
    "fn",
    "let",
    "var",
    "if",
    "else",
    "while",
    "for",
    "in",
    "match",
    "return",
    "break",
    "continue",
    "\n",
    ";",
    "x",
    ".T",
    ".shape",
    "[::0]",
    "[::-1]",
    "[0]",
    "[-1]",
    ".to(i8)",
    ".to(bf16)",
    "zeros([0, 9223372036854775807])",
    "nan",
    "inf",
    "#",
    "=>",
    "_",
    "Some(",
    "None",
    "Ok(",
    "Err(",
    "tape()",
    "grad(",
];

/// The programs of the corpus directory, read once. Files that write files
/// are left out: their paths are absolute, and a mutant could point one
/// anywhere.
pub fn corpus(dir: &Path) -> Vec<Vec<u8>> {
    let mut files = Vec::new();
    walk(dir, &mut files);
    files.sort();
    files
        .iter()
        .filter_map(|f| std::fs::read(f).ok())
        .filter(|text| {
            let s = String::from_utf8_lossy(text);
            !s.contains("write_text") && !s.contains("save_npy")
        })
        .collect()
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "tw") {
            out.push(path);
        }
    }
}

/// A mutant of one corpus program (`corpus` is not empty).
pub fn mutant(corpus: &[Vec<u8>], rng: &mut Rng) -> Vec<u8> {
    let mut s = corpus.get(rng.below(corpus.len())).cloned().unwrap_or_default();
    for _ in 0..1 + rng.below(4) {
        mutate_once(&mut s, corpus, rng);
    }
    s
}

fn mutate_once(s: &mut Vec<u8>, corpus: &[Vec<u8>], rng: &mut Rng) {
    let pos = rng.below(s.len() + 1);
    match rng.below(10) {
        0 => {
            let end = (pos + 1 + rng.below(12)).min(s.len());
            s.drain(pos.min(end)..end);
        }
        1 => {
            // Duplicate a line.
            let lines = split_lines(s);
            let i = rng.below(lines.len());
            if let Some(line) = lines.get(i).cloned() {
                let mut out = lines;
                out.insert(i, line);
                *s = out.concat();
            }
        }
        2 => {
            let mut lines = split_lines(s);
            if lines.len() >= 2 {
                let i = rng.below(lines.len());
                let j = rng.below(lines.len());
                lines.swap(i, j);
                *s = lines.concat();
            }
        }
        3 => {
            // A line from another program, spliced in.
            let other = corpus.get(rng.below(corpus.len())).cloned().unwrap_or_default();
            let theirs = split_lines(&other);
            if let Some(line) = theirs.get(rng.below(theirs.len())).cloned() {
                let mut lines = split_lines(s);
                let at = rng.below(lines.len() + 1);
                lines.insert(at, line);
                *s = lines.concat();
            }
        }
        4 => insert(s, pos, rng.pick(BRACKETS).as_bytes()),
        5 | 6 => replace_number(s, rng),
        7 => insert(s, pos, rng.pick(TOKENS).as_bytes()),
        8 => {
            if rng.chance(20) {
                insert(s, pos, &[0xff]);
            } else {
                s.truncate(pos);
            }
        }
        _ => {
            // A bracket repeated many times: the parser must stay linear.
            let b = rng.pick(BRACKETS).as_bytes().repeat(1 + rng.below(200));
            insert(s, pos, &b);
        }
    }
}

fn insert(s: &mut Vec<u8>, pos: usize, bytes: &[u8]) {
    let pos = pos.min(s.len());
    s.splice(pos..pos, bytes.iter().copied());
}

/// The lines of `s`, each keeping its newline.
fn split_lines(s: &[u8]) -> Vec<Vec<u8>> {
    s.split_inclusive(|&b| b == b'\n').map(<[u8]>::to_vec).collect()
}

/// Replaces one run of digits (a number, or part of one) by an edge value.
/// Numbers in a loop — on its line (`while`, `for`, `range(`) or anywhere
/// in its body — and in `var` declarations (the loops' counters) are left
/// alone: an edge value there makes a loop of 2^31
/// or more iterations, or one that never ends (`w += 0`, `cond = count <
/// 9223372036854775807`), a timeout that is the program's own doing and
/// hides real ones.
fn replace_number(s: &mut Vec<u8>, rng: &mut Rng) {
    let in_loop = loop_mask(s);
    let starts: Vec<usize> = (0..s.len())
        .filter(|&i| {
            s[i].is_ascii_digit()
                && (i == 0 || !(s[i - 1].is_ascii_alphanumeric() || s[i - 1] == b'.'))
                && !in_loop[i]
        })
        .collect();
    let Some(&start) = starts.get(rng.below(starts.len())) else {
        return;
    };
    let mut end = start;
    while end < s.len() && (s[end].is_ascii_digit() || s[end] == b'.') {
        end += 1;
    }
    let with = rng.pick(EDGE_NUMBERS).as_bytes();
    s.splice(start..end, with.iter().copied());
}

/// For each byte of `s`, whether it is in a loop: on a line that starts
/// or names one (`while `, `for `, `range(`), or inside the braces of a
/// block opened on such a line (brackets counted as written; strings and
/// comments are not told apart, which errs towards leaving numbers alone);
/// or on a line that declares a `var`, which is what a loop counts with
/// (`var i = nan` before `while true { i += 1; if i > 10 { break } }`
/// never ends).
fn loop_mask(s: &[u8]) -> Vec<bool> {
    let mut mask = vec![false; s.len()];
    // For each open `{`: whether it opens a loop's block.
    let mut open: Vec<bool> = Vec::new();
    let mut line_start = 0;
    while line_start < s.len() {
        let line_end = s[line_start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(s.len(), |p| line_start + p + 1);
        let line = &s[line_start..line_end];
        let loop_line = [&b"while "[..], b"for ", b"range("]
            .iter()
            .any(|k| line.windows(k.len()).any(|w| w == *k))
            || line.trim_ascii_start().starts_with(b"var ");
        for (i, &b) in line.iter().enumerate() {
            match b {
                b'{' => open.push(loop_line),
                b'}' => {
                    open.pop();
                }
                _ => {}
            }
            mask[line_start + i] = loop_line || open.iter().any(|&l| l);
        }
        line_start = line_end;
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutants_are_deterministic_and_differ_from_their_source() {
        let corpus = vec![
            b"let x = 12\nprint(x + 3)\n".to_vec(),
            b"print([1, 2])\n".to_vec(),
        ];
        let a = mutant(&corpus, &mut Rng::for_program(5, 9));
        let b = mutant(&corpus, &mut Rng::for_program(5, 9));
        assert_eq!(a, b);
        let changed = (0..50)
            .filter(|&n| !corpus.contains(&mutant(&corpus, &mut Rng::for_program(5, n))))
            .count();
        assert!(changed > 40, "only {changed} of 50 mutants changed anything");
    }

    #[test]
    fn numbers_in_loops_are_left_alone() {
        let src = b"let a = 1\nvar i = 4\nwhile c {\n    c = n < 10\n    if x { y = 2 }\n}\nlet b = 3\n";
        let mask = loop_mask(src);
        let at = |needle: &[u8]| src.windows(needle.len()).position(|w| w == needle).unwrap();
        assert!(!mask[at(b"1")]);
        assert!(mask[at(b"4")]);
        assert!(mask[at(b"10")]);
        assert!(mask[at(b"2")]);
        assert!(!mask[at(b"3")]);
        for n in 0..200 {
            let mut s = src.to_vec();
            replace_number(&mut s, &mut Rng::new(n));
            let text = String::from_utf8_lossy(&s).into_owned();
            assert!(text.contains("n < 10\n") && text.contains("y = 2 }"), "{text}");
        }
    }

    #[test]
    fn a_number_is_replaced_whole() {
        let mut s = b"x = 123.5 + a1".to_vec();
        replace_number(&mut s, &mut Rng::new(0));
        let text = String::from_utf8_lossy(&s).into_owned();
        assert!(text.starts_with("x = ") && text.ends_with(" + a1"), "{text}");
        assert!(!text.contains("123"), "{text}");
    }
}
