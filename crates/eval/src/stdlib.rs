//! The standard library written in twill itself, shipped inside the
//! interpreter. A file is loaded (parsed, checked and run) the first time a
//! source names one of its top-level names, together with the library
//! files it names in turn ([`load_needed`]), so a program that uses none
//! of it starts without paying for it. Each file is parsed as its own
//! source file: the caller registers it in its source map and says which
//! [`FileId`] it has, so a run-time error inside the library is rendered
//! against the right file.
//!
//! Its top-level names carry a prefix per file (`float_…`) so that they do
//! not collide with a program's own names.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

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

/// Which library files are loaded into a checker and interpreter, by
/// index into [`FILES`].
pub type Loaded = [bool; FILES.len()];

/// Each top-level name the library defines (a line starting `fn NAME`,
/// `struct NAME`, `let NAME` or `var NAME`), with the index of its file.
fn index() -> &'static HashMap<&'static str, usize> {
    static INDEX: OnceLock<HashMap<&'static str, usize>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut names = HashMap::new();
        for (i, (_, src)) in FILES.iter().enumerate() {
            for line in src.lines() {
                let rest = ["fn ", "struct ", "let ", "var "]
                    .iter()
                    .find_map(|kw| line.strip_prefix(kw));
                if let Some(name) = rest.and_then(|r| identifiers(r).next()) {
                    names.insert(name, i);
                }
            }
        }
        names
    })
}

/// The words of `text` that could be identifiers (in code, strings and
/// comments alike: a name seen in a comment loads a file for nothing,
/// which costs time, never meaning).
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
}

/// A library file without its comments (they name other files' functions
/// in examples). The library's strings hold no `#`.
fn code_of(src: &str) -> String {
    src.lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The library files `text` names, and those they name in turn, that are
/// not loaded yet, in [`FILES`] order (no file names a later one).
pub fn needed(text: &str, loaded: &Loaded) -> Vec<usize> {
    let index = index();
    let mut want = [false; FILES.len()];
    let mut todo = vec![Cow::Borrowed(text)];
    while let Some(t) = todo.pop() {
        for w in identifiers(&t) {
            if let Some(&i) = index.get(w) {
                if !want[i] && !loaded[i] {
                    want[i] = true;
                    todo.extend(FILES.get(i).map(|f| Cow::Owned(code_of(f.1))));
                }
            }
        }
    }
    (0..FILES.len()).filter(|&i| want[i]).collect()
}

/// Parses, checks and runs the library files `files` (indices into
/// [`FILES`], from [`needed`]) into `checker` and `interp`, and marks them
/// in `loaded`. `register` is given each file's name and text and returns
/// its id. The library is tested to load cleanly; a failure here is a bug
/// in twill, reported as a message rather than a panic.
pub fn load(
    files: &[usize],
    loaded: &mut Loaded,
    checker: &mut Checker,
    interp: &mut Interp,
    register: &mut dyn FnMut(&'static str, &'static str) -> FileId,
) -> Result<(), String> {
    for &i in files {
        load_file(i, checker, interp, register)?;
        if let Some(l) = loaded.get_mut(i) {
            *l = true;
        }
    }
    Ok(())
}

/// Every library file (as [`load`], for all of them).
pub fn load_all(
    checker: &mut Checker,
    interp: &mut Interp,
    register: &mut dyn FnMut(&'static str, &'static str) -> FileId,
) -> Result<(), String> {
    let all: Vec<usize> = (0..FILES.len()).collect();
    load(&all, &mut [false; FILES.len()], checker, interp, register)
}

fn load_file(
    i: usize,
    checker: &mut Checker,
    interp: &mut Interp,
    register: &mut dyn FnMut(&'static str, &'static str) -> FileId,
) -> Result<(), String> {
    let Some(&(name, src)) = FILES.get(i) else {
        return Ok(());
    };
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
    Ok(())
}
