"""Writes testdata/vectors/ops_shape.jsonl: the rearrangement operations of
spec §4.1 (reshape transpose permute flip roll squeeze unsqueeze
broadcast_to concat stack split gather index_select), for
crates/tensor/tests/ops_oracle.rs.

    tools/oracle/.venv/bin/python tools/oracle/ops_shape.py

A rearrangement moves elements without computing anything, so the
reference works on the elements' storage bit patterns, held in NumPy
object arrays: NumPy's reshape, transpose, flip, roll, squeeze,
expand_dims, broadcast_to, concatenate, stack and take define where each
element goes (torch.gather and torch.split, whose semantics the spec
names, are written out here in plain Python). The one computation is the
promotion of `concat`/`stack` pieces: the result dtype comes from the
seed's promotion rules written out below (not from twill's table), and
each element is converted by casts.reference_cast, the exact single
rounding of the cast oracle (so an i32 piece joined with a bf16 one is
rounded once, from the integer).

Index arguments follow spec §4 and twill's documented choices: integer
or integral float tensors, negative indices counting from the end (as
`x[i]` does), anything else an error naming the value.

Deterministic: numpy's PCG64 with a fixed seed.
"""
import itertools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import opslib  # noqa: E402
from opslib import case, tensor  # noqa: E402

casts = opslib.casts
FLOATS = ("bf16", "f16", "f32", "f64")
INTS = ("bool", "i8", "i32")
ALL = INTS + FLOATS
WIDTH = {"bool": 1, "i8": 8, "i32": 32, "bf16": 16, "f16": 16, "f32": 32, "f64": 64}
RNG = np.random.Generator(np.random.PCG64(0x7477696C6C5F7368))  # "twill_sh"


def random_bits(dt, n):
    """n arbitrary storage patterns of dt (every pattern is a valid element:
    rearrangements never look at values)."""
    if dt == "bool":
        return [int(b) for b in RNG.integers(0, 2, n)]
    return [int(b) for b in RNG.integers(0, 2 ** WIDTH[dt], n, dtype=np.uint64)]


class T:
    """A test tensor: dtype, shape and bits (row-major), as an object array."""

    def __init__(self, dt, shape, bits=None):
        self.dt = dt
        n = int(np.prod(shape, dtype=np.int64))
        self.bits = random_bits(dt, n) if bits is None else list(bits)
        self.arr = np.array(self.bits, dtype=object).reshape(shape)

    def js(self):
        return tensor(self.dt, list(self.arr.shape), self.bits)


def out(dt, arr):
    arr = np.asarray(arr, dtype=object)
    return tensor(dt, list(arr.shape), [int(b) for b in arr.reshape(-1)])


def ints(v):
    return {"ints": list(v)}


def i(v):
    return {"i": v}


def err(msg):
    return {"error": msg}


# ---------------------------------------------------------------------------
# Promotion (seed 000, "Promotion"), written out independently.

INT_RANK = {"bool": 0, "i8": 1, "i32": 2}
FLOAT_RANK = {"bf16": 0, "f16": 0, "f32": 1, "f64": 2}


def promote(a, b):
    if a == b:
        return a
    if a in INT_RANK and b in INT_RANK:
        return a if INT_RANK[a] >= INT_RANK[b] else b
    if a in INT_RANK:
        return b
    if b in INT_RANK:
        return a
    if {a, b} == {"bf16", "f16"}:
        return "f32"
    return a if FLOAT_RANK[a] > FLOAT_RANK[b] else b


def converted(t, dt):
    conv = [casts.reference_cast(t.dt, b, dt) for b in t.bits]
    assert all(c is not None for c in conv)
    return np.array(conv, dtype=object).reshape(t.arr.shape)


# ---------------------------------------------------------------------------
# Cases


