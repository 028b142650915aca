"""Oracle vectors for the formats lab (spec §13), from exact rational
arithmetic, cross-checked against ml_dtypes and NumPy.

The reference below is written from the definition, not from twill's code:
a format's finite non-negative values are listed by decoding every pattern
with `fractions.Fraction`, and rounding a real number picks the nearest of
them, a tie going to the value whose pattern is even (its last mantissa bit
0). Beyond the largest finite value sits one more, virtual, grid point (the
pattern after the largest, a power of two further on): a value rounding to
it overflows, which is +-inf for special="ieee", NaN for "fn" and the
largest finite value for "none". Without subnormals, the only values below
the smallest normal are 0 and the smallest normal, and the halfway point
between them goes to 0 (both patterns are even; twill and this reference
both choose zero, the largest magnitude that rounds to zero being then half
the smallest normal).

Writes testdata/vectors/formats.txt:

    format NAME EXP MAN BIAS SUBNORMALS SPECIAL
    decode NAME V0 V1 ...        (the f64 bits, hex, of each non-negative
                                  pattern 0, 1, ... in order, 64 per line;
                                  nan for a NaN pattern, as f64 bits too)
    r64 NAME X P                 (X: an f64's bits; P: the pattern, or E
                                  when the format has no encoding for X)
    r32 NAME X P                 (X: an f32's bits)

and prints the ml_dtypes/NumPy cross-check: for each format a library has,
how many of the f32 test inputs (and, for NumPy's float16, the f64 ones) it
rounds to a different pattern than the reference.

Run: tools/oracle/.venv/bin/python tools/oracle/formats.py
"""

import bisect
import warnings
import math
import random
import struct
import sys
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np

FORMATS = [
    # name, exp_bits, man_bits, bias, subnormals, special, library dtype
    ("e4m3fn", 4, 3, 7, True, "fn", ml_dtypes.float8_e4m3fn),
    ("e5m2", 5, 2, 15, True, "ieee", ml_dtypes.float8_e5m2),
    ("e3m2fn", 3, 2, 3, True, "none", ml_dtypes.float6_e3m2fn),
    ("e2m3fn", 2, 3, 1, True, "none", ml_dtypes.float6_e2m3fn),
    ("e2m1fn", 2, 1, 1, True, "none", ml_dtypes.float4_e2m1fn),
    ("bf16", 8, 7, 127, True, "ieee", ml_dtypes.bfloat16),
    ("f16", 5, 10, 15, True, "ieee", np.float16),
    ("f6e9b28", 6, 9, 28, True, "ieee", None),
    ("f6e9b31", 6, 9, 31, True, "ieee", None),
    ("f6e9b36", 6, 9, 36, True, "ieee", None),
    ("f16nosub", 5, 10, 15, False, "ieee", None),
    ("e4m3b11fn", 4, 3, 11, True, "fn", None),
]


class Ref:
    """A format, its values listed exactly."""

    def __init__(self, name, e, m, bias, sub, special):
        self.name, self.e, self.m, self.bias, self.sub, self.special = name, e, m, bias, sub, special
        self.bits = 1 + e + m
        self.ones = (1 << e) - 1
        # Non-negative patterns in order, their values (None: NaN or inf).
        self.values = [self.value(p) for p in range(1 << (e + m))]
        finite = [(v, p) for p, v in enumerate(self.values) if v is not None and not (p >> m == 0 and p & ((1 << m) - 1) and not sub)]
        finite.sort()
        self.grid = [v for v, _ in finite]
        self.pats = [p for _, p in finite]
        self.max = self.grid[-1]
        self.max_pat = self.pats[-1]
        # The virtual point after the largest value: one ulp further.
        ulp = Fraction(2) ** ((self.max_pat >> m) - bias - m)
        self.grid.append(self.max + ulp)
        self.pats.append(self.max_pat + 1)

    def value(self, p):
        e, m = self.e, self.m
        field, man = p >> m, p & ((1 << m) - 1)
        if self.special == "ieee" and field == self.ones:
            return None
        if self.special == "fn" and field == self.ones and man == (1 << m) - 1:
            return None
        if field == 0:
            if not self.sub:
                return Fraction(0)
            return Fraction(man) * Fraction(2) ** (1 - self.bias - m)
        return Fraction((1 << m) + man) * Fraction(2) ** (field - self.bias - m)

    def nan(self):
        if self.special == "ieee":
            return (self.ones << self.m) | (1 << (self.m - 1))
        return (self.ones << self.m) | ((1 << self.m) - 1)

    def overflow(self):
        return {"ieee": self.ones << self.m, "fn": self.nan(), "none": self.max_pat}[self.special]

    def round(self, x, payload=None):
        """The pattern of the float x, from its exact value; None when the
        format has no encoding for it."""
        sign = 1 << (self.e + self.m)
        if math.isnan(x):
            if self.special == "none":
                return None
            neg = math.copysign(1, x) < 0
            p = self.nan()
            if self.special == "ieee" and payload is not None:
                p |= payload >> (52 - self.m)
            return (sign if neg else 0) | p
        if math.isinf(x):
            if self.special == "none":
                return None
            return (sign if x < 0 else 0) | (self.nan() if self.special == "fn" else self.overflow())
        return self.round_exact(math.copysign(1.0, x) < 0, abs(Fraction(x)))

    def round_exact(self, neg, a):
        """The pattern of the exact magnitude a (a Fraction) with sign neg."""
        sign = 1 << (self.e + self.m)
        i = bisect.bisect_left(self.grid, a)
        if i < len(self.grid) and self.grid[i] == a:
            k = i
        elif i == 0:
            k = 0
        elif i == len(self.grid):
            k = len(self.grid) - 1
        else:
            lo, hi = self.grid[i - 1], self.grid[i]
            if a - lo < hi - a:
                k = i - 1
            elif hi - a < a - lo:
                k = i
            else:
                even_lo, even_hi = self.pats[i - 1] % 2 == 0, self.pats[i] % 2 == 0
                k = i if (even_hi and not even_lo) else i - 1
        p = self.overflow() if k == len(self.grid) - 1 else self.pats[k]
        return (sign if neg else 0) | p


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64_of_fraction(v):
    return float(v)  # exact for every value of these formats


