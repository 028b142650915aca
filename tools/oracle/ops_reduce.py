"""Writes testdata/vectors/ops_reduce.jsonl: the reductions, scans and
normalisers of spec §4.1 (sum mean prod max min median var std argmax
argmin all any logsumexp cumsum cumprod softmax log_softmax), for
crates/tensor/tests/ops_oracle.rs.

    tools/oracle/.venv/bin/python tools/oracle/ops_reduce.py

The reference is written from the text of spec §5 (extensions 2, 4 and 5)
and shares nothing with the Rust kernels:

* Every accumulation step is exact rational arithmetic (fractions.Fraction)
  rounded once into the accumulation dtype by opslib's exact
  round-to-nearest-even (the seed's acc_add). The fixed order is spelled
  out literally: blocks of 16384, lists of the elements of each of the 16
  lanes, a pairwise tree over the non-empty lanes, blocks folded in order.
* The derived arithmetic that the spec puts "in f64" (a mean's division,
  x - mu, its square, the divisor of var, sqrt, x - m) is Python float
  arithmetic, which is IEEE binary64 with round-to-nearest-even.
* exp and log are spec §5.6's "one fixed implementation": FreeBSD's
  e_exp.c and e_log.c, which twill's math.rs takes from the libm crate,
  restated below in Python floats (IEEE binary64, so the same bits). Every
  call is checked against the correctly rounded value (the decimal module
  at 60 digits) and must be within 1 ulp of it, which is the accuracy the
  spec promises. Using the fixed implementation's bits rather than the
  correctly rounded ones is what lets these cases be bit-exact: softmax,
  log_softmax and logsumexp amplify a 1-ulp difference in one exp into
  many ulps of an f64 result (log s for s near 1).
* Where PyTorch is normative (spec §5 extension 5) the rule is implemented
  here and named in the case's note: max/min/median propagate NaN,
  argmax/argmin name the first NaN, the median of an even count is the
  lower middle, softmax of an all -inf row is NaN and logsumexp of it -inf.

Deterministic: numpy's PCG64 with fixed seeds.
"""
import functools
import math
import struct
import sys
from decimal import Decimal, localcontext
from fractions import Fraction as Q
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import opslib  # noqa: E402
from opslib import case, tensor_from_values  # noqa: E402

BLOCK = 16384
LANES = 16
FLOATS = ("bf16", "f16", "f32", "f64")
INTS = ("bool", "i8", "i32")
ALL = INTS + FLOATS
NAN = float("nan")
INF = float("inf")

RNG = np.random.Generator(np.random.PCG64(0x7477696C6C5F7264))  # "twill_rd"


# ---------------------------------------------------------------------------
# Exact arithmetic in a dtype


def rnd(dt, v):
    """v (an int, Fraction or float) rounded once into float dtype dt, as a
    Python float (exact: every dtype's values are f64 values)."""
    if isinstance(v, float) and (v != v or v in (INF, -INF)):
        return v
    if isinstance(v, float) and v == 0:
        return v
    return float(opslib.value_of_bits(opslib.bits_of_value(v if not isinstance(v, int) else Q(v), dt), dt))


def signbit(x):
    return math.copysign(1.0, x) < 0


def add(dt, a, b):
    """a + b rounded once into dt (i32: wrapping)."""
    if dt == "i32":
        return (a + b + 2**31) % 2**32 - 2**31
    if not (math.isfinite(a) and math.isfinite(b)):
        return a + b  # IEEE on infinities and NaN, exact
    s = Q(a) + Q(b)
    if s == 0:
        # An exact zero sum is +0 in round-to-nearest, unless both are -0.
        return -0.0 if (signbit(a) and signbit(b)) else 0.0
    return rnd(dt, s)


def mul(dt, a, b):
    if dt == "i32":
        return (a * b + 2**31) % 2**32 - 2**31
    if not (math.isfinite(a) and math.isfinite(b)):
        return a * b
    p = Q(a) * Q(b)
    if p == 0:
        return -0.0 if signbit(a) != signbit(b) else 0.0
    return rnd(dt, p)


def fdiv(a, b):
    """IEEE f64 division, including by zero."""
    if b == 0:
        if a != a or a == 0:
            return NAN
        return INF if signbit(a) == signbit(b) else -INF
    return a / b


def cr_exp(x):
    """exp(x) correctly rounded to f64 (finite x in the normal range)."""
    with localcontext() as ctx:
        ctx.prec = 60
        return float(Decimal(x).exp())


