#!/usr/bin/env python3
"""The benchmark matrix: every operation of twill's registry
(crates/tensor/src/ops/mod.rs) and the operators, casts and constructors,
× every dtype each takes × three sizes, timed in twill, in NumPy
(+ ml_dtypes for bf16) and in PyTorch (CPU) in one run on the machine at
hand. Prints a markdown table of best-of times and peer/twill ratios
(above 1: twill is faster) and a list of the cases where twill is slower
than NumPy at the medium or large size. A benchmark, never a test: nothing
here asserts a time.

    cargo build --release && python3 -m venv benches/ops/.venv && benches/ops/.venv/bin/pip install -r benches/ops/requirements.txt && benches/ops/.venv/bin/python benches/ops/matrix.py --write

Options: `--quick` (small and medium sizes of a subset of the operations,
to check the script in a couple of minutes), `--only REGEX` (the case ids
`key/dtype/size` that REGEX searches, e.g. `--only '^(exp|sum)/f32/'`),
`--write` (replace the text between `<!-- ops-matrix:begin -->` and
`<!-- ops-matrix:end -->` in docs/performance.md; without the markers it
says so and changes nothing), `--twill PATH` (another binary; the run
uses a copy taken at its start, so a rebuild meanwhile changes nothing),
`--no-wait` (see "Threads" below), `--update` (with `--only`: re-measure
those cases and merge them into the previous results.json, e.g. after a
kernel change), `--isa avx2` (every side held to AVX2 on an AVX-512 CPU:
twill by `TWILL_ISA=avx2`, NumPy's dispatch by `NPY_DISABLE_CPU_FEATURES`,
OpenBLAS by `OPENBLAS_CORETYPE=Haswell`, torch by
`ATEN_CPU_CAPABILITY=avx2`; results go to target/bench-matrix-avx2/ and
`--write` fills the `ops-matrix-avx2` markers instead: the paths an
AVX2-only machine runs, on this machine's cores, caches and clock). Without
`--write` the table goes to stdout. Raw results go to
target/bench-matrix/results.json (results-only.json for a run with
`--only` and without `--update`, which leaves the full results for the
next `--update` as they are), the generated twill programs to
target/bench-matrix/ (never to benches/).

How it works. At start-up every (operation, dtype) candidate is run once at
the small size as its own tiny twill program (`twill run -`, a few ms each,
two at a time): the pairs that run without error are the dtypes the
operation takes — nothing about dtypes is hard-coded; the ones twill
rejects are listed (with twill's error) in the JSON and, per operation, under
the table. Then for each (size, dtype, group) one twill program is generated
that builds the inputs once and times each case with `clock()` as the best of
R runs after a warm-up run (R from the warm-up's time: 15 under 1 ms, 7
under 50 ms, 5 under 0.3 s, 3 under 1.5 s, else 1; a warm-up over 3 s is
the time), printing `index<TAB>ms`; a runtime error or a timeout loses only
that case (the program is rerun from the next one). NumPy and torch are then
timed here on data of the same shape, dtype and distribution (the
generators differ, so the values do) with `timing.best_ms` and the same R
rule; an exception from a peer (it lacks the op or the dtype) is shown as —.

Threads: twill runs kernels on rayon's pool (one thread per core); torch is
given `torch.set_num_threads(os.cpu_count())`; NumPy's elementwise loops,
sorts and reductions are single-threaded, its BLAS (OpenBLAS: matmul, linear,
the conv2d composite, LAPACK's linalg) uses every core. The host is shared and noisy (cargo may be
building next door): while other processes keep the cores busy, every
multi-threaded call (twill's, torch's, OpenBLAS's) can wait a whole
scheduler slice (about 8 ms) for a descheduled worker, so before each batch
the script waits (up to 60 s, 10 min in all; `--no-wait` skips it) for the
cores to be idle, and the header says how many batches started on a busy
host and the load average at the start and the end.

Inputs (same on every side; n elements, role → values):
  floats  x, y: randn;  p: |randn| + 1 (log, sqrt, divisors, bases of x ** y);
          u: uniform in [-0.9, 0.9) (asin, acos, atanh); e: randn (exponents)
  i8, i32 x, y: randint(-100, 100); p: randint(1, 100); u: randint(-1, 2);
          e: randint(0, 3); q: randint(0, 100) (bincount)
  bool    randn > 0 for every role
  c: randn > 0 (where's condition); g: gather indices, uniform over the last
  axis; ri: index_select's indices, uniform over axis 0; s: a sorted x
  (searchsorted); spd: a @ a.T + N·I for floats (cholesky, eigh), 2·I for
  integers, I for bool.

Sizes (small / medium / large):
  vector ops (elementwise, whole-tensor reductions, scans, ordering, casts,
  constructors): 1-D of 1e3 / 1e5 / 1e7 elements;
  "rows" ops ([n/1000, 1000], along the last axis unless the row says
  axis=0): softmax, log_softmax, sum/mean/max/argmax with an axis, gather,
  index_select (axis 0), transpose, flatten;
  square ops (tril, triu, trace: [s, s]; diag: vector of s → s×s; outer:
  two vectors of s) with s = 32 / 316 / 3162 (about n elements);
  permute: [n/1000, 10, 100]; squeeze: [1, n]; broadcast_to: [1000] →
  [n/1000, 1000];
  matmul, linear (x [N,N], w [N,N], b [N]), einsum "ij,jk->ik": N = 32 / 256 / 1024;
  linalg: N = 16 / 128 / 512 (solve: b a vector [N]; lstsq: a [2N, N], b [2N]);
  conv2d (padding=1): x [1,4,16,16] w [8,4,3,3] / x [4,16,32,32] w [32,16,3,3]
  / x [8,64,56,56] w [64,64,3,3].
Casts: every source→target pair among the seven dtypes at the large size;
the common ones (f32↔bf16, f32↔f16, f32↔f64, i32↔f32, bool→f32) at every
size.

The peer call of each row, where it is not the same-named function
(np = numpy, t = torch; "composite" = what users of that library write):

  twill                      NumPy                                torch
  -------------------------  -----------------------------------  ---------------------------------
  relu                       np.maximum(x, 0)                     t.relu
  rsqrt                      1 / np.sqrt(x) (composite)           t.rsqrt
  sigmoid                    1 / (1 + np.exp(-x)) (composite)     t.sigmoid
  round                      np.round (rint)                      t.round
  erf erfc lgamma digamma    — (SciPy has them; not a NumPy op)   t.special.* / t.lgamma / t.digamma
  polygamma(x, 1)            —                                    t.polygamma(1, x)
  asin acos atan ...         np.arcsin np.arccos np.arctan ...    t.asin ...
  transcendental of i8/i32/bool: twill promotes to f32, so NumPy is called
                             with dtype=np.float32 (NumPy's default would
                             give f16 for i8, f64 for i32); torch promotes
                             to f32 itself
  x / p on integers          np.true_divide(..., dtype=float32)   x / p
  x ** 2, x ** 3             x ** 2 (NumPy's square fast path), x ** 3
  sum prod cumsum cumprod of bool/i8/i32: dtype=int32 on both peers (twill
                             accumulates and answers in i32)
  mean var std of integers   dtype=np.float32                     t.mean(dtype=float32); var/std —
  max min                    np.max np.min                        t.amax t.amin
  median                     np.median (averages the two middle   t.median (lower middle, as twill)
                             values of an even count)
  var std                    np.var np.std (ddof 0)               t.var/t.std(correction=0)
  logsumexp                  m + log(sum(exp(x - m))) (composite) t.logsumexp(x, 0)
  nanmax nanmin              np.nanmax np.nanmin                  — (torch has no nanmax)
  quantile(0.3)              np.quantile(x, 0.3) (linear)         t.quantile(x, 0.3)
  norm (2-norm)              np.linalg.norm(x)                    t.linalg.vector_norm(x)
  softmax, log_softmax       composite with the row max           t.softmax(x, -1) (dtype=float32 for integers)
  sort                       np.sort(kind="stable") (twill's sort t.sort(stable=True)
                             is stable); the row "sort (default)" times
                             NumPy's default kind (an unstable SIMD quicksort)
                             and torch's default
  sort(descending=true)      np.sort(kind="stable")[::-1]         t.sort(descending=True, stable=True)
  argsort                    np.argsort(kind="stable")            t.argsort(stable=True)
  topk(10), argtopk(10)      np.argpartition + argsort of the 10  t.topk(x, 10)(.indices)
                             (composite)
  unique, unique_counts      np.unique(return_counts=...)         t.unique(sorted=True, return_counts=...)
  nonzero                    np.argwhere (same [count, ndim])     t.nonzero
  reshape transpose permute  views on both peers and in twill (as this build's
  flip squeeze unsqueeze     times show): these rows time the call's overhead,
  broadcast_to split flatten not a copy (except torch.flip, which copies);
                             "transpose(0, 1).flatten()" moves data
  flatten                    np.ravel (a view of a contiguous array, as twill's
                             flatten; ndarray.flatten always copies)  t.flatten
  transpose(0, 1)            np.swapaxes                          t.transpose
  concat                     np.concatenate                       t.cat
  diag (vector → matrix)     np.diag                              t.diag
  gather(1, g)               np.take_along_axis(x, g, 1)          t.gather(x, 1, g) (g as int64: torch
                                                                  wants int64 indices; twill takes i32)
  index_select(0, ri)        np.take(x, ri, axis=0)               t.index_select (int64 indices)
  linear(x, w, b)            x @ w.T + b (composite)              t.nn.functional.linear
  matmul dot outer linear    of bool: twill contracts to i32 counts, so both peers
  einsum conv2d              get x.astype(int32) (inside the timed call); their
                             own bool matmul/dot is logical (NumPy) or missing (torch)
  einsum("ij,jk->ik")        np.einsum (default optimize=False:   t.einsum
                             no BLAS)
  conv2d                     im2col by stride tricks + one matmul t.nn.functional.conv2d
                             (composite, as benches/ops/contract.py)
  isclose allclose           np.isclose np.allclose               t.isclose t.allclose (allclose(x, x))
  bits                       view as the integer type + copy      view + clone (bf16/f16: int16 → int32 & 0xFFFF)
                             (bf16/f16: uint16 → int32)
  from_bits(t, dt)           view as dt + copy                    view + clone
  round_to(e4m3fn)           astype(ml_dtypes.float8_e4m3fn)      .to(t.float8_e4m3fn).to(dtype)
                             .astype(dtype)
  svd qr lstsq               full_matrices=False, reduced, rcond=None (NumPy);
                             torch's lstsq with driver="gelsd" (SVD-based, as twill's)
  rand randn of bf16/f16     Generator.random/standard_normal in f32, cast (composite); torch native
  randint of floats          Generator.integers, cast (composite)
  zeros                      np.zeros (calloc: pages are zeroed lazily, on first touch)
  x.to(f32).sum() of bool    x.astype(np.float32).sum()           x.to(t.float32).sum()

Twill reductions reduce the whole tensor unless the row names an axis.
The twill time of a call includes dropping its result, as in Python.
"""
import argparse
import concurrent.futures
import datetime
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
import warnings

