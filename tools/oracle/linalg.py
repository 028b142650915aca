"""Linear-algebra oracle (spec §11.4): numpy.linalg on random, ill-conditioned,
singular/rank-deficient, batched, empty and non-square inputs, in f64 and f32
(and a few bf16/integer inputs, which compute in f32).

Writes testdata/vectors/linalg.jsonl, read by crates/tensor/tests/linalg.rs.
Factorisations are not bit-comparable between libraries (blocking and
reflector signs differ), so each line records the input exactly, NumPy's
outputs in the compute dtype, and the facts the test's bounds need:

    {"op": "solve", "args": [TENSOR, ...], "expect": TENSOR | {"ts": [...]}
     | {"error": "substring"}, "cond": "7ff0..." (f64 bits of the 2-norm
     condition number of each matrix's worst case; inf when singular),
     "kind": "random" | "ill" | "singular" | "rank" | "spd" | ...,
     "note": "..."}

TENSOR is opslib's {"t", "shape", "bits"}. The test checks the residual
bound each function documents (docs/language.md, "Linear algebra") and
agreement with NumPy where the answer is unique (singular values,
eigenvalues, solutions within a condition-scaled bound, ranks, errors).

Run: tools/oracle/.venv/bin/python tools/oracle/linalg.py
"""
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import opslib  # noqa: E402

try:
    import ml_dtypes  # noqa: E402

    BF16 = ml_dtypes.bfloat16
except ImportError:  # pragma: no cover
    BF16 = None

OUT = opslib.OUT / "linalg.jsonl"
rng = np.random.default_rng(20261104)
NP = {"f64": np.float64, "f32": np.float32}


def enc(arr, dt):
    """A tensor argument/expectation with exact storage bits."""
    arr = np.asarray(arr)
    shape = list(arr.shape)
    flat = arr.reshape(-1)
    if dt == "f64":
        bits = [int(x) for x in flat.astype(np.float64).view(np.uint64)]
    elif dt == "f32":
        bits = [int(x) for x in flat.astype(np.float32).view(np.uint32)]
    elif dt == "bf16":
        bits = [int(x) for x in flat.astype(BF16).view(np.uint16)]
    elif dt == "i32":
        bits = [int(x) % 2**32 for x in flat.astype(np.int64)]
    else:
        raise ValueError(dt)
    return opslib.tensor(dt, shape, bits)


def fbits(x):
    return format(opslib.f64_bits(float(x)), "016x")


def with_cond(u_shape_n, cond, m=None):
    """An m × n matrix with singular values spread log-uniformly from 1 to
    1/cond, from random orthogonal factors (U diag V^T)."""
    n = u_shape_n
    m = m or n
    k = min(m, n)
    u, _ = np.linalg.qr(rng.standard_normal((m, m)))
    v, _ = np.linalg.qr(rng.standard_normal((n, n)))
    s = np.logspace(0, -np.log10(cond), k) if k > 1 else np.ones(k)
    return (u[:, :k] * s) @ v[:k, :]


def rank_deficient(m, n, r):
    """An m × n matrix of rank r (the others exactly zero in exact
    arithmetic, ~1e-16 relative in f64), singular values 1 … 0.1."""
    k = min(m, n)
    u, _ = np.linalg.qr(rng.standard_normal((m, m)))
    v, _ = np.linalg.qr(rng.standard_normal((n, n)))
    s = np.zeros(k)
    s[:r] = np.linspace(1, 0.1, r) if r > 1 else 1.0
    return (u[:, :k] * s) @ v[:k, :]


def exact_singular(n):
    """Small-integer n × n matrices that are singular in exact arithmetic
    and whose LU (in any order) meets an exact zero pivot."""
    a = rng.integers(-3, 4, size=(n, n)).astype(np.float64)
    if n == 1:
        return np.zeros((1, 1))
    a[-1] = a[0] * 2.0
    return a


def cond_of(a):
    """The worst 2-norm condition number over a batch (inf if singular)."""
    a = np.asarray(a, dtype=np.float64)
    if a.size == 0:
        return 1.0
    s = np.linalg.svd(a.reshape((-1,) + a.shape[-2:]), compute_uv=False)
    worst = 1.0
    for row in s:
        if row[0] == 0:
            continue
        if row[-1] == 0 or row[-1] / row[0] < 1e-300:
            return float("inf")
        worst = max(worst, row[0] / row[-1])
    return worst


def eff_cond(a, rtol=None):
    """The condition number over the singular values above NumPy's cutoff."""
    a = np.asarray(a, dtype=np.float64)
    if a.size == 0:
        return 1.0
    m, n = a.shape[-2:]
    eps = np.finfo(np.float64).eps
    worst = 1.0
    for row in np.linalg.svd(a.reshape((-1, m, n)), compute_uv=False):
        if len(row) == 0 or row[0] == 0:
            continue
        cut = max(m, n) * eps * row[0] if rtol is None else rtol * row[0]
        kept = row[row > cut]
        worst = max(worst, kept[0] / kept[-1])
    return worst


