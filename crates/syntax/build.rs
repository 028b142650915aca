//! Generates the LR parser from `src/grammar.lalrpop` at build time, and
//! rebuilds the crate when the profile-guided optimisation profile that its
//! release build uses changes (`tools/pgo/README.md`: cargo's rustc wrapper
//! gives the profile to the compiler, and cargo does not track it).

// A build script runs on the build machine, not in the interpreter: the core
// crates' IO rule (clippy.toml) does not apply.
#![allow(clippy::disallowed_methods)]

fn main() {
    println!("cargo:rerun-if-changed=../../tools/pgo/twill.profdata");
    println!("cargo:rerun-if-changed=../../tools/pgo/llvm-version");
    println!("cargo:rerun-if-changed=build.rs");
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