# `--isa avx2` must be in the environment before NumPy, OpenBLAS and
# torch load (they pick their kernels then), so it is read here, ahead of
# argparse (which checks it again).
ISA_CAP = None
for _i, _a in enumerate(sys.argv):
    if _a == "--isa" and _i + 1 < len(sys.argv):
        ISA_CAP = sys.argv[_i + 1]
    elif _a.startswith("--isa="):
        ISA_CAP = _a.split("=", 1)[1]
if ISA_CAP == "avx2":
    os.environ["TWILL_ISA"] = "avx2"
    # NumPy 2.4's names for its AVX-512 dispatch targets (it warns about,
    # and ignores, a name it does not dispatch to).
    os.environ["NPY_DISABLE_CPU_FEATURES"] = "X86_V4 AVX512_ICL AVX512_SPR"
    os.environ["OPENBLAS_CORETYPE"] = "Haswell"
    os.environ["ATEN_CPU_CAPABILITY"] = "avx2"

from timing import ROOT, TWILL, best_ms, conv2d_numpy, cpu_model, isa, openblas_core

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

try:
    import torch  # noqa: E402

    TORCH_ERROR = None
except Exception as exc:  # torch is optional: its columns become —
    torch = None
    TORCH_ERROR = f"{type(exc).__name__}: {exc}"

MARK = "ops-matrix" + (f"-{ISA_CAP}" if ISA_CAP else "")
OUT_DIR = os.path.join(ROOT, "target", "bench-" + MARK[len("ops-"):])
DOC = os.path.join(ROOT, "docs", "performance.md")
BEGIN = f"<!-- {MARK}:begin -->"
END = f"<!-- {MARK}:end -->"

DTYPES = ["bool", "i8", "i32", "bf16", "f16", "f32", "f64"]
FLOATS = {"bf16", "f16", "f32", "f64"}
INTS = {"i8", "i32"}
SIZES = ["small", "medium", "large"]
VEC = {"small": 1000, "medium": 100_000, "large": 10_000_000}
SIDE = {"small": 32, "medium": 316, "large": 3162}
MM = {"small": 32, "medium": 256, "large": 1024}
LA = {"small": 16, "medium": 128, "large": 512}
CONV = {
    "small": ([1, 4, 16, 16], [8, 4, 3, 3]),
    "medium": ([4, 16, 32, 32], [32, 16, 3, 3]),
    "large": ([8, 64, 56, 56], [64, 64, 3, 3]),
}
SIZE_TEXT = {
    "vector": "1e3 / 1e5 / 1e7 elements",
    "rows": "[1, 1000] / [100, 1000] / [10000, 1000]",
    "square": "32² / 316² / 3162²",
    "mm": "32² / 256² / 1024²",
    "linalg": "16² / 128² / 512²",
    "conv": "see the script",
}

NP_DT = {
    "bool": np.bool_,
    "i8": np.int8,
    "i32": np.int32,
    "bf16": ml_dtypes.bfloat16,
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
}
if torch is not None:
    T_DT = {
        "bool": torch.bool,
        "i8": torch.int8,
        "i32": torch.int32,
        "bf16": torch.bfloat16,
        "f16": torch.float16,
        "f32": torch.float32,
        "f64": torch.float64,
    }

# The reps rule, the same on both sides (twill's is in PRELUDE).
def reps_for(w):
    if w < 0.001:
        return 15
    if w < 0.05:
        return 7
    if w < 0.3:
        return 5
    if w < 1.5:
        return 3
    return 1


PRELUDE = """\
fn reps_for(w: F64) -> Int {
    if w < 0.001 { 15 } else if w < 0.05 { 7 } else if w < 0.3 { 5 } else if w < 1.5 { 3 } else { 1 }
}
# The best of R runs of f after a warm-up run, in ms (the warm-up's time
# when it took over 3 s).
fn best(f) -> F64 {
    let t0 = clock()
    f()
    let w = clock() - t0
    if w > 3.0 { return w * 1000 }
    var b = 1e300
    for i in range(reps_for(w)) {
        let t1 = clock()
        f()
        let t = clock() - t1
        if t < b { b = t }
    }
    b * 1000
}
let e4m3 = float_format(4, 3, special="fn")
"""


# ---------------------------------------------------------------- shapes

