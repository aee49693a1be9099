#!/usr/bin/env python3
"""Lists import circles between the source files of each crate under crates/.

A file's module path follows Rust's rules (src/a/b.rs and src/a/b/mod.rs are `a::b`, lib.rs
and main.rs are the root). An edge A -> B means file A names an item through `crate::`,
`super::` or `self::` that resolves to module B (the longest prefix of the path that is a
module file). `mod` declarations are not edges. Exits 1 and prints every strongly connected
group of two or more files when there is a circle; prints "no import circles" otherwise.

Usage: scripts/import-cycles.py [ROOT]   (ROOT defaults to the repository root)
"""
import os
import re
import sys


def strip_comments_and_strings(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'r#*"(?:.|\n)*?"#*', '""', text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    return text


def module_path(src_dir, path):
    rel = os.path.relpath(path, src_dir)[:-3].split(os.sep)
    if rel[-1] in ("lib", "main") and len(rel) == 1:
        return ()
    if rel[-1] == "mod":
        rel = rel[:-1]
    return tuple(rel)


TOKEN = re.compile(r"::|[{}(),;]|[A-Za-z_][A-Za-z0-9_]*|\*|\S")


def use_trees(tokens, i):
    """Parses a use tree at tokens[i]; returns (paths, next index)."""
    if i < len(tokens) and tokens[i] == "{":
        i += 1
        paths = []
        while i < len(tokens) and tokens[i] != "}":
            sub, i = use_trees(tokens, i)
            paths.extend(sub)
            if i < len(tokens) and tokens[i] == ",":
                i += 1
        return paths, i + 1
    path = []
    while i < len(tokens) and (re.match(r"[A-Za-z_]", tokens[i]) or tokens[i] == "*"):
        path.append(tokens[i])
        i += 1
        if i < len(tokens) and tokens[i] == "::":
            i += 1
            if i < len(tokens) and tokens[i] == "{":
                subs, i = use_trees(tokens, i)
                return [path + s for s in subs] or [path], i
        else:
            break
    return [path], i


def references(text, here):
    tokens = TOKEN.findall(strip_comments_and_strings(text))
    out = []
    depth = 0
    inline = []  # (name, depth at which its body opened) of inline `mod name { .. }` blocks
    for i, t in enumerate(tokens):
        if t == "{":
            depth += 1
            if i >= 2 and tokens[i - 2] == "mod":
                inline.append((tokens[i - 1], depth))
            continue
        if t == "}":
            if inline and inline[-1][1] == depth:
                inline.pop()
            depth -= 1
            continue
        if t not in ("crate", "super", "self"):
            continue
        scope = here + tuple(name for name, _ in inline)
        if i + 1 >= len(tokens) or tokens[i + 1] != "::":
            continue
        if i > 0 and tokens[i - 1] == "::":
            continue  # the middle of a longer path (super::super handled below)
        j = i
        base = ()
        while j < len(tokens):
            if tokens[j] == "crate":
                base = ()
            elif tokens[j] == "super":
                base = (base if j > i else scope)[:-1]
            elif tokens[j] == "self":
                base = scope if j == i else base
            else:
                break
            if j + 1 < len(tokens) and tokens[j + 1] == "::":
                j += 2
            else:
                break
        paths, _ = use_trees(tokens, j)
        for p in paths:
            full = base + tuple(p)
            if len(scope) > len(here) and full[: len(here) + 1] == scope[: len(here) + 1]:
                continue
            out.append(full)
    return out


def crate_graph(src_dir):
    files = {}
    for root, _, names in os.walk(src_dir):
        if os.sep + "bin" in root[len(src_dir):]:
            continue
        for n in names:
            if n.endswith(".rs"):
                p = os.path.join(root, n)
                files[module_path(src_dir, p)] = p
    edges = {m: set() for m in files}
    for m, p in files.items():
        with open(p, encoding="utf-8") as f:
            text = f.read()
        for ref in references(text, m):
            target = None
            for k in range(len(ref), -1, -1):
                if ref[:k] in files:
                    target = ref[:k]
                    break
            if target is not None and target != m:
                edges[m].add(target)
    return files, edges


def sccs(edges):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in edges:
        if v not in index:
            visit(v)
    return [c for c in out if len(c) > 1]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    crates = os.path.join(root, "crates")
    bad = 0
    checked = 0
    for name in sorted(os.listdir(crates)):
        src = os.path.join(crates, name, "src")
        if not os.path.isdir(src):
            continue
        files, edges = crate_graph(src)
        checked += len(files)
        for comp in sccs(edges):
            bad += 1
            show = lambda m: os.path.relpath(files[m], root)
            print(f"circle in {name}: " + ", ".join(sorted(show(m) for m in comp)))
            for m in sorted(comp):
                for w in sorted(edges[m] & set(comp)):
                    print(f"    {show(m)} -> {show(w)}")
    if bad:
        sys.exit(1)
    print(f"no import circles ({checked} files in {len(os.listdir(crates))} crates)")


if __name__ == "__main__":
    main()
