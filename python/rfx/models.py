# SPDX-License-Identifier: BSD-3-Clause
"""Regressors and a classifier on random Fourier features, fitted by the rfx
C library (rfx_model_fit: optional standardisation, the feature map, ridge
or Bayesian regression, the length scale and regularisation chosen when not
given)."""
import numbers

import numpy as np
from sklearn.base import ClassifierMixin, MultiOutputMixin, RegressorMixin
from sklearn.preprocessing import LabelBinarizer
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from . import _common
from ._lib import as_rows, c_string, check, cmat, double_array, ffi, lib, mat, serial_blas
from ._model import _RFXModel, sample_weights
from ._sklearn_compat import validate_data

_COMMON_PARAMS_DOC = """\
    n_components : int, default=1024
        D, the number of random features (even for ``form="cos_sin"``).
    kernel : {"gaussian", "laplacian", "cauchy", "matern", "custom"}, default="gaussian"
        The kernel approximated; see :class:`rfx.RandomFourierFeatures`
        ("custom": the density of ``spectral_sampler``).
    nu : float, default=1.5
        Matern smoothness (kernel="matern").
    length_scale : "auto", float or array-like of shape (n_features_in_,), default="auto"
        The kernel length scale, in standardised units when ``standardize``;
        an array gives one per input feature (ARD). "auto" (or None) chooses
        an isotropic one as the command line does: on a seeded subset of at
        most 4000 rows, with at most 512 features, a log grid then a
        golden-section search, maximising the Bayesian evidence (Bayesian
        model) or minimising the GCV error (ridge). The regressors also
        take "learn": one length scale per input, tuned by particle swarm
        (see ``learn_iterations``).
    gamma : float, "scale" or None, default=None
        scikit-learn's gamma instead of a length scale (gaussian and
        laplacian; "scale" is ``1 / (d X.var())``, of the standardised X
        when ``standardize``). Give gamma or a length scale, not both.
    form : {"cos_bias", "cos_sin", "phase_free"}, default="cos_bias"
        The feature form; see :class:`rfx.RandomFourierFeatures`
        ("phase_free": phi(w.x), b = 0, for the activations other than cos).
    structure : {"iid", "orthogonal", "sorf", "fastfood", "halton"}, default="iid"
        How the frequencies are drawn: independently; orthogonal random
        features (blocks of orthogonal directions, gaussian and matern);
        structured orthogonal features S H D1 H D2 H D3 (gaussian, matern) and
        Fastfood (gaussian, matern), both transformed by fast Walsh-Hadamard
        transforms in O(D log d) per row; or a scrambled Halton sequence
        (quasi-Monte Carlo). Lower kernel approximation error than "iid" at
        equal D except Fastfood; see rfx_structure in rfx.h.
    activation : {"cos", "sin", "tanh", "sigmoid", "relu", "sign"}, default="cos"
        The nonlinearity phi of the features phi(w.x + b). "cos" gives the
        random Fourier features of the kernel; the others are random kitchen
        sinks (Rahimi & Recht 2008): phase b ~ U(0, 2 pi) (b = 0 with
        ``form="phase_free"``), the cos-bias layout, unit scale, and no
        kernel to compare with.
    sparsity : int or None, default=None
        q, the number of nonzero coordinates of each frequency; None uses
        all inputs. With q < d every feature is a function of q inputs only
        (sparse random features, Hashemi et al. 2021): the C(d, q) supports
        are enumerated when they fit in the frequencies, else drawn.
    weights : {"kernel", "normal", "uniform"}, default="kernel"
        Where the nonzero frequencies come from: the kernel's spectral
        density (with its length scale), or N(0, s^2) or U(-s, s) with
        s = weight_scale.
    weight_scale : float, default=1.0
        s, for weights="normal" or "uniform".
    spectral_sampler : callable or None, default=None
        With kernel="custom", ``spectral_sampler(rng, d)`` returns one
        frequency drawn from the kernel's spectral density; see
        :class:`rfx.RandomFourierFeatures`. The fitted model keeps the
        frequencies, so prediction and pickles do not call it again.
    fit_intercept : bool, default=True
        Fit an unpenalised intercept (by centring).
    standardize : bool, default=True
        Scale each input column to zero mean and unit variance first (the
        scaler is part of the model). Set it to False to use gamma or a
        length scale in the units of X, as ``RBFSampler`` does.
    random_state : int, RandomState instance or None, default=None
        The seed of the features (and of the subset used to choose the
        length scale). An int is the C library's seed, so the same int
        gives the same model as the C API and the command line (``--seed``).
    n_jobs : int or None, default=None
        Threads, as scikit-learn reads n_jobs: None is 1 (or the n_jobs
        of an enclosing ``joblib.parallel_config`` context), -1 all cores,
        -2 all but one. Results never depend on it.
    verbose : int, default=0
        0 is silent; 1 prints the fit's stages to stderr as they progress
        (a line per stage and per 10%, then the time taken); 2 every report.
        Whatever its value, Ctrl-C stops a fit at the C library's next
        report with KeyboardInterrupt, leaving the estimator as it was; see
        also :func:`rfx.progress_callback`."""

