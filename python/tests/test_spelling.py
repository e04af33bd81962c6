# SPDX-License-Identifier: BSD-3-Clause
"""String options have one spelling in the Python API, scikit-learn's
underscores (form="cos_bias", loss="squared_hinge", optimizer="dual_cd");
the hyphenated spelling of the C library and the command line is still
accepted with a FutureWarning and gives the same bits."""
import warnings

import numpy as np
import pytest

import rfx

from conftest import make_data


def _no_warning(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn()


@pytest.mark.parametrize("form", ["cos_bias", "cos_sin"])
def test_form_old_spelling_warns_and_gives_the_same_map(form):
    X, _ = make_data(50, 3)
    new = _no_warning(lambda: rfx.RandomFourierFeatures(64, form=form, random_state=3).fit(X))
    old_name = form.replace("_", "-")
    with pytest.warns(FutureWarning, match="form=%r: the Python API spells it %r"
                      % (old_name, form)):
        old = rfx.RandomFourierFeatures(64, form=old_name, random_state=3).fit(X)
    np.testing.assert_array_equal(new.transform(X), old.transform(X))
    ref = np.sqrt(2.0 / 64) * np.cos(X @ new.random_weights_ + new.random_offset_)
    if form == "cos_bias":  # the formula of each name
        np.testing.assert_allclose(new.transform(X), ref, rtol=0, atol=1e-13)


def test_defaults_are_spelled_with_underscores():
    for cls in (rfx.RandomFourierFeatures, rfx.RFFRegressor, rfx.BayesianRFFRegressor,
                rfx.RFFClassifier):
        assert cls().form == "cos_bias"
    assert rfx.RFFClassifier().optimizer == "auto"


def test_regressor_and_model_file_spelling(tmp_path):
    X, y = make_data(80, 2)
    reg = _no_warning(lambda: rfx.RFFRegressor(32, form="cos_sin", alpha=1e-3,
                                               random_state=0).fit(X, y))
    with pytest.warns(FutureWarning):
        old = rfx.RFFRegressor(32, form="cos-sin", alpha=1e-3, random_state=0).fit(X, y)
    np.testing.assert_array_equal(reg.predict(X), old.predict(X))
    reg.save(str(tmp_path / "m.rfx"))
    back = _no_warning(lambda: rfx.load_model(str(tmp_path / "m.rfx")))
    assert back.get_params()["form"] == "cos_sin"  # the file's name, in Python's spelling
    np.testing.assert_array_equal(back.predict(X), reg.predict(X))


def test_classifier_loss_and_optimizer_spelling(tmp_path):
    X, y = make_data(120, 2)
    y = (y > np.median(y)).astype(int)
    kw = dict(n_components=32, alpha=1e-2, loss="squared_hinge", random_state=0)
    new = _no_warning(lambda: rfx.RFFClassifier(optimizer="dual_cd", **kw).fit(X, y))
    with pytest.warns(FutureWarning, match="optimizer='dual-cd'"):
        old = rfx.RFFClassifier(optimizer="dual-cd", **kw).fit(X, y)
    np.testing.assert_array_equal(new.decision_function(X), old.decision_function(X))
    new.save(str(tmp_path / "c.rfx"))
    assert rfx.load_model(str(tmp_path / "c.rfx")).loss == "squared_hinge"
    with pytest.raises(ValueError, match="loss must be one of"):
        rfx.RFFClassifier(loss="squared-hinge").fit(X, y)  # never a Python spelling
