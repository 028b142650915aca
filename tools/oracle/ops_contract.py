"""Writes testdata/vectors/ops_contract.jsonl: the contractions of spec §4.1
(matmul, linear, einsum, conv2d), for crates/tensor/tests/ops_oracle.rs.

    tools/oracle/.venv/bin/python tools/oracle/ops_contract.py

The reference is written from the text of spec §5 extension 4 and
docs/notes/contract.md, and shares nothing with the Rust kernels:

* Every output element is a loop over the contracted indices in row-major
  order (several summed letters of an einsum ordered by first occurrence in
  the spec), starting from +0. Each step is exact rational arithmetic
  (fractions.Fraction) rounded once into the accumulation dtype with opslib's
  exact round-to-nearest-even:
    - f32 accumulation (f32, bf16, f16 operands): acc = round_f32(acc + a*b)
      with a*b exact, i.e. a fused multiply-add;
    - f64: p = round_f64(a*b), then acc = round_f64(acc + p) (Python float
      arithmetic, IEEE binary64 round-to-nearest-even);
    - integers: exact integers wrapped to i32.
  An einsum term of one operand adds it (rounded); a term of three or more
  multiplies the leading factors left to right, each product rounded to the
  accumulation dtype, and fuses the last multiply with the add.
* The result is rounded once from the accumulator to the result dtype.
* Operand dtypes are promoted first (seed 000 "Promotion"; an integer
  promoted into a narrow float rounds once, like a cast); integer and bool
  results are i32.
* matmul follows NumPy's shape rules (1-D operands promoted and removed,
  batch broadcasting); conv2d builds the zero-padded input explicitly, so a
  padding element is a stored +0 whose products are rounded in like any
  other; linear is the contraction rounded to the result dtype, then the
  bias added and rounded once more.

Special values are handled by IEEE rules in the reference (NaN propagates,
inf*0 is NaN, inf-inf is NaN, an exact zero sum is +0 unless both terms
are -0). Deterministic: numpy's PCG64 with fixed seeds.

einsum's first argument is a Str, written {"s": "ij,jk->ik"}. The harness
must know that argument kind; until crates/tensor/tests/ops_oracle.rs parses
it, the einsum cases are left out (the script says so) rather than written
in a form that stops the whole suite.
"""
import itertools
import math
import re
import sys
from fractions import Fraction as Q
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import opslib  # noqa: E402
from opslib import case, tensor_from_values  # noqa: E402

FLOATS = ("bf16", "f16", "f32", "f64")
INTS = ("bool", "i8", "i32")
ALL = INTS + FLOATS
NAN = float("nan")
INF = float("inf")

RNG = np.random.Generator(np.random.PCG64(0x7477696C6C5F6374))  # "twill_ct"


# ---------------------------------------------------------------------------
# Dtype rules (seed 000 "Promotion", spec §5 extension 2)


def promote(a, b):
    if a == b:
        return a
    ia, ib = a in INTS, b in INTS
    if ia and ib:
        return max(a, b, key=INTS.index)
    if ia:
        return b
    if ib:
        return a
    if {a, b} == {"bf16", "f16"}:
        return "f32"
    return max(a, b, key=("bf16", "f16", "f32", "f64").index)


def promote_all(dts):
    d = dts[0]
    for x in dts[1:]:
        d = promote(d, x)
    return d


def acc_of(d):
    return "i32" if d in INTS else ("f64" if d == "f64" else "f32")


def result_of(d):
    return "i32" if d in INTS else d


# ---------------------------------------------------------------------------
# Exact arithmetic


def signbit(x):
    return math.copysign(1.0, x) < 0


def rnd(dt, v):
    """A finite Fraction/int/float rounded once into float dtype dt, as the
    Python float it is (every dtype's values are f64 values)."""
    if isinstance(v, float):
        if v != v or v in (INF, -INF) or v == 0:
            return v
    bits = opslib.bits_of_value(v if isinstance(v, (float, Q)) else Q(v), dt)
    return float(opslib.value_of_bits(bits, dt))


def cast_value(v, src, dst):
    """An element converted to dtype dst as a cast would (promotion only
    ever widens, so integers stay integers or round once into a float)."""
    if dst in INTS:
        return int(v)
    if src in INTS:
        return rnd(dst, Q(int(v)))
    return v  # a float widening to a wider float is exact


def wrap32(n):
    return (n + 2**31) % 2**32 - 2**31


def exact_sum(dt, a, p_exact, p_sign_neg):
    """round_dt(a + p) where p = p_exact (a Fraction; zero carries its sign
    in p_sign_neg) and a is a finite float."""
    s = Q(a) + p_exact
    if s == 0:
        if a == 0 and p_exact == 0:
            return -0.0 if (signbit(a) and p_sign_neg) else 0.0
        return 0.0
    return rnd(dt, s)


