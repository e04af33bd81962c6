# SPDX-License-Identifier: BSD-3-Clause
"""RandomFourierFeatures: the feature map as a scikit-learn transformer."""
import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from . import _common
from ._lib import (as_rows, check, cmat, cmat_to_array, cmatf, double_array, empty_rows, ffi, lib,
                   mat, matf, serial_blas)
from ._sklearn_compat import TagsMixin, validate_data


class RandomFourierFeatures(TagsMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin,
                            BaseEstimator):
    """Random Fourier features of a shift-invariant kernel (Rahimi & Recht
    2007), computed by the rfx C library.

    A drop-in for :class:`sklearn.kernel_approximation.RBFSampler` (same
    ``gamma``, ``n_components``, ``random_state``; the same features
    ``sqrt(2/D) cos(X W + b)`` with W and b drawn from rfx's own generator),
    with more kernels (``gaussian``, ``laplacian``, ``cauchy``, ``matern``),
    per-feature length scales, the lower-variance ``cos_sin`` form, a float32
    path, and a multi-threaded fused transform. Features depend only on
    (random seed, parameters), never on the thread count.

    Parameters
    ----------
    n_components : int, default=100
        D, the number of output features (even for ``form="cos_sin"``).
    kernel : {"gaussian", "laplacian", "cauchy", "matern", "custom"}, default="gaussian"
        The kernel approximated ("rbf" is accepted for "gaussian"). With
        ``u = (x - y) / length_scale``: gaussian ``exp(-|u|^2 / 2)``,
        laplacian ``exp(-|u|_1)``, cauchy ``prod 1 / (1 + u_i^2)``, matern
        the Matern kernel of smoothness ``nu``; custom ``E cos(w.u)`` for w
        drawn by ``spectral_sampler`` (no ``exact_kernel``; i.i.d. frequencies,
        dense, weights="kernel").
    nu : float, default=1.5
        Matern smoothness (kernel="matern" only).
    gamma : float, "scale" or None, default=None
        scikit-learn's gamma: ``exp(-gamma |x - y|^2)`` (gaussian) or
        ``exp(-gamma |x - y|_1)`` (laplacian); "scale" is ``1 / (d X.var())``
        as in RBFSampler. None: 1.0 for gaussian and laplacian (RBFSampler's
        default), and ``length_scale=1`` for cauchy and matern, which have no
        gamma.
    length_scale : float, array-like of shape (n_features_in_,) or None, default=None
        The length scale instead of gamma; an array gives one per input
        feature (ARD). Give gamma or length_scale, not both.
    form : {"cos_bias", "cos_sin", "phase_free"}, default="cos_bias"
        ``sqrt(2/D) cos(W x + b)`` (RBFSampler's) or ``sqrt(2/D) [cos W x,
        sin W x]`` with D/2 frequencies (lower variance at equal D); or, for
        the activations other than cos, "phase_free": ``phi(W x)`` with
        b = 0 (the kitchen-sink feature tanh(w.x)), the frequencies of the
        "cos_bias" map of the same seed. With sin, tanh and sign these
        features are odd; relu features with ``weights="normal"``,
        weight_scale s and ``length_scale=1`` have ``2/D z(x).z(y)`` close
        to ``rfx.Kernel.arccos(1, s)`` (the weights are divided by the
        length scale: s / l in general).
    structure : {"iid", "orthogonal", "sorf", "fastfood", "halton"}, default="iid"
        How the frequencies are drawn: independently; orthogonal random
        features (blocks of orthogonal directions, gaussian and matern);
        structured orthogonal features S H D1 H D2 H D3 (gaussian, matern) and
        Fastfood (gaussian, matern), both transformed by fast Walsh-Hadamard
        transforms in O(D log d) per row; or a scrambled Halton sequence
        (quasi-Monte Carlo). Lower kernel approximation error than "iid" at
        equal D except Fastfood (and SORF below 16 inputs, about equal); see
        rfx_structure in rfx.h.
    activation : {"cos", "sin", "tanh", "sigmoid", "relu", "sign"}, default="cos"
        The nonlinearity phi of the features phi(w.x + b). "cos" gives the
        random Fourier features of the kernel; the others are random kitchen
        sinks (Rahimi & Recht 2008): phase b ~ U(0, 2 pi) (b = 0 with
        ``form="phase_free"``), the cos-bias layout, unit scale, and no
        shift-invariant kernel to compare with.
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
    random_state : int, RandomState instance or None, default=None
        The seed of the features. An int is used as rfx's seed as it is (so
        the same int gives the same features as the C API and the command
        line); None or a RandomState draws a seed (kept in ``seed_``).
    n_jobs : int or None, default=None
        Threads for the transform, as scikit-learn reads n_jobs: None is
        1 (or the n_jobs of an enclosing ``joblib.parallel_config``
        context), -1 all cores, -2 all but one. Results never depend on it.
    spectral_sampler : callable or None, default=None
        With kernel="custom", the spectral density p of the kernel:
        ``spectral_sampler(rng, d)`` returns one frequency w ~ p (d values,
        for unit length scale; the length scales divide it). It is called
        once per frequency j, in order, with rng the random stream of
        frequency j (``rng.uniform(size)``, ``rng.normal(size)``,
        ``rng.gamma(shape, size)``, ``rng.bits()``), keyed by (seed, j): a
        sampler that draws only from rng gives the same features for the
        same random_state (``lambda rng, d: rng.normal(d)`` gives exactly
        the gaussian kernel's). An exception it raises is raised by fit.
        Pickling keeps the sampler (it must be picklable) and draws the
        frequencies again.

    Attributes
    ----------
    n_features_in_ : int
    feature_names_in_ : ndarray of str (when X had string column names)
    seed_ : int
        The seed used, as a C ``uint64``.
    random_weights_ : ndarray of shape (n_features_in_, F)
        The frequencies W, transposed like RBFSampler's (F = D for
        cos-bias and phase-free, D / 2 for cos-sin), length scales included.
    random_offset_ : ndarray of shape (F,)
        The phases b (zeros for cos-sin and phase-free).
    length_scale_ : float or ndarray of shape (n_features_in_,)
        The length scale used (gamma converted).

    Notes
    -----
    float64 and float32 inputs are read in place when their rows are
    contiguous (C order, or rows of a larger C array); other layouts and
    dtypes are converted to float64. The output has the input's dtype:
    float32 in, float32 out (about twice as fast, with errors of order 1e-6),
    as RBFSampler does when it was fitted on float32. The weights stay
    float64.

    Examples
    --------
    >>> import numpy as np
    >>> from rfx import RandomFourierFeatures
    >>> X = np.random.RandomState(0).normal(size=(5, 3))
    >>> rff = RandomFourierFeatures(n_components=1000, gamma=0.5, random_state=0)
    >>> Z = rff.fit_transform(X)
    >>> Z.shape
    (5, 1000)
    >>> K = rff.exact_kernel(X)  # exp(-0.5 |x - y|^2)
    >>> bool(np.abs(Z @ Z.T - K).max() < 0.15)
    True
    """

    def __init__(self, n_components=100, *, kernel="gaussian", nu=1.5, gamma=None,
                 length_scale=None, form="cos_bias", activation="cos", sparsity=None,
                 weights="kernel", weight_scale=1.0, structure="iid", random_state=None,
                 n_jobs=None, spectral_sampler=None):
        self.n_components = n_components
        self.kernel = kernel
        self.nu = nu
        self.gamma = gamma
        self.length_scale = length_scale
        self.form = form
        self.activation = activation
        self.sparsity = sparsity
        self.weights = weights
        self.weight_scale = weight_scale
        self.structure = structure
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.spectral_sampler = spectral_sampler

    _rfx_tags = {"preserves_dtype": [np.float64, np.float32]}

    def fit(self, X, y=None):
        """Sample the feature map for the columns of X (only its shape, and
        its variance for gamma="scale", are used)."""
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        d = X.shape[1]
        scale = _common.resolve_scale(self, X, d, allow_auto=False)
        seed = _common.resolve_seed(self.random_state)
        threads = _common.resolve_threads(self.n_jobs)
        p, keep = _common.features_params(self, seed, scale, threads)
        self._features = _common.create_features(p, keep, d)
        del keep
        self.seed_ = seed
        self._finish()
        return self

    def _finish(self):
        f = self._features
        d = lib.rfx_features_input_dim(f)
        fp = lib.rfx_features_get_params(f)
        self.length_scale_ = _common.length_scale_of(fp, d)
        self._n_features_out = int(lib.rfx_features_output_dim(f))

    @property
    def random_weights_(self):
        check_is_fitted(self)
        return cmat_to_array(lib.rfx_features_frequencies(self._features)).T

    @property
    def random_offset_(self):
        check_is_fitted(self)
        W = lib.rfx_features_frequencies(self._features)
        return double_array(lib.rfx_features_phases(self._features), W.rows)

    def transform(self, X):
        """Z = z(X), of shape (n_samples, n_components), in X's precision
        (float32 for float32 X, else float64)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        return transform_rows(self._features, X, self._n_features_out)

    def exact_kernel(self, X, Y=None):
        """The kernel that the features approximate, K[i, j] = k(X[i], Y[j])
        (Y = X when None), computed exactly by the C library (for checks and
        small problems; matern only for nu in {0.5, 1.5, 2.5})."""
        check_is_fitted(self)
        X = as_rows(validate_data(self, X, dtype=np.float64, reset=False))
        Y = X if Y is None else as_rows(validate_data(self, Y, dtype=np.float64, reset=False))
        K = np.empty((X.shape[0], Y.shape[0]))
        with serial_blas:
            check(lib.rfx_features_exact_kernel(self._features, cmat(X), cmat(Y), mat(K)))
        return K

    def __getstate__(self):
        state = dict(super().__getstate__())  # a copy: it may be __dict__ itself
        state.pop("_features", None)
        if hasattr(self, "_features"):
            # the map is re-created from its parameters and seed: the same
            # bits, since feature j depends only on (seed, j)
            fp = lib.rfx_features_get_params(self._features)
            d = int(lib.rfx_features_input_dim(self._features))
            state["_map"] = _map_state(fp, d)
        return state

    def __setstate__(self, state):
        mp = state.pop("_map", None)
        super().__setstate__(state)
        if mp is not None:
            self._features = _map_from_state(mp, _common.resolve_threads(self.n_jobs),
                                             getattr(self, "spectral_sampler", None))


def _create(p, d):
    out = ffi.new("rfx_features **")
    check(lib.rfx_features_create(p, d, out))
    return ffi.gc(out[0], lib.rfx_features_free)


def _map_state(fp, d):
    return {"d": d, "params": _common.params_state(fp, d)}


def _map_from_state(s, threads, sampler=None):
    """The map of _map_state, re-created; a custom kernel's frequencies are
    drawn again by its sampler (the estimator's, pickled with it), which
    gives the same ones for the same seed."""
    p, keep = _common.params_from_state(s["params"])
    p.n_threads = threads
    if p.kernel == lib.RFX_KERNEL_CUSTOM:
        if sampler is None:
            raise ValueError("unpickling a map of kernel='custom' needs its spectral_sampler")
        sp = _common.SpectralSampler(sampler)
        p.spectral = sp.callback
        keep.append(sp)
    f = _common.create_features(p, keep, s["d"])
    del keep
    return f


def transform_rows(f, X, D):
    """z(X) by the fused C transform, into a new array of X's dtype
    (float32 or float64); X is read in place when its rows are contiguous.
    The output is aligned for the transform's vector stores (empty_rows)."""
    if X.dtype == np.float32:
        X = as_rows(X, np.float32)
        Z = empty_rows(X.shape[0], D, np.float32)
        with serial_blas:
            check(lib.rfx_features_transform_f32(f, cmatf(X), matf(Z)))
    else:
        X = as_rows(X, np.float64)
        Z = empty_rows(X.shape[0], D, np.float64)
        with serial_blas:
            check(lib.rfx_features_transform(f, cmat(X), mat(Z)))
    return Z


class KernelCombination:
    """A spectral sampler (``spectral_sampler=`` with ``kernel="custom"``)
    for sums and products of shift-invariant kernels, by Bochner's theorem:
    the density of a weighted sum is the mixture of the terms' densities,
    that of a product their convolution (the sum of one draw of each). The
    frequencies come from the C library (rfx_spectral_combined), so a C
    program with the same terms and seed gets the same map.

    Parameters
    ----------
    terms : list of (kernel, length_scale) or (kernel, length_scale, weight)
        or (kernel, length_scale, weight, nu) tuples; kernel one of
        "gaussian", "laplacian", "cauchy", "matern" (nu default 1.5), weight
        >= 0 (default 1; the sum's).
    product : bool, default=False
        False: the kernel is the weighted mean sum_i w_i k_i / sum_i w_i
        (scale the features by sqrt(sum w_i) for the sum itself); True: the
        product of the terms (weights unused).

    Use it with ``length_scale=1`` (each term carries its own).

    Examples
    --------
    >>> import numpy as np, rfx
    >>> mix = rfx.KernelCombination([("gaussian", 0.5), ("laplacian", 2.0, 3.0)])
    >>> X = np.random.RandomState(0).uniform(-1, 1, size=(50, 2))
    >>> Z = rfx.RandomFourierFeatures(20000, kernel="custom", spectral_sampler=mix,
    ...                               length_scale=1.0, random_state=0).fit_transform(X)
    >>> r = X[:, None, :] - X[None, :, :]
    >>> K = (np.exp(-(r ** 2).sum(-1) / (2 * 0.5 ** 2)) + 3 * np.exp(-np.abs(r).sum(-1) / 2)) / 4
    >>> bool(np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K) < 0.03)
    True
    """

    _KERNELS = ("gaussian", "laplacian", "cauchy", "matern")

    def __init__(self, terms, product=False):
        norm = []
        for t in terms:
            t = tuple(t)
            if not 2 <= len(t) <= 4 or t[0] not in self._KERNELS:
                raise ValueError("each term is (kernel, length_scale[, weight[, nu]]) with kernel "
                                 "in %s, got %r" % (self._KERNELS, t))
            norm.append((t[0], float(t[1]), float(t[2]) if len(t) > 2 else 1.0,
                         float(t[3]) if len(t) > 3 else 1.5))
        if not norm:
            raise ValueError("terms is empty")
        self.terms = norm
        self.product = bool(product)
        self._check()

    def _c(self):
        """The C combination (kept on the object; rebuilt after a copy)."""
        c = self.__dict__.get("_cdata")
        if c is None:
            arr = ffi.new("rfx_spectral_term[]", len(self.terms))
            for i, (k, ls, w, nu) in enumerate(self.terms):
                arr[i].kernel = getattr(lib, "RFX_KERNEL_" + k.upper())
                arr[i].length_scale = ls
                arr[i].weight = w
                arr[i].nu = nu
            comb = ffi.new("rfx_spectral_combination *")
            comb.product = int(self.product)
            comb.n_terms = len(self.terms)
            comb.terms = arr
            c = self.__dict__["_cdata"] = (comb, arr)
        return c[0]

    def _check(self):
        check(lib.rfx_spectral_combination_check(self._c()))

    def __call__(self, rng, d):
        w = np.empty(d)
        check(lib.rfx_spectral_combined(self._c(), rng._rng, 0, d,
                                        ffi.cast("double *", w.ctypes.data)))
        return w

    def __getstate__(self):
        return {"terms": self.terms, "product": self.product}

    def __setstate__(self, state):
        self.terms = state["terms"]
        self.product = state["product"]

    def __repr__(self):
        return "KernelCombination(%r, product=%r)" % (self.terms, self.product)
