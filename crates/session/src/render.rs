//! Diagnostics to text with ariadne: `error: MESSAGE`, then `FILE:LINE:COL`
//! and the source line with the span marked, each label shown in the file
//! its span names. Byte offsets throughout. ariadne is shown only the lines
//! the labels touch, and a long line only as a window around its label, so
//! the size of a report is bounded whatever the source. This is the only place a
//! diagnostic becomes text; whoever owns the terminal decides on colour and
//! writes the text.

use ariadne::{CharSet, Color, Config, FnCache, IndexType, Label, Report, ReportKind, Source};
use std::cell::RefCell;

use twill_syntax::{Diagnostic, FileId, Severity};

use crate::sources::SourceMap;

/// One diagnostic as text (ending in a newline); ANSI colours only when
/// `color` is set.
pub fn render(sources: &SourceMap, d: &Diagnostic, color: bool) -> String {
    let Some(primary_file) = sources.get(d.span.file) else {
        // A span that points into no file: the message alone.
        let mut text = format!("{}: {}\n", kind_name(d.severity), bounded(&d.message));
        for n in &d.notes {
            text.push_str(&format!("  = note: {}\n", bounded(n)));
        }
        return text;
    };
    // A label in a file the map does not know is drawn in the primary file.
    let key_of = |file: FileId| match sources.get(file) {
        Some(s) => FileKey(file, s.name.clone()),
        None => FileKey(d.span.file, primary_file.name.clone()),
    };
    let clamp = |file: FileId, r: std::ops::Range<usize>| {
        let text = sources
            .get(file)
            .map_or(primary_file.text.as_str(), |s| s.text.as_str());
        let len = text.len();
        let start = r.start.min(len);
        // Snap to character boundaries so a span never splits a character.
        let mut s = start;
        while s > 0 && !text.is_char_boundary(s) {
            s -= 1;
        }
        let mut e = r.end.clamp(s, len);
        while e < len && !text.is_char_boundary(e) {
            e += 1;
        }
        s..e
    };
    let (kind, label_color) = match d.severity {
        Severity::Error => (ReportKind::Custom("error", Color::Red), Color::Red),
        Severity::Warning => (ReportKind::Custom("warning", Color::Yellow), Color::Yellow),
    };
    let name = key_of(d.span.file);
    let text_of = |key: &FileKey| {
        sources
            .get(key.0)
            .map_or(primary_file.text.as_str(), |s| s.text.as_str())
    };
    // Every label as (file, range in the file), the primary first.
    let mut spans = vec![(name.clone(), clamp(d.span.file, d.span.range()))];
    for l in &d.secondary {
        spans.push((key_of(l.span.file), clamp(l.span.file, l.span.range())));
    }
    // One excerpt per file, holding every line a label touches. A report
    // whose labels are all in one file has one excerpt, numbered from 1 and
    // renumbered after; with several files, each excerpt keeps the file's
    // numbers by padding (linear in the lines before it). Coloured reports
    // (a terminal's) are padded too: colour codes in the margin would hide
    // its numbers from the renumbering.
    let pad = color || spans.iter().any(|(k, _)| *k != name);
    let mut excerpts: Vec<(FileKey, Excerpt)> = Vec::new();
    for (key, _) in &spans {
        if excerpts.iter().any(|(k, _)| k == key) {
            continue;
        }
        let points: Vec<usize> = spans
            .iter()
            .filter(|(k, _)| k == key)
            .flat_map(|(_, r)| [r.start, r.end])
            .collect();
        excerpts.push((key.clone(), Excerpt::new(key.0, text_of(key), &points, pad)));
    }
    let excerpt_of = |key: &FileKey| excerpts.iter().find(|(k, _)| k == key).map(|(_, ex)| ex);
    let mapped = |key: &FileKey, r: &std::ops::Range<usize>| {
        excerpt_of(key).map_or(0..0, |ex| ex.map(r.start)..ex.map(r.end))
    };
    // The header names the primary span's start, or in another file its
    // first label's.
    let mut headers = Vec::new();
    for (key, ex) in &excerpts {
        if let Some((_, r)) = spans.iter().find(|(k, _)| k == key) {
            headers.extend(ex.header_fix(key, text_of(key), r.start));
        }
    }
    let primary = mapped(&name, &spans[0].1);
    // A label without text draws no marker, so every primary span says
    // at least "here".
    let text = if d.label.is_empty() {
        "here".into()
    } else {
        bounded(&d.label)
    };
    let mut label = Label::new((name.clone(), primary.clone()))
        .with_order(0)
        .with_message(text);
    if color {
        label = label.with_color(label_color);
    }
    let mut report = Report::build(kind, (name.clone(), primary))
        .with_config(
            Config::default()
                .with_color(color)
                .with_index_type(IndexType::Byte)
                .with_char_set(CharSet::Unicode),
        )
        .with_message(bounded(&d.message))
        .with_label(label);
    for (i, (l, (key, r))) in d.secondary.iter().zip(spans.iter().skip(1)).enumerate() {
        let mut sec = Label::new((key.clone(), mapped(key, r)))
            .with_message(bounded(&l.message))
            .with_order(i as i32 + 1);
        if color {
            sec = sec.with_color(Color::Blue);
        }
        report = report.with_label(sec);
    }
    for n in &d.notes {
        report = report.with_note(bounded(n));
    }
    if let Some(h) = d.help() {
        report = report.with_help(bounded(h));
    }
    let excerpts_line_no: Vec<(FileKey, usize)> =
        excerpts.iter().map(|(k, ex)| (k.clone(), ex.line_no)).collect();
    let mut buf = Vec::new();
    let mut cache = FnCache::new((|key: &FileKey| Err(format!("no source `{key}`"))) as fn(&_) -> _)
        .with_sources(excerpts.into_iter().map(|(key, ex)| (key, ex.source)).collect());
    if report.finish().write(&mut cache, &mut buf).is_err() {
        // Fall back to the bare first line; it still names the location.
        let (line, col) = twill_syntax::span::line_col(&primary_file.text, d.span.start as usize);
        return format!(
            "{}: {}\n  --> {}:{line}:{col}\n",
            kind_name(d.severity),
            bounded(&d.message),
            primary_file.name
        );
    }
    let mut text = String::from_utf8_lossy(&buf).into_owned();
    if !pad {
        if let Some((_, ex)) = excerpts_line_no.first() {
            text = renumber(&text, *ex);
        }
    }
    // ariadne counts the column in the excerpt; where a long line's start
    // was cut, put back the column in the file.
    for (from, to) in headers {
        if let Some(at) = text.find(&from) {
            text.replace_range(at..at + from.len(), &to);
        }
    }
    // ariadne capitalises its footers; the spec quotes them as rustc
    // writes them, `help: …` and `note: …`.
    text = lowercase_footers(&text);
    // The call stack of a runtime error raised inside functions, outermost
    // call first (spec §10.9).
    for line in d.trace() {
        text.push_str("  ");
        text.push_str(&line.text);
        if let Some(sp) = line.span {
            if let Some(f) = sources.get(sp.file) {
                let (l, c) = twill_syntax::span::line_col(&f.text, sp.start as usize);
                text.push_str(&format!(" ({}:{l}:{c})", f.name));
            }
        }
        text.push('\n');
    }
    if color {
        text
    } else {
        // ariadne colours a custom report kind even with colour off.
        strip_ansi(&text)
    }
}

