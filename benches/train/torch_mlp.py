#!/usr/bin/env python3
"""Reference training benchmark: the MLP that the twill training example
trains, in PyTorch on the CPU, to measure training steps per second and
the test accuracy twill should match.

    python3 -m venv benches/train/.venv
    benches/train/.venv/bin/pip install -r benches/train/requirements.txt
    benches/train/.venv/bin/python benches/train/torch_mlp.py [--steps 500]

Model and data, fixed so that the twill program can do exactly the same:

* data: examples/data/digits.csv (1797 8x8 images, see its README); every
  fifth row (row index divisible by 5) is a test row, 360 in all, the other
  1437 train; inputs are the pixel counts times 1/16, in f32 (the split of
  examples/train_digits.tw);
* model: 64 -> 128 -> 10, `linear, relu, linear`, PyTorch's default
  initialisation (`torch.manual_seed(seed)`), f32 throughout;
* loss: softmax cross-entropy, mean over the batch;
* optimiser: Adam, lr 1e-3, betas (0.9, 0.999), eps 1e-8, no weight decay;
* batches of 64: each epoch visits the train rows in a fresh random
  permutation (from a seeded generator) and drops the last partial batch,
  so 22 steps per epoch.

Only the training loop is timed (batch gathering, forward, backward and
the Adam update), on `--threads` intra-op threads (2 by default), after a
few warm-up steps on a throwaway copy of the model. Training is repeated
`--repeat` times from the same seed (each run gives the same model) and the
best and median rates are printed: the best is the figure to compare, as
the other benchmarks here do, since a busy machine only ever slows a run
down. A benchmark, never a test: nothing here asserts a time.
"""
import argparse
import os
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(ROOT, "examples", "data", "digits.csv")
BATCH = 64


def load():
    table = np.loadtxt(DATA, delimiter=",", skiprows=1, dtype=np.int64)
    x = torch.from_numpy(table[:, :64].astype(np.float32) / 16.0)
    y = torch.from_numpy(table[:, 64])
    test = np.arange(len(table)) % 5 == 0
    return (x[~test], y[~test]), (x[test], y[test])


def make_model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)
    )


def batches(n, seed):
    """Index tensors of full batches, epoch after epoch, forever."""
    gen = torch.Generator().manual_seed(seed)
    while True:
        perm = torch.randperm(n, generator=gen)
        for k in range(n // BATCH):
            yield perm[k * BATCH : (k + 1) * BATCH]


def train(model, x, y, steps, seed):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8)
    loss = None
    for _, idx in zip(range(steps), batches(len(x), seed)):
        loss = F.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return loss.item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=880)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    (xtr, ytr), (xte, yte) = load()
    train(make_model(args.seed), xtr, ytr, 20, args.seed)  # warm-up

    rates = []
    for _ in range(args.repeat):
        model = make_model(args.seed)
        start = time.perf_counter()  
        last_loss = train(model, xtr, ytr, args.steps, args.seed)
        rates.append(args.steps / (time.perf_counter() - start))
    rates.sort()

    with torch.no_grad():
        acc = (model(xte).argmax(dim=1) == yte).float().mean().item()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {args.steps} steps, batch {BATCH}")
    print(f"steps/s {rates[-1]:.1f} (best of {args.repeat}; median {rates[len(rates) // 2]:.1f})")
    print(f"final batch loss {last_loss:.4f}")
    print(f"test accuracy {acc:.4f} ({round(acc * len(yte))}/{len(yte)})")
    twill = os.path.join(ROOT, "target", "release", "twill")
    if os.path.exists(twill):
        import subprocess

        out = subprocess.run([twill, "run", os.path.join(HERE, "mlp.tw")], capture_output=True, text=True, check=True, cwd=ROOT)
        print(out.stdout, end="")
        tw = max(float(line.split()[1]) for line in out.stdout.splitlines() if line.startswith("steps/s"))
        print(f"ratio twill/torch steps/s: {tw / rates[-1]:.2f}")


if __name__ == "__main__":
    main()
