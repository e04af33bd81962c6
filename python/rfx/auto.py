# SPDX-License-Identifier: BSD-3-Clause
"""The automatic surrogate over the rfx C library (include/rfx/auto.h):
:class:`SurrogateRegressor` compares the regression methods (ridge, bayes,
srfe, harfe, pce, projected), each on the target as it is and under the log
and Box-Cox transforms, by k-fold cross-validation (rfx_auto_fit), and
refits the best on all rows. Its model is an ordinary rfx model that
carries its target transform: the model file predicts y back in its own
units through any reader (``rfx predict``, ``rfx.load_model``, the C API)."""
import numbers
import time

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.validation import check_is_fitted

from . import _common
from ._lib import (as_rows, call_with_progress, check, check_verbose, cmat, ffi, lib, mat,
                   mat_none, serial_blas)
from ._model import _ModelFile, _weights_ptr, input_box, sample_weights
from ._sklearn_compat import validate_data

# the methods rfx_auto_fit compares, by their C names
_METHODS = ("ridge", "bayes", "srfe", "harfe", "pce", "projected")
_TRANSFORMS = ("none", "log", "boxcox")
# rfx_auto_outcome; "direct": a single (method, transform) fitted without folds
_OUTCOMES = {
    lib.RFX_AUTO_RAN_ALL: "ran_all",
    lib.RFX_AUTO_RACED: "raced",
    lib.RFX_AUTO_BUDGET: "budget",
    lib.RFX_AUTO_FAILED: "failed",
    lib.RFX_AUTO_ALONE: "alone",
    lib.RFX_AUTO_NOT_NEEDED: "not_needed",
}


def _method_enum(name, what="method"):
    """rfx_method of a name (the C message lists the names)."""
    return int(_common._name_to_enum(name, what, lib.rfx_method_from_name, "rfx_method"))


def _transform_enum(name):
    return int(_common._name_to_enum(name, "target_transform",
                                     lib.rfx_target_transform_from_name, "rfx_target_transform"))


def _name(c_string):
    return ffi.string(c_string).decode()


def _transform_mask(transform):
    """(mask, fixed): the RFX_AUTO_TRANSFORM mask of "auto" (0: the
    library's choice), a name or a list of names; fixed is the one
    transform when a single name was given, else None."""
    if isinstance(transform, str):
        if transform == "auto":
            return 0, None
        t = _transform_enum(transform)
        return 1 << t, t
    try:
        names = list(transform)
    except TypeError:
        raise TypeError("target_transform must be 'auto', 'none', 'log', 'boxcox' or a list "
                        "of them, got %r" % (transform,)) from None
    if not names:
        raise ValueError("target_transform: an empty list")
    mask = 0
    for t in names:
        mask |= 1 << _transform_enum(t)
    return mask, None


def _fold_ids(cv, X, y):
    """(k, folds): the number of folds and row i's fold, or None for the
    library's seeded folds, from cv: an int, an array of fold ids 0..k-1
    per row, or a scikit-learn splitter whose test sets split the rows."""
    n = X.shape[0]
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        return int(cv), None
    if hasattr(cv, "split"):
        folds = np.full(n, -1, dtype=np.int64)
        for f, (_, test) in enumerate(cv.split(X, y)):
            if np.any(folds[test] >= 0):
                raise ValueError("cv: the test sets of %r overlap; they must split the rows"
                                 % (cv,))
            folds[test] = f
        if np.any(folds < 0):
            raise ValueError("cv: the test sets of %r leave rows out; they must split the rows"
                             % (cv,))
    else:
        folds = np.asarray(cv)
        if folds.shape != (n,):
            raise ValueError("cv: expected an int, a splitter or %d fold ids (one per row), got "
                             "shape %s" % (n, folds.shape))
        if folds.dtype.kind not in "iu" and not (
                folds.dtype.kind == "f" and np.all(folds == np.round(folds))):
            raise ValueError("cv: fold ids must be integers 0 .. k-1")
        folds = folds.astype(np.int64)
        if n and folds.min() < 0:
            raise ValueError("cv: fold ids must be integers 0 .. k-1, got %d" % folds.min())
    k = int(folds.max()) + 1 if n else 0
    return k, np.ascontiguousarray(folds, dtype=np.uintp)


