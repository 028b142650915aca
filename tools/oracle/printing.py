"""Writes testdata/vectors/printing_{bf16,f16,f32,small}.txt: the text the spec's
printing rule (twill-spec.md section 6) prescribes for tensor elements of
dtype bf16, f16 and f32, computed here with exact rational arithmetic so the
Rust implementation in crates/tensor/src/shortest.rs is checked against an
independent derivation rather than against itself.

    tools/oracle/.venv/bin/python tools/oracle/printing.py

The rule: print the shortest decimal that rounds (to nearest, ties to even,
directly in the element's dtype) to the stored value; among decimals of that
length the one closest to the stored value; on a tie between two, the one
whose last digit is even. Layout follows ECMAScript Number::toString, with
twill's spellings -0, nan, inf, -inf.

How this differs from the Rust code on purpose: the Rust side derives the
rounding interval of the stored value and tests candidates against its
bounds. Here nothing about intervals is assumed. A candidate qualifies when
`round_positive(candidate) == stored bits`, where `round_positive` is a
plain textbook round-to-nearest-even of an exact Fraction into the format
(checked in this script against NumPy's float64 -> float16/float32 casts).
Candidates of n significant digits are the few integers d around
stored / 10**k, so the search never trusts a hand-derived boundary.

Every line is `<bits as lowercase hex, 4 or 8 digits> <expected string>`.
bf16 and f16 cover every bit pattern; f32 covers edge cases (zeros,
infinities, NaNs, subnormals, powers of two and their neighbours, the f32
nearest each power of ten and its neighbours, decimal-tie cases) followed by
50,000 patterns from a seeded splitmix64. For f16 and f32 the chosen digits
are also compared with NumPy's Dragon4 (`np.format_float_scientific(...,
unique=True)`), and the count of agreements is written into each header.
printing_small.txt holds every bit pattern of 24 small formats, so the
algorithm's format-generic parts are tested where the three dtypes happen
not to exercise them. Deterministic: rerunning gives byte-identical files.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np

SEED = 0x7477696C6C5F7072  # "twill_pr"
RANDOM_F32 = 50_000
MASK64 = (1 << 64) - 1

ROOT = Path(__file__).resolve().parents[2]
OUT_DIR = ROOT / "testdata" / "vectors"
COMMAND = "tools/oracle/.venv/bin/python tools/oracle/printing.py"


class Fmt:
    """A binary interchange-style format: sign, exponent field, fraction."""

    def __init__(self, name: str, exp_bits: int, frac_bits: int):
        self.name = name
        self.exp_bits = exp_bits
        self.frac_bits = frac_bits
        self.width = 1 + exp_bits + frac_bits
        self.hex_digits = self.width // 4
        self.bias = (1 << (exp_bits - 1)) - 1
        self.emin = 1 - self.bias  # exponent of the smallest normal
        self.emax = self.bias  # exponent of the largest finite value
        self.exp_all_ones = (1 << exp_bits) - 1

    def value(self, bits: int) -> Fraction | str:
        """The exact value of `bits`, or 'nan' / 'inf' / '-inf'."""
        sign = -1 if bits >> (self.width - 1) & 1 else 1
        field = bits >> self.frac_bits & self.exp_all_ones
        frac = bits & ((1 << self.frac_bits) - 1)
        if field == self.exp_all_ones:
            if frac:
                return "nan"
            return "inf" if sign > 0 else "-inf"
        if field == 0:
            mag = Fraction(frac) * Fraction(2) ** (self.emin - self.frac_bits)
        else:
            mag = Fraction((1 << self.frac_bits) + frac) * Fraction(2) ** (
                field - self.bias - self.frac_bits
            )
        return sign * mag

    def round_positive(self, x: Fraction) -> int:
        """Bits of positive x rounded to nearest, ties to even, in this
        format; overflow goes to +inf. Straight from the definition: pick
        the binade, scale so one unit is one ulp, round the scaled value."""
        assert x > 0
        # floor(log2 x), exactly: estimate from bit lengths, then correct.
        q = x.numerator.bit_length() - x.denominator.bit_length()
        while Fraction(2) ** q > x:
            q -= 1
        while Fraction(2) ** (q + 1) <= x:
            q += 1
        q = max(q, self.emin)  # below the normal range the ulp stops shrinking
        ulp = Fraction(2) ** (q - self.frac_bits)
        m = round(x / ulp)  # Python rounds a Fraction half to even
        if m == 1 << (self.frac_bits + 1):  # rounded up into the next binade
            m >>= 1
            q += 1
        if q > self.emax:
            return self.exp_all_ones << self.frac_bits
        if m < 1 << self.frac_bits:  # subnormal (or zero)
            return m
        return (q + self.bias) << self.frac_bits | (m - (1 << self.frac_bits))


def pow10_floor(x: Fraction) -> int:
    """floor(log10 x) for positive x, exactly."""
    t = math.floor(math.log10(x.numerator) - math.log10(x.denominator))
    while Fraction(10) ** t > x:
        t -= 1
    while Fraction(10) ** (t + 1) <= x:
        t += 1
    return t


def shortest(fmt: Fmt, bits: int) -> tuple[int, int, bool]:
    """(d, k, tied) with d * 10**k the decimal the rule picks for the
    positive finite value of `bits`; `tied` records that two candidates were
    equally close (so the even-digit rule decided)."""
    v = fmt.value(bits)
    t = pow10_floor(v)
    n = 1
    while True:
        k = t - n + 1
        scale = Fraction(10) ** k
        centre = math.floor(v / scale)
        # Any qualifying n-digit decimal further out than these would imply
        # a closer qualifying one on the same side, so a small window around
        # v suffices; two extra on each side cost little and assume less.
        found = []
        for d in range(centre - 2, centre + 4):
            if d <= 0:
                continue
            c = d * scale
            if fmt.round_positive(c) == bits:
                found.append((abs(c - v), d))
        if found:
            best = min(dist for dist, _ in found)
            closest = [d for dist, d in found if dist == best]
            if len(closest) == 1:
                return closest[0], k, False
            evens = [d for d in closest if d % 2 == 0]
            assert len(closest) == 2 and len(evens) == 1, (bits, closest)
            return evens[0], k, True
        n += 1
        assert n < 200, bits


def ecmascript(negative: bool, d: int, k: int) -> str:
    """Number::toString layout of d * 10**k (d > 0)."""
    s = str(d).rstrip("0")
    k += len(str(d)) - len(s)
    n = len(s) + k  # position of the decimal point relative to the digits
    if len(s) <= n <= 21:
        body = s + "0" * (n - len(s))
    elif 0 < n <= 21:
        body = s[:n] + "." + s[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + s
    else:
        e = n - 1
        body = s[0] + ("." + s[1:] if len(s) > 1 else "") + "e" + ("-" if e < 0 else "+") + str(abs(e))
    return ("-" if negative else "") + body


def expected(fmt: Fmt, bits: int) -> tuple[str, tuple[int, int, bool] | None]:
    v = fmt.value(bits)
    if isinstance(v, str):
        return v, None
    if v == 0:
        return ("-0" if bits >> (fmt.width - 1) else "0"), None
    positive = bits & ((1 << (fmt.width - 1)) - 1)
    d, k, tied = shortest(fmt, positive)
    return ecmascript(v < 0, d, k), (d, k, tied)


def numpy_digits(fmt: Fmt, bits: int) -> tuple[int, int] | None:
    """NumPy's Dragon4 unique digits for f16/f32 as (d, k), trailing zeros
    stripped; None for bf16, which NumPy cannot format natively."""
    if fmt.name == "f16":
        x = np.array([bits], dtype=np.uint16).view(np.float16)[0]
    elif fmt.name == "f32":
        x = np.array([bits], dtype=np.uint32).view(np.float32)[0]
    else:
        return None
    text = np.format_float_scientific(abs(x), unique=True)
    mant, exp = text.split("e")
    whole, _, frac = mant.partition(".")
    digits = (whole + frac).rstrip("0") or "0"
    return int(digits), int(exp) - (len(digits) - 1)


def normalise(d: int, k: int) -> tuple[int, int]:
    while d % 10 == 0:
        d //= 10
        k += 1
    return d, k


def splitmix64():
    state = SEED
    while True:
        state = (state + 0x9E3779B97F4A7C15) & MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        yield z ^ (z >> 31)


def f32_bits(x: float) -> int:
    return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


def f32_cases() -> list[int]:
    """Edge cases first (deduplicated, in a fixed order), then random."""
    f32 = Fmt("f32", 8, 23)
    cases: list[int] = []
    seen: set[int] = set()

    def add(b: int) -> None:
        b &= 0xFFFFFFFF
        if b not in seen:
            seen.add(b)
            cases.append(b)

    def add_both(b: int) -> None:
        add(b)
        add(b | 0x80000000)

    for b in (0x00000000, 0x7F800000, 0x7FC00000, 0x7F800001, 0x7FFFFFFF, 0xFFC00000):
        add_both(b)
    for b in range(1, 65):  # smallest subnormals
        add_both(b)
    for b in range(0x007FFFC0, 0x00800040):  # largest subnormals, min normals
        add_both(b)
    for b in range(0x7F7FFFC0, 0x7F800000):  # up to the largest finite
        add_both(b)
    for field in range(1, 255):  # every power of two and its neighbours
        p = field << 23
        for b in (p - 2, p - 1, p, p + 1, p + 2):
            add(b)
    for j in range(0, 23):  # subnormal powers of two
        add(1 << j)
    for t in range(-46, 40):  # the f32 nearest each power of ten
        ten = Fraction(10) ** t
        b = f32.round_positive(ten)
        for c in (b - 1, b, b + 1):
            if 0 < c < 0x7F800000:
                add(c)
    for x in (0.1, 0.2, 0.3, 1 / 3, 2 / 3, math.pi, math.e, 16777216.0, 16777217.0, 33554430.0):
        add_both(f32_bits(x))
    # Decimal ties: where the ulp is 2**-2, 2**-3, ..., values ending in
    # .25/.75, .125 ... sit exactly between two shortest candidates. The
    # binades [2**21, 2**22) (ulp 1/4), [2**20, 2**21) (ulp 1/8) and the
    # like hold them; take a run of consecutive patterns from several.
    for field in range(127 + 14, 127 + 24):
        base = field << 23
        for b in range(base, base + 24):
            add(b)
    gen = splitmix64()
    random_added = 0
    while random_added < RANDOM_F32:
        b = next(gen) & 0xFFFFFFFF
        if b not in seen:
            add(b)
            random_added += 1
    return cases


def check_rounding() -> str:
    """Validate round_positive against NumPy's correctly rounded float64 ->
    float16 / float32 casts on seeded random doubles across each range."""
    gen = splitmix64()
    checked = 0
    for fmt, dtype, view in ((Fmt("f16", 5, 10), np.float16, np.uint16), (Fmt("f32", 8, 23), np.float32, np.uint32)):
        for _ in range(20_000):
            r = next(gen)
            # Spread exponents well past both ends of the format's range.
            span = 2 * fmt.bias + fmt.frac_bits + 8
            e = (r >> 52) % span - fmt.bias - fmt.frac_bits - 4
            x = math.ldexp(1.0 + (r & ((1 << 52) - 1)) / 2.0**52, e)
            with np.errstate(over="ignore"):  # overflow to inf is expected
                want = int(np.array([x]).astype(dtype).view(view)[0])
            got = fmt.round_positive(Fraction(x))
            assert got == want, (fmt.name, x, hex(got), hex(want))
            checked += 1
    return f"round-to-nearest-even reference agrees with NumPy's float64 casts on {checked} random doubles"


def write(fmt: Fmt, patterns: list[int], note: str, rounding_note: str) -> None:
    lines = []
    ties = 0
    np_agree = np_disagree = 0
    disagreements = []
    for bits in patterns:
        text, parts = expected(fmt, bits)
        lines.append(f"{bits:0{fmt.hex_digits}x} {text}")
        if parts is None:
            continue
        d, k, tied = parts
        ties += tied
        theirs = numpy_digits(fmt, bits)
        if theirs is None:
            continue
        if normalise(d, k) == theirs:
            np_agree += 1
        else:
            np_disagree += 1
            disagreements.append(f"{bits:0{fmt.hex_digits}x}")
    versions = f"Python {sys.version.split()[0]}, NumPy {np.__version__}"
    if fmt.name == "bf16":
        numpy_note = "NumPy cannot format bf16 natively, so no NumPy comparison"
    else:
        numpy_note = f"NumPy Dragon4 unique digits agree on {np_agree} finite nonzero values, differ on {np_disagree}"
        if disagreements:
            numpy_note += " (" + " ".join(disagreements[:20]) + (" ..." if len(disagreements) > 20 else "") + ")"
    header = [
        f"# printing_{fmt.name} vectors: <{fmt.name} bits as {fmt.hex_digits} hex digits> <expected text>, per twill-spec section 6",
        f"# generator: {COMMAND} ({versions}); exact Fraction arithmetic",
        f"# {note}; {len(patterns)} lines; {ties} decided by the even-last-digit tie rule",
        f"# {numpy_note}",
        f"# {rounding_note}",
    ]
    path = OUT_DIR / f"printing_{fmt.name}.txt"
    path.write_text("\n".join(header + lines) + "\n")
    print(f"{path.relative_to(ROOT)}: {len(patterns)} lines, {ties} ties; {numpy_note}")


SMALL_FORMATS = [(e, m) for e in range(2, 6) for m in range(1, 7)]


def write_small(rounding_note: str) -> None:
    """Every bit pattern of small formats (2-5 exponent bits, 1-6 fraction
    bits). The dtypes alone leave parts of the rule untested because no
    bf16/f16/f32 value happens to depend on them (for instance whether the
    smallest normal's lower gap is halved); with dozens of formats, each
    such detail shows up somewhere. Lines are `e<E>m<M> <hex bits> <text>`."""
    lines = []
    ties = 0
    for e, m in SMALL_FORMATS:
        fmt = Fmt(f"e{e}m{m}", e, m)
        for bits in range(1 << fmt.width):
            text, parts = expected(fmt, bits)
            ties += bool(parts and parts[2])
            lines.append(f"{fmt.name} {bits:x} {text}")
    versions = f"Python {sys.version.split()[0]}, NumPy {np.__version__}"
    header = [
        "# printing_small vectors: <format e<exponent bits>m<fraction bits>> <bits in hex> <expected text>, per twill-spec section 6",
        f"# generator: {COMMAND} ({versions}); exact Fraction arithmetic",
        f"# every bit pattern of {len(SMALL_FORMATS)} formats, exponent bits 2-5 x fraction bits 1-6; {len(lines)} lines; {ties} decided by the even-last-digit tie rule",
        f"# {rounding_note}",
    ]
    path = OUT_DIR / "printing_small.txt"
    path.write_text("\n".join(header + lines) + "\n")
    print(f"{path.relative_to(ROOT)}: {len(lines)} lines, {ties} ties")


def main() -> None:
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    rounding_note = check_rounding()
    print(rounding_note)
    write(Fmt("bf16", 8, 7), list(range(1 << 16)), "every bit pattern", rounding_note)
    write(Fmt("f16", 5, 10), list(range(1 << 16)), "every bit pattern", rounding_note)
    cases = f32_cases()
    write(
        Fmt("f32", 8, 23),
        cases,
        f"{len(cases) - RANDOM_F32} edge cases, then {RANDOM_F32} splitmix64 patterns (seed {SEED:#x})",
        rounding_note,
    )
    write_small(rounding_note)


if __name__ == "__main__":
    main()
