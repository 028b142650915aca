"""Writes testdata/vectors/format_spec.tsv: CPython's `format(value, spec)`
for a grid of Ints, floats and strings and a sample of format specs (the
format-spec language of twill-spec.md section 10.7, which is Python's), so
crates/tensor/src/fmtspec.rs is checked byte for byte against CPython.

    python3 tools/oracle/format_spec.py

Needs CPython 3.11 or later (the `z` option) and nothing else. The sample is
deterministic: every spec built from a fixed list of hand-picked ones plus
specs drawn with a seeded generator from every combination of the spec's
fields.

Every line after the header is tab-separated:
`kind value text spec status out`, where kind is int, float or str; value is
the Int in decimal, the float's bits in hex, or the string; text is the
value's `str` (for a float Python's repr, which twill replaces by its own
text in the one case that uses it: no type and no precision). For a number
and type `s` the result is `format(str(value), spec)`: twill's `s` formats
any value as its str, where CPython rejects a number. Status is ok
(out is the result) or err (CPython raised ValueError; out is empty).
"""

import os
import random
import struct
import sys

assert sys.version_info >= (3, 11), "the z option needs CPython 3.11"

INTS = [0, 1, -1, 7, -42, 255, 1234, -1234567, 2**31, -(2**53), 2**63 - 1, -(2**63)]
FLOATS = [
    0.0, -0.0, 1.0, -1.5, 0.5, 2.5, 3.14159, 1234567.891, 1e-5, 1.5e-7,
    123456789012345680.0, 1e22, 9.999999, 0.00012345, -0.0004, 1 / 3,
    2 / 3 * 1e10, float("inf"), float("-inf"), float("nan"),
    struct.unpack("<d", struct.pack("<Q", 0xFFF8000000000000))[0],  # -nan
    5e-324, 1.7976931348623157e308, 0.1, 100.0, 1e16, 12345.678, 0.125,
    -999.9995, 1e-4, 99999.5,
]
STRS = ["", "a", "héllo", "twill", "a b", "0123456789"]

ALIGNS = ["", "<", ">", "^", "=", "*<", "*>", "*^", "0>", "_=", "é^"]
SIGNS = ["", "+", " ", "-"]
ZS = ["", "z"]
ALTS = ["", "#"]
ZEROS = ["", "0"]
WIDTHS = ["", "1", "8", "12"]
GROUPS = ["", ",", "_"]
PRECS = ["", ".0", ".1", ".3", ".10"]
TYPES = ["", "d", "b", "o", "x", "X", "e", "E", "f", "F", "g", "G", "%", "s"]

HAND = [
    "", "d", ",", "_", "08,", "09,", "010,", "_x", "#_b", "#o", "#X", ">10", "<10",
    "^10", "=+10", "+", " ", "-", ".2f", ".0f", "#.0f", "z.2f", "+.3e", ".3g",
    "#.3g", ".3", ".1", ".0", ".3%", ",.2f", "_.1f", "010.3f", "<08", "<05",
    "0=8", "x<8", "*^9.2e", "e", "E", "G", "F", "%", ".10g", ".17g", ".20f",
    "s", ">6s", ".2s", "^7.3s", "0", "05", "=", "+08.2f", " 8.1e", "z", "z.0f",
]


def spec_sample():
    rng = random.Random(20261201)
    specs = list(HAND)
    seen = set(specs)
    while len(specs) < 700:
        s = "".join(
            rng.choice(part)
            for part in (ALIGNS, SIGNS, ZS, ALTS, ZEROS, WIDTHS, GROUPS, PRECS, TYPES)
        )
        if s not in seen:
            seen.add(s)
            specs.append(s)
    return specs


def run(value, spec):
    # twill's one extension: `s` formats any value, as its str.
    if spec.endswith("s") and not isinstance(value, str):
        value = str(value)
    try:
        return "ok", format(value, spec)
    except ValueError:
        return "err", ""


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "..", "testdata", "vectors", "format_spec.tsv")
    lines = ["# kind\tvalue\ttext\tspec\tstatus\tout (tools/oracle/format_spec.py, CPython "
             + ".".join(map(str, sys.version_info[:3])) + ")"]
    for spec in spec_sample():
        for n in INTS:
            lines.append("\t".join(["int", str(n), str(n), spec, *run(n, spec)]))
        for x in FLOATS:
            bits = struct.unpack("<Q", struct.pack("<d", x))[0]
            lines.append("\t".join(["float", f"{bits:016x}", repr(x), spec, *run(x, spec)]))
        for s in STRS:
            lines.append("\t".join(["str", s, s, spec, *run(s, spec)]))
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(lines) - 1} cases to {os.path.normpath(path)}")


if __name__ == "__main__":
    main()
