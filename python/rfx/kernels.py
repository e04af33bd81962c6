# SPDX-License-Identifier: BSD-3-Clause
"""Exact kernels and the kernel machines built on them (rfx/kernels.h,
rfx/nystroem.h): ``Kernel`` (with sums, products, positive scaling, exp and
warping), ``KernelRidge`` and ``GaussianProcessRegressor`` - the references
that random features approximate - and ``Nystroem`` features.
"""
import numbers

import numpy as np
import scipy.linalg
from sklearn.base import (BaseEstimator, ClassNamePrefixFeaturesOutMixin, MultiOutputMixin,
                          RegressorMixin, TransformerMixin)
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from . import _common
from ._lib import as_rows, check, cmat, cmat_to_array, ffi, lib, mat, serial_blas
from ._model import sample_weights
from ._sklearn_compat import validate_data

_SHIFT = {"gaussian": 0, "laplacian": 1, "cauchy": 2, "matern": 3}


def _real(v, name, positive=False, nonneg=False):
    if not isinstance(v, numbers.Real) or isinstance(v, bool) or not np.isfinite(v):
        raise TypeError("%s must be a finite number, got %r" % (name, v))
    if positive and not v > 0:
        raise ValueError("%s must be > 0, got %r" % (name, v))
    if nonneg and not v >= 0:
        raise ValueError("%s must be >= 0, got %r" % (name, v))
    return float(v)


def _dptr(a):
    return ffi.cast("double *", a.ctypes.data)


