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


# ---------------------------------------------------------------------------
# PCE
# ---------------------------------------------------------------------------

MARG = [("uniform", -1.0, 1.0)] * 3


def legendre_design(X, alpha):
    """Psi (n x P): the orthonormal Legendre products of U(-1, 1) inputs."""
    from numpy.polynomial import legendre
    P = np.ones((X.shape[0], len(alpha)))
    for k, a in enumerate(alpha):
        for j, deg in enumerate(a):
            c = np.zeros(deg + 1)
            c[deg] = np.sqrt(2 * deg + 1)
            P[:, k] *= legendre.legval(X[:, j], c)
    return P


def weighted_lsq(Psi, y, w):
    s = np.sqrt(w)
    return np.linalg.lstsq(Psi * s[:, None], y * s, rcond=None)[0]


def test_pce_lsq_weights_are_weighted_least_squares_and_loo():
    """LSQ on the degree-3 basis: the coefficients are numpy's weighted
    least squares on the same basis, and the LOO errors follow the weighted
    formulas: e_i = r_i / (1 - h_i), h_i = w_i psi_i^T (Psi^T W Psi)^-1
    psi_i, loo_mse = sum w e^2 / sum w over the rows of positive weight,
    loo_relative = loo_mse / s_y^2 (weighted variance, v = n w / sum w,
    divisor n - 1), loo_corrected with tr((Psi^T V Psi)^-1). Measured:
    coefficients within 6e-16 of the largest, the three LOO errors within
    7e-16 relative."""
    X, y = data(200, seed=11)
    w = weights(len(y), seed=12)
    est = rfx.PCERegressor(MARG, degree=3, method="lsq").fit(X, y, sample_weight=w)
    keep = w > 0
    Xk, yk, wk = X[keep], y[keep], w[keep]
    Psi = legendre_design(Xk, est.multi_indices_)
    c = weighted_lsq(Psi, yk, wk)
    np.testing.assert_allclose(est.coef_, c, rtol=1e-10, atol=1e-12)
    n, P = Psi.shape
    v = n * wk / wk.sum()
    G = Psi.T @ (v[:, None] * Psi)
    Ginv = np.linalg.inv(G)
    h = v * np.einsum("ij,jk,ik->i", Psi, Ginv, Psi)
    e = (yk - Psi @ c) / (1 - h)
    loo = np.sum(wk * e ** 2) / wk.sum()
    ybar = np.average(yk, weights=wk)
    s2 = np.sum(v * (yk - ybar) ** 2) / (n - 1)
    corrected = loo / s2 * n / (n - P) * (1 + np.trace(Ginv))
    assert est.loo_mse_ == pytest.approx(loo, rel=1e-9)
    assert est.loo_relative_ == pytest.approx(loo / s2, rel=1e-9)
    assert est.loo_corrected_ == pytest.approx(corrected, rel=1e-9)


def test_pce_integer_weights_are_repeated_rows():
    """LSQ at a given degree: integer weights give the coefficients of the
    rows repeated (the LOO errors differ by design: a weighted row is left
    out whole)."""
    X, y = data(80, seed=13)
    k = np.random.RandomState(14).randint(1, 5, size=len(y))
    rows = np.repeat(np.arange(len(y)), k)
    a = rfx.PCERegressor(MARG, degree=4, method="lsq").fit(X, y, sample_weight=k)
    b = rfx.PCERegressor(MARG, degree=4, method="lsq").fit(X[rows], y[rows])
    np.testing.assert_array_equal(a.multi_indices_, b.multi_indices_)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-10, atol=1e-12)


def test_pce_lars_weighted_model_is_weighted_least_squares_on_its_terms():
    """LARS (degree chosen from 1..5 by the weighted corrected LOO error):
    whatever terms it keeps, their coefficients are numpy's weighted least
    squares on those terms; the rows of weight 0 play no part."""
    X, y = data(150, seed=15)
    w = weights(len(y), seed=16)
    est = rfx.PCERegressor(MARG, degree=5, degree_min=1).fit(X, y, sample_weight=w)
    keep = w > 0
    Psi = legendre_design(X[keep], est.multi_indices_)
    np.testing.assert_allclose(est.coef_, weighted_lsq(Psi, y[keep], w[keep]), rtol=1e-9,
                               atol=1e-11)
    y2 = y.copy()
    y2[~keep] = 1e6  # a row of weight 0 is left out
    est2 = rfx.PCERegressor(MARG, degree=5, degree_min=1).fit(X, y2, sample_weight=w)
    np.testing.assert_array_equal(est2.coef_, est.coef_)


