# SPDX-License-Identifier: BSD-3-Clause
"""SurrogateRegressor (rfx_auto_fit): its cross-validated errors against an
explicit k-fold comparison written here with the public estimators on the
same folds, the choice and the final model against a direct fit of the
chosen candidate, the transforms against numpy and scipy, model files and
pickles, the transforms y <= 0 rules out, and the errors. The data are those
of tests/test_auto.c: 90 rows, 2 inputs, a positive target additive in log y."""
import doctest
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import KFold

import rfx
from rfx._lib import ffi, lib

N, K = 90, 3
CANDIDATES = ["ridge", "harfe", "pce"]


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(77)
    X = rng.uniform(-1, 1, size=(N, 2))
    y = np.exp(np.sin(np.pi * X[:, 0]) + 0.5 * X[:, 1] ** 2)
    return X, y


def _forward(t, lam, y):
    z = np.empty(len(y))
    y = np.ascontiguousarray(y, dtype=np.float64)
    assert lib.rfx_target_forward(t, lam, ffi.cast("const double *", y.ctypes.data), len(y),
                                  ffi.cast("double *", z.ctypes.data)) == 0
    return z


def _inverse(t, lam, z):
    y = np.empty(len(z))
    z = np.ascontiguousarray(z, dtype=np.float64)
    assert lib.rfx_target_inverse(t, lam, ffi.cast("const double *", z.ctypes.data), len(z),
                                  ffi.cast("double *", y.ctypes.data)) == 0
    return y


def _boxcox_lambda(y):
    y = np.ascontiguousarray(y, dtype=np.float64)
    lam = ffi.new("double *")
    assert lib.rfx_target_boxcox_lambda(ffi.cast("const double *", y.ctypes.data), len(y),
                                        lam) == 0
    return lam[0]


_TRANSFORMS = {"none": lib.RFX_TARGET_NONE, "log": lib.RFX_TARGET_LOG,
               "boxcox": lib.RFX_TARGET_BOXCOX}


def _fit_one(method, transform, Xtr, ytr, X_all, seed=0):
    """A predictor of y: the candidate fitted as rfx_auto_fit documents it
    (src/auto/auto.c, fit_method), with the public estimators: each
    method's defaults with the seed, PCE by LARS on the automatic basis from
    degree 1 with inputs uniform on the range of all rows."""
    t = _TRANSFORMS[transform]
    lam = _boxcox_lambda(ytr) if transform == "boxcox" else 0.0
    z = _forward(t, lam, ytr)
    if method == "ridge":
        est = rfx.RFFRegressor(random_state=seed)
    elif method == "harfe":
        est = rfx.SparseRFERegressor(method="htp", random_state=seed)
    elif method == "pce":
        lo, hi = X_all.min(axis=0), X_all.max(axis=0)
        est = rfx.PCERegressor([("uniform", a, b) for a, b in zip(lo, hi)], degree="auto",
                               degree_min=1, method="lars")
    else:
        raise AssertionError(method)
    est.fit(Xtr, z)
    return lambda X: _inverse(t, lam, est.predict(X))


def _explicit_cv(method, transform, X, y, folds):
    sse, sst = 0.0, np.sum((y - y.mean()) ** 2)
    for f in range(folds.max() + 1):
        held = folds == f
        predict = _fit_one(method, transform, X[~held], y[~held], X)
        sse += np.sum((predict(X[held]) - y[held]) ** 2)
    return np.sqrt(sse / sst)


@pytest.fixture(scope="module")
def fitted(data):
    X, y = data
    folds = np.arange(N) % K
    reg = rfx.SurrogateRegressor(candidates=CANDIDATES, target_transform=["none", "log"],
                                 cv=folds, race_factor=float("inf")).fit(X, y)
    return reg, folds


def test_cv_errors_are_those_of_an_explicit_cross_validation(data, fitted):
    X, y = data
    reg, folds = fitted
    res = reg.cv_results_
    assert len(res["method"]) == 6 and reg.compared_folds_ == K and reg.n_folds_ == K
    assert sorted(zip(res["transform"], res["method"])) == sorted(
        (t, m) for t in ("none", "log") for m in CANDIDATES)
    assert set(res["outcome"]) == {"ran_all"} and set(res["folds"]) == {K}
    assert res["status"] == [""] * 6 and res["lambda"] == [0.0] * 6
    errors = []
    for m, t, e in zip(res["method"], res["transform"], res["cv_error"]):
        ref = _explicit_cv(m, t, X, y, folds)
        assert e == pytest.approx(ref, rel=1e-10), (m, t)
        errors.append(ref)
    best = int(np.argmin(errors))
    assert reg.best_index_ == best
    assert (reg.best_method_, reg.best_transform_) == (res["method"][best],
                                                       res["transform"][best])
    assert reg.best_transform_ == "log"  # y is a product of functions of one input each
    assert reg.transform_lambda_ == 0.0 and reg.seed_ == 0 and reg.n_features_in_ == 2


