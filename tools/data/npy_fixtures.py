"""Writes the NPY fixtures of testdata/data/ with NumPy's own writer, for the
unit tests of crates/eval/src/data.rs (load_npy/save_npy).

    tools/oracle/.venv/bin/python tools/data/npy_fixtures.py

The values are repeated as literals in the Rust tests, so a change here must
be mirrored there. Files whose name starts with `c_` are C-order,
little-endian, version-1.0 files: `save_npy` must reproduce them byte for
byte. The others exercise what only the reader meets: Fortran order, a
big-endian byte order, a version-2.0 header, and dtypes twill does not have.
"""

from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[2] / "testdata" / "data"

F64 = np.array(
    [[0.1, -0.0, np.inf], [-np.inf, 5e-324, np.nan], [1.7976931348623157e308, -2.5, 3.0]],
    dtype=np.float64,
)
F32 = np.array([0.1, -1.5, 3.4028235e38, 1e-45, np.inf, -0.0], dtype=np.float32)
F16 = np.array([[0.1, -65504.0], [6e-8, np.inf]], dtype=np.float16)
I8 = np.array([-128, -1, 0, 1, 127], dtype=np.int8)
I32 = np.array([[-2147483648, -1], [0, 2147483647]], dtype=np.int32)
BOOL = np.array([[True, False, True], [False, False, True]], dtype=np.bool_)


def save(name: str, arr: np.ndarray, version=None) -> None:
    with open(OUT / name, "wb") as f:
        np.lib.format.write_array(f, arr, version=version, allow_pickle=False)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    save("c_f64_3x3.npy", F64)
    save("c_f32_6.npy", F32)
    save("c_f16_2x2.npy", F16)
    save("c_i8_5.npy", I8)
    save("c_i32_2x2.npy", I32)
    save("c_bool_2x3.npy", BOOL)
    save("c_f64_scalar.npy", np.array(2.5))
    save("c_f32_0x3.npy", np.zeros((0, 3), dtype=np.float32))
    # A header that fills exactly two 64-byte blocks before NumPy's padding,
    # which therefore adds a whole third block.
    save("c_i8_rank14.npy", np.arange(100, dtype=np.int8).reshape((1,) * 13 + (100,)))
    # Fortran order: element [i, j, k] = 100 i + 10 j + k.
    idx = np.indices((2, 3, 4))
    save("fortran_i32_2x3x4.npy", np.asfortranarray((100 * idx[0] + 10 * idx[1] + idx[2]).astype(np.int32)))
    save("big_f64_2x2.npy", np.array([[1.5, -2.0], [np.inf, 0.1]], dtype=">f8"))
    save("big_i32_3.npy", np.array([1, -2, 70000], dtype=">i4"))
    save("v2_f32_2x2.npy", np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32), version=(2, 0))
    save("int64_3.npy", np.arange(3, dtype=np.int64))


if __name__ == "__main__":
    main()
