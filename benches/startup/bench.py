"""Start-up cost: whole-process CPU time (user + system) of `print(1)` in
twill, CPython and Lua 5.4 (when installed), interleaved, median of 50.

    cargo build --release && python3 benches/startup/bench.py [TWILL]
"""
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile


def cpu_ms(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return 1000 * (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)


def main():
    twill = sys.argv[1] if len(sys.argv) > 1 else "target/release/twill"
    prog = os.path.join(tempfile.mkdtemp(), "print1.tw")
    with open(prog, "w") as f:
        f.write("print(1)\n")
    cmds = {"twill": [twill, "run", prog], "python3": ["python3", "-c", "print(1)"]}
    if shutil.which("lua5.4"):
        cmds["lua5.4"] = ["lua5.4", "-e", "print(1)"]
    times = {k: [] for k in cmds}
    for _ in range(50):
        for k, c in cmds.items():
            times[k].append(cpu_ms(c))
    for k, ts in times.items():
        print(f"{k:8} median {statistics.median(ts):6.2f} ms CPU  (min {min(ts):.2f})")


if __name__ == "__main__":
    main()
