"""Writes testdata/vectors/ops_elementwise.jsonl: the elementwise operations
(binary operators, maximum, minimum, where, clip and the unary functions)
checked against an independent reference, for crates/tensor/tests/ops_oracle.rs.

    tools/oracle/.venv/bin/python tools/oracle/ops_elementwise.py

The reference never calls twill. The dtype of every result is stated here
from the spec's rules (seed 000 "Promotion" and spec §5 extension 1, weak
host scalars), written out again rather than imported. Operands are first
converted to the dtype the operation computes in — a cast, rounded once
from the exact value — and then:

* + - * / and sqrt are computed exactly with fractions.Fraction (IEEE
  special cases by hand: signed zeros, infinities, NaN) and rounded once
  into the result dtype by opslib's exact round-to-nearest-even (ulp 0);
* // and % on floats are NumPy's float64 floor_divide / remainder (NumPy
  semantics are normative for them, signed zeros and division by zero
  included), rounded once (ulp 0); a Python transcription of NumPy's
  npy_divmod is checked against NumPy on every input;
* ** on floats is NumPy float64 power, rounded once (ulp 1: twill's libm
  and the system libm are each within an ulp of f64);
* the transcendentals are evaluated with the decimal module at 110
  significant digits (exp, ln and sqrt of Decimal are correctly rounded;
  sin, cos and tan use a Taylor series after reduction by a 1300-digit pi;
  tiny arguments use their leading series terms), then rounded once into
  the result dtype, with "ulp": 1 (spec §5.6 asks ≤ 1 ulp of f64 before
  the final rounding);
* integer arithmetic is Python's exact integer arithmetic wrapped into the
  dtype's width (two's complement); // and % floor like Python; shifts by
  at least the width give 0 (<<) or the sign fill (>>), as NumPy's do;
* NaN follows PyTorch where the spec says so (seed 004): maximum, minimum
  and clip propagate NaN, relu keeps it (x <= 0 ? 0 : x), sign(nan) = 0.
  maximum/minimum order -0 below +0 (IEEE 754-2019 maximum/minimum).

Deterministic: inputs come from numpy's PCG64 with fixed seeds.
"""

import math
import sys
from decimal import Decimal as D
from decimal import localcontext
from fractions import Fraction as Q
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import opslib  # noqa: E402
from opslib import case, f, tensor  # noqa: E402

FLOATS = ("bf16", "f16", "f32", "f64")
INTS = ("i8", "i32")
ALL = ("bool",) + INTS + FLOATS
NAN = float("nan")
INF = float("inf")
MAN_BITS = {"bf16": 7, "f16": 10, "f32": 23, "f64": 52}
WIDTH = {"bf16": 16, "f16": 16, "f32": 32, "f64": 64}
INT_BITS = {"i8": 8, "i32": 32}


# ---------------------------------------------------------------------------
# Dtype rules, restated from the spec.

def is_float(dt):
    return dt in FLOATS


def promote(a, b):
    """seed 000, Promotion: same -> same; ints -> wider (bool < i8 < i32);
    int with float -> the float; f16 with bf16 -> f32; else the wider float."""
    if a == b:
        return a
    order = {"bool": 0, "i8": 1, "i32": 2}
    if a in order and b in order:
        return a if order[a] > order[b] else b
    if a in order:
        return b
    if b in order:
        return a
    if {a, b} == {"bf16", "f16"}:
        return "f32"
    rank = {"bf16": 0, "f16": 0, "f32": 1, "f64": 2}
    return a if rank[a] > rank[b] else b


def promote_weak(t, kind):
    """spec §5 ext. 1: Int with any integer or float tensor -> the tensor's
    dtype (bool -> i32); F64 with a float tensor -> its dtype, with an
    integer or bool tensor -> f32; Bool -> the tensor's dtype."""
    if kind == "bool":
        return t
    if kind == "int":
        return "i32" if t == "bool" else t
    return t if is_float(t) else "f32"


def float_result(dt):
    return dt if is_float(dt) else "f32"


# ---------------------------------------------------------------------------
# Values: ints (bool as 0/1) for integer dtypes, Python floats (exact: every
# value of every dtype is an f64) for float dtypes.

def val(dt, bits):
    v = opslib.value_of_bits(bits, dt)
    if is_float(dt):
        return float(v)
    return int(v)


def bits(v, dt):
    """Storage bits of v rounded once into dt (v: int, float or Fraction)."""
    if dt == "bool":
        return int(bool(v))
    if dt in INT_BITS:
        return wrap(int(v), dt) % 2 ** INT_BITS[dt]
    return opslib.bits_of_value(v, dt)


def wrap(n, dt):
    if dt == "bool":
        return int(n != 0)
    w = INT_BITS[dt]
    return (n + 2 ** (w - 1)) % 2**w - 2 ** (w - 1)


def cast(v, src, dst):
    """The value of v (of dtype src) converted to dst: one rounding."""
    if src == dst:
        return v
    if dst == "bool":
        return int(v != 0)  # NaN != 0, so NaN is true
    if is_float(dst):
        return val(dst, bits(v if not isinstance(v, bool) else int(v), dst))
    if is_float(src):
        raise ValueError("float -> int casts are not part of these cases")
    return wrap(v, dst)


def norm(dt, values):
    """Values as the dtype stores them (a float rounded once into dt)."""
    return [val(dt, bits(v, dt)) if is_float(dt) else v for v in values]


def T(dt, shape, values):
    """A tensor argument/expectation from values (rounded once into dt)."""
    return tensor(dt, shape, [bits(v, dt) for v in values])


def special_floats(dt):
    inf_bits = opslib.inf_bits(dt, False)
    m = MAN_BITS[dt]
    sub_min = val(dt, 1)
    sub_max = val(dt, (1 << m) - 1)
    norm_min = val(dt, 1 << m)
    fmax = val(dt, inf_bits - 1)
    return [NAN, INF, -INF, 0.0, -0.0, sub_min, -sub_max, norm_min, fmax, -fmax,
            1.0, -1.0, 0.5, 1.5, -2.5, 3.0, 7.0, -7.0]


