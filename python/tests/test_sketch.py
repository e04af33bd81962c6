# SPDX-License-Identifier: BSD-3-Clause
"""PolynomialCountSketch, RandomMaclaurinFeatures, AdditiveChi2Sampler and
SkewedChi2Sampler (rfx.sketch) against scikit-learn: the same numbers for
the deterministic additive chi2 map, kernel errors beside scikit-learn's at
equal D for the random ones, and the scikit-learn estimator contract."""
import pickle

import numpy as np
import pytest
from sklearn import kernel_approximation as ska
from sklearn.base import clone
from sklearn.metrics.pairwise import polynomial_kernel
from sklearn.utils.estimator_checks import parametrize_with_checks

import rfx


def _rel_error(Z, K):
    return np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K)


def _unit_rows(n, d, seed):
    X = np.random.RandomState(seed).uniform(-1, 1, size=(n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _histograms(n, d, seed):
    return np.random.RandomState(seed).uniform(0.05, 1.0, size=(n, d))


@pytest.mark.parametrize("steps, interval", [(1, None), (2, None), (3, None), (4, 0.3)])
def test_additive_chi2_equals_scikit_learn(steps, interval):
    X = np.random.RandomState(0).uniform(0, 2, size=(30, 7))
    X[X < 0.3] = 0.0  # zeros map to zero features in both
    ours = rfx.AdditiveChi2Sampler(sample_steps=steps, sample_interval=interval).fit(X)
    theirs = ska.AdditiveChi2Sampler(sample_steps=steps, sample_interval=interval).fit(X)
    Z, Zs = ours.transform(X), theirs.transform(X)
    assert Z.shape == Zs.shape == (30, 7 * (2 * steps - 1))
    np.testing.assert_allclose(Z, Zs, rtol=0, atol=1e-12)
    if interval is None:
        assert ours.sample_interval_ == {1: 0.8, 2: 0.5, 3: 0.4}[steps]


def test_additive_chi2_kernel_and_errors():
    X = _histograms(10, 4, 1)
    m = rfx.AdditiveChi2Sampler(sample_steps=3).fit(X)
    K = m.exact_kernel(X)
    Kr = sum(2 * np.outer(X[:, i], X[:, i]) / np.add.outer(X[:, i], X[:, i]) for i in range(4))
    np.testing.assert_allclose(K, Kr, rtol=1e-14)
    Z = m.transform(X)
    # the sampling error of (3, 0.4) is at most 0.05 sum_i sqrt(x_i y_i)
    assert np.all(np.abs(Z @ Z.T - K) <= 0.0501 * (np.sqrt(X) @ np.sqrt(X).T))
    Xn = X.copy()
    Xn[2, 3] = -0.1
    with pytest.raises(ValueError, match="row 2, column 3"):
        m.transform(Xn)
    with pytest.raises(ValueError, match="sample_interval"):
        rfx.AdditiveChi2Sampler(sample_steps=5).fit(X)


def _median_errors(ours, theirs, X, K, seeds=range(25)):
    """The median relative kernel errors over seeds of rfx's map and
    scikit-learn's. Over 25 seeds, not 5: Tensor Sketch errors are
    heavy-tailed (rare hash collisions of the large sqrt(coef0) entry), and
    5-seed medians of the two equal distributions differ by up to 1.5x."""
    e = [_rel_error(clone(ours).set_params(random_state=s).fit_transform(X), K) for s in seeds]
    es = [_rel_error(clone(theirs).set_params(random_state=s).fit_transform(X), K)
          for s in seeds]
    return float(np.median(e)), float(np.median(es))


@pytest.mark.parametrize("degree, coef0, D", [(2, 0, 100), (2, 1, 512), (3, 1, 300)])
def test_polynomial_count_sketch_error_beside_scikit_learn(degree, coef0, D):
    X = _unit_rows(60, 10, 2)
    K = polynomial_kernel(X, degree=degree, gamma=1.0, coef0=coef0)
    kw = dict(degree=degree, coef0=coef0, gamma=1.0, n_components=D)
    ours = rfx.PolynomialCountSketch(**kw)
    np.testing.assert_allclose(ours.fit(X).exact_kernel(X), K, rtol=1e-12, atol=1e-14)
    e, es = _median_errors(ours, ska.PolynomialCountSketch(**kw), X, K)
    assert e <= 1.5 * es, (e, es)


def test_skewed_chi2_error_beside_scikit_learn():
    X = _histograms(60, 10, 3)
    c = 0.5
    K = np.prod(2 * np.sqrt(X[:, None, :] + c) * np.sqrt(X[None, :, :] + c)
                / (X[:, None, :] + X[None, :, :] + 2 * c), axis=2)
    ours = rfx.SkewedChi2Sampler(skewedness=c, n_components=300)
    np.testing.assert_allclose(ours.fit(X).exact_kernel(X), K, rtol=1e-12)
    e, es = _median_errors(ours, ska.SkewedChi2Sampler(skewedness=c, n_components=300), X, K)
    assert e <= 1.5 * es, (e, es)
    with pytest.raises(ValueError, match="row 4, column 1"):
        Xb = X.copy()
        Xb[4, 1] = -c
        ours.transform(Xb)


@pytest.mark.parametrize("kernel", ["polynomial", "exponential"])
def test_random_maclaurin_unbiased_and_converging(kernel):
    X = _unit_rows(6, 5, 4)
    K = (X @ X.T * 0.5 + 1) ** 3 if kernel == "polynomial" else np.exp(0.5 * X @ X.T)
    m = rfx.RandomMaclaurinFeatures(kernel=kernel, degree=3, gamma=0.5, coef0=1,
                                    n_components=64)
    np.testing.assert_allclose(m.fit(X).exact_kernel(X), K, rtol=1e-13)
    G = np.array([(lambda Z: Z @ Z.T)(clone(m).set_params(random_state=s).fit_transform(X))
                  for s in range(400)])
    se = G.std(axis=0) / np.sqrt(len(G))
    assert np.all(np.abs(G.mean(axis=0) - K) <= 5 * se)
    errs = [np.mean([_rel_error(clone(m).set_params(n_components=D, random_state=s)
                                .fit_transform(X), K) ** 2 for s in range(20)]) ** 0.5
            for D in (100, 1600)]
    assert 2.5 < errs[0] / errs[1] < 6.0, errs  # 4 for an error like 1 / sqrt(D)


def test_pickle_clone_and_threads():
    X = _histograms(200, 8, 5)
    for est in (rfx.PolynomialCountSketch(n_components=256, coef0=1, random_state=3),
                rfx.RandomMaclaurinFeatures(n_components=50, random_state=3),
                rfx.AdditiveChi2Sampler(),
                rfx.SkewedChi2Sampler(n_components=50, random_state=3)):
        Z = est.fit_transform(X)
        back = pickle.loads(pickle.dumps(est))
        assert np.array_equal(back.transform(X), Z)
        assert clone(est).get_params() == est.get_params()
        one = clone(est).set_params(n_jobs=1).fit_transform(X)
        assert np.array_equal(one, Z)
        assert est.get_feature_names_out().shape == (Z.shape[1],)


@parametrize_with_checks([rfx.PolynomialCountSketch(n_components=32),
                          rfx.RandomMaclaurinFeatures(n_components=32),
                          rfx.AdditiveChi2Sampler(),
                          rfx.SkewedChi2Sampler(n_components=32)])
def test_sklearn_compatible(estimator, check):
    check(estimator)