def cr_log(x):
    """log(x) correctly rounded to f64 (finite x > 0)."""
    with localcontext() as ctx:
        ctx.prec = 60
        return float(Decimal(x).ln())


def within_one_ulp(got, want, what):
    assert got == want or math.nextafter(want, got) == got, (what, got, want)


def bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def from_bits(b):
    return struct.unpack("<d", struct.pack("<Q", b))[0]


def scalbn(x, n):
    """libm's generic scalbn for f64: the pre-scaling steps, then one
    multiplication by 2^n."""
    if n > 1023:
        x *= 2.0**1023
        n -= 1023
        if n > 1023:
            x *= 2.0**1023
            n -= 1023
            n = min(n, 1023)
    elif n < -1022:
        mul = math.ldexp(1.0, -1022) * 2.0**53
        x *= mul
        n += 969
        if n < -1022:
            x *= mul
            n += 969
            n = max(n, -1022)
    return x * math.ldexp(1.0, n)


LN2HI = from_bits(0x3FE62E42FEE00000)
LN2LO = from_bits(0x3DEA39EF35793C76)
INVLN2 = from_bits(0x3FF71547652B82FE)
EP = [from_bits(b) for b in (0x3FC555555555553E, 0xBF66C16C16BEBD93, 0x3F11566AAF25DE2C, 0xBEBBBD41C5D26BF1, 0x3E66376972BEA4D0)]
LG = [from_bits(b) for b in (0x3FE5555555555593, 0x3FD999999997FA04, 0x3FD2492494229359, 0x3FCC71C51D8E78AF, 0x3FC7466496CB03DE, 0x3FC39A09D078C69F, 0x3FC2F112DF3E5244)]


@functools.lru_cache(maxsize=None)
def fixed_exp(x):
    """FreeBSD e_exp.c (libm's exp), operation for operation."""
    hx = (bits(x) >> 32) & 0x7FFFFFFF
    sign = bits(x) >> 63
    if hx >= 0x4086232B:
        if x != x:
            return x
        if x > 709.782712893383973096:
            return INF
        if x < -745.13321910194110842:
            return 0.0
    if hx > 0x3FD62E42:
        if hx >= 0x3FF0A2B2:
            k = int(INVLN2 * x + (-0.5 if sign else 0.5))  # truncates, as `as i32`
        else:
            k = 1 - sign - sign
        hi = x - k * LN2HI
        lo = k * LN2LO
        r = hi - lo
    elif hx > 0x3E300000:
        k, hi, lo, r = 0, x, 0.0, x
    else:
        return 1.0 + x
    xx = r * r
    c = r - xx * (EP[0] + xx * (EP[1] + xx * (EP[2] + xx * (EP[3] + xx * EP[4]))))
    y = 1.0 + (r * c / (2.0 - c) - lo + hi)
    out = y if k == 0 else scalbn(y, k)
    if math.isfinite(x) and -708 < x < 709:
        within_one_ulp(out, cr_exp(x), ("exp", x))
    return out


@functools.lru_cache(maxsize=None)
def fixed_log(x):
    """FreeBSD e_log.c (libm's log), operation for operation."""
    ui = bits(x)
    hx = ui >> 32
    k = 0
    if hx < 0x00100000 or hx >> 31:
        if (ui << 1) & 0xFFFFFFFFFFFFFFFF == 0:
            return -INF
        if hx >> 31:
            return NAN
        k -= 54
        x *= 2.0**54
        ui = bits(x)
        hx = ui >> 32
    elif hx >= 0x7FF00000:
        return x
    elif hx == 0x3FF00000 and ui & 0xFFFFFFFF == 0:
        return 0.0
    hx += 0x3FF00000 - 0x3FE6A09E
    k += (hx >> 20) - 0x3FF
    hx = (hx & 0x000FFFFF) + 0x3FE6A09E
    xr = from_bits((hx << 32) | (ui & 0xFFFFFFFF))
    f = xr - 1.0
    hfsq = 0.5 * f * f
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    t1 = w * (LG[1] + w * (LG[3] + w * LG[5]))
    t2 = z * (LG[0] + w * (LG[2] + w * (LG[4] + w * LG[6])))
    r = t2 + t1
    dk = float(k)
    out = s * (hfsq + r) + dk * LN2LO - hfsq + f + dk * LN2HI
    within_one_ulp(out, cr_log(x), ("log", x))
    return out


def acc_dtype(dt):
    return {"bf16": "f32", "f16": "f32", "f32": "f32", "f64": "f64"}.get(dt, "i32")


def sum_result(dt):
    return dt if dt in FLOATS else "i32"


def float_result(dt):
    return dt if dt in FLOATS else "f32"


