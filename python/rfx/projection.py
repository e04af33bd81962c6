"""KernelPCA: anisotropic kernel PCA (exact or by random features) over the
rfx C library (rfx/projection.h)."""
import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from . import _common
from ._lib import as_rows, check, cmat, cmat_to_array, ffi, lib, mat, serial_blas

_METHODS = {"exact": 0, "random_features": 1}


class KernelPCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Kernel PCA with the anisotropic Gaussian kernel
    ``k(x, y) = exp(-gamma sum_i theta_i (x_i - y_i)^2)`` (Schoelkopf, Smola
    & Mueller 1998), computed by the rfx C library: the projection of the
    self-supervised surrogates (Algorithm 1 of the talk rfx started from),
    usable on its own.

    ``theta`` in [0, 1] weights each input (0 removes it: the projection then
    ignores that column entirely). The eigenvalues are those of the centred
    Gram matrix, as scikit-learn's ``KernelPCA(kernel="rbf").eigenvalues_``;
    each component is oriented so that its largest training score is
    positive.

    Parameters
    ----------
    n_components : int, default=2
    theta : array-like of shape (n_features_in_,) or None, default=None
        Per-input weights in [0, 1] (not all 0); None = all 1.
    gamma : float > 0, default=1.0
    standardize : bool, default=True
        Standardise the inputs with the training means and standard
        deviations first (the same map is applied by ``transform``).
    method : {"exact", "random_features"}, default="exact"
        ``exact``: the m x m Gram matrix and LAPACK's dsyevr (cost about
        4/3 m^3); ``random_features``: linear PCA of ``n_features`` random
        Fourier features of the same kernel (for large m).
    n_features : int, default=1024
        D for ``method="random_features"``.
    random_state : int, RandomState instance or None, default=None
        The features' seed (``method="random_features"``).
    n_jobs : int or None, default=None

    Attributes
    ----------
    n_features_in_ : int
    embedding_ : ndarray of shape (n_samples, n_components)
        The training scores (``transform`` of the training rows).
    eigenvalues_, explained_variance_ratio_ : ndarray of shape (n_components,)
    theta_ : ndarray of shape (n_features_in_,)

    Examples
    --------
    >>> import numpy as np, rfx
    >>> X = np.random.RandomState(0).uniform(size=(200, 4))
    >>> kp = rfx.KernelPCA(n_components=2, theta=[1, 1, 0, 0]).fit(X)
    >>> kp.transform(X[:3]).shape
    (3, 2)
    """

    def __init__(self, n_components=2, *, theta=None, gamma=1.0, standardize=True,
                 method="exact", n_features=1024, random_state=None, n_jobs=None):
        self.n_components = n_components
        self.theta = theta
        self.gamma = gamma
        self.standardize = standardize
        self.method = method
        self.n_features = n_features
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _params(self):
        p = ffi.new("rfx_kpca_params *", lib.rfx_kpca_params_default())
        if not isinstance(self.n_components, numbers.Integral) or self.n_components < 1:
            raise ValueError("n_components must be an int >= 1, got %r" % (self.n_components,))
        p.n_components = int(self.n_components)
        if self.method not in _METHODS:
            raise ValueError("method must be 'exact' or 'random_features', got %r"
                             % (self.method,))
        p.method = _METHODS[self.method]
        if not isinstance(self.gamma, numbers.Real) or not self.gamma > 0:
            raise ValueError("gamma must be a number > 0, got %r" % (self.gamma,))
        p.gamma = float(self.gamma)
        p.standardize = int(bool(self.standardize))
        if not isinstance(self.n_features, numbers.Integral) or self.n_features < 2:
            raise ValueError("n_features must be an int >= 2, got %r" % (self.n_features,))
        p.n_features = int(self.n_features)
        p.seed = _common.resolve_seed(self.random_state)
        p.n_threads = _common.resolve_threads(self.n_jobs)
        return p

    def fit(self, X, y=None):
        """Fit the components on the rows of X (n_samples, n_features)."""
        X = as_rows(self._validate_data(X, dtype=np.float64))
        m, d = X.shape
        if m < 2:
            raise ValueError("n_samples=%d: at least 2 samples are needed to fit" % m)
        theta = np.ones(d) if self.theta is None else np.asarray(self.theta, dtype=np.float64)
        if theta.shape != (d,):
            raise ValueError("theta has shape %s, expected (%d,)" % (theta.shape, d))
        theta = np.ascontiguousarray(theta)
        p = self._params()
        if p.n_components > m:
            raise ValueError("n_components=%d exceeds n_samples=%d" % (p.n_components, m))
        out = ffi.new("rfx_kpca **")
        with serial_blas:
            check(lib.rfx_kpca_create(p, cmat(X), out))
            kp = ffi.gc(out[0], lib.rfx_kpca_free)
            check(lib.rfx_kpca_fit(kp, ffi.cast("const double *", theta.ctypes.data)))
        self._kpca = kp
        self._X_fit = X  # pickles refit from these rows (deterministic)
        self._finish()
        return self

    def _finish(self):
        kp = self._kpca
        k = int(self.n_components)
        self.embedding_ = cmat_to_array(lib.rfx_kpca_embedding(kp))
        ev, ratio = np.empty(k), np.empty(k)
        check(lib.rfx_kpca_eigenvalues(kp, ffi.cast("double *", ev.ctypes.data),
                                       ffi.cast("double *", ratio.ctypes.data)))
        self.eigenvalues_, self.explained_variance_ratio_ = ev, ratio
        theta = np.empty(self.n_features_in_)
        check(lib.rfx_kpca_theta(kp, ffi.cast("double *", theta.ctypes.data)))
        self.theta_ = theta
        self._n_features_out = k

    def transform(self, X):
        """The scores of the rows of X, of shape (n_samples, n_components)."""
        check_is_fitted(self)
        X = as_rows(self._validate_data(X, dtype=np.float64, reset=False))
        T = np.empty((X.shape[0], int(self.n_components)))
        with serial_blas:
            check(lib.rfx_kpca_transform(self._kpca, cmat(X), mat(T)))
        return T

    def fit_transform(self, X, y=None):
        """fit(X), then the training scores (``embedding_``)."""
        return self.fit(X).embedding_.copy()

    def __getstate__(self):
        state = dict(super().__getstate__())  # a copy: it may be __dict__ itself
        state.pop("_kpca", None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if "_X_fit" in self.__dict__:  # refit: the same rows and theta give the same bits
            p = self._params()
            out = ffi.new("rfx_kpca **")
            with serial_blas:
                check(lib.rfx_kpca_create(p, cmat(self._X_fit), out))
                kp = ffi.gc(out[0], lib.rfx_kpca_free)
                check(lib.rfx_kpca_fit(kp, ffi.cast("const double *", self.theta_.ctypes.data)))
            self._kpca = kp
