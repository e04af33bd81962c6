# SPDX-License-Identifier: BSD-3-Clause
"""bench_python.py [BUILD_DIR] - the Python package against the C API, and
rfx against scikit-learn's RBFSampler + Ridge, in one run on the same data;
prints a markdown table of times and ratios and writes it to a file.

    /usr/bin/python3 bench/bench_python.py build

What is compared (best of REPEATS runs each, monotonic clock, unless said):

  Python vs C     rfx.RandomFourierFeatures.transform against bench_core's
                  rfx_features_transform into a fresh buffer advised for huge
                  pages (numpy allocates the output the same way), f64 and
                  f32, alternating (below); rfx.RFFRegressor.fit (gamma,
                  alpha, standardize=False) against bench_core's
                  rfx_ridge_fit. The C side runs as
                  BUILD_DIR/bench/rfx_bench_core; the Python side includes
                  input validation and everything else a user call does.
                  Target: Python loses less than 5% (ratio Python / C < 1.05).
  rfx vs sklearn  RBFSampler.transform, and RBFSampler + Ridge(cholesky)
                  against RandomFourierFeatures.transform and RFFRegressor.fit
                  (ratios sklearn / rfx: above 1, rfx is faster).
  same process    The transform through the Python API, interleaved run by
                  run with the bare C call made from this process through
                  cffi (no validation, output aligned as bench_core's), and
                  with the bare call into numpy's own np.empty (what the
                  package did before it aligned its outputs): wall and CPU
                  time (user + system, all threads), each the best of
                  max(7, REPEATS) rounds. On a shared machine these pairs
                  see the same load, which the separate bench_core process
                  does not.

The transform rows of the first table alternate the two sides: REPEATS
rounds of one bench_core run (its best of REPEATS transforms into fresh
huge-page buffers; the first of a process is slower, as the kernel has to
find free huge pages) and the best of REPEATS Python transforms; each side
reports its best over all rounds. On a shared machine a busy spell then
falls on both sides alike.

Data (bench_core.c's, made by each side; their sums are compared):
    X[i, j] = 2 sin(0.37 (i d + j) + j),  y[i] = sum_j sin(X[i, j]),
gamma = 1 / (2 d) (scikit-learn's 'scale' for this data), D features, seed 0,
ridge lambda 1e-3 with an intercept.

Sizes (environment): N=100000 D=2048 DIM=20 THREADS=2 REPEATS=3. At those
sizes the table goes to bench/results/python.md; at any other size (a smoke
run: N=5000) to BUILD_DIR/bench/python.md, so that a quick run never
replaces the quoted results; OUT=<file> overrides both.
"""
import functools
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def env_int(name, default):
    v = os.environ.get(name, str(default))
    if not v.isdigit() or int(v) < 1:
        sys.exit("bench_python.py: %s must be a whole number >= 1, not '%s'" % (name, v))
    return int(v)


N = env_int("N", 100000)
D = env_int("D", 2048)
DIM = env_int("DIM", 20)
THREADS = env_int("THREADS", 2)
REPEATS = env_int("REPEATS", 3)
ROUNDS = max(7, REPEATS)  # of the interleaved same-process transforms (< 1 s each)
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
BIN = os.path.join(BUILD, "bench", "rfx_bench_core")
GAMMA = 1.0 / (2.0 * DIM)
LAMBDA = 1e-3
SEED = 0

# threads for everything in this process, before numpy starts its BLAS
os.environ["OMP_NUM_THREADS"] = str(THREADS)
os.environ.setdefault("RFX_LIBRARY", os.path.join(BUILD, "librfx.so"))
sys.path.insert(0, os.path.join(ROOT, "python"))

import numpy as np  # noqa: E402
import sklearn  # noqa: E402
from sklearn.kernel_approximation import RBFSampler  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402

import rfx  # noqa: E402

try:
    from threadpoolctl import threadpool_limits
except ImportError:  # the BLAS thread count then comes from the environment
    threadpool_limits = None