def as_number(dt, v):
    """An element as the integer (bool, i8, i32) or float it is."""
    if dt == "bool":
        return int(v)
    return v


def promoted(dt, v):
    """An element as operations with float_result see it: integers become
    f32 (one rounding), floats stay."""
    if dt in FLOATS:
        return v
    return rnd("f32", int(v))


# ---------------------------------------------------------------------------
# The fixed order (spec §5 extension 4), spelled out


def fixed_fold(vals, op, empty):
    if not vals:
        return empty
    results = []
    for start in range(0, len(vals), BLOCK):
        block = vals[start : start + BLOCK]
        lanes = [block[j::LANES] for j in range(LANES)]
        level = []
        for lane in lanes:
            if lane:
                acc = lane[0]
                for v in lane[1:]:
                    acc = op(acc, v)
                level.append(acc)
        while len(level) > 1:
            level = [
                op(level[i], level[i + 1]) if i + 1 < len(level) else level[i]
                for i in range(0, len(level), 2)
            ]
        results.append(level[0])
    total = results[0]
    for r in results[1:]:
        total = op(total, r)
    return total


def ref_sum(dt, row, product=False):
    a = acc_dtype(dt)
    vals = [as_number(dt, v) for v in row]
    f = (lambda x, y: mul(a, x, y)) if product else (lambda x, y: add(a, x, y))
    acc = fixed_fold(vals, f, 1 if product else 0)
    if a == "i32":
        return acc
    return rnd(sum_result(dt), float(acc))


def ref_prod(dt, row):
    return ref_sum(dt, row, product=True)


def float_acc(dt, row):
    a = acc_dtype(dt) if dt in FLOATS else "f32"
    vals = [promoted(dt, v) for v in row]
    return a, vals


def ref_mean(dt, row):
    a, vals = float_acc(dt, row)
    acc = fixed_fold(vals, lambda x, y: add(a, x, y), 0.0)
    return rnd(float_result(dt), fdiv(float(acc), float(len(vals))))


def spread(dt, row, ddof):
    a, vals = float_acc(dt, row)
    n = len(vals)
    acc = fixed_fold(vals, lambda x, y: add(a, x, y), 0.0)
    mu = fdiv(float(acc), float(n))  # not rounded
    d = [rnd(a, (x - mu) * (x - mu)) for x in vals]
    t = fixed_fold(d, lambda x, y: add(a, x, y), 0.0)
    return fdiv(t, float(max(n - ddof, 0)))


def ref_var(dt, row, ddof=0):
    return rnd(float_result(dt), spread(dt, row, ddof))


def ref_std(dt, row, ddof=0):
    v = spread(dt, row, ddof)
    return rnd(float_result(dt), math.sqrt(v) if v == v else v)


def row_max(vals):
    """The value of the maximum; NaN if any element is NaN."""
    if any(v != v for v in vals):
        return NAN
    return max(vals) if vals else -INF


def ref_logsumexp(dt, row):
    a, vals = float_acc(dt, row)
    m = row_max(vals)
    # PyTorch: an infinite maximum shifts by 0 (all -inf gives -inf).
    shift = 0.0 if m in (INF, -INF) else m
    e = [rnd(a, fixed_exp(x - shift)) for x in vals]
    s = fixed_fold(e, lambda x, y: add(a, x, y), 0.0)
    return rnd(float_result(dt), shift + fixed_log(float(s)))


def ref_softmax_row(dt, row, log=False):
    a, vals = float_acc(dt, row)
    m = row_max(vals)
    e = [rnd(a, fixed_exp(x - m)) for x in vals]
    s = float(fixed_fold(e, lambda x, y: add(a, x, y), 0.0))
    r = float_result(dt)
    if log:
        ls = fixed_log(s)
        return [rnd(r, (x - m) - ls) for x in vals]
    return [rnd(r, fdiv(v, s)) for v in e]


def first_index(vals, better):
    """PyTorch: the first NaN, else the first element that no later one
    beats (ties keep the earlier)."""
    best = 0
    for i, v in enumerate(vals):
        if v != v:
            return i
        if better(v, vals[best]):
            best = i
    return best


def ref_max(dt, row):
    return row[first_index([as_number(dt, v) for v in row], lambda u, v: u > v)]


def ref_min(dt, row):
    return row[first_index([as_number(dt, v) for v in row], lambda u, v: u < v)]


def ref_argmax(dt, row):
    return first_index([as_number(dt, v) for v in row], lambda u, v: u > v)


def ref_argmin(dt, row):
    return first_index([as_number(dt, v) for v in row], lambda u, v: u < v)


