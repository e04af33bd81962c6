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


# ---------------------------------------------------------------------------
# The least-squares classifier and the statistics object
# ---------------------------------------------------------------------------

CLS = dict(n_components=128, length_scale=1.1, standardize=False, random_state=5,
           loss="least_squares")


def labels(X, n_classes):
    r = np.hypot(X[:, 0], X[:, 1])
    return np.array(["a", "b", "c"])[np.digitize(r, [1.2, 2.0])[:] % n_classes]


def close(a, b, tol=1e-12):
    """max |a - b| <= tol max |b|."""
    a, b = np.asarray(a), np.asarray(b)
    return np.abs(a - b).max() <= tol * np.abs(b).max()


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_batches_equal_one_fit(n_classes):
    """partial_fit with the +-1 targets and the penalty of fit: one call on
    all rows is fit, bit for bit (alpha=None: the same GCV choice); four
    batches, with weights or without, differ only by the rounding of the
    sums, amplified by the condition number of Z^T Z + alpha I. Measured
    (coefficients, decision values, relative to their largest): alpha=1
    2e-14 and 1e-14; alpha=0.01 1.5e-12 and 1.5e-13; alpha=None (GCV chose
    1e-8 here, nearly interpolating) 2e-8 and 1.1e-7."""
    X, _ = data(2000)
    y = labels(X, n_classes)
    Xt, _ = data(300, seed=1)
    w = np.random.RandomState(3).uniform(0.2, 2.0, size=len(y))
    tols = {1.0: (1e-12, 1e-12), 1e-2: (1e-11, 1e-12), None: (1e-6, 1e-6)}
    for alpha, (tc, td) in tols.items():
        one = rfx.RFFClassifier(alpha=alpha, **CLS).partial_fit(X, y, classes=np.unique(y))
        full = rfx.RFFClassifier(alpha=alpha, **CLS).fit(X, y)
        np.testing.assert_array_equal(one.coef_, full.coef_)
        np.testing.assert_array_equal(one.decision_function(Xt), full.decision_function(Xt))
        for sw in (None, w):
            full = rfx.RFFClassifier(alpha=alpha, **CLS).fit(X, y, sample_weight=sw)
            part = rfx.RFFClassifier(alpha=alpha, **CLS)
            for rows in np.array_split(np.arange(len(y)), 4):
                part.partial_fit(X[rows], y[rows], classes=np.unique(y),
                                 sample_weight=None if sw is None else sw[rows])
            assert list(part.classes_) == list(full.classes_)
            assert part.alpha_ == pytest.approx(full.alpha_, rel=1e-12)
            assert close(part.coef_, full.coef_, tc)
            assert close(part.intercept_, full.intercept_, tc)
            assert close(part.decision_function(Xt), full.decision_function(Xt), td)
            assert np.mean(part.predict(Xt) == full.predict(Xt)) > 0.99


def test_classifier_merge_equals_one_fit():
    X, _ = data(2400)
    y = labels(X, 3)
    pieces = [rfx.RFFClassifier(alpha=1.0, **CLS).partial_fit(X[r], y[r], classes=["a", "b", "c"])
              for r in np.array_split(np.arange(len(y)), 3)]
    merged = rfx.merge(*pieces)
    full = rfx.RFFClassifier(alpha=1.0, **CLS).fit(X, y)
    assert close(merged.decision_function(X[:200]), full.decision_function(X[:200]))
    assert merged.alpha_ == pytest.approx(full.alpha_, rel=1e-12)
    # a class absent from a batch is still a class (classes fixes them)
    part = rfx.RFFClassifier(alpha=1e-2, **CLS).partial_fit(X[y != "c"][:500],
                                                            y[y != "c"][:500],
                                                            classes=["a", "b", "c"])
    assert part.decision_function(X[:5]).shape == (5, 3)


def test_classifier_partial_fit_errors():
    X, _ = data(300)
    y = labels(X, 2)
    with pytest.raises(AttributeError, match="least_squares"):
        rfx.RFFClassifier(n_components=16).partial_fit(X, y, classes=["a", "b"])
    assert not hasattr(rfx.RFFClassifier(loss="hinge"), "partial_fit")
    est = rfx.RFFClassifier(alpha=1e-2, **CLS)
    with pytest.raises(ValueError, match="classes must be passed"):
        est.partial_fit(X, y)
    est.partial_fit(X[:100], y[:100], classes=["a", "b"])
    before = est.decision_function(X[:3])
    with pytest.raises(ValueError, match="not in classes"):
        est.partial_fit(X[:10], np.array(["a"] * 9 + ["z"]))
    with pytest.raises(ValueError, match="not the same"):
        est.partial_fit(X[:10], y[:10], classes=["a", "b", "c"])
    np.testing.assert_array_equal(est.decision_function(X[:3]), before)