def random_floats(dt, n, rng, lo=-4, hi=4):
    """n values of dt: signed, spread over magnitudes 10^lo .. 10^hi."""
    mags = 10.0 ** rng.uniform(lo, hi, n)
    signs = rng.choice([-1.0, 1.0], n)
    return [val(dt, bits(float(s * m), dt)) for s, m in zip(signs, mags)]


def random_ints(dt, n, rng):
    if dt == "bool":
        return [int(b) for b in rng.integers(0, 2, n)]
    w = INT_BITS[dt]
    lo, hi = -(2 ** (w - 1)), 2 ** (w - 1)
    small = [int(x) for x in rng.integers(-20, 21, n // 2)]
    big = [int(x) for x in rng.integers(lo, hi, n - n // 2, dtype=np.int64)]
    return small + big


def specials_for(dt):
    if is_float(dt):
        return special_floats(dt)
    if dt == "bool":
        return [0, 1]
    w = INT_BITS[dt]
    return [0, 1, -1, 2, -2, 3, 7, -7, 2 ** (w - 1) - 1, -(2 ** (w - 1)), 2 ** (w - 2)]


# ---------------------------------------------------------------------------
# Exact float arithmetic with IEEE special cases.

def neg_zero(x):
    return x == 0 and math.copysign(1.0, x) < 0


def f_add(a, b):
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b):
        return a + b  # exact for infinities; inf + -inf is NaN
    r = Q(a) + Q(b)
    if r == 0:
        return -0.0 if neg_zero(a) and neg_zero(b) else 0.0
    return r


def f_sub(a, b):
    return f_add(a, -b)


def sign_xor(a, b):
    return (math.copysign(1.0, a) < 0) != (math.copysign(1.0, b) < 0)


def f_mul(a, b):
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b):
        return a * b
    r = Q(a) * Q(b)
    if r == 0:
        return -0.0 if sign_xor(a, b) else 0.0
    return r


def f_div(a, b):
    if math.isnan(a) or math.isnan(b):
        return NAN
    if b == 0:
        if a == 0:
            return NAN
        return -INF if sign_xor(a, b) else INF
    if math.isinf(a):
        return NAN if math.isinf(b) else (-INF if sign_xor(a, b) else INF)
    if math.isinf(b) or a == 0:
        return -0.0 if sign_xor(a, b) else 0.0
    return Q(a) / Q(b)


def npy_divmod(a, b):
    """A transcription of NumPy's npy_divmod (float64), checked against
    np.floor_divide / np.remainder on every input below."""
    with np.errstate(all="ignore"):
        mod = float(np.fmod(np.float64(a), np.float64(b)))
    if b == 0:
        with np.errstate(all="ignore"):
            return (float(np.float64(a) / np.float64(b)), mod)
    div = (a - mod) / b
    if mod:
        if (b < 0) != (mod < 0):
            mod += b
            div -= 1.0
    else:
        mod = math.copysign(0.0, b)
    if div:
        floordiv = math.floor(div) if math.isfinite(div) else div
        if div - floordiv > 0.5:
            floordiv += 1.0
    else:
        with np.errstate(all="ignore"):
            floordiv = math.copysign(0.0, float(np.float64(a) / np.float64(b)))
    return floordiv, mod


def numpy_floordiv_mod(a, b):
    with np.errstate(all="ignore"):
        q = float(np.floor_divide(np.float64(a), np.float64(b)))
        m = float(np.remainder(np.float64(a), np.float64(b)))
    mq, mm = npy_divmod(a, b)
    same = lambda x, y: (math.isnan(x) and math.isnan(y)) or (x == y and math.copysign(1, x) == math.copysign(1, y))
    assert same(q, mq) and same(m, mm), (a, b, q, m, mq, mm)
    return q, m


def is_odd_integer(y):
    return math.isfinite(y) and y == math.floor(y) and abs(y) < 2**53 and int(y) % 2 == 1


def f_pow(x, y):
    """pow(x, y) by C99 Annex F (IEEE 754 pow): its special cases by hand,
    then exact Fractions for integral exponents and Decimal exp(y ln x)
    otherwise. (NumPy's scalar power is not used: it computes x ** 0.5 as
    sqrt(x), which differs at -inf and -0.)"""
    if y == 0 or x == 1:
        return 1.0
    if math.isnan(x) or math.isnan(y):
        return NAN
    odd = is_odd_integer(y)
    if x == 0:
        if y < 0:
            return math.copysign(INF, x) if odd else INF
        return x if odd else 0.0
    if math.isinf(y):
        if x == -1:
            return 1.0
        return INF if (abs(x) > 1) == (y > 0) else 0.0
    if math.isinf(x):
        if x > 0:
            return INF if y > 0 else 0.0
        if y > 0:
            return -INF if odd else INF
        return -0.0 if odd else 0.0
    integral = y == math.floor(y)
    if x < 0 and not integral:
        return NAN
    negative = x < 0 and odd
    # Far outside f64's range either way: the sign-correct infinity or zero.
    scale = y * math.log2(abs(x))
    if scale > 1100:
        return -INF if negative else INF
    if scale < -1200:
        return -0.0 if negative else 0.0
    if integral and abs(y) <= 4096:
        return Q(x) ** int(y)
    with localcontext() as ctx:
        ctx.prec = PREC
        m = Q((D(y) * D(abs(x)).ln()).exp())
    return -m if negative else m


def f_max(a, b):
    if math.isnan(a) or math.isnan(b):
        return NAN
    if a == b:
        return b if neg_zero(a) else a
    return a if a > b else b


def f_min(a, b):
    if math.isnan(a) or math.isnan(b):
        return NAN
    if a == b:
        return a if neg_zero(a) else b
    return a if a < b else b


# ---------------------------------------------------------------------------
# Integer arithmetic (wrapping), and the errors.

class OpError(Exception):
    pass


def i_floordiv(a, b):
    if b == 0:
        raise OpError("integer division by zero")
    return a // b


def i_mod(a, b):
    if b == 0:
        raise OpError("integer modulo by zero")
    return a % b


def i_pow(a, b):
    if b < 0:
        raise OpError("integers to negative integer powers are not allowed")
    return a**b


def shl(dt):
    def op(a, b):
        if b < 0:
            raise OpError("negative shift count")
        return a << b if b < INT_BITS[dt] else 0
    return op


def shr(dt):
    def op(a, b):
        if b < 0:
            raise OpError("negative shift count")
        return a >> min(b, INT_BITS[dt] - 1)
    return op


CMP = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}

ARITH = ("+", "-", "*", "/", "//", "%", "**")
BITWISE = ("&", "|", "^", "<<", ">>")
BINARY = ARITH + tuple(CMP) + BITWISE + ("maximum", "minimum")


def compute_dtype(op, dt):
    """(dtype the operands become, result dtype) or an error message."""
    if dt == "bool" and op in ("-", "/", "//", "%", "**"):
        return None, "not defined for bool tensors"
    if (is_float(dt) or dt == "bool") and op in ("<<", ">>"):
        return None, "needs integer tensors"
    if is_float(dt) and op in ("&", "|", "^"):
        return None, "needs bool or integer tensors"
    if op == "/":
        return float_result(dt), float_result(dt)
    if op in CMP:
        return dt, "bool"
    return dt, dt


def elem(op, dt, a, b):
    """One element of `a op b`, a and b already of dtype dt (the computing
    dtype); returns the value to be rounded into the result dtype."""
    if op in CMP:
        return int(CMP[op](a, b))
    if dt == "bool":
        return {"+": a | b, "*": a & b, "&": a & b, "|": a | b, "^": a ^ b,
                "maximum": max(a, b), "minimum": min(a, b)}[op]
    if dt in INT_BITS:
        fn = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
              "//": lambda: i_floordiv(a, b), "%": lambda: i_mod(a, b), "**": lambda: i_pow(a, b),
              "&": lambda: a & b, "|": lambda: a | b, "^": lambda: a ^ b,
              "<<": lambda: shl(dt)(a, b), ">>": lambda: shr(dt)(a, b),
              "maximum": lambda: max(a, b), "minimum": lambda: min(a, b)}[op]
        return wrap(fn(), dt)
    if op in ("//", "%"):
        q, m = numpy_floordiv_mod(a, b)
        return q if op == "//" else m
    return {"+": f_add, "-": f_sub, "*": f_mul, "/": f_div, "**": f_pow,
            "maximum": f_max, "minimum": f_min}[op](a, b)


