# SPDX-License-Identifier: BSD-3-Clause
"""A user's spectral density: RandomFourierFeatures(kernel="custom",
spectral_sampler=f), with f(rng, d) drawing one frequency."""
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics.pairwise import laplacian_kernel

import rfx


def gaussian(rng, d):
    """N(0, I): the gaussian kernel's density, drawn as rfx draws it."""
    return rng.normal(d)


def cauchy(rng, d):
    """Independent Cauchy(0, 1) coordinates as ratios of normals (rfx's
    laplacian kernel inverts the distribution function instead): the
    laplacian kernel exp(-|t|_1)."""
    z = rng.normal(2 * d)
    return z[:d] / z[d:]


def test_gaussian_density_gives_the_gaussian_map():
    X = np.random.RandomState(0).normal(size=(40, 4))
    for form in ("cos_bias", "cos_sin"):
        ref = rfx.RandomFourierFeatures(200, length_scale=1.3, form=form, random_state=5).fit(X)
        own = rfx.RandomFourierFeatures(200, kernel="custom", spectral_sampler=gaussian,
                                        length_scale=1.3, form=form, random_state=5).fit(X)
        assert np.array_equal(own.random_weights_, ref.random_weights_)
        assert np.array_equal(own.random_offset_, ref.random_offset_)
        assert np.array_equal(own.transform(X), ref.transform(X))
    # per-input length scales divide the drawn frequencies too
    ls = np.array([0.5, 1.0, 2.0, 4.0])
    ref = rfx.RandomFourierFeatures(64, length_scale=ls, random_state=1).fit(X)
    own = rfx.RandomFourierFeatures(64, kernel="custom", spectral_sampler=gaussian,
                                    length_scale=ls, random_state=1).fit(X)
    assert np.array_equal(own.random_weights_, ref.random_weights_)


def test_cauchy_density_approximates_the_laplacian_kernel():
    X = np.random.RandomState(1).uniform(-1, 1, size=(60, 3))
    l = 1.5
    K = laplacian_kernel(X, gamma=1.0 / l)

    def err(t):
        Z = t.fit(X).transform(X)
        return np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K)

    own = [err(rfx.RandomFourierFeatures(2048, kernel="custom", spectral_sampler=cauchy,
                                         length_scale=l, random_state=s)) for s in range(6)]
    ref = [err(rfx.RandomFourierFeatures(2048, kernel="laplacian", length_scale=l,
                                         random_state=s)) for s in range(6)]
    # the same law drawn otherwise: errors of the same Monte Carlo size,
    # about 3 / sqrt(D)
    assert np.median(own) < 0.1
    assert 0.8 < np.median(own) / np.median(ref) < 1.25
    # E z(x).z(y) = exp(-|x - y|_1 / l): the mean over 300 seeds of one pair
    x = np.array([[0.1, -0.2, 0.3]])
    y = x + np.array([[0.5, -0.25, 0.25]]) * l  # |t|_1 = 1
    dots = []
    for s in range(300):
        t = rfx.RandomFourierFeatures(32, kernel="custom", spectral_sampler=cauchy,
                                      length_scale=l, random_state=1000 + s).fit(x)
        dots.append(float(t.transform(x) @ t.transform(y).T))
    m, se = np.mean(dots), np.std(dots, ddof=1) / np.sqrt(len(dots))
    assert abs(m - np.exp(-1.0)) < 4.5 * se


def test_sampler_errors_propagate():
    X = np.zeros((3, 4))

    def boom(rng, d):
        raise ValueError("my density is undefined here")

    t = rfx.RandomFourierFeatures(8, kernel="custom", spectral_sampler=boom)
    with pytest.raises(ValueError, match="my density is undefined here") as info:
        t.fit(X)
    cause = str(info.value.__cause__)  # the C status's message
    assert "features.spectral: frequency 0: ValueError: my density is undefined here" in cause
    assert not hasattr(t, "seed_")
    with pytest.raises(ValueError, match="must return 4 values"):
        rfx.RandomFourierFeatures(8, kernel="custom",
                                  spectral_sampler=lambda rng, d: rng.normal(d + 1)).fit(X)
    with pytest.raises(RuntimeError, match="frequency 0, coordinate 0"):
        rfx.RandomFourierFeatures(8, kernel="custom",
                                  spectral_sampler=lambda rng, d: np.full(d, np.nan)).fit(X)
    with pytest.raises(ValueError, match="needs|none is given"):
        rfx.RandomFourierFeatures(8, kernel="custom").fit(X)
    with pytest.raises(ValueError, match="set kernel='custom'"):
        rfx.RandomFourierFeatures(8, spectral_sampler=gaussian).fit(X)
    with pytest.raises(TypeError, match="callable"):
        rfx.RandomFourierFeatures(8, kernel="custom", spectral_sampler=3).fit(X)
    with pytest.raises(ValueError, match="structure"):
        rfx.RandomFourierFeatures(8, kernel="custom", spectral_sampler=gaussian,
                                  structure="sorf").fit(X)
    t = rfx.RandomFourierFeatures(8, kernel="custom", spectral_sampler=gaussian).fit(X)
    with pytest.raises(ValueError, match="custom kernel"):
        t.exact_kernel(X)
    with pytest.raises(ValueError, match="kernel='custom'"):
        rfx.RFFRegressor(8, kernel="custom").fit(X, np.zeros(3))


