"""What every estimator wrapping an rfx model (an ``rfx_model *``) shares:
the model file format (save, bytes, pickling by the file's bytes) in
:class:`_ModelFile`, and in :class:`_RFXModel` the fit through
rfx_model_fit, predictions and weights of the random feature models."""
import os

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from . import _common
from ._lib import (as_rows, call_with_progress, check, check_verbose, cmat, cmat_to_array,
                   double_array, ffi, lib, mat, mat_none, serial_blas)
from ._sklearn_compat import validate_data


def _model_bytes(model):
    """The bytes of an rfx model in the model file format."""
    buf = ffi.new("void **")
    n = ffi.new("size_t *")
    check(lib.rfx_model_save_buffer(model, buf, n))
    try:
        return bytes(ffi.buffer(buf[0], n[0]))
    finally:
        lib.rfx_buffer_free(buf[0])


def _load_buffer(data):
    """An rfx model (freed with its last reference) from the bytes of a model file."""
    out = ffi.new("rfx_model **")
    check(lib.rfx_model_load_buffer(data, len(data), out))
    return ffi.gc(out[0], lib.rfx_model_free)


class _ModelFile(BaseEstimator):
    """An estimator whose fitted state is an rfx model, ``self._model``:
    :meth:`save` writes it as a model file, :meth:`to_bytes` gives that
    file's bytes, and pickles store those bytes (the model comes back bit
    for bit). Subclasses that need more once a model is restored from a
    pickle override :meth:`_model_loaded`."""

    def save(self, path):
        """Write the fitted model to an rfx model file (the C library's
        checked binary format), readable by ``rfx.load_model``, the ``rfx``
        command line and the C API."""
        check_is_fitted(self)
        check(lib.rfx_model_save(self._model, os.fsencode(path)))

    def to_bytes(self):
        """The fitted model in the rfx model format, as bytes."""
        check_is_fitted(self)
        return _model_bytes(self._model)

    def __getstate__(self):
        state = dict(super().__getstate__())  # a copy: it may be __dict__ itself
        state.pop("_model", None)
        if "_model" in self.__dict__:
            state["_model_bytes"] = self.to_bytes()
        return state

    def __setstate__(self, state):
        data = state.pop("_model_bytes", None)
        super().__setstate__(state)
        if data is not None:
            self._model = _load_buffer(data)
            self._model_loaded()

    def _model_loaded(self):
        """Called once self._model is restored from a pickle."""


