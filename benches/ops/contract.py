#!/usr/bin/env python3
"""Contraction benchmarks, twill against NumPy (+ ml_dtypes for bf16) in
one run: matmul f32 and f64 1024², bf16 512² (f32 accumulation), a batched
einsum and a conv2d. Prints best-of times, GFLOP/s and ratios.

    cargo build --release
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \\
        tools/oracle/.venv/bin/python benches/ops/contract.py

The twill side runs benches/ops/contract.tw, which times each operation with
`clock()` inside the program. Both sides use the same number of threads:
twill's rayon pool and OpenBLAS are each given THREADS (default 2, the
machine's cores). OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE, if set in the
environment, pin OpenBLAS to a kernel; the script prints the kernel OpenBLAS
actually runs. A benchmark, never a test: nothing here asserts a time.
"""
import os
import subprocess
import sys

THREADS = os.environ.get("THREADS", "2")
# Must be set before NumPy loads OpenBLAS.
os.environ["OPENBLAS_NUM_THREADS"] = THREADS

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

from timing import HERE, TWILL, best_ms, conv2d_numpy, openblas_core  # noqa: E402


def main():
    env = dict(os.environ, RAYON_NUM_THREADS=THREADS)
    out = subprocess.run(
        [TWILL, "run", os.path.join(HERE, "contract.tw")], capture_output=True, text=True, check=True, env=env
    )
    tw = [float(v) for v in out.stdout.split()]

    rng = np.random.default_rng(1)
    a32, b32 = (rng.standard_normal((1024, 1024), dtype=np.float32) for _ in range(2))
    a64, b64 = (rng.standard_normal((1024, 1024)) for _ in range(2))
    a16, b16 = (rng.standard_normal((512, 512), dtype=np.float32).astype(ml_dtypes.bfloat16) for _ in range(2))
    e1 = rng.standard_normal((64, 128, 64), dtype=np.float32)
    e2 = rng.standard_normal((64, 64, 128), dtype=np.float32)
    x = rng.standard_normal((8, 64, 56, 56), dtype=np.float32)
    w = rng.standard_normal((64, 64, 3, 3), dtype=np.float32)

    rows = [
        ("matmul f32 1024²", 2 * 1024**3, tw[0], best_ms(lambda: a32 @ b32), "a @ b (sgemm)"),
        ("matmul f64 1024²", 2 * 1024**3, tw[1], best_ms(lambda: a64 @ b64), "a @ b (dgemm)"),
        ("matmul bf16 512²", 2 * 512**3, tw[2], best_ms(lambda: np.dot(a16, b16), 3), "np.dot on ml_dtypes bf16"),
        ("", 2 * 512**3, tw[2],
         best_ms(lambda: (a16.astype(np.float32) @ b16.astype(np.float32)).astype(ml_dtypes.bfloat16)),
         "cast to f32, sgemm, cast back"),
        ("einsum bij,bjk->bik 64×128×64×128", 2 * 64 * 128 * 64 * 128, tw[3],
         best_ms(lambda: np.einsum("bij,bjk->bik", e1, e2)), "np.einsum"),
        ("", 2 * 64 * 128 * 64 * 128, tw[3], best_ms(lambda: np.matmul(e1, e2)), "np.matmul"),
        ("conv2d 8×64×56×56, 64×64×3×3, pad 1", 2 * 8 * 64 * 56 * 56 * 64 * 9, tw[4],
         best_ms(lambda: conv2d_numpy(x, w, 1)), "im2col + sgemm"),
    ]
    print(f"threads: {THREADS}; OpenBLAS kernel: {openblas_core()} "
          f"(OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', 'unset')}, "
          f"OPENBLAS_L2_SIZE={os.environ.get('OPENBLAS_L2_SIZE', 'unset')})")
    print(f"{'benchmark':38} {'twill ms':>9} {'GFLOP/s':>8} {'peer ms':>9} {'GFLOP/s':>8} {'ratio':>7}  peer")
    for name, flops, t, p, peer in rows:
        print(f"{name:38} {t:9.2f} {flops / t / 1e6:8.1f} {p:9.2f} {flops / p / 1e6:8.1f} {p / t:6.2f}x  {peer}")
    print("ratio = peer time / twill time: above 1, twill is faster.")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
