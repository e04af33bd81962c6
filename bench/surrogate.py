# SPDX-License-Identifier: BSD-3-Clause
"""surrogate.py BUILD_DIR [--quick] [--out DIR] - rfx's surrogate models
against OpenTURNS and scikit-learn, in one run on the same data; writes a
markdown report (surrogate.md) and a plot (surrogate_error_vs_m.png).

    /usr/bin/python3 bench/surrogate.py build
    /usr/bin/python3 bench/surrogate.py build --quick     # a smoke run, ~1 min

Methods (each fit runs in a fresh worker process, one after the other, so
that its peak RSS is its own and a failure or a time-out costs one cell):

  rfx srfe      SparseRFERegressor() (lasso; penalty and weight scale chosen
                as its defaults say)
  rfx harfe     SparseRFERegressor(method="htp") (HARFE)
  rfx pce       PCERegressor, LARS, degrees 2..p chosen by corrected LOO
  rfx rff       RFFRegressor() (ridge on 1024 Gaussian random features)
  rfx bayes     BayesianRFFRegressor()
  ot pce        OpenTURNS FunctionalChaosAlgorithm, total-degree Legendre
                basis, LARS + CorrectedLeaveOneOut, each degree 2..p; the
                degree of least corrected LOO error is kept
  gp rbf        GaussianProcessRegressor(C * RBF(ones(d)) + White,
                normalize_y=True); gp matern: the same with Matern(nu=1.5)
  lassocv       LassoCV on the feature matrix of rfx srfe (same features,
                same weight scale, unit-norm columns; 5 folds, rows i mod 5)

Problems (inputs and outputs made in numpy from fixed seeds; both functions
are checked against BUILD_DIR/rfx sample first):

  1. Sobol' G-function, d = 20, a = (1, 2, 5, 10, 20, 100, 5000 x 14), U[0,1]^d:
     m = 800 training points, 1000 validation points.
  2. rfx's SRFE example, d = 10, f = (1/d) sum_{i<d-1} exp(-x_i^2) / (1 +
     x_{i+1}^2) on U[-1,1]^d: m = 250 training points, 1000 validation points.
  3. The G-function at m = 100 .. 3200 (nested training sets: the first m
     rows of one sample), against 2000 fixed validation points, of which
     problem 1's are the first 1000 (so problem 1 is the m = 800 column).

Error: |f - y|_2 / |y - mean(y)|_2 on the validation points. The GP fits
are capped in m (cost m^3 per optimiser step, d + 3 hyperparameters), as
are the other slow peers; capped cells say so. Threads: THREADS (default
2) for OpenMP, BLAS and LassoCV alike; OpenTURNS 1 (see OT_THREADS).

Output goes to bench/results (quick: BUILD_DIR/bench, so that a smoke run
never replaces the quoted results); --out DIR overrides both.
"""
import argparse
import importlib
import json
import os
import subprocess
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

G_COEFFS = [1.0, 2.0, 5.0, 10.0, 20.0, 100.0] + [5000.0] * 14
SEED_TRAIN, SEED_VAL, SEED_TRAIN2, SEED_VAL2 = 1, 2, 3, 4
MODEL_SEED = 0
# OpenTURNS runs on one thread (TBB pool and BLAS). Its LARS makes many
# small TBB and BLAS calls; with two threads each of them waits for the
# second core, and when other work holds that core a fit of 19 s (m = 800,
# degrees 2..4) took 410 s (two TBB threads) or ran for over 7 minutes at
# m = 400 (two OpenMP BLAS threads, in dtrmv under dgesdd) in trials.
OT_THREADS = 1

# method key -> (label, peer?)
METHODS = {
    "srfe": ("rfx SparseRFERegressor (lasso)", False),
    "harfe": ("rfx SparseRFERegressor (htp, HARFE)", False),
    "pce": ("rfx PCERegressor (LARS)", False),
    "rff": ("rfx RFFRegressor", False),
    "bayes": ("rfx BayesianRFFRegressor", False),
    "ot-pce": ("OpenTURNS PCE (LARS + corrected LOO)", True),
    "gp-rbf": ("sklearn GP, anisotropic RBF", True),
    "gp-matern": ("sklearn GP, anisotropic Matern 3/2", True),
    "lassocv": ("sklearn LassoCV on rfx's SRFE features", True),
}
ORDER = ["srfe", "harfe", "pce", "rff", "bayes", "ot-pce", "gp-rbf", "gp-matern", "lassocv"]


# ---------------------------------------------------------------------------
# Problems (numpy; checked against the C test functions through the CLI)
# ---------------------------------------------------------------------------

