"""Writes testdata/vectors/grads_jax.jsonl: gradients of small composite
models computed by JAX in f64, for crates/eval/tests/autodiff.rs.

    tools/oracle/.venv/bin/python tools/oracle/grads.py

Each line is one case: its name (the Rust test holds the same model as a
twill program under that name), its inputs and JAX's outputs, every tensor
as {"name", "shape", "data"} with the data a row-major list of f64 (JSON
numbers written with Python's repr, so they read back to the same bits).
The models:

* mlp: x[8,5] -> linear 5->6 -> relu -> linear 6->4 -> tanh -> linear 4->3,
  mean squared error against y[8,3]; the loss and its gradient with
  respect to every weight, bias and x.
* softmax_ce: logits = x @ W + b, log_softmax, cross-entropy against
  integer labels through a one-hot; the loss and the gradients of W, b, x.
* convnet: conv2d (padding 1, stride 1) -> relu -> conv2d (padding 1,
  stride 2) -> relu -> mean over H and W -> linear -> logsumexp over the
  classes -> mean; the loss and the gradients of both kernels, W, b and x.
* hessian_*: exact Hessians of two small scalar functions.
* jvp_vjp: J·v and ctᵀ·J of a small vector function, and its Jacobian.
* scatter: indexing and assignment into tensors — a gather, a `+=` with a
  repeated index, a column overwritten, a masked `*=`, `...` with `None`.
* special_functions: asinh erf cbrt cosh atan sinh log2 exp2 log10 erfc
  asin acos atanh acosh reciprocal in one composite model.
* binary_functions: lgamma atan2 hypot logaddexp copysign fmod.
* derived_operations: norm dot outer diff tril triu trace diag nanmean
  nansum nanmax quantile.
* gamma_functions: digamma and polygamma of orders 1 and 3, and the
  gradient of lgamma differentiated again (so digamma's own vjp).

Deterministic: numpy's PCG64 with a fixed seed; JAX runs on the CPU with
x64 enabled.
"""
import json
from pathlib import Path

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

import jax.numpy as jnp  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "testdata" / "vectors" / "grads_jax.jsonl"
RNG = np.random.Generator(np.random.PCG64(0x7477696C6C5F6164))  # "twill_ad"


def randn(*shape, scale=1.0):
    return RNG.standard_normal(shape) * scale


def tensor(name, a):
    a = np.asarray(a, dtype=np.float64)
    return {"name": name, "shape": list(a.shape), "data": [float(v) for v in a.reshape(-1)]}


def case(name, inputs, outputs):
    return {
        "name": name,
        "inputs": [tensor(k, v) for k, v in inputs.items()],
        "outputs": [tensor(k, v) for k, v in outputs.items()],
    }


def linear(x, w, b):
    return x @ w.T + b


def mlp():
    inp = {
        "x": randn(8, 5),
        "w1": randn(6, 5, scale=0.5),
        "b1": randn(6, scale=0.1),
        "w2": randn(4, 6, scale=0.5),
        "b2": randn(4, scale=0.1),
        "w3": randn(3, 4, scale=0.5),
        "b3": randn(3, scale=0.1),
        "y": randn(8, 3),
    }
    names = ["w1", "b1", "w2", "b2", "w3", "b3", "x"]

    def loss(ps):
        p = dict(zip(names, ps))
        h = jax.nn.relu(linear(p["x"], p["w1"], p["b1"]))
        h = jnp.tanh(linear(h, p["w2"], p["b2"]))
        out = linear(h, p["w3"], p["b3"])
        return jnp.mean((out - inp["y"]) ** 2)

    v, g = jax.value_and_grad(loss)([jnp.asarray(inp[n]) for n in names])
    outs = {"loss": v}
    outs.update({"d" + n: gi for n, gi in zip(names, g)})
    return case("mlp", inp, outs)


def softmax_ce():
    inp = {
        "x": randn(10, 6),
        "w": randn(6, 4, scale=0.5),
        "b": randn(4, scale=0.1),
        "labels": RNG.integers(0, 4, size=10).astype(np.float64),
    }
    onehot = jax.nn.one_hot(inp["labels"].astype(np.int32), 4, dtype=jnp.float64)

    def loss(w, b, x):
        lp = jax.nn.log_softmax(x @ w + b, axis=-1)
        return -jnp.mean(jnp.sum(onehot * lp, axis=1))

    v, g = jax.value_and_grad(loss, argnums=(0, 1, 2))(inp["w"], inp["b"], inp["x"])
    return case("softmax_ce", inp, {"loss": v, "dw": g[0], "db": g[1], "dx": g[2]})


def conv2d(x, k, stride, padding):
    return jax.lax.conv_general_dilated(
        x,
        k,
        window_strides=(stride, stride),
        padding=[(padding, padding), (padding, padding)],
        dimension_numbers=("NCHW", "OIHW", "NCHW"),
        precision=jax.lax.Precision.HIGHEST,
    )