/// Characters that end a line for ariadne (`\r\n` counts once); excerpts
/// cut lines where it does, so its line numbers stay those of the file.
const LINE_BREAKS: [char; 7] = ['\r', '\n', '\x0B', '\x0C', '\u{0085}', '\u{2028}', '\u{2029}'];

/// Source lines up to this many bytes are shown whole; a longer one is
/// shown as a window around its first marked point, `BEFORE` bytes before
/// it and `AFTER` after, with `…` where it was cut. So a diagnostic's size
/// never depends on the length of a line (a generated one-line program can
/// be megabytes long).
const MAX_LINE: usize = 240;
const BEFORE: usize = 100;
const AFTER: usize = 140;
/// Longest message, label or note shown, in bytes: they may quote the
/// source (a name, a token).
const MAX_TEXT: usize = 1000;

/// What ariadne is shown of one file: the lines the labels touch, long ones
/// cut to a window, after as many empty lines as come before them in the
/// file.
struct Excerpt {
    source: Source<String>,
    /// Lines of the file before the excerpt.
    line_no: usize,
    /// Each line of the excerpt: its start and end in the file, the part
    /// shown (`from..to`), and where that part starts in the excerpt.
    lines: Vec<ExcerptLine>,
}

struct ExcerptLine {
    start: usize,
    end: usize,
    from: usize,
    to: usize,
    at: usize,
}

