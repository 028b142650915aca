#!/usr/bin/env python3
"""Times twill's evaluator against python3 (and lua5.4 where installed) on
the same programs, in one run, and prints the ratios.

Each program runs REPEAT times per interpreter; the table shows the median
wall time of the whole process (start-up included, for every interpreter
alike). A benchmark, never a test: nothing here asserts a time.

    cargo build --release && python3 benches/lang/bench.py
"""
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TWILL = os.path.join(ROOT, "target", "release", "twill")
REPEAT = int(os.environ.get("REPEAT", "7"))
PROGRAMS = ["fib", "loop"]


def time_it(cmd):
    times = []
    out = None
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        res = subprocess.run(cmd, capture_output=True, text=True, check=True)
        times.append(time.perf_counter() - t0)
        out = res.stdout.strip()
    return statistics.median(times), out


def main():
    if not os.path.exists(TWILL):
        sys.exit("build first: cargo build --release")
    peers = [("python3", [sys.executable], ".py")]
    lua = shutil.which("lua5.4")
    if lua:
        peers.append(("lua5.4", [lua], ".lua"))
    header = f"{'program':8} {'twill ms':>9}" + "".join(f" {p:>9} {'ratio':>7}" for p, _, _ in peers)
    print(header)
    for prog in PROGRAMS:
        t_twill, out_twill = time_it([TWILL, "run", os.path.join(HERE, prog + ".tw")])
        row = f"{prog:8} {t_twill * 1e3:9.1f}"
        for name, cmd, ext in peers:
            t, out = time_it(cmd + [os.path.join(HERE, prog + ext)])
            if out != out_twill:
                sys.exit(f"{prog}: {name} printed {out!r}, twill printed {out_twill!r}")
            row += f" {t * 1e3:9.1f} {t / t_twill:6.2f}x"
        print(row)
    print("ratio = peer time / twill time (above 1: twill is faster)")


if __name__ == "__main__":
    main()
