# SPDX-License-Identifier: BSD-3-Clause
"""The estimators over rfx/sinks.h, rfx/kernel_sgd.h and rfx_pso_minimize:
- KitchenSinksRegressor and GreedyRegressor give bitwise the predictions
  of rfx_sinks_fit / rfx_greedy_fit called directly through cffi; the box
  |alpha_k| s <= C / K holds; without a box the fit is least squares on
  [Z 1] (numpy's lstsq); the training error falls as K grows; the greedy
  path is non-increasing and ends at the training error; save, load_model
  and pickling keep the predictions bit for bit;
- KitchenSinksClassifier gives bitwise the decision values of rfx_sinks_fit
  called with +1 / -1 labels and its loss; without a box its logistic fit
  is scikit-learn's unpenalised LogisticRegression on [Z 1]; predict and
  predict_proba follow the decision values; more than two classes, a
  bad loss and predict_proba of the squared hinge say so;
- KernelSGDClassifier gives bitwise the decision values of
  rfx_kernel_sgd_fit called directly; with the kernel of the feature map
  its four strategies agree as tests/test_kernel_sgd.c says (decision
  values to 1e-10 relative, w of strategies 1 and 2, u of 3 and 4, and
  w = Z^T u); the dual strategies' decision values are K(X, X_train) u;
  the cost attributes equal the header's formulas; pickles refit bitwise;
- pso_minimize finds the minimum of a shifted sphere and of Rosenbrock in
  2-D (tolerances from measured errors), its history is non-increasing and
  ends at fn(x), a seed gives the same search bit for bit, and an
  exception raised by fn reaches the caller as itself."""
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


