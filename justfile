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

# Regenerate the format_number vectors from Node.
oracle:
    node tools/oracle/format_number.mjs

# Accept changed golden snapshots — then review them with `git diff goldens/`.
accept-goldens:
    INSTA_UPDATE=always cargo test -p twill-cli --test goldens
