# SPDX-License-Identifier: BSD-3-Clause
"""The projection of the self-supervised surrogates over the rfx C library
(rfx/projection.h): :class:`KernelPCA`, anisotropic kernel PCA (exact or by
random features), and :class:`ProjectedRegressor`, a surrogate on a kernel
PCA whose input weights a particle swarm learns (rfx_projected_fit)."""
import numbers

import numpy as np
from sklearn.base import (BaseEstimator, ClassNamePrefixFeaturesOutMixin, RegressorMixin,
                          TransformerMixin)
from sklearn.utils.validation import check_is_fitted

from . import _common
from ._lib import (as_rows, call_with_progress, check, check_verbose, cmat, cmat_to_array, ffi,
                   lib, mat, mat_none, serial_blas)
from ._model import _ModelFile, _weights_ptr, input_box, sample_weights
from ._sklearn_compat import validate_data

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
        Threads, as scikit-learn reads n_jobs: None is 1 (or the n_jobs
        of an enclosing ``joblib.parallel_config`` context), -1 all cores,
        -2 all but one. Results never depend on it.

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
        X = as_rows(validate_data(self, X, dtype=np.float64))
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
        X = as_rows(validate_data(self, X, dtype=np.float64, reset=False))
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


# ---------------------------------------------------------------------------
# The self-supervised projection
# ---------------------------------------------------------------------------

_SURROGATES = {"ridge": 0, "bayes": 1, "srfe": 2, "pce": 4, "auto": 5}
_SURROGATE_NAMES = {v: k for k, v in _SURROGATES.items()}


def _opt_count(v, name, minimum):
    """None -> 0 (the C library chooses); an int >= minimum -> itself."""
    if v is None:
        return 0
    return _common.check_count(v, name, minimum)