def _labelled(n=300, seed=0):
    """Two noisy classes "a" / "b" on a ring: not separable."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(-2, 2, size=(n, 2))
    r = np.hypot(X[:, 0], X[:, 1]) + 0.3 * rng.normal(size=n)
    return X, np.where(r < 1.3, "a", "b")


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
def test_sinks_classifier_matches_the_c_library_bitwise(loss):
    X, y = _labelled()
    est = rfx.KitchenSinksClassifier(64, length_scale=0.7, loss=loss, C=20.0, max_iter=600,
                                     random_state=5).fit(X, y)
    f = _c_features(2, 64, 5, 0.7)
    p = ffi.new("rfx_sinks_params *", lib.rfx_sinks_params_default())
    p.loss = getattr(lib, "RFX_SINKS_LOSS_" + loss.upper())
    p.C, p.max_iter, p.n_threads = 20.0, 600, 1
    signs = np.where(y == "b", 1.0, -1.0)
    out = ffi.new("rfx_model **")
    rep = ffi.new("rfx_sinks_report *")
    check(lib.rfx_sinks_fit(f, cmat(X), _dptr(signs), p, out, rep))
    model = ffi.gc(out[0], lib.rfx_model_free)
    Xt, _ = _labelled(100, seed=1)
    dec = _c_predict(model, Xt)
    assert list(est.classes_) == ["a", "b"]
    assert np.array_equal(est.decision_function(Xt), dec)
    assert np.array_equal(est.predict(Xt), np.where(dec > 0, "b", "a"))
    assert est.n_iter_ == rep.iterations and est.objective_ == rep.objective
    if loss == "logistic":
        P = est.predict_proba(Xt)
        assert np.allclose(P[:, 1], 1.0 / (1.0 + np.exp(-dec)), rtol=0, atol=1e-15)
        assert np.allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    else:
        assert not hasattr(est, "predict_proba")


def test_sinks_classifier_without_a_box_is_logistic_regression():
    """C = inf: the minimiser of the mean logistic loss on [Z 1], which is
    scikit-learn's LogisticRegression(penalty=None) on Z (Newton-CG; its
    L-BFGS stops at a risk 7e-7 higher). The risk is strictly convex here
    (noisy labels): measured risks equal to 1e-16, decision values 1.2e-5
    apart (max |f| 12.5; cond [Z 1] = 179)."""
    from sklearn.linear_model import LogisticRegression
    X, y = _labelled(400, seed=2)
    K = 12
    est = rfx.KitchenSinksClassifier(K, length_scale=0.8, C=np.inf, tol=1e-10,
                                     max_iter=200000, random_state=7).fit(X, y)
    Z = rfx.RandomFourierFeatures(K, length_scale=0.8, random_state=7).fit(X).transform(X)
    sk = LogisticRegression(penalty=None, solver="newton-cg", tol=1e-14,
                            max_iter=100000).fit(Z, y)
    signs = np.where(y == "b", 1.0, -1.0)

    def risk(d):
        return np.mean(np.logaddexp(0.0, -signs * d))
    gap = np.abs(est.decision_function(X) - sk.decision_function(Z)).max()
    assert est.converged_ and est.n_at_bound_ == 0
    assert abs(risk(est.decision_function(X)) - risk(sk.decision_function(Z))) <= 1e-12
    assert gap <= 1e-5 * np.abs(sk.decision_function(Z)).max(), gap


def test_sinks_classifier_errors_and_pickle():
    X, y = _labelled(60)
    with pytest.raises(ValueError, match="at least 2 classes"):
        rfx.KitchenSinksClassifier(8, length_scale=1.0).fit(X, np.zeros(60))
    with pytest.raises(ValueError, match="C must be"):
        rfx.KitchenSinksClassifier(8, length_scale=1.0, C="auto").fit(X, y)
    with pytest.raises(ValueError, match="loss must be one of"):
        rfx.KitchenSinksClassifier(8, length_scale=1.0, loss="hinge").fit(X, y)
    est = rfx.KitchenSinksClassifier(16, length_scale=1.0, random_state=0).fit(X, y)
    back = pickle.loads(pickle.dumps(est))
    assert np.array_equal(back.predict_proba(X), est.predict_proba(X))
    assert list(back.classes_) == ["a", "b"]


def test_sinks_classifier_of_three_classes_is_one_vs_rest_of_the_c_library(tmp_path):
    """Three classes: rfx_sinks_classify's decision values bitwise, each
    column equal to rfx_sinks_fit on that class's +-1 targets at the box
    cross-validation chose, labels the argmax, probabilities the OvR
    sigmoids normalised; pickles and model files keep it."""
    rng = np.random.RandomState(4)
    X = rng.uniform(-2, 2, size=(240, 2))
    r = np.hypot(X[:, 0], X[:, 1]) + 0.2 * rng.normal(size=240)
    y = np.where(r < 1.0, "in", np.where(r < 1.9, "mid", "out"))
    est = rfx.KitchenSinksClassifier(48, length_scale=0.7, max_iter=800,
                                     random_state=3).fit(X, y)
    assert list(est.classes_) == ["in", "mid", "out"]
    assert est.cv_C_.shape == (6,) and est.C_ == est.cv_C_[np.argmin(est.cv_loss_)]
    Xt = rng.uniform(-2, 2, size=(90, 2))
    S = est.decision_function(Xt)
    assert S.shape == (90, 3) and est.coef_.shape == (3, 48) and est.intercept_.shape == (3,)
    f = _c_features(2, 48, 3, 0.7)
    p = ffi.new("rfx_sinks_params *", lib.rfx_sinks_params_default())
    p.loss = lib.RFX_SINKS_LOSS_LOGISTIC
    p.C, p.max_iter, p.n_threads = est.C_, 800, 1
    for k, label in enumerate(est.classes_):
        signs = np.ascontiguousarray(np.where(y == label, 1.0, -1.0))
        out = ffi.new("rfx_model **")
        check(lib.rfx_sinks_fit(f, cmat(X), _dptr(signs), p, out, ffi.NULL))
        model = ffi.gc(out[0], lib.rfx_model_free)
        assert np.allclose(S[:, k], _c_predict(model, Xt), rtol=0, atol=1e-12)
    assert np.array_equal(est.predict(Xt), est.classes_[np.argmax(S, axis=1)])
    P = est.predict_proba(Xt)
    sig = 1.0 / (1.0 + np.exp(-S))
    assert np.allclose(P, sig / sig.sum(axis=1, keepdims=True), rtol=0, atol=1e-14)
    assert est.score(X, y) > 0.8
    back = pickle.loads(pickle.dumps(est))
    assert np.array_equal(back.predict_proba(Xt), P)
    path = str(tmp_path / "ks3.rfx")
    est.save(path)
    # an rfx classifier, read back as RFFClassifier; the file holds the
    # labels' indices 0, 1, 2 (the C library's labels are numbers)
    loaded = rfx.load_model(path)
    assert isinstance(loaded, rfx.RFFClassifier) and list(loaded.classes_) == [0, 1, 2]
    assert np.array_equal(loaded.decision_function(Xt), S)
    assert np.array_equal(est.classes_[loaded.predict(Xt).astype(int)], est.predict(Xt))


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
    if isinstance(est, rfx.KitchenSinksRegressor) and est.C == "cv":
        refit = rfx.KitchenSinksRegressor(**back.get_params()).fit(X, y)
        assert np.array_equal(refit.predict(Xt), ref)
    assert os.path.getsize(path) > 0


# ---------------------------------------------------------------------------
# kernel SGD
# ---------------------------------------------------------------------------

STRATEGIES = ["features_on_the_fly", "features_cached", "kernel_on_the_fly", "gram_cached"]


def _disc(n, seed):
    rng = np.random.RandomState(seed)
    X = rng.uniform(0, 1, size=(n, 2))
    return X, np.where(np.hypot(X[:, 0] - 0.5, X[:, 1] - 0.5) < 0.3, 1, -1)


@pytest.mark.parametrize("strategy", range(4))
def test_kernel_sgd_matches_the_c_library_bitwise(strategy):
    X, y = _disc(80, 0)
    Xt, _ = _disc(30, 1)
    est = rfx.KernelSGDClassifier(STRATEGIES[strategy], loss="hinge", length_scale=0.2,
                                  n_components=64, eta0=0.5, t0=10.0, alpha=0.01, n_iter=900,
                                  random_state=4).fit(X, y)
    f = _c_features(2, 64, 4, 0.2)
    k = ffi.new("rfx_kern **")
    check(lib.rfx_kern_shift(lib.RFX_KERNEL_GAUSSIAN, 1.5, 0.2, ffi.NULL, 2, k))
    kern = ffi.gc(k[0], lib.rfx_kern_free)
    p = ffi.new("rfx_kernel_sgd_params *", lib.rfx_kernel_sgd_params_default())
    p.strategy, p.loss, p.alpha, p.t0 = strategy, lib.RFX_LOSS_HINGE, 0.5, 10.0
    setattr(p, "lambda", 0.01)
    p.n_iter, p.seed, p.n_threads = 900, 4, 1
    out = ffi.new("rfx_kernel_sgd **")
    yd = np.ascontiguousarray(y, dtype=np.float64)
    check(lib.rfx_kernel_sgd_fit(kern, f, cmat(X), _dptr(yd), p, out))
    m = ffi.gc(out[0], lib.rfx_kernel_sgd_free)
    ref = np.empty(len(Xt))
    check(lib.rfx_kernel_sgd_decision(m, cmat(Xt), _dptr(ref)))
    assert np.array_equal(est.decision_function(Xt), ref)
    labels = np.empty(len(Xt))
    check(lib.rfx_kernel_sgd_predict(m, cmat(Xt), _dptr(labels)))
    assert np.array_equal(est.predict(Xt), labels.astype(int))  # classes_ = [-1, 1]
    assert est.n_iter_ == 900


@pytest.mark.parametrize("loss", ["logistic", "hinge", "squared_hinge"])
def test_kernel_sgd_four_strategies_agree(loss):
    """With the kernel of the feature map (exact_kernel=False) the four
    strategies are one iteration: tests/test_kernel_sgd.c asks 1e-10
    relative for the decision values, w1 = w2, u3 = u4 and w = Z^T u.
    Measured here (n = 64, D = 96): decision values within 1.5e-15 of
    max |f|, w1 = w2 exactly, u to 7e-16, w = Z^T u to 2.2e-15."""
    X, y = _disc(64, 11)
    Xt, _ = _disc(40, 12)
    A = np.vstack([X, Xt])
    ms = [rfx.KernelSGDClassifier(s, loss=loss, gamma=10.0, n_components=96,
                                  exact_kernel=False, random_state=7).fit(X, y)
          for s in STRATEGIES]
    dec = [m.decision_function(A) for m in ms]
    scale = np.abs(dec[3]).max()
    assert scale > 0.1
    for d in dec[:3]:
        assert np.abs(d - dec[3]).max() <= 1e-10 * scale
    w1, w2, u3, u4 = ms[0].coef_, ms[1].coef_, ms[2].dual_coef_, ms[3].dual_coef_
    assert w1.shape == (96,) and u4.shape == (64,)
    assert not hasattr(ms[0], "dual_coef_") and not hasattr(ms[3], "coef_")
    assert np.abs(w1 - w2).max() <= 1e-10 * np.abs(w2).max()
    assert np.abs(u3 - u4).max() <= 1e-10 * np.abs(u4).max()
    Z = rfx.RandomFourierFeatures(96, gamma=10.0, random_state=7).fit(X).transform(X)
    assert np.abs(Z.T @ u4 - w1).max() <= 1e-10 * np.abs(w1).max()
    # the labels are the sign of the decision value, mapped to classes_
    assert np.array_equal(ms[3].predict(A), np.where(dec[3] > 0, 1, -1))


def test_kernel_sgd_exact_kernel_and_cost():
    """The dual strategies with the exact gaussian kernel agree with each
    other (measured 3e-16 relative) and their decision values are
    K(X, X_train) u with scikit-learn's rbf_kernel (measured 1e-15); an
    rfx.Kernel gives the same bits as the kernel by name; the cost
    attributes are the header's formulas (lambda = 0)."""
    from sklearn.metrics.pairwise import rbf_kernel
    X, y = _disc(64, 11)
    Xt, _ = _disc(40, 12)
    n, d, D = 64, 2, 96
    kot, gram = (rfx.KernelSGDClassifier(s, gamma=10.0, random_state=7).fit(X, y)
                 for s in STRATEGIES[2:])
    f1, f2 = kot.decision_function(Xt), gram.decision_function(Xt)
    scale = np.abs(f2).max()
    assert np.abs(f1 - f2).max() <= 1e-10 * scale
    assert np.abs(rbf_kernel(Xt, X, gamma=10.0) @ gram.dual_coef_ - f2).max() <= 1e-12 * scale
    by_kernel = rfx.KernelSGDClassifier(kernel=rfx.Kernel.gaussian(1 / np.sqrt(20.0)),
                                        random_state=7).fit(X, y)
    by_name = rfx.KernelSGDClassifier(length_scale=1 / np.sqrt(20.0), random_state=7).fit(X, y)
    assert np.array_equal(by_kernel.decision_function(Xt), by_name.decision_function(Xt))
    T = 20 * n
    assert gram.n_iter_ == T and gram.memory_bytes_ == 8 * n * n + 8 * n
    assert gram.kernel_evals_ == n * (n + 1) // 2
    assert gram.flops_ == d * n * (n + 1) + 2 * n * T
    assert kot.flops_ == 2 * d * kot.kernel_evals_ + 2 * n * T
    assert 0 < kot.n_support_ <= n and kot.n_support_ == np.count_nonzero(kot.dual_coef_)
    fly, cached = (rfx.KernelSGDClassifier(s, gamma=10.0, n_components=D, random_state=7)
                   .fit(X, y) for s in STRATEGIES[:2])
    assert fly.feature_evals_ == T and fly.flops_ == T * (2 * d * D + 4 * D)
    assert fly.memory_bytes_ == 16 * D
    assert cached.feature_evals_ == n and cached.flops_ == 2 * n * d * D + 4 * D * T
    assert cached.memory_bytes_ == 8 * n * D + 8 * D
    assert fly.strategy_ == "features_on_the_fly"


