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