def broadcast(sa, sb):
    n = max(len(sa), len(sb))
    sa = [1] * (n - len(sa)) + list(sa)
    sb = [1] * (n - len(sb)) + list(sb)
    out = []
    for x, y in zip(sa, sb):
        if x != y and x != 1 and y != 1:
            return None
        out.append(y if x == 1 else x)
    return out


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def bcast_values(values, shape, out):
    """values (row-major, of `shape`) broadcast to `out`, row-major."""
    shape = [1] * (len(out) - len(shape)) + list(shape)
    strides = []
    acc = 1
    for d in reversed(shape):
        strides.append(acc if d != 1 else 0)
        acc *= d
    strides.reverse()
    res = []
    for i in range(numel(out)):
        rem, off = i, 0
        for d, s in zip(reversed(out), reversed(strides)):
            off += (rem % d) * s
            rem //= d
        res.append(values[off])
    return res


def scalar_arg(kind, v):
    if kind == "int":
        return {"i": v}
    if kind == "bool":
        return {"b": bool(v)}
    return f(v)


def weak_scalar_value(kind, v, dt):
    """A host scalar converted to dt (spec §5 ext. 1), or OpError."""
    if kind == "int" and not is_float(dt):
        if dt == "bool" or wrap(v, dt) != v:
            raise OpError("does not fit in")
        return v
    if kind == "bool":
        return cast(int(v), "i32", dt) if not is_float(dt) else val(dt, bits(int(v), dt))
    return val(dt, bits(v, dt))


def binary_case(op, a, b, note, ulp=None, compute=None, element=None):
    """a, b: ("t", dtype, shape, values) or ("s", kind, value). `compute`
    and `element` replace compute_dtype and elem (ops_math's functions)."""
    compute = compute or compute_dtype
    element = element or elem
    a, b = (("t", x[1], x[2], norm(x[1], x[3])) if x[0] == "t" else x for x in (a, b))
    if a[0] == "t" and b[0] == "t":
        dt = promote(a[1], b[1])
    else:
        t, s = (a, b) if a[0] == "t" else (b, a)
        dt = promote_weak(t[1], s[1])
    args = [T(x[1], x[2], x[3]) if x[0] == "t" else scalar_arg(x[1], x[2]) for x in (a, b)]
    ct, rt = compute(op, dt)
    if ct is None:
        return case(op, args, {"error": rt}, note=note)
    shapes = [x[2] if x[0] == "t" else [] for x in (a, b)]
    out = broadcast(*shapes)
    if out is None:
        return case(op, args, {"error": "cannot be broadcast"}, note=note)
    try:
        ops = []
        for x in (a, b):
            if x[0] == "t":
                ops.append(bcast_values([cast(v, x[1], dt) for v in x[3]], x[2], out))
            else:
                ops.append([weak_scalar_value(x[1], x[2], dt)] * numel(out))
        # `/` converts its (integer) operands once more, to f32.
        ops = [[cast(v, dt, ct) for v in o] for o in ops]
        if numel(out) == 0:
            res = []
        else:
            res = [element(op, ct, x, y) for x, y in zip(*ops)]
    except OpError as e:
        return case(op, args, {"error": str(e)}, note=note)
    if ulp is None:
        ulp = 1 if op == "**" and is_float(ct) else 0
    return case(op, args, T(rt, out, res), ulp=ulp, note=note)