class _RFXModel(_ModelFile):
    """What the random feature estimators over an rfx_model share: the fit
    through rfx_model_fit, predictions, weights, and the estimator of a
    model read from a file (:meth:`_from_model`); model files and pickling
    come from :class:`_ModelFile`."""

    _method = None  # lib.RFX_METHOD_RIDGE or lib.RFX_METHOD_BAYES
    _can_learn = False  # length_scale="learn" (rfx_fit_params.learn_length_scales)

    def _fit_model(self, X, Y, lam=-1.0, noise_var=0.0, prior_var=0.0, classify=None):
        n, d = X.shape
        if n < 2:
            raise ValueError("n_samples=%d: at least 2 samples are needed to fit" % n)
        verbose = check_verbose(getattr(self, "verbose", 0))
        scale_X = X
        if isinstance(self.gamma, str) and self.standardize:
            scale_X = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
        scale = _common.resolve_scale(self, scale_X, d, allow_auto=True,
                                      allow_learn=self._can_learn)
        learn = _common.is_learn(self.length_scale)
        seed = _common.resolve_seed(self.random_state)
        threads = _common.resolve_threads(self.n_jobs)
        fp, keep = _common.features_params(self, seed, scale, threads)
        p = ffi.new("rfx_fit_params *", lib.rfx_fit_params_default())
        p.method = self._method
        p.features = fp[0]
        if scale[3]:
            p.features.length_scale = 0.0  # choose
        if learn:
            p.learn_length_scales = 1
            p.learn_iterations = _common.check_count(self.learn_iterations, "learn_iterations", 1)
            p.learn_particles = _common.check_count(self.learn_particles, "learn_particles", 1,
                                                    allow_none=True) or 0
        p.standardize = int(bool(self.standardize))
        p.fit_intercept = int(bool(self.fit_intercept))
        setattr(p, "lambda", lam)
        p.noise_var = noise_var
        p.prior_var = prior_var
        if classify is not None:
            p.classify = classify
        X = as_rows(X)
        Y = as_rows(Y)
        out = ffi.new("rfx_model **")
        report = ffi.new("rfx_fit_report *")
        call_with_progress(lib.rfx_model_fit, p, cmat(X), cmat(Y), out, report,
                           label=type(self).__name__, verbose=verbose, out=out)
        del keep
        self._model = ffi.gc(out[0], lib.rfx_model_free)
        self.seed_ = seed
        self._input_box = (X.min(axis=0), X.max(axis=0))  # the Sobol functions' default
        for name in ("learn_score_", "learn_evaluations_"):  # of an earlier fit
            self.__dict__.pop(name, None)
        if learn:
            self.learn_score_ = (float(report.learn_score_before),
                                 float(report.learn_score_after))
            self.learn_evaluations_ = int(report.learn_evaluations)
        self._read_info()
        return report

    def _read_info(self):
        info = ffi.new("rfx_model_info *")
        check(lib.rfx_model_get_info(self._model, info))
        self.n_features_in_ = int(info.n_inputs)
        self.length_scale_ = _common.length_scale_of(info.features, int(info.n_inputs))
        self._n_targets = int(info.n_targets)
        if info.method == lib.RFX_METHOD_RIDGE:
            self.alpha_ = float(getattr(info, "lambda"))
        return info

    def _set_threads(self):
        # the map belongs to the model; its thread count never changes results
        f = ffi.cast("rfx_features *", lib.rfx_model_features(self._model))
        lib.rfx_features_set_threads(f, _common.resolve_threads(self.n_jobs))

    def _predict_raw(self, X, std=None):
        """Predictions (n x ny) and, with std = "noisy" / "latent", standard
        deviations (n x ny)."""
        check_is_fitted(self)
        X = as_rows(validate_data(self, X, dtype=np.float64, reset=False))
        n = X.shape[0]
        Yhat = np.empty((n, self._n_targets))
        if std is None:
            with serial_blas:
                check(lib.rfx_model_predict(self._model, cmat(X), mat(Yhat), mat_none()))
            return Yhat, None
        S = np.empty((n, self._n_targets))
        fn = lib.rfx_model_predict_latent if std == "latent" else lib.rfx_model_predict
        with serial_blas:
            check(fn(self._model, cmat(X), mat(Yhat), mat(S)))
        return Yhat, S

    @property
    def coef_(self):
        """The weights, of shape (n_components,) for one target, else
        (n_targets, n_components) (as Ridge's coef_)."""
        check_is_fitted(self)
        W = cmat_to_array(lib.rfx_model_weights(self._model)).T
        return W[0] if self._one_target() else W

    @property
    def intercept_(self):
        check_is_fitted(self)
        b = double_array(lib.rfx_model_intercepts(self._model), self._n_targets)
        return float(b[0]) if self._one_target() else b

    def _one_target(self):
        return self._n_targets == 1

    def _model_loaded(self):
        self._set_threads()

    @classmethod
    def _from_model(cls, model, n_jobs=None):
        """A fitted estimator around an rfx model (from a file): the
        parameters are those the file records."""
        info = ffi.new("rfx_model_info *")
        check(lib.rfx_model_get_info(model, info))
        params = _common.features_info(info.features, int(info.n_inputs))
        seed = params["random_state"]
        params.update(fit_intercept=bool(info.fit_intercept), standardize=bool(info.standardized),
                      n_jobs=n_jobs)
        est = cls._from_model_info(model, info, params)
        est._model = model
        est.seed_ = seed
        est._read_info()
        est._set_threads()
        return est

    @classmethod
    def _from_model_info(cls, model, info, params):
        """The estimator (not yet holding the model) with the parameters of
        a model: info its rfx_model_info, params those of its feature map
        (features_info) with fit_intercept, standardize and n_jobs."""
        raise NotImplementedError
