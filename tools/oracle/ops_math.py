"""Writes testdata/vectors/ops_math.jsonl: the elementwise functions of spec
§11.3 added to the §4.1 table — exp2 log2 log10 cbrt sinh cosh asin acos
atan asinh acosh atanh erf erfc reciprocal trunc signbit — checked against
mpmath, for crates/tensor/tests/ops_oracle.rs.

    tools/oracle/.venv/bin/python tools/oracle/ops_math.py

Each transcendental is evaluated by mpmath 1.3.0 at 300 bits, converted to
an exact fraction and rounded once into the result dtype by opslib's exact
round-to-nearest-even, with "ulp": 1 (spec §5.6 asks ≤ 1 ulp of f64 before
the final rounding); the domain edges are spelled out here from the IEEE
754 / C99 Annex F definitions (asin(2) is NaN, atanh(±1) is ±inf, log2(-0)
is -inf, an odd function keeps the sign of a zero), not taken from mpmath,
which answers outside the reals with complex numbers. reciprocal is exact
(1/x as a fraction, ulp 0); trunc is exact (ulp 0) and keeps an integer
tensor as it is; signbit reads the sign bit (true for -0.0). An integer
or bool input of a transcendental promotes to f32 (seed 000).

The inputs, case layout and helpers are those of ops_elementwise.py
(special values of every dtype, random values over many magnitudes, an
empty and a rank-0 tensor, an Arr as an error).

Deterministic: inputs come from numpy's PCG64 with a fixed seed.
"""

import math
import sys
from fractions import Fraction as Q
from pathlib import Path

import mpmath
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ops_elementwise as E  # noqa: E402  (inputs and case layout, shared)
import opslib  # noqa: E402
from opslib import case  # noqa: E402

mpmath.mp.prec = 300
NAN = float("nan")
INF = float("inf")


def exact(m):
    """An mpmath real as an exact Fraction, or ±inf / a signed zero when
    its magnitude is far outside every dtype's range."""
    if mpmath.isnan(m):
        return NAN
    if mpmath.isinf(m):
        return INF if m > 0 else -INF
    if m == 0:
        return 0.0
    sign, man, exp, _ = mpmath.mpf(m)._mpf_  # (-1)^sign · man · 2^exp
    if exp > 1100:
        return -INF if sign else INF
    if exp + int(man).bit_length() < -1200:
        return -0.0 if sign else 0.0
    q = Q(int(man)) * Q(2) ** exp
    return -q if sign else q


def fn(f, odd=False, lo=None, hi=None, at_lo=NAN, at_hi=NAN, zero=None, pos_inf=None, neg_inf=None):
    """A reference function: mpmath's `f` on [lo, hi] (NaN outside, or the
    given values at the ends), the sign of a zero kept when `odd`."""
    def g(x):
        if math.isnan(x):
            return NAN
        if x == 0 and (odd or zero is not None):
            return x if odd else zero
        if math.isinf(x):
            r = pos_inf if x > 0 else neg_inf
            if r is not None:
                return r
        if lo is not None and x <= lo:
            return at_lo if x == lo else NAN
        if hi is not None and x >= hi:
            return at_hi if x == hi else NAN
        return exact(f(mpmath.mpf(x)))
    return g


def cbrt(x):
    if math.isnan(x) or math.isinf(x) or x == 0:
        return x
    r = exact(mpmath.cbrt(mpmath.mpf(abs(x))))
    return r if x > 0 else -r


def reciprocal(x):
    if math.isnan(x):
        return NAN
    if math.isinf(x):
        return math.copysign(0.0, x)
    if x == 0:
        return math.copysign(INF, x)
    return 1 / Q(x)