def make_data(n, d):
    idx = np.arange(n, dtype=np.int64)[:, None] * d + np.arange(d, dtype=np.int64)[None, :]
    X = 2.0 * np.sin(0.37 * idx.astype(np.float64) + np.arange(d, dtype=np.float64))
    return X, np.sin(X).sum(axis=1)


def best_of(fn):
    """The best wall time of fn() over REPEATS runs, and its last result (the
    previous result dropped first: one output alive at a time, as in C)."""
    best, out = float("inf"), None
    for _ in range(REPEATS):
        out = None
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def interleaved(rounds, fns):
    """Each fn of fns run once per round, its output dropped before the
    next call: the best wall and the best CPU time of each."""
    wall = [float("inf")] * len(fns)
    cpu = [float("inf")] * len(fns)
    for _ in range(rounds):
        for k, fn in enumerate(fns):
            c0, t0 = cpu_seconds(), time.perf_counter()
            out = fn()
            t1, c1 = time.perf_counter(), cpu_seconds()
            del out
            wall[k] = min(wall[k], t1 - t0)
            cpu[k] = min(cpu[k], c1 - c0)
    return wall, cpu


def bare_transform(f, X, alloc):
    """rfx_features_transform(_f32) called from Python with nothing around
    it: no validation, no OpenBLAS guard; the output from alloc(rows, cols,
    dtype)."""
    from rfx._lib import check, cmat, cmatf, lib, mat, matf
    if X.dtype == np.float32:
        Z = alloc(X.shape[0], D, np.float32)
        check(lib.rfx_features_transform_f32(f, cmatf(X), matf(Z)))
    else:
        Z = alloc(X.shape[0], D, np.float64)
        check(lib.rfx_features_transform(f, cmat(X), mat(Z)))
    return Z


def numpy_empty(rows, cols, dtype):
    return np.empty((rows, cols), dtype=dtype)


def run_c(mode, repeats=REPEATS):
    """bench_core's "key value" lines for one mode, as a dict of strings."""
    cmd = [BIN, "--mode", mode, "-n", str(N), "-d", str(DIM), "-D", str(D),
           "--threads", str(THREADS), "--repeats", str(repeats), "--seed", str(SEED),
           "--gamma", repr(GAMMA), "--lambda", repr(LAMBDA)]
    print("bench_python.py: C", mode, file=sys.stderr, flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True,
                       env=dict(os.environ, OMP_NUM_THREADS=str(THREADS)))
    if r.returncode != 0:
        sys.exit("bench_python.py: %s failed (%d): %s" % (" ".join(cmd), r.returncode, r.stderr))
    out = {}
    for line in r.stdout.splitlines():
        k, _, v = line.partition(" ")
        out.setdefault(k, v)
    return out, " ".join(cmd)


