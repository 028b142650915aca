"""Writes testdata/vectors/indexing.jsonl: NumPy indexing (spec §11.1) and
assignment into tensors (§11.2) over random subscripts, for
crates/tensor/tests/indexing.rs.

    tools/oracle/.venv/bin/python tools/oracle/indexing.py

Each line is one case:

    {"shape": [2, 3], "dtype": "f64", "sub": [ITEM, ...], "op": OP,
     "value": {"shape": [...], "data": [...]} or {"scalar": 2},
     "expect": {"shape": [...], "data": [...]} or {"error": true}}

x is arange(prod(shape)) reshaped, in "dtype" (its values are exact in
every dtype used), so a wrong element shows. ITEM is {"int": i},
{"slice": [start, stop, step]} (null for absent), "none", "ellipsis",
{"idx": {"shape", "data"}} (an integer index tensor) or {"mask": {"shape",
"data"}} (a bool mask). OP is "get" (expect x[sub]); "set" (x[sub] = v,
NumPy's assignment: with a repeated element the last write wins); "add"
and "sub" (every occurrence of a repeated element added in index order,
np.add.at / np.subtract.at, accumulated in f32 for bf16 and rounded once
into bf16 at the end, as the spec says); "mul" (x[sub] *= v, only without
repeats). "expect" is the whole x after a write. An error case is one
NumPy refuses (out-of-range index, mask mismatch, too many indices, two
ellipses, shapes that do not broadcast).

Deterministic: numpy's PCG64 with a fixed seed.
"""
import json
from pathlib import Path

import ml_dtypes
import numpy as np

OUT = Path(__file__).resolve().parents[2] / "testdata" / "vectors" / "indexing.jsonl"
RNG = np.random.Generator(np.random.PCG64(0x74776C6C5F6978))  # "twll_ix"
BF16 = ml_dtypes.bfloat16


def tensor(a):
    a = np.asarray(a)
    if a.dtype == np.bool_:
        data = [bool(v) for v in a.reshape(-1)]
    elif a.dtype.kind in "iu":
        data = [int(v) for v in a.reshape(-1)]
    else:
        data = [float(v) for v in a.reshape(-1).astype(np.float64)]
    return {"shape": list(a.shape), "data": data}


def rand_item(shape, axis, budget):
    """One random item at input axis `axis`; returns (json, numpy item,
    axes consumed)."""
    kinds = ["int", "slice", "slice", "none", "idx", "idx", "mask"]
    if axis >= len(shape):
        kinds = ["none", "int", "slice", "idx"]  # may overflow: an error case
    k = kinds[RNG.integers(len(kinds))]
    n = shape[axis] if axis < len(shape) else 3
    if k == "int":
        i = int(RNG.integers(-n - 1, n + 1)) if n > 0 else int(RNG.integers(-1, 2))
        return {"int": i}, i, 1
    if k == "slice":
        def bound():
            return None if RNG.random() < 0.35 else int(RNG.integers(-n - 2, n + 3))
        step = None if RNG.random() < 0.4 else int(RNG.choice([-3, -2, -1, 1, 2, 3]))
        a, b = bound(), bound()
        return {"slice": [a, b, step]}, slice(a, b, step), 1
    if k == "none":
        return "none", None, 0
    if k == "idx":
        rank = int(RNG.choice([0, 1, 1, 1, 2]))
        ishape = tuple(int(RNG.integers(0, 4)) for _ in range(rank))
        lo, hi = (-n, n) if n > 0 else (0, 1)
        if RNG.random() < 0.08:
            lo, hi = -n - 2, n + 2  # sometimes out of range
        idx = RNG.integers(lo, max(hi, lo + 1), size=ishape)
        return {"idx": tensor(idx)}, idx, 1
    # A mask over one or two axes, usually of the right shape.
    k_axes = 1 if axis + 1 >= len(shape) or RNG.random() < 0.6 else 2
    mshape = list(shape[axis:axis + k_axes])
    if RNG.random() < 0.08 and mshape:
        mshape[0] += 1  # a mismatch: an error case
    m = RNG.random(mshape) < 0.5
    return {"mask": tensor(m)}, m, k_axes


def rand_sub(shape):
    items, nitems = [], []
    axis = 0
    ellipsis = False
    count = int(RNG.integers(1, len(shape) + 2))
    for _ in range(count):
        if RNG.random() < 0.12 and (not ellipsis or RNG.random() < 0.1):
            ellipsis = True
            items.append("ellipsis")
            nitems.append(Ellipsis)
            continue
        j, it, used = rand_item(shape, axis, count)
        items.append(j)
        nitems.append(it)
        axis += used
    return items, tuple(nitems)


def value_for(sel_shape, dtype):
    r = RNG.random()
    if r < 0.2:
        return {"scalar": int(RNG.integers(-9, 10))}, int(0)
    shape = list(sel_shape)
    if r < 0.5 and shape:
        # A suffix, with some axes of size 1.
        shape = shape[int(RNG.integers(0, len(shape) + 1)):]
        shape = [1 if RNG.random() < 0.3 else d for d in shape]
    elif r < 0.6 and shape:
        # Extra leading size-1 axes (NumPy 2 takes them, except for a
        # single element, where twill follows PyTorch and takes them too).
        shape = [1] + shape
    v = RNG.integers(-9, 10, size=shape).astype(np.float64)
    return {"shape": shape, "data": [float(a) for a in v.reshape(-1)]}, v


