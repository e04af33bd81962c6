# SPDX-License-Identifier: BSD-3-Clause
"""What every estimator wrapping an rfx model (an ``rfx_model *``) shares:
the model file format (save, bytes, pickling by the file's bytes) in
:class:`_ModelFile`, and in :class:`_RFXModel` the fit through
rfx_model_fit, predictions and weights of the random feature models."""
import numbers
import os
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from . import _common
from ._lib import (as_rows, call_with_progress, check, check_verbose, cmat, cmat_to_array,
                   c_string, double_array, ffi, lib, mat, mat_none, serial_blas)
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


def _set_model_names(model, names):
    """Give an rfx model the input names of its estimator (feature_names_in_),
    so that its file and pickle keep them; names the C library cannot take
    (empty or repeated) are left out with a warning."""
    keep = [ffi.new("char[]", str(v).encode("utf-8")) for v in names]
    arr = ffi.new("const char *[]", keep)
    if lib.rfx_model_set_names(model, arr, ffi.NULL) != 0:
        why = c_string(lib.rfx_last_error())
        warnings.warn("the model file keeps no input names: %s" % why, stacklevel=3)
        lib.rfx_model_set_names(model, ffi.NULL, ffi.NULL)


def model_input_box(model, d):
    """The training box an rfx model holds, as (lo, hi) arrays, or None."""
    lo = ffi.new("const double **")
    hi = ffi.new("const double **")
    if not lib.rfx_model_input_box(model, lo, hi):
        return None
    return double_array(lo[0], d), double_array(hi[0], d)


def model_input_names(model, d):
    """The input names an rfx model holds, as feature_names_in_ holds them (an
    object array of str), or None."""
    if lib.rfx_model_input_name(model, 0) == ffi.NULL:
        return None
    names = [ffi.string(lib.rfx_model_input_name(model, j)).decode("utf-8", "replace")
             for j in range(d)]
    return np.asarray(names, dtype=object)


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
        command line and the C API. The input names (``feature_names_in_``,
        when X had string column names) go with it: ``rfx predict`` then
        matches a CSV file's columns by name."""
        check_is_fitted(self)
        self._name_model()
        check(lib.rfx_model_save(self._model, os.fsencode(path)))

    def to_bytes(self):
        """The fitted model in the rfx model format, as bytes (with its input
        names, as :meth:`save`)."""
        check_is_fitted(self)
        self._name_model()
        return _model_bytes(self._model)

    def _name_model(self):
        """The schema the model file keeps: the input names and the training
        box (the default input distribution of Sobol indices)."""
        names = getattr(self, "feature_names_in_", None)
        if names is not None:
            _set_model_names(self._model, names)
        box = getattr(self, "_input_box", None)
        if box is not None:
            lo = np.ascontiguousarray(box[0], dtype=np.float64)
            hi = np.ascontiguousarray(box[1], dtype=np.float64)
            check(lib.rfx_model_set_input_box(self._model, ffi.from_buffer("double[]", lo),
                                              ffi.from_buffer("double[]", hi)))

    def __getstate__(self):
        state = dict(super().__getstate__())  # a copy: it may be __dict__ itself
        state.pop("_model", None)
        for name in ("_stats", "_feats", "_stats_d", "_stats_ny"):  # partial_fit's: not kept
            state.pop(name, None)
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


def sample_weights(sample_weight, X):
    """The row weights of a fit as the C library takes them: None, or a
    C-contiguous float64 array of len(X) finite values >= 0 (scikit-learn's
    check; the library refuses all zeros with a message naming them)."""
    if sample_weight is None:
        return None
    w = _check_sample_weight(sample_weight, X, dtype=np.float64, only_non_negative=True)
    return np.ascontiguousarray(w, dtype=np.float64)


def input_box(X, sample_weight=None):
    """The training box (lo, hi) of the rows of X of positive weight (all
    rows without weights): a row of weight 0 is a row left out."""
    if sample_weight is not None and np.any(sample_weight > 0):
        X = X[sample_weight > 0]
    return X.min(axis=0), X.max(axis=0)


def _weights_ptr(w):
    return ffi.NULL if w is None else ffi.cast("const double *", w.ctypes.data)


def _alpha_value(alpha):
    """lambda of alpha: a number >= 0, or -1 for None (chosen)."""
    if alpha is None:
        return -1.0
    if not isinstance(alpha, numbers.Real) or isinstance(alpha, bool) or not alpha >= 0:
        raise ValueError("alpha must be a number >= 0 or None, got %r" % (alpha,))
    return float(alpha)