impl Excerpt {
    /// The lines of `text` from the one holding the smallest of `points`
    /// to the one holding the largest.
    /// With `pad`, the excerpt comes after as many empty lines as precede
    /// it in the file, so ariadne numbers its lines as the file does;
    /// without, they are numbered from 1 and [`renumber`] fixes the gutter.
    fn new(file: FileId, text: &str, points: &[usize], pad: bool) -> Excerpt {
        let lo = points.iter().copied().min().unwrap_or(0).min(text.len());
        let hi = points.iter().copied().max().unwrap_or(0).clamp(lo, text.len());
        // The end of a file that ends in a line break is, for ariadne, on
        // its last line, not on an empty line after it.
        let mut before = &text[..lo];
        if lo == text.len() {
            before = before
                .strip_suffix("\r\n")
                .or_else(|| before.strip_suffix(LINE_BREAKS))
                .unwrap_or(before);
        }
        let first = before
            .rfind(LINE_BREAKS)
            .map_or(0, |i| i + text[i..].chars().next().map_or(1, char::len_utf8));
        let last = text[hi..].find(LINE_BREAKS).map_or(text.len(), |i| hi + i);
        let line_no = lines_before(file, text, first);
        // ariadne numbers lines from the start of what it is given (its
        // display offset moves the header but not the gutter).
        let mut shown = if pad { "\n".repeat(line_no) } else { String::new() };
        let mut lines = Vec::new();
        let mut start = first;
        for piece in text[first..last].split_inclusive(LINE_BREAKS).chain(
            // The last line when the excerpt ends at a line break or is empty.
            (last == first || text[..last].ends_with(LINE_BREAKS)).then_some(""),
        ) {
            let body = piece.trim_end_matches(LINE_BREAKS);
            let end = start + body.len();
            let (from, to) = if body.len() <= MAX_LINE {
                (start, end)
            } else {
                let anchor = points
                    .iter()
                    .copied()
                    .filter(|p| (start..=end).contains(p))
                    .min()
                    .unwrap_or(start);
                (
                    floor_char(text, anchor.saturating_sub(BEFORE).max(start)),
                    floor_char(text, (anchor + AFTER).min(end)),
                )
            };
            if from > start {
                shown.push('…');
            }
            lines.push(ExcerptLine {
                start,
                end,
                from,
                to,
                at: shown.len(),
            });
            shown.push_str(&text[from..to]);
            if to < end {
                shown.push('…');
            }
            shown.push_str(&piece[body.len()..]);
            start += piece.len();
        }
        let source = Source::from(shown);
        Excerpt {
            source: if pad {
                source
            } else {
                source.with_display_line_offset(line_no)
            },
            line_no,
            lines,
        }
    }

    /// Where the file's byte `p` is in the excerpt (a point cut from its
    /// line goes to the nearer end of what is shown).
    fn map(&self, p: usize) -> usize {
        self.lines
            .iter()
            .find(|l| (l.start..=l.end).contains(&p))
            .map_or(0, |l| l.at + p.clamp(l.from, l.to) - l.from)
    }

    /// The header ariadne writes for a report located at the file's byte
    /// `p` and the one it should write, when the two differ (the start of
    /// `p`'s line was cut).
    fn header_fix(&self, key: &FileKey, text: &str, p: usize) -> Option<(String, String)> {
        let l = self.lines.iter().find(|l| (l.start..=l.end).contains(&p))?;
        if l.from == l.start {
            return None;
        }
        // Counted as ariadne counts (`\r\n` is one break, two pieces here).
        let line = lines_before(key.0, text, l.start) + 1;
        let name = &key.1;
        let shown = 2 + text[l.from..p.clamp(l.from, l.to)].chars().count();
        let real = 1 + text[l.start..p].chars().count();
        Some((
            format!("{name}:{line}:{shown} "),
            format!("{name}:{line}:{real} "),
        ))
    }
}

thread_local! {
    /// Where each line of the last file rendered starts (by ariadne's line
    /// breaks), so that a file's thousandth diagnostic does not count its
    /// lines again: the file's id, text address and length, and the starts.
    static LINE_STARTS: RefCell<(FileId, usize, usize, Vec<usize>)> =
        const { RefCell::new((FileId(0), 0, 0, Vec::new())) };
}

/// How many lines of `text` (the file `file`) start before byte `at`, the
/// first excluded.
fn lines_before(file: FileId, text: &str, at: usize) -> usize {
    let count = |starts: &[usize]| starts.partition_point(|&s| s <= at);
    LINE_STARTS.with(|cell| {
        let Ok(mut cache) = cell.try_borrow_mut() else {
            return count(&line_starts(text));
        };
        if (cache.0, cache.1, cache.2) != (file, text.as_ptr() as usize, text.len()) {
            *cache = (file, text.as_ptr() as usize, text.len(), line_starts(text));
        }
        count(&cache.3)
    })
}