def gfunction(X):
    import numpy as np
    a = np.asarray(G_COEFFS[:X.shape[1]])
    return np.prod((np.abs(4.0 * X - 2.0) + a) / (1.0 + a), axis=1)


def srfe_function(X):
    import numpy as np
    d = X.shape[1]
    return np.sum(np.exp(-X[:, :-1] ** 2) / (1.0 + X[:, 1:] ** 2), axis=1) / d


PROBLEMS = {
    # name: (function, d, lower, upper, rfx sample name)
    "g": (gfunction, 20, 0.0, 1.0, "gfunction"),
    "srfe": (srfe_function, 10, -1.0, 1.0, "srfe"),
}


def sample(problem, seed, n):
    import numpy as np
    fn, d, lo, hi, _ = PROBLEMS[problem]
    X = lo + (hi - lo) * np.random.default_rng(seed).random((n, d))
    return X, fn(X)


def datasets(spec):
    """(X, y, [(name, Xv, yv)]) of a worker spec."""
    p, m = spec["problem"], spec["m"]
    X, y = sample(p, spec["seed_train"], spec["pool"])
    Xv, yv = sample(p, spec["seed_val"], max(spec["n_val"]))
    vals = [("val%d" % n, Xv[:n], yv[:n]) for n in spec["n_val"]]
    return X[:m].copy(), y[:m].copy(), vals


# ---------------------------------------------------------------------------
# The fits (run in a worker process)
# ---------------------------------------------------------------------------

def fit_rfx(spec, X, y):
    import numpy as np
    import rfx
    key, threads, d = spec["method"], spec["threads"], X.shape[1]
    info = {}
    if key in ("srfe", "harfe"):
        kw = {"method": "htp"} if key == "harfe" else {}
        t0 = time.perf_counter()
        r = rfx.SparseRFERegressor(random_state=MODEL_SEED, n_jobs=threads, **kw).fit(X, y)
        dt = time.perf_counter() - t0
        info = {"N": r.n_components_, "weight_scale": r.weight_scale_,
                "nonzero": r.n_nonzero_}
        if key == "srfe":
            info["alpha"] = r.alpha_
    elif key == "pce":
        _, _, lo, hi, _ = PROBLEMS[spec["problem"]]
        t0 = time.perf_counter()
        r = rfx.PCERegressor([("uniform", lo, hi)] * d, degree=spec["degrees"][-1],
                             degree_min=spec["degrees"][0], method="lars",
                             n_jobs=threads).fit(X, y)
        dt = time.perf_counter() - t0
        info = {"degree": r.degree_, "terms": int(len(r.coef_)),
                "candidates": r.n_candidates_, "loo_corrected": r.loo_corrected_}
    elif key in ("rff", "bayes"):
        cls = rfx.RFFRegressor if key == "rff" else rfx.BayesianRFFRegressor
        t0 = time.perf_counter()
        r = cls(random_state=MODEL_SEED, n_jobs=threads).fit(X, y)
        dt = time.perf_counter() - t0
        info = {"N": r.n_components, "length_scale": float(np.mean(r.length_scale_))}
    else:
        raise ValueError(key)
    return dt, r.predict, info


def corrected_loo(Psi, y):
    """Corrected leave-one-out error of least squares on the columns of Psi
    (n x P), relative to the sample variance of y (Chapelle, Vapnik & Bengio
    2002; Blatman & Sudret 2011): mean((r_i / (1 - h_i))^2) / s_y^2 times
    n / (n - P) (1 + tr((Psi^T Psi)^-1)); +inf when P >= n."""
    import numpy as np
    n, P = Psi.shape
    if P >= n:
        return float("inf")
    Q, R = np.linalg.qr(Psi)
    c = np.linalg.solve(R, Q.T @ y)
    h = np.sum(Q * Q, axis=1)
    if np.any(h >= 1 - 1e-12):
        return float("inf")
    e = (y - Psi @ c) / (1.0 - h)
    Rinv = np.linalg.inv(R)
    return float(np.mean(e * e) / np.var(y, ddof=1) * n / (n - P) *
                 (1.0 + np.sum(Rinv * Rinv)))


def fit_ot_pce(spec, X, y):
    import openturns as ot
    _, d, lo, hi, _ = PROBLEMS[spec["problem"]]
    return ot_pce(X, y, [ot.Uniform(lo, hi)] * d, spec["degrees"])


