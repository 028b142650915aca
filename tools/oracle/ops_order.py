"""Writes testdata/vectors/ops_order.jsonl: the ordering operations of spec
§4.1 (sort argsort topk argtopk), for crates/tensor/tests/ops_oracle.rs.

    tools/oracle/.venv/bin/python tools/oracle/ops_order.py

The reference is Python's own `sorted`, which is stable, over the exact
values of the elements (opslib.value_of_bits: ints, Fractions, and the
floats nan/inf/-inf/-0.0), with the order PyTorch defines and spec §5
(extension 5) makes normative, implemented here as sort keys:

* ascending: every number by value, -0 equal to +0 (so the two keep their
  input order), NaN after +inf;
* descending: NaN first, then numbers from the largest down; ties (equal
  values, -0 and +0, NaNs among themselves) keep the lower index first,
  which is what "stable, also when descending" means;
* topk / argtopk: the first k of the descending order (NaN is the largest
  value).

Results are the input's bit patterns permuted, so they are exact; -0 and
+0 are told apart by the harness, which makes the tie rule observable. The
generator also asserts that NumPy's stable argsort agrees on every
NaN-free ascending case (a second opinion, not the reference). Lanes of
more than 1024 elements exercise twill's radix path; shorter ones its
comparison sort; small k on long lanes its selection path.

Deterministic: numpy's PCG64 with a fixed seed.
"""
import sys
from fractions import Fraction as Q
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import opslib  # noqa: E402
from opslib import case, tensor  # noqa: E402

FLOATS = ("bf16", "f16", "f32", "f64")
INTS = ("bool", "i8", "i32")
ALL = INTS + FLOATS
RNG = np.random.Generator(np.random.PCG64(0x7477696C6C5F6F72))  # "twill_or"

# Special bit patterns per float dtype: NaNs of both signs and with a
# payload (a signalling one too), infinities, zeros, the smallest
# subnormal, the largest finite value.
SPECIALS = {
    "bf16": [0x7FC0, 0xFFC0, 0x7FC1, 0x7F81, 0x7F80, 0xFF80, 0x0000, 0x8000, 0x0001, 0x8001, 0x7F7F, 0xFF7F],
    "f16": [0x7E00, 0xFE00, 0x7E01, 0x7C01, 0x7C00, 0xFC00, 0x0000, 0x8000, 0x0001, 0x8001, 0x7BFF, 0xFBFF],
    "f32": [
        0x7FC00000, 0xFFC00000, 0x7FC00001, 0x7F800001, 0x7F800000, 0xFF800000,
        0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x7F7FFFFF, 0xFF7FFFFF,
    ],
    "f64": [
        0x7FF8000000000000, 0xFFF8000000000000, 0x7FF8000000000001, 0x7FF0000000000001,
        0x7FF0000000000000, 0xFFF0000000000000, 0x0000000000000000, 0x8000000000000000,
        0x0000000000000001, 0x8000000000000001, 0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF,
    ],
}
ZERO_BITS = {"bf16": (0x0000, 0x8000), "f16": (0x0000, 0x8000), "f32": (0, 0x80000000), "f64": (0, 1 << 63)}


def is_nan(v):
    return isinstance(v, float) and v != v


def asc_key(v):
    """PyTorch's ascending order: numbers by value (-0 == +0), NaN last."""
    return (1, 0) if is_nan(v) else (0, v)


def desc_key(v):
    """PyTorch's descending order: NaN first, then larger values first."""
    return (0, 0) if is_nan(v) else (1, -v)


def random_bits(dt, n, specials=True, ties=True):
    """n storage bit patterns of dtype dt: a mix of random values, small
    repeated values (ties), and (for floats) the special patterns."""
    out = []
    for _ in range(n):
        r = RNG.random()
        if dt == "bool":
            out.append(int(RNG.integers(0, 2)))
        elif dt in ("i8", "i32"):
            w = opslib.casts.INT_WIDTH[dt]
            if ties and r < 0.4:
                v = int(RNG.integers(-3, 4))
            elif r < 0.45:
                v = int(RNG.choice([-(2 ** (w - 1)), 2 ** (w - 1) - 1, 0, -1]))
            else:
                v = int(RNG.integers(-(2 ** (w - 1)), 2 ** (w - 1)))
            out.append(v % 2**w)
        else:
            if specials and r < 0.12:
                out.append(int(RNG.choice(SPECIALS[dt])))
            elif ties and r < 0.4:
                v = Q(int(RNG.integers(-6, 7)), 2)
                out.append(opslib.bits_of_value(v, dt))
            elif specials and r < 0.45:
                out.append(ZERO_BITS[dt][int(RNG.integers(0, 2))])
            else:
                x = float(RNG.standard_normal() * 10.0 ** int(RNG.integers(-3, 4)))
                out.append(opslib.bits_of_value(x, dt))
    return out