def main():
    if not os.path.isfile(BIN):
        sys.exit("bench_python.py: %s not found; build first (make, or cmake --build %s)"
                 % (BIN, BUILD))
    c_fit, cmd_fit = run_c("fit")

    X, y = make_data(N, DIM)
    X32 = X.astype(np.float32)
    sum_y = float(y.sum())
    same_data = abs(sum_y - float(c_fit["data_sum_y"])) <= 1e-9 * N

    print("bench_python.py: Python", file=sys.stderr, flush=True)
    t = rfx.RandomFourierFeatures(D, gamma=GAMMA, random_state=SEED, n_jobs=THREADS).fit(X)
    # Python against bench_core, alternating: one bench_core run (its best of
    # REPEATS transforms into fresh buffers), then the best of REPEATS Python
    # transforms, REPEATS rounds
    c_best, py_best = {}, {}
    for mode, key, Xin in (("transform", "transform_f64_fresh_hugepage_seconds", X),
                           ("transform32", "transform_f32_fresh_hugepage_seconds", X32)):
        c_best[mode] = py_best[mode] = float("inf")
        for _ in range(REPEATS):
            c_out, cmd = run_c(mode)
            c_best[mode] = min(c_best[mode], float(c_out[key]))
            py, Z = best_of(lambda: t.transform(Xin))
            del Z
            py_best[mode] = min(py_best[mode], py)
        if mode == "transform":
            cmd_tr = cmd
        else:
            cmd_tr32 = cmd
    # the same transforms, interleaved with the bare C call in this process
    same = {}
    for name, Xin in (("f64", X), ("f32", X32)):
        same[name] = interleaved(ROUNDS, [
            lambda: t.transform(Xin),
            lambda: bare_transform(t._features, Xin, rfx._lib.empty_rows),
            lambda: bare_transform(t._features, Xin, numpy_empty)])
    validate = min(timeit_once(lambda: t._validate_data(X32, dtype=[np.float64, np.float32],
                                                        reset=False)) for _ in range(20))
    small = X[:1]
    overhead = min(timeit_once(lambda: t.transform(small)) for _ in range(200)) - min(
        timeit_once(lambda: bare_transform(t._features, small, rfx._lib.empty_rows))
        for _ in range(200))

    def fit():
        return rfx.RFFRegressor(D, gamma=GAMMA, alpha=LAMBDA, standardize=False,
                                random_state=SEED, n_jobs=THREADS).fit(X, y)

    py_fit, reg = best_of(fit)
    py_rmse = float(np.sqrt(np.mean((reg.predict(X) - y) ** 2)))
    py_pred, _ = best_of(functools.partial(reg.predict, X))
    del reg

    print("bench_python.py: scikit-learn", file=sys.stderr, flush=True)
    limits = threadpool_limits(limits=THREADS) if threadpool_limits else None
    s = RBFSampler(gamma=GAMMA, n_components=D, random_state=SEED).fit(X)
    sk_tr, Z = best_of(lambda: s.transform(X))
    sk_ridge, ridge = best_of(functools.partial(Ridge(alpha=LAMBDA, solver="cholesky").fit, Z, y))
    sk_rmse = float(np.sqrt(np.mean((ridge.predict(Z) - y) ** 2)))
    del Z
    s32 = RBFSampler(gamma=GAMMA, n_components=D, random_state=SEED).fit(X32)
    sk_tr32, Z = best_of(lambda: s32.transform(X32))
    del Z
    sk_fit = sk_tr + sk_ridge
    if limits is not None:
        limits.restore_original_limits()

    c_t, c_t32 = c_best["transform"], c_best["transform32"]
    py_tr, py_tr32 = py_best["transform"], py_best["transform32"]
    c_f = float(c_fit["fit_f64_seconds"])
    documented = (N, D, DIM, THREADS) == (100000, 2048, 20, 2)
    out = os.environ.get("OUT") or (os.path.join(HERE, "results", "python.md") if documented
                                    else os.path.join(BUILD, "bench", "python.md"))

    def sec(v):
        return "%.3f s" % v

    def met(ok):
        return "yes" if ok else "no"

    rows = [
        ("transform f64 (fresh output)", py_tr, c_t, sk_tr),
        ("transform f32 (fresh output)", py_tr32, c_t32, sk_tr32),
        ("fit: RFFRegressor.fit vs rfx_ridge_fit vs RBFSampler + Ridge(cholesky)",
         py_fit, c_f, sk_fit),
    ]
    lines = [
        "# rfx Python benchmark",
        "",
        "rfx %s (Python package %s, library %s) against the C API (bench_core) and "
        "scikit-learn %s (numpy %s), same machine, same run." % (
            rfx.library_version(), rfx.__version__, rfx.library_path, sklearn.__version__,
            np.__version__),
        "n = %d rows, d = %d inputs, D = %d features, %d threads, best of %d; Gaussian kernel, "
        "gamma = %g, cos-bias features, seed %d; ridge lambda = %g with an intercept." % (
            N, DIM, D, THREADS, REPEATS, GAMMA, SEED, LAMBDA),
        "Data: X[i,j] = 2 sin(0.37 (i d + j) + j), y[i] = sum_j sin(X[i,j]), made by each side "
        "(sum of y: C %s, Python %.15g: %s)." % (c_fit["data_sum_y"], sum_y,
                                                  "same" if same_data else "DIFFERENT"),
        "Python / C: the cost of the Python API (target < 1.05). sklearn / rfx: above 1, the "
        "Python package is faster than scikit-learn.",
        "",
        "| measure | rfx Python | rfx C API | Python / C | < 1.05 | scikit-learn | sklearn / "
        "rfx Python |",
        "| --- | ---: | ---: | ---: | --- | ---: | ---: |",
    ]
    for name, p, c, k in rows:
        lines.append("| %s | %s | %s | %.3f | %s | %s | %.2f |" % (
            name, sec(p), sec(c), p / c, met(p / c < 1.05), sec(k), k / p))
    lines += [
        "| ... of which Ridge.fit alone | | | | | %s | |" % sec(sk_ridge),
        "| predict (RFFRegressor.predict, n rows) | %s | | | | | |" % sec(py_pred),
        "| training RMSE (a sanity check; y has std %.4g) | %.6g | %s | | | %.6g | |" % (
            float(y.std()), py_rmse, c_fit.get("fit_rmse_train", "n/a"), sk_rmse),
        "",
        "The transform in this process, interleaved run by run (best of %d each): the "
        "Python API against the bare C call through cffi into an output aligned as "
        "bench_core's (2 MiB), and the bare call into numpy's np.empty (malloc's 16-byte "
        "alignment, what `transform` used before). CPU time is user + system of all "
        "threads." % ROUNDS,
        "",
        "| transform | Python API | bare C call | Python / C | bare C call into np.empty | "
        "np.empty / aligned |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name in ("f64", "f32"):
        (wp, wc, we), (cp, cc, ce) = same[name]
        lines += [
            "| %s, wall | %s | %s | %.3f | %s | %.3f |" % (name, sec(wp), sec(wc), wp / wc,
                                                        sec(we), we / wc),
            "| %s, CPU | %s | %s | %.3f | %s | %.3f |" % (name, sec(cp), sec(cc), cp / cc,
                                                       sec(ce), ce / cc),
        ]
    lines += [
        "",
        "Python's own cost per transform call: %.0f us of input validation (scikit-learn's "
        "check_array with its finite check, on the f32 X: %.2f%% of the f32 transform) and "
        "%.0f us for the rest (views, the OpenBLAS guard, cffi; measured on one row)." % (
            1e6 * validate, 100 * validate / same["f32"][0][1], 1e6 * max(overhead, 0.0)),
        "",
        "The C transform times are bench_core's \"fresh output advised for huge pages\": "
        "a new n x D buffer per call, as numpy allocates (numpy huge-page advice: %s); the "
        "package's transform allocates its output 2 MiB aligned the same way. "
        "The Python fit goes through rfx_model_fit (solver AUTO: primal here) and includes "
        "scikit-learn's input validation; bench_core calls rfx_ridge_fit (primal) directly." % (
            int(bool(getattr(np.core.multiarray, "_get_madvise_hugepage", lambda: False)()))),
        "OpenBLAS: librfx in this process uses %s; serial OpenBLAS guard %s (see "
        "python/README.md). Environment: OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s." % (
            rfx._lib.serial_blas.blas_path or "?",
            "active" if rfx._lib.serial_blas.active else "not needed",
            os.environ.get("OPENBLAS_CORETYPE", "(unset)"),
            os.environ.get("OPENBLAS_L2_SIZE", "(unset)")),
        "Machine: %d cores, %s; %s. Date: %s." % (
            os.cpu_count() or 0, cpu_name(), " ".join(os.uname()[i] for i in (0, 2, 4)),
            time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())),
        "",
        "Commands, run by `N=%d D=%d DIM=%d THREADS=%d REPEATS=%d /usr/bin/python3 "
        "bench/bench_python.py %s` (the two transform commands %d times each, alternating "
        "with the Python transforms):" % (N, D, DIM, THREADS, REPEATS, BUILD, REPEATS),
        "",
        "```",
        "OMP_NUM_THREADS=%d %s" % (THREADS, cmd_tr),
        "OMP_NUM_THREADS=%d %s" % (THREADS, cmd_tr32),
        "OMP_NUM_THREADS=%d %s" % (THREADS, cmd_fit),
        "```",
    ]
    text = "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        f.write(text)
    sys.stdout.write(text)
    print("bench_python.py: wrote", out, file=sys.stderr)


def timeit_once(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


if __name__ == "__main__":
    main()
