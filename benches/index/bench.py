#!/usr/bin/env python3
"""Indexing and assignment into tensors (spec §11) in twill against NumPy,
in one run: setting one element of a 10^8-element f32 array 10^4 times
(in a function in both; the array made with `ones`, so that the loop
measures the sets and not the page faults of first touching lazily mapped
zeros), a gather of 10^6 random indices from 10^7 f32
elements, a mask read (`x[x > 0]`), a `+=` of 10^6 indices into 10^5
bins with repeats (`np.add.at`, NumPy's spelling of twill's rule), and a
strided slice assignment (`s[::2] = 0`, which in twill includes the copy
of the shared source). Best of 5 inside one process for each side.

    cargo build --release
    tools/oracle/.venv/bin/python benches/index/bench.py

A benchmark, never a test: nothing here asserts a time.
"""
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "ops"))
from timing import TWILL, best_ms, isa  # noqa: E402  (benches/ops/timing.py)


def set_one(y):
    t0 = time.perf_counter()
    for i in range(10000):
        y[i * 9973] = 1.5
    return (time.perf_counter() - t0) * 1e3


def main():
    out = subprocess.run([TWILL, "run", os.path.join(HERE, "assign.tw")], capture_output=True, text=True, check=True)
    tw = [float(v) for v in out.stdout.split()]
    np_set = min(set_one(np.ones(100_000_000, dtype=np.float32)) for _ in range(5))
    rng = np.random.default_rng(1)
    src = rng.standard_normal(10_000_000).astype(np.float32)
    idx = rng.integers(0, 10_000_000, 1_000_000)
    bins = rng.integers(0, 100_000, 1_000_000)
    np_gather = best_ms(lambda: src[idx], repeat=5)
    np_mask = best_ms(lambda: src[src > 0], repeat=5)

    def add():
        h = np.zeros(100_000, dtype=np.float32)
        np.add.at(h, bins, 1)

    def strided():
        s = src.copy()
        s[::2] = 0

    np_add = best_ms(add, repeat=5)
    np_slice = best_ms(strided, repeat=5)
    print(f"ISA: {isa()}; {os.cpu_count()} cores")
    print("| workload | twill | NumPy | NumPy/twill |")
    print("|---|---|---|---|")
    rows = [
        ("x[i] = 1.5, 10^4 times, x of 10^8 f32", tw[0], np_set),
        ("src[idx], 10^6 of 10^7 f32", tw[1], np_gather),
        ("src[src > 0], 10^7 f32", tw[2], np_mask),
        ("h[bins] += 1, 10^6 into 10^5 (np.add.at)", tw[3], np_add),
        ("s = src; s[::2] = 0, 10^7 f32 (copy + write)", tw[4], np_slice),
    ]
    for name, t, n in rows:
        print(f"| {name} | {t:.2f} ms | {n:.2f} ms | {n / t:.2f}× |")


if __name__ == "__main__":
    main()
