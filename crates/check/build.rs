//! Rebuilds this crate when the profile-guided optimisation profile that
//! its release build uses changes (`tools/pgo/README.md`): the profile is
//! given to the compiler by cargo's rustc wrapper, which cargo does not
//! track.

fn main() {
    println!("cargo:rerun-if-changed=../../tools/pgo/twill.profdata");
    println!("cargo:rerun-if-changed=../../tools/pgo/llvm-version");
    println!("cargo:rerun-if-changed=build.rs");
}