_LEARN_PARAMS_DOC = """\
    learn_iterations : int >= 1, default=30
        With ``length_scale="learn"``: the particle swarm's iterations. The
        length scales l_i = l0 exp(u_i), one per input, start from the
        isotropic choice l0 of "auto" (or from ``gamma`` when given), and u
        is searched in [-3, 4]^d by particle swarm optimisation (Kennedy &
        Eberhart 1995) on the same seeded subset of rows and at most 512
        features, minimising minus the log evidence per row (Bayesian) or
        the GCV error (ridge); the model is then fitted on all rows with all
        features. A large learned l_i means input i hardly matters. Cost:
        ``learn_particles x (learn_iterations + 1) + 1`` fits on the subset.
        The same seed gives the same scales as ``rfx fit --length-scales
        learn --learn-iterations N`` and the C API, bit for bit.
    learn_particles : int >= 1 or None, default=None
        With ``length_scale="learn"``: the swarm's size; None is the C
        library's default, ``10 + floor(2 sqrt(n_features_in_))``."""

_LEARN_ATTRS_DOC = """\
    learn_score_ : tuple (before, after)
        With ``length_scale="learn"`` only: the selection score at the
        starting isotropic scale and at the learned ones (log evidence per
        row for the Bayesian model, higher is better; the GCV error for
        ridge, lower is better); never worse after.
    learn_evaluations_ : int
        With ``length_scale="learn"`` only: candidate scale vectors tried."""

_COMMON_ATTRS_DOC = """\
    n_features_in_ : int
    feature_names_in_ : ndarray of str (when X had string column names)
    seed_ : int
        The feature seed used.
    length_scale_ : float or ndarray
        The length scale used (chosen, or converted from gamma).
    coef_ : ndarray
        The weights on the random features.
    intercept_ : float or ndarray"""


def _doc(cls):
    cls.__doc__ = cls.__doc__.replace("%(params)s", _COMMON_PARAMS_DOC).replace(
        "%(attrs)s", _COMMON_ATTRS_DOC).replace("%(learn)s", _LEARN_PARAMS_DOC).replace(
        "%(learn_attrs)s", _LEARN_ATTRS_DOC)
    return cls


def _alpha(alpha):
    if alpha is None:
        return -1.0  # choose by GCV
    if not isinstance(alpha, numbers.Real) or isinstance(alpha, bool):
        raise TypeError("alpha must be a number >= 0 or None, got %r" % (alpha,))
    if not alpha >= 0 or not np.isfinite(alpha):
        raise ValueError("alpha must be >= 0 and finite, or None, got %r" % (alpha,))
    return float(alpha)


def _variance(v, name):
    if v is None:
        return 0.0  # fit by the evidence
    if not isinstance(v, numbers.Real) or isinstance(v, bool):
        raise TypeError("%s must be a number > 0 or None, got %r" % (name, v))
    if not v > 0 or not np.isfinite(v):
        raise ValueError("%s must be > 0 and finite, or None, got %r" % (name, v))
    return float(v)


