# SPDX-License-Identifier: BSD-3-Clause
"""surrogate_seeds.py BUILD_DIR [options] - rfx's surrogates against
OpenTURNS and scikit-learn over many fresh training seeds: the median and
the worst validation error and fit time of each method on each benchmark
function (never the best seed). Writes surrogate_seeds.md and
surrogate_seeds.json (and with --plot surrogate_error_vs_m_seeds.png).

    /usr/bin/python3 bench/surrogate_seeds.py build                # 10 seeds, every case
    /usr/bin/python3 bench/surrogate_seeds.py build --seeds 2 --cases ishigami,borehole \\
        --out /tmp/sseeds                                           # a smoke run
    /usr/bin/python3 bench/surrogate_seeds.py build --resume       # finish a cut-off run
    /usr/bin/python3 bench/surrogate_seeds.py build --resume --tables-only  # tables of the JSON

Cases (the training size m; inputs from the function's input distribution):

  g          Sobol' G-function, d = 20, a = (1, 2, 5, 10, 20, 100, 5000 x 14), m = 800
  ishigami   Ishigami (a = 7, b = 0.1), d = 3, m = 500
  borehole   borehole, d = 8, m = 200
  friedman1  Friedman #1 in d = 100 (x_5.. inert), m = 500
  otl        the OTL circuit, d = 6, m = 200
  wingweight the wing weight function, d = 10, m = 200

Data: `BUILD_DIR/rfx sample FUNCTION -n N --seed S -o FILE.csv`; training
seeds 1001..1000+N, validation seeds 2001..2000+N (1000 points each), so
that every method sees the same files (the Python peers read them with
numpy). Each numpy implementation is checked against `rfx sample` first.

Methods (each fit in its own process, with a time limit; a fit that runs
over it is killed and its cell reported as timed out):

  auto       rfx fit DATA -o M --method auto (the candidate table it prints
             on stderr is kept; the chosen method and transform are counted)
  srfe       rfx fit DATA -o M --method srfe
  projected  rfx fit DATA -o M --method projected
  pce        rfx fit DATA -o M --method pce
  ot-pce     OpenTURNS FunctionalChaosAlgorithm, total-degree basis, LARS +
             CorrectedLeaveOneOut, each degree 2..P, the degree of least
             corrected LOO error kept (bench/surrogate.py's code; the exact
             input marginals)
  gp         scikit-learn GaussianProcessRegressor(ConstantKernel() *
             Matern(ones(d), nu=1.5) + WhiteKernel(), normalize_y=True) on
             the inputs standardised by the training rows' mean and std

Error: |f - y|_2 / |y - mean(y)|_2 on the validation points. Time: wall
clock of the fit; for rfx that of the `rfx fit` process, which includes
starting it and reading the CSV (a few milliseconds at these sizes: rfx's
own fit time is kept beside it). Peak RSS: the fit process's (rfx: its
maximum resident set size from /usr/bin/time; peers: VmHWM of the worker,
Python and the libraries included). Threads: THREADS (default 2) for
OpenMP (rfx) and BLAS (peers); OpenTURNS on 1 (see OT_THREADS in
bench/surrogate.py).

Results go to DIR/surrogate_seeds.json after every fit (a cut-off run keeps
what it finished; --resume skips the cells already there) and the tables
to DIR/surrogate_seeds.md; DIR is bench/results unless --out says.
"""
import argparse
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import surrogate  # noqa: E402  (the OpenTURNS and GP fits, the RSS probe)

TRAIN_SEED0, VAL_SEED0 = 1001, 2001
N_VAL = 1000
PLOT_MS = [100, 200, 400, 800, 1600]
PLOT_METHODS = ["auto", "srfe", "ot-pce", "gp"]
# the largest total degree of the OpenTURNS PCE: the largest P <= 10 whose
# total-degree basis has at most this many terms (G, d = 20: P = 4, 10626
# terms, as bench/surrogate.py)
OT_MAX_TERMS = 12000

METHODS = {
    # key: (label, rfx CLI?)
    "auto": ("rfx --method auto", True),
    "srfe": ("rfx --method srfe", True),
    "projected": ("rfx --method projected", True),
    "pce": ("rfx --method pce", True),
    "ot-pce": ("OpenTURNS PCE (LARS, corrected LOO)", False),
    "gp": ("sklearn GP, ARD Matern 3/2", False),
}
ORDER = ["auto", "srfe", "projected", "pce", "ot-pce", "gp"]


