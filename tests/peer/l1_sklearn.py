# SPDX-License-Identifier: BSD-3-Clause
"""rfx's l1 solvers against scikit-learn on the same data (run by ctest).

Usage: /usr/bin/python3 l1_sklearn.py <l1_peer_driver> <scratch dir>

The data are made here (numpy, fixed seeds), written as .npy, fitted by the
C driver (tests/l1_peer_driver.c) and by scikit-learn, and compared:

  lasso  Lasso(alpha=lambda, fit_intercept, tol=1e-13, max_iter=10^6)
         minimises (1/2m)|y - A c - b|^2 + alpha |c|_1, rfx's objective:
         coefficients and intercept agree to 1e-6 relative (max norm).
  cv     LassoCV with rfx's grid (n_alphas, eps = lambda_min_ratio) and
         rfx's folds (row i in fold i mod k, passed as explicit splits):
         the grid to 1e-12, the mean held-out MSE per lambda (mse_path_
         averaged over folds) to 1e-6 relative, and the chosen alpha.
  bpdn   no scikit-learn peer solves BPDN, but its solution is the lasso
         solution at the multiplier lambda* = |A^T r|_inf / m: Lasso(alpha
         = lambda*) must give the same coefficients (1e-6), and |r| = sigma.

Exit status 0 when every comparison passes; prints one line per check and a
"N passed, M failed" summary.
"""
import os
import subprocess
import sys
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso, LassoCV

TOL = 1e-6
SK = dict(tol=1e-13, max_iter=1000000)

passed = 0
failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
    print(("ok     " if ok else "FAILED ") + what, flush=True)


def rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    den = max(np.max(np.abs(b)), 1e-300)
    return float(np.max(np.abs(a - b)) / den)


def problem(seed, m, N, k, noise, offset):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, N)) / np.sqrt(m)
    c = np.zeros(N)
    idx = rng.choice(N, size=k, replace=False)
    c[idx] = rng.choice([-1.0, 1.0], size=k) * (1 + rng.random(k))
    y = A @ c + offset + noise * rng.standard_normal(m)
    return A, y


def run(driver, args):
    r = subprocess.run([driver] + [str(a) for a in args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("driver failed (%d): %s" % (r.returncode, r.stderr.strip()))


def write(tmp, tag, A, y):
    pa, py = os.path.join(tmp, tag + "_A.npy"), os.path.join(tmp, tag + "_y.npy")
    np.save(pa, np.ascontiguousarray(A, dtype=np.float64))
    np.save(py, np.ascontiguousarray(y.reshape(-1, 1), dtype=np.float64))
    return pa, py


def lambda_max(A, y, intercept):
    if intercept:
        A = A - A.mean(axis=0)
        y = y - y.mean()
    return np.max(np.abs(A.T @ y)) / A.shape[0]


def main():
    driver, tmp = sys.argv[1], sys.argv[2]
    os.makedirs(tmp, exist_ok=True)
    warnings.simplefilter("error", ConvergenceWarning)

    # ---- lasso at fixed lambdas: m > N (strongly convex) and m < N ----
    cases = [("tall", 1, 150, 60, 8, 0.1, 0.0), ("wide", 2, 100, 300, 10, 0.05, 3.0)]
    for name, seed, m, N, k, noise, offset in cases:
        A, y = problem(seed, m, N, k, noise, offset)
        pa, py = write(tmp, "l1_" + name, A, y)
        for intercept in (0, 1):
            lmax = lambda_max(A, y, intercept)
            for frac in (0.3, 0.05):
                lam = frac * lmax
                out = os.path.join(tmp, "l1_%s_out.txt" % name)
                run(driver, ["lasso", pa, py, repr(lam), intercept, out])
                v = np.loadtxt(out)
                c, b = v[:N], v[N]
                sk = Lasso(alpha=lam, fit_intercept=bool(intercept), **SK).fit(A, y)
                e = rel(c, sk.coef_)
                eb = abs(b - sk.intercept_) / max(1.0, abs(sk.intercept_))
                check(e <= TOL and eb <= TOL and np.count_nonzero(c) == np.count_nonzero(sk.coef_),
                      "lasso %s m=%d N=%d intercept=%d lambda=%.2g lambda_max: coef rel diff "
                      "%.2e, intercept diff %.2e, nnz %d vs %d"
                      % (name, m, N, intercept, frac, e, eb, np.count_nonzero(c),
                         np.count_nonzero(sk.coef_)))

    # ---- k-fold cross-validation against LassoCV on the same folds ----
    m, N, n_folds, n_lambdas, ratio = 120, 200, 5, 20, 1e-2
    A, y = problem(3, m, N, 8, 0.1, 1.5)
    pa, py = write(tmp, "l1_cv", A, y)
    folds = [(np.array([i for i in range(m) if i % n_folds != f]),
              np.array([i for i in range(m) if i % n_folds == f])) for f in range(n_folds)]
    for intercept in (0, 1):
        out = os.path.join(tmp, "l1_cv_out.txt")
        run(driver, ["cv", pa, py, n_lambdas, repr(ratio), n_folds, intercept, out])
        with open(out) as fh:
            lines = fh.read().split("\n")
        grid = np.array([[float(t) for t in ln.split()] for ln in lines[:n_lambdas]])
        best = int(lines[n_lambdas].split()[1])
        sk = LassoCV(n_alphas=n_lambdas, eps=ratio, cv=folds, fit_intercept=bool(intercept),
                     **SK).fit(A, y)
        eg = rel(grid[:, 0], sk.alphas_)
        em = rel(grid[:, 1], sk.mse_path_.mean(axis=1))
        check(eg <= 1e-12, "cv intercept=%d: lambda grid rel diff %.2e" % (intercept, eg))
        check(em <= TOL, "cv intercept=%d: mean held-out MSE rel diff %.2e" % (intercept, em))
        check(abs(grid[best, 0] - sk.alpha_) <= 1e-12 * sk.alpha_,
              "cv intercept=%d: chosen lambda %.6g vs LassoCV alpha_ %.6g"
              % (intercept, grid[best, 0], sk.alpha_))

    # ---- BPDN: the lasso at its multiplier ----
    m, N = 100, 400
    A, y = problem(4, m, N, 12, 0.05, 0.0)
    pa, py = write(tmp, "l1_bpdn", A, y)
    for intercept in (0, 1):
        yc = y - y.mean() if intercept else y
        sigma = 0.05 * np.linalg.norm(yc)
        out = os.path.join(tmp, "l1_bpdn_out.txt")
        run(driver, ["bpdn", pa, py, repr(sigma), intercept, out])
        with open(out) as fh:
            lines = fh.read().split("\n")
        c = np.array([float(t) for t in lines[:N]])
        b = float(lines[N])
        r = y - A @ c - b
        Ac = A - A.mean(axis=0) if intercept else A
        lam = np.max(np.abs(Ac.T @ r)) / m
        sk = Lasso(alpha=lam, fit_intercept=bool(intercept), **SK).fit(A, y)
        e = rel(c, sk.coef_)
        check(abs(np.linalg.norm(r) / sigma - 1) <= 1e-6,
              "bpdn intercept=%d: |r| / sigma - 1 = %.2e" % (intercept,
                                                          np.linalg.norm(r) / sigma - 1))
        check(e <= TOL, "bpdn intercept=%d: coef vs Lasso(alpha = multiplier %.4g) rel diff %.2e"
              % (intercept, lam, e))

    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
