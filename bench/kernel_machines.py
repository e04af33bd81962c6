# SPDX-License-Identifier: BSD-3-Clause
"""kernel_machines.py BUILD_DIR [--quick] [--out DIR] [--parts 1,2,3,4] - rfx's
kernel machines and classifiers against scikit-learn, in one run, on the same
data; writes a markdown report (kernel_machines.md).

    /usr/bin/python3 bench/kernel_machines.py build
    /usr/bin/python3 bench/kernel_machines.py build --quick    # a smoke run, ~2 min

Parts (every measurement runs in a fresh worker process, one after the other,
so that its peak RSS is its own and a failure or a time-out costs one cell):

  1. Classification on scikit-learn's digits and breast cancer data
     (standardised on the training rows; a stratified 70/30 split, seed 0):
     the exact kernel machines (SVC, KernelRidge on +-1 codes, scikit-learn's
     and rfx's), and linear models on D random features or D Nystroem
     landmarks: RBFSampler + LogisticRegression / LinearSVC / RidgeClassifier,
     Nystroem + LogisticRegression (scikit-learn's and rfx's Nystroem), rfx
     RFFClassifier (logistic and hinge losses; iid, orthogonal and SORF
     frequencies; and the least-squares loss, RidgeClassifier's model).
  2. Covertype-like synthetic data (make_classification: 54 features, 20
     informative, class_sep 1, seed 0; 10^5 and 10^6 training rows, 10^4
     test rows): rfx RFFClassifier against RBFSampler + LogisticRegression /
     LinearSVC / RidgeClassifier (10^5 rows) or RBFSampler + SGDClassifier
     fed in row chunks (10^6 rows, where the 10^6 x D feature matrix would
     take 8 GB); SVC on a subset of 2 x 10^4 rows.
  3. Regression (make_friedman1, 10 inputs, noise 0.5): rfx KernelRidge and
     GaussianProcessRegressor against scikit-learn's, with the same fixed
     kernel, penalty and noise; they solve the same problem, so the largest
     difference of their predictions is printed.
  4. Nystroem features: fit and transform time at equal n_components, and
     the kernel approximation error |K - Z Z^T|_F / |K|_F of each.

One Gaussian kernel exp(-gamma |x - y|^2) per data set, gamma = scikit-learn's
'scale' value 1 / (d Var(X_train)) computed once and given to every method.
Threads: THREADS (default 2) for OpenMP, BLAS and rfx's n_jobs in parts 2 to
4, one in part 1 (SVC and SGDClassifier run on one thread anyway: libsvm and
plain SGD have none). On a machine that other work keeps busy, THREADS=1
gives steadier numbers (see THREAD_NOTE).

Output goes to bench/results/kernel_machines.md (quick: BUILD_DIR/bench, so
that a smoke run never replaces the quoted results); --out DIR overrides both.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SEED = 0

# method key -> (label, "rfx" or "sklearn", the scikit-learn method its ratios use)
METHODS = {
    # part 1 and 2: classifiers
    "svc": ("sklearn SVC(rbf) (exact kernel SVM)", "sklearn", None),
    "sk-krr": ("sklearn KernelRidge on +-1 codes", "sklearn", None),
    "rfx-krr": ("rfx KernelRidge on +-1 codes", "rfx", "sk-krr"),
    "sk-rbf-lr": ("sklearn RBFSampler + LogisticRegression", "sklearn", None),
    "sk-rbf-ridge": ("sklearn RBFSampler + RidgeClassifier", "sklearn", None),
    "sk-rbf-svm": ("sklearn RBFSampler + LinearSVC(hinge)", "sklearn", None),
    "sk-rbf-sgd": ("sklearn RBFSampler + SGDClassifier(log_loss), in chunks", "sklearn", None),
    "sk-nys-lr": ("sklearn Nystroem + LogisticRegression", "sklearn", None),
    "rfx-nys-lr": ("rfx Nystroem + sklearn LogisticRegression", "rfx", "sk-nys-lr"),
    "rfx-logistic": ("rfx RFFClassifier(logistic), iid", "rfx", "sk-rbf-lr"),
    "rfx-logistic-orth": ("rfx RFFClassifier(logistic), orthogonal", "rfx", "sk-rbf-lr"),
    "rfx-logistic-sorf": ("rfx RFFClassifier(logistic), sorf", "rfx", "sk-rbf-lr"),
    "rfx-logistic-sgd": ("rfx RFFClassifier(logistic, optimizer=sgd), iid", "rfx", "sk-rbf-sgd"),
    "rfx-hinge": ("rfx RFFClassifier(hinge), iid", "rfx", "sk-rbf-svm"),
    "rfx-hinge-orth": ("rfx RFFClassifier(hinge), orthogonal", "rfx", "sk-rbf-svm"),
    "rfx-hinge-tol": ("rfx RFFClassifier(hinge, tol=1e-4), iid", "rfx", "sk-rbf-svm"),
    "rfx-ridge": ("rfx RFFClassifier(least_squares), iid", "rfx", "sk-rbf-ridge"),
    # part 3: regression
    "sk-krr-reg": ("sklearn KernelRidge", "sklearn", None),
    "rfx-krr-reg": ("rfx KernelRidge", "rfx", "sk-krr-reg"),
    "sk-gp": ("sklearn GaussianProcessRegressor", "sklearn", None),
    "rfx-gp": ("rfx GaussianProcessRegressor", "rfx", "sk-gp"),
    # part 4: Nystroem features
    "sk-nys": ("sklearn Nystroem", "sklearn", None),
    "rfx-nys": ("rfx Nystroem", "rfx", "sk-nys"),
}
# Part 1's data sets are small (at most 1257 x 64): every call is short, and on
# a shared machine two threads then mostly wait for each other. With the
# other core busy (load average about 2), scikit-learn's Nystroem.fit on
# 5000 x 54 rows took 0.05 .. 1.7 s with two OpenBLAS threads and 0.013 ..
# 0.019 s with one; rfx's L-BFGS classifier 0.44 .. 0.56 s with two OpenMP
# threads and 0.13 s with one. So part 1 runs on one thread, both sides.
PART1_THREADS = 1
# Said in the report when the run used one thread (trials on this machine).
THREAD_NOTE = (
    "One thread: on this shared machine two threads per process spent most of their time "
    "waiting for each other whenever other work held a core (OpenBLAS and OpenMP threads "
    "spin, then sleep, at every synchronisation). In trials at load averages of 2 to 6, "
    "scikit-learn's Nystroem.fit (5000 x 54 rows, 256 components) took 0.05 .. 1.7 s with "
    "two OpenBLAS threads and 0.013 .. 0.019 s with one; rfx's L-BFGS RFFClassifier on "
    "part 2's 10^5 rows took 2.2 .. 21 s (4.3 .. 17.5 s CPU) with two OpenMP threads and "
    "7.0 s with one; and scikit-learn's GP fit below took longer at n = 2000 than at "
    "n = 8000 with two threads. Thread scaling is bench/run.sh's subject, not this "
    "benchmark's.")
PART1 = ["svc", "sk-krr", "rfx-krr", "sk-rbf-lr", "rfx-logistic", "rfx-logistic-orth",
         "rfx-logistic-sorf", "sk-rbf-svm", "rfx-hinge", "rfx-hinge-orth", "rfx-hinge-tol",
         "sk-rbf-ridge",
         "rfx-ridge", "sk-nys-lr", "rfx-nys-lr"]


# ---------------------------------------------------------------------------
# Data (made once by the driver, saved as .npy files the workers load)
# ---------------------------------------------------------------------------

def make_datasets(tmp, sizes, parts):
    """Write every data set to tmp; returns {name: description}."""
    import numpy as np
    from sklearn.datasets import load_breast_cancer, load_digits, make_classification
    from sklearn.datasets import make_friedman1
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    def save(name, Xtr, ytr, Xte, yte):
        for k, a in (("Xtr", Xtr), ("ytr", ytr), ("Xte", Xte), ("yte", yte)):
            np.save(os.path.join(tmp, "%s_%s.npy" % (name, k)), np.ascontiguousarray(a))

    desc = {}
    for name, loader in (("digits", load_digits), ("breast_cancer", load_breast_cancer)):
        if 1 not in parts:
            break
        X, y = loader(return_X_y=True)
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=y,
                                              random_state=SEED)
        sc = StandardScaler().fit(Xtr)
        save(name, sc.transform(Xtr), ytr, sc.transform(Xte), yte)
        desc[name] = (Xtr.shape[0], Xte.shape[0], X.shape[1], len(np.unique(y)))
    ntr, nte = max(sizes["part2_n"]) if 2 in parts else sizes["part4_n"], sizes["part2_test"]
    for classes in sizes["part2_classes"] if 2 in parts or 4 in parts else []:
        t0 = time.perf_counter()
        X, y = make_classification(n_samples=ntr + nte, n_features=54, n_informative=20,
                                   n_redundant=2, n_classes=classes, class_sep=1.0,
                                   random_state=SEED)
        mu, sd = X[:ntr].mean(axis=0), X[:ntr].std(axis=0)
        X = (X - mu) / sd
        name = "synth%d" % classes
        save(name, X[:ntr], y[:ntr], X[ntr:], y[ntr:])
        desc[name] = (ntr, nte, 54, classes)
        del X, y
        log("made %s (%d + %d rows) in %.0f s" % (name, ntr, nte, time.perf_counter() - t0))
    if 3 not in parts:
        return desc
    ntr, nte = max(sizes["part3_n"]), sizes["part3_test"]
    X, y = make_friedman1(n_samples=ntr + nte, n_features=10, noise=0.5, random_state=SEED)
    mu, sd = X[:ntr].mean(axis=0), X[:ntr].std(axis=0)
    X = (X - mu) / sd
    save("friedman", X[:ntr], y[:ntr], X[ntr:], y[ntr:])
    desc["friedman"] = (ntr, nte, 10, 0)
    return desc


def load(spec):
    import numpy as np
    path = os.path.join(spec["data_dir"], spec["data"] + "_%s.npy")
    Xtr, ytr = np.load(path % "Xtr"), np.load(path % "ytr")
    n = spec.get("n_train")
    if n is not None and n < Xtr.shape[0]:
        Xtr, ytr = Xtr[:n].copy(), ytr[:n].copy()
    return Xtr, ytr, np.load(path % "Xte"), np.load(path % "yte")


# ---------------------------------------------------------------------------
# The estimators (built in a worker process)
# ---------------------------------------------------------------------------

class CodesClassifier:
    """A regressor fitted on the +-1 one-vs-rest codes of the labels
    (LabelBinarizer(neg_label=-1): one column for two classes), predicting
    the class of the largest decision value (its sign for two classes):
    RidgeClassifier's rule, for the two KernelRidge estimators."""

    def __init__(self, regressor):
        self.regressor = regressor

    def fit(self, X, y):
        from sklearn.preprocessing import LabelBinarizer
        lb = LabelBinarizer(neg_label=-1, pos_label=1)
        Y = lb.fit_transform(y).astype(float)
        self.classes_ = lb.classes_
        self.regressor.fit(X, Y[:, 0] if Y.shape[1] == 1 else Y)
        return self

    def decision_function(self, X):
        return self.regressor.predict(X)

    def predict(self, X):
        S = self.decision_function(X)
        return self.classes_[(S > 0).astype(int) if S.ndim == 1 else S.argmax(axis=1)]