def fma(dt, acc, a, b):
    """round_dt(acc + a*b), the product exact."""
    if not all(math.isfinite(x) for x in (acc, a, b)):
        return acc + a * b  # IEEE on NaN and infinities (a*b cannot overflow here)
    return exact_sum(dt, acc, Q(a) * Q(b), signbit(a) != signbit(b))


def mul(dt, a, b):
    if dt == "i32":
        return wrap32(a * b)
    if not (math.isfinite(a) and math.isfinite(b)):
        return a * b
    p = Q(a) * Q(b)
    if p == 0:
        return -0.0 if signbit(a) != signbit(b) else 0.0
    return rnd(dt, p)


def add(dt, a, b):
    if dt == "i32":
        return wrap32(a + b)
    if not (math.isfinite(a) and math.isfinite(b)):
        return a + b
    return exact_sum(dt, a, Q(b), signbit(b))


def step(acc_dt, acc, factors):
    """One term of a contraction (see the module docstring)."""
    if len(factors) == 1:
        return add(acc_dt, acc, factors[0])
    p = factors[0]
    for f in factors[1:-1]:
        p = mul(acc_dt, p, f)
    last = factors[-1]
    if acc_dt == "i32":
        return wrap32(acc + p * last)
    if acc_dt == "f64":
        return acc + p * last  # Python floats: the product rounds, then the sum
    return fma("f32", acc, p, last)


def finish(acc_dt, res_dt, acc):
    if res_dt == "i32":
        return acc
    if acc != acc or acc in (INF, -INF) or acc == 0:
        return acc
    return rnd(res_dt, Q(acc))


# ---------------------------------------------------------------------------
# Values


def T(dt, shape, values):
    return tensor_from_values(dt, list(shape), list(values))


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def rand(dt, shape, scale=1.0):
    """Random elements of dtype dt: floats with a spread of exponents
    (rounded once into dt), so that most sums round; small integers."""
    n = numel(shape)
    if dt == "bool":
        return [bool(x) for x in RNG.integers(0, 2, n)]
    if dt == "i8":
        return [int(x) for x in RNG.integers(-128, 128, n)]
    if dt == "i32":
        return [int(x) for x in RNG.integers(-1000, 1000, n)]
    vals = RNG.standard_normal(n) * scale * np.exp2(RNG.integers(-3, 4, n))
    return [rnd(dt, Q(float(v))) for v in vals]


def as_num(dt, v):
    return int(v) if dt in INTS else v


def arr(dt, shape, values):
    """Values as a numpy object array of exact Python numbers."""
    a = np.empty(numel(shape), dtype=object)
    a[:] = [as_num(dt, v) for v in values]
    return a.reshape(shape)


def flat(a):
    return list(np.asarray(a, dtype=object).reshape(-1))


# ---------------------------------------------------------------------------
# References


def ref_matmul(a, b, acc_dt, res_dt):
    """NumPy matmul shape rules over object arrays, fixed-order sums."""
    a2 = a.reshape((1,) + a.shape) if a.ndim == 1 else a
    b2 = b.reshape(b.shape + (1,)) if b.ndim == 1 else b
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    m, k = a2.shape[-2:]
    n = b2.shape[-1]
    A = np.broadcast_to(a2, batch + (m, k))
    B = np.broadcast_to(b2, batch + (k, n))
    out = np.empty(batch + (m, n), dtype=object)
    for idx in itertools.product(*[range(d) for d in batch]):
        for i in range(m):
            for j in range(n):
                acc = 0 if acc_dt == "i32" else 0.0
                for p in range(k):
                    acc = step(acc_dt, acc, [A[idx + (i, p)], B[idx + (p, j)]])
                out[idx + (i, j)] = finish(acc_dt, res_dt, acc)
    shape = list(batch) + ([m] if a.ndim > 1 else []) + ([n] if b.ndim > 1 else [])
    return out.reshape(shape)


def parse_einsum(spec, shapes):
    """An independent reading of the subscript rules (NumPy's, documented in
    docs/notes/contract.md): per operand the label of each axis, the output
    labels, and the summed labels in order of first occurrence."""
    spec = spec.replace(" ", "")
    ins, _, out = spec.partition("->")
    terms = ins.split(",")
    n_ell = 0
    per = []
    for t, shape in zip(terms, shapes):
        letters = t.replace("...", "")
        ne = len(shape) - len(letters) if "..." in t else 0
        n_ell = max(n_ell, ne)
        per.append((t, ne))
    labels = []
    for t, ne in per:
        pre, dots, post = t.partition("...")
        ell = [("...", n_ell - ne + i) for i in range(ne)] if dots else []
        labels.append(list(pre) + ell + list(post))
    if "->" in spec:
        pre, dots, post = out.partition("...")
        outl = list(pre) + ([("...", i) for i in range(n_ell)] if dots else []) + list(post)
    else:
        counts = {}
        for ls in labels:
            for l in ls:
                if isinstance(l, str):
                    counts[l] = counts.get(l, 0) + 1
        outl = [("...", i) for i in range(n_ell)] + sorted(c for c, n in counts.items() if n == 1)
    summed = []
    for ls in labels:
        for l in ls:
            if l not in outl and l not in summed:
                summed.append(l)
    sizes = {}
    for ls, shape in zip(labels, shapes):
        for l, d in zip(ls, shape):
            if sizes.get(l, 1) == 1:
                sizes[l] = d
    return labels, outl, summed, sizes


