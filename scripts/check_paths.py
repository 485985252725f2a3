#!/usr/bin/env python3
"""Every path of the source tree that the docs or the code's comments name exists.

Reads README.md, docs/*.md, the READMEs of the tree and every .h/.cc/.sh/.py/CMakeLists.txt, and
finds the names of files under the project's top folders (core/storage/log.h, sim/world/world.cc,
tests/cli/test_run.sh, docs/viewer.md, scripts/bench.sh, ...). Each must be a file or folder of
the tree; a glob (core/controller/*.cc) must match one. A moved or renamed file whose old name
lingers in a doc or a comment is reported with the place that names it.

  scripts/check_paths.py [--root DIR]      exit 1 and one line per stale name
"""
import argparse
import glob
import os
import re
import subprocess
import sys

TOP = ("core", "sim", "viz", "tools", "tests", "bench", "fuzz", "scripts", "docs", "scenarios",
       "cmake")
# A path: a top folder, then segments of word characters, '.', '-', '*', '<', '>' (placeholders
# such as tests/core/<module>/ are not files and are skipped below).
PATH = re.compile(r"(?<![\w/.<-])((?:" + "|".join(TOP) + r")/[\w.*<>{}-]+(?:/[\w.*<>{}-]+)*/?)")


def tracked_files(root):
    try:
        out = subprocess.check_output(["git", "ls-files"], cwd=root, text=True)
        files = out.split()
    except (OSError, subprocess.CalledProcessError):
        files = [os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "**"),
                                                           recursive=True)]
    return [f for f in files if os.path.isfile(os.path.join(root, f))]


def readable(name):
    return (name.endswith((".md", ".h", ".cc", ".sh", ".py", ".cmake")) or
            os.path.basename(name) in ("CMakeLists.txt", "dev", "run"))


def exists(root, path):
    path = path.rstrip("/").rstrip(".")
    if any(c in path for c in "<>{}"):
        return True  # a placeholder (tests/core/<module>/), not a file
    if "*" in path:
        return bool(glob.glob(os.path.join(root, path), recursive=True))
    full = os.path.join(root, path)
    # An executable built from one source file (bench/log_bench, fuzz/batch_decode_fuzzer).
    return os.path.exists(full) or os.path.exists(full + ".cc")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    stale = []
    checked = 0
    for name in tracked_files(root):
        if not readable(name):
            continue
        text = open(os.path.join(root, name), encoding="utf-8", errors="replace").read()
        for number, line in enumerate(text.split("\n"), 1):
            for match in PATH.finditer(line):
                path = match.group(1)
                checked += 1
                if not exists(root, path):
                    stale.append(f"{name}:{number}: names {path}, which is not in the tree")
    for line in stale:
        print(line, file=sys.stderr)
    if stale:
        return 1
    print(f"{checked} paths named in docs and comments, all in the tree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
