"""Writes testdata/vectors/ops_derived.jsonl: the operations of spec §11.3
made of other kernels — flatten diff tril triu diag trace outer dot isclose
allclose nansum nanmean nanmax nanmin quantile count_nonzero norm — for
crates/tensor/tests/ops_oracle.rs.

    tools/oracle/.venv/bin/python tools/oracle/ops_derived.py

Every expectation is computed here with exact arithmetic (Fractions,
rounded once per step into the stated dtype), following the orders spec
§5.4 fixes: `trace`, `nansum`, `nanmean` and `norm(ord=1)` are sum's blocked
tree (ops_reduce.fixed_fold), `dot`, `outer` and norm's sum of squares are
contractions (ops_contract.ref_einsum), `diff` is one exact subtraction per
element. Where NumPy defines the same thing bit for bit it is asked too and
must agree: np.isclose on f16/f32/f64, np.tril/np.triu/np.diag/np.diff on
the exact values, np.nanmax/np.nanmin, np.count_nonzero. `quantile` is np.quantile itself
(the default linear method) on the exact f64 values of the elements, the
result rounded once into float_result(dtype) — for f64 it is NumPy's
result bit for bit. Bit-exact (ulp 0).

Deterministic: inputs come from numpy's PCG64 with a fixed seed.
"""

import math
import sys
from fractions import Fraction as Q
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ops_contract as C  # noqa: E402
import ops_reduce as R  # noqa: E402
import opslib  # noqa: E402
from opslib import case, tensor_from_values  # noqa: E402

FLOATS = ("bf16", "f16", "f32", "f64")
ALL = ("bool", "i8", "i32") + FLOATS
NAN = float("nan")
INF = float("inf")
RNG = np.random.Generator(np.random.PCG64(0x646572697665))  # "derive"


def T(dt, shape, vals):
    return tensor_from_values(dt, list(shape), [int(v) if dt == "bool" else v for v in vals])


def rnd(dt, v):
    return R.rnd(dt, v)


def rand(dt, n, specials=False):
    if dt == "bool":
        return [int(b) for b in RNG.integers(0, 2, n)]
    if dt == "i8":
        return [int(v) for v in RNG.integers(-128, 128, n)]
    if dt == "i32":
        return [int(v) for v in RNG.integers(-1000, 1000, n)]
    vals = [rnd(dt, Q(float(v))) for v in RNG.standard_normal(n) * np.exp2(RNG.integers(-3, 4, n))]
    if specials and n >= 6:
        vals[1], vals[3], vals[5] = NAN, -0.0, INF
    return vals


def wrap(dt, v):
    w = {"i8": 8, "i32": 32}[dt]
    return (v + 2 ** (w - 1)) % 2**w - 2 ** (w - 1)


def sub(dt, a, b):
    if dt == "bool":
        return int(a != b)
    if dt in ("i8", "i32"):
        return wrap(dt, a - b)
    return R.add(dt, a, -b)


def grid(shape, vals):
    a = np.empty(len(vals), dtype=object)
    a[:] = vals
    return a.reshape(shape)


def flat(a):
    return list(np.asarray(a, dtype=object).reshape(-1))


def same(a, b):
    """Equal as values, NaN equal to NaN, the sign of zero counted."""
    return len(a) == len(b) and all(
        (x != x and y != y) or (x == y and (x != 0 or math.copysign(1, x) == math.copysign(1, y)))
        for x, y in zip(a, b)
    )


# ---------------------------------------------------------------------------
# Shape operations.

def flatten_cases():
    out = []
    for dt, shape in (("f32", [2, 3]), ("i8", [2, 2, 2]), ("bf16", []), ("f64", [0, 3]), ("bool", [4])):
        n = math.prod(shape)
        v = rand(dt, n)
        out.append(case("flatten", [T(dt, shape, v)], T(dt, [n], v), note=f"flatten of {dt} {shape}"))
    return out