def ref_einsum(spec, arrays, acc_dt, res_dt):
    labels, outl, summed, sizes = parse_einsum(spec, [a.shape for a in arrays])
    out_shape = [sizes[l] for l in outl]
    out = np.empty(out_shape, dtype=object)

    def element(a, ls, env):
        # A size-1 axis broadcasts: its index is 0 whatever the label's.
        return a[tuple(env[l] if d != 1 else 0 for l, d in zip(ls, a.shape))]

    for oidx in itertools.product(*[range(sizes[l]) for l in outl]):
        env = dict(zip(outl, oidx))
        acc = 0 if acc_dt == "i32" else 0.0
        for sidx in itertools.product(*[range(sizes[l]) for l in summed]):
            env.update(zip(summed, sidx))
            acc = step(acc_dt, acc, [element(a, ls, env) for a, ls in zip(arrays, labels)])
        out[oidx] = finish(acc_dt, res_dt, acc)
    return out


def ref_conv2d(x, w, stride, pad, acc_dt, res_dt):
    """The zero-padded input built explicitly (+0 elements), then the sum
    over (c, kh, kw) row-major."""
    unbatched = x.ndim == 3
    if unbatched:
        x = x.reshape((1,) + x.shape)
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    (sh, sw), (ph, pw) = stride, pad
    zero = 0 if acc_dt == "i32" else 0.0
    xp = np.full((n, c, h + 2 * ph, wd + 2 * pw), zero, dtype=object)
    xp[:, :, ph : ph + h, pw : pw + wd] = x
    oh, ow = (h + 2 * ph - kh) // sh + 1, (wd + 2 * pw - kw) // sw + 1
    out = np.empty((n, o, oh, ow), dtype=object)
    for b, q, i, j in itertools.product(range(n), range(o), range(oh), range(ow)):
        acc = zero
        for ci, a, e in itertools.product(range(c), range(kh), range(kw)):
            acc = step(acc_dt, acc, [w[q, ci, a, e], xp[b, ci, i * sh + a, j * sw + e]])
        out[b, q, i, j] = finish(acc_dt, res_dt, acc)
    return out[0] if unbatched else out


# ---------------------------------------------------------------------------
# Case builders


def err(msg):
    return {"error": msg}


def operands(specs):
    """[(dtype, shape, values or None)] -> (json args, object arrays,
    promoted dtype). Missing values are random."""
    args, arrays, dts = [], [], []
    for dt, shape, vals in specs:
        if vals is None:
            vals = rand(dt, shape)
        args.append(T(dt, shape, vals))
        arrays.append((dt, shape, vals))
        dts.append(dt)
    d = promote_all(dts)
    objs = [arr(d, shape, [cast_value(v, dt, d) for v in vals]) for dt, shape, vals in arrays]
    return args, objs, d


def matmul_case(out, a, b, note):
    args, (x, y), d = operands([a, b])
    r = ref_matmul(x, y, acc_of(d), result_of(d))
    out.append(case("matmul", args, T(result_of(d), r.shape, flat(r)), note=note))


def einsum_case(out, spec, specs, note):
    args, objs, d = operands(specs)
    r = ref_einsum(spec, objs, acc_of(d), result_of(d))
    out.append(case("einsum", [{"s": spec}] + args, T(result_of(d), r.shape, flat(r)), note=note))


def conv_case(out, x, w, note, stride=None, padding=None):
    args, (xo, wo), d = operands([x, w])
    kwargs = {}
    st, pd = (1, 1), (0, 0)
    if stride is not None:
        kwargs["stride"] = {"i": stride} if isinstance(stride, int) else {"ints": list(stride)}
        st = (stride, stride) if isinstance(stride, int) else tuple(stride)
    if padding is not None:
        kwargs["padding"] = {"i": padding} if isinstance(padding, int) else {"ints": list(padding)}
        pd = (padding, padding) if isinstance(padding, int) else tuple(padding)
    r = ref_conv2d(xo, wo, st, pd, acc_of(d), result_of(d))
    out.append(case("conv2d", args, T(result_of(d), r.shape, flat(r)), kwargs=kwargs, note=note))