HALF_PI = exact(mpmath.pi / 2)
MATH = {
    "exp2": fn(lambda v: mpmath.power(2, v), zero=1.0, pos_inf=INF, neg_inf=0.0),
    "cbrt": cbrt,
    "sinh": fn(mpmath.sinh, odd=True, pos_inf=INF, neg_inf=-INF),
    "cosh": fn(mpmath.cosh, zero=1.0, pos_inf=INF, neg_inf=INF),
    "asin": fn(mpmath.asin, odd=True, lo=-1.0, hi=1.0, at_lo=-HALF_PI, at_hi=HALF_PI),
    "acos": fn(mpmath.acos, zero=HALF_PI, lo=-1.0, hi=1.0, at_lo=exact(mpmath.pi), at_hi=0.0),
    "atan": fn(mpmath.atan, odd=True, pos_inf=HALF_PI, neg_inf=-HALF_PI),
    "asinh": fn(mpmath.asinh, odd=True, pos_inf=INF, neg_inf=-INF),
    "acosh": fn(mpmath.acosh, lo=1.0, at_lo=0.0, pos_inf=INF),
    "atanh": fn(mpmath.atanh, odd=True, lo=-1.0, hi=1.0, at_lo=-INF, at_hi=INF),
    # Beyond |x| = 40, erf is ±1 and erfc 0 or 2 far below half an f64 ulp
    # (erfc(40) < 1e-697), where mpmath's series checks overflow a float.
    "erf": fn(lambda v: mpmath.erf(v) if abs(v) < 40 else mpmath.sign(v), odd=True, pos_inf=1.0, neg_inf=-1.0),
    "erfc": fn(lambda v: mpmath.erfc(v) if abs(v) < 40 else (0 if v > 0 else 2), zero=1.0, pos_inf=0.0, neg_inf=2.0),
    "reciprocal": reciprocal,
}


def log_base(b):
    def g(x):
        if math.isnan(x) or x < 0:
            return NAN
        if x == 0:
            return -INF
        if math.isinf(x):
            return INF
        if x == 1:
            return 0.0
        return exact(mpmath.log(mpmath.mpf(x), b))
    return g


MATH = {"exp2": MATH.pop("exp2"), "log2": log_base(2), "log10": log_base(10), **MATH}

# The random inputs' range (powers of ten) where the function is defined
# and its result of interest; the special values cover the rest.
RANGE = {
    "exp2": (-2, 2.5), "sinh": (-2, 1.9), "cosh": (-2, 1.9),
    "asin": (-4, 0), "acos": (-4, 0), "atanh": (-4, 0), "acosh": (0, 4),
    "erf": (-4, 0.6), "erfc": (-4, 0.6),
}
POSITIVE = ("log2", "log10", "acosh")


def trunc(dt, x):
    if dt == "bool" or dt in E.INT_BITS or math.isnan(x) or math.isinf(x):
        return x
    y = float(math.trunc(x))
    return math.copysign(y, x) if y == 0 else y


def signbit(dt, x):
    if dt == "bool" or dt in E.INT_BITS:
        return int(x < 0)
    return int(math.copysign(1.0, x) < 0)


def exact_case(name, dt, shape, values, note):
    values = E.norm(dt, values)
    args = [E.T(dt, shape, values)]
    if name == "trunc":
        return case(name, args, E.T(dt, shape, [trunc(dt, v) for v in values]), note=note)
    return case(name, args, E.T("bool", shape, [signbit(dt, v) for v in values]), note=note)


def math_case(name, dt, shape, values, note):
    values = E.norm(dt, values)
    args = [E.T(dt, shape, values)]
    rt = E.float_result(dt)
    res = [MATH[name](E.cast(v, dt, rt)) for v in values]
    return case(name, args, E.T(rt, shape, res), ulp=0 if name == "reciprocal" else 1, note=note)


def cases_of(name, make, rng):
    out = []
    for dt in E.ALL:
        vals = E.specials_for(dt)
        out.append(make(name, dt, [len(vals)], vals, f"{name} of {dt} special values"))
        if E.is_float(dt):
            lo, hi = RANGE.get(name, (-4, 4))
            if dt == "f16":
                hi = min(hi, 0.9)
            r = E.random_floats(dt, 24, rng, lo, hi)
            if name in POSITIVE:
                r = [abs(v) + (1.0 if name == "acosh" else 0.0) for v in r]
                r = E.norm(dt, r)
            out.append(make(name, dt, [8, 3], r, f"{name} of random {dt} values"))
        else:
            out.append(make(name, dt, [3, 4], E.random_ints(dt, 12, rng), f"{name} of random {dt} values"))
    out.append(make(name, "f32", [0, 2], [], f"{name} of an empty tensor"))
    out.append(make(name, "f64", [], [-0.75], f"{name} of a rank-0 tensor"))
    out.append(case(name, [{"ints": [1, 2]}], {"error": "must be a tensor"}, note=f"{name} of an Arr"))
    return out


def main():
    rng = np.random.default_rng(0x6D617468)  # "math"
    cases = []
    for name in MATH:
        cases += cases_of(name, math_case, rng)
    for name in ("trunc", "signbit"):
        cases += cases_of(name, exact_case, rng)
    header = __doc__.split("\n\n")[0] + "\n\n" + "tools/oracle/.venv/bin/python tools/oracle/ops_math.py (mpmath " + mpmath.__version__ + ")"
    opslib.write("math", cases, header)


if __name__ == "__main__":
    main()
