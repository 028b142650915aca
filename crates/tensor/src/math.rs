//! The one implementation of every transcendental function, in f64. It is
//! `libm` (a pure-Rust port of musl's libm), not the platform's C library,
//! so every platform computes the same bits (spec §5.6). Host scalars and
//! the tensor kernels both call these.

pub fn exp(x: f64) -> f64 {
    libm::exp(x)
}
pub fn expm1(x: f64) -> f64 {
    libm::expm1(x)
}
pub fn log(x: f64) -> f64 {
    libm::log(x)
}
pub fn log1p(x: f64) -> f64 {
    libm::log1p(x)
}
pub fn sin(x: f64) -> f64 {
    libm::sin(x)
}
pub fn cos(x: f64) -> f64 {
    libm::cos(x)
}
pub fn tan(x: f64) -> f64 {
    libm::tan(x)
}
pub fn tanh(x: f64) -> f64 {
    libm::tanh(x)
}
pub fn exp2(x: f64) -> f64 {
    libm::exp2(x)
}
pub fn log2(x: f64) -> f64 {
    libm::log2(x)
}
pub fn log10(x: f64) -> f64 {
    libm::log10(x)
}
pub fn cbrt(x: f64) -> f64 {
    libm::cbrt(x)
}
pub fn sinh(x: f64) -> f64 {
    libm::sinh(x)
}
pub fn cosh(x: f64) -> f64 {
    libm::cosh(x)
}
pub fn asin(x: f64) -> f64 {
    libm::asin(x)
}
pub fn acos(x: f64) -> f64 {
    libm::acos(x)
}
pub fn atan(x: f64) -> f64 {
    libm::atan(x)
}
pub fn asinh(x: f64) -> f64 {
    libm::asinh(x)
}
/// NaN below 1 (IEEE 754), which `libm::acosh` does not give for large
/// negative x (it answers acosh(-65504) with -3.47: the oracle found it).
pub fn acosh(x: f64) -> f64 {
    if x < 1.0 {
        return f64::NAN;
    }
    libm::acosh(x)
}
pub fn atanh(x: f64) -> f64 {
    libm::atanh(x)
}
pub fn erf(x: f64) -> f64 {
    libm::erf(x)
}
pub fn erfc(x: f64) -> f64 {
    libm::erfc(x)
}
/// `1 / x`, correctly rounded in f64 (so, rounded once more to a
/// narrower float, correctly rounded there too: 53 ≥ 2·24 + 2).
pub fn reciprocal(x: f64) -> f64 {
    1.0 / x
}
pub fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}
/// Correctly rounded (IEEE 754 requires it), so the platform's is exact.
pub fn sqrt(x: f64) -> f64 {
    x.sqrt()
}
/// `1 / sqrt(x)` with two f64 roundings (≤ 1 ulp of f64); rounding the
/// result once more to a narrower dtype is then within that dtype's ulp.
pub fn rsqrt(x: f64) -> f64 {
    1.0 / sqrt(x)
}
/// `1 / (1 + e^-x)`, written as `e^x / (1 + e^x)` for negative x so that
/// e^-x cannot overflow while σ(x) is still a (subnormal) f64.
pub fn sigmoid(x: f64) -> f64 {
    if x < 0.0 {
        let e = exp(x);
        e / (1.0 + e)
    } else {
        1.0 / (1.0 + exp(-x))
    }
}
/// The remainder of `x / y` with the sign of `x`, exact (C's `fmod`:
/// NaN for an infinite `x` or a zero `y`, `x` for an infinite `y`).
pub fn fmod(x: f64, y: f64) -> f64 {
    libm::fmod(x, y)
}
/// The magnitude of `x` with the sign bit of `y` (NaN included).
pub fn copysign(x: f64, y: f64) -> f64 {
    x.copysign(y)
}
/// The angle of the point (x, y) in [-pi, pi], C99 Annex F at the edges.
pub fn atan2(y: f64, x: f64) -> f64 {
    libm::atan2(y, x)
}
/// sqrt(x² + y²) without undue overflow; +inf if either is infinite, even
/// against a NaN (C99 Annex F).
pub fn hypot(x: f64, y: f64) -> f64 {
    libm::hypot(x, y)
}
/// log(e^x + e^y) without overflow, as NumPy computes it: `x + ln 2` when
/// the two are equal (so ±inf stay), else the larger plus
/// `log1p(e^-|x - y|)`; NaN if either is NaN.
pub fn logaddexp(x: f64, y: f64) -> f64 {
    if x == y {
        return x + std::f64::consts::LN_2;
    }
    let d = x - y;
    if d > 0.0 {
        x + log1p(exp(-d))
    } else if d <= 0.0 {
        y + log1p(exp(d))
    } else {
        // A NaN operand (or inf - inf, which x == y caught).
        x + y
    }
}
/// The log of |Γ(x)|: +inf at the poles (0 and the negative integers).
pub fn lgamma(x: f64) -> f64 {
    libm::lgamma(x)
}
/// The digamma function ψ(x) = d/dx lgamma(x) (lgamma's derivative), as
/// PyTorch computes it: ∓inf at ±0, NaN at the negative integers, the
/// reflection formula below 0, the recurrence up to 10 and the asymptotic
/// series above.
pub fn digamma(x: f64) -> f64 {
    if x == 0.0 {
        return f64::INFINITY.copysign(-x);
    }
    if x.is_nan() || x == f64::NEG_INFINITY {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return x;
    }
    if x < 0.0 {
        if x == x.trunc() {
            return f64::NAN;
        }
        // ψ(1 - x) - π / tan(π x), with the argument reduced first so that
        // π x does not lose the fraction.
        let r = x - x.trunc();
        return digamma(1.0 - x) - std::f64::consts::PI / tan(std::f64::consts::PI * r);
    }
    let mut v = x;
    let mut acc = 0.0;
    while v < 10.0 {
        acc -= 1.0 / v;
        v += 1.0;
    }
    if v == 10.0 {
        // ψ(10) to f64, which the series below gives to within an ulp too.
        return acc + 2.251_752_589_066_721;
    }
    // ψ(v) ~ ln v - 1/(2v) - Σ B_2k / (2k v^2k)
    const B: [f64; 7] = [
        8.333_333_333_333_333e-2,
        -2.109_279_609_279_609_4e-2,
        7.575_757_575_757_576e-3,
        -4.166_666_666_666_667e-3,
        3.968_253_968_253_968e-3,
        -8.333_333_333_333_333e-3,
        8.333_333_333_333_333e-2,
    ];
    let z = 1.0 / (v * v);
    let mut y = 0.0;
    for b in B {
        y = y * z + b;
    }
    acc + log(v) - 0.5 / v - y * z
}