def lanes(dt, shape, bits, axis, fn):
    """Applies fn to every lane along `axis` of the tensor (shape, bits):
    fn(values, bits_row) -> (out_bits_row, out_index_row). Returns the
    output shape, the output bits and the output indices, row-major."""
    if len(shape) == 0:
        shape, axis, scalar = [1], 0, True
    else:
        scalar = False
    arr = np.array(bits, dtype=object).reshape(shape)
    ax = axis % len(shape)
    moved = np.moveaxis(arr, ax, -1)
    n = shape[ax]
    count = int(np.prod(moved.shape[:-1], dtype=np.int64))
    rows = moved.reshape(count, n)
    out_b, out_i = [], []
    m = len(fn([Q(0)] * n, [0] * n)[0])
    for row in rows:
        row = [int(b) for b in row]
        vals = [opslib.value_of_bits(b, dt) for b in row]
        ob, oi = fn(vals, row)
        out_b.append(ob)
        out_i.append(oi)
    out_shape_moved = list(moved.shape[:-1]) + [m]
    ob = np.array(out_b, dtype=object).reshape(out_shape_moved)
    oi = np.array(out_i, dtype=object).reshape(out_shape_moved)
    ob = np.moveaxis(ob, -1, ax)
    oi = np.moveaxis(oi, -1, ax)
    out_shape = list(ob.shape)
    if scalar:
        out_shape = [] if m == 1 else [m]
    return out_shape, [int(b) for b in ob.reshape(-1)], [int(i) for i in oi.reshape(-1)]


def sort_fn(descending):
    def fn(vals, row):
        key = desc_key if descending else asc_key
        order = sorted(range(len(vals)), key=lambda i: key(vals[i]))
        return [row[i] for i in order], order

    return fn


def topk_fn(k):
    def fn(vals, row):
        order = sorted(range(len(vals)), key=lambda i: desc_key(vals[i]))[:k]
        return [row[i] for i in order], order

    return fn


def axis_kwargs(axis, positional):
    return {} if axis is None or positional else {"axis": {"i": axis}}


def sort_cases(out, dt, shape, bits, axis=None, descending=False, positional=False, note=""):
    """sort and argsort of one tensor, with `axis` (None = default -1)
    passed by keyword or positionally and `descending` by keyword."""
    ax = -1 if axis is None else axis
    oshape, obits, oidx = lanes(dt, shape, bits, ax, sort_fn(descending))
    x = tensor(dt, shape, bits)
    args = [x] + ([{"i": axis}] if positional and axis is not None else [])
    kwargs = axis_kwargs(axis, positional)
    if descending:
        kwargs = dict(kwargs, descending={"b": True})
    order = "descending (NaN first, ties by lower index)" if descending else "ascending (NaN last, -0 == +0 stable)"
    out.append(case("sort", args, tensor(dt, oshape, obits), kwargs, note=f"{note}; {order}"))
    out.append(case("argsort", args, tensor("i32", oshape, [i % 2**32 for i in oidx]), kwargs, note=f"{note}; {order}; i32"))
    if not descending and dt != "bool":
        vals = [opslib.value_of_bits(b, dt) for b in bits]
        if not any(is_nan(v) for v in vals) and len(shape) >= 1:
            arr = np.array([float(v) for v in vals], dtype=np.float64).reshape(shape)
            want = np.argsort(arr, axis=ax, kind="stable").reshape(-1).tolist()
            assert want == oidx, ("numpy disagrees", dt, shape, note)


def topk_cases(out, dt, shape, bits, k, axis=None, note="", k_tensor=False):
    ax = -1 if axis is None else axis
    oshape, obits, oidx = lanes(dt, shape, bits, ax, topk_fn(k))
    x = tensor(dt, shape, bits)
    karg = opslib.tensor_from_values("i32", [], [k]) if k_tensor else {"i": k}
    kwargs = axis_kwargs(axis, False)
    rule = "largest first, NaN largest, ties by lower index"
    out.append(case("topk", [x, karg], tensor(dt, oshape, obits), kwargs, note=f"{note}; {rule}"))
    out.append(case("argtopk", [x, karg], tensor("i32", oshape, [i % 2**32 for i in oidx]), kwargs, note=f"{note}; {rule}; i32"))


