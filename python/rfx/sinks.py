# SPDX-License-Identifier: BSD-3-Clause
"""Random kitchen sinks and the greedy baseline they replace (rfx/sinks.h):
:class:`KitchenSinksRegressor` fits only the weights of K random
nonlinearities, inside the box |alpha_k| <= C / K (rfx_sinks_fit), and
:class:`KitchenSinksClassifier` the same with the logistic or squared hinge
loss; :class:`GreedyRegressor` chooses and refines one nonlinearity at a
time (rfx_greedy_fit). All are rfx models (RFX_METHOD_SINKS,
RFX_METHOD_GREEDY): saved, loaded and pickled as the other regressors."""
import numbers
import types

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from . import _common
from ._lib import as_rows, check, cmat, ffi, lib, mat, serial_blas
from ._model import _RFXModel
from ._sklearn_compat import TagsMixin, validate_data

_MAP_PARAMS_DOC = """\
    kernel : {"gaussian", "laplacian", "cauchy", "matern"}, default="gaussian"
        With ``weights="kernel"``: the frequencies w are drawn from this
        kernel's spectral density; see :class:`rfx.RandomFourierFeatures`.
    nu : float, default=1.5
        Matern smoothness (kernel="matern").
    length_scale : float, array-like of shape (n_features_in_,) or None, default=None
        The kernel length scale, in the units of X (an array: one per
        input). Give gamma or length_scale, not both; neither is gamma=1
        for the gaussian and laplacian kernels, length scale 1 otherwise.
    gamma : float, "scale" or None, default=None
        scikit-learn's gamma instead of a length scale (gaussian, laplacian).
    activation : {"cos", "sin", "tanh", "sigmoid", "relu", "sign"}, default="cos"
        The nonlinearity phi of the terms phi(w.x + b), b ~ U(0, 2 pi) (b = 0
        with ``form="phase_free"``).
    sparsity : int or None, default=None
        q, the number of nonzero coordinates of each w; None uses all inputs.
    weights : {"kernel", "normal", "uniform"}, default="kernel"
        Where the nonzero coordinates of w come from: the kernel's spectral
        density, or N(0, s^2) or U(-s, s) with s = weight_scale.
    weight_scale : float, default=1.0
        s, for weights="normal" or "uniform"."""

_COMMON_TAIL_DOC = """\
    fit_intercept : bool, default=True
        Fit a free intercept c (outside any constraint).
    random_state : int, RandomState instance or None, default=None
        The seed of the random draws. An int is the C library's seed as it
        is: the same int gives the same model as the C API.
    n_jobs : int or None, default=None
        Threads, as scikit-learn reads n_jobs: None is 1 (or the n_jobs of
        an enclosing ``joblib.parallel_config`` context), -1 all cores.
        Results never depend on it."""


def _doc(cls):
    cls.__doc__ = cls.__doc__.replace("%(map)s", _MAP_PARAMS_DOC).replace(
        "%(tail)s", _COMMON_TAIL_DOC)
    return cls


def _box(v):
    """The C library's params.C for the estimator's C: 0 for "cv"."""
    if isinstance(v, str):
        if v != "cv":
            raise ValueError("C must be a number > 0, inf or 'cv', got %r" % v)
        return 0.0
    return _positive_real(v, "C", allow_inf=True)


def _positive_real(v, name, allow_inf=False):
    if not isinstance(v, numbers.Real) or isinstance(v, bool):
        raise TypeError("%s must be a number, got %r" % (name, v))
    v = float(v)
    if not v > 0 or (np.isinf(v) and not allow_inf) or np.isnan(v):
        raise ValueError("%s must be > 0%s, got %r" % (name, " (inf: none)" if allow_inf
                                                        else " and finite", v))
    return v