def test_pce_ones_zeros_and_scale():
    """The defaults (LARS, the automatic basis, marginals from the data):
    weights of 1 are no weights bit for bit; weight 0 is the row left out
    bit for bit (the marginals and the box from the other rows); scaling
    the weights changes nothing."""
    X, y = data(120, seed=17)
    a = rfx.PCERegressor().fit(X, y)
    b = rfx.PCERegressor().fit(X, y, sample_weight=np.ones(len(y)))
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    w = weights(len(y), seed=18)
    keep = w > 0
    c = rfx.PCERegressor().fit(X, y, sample_weight=w)
    d = rfx.PCERegressor().fit(X[keep], y[keep], sample_weight=w[keep])
    np.testing.assert_array_equal(c.predict(X), d.predict(X))
    assert c.marginals_ == d.marginals_
    e = rfx.PCERegressor().fit(X, y, sample_weight=7.5 * w)
    np.testing.assert_array_equal(e.multi_indices_, c.multi_indices_)
    np.testing.assert_allclose(e.coef_, c.coef_, rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="Negative"):
        rfx.PCERegressor().fit(X, y, sample_weight=-w)


# ---------------------------------------------------------------------------
# ProjectedRegressor
# ---------------------------------------------------------------------------

PROJ = dict(n_particles=4, iterations=2, random_state=2)


def test_projected_given_theta_is_the_weighted_surrogate_on_the_scores():
    """With theta, gamma and k given the kernel PCA is that of the rows
    (unweighted) and the surrogate is fitted with the weights: the model is
    PCERegressor (LARS, degree 3, normal marginals from the weighted moments
    of the scores) fitted with the same weights on KernelPCA's scores."""
    X, y = data(90, d=3, seed=21)
    w = weights(len(y), seed=22, zeros=False)
    theta = np.array([1.0, 0.6, 0.3])
    est = rfx.ProjectedRegressor(2, surrogate="pce", theta=theta, gamma=0.3,
                                 **PROJ).fit(X, y, sample_weight=w)
    T = rfx.KernelPCA(2, theta=theta, gamma=0.3).fit_transform(X)
    mu = np.average(T, axis=0, weights=w)
    sd = np.sqrt(np.average((T - mu) ** 2, axis=0, weights=w))
    peer = rfx.PCERegressor([("normal", mu[j], sd[j]) for j in range(2)], degree=3,
                            method="lars").fit(T, y, sample_weight=w)
    np.testing.assert_allclose(est.predict(X), peer.predict(T), rtol=1e-9, atol=1e-10)
    assert est.loss_ == pytest.approx(peer.loo_corrected_, rel=1e-9)


@pytest.mark.parametrize("surrogate", ["ridge", "pce"])
def test_projected_ones_zeros(surrogate):
    """The search (screening, shape, swarm and, for pce, the finalists):
    weights of 1 are no weights bit for bit, weight 0 the row left out bit
    for bit."""
    X, y = data(60, d=3, seed=23)
    kw = dict(PROJ, surrogate=surrogate)
    a = rfx.ProjectedRegressor(**kw).fit(X, y)
    b = rfx.ProjectedRegressor(**kw).fit(X, y, sample_weight=np.ones(len(y)))
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.theta_, b.theta_)
    w = weights(len(y), seed=24)
    keep = w > 0
    c = rfx.ProjectedRegressor(**kw).fit(X, y, sample_weight=w)
    d = rfx.ProjectedRegressor(**kw).fit(X[keep], y[keep], sample_weight=w[keep])
    np.testing.assert_array_equal(c.predict(X), d.predict(X))
    assert c.loss_ == d.loss_


# ---------------------------------------------------------------------------
# SurrogateRegressor
# ---------------------------------------------------------------------------

AUTO = dict(candidates=["ridge", "pce"], n_folds=3)