def convnet():
    inp = {
        "x": randn(2, 3, 6, 6),
        "k1": randn(4, 3, 3, 3, scale=0.4),
        "k2": randn(5, 4, 3, 3, scale=0.4),
        "w": randn(3, 5, scale=0.5),
        "b": randn(3, scale=0.1),
    }

    def loss(k1, k2, w, b, x):
        h = jax.nn.relu(conv2d(x, k1, 1, 1))
        h = jax.nn.relu(conv2d(h, k2, 2, 1))
        p = jnp.mean(h, axis=(2, 3))
        z = linear(p, w, b)
        return jnp.mean(jax.nn.logsumexp(z, axis=1))

    args = [inp[n] for n in ("k1", "k2", "w", "b", "x")]
    v, g = jax.value_and_grad(loss, argnums=(0, 1, 2, 3, 4))(*args)
    outs = {"loss": v, "dk1": g[0], "dk2": g[1], "dw": g[2], "db": g[3], "dx": g[4]}
    return case("convnet", inp, outs)


def hessian_poly():
    inp = {"x": randn(4), "a": randn(4, 4)}

    def f(x):
        return jnp.sum(jnp.sin(x) * x**2) + jax.nn.logsumexp(x) + x @ inp["a"] @ x

    return case("hessian_poly", inp, {"h": jax.hessian(f)(inp["x"])})


def hessian_net():
    inp = {"x": randn(3), "w": randn(4, 3, scale=0.7), "c": randn(4)}

    def f(x):
        return jnp.sum(jax.nn.softmax(jnp.tanh(inp["w"] @ x)) * inp["c"])

    return case("hessian_net", inp, {"h": jax.hessian(f)(inp["x"])})


def jvp_vjp():
    inp = {"x": randn(4), "a": randn(3, 4), "v": randn(4), "ct": randn(3)}

    def g(x):
        return jnp.tanh(inp["a"] @ x) * jnp.exp(x[:3]) + jnp.log1p(x[1:] ** 2)

    _, jv = jax.jvp(g, (inp["x"],), (inp["v"],))
    _, pull = jax.vjp(g, inp["x"])
    (vj,) = pull(inp["ct"])
    return case("jvp_vjp", inp, {"jv": jv, "vj": vj, "j": jax.jacrev(g)(inp["x"])})


def scatter():
    """Indexing and assignment into tensors (spec §11): gathered rows
    scattered back with a repeated index (`+=` adds both), a column
    overwritten, a masked compound assignment, `...` with `None`."""
    inp = {"x": randn(6, 4), "w": randn(4, 3, scale=0.5), "c": randn(6, 3)}
    rows = jnp.array([0, 2, 2, 5, 1])
    src = jnp.array([1, 3, 3, 0, 5])

    def loss(w, x):
        h = jnp.zeros((6, 3))
        h = h.at[rows].add(x[src] @ w)
        h = h.at[:, 1].set(h[:, 1] * 2.0 + x[:, 0])
        h = jnp.where(h > 0.5, h * 3.0, h)
        return jnp.sum(jnp.tanh(h) * inp["c"]) + jnp.sum(x[..., None, 2])

    v, g = jax.value_and_grad(loss, argnums=(0, 1))(inp["w"], inp["x"])
    return case("scatter", inp, {"loss": v, "dw": g[0], "dx": g[1]})


def special_functions():
    """The elementwise functions of spec §11.3 in one composite model."""
    inp = {"x": randn(5, 3, scale=0.4), "w": randn(3, 4, scale=0.5)}

    def loss(w, x):
        h = x @ w
        a = jnp.arcsinh(h) * jax.scipy.special.erf(h) + jnp.cbrt(jnp.cosh(h))
        b = jnp.arctan(jnp.sinh(h)) + jnp.log2(1.0 + jnp.exp2(h)) + jnp.log10(2.0 + jax.scipy.special.erfc(h))
        c = jnp.arcsin(jnp.tanh(h) * 0.5) + jnp.arccos(jnp.tanh(h) * 0.5) * 0.25
        d = jnp.arctanh(jnp.tanh(h) * 0.9) + jnp.arccosh(1.5 + h * h) + 1.0 / (2.0 + h * h)
        return jnp.sum(a + b + c + d)

    v, g = jax.value_and_grad(loss, argnums=(0, 1))(inp["w"], inp["x"])
    return case("special_functions", inp, {"loss": v, "dw": g[0], "dx": g[1]})


def binary_functions():
    """lgamma and the binary functions of spec §11.3 in one model."""
    inp = {"x": randn(5, 3, scale=0.4), "w": randn(3, 4, scale=0.5)}

    def loss(w, x):
        h = x @ w
        a = jax.scipy.special.gammaln(1.5 + h * h) + jnp.arctan2(h, 1.0 + h * h) + jnp.hypot(h, 0.5)
        b = jnp.logaddexp(h, -h) + jnp.copysign(h, h - 0.1) + jnp.fmod(h, 0.7)
        return jnp.sum(a + b)

    v, g = jax.value_and_grad(loss, argnums=(0, 1))(inp["w"], inp["x"])
    return case("binary_functions", inp, {"loss": v, "dw": g[0], "dx": g[1]})