# ---------------------------------------------------------------------------
# The functions in numpy (checked against rfx sample) and their inputs
# ---------------------------------------------------------------------------

def ishigami(X, a=7.0, b=0.1):
    import numpy as np
    return np.sin(X[:, 0]) + a * np.sin(X[:, 1]) ** 2 + b * X[:, 2] ** 4 * np.sin(X[:, 0])


def borehole(X):
    import numpy as np
    rw, r, Tu, Hu, Tl, Hl, L, Kw = X.T
    lr = np.log(r / rw)
    return 2 * np.pi * Tu * (Hu - Hl) / (lr * (1 + 2 * L * Tu / (lr * rw ** 2 * Kw) + Tu / Tl))


def friedman1(X):
    import numpy as np
    return (10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] +
            5 * X[:, 4])


def otl(X):
    Rb1, Rb2, Rf, Rc1, Rc2, beta = X.T
    vb1 = 12 * Rb2 / (Rb1 + Rb2)
    B = beta * (Rc2 + 9)
    return ((vb1 + 0.74) * B / (B + Rf) + 11.35 * Rf / (B + Rf) +
            0.74 * Rf * B / ((B + Rf) * Rc1))


def wingweight(X):
    import numpy as np
    Sw, Wfw, A, Lam, q, lam, tc, Nz, Wdg, Wp = X.T
    c = np.cos(np.deg2rad(Lam))
    return (0.036 * Sw ** 0.758 * Wfw ** 0.0035 * (A / c ** 2) ** 0.6 * q ** 0.006 *
            lam ** 0.04 * (100 * tc / c) ** -0.3 * (Nz * Wdg) ** 0.49 + Sw * Wp)


def uniforms(bounds):
    return [("uniform", lo, hi) for lo, hi in bounds]


OTL_BOUNDS = [(50, 150), (25, 70), (0.5, 3), (1.2, 2.5), (0.25, 1.2), (50, 300)]
WING_BOUNDS = [(150, 200), (220, 300), (6, 10), (-10, 10), (16, 45), (0.5, 1), (0.08, 0.18),
               (2.5, 6), (1700, 2500), (0.025, 0.08)]
BOREHOLE_INPUTS = ([("normal", 0.10, 0.0161812), ("lognormal", 7.71, 1.0056)] +
                   uniforms([(63070, 115600), (990, 1110), (63.1, 116), (700, 820),
                             (1120, 1680), (9855, 12045)]))

# key: label, rfx sample name, d, m, numpy function, input marginals
CASES = {
    "g": ("Sobol' G-function, d = 20", "gfunction", 20, 800, surrogate.gfunction,
          uniforms([(0, 1)] * 20)),
    "ishigami": ("Ishigami, d = 3", "ishigami", 3, 500, ishigami,
                 uniforms([(-math.pi, math.pi)] * 3)),
    "borehole": ("borehole, d = 8", "borehole", 8, 200, borehole, BOREHOLE_INPUTS),
    "friedman1": ("Friedman #1, d = 100", "friedman1", 100, 500, friedman1,
                  uniforms([(0, 1)] * 100)),
    "otl": ("OTL circuit, d = 6", "otl", 6, 200, otl, uniforms(OTL_BOUNDS)),
    "wingweight": ("wing weight, d = 10", "wingweight", 10, 200, wingweight,
                   uniforms(WING_BOUNDS)),
}
CASE_ORDER = ["g", "ishigami", "borehole", "friedman1", "otl", "wingweight"]
PLOT_CASE = "g"  # the cells of the plot are (g, method, m, seed)


def ot_degrees(d):
    """2..P, P the largest <= 10 with C(d + P, P) <= OT_MAX_TERMS (at least 2)."""
    P = 2
    while P < 10 and math.comb(d + P + 1, P + 1) <= OT_MAX_TERMS:
        P += 1
    return list(range(2, P + 1))


def read_csv(path):
    """(X, y) of a CSV that rfx sample wrote (header x0..x<d-1>, y)."""
    import numpy as np
    A = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    return A[:, :-1].copy(), A[:, -1].copy()


def rel_error(pred, y):
    import numpy as np
    return float(np.linalg.norm(pred - y) / np.linalg.norm(y - y.mean()))


# ---------------------------------------------------------------------------
# The peers (in a worker process)
# ---------------------------------------------------------------------------