class ChunkedSGD:
    """RBFSampler + SGDClassifier fed by partial_fit on row chunks, so that
    the n x D feature matrix is never held: the scikit-learn way to train a
    linear model on random features of more rows than fit in memory."""

    def __init__(self, gamma, D, alpha, epochs, chunk, seed):
        self.gamma, self.D, self.alpha = gamma, D, alpha
        self.epochs, self.chunk, self.seed = epochs, chunk, seed

    def fit(self, X, y):
        import numpy as np
        from sklearn.kernel_approximation import RBFSampler
        from sklearn.linear_model import SGDClassifier
        self.rbf = RBFSampler(gamma=self.gamma, n_components=self.D,
                              random_state=self.seed).fit(X[:2])
        self.clf = SGDClassifier(loss="log_loss", alpha=self.alpha, random_state=self.seed)
        classes = np.unique(y)
        for _ in range(self.epochs):
            for s in range(0, X.shape[0], self.chunk):
                self.clf.partial_fit(self.rbf.transform(X[s:s + self.chunk]),
                                     y[s:s + self.chunk], classes=classes)
        return self

    def _chunks(self, X, fn):
        import numpy as np
        return np.concatenate([fn(self.rbf.transform(X[s:s + self.chunk]))
                               for s in range(0, X.shape[0], self.chunk)])

    def decision_function(self, X):
        return self._chunks(X, self.clf.decision_function)

    def predict(self, X):
        return self._chunks(X, self.clf.predict)