class Kernel:
    """An exact kernel function k(x, y), evaluated by the C library.

    Build one with the class methods (``Kernel.rbf(gamma)``,
    ``Kernel.matern(nu, length_scale)``, ``Kernel.polynomial(...)``, ...) and
    combine them: ``k1 + k2``, ``k1 * k2``, ``c * k`` (c >= 0), ``k.exp()``
    and ``k.warp(f)`` for f(x) k(x, y) f(y). Every such combination is again
    a kernel (positive semi-definite when its parts are). Calling the kernel
    gives its Gram matrix: ``k(X)`` (exactly symmetric) or ``k(X, Y)``.

    Kernels pickle (a warping function must itself be picklable).

    Examples
    --------
    >>> import numpy as np, rfx
    >>> k = 0.5 * rfx.Kernel.rbf(gamma=2.0) + rfx.Kernel.linear()
    >>> X = np.eye(3)
    >>> K = k(X)
    >>> bool(np.allclose(K, 0.5 * np.exp(-2.0 * 2 * (1 - np.eye(3))) + np.eye(3)))
    True
    """

    def __init__(self, recipe):
        self._recipe = recipe
        self._keep = []  # Python objects the C kernel refers to (callbacks)
        self._handle = self._build(recipe)

    # -- construction --------------------------------------------------
    def _build(self, r):
        out = ffi.new("rfx_kern **")
        kind = r[0]
        if kind == "shift":
            _, name, nu, ls = r
            if np.ndim(ls) == 0:
                check(lib.rfx_kern_shift(_SHIFT[name], nu, ls, ffi.NULL, 0, out))
            else:
                a = np.ascontiguousarray(ls, dtype=np.float64)
                check(lib.rfx_kern_shift(_SHIFT[name], nu, 0.0, _dptr(a), a.size, out))
        elif kind == "rbf":
            check(lib.rfx_kern_rbf(r[1], out))
        elif kind == "laplacian_gamma":
            check(lib.rfx_kern_laplacian(r[1], out))
        elif kind == "polynomial":
            check(lib.rfx_kern_polynomial(r[1], r[2], r[3], out))
        elif kind == "sigmoid":
            check(lib.rfx_kern_sigmoid(r[1], r[2], out))
        elif kind == "linear":
            check(lib.rfx_kern_linear(out))
        elif kind == "delta":
            check(lib.rfx_kern_delta(out))
        elif kind == "arccos":
            check(lib.rfx_kern_arccos(r[1], r[2], r[3], out))
        elif kind == "bilinear":
            a = np.ascontiguousarray(r[1], dtype=np.float64)
            check(lib.rfx_kern_bilinear(_dptr(a), a.shape[0], out))
        elif kind in ("sum", "product"):
            a, b = Kernel(r[1]), Kernel(r[2])
            fn = lib.rfx_kern_sum if kind == "sum" else lib.rfx_kern_product
            check(fn(a._handle, b._handle, out))
            self._keep += a._keep + b._keep
        elif kind == "scale":
            a = Kernel(r[2])
            check(lib.rfx_kern_scale(r[1], a._handle, out))
            self._keep += a._keep
        elif kind == "exp":
            a = Kernel(r[1])
            check(lib.rfx_kern_exp(a._handle, out))
            self._keep += a._keep
        elif kind == "warp":
            a, f = Kernel(r[1]), r[2]

            @ffi.callback("double(void *, const double *, size_t)", onerror=lambda *e: 0.0)
            def cb(user, x, d, f=f):
                return float(f(np.frombuffer(ffi.buffer(x, d * 8), dtype=np.float64)))

            check(lib.rfx_kern_warp(a._handle, cb, ffi.NULL, out))
            self._keep += a._keep + [cb]
        else:
            raise ValueError("unknown kernel recipe %r" % (kind,))
        return ffi.gc(out[0], lib.rfx_kern_free)

    @classmethod
    def rbf(cls, gamma=1.0):
        """exp(-gamma |x - y|^2) (scikit-learn's ``rbf_kernel``)."""
        return cls(("rbf", _real(gamma, "gamma", positive=True)))

    @classmethod
    def laplacian(cls, gamma=1.0):
        """exp(-gamma |x - y|_1) (scikit-learn's ``laplacian_kernel``)."""
        return cls(("laplacian_gamma", _real(gamma, "gamma", positive=True)))

    @classmethod
    def _shift(cls, name, nu, length_scale):
        if np.ndim(length_scale) == 0:
            ls = _real(length_scale, "length_scale", positive=True)
        else:
            ls = tuple(float(v) for v in np.asarray(length_scale, dtype=np.float64).ravel())
        return cls(("shift", name, float(nu), ls))

    @classmethod
    def gaussian(cls, length_scale=1.0):
        """exp(-|x - y|^2 / (2 l^2)); ``length_scale`` a number or one per
        input (anisotropic)."""
        return cls._shift("gaussian", 1.5, length_scale)

    @classmethod
    def matern(cls, nu=1.5, length_scale=1.0):
        """The Matern kernel of smoothness nu > 0 (any nu; closed forms for
        0.5, 1.5, 2.5), as scikit-learn's ``Matern``."""
        return cls._shift("matern", _real(nu, "nu", positive=True), length_scale)

    @classmethod
    def cauchy(cls, length_scale=1.0):
        """prod_i 1 / (1 + ((x_i - y_i) / l_i)^2)."""
        return cls._shift("cauchy", 1.5, length_scale)

    @classmethod
    def polynomial(cls, degree=3, gamma=1.0, coef0=1.0):
        """(gamma x.y + coef0)^degree."""
        if not isinstance(degree, numbers.Integral) or degree < 0:
            raise ValueError("degree must be an int >= 0, got %r" % (degree,))
        return cls(("polynomial", _real(gamma, "gamma"), _real(coef0, "coef0"), int(degree)))

    @classmethod
    def sigmoid(cls, gamma=1.0, coef0=1.0):
        """tanh(gamma x.y + coef0): not positive semi-definite in general."""
        return cls(("sigmoid", _real(gamma, "gamma"), _real(coef0, "coef0")))

    @classmethod
    def linear(cls):
        """x.y"""
        return cls(("linear",))

    @classmethod
    def delta(cls):
        """1 when x == y exactly, else 0 (white noise)."""
        return cls(("delta",))

    @classmethod
    def arccos(cls, order=1, sigma=1.0, bias=0.0):
        """The arc-cosine kernel of Cho & Saul (2009): the kernel of the
        features sqrt(2/D) step(w.x + b) (w.x + b)^order, w ~ N(0, sigma^2 I),
        b ~ N(0, bias^2) (order 1: ReLU features; 0: step; 2: squared ReLU)."""
        if order not in (0, 1, 2) or isinstance(order, bool):
            raise ValueError("order must be 0, 1 or 2, got %r" % (order,))
        return cls(("arccos", int(order), _real(sigma, "sigma"), _real(bias, "bias")))

    @classmethod
    def bilinear(cls, A):
        """x^T A y for a symmetric positive semi-definite A (d x d)."""
        A = np.array(A, dtype=np.float64)
        if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] == 0:
            raise ValueError("A must be a square matrix, got shape %r" % (A.shape,))
        return cls(("bilinear", A))

    # -- algebra -------------------------------------------------------
    def __add__(self, other):
        if not isinstance(other, Kernel):
            return NotImplemented
        return Kernel(("sum", self._recipe, other._recipe))

    def __mul__(self, other):
        if isinstance(other, Kernel):
            return Kernel(("product", self._recipe, other._recipe))
        if isinstance(other, numbers.Real) and not isinstance(other, bool):
            return Kernel(("scale", _real(other, "scale", nonneg=True), self._recipe))
        return NotImplemented

    __rmul__ = __mul__

    def exp(self):
        """exp(k(x, y)), elementwise."""
        return Kernel(("exp", self._recipe))

    def warp(self, f):
        """f(x) k(x, y) f(y) for a function f of one row (a 1-D array)."""
        if not callable(f):
            raise TypeError("f must be callable")
        return Kernel(("warp", self._recipe, f))

    # -- evaluation ----------------------------------------------------
    def __call__(self, X, Y=None, n_jobs=None):
        """The Gram matrix K[i, j] = k(X[i], Y[j]) (Y = X when None: exactly
        symmetric)."""
        X = as_rows(np.asarray(X, dtype=np.float64))
        if X.ndim != 2:
            raise ValueError("X must be 2-D, got shape %s" % (X.shape,))
        threads = _common.resolve_threads(n_jobs)
        if self._keep:  # Python callbacks: one thread holds the GIL anyway
            threads = 1
        if Y is None:
            K = np.empty((X.shape[0], X.shape[0]))
            with serial_blas:
                check(lib.rfx_kern_gram_sym(self._handle, cmat(X), mat(K), threads))
            return K
        Y = as_rows(np.asarray(Y, dtype=np.float64))
        if Y.ndim != 2:
            raise ValueError("Y must be 2-D, got shape %s" % (Y.shape,))
        K = np.empty((X.shape[0], Y.shape[0]))
        with serial_blas:
            check(lib.rfx_kern_gram(self._handle, cmat(X), cmat(Y), mat(K), threads))
        return K

    def diag(self, X):
        """k(X[i], X[i]) for every row."""
        X = as_rows(np.asarray(X, dtype=np.float64))
        out = np.empty(X.shape[0])
        check(lib.rfx_kern_diag(self._handle, cmat(X), _dptr(out)))
        return out

    def __repr__(self):
        return "Kernel(%r)" % (self._recipe,)

    def __getstate__(self):
        return {"recipe": self._recipe}

    def __setstate__(self, state):
        self.__init__(state["recipe"])


