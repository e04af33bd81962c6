# SPDX-License-Identifier: BSD-3-Clause
"""sketch_errors.py [--out FILE] - the kernel approximation errors of rfx's
dot-product and chi2 feature maps beside scikit-learn's at equal D; writes a
markdown table (bench/results/sketch.md).

    RFX_LIBRARY=build/librfx.so /usr/bin/python3 bench/sketch_errors.py

Error: |K - Z Z^T|_F / |K|_F on the training rows, the median over 25 seeds
(random_state 0..24) of each map. Data (fixed seeds): 200 rows of 20 inputs,
for the polynomial kernels scaled to unit norm (uniform(-1, 1) entries), for
the chi2 kernels histograms with uniform(0.05, 1) entries.
"""
import argparse
import os
import sys

import numpy as np
import sklearn
from sklearn import kernel_approximation as ska
from sklearn.metrics.pairwise import polynomial_kernel

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import rfx  # noqa: E402

SEEDS = range(25)


def rel_error(Z, K):
    return np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K)


def median_error(make, X, K):
    return float(np.median([rel_error(make(s).fit_transform(X), K) for s in SEEDS]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results",
                                                  "sketch.md"))
    a = ap.parse_args()
    rs = np.random.RandomState(0)
    X = rs.uniform(-1, 1, (200, 20))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    H = rs.uniform(0.05, 1.0, (200, 20))
    rows = []
    for deg, c0 in ((2, 0), (2, 1), (3, 1)):
        K = polynomial_kernel(X, degree=deg, gamma=1.0, coef0=c0)
        for D in (100, 1024):
            kw = dict(degree=deg, coef0=c0, gamma=1.0, n_components=D)
            rows.append(("PolynomialCountSketch degree %d coef0 %d" % (deg, c0), D,
                         median_error(lambda s: rfx.PolynomialCountSketch(random_state=s, **kw),
                                      X, K),
                         median_error(lambda s: ska.PolynomialCountSketch(random_state=s, **kw),
                                      X, K)))
    for kernel, K in (("polynomial", polynomial_kernel(X, degree=2, gamma=1.0, coef0=1)),
                      ("exponential", np.exp(X @ X.T))):
        for D in (100, 1024):
            rows.append(("RandomMaclaurinFeatures %s" % kernel, D, median_error(
                lambda s: rfx.RandomMaclaurinFeatures(kernel=kernel, degree=2, coef0=1,
                                                      n_components=D, random_state=s), X, K),
                None))
    c = 1.0
    K = np.prod(2 * np.sqrt(H[:, None, :] + c) * np.sqrt(H[None, :, :] + c)
                / (H[:, None, :] + H[None, :, :] + 2 * c), axis=2)
    for D in (100, 1024):
        rows.append(("SkewedChi2Sampler skewedness 1", D,
                     median_error(lambda s: rfx.SkewedChi2Sampler(n_components=D, random_state=s),
                                  H, K),
                     median_error(lambda s: ska.SkewedChi2Sampler(n_components=D, random_state=s),
                                  H, K)))
    K = sum(2 * np.outer(H[:, i], H[:, i]) / np.add.outer(H[:, i], H[:, i]) for i in range(20))
    for steps in (1, 2, 3):
        Z = rfx.AdditiveChi2Sampler(sample_steps=steps).fit_transform(H)
        Zs = ska.AdditiveChi2Sampler(sample_steps=steps).fit_transform(H)
        rows.append(("AdditiveChi2Sampler sample_steps %d" % steps, Z.shape[1],
                     rel_error(Z, K), rel_error(Zs, K)))
    lines = ["# Kernel errors of the sketch maps beside scikit-learn's", "",
             "rfx %s, scikit-learn %s. Command: `RFX_LIBRARY=build/librfx.so /usr/bin/python3 "
             "bench/sketch_errors.py`. |K - Z Z^T|_F / |K|_F, median over 25 seeds "
             "(the additive chi2 map is deterministic)." % (rfx.library_version(),
                                                              sklearn.__version__), "",
             "| map | D | rfx | scikit-learn |", "|---|---:|---:|---:|"]
    for name, D, e, es in rows:
        lines.append("| %s | %d | %.4f | %s |" % (name, D, e, "-" if es is None else
                                                  "%.4f" % es))
    text = "\n".join(lines) + "\n"
    with open(a.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