def linear_case(out, x, w, b, note):
    specs = [x, w] + ([b] if b is not None else [])
    args, objs, d = operands(specs)
    acc, res = acc_of(d), result_of(d)
    xo, wo = objs[0], objs[1]
    prod = ref_matmul(xo, wo.T if wo.ndim == 2 else wo, acc, res)
    if b is not None:
        bo = np.broadcast_to(objs[2], prod.shape)
        if res == "i32":
            prod = np.vectorize(lambda p, q: wrap32(p + int(q)), otypes=[object])(prod, bo)
        else:
            prod = np.vectorize(lambda p, q: add(res, p, q), otypes=[object])(prod, bo)
    out.append(case("linear", args, T(res, np.shape(prod), flat(prod)), note=note))


def error_case(out, op, specs, msg, note, kwargs=None, lead=None):
    args = [] if lead is None else [lead]
    for dt, shape, vals in specs:
        args.append(T(dt, shape, vals if vals is not None else rand(dt, shape)))
    out.append(case(op, args, err(msg), kwargs=kwargs, note=note))


# ---------------------------------------------------------------------------
# The cases


def f(x):
    return float(x)


def matmul_cases(c):
    for dt in ALL:
        matmul_case(c, (dt, [3, 4], None), (dt, [4, 5], None), f"2-D {dt} (integers give i32)")
    # Mixed dtypes: promoted first.
    for da, db in [("bf16", "f16"), ("i8", "f32"), ("bool", "i8"), ("f32", "f64"), ("bf16", "f32"), ("i32", "f16")]:
        matmul_case(c, (da, [2, 3], None), (db, [3, 2], None), f"{da} @ {db}: operands promoted first")
    matmul_case(c, ("i32", [1, 2], [257, 1]), ("bf16", [2, 1], [1.0, 1.0]),
                "i32 @ bf16 is bf16: 257 rounds to 256 when promoted, then 256 + 1 = 257 rounds to 256")
    # 1-D operands.
    matmul_case(c, ("f32", [4], None), ("f32", [4, 3], None), "1-D @ 2-D: a row, its axis removed")
    matmul_case(c, ("f64", [3, 4], None), ("f64", [4], None), "2-D @ 1-D: a column, its axis removed")
    matmul_case(c, ("bf16", [5], None), ("bf16", [5], None), "1-D @ 1-D: rank 0")
    matmul_case(c, ("f32", [4], None), ("f32", [2, 4, 3], None), "1-D @ batched")
    matmul_case(c, ("i8", [2, 3, 4], None), ("i8", [4], None), "batched @ 1-D")
    # Batch broadcasting.
    matmul_case(c, ("f32", [2, 1, 3, 4], None), ("f32", [5, 4, 2], None), "batch axes broadcast: [2,1] with [5]")
    matmul_case(c, ("f16", [3, 4], None), ("f16", [2, 4, 5], None), "2-D @ 3-D broadcasts the matrix")
    matmul_case(c, ("f64", [2, 3, 2], None), ("f64", [2, 2, 2], None), "same batch")
    # Empty.
    matmul_case(c, ("f32", [0, 3], []), ("f32", [3, 4], None), "no rows")
    matmul_case(c, ("f32", [2, 0], []), ("f32", [0, 3], []), "empty contraction: +0 everywhere")
    matmul_case(c, ("i32", [2, 0], []), ("i32", [0, 3], []), "empty integer contraction: 0")
    matmul_case(c, ("f64", [0, 2, 3], []), ("f64", [3, 4], None), "empty batch")
    matmul_case(c, ("bf16", [0], []), ("bf16", [0], []), "empty dot: +0 rank 0")
    # Order and rounding.
    matmul_case(c, ("f32", [1, 3], [1e8, 1.0, -1e8]), ("f32", [3, 1], [1.0, 1.0, 1.0]),
                "ascending k: (1e8 + 1) rounds to 1e8, then - 1e8 = 0 (another order gives 1)")
    matmul_case(c, ("f32", [1, 2], [-(1 + 2**-12), 1 + 2**-13]), ("f32", [2, 1], [1.0, 1 + 2**-13]),
                "f32 is a fused multiply-add: (1+2^-13)^2 - (1+2^-12) = 2^-26 exactly (0 unfused)")
    matmul_case(c, ("f64", [1, 2], [-(1 + 2**-29), 1 + 2**-30]), ("f64", [2, 1], [1.0, 1 + 2**-30]),
                "f64 rounds the product first: (1+2^-30)^2 rounds to 1+2^-29, the sum is 0 (2^-60 fused)")
    matmul_case(c, ("bf16", [1, 2], [-(1 + 2**-6), 1 + 2**-7]), ("bf16", [2, 1], [1.0, 1 + 2**-7]),
                "bf16 products are exact in f32: (1+2^-7)^2 - (1+2^-6) = 2^-14")
    matmul_case(c, ("f16", [1, 3], [2.0**-10, 1.0, 2.0**-10]), ("f16", [3, 1], [1.0, 1.0, 1.0]),
                "f16 accumulates in f32 and rounds once: 1 + 2^-9 is an f16 value")
    matmul_case(c, ("bf16", [1, 4], [1.0, 2.0**-8, 2.0**-8, 2.0**-8]), ("bf16", [4, 1], [1.0] * 4),
                "bf16 sum kept in f32, rounded once: 1 + 3·2^-8 is a tie that goes to 1 + 2^-6 (bf16 steps would give 1)")
    matmul_case(c, ("f16", [1, 2], [300.0, 300.0]), ("f16", [2, 1], [200.0, 200.0]),
                "f32 accumulator 120000 overflows f16 only in the final rounding: inf")
    matmul_case(c, ("f32", [1, 2], [3e38, 3e38]), ("f32", [2, 1], [1.0, 1.0]), "f32 overflow to inf")
    matmul_case(c, ("f32", [1, 2], [1e-30, 1e-30]), ("f32", [2, 1], [1e-15, -3e-16]),
                "subnormal products kept exact by the fma")
    matmul_case(c, ("f64", [1, 2], [5e-324, 5e-324]), ("f64", [2, 1], [0.5, 0.5]),
                "f64 products round to the subnormal grid (half the minimum subnormal ties to 0)")
    # Special values.
    matmul_case(c, ("f32", [2, 2], [NAN, 1.0, 2.0, 3.0]), ("f32", [2, 2], [1.0, 2.0, 3.0, 4.0]), "NaN propagates")
    matmul_case(c, ("f64", [1, 2], [INF, 1.0]), ("f64", [2, 2], [0.0, 1.0, 1.0, 1.0]), "inf·0 is NaN; inf·1 is inf")
    matmul_case(c, ("bf16", [1, 2], [INF, -INF]), ("bf16", [2, 1], [1.0, 1.0]), "inf - inf is NaN")
    matmul_case(c, ("f32", [1, 2], [-0.0, -0.0]), ("f32", [2, 1], [1.0, 1.0]),
                "a sum of -0 products starts from +0 and stays +0")
    matmul_case(c, ("f64", [1, 1], [-0.0]), ("f64", [1, 1], [5.0]), "one -0 product: +0 + -0 = +0")
    matmul_case(c, ("bf16", [1, 2], [1e-38, 0.0]), ("bf16", [2, 1], [-1e-3, 1.0]),
                "a tiny negative f32 accumulator rounds to a bf16 subnormal, sign kept")
    matmul_case(c, ("f16", [1, 1], [2.0**-14]), ("f16", [1, 1], [-2.0**-12]),
                "-2^-26 in f32 rounds to f16 -0: a contraction can end at -0 only by its final rounding")
    # Integers wrap.
    matmul_case(c, ("i32", [1, 2], [2**20, 2**30]), ("i32", [2, 1], [2**12, 4]), "i32 products and sums wrap")
    matmul_case(c, ("i8", [1, 3], [127, -128, 127]), ("i8", [3, 1], [127, -128, 127]), "i8 accumulates in i32")
    matmul_case(c, ("bool", [2, 3], [True, False, True, True, True, True]),
                ("bool", [3, 2], [True, True, False, True, True, True]), "bool counts in i32")
    # Larger: across the blocked kernel's edges (kc = 256, row blocks, panels).
    matmul_case(c, ("f32", [20, 300], None), ("f32", [300, 40], None), "f32 20×300×40: k crosses a block")
    matmul_case(c, ("bf16", [33, 270], None), ("bf16", [270, 35], None), "bf16 33×270×35")
    matmul_case(c, ("f64", [17, 260], None), ("f64", [260, 19], None), "f64 17×260×19")
    matmul_case(c, ("i32", [5, 300], None), ("i32", [300, 33], None), "i32 5×300×33")
    matmul_case(c, ("f32", [150, 40], None), ("f32", [40, 2], None), "tall and narrow (computed transposed)")
    matmul_case(c, ("f16", [130, 20], None), ("f16", [20, 17], None), "f16 130×20×17: several row blocks")
    matmul_case(c, ("f32", [3, 7, 30], None), ("f32", [3, 30, 33], None), "batched f32 with partial tiles")
    # Errors.
    error_case(c, "matmul", [("f32", [2, 3], None), ("f32", [4, 5], None)], "shapes [2, 3] and [4, 5]",
               "inner sizes differ: the message names both shapes")
    error_case(c, "matmul", [("f32", [3], None), ("f32", [4], None)], "shapes [3] and [4]", "1-D sizes differ")
    error_case(c, "matmul", [("f64", [2, 3, 4], None), ("f64", [3, 4, 5], None)], "cannot be broadcast",
               "batch axes do not broadcast")
    error_case(c, "matmul", [("f32", [], [1.0]), ("f32", [3], None)], "at least one dimension", "rank 0")