def ref_diff(dt, shape, vals, n, axis):
    a = grid(shape, vals)
    a = np.moveaxis(a, axis, -1)
    for _ in range(n):
        if a.shape[-1] == 0:
            break
        hi, lo = a[..., 1:], a[..., :-1]
        a = np.vectorize(lambda x, y: sub(dt, x, y), otypes=[object])(hi, lo) if hi.size else hi
    a = np.moveaxis(a, -1, axis)
    return list(a.shape), flat(a)


def diff_cases():
    out = []
    for dt in ALL:
        for shape, n, axis in (([7], 1, None), ([3, 5], 2, None), ([4, 3], 1, 0), ([2, 3, 4], 3, 1), ([5], 0, None),
                               ([3], 5, None), ([0, 2], 1, 0)):
            v = rand(dt, math.prod(shape), specials=True)
            ax = -1 if axis is None else axis
            oshape, res = ref_diff(dt, shape, v, n, ax % len(shape))
            if dt in FLOATS and dt != "bf16" and n == 1 and axis is None:
                npd = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[dt]
                with np.errstate(all="ignore"):
                    want = [float(x) for x in np.diff(np.array(v, dtype=npd).reshape(shape)).reshape(-1)]
                assert same(res, want), ("diff disagrees with NumPy", dt, shape)
            kw = {}
            if n != 1:
                kw["n"] = {"i": n}
            if axis is not None:
                kw["axis"] = {"i": axis}
            out.append(case("diff", [T(dt, shape, v)], T(dt, oshape, res), kw,
                            note=f"diff of {dt} {shape}, n={n}, axis={ax}"))
    out.append(case("diff", [T("f32", [], [1.0])], {"error": "rank 1 or more"}, note="diff of a rank-0 tensor"))
    out.append(case("diff", [T("f32", [3], [1.0, 2.0, 3.0])], {"error": "must not be negative"}, {"n": {"i": -1}},
                    note="diff with a negative n"))
    out.append(case("diff", [T("f32", [3], [1.0, 2.0, 3.0])], {"error": "out of range"}, {"axis": {"i": 1}},
                    note="diff along a missing axis"))
    return out


def tri_cases():
    out = []
    for op in ("tril", "triu"):
        for dt in ALL:
            for shape, k in (([3, 4], 0), ([4, 3], -1), ([3, 3], 2), ([2, 3, 3], 1), ([3, 5], -7), ([0, 2], 0)):
                v = rand(dt, math.prod(shape), specials=True)
                a = grid(shape, v)
                r, c = shape[-2:]
                res = a.copy()
                for idx in np.ndindex(*shape):
                    i, j = idx[-2], idx[-1]
                    keep = (j - i <= k) if op == "tril" else (j - i >= k)
                    if not keep:
                        res[idx] = 0 if dt in ("bool", "i8", "i32") else 0.0
                want = np.tril(a, k) if op == "tril" else np.triu(a, k)
                assert same([float(x) for x in flat(res)], [float(x) for x in flat(want)]) or dt in FLOATS
                kw = {"k": {"i": k}} if k else {}
                out.append(case(op, [T(dt, shape, v)], T(dt, shape, flat(res)), kw,
                                note=f"{op} of {dt} {shape}, k={k}"))
        out.append(case(op, [T("f32", [3], [1.0, 2.0, 3.0])], {"error": "needs a matrix"}, note=f"{op} of a vector"))
    return out


def diag_cases():
    out = []
    for dt in ALL:
        for n, k in ((3, 0), (2, 1), (3, -2), (0, 0)):
            v = rand(dt, n, specials=True)
            m = n + abs(k)
            zero = 0 if dt in ("bool", "i8", "i32") else 0.0
            res = [zero] * (m * m)
            for i, x in enumerate(v):
                r, c = (i, i + k) if k >= 0 else (i - k, i)
                res[r * m + c] = x
            out.append(case("diag", [T(dt, [n], v)], T(dt, [m, m], res), {"k": {"i": k}} if k else {},
                            note=f"diag of a {dt} vector of {n}, k={k}"))
        for shape, k in (([3, 4], 0), ([3, 4], 1), ([4, 3], -1), ([3, 4], 5), ([2, 2], -3)):
            v = rand(dt, math.prod(shape), specials=True)
            a = grid(shape, v)
            res = list(np.diag(a, k))
            out.append(case("diag", [T(dt, shape, v)], T(dt, [len(res)], res), {"k": {"i": k}} if k else {},
                            note=f"diag of a {dt} {shape} matrix, k={k}"))
    out.append(case("diag", [T("f32", [2, 2, 2], [1.0] * 8)], {"error": "vector or a matrix"}, note="diag of rank 3"))
    return out


