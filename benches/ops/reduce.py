#!/usr/bin/env python3
"""Reduction benchmarks, twill against NumPy (+ ml_dtypes for bf16) in one
run: the sum of 16M bf16 elements with f32 accumulation (target <= 2 ms;
NumPy's `sum(dtype=float32)` on an ml_dtypes array is the peer), the f32 sum
of 16M, and on a 4096 x 4096 f32 matrix: row softmax (target <= 70 ms),
log_softmax, logsumexp, and the column sum (axis 0).

    cargo build --release
    tools/oracle/.venv/bin/python benches/ops/reduce.py

The twill side runs benches/ops/reduce.tw, which times each operation with
`clock()` inside the program on rayon's default pool. NumPy's softmax is the
usual stable formula `e = exp(x - max); e / e.sum()`, row-wise. A
benchmark, never a test: nothing here asserts a time.
"""
import os
import subprocess

import ml_dtypes
import numpy as np

from timing import HERE, TWILL, best_ms




def softmax(y):
    e = np.exp(y - y.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def log_softmax(y):
    s = y - y.max(axis=1, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=1, keepdims=True))


def logsumexp(y):
    m = y.max(axis=1, keepdims=True)
    return (m + np.log(np.exp(y - m).sum(axis=1, keepdims=True)))[:, 0]


def main():
    out = subprocess.run([TWILL, "run", os.path.join(HERE, "reduce.tw")], capture_output=True, text=True, check=True)
    tw = [float(v) for v in out.stdout.split()]
    rng = np.random.default_rng(1)
    x = rng.standard_normal(16_000_000).astype(np.float32)
    xb = x.astype(ml_dtypes.bfloat16)
    y = rng.standard_normal((4096, 4096)).astype(np.float32)
    rows = [
        ("sum bf16 16M (f32 acc)", lambda: xb.sum(dtype=np.float32)),
        ("sum f32 16M", lambda: x.sum()),
        ("softmax rows 4096^2 f32", lambda: softmax(y)),
        ("log_softmax rows f32", lambda: log_softmax(y)),
        ("logsumexp rows f32", lambda: logsumexp(y)),
        ("sum axis 0 4096^2 f32", lambda: y.sum(axis=0)),
    ]
    print(f"{'reduction (ms)':28} {'twill':>9} {'numpy':>9} {'ratio':>7}")
    for (label, fn), t in zip(rows, tw):
        p = best_ms(fn)
        print(f"{label:28} {t:9.2f} {p:9.2f} {p / t:6.2f}x")
    print("(ratio = numpy / twill: above 1, twill is faster)")


if __name__ == "__main__":
    main()
