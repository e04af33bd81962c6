# SPDX-License-Identifier: BSD-3-Clause
"""sample_weight of the surrogates (SparseRFERegressor, PCERegressor,
ProjectedRegressor, SurrogateRegressor): against scikit-learn's Lasso and
numpy's weighted least squares on the same features or basis, against the
rows repeated by integer weights, weights of 1 against no weights (bit for
bit), and weight 0 against the row left out."""
import numpy as np
import pytest
from sklearn.linear_model import Lasso

import rfx
from rfx._lib import cmat, ffi, lib, mat


def data(n=150, d=3, seed=0):
    rs = np.random.RandomState(seed)
    X = rs.uniform(-1, 1, size=(n, d))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.05 * rs.normal(size=n)
    return X, y


def weights(n, seed=1, zeros=True):
    w = np.random.RandomState(seed).uniform(0.2, 3.0, size=n)
    if zeros:
        w[::7] = 0.0
    return w


def model_features(est, X):
    """z(X) of a fitted feature model's map (its inputs not standardised)."""
    f = lib.rfx_model_features(est._model)
    X = np.ascontiguousarray(X, dtype=np.float64)
    Z = np.empty((X.shape[0], int(lib.rfx_features_output_dim(f))))
    lib.rfx_features_transform(f, cmat(X), mat(Z))
    return Z


SRFE = dict(n_components=200, sparsity=2, weight_scale=1.0, random_state=3)


def test_srfe_weighted_lasso_is_sklearn_lasso():
    """With standardize=False and alpha, q, s and N given, the weighted SRFE
    fit is Lasso(alpha).fit(A, y, sample_weight=w) on the feature columns
    scaled to unit weighted norm, sum_i v_i a_ij^2 = 1 with v = m w / sum w
    (m the rows of positive weight). Measured: coefficients within 1.7e-13
    of the largest (10 nonzero), the intercept within 2e-14; asserted to
    1e-7."""
    X, y = data()
    w = weights(len(y))
    alpha = 2e-3
    est = rfx.SparseRFERegressor(alpha=alpha, standardize=False, **SRFE).fit(X, y,
                                                                            sample_weight=w)
    Z = model_features(est, X)
    m = np.count_nonzero(w)
    v = m * w / w.sum()
    cs = np.sqrt(v @ Z ** 2)
    peer = Lasso(alpha=alpha, tol=1e-14, max_iter=1000000).fit(Z / cs, y, sample_weight=w)
    coef = peer.coef_ / cs
    scale = np.abs(coef).max()
    assert np.abs(est.coef_ - coef).max() < 1e-7 * scale
    assert est.intercept_ == pytest.approx(peer.intercept_, abs=1e-7)
    assert est.n_nonzero_ == np.count_nonzero(peer.coef_)


@pytest.mark.parametrize("method", ["lasso", "htp"])
def test_srfe_integer_weights_are_repeated_rows(method):
    """An integer weight k is the row repeated k times: the same
    standardisation and features, the repeated rows' unit columns sqrt(m /
    sum w) times the weighted ones, so alpha maps to alpha sqrt(m / sum w)
    (HTP's tiny ridge, 1e-12, maps to ridge m / sum w: a well-conditioned
    support of s = 5 makes it invisible; measured 5e-8 of the largest
    coefficient, 2.2)."""
    X, y = data(120, seed=4)
    k = np.random.RandomState(5).randint(1, 4, size=len(y))
    rows = np.repeat(np.arange(len(y)), k)
    kw = dict(SRFE, method=method)
    if method == "htp":
        kw["n_nonzero"] = 5
        a = rfx.SparseRFERegressor(**kw).fit(X, y, sample_weight=k)
        b = rfx.SparseRFERegressor(**kw).fit(X[rows], y[rows])
    else:
        alpha = 1e-3
        a = rfx.SparseRFERegressor(alpha=alpha, **kw).fit(X, y, sample_weight=k)
        b = rfx.SparseRFERegressor(alpha=alpha * np.sqrt(len(y) / k.sum()),
                                   **kw).fit(X[rows], y[rows])
    Xt, _ = data(50, seed=6)
    np.testing.assert_allclose(a.predict(Xt), b.predict(Xt), rtol=1e-7, atol=1e-7)
    np.testing.assert_array_equal(np.flatnonzero(a.coef_), np.flatnonzero(b.coef_))


@pytest.mark.parametrize("selection", ["gcv", "kfold"])
def test_srfe_ones_zeros_and_scale(selection):
    """The defaults (q, scale, N and alpha chosen): weights of 1 are no
    weights bit for bit; weight 0 is the row left out bit for bit; scaling
    every weight by 10 changes nothing."""
    X, y = data(100, seed=7)
    kw = dict(n_components=400, selection=selection, random_state=1)
    a = rfx.SparseRFERegressor(**kw).fit(X, y)
    b = rfx.SparseRFERegressor(**kw).fit(X, y, sample_weight=np.ones(len(y)))
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    w = weights(len(y), seed=8)
    keep = w > 0
    c = rfx.SparseRFERegressor(**kw).fit(X, y, sample_weight=w)
    d = rfx.SparseRFERegressor(**kw).fit(X[keep], y[keep], sample_weight=w[keep])
    np.testing.assert_array_equal(c.predict(X), d.predict(X))
    e = rfx.SparseRFERegressor(**kw).fit(X, y, sample_weight=10 * w)
    np.testing.assert_allclose(e.predict(X), c.predict(X), rtol=1e-9, atol=1e-9)
    assert (e.alpha_, e.weight_scale_, e.sparsity_) == pytest.approx(
        (c.alpha_, c.weight_scale_, c.sparsity_), rel=1e-9)


def test_srfe_weight_errors():
    X, y = data(30)
    est = rfx.SparseRFERegressor(n_components=100)
    with pytest.raises(ValueError, match="Negative"):
        est.fit(X, y, sample_weight=-np.ones(30))
    w = np.zeros(30)
    w[4] = 1.0
    with pytest.raises(ValueError, match="at least 2"):
        est.fit(X, y, sample_weight=w)
    assert not hasattr(est, "coef_")
