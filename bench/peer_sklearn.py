# SPDX-License-Identifier: BSD-3-Clause
"""The peer side of bench/run.sh: scikit-learn and numpy/scipy on the data
that bench_core.c makes, timed the same way (best of --repeats, monotonic
clock), printed as the same "key value" lines.

Data (as bench_core.c):  X[i, j] = 2 sin(0.37 (i d + j) + j),
                         y[i] = sum_j sin(X[i, j]).
gamma defaults to 1 / (2 d): Var(X) = 2, so this is gamma='scale'.

Measures:
  peer_transform_f64_seconds   RBFSampler(gamma, D, random_state=0).fit(X),
                               then .transform(X) (it allocates its output)
  peer_transform_f32_seconds   the same on float32 X (RBFSampler keeps f32),
                               with its max |Z32 - Z64| like rfx's
  peer_ridge_seconds           Ridge(alpha=lambda, solver="cholesky").fit(Z, y)
  peer_fit_seconds             best transform + best Ridge fit
  peer_dsyrk_seconds           one DSYRK, Z^T Z, of the same n x D float64 Z:
                               the "physical floor" of any fit that forms
                               the normal equations. Z is C-ordered, so Z.T is
                               a Fortran-ordered D x n array and
                               dsyrk(1, Z.T, trans=0) = Z^T Z runs on it with
                               no copy (dsyrk(1, Z, trans=1) would first copy
                               all of Z to Fortran order, flattering rfx).
Run with /usr/bin/python3 (Debian's numpy, scipy, scikit-learn).
"""
import argparse
import resource
import sys
import time

import numpy as np
import scipy
import scipy.linalg.blas as blas
import sklearn
from sklearn.kernel_approximation import RBFSampler
from sklearn.linear_model import Ridge

try:
    import threadpoolctl
except ImportError:  # the thread count then comes from the environment only
    threadpoolctl = None


def make_data(n, d):
    idx = np.arange(n, dtype=np.int64)[:, None] * d + np.arange(d, dtype=np.int64)[None, :]
    X = 2.0 * np.sin(0.37 * idx.astype(np.float64) + np.arange(d, dtype=np.float64))
    y = np.sin(X).sum(axis=1)
    return X, y


def best_of(repeats, fn):
    """The best wall time of fn() over repeats runs, and its last result.
    The previous result is dropped before each run, so that at most one
    output is alive, as in bench_core.c."""
    best, out = float("inf"), None
    for _ in range(repeats):
        out = None
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def peak_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def say(key, value):
    print(key, value, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=100000)
    ap.add_argument("-d", type=int, default=20)
    ap.add_argument("-D", type=int, default=2048)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--gamma", type=float, default=0.0)
    ap.add_argument("--lambda", dest="lam", type=float, default=1e-3)
    a = ap.parse_args()
    n, d, D, R = a.n, a.d, a.D, a.repeats
    gamma = a.gamma if a.gamma > 0 else 1.0 / (2.0 * d)

    say("peer_numpy_version", np.__version__)
    say("peer_scipy_version", scipy.__version__)
    say("peer_sklearn_version", sklearn.__version__)
    limits = None
    if threadpoolctl is not None:
        limits = threadpoolctl.threadpool_limits(limits=a.threads)
        for lib in threadpoolctl.threadpool_info():
            if lib.get("user_api") == "blas":
                say("peer_blas", "%s-%s/%s/%s/threads=%s" % (
                    lib.get("internal_api"), lib.get("version"), lib.get("threading_layer"),
                    lib.get("architecture"), lib.get("num_threads")))
    else:
        say("peer_blas", "unknown(no-threadpoolctl)")
    say("peer_threads", a.threads)
    get_huge = getattr(np.core.multiarray, "_get_madvise_hugepage", None)
    if get_huge is not None:  # numpy advises large arrays for huge pages
        say("peer_numpy_madvise_hugepage", int(bool(get_huge())))

    X, y = make_data(n, d)
    say("data_sum_x", "%.15g" % X.sum())
    say("data_sum_y", "%.15g" % y.sum())
    say("data_y_std", "%.6g" % y.std())

    # transform, float64
    s64 = RBFSampler(gamma=gamma, n_components=D, random_state=0).fit(X)
    t, _ = best_of(R, lambda: s64.transform(X))
    t_transform = t
    say("peer_transform_f64_seconds", "%.6f" % t)
    say("peer_transform_f64_peak_rss_bytes", peak_rss_bytes())

    # transform, float32 (fitted on f32 X: the same weights, rounded)
    X32 = X.astype(np.float32)
    s32 = RBFSampler(gamma=gamma, n_components=D, random_state=0).fit(X32)
    t, Z32 = best_of(R, lambda: s32.transform(X32))
    say("peer_transform_f32_seconds", "%.6f" % t)
    say("peer_transform_f32_dtype", Z32.dtype)
    err = 0.0
    for i0 in range(0, n, 4096):  # against its own f64 features, in blocks
        Zb = s64.transform(X[i0:i0 + 4096])
        err = max(err, float(np.max(np.abs(Z32[i0:i0 + 4096].astype(np.float64) - Zb))))
    say("peer_transform_f32_max_abs_err", "%.3e" % err)
    del Z32

    # fit: Ridge on the materialised features
    Z = s64.transform(X)
    t, model = best_of(R, lambda: Ridge(alpha=a.lam, solver="cholesky").fit(Z, y))
    say("peer_ridge_seconds", "%.6f" % t)
    say("peer_fit_seconds", "%.6f" % (t_transform + t))
    say("peer_fit_rmse_train", "%.6g" % float(np.sqrt(np.mean((model.predict(Z) - y) ** 2))))
    say("peer_fit_peak_rss_bytes", peak_rss_bytes())
    del model

    # the floor: one DSYRK of the same n x D matrix (see the docstring)
    ZT = Z.T
    assert ZT.flags.f_contiguous
    t, _ = best_of(R, lambda: blas.dsyrk(1.0, ZT, trans=0))
    say("peer_dsyrk_seconds", "%.6f" % t)
    if limits is not None:
        limits.restore_original_limits()
    return 0


if __name__ == "__main__":
    sys.exit(main())
