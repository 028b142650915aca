//! The instruction set the kernels' plain loops are compiled for. The
//! crate is built for the baseline x86-64 (SSE2), where `f32::floor` is a
//! library call and a loop over f32 is four lanes wide; [`wide`] runs a
//! closure inside a function compiled with AVX-512 or with AVX2 and FMA,
//! whichever the CPU has, so the loops the closure inlines are vectorised
//! sixteen or eight f32 lanes wide and rounding is one instruction. It changes no result: without
//! fast-math LLVM neither reassociates nor contracts floating-point
//! arithmetic, so the same IEEE operations run in the same order either
//! way (`mul_add` is a fused multiply-add on both paths). The portable
//! path stays the reference. [`cap`] limits the level ([`set_cap`]: the
//! CLI's `TWILL_ISA`, and the tests that compare the paths), so one machine runs
//! and times every path it has; every hand-written kernel elsewhere in
//! the crate asks [`allows`] before its own feature check.

use std::sync::atomic::{AtomicU8, Ordering};

/// An instruction-set level the kernels may use: each runs only where
/// the CPU has it *and* the cap (see [`cap`]) allows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// The baseline x86-64 (SSE2) or whatever the target's baseline is.
    Portable = 1,
    /// AVX2 and FMA (Haswell, Zen).
    Avx2 = 2,
    /// AVX-512 F, BW, DQ and VL (Skylake-X, Ice Lake, Zen 4).
    Avx512 = 3,
}

impl Level {
    pub const ALL: [Level; 3] = [Level::Portable, Level::Avx2, Level::Avx512];

    /// The level's name as `TWILL_ISA` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Level::Portable => "portable",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
        }
    }

    /// The level `TWILL_ISA` names, if it names one.
    pub fn parse(s: &str) -> Option<Level> {
        let s = s.trim().to_ascii_lowercase();
        Level::ALL.into_iter().find(|l| l.name() == s)
    }

    fn from_u8(v: u8) -> Level {
        match v {
            1 => Level::Portable,
            2 => Level::Avx2,
            _ => Level::Avx512,
        }
    }
}

/// The cap, a `Level` as `u8`.
static CAP: AtomicU8 = AtomicU8::new(Level::Avx512 as u8);

/// The highest level the kernels may use: AVX-512 until [`set_cap`]
/// lowers it (the CLI does for `TWILL_ISA=portable|avx2|avx512`). A cap
/// lets one machine run, test and time the paths of a smaller one (the
/// AVX2 kernels on an AVX-512 CPU); it never enables what the CPU lacks.
pub fn cap() -> Level {
    Level::from_u8(CAP.load(Ordering::Relaxed))
}

/// Caps the kernels at `level` (`TWILL_ISA`, and the tests that compare
/// the paths: the results are the same, so other threads may see either).
pub fn set_cap(level: Level) {
    CAP.store(level as u8, Ordering::Relaxed);
}

/// Whether kernels of `level` may run: the cap allows it. Each kernel
/// still checks the CPU features it is compiled for.
#[inline]
pub fn allows(level: Level) -> bool {
    cap() >= level
}

/// The level the CPU has, whatever the cap.
pub fn detected() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx512() {
            return Level::Avx512;
        }
        if has_avx2_fma() {
            return Level::Avx2;
        }
    }
    Level::Portable
}

/// The level the kernels run at: what the CPU has, within the cap.
pub fn level() -> Level {
    detected().min(cap())
}

/// The levels this CPU can run, lowest first: the paths a test compares.
pub fn levels() -> Vec<Level> {
    Level::ALL.into_iter().filter(|&l| l <= detected()).collect()
}

#[cfg(target_arch = "x86_64")]
fn has_avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512dq")
        && std::arch::is_x86_feature_detected!("avx512vl")
        && std::arch::is_x86_feature_detected!("fma")
}

#[cfg(target_arch = "x86_64")]
fn has_avx2_fma() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

/// `f()`, compiled for AVX-512 (F, BW, DQ, VL) when the CPU has it and
/// the cap allows it, else for AVX2 + FMA when it has both and the cap
/// allows them.
#[inline(always)]
pub fn wide<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        let cap = cap();
        if cap >= Level::Avx512 && has_avx512() {
            // SAFETY: the CPU has every feature the function enables.
            return unsafe { avx512(f) };
        }
        if cap >= Level::Avx2 && has_avx2_fma() {
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
    use super::{cap, levels, set_cap, Level};

    /// Held by the tests that switch paths, so that each sees its own.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// Puts the cap back as it was when dropped (a failed assertion too).
    struct Restore(Level);

    impl Drop for Restore {
        fn drop(&mut self) {
            set_cap(self.0);
        }
    }

    /// Runs `f` with the kernels capped at each level the CPU has, lowest
    /// first, holding the other path-switching tests off meanwhile, and
    /// puts the cap back as it was.
    pub(crate) fn at_each_level(mut f: impl FnMut(Level)) {
        let _one = ONE_AT_A_TIME.lock();
        let _restore = Restore(cap());
        for level in levels() {
            set_cap(level);
            f(level);
        }
    }
}