def linear_cases(c):
    linear_case(c, ("f32", [2, 3], None), ("f32", [4, 3], None), ("f32", [4], None), "x @ w.T + b, f32")
    linear_case(c, ("f64", [2, 3], None), ("f64", [4, 3], None), None, "no bias")
    linear_case(c, ("f32", [5, 2, 3], None), ("f32", [4, 3], None), ("f32", [1, 4], None), "batched x, bias broadcast")
    linear_case(c, ("f32", [2, 3], None), ("f32", [3], None), ("f32", [], None), "1-D weight: a dot per row")
    linear_case(c, ("i8", [2, 3], None), ("i8", [4, 3], None), ("i8", [4], None), "integers give i32")
    linear_case(c, ("bf16", [1, 2], [1.0, 2.0**-8]), ("bf16", [1, 2], [1.0, 1.0]), ("bf16", [1], [2.0**-8]),
                "bf16: the contraction (1 + 2^-8 rounds to 1) then + 2^-8 rounds to 1 again: two roundings")
    linear_case(c, ("bf16", [2, 3], None), ("bf16", [2, 3], None), ("f32", [2], None),
                "an f32 bias promotes everything to f32 first: one f32 result")
    linear_case(c, ("f16", [0, 3], []), ("f16", [2, 3], None), ("f16", [2], None), "no rows")
    linear_case(c, ("f32", [1, 2], [INF, 1.0]), ("f32", [1, 2], [1.0, 1.0]), ("f32", [1], [-INF]), "inf - inf")
    error_case(c, "linear", [("f32", [2, 3], None), ("f32", [4, 5], None)], "input shape [2, 3] does not match weight shape [4, 5]",
               "in-feature mismatch names both shapes")
    error_case(c, "linear", [("f32", [2, 3], None), ("f32", [4, 3], None), ("f32", [3], None)],
               "bias shape [3] does not broadcast to the output shape [2, 4]", "bad bias shape")
    error_case(c, "linear", [("f32", [2, 3], None), ("f32", [1, 4, 3], None)], "weight must have shape", "3-D weight")