def ot_pce(X, y, marginals, degrees, polynomials=None):
    """OpenTURNS' sparse PCE (LARS + corrected LOO) of each degree in
    degrees on independent inputs with the given OpenTURNS marginals, the
    polynomials of each input orthonormal under polynomials[j] (default:
    under marginals[j]; OpenTURNS maps the input to that measure when they
    differ); the degree of least corrected LOO error is kept. Returns
    (seconds, predict, info), the seconds summed over the degrees."""
    import numpy as np
    import openturns as ot
    try:
        ot.TBB.SetThreadsNumber(OT_THREADS)
    except AttributeError:
        pass
    d = len(marginals)
    dist = ot.ComposedDistribution(list(marginals))
    enum = ot.LinearEnumerateFunction(d)
    factory = ot.OrthogonalProductPolynomialFactory(
        list(polynomials) if polynomials else
        [ot.StandardDistributionPolynomialFactory(mg) for mg in marginals], enum)
    Xs, Ys = ot.Sample(X), ot.Sample(y.reshape(-1, 1))
    best, total, per = None, 0.0, []
    for deg in degrees:
        P = enum.getStrataCumulatedCardinal(deg)
        proj = ot.LeastSquaresStrategy(
            ot.LeastSquaresMetaModelSelectionFactory(ot.LARS(), ot.CorrectedLeaveOneOut()))
        t0 = time.perf_counter()
        algo = ot.FunctionalChaosAlgorithm(Xs, Ys, dist, ot.FixedStrategy(factory, P), proj)
        algo.run()
        res = algo.getResult()
        dt = time.perf_counter() - t0
        total += dt
        # the corrected LOO of the kept terms (outside the timing: OpenTURNS
        # does not report its selection criterion as such)
        basis = res.getOrthogonalBasis()
        Z = res.getTransformation()(Xs)
        Psi = np.column_stack([np.asarray(basis.build(int(i))(Z))[:, 0]
                               for i in res.getIndices()])
        loo = corrected_loo(Psi, y)
        meta = res.getMetaModel()
        per.append({"degree": deg, "candidates": int(P), "terms": int(Psi.shape[1]),
                    "loo_corrected": loo, "seconds": dt, "meta": meta})
        if best is None or loo < best["loo_corrected"]:
            best = per[-1]

    def predict_with(meta):
        return lambda Xv: np.asarray(meta(ot.Sample(Xv)))[:, 0]

    info = {"degree": best["degree"], "terms": best["terms"],
            "loo_corrected": best["loo_corrected"], "per_degree": [
                {k: v for k, v in q.items() if k != "meta"} for q in per]}
    info["_predict_per_degree"] = [(q["degree"], predict_with(q["meta"])) for q in per]
    return total, predict_with(best["meta"]), info


def fit_gp(spec, X, y):
    import numpy as np
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern, WhiteKernel
    d = X.shape[1]
    base = (RBF(length_scale=np.ones(d)) if spec["method"] == "gp-rbf"
            else Matern(length_scale=np.ones(d), nu=1.5))
    kernel = ConstantKernel() * base + WhiteKernel()
    gp = GaussianProcessRegressor(kernel=kernel, normalize_y=True, n_restarts_optimizer=0,
                                  random_state=MODEL_SEED)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        t0 = time.perf_counter()
        gp.fit(X, y)
        dt = time.perf_counter() - t0
    n_warn = sum(1 for w in caught if issubclass(w.category, ConvergenceWarning))
    k = gp.kernel_
    ls = np.atleast_1d(k.k1.k2.length_scale)
    return dt, gp.predict, {"constant": float(k.k1.k1.constant_value),
                            "noise": float(k.k2.noise_level),
                            "length_scales": [float(v) for v in ls],
                            "convergence_warnings": n_warn}


def sin_features(X, mu, sd, N, weight_scale, threads):
    """rfx srfe's design: the q = 2 sparse sine features of the standardised
    inputs (rfx_srfe_fit's feature map, built by RandomFourierFeatures)."""
    import rfx
    Xs = (X - mu) / sd
    f = rfx.RandomFourierFeatures(N, activation="sin", sparsity=min(2, X.shape[1]),
                                  weights="normal", weight_scale=weight_scale,
                                  length_scale=1.0, random_state=MODEL_SEED,
                                  n_jobs=threads).fit(Xs)
    return f, f.transform(Xs)


def fit_lassocv(spec, X, y):
    import numpy as np
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LassoCV
    m, threads = X.shape[0], spec["threads"]
    N, s = spec["N"], spec["weight_scale"]
    k = min(5, m)
    folds = [(np.flatnonzero(np.arange(m) % k != j), np.flatnonzero(np.arange(m) % k == j))
             for j in range(k)]
    t0 = time.perf_counter()
    mu, sd = X.mean(axis=0), X.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    fmap, Z = sin_features(X, mu, sd, N, s, threads)
    norms = np.linalg.norm(Z, axis=0)
    norms = np.where(norms > 0, norms, 1.0)
    Z /= norms
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        las = LassoCV(cv=folds, n_jobs=threads, random_state=MODEL_SEED).fit(Z, y)
        dt = time.perf_counter() - t0
    n_warn = sum(1 for w in caught if issubclass(w.category, ConvergenceWarning))

    def predict(Xv):
        return las.predict(fmap.transform((Xv - mu) / sd) / norms)

    return dt, predict, {"N": N, "weight_scale": s, "alpha": float(las.alpha_),
                         "nonzero": int(np.count_nonzero(las.coef_)),
                         "convergence_warnings": n_warn}