class _SeedBase(_RFXModel):
    """What the kitchen-sinks and greedy estimators share: one output
    column, a feature map from the estimator's parameters, the fitted
    model's attributes."""

    def _spec(self, n_features):
        """The feature-map parameters as _common.features_params reads them."""
        return types.SimpleNamespace(
            kernel=self.kernel, nu=self.nu, form=getattr(self, "form", "cos_bias"),
            n_components=n_features, length_scale=self.length_scale, gamma=self.gamma,
            activation=self.activation, sparsity=self.sparsity, weights=self.weights,
            weight_scale=self.weight_scale, structure=getattr(self, "structure", "iid"))

    def _finish_fit(self, model, seed, X):
        self._model = ffi.gc(model, lib.rfx_model_free)
        self.seed_ = seed
        self._input_box = (X.min(axis=0), X.max(axis=0))
        self._read_info()

    def _one_target(self):
        return True

    def _fit_sinks(self, X, y, loss, labels=False):
        """rfx_sinks_fit of X and y (targets, or +1 / -1 labels) with the
        loss, or with labels=True rfx_sinks_classify of X and the labels y
        (class indices); the report's fields into the attributes."""
        threads = _common.resolve_threads(self.n_jobs)
        spec = self._spec(_common.check_n_components(self.n_components))
        scale = _common.resolve_scale(spec, X, X.shape[1], allow_auto=False)
        seed = _common.resolve_seed(self.random_state)
        fp, keep = _common.features_params(spec, seed, scale, threads)
        sp = ffi.new("rfx_sinks_params *", lib.rfx_sinks_params_default())
        sp.loss = loss
        sp.C = _box(self.C)
        sp.fit_intercept = int(bool(self.fit_intercept))
        sp.max_iter = _common.check_count(self.max_iter, "max_iter", 1)
        sp.tol = _positive_real(self.tol, "tol")
        sp.n_threads = threads
        f = ffi.new("rfx_features **")
        check(lib.rfx_features_create(fp, X.shape[1], f))
        feats = ffi.gc(f[0], lib.rfx_features_free)
        del keep
        out = ffi.new("rfx_model **")
        report = ffi.new("rfx_sinks_report *")
        fit = lib.rfx_sinks_classify if labels else lib.rfx_sinks_fit
        with serial_blas:
            check(fit(feats, cmat(X), ffi.cast("const double *", y.ctypes.data), sp, out, report))
        self._finish_fit(out[0], seed, X)
        self.C_ = float(report.C)
        n_cv = int(report.n_cv)
        self.cv_C_ = np.array([report.cv_C[g] for g in range(n_cv)]) if n_cv else None
        self.cv_loss_ = np.array([report.cv_loss[g] for g in range(n_cv)]) if n_cv else None
        self.n_iter_ = int(report.iterations)
        self.newton_steps_ = int(report.newton_steps)
        self.objective_ = float(report.objective)
        self.kkt_ = float(report.kkt)
        self.n_at_bound_ = int(report.n_at_bound)
        self.converged_ = bool(report.converged)


