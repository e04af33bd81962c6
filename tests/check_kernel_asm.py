# SPDX-License-Identifier: BSD-3-Clause
"""tests/check_kernel_asm.py OBJDUMP OBJECT...: the fused kernels' inner
loops keep their accumulators in registers. Of the objects given, those of
the vector kernels (vmath_generic, vmath_avx2, vmath_avx512) are read.

For each object file of the vector kernels (vmath_generic.c.o,
vmath_avx2.c.o, vmath_avx512.c.o) and each full register block of the
fused kernel (rows_MR_f64 and rows_MR_f32, MR the most rows of a block,
and any clones the compiler made), the innermost loop that holds the fused multiply-adds
(or multiplies and adds) of the k sum must not touch the stack: no load or
store through %rsp or %rbp. A spill there (the accumulators indexed by a
run-time row count, a vector load split through a stack temporary) costs
several times the loop's arithmetic. Prints each loop's size and exits 1 on
a spill, 2 when a kernel or its loop cannot be found.
"""
import re
import subprocess
import sys

ARITH = re.compile(r"\bv?(fmadd231p[sd]|mulp[sd]|addp[sd])\b")
STACK = re.compile(r"\((%rsp|%rbp)")


def functions(objdump, path):
    """{name: [(address, text)]} of the object's disassembly."""
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn", path], check=True,
                         capture_output=True, text=True).stdout
    funcs, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
        if m:
            cur = funcs.setdefault(m.group(1), [])
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(.*)$", line)
        if m and cur is not None:
            cur.append((int(m.group(1), 16), m.group(2)))
    return funcs


def inner_loop(insns):
    """The smallest backward-jump loop with at least 8 vector arithmetic
    instructions and a broadcast: the k loop of a register block."""
    best = None
    for i, (addr, text) in enumerate(insns):
        m = re.match(r"^j\w+\s+([0-9a-f]+)\b", text)
        if not m:
            continue
        target = int(m.group(1), 16)
        if target >= addr:
            continue
        body = [t for a, t in insns if target <= a <= addr]
        if sum(1 for t in body if ARITH.search(t)) < 8:
            continue
        if not any("broadcast" in t or "unpcklp" in t or "shufp" in t or "movddup" in t
                   for t in body):
            continue
        if best is None or len(body) < len(best):
            best = body
    return best


def main():
    objdump = sys.argv[1]
    args = [o for a in sys.argv[2:] for o in a.split(";")]  # a CMake list arrives whole
    objects = [o for o in args
               if re.search(r"vmath_(generic|avx2|avx512)\.c\.o(bj)?$", o)]
    if not objects:
        print("no vector-kernel objects among the arguments")
        sys.exit(2)
    bad = missing = 0
    for path in objects:
        funcs = functions(objdump, path)
        for prec in ("f64", "f32"):
            # the full register block: the most rows (4, or 6 for AVX2)
            blocks = {}
            for n in funcs:
                m = re.fullmatch(r"rows_(\d+)_%s(\.\w+)*" % prec, n)
                if m:
                    blocks.setdefault(int(m.group(1)), []).append(n)
            if not blocks:
                print("%s: no rows_N_%s" % (path, prec))
                missing += 1
                continue
            names = blocks[max(blocks)]
            for name in names:
                loop = inner_loop(funcs[name])
                if loop is None:
                    print("%s %s: no k loop found" % (path.rsplit("/", 1)[-1], name))
                    missing += 1
                    continue
                spills = [t for t in loop if STACK.search(t)]
                arith = sum(1 for t in loop if ARITH.search(t))
                print("%s %s: k loop of %d instructions, %d vector arithmetic, %d stack accesses"
                      % (path.rsplit("/", 1)[-1], name, len(loop), arith, len(spills)))
                for t in spills:
                    print("    " + t)
                bad += bool(spills)
    print("%d passed, %d failed" % (len(objects) * 2 - bad - missing, bad + missing))
    sys.exit(1 if bad else 2 if missing else 0)


if __name__ == "__main__":
    main()