def test_the_final_model_is_the_chosen_candidate_refitted_on_all_rows(data, fitted):
    X, y = data
    reg, _ = fitted
    direct = _fit_one(reg.best_method_, reg.best_transform_, X, y, X)
    Xt = np.random.RandomState(5).uniform(-1, 1, size=(40, 2))
    np.testing.assert_array_equal(reg.predict(Xt), direct(Xt))
    assert reg.score(X, y) > 0.999
    # a fixed method and transform fits directly, without folds, the same model
    one = rfx.SurrogateRegressor(reg.best_method_,
                                 target_transform=reg.best_transform_).fit(X, y)
    np.testing.assert_array_equal(one.predict(Xt), reg.predict(Xt))
    assert one.cv_results_["outcome"] == ["direct"] and one.n_folds_ == 0
    assert np.isnan(one.cv_results_["cv_error"][0])


def test_racing_and_splitters(data, fitted):
    X, y = data
    reg, folds = fitted
    raced = rfx.SurrogateRegressor(candidates=CANDIDATES, target_transform=["none", "log"],
                                   cv=folds).fit(X, y)
    assert raced.best_index_ == reg.best_index_
    assert sum(raced.cv_results_["folds"]) < 6 * K
    assert set(raced.cv_results_["outcome"]) <= {"ran_all", "raced", "alone"}
    # a splitter gives its test sets as the folds
    split = rfx.SurrogateRegressor("pce", target_transform=["none"], cv=KFold(3)).fit(X, y)
    ids = rfx.SurrogateRegressor("pce", target_transform=["none"],
                                 cv=np.arange(N) // 30).fit(X, y)
    assert split.cv_results_["cv_error"] == ids.cv_results_["cv_error"]
    # one method, the transforms compared
    m = rfx.SurrogateRegressor("pce", cv=folds, race_factor=float("inf")).fit(X, y)
    assert set(m.cv_results_["method"]) == {"pce"} and m.best_transform_ == "log"
    assert m.cv_results_["cv_error"][m.best_index_] == pytest.approx(
        _explicit_cv("pce", m.best_transform_, X, y, folds), rel=1e-10)


def test_transforms_against_numpy_and_scipy(data):
    stats = pytest.importorskip("scipy.stats")
    _, y = data
    np.testing.assert_allclose(_forward(lib.RFX_TARGET_LOG, 0.0, y), np.log(y), rtol=1e-15)
    for lam in (-1.5, -0.3, 0.5, 2.0):
        ref = (y ** lam - 1) / lam
        np.testing.assert_allclose(_forward(lib.RFX_TARGET_BOXCOX, lam, y), ref, rtol=1e-13)
        np.testing.assert_allclose(_forward(lib.RFX_TARGET_BOXCOX, lam, y),
                                   stats.boxcox(y, lmbda=lam), rtol=1e-13)
        np.testing.assert_allclose(_inverse(lib.RFX_TARGET_BOXCOX, lam, ref), y, rtol=1e-12)
    rng = np.random.RandomState(3)
    for sample in (y, rng.lognormal(size=200), rng.gamma(2.0, size=200) + 0.1,
                   (rng.uniform(1, 2, size=200)) ** 3):
        ref = stats.boxcox_normmax(sample, method="mle")
        assert -3 < ref < 3
        assert _boxcox_lambda(sample) == pytest.approx(ref, abs=1e-4)
        assert _boxcox_lambda(7.5 * sample) == pytest.approx(_boxcox_lambda(sample), abs=1e-9)
    # a Box-Cox model carries the lambda of all rows
    X, _ = data
    reg = rfx.SurrogateRegressor(candidates=["pce"], target_transform=["boxcox"],
                                 cv=3).fit(X, y)
    assert reg.best_transform_ == "boxcox"
    assert reg.transform_lambda_ == _boxcox_lambda(y) == reg.cv_results_["lambda"][0]


def test_model_files_and_pickles(data, fitted, tmp_path):
    X, y = data
    reg, _ = fitted
    Xt = np.random.RandomState(8).uniform(-1, 1, size=(30, 2))
    want = reg.predict(Xt)
    again = pickle.loads(pickle.dumps(reg))
    np.testing.assert_array_equal(again.predict(Xt), want)
    assert again.cv_results_ == reg.cv_results_
    path = str(tmp_path / "auto.rfx")
    reg.save(path)
    loaded = rfx.load_model(path)  # the chosen method's estimator
    assert type(loaded) is {"pce": rfx.PCERegressor, "ridge": rfx.RFFRegressor,
                            "harfe": rfx.SparseRFERegressor}[reg.best_method_]
    np.testing.assert_array_equal(loaded.predict(Xt), want)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(loaded)).predict(Xt), want)
    assert loaded.to_bytes() == reg.to_bytes()
    # Sobol indices of y on the training box, through predict
    res = rfx.sobol_indices(reg, n=512, n_bootstrap=0)
    assert res.first[0] > res.first[1] > 0 and res.total.sum() < 1.2