cases = []


def add(op, args, expect, cond, kind, note):
    cases.append({"op": op, "args": args, "expect": expect, "cond": fbits(cond), "kind": kind, "note": note})


def cast_in(a, dt):
    """`a` stored in dtype `dt`, and the values NumPy computes on (the
    compute dtype: f64 for f64, else f32)."""
    if dt == "f64":
        x = np.asarray(a, np.float64)
        return x, x
    if dt == "f32":
        x = np.asarray(a, np.float32)
        return x, x
    if dt == "bf16":
        x = np.asarray(a, np.float32).astype(BF16)
        return x, x.astype(np.float32)
    if dt == "i32":
        x = np.rint(np.asarray(a) * 4).astype(np.int32)
        return x, x.astype(np.float32)
    raise ValueError(dt)


def cdt(dt):
    return "f64" if dt == "f64" else "f32"


def np_call(fn):
    try:
        return fn(), None
    except np.linalg.LinAlgError as e:
        return None, str(e)


ERRORS = {"solve": "singular", "inv": "singular", "cholesky": "positive definite"}


def square_case(op, a_store, dt, kind, note, b_store=None, cond=None):
    """Runs NumPy's `op` on one square input (and `b`) and records it."""
    a_store, a = cast_in(a_store, dt)
    cd = cdt(dt)
    args = [enc(a_store, dt)]
    if b_store is not None:
        b_store, b = cast_in(b_store, dt)
        args.append(enc(b_store, dt))
    c = cond_of(a) if cond is None else cond
    if op == "solve":
        # NumPy 2: b is a vector only when it is 1-D.
        res, err = np_call(lambda: np.linalg.solve(a, b if b.ndim > 1 else b))
        expect = enc(res, cd) if err is None else {"error": ERRORS[op]}
    elif op == "inv":
        res, err = np_call(lambda: np.linalg.inv(a))
        expect = enc(res, cd) if err is None else {"error": ERRORS[op]}
    elif op == "det":
        expect = enc(np.linalg.det(a), cd)
    elif op == "slogdet":
        s, l = np.linalg.slogdet(a)
        expect = {"ts": [enc(s, cd), enc(l, cd)]}
    elif op == "cholesky":
        res, err = np_call(lambda: np.linalg.cholesky(a))
        expect = enc(res, cd) if err is None else {"error": ERRORS[op]}
        if err is None:
            c = cond_of(a)
    elif op == "eigh":
        w, v = np.linalg.eigh(a)
        expect = {"ts": [enc(w, cd), enc(v, cd)]}
    else:
        raise ValueError(op)
    add(op, args, expect, c, kind, note)


def general_case(op, a_store, dt, kind, note, b_store=None):
    a_store, a = cast_in(a_store, dt)
    cd = cdt(dt)
    args = [enc(a_store, dt)]
    c = eff_cond(a) if op in ("lstsq", "pinv", "matrix_rank") else cond_of(a)
    if op == "qr":
        q, r = np.linalg.qr(a)
        expect = {"ts": [enc(q, cd), enc(r, cd)]}
    elif op == "svd":
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        expect = {"ts": [enc(u, cd), enc(s, cd), enc(vh, cd)]}
    elif op == "pinv":
        expect = enc(np.linalg.pinv(a), cd)
    elif op == "matrix_rank":
        expect = enc(np.asarray(np.linalg.matrix_rank(a), np.int32), "i32")
    elif op == "lstsq":
        b_store, b = cast_in(b_store, dt)
        args.append(enc(b_store, dt))
        # NumPy's lstsq is not batched: loop over the batch.
        lead = np.broadcast_shapes(a.shape[:-2], b.shape[:-2] if b.ndim > 1 else ())
        ab = np.broadcast_to(a, lead + a.shape[-2:])
        bb = np.broadcast_to(b, lead + b.shape[-2:]) if b.ndim > 1 else b
        n = a.shape[-1]
        out = np.zeros(lead + ((n,) if b.ndim == 1 else (n, b.shape[-1])), a.dtype)
        for idx in np.ndindex(*lead):
            bi = bb if b.ndim == 1 else bb[idx]
            out[idx] = np.linalg.lstsq(ab[idx], bi, rcond=None)[0]
        expect = enc(out, cd)
    else:
        raise ValueError(op)
    add(op, args, expect, c, kind, note)