def test_surrogate_weighted_score_is_the_weighted_cv_error():
    """PCE (no transform) on given folds, every candidate on every fold:
    its score is sqrt(sum w (f - y)^2 / sum w (y - ybar_w)^2) over the
    held-out rows, each fold's PCE (LARS, the automatic basis, degrees from
    1, uniform marginals on the range of all rows) fitted with its rows'
    weights; the final model is the weighted PCE of all rows."""
    X, y = data(90, seed=31)
    w = weights(len(y), seed=32, zeros=False)
    folds = np.arange(len(y)) % 3
    est = rfx.SurrogateRegressor(candidates=["pce", "ridge"], target_transform=["none"],
                                 cv=folds, race_factor=float("inf")).fit(X, y, sample_weight=w)
    i = est.cv_results_["method"].index("pce")
    assert est.cv_results_["folds"][i] == 3 and est.best_method_ == "pce"
    marg = [("uniform", X[:, j].min(), X[:, j].max()) for j in range(X.shape[1])]
    ybar = np.average(y, weights=w)
    sse = sst = 0.0
    for f in range(3):
        tr, te = folds != f, folds == f
        pce = rfx.PCERegressor(marg, degree_min=1).fit(X[tr], y[tr], sample_weight=w[tr])
        sse += np.sum(w[te] * (pce.predict(X[te]) - y[te]) ** 2)
        sst += np.sum(w[te] * (y[te] - ybar) ** 2)
    assert est.cv_results_["cv_error"][i] == pytest.approx(np.sqrt(sse / sst), rel=1e-12)
    full = rfx.PCERegressor(marg, degree_min=1).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(est.predict(X), full.predict(X), rtol=1e-12, atol=1e-12)


def test_surrogate_ones_zeros_scale_and_row_order():
    """Weights of 1 are no weights and weight 0 the row left out, bit for
    bit; scaled weights and the rows in another order make the same folds
    and the same choice. The scores then agree to rounding, amplified by
    the ridge candidates' choices of length scale (a golden-section search
    on a flat GCV): measured 1.5e-7 relative for the rows in another order
    on an AVX2 machine and 1.5e-4 on an AVX-512 one (whose BLAS and kernels
    round differently), and 9e-4 for weights times 3 (the PCE candidates':
    1e-15). Both get the bound 2e-3."""
    X, y = data(90, seed=33)
    y = np.exp(y)  # positive: the log and Box-Cox are candidates
    a = rfx.SurrogateRegressor(**AUTO).fit(X, y)
    b = rfx.SurrogateRegressor(**AUTO).fit(X, y, sample_weight=np.ones(len(y)))
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    assert a.cv_results_["cv_error"] == b.cv_results_["cv_error"]
    w = weights(len(y), seed=34)
    keep = w > 0
    c = rfx.SurrogateRegressor(**AUTO).fit(X, y, sample_weight=w)
    d = rfx.SurrogateRegressor(**AUTO).fit(X[keep], y[keep], sample_weight=w[keep])
    np.testing.assert_array_equal(c.predict(X), d.predict(X))
    assert c.cv_results_["cv_error"] == d.cv_results_["cv_error"]
    e = rfx.SurrogateRegressor(**AUTO).fit(X, y, sample_weight=3 * w)
    perm = np.random.RandomState(35).permutation(len(y))
    f = rfx.SurrogateRegressor(**AUTO).fit(X[perm], y[perm], sample_weight=w[perm])
    for other, tol in ((e, 2e-3), (f, 2e-3)):
        assert (other.best_method_, other.best_transform_) == (c.best_method_,
                                                               c.best_transform_)
        np.testing.assert_allclose(other.cv_results_["cv_error"], c.cv_results_["cv_error"],
                                   rtol=tol)
        pce = [j for j, m in enumerate(c.cv_results_["method"]) if m == "pce"]
        np.testing.assert_allclose(np.take(other.cv_results_["cv_error"], pce),
                                   np.take(c.cv_results_["cv_error"], pce), rtol=1e-12)
        np.testing.assert_allclose(other.predict(X), c.predict(X), rtol=1e-9)


def test_boxcox_weighted_lambda_is_that_of_repeated_values():
    """rfx_target_boxcox_lambda_weighted: integer weights give the lambda of
    the values repeated, a common factor changes nothing, and no weights
    are rfx_target_boxcox_lambda."""
    y = np.exp(np.random.RandomState(36).normal(size=60)) ** 0.7
    k = np.random.RandomState(37).randint(1, 4, size=60).astype(np.float64)

    def lam(v, w=None):
        v = np.ascontiguousarray(v)
        out = ffi.new("double *")
        wp = ffi.NULL if w is None else ffi.cast("const double *", w.ctypes.data)
        assert lib.rfx_target_boxcox_lambda_weighted(ffi.cast("const double *", v.ctypes.data),
                                                     wp, len(v), out) == 0
        return out[0]

    rep = np.repeat(y, k.astype(int))
    assert lam(y, k) == pytest.approx(lam(rep), abs=1e-9)
    assert lam(y, 4.0 * k) == pytest.approx(lam(y, k), abs=1e-12)
    plain = ffi.new("double *")
    lib.rfx_target_boxcox_lambda(ffi.cast("const double *", y.ctypes.data), len(y), plain)
    assert lam(y) == plain[0]
    assert abs(lam(y, k) - lam(y)) > 1e-3  # the weights matter