def test_kernel_sgd_pickle_spelling_and_errors():
    X, y = _disc(60, 3)
    y = np.where(y > 0, "in", "out")
    for s in ("features_cached", "gram_cached"):
        est = rfx.KernelSGDClassifier(s, gamma=10.0, n_components=32, random_state=1).fit(X, y)
        again = pickle.loads(pickle.dumps(est))
        assert np.array_equal(again.decision_function(X), est.decision_function(X))
        assert np.array_equal(again.predict(X), est.predict(X))
    ref = rfx.KernelSGDClassifier("kernel_on_the_fly", gamma=10.0, random_state=1).fit(X, y)
    with pytest.warns(FutureWarning, match="strategy='kernel-on-the-fly'"):
        old = rfx.KernelSGDClassifier("kernel-on-the-fly", gamma=10.0, random_state=1).fit(X, y)
    assert np.array_equal(old.decision_function(X), ref.decision_function(X))
    with pytest.raises(ValueError, match="strategy must be one of"):
        rfx.KernelSGDClassifier("dual").fit(X, y)
    with pytest.raises(ValueError, match="needs a feature map"):
        rfx.KernelSGDClassifier("features_cached", kernel=rfx.Kernel.rbf(1.0)).fit(X, y)
    with pytest.raises(ValueError, match="binary"):
        rfx.KernelSGDClassifier().fit(X, np.arange(60) % 3)
    with pytest.raises(ValueError, match="loss must be one of"):
        rfx.KernelSGDClassifier(loss="squared").fit(X, y)
    with pytest.raises(ValueError, match="eta0"):
        rfx.KernelSGDClassifier(eta0=0.0).fit(X, y)
    with pytest.raises(MemoryError, match="Gram matrix"):
        rfx.KernelSGDClassifier(cache_limit=1000).fit(X, y)
    with pytest.raises(ValueError, match="lambda"):  # alpha * eta0 must be < 1
        rfx.KernelSGDClassifier(alpha=20.0).fit(X, y)