@_doc
class RFFRegressor(MultiOutputMixin, RegressorMixin, _RFXModel):
    """Ridge regression on random Fourier features (kernel ridge regression
    at linear cost), fitted by the rfx C library.

    ``RFFRegressor(gamma=g, alpha=a, standardize=False)`` fits the same model
    as ``make_pipeline(RBFSampler(gamma=g), Ridge(alpha=a))`` (up to the
    random draw of the features) without ever forming the n x D feature
    matrix: the features are accumulated into Z^T Z in row blocks (or the
    n x n dual system is solved when n < D). The defaults fit automatically,
    as ``rfx fit --method ridge`` does: standardised inputs, length scale
    and penalty chosen by generalised cross-validation.

    Parameters
    ----------
%(params)s
    alpha : float >= 0 or None, default=None
        The ridge penalty on the weights, ``alpha |w|^2`` (Ridge's alpha).
        None chooses it by generalised cross-validation (Golub, Heath &
        Wahba 1979) over a log grid, as RidgeCV does.
%(learn)s

    Attributes
    ----------
%(attrs)s
    alpha_ : float
        The penalty used (chosen or given).
%(learn_attrs)s

    Examples
    --------
    >>> import numpy as np
    >>> from rfx import RFFRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-3, 3, size=(500, 2))
    >>> y = np.sin(X[:, 0]) * np.cos(X[:, 1])
    >>> reg = RFFRegressor(n_components=256, random_state=0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.99)
    True
    >>> reg.predict(X[:3]).shape
    (3,)

    One length scale per input, learned (the third input is noise):

    >>> X3 = np.column_stack([X, rng.normal(size=500)])
    >>> ard = RFFRegressor(n_components=64, length_scale="learn", learn_iterations=5,
    ...                    random_state=0).fit(X3, y)
    >>> ard.length_scale_.shape
    (3,)
    >>> bool(ard.length_scale_[2] > 5 * ard.length_scale_[:2].max())
    True
    >>> before, after = ard.learn_score_  # GCV error: lower is better
    >>> bool(after <= before)
    True
    """

    _method = 0  # RFX_METHOD_RIDGE
    _can_learn = True

    def __init__(self, n_components=1024, *, kernel="gaussian", nu=1.5, length_scale="auto",
                 gamma=None, form="cos_bias", activation="cos", sparsity=None, weights="kernel",
                 weight_scale=1.0, structure="iid", alpha=None, learn_iterations=30,
                 learn_particles=None, fit_intercept=True, standardize=True, random_state=None,
                 n_jobs=None, verbose=0, spectral_sampler=None):
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
        self.spectral_sampler = spectral_sampler
        self.alpha = alpha
        self.learn_iterations = learn_iterations
        self.learn_particles = learn_particles
        self.fit_intercept = fit_intercept
        self.standardize = standardize
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    @_common.keeps_state_on_error
    def fit(self, X, y, sample_weight=None):
        """Fit on X (n_samples, n_features) and y (n_samples,) or
        (n_samples, n_targets). sample_weight (n_samples,), finite and >= 0:
        the loss ``sum_i w_i |y_i - f(x_i)|^2 + alpha |w|^2`` of Ridge with
        sample_weight, the standardisation by weighted moments, and with
        ``alpha=None`` GCV on the weighted rows (n: the rows of positive
        weight); a row of weight 0 is a row left out. On any error (or a
        cancelled fit) the estimator is left as it was."""
        X, y = validate_data(self, X, y, dtype=np.float64, multi_output=True, y_numeric=True)
        sw = sample_weights(sample_weight, X)
        self._y_1d = y.ndim == 1
        Y = y.reshape(len(y), -1)
        self._fit_model(X, Y, lam=_alpha(self.alpha), sample_weight=sw)
        return self

    @_common.keeps_state_on_error
    def partial_fit(self, X, y, sample_weight=None):
        """Add the rows X, y to the fit: the model becomes the fit on every
        row given so far. The first call fixes the feature map: its kernel
        scale is ``length_scale`` (or ``gamma``), or for "auto" the one a fit
        on the first batch chooses; ``standardize`` uses the first batch's
        standard deviations. With ``standardize=False`` and a given scale the
        result is one ``fit`` on all the rows, to rounding. With
        ``alpha=None`` lambda is chosen by GCV from the statistics of all
        rows. sample_weight weights the rows as in ``fit`` (the weighted
        statistics add up over the batches). Memory is O(n_components^2),
        whatever the number of rows; ``rfx.merge`` combines estimators
        fitted on disjoint rows, and ``statistics_`` (an
        :class:`rfx.Statistics`: they add with ``+`` and pickle) carries
        them between processes."""
        first = getattr(self, "_stats", None) is None
        X, y = validate_data(self, X, y, dtype=np.float64, multi_output=True, y_numeric=True,
                             reset=first)
        sw = sample_weights(sample_weight, X)
        if first:
            self._y_1d = y.ndim == 1
        return self._partial_fit_model(X, y.reshape(len(y), -1), sample_weight=sw)

    def _one_target(self):
        return self._y_1d

    @classmethod
    def _from_model_info(cls, model, info, params):
        est = cls(alpha=float(getattr(info, "lambda")), **params)
        est._y_1d = info.n_targets == 1
        return est

    def predict(self, X):
        """Predictions, of shape (n_samples,) when y was 1-D, else
        (n_samples, n_targets)."""
        Yhat, _ = self._predict_raw(X)
        return Yhat[:, 0] if self._y_1d else Yhat


