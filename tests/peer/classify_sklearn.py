#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""scikit-learn's linear classifiers on a feature matrix, for tests/test_classify.c.

Usage: classify_sklearn.py KIND DATA C

DATA is a whitespace-separated matrix whose last column holds the labels and
whose other columns are the features Z (the test writes z(X) there, so both
sides fit the same linear model). KIND is one of
  logistic  LogisticRegression(C), binary, exact Newton (newton-cholesky)
  softmax   LogisticRegression(C, multi_class="multinomial"), newton-cg
  hinge     LinearSVC(C, loss="hinge", dual=True, fit_intercept=False)
  sqhinge   LinearSVC(C), the squared hinge, dual=True, fit_intercept=False
with tight tolerances (1e-10 for liblinear, whose dual solver with shrinking
stalls below that). Prints coef_ (row-major, one value per line),
then intercept_ (absent without intercept), with 17 significant digits.
Exit status 77 when scikit-learn is missing.
"""
import sys
import warnings

try:
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC
except ImportError:
    sys.exit(77)


def main():
    kind, path, c = sys.argv[1], sys.argv[2], float(sys.argv[3])
    data = np.loadtxt(path, ndmin=2)
    z, y = data[:, :-1], data[:, -1]
    if kind == "logistic":
        model = LogisticRegression(C=c, tol=1e-13, max_iter=1000, solver="newton-cholesky")
    elif kind == "softmax":
        model = LogisticRegression(C=c, tol=1e-13, max_iter=10000, solver="newton-cg",
                                   multi_class="multinomial")
    elif kind == "hinge":
        model = LinearSVC(C=c, loss="hinge", dual=True, fit_intercept=False, tol=1e-10,
                          max_iter=10**6, random_state=0)
    elif kind == "sqhinge":
        model = LinearSVC(C=c, loss="squared_hinge", dual=True, fit_intercept=False, tol=1e-10,
                          max_iter=10**6, random_state=0)
    else:
        sys.exit("unknown kind " + kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(z, y)
    for v in np.ravel(model.coef_):
        print("%.17g" % v)
    if kind in ("logistic", "softmax"):
        for v in np.ravel(model.intercept_):
            print("%.17g" % v)


main()
