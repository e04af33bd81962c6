# SPDX-License-Identifier: BSD-3-Clause
"""classify.py BUILD_DIR [--seeds N] [--out DIR] [--only NAME] [--methods LIST] - rfx fit's
default classifier against scikit-learn on the same splits, in one run; writes a markdown
table (classify.md) and an accuracy-against-time plot (classify.png, classify.svg).
--methods runs only the listed methods (comma-separated labels, e.g. "rfx default").
classify_panel.py reuses run() and report() on other sets.

    /usr/bin/python3 bench/classify.py build

Sets: scikit-learn's digits and breast cancer, make_classification (10^5
rows, 20 inputs, 10 informative, 4 classes, seed 0), and spam and musk from
R's kernlab (exported to CSV by Rscript into bench/out/cache; needs
r-cran-kernlab). Each set is split 75/25 (stratified) with split seeds
0..N-1 (N = --seeds, default 5; 1 for the 10^5-row set); the table gives the
median and the worst held-out accuracy and the median fit time.

Methods, all with D = 1024 features (inputs standardised on the training rows;
gamma = 1/d is scikit-learn's gamma='scale' on standardised data):
  rfx default   rfx fit TRAIN --task classify -D D (the squared loss, lambda
                by exact leave-one-out, the length scale by doublings and
                bisection)
  rfx fixed     the same at gamma = 1/d and lambda = 2/n (alpha = 1)
  sk fixed      RBFSampler(gamma=1/d) + RidgeClassifier(alpha=1)
  sk search     the same by GridSearchCV(cv=3) over gamma in {0.1, 0.3, 1, 3}/d
                and alpha in {1e-4, 1e-3, 1e-2, 1e-1, 1} (not on the 10^5-row
                set: 61 fits there take longer than this run's budget)
  LinearSVC     on the same features as sk fixed (C = 1), where n_train <=
                20000 (on the 10^5-row set it ran over 5 minutes)
  SVC           exact RBF SVC at gamma = 1/d, where n_train <= 20000
Times: rfx's fit time as rfx fit reports it (the CSV reading excluded);
scikit-learn's wall time of fit (the scaler, the features and the model).
Threads: 2 (OMP_NUM_THREADS / OPENBLAS_NUM_THREADS).
"""
import os
import sys

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")

import argparse  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_digits, make_classification  # noqa: E402
from sklearn.kernel_approximation import RBFSampler  # noqa: E402
from sklearn.linear_model import RidgeClassifier  # noqa: E402
from sklearn.model_selection import GridSearchCV, train_test_split  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.svm import SVC, LinearSVC  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
D = 1024


def kernlab(name, cache):
    """kernlab's spam or musk as (X, y), exported once to cache/NAME.csv."""
    path = os.path.join(cache, name + ".csv")
    if not os.path.exists(path):
        os.makedirs(cache, exist_ok=True)
        script = ('suppressMessages(library(kernlab)); data(%s); d <- %s; '
                  'd[[ncol(d)]] <- as.integer(d[[ncol(d)]]) - 1L; '
                  'write.csv(d, "%s", row.names = FALSE)' % (name, name, path))
        subprocess.run(["Rscript", "-e", script], check=True)
    a = np.genfromtxt(path, delimiter=",", skip_header=1)
    return a[:, :-1], a[:, -1].astype(int)


def datasets(cache):
    X, y = load_digits(return_X_y=True)
    yield "digits", X, y
    X, y = load_breast_cancer(return_X_y=True)
    yield "breast cancer", X, y
    for name in ("spam", "musk"):
        try:
            X, y = kernlab(name, cache)
        except (OSError, subprocess.CalledProcessError) as e:
            print("skipping %s: %s" % (name, e), file=sys.stderr)
            continue
        yield name, X, y
    X, y = make_classification(n_samples=125000, n_features=20, n_informative=10,
                               n_classes=4, random_state=0)
    yield "make_classification 10^5", X, y


def write_csv(path, X, y):
    h = ",".join("x%d" % i for i in range(X.shape[1])) + ",y"
    np.savetxt(path, np.c_[X, y], delimiter=",", header=h, comments="", fmt="%.10g")