def derived_operations():
    """norm dot outer diff tril triu trace diag, the nan-reductions and quantile."""
    inp = {"x": randn(5, 3, scale=0.6), "w": randn(3, 4, scale=0.7)}

    def loss(w, x):
        h = x @ w
        a = jnp.sum(jnp.linalg.norm(h, axis=1)) + jnp.sum(jnp.abs(h)) + jnp.dot(h[0], h[1]) + jnp.sum(jnp.outer(h[2], h[3]))
        b = jnp.sum(jnp.diff(h, axis=0) ** 2) + jnp.sum(jnp.tril(h)) * 0.5 + jnp.sum(jnp.triu(h, 1) ** 2) + jnp.trace(h[:4])
        c = jnp.sum(jnp.nanmean(h, axis=0)) + jnp.nansum(h * h) + jnp.sum(jnp.nanmax(h, axis=1)) + jnp.sum(jnp.diag(h))
        d = jnp.sum(jnp.quantile(h, jnp.array([0.1, 0.5, 0.8]), axis=0) ** 2) + jnp.quantile(h, 0.3)
        return a + b + c + d

    v, g = jax.value_and_grad(loss, argnums=(0, 1))(inp["w"], inp["x"])
    return case("derived_operations", inp, {"loss": v, "dw": g[0], "dx": g[1]})


def gamma_functions():
    """digamma and polygamma (whose vjps are polygamma one order up), and a
    gradient of lgamma inside the loss."""
    inp = {"x": randn(5, 3, scale=0.4), "w": randn(3, 4, scale=0.5)}
    S = jax.scipy.special

    def loss(w, x):
        h = x @ w
        a = S.digamma(1.5 + h * h) + 0.1 * S.polygamma(1, 0.5 + h * h) + 0.01 * S.polygamma(3, 2.0 + h * h)
        g = jax.grad(lambda z: jnp.sum(S.gammaln(1.5 + z * z)))(h)
        return jnp.sum(a) + jnp.sum(g * g)

    v, g = jax.value_and_grad(loss, argnums=(0, 1))(inp["w"], inp["x"])
    return case("gamma_functions", inp, {"loss": v, "dw": g[0], "dx": g[1]})


def linear_algebra():
    """Spec §11.4's differentiable functions in one batched model; losses
    of eigh/svd/qr results that do not depend on the signs of vectors."""
    inp = {"a": randn(2, 3, 3) + 3.0 * np.eye(3), "t": randn(2, 4, 2), "b": randn(2, 3, 2), "y": randn(2, 4, 2)}
    L = jnp.linalg

    def loss(a, t, b, y):
        x = L.solve(a, b) + L.inv(a) @ b
        s, ld = L.slogdet(a)
        l1 = L.det(a).sum() + ld.sum() + jnp.sum(x * x)
        c = L.cholesky(a @ jnp.swapaxes(a, -1, -2) + jnp.eye(3))
        q, r = L.qr(t)
        w, v = L.eigh(a + jnp.swapaxes(a, -1, -2))
        u, sv, vh = L.svd(t, full_matrices=False)
        l2 = jnp.sum(c * c * 0.5) + jnp.sum(r * r * jnp.arange(2.0)) + jnp.sum((q @ jnp.swapaxes(q, -1, -2))[..., 0, 1] ** 2)
        l3 = jnp.sum(w * jnp.arange(3.0)) + jnp.sum((v * v)[..., 0]) + jnp.sum(sv * jnp.array([1.0, 3.0])) + jnp.sum((u * u)[..., 1])
        l4 = jnp.sum(jnp.stack([L.lstsq(t[i], y[i])[0] for i in range(2)]) ** 2)
        l5 = jnp.sum(L.pinv(t) ** 2) + jnp.sum((vh * vh)[..., 0, :])
        return l1 + l2 + l3 + l4 + l5

    v, g = jax.value_and_grad(loss, argnums=(0, 1, 2, 3))(inp["a"], inp["t"], inp["b"], inp["y"])
    return case("linear_algebra", inp, {"loss": v, "da": g[0], "dt": g[1], "db": g[2], "dy": g[3]})


def main():
    cases = [mlp(), softmax_ce(), convnet(), hessian_poly(), hessian_net(), jvp_vjp(), scatter(), special_functions(),
             binary_functions(), derived_operations(), linear_algebra(), gamma_functions()]
    with OUT.open("w") as f:
        f.write("# Gradients of composite f64 models by JAX " + jax.__version__ + ", for\n")
        f.write("# crates/eval/tests/autodiff.rs.\n")
        f.write("#\n# Generated by tools/oracle/grads.py; do not edit.\n")
        for c in cases:
            f.write(json.dumps(c, separators=(",", ":")) + "\n")
    print(f"wrote {OUT} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
