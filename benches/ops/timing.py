"""What the benchmarks in benches/ and benches/ops/ share: where the twill
binary is, the best-of timing of a Python callable, the CPU's name and ISA,
OpenBLAS's kernel and NumPy's conv2d. Imports nothing heavy at load (NumPy
only inside the functions that need it), so a script can set OpenBLAS's
environment before NumPy loads."""
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


def cpu_model():
    """The CPU's model name from /proc/cpuinfo."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def openblas_core():
    """The kernel family OpenBLAS selected at load time (e.g. Haswell,
    SkylakeX), read from the library NumPy bundles."""
    import ctypes
    import glob

    import numpy as np

    libdir = os.path.join(os.path.dirname(np.__file__), "..", "numpy.libs")
    for path in glob.glob(os.path.join(libdir, "*openblas*")):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("scipy_openblas_get_corename64_", "openblas_get_corename64_", "openblas_get_corename"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return fn().decode()
    return "unknown"


def conv2d_numpy(x, w, padding):
    """conv2d as NumPy users write it: im2col with stride tricks, then one
    BLAS matmul (in the inputs' dtype)."""
    import numpy as np

    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    oh, ow = h + 2 * padding - kh + 1, wd + 2 * padding - kw + 1
    s = xp.strides
    cols = np.lib.stride_tricks.as_strided(
        xp, (n, c, kh, kw, oh, ow), (s[0], s[1], s[2], s[3], s[2], s[3])
    ).reshape(n, c * kh * kw, oh * ow)
    return (w.reshape(o, -1) @ cols).reshape(n, o, oh, ow)
