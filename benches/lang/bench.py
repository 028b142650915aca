#!/usr/bin/env python3
"""Times twill's evaluator against python3 and lua5.4 on the same programs,
in one run, and prints the ratios.

Seven Benchmarks Game programs and seven micro-benchmarks, each written in
twill, Python and Lua with all code inside functions (`NAME.tw`, `NAME.py`,
`NAME.lua` beside this file). Every repetition runs every program under
every interpreter in turn (round-robin), so a slow spell of the machine
falls on all of them alike. The time is the whole process's CPU time, user
plus system, from getrusage(RUSAGE_CHILDREN) deltas (start-up included for
every interpreter); the table shows the median of REPEAT repetitions. The
outputs of the three languages must be byte-identical on every run, or the
script stops. A benchmark, never a test: nothing here asserts a time.

    cargo build --release && python3 benches/lang/bench.py

Environment: REPEAT (default 5); TWILL=/path/to/twill to time another
build; PYTHON=/path/to/python3 for another Python than the PATH's; SMALL=1 for tiny problem sizes (a quick check that everything runs
and agrees, not a measurement). Without lua5.4 on the PATH the script runs
`apt-get install -y lua5.4` when it is root, and otherwise leaves Lua out.
"""
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "benches", "ops"))
from timing import cpu_model  # noqa: E402

TWILL = os.environ.get("TWILL", os.path.join(ROOT, "target", "release", "twill"))
REPEAT = int(os.environ.get("REPEAT", "5"))
SMALL = os.environ.get("SMALL", "") not in ("", "0")
# ONLY=fasta,knucleotide runs those programs alone (the table then has
# only their rows and no geomean of a group it does not cover in full).
ONLY = [p for p in os.environ.get("ONLY", "").split(",") if p]

# name -> (argument, SMALL argument). Sizes are chosen so that each twill
# run takes about 1-2.5 s on this project's machine. knucleotide's
# argument is the fasta size of its input file (written once per run).
GAMES = {
    "nbody": ("100000", "1000"),
    "spectralnorm": ("400", "50"),
    "fannkuch": ("9", "7"),
    "binarytrees": ("14", "8"),
    "mandelbrot": ("500", "64"),
    "fasta": ("400000", "1000"),
    "knucleotide": ("100000", "1000"),
}
MICRO = ["fib", "loop", "floop", "arr", "struct", "closure", "str"]


def find_lua():
    lua = shutil.which("lua5.4")
    if lua:
        return lua
    if os.geteuid() == 0 and shutil.which("apt-get"):
        print("lua5.4 not found; installing it with apt-get", file=sys.stderr)
        subprocess.run(["apt-get", "install", "-y", "lua5.4"], stdout=subprocess.DEVNULL)
        lua = shutil.which("lua5.4")
        if lua:
            return lua
    print("lua5.4 not found (and not installed): Lua is left out", file=sys.stderr)
    return None


def real_python():
    """$PYTHON, or the python3 on the PATH, as the binary itself: a version
    manager's shim (pyenv's is a shell script) would add its own start-up
    to every Python run."""
    python = os.environ.get("PYTHON") or shutil.which("python3")
    if not python:
        return sys.executable
    res = subprocess.run([python, "-c", "import sys; print(sys.executable)"],
                         stdout=subprocess.PIPE, text=True, check=True)
    return res.stdout.strip() or python


def cpu_time(cmd):
    """Runs cmd; returns (user + system CPU seconds of the child, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        sys.exit(f"FAILED: {' '.join(cmd)} exited {res.returncode}\n{res.stderr.decode(errors='replace')}")
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return used, res.stdout


def first_difference(a, b):
    n = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
    return n, a[max(0, n - 40):n + 40], b[max(0, n - 40):n + 40]


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def version(cmd):
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    text = res.stdout.strip()
    # `lua -v` goes on with a copyright notice after two spaces.
    return text.splitlines()[0].split("  ")[0] if text else "?"


def main():
    if not os.path.exists(TWILL):
        sys.exit(f"no twill at {TWILL}: build first (cargo build --release) or set TWILL")
    python = real_python()
    interps = [("twill", [TWILL, "run"], ".tw"), ("python3", [python], ".py")]
    lua = find_lua()
    if lua:
        interps.append(("lua5.4", [lua], ".lua"))

    with tempfile.TemporaryDirectory() as tmp:
        # k-nucleotide reads the fasta output from a file (twill cannot read
        # stdin); the same file for every interpreter.
        knuc_in = os.path.join(tmp, "knucleotide-input.fa")
        size = GAMES["knucleotide"][1 if SMALL else 0]
        with open(knuc_in, "wb") as f:
            subprocess.run([python, os.path.join(HERE, "fasta.py"), size], stdout=f, check=True)

        programs = []
        for name, sizes in GAMES.items():
            arg = knuc_in if name == "knucleotide" else sizes[1 if SMALL else 0]
            programs.append((name, [arg]))
        programs += [(name, []) for name in MICRO]
        if ONLY:
            unknown = [p for p in ONLY if p not in GAMES and p not in MICRO]
            if unknown:
                sys.exit(f"ONLY names no program: {', '.join(unknown)}")
            programs = [(p, a) for p, a in programs if p in ONLY]

        times = {(p, i): [] for p, _ in programs for i, _, _ in interps}
        for rep in range(REPEAT):
            for prog, args in programs:
                outs = {}
                for name, cmd, ext in interps:
                    t, out = cpu_time(cmd + [os.path.join(HERE, prog + ext)] + args)
                    times[(prog, name)].append(t)
                    outs[name] = out
                for name, out in outs.items():
                    if out != outs["twill"]:
                        at, a, b = first_difference(outs["twill"], out)
                        sys.exit(
                            f"OUTPUTS DIFFER: {prog} under {name} and twill, from byte {at}:\n"
                            f"  twill: {a!r}\n  {name}: {b!r}"
                        )
            print(f"repetition {rep + 1}/{REPEAT} done, outputs identical", file=sys.stderr)

    med = {k: statistics.median(v) for k, v in times.items()}
    peers = [name for name, _, _ in interps[1:]]
    print(f"CPU time (user + system) of the whole process, median of {REPEAT}, on {cpu_model()}")
    print(f"twill: {TWILL}; {python}: {version([python, '--version'])}" + (f"; {version([lua, '-v'])}" if lua else ""))
    print()
    head = "| program | twill |" + "".join(f" {p} | {p}/twill |" for p in peers)
    print(head)
    print("|---|---|" + "---|---|" * len(peers))
    ratios = {p: [] for p in peers}
    micro_ratios = {p: [] for p in peers}
    for prog, _ in programs:
        row = f"| {prog} | {med[(prog, 'twill')]:.3f} s |"
        for p in peers:
            r = med[(prog, p)] / med[(prog, "twill")]
            (ratios if prog in GAMES else micro_ratios)[p].append(r)
            row += f" {med[(prog, p)]:.3f} s | {r:.2f}× |"
        print(row)
    print()
    for p in peers:
        if ONLY:
            continue
        print(f"geomean {p}/twill: {geomean(ratios[p]):.2f}× over the seven games, "
              f"{geomean(micro_ratios[p]):.2f}× over the micro-benchmarks")
    print("ratio = peer time / twill time (above 1: twill is faster)")


if __name__ == "__main__":
    main()
