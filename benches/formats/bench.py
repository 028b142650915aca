#!/usr/bin/env python3
"""The formats lab's rounding (spec §13) against twill's own f32 -> bf16
cast and against ml_dtypes, in one run, on 16M f32 elements: the cast,
`x.round_to(formats.bf16)` and `x.round_to(formats.e4m3fn)` in twill;
`x.astype(bfloat16).astype(float32)` and the same through
`float8_e4m3fn` in NumPy + ml_dtypes (the STORAGE_ONLY round trip); and
twill's EVERY_STEP `sum(x, acc=formats.bf16)` of 1M f64 elements. Best of
5 inside one process for each side. Prints a table.

    cargo build --release
    tools/oracle/.venv/bin/python benches/formats/bench.py

A benchmark, never a test: nothing here asserts a time.
"""
import os
import subprocess
import sys

import ml_dtypes
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "ops"))
from timing import TWILL, best_ms, isa  # noqa: E402  (benches/ops/timing.py)


def main():
    out = subprocess.run([TWILL, "run", os.path.join(HERE, "round_to.tw")], capture_output=True, text=True, check=True)
    cast, rbf16, re4m3, ssum = (float(v) for v in out.stdout.split())
    x = np.random.default_rng(1).standard_normal(16777216).astype(np.float32)
    np_bf16 = best_ms(lambda: x.astype(ml_dtypes.bfloat16).astype(np.float32), repeat=5)
    np_e4m3 = best_ms(lambda: x.astype(ml_dtypes.float8_e4m3fn).astype(np.float32), repeat=5)
    print(f"ISA: {isa()}; {os.cpu_count()} cores")
    print("| workload | twill | ml_dtypes | ml_dtypes/twill | twill round_to / twill cast |")
    print("|---|---|---|---|---|")
    print(f"| f32 -> bf16 cast, 16M | {cast:.1f} ms | | | |")
    print(f"| round_to(bf16), 16M f32 | {rbf16:.1f} ms | {np_bf16:.1f} ms | {np_bf16 / rbf16:.2f}× | {rbf16 / cast:.2f}× |")
    print(f"| round_to(e4m3fn), 16M f32 | {re4m3:.1f} ms | {np_e4m3:.1f} ms | {np_e4m3 / re4m3:.2f}× | {re4m3 / cast:.2f}× |")
    print(f"| sum(acc=bf16), 1M f64 | {ssum:.1f} ms | | | |")


if __name__ == "__main__":
    main()
