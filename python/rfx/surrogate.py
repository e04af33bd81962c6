# SPDX-License-Identifier: BSD-3-Clause
"""Surrogate models and sensitivity analysis over the rfx C library:

- :class:`SparseRFERegressor`: sparse random feature expansions
  (rfx_srfe_fit, include/rfx/srfe.h), an ordinary rfx model;
- :class:`PCERegressor`: polynomial chaos expansions (include/rfx/pce.h),
  with their Sobol indices and moments from the coefficients;
- :func:`sobol_indices`: Monte Carlo Sobol indices of an rfx model or of any
  Python callable (include/rfx/surrogate.h);
- :func:`exact_sobol_indices`: closed-form indices of sine and cosine
  feature models.

Their input distribution is a list of marginals, a SALib problem dict
(:mod:`rfx.sensitivity`), or for a fitted model nothing: its training box.
"""
import dataclasses
import numbers

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.validation import check_is_fitted

from . import _common
from ._lib import (as_rows, call_with_progress, check, check_verbose, cmat, ffi, lib, mat,
                   mat_none, serial_blas)
from ._model import _ModelFile, _RFXModel, _weights_ptr, input_box, sample_weights
from ._sklearn_compat import validate_data
from .sensitivity import IndicesTable, box_marginals, default_names, marginals_from_problem

_MARGINAL_KINDS = {"uniform": 0, "normal": 1, "lognormal": 2}
_MARGINAL_NAMES = {v: k for k, v in _MARGINAL_KINDS.items()}


def _marginals(marginals, d=None):
    """A cdata rfx_marginal[d] from a list of ("uniform", a, b) /
    ("normal", mu, sigma) / ("lognormal", mu, sigma) tuples."""
    try:
        items = [tuple(m) for m in marginals]
    except TypeError:
        raise TypeError("marginals must be a list of (kind, a, b) tuples, got %r"
                        % (marginals,)) from None
    if d is not None and len(items) != d:
        raise ValueError("marginals: %d given for %d inputs" % (len(items), d))
    if not items:
        raise ValueError("marginals: at least one is needed")
    arr = ffi.new("rfx_marginal[]", len(items))
    for i, m in enumerate(items):
        if len(m) != 3 or not isinstance(m[0], str) or m[0].lower() not in _MARGINAL_KINDS:
            raise ValueError("marginals[%d]: expected (kind, a, b) with kind one of %s, got %r"
                             % (i, ", ".join(_MARGINAL_KINDS), m))
        arr[i].kind = _MARGINAL_KINDS[m[0].lower()]
        arr[i].a = float(m[1])
        arr[i].b = float(m[2])
    check(lib.rfx_marginals_check(arr, len(items)))
    return arr


def _opt_int(v, name, minimum):
    if v is None:
        return 0
    if not isinstance(v, numbers.Integral) or isinstance(v, bool):
        raise TypeError("%s must be an int or None, got %r" % (name, v))
    if v < minimum:
        raise ValueError("%s must be >= %d or None, got %d" % (name, minimum, v))
    return int(v)


def _opt_real(v, name):
    """None -> 0 (the C library chooses); a number > 0 -> itself."""
    if v is None:
        return 0.0
    if not isinstance(v, numbers.Real) or isinstance(v, bool):
        raise TypeError("%s must be a number > 0 or None, got %r" % (name, v))
    if not v > 0 or not np.isfinite(v):
        raise ValueError("%s must be > 0 and finite, or None, got %r" % (name, v))
    return float(v)


# ---------------------------------------------------------------------------
# Sparse random feature expansions
# ---------------------------------------------------------------------------

