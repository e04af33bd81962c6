# SPDX-License-Identifier: BSD-3-Clause
"""tests/check_layers.py SRC_DIR: the library's folders call only down.

Reads every src/FOLDER/*.c, finds where each rfx_ / rfx__ function and
constant object is defined, and where the others name it. Every use across
folders must go from a higher layer to a lower one in LAYERS below (the
order docs/ARCHITECTURE.md describes); a use that goes up, or a folder not
in the list, fails the check. Prints the folder graph with the count of
names on each edge, then "N passed, M failed".
"""
import collections
import os
import re
import sys

# Lowest first. Folders on one row are one layer and may not call each other.
LAYERS = [
    ["core"],
    ["features"],
    ["kernels"],
    ["solvers"],
    ["surrogate"],
    ["fit"],
    ["projection"],
    ["model", "io", "auto"],
    ["dist"],  # librfx_dist: the MPI layer over the public API
]

DEF_FN = re.compile(r"^(?:static\s+)?[A-Za-z_][\w \*]*?\b(rfx_\w+)\s*\([^;{]*\)\s*\{", re.M)
DEF_OBJ = re.compile(r"^const\s+\w+\s+(rfx_\w+)\s*=", re.M)
USE = re.compile(r"\b(rfx_\w+)\b")


def main():
    src = sys.argv[1]
    level = {f: i for i, row in enumerate(LAYERS) for f in row}
    files = {}
    for folder in sorted(os.listdir(src)):
        path = os.path.join(src, folder)
        if not os.path.isdir(path):
            continue
        for name in sorted(os.listdir(path)):
            if name.endswith(".c"):
                with open(os.path.join(path, name)) as f:
                    files[(folder, name)] = f.read()
    owner = {}
    for (folder, name), text in files.items():
        for m in list(DEF_FN.finditer(text)) + list(DEF_OBJ.finditer(text)):
            owner.setdefault(m.group(1), folder)
    edges = collections.defaultdict(set)
    for (folder, name), text in files.items():
        for sym in set(USE.findall(text)):
            other = owner.get(sym)
            if other and other != folder:
                edges[(folder, other)].add("%s (%s)" % (sym, name))
    passed = failed = 0
    for folder in sorted({f for f, _ in files}):
        if folder not in level:
            print("FAIL: src/%s is in no layer of tests/check_layers.py" % folder)
            failed += 1
    for (a, b), names in sorted(edges.items()):
        ok = a in level and b in level and level[a] > level[b]
        print("%-11s -> %-11s %3d%s" % (a, b, len(names), "" if ok else "   UP: not allowed"))
        if ok:
            passed += 1
        else:
            failed += 1
            for n in sorted(names):
                print("    " + n)
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
