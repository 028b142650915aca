//! The standard library written in twill itself, shipped inside the
//! interpreter and loaded before every program (and the REPL). Each file is
//! parsed as its own source file: the caller registers it in its source map
//! and says which [`FileId`] it has, so a run-time error inside the library
//! is rendered against the right file.
//!
//! Its top-level names carry a prefix per file (`float_…`) so that they do
//! not collide with a program's own names.

use twill_check::Checker;
use twill_syntax::FileId;

use crate::interp::Interp;

/// The library's files: name and source.
pub const FILES: &[(&str, &str)] = &[
    ("float.tw", include_str!("../stdlib/float.tw")),
    ("nn.tw", include_str!("../stdlib/nn.tw")),
    ("optim.tw", include_str!("../stdlib/optim.tw")),
    ("amp.tw", include_str!("../stdlib/amp.tw")),
];

/// Parses, checks and runs every library file into `checker` and `interp`;
/// `register` is given each file's name and text and returns its id. The
/// library is tested to load cleanly; a failure here is a bug in twill,
/// reported as a message rather than a panic.
pub fn load(
    checker: &mut Checker,
    interp: &mut Interp,
    register: &mut dyn FnMut(&'static str, &'static str) -> FileId,
) -> Result<(), String> {
    for (name, src) in FILES {
        let parsed = twill_syntax::parse(src, register(name, src));
        if let Some(d) = parsed.errors.first() {
            return Err(format!("standard library {name}: {}", d.message));
        }
        let checked = checker.check_program(parsed.program);
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
    }
    Ok(())
}