# ---------------------------------------------------------------------------
# particle swarm
# ---------------------------------------------------------------------------

def _rosenbrock(x):
    return float(100.0 * (x[1] - x[0] ** 2) ** 2 + (1.0 - x[0]) ** 2)


def _check_consistent(res, fn, d):
    assert res.x.shape == (d,) and res.value == fn(res.x)
    assert res.history.shape == (res.iterations + 1,)
    assert np.all(np.diff(res.history) <= 0) and res.history[-1] == res.value
    assert res.evaluations == res.n_particles * (res.iterations + 1)


@pytest.mark.parametrize("seed", range(5))
def test_pso_shifted_sphere(seed):
    """Minimum 0 at c; with the defaults (12 particles, 200 iterations) the
    values found for seeds 0-4 are at most 4.3e-19, |x - c| at most 6.5e-10."""
    c = np.array([0.3, -1.2])

    def fn(x):
        return float(np.sum((x - c) ** 2))

    res = rfx.pso_minimize(fn, [-5, -5], [5, 5], seed=seed)
    _check_consistent(res, fn, 2)
    assert res.n_particles == 12 and res.iterations == 200 and res.stop == "max_iter"
    assert res.value < 1e-16 and np.abs(res.x - c).max() < 1e-8


@pytest.mark.parametrize("seed", range(5))
def test_pso_rosenbrock_2d(seed):
    """Minimum 0 at (1, 1) on [-2, 2]^2. Measured for seeds 0-4: after 200
    iterations values <= 2.4e-6 and |x - 1| <= 3.0e-3; after 500 values
    <= 1.9e-11 and |x - 1| <= 6.9e-6."""
    res = rfx.pso_minimize(_rosenbrock, [-2, -2], [2, 2], seed=seed)
    _check_consistent(res, _rosenbrock, 2)
    assert res.value < 1e-5 and np.abs(res.x - 1).max() < 1e-2
    res = rfx.pso_minimize(_rosenbrock, [-2, -2], [2, 2], max_iter=500, seed=seed)
    _check_consistent(res, _rosenbrock, 2)
    assert res.value < 1e-9 and np.abs(res.x - 1).max() < 1e-4


