# SPDX-License-Identifier: BSD-3-Clause
"""sample_weight: the weighted fits against scikit-learn's Ridge,
RidgeClassifier and LogisticRegression fitted with the same weights on the
same random features, the Bayesian posterior against its closed form, the
weighted statistics of partial_fit against one weighted fit, and the
errors."""
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression, Ridge, RidgeClassifier

import rfx
from conftest import make_data


def weights(n, seed=0, zeros=True):
    w = np.random.RandomState(seed).uniform(0.2, 3.0, size=n)
    if zeros:
        w[::7] = 0.0
    return w


@pytest.mark.parametrize("n", [300, 50])  # primal (n > D) and dual (n < D)
def test_ridge_with_weights_is_sklearn_ridge(n):
    X, y = make_data(n, 3, seed=1)
    Y = np.column_stack([y, np.cos(X[:, 2])])
    w = weights(n)
    kw = dict(n_components=80, gamma=0.3, random_state=3)
    Z = rfx.RandomFourierFeatures(**kw).fit_transform(X)
    for alpha in (1e-2, 1.0):
        reg = rfx.RFFRegressor(alpha=alpha, standardize=False, **kw).fit(X, Y, sample_weight=w)
        peer = Ridge(alpha=alpha, solver="cholesky").fit(Z, Y, sample_weight=w)
        scale = np.abs(peer.coef_).max()
        assert np.abs(reg.coef_ - peer.coef_).max() < 1e-8 * scale
        assert np.abs(reg.intercept_ - peer.intercept_).max() < 1e-8
        assert np.abs(reg.predict(X) - peer.predict(Z)).max() < 1e-8


def test_weights_of_ones_zeros_and_scale():
    """Weights of 1 are no weights (bit for bit); weight 0 is a row left out
    (the defaults: standardisation, length scale and alpha chosen); with
    alpha=None, scaling every weight leaves the model (GCV's n counts rows)."""
    X, y = make_data(200, 3, seed=2)
    kw = dict(n_components=64, random_state=0)
    for cls in (rfx.RFFRegressor, rfx.BayesianRFFRegressor):
        a = cls(**kw).fit(X, y)
        b = cls(**kw).fit(X, y, sample_weight=np.ones(len(y)))
        np.testing.assert_array_equal(a.predict(X), b.predict(X))
        w = weights(len(y))
        keep = w > 0
        c = cls(**kw).fit(X, y, sample_weight=w)
        d = cls(**kw).fit(X[keep], y[keep], sample_weight=w[keep])
        np.testing.assert_array_equal(c.predict(X), d.predict(X))
    r1 = rfx.RFFRegressor(length_scale=1.0, **kw).fit(X, y, sample_weight=w)
    r2 = rfx.RFFRegressor(length_scale=1.0, **kw).fit(X, y, sample_weight=10 * w)
    assert r2.alpha_ == pytest.approx(10 * r1.alpha_, rel=1e-9)
    np.testing.assert_allclose(r2.predict(X), r1.predict(X), rtol=1e-9, atol=1e-9)


def test_bayes_with_weights_is_the_closed_form():
    """Given variances: row i has noise variance noise_var / w_i, so the
    posterior mean is (Zc^T W Zc / s2 + I / p2)^-1 Zc^T W yc / s2 about the
    weighted means."""
    X, y = make_data(150, 2, seed=3)
    w = weights(len(y))
    s2, p2 = 0.05, 2.0
    kw = dict(n_components=60, gamma=0.5, random_state=1)
    Z = rfx.RandomFourierFeatures(**kw).fit_transform(X)
    gp = rfx.BayesianRFFRegressor(noise_var=s2, prior_var=p2, standardize=False,
                                  **kw).fit(X, y, sample_weight=w)
    mu, ybar = np.average(Z, axis=0, weights=w), np.average(y, weights=w)
    Zc, yc = Z - mu, y - ybar
    A = Zc.T @ (w[:, None] * Zc) / s2 + np.eye(Z.shape[1]) / p2
    m = np.linalg.solve(A, Zc.T @ (w * yc) / s2)
    assert np.abs(gp.coef_ - m).max() < 1e-8 * np.abs(m).max()
    assert gp.intercept_ == pytest.approx(ybar - mu @ m, abs=1e-8)


