# SPDX-License-Identifier: BSD-3-Clause
"""The phase-free form: phi(w.x) with b = 0, the frequencies of the cos-bias
map of the same seed, odd features, the arc-cosine kernel of relu features,
and the estimators that take it (model files included)."""
import numpy as np
import pytest

import rfx


def _X(n=40, d=3, seed=0):
    return np.random.RandomState(seed).uniform(-1.5, 1.5, size=(n, d))


@pytest.mark.parametrize("activation", ["sin", "tanh", "sigmoid", "relu", "sign"])
def test_features_are_phi_of_wx(activation):
    X = _X()
    pf = rfx.RandomFourierFeatures(50, activation=activation, form="phase_free",
                                   random_state=7).fit(X)
    cb = rfx.RandomFourierFeatures(50, activation=activation, form="cos_bias",
                                   random_state=7).fit(X)
    W = pf.random_weights_
    assert np.array_equal(W, cb.random_weights_)  # bit for bit
    assert np.all(pf.random_offset_ == 0) and np.all(cb.random_offset_ != 0)
    t = X @ W
    phi = {"sin": np.sin, "tanh": np.tanh, "sigmoid": lambda u: 1 / (1 + np.exp(-u)),
           "relu": lambda u: np.maximum(u, 0), "sign": np.sign}[activation]
    Z = pf.transform(X)
    ok = np.abs(t) > 1e-12  # sign may flip within rounding of 0
    assert np.max(np.abs(Z - phi(t))[ok]) < 1e-12
    if activation in ("sin", "tanh", "sign"):
        assert np.array_equal(pf.transform(-X), -Z)  # exactly odd


def test_cos_is_refused():
    with pytest.raises(ValueError, match="phase-free form is for the activations other than"):
        rfx.RandomFourierFeatures(10, form="phase_free").fit(_X())
    with pytest.raises(ValueError, match="feature form 'phasefree'"):
        rfx.RandomFourierFeatures(10, activation="tanh", form="phasefree").fit(_X())


def test_relu_arccos_kernel():
    """2/D z(x).z(y) of relu features with N(0, s^2 I) weights against the
    arc-cosine kernel of order 1, within 4 standard errors of the mean."""
    s, D = 0.7, 100000
    X = np.array([[0.5, -1.0, 0.8], [1.2, 0.3, -0.4], [-0.3, 0.7, 1.5]])
    f = rfx.RandomFourierFeatures(D, activation="relu", form="phase_free", weights="normal",
                                  weight_scale=s, length_scale=1.0, random_state=3).fit(X)
    Z = f.transform(X)
    K = rfx.Kernel.arccos(1, sigma=s)(X)
    for i in range(3):
        for j in range(i, 3):
            terms = 2 * Z[i] * Z[j]
            se = terms.std(ddof=1) / np.sqrt(D)
            assert abs(terms.mean() - K[i, j]) < 4 * se, (i, j, terms.mean(), K[i, j], se)


def test_regressor_file_round_trip(tmp_path):
    X = _X(200, 3, 1)
    y = np.tanh(X[:, 0]) - 0.5 * X[:, 1] * X[:, 2]
    reg = rfx.RFFRegressor(60, activation="tanh", form="phase_free", weights="normal",
                           random_state=4).fit(X, y)
    path = str(tmp_path / "pf.rfx")
    reg.save(path)
    with open(path, "rb") as fh:
        assert int.from_bytes(fh.read(12)[8:12], "little") == 4  # format version 4
    back = rfx.load_model(path)
    assert back.get_params()["form"] == "phase_free"
    assert np.array_equal(back.predict(X), reg.predict(X))


def test_greedy_recovers_one_term(tmp_path):
    """One phase-free tanh term is in the model family: the refinement
    recovers it to rounding (up to the sign of (w, beta)), with b = 0."""
    X = _X(300, 2, 12)
    y = 0.8 * np.tanh(1.2 * X[:, 0] - 0.5 * X[:, 1]) + 0.1
    g = rfx.GreedyRegressor(1, activation="tanh", weights="normal", form="phase_free",
                            n_candidates=64, refine_steps=10, random_state=21).fit(X, y)
    assert g.train_mse_ < 1e-18
    assert abs(g.intercept_ - 0.1) < 1e-9
    path = str(tmp_path / "greedy.rfx")
    g.save(path)
    back = rfx.load_model(path)
    assert back.get_params()["form"] == "phase_free"
    assert np.array_equal(back.predict(X), g.predict(X))
    Xn = -X
    assert np.max(np.abs(g.predict(X) + g.predict(Xn) - 2 * g.intercept_)) < 1e-12
    with pytest.raises(ValueError, match="features.form"):
        rfx.GreedyRegressor(4, form="cos_sin").fit(X, y)


def test_sparse_rfe_phase_free_is_odd_and_round_trips(tmp_path):
    """SparseRFERegressor(form="phase_free") with sin features on inputs
    used as they are: the expansion minus c_0 is odd, f(-x) - c_0 =
    -(f(x) - c_0), to rounding (an odd target plus a constant is fitted; an
    even one could not be); the form survives a model file."""
    rng = np.random.RandomState(5)
    X = rng.uniform(-1, 1, size=(120, 3))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] * X[:, 0] + 0.3  # odd, plus a constant
    est = rfx.SparseRFERegressor(600, sparsity=2, activation="sin", form="phase_free",
                                 weight_scale=1.0, standardize=False,
                                 random_state=4).fit(X, y)
    Xt = rng.uniform(-1, 1, size=(40, 3))
    c0 = est.intercept_
    gap = np.abs((est.predict(-Xt) - c0) + (est.predict(Xt) - c0)).max()
    assert gap <= 1e-12 * np.abs(est.predict(Xt) - c0).max(), gap
    assert est.score(X, y) > 0.9
    path = str(tmp_path / "s.rfx")
    est.save(path)
    back = rfx.load_model(path)
    assert back.get_params()["form"] == "phase_free"
    assert np.array_equal(back.predict(Xt), est.predict(Xt))
    default = rfx.SparseRFERegressor(600, sparsity=2, weight_scale=1.0, standardize=False,
                                     random_state=4).fit(X, y)
    assert np.abs((default.predict(-Xt) - default.intercept_)
                  + (default.predict(Xt) - default.intercept_)).max() > 1e-3