/// The byte offsets where a line of `text` begins, the first excluded
/// (`\r\n` is one break).
fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if LINE_BREAKS.contains(&c) && !(c == '\r' && chars.peek().is_some_and(|(_, n)| *n == '\n')) {
            starts.push(i + c.len_utf8());
        }
    }
    starts
}

/// Adds `offset` to the line numbers of ariadne's gutter in `report` (not
/// coloured) and widens the margin to fit them: the report of a diagnostic
/// whose excerpt was numbered from 1. From the header on, every line is a
/// margin of `width + 1` characters (a space, then a right-aligned line
/// number or spaces) and the rest, or the closing `───╯`.
fn renumber(report: &str, offset: usize) -> String {
    let Some(header) = report.lines().position(|l| l.contains("╭─[")) else {
        return report.to_string();
    };
    let lines: Vec<&str> = report.split_inclusive('\n').collect();
    // The header is indented by the margin and one more space.
    let width = (lines[header].len() - lines[header].trim_start().len()).saturating_sub(2);
    let number = |l: &str| l.get(..width + 1)?.trim().parse::<usize>().ok();
    let new_width = lines[header..]
        .iter()
        .filter_map(|l| number(l))
        .map(|n| (n + offset).to_string().len())
        .max()
        .unwrap_or(width)
        .max(width);
    let mut out: String = lines[..header].concat();
    for line in &lines[header..] {
        if let Some(rest) = line.strip_prefix(&"─".repeat(width + 2)) {
            out.push_str(&"─".repeat(new_width + 2));
            out.push_str(rest);
            continue;
        }
        match (line.get(..width + 1), number(line)) {
            (Some(_), Some(n)) => {
                out.push_str(&format!(" {:>new_width$}", n + offset));
                out.push_str(&line[width + 1..]);
            }
            (Some(margin), None) if margin.bytes().all(|b| b == b' ') => {
                out.push_str(&" ".repeat(new_width + 1));
                out.push_str(&line[width + 1..]);
            }
            _ => out.push_str(line),
        }
    }
    out
}

fn floor_char(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// `s`, cut to [`MAX_TEXT`] bytes with `…` when longer.
fn bounded(s: &str) -> std::borrow::Cow<'_, str> {
    if s.len() <= MAX_TEXT {
        return s.into();
    }
    format!("{}…", &s[..floor_char(s, MAX_TEXT)]).into()
}

/// A file as ariadne knows it: told apart by id (every REPL entry is named
/// `<repl>`), shown by name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct FileKey(FileId, String);

impl std::fmt::Display for FileKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.1)
    }
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// `Help`/`Note` (or `Help 2`) at the start of a footer line — the
/// report's margin, `│`, one space — in lower case. Colour codes may
/// surround any of these; a source line (it has a line number) or a label
/// (drawn after `╰`) never matches.
fn lowercase_footers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        match footer_word_at(line) {
            Some(at) => {
                out.push_str(&line[..at]);
                out.push(line.as_bytes()[at].to_ascii_lowercase() as char);
                out.push_str(&line[at + 1..]);
            }
            None => out.push_str(line),
        }
    }
    out
}

/// Where `Help` or `Note` starts in a footer line, if `line` is one.
fn footer_word_at(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    let mut i = 0;
    // Skips colour codes (`ESC [ … letter`) from `i`.
    let skip_ansi = |mut i: usize| {
        while b.get(i) == Some(&0x1b) && b.get(i + 1) == Some(&b'[') {
            i += 2;
            while i < b.len() && !b[i].is_ascii_alphabetic() {
                i += 1;
            }
            i += 1;
        }
        i
    };
    loop {
        i = skip_ansi(i);
        if b.get(i) != Some(&b' ') {
            break;
        }
        i += 1;
    }
    i = line[i..].strip_prefix('│').map(|_| i + '│'.len_utf8())?;
    i = skip_ansi(i);
    if b.get(i) != Some(&b' ') {
        return None;
    }
    i = skip_ansi(i + 1);
    let rest = &line[i..];
    (rest.starts_with("Help") || rest.starts_with("Note")).then_some(i)
}