@pytest.mark.parametrize("method", ["ridge", "harfe", "pce"])
def test_every_loaded_transformed_model_predicts_y(data, method, tmp_path):
    """A model of log y read back as the class load_model maps it to
    predicts y."""
    X, y = data
    Xt = np.random.RandomState(9).uniform(-1, 1, size=(20, 2))
    reg = rfx.SurrogateRegressor(method, target_transform="log").fit(X, y)
    path = str(tmp_path / "m.rfx")
    reg.save(path)
    loaded = rfx.load_model(path)
    np.testing.assert_array_equal(loaded.predict(Xt), reg.predict(Xt))
    np.testing.assert_array_equal(loaded.predict(Xt), _fit_one(method, "log", X, y, X)(Xt))
    assert loaded.score(X, y) > 0.99
    if method == "pce":  # the coefficients are of log y
        for what in (loaded.sobol_indices, loaded.moments):
            with pytest.raises(ValueError, match="log-transformed target, not of y"):
                what()


def test_a_transformed_bayesian_model_has_no_predictive_std(data, tmp_path):
    X, y = data
    gp = rfx.BayesianRFFRegressor(64, random_state=0).fit(X, np.log(y))
    Xt = np.random.RandomState(9).uniform(-1, 1, size=(20, 2))
    want = np.exp(gp.predict(Xt))
    assert lib.rfx_model_set_target_transform(gp._model, lib.RFX_TARGET_LOG, 0.0) == 0
    path = str(tmp_path / "gp.rfx")
    gp.save(path)
    loaded = rfx.load_model(path)
    assert isinstance(loaded, rfx.BayesianRFFRegressor)
    np.testing.assert_allclose(loaded.predict(Xt), want, rtol=1e-14)
    for latent in (False, True):
        with pytest.raises(ValueError, match="a model of a log-transformed target gives no "
                                             "predictive standard deviation"):
            loaded.predict(Xt, return_std=True, latent=latent)


def test_targets_not_positive_leave_no_log_candidates(data):
    X, y = data
    z = np.log(y)  # values <= 0
    reg = rfx.SurrogateRegressor(candidates=["pce", "ridge"], cv=K).fit(X, z)
    assert set(reg.cv_results_["transform"]) == {"none"} and len(reg.cv_results_["method"]) == 2
    with pytest.raises(ValueError, match="auto.transforms: the log and Box-Cox take y > 0"):
        rfx.SurrogateRegressor(candidates=["pce"], target_transform=["log"], cv=K).fit(X, z)
    with pytest.raises(ValueError, match="the log transform takes values > 0 only"):
        rfx.SurrogateRegressor("pce", target_transform="log").fit(X, z)


def test_errors(data):
    X, y = data
    bad = [
        (dict(n_folds=1), "n_folds must be >= 2"),
        (dict(cv=1), "auto.n_folds: 1, at least 2 are needed"),
        (dict(race_factor=1.0), "auto.race_factor: 1, must be > 1"),
        (dict(budget=-1.0), "budget must be > 0"),
        (dict(candidates=["classify"]), "auto.methods: 0x40 holds a method that is not a "
                                        "regression surrogate"),
        (dict(method="classify"), "auto.methods"),
        (dict(candidates=["lasso"]), "unknown method 'lasso'"),
        (dict(target_transform="sqrt"), "sqrt"),
        (dict(method="pce", candidates=["pce"]), "candidates: only with method='auto'"),
        (dict(cv=np.arange(N) % 4 * (np.arange(N) % 4 != 2)), "auto.folds: fold 2 holds 0"),
        (dict(cv=np.arange(5)), "one per row"),
    ]
    for params, message in bad:
        est = rfx.SurrogateRegressor(**params)
        with pytest.raises(ValueError, match=message):
            est.fit(X, y)
        assert not hasattr(est, "cv_results_")
    with pytest.raises(ValueError, match="auto: 9 rows for 5 folds; at least 10 are needed"):
        rfx.SurrogateRegressor(candidates=["pce"]).fit(X[:9], y[:9])
    with pytest.raises(TypeError, match="race_factor"):
        rfx.SurrogateRegressor(race_factor="fast").fit(X, y)
    # get_params / set_params / clone
    est = rfx.SurrogateRegressor("pce", target_transform="log", cv=4)
    assert est.get_params()["cv"] == 4 and clone(est).get_params() == est.get_params()
    assert est.set_params(target_transform="none").target_transform == "none"
    assert not hasattr(est, "transform")  # not taken for a transformer


class _Frame:
    """What scikit-learn reads the feature names of: an array with string
    column names (pandas, without needing it)."""

    def __init__(self, a, columns):
        self._a, self.columns, self.shape = a, columns, a.shape

    def __len__(self):
        return len(self._a)

    def __array__(self, dtype=None, copy=None):
        return self._a if dtype is None else self._a.astype(dtype)


def test_feature_names(data):
    X, y = data
    reg = rfx.SurrogateRegressor("pce", target_transform="none").fit(_Frame(X, ["a", "b"]), y)
    assert list(reg.feature_names_in_) == ["a", "b"]
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        plain = reg.predict(X)
    np.testing.assert_array_equal(reg.predict(_Frame(X, ["a", "b"])), plain)
    with pytest.raises(ValueError, match="feature names"):
        reg.predict(_Frame(X, ["b", "a"]))


def test_docstring_example():
    failed, tried = doctest.testmod(rfx.auto, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failed == 0