@_doc
class BayesianRFFRegressor(RegressorMixin, _RFXModel):
    """Bayesian linear regression on random Fourier features (a Gaussian
    process at linear cost), with predictive standard deviations, fitted by
    the rfx C library.

    Weight-space Bayesian regression (Rasmussen & Williams 2006, 2.1):
    prior w ~ N(0, prior_var I), noise N(0, noise_var); both variances are
    fitted by maximising the marginal likelihood unless given, as
    :class:`sklearn.linear_model.BayesianRidge` does on its inputs. The
    defaults are those of ``rfx fit``: standardised inputs and a length
    scale chosen by the evidence. One target.

    Parameters
    ----------
%(params)s
    noise_var : float > 0 or None, default=None
        The noise variance; None fits it.
    prior_var : float > 0 or None, default=None
        The prior variance of the weights; None fits it.
%(learn)s

    Attributes
    ----------
%(attrs)s
    noise_var_, prior_var_ : float
        The variances used (fitted or given).
    log_evidence_ : float
        The log marginal likelihood of the training targets.
%(learn_attrs)s

    Examples
    --------
    >>> import numpy as np
    >>> from rfx import BayesianRFFRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-3, 3, size=(300, 1))
    >>> y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=300)
    >>> gp = BayesianRFFRegressor(n_components=256, random_state=0).fit(X, y)
    >>> mean, std = gp.predict(np.array([[0.5], [10.0]]), return_std=True)
    >>> bool(std[1] > std[0])  # far from the data, less certain
    True
    >>> round(gp.noise_var_, 2)  # the noise, 0.1^2, is recovered
    0.01

    Progress on stderr (``verbose=1``), and one length scale per input,
    learned (the second input is noise):

    >>> X2 = np.column_stack([X, rng.normal(size=300)])
    >>> ard = BayesianRFFRegressor(n_components=64, length_scale="learn",
    ...                            learn_iterations=5, random_state=0, verbose=1)
    >>> _ = ard.fit(X2, y)
    >>> bool(ard.length_scale_[1] > 10 * ard.length_scale_[0])
    True
    >>> before, after = ard.learn_score_  # log evidence per row: higher is better
    >>> bool(after > before)
    True

    The fit printed on stderr::

        [BayesianRFFRegressor] choose length scale   4%
        [BayesianRFFRegressor] choose length scale  12%
        ...
        [BayesianRFFRegressor] learn length scales   0%
        [BayesianRFFRegressor] learn length scales  20%
        ...
        [BayesianRFFRegressor] learn length scales 100%
        [BayesianRFFRegressor] fit   0%
        [BayesianRFFRegressor] fit 100%
        [BayesianRFFRegressor] done in 0.05 s
    """

    _method = 1  # RFX_METHOD_BAYES
    _can_learn = True

    def __init__(self, n_components=1024, *, kernel="gaussian", nu=1.5, length_scale="auto",
                 gamma=None, form="cos_bias", activation="cos", sparsity=None, weights="kernel",
                 weight_scale=1.0, structure="iid", noise_var=None, prior_var=None,
                 learn_iterations=30, learn_particles=None, fit_intercept=True,
                 standardize=True, random_state=None, n_jobs=None, verbose=0,
                 spectral_sampler=None):
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
        self.spectral_sampler = spectral_sampler
        self.noise_var = noise_var
        self.prior_var = prior_var
        self.learn_iterations = learn_iterations
        self.learn_particles = learn_particles
        self.fit_intercept = fit_intercept
        self.standardize = standardize
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    @_common.keeps_state_on_error
    def fit(self, X, y, sample_weight=None):
        """Fit on X (n_samples, n_features) and y (n_samples,).
        sample_weight (n_samples,), finite and >= 0, multiplies the noise
        precision of each row (its noise variance is ``noise_var / w_i``),
        as BayesianRidge's sample_weight; a row of weight 0 is a row left
        out. On any error (or a cancelled fit) the estimator is left as it
        was."""
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        sw = sample_weights(sample_weight, X)
        self._fit_model(X, y.reshape(-1, 1), noise_var=_variance(self.noise_var, "noise_var"),
                        prior_var=_variance(self.prior_var, "prior_var"), sample_weight=sw)
        return self

    def _variances(self):
        return (_variance(self.noise_var, "noise_var"), _variance(self.prior_var, "prior_var"))

    @_common.keeps_state_on_error
    def partial_fit(self, X, y, sample_weight=None):
        """Add the rows X, y (weighted as in ``fit``) to the posterior: the
        model becomes the fit on every row given so far, with the variances
        fitted by the evidence of all rows when not given; the feature map
        is fixed by the first call, as in RFFRegressor.partial_fit. Memory
        is O(n_components^2); ``rfx.merge`` combines disjoint fits, and
        ``statistics_`` (an :class:`rfx.Statistics`) carries them between
        processes."""
        first = getattr(self, "_stats", None) is None
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, reset=first)
        sw = sample_weights(sample_weight, X)
        return self._partial_fit_model(X, y.reshape(-1, 1), sample_weight=sw)

    def _read_info(self):
        info = super()._read_info()
        self.noise_var_ = float(info.noise_var)
        self.prior_var_ = float(info.prior_var)
        self.log_evidence_ = float(info.log_evidence)
        return info

    @classmethod
    def _from_model_info(cls, model, info, params):
        return cls(noise_var=float(info.noise_var), prior_var=float(info.prior_var), **params)

    def predict(self, X, return_std=False, latent=False):
        """The predictive mean, and with return_std=True its standard
        deviation: of a new noisy target y* by default (as BayesianRidge),
        of the latent function f(x*) with latent=True."""
        Yhat, S = self._predict_raw(X, ("latent" if latent else "noisy") if return_std else None)
        if return_std:
            return Yhat[:, 0], S[:, 0]
        return Yhat[:, 0]


