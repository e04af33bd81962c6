# SPDX-License-Identifier: BSD-3-Clause
"""partial_fit over mergeable statistics: batches give the fit of all rows,
merged estimators give the fit of the union, and the preconditions are
enforced."""
import pickle

import numpy as np
import pytest

import rfx


def data(n=3000, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, d))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.05 * rng.normal(size=n)
    return X, y


PARAMS = dict(n_components=256, length_scale=1.3, standardize=False, random_state=4)


@pytest.mark.parametrize("alpha", [1e-3, None])
def test_ridge_batches_equal_one_fit(alpha):
    X, y = data()
    full = rfx.RFFRegressor(alpha=alpha, **PARAMS).fit(X, y)
    part = rfx.RFFRegressor(alpha=alpha, **PARAMS)
    for rows in np.array_split(np.arange(len(X)), 4):
        part.partial_fit(X[rows], y[rows])
    Xt, _ = data(500, seed=1)
    np.testing.assert_allclose(part.predict(Xt), full.predict(Xt), rtol=1e-9, atol=1e-9)
    assert part.alpha_ == pytest.approx(full.alpha_, rel=1e-9)


def test_bayes_batches_equal_one_fit_with_evidence():
    X, y = data()
    full = rfx.BayesianRFFRegressor(**PARAMS).fit(X, y)
    part = rfx.BayesianRFFRegressor(**PARAMS)
    for rows in np.array_split(np.arange(len(X)), 3):
        part.partial_fit(X[rows], y[rows])
    Xt, _ = data(400, seed=2)
    m1, s1 = full.predict(Xt, return_std=True)
    m2, s2 = part.predict(Xt, return_std=True)
    np.testing.assert_allclose(m2, m1, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(s2, s1, rtol=1e-8)
    assert part.noise_var_ == pytest.approx(full.noise_var_, rel=1e-8)


def test_merge_of_disjoint_pieces_is_the_fit_of_all():
    X, y = data()
    a = rfx.RFFRegressor(alpha=1e-3, **PARAMS).partial_fit(X[:1000], y[:1000])
    b = rfx.RFFRegressor(alpha=1e-3, **PARAMS).partial_fit(X[1000:2200], y[1000:2200])
    c = rfx.RFFRegressor(alpha=1e-3, **PARAMS).partial_fit(X[2200:], y[2200:])
    merged = rfx.merge(a, b, c)
    full = rfx.RFFRegressor(alpha=1e-3, **PARAMS).fit(X, y)
    np.testing.assert_allclose(merged.predict(X[:300]), full.predict(X[:300]), rtol=1e-9, atol=1e-9)
    # the pieces are unchanged, and the merged estimator pickles like any fit
    np.testing.assert_array_equal(a.predict(X[:5]), rfx.RFFRegressor(alpha=1e-3, **PARAMS)
                                  .partial_fit(X[:1000], y[:1000]).predict(X[:5]))
    again = pickle.loads(pickle.dumps(merged))
    np.testing.assert_array_equal(again.predict(X[:50]), merged.predict(X[:50]))


def test_preconditions():
    X, y = data(200)
    with pytest.raises(ValueError, match="2 rows"):
        rfx.RFFRegressor(n_components=32).partial_fit(X[:1], y[:1])
    est = rfx.RFFRegressor(n_components=32, length_scale=1.0, standardize=False).partial_fit(X, y)
    before = est.predict(X[:3])
    with pytest.raises(ValueError):
        est.partial_fit(X[:, :2], y)  # another width: refused, the fit kept
    np.testing.assert_array_equal(est.predict(X[:3]), before)
    other = rfx.RFFRegressor(n_components=64, length_scale=1.0, standardize=False).partial_fit(X, y)
    with pytest.raises(ValueError, match="same parameters"):
        rfx.merge(est, other)
    with pytest.raises(ValueError, match="no statistics"):
        rfx.merge(est, rfx.RFFRegressor(n_components=32, length_scale=1.0, standardize=False).fit(X, y))


def test_defaults_fix_the_map_on_the_first_batch():
    # standardize and length_scale="auto" by the first batch; the same
    # accuracy as a fit on all rows, on data whose inputs have unequal scales
    X, y = data(4000)
    X = X * np.array([1.0, 10.0, 0.1])
    Xt, yt = X[3000:], y[3000:]
    part = rfx.RFFRegressor(n_components=256, random_state=0)
    for rows in np.array_split(np.arange(3000), 5):
        part.partial_fit(X[rows], y[rows])
    full = rfx.RFFRegressor(n_components=256, random_state=0).fit(X[:3000], y[:3000])
    rmse = lambda m: np.sqrt(np.mean((m.predict(Xt) - yt) ** 2))
    assert rmse(part) < 1.2 * rmse(full) + 0.01
    assert rmse(full) < 0.15
