# SPDX-License-Identifier: BSD-3-Clause
"""Model files back as fitted estimators: :func:`load_model`, and the one
table from a model's method (rfx_method) to the estimator class that wraps
it. Each class builds itself from a model with ``_from_model(model,
n_jobs)``."""
import os

from ._lib import check, ffi, lib
from ._model import model_input_box, model_input_names
from .models import BayesianRFFRegressor, RFFClassifier, RFFRegressor
from .projection import ProjectedRegressor
from .sinks import GreedyRegressor, KitchenSinksRegressor
from .surrogate import PCERegressor, SparseRFERegressor

# rfx_method -> the estimator class of its models
_ESTIMATORS = {
    lib.RFX_METHOD_RIDGE: RFFRegressor,
    lib.RFX_METHOD_BAYES: BayesianRFFRegressor,
    lib.RFX_METHOD_SRFE: SparseRFERegressor,
    lib.RFX_METHOD_HARFE: SparseRFERegressor,
    lib.RFX_METHOD_PCE: PCERegressor,  # no feature map
    lib.RFX_METHOD_PROJECTED: ProjectedRegressor,  # a projection, then a surrogate
    lib.RFX_METHOD_CLASSIFY: RFFClassifier,
    lib.RFX_METHOD_SINKS: KitchenSinksRegressor,
    lib.RFX_METHOD_GREEDY: GreedyRegressor,
}


def load_model(path, n_jobs=None):
    """Read an rfx model file (written by ``rfx fit``, the C API's
    rfx_model_save, or an estimator's ``save``) as a fitted
    :class:`RFFRegressor` (ridge models),
    :class:`BayesianRFFRegressor` (Bayesian models), :class:`RFFClassifier`
    (classifiers: the class labels are the model's numbers),
    :class:`SparseRFERegressor` (srfe / harfe models),
    :class:`PCERegressor` (pce models), :class:`ProjectedRegressor`
    (projected models), :class:`KitchenSinksRegressor` (kitchen-sink
    models) or :class:`GreedyRegressor` (greedy models). Its parameters are
    those the model was fitted with (those a model file does not hold, such
    as a kitchen-sink fit's C, at their defaults); its predictions are
    bitwise those of the C library.

    Examples
    --------
    >>> import numpy as np, os, tempfile
    >>> import rfx
    >>> X = np.random.RandomState(0).normal(size=(50, 3))
    >>> reg = rfx.RFFRegressor(n_components=64, alpha=1e-3, random_state=0).fit(X, X[:, 0])
    >>> path = os.path.join(tempfile.mkdtemp(), "model.rfx")
    >>> reg.save(path)
    >>> again = rfx.load_model(path)
    >>> bool((again.predict(X) == reg.predict(X)).all())
    True
    """
    out = ffi.new("rfx_model **")
    check(lib.rfx_model_load(os.fsencode(path), out))
    return _estimator_from_model(ffi.gc(out[0], lib.rfx_model_free), n_jobs)


def _estimator_from_model(model, n_jobs=None):
    """The fitted estimator around an rfx model, of the class its method maps to."""
    info = ffi.new("rfx_model_info *")
    check(lib.rfx_model_get_info(model, info))
    cls = _ESTIMATORS.get(int(info.method), RFFRegressor)
    est = cls._from_model(model, n_jobs)
    names = model_input_names(model, int(info.n_inputs))
    if names is not None:
        est.feature_names_in_ = names
    box = model_input_box(model, int(info.n_inputs))
    if box is not None:
        est._input_box = box
    return est
