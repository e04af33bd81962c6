# SPDX-License-Identifier: BSD-3-Clause
"""Classification on random Fourier features: two interleaved half-moons,
which no linear classifier separates, by kernel logistic regression with
its penalty and length scale chosen on a holdout; probabilities, and a
model file that the ``rfx`` command line reads.

    PYTHONPATH=python python3 python/examples/classification.py
"""
import os
import tempfile

import numpy as np
from sklearn.datasets import make_moons
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

import rfx


def main():
    X, y = make_moons(n_samples=3000, noise=0.2, random_state=0)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0)

    clf = rfx.RFFClassifier(n_components=256, random_state=0).fit(X_train, y_train)
    accuracy = clf.score(X_test, y_test)
    linear = LogisticRegression().fit(X_train, y_train).score(X_test, y_test)
    proba = clf.predict_proba(X_test)
    print("test accuracy %.3f (a linear model: %.3f), alpha chosen %.2g"
          % (accuracy, linear, clf.alpha_))

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "moons.rfx")
        clf.save(path)
        again = rfx.load_model(path)
        same = np.array_equal(again.predict(X_test), clf.predict(X_test))
    print("saved and loaded: the same predictions: %s" % same)

    assert accuracy > 0.95, accuracy  # the Bayes rate of this noise is about 0.97
    assert accuracy > linear + 0.05
    assert np.allclose(proba.sum(axis=1), 1.0)
    assert np.array_equal(proba.argmax(axis=1), clf.predict(X_test))
    assert same


if __name__ == "__main__":
    main()
