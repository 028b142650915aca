"""Writes testdata/vectors/dtype_info.txt: NumPy's finfo and iinfo of every
twill dtype that has them (ml_dtypes' for bf16), for the test
`dtype_limits_match_numpy_and_ml_dtypes` in crates/tensor/tests/casts.rs.

    tools/oracle/.venv/bin/python tools/oracle/dtype_info.py

Each line is `finfo DTYPE FIELD F64BITS` (the value's f64 bit pattern in
hex) or `iinfo DTYPE FIELD INT`. Exact: every value is an f64 or an
integer with no rounding.
"""

import struct
from pathlib import Path

import ml_dtypes
import numpy as np

OUT = Path(__file__).resolve().parents[2] / "testdata" / "vectors" / "dtype_info.txt"
FLOATS = {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "f32": np.float32, "f64": np.float64}
INTS = {"i8": np.int8, "i32": np.int32}


def bits(x):
    return struct.unpack("<Q", struct.pack("<d", float(x)))[0]


def main():
    lines = [f"# {__doc__.splitlines()[0]}", f"# numpy {np.__version__}, ml_dtypes {ml_dtypes.__version__}"]
    for name, t in FLOATS.items():
        fi = ml_dtypes.finfo(t) if name == "bf16" else np.finfo(t)
        for field in ("eps", "max", "min", "tiny", "smallest_subnormal"):
            lines.append(f"finfo {name} {field} {bits(getattr(fi, field)):016x}")
        lines.append(f"finfo {name} bits {fi.bits}")
    for name, t in INTS.items():
        ii = np.iinfo(t)
        for field in ("min", "max", "bits"):
            lines.append(f"iinfo {name} {field} {int(getattr(ii, field))}")
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT.relative_to(OUT.parents[2])}: {len(lines) - 2} values")


if __name__ == "__main__":
    main()
