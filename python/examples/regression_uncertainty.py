# SPDX-License-Identifier: BSD-3-Clause
"""Regression with uncertainty: a Bayesian model on random Fourier features
(a Gaussian process at linear cost) and its 95% predictive band.

    PYTHONPATH=python python3 python/examples/regression_uncertainty.py

Fits y = sin(3x) + x/2 + noise (sd 0.2) on 2000 points, then checks on
2000 fresh points that the predictive band mean +- 1.96 std covers about
95% of the new targets, and that far from the data the model says it does
not know (a larger std).
"""
import numpy as np

import rfx


def truth(x):
    return np.sin(3 * x) + x / 2


def main():
    rng = np.random.RandomState(0)
    X = rng.uniform(-3, 3, size=(2000, 1))
    y = truth(X[:, 0]) + 0.2 * rng.normal(size=2000)
    model = rfx.BayesianRFFRegressor(n_components=512, random_state=0).fit(X, y)

    Xt = rng.uniform(-3, 3, size=(2000, 1))
    yt = truth(Xt[:, 0]) + 0.2 * rng.normal(size=2000)
    mean, std = model.predict(Xt, return_std=True)  # of a new noisy target
    covered = np.mean(np.abs(yt - mean) <= 1.96 * std)
    rmse = np.sqrt(np.mean((yt - mean) ** 2))
    print("noise variance %.4f (true 0.04), test RMSE %.3f, 95%% band covers %.1f%%"
          % (model.noise_var_, rmse, 100 * covered))
    _, far = model.predict([[0.0], [8.0]], return_std=True, latent=True)
    print("latent std at x = 0: %.3f, at x = 8 (no data): %.3f" % (far[0], far[1]))

    assert 0.9 <= covered <= 0.99, covered
    assert abs(model.noise_var_ - 0.04) < 0.01
    assert rmse < 0.25
    assert far[1] > 5 * far[0]


if __name__ == "__main__":
    main()
