# SPDX-License-Identifier: BSD-3-Clause
"""The estimators over rfx/sinks.h, rfx/kernel_sgd.h and rfx_pso_minimize:
- KitchenSinksRegressor and GreedyRegressor give bitwise the predictions
  of rfx_sinks_fit / rfx_greedy_fit called directly through cffi; the box
  |alpha_k| s <= C / K holds; without a box the fit is least squares on
  [Z 1] (numpy's lstsq); the training error falls as K grows; the greedy
  path is non-increasing and ends at the training error; save, load_model
  and pickling keep the predictions bit for bit."""
import os
import pickle

import numpy as np
import pytest

import rfx
from rfx._lib import as_rows, check, cmat, ffi, lib, mat, mat_none


def _smooth(n=400, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    return X, np.sin(2 * X[:, 0]) + 0.5 * X[:, 0] * X[:, 1]


def _dptr(a):
    return ffi.cast("double *", a.ctypes.data)


def _c_predict(model, X):
    out = np.empty((X.shape[0], 1))
    check(lib.rfx_model_predict(model, cmat(as_rows(X)), mat(out), mat_none()))
    return out[:, 0]


def _c_features(d, K, seed, length_scale, activation=lib.RFX_ACTIVATION_COS):
    fp = ffi.new("rfx_features_params *", lib.rfx_features_params_default())
    fp.n_features = K
    fp.seed = seed
    fp.length_scale = length_scale
    fp.activation = activation
    fp.n_threads = 1
    out = ffi.new("rfx_features **")
    check(lib.rfx_features_create(fp, d, out))
    return ffi.gc(out[0], lib.rfx_features_free)


# ---------------------------------------------------------------------------
# kitchen sinks
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("activation", ["cos", "tanh"])
def test_sinks_match_the_c_library_bitwise(activation):
    X, y = _smooth(300)
    est = rfx.KitchenSinksRegressor(64, length_scale=0.7, activation=activation, C=5.0,
                                    max_iter=800, random_state=11).fit(X, y)
    f = _c_features(2, 64, 11, 0.7, getattr(lib, "RFX_ACTIVATION_" + activation.upper()))
    p = ffi.new("rfx_sinks_params *", lib.rfx_sinks_params_default())
    p.C, p.max_iter, p.n_threads = 5.0, 800, 1
    out = ffi.new("rfx_model **")
    rep = ffi.new("rfx_sinks_report *")
    check(lib.rfx_sinks_fit(f, cmat(X), _dptr(y), p, out, rep))
    model = ffi.gc(out[0], lib.rfx_model_free)
    Xt, _ = _smooth(100, seed=1)
    assert np.array_equal(est.predict(Xt), _c_predict(model, Xt))
    assert est.n_iter_ == rep.iterations and est.objective_ == rep.objective
    assert est.n_at_bound_ == rep.n_at_bound


@pytest.mark.parametrize("activation,scale_of", [("cos", lambda K: np.sqrt(2.0 / K)),
                                                  ("tanh", lambda K: 1.0)])
def test_sinks_box_holds_and_error_falls_with_K(activation, scale_of):
    """|alpha_k| s <= C / K (s the map's column scale), active at some k; the
    training error falls as K grows (C = 5 fixed). Measured MSE for cos:
    0.043, 0.023, 0.0061, 0.00098, 0.00018 at K = 4 ... 1024; tanh: 0.36,
    0.017, 0.012, 0.0031, 0.00082."""
    X, y = _smooth()
    kw = {} if activation == "cos" else dict(weights="normal", weight_scale=3.0)
    C, errs = 5.0, []
    for K in (4, 16, 64, 256, 1024):
        est = rfx.KitchenSinksRegressor(K, length_scale=0.7, activation=activation, C=C,
                                        random_state=1, **kw).fit(X, y)
        ratio = np.abs(est.coef_).max() * scale_of(K) / (C / K)
        assert ratio <= 1 + 1e-12
        if K >= 16:
            assert est.n_at_bound_ > 0 and ratio > 1 - 1e-12  # the box is active
        errs.append(np.mean((est.predict(X) - y) ** 2))
    assert all(b < a for a, b in zip(errs, errs[1:])), errs
    assert errs[-1] < 0.01 * np.var(y)


def test_sinks_without_a_box_is_least_squares():
    """C = inf: the fit is the least-squares solution of [Z 1] (K < n), as
    numpy's lstsq finds it. The squared loss with K <= n is solved in the
    gram form (normal equations, error ~ cond([Z 1])^2 eps): with cond 442
    here the weights agree to 8e-11 relative, the fitted values to 6e-12."""
    X, y = _smooth(200)
    K = 16
    est = rfx.KitchenSinksRegressor(K, length_scale=0.3, C=np.inf, tol=1e-12, max_iter=20000,
                                    random_state=3).fit(X, y)
    Z = rfx.RandomFourierFeatures(K, length_scale=0.3, random_state=3).fit(X).transform(X)
    A = np.column_stack([Z, np.ones(len(X))])
    assert np.linalg.cond(A) < 1e3
    sol = np.linalg.lstsq(A, y, rcond=None)[0]
    scale = np.abs(sol).max()
    assert est.converged_ and est.n_at_bound_ == 0
    assert np.abs(est.coef_ - sol[:K]).max() <= 1e-9 * scale
    assert abs(est.intercept_ - sol[K]) <= 1e-9 * scale
    assert np.abs(est.predict(X) - A @ sol).max() <= 1e-10


def test_sinks_parameter_errors():
    X, y = _smooth(50)
    for bad in (0.0, -1.0, np.nan):
        with pytest.raises(ValueError, match="C must be > 0"):
            rfx.KitchenSinksRegressor(8, C=bad).fit(X, y)
    with pytest.raises(ValueError, match="max_iter"):
        rfx.KitchenSinksRegressor(8, max_iter=0).fit(X, y)
    with pytest.raises(ValueError, match="tol"):
        rfx.KitchenSinksRegressor(8, tol=0.0).fit(X, y)
    with pytest.raises(ValueError, match="give gamma or length_scale"):
        rfx.KitchenSinksRegressor(8, gamma=1.0, length_scale=1.0).fit(X, y)
    est = rfx.KitchenSinksRegressor(8, C=-1)
    with pytest.raises(ValueError):
        est.fit(X, y)
    assert not hasattr(est, "n_features_in_")  # left unfitted


# ---------------------------------------------------------------------------
# greedy
# ---------------------------------------------------------------------------

def test_greedy_matches_the_c_library_bitwise():
    X, y = _smooth(300)
    est = rfx.GreedyRegressor(12, length_scale=0.7, n_candidates=20, refine_steps=3,
                              random_state=5).fit(X, y)
    p = ffi.new("rfx_greedy_params *", lib.rfx_greedy_params_default())
    p.features.seed = 5
    p.features.length_scale = 0.7
    p.n_terms, p.n_candidates, p.refine_steps, p.n_threads = 12, 20, 3, 1
    out = ffi.new("rfx_model **")
    rep = ffi.new("rfx_greedy_report *")
    path = np.empty(12)
    check(lib.rfx_greedy_fit(cmat(X), _dptr(y), p, out, rep, _dptr(path)))
    model = ffi.gc(out[0], lib.rfx_model_free)
    Xt, _ = _smooth(100, seed=1)
    assert np.array_equal(est.predict(Xt), _c_predict(model, Xt))
    assert np.array_equal(est.mse_path_, path)


def test_greedy_path_is_non_increasing_and_ends_at_the_training_error():
    X, y = _smooth(300)
    est = rfx.GreedyRegressor(24, length_scale=0.7, random_state=0).fit(X, y)
    assert est.mse_path_.shape == (24,)
    assert np.all(np.diff(est.mse_path_) <= 0)
    mse = np.mean((est.predict(X) - y) ** 2)
    assert est.train_mse_ == est.mse_path_[-1]
    assert abs(mse - est.train_mse_) <= 1e-10 * np.var(y)
    assert est.coef_.shape == (24,) and isinstance(est.intercept_, float)


# ---------------------------------------------------------------------------
# model files and pickles
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: rfx.KitchenSinksRegressor(48, length_scale=0.5, activation="relu", weights="normal",
                                      weight_scale=2.0, C=3.0, max_iter=300, random_state=7),
    lambda: rfx.KitchenSinksRegressor(32, kernel="matern", nu=2.5, length_scale=[0.5, 1.0],
                                      form="cos_sin", random_state=8),
    lambda: rfx.GreedyRegressor(10, length_scale=0.6, n_candidates=16, random_state=9),
    lambda: rfx.GreedyRegressor(6, activation="tanh", weights="uniform", weight_scale=3.0,
                                sparsity=1, fit_intercept=False, random_state=2),
])
def test_save_load_and_pickle_round_trips(tmp_path, make):
    X, y = _smooth(200)
    est = make().fit(X, y)
    Xt, _ = _smooth(80, seed=4)
    ref = est.predict(Xt)
    path = str(tmp_path / "m.rfx")
    est.save(path)
    back = rfx.load_model(path)
    assert type(back) is type(est)
    assert np.array_equal(back.predict(Xt), ref)
    assert np.array_equal(back.coef_, est.coef_) and back.intercept_ == est.intercept_
    # the parameters the file records come back (the solver's settings do not)
    mine, theirs = est.get_params(), back.get_params()
    for name in ("kernel", "activation", "weights", "weight_scale", "sparsity",
                 "fit_intercept", "random_state"):
        assert theirs[name] == mine[name], name
    assert np.array_equal(np.asarray(back.length_scale_), np.asarray(est.length_scale_))
    size = "n_terms" if isinstance(est, rfx.GreedyRegressor) else "n_components"
    assert theirs[size] == mine[size]
    with open(path, "rb") as f:
        assert f.read() == est.to_bytes()
    again = pickle.loads(pickle.dumps(est))
    assert np.array_equal(again.predict(Xt), ref)
    # a loaded kitchen-sink model refits as its parameters say
    if isinstance(est, rfx.KitchenSinksRegressor) and est.C == 10.0:
        refit = rfx.KitchenSinksRegressor(**back.get_params()).fit(X, y)
        assert np.array_equal(refit.predict(Xt), ref)
    assert os.path.getsize(path) > 0
