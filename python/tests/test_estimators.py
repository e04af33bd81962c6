"""Behaviour of the estimators beyond scikit-learn's checks: pickling, seeds,
float32, shapes, classes, model files, the docstring examples."""
import copy
import doctest
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import DataConversionWarning, NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import rfx
import rfx.kernel_approximation
import rfx.models
from conftest import make_data


def _fitted():
    X, y = make_data(150, 3)
    return X, [
        rfx.RandomFourierFeatures(64, kernel="matern", length_scale=[0.5, 1, 2],
                                  random_state=3).fit(X),
        rfx.RandomFourierFeatures(64, activation="relu", sparsity=2, weights="uniform",
                                  random_state=4).fit(X),
        rfx.RFFRegressor(64, random_state=0).fit(X, np.column_stack([y, -y])),
        rfx.BayesianRFFRegressor(64, kernel="laplacian", form="cos-sin", random_state=1).fit(X, y),
        rfx.RFFClassifier(64, random_state=2).fit(X, np.digitize(y, [0, 1])),
    ]


def _outputs(est, X):
    if isinstance(est, rfx.RandomFourierFeatures):
        return [est.transform(X), est.random_weights_]
    if isinstance(est, rfx.BayesianRFFRegressor):
        return list(est.predict(X, return_std=True))
    if isinstance(est, rfx.RFFClassifier):
        return [est.decision_function(X), est.predict(X)]
    return [est.predict(X), est.coef_]


def test_pickle_and_deepcopy_are_bitwise():
    X, ests = _fitted()
    for est in ests:
        for again in (pickle.loads(pickle.dumps(est)), copy.deepcopy(est)):
            assert again.get_params() == est.get_params() or isinstance(
                est.length_scale, list)
            for a, b in zip(_outputs(est, X), _outputs(again, X)):
                assert np.array_equal(a, b)
        # the original still works after pickling
        _outputs(est, X)


def test_pickles_of_models_are_the_model_format():
    X, ests = _fitted()
    reg = ests[2]
    state = reg.__getstate__()
    assert "_model" not in state and state["_model_bytes"][:8] == b"RFXMODL\x1a"
    assert hasattr(reg, "_model")


def test_clone_is_unfitted_with_the_same_params():
    X, ests = _fitted()
    for est in ests:
        c = clone(est)
        assert not hasattr(c, "n_features_in_")
        with pytest.raises(NotFittedError):
            _outputs(c, X)


def test_random_state_conventions():
    X, y = make_data(50, 2)
    a = rfx.RandomFourierFeatures(20, random_state=7).fit(X)
    assert a.seed_ == 7
    np.random.seed(0)
    b = rfx.RandomFourierFeatures(20).fit(X)
    np.random.seed(0)
    c = rfx.RandomFourierFeatures(20).fit(X)
    assert b.seed_ == c.seed_ and np.array_equal(b.transform(X), c.transform(X))
    d = rfx.RandomFourierFeatures(20).fit(X)
    assert d.seed_ != b.seed_
    e = rfx.RandomFourierFeatures(20, random_state=np.random.RandomState(1)).fit(X)
    f = rfx.RandomFourierFeatures(20, random_state=np.random.RandomState(1)).fit(X)
    assert e.seed_ == f.seed_
    big = rfx.RandomFourierFeatures(20, random_state=2 ** 64 - 1).fit(X)
    assert big.seed_ == 2 ** 64 - 1


def test_float32_in_float32_out():
    X, _ = make_data(500, 4)
    t = rfx.RandomFourierFeatures(256, gamma=0.5, random_state=0).fit(X)
    Z64 = t.transform(X)
    Z32 = t.transform(X.astype(np.float32))
    assert Z32.dtype == np.float32 and Z64.dtype == np.float64
    assert np.abs(Z32 - Z64).max() < 1e-5
    # fitted on float32: the same map (only the shape of X matters)
    t32 = rfx.RandomFourierFeatures(256, gamma=0.5, random_state=0).fit(X.astype(np.float32))
    assert np.array_equal(t32.random_weights_, t.random_weights_)
    # other dtypes become float64
    Zi = t.transform(np.round(X).astype(np.int32))
    assert Zi.dtype == np.float64
    # the regressors compute in float64 whatever comes in
    reg = rfx.RFFRegressor(64, alpha=1e-2, random_state=0)
    y = X[:, 0]
    p64 = reg.fit(X, y).predict(X)
    p32 = reg.fit(X.astype(np.float32), y.astype(np.float32)).predict(X.astype(np.float32))
    assert p32.dtype == np.float64 and np.abs(p32 - p64).max() < 1e-4


def test_other_feature_maps():
    X, _ = make_data(100, 4)
    t = rfx.RandomFourierFeatures(50, activation="relu", sparsity=2, weights="normal",
                                  weight_scale=0.5, random_state=0).fit(X)
    W, b = t.random_weights_, t.random_offset_
    assert W.shape == (4, 50) and np.all((W != 0).sum(axis=0) == 2)
    assert np.abs(t.transform(X) - np.maximum(X @ W + b, 0)).max() < 1e-12
    s = rfx.RandomFourierFeatures(50, activation="sigmoid", random_state=0).fit(X)
    P = X @ s.random_weights_ + s.random_offset_
    assert np.abs(s.transform(X) - 1 / (1 + np.exp(-P))).max() < 1e-12
    with pytest.raises(ValueError, match="sparsity"):
        rfx.RandomFourierFeatures(10, sparsity=9).fit(X)
    with pytest.raises(ValueError, match="unknown activation|activation"):
        rfx.RandomFourierFeatures(10, activation="gelu").fit(X)
    with pytest.raises(ValueError, match="cos-sin form is for the cos activation"):
        rfx.RandomFourierFeatures(10, activation="tanh", form="cos-sin").fit(X)
    # a regressor on sparse features, saved and read back with its parameters
    X, y = make_data(200, 4)
    reg = rfx.RFFRegressor(128, sparsity=2, activation="tanh", random_state=0).fit(X, y)
    assert reg.score(X, y) > 0.8


