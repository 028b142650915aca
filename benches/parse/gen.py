"""Writes the inputs of docs/performance.md ("Parsing") into a directory:
hostile nesting and error floods, and 12 MB sources of several shapes.

    python3 benches/parse/gen.py DIR
    /usr/bin/time -v target/release/twill check DIR/NAME.tw
"""
import glob
import os
import sys

N = 12_000_000


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    p = lambda name: os.path.join(out, name)

    write(p("brace200k.tw"), "print(" + "{" * 200_000)
    write(p("if1m.tw"), "if true { " * 1_000_000)
    write(p("if1m_closed.tw"), "if true { " * 1_000_000 + "}" * 1_000_000)
    write(p("errs.tw"), "{" * 1000 + ")" * 100_000)

    # Many realistic functions, each named apart so the checker accepts them.
    fn = """fn collatz_steps_{i}(n: Int) -> Int {{
    var steps = 0
    var k = n
    while k != 1 {{
        k = if k % 2 == 0 {{ k // 2 }} else {{ 3 * k + 1 }}
        steps += 1
    }}
    steps
}}
let r_{i} = [1.0, 2.5, -3.0].sum() * 2.0 + float(collatz_steps_{i}(27))
"""
    parts, size, i = [], 0, 0
    while size < N:
        s = fn.format(i=i)
        parts.append(s)
        size += len(s)
        i += 1
    write(p("fns12m.tw"), "".join(parts))

    parts, size, i = [], 0, 0
    while size < N:
        s = f"var v{i} = {i} * 3 + 1\nv{i} += 2\nprint(v{i} // 2)\n"
        parts.append(s)
        size += len(s)
        i += 1
    write(p("stmts12m.tw"), "".join(parts))

    write(p("longexpr12m.tw"), "let x = " + "1 + " * (N // 4) + "1\n")
    write(p("strings12m.tw"), ('let s = "' + "a" * 1_000_000 + '"\n') * 12)
    block = "if true { " * 500 + "1" + " }" * 500 + "\n"
    write(p("deep12m.tw"), block * (N // len(block) + 1))
    write(p("list12m.tw"), "let a = [" + "1.5, " * (N // 5) + "2.0]\nprint(a.sum())\n")
    # A warning on every line: the checker's cap on what it shows.
    write(p("warnings12m.tw"), "{ let a = 1 }\n" * (N // 14))

    # Real programs: the goldens' and examples' own (those without
    # imports or structs), repeated to 12 MB, at top level and each
    # wrapped in a function of its own.
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    files = sorted(glob.glob(os.path.join(root, "testdata", "*", "ok", "*.tw")))
    files += sorted(glob.glob(os.path.join(root, "examples", "*.tw")))
    srcs = [t for t in (open(f).read() for f in files) if "import" not in t and "struct" not in t]
    body = "".join(srcs)
    top = (body * (N // len(body) + 1))[:N]
    write(p("golden_top12m.tw"), top.rsplit("\n", 1)[0] + "\n")
    parts, size, i = [], 0, 0
    while size < N:
        t = srcs[i % len(srcs)]
        indented = "\n".join("    " + line for line in t.split("\n"))
        s = f"fn prog_{i}() {{\n{indented}\n}}\n"
        parts.append(s)
        size += len(s)
        i += 1
    write(p("golden_fns12m.tw"), "".join(parts))


if __name__ == "__main__":
    main()
