# Developer shortcuts. CI uses .ci/run, which needs nothing but cargo.

# Build and run the example program.
hello:
    cargo run --release -- run examples/hello.tw

# The whole test suite (the README's command).
test:
    cargo test --release

# Everything CI checks.
ci:
    bash .ci/run

# Interpreter speed against python3 / lua5.4 (see docs/performance.md).
bench:
    cargo build --release
    python3 benches/lang/bench.py

# Interpreter overhead of one small tensor operation (docs/performance.md).
bench-overhead:
    cargo build --release
    python3 benches/overhead/bench.py

# Tensor operations against NumPy/ml_dtypes (needs the oracle venv, see
# tools/oracle/README.md); ratios go to docs/performance.md.
bench-ops:
    cargo build --release
    tools/oracle/.venv/bin/python benches/ops/elementwise.py
    tools/oracle/.venv/bin/python benches/ops/reduce.py
    tools/oracle/.venv/bin/python benches/ops/order.py
    tools/oracle/.venv/bin/python benches/ops/contract.py
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE tools/oracle/.venv/bin/python benches/ops/contract.py

# Training steps per second against PyTorch (needs benches/train/.venv).
bench-train:
    cargo build --release
    benches/train/.venv/bin/python benches/train/torch_mlp.py

# Train the digits MLP in f32, bf16 and f16.
train:
    cargo run --release -- run examples/train_digits.tw

# Regenerate the format_number vectors from Node.
oracle:
    node tools/oracle/format_number.mjs

# Fuzz the release binary for SECONDS (tools/fuzz): generated and mutated
# programs under `run` and `check`; findings go to target/fuzz-findings.
fuzz SECONDS="60" SEED="1":
    cargo build --release -p twill-cli
    cargo run --release -p twill-fuzz --example twill-fuzz -- --seconds {{SECONDS}} --seed {{SEED}}

# Accept changed golden snapshots — then review them with `git diff goldens/`.
accept-goldens:
    INSTA_UPDATE=always cargo test -p twill-cli --test goldens
