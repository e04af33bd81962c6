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
  weighted
         lasso with sample_weight (some weights 0): Lasso(alpha=lambda)
         .fit(A, y, sample_weight) minimises (1/(2 sum w)) sum w r^2 +
         alpha |c|_1, rfx's weighted objective: to 1e-6 as above; the same
         fit on the rows of positive weight alone to 1e-12 (a row of weight
         0 is a row left out); integer weights k against the rows repeated
         k times (Lasso without weights) to 1e-6; weights all 2.5 against
         no weights, bit for bit. Weighted k-fold CV against LassoCV with
         sample_weight on rfx's grid and folds (scikit-learn 1.2 draws its
         own grid without the weights, so rfx's is passed and checked
         against lambda_max = max |A_c^T W y_c| / sum w): the weighted mean
         held-out MSE to 1e-6 and the chosen alpha.
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

    # ---- sample weights ----
    for name, seed, m, N, k, noise, offset in cases:
        A, y = problem(seed + 10, m, N, k, noise, offset)
        rng = np.random.default_rng(seed + 20)
        w = rng.uniform(0.2, 3.0, size=m)
        w[::9] = 0.0
        pa, py = write(tmp, "l1w_" + name, A, y)
        pw = os.path.join(tmp, "l1w_%s_w.npy" % name)
        np.save(pw, w.reshape(-1, 1))
        keep = w > 0
        pa2, py2 = write(tmp, "l1w_%s_pos" % name, A[keep], y[keep])
        pw2 = os.path.join(tmp, "l1w_%s_pos_w.npy" % name)
        np.save(pw2, w[keep].reshape(-1, 1))
        for intercept in (0, 1):
            Ac = A - np.average(A, axis=0, weights=w) if intercept else A
            yc = y - np.average(y, weights=w) if intercept else y
            lmax = np.max(np.abs(Ac.T @ (w * yc))) / w.sum()
            for frac in (0.3, 0.05):
                lam = frac * lmax
                out = os.path.join(tmp, "l1w_%s_out.txt" % name)
                run(driver, ["lasso", pa, py, repr(lam), intercept, out, pw])
                v = np.loadtxt(out)
                c, b = v[:N], v[N]
                sk = Lasso(alpha=lam, fit_intercept=bool(intercept), **SK).fit(A, y,
                                                                              sample_weight=w)
                e = rel(c, sk.coef_)
                eb = abs(b - sk.intercept_) / max(1.0, abs(sk.intercept_))
                check(e <= TOL and eb <= TOL,
                      "weighted lasso %s intercept=%d lambda=%.2g lambda_max: coef rel diff "
                      "%.2e, intercept diff %.2e" % (name, intercept, frac, e, eb))
                run(driver, ["lasso", pa2, py2, repr(lam), intercept, out, pw2])
                v2 = np.loadtxt(out)
                e = rel(v2, v)
                check(e <= 1e-12, "weighted lasso %s intercept=%d lambda=%.2g: weight-0 rows "
                      "= rows left out, rel diff %.2e" % (name, intercept, frac, e))
        # integer weights = repeated rows; equal weights = no weights
        wi = rng.integers(1, 4, size=m)
        pwi = os.path.join(tmp, "l1w_%s_wi.npy" % name)
        np.save(pwi, wi.reshape(-1, 1).astype(np.float64))
        rep_rows = np.repeat(np.arange(m), wi)
        par, pyr = write(tmp, "l1w_%s_rep" % name, A[rep_rows], y[rep_rows])
        pwe = os.path.join(tmp, "l1w_%s_we.npy" % name)
        np.save(pwe, np.full((m, 1), 2.5))
        lam = 0.1 * lambda_max(A, y, 1)
        out = os.path.join(tmp, "l1w_%s_out.txt" % name)
        run(driver, ["lasso", pa, py, repr(lam), 1, out, pwi])
        vi = np.loadtxt(out)
        run(driver, ["lasso", par, pyr, repr(lam), 1, out])
        vr = np.loadtxt(out)
        e = rel(vi, vr)
        check(e <= TOL, "weighted lasso %s: integer weights = repeated rows, rel diff %.2e"
              % (name, e))
        run(driver, ["lasso", pa, py, repr(lam), 1, out, pwe])
        ve = np.loadtxt(out)
        run(driver, ["lasso", pa, py, repr(lam), 1, out])
        v0 = np.loadtxt(out)
        check(np.array_equal(ve, v0), "weighted lasso %s: equal weights = no weights, bit for "
              "bit" % name)

    m, N, n_folds, n_lambdas, ratio = 120, 200, 5, 20, 1e-2
    A, y = problem(13, m, N, 8, 0.1, 1.5)
    w = np.random.default_rng(14).uniform(0.2, 3.0, size=m)
    pa, py = write(tmp, "l1w_cv", A, y)
    pw = os.path.join(tmp, "l1w_cv_w.npy")
    np.save(pw, w.reshape(-1, 1))
    folds = [(np.array([i for i in range(m) if i % n_folds != f]),
              np.array([i for i in range(m) if i % n_folds == f])) for f in range(n_folds)]
    for intercept in (0, 1):
        out = os.path.join(tmp, "l1w_cv_out.txt")
        run(driver, ["cv", pa, py, n_lambdas, repr(ratio), n_folds, intercept, out, pw])
        with open(out) as fh:
            lines = fh.read().split("\n")
        grid = np.array([[float(t) for t in ln.split()] for ln in lines[:n_lambdas]])
        best = int(lines[n_lambdas].split()[1])
        Ac = A - np.average(A, axis=0, weights=w) if intercept else A
        yc = y - np.average(y, weights=w) if intercept else y
        lmax = np.max(np.abs(Ac.T @ (w * yc))) / w.sum()
        eg = abs(grid[0, 0] - lmax) / lmax
        check(eg <= 1e-12, "weighted cv intercept=%d: lambda_max rel diff %.2e" % (intercept, eg))
        sk = LassoCV(alphas=grid[:, 0], cv=folds, fit_intercept=bool(intercept),
                     **SK).fit(A, y, sample_weight=w)
        em = rel(grid[:, 1], sk.mse_path_.mean(axis=1))
        check(em <= TOL, "weighted cv intercept=%d: mean weighted held-out MSE rel diff %.2e"
              % (intercept, em))
        check(abs(grid[best, 0] - sk.alpha_) <= 1e-12 * sk.alpha_,
              "weighted cv intercept=%d: chosen lambda %.6g vs LassoCV alpha_ %.6g"
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