def _worker_statistics(args):
    """What a worker process does: fit its rows, return the statistics."""
    X, y, kind = args
    if kind == "classifier":
        est = rfx.RFFClassifier(alpha=1.0, **CLS)
        return est.partial_fit(X, y, classes=["a", "b", "c"]).statistics_
    return rfx.RFFRegressor(alpha=None, **PARAMS).partial_fit(X, y).statistics_


@pytest.mark.parametrize("kind", ["regressor", "classifier"])
def test_statistics_from_worker_processes_sum_to_one_fit(kind):
    """Rows in 3 pieces, each fitted in its own process (a multiprocessing
    pool of spawned processes), the statistics sent back by pickling and
    summed with +: the fit of all rows to 1e-12 (the regressor with alpha
    chosen by GCV from the summed statistics), and bit for bit rfx.merge of
    the parts."""
    import multiprocessing
    X, y = data(2400)
    if kind == "classifier":
        y = labels(X, 3)
        full = rfx.RFFClassifier(alpha=1.0, **CLS).fit(X, y)
        value = lambda m, Z: m.decision_function(Z)
    else:
        full = rfx.RFFRegressor(alpha=None, **PARAMS).fit(X, y)
        value = lambda m, Z: m.predict(Z)
    jobs = [(X[r], y[r], kind) for r in np.array_split(np.arange(len(y)), 3)]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        parts = pool.map(_worker_statistics, jobs)
    total = sum(parts)
    assert isinstance(total, rfx.Statistics) and total.n_samples == len(y)
    est = total.to_estimator()
    Xt, _ = data(300, seed=1)
    assert close(value(est, Xt), value(full, Xt))
    np.testing.assert_array_equal(value(rfx.merge(*parts), Xt), value(est, Xt))
    # and the solved estimator goes on with partial_fit
    more, ymore = data(200, seed=2)
    if kind == "classifier":
        est.partial_fit(more, labels(more, 3))
    else:
        est.partial_fit(more, ymore)
    assert est.statistics_.n_samples == len(y) + 200


def test_statistics_pickle_bit_for_bit():
    X, y = data(1000)
    est = rfx.RFFRegressor(alpha=1e-3, **PARAMS).partial_fit(X[:600], y[:600],
                                                             sample_weight=np.full(600, 0.5))
    st = est.statistics_
    again = pickle.loads(pickle.dumps(st))
    assert again.n_samples == 600 and again.n_components == 256
    np.testing.assert_array_equal(again.to_estimator().predict(X[:50]), est.predict(X[:50]))
    # a pickled part adds like the original
    other = rfx.RFFRegressor(alpha=1e-3, **PARAMS).partial_fit(X[600:], y[600:]).statistics_
    np.testing.assert_array_equal((again + other).to_estimator().predict(X[:50]),
                                  (st + other).to_estimator().predict(X[:50]))


def test_statistics_that_cannot_add():
    X, y = data(300)
    a = rfx.RFFRegressor(alpha=1e-3, **PARAMS).partial_fit(X, y).statistics_
    seed = dict(PARAMS, random_state=99)
    with pytest.raises(ValueError, match="random_state"):
        a + rfx.RFFRegressor(alpha=1e-3, **seed).partial_fit(X, y).statistics_
    with pytest.raises(ValueError, match="n_components"):
        a + rfx.RFFRegressor(alpha=1e-3, **dict(PARAMS, n_components=64)).partial_fit(
            X, y).statistics_
    with pytest.raises(ValueError, match="different shapes"):
        a + rfx.RFFRegressor(alpha=1e-3, **PARAMS).partial_fit(X[:, :2], y).statistics_
    with pytest.raises(ValueError, match="RFFRegressor"):
        a + rfx.BayesianRFFRegressor(**PARAMS).partial_fit(X, y).statistics_
    # scales chosen from each one's first batch: different maps
    auto = dict(n_components=64, random_state=1)
    b = rfx.RFFRegressor(**auto).partial_fit(X[:150], y[:150]).statistics_
    c = rfx.RFFRegressor(**auto).partial_fit(X[150:] * 3, y[150:]).statistics_
    with pytest.raises(ValueError, match="different feature maps"):
        b + c
    ya = labels(X, 2)
    d = rfx.RFFClassifier(alpha=1e-2, **CLS).partial_fit(X, ya, classes=["a", "b"])
    e = rfx.RFFClassifier(alpha=1e-2, **CLS).partial_fit(X, np.where(ya == "b", "x", ya),
                                                         classes=["a", "x"])
    with pytest.raises(ValueError, match="different targets"):
        d.statistics_ + e.statistics_
    with pytest.raises(AttributeError, match="no statistics"):
        rfx.RFFRegressor(alpha=1e-3, **PARAMS).fit(X, y).statistics_
    assert a.n_samples == 300  # the failed additions changed nothing
