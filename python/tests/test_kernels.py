# SPDX-License-Identifier: BSD-3-Clause
"""Exact kernels, KernelRidge and GaussianProcessRegressor against
scikit-learn and closed forms."""
import pickle

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor as SkGPR
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern, WhiteKernel
from sklearn.kernel_ridge import KernelRidge as SkKernelRidge
from sklearn.metrics.pairwise import (laplacian_kernel, linear_kernel, polynomial_kernel,
                                      rbf_kernel, sigmoid_kernel)
from sklearn.utils.estimator_checks import parametrize_with_checks

import rfx


@parametrize_with_checks([rfx.KernelRidge(alpha=0.1),
                          rfx.GaussianProcessRegressor(rfx.Kernel.gaussian(1.0))])
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture
def data():
    rs = np.random.RandomState(3)
    return rs.normal(size=(40, 5)), rs.normal(size=(25, 5))


def test_kernels_equal_scikit_learn(data):
    X, Y = data
    cases = [
        (rfx.Kernel.rbf(0.3), rbf_kernel(X, Y, gamma=0.3)),
        (rfx.Kernel.laplacian(0.2), laplacian_kernel(X, Y, gamma=0.2)),
        (rfx.Kernel.polynomial(3, 0.5, 1.2), polynomial_kernel(X, Y, 3, 0.5, 1.2)),
        (rfx.Kernel.sigmoid(0.1, 0.3), sigmoid_kernel(X, Y, 0.1, 0.3)),
        (rfx.Kernel.linear(), linear_kernel(X, Y)),
        (rfx.Kernel.gaussian([1.0, 2.0, 0.5, 3.0, 1.5]),
         RBF(length_scale=[1.0, 2.0, 0.5, 3.0, 1.5])(X, Y)),
    ]
    for nu in (0.5, 1.5, 2.5, 0.8, 3.7):
        cases.append((rfx.Kernel.matern(nu, 1.3), Matern(length_scale=1.3, nu=nu)(X, Y)))
    for k, ref in cases:
        K = k(X, Y)
        assert np.allclose(K, ref, rtol=1e-11, atol=1e-13), k


def test_algebra_and_symmetry(data):
    X, _ = data
    a, b = rfx.Kernel.rbf(0.4), rfx.Kernel.polynomial(2, 0.1, 1.0)
    A, B = a(X), b(X)
    assert np.allclose((a + b)(X), A + B, rtol=1e-14)
    assert np.allclose((a * b)(X), A * B, rtol=1e-14)
    assert np.allclose((2.5 * a)(X), 2.5 * A, rtol=1e-14)
    assert np.allclose(b.exp()(X), np.exp(B), rtol=1e-13)
    w = np.exp(-np.sum(X ** 2, axis=1))
    assert np.allclose(a.warp(lambda x: np.exp(-x @ x))(X), w[:, None] * A * w[None, :],
                       rtol=1e-13)
    for k in (a, b, a + b, a * b, rfx.Kernel.laplacian(1.0), rfx.Kernel.delta()):
        K = k(X)
        assert np.array_equal(K, K.T)
        assert np.linalg.eigvalsh(K).min() >= -1e-10 * np.abs(K).max()
    assert np.array_equal(rfx.Kernel.delta()(X), np.eye(len(X)))
    assert np.allclose(a.diag(X), 1.0)
    k2 = pickle.loads(pickle.dumps(2.0 * a + b.exp()))
    assert np.array_equal(k2(X), (2.0 * a + b.exp())(X))
    with pytest.raises(ValueError):
        rfx.Kernel.rbf(-1.0)
    with pytest.raises(ValueError):
        -1.0 * a


