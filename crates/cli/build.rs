//! Lists the golden programs (`testdata/**/*.tw`, outside
//! `testdata/vectors/` and the module folders `_*/`) into `$OUT_DIR/goldens.rs`, one `name => "path",`
//! line each inside a `goldens!` call, so that `tests/goldens.rs` has one
//! test per program and `cargo test` names the program that failed.

// A build script runs on the build machine, not in the interpreter: the core
// crates' IO rule (clippy.toml) does not apply.
#![allow(clippy::disallowed_methods)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for p in entries {
        if p.is_dir() {
            // `vectors/` holds oracle data; a folder whose name starts with
            // `_` holds modules the programs beside it import.
            if p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n != "vectors" && !n.starts_with('_'))
            {
                collect(&p, out)?;
            }
        } else if p.extension().is_some_and(|e| e == "tw") {
            out.push(p);
        }
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let testdata = manifest.join("../../testdata");
    // Cargo rescans the whole folder: adding, removing or editing a program
    // regenerates the list.
    println!("cargo::rerun-if-changed={}", testdata.display());
    let mut programs = Vec::new();
    collect(&testdata, &mut programs)?;
    let mut out = String::from("goldens! {\n");
    for p in &programs {
        let parts = p
            .strip_prefix(&testdata)?
            .iter()
            .map(|c| c.to_str().ok_or_else(|| format!("not UTF-8: {}", p.display())))
            .collect::<Result<Vec<_>, _>>()?;
        let rel = parts.join("/");
        // `lang/ok/closures.tw` → `lang__ok__closures`, the snapshot's name
        // too; any character not allowed in an identifier becomes `_`.
        let name: String = rel
            .trim_end_matches(".tw")
            .replace('/', "__")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        writeln!(out, "    {name} => {rel:?},")?;
    }
    out.push_str("}\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR")?).join("goldens.rs");
    std::fs::write(dest, out)?;
    Ok(())
}
