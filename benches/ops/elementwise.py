#!/usr/bin/env python3
"""Elementwise benchmarks, twill against NumPy (+ ml_dtypes for bf16) in one
run, on 16M-element tensors: exp f32 (target: no slower than NumPy), tanh
f32, exp bf16, x + y, x * 0.5, a bias row broadcast over a 4000x4000 matrix,
relu, a comparison, where, and a bf16 add. Prints best-of times and ratios.

    cargo build --release
    tools/oracle/.venv/bin/python benches/ops/elementwise.py

The twill side runs benches/ops/elementwise.tw, which times each operation
with `clock()` inside the program, on rayon's default pool (one thread per
core; RAYON_NUM_THREADS overrides it). NumPy's elementwise loops are
single-threaded SIMD. Both sides allocate a fresh result every run. A
benchmark, never a test: nothing here asserts a time.
"""
import os
import subprocess

import ml_dtypes
import numpy as np

from timing import HERE, TWILL, best_ms




def main():
    out = subprocess.run([TWILL, "run", os.path.join(HERE, "elementwise.tw")], capture_output=True, text=True, check=True)
    tw = [float(v) for v in out.stdout.split()]
    n = 16_000_000
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    h = x.astype(ml_dtypes.bfloat16)
    m = rng.standard_normal((4000, 4000)).astype(np.float32)
    row = rng.standard_normal(4000).astype(np.float32)
    rows = [
        ("exp f32", lambda: np.exp(x)),
        ("tanh f32", lambda: np.tanh(x)),
        ("exp bf16 (ml_dtypes)", lambda: np.exp(h)),
        ("x + y f32", lambda: x + y),
        ("x * 0.5 f32", lambda: x * np.float32(0.5)),
        ("[4000,4000] + [4000] f32", lambda: m + row),
        ("relu f32 (maximum(x, 0))", lambda: np.maximum(x, np.float32(0))),
        ("x > 0 f32", lambda: x > 0),
        ("where(x > 0, x, y) f32", lambda: np.where(x > 0, x, y)),
        ("h + h bf16 (ml_dtypes)", lambda: h + h),
    ]
    print(f"{'16M elements (ms)':28} {'twill':>9} {'numpy':>9} {'ratio':>7}")
    for (label, fn), t in zip(rows, tw):
        p = best_ms(fn)
        print(f"{label:28} {t:9.2f} {p:9.2f} {p / t:6.2f}x")
    print("(ratio = numpy / twill: above 1, twill is faster)")


if __name__ == "__main__":
    main()