class ProjectedRegressor(RegressorMixin, _ModelFile):
    """A surrogate on a learned kernel PCA of the inputs (the
    self-supervised projection, Algorithm 1 of the talk rfx started from),
    fitted by the rfx C library (rfx_projected_fit, rfx/projection.h).

    Kernel PCA with the anisotropic kernel
    ``exp(-gamma sum_i theta_i (x_i - y_i)^2)`` maps the (standardised)
    inputs to ``n_components`` scores; a surrogate (ridge or Bayesian random
    features, a sparse random feature expansion or a polynomial chaos
    expansion) is fitted on the scores. The weights ``theta`` in [0, 1] are
    chosen by a particle swarm minimising a fast cross-validation score of a
    regression on the scores, started from a screening of the inputs one at
    a time; ``gamma`` and ``n_components``, when None, are chosen at the
    screened weights from a grid. Inputs that do not matter end with weight
    0, so the model does not depend on them at all. One target.

    Parameters
    ----------
    n_components : int or None, default=None
        k, the kernel PCA components the surrogate sees; None chooses k in
        1..8 (at most n_samples - 1).
    surrogate : {"auto", "ridge", "bayes", "srfe", "pce"}, default="auto"
        The model on the scores (1000 random features for ridge / bayes,
        4000 for srfe, degree 3 with LARS for pce; see
        ``surrogate_components``). "auto": after a search, srfe's GCV
        ranks the finalists (see ``n_finalists_``); ridge, srfe and pce are
        each fitted to the scores of the finalists' projection and of the
        swarm's own (srfe only on the finalists'), and the one of least own
        error estimate (5-fold CV at ridge's and srfe's chosen
        hyperparameters, corrected leave-one-out for pce) is kept
        (``surrogate_``, ``surrogate_scores_``; ties go to the swarm's
        projection). Where every y > 0 the same candidates are also
        fitted to log y, predicting exp of their fit, each scored by 5-fold
        CV of y (``surrogate_log_scores_``, ``surrogate_transform_``).
    n_particles : int, default=10
        Swarm size.
    iterations : int, default=20
        Swarm iterations at most.
    patience : int, default=5
        Stop after this many iterations without a better loss; 0 = never.
    n_folds : int or None, default=None
        None: the swarm minimises the fast score (ridge GCV on 128 random
        features of the scores); an int >= 2: the k-fold cross-validation
        error of the surrogate itself (slower).
    gamma : float > 0 or None, default=None
        The kernel scale; None chooses it from 10^-2.5 .. 1.
    theta : array-like of shape (n_features_in_,) or None, default=None
        Fixed weights in [0, 1] (not all 0): no swarm.
    surrogate_components : int or None, default=None
        The surrogate's random features (ridge, bayes, srfe); None = the
        defaults above.
    standardize : bool, default=True
        Standardise the inputs for the kernel (the model keeps the scaler).
    random_state : int, RandomState instance or None, default=None
        An int is the C library's seed (``rfx fit --method projected
        --seed``): the same int gives the same model, bit for bit.
    n_jobs : int or None, default=None
        Threads (particles are evaluated concurrently), as scikit-learn
        reads n_jobs: None is 1 (or the n_jobs of an enclosing
        ``joblib.parallel_config`` context), -1 all cores, -2 all but one.
        Results never depend on it.
    verbose : int, default=0
        1 prints the swarm's progress to stderr; Ctrl-C stops the fit.

    Attributes
    ----------
    n_features_in_ : int
    seed_ : int
    theta_ : ndarray of shape (n_features_in_,)
        The weights used.
    n_components_ : int
        k used (chosen or given).
    gamma_ : float
        The kernel scale used.
    loss_ : float
        The loss of the fitted model (a relative mean squared error, 1 = the
        constant predictor): the swarm's best; or, after the finalists
        (surrogate "auto", "srfe" or "pce") and with a given theta, the
        surrogate's own estimate (ridge and srfe: 5-fold CV at their chosen
        hyperparameters; pce: corrected leave-one-out; bayes: 5-fold CV).
    search_loss_ : float
        The swarm's best loss, ``loss_history_[-1]`` (NaN with a given
        theta).
    surrogate_ : str
        The surrogate the model holds.
    surrogate_scores_ : dict or None
        With surrogate="auto": the own relative error estimate of each
        candidate on the scores of the chosen projection (NaN when it could
        not be fitted).
    surrogate_log_scores_ : dict or None
        With surrogate="auto": the same for the candidates fitted to log y
        (NaN when not tried: some y <= 0).
    surrogate_transform_ : str
        The transform the surrogate is fitted through ("log": fitted to log
        y, it predicts exp of its fit; "none").
    n_finalists_ : int
        Candidates (theta, gamma, k) the srfe or pce surrogate's own score
        (srfe's for "auto")
        chose among after the swarm: the swarm's theta, the screened
        theta_0 and a second screening's (of the weak inputs against the
        residual), each with the chosen and three other kernel scales and
        two k (0 for ridge and bayes, with ``n_folds`` or a given theta).
    loss_history_ : ndarray of shape (n_iterations_ + 1,)
        The best loss after the swarm's start and after each iteration
        (empty with a given theta).
    theta0_loss_ : float
        The loss at the screened start theta_0 (NaN with a given theta).
    n_iterations_, n_evaluations_ : int

    The fitted model is an rfx model (method "projected"): :meth:`save`
    writes the model file that ``rfx predict``, ``rfx info`` and
    ``rfx sobol`` read, and pickling stores that file's bytes.

    Examples
    --------
    >>> import numpy as np, rfx
    >>> from rfx.projection import ProjectedRegressor
    >>> X = np.random.RandomState(0).uniform(size=(120, 6))
    >>> y = np.sin(3 * X[:, 0]) + X[:, 1]
    >>> reg = ProjectedRegressor(n_particles=4, iterations=3, random_state=0).fit(X, y)
    >>> bool(reg.theta_[0] > reg.theta_[5])
    True
    """

    def __init__(self, n_components=None, *, surrogate="auto", n_particles=10, iterations=20,
                 patience=5, n_folds=None, gamma=None, theta=None, surrogate_components=None,
                 standardize=True, random_state=None, n_jobs=None, verbose=0):
        self.n_components = n_components
        self.surrogate = surrogate
        self.n_particles = n_particles
        self.iterations = iterations
        self.patience = patience
        self.n_folds = n_folds
        self.gamma = gamma
        self.theta = theta
        self.surrogate_components = surrogate_components
        self.standardize = standardize
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _params(self, d):
        """The rfx_projected_params struct and what it points to (kept
        alive by the caller)."""
        p = ffi.new("rfx_projected_params *", lib.rfx_projected_params_default())
        keep = []
        p.n_components = _opt_count(self.n_components, "n_components", 1)
        if not isinstance(self.surrogate, str) or self.surrogate not in _SURROGATES:
            raise ValueError("surrogate must be one of %s, got %r"
                             % (", ".join(_SURROGATES), self.surrogate))
        p.surrogate = _SURROGATES[self.surrogate]
        p.n_particles = _common.check_count(self.n_particles, "n_particles", 1)
        p.iterations = _common.check_count(self.iterations, "iterations", 1)
        p.patience = _common.check_count(self.patience, "patience", 0)
        p.n_folds = _opt_count(self.n_folds, "n_folds", 2)
        if self.gamma is not None:
            if not isinstance(self.gamma, numbers.Real) or isinstance(self.gamma, bool):
                raise TypeError("gamma must be a number > 0 or None, got %r" % (self.gamma,))
            if not (self.gamma > 0 and np.isfinite(self.gamma)):
                raise ValueError("gamma must be > 0 and finite, or None, got %r" % (self.gamma,))
            p.gamma = float(self.gamma)
        if self.theta is not None:
            theta = np.ascontiguousarray(self.theta, dtype=np.float64)
            if theta.shape != (d,):
                raise ValueError("theta has shape %s, expected (%d,)" % (theta.shape, d))
            keep.append(theta)
            p.theta = ffi.cast("const double *", theta.ctypes.data)
        n_feat = _opt_count(self.surrogate_components, "surrogate_components", 1)
        if n_feat:
            if self.surrogate == "pce":
                raise ValueError("surrogate_components: the pce surrogate has no random features")
            fp = ffi.new("rfx_fit_params *", lib.rfx_fit_params_default())
            fp.features.n_features = n_feat
            sp = ffi.new("rfx_srfe_params *", lib.rfx_srfe_params_default())
            sp.features.n_features = n_feat
            sp.widen_rounds = 0  # the projected fit's default srfe
            keep += [fp, sp]
            p.fit = fp
            p.srfe = sp
        p.standardize = int(bool(self.standardize))
        seed = _common.resolve_seed(self.random_state)
        p.seed = seed
        p.n_threads = _common.resolve_threads(self.n_jobs)
        return p, keep, seed

    @_common.keeps_state_on_error
    def fit(self, X, y, sample_weight=None):
        """Fit on X (n_samples, n_features) and y (n_samples,).

        sample_weight (n_samples,), finite and >= 0, weights everything
        that looks at y: the variance that makes the losses relative, the
        fast score (a weighted ridge and its GCV), k-fold CV (the weighted
        held-out error), the surrogate's fit and its own error estimate
        (which rank the finalists and the automatic surrogate). The kernel
        PCA is not weighted: the projection describes the inputs as
        sampled, and never sees y; so an integer weight is not a repeated
        row, but a row of weight 0 is a row left out. Weights are relative:
        equal weights are no weights, bit for bit (rfx/projection.h, "Row
        weights"). On any error (or a cancelled fit) the estimator is left
        as it was."""
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        sw = sample_weights(sample_weight, X)
        n, d = X.shape
        if (n if sw is None else np.count_nonzero(sw)) < 3:
            raise ValueError("n_samples=%d: at least 3 samples are needed to fit"
                             % (n if sw is None else np.count_nonzero(sw)))
        verbose = check_verbose(self.verbose)
        p, keep, seed = self._params(d)
        p.sample_weight = _weights_ptr(sw)
        X = as_rows(X)
        Y = np.ascontiguousarray(y, dtype=np.float64).reshape(n, 1)
        iters = int(p.iterations)
        theta = np.empty(d)
        hist = np.empty(iters + 1)
        rep = ffi.new("rfx_projected_report *")
        rep.theta = ffi.cast("double *", theta.ctypes.data)
        rep.history = ffi.cast("double *", hist.ctypes.data)
        out = ffi.new("rfx_model **")
        call_with_progress(lib.rfx_projected_fit, p, cmat(X), cmat(Y), out, rep,
                           label=type(self).__name__, verbose=verbose, out=out)
        del keep
        self._model = ffi.gc(out[0], lib.rfx_model_free)
        self._input_box = input_box(X, sw)  # the model file's training box
        self.seed_ = seed
        self.n_iterations_ = int(rep.n_iterations)
        self.n_evaluations_ = int(rep.evaluations)
        self.loss_history_ = hist[:self.n_iterations_ + 1].copy() if self.theta is None \
            else np.empty(0)
        self.theta0_loss_ = float(rep.theta0_loss)
        self.search_loss_ = float(rep.search_loss)
        self.n_finalists_ = int(rep.finalists)
        self.surrogate_scores_ = (
            {name: float(rep.surrogate_scores[i]) for i, name in enumerate(("ridge", "srfe", "pce"))}
            if self.surrogate == "auto" else None)
        self.surrogate_log_scores_ = (
            {name: float(rep.surrogate_log_scores[i])
             for i, name in enumerate(("ridge", "srfe", "pce"))}
            if self.surrogate == "auto" else None)
        self._read_info()
        return self

    def _read_info(self):
        info = ffi.new("rfx_projected_info *")
        check(lib.rfx_model_projected_info(self._model, info))
        d = int(info.n_inputs)
        self.n_features_in_ = d
        self.n_components_ = int(info.n_components)
        self.gamma_ = float(info.gamma)
        self.loss_ = float(info.loss)
        self.theta_ = np.frombuffer(ffi.buffer(info.theta, 8 * d), dtype=np.float64).copy()
        mi = ffi.new("rfx_model_info *")
        check(lib.rfx_model_get_info(info.surrogate, mi))
        self._has_std = bool(mi.has_std)
        self.surrogate_ = _SURROGATE_NAMES.get(int(mi.method), "ridge")
        self.surrogate_transform_ = ffi.string(
            lib.rfx_target_transform_name(mi.target_transform)).decode()
        return info

    @classmethod
    def _from_model(cls, model, n_jobs=None):
        """A fitted estimator around a projected rfx model (from a file):
        the parameters are those the file records (k, gamma, the surrogate,
        theta as fixed weights)."""
        info = ffi.new("rfx_projected_info *")
        check(lib.rfx_model_projected_info(model, info))
        mi = ffi.new("rfx_model_info *")
        check(lib.rfx_model_get_info(info.surrogate, mi))
        d = int(info.n_inputs)
        theta = np.frombuffer(ffi.buffer(info.theta, 8 * d), dtype=np.float64).copy()
        est = cls(int(info.n_components), surrogate=_SURROGATE_NAMES.get(int(mi.method), "ridge"),
                  gamma=float(info.gamma), theta=theta, standardize=bool(info.standardized),
                  n_jobs=n_jobs)
        est._model = model
        est.loss_history_ = np.empty(0)
        est.theta0_loss_ = float("nan")
        est.search_loss_ = float("nan")
        est.n_finalists_ = 0
        est.surrogate_scores_ = None
        est.surrogate_log_scores_ = None
        est.n_iterations_ = 0
        est.n_evaluations_ = 0
        est._read_info()
        return est

    def predict(self, X, return_std=False):
        """Predictions, of shape (n_samples,); with return_std=True (a bayes
        surrogate only) also the predictive standard deviations."""
        check_is_fitted(self)
        X = as_rows(validate_data(self, X, dtype=np.float64, reset=False))
        n = X.shape[0]
        y = np.empty((n, 1))
        if return_std and not self._has_std:
            raise ValueError("return_std: only a bayes surrogate has predictive standard "
                             "deviations, this one is %r" % (self.surrogate,))
        s = np.empty((n, 1)) if return_std else None
        with serial_blas:
            check(lib.rfx_model_predict(self._model, cmat(X), mat(y),
                                        mat(s) if return_std else mat_none()))
        return (y[:, 0], s[:, 0]) if return_std else y[:, 0]
