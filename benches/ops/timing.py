"""What the benchmarks in benches/ops/ share: where the twill binary is,
and the best-of timing of a Python callable. Imports nothing heavy, so a
script can set OpenBLAS's environment before it loads NumPy."""
import os
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TWILL = os.path.join(ROOT, "target", "release", "twill")


def best_ms(fn, repeat=7):
    """The fastest of `repeat` calls of `fn` (after one warm-up), in ms."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def isa():
    """The widest SIMD this CPU has, as performance.md names it."""
    with open("/proc/cpuinfo") as f:
        flags = f.read()
    return "AVX-512" if "avx512f" in flags else ("AVX2" if "avx2" in flags else "SSE only")
