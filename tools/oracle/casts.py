"""Writes testdata/vectors/casts*.txt: conversions between twill's dtypes,
computed by an exact reference, for crates/tensor/tests/casts.rs.

    tools/oracle/.venv/bin/python tools/oracle/casts.py

The reference is exact rational arithmetic (fractions.Fraction): a value is
rounded into a format by finding its two neighbours in that format, taking
the nearer, and on a tie the one whose encoding is even; a magnitude at or
past the largest finite value plus half its spacing overflows to infinity.
It deliberately shares nothing with the Rust code's bit-shifting structure,
so a mistake in one is not repeated in the other. numpy and ml_dtypes are
independent second opinions: where they are known to round correctly
(numpy f64->f32, f64->f16 and every widening; ml_dtypes f32->bf16) the
generator asserts that they agree with the reference on every input, and
where ml_dtypes is known not to (f64->bf16, which it rounds through f32)
the number of disagreements is measured and recorded in the file header.

NaN policy (spec: "NaN stays NaN with its sign"; the rest is twill's
choice, documented on convert::narrow): a converted NaN keeps its sign, gets
its quiet bit set, and keeps the top bits of its payload that fit. A cast to
the element's own dtype is the identity.

Deterministic: the only randomness is numpy's PCG64 with the fixed seeds
below, so rerunning with the pinned versions reproduces the files byte for
byte.
"""

import math
import platform
import struct
import sys
from fractions import Fraction as Q
from pathlib import Path

import ml_dtypes
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "testdata" / "vectors"
COMMAND = "tools/oracle/.venv/bin/python tools/oracle/casts.py"
VERSIONS = (
    f"python {platform.python_version()}, numpy {np.__version__}, "
    f"ml_dtypes {ml_dtypes.__version__}"
)

SEED_F64 = 0x7477696C6C5F6636  # "twill_f6"
SEED_F32 = 0x7477696C6C5F6633  # "twill_f3"
SEED_SCALAR = 0x7477696C6C5F6373  # "twill_cs"
RANDOM_F64 = 100_000
RANDOM_F32 = 100_000


# ---------------------------------------------------------------------------
# The exact reference.


class Format:
    """A binary floating-point format: sign, exp_bits, man_bits."""

    def __init__(self, name, exp_bits, man_bits):
        self.name = name
        self.exp_bits = exp_bits
        self.man_bits = man_bits
        self.width = 1 + exp_bits + man_bits
        self.bias = 2 ** (exp_bits - 1) - 1
        self.emin = 1 - self.bias
        self.emax = self.bias
        self.min_normal = pow2(self.emin)
        self.min_subnormal = pow2(self.emin - man_bits)
        self.max_finite = (2 - pow2(-man_bits)) * pow2(self.emax)
        # Half a spacing above the largest finite value: the first magnitude
        # that rounds to infinity (the tie goes up, to the even neighbour
        # 2^(emax+1), which does not exist).
        self.overflow = self.max_finite + pow2(self.emax - man_bits) / 2
        self.exp_all_ones = 2**exp_bits - 1
        self.sign_bit = 1 << (exp_bits + man_bits)
        self.quiet_bit = 1 << (man_bits - 1)


def pow2(k):
    return Q(2) ** k


BF16 = Format("bf16", 8, 7)
F16 = Format("f16", 5, 10)
F32 = Format("f32", 8, 23)
F64 = Format("f64", 11, 52)
NARROW = (BF16, F16, F32)


def floor_log2(a):
    """The k with 2^k <= a < 2^(k+1), for a positive Fraction."""
    k = a.numerator.bit_length() - a.denominator.bit_length()
    while pow2(k) > a:
        k -= 1
    while pow2(k + 1) <= a:
        k += 1
    return k


def spacing(a, fmt):
    """Distance between consecutive values of fmt around magnitude a >= 0."""
    if a < fmt.min_normal:
        return fmt.min_subnormal
    return pow2(floor_log2(a) - fmt.man_bits)


