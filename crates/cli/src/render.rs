//! Renders diagnostics with ariadne: `error: MESSAGE`, then `FILE:LINE:COL`
//! and the source line with the span marked. Colour only when stderr is a
//! terminal; byte offsets throughout. This is the only place diagnostics
//! become text.

use std::io::{IsTerminal, Write};

use ariadne::{CharSet, Color, Config, IndexType, Label, Report, ReportKind, Source};
use twill_syntax::{Diagnostic, Severity};

pub struct SourceFile<'a> {
    pub name: &'a str,
    pub text: &'a str,
}

/// Whether colour is used: only on a terminal, and never with NO_COLOR set.
pub fn use_color() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

pub fn render(d: &Diagnostic, src: &SourceFile, color: bool) -> String {
    let len = src.text.len();
    let clamp = |r: std::ops::Range<usize>| {
        let start = r.start.min(len);
        // Snap to character boundaries so a span never splits a character.
        let mut s = start;
        while s > 0 && !src.text.is_char_boundary(s) {
            s -= 1;
        }
        let mut e = r.end.clamp(s, len);
        while e < len && !src.text.is_char_boundary(e) {
            e += 1;
        }
        s..e
    };
    let (kind, label_color) = match d.severity {
        Severity::Error => (ReportKind::Custom("error", Color::Red), Color::Red),
        Severity::Warning => (ReportKind::Custom("warning", Color::Yellow), Color::Yellow),
    };
    let name = src.name.to_string();
    let primary = clamp(d.span.range());
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
        let mut sec = Label::new((name.clone(), clamp(l.span.range())))
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
    let cache = (name, Source::from(src.text));
    if report.finish().write(cache, &mut buf).is_err() {
        // Fall back to the bare first line; it still names the location.
        let (line, col) = twill_syntax::span::line_col(src.text, d.span.start as usize);
        return format!(
            "{}: {}\n  --> {}:{line}:{col}\n",
            kind_name(d.severity),
            d.message,
            src.name
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

pub fn emit(diags: &[Diagnostic], src: &SourceFile) {
    let color = use_color();
    let mut err = std::io::stderr().lock();
    for d in diags {
        // A span inside the standard library is shown against its file.
        let text = match twill_eval::stdlib::locate(d.span) {
            Some((name, text, span)) => {
                let shifted = Diagnostic { span, ..d.clone() };
                let path = format!("<stdlib>/{name}");
                render(&shifted, &SourceFile { name: &path, text }, color)
            }
            None => render(d, src, color),
        };
        let _ = err.write_all(text.as_bytes());
    }
    let _ = err.flush();
}
