# SPDX-License-Identifier: BSD-3-Clause
"""sorf_small_d.py [--rfx PATH] [--out FILE] - the kernel approximation error
of SORF against i.i.d. frequencies at equal D, over seeds and input
dimensions; writes a markdown table (bench/results/sorf_small_d.md).

    /usr/bin/python3 bench/sorf_small_d.py --rfx build/rfx

Each cell runs `rfx kernel-approx -D 1000 --structure S --seed s --format
json` for seeds 0..9 and both structures, and reports the median over the
seeds of |K - Z Z^T|_F / |K|_F for iid and sorf, and the median and worst of
the per-seed ratio sorf / iid (the same seed: the same phases). Data: the
built-in S-curve (1000 points, d = 3, length scale 1: scaled distances up
to 4); for d = 2, 3, 5, 8, 16, 64, 500 standard normal rows (numpy seed
1000 + d) with the length scale sqrt(d) / 2 (typical scaled distance 2.8)
and sqrt(d) (1.4). Kernels gaussian and matern (nu = 1.5), forms cos-bias
and cos-sin. A cell the binary refuses (matern SORF before rfx 0.3) is
marked "refused".
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

SEEDS = range(10)
DIMS = (2, 3, 5, 8, 16, 64)


def error(rfx, data, args, structure, seed):
    cmd = [rfx, "kernel-approx", "-D", "1000", "--structure", structure, "--seed", str(seed),
           "--format", "json", "--threads", "2"] + args + ([data] if data else [])
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None
    return json.loads(r.stdout)["results"][0]["rel_error"]


def cell(rfx, data, args):
    iid, sorf = [], []
    for s in SEEDS:
        e0, e1 = error(rfx, data, args, "iid", s), error(rfx, data, args, "sorf", s)
        if e1 is None:
            return None
        iid.append(e0)
        sorf.append(e1)
    ratio = np.array(sorf) / np.array(iid)
    return np.median(iid), np.median(sorf), np.median(ratio), ratio.max()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rfx", default=os.path.join("build", "rfx"))
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results",
                                                  "sorf_small_d.md"))
    a = ap.parse_args()
    version = subprocess.run([a.rfx, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cases = [("S-curve", 3, None, 1.0)]
        for d in DIMS:
            X = np.random.default_rng(1000 + d).standard_normal((500, d))
            path = os.path.join(tmp, "x%d.csv" % d)
            np.savetxt(path, X, delimiter=",", header=",".join("x%d" % i for i in range(d)),
                       comments="")
            for ls in (np.sqrt(d) / 2, np.sqrt(d)):
                cases.append(("normal", d, path, ls))
        for name, d, path, ls in cases:
            for kernel in ("gaussian", "matern"):
                for form in ("cos-bias", "cos-sin"):
                    args = ["--kernel", kernel, "--length-scale", repr(float(ls)), "--form", form]
                    c = cell(a.rfx, path, args)
                    rows.append((name, d, ls, kernel, form, c))
                    shown = "refused" if c is None else \
                        "iid %.4f sorf %.4f ratio median %.3f worst %.3f" % c
                    print("%-8s d=%2d l=%.3f %-8s %-8s %s" % (name, d, ls, kernel, form, shown),
                          flush=True)
    with open(a.out, "w") as out:
        out.write("# SORF against iid: kernel approximation error at D = 1000\n\n")
        out.write("`/usr/bin/python3 bench/sorf_small_d.py --rfx build/rfx` (%s): the median over "
                  "seeds 0..9 of |K - Z Z^T|_F / |K|_F, and the median and worst over the seeds "
                  "of the ratio sorf / iid.\n\n" % version)
        out.write("| data | d | length scale | kernel | form | iid | sorf | ratio median | "
                  "ratio worst |\n|---|---:|---:|---|---|---:|---:|---:|---:|\n")
        for name, d, ls, kernel, form, c in rows:
            vals = "| refused | | | |" if c is None else "| %.4f | %.4f | %.3f | %.3f |" % c
            out.write("| %s | %d | %.3f | %s | %s %s\n" % (name, d, ls, kernel, form, vals))


if __name__ == "__main__":
    sys.exit(main())