def view_cases(c):
    for dt in ALL:
        x = T(dt, [2, 3, 4])
        a = x.arr
        note = f"{dt} [2, 3, 4]"
        c.append(case("reshape", [x.js(), ints([4, 6])], out(dt, a.reshape(4, 6)), note=f"{note} to [4, 6]"))
        c.append(case("reshape", [x.js(), ints([-1])], out(dt, a.reshape(-1)), note=f"{note} flattened by -1"))
        c.append(case("transpose", [x.js(), i(0), i(2)], out(dt, a.swapaxes(0, 2)), note=f"{note} swap 0 and 2"))
        c.append(case("permute", [x.js(), ints([2, 0, 1])], out(dt, a.transpose(2, 0, 1)), note=note))
        c.append(case("flip", [x.js()], out(dt, np.flip(a)), note=f"{note} all axes when none is given"))
        c.append(case("flip", [x.js(), i(1)], out(dt, np.flip(a, 1)), note=note))
        c.append(case("roll", [x.js(), i(5)], out(dt, np.roll(a, 5)), note=f"{note} flattened roll"))
        c.append(case("roll", [x.js(), i(-1), i(2)], out(dt, np.roll(a, -1, 2)), note=note))
        y = T(dt, [1, 3, 1, 2])
        c.append(case("squeeze", [y.js()], out(dt, np.squeeze(y.arr)), note=f"{dt} all size-1 axes"))
        c.append(case("unsqueeze", [x.js(), i(1)], out(dt, np.expand_dims(a, 1)), note=note))
        z = T(dt, [3, 1])
        c.append(case("broadcast_to", [z.js(), ints([2, 3, 4])], out(dt, np.broadcast_to(z.arr, (2, 3, 4))), note=dt))

    x = T("f32", [2, 3])
    a = x.arr
    # reshape
    for shape in ([3, 2], [6], [1, 6, 1], [3, -1], [-1, 1, 2], [2, 3]):
        c.append(case("reshape", [x.js(), ints(shape)], out("f32", a.reshape(shape)), note=f"[2, 3] to {shape}"))
    c.append(case("reshape", [x.js(), i(6)], out("f32", a.reshape(6)), note="shape given as an Int"))
    c.append(case("reshape", [x.js()], out("f32", a.reshape(3, 2)), {"shape": opslib.tensor_from_values("f64", [2], [3, 2])},
                  note="shape as an integral f64 tensor, by keyword"))
    s = T("i32", [])
    c.append(case("reshape", [s.js(), ints([1, 1])], out("i32", s.arr.reshape(1, 1)), note="rank 0 to [1, 1]"))
    one = T("f64", [1, 1])
    c.append(case("reshape", [one.js(), ints([])], out("f64", one.arr.reshape(())), note="[1, 1] to rank 0"))
    e = T("f16", [0, 3])
    c.append(case("reshape", [e.js(), ints([3, 0, 2])], out("f16", e.arr.reshape(3, 0, 2)), note="empty"))
    c.append(case("reshape", [e.js(), ints([-1, 3])], out("f16", e.arr.reshape(-1, 3)), note="empty with -1"))
    c.append(case("reshape", [x.js(), ints([4, 2])],
                  err("cannot reshape a tensor of shape [2, 3] (6 elements) into shape [4, 2]"), note="count mismatch names both shapes"))
    c.append(case("reshape", [x.js(), ints([4, -1])],
                  err("cannot reshape a tensor of shape [2, 3] (6 elements) into shape [4, -1]"), note="-1 cannot make the counts agree"))
    c.append(case("reshape", [x.js(), ints([-1, -1])], err("only one size can be -1"), note="two -1"))
    c.append(case("reshape", [x.js(), ints([-2, -3])], err("negative size (-2)"), note="negative size"))
    c.append(case("reshape", [e.js(), ints([0, -1])], err("into shape [0, -1]"), note="-1 next to a 0 is ambiguous (NumPy too)"))
    c.append(case("reshape", [x.js(), opslib.tensor_from_values("f64", [2], [1.5, 4])], err("must hold integers"), note="non-integral shape"))
    c.append(case("reshape", [x.js(), opslib.f(6.0)], err("must be an Arr[Int]"), note="an F64 is not a shape"))
    c.append(case("reshape", [ints([1, 2])], err("must be a tensor"), {"shape": ints([2])}, note="receiver must be a tensor"))

    # transpose / permute
    y = T("bf16", [2, 3, 4])
    b = y.arr
    c.append(case("transpose", [y.js(), i(-1), i(0)], out("bf16", b.swapaxes(-1, 0)), note="negative axis"))
    c.append(case("transpose", [y.js(), i(1), i(1)], out("bf16", b), note="an axis with itself"))
    c.append(case("transpose", [y.js()], out("bf16", b.swapaxes(0, 1)), {"a": i(0), "b": i(1)}, note="keywords a and b"))
    c.append(case("transpose", [s.js(), i(0), i(-1)], out("i32", s.arr), note="rank 0: axes 0 and -1 name the tensor"))
    c.append(case("transpose", [y.js(), i(3), i(0)], err("axis 3 is out of range for a tensor of rank 3"), note="bad axis"))
    c.append(case("permute", [y.js(), ints([-1, 0, 1])], out("bf16", b.transpose(2, 0, 1)), note="negative axes"))
    c.append(case("permute", [y.js()], out("bf16", b.transpose(1, 0, 2)), {"axes": opslib.tensor_from_values("f64", [3], [1, 0, 2])},
                  note="axes as a tensor, by keyword"))
    c.append(case("permute", [s.js(), ints([])], out("i32", s.arr), note="rank 0, empty permutation"))
    c.append(case("permute", [y.js(), ints([0, 0, 1])], err("axis 0 is given twice"), note="not a permutation"))
    c.append(case("permute", [y.js(), ints([0, 1])], err("[0, 1] is not a permutation of the axes of a rank-3 tensor"), note="too short"))
    c.append(case("permute", [y.js(), ints([0, 1, 3])], err("axis 3 is out of range"), note="bad axis"))

    # flip
    c.append(case("flip", [y.js(), ints([0, 2])], out("bf16", np.flip(b, (0, 2))), note="several axes"))
    c.append(case("flip", [y.js()], out("bf16", np.flip(b, -1)), {"axis": i(-1)}, note="axis by keyword"))
    c.append(case("flip", [s.js()], out("i32", s.arr), note="rank 0"))
    c.append(case("flip", [e.js(), i(0)], out("f16", e.arr), note="empty"))
    c.append(case("flip", [y.js(), ints([1, -2])], err("axis -2 is given twice"), note="an axis twice"))
    c.append(case("flip", [y.js(), i(3)], err("axis 3 is out of range"), note="bad axis"))

    # roll (NumPy semantics)
    r = T("i8", [3, 4])
    ra = r.arr
    for args, want, note in (
        ([i(1)], np.roll(ra, 1), "flattened"),
        ([i(-13)], np.roll(ra, -13), "flattened, shift beyond the length"),
        ([i(1), i(0)], np.roll(ra, 1, 0), "axis 0"),
        ([i(6), i(-1)], np.roll(ra, 6, -1), "shift beyond the axis length wraps"),
        ([ints([1, -1]), ints([0, 1])], np.roll(ra, (1, -1), (0, 1)), "one shift per axis"),
        ([i(2), ints([0, 1])], np.roll(ra, 2, (0, 1)), "one shift broadcast to two axes"),
        ([ints([1, 2]), i(1)], np.roll(ra, (1, 2), 1), "two shifts of one axis add up"),
        ([ints([1, 2])], np.roll(ra, (1, 2)), "two shifts of the flattened tensor add up"),
    ):
        c.append(case("roll", [r.js()] + args, out("i8", want), note=f"roll {note}"))
    c.append(case("roll", [r.js()], out("i8", np.roll(ra, 3, 1)), {"shift": i(3), "axis": i(1)}, note="keywords"))
    c.append(case("roll", [e.js(), i(1), i(0)], out("f16", e.arr), note="empty"))
    c.append(case("roll", [s.js(), i(3)], out("i32", s.arr), note="rank 0"))
    c.append(case("roll", [r.js(), ints([1, 2]), ints([0, 1, 0])], err("2 shifts and 3 axes cannot be paired up"), note="mismatched lists"))
    c.append(case("roll", [r.js(), i(1), i(2)], err("axis 2 is out of range"), note="bad axis"))

    # squeeze / unsqueeze
    q = T("f64", [1, 3, 1, 2])
    qa = q.arr
    c.append(case("squeeze", [q.js(), i(0)], out("f64", np.squeeze(qa, 0)), note="one axis"))
    c.append(case("squeeze", [q.js(), ints([0, -2])], out("f64", np.squeeze(qa, (0, 2))), note="several axes"))
    c.append(case("squeeze", [q.js()], out("f64", np.squeeze(qa, 2)), {"axis": i(2)}, note="keyword"))
    ones = T("bool", [1, 1])
    c.append(case("squeeze", [ones.js()], out("bool", np.squeeze(ones.arr)), note="every axis: rank 0"))
    c.append(case("squeeze", [s.js()], out("i32", s.arr), note="rank 0 unchanged"))
    c.append(case("squeeze", [e.js()], out("f16", e.arr), note="a size-0 axis is not removed"))
    c.append(case("squeeze", [q.js(), i(1)], err("cannot squeeze axis 1 of size 3 (shape [1, 3, 1, 2])"), note="not size 1"))
    c.append(case("squeeze", [q.js(), i(4)], err("axis 4 is out of range"), note="bad axis"))
    w = T("f32", [2, 3])
    wa = w.arr
    for ax in (0, 2, -1, -3):
        c.append(case("unsqueeze", [w.js(), i(ax)], out("f32", np.expand_dims(wa, ax)), note=f"axis {ax}"))
    c.append(case("unsqueeze", [w.js(), ints([0, 3])], out("f32", np.expand_dims(wa, (0, 3))), note="several axes (expand_dims)"))
    c.append(case("unsqueeze", [s.js()], out("i32", np.expand_dims(s.arr, 0)), {"axis": i(0)}, note="rank 0, keyword"))
    c.append(case("unsqueeze", [w.js(), i(3)], err("axis 3 is out of range for a tensor of rank 3"), note="bad axis"))
    c.append(case("unsqueeze", [w.js(), ints([1, 1])], err("axis 1 is given twice"), note="an axis twice"))
    c.append(case("unsqueeze", [w.js()], err("needs its `axis` argument"), note="axis is required"))

    # broadcast_to
    v = T("i32", [3])
    c.append(case("broadcast_to", [v.js(), ints([2, 3])], out("i32", np.broadcast_to(v.arr, (2, 3))), note="new leading axis"))
    c.append(case("broadcast_to", [s.js(), ints([2, 2])], out("i32", np.broadcast_to(s.arr, (2, 2))), note="rank 0"))
    z = T("bf16", [1, 3])
    c.append(case("broadcast_to", [z.js(), ints([0, 3])], out("bf16", np.broadcast_to(z.arr, (0, 3))), note="to an empty shape"))
    c.append(case("broadcast_to", [z.js()], out("bf16", np.broadcast_to(z.arr, (3, 3))),
                  {"shape": opslib.tensor_from_values("f64", [2], [3, 3])}, note="shape as a tensor"))
    c.append(case("broadcast_to", [w.js(), ints([3, 3])], err("cannot broadcast shape [2, 3] to [3, 3]"), note="names both shapes"))
    c.append(case("broadcast_to", [w.js(), ints([3])], err("cannot broadcast shape [2, 3] to [3]"), note="fewer axes"))
    c.append(case("broadcast_to", [w.js(), ints([2, -3])], err("negative size (-3)"), note="negative size"))