# ---------------------------------------------------------------------------
# Transcendentals, to 110 significant digits.

PREC = 110


def make_pi():
    with localcontext() as ctx:
        ctx.prec = 1310

        def arctan_inv(n):
            x = D(1) / n
            x2 = x * x
            term, total, k = x, x, 1
            while True:
                term *= -x2
                t = term / (2 * k + 1)
                if abs(t) < D(10) ** -1305:
                    return total
                total += t
                k += 1

        return 4 * (4 * arctan_inv(5) - arctan_inv(239))


PI = make_pi()


def d_exp(x):
    if x > 800:
        return INF
    if x < -800:
        return 0.0
    with localcontext() as ctx:
        ctx.prec = PREC
        return Q(D(x).exp())


def d_ln(d):
    with localcontext() as ctx:
        ctx.prec = PREC
        return Q(d.ln())


def t_exp(x):
    if math.isnan(x):
        return NAN
    if math.isinf(x):
        return INF if x > 0 else 0.0
    return d_exp(x)


def t_log(x):
    if math.isnan(x) or x < 0:
        return NAN
    if x == 0:
        return -INF
    if math.isinf(x):
        return INF
    return d_ln(D(x))


def t_log1p(x):
    if math.isnan(x) or x < -1:
        return NAN
    if x == -1:
        return -INF
    if math.isinf(x):
        return INF
    if x == 0:
        return x
    if abs(x) < 1e-30:
        q = Q(x)
        return q - q * q / 2 + q**3 / 3
    with localcontext() as ctx:
        ctx.prec = 400  # 1 + x exact enough for any x >= 1e-30
        one_plus = D(1) + D(x)
        ctx.prec = PREC
        return Q(one_plus.ln())


def t_expm1(x):
    if math.isnan(x):
        return NAN
    if math.isinf(x):
        return INF if x > 0 else -1.0
    if x == 0:
        return x
    if abs(x) < 1e-30:
        q = Q(x)
        return q + q * q / 2 + q**3 / 6
    if x > 800:
        return INF
    with localcontext() as ctx:
        ctx.prec = PREC + 40
        return Q(D(x).exp() - 1)


def t_sqrt(x):
    if math.isnan(x) or x < 0:
        return NAN
    if x == 0 or math.isinf(x):
        return x
    with localcontext() as ctx:
        ctx.prec = PREC
        return Q(D(x).sqrt())


def t_rsqrt(x):
    if math.isnan(x) or x < 0:
        return NAN
    if x == 0:
        return -INF if neg_zero(x) else INF
    if math.isinf(x):
        return 0.0
    with localcontext() as ctx:
        ctx.prec = PREC
        return Q(1 / D(x).sqrt())


def reduced(x):
    """x - 2πk with |result| ≤ π, to well over 110 digits."""
    with localcontext() as ctx:
        ctx.prec = 1300
        d = D(x)
        k = (d / (2 * PI)).to_integral_value()
        return d - k * 2 * PI


def sin_cos(x):
    r = reduced(x)
    with localcontext() as ctx:
        ctx.prec = PREC + 20
        r = +r
        r2 = r * r
        s, term, k = r, r, 1
        while True:
            term = -term * r2 / ((2 * k) * (2 * k + 1))
            if term == 0 or abs(term) < abs(s) * D(10) ** -(PREC + 15):
                break
            s += term
            k += 1
        c, term, k = D(1), D(1), 1
        while True:
            term = -term * r2 / ((2 * k - 1) * (2 * k))
            if term == 0 or abs(term) < D(10) ** -(PREC + 15):
                break
            c += term
            k += 1
        return s, c


def t_trig(which):
    def fn(x):
        if math.isnan(x) or math.isinf(x):
            return NAN
        if x == 0:
            return 1.0 if which == "cos" else x
        if abs(x) < 1e-30:
            q = Q(x)
            return {"sin": q - q**3 / 6, "cos": 1 - q * q / 2, "tan": q + q**3 / 3}[which]
        s, c = sin_cos(x)
        with localcontext() as ctx:
            ctx.prec = PREC
            return Q({"sin": +s, "cos": +c, "tan": s / c}[which])
    return fn


def t_tanh(x):
    if math.isnan(x):
        return NAN
    if math.isinf(x) or abs(x) > 200:
        return math.copysign(1.0, x) if not math.isinf(x) else math.copysign(1.0, x)
    if x == 0:
        return x
    if abs(x) < 1e-30:
        q = Q(x)
        return q - q**3 / 3
    with localcontext() as ctx:
        ctx.prec = PREC + 40
        e = (2 * D(x)).exp()
        return Q((e - 1) / (e + 1))


def t_sigmoid(x):
    if math.isnan(x):
        return NAN
    if math.isinf(x):
        return 1.0 if x > 0 else 0.0
    if x > 800:
        return 1.0
    if x < -800:
        return 0.0
    with localcontext() as ctx:
        ctx.prec = PREC
        return Q(1 / (1 + (-D(x)).exp()))


TRANSCENDENTAL = {
    "exp": t_exp, "log": t_log, "log1p": t_log1p, "expm1": t_expm1,
    "sqrt": t_sqrt, "rsqrt": t_rsqrt, "sin": t_trig("sin"), "cos": t_trig("cos"),
    "tan": t_trig("tan"), "tanh": t_tanh, "sigmoid": t_sigmoid,
}


def round_half_even(x):
    if math.isnan(x) or math.isinf(x) or x == 0:
        return x
    r = float(round(Q(x)))  # Python rounds Fractions half to even
    return math.copysign(r, x) if r == 0 else r


