# SPDX-License-Identifier: BSD-3-Clause
"""projection.py BUILD_DIR [--quick] [--out DIR] - the self-supervised
projection (rfx.projection.ProjectedRegressor, rfx_projected_fit) against
rfx's sparse random features and polynomial chaos and scikit-learn's
anisotropic Gaussian processes, in one run on the same data; writes a
markdown report (projection.md) and a plot (projection_error_vs_m.png).

    /usr/bin/python3 bench/projection.py build
    /usr/bin/python3 bench/projection.py build --quick    # a smoke run, ~1 min

Methods (each fit runs in a fresh worker process, one after the other):

  projected        ProjectedRegressor(random_state=0): ridge surrogate on the
                   scores, k and gamma chosen, 10 particles, at most 20
                   iterations, patience 5
  projected-srfe   the same with surrogate="srfe"
  srfe             SparseRFERegressor(random_state=0) (its defaults)
  pce              PCERegressor, LARS; degrees 2..4 (d = 20) or 2..3 with
                   q_norm 0.75 (d = 100: the full degree-3 basis has 176851
                   candidates), the degree by corrected leave-one-out
  gp-matern        GaussianProcessRegressor(C * Matern(ones(d), nu=1.5) +
                   White, normalize_y=True); gp-rbf: the same with RBF

Problems (numpy, fixed seeds):

  g   Sobol' G-function, d = 20, a = (1, 2, 5, 10, 20, 100, 5000 x 14),
      U[0,1]^20 (the data of bench/surrogate.py: default_rng seeds 1 for
      training, nested, and 2 for 1000 validation points); checked against
      `rfx sample gfunction`.
  f   Friedman #1 embedded in d = 100: y = 10 sin(pi x0 x1) + 20 (x2 -
      1/2)^2 + 10 x3 + 5 x4, no noise, x ~ U[0,1]^100 (95 inputs inactive);
      default_rng seeds 5 (training, nested) and 6 (1000 validation points).

Each problem at m = 100, 200, 400, 800, 1600 (g) and 100, 200, 500, 1000,
1600 (f); the issue's cases are g at m = 800 and f at m = 500. Error:
|f - y|_2 / |y - mean(y)|_2 on the validation points. Time: the fit call's
wall clock and its process CPU time (time.process_time, all threads).
Threads: THREADS (default 2) for OpenMP and BLAS. The GPs stop at m = 800
on g; on f (102 hyperparameters) the Matern GP runs at m = 100 only and
the RBF GP not at all: each optimiser step costs m^3 and d + 3
hyperparameters' gradients (the Matern GP at m = 500 had not finished
after 13 minutes).

Output goes to bench/results (quick: BUILD_DIR/bench); --out DIR overrides.
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
MODEL_SEED = 0

# method key -> (label, peer?)
METHODS = {
    "projected": ("rfx ProjectedRegressor (ridge on the scores)", False),
    "projected-srfe": ("rfx ProjectedRegressor (srfe on the scores)", False),
    "srfe": ("rfx SparseRFERegressor", False),
    "pce": ("rfx PCERegressor (LARS)", False),
    "gp-matern": ("sklearn GP, anisotropic Matern 3/2", True),
    "gp-rbf": ("sklearn GP, anisotropic RBF", True),
}
ORDER = ["projected", "projected-srfe", "srfe", "pce", "gp-matern", "gp-rbf"]


# ---------------------------------------------------------------------------
# Problems
# ---------------------------------------------------------------------------

def gfunction(X):
    import numpy as np
    a = np.asarray(G_COEFFS[:X.shape[1]])
    return np.prod((np.abs(4.0 * X - 2.0) + a) / (1.0 + a), axis=1)


def friedman100(X):
    import numpy as np
    return (10.0 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20.0 * (X[:, 2] - 0.5) ** 2 +
            10.0 * X[:, 3] + 5.0 * X[:, 4])


PROBLEMS = {
    # name: (title, function, d, seed_train, seed_val, main m)
    "g": ("Sobol' G-function, d = 20", gfunction, 20, 1, 2, 800),
    "f": ("Friedman #1 in d = 100 (inputs 0..4 active)", friedman100, 100, 5, 6, 500),
}
SHORT = {"g": "G-function, d = 20", "f": "Friedman #1, d = 100, 5 active"}


def sample(problem, seed, n):
    import numpy as np
    _, fn, d, _, _, _ = PROBLEMS[problem]
    X = np.random.default_rng(seed).random((n, d))
    return X, fn(X)


# ---------------------------------------------------------------------------
# The fits (run in a worker process)
# ---------------------------------------------------------------------------

def fit_one(spec, X, y):
    import numpy as np
    key, threads, d = spec["method"], spec["threads"], X.shape[1]
    info = {}
    if key.startswith("projected"):
        from rfx.projection import ProjectedRegressor
        r = ProjectedRegressor(surrogate="srfe" if key == "projected-srfe" else "ridge",
                               random_state=MODEL_SEED, n_jobs=threads)
        t0, c0 = time.perf_counter(), time.process_time()
        r.fit(X, y)
        dt, ct = time.perf_counter() - t0, time.process_time() - c0
        th = r.theta_
        info = {"k": r.n_components_, "gamma": r.gamma_, "loss": r.loss_,
                "iterations": r.n_iterations_, "evaluations": r.n_evaluations_,
                "theta_top": [int(i) for i in np.argsort(-th)[:8]],
                "theta_sorted": [float(v) for v in np.sort(th)[::-1][:8]],
                "active": int(np.count_nonzero(th > 0.01))}
        return dt, ct, r.predict, info
    import rfx
    if key == "srfe":
        r = rfx.SparseRFERegressor(random_state=MODEL_SEED, n_jobs=threads)
        t0, c0 = time.perf_counter(), time.process_time()
        r.fit(X, y)
        dt, ct = time.perf_counter() - t0, time.process_time() - c0
        info = {"N": r.n_components_, "q": r.sparsity_, "nonzero": r.n_nonzero_}
    elif key == "pce":
        kw = dict(degree=4, degree_min=2) if d <= 20 else dict(degree=3, degree_min=2,
                                                               q_norm=0.75)
        r = rfx.PCERegressor([("uniform", 0.0, 1.0)] * d, method="lars", n_jobs=threads, **kw)
        t0, c0 = time.perf_counter(), time.process_time()
        r.fit(X, y)
        dt, ct = time.perf_counter() - t0, time.process_time() - c0
        info = {"degree": r.degree_, "terms": int(len(r.coef_)), "candidates": r.n_candidates_}
    elif key.startswith("gp"):
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern, WhiteKernel
        base = (RBF(length_scale=np.ones(d)) if key == "gp-rbf"
                else Matern(length_scale=np.ones(d), nu=1.5))
        r = GaussianProcessRegressor(kernel=ConstantKernel() * base + WhiteKernel(),
                                     normalize_y=True, random_state=MODEL_SEED)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            t0, c0 = time.perf_counter(), time.process_time()
            r.fit(X, y)
            dt, ct = time.perf_counter() - t0, time.process_time() - c0
        ls = np.sort(np.atleast_1d(r.kernel_.k1.k2.length_scale))
        info = {"ls_min": float(ls[0]), "ls_5th": float(ls[min(4, d - 1)]),
                "warnings": sum(1 for w in caught if issubclass(w.category, ConvergenceWarning))}
    else:
        raise ValueError(key)
    return dt, ct, r.predict, info


def worker(spec):
    import numpy as np
    p, m = spec["problem"], spec["m"]
    X, y = sample(p, PROBLEMS[p][3], spec["pool"])
    Xv, yv = sample(p, PROBLEMS[p][4], 1000)
    X, y = X[:m].copy(), y[:m].copy()
    importlib.import_module("rfx")
    if spec["method"].startswith("gp"):
        importlib.import_module("sklearn.gaussian_process")
    limits = None
    try:
        from threadpoolctl import threadpool_limits
        limits = threadpool_limits(limits=spec["threads"])
    except ImportError:
        pass
    dt, ct, predict, info = fit_one(spec, X, y)
    if limits is not None:
        limits.restore_original_limits()
    pred = np.asarray(predict(Xv), dtype=np.float64)
    err = float(np.linalg.norm(pred - yv) / np.linalg.norm(yv - yv.mean()))
    return {"fit_seconds": dt, "cpu_seconds": ct, "error": err, "info": info}


# ---------------------------------------------------------------------------
# The driver
# ---------------------------------------------------------------------------

def log(*a):
    print("projection.py:", *a, file=sys.stderr, flush=True)


def run_cell(spec, timeout, env):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", json.dumps(spec)]
    penv = dict(env)
    if METHODS[spec["method"]][1]:
        penv.pop("OPENBLAS_CORETYPE", None)
        penv.pop("OPENBLAS_L2_SIZE", None)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=penv, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"failure": "timed out after %d s" % timeout}
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode != 0 or not lines:
        tail = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
        return {"failure": tail[:200]}
    return json.loads(lines[-1])


def check_gfunction(build):
    """The numpy G-function against `rfx sample gfunction`: the largest
    absolute difference over 50 points."""
    import numpy as np
    out = subprocess.run([os.path.join(build, "rfx"), "sample", "gfunction", "-n", "50",
                          "--seed", "7"], capture_output=True, text=True, check=True).stdout
    A = np.array([[float(v) for v in ln.split(",")] for ln in out.splitlines()[1:]])
    diff = float(np.abs(gfunction(A[:, :20]) - A[:, 20]).max())
    if not diff <= 1e-12:
        sys.exit("projection.py: the numpy G-function differs from rfx's by %g" % diff)
    return diff


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
    return "%d cores (nproc), %s" % (len(os.sched_getaffinity(0)), cpu)


def fmt_sec(v):
    return "%.1f s" % v if v >= 10 else "%.2f s" % v


def describe(key, info):
    if key.startswith("projected"):
        return "k = %d, gamma = %.3g, %d inputs with theta > 0.01 (largest: %s), %d evaluations" % (
            info["k"], info["gamma"], info["active"], ", ".join(
                "x%d %.2f" % (i, v) for i, v in zip(info["theta_top"][:5],
                                                    info["theta_sorted"][:5])),
            info["evaluations"])
    if key == "srfe":
        return "N = %d, q = %d, %d nonzero" % (info["N"], info["q"], info["nonzero"])
    if key == "pce":
        return "degree %d, %d of %d candidates" % (info["degree"], info["terms"],
                                                   info["candidates"])
    if key.startswith("gp"):
        return "length scales from %.2g (5th smallest %.2g)%s" % (
            info["ls_min"], info["ls_5th"],
            ", %d optimiser warnings" % info["warnings"] if info["warnings"] else "")
    return ""


def plot(cells, methods, sizes, png):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib is not installed (Debian: python3-matplotlib): no plot")
        return False
    from matplotlib.ticker import NullFormatter
    fig, axes = plt.subplots(2, 2, figsize=(12, 8.5))
    markers = "osD^vP"
    for col, p in enumerate(["g", "f"]):
        ms = sizes[p]
        for row, (field, ylabel) in enumerate([
                ("error", "relative validation error |f - y| / |y - mean y|"),
                ("fit_seconds", "fit time (wall clock, s)")]):
            ax = axes[row][col]
            for i, k in enumerate(methods):
                pts = [(m, cells[(p, k, m)][field]) for m in ms
                       if field in cells.get((p, k, m), {})]
                if pts:
                    ax.plot(*zip(*pts), "--" if METHODS[k][1] else "-",
                            marker=markers[i % len(markers)], label=METHODS[k][0])
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xticks(ms)
            ax.set_xticklabels([str(m) for m in ms])
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_xlabel("training points m")
            ax.set_ylabel(ylabel)
            ax.grid(True, which="both", alpha=0.3)
            if row == 0:
                ax.set_title(SHORT[p] + " (1000 validation points)")
    handles, labels = [], []
    for ax in axes[0]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=3)
    fig.suptitle("The self-supervised projection against its peers (dashed: scikit-learn)")
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    os.makedirs(os.path.dirname(png), exist_ok=True)
    fig.savefig(png, dpi=100)
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    ap.add_argument("--quick", action="store_true", help="a smoke run (~1 minute)")
    ap.add_argument("--out", help="directory for projection.md and projection_error_vs_m.png")
    ap.add_argument("--methods", help="comma-separated subset of: " + ", ".join(ORDER))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        json.dump(worker(json.loads(args.worker)), sys.stdout)
        sys.stdout.write("\n")
        return

    build = os.path.abspath(args.build)
    lib = os.path.join(build, "librfx.so")
    if not os.path.isfile(lib) or not os.path.isfile(os.path.join(build, "rfx")):
        sys.exit("projection.py: %s or %s/rfx not found; build first" % (lib, build))
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
        sys.exit("projection.py: --methods takes a comma-separated subset of " + ", ".join(ORDER))
    quick = args.quick
    out_dir = os.path.abspath(args.out or (os.path.join(build, "bench") if quick
                                           else os.path.join(HERE, "results")))
    # the largest m of each GP: in d = 100 the GPs' fits (102 hyperparameters)
    # took 86 s (Matern) and 122 s (RBF) at m = 100, and the Matern GP had
    # not finished after 13 minutes at m = 500; so the Matern GP runs at
    # m = 100 only there, the RBF GP not at all
    if quick:
        sizes = {"g": [100, 200], "f": [100, 200]}
        caps = {("g", "gp-matern"): 100, ("g", "gp-rbf"): 100}
        timeout = 300
    else:
        sizes = {"g": [100, 200, 400, 800, 1600], "f": [100, 200, 500, 1000, 1600]}
        caps = {("g", "gp-matern"): 800, ("g", "gp-rbf"): 800, ("f", "gp-matern"): 100}
        timeout = 1200

    t_start = time.perf_counter()
    fdiff = check_gfunction(build)
    log("numpy G-function agrees with rfx sample (max |diff| %.1e)" % fdiff)
    import numpy as np
    import rfx
    import sklearn

    cells = {}
    todo = [(p, m, k) for p in ("g", "f") for m in sizes[p] for k in methods]
    for i, (p, m, k) in enumerate(todo):
        if k.startswith("gp") and m > caps.get((p, k), 0):
            cells[(p, k, m)] = {"skipped": "not run at this m (see below)"}
            continue
        spec = {"problem": p, "method": k, "m": m, "threads": threads, "pool": max(sizes[p])}
        log("[%d/%d] %s m=%d %s ..." % (i + 1, len(todo), p, m, k))
        r = run_cell(spec, timeout, env)
        cells[(p, k, m)] = r
        if "failure" in r:
            log("    FAILED: %s" % r["failure"])
        else:
            log("    error %.4f, fit %.2f s wall, %.2f s CPU (%.0f s elapsed)" % (
                r["error"], r["fit_seconds"], r["cpu_seconds"], time.perf_counter() - t_start))
    total = time.perf_counter() - t_start

    cmd = "/usr/bin/python3 bench/projection.py %s%s%s" % (
        args.build, " --quick" if quick else "", " --out %s" % args.out if args.out else "")
    if args.methods:
        cmd += " --methods %s" % args.methods
    L = ["# rfx self-supervised projection benchmark", "",
         "rfx %s (library %s) against scikit-learn %s (numpy %s), same machine, same run, "
         "same data%s." % (rfx.library_version(), rfx.library_path, sklearn.__version__,
                           np.__version__, " (QUICK smoke run)" if quick else ""),
         "Machine: %s. Date: %s. Threads: %d (OpenMP and BLAS). The machine is shared with "
         "other work, so wall times are noisy; CPU time (time.process_time of the fitting "
         "process, all threads) is given beside them. Total run time %.0f s." % (
             machine(), time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), threads, total),
         "Command: `%s`." % cmd, "",
         "Error: |f - y|_2 / |y - mean(y)|_2 on 1000 validation points (1 = predicting the "
         "mean). Fit time: the fit call alone, in a fresh worker process per fit.", ""]

    def cell(p, k, m):
        return cells.get((p, k, m))

    for n, p in enumerate(("g", "f")):
        title, _, d, s_tr, s_va, m0 = PROBLEMS[p]
        ref = cell(p, "srfe", m0)
        L += ["## %d. %s, m = %d" % (n + 1, title, m0), ""]
        if p == "g":
            L += ["a = (1, 2, 5, 10, 20, 100, 5000 x 14), inputs U[0,1]^20, default_rng seeds "
                  "%d (training) and %d (validation), the data of bench/surrogate.py." % (
                      s_tr, s_va), ""]
        else:
            L += ["y = 10 sin(pi x0 x1) + 20 (x2 - 1/2)^2 + 10 x3 + 5 x4 (no noise), inputs "
                  "U[0,1]^100: 95 inputs do not enter y. default_rng seeds %d (training) and "
                  "%d (validation)." % (s_tr, s_va), ""]
        L.append("| method | error | fit time (wall) | CPU time | wall / srfe | chosen |")
        L.append("| --- | ---: | ---: | ---: | ---: | --- |")
        for k in methods:
            c = cell(p, k, m0)
            if c is None:
                continue
            if "skipped" in c or "failure" in c:
                L.append("| %s | %s | | | | |" % (
                    METHODS[k][0], "skipped (%s)" % c["skipped"] if "skipped" in c
                    else "failed: " + c["failure"]))
                continue
            rt = ref.get("fit_seconds") if ref and "fit_seconds" in ref else None
            L.append("| %s | %.3f | %s | %s | %s | %s |" % (
                METHODS[k][0], c["error"], fmt_sec(c["fit_seconds"]), fmt_sec(c["cpu_seconds"]),
                "%.2f" % (c["fit_seconds"] / rt) if rt else "n/a", describe(k, c["info"])))
        gp_caps = ["the %s GP %s" % (k[3:].replace("matern", "Matern").replace("rbf", "RBF"),
                                     "up to m = %d" % caps[(p, k)] if (p, k) in caps
                                     else "not at all")
                   for k in methods if k.startswith("gp")]
        why = ("; '-': not run: %s (each GP optimiser step costs m^3 and the gradients of "
               "d + 3 hyperparameters)" % ", ".join(gp_caps)) if gp_caps else ""
        L += ["", "Error / wall time / CPU time against m (training sets nested%s):" % why, ""]
        L.append("| method | " + " | ".join("m = %d" % m for m in sizes[p]) + " |")
        L.append("| --- |" + " ---: |" * len(sizes[p]))
        for k in methods:
            row = []
            for m in sizes[p]:
                c = cell(p, k, m)
                if c is None or "skipped" in c:
                    row.append("-")
                elif "failure" in c:
                    row.append("failed")
                else:
                    row.append("%.3f / %s / %s" % (c["error"], fmt_sec(c["fit_seconds"]),
                                                   fmt_sec(c["cpu_seconds"])))
            L.append("| %s | %s |" % (METHODS[k][0], " | ".join(row)))
        L.append("")
    png = os.path.join(out_dir, "projection_error_vs_m.png")
    if plot(cells, methods, sizes, png):
        L += ["![error and fit time against m](%s)" % os.path.basename(png), ""]
    failures = [(p, k, m, c["failure"]) for (p, k, m), c in cells.items() if "failure" in c]
    L += ["## How each method was run", "",
          "- rfx ProjectedRegressor(random_state=0, n_jobs=%d): its defaults (screening of the "
          "inputs one at a time for theta_0; gamma and k chosen at theta_0 from gamma in "
          "10^-2.5..1 and k in 1..8 by the fast score; a swarm of 10 particles, at most 20 "
          "iterations, patience 5, particles evaluated concurrently; ridge on 1000 random "
          "features of the scores; or surrogate=\"srfe\", 4000 features, with the finalists: "
          "the swarm's theta, theta_0 and the second screening round's, each with 3 or 4 kernel "
          "scales and 2 k, chosen by SRFE's own GCV)." % threads,
          "- rfx SparseRFERegressor(random_state=0): its defaults (N = 30 m within [1000, "
          "30000], q, the weight scale and the penalty chosen by GCV).",
          "- rfx PCERegressor: the exact uniform marginals, LARS, degree_min 2; degree 4 for "
          "d = 20, degree 3 with q_norm 0.75 (main effects to degree 3 and pairs of degree-1 "
          "terms) for d = 100.",
          "- scikit-learn GaussianProcessRegressor(ConstantKernel() * Matern(ones(d), nu=1.5) "
          "+ WhiteKernel(), normalize_y=True), and the same with RBF; default bounds, one "
          "L-BFGS-B run.",
          "- Data: numpy, U[0,1]^d from numpy.random.default_rng; the G-function agrees with "
          "`rfx sample gfunction` to %.1e." % fdiff]
    if failures:
        L += ["", "Failed fits:"] + ["- %s m=%d %s: %s" % (p, m, k, f) for p, k, m, f in failures]
    text = "\n".join(L) + "\n"
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "projection.md")
    with open(path, "w") as f:
        f.write(text)
    with open(os.path.join(build, "projection_cells.json"), "w") as f:
        json.dump({"%s %s %d" % key: c for key, c in cells.items()}, f, indent=1)
    sys.stdout.write(text)
    log("wrote %s in %.0f s" % (path, total))


if __name__ == "__main__":
    main()