def split_reference(arr, sizes, axis):
    pieces, start = [], 0
    for s in sizes:
        idx = [slice(None)] * arr.ndim
        idx[axis] = slice(start, start + s)
        pieces.append(arr[tuple(idx)])
        start += s
    return pieces


def split_cases(c):
    for dt in ALL:
        x = T(dt, [5, 2])
        want = split_reference(x.arr, [2, 2, 1], 0)
        c.append(case("split", [x.js(), i(2)], {"ts": [out(dt, p) for p in want]}, note=f"{dt} chunks of 2, last shorter"))
    x = T("f32", [3, 7])
    a = x.arr
    for args, kw, sizes, axis, note in (
        ([i(3), i(1)], {}, [3, 3, 1], 1, "chunk along axis 1"),
        ([i(7)], {"axis": i(-1)}, [7], 1, "chunk equal to the axis: one piece"),
        ([i(10), i(1)], {}, [7], 1, "chunk beyond the axis: one piece"),
        ([ints([1, 0, 6]), i(1)], {}, [1, 0, 6], 1, "section sizes, one empty"),
        ([ints([3])], {}, [3], 0, "one section"),
        ([opslib.tensor_from_values("f64", [2], [2, 5])], {"axis": i(1)}, [2, 5], 1, "sizes as a tensor"),
        ([opslib.tensor_from_values("i32", [], [2])], {}, [2, 1], 0, "a rank-0 tensor is a chunk size"),
    ):
        want = split_reference(a, sizes, axis)
        c.append(case("split", [x.js()] + args, {"ts": [out("f32", p) for p in want]}, kw, note=note))
    e = T("i8", [0, 2])
    c.append(case("split", [e.js(), i(3)], {"ts": [out("i8", e.arr)]}, note="an empty axis gives one empty piece (torch.split)"))
    c.append(case("split", [x.js(), i(0)], err("the chunk size must be positive, not 0"), note="zero chunk"))
    c.append(case("split", [x.js(), ints([2, 2]), i(1)], err("sizes [2, 2] do not add up to the length 7 of axis 1 (shape [3, 7])"),
                  note="sections must add up"))
    c.append(case("split", [x.js(), ints([4, -1])], err("negative size (-1)"), note="negative section"))
    c.append(case("split", [x.js(), i(1), i(2)], err("axis 2 is out of range"), note="bad axis"))
    c.append(case("split", [T("f64", []).js(), i(1)], err("cannot split a rank-0 tensor"), note="rank 0"))