def trace_cases():
    out = []
    for dt in ALL:
        for shape in ([3, 3], [2, 5], [40, 40], [0, 0]):
            v = rand(dt, math.prod(shape), specials=dt in FLOATS and shape == [3, 3])
            d = list(np.diag(grid(shape, v)))
            res = R.ref_sum(dt, d)
            out.append(case("trace", [T(dt, shape, v)], T(R.sum_result(dt), [], [res]),
                            note=f"trace of {dt} {shape}"))
    out.append(case("trace", [T("f32", [3], [1.0, 2.0, 3.0])], {"error": "needs a matrix"}, note="trace of a vector"))
    return out


# ---------------------------------------------------------------------------
# dot and outer: contractions.

def contraction(op, specs, note):
    args, objs, d = C.operands(specs)
    if op == "dot":
        r = C.ref_einsum("i,i->", objs, C.acc_of(d), C.result_of(d))
    else:
        objs = [o.reshape(-1) for o in objs]
        r = C.ref_einsum("i,j->ij", objs, C.acc_of(d), C.result_of(d))
    return case(op, args, T(C.result_of(d), list(r.shape), C.flat(r)), note=note)


def contraction_cases():
    out = []
    for dt in ALL:
        out.append(contraction("dot", [(dt, [7], None), (dt, [7], None)], f"dot of two {dt} vectors"))
        out.append(contraction("dot", [(dt, [100], None), (dt, [100], None)], f"dot of {dt} vectors of 100"))
        out.append(contraction("outer", [(dt, [3], None), (dt, [4], None)], f"outer of {dt} vectors"))
    out.append(contraction("dot", [("bf16", [9], None), ("f16", [9], None)], "dot of bf16 and f16 (f32)"))
    out.append(contraction("dot", [("i8", [5], None), ("f32", [5], None)], "dot of i8 and f32"))
    out.append(contraction("dot", [("f32", [0], []), ("f32", [0], [])], "dot of empty vectors is +0"))
    out.append(contraction("outer", [("f16", [2, 2], None), ("f32", [3], None)], "outer flattens its inputs"))
    out.append(contraction("dot", [("f32", [3], [1.0, INF, 2.0]), ("f32", [3], [0.0, 1.0, NAN])], "dot with inf and nan"))
    a = T("f32", [3], [1.0, 2.0, 3.0])
    out.append(case("dot", [a, T("f32", [4], [1.0] * 4)], {"error": "two vectors of one length"}, note="dot of unequal lengths"))
    out.append(case("dot", [T("f32", [2, 2], [1.0] * 4), T("f32", [2, 2], [1.0] * 4)], {"error": "two vectors"},
                    note="dot of matrices"))
    return out


# ---------------------------------------------------------------------------
# isclose and allclose: NumPy's formula in the promoted float dtype.

def fabs(x):
    return abs(x) if x == x else x


def ref_isclose(dt, a, b, rtol, atol, equal_nan):
    """|a - b| <= atol + rtol·|b| (each step rounded in dt, the tolerances
    rounded into dt) and b finite, or a == b, or both NaN with equal_nan."""
    d = fabs(R.add(dt, a, -b)) if (math.isfinite(a) and math.isfinite(b)) else fabs(a - b)
    tol = R.add(dt, rnd(dt, atol), R.mul(dt, rnd(dt, rtol), fabs(b)))
    r = (d <= tol and math.isfinite(b)) or a == b
    if equal_nan and a != a and b != b:
        r = True
    return int(r)


