//! Diagnostics to text with ariadne: `error: MESSAGE`, then `FILE:LINE:COL`
//! and the source line with the span marked, each label shown in the file
//! its span names. Byte offsets throughout. This is the only place a
//! diagnostic becomes text; whoever owns the terminal decides on colour and
//! writes the text.

use ariadne::{CharSet, Color, Config, IndexType, Label, Report, ReportKind};
use twill_syntax::{Diagnostic, FileId, Severity};

use crate::sources::SourceMap;

/// One diagnostic as text (ending in a newline); ANSI colours only when
/// `color` is set.
pub fn render(sources: &SourceMap, d: &Diagnostic, color: bool) -> String {
    let Some(primary_file) = sources.get(d.span.file) else {
        // A span that points into no file: the message alone.
        let mut text = format!("{}: {}\n", kind_name(d.severity), d.message);
        for n in &d.notes {
            text.push_str(&format!("  = note: {n}\n"));
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
    let primary = clamp(d.span.file, d.span.range());
    // A label without text draws no marker, so every primary span says
    // at least "here".
    let text = if d.label.is_empty() {
        "here"
    } else {
        d.label.as_str()
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
        .with_message(&d.message)
        .with_label(label);
    for (i, l) in d.secondary.iter().enumerate() {
        let mut sec = Label::new((key_of(l.span.file), clamp(l.span.file, l.span.range())))
            .with_message(&l.message)
            .with_order(i as i32 + 1);
        if color {
            sec = sec.with_color(Color::Blue);
        }
        report = report.with_label(sec);
    }
    for n in &d.notes {
        report = report.with_note(n);
    }
    let mut buf = Vec::new();
    let mut files = vec![name.clone()];
    for l in &d.secondary {
        let key = key_of(l.span.file);
        if !files.contains(&key) {
            files.push(key);
        }
    }
    let cache = ariadne::sources(files.into_iter().map(|key| {
        let text = sources
            .get(key.0)
            .map_or(primary_file.text.as_str(), |s| s.text.as_str());
        (key, text)
    }));
    if report.finish().write(cache, &mut buf).is_err() {
        // Fall back to the bare first line; it still names the location.
        let (line, col) = twill_syntax::span::line_col(&primary_file.text, d.span.start as usize);
        return format!(
            "{}: {}\n  --> {}:{line}:{col}\n",
            kind_name(d.severity),
            d.message,
            primary_file.name
        );
    }
    let text = String::from_utf8_lossy(&buf).into_owned();
    if color {
        text
    } else {
        // ariadne colours a custom report kind even with colour off.
        strip_ansi(&text)
    }
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

fn kind_name(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}
