"""KernelPCA against scikit-learn's KernelPCA and the projection's
invariances."""
import pickle

import numpy as np
import pytest
from sklearn.decomposition import KernelPCA as SkKernelPCA
from sklearn.utils.estimator_checks import parametrize_with_checks

import rfx


@parametrize_with_checks([rfx.KernelPCA(n_components=2),
                          rfx.KernelPCA(n_components=2, method="random_features",
                                        n_features=256, random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_equals_scikit_learn_kernel_pca():
    # theta = 1, standardised inputs: exp(-gamma |x - y|^2), sklearn's rbf
    rs = np.random.RandomState(0)
    X = rs.normal(size=(80, 4)) * [1.0, 3.0, 0.5, 2.0] + 1.0
    Xs = (X - X.mean(0)) / X.std(0)
    gamma = 0.3
    ours = rfx.KernelPCA(n_components=4, gamma=gamma).fit(X)
    ref = SkKernelPCA(n_components=4, kernel="rbf", gamma=gamma, eigen_solver="dense").fit(Xs)
    assert np.allclose(ours.eigenvalues_, ref.eigenvalues_, rtol=1e-10)
    T, R = ours.transform(X[:30]), ref.transform(Xs[:30])
    for j in range(4):  # up to the sign of each component
        s = np.sign(T[np.argmax(np.abs(T[:, j])), j] * R[np.argmax(np.abs(T[:, j])), j])
        assert np.allclose(T[:, j], s * R[:, j], atol=1e-9)
    assert np.allclose(ours.fit_transform(X), ours.transform(X), atol=1e-10)
    assert np.all(np.diff(ours.explained_variance_ratio_) <= 0)


def test_theta_zero_removes_an_input_and_pickles():
    rs = np.random.RandomState(1)
    X = rs.uniform(size=(60, 3))
    kp = rfx.KernelPCA(n_components=2, theta=[1.0, 0.5, 0.0], standardize=False).fit(X)
    Y = X.copy()
    Y[:, 2] = rs.uniform(size=60) * 100  # the input with theta 0
    assert np.array_equal(kp.transform(X), kp.transform(Y))
    again = pickle.loads(pickle.dumps(kp))
    assert np.array_equal(again.transform(X), kp.transform(X))
    assert np.array_equal(again.theta_, [1.0, 0.5, 0.0])
    with pytest.raises(ValueError, match="theta"):
        rfx.KernelPCA(theta=[1.0, 2.0, 0.0]).fit(X)
    with pytest.raises(ValueError, match="theta"):
        rfx.KernelPCA(theta=[1.0, 1.0]).fit(X)
    with pytest.raises(ValueError, match="n_components"):
        rfx.KernelPCA(n_components=61).fit(X)
