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
/// `(sin(x), cos(x))`, sharing one argument reduction: the same kernels on
/// the same reduced argument, so the same bits as [`sin`] and [`cos`]
/// (the test below holds it to that).
pub fn sin_cos(x: f64) -> (f64, f64) {
    libm::sincos(x)
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

/// The largest even order taken through the reflection formula below
/// zero (the cotangent polynomial's coefficients stay far inside f64).
const REFLECT_MAX: u64 = 100;

/// The orders whose n! is formed as a product; above, from lgamma.
const FACTORIAL_MAX: u64 = 10_000;

/// The coefficients (2j)!/B₂ⱼ of the Euler–Maclaurin tail of the Hurwitz
/// zeta function (Cephes' `zeta`), j = 1..12.
const ZETA_A: [f64; 12] = [
    12.0,
    -720.0,
    30240.0,
    -1209600.0,
    47900160.0,
    -1.892_437_580_318_379_2e9,
    7.472_424_96e10,
    -2.950_130_727_918_164e12,
    1.164_678_281_435_006_7e14,
    -4.597_978_722_407_473e15,
    1.815_210_540_194_354_7e17,
    -7.166_165_256_175_667e18,
];

/// The polygamma function ψ⁽ⁿ⁾(x), the n-th derivative of digamma
/// (`polygamma(x, 0)` is `digamma(x)`): (−1)ⁿ⁺¹ n! ζ(n+1, x) with ζ the
/// Hurwitz zeta function. At a pole (0 and the negative integers) an odd n
/// gives +inf (the limit from both sides); an even n follows digamma (∓inf
/// at ±0, NaN at a negative integer, where the two sides disagree). +inf
/// gives a zero of the limit's sign, -inf and NaN give NaN.
///
/// One value holds one order, with what depends on the order alone — n! as
/// mantissa and exponent, the cot-derivative polynomial of the reflection
/// — worked out once, so that a tensor's elements share it.
pub struct Polygamma {
    n: u64,
    /// n! as (mantissa, exponent), for n ≤ FACTORIAL_MAX.
    fact: Option<(f64, i64)>,
    /// The coefficients of Pₙ, lowest degree first, for an even order the
    /// reflection takes (see `reflected`); empty otherwise.
    cot: Vec<f64>,
}

impl Polygamma {
    pub fn new(n: u64) -> Polygamma {
        // n! as a running product renormalised at every step.
        let fact = (n <= FACTORIAL_MAX).then(|| {
            let (mut cm, mut ce) = (1.0f64, 0i64);
            for j in 1..=n {
                let (fm, fe) = libm::frexp(cm * j as f64);
                cm = fm;
                ce += i64::from(fe);
            }
            (cm, ce)
        });
        let mut cot = Vec::new();
        if n > 0 && n.is_multiple_of(2) && n <= REFLECT_MAX {
            cot = vec![0.0, 1.0];
            for _ in 0..n {
                let mut next = vec![0.0; cot.len() + 1];
                for (k, &ck) in cot.iter().enumerate().skip(1) {
                    let d = k as f64 * ck;
                    next[k - 1] -= d;
                    next[k + 1] -= d;
                }
                cot = next;
            }
        }
        Polygamma { n, fact, cot }
    }

    /// ψ⁽ⁿ⁾(x).
    pub fn at(&self, x: f64) -> f64 {
        let n = self.n;
        if n == 0 {
            return digamma(x);
        }
        let odd = n % 2 == 1;
        let sign = if odd { 1.0 } else { -1.0 };
        if x.is_nan() || x == f64::NEG_INFINITY {
            return f64::NAN;
        }
        if x == f64::INFINITY {
            return sign * 0.0;
        }
        if x <= 0.0 && x == x.trunc() {
            return if odd {
                f64::INFINITY
            } else if x == 0.0 {
                f64::INFINITY.copysign(-x)
            } else {
                f64::NAN
            };
        }
        if x < 0.0 && !odd && n <= REFLECT_MAX {
            return self.reflected(x);
        }
        sign * self.factorial_hurwitz(x)
    }

    /// ψ⁽ⁿ⁾(x) for x < 0 and an even n by reflection: ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁾(1 − x) −
    /// πⁿ⁺¹ Pₙ(cot πx), with Dⁿ cot u = Pₙ(cot u), P₀(y) = y and Pₖ₊₁(y) =
    /// −(1 + y²) Pₖ′(y). An even order's ψ⁽ⁿ⁾ has zeros next to the
    /// half-integers, where the direct sum of terms of both signs cancels;
    /// there Pₙ(cot πx) is near 0 and ψ⁽ⁿ⁾(1 − x) carries the value. cot πx is
    /// taken from r = |x − trunc x| folded into [0, ½] (1 − r is exact), as
    /// 1/tan πr up to r = ¼ and tan π(½ − r) above (½ − r exact), so that it is
    /// accurate everywhere and exactly 0 at the half-integers.
    fn reflected(&self, x: f64) -> f64 {
        use std::f64::consts::PI;
        // x − trunc x = −r below zero, and cot π(−r) = −cot πr = cot π(1 − r).
        let r = (x - x.trunc()).abs();
        let (r, y_sign) = if r > 0.5 { (1.0 - r, 1.0) } else { (r, -1.0) };
        let cot = if r <= 0.25 {
            1.0 / tan(PI * r)
        } else {
            tan(PI * (0.5 - r))
        };
        let y = y_sign * cot;
        let p = self.cot.iter().rev().fold(0.0, |acc, &ck| acc * y + ck);
        // ψ⁽ⁿ⁾(1 − x) is −n!·ζ(n + 1, 1 − x) for an even n.
        -self.factorial_hurwitz(1.0 - x) - pow(PI, self.n as f64 + 1.0) * p
    }

    /// n!·ζ(n+1, x) for n ≥ 1 and x not a pole. Every sum is scaled by
    /// m^(n+1), m the |x + k| nearest zero (k ≥ 0), so that no term
    /// overflows or underflows; the scale and n! are applied once at the
    /// end. Below zero the terms with x + k < 0 are (−1)^(n+1) (ζ(n+1, f) −
    /// ζ(n+1, f + K)), f = −(x + K − 1) and K of them, so every zeta is
    /// taken at a positive argument and no loop runs |x| times.
    fn factorial_hurwitz(&self, x: f64) -> f64 {
        let n = self.n;
        let s = n as f64 + 1.0;
        if x > 0.0 {
            return self.scaled(x, zeta_scaled(s, x, x));
        }
        // x + K ∈ (0, 1) and f ∈ (0, 1), both exact.
        let big_k = (-x).ceil();
        let (first, f) = (x + big_k, -(x + (big_k - 1.0)));
        let m = first.min(f);
        let neg = zeta_scaled(s, f, m) - zeta_scaled(s, f + big_k, m);
        let neg = if n % 2 == 1 { neg } else { -neg };
        self.scaled(m, neg + zeta_scaled(s, first, m))
    }

    /// n!·m^-(n+1)·v. The factors are split into mantissa and exponent (n!
    /// as a running product renormalised at every step, in `new`; m^-(n+1) as
    /// f^-(n+1)·2^-(e(n+1)) for m = f·2^e), the mantissas multiplied and the
    /// exponents added, so that nothing overflows or underflows before the one
    /// final scaling: within a few ulps of f64 for small n, about √n more from
    /// the product for large n. Above FACTORIAL_MAX n! is taken as
    /// exp(ln n! − (n+1) ln m + ln |v|): relative error about |that
    /// exponent|·2^-53.
    fn scaled(&self, m: f64, v: f64) -> f64 {
        let n = self.n;
        let s = n as f64 + 1.0;
        let Some((cm, ce)) = self.fact else {
            return exp(lgamma(s) - s * log(m) + log(v.abs())).copysign(v);
        };
        let (fm, fe) = libm::frexp(m);
        let (pm, pe) = libm::frexp(pow(fm, -s));
        let (vm, ve) = libm::frexp(v.abs());
        let e = -i64::from(fe) * (n as i64 + 1) + i64::from(pe) + ce + i64::from(ve);
        // Beyond ±2200 the result is 0 or inf whatever the mantissa.
        let e = e.clamp(-2200, 2200) as i32;
        libm::scalbn(pm * cm * vm, e).copysign(v)
    }
}

/// m^s·ζ(s, q) for q > 0: Cephes' `zeta` — the terms summed directly up to
/// q + k > 9 (at least nine of them, or until one no longer changes the
/// sum), then the Euler–Maclaurin tail there.
fn zeta_scaled(s: f64, q: f64, m: f64) -> f64 {
    let half_eps = f64::EPSILON * 0.5;
    let term = |a: f64| pow(m / a, s);
    let mut a = q;
    let mut b = term(a);
    let mut sum = b;
    // From 2^52 on, adding 1 no longer moves q (every direct term would be
    // the same one); the tail there converges at once.
    let mut i = if q >= 4_503_599_627_370_496.0 { 9 } else { 0 };
    while i < 9 || a <= 9.0 {
        i += 1;
        a += 1.0;
        b = term(a);
        sum += b;
        if b <= sum * half_eps {
            return sum;
        }
    }
    // The tail past a (whose term b is in the sum): a^(1-s)/(s-1) - a^-s/2
    // + Σⱼ B₂ⱼ/(2j)! s(s+1)…(s+2j-2) a^(-s-2j+1).
    let w = a;
    sum += b * w / (s - 1.0) - 0.5 * b;
    let mut rising = 1.0;
    let mut k = 0.0;
    for c in ZETA_A {
        rising *= s + k;
        b /= w;
        let t = rising * b / c;
        sum += t;
        if (t / sum).abs() < half_eps {
            break;
        }
        k += 1.0;
        rising *= s + k;
        b /= w;
        k += 1.0;
    }
    sum
}

#[cfg(test)]
mod tests {
    /// `sin_cos` is `sin` and `cos`, bit for bit: on the angles `randn`
    /// feeds it (all of [0, 2π)), near the kernels' thresholds, and on
    /// doubles of every exponent and sign, specials included.
    #[test]
    fn sin_cos_is_sin_and_cos() {
        let mut state = 0x853c_49e6_748f_ea9bu64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut xs: Vec<f64> = vec![
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
            5e-324,
        ];
        // The small-argument thresholds of sin (2^-26) and sincos (2^-27·√2).
        for hi in [0x3e46_a09e_u64, 0x3e50_0000, 0x3fe9_21fb] {
            for d in -3i64..=3 {
                let bits = ((hi as i64 + d) as u64) << 32;
                xs.extend([
                    f64::from_bits(bits),
                    -f64::from_bits(bits),
                    f64::from_bits(bits | 0xffff_ffff),
                ]);
            }
        }
        for i in 0..200_000u64 {
            // randn's angles: 2π·u for u = k / 2^53.
            xs.push(2.0 * std::f64::consts::PI * ((next() >> 11) as f64 / (1u64 << 53) as f64));
            if i % 4 == 0 {
                xs.push(f64::from_bits(next()));
            }
        }
        for x in xs {
            let (s, c) = super::sin_cos(x);
            assert_eq!(s.to_bits(), super::sin(x).to_bits(), "sin({x:e})");
            assert_eq!(c.to_bits(), super::cos(x).to_bits(), "cos({x:e})");
        }
    }
}