def worker(spec):
    import numpy as np
    X, y = read_csv(spec["train"])
    Xv, yv = read_csv(spec["val"])
    key = spec["method"]
    if key == "ot-pce":
        import openturns as ot
    else:
        import sklearn.gaussian_process  # noqa: F401  (loaded before the RSS baseline)
    limits = None
    try:
        from threadpoolctl import threadpool_limits
        limits = threadpool_limits(limits=surrogate.OT_THREADS if key == "ot-pce"
                                   else spec["threads"])
    except ImportError:
        pass
    before = surrogate.proc_status("VmRSS")
    if key == "ot-pce":
        marg, poly = [], []
        for kind, a, b in spec["marginals"]:
            if kind == "uniform":
                marg.append(ot.Uniform(a, b))
                poly.append(ot.StandardDistributionPolynomialFactory(marg[-1]))
            elif kind == "normal":
                marg.append(ot.Normal(a, b))
                poly.append(ot.StandardDistributionPolynomialFactory(marg[-1]))
            else:
                # Hermite polynomials of (ln x - a) / b: the lognormal's own
                # orthogonal polynomials are ill-conditioned
                marg.append(ot.LogNormal(a, b, 0.0))
                poly.append(ot.HermiteFactory())
        dt, predict, info = surrogate.ot_pce(X, y, marg, spec["degrees"], poly)
        info.pop("_predict_per_degree", None)
    else:
        # inputs standardised on the training rows (borehole's range from
        # 0.05 to 1e5; the kernel starts at unit length scales): on the raw
        # inputs the fit stays at the mean (error 1.00 on borehole)
        mu, sd = X.mean(axis=0), X.std(axis=0)
        sd = np.where(sd > 0, sd, 1.0)
        dt, predict_z, info = surrogate.fit_gp({"method": "gp-matern"}, (X - mu) / sd, y)

        def predict(Xv):
            return predict_z((Xv - mu) / sd)
    peak = surrogate.proc_status("VmHWM")
    if limits is not None:
        limits.restore_original_limits()
    pred = np.asarray(predict(Xv), dtype=np.float64).ravel()
    return {"fit_seconds": dt, "error": rel_error(pred, yv), "rss_peak": peak,
            "rss_before": before, "info": info}


# ---------------------------------------------------------------------------
# Running one cell
# ---------------------------------------------------------------------------

def log(*a):
    print("surrogate_seeds.py:", *a, file=sys.stderr, flush=True)


def run_limited(cmd, env, timeout):
    """(returncode, stdout, stderr, seconds) of cmd in its own process group,
    or None when it ran over timeout seconds (the whole group is killed)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return None
    return p.returncode, out, err, time.perf_counter() - t0


def parse_auto(text):
    """The chosen method and transform and the candidate table of rfx fit
    --method auto's report."""
    m = re.search(r"^chosen\s+(\S+) on the (\S+) target", text, re.M)
    lines = text.splitlines()
    table = [ln for ln in lines if ln.startswith("  ")]
    return {"chosen_method": m.group(1) if m else "?",
            "chosen_transform": m.group(2) if m else "?", "candidates": table}


def run_rfx(build, method, train, val, work, env, timeout):
    model = os.path.join(work, "model.rfx")
    pred_csv = os.path.join(work, "pred.csv")
    rss_file = os.path.join(work, "rss.txt")
    for f in (model, pred_csv, rss_file):
        if os.path.exists(f):
            os.remove(f)
    cli = os.path.join(build, "rfx")
    cmd = ["/usr/bin/time", "-f", "%M", "-o", rss_file, cli, "fit", train, "-o", model,
           "--method", method]
    r = run_limited(cmd, env, timeout)
    if r is None:
        return {"failure": "timed out", "timeout": timeout}
    rc, _, err, wall = r
    if rc != 0:
        tail = [ln for ln in err.strip().splitlines() if ln.strip()] or ["exit %d" % rc]
        return {"failure": tail[-1][:200]}
    with open(rss_file) as f:
        rss_kib = int(f.read().split()[-1])
    m = re.search(r"^time\s+([0-9.]+) s", err, re.M)
    info = {"rfx_seconds": float(m.group(1)) if m else None}
    if method == "auto":
        info.update(parse_auto(err))
    p = run_limited([cli, "predict", model, val, "-o", pred_csv], env, timeout)
    if p is None or p[0] != 0:
        return {"failure": "rfx predict failed: " + (p[2].strip()[-200:] if p else "timed out")}
    import numpy as np
    pred = np.loadtxt(pred_csv, delimiter=",", skiprows=1, ndmin=2)[:, 0]
    _, yv = read_csv(val)
    return {"fit_seconds": wall, "error": rel_error(pred, yv), "rss_peak": rss_kib * 1024,
            "info": info}