def keep_unary(name, dt, x):
    """neg abs sign relu square floor ceil round of x (of dtype dt)."""
    if dt == "bool":
        if name == "neg":
            raise OpError("not defined for bool")
        return x
    if dt in INT_BITS:
        r = {"neg": -x, "abs": abs(x), "sign": (x > 0) - (x < 0), "relu": max(x, 0),
             "square": x * x, "floor": x, "ceil": x, "round": x}[name]
        return wrap(r, dt)
    if name == "neg":
        return -x
    if name == "abs":
        return abs(x)
    if name == "sign":
        return float((0 < x) - (x < 0))  # NaN and -0 give +0 (PyTorch)
    if name == "relu":
        return 0.0 if x <= 0 else x  # NaN falls through to x
    if name == "square":
        return f_mul(x, x)
    if math.isnan(x) or math.isinf(x):
        return x
    r = {"floor": math.floor, "ceil": math.ceil}.get(name)
    y = float(r(x)) if r else round_half_even(x)
    return math.copysign(y, x) if y == 0 else y


KEEP = ("neg", "abs", "sign", "relu", "square", "floor", "ceil", "round")
PRED = ("isnan", "isinf", "isfinite")


def unary_case(name, dt, shape, values, note):
    values = norm(dt, values)
    args = [T(dt, shape, values)]
    try:
        if name in TRANSCENDENTAL:
            rt = float_result(dt)
            res = [TRANSCENDENTAL[name](cast(v, dt, rt) if is_float(rt) else v) for v in values]
            # sqrt is correctly rounded (IEEE); the others are within an ulp.
            return case(name, args, T(rt, shape, res), ulp=0 if name == "sqrt" else 1, note=note)
        if name in PRED:
            fn = {"isnan": math.isnan, "isinf": math.isinf, "isfinite": math.isfinite}[name]
            res = [int(fn(float(v))) for v in values]
            return case(name, args, T("bool", shape, res), note=note)
        res = [keep_unary(name, dt, v) for v in values]
        return case(name, args, T(dt, shape, res), note=note)
    except OpError as e:
        return case(name, args, {"error": str(e)}, note=note)


# ---------------------------------------------------------------------------
# The cases.

def binary_cases(rng):
    cases = []
    for dt in ALL:
        sp = specials_for(dt)
        # Every pair of special values, as two equal-shape vectors.
        xs = [a for a in sp for _ in sp]
        ys = [b for _ in sp for b in sp]
        rx = random_floats(dt, 24, rng) if is_float(dt) else random_ints(dt, 24, rng)
        ry = random_floats(dt, 24, rng) if is_float(dt) else random_ints(dt, 24, rng)
        for op in BINARY:
            a, b = xs, ys
            if dt in INT_BITS and op == "**":
                # Keep integer powers to small exponents and no negatives
                # here (the error has its own case).
                b = [abs(v) % 12 for v in ys]
            if dt in INT_BITS and op in ("<<", ">>"):
                b = [abs(v) % (INT_BITS[dt] + 3) for v in ys]
            if dt in INT_BITS and op in ("//", "%"):
                b = [v if v != 0 else 5 for v in ys]
            n = len(a)
            cases.append(binary_case(op, ("t", dt, [n], a), ("t", dt, [n], b),
                                     f"{dt} {op}: every pair of special values"))
            c, d = rx, ry
            if dt in INT_BITS and op == "**":
                d = [abs(v) % 9 for v in ry]
            if dt in INT_BITS and op in ("<<", ">>"):
                d = [abs(v) % 40 for v in ry]
            if dt in INT_BITS and op in ("//", "%"):
                d = [v if v != 0 else -3 for v in ry]
            if is_float(dt) and op == "**":
                c = [abs(v) for v in rx]
                d = [v / 1000 for v in ry]
            cases.append(binary_case(op, ("t", dt, [4, 6], c), ("t", dt, [4, 6], d),
                                     f"{dt} {op}: random values, rank 2"))
    return cases


def broadcast_cases(rng):
    cases = []
    shapes = [
        ([2, 3], [3], "a row against a matrix"),
        ([2, 1], [1, 3], "a column against a row"),
        ([3, 1, 2], [4, 1], "rank 3 against rank 2"),
        ([], [4], "rank 0 against rank 1"),
        ([], [], "two rank-0 tensors"),
        ([1], [2, 2], "a one-element tensor against a matrix"),
        ([0, 3], [3], "an empty result"),
        ([0], [1], "an empty tensor against a one-element one"),
        ([2, 3], [4], "mismatched shapes are an error naming both"),
        ([2, 3], [3, 2], "mismatched shapes are an error naming both"),
    ]
    for dt in ("i32", "f32", "bf16", "f64"):
        for sa, sb, why in shapes:
            for op in ("+", "*", "<", "maximum", "-"):
                gen = (lambda n: random_floats(dt, n, rng, -2, 2)) if is_float(dt) else (lambda n: random_ints(dt, n, rng))
                a = gen(numel(sa))
                b = gen(numel(sb))
                c1 = binary_case(op, ("t", dt, sa, a), ("t", dt, sb, b), f"{dt} {op}: {why}")
                if "error" in c1["expect"]:
                    c1["expect"] = {"error": "[" + ", ".join(map(str, sa)) + "]"}
                cases.append(c1)
                c2 = binary_case(op, ("t", dt, sb, b), ("t", dt, sa, a), f"{dt} {op}: {why}, swapped")
                if "error" in c2["expect"]:
                    c2["expect"] = {"error": "[" + ", ".join(map(str, sa)) + "]"}
                cases.append(c2)
    return cases


def promotion_cases(rng):
    """Every pair of dtypes: the result dtype and the operand conversion."""
    cases = []
    vals = {
        "bool": [0, 1, 1, 0],
        "i8": [-128, 7, 127, -3],
        "i32": [16777217, -100000, 257, 3],  # not all exact in f32/bf16/f16
        "bf16": [1.5, -0.375, 256.0, 3.0],
        "f16": [1.5, 0.0999755859375, -2048.0, 3.0],
        "f32": [1.5, 0.1, -1e10, 3.0],
        "f64": [1.5, 0.1, -1e300, 3.0],
    }
    for a in ALL:
        for b in ALL:
            x = [val(a, bits(v, a)) if is_float(a) else v for v in vals[a]]
            y = [val(b, bits(v, b)) if is_float(b) else v for v in vals[b]]
            for op in ("+", "*", "/", "<", "maximum", "//"):
                cases.append(binary_case(op, ("t", a, [4], x), ("t", b, [4], y),
                                         f"promotion {a} {op} {b} -> {promote(a, b)}"))
    return cases