def spd(n, cond=None):
    if cond is None:
        x = rng.standard_normal((n, n))
        return x @ x.T + n * np.eye(n)
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    w = np.logspace(0, -np.log10(cond), n)
    a = (q * w) @ q.T
    return (a + a.T) / 2


def sym(n, cond=None):
    if cond is None:
        x = rng.standard_normal((n, n))
        return (x + x.T) / 2
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    w = np.logspace(0, -np.log10(cond), n) * rng.choice([-1, 1], n)
    a = (q * w) @ q.T
    return (a + a.T) / 2


SIZES = [0, 1, 2, 3, 5, 8, 17]
ILL = {"f64": [1e6, 1e12], "f32": [1e3, 1e5]}

for dt in ["f64", "f32"]:
    for n in SIZES:
        a = rng.standard_normal((n, n))
        for op in ["inv", "det", "slogdet"]:
            square_case(op, a, dt, "random", f"{n}x{n}")
        square_case("solve", a, dt, "random", f"{n}x{n}, b {n}x3", b_store=rng.standard_normal((n, 3)))
        square_case("solve", a, dt, "random", f"{n}x{n}, vector b", b_store=rng.standard_normal(n))
        square_case("cholesky", spd(n), dt, "spd", f"{n}x{n} SPD")
        square_case("eigh", sym(n), dt, "sym", f"{n}x{n} symmetric")
        for op in ["qr", "svd", "pinv", "matrix_rank"]:
            general_case(op, rng.standard_normal((n, n)), dt, "random", f"{n}x{n}")
        general_case("lstsq", rng.standard_normal((n, n)), dt, "random", f"{n}x{n}", b_store=rng.standard_normal((n, 2)))
    for cond in ILL[dt]:
        for n in [3, 8, 17]:
            a = with_cond(n, cond)
            for op in ["inv", "det", "slogdet"]:
                square_case(op, a, dt, "ill", f"{n}x{n} cond {cond:g}")
            square_case("solve", a, dt, "ill", f"{n}x{n} cond {cond:g}", b_store=rng.standard_normal((n, 2)))
            square_case("cholesky", spd(n, cond), dt, "ill", f"{n}x{n} SPD cond {cond:g}")
            square_case("eigh", sym(n, cond), dt, "ill", f"{n}x{n} symmetric cond {cond:g}")
            for op in ["qr", "svd", "pinv", "matrix_rank"]:
                general_case(op, with_cond(n, cond, m=n + 2), dt, "ill", f"{n + 2}x{n} cond {cond:g}")
            general_case("lstsq", with_cond(n, cond, m=n + 3), dt, "ill", f"{n + 3}x{n} cond {cond:g}",
                         b_store=rng.standard_normal((n + 3, 2)))
    # Exactly singular (an exact zero pivot in any LU): errors for solve and
    # inv, det 0 and slogdet (0, -inf) as NumPy gives them.
    for n in [1, 2, 4, 6]:
        a = exact_singular(n)
        for op in ["inv", "det", "slogdet"]:
            square_case(op, a, dt, "singular", f"{n}x{n} exactly singular")
        square_case("solve", a, dt, "singular", f"{n}x{n} exactly singular", b_store=rng.standard_normal((n, 1)))
        square_case("eigh", (a + a.T) / 2 * 0 + np.outer(a[0], a[0]), dt, "singular", f"{n}x{n} rank-1 symmetric")
    square_case("det", np.zeros((3, 3)), dt, "singular", "zeros")
    square_case("inv", np.array([[1.0, 2.0], [2.0, 4.0]]), dt, "singular", "[[1,2],[2,4]]")
    # Not positive definite: errors.
    for a, note in [(np.array([[1.0, 2.0], [2.0, 1.0]]), "indefinite"), (np.zeros((2, 2)), "zeros"),
                    (-np.eye(3), "negative definite"), (np.array([[4.0, 2.0], [2.0, 1.0]]), "semidefinite, singular")]:
        square_case("cholesky", a, dt, "notpd", note)
    # Rank-deficient general matrices (the zero singular values at ~1e-16
    # relative, far below the cutoff; the others far above it).
    for (m, n, r) in [(5, 5, 3), (7, 4, 2), (4, 7, 2), (6, 6, 1), (3, 3, 0)]:
        for op in ["svd", "pinv", "matrix_rank", "qr"]:
            general_case(op, rank_deficient(m, n, r), dt, "rank", f"{m}x{n} rank {r}")
        general_case("lstsq", rank_deficient(m, n, r), dt, "rank", f"{m}x{n} rank {r}", b_store=rng.standard_normal((m, 2)))
    # Non-square shapes.
    for (m, n) in [(5, 3), (3, 5), (1, 4), (4, 1), (0, 3), (3, 0), (40, 7)]:
        for op in ["qr", "svd", "pinv", "matrix_rank"]:
            general_case(op, rng.standard_normal((m, n)), dt, "random", f"{m}x{n}")
        general_case("lstsq", rng.standard_normal((m, n)), dt, "random", f"{m}x{n}", b_store=rng.standard_normal((m, 2)))
        general_case("lstsq", rng.standard_normal((m, n)), dt, "random", f"{m}x{n}, vector b", b_store=rng.standard_normal(m))
    # Batched, including an empty batch and broadcast batch axes.
    for lead in [(4,), (2, 3), (0,)]:
        n = 4
        a = rng.standard_normal(lead + (n, n))
        for op in ["inv", "det", "slogdet"]:
            square_case(op, a, dt, "batch", f"batch {lead} of {n}x{n}")
        square_case("solve", a, dt, "batch", f"batch {lead}", b_store=rng.standard_normal(lead + (n, 2)))
        x = rng.standard_normal(lead + (n, n))
        square_case("cholesky", x @ np.swapaxes(x, -1, -2) + n * np.eye(n), dt, "batch", f"batch {lead} SPD")
        square_case("eigh", (x + np.swapaxes(x, -1, -2)) / 2, dt, "batch", f"batch {lead} symmetric")
        for op in ["qr", "svd", "pinv", "matrix_rank"]:
            general_case(op, rng.standard_normal(lead + (5, 3)), dt, "batch", f"batch {lead} of 5x3")
        general_case("lstsq", rng.standard_normal(lead + (5, 3)), dt, "batch", f"batch {lead} of 5x3",
                     b_store=rng.standard_normal(lead + (5, 2)))
    square_case("solve", rng.standard_normal((2, 1, 3, 3)), dt, "batch", "broadcast batch [2,1] with [4]",
                b_store=rng.standard_normal((4, 3, 2)))
    square_case("solve", rng.standard_normal((3, 4, 4)), dt, "batch", "batch with a shared vector b",
                b_store=rng.standard_normal(4))
    general_case("lstsq", rng.standard_normal((2, 1, 5, 3)), dt, "batch", "broadcast batch [2,1] with [3]",
                 b_store=rng.standard_normal((3, 5, 2)))
    # One singular matrix inside a batch: the whole call fails, naming it.
    a = rng.standard_normal((3, 3, 3))
    a[1] = exact_singular(3)
    square_case("inv", a, dt, "singular", "batch with one singular matrix")

