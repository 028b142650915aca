"""Writes testdata/vectors/ops_math.jsonl: the elementwise functions of spec
§11.3 added to the §4.1 table — exp2 log2 log10 cbrt sinh cosh asin acos
atan asinh acosh atanh erf erfc reciprocal trunc signbit lgamma digamma
polygamma,
fmod copysign nextafter atan2 hypot logaddexp and logical_and/or/xor/not —
checked against mpmath and exact arithmetic, for
crates/tensor/tests/ops_oracle.rs.

    tools/oracle/.venv/bin/python tools/oracle/ops_math.py

Each transcendental is evaluated by mpmath 1.3.0 at 300 bits, converted to
an exact fraction and rounded once into the result dtype by opslib's exact
round-to-nearest-even, with "ulp": 1 (spec §5.6 asks ≤ 1 ulp of f64 before
the final rounding); the domain edges are spelled out here from the IEEE
754 / C99 Annex F definitions (asin(2) is NaN, atanh(±1) is ±inf, log2(-0)
is -inf, an odd function keeps the sign of a zero), not taken from mpmath,
which answers outside the reals with complex numbers. fmod (a - trunc(a/b)·b
as fractions), copysign and nextafter (a step of the bit pattern in the
result dtype) are exact (ulp 0); atan2, hypot and logaddexp are rounded
from mpmath with C99 Annex F at the edges (ulp 1); lgamma (ulp 1) and
digamma (ulp 4, PyTorch's edge values) likewise. round(x, decimals) is
checked bit for bit against NumPy's own np.round for f16/f32/f64, whose
definition spec §11.3 adopts, and against that definition computed
exactly for bf16 and the integers (see spec_round and int_round). reciprocal is exact
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


# ---------------------------------------------------------------------------
# lgamma and digamma.

def lgamma(x):
    """log|Γ(x)|: +inf at the poles (0 and the negative integers) and at
    ±inf (C99 Annex F), mpmath's loggamma's real part elsewhere."""
    if math.isnan(x):
        return NAN
    if math.isinf(x) or (x <= 0 and x == math.floor(x)):
        return INF
    if x == 1 or x == 2:
        return 0.0
    return exact(mpmath.re(mpmath.loggamma(mpmath.mpf(x))))


def digamma(x):
    """ψ(x) as PyTorch defines it at the edges: ∓inf at ±0 (copysign(inf,
    -x)), NaN at the negative integers and at -inf, +inf at +inf."""
    if math.isnan(x) or x == -INF:
        return NAN
    if x == 0:
        return math.copysign(INF, -x)
    if x == INF:
        return INF
    if x < 0 and x == math.floor(x):
        return NAN
    return exact(mpmath.digamma(mpmath.mpf(x)))


SPECIAL = {"lgamma": lgamma, "digamma": digamma}
# lgamma of a large negative non-integer has no accurate f64 value to
# compare with libm's (musl's lgamma loses digits there, as glibc's does;
# PyTorch's own tests avoid it), so the random inputs are positive; the
# special values still include -1.5, -2.5 and -7.
SPECIAL_RANGE = {"lgamma": (-3, 6), "digamma": (-3, 6)}
# digamma loses relative accuracy next to its root at 1.4616…, as every
# implementation of the series does; the bound is stated in ulps of f64
# away from it and the case set keeps clear of the root.
SPECIAL_ULP = {"lgamma": 1, "digamma": 4}
# Below zero both go through reflection (musl's lgamma does too), which
# cancels next to the zeros of log|Γ| (between -2 and -3, log|Γ(-2.75)| is
# 0.0045) and of ψ: an f64 result there is within these bounds, a narrower
# result (computed in f64, rounded once) still within the ulp above.
NEGATIVE_F64_ULP = {"lgamma": 128, "digamma": 16}


def special_ulp(name, dt, values):
    if dt == "f64" and any(v < 0 and math.isfinite(v) and v != math.floor(v) for v in values):
        return NEGATIVE_F64_ULP[name]
    return SPECIAL_ULP[name]


def special_case(name, dt, shape, values, note):
    values = E.norm(dt, values)
    args = [E.T(dt, shape, values)]
    rt = E.float_result(dt)
    res = [SPECIAL[name](E.cast(v, dt, rt)) for v in values]
    return case(name, args, E.T(rt, shape, res), ulp=special_ulp(name, dt, values), note=note)


def special_cases(name, rng):
    out = []
    for dt in E.ALL:
        vals = E.specials_for(dt)
        if E.is_float(dt):
            # 1.5 sits next to digamma's root (ψ(1.5) = 0.036…).
            vals = [v for v in vals if not (name == "digamma" and v == 1.5)]
        out.append(special_case(name, dt, [len(vals)], vals, f"{name} of {dt} special values"))
        if E.is_float(dt):
            lo, hi = SPECIAL_RANGE[name]
            if dt == "f16":
                hi = min(hi, 3)
            r = [abs(v) for v in E.random_floats(dt, 24, rng, lo, hi)]
            out.append(special_case(name, dt, [8, 3], r, f"{name} of random positive {dt} values"))
            neg = [-(k + 0.25 * (1 + i % 3)) for i, k in enumerate(range(12))]
            out.append(special_case(name, dt, [12], neg, f"{name} of negative non-integers"))
        else:
            vals = [v for v in E.random_ints(dt, 12, rng)]
            out.append(special_case(name, dt, [3, 4], vals, f"{name} of random {dt} values"))
    out.append(special_case(name, "f32", [0], [], f"{name} of an empty tensor"))
    out.append(case(name, [{"ints": [1, 2]}], {"error": "must be a tensor"}, note=f"{name} of an Arr"))
    return out


# ---------------------------------------------------------------------------
# The binary functions: fmod copysign nextafter atan2 hypot logaddexp.

FLOAT_ONLY = ("copysign", "nextafter", "atan2", "hypot", "logaddexp")
BINARY = ("fmod",) + FLOAT_ONLY
# The registry's parameter names of each, for keyword cases.
PI = exact(mpmath.pi)


def binary_compute(op, dt):
    if op == "fmod":
        if dt == "bool":
            return None, "not defined for bool tensors"
        return dt, dt
    return E.float_result(dt), E.float_result(dt)


def c_fmod(a, b):
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or b == 0:
        return NAN
    if math.isinf(b):
        return a
    r = Q(a) - Q(b) * int(Q(a) / Q(b))  # truncated quotient: exact
    if r == 0:
        return math.copysign(0.0, a)
    return r


def i_fmod(dt, a, b):
    if b == 0:
        raise E.OpError("by zero")
    r = abs(a) % abs(b)
    return E.wrap(-r if a < 0 else r, dt)


def next_after(dt, a, b):
    if math.isnan(a) or math.isnan(b):
        return NAN
    if a == b:
        return b
    if a == 0:
        tiny = E.val(dt, 1)
        return -tiny if b < 0 else tiny
    bits = E.bits(a, dt)
    step = 1 if (b > a) == (a > 0) else -1
    return E.val(dt, bits + step)


def c_atan2(y, x):
    """C99 Annex F atan2, mpmath away from the edges."""
    if math.isnan(y) or math.isnan(x):
        return NAN
    neg_y = math.copysign(1.0, y) < 0
    sgn = (lambda v: -v) if neg_y else (lambda v: v)
    if y == 0:
        if math.copysign(1.0, x) < 0:  # x is -0 or negative
            return sgn(PI)
        return y  # ±0
    if math.isinf(y):
        if x == INF:
            return sgn(PI / 4)
        if x == -INF:
            return sgn(3 * PI / 4)
        return sgn(PI / 2)
    if x == 0:
        return sgn(PI / 2)
    if x == INF:
        return math.copysign(0.0, y)
    if x == -INF:
        return sgn(PI)
    return exact(mpmath.atan2(mpmath.mpf(y), mpmath.mpf(x)))


def c_hypot(a, b):
    if math.isinf(a) or math.isinf(b):
        return INF
    if math.isnan(a) or math.isnan(b):
        return NAN
    if a == 0 or b == 0:
        return abs(a) + abs(b)
    return exact(mpmath.sqrt(mpmath.mpf(a) ** 2 + mpmath.mpf(b) ** 2))


def c_logaddexp(a, b):
    if math.isnan(a) or math.isnan(b):
        return NAN
    if a == b and math.isinf(a):
        return a
    if a == INF or b == INF:
        return INF
    if a == -INF:
        return b
    if b == -INF:
        return a
    m = max(mpmath.mpf(a), mpmath.mpf(b))
    return exact(m + mpmath.log1p(mpmath.exp(-abs(mpmath.mpf(a) - mpmath.mpf(b)))))


def binary_elem(op, ct, a, b):
    if op == "fmod":
        if ct == "bool" or ct in E.INT_BITS:
            return i_fmod(ct, a, b)
        return c_fmod(a, b)
    if op == "copysign":
        return math.copysign(a, b) if not math.isnan(a) else NAN
    if op == "nextafter":
        return next_after(ct, a, b)
    return {"atan2": c_atan2, "hypot": c_hypot, "logaddexp": c_logaddexp}[op](a, b)


BINARY_ULP = {"fmod": 0, "copysign": 0, "nextafter": 0, "atan2": 1, "hypot": 1, "logaddexp": 1}


def bcase(op, a, b, note):
    return E.binary_case(op, a, b, note, ulp=BINARY_ULP[op], compute=binary_compute, element=binary_elem)


def binary_cases(rng):
    cases = []
    for op in BINARY:
        for dt in E.ALL:
            sp = E.specials_for(dt)
            xs = [a for a in sp for _ in sp]
            ys = [b for _ in sp for b in sp]
            if dt in E.INT_BITS and op == "fmod":
                ys = [v if v != 0 else 3 for v in ys]
            n = len(xs)
            cases.append(bcase(op, ("t", dt, [n], xs), ("t", dt, [n], ys),
                               f"{dt} {op}: every pair of special values"))
            if E.is_float(dt):
                lo, hi = (-4, 4) if op != "logaddexp" else (-3, 2)
                rx = E.random_floats(dt, 24, rng, lo, hi)
                ry = E.random_floats(dt, 24, rng, lo, hi)
            else:
                rx, ry = E.random_ints(dt, 24, rng), E.random_ints(dt, 24, rng)
                if op == "fmod":
                    ry = [v if v != 0 else -3 for v in ry]
            cases.append(bcase(op, ("t", dt, [4, 6], rx), ("t", dt, [4, 6], ry),
                               f"{dt} {op}: random values, rank 2"))
        # Broadcasting, mixed dtypes and weak scalars.
        r = E.random_floats("f32", 6, rng, -2, 2)
        cases.append(bcase(op, ("t", "f32", [2, 3], r), ("t", "bf16", [3], r[:3]),
                           f"{op}: f32 [2,3] with bf16 [3] broadcast"))
        cases.append(bcase(op, ("t", "f16", [3, 1], r[:3]), ("t", "f16", [1, 2], r[3:5]),
                           f"{op}: f16 [3,1] with [1,2]"))
        cases.append(bcase(op, ("t", "bf16", [6], r), ("s", "float", 0.7),
                           f"{op}: bf16 with a weak F64 scalar"))
        cases.append(bcase(op, ("s", "int", 3), ("t", "f64", [6], r),
                           f"{op}: a weak Int with f64"))
        cases.append(bcase(op, ("t", "i32", [3], [7, -7, 9]), ("s", "int", 4),
                           f"{op}: i32 with a weak Int"))
        cases.append(bcase(op, ("t", "f32", [0, 3], []), ("t", "f32", [3], r[:3]),
                           f"{op}: an empty tensor"))
        cases.append(bcase(op, ("t", "f32", [2], r[:2]), ("t", "f32", [3], r[:3]),
                           f"{op}: shapes that do not broadcast"))
    cases.append(bcase("fmod", ("t", "i8", [3], [-128, 5, -7]), ("t", "i8", [3], [-1, 0, 2]),
                       "fmod: an integer zero divisor is an error"))
    cases.append(bcase("fmod", ("t", "i8", [3], [-128, 5, -7]), ("t", "i8", [3], [-1, 3, 2]),
                       "fmod: i8 -128 fmod -1 is 0"))
    cases.append(bcase("fmod", ("t", "bool", [2], [0, 1]), ("t", "bool", [2], [1, 1]),
                       "fmod: bool is an error"))
    return cases


# ---------------------------------------------------------------------------
# logical_and/or/xor/not: any dtypes, truth = nonzero (NaN is true).

def truth(dt, v):
    return int(v != 0) if not (E.is_float(dt) and math.isnan(v)) else 1


def logical_cases(rng):
    fns = {"logical_and": lambda a, b: a & b, "logical_or": lambda a, b: a | b,
           "logical_xor": lambda a, b: a ^ b}
    cases = []
    for dt in E.ALL:
        sp = E.specials_for(dt)
        xs = [a for a in sp for _ in sp]
        ys = [b for _ in sp for b in sp]
        n = len(xs)
        for name, fn in fns.items():
            res = [fn(truth(dt, a), truth(dt, b)) for a, b in zip(xs, ys)]
            cases.append(case(name, [E.T(dt, [n], xs), E.T(dt, [n], ys)], E.T("bool", [n], res),
                              note=f"{name} of every pair of {dt} special values"))
        cases.append(case("logical_not", [E.T(dt, [len(sp)], sp)],
                          E.T("bool", [len(sp)], [1 - truth(dt, v) for v in sp]),
                          note=f"logical_not of {dt} special values"))
    # Mixed dtypes broadcast; a host number is a truth value too.
    a = [0.0, -0.0, 2.5, NAN]
    b = [0, 3, -1]
    for name, fn in fns.items():
        res = [fn(truth("f32", x), truth("i32", y)) for x in a for y in b]
        cases.append(case(name, [E.T("f32", [4, 1], a), E.T("i32", [3], b)], E.T("bool", [4, 3], res),
                          note=f"{name} of f32 [4,1] and i32 [3], broadcast"))
        res = [fn(truth("f32", x), 1) for x in a]
        cases.append(case(name, [E.T("f32", [4], a), {"i": 5}], E.T("bool", [4], res),
                          note=f"{name} of a tensor and an Int"))
        cases.append(case(name, [E.T("f32", [2], a[:2]), E.T("f32", [3], a[:3])],
                          {"error": "cannot be broadcast"}, note=f"{name} of shapes that do not broadcast"))
    cases.append(case("logical_not", [E.T("f64", [0], [])], E.T("bool", [0], []), note="logical_not of an empty tensor"))
    return cases


# ---------------------------------------------------------------------------
# round(x, decimals): NumPy's own np.round is the reference (spec §11.3
# adopts its definition), ml_dtypes' bfloat16 for bf16.

NP_DTYPE = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i8": np.int8, "i32": np.int32}


def np_dtype(dt):
    if dt == "bf16":
        import ml_dtypes
        return ml_dtypes.bfloat16
    return NP_DTYPE[dt]


def rounded(dt, v):
    """v (a Fraction or float) rounded once into dt, as a float."""
    return E.val(dt, E.bits(v, dt))


def spec_round(dt, x, d):
    """Spec §11.3's definition, each step rounded once into dt: p = 10^|d|
    in dt; d > 0: round_even(x·p) / p; d < 0: round_even(x / p)·p.
    (ml_dtypes' np.round on bfloat16 does not round p and the product to
    bf16, so it is not the reference for bf16.)"""
    if d == 0:
        return E.round_half_even(x)
    p = rounded(dt, Q(10) ** abs(d))

    def mul(a, b):
        if math.isnan(a) or math.isnan(b):
            return NAN
        if math.isinf(a) or math.isinf(b):
            if a == 0 or b == 0:
                return NAN
            return INF if (a > 0) == (b > 0) else -INF
        r = rounded(dt, Q(a) * Q(b))
        return math.copysign(0.0, math.copysign(1, a) * math.copysign(1, b)) if r == 0 else r

    def div(a, b):
        if math.isnan(a) or math.isnan(b) or (math.isinf(a) and math.isinf(b)):
            return NAN
        if math.isinf(a):
            return a if b > 0 else -a
        if math.isinf(b):
            return math.copysign(0.0, math.copysign(1, a) * math.copysign(1, b))
        r = rounded(dt, Q(a) / Q(b))
        return math.copysign(0.0, math.copysign(1, a) * math.copysign(1, b)) if r == 0 else r

    even = E.round_half_even
    return div(even(mul(x, p)), p) if d > 0 else mul(even(div(x, p)), p)


def int_round(dt, v, d):
    """An integer to a multiple of 10^|d|, ties to even, exactly; kept for
    d >= 0; a result outside the dtype wraps (NumPy goes through f64 and
    its casts there are undefined, so it is not the reference)."""
    if d >= 0:
        return v
    p = 10 ** (-d)
    q, r = divmod(v, p)
    if 2 * r > p or (2 * r == p and q % 2):
        q += 1
    return E.wrap(q * p, dt)


def round_cases(rng):
    cases = []
    for dt in E.FLOATS + E.INTS:
        vals = E.specials_for(dt)
        if E.is_float(dt):
            vals = vals + E.random_floats(dt, 24, rng, -3, 4) + [0.125, 2.675, -0.25, 1234.5678, 0.05, 15.0, 25.0]
            vals = E.norm(dt, vals)
        else:
            vals = vals + E.random_ints(dt, 12, rng) + [15, 25, -15, 50, 49, 127 if dt == "i8" else 125]
        for d in (1, 2, 3, -1, -2, 5, 12, -12, 400, -400, 0):
            if dt in NP_DTYPE and E.is_float(dt):
                with np.errstate(all="ignore"):
                    got = np.round(np.array(vals, dtype=np_dtype(dt)), d)
                res, by = [float(v) for v in got], "NumPy"
            elif dt == "bf16":
                res, by = [spec_round(dt, v, d) for v in vals], "the spec's formula, exactly"
            else:
                res, by = [int_round(dt, v, d) for v in vals], "exact integers"
            cases.append(case("round", [E.T(dt, [len(vals)], vals)], E.T(dt, [len(vals)], res),
                              kwargs={"decimals": {"i": d}}, note=f"round of {dt} to {d} decimals ({by})"))
    cases.append(case("round", [E.T("bool", [2], [0, 1])], E.T("bool", [2], [0, 1]),
                      kwargs={"decimals": {"i": 2}}, note="round of bool keeps it"))
    cases.append(case("round", [E.T("f32", [0, 3], [])], E.T("f32", [0, 3], []),
                      kwargs={"decimals": {"i": 2}}, note="round of an empty tensor"))
    return cases


# ---------------------------------------------------------------------------
# x.bits() and from_bits(t, dt): the storage patterns themselves.

BITS_DT = {"f32": "i32", "i32": "i32", "bf16": "i32", "f16": "i32", "i8": "i8", "bool": "i8"}


def bits_cases(rng):
    cases = []
    for dt, bt in BITS_DT.items():
        vals = E.specials_for(dt)
        vals = E.norm(dt, vals) if E.is_float(dt) else vals
        raw = [E.bits(v, dt) for v in vals]
        # The patterns as the integer dtype stores them (i32 wraps an f32
        # pattern with the sign bit set to a negative number).
        as_int = [E.wrap(r if bt == "i32" and dt in ("bf16", "f16") else r, bt) for r in raw]
        n = len(vals)
        src = E.T(dt, [n], vals)
        tgt = {"t": bt, "shape": [n], "bits": [format(E.bits(v, bt), "0{}x".format(8 if bt == "i32" else 2)) for v in as_int]}
        cases.append(case("bits", [src], tgt, note=f"bits of {dt} special values, as {bt}"))
        cases.append(case("from_bits", [tgt, {"d": dt}], src, note=f"from_bits back to {dt}"))
    cases.append(case("bits", [E.T("f64", [1], [1.0])], {"error": "64-bit integers"}, note="bits of f64 is an error"))
    cases.append(case("from_bits", [E.T("i32", [2], [0x3F80, 70000]), {"d": "bf16"}], {"error": "not a bf16 bit pattern"},
                      note="a bf16 pattern above 65535 is an error"))
    cases.append(case("from_bits", [E.T("i8", [1], [2]), {"d": "bool"}], {"error": "not a bool bit pattern"},
                      note="a bool pattern other than 0/1 is an error"))
    cases.append(case("from_bits", [E.T("i8", [1], [1]), {"d": "f32"}], {"error": "from i32 bit patterns"},
                      note="f32 patterns come from i32"))
    return cases


# ---------------------------------------------------------------------------
# polygamma(x, n): ψ⁽ⁿ⁾, mpmath's psi(n, x) at 300 bits, with twill's pole
# values (the limit's sign where both sides agree, digamma's rule where
# they do not; see math.rs). n is a keyword, as in `polygamma(x, n=2)`.

POLYGAMMA_ORDERS = (0, 1, 2, 3, 4, 5, 10, 25)


def polygamma(n, x):
    if n == 0:
        return digamma(x)
    odd = n % 2 == 1
    if math.isnan(x) or x == -INF:
        return NAN
    if x == INF:
        return 0.0 if odd else -0.0
    if x <= 0 and x == math.floor(x):
        if odd:
            return INF
        return math.copysign(INF, -x) if x == 0 else NAN
    return exact(mpmath.psi(n, mpmath.mpf(x)))


def polygamma_ulp(n, dt, values):
    """The stated bound, in ulps of the result dtype: 1 ulp of a narrower
    result (computed in f64, rounded once). An f64 result up to order 25:
    ≤ 16 ulps (order 0 is digamma, whose recurrence and series cancel
    each other's leading digits for 1 < x < 3; the scaled Hurwitz sum and
    the mantissa/exponent product of math.rs each round a few times);
    below zero an even order cancels next to its zeros between the poles,
    as digamma does (NEGATIVE_F64_ULP), ≤ 64. Above order 25, ≤ 128: n!
    and the cotangent polynomial are built over n rounded steps."""
    if dt != "f64":
        return 1
    if n > 25:
        return 128
    if n % 2 == 0 and any(v < 0 and math.isfinite(v) and v != math.floor(v) for v in values):
        return 64
    return 16


def polygamma_case(n, dt, shape, values, note):
    values = E.norm(dt, values)
    rt = E.float_result(dt)
    res = [polygamma(n, E.cast(v, dt, rt)) for v in values]
    return case("polygamma", [E.T(dt, shape, values)], E.T(rt, shape, res),
                kwargs={"n": {"i": n}}, ulp=polygamma_ulp(n, dt, values), note=note)


def polygamma_cases(rng):
    out = []
    for n in POLYGAMMA_ORDERS:
        for dt in E.ALL:
            vals = E.specials_for(dt)
            if E.is_float(dt):
                # Next to ψ's root (1.46…) digamma is checked by its own set.
                vals = [v for v in vals if not (n == 0 and v == 1.5)]
            out.append(polygamma_case(n, dt, [len(vals)], vals, f"polygamma order {n} of {dt} special values"))
            if E.is_float(dt):
                hi = 3 if dt == "f16" else 6
                r = [abs(v) for v in E.random_floats(dt, 24, rng, -3, hi)]
                if n == 0:
                    # ψ's root at 1.46…: digamma's own set keeps clear of it.
                    r = [v for v in r if not 1.2 < v < 1.8]
                out.append(polygamma_case(n, dt, [len(r)], r, f"polygamma order {n} of random positive {dt} values"))
                neg = [-(k + 0.125 * (1 + i % 7)) for i, k in enumerate(range(12))]
                if n == 0:
                    neg = [v for v in neg if v > -10]
                out.append(polygamma_case(n, dt, [len(neg)], neg, f"polygamma order {n} of negative non-integers"))
            else:
                out.append(polygamma_case(n, dt, [3, 4], E.random_ints(dt, 12, rng), f"polygamma order {n} of random {dt} values"))
    # f64 at the ends of the range: huge and tiny arguments (the direct sum
    # skipped; the scale under- and overflowing), orders whose n! is not
    # finite, and far below zero (no loop runs |x| times).
    far = [1e-300, 5e-324, 1e-20, 3.0e15, 4.6e15, 9.1e15, 1e20, 1e200, 1.7e308,
           -1000.25, -123456.75, -3.0001, -2.5e15, -0.999]
    for n in (1, 2, 7, 100, 170, 171, 200, 1000):
        vals = far + [n / 2, n * 1.5, float(n)]
        out.append(polygamma_case(n, "f64", [len(vals)], vals, f"polygamma order {n} of f64 arguments at the ends of the range"))
    out.append(polygamma_case(2, "f32", [0, 3], [], "polygamma of an empty tensor"))
    out.append(polygamma_case(1, "f64", [], [0.25], "polygamma of a rank-0 tensor"))
    out.append(case("polygamma", [E.T("f32", [1], [1.0])], {"error": "must be ≥ 0"},
                    kwargs={"n": {"i": -1}}, note="polygamma of a negative order"))
    out.append(case("polygamma", [E.T("f32", [1], [1.0])], {"error": "must be an Int"},
                    kwargs={"n": opslib.f(1.0)}, note="polygamma of a Float order"))
    out.append(case("polygamma", [{"i": 1}, E.T("f32", [1], [1.0])], {"error": "takes the tensor first"},
                    note="polygamma in PyTorch's order (n, x)"))
    out.append(case("polygamma", [{"ints": [1, 2]}], {"error": "must be a tensor"},
                    kwargs={"n": {"i": 1}}, note="polygamma of an Arr"))
    return out


def main():
    rng = np.random.default_rng(0x6D617468)  # "math"
    cases = []
    for name in MATH:
        cases += cases_of(name, math_case, rng)
    for name in ("trunc", "signbit"):
        cases += cases_of(name, exact_case, rng)
    for name in SPECIAL:
        cases += special_cases(name, rng)
    cases += binary_cases(rng)
    cases += logical_cases(rng)
    cases += round_cases(rng)
    cases += bits_cases(rng)
    cases += polygamma_cases(rng)
    header = __doc__.split("\n\n")[0] + "\n\n" + "tools/oracle/.venv/bin/python tools/oracle/ops_math.py (mpmath " + mpmath.__version__ + ")"
    opslib.write("math", cases, header)


if __name__ == "__main__":
    main()
