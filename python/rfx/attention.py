# SPDX-License-Identifier: BSD-3-Clause
"""Softmax-kernel attention in linear time by random features
(rfx/attention.h): positive features (Choromanski et al., "Rethinking
Attention with Performers", ICLR 2021), the trigonometric features of
Random Feature Attention (Peng et al., ICLR 2021) with its gated form, and
the exact attention to compare with."""
import numbers

import numpy as np

from . import _common
from ._lib import as_rows, check, cmat, ffi, lib, mat, serial_blas


def _rows(a, name):
    a = as_rows(np.asarray(a, dtype=np.float64))
    if a.ndim != 2:
        raise ValueError("%s must be 2-D, got shape %s" % (name, a.shape))
    if not np.all(np.isfinite(a)):
        raise ValueError("%s contains NaN or infinity" % name)
    return a


def _qkv(Q, K, V):
    Q, K, V = _rows(Q, "Q"), _rows(K, "K"), _rows(V, "V")
    return Q, K, V, np.empty((Q.shape[0], V.shape[1]))


def exact_attention(Q, K, V, causal=False, n_jobs=None):
    """softmax(Q K^T) V, row by row with a stable softmax: O(L_q L_k d).
    For the usual softmax(Q K^T / sqrt(d)) pass Q / d**0.25 and K / d**0.25.
    ``causal``: row i attends to keys 0..i only (L_q == L_k)."""
    Q, K, V, out = _qkv(Q, K, V)
    with serial_blas:
        check(lib.rfx_attention_exact(cmat(Q), cmat(K), cmat(V), mat(out), int(bool(causal)),
                                      _common.resolve_threads(n_jobs)))
    return out


class SoftmaxFeatures:
    """Random features of the softmax kernel exp(x.y), with w ~ N(0, I)
    (orthogonal blocks when ``orthogonal``):

    - ``kind="positive"`` (default): phi(x) = exp(w.x - |x|^2 / 2) / sqrt(D),
      FAVOR+'s features;
    - ``kind="hyperbolic"``: the pair exp(+-w.x - |x|^2 / 2) / sqrt(D) per
      frequency (lower variance);
    - ``kind="trigonometric"``: exp(|x|^2 / 2) [cos(w.x), sin(w.x)] /
      sqrt(D / 2), the Gaussian kernel's random Fourier features; with
      queries and keys of one norm this is Random Feature Attention. Its
      weight estimates can be negative, so a row's normaliser can come out
      <= 0 (a RuntimeError naming the row).

    All three give E phi(x).phi(y) = exp(x.y). ``hyperbolic=True`` is kept
    as ``kind="hyperbolic"``.

    Examples
    --------
    >>> import numpy as np, rfx
    >>> rs = np.random.RandomState(0)
    >>> Q, K, V = rs.normal(size=(3, 64, 8)) * 0.4
    >>> sf = rfx.SoftmaxFeatures(8, 1024, random_state=0)
    >>> approx, exact = sf.attention(Q, K, V), rfx.exact_attention(Q, K, V)
    >>> bool(np.linalg.norm(approx - exact) / np.linalg.norm(exact) < 0.1)
    True
    """

    def __init__(self, d, n_features=256, *, orthogonal=True, hyperbolic=False, kind=None,
                 random_state=None, n_jobs=None):
        for v, name in ((d, "d"), (n_features, "n_features")):
            if not isinstance(v, numbers.Integral) or isinstance(v, bool) or v < 1:
                raise ValueError("%s must be an int >= 1, got %r" % (name, v))
        if kind is None:
            kind = "hyperbolic" if hyperbolic else "positive"
        if kind not in ("positive", "hyperbolic", "trigonometric"):
            raise ValueError("kind must be 'positive', 'hyperbolic' or 'trigonometric', got %r"
                             % (kind,))
        if hyperbolic and kind != "hyperbolic":
            raise ValueError("hyperbolic=True contradicts kind=%r" % (kind,))
        self.d, self.n_features = int(d), int(n_features)
        self.kind = kind
        self.orthogonal, self.hyperbolic = bool(orthogonal), kind == "hyperbolic"
        self.seed_ = _common.resolve_seed(random_state)
        self.n_jobs = n_jobs
        self._create()

    def _create(self):
        out = ffi.new("rfx_softmax_features **")
        fn = {"positive": lib.rfx_softmax_features_create,
              "hyperbolic": lib.rfx_softmax_features_create_hyperbolic,
              "trigonometric": lib.rfx_softmax_features_create_trig}[
                  getattr(self, "kind", "hyperbolic" if self.hyperbolic else "positive")]
        with serial_blas:
            check(fn(self.d, self.n_features, self.seed_, int(self.orthogonal), out))
        self._sf = ffi.gc(out[0], lib.rfx_softmax_features_free)
        lib.rfx_softmax_features_set_threads(self._sf, _common.resolve_threads(self.n_jobs))

    def transform(self, X, return_log_scale=False):
        """phi(X), of shape (n, output dim). With ``return_log_scale`` each
        row is divided by exp of its largest exponent (no overflow or
        underflow to zero) and the log of that factor is returned too."""
        X = _rows(X, "X")
        D = int(lib.rfx_softmax_features_output_dim(self._sf))
        Phi = np.empty((X.shape[0], D))
        ls = np.empty(X.shape[0]) if return_log_scale else None
        with serial_blas:
            check(lib.rfx_softmax_features_transform(
                self._sf, cmat(X), mat(Phi),
                ffi.cast("double *", ls.ctypes.data) if return_log_scale else ffi.NULL))
        return (Phi, ls) if return_log_scale else Phi

    def attention(self, Q, K, V, causal=False):
        """The linear-time approximation of ``exact_attention(Q, K, V)``:
        D^-1 phi(Q) (phi(K)^T V), O(L D d) instead of O(L^2 d), never
        forming the L x L matrix; causal by prefix sums."""
        Q, K, V, out = _qkv(Q, K, V)
        with serial_blas:
            check(lib.rfx_attention_linear(self._sf, cmat(Q), cmat(K), cmat(V), mat(out),
                                           int(bool(causal)),
                                           _common.resolve_threads(self.n_jobs)))
        return out

    def gated_attention(self, Q, K, V, gates):
        """Random Feature Attention's gated recurrence (causal, L_q == L_k):
        S_t = g_t S_{t-1} + (1 - g_t) phi(k_t) v_t^T, z_t likewise with
        phi(k_t), out_t = phi(q_t).S_t / phi(q_t).z_t; ``gates`` holds one
        g_t in [0, 1] per position (g_t = t / (t + 1) is causal
        ``attention``; smaller gates forget the past faster)."""
        Q, K, V, out = _qkv(Q, K, V)
        g = np.ascontiguousarray(gates, dtype=np.float64)
        if g.shape != (Q.shape[0],):
            raise ValueError("gates must hold one value per query (%d), got shape %s"
                             % (Q.shape[0], g.shape))
        with serial_blas:
            check(lib.rfx_attention_gated(self._sf, cmat(Q), cmat(K), cmat(V),
                                          ffi.cast("const double *", g.ctypes.data), mat(out),
                                          _common.resolve_threads(self.n_jobs)))
        return out

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "_sf"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._create()
