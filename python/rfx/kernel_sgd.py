# SPDX-License-Identifier: BSD-3-Clause
"""Stochastic gradient descent with a kernel in the four ways of the kernel
trick (rfx/kernel_sgd.h): :class:`KernelSGDClassifier`."""
import numbers
import types

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from . import _common
from ._lib import as_rows, c_string, call_with_progress, check, cmat, ffi, lib, serial_blas
from ._sklearn_compat import TagsMixin, validate_data
from .kernels import Kernel

STRATEGIES = ("features_on_the_fly", "features_cached", "kernel_on_the_fly", "gram_cached")
_LOSSES = ("logistic", "hinge", "squared_hinge")
_SHIFT = ("gaussian", "laplacian", "cauchy", "matern")


def _real(v, name, minimum, strict):
    if not isinstance(v, numbers.Real) or isinstance(v, bool) or not np.isfinite(v):
        raise TypeError("%s must be a finite number, got %r" % (name, v))
    if (strict and not v > minimum) or (not strict and not v >= minimum):
        raise ValueError("%s must be %s %g, got %r" % (name, ">" if strict else ">=", minimum, v))
    return float(v)


class KernelSGDClassifier(TagsMixin, ClassifierMixin, BaseEstimator):
    """A binary classifier f(x) = w.phi(x) trained by stochastic gradient
    descent with a kernel, by the rfx C library (rfx_kernel_sgd_fit), in any
    of the four strategies of the kernel trick (the lecture notes "Kernels
    and the kernel trick" of Cornell's CS4787).

    The objective is ``(1/n) sum_i loss(f(x_i), y_i) + (alpha / 2) |w|^2``
    with labels +-1 and no intercept. Each step draws a row i (with
    replacement, from the seed) and moves w, or its dual coefficients u in
    ``w = sum_j u_j phi(x_j)``, along the loss's gradient at that row with
    step ``eta0 / (1 + t / t0)`` (constant eta0 when t0 = 0). The strategies
    trade time against memory, for n rows of dimension d, D features, T
    steps:

    ======================  ==========  ==================  ========
    strategy                space       time                memory
    ======================  ==========  ==================  ========
    ``features_on_the_fly``  w          O(d D T)            O(D)
    ``features_cached``      w          O(n d D + D T)      O(n D)
    ``kernel_on_the_fly``    u          O(n d T)            O(n)
    ``gram_cached``          u          O(n^2 d + n T)      O(n^2)
    ======================  ==========  ==================  ========

    The weight-space strategies use random Fourier features of ``kernel``
    (n_components of them); the dual-space ones the kernel itself: the exact
    kernel (``exact_kernel=True``, or any :class:`rfx.Kernel` as ``kernel``)
    or the kernel of the same feature map (``exact_kernel=False``), with
    which all four strategies fit the same model up to rounding.

    The C library has no model file for kernel SGD: pickles keep the
    training rows and labels and fit again on loading (the same seed gives
    the same bits).

    Parameters
    ----------
    strategy : {"features_on_the_fly", "features_cached", "kernel_on_the_fly", \
"gram_cached"}, default="gram_cached"
        The hyphenated spelling of the C library ("gram-cached") is accepted
        with a FutureWarning.
    loss : {"logistic", "hinge", "squared_hinge"}, default="logistic"
    kernel : {"gaussian", "laplacian", "cauchy", "matern"} or rfx.Kernel, default="gaussian"
        A shift-invariant kernel by name (with ``gamma`` or
        ``length_scale``, ``nu``), or any :class:`rfx.Kernel` for the
        dual-space strategies.
    gamma : float, "scale" or None, default=None
        scikit-learn's gamma (gaussian, laplacian); None: gamma=1 for those,
        length scale 1 for cauchy and matern.
    length_scale : float, array-like of shape (n_features_in_,) or None, default=None
        The length scale instead of gamma (an array: one per input).
    nu : float, default=1.5
        Matern smoothness.
    n_components : int, default=256
        D, the random features of the weight-space strategies (and of the
        kernel with ``exact_kernel=False``).
    form : {"cos_bias", "cos_sin"}, default="cos_bias"
    structure : {"iid", "orthogonal", "sorf", "fastfood", "halton"}, default="iid"
    exact_kernel : bool, default=True
        For the dual-space strategies and a kernel given by name: the exact
        kernel (True), or the kernel of the random feature map (False).
    eta0 : float > 0, default=0.1
        The step size.
    t0 : float >= 0, default=0.0
        0: a constant step; > 0: the step ``eta0 / (1 + t / t0)``.
    alpha : float >= 0, default=0.0
        The L2 penalty (the C library's lambda); ``eta0 * alpha < 1``.
    n_iter : int >= 1 or None, default=None
        T, the number of steps; None is 20 n.
    cache_limit : int >= 1 or None, default=None
        The most bytes the cache (Z or G) may take; a larger one is a
        MemoryError before anything is allocated. None: no limit.
    random_state : int, RandomState instance or None, default=None
        The seed of the row sequence and of the feature map.
    n_jobs : int or None, default=None
        Threads for the caches and decision values (the steps themselves are
        sequential). Results never depend on it.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[1]`` is the label +1.
    n_features_in_ : int
    seed_ : int
    coef_ : ndarray of shape (n_components,)
        w (weight-space strategies only).
    dual_coef_ : ndarray of shape (n_samples,)
        u, one per training row (dual-space strategies only).
    n_iter_ : int
        T, the steps taken.
    n_support_ : int
        Dual-space strategies: the rows with u_j != 0 (0 otherwise).
    flops_ : float
        The fit's cost in the lecture's model (see rfx_kernel_sgd_info).
    memory_bytes_ : int
        The memory of the fit beyond the training rows (cache and state).
    feature_evals_, kernel_evals_ : int
        Rows mapped through phi, kernel values computed.

    Examples
    --------
    >>> import numpy as np
    >>> from rfx import KernelSGDClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(0, 1, size=(200, 2))
    >>> y = np.where(np.hypot(X[:, 0] - 0.5, X[:, 1] - 0.5) < 0.3, "in", "out")
    >>> clf = KernelSGDClassifier(gamma=20.0, random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.9)
    True
    >>> w = KernelSGDClassifier("features_cached", gamma=20.0, exact_kernel=False,
    ...                         random_state=0).fit(X, y)
    >>> u = KernelSGDClassifier("gram_cached", gamma=20.0, exact_kernel=False,
    ...                         random_state=0).fit(X, y)
    >>> bool(np.allclose(w.decision_function(X), u.decision_function(X), rtol=0, atol=1e-9))
    True
    >>> u.memory_bytes_ == 8 * 200 * 200 + 8 * 200  # the Gram matrix and u
    True
    """

    _rfx_tags = {"binary_only": True}

    def __init__(self, strategy="gram_cached", *, loss="logistic", kernel="gaussian", gamma=None,
                 length_scale=None, nu=1.5, n_components=256, form="cos_bias", structure="iid",
                 exact_kernel=True, eta0=0.1, t0=0.0, alpha=0.0, n_iter=None, cache_limit=None,
                 random_state=None, n_jobs=None):
        self.strategy = strategy
        self.loss = loss
        self.kernel = kernel
        self.gamma = gamma
        self.length_scale = length_scale
        self.nu = nu
        self.n_components = n_components
        self.form = form
        self.structure = structure
        self.exact_kernel = exact_kernel
        self.eta0 = eta0
        self.t0 = t0
        self.alpha = alpha
        self.n_iter = n_iter
        self.cache_limit = cache_limit
        self.random_state = random_state
        self.n_jobs = n_jobs

    # -- the C objects --------------------------------------------------
    def _strategy(self):
        s = _common.option_name(self.strategy, "strategy")
        if not isinstance(s, str) or s not in STRATEGIES:
            raise ValueError("strategy must be one of %s, got %r" % (", ".join(STRATEGIES),
                                                                      self.strategy))
        out = ffi.new("rfx_sgd_strategy *")
        check(lib.rfx_sgd_strategy_from_name(_common.c_option_name(s).encode(), out))
        return int(out[0])

    def _params(self, n, seed, threads):
        p = ffi.new("rfx_kernel_sgd_params *", lib.rfx_kernel_sgd_params_default())
        p.strategy = self._strategy()
        loss = _common.option_name(self.loss, "loss")
        if not isinstance(loss, str) or loss not in _LOSSES:
            raise ValueError("loss must be one of %s, got %r" % (", ".join(_LOSSES), self.loss))
        out = ffi.new("rfx_loss *")
        check(lib.rfx_loss_from_name(_common.c_option_name(loss).encode(), out))
        p.loss = out[0]
        p.alpha = _real(self.eta0, "eta0", 0.0, strict=True)
        p.t0 = _real(self.t0, "t0", 0.0, strict=False)
        setattr(p, "lambda", _real(self.alpha, "alpha", 0.0, strict=False))
        p.n_iter = _common.check_count(self.n_iter, "n_iter", 1, allow_none=True) or 0
        p.seed = seed
        p.n_threads = threads
        p.cache_limit = _common.check_count(self.cache_limit, "cache_limit", 1,
                                            allow_none=True) or 0
        return p

    def _make(self, X, seed, threads):
        """(kernel or None, feature map or None, what they refer to) for X."""
        d = X.shape[1]
        weight_space = self._strategy() < 2
        if isinstance(self.kernel, Kernel):
            if weight_space:
                raise ValueError("strategy=%r needs a feature map: give kernel by name (%s), "
                                 "not an rfx.Kernel" % (self.strategy, ", ".join(_SHIFT)))
            return self.kernel._handle, ffi.NULL, [self.kernel]
        if not isinstance(self.kernel, str) or self.kernel not in _SHIFT + ("rbf",):
            raise ValueError("kernel must be one of %s or an rfx.Kernel, got %r"
                             % (", ".join(_SHIFT), self.kernel))
        spec = types.SimpleNamespace(
            kernel=self.kernel, nu=self.nu, form=self.form, n_components=self.n_components,
            length_scale=self.length_scale, gamma=self.gamma, activation="cos", sparsity=None,
            weights="kernel", weight_scale=1.0, structure=self.structure)
        scale = _common.resolve_scale(spec, X, d, allow_auto=False)
        fp, keep = _common.features_params(spec, seed, scale, threads)
        fo = ffi.new("rfx_features **")
        check(lib.rfx_features_create(fp, d, fo))
        f = ffi.gc(fo[0], lib.rfx_features_free)
        del keep
        if weight_space:
            return ffi.NULL, f, [f]
        ko = ffi.new("rfx_kern **")
        if self.exact_kernel:
            got = lib.rfx_features_get_params(f)
            check(lib.rfx_kern_shift(got.kernel, got.nu, got.length_scale, got.length_scales, d,
                                     ko))
        else:
            check(lib.rfx_kern_features(f, ko))
        k = ffi.gc(ko[0], lib.rfx_kern_free)
        return k, ffi.NULL, [k, f]

    def _fit_c(self, X, ypm, seed):
        threads = _common.resolve_threads(self.n_jobs)
        if isinstance(self.kernel, Kernel) and self.kernel._keep:
            threads = 1  # Python callbacks in the kernel: one thread holds the GIL anyway
        p = self._params(X.shape[0], seed, threads)
        k, f, keep = self._make(X, seed, threads)
        out = ffi.new("rfx_kernel_sgd **")
        y_ptr = ffi.cast("const double *", ypm.ctypes.data)

        def fit(params):
            return lib.rfx_kernel_sgd_fit(k, f, cmat(X), y_ptr, params, out)

        try:
            call_with_progress(fit, p, label=type(self).__name__)
        finally:
            model = ffi.gc(out[0], lib.rfx_kernel_sgd_free) if out[0] != ffi.NULL else None
        del keep
        self._sgd = model

    # -- scikit-learn ---------------------------------------------------
    @_common.keeps_state_on_error
    def fit(self, X, y):
        """Fit on X (n_samples, n_features) and two classes of labels y
        (n_samples,). On any error the estimator is left as it was."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        classes, idx = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            raise ValueError("KernelSGDClassifier needs samples of 2 classes, but the data "
                             "contains only one class: %r" % (classes[0],))
        if len(classes) > 2:
            raise ValueError("KernelSGDClassifier is a binary classifier: y holds %d classes"
                             % len(classes))
        X = as_rows(X)
        ypm = np.where(idx == 1, 1.0, -1.0)
        seed = _common.resolve_seed(self.random_state)
        for name in ("coef_", "dual_coef_"):
            self.__dict__.pop(name, None)
        self._fit_c(X, ypm, seed)
        self.classes_ = classes
        self.seed_ = seed
        self._X_fit, self._y_pm = X, ypm
        self._read_results()
        return self

    def _read_results(self):
        m = self._sgd
        n = ffi.new("size_t *")
        w = lib.rfx_kernel_sgd_weights(m, n)
        if w != ffi.NULL:
            self.coef_ = np.frombuffer(ffi.buffer(w, 8 * n[0]), dtype=np.float64).copy()
        u = lib.rfx_kernel_sgd_dual(m, n)
        if u != ffi.NULL:
            self.dual_coef_ = np.frombuffer(ffi.buffer(u, 8 * n[0]), dtype=np.float64).copy()
        info = ffi.new("rfx_kernel_sgd_info *")
        check(lib.rfx_kernel_sgd_get_info(m, info))
        self.n_iter_ = int(info.n_iter)
        self.n_support_ = int(info.n_support)
        self.feature_evals_ = int(info.feature_evals)
        self.kernel_evals_ = int(info.kernel_evals)
        flops = ffi.new("double *")
        nbytes = ffi.new("size_t *")
        check(lib.rfx_kernel_sgd_cost(m, flops, nbytes))
        self.flops_ = float(flops[0])
        self.memory_bytes_ = int(nbytes[0])
        self.strategy_ = c_string(lib.rfx_sgd_strategy_name(info.strategy)).replace("-", "_")

    def decision_function(self, X):
        """f(X) = w.phi(x) or sum_j u_j k(x_j, x), of shape (n_samples,):
        positive means classes_[1]."""
        check_is_fitted(self)
        X = as_rows(validate_data(self, X, dtype=np.float64, reset=False))
        out = np.empty(X.shape[0])
        with serial_blas:
            check(lib.rfx_kernel_sgd_decision(self._sgd, cmat(X),
                                              ffi.cast("double *", out.ctypes.data)))
        return out

    def predict(self, X):
        """classes_[1] where the decision value is > 0, else classes_[0]."""
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]

    def __getstate__(self):
        state = dict(super().__getstate__())
        state.pop("_sgd", None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if "_X_fit" in self.__dict__:  # fit again: the same rows and seed give the same bits
            self._fit_c(self._X_fit, self._y_pm, self.seed_)