def test_least_squares_classifier_with_weights_is_ridge_classifier():
    rs = np.random.RandomState(0)
    X = rs.normal(size=(150, 2))
    labels = np.array(["a", "b", "c"])[np.digitize(X[:, 0] * X[:, 1], [-0.3, 0.3])]
    w = weights(len(X))
    kw = dict(n_components=80, gamma=0.5, random_state=2)
    clf = rfx.RFFClassifier(alpha=0.1, loss="least_squares", standardize=False,
                            **kw).fit(X, labels, sample_weight=w)
    Z = rfx.RandomFourierFeatures(**kw).fit_transform(X)
    peer = RidgeClassifier(alpha=0.1, solver="cholesky").fit(Z, labels, sample_weight=w)
    assert np.abs(clf.decision_function(X) - peer.decision_function(Z)).max() < 1e-8
    assert np.array_equal(clf.predict(X), peer.predict(Z))


@pytest.mark.parametrize("class_weight", [{"a": 3.0, "c": 0.5}, "balanced"])
def test_least_squares_class_weight_is_ridge_classifier(class_weight):
    """class_weight multiplies the rows' weights, as RidgeClassifier's; a
    dict goes through partial_fit too, batch by batch."""
    rs = np.random.RandomState(5)
    X = rs.normal(size=(160, 2))
    labels = np.array(["a", "b", "c"])[np.digitize(X[:, 0] * X[:, 1], [-0.3, 0.3])]
    w = weights(len(X), seed=6)
    kw = dict(n_components=80, gamma=0.5, random_state=2, alpha=0.1, loss="least_squares",
              standardize=False)
    clf = rfx.RFFClassifier(class_weight=class_weight, **kw).fit(X, labels, sample_weight=w)
    Z = rfx.RandomFourierFeatures(n_components=80, gamma=0.5, random_state=2).fit_transform(X)
    peer = RidgeClassifier(alpha=0.1, solver="cholesky", class_weight=class_weight).fit(
        Z, labels, sample_weight=w)
    assert np.abs(clf.decision_function(X) - peer.decision_function(Z)).max() < 1e-8
    if isinstance(class_weight, dict):
        part = rfx.RFFClassifier(class_weight=class_weight, **kw)
        for rows in np.array_split(np.arange(len(X)), 3):
            part.partial_fit(X[rows], labels[rows], classes=["a", "b", "c"],
                             sample_weight=w[rows])
        assert np.abs(part.decision_function(X) - clf.decision_function(X)).max() < 1e-9
    else:
        with pytest.raises(ValueError, match="balanced"):
            rfx.RFFClassifier(class_weight=class_weight, **kw).partial_fit(X, labels,
                                                                           classes=["a", "b", "c"])


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("n_classes", [2, 3])
def test_logistic_with_weights_is_sklearn_logistic_regression(n_classes):
    """J = sum_i w_i loss_i / n' + alpha / 2 |W|^2 (n' the rows of positive
    weight) is LogisticRegression(C = 1 / (n' alpha)) with the same weights,
    solved by Newton's method (its lbfgs stops 1e-4 short here). Measured:
    coefficients within 5e-11 (binary) and 1.4e-10 (one-vs-rest), softmax
    probabilities within 3.2e-10; asserted to 1e-8."""
    rs = np.random.RandomState(1)
    X = rs.normal(size=(200, 2))
    y = np.digitize(X[:, 0] * X[:, 1], [-0.3, 0.3]) % n_classes
    labels = np.array(["a", "b", "c"])[y]
    w = weights(len(X), seed=4)
    n_pos, alpha = np.count_nonzero(w), 0.01
    kw = dict(n_components=60, gamma=0.5, random_state=4)
    Z = rfx.RandomFourierFeatures(**kw).fit_transform(X)
    for mc in (["ovr", "softmax"] if n_classes > 2 else ["ovr"]):
        clf = rfx.RFFClassifier(alpha=alpha, loss="logistic", multi_class=mc, standardize=False,
                                tol=1e-12, **kw).fit(X, labels, sample_weight=w)
        peer = LogisticRegression(C=1 / (n_pos * alpha), tol=1e-10, max_iter=1000,
                                  multi_class="multinomial" if mc == "softmax" else "ovr",
                                  solver="newton-cg" if mc == "softmax" else "newton-cholesky"
                                  ).fit(Z, labels, sample_weight=w)
        if mc == "softmax":  # scores are defined up to a common shift
            assert np.abs(clf.predict_proba(X) - peer.predict_proba(Z)).max() < 1e-8
        else:
            assert np.abs(clf.coef_ - peer.coef_).max() < 1e-8
            assert np.abs(clf.intercept_ - peer.intercept_).max() < 1e-8
        assert np.array_equal(clf.predict(X), peer.predict(Z))