def smallest_fn(k):
    def fn(vals, row):
        order = sorted(range(len(vals)), key=lambda i: asc_key(vals[i]))[:k]
        return [row[i] for i in order], order

    return fn


def smallest_cases(out, dt, shape, bits, k, axis=None, note=""):
    """topk(largest=false): the first k of the ascending order (NaN last)."""
    ax = -1 if axis is None else axis
    oshape, obits, oidx = lanes(dt, shape, bits, ax, smallest_fn(k))
    x = tensor(dt, shape, bits)
    kwargs = dict(axis_kwargs(axis, False), largest={"b": False})
    rule = "smallest first, NaN largest, ties by lower index"
    out.append(case("topk", [x, {"i": k}], tensor(dt, oshape, obits), kwargs, note=f"{note}; {rule}"))
    out.append(case("argtopk", [x, {"i": k}], tensor("i32", oshape, [i % 2**32 for i in oidx]),
                    dict(kwargs, sorted={"b": False}), note=f"{note}; {rule}; sorted=false gives the same order; i32"))


def as_float(v):
    return v if isinstance(v, float) else float(v)


def selection_cases(out):
    """unique, unique_counts, searchsorted, bincount, nonzero, and topk's
    largest=false, from exact values; NumPy is asked too where it defines
    the same result (np.unique, np.searchsorted, np.bincount, np.argwhere)."""
    for dt in ALL:
        bits = random_bits(dt, 40)
        if dt in FLOATS:
            bits = list(SPECIALS[dt]) + bits
        n = len(bits)
        smallest_cases(out, dt, [n], bits, 6, note=f"{dt} 1-D k=6")
        b2 = random_bits(dt, 4 * 9)
        smallest_cases(out, dt, [4, 9], b2, 3, axis=0, note=f"{dt} [4, 9] axis 0 k=3")
        big = random_bits(dt, 1500)
        smallest_cases(out, dt, [1500], big, 7, note=f"{dt} long lane small k (selection path)")
        smallest_cases(out, dt, [1500], big, 900, note=f"{dt} long lane large k (radix path)")
        # unique and unique_counts of a [5, 8] tensor (flattened).
        ub = random_bits(dt, 40)
        vals = [opslib.value_of_bits(b, dt) for b in ub]
        order = sorted(range(len(vals)), key=lambda i: asc_key(vals[i]))
        groups = []
        for i in order:
            if groups and asc_key(vals[groups[-1][0]]) == asc_key(vals[i]):
                groups[-1].append(i)
            else:
                groups.append([i])
        ubits = [ub[g[0]] for g in groups]
        counts = [len(g) for g in groups]
        plain = [as_float(v) for v in vals if not is_nan(v)]
        want = sorted(set(plain))
        got = [as_float(opslib.value_of_bits(b, dt)) for b in ubits if not is_nan(opslib.value_of_bits(b, dt))]
        assert got == list(np.unique(np.array(plain, dtype=np.float64))) == want, ("unique", dt)
        x = tensor(dt, [5, 8], ub)
        note = f"{dt} [5, 8]: sorted, flattened, NaNs one and last, of -0/+0 the first met"
        out.append(case("unique", [x], tensor(dt, [len(ubits)], ubits), note=note))
        out.append(case("unique_counts", [x], {"ts": [tensor(dt, [len(ubits)], ubits), tensor("i32", [len(counts)], counts)]},
                        note=note + "; counts i32"))
        # searchsorted into a sorted lane (ties and NaNs at the end).
        sb = [ub[i] for i in order]
        sv = [vals[i] for i in order]
        qb = random_bits(dt, 12)
        qv = [opslib.value_of_bits(b, dt) for b in qb]
        for side in ("left", "right"):
            if side == "left":
                res = [sum(1 for e in sv if asc_key(e) < asc_key(q)) for q in qv]
            else:
                res = [sum(1 for e in sv if asc_key(e) <= asc_key(q)) for q in qv]
            if not any(is_nan(v) for v in sv + qv):
                np_res = np.searchsorted(np.array([as_float(v) for v in sv]), np.array([as_float(v) for v in qv]), side=side)
                assert list(np_res) == res, ("searchsorted", dt, side)
            kw = {} if side == "left" else {"side": {"s": "right"}}
            out.append(case("searchsorted", [tensor(dt, [len(sb)], sb), tensor(dt, [3, 4], qb)],
                            tensor("i32", [3, 4], [r % 2**32 for r in res]), kw,
                            note=f"{dt} searchsorted side={side} (NaN last)"))
        # nonzero of a [3, 4, 2] tensor, rank 0 and empty.
        nb = random_bits(dt, 24)
        nv = [opslib.value_of_bits(b, dt) for b in nb]
        nzs = [i for i, v in enumerate(nv) if is_nan(v) or v != 0]
        rows = [[i // 8, (i // 2) % 4, i % 2] for i in nzs]
        assert rows == np.argwhere(np.array([as_float(v) for v in nv]).reshape(3, 4, 2)).tolist()
        out.append(case("nonzero", [tensor(dt, [3, 4, 2], nb)], tensor("i32", [len(rows), 3], [c for r in rows for c in r]),
                        note=f"{dt} nonzero [3, 4, 2] (NaN is nonzero)"))
    out.append(case("nonzero", [tensor("f32", [], [0x3F800000])], tensor("i32", [1, 0], []), note="nonzero of rank 0: [1, 0]"))
    out.append(case("nonzero", [tensor("i32", [0, 3], [])], tensor("i32", [0, 2], []), note="nonzero of an empty tensor"))
    for dt in ("i8", "i32", "bool"):
        vals = [int(v) for v in RNG.integers(0, 2 if dt == "bool" else 9, 30)]
        bits = [v for v in vals]
        for minlength in (0, 4, 20):
            want = np.bincount(np.array(vals), minlength=minlength).tolist()
            kw = {"minlength": {"i": minlength}} if minlength else {}
            out.append(case("bincount", [tensor(dt, [30], bits)], tensor("i32", [len(want)], want), kw,
                            note=f"bincount of {dt}, minlength={minlength} (NumPy)"))
    out.append(case("bincount", [tensor("i32", [0], [])], tensor("i32", [0], []), note="bincount of nothing"))
    out.append(case("bincount", [tensor("i32", [2], [3, 2**32 - 1])], {"error": "non-negative"}, note="bincount of a negative"))
    out.append(case("bincount", [tensor("f32", [1], [0x3F800000])], {"error": "integer tensor"}, note="bincount of floats"))
    out.append(case("searchsorted", [tensor("f32", [2, 2], [0] * 4), tensor("f32", [1], [0])], {"error": "rank-1"},
                    note="searchsorted into a matrix"))
    out.append(case("searchsorted", [tensor("f32", [2], [0, 0]), tensor("f32", [1], [0])], {"error": "must be"},
                    {"side": {"s": "middle"}}, note="searchsorted with an unknown side"))


def error_cases(out):
    x = tensor("f32", [2, 3], random_bits("f32", 6))
    for op in ("sort", "argsort"):
        out.append(case(op, [x], {"error": "axis 2 is out of range"}, {"axis": {"i": 2}}, note="axis out of range"))
        out.append(case(op, [x, {"i": -3}], {"error": "axis -3 is out of range"}, note="negative axis out of range"))
        out.append(case(op, [x], {"error": "must be a Bool"}, {"descending": {"i": 1}}, note="descending must be a Bool"))
        out.append(case(op, [x], {"error": "has no argument `k`"}, {"k": {"i": 1}}, note="unknown keyword"))
        out.append(case(op, [{"ints": [3, 1, 2]}], {"error": "must be a tensor"}, note="an Arr[Int] is not a tensor"))
    for op in ("topk", "argtopk"):
        out.append(case(op, [x, {"i": 4}], {"error": "k = 4 is out of range for an axis of length 3"}, note="k > axis length"))
        out.append(case(op, [x, {"i": 3}], {"error": "k = 3 is out of range for an axis of length 2"}, {"axis": {"i": 0}}, note="k > length of axis 0"))
        out.append(case(op, [x, {"i": -1}], {"error": "k = -1 is out of range"}, note="negative k"))
        out.append(case(op, [x], {"error": "needs its `k` argument"}, note="k is required"))
        out.append(case(op, [x, {"i": 1}], {"error": "axis 5 is out of range"}, {"axis": {"i": 5}}, note="axis out of range"))
        out.append(case(op, [x, opslib.f(1.5)], {"error": "must be an Int"}, note="k must be an Int"))
        out.append(case(op, [x, opslib.tensor_from_values("f64", [], [1.5])], {"error": "must be an integer"}, note="k tensor must be integral"))


def main():
    out = []
    for dt in ALL:
        # Small 1-D lanes: specials, ties, both directions, both forms of axis.
        bits = random_bits(dt, 17)
        if dt in FLOATS:
            bits = list(SPECIALS[dt]) + bits  # every special at least once
        n = len(bits)
        sort_cases(out, dt, [n], bits, note=f"{dt} 1-D with specials and ties")
        sort_cases(out, dt, [n], bits, descending=True, note=f"{dt} 1-D with specials and ties")
        sort_cases(out, dt, [n], bits, axis=0, positional=True, note=f"{dt} 1-D, axis given positionally")
        # 2-D and 3-D along each axis.
        b2 = random_bits(dt, 4 * 9)
        for axis in (-1, 0, 1):
            sort_cases(out, dt, [4, 9], b2, axis=axis, note=f"{dt} [4, 9] axis {axis}")
        sort_cases(out, dt, [4, 9], b2, axis=0, descending=True, note=f"{dt} [4, 9] axis 0")
        b3 = random_bits(dt, 2 * 5 * 3)
        sort_cases(out, dt, [2, 5, 3], b3, axis=1, note=f"{dt} [2, 5, 3] middle axis")
        sort_cases(out, dt, [2, 5, 3], b3, axis=-2, descending=True, note=f"{dt} [2, 5, 3] middle axis")
        # A long lane: the radix path (more than 1024 elements).
        big = random_bits(dt, 1500)
        sort_cases(out, dt, [1500], big, note=f"{dt} long lane (radix path)")
        sort_cases(out, dt, [1500], big, descending=True, note=f"{dt} long lane (radix path)")
        # Empty and rank 0.
        sort_cases(out, dt, [0], [], note=f"{dt} empty")
        sort_cases(out, dt, [3, 0], [], axis=0, note=f"{dt} [3, 0] along the non-empty axis")
        one = random_bits(dt, 1)
        sort_cases(out, dt, [], one, note=f"{dt} rank 0 is one lane of one element")
        # topk / argtopk.
        topk_cases(out, dt, [n], bits, 5, note=f"{dt} 1-D k=5")
        topk_cases(out, dt, [n], bits, n, note=f"{dt} 1-D k=n")
        topk_cases(out, dt, [n], bits, 0, note=f"{dt} 1-D k=0")
        topk_cases(out, dt, [4, 9], b2, 2, axis=0, note=f"{dt} [4, 9] axis 0 k=2")
        topk_cases(out, dt, [2, 5, 3], b3, 3, axis=1, note=f"{dt} [2, 5, 3] middle axis k=3")
        topk_cases(out, dt, [1500], big, 7, note=f"{dt} long lane small k (selection path)")
        topk_cases(out, dt, [1500], big, 900, note=f"{dt} long lane large k (radix path)")
        topk_cases(out, dt, [], one, 1, note=f"{dt} rank 0 k=1")
    # Several long lanes along a leading axis, and a k given as a tensor.
    many = random_bits("f32", 1200 * 3)
    sort_cases(out, "f32", [1200, 3], many, axis=0, note="f32 [1200, 3] long lanes along axis 0")
    sort_cases(out, "f32", [1200, 3], many, axis=0, descending=True, note="f32 [1200, 3] long lanes along axis 0")
    topk_cases(out, "f32", [1200, 3], many, 4, axis=0, note="f32 long lanes along axis 0, k=4")
    b = random_bits("f64", 10)
    topk_cases(out, "f64", [10], b, 3, k_tensor=True, note="k as a rank-0 integral tensor")
    # Only NaNs and zeros: every key shared, order decided by index alone.
    nz = [0x7FC00000, 0x80000000, 0xFFC00000, 0x00000000, 0x7FC00001, 0x80000000, 0x00000000]
    sort_cases(out, "f32", [7], nz, note="f32 only NaNs and zeros")
    sort_cases(out, "f32", [7], nz, descending=True, note="f32 only NaNs and zeros")
    topk_cases(out, "f32", [7], nz, 4, note="f32 only NaNs and zeros")
    nz_long = [nz[i % 7] for i in range(2100)]
    sort_cases(out, "f32", [2100], nz_long, note="f32 long lane of NaNs and zeros (radix path)")
    sort_cases(out, "f32", [2100], nz_long, descending=True, note="f32 long lane of NaNs and zeros (radix path)")
    error_cases(out)
    selection_cases(out)
    opslib.write(
        "order",
        out,
        """Ordering operations (sort argsort topk argtopk unique unique_counts
searchsorted bincount nonzero), generated by tools/oracle/ops_order.py from
Python's stable sorted() over exact values with PyTorch's NaN order (spec
§5.5), NumPy asked too where it agrees; do not edit by hand.""",
    )


if __name__ == "__main__":
    main()