def _kernel_of(kernel, gamma, degree, coef0, kernel_params, d):
    """scikit-learn's kernel names and defaults (gamma None = 1 / d), or a
    Kernel as it is."""
    if isinstance(kernel, Kernel):
        return kernel
    if not isinstance(kernel, str):
        raise TypeError("kernel must be a name or an rfx.Kernel, got %r" % (kernel,))
    g = 1.0 / d if gamma is None else gamma
    extra = dict(kernel_params or {})
    if kernel == "rbf":
        return Kernel.rbf(g)
    if kernel == "laplacian":
        return Kernel.laplacian(g)
    if kernel == "polynomial" or kernel == "poly":
        return Kernel.polynomial(degree, g, coef0)
    if kernel == "sigmoid":
        return Kernel.sigmoid(g, coef0)
    if kernel == "linear":
        return Kernel.linear()
    if kernel == "matern":
        return Kernel.matern(extra.get("nu", 1.5), extra.get("length_scale", 1.0))
    raise ValueError("unknown kernel %r (rbf, laplacian, polynomial, sigmoid, linear, matern, "
                     "or an rfx.Kernel)" % (kernel,))


class KernelRidge(MultiOutputMixin, RegressorMixin, BaseEstimator):
    """Kernel ridge regression, solved exactly by the C library:
    (K + alpha I) A = Y by Cholesky, predictions K(X, X_train) A - the same
    model as scikit-learn's ``KernelRidge`` (no intercept), for comparison
    with random features.

    Parameters
    ----------
    alpha : float >= 0, default=1.0
    kernel : str or rfx.Kernel, default="rbf"
        "rbf", "laplacian", "polynomial", "sigmoid", "linear", "matern" (nu and
        length_scale from ``kernel_params``), or any ``rfx.Kernel``.
    gamma, degree, coef0, kernel_params
        As scikit-learn's (gamma None = 1 / n_features).
    n_jobs : int or None, default=None
        Threads, as scikit-learn reads n_jobs: None is 1 (or the n_jobs
        of an enclosing ``joblib.parallel_config`` context), -1 all cores,
        -2 all but one. Results never depend on it.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (n_samples,) or (n_samples, n_targets)
    X_fit_ : ndarray of shape (n_samples, n_features)
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np, rfx
    >>> X = np.linspace(0, 1, 20)[:, None]
    >>> m = rfx.KernelRidge(alpha=1e-3, gamma=10.0).fit(X, np.sin(4 * X[:, 0]))
    >>> bool(abs(m.predict([[0.5]])[0] - np.sin(2.0)) < 1e-2)
    True
    """

    def __init__(self, alpha=1.0, *, kernel="rbf", gamma=None, degree=3, coef0=1,
                 kernel_params=None, n_jobs=None):
        self.alpha = alpha
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.n_jobs = n_jobs

    def _fit_c(self, X, Y, w=None):
        k = _kernel_of(self.kernel, self.gamma, self.degree, self.coef0, self.kernel_params,
                       X.shape[1])
        lam = _real(self.alpha, "alpha", nonneg=True)
        out = ffi.new("rfx_krr **")
        wp = ffi.NULL if w is None else ffi.cast("const double *", w.ctypes.data)
        with serial_blas:
            check(lib.rfx_krr_fit_weighted(k._handle, cmat(X), cmat(Y), lam, wp,
                                           _common.resolve_threads(self.n_jobs), out))
        self._kern = k
        self._krr = ffi.gc(out[0], lib.rfx_krr_free)

    def fit(self, X, y, sample_weight=None):
        """Fit on X (n_samples, n_features) and y (n_samples,) or
        (n_samples, n_targets); sample_weight (n_samples,), finite and >= 0,
        weighs each row's squared error (scikit-learn's KernelRidge with
        sample_weight; a row of weight 0 gets dual coefficient 0)."""
        X, y = validate_data(self, X, y, dtype=np.float64, multi_output=True, y_numeric=True)
        X = as_rows(X)
        Y = np.ascontiguousarray(y, dtype=np.float64).reshape(X.shape[0], -1)
        w = sample_weights(sample_weight, X)
        self._fit_c(X, Y, w)
        self.X_fit_ = X
        self._Y = Y
        self._w = w
        self._y_ndim = np.ndim(y)
        A = cmat_to_array(lib.rfx_krr_dual_coef(self._krr))
        self.dual_coef_ = A[:, 0] if self._y_ndim == 1 else A
        return self

    def predict(self, X):
        """K(X, X_fit_) dual_coef_."""
        check_is_fitted(self)
        X = as_rows(validate_data(self, X, dtype=np.float64, reset=False))
        out = np.empty((X.shape[0], self._Y.shape[1]))
        with serial_blas:
            check(lib.rfx_krr_predict(self._krr, cmat(X), mat(out)))
        return out[:, 0] if self._y_ndim == 1 else out

    def __getstate__(self):
        state = dict(super().__getstate__())
        state.pop("_krr", None)
        state.pop("_kern", None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if "X_fit_" in self.__dict__:  # refit: the same rows give the same bits
            self._fit_c(self.X_fit_, self._Y, self.__dict__.get("_w"))


class GaussianProcessRegressor(RegressorMixin, BaseEstimator):
    """Gaussian process regression with an exact kernel, by the C library:
    the prior s2 k(x, y) with noise variance sigma^2 on the targets,
    posterior mean and standard deviation, and the log marginal likelihood
    (Rasmussen & Williams 2006, Algorithm 2.1). When not given, s2 and
    sigma^2 maximise the log marginal likelihood (one eigendecomposition of
    K). A Cholesky that fails is retried with a growing jitter (documented
    in rfx/kernels.h); the jitter used is ``jitter_``.

    With the variances given, it is scikit-learn's
    ``GaussianProcessRegressor(ConstantKernel(amplitude) * kernel,
    alpha=noise_var, optimizer=None, normalize_y=normalize_y)``:
    ``predict(X, return_std=True)`` / ``predict(X, return_cov=True)`` and
    ``sample_y(X, n_samples, random_state)`` have its shapes and meaning
    (the latent f's deviations), and agree with it to rounding.

    Parameters
    ----------
    kernel : rfx.Kernel or None, default=None
        None = ``Kernel.gaussian(1.0)``.
    noise_var : float > 0 or None, default=None
        sigma^2 (in the units of the normalised targets with normalize_y);
        None fits it.
    amplitude : float > 0 or None, default=None
        s2; None fits it.
    normalize_y : bool, default=True
    n_jobs : int or None, default=None
        Threads, as scikit-learn reads n_jobs: None is 1 (or the n_jobs
        of an enclosing ``joblib.parallel_config`` context), -1 all cores,
        -2 all but one. Results never depend on it.

    Attributes
    ----------
    noise_var_, amplitude_, jitter_, log_marginal_likelihood_value_ : float
    X_train_ : ndarray of shape (n_samples, n_features)

    Examples
    --------
    >>> import numpy as np, rfx
    >>> X = np.linspace(0, 1, 30)[:, None]
    >>> gp = rfx.GaussianProcessRegressor(rfx.Kernel.gaussian(0.2)).fit(X, np.sin(6 * X[:, 0]))
    >>> mean, std = gp.predict([[0.5]], return_std=True)
    >>> bool(abs(mean[0] - np.sin(3.0)) < 1e-2 and std[0] < 0.05)
    True
    """

    def __init__(self, kernel=None, *, noise_var=None, amplitude=None, normalize_y=True,
                 n_jobs=None):
        self.kernel = kernel
        self.noise_var = noise_var
        self.amplitude = amplitude
        self.normalize_y = normalize_y
        self.n_jobs = n_jobs

    def _fit_c(self, X, y):
        k = Kernel.gaussian(1.0) if self.kernel is None else self.kernel
        if not isinstance(k, Kernel):
            raise TypeError("kernel must be an rfx.Kernel or None, got %r" % (k,))
        p = ffi.new("rfx_gp_params *", lib.rfx_gp_params_default())
        p.noise_var = 0.0 if self.noise_var is None else _real(self.noise_var, "noise_var",
                                                               positive=True)
        p.amplitude = 0.0 if self.amplitude is None else _real(self.amplitude, "amplitude",
                                                               positive=True)
        p.normalize_y = int(bool(self.normalize_y))
        p.n_threads = _common.resolve_threads(self.n_jobs)
        out = ffi.new("rfx_gp **")
        with serial_blas:
            check(lib.rfx_gp_fit(k._handle, cmat(X), _dptr(y), p, out))
        self._kern = k
        self._gp = ffi.gc(out[0], lib.rfx_gp_free)
        self._cho = None  # the Cholesky factor for return_cov, made when first asked

    def fit(self, X, y):
        """Fit on X (n_samples, n_features) and y (n_samples,)."""
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        if X.shape[0] < 2:
            raise ValueError("n_samples=%d: at least 2 samples are needed to fit" % X.shape[0])
        X = as_rows(X)
        y = np.ascontiguousarray(y, dtype=np.float64)
        self._fit_c(X, y)
        self.X_train_, self._y = X, y
        info = ffi.new("rfx_gp_info *")
        check(lib.rfx_gp_get_info(self._gp, info))
        self.noise_var_ = float(info.noise_var)
        self.amplitude_ = float(info.amplitude)
        self.jitter_ = float(info.jitter)
        self.log_marginal_likelihood_value_ = float(info.log_marginal_likelihood)
        return self

    def predict(self, X, return_std=False, return_cov=False, noisy=False):
        """The posterior mean, as scikit-learn's ``predict``: with
        ``return_std`` also its standard deviation, with ``return_cov`` its
        covariance matrix (n_samples, n_samples) instead; of the latent f
        by default (scikit-learn's, whose ``alpha`` is this noise), of new
        noisy targets y with ``noisy=True``. Both at once is an error, as in
        scikit-learn. The covariance costs O(n_train^3) once (a Cholesky
        factor of the training covariance, kept) and O(m n_train^2) per
        call; the standard deviations come from the C library."""
        if return_std and return_cov:
            raise RuntimeError("At most one of return_std or return_cov can be requested.")
        check_is_fitted(self)
        X = as_rows(validate_data(self, X, dtype=np.float64, reset=False))
        n = X.shape[0]
        mean = np.empty(n)
        std = np.empty(n) if return_std else None
        lat = _dptr(std) if return_std and not noisy else ffi.NULL
        noi = _dptr(std) if return_std and noisy else ffi.NULL
        with serial_blas:
            check(lib.rfx_gp_predict(self._gp, cmat(X), _dptr(mean), lat, noi))
        if return_cov:
            return mean, self._posterior_cov(X, noisy)
        return (mean, std) if return_std else mean

    def _posterior_cov(self, X, noisy):
        """s2 K(X, X) - s2^2 K(X, T) C^-1 K(T, X), C = s2 K(T, T) + (noise +
        jitter) I the training covariance (Rasmussen & Williams 2006, eq.
        2.24), in the units of y (times y_std^2 with normalize_y); plus the
        noise on the diagonal for noisy targets."""
        info = ffi.new("rfx_gp_info *")
        check(lib.rfx_gp_get_info(self._gp, info))
        s2, noise = float(info.amplitude), float(info.noise_var)
        if getattr(self, "_cho", None) is None:
            C = s2 * self._kern(self.X_train_, n_jobs=self.n_jobs)
            C[np.diag_indices_from(C)] += noise + float(info.jitter)
            self._cho = scipy.linalg.cho_factor(C, lower=True)
        Ks = s2 * self._kern(self.X_train_, X, n_jobs=self.n_jobs)
        cov = s2 * self._kern(X, n_jobs=self.n_jobs) - Ks.T @ scipy.linalg.cho_solve(self._cho,
                                                                                       Ks)
        cov = 0.5 * (cov + cov.T)  # symmetric to the last bit
        if noisy:
            cov[np.diag_indices_from(cov)] += noise
        return cov * float(info.y_std) ** 2

    def sample_y(self, X, n_samples=1, random_state=0):
        """Draws of the latent posterior f at the rows of X, shape
        (n_samples_X, n_samples), as scikit-learn's ``sample_y``: the same
        ``random_state`` gives the same draws from the same mean and
        covariance (``numpy.random.RandomState.multivariate_normal``)."""
        rng = check_random_state(random_state)
        mean, cov = self.predict(X, return_cov=True)
        return rng.multivariate_normal(mean, cov, n_samples).T

    def __getstate__(self):
        state = dict(super().__getstate__())
        state.pop("_gp", None)
        state.pop("_kern", None)
        state.pop("_cho", None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if "X_train_" in self.__dict__:
            self._fit_c(self.X_train_, self._y)




_LANDMARKS = {"uniform": 0, "kmeans": 1, "leverage": 2}


class Nystroem(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Nystroem features of any exact kernel (Williams & Seeger 2001), by the
    C library: ``z(x) = k(x, L) N`` with ``n_components`` landmark rows L
    drawn without replacement from the training rows (seeded) and N the
    pseudo-inverse square root of K(L, L), so that ``z(x).z(y)`` is
    ``k(x, L) K(L, L)^+ k(L, y)``. The layout is scikit-learn's
    ``Nystroem`` (one column per landmark); eigenvalues of K(L, L) at or
    below 1e-12 times the largest are dropped (``rank_`` says how many are
    kept) where scikit-learn raises them to 1e-12.

    Parameters
    ----------
    kernel : str or rfx.Kernel, default="rbf"
        As ``KernelRidge``'s (gamma None = 1 / n_features).
    gamma, coef0, degree, kernel_params
    n_components : int or "auto", default=100
        Landmarks (at most n_samples). "auto": ``ceil(d_eff ln n)`` with
        d_eff the effective dimension at ``reg`` (an upper bound from the
        leverage scores of 512 rows).
    landmarks : {"uniform", "kmeans", "leverage"}, default="uniform"
        Uniform rows; k-means centres (Zhang, Tsang & Kwok 2008; standardise
        X first); or rows drawn by their ridge leverage scores (Alaoui &
        Mahoney 2015), which covers outliers and small clusters.
    reg : float, default=1e-3
        The ridge of the leverage scores and of "auto", relative to the mean
        k(x, x).
    random_state : int, RandomState instance or None, default=None
    n_jobs : int or None, default=None
        Threads, as scikit-learn reads n_jobs: None is 1 (or the n_jobs
        of an enclosing ``joblib.parallel_config`` context), -1 all cores,
        -2 all but one. Results never depend on it.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features_in_)
        The landmarks.
    component_indices_ : ndarray of shape (n_components,), or None for k-means
    normalization_ : ndarray of shape (n_components, n_components)
    rank_ : int

    Examples
    --------
    >>> import numpy as np, rfx
    >>> X = np.random.RandomState(0).normal(size=(300, 4))
    >>> ny = rfx.Nystroem(gamma=0.2, n_components=300, random_state=0).fit(X)
    >>> Z = ny.transform(X[:5])
    >>> bool(np.allclose(Z @ Z.T, rfx.Kernel.rbf(0.2)(X[:5]), atol=1e-8))
    True
    """

    def __init__(self, kernel="rbf", *, gamma=None, coef0=None, degree=None,
                 kernel_params=None, n_components=100, landmarks="uniform", reg=1e-3,
                 random_state=None, n_jobs=None):
        self.kernel = kernel
        self.landmarks = landmarks
        self.reg = reg
        self.gamma = gamma
        self.coef0 = coef0
        self.degree = degree
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _kernel(self, d):
        return _kernel_of(self.kernel, self.gamma, 3 if self.degree is None else self.degree,
                          1.0 if self.coef0 is None else self.coef0, self.kernel_params, d)

    def fit(self, X, y=None):
        """Draw the landmarks from the rows of X and factor K(L, L)."""
        X = as_rows(validate_data(self, X, dtype=np.float64))
        if self.n_components == "auto":
            m = 0
        elif (not isinstance(self.n_components, numbers.Integral)
              or isinstance(self.n_components, bool) or self.n_components < 1):
            raise ValueError("n_components must be an int >= 1 or 'auto', got %r"
                             % (self.n_components,))
        else:
            m = min(int(self.n_components), X.shape[0])
        if self.landmarks not in _LANDMARKS:
            raise ValueError("landmarks must be one of %s, got %r"
                             % (", ".join(_LANDMARKS), self.landmarks))
        k = self._kernel(X.shape[1])
        p = lib.rfx_nystroem_params_default()
        p.n_components = m
        p.landmarks = _LANDMARKS[self.landmarks]
        setattr(p, "lambda", _real(self.reg, "reg", positive=True))
        p.seed = _common.resolve_seed(self.random_state)
        p.n_threads = _common.resolve_threads(self.n_jobs)
        out = ffi.new("rfx_nystroem **")
        with serial_blas:
            check(lib.rfx_nystroem_fit_params(k._handle, cmat(X), ffi.new("rfx_nystroem_params *", p),
                                              out))
        self._set(k, ffi.gc(out[0], lib.rfx_nystroem_free))
        return self

    def _set(self, k, ny):
        self._kern, self._ny = k, ny
        m = int(lib.rfx_nystroem_n_components(ny))
        self.components_ = cmat_to_array(lib.rfx_nystroem_landmarks(ny))
        idx = lib.rfx_nystroem_landmark_indices(ny)
        self.component_indices_ = (np.array([idx[i] for i in range(m)], dtype=np.intp)
                                   if idx != ffi.NULL else None)
        self.normalization_ = cmat_to_array(lib.rfx_nystroem_normalization(ny))
        self.rank_ = int(lib.rfx_nystroem_rank(ny))
        self._n_features_out = int(lib.rfx_nystroem_output_dim(ny))

    def transform(self, X):
        """z(X), of shape (n_samples, n_components)."""
        check_is_fitted(self)
        X = as_rows(validate_data(self, X, dtype=np.float64, reset=False))
        Z = np.empty((X.shape[0], self._n_features_out))
        with serial_blas:
            check(lib.rfx_nystroem_transform(self._ny, cmat(X), mat(Z)))
        return Z

    def __getstate__(self):
        state = dict(super().__getstate__())
        state.pop("_ny", None)
        state.pop("_kern", None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if "components_" in self.__dict__:  # the same landmarks give the same bits
            k = self._kernel(self.n_features_in_)
            out = ffi.new("rfx_nystroem **")
            with serial_blas:
                check(lib.rfx_nystroem_fit_landmarks(k._handle, cmat(self.components_),
                                                     _common.resolve_threads(self.n_jobs), out))
            ny = ffi.gc(out[0], lib.rfx_nystroem_free)
            idx = self.component_indices_
            self._set(k, ny)
            self.component_indices_ = idx


__all__ = ["Kernel", "KernelRidge", "GaussianProcessRegressor", "Nystroem"]
