# SPDX-License-Identifier: BSD-3-Clause
"""Both branches of rfx._sklearn_compat: scikit-learn's old API (1.2 to 1.5:
the ``_validate_data`` method, ``_more_tags``) and the new one (1.6 on:
``sklearn.utils.validation.validate_data``, ``__sklearn_tags__``). Debian
ships 1.2, so the new API is simulated: a ``validate_data`` function is
installed and ``BaseEstimator._validate_data`` removed, as in 1.7; every
estimator must fit and predict to the same bits through it."""
import glob
import os
import types

import numpy as np
import pytest
import sklearn.utils.validation as validation
from sklearn.base import BaseEstimator

import rfx
from rfx import _sklearn_compat

from conftest import make_data

PKG = os.path.dirname(os.path.abspath(rfx.__file__))
_OLD_VALIDATE = BaseEstimator._validate_data  # 1.2's


def _estimators():
    """(estimator, kind) pairs: every estimator of the package, small."""
    return [
        (rfx.RandomFourierFeatures(32, random_state=0), "transform"),
        (rfx.RFFRegressor(32, random_state=0), "predict"),
        (rfx.BayesianRFFRegressor(32, random_state=0), "predict"),
        (rfx.BayesianLinearRegression(), "predict"),
        (rfx.RFFClassifier(32, random_state=0), "classify"),
        (rfx.RFFClassifier(32, loss="least_squares", random_state=0), "classify"),
        (rfx.SparseRFERegressor(200, sparsity=2, weight_scale=1.0, alpha=1e-3,
                                random_state=0), "predict"),
        (rfx.PCERegressor(degree=2), "predict"),
        (rfx.KernelRidge(alpha=0.1, kernel="rbf", gamma=0.5), "predict"),
        (rfx.GaussianProcessRegressor(rfx.Kernel.gaussian(1.0)), "predict"),
        (rfx.Nystroem(n_components=20, random_state=0), "transform"),
        (rfx.KernelPCA(n_components=2), "transform"),
        (rfx.ProjectedRegressor(n_components=2, n_particles=3, iterations=1, random_state=0),
         "predict"),
        (rfx.SurrogateRegressor(candidates=["ridge", "pce"], n_folds=2), "predict"),
    ]


def _run(est, kind):
    X, y = make_data(80, 3, seed=1)
    if kind == "classify":
        y = (y > np.median(y)).astype(int)
    if kind == "transform":
        return est.fit(X).transform(X[:7])
    return est.fit(X, y).predict(X[:7])


@pytest.fixture
def new_api(monkeypatch):
    """scikit-learn >= 1.7 as far as rfx can tell: validate_data is a
    function, the estimator method is gone. The fake function records its
    calls and validates with 1.2's code."""
    old = BaseEstimator._validate_data
    calls = []

    def validate_data(_estimator, /, X="no_validation", y="no_validation", reset=True,
                      **check_params):
        calls.append((type(_estimator).__name__, reset))
        return old(_estimator, X=X, y=y, reset=reset, **check_params)

    monkeypatch.setattr(validation, "validate_data", validate_data, raising=False)
    monkeypatch.delattr(BaseEstimator, "_validate_data")
    return calls


@pytest.mark.parametrize("index", range(len(_estimators())))
def test_every_estimator_fits_through_the_new_validate_data(index, new_api):
    est, kind = _estimators()[index]
    with pytest.MonkeyPatch.context() as mp:  # the old API, for the reference result
        mp.delattr(validation, "validate_data")
        mp.setattr(BaseEstimator, "_validate_data", _OLD_VALIDATE, raising=False)
        ref = _run(_estimators()[index][0], kind)
        assert not new_api
    out = _run(est, kind)
    names = {name for name, _ in new_api}
    assert names == {type(est).__name__}
    assert (type(est).__name__, True) in new_api and (type(est).__name__, False) in new_api
    np.testing.assert_array_equal(out, ref)
    assert est.n_features_in_ == 3
    with pytest.raises(ValueError, match="features"):  # reset=False checks the count
        (est.transform if kind == "transform" else est.predict)(np.zeros((2, 4)))


def test_old_api_is_used_when_validate_data_is_absent():
    assert not hasattr(validation, "validate_data")  # Debian's scikit-learn 1.2
    X, y = make_data(30, 2)
    est = rfx.RFFRegressor(16, random_state=0)
    Xv, yv = _sklearn_compat.validate_data(est, X, y, dtype=np.float64, y_numeric=True)
    np.testing.assert_array_equal(Xv, X)
    assert est.n_features_in_ == 2


def _fake_tags():
    """The parts of scikit-learn 1.6's default Tags that rfx sets."""
    return types.SimpleNamespace(
        target_tags=types.SimpleNamespace(multi_output=False),
        transformer_tags=types.SimpleNamespace(preserves_dtype=["float64"]),
        classifier_tags=types.SimpleNamespace(multi_class=True))


def test_tags_in_both_apis(monkeypatch):
    # old: _more_tags, collected by 1.2's _get_tags
    assert rfx.RandomFourierFeatures()._get_tags()["preserves_dtype"] == [np.float64,
                                                                         np.float32]
    assert rfx.KernelRidge()._get_tags()["multioutput"]
    assert rfx.RFFRegressor()._get_tags()["multioutput"]
    assert not rfx.BayesianRFFRegressor()._get_tags()["multioutput"]
    assert not rfx.RFFClassifier()._get_tags()["binary_only"]
    # new: __sklearn_tags__ on top of the base class's Tags
    monkeypatch.setattr(BaseEstimator, "__sklearn_tags__", lambda self: _fake_tags(),
                        raising=False)
    tags = rfx.RandomFourierFeatures().__sklearn_tags__()
    assert tags.transformer_tags.preserves_dtype == ["float64", "float32"]

    class Both(_sklearn_compat.TagsMixin, BaseEstimator):
        _rfx_tags = {"multioutput": True, "binary_only": True}

    tags = Both().__sklearn_tags__()
    assert tags.target_tags.multi_output and not tags.classifier_tags.multi_class
    assert Both()._more_tags() == {"multioutput": True, "binary_only": True}

    class Unknown(_sklearn_compat.TagsMixin, BaseEstimator):
        _rfx_tags = {"no_such_tag": True}

    with pytest.raises(KeyError, match="no_such_tag"):
        Unknown().__sklearn_tags__()


def test_no_module_uses_the_removed_api():
    # scikit-learn 1.7 removed them: only the compatibility module names them
    for path in glob.glob(os.path.join(PKG, "*.py")):
        if os.path.basename(path) == "_sklearn_compat.py":
            continue
        with open(path) as f:
            text = f.read()
        assert "_validate_data" not in text, path
        assert "_more_tags" not in text, path


def test_declared_scikit_learn_range():
    # the lower bound is the oldest scikit-learn tested (Debian 12's 1.2), and there is
    # no upper bound: the new API is handled above
    meta = os.path.join(os.path.dirname(PKG), "pyproject.toml")
    if not os.path.isfile(meta):
        pytest.skip("an installed package without pyproject.toml")
    with open(meta) as f:
        text = f.read()
    assert '"scikit-learn>=1.2"' in text
