# SPDX-License-Identifier: BSD-3-Clause
"""rfx.GaussianProcessRegressor against scikit-learn's with the same fixed
kernel (ConstantKernel(s2) * RBF(l), alpha = the noise variance,
optimizer=None): the mean, the standard deviation, the covariance and the
draws of sample_y agree."""
import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor as SkGP
from sklearn.gaussian_process.kernels import RBF, ConstantKernel

import rfx


def _data():
    rs = np.random.RandomState(4)
    X = rs.uniform(-2, 2, size=(40, 2))
    y = np.sin(X[:, 0]) * np.cos(X[:, 1]) + 0.3 * X[:, 1] + 0.05 * rs.normal(size=40)
    Xt = rs.uniform(-2.5, 2.5, size=(15, 2))
    return X, y, Xt


@pytest.mark.parametrize("normalize_y", [False, True])
def test_mean_std_cov_equal_scikit_learn(normalize_y):
    X, y, Xt = _data()
    s2, ls, noise = 1.7, 0.8, 0.01
    ours = rfx.GaussianProcessRegressor(rfx.Kernel.gaussian(ls), noise_var=noise, amplitude=s2,
                                        normalize_y=normalize_y).fit(X, y)
    assert ours.jitter_ == 0.0  # else scikit-learn's alpha would need it too
    sk = SkGP(ConstantKernel(s2, "fixed") * RBF(ls, "fixed"), alpha=noise, optimizer=None,
              normalize_y=normalize_y).fit(X, y)
    m_sk, s_sk = sk.predict(Xt, return_std=True)
    _, c_sk = sk.predict(Xt, return_cov=True)
    m, s = ours.predict(Xt, return_std=True)
    m2, c = ours.predict(Xt, return_cov=True)
    assert c.shape == c_sk.shape == (15, 15)
    np.testing.assert_allclose(m, m_sk, rtol=0, atol=1e-8)
    np.testing.assert_array_equal(m2, m)
    np.testing.assert_allclose(s, s_sk, rtol=0, atol=1e-8)
    np.testing.assert_allclose(c, c_sk, rtol=0, atol=1e-8)
    np.testing.assert_allclose(np.sqrt(np.diag(c)), s, rtol=0, atol=1e-8)  # C's std agrees
    np.testing.assert_array_equal(c, c.T)
    # noisy targets: the noise (in y's units) on the diagonal
    _, cn = ours.predict(Xt, return_cov=True, noisy=True)
    y_var = np.var(y) if normalize_y else 1.0
    np.testing.assert_allclose(cn - c, noise * y_var * np.eye(15), rtol=0, atol=1e-12)
    _, sn = ours.predict(Xt, return_std=True, noisy=True)
    np.testing.assert_allclose(sn, np.sqrt(np.diag(cn)), rtol=0, atol=1e-8)
    with pytest.raises(RuntimeError, match="At most one"):
        ours.predict(Xt, return_std=True, return_cov=True)


def test_sample_y_equals_scikit_learn():
    X, y, _ = _data()
    Xt = np.array([[-1.0, 0.5], [0.3, -0.2], [1.5, 1.5], [4.0, -4.0]])  # well separated
    ours = rfx.GaussianProcessRegressor(rfx.Kernel.gaussian(0.8), noise_var=0.01,
                                        amplitude=1.7, normalize_y=False).fit(X, y)
    sk = SkGP(ConstantKernel(1.7, "fixed") * RBF(0.8, "fixed"), alpha=0.01,
              optimizer=None).fit(X, y)
    for n_samples, seed in ((1, 0), (5, 3)):
        a = ours.sample_y(Xt, n_samples=n_samples, random_state=seed)
        b = sk.sample_y(Xt, n_samples=n_samples, random_state=seed)
        assert a.shape == b.shape == (4, n_samples)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
    # the draws' moments are the posterior's: 20000 draws, 5-sigma bounds
    mean, cov = ours.predict(Xt, return_cov=True)
    draws = ours.sample_y(Xt, n_samples=20000, random_state=1)
    sd = np.sqrt(np.diag(cov))
    assert np.all(np.abs(draws.mean(axis=1) - mean) < 5 * sd / np.sqrt(20000))
    np.testing.assert_allclose(draws.std(axis=1), sd, rtol=5 * np.sqrt(0.5 / 20000))


def test_cov_after_pickling():
    import pickle
    X, y, Xt = _data()
    gp = rfx.GaussianProcessRegressor(rfx.Kernel.gaussian(0.8)).fit(X, y)
    _, c = gp.predict(Xt, return_cov=True)
    back = pickle.loads(pickle.dumps(gp))
    np.testing.assert_array_equal(back.predict(Xt, return_cov=True)[1], c)