# Narrow and integer inputs compute in f32.
if BF16 is not None:
    a = rng.standard_normal((4, 4))
    for op in ["inv", "det"]:
        square_case(op, a, "bf16", "random", "bf16 input computes in f32")
    general_case("svd", rng.standard_normal((4, 3)), "bf16", "random", "bf16 input computes in f32")
a = rng.standard_normal((3, 3))
square_case("det", a, "i32", "random", "i32 input computes in f32")
square_case("solve", a, "i32", "random", "i32 input computes in f32", b_store=rng.standard_normal((3, 1)))
general_case("matrix_rank", rng.standard_normal((4, 3)), "i32", "random", "i32 input")

# Shape errors (every one NumPy refuses too).
def err(op, args, msg, note):
    cases.append({"op": op, "args": args, "expect": {"error": msg}, "cond": fbits(1.0), "kind": "error", "note": note})

z = lambda *s: enc(np.zeros(s), "f64")  # noqa: E731
for op in ["inv", "det", "slogdet", "cholesky", "eigh"]:
    err(op, [z(3, 4)], "square", "non-square input")
    err(op, [z(4)], "at least 2 dimensions", "a vector")
err("solve", [z(3, 4), z(3)], "square", "non-square a")
err("solve", [z(3, 3), z(4)], "rows", "b's length differs")
err("solve", [z(3, 3), z(4, 2)], "rows", "b's rows differ")
err("solve", [z(2, 3, 3), z(4, 3, 1)], "broadcast", "batch axes do not broadcast")
err("lstsq", [z(3, 2), z(4)], "rows", "b's length differs")
for op in ["qr", "svd", "pinv", "matrix_rank"]:
    err(op, [z(3)], "at least 2 dimensions", "a vector")
nan = np.eye(3)
nan[1, 1] = np.nan
for op in ["svd", "eigh", "pinv", "matrix_rank"]:
    err(op, [enc(nan, "f64")], "NaN", "NaN input (NumPy: did not converge)")

with open(OUT, "w") as f:
    f.write("# Linear algebra (spec §11.4), generated by tools/oracle/linalg.py from\n")
    f.write(f"# numpy.linalg {np.__version__}; do not edit by hand.\n")
    for c in cases:
        f.write(json.dumps(c, separators=(",", ":")) + "\n")
print(f"{len(cases)} cases -> {OUT.relative_to(opslib.ROOT)}")