def rfx_classifier(spec, loss, structure, **extra):
    """rfx.RFFClassifier with the benchmark's settings; standardize=False
    when the estimator has that parameter (the data are standardised)."""
    import rfx
    kw = dict(n_components=spec["D"], gamma=spec["gamma"], loss=loss, alpha=spec["lambda"],
              structure=structure, random_state=SEED, n_jobs=spec["threads"])
    if spec["classes"] > 2 and loss == "logistic":
        kw["multi_class"] = "softmax"  # LogisticRegression's multinomial model
    kw.update(extra)
    params = rfx.RFFClassifier().get_params()
    if "standardize" in params:
        kw["standardize"] = False
    return rfx.RFFClassifier(**kw)


def build(spec, n):
    """A fresh, unfitted estimator for the cell described by spec, with n
    training rows."""
    key, g, D, t = spec["method"], spec["gamma"], spec["D"], spec["threads"]
    lam = spec.get("lambda")
    if key in ("svc", "sk-rbf-lr", "sk-nys-lr", "rfx-nys-lr", "sk-rbf-ridge", "sk-rbf-sgd",
               "sk-rbf-svm"):
        from sklearn.kernel_approximation import Nystroem, RBFSampler
        from sklearn.linear_model import LogisticRegression, RidgeClassifier
        from sklearn.pipeline import make_pipeline
        from sklearn.svm import SVC, LinearSVC
        C = 1.0 / (lam * n)  # LogisticRegression's C sum loss + |w|^2 / 2, lambda = 1 / (C n)

        def lr():
            return LogisticRegression(C=C, max_iter=spec["lr_max_iter"])
        if key == "svc":
            return SVC(kernel="rbf", gamma=g, C=C)
        if key == "sk-rbf-lr":
            return make_pipeline(RBFSampler(gamma=g, n_components=D, random_state=SEED), lr())
        if key == "sk-rbf-svm":
            return make_pipeline(RBFSampler(gamma=g, n_components=D, random_state=SEED),
                                 LinearSVC(loss="hinge", C=C, random_state=SEED))
        if key == "sk-rbf-ridge":
            return make_pipeline(RBFSampler(gamma=g, n_components=D, random_state=SEED),
                                 RidgeClassifier(alpha=spec["ridge_alpha"]))
        if key == "sk-nys-lr":
            return make_pipeline(Nystroem(gamma=g, n_components=min(D, n), random_state=SEED),
                                 lr())
        if key == "sk-rbf-sgd":
            return ChunkedSGD(g, D, lam, spec["epochs"], spec["chunk"], SEED)
        import rfx
        return make_pipeline(rfx.Nystroem(gamma=g, n_components=min(D, n), random_state=SEED,
                                          n_jobs=t), lr())
    if key == "sk-krr":
        from sklearn.kernel_ridge import KernelRidge
        return CodesClassifier(KernelRidge(alpha=spec["krr_alpha"], kernel="rbf", gamma=g))
    if key == "rfx-krr":
        import rfx
        return CodesClassifier(rfx.KernelRidge(alpha=spec["krr_alpha"], gamma=g, n_jobs=t))
    if key == "rfx-ridge":
        return rfx_classifier(spec, "least_squares", "iid", alpha=spec["ridge_alpha"])
    if key == "rfx-logistic":
        return rfx_classifier(spec, "logistic", "iid")
    if key == "rfx-logistic-orth":
        return rfx_classifier(spec, "logistic", "orthogonal")
    if key == "rfx-logistic-sorf":
        return rfx_classifier(spec, "logistic", "sorf")
    if key == "rfx-logistic-sgd":
        kw = {spec["epochs_param"]: spec["epochs"]} if spec["epochs_param"] else {}
        return rfx_classifier(spec, "logistic", "iid", optimizer="sgd", **kw)
    if key == "rfx-hinge":
        return rfx_classifier(spec, "hinge", "iid")
    if key == "rfx-hinge-orth":
        return rfx_classifier(spec, "hinge", "orthogonal")
    if key == "rfx-hinge-tol":  # liblinear's stopping rule and tolerance
        return rfx_classifier(spec, "hinge", "iid", tol=1e-4)
    if key in ("sk-krr-reg", "rfx-krr-reg"):
        if key == "sk-krr-reg":
            from sklearn.kernel_ridge import KernelRidge
            return KernelRidge(alpha=spec["krr_alpha"], kernel="rbf", gamma=g)
        import rfx
        return rfx.KernelRidge(alpha=spec["krr_alpha"], gamma=g, n_jobs=t)
    if key == "sk-gp":
        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import RBF, ConstantKernel
        k = ConstantKernel(spec["amplitude"], "fixed") * RBF(spec["length_scale"], "fixed")
        return GaussianProcessRegressor(k, alpha=spec["noise_var"], optimizer=None,
                                        normalize_y=True)
    if key == "rfx-gp":
        import rfx
        return rfx.GaussianProcessRegressor(rfx.Kernel.gaussian(spec["length_scale"]),
                                            noise_var=spec["noise_var"],
                                            amplitude=spec["amplitude"], normalize_y=True,
                                            n_jobs=t)
    if key == "sk-nys":
        from sklearn.kernel_approximation import Nystroem
        return Nystroem(gamma=g, n_components=D, random_state=SEED)
    if key == "rfx-nys":
        import rfx
        return rfx.Nystroem(gamma=g, n_components=D, random_state=SEED, n_jobs=t)
    raise ValueError("unknown method %r" % key)