def test_pso_is_reproducible_and_seeded():
    a = rfx.pso_minimize(_rosenbrock, [-2, -2], [2, 2], max_iter=30, seed=3)
    b = rfx.pso_minimize(_rosenbrock, [-2, -2], [2, 2], max_iter=30, seed=3)
    c = rfx.pso_minimize(_rosenbrock, [-2, -2], [2, 2], max_iter=30, seed=4)
    assert np.array_equal(a.x, b.x) and np.array_equal(a.history, b.history)
    assert not np.array_equal(a.history, c.history)
    ring = rfx.pso_minimize(_rosenbrock, [-2, -2], [2, 2], max_iter=30, seed=3, topology="ring")
    assert not np.array_equal(ring.history, a.history)


def test_pso_exceptions_in_fn_propagate():
    calls = []

    class Boom(Exception):
        pass

    def fn(x):
        calls.append(x)
        if len(calls) == 17:
            raise Boom("at call 17")
        return float(x @ x)

    with pytest.raises(Boom, match="at call 17"):
        rfx.pso_minimize(fn, [-1, -1], [1, 1], seed=0)
    assert len(calls) == 17  # the search stopped at the failing call
    with pytest.raises(ZeroDivisionError):
        rfx.pso_minimize(lambda x: 1 / 0, -1, 1)
    with pytest.raises(TypeError, match="fn must return a number, got 'one'"):
        rfx.pso_minimize(lambda x: "one", -1, 1)
    with pytest.raises(TypeError, match="fn must return a number"):
        rfx.pso_minimize(lambda x: x, [-1, -1], [1, 1])
    # the package still works afterwards
    res = rfx.pso_minimize(lambda x: float(x[0] ** 2), -1, 1, max_iter=10)
    assert res.value < 1e-2


