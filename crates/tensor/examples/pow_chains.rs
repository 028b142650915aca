//! Proof by enumeration behind the `x ** 3` and `x ** 4` kernels of f32
//! (`ops/elementwise.rs`): for every one of the 2^32 f32 bit patterns, the
//! f64 products (x·x)·x and (x·x)·(x·x), rounded to f32, have the same
//! bits as libm's `pow(x, 3)` and `pow(x, 4)` rounded to f32 — the
//! definition of `**` (spec §5.6). The unit test
//! `small_powers_are_pow_bit_for_bit` checks every bf16 and f16 pattern and
//! a sample of f32's on every run; this covers the rest, once per change
//! of `libm` or of the kernel. Run with
//! `cargo run --release -p twill-tensor --example pow_chains`; it prints the
//! number of differing patterns for each exponent (0 and 0 when the kernel
//! may stand), and its exit status is 1 if any differs.

use rayon::prelude::*;
use twill_tensor::math::pow;

fn main() -> std::process::ExitCode {
    let mut differ = 0u64;
    for k in [3u32, 4] {
        let chain = |x: f64| {
            let s = x * x;
            if k == 3 {
                s * x
            } else {
                s * s
            }
        };
        let count = (0..1usize << 32)
            .into_par_iter()
            .with_min_len(1 << 16)
            .filter(|&b| {
                let x = f64::from(f32::from_bits(b as u32));
                (chain(x) as f32).to_bits() != (pow(x, f64::from(k)) as f32).to_bits()
            })
            .count() as u64;
        println!("x ** {k}: {count} of 2^32 f32 patterns differ from pow");
        differ += count;
    }
    std::process::ExitCode::from(u8::from(differ != 0))
}