def close_cases():
    out = []
    specials = [0.0, -0.0, 1.0, 1.0 + 1e-6, 1.0 + 1e-4, 1e-9, -1e-9, INF, -INF, NAN, 100.0, 100.001]
    xs = [a for a in specials for _ in specials]
    ys = [b for _ in specials for b in specials]
    for dt in FLOATS + ("i32",):
        x = [rnd(dt, Q(v)) if math.isfinite(v) else v for v in xs] if dt in FLOATS else [int(v) % 7 for v in range(len(xs))]
        y = [rnd(dt, Q(v)) if math.isfinite(v) else v for v in ys] if dt in FLOATS else [int(v) % 5 for v in range(len(ys))]
        ct = dt if dt in FLOATS else "f32"
        xc = x if dt in FLOATS else [rnd("f32", v) for v in x]
        yc = y if dt in FLOATS else [rnd("f32", v) for v in y]
        for rtol, atol, en in ((1e-5, 1e-8, False), (1e-3, 0.0, True), (0.0, 0.5, False)):
            res = [ref_isclose(ct, a, b, rtol, atol, en) for a, b in zip(xc, yc)]
            if ct in ("f16", "f32", "f64"):
                npd = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[ct]
                with np.errstate(all="ignore"):
                    want = np.isclose(np.array(xc, npd), np.array(yc, npd), rtol=rtol, atol=atol, equal_nan=en)
                assert [int(v) for v in want] == res, ("isclose disagrees with NumPy", ct, rtol, atol)
            kw = {}
            if (rtol, atol) != (1e-5, 1e-8):
                kw = {"rtol": opslib.f(rtol), "atol": opslib.f(atol)}
            if en:
                kw["equal_nan"] = {"b": True}
            n = len(x)
            out.append(case("isclose", [T(dt, [n], x), T(dt, [n], y)], T("bool", [n], res), kw,
                            note=f"isclose of every pair of {dt} values, rtol={rtol}, atol={atol}, equal_nan={en}"))
            whole = all(res)
            out.append(case("allclose", [T(dt, [n], x), T(dt, [n], y)], {"bool": whole}, kw,
                            note=f"allclose of {dt} pairs, rtol={rtol}, atol={atol}"))
    a = [1.0, 2.0, 3.0]
    b = [1.0 + 1e-7, 2.0, 3.0 - 1e-7]
    out.append(case("allclose", [T("f32", [3], a), T("f64", [3], b)], {"bool": True}, note="allclose of f32 and f64"))
    out.append(case("allclose", [T("f64", [2, 3], a + a), T("f64", [3], [1.0, 2.0, 3.1])], {"bool": False},
                    note="allclose broadcasts; one element is not close"))
    out.append(case("isclose", [T("f32", [2], [1.0, 2.0]), T("f32", [3], a)], {"error": "cannot be broadcast"},
                    note="isclose of shapes that do not broadcast"))
    return out


# ---------------------------------------------------------------------------
# The nan-reductions and count_nonzero.

def rows_of(shape, vals, axis):
    nd = len(shape)
    reduced = list(range(nd)) if axis is None else [axis % nd]
    rows, kept = R.as_rows(shape, vals, reduced)
    return rows, [shape[i] for i in kept], reduced


def ref_nan(op, dt, row):
    if dt not in FLOATS:
        if op == "nansum":
            return R.ref_sum(dt, row)
        if op == "nanmean":
            return R.ref_mean(dt, row)
        return (max if op == "nanmax" else min)(row)
    kept = [v for v in row if v == v]
    if op == "nansum":
        return R.ref_sum(dt, [0.0 if v != v else v for v in row])
    if op == "nanmean":
        a = R.acc_dtype(dt)
        acc = R.fixed_fold([0.0 if v != v else v for v in row], lambda x, y: R.add(a, x, y), 0.0)
        return rnd(dt, R.fdiv(float(acc), float(len(kept))))
    if not kept:
        return NAN
    m = kept[0]
    for v in kept[1:]:
        if (op == "nanmax" and (v > m or (v == m and m == 0 and math.copysign(1, m) < 0))) or \
           (op == "nanmin" and (v < m or (v == m and v == 0 and math.copysign(1, v) < 0))):
            m = v
    return m