class SurrogateRegressor(RegressorMixin, _ModelFile):
    """The automatic surrogate: regression methods and target transforms
    compared by k-fold cross-validation, the best refitted on all rows, by
    the rfx C library (rfx_auto_fit, include/rfx/auto.h; ``rfx fit
    --method auto``).

    Every candidate (method, transform) is fitted with the method's own
    defaults (its automatic scales, penalties and degrees; as ``rfx fit
    --method M``) to z = T(y) on the training part of each fold, predicts
    the held-out rows back in the units of y, and is scored by the relative
    cross-validated error ``sqrt(sum (f_i - y_i)^2 / sum (y_i - mean y)^2)``.
    After each round of folds, a candidate more than ``race_factor`` times
    worse than the best stops (racing). Transforms: the log and Box-Cox
    (its lambda by maximum likelihood, on the training rows of each fold and
    on all rows for the final model) take y > 0 only, and are no candidates
    when some y <= 0. The final srfe or harfe fit starts from the weight
    scale s and q its fit on the first fold chose (the full map at s and
    1.5 s, the better by its selection score) instead of searching again.
    One target.

    Parameters
    ----------
    method : {"auto", "ridge", "bayes", "srfe", "harfe", "pce", "projected"}, default="auto"
        "auto" compares ``candidates``; a method name compares that method's
        transforms, or with one fixed ``target_transform`` fits it directly
        (no folds).
    candidates : list of method names or None, default=None
        method="auto": the methods to compare; None = bayes, srfe, harfe
        and pce, and with 9 or more inputs projected on the target as it
        is (ridge is bayes' point estimate; projected, a swarm of kernel
        PCA fits onto at most 8 components, is tried only where it can
        reduce the inputs, and under the transforms only when asked for).
    target_transform : {"auto", "none", "log", "boxcox"} or list of them, default="auto"
        The target transforms to compare (``rfx fit --transform``). "auto": none, log, and Box-Cox
        when its lambda on all targets is at least 0.25 from 0 (the log) and
        from 1 (none); a list: those (Box-Cox always); one name: that one.
    n_folds : int, default=5
        k, the folds (rows in a random order of ``random_state`` and of
        their contents, a hash of each row's values and target: the same
        rows in another order make the same folds; row perm[i] in fold i
        mod k); at least 2 n_folds rows are needed.
    race_factor : float > 1, default=1.5
        A candidate whose score over the folds done exceeds race_factor
        times the best one's stops; ``float("inf")`` runs every candidate on
        every fold.
    budget : float > 0 or None, default=None
        Seconds of wall time for the whole fit: no fold starts that would
        pass it with the final fit. The choice then depends on the
        machine's speed; without a budget it depends only on the data, the
        parameters and the seed.
    cv : int, array-like of shape (n_samples,), splitter or None, default=None
        The folds, overriding n_folds: an int k, each row's fold id in
        0..k-1, or a scikit-learn splitter (``KFold``, ``GroupKFold``, ...)
        whose test sets split the rows.
    random_state : int, RandomState instance or None, default=0
        An int is the C library's seed (``rfx fit --seed``): the folds and
        every candidate's random features.
    n_jobs : int or None, default=None
        Threads of each fit, as scikit-learn reads n_jobs. Results never
        depend on it.
    verbose : int, default=0
        1 prints the progress over the planned fits to stderr; Ctrl-C stops
        the fit.

    Attributes
    ----------
    cv_results_ : dict of lists
        One entry per candidate, in the order they were fitted: "method",
        "transform", "lambda" (Box-Cox on all rows, else 0), "folds" (run),
        "cv_error" (over those folds; NaN with none), "seconds",
        "outcome" ("ran_all", "raced", "budget", "failed", "alone": chosen
        as the last left by racing, its other folds not run; "direct": a
        fixed method and transform, fitted without folds) and "status"
        (the C library's name of a failure's status, else "").
    best_index_ : int
        The chosen candidate's index in cv_results_.
    best_method_, best_transform_ : str
    transform_lambda_ : float
        The Box-Cox lambda of the final model (0 for none and log).
    n_folds_ : int
        The folds used (0 for a direct fit).
    compared_folds_ : int
        The folds the choice compared (those every remaining candidate ran).
    seconds_cv_, seconds_final_ : float
        Wall time of the cross-validation and of the final fit.
    seed_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When fitted on a DataFrame with string column names.

    The fitted model is an rfx model of the chosen method with its target
    transform: :meth:`save` writes the model file, which ``rfx.load_model``
    reads as that method's estimator (predicting y, without predictive
    standard deviations), and pickling stores that file's bytes.

    Examples
    --------
    >>> import numpy as np, rfx
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-1, 1, size=(90, 2))
    >>> y = np.exp(np.sin(np.pi * X[:, 0]) + X[:, 1] ** 2 / 2)
    >>> reg = rfx.SurrogateRegressor(candidates=["ridge", "pce"], cv=3).fit(X, y)
    >>> reg.best_transform_  # y is a product of functions of one input each
    'log'
    """

    def __init__(self, method="auto", *, candidates=None, target_transform="auto",
                 n_folds=5, race_factor=1.5, budget=None, cv=None, random_state=0,
                 n_jobs=None, verbose=0):
        self.method = method
        self.candidates = candidates
        self.target_transform = target_transform
        self.n_folds = n_folds
        self.race_factor = race_factor
        self.budget = budget
        self.cv = cv
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _params(self, X, y):
        """(rfx_auto_params, what it points to, the fixed method or None,
        the fixed transform or None)."""
        p = ffi.new("rfx_auto_params *", lib.rfx_auto_params_default())
        keep = []
        if not isinstance(self.method, str):
            raise TypeError("method must be 'auto' or a method name, got %r" % (self.method,))
        single = None
        if self.method == "auto":
            if self.candidates is not None:
                names = [self.candidates] if isinstance(self.candidates, str) \
                    else list(self.candidates)
                if not names:
                    raise ValueError("candidates: an empty list")
                for name in names:
                    p.methods |= 1 << _method_enum(name, "candidates")
        else:
            if self.candidates is not None:
                raise ValueError("candidates: only with method='auto', got method=%r"
                                 % (self.method,))
            single = _method_enum(self.method)
            p.methods = 1 << single
        p.transforms, fixed = _transform_mask(self.target_transform)
        k = _common.check_count(self.n_folds, "n_folds", 2)
        folds = None
        if self.cv is not None:
            k, folds = _fold_ids(self.cv, X, y)
        p.n_folds = k
        if folds is not None:
            keep.append(folds)
            p.folds = ffi.cast("const size_t *", folds.ctypes.data)
        if not isinstance(self.race_factor, numbers.Real) or isinstance(self.race_factor, bool):
            raise TypeError("race_factor must be a number > 1, got %r" % (self.race_factor,))
        p.race_factor = float(self.race_factor)
        if self.budget is not None:
            if not isinstance(self.budget, numbers.Real) or isinstance(self.budget, bool):
                raise TypeError("budget must be a number of seconds > 0 or None, got %r"
                                % (self.budget,))
            if not self.budget > 0:
                raise ValueError("budget must be > 0 seconds or None, got %r" % (self.budget,))
            p.budget = float(self.budget)
        p.seed = _common.resolve_seed(self.random_state)
        p.n_threads = _common.resolve_threads(self.n_jobs)
        check(lib.rfx_auto_params_check(p))  # the C message names the field
        return p, keep, single, (fixed if single is not None else None)

    @_common.keeps_state_on_error
    def fit(self, X, y, sample_weight=None):
        """Fit on X (n_samples, n_features) and y (n_samples,).

        sample_weight (n_samples,), finite and >= 0: every candidate is
        fitted with the weights of its rows (each method's own meaning of
        them: see their fit), Box-Cox's lambda is the weighted maximum-
        likelihood one, and the score is the weighted relative error
        ``sqrt(sum w (f - y)^2 / sum w (y - ybar_w)^2)`` over the held-out
        rows. A row of weight 0 is a row left out (the folds count the rows
        of positive weight; given ``cv`` folds lose those rows too); equal
        weights are no weights, bit for bit, and scaling them all changes
        nothing (rfx/auto.h, "Row weights"). On any error (or a cancelled
        fit) the estimator is left as it was."""
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        sw = sample_weights(sample_weight, X)
        if X.shape[0] < 2:  # as the other estimators say it (the library: rows per fold)
            raise ValueError("n_samples=%d: at least 2 samples are needed to fit" % X.shape[0])
        verbose = check_verbose(self.verbose)
        p, keep, method, transform = self._params(X, y)
        p.sample_weight = _weights_ptr(sw)
        X = as_rows(X)
        y = np.ascontiguousarray(y, dtype=np.float64)
        if transform is not None:  # one method, one transform: no folds
            self._fit_direct(p, X, y, method, transform, verbose, sw)
        else:
            self._fit_auto(p, X, y, verbose)
        del keep
        self.seed_ = int(p.seed)
        self.n_features_in_ = X.shape[1]
        self._input_box = input_box(X, sw)  # the Sobol functions' default
        info = ffi.new("rfx_model_info *")
        check(lib.rfx_model_get_info(self._model, info))
        self.best_method_ = _name(lib.rfx_method_name(info.method))
        self.best_transform_ = _name(lib.rfx_target_transform_name(info.target_transform))
        self.transform_lambda_ = float(info.target_lambda)
        return self

    def _fit_auto(self, p, X, y, verbose):
        out = ffi.new("rfx_model **")
        rep = ffi.new("rfx_auto_report *")
        call_with_progress(lib.rfx_auto_fit, p, cmat(X),
                           ffi.cast("const double *", y.ctypes.data), out, rep,
                           label=type(self).__name__, verbose=verbose, out=out)
        self._model = ffi.gc(out[0], lib.rfx_model_free)
        cands = [rep.candidates[j] for j in range(rep.n_candidates)]
        self.cv_results_ = {
            "method": [_name(lib.rfx_method_name(c.method)) for c in cands],
            "transform": [_name(lib.rfx_target_transform_name(c.transform)) for c in cands],
            "lambda": [float(getattr(c, "lambda")) for c in cands],
            "folds": [int(c.folds) for c in cands],
            "cv_error": [float(c.cv_error) for c in cands],
            "seconds": [float(c.seconds) for c in cands],
            "outcome": [_OUTCOMES.get(int(c.outcome), str(int(c.outcome))) for c in cands],
            "status": [_name(lib.rfx_strerror(c.status)) if c.status else "" for c in cands],
        }
        self.best_index_ = int(rep.chosen)
        self.n_folds_ = int(p.n_folds)
        self.compared_folds_ = int(rep.compared_folds)
        self.seconds_cv_ = float(rep.seconds_cv)
        self.seconds_final_ = float(rep.seconds_final)

    def _fit_direct(self, p, X, y, method, transform, verbose, sw=None):
        """method fitted to z = T(y) on all rows (those of positive weight)
        as rfx_auto_fit fits its candidates (src/auto/auto.c, fit_method),
        then T attached."""
        t0 = time.perf_counter()
        if sw is not None:  # as rfx_auto_fit: the rows of positive weight; equal = none
            keep = sw > 0
            X, y, sw = as_rows(X[keep]), np.ascontiguousarray(y[keep]), sw[keep]
            if np.all(sw == sw[0]):
                sw = None
        n = X.shape[0]
        lam = ffi.new("double *", 0.0)
        yp = ffi.cast("const double *", y.ctypes.data)
        if transform == lib.RFX_TARGET_BOXCOX:
            check(lib.rfx_target_boxcox_lambda_weighted(yp, _weights_ptr(sw), n, lam))
        z = np.empty(n)
        check(lib.rfx_target_forward(transform, lam[0], yp, n,
                                     ffi.cast("double *", z.ctypes.data)))
        model = _fit_method(method, X, z, int(p.seed), int(p.n_threads),
                            type(self).__name__, verbose, sw)
        check(lib.rfx_model_set_target_transform(model, transform, lam[0]))
        self._model = model
        seconds = time.perf_counter() - t0
        self.cv_results_ = {
            "method": [_name(lib.rfx_method_name(method))],
            "transform": [_name(lib.rfx_target_transform_name(transform))],
            "lambda": [float(lam[0])],
            "folds": [0],
            "cv_error": [float("nan")],
            "seconds": [seconds],
            "outcome": ["direct"],
            "status": [""],
        }
        self.best_index_ = 0
        self.n_folds_ = 0
        self.compared_folds_ = 0
        self.seconds_cv_ = 0.0
        self.seconds_final_ = seconds

    def predict(self, X):
        """Predictions of y (the transform undone), of shape (n_samples,)."""
        check_is_fitted(self)
        X = as_rows(validate_data(self, X, dtype=np.float64, reset=False))
        Y = np.empty((X.shape[0], 1))
        with serial_blas:
            check(lib.rfx_model_predict(self._model, cmat(X), mat(Y), mat_none()))
        return Y[:, 0]