def test_pso_options_and_errors():
    # a minimum on a bound is found exactly
    res = rfx.pso_minimize(lambda x: float(x[0]), 1.0, 3.0, max_iter=20)
    assert res.x[0] == 1.0 and res.value == 1.0
    # x0 is where particle 0 starts: the first evaluation
    seen = []
    rfx.pso_minimize(lambda x: seen.append(x) or 0.0, [0, 0], [1, 1], x0=[0.25, 0.75],
                     n_particles=3, max_iter=1)
    assert np.array_equal(seen[0], [0.25, 0.75]) and len(seen) == 6
    # stagnation: a flat function stops after `patience` iterations
    res = rfx.pso_minimize(lambda x: 1.0, [0, 0], [1, 1], patience=4)
    assert res.stop == "stagnation" and res.iterations == 4
    # NaN counts as +infinity: never the best point
    res = rfx.pso_minimize(lambda x: np.nan if x[0] < 0.5 else float(x[0]), 0, 1, max_iter=20)
    assert res.value == res.x[0] >= 0.5
    with pytest.raises(ValueError, match="upper"):
        rfx.pso_minimize(lambda x: 0.0, [0, 1], [1, 1])
    with pytest.raises(ValueError, match="lower has 2 bounds and upper 3"):
        rfx.pso_minimize(lambda x: 0.0, [0, 0], [1, 1, 1])
    with pytest.raises(ValueError, match="inertia"):
        rfx.pso_minimize(lambda x: 0.0, 0, 1, inertia=2.0)
    with pytest.raises(ValueError, match="topology"):
        rfx.pso_minimize(lambda x: 0.0, 0, 1, topology="star")
    with pytest.raises(TypeError, match="callable"):
        rfx.pso_minimize(None, 0, 1)
    stages = []

    def stop(stage, fraction):
        stages.append(stage)
        return fraction is not None and fraction >= 0.5

    with rfx.progress_callback(stop):
        with pytest.raises(rfx.CancelledError):
            rfx.pso_minimize(lambda x: float(x[0] ** 2), -1, 1, max_iter=10)
    assert stages and set(stages) == {"pso"}