def norm(idx, n):
    return idx + n if idx < 0 else idx


def gather_reference(arr, axis, idx_vals, idx_shape):
    n = arr.shape[axis]
    res = []
    for pos, v in zip(itertools.product(*[range(d) for d in idx_shape]), idx_vals):
        src = list(pos)
        src[axis] = norm(v, n)
        res.append(arr[tuple(src)])
    return np.array(res, dtype=object).reshape(idx_shape)


def index_tensor(dt, shape, vals):
    return opslib.tensor_from_values(dt, shape, vals)


def gather_cases(c):
    for dt in ALL:
        x = T(dt, [3, 4])
        vals = [3, 0, -1, 1, 2, 2]
        c.append(case("gather", [x.js(), i(1), index_tensor("i32", [3, 2], vals)],
                      out(dt, gather_reference(x.arr, 1, vals, [3, 2])), note=f"{dt} along axis 1, negative index counts from the end"))
        sel = [2, 0, -3, 1]
        c.append(case("index_select", [x.js(), i(0), index_tensor("i32", [4], sel)],
                      out(dt, np.take(x.arr, [norm(v, 3) for v in sel], axis=0)), note=f"{dt} rows, repeated, negative"))
    x = T("f32", [3, 4])
    a = x.arr
    vals = [2, 0, 1, 1, 0, 2, 2, 2]
    c.append(case("gather", [x.js(), i(0), index_tensor("f64", [2, 4], vals)], out("f32", gather_reference(a, 0, vals, [2, 4])),
                  note="along axis 0, index as an integral f64 tensor"))
    small = [1, 3, 0, 0]
    c.append(case("gather", [x.js(), i(-1), index_tensor("i8", [2, 2], small)], out("f32", gather_reference(a, 1, small, [2, 2])),
                  note="index smaller than the input off the axis (torch.gather), i8 index"))
    wide = [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1]
    c.append(case("gather", [x.js(), i(1), index_tensor("f32", [2, 7], wide)], out("f32", gather_reference(a, 1, wide, [2, 7])),
                  note="index longer than the input along the axis, f32 index"))
    c.append(case("gather", [x.js()], out("f32", gather_reference(a, 1, small, [2, 2])),
                  {"axis": i(1), "idx": index_tensor("i32", [2, 2], small)}, note="keywords"))
    y = T("bf16", [2, 3, 2])
    v3 = [2, 1, 0, 0, 1, 2, 2, 2]
    c.append(case("gather", [y.js(), i(1), index_tensor("i32", [2, 2, 2], v3)], out("bf16", gather_reference(y.arr, 1, v3, [2, 2, 2])),
                  note="rank 3, middle axis"))
    c.append(case("gather", [x.js(), i(0), index_tensor("i32", [0, 4], [])], out("f32", np.zeros((0, 4), dtype=object)), note="empty index"))
    bad = index_tensor("i32", [1, 1], [4])
    c.append(case("gather", [x.js(), i(1), bad], err("index 4 is out of range for axis 1 of size 4 (shape [3, 4])"), note="out of range"))
    c.append(case("gather", [x.js(), i(1), index_tensor("i32", [1, 1], [-5])], err("index -5 is out of range"), note="too negative"))
    c.append(case("gather", [x.js(), i(1), index_tensor("f64", [1, 1], [1.5])], err("index 1.5 is not an integer"), note="non-integral"))
    c.append(case("gather", [x.js(), i(1), index_tensor("f64", [1, 1], [float("nan")])], err("index nan is not an integer"), note="NaN index"))
    c.append(case("gather", [x.js(), i(1), index_tensor("bool", [1, 1], [True])], err("must hold integers, not bool"), note="bool index"))
    c.append(case("gather", [x.js(), i(1), index_tensor("i32", [2], [0, 1])],
                  err("an index of shape [2] does not fit a tensor of shape [3, 4]"), note="rank mismatch"))
    c.append(case("gather", [x.js(), i(1), index_tensor("i32", [4, 1], [0, 0, 0, 0])],
                  err("an index of shape [4, 1] does not fit a tensor of shape [3, 4] along axis 1"), note="longer off the axis"))
    c.append(case("gather", [x.js(), i(2), index_tensor("i32", [1, 1], [0])], err("axis 2 is out of range"), note="bad axis"))

    # index_select
    c.append(case("index_select", [x.js(), i(1), index_tensor("f64", [3], [3, -1, 0])],
                  out("f32", np.take(a, [3, 3, 0], axis=1)), note="columns, f64 index"))
    c.append(case("index_select", [x.js(), i(-1), ints([1, 2])], out("f32", np.take(a, [1, 2], axis=1)), note="index as an Arr[Int]"))
    c.append(case("index_select", [x.js(), i(0), index_tensor("i8", [], [2])], out("f32", np.take(a, [2], axis=0)),
                  note="rank-0 index keeps the axis (length 1), as torch"))
    c.append(case("index_select", [x.js(), i(0), index_tensor("i32", [0], [])], out("f32", np.take(a, [], axis=0)), note="empty index"))
    c.append(case("index_select", [y.js(), i(2), index_tensor("i32", [3], [1, 0, 1])], out("bf16", np.take(y.arr, [1, 0, 1], axis=2)),
                  note="rank 3, last axis"))
    c.append(case("index_select", [y.js()], out("bf16", np.take(y.arr, [1], axis=1)), {"axis": i(1), "idx": index_tensor("i32", [1], [1])},
                  note="keywords"))
    c.append(case("index_select", [x.js(), i(0), index_tensor("i32", [1], [3])], err("index 3 is out of range for axis 0 of size 3"), note="out of range"))
    c.append(case("index_select", [x.js(), i(0), index_tensor("f32", [1], [0.5])], err("index 0.5 is not an integer"), note="non-integral"))
    c.append(case("index_select", [x.js(), i(0), index_tensor("i32", [1, 1], [0])], err("the index must have rank 0 or 1"), note="2-D index"))
    c.append(case("index_select", [x.js(), i(0), index_tensor("bool", [1], [False])], err("not bool"), note="bool index"))
    c.append(case("index_select", [T("f64", []).js(), i(0), index_tensor("i32", [1], [0])], err("needs a tensor of rank 1 or more"), note="rank 0"))