def test_kernel_ridge_equals_scikit_learn(data):
    X, Xt = data
    rs = np.random.RandomState(0)
    y = np.sin(X[:, 0]) + 0.1 * rs.normal(size=len(X))
    Y2 = np.c_[y, np.cos(X[:, 1])]
    for kernel, kw in (("rbf", {"gamma": 0.2}), ("laplacian", {"gamma": 0.3}),
                       ("polynomial", {"degree": 2, "gamma": 0.5, "coef0": 1.0})):
        ours = rfx.KernelRidge(alpha=0.05, kernel=kernel, **kw).fit(X, y)
        ref = SkKernelRidge(alpha=0.05, kernel=kernel, **kw).fit(X, y)
        assert np.allclose(ours.dual_coef_, ref.dual_coef_, rtol=1e-8, atol=1e-10)
        assert np.allclose(ours.predict(Xt), ref.predict(Xt), rtol=1e-8, atol=1e-10)
    ours = rfx.KernelRidge(alpha=0.1, gamma=0.2).fit(X, Y2)
    ref = SkKernelRidge(alpha=0.1, kernel="rbf", gamma=0.2).fit(X, Y2)
    assert ours.predict(Xt).shape == (len(Xt), 2)
    assert np.allclose(ours.predict(Xt), ref.predict(Xt), rtol=1e-8, atol=1e-10)
    m2 = pickle.loads(pickle.dumps(ours))
    assert np.array_equal(m2.predict(Xt), ours.predict(Xt))


def test_gp_equals_closed_form_and_scikit_learn(data):
    X, Xt = data
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1]
    s2, noise = 1.7, 0.05
    gp = rfx.GaussianProcessRegressor(rfx.Kernel.gaussian(1.5), noise_var=noise,
                                      amplitude=s2, normalize_y=False).fit(X, y)
    K = s2 * RBF(1.5)(X)
    Ks = s2 * RBF(1.5)(Xt, X)
    C = K + noise * np.eye(len(X))
    a = np.linalg.solve(C, y)
    mean = Ks @ a
    var = s2 - np.einsum("ij,ji->i", Ks, np.linalg.solve(C, Ks.T))
    lml = -0.5 * y @ a - 0.5 * np.linalg.slogdet(C)[1] - 0.5 * len(y) * np.log(2 * np.pi)
    m, s = gp.predict(Xt, return_std=True)
    assert np.allclose(m, mean, rtol=1e-9, atol=1e-11)
    assert np.allclose(s, np.sqrt(var), rtol=1e-7, atol=1e-9)
    _, sn = gp.predict(Xt, return_std=True, noisy=True)
    assert np.allclose(sn, np.sqrt(var + noise), rtol=1e-7)
    assert abs(gp.log_marginal_likelihood_value_ - lml) <= 1e-9 * abs(lml)
    ref = SkGPR(ConstantKernel(s2, "fixed") * RBF(1.5, "fixed") + WhiteKernel(noise, "fixed"),
                optimizer=None).fit(X, y)
    assert abs(ref.log_marginal_likelihood_value_ - lml) <= 1e-9 * abs(lml)
    # fitted s2 and noise: the likelihood is at a maximum (noisy targets:
    # an interior optimum)
    y = y + 0.5 * np.random.RandomState(5).normal(size=len(y))
    fit = rfx.GaussianProcessRegressor(rfx.Kernel.gaussian(1.5), normalize_y=False).fit(X, y)
    best = fit.log_marginal_likelihood_value_
    for f_s, f_n in ((1.1, 1.0), (0.9, 1.0), (1.0, 1.1), (1.0, 0.9)):
        g = rfx.GaussianProcessRegressor(rfx.Kernel.gaussian(1.5), normalize_y=False,
                                         amplitude=fit.amplitude_ * f_s,
                                         noise_var=fit.noise_var_ * f_n).fit(X, y)
        assert g.log_marginal_likelihood_value_ <= best + 1e-9
    g2 = pickle.loads(pickle.dumps(fit))
    assert np.array_equal(g2.predict(Xt), fit.predict(Xt))


@parametrize_with_checks([rfx.Nystroem(gamma=0.5, n_components=20, random_state=0)])
def test_nystroem_sklearn_compatible(estimator, check):
    check(estimator)