# Parameters that never change what an estimator computes: statistics of
# estimators that differ only in them add up.
_RUN_PARAMS = ("n_jobs", "verbose")


def _stats_new(D, ny):
    st = ffi.new("rfx_stats **")
    check(lib.rfx_stats_create(D, ny, st))
    return ffi.gc(st[0], lib.rfx_stats_free)


def _stats_copy(stats):
    st = ffi.new("rfx_stats **")
    check(lib.rfx_stats_copy(stats, st))
    return ffi.gc(st[0], lib.rfx_stats_free)


def _map_state(feats, d):
    """Every parameter of a feature map, to re-create it bit for bit."""
    return _common.params_state(lib.rfx_features_get_params(feats), d)


def _same_map(a, b):
    if a.keys() != b.keys():
        return False
    for name in a:
        x, y = a[name], b[name]
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if x is None or y is None or not np.array_equal(x, y):
                return False
        elif x != y:
            return False
    return True


class Statistics:
    """The sufficient statistics of an estimator fitted by ``partial_fit``
    (``est.statistics_``): ``Z^T W Z``, ``Z^T W Y``, the column sums and the
    row count of its random features Z, with the feature map, the
    estimator's class and parameters, the training box and, for a
    classifier, its classes. They are the whole state of the fit, in memory
    O(n_components^2) whatever the number of rows.

    - ``a + b`` (and ``sum``) are the statistics of the rows of both, exactly
      (they must be disjoint rows of one feature map: the same class,
      parameters, inputs, targets and map, or a ValueError says what
      differs; a map chosen from the first batch, ``length_scale="auto"``
      or ``standardize=True``, differs between workers: give
      ``length_scale`` and ``standardize=False`` to add statistics made
      apart);
    - they pickle (the counts and sums as they are, bit for bit, and the
      map's parameters, which re-create it bit for bit), so Dask or
      multiprocessing workers can each fit rows and return their
      statistics;
    - :meth:`to_estimator` (or ``rfx.merge``) solves them: the estimator
      fitted on every row, which can go on with ``partial_fit``.

    Example (``work`` runs in a worker process)::

        def work(rows):
            est = rfx.RFFRegressor(n_components=256, length_scale=1.0,
                                   standardize=False, random_state=0)
            return est.partial_fit(X[rows], y[rows]).statistics_

        with multiprocessing.Pool() as pool:
            total = sum(pool.map(work, np.array_split(np.arange(n), 8)))
        model = total.to_estimator()
    """

    def __init__(self, estimator_class, params, feats, stats, d, box, seed, target,
                 feature_names=None):
        self._class = estimator_class
        self._params = dict(params)
        self._feats = feats
        self._stats = stats
        self._d = int(d)
        self._box = (np.array(box[0], dtype=np.float64), np.array(box[1], dtype=np.float64))
        self._seed = int(seed)
        self._target = target  # ("y_1d", bool) or ("classes", ndarray)
        self._names = None if feature_names is None else np.asarray(feature_names, dtype=object)

    @classmethod
    def _of(cls, est):
        """A snapshot (a copy) of the statistics of est."""
        if getattr(est, "_stats", None) is None:
            raise ValueError("%s has no statistics (fit it with partial_fit)" % type(est).__name__)
        if hasattr(est, "classes_"):
            target = ("classes", np.array(est.classes_))
        else:
            target = ("y_1d", bool(getattr(est, "_y_1d", True)))
        return cls(type(est), est.get_params(), est._feats, _stats_copy(est._stats),
                   est._stats_d, est._input_box, est.seed_, target,
                   getattr(est, "feature_names_in_", None))

    # -- what they hold ------------------------------------------------------
    @property
    def n_samples(self):
        """Rows added (those of positive weight, when weighted)."""
        return int(lib.rfx_stats_rows(self._stats))

    @property
    def n_features_in(self):
        return self._d

    @property
    def n_components(self):
        return int(lib.rfx_stats_n_features(self._stats))

    @property
    def n_targets(self):
        return int(lib.rfx_stats_n_targets(self._stats))

    @property
    def estimator_class(self):
        return self._class

    def get_params(self):
        """The parameters of the estimator the statistics belong to."""
        return dict(self._params)

    def __repr__(self):
        return "Statistics(%s, n_samples=%d, n_components=%d, n_targets=%d)" % (
            self._class.__name__, self.n_samples, self.n_components, self.n_targets)

    # -- adding --------------------------------------------------------------
    def _mismatch(self, other):
        """Why self and other cannot add, or None."""
        if self._class is not other._class:
            return "one is of %s, the other of %s" % (self._class.__name__,
                                                      other._class.__name__)
        pa = {k: v for k, v in self._params.items() if k not in _RUN_PARAMS}
        pb = {k: v for k, v in other._params.items() if k not in _RUN_PARAMS}
        if pa != pb:
            diff = sorted(k for k in pa if k not in pb or not _equal_param(pa[k], pb[k]))
            return "the estimators must have the same parameters (they differ in %s)" % (
                ", ".join(diff),)
        if (self._d, self.n_targets) != (other._d, other.n_targets):
            return ("different shapes: %d inputs and %d targets against %d and %d"
                    % (self._d, self.n_targets, other._d, other.n_targets))
        if self._target[0] != other._target[0] or not np.array_equal(self._target[1],
                                                                     other._target[1]):
            return "different targets (%s %r against %r)" % (self._target[0], self._target[1],
                                                           other._target[1])
        if not _same_map(_map_state(self._feats, self._d), _map_state(other._feats, other._d)):
            return ("different feature maps (the seed or the kernel scale differs: a scale "
                    "chosen from each one's first batch, length_scale='auto' or "
                    "standardize=True, differs between estimators fitted apart; give "
                    "length_scale and standardize=False)")
        if (self._names is None) != (other._names is None) or (
                self._names is not None and not np.array_equal(self._names, other._names)):
            return "different input names (feature_names_in_)"
        return None

    def __add__(self, other):
        if not isinstance(other, Statistics):
            return NotImplemented
        why = self._mismatch(other)
        if why:
            raise ValueError("Statistics cannot be added: " + why)
        stats = _stats_copy(self._stats)
        check(lib.rfx_stats_merge(stats, other._stats))
        box = (np.minimum(self._box[0], other._box[0]), np.maximum(self._box[1], other._box[1]))
        return Statistics(self._class, self._params, self._feats, stats, self._d, box,
                          self._seed, self._target, self._names)

    def __radd__(self, other):
        if isinstance(other, numbers.Number) and other == 0:  # sum() starts from 0
            return self
        return NotImplemented

    # -- pickling ------------------------------------------------------------
    def __getstate__(self):
        ny = self.n_targets
        packed = np.empty(int(lib.rfx_stats_packed_size(self._stats)))
        shift = np.zeros(ny)
        has_shift = bool(lib.rfx_stats_shift(self._stats, ffi.cast("double *",
                                                                 shift.ctypes.data)))
        check(lib.rfx_stats_pack(self._stats, ffi.NULL, ffi.cast("double *", packed.ctypes.data)))
        return {"class": self._class, "params": self._params, "d": self._d,
                "map": _map_state(self._feats, self._d), "n_components": self.n_components,
                "n_targets": ny, "packed": packed, "shift": shift if has_shift else None,
                "box": self._box, "seed": self._seed, "target": self._target,
                "names": self._names}

    def __setstate__(self, state):
        p, keep = _common.params_from_state(state["map"])
        p.n_threads = _common.resolve_threads(state["params"].get("n_jobs"))
        f = ffi.new("rfx_features **")
        check(lib.rfx_features_create(p, state["d"], f))
        del keep
        feats = ffi.gc(f[0], lib.rfx_features_free)
        stats = _stats_new(state["n_components"], state["n_targets"])
        packed = np.ascontiguousarray(state["packed"], dtype=np.float64)
        if packed.shape != (int(lib.rfx_stats_packed_size(stats)),):
            raise ValueError("Statistics: the packed statistics have %d values, expected %d"
                             % (packed.size, int(lib.rfx_stats_packed_size(stats))))
        shift = state["shift"]
        if shift is not None:
            shift = np.ascontiguousarray(shift, dtype=np.float64)
        check(lib.rfx_stats_unpack(stats, ffi.cast("const double *", packed.ctypes.data),
                                   ffi.NULL if shift is None
                                   else ffi.cast("const double *", shift.ctypes.data)))
        self.__init__(state["class"], state["params"], feats, stats, state["d"], state["box"],
                      state["seed"], state["target"], state["names"])

    # -- solving -------------------------------------------------------------
    def to_estimator(self):
        """A new estimator (of the class and parameters the statistics came
        from) fitted on every row they hold; its own partial_fit adds more."""
        est = self._class(**self._params)
        est._feats, est._stats = self._feats, _stats_copy(self._stats)
        est._stats_d, est._stats_ny = self._d, self.n_targets
        est.seed_ = self._seed
        est._input_box = (self._box[0].copy(), self._box[1].copy())
        est.n_features_in_ = self._d
        if self._names is not None:
            est.feature_names_in_ = self._names.copy()
        if self._target[0] == "classes":
            est.classes_ = np.array(self._target[1])
        else:
            est._y_1d = self._target[1]
        est._solve_stats()
        return est


