# SPDX-License-Identifier: BSD-3-Clause
"""attention_norms.py [--out DIR] - linear attention's error against exact
softmax attention as the input norm grows, for FAVOR+'s positive features
(plain and hyperbolic) and Random Feature Attention's trigonometric ones.

    /usr/bin/python3 bench/attention_norms.py

Queries and keys: L = 512 rows of d = 64, random directions scaled to one
norm r (so that RFA's normalised inputs with temperature sigma = 1 / r are
exactly these), r = 0.5 .. 3; values N(0, 1). Each (map, r, D) over 10
feature seeds (and data seeds): the relative Frobenius error
|Out - Out_exact|_F / |Out_exact|_F, median and worst; a fit whose
normaliser came out <= 0 for some row (possible only for the trigonometric
map) counts as failed and is left out of the error columns. Accuracy only,
no timing. Writes attention_norms.md (bench/results unless --out).
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
import rfx  # noqa: E402

L, d, SEEDS = 512, 64, 10
NORMS = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0]
KINDS = ["positive", "hyperbolic", "trigonometric"]


def data(r, seed):
    rs = np.random.RandomState(seed)
    Q, K = rs.normal(size=(2, L, d))
    Q *= r / np.linalg.norm(Q, axis=1, keepdims=True)
    K *= r / np.linalg.norm(K, axis=1, keepdims=True)
    return Q, K, rs.normal(size=(L, d))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--D", default="256,1024")
    a = ap.parse_args()
    Ds = [int(v) for v in a.D.split(",")]
    rows = []
    for D in Ds:
        for r in NORMS:
            cells = []
            for kind in KINDS:
                errs, failed = [], 0
                for s in range(SEEDS):
                    Q, K, V = data(r, 100 + s)
                    ref = rfx.exact_attention(Q, K, V)
                    sf = rfx.SoftmaxFeatures(d, D, kind=kind, random_state=s)
                    try:
                        out = sf.attention(Q, K, V)
                    except RuntimeError:
                        failed += 1
                        continue
                    errs.append(np.linalg.norm(out - ref) / np.linalg.norm(ref))
                cells.append((np.median(errs) if errs else np.nan,
                              max(errs) if errs else np.nan, failed))
            rows.append((D, r, cells))
            print("D %5d |q| %.1f  " % (D, r) + "  ".join(
                "%s %.3f / %.3f (%d failed)" % (k, c[0], c[1], c[2]) for k, c in zip(KINDS, cells)),
                flush=True)
    lines = ["# Linear attention's error against the input norm", "",
             "`/usr/bin/python3 bench/attention_norms.py` (bench/attention_norms.py): L = %d "
             "queries and keys of d = %d, random directions of norm |q| = |k| = r; values "
             "N(0, 1); orthogonal frequencies; %d feature and data seeds per cell. Error: "
             "|Out - Out_exact|_F / |Out_exact|_F, median / worst over the seeds that "
             "succeeded; failed: seeds where some row's estimated normaliser was <= 0 "
             "(rfx refuses those; only the trigonometric map can produce them). rfx %s." % (
                 L, d, SEEDS, rfx.library_version()), "",
             "| D | r | positive (FAVOR+) | hyperbolic | trigonometric (RFA) | RFA failed |",
             "| ---: | ---: | ---: | ---: | ---: | ---: |"]
    for D, r, cells in rows:
        lines.append("| %d | %.1f | %s | %s | %s | %d / %d |" % (
            D, r, *("%.3f / %.3f" % (c[0], c[1]) if c[2] < SEEDS else "-" for c in cells),
            cells[2][2], SEEDS))
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "attention_norms.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