def _fit_method(method, X, z, seed, threads, label, verbose, sw=None):
    """An rfx model of method fitted to X (n x d) and z (n) with the
    method's defaults and the row weights sw (None or positive), as
    rfx_auto_fit fits each candidate."""
    n = X.shape[0]
    out = ffi.new("rfx_model **")
    Z = z.reshape(n, 1)
    wp = _weights_ptr(sw)
    if method in (lib.RFX_METHOD_RIDGE, lib.RFX_METHOD_BAYES):
        fp = ffi.new("rfx_fit_params *", lib.rfx_fit_params_default())
        fp.method = method
        fp.features.seed = seed
        fp.features.n_threads = threads
        fp.sample_weight = wp
        call_with_progress(lib.rfx_model_fit, fp, cmat(X), cmat(Z), out, ffi.NULL,
                           label=label, verbose=verbose, out=out)
    elif method in (lib.RFX_METHOD_SRFE, lib.RFX_METHOD_HARFE):
        sp = ffi.new("rfx_srfe_params *", lib.rfx_srfe_params_default())
        sp.features.seed = seed
        sp.features.n_threads = threads
        if method == lib.RFX_METHOD_HARFE:
            sp.method = lib.RFX_L1_METHOD_HTP
        sp.sample_weight = wp
        call_with_progress(lib.rfx_srfe_fit, sp, cmat(X), cmat(Z), out, ffi.NULL,
                           label=label, verbose=verbose, out=out)
    elif method == lib.RFX_METHOD_PCE:
        # as rfx fit --method pce: LARS, the automatic basis, degrees from
        # 1, the marginals from the rows (rfx_pce_params.marginals_from_data)
        pp = ffi.new("rfx_pce_params *", lib.rfx_pce_params_default())
        pp.marginals_from_data = 1
        pp.method = lib.RFX_PCE_METHOD_LARS
        pp.auto_basis = 1
        pp.degree_min = 1
        pp.n_threads = threads
        pp.sample_weight = wp
        pce = ffi.new("rfx_pce **")
        with serial_blas:
            check(lib.rfx_pce_fit(pp, cmat(X), ffi.cast("const double *", z.ctypes.data), pce))
        try:
            check(lib.rfx_model_from_pce(pce[0], out))
        finally:
            lib.rfx_pce_free(pce[0])
    elif method == lib.RFX_METHOD_PROJECTED:
        pp = ffi.new("rfx_projected_params *", lib.rfx_projected_params_default())
        pp.seed = seed
        pp.n_threads = threads
        pp.sample_weight = wp
        call_with_progress(lib.rfx_projected_fit, pp, cmat(X), cmat(Z), out, ffi.NULL,
                           label=label, verbose=verbose, out=out)
    else:  # pragma: no cover - rfx_auto_params_check refused it
        raise ValueError("method %d is not a regression surrogate" % method)
    return ffi.gc(out[0], lib.rfx_model_free)
