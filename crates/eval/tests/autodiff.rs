//! The autodiff suite (spec §8), through the public pipeline (parse,
//! check, run):
//!
//! * every differentiable operation of spec §4.1 against central finite
//!   differences computed in twill, in f64;
//! * the gradient-dtype rule for all seven leaf dtypes, integer and bool
//!   roots, and contributions rounded to f32 as they are accumulated;
//! * exact Hessians, and `jacobian`/`jvp`/`vjp` against each other;
//! * the errors a user can cause;
//! * composite models against JAX (`testdata/vectors/grads_jax.jsonl`, made
//!   by `tools/oracle/grads.py`; `cargo test` needs no Python).

// Test code reads fixtures and runs the binary: the core crates' IO rule
// (clippy.toml) is for the interpreter, not its tests.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::path::PathBuf;

mod common;

use common::run;

// ---------------------------------------------------------------------------
// Finite differences

/// Helpers for the finite-difference checks. `check(name, op, x, seed)`
/// compares `grad` of `(op(x) * r).sum()`, with r a fixed random tensor so
/// that every output element counts, against central differences with
/// step H, one element of x at a time; `checkn` does the same for an
/// operation of an Arr of tensors, differentiated with respect to all of
/// them at once. The error is |g − fd| / max(1, |fd|): relative, with an
/// absolute floor of TOL for small derivatives. The truncation error of a
/// central difference is O(H²) and its rounding error about ε·|f|/H, both
/// far below TOL here.
const PRELUDE: &str = r##"let H = 0.000001
let TOL = 0.000001

# The largest |g - fd| / max(1, |fd|) over the elements of x, where fd is
# the central difference of the scalar function f at x.
fn fd_err(f, x: Tensor, g: Tensor) -> F64 {
    let n = x.numel()
    let id = eye(n)
    let gf = g.reshape([n])
    var worst = 0.0
    for i in range(n) {
        let e = id[i].reshape(x.shape) * H
        let fd = (f(x + e).item() - f(x - e).item()) / (2.0 * H)
        worst = maximum(worst, abs(gf[i].item() - fd) / maximum(1.0, abs(fd)))
    }
    worst
}

# The same for the j-th tensor of an Arr argument.
fn fd_err_arr(f, xs, j: Int, g: Tensor) -> F64 {
    let x = xs[j]
    let n = x.numel()
    let id = eye(n)
    let gf = g.reshape([n])
    var worst = 0.0
    for i in range(n) {
        let e = id[i].reshape(x.shape) * H
        var hi = xs
        hi[j] = x + e
        var lo = xs
        lo[j] = x - e
        let fd = (f(hi).item() - f(lo).item()) / (2.0 * H)
        worst = maximum(worst, abs(gf[i].item() - fd) / maximum(1.0, abs(fd)))
    }
    worst
}

# Checks grad of (op(x) * r).sum(), r a fixed random tensor, so that every
# output element counts, against central differences.
fn check(name: Str, op, x: Tensor, seed: Int) {
    let r = randn(op(x).shape, seed=seed)
    let f = fn(x) { (op(x) * r).sum() }
    let g = grad(f, x)
    assert(g.dtype == f64, name + ": gradient dtype " + str(g.dtype))
    assert(g.shape == x.shape, name + ": gradient shape " + str(g.shape))
    let err = fd_err(f, x, g)
    assert(err < TOL, name + ": relative error " + str(err))
}

# The same for an operation of several tensors (op takes an Arr), each
# differentiated at once.
fn checkn(name: Str, op, xs, seed: Int) {
    let r = randn(op(xs).shape, seed=seed)
    let f = fn(xs) { (op(xs) * r).sum() }
    let gs = grad(f, xs)
    assert(gs.len() == xs.len(), name + ": " + str(gs.len()) + " gradients")
    for j in range(xs.len()) {
        assert(gs[j].shape == xs[j].shape, name + ": gradient " + str(j) + " has shape " + str(gs[j].shape))
        let err = fd_err_arr(f, xs, j, gs[j])
        assert(err < TOL, name + ": operand " + str(j) + ": relative error " + str(err))
    }
}

# Away from zero, for log, sqrt, division and friends.
fn pos(shape, seed: Int) -> Tensor { randn(shape, seed=seed).abs() + 0.5 }
"##;

/// Runs `PRELUDE` + `body`, which asserts its own checks.
fn fd(body: &str) {
    let src = format!("{PRELUDE}\n{body}\nprint(\"ok\")\n");
    assert_eq!(run(&src), Ok("ok\n".to_string()));
}