def describe_fit(key, est):
    """What a fitted estimator reports about its fit (iterations, ...)."""
    info = {}
    last = est.steps[-1][1] if hasattr(est, "steps") else est
    n_iter = getattr(last, "n_iter_", None)
    if n_iter is not None:
        try:
            import numpy as np
            info["n_iter"] = int(np.max(n_iter))
        except (TypeError, ValueError):
            pass
    if key == "svc":
        info["support_vectors"] = int(est.n_support_.sum())
    if hasattr(est, "steps") and hasattr(est.steps[0][1], "rank_"):
        info["rank"] = int(est.steps[0][1].rank_)
    for a in ("optimizer_", "converged_", "objective_"):
        v = getattr(last, a, None)
        if v is not None and not callable(v):
            info[a.rstrip("_")] = v if isinstance(v, (str, bool, int, float)) else str(v)
    return info


# ---------------------------------------------------------------------------
# The worker: one method on one data set, timed; prints one JSON line
# ---------------------------------------------------------------------------

def proc_status(key):
    """A size from /proc/self/status in bytes (VmRSS: resident now, VmHWM:
    its peak; both of this process image, unlike getrusage's ru_maxrss,
    which Linux carries over from the parent across fork and exec)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def timed(fn, repeats):
    """The best wall time of fn() over repeats runs, the CPU time
    (time.process_time: all threads of this process) of that run, and the
    last result (the previous one dropped first)."""
    best, cpu, out = float("inf"), 0.0, None
    for _ in range(repeats):
        out = None
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        w, c = time.perf_counter() - w0, time.process_time() - c0
        if w < best:
            best, cpu = w, c
    return best, cpu, out


def kernel_error(Z, X, gamma):
    """|K - Z Z^T|_F / |K|_F on the rows of X (Z their features)."""
    import numpy as np
    from sklearn.metrics.pairwise import rbf_kernel
    K = rbf_kernel(X, gamma=gamma)
    return float(np.linalg.norm(K - Z @ Z.T) / np.linalg.norm(K))


def worker(spec):
    import numpy as np
    Xtr, ytr, Xte, yte = load(spec)
    import sklearn  # noqa: F401 - loaded before the RSS baseline, as rfx
    from sklearn.exceptions import ConvergenceWarning
    if METHODS[spec["method"]][1] == "rfx" or spec["method"] == "rfx-nys-lr":
        import rfx  # noqa: F401
    limits = None
    try:
        from threadpoolctl import threadpool_limits
        limits = threadpool_limits(limits=spec["threads"])
    except ImportError:
        pass
    key, kind, reps = spec["method"], spec["kind"], spec["repeats"]
    preps = spec["predict_repeats"]
    build(spec, Xtr.shape[0])  # the modules a fit uses are imported before the timing
    load0 = os.getloadavg()[0]
    before = proc_status("VmRSS")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        fit_w, fit_c, est = timed(lambda: build(spec, Xtr.shape[0]).fit(Xtr, ytr), reps)
    n_warn = sum(1 for w in caught if issubclass(w.category, ConvergenceWarning))
    peak_fit = proc_status("VmHWM")
    out = {"fit_wall": fit_w, "fit_cpu": fit_c, "info": describe_fit(key, est),
           "rss_before": before, "n_train": int(Xtr.shape[0])}
    if n_warn:
        out["info"]["convergence_warnings"] = n_warn
    if kind == "classify":
        pred_w, pred_c, pred = timed(lambda: est.predict(Xte), preps)
        out["accuracy"] = float(np.mean(pred == yte))
        np.save(spec["pred_out"], np.asarray(est.decision_function(Xte), dtype=np.float64))
    elif kind == "regress":
        if key.endswith("gp"):
            pred_w, pred_c, (mean, std) = timed(lambda: est.predict(Xte, return_std=True),
                                                preps)
            np.save(spec["pred_out"], np.column_stack([mean, std]))
        else:
            pred_w, pred_c, mean = timed(lambda: est.predict(Xte), preps)
            np.save(spec["pred_out"], mean[:, None])
        out["rmse"] = float(np.sqrt(np.mean((mean - yte) ** 2)))
    else:  # transform: the training rows themselves
        pred_w, pred_c, Z = timed(lambda: est.transform(Xtr), preps)
        m = min(2000, Xtr.shape[0])
        out["kernel_error"] = kernel_error(Z[:m], Xtr[:m], spec["gamma"])
        out["info"]["n_features_out"] = int(Z.shape[1])
    out.update({"predict_wall": pred_w, "predict_cpu": pred_c,
                "rss_peak_fit": peak_fit, "rss_peak": proc_status("VmHWM"),
                "load": [load0, os.getloadavg()[0]]})
    if limits is not None:
        limits.restore_original_limits()
    return out


# ---------------------------------------------------------------------------
# The driver
# ---------------------------------------------------------------------------

def log(*a):
    print("kernel_machines.py:", *a, file=sys.stderr, flush=True)


def run_cell(spec, timeout, env):
    """Run one cell in a worker; a dict with either results or "failure"."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", json.dumps(spec)]
    penv = dict(env)
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        penv[k] = str(spec["threads"])
    if METHODS[spec["method"]][1] == "sklearn":
        # the peers run with the workplace's OpenBLAS tuning unset, as in run.sh
        penv.pop("OPENBLAS_CORETYPE", None)
        penv.pop("OPENBLAS_L2_SIZE", None)
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=penv, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"failure": "timed out after %d s" % timeout}
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode != 0 or not lines:
        tail = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
        return {"failure": tail[:240]}
    out = json.loads(lines[-1])
    out["wall"] = time.perf_counter() - t0
    return out


def machine():
    cpu, mem = "?", "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    mem = "%.0f GiB" % (int(line.split()[1]) / 1048576)
    except OSError:
        pass
    return "%d cores (nproc), %s, %s; %s" % (
        len(os.sched_getaffinity(0)), cpu, mem, " ".join(os.uname()[i] for i in (0, 2, 4)))