def ref_median(dt, row):
    vals = [as_number(dt, v) for v in row]
    if not vals or any(v != v for v in vals):
        return NAN
    # A stable ascending sort (-0 and +0 compare equal, so they keep their
    # order), then the lower middle element: PyTorch's median.
    order = sorted(range(len(vals)), key=lambda i: (vals[i], i))
    v = vals[order[(len(vals) - 1) // 2]]
    return v if dt in FLOATS else rnd("f32", int(v))


def ref_all(dt, row):
    return all(as_number(dt, v) != 0 for v in row)


def ref_any(dt, row):
    return any(as_number(dt, v) != 0 for v in row)


def ref_scan(dt, row, product=False):
    a = acc_dtype(dt)
    r = sum_result(dt)
    out = []
    acc = None
    for v in row:
        x = as_number(dt, v)
        if acc is None:
            acc = x
        else:
            acc = mul(a, acc, x) if product else add(a, acc, x)
        out.append(acc if a == "i32" else rnd(r, float(acc)))
    return out


REDUCTIONS = {  # op: (reference, result dtype)
    "sum": (ref_sum, sum_result),
    "prod": (ref_prod, sum_result),
    "mean": (ref_mean, float_result),
    "var": (ref_var, float_result),
    "std": (ref_std, float_result),
    "logsumexp": (ref_logsumexp, float_result),
    "max": (ref_max, lambda d: d),
    "min": (ref_min, lambda d: d),
    "argmax": (ref_argmax, lambda d: "i32"),
    "argmin": (ref_argmin, lambda d: "i32"),
    "median": (ref_median, float_result),
    "all": (ref_all, lambda d: "bool"),
    "any": (ref_any, lambda d: "bool"),
}
SELECTIONS = ("max", "min", "argmax", "argmin")


# ---------------------------------------------------------------------------
# Case construction


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def as_rows(shape, vals, reduced):
    """(rows, kept axes): the elements of each output position in
    row-major order of the reduced axes."""
    nd = len(shape)
    arr = np.empty(len(vals), dtype=object)
    arr[:] = vals
    arr = arr.reshape(shape)
    kept = [i for i in range(nd) if i not in reduced]
    moved = np.transpose(arr, kept + sorted(reduced)) if nd else arr
    m = numel([shape[i] for i in kept])
    n = numel([shape[i] for i in reduced])
    return [list(r) for r in moved.reshape(m, n)], kept


def axis_arg(axis):
    if isinstance(axis, int):
        return {"i": axis}
    if isinstance(axis, tuple):  # an integral f64 rank-1 tensor
        return tensor_from_values("f64", [len(axis)], [float(a) for a in axis])
    return {"ints": list(axis)}


def exact_inputs(dt, vals):
    """The elements as the tensor will hold them: floats rounded into dt."""
    if dt in FLOATS:
        return [rnd(dt, float(v)) for v in vals]
    return vals


def reduction(op, dt, shape, vals, axis=None, keepdim=None, ddof=None, note=""):
    ref, result = REDUCTIONS[op]
    vals = exact_inputs(dt, vals)
    nd = len(shape)
    if axis is None:
        reduced = list(range(nd))
    else:
        axes = [axis] if isinstance(axis, int) else list(axis)
        reduced = sorted({a % nd for a in axes}) if nd else []
    rows, kept = as_rows(shape, vals, reduced)
    kw = {}
    if axis is not None:
        kw["axis"] = axis_arg(axis)
    if keepdim is not None:
        kw["keepdim"] = {"b": keepdim}
    if ddof is not None:
        kw["ddof"] = {"i": ddof}
    if keepdim:
        out_shape = [1 if i in reduced else shape[i] for i in range(nd)]
    else:
        out_shape = [shape[i] for i in kept]
    x = tensor_from_values(dt, shape, vals)
    if op in SELECTIONS and any(len(r) == 0 for r in rows):
        return case(op, [x], {"error": "has no value"}, kw, note=note or "empty selection")
    extra = {"ddof": ddof} if ddof is not None else {}
    out = [ref(dt, r, **extra) for r in rows]
    return case(op, [x], tensor_from_values(result(dt), out_shape, out), kw, 0, note)


def along(op, dt, shape, vals, axis, given=True, note=""):
    """A scan or normaliser along one axis."""
    vals = exact_inputs(dt, vals)
    nd = len(shape)
    ax = axis % nd if nd else 0
    arr = np.empty(len(vals), dtype=object)
    arr[:] = vals
    arr = arr.reshape(shape)
    if nd:
        arr = np.moveaxis(arr, ax, -1)
    moved_shape = arr.shape
    n = moved_shape[-1] if nd else 1
    rows = [list(r) for r in arr.reshape(-1, n)] if n else []
    if op in ("cumsum", "cumprod"):
        out_rows = [ref_scan(dt, r, product=(op == "cumprod")) for r in rows]
        result, ulp = sum_result(dt), 0
    else:
        out_rows = [ref_softmax_row(dt, r, log=(op == "log_softmax")) for r in rows]
        result, ulp = float_result(dt), 0
    out = np.empty(numel(moved_shape), dtype=object)
    out[:] = [v for r in out_rows for v in r]
    out = out.reshape(moved_shape)
    if nd:
        out = np.moveaxis(out, -1, ax)
    kw = {"axis": {"i": axis}} if given else {}
    return case(
        op,
        [tensor_from_values(dt, shape, vals)],
        tensor_from_values(result, list(shape), list(out.reshape(-1))),
        kw,
        ulp,
        note,
    )


# ---------------------------------------------------------------------------
# Inputs


def values(dt, n, scale=4.0, specials=False):
    """n random elements of dt (floats pre-rounded into dt)."""
    if dt == "bool":
        return [bool(b) for b in RNG.integers(0, 2, n)]
    if dt == "i8":
        return [int(v) for v in RNG.integers(-128, 128, n)]
    if dt == "i32":
        return [int(v) for v in RNG.integers(-1000, 1000, n)]
    out = [rnd(dt, float(v)) for v in RNG.standard_normal(n) * scale]
    if specials:
        pool = [NAN, INF, -INF, -0.0, 0.0, smallest_subnormal(dt), -smallest_subnormal(dt)]
        for i in RNG.choice(n, min(n, 3), replace=False):
            out[int(i)] = pool[int(RNG.integers(0, len(pool)))]
    return out


def smallest_subnormal(dt):
    return float(opslib.value_of_bits(1, dt))


def spread_values(dt, n):
    """Magnitudes from 2^-12 to 2^12 with random signs: sums of these are
    sensitive to the order of accumulation."""
    mags = np.exp2(RNG.uniform(-12, 12, n))
    signs = RNG.choice([-1.0, 1.0], n)
    return [rnd(dt, float(m * s)) for m, s in zip(mags, signs)]


def main():
    cases = []
    add_case = cases.append

    # Every reduction, every dtype, the axis forms.
    for op in REDUCTIONS:
        for dt in ALL:
            v = values(dt, 15)
            add_case(reduction(op, dt, [3, 5], v, note="all axes"))
            add_case(reduction(op, dt, [3, 5], v, axis=0, note="axis 0"))
            add_case(reduction(op, dt, [3, 5], v, axis=-1, keepdim=True, note="axis -1, keepdim"))
            v3 = values(dt, 24)
            add_case(reduction(op, dt, [2, 3, 4], v3, axis=[2, 0], note="axes [2, 0] (order irrelevant)"))
            add_case(reduction(op, dt, [2, 3, 4], v3, axis=(1,), keepdim=True, note="axis as an f64 tensor"))
            add_case(reduction(op, dt, [], values(dt, 1), note="rank 0"))
            add_case(reduction(op, dt, [], values(dt, 1), axis=-1, keepdim=True, note="rank 0, axis -1"))
            add_case(reduction(op, dt, [2, 0], [], axis=1, note="empty rows"))
            add_case(reduction(op, dt, [0, 3], [], axis=1, note="no rows"))
            add_case(reduction(op, dt, [0], [], note="empty"))
        for dt in FLOATS:
            for n in (15, 16, 17, 33, 100):
                add_case(reduction(op, dt, [n], values(dt, n, specials=True), note=f"{n} elements with NaN/inf/-0/subnormals"))
            add_case(reduction(op, dt, [37], spread_values(dt, 37), note="order-sensitive magnitudes"))
        # Errors common to every reduction.
        add_case(case(op, [tensor_from_values("f32", [2, 3], [0.0] * 6)], {"error": "out of range"}, {"axis": {"i": 2}}, note="axis out of range"))
        add_case(case(op, [tensor_from_values("f32", [2, 3], [0.0] * 6)], {"error": "out of range"}, {"axis": {"ints": [0, -3]}}, note="axis -3 out of range"))
        add_case(case(op, [tensor_from_values("f32", [2, 3], [0.0] * 6)], {"error": "named twice"}, {"axis": {"ints": [1, -1]}}, note="duplicate axis"))
        add_case(case(op, [tensor_from_values("f32", [], [1.0])], {"error": "out of range"}, {"axis": {"i": 1}}, note="rank 0 has only axis 0/-1"))
        add_case(case(op, [tensor_from_values("f32", [2], [1.0, 2.0])], {"error": "must be a Bool"}, {"keepdim": {"i": 1}}, note="keepdim must be a Bool"))
        add_case(case(op, [tensor_from_values("f32", [2], [1.0, 2.0])], {"error": "Arr[Int]"}, {"axis": opslib.f(0.5)}, note="axis must be integers"))

    # sum / prod: integer accumulation wraps in i32; f32 accumulation of
    # narrow floats; -0 and the lanes' first elements.
    big = 2**31 - 1
    add_case(reduction("sum", "i32", [3], [big, 1, 5], note="i32 sum wraps"))
    add_case(reduction("sum", "i8", [300], [100] * 300, note="i8 sum accumulates in i32: 30000, no i8 wrap"))
    add_case(reduction("sum", "bool", [40], [True] * 40, note="bool sum counts in i32"))
    add_case(reduction("prod", "i8", [6], [100, 100, 100, 100, 100, -3], note="i8 prod wraps in i32"))
    add_case(reduction("prod", "i32", [3], [65536, 65536, 3], note="i32 prod wraps to 0"))
    add_case(reduction("sum", "bf16", [1000], [rnd("bf16", 0.1)] * 1000, note="seed: 1000 x bf16(0.1) accumulates in f32 to 100, not bf16's 32"))
    add_case(reduction("sum", "f16", [3000], [rnd("f16", 0.1)] * 3000, note="f16 accumulates in f32: past f16's 2048-step plateau"))
    add_case(reduction("sum", "f32", [3], [-0.0, -0.0, -0.0], note="-0 sum stays -0 (lanes start from their first element)"))
    add_case(reduction("sum", "f64", [20], [-0.0] * 20, note="-0 across lanes and tree"))
    add_case(reduction("sum", "f32", [2], [INF, -INF], note="inf + -inf = NaN"))
    add_case(reduction("sum", "f32", [2], [3.0e38, 3.0e38], note="f32 overflow to inf"))
    add_case(reduction("sum", "bf16", [2], [rnd("bf16", 3.0e38), rnd("bf16", 3.0e38)], note="bf16 sum to inf: f32 accumulator overflows"))
    add_case(reduction("sum", "f16", [2], [60000.0, 60000.0], note="f16 sum 120000 is beyond f16: inf on store"))
    add_case(reduction("prod", "bf16", [3], [rnd("bf16", 1e30), rnd("bf16", 1e30), rnd("bf16", 1e-30)], note="bf16 prod in f32 overflows at 1e60"))
    add_case(reduction("prod", "f16", [4], [300.0, 300.0, 0.001, 0.001], note="f16 prod in f32 keeps 9e4 exactly enough"))
    add_case(reduction("prod", "f64", [0], [], note="empty prod is 1"))
    add_case(reduction("prod", "i32", [0], [], note="empty integer prod is 1"))
    add_case(reduction("sum", "i8", [2, 0], [], axis=1, note="empty integer sum is 0"))

    # mean / var / std: integer inputs promote to f32; ddof; divisor <= 0.
    add_case(reduction("mean", "i32", [3], [16777217, 16777219, 1], note="i32 promoted to f32 first (16777217 -> 16777216)"))
    add_case(reduction("mean", "bool", [4], [True, True, False, True], note="bool mean in f32"))
    add_case(reduction("mean", "f32", [0], [], note="mean of nothing: 0/0 = NaN"))
    for dt in ("f32", "f64", "bf16", "i8"):
        v = values(dt, 12)
        for ddof in (1, 2, 12, 13, -1):
            add_case(reduction("var", dt, [3, 4], v, axis=1, ddof=ddof, note=f"ddof={ddof} (NumPy: divisor max(n - ddof, 0))"))
            add_case(reduction("std", dt, [3, 4], v, axis=1, ddof=ddof, note=f"ddof={ddof}"))
    add_case(reduction("var", "f32", [1], [5.0], ddof=1, note="one element, ddof=1: 0/0 = NaN"))
    add_case(reduction("std", "f64", [3], [1e300, -1e300, 1.0], note="squares overflow f64: inf"))
    add_case(reduction("var", "f32", [3], [1e20, 1e20, 1e20 + 2**44], note="(x - mu)^2 overflows f32 only on rounding to the accumulator"))
    add_case(case("var", [tensor_from_values("f32", [2], [1.0, 2.0])], {"error": "must be an Int"}, {"ddof": opslib.f(1.5)}, note="ddof must be an Int"))

    # max / min / argmax / argmin: NaN and ties (PyTorch).
    for dt in FLOATS:
        nanv = [1.0, NAN, 3.0, NAN]
        for op in SELECTIONS:
            add_case(reduction(op, dt, [4], nanv, note="PyTorch: NaN propagates / the first NaN is named"))
            add_case(reduction(op, dt, [5], [2.0, -1.0, 2.0, -1.0, 0.5], note="ties: the first is named"))
            add_case(reduction(op, dt, [4], [-0.0, 0.0, 0.0, -0.0], note="-0 and +0 tie: the first wins"))
            add_case(reduction(op, dt, [3], [-INF, -INF, -INF], note="all -inf"))
        add_case(reduction("max", dt, [2, 3], [1.0, NAN, 2.0, 4.0, 5.0, 6.0], axis=1, note="NaN only in row 0"))
    for op in SELECTIONS:
        add_case(reduction(op, "f32", [2, 0], [], axis=1, note="PyTorch/NumPy: empty selection is an error"))
        add_case(reduction(op, "i32", [0, 3], [], axis=0, note="empty selection is an error"))
        add_case(reduction(op, "f32", [0, 3], [], axis=1, note="no outputs: no error"))
        add_case(reduction(op, "bool", [5], [False, True, False, True, False], note="bool"))

    # median: the lower middle of an even count (PyTorch), NaN, ±0.
    for dt in ALL:
        add_case(reduction("median", dt, [4], values(dt, 4), note="even count: the lower middle, no averaging (PyTorch)"))
        add_case(reduction("median", dt, [2, 6], values(dt, 12), axis=1, note="rows of even count"))
    for dt in FLOATS:
        add_case(reduction("median", dt, [5], [3.0, NAN, 1.0, 2.0, 0.5], note="PyTorch: NaN propagates"))
        add_case(reduction("median", dt, [2], [0.0, -0.0], note="+0 and -0 tie: stable order keeps +0 first"))
        add_case(reduction("median", dt, [2], [-0.0, 0.0], note="-0 first"))
    add_case(reduction("median", "i32", [3], [16777217, 16777219, 5], note="integer median rounds once to f32"))

    # all / any.
    for dt in FLOATS:
        add_case(reduction("all", dt, [3], [NAN, 1.0, -1.0], note="NaN is true"))
        add_case(reduction("any", dt, [3], [-0.0, 0.0, -0.0], note="-0 is false"))
    add_case(reduction("all", "bool", [0], [], note="all of nothing is true"))
    add_case(reduction("any", "bool", [0], [], note="any of nothing is false"))

    # logsumexp: infinities (PyTorch shifts an infinite max by 0).
    for dt in FLOATS:
        add_case(reduction("logsumexp", dt, [3], [-INF, -INF, -INF], note="all -inf gives -inf"))
        add_case(reduction("logsumexp", dt, [3], [INF, 1.0, -INF], note="PyTorch: +inf gives +inf"))
        add_case(reduction("logsumexp", dt, [3], [NAN, 1.0, 2.0], note="NaN"))
        add_case(reduction("logsumexp", dt, [3], [80.0, 80.0, 79.0], note="shifted by the max: no overflow"))
        add_case(reduction("logsumexp", dt, [3], [-120.0, -121.0, -200.0], note="large negatives"))

    # Reduced axes followed by kept ones (the kernels' column panels).
    for op in ("sum", "prod", "mean"):
        for dt in ALL:
            v = spread_values(dt, 240) if dt in FLOATS else values(dt, 240)
            add_case(reduction(op, dt, [24, 10], v, axis=0, note="leading axis, 10 columns"))
            add_case(reduction(op, dt, [3, 4, 2, 10], v, axis=[0, 2], note="reduced axes around a kept one, 10 columns"))
            add_case(reduction(op, dt, [3, 4, 2, 10], v, axis=1, keepdim=True, note="a middle axis: 3 panels of 20 columns"))
    add_case(reduction("sum", "f32", [17, 600], spread_values("f32", 17 * 600), axis=0, note="more columns than one panel task holds"))

    # Several blocks: the block fold and the tree, in full.
    add_case(reduction("sum", "bf16", [2 * BLOCK + 100], spread_values("bf16", 2 * BLOCK + 100), note="three blocks, the last short (long enough for the parallel block path)"))
    add_case(reduction("sum", "bf16", [2, BLOCK + 5], spread_values("bf16", 2 * (BLOCK + 5)), axis=1, note="two rows of two blocks"))
    add_case(reduction("mean", "f16", [BLOCK + 33], [rnd("f16", v) for v in spread_values("f32", BLOCK + 33)], note="two blocks"))
    add_case(reduction("var", "bf16", [BLOCK + 17], values("bf16", BLOCK + 17), note="two blocks, both passes"))
    add_case(reduction("logsumexp", "bf16", [BLOCK + 3], values("bf16", BLOCK + 3), note="two blocks of exponentials"))
    add_case(reduction("sum", "bf16", [BLOCK + 3, 8], spread_values("bf16", 8 * (BLOCK + 3)), axis=0, note="a leading axis of two blocks, kept columns after it (panels)"))
    add_case(reduction("prod", "f16", [BLOCK + 40], [rnd("f16", 1.0 + float(e)) for e in RNG.uniform(-1e-2, 1e-2, BLOCK + 40)], note="f16 prod in f32 over two blocks"))

    # Scans.
    for op in ("cumsum", "cumprod"):
        for dt in ALL:
            v = values(dt, 12, scale=1.5)
            add_case(along(op, dt, [3, 4], v, 1, note="axis 1"))
            add_case(along(op, dt, [3, 4], v, 0, note="axis 0"))
            add_case(along(op, dt, [2, 3, 2], values(dt, 12, scale=1.5), -2, note="axis -2 of rank 3"))
            add_case(along(op, dt, [], values(dt, 1), 0, note="rank 0"))
            add_case(along(op, dt, [2, 0], [], 1, note="empty axis"))
        for dt in FLOATS:
            add_case(along(op, dt, [6], [1.0, NAN, 2.0, INF, -INF, -0.0], 0, note="NaN and infinities"))
        add_case(case(op, [tensor_from_values("f32", [2], [1.0, 2.0])], {"error": "needs its `axis` argument"}, note="the axis of a scan is required"))
        add_case(case(op, [tensor_from_values("f32", [2], [1.0, 2.0])], {"error": "out of range"}, {"axis": {"i": 1}}, note="axis out of range"))
    add_case(along("cumsum", "bf16", [1000], [rnd("bf16", 0.1)] * 1000, 0, note="f32 running sum rounded to bf16 at each output"))
    add_case(along("cumsum", "i8", [300], [100] * 300, 0, note="i32 running sum"))
    add_case(along("cumsum", "i32", [3], [big, 1, 1], 0, note="wraps"))
    add_case(along("cumprod", "i8", [5], [100, 100, 100, 100, 100], 0, note="wraps in i32"))
    add_case(along("cumsum", "f32", [3], [-0.0, -0.0, 0.0], 0, note="starts from the first element: -0 stays -0"))

    # Normalisers.
    for op in ("softmax", "log_softmax"):
        for dt in ALL:
            v = values(dt, 12)
            add_case(along(op, dt, [3, 4], v, -1, given=False, note="default axis -1"))
            add_case(along(op, dt, [3, 4], v, 0, note="axis 0"))
            add_case(along(op, dt, [2, 3, 2], values(dt, 12), 1, note="axis 1 of rank 3"))
            add_case(along(op, dt, [], values(dt, 1), -1, note="rank 0"))
            add_case(along(op, dt, [2, 0], [], -1, note="empty axis"))
        for dt in FLOATS:
            add_case(along(op, dt, [2, 3], [-INF, -INF, -INF, 0.0, -INF, 1.0], 1, note="PyTorch: an all -inf row is NaN"))
            add_case(along(op, dt, [2, 3], [NAN, 0.0, 1.0, INF, 0.0, 1.0], 1, note="NaN row; +inf row (PyTorch: NaN)"))
            add_case(along(op, dt, [4], [-50.0, 0.0, 1.0, 30.0], 0, note="wide range"))
            add_case(along(op, dt, [17], values(dt, 17, scale=10.0), 0, note="17 lanes' worth"))
        add_case(case(op, [tensor_from_values("f32", [2], [1.0, 2.0])], {"error": "out of range"}, {"axis": {"i": 1}}, note="axis out of range"))
        add_case(case(op, [tensor_from_values("f32", [2], [1.0, 2.0])], {"error": "must be an Int"}, {"axis": {"ints": [0]}}, note="one axis only"))
    add_case(along("softmax", "bf16", [BLOCK + 9], values("bf16", BLOCK + 9), 0, note="a row of two blocks"))

    opslib.write("reduce", cases, __doc__.split("\n\n")[0] + "\n\nGenerated by tools/oracle/ops_reduce.py; do not edit.")


if __name__ == "__main__":
    main()