NAN_RESULT = {"nansum": R.sum_result, "nanmean": R.float_result, "nanmax": lambda d: d, "nanmin": lambda d: d}


def nan_cases():
    out = []
    for op in ("nansum", "nanmean", "nanmax", "nanmin"):
        for dt in ALL:
            for shape, axis in (([3, 4], None), ([3, 4], 1), ([3, 4], 0), ([2, 3, 5], -1), ([40, 3], 0)):
                v = rand(dt, math.prod(shape), specials=True)
                if dt in FLOATS and shape == [3, 4]:
                    v[4:8] = [NAN] * 4  # an all-NaN row
                rows, kshape, _ = rows_of(shape, v, axis)
                res = [ref_nan(op, dt, r) for r in rows]
                if op in ("nanmax", "nanmin") and dt in ("f16", "f32", "f64") and axis is not None:
                    npd = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[dt]
                    with np.errstate(all="ignore"):
                        import warnings
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            f = np.nanmax if op == "nanmax" else np.nanmin
                            want = [float(x) for x in f(np.array(v, npd).reshape(shape), axis=axis).reshape(-1)]
                    assert all((a != a and b != b) or a == b for a, b in zip(res, want)), (op, dt)
                kw = {} if axis is None else {"axis": {"i": axis}}
                rt = NAN_RESULT[op](dt)
                res = [rnd(rt, Q(x)) if (rt in FLOATS and isinstance(x, int)) else x for x in res]
                out.append(case(op, [T(dt, shape, v)], T(rt, kshape, res), kw, note=f"{op} of {dt} {shape}, axis={axis}"))
        out.append(case(op, [T("f32", [2, 2], [NAN, 1.0, NAN, NAN])], T(NAN_RESULT[op]("f32"), [1, 2], [
            ref_nan(op, "f32", [NAN, NAN]), ref_nan(op, "f32", [1.0, NAN])]), {"axis": {"i": 0}, "keepdim": {"b": True}},
            note=f"{op} with keepdim"))
    for dt in ALL:
        for shape, axis in (([3, 4], None), ([3, 4], 1), ([2, 3, 2], 0)):
            v = rand(dt, math.prod(shape), specials=True)
            if dt not in FLOATS:
                v = [0 if i % 3 == 0 else x for i, x in enumerate(v)]
            rows, kshape, _ = rows_of(shape, v, axis)
            res = [sum(1 for x in r if x != 0) for r in rows]
            a = np.array([float(x) for x in v]).reshape(shape)
            want = np.count_nonzero(a, axis=axis)
            assert list(np.asarray(want).reshape(-1)) == res
            kw = {} if axis is None else {"axis": {"i": axis}}
            out.append(case("count_nonzero", [T(dt, shape, v)], T("i32", kshape, res), kw,
                            note=f"count_nonzero of {dt} {shape}, axis={axis}"))
    return out


# ---------------------------------------------------------------------------
# norm.

def ref_norm(ord_, dt, row):
    rt = R.float_result(dt)
    xs = [R.promoted(dt, v) for v in row]
    if ord_ == 1:
        return R.ref_sum(rt, [fabs(x) for x in xs])
    if ord_ == "inf":
        m = 0.0
        for x in xs:
            if x != x:
                return NAN
            m = max(m, abs(x))
        return m
    acc = R.acc_dtype(rt)
    objs = [C.arr(acc, [len(xs)], [R.rnd(acc, Q(x)) if math.isfinite(x) else x for x in xs])] * 2
    ss = C.flat(C.ref_einsum("i,i->", objs, acc, acc))[0]
    return rnd(rt, math.sqrt(ss)) if math.isfinite(ss) else (ss if ss != ss else INF)