def run_peer(method, case, train, val, env, timeout, threads):
    d = CASES[case][2]
    spec = {"method": method, "train": train, "val": val, "threads": threads,
            "marginals": CASES[case][5], "degrees": ot_degrees(d)}
    penv = dict(env)
    # the workplace's OpenBLAS tuning unset for the peers, as in run.sh
    penv.pop("OPENBLAS_CORETYPE", None)
    penv.pop("OPENBLAS_L2_SIZE", None)
    if method == "ot-pce":
        for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            penv[v] = str(surrogate.OT_THREADS)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", json.dumps(spec)]
    r = run_limited(cmd, penv, timeout)
    if r is None:
        return {"failure": "timed out", "timeout": timeout}
    rc, out, err, _ = r
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    if rc != 0 or not lines:
        tail = [ln for ln in err.strip().splitlines() if ln.strip()] or ["exit %d" % rc]
        return {"failure": tail[-1][:200]}
    return json.loads(lines[-1])


# ---------------------------------------------------------------------------
# Data and checks
# ---------------------------------------------------------------------------

def sample_file(build, data_dir, case, n, seed):
    """The CSV of rfx sample for (case, n, seed), made once."""
    name, d = CASES[case][1], CASES[case][2]
    path = os.path.join(data_dir, "%s_n%d_s%d.csv" % (case, n, seed))
    if not os.path.exists(path):
        subprocess.run([os.path.join(build, "rfx"), "sample", name, "-n", str(n), "-d", str(d),
                        "--seed", str(seed), "-o", path], check=True, capture_output=True)
    return path


def check_functions(build, cases):
    """Each numpy function against rfx sample at 50 points: the largest
    difference relative to max(1, |y|)."""
    import numpy as np
    worst = 0.0
    for c in cases:
        _, name, d, _, fn, marg = CASES[c]
        out = subprocess.run([os.path.join(build, "rfx"), "sample", name, "-n", "50", "-d",
                              str(d), "--seed", "7"], capture_output=True, text=True,
                             check=True).stdout
        A = np.array([[float(v) for v in ln.split(",")] for ln in out.splitlines()[1:]])
        if A.shape != (50, d + 1):
            sys.exit("surrogate_seeds.py: rfx sample %s gave shape %s" % (name, A.shape))
        for j, (kind, lo, hi) in enumerate(marg):
            if kind == "uniform" and not (A[:, j].min() >= lo and A[:, j].max() <= hi):
                sys.exit("surrogate_seeds.py: rfx sample %s: input %d outside [%g, %g]"
                         % (name, j, lo, hi))
        y = A[:, d]
        diff = float(np.max(np.abs(fn(A[:, :d]) - y) / np.maximum(1.0, np.abs(y))))
        if not diff <= 1e-12:
            sys.exit("surrogate_seeds.py: the numpy %s differs from rfx's by %g" % (name, diff))
        worst = max(worst, diff)
    return worst


# ---------------------------------------------------------------------------
# Results: the JSON file and the tables
# ---------------------------------------------------------------------------

def cell_key(case, method, m, seed):
    return "%s|%s|%d|%d" % (case, method, m, seed)


def save_json(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
    os.replace(tmp, path)


def stats(cells):
    """Median and worst of error and time over the seeds; a failed or timed
    out seed counts as an infinite error and time (so it is the worst)."""
    inf = float("inf")
    errs = sorted(c.get("error", inf) for c in cells)
    times = sorted(c.get("fit_seconds", inf) for c in cells)
    rss = [c["rss_peak"] for c in cells if "rss_peak" in c]

    def median(v):
        n = len(v)
        if n == 0:
            return None
        return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])

    return {"n": len(cells), "failed": sum(1 for c in cells if "failure" in c),
            "timed_out": sum(1 for c in cells if c.get("failure") == "timed out"),
            "err_median": median(errs), "err_worst": errs[-1] if errs else None,
            "time_median": median(times), "time_worst": times[-1] if times else None,
            "rss_worst": max(rss) if rss else None}


def fmt_err(v, why="failed"):
    if v is None:
        return "n/a"
    return why if math.isinf(v) else ("%.4f" % v if v >= 1e-3 else "%.3g" % v)


def fmt_sec(v, why="failed"):
    if v is None:
        return "n/a"
    if math.isinf(v):
        return why
    return "%.1f s" % v if v >= 10 else "%.2f s" % v