def join_cases(c):
    # Every dtype joined with itself, along each axis.
    for dt in ALL:
        p, q = T(dt, [2, 3]), T(dt, [2, 1])
        c.append(case("concat", [{"ts": [p.js(), q.js()]}, i(1)], out(dt, np.concatenate([p.arr, q.arr], 1)), note=f"{dt} along axis 1"))
        c.append(case("stack", [{"ts": [p.js(), p.js()]}], out(dt, np.stack([p.arr, p.arr], 0)), note=f"{dt} along a new axis 0"))
    # Promotion of the pieces.
    pairs = [("bf16", "f16"), ("i32", "bf16"), ("bool", "i8"), ("i8", "f64"), ("f16", "f32"), ("bool", "f16"), ("i32", "f32")]
    for a, b in pairs:
        pa, pb = T(a, [2, 2]), T(b, [1, 2])
        if a == "i32":
            # Integers that a narrow float must round, ties included.
            pa = T(a, [2, 2], [v % 2**32 for v in (16777217, -16777219, 257, 2**31 - 1)])
        if b in FLOATS:
            # Finite values only: NaN and inf would pass through any cast.
            pb = T(b, [1, 2], [opslib.bits_of_value(v, b) for v in (0.1, -3.0)])
        if a in FLOATS:
            pa = T(a, [2, 2], [opslib.bits_of_value(v, a) for v in (1.0 / 3, -0.0, 65504.0, 1e-7)])
        dt = promote(a, b)
        want = np.concatenate([converted(pa, dt), converted(pb, dt)], 0)
        c.append(case("concat", [{"ts": [pa.js(), pb.js()]}], out(dt, want), note=f"{a} with {b} promotes to {dt}, each value rounded once"))
        sa, sb = T(a, [2]), T(b, [2])
        sa.bits = pa.bits[:2]
        sa.arr = np.array(sa.bits, dtype=object)
        sb.bits = pb.bits[:2]
        sb.arr = np.array(sb.bits, dtype=object)
        want = np.stack([converted(sa, dt), converted(sb, dt)], 1)
        c.append(case("stack", [{"ts": [sa.js(), sb.js()]}, i(1)], out(dt, want), note=f"{a} with {b} stacks as {dt}"))
    x, y, z = T("f32", [2, 3, 2]), T("f32", [2, 1, 2]), T("f32", [2, 0, 2])
    for ax in (1, -2):
        want = np.concatenate([x.arr, y.arr, z.arr, x.arr], 1)
        c.append(case("concat", [{"ts": [x.js(), y.js(), z.js(), x.js()]}], out("f32", want), {"axis": i(ax)},
                      note=f"four pieces, one empty, axis {ax} by keyword"))
    c.append(case("concat", [{"ts": [x.js()]}, i(2)], out("f32", x.arr), note="one piece"))
    c.append(case("concat", [{"ts": [x.js(), x.js()]}, i(2)], out("f32", np.concatenate([x.arr, x.arr], 2)), note="last axis"))
    for ax in (0, 1, 2, 3, -1, -4):
        want = np.stack([x.arr, x.arr, x.arr], ax)
        c.append(case("stack", [{"ts": [x.js(), x.js(), x.js()]}, i(ax)], out("f32", want), note=f"stack axis {ax}"))
    s1, s2 = T("i32", []), T("i32", [])
    c.append(case("stack", [{"ts": [s1.js(), s2.js()]}], out("i32", np.stack([s1.arr, s2.arr])), note="rank-0 pieces make a vector"))
    # Errors.
    c.append(case("concat", [{"ts": [x.js(), y.js()]}], err("shapes [2, 3, 2] and [2, 1, 2] do not agree off axis 0"), note="names both shapes"))
    c.append(case("concat", [{"ts": [x.js(), T("f32", [2, 3]).js()]}, i(1)], err("shapes [2, 3, 2] and [2, 3] do not agree off axis 1"),
                  note="rank mismatch"))
    c.append(case("concat", [{"ts": [s1.js(), s2.js()]}], err("cannot concatenate rank-0 tensors"), note="rank 0"))
    c.append(case("concat", [ints([])], err("needs at least one tensor"), note="empty Arr"))
    c.append(case("concat", [{"ts": [x.js()]}, i(3)], err("axis 3 is out of range"), note="bad axis"))
    c.append(case("concat", [x.js()], err("must be an Arr[Tensor]"), note="a tensor is not an Arr[Tensor]"))
    c.append(case("stack", [{"ts": [x.js(), y.js()]}], err("all tensors must have one shape, not [2, 3, 2] and [2, 1, 2]"), note="names both shapes"))
    c.append(case("stack", [{"ts": [x.js()]}, i(4)], err("axis 4 is out of range for a tensor of rank 4"), note="bad axis"))
    c.append(case("stack", [ints([])], err("needs at least one tensor"), note="empty Arr"))


def main():
    c = []
    view_cases(c)
    split_cases(c)
    gather_cases(c)
    join_cases(c)
    opslib.write(
        "shape",
        c,
        """Rearrangement operations (reshape transpose permute flip roll squeeze
unsqueeze broadcast_to concat stack split gather index_select), generated by
tools/oracle/ops_shape.py from NumPy rearrangements of storage bits (and the
seed's promotion with exact single-rounding casts); do not edit by hand.""",
    )


if __name__ == "__main__":
    main()
