#!/usr/bin/env python3
"""Interpreter overhead of one tensor operation on 4-element tensors: an
untracked `a + b` and a `x * y` recorded on a tape (spec §8).

overhead.tw times each case with clock() inside twill, subtracts a loop
whose body only binds a variable, and prints microseconds per operation;
this script runs it RUNS times as separate processes and shows the best of
each case (the host is shared, so the minimum is the least disturbed run).
A benchmark, never a test: nothing here asserts a time.

    cargo build --release && python3 benches/overhead/bench.py
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TWILL = os.environ.get("TWILL", os.path.join(ROOT, "target", "release", "twill"))
RUNS = int(os.environ.get("RUNS", "5"))
LABELS = {
    "loop_iteration": "loop iteration binding a (baseline)",
    "add_untracked": "a + b, 4 elements, untracked",
    "mul_tracked": "x * y, 4 elements, tracked on a tape",
    "sum_keyword": "a.sum(axis=0), 4 elements, keyword argument",
}


def main():
    if not os.path.exists(TWILL):
        sys.exit("build first: cargo build --release")
    best = {}
    for _ in range(RUNS):
        res = subprocess.run(
            [TWILL, "run", os.path.join(HERE, "overhead.tw")],
            capture_output=True, text=True, check=True,
        )
        for line in res.stdout.splitlines():
            name, value = line.split()
            best[name] = min(best.get(name, float("inf")), float(value))
    for name, label in LABELS.items():
        print(f"{label:40} {best[name]:7.3f} µs/op")


if __name__ == "__main__":
    main()