/// The checker itself can fail: a gradient off by 1e-5 relative, or with
/// its sign flipped, is caught, and the exact one passes.
#[test]
fn the_finite_difference_check_detects_a_wrong_gradient() {
    fd(r##"
let x = randn([3, 4], seed=1)
let f = fn(x) { (x.sin() * x).sum() }
let g = grad(f, x)
assert(fd_err(f, x, g) < TOL, "exact")
assert(fd_err(f, x, g * 1.00001) > TOL, "1e-5 off")
assert(fd_err(f, x, -g) > TOL, "sign")
let gs = grad(fn(v) { f(v[0]) * v[1].sum() }, [x, ones([2])])
assert(fd_err_arr(fn(v) { f(v[0]) * v[1].sum() }, [x, ones([2])], 1, gs[1] + 0.00001) > TOL, "arr")
"##);
}

#[test]
fn fd_elementwise_binary_ops_tensor_tensor_and_host_scalars() {
    fd(r##"
let a = randn([3, 4], seed=1)
let b = randn([3, 4], seed=2)
let row = randn([4], seed=3)
let col = pos([3, 1], 4)
let pa = pos([3, 4], 5)
checkn("a + b", fn(v) { v[0] + v[1] }, [a, b], 10)
checkn("a + row", fn(v) { v[0] + v[1] }, [a, row], 11)
checkn("col - a", fn(v) { v[0] - v[1] }, [col, a], 12)
checkn("a * b", fn(v) { v[0] * v[1] }, [a, b], 13)
checkn("a * col", fn(v) { v[0] * v[1] }, [a, col], 14)
checkn("a / pa", fn(v) { v[0] / v[1] }, [a, pa], 15)
checkn("row / col", fn(v) { v[0] / v[1] }, [row, col], 16)
checkn("a % pa", fn(v) { v[0] % v[1] }, [a * 3.0, pa], 17)
checkn("pa ** b", fn(v) { v[0] ** v[1] }, [pa, b], 18)
checkn("col ** row", fn(v) { v[0] ** v[1] }, [col, row], 19)
checkn("a * a", fn(v) { v[0] * v[0] }, [a], 20)
check("x + 2.5", fn(x) { x + 2.5 }, a, 21)
check("2.5 + x", fn(x) { 2.5 + x }, a, 22)
check("x - 2", fn(x) { x - 2 }, a, 23)
check("2.5 - x", fn(x) { 2.5 - x }, a, 24)
check("x * 1.5", fn(x) { x * 1.5 }, a, 25)
check("-3 * x", fn(x) { -3 * x }, a, 26)
check("x / 1.5", fn(x) { x / 1.5 }, a, 27)
check("1.5 / x", fn(x) { 1.5 / x }, pa, 28)
check("x % 0.7", fn(x) { x % 0.7 }, a, 29)
check("5.3 % x", fn(x) { 5.3 % x }, pa, 30)
check("x ** 3", fn(x) { x ** 3 }, a, 31)
check("x ** 2.5", fn(x) { x ** 2.5 }, pa, 32)
check("x ** -1.5", fn(x) { x ** -1.5 }, pa, 33)
check("1.7 ** x", fn(x) { 1.7 ** x }, a, 34)
check("-x", fn(x) { -x }, a, 35)
checkn("maximum", fn(v) { maximum(v[0], v[1]) }, [a, b], 36)
checkn("minimum bcast", fn(v) { minimum(v[0], v[1]) }, [a, row], 37)
check("maximum(x, 0.2)", fn(x) { maximum(x, 0.2) }, a, 38)
check("minimum(0.2, x)", fn(x) { minimum(0.2, x) }, a, 39)
checkn("where", fn(v) { where(a > b, v[0], v[1]) }, [a, b], 40)
checkn("where bcast", fn(v) { where(a > 0.0, v[0], v[1]) }, [row, col], 41)
check("where host", fn(x) { where(a > 0.0, x, 1.5) }, b, 42)
check("where host first", fn(x) { where(a > 0.0, -2.0, x) }, b, 43)
"##);
}

#[test]
fn fd_unary_ops() {
    fd(r##"
let x = randn([3, 4], seed=51)
let p = pos([3, 4], 52)
let small = randn([3, 4], seed=53) * 0.4
check("neg", fn(x) { x.neg() }, x, 60)
check("neg fn", fn(x) { neg(x) }, x, 61)
check("abs", fn(x) { x.abs() }, x, 62)
check("relu", fn(x) { x.relu() }, x, 63)
check("square", fn(x) { x.square() }, x, 64)
check("clip host", fn(x) { x.clip(-0.5, 0.7) }, x, 65)
check("clip fn", fn(x) { clip(x, -1, 1) }, x, 66)
let lo = randn([4], seed=54) - 0.5
let hi = randn([3, 1], seed=55) + 0.5
checkn("clip tensor bounds", fn(v) { v[0].clip(v[1], v[2]) }, [x, lo, hi], 67)
checkn("clip tensor lo, host hi", fn(v) { clip(v[0], v[1], 0.6) }, [x, lo], 68)
check("exp", fn(x) { x.exp() }, x, 69)
check("log", fn(x) { x.log() }, p, 70)
check("log1p", fn(x) { x.log1p() }, p, 71)
check("expm1", fn(x) { x.expm1() }, x, 72)
check("sqrt", fn(x) { x.sqrt() }, p, 73)
check("rsqrt", fn(x) { x.rsqrt() }, p, 74)
check("sin", fn(x) { x.sin() }, x, 75)
check("cos", fn(x) { x.cos() }, x, 76)
check("tan", fn(x) { x.tan() }, small, 77)
check("tanh", fn(x) { x.tanh() }, x, 78)
check("sigmoid", fn(x) { x.sigmoid() }, x, 79)
check("exp fn", fn(x) { exp(x) }, x, 80)
check("chain", fn(x) { (x.sin() * x.exp()).tanh().square() }, x, 81)
# The functions of spec §11.3.
check("reciprocal", fn(x) { x.reciprocal() }, p, 82)
check("exp2", fn(x) { x.exp2() }, x, 83)
check("log2", fn(x) { log2(x) }, p, 84)
check("log10", fn(x) { x.log10() }, p, 85)
check("cbrt", fn(x) { x.cbrt() }, p, 86)
check("cbrt negative", fn(x) { cbrt(-x) }, p, 87)
check("sinh", fn(x) { x.sinh() }, x, 88)
check("cosh", fn(x) { x.cosh() }, x, 89)
check("asin", fn(x) { x.asin() }, small, 90)
check("acos", fn(x) { acos(x) }, small, 91)
check("atan", fn(x) { x.atan() }, x, 92)
check("asinh", fn(x) { x.asinh() }, x, 93)
check("acosh", fn(x) { x.acosh() }, p + 1.0, 94)
check("atanh", fn(x) { x.atanh() }, small, 95)
check("erf", fn(x) { x.erf() }, x, 96)
check("erfc", fn(x) { erfc(x) }, x, 97)
check("lgamma", fn(x) { x.lgamma() }, p, 98)
check("lgamma negative", fn(x) { lgamma(-0.5 - x * 0.2) }, p, 99)
check("digamma", fn(x) { x.digamma() }, p + 0.3, 120)
check("digamma negative", fn(x) { digamma(-0.5 - x * 0.2) }, p, 121)
check("polygamma 1", fn(x) { x.polygamma(1) }, p + 0.3, 122)
check("polygamma 2 negative", fn(x) { polygamma(-0.4 - x * 0.1, 2) }, p, 123)
check("polygamma 5", fn(x) { polygamma(x, n=5) }, p + 1.0, 124)
check("lgamma twice", fn(x) { grad(fn(z) { lgamma(z).sum() }, x) }, p + 0.3, 125)
let y = randn([3, 4], seed=56)
checkn("fmod", fn(v) { fmod(v[0], v[1]) }, [x, p + 0.5], 100)
checkn("copysign", fn(v) { copysign(v[0], v[1]) }, [x, y], 101)
checkn("atan2", fn(v) { atan2(v[0], v[1]) }, [x, y], 102)
checkn("hypot", fn(v) { hypot(v[0], v[1]) }, [x, y], 103)
checkn("logaddexp", fn(v) { logaddexp(v[0], v[1]) }, [x, y], 104)
check("atan2 host x", fn(x) { atan2(x, 2.0) }, x, 105)
check("atan2 host y", fn(x) { atan2(-1, x) }, x, 106)
check("hypot broadcast", fn(x) { hypot(x, x[0]) }, x, 107)
check("logaddexp host", fn(x) { logaddexp(0.5, x) }, x, 108)
"##);
}

/// The operations of spec §11.3 made of other kernels.
#[test]
fn fd_derived_operations() {
    fd(r##"
let x = randn([3, 4], seed=301)
let m = arange(12).reshape([3, 4]) % 5 == 0
check("flatten", fn(x) { x.flatten() }, x, 310)
check("diff", fn(x) { diff(x) }, x, 311)
check("diff n=2 axis 0", fn(x) { x.diff(n=2, axis=0) }, x, 312)
check("tril", fn(x) { x.tril(k=1) }, x, 313)
check("triu", fn(x) { triu(x, -1) }, x, 314)
check("diag of a matrix", fn(x) { x.diag(k=1) }, x, 315)
check("diag of a vector", fn(x) { diag(x[0], -1) }, x, 316)
check("trace", fn(x) { x[:, :3].trace() }, x, 317)
checkn("outer", fn(v) { outer(v[0], v[1]) }, [x[0], x[1, :3]], 318)
checkn("dot", fn(v) { dot(v[0], v[1]) }, [x[0], x[1]], 319)
check("nansum", fn(x) { nansum(where(m, nan, x), axis=1) }, x, 320)
check("nanmean", fn(x) { nanmean(where(m, nan, x), axis=0) }, x, 321)
check("nanmax", fn(x) { nanmax(where(m, nan, x), axis=1) }, x, 322)
check("nanmin", fn(x) { nanmin(where(m, nan, x)) }, x, 323)
check("norm", fn(x) { norm(x) }, x, 324)
check("norm axis", fn(x) { norm(x, axis=1, keepdim=true) }, x, 325)
check("norm 1", fn(x) { norm(x, ord=1, axis=0) }, x, 326)
check("norm inf", fn(x) { norm(x, ord=inf) }, x, 327)
check("norm fro", fn(x) { norm(x, ord="fro") }, x, 328)
check("quantile", fn(x) { x.quantile(0.3, axis=1) }, x, 329)
check("quantile of a q tensor", fn(x) { quantile(x, tensor([0.2, 0.5, 0.9]), keepdim=true) }, x, 330)
check("quantile over axes", fn(x) { x.quantile(0.75, axis=[0, 1]) }, x, 331)
"##);
}

/// Spec §11.4's differentiable functions, batched, against finite
/// differences (JAX checks them too, in `composite_gradients_match_jax`);
/// the eigh/svd/qr checks use losses that do not depend on the signs the
/// decompositions choose for their vectors.
#[test]
fn fd_linear_algebra() {
    fd(r##"
let a = randn([2, 3, 3], seed=401) + eye(3) * 3.0
let b = randn([2, 3, 2], seed=402)
let t = randn([2, 4, 2], seed=403)
let sym = fn(m) { m + m.transpose(-1, -2) }
checkn("solve", fn(v) { solve(v[0], v[1]) }, [a, b], 410)
check("inv", fn(a) { inv(a) }, a, 411)
check("det", fn(a) { det(a) }, a, 412)
check("slogdet", fn(a) { slogdet(a).1 }, a, 413)
check("cholesky", fn(a) { cholesky(a @ a.transpose(-1, -2) + eye(3)) }, a, 414)
check("qr's r squared", fn(t) { qr(t).1.square() }, t, 415)
check("eigh's values", fn(a) { eigh(sym(a)).0 }, a, 416)
check("eigh's vectors squared", fn(a) { eigh(sym(a)).1.square() }, a, 417)
check("svd's values", fn(t) { svd(t).1 }, t, 418)
check("svd's u squared", fn(t) { svd(t).0.square() }, t, 419)
checkn("lstsq", fn(v) { lstsq(v[0][0], v[1][0]) }, [t, randn([2, 4, 2], seed=404)], 420)
check("pinv", fn(t) { pinv(t) }, t, 421)
"##);
}

#[test]
fn fd_reductions_scans_normalisers_and_ordering() {
    fd(r##"
let x = randn([2, 3, 4], seed=201)
let p = pos([2, 3, 4], 202)
# A zero element, and elsewhere values of size about 1, for prod.
let z = where(arange(24).reshape([2, 3, 4]) == 5.0, 0.0, p)
var s = 300
for name in ["sum", "mean", "prod", "max", "min", "median", "var", "std", "logsumexp"] {
    let red = fn(x, axis, keep: Bool) {
        if name == "sum" { x.sum(axis=axis, keepdim=keep) }
        else if name == "mean" { x.mean(axis=axis, keepdim=keep) }
        else if name == "prod" { x.prod(axis=axis, keepdim=keep) }
        else if name == "max" { x.max(axis=axis, keepdim=keep) }
        else if name == "min" { x.min(axis=axis, keepdim=keep) }
        else if name == "median" { x.median(axis=axis, keepdim=keep) }
        else if name == "std" { x.std(axis=axis, keepdim=keep) }
        else if name == "var" { x.var(axis=axis, keepdim=keep) }
        else { x.logsumexp(axis=axis, keepdim=keep) }
    }
    let input = if name == "prod" { z } else { x }
    check(name + "()", fn(x) { red(x, [0, 1, 2], false) }, input, s)
    check(name + "(axis=1)", fn(x) { red(x, 1, false) }, input, s + 1)
    check(name + "(axis=-1)", fn(x) { red(x, -1, false) }, input, s + 2)
    check(name + "(axis=[0, 2])", fn(x) { red(x, [0, 2], false) }, input, s + 3)
    check(name + "(axis=[2, 0], keepdim)", fn(x) { red(x, [2, 0], true) }, input, s + 4)
    check(name + "(axis=1, keepdim)", fn(x) { red(x, 1, true) }, input, s + 5)
    s += 10
}
check("sum axis Arr[Int]", fn(x) { x.sum(axis=arr(range(2))) }, x, 400)
check("sum no axis", fn(x) { x.sum() }, x, 401)
check("mean no axis", fn(x) { mean(x) }, x, 402)
check("prod no axis", fn(x) { x.prod() }, z, 403)
check("prod two zeros", fn(x) { x.prod(axis=1) }, where(arange(24).reshape([2, 3, 4]) % 5.0 == 1.0, 0.0, p), 404)
check("max no axis", fn(x) { x.max() }, x, 405)
check("min no axis", fn(x) { x.min() }, x, 406)
check("median no axis", fn(x) { x.median() }, x, 407)
check("median odd", fn(x) { x.median(axis=1) }, x, 408)
check("std no axis", fn(x) { x.std() }, x, 410)
check("logsumexp no axis", fn(x) { x.logsumexp() }, x, 411)
check("std ddof=1", fn(x) { x.std(axis=[0, 2], ddof=1, keepdim=true) }, x, 413)
check("std ddof=2", fn(x) { std(x, axis=-1, ddof=2) }, x, 415)
check("var ddof=1", fn(x) { x.var(axis=[0, 2], ddof=1, keepdim=true) }, x, 417)
check("var function form", fn(x) { var(x, axis=1, ddof=1) }, x, 418)
check("cumsum 0", fn(x) { x.cumsum(0) }, x, 420)
check("cumsum -1", fn(x) { x.cumsum(-1) }, x, 421)
check("cumsum 1", fn(x) { cumsum(x, 1) }, x, 422)
check("cumprod -1", fn(x) { x.cumprod(-1) }, p, 423)
check("cumprod 1", fn(x) { x.cumprod(1) }, x, 424)
check("cumprod with zeros", fn(x) { x.cumprod(-1) }, z, 425)
check("cumprod with zeros axis 1", fn(x) { x.cumprod(1) }, z, 426)
check("cumprod with zeros axis 0", fn(x) { x.cumprod(0) }, z, 427)
let k = arange(24).reshape([2, 3, 4])
let z2 = where((k == 5.0) | (k == 6.0), 0.0, p)
check("cumprod with two zeros in a lane", fn(x) { x.cumprod(-1) }, z2, 428)
check("softmax", fn(x) { x.softmax() }, x, 430)
check("softmax 1", fn(x) { x.softmax(1) }, x, 431)
check("softmax axis=0", fn(x) { softmax(x, axis=0) }, x, 432)
check("log_softmax", fn(x) { x.log_softmax() }, x, 433)
check("log_softmax 0", fn(x) { x.log_softmax(0) }, x, 434)
check("sort", fn(x) { x.sort() }, x, 440)
check("sort axis 1", fn(x) { x.sort(axis=1) }, x, 441)
check("sort desc", fn(x) { x.sort(descending=true) }, x, 442)
check("sort 0 desc", fn(x) { sort(x, 0, true) }, x, 443)
check("topk", fn(x) { x.topk(2) }, x, 444)
check("topk axis 1", fn(x) { x.topk(2, axis=1) }, x, 445)
check("topk 1-D", fn(x) { x.topk(3) }, randn([7], seed=203), 446)
"##);
}

#[test]
fn fd_rearrangement_and_indexing() {
    fd(r##"
let x = randn([2, 3, 4], seed=501)
let m = randn([3, 4], seed=502)
check("reshape", fn(x) { x.reshape([4, 6]) }, x, 510)
check("reshape fn", fn(x) { reshape(x, [24]) }, x, 511)
check("transpose", fn(x) { x.transpose(0, 2) }, x, 512)
check("transpose neg", fn(x) { transpose(x, -1, 1) }, x, 513)
check("permute", fn(x) { x.permute([2, 0, 1]) }, x, 514)
check("flip", fn(x) { x.flip(1) }, x, 515)
check("flip all", fn(x) { x.flip() }, x, 516)
check("roll", fn(x) { x.roll(1, 2) }, x, 517)
check("roll shifts and axes as lists", fn(x) { x.roll([1, 3], [1, 2]) }, x, 560)
check("roll flattened", fn(x) { x.roll(5) }, x, 561)
check("roll neg", fn(x) { roll(x, -1, 1) }, x, 518)
check("squeeze", fn(x) { x.squeeze() }, randn([3, 1, 4, 1], seed=503), 519)
check("squeeze axis", fn(x) { x.squeeze(1) }, randn([3, 1, 4, 1], seed=504), 520)
check("unsqueeze", fn(x) { x.unsqueeze(1) }, m, 521)
check("unsqueeze -1", fn(x) { unsqueeze(x, -1) }, m, 522)
check("broadcast_to", fn(x) { x.broadcast_to([2, 3, 4]) }, m, 523)
check("broadcast_to ones", fn(x) { x.broadcast_to([2, 3, 4]) }, randn([3, 1], seed=505), 524)
let y = randn([1, 4], seed=506)
let w = randn([3, 4], seed=507)
checkn("concat", fn(v) { concat([v[0], v[1], v[0]]) }, [m, y], 525)
checkn("concat axis 1", fn(v) { concat([v[0], v[1]], axis=1) }, [m, randn([3, 2], seed=510)], 526)
checkn("stack", fn(v) { stack([v[0], v[1]]) }, [m, w], 527)
checkn("stack axis -1", fn(v) { stack([v[1], v[0], v[1]], axis=-1) }, [m, w], 528)
check("concat with a constant", fn(x) { concat([x, w], axis=0) }, m, 529)
check("split first", fn(x) { x.split([1, 3], axis=1)[0] }, m, 530)
check("split last", fn(x) { split(x, [2, 1])[1] }, m, 531)
check("split both", fn(x) { let p = x.split([1, 2], axis=0); p[0] * p[1] }, m, 532)
let gi = tensor([[2, 0, 1, 1], [0, 0, 3, 2]], i32)
check("gather", fn(x) { x.gather(1, gi) }, randn([2, 5], seed=508), 533)
check("gather f64 idx axis 0", fn(x) { gather(x, 0, tensor([[1, 0, 1], [0, 0, 1]])) }, randn([2, 3], seed=509), 534)
check("index_select", fn(x) { x.index_select(2, tensor([3, 0, 3, 1], i32)) }, x, 535)
check("index_select 0", fn(x) { index_select(x, 0, tensor([1, 1, 0])) }, x, 536)
check("x[i]", fn(x) { x[1] }, x, 540)
check("x[-1, 2]", fn(x) { x[-1, 2] }, x, 541)
check("x[i, j, k]", fn(x) { x[1, 2, 3] }, x, 542)
check("x[a:b]", fn(x) { x[1:3] }, m, 543)
check("x[::-1]", fn(x) { x[::-1] }, m, 544)
check("x[::2]", fn(x) { x[:, ::2] }, m, 545)
check("x[:, 0]", fn(x) { x[:, 0] }, m, 546)
check("x[:, 1:, -1]", fn(x) { x[:, 1:, -1] }, x, 547)
check("x[1:, ::-2]", fn(x) { x[1:, ::-2] }, x, 548)
check("x.T", fn(x) { x.T }, x, 549)
check(".to(f64)", fn(x) { x.to(f64) }, x, 550)
check("x[i] used twice", fn(x) { x[0] * x[1] + x[0] }, m, 551)
# Advanced indexing (spec §11.1) scatters the cotangent back, adding
# repeated indices; assignment (§11.2) gives the overwritten elements
# nothing and the value the cotangent of what it wrote.
check("x[idx] repeated", fn(x) { x[[2, 0, 2, 1]] }, m, 570)
check("x[:, idx, -1]", fn(x) { x[:, tensor([0, 2, 2], i32), -1] }, x, 571)
check("x[idx, :, idx]", fn(x) { x[[1, 0], :, [3, 3]] }, x, 572)
check("x[mask]", fn(x) { x[m > 0.0] }, m, 573)
check("x[None, ..., None]", fn(x) { x[None, ..., 1, None] }, x, 574)
check("x[s] = v", fn(x) { var y = x * 1.0; y[1] = x[0] * x[2]; y }, m, 575)
check("x[idx] = v repeated", fn(x) { var y = x * 2.0; y[[0, 0, 2]] = x[1:] * 3.0; y }, randn([4, 4], seed=576), 576)
check("x[s] += v", fn(x) { var y = x.sin(); y[:, [1, 1, 3]] += x[:, :3] ** 2; y }, m, 577)
check("x[mask] *= v", fn(x) { var y = x * 1.0; y[x > 0.0] *= x[x > 0.0]; y }, m, 578)
check("x[s] -= v broadcast", fn(x) { var y = x * 1.0; y[1:, None] -= x[0]; y }, m, 579)
check("x[s] /= v", fn(x) { var y = x + 3.0; y[0] /= x[1] + 4.0; y }, m, 580)
check("set into a constant", fn(x) { var y = zeros([2, 3, 4]); y[0, 1:] = x[:2]; y }, m, 581)
check("a chain x[i][j] = v", fn(x) { var y = x * 1.0; y[1][2] = x[0, 0] * 5.0; y }, m, 582)
# Through f32 the values change, so a finite difference says little; the
# gradient is the cotangent rounded to f32 on the way back.
let r = randn([3, 4], seed=552)
let g = grad(fn(x) { (x.to(f32).to(f64) * r).sum() }, m)
assert(g.dtype == f64, ".to(f32) round trip dtype")
assert((g == r.to(f32).to(f64)).all().item(), ".to(f32) round trip: " + str(g))
"##);
}

#[test]
fn fd_contractions() {
    fd(r##"
let a = randn([3, 4], seed=601)
let b = randn([4, 5], seed=602)
let v4 = randn([4], seed=603)
let v3 = randn([3], seed=604)
checkn("matmul 2-D", fn(v) { v[0] @ v[1] }, [a, b], 610)
checkn("matmul 1-D @ 2-D", fn(v) { v[0] @ v[1] }, [v4, b], 611)
checkn("matmul 2-D @ 1-D", fn(v) { matmul(v[0], v[1]) }, [a, v4], 612)
checkn("matmul 1-D @ 1-D", fn(v) { v[0] @ v[1] }, [v4, randn([4], seed=605)], 613)
checkn("matmul batched", fn(v) { v[0] @ v[1] }, [randn([2, 3, 4], seed=606), randn([2, 4, 5], seed=607)], 614)
checkn("matmul batch broadcast", fn(v) { v[0] @ v[1] }, [randn([2, 1, 3, 4], seed=608), randn([3, 4, 2], seed=609)], 615)
checkn("matmul batched @ 2-D", fn(v) { v[0] @ v[1] }, [randn([2, 3, 4], seed=616), b], 616)
checkn("matmul 1-D @ batched", fn(v) { v[0] @ v[1] }, [v4, randn([2, 4, 5], seed=617)], 617)
checkn("matmul batched @ 1-D", fn(v) { v[0] @ v[1] }, [randn([2, 3, 4], seed=618), v4], 618)
let x = randn([5, 4], seed=620)
let w = randn([3, 4], seed=621)
let bias = randn([3], seed=622)
checkn("linear", fn(v) { linear(v[0], v[1], v[2]) }, [x, w, bias], 623)
checkn("linear no b", fn(v) { linear(v[0], v[1]) }, [x, w], 624)
checkn("linear batched", fn(v) { linear(v[0], v[1], v[2]) }, [randn([2, 5, 4], seed=625), w, bias], 625)
checkn("linear 1-D x", fn(v) { linear(v[0], v[1], v[2]) }, [v4, w, bias], 626)
checkn("linear 1-D w", fn(v) { linear(v[0], v[1]) }, [x, v4], 627)
checkn("einsum ij,jk->ik", fn(v) { einsum("ij,jk->ik", v[0], v[1]) }, [a, b], 630)
checkn("einsum ij,jk implicit", fn(v) { einsum("ij,jk", v[0], v[1]) }, [a, b], 631)
checkn("einsum ij,jk->i (k alone)", fn(v) { einsum("ij,jk->i", v[0], v[1]) }, [a, b], 632)
checkn("einsum bij,bjk->bik", fn(v) { einsum("bij,bjk->bik", v[0], v[1]) }, [randn([2, 3, 4], seed=633), randn([2, 4, 5], seed=634)], 633)
checkn("einsum i,i->", fn(v) { einsum("i,i->", v[0], v[1]) }, [v4, randn([4], seed=635)], 635)
checkn("einsum i,j->ij", fn(v) { einsum("i,j->ij", v[0], v[1]) }, [v3, v4], 636)
check("einsum ij->ji", fn(x) { einsum("ij->ji", x) }, a, 637)
check("einsum ij->", fn(x) { einsum("ij->", x) }, a, 638)
checkn("einsum ij,jk,kl->il", fn(v) { einsum("ij,jk,kl->il", v[0], v[1], v[2]) }, [a, b, randn([5, 2], seed=639)], 639)
let sq = randn([3, 3], seed=642)
check("einsum ii-> (trace)", fn(x) { einsum("ii->", x) }, sq, 642)
check("einsum ii->i (diagonal)", fn(x) { einsum("ii->i", x) }, sq, 643)
check("einsum ii (implicit trace)", fn(x) { einsum("ii", x) }, sq, 644)
checkn("einsum iij,jk->ik", fn(v) { einsum("iij,jk->ik", v[0], v[1]) }, [randn([3, 3, 4], seed=645), randn([4, 2], seed=646)], 645)
checkn("einsum ...ij,...jk->...ik", fn(v) { einsum("...ij,...jk->...ik", v[0], v[1]) }, [randn([2, 3, 4], seed=647), randn([2, 4, 5], seed=648)], 647)
checkn("einsum ...ij,jk (implicit, broadcast rank)", fn(v) { einsum("...ij,jk", v[0], v[1]) }, [randn([2, 3, 4], seed=649), randn([4, 2], seed=650)], 649)
check("einsum i...->... ", fn(x) { einsum("i...->...", x) }, randn([3, 2, 2], seed=651), 651)
checkn("einsum ik,jk (implicit, j before i)", fn(v) { einsum("ik,jk", v[0], v[1]) }, [randn([3, 4], seed=640), randn([2, 4], seed=641)], 640)
let img = randn([2, 2, 5, 5], seed=650)
let ker = randn([3, 2, 3, 3], seed=651)
checkn("conv2d", fn(v) { conv2d(v[0], v[1]) }, [img, ker], 652)
checkn("conv2d padding 1", fn(v) { conv2d(v[0], v[1], padding=1) }, [img, ker], 653)
checkn("conv2d stride 2", fn(v) { conv2d(v[0], v[1], stride=2) }, [img, ker], 654)
checkn("conv2d stride 2 padding 1", fn(v) { conv2d(v[0], v[1], stride=2, padding=1) }, [img, ker], 655)
checkn("conv2d CHW", fn(v) { conv2d(v[0], v[1], padding=1) }, [randn([2, 4, 5], seed=656), ker], 656)
checkn("conv2d stride and padding pairs", fn(v) { conv2d(v[0], v[1], stride=[2, 1], padding=[0, 1]) }, [randn([1, 2, 5, 5], seed=659), randn([3, 2, 3, 2], seed=660)], 658)
checkn("conv2d CHW stride 2", fn(v) { v[0].conv2d(v[1], stride=2) }, [randn([2, 6, 5], seed=657), randn([1, 2, 2, 3], seed=658)], 657)
"##);
}

/// Where an operation has no derivative the rules follow PyTorch (see
/// `rules.rs`): relu′(0) = abs′(0) = 0, ties of maximum/minimum and of
/// max/min/median share the gradient evenly, clip passes it on its closed
/// interval, prod is exact with zeros, a**b at a == 0 and b >= 0 has no
/// gradient for b, a row of −inf has no logsumexp gradient.
#[test]
fn conventions_at_kinks_and_zeros() {
    let src = r##"
print(grad(fn(x) { x.relu().sum() + x.abs().sum() }, tensor([0.0, -1.0, 2.0])))
print(grad(fn(x) { x.max() }, tensor([1.0, 3.0, 3.0])))
print(grad(fn(x) { x.min(axis=1).sum() }, tensor([[2.0, 2.0, 5.0], [1.0, 4.0, 1.0]])))
print(grad(fn(x) { x.median() }, tensor([3.0, 1.0, 2.0, 2.0])))
print(grad(fn(v) { maximum(v[0], v[1]).sum() }, [tensor([1.0, 2.0, 3.0]), tensor([1.0, 0.0, 4.0])]))
print(grad(fn(x) { x.clip(0.0, 1.0).sum() }, tensor([0.0, 1.0, 2.0, -1.0, 0.5])))
print(grad(fn(x) { x.prod() }, tensor([2.0, 0.0, 3.0, 4.0])), grad(fn(x) { x.prod() }, tensor([2.0, 0.0, 3.0, 0.0])))
print(grad(fn(x) { (x ** 0.0).sum() + (0.0 ** x).sum() }, tensor([0.0, 2.0])))
print(grad(fn(x) { x.logsumexp() }, tensor([-inf, 0.0, 0.0])))
"##;
    let want = "\
[0, -1, 2]
[0, 0.5, 0.5]
[[0.5, 0.5, 0],
 [0.5, 0, 0.5]]
[0, 0, 0.5, 0.5]
[[0.5, 1, 0], [0.5, 0, 1]]
[1, 1, 0, 0, 1]
[0, 24, 0, 0] [0, 0, 0, 0]
[0, 0]
[0, 0.5, 0.5]
";
    assert_eq!(run(src), Ok(want.to_string()));
}

// ---------------------------------------------------------------------------
// Gradient dtypes (spec §8)

/// Float leaves get f32 gradients (f64 for f64) with the right values;
/// integer and bool leaves get f32 zeros of their shape; an integer or
/// bool root is an `Err`.
#[test]
fn gradient_dtypes_for_all_seven_leaf_dtypes() {
    let src = r##"
let base = tensor([[1.5, -2.25, 0.1], [3.0, 0.7, -0.3]])
for dt in [bf16, f16, f32, f64] {
    let x = base.to(dt)
    let gdt = if dt == f64 { f64 } else { f32 }
    let g = grad(fn(x) { (x * x).sum() }, x)
    print(dt, g.dtype, g.shape, (g == x.to(gdt) * 2).all().item())
    # The rule uses the rounded output, widened.
    let g = grad(fn(x) { x.exp().sum() }, x)
    print(dt, g.dtype, (g == x.exp().to(gdt)).all().item())
    # An f64 root: the gradient still has the leaf's gradient dtype.
    let g = grad(fn(x) { (x.to(f64) * base).sum() }, x)
    print(dt, g.dtype, (g == base.to(gdt)).all().item())
    let tp = tape()
    let w = tp.watch(x)
    print(dt, backward(tp, (w * 3).sum(), 1.0))
}
for dt in [bool, i8, i32] {
    let x = tensor([[1, 0, 1], [0, 1, 1]], dt)
    let g = grad(fn(x) { (x * 1.5).sum() }, x)
    print(dt, g)
    let gs = grad(fn(v) { (v[0].to(f32) * v[1]).sum() }, [x, base])
    print(dt, gs[0], gs[1])
    let tp = tape()
    let w = tp.watch(x)
    print(dt, backward(tp, w.sum(), 1.0))
    print(dt, backward(tp, (w * 2.5).sum(), 1.0))
}
let tp = tape()
let w = tp.watch(base.to(f32))
print(backward(tp, w > 0.0, ones([2, 3])))
print(backward(tp, (w * 4.0).to(i32), ones([2, 3], i32)))
print(backward(tp, (w * 4.0).to(i8).sum(), 1.0))
"##;
    let zeros = "[[0, 0, 0],\n [0, 0, 0]] f32";
    let mut want = String::new();
    for dt in ["bf16", "f16", "f32", "f64"] {
        let g = if dt == "f64" { "f64" } else { "f32" };
        let suffix = if dt == "f64" { "" } else { " f32" };
        want += &format!("{dt} {g} [2, 3] true\n{dt} {g} true\n{dt} {g} true\n");
        want += &format!("{dt} Ok([[[3, 3, 3],\n [3, 3, 3]]{suffix}])\n");
    }
    for dt in ["bool", "i8", "i32"] {
        want += &format!("{dt} {zeros}\n");
        want += &format!("{dt} {zeros} [[1, 0, 1],\n [0, 1, 1]]\n");
        want += &format!(
            "{dt} Err(\"backward: the root is a tensor of dtype i32; only a float root has a gradient\")\n"
        );
        want += &format!("{dt} Ok([{zeros}])\n");
    }
    want += "Err(\"backward: the root is a tensor of dtype bool; only a float root has a gradient\")\n";
    want += "Err(\"backward: the root is a tensor of dtype i32; only a float root has a gradient\")\n";
    want += "Err(\"backward: the root is a tensor of dtype i32; only a float root has a gradient\")\n";
    assert_eq!(run(src), Ok(want));
}

/// The functional forms give a runtime error for an integer root.
#[test]
fn an_integer_root_is_an_error_in_the_functional_forms() {
    for src in [
        "print(grad(fn(x) { (x * 2).sum() }, tensor([1, 2], i32)))",
        "print(grad(fn(x) { x.to(i8).sum() }, tensor([1.0, 2.0])))",
        "print(value_and_grad(fn(x) { (x > 1.0).any() }, tensor([1.0, 2.0])))",
    ] {
        let e = run(src).unwrap_err();
        assert!(e.contains("only a float root has a gradient"), "{src}: {e}");
    }
}

/// Contributions are rounded to the cotangent's dtype as they are added:
/// a bf16 leaf's gradient accumulates in f32.
#[test]
fn contributions_accumulate_in_the_gradient_dtype() {
    let src = r##"
# 1000 uses of a bf16 value: the forward sum stalls at 256 in bf16, the
# gradient (f32) counts every use.
let x = tensor([1.0], bf16)
let f = fn(x) {
    var acc = x
    for k in range(999) { acc = acc + x }
    acc.sum()
}
print(f(x), grad(f, x))
# Contributions f32(0.1) added in f32, each sum rounded: the f32 running
# sum, not the exact 1000 · f32(0.1).
let y = tensor([0.1], f32)
let h = fn(x) {
    var acc = x * y
    for k in range(999) { acc = acc + x * y }
    acc.sum()
}
let g = grad(h, x)
var s = zeros([1], f32)
for k in range(1000) { s = s + y }
print(g, (g == s).all().item(), g.to(f64).item() == 1000.0 * y.to(f64).item())
# An f64 leaf: contributions and sums in f64, where this sum is exact.
let g64 = grad(h, tensor([1.0]))
print(g64.dtype, g64.item() == 1000.0 * y.to(f64).item())
# A host scalar is weak: bf16 * 0.1 multiplies by bf16(0.1), and that is
# the derivative (widened to f32), not f32(0.1).
let gw = grad(fn(x) { (x * 0.1).sum() }, tensor([1.0, 2.0], bf16))
print(gw, (gw == tensor([0.1, 0.1], bf16).to(f32)).all().item())
let gp = grad(fn(x) { (1.7 ** x).sum() }, tensor([1.0, 2.0], f16))
print((gp == (tensor([1.7], f16) ** tensor([1.0, 2.0], f16)).to(f32) * tensor([1.7], f16).to(f32).log()).all().item())
"##;
    assert_eq!(
        run(src),
        Ok("256 bf16 [1000] f32\n[99.99905] f32 true false\nf64 true\n[0.100097656, 0.100097656] f32 true\ntrue\n"
            .to_string())
    );
}

// ---------------------------------------------------------------------------
// Hessians, Jacobians, jvp and vjp

/// Hessians are exact (autodiff of the gradient, not a divided
/// difference); `jacobian` is shaped out.shape + in.shape, and `jvp` and
/// `vjp` agree with it.
#[test]
fn hessian_jacobian_jvp_vjp() {
    let src = r##"
print(hessian(fn(x) { (x ** 3).sum() }, tensor([1.0, 2.0])))
let A = tensor([[1.5, -2.0, 0.25], [3.0, 0.5, -1.0], [0.75, 2.0, 4.0]])
let x = tensor([0.3, -1.2, 2.0])
# A quadratic form: A + Aᵀ exactly.
let h = hessian(fn(x) { (x * (A @ x)).sum() }, x)
print(h, (h == A + A.T).all().item())
print((hessian(fn(x) { x @ A @ x }, x) == A + A.T).all().item())
# sum(exp(x)): diag(exp(x)) bit for bit.
let he = hessian(fn(x) { x.exp().sum() }, x)
print((he == eye(3) * x.exp()).all().item())
# A rank-2 input: shape in.shape + in.shape, 6x on the diagonal.
let m = randn([2, 3], seed=7)
let hm = hessian(fn(m) { (m * m * m).sum() }, m)
let diag = einsum("ijij->ij", hm)
print(hm.shape, ((diag - 6.0 * m).abs().max().item()) < 0.000000000000001,
      (hm.abs().sum() - diag.abs().sum()).item() == 0.0)
# A mixed function: symmetric, and the finite differences of the
# gradient agree.
let fmix = fn(x) { (x.sin() * x.roll(1, 0)).sum() + x.softmax().square().sum() }
let hmix = hessian(fmix, x)
let HH = 0.000001
var worst = 0.0
for i in range(3) {
    let e = eye(3)[i] * HH
    let col = (grad(fmix, x + e) - grad(fmix, x - e)) / (2.0 * HH)
    worst = maximum(worst, (col - hmix[:, i]).abs().max().item())
}
print((hmix == hmix.T).all().item(), worst < 0.000001)
# jacobian: out.shape + in.shape; element [i, k] is the gradient of g(x)[i, k].
let g = fn(x) { (A @ x).tanh().reshape([3, 1]) * tensor([1.0, 2.0]) }
let J = jacobian(g, x)
var jworst = 0.0
for i in range(3) {
    for k in range(2) {
        let row = grad(fn(x) { g(x)[i, k] }, x)
        jworst = maximum(jworst, (row - J[i, k]).abs().max().item())
    }
}
print(J.shape, jworst, (jacobian(fn(x) { A @ x }, x) == A).all().item())
print(jacobian(fn(x) { x * 2.0 }, tensor([[1.0, 2.0]])).shape, jacobian(fn(x) { x.sum() }, x))
# jvp = J v and vjp = ctᵀ J.
let v = tensor([0.5, -1.0, 2.0])
let jv = jvp(g, x, v)
print(jv.shape, (jv - J @ v).abs().max().item() < 0.000000000000001)
let ct = randn([3, 2], seed=8)
let vj = vjp(g, x, ct)
print(vj.shape, (vj - einsum("ik,ikj->j", ct, J)).abs().max().item() < 0.000000000000001)
print((jvp(fn(x) { A @ x }, x, v) == A @ v).all().item(), (vjp(fn(x) { A @ x }, x, v) == v @ A).all().item())
let jvs = jvp(fn(p) { p[0] * p[1] }, [x, v], [v, x])
print((jvs == v * v + x * x).all().item())
# value_and_grad: (value, gradient).
print(value_and_grad(fn(x) { (x ** 3).sum() }, tensor([1.0, 2.0])))
let vg = value_and_grad(fn(p) { (p[0] * p[1]).sum() }, [x, v])
print(vg.0, vg.1[0], vg.1[1])
"##;
    let want = "\
[[6, 0],
 [0, 12]]
[[3, 1, 1],
 [1, 1, 1],
 [1, 1, 8]] true
true
true
[2, 3, 2, 3] true true
true true
[3, 2, 3] 0 true
[1, 2, 1, 2] [1, 1, 1]
[3, 2] true
[3] true
true true
true
(9, [3, 12])
5.35 [0.5, -1, 2] [0.3, -1.2, 2]
";
    assert_eq!(run(src), Ok(want.to_string()));
}

// ---------------------------------------------------------------------------
// Errors

/// The errors a user can cause: clear messages, never a panic.
#[test]
fn autodiff_errors() {
    let cases = [
        (
            "print(grad(fn(x) { x * 2.0 }, tensor([1.0, 2.0])))",
            "`grad` needs a function that returns a one-element tensor, but it returned shape [2]",
        ),
        (
            "print(grad(fn(x) { 3.0 }, tensor([1.0, 2.0])))",
            "`grad` needs a function that returns a tensor, but it returned a `F64`",
        ),
        (
            "print(hessian(fn(x) { x * x }, tensor([1.0, 2.0])))",
            "`hessian` needs a function that returns a one-element tensor, but it returned shape [2]",
        ),
        (
            "print(grad(fn(x) { x.sum() }, 3.0))",
            "`grad` differentiates with respect to a tensor or an Arr of tensors, not a `F64`",
        ),
        (
            "print(grad(fn(v) { v[0].sum() }, [tensor([1.0]), 2]))",
            "only a tensor can be watched, not `Int`",
        ),
        (
            "let tp = tape()\nprint(tp.watch(3.0))",
            "only a tensor can be watched, not `F64`",
        ),
        (
            "let tp = tape()\nprint(tp.watch(\"w\"))",
            "only a tensor can be watched, not `Str`",
        ),
        (
            "let tp = tape()\nlet w = tp.watch(tensor([1.0]))\nprint(tp.watch(w))",
            "already watched by this tape",
        ),
        (
            "print(jvp(fn(x) { x * x }, tensor([1.0, 2.0]), tensor([1.0])))",
            "`jvp`: the tangent has shape [1] but x has shape [2]",
        ),
        (
            "print(vjp(fn(x) { x * x }, tensor([1.0, 2.0]), tensor([1.0])))",
            "the seed has shape [1] but the root has shape [2]",
        ),
    ];
    for (src, msg) in cases {
        match run(src) {
            Err(e) => assert!(e.contains(msg), "{src}:\n{e}\nshould contain\n{msg}"),
            Ok(out) => panic!("{src}: no error, printed {out}"),
        }
    }
    // backward reports as a value.
    let src = r##"
let tp = tape()
let w = tp.watch(tensor([1.0, 2.0]))
print(backward(tp, w * 2.0, ones([3])))
print(backward(tp, w * 2.0, ones([2], i32)))
print(backward(tp, "root", 1.0))
print(backward(tp, w * 2.0, ones([2])))
"##;
    assert_eq!(
        run(src),
        Ok(
            "Err(\"backward: the seed has shape [3] but the root has shape [2]\")
Err(\"backward: the seed is a i32 tensor; it must be a float tensor\")
Err(\"backward: the root must be a tensor, not `Str`\")
Ok([[2, 2]])
"
            .to_string()
        )
    );
}

// ---------------------------------------------------------------------------
// Composite models against JAX

/// The twill program of each case of `grads_jax.jsonl`: the same model as
/// `tools/oracle/grads.py`, on the case's inputs (bound to their names
/// before it runs), printing each output with `dump`.
fn jax_model(name: &str) -> &'static str {
    match name {
        "mlp" => {
            r##"
let loss = fn(p) {
    let h = linear(p[6], p[0], p[1]).relu()
    let h = linear(h, p[2], p[3]).tanh()
    let out = linear(h, p[4], p[5])
    ((out - y) ** 2).mean()
}
let vg = value_and_grad(loss, [w1, b1, w2, b2, w3, b3, x])
dump("loss", vg.0)
let names = ["dw1", "db1", "dw2", "db2", "dw3", "db3", "dx"]
for i in range(7) { dump(names[i], vg.1[i]) }
"##
        }
        "special_functions" => {
            r##"
let loss = fn(p) {
    let h = p[1] @ p[0]
    let a = h.asinh() * h.erf() + h.cosh().cbrt()
    let b = h.sinh().atan() + (1.0 + h.exp2()).log2() + (2.0 + h.erfc()).log10()
    let c = (h.tanh() * 0.5).asin() + (h.tanh() * 0.5).acos() * 0.25
    let d = (h.tanh() * 0.9).atanh() + (1.5 + h * h).acosh() + (2.0 + h * h).reciprocal()
    (a + b + c + d).sum()
}
let vg = value_and_grad(loss, [w, x])
dump("loss", vg.0)
dump("dw", vg.1[0])
dump("dx", vg.1[1])
"##
        }
        "derived_operations" => {
            r##"
let loss = fn(p) {
    let h = p[1] @ p[0]
    let a = norm(h, axis=1).sum() + norm(h, ord=1) + dot(h[0], h[1]) + outer(h[2], h[3]).sum()
    let b = diff(h, axis=0).square().sum() + h.tril().sum() * 0.5 + h.triu(1).square().sum() + h[:4].trace()
    let c = nanmean(h, axis=0).sum() + nansum(h * h) + nanmax(h, axis=1).sum() + h.diag().sum()
    let d = quantile(h, tensor([0.1, 0.5, 0.8]), axis=0).square().sum() + quantile(h, 0.3)
    a + b + c + d
}
let vg = value_and_grad(loss, [w, x])
dump("loss", vg.0)
dump("dw", vg.1[0])
dump("dx", vg.1[1])
"##
        }
        "binary_functions" => {
            r##"
let loss = fn(p) {
    let h = p[1] @ p[0]
    let a = lgamma(1.5 + h * h) + atan2(h, 1.0 + h * h) + hypot(h, 0.5)
    let b = logaddexp(h, -h) + copysign(h, h - 0.1) + fmod(h, 0.7)
    (a + b).sum()
}
let vg = value_and_grad(loss, [w, x])
dump("loss", vg.0)
dump("dw", vg.1[0])
dump("dx", vg.1[1])
"##
        }
        "gamma_functions" => {
            r##"
let loss = fn(p) {
    let h = p[1] @ p[0]
    let a = digamma(1.5 + h * h) + 0.1 * polygamma(0.5 + h * h, 1) + 0.01 * polygamma(2.0 + h * h, n=3)
    let g = grad(fn(z) { lgamma(1.5 + z * z).sum() }, h)
    a.sum() + (g * g).sum()
}
let vg = value_and_grad(loss, [w, x])
dump("loss", vg.0)
dump("dw", vg.1[0])
dump("dx", vg.1[1])
"##
        }
        "linear_algebra" => {
            r##"
let eye3 = eye(3)
let loss = fn(p) {
    let a = p[0]
    let t = p[1]
    let b = p[2]
    let y = p[3]
    let x = solve(a, b) + inv(a) @ b
    let (s, ld) = slogdet(a)
    let l1 = det(a).sum() + ld.sum() + (x * x).sum()
    let c = cholesky(a @ a.transpose(-1, -2) + eye3)
    let (q, r) = qr(t)
    let (w, v) = eigh(a + a.transpose(-1, -2))
    let (u, sv, vh) = svd(t)
    let qq = q @ q.transpose(-1, -2)
    let l2 = (c * c * 0.5).sum() + (r * r * [0.0, 1.0]).sum() + (qq[:, 0, 1] * qq[:, 0, 1]).sum()
    let l3 = (w * [0.0, 1.0, 2.0]).sum() + (v * v)[:, :, 0].sum() + (sv * [1.0, 3.0]).sum() + (u * u)[:, :, 1].sum()
    let z = lstsq(t, y)
    let pt = pinv(t)
    let l4 = (z * z).sum()
    let l5 = (pt * pt).sum() + (vh * vh)[:, 0, :].sum()
    l1 + l2 + l3 + l4 + l5
}
let vg = value_and_grad(loss, [a, t, b, y])
dump("loss", vg.0)
dump("da", vg.1[0])
dump("dt", vg.1[1])
dump("db", vg.1[2])
dump("dy", vg.1[3])
"##
        }
        "scatter" => {
            r##"
let loss = fn(p) {
    let w = p[0]
    let x = p[1]
    var h = zeros([6, 3])
    h[[0, 2, 2, 5, 1]] += x[[1, 3, 3, 0, 5]] @ w
    h[:, 1] = h[:, 1] * 2.0 + x[:, 0]
    h[h > 0.5] *= 3.0
    (h.tanh() * c).sum() + x[..., None, 2].sum()
}
let vg = value_and_grad(loss, [w, x])
dump("loss", vg.0)
dump("dw", vg.1[0])
dump("dx", vg.1[1])
"##
        }
        "softmax_ce" => {
            r##"
let onehot = eye(4).index_select(0, labels)
let loss = fn(p) { -(onehot * (p[2] @ p[0] + p[1]).log_softmax()).sum(axis=1).mean() }
let vg = value_and_grad(loss, [w, b, x])
dump("loss", vg.0)
dump("dw", vg.1[0])
dump("db", vg.1[1])
dump("dx", vg.1[2])
"##
        }
        "convnet" => {
            r##"
let loss = fn(p) {
    let h = conv2d(p[4], p[0], padding=1).relu()
    let h = conv2d(h, p[1], stride=2, padding=1).relu()
    linear(h.mean(axis=[2, 3]), p[2], p[3]).logsumexp(axis=1).mean()
}
let vg = value_and_grad(loss, [k1, k2, w, b, x])
dump("loss", vg.0)
let names = ["dk1", "dk2", "dw", "db", "dx"]
for i in range(5) { dump(names[i], vg.1[i]) }
"##
        }
        "hessian_poly" => {
            r##"
dump("h", hessian(fn(x) { (x.sin() * x ** 2).sum() + x.logsumexp() + x @ a @ x }, x))
"##
        }
        "hessian_net" => {
            r##"
dump("h", hessian(fn(x) { ((w @ x).tanh().softmax() * c).sum() }, x))
"##
        }
        "jvp_vjp" => {
            r##"
let g = fn(x) { (a @ x).tanh() * x[:3].exp() + (x[1:] ** 2).log1p() }
dump("jv", jvp(g, x, v))
dump("vj", vjp(g, x, ct))
dump("j", jacobian(g, x))
"##
        }
        other => panic!("grads_jax.jsonl has a case `{other}` that this test does not know"),
    }
}

fn jax_tensor(j: &serde_json::Value) -> (String, Vec<usize>, Vec<f64>) {
    let name = j["name"].as_str().expect("name").to_string();
    let shape = j["shape"]
        .as_array()
        .expect("shape")
        .iter()
        .map(|d| d.as_u64().expect("dim") as usize)
        .collect();
    let data = j["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|v| v.as_f64().expect("an f64"))
        .collect();
    (name, shape, data)
}

/// Gradients, Hessians, jvp, vjp and a Jacobian of composite f64 models
/// match JAX to a relative 1e-10 per element: |twill − jax| ≤ 1e-10 ·
/// |jax|, except that an element whose JAX value is below 1e-6 of its
/// tensor's largest magnitude (a sum that cancels, where the order of
/// accumulation decides the last bits) is held to 1e-10 of that largest
/// magnitude instead.
#[test]
fn composite_gradients_match_jax() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/vectors/grads_jax.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut cases = 0;
    let mut failures = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let case: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let name = case["name"].as_str().expect("a case name");
        let mut src = String::from(
            "fn dump(name: Str, t: Tensor) {\n    let f = t.reshape([t.numel()])\n    \
             for i in range(t.numel()) { print(name, f[i].item()) }\n}\n",
        );
        for input in case["inputs"].as_array().expect("inputs") {
            let (n, shape, data) = jax_tensor(input);
            let items: Vec<String> = data.iter().map(|v| format!("{v:?}")).collect();
            let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            src += &format!(
                "let {n} = tensor([{}]).reshape([{}])\n",
                items.join(", "),
                dims.join(", ")
            );
        }
        src += jax_model(name);
        let out = run(&src).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut got: HashMap<String, Vec<f64>> = HashMap::new();
        for l in out.lines() {
            let (k, v) = l
                .split_once(' ')
                .unwrap_or_else(|| panic!("{name}: odd output line {l:?}"));
            let v: f64 = v.parse().unwrap_or_else(|e| panic!("{name}: {l:?}: {e}"));
            got.entry(k.to_string()).or_default().push(v);
        }
        let outputs = case["outputs"].as_array().expect("outputs");
        assert_eq!(got.len(), outputs.len(), "{name}: printed {:?}", got.keys());
        for output in outputs {
            let (n, _, want) = jax_tensor(output);
            let have = got.get(&n).unwrap_or_else(|| panic!("{name}: no output `{n}`"));
            assert_eq!(have.len(), want.len(), "{name}.{n}: element count");
            let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            for (i, (h, w)) in have.iter().zip(&want).enumerate() {
                let err = (h - w).abs() / w.abs().max(1e-6 * scale);
                // Written so that a NaN fails.
                if err.is_nan() || err > 1e-10 {
                    failures.push(format!(
                        "{name}.{n}[{i}]: twill {h:?}, JAX {w:?} (relative {err:e})"
                    ));
                }
            }
        }
        cases += 1;
    }
    assert!(cases >= 6, "only {cases} cases in {}", path.display());
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