def test_rng_draws_and_pickling():
    seen = {}

    def sampler(rng, d):
        seen["u"] = rng.uniform()
        seen["g"] = rng.gamma(2.0, size=(2,))
        seen["b"] = rng.bits()
        return rng.normal(d)

    X = np.random.RandomState(3).normal(size=(10, 2))
    t = rfx.RandomFourierFeatures(16, kernel="custom", spectral_sampler=sampler,
                                  random_state=2).fit(X)
    assert 0 < seen["u"] < 1 and seen["g"].shape == (2,) and (seen["g"] > 0).all()
    assert 0 <= seen["b"] < 2 ** 64
    # reproducible: the same seed draws the same frequencies
    t2 = clone(t).fit(X)
    assert np.array_equal(t2.transform(X), t.transform(X))
    assert clone(t).get_params()["spectral_sampler"] is sampler
    # pickled with a module-level sampler, re-drawn alike on loading
    t3 = rfx.RandomFourierFeatures(16, kernel="custom", spectral_sampler=cauchy,
                                   random_state=2).fit(X)
    t4 = pickle.loads(pickle.dumps(t3))
    assert np.array_equal(t4.transform(X), t3.transform(X))


def test_regressors_take_a_sampler():
    rs = np.random.RandomState(4)
    X = rs.uniform(-1, 1, size=(120, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2
    for cls in (rfx.RFFRegressor, rfx.BayesianRFFRegressor):
        # the length scale chosen by the fit, on maps drawn by the sampler:
        # a gaussian sampler gives the gaussian model exactly
        ref = cls(128, random_state=3).fit(X, y)
        own = cls(128, kernel="custom", spectral_sampler=gaussian, random_state=3).fit(X, y)
        assert np.array_equal(own.predict(X), ref.predict(X))
        # the model keeps the frequencies: pickles do not call the sampler
        back = pickle.loads(pickle.dumps(own))
        assert np.array_equal(back.predict(X), own.predict(X))
    m = rfx.RFFRegressor(256, kernel="custom", spectral_sampler=cauchy, length_scale=1.0,
                         random_state=0).fit(X, y)
    assert m.score(X, y) > 0.9

    def boom(rng, d):
        raise ArithmeticError("no density today")

    with pytest.raises(ArithmeticError, match="no density today"):
        rfx.RFFRegressor(16, kernel="custom", spectral_sampler=boom).fit(X, y)
    clf = rfx.RFFClassifier(64, kernel="custom", spectral_sampler=gaussian,
                            random_state=0).fit(X, y > np.median(y))
    assert clf.score(X, y > np.median(y)) > 0.8


def _exact(kind, r, ls, nu=1.5):
    """The built-in kernels at (x - y) / ls, r the differences (..., d)."""
    u = r / ls
    if kind == "gaussian":
        return np.exp(-0.5 * (u ** 2).sum(-1))
    if kind == "laplacian":
        return np.exp(-np.abs(u).sum(-1))
    if kind == "cauchy":
        return np.prod(1.0 / (1.0 + u ** 2), axis=-1)
    t = np.sqrt(3.0) * np.sqrt((u ** 2).sum(-1))  # matern 3/2
    return (1 + t) * np.exp(-t)


@pytest.mark.parametrize("product", [False, True])
def test_kernel_combination(product):
    """The features of a weighted sum (its mean) or product of kernels approach
    the exact combination at the Monte Carlo rate; pickling and cloning keep
    the sampler; bad terms are refused."""
    terms = [("gaussian", 0.6, 1.0), ("laplacian", 2.0, 3.0), ("cauchy", 1.5, 0.5)]
    mix = rfx.KernelCombination(terms, product=product)
    X = np.random.RandomState(3).uniform(-1, 1, size=(40, 2))
    r = X[:, None, :] - X[None, :, :]
    parts = [w * _exact(k, r, ls) for k, ls, w in terms]
    K = np.prod([_exact(k, r, ls) for k, ls, _ in terms], axis=0) if product else \
        sum(parts) / sum(w for _, _, w in terms)
    errs = []
    for D in (500, 8000):
        e = [np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K) for Z in (
            rfx.RandomFourierFeatures(D, kernel="custom", spectral_sampler=mix, length_scale=1.0,
                                      form="cos_sin", random_state=s).fit_transform(X)
            for s in range(4))]
        errs.append(np.mean(e))
    assert 2.5 < errs[0] / errs[1] < 6.5, errs
    assert errs[1] < 0.1
    back = pickle.loads(pickle.dumps(mix))
    est = rfx.RandomFourierFeatures(64, kernel="custom", spectral_sampler=back, length_scale=1.0,
                                    random_state=1)
    ref = rfx.RandomFourierFeatures(64, kernel="custom", spectral_sampler=mix, length_scale=1.0,
                                    random_state=1)
    np.testing.assert_array_equal(clone(est).fit_transform(X), ref.fit_transform(X))
    with pytest.raises(ValueError, match="each term"):
        rfx.KernelCombination([("rbf", 1.0)])
    with pytest.raises(ValueError, match="length_scale"):
        rfx.KernelCombination([("gaussian", 0.0)])