def test_nystroem_equals_scikit_learn_on_the_same_landmarks():
    from sklearn.kernel_approximation import Nystroem as SkNystroem
    rs = np.random.RandomState(2)
    X, Xt = rs.normal(size=(200, 6)), rs.normal(size=(30, 6))
    ours = rfx.Nystroem(gamma=0.1, n_components=50, random_state=1).fit(X)
    L = ours.components_
    assert np.array_equal(L, X[ours.component_indices_])
    ref = SkNystroem(gamma=0.1, n_components=50).fit(L)  # every row a landmark
    Z, R = ours.transform(Xt), ref.transform(Xt)
    assert np.allclose(Z @ Z.T, R @ R.T, rtol=1e-9, atol=1e-11)
    # the closed form k(x, L) K_LL^-1 k(L, y)
    KxL = rbf_kernel(Xt, L, gamma=0.1)
    assert np.allclose(Z @ Z.T, KxL @ np.linalg.solve(rbf_kernel(L, gamma=0.1), KxL.T),
                       rtol=1e-8, atol=1e-10)
    z2 = pickle.loads(pickle.dumps(ours))
    assert np.array_equal(z2.transform(Xt), Z)
    # more landmarks, a better approximation of the kernel
    K = rbf_kernel(Xt, X, gamma=0.1)
    errs = []
    for m in (10, 40, 160):
        ny = rfx.Nystroem(gamma=0.1, n_components=m, random_state=0).fit(X)
        errs.append(np.linalg.norm(ny.transform(Xt) @ ny.transform(X).T - K) / np.linalg.norm(K))
    assert errs[0] > errs[1] > errs[2]


def test_arccos_kernel_is_the_mean_of_relu_features():
    # the order-1 arc-cosine kernel against ReLU features sqrt(2/D) relu(W x + b)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 3))
    sigma, bias, D = 0.8, 0.5, 400000
    W = sigma * rng.normal(size=(D, 3))
    b = bias * rng.normal(size=D)
    Z = np.sqrt(2.0 / D) * np.maximum(X @ W.T + b, 0.0)
    K = rfx.Kernel.arccos(1, sigma=sigma, bias=bias)(X)
    np.testing.assert_allclose(K, Z @ Z.T, rtol=0.02, atol=0.01)
    # Cho & Saul's closed form at theta = 0: k(x, x) = |x'|^2
    np.testing.assert_allclose(np.diag(K), sigma**2 * (X**2).sum(1) + bias**2, rtol=1e-13)


def test_bilinear_kernel_and_polynomial_with_negative_coef0():
    from sklearn.metrics.pairwise import polynomial_kernel
    rng = np.random.default_rng(1)
    X = rng.normal(size=(5, 3))
    B = rng.normal(size=(3, 2))
    A = B @ B.T
    np.testing.assert_allclose(rfx.Kernel.bilinear(A)(X), X @ A @ X.T, rtol=1e-13, atol=1e-13)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        rfx.Kernel.bilinear(-A)
    K = rfx.Kernel.polynomial(degree=3, gamma=0.5, coef0=-0.7)(X)
    np.testing.assert_allclose(K, polynomial_kernel(X, degree=3, gamma=0.5, coef0=-0.7),
                               rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("landmarks", ["kmeans", "leverage"])
def test_nystroem_landmarks_beat_uniform_on_imbalanced_data(landmarks):
    # a dense blob and a few far rows: uniform landmarks miss the far rows
    rng = np.random.default_rng(3)
    X = np.vstack([0.15 * rng.normal(size=(570, 2)), rng.uniform(-3, 3, size=(30, 2))])
    K = rfx.Kernel.rbf(2.0)(X)

    def err(kind, seed):
        ny = rfx.Nystroem(gamma=2.0, n_components=30, landmarks=kind, random_state=seed).fit(X)
        Z = ny.transform(X)
        return np.linalg.norm(K - Z @ Z.T) / np.linalg.norm(K)

    e_uni = np.median([err("uniform", s) for s in range(5)])
    e_new = np.median([err(landmarks, s) for s in range(5)])
    assert e_new < 0.7 * e_uni


def test_nystroem_auto_size_and_bad_landmarks():
    X = np.random.default_rng(0).uniform(-1, 1, size=(300, 2))
    ny = rfx.Nystroem(gamma=1.0, n_components="auto", landmarks="leverage", random_state=0).fit(X)
    assert 1 <= ny.normalization_.shape[0] <= 300
    with pytest.raises(ValueError, match="landmarks must be one of"):
        rfx.Nystroem(landmarks="grid").fit(X)