def test_points(ref, rng):
    """f64 inputs: values of the format and the midpoints between
    neighbours with their f64 and f32 neighbours (every one in a format of
    at most 8 bits; in a wider one the first two, the last two and one more
    of each binade), the overflow and underflow boundaries, specials, and
    random values."""
    pts = set()
    grid = ref.grid
    chosen = range(len(grid))
    if ref.bits > 8:
        by_binade = {}
        for i, p in enumerate(ref.pats):
            by_binade.setdefault(p >> ref.m, []).append(i)
        chosen = set()
        for idx in by_binade.values():
            chosen.update(idx[:2] + idx[-2:] + [rng.choice(idx)])
        chosen = sorted(chosen)
    for i in chosen:
        v = grid[i]
        pts.add(float(v))
        if i + 1 < len(grid):
            fm = float((v + grid[i + 1]) / 2)
            pts.add(fm)
            pts.add(math.nextafter(fm, math.inf))
            pts.add(math.nextafter(fm, -math.inf))
            pts.add(float(np.nextafter(np.float32(fm), np.float32(np.inf))))
            pts.add(float(np.nextafter(np.float32(fm), np.float32(-np.inf))))
    cliff = grid[1] / 2
    for c in [cliff, grid[1], ref.max, grid[-1]]:
        fc = float(c)
        for y in [fc, math.nextafter(fc, math.inf), math.nextafter(fc, -math.inf), fc * 2, fc / 2, fc * 1.5]:
            pts.add(y)
    lo, hi = math.log2(float(grid[1])) - 3, math.log2(float(ref.max)) + 2
    for _ in range(400):
        pts.add(2.0 ** rng.uniform(lo, hi))
    pts |= {0.0, 5e-324, 1e-300, 1e300, sys.float_info.max, math.inf}
    out = sorted(pts)
    return out + [-p for p in out if p != 0] + [-0.0, math.nan, -math.nan]


def main():
    # f64 inputs beyond f32's range become inf as f32 inputs, on purpose.
    warnings.simplefilter("ignore", RuntimeWarning)
    rng = random.Random(20261201)
    lines = []
    mismatches = []
    for name, e, m, bias, sub, special, lib in FORMATS:
        ref = Ref(name, e, m, bias, sub, special)
        lines.append(f"format {name} {e} {m} {bias} {int(sub)} {special}")
        vals = []
        for p in range(1 << (e + m)):
            v = ref.values[p]
            if v is None:
                field_man = p & ((1 << m) - 1)
                if special == "ieee" and field_man == 0:
                    vals.append(f"{f64_bits(math.inf):016x}")
                else:
                    # The quiet f64 NaN with the pattern's payload bits.
                    payload = field_man << (52 - m) if special == "ieee" else 0
                    vals.append(f"{0x7ff8000000000000 | payload:016x}")
            else:
                vals.append(f"{f64_bits(f64_of_fraction(v)):016x}")
        for i in range(0, len(vals), 64):
            lines.append(f"decode {name} " + " ".join(vals[i:i + 64]))
        pts = test_points(ref, rng)
        lib_bad = [0, 0, 0]
        for x in pts:
            bits = f64_bits(x)
            pay = bits & ((1 << 52) - 1) if math.isnan(x) else None
            p = ref.round(x, pay)
            lines.append(f"r64 {name} {bits:016x} {'E' if p is None else format(p, 'x')}")
            x32 = np.float32(x)
            b32 = f32_bits(float(x32)) if not math.isnan(x) else f32_bits(float(x32))
            xf = float(x32)
            pay32 = (f64_bits(xf) & ((1 << 52) - 1)) if math.isnan(xf) else None
            p32 = ref.round(xf, pay32)
            lines.append(f"r32 {name} {b32:08x} {'E' if p32 is None else format(p32, 'x')}")
            if lib is not None and math.isfinite(xf) and p32 is not None:
                got = np.array([x32], dtype=np.float32).astype(lib)
                g = int(got.view(np.uint16 if ref.bits > 8 else np.uint8)[0])
                if g != p32:
                    lib_bad[0] += 1
                    if len(mismatches) < 40:
                        mismatches.append(f"{name} f32 {b32:08x} ref {p32:x} lib {g:x}")
                lib_bad[1] += 1
            if lib is np.float16 and math.isfinite(x):
                g = int(np.array([x], dtype=np.float64).astype(np.float16).view(np.uint16)[0])
                if g != p:
                    lib_bad[2] += 1
        if lib is not None:
            print(f"{name}: {lib_bad[0]} of {lib_bad[1]} finite f32 inputs differ from {lib.__name__}"
                  + (f"; {lib_bad[2]} f64 inputs differ from numpy.float16" if lib is np.float16 else ""))
    for mm in mismatches:
        print("  ", mm)
    out = Path(__file__).resolve().parents[2] / "testdata" / "vectors" / "formats.txt"
    out.write_text("# tools/oracle/formats.py: exact rational rounding; see its docstring\n" + "\n".join(lines) + "\n")
    print(f"wrote {out} ({len(lines)} lines)")


if __name__ == "__main__":
    main()
