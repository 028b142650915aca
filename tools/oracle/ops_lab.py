"""Writes testdata/vectors/ops_lab.jsonl: the formats lab's tensor
operations (spec §13) — `round_to`, and `sum`, `cumsum` and `matmul` with
`acc=` (the EVERY_STEP model) — for crates/tensor/tests/ops_oracle.rs.

    tools/oracle/.venv/bin/python tools/oracle/ops_lab.py

The reference shares nothing with the Rust kernels: rounding is
formats.py's exact rational rounding (checked there against ml_dtypes), an
accumulation step is the exact sum or product of two format values
(fractions.Fraction) rounded once by it, and the order is ops_reduce.py's
literal spelling of spec §5.4's blocked tree (`sum`), a sequential fold
(`cumsum`), and ascending k from +0 (`matmul`).

Deterministic: numpy's PCG64 with a fixed seed.
"""
import math
import struct
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import opslib  # noqa: E402
from formats import FORMATS, Ref  # noqa: E402
from ops_reduce import fixed_fold  # noqa: E402
from opslib import case  # noqa: E402

RNG = np.random.Generator(np.random.PCG64(0x74776C6C61623133))
NAN = float("nan")
INF = float("inf")


def fmt_arg(name):
    for n, e, m, bias, sub, special, _ in FORMATS:
        if n == name:
            return {"fmt": [e, m, bias, sub, special]}, Ref(n, e, m, bias, sub, special)
    raise KeyError(name)


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def decode(ref, p):
    """The value of pattern p: a Fraction (with -0 as the float -0.0), or
    nan/inf floats."""
    sign = 1 << (ref.e + ref.m)
    neg = bool(p & sign)
    v = ref.values[p & (sign - 1)]
    if v is None:
        if (p & ((1 << ref.m) - 1)) == 0 and ref.special == "ieee":
            return -INF if neg else INF
        return NAN
    if v == 0:
        return -0.0 if neg else 0.0
    return -v if neg else v


def rnd(ref, v):
    """A real value (Fraction or float) rounded to the format."""
    if isinstance(v, float):
        if math.isnan(v):
            return NAN
        if math.isinf(v):
            return decode(ref, ref.round(v))
        if v == 0:
            return v
        v = Fraction(v)
    if v == 0:
        return 0.0
    return decode(ref, ref.round_exact(v < 0, abs(v)))


def add(ref, a, b):
    if isinstance(a, float) or isinstance(b, float):
        fa, fb = float(a), float(b)
        if math.isnan(fa) or math.isnan(fb) or math.isinf(fa) or math.isinf(fb):
            return rnd(ref, fa + fb)
        # Signed zeros: IEEE's sum of zeros, else the other operand.
        if fa == 0 and fb == 0:
            return fa + fb
        a, b = Fraction(a), Fraction(b)
    return rnd(ref, a + b)


def mul(ref, a, b):
    fa, fb = float(a), float(b)
    if math.isnan(fa) or math.isnan(fb) or math.isinf(fa) or math.isinf(fb) or fa == 0 or fb == 0:
        return rnd(ref, fa * fb)
    return rnd(ref, Fraction(a) * Fraction(b))


def out_tensor(dt, shape, vals):
    return opslib.tensor_from_values(dt, shape, [v if isinstance(v, float) else v for v in vals])


def inputs(dt, n, scale):
    v = RNG.standard_normal(n) * scale
    return [float(np.float32(x)) if dt == "f32" else float(x) for x in v]


