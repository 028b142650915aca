//! Generates the LR parser from `src/grammar.lalrpop` at build time.

// A build script runs on the build machine, not in the interpreter: the core
// crates' IO rule (clippy.toml) does not apply.
#![allow(clippy::disallowed_methods)]

fn main() {
    // Any failure here is a grammar bug found at build time, never at run time.
    if let Err(err) = lalrpop::Configuration::new()
        .use_cargo_dir_conventions()
        .emit_rerun_directives(true)
        .process()
    {
        eprintln!("lalrpop failed: {err}");
        std::process::exit(1);
    }
}