class _SeedModel(RegressorMixin, _SeedBase):
    """What the two regressors share: predictions of the rfx model, the
    parameters of a model read from a file."""

    def _fit_checks(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        if X.shape[0] < 2:
            raise ValueError("n_samples=%d: at least 2 samples are needed to fit"
                             % X.shape[0])
        return as_rows(X), np.ascontiguousarray(y, dtype=np.float64)

    def predict(self, X):
        """Predictions f(X), of shape (n_samples,)."""
        Yhat, _ = self._predict_raw(X)
        return Yhat[:, 0]


@_doc
class KitchenSinksRegressor(_SeedModel):
    """Random kitchen sinks (Rahimi & Recht, NIPS 2008) for regression,
    fitted by the rfx C library (rfx_sinks_fit).

    K nonlinearities phi(w_k.x + b_k) are drawn at random (an rfx feature
    map: any activation, any weight distribution) and only their weights
    are fitted, by least squares inside the paper's box::

        min_{alpha, c}  (1/n) sum_i (1/2) (alpha.z(x_i) + c - y_i)^2
        subject to      |alpha_k| s <= C / K   for every k

    with z the feature map and s its column scale (``sqrt(2 / K)`` for
    ``activation="cos"``, else 1): the weights of the unscaled
    nonlinearities are at most C / K in magnitude. The solver is FISTA with
    the projection onto the box and adaptive restarts, then projected
    Newton steps (see rfx/sinks.h). ``C=inf`` removes the box (plain least
    squares on the features). Inputs are used as given: scale them first
    (e.g. with StandardScaler in a pipeline) when their units differ.

    Model files hold the feature map, the weights and the intercept, not
    the solver's settings: a model read by :func:`rfx.load_model` predicts
    bitwise the same, with ``C``, ``max_iter`` and ``tol`` at their
    defaults.

    Parameters
    ----------
    n_components : int, default=256
        K, the number of random nonlinearities.
%(map)s
    form : {"cos_bias", "cos_sin", "phase_free"}, default="cos_bias"
        The layout of cos features; or "phase_free", the terms phi(w.x)
        without a phase (b = 0) for the activations other than cos; see
        :class:`rfx.RandomFourierFeatures`.
    structure : {"iid", "orthogonal", "sorf", "fastfood", "halton"}, default="iid"
        How the frequencies are drawn; see :class:`rfx.RFFRegressor`.
    C : float > 0, inf or "cv", default="cv"
        The box: with |phi| <= 1 the fitted function minus its intercept is
        at most C in magnitude. "cv" chooses it by 5-fold cross-validation
        (held-out squared error) among 1, 4, 16, 64 and 256 times the range
        of y and inf (no box), then refits on all rows (at least 10 rows).
    max_iter : int >= 1, default=5000
        Iterations in all (accelerated gradient and projected Newton steps).
    tol : float > 0, default=1e-6
        Stop when the KKT residual is at most tol times its starting value
        (and at least tol).
%(tail)s

    Attributes
    ----------
    n_features_in_ : int
    feature_names_in_ : ndarray of str (when X had string column names)
    seed_ : int
        The feature seed used.
    length_scale_ : float or ndarray
        The length scale of the map (gamma converted).
    coef_ : ndarray of shape (n_components,)
        alpha, the weights on the (scaled) features z(x).
    intercept_ : float
    n_iter_ : int
        Accelerated gradient iterations run.
    newton_steps_ : int
        Projected Newton steps run.
    objective_ : float
        The empirical risk at the solution.
    kkt_ : float
        The KKT residual at the solution (0 exactly at the optimum).
    n_at_bound_ : int
        Weights on the box's boundary, ``|coef_| s == C_ / K``.
    converged_ : bool
        Whether the KKT residual reached the tolerance within max_iter.
    C_ : float
        The box of the fit (C, or the one cross-validation chose).
    cv_C_, cv_loss_ : ndarray of shape (6,) or None
        With ``C="cv"``: the boxes tried and their mean held-out loss.

    Examples
    --------
    >>> import numpy as np
    >>> from rfx import KitchenSinksRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-1, 1, size=(300, 2))
    >>> y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1]
    >>> reg = KitchenSinksRegressor(n_components=128, length_scale=0.7, C=10.0,
    ...                             random_state=0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.99)
    True
    >>> bound = reg.C / 128  # the box on the unscaled cosines
    >>> bool(np.abs(reg.coef_).max() * np.sqrt(2 / 128) <= bound * (1 + 1e-12))
    True
    """

    _method = 7  # RFX_METHOD_SINKS

    def __init__(self, n_components=256, *, kernel="gaussian", nu=1.5, length_scale=None,
                 gamma=None, form="cos_bias", activation="cos", sparsity=None, weights="kernel",
                 weight_scale=1.0, structure="iid", C="cv", max_iter=5000, tol=1e-6,
                 fit_intercept=True, random_state=None, n_jobs=None):
        self.n_components = n_components
        self.kernel = kernel
        self.nu = nu
        self.length_scale = length_scale
        self.gamma = gamma
        self.form = form
        self.activation = activation
        self.sparsity = sparsity
        self.weights = weights
        self.weight_scale = weight_scale
        self.structure = structure
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.n_jobs = n_jobs

    @_common.keeps_state_on_error
    def fit(self, X, y):
        """Fit on X (n_samples, n_features) and y (n_samples,). On any error
        the estimator is left as it was."""
        X, y = self._fit_checks(X, y)
        self._fit_sinks(X, y, lib.RFX_SINKS_LOSS_SQUARED)
        return self

    @classmethod
    def _from_model_info(cls, model, info, params):
        params.pop("standardize", None)  # kitchen-sink models take X as it is
        return cls(**params)


_SINKS_LOSSES = {"logistic": "RFX_SINKS_LOSS_LOGISTIC",
                 "squared_hinge": "RFX_SINKS_LOSS_SQUARED_HINGE"}


@_doc
class KitchenSinksClassifier(TagsMixin, ClassifierMixin, _SeedBase):
    """Random kitchen sinks (Rahimi & Recht, NIPS 2008) for
    classification, fitted by the rfx C library (rfx_sinks_fit for two
    classes, rfx_sinks_classify for more): K random nonlinearities
    phi(w_k.x + b_k), only their weights fitted inside the paper's box::

        min_{alpha, c}  (1/n) sum_i loss(y_i (alpha.z(x_i) + c))
        subject to      |alpha_k| s <= C / K   for every k

    with y_i = +1 for ``classes_[1]`` and -1 for ``classes_[0]``, the
    logistic loss log(1 + exp(-t)) or the squared hinge (1/2) max(0, 1 -
    t)^2, and s the map's column scale as in :class:`KitchenSinksRegressor`.
    The paper's excess-risk bound O(L C (1/sqrt(n) + 1/sqrt(K))) holds for
    these Lipschitz losses. More than two classes are one-vs-rest: one such
    fit per class (y_i = +1 for the class), all in one box, and the
    probabilities the normalised sigmoids. Inputs are used as given.

    Pickles keep the classifier. For two classes :meth:`save` writes its
    decision function as a kitchen-sinks model, which :func:`rfx.load_model`
    reads back as a :class:`KitchenSinksRegressor` predicting the decision
    values (the labels are not in the file); for more, an rfx classifier
    (read back as :class:`rfx.RFFClassifier` with the labels).

    Parameters
    ----------
    n_components : int, default=256
        K, the number of random nonlinearities.
%(map)s
    form : {"cos_bias", "cos_sin", "phase_free"}, default="cos_bias"
        The layout of cos features; or "phase_free", the terms phi(w.x)
        without a phase (b = 0) for the activations other than cos; see
        :class:`rfx.RandomFourierFeatures`.
    structure : {"iid", "orthogonal", "sorf", "fastfood", "halton"}, default="iid"
        How the frequencies are drawn; see :class:`rfx.RFFRegressor`.
    loss : {"logistic", "squared_hinge"}, default="logistic"
        The margin loss; ``predict_proba`` needs the logistic one.
    C : float > 0, inf or "cv", default="cv"
        The box: with |phi| <= 1 the decision function minus its intercept
        is at most C in magnitude. "cv" chooses it by 5-fold
        cross-validation of the loss among 2, 8, 32, 128 and 512 and inf
        (no box), one box for all classes (at least 10 rows).
    max_iter : int >= 1, default=5000
        Accelerated gradient iterations.
    tol : float > 0, default=1e-6
        Stop when the KKT residual is at most tol times its starting value.
%(tail)s

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str (when X had string column names)
    seed_ : int
    length_scale_ : float or ndarray
    coef_ : ndarray of shape (n_components,) or (n_classes, n_components)
        alpha, the weights on the (scaled) features z(x) (one row per class
        for more than two classes).
    intercept_ : float or ndarray of shape (n_classes,)
    n_iter_, newton_steps_, objective_, kkt_, n_at_bound_, converged_, C_, cv_C_, cv_loss_
        As :class:`KitchenSinksRegressor`'s (no Newton steps here); for more
        than two classes the classes' iterations and weights at the bound
        are summed, their objectives averaged.

    Examples
    --------
    >>> import numpy as np
    >>> from rfx import KitchenSinksClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-2, 2, size=(400, 2))
    >>> y = np.where(np.hypot(X[:, 0], X[:, 1]) < 1.2, "in", "out")
    >>> clf = KitchenSinksClassifier(256, length_scale=0.5, C=50.0, random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.95)
    True
    >>> clf.predict([[0.0, 0.0], [1.9, 1.9]]).tolist()
    ['in', 'out']
    """

    _method = 7  # RFX_METHOD_SINKS (two classes; more: RFX_METHOD_CLASSIFY)

    def __init__(self, n_components=256, *, kernel="gaussian", nu=1.5, length_scale=None,
                 gamma=None, form="cos_bias", activation="cos", sparsity=None, weights="kernel",
                 weight_scale=1.0, structure="iid", loss="logistic", C="cv", max_iter=5000,
                 tol=1e-6, fit_intercept=True, random_state=None, n_jobs=None):
        self.n_components = n_components
        self.kernel = kernel
        self.nu = nu
        self.length_scale = length_scale
        self.gamma = gamma
        self.form = form
        self.activation = activation
        self.sparsity = sparsity
        self.weights = weights
        self.weight_scale = weight_scale
        self.structure = structure
        self.loss = loss
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.n_jobs = n_jobs

    @_common.keeps_state_on_error
    def fit(self, X, y):
        """Fit on X (n_samples, n_features) and two classes of labels y
        (n_samples,). On any error the estimator is left as it was."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        if self.loss not in _SINKS_LOSSES:
            raise ValueError("loss must be one of %s, got %r"
                             % (", ".join(_SINKS_LOSSES), self.loss))
        classes, idx = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            raise ValueError("KitchenSinksClassifier needs at least 2 classes, got 1 class "
                             "(%r)" % (classes[0],))
        if X.shape[0] < 2:
            raise ValueError("n_samples=%d: at least 2 samples are needed to fit" % X.shape[0])
        loss = getattr(lib, _SINKS_LOSSES[self.loss])
        if len(classes) == 2:
            signs = np.ascontiguousarray(np.where(idx == 1, 1.0, -1.0))
            self._fit_sinks(as_rows(X), signs, loss)
        else:
            self._fit_sinks(as_rows(X), np.ascontiguousarray(idx, dtype=np.float64), loss,
                            labels=True)
        self.classes_ = classes
        return self

    def _one_target(self):
        return len(self.classes_) == 2

    def _read_info(self):
        info = super()._read_info()
        if info.method == lib.RFX_METHOD_CLASSIFY:  # the score columns, not the label
            ci = ffi.new("rfx_classifier_info *")
            check(lib.rfx_model_classifier_info(self._model, ci))
            self._n_targets = int(ci.n_columns)
        return info

    def decision_function(self, X):
        """alpha.z(x) + c: of shape (n_samples,) for two classes (positive
        for classes_[1]), else (n_samples, n_classes), one column per class."""
        check_is_fitted(self)
        if len(self.classes_) == 2:
            Yhat, _ = self._predict_raw(X)
            return Yhat[:, 0]
        check_is_fitted(self)
        X = as_rows(validate_data(self, X, dtype=np.float64, reset=False))
        S = np.empty((X.shape[0], len(self.classes_)))
        with serial_blas:
            check(lib.rfx_model_decision(self._model, cmat(X), mat(S)))
        return S

    def predict(self, X):
        """The class labels, of shape (n_samples,)."""
        d = self.decision_function(X)
        if d.ndim == 1:
            return self.classes_[(d > 0).astype(int)]
        return self.classes_[np.argmax(d, axis=1)]

    def _has_proba(self):
        if self.loss != "logistic":
            raise AttributeError("predict_proba needs loss='logistic', not loss=%r" % self.loss)
        return True

    @available_if(_has_proba)
    def predict_proba(self, X):
        """Class probabilities of the logistic model, of shape (n_samples,
        n_classes), columns in the order of classes_: sigmoid(+-f(x)) for
        two classes, else the classes' sigmoids divided by their sum."""
        check_is_fitted(self)
        d = self.decision_function(X)
        if d.ndim == 1:
            p1 = 0.5 * (1.0 + np.tanh(0.5 * d))  # sigmoid, without overflow
            return np.column_stack([1.0 - p1, p1])
        s = 0.5 * (1.0 + np.tanh(0.5 * d))
        return s / s.sum(axis=1, keepdims=True)


@_doc
class GreedyRegressor(_SeedModel):
    """The greedy baseline of random kitchen sinks (Jones 1992; Barron
    1993), fitted by the rfx C library (rfx_greedy_fit): the expansion
    ``f_K(x) = c + sum_k beta_k phi(w_k.x + b_k)`` built one term at a time
    for the squared loss.

    At step k, n_candidates random (w, b) are drawn (a feature map of seed
    ``seed + k * 0x9E3779B97F4A7C15``), the one that lowers the squared
    residual most is chosen, its (w, b) refined by ``refine_steps``
    Levenberg-Marquardt steps, and all coefficients refitted by least
    squares (the orthogonal greedy algorithm of Barron, Cohen, Dahmen &
    DeVore 2008). The training error never increases with k
    (``mse_path_``). Inputs are used as given.

    Model files hold the chosen, refined terms and their coefficients, not
    the search's settings: a model read by :func:`rfx.load_model` predicts
    bitwise the same, with ``n_candidates`` and ``refine_steps`` at their
    defaults.

    Parameters
    ----------
    n_terms : int >= 1, default=32
        K, the number of terms.
%(map)s
    form : {"cos_bias", "phase_free"}, default="cos_bias"
        The candidates phi(w.x + b), b ~ U(0, 2 pi), or phi(w.x) with b = 0
        (activations other than cos; the refinement then keeps b = 0).
    n_candidates : int >= 1, default=64
        M, the random candidates scored at each step.
    refine_steps : int >= 0, default=5
        Gauss-Newton steps on each chosen term (0: keep it as drawn).
    update : {"orthogonal", "relaxed"}, default="orthogonal"
        How a term joins the fit: every coefficient refitted by least
        squares, or the convex update of Jones (1992) and Barron (1993),
        ``f_k = (1 - a) f_{k-1} + g phi_k`` with ``a`` in [0, 1] and ``g``
        by least squares (the earlier terms keep their ratios).
%(tail)s

    Attributes
    ----------
    n_features_in_ : int
    feature_names_in_ : ndarray of str (when X had string column names)
    seed_ : int
        The candidates' seed used.
    length_scale_ : float or ndarray
        The length scale of the candidates (gamma converted).
    coef_ : ndarray of shape (n_terms,)
        The coefficients on the model's (scaled) features.
    intercept_ : float
    mse_path_ : ndarray of shape (n_terms,)
        The training mean squared error after each term (non-increasing).
    train_mse_ : float
        The training mean squared error of the fit.
    n_dependent_ : int
        Terms in the span of the earlier ones, kept with coefficient 0.

    Examples
    --------
    >>> import numpy as np
    >>> from rfx import GreedyRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-1, 1, size=(300, 2))
    >>> y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1]
    >>> reg = GreedyRegressor(n_terms=16, length_scale=0.7, random_state=0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.99)
    True
    >>> bool(np.all(np.diff(reg.mse_path_) <= 0))
    True
    """

    _method = 8  # RFX_METHOD_GREEDY

    def __init__(self, n_terms=32, *, kernel="gaussian", nu=1.5, length_scale=None, gamma=None,
                 activation="cos", sparsity=None, weights="kernel", weight_scale=1.0,
                 form="cos_bias", n_candidates=64, refine_steps=5, update="orthogonal",
                 fit_intercept=True, random_state=None, n_jobs=None):
        self.n_terms = n_terms
        self.kernel = kernel
        self.nu = nu
        self.length_scale = length_scale
        self.gamma = gamma
        self.activation = activation
        self.form = form
        self.sparsity = sparsity
        self.weights = weights
        self.weight_scale = weight_scale
        self.n_candidates = n_candidates
        self.refine_steps = refine_steps
        self.update = update
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.n_jobs = n_jobs

    @_common.keeps_state_on_error
    def fit(self, X, y):
        """Fit on X (n_samples, n_features) and y (n_samples,). On any error
        the estimator is left as it was."""
        if self.update not in ("orthogonal", "relaxed"):
            raise ValueError("update must be 'orthogonal' or 'relaxed', got %r" % (self.update,))
        X, y = self._fit_checks(X, y)
        threads = _common.resolve_threads(self.n_jobs)
        K = _common.check_count(self.n_terms, "n_terms", 1)
        M = _common.check_count(self.n_candidates, "n_candidates", 1)
        spec = self._spec(M)
        scale = _common.resolve_scale(spec, X, X.shape[1], allow_auto=False)
        seed = _common.resolve_seed(self.random_state)
        fp, keep = _common.features_params(spec, seed, scale, threads)
        p = ffi.new("rfx_greedy_params *", lib.rfx_greedy_params_default())
        p.features = fp[0]
        p.n_terms = K
        p.n_candidates = M
        p.refine_steps = _common.check_count(self.refine_steps, "refine_steps", 0)
        p.update = lib.RFX_GREEDY_RELAXED if self.update == "relaxed" else lib.RFX_GREEDY_ORTHOGONAL
        p.fit_intercept = int(bool(self.fit_intercept))
        p.n_threads = threads
        out = ffi.new("rfx_model **")
        report = ffi.new("rfx_greedy_report *")
        path = np.empty(K)
        with serial_blas:
            check(lib.rfx_greedy_fit(cmat(X), ffi.cast("const double *", y.ctypes.data), p,
                                     out, report, ffi.cast("double *", path.ctypes.data)))
        del keep
        self._finish_fit(out[0], seed, X)
        self.mse_path_ = path
        self.train_mse_ = float(report.train_mse)
        self.n_dependent_ = int(report.n_dependent)
        return self

    @classmethod
    def _from_model_info(cls, model, info, params):
        params.pop("standardize", None)
        params.pop("structure", None)
        params["n_terms"] = params.pop("n_components")
        return cls(**params)