def test_shapes_of_regressor_outputs():
    X, y = make_data(80, 3)
    reg = rfx.RFFRegressor(32, alpha=0.1, random_state=0)
    assert reg.fit(X, y).predict(X).shape == (80,)
    assert np.ndim(reg.intercept_) == 0 and reg.coef_.shape == (32,)
    assert reg.fit(X, y[:, None]).predict(X).shape == (80, 1)
    assert reg.fit(X, np.column_stack([y, y])).predict(X).shape == (80, 2)
    gp = rfx.BayesianRFFRegressor(32, random_state=0)
    with pytest.warns(DataConversionWarning):
        gp.fit(X, y[:, None])
    mean, std = gp.predict(X, return_std=True)
    assert mean.shape == std.shape == (80,) and np.all(std > 0)
    _, fstd = gp.predict(X, return_std=True, latent=True)
    assert np.all(fstd < std)
    with pytest.raises(ValueError):
        gp.fit(X, np.column_stack([y, y]))


def test_ard_length_scales_and_auto():
    X, y = make_data(200, 3)
    reg = rfx.RFFRegressor(64, length_scale=[1.0, 2.0, 50.0], alpha=1e-3,
                           random_state=0).fit(X, y)
    assert np.array_equal(reg.length_scale_, [1.0, 2.0, 50.0])
    auto = rfx.BayesianRFFRegressor(64, random_state=0).fit(X, y)
    assert np.ndim(auto.length_scale_) == 0 and auto.length_scale_ > 0
    assert auto.noise_var_ > 0 and auto.prior_var_ > 0 and np.isfinite(auto.log_evidence_)
    gam = rfx.RFFRegressor(64, gamma=0.5, alpha=1e-3, standardize=False, random_state=0).fit(X, y)
    assert gam.length_scale_ == 1.0  # 1 / sqrt(2 gamma)


def test_classifier_labels_and_decisions():
    X, y = make_data(200, 2)
    yb = np.where(y > np.median(y), "high", "low")
    clf = rfx.RFFClassifier(64, random_state=0).fit(X, yb)
    assert list(clf.classes_) == ["high", "low"]
    d = clf.decision_function(X)
    assert d.shape == (200,)
    assert np.array_equal(clf.predict(X), np.where(d > 0, "low", "high"))
    y3 = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3])) + 10
    clf3 = rfx.RFFClassifier(64, random_state=0).fit(X, y3)
    assert clf3.decision_function(X).shape == (200, 3) and clf3.score(X, y3) > 0.8
    with pytest.raises(ValueError, match="at least 2 classes"):
        rfx.RFFClassifier(16).fit(X, np.zeros(200))
    with pytest.raises(ValueError, match="Unknown label type"):
        rfx.RFFClassifier(16).fit(X, y)


def test_load_model_round_trip_and_refit(tmp_path):
    X, y = make_data(120, 3)
    for est in (rfx.RFFRegressor(48, kernel="cauchy", length_scale=1.5, alpha=1e-2,
                                 random_state=9),
                rfx.BayesianRFFRegressor(48, length_scale=0.8, noise_var=0.01, prior_var=1.0,
                                         activation="sin", sparsity=2, random_state=9)):
        est.fit(X, y)
        path = str(tmp_path / "m.rfx")
        est.save(path)
        loaded = rfx.load_model(path)
        assert type(loaded) is type(est)
        assert loaded.get_params() == est.get_params()
        assert np.array_equal(loaded.predict(X), est.predict(X))
        # the parameters read from the file re-create the model
        assert np.array_equal(clone(loaded).fit(X, y).predict(X), est.predict(X))


def test_pipelines_and_grid_search():
    X, y = make_data(150, 3)
    pipe = make_pipeline(StandardScaler(), rfx.RandomFourierFeatures(64, random_state=0),
                         rfx.RFFRegressor(16, alpha=1.0, random_state=0))
    assert pipe.fit(X, y).predict(X).shape == (150,)
    gs = GridSearchCV(rfx.RFFRegressor(32, random_state=0),
                      {"alpha": [1e-3, 1.0], "kernel": ["gaussian", "matern"]}, cv=3)
    gs.fit(X, y)
    assert gs.best_score_ > 0.5
    names = rfx.RandomFourierFeatures(3).fit(X).get_feature_names_out()
    assert list(names) == ["randomfourierfeatures0", "randomfourierfeatures1",
                           "randomfourierfeatures2"]


def test_n_jobs_values():
    X, y = make_data(100, 3)
    ref = rfx.RandomFourierFeatures(32, random_state=0).fit(X).transform(X)
    for n_jobs in (None, 1, 2, -1, -2):
        t = rfx.RandomFourierFeatures(32, random_state=0, n_jobs=n_jobs).fit(X)
        assert np.array_equal(t.transform(X), ref)
    with pytest.raises(ValueError, match="n_jobs == 0"):
        rfx.RandomFourierFeatures(32, n_jobs=0).fit(X)


@pytest.mark.parametrize("module", [rfx.kernel_approximation, rfx.models, rfx.kernels])
def test_docstring_examples(module):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        failed, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failed == 0
