# SPDX-License-Identifier: BSD-3-Clause
"""Feature maps of dot-product and chi2 kernels, as scikit-learn transformers
over the C library's rfx_sketch (include/rfx/sketch.h):

- :class:`PolynomialCountSketch`: Tensor Sketch of ``(gamma <x, y> + coef0)^degree``
  (Pham & Pagh 2013), as ``sklearn.kernel_approximation.PolynomialCountSketch``;
- :class:`RandomMaclaurinFeatures`: random Maclaurin features (Kar & Karnick
  2012) of the polynomial and exponential dot-product kernels;
- :class:`AdditiveChi2Sampler`: the deterministic sampled map of the additive
  chi2 kernel ``sum_i 2 x_i y_i / (x_i + y_i)`` (Vempati et al. 2010), the
  same numbers as scikit-learn's;
- :class:`SkewedChi2Sampler`: random Fourier features of the skewed chi2
  kernel ``prod_i 2 sqrt(x_i + c) sqrt(y_i + c) / (x_i + y_i + 2 c)`` (Li,
  Ionescu & Sminchisescu 2010).

The random maps depend only on (parameters, random_state, n_features_in_),
never on the thread count; an int random_state is rfx's seed itself.
"""
import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from . import _common
from ._lib import as_rows, check, cmat, empty_rows, ffi, lib, mat
from ._sklearn_compat import TagsMixin, validate_data

__all__ = ["PolynomialCountSketch", "RandomMaclaurinFeatures", "AdditiveChi2Sampler",
           "SkewedChi2Sampler"]

_FIELDS = ("kind", "n_components", "gamma", "coef0", "degree", "dot_kernel", "skewedness",
           "sample_steps", "sample_interval", "seed", "n_threads")


def _real(v, name):
    if not isinstance(v, numbers.Real) or isinstance(v, bool):
        raise TypeError("%s must be a real number, got %r" % (name, v))
    return float(v)


def _create(p, d):
    out = ffi.new("rfx_sketch **")
    check(lib.rfx_sketch_create(p, d, out))
    return ffi.gc(out[0], lib.rfx_sketch_free)


