//! The standard library written in twill itself, shipped inside the
//! interpreter and loaded before every program (and the REPL). Its files'
//! spans start at [`STDLIB_BASE`] and follow each other, so a run-time error
//! inside the library can be rendered against the right file.
//!
//! Its top-level names carry a prefix per file (`float_…`) so that they do
//! not collide with a program's own names.

use twill_check::Checker;
use twill_syntax::Span;

use crate::interp::Interp;

/// Where the standard library's spans begin: above any program's (programs
/// are limited to 2 GiB, spans are 32-bit).
pub const STDLIB_BASE: usize = 1 << 31;

/// The library's files: name and source.
pub const FILES: &[(&str, &str)] = &[
    ("float.tw", include_str!("../stdlib/float.tw")),
    ("nn.tw", include_str!("../stdlib/nn.tw")),
    ("optim.tw", include_str!("../stdlib/optim.tw")),
    ("amp.tw", include_str!("../stdlib/amp.tw")),
];

/// The file a span points into: its name, its source, and the span made
/// relative to it. `None` for spans of the user's program.
pub fn locate(span: Span) -> Option<(&'static str, &'static str, Span)> {
    let mut base = STDLIB_BASE;
    for (name, src) in FILES {
        let start = span.start as usize;
        if start >= base && start <= base + src.len() {
            let rel = Span::new(start - base, (span.end as usize).saturating_sub(base));
            return Some((name, src, rel));
        }
        base += src.len() + 1;
    }
    None
}

/// Parses, checks and runs every library file into `checker` and `interp`.
/// The library is tested to load cleanly; a failure here is a bug in twill,
/// reported as a message rather than a panic.
pub fn load(checker: &mut Checker, interp: &mut Interp) -> Result<(), String> {
    let mut base = STDLIB_BASE;
    for (name, src) in FILES {
        let parsed = twill_syntax::parse_with_base(src, base);
        if let Some(d) = parsed.errors.first() {
            return Err(format!("standard library {name}: {}", d.message));
        }
        let checked = checker.check_program(&parsed.program);
        let Some(module) = checked.module else {
            let msg = checked
                .diagnostics
                .first()
                .map(|d| d.message.clone())
                .unwrap_or_default();
            return Err(format!("standard library {name}: {msg}"));
        };
        interp
            .run(&module, &checker.global_names())
            .map_err(|e| format!("standard library {name}: {}", e.message))?;
        base += src.len() + 1;
    }
    Ok(())
}