def main():
    cases = []
    specials = [0.1, 1.0625, 1.1875, 248.0, 464.0, 465.0, 1e9, -1e9, 9.765625e-4, 9.7656251e-4,
                -1e-4, -0.0, 0.0, 5e-324, 3.0e-8, 6.0e-5, 0.25, 7.0, INF, -INF, NAN]
    for name in ["e4m3fn", "e5m2", "e3m2fn", "e2m3fn", "e2m1fn", "bf16", "f16", "f6e9b31", "f16nosub", "e4m3b11fn"]:
        farg, ref = fmt_arg(name)
        for dt in ["f64", "f32"]:
            vals = [float(np.float32(x)) if dt == "f32" else x for x in specials]
            vals += inputs(dt, 40, 10.0 ** RNG.uniform(-6, 3))
            if ref.special == "none":
                finite = [x for x in vals if math.isfinite(x)]
                cases.append(case("round_to", [out_tensor(dt, [len(finite)], finite), farg],
                                  out_tensor(dt, [len(finite)], [rnd(ref, x) for x in finite]),
                                  note=f"round_to {name}, {dt}"))
                cases.append(case("round_to", [out_tensor(dt, [2], [1.0, NAN]), farg],
                                  {"error": "no encoding"}, note=f"round_to {name}: NaN"))
            else:
                cases.append(case("round_to", [out_tensor(dt, [len(vals)], vals), farg],
                                  out_tensor(dt, [len(vals)], [rnd(ref, x) for x in vals]),
                                  note=f"round_to {name}, {dt}: ties, boundaries, specials"))
    farg, _ = fmt_arg("e4m3fn")
    cases.append(case("round_to", [out_tensor("f16", [1], [1.0]), farg], {"error": "use x.to(f64)"},
                      note="round_to takes f64 or f32"))
    farg64, _ = fmt_arg("bf16")
    cases.append(case("round_to", [opslib.tensor("i32", [1], [1]), farg64], {"error": "use x.to(f64)"},
                      note="round_to of an integer tensor"))

    # EVERY_STEP sums in the blocked order, along axes too.
    for name, dt, n, scale in [("bf16", "f64", 1000, 1.0), ("bf16", "f32", 40, 1.0), ("e4m3fn", "f64", 300, 3.0),
                               ("e5m2", "f64", 20000, 100.0), ("e2m1fn", "f64", 50, 1.0), ("f16", "f32", 3000, 10.0),
                               ("f6e9b31", "f64", 500, 1e-3), ("e5m2", "f64", 64, 30000.0)]:
        farg, ref = fmt_arg(name)
        vals = inputs(dt, n, scale)
        want = fixed_fold([rnd(ref, x) for x in vals], lambda a, b: add(ref, a, b), 0.0)
        cases.append(case("sum", [out_tensor(dt, [n], vals)], out_tensor(dt, [], [float(want) if not isinstance(want, float) else want]),
                          kwargs={"acc": farg}, note=f"sum acc={name} of {n} {dt}"))
        seq = []
        acc = None
        for x in vals[:200]:
            r = rnd(ref, x)
            acc = r if acc is None else add(ref, acc, r)
            seq.append(acc)
        cases.append(case("cumsum", [out_tensor(dt, [len(seq)], vals[:200]), {"i": 0}], out_tensor(dt, [len(seq)], seq),
                          kwargs={"acc": farg}, note=f"cumsum acc={name}, sequential"))
    farg, ref = fmt_arg("bf16")
    vals = inputs("f64", 6 * 40, 1.0)
    rows = [vals[i * 40:(i + 1) * 40] for i in range(6)]
    want1 = [fixed_fold([rnd(ref, x) for x in r], lambda a, b: add(ref, a, b), 0.0) for r in rows]
    cases.append(case("sum", [out_tensor("f64", [6, 40], vals)], out_tensor("f64", [6], [float(w) for w in want1]),
                      kwargs={"acc": farg, "axis": {"i": 1}}, note="sum acc=bf16 along axis 1"))
    cols = [[rows[i][j] for i in range(6)] for j in range(40)]
    want0 = [fixed_fold([rnd(ref, x) for x in c], lambda a, b: add(ref, a, b), 0.0) for c in cols]
    cases.append(case("sum", [out_tensor("f64", [6, 40], vals)], out_tensor("f64", [1, 40], [float(w) for w in want0]),
                      kwargs={"acc": farg, "axis": {"i": 0}, "keepdim": {"b": True}}, note="sum acc=bf16 along axis 0"))

    # EVERY_STEP matmul: every product and every step rounded.
    for name, dt, (m, k, n) in [("bf16", "f64", (3, 20, 4)), ("e4m3fn", "f32", (2, 7, 3)), ("e5m2", "f64", (4, 33, 2))]:
        farg, ref = fmt_arg(name)
        a = inputs(dt, m * k, 2.0)
        b = inputs(dt, k * n, 2.0)
        ra, rb = [rnd(ref, x) for x in a], [rnd(ref, x) for x in b]
        out = []
        for i in range(m):
            for j in range(n):
                acc = 0.0
                for p in range(k):
                    acc = add(ref, acc, mul(ref, ra[i * k + p], rb[p * n + j]))
                out.append(float(acc) if not isinstance(acc, float) else acc)
        cases.append(case("matmul", [out_tensor(dt, [m, k], a), out_tensor(dt, [k, n], b)], out_tensor(dt, [m, n], out),
                          kwargs={"acc": farg}, note=f"matmul acc={name} {m}x{k}x{n} {dt}"))
    farg, _ = fmt_arg("bf16")
    cases.append(case("matmul", [out_tensor("f64", [2, 2, 2], [1.0] * 8), out_tensor("f64", [2, 2], [1.0] * 4)],
                      {"error": "rank 1 or 2"}, kwargs={"acc": farg}, note="matmul acc= is for rank 1 and 2"))
    opslib.write("lab", cases, __doc__.split("\n\n")[0])


if __name__ == "__main__":
    main()
