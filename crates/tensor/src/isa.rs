//! The instruction set the kernels' plain loops are compiled for. The
//! crate is built for the baseline x86-64 (SSE2), where `f32::floor` is a
//! library call and a loop over f32 is four lanes wide; [`wide`] runs a
//! closure inside a function compiled with AVX-512 or with AVX2 and FMA,
//! whichever the CPU has, so the loops the closure inlines are vectorised
//! sixteen or eight f32 lanes wide and rounding is one instruction. It changes no result: without
//! fast-math LLVM neither reassociates nor contracts floating-point
//! arithmetic, so the same IEEE operations run in the same order either
//! way (`mul_add` is a fused multiply-add on both paths). The portable
//! path stays the reference, and [`set_portable`] selects it for the tests
//! that compare the two.

use std::sync::atomic::{AtomicBool, Ordering};

static PORTABLE: AtomicBool = AtomicBool::new(false);

/// Makes [`wide`] run its closures as plain code (for tests comparing the
/// paths; the results are the same, so other threads may see either).
pub fn set_portable(portable: bool) {
    PORTABLE.store(portable, Ordering::Relaxed);
}

/// `f()`, compiled for AVX-512 (F, BW, DQ, VL) when the CPU has it, else
/// for AVX2 + FMA when it has both.
#[inline(always)]
pub fn wide<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if !PORTABLE.load(Ordering::Relaxed) {
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has every feature the function enables.
            return unsafe { avx512(f) };
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: as above.
            return unsafe { avx2_fma(f) };
        }
    }
    f()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")]
unsafe fn avx512<R>(f: impl FnOnce() -> R) -> R {
    f()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn avx2_fma<R>(f: impl FnOnce() -> R) -> R {
    f()
}

#[cfg(test)]
pub(crate) mod tests {
    /// Held by the tests that switch paths, so that each sees its own.
    pub(crate) static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
}
