#!/usr/bin/env python3
"""Figures on the code's shape, for notes that compare a change's before and after (python3, stdlib only).

Prints, for the checkout this script lives in (or the one given with --root):
  1. each top-level folder's size in lines (production folders, then tests/ by subfolder);
  2. the include arrows between production folders: "from -> to (number of #include lines)";
  3. the path of tune's options to a runner, three ways:
     - how many files and folders cli/cmd_tune.cpp includes, transitively;
     - the folders of every first-party file on an include path from cli/cmd_tune.cpp to the header that
       declares the runner factory (`make_runner`), in the order a reader meets them;
     - the structs that carry the simulator's options as fields of their own (a field named `seed` and one
       named `noise`): each is a copy tune's options pass through before a runner gets them.
  --long: production functions over 80 lines and production files over 700 lines (brace matching on
  C/C++ sources; good enough for this code base's formatting, not a C++ parser).
"""

import argparse
import collections
import os
import re
import sys

SOURCE_EXT = (".cpp", ".hpp", ".h", ".c")
NOT_PRODUCTION = {"tests", "bench", "fuzz", "build", "docs", "scripts", "cmake", "packaging", ".git", ".ci"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([^"]+)"', re.M)


def source_files(root, folder):
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, folder)):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith(SOURCE_EXT):
                yield os.path.join(dirpath, name)


def line_count(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return sum(1 for _ in f)


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def production_folders(root):
    return sorted(d for d in os.listdir(root)
                  if os.path.isdir(os.path.join(root, d)) and d not in NOT_PRODUCTION and not d.startswith((".", "build-"))
                  and any(True for _ in source_files(root, d)))


def print_sizes(root, folders):
    print("== folder sizes (lines of C/C++ source)")
    total = 0
    for folder in folders:
        files = list(source_files(root, folder))
        lines = sum(line_count(f) for f in files)
        total += lines
        print(f"{folder:14} {lines:7} lines {len(files):4} files")
    print(f"{'production':14} {total:7} lines")
    tests = os.path.join(root, "tests")
    for sub in sorted(os.listdir(tests)):
        if os.path.isdir(os.path.join(tests, sub)):
            files = list(source_files(tests, sub))
            if files:
                print(f"tests/{sub:20} {sum(line_count(f) for f in files):7} lines {len(files):4} files")


def print_arrows(root, folders):
    arrows = collections.Counter()
    for folder in folders:
        for path in source_files(root, folder):
            for target, _ in INCLUDE.findall(read(path)):
                if target != folder and target in folders:
                    arrows[(folder, target)] += 1
    print(f"== include arrows between production folders ({len(arrows)} arrows)")
    for folder in folders:
        out = sorted((t, n) for (f, t), n in arrows.items() if f == folder)
        if out:
            print(f"{folder:14} -> " + ", ".join(f"{t} ({n})" for t, n in out))


def include_graph(root, folders):
    graph = {}
    for folder in folders:
        for path in source_files(root, folder):
            rel = os.path.relpath(path, root)
            graph[rel] = [f"{t}/{p}" for t, p in INCLUDE.findall(read(path)) if t in folders]
    return graph


def print_options_path(root, folders):
    graph = include_graph(root, folders)
    factory = sorted(f for f in graph if f.endswith(".hpp") and re.search(r"\bmake_runner\s*\(", read(
        os.path.join(root, f))) and "std::function" not in read(os.path.join(root, f)).split("make_runner")[0][-80:])
    start = "cli/cmd_tune.cpp"
    reaches = {}

    def reaches_factory(node, seen=()):
        if node in reaches:
            return reaches[node]
        if node in seen:
            return False
        hit = node in factory or any(reaches_factory(n, seen + (node,)) for n in graph.get(node, []))
        reaches[node] = hit
        return hit

    on_path, order = [], []

    def walk(node):
        if node in on_path or not reaches_factory(node):
            return
        on_path.append(node)
        folder = node.split("/")[0]
        if folder not in order:
            order.append(folder)
        for n in graph.get(node, []):
            walk(n)

    print("== tune's options on their way to a runner")
    print(f"runner factory: {', '.join(factory) or 'not found'}")
    if start in graph:
        walk(start)
        print(f"include paths {start} -> factory: {len(on_path)} files in {len(order)} folders: "
              + " -> ".join(order))
        closure, todo = set(), [start]
        while todo:
            node = todo.pop()
            if node not in closure:
                closure.add(node)
                todo.extend(graph.get(node, []))
        reached = sorted({n.split("/")[0] for n in closure})
        print(f"everything {start} includes, transitively: {len(closure) - 1} files in {len(reached)} folders")
    copies = []
    struct = re.compile(r"^\s*struct\s+(\w+)[^;{]*\{", re.M)
    for folder in folders:
        for path in source_files(root, folder):
            text = read(path)
            for m in struct.finditer(text):
                body = text[m.end():text.find("\n};", m.end())]
                if re.search(r"\bseed\b\s*=", body) and re.search(r"\bnoise\b\s*=", body):
                    copies.append(f"{m.group(1)} ({os.path.relpath(path, root)})")
    folders_with_copies = sorted({c.split("(")[1].split("/")[0] for c in copies})
    print(f"structs carrying the simulator's options (seed, noise): {len(copies)} in {len(folders_with_copies)} "
          f"folders: " + "; ".join(copies))


LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|//.*$')
CONTROL = re.compile(r"^\s*(namespace|struct|class|enum|union|if|for|while|switch|do|else|return|try|catch)\b")
# A function's head at namespace or class level (indent 0 or 2): a name, then its parameter list.
HEAD = re.compile(r"^( {0,2})[A-Za-z_~][\w:<>,*&~ ]*\b[\w~]+\s*\(")


def long_functions(path, limit):
    """(first line, length, head) of each function body longer than `limit` lines, the head included.

    Brace matching on the text without its string literals and comments; heads are found at indent 0 (free
    functions) and 2 (members defined in a class body), which is how .clang-format lays this code out."""
    code = [LITERAL.sub('""', line) for line in read(path).split("\n")]
    found, i = [], 0
    while i < len(code):
        m = HEAD.match(code[i])
        if not m or CONTROL.match(code[i]) or code[i].rstrip().endswith(";"):
            i += 1
            continue
        j = i  # the head may span lines: find the body's opening brace
        while j < len(code) and "{" not in code[j] and not code[j].rstrip().endswith(";"):
            j += 1
        if j >= len(code) or "{" not in code[j]:
            i = j + 1
            continue
        depth, k = 0, j
        while k < len(code):
            depth += code[k].count("{") - code[k].count("}")
            if depth <= 0:
                break
            k += 1
        length = k - i + 1
        if length > limit:
            found.append((i + 1, length, code[i].strip()[:70]))
        i = k + 1 if len(m.group(1)) == 0 or length > 1 else i + 1
    return found


def print_long(root, folders):
    print("== production files over 700 lines")
    for folder in folders:
        for path in source_files(root, folder):
            n = line_count(path)
            if n > 700:
                print(f"{os.path.relpath(path, root)}: {n} lines")
    print("== production functions over 80 lines")
    for folder in folders:
        for path in source_files(root, folder):
            for line, length, text in long_functions(path, 80):
                print(f"{os.path.relpath(path, root)}:{line}: {length} lines: {text}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    parser.add_argument("--long", action="store_true", help="list long functions and files instead")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    if not os.path.isdir(os.path.join(root, "tests")):
        print(f"code_figures.py: {root}: expected a checkout with a tests/ folder", file=sys.stderr)
        return 2
    folders = production_folders(root)
    if args.long:
        print_long(root, folders)
        return 0
    print_sizes(root, folders)
    print_arrows(root, folders)
    print_options_path(root, folders)
    return 0


if __name__ == "__main__":
    sys.exit(main())