def _equal_param(a, b):
    try:
        return bool(np.all(a == b)) if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) \
            else a == b
    except (TypeError, ValueError):
        return False


def merge(*parts):
    """One estimator fitted on the rows of all the parts: estimators fitted
    by partial_fit on disjoint rows, or their :class:`Statistics`
    (``est.statistics_``, which pickle and so come back from other
    processes), in any mix. Their statistics are added (``Statistics.__add__``:
    one class with the same parameters, hence the same feature map) and
    solved once, as if one estimator had seen every row (to rounding).
    Returns a new estimator; the inputs are unchanged."""
    if not parts:
        raise ValueError("merge needs at least one estimator")
    stats = []
    for p in parts:
        if isinstance(p, Statistics):
            stats.append(p)
        elif getattr(p, "_stats", None) is None:
            raise ValueError("merge: %s has no statistics (fit it with partial_fit)"
                             % type(p).__name__)
        else:
            stats.append(Statistics._of(p))
    total = stats[0]
    for s in stats[1:]:
        why = total._mismatch(s)
        if why:
            raise ValueError("merge: " + why)
        total = total + s
    return total.to_estimator()


class _RFXModel(_ModelFile):
    """What the random feature estimators over an rfx_model share: the fit
    through rfx_model_fit, predictions, weights, and the estimator of a
    model read from a file (:meth:`_from_model`); model files and pickling
    come from :class:`_ModelFile`."""

    _method = None  # lib.RFX_METHOD_RIDGE or lib.RFX_METHOD_BAYES
    _can_learn = False  # length_scale="learn" (rfx_fit_params.learn_length_scales)

    def _fit_model(self, X, Y, lam=-1.0, noise_var=0.0, prior_var=0.0, classify=None,
                   sample_weight=None):
        """rfx_model_fit on X, Y; sample_weight: None or the checked weights
        (:func:`sample_weights`)."""
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
        p.sample_weight = _weights_ptr(sample_weight)
        X = as_rows(X)
        Y = as_rows(Y)
        out = ffi.new("rfx_model **")
        report = ffi.new("rfx_fit_report *")
        try:
            call_with_progress(lib.rfx_model_fit, p, cmat(X), cmat(Y), out, report,
                               label=type(self).__name__, verbose=verbose, out=out)
        except Exception as err:
            _common.reraise_sampler_error(keep, err)
            raise
        del keep
        self._model = ffi.gc(out[0], lib.rfx_model_free)
        self.seed_ = seed
        self._input_box = input_box(X, sample_weight)  # the Sobol functions' default
        for name in ("_stats", "_feats", "_stats_d", "_stats_ny"):  # a fit starts afresh
            self.__dict__.pop(name, None)
        for name in ("learn_score_", "learn_evaluations_"):  # of an earlier fit
            self.__dict__.pop(name, None)
        if learn:
            self.learn_score_ = (float(report.learn_score_before),
                                 float(report.learn_score_after))
            self.learn_evaluations_ = int(report.learn_evaluations)
        self._read_info()
        return report

    # -- partial_fit: mergeable statistics ---------------------------------
    @property
    def statistics_(self):
        """The statistics of the rows given to partial_fit (a copy), a
        :class:`rfx.Statistics`: they add with ``+``, pickle, and solve with
        ``to_estimator()`` or ``rfx.merge``. AttributeError for an estimator
        fitted otherwise (fit keeps no statistics)."""
        if getattr(self, "_stats", None) is None:
            raise AttributeError("statistics_: %s has no statistics (fit it with partial_fit)"
                                 % type(self).__name__)
        return Statistics._of(self)

    def _partial_fit_model(self, X, Y, sample_weight=None, probe_y=None):
        """Add the rows X, Y (with their weights, None or from
        :func:`sample_weights`) to the statistics (Z^T W Z, Z^T W Y, sums) of
        this estimator's feature map and solve again. The first call makes the
        map, and fixes its kernel scale: a given length_scale, or for "auto"
        (and "learn") the one a fit on the first batch chooses (learns); with standardize, in the
        units of the first batch's standard deviations (the map then takes
        raw inputs, with per-input length scales l * sd_k: the same kernel as
        standardised inputs, since it is shift-invariant). alpha=None chooses
        lambda by GCV from the statistics; the Bayesian variances are fitted
        by the evidence when not given. The statistics stay with the
        estimator (not in pickles or model files; ``statistics_`` is their
        picklable copy). probe_y: what a fit on the first batch takes as y
        (the class labels of a classifier; default Y)."""
        n, d = X.shape
        if getattr(self, "_stats", None) is None:
            learn = _common.is_learn(self.length_scale)
            scale = _common.resolve_scale(self, X, d, allow_auto=True, allow_learn=learn)
            if self.standardize or scale[3]:
                if n < 2:
                    raise ValueError("partial_fit: the first batch needs at least 2 rows to "
                                     "fix the scaling")
                sd = np.ones(d)
                if self.standardize:  # weighted, as the fit standardises
                    w = np.ones(n) if sample_weight is None else sample_weight
                    mean = np.average(X, axis=0, weights=w)
                    sd = np.sqrt(np.average((X - mean) ** 2, axis=0, weights=w))
                    sd = np.where(sd > 0, sd, 1.0)
                if scale[3]:  # "auto" or "learn": as a fit on the first batch chooses it
                    probe = type(self)(**self.get_params())
                    if "class_weight" in probe.get_params():  # already in sample_weight
                        probe.set_params(class_weight=None)
                    if probe_y is None:
                        probe_y = Y[:, 0] if Y.shape[1] == 1 else Y
                    probe.fit(X, probe_y, sample_weight=sample_weight)
                    ls = np.broadcast_to(np.asarray(probe.length_scale_, dtype=np.float64), (d,))
                elif self.gamma is not None:
                    raise ValueError("partial_fit with standardize=True takes length_scale, "
                                     "not gamma")
                else:
                    ls = (np.broadcast_to(scale[0], (d,)) if scale[1] is None
                          else np.asarray(scale[1], dtype=np.float64))
                scale = (0.0, np.ascontiguousarray(ls * sd, dtype=np.float64), 0.0, False)
            seed = _common.resolve_seed(self.random_state)
            fp, keep = _common.features_params(self, seed, scale,
                                               _common.resolve_threads(self.n_jobs))
            feats = _common.create_features(fp, keep, d)
            del keep
            st = ffi.new("rfx_stats **")
            check(lib.rfx_stats_create(lib.rfx_features_output_dim(feats), Y.shape[1], st))
            self._feats, self._stats = feats, ffi.gc(st[0], lib.rfx_stats_free)
            self._stats_d, self._stats_ny = d, Y.shape[1]
            self.seed_ = seed
            self._input_box = input_box(X, sample_weight)
        elif d != self._stats_d or Y.shape[1] != self._stats_ny:
            raise ValueError("partial_fit: X has %d features and y %d targets; the earlier "
                             "batches had %d and %d" % (d, Y.shape[1], self._stats_d,
                                                        self._stats_ny))
        else:
            lo, hi = self._input_box
            blo, bhi = input_box(X, sample_weight)
            self._input_box = (np.minimum(lo, blo), np.maximum(hi, bhi))
        X, Y = as_rows(X), as_rows(Y)
        # into a copy: an error leaves the earlier statistics as they were
        st = ffi.new("rfx_stats **")
        check(lib.rfx_stats_copy(self._stats, st))
        stats = ffi.gc(st[0], lib.rfx_stats_free)
        with serial_blas:
            check(lib.rfx_stats_add_weighted(stats, self._feats, cmat(X), cmat(Y),
                                             _weights_ptr(sample_weight)))
        self._stats = stats
        self._solve_stats()
        return self

    def _solve_stats(self):
        out = ffi.new("rfx_model **")
        threads = _common.resolve_threads(self.n_jobs)
        if self._method == lib.RFX_METHOD_BAYES:
            p = ffi.new("rfx_bayes_params *", lib.rfx_bayes_params_default())
            p.noise_var = self._variances()[0]
            p.prior_var = self._variances()[1]
            p.fit_intercept = int(bool(self.fit_intercept))
            p.n_threads = threads
            with serial_blas:
                check(lib.rfx_bayes_solve(self._feats, self._stats, p, out))
        else:
            p = ffi.new("rfx_ridge_params *", lib.rfx_ridge_params_default())
            lam = _alpha_value(self.alpha)
            if lam < 0:
                p.select = lib.RFX_SELECT_GCV
            else:
                setattr(p, "lambda", lam)
            p.fit_intercept = int(bool(self.fit_intercept))
            p.solver = lib.RFX_SOLVER_PRIMAL
            p.n_threads = threads
            with serial_blas:
                check(lib.rfx_ridge_solve(self._feats, self._stats, p, out))
        self._model = ffi.gc(out[0], lib.rfx_model_free)
        self._read_info()

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