def fmt_mib(b):
    return "n/a" if b is None else "%.0f MiB" % (b / 1048576.0)


def choices(cells):
    """Counts of auto's chosen method / transform."""
    counts = {}
    for c in cells:
        info = c.get("info") or {}
        if "chosen_method" in info:
            k = "%s / %s" % (info["chosen_method"], info["chosen_transform"])
            counts[k] = counts.get(k, 0) + 1
    return ", ".join("%s x%d" % kv for kv in sorted(counts.items(), key=lambda kv: -kv[1]))


def describe(method, cells):
    if method == "auto":
        return choices(cells)
    if method == "ot-pce":
        degs = sorted(c["info"]["degree"] for c in cells if "info" in c)
        return "degrees chosen: %s" % ", ".join(map(str, degs)) if degs else ""
    if method in ("srfe", "projected", "pce"):
        v = [c["fit_seconds"] - c["info"]["rfx_seconds"] for c in cells
             if "info" in c and c["info"].get("rfx_seconds") is not None]
        if v:
            return "process wall - rfx's own fit time: median %.3f s" % sorted(v)[len(v) // 2]
    if method == "gp":
        w = sum(c["info"].get("convergence_warnings", 0) for c in cells if "info" in c)
        return "%d optimiser warnings in all" % w if w else ""
    return ""


def goal_line(name, checks):
    """One summary line: MET when every (what, value, op, bound) holds,
    MISSED when one fails, NOT RUN when a value is missing."""
    parts, state = [], "MET"
    for what, v, op, bound in checks:
        if v is None or bound is None:
            parts.append("%s n/a" % what)
            state = "NOT RUN" if state == "MET" else state
            continue
        # a failed measure never meets its goal, even against failed peers
        ok = not math.isinf(v) and (v <= bound if op == "<=" else v < bound)
        parts.append("%s %s (goal %s %s: %s)" % (
            what, "%.4g" % v if not math.isinf(v) else "inf (seeds failed)", op,
            "%.4g" % bound if not math.isinf(bound) else "inf (the peers' seeds failed)",
            "met" if ok else "missed"))
        if not ok:
            state = "MISSED"
    return "- **%s** %s: %s" % (state, name, "; ".join(parts))


def report(doc, cases, methods, n_seeds, out_dir, plot_png):
    res = doc["results"]
    meta = doc["meta"]
    seeds = list(range(n_seeds))

    def cells_of(case, method, m):
        return [res[k] for k in (cell_key(case, method, m, TRAIN_SEED0 + i) for i in seeds)
                if k in res]

    L = ["# rfx surrogate benchmark over training seeds", "",
         "rfx %s (%s) against OpenTURNS %s and scikit-learn %s (numpy %s), same machine, "
         "same data, same run." % (meta["rfx_version"], meta["build"], meta["ot_version"],
                                   meta["sklearn_version"], meta["numpy_version"]),
         "Machine: %s. Date: %s. The machine is shared with other work, so times are noisy."
         % (meta["machine"], meta["date"]),
         "Command: `%s`." % meta["command"], "",
         "Each case is fitted on %d training sets (`rfx sample FUNCTION -n m --seed S`, S = "
         "%d..%d) and validated on %d fresh points per seed (seeds %d..%d). Error: "
         "|f - y|_2 / |y - mean(y)|_2 on the validation points; median and worst over the "
         "seeds (a failed or timed-out seed counts as the worst). Time: wall clock of the fit; "
         "for rfx that of the `rfx fit` process, so it includes starting the process and "
         "reading the CSV, which is negligible at these sizes (the difference to rfx's own fit "
         "time is shown for srfe, projected and pce). Peak RSS: the worst over the seeds of "
         "the fit process's peak (rfx: maximum resident set size by /usr/bin/time; peers: "
         "the worker's VmHWM, Python and the libraries included). Threads: %d for rfx "
         "(OpenMP) and the peers' BLAS; OpenTURNS on %d. Time limit per fit: %d s." % (
             n_seeds, TRAIN_SEED0, TRAIN_SEED0 + n_seeds - 1, N_VAL, VAL_SEED0,
             VAL_SEED0 + n_seeds - 1, meta["threads"], surrogate.OT_THREADS, meta["timeout"]),
         ""]
    summary = {}
    for case in cases:
        label, name, d, m = CASES[case][:4]
        L += ["## %s, m = %d (`rfx sample %s`)" % (label, m, name), "",
              "| method | median error | worst error | median time | worst time | peak RSS "
              "| seeds | notes |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
        for k in methods:
            cs = cells_of(case, k, m)
            if not cs:
                continue
            s = stats(cs)
            summary[(case, k)] = s
            note = describe(k, cs)
            if s["failed"]:
                fails = sorted(set(c["failure"] for c in cs if "failure" in c))
                note = "; ".join(filter(None, [note, "%d failed: %s" % (
                    s["failed"], "; ".join(fails))]))
            why = "timed out" if s["timed_out"] == s["failed"] else "failed"
            L.append("| %s | %s | %s | %s | %s | %s | %d | %s |" % (
                METHODS[k][0], fmt_err(s["err_median"], why), fmt_err(s["err_worst"], why),
                fmt_sec(s["time_median"], why), fmt_sec(s["time_worst"], why),
                fmt_mib(s["rss_worst"]),
                s["n"], note))
        if "ot-pce" in methods:
            L += ["", "OpenTURNS degrees %s." % ", ".join(map(str, ot_degrees(d)))]
        L.append("")

    def get(case, k, what):
        s = summary.get((case, k))
        return None if s is None else s[what]

    L += ["## Goals", ""]
    if "g" in cases:
        L.append(goal_line("G-function, rfx auto", [
            ("median error", get("g", "auto", "err_median"), "<=", 0.05),
            ("worst error", get("g", "auto", "err_worst"), "<=", 0.06),
            ("median time", get("g", "auto", "time_median"), "<=", 10.0)]))
        L.append(goal_line("G-function, rfx projected (no options)", [
            ("median error", get("g", "projected", "err_median"), "<=", 0.065),
            ("worst error", get("g", "projected", "err_worst"), "<=", 0.08),
            ("median time", get("g", "projected", "time_median"), "<=", 15.0)]))
        L.append(goal_line("G-function, rfx srfe", [
            ("median error", get("g", "srfe", "err_median"), "<=", 0.09),
            ("median time", get("g", "srfe", "time_median"), "<=", 3.0)]))
    for case in cases:
        peers = [v for v in (get(case, "ot-pce", "err_median"), get(case, "gp", "err_median"))
                 if v is not None]
        gp_t = get(case, "gp", "time_median")
        L.append(goal_line("%s, rfx auto against the peers" % CASES[case][0], [
            ("median error", get(case, "auto", "err_median"), "<=",
             min(peers) if len(peers) == 2 else None),
            ("median time", get(case, "auto", "time_median"), "<=",
             None if gp_t is None else gp_t / 2)]))
    L += ["", "The bound of auto's median error is min(OpenTURNS PCE median, GP median); that "
          "of its median time half the GP's median time. A median over seeds of which half or "
          "more failed or timed out is infinite.", ""]

    if plot_png:
        L += ["## G-function: error against m", "",
              "Median over the seeds (line) and min-max band; the GP up to m = %d. "
              "Median error / median time per cell:" % meta["gp_max_m"], "",
              "| method | " + " | ".join("m = %d" % m for m in PLOT_MS) + " |",
              "| --- |" + " ---: |" * len(PLOT_MS)]
        for k in PLOT_METHODS:
            if k not in methods:
                continue
            row = []
            for m in PLOT_MS:
                cs = cells_of(PLOT_CASE, k, m)
                if not cs:
                    row.append("-")
                    continue
                s = stats(cs)
                row.append("%s / %s" % (fmt_err(s["err_median"]), fmt_sec(s["time_median"])))
            L.append("| %s | %s |" % (METHODS[k][0], " | ".join(row)))
        L += ["", "![error against m](%s)" % os.path.basename(plot_png), ""]

    L += ["## How each method was run", "",
          "- rfx: `OMP_NUM_THREADS=%d rfx fit TRAIN.csv -o MODEL --method METHOD` with no other "
          "option, then `rfx predict MODEL VAL.csv -o PRED.csv` (not timed). auto's notes count "
          "the method / target transform it chose over the seeds; its candidate tables are in "
          "surrogate_seeds.json." % meta["threads"],
          "- OpenTURNS: FunctionalChaosAlgorithm with the exact input marginals, total-degree "
          "basis (Legendre for uniform, Hermite for normal inputs; Hermite in (ln x - mu) / "
          "sigma for borehole's lognormal r), LeastSquaresStrategy(LeastSquaresMetaModel"
          "SelectionFactory(LARS(), CorrectedLeaveOneOut())), one fit per degree 2..P (P the "
          "largest <= 10 whose basis has at most %d terms; Friedman #1 in d = 100 gets degree 2 "
          "only, 5151 terms, as degree 3 has 176851); the degree of least corrected LOO is kept "
          "and the time is the sum over the degrees (bench/surrogate.py's ot_pce)." % OT_MAX_TERMS,
          "- scikit-learn GaussianProcessRegressor(ConstantKernel() * Matern(length_scale="
          "ones(d), nu=1.5) + WhiteKernel(), normalize_y=True, n_restarts_optimizer=0); default "
          "bounds and L-BFGS-B; the inputs standardised by the training rows' mean and "
          "standard deviation (on borehole's raw inputs, which span 0.05 to 1e5, the fit stays "
          "at the mean: error 1.00).",
          "- The numpy implementations of the functions agree with `rfx sample` to %.1e "
          "(relative to max(1, |y|), 50 points each)." % meta["function_check"],
          "- Peers run with OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset (as bench/run.sh); rfx "
          "keeps the environment's.", ""]
    text = "\n".join(L)
    path = os.path.join(out_dir, "surrogate_seeds.md")
    with open(path, "w") as f:
        f.write(text)
    return path, text


def plot(doc, methods, n_seeds, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.ticker import NullFormatter
    res = doc["results"]
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for k in PLOT_METHODS:
        if k not in methods:
            continue
        ms, med, lo, hi = [], [], [], []
        for m in PLOT_MS:
            errs = [res[key]["error"] for key in (
                cell_key(PLOT_CASE, k, m, TRAIN_SEED0 + i) for i in range(n_seeds))
                if key in res and "error" in res[key]]
            if errs:
                ms.append(m)
                med.append(float(np.median(errs)))
                lo.append(min(errs))
                hi.append(max(errs))
        if not ms:
            continue
        line, = ax.plot(ms, med, "--" if not METHODS[k][1] else "-", marker="o",
                        label=METHODS[k][0])
        ax.fill_between(ms, lo, hi, color=line.get_color(), alpha=0.2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(PLOT_MS)
    ax.set_xticklabels([str(m) for m in PLOT_MS])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("training points m")
    ax.set_ylabel("relative validation error |f - y| / |y - mean y|")
    ax.set_title("Sobol' G-function, d = 20: median and min-max over %d seeds "
                 "(dashed: peers)" % n_seeds)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------------------
# The driver
# ---------------------------------------------------------------------------

def machine():
    return surrogate.machine()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    ap.add_argument("--seeds", type=int, default=10, help="training seeds per case (default 10)")
    ap.add_argument("--cases", help="comma-separated subset of: " + ", ".join(CASE_ORDER))
    ap.add_argument("--methods", help="comma-separated subset of: " + ", ".join(ORDER))
    ap.add_argument("--plot", action="store_true",
                    help="also the G-function at m = %s (methods %s) and the plot" % (
                        ", ".join(map(str, PLOT_MS)), ", ".join(PLOT_METHODS)))
    ap.add_argument("--gp-max-m", type=int, default=800,
                    help="the largest m of the GP in the plot (default 800)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the results in DIR/surrogate_seeds.json and run only the "
                    "cells missing from it")
    ap.add_argument("--tables-only", action="store_true",
                    help="run nothing: write the tables of the cells in the JSON (with --resume)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per fit (default 600)")
    ap.add_argument("--out", help="directory of the results (default bench/results)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        json.dump(worker(json.loads(args.worker)), sys.stdout)
        sys.stdout.write("\n")
        return

    build = os.path.abspath(args.build)
    cli = os.path.join(build, "rfx")
    if not os.path.isfile(cli):
        sys.exit("surrogate_seeds.py: %s not found; build first (cmake --build %s)"
                 % (cli, args.build))
    if not os.access("/usr/bin/time", os.X_OK):
        sys.exit("surrogate_seeds.py: /usr/bin/time (Debian: time) measures rfx's peak RSS")
    if args.seeds < 1:
        sys.exit("surrogate_seeds.py: --seeds must be >= 1")
    cases = CASE_ORDER if not args.cases else args.cases.split(",")
    methods = ORDER if not args.methods else args.methods.split(",")
    for c in cases:
        if c not in CASES:
            sys.exit("surrogate_seeds.py: unknown case '%s' (%s)" % (c, ", ".join(CASE_ORDER)))
    for k in methods:
        if k not in METHODS:
            sys.exit("surrogate_seeds.py: unknown method '%s' (%s)" % (k, ", ".join(ORDER)))
    cases = [c for c in CASE_ORDER if c in cases]
    methods = [k for k in ORDER if k in methods]
    threads = int(os.environ.get("THREADS", "2"))
    env = dict(os.environ)
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[v] = str(threads)
    out_dir = os.path.abspath(args.out or os.path.join(HERE, "results"))
    os.makedirs(out_dir, exist_ok=True)
    json_path = os.path.join(out_dir, "surrogate_seeds.json")

    import numpy as np
    import sklearn
    try:
        import openturns
        ot_version = openturns.__version__
    except ImportError:
        ot_version = "(not installed)"
        if "ot-pce" in methods:
            methods.remove("ot-pce")
            log("OpenTURNS is not installed (python3-openturns): its rows are skipped")
    fcheck = check_functions(build, sorted(set(cases) | ({PLOT_CASE} if args.plot else set())))
    log("the numpy functions agree with rfx sample (max relative diff %.1e)" % fcheck)
    version = subprocess.run([cli, "--version"], capture_output=True,
                             text=True).stdout.strip().splitlines()
    cmd = "/usr/bin/python3 bench/surrogate_seeds.py " + " ".join(sys.argv[1:])
    doc = {"results": {}}
    if args.resume and os.path.exists(json_path):
        with open(json_path) as f:
            doc = json.load(f)
        log("resuming: %d cells in %s" % (len(doc["results"]), json_path))
    if args.tables_only and "meta" in doc:
        cmd = doc["meta"]["command"] + " (tables: " + cmd + ")"
    doc["meta"] = {"rfx_version": version[0] if version else "?", "build": build,
                   "ot_version": ot_version, "sklearn_version": sklearn.__version__,
                   "numpy_version": np.__version__, "machine": machine(),
                   "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                   "command": cmd, "threads": threads, "timeout": args.timeout,
                   "gp_max_m": args.gp_max_m, "function_check": fcheck,
                   "n_val": N_VAL, "train_seed0": TRAIN_SEED0, "val_seed0": VAL_SEED0}

    # the plan: (case, method, m, seed index), case by case
    plan = []
    for c in cases:
        plan += [(c, k, CASES[c][3], i) for i in range(args.seeds) for k in methods]
    if args.plot:
        plan += [(PLOT_CASE, k, m, i) for m in PLOT_MS for i in range(args.seeds)
                 for k in PLOT_METHODS if k in methods and not (k == "gp" and m > args.gp_max_m)
                 and not (m == CASES[PLOT_CASE][3] and PLOT_CASE in cases)]
    data_dir = tempfile.mkdtemp(prefix="rfx-sseeds-")
    t_start = time.perf_counter()
    try:
        for j, (c, k, m, i) in enumerate(plan):
            key = cell_key(c, k, m, TRAIN_SEED0 + i)
            if key in doc["results"] or args.tables_only:
                continue
            train = sample_file(build, data_dir, c, m, TRAIN_SEED0 + i)
            val = sample_file(build, data_dir, c, N_VAL, VAL_SEED0 + i)
            if METHODS[k][1]:
                r = run_rfx(build, k, train, val, data_dir, env, args.timeout)
            else:
                r = run_peer(k, c, train, val, env, args.timeout, threads)
            doc["results"][key] = r
            save_json(json_path, doc)
            if "failure" in r:
                log("[%d/%d] %s: FAILED: %s" % (j + 1, len(plan), key, r["failure"]))
            else:
                log("[%d/%d] %s: error %.4f, fit %.2f s, peak RSS %.0f MiB%s (%.0f s elapsed)" % (
                    j + 1, len(plan), key, r["error"], r["fit_seconds"],
                    r["rss_peak"] / 1048576.0,
                    ", chose %s / %s" % (r["info"]["chosen_method"],
                                         r["info"]["chosen_transform"])
                    if k == "auto" else "", time.perf_counter() - t_start))
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    doc["meta"]["run_seconds"] = time.perf_counter() - t_start
    save_json(json_path, doc)
    png = None
    if args.plot:
        png = os.path.join(out_dir, "surrogate_error_vs_m_seeds.png")
        plot(doc, methods, args.seeds, png)
    path, text = report(doc, cases, methods, args.seeds, out_dir, png)
    sys.stdout.write(text)
    log("wrote %s and %s%s in %.0f s" % (path, json_path, " and " + png if png else "",
                                         doc["meta"]["run_seconds"]))


if __name__ == "__main__":
    warnings.simplefilter("default")
    main()
