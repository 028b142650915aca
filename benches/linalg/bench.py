#!/usr/bin/env python3
"""Linear algebra (spec §11.4) in twill against NumPy/OpenBLAS, in one run:
`solve` of a 1024×1024 f64 system with one right-hand side (a vector; LU
with partial pivoting, LAPACK's gesv in NumPy) and the reduced SVD of a
512×512 f64 matrix with u, s and vh (`np.linalg.svd(full_matrices=False)`,
LAPACK's gesdd). Best of 5 after a warm-up, inside one process for each
side. twill factors each matrix on one thread (faer, sequential: the bits
cannot depend on the thread count); NumPy's OpenBLAS uses every core, as
it does by default.

    cargo build --release
    tools/oracle/.venv/bin/python benches/linalg/bench.py

A benchmark, never a test: nothing here asserts a time.
"""
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "ops"))
from timing import TWILL, best_ms, isa  # noqa: E402  (benches/ops/timing.py)


def main():
    out = subprocess.run([TWILL, "run", os.path.join(HERE, "linalg.tw")], capture_output=True, text=True, check=True)
    tw_solve, tw_svd = (float(v) for v in out.stdout.split())
    rng = np.random.default_rng(1)
    a = rng.standard_normal((1024, 1024))
    b = rng.standard_normal(1024)
    m = rng.standard_normal((512, 512))
    np_solve = best_ms(lambda: np.linalg.solve(a, b), repeat=5)
    np_svd = best_ms(lambda: np.linalg.svd(m, full_matrices=False), repeat=5)
    with open("/proc/cpuinfo") as f:
        model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    print(f"CPU: {model}; ISA: {isa()}; {os.cpu_count()} cores; NumPy {np.__version__}")
    print("| workload | twill | NumPy | twill/NumPy time | speed (NumPy/twill) |")
    print("|---|---|---|---|---|")
    for name, t, n in [
        ("solve, 1024×1024 f64, one right-hand side", tw_solve, np_solve),
        ("svd, 512×512 f64, reduced, u s vh", tw_svd, np_svd),
    ]:
        print(f"| {name} | {t:.2f} ms | {n:.2f} ms | {t / n:.2f} | {n / t:.2f}× |")


if __name__ == "__main__":
    main()
