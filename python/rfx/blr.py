# SPDX-License-Identifier: BSD-3-Clause
"""Bayesian linear regression on any design matrix (rfx/blr.h)."""
import numbers

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from . import _common
from ._lib import as_rows, check, cmat, double_array, ffi, lib
from ._model import sample_weights
from ._sklearn_compat import validate_data
from .models import _variance  # None -> 0 (fitted), else a number > 0


class BayesianLinearRegression(RegressorMixin, BaseEstimator):
    """Bayesian linear regression on the columns of X as given: any basis
    (1, x, x^2, ... from :class:`sklearn.preprocessing.PolynomialFeatures`,
    splines, random features of any map, or the raw inputs), with a general
    Gaussian prior on the weights, fitted by the rfx C library (rfx/blr.h).

    The model: ``y = b + X w + e`` with ``e ~ N(0, noise_var)`` and
    ``w ~ N(0, prior_var * prior_cov)`` (Rasmussen & Williams 2006, 2.1;
    Bishop 2006, 3.3), a flat prior on the intercept ``b`` when
    fit_intercept (put a column of ones in X and set fit_intercept=False to
    give the constant a Gaussian prior instead). It is the Gaussian process
    with covariance ``prior_var * phi(x)^T prior_cov phi(x')``. A variance
    left as None is fitted by maximising the marginal likelihood (MacKay's
    fixed point, as :class:`sklearn.linear_model.BayesianRidge` with its
    hyper-priors at zero). The fit takes the singular value decomposition
    of the whitened design, so it costs O(n N min(n, N)) for n rows and N
    columns: a basis far wider than the data (N >> n) costs the dual form's
    O(n^2 N), and the model keeps n x N numbers, not N x N.

    Parameters
    ----------
    noise_var : float > 0 or None, default=None
        The noise variance; None fits it.
    prior_var : float > 0 or None, default=None
        The scale of the prior covariance; None fits it.
    prior_cov : array (N, N) or None, default=None
        The prior covariance's shape, symmetric positive definite; None is
        the identity.
    fit_intercept : bool, default=True
        A flat prior on an intercept (the columns and y are centred).
    max_iter : int, default=300
        Fixed-point iterations for fitted variances.
    tol : float, default=1e-10
        The fixed point stops when |d log alpha| + |d log beta| < tol.

    Attributes
    ----------
    coef_ : ndarray (N,)
        The posterior mean of the weights.
    intercept_ : float
    noise_var_, prior_var_ : float
        The variances used (fitted or given).
    alpha_, lambda_ : float
        Their precisions 1 / noise_var_ and 1 / prior_var_, as
        BayesianRidge names them.
    log_evidence_ : float
        The log marginal likelihood of the training targets.
    effective_params_ : float
        The number of well-determined weights, gamma (Bishop 3.91).
    n_iter_ : int
        The fixed point's iterations (1 when both variances are given).
    n_features_in_ : int

    Examples
    --------
    A cubic on a polynomial basis, with its predictive band:

    >>> import numpy as np
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import PolynomialFeatures
    >>> from rfx import BayesianLinearRegression
    >>> rng = np.random.RandomState(0)
    >>> x = rng.uniform(-1, 1, size=(100, 1))
    >>> y = 1 - 2 * x[:, 0] + x[:, 0] ** 3 + 0.05 * rng.normal(size=100)
    >>> m = make_pipeline(PolynomialFeatures(5, include_bias=False),
    ...                   BayesianLinearRegression()).fit(x, y)
    >>> mean, std = m.predict(np.array([[0.0], [3.0]]), return_std=True)
    >>> bool(std[1] > 10 * std[0])  # far outside the data, far less certain
    True
    >>> round(float(np.sqrt(m[-1].noise_var_)), 2)  # the noise, 0.05, is recovered
    0.05
    """

    def __init__(self, *, noise_var=None, prior_var=None, prior_cov=None, fit_intercept=True,
                 max_iter=300, tol=1e-10):
        self.noise_var = noise_var
        self.prior_var = prior_var
        self.prior_cov = prior_cov
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol

    def _params(self, N):
        p = lib.rfx_blr_params_default()
        p.noise_var = _variance(self.noise_var, "noise_var")
        p.prior_var = _variance(self.prior_var, "prior_var")
        p.fit_intercept = 1 if self.fit_intercept else 0
        if not isinstance(self.max_iter, numbers.Integral) or self.max_iter < 1:
            raise ValueError("max_iter must be an integer >= 1, got %r" % (self.max_iter,))
        p.max_iter = int(self.max_iter)
        if not isinstance(self.tol, numbers.Real) or not self.tol > 0:
            raise ValueError("tol must be > 0, got %r" % (self.tol,))
        p.tol = float(self.tol)
        keep = None
        if self.prior_cov is not None:
            keep = np.ascontiguousarray(self.prior_cov, dtype=np.float64)
            if keep.shape != (N, N):
                raise ValueError("prior_cov must be %d x %d (one row and column per column of X), "
                                 "got shape %r" % (N, N, keep.shape))
            p.prior_cov = ffi.cast("const double *", keep.ctypes.data)
        return p, keep

    @_common.keeps_state_on_error
    def fit(self, X, y, sample_weight=None):
        """Fit on the design X (n_samples, N) and y (n_samples,).
        sample_weight (n_samples,), finite and >= 0, multiplies the noise
        precision of each row; a row of weight 0 is a row left out."""
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, ensure_min_samples=2)
        sw = sample_weights(sample_weight, X)
        self._fit_arrays(as_rows(X), np.ascontiguousarray(y, dtype=np.float64), sw)
        return self

    def _fit_arrays(self, X, y, sw):
        p, keep = self._params(X.shape[1])
        if sw is not None:
            p.sample_weight = ffi.cast("const double *", sw.ctypes.data)
        out = ffi.new("rfx_blr **")
        check(lib.rfx_blr_fit(ffi.new("rfx_blr_params *", p), cmat(X),
                              ffi.cast("const double *", y.ctypes.data), out))
        del keep
        self._blr = ffi.gc(out[0], lib.rfx_blr_free)
        self._train = (X, y, sw)  # pickles refit from these: the same bits
        info = ffi.new("rfx_blr_info *")
        check(lib.rfx_blr_get_info(self._blr, info))
        self.coef_ = double_array(lib.rfx_blr_coef(self._blr), X.shape[1])
        self.intercept_ = float(info.intercept)
        self.noise_var_ = float(info.noise_var)
        self.prior_var_ = float(info.prior_var)
        self.alpha_ = 1.0 / self.noise_var_
        self.lambda_ = 1.0 / self.prior_var_
        self.log_evidence_ = float(info.log_evidence)
        self.effective_params_ = float(info.effective_params)
        self.n_iter_ = max(int(info.iterations), 1)

    def predict(self, X, return_std=False, latent=False):
        """The posterior predictive mean at the rows of X, and with
        return_std=True its standard deviation: of a new noisy target (as
        BayesianRidge) by default, of the latent mean function with
        latent=True."""
        check_is_fitted(self)
        X = as_rows(validate_data(self, X, dtype=np.float64, reset=False))
        mean = np.empty(X.shape[0])
        std = np.empty(X.shape[0]) if return_std else None
        check(lib.rfx_blr_predict(self._blr, cmat(X), ffi.cast("double *", mean.ctypes.data),
                                  ffi.cast("double *", std.ctypes.data) if return_std else
                                  ffi.NULL, 0 if latent else 1))
        return (mean, std) if return_std else mean

    def __getstate__(self):
        state = dict(super().__getstate__())
        state.pop("_blr", None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if "_train" in state:
            self._fit_arrays(*state["_train"])