@pytest.mark.parametrize("cls", [rfx.RFFRegressor, rfx.BayesianRFFRegressor])
def test_weighted_batches_equal_one_weighted_fit(cls):
    X, y = make_data(900, 3, seed=5)
    w = weights(len(y))
    kw = dict(n_components=96, length_scale=1.2, standardize=False, random_state=6)
    if cls is rfx.RFFRegressor:
        kw["alpha"] = None  # GCV on the merged weighted statistics
    full = cls(**kw).fit(X, y, sample_weight=w)
    part = cls(**kw)
    for rows in np.array_split(np.arange(len(y)), 3):
        part.partial_fit(X[rows], y[rows], sample_weight=w[rows])
    np.testing.assert_allclose(part.predict(X[:200]), full.predict(X[:200]), rtol=1e-9,
                               atol=1e-9)


def test_errors_name_sample_weight():
    X, y = make_data(40, 2)
    reg = rfx.RFFRegressor(n_components=16, alpha=1e-2, length_scale=1.0)
    with pytest.raises(ValueError):
        reg.fit(X, y, sample_weight=-np.ones(40))
    with pytest.raises(ValueError):
        reg.fit(X, y, sample_weight=np.ones(39))
    with pytest.raises(ValueError, match="sample_weight: all 40 weights are zero"):
        reg.fit(X, y, sample_weight=np.zeros(40))
    with pytest.raises(ValueError, match="sample_weight"):
        reg.fit(X, y, sample_weight=np.full(40, np.inf))
    assert not hasattr(reg, "coef_")
    labels = (y > np.median(y)).astype(int)
    with pytest.raises(ValueError, match="classify.sample_weight"):
        rfx.RFFClassifier(n_components=16, alpha=1e-2, length_scale=1.0,
                          optimizer="sgd").fit(X, labels, sample_weight=np.ones(40))