def proc_status(key):
    """A size from /proc/self/status in bytes (VmRSS: resident now, VmHWM:
    its peak; both of this process image, unlike getrusage's ru_maxrss,
    which Linux carries across fork and exec from the parent)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def worker(spec):
    import numpy as np
    X, y, vals = datasets(spec)
    key = spec["method"]
    # the libraries a fit uses are loaded before the RSS baseline
    for mod, keys in (("sklearn", ("gp-rbf", "gp-matern", "lassocv")), ("openturns", ("ot-pce",)),
                      ("rfx", ("srfe", "harfe", "pce", "rff", "bayes", "lassocv"))):
        if key in keys:
            importlib.import_module(mod)
    limits = None
    try:
        from threadpoolctl import threadpool_limits
        limits = threadpool_limits(limits=OT_THREADS if key == "ot-pce" else spec["threads"])
    except ImportError:
        pass
    before = proc_status("VmRSS")
    if key == "ot-pce":
        dt, predict, info = fit_ot_pce(spec, X, y)
    elif key in ("gp-rbf", "gp-matern"):
        dt, predict, info = fit_gp(spec, X, y)
    elif key == "lassocv":
        dt, predict, info = fit_lassocv(spec, X, y)
    else:
        dt, predict, info = fit_rfx(spec, X, y)
    peak = proc_status("VmHWM")
    if limits is not None:
        limits.restore_original_limits()

    def errors(p, yv):
        return (float(np.linalg.norm(p - yv) / np.linalg.norm(yv - yv.mean())),
                float(np.linalg.norm(p - yv) / np.linalg.norm(yv)))

    err, err_raw = {}, {}
    for name, Xv, yv in vals:
        err[name], err_raw[name] = errors(np.asarray(predict(Xv), dtype=np.float64), yv)
    per_degree = info.pop("_predict_per_degree", None)
    if per_degree:
        name, Xv, yv = vals[-1]
        for (deg, pr), q in zip(per_degree, info["per_degree"]):
            q["error_" + name] = errors(np.asarray(pr(Xv)), yv)[0]
    return {"fit_seconds": dt, "error": err, "error_uncentred": err_raw,
            "rss_before": before, "rss_peak": peak, "info": info}


# ---------------------------------------------------------------------------
# The driver
# ---------------------------------------------------------------------------

def log(*a):
    print("surrogate.py:", *a, file=sys.stderr, flush=True)


def run_cell(spec, timeout, env):
    """Run one fit in a worker; a dict with either results or "failure"."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", json.dumps(spec)]
    penv = dict(env)
    if METHODS[spec["method"]][1]:
        # the peers run with the workplace's OpenBLAS tuning unset, as in run.sh
        penv.pop("OPENBLAS_CORETYPE", None)
        penv.pop("OPENBLAS_L2_SIZE", None)
    if spec["method"] == "ot-pce":
        for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            penv[v] = str(OT_THREADS)
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=penv, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"failure": "timed out after %d s" % timeout}
    wall = time.perf_counter() - t0
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode != 0 or not lines:
        tail = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
        return {"failure": tail[:200]}
    out = json.loads(lines[-1])
    out["wall"] = wall
    return out


def check_functions(build):
    """The numpy functions against the C library's (rfx sample prints X and
    y): the largest absolute difference over 50 points of each."""
    import numpy as np
    cli = os.path.join(build, "rfx")
    worst = 0.0
    for p, (fn, d, lo, hi, name) in PROBLEMS.items():
        out = subprocess.run([cli, "sample", name, "-n", "50", "-d", str(d), "--seed", "7"],
                             capture_output=True, text=True, check=True).stdout
        A = np.array([[float(v) for v in ln.split(",")] for ln in out.splitlines()[1:]])
        if A.shape != (50, d + 1) or A[:, :d].min() < lo or A[:, :d].max() > hi:
            sys.exit("surrogate.py: rfx sample %s gave an unexpected sample %s" % (name, A.shape))
        diff = float(np.abs(fn(A[:, :d]) - A[:, d]).max())
        if not diff <= 1e-12:
            sys.exit("surrogate.py: the numpy %s differs from rfx's by %g" % (name, diff))
        worst = max(worst, diff)
    return worst