def rfx_fit(build, tmp, Xtr, ytr, Xte, yte, extra):
    tr, te, model = (os.path.join(tmp, f) for f in ("tr.csv", "te.csv", "m.rfx"))
    if not os.path.exists(tr):
        write_csv(tr, Xtr, ytr)
        write_csv(te, Xte, yte)
    r = subprocess.run([os.path.join(build, "rfx"), "fit", tr, "--target", "y", "--task",
                        "classify", "-D", str(D), "-o", model] + extra,
                       capture_output=True, text=True, check=True)
    secs = float(re.search(r"^time +([0-9.]+) s", r.stderr, re.M).group(1))
    p = subprocess.run([os.path.join(build, "rfx"), "predict", model, te, "-o", "-"],
                       capture_output=True, text=True, check=True)
    pred = np.array(p.stdout.split()[1:], dtype=float)
    return float(np.mean(pred == yte)), secs


def sk_fit(make, Xtr, ytr, Xte, yte):
    t = time.perf_counter()
    m = make().fit(Xtr, ytr)
    secs = time.perf_counter() - t
    return float(np.mean(m.predict(Xte) == yte)), secs


def run(build, seeds, cache, only, sets=None, methods=None):
    """Fit every method on every split of the sets (name, X, y) (default:
    datasets(cache)); methods: the labels to run (default all)."""
    rows = []
    for name, X, y in (datasets(cache) if sets is None else sets):
        if only and only not in name:
            continue
        n_seeds = 1 if len(y) > 50000 else seeds
        d = X.shape[1]
        g = 1.0 / d
        res = {}
        for seed in range(n_seeds):
            test = 25000 if len(y) > 50000 else 0.25
            Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=test, random_state=seed,
                                                  stratify=y)
            n = len(ytr)
            tmp = os.path.join(cache, "split", re.sub(r"\W", "_", name), str(seed))
            os.makedirs(tmp, exist_ok=True)

            def feats(gamma=g):
                return [StandardScaler(), RBFSampler(gamma=gamma, n_components=D,
                                                     random_state=seed)]
            runs = [
                ("rfx default", lambda: rfx_fit(build, tmp, Xtr, ytr, Xte, yte,
                                                ["--seed", str(seed)])),
                ("rfx fixed", lambda: rfx_fit(build, tmp, Xtr, ytr, Xte, yte,
                                              ["--seed", str(seed), "--gamma", repr(g),
                                               "--lambda", repr(2.0 / n)])),
                ("sk fixed", lambda: sk_fit(lambda: make_pipeline(*feats(), RidgeClassifier(
                    alpha=1.0)), Xtr, ytr, Xte, yte)),
            ]
            if n <= 20000:
                runs.append(("LinearSVC", lambda: sk_fit(lambda: make_pipeline(*feats(), LinearSVC(
                    C=1.0, dual=n < D, max_iter=5000)), Xtr, ytr, Xte, yte)))
                grid = {"rbfsampler__gamma": [f * g for f in (0.1, 0.3, 1.0, 3.0)],
                        "ridgeclassifier__alpha": [1e-4, 1e-3, 1e-2, 1e-1, 1.0]}
                runs.append(("sk search", lambda: sk_fit(lambda: GridSearchCV(
                    make_pipeline(*feats(), RidgeClassifier()), grid, cv=3), Xtr, ytr, Xte,
                    yte)))
                runs.append(("SVC", lambda: sk_fit(lambda: make_pipeline(
                    StandardScaler(), SVC(gamma=g)), Xtr, ytr, Xte, yte)))
            for label, fn in runs:
                if methods and label not in methods:
                    continue
                acc, secs = fn()
                res.setdefault(label, []).append((acc, secs))
                print("%-26s seed %d %-12s acc %.4f  %.3f s" % (name, seed, label, acc, secs),
                      flush=True)
        rows.append((name, len(y), d, len(np.unique(y)), n_seeds, res))
    return rows