def encode(a, negative, fmt):
    """Bits of the representable magnitude a (a Fraction) in fmt."""
    sign = fmt.sign_bit if negative else 0
    if a == 0:
        return sign
    if a < fmt.min_normal:
        m = a / fmt.min_subnormal
        assert m.denominator == 1 and m < 2**fmt.man_bits, (a, fmt.name)
        return sign | int(m)
    e = floor_log2(a)
    assert e <= fmt.emax, (a, fmt.name)
    m = a / pow2(e - fmt.man_bits) - 2**fmt.man_bits
    assert m.denominator == 1 and 0 <= m < 2**fmt.man_bits, (a, fmt.name)
    return sign | ((e + fmt.bias) << fmt.man_bits) | int(m)


INF = "inf"


def round_magnitude(a, fmt):
    """a (a nonnegative Fraction) rounded to nearest, ties to even, in fmt;
    INF when it overflows."""
    if a >= fmt.overflow:
        return INF
    s = spacing(a, fmt)
    lo = (a // s) * s
    if lo == a:
        return a
    hi = lo + s
    below, above = a - lo, hi - a
    if below < above:
        return lo
    if above < below:
        # Below the overflow threshold, a point nearer hi than lo has hi
        # finite: hi > max would need a > max + s/2.
        assert hi <= fmt.max_finite
        return hi
    # A tie: the neighbour with the even encoding. Both are finite here,
    # because the one tie involving 2^(emax+1) is the overflow threshold.
    return lo if encode(lo, False, fmt) % 2 == 0 else hi


def decode(bits, fmt):
    """('nan', negative, payload) | ('inf', negative) | ('num', negative, value)."""
    negative = bool(bits & fmt.sign_bit)
    exp = (bits >> fmt.man_bits) & fmt.exp_all_ones
    man = bits & (2**fmt.man_bits - 1)
    if exp == fmt.exp_all_ones:
        return ("nan", negative, man) if man else ("inf", negative)
    if exp == 0:
        return ("num", negative, man * fmt.min_subnormal)
    return ("num", negative, (2**fmt.man_bits + man) * pow2(exp - fmt.bias - fmt.man_bits))


def convert_float_bits(bits, src, dst):
    """bits of src converted to dst: one rounding from the exact value."""
    d = decode(bits, src)
    sign = dst.sign_bit if d[1] else 0
    if d[0] == "nan":
        # Align the payload's top bits with dst's mantissa, then quiet it.
        payload = d[2]
        shift = dst.man_bits - src.man_bits
        payload = payload << shift if shift >= 0 else payload >> -shift
        return sign | (dst.exp_all_ones << dst.man_bits) | dst.quiet_bit | payload
    if d[0] == "inf":
        return sign | (dst.exp_all_ones << dst.man_bits)
    return round_value(d[2], d[1], dst)


def round_value(a, negative, fmt):
    """Bits of the exact magnitude a with a sign, rounded into fmt."""
    r = round_magnitude(a, fmt)
    if r is INF:
        return (fmt.sign_bit if negative else 0) | (fmt.exp_all_ones << fmt.man_bits)
    return encode(r, negative, fmt)


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def f64_from_bits(b):
    return struct.unpack("<d", struct.pack("<Q", b))[0]


def is_nan_bits(bits, fmt):
    return decode(bits, fmt)[0] == "nan"


def exact_f64(v):
    """v as a Python float when v is exactly an f64, else None."""
    x = float(v)
    return x if Q(x) == v else None


# ---------------------------------------------------------------------------
# Case sets.


def nextafter(x, n):
    """n f64 steps from x (toward +inf for n > 0)."""
    direction = math.inf if n > 0 else -math.inf
    for _ in range(abs(n)):
        x = math.nextafter(x, direction)
    return x


class Cases:
    """An ordered set of f64 inputs, deduplicated by bit pattern."""

    def __init__(self):
        self.bits = {}

    def add_bits(self, b):
        self.bits.setdefault(b, None)

    def add(self, x, both_signs=True):
        self.add_bits(f64_bits(x))
        if both_signs:
            self.add_bits(f64_bits(x) ^ (1 << 63))

    def add_exact(self, v, both_signs=True):
        """The Fraction v, when it is exactly an f64."""
        x = exact_f64(v)
        if x is not None:
            self.add(x, both_signs)

    def add_around(self, v, steps=2, both_signs=True):
        """v and the f64 values up to `steps` f64-ulps either side of it."""
        x = exact_f64(v)
        if x is None:
            return
        for n in range(-steps, steps + 1):
            self.add(nextafter(x, n), both_signs)


def tie_pairs(fmt):
    """(lower neighbour, spacing, negative) for the ties to test: per binade
    the first pair (even lower neighbour: the tie rounds down), the second
    (odd: it rounds up) and the last, whose upper neighbour opens the next
    binade (so rounding up carries into the exponent). The subnormal range
    is cut into binades of its own, plus the pair (0, smallest subnormal).
    Binades alternate in sign, so both signs meet every kind of tie without
    doubling the file."""
    pairs = [(Q(0), fmt.min_subnormal, False), (Q(0), fmt.min_subnormal, True)]
    binades = [(2**j, 2 ** (j + 1) - 1, fmt.min_subnormal) for j in range(fmt.man_bits)]
    binades += [(2**fmt.man_bits, 2 ** (fmt.man_bits + 1) - 1, pow2(e - fmt.man_bits))
                for e in range(fmt.emin, fmt.emax + 1)]
    for i, (lo, hi, s) in enumerate(binades):
        for k in sorted({lo, min(lo + 1, hi), hi}):
            pairs.append((k * s, s, i % 2 == 1))
    return pairs


def structured_cases():
    cases = Cases()
    # Zeros, infinities, and NaNs whose payloads probe the policy: quiet and
    # signalling, payload bits that every narrow format keeps, that only f32
    # keeps, and only low bits that all of them drop (which must stay NaN).
    cases.add(0.0)
    cases.add(math.inf)
    for payload in (
        0x8000000000000, 0x0000000000001, 0x4000000000000, 0xC000000000000,
        0xFFFFFFFFFFFFF, 0x8000000000ABC, 0x0000020000000, 0x0040000000000,
        0x7FFFFFFFFFFFF, 0xA5A5A5A5A5A5A, 0x000000FFFFFFF,
    ):
        for sign in (0, 1 << 63):
            cases.add_bits(sign | (0x7FF << 52) | payload)

    # The trap from the issue: 1 + 2^-8 + 2^-30 lies above the bf16 tie
    # between 1 and 1 + 2^-7 by less than half an f32 ulp, so rounding via
    # f32 lands on the tie and goes to 1.0; directly it goes to 1.0078125.
    cases.add(1.0039062509313226)

    # Boundaries of all four formats, each with its f64 neighbours.
    for fmt in (BF16, F16, F32, F64):
        for v in (fmt.max_finite, fmt.min_normal, fmt.min_normal - fmt.min_subnormal,
                  fmt.min_subnormal, 2 * fmt.min_subnormal, Q(1)):
            cases.add_around(v)
        if fmt is F64:
            continue
        # Half the smallest subnormal (a tie that goes to zero), values
        # between it and the smallest subnormal, and its neighbours.
        half = fmt.min_subnormal / 2
        cases.add_around(half)
        for frac in (Q(1, 4), Q(3, 4), Q(7, 8), Q(1, 2) + Q(1, 2**20)):
            cases.add_exact(fmt.min_subnormal * frac)
        # The overflow threshold and what surrounds it.
        cases.add_around(fmt.overflow)
        cases.add_exact((fmt.max_finite + fmt.overflow) / 2)
        cases.add_exact(2 * fmt.max_finite)

    # Per binade: ties, their f64 neighbours, and for bf16 and f16 the
    # double-rounding traps: points off the tie by less than half an f32
    # ulp, which an f64 -> f32 -> narrow conversion rounds onto the tie.
    for fmt in NARROW:
        for lo, s, negative in tie_pairs(fmt):
            tie = lo + s / 2
            sign = -1 if negative else 1
            cases.add_around(sign * tie, both_signs=False)
            if fmt is F32:
                continue
            f32_ulp = spacing(tie, F32)
            for d in (f32_ulp / 2**7, f32_ulp / 4, f32_ulp / 2 - spacing(tie, F64)):
                cases.add_exact(sign * (tie + d), both_signs=False)
                cases.add_exact(sign * (tie - d), both_signs=False)
    return list(cases.bits)


def random_f64_cases():
    rng = np.random.Generator(np.random.PCG64(SEED_F64))
    return [int(b) for b in rng.integers(0, 2**64, size=RANDOM_F64, dtype=np.uint64, endpoint=False)]


def random_f32_cases():
    rng = np.random.Generator(np.random.PCG64(SEED_F32))
    return [int(b) for b in rng.integers(0, 2**32, size=RANDOM_F32, dtype=np.uint64, endpoint=False)]


# ---------------------------------------------------------------------------
# Cross-checks against numpy and ml_dtypes.


def np_bits(arr, fmt):
    view = {16: np.uint16, 32: np.uint32, 64: np.uint64}[fmt.width]
    return [int(b) for b in arr.view(view)]


def check_agrees(name, inputs, got, want, fmt):
    """Assert that an independent library agrees with the reference, bit for
    bit on numbers and on NaN-ness for NaNs (libraries differ on payloads)."""
    bad = []
    for i, g, w in zip(inputs, got, want):
        if is_nan_bits(w, fmt):
            ok = is_nan_bits(g, fmt) and (g & fmt.sign_bit) == (w & fmt.sign_bit)
        else:
            ok = g == w
        if not ok:
            bad.append((i, g, w))
    assert not bad, f"{name} disagrees with the exact reference on {len(bad)} inputs, e.g. {bad[:5]}"


def ml_dtypes_bf16_disagreements(f64_inputs, want_bf16):
    """Inputs where ml_dtypes' f64 -> bf16 differs from the reference."""
    xs = np.array([f64_from_bits(b) for b in f64_inputs], dtype=np.float64)
    with np.errstate(all="ignore"):
        got = np_bits(xs.astype(ml_dtypes.bfloat16), BF16)
    out = []
    for b, g, w in zip(f64_inputs, got, want_bf16):
        if is_nan_bits(w, BF16):
            continue
        if g != w:
            out.append((b, g, w))
    return out


# ---------------------------------------------------------------------------
# Scalar casts between dtypes.

DTYPES = ("bool", "i8", "i32", "bf16", "f16", "f32", "f64")
FLOAT_FORMATS = {"bf16": BF16, "f16": F16, "f32": F32, "f64": F64}
INT_WIDTH = {"i8": 8, "i32": 32}
HEX_DIGITS = {"bool": 1, "i8": 2, "i32": 8, "bf16": 4, "f16": 4, "f32": 8, "f64": 16}


def scalar_value(dtype, bits):
    """('int', n) | decode(...) for a dtype's storage bits."""
    if dtype == "bool":
        return ("int", bits)
    if dtype in INT_WIDTH:
        w = INT_WIDTH[dtype]
        return ("int", bits - 2**w if bits >= 2 ** (w - 1) else bits)
    return decode(bits, FLOAT_FORMATS[dtype])


def reference_cast(src, bits, dst):
    """Storage bits of the cast, or None for an error."""
    if src == dst:
        return bits
    v = scalar_value(src, bits)
    if dst == "bool":
        if v[0] == "int":
            return int(v[1] != 0)
        return int(v[0] != "num" or v[2] != 0)
    if dst in INT_WIDTH:
        w = INT_WIDTH[dst]
        if v[0] == "int":
            return v[1] % 2**w  # two's-complement wrap
        if v[0] != "num":
            return None
        n = int(v[2])  # int() of a Fraction truncates toward zero
        n = -n if v[1] else n
        if not -(2 ** (w - 1)) <= n < 2 ** (w - 1):
            return None
        return n % 2**w
    fmt = FLOAT_FORMATS[dst]
    if v[0] == "int":
        return round_value(Q(abs(v[1])), v[1] < 0, fmt)
    return convert_float_bits(bits, FLOAT_FORMATS[src], fmt)


def float_bits_of(value, dtype):
    """Bits of the Fraction `value` rounded into a float dtype."""
    return round_value(abs(value), value < 0, FLOAT_FORMATS[dtype])


def scalar_cases(rng):
    cases = {}

    def add(src, bits, dsts=DTYPES):
        for dst in dsts:
            cases.setdefault((src, bits, dst), None)

    # bool and every i8 to every dtype.
    for b in (0, 1):
        add("bool", b)
    for b in range(256):
        add("i8", b)

    # i32 edges: powers of two and their neighbours, and the ties of each
    # float format at every magnitude (2^k + half a spacing, +-1), where
    # an int -> f32 -> bf16 path would round twice.
    edges = {0, 1, 2, 127, 128, 129, 255, 256, 257, 300, 2049, 2051, 65504, 65519, 65520,
             65535, 65536, 16777215, 16777216, 16777217, 16777218, 16777219, 2**31 - 1}
    for k in range(31):
        edges.update({2**k - 1, 2**k, 2**k + 1})
        for fmt in NARROW:
            if k - fmt.man_bits - 1 >= 0:
                t = 2**k + 2 ** (k - fmt.man_bits - 1)
                edges.update({t - 1, t, t + 1, t + 2 ** (k - fmt.man_bits)})
    for n in sorted(edges):
        for v in (n, -n, -n - 1):
            if -(2**31) <= v < 2**31:
                add("i32", v % 2**32)
    # Random i32: uniform over all bit patterns, and log-uniform in
    # magnitude so that small values (where f16 is finite) get their share.
    for b in rng.integers(0, 2**32, size=1000, dtype=np.uint64):
        add("i32", int(b), ("i8", "bool", "bf16", "f16", "f32"))
    for _ in range(1000):
        k = int(rng.integers(0, 32))
        v = int(rng.integers(0, 2**k)) if k else 0
        v = -v if rng.integers(0, 2) else v
        add("i32", v % 2**32, ("i8", "bool", "bf16", "f16", "f32"))

    # Float sources into the integer dtypes and bool: truncation, the range
    # edges, and the errors (NaN, infinities, out of range).
    interesting = [Q(0), Q(1, 2), Q(99, 100), Q(1), Q(3, 2), Q(5, 2), Q(127), Q(255, 2),
                   Q(12799, 100), Q(128), Q(257, 2), Q(129), Q(12899, 100), Q(2**31 - 1),
                   Q(2**32 - 1, 2), Q(2**31), Q(2**31 + 1, 1), Q(2**31) + Q(1, 2), Q(3 * 10**9),
                   Q(1, 10**40), Q(10**30)]
    for dtype, fmt in FLOAT_FORMATS.items():
        bits = set()
        for v in interesting:
            bits.add(float_bits_of(v, dtype))
            bits.add(float_bits_of(-v, dtype))
        inf = fmt.exp_all_ones << fmt.man_bits
        bits.update({fmt.sign_bit, inf, inf | fmt.sign_bit, inf | fmt.quiet_bit,
                     inf | fmt.quiet_bit | fmt.sign_bit, inf | 1, fmt.sign_bit | 1,
                     inf - 1, (inf - 1) | fmt.sign_bit, 1})
        # Magnitudes up to 2^33, spread over binades, where truncation and
        # the i32 range both matter.
        for _ in range(500):
            e = int(rng.integers(-3, 34))
            frac = Q(int(rng.integers(0, 2**52)), 2**52)
            v = (1 + frac) * pow2(e)
            v = -v if rng.integers(0, 2) else v
            bits.add(float_bits_of(v, dtype))
        for b in sorted(bits):
            add(dtype, b, ("bool", "i8", "i32"))

    # Float to float through Scalar::cast: every pair, on random patterns
    # and specials; f16 -> bf16 ties are common (f16 has three more
    # mantissa bits), so those are sampled on purpose, and bf16 -> f16 is
    # sampled near f16's subnormal and overflow ranges where it rounds.
    floats = ("bf16", "f16", "f32", "f64")
    for src in floats:
        fmt = FLOAT_FORMATS[src]
        sample = {int(b) for b in rng.integers(0, 2**fmt.width, size=600, dtype=np.uint64)}
        inf = fmt.exp_all_ones << fmt.man_bits
        sample.update({0, fmt.sign_bit, inf, inf | fmt.sign_bit, inf | fmt.quiet_bit | 5,
                       inf | 1 | fmt.sign_bit, 1, inf - 1, 1 << fmt.man_bits})
        # The target list includes the source dtype: a cast to its own
        # dtype is the identity, signalling NaNs included.
        for b in sorted(sample):
            add(src, b, floats)
    f16_ties = [p for p in range(2**16) if p & 0b111 == 0b100 and not is_nan_bits(p, F16)]
    for i in rng.choice(len(f16_ties), size=1500, replace=False):
        add("f16", f16_ties[int(i)], ("bf16",))
    near_f16_range = [p for p in range(2**15) if 0x3300 <= p < 0x3900 or 0x4700 <= p < 0x4790]
    for i in rng.choice(len(near_f16_range), size=1500, replace=False):
        p = near_f16_range[int(i)]
        add("bf16", p | (int(rng.integers(0, 2)) << 15), ("f16",))

    return list(cases)


# ---------------------------------------------------------------------------
# Output.


def header(lines, title, layout):
    lines.append(f"# {title}")
    lines.append(f"# generator: tools/oracle/casts.py ({VERSIONS}); regenerate with: {COMMAND}")
    lines.append(f"# {layout}")


def main():
    if sys.version_info < (3, 9):
        raise SystemExit("casts.py needs Python 3.9 or later")
    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.Generator(np.random.PCG64(SEED_SCALAR))

    # --- Widening: every 16-bit pattern as bf16 and as f16. -------------
    patterns = list(range(2**16))
    widened = {fmt.name: [convert_float_bits(p, fmt, F64) for p in patterns] for fmt in (BF16, F16)}
    for fmt in (BF16, F16):
        for p, w in zip(patterns, widened[fmt.name]):
            back = convert_float_bits(w, F64, fmt)
            want = p | fmt.quiet_bit if is_nan_bits(p, fmt) else p
            assert back == want, (fmt.name, p)
            d = decode(p, fmt)
            if d[0] == "num":
                # Python's own float of the exact value agrees, sign of zero included.
                x = f64_from_bits(w)
                assert Q(x) == d[2] * (-1 if d[1] else 1) and math.copysign(1, x) == (-1 if d[1] else 1)
    check_agrees("numpy f16 -> f64", patterns,
                 np_bits(np.array(patterns, dtype=np.uint16).view(np.float16).astype(np.float64), F64),
                 widened["f16"], F64)
    check_agrees("ml_dtypes bf16 -> f64", patterns,
                 np_bits(np.array(patterns, dtype=np.uint16).view(ml_dtypes.bfloat16).astype(np.float64), F64),
                 widened["bf16"], F64)
    lines = []
    header(lines, "casts_widen vectors: every 16-bit pattern widened exactly to f64, as bf16 and as f16",
           "<pattern, 4 hex> <bf16 widened: f64 bits, 16 hex> <f16 widened: f64 bits, 16 hex>; "
           "narrowing each back gives the pattern (a NaN with its quiet bit set)")
    for p in patterns:
        lines.append(f"{p:04x} {widened['bf16'][p]:016x} {widened['f16'][p]:016x}")
    write("casts_widen.txt", lines)

    # --- Narrowing from f64. ---------------------------------------------
    structured = structured_cases()
    random64 = random_f64_cases()
    structured_set = set(structured)
    inputs = structured + [b for b in dict.fromkeys(random64) if b not in structured_set]
    out = {fmt.name: [convert_float_bits(b, F64, fmt) for b in inputs] for fmt in NARROW}
    xs = np.array([f64_from_bits(b) for b in inputs], dtype=np.float64)
    with np.errstate(all="ignore"):
        check_agrees("numpy f64 -> f32", inputs, np_bits(xs.astype(np.float32), F32), out["f32"], F32)
        check_agrees("numpy f64 -> f16", inputs, np_bits(xs.astype(np.float16), F16), out["f16"], F16)
    trap = inputs.index(f64_bits(1.0039062509313226))
    assert out["bf16"][trap] == 0x3F81, hex(out["bf16"][trap])
    disagree = ml_dtypes_bf16_disagreements(inputs, out["bf16"])
    n_structured = len(structured)
    in_structured = sum(1 for b, _, _ in disagree if b in structured_set)

    lines = []
    header(lines, "casts_narrow vectors: f64 inputs rounded to nearest, ties to even, into bf16, f16 and f32",
           "<f64 bits, 16 hex> <bf16 bits, 4 hex> <f16 bits, 4 hex> <f32 bits, 8 hex>")
    lines.append(f"# {n_structured} structured inputs (ties per binade and their f64 neighbours, "
                 f"double-rounding traps, format boundaries, zeros, infinities, NaN payloads), "
                 f"then {len(inputs) - n_structured} random f64 bit patterns (PCG64 seed {SEED_F64:#x})")
    lines.append("# cross-checked in the generator: numpy f64->f32 and f64->f16 agree with the exact "
                 "reference on every input")
    non_nan = sum(1 for b in inputs if not is_nan_bits(b, F64))
    lines.append(f"# ml_dtypes {ml_dtypes.__version__} astype(bfloat16) from f64 rounds {len(disagree)} of the "
                 f"{non_nan} non-NaN inputs differently from the exact reference ({in_structured} structured, "
                 f"{len(disagree) - in_structured} random), because it rounds via f32; for example")
    examples = [d for d in disagree if d[0] in structured_set][:5]
    examples += [d for d in disagree if d[0] not in structured_set][:3]
    for b, g, w in examples:
        lines.append(f"#   {b:016x} ({f64_from_bits(b)!r}): ml_dtypes {g:04x}, exact {w:04x}")
    for i, b in enumerate(inputs):
        lines.append(f"{b:016x} {out['bf16'][i]:04x} {out['f16'][i]:04x} {out['f32'][i]:08x}")
    write("casts_narrow.txt", lines)

    # --- Narrowing from f32. -----------------------------------------------
    random32 = random_f32_cases()
    out32 = {fmt.name: [convert_float_bits(b, F32, fmt) for b in random32] for fmt in (BF16, F16)}
    fs = np.array(random32, dtype=np.uint32).view(np.float32)
    check_agrees("ml_dtypes f32 -> bf16", random32, np_bits(fs.astype(ml_dtypes.bfloat16), BF16),
                 out32["bf16"], BF16)
    check_agrees("numpy f32 -> f16", random32, np_bits(fs.astype(np.float16), F16), out32["f16"], F16)
    # Every f32-representable input of casts_narrow.txt goes through the same
    # check: ml_dtypes is correct from f32, so it must agree everywhere.
    with np.errstate(all="ignore"):
        f32_exact = [i for i, x in enumerate(xs) if x == x and float(np.float32(x)) == x]
        fx = xs[f32_exact].astype(np.float32)
    check_agrees("ml_dtypes f32 -> bf16 (f32-exact narrow inputs)", [inputs[i] for i in f32_exact],
                 np_bits(fx.astype(ml_dtypes.bfloat16), BF16), [out["bf16"][i] for i in f32_exact], BF16)
    lines = []
    header(lines, f"casts_narrow_f32 vectors: {RANDOM_F32} random f32 bit patterns "
                  f"(PCG64 seed {SEED_F32:#x}) rounded into bf16 and f16",
           "<f32 bits, 8 hex> <bf16 bits, 4 hex> <f16 bits, 4 hex>")
    lines.append(f"# cross-checked in the generator: ml_dtypes f32->bf16 and numpy f32->f16 agree with "
                 f"the exact reference on every input here, and ml_dtypes f32->bf16 on all "
                 f"{len(f32_exact)} f32-representable inputs of casts_narrow.txt")
    for i, b in enumerate(random32):
        lines.append(f"{b:08x} {out32['bf16'][i]:04x} {out32['f16'][i]:04x}")
    write("casts_narrow_f32.txt", lines)

    # --- Scalar casts. -----------------------------------------------------
    lines = []
    header(lines, "casts_scalar vectors: Scalar::cast between the seven dtypes (spec section 5 item 3)",
           "<source dtype> <source bits> <target dtype> <target bits | error>; bits in hex at the "
           "dtype's width (bool 1 digit, i8 2, i32 8, bf16/f16 4, f32 8, f64 16), integers in "
           "two's complement")
    for src, bits, dst in scalar_cases(rng):
        r = reference_cast(src, bits, dst)
        got = "error" if r is None else f"{r:0{HEX_DIGITS[dst]}x}"
        lines.append(f"{src} {bits:0{HEX_DIGITS[src]}x} {dst} {got}")
    write("casts_scalar.txt", lines)

    print(f"ml_dtypes f64->bf16 disagreements: {len(disagree)} of {len(inputs)}")


def write(name, lines):
    path = OUT / name
    path.write_text("\n".join(lines) + "\n")
    n = sum(1 for line in lines if not line.startswith("#"))
    print(f"wrote {path.relative_to(ROOT)}: {n} vectors, {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
