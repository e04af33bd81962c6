# SPDX-License-Identifier: BSD-3-Clause
"""scikit-learn's values for the exact-kernel tests (tests/test_kernels.c,
tests/test_gp.c), which run this script with popen.

    kernels_sklearn.py gram FILE SPEC...         k(X, Y), row-major, for each
                                                 kernel SPEC in turn
    kernels_sklearn.py krr  FILE LAMBDA SPEC     KernelRidge predictions at T
    kernels_sklearn.py gp   FILE S2 L NOISE NORMALIZE
                                                 GaussianProcessRegressor with
                                                 s2 * RBF(l) + White(noise), no
                                                 optimizer: mean and std (of
                                                 the noisy target) at T, then
                                                 the log marginal likelihood

SPEC: the kernel's name and parameters joined by ':': rbf:GAMMA,
laplacian:GAMMA, poly:GAMMA:COEF0:DEGREE, sigmoid:GAMMA:COEF0, linear,
matern:NU:L.

FILE holds named arrays, each a line "NAME ROWS COLS" and ROWS lines of
numbers: X and Y (gram), X, Y and T (krr, gp). Output: one number per line,
17 significant digits.
"""
import sys

import numpy as np
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern, WhiteKernel
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics.pairwise import (laplacian_kernel, linear_kernel, polynomial_kernel,
                                      rbf_kernel, sigmoid_kernel)


def read_arrays(path):
    arrays = {}
    with open(path) as f:
        lines = [ln for ln in f.read().splitlines() if ln.strip()]
    i = 0
    while i < len(lines):
        name, rows, cols = lines[i].split()
        rows, cols = int(rows), int(cols)
        a = np.array([[float(v) for v in lines[i + 1 + r].split()] for r in range(rows)])
        arrays[name] = a.reshape(rows, cols)
        i += 1 + rows
    return arrays


def pairwise(kind, args, X, Y):
    if kind == "rbf":
        return rbf_kernel(X, Y, gamma=float(args[0]))
    if kind == "laplacian":
        return laplacian_kernel(X, Y, gamma=float(args[0]))
    if kind == "poly":
        return polynomial_kernel(X, Y, gamma=float(args[0]), coef0=float(args[1]),
                                 degree=int(args[2]))
    if kind == "sigmoid":
        return sigmoid_kernel(X, Y, gamma=float(args[0]), coef0=float(args[1]))
    if kind == "linear":
        return linear_kernel(X, Y)
    if kind == "matern":
        return Matern(length_scale=float(args[1]), nu=float(args[0]))(X, Y)
    raise SystemExit("unknown kernel " + kind)


def krr_model(kind, args, lam):
    if kind == "rbf":
        return KernelRidge(alpha=lam, kernel="rbf", gamma=float(args[0]))
    if kind == "laplacian":
        return KernelRidge(alpha=lam, kernel="laplacian", gamma=float(args[0]))
    if kind == "poly":
        return KernelRidge(alpha=lam, kernel="poly", gamma=float(args[0]),
                           coef0=float(args[1]), degree=int(args[2]))
    raise SystemExit("unknown kernel " + kind)


def emit(values):
    sys.stdout.write("".join("%.17g\n" % v for v in np.ravel(values)))


def main(argv):
    mode, path = argv[1], argv[2]
    a = read_arrays(path)
    if mode == "gram":
        for spec in argv[3:]:
            kind, *args = spec.split(":")
            emit(pairwise(kind, args, a["X"], a["Y"]))
    elif mode == "krr":
        lam = float(argv[3])
        kind, *args = argv[4].split(":")
        m = krr_model(kind, args, lam).fit(a["X"], a["Y"])
        emit(m.predict(a["T"]))
    elif mode == "gp":
        s2, ls, noise, norm = float(argv[3]), float(argv[4]), float(argv[5]), int(argv[6])
        kernel = (ConstantKernel(s2, constant_value_bounds="fixed")
                  * RBF(ls, length_scale_bounds="fixed")
                  + WhiteKernel(noise, noise_level_bounds="fixed"))
        gp = GaussianProcessRegressor(kernel=kernel, optimizer=None, alpha=0.0,
                                      normalize_y=bool(norm))
        gp.fit(a["X"], a["Y"].ravel())
        mean, std = gp.predict(a["T"], return_std=True)
        emit(mean)
        emit(std)
        emit([gp.log_marginal_likelihood_value_])
    else:
        raise SystemExit("unknown mode " + mode)


if __name__ == "__main__":
    main(sys.argv)