class SparseRFERegressor(RegressorMixin, _RFXModel):
    """Sparse random feature expansion (SRFE; Hashemi et al. 2021, HARFE:
    Saha et al. 2022), fitted by the rfx C library (rfx_srfe_fit).

    f(x) = sum_j c_j phi(w_j . x + b_j) + c_0 with q-sparse random
    frequencies w_j ~ N(0, s^2) (each feature a function of q inputs),
    b_j ~ U(0, 2 pi) and a sparse c from an l1 program on the unit-norm
    feature columns. What is not given is chosen by generalised
    cross-validation along one lasso path per candidate (GCV with the lasso's
    degrees of freedom, the nonzeros), or by k-fold cross-validation (rows
    i mod k): the weight scale s from {0.5, 1, 2}, widened past an end of
    the grid that scores best (by factors of 2, up to 128 or down to 1/128),
    screened on N / 4 features (at most 3000), then fitted on all N at the
    best s and 1.5 s,
    the lasso penalty along its path down to 1e-3 of its largest
    useful value. The defaults are those of ``rfx fit --method srfe``, so
    the same data and integer ``random_state`` give the same bits. One target.

    Parameters
    ----------
    n_components : int or None, default=None
        N, the number of random features; None (or 0) = 30 n_samples,
        within [1000, 30000].
    sparsity : int or None, default=None
        q, the inputs each feature depends on (an order-q expansion); at
        most n_features_in_ are used. None chooses q from {1, 2, 3} by the
        selection score (see ``selection``).
    activation : {"sin", "cos", "tanh", "sigmoid", "relu", "sign"}, default="sin"
    form : {"cos_bias", "phase_free"}, default="cos_bias"
        The features phi(w.x + b) with a random phase b (the default), or
        phi(w.x) with none ("phase_free", for the activations other than
        cos: sin features are then odd, and so is the expansion about c_0
        on inputs used as they are).
    weight_scale : float > 0 or None, default=None
        s; None chooses it (see ``selection``).
    method : {"lasso", "bpdn", "htp"}, default="lasso"
        The l1 program: the lasso, basis pursuit denoising with training RMS
        residual ``eta`` (SRFE-S), or hard thresholding pursuit with
        ``n_nonzero`` terms (HARFE).
    alpha : float > 0 or None, default=None
        The lasso penalty (scikit-learn's Lasso alpha); None chooses it (see
        ``selection``).
    eta : float > 0 or None, default=None
        method="bpdn": the training RMS residual bound; None = as lasso.
    n_nonzero : int or None, default=None
        method="htp": the sparsity s; None = min(n_samples / 2, N) / 2.
    standardize : bool, default=True
    selection : {"gcv", "kfold"}, default="gcv"
        How the scale and the penalty are chosen: GCV (one path per
        candidate) or k-fold cross-validation (k + 1 paths).
    n_folds : int, default=5
        selection="kfold": the folds (at most n_samples are used).
    random_state : int, RandomState instance or None, default=None
        An int is the C library's seed (``rfx fit --seed``).
    n_jobs : int or None, default=None
        Threads, as scikit-learn reads n_jobs: None is 1 (or the n_jobs
        of an enclosing ``joblib.parallel_config`` context), -1 all cores,
        -2 all but one. Results never depend on it.
    verbose : int, default=0
        1 prints the fit's progress (the candidate scales, q and N) to
        stderr, 2 every report; Ctrl-C stops the fit at the next report
        (see :func:`rfx.progress_callback`).

    Attributes
    ----------
    n_features_in_, seed_, coef_, intercept_
    n_components_ : int
        N used.
    weight_scale_, alpha_, eta_, cv_mse_ : float
        Chosen or given (alpha_ NaN for htp; eta_ the training RMS residual;
        cv_mse_ the selection score, GCV or the k-fold MSE).
    n_nonzero_ : int
        Nonzero coefficients.
    sparsity_ : int
        q used (chosen or given).
    """

    def __init__(self, n_components=None, *, sparsity=None, activation="sin", form="cos_bias",
                 weight_scale=None, method="lasso", alpha=None, eta=None, n_nonzero=None,
                 standardize=True, selection="gcv", n_folds=5, random_state=None, n_jobs=None,
                 verbose=0):
        self.n_components = n_components
        self.sparsity = sparsity
        self.activation = activation
        self.form = form
        self.weight_scale = weight_scale
        self.method = method
        self.alpha = alpha
        self.eta = eta
        self.n_nonzero = n_nonzero
        self.standardize = standardize
        self.selection = selection
        self.n_folds = n_folds
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _params(self, n, d):
        p = ffi.new("rfx_srfe_params *", lib.rfx_srfe_params_default())
        p.features.n_features = _opt_int(self.n_components, "n_components", 0)
        q = _opt_int(self.sparsity, "sparsity", 1)
        p.features.sparsity = min(q, d) if q else 0
        p.features.activation = _common.activation_enum(self.activation)
        p.features.form = _common.form_enum(self.form)
        p.features.weight_scale = _opt_real(self.weight_scale, "weight_scale")
        seed = _common.resolve_seed(self.random_state)
        p.features.seed = seed
        p.features.n_threads = _common.resolve_threads(self.n_jobs)
        if not isinstance(self.method, str):
            raise TypeError("method must be 'lasso', 'bpdn' or 'htp', got %r" % (self.method,))
        m = ffi.new("rfx_l1_method *")
        check(lib.rfx_l1_method_from_name(self.method.encode(), m))
        p.method = m[0]
        setattr(p, "lambda", _opt_real(self.alpha, "alpha"))
        p.eta = _opt_real(self.eta, "eta")
        p.sparsity = _opt_int(self.n_nonzero, "n_nonzero", 1)
        p.standardize = int(bool(self.standardize))
        if self.selection not in ("gcv", "kfold"):
            raise ValueError("selection must be 'gcv' or 'kfold', got %r" % (self.selection,))
        p.select = lib.RFX_SELECT_GCV if self.selection == "gcv" else lib.RFX_SELECT_KFOLD
        folds = _opt_int(self.n_folds, "n_folds", 2) or 5
        p.n_folds = min(folds, n)
        return p, seed

    @_common.keeps_state_on_error
    def fit(self, X, y, sample_weight=None):
        """Fit on X (n_samples, n_features) and y (n_samples,).

        sample_weight (n_samples,), finite and >= 0, weights the rows as
        scikit-learn's Lasso does: the lasso minimises ``sum_i w_i r_i^2 /
        (2 sum w) + alpha |c|_1``, the standardisation uses weighted
        moments, the feature columns are scaled to unit weighted norm, and
        the selection scores are weighted (GCV of the weighted residuals,
        with n the rows of positive weight; k-fold: the weighted held-out
        error, the folds counting the rows of positive weight). Weights are
        relative: scaling them all changes nothing, and equal weights are
        no weights, bit for bit; a row of weight 0 is a row left out. An
        integer weight k is the row repeated k times up to the penalty: with
        given ``alpha`` the weighted fit is the fit of the repeated rows
        with ``alpha * sqrt(n / sum w)`` (rfx/srfe.h, "Row weights"). On
        any error (or a cancelled fit) the estimator is left as it was."""
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        sw = sample_weights(sample_weight, X)
        n = X.shape[0] if sw is None else int(np.count_nonzero(sw))
        if n < 2:
            raise ValueError("n_samples=%d: at least 2 samples are needed to fit" % n)
        verbose = check_verbose(self.verbose)
        p, seed = self._params(n, X.shape[1])
        p.sample_weight = _weights_ptr(sw)
        X = as_rows(X)
        Y = np.ascontiguousarray(y, dtype=np.float64).reshape(-1, 1)
        out = ffi.new("rfx_model **")
        rep = ffi.new("rfx_srfe_report *")
        call_with_progress(lib.rfx_srfe_fit, p, cmat(X), cmat(Y), out, rep,
                           label=type(self).__name__, verbose=verbose, out=out)
        self._model = ffi.gc(out[0], lib.rfx_model_free)
        self.seed_ = seed
        self._input_box = input_box(X, sw)
        self.n_components_ = int(rep.n_features)
        self.weight_scale_ = float(rep.weight_scale)
        self.alpha_ = float(getattr(rep, "lambda"))
        self.eta_ = float(rep.eta)
        self.cv_mse_ = float(rep.cv_mse)
        self.n_nonzero_ = int(rep.n_nonzero)
        self.sparsity_ = int(rep.sparsity)
        self._read_info()
        return self

    @classmethod
    def _from_model_info(cls, model, info, params):
        return cls(n_components=params["n_components"], sparsity=params["sparsity"],
                   activation=params["activation"], form=params["form"],
                   weight_scale=params["weight_scale"],
                   method="htp" if info.method == lib.RFX_METHOD_HARFE else "lasso",
                   standardize=bool(info.standardized), random_state=params["random_state"],
                   n_jobs=params["n_jobs"])

    def predict(self, X):
        """Predictions, of shape (n_samples,)."""
        Yhat, _ = self._predict_raw(X)
        return Yhat[:, 0]


