//! The standard library written in twill itself, shipped inside the
//! interpreter as the modules `nn`, `optim`, `amp`, `float`, `formats` and
//! `reference` (spec §10.8, §16). A program loads one with `import nn`, and reads its members as
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
    ("reference.tw", REFERENCE),
];

/// Defines [`REFERENCE_PARTS`] and [`REFERENCE`] from one list of files.
macro_rules! reference_parts {
    ($($file:literal),* $(,)?) => {
        /// The files of the `reference` module (`stdlib/reference/`), in
        /// order, with their texts; the first holds the module's opening
        /// comment, its imports and the `Flat` value type.
        pub const REFERENCE_PARTS: &[(&str, &str)] =
            &[$(($file, include_str!(concat!("../stdlib/reference/", $file)))),*];
        /// The `reference` module (spec §16): its parts joined.
        pub const REFERENCE: &str = concat!($(include_str!(concat!("../stdlib/reference/", $file))),*);
    };
}

reference_parts!(
    "core.tw",
    "lab.tw",
    "elementwise.tw",
    "unary.tw",
    "reduce.tw",
    "shape.tw",
    "index.tw",
    "order.tw",
    "contract.tw",
    "construct.tw",
);

/// The library modules a library module imports (`import float` in
/// `reference`): they come before it in [`FILES`].
pub fn imports_of(file: &str) -> &'static [&'static str] {
    match file {
        "reference.tw" => &["float"],
        _ => &[],
    }
}

/// Parses, checks and runs every library module into `checker` and
/// `interp`, each as the module its file names (for tests that call the
/// library directly, `float.narrow` and the like). `register` is given
/// each file's name and text and returns its id. A module's imports
/// ([`imports_of`]) are loaded before it. The library is tested to load cleanly; a failure here
/// is a bug in twill, reported as a message rather than a panic.
pub fn load_all(
    checker: &mut Checker,
    interp: &mut Interp,
    register: &mut dyn FnMut(&'static str, &'static str) -> FileId,
) -> Result<(), String> {
    for &(name, src) in FILES {
        load_module(checker, interp, name, src, register(name, src))?;
    }
    Ok(())
}

/// Parses, checks and runs one library module, the file `name` with text
/// `src`, whose imports ([`imports_of`]) are already loaded.
pub fn load_module(
    checker: &mut Checker,
    interp: &mut Interp,
    name: &str,
    src: &str,
    file: FileId,
) -> Result<(), String> {
    let parsed = twill_syntax::parse(src, file);
    if let Some(d) = parsed.errors.first() {
        return Err(format!("standard library {name}: {}", d.message));
    }
    let key = name.trim_end_matches(".tw");
    let imports = imports_of(name)
        .iter()
        .map(|m| (m.to_string(), m.to_string()))
        .collect();
    let checked = checker.check_module(parsed.program, key, imports);
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_of_the_reference_directory_is_a_part() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/stdlib/reference");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let mut parts: Vec<String> = REFERENCE_PARTS.iter().map(|(p, _)| p.to_string()).collect();
        parts.sort();
        assert_eq!(on_disk, parts);
    }
}