_LOSSES = ("auto", "logistic", "hinge", "squared_hinge", "squared", "least_squares")


@_doc
class RFFClassifier(ClassifierMixin, _RFXModel):
    """A classifier on random Fourier features, fitted by the rfx C library
    (rfx/classify.h). By default (``loss="auto"``, as ``rfx fit --task
    classify``; the most accurate per second on the project's benchmark
    sets) the kernel least-squares classifier (``RidgeClassifier`` on the
    features, alpha and the length scale by exact leave-one-out), refined
    toward the squared hinge where held-out rows show a gain; or that
    classifier alone (``loss="squared"``); logistic regression (binary,
    one-vs-rest or softmax) or a linear SVM (hinge or squared hinge) on
    the features, with class weights; or ``loss="least_squares"``, a ridge
    regression that partial_fit grows.

    The objective is ``sum_i c_i loss_i / n + alpha / 2 |W|^2`` with an
    unpenalised intercept (c_i the class weights): scikit-learn's
    ``LogisticRegression(C=1 / (n alpha))`` and ``LinearSVC(C=1 / (n
    alpha))`` on the same features. With ``alpha=None`` and the logistic or
    hinge losses, the length scale (when "auto") and alpha are chosen
    together on a holdout of the training rows
    (a seeded subset of at most 4000), by the log-loss for the logistic loss
    and the error rate for the hinge losses: nine length scales, each one's
    penalties fitted as one warm-started path, extended by a decade while
    the best penalty is on its edge. The subset and the holdout are
    drawn by a seeded hash of each row's values and label, not by
    position: the same rows in another order give the same choice.

    Parameters
    ----------
%(params)s
    loss : {"auto", "logistic", "hinge", "squared_hinge", "squared", "least_squares"}, default="auto"
        "squared" is the least-squares classifier of ``rfx fit --task
        classify --loss squared`` (bit for bit): one-vs-rest +-1 targets,
        alpha and the length scale chosen by the exact leave-one-out error
        of every alpha at once, probabilities a softmax of the scores over
        a temperature fitted on their leave-one-out values. "auto", the
        default (``rfx fit --task classify``'s, bit for bit), is that
        classifier followed by up to 3 Newton steps of the squared hinge at
        the same alpha, kept when a held-out fifth of the rows shows a
        significant gain (McNemar's test; see RFX_LOSS_AUTO in
        rfx/classify.h), with the temperature of the held-out scores;
        ``refine_steps_`` says how many. With sample_weight or
        class_weight, or another optimizer than "auto", "auto" is the
        squared loss fitted by the optimizer (weights have no closed form
        here). "least_squares" is ridge regression on the +-1 targets
        (alpha by generalised cross-validation), which partial_fit can
        grow.
    multi_class : {"ovr", "softmax"}, default="ovr"
        One-vs-rest, or the multinomial (softmax) logistic model.
    alpha : float > 0 or None, default=None
        The l2 penalty; None chooses it (see above). For
        ``loss="least_squares"`` the ridge penalty (None: by generalised
        cross-validation).
    class_weight : dict, "balanced" or None, default=None
        Weights per class (``{label: weight}``), or ``n / (n_classes n_c)``.
        For ``loss="least_squares"`` they multiply the rows' weights, as
        RidgeClassifier's class_weight ("balanced" from the rows' counts;
        partial_fit takes a dict only).
    optimizer : {"auto", "lbfgs", "dual_cd", "sgd"}, default="auto"
        Batch quasi-Newton (logistic, softmax, squared hinge), dual
        coordinate descent (hinge losses, Hsieh et al. 2008) or stochastic
        gradient (streams). "auto" picks L-BFGS for the logistic loss and
        dual coordinate descent for the hinge losses.
    tol : float > 0 or None, default=None
        The stopping tolerance; None = the C library's default (see
        rfx_classify_params in rfx/classify.h).

    Attributes
    ----------
%(attrs)s
    classes_ : ndarray of shape (n_classes,)
    alpha_ : float
        The penalty used (chosen or given).
    refine_steps_ : int
        loss="auto": the Newton steps of the squared hinge kept (0: the
        least-squares classifier stayed); 0 for the other losses.
    refine_holdout_ : int
        loss="auto": the rows held out to decide them (0: not tried, as
        with fewer rows than features).

    Examples
    --------
    >>> import numpy as np
    >>> from rfx import RFFClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(400, 2))
    >>> y = np.where(np.hypot(X[:, 0], X[:, 1]) < 1.2, "in", "out")  # not linear
    >>> clf = RFFClassifier(n_components=256, random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.95)
    True
    >>> clf.predict([[0.0, 0.0], [2.0, 0.5]]).tolist()
    ['in', 'out']
    >>> clf.predict_proba([[0.0, 0.0]]).round(1).tolist()
    [[1.0, 0.0]]
    """

    def __init__(self, n_components=1024, *, kernel="gaussian", nu=1.5, length_scale="auto",
                 gamma=None, form="cos_bias", activation="cos", sparsity=None, weights="kernel",
                 weight_scale=1.0, structure="iid", loss="auto", multi_class="ovr",
                 alpha=None, class_weight=None, optimizer="auto", tol=None,
                 fit_intercept=True, standardize=True, random_state=None, n_jobs=None,
                 verbose=0, spectral_sampler=None):
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
        self.spectral_sampler = spectral_sampler
        self.loss = loss
        self.multi_class = multi_class
        self.alpha = alpha
        self.class_weight = class_weight
        self.optimizer = optimizer
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.standardize = standardize
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    @property
    def _method(self):
        return 0 if self.loss == "least_squares" else lib.RFX_METHOD_CLASSIFY

    def _classify_params(self, classes):
        cp = ffi.new("rfx_classify_params *", lib.rfx_classify_params_default())
        keep = [cp]
        out = ffi.new("rfx_loss *")
        check(lib.rfx_loss_from_name(_common.c_option_name(self.loss).encode(), out))
        cp.loss = out[0]
        if not isinstance(self.multi_class, str):
            raise TypeError("multi_class must be 'ovr' or 'softmax', got %r" % (self.multi_class,))
        mc = ffi.new("rfx_multiclass *")
        check(lib.rfx_multiclass_from_name(self.multi_class.encode(), mc))
        cp.multiclass = mc[0]
        if not isinstance(self.optimizer, str):
            raise TypeError("optimizer must be a string, got %r" % (self.optimizer,))
        op = ffi.new("rfx_optimizer *")
        optimizer = _common.option_name(self.optimizer, "optimizer")
        check(lib.rfx_optimizer_from_name(_common.c_option_name(optimizer).encode(), op))
        cp.optimizer = op[0]
        if self.tol is not None:
            if (not isinstance(self.tol, numbers.Real) or isinstance(self.tol, bool)
                    or not self.tol > 0):
                raise ValueError("tol must be a number > 0 or None, got %r" % (self.tol,))
            cp.tol = float(self.tol)
        cw = self.class_weight
        if isinstance(cw, str):
            if cw != "balanced":
                raise ValueError("class_weight must be a dict, 'balanced' or None, got %r" % cw)
            cp.balanced = 1
        elif cw is not None:
            if not isinstance(cw, dict):
                raise TypeError("class_weight must be a dict, 'balanced' or None")
            w = np.ones(len(classes))
            for label, value in cw.items():
                hit = np.flatnonzero(classes == label)
                if hit.size == 0:
                    raise ValueError("class_weight: the label %r is not in the data" % (label,))
                w[hit[0]] = value
            w = np.ascontiguousarray(w, dtype=np.float64)
            keep.append(w)
            cp.class_weights = ffi.cast("const double *", w.ctypes.data)
            cp.n_class_weights = len(classes)
        return cp, keep

    @_common.keeps_state_on_error
    def fit(self, X, y, sample_weight=None):
        """Fit on X (n_samples, n_features) and class labels y (n_samples,).
        sample_weight (n_samples,), finite and >= 0, multiplies the loss of
        each row on top of the class weights (``sum_i w_i c_i loss_i / n``,
        n the rows of positive weight; "balanced" counts weights), as
        LogisticRegression's sample_weight; a row of weight 0 is a row left
        out. Not with ``optimizer="sgd"`` (nor the hinge loss when its
        features are too large to cache). On any error (or a cancelled fit)
        the estimator is left as it was."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        sw = sample_weights(sample_weight, X)
        check_classification_targets(y)
        if self.loss not in _LOSSES:
            raise ValueError("loss must be one of %s, got %r" % (", ".join(_LOSSES), self.loss))
        classes, idx = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            raise ValueError("RFFClassifier needs samples of at least 2 classes in the data, "
                             "but the data contains only one class: %r" % (classes[0],))
        self.classes_ = classes
        if self.loss == "least_squares":
            lb = LabelBinarizer(neg_label=-1, pos_label=1)
            Y = lb.fit_transform(y).astype(np.float64)
            sw = self._class_row_weights(y, classes, sw)
            self._fit_model(X, Y, lam=_alpha(self.alpha), sample_weight=sw)
            return self
        lam = -1.0 if self.alpha is None else _alpha(self.alpha)
        if lam == 0:
            raise ValueError("alpha must be > 0 or None for loss=%r" % (self.loss,))
        cp, keep = self._classify_params(classes)
        Y = idx.astype(np.float64).reshape(-1, 1)  # class indices: classes_ maps them back
        report = self._fit_model(X, Y, lam=lam, classify=cp, sample_weight=sw)
        del keep
        self.alpha_ = float(getattr(report, "lambda"))
        self.refine_steps_ = int(report.refine_steps)
        self.refine_holdout_ = int(report.refine_holdout)
        return self

    def _class_row_weights(self, y, classes, sw, partial=False):
        """The least-squares loss's row weights: sw times the class weight
        of each row's label (RidgeClassifier's rule), or sw without
        class_weight."""
        cw = self.class_weight
        if cw is None:
            return sw
        if isinstance(cw, str):
            if cw != "balanced":
                raise ValueError("class_weight must be a dict, 'balanced' or None, got %r" % cw)
            if partial:
                raise ValueError("class_weight='balanced' needs every row's label: partial_fit "
                                 "takes a dict of class weights (or None)")
        elif not isinstance(cw, dict):
            raise TypeError("class_weight must be a dict, 'balanced' or None")
        else:
            for label in cw:
                if not np.any(classes == label):
                    raise ValueError("class_weight: the label %r is not in the data" % (label,))
        from sklearn.utils.class_weight import compute_sample_weight
        w = compute_sample_weight(cw, y) if not partial else \
            np.array([float(cw.get(v, 1.0)) for v in y])
        w = w if sw is None else w * sw
        return np.ascontiguousarray(w, dtype=np.float64)

    def _has_partial_fit(self):
        if self.loss != "least_squares":
            raise AttributeError("partial_fit is available for loss='least_squares' only (its "
                                 "fit is a ridge regression over statistics that add up), not "
                                 "loss=%r; fit the other losses with fit, or stream them with "
                                 "KernelSGDClassifier" % (self.loss,))
        return True

    @available_if(_has_partial_fit)
    @_common.keeps_state_on_error
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Add the rows X, y to the fit (``loss="least_squares"`` only): the
        model becomes the fit on every row given so far, over the same
        mergeable statistics as RFFRegressor.partial_fit (Z^T W Z and Z^T W
        Y, memory O(n_components^2)), with the targets of ``fit``: +-1 per
        class (one column, +1 for classes_[1], for two classes; one per
        class otherwise). ``classes``, every label the rows may carry, is
        required on the first call (scikit-learn's convention, as
        SGDClassifier.partial_fit), unless a ``fit`` gave ``classes_`` (its
        rows are not kept: partial_fit after fit starts the statistics
        afresh, as RFFRegressor's), and fixes ``classes_``; later calls may
        repeat it. A dict ``class_weight`` multiplies the rows' weights. With ``alpha=None`` alpha is chosen by generalised
        cross-validation from the statistics of all rows, as ``fit`` chooses
        it; the first call fixes the feature map as in
        RFFRegressor.partial_fit. With ``standardize=False`` and a given
        length scale the result is one ``fit`` on all the rows (whose labels
        are all of ``classes``), to rounding. sample_weight weights the
        rows as in ``fit``. The other losses have no statistics that add:
        for them the method is not there (AttributeError, as scikit-learn's
        ``available_if``; ``KernelSGDClassifier`` learns them from a
        stream). ``rfx.merge`` and ``statistics_`` combine fits of disjoint
        rows."""
        first = getattr(self, "_stats", None) is None
        if first and classes is None:
            if not hasattr(self, "classes_"):
                raise ValueError("classes must be passed on the first call to partial_fit")
            classes = self.classes_  # those of a fit (whose rows are not kept)
        X, y = validate_data(self, X, y, dtype=np.float64, reset=first)
        check_classification_targets(y)
        if classes is not None:
            classes = np.unique(classes)
            if first:
                if len(classes) < 2:
                    raise ValueError("partial_fit: classes must hold at least 2 labels, got %r"
                                     % (classes,))
            elif not np.array_equal(classes, self.classes_):
                raise ValueError("`classes=%r` is not the same as on the first call to "
                                 "partial_fit, was: %r" % (classes, self.classes_))
        known = self.classes_ if classes is None else classes
        unknown = np.setdiff1d(np.unique(y), known)
        if unknown.size:
            raise ValueError("partial_fit: the labels %r are not in classes %r"
                             % (unknown.tolist(), known.tolist()))
        sw = self._class_row_weights(y, known, sample_weights(sample_weight, X), partial=True)
        idx = np.searchsorted(known, y)
        if len(known) == 2:
            Y = np.where(idx == 1, 1.0, -1.0).reshape(-1, 1)
        else:
            Y = np.full((len(y), len(known)), -1.0)
            Y[np.arange(len(y)), idx] = 1.0
        if first:
            self.classes_ = known
        return self._partial_fit_model(X, Y, sample_weight=sw, probe_y=y)

    def _read_info(self):
        info = super()._read_info()
        if info.method == lib.RFX_METHOD_CLASSIFY:
            ci = ffi.new("rfx_classifier_info *")
            check(lib.rfx_model_classifier_info(self._model, ci))
            self._n_targets = int(ci.n_columns)
            self.alpha_ = float(getattr(ci, "lambda"))
        return info

    @classmethod
    def _from_model_info(cls, model, info, params):
        # the class labels are the model's numbers
        ci = ffi.new("rfx_classifier_info *")
        check(lib.rfx_model_classifier_info(model, ci))
        classes = ffi.new("const double **")
        n = ffi.new("size_t *")
        check(lib.rfx_model_classes(model, classes, n))
        est = cls(loss=_common.python_option_name(c_string(lib.rfx_loss_name(ci.loss))),
                  multi_class=c_string(lib.rfx_multiclass_name(ci.multiclass)),
                  alpha=float(getattr(ci, "lambda")), **params)
        est.classes_ = double_array(classes[0], n[0])
        return est

    def _one_target(self):
        return False  # coef_ is (1, n_components) for two classes, as scikit-learn's

    def decision_function(self, X):
        """Decision values: (n_samples,) for two classes (positive means
        classes_[1]), else (n_samples, n_classes)."""
        if self._method == 0:
            S, _ = self._predict_raw(X)
        else:
            check_is_fitted(self)
            X = as_rows(validate_data(self, X, dtype=np.float64, reset=False))
            S = np.empty((X.shape[0], self._n_targets))
            with serial_blas:
                check(lib.rfx_model_decision(self._model, cmat(X), mat(S)))
        return S[:, 0] if S.shape[1] == 1 else S

    def predict(self, X):
        """The class with the largest decision value."""
        S = self.decision_function(X)
        idx = (S > 0).astype(int) if S.ndim == 1 else S.argmax(axis=1)
        return self.classes_[idx]

    def _has_proba(self):
        if getattr(self, "_model", None) is not None and self._method != 0:
            ci = ffi.new("rfx_classifier_info *")
            check(lib.rfx_model_classifier_info(self._model, ci))
            if ci.probabilities:
                return True
        if self.loss not in ("logistic", "squared", "auto"):
            raise AttributeError("predict_proba is available for loss='logistic', 'squared' or "
                                 "'auto' only")
        return True

    @available_if(_has_proba)
    def predict_proba(self, X):
        """Class probabilities (n_samples, n_classes), columns in classes_
        order: the logistic or softmax model's, one-vs-rest normalised; for
        loss="squared", the softmax (sigmoid for two classes) of the scores
        over the temperature fitted on their leave-one-out values; for
        loss="auto", the same, or after Newton steps over the temperature
        of the held-out rows' scores."""
        check_is_fitted(self)
        X = as_rows(validate_data(self, X, dtype=np.float64, reset=False))
        P = np.empty((X.shape[0], len(self.classes_)))
        with serial_blas:
            check(lib.rfx_model_predict_proba(self._model, cmat(X), mat(P)))
        return P

    @available_if(_has_proba)
    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))