def test_kernel_ridge_weights_equal_scikit_learn():
    """rfx.KernelRidge with sample_weight equals scikit-learn's KernelRidge
    with the same weights; weights of 1 are no weights; a zero weight gives
    a zero dual coefficient."""
    from sklearn.kernel_ridge import KernelRidge as SkKernelRidge
    rng = np.random.RandomState(3)
    X = rng.uniform(-1, 1, size=(80, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.05 * rng.normal(size=80)
    w = rng.uniform(0.1, 3.0, size=80)
    w[5] = 0.0
    ours = rfx.KernelRidge(alpha=0.1, kernel="rbf", gamma=0.7).fit(X, y, sample_weight=w)
    theirs = SkKernelRidge(alpha=0.1, kernel="rbf", gamma=0.7).fit(X, y, sample_weight=w)
    Xt = rng.uniform(-1, 1, size=(40, 3))
    np.testing.assert_allclose(ours.predict(Xt), theirs.predict(Xt), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.dual_coef_, theirs.dual_coef_, rtol=1e-9, atol=1e-12)
    assert ours.dual_coef_[5] == 0.0
    plain = rfx.KernelRidge(alpha=0.1, kernel="rbf", gamma=0.7).fit(X, y)
    ones = rfx.KernelRidge(alpha=0.1, kernel="rbf", gamma=0.7).fit(X, y, sample_weight=np.ones(80))
    assert np.array_equal(plain.dual_coef_, ones.dual_coef_)
    with pytest.raises(ValueError, match="Negative values"):
        rfx.KernelRidge(alpha=0.1).fit(X, y, sample_weight=-w)


@pytest.mark.parametrize("loss", ["logistic", "auto"])
def test_classifier_choice_does_not_depend_on_row_order(loss):
    """alpha=None chooses the length scale and alpha by the rows' contents,
    not their positions: the same rows in another order (and with extra
    rows of weight 0) choose the same alpha and length scale. The logistic
    loss draws its holdout by a hash of each row, and its final L-BFGS fits
    then differ within its tolerance: with tol = 1e-10 the decision values
    (about 10) agreed within 5.2e-6; with the default tolerance, within
    2.3e-2, which a change of rounding can move. The default (least squares by exact leave-one-out,
    then the refinement, whose holdout is drawn by the same hash) sums its
    statistics in row order, so alpha, a grid point times the trace of
    Z^T Z over D, may move by rounding."""
    rs = np.random.RandomState(7)
    X = rs.normal(size=(300, 2))
    labels = np.where(np.hypot(X[:, 0], X[:, 1]) < 1.1, "in", "out")
    kw = dict(n_components=64, random_state=3, loss=loss)
    if loss == "logistic":
        kw["tol"] = 1e-10
    rel = 0 if loss == "logistic" else 1e-12
    a = rfx.RFFClassifier(**kw).fit(X, labels)
    perm = rs.permutation(len(X))
    b = rfx.RFFClassifier(**kw).fit(X[perm], labels[perm])
    assert b.alpha_ == pytest.approx(a.alpha_, rel=rel, abs=0)
    assert b.length_scale_ == pytest.approx(a.length_scale_, rel=1e-12)
    np.testing.assert_allclose(b.decision_function(X), a.decision_function(X), atol=1e-2)
    extra = rs.normal(size=(100, 2))
    Xz = np.vstack([X, extra])
    lz = np.concatenate([labels, np.where(extra[:, 0] > 0, "in", "out")])
    wz = np.concatenate([np.ones(len(X)), np.zeros(len(extra))])
    pz = rs.permutation(len(Xz))
    c = rfx.RFFClassifier(**kw).fit(Xz[pz], lz[pz], sample_weight=wz[pz])
    assert c.alpha_ == pytest.approx(a.alpha_, rel=rel, abs=0)
    assert c.length_scale_ == pytest.approx(a.length_scale_, rel=1e-12)
    np.testing.assert_allclose(c.decision_function(X), a.decision_function(X), atol=1e-2)


def test_regressor_subset_does_not_depend_on_row_order():
    """Beyond select_rows (4000) the length scale is chosen on a subset of
    the rows picked by their contents: another order picks the same (the
    golden-section search then ends within rounding of the same scale, and
    the predictions agree to 3e-6 relative, measured)."""
    X, y = make_data(4500, 2, seed=9)
    kw = dict(n_components=32, random_state=1)
    a = rfx.RFFRegressor(**kw).fit(X, y)
    perm = np.random.RandomState(0).permutation(len(y))
    b = rfx.RFFRegressor(**kw).fit(X[perm], y[perm])
    assert b.length_scale_ == pytest.approx(a.length_scale_, rel=1e-9)
    np.testing.assert_allclose(b.predict(X[:100]), a.predict(X[:100]), rtol=1e-5, atol=1e-6)