class _Sketch(TagsMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """The fit, transform, exact kernel and pickling of every map; a
    subclass sets _kind and fills the parameters of its map (_fill)."""

    _kind = None
    _random = True

    def _fill(self, p):
        raise NotImplementedError

    def _check_domain(self, X):
        """Checks of the fit's X beyond its shape (the transform's are in C)."""

    def fit(self, X, y=None):
        """Sample the map for the columns of X (only its width is used)."""
        X = validate_data(self, X, dtype=np.float64)
        self._check_domain(X)
        p = ffi.new("rfx_sketch_params *", lib.rfx_sketch_params_default())
        p.kind = self._kind
        self._fill(p)
        seed = _common.resolve_seed(self.random_state) if self._random else 0
        p.seed = seed
        p.n_threads = _common.resolve_threads(self.n_jobs)
        self._sketch = _create(p, X.shape[1])
        if self._random:
            self.seed_ = seed
        self._n_features_out = int(lib.rfx_sketch_n_features(self._sketch))
        return self

    def transform(self, X):
        """Z = z(X), of shape (n_samples, n_features_out)."""
        check_is_fitted(self)
        X = as_rows(validate_data(self, X, dtype=np.float64, reset=False))
        Z = empty_rows(X.shape[0], self._n_features_out)
        check(lib.rfx_sketch_transform(self._sketch, cmat(X), mat(Z)))
        return Z

    def exact_kernel(self, X, Y=None):
        """K[i, j] = k(X[i], Y[j]) (Y = X when None), the kernel the map
        approximates, computed exactly by the C library."""
        check_is_fitted(self)
        X = as_rows(validate_data(self, X, dtype=np.float64, reset=False))
        Y = X if Y is None else as_rows(validate_data(self, Y, dtype=np.float64, reset=False))
        K = np.empty((X.shape[0], Y.shape[0]))
        check(lib.rfx_sketch_exact_kernel(self._sketch, cmat(X), cmat(Y), mat(K)))
        return K

    def __getstate__(self):
        state = dict(super().__getstate__())
        sk = state.pop("_sketch", None)
        if sk is not None:
            # the map is sampled again from its parameters: the same bits
            p = lib.rfx_sketch_get_params(sk)
            state["_map"] = {"d": int(lib.rfx_sketch_input_dim(sk)),
                             "params": {f: getattr(p, f) for f in _FIELDS}}
        return state

    def __setstate__(self, state):
        mp = state.pop("_map", None)
        super().__setstate__(state)
        if mp is not None:
            p = ffi.new("rfx_sketch_params *", lib.rfx_sketch_params_default())
            for f, v in mp["params"].items():
                setattr(p, f, v)
            self._sketch = _create(p, mp["d"])


class PolynomialCountSketch(_Sketch):
    """Tensor Sketch (Pham & Pagh, KDD 2013) of the polynomial kernel
    ``(gamma <x, y> + coef0)^degree``: the circular convolution of
    ``degree`` count sketches of ``[sqrt(gamma) x, sqrt(coef0)]``, a drop-in
    for ``sklearn.kernel_approximation.PolynomialCountSketch`` (same
    parameters and features; hashes from rfx's own generator). The
    convolutions run by FFT when n_components is a power of two >= 256,
    directly otherwise.

    Parameters
    ----------
    gamma : float, default=1.0
    degree : int, default=2
    coef0 : float, default=0
        >= 0.
    n_components : int, default=100
    random_state : int, RandomState instance or None, default=None
    n_jobs : int or None, default=None
        Threads for the transform (results never depend on it).
    """

    _kind = 0

    def __init__(self, *, gamma=1.0, degree=2, coef0=0, n_components=100, random_state=None,
                 n_jobs=None):
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_components = n_components
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _fill(self, p):
        p.gamma = _real(self.gamma, "gamma")
        p.coef0 = _real(self.coef0, "coef0")
        p.degree = _common.check_count(self.degree, "degree", 1)
        p.n_components = _common.check_count(self.n_components, "n_components", 1)


class RandomMaclaurinFeatures(_Sketch):
    """Random Maclaurin features (Kar & Karnick, AISTATS 2012) of a
    dot-product kernel ``f(<x, y>) = sum_n a_n <x, y>^n``: feature j draws an
    order N with P(N = n) = 2^-(n+1) and N Rademacher vectors w_i, and is
    ``sqrt(a_N 2^(N+1) / D) prod_i <w_i, x>``, unbiased for the kernel.

    Parameters
    ----------
    kernel : {"polynomial", "exponential"}, default="polynomial"
        ``(gamma <x, y> + coef0)^degree`` or ``exp(gamma <x, y>)``.
    degree : int, default=2
    gamma : float, default=1.0
    coef0 : float, default=0
        >= 0 (polynomial).
    n_components : int, default=100
    random_state : int, RandomState instance or None, default=None
    n_jobs : int or None, default=None
    """

    _kind = 1

    def __init__(self, *, kernel="polynomial", degree=2, gamma=1.0, coef0=0, n_components=100,
                 random_state=None, n_jobs=None):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.n_components = n_components
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _fill(self, p):
        p.dot_kernel = _common._name_to_enum(self.kernel, "kernel", lib.rfx_dot_kernel_from_name,
                                             "rfx_dot_kernel")
        p.gamma = _real(self.gamma, "gamma")
        p.coef0 = _real(self.coef0, "coef0")
        p.degree = _common.check_count(self.degree, "degree", 1)
        p.n_components = _common.check_count(self.n_components, "n_components", 1)


class AdditiveChi2Sampler(_Sketch):
    """The sampled feature map of the additive chi2 kernel
    ``sum_i 2 x_i y_i / (x_i + y_i)`` (Vempati et al. 2010): deterministic,
    ``n_features_in_ (2 sample_steps - 1)`` columns, the same numbers as
    ``sklearn.kernel_approximation.AdditiveChi2Sampler`` (X >= 0).

    Parameters
    ----------
    sample_steps : int, default=2
    sample_interval : float or None, default=None
        None: 0.8, 0.5, 0.4 for sample_steps 1, 2, 3 (required above 3).
    n_jobs : int or None, default=None

    Attributes
    ----------
    sample_interval_ : float
    """

    _kind = 2
    _random = False

    def __init__(self, *, sample_steps=2, sample_interval=None, n_jobs=None):
        self.sample_steps = sample_steps
        self.sample_interval = sample_interval
        self.n_jobs = n_jobs

    def _fill(self, p):
        p.sample_steps = _common.check_count(self.sample_steps, "sample_steps", 1)
        if self.sample_interval is not None:
            p.sample_interval = _real(self.sample_interval, "sample_interval")
            if not p.sample_interval > 0:
                raise ValueError("sample_interval must be > 0, got %r" % (self.sample_interval,))

    def _check_domain(self, X):
        bad = np.argwhere(X < 0)
        if len(bad):
            r, c = bad[0]
            raise ValueError("X: row %d, column %d is %g; the additive-chi2 kernel needs x >= 0"
                             % (r, c, X[r, c]))

    def fit(self, X, y=None):
        super().fit(X, y)
        self.sample_interval_ = float(lib.rfx_sketch_get_params(self._sketch).sample_interval)
        return self

    _rfx_tags = {"stateless": True, "requires_positive_X": True}


class SkewedChi2Sampler(_Sketch):
    """Random Fourier features of the skewed chi2 kernel
    ``prod_i 2 sqrt(x_i + c) sqrt(y_i + c) / (x_i + y_i + 2 c)`` (Li,
    Ionescu & Sminchisescu 2010), c = skewedness: ``sqrt(2/D) cos(log(x + c)
    W + b)`` with W from the hyperbolic secant distribution, as
    ``sklearn.kernel_approximation.SkewedChi2Sampler`` (X > -skewedness).

    Parameters
    ----------
    skewedness : float, default=1.0
    n_components : int, default=100
    random_state : int, RandomState instance or None, default=None
    n_jobs : int or None, default=None
    """

    _kind = 3

    def __init__(self, *, skewedness=1.0, n_components=100, random_state=None, n_jobs=None):
        self.skewedness = skewedness
        self.n_components = n_components
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _fill(self, p):
        p.skewedness = _real(self.skewedness, "skewedness")
        p.n_components = _common.check_count(self.n_components, "n_components", 1)