fn kind_name(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

#[cfg(test)]
mod tests {
    use twill_syntax::Span;

    use super::*;

    fn show(name: &str, text: &str, d: impl Fn(FileId) -> Diagnostic) -> String {
        let mut map = SourceMap::new();
        let file = map.add(name, text);
        render(&map, &d(file), false)
    }

    #[test]
    fn footers_are_lower_case_and_source_lines_are_not_touched() {
        let text = "Help = 1\nNote: x\n";
        let d = |f| {
            Diagnostic::error(Span::new(f, 0, 4), "boom")
                .with_label("Help here")
                .with_note("Note one")
                .with_note("two")
                .with_help(Some("Help text".into()))
        };
        let out = show("f.tw", text, d);
        assert!(out.contains("│ help: Help text\n"), "{out}");
        assert!(out.contains("│ note 1: Note one\n"), "{out}");
        assert!(out.contains("│ note 2: two\n"), "{out}");
        assert!(out.contains(" 1 │ Help = 1\n"), "{out}");
        assert!(out.contains("── Help here"), "{out}");
        assert!(!out.contains("│ Help:") && !out.contains("│ Note 1"), "{out}");
        let mut map = SourceMap::new();
        let file = map.add("f.tw", text);
        let coloured = strip_ansi(&render(&map, &d(file), true));
        assert!(coloured.contains("│ help: Help text\n"), "{coloured}");
        assert!(coloured.contains("│ note 2: two\n"), "{coloured}");
    }

    #[test]
    fn a_long_line_is_a_window_with_the_files_column() {
        let text = format!("x\n{}é bad {}\n", "é".repeat(5_000), "é".repeat(5_000));
        let at = 2 + 5_000 * 2 + 3;
        let out = show("f.tw", &text, |f| {
            Diagnostic::error(Span::new(f, at, at + 3), "boom")
        });
        assert!(out.contains("[ f.tw:2:5003 ]"), "{out}");
        assert!(out.contains(" 2 │ …éé"), "{out}");
        assert!(out.contains(" bad éé"), "{out}");
        assert!(out.len() < 1_500, "{} bytes:\n{out}", out.len());
    }

    #[test]
    fn a_cut_line_after_crlf_lines_has_its_number() {
        let text = format!("a\r\nb\r\n{}x bad\r\n", "y".repeat(1_000));
        let out = show("f.tw", &text, |f| {
            Diagnostic::error(Span::new(f, 1_008, 1_011), "boom")
        });
        assert!(out.contains("[ f.tw:3:1003 ]"), "{out}");
        assert!(out.contains(" 3 │ …yyy"), "{out}");
    }

    #[test]
    fn the_end_of_a_file_is_on_its_last_line() {
        let out = show("f.tw", "a\nb(\n", |f| {
            Diagnostic::error(Span::new(f, 5, 5), "eof")
        });
        // ariadne puts it after the last line's break, as it did when shown
        // the whole file.
        assert!(out.contains("[ f.tw:2:4 ]"), "{out}");
        assert!(out.contains(" 2 │ b("), "{out}");
    }

    #[test]
    fn lines_far_into_a_file_keep_their_numbers() {
        let text = format!("{}oops\n", "\n".repeat(123_456));
        let out = show("f.tw", &text, |f| {
            Diagnostic::error(Span::new(f, 123_456, 123_460), "here")
                .with_secondary(Span::new(f, 3, 3), "and here")
        });
        assert!(out.contains("123457 │ oops"), "{out}");
        assert!(out.contains("     4 │ "), "{out}");
        assert!(out.len() < 2_000, "{} bytes", out.len());
    }

    #[test]
    fn a_single_label_far_into_a_file_is_renumbered() {
        let text = format!("{}oops\n", "\n".repeat(123_456));
        let out = show("f.tw", &text, |f| {
            Diagnostic::error(Span::new(f, 123_456, 123_460), "here")
        });
        assert_eq!(
            out,
            "error: here\n        ╭─[ f.tw:123457:1 ]\n        │\n 123457 │ oops\n        │ ──┬─  \n        │   ╰─── here\n────────╯\n"
        );
        // A coloured report pads the excerpt instead: the same text.
        let mut map = SourceMap::new();
        let f = map.add("f.tw", text.as_str());
        let coloured = render(
            &map,
            &Diagnostic::error(Span::new(f, 123_456, 123_460), "here"),
            true,
        );
        assert_eq!(strip_ansi(&coloured), out);
    }

    #[test]
    fn long_messages_are_cut() {
        let name = "n".repeat(100_000);
        let out = show("f.tw", "x", |f| {
            Diagnostic::error(Span::new(f, 0, 1), format!("unknown `{name}`"))
        });
        assert!(out.len() < 2_000, "{} bytes", out.len());
        assert!(out.contains("nnn…"), "{out}");
    }
}
