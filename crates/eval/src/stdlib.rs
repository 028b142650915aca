//! The standard library written in twill itself, shipped inside the
//! interpreter as the modules `nn`, `optim`, `amp`, `float` and `formats` (spec
//! §10.8). A program loads one with `import nn`, and reads its members as
//! `nn.mlp_init(…)`; the session finds a bundled module here when no file
//! of that name is next to the importing file or on `TWILL_PATH`, so a
//! program that imports nothing loads none of them.

use twill_check::Checker;
use twill_syntax::FileId;

use crate::interp::Interp;

/// The library's modules: file name (`nn.tw`) and source.
pub const FILES: &[(&str, &str)] = &[
    ("float.tw", include_str!("../stdlib/float.tw")),
    ("nn.tw", include_str!("../stdlib/nn.tw")),
    ("optim.tw", include_str!("../stdlib/optim.tw")),
    ("amp.tw", include_str!("../stdlib/amp.tw")),
    ("formats.tw", include_str!("../stdlib/formats.tw")),
];

/// Parses, checks and runs every library module into `checker` and
/// `interp`, each as the module its file names (for tests that call the
/// library directly, `float.narrow` and the like). `register` is given
/// each file's name and text and returns its id. No library module
/// imports another. The library is tested to load cleanly; a failure here
/// is a bug in twill, reported as a message rather than a panic.
pub fn load_all(
    checker: &mut Checker,
    interp: &mut Interp,
    register: &mut dyn FnMut(&'static str, &'static str) -> FileId,
) -> Result<(), String> {
    for &(name, src) in FILES {
        let parsed = twill_syntax::parse(src, register(name, src));
        if let Some(d) = parsed.errors.first() {
            return Err(format!("standard library {name}: {}", d.message));
        }
        let key = name.trim_end_matches(".tw");
        let checked = checker.check_module(parsed.program, key, Vec::new());
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
