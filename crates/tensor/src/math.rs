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