def shape_of(kind, size):
    """The shape of an input of shape kind `kind` at `size`."""
    n = VEC[size]
    s = SIDE[size]
    m = MM[size]
    a = LA[size]
    return {
        "v": [n],
        "r": [n // 1000, 1000],
        "rix": [n // 1000],
        "c3": [n // 1000, 10, 100],
        "1v": [1, n],
        "b1000": [1000],
        "q2": [s, s],
        "sd": [s],
        "mm": [m, m],
        "mmv": [m],
        "la": [a, a],
        "lav": [a],
        "lat": [2 * a, a],
        "latv": [2 * a],
        "cx": CONV[size][0],
        "cw": CONV[size][1],
    }[kind]


def lit(shape):
    return "[" + ", ".join(str(d) for d in shape) + "]"


SEEDS = {"x": 1, "y": 2, "p": 3, "u": 4, "q": 5, "e": 6, "c": 7, "g": 8, "ri": 9, "spd": 10, "s": 11, "w": 12, "b": 13}


def tw_base(role, dt, S, seed):
    """twill code for a role's values of dtype `dt` and shape literal S."""
    if dt == "bool":
        return f"(randn({S}, f64, {seed}) > 0)"
    if dt in INTS:
        lo, hi = {"p": (1, 100), "u": (-1, 2), "e": (0, 3), "q": (0, 100)}.get(role, (-100, 100))
        return f"randint({lo}, {hi}, {S}, {dt}, {seed})"
    if role == "p":
        return f"(randn({S}, {dt}, {seed}).abs() + 1)"
    if role == "u":
        return f"(rand({S}, {dt}, {seed}) * 1.8 - 0.9)"
    if role == "q":
        return f"randint(0, 100, {S}, {dt}, {seed})"
    return f"randn({S}, {dt}, {seed})"


def tw_input(role, kind, dt, size):
    shape = shape_of(kind, size)
    S = lit(shape)
    seed = SEEDS.get(role, 20)
    if role == "c":
        return f"(randn({S}, f64, {seed}) > 0)"
    if role == "g":
        return f"randint(0, {shape[-1]}, {S}, i32, {seed})"
    if role == "ri":
        return f"randint(0, {shape[0]}, {S}, i32, {seed})"
    if role == "s":
        return f"{tw_base('x', dt, S, seed)}.sort()"
    if role == "bits":
        return f"{tw_base('x', dt, S, 1)}.bits()"
    if role == "spd":
        n = shape[0]
        if dt in FLOATS:
            return f"{{ let a = {tw_base('x', dt, S, seed)}; a @ a.T + eye({n}, {dt}) * {n} }}"
        if dt in INTS:
            return f"(eye({n}, {dt}) * 2)"
        return f"eye({n}, bool)"
    return tw_base(role, dt, S, seed)


def np_base(role, dt, shape, seed):
    rng = np.random.default_rng(1000 + seed)
    if dt == "bool":
        return rng.standard_normal(shape) > 0
    if dt in INTS:
        lo, hi = {"p": (1, 100), "u": (-1, 2), "e": (0, 3), "q": (0, 100)}.get(role, (-100, 100))
        return rng.integers(lo, hi, shape).astype(NP_DT[dt])
    if role == "p":
        v = np.abs(rng.standard_normal(shape)) + 1
    elif role == "u":
        v = rng.random(shape) * 1.8 - 0.9
    elif role == "q":
        v = rng.integers(0, 100, shape)
    else:
        v = rng.standard_normal(shape)
    return v.astype(NP_DT[dt])


def np_input(role, kind, dt, size):
    shape = shape_of(kind, size)
    seed = SEEDS.get(role, 20)
    rng = np.random.default_rng(1000 + seed)
    if role == "c":
        return rng.standard_normal(shape) > 0
    if role == "g":
        return rng.integers(0, shape[-1], shape).astype(np.int32)
    if role == "ri":
        return rng.integers(0, shape[0], shape).astype(np.int32)
    if role == "s":
        return np.sort(np_base("x", dt, shape, seed), kind="stable")
    if role == "bits":
        return np_bits(np_base("x", dt, shape, 1))
    if role == "spd":
        n = shape[0]
        if dt in FLOATS:
            a = rng.standard_normal(shape)
            return (a @ a.T + n * np.eye(n)).astype(NP_DT[dt])
        if dt in INTS:
            return (np.eye(n) * 2).astype(NP_DT[dt])
        return np.eye(n, dtype=bool)
    return np_base(role, dt, shape, seed)


def np_bits(x):
    if x.dtype == np.float32:
        return x.view(np.int32).copy()
    if x.dtype in (np.float16, np.dtype(ml_dtypes.bfloat16)):
        return x.view(np.uint16).astype(np.int32)
    if x.dtype in (np.int8, np.int32):
        return x.copy()
    if x.dtype == np.bool_:
        return x.view(np.int8).copy()
    raise TypeError(f"no bits for {x.dtype}")


def to_torch(a, role):
    if role in ("g", "ri"):
        return torch.from_numpy(a.astype(np.int64))
    if a.dtype == np.dtype(ml_dtypes.bfloat16):
        return torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(a).copy())


# ---------------------------------------------------------------- peers' helpers

def isint(a):
    return a.dtype.kind in "biu"


def call(f, *a, **kw):
    """A zero-argument callable of f(*a, **kw)."""
    return lambda: f(*a, **kw)


def uf(f):
    """A NumPy function of twill's float rule: integer and bool inputs are
    computed in f32 (dtype=np.float32), as twill promotes them."""

    def bind(*a):
        if any(isint(v) for v in a):
            return call(f, *a, dtype=np.float32)
        return call(f, *a)

    return bind


def fl(a):
    """a as floats for a composite: integers and bool go to f32."""
    return a.astype(np.float32) if isint(a) else a


def np_int32(f):
    """A NumPy accumulation whose integer (and bool) form twill answers in i32."""
    return lambda x: call(f, x, dtype=np.int32) if isint(x) else call(f, x)


def np_f32(f):
    return lambda x: call(f, x, dtype=np.float32) if isint(x) else call(f, x)


def t1(f):
    return lambda *a: call(f, *a)


def t_int32(f, *extra):
    def bind(x):
        if not x.is_floating_point():
            return call(f, x, *extra, dtype=torch.int32)
        return call(f, x, *extra)

    return bind


def bool_counts(binder, cast):
    """A contraction binder whose bool inputs are first cast to int32 inside
    the timed call: twill contracts bool tensors to i32 counts, NumPy's and
    torch's bool matmul/dot/einsum/outer are logical (and torch has none)."""

    def bind(*a):
        if all(not is_bool(v) for v in a):
            return binder(*a)
        return lambda: binder(*[cast(v) if is_bool(v) else v for v in a])()

    return bind


def is_bool(a):
    return str(a.dtype) in ("bool", "torch.bool")


def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_logsumexp(x):
    x = fl(x)
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def np_softmax(x):
    x = fl(x)
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def np_log_softmax(x):
    x = fl(x)
    z = x - np.max(x, axis=-1, keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=-1, keepdims=True))


def np_topk_idx(x, k):
    idx = np.argpartition(x, x.size - k)[x.size - k:]
    return idx[np.argsort(x[idx], kind="stable")[::-1]]


def np_topk(x, k):
    return x[np_topk_idx(x, k)]


def np_round_e4m3(x):
    return x.astype(ml_dtypes.float8_e4m3fn).astype(x.dtype)


def t_bits(x):
    if x.dtype == torch.float32:
        return x.view(torch.int32).clone()
    if x.dtype in (torch.float16, torch.bfloat16):
        return x.view(torch.int16).to(torch.int32) & 0xFFFF
    if x.dtype in (torch.int8, torch.int32):
        return x.clone()
    if x.dtype == torch.bool:
        return x.view(torch.int8).clone()
    raise TypeError(f"no bits for {x.dtype}")


def np_from_bits_binder(dt):
    def bind(t):
        if dt in ("f16", "bf16"):
            return call(lambda: t.astype(np.uint16).view(NP_DT[dt]))
        if dt == "bool":
            return call(lambda: t.view(np.bool_).copy())
        return call(lambda: t.view(NP_DT[dt]).copy())

    return bind


def t_from_bits_binder(dt):
    def bind(t):
        if dt in ("f16", "bf16"):
            return call(lambda: t.to(torch.int16).view(T_DT[dt]))
        return call(lambda: t.view(T_DT[dt]).clone())

    return bind


# ---------------------------------------------------------------- the operations

class Op:
    """One row kind of the table: `tw` is the twill expression (a str with
    `{role}` placeholders, or a function of the dtype giving one); `np` and
    `th` bind the inputs (in `roles` order) to a zero-argument callable;
    None: the peer lacks the operation."""

    def __init__(self, key, label, group, roles, tw, np=None, th=None, dtypes=DTYPES, sizes=SIZES, quick=False):
        self.key, self.label, self.group, self.roles = key, label, group, roles
        self.tw, self.np, self.th = tw, np, th
        self.dtypes, self.sizes, self.quick = dtypes, sizes, quick

    def tw_expr(self, dt):
        text = self.tw(dt) if callable(self.tw) else self.tw
        return text.format(**{role: f"in_{role}_{kind}" for role, kind in self.roles})

    def sizes_for(self, dt):
        return self.sizes(dt) if callable(self.sizes) else self.sizes


OPS = []
QUICK = {
    "add", "mul", "div", "pow2", "powt", "lt", "maximum", "where", "exp", "log", "sqrt", "tanh", "sigmoid",
    "abs", "relu", "floor", "sum", "mean", "max", "argmax", "var", "logsumexp", "sum_ax1", "cumsum",
    "softmax", "sort", "argsort", "topk", "unique", "transpose_flat", "concat", "gather", "index_select",
    "matmul", "einsum", "linear", "conv2d", "solve", "inv", "svd", "cholesky", "to_f32", "to_bf16",
    "to_f64", "rand", "randn", "zeros", "arange", "randint", "bits", "isclose",
}


def op(*a, **kw):
    o = Op(*a, **kw)
    o.quick = o.key in QUICK
    OPS.append(o)


def setup_ops():
    V = [("x", "v")]
    # --- elementwise unary: (key, twill method, input role, NumPy binder, torch binder)
    unary = [
        ("neg", "neg", "x", t1(np.negative), "neg"),
        ("abs", "abs", "x", t1(np.abs), "abs"),
        ("sign", "sign", "x", t1(np.sign), "sign"),
        ("relu", "relu", "x", lambda x: call(np.maximum, x, np.zeros((), x.dtype)), "relu"),
        ("square", "square", "x", t1(np.square), "square"),
        ("exp", "exp", "x", uf(np.exp), "exp"),
        ("log", "log", "p", uf(np.log), "log"),
        ("log1p", "log1p", "p", uf(np.log1p), "log1p"),
        ("expm1", "expm1", "x", uf(np.expm1), "expm1"),
        ("sqrt", "sqrt", "p", uf(np.sqrt), "sqrt"),
        ("rsqrt", "rsqrt", "p", lambda x: call(lambda: 1 / np.sqrt(fl(x))) if isint(x) else call(lambda: 1 / np.sqrt(x)), "rsqrt"),
        ("sin", "sin", "x", uf(np.sin), "sin"),
        ("cos", "cos", "x", uf(np.cos), "cos"),
        ("tan", "tan", "x", uf(np.tan), "tan"),
        ("tanh", "tanh", "x", uf(np.tanh), "tanh"),
        ("sigmoid", "sigmoid", "x", lambda x: call(lambda: np_sigmoid(fl(x))) if isint(x) else call(np_sigmoid, x), "sigmoid"),
        ("floor", "floor", "x", t1(np.floor), "floor"),
        ("ceil", "ceil", "x", t1(np.ceil), "ceil"),
        ("round", "round", "x", t1(np.round), "round"),
        ("isnan", "isnan", "x", t1(np.isnan), "isnan"),
        ("isinf", "isinf", "x", t1(np.isinf), "isinf"),
        ("isfinite", "isfinite", "x", t1(np.isfinite), "isfinite"),
        ("trunc", "trunc", "x", t1(np.trunc), "trunc"),
        ("signbit", "signbit", "x", t1(np.signbit), "signbit"),
        ("reciprocal", "reciprocal", "p", uf(np.reciprocal), "reciprocal"),
        ("exp2", "exp2", "x", uf(np.exp2), "exp2"),
        ("log2", "log2", "p", uf(np.log2), "log2"),
        ("log10", "log10", "p", uf(np.log10), "log10"),
        ("cbrt", "cbrt", "x", uf(np.cbrt), None),
        ("sinh", "sinh", "x", uf(np.sinh), "sinh"),
        ("cosh", "cosh", "x", uf(np.cosh), "cosh"),
        ("asin", "asin", "u", uf(np.arcsin), "asin"),
        ("acos", "acos", "u", uf(np.arccos), "acos"),
        ("atan", "atan", "x", uf(np.arctan), "atan"),
        ("asinh", "asinh", "x", uf(np.arcsinh), "asinh"),
        ("acosh", "acosh", "p", uf(np.arccosh), "acosh"),
        ("atanh", "atanh", "u", uf(np.arctanh), "atanh"),
        ("erf", "erf", "x", None, "special.erf"),
        ("erfc", "erfc", "x", None, "special.erfc"),
        ("lgamma", "lgamma", "p", None, "lgamma"),
        ("digamma", "digamma", "p", None, "digamma"),
        ("logical_not", "logical_not", "x", t1(np.logical_not), "logical_not"),
    ]
    for key, meth, role, npb, tname in unary:
        th = None
        if tname is not None and torch is not None:
            f = torch
            for part in tname.split("."):
                f = getattr(f, part)
            th = t1(f)
        op(key, f"{meth}", "unary", [(role, "v")], f"{{{role}}}.{meth}()", npb, th)

    op("clip", "clip(lo, hi)", "unary", V,
       lambda dt: "{x}.clip(-0.5, 0.5)" if dt in FLOATS else ("{x}.clip(-50, 50)" if dt in INTS else "{x}.clip(false, true)"),
       lambda x: call(np.clip, x, *( (x.dtype.type(-0.5), x.dtype.type(0.5)) if x.dtype.kind == "f" else
                                      ((x.dtype.type(-50), x.dtype.type(50)) if x.dtype.kind == "i" else (False, True)))),
       (lambda x: call(torch.clamp, x, *((-0.5, 0.5) if x.is_floating_point() else
                                          ((-50, 50) if x.dtype != torch.bool else (False, True)))))
       if torch is not None else None)
    op("polygamma", "polygamma(x, 1)", "unary", [("p", "v")], "polygamma({p}, 1)", None,
       (lambda p: call(torch.polygamma, 1, p)) if torch is not None else None)

    # --- elementwise binary
    T = torch
    XY = [("x", "v"), ("y", "v")]
    XP = [("x", "v"), ("p", "v")]
    binary = [
        ("maximum", "maximum(x, y)", XY, "maximum({x}, {y})", t1(np.maximum), "maximum"),
        ("minimum", "minimum(x, y)", XY, "minimum({x}, {y})", t1(np.minimum), "minimum"),
        ("fmod", "fmod(x, p)", XP, "fmod({x}, {p})", t1(np.fmod), "fmod"),
        ("copysign", "copysign(x, y)", XY, "copysign({x}, {y})", t1(np.copysign), "copysign"),
        ("nextafter", "nextafter(x, y)", XY, "nextafter({x}, {y})", t1(np.nextafter), "nextafter"),
        ("atan2", "atan2(x, y)", XY, "atan2({x}, {y})", uf(np.arctan2), "atan2"),
        ("hypot", "hypot(x, y)", XY, "hypot({x}, {y})", uf(np.hypot), "hypot"),
        ("logaddexp", "logaddexp(x, y)", XY, "logaddexp({x}, {y})", uf(np.logaddexp), "logaddexp"),
        ("logical_and", "logical_and(x, y)", XY, "logical_and({x}, {y})", t1(np.logical_and), "logical_and"),
        ("logical_or", "logical_or(x, y)", XY, "logical_or({x}, {y})", t1(np.logical_or), "logical_or"),
        ("logical_xor", "logical_xor(x, y)", XY, "logical_xor({x}, {y})", t1(np.logical_xor), "logical_xor"),
        ("add", "x + y", XY, "{x} + {y}", t1(np.add), "add"),
        ("sub", "x - y", XY, "{x} - {y}", t1(np.subtract), "sub"),
        ("mul", "x * y", XY, "{x} * {y}", t1(np.multiply), "mul"),
        ("div", "x / p", XP, "{x} / {p}", uf(np.true_divide), "div"),
        ("floordiv", "x // p", XP, "{x} // {p}", t1(np.floor_divide), "floor_divide"),
        ("mod", "x % p", XP, "{x} % {p}", t1(np.remainder), "remainder"),
        ("pow2", "x ** 2", V, "{x} ** 2", lambda x: call(lambda: x ** 2), None),
        ("pow3", "x ** 3", V, "{x} ** 3", lambda x: call(lambda: x ** 3), None),
        ("powt", "p ** e (tensors)", [("p", "v"), ("e", "v")], "{p} ** {e}", lambda p, e: call(lambda: p ** e), None),
        ("lt", "x < y", XY, "{x} < {y}", lambda x, y: call(lambda: x < y), None),
        ("eq", "x == y", XY, "{x} == {y}", lambda x, y: call(lambda: x == y), None),
    ]
    for key, label, roles, tw, npb, tname in binary:
        th = t1(getattr(T, tname)) if (tname and T is not None) else None
        if T is not None and key in ("pow2", "pow3", "powt", "lt", "eq"):
            th = {
                "pow2": lambda x: call(lambda: x ** 2),
                "pow3": lambda x: call(lambda: x ** 3),
                "powt": lambda p, e: call(lambda: p ** e),
                "lt": lambda x, y: call(lambda: x < y),
                "eq": lambda x, y: call(lambda: x == y),
            }[key]
        op(key, label, "binary", roles, tw, npb, th)
    op("where", "where(c, x, y)", "binary", [("c", "v"), ("x", "v"), ("y", "v")], "where({c}, {x}, {y})",
       t1(np.where), t1(T.where) if T else None)

    # --- reductions over the whole tensor
    def th_(f):
        return t1(f) if T is not None else None

    red = [
        ("sum", "sum", np_int32(np.sum), (t_int32(T.sum) if T else None)),
        ("mean", "mean", np_f32(np.mean), ((lambda x: call(T.mean, x, dtype=T.float32) if not x.is_floating_point() else call(T.mean, x)) if T else None)),
        ("prod", "prod", np_int32(np.prod), (t_int32(T.prod) if T else None)),
        ("max", "max", t1(np.max), th_(T.amax if T else None)),
        ("min", "min", t1(np.min), th_(T.amin if T else None)),
        ("median", "median", t1(np.median), th_(T.median if T else None)),
        ("var", "var", np_f32(np.var), ((lambda x: call(T.var, x, correction=0)) if T else None)),
        ("std", "std", np_f32(np.std), ((lambda x: call(T.std, x, correction=0)) if T else None)),
        ("argmax", "argmax", t1(np.argmax), th_(T.argmax if T else None)),
        ("argmin", "argmin", t1(np.argmin), th_(T.argmin if T else None)),
        ("all", "all", t1(np.all), th_(T.all if T else None)),
        ("any", "any", t1(np.any), th_(T.any if T else None)),
        ("logsumexp", "logsumexp", t1(np_logsumexp), ((lambda x: call(T.logsumexp, x, 0)) if T else None)),
        ("nansum", "nansum", np_int32(np.nansum), th_(T.nansum if T else None)),
        ("nanmean", "nanmean", np_f32(np.nanmean), th_(T.nanmean if T else None)),
        ("nanmax", "nanmax", t1(np.nanmax), None),
        ("nanmin", "nanmin", t1(np.nanmin), None),
        ("count_nonzero", "count_nonzero", t1(np.count_nonzero), th_(T.count_nonzero if T else None)),
        ("norm", "norm", t1(np.linalg.norm), th_(T.linalg.vector_norm if T else None)),
    ]
    for key, meth, npb, th in red:
        op(key, meth, "reduce", V, f"{{x}}.{meth}()", npb, th)
    op("quantile", "quantile(0.3)", "reduce", V, "{x}.quantile(0.3)", lambda x: call(np.quantile, x, 0.3),
       (lambda x: call(T.quantile, x, 0.3)) if T else None)
    R = [("x", "r")]
    op("sum_ax0", "sum(axis=0) rows", "reduce", R, "{x}.sum(axis=0)",
       lambda x: call(np.sum, x, axis=0, dtype=np.int32) if isint(x) else call(np.sum, x, axis=0),
       (lambda x: call(T.sum, x, 0, dtype=T.int32) if not x.is_floating_point() else call(T.sum, x, 0)) if T else None)
    op("sum_ax1", "sum(axis=-1) rows", "reduce", R, "{x}.sum(axis=-1)",
       lambda x: call(np.sum, x, axis=-1, dtype=np.int32) if isint(x) else call(np.sum, x, axis=-1),
       (lambda x: call(T.sum, x, -1, dtype=T.int32) if not x.is_floating_point() else call(T.sum, x, -1)) if T else None)
    op("mean_ax1", "mean(axis=-1) rows", "reduce", R, "{x}.mean(axis=-1)",
       lambda x: call(np.mean, x, axis=-1, dtype=np.float32) if isint(x) else call(np.mean, x, axis=-1),
       (lambda x: call(T.mean, x, -1, dtype=T.float32) if not x.is_floating_point() else call(T.mean, x, -1)) if T else None)
    op("max_ax1", "max(axis=-1) rows", "reduce", R, "{x}.max(axis=-1)", lambda x: call(np.max, x, axis=-1),
       (lambda x: call(T.amax, x, -1)) if T else None)
    op("argmax_ax1", "argmax(axis=-1) rows", "reduce", R, "{x}.argmax(axis=-1)", lambda x: call(np.argmax, x, axis=-1),
       (lambda x: call(T.argmax, x, -1)) if T else None)

    # --- scans and normalisers
    op("cumsum", "cumsum(0)", "scan", V, "{x}.cumsum(0)", np_int32(np.cumsum), (t_int32(T.cumsum, 0) if T else None))
    op("cumprod", "cumprod(0)", "scan", V, "{x}.cumprod(0)", np_int32(np.cumprod), (t_int32(T.cumprod, 0) if T else None))
    op("softmax", "softmax rows", "scan", R, "{x}.softmax()", t1(np_softmax),
       (lambda x: call(T.softmax, x, -1) if x.is_floating_point() else call(T.softmax, x, -1, dtype=T.float32)) if T else None)
    op("log_softmax", "log_softmax rows", "scan", R, "{x}.log_softmax()", t1(np_log_softmax),
       (lambda x: call(T.log_softmax, x, -1) if x.is_floating_point() else call(T.log_softmax, x, -1, dtype=T.float32)) if T else None)

    # --- ordering
    op("sort", "sort", "order", V, "{x}.sort()", lambda x: call(np.sort, x, kind="stable"),
       (lambda x: call(T.sort, x, stable=True)) if T else None)
    op("sort_default", "sort (peers' default kind)", "order", V, "{x}.sort()", t1(np.sort), th_(T.sort if T else None))
    op("sort_desc", "sort(descending=true)", "order", V, "{x}.sort(descending=true)",
       lambda x: call(lambda: np.sort(x, kind="stable")[::-1]),
       (lambda x: call(T.sort, x, descending=True, stable=True)) if T else None)
    op("argsort", "argsort", "order", V, "{x}.argsort()", lambda x: call(np.argsort, x, kind="stable"),
       (lambda x: call(T.argsort, x, stable=True)) if T else None)
    op("topk", "topk(10)", "order", V, "{x}.topk(10)", lambda x: call(np_topk, x, 10),
       (lambda x: call(T.topk, x, 10)) if T else None)
    op("argtopk", "argtopk(10)", "order", V, "{x}.argtopk(10)", lambda x: call(np_topk_idx, x, 10),
       (lambda x: call(lambda: T.topk(x, 10).indices)) if T else None)
    op("unique", "unique", "order", V, "unique({x})", t1(np.unique), (lambda x: call(T.unique, x, sorted=True)) if T else None)
    op("unique_counts", "unique_counts", "order", V, "unique_counts({x})", lambda x: call(np.unique, x, return_counts=True),
       (lambda x: call(T.unique, x, sorted=True, return_counts=True)) if T else None)
    op("searchsorted", "searchsorted(s, y)", "order", [("s", "v"), ("y", "v")], "searchsorted({s}, {y})",
       t1(np.searchsorted), th_(T.searchsorted if T else None))
    op("bincount", "bincount(q)", "order", [("q", "v")], "bincount({q})", t1(np.bincount), th_(T.bincount if T else None))
    op("nonzero", "nonzero", "order", V, "nonzero({x})", t1(np.argwhere), th_(T.nonzero if T else None))

    # --- rearrangement
    def resh(x):
        return call(x.reshape, x.shape[0] // 1000, 1000)

    op("reshape", "reshape([n/1000, 1000])", "shape", V, lambda dt: "{x}.reshape([-1, 1000])", resh,
       (lambda x: call(x.reshape, -1, 1000)) if T else None)
    op("transpose", "transpose(0, 1) rows", "shape", R, "{x}.transpose(0, 1)", lambda x: call(np.swapaxes, x, 0, 1),
       (lambda x: call(T.transpose, x, 0, 1)) if T else None)
    op("transpose_flat", "transpose(0, 1).flatten() rows", "shape", R, "{x}.transpose(0, 1).flatten()",
       lambda x: call(lambda: x.T.flatten()), (lambda x: call(lambda: x.T.flatten())) if T else None)
    op("permute", "permute([2, 0, 1])", "shape", [("x", "c3")], "{x}.permute([2, 0, 1])",
       lambda x: call(np.transpose, x, (2, 0, 1)), (lambda x: call(T.permute, x, (2, 0, 1))) if T else None)
    op("flip", "flip", "shape", V, "{x}.flip()", t1(np.flip), (lambda x: call(T.flip, x, (0,))) if T else None)
    op("roll", "roll(3)", "shape", V, "{x}.roll(3)", lambda x: call(np.roll, x, 3), (lambda x: call(T.roll, x, 3)) if T else None)
    op("squeeze", "squeeze [1, n]", "shape", [("x", "1v")], "{x}.squeeze()", t1(np.squeeze), th_(T.squeeze if T else None))
    op("unsqueeze", "unsqueeze(0)", "shape", V, "{x}.unsqueeze(0)", lambda x: call(np.expand_dims, x, 0),
       (lambda x: call(T.unsqueeze, x, 0)) if T else None)

    def bcast_tw(dt):
        return "{x}.broadcast_to([NROWS, 1000])"

    op("broadcast_to", "broadcast_to([n/1000, 1000])", "shape", [("x", "b1000")], bcast_tw,
       lambda x: call(np.broadcast_to, x, (NROWS[0], 1000)), (lambda x: call(T.broadcast_to, x, (NROWS[0], 1000))) if T else None)
    op("concat", "concat([x, y])", "shape", XY, "concat([{x}, {y}])", lambda x, y: call(np.concatenate, [x, y]),
       (lambda x, y: call(T.cat, [x, y])) if T else None)
    op("stack", "stack([x, y])", "shape", XY, "stack([{x}, {y}])", lambda x, y: call(np.stack, [x, y]),
       (lambda x, y: call(T.stack, [x, y])) if T else None)
    op("split", "split(n/4)", "shape", V, "{x}.split(QUARTER)", lambda x: call(np.split, x, 4),
       (lambda x: call(T.split, x, x.shape[0] // 4)) if T else None)
    op("flatten", "flatten rows", "shape", R, "{x}.flatten()", t1(np.ravel), th_(T.flatten if T else None))
    op("diff", "diff", "shape", V, "{x}.diff()", t1(np.diff), th_(T.diff if T else None))
    Q2 = [("x", "q2")]
    op("tril", "tril [s, s]", "shape", Q2, "{x}.tril()", t1(np.tril), th_(T.tril if T else None))
    op("triu", "triu [s, s]", "shape", Q2, "{x}.triu()", t1(np.triu), th_(T.triu if T else None))
    op("diag", "diag [s] → [s, s]", "shape", [("x", "sd")], "{x}.diag()", t1(np.diag), th_(T.diag if T else None))
    op("trace", "trace [s, s]", "shape", Q2, "{x}.trace()", t1(np.trace), th_(T.trace if T else None))
    op("gather", "gather(1, g) rows", "shape", [("x", "r"), ("g", "r")], "{x}.gather(1, {g})",
       lambda x, g: call(np.take_along_axis, x, g, 1), (lambda x, g: call(T.gather, x, 1, g)) if T else None)
    op("index_select", "index_select(0, ri) rows", "shape", [("x", "r"), ("ri", "rix")], "{x}.index_select(0, {ri})",
       lambda x, ri: call(np.take, x, ri, axis=0), (lambda x, ri: call(T.index_select, x, 0, ri)) if T else None)

    # --- contractions and the rest
    MMXY = [("x", "mm"), ("y", "mm")]
    npc = lambda b: bool_counts(b, lambda v: v.astype(np.int32))  # noqa: E731
    thc = lambda b: bool_counts(b, lambda v: v.to(T.int32)) if (T is not None and b is not None) else None  # noqa: E731
    op("matmul", "matmul (x @ y)", "contract", MMXY, "{x} @ {y}", npc(t1(np.matmul)), thc(th_(T.matmul if T else None)))
    op("outer", "outer [s] × [s]", "contract", [("x", "sd"), ("y", "sd")], "outer({x}, {y})", npc(t1(np.outer)),
       thc(th_(T.outer if T else None)))
    op("dot", "dot", "contract", XY, "dot({x}, {y})", npc(t1(np.dot)), thc(th_(T.dot if T else None)))
    op("linear", "linear(x, w, b)", "contract", [("x", "mm"), ("y", "mm"), ("b", "mmv")], "linear({x}, {y}, {b})",
       npc(lambda x, w, b: call(lambda: x @ w.T + b)), thc(th_(T.nn.functional.linear if T else None)))
    op("einsum", "einsum(\"ij,jk->ik\")", "contract", MMXY, "einsum(\"ij,jk->ik\", {x}, {y})",
       npc(lambda x, y: call(np.einsum, "ij,jk->ik", x, y)),
       thc((lambda x, y: call(T.einsum, "ij,jk->ik", x, y)) if T else None))
    op("conv2d", "conv2d(padding=1)", "contract", [("x", "cx"), ("w", "cw")], "conv2d({x}, {w}, padding=1)",
       npc(lambda x, w: call(conv2d_numpy, x, w, 1)),
       thc((lambda x, w: call(T.nn.functional.conv2d, x, w, padding=1)) if T else None))
    op("isclose", "isclose(x, y)", "misc", XY, "isclose({x}, {y})", t1(np.isclose), th_(T.isclose if T else None))
    op("allclose", "allclose(x, x)", "misc", V, "allclose({x}, {x})", lambda x: call(np.allclose, x, x),
       (lambda x: call(T.allclose, x, x)) if T else None)
    op("bits", "bits", "misc", V, "{x}.bits()", t1(np_bits), th_(t_bits if T else None))
    for dt in DTYPES:
        op(f"from_bits_{dt}", f"from_bits(t, {dt})", "misc", [("bits", "v")], f"from_bits({{bits}}, {dt})",
           np_from_bits_binder(dt), t_from_bits_binder(dt) if T else None, dtypes=[dt])
    op("round_to", "round_to(e4m3fn)", "misc", V, "{x}.round_to(e4m3)", t1(np_round_e4m3),
       (lambda x: call(lambda: x.to(T.float8_e4m3fn).to(x.dtype))) if T else None)

    # --- linear algebra
    LAX = [("x", "la")]
    la = [
        ("solve", "solve(a, b)", [("x", "la"), ("y", "lav")], "solve({x}, {y})", np.linalg.solve,
         (lambda a, b: call(T.linalg.solve, a, b)) if T else None),
        ("inv", "inv", LAX, "inv({x})", np.linalg.inv, th_(T.linalg.inv if T else None)),
        ("det", "det", LAX, "det({x})", np.linalg.det, th_(T.linalg.det if T else None)),
        ("slogdet", "slogdet", LAX, "slogdet({x})", np.linalg.slogdet, th_(T.linalg.slogdet if T else None)),
        ("cholesky", "cholesky(spd)", [("spd", "la")], "cholesky({spd})", np.linalg.cholesky,
         th_(T.linalg.cholesky if T else None)),
        ("qr", "qr", LAX, "qr({x})", np.linalg.qr, th_(T.linalg.qr if T else None)),
        ("eigh", "eigh(spd)", [("spd", "la")], "eigh({spd})", np.linalg.eigh, th_(T.linalg.eigh if T else None)),
        ("svd", "svd", LAX, "svd({x})", lambda a: np.linalg.svd(a, full_matrices=False),
         (lambda a: call(T.linalg.svd, a, full_matrices=False)) if T else None),
        ("lstsq", "lstsq(a [2N, N], b)", [("x", "lat"), ("y", "latv")], "lstsq({x}, {y})",
         lambda a, b: np.linalg.lstsq(a, b, rcond=None),
         (lambda a, b: call(T.linalg.lstsq, a, b.unsqueeze(-1), driver="gelsd")) if T else None),
        ("pinv", "pinv", LAX, "pinv({x})", np.linalg.pinv, th_(T.linalg.pinv if T else None)),
        ("matrix_rank", "matrix_rank", LAX, "matrix_rank({x})", np.linalg.matrix_rank,
         th_(T.linalg.matrix_rank if T else None)),
    ]
    for key, label, roles, tw, npf, th in la:
        op(key, label, "linalg", roles, tw, t1(npf), th)

    # --- casts (the dtype column is the source)
    common = {("f32", "bf16"), ("bf16", "f32"), ("f32", "f16"), ("f16", "f32"), ("f64", "f32"), ("f32", "f64"),
              ("i32", "f32"), ("f32", "i32"), ("bool", "f32")}
    for tgt in DTYPES:
        op(f"to_{tgt}", f"x.to({tgt})", "cast", V, f"{{x}}.to({tgt})",
           (lambda tgt: lambda x: call(x.astype, NP_DT[tgt]))(tgt),
           ((lambda tgt: lambda x: call(x.to, T_DT[tgt]))(tgt)) if T else None,
           dtypes=[d for d in DTYPES if d != tgt],
           sizes=(lambda tgt: lambda src: SIZES if (src, tgt) in common else ["large"])(tgt))
    op("to_f32_sum", "x.to(f32).sum()", "cast", V, "{x}.to(f32).sum()",
       lambda x: call(lambda: x.astype(np.float32).sum()),
       (lambda x: call(lambda: x.to(T.float32).sum())) if T else None, dtypes=["bool"])

    # --- constructors (no inputs; the dtype column is the dtype made)
    def np_rng_maker(kind):
        def bind(dt):
            rng = np.random.default_rng(1)
            n = NSIZE[0]
            npdt = NP_DT[dt]
            if kind == "rand":
                if dt in ("f32", "f64"):
                    return call(rng.random, n, dtype=npdt)
                if dt in FLOATS:
                    return call(lambda: rng.random(n, dtype=np.float32).astype(npdt))
                raise TypeError("NumPy's random() makes floats only")
            if kind == "randn":
                if dt in ("f32", "f64"):
                    return call(rng.standard_normal, n, dtype=npdt)
                if dt in FLOATS:
                    return call(lambda: rng.standard_normal(n, dtype=np.float32).astype(npdt))
                raise TypeError("NumPy's standard_normal() makes floats only")
            if kind == "randint":
                if dt in INTS:
                    return call(rng.integers, -100, 100, n, dtype=npdt)
                if dt == "bool":
                    raise TypeError("no bool randint(-100, 100)")
                return call(lambda: rng.integers(-100, 100, n, dtype=np.int32).astype(npdt))
            if kind == "zeros":
                return call(np.zeros, n, dtype=npdt)
            return call(np.arange, n, dtype=npdt)

        return bind

    def t_maker(kind):
        def bind(dt):
            g = torch.Generator().manual_seed(1)
            n = NSIZE[0]
            tdt = T_DT[dt]
            if kind == "rand":
                return call(torch.rand, n, dtype=tdt, generator=g)
            if kind == "randn":
                return call(torch.randn, n, dtype=tdt, generator=g)
            if kind == "randint":
                return call(torch.randint, -100, 100, (n,), dtype=tdt, generator=g)
            if kind == "zeros":
                return call(torch.zeros, n, dtype=tdt)
            return call(torch.arange, n, dtype=tdt)

        return bind

    cons = [
        ("rand", "rand([n], dt, seed)", "rand([N], DT, 1)"),
        ("randn", "randn([n], dt, seed)", "randn([N], DT, 1)"),
        ("zeros", "zeros([n], dt)", "zeros([N], DT)"),
        ("arange", "arange(n, dt)", "arange(N, DT)"),
        ("randint", "randint(-100, 100, [n], dt, seed)", "randint(-100, 100, [N], DT, 1)"),
    ]
    for key, label, tw in cons:
        o = Op(key, label, "construct", [], (lambda tw: lambda dt: tw.replace("DT", dt))(tw),
               np_rng_maker(key), t_maker(key) if T else None)
        o.construct = True
        o.quick = key in QUICK
        OPS.append(o)


N_BATCHES = [0]

# Per-size values the binders read (set before each batch).
NSIZE = [0]
NROWS = [0]


# ---------------------------------------------------------------- cases and twill programs

class Case:
    def __init__(self, op, dt, size):
        self.op, self.dt, self.size = op, dt, size
        self.id = f"{op.key}/{dt}/{size}"
        self.tw_ms = self.np_ms = self.th_ms = None
        self.tw_error = self.np_error = self.th_error = None
        self.np_result_dtype = self.th_result_dtype = None

    def tw_expr(self):
        n = VEC[self.size]
        e = self.op.tw_expr(self.dt)
        return (e.replace("NROWS", str(n // 1000)).replace("QUARTER", str(n // 4))
                .replace("[N]", f"[{n}]").replace("(N,", f"({n},"))


def tw_program(cases, probe=False):
    """One twill program timing `cases` (all of one size and dtype): the
    inputs once at the top, then one best-of line per case."""
    lines = [PRELUDE]
    seen = set()
    for c in cases:
        for role, kind in c.op.roles:
            name = f"in_{role}_{kind}"
            if name not in seen:
                seen.add(name)
                lines.append(f"let {name} = {tw_input(role, kind, c.dt, c.size)}")
    for i, c in enumerate(cases):
        if probe:
            lines.append(f"let r_{i} = {c.tw_expr()}")
            lines.append(f'print("{i}\\tok")')
        else:
            lines.append(f"let t_{i} = best(fn() {{ {c.tw_expr()} }})")
            lines.append(f'print(f"{i}\\t{{t_{i}}}")')
    return "\n".join(lines) + "\n"


def first_error(stderr):
    for line in stderr.splitlines():
        if line.startswith("error"):
            return line.strip()
    tail = stderr.strip().splitlines()
    return tail[-1].strip() if tail else "failed without a message"


def probe(twill, c):
    """Whether twill runs case c (at the small size); None or the error."""
    src = tw_program([c], probe=True)
    try:
        r = subprocess.run([twill, "run", "-"], input=src, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return "timed out"
    if r.returncode == 0 and "0\tok" in r.stdout:
        return None
    return f"exit {r.returncode}: {first_error(r.stderr)}"


def run_twill(twill, cases, path, timeout=900):
    """Times `cases` in twill (one program, rerun after a failure from the
    case after the failing one)."""
    rest = list(cases)
    part = 0
    while rest:
        p = path if part == 0 else path.replace(".tw", f".{part}.tw")
        with open(p, "w") as f:
            f.write(tw_program(rest))
        got = {}
        try:
            r = subprocess.run([twill, "run", p], capture_output=True, text=True, timeout=timeout)
            out, err, rc = r.stdout, r.stderr, r.returncode
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            err, rc = f"error: timed out after {timeout} s", -1
        for line in out.splitlines():
            parts = line.split("\t")
            if len(parts) == 2 and parts[0].isdigit():
                try:
                    got[int(parts[0])] = float(parts[1])
                except ValueError:
                    pass
        for i, c in enumerate(rest):
            if i in got:
                c.tw_ms = got[i]
        if rc == 0:
            break
        # The first case without a time is the one that failed.
        k = next((i for i in range(len(rest)) if i not in got), None)
        if k is None:
            break
        rest[k].tw_error = first_error(err)
        rest = rest[k + 1:]
        part += 1


# ---------------------------------------------------------------- peers

def timed(fn):
    """(best ms, a result) of fn by the reps rule; best_ms does its own warm-up."""
    t0 = time.perf_counter()
    r = fn()
    w = time.perf_counter() - t0
    if w > 3.0:
        return w * 1e3, r
    return best_ms(fn, reps_for(w)), r


def result_dtype(r):
    if isinstance(r, (tuple, list)) and r:
        r = r[0]
    d = getattr(r, "dtype", None)
    return str(d) if d is not None else type(r).__name__


class Inputs:
    """NumPy and torch inputs, cached for one (size, dtype)."""

    def __init__(self):
        self.key = None
        self.np = {}
        self.th = {}

    def reset(self, key):
        if key != self.key:
            self.key = key
            self.np.clear()
            self.th.clear()

    def get_np(self, role, kind, dt, size):
        k = (role, kind)
        if k not in self.np:
            self.np[k] = np_input(role, kind, dt, size)
        return self.np[k]

    def get_th(self, role, kind, dt, size):
        k = (role, kind)
        if k not in self.th:
            self.th[k] = to_torch(self.get_np(role, kind, dt, size), role)
        return self.th[k]


def run_peers(cases, inputs):
    for c in cases:
        NSIZE[0] = VEC[c.size]
        NROWS[0] = VEC[c.size] // 1000
        inputs.reset((c.size, c.dt))
        construct = getattr(c.op, "construct", False)
        for side in ("np", "th"):
            binder = c.op.np if side == "np" else c.op.th
            if binder is None:
                continue
            try:
                if construct:
                    fn = binder(c.dt)
                else:
                    getter = inputs.get_np if side == "np" else inputs.get_th
                    args = [getter(role, kind, c.dt, c.size) for role, kind in c.op.roles]
                    fn = binder(*args)
                ms, r = timed(fn)
                setattr(c, f"{side}_ms", ms)
                setattr(c, f"{side}_result_dtype", result_dtype(r))
                del r
            except Exception as exc:
                msg = str(exc).strip().splitlines()
                setattr(c, f"{side}_error", f"{type(exc).__name__}: {msg[0] if msg else ''}"[:200])


# ---------------------------------------------------------------- output

def sig3(v):
    """v to 3 significant digits, without an exponent."""
    if v is None or not math.isfinite(v):
        return "—"
    if v == 0:
        return "0"
    d = 2 - int(math.floor(math.log10(abs(v))))
    if d > 0:
        return f"{v:.{d}f}"
    return f"{int(round(v, d))}"


def ratio(peer, tw):
    if peer is None or tw is None or tw <= 0:
        return None
    return peer / tw


def git_rev():
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return rev + (" with uncommitted changes" if dirty else "")
    except OSError:
        return "unknown"


def mem_gib():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    return round(int(line.split()[1]) / 2 ** 20)
    except OSError:
        pass
    return None


def cpu_busy(interval=0.5):
    """The fraction of the machine's CPU time that other processes used over
    `interval` seconds (this one sleeps meanwhile), from /proc/stat."""
    def sample():
        with open("/proc/stat") as f:
            v = [int(t) for t in f.readline().split()[1:]]
        return v[3] + v[4], sum(v[:8])
    try:
        i0, t0 = sample()
        time.sleep(interval)
        i1, t1 = sample()
    except (OSError, ValueError, IndexError):
        return 0.0
    return 1.0 - (i1 - i0) / max(1, t1 - t0)


class Quiet:
    """Waits, before each batch, until other processes leave the cores
    idle (busy under 20 %), at most `per_batch` seconds each time and
    `budget` seconds in all; counts the batches that ran on a busy host."""

    def __init__(self, enabled, per_batch=60.0, budget=600.0):
        self.enabled, self.per_batch, self.budget = enabled, per_batch, budget
        self.waited = 0.0
        self.busy_batches = 0

    def wait(self):
        busy = cpu_busy(0.3)
        t0 = time.time()
        while self.enabled and busy > 0.2 and time.time() - t0 < self.per_batch and self.waited < self.budget:
            time.sleep(1.0)
            self.waited += 1.3
            busy = cpu_busy(0.3)
        if busy > 0.2:
            self.busy_batches += 1
        return busy


QUIET = Quiet(True)


def loadavg():
    return ", ".join(f"{v:.2f}" for v in os.getloadavg())


def meta(args, started, elapsed, load):
    return {
        "date_utc": started.strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu_model(),
        "isa": isa() + (f", every side held to {ISA_CAP.upper()} (`--isa {ISA_CAP}`)" if ISA_CAP else ""),
        "cores": os.cpu_count(),
        "mem_gib": mem_gib(),
        "load_average_at_start": load,
        "load_average_at_end": loadavg(),
        "numpy": np.__version__,
        "ml_dtypes": ml_dtypes.__version__,
        "torch": torch.__version__ if torch is not None else None,
        "torch_error": TORCH_ERROR,
        "torch_threads": torch.get_num_threads() if torch is not None else None,
        "openblas_core": openblas_core(),
        "twill_commit": git_rev(),
        "twill_binary": args.twill,
        "command": " ".join(["python3", os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:]),
        "quick": args.quick,
        "only": args.only,
        "elapsed_s": round(elapsed, 1),
        "waited_for_quiet_s": round(QUIET.waited),
        "batches": N_BATCHES[0],
        "batches_on_busy_host": QUIET.busy_batches,
    }


def markdown(cases, rejected, m, sizes):
    out = []
    torch_txt = (f"PyTorch {m['torch']} (CPU, {m['torch_threads']} threads)" if m["torch"]
                 else f"no PyTorch ({m['torch_error']}: its columns are —)")
    out.append(
        f"Measured on {m['date_utc']} with `{m['command']}` on twill {m['twill_commit']}, on "
        f"{m['cores']} cores of \"{m['cpu']}\" ({m['isa']}), {m['mem_gib']} GiB, load average "
        f"{m['load_average_at_start']} at the start and {m['load_average_at_end']} at the end (a shared host: "
        f"figures move by tens of per cent, and by far more while other work keeps the cores busy); "
        f"NumPy {m['numpy']} (OpenBLAS core {m['openblas_core']}), ml_dtypes {m['ml_dtypes']}, {torch_txt}; "
        f"the run took {m['elapsed_s'] / 60:.1f} min; {m['batches_on_busy_host']} of its {m['batches']} "
        f"batches started while other processes kept the cores over 20 % busy. Best-of-R wall times in ms (R from a warm-up run: "
        f"15 under 1 ms … 1 over 1.5 s); ratios are peer time / twill time (above 1: twill is faster); "
        f"— where the peer lacks the operation or the dtype, or the size is not run. Sizes "
        f"(small / medium / large): vectors {SIZE_TEXT['vector']}; \"rows\" {SIZE_TEXT['rows']}; "
        f"[s, s] {SIZE_TEXT['square']}; matmul, linear, einsum {SIZE_TEXT['mm']}; linalg "
        f"{SIZE_TEXT['linalg']}; conv2d and the peer call of each row: see `benches/ops/matrix.py`."
    )
    for u in m.get("updates", []):
        out.append("")
        out.append(f"Re-measured on {u['date_utc']} with `{u['command']}` ({u['cases']} cases, twill "
                   f"{u['twill_commit']}, load average {u['load_average_at_start']}, "
                   f"{u['batches_on_busy_host']} batches on a busy host); the other rows are from the run above.")
    out.append("")
    hdr_sizes = " / ".join(sizes)
    out.append(f"| op | dtype | twill {hdr_sizes} (ms) | NumPy/twill {hdr_sizes} | torch/twill {hdr_sizes} |")
    out.append("|---|---|---|---|---|")
    rows = {}
    for c in cases:
        rows.setdefault((c.op.key, c.dt), {})[c.size] = c
    order = {o.key: i for i, o in enumerate(OPS)}
    for (key, dt), by in sorted(rows.items(), key=lambda kv: (order[kv[0][0]], DTYPES.index(kv[0][1]))):
        op_ = next(o for o in OPS if o.key == key)
        tw = " / ".join(sig3(by[s].tw_ms) if s in by else "—" for s in sizes)
        if all(by[s].tw_ms is None for s in by):
            tw = "error: " + next((by[s].tw_error for s in by if by[s].tw_error), "?").replace("|", "\\|")[:120]
        npr = " / ".join(sig3(ratio(by[s].np_ms, by[s].tw_ms)) if s in by else "—" for s in sizes)
        thr = " / ".join(sig3(ratio(by[s].th_ms, by[s].tw_ms)) if s in by else "—" for s in sizes)
        label = op_.label.replace("|", "\\|")
        out.append(f"| `{label}` | {dt} | {tw} | {npr} | {thr} |")
    out.append("")
    slow = []
    for c in cases:
        r = ratio(c.np_ms, c.tw_ms)
        if c.size in ("medium", "large") and r is not None and r < 1.0:
            slow.append((r, c))
    slow.sort(key=lambda rc: rc[0])
    out.append(f"Below 1.0× NumPy at the medium or large size ({len(slow)} cases, slowest first):")
    out.append("")
    if not slow:
        out.append("- none")
    for r, c in slow:
        out.append(f"- `{c.op.label}` {c.dt} {c.size}: {sig3(r)}× (twill {sig3(c.tw_ms)} ms, NumPy {sig3(c.np_ms)} ms)")
    failed = [c for c in cases if c.tw_error]
    if failed:
        out.append("")
        out.append("Cases that twill ran at the small size but failed in the timing run:")
        out.append("")
        for c in failed:
            out.append(f"- `{c.id}`: {c.tw_error}")
    if rejected:
        out.append("")
        out.append("Dtypes twill rejects (each tried once at start-up; the first error is in results.json):")
        out.append("")
        by_op = {}
        for (key, dt), e in rejected.items():
            by_op.setdefault(key, []).append(dt)
        order = {o.key: i for i, o in enumerate(OPS)}
        items = sorted(by_op.items(), key=lambda kv: order[kv[0]])
        out.append("; ".join(f"`{k}`: {', '.join(sorted(v, key=DTYPES.index))}" for k, v in items) + ".")
    return "\n".join(out) + "\n"


def merge_old(cases, rejected, probed, cand_ids, m):
    """The previous results.json with this run's cases (`cand_ids`: those it
    tried, `probed`: the (op, dtype) pairs it probed) in place of theirs."""
    path = os.path.join(OUT_DIR, "results.json")
    try:
        with open(path) as f:
            old = json.load(f)
    except (OSError, ValueError) as exc:
        sys.exit(f"error: --update needs a previous {path}: {exc}")
    ops = {o.key: o for o in OPS}
    new_ids = {c.id for c in cases}
    merged = []
    for d in old["cases"]:
        if d["id"] in new_ids or d["id"] in cand_ids or d["op"] not in ops:
            continue
        c = Case(ops[d["op"]], d["dtype"], d["size"])
        c.tw_ms, c.np_ms, c.th_ms = d["twill_ms"], d["numpy_ms"], d["torch_ms"]
        c.tw_error, c.np_error, c.th_error = d["twill_error"], d["numpy_error"], d["torch_error"]
        c.np_result_dtype, c.th_result_dtype = d.get("numpy_result_dtype"), d.get("torch_result_dtype")
        c.host_busy = d.get("host_busy_before")
        merged.append(c)
    merged += cases
    rej = {(r["op"], r["dtype"]): r["error"] for r in old.get("twill_rejects", []) if (r["op"], r["dtype"]) not in probed}
    rej.update(rejected)
    meta_ = dict(old["meta"])
    meta_["updates"] = old["meta"].get("updates", []) + [
        {"date_utc": m["date_utc"], "command": m["command"], "cases": len(cases), "twill_commit": m["twill_commit"],
         "load_average_at_start": m["load_average_at_start"], "batches_on_busy_host": m["batches_on_busy_host"]}]
    sizes = [s for s in SIZES if any(c.size == s for c in merged)]
    return merged, rej, meta_, sizes


def write_doc(text):
    with open(DOC) as f:
        doc = f.read()
    if BEGIN not in doc or END not in doc or doc.index(BEGIN) > doc.index(END):
        print(f"error: {os.path.relpath(DOC, ROOT)} has no `{BEGIN}` … `{END}` pair of lines; add them where "
              f"the table belongs and run again (the table is in {os.path.relpath(OUT_DIR, ROOT)}/table.md)",
              file=sys.stderr)
        return False
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(DOC + ".tmp", "w") as f:
        f.write(head + BEGIN + "\n" + text + END + tail)
    os.replace(DOC + ".tmp", DOC)
    print(f"wrote the table into {os.path.relpath(DOC, ROOT)}", file=sys.stderr)
    return True


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small and medium sizes of a subset, to check the script")
    ap.add_argument("--only", metavar="REGEX", help="only the case ids (key/dtype/size) REGEX searches")
    ap.add_argument("--write", action="store_true", help="replace the marked table in docs/performance.md")
    ap.add_argument("--no-wait", action="store_true",
                    help="do not wait (up to 60 s a batch, 10 min in all) for other processes to leave the cores idle")
    ap.add_argument("--update", action="store_true",
                    help="merge the cases this run measures into the existing results.json (the rest keep "
                         "their times) and make the table from the merged results")
    ap.add_argument("--twill", default=TWILL, help="the twill binary (default target/release/twill)")
    ap.add_argument("--isa", choices=["avx2"],
                    help="hold twill, NumPy, OpenBLAS and torch to this instruction set (see the docstring)")
    args = ap.parse_args()

    warnings.filterwarnings("ignore")
    np.seterr(all="ignore")
    if torch is not None:
        torch.set_num_threads(os.cpu_count())
    if not os.path.exists(args.twill):
        sys.exit(f"error: no twill binary at {args.twill}; run `cargo build --release` first")
    os.makedirs(OUT_DIR, exist_ok=True)
    # A snapshot of the binary, so that a rebuild during the run changes nothing.
    twill = os.path.join(OUT_DIR, "twill")
    shutil.copy2(args.twill, twill + ".tmp")
    os.replace(twill + ".tmp", twill)

    started = datetime.datetime.now(datetime.timezone.utc)
    t_start = time.time()
    load = loadavg()
    if os.getloadavg()[0] > 0.7:
        print(f"warning: load average {load}: other processes are running, so the times will be noisy "
              f"(waits for a descheduled worker thread show up as ~8 ms floors)", file=sys.stderr)
    setup_ops()
    sizes = ["small", "medium"] if args.quick else SIZES
    only = re.compile(args.only) if args.only else None

    # Candidate cases.
    cands = []
    for o in OPS:
        if args.quick and not o.quick:
            continue
        for dt in o.dtypes:
            for size in o.sizes_for(dt):
                if size not in sizes:
                    continue
                c = Case(o, dt, size)
                if only is None or only.search(c.id):
                    cands.append(c)
    if not cands:
        sys.exit("error: no case matches")

    # Which (op, dtype) pairs twill takes: one tiny program each.
    pairs = {}
    for c in cands:
        pairs.setdefault((c.op.key, c.dt), Case(c.op, c.dt, "small"))
    print(f"probing {len(pairs)} (op, dtype) pairs …", file=sys.stderr)
    rejected = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as ex:
        futs = {ex.submit(probe, twill, c): k for k, c in pairs.items()}
        for f in concurrent.futures.as_completed(futs):
            e = f.result()
            if e is not None:
                rejected[futs[f]] = e
    print(f"probed in {time.time() - t_start:.0f} s: {len(pairs) - len(rejected)} pairs run, "
          f"{len(rejected)} rejected", file=sys.stderr)
    cases = [c for c in cands if (c.op.key, c.dt) not in rejected]

    # Batches of one (size, dtype, group); the large size last.
    batches = {}
    for c in cases:
        batches.setdefault((SIZES.index(c.size), DTYPES.index(c.dt), c.op.group), []).append(c)
    inputs = Inputs()
    QUIET.enabled = not args.no_wait
    N_BATCHES[0] = len(batches)
    for i, (key, batch) in enumerate(sorted(batches.items())):
        size, dt, group = SIZES[key[0]], DTYPES[key[1]], key[2]
        busy = QUIET.wait()
        for c in batch:
            c.host_busy = round(busy, 2)
        t0 = time.time()
        run_twill(twill, batch, os.path.join(OUT_DIR, f"{size}_{dt}_{group}.tw"))
        t1 = time.time()
        run_peers(batch, inputs)
        print(f"[{i + 1}/{len(batches)}] {size} {dt} {group}: {len(batch)} cases, twill {t1 - t0:.1f} s, "
              f"peers {time.time() - t1:.1f} s, host busy {busy:.0%} before", file=sys.stderr)
    inputs.reset(None)

    elapsed = time.time() - t_start
    m = meta(args, started, elapsed, load)
    if args.update:
        cases, rejected, m, sizes = merge_old(cases, rejected, set(pairs), {c.id for c in cands}, m)
    text = markdown(cases, rejected, m, sizes)
    # A partial run (`--only` without `--update`) keeps its results apart, so
    # that it does not replace the full results a later `--update` merges into.
    stem = "only" if args.only and not args.update else ""
    with open(os.path.join(OUT_DIR, f"table{'-' + stem if stem else ''}.md"), "w") as f:
        f.write(text)
    results = {
        "meta": m,
        "cases": [
            {
                "id": c.id, "op": c.op.key, "label": c.op.label, "dtype": c.dt, "size": c.size,
                "twill_ms": c.tw_ms, "numpy_ms": c.np_ms, "torch_ms": c.th_ms,
                "numpy_ratio": ratio(c.np_ms, c.tw_ms), "torch_ratio": ratio(c.th_ms, c.tw_ms),
                "twill_error": c.tw_error, "numpy_error": c.np_error, "torch_error": c.th_error,
                "numpy_result_dtype": c.np_result_dtype, "torch_result_dtype": c.th_result_dtype,
                "host_busy_before": getattr(c, "host_busy", None),
            }
            for c in cases
        ],
        "twill_rejects": [{"op": k, "dtype": dt, "error": e} for (k, dt), e in sorted(rejected.items())],
    }
    with open(os.path.join(OUT_DIR, f"results{'-' + stem if stem else ''}.json"), "w") as f:
        json.dump(results, f, indent=1)
    if args.write:
        if not write_doc(text):
            sys.exit(1)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