# ---------------------------------------------------------------------------
# Polynomial chaos expansions
# ---------------------------------------------------------------------------

_PCE_METHODS = {"lsq": 0, "lars": 1}


class PCERegressor(RegressorMixin, _ModelFile):
    """Polynomial chaos expansion (Legendre / Hermite polynomials orthonormal
    under independent uniform / normal inputs), fitted by the rfx C library
    (rfx_pce_fit). Its mean, variance and Sobol indices follow from the
    coefficients (Sudret 2008): see :meth:`moments` and
    :meth:`sobol_indices`. One target.

    Parameters
    ----------
    marginals : list of ("uniform", a, b) / ("normal", mu, sigma) /
        ("lognormal", mu, sigma) (log x ~ N(mu, sigma^2)), or None
        The input distribution, one per column. None (default): uniform on
        each column's training [min, max] (a constant column: [x - 1/2,
        x + 1/2]), unless a normal or lognormal family fitted to a column
        is clearly likelier (by more than log n, and with a skewness of x or
        log x within 3 standard errors of 0) and the fit with those
        families has the lower corrected leave-one-out error; such a fit
        is continued linearly beyond the training range of those inputs
        (rfx_pce_params.marginals_from_data).
    degree : int or "auto", default="auto"
        The maximal total degree p; "auto" (the default) chooses the basis as
        ``rfx fit --method pce`` does (rfx_pce_params.auto_basis): the
        largest degree <= 10 with at most 10000 terms (up to 20 while at
        most 2 n terms, a degree above 10 kept only when it halves the
        corrected leave-one-out error; the sweep up to 10 stops after two
        degrees in a row whose error is above twice the best), and for three
        or more
        inputs also a pairwise basis of higher degree, and when the sweep
        kept a degree below its cap the hyperbolic basis of q-norm 0.5 at
        the largest degree <= 10 within 4 n terms, keeping the fit of
        lower corrected leave-one-out error; then the same choice on the
        inputs whose total Sobol index there is at least a tenth of its
        relative corrected leave-one-out error (``n_screened_`` inputs left
        out), kept when its error is lower.
    degree_min : int or None, default=None
        With an int, every degree in degree_min..degree is fitted and the
        one of least corrected leave-one-out error kept.
    q_norm : float in (0, 1], default=1.0
        Hyperbolic truncation (1 = the total-degree basis).
    method : {"lars", "lsq"}, default="lars"
        Sparse least-angle regression scored by the corrected leave-one-out
        error, or least squares on every candidate (needs n_samples >= the
        number of terms).
    n_jobs : int or None, default=None
        Threads, as scikit-learn reads n_jobs: None is 1 (or the n_jobs
        of an enclosing ``joblib.parallel_config`` context), -1 all cores,
        -2 all but one. Results never depend on it.

    Attributes
    ----------
    n_features_in_ : int
    marginals_ : list of tuples
        The marginals used.
    coef_ : ndarray of shape (n_terms,)
    multi_indices_ : ndarray of shape (n_terms, n_features_in_)
    degree_ : int
    n_candidates_ : int
        The size of the candidate basis at the chosen degree.
    loo_mse_, loo_relative_, loo_corrected_ : float
        Leave-one-out errors of the fit.
    n_screened_ : int
        Inputs the automatic basis left out (all their terms are zero); 0
        otherwise, and for a model loaded from a file.

    The fitted expansion is an rfx model (method "pce"): :meth:`save` writes
    the model file that ``rfx predict``, ``rfx info``, ``rfx sobol`` and
    ``rfx.load_model`` read (``rfx fit --method pce`` writes the same kind),
    and pickling stores that file's bytes.
    """

    def __init__(self, marginals=None, *, degree="auto", degree_min=None, q_norm=1.0,
                 method="lars", n_jobs=None):
        self.marginals = marginals
        self.degree = degree
        self.degree_min = degree_min
        self.q_norm = q_norm
        self.method = method
        self.n_jobs = n_jobs

    def fit(self, X, y, sample_weight=None):
        """Fit on X (n_samples, n_features) and y (n_samples,).

        sample_weight (n_samples,), finite and >= 0: weighted least squares,
        ``min sum_i w_i (y_i - f(x_i))^2``, for the coefficients of every
        candidate model (an integer weight k gives the coefficients of the
        row repeated k times), LARS on the rows scaled by ``sqrt(w_i)``, and
        the leave-one-out errors of the weighted fit with the weighted
        leverages, averaged with the weights: each weighted row is one
        observation, left out whole, so the degree and the LARS model chosen
        by the corrected LOO error are not those of repeated rows (see
        rfx/pce.h, "Row weights"). Weights are relative (scaling them all
        changes nothing; equal weights are no weights, bit for bit); a row
        of weight 0 is a row left out, also for the marginals from the data
        and the training box."""
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        sw = sample_weights(sample_weight, X)
        n, d = X.shape
        if (n if sw is None else np.count_nonzero(sw)) < 2:
            raise ValueError("n_samples=%d: at least 2 samples are needed to fit"
                             % (n if sw is None else np.count_nonzero(sw)))
        p = ffi.new("rfx_pce_params *", lib.rfx_pce_params_default())
        p.sample_weight = _weights_ptr(sw)
        if self.marginals is None:
            p.marginals_from_data = 1  # the library's: the ranges, or families that fit better
        else:
            c_margs = _marginals([tuple(m) for m in self.marginals], d)
            p.marginals = c_margs
        if self.method not in _PCE_METHODS:
            raise ValueError("method must be 'lars' or 'lsq', got %r" % (self.method,))
        if isinstance(self.degree, str):
            if self.degree != "auto":
                raise ValueError("degree must be an int >= 1 or 'auto', got %r" % (self.degree,))
            p.auto_basis = 1
        else:
            p.degree = _opt_int(self.degree, "degree", 1) or 3
        p.degree_min = _opt_int(self.degree_min, "degree_min", 1)
        if not isinstance(self.q_norm, numbers.Real) or isinstance(self.q_norm, bool):
            raise TypeError("q_norm must be a number in (0, 1], got %r" % (self.q_norm,))
        p.q_norm = float(self.q_norm)
        p.method = _PCE_METHODS[self.method]
        p.n_threads = _common.resolve_threads(self.n_jobs)
        X = as_rows(X)
        y = np.ascontiguousarray(y, dtype=np.float64)
        out = ffi.new("rfx_pce **")
        with serial_blas:
            check(lib.rfx_pce_fit(p, cmat(X), ffi.cast("const double *", y.ctypes.data), out))
        pce = ffi.gc(out[0], lib.rfx_pce_free)
        self._model = self._model_of(pce)
        self._input_box = input_box(X, sw)  # the model file's training box
        mg = lib.rfx_pce_marginals(pce)
        self.marginals_ = [(_MARGINAL_NAMES[int(mg[i].kind)], float(mg[i].a), float(mg[i].b))
                           for i in range(d)]
        self.n_features_in_ = d
        self._read_report()
        return self

    @staticmethod
    def _model_of(pce):
        """An rfx model (rfx_model_from_pce: a copy) of an expansion."""
        out = ffi.new("rfx_model **")
        check(lib.rfx_model_from_pce(pce, out))
        return ffi.gc(out[0], lib.rfx_model_free)

    @property
    def _pce(self):
        # the expansion inside the model, alive as long as self._model
        return lib.rfx_model_pce(self._model)

    def _read_report(self):
        info = ffi.new("rfx_pce_info *")
        check(lib.rfx_pce_get_info(self._pce, info))
        self.degree_ = int(info.degree)
        self.n_candidates_ = int(info.n_candidates)
        self.loo_mse_ = float(info.loo_mse)
        self.loo_relative_ = float(info.loo_relative)
        self.loo_corrected_ = float(info.loo_corrected)
        self.n_screened_ = int(info.n_screened)
        return info

    @classmethod
    def _from_model(cls, model, n_jobs=None):
        """A fitted estimator around a PCE rfx model (from a file): the
        parameters are those the file records (degree = the fitted degree)."""
        pce = lib.rfx_model_pce(model)
        info = ffi.new("rfx_pce_info *")
        check(lib.rfx_pce_get_info(pce, info))
        d = int(info.dim)
        mg = lib.rfx_pce_marginals(pce)
        margs = [(_MARGINAL_NAMES[int(mg[i].kind)], float(mg[i].a), float(mg[i].b))
                 for i in range(d)]
        est = cls(margs, degree=max(int(info.degree), 1),
                  method="lars" if info.method == _PCE_METHODS["lars"] else "lsq",
                  n_jobs=n_jobs)
        est._model = model
        est.marginals_ = margs
        est.n_features_in_ = d
        est._read_report()
        return est

    def _terms(self):
        n_terms = int(lib.rfx_pce_n_terms(self._pce))
        d = self.n_features_in_
        coef = np.empty(n_terms)
        alpha = np.empty((n_terms, d), dtype=np.uintc)
        c = ffi.new("double *")
        for k in range(n_terms):
            a = ffi.cast("unsigned *", alpha[k].ctypes.data)
            check(lib.rfx_pce_term(self._pce, k, c, a))
            coef[k] = c[0]
        return coef, alpha

    @property
    def coef_(self):
        check_is_fitted(self)
        return self._terms()[0]

    @property
    def multi_indices_(self):
        check_is_fitted(self)
        return self._terms()[1].astype(np.int64)

    def predict(self, X):
        """Predictions, of shape (n_samples,)."""
        check_is_fitted(self)
        X = as_rows(validate_data(self, X, dtype=np.float64, reset=False))
        y = np.empty((X.shape[0], 1))
        with serial_blas:  # the model's: with its target transform undone
            check(lib.rfx_model_predict(self._model, cmat(X), mat(y), mat_none()))
        return y[:, 0]

    def _untransformed(self, what):
        """Refuse what the coefficients give of y when the expansion is of
        T(y) (a model with a target transform, as rfx_auto_fit writes)."""
        info = ffi.new("rfx_model_info *")
        check(lib.rfx_model_get_info(self._model, info))
        if info.target_transform != lib.RFX_TARGET_NONE:
            name = ffi.string(lib.rfx_target_transform_name(info.target_transform)).decode()
            raise ValueError("%s: the expansion is of the %s-transformed target, not of y; use "
                             "rfx.sobol_indices on the model" % (what, name))

    def moments(self):
        """(mean, variance) of the expansion under the input marginals."""
        check_is_fitted(self)
        self._untransformed("moments")
        mean = ffi.new("double *")
        var = ffi.new("double *")
        check(lib.rfx_pce_moments(self._pce, mean, var))
        return float(mean[0]), float(var[0])

    def sobol_indices(self):
        """(first, total): the first-order and total Sobol indices of each
        input, from the coefficients (zeros for a constant expansion)."""
        check_is_fitted(self)
        self._untransformed("sobol_indices")
        d = self.n_features_in_
        first = np.empty(d)
        total = np.empty(d)
        check(lib.rfx_pce_sobol(self._pce, ffi.cast("double *", first.ctypes.data),
                                ffi.cast("double *", total.ctypes.data)))
        return first, total

    def second_order_indices(self):
        """The second-order Sobol indices from the coefficients
        (rfx_pce_sobol_second): a symmetric (d, d) array, S_ij off the
        diagonal (the variance share of the terms in exactly inputs i and
        j) and the first-order S_i on it; zeros for a constant expansion."""
        check_is_fitted(self)
        self._untransformed("second_order_indices")
        d = self.n_features_in_
        second = np.empty((d, d))
        check(lib.rfx_pce_sobol_second(self._pce, ffi.cast("double *", second.ctypes.data)))
        return second

    def __setstate__(self, state):
        # pickles hold the model file's bytes (the expansion and its fit
        # report, bitwise); those of earlier versions the terms instead
        terms = state.pop("_pce_terms", None)
        had_bytes = state.get("_model_bytes") is not None
        super().__setstate__(state)
        if terms is not None and not had_bytes:
            coef, alpha = terms
            coef = np.ascontiguousarray(coef, dtype=np.float64)
            alpha = np.ascontiguousarray(alpha, dtype=np.uintc)
            margs = _marginals(self.marginals_, self.n_features_in_)
            out = ffi.new("rfx_pce **")
            check(lib.rfx_pce_create(self.n_features_in_, margs, len(coef),
                                     ffi.cast("const unsigned *", alpha.ctypes.data),
                                     ffi.cast("const double *", coef.ctypes.data), out))
            self._model = self._model_of(ffi.gc(out[0], lib.rfx_pce_free))