def fmt_sec(v):
    if v is None:
        return ""
    return "%.1f s" % v if v >= 10 else "%.2f s" % v if v >= 0.1 else "%.1f ms" % (v * 1e3)


def fmt_mib(b):
    return "%.0f MiB" % (b / 1048576.0)


def fmt_ratio(a, b):
    return "%.2f" % (a / b) if a and b else ""


def ratios(a, b, what):
    """peer / rfx of the wall times and of the CPU times of one step."""
    return "%s / %s" % (fmt_ratio(a[what + "_wall"], b[what + "_wall"]),
                        fmt_ratio(a[what + "_cpu"], b[what + "_cpu"]))


def gamma_scale(X):
    return 1.0 / (X.shape[1] * float(X.var()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    ap.add_argument("--quick", action="store_true", help="a smoke run (~2 minutes)")
    ap.add_argument("--out", help="directory for kernel_machines.md")
    ap.add_argument("--parts", default="1,2,3,4", help="comma-separated subset of 1,2,3,4")
    ap.add_argument("--budget", type=float,
                    help="seconds after which no further cell is started (default 1500, "
                    "quick 600); the cells left say so")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        json.dump(worker(json.loads(args.worker)), sys.stdout)
        sys.stdout.write("\n")
        return

    build_dir = os.path.abspath(args.build)
    lib = os.path.join(build_dir, "librfx.so")
    if not os.path.isfile(lib):
        sys.exit("kernel_machines.py: %s not found; build first (cmake --build %s)"
                 % (lib, build_dir))
    try:
        parts = sorted({int(p) for p in args.parts.split(",")})
    except ValueError:
        parts = []
    if not parts or any(p not in (1, 2, 3, 4) for p in parts):
        sys.exit("kernel_machines.py: --parts takes a comma-separated subset of 1,2,3,4, "
                 "not '%s'" % args.parts)
    v = os.environ.get("THREADS", "2")
    if not v.isdigit() or int(v) < 1:
        sys.exit("kernel_machines.py: THREADS must be a whole number >= 1, not '%s'" % v)
    threads = int(v)
    env = dict(os.environ)
    env.setdefault("RFX_LIBRARY", lib)
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[k] = str(threads)
    os.environ.update({k: env[k] for k in ("RFX_LIBRARY", "PYTHONPATH", "OMP_NUM_THREADS",
                                           "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")})
    sys.path.insert(0, os.path.join(ROOT, "python"))
    quick = args.quick
    out_dir = os.path.abspath(args.out or (os.path.join(build_dir, "bench") if quick
                                           else os.path.join(HERE, "results")))

    if quick:
        sizes = {"D": 256, "repeats": 1, "predict_repeats": 1, "part2_n": [10000],
                 "part2_test": 2000,
                 "part2_classes": [2], "part2_svc": 2000, "part2_sgd_from": 10000,
                 "part3_n": [500, 1000], "part3_test": 500, "part4_n": 5000,
                 "part4_m": [256], "epochs": 2, "timeout": 300}
    else:
        sizes = {"D": 1024, "repeats": 3, "predict_repeats": 2, "part2_n": [100000, 1000000],
                 "part2_test": 10000,
                 "part2_classes": [2], "part2_svc": 20000, "part2_sgd_from": 1000000,
                 "part3_n": [2000, 4000, 8000], "part3_test": 2000, "part4_n": 100000,
                 "part4_m": [256, 1024], "epochs": 5, "timeout": 900}
    budget = args.budget if args.budget is not None else (600 if quick else 1800)

    t_start = time.perf_counter()
    load_start = os.getloadavg()
    import numpy as np
    import rfx
    import scipy
    import sklearn
    # SGD epochs: the classifier's max_iter (or epochs) when it has one, else
    # the C library's default of 10 (rfx_classify_params.epochs); scikit-learn
    # runs as many
    params = rfx.RFFClassifier().get_params()
    sizes["epochs_param"] = next((p for p in ("max_iter", "epochs") if p in params), None)
    if sizes["epochs_param"] is None:
        sizes["epochs"] = 10
    tmp = tempfile.mkdtemp(prefix="rfx-kernel-machines-")
    try:
        log("making the data sets in", tmp)
        desc = make_datasets(tmp, sizes, parts)
        gammas = {name: gamma_scale(np.load(os.path.join(tmp, name + "_Xtr.npy")))
                  for name in desc}
        cells = run_all(parts, sizes, desc, gammas, tmp, threads, env, budget, t_start)
        diffs = prediction_diffs(cells, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    total = time.perf_counter() - t_start
    load_end = os.getloadavg()

    cmd = "THREADS=%d /usr/bin/python3 bench/kernel_machines.py %s%s%s%s" % (
        threads, args.build, " --quick" if quick else "",
        " --out %s" % args.out if args.out else "",
        " --parts %s" % args.parts if args.parts != "1,2,3,4" else "")
    loads = [v for c in cells.values() for v in c.get("load", [])]
    L = ["# rfx kernel machines and classifiers against scikit-learn", "",
         "rfx %s (library %s) against scikit-learn %s (numpy %s, scipy %s), same machine, "
         "same run, same data%s." % (
             rfx.library_version(), rfx.library_path, sklearn.__version__, np.__version__,
             scipy.__version__, " (QUICK smoke run)" if quick else ""),
         "Machine: %s. Date: %s. Threads: %s. Total run time %.0f s." % (
             machine(), time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
             "1 (OpenMP, BLAS, rfx n_jobs)" if threads == 1 else
             "%d in parts 2 to 4 (OpenMP, BLAS, rfx n_jobs), 1 in part 1" % threads, total),
         "Load average (1 min): %.2f at the start, %.2f at the end, %.2f .. %.2f while the "
         "cells ran. The machine is shared with other work: wall times are noisy, CPU times "
         "(time.process_time of the worker: all its threads) less so." % (
             load_start[0], load_end[0], min(loads) if loads else float("nan"),
             max(loads) if loads else float("nan")),
         "Command: `%s`." % cmd, ""] + ([THREAD_NOTE, ""] if threads == 1 else []) + [
         "Every cell runs in a fresh worker process. Fit time: the fit call (features, "
         "landmarks, solver; pipelines include the feature map's fit_transform); predict "
         "time: predict on the test rows (features included). %s Peak RSS: the worker's "
         "VmHWM (Python, numpy, scikit-learn, rfx and the data included); 'fit growth': how "
         "far the fit raised it above the RSS just before the fit. Ratios are scikit-learn "
         "/ rfx (above 1: rfx is faster), of the wall times and of the CPU times, against "
         "the method named in the 'vs' column; under load the CPU ratio is the steadier." % (
             "Best of %d runs (wall; the CPU time of that run) for the small data sets of "
             "part 1; elsewhere one fit and the best of %d predictions or transforms." % (
                 sizes["repeats"], sizes["predict_repeats"]) if sizes["repeats"] > 1 else
             "One run each."), ""]
    if 1 in parts:
        L += report_part1(cells, sizes, desc, gammas, diffs)
    if 2 in parts:
        L += report_part2(cells, sizes, desc, gammas, threads)
    if 3 in parts:
        L += report_part3(cells, sizes, desc, gammas, diffs)
    if 4 in parts:
        L += report_part4(cells, sizes, desc, gammas)
    failures = [(k, c["failure"]) for k, c in cells.items() if "failure" in c]
    skipped = [k for k, c in cells.items() if "skipped" in c]
    if failures or skipped:
        L += ["", "## Cells not measured", ""]
        L += ["- %s: failed: %s" % (k, f) for k, f in failures]
        L += ["- %s: %s" % (k, cells[k]["skipped"]) for k in skipped]
    text = "\n".join(L) + "\n"
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "kernel_machines.md")
    with open(path, "w") as f:
        f.write(text)
    with open(os.path.join(build_dir, "kernel_machines_cells.json"), "w") as f:
        json.dump(cells, f, indent=1)
    sys.stdout.write(text)
    log("wrote %s in %.0f s" % (path, total))


def run_all(parts, sizes, desc, gammas, tmp, threads, env, budget, t_start):
    """Run every cell of the chosen parts; {cell name: result}."""
    import numpy as np
    todo = []  # (cell name, spec)

    def add(name, method, data, kind, **kw):
        spec = {"method": method, "data": data, "kind": kind, "threads": threads,
                "data_dir": tmp, "gamma": gammas[data], "D": sizes["D"],
                "repeats": 1, "predict_repeats": sizes["predict_repeats"],
                "pred_out": os.path.join(tmp, "pred-%d.npy" % len(todo))}
        spec.update(kw)
        todo.append((name, spec))

    if 1 in parts:
        for data in ("digits", "breast_cancer"):
            ntr, _, _, classes = desc[data]
            for m in PART1:
                # LogisticRegression(C = 1), the same objective for rfx: lambda = 1 / n
                add("1 %s %s" % (data, m), m, data, "classify", classes=classes,
                    threads=PART1_THREADS,
                    repeats=sizes["repeats"], predict_repeats=sizes["repeats"],
                    **{"lambda": 1.0 / ntr}, krr_alpha=1.0, ridge_alpha=1.0, lr_max_iter=1000)
    if 2 in parts:
        for classes in sizes["part2_classes"]:
            data = "synth%d" % classes
            common = dict(classes=classes, **{"lambda": 1e-4}, ridge_alpha=1.0,
                          lr_max_iter=300, epochs=sizes["epochs"],
                          epochs_param=sizes["epochs_param"], chunk=16384)
            for n in sizes["part2_n"]:
                methods = (["sk-rbf-sgd", "rfx-logistic-sgd", "rfx-ridge"]
                           if n >= sizes["part2_sgd_from"] else
                           ["sk-rbf-lr", "rfx-logistic", "rfx-logistic-orth", "sk-rbf-sgd",
                            "rfx-logistic-sgd", "sk-rbf-ridge", "rfx-ridge", "sk-rbf-svm",
                            "rfx-hinge", "rfx-hinge-tol"])
                for m in methods:
                    add("2 %s n=%d %s" % (data, n, m), m, data, "classify", n_train=n,
                        **common)
            n = sizes["part2_svc"]
            for m in ("svc", "sk-rbf-lr", "rfx-logistic", "sk-rbf-svm", "rfx-hinge",
                      "rfx-hinge-tol"):
                add("2 %s n=%d %s" % (data, n, m), m, data, "classify", n_train=n, **common)
    if 3 in parts:
        g = gammas["friedman"]
        for n in sizes["part3_n"]:
            for m in ("sk-krr-reg", "rfx-krr-reg", "sk-gp", "rfx-gp"):
                add("3 n=%d %s" % (n, m), m, "friedman", "regress", n_train=n, krr_alpha=0.1,
                    noise_var=0.01, amplitude=1.0, length_scale=1.0 / np.sqrt(2.0 * g))
    if 4 in parts:
        for mcomp in sizes["part4_m"]:
            for m in ("sk-nys", "rfx-nys"):
                add("4 m=%d %s" % (mcomp, m), m, "synth2", "transform",
                    n_train=sizes["part4_n"], D=mcomp)

    cells = {}
    for i, (name, spec) in enumerate(todo):
        if time.perf_counter() - t_start > budget:
            cells[name] = {"skipped": "not started: over the run's time budget of %.0f s"
                           % budget}
            log("[%d/%d] %s skipped (budget)" % (i + 1, len(todo), name))
            continue
        log("[%d/%d] %s ..." % (i + 1, len(todo), name))
        r = run_cell(spec, sizes["timeout"], env)
        r["spec"] = spec
        cells[name] = r
        if "failure" in r:
            log("    FAILED: %s" % r["failure"])
        else:
            log("    fit %.2f s (CPU %.2f), predict %.3f s, peak RSS %s, %s (%.0f s elapsed)" % (
                r["fit_wall"], r["fit_cpu"], r["predict_wall"], fmt_mib(r["rss_peak"]),
                ("accuracy %.4f" % r["accuracy"]) if "accuracy" in r else
                ("rmse %.4f" % r["rmse"]) if "rmse" in r else
                ("kernel error %.4f" % r["kernel_error"]),
                time.perf_counter() - t_start))
    return cells


def prediction_diffs(cells, tmp):
    """max |rfx - sklearn| of the saved test outputs, for the pairs that
    solve the same problem (kernel ridge, GP: mean, and std)."""
    import numpy as np
    out = {}
    for name, c in cells.items():
        if "failure" in c or "skipped" in c:
            continue
        key = c["spec"]["method"]
        if key not in ("rfx-krr", "rfx-krr-reg", "rfx-gp"):
            continue
        peer = name.rsplit(" ", 1)[0] + " " + METHODS[key][2]
        p = cells.get(peer)
        if not p or "failure" in p or "skipped" in p:
            continue
        a, b = np.load(c["spec"]["pred_out"]), np.load(p["spec"]["pred_out"])
        a, b = a.reshape(a.shape[0], -1), b.reshape(b.shape[0], -1)
        d = np.abs(a - b).max(axis=0)
        out[name] = {"max_abs_diff": [float(v) for v in d],
                     "scale": [float(v) for v in np.abs(b).max(axis=0)]}
    return out


def info_text(c, diff=None):
    """The notes column of a classifier row."""
    i = c.get("info", {})
    s = []
    if "n_iter" in i:
        s.append("%d iterations" % i["n_iter"])
    if i.get("optimizer"):
        s.append(str(i["optimizer"]))
    if "converged" in i and not i["converged"]:
        s.append("not converged")
    if i.get("convergence_warnings"):
        s.append("ConvergenceWarning")
    if "support_vectors" in i:
        s.append("%d support vectors" % i["support_vectors"])
    if "rank" in i:
        s.append("rank %d" % i["rank"])
    if diff:
        s.append("max \\|decision - sklearn's\\| %.1e" % max(diff["max_abs_diff"]))
    return ", ".join(s)


def class_table(cells, prefix, methods, diffs):
    """Rows of one classification table (cells named prefix + method)."""
    L = ["| method | accuracy | fit | fit CPU | predict | predict CPU | vs | fit ratio wall / "
         "CPU | predict ratio wall / CPU | peak RSS | fit growth | notes |",
         "| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- |"]
    for m in methods:
        name = prefix + m
        c = cells.get(name)
        if c is None:
            continue
        if "failure" in c or "skipped" in c:
            L.append("| %s | %s | | | | | | | | | | |" % (
                METHODS[m][0], c.get("skipped") or "failed (see below)"))
            continue
        peer_key = METHODS[m][2]
        p = cells.get(prefix + peer_key) if peer_key else None
        ok = p is not None and "fit_wall" in p
        L.append("| %s | %.4f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            METHODS[m][0], c["accuracy"], fmt_sec(c["fit_wall"]), fmt_sec(c["fit_cpu"]),
            fmt_sec(c["predict_wall"]), fmt_sec(c["predict_cpu"]),
            peer_key if ok else "", ratios(p, c, "fit") if ok else "",
            ratios(p, c, "predict") if ok else "",
            fmt_mib(c["rss_peak"]), fmt_mib(max(0, c["rss_peak"] - c["rss_before"])),
            info_text(c, diffs.get(name))))
    return L


def report_part1(cells, sizes, desc, gammas, diffs):
    D = sizes["D"]
    L = ["## 1. digits and breast cancer: accuracy at equal D = %d" % D, "",
         "Stratified 70/30 split (seed 0), inputs standardised on the training rows. One "
         "penalty for the logistic and hinge losses: scikit-learn's C = 1, i.e. the "
         "objective mean loss + (lambda/2) |w|^2 with lambda = 1 / (C n_train): SVC(C=1), "
         "LogisticRegression(C=1, max_iter=1000; multinomial for digits), "
         "LinearSVC(loss='hinge', C=1; one-vs-rest; liblinear's dual coordinate descent, "
         "the algorithm of rfx's hinge fit, with its default tol 1e-4 and a penalised "
         "intercept), rfx RFFClassifier(alpha=lambda; multi_class='softmax' for the "
         "logistic loss on digits, one-vs-rest for the hinge loss; optimizer 'auto': "
         "L-BFGS for the logistic loss, dual coordinate descent for the hinge loss, the "
         "library's default tol 1e-6 (its stopping rule is liblinear's: the projected "
         "gradients span at most tol, on the same dual scale; the tol=1e-4 row stops as "
         "liblinear does) and an unpenalised intercept found by a root search over several "
         "solves). KernelRidge: alpha = 1 on the +-1 one-vs-rest codes of the "
         "labels (one column for two classes), class of the largest value; "
         "RidgeClassifier(alpha=1) and rfx RFFClassifier(loss='least_squares', alpha=1) "
         "on the same codes. Nystroem: min(D, n_train) landmarks. Random features and "
         "landmarks with seed 0 (rfx and scikit-learn draw different ones). SVC is "
         "one-vs-one (libsvm). The data are small, so both sides run on one thread here.", ""]
    for data in ("digits", "breast_cancer"):
        ntr, nte, d, classes = desc[data]
        L += ["### %s: %d training rows, %d test rows, d = %d, %d classes, gamma = %.4g" % (
            data.replace("_", " "), ntr, nte, d, classes, gammas[data]), ""]
        L += class_table(cells, "1 %s " % data, PART1, diffs)
        L.append("")
    return L


def report_part2(cells, sizes, desc, gammas, threads):
    D = sizes["D"]
    big = [n for n in sizes["part2_n"] if n >= sizes["part2_sgd_from"]]
    L = ["## 2. Covertype-like synthetic data (make_classification)", "",
         "make_classification(n_features=54, n_informative=20, n_redundant=2, class_sep=1, "
         "flip_y=0.01, random_state=0), 2 classes, standardised; the first n rows of one "
         "sample train, %d further rows test. D = %d features, lambda = 1e-4 for the "
         "logistic and hinge losses (the C of LogisticRegression, LinearSVC and SVC is "
         "1 / (lambda n), "
         "SGDClassifier's alpha = lambda; LogisticRegression with max_iter=300), alpha = 1 "
         "for RidgeClassifier and the least-squares loss. SGD: %d epochs on both sides "
         "(scikit-learn: partial_fit on chunks of 16384 rows of RBFSampler features, its "
         "default 'optimal' learning rate; rfx: averaged SGD, its default step and "
         "mini-batches of 16 rows). rfx caches the n x D features when 8 n D bytes fit in "
         "1 GiB (n = 10^5 at D = 1024), else recomputes them on every pass." % (
             sizes["part2_test"], D, sizes["epochs"]), ""]
    if big:
        L += ["At n = %d only the streaming fits run: the scikit-learn pipelines that hold "
              "the n x D feature matrix would need %s for it alone (8 n D bytes, "
              "computed, not run), and rfx's L-BFGS fit, which recomputes the features on "
              "every pass at this size, took 676 s (456 s CPU, two threads, load average 6) "
              "in a trial of this benchmark's 10^6-row problem, so it is left out; the "
              "least-squares loss needs one pass." % (big[0], fmt_mib(8.0 * big[0] * D)), ""]
    L += ["SVC (its cost grows between n^2 and n^3) runs on the first %d rows only, "
          "beside rfx and RBFSampler + LogisticRegression / LinearSVC on the same rows."
          % sizes["part2_svc"], ""]
    for classes in sizes["part2_classes"]:
        data = "synth%d" % classes
        for n in sizes["part2_n"] + [sizes["part2_svc"]]:
            prefix = "2 %s n=%d " % (data, n)
            methods = [k for k in METHODS if prefix + k in cells]
            if not methods:
                continue
            L += ["### %d classes, n = %d training rows (gamma = %.4g)" % (
                classes, n, gammas[data]), ""]
            L += class_table(cells, prefix, methods, {})
            L.append("")
    return L


def report_part3(cells, sizes, desc, gammas, diffs):
    import numpy as np
    g = gammas["friedman"]
    L = ["## 3. Regression: the same kernel machine, two implementations", "",
         "make_friedman1(n_features=10, noise=0.5, random_state=0), inputs standardised; "
         "%d test rows. Kernel exp(-gamma |x - y|^2), gamma = %.4g (length scale %.4g). "
         "KernelRidge(alpha=0.1). GaussianProcessRegressor: kernel 1.0 * RBF(l), both "
         "fixed (scikit-learn: optimizer=None), noise variance 0.01 (scikit-learn's alpha), "
         "normalize_y=True; predict returns the mean and the standard deviation. "
         "max |diff|: the largest difference between rfx's and scikit-learn's test "
         "predictions (GP: mean / std), beside the largest |prediction|." % (
             sizes["part3_test"], g, 1.0 / np.sqrt(2.0 * g)), "",
         "| model | n | fit sklearn | fit rfx | ratio wall / CPU | fit CPU sklearn / rfx | "
         "predict sklearn | predict rfx | ratio wall / CPU | test RMSE sklearn / rfx | "
         "max \\|diff\\| (max \\|pred\\|) | peak RSS sklearn / rfx |",
         "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- | --- | --- |"]
    for model, sk, rx in (("KernelRidge", "sk-krr-reg", "rfx-krr-reg"),
                          ("GaussianProcessRegressor", "sk-gp", "rfx-gp")):
        for n in sizes["part3_n"]:
            a, b = cells.get("3 n=%d %s" % (n, sk)), cells.get("3 n=%d %s" % (n, rx))
            if not a or not b or "fit_wall" not in a or "fit_wall" not in b:
                L.append("| %s | %d | %s | | | | | | | | | |" % (
                    model, n, "not measured (see below)"))
                continue
            d = diffs.get("3 n=%d %s" % (n, rx))
            dtxt = " / ".join("%.1e (%.3g)" % (x, s) for x, s in zip(
                d["max_abs_diff"], d["scale"])) if d else ""
            L.append("| %s | %d | %s | %s | %s | %s / %s | %s | %s | %s | %.4f / %.4f | %s | "
                     "%s / %s |" % (
                         model, n, fmt_sec(a["fit_wall"]), fmt_sec(b["fit_wall"]),
                         ratios(a, b, "fit"), fmt_sec(a["fit_cpu"]),
                         fmt_sec(b["fit_cpu"]), fmt_sec(a["predict_wall"]),
                         fmt_sec(b["predict_wall"]),
                         ratios(a, b, "predict"), a["rmse"], b["rmse"],
                         dtxt, fmt_mib(a["rss_peak"]), fmt_mib(b["rss_peak"])))
    L.append("")
    return L


def report_part4(cells, sizes, desc, gammas):
    n = sizes["part4_n"]
    L = ["## 4. Nystroem features at equal n_components", "",
         "The n = %d training rows of part 2's binary data (d = 54, gamma = %.4g): fit "
         "(landmarks drawn with seed 0, K(L, L) factored) and transform of the same rows. "
         "Kernel error: |K - Z Z^T|_F / |K|_F on the first 2000 rows (outside the timing)."
         % (n, gammas["synth2"]), "",
         "| n_components | fit sklearn | fit rfx | ratio wall / CPU | transform sklearn | "
         "transform rfx | ratio wall / CPU | transform CPU sklearn / rfx | kernel error "
         "sklearn / rfx | peak RSS sklearn / rfx |",
         "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |"]
    for m in sizes["part4_m"]:
        a, b = cells.get("4 m=%d sk-nys" % m), cells.get("4 m=%d rfx-nys" % m)
        if not a or not b or "fit_wall" not in a or "fit_wall" not in b:
            L.append("| %d | not measured (see below) | | | | | | | | |" % m)
            continue
        L.append("| %d | %s | %s | %s | %s | %s | %s | %s / %s | %.4f / %.4f | %s / %s |" % (
            m, fmt_sec(a["fit_wall"]), fmt_sec(b["fit_wall"]),
            ratios(a, b, "fit"), fmt_sec(a["predict_wall"]),
            fmt_sec(b["predict_wall"]), ratios(a, b, "predict"),
            fmt_sec(a["predict_cpu"]), fmt_sec(b["predict_cpu"]), a["kernel_error"],
            b["kernel_error"], fmt_mib(a["rss_peak"]), fmt_mib(b["rss_peak"])))
    L.append("")
    return L


if __name__ == "__main__":
    main()