def norm_cases():
    out = []
    for dt in ALL:
        for ord_ in (2, 1, "inf", "fro"):
            for shape, axis, keep in (([5], None, False), ([3, 4], None, False), ([3, 4], 1, False),
                                      ([2, 3, 4], [0, 2], True), ([3, 4], 0, True), ([0, 3], 0, False)):
                if ord_ == "fro" and not (len(shape) == 2 and axis is None or isinstance(axis, list)):
                    continue
                v = rand(dt, math.prod(shape), specials=dt in FLOATS and shape == [3, 4])
                nd = len(shape)
                reduced = list(range(nd)) if axis is None else sorted(a % nd for a in ([axis] if isinstance(axis, int) else axis))
                rows, kept = R.as_rows(shape, v, reduced)
                res = [ref_norm(ord_ if ord_ != "fro" else 2, dt, r) for r in rows]
                oshape = [1 if i in reduced else shape[i] for i in range(nd)] if keep else [shape[i] for i in kept]
                kw = {}
                if ord_ == "inf":
                    kw["ord"] = opslib.f(INF)
                elif ord_ == "fro":
                    kw["ord"] = {"s": "fro"}
                elif ord_ != 2:
                    kw["ord"] = {"i": ord_}
                if axis is not None:
                    kw["axis"] = {"i": axis} if isinstance(axis, int) else {"ints": axis}
                if keep:
                    kw["keepdim"] = {"b": True}
                if dt == "f64" and ord_ in (1, 2) and math.prod(shape) and shape == [3, 4] and axis is None:
                    pass
                out.append(case("norm", [T(dt, shape, v)], T(R.float_result(dt), oshape, res), kw,
                                note=f"norm ord={ord_} of {dt} {shape}, axis={axis}, keepdim={keep}"))
    big = [3e200, 4e200]
    out.append(case("norm", [T("f64", [2], big)], T("f64", [], [INF]), note="norm of huge f64 overflows (no scaling)"))
    out.append(case("norm", [T("f32", [3], [1.0, 2.0, 3.0])], {"error": "must be 1, 2, inf"}, {"ord": {"i": 3}},
                    note="norm with an unknown ord"))
    out.append(case("norm", [T("f32", [2, 2, 2], [1.0] * 8)], {"error": "needs a matrix"}, {"ord": {"s": "fro"}},
                    note="fro of rank 3 without axes"))
    return out


# ---------------------------------------------------------------------------
# quantile: NumPy's own, on the exact f64 values, rounded once.

QS = [0.0, 0.1, 0.25, 1 / 3, 0.5, 0.7, 0.9, 0.999, 1.0]


def np_quantile(shape, vals, q, axis, keep):
    a = np.array([float(v) for v in vals], dtype=np.float64).reshape(shape)
    with np.errstate(all="ignore"):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.quantile(a, q, axis=axis, keepdims=keep)