# ---------------------------------------------------------------------------
# Monte Carlo Sobol indices
# ---------------------------------------------------------------------------

@dataclasses.dataclass
class SobolResult(IndicesTable):
    """Sobol indices with bootstrap percentile intervals (NaN bounds when
    n_bootstrap=0), the output mean and variance, and the input names (a
    SALib problem's, the estimator's ``feature_names_in_``, else x1..xd).
    With ``second_order=True``, ``second`` is the symmetric (d, d) array of
    second-order indices S_ij (S_i on the diagonal) and ``second_lo``,
    ``second_hi`` its intervals; else they are None.
    :meth:`to_frame` (pandas) and :meth:`to_dict` give them as a table,
    :meth:`second_order_dict` the pairs, :meth:`plot` a bar chart."""
    first: np.ndarray
    total: np.ndarray
    first_lo: np.ndarray
    first_hi: np.ndarray
    total_lo: np.ndarray
    total_hi: np.ndarray
    mean: float
    variance: float
    n_evaluations: int
    names: list = None
    second: np.ndarray = None
    second_lo: np.ndarray = None
    second_hi: np.ndarray = None

    def __post_init__(self):
        if self.names is None:
            self.names = default_names(len(self.first))


def _cmat_array(X):
    """A numpy copy of a (possibly strided) rfx_cmat passed to a callback."""
    rows, cols, stride = X.rows, X.cols, X.stride
    if rows == 0 or cols == 0:
        return np.empty((rows, cols))
    flat = np.frombuffer(ffi.buffer(X.data, 8 * ((rows - 1) * stride + cols)), dtype=np.float64)
    return np.lib.stride_tricks.as_strided(flat, shape=(rows, cols),
                                           strides=(8 * stride, 8)).copy()


