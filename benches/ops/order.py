#!/usr/bin/env python3
"""Ordering and rearrangement benchmarks, twill against NumPy (+ ml_dtypes
for bf16) in one run: sort/argsort/topk of 1M elements and of 1000 lanes
of 1000, and the copying rearrangements (concat, a transposed reshape,
roll, index_select, gather) on 1000x1000 f32. Prints best-of times and
ratios.

    cargo build --release
    tools/oracle/.venv/bin/python benches/ops/order.py

The twill side runs benches/ops/order.tw, which times each operation with
`clock()` inside the program (best of 11-21 runs after a warm-up); the
NumPy side is timed the same way here, on data of the same distributions
(the two generators differ, so the values do). twill's sorts are stable
and order NaN as PyTorch does; NumPy's default `np.sort` is an unstable
SIMD quicksort, so the stable NumPy kinds are printed as well. twill uses
its rayon pool (the machine's cores) across lanes and across the buckets
of one long lane; NumPy sorts on one thread. A benchmark, never a test:
nothing here asserts a time.
"""
import os
import subprocess

import ml_dtypes
import numpy as np

from timing import HERE, TWILL, best_ms

REPS = 11

# Targets from the issue, in ms (none for the rest).
TARGETS = {"sort_f32_1M": 6.3}



def topk(x, k):
    """Values of the k largest, largest first (NumPy has no topk)."""
    idx = np.argpartition(-x, k)[:k]
    return x[idx[np.argsort(-x[idx], kind="stable")]]


def main():
    out = subprocess.run([TWILL, "run", os.path.join(HERE, "order.tw")], capture_output=True, text=True, check=True)
    tw = {}
    for line in out.stdout.splitlines():
        name, ms = line.split()
        tw[name] = float(ms)

    rng = np.random.default_rng(1)
    n = 1 << 20
    x = rng.standard_normal(n).astype(np.float32)
    x64 = rng.standard_normal(n)
    xb = rng.standard_normal(n).astype(ml_dtypes.bfloat16)
    xi = (rng.standard_normal(n) * 1e6).astype(np.int32)
    m = rng.standard_normal((1000, 1000)).astype(np.float32)
    rows = (rng.random(1000) * 1000).astype(np.int32)
    cols = (rng.random((1000, 1000)) * 1000).astype(np.int32)

    # name -> (NumPy default, NumPy stable or None)
    numpy = {
        "sort_f32_1M": (lambda: np.sort(x), lambda: np.sort(x, kind="stable")),
        "sort_f32_1M_desc": (lambda: np.sort(x)[::-1].copy(), lambda: np.sort(x, kind="stable")[::-1].copy()),
        "argsort_f32_1M": (lambda: np.argsort(x), lambda: np.argsort(x, kind="stable")),
        "sort_f64_1M": (lambda: np.sort(x64), lambda: np.sort(x64, kind="stable")),
        "sort_bf16_1M": (lambda: np.sort(xb), lambda: np.sort(xb, kind="stable")),
        "sort_i32_1M": (lambda: np.sort(xi), lambda: np.sort(xi, kind="stable")),
        "topk_f32_1M_k10": (lambda: topk(x, 10), None),
        "sort_f32_1000x1000_rows": (lambda: np.sort(m, axis=-1), lambda: np.sort(m, axis=-1, kind="stable")),
        "sort_f32_1000x1000_axis0": (lambda: np.sort(m, axis=0), lambda: np.sort(m, axis=0, kind="stable")),
        "argsort_f32_1000x1000_rows": (lambda: np.argsort(m, axis=-1), lambda: np.argsort(m, axis=-1, kind="stable")),
        "concat_f32_2x1000x1000_axis1": (lambda: np.concatenate([m, m], axis=1), None),
        "transpose_reshape_f32_1000x1000": (lambda: m.T.reshape(-1), None),
        "roll_f32_1000x1000": (lambda: np.roll(m, 3, 1), None),
        "index_select_f32_1000_rows": (lambda: np.take(m, rows, axis=0), None),
        "gather_f32_1000x1000": (lambda: np.take_along_axis(m, cols, 1), None),
    }
    print(f"{'benchmark (ms)':34} {'twill':>8} {'numpy':>8} {'ratio':>7} {'np stable':>10} {'ratio':>7} {'target':>7}")
    for name, (default, stable) in numpy.items():
        t = tw[name]
        d = best_ms(default, REPS)
        line = f"{name:34} {t:8.2f} {d:8.2f} {d / t:6.2f}x"
        if stable is not None:
            s = best_ms(stable, repeat=5)
            line += f" {s:10.2f} {s / t:6.2f}x"
        else:
            line += f" {'':10} {'':7}"
        if name in TARGETS:
            line += f" {TARGETS[name]:7.1f}"
        print(line)
    print("(ratio = numpy / twill: above 1, twill is faster)")


if __name__ == "__main__":
    main()