def check_lasso_features(threads):
    """rfx srfe's model evaluated on the features sin_features() rebuilds:
    the largest difference to its predictions (should be rounding)."""
    import numpy as np
    import rfx
    X, y = sample("g", SEED_TRAIN, 100)
    r = rfx.SparseRFERegressor(random_state=MODEL_SEED, n_jobs=threads).fit(X, y)
    mu, sd = X.mean(axis=0), X.std(axis=0)
    _, Z = sin_features(X, mu, sd, r.n_components_, r.weight_scale_, threads)
    pred = r.predict(X)
    return float(np.abs(Z @ r.coef_ + r.intercept_ - pred).max() / np.abs(pred).max())


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = "?"
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    mem = "%.0f GiB" % (int(line.split()[1]) / 1048576)
    except OSError:
        pass
    return "%d cores (nproc), %s, %s; %s" % (
        len(os.sched_getaffinity(0)), cpu, mem, " ".join(os.uname()[i] for i in (0, 2, 4)))


def fmt_err(c, key="val2000"):
    if c is None:
        return "-"
    if "failure" in c:
        return "failed"
    return "%.3f" % c["error"][key]


def fmt_sec(v):
    return "%.1f s" % v if v >= 10 else "%.2f s" % v


def fmt_mib(b):
    return "%.0f MiB" % (b / 1048576.0)