def sobol_indices(model_or_callable, marginals=None, n=10000, seed=0, n_bootstrap=200,
                  confidence=0.95, *, target=0, batch_rows=4096, n_jobs=None,
                  second_order=False):
    """Monte Carlo first-order and total Sobol indices (Saltelli 2010 and
    Jansen estimators, bootstrap percentile intervals) under independent
    inputs, by the rfx C library (rfx_sobol_model / rfx_sobol_estimate);
    with ``second_order=True`` also the second-order indices S_ij
    (Saltelli 2002, in SALib's form), leaving the others unchanged.

    model_or_callable : a fitted rfx estimator over an rfx model (the C
        model is evaluated directly, column ``target`` of its predictions),
        any other object with ``predict``, or a callable mapping an
        (m, d) array to m outputs. The model is evaluated n (d + 2) times,
        n (2 d + 2) with second order, in batches of at most
        ``batch_rows`` rows.
    marginals : list of ("uniform", a, b) / ("normal", mu, sigma) /
        ("lognormal", mu, sigma), one per input, in the units of the data;
        or a SALib problem dict (``names``, ``bounds``, ``dists``; see
        :mod:`rfx.sensitivity`), whose names the result carries; or None
        (default) for a fitted rfx estimator: a PCERegressor's
        ``marginals_``, any other the uniform box of its training inputs
        (a model read from a file has none: give them).

    Returns a :class:`SobolResult`. Exceptions raised by the callable
    propagate (the C call is stopped).
    """
    c_margs, names = _input_distribution(marginals, model_or_callable)
    d = len(c_margs)
    p = ffi.new("rfx_sobol_params *", lib.rfx_sobol_params_default())
    p.n = _opt_int(n, "n", 2)
    p.seed = _common.resolve_seed(seed)
    if not isinstance(n_bootstrap, numbers.Integral) or n_bootstrap < 0:
        raise ValueError("n_bootstrap must be an int >= 0, got %r" % (n_bootstrap,))
    p.n_bootstrap = int(n_bootstrap)
    p.confidence = float(confidence)
    p.batch_rows = _opt_int(batch_rows, "batch_rows", 1)
    p.n_threads = _common.resolve_threads(n_jobs)
    if not isinstance(second_order, (bool, np.bool_)):
        raise TypeError("second_order must be True or False, got %r" % (second_order,))
    p.second_order = int(second_order)
    arrays = {k: np.full(d, np.nan) for k in
              ("first", "total", "first_lo", "first_hi", "total_lo", "total_hi")}
    if second_order:
        arrays.update({k: np.full((d, d), np.nan) for k in
                       ("second", "second_lo", "second_hi")})
    res = ffi.new("rfx_sobol_result *")
    for k, a in arrays.items():
        setattr(res, k, ffi.cast("double *", a.ctypes.data))

    model = getattr(model_or_callable, "_model", None)
    if isinstance(model_or_callable, _RFXModel) and model is not None:
        with serial_blas:
            check(lib.rfx_sobol_model(model, int(target), c_margs, d, p, res))
    else:
        fn = getattr(model_or_callable, "predict", model_or_callable)
        if not callable(fn):
            raise TypeError("sobol_indices: expected an estimator or a callable, got %r"
                            % (model_or_callable,))
        failure = []

        def evaluate(user, X, y):
            try:
                m = X.rows
                out = np.asarray(fn(_cmat_array(X)), dtype=np.float64).reshape(-1)
                if out.shape[0] != m:
                    raise ValueError("sobol_indices: the function returned %d values for %d "
                                     "rows" % (out.shape[0], m))
                ffi.memmove(y, out.tobytes(), 8 * m)  # fresh contiguous bytes
                return 0
            except BaseException as e:  # noqa: B902 - re-raised after the C call
                failure.append(e)
                return lib.RFX_ECANCELLED

        cb = ffi.callback("rfx_function_fn", evaluate, error=lib.RFX_EINTERNAL)
        status = lib.rfx_sobol_estimate(cb, ffi.NULL, c_margs, d, p, res)
        if failure:
            raise failure[0]
        check(status)
    return SobolResult(mean=float(res.mean), variance=float(res.variance),
                       n_evaluations=int(res.n_evaluations), names=names, **arrays)