def weak_scalar_cases(rng):
    cases = []
    scalars = [
        ("int", 2), ("int", -3), ("int", 0), ("int", 127), ("int", -129), ("int", 300),
        ("int", 2**31), ("int", (1 << 60) + (1 << 36) + 1), ("int", 16777217), ("int", 257),
        ("float", 0.5), ("float", 0.1), ("float", -2.75), ("float", 1e300), ("float", NAN),
        ("float", -INF), ("float", -0.0), ("bool", True), ("bool", False),
    ]
    for dt in ALL:
        x = specials_for(dt)[:10] if is_float(dt) else specials_for(dt)
        for kind, s in scalars:
            for op in ("+", "*", "-", "/", "<", "==", "maximum", "**", "//", "%", "&", "<<"):
                if op == "**" and kind == "int" and abs(s) > 300:
                    continue
                if op in ("//", "%") and s == 0:
                    continue
                xv = x
                if op == "<<" and dt in INT_BITS:
                    xv = [v for v in x]
                cases.append(binary_case(op, ("t", dt, [len(xv)], xv), ("s", kind, s),
                                         f"{dt} {op} weak {kind} scalar {s!r}"))
            cases.append(binary_case("-", ("s", kind, s), ("t", dt, [len(x)], x),
                                     f"weak {kind} scalar {s!r} - {dt} (scalar on the left)"))
            cases.append(binary_case("//", ("s", kind, s), ("t", dt, [len(x)], [v if v != 0 else 1 for v in x]),
                                     f"weak {kind} scalar {s!r} // {dt} (scalar on the left)"))
    return cases


def error_cases():
    cases = []
    for op in ("&", "|", "^"):
        cases.append(binary_case(op, ("t", "f32", [2], [1.0, 2.0]), ("t", "f32", [2], [1.0, 3.0]),
                                 "bitwise on floats is an error"))
    for dt in ("f64", "bool"):
        for op in ("<<", ">>"):
            cases.append(binary_case(op, ("t", dt, [2], [1, 0]), ("t", dt, [2], [1, 1]),
                                     f"shifts on {dt} are an error"))
    for op in ("-", "/", "//", "%", "**"):
        cases.append(binary_case(op, ("t", "bool", [2], [1, 0]), ("t", "bool", [2], [1, 1]),
                                 "two bool tensors: an error (spec §4.1)"))
        cases.append(binary_case(op, ("t", "bool", [2], [1, 0]), ("s", "bool", True),
                                 "a bool tensor and a Bool: an error"))
    for dt in INTS:
        cases.append(binary_case("//", ("t", dt, [3], [1, 2, 3]), ("t", dt, [3], [1, 0, 1]), "integer // 0"))
        cases.append(binary_case("%", ("t", dt, [3], [1, 2, 3]), ("s", "int", 0), "integer % 0"))
        cases.append(binary_case("**", ("t", dt, [3], [1, 2, 3]), ("t", dt, [3], [1, -1, 1]),
                                 "an integer to a negative power (NumPy raises)"))
        cases.append(binary_case("<<", ("t", dt, [3], [1, 2, 3]), ("s", "int", -1), "a negative shift count"))
        cases.append(binary_case(">>", ("t", dt, [3], [1, 2, 3]), ("t", dt, [3], [1, -2, 1]),
                                 "a negative shift count"))
        # A divisor that is never used (empty result) is no error.
        cases.append(binary_case("//", ("t", dt, [0, 3], []), ("t", dt, [3], [0, 0, 0]),
                                 "an empty result divides nothing"))
    # Integer // 0 is an error, float // 0 is IEEE.
    cases.append(binary_case("//", ("t", "i32", [2], [3, -3]), ("s", "float", 0.0),
                             "i32 // 0.0 computes in f32: inf, not an error"))
    return cases