def einsum_cases(c):
    e = einsum_case
    for dt in ALL:
        e(c, "ij,jk->ik", [(dt, [2, 3], None), (dt, [3, 4], None)], f"matrix product, {dt}")
    e(c, "ij,jk", [("f32", [2, 3], None), ("f32", [3, 2], None)], "implicit output: ik")
    e(c, "ij, jk -> ik", [("f64", [2, 3], None), ("f64", [3, 2], None)], "spaces are ignored")
    e(c, "ba", [("f32", [2, 3], None)], "implicit output in ASCII order: ab, a transpose")
    e(c, "Ba", [("f32", [2, 3], None)], "implicit: upper case sorts first (Ba)")
    e(c, "ij->ji", [("f32", [2, 2], [1.0, -0.0, NAN, 2.0])],
      "a single-operand term is +0 + v: -0 becomes +0")
    e(c, "ii->i", [("f64", [3, 3], None)], "diagonal")
    e(c, "ii", [("bf16", [3, 3], None)], "trace (implicit: i occurs twice, so summed)")
    e(c, "iji->j", [("f32", [2, 3, 2], None)], "diagonal of axes 0 and 2, kept j")
    e(c, "ij->", [("f32", [3, 4], None)], "sum of all, row-major sequential order")
    e(c, "ij->j", [("f16", [4, 3], None)], "column sums in f32, rounded once to f16")
    e(c, "i,i->", [("f32", [5], None), ("f32", [5], None)], "dot")
    e(c, "i,i", [("i8", [4], None), ("i8", [4], None)], "implicit dot, integers to i32")
    e(c, "i,j->ij", [("f32", [3], None), ("f32", [2], None)], "outer product (no summed index: +0 + a·b)")
    e(c, "bij,bjk->bik", [("f32", [2, 2, 3], None), ("f32", [2, 3, 2], None)], "batched")
    e(c, "ijk,jkl->il", [("f32", [2, 3, 4], None), ("f32", [3, 4, 2], None)], "two summed letters: j then k, row-major")
    e(c, "ikj,jkl->il", [("f32", [2, 4, 3], None), ("f32", [3, 4, 2], None)], "summed order by first occurrence: k then j")
    e(c, "ij,ji->", [("f32", [1, 3], [1e8, 1.0, -1e8]), ("f32", [3, 1], [1.0, 1.0, 1.0])],
      "order matters: (1e8 + 1) - 1e8 in row-major order of (i, j)")
    e(c, "ji,ij->", [("f32", [3, 1], [1e8, 1.0, -1e8]), ("f32", [1, 3], [1.0, 1.0, 1.0])],
      "the same sum with j first: still the spec's first-occurrence order")
    e(c, "ij,jk,kl->il", [("f32", [2, 3], None), ("f32", [3, 2], None), ("f32", [2, 2], None)],
      "three operands: p = a·b rounded to f32, then fma(p, c, acc)")
    e(c, "i,i,i->", [("f32", [2], [1 + 2**-12, 1.0]), ("f32", [2], [1 + 2**-12, 1.0]), ("f32", [2], [1.0, -(1 + 2**-11)])],
      "three f32 factors: the first product rounds (1 + 2^-11 + 2^-24 → 1 + 2^-11), the last is fused")
    e(c, "i,i,i->", [("bf16", [2], [1 + 2**-7, 1.0]), ("bf16", [2], [1 + 2**-7, 1.0]), ("bf16", [2], [1 + 2**-7, -1.0])],
      "three bf16 factors stay exact in f32")
    e(c, "i,i,i->", [("f64", [3], None), ("f64", [3], None), ("f64", [3], None)], "three f64 factors, each product rounded")
    e(c, "...ij,...jk->...ik", [("f32", [2, 1, 2, 3], None), ("f32", [3, 3, 2], None)], "ellipsis batch axes broadcast")
    e(c, "...ij,...jk", [("f64", [2, 2, 3], None), ("f64", [3, 2], None)], "implicit with ellipsis: batch first")
    e(c, "i...->...", [("f32", [3, 2], None)], "ellipsis kept, i summed")
    e(c, "ij,ij->ij", [("f32", [1, 3], None), ("f32", [2, 3], None)], "size-1 axes broadcast (NumPy)")
    e(c, "ij,jk->ik", [("f32", [2, 1], None), ("f32", [3, 2], None)], "a summed size-1 axis broadcasts too")
    e(c, "ij,jk->ik", [("bf16", [2, 3], None), ("f16", [3, 2], None)], "bf16 with f16 promotes to f32")
    e(c, "ij,jk->ik", [("i8", [2, 3], None), ("bf16", [3, 2], None)], "i8 with bf16 promotes to bf16")
    e(c, "ij,jk->ik", [("f32", [2, 0], []), ("f32", [0, 3], [])], "empty sum: +0")
    e(c, "ij,jk->ik", [("f32", [0, 2], []), ("f32", [2, 3], None)], "empty output")
    e(c, "->", [("f64", [], [-2.5])], "rank 0, no subscripts")
    e(c, "i->", [("f32", [0], [])], "empty sum of one operand: +0")
    e(c, "ij,jk->ik", [("f32", [2, 2], [INF, 1.0, NAN, 1.0]), ("f32", [2, 2], [0.0, 1.0, 1.0, 1.0])], "inf·0 and NaN")
    e(c, "ij,jk->ik", [("f32", [9, 40], None), ("f32", [40, 11], None)], "fast path, partial tiles")
    lead = {"s": "ij,jk->ik"}
    err_cases = [
        ("ij,jk", [("f32", [2, 3], None)], "2 operand", "more terms than tensors"),
        ("ij", [("f32", [2, 3], None), ("f32", [2, 3], None)], "1 operand", "more tensors than terms"),
        ("i1", [("f32", [2, 3], None)], "invalid subscript '1'", "digits are not subscripts"),
        ("..i", [("f32", [2], None)], "'.' that is not part of a '...'", "a stray dot"),
        ("i...j...", [("f32", [2, 2, 2], None)], "more than one '...'", "two ellipses in a term"),
        ("ij->ii", [("f32", [2, 2], None)], "repeat 'i'", "a repeated output letter"),
        ("ij->k", [("f32", [2, 2], None)], "'k' does not occur", "an output letter from nowhere"),
        ("ij,jk->ik", [("f32", [2, 3], None), ("f32", [4, 5], None)], "sizes 3 and 4", "summed sizes differ (names the shapes)"),
        ("ii", [("f32", [2, 3], None)], "sizes 2 and 3", "a diagonal of unequal axes"),
        ("ij", [("f32", [2, 3, 4], None)], "subscripts name 2", "too few subscripts for the rank"),
        ("...i->i", [("f32", [2, 3], None)], "no '...'", "'...' axes dropped from the output"),
        ("ij->i->j", [("f32", [2, 3], None)], "invalid subscript '-'", "two arrows"),
    ]
    for spec, specs, msg, note in err_cases:
        error_case(c, "einsum", specs, msg, note, lead={"s": spec})
    del lead
    c.append(case("einsum", [{"i": 3}, T("f32", [2], [1.0, 2.0])], err("subscripts string"), note="the spec must be a Str"))


