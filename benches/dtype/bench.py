#!/usr/bin/env python3
"""Dtype benchmarks, twill against NumPy + ml_dtypes in one run:
casts of 16M elements (f32 -> bf16, bf16 -> f32) and the peak resident
memory of a 64M-element bf16 tensor. Prints a table of times and ratios.

    cargo build --release
    tools/oracle/.venv/bin/python benches/dtype/bench.py

Needs numpy and ml_dtypes (tools/oracle/requirements.txt). A benchmark,
never a test: nothing here asserts a time.
"""
import os
import re
import subprocess
import sys
import time

import ml_dtypes
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TWILL = os.path.join(ROOT, "target", "release", "twill")


def best_ms(fn, repeat=5):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def peak_rss_mb(cmd):
    res = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True, check=True)
    kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", res.stderr).group(1))
    return kb / 1024


def main():
    out = subprocess.run([TWILL, "run", os.path.join(HERE, "cast.tw")], capture_output=True, text=True, check=True)
    tw_down, tw_up = (float(v) for v in out.stdout.split())
    x = np.random.default_rng(1).standard_normal(16_000_000).astype(np.float32)
    y = x.astype(ml_dtypes.bfloat16)
    np_down = best_ms(lambda: x.astype(ml_dtypes.bfloat16))
    np_up = best_ms(lambda: y.astype(np.float32))
    print(f"{'benchmark':34} {'twill':>10} {'ml_dtypes':>10} {'ratio':>7}")
    print(f"{'f32 -> bf16, 16M elements (ms)':34} {tw_down:10.1f} {np_down:10.1f} {np_down / tw_down:6.2f}x")
    print(f"{'bf16 -> f32, 16M elements (ms)':34} {tw_up:10.1f} {np_up:10.1f} {np_up / tw_up:6.2f}x")
    n = 64_000_000
    for label, tw_src, py_src in [
        ("zeros([64M], bf16) peak RSS (MB)", "let x = zeros([64000000], bf16)\nprint(x.shape)\n",
         "import numpy as np, ml_dtypes\nx = np.zeros(64000000, dtype=ml_dtypes.bfloat16)\nprint(x.shape)\n"),
        ("ones([64M], bf16) peak RSS (MB)", "let x = ones([64000000], bf16)\nprint(x.shape)\n",
         "import numpy as np, ml_dtypes\nx = np.ones(64000000, dtype=ml_dtypes.bfloat16)\nprint(x.shape)\n"),
    ]:
        path = os.path.join("/tmp", "twill_rss_bench.tw")
        with open(path, "w") as f:
            f.write(tw_src)
        tw = peak_rss_mb([TWILL, "run", path])
        py = peak_rss_mb([sys.executable, "-c", py_src])
        print(f"{label:34} {tw:10.1f} {py:10.1f} {py / tw:6.2f}x")
    print(f"(64M bf16 elements are {n * 2 / 2**20:.1f} MiB of data; ratio = peer / twill, above 1: twill is better)")


if __name__ == "__main__":
    main()