def where_cases(rng):
    cases = []

    def add(cond_shape, cond, a, b, note):
        # a, b: ("t", dt, shape, values) or ("s", kind, value)
        a, b = (("t", x[1], x[2], norm(x[1], x[3])) if x[0] == "t" else x for x in (a, b))
        if a[0] == "t" and b[0] == "t":
            dt = promote(a[1], b[1])
        elif a[0] == "t" or b[0] == "t":
            t, s = (a, b) if a[0] == "t" else (b, a)
            dt = promote_weak(t[1], s[1])
        else:
            dt = "bool" if a[1] == b[1] == "bool" else "f64"
        args = [T("bool", cond_shape, cond)] + [T(x[1], x[2], x[3]) if x[0] == "t" else scalar_arg(x[1], x[2])
                                                 for x in (a, b)]
        shapes = [x[2] if x[0] == "t" else [] for x in (a, b)]
        out = broadcast(shapes[0], shapes[1])
        out = broadcast(cond_shape, out) if out is not None else None
        if out is None:
            cases.append(case("where", args, {"error": "cannot be broadcast"}, note=note))
            return
        try:
            vs = []
            for x in (a, b):
                if x[0] == "t":
                    vs.append(bcast_values([cast(v, x[1], dt) for v in x[3]], x[2], out))
                elif dt in ("bool",) or (not is_float(dt) and x[1] == "bool"):
                    vs.append([int(x[2])] * numel(out))
                elif a[0] == "s" and b[0] == "s":
                    vs.append([float(x[2])] * numel(out))
                else:
                    vs.append([weak_scalar_value(x[1], x[2], dt)] * numel(out))
        except OpError as e:
            cases.append(case("where", args, {"error": str(e)}, note=note))
            return
        cs = bcast_values(cond, cond_shape, out)
        res = [p if c else q for c, p, q in zip(cs, *vs)]
        cases.append(case("where", args, T(dt, out, res), note=note))

    fl = lambda dt, n: random_floats(dt, n, rng, -2, 2)
    add([4], [1, 0, 1, 0], ("t", "f32", [4], fl("f32", 4)), ("t", "f32", [4], fl("f32", 4)), "same shapes")
    add([2, 1], [1, 0], ("t", "f64", [3], fl("f64", 3)), ("t", "f64", [2, 3], fl("f64", 6)), "broadcast all three")
    add([3], [0, 1, 1], ("t", "bf16", [3], fl("bf16", 3)), ("t", "f16", [3], fl("f16", 3)), "bf16 with f16 -> f32")
    add([3], [0, 1, 1], ("t", "i8", [3], [1, -2, 3]), ("t", "i32", [3], [100000, 5, -6]), "i8 with i32 -> i32")
    add([3], [0, 1, 1], ("t", "i32", [3], [16777217, 2, 3]), ("t", "f32", [3], [0.5, 0.25, 0.125]),
        "i32 with f32 -> f32, the i32 rounded")
    add([3], [1, 0, 1], ("t", "bf16", [3], fl("bf16", 3)), ("s", "float", 0.1), "a weak F64 takes bf16 (0.1 rounded)")
    add([3], [1, 0, 1], ("s", "int", 7), ("t", "i8", [3], [1, 2, 3]), "a weak Int takes i8")
    add([3], [1, 0, 1], ("s", "int", 300), ("t", "i8", [3], [1, 2, 3]), "an Int that does not fit i8")
    add([3], [1, 0, 1], ("s", "float", 0.5), ("t", "i32", [3], [1, 2, 3]), "F64 with i32 -> f32")
    add([3], [1, 0, 1], ("s", "float", 0.5), ("s", "int", 2), "two host numbers -> f64")
    add([3], [1, 0, 1], ("s", "bool", True), ("s", "bool", False), "two Bools -> bool")
    add([2, 2], [1, 0, 0, 1], ("t", "f32", [2, 2], [NAN, -0.0, INF, 1.0]), ("s", "float", NAN), "NaN and -0 pass through")
    add([], [1], ("t", "f32", [2], [1.0, 2.0]), ("t", "f32", [2], [3.0, 4.0]), "a rank-0 condition")
    add([0], [], ("t", "f32", [0], []), ("s", "float", 1.0), "empty")
    add([3], [1, 0, 1], ("t", "f32", [2], [1.0, 2.0]), ("t", "f32", [3], [1.0, 2.0, 3.0]), "shape mismatch")
    cases.append(case("where", [T("f32", [2], [1.0, 0.0]), T("f32", [2], [1.0, 2.0]), T("f32", [2], [3.0, 4.0])],
                      {"error": "bool condition"}, note="the condition must be bool"))
    cases.append(case("where", [T("i32", [2], [1, 0]), {"i": 1}, {"i": 2}],
                      {"error": "bool condition"}, note="an integer condition is not accepted"))
    return cases


def clip_cases(rng):
    cases = []

    def add(dt, values, lo, hi, note, as_kw=True, shape=None):
        shape = [len(values)] if shape is None else shape
        values = norm(dt, values)
        args = [T(dt, shape, values)]
        kw = {}
        pos = []
        for name, bound in (("lo", lo), ("hi", hi)):
            if bound is None:
                continue
            arg = scalar_arg(bound[0], bound[1])
            if as_kw:
                kw[name] = arg
            else:
                pos.append(arg)
        if not as_kw and lo is None:
            raise ValueError("positional hi needs lo")
        try:
            res = []
            for v in values:
                r = v
                if lo is not None:
                    if promote_weak(dt, lo[0]) != dt:
                        raise OpError("keeps the dtype")
                    b = weak_scalar_value(lo[0], lo[1], dt)
                    r = (f_max(r, b) if is_float(dt) else max(r, b))
                if hi is not None:
                    if promote_weak(dt, hi[0]) != dt:
                        raise OpError("keeps the dtype")
                    b = weak_scalar_value(hi[0], hi[1], dt)
                    r = (f_min(r, b) if is_float(dt) else min(r, b))
                res.append(r)
            expect = T(dt, shape, res)
        except OpError as e:
            expect = {"error": str(e)}
        cases.append(case("clip", args + pos, expect, kwargs=kw, note=note))

    for dt in FLOATS:
        sp = special_floats(dt)
        add(dt, sp, ("float", -1.0), ("float", 2.0), f"{dt}: both bounds as keywords, NaN propagates")
        add(dt, sp, ("float", -1.0), ("float", 2.0), f"{dt}: both bounds positional", as_kw=False)
        add(dt, sp, ("float", 0.0), None, f"{dt}: lo only (a relu that keeps NaN)")
        add(dt, sp, None, ("int", 1), f"{dt}: hi only, an Int bound")
        add(dt, sp, ("float", NAN), None, f"{dt}: a NaN bound propagates")
        add(dt, sp, ("float", 3.0), ("float", -3.0), f"{dt}: lo > hi gives hi everywhere")
        add(dt, sp, ("float", 0.1), ("float", 0.3), f"{dt}: bounds rounded into {dt} first")
        add(dt, sp[:6], ("float", -0.0), ("float", 0.0), f"{dt}: signed zero bounds")
    for dt in INTS:
        sp = specials_for(dt)
        add(dt, sp, ("int", -5), ("int", 5), f"{dt}: Int bounds keep {dt}")
        add(dt, sp, ("int", -500), None, f"{dt}: an Int bound that does not fit")
        add(dt, sp, ("float", 0.5), None, f"{dt}: an F64 bound cannot keep {dt}")
        add(dt, sp, None, None, f"{dt}: no bounds is the identity")
    add("bool", [0, 1, 1], ("bool", True), None, "bool: a Bool bound")
    add("bool", [0, 1, 1], ("int", 0), None, "bool: an Int bound would need i32")
    add("f32", [], ("float", 0.0), ("float", 1.0), "empty", shape=[0, 2])
    add("f64", [-3.0], ("float", 0.0), ("float", 1.0), "rank 0", shape=[])
    add("f32", [-3.0, 0.5, 9.0, 2.0, NAN, -INF], ("int", 0), ("int", 1), "rank 2", shape=[2, 3])
    return cases


