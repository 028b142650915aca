"""Writes examples/data/digits.csv from scikit-learn's copy of the UCI
handwritten digits (8x8 images, 1797 samples).

The copy is taken from a scikit-learn wheel, read as a zip file, so that no
scikit-learn installation (and no network access beyond fetching the wheel)
is needed:

    tools/oracle/.venv/bin/pip download scikit-learn --no-deps -d /tmp/skl
    tools/oracle/.venv/bin/python tools/data/digits.py /tmp/skl/scikit_learn-*.whl

The rows keep their original order; each is 64 pixel counts (0..16, row-major
over the 8x8 image) and the digit label (0..9), written as plain integers
under the header `p0,...,p63,label`. The script checks the shape and ranges,
and prints the SHA-256 of the CSV it wrote (recorded in
examples/data/README.md).
"""

import gzip
import hashlib
import sys
import zipfile
from pathlib import Path

MEMBER = "sklearn/datasets/data/digits.csv.gz"
OUT = Path(__file__).resolve().parents[2] / "examples" / "data" / "digits.csv"


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: digits.py SCIKIT_LEARN_WHEEL")
    with zipfile.ZipFile(sys.argv[1]) as whl:
        text = gzip.decompress(whl.read(MEMBER)).decode("ascii")

    rows = []
    for line_no, line in enumerate(text.splitlines(), 1):
        # The source cells are integers, sometimes written as "3.0".
        cells = [float(c) for c in line.split(",")]
        if len(cells) != 65 or any(c != int(c) for c in cells):
            sys.exit(f"{MEMBER}:{line_no}: expected 65 integers")
        ints = [int(c) for c in cells]
        if not all(0 <= p <= 16 for p in ints[:64]) or not 0 <= ints[64] <= 9:
            sys.exit(f"{MEMBER}:{line_no}: value out of range")
        rows.append(ints)
    if len(rows) != 1797:
        sys.exit(f"expected 1797 samples, found {len(rows)}")

    header = ",".join([f"p{i}" for i in range(64)] + ["label"])
    body = "".join(",".join(map(str, r)) + "\n" for r in rows)
    data = (header + "\n" + body).encode("ascii")
    OUT.write_bytes(data)
    print(f"wrote {OUT} ({len(rows)} rows, {len(data)} bytes)")
    print(f"sha256 {hashlib.sha256(data).hexdigest()}")


if __name__ == "__main__":
    main()