@dataclasses.dataclass
class ExactSobolResult(IndicesTable):
    """Sobol indices in closed form: first-order and total (d values),
    second-order S_ij (d x d, S_i on the diagonal), the output mean and
    variance, and the input names; :meth:`to_frame`, :meth:`to_dict`,
    :meth:`second_order_dict` and :meth:`plot` as for :class:`SobolResult`
    (no intervals)."""
    first: np.ndarray
    total: np.ndarray
    second: np.ndarray
    mean: float
    variance: float
    names: list = None

    def __post_init__(self):
        if self.names is None:
            self.names = default_names(len(self.first))


def _input_distribution(marginals, estimator):
    """(C marginals, names) from what the Sobol functions take: a list of
    (kind, a, b), a SALib problem dict, or None for a fitted estimator's
    own distribution (a PCERegressor's marginals_, else the box of its
    training inputs)."""
    names = None
    if isinstance(marginals, dict):
        marginals, names = marginals_from_problem(marginals)
    elif marginals is None:
        marginals = getattr(estimator, "marginals_", None)
        box = getattr(estimator, "_input_box", None)
        if marginals is None and box is not None:
            marginals = box_marginals(*box)
        if marginals is None:
            raise ValueError("give the input distribution (marginals or a SALib problem): "
                             "only a model fitted in this session (or unpickled) knows its "
                             "training box, not %r" % (estimator,))
    c_margs = _marginals(marginals)
    if names is None:
        fitted_names = getattr(estimator, "feature_names_in_", None)
        if fitted_names is not None and len(fitted_names) == len(c_margs):
            names = [str(v) for v in fitted_names]
    return c_margs, names


