# SPDX-License-Identifier: BSD-3-Clause
"""A surrogate model with its Sobol indices: the Ishigami function (a = 7,
b = 0.1) on [-pi, pi]^3 learned from 300 samples by a sparse random
feature expansion, and the sensitivity indices of the surrogate, in closed
form and by Monte Carlo, against the function's own; a bar chart in a PNG.

    PYTHONPATH=python python3 python/examples/sobol_surrogate.py [out.png]

The input distribution is a SALib problem dict; SALib's own functions take
the same dict.
"""
import os
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import rfx  # noqa: E402

A, B = 7.0, 0.1
PROBLEM = {"num_vars": 3, "names": ["x1", "x2", "x3"],
           "bounds": [[-np.pi, np.pi]] * 3, "dists": ["unif", "unif", "unif"]}


def ishigami(X):
    return np.sin(X[:, 0]) + A * np.sin(X[:, 1]) ** 2 + B * X[:, 2] ** 4 * np.sin(X[:, 0])


def ishigami_indices():
    """First-order and total indices in closed form."""
    v1 = 0.5 * (1 + B * np.pi ** 4 / 5) ** 2
    v2 = A ** 2 / 8
    v13 = B ** 2 * np.pi ** 8 * (1 / 18 - 1 / 50)
    v = v1 + v2 + v13
    return np.array([v1, v2, 0]) / v, np.array([v1 + v13, v2, v13]) / v


def main(png):
    rng = np.random.RandomState(0)
    X = rng.uniform(-np.pi, np.pi, size=(300, 3))
    surrogate = rfx.SparseRFERegressor(sparsity=2, random_state=0).fit(X, ishigami(X))
    Xt = rng.uniform(-np.pi, np.pi, size=(2000, 3))
    r2 = surrogate.score(Xt, ishigami(Xt))

    exact = rfx.exact_sobol_indices(surrogate, PROBLEM)  # of the surrogate, in closed form
    mc = rfx.sobol_indices(surrogate, PROBLEM, n=20000, seed=1)  # by Monte Carlo, with intervals
    first, total = ishigami_indices()
    print("surrogate R^2 on new points: %.4f" % r2)
    print("input   S1 true  surrogate (closed form, MC)    ST true  surrogate (closed form, MC)")
    for j, name in enumerate(mc.names):
        print("%-6s  %7.4f  %7.4f  %7.4f           %7.4f  %7.4f  %7.4f"
              % (name, first[j], exact.first[j], mc.first[j], total[j], exact.total[j],
                 mc.total[j]))

    _, ax = plt.subplots(figsize=(6.4, 4.0))
    mc.plot(ax=ax)
    ax.plot(np.arange(3) - 0.19, first, "k_", markersize=18, label="Ishigami, exact")
    ax.plot(np.arange(3) + 0.19, total, "k_", markersize=18)
    ax.legend(loc="upper right")
    ax.set_title("Ishigami: Sobol indices of an SRFE surrogate (300 samples)")
    ax.figure.tight_layout()
    ax.figure.savefig(png, dpi=100)
    plt.close(ax.figure)
    print("bar chart: %s" % png)

    assert r2 > 0.99, r2
    assert np.all(np.abs(exact.first - first) < 0.03)
    assert np.all(np.abs(exact.total - total) < 0.03)
    # Monte Carlo agrees with the closed form of the same model within its intervals (+ slack)
    assert np.all((mc.first_lo - 0.01 <= exact.first) & (exact.first <= mc.first_hi + 0.01))
    assert np.all((mc.total_lo - 0.01 <= exact.total) & (exact.total <= mc.total_hi + 0.01))
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(sys.argv[1])
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(os.path.join(tmp, "sobol_ishigami.png"))