def conv_cases(c):
    x16 = [float(v) for v in range(16)]
    conv_case(c, ("f64", [1, 1, 4, 4], x16), ("f64", [1, 1, 3, 3], [1.0] * 9), "valid 3×3 box sum")
    conv_case(c, ("f64", [1, 1, 4, 4], x16), ("f64", [1, 1, 3, 3], [1.0] * 9), "padding 1", padding=1)
    conv_case(c, ("f64", [1, 1, 4, 4], x16), ("f64", [1, 1, 3, 3], [1.0] * 9), "stride 2, padding 1", stride=2, padding=1)
    conv_case(c, ("f64", [1, 1, 4, 4], x16), ("f64", [1, 1, 3, 3], [1.0] * 9), "per-axis stride and padding",
              stride=[1, 2], padding=[0, 1])
    for dt in ALL:
        conv_case(c, (dt, [2, 3, 5, 6], None), (dt, [4, 3, 2, 3], None), f"{dt}: sum over (c, kh, kw) row-major",
                  padding=1)
    conv_case(c, ("f32", [3, 5, 5], None), ("f32", [2, 3, 3, 3], None), "unbatched CHW input", stride=2)
    conv_case(c, ("bf16", [1, 2, 4, 4], None), ("f16", [1, 2, 2, 2], None), "bf16 with f16 promotes to f32")
    conv_case(c, ("f32", [1, 1, 2, 2], [1.0, 2.0, 3.0, 4.0]), ("f32", [1, 1, 1, 1], [INF]),
              "padding is an explicit +0: +0·inf is NaN on the border", padding=1)
    conv_case(c, ("f32", [1, 1, 2, 2], [1.0, 2.0, 3.0, 4.0]), ("f32", [1, 1, 1, 1], [-3.0]),
              "an all-padding window: +0 + (+0·-3 = -0) = +0, not -0", padding=1)
    conv_case(c, ("f32", [1, 1, 3, 3], [-0.0] * 9), ("f32", [1, 1, 2, 2], [1.0] * 4), "-0 inputs: sums start from +0")
    conv_case(c, ("f32", [1, 2, 3, 3], [1e8, 1.0, 1.0] * 6), ("f32", [1, 2, 1, 2], [1.0, 1.0, -1.0, -1.0]),
              "order: channel, then kernel row, then column")
    conv_case(c, ("f32", [2, 3, 9, 9], None), ("f32", [5, 3, 3, 3], None), "larger: 2×3×9×9 with 5 filters", stride=2, padding=2)
    conv_case(c, ("f32", [1, 0, 3, 3], []), ("f32", [2, 0, 2, 2], []), "no channels: +0")
    conv_case(c, ("f32", [0, 2, 3, 3], []), ("f32", [2, 2, 2, 2], None), "no images")
    errs = [
        ([("f32", [1, 2, 4, 4], None), ("f32", [1, 3, 3, 3], None)], "has 2 channels but weight shape [1, 3, 3, 3] expects 3", None, "channel mismatch"),
        ([("f32", [1, 1, 4, 4], None), ("f32", [1, 1, 3], None)], "weight must have shape", None, "3-D weight"),
        ([("f32", [4, 4], None), ("f32", [1, 1, 3, 3], None)], "input must have shape", None, "2-D input"),
        ([("f32", [1, 1, 2, 2], None), ("f32", [1, 1, 3, 3], None)], "does not fit", None, "kernel larger than the input"),
        ([("f32", [1, 1, 4, 4], None), ("f32", [1, 1, 3, 3], None)], "`stride` must be at least 1", {"stride": {"i": 0}}, "stride 0"),
        ([("f32", [1, 1, 4, 4], None), ("f32", [1, 1, 3, 3], None)], "`padding` must be at least 0", {"padding": {"i": -1}}, "negative padding"),
        ([("f32", [1, 1, 4, 4], None), ("f32", [1, 1, 3, 3], None)], "an Int or 2 Ints", {"stride": {"ints": [1, 1, 1]}}, "three strides"),
    ]
    for specs, msg, kw, note in errs:
        error_case(c, "conv2d", specs, msg, note, kwargs=kw)


def harness_reads_strings():
    """Whether the oracle harness parses {"s": ...} arguments yet."""
    src = (opslib.ROOT / "crates" / "tensor" / "tests" / "ops_oracle.rs").read_text()
    return re.search(r'get\("s"\)', src) is not None


def main():
    c = []
    matmul_cases(c)
    linear_cases(c)
    conv_cases(c)
    if harness_reads_strings():
        einsum_cases(c)
    else:
        print("warning: crates/tensor/tests/ops_oracle.rs does not parse {\"s\": …} arguments yet; "
              "einsum cases left out", file=sys.stderr)
    opslib.write(
        "contract",
        c,
        """Contractions (matmul linear einsum conv2d), generated by
tools/oracle/ops_contract.py from exact rational fixed-order sums (spec §5
extension 4) with one exact rounding per step; do not edit by hand.""",
    )


if __name__ == "__main__":
    main()