def np_dtype(name):
    return {"f64": np.float64, "f32": np.float32, "bf16": BF16, "i32": np.int32}[name]


def case(shape, dtype, op):
    items, sub = rand_sub(shape)
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    if dtype == "bf16":
        x = np.asarray(x % 128)  # exact in bf16
    x = np.asarray(x.astype(np_dtype(dtype)))
    out = {"shape": list(shape), "dtype": dtype, "x": tensor(x.astype(np.float64)), "sub": items, "op": op}
    try:
        sel = x[sub]
    except (IndexError, ValueError):
        out["expect"] = {"error": True}
        if op != "get":
            out["value"] = {"scalar": 1}
        return out
    if op == "get":
        out["expect"] = tensor(np.asarray(sel).astype(np.float64))
        return out
    vj, v = value_for(np.shape(sel), dtype)
    if "scalar" in vj:
        v = vj["scalar"]
    out["value"] = vj
    y = x.copy()
    # Where each selected element lives (NumPy's indexing of the positions),
    # and the value broadcast to the selection as NumPy broadcasts it.
    pos = np.asarray(np.arange(x.size).reshape(shape)[sub]).reshape(-1)
    va = np.asarray(v).astype(y.dtype)
    while va.ndim > np.ndim(sel) and va.shape[0] == 1:
        va = va[0]  # NumPy's assignment drops extra leading size-1 axes
    try:
        vb = np.broadcast_to(va, np.shape(sel)).reshape(-1)
    except ValueError:
        out["expect"] = {"error": True}
        return out
    if op == "set":
        try:
            y[sub] = np.asarray(v).astype(y.dtype)
        except ValueError:
            out["expect"] = {"error": True}
            return out
        # NumPy's own assignment agrees with "in order, the last write wins".
        z = x.copy().reshape(-1)
        for p, a in zip(pos, vb):
            z[p] = a
        assert np.array_equal(z.reshape(shape), y), (shape, items)
    elif op in ("add", "sub") and np.ndim(v) > np.ndim(sel):
        # NumPy's `x[s] += v` refuses a value of higher rank, as for `*=`.
        out["expect"] = {"error": True}
        return out
    elif op in ("add", "sub"):
        # The spec's rule: every occurrence in index order, accumulated in
        # f32 for bf16 and rounded once at the end (np.add.at's order).
        acc = y.astype(np.float32) if dtype == "bf16" else y.copy()
        vv = np.broadcast_to(va.astype(acc.dtype), np.shape(sel))
        (np.add if op == "add" else np.subtract).at(acc, sub, vv)
        y = acc.astype(y.dtype)
    elif op == "mul":
        if len(np.unique(pos)) != len(pos):
            out["expect"] = {"error": True}
            return out
        try:
            y[sub] *= np.asarray(v).astype(y.dtype)
        except ValueError:  # a value of higher rank than the selection
            out["expect"] = {"error": True}
            return out
    out["expect"] = tensor(y.astype(np.float64))
    return out


def bf16_accumulation_cases():
    """Repeated `+=`/`-=` on bf16 where accumulating in f32 and rounding
    once differs from rounding every step: 256 + 1 + 1 + 1 is 259 in f32,
    260 in bf16 once rounded, but 256 if each step were rounded to bf16."""
    out = []
    for xv, idx, vv, op in [
        ([256.0, 256.0, 512.0, 1.0], [0, 0, 0, 1, 2, 2], 1.0, "add"),
        ([256.0, 3.0, 512.0, 1.0], [2, 2, 2, 2, 0], 1.0, "sub"),
        ([1.0, 2.0, 3.0, 4.0], [3, 3, 3], 0.00390625, "add"),
    ]:
        x = np.asarray(xv, dtype=BF16)
        acc = x.astype(np.float32)
        (np.add if op == "add" else np.subtract).at(acc, (np.asarray(idx),), np.float32(vv))
        y = acc.astype(BF16)
        out.append({
            "shape": [4], "dtype": "bf16", "x": tensor(x.astype(np.float64)),
            "sub": [{"idx": tensor(np.asarray(idx))}], "op": op,
            "value": {"shape": [], "data": [vv]}, "expect": tensor(y.astype(np.float64)),
        })
    return out


def main():
    cases = bf16_accumulation_cases()
    for _ in range(2500):
        ndim = int(RNG.choice([0, 1, 1, 2, 2, 3, 3, 4]))
        shape = [int(RNG.choice([0, 1, 2, 3, 4, 5], p=[0.04, 0.16, 0.2, 0.25, 0.2, 0.15])) for _ in range(ndim)]
        op = str(RNG.choice(["get", "get", "get", "set", "set", "add", "sub", "mul"]))
        dtype = "f64" if op == "get" else str(RNG.choice(["f64", "f64", "f32", "bf16", "i32"]))
        if dtype == "i32" and op == "sub":
            op = "add"
        cases.append(case(shape, dtype, op))
    with OUT.open("w") as f:
        f.write("# NumPy indexing and assignment (numpy 2.4.6, ml_dtypes 0.6.0) for\n")
        f.write("# crates/tensor/tests/indexing.rs. Generated by tools/oracle/indexing.py; do not edit.\n")
        for c in cases:
            f.write(json.dumps(c, separators=(",", ":")) + "\n")
    kinds = {}
    for c in cases:
        key = c["op"] + (" error" if "error" in c["expect"] else "")
        kinds[key] = kinds.get(key, 0) + 1
    print(f"wrote {len(cases)} cases to {OUT}: {kinds}")


if __name__ == "__main__":
    main()