def report(rows, out, seeds, stem="classify", head=None):
    """Write OUT/STEM.md (head: its title and first paragraph, default
    classify.py's) and, for classify, the plot."""
    os.makedirs(out, exist_ok=True)
    order = ["rfx default", "rfx fixed", "sk fixed", "sk search", "LinearSVC", "SVC"]
    if head is None:
        head = ["# Classification: rfx fit's default against scikit-learn", "",
                "`/usr/bin/python3 bench/classify.py build --seeds %d` (bench/classify.py; %d "
                "split seeds, 1 on the 10^5-row set; D = %d; 2 threads; a shared 2-core machine, "
                "so times are noisy, by some 10-30 %%). Accuracy on "
                "held-out 25 %% (10^5-row set: 25000 rows): median / worst over the seeds; time: "
                "median fit seconds. Goals: rfx default >= sk search in accuracy, time <= 1/3 of "
                "sk search and <= 3x sk fixed." % (seeds, seeds, D)]
    lines = head + ["", "| set (n, d, classes) | method | accuracy median | accuracy worst | "
             "time (s) |", "|---|---|---|---|---|"]
    for name, n, d, C, ns, res in rows:
        for label in order:
            if label not in res:
                continue
            acc = np.array([a for a, _ in res[label]])
            t = np.median([s for _, s in res[label]])
            lines.append("| %s (%d, %d, %d) | %s | %.4f | %.4f | %.3f |" % (
                name, n, d, C, label, np.median(acc), acc.min(), t))
    lines += ["", "Goals per set (median; worst accuracy in brackets):", ""]
    for name, n, d, C, ns, res in rows:
        if "rfx default" not in res or "sk fixed" not in res:
            continue
        de = res["rfx default"]
        acc = np.median([a for a, _ in de])
        worst = min(a for a, _ in de)
        t = np.median([s for _, s in de])
        fx = np.median([s for _, s in res["sk fixed"]])
        txt = "- %s: time / sk fixed = %.2f (goal <= 3)" % (name, t / fx)
        if "sk search" in res:
            sa = np.median([a for a, _ in res["sk search"]])
            sw = min(a for a, _ in res["sk search"])
            st = np.median([s for _, s in res["sk search"]])
            txt += "; accuracy %.4f vs sk search %.4f (worst %.4f vs %.4f); time / sk search " \
                   "= %.2f (goal <= 0.33)" % (acc, sa, worst, sw, t / st)
        lines.append(txt)
    with open(os.path.join(out, stem + ".md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    if stem != "classify":
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(rows), figsize=(4 * len(rows), 3.6))
    for ax, (name, n, d, C, ns, res) in zip(np.atleast_1d(axes), rows):
        for label in order:
            if label not in res:
                continue
            acc = np.median([a for a, _ in res[label]])
            t = np.median([s for _, s in res[label]])
            ax.scatter([t], [acc], label=label, marker="o" if label.startswith("rfx") else "s")
        ax.set_xscale("log")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("fit time (s)")
        ax.set_ylabel("held-out accuracy (median)")
    np.atleast_1d(axes)[0].legend(fontsize=7)
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(out, "classify." + ext), dpi=90)


def from_log(path):
    """The rows of report() from a log of this script's lines."""
    rows, meta = {}, {}
    pat = re.compile(r"^(.+?)\s+seed (\d+) (.+?)\s+acc ([0-9.]+)\s+([0-9.]+) s$")
    for line in open(path):
        mt = pat.match(line.rstrip())
        if mt:
            name, label = mt.group(1).strip(), mt.group(3).strip()
            rows.setdefault(name, {}).setdefault(label, []).append(
                (float(mt.group(4)), float(mt.group(5))))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--only", default="", help="run the sets whose name contains this")
    ap.add_argument("--methods", default="", help="comma-separated methods to run (default all)")
    a = ap.parse_args()
    cache = os.path.join(HERE, "out", "cache")
    methods = [m.strip() for m in a.methods.split(",") if m.strip()]
    rows = run(os.path.abspath(a.build), a.seeds, cache, a.only, methods=methods)
    report(rows, a.out, a.seeds)


if __name__ == "__main__":
    main()