def maxmin_function_cases(rng):
    """maximum/minimum through the table (function form), incl. keywords."""
    cases = []
    for name, op in (("maximum", "maximum"), ("minimum", "minimum")):
        c = binary_case(op, ("t", "f32", [3], [NAN, -0.0, 2.0]), ("t", "f32", [3], [1.0, 0.0, NAN]),
                        f"{name}: NaN propagates, -0 < +0")
        c["args"] = []
        c["kwargs"] = {"a": T("f32", [3], [NAN, -0.0, 2.0]), "b": T("f32", [3], [1.0, 0.0, NAN])}
        c["note"] += " (keywords)"
        cases.append(c)
        cases.append(binary_case(op, ("s", "float", 0.5), ("t", "bf16", [2], [0.25, 1.0]),
                                 f"{name}: a weak scalar first"))
        c = binary_case(op, ("t", "i32", [2], [1, 2]), ("t", "i32", [2], [2, 1]), f"{name}: i32")
        cases.append(c)
        cases.append(case(name, [{"f": f(1.0)["f"]}, {"f": f(2.0)["f"]}], {"error": "at least one tensor"},
                          note=f"{name} of two host numbers is not a tensor operation"))
        cases.append(case(name, [T("f32", [1], [1.0]), {"ints": [1, 2]}], {"error": "must be a tensor or a number"},
                          note=f"{name}: an Arr operand"))
    return cases


def unary_cases(rng):
    cases = []
    names = KEEP + tuple(TRANSCENDENTAL) + PRED
    for name in names:
        for dt in ALL:
            vals = specials_for(dt)
            cases.append(unary_case(name, dt, [len(vals)], vals, f"{name} of {dt} special values"))
            if is_float(dt):
                lo, hi = {"exp": (-2, 1.9), "expm1": (-3, 1.9), "sinh": (-2, 2)}.get(name, (-4, 4))
                if dt == "f16" and name in ("exp", "expm1"):
                    hi = 0.9
                r = random_floats(dt, 24, rng, lo, hi)
                if name in ("log", "sqrt", "rsqrt"):
                    r = [abs(v) for v in r]
                if name == "log1p":
                    r = [abs(v) - (0.5 if i % 3 == 0 else 0) for i, v in enumerate(r)]
                    r = [val(dt, bits(v, dt)) for v in r]
                if name == "round":
                    r = [val(dt, bits(v, dt)) for v in [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 1e6 + 0.5, -0.49999997]] + r
                cases.append(unary_case(name, dt, [len(r) // 3, 3] if len(r) % 3 == 0 else [len(r)], r,
                                        f"{name} of random {dt} values"))
            else:
                r = random_ints(dt, 12, rng)
                cases.append(unary_case(name, dt, [3, 4], r, f"{name} of random {dt} values"))
        cases.append(unary_case(name, "f32", [0, 2], [], f"{name} of an empty tensor"))
        cases.append(unary_case(name, "f64", [], [-0.75], f"{name} of a rank-0 tensor"))
        cases.append(case(name, [{"ints": [1, 2]}], {"error": "must be a tensor"}, note=f"{name} of an Arr"))
    # Transcendentals of small integers promote to f32.
    for name in TRANSCENDENTAL:
        cases.append(unary_case(name, "i32", [5], [0, 1, 2, 16777217, -1], f"{name} of i32 -> f32"))
    # Large trig arguments exercise the argument reduction.
    for name in ("sin", "cos", "tan"):
        cases.append(unary_case(name, "f64", [6], [1e22, 1e300, -1e10, 3.141592653589793, 1e-300, 710.0],
                                f"{name} of large f64 arguments"))
        cases.append(unary_case(name, "f32", [4], [3.0e38, 1e8, 12345.678, -1e5], f"{name} of large f32 arguments"))
    # exp and sigmoid near the ends of their ranges.
    cases.append(unary_case("exp", "f32", [8], [-87.5, -100.0, -104.0, 88.0, 80.0, 1e-10, -1e-45, 88.5],
                            "exp of f32 into the subnormals and near overflow"))
    cases.append(unary_case("exp", "f64", [5], [-745.0, -740.0, 709.0, -1e-300, 1e-17],
                            "exp of f64 near the ends"))
    cases.append(unary_case("sigmoid", "f64", [6], [-740.0, -745.5, -40.0, 40.0, 1e-300, -1000.0],
                            "sigmoid far out: e^x / (1 + e^x) stays subnormal, never 0/NaN"))
    cases.append(unary_case("sigmoid", "f32", [4], [-100.0, -88.0, 17.0, 20.0], "sigmoid of f32 far out"))
    cases.append(unary_case("abs", "i8", [2], [-128, -127], "abs(i8 -128) wraps to -128"))
    cases.append(unary_case("neg", "i8", [2], [-128, 127], "neg(i8 -128) wraps to -128"))
    cases.append(unary_case("square", "i8", [3], [16, 12, -128], "square wraps"))
    return cases


def main():
    rng = np.random.default_rng(0x656C656D)  # "elem"
    cases = []
    cases += binary_cases(rng)
    cases += broadcast_cases(rng)
    cases += promotion_cases(rng)
    cases += weak_scalar_cases(rng)
    cases += error_cases()
    cases += where_cases(rng)
    cases += clip_cases(rng)
    cases += maxmin_function_cases(rng)
    cases += unary_cases(rng)
    opslib.write("elementwise", cases, __doc__.split("\n\n")[0] + "\n\n" + "tools/oracle/.venv/bin/python tools/oracle/ops_elementwise.py (numpy " + np.__version__ + ")")


if __name__ == "__main__":
    main()