def describe(key, info):
    """A short account of what a fit chose."""
    if not info:
        return ""
    if key in ("srfe", "harfe"):
        s = "N = %d, s = %g, %d nonzero" % (info["N"], info["weight_scale"], info["nonzero"])
        if "alpha" in info:
            s += ", alpha = %.2g" % info["alpha"]
        return s
    if key in ("pce", "ot-pce"):
        return "degree %d, %d terms, corrected LOO %.3g" % (
            info["degree"], info["terms"], info["loo_corrected"])
    if key in ("rff", "bayes"):
        return "N = %d, length scale %.3g" % (info["N"], info["length_scale"])
    if key.startswith("gp"):
        w = info.get("convergence_warnings", 0)
        ls = sorted(info["length_scales"])
        return "length scales %.2g .. %.2g, noise %.1e%s" % (
            ls[0], ls[-1], info["noise"],
            ", %d optimiser warnings" % w if w else "")
    if key == "lassocv":
        w = info.get("convergence_warnings", 0)
        return "N = %d, s = %g, %d nonzero, alpha = %.2g%s" % (
            info["N"], info["weight_scale"], info["nonzero"], info["alpha"],
            ", %d convergence warnings" % w if w else "")
    return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    ap.add_argument("--quick", action="store_true", help="a smoke run (~1 minute)")
    ap.add_argument("--out", help="directory for surrogate.md and surrogate_error_vs_m.png")
    ap.add_argument("--methods", help="comma-separated subset of: " + ", ".join(ORDER))
    ap.add_argument("--budget", type=float,
                    help="seconds after which no further peer fit is started (default "
                    "2400, quick 600); the cells left say so")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        json.dump(worker(json.loads(args.worker)), sys.stdout)
        sys.stdout.write("\n")
        return

    build = os.path.abspath(args.build)
    lib = os.path.join(build, "librfx.so")
    if not os.path.isfile(lib) or not os.path.isfile(os.path.join(build, "rfx")):
        sys.exit("surrogate.py: %s or %s/rfx not found; build first (cmake --build %s)"
                 % (lib, build, build))
    threads = int(os.environ.get("THREADS", "2"))
    env = dict(os.environ)
    env.setdefault("RFX_LIBRARY", lib)
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[v] = str(threads)
    os.environ.update({k: env[k] for k in ("RFX_LIBRARY", "PYTHONPATH", "OMP_NUM_THREADS")})
    sys.path.insert(0, os.path.join(ROOT, "python"))

    methods = ORDER if not args.methods else [k for k in ORDER if k in args.methods.split(",")]
    if args.methods and len(methods) != len(args.methods.split(",")):
        sys.exit("surrogate.py: --methods takes a comma-separated subset of " + ", ".join(ORDER))
    if "lassocv" in methods and "srfe" not in methods:
        methods = ["srfe"] + methods  # LassoCV takes srfe's weight scale
    quick = args.quick
    out_dir = os.path.abspath(args.out or (os.path.join(build, "bench") if quick
                                           else os.path.join(HERE, "results")))

    # sizes and caps
    if quick:
        ms, m1, m2 = [100, 200], 100, 100
        caps = {"gp-rbf": 100, "gp-matern": 100, "ot-pce": 200, "lassocv": 200}
        g_degrees, s_degrees, timeout = [2, 3], [2, 3], 300
    else:
        ms, m1, m2 = [100, 200, 400, 800, 1600, 3200], 800, 250
        caps = {"gp-rbf": 800, "gp-matern": 800, "ot-pce": 800, "lassocv": 800}
        g_degrees, s_degrees, timeout = [2, 3, 4], [2, 3, 4, 5], 1200
    budget = args.budget if args.budget is not None else (600 if quick else 2400)
    n_val_g = [1000, 2000]
    pool = max(ms)

    t_start = time.perf_counter()
    fdiff = check_functions(build)
    log("numpy G-function and SRFE example agree with rfx sample (max |diff| %.1e)" % fdiff)
    import numpy as np
    import rfx
    import sklearn
    try:
        import openturns
        ot_version = openturns.__version__
    except ImportError:
        ot_version = None
        methods = [k for k in methods if k != "ot-pce"]
        log("OpenTURNS is not installed (python3-openturns): its column is skipped")
    feat_diff = check_lasso_features(threads) if "lassocv" in methods else float("nan")

    cells = {}  # (problem, method, m) -> result
    plan = [("srfe", m2)] + [("g", m) for m in sorted(set(ms) | {m1})]
    todo = [(p, m, k) for p, m in plan for k in methods]
    for i, (p, m, k) in enumerate(todo):
        cap = caps.get(k)
        if p == "g" and cap is not None and m > cap:
            cells[(p, k, m)] = {"skipped": "m > %d" % cap}
            continue
        if METHODS[k][1] and time.perf_counter() - t_start > budget:
            cells[(p, k, m)] = {"skipped": "over the run's time budget of %.0f s" % budget}
            log("[%d/%d] %s m=%d %s skipped: over the time budget" % (i + 1, len(todo), p, m, k))
            continue
        spec = {"problem": p, "method": k, "m": m, "threads": threads,
                "seed_train": SEED_TRAIN if p == "g" else SEED_TRAIN2,
                "seed_val": SEED_VAL if p == "g" else SEED_VAL2,
                "pool": pool if p == "g" else m,
                "n_val": n_val_g if p == "g" else [1000],
                "degrees": g_degrees if p == "g" else s_degrees}
        if k == "lassocv":
            s = cells.get((p, "srfe", m), {})
            if "info" not in s:
                cells[(p, k, m)] = {"failure": "needs rfx srfe's weight scale (srfe failed)"}
                continue
            spec["N"], spec["weight_scale"] = s["info"]["N"], s["info"]["weight_scale"]
        log("[%d/%d] %s m=%d %s ..." % (i + 1, len(todo), p, m, k))
        r = run_cell(spec, timeout, env)
        cells[(p, k, m)] = r
        if "failure" in r:
            log("    %s m=%d %s FAILED: %s" % (p, m, k, r["failure"]))
        else:
            log("    error %.4f, fit %.2f s, peak RSS %s (%.0f s elapsed)" % (
                r["error"][sorted(r["error"])[-1]], r["fit_seconds"], fmt_mib(r["rss_peak"]),
                time.perf_counter() - t_start))
    total = time.perf_counter() - t_start

    # ---- the report -------------------------------------------------------
    cmd = "/usr/bin/python3 bench/surrogate.py %s%s%s" % (
        args.build, " --quick" if quick else "", " --out %s" % args.out if args.out else "")
    if args.methods:
        cmd += " --methods %s" % args.methods
    L = ["# rfx surrogate benchmark", "",
         "rfx %s (library %s) against OpenTURNS %s and scikit-learn %s (numpy %s), same "
         "machine, same run, same data%s." % (
             rfx.library_version(), rfx.library_path, ot_version or "(not installed)",
             sklearn.__version__, np.__version__, " (QUICK smoke run)" if quick else ""),
         "Machine: %s. Date: %s. Threads: %d (OpenMP, BLAS, LassoCV's n_jobs), except "
         "OpenTURNS: %d (TBB and BLAS; with 2, its LARS waited on the second core whenever "
         "other work held it: 19 s became 410 s at m = 800 in a trial). The machine is shared "
         "with other work, so times are noisy. Total run time %.0f s." % (
             machine(), time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), threads,
             OT_THREADS, total),
         "Command: `%s`." % cmd, "",
         "Error: the relative validation error |f - y|_2 / |y - mean(y)|_2 (1 = predicting "
         "the mean). Fit time: wall clock of the fit call alone (features, cross-validation "
         "and model selection included; data generation and prediction excluded). Every fit "
         "runs in a fresh worker process; peak RSS is that process's VmHWM from "
         "/proc/self/status read after the fit (Python, numpy, the libraries and the data "
         "included), and 'fit growth' is how far the fit raised it above the RSS (VmRSS) just "
         "before the fit.", ""]

    def cell(p, k, m):
        return cells.get((p, k, m))

    def problem_table(p, m, valkey, ref_key="srfe", raw=False):
        ref = cell(p, ref_key, m)
        ref_t = ref.get("fit_seconds") if ref else None
        head = "| method | error |" + (" \\|f - y\\| / \\|y\\| |" if raw else "") + \
            " fit time | time / rfx srfe | peak RSS | fit growth | chosen |"
        L.append(head)
        L.append("| --- | ---: |" + (" ---: |" if raw else "") +
                 " ---: | ---: | ---: | ---: | --- |")
        for k in methods:
            c = cell(p, k, m)
            if c is None:
                continue
            if "skipped" in c or "failure" in c:
                why = c.get("skipped") or "failed: " + c["failure"]
                L.append("| %s | %s |%s | | | | | |" % (
                    METHODS[k][0], "skipped (%s)" % why if "skipped" in c else why,
                    " |" if raw else ""))
                continue
            t = c["fit_seconds"]
            L.append("| %s | %.3f |%s %s | %s | %s | %s | %s |" % (
                METHODS[k][0], c["error"][valkey],
                " %.4f |" % c["error_uncentred"][valkey] if raw else "", fmt_sec(t),
                "%.2f" % (t / ref_t) if ref_t else "n/a", fmt_mib(c["rss_peak"]),
                fmt_mib(max(0, c["rss_peak"] - c["rss_before"])), describe(k, c["info"])))

    L += ["## 1. Sobol' G-function, d = 20, m = %d training points, 1000 validation points" % m1,
          "", "a = (1, 2, 5, 10, 20, 100, 5000 x 14), inputs U[0,1]^20. rfx and OpenTURNS PCE: "
          "degrees %s. The validation points are the first 1000 of problem 3's." % (
              ", ".join(map(str, g_degrees))), ""]
    problem_table("g", m1, "val1000")
    L += ["", "## 2. The SRFE example, d = 10, m = %d training points, 1000 validation points"
          % m2, "",
          "f(x) = (1/d) sum_{i=0}^{d-2} exp(-x_i^2) / (1 + x_{i+1}^2) on U[-1,1]^10, as rfx "
          "defines it (rfx_testfn SRFE, `rfx sample srfe`; nine terms, the 1/d = 1/10 "
          "factor). PCE degrees %s. Both the centred error and |f - y|_2 / |y|_2 (y is far "
          "from 0 here, so the second is much smaller)." % ", ".join(map(str, s_degrees)), ""]
    problem_table("srfe", m2, "val1000", raw=True)

    L += ["", "## 3. G-function: error against m (2000 fixed validation points)", "",
          "Training sets are nested (the first m rows of one sample of %d). Each cell: "
          "error / fit time. '-' marks a fit not run: the GP with RBF kernel only up to m = %d, "
          "with Matern 3/2 up to m = %d, OpenTURNS up to m = %d, LassoCV up to m = %d. The GP "
          "costs m^3 per optimiser step; in trial runs on this shared 2-core machine the fits "
          "of OpenTURNS (degrees 2..4), the Matern GP and LassoCV at m = 1600 each took more "
          "than 9 minutes, so these caps keep the whole run near half an hour.%s" % (
              pool, caps["gp-rbf"], caps["gp-matern"], caps["ot-pce"], caps["lassocv"],
              " 'skipped (budget)': not started because the run had passed --budget."
              if any("budget" in c.get("skipped", "") for c in cells.values()) else ""), ""]
    L.append("| method | " + " | ".join("m = %d" % m for m in ms) + " |")
    L.append("| --- |" + " ---: |" * len(ms))
    for k in methods:
        row = []
        for m in ms:
            c = cell("g", k, m)
            if c is None or "skipped" in c:
                row.append("skipped (budget)" if c and "budget" in c["skipped"] else "-")
            elif "failure" in c:
                row.append("failed")
            else:
                row.append("%.3f / %s" % (c["error"]["val2000"], fmt_sec(c["fit_seconds"])))
        L.append("| %s | %s |" % (METHODS[k][0], " | ".join(row)))
    png = os.path.join(out_dir, "surrogate_error_vs_m.png")
    plotted = plot(cells, methods, ms, png)
    if plotted:
        L += ["", "![error against m](%s)" % os.path.basename(png)]

    # OpenTURNS per degree, problem 1
    c = cell("g", "ot-pce", m1)
    if c and "info" in c:
        L += ["", "OpenTURNS at m = %d, each degree (the corrected LOO chooses; the error is on "
              "the 2000 validation points): %s." % (m1, "; ".join(
                  "degree %d: %d of %d candidates kept, corrected LOO %.3g, error %.3f, %s" % (
                      q["degree"], q["terms"], q["candidates"], q["loo_corrected"],
                      q["error_val2000"], fmt_sec(q["seconds"]))
                  for q in c["info"]["per_degree"]))]

    failures = [(p, k, m, c["failure"]) for (p, k, m), c in cells.items() if "failure" in c]
    L += ["", "## How each method was run", "",
          "- rfx SparseRFERegressor(random_state=0) with the defaults of this build (%s); "
          "N, the weight scale s and the penalty it chose are in the tables. method=\"htp\" "
          "is HARFE with its default sparsity." % ", ".join(
              "%s=%r" % kv for kv in sorted(rfx.SparseRFERegressor().get_params().items())
              if kv[0] not in ("random_state", "n_jobs")),
          "- rfx PCERegressor: the exact uniform marginals, method=\"lars\", degree_min..degree "
          "as above (the corrected LOO chooses). Degree 5 in d = 20 has 53130 candidates, "
          "above rfx's default max_candidates of 50000, which PCERegressor does not expose; "
          "so both PCEs stop at degree 4 there.",
          "- rfx RFFRegressor / BayesianRFFRegressor(random_state=0): defaults (1024 Gaussian "
          "features, length scale and penalty / variances chosen automatically).",
          "- OpenTURNS: FunctionalChaosAlgorithm, total-degree basis (LinearEnumerateFunction) "
          "of Legendre polynomials under the exact uniform marginals, LeastSquaresStrategy("
          "LeastSquaresMetaModelSelectionFactory(LARS(), CorrectedLeaveOneOut())), one fit per "
          "degree; the time is their sum. The degree is chosen by the corrected LOO error of "
          "the kept terms, computed here in numpy with the formula of rfx/pce.h (outside the "
          "timing).",
          "- scikit-learn GaussianProcessRegressor(ConstantKernel() * RBF(ones(d)) + "
          "WhiteKernel(), normalize_y=True, n_restarts_optimizer=0), and the same with "
          "Matern(ones(d), nu=1.5); default bounds and L-BFGS-B optimiser.",
          "- scikit-learn LassoCV (defaults: 100 alphas, n_jobs=%d) on the feature matrix that "
          "rfx srfe builds at the same m: RandomFourierFeatures(N, activation=\"sin\", "
          "sparsity=2, weights=\"normal\", weight_scale=<srfe's choice>, length_scale=1, "
          "random_state=0) of the inputs standardised on the training rows, columns scaled "
          "to unit norm, its CV folds rows i mod 5. Check: srfe's coefficients on these "
          "features reproduce its predictions to %.1e (relative)%s. Its time includes the "
          "features but not srfe's choice of weight scale." % (
              threads, feat_diff, "" if feat_diff <= 1e-9 else
              " - NOT the same features: this build's srfe changed its feature map"),
          "- Data: numpy, U[lo, hi] from numpy.random.default_rng seeds %d (training) and %d "
          "(validation) for problems 1 and 3, %d and %d for problem 2; both functions agree "
          "with `rfx sample` to %.1e." % (SEED_TRAIN, SEED_VAL, SEED_TRAIN2, SEED_VAL2, fdiff),
          "- Peers run with OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset (as bench/run.sh); "
          "rfx keeps the environment's."]
    if failures:
        L += ["", "Failed fits:"] + ["- %s m=%d %s: %s" % (p, m, k, f) for p, k, m, f in failures]
    text = "\n".join(L) + "\n"
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "surrogate.md")
    with open(path, "w") as f:
        f.write(text)
    with open(os.path.join(build, "surrogate_cells.json"), "w") as f:
        json.dump({"%s %s %d" % key: c for key, c in cells.items()}, f, indent=1)
    sys.stdout.write(text)
    log("wrote %s%s in %.0f s" % (path, " and " + png if plotted else "", total))


def plot(cells, methods, ms, png):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib is not installed (Debian: python3-matplotlib): no plot")
        return False
    from matplotlib.ticker import NullFormatter
    fig, ax = plt.subplots(figsize=(10.5, 5.5))
    markers = "osD^vP*Xh"
    for i, k in enumerate(methods):
        pts = [(m, cells[("g", k, m)]["error"]["val2000"]) for m in ms
               if "error" in cells.get(("g", k, m), {})]
        if pts:
            ax.plot(*zip(*pts), "--" if METHODS[k][1] else "-", marker=markers[i % 9],
                    label=METHODS[k][0])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(ms)
    ax.set_xticklabels([str(m) for m in ms])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("training points m")
    ax.set_ylabel("relative validation error |f - y| / |y - mean y|")
    ax.set_title("Sobol' G-function, d = 20 (2000 validation points; dashed: peers)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    os.makedirs(os.path.dirname(png), exist_ok=True)
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return True


if __name__ == "__main__":
    main()
