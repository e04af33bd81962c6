# SPDX-License-Identifier: BSD-3-Clause
"""Linear attention by positive random features against the exact softmax
attention computed here with numpy."""
import pickle

import numpy as np
import pytest

import rfx


def _exact(Q, K, V, causal=False):
    S = Q @ K.T
    if causal:
        S = np.where(np.tril(np.ones_like(S)) > 0, S, -np.inf)
    S -= S.max(axis=1, keepdims=True)
    P = np.exp(S)
    return (P / P.sum(axis=1, keepdims=True)) @ V


def test_exact_attention_equals_numpy():
    rs = np.random.RandomState(0)
    Q, K, V = rs.normal(size=(3, 50, 6))
    for causal in (False, True):
        assert np.allclose(rfx.exact_attention(Q, K, V, causal), _exact(Q, K, V, causal),
                           rtol=1e-12, atol=1e-13)


def test_linear_attention_error_falls_with_D():
    rs = np.random.RandomState(1)
    Q, K = rs.normal(size=(2, 128, 16)) * 0.2
    V = rs.normal(size=(128, 4))
    ref = _exact(Q, K, V)
    errs = []
    for D in (64, 256, 1024, 4096):
        e = [np.linalg.norm(rfx.SoftmaxFeatures(16, D, random_state=s).attention(Q, K, V) - ref)
             for s in range(10)]
        errs.append(np.mean(e) / np.linalg.norm(ref))
    assert all(a > b for a, b in zip(errs, errs[1:]))
    slope = np.polyfit(np.log([64, 256, 1024, 4096]), np.log(errs), 1)[0]
    assert -0.7 < slope < -0.3  # Monte Carlo: error ~ D^-1/2


def test_features_are_positive_and_unbiased():
    rs = np.random.RandomState(2)
    x, y = rs.normal(size=(2, 8)) * 0.3
    est = [rfx.SoftmaxFeatures(8, 64, orthogonal=False, random_state=s).transform(
        np.vstack([x, y])) for s in range(400)]
    assert all((P > 0).all() for P in est)
    vals = np.array([P[0] @ P[1] for P in est])
    se = vals.std() / np.sqrt(len(vals))
    assert abs(vals.mean() - np.exp(x @ y)) < 4 * se
    sf = rfx.SoftmaxFeatures(8, 32, hyperbolic=True, random_state=0)
    sf2 = pickle.loads(pickle.dumps(sf))
    X = np.vstack([x, y])
    assert np.array_equal(sf.transform(X), sf2.transform(X))
    P, ls = sf.transform(X * 30, return_log_scale=True)
    assert np.all(np.isfinite(P)) and np.all(P.max(axis=1) <= 1.0 + 1e-12)
    with pytest.raises(ValueError):
        sf.transform(np.ones((2, 3)))


def _gated_numpy(Phi_q, Phi_k, V, g):
    """out_t = sum_j a_tj v_j / sum_j a_tj, a_tj = phi(q_t).phi(k_j) (1 - g_j)
    prod_{j < l <= t} g_l."""
    L = len(g)
    out = np.empty((L, V.shape[1]))
    for t in range(L):
        a = Phi_k[: t + 1] @ Phi_q[t] * (1 - g[: t + 1])
        for j in range(t + 1):
            a[j] *= np.prod(g[j + 1: t + 1])
        out[t] = a @ V[: t + 1] / a.sum()
    return out


@pytest.mark.parametrize("kind", ["positive", "hyperbolic", "trigonometric"])
def test_gated_attention(kind):
    """The gated recurrence equals its weights summed with numpy; g = t/(t+1)
    is causal attention; the gates are checked."""
    rs = np.random.RandomState(4)
    Q, K = rs.normal(size=(2, 60, 5)) * 0.3
    V = rs.normal(size=(60, 3))
    g = rs.uniform(0.5, 0.99, size=60)
    sf = rfx.SoftmaxFeatures(5, 128, kind=kind, random_state=2)
    got = sf.gated_attention(Q, K, V, g)
    want = _gated_numpy(sf.transform(Q), sf.transform(K), V, g)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    run = np.arange(60) / np.arange(1, 61)
    np.testing.assert_allclose(sf.gated_attention(Q, K, V, run), sf.attention(Q, K, V, causal=True),
                               rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match=r"gates\[3\]"):
        sf.gated_attention(Q, K, V, np.where(np.arange(60) == 3, 1.5, g))
    with pytest.raises(ValueError, match="one value per query"):
        sf.gated_attention(Q, K, V, g[:10])
    back = pickle.loads(pickle.dumps(sf))
    assert back.kind == kind
    np.testing.assert_array_equal(back.transform(Q), sf.transform(Q))


def test_trigonometric_attention_converges():
    """Random Feature Attention on unit-norm queries and keys scaled by
    1 / sigma: the error against exact softmax attention falls with D."""
    rs = np.random.RandomState(6)
    Q, K = rs.normal(size=(2, 128, 16))
    Q /= np.linalg.norm(Q, axis=1, keepdims=True)
    K /= np.linalg.norm(K, axis=1, keepdims=True)
    Q, K = Q / 0.8, K / 0.8
    V = rs.normal(size=(128, 4))
    ref = _exact(Q, K, V)
    errs = []
    for D in (256, 1024, 4096):
        e = [np.linalg.norm(rfx.SoftmaxFeatures(16, D, kind="trigonometric", random_state=s)
                            .attention(Q, K, V) - ref) for s in range(8)]
        errs.append(np.median(e) / np.linalg.norm(ref))
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 0.1
    with pytest.raises(ValueError, match="kind must be"):
        rfx.SoftmaxFeatures(4, 8, kind="cosine")