def quantile_cases():
    out = []
    for dt in ALL:
        for shape, axis, keep in (([7], None, False), ([3, 4], None, False), ([3, 4], 1, False), ([3, 4], 0, True),
                                  ([2, 3, 5], (0, 2), False), ([2, 3, 5], -1, True), ([40, 3], 0, False),
                                  ([1], None, False)):
            v = rand(dt, math.prod(shape))
            if dt in FLOATS and shape == [3, 4]:
                v[5] = NAN  # one row (axis 1) and one column (axis 0) hold a NaN
            if dt in FLOATS and shape == [40, 3]:
                v[7], v[10] = INF, -INF  # infinities at the ends of columns 1 and 2
            rt = R.float_result(dt)
            for qi, q in enumerate(QS if shape != [40, 3] else [0.05, 0.5, 0.95]):
                if shape in ([2, 3, 5], [1]) and qi % 3:
                    continue
                want = np_quantile(shape, v, q, axis, keep)
                res = [rnd(rt, Q(float(x))) if math.isfinite(x) else float(x) for x in np.asarray(want).reshape(-1)]
                kw = {"q": opslib.f(q)}
                if axis is not None:
                    kw["axis"] = {"i": axis} if isinstance(axis, int) else {"ints": list(axis)}
                if keep:
                    kw["keepdim"] = {"b": True}
                out.append(case("quantile", [T(dt, shape, v)], T(rt, list(np.asarray(want).shape), res), kw,
                                note=f"quantile q={q} of {dt} {shape}, axis={axis}, keepdim={keep}"))
        # A rank-1 q (its axis first), in an f32 tensor and an f64 one.
        for qdt in ("f32", "f64"):
            shape = [4, 6]
            v = rand(dt, 24)
            qv = [rnd(qdt, Q(x)) for x in (0.2, 0.5, 0.0, 1.0, 0.75)]
            for axis, keep in ((None, False), (1, False), (0, True)):
                want = np_quantile(shape, v, np.array(qv), axis, keep)
                rt = R.float_result(dt)
                res = [rnd(rt, Q(float(x))) for x in np.asarray(want).reshape(-1)]
                kw = {"q": T(qdt, [len(qv)], qv)}
                if axis is not None:
                    kw["axis"] = {"i": axis}
                if keep:
                    kw["keepdim"] = {"b": True}
                out.append(case("quantile", [T(dt, shape, v)], T(rt, list(want.shape), res), kw,
                                note=f"quantile of {dt} {shape} at a rank-1 {qdt} q, axis={axis}, keepdim={keep}"))
    # Exactly representable quantiles where the weight is exactly 0.5 or an
    # integer index, and rows of equal values.
    for vals, q in (([1.0, 2.0, 3.0, 4.0, 5.0], 0.375), ([2.0, 2.0, 2.0], 0.3), ([-1.5, 7.25], 0.5), ([5.0], 0.0)):
        want = float(np.quantile(np.array(vals), q))
        out.append(case("quantile", [T("f64", [len(vals)], vals)], T("f64", [], [want]), {"q": opslib.f(q)},
                        note=f"quantile {q} of {vals}"))
    # NumPy's interpolation meets infinity as b − a: inf·0 is NaN.
    for q in (0.0, 0.3, 1.0):
        want = float(np_quantile([2], [1.0, INF], q, None, False))
        out.append(case("quantile", [T("f64", [2], [1.0, INF])], T("f64", [], [want]), {"q": opslib.f(q)},
                        note=f"quantile {q} of [1, inf] (NumPy: {want})"))
    # An empty reduction gives NaN (as median; NumPy raises instead).
    out.append(case("quantile", [T("f32", [0, 3], [])], T("f32", [3], [NAN] * 3), {"q": opslib.f(0.5), "axis": {"i": 0}},
                    note="quantile of an empty column is NaN"))
    out.append(case("quantile", [T("f64", [3], [1.0, 2.0, 3.0])], {"error": "q must be in [0, 1]"}, {"q": opslib.f(1.5)},
                    note="q above 1"))
    out.append(case("quantile", [T("f64", [3], [1.0, 2.0, 3.0])], {"error": "q must be in [0, 1]"}, {"q": opslib.f(NAN)},
                    note="q NaN"))
    out.append(case("quantile", [T("f64", [3], [1.0, 2.0, 3.0])], {"error": "q must be in [0, 1]"},
                    {"q": T("f64", [2], [0.5, -0.25])}, note="a q tensor with a negative value"))
    out.append(case("quantile", [T("f64", [3], [1.0, 2.0, 3.0])], {"error": "rank-1 tensor"},
                    {"q": T("f64", [1, 1], [0.5])}, note="a rank-2 q"))
    return out


def main():
    cases = (flatten_cases() + diff_cases() + tri_cases() + diag_cases() + trace_cases() + contraction_cases()
             + close_cases() + nan_cases() + norm_cases() + quantile_cases())
    header = __doc__.split("\n\n")[0] + "\n\n" + "tools/oracle/.venv/bin/python tools/oracle/ops_derived.py (numpy " + np.__version__ + ")"
    opslib.write("derived", cases, header)


if __name__ == "__main__":
    main()