def exact_sobol_indices(estimator, marginals=None):
    """The Sobol indices of a fitted rfx estimator with sine or cosine
    features (SparseRFERegressor with the default activation, RFFRegressor,
    BayesianRFFRegressor with one target) in closed form under independent
    uniform or normal inputs, by rfx_sobol_model_exact: no sampling, exact
    to rounding. A PCERegressor has its own ``sobol_indices()``; other
    models raise ValueError (use :func:`sobol_indices`).

    marginals : list of ("uniform", a, b) / ("normal", mu, sigma), one per
        input, in the units of the data; a SALib problem dict; or None
        (default): the uniform box of the training inputs (as
        :func:`sobol_indices`).
    """
    model = getattr(estimator, "_model", None)
    if not isinstance(estimator, _RFXModel) or model is None:
        raise TypeError("exact_sobol_indices: expected a fitted rfx estimator, got %r"
                        % (estimator,))
    c_margs, names = _input_distribution(marginals, estimator)
    d = len(c_margs)
    first, total, second = np.empty(d), np.empty(d), np.empty((d, d))
    mean, var = ffi.new("double *"), ffi.new("double *")
    with serial_blas:
        check(lib.rfx_sobol_model_exact(model, c_margs, d, mean, var,
                                        ffi.cast("double *", first.ctypes.data),
                                        ffi.cast("double *", total.ctypes.data),
                                        ffi.cast("double *", second.ctypes.data)))
    return ExactSobolResult(first=first, total=total, second=second, mean=float(mean[0]),
                            variance=float(var[0]), names=names)
