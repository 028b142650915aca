#!/usr/bin/env python3
"""Prints the module dependency graph of one Rust crate and its cycles.

Usage: tools/modgraph.py CRATE_SRC_DIR [--edges] [--include-tests]

Every `.rs` file under the directory is a module (`lib.rs`/`main.rs` the
root, `a.rs` and `a/mod.rs` the module `a`, `a/b.rs` the module `a::b`).
Module `m` depends on module `n` when code in `m` names a path into `n`:
`crate::n::...`, `super::...`, `self::...`, a child module declared with
`mod n;`, in `use` trees (braces included) or inline in expressions and
types. A path that names an item re-exported with `pub use` resolves to
the module the item really lives in, and `crate::some_macro` to the module
whose `#[macro_export] macro_rules!` defines it, so the root's re-exports do
not make every module depend on the root.

The crate root is the façade: its `mod` declarations and `pub use`
re-exports are how it publishes the crate, not dependencies, so the root
has no outgoing edges. `#[cfg(test)]` items (unit-test modules) are skipped
unless `--include-tests` is given: a test may reach for any layer above
the code it tests without making the code depend on it.

Exits 0 when the graph is acyclic, 1 when there is a cycle (each strongly
connected component with more than one module is printed), 2 on bad usage.
The parser is a small tokenizer, not rustc: it understands comments,
strings (raw ones too), char literals and lifetimes, which is all that is
needed to find paths reliably in this workspace.
"""

from __future__ import annotations

import os
import re
import sys
from collections import defaultdict

TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<line_comment>//[^\n]*)
  | (?P<block_comment>/\*)
  | (?P<raw_string>b?r\#*")
  | (?P<string>b?")
  | (?P<char>b?'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'\n])')
  | (?P<lifetime>'[A-Za-z_][A-Za-z0-9_]*)
  | (?P<ident>\$?[A-Za-z_][A-Za-z0-9_]*)
  | (?P<path_sep>::)
  | (?P<punct>.)
    """,
    re.VERBOSE | re.DOTALL,
)


def tokenize(text: str) -> list[str]:
    """Identifiers, `::` and single punctuation characters; comments,
    strings and literals are dropped."""
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        m = TOKEN.match(text, i)
        if m is None:  # pragma: no cover - the last alternative matches anything
            i += 1
            continue
        kind = m.lastgroup
        if kind == "block_comment":
            depth, j = 1, m.end()
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            i = j
            continue
        if kind == "raw_string":
            hashes = m.group().count("#")
            end = text.find('"' + "#" * hashes, m.end())
            i = n if end < 0 else end + 1 + hashes
            continue
        if kind == "string":
            j = m.end()
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if kind in ("ident", "path_sep", "punct"):
            out.append(m.group())
        i = m.end()
    return out


def strip_test_items(tokens: list[str]) -> list[str]:
    """Removes every item carrying `#[cfg(test)]` (up to its matching `}`
    or `;`)."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        if tokens[i : i + 7] == ["#", "[", "cfg", "(", "test", ")", "]"]:
            j = i + 7
            depth = 0
            while j < len(tokens):
                t = tokens[j]
                if t == "{":
                    depth += 1
                elif t == "}":
                    depth -= 1
                    if depth == 0:
                        j += 1
                        break
                elif t == ";" and depth == 0:
                    j += 1
                    break
                j += 1
            i = j
            continue
        out.append(tokens[i])
        i += 1
    return out


def module_of(rel: str) -> tuple[str, ...]:
    parts = rel[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def parse_use_tree(tokens: list[str], i: int, prefix: list[str], out: list[list[str]]) -> int:
    """Parses one use tree starting at `tokens[i]`, appending every full
    path to `out`; returns the index after the tree."""
    path = list(prefix)
    while i < len(tokens):
        t = tokens[i]
        if t == "{":
            i += 1
            while i < len(tokens) and tokens[i] != "}":
                i = parse_use_tree(tokens, i, path, out)
                if i < len(tokens) and tokens[i] == ",":
                    i += 1
            return i + 1
        if t == "*":
            out.append(path)
            return i + 1
        if t == "::":
            i += 1
            continue
        if re.match(r"\$?[A-Za-z_]", t):
            if t == "as":
                i += 2  # the alias
                break
            if t == "self" and path:
                i += 1
                break
            path.append(t)
            i += 1
            if i < len(tokens) and tokens[i] == "::":
                continue
            break
        break
    out.append(path)
    return i


class Crate:
    def __init__(self, src: str, include_tests: bool):
        self.src = src
        self.tokens: dict[tuple[str, ...], list[str]] = {}
        self.files: dict[tuple[str, ...], str] = {}
        for dirpath, _dirs, names in os.walk(src):
            for name in sorted(names):
                if not name.endswith(".rs"):
                    continue
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, src)
                mod = module_of(rel)
                # A binary crate's main.rs and a lib.rs side by side: keep
                # the library as the root, the binary is another crate.
                if mod == () and name == "main.rs" and os.path.exists(os.path.join(src, "lib.rs")):
                    continue
                with open(full, encoding="utf-8") as f:
                    toks = tokenize(f.read())
                self.tokens[mod] = toks if include_tests else strip_test_items(toks)
                self.files[mod] = rel
        # A file whose `mod` declaration was stripped with its parent's
        # `#[cfg(test)]` items (`#[cfg(test)] mod tests;`) is test code too.
        while True:
            orphans = [m for m in self.tokens if m and not self._declared(m)]
            if not orphans:
                break
            for m in orphans:
                del self.tokens[m]
                del self.files[m]
        self.modules = set(self.tokens)
        self.reexports = {m: self._reexports(m) for m in self.modules}
        self.macros = self._macros()

    def _declared(self, mod: tuple[str, ...]) -> bool:
        parent = self.tokens.get(mod[:-1], [])
        return any(parent[i] == "mod" and parent[i + 1] == mod[-1] for i in range(len(parent) - 1))

    def children(self, mod: tuple[str, ...]) -> set[str]:
        return {m[-1] for m in self.modules if len(m) == len(mod) + 1 and m[: len(mod)] == mod}

    def _uses(self, mod: tuple[str, ...], public_only: bool) -> list[list[str]]:
        toks = self.tokens[mod]
        paths: list[list[str]] = []
        for i, t in enumerate(toks):
            if t != "use":
                continue
            if public_only and not (i > 0 and (toks[i - 1] == "pub" or toks[i - 1] == ")")):
                continue
            parse_use_tree(toks, i + 1, [], paths)
        return paths

    def _reexports(self, mod: tuple[str, ...]) -> dict[str, list[str]]:
        table: dict[str, list[str]] = {}
        for path in self._uses(mod, public_only=True):
            if path:
                table[path[-1]] = path
        return table

    def _macros(self) -> dict[str, tuple[str, ...]]:
        found: dict[str, tuple[str, ...]] = {}
        for mod, toks in self.tokens.items():
            for i in range(len(toks) - 3):
                if toks[i] == "macro_export" and "macro_rules" in toks[i + 1 : i + 4]:
                    k = toks.index("macro_rules", i)
                    if k + 2 < len(toks) and toks[k + 1] == "!":
                        found[toks[k + 2]] = mod
        return found

    def resolve(self, mod: tuple[str, ...], path: list[str], depth: int = 0) -> tuple[str, ...] | None:
        """The module a path written in `mod` points into, or None for a
        path outside the crate."""
        if not path:
            return None
        head, rest = path[0], path[1:]
        if head in ("crate", "$crate"):
            base: tuple[str, ...] = ()
        elif head == "self":
            base = mod
        elif head == "super":
            base = mod[:-1]
            while rest and rest[0] == "super":
                base, rest = base[:-1], rest[1:]
        elif head in self.children(mod):
            base, rest = mod + (head,), rest
        else:
            return None
        # Walk down as far as the segments name modules.
        while rest and base + (rest[0],) in self.modules:
            base, rest = base + (rest[0],), rest[1:]
        if rest and depth < 8:
            name = rest[0]
            target = self.reexports.get(base, {}).get(name)
            if target is not None and target[-1] == name:
                inner = self.resolve(base, target, depth + 1)
                if inner is not None:
                    return inner
            if base == () and name in self.macros:
                return self.macros[name]
        return base if base in self.modules else None

    def edges(self) -> dict[tuple[str, ...], set[tuple[str, ...]]]:
        graph: dict[tuple[str, ...], set[tuple[str, ...]]] = {m: set() for m in self.modules}
        for mod, toks in self.tokens.items():
            if mod == ():
                continue  # the façade: see the module docs
            paths = self._uses(mod, public_only=False)
            children = self.children(mod)
            starts = {"crate", "$crate", "super", "self"} | children
            for i, t in enumerate(toks):
                if t not in starts or (i > 0 and toks[i - 1] == "::"):
                    continue
                if i + 1 >= len(toks) or toks[i + 1] != "::":
                    continue
                path = [t]
                j = i + 1
                while j + 1 < len(toks) and toks[j] == "::" and re.match(r"[A-Za-z_]", toks[j + 1]):
                    path.append(toks[j + 1])
                    j += 2
                paths.append(path)
            for path in paths:
                target = self.resolve(mod, path)
                if target is not None and target != mod and target != ():
                    graph[mod].add(target)
        return graph


def cycles(graph: dict[tuple[str, ...], set[tuple[str, ...]]]) -> list[list[tuple[str, ...]]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index: dict[tuple[str, ...], int] = {}
    low: dict[tuple[str, ...], int] = {}
    stack: list[tuple[str, ...]] = []
    on_stack: set[tuple[str, ...]] = set()
    found: list[list[tuple[str, ...]]] = []
    counter = [0]

    def visit(v: tuple[str, ...]) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def name(mod: tuple[str, ...]) -> str:
    return "::".join(("crate",) + mod)


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    flags = {a for a in argv if a.startswith("--")}
    if len(args) != 1 or not os.path.isdir(args[0]) or flags - {"--edges", "--include-tests"}:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    crate = Crate(args[0], include_tests="--include-tests" in flags)
    graph = crate.edges()
    if "--edges" in flags:
        for mod in sorted(graph):
            for dep in sorted(graph[mod]):
                print(f"{name(mod)} -> {name(dep)}")
    found = cycles(graph)
    for comp in found:
        members = set(comp)
        print(f"cycle: {', '.join(name(m) for m in comp)}")
        for m in comp:
            for dep in sorted(graph[m] & members):
                print(f"    {name(m)} ({crate.files[m]}) -> {name(dep)}")
    if found:
        return 1
    print(f"{args[0]}: {len(graph)} modules, no cycles")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
