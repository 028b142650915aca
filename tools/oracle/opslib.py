"""Shared helpers for the tensor-operation oracles (tools/oracle/ops_*.py).

Each generator writes JSON lines to testdata/vectors/ops_<group>.jsonl, one
case per line, read by crates/tensor/tests/ops_oracle.rs:

    {"op": "sum", "args": [ARG, ...], "kwargs": {"axis": ARG}, "expect": ARG,
     "ulp": 0, "note": "why this case exists"}

"op" is a table operation (ops::call) or one of the language's binary
operators by symbol: + - * / // % ** == != < <= > >= & | ^ << >>, which run
ops::binary on the two "args" (each a tensor or a host scalar i/f/b).

ARG is one of
    {"t": "f32", "shape": [2, 3], "bits": ["3f800000", ...]}   a tensor (hex storage bits, row-major)
    {"i": 5}  {"f": "3ff0000000000000"}  {"b": true}  {"d": "bf16"}
    {"ints": [1, 2]}  {"ts": [TENSOR, ...]}                      Arr[Int], Arr[Tensor]
    {"s": "ij,jk->ik"}                                          a Str
"expect" is a tensor, {"ts": [...]} for operations returning several, or
{"error": "substring of the message"}. "ulp" is the allowed distance in
units in the last place of the result dtype (0 = bit-exact); NaN matches
any NaN.

Reference values are computed exactly (fractions.Fraction) or in f64 by
NumPy, then rounded ONCE into the result dtype with the exact
round-to-nearest-even of casts.py — never by the code under test.
"""
import json
import struct
import sys
from fractions import Fraction as Q
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import casts  # noqa: E402  (exact rounding and decoding, shared)

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "testdata" / "vectors"
DTYPES = casts.DTYPES
HEX = casts.HEX_DIGITS


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def bits_of_value(v, dtype):
    """Storage bits of a value in `dtype`, rounding once. `v` is a Fraction
    or int (exact), a float (an f64, exact), or "nan"/"inf"/"-inf";
    for integer dtypes it must be an integer in range (wrapping is the
    caller's business), for bool a truth value."""
    if dtype == "bool":
        return int(bool(v))
    if dtype in casts.INT_WIDTH:
        w = casts.INT_WIDTH[dtype]
        return int(v) % 2**w
    if isinstance(v, float):
        if v != v:
            return nan_bits(dtype)
        if v in (float("inf"), float("-inf")):
            return inf_bits(dtype, v < 0)
        if v == 0.0:
            return zero_bits(dtype, str(v).startswith("-"))
        v = Q(v)
    if isinstance(v, str):
        if v == "nan":
            return nan_bits(dtype)
        return inf_bits(dtype, v.startswith("-"))
    return casts.float_bits_of(Q(v), dtype)


def nan_bits(dtype):
    return {"bf16": 0x7FC0, "f16": 0x7E00, "f32": 0x7FC00000, "f64": 0x7FF8000000000000}[dtype]


def inf_bits(dtype, negative):
    b = {"bf16": 0x7F80, "f16": 0x7C00, "f32": 0x7F800000, "f64": 0x7FF0000000000000}[dtype]
    sign = {"bf16": 0x8000, "f16": 0x8000, "f32": 0x80000000, "f64": 0x8000000000000000}[dtype]
    return b | (sign if negative else 0)


def zero_bits(dtype, negative):
    sign = {"bf16": 0x8000, "f16": 0x8000, "f32": 0x80000000, "f64": 0x8000000000000000}[dtype]
    return sign if negative else 0


def value_of_bits(bits, dtype):
    """The exact value of storage bits: int for integer dtypes and bool,
    Fraction for finite floats (with -0 as the float -0.0), or the floats
    nan/inf/-inf."""
    v = casts.scalar_value(dtype, bits)
    if v[0] == "int":
        return v[1]
    if v[0] == "num":
        _, negative, mag = v
        if mag == 0:
            return -0.0 if negative else 0.0
        return -mag if negative else mag
    if v[0] == "nan":
        return float("nan")
    return float("-inf") if v[1] else float("inf")


def tensor(dtype, shape, bits):
    n = 1
    for d in shape:
        n *= d
    assert len(bits) == n, (shape, len(bits))
    return {"t": dtype, "shape": list(shape), "bits": [format(b, "0{}x".format(HEX[dtype])) for b in bits]}


def tensor_from_values(dtype, shape, values):
    return tensor(dtype, shape, [bits_of_value(v, dtype) for v in values])


def f(x):
    return {"f": format(f64_bits(x), "016x")}


def case(op, args, expect, kwargs=None, ulp=0, note=""):
    return {"op": op, "args": args, "kwargs": kwargs or {}, "expect": expect, "ulp": ulp, "note": note}


def write(name, cases, header):
    """Writes testdata/vectors/ops_<name>.jsonl with `#` header lines."""
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"ops_{name}.jsonl"
    with open(path, "w") as fh:
        for line in header.strip().splitlines():
            fh.write("# " + line + "\n")
        for c in cases:
            fh.write(json.dumps(c, separators=(",", ":")) + "\n")
    print(f"wrote {path.relative_to(ROOT)}: {len(cases)} cases, {path.stat().st_size} bytes")
