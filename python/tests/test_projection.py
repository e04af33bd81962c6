# SPDX-License-Identifier: BSD-3-Clause
"""KernelPCA against scikit-learn's KernelPCA and the projection's
invariances; ProjectedRegressor against the C API and the command line."""
import pickle
import subprocess

import numpy as np
import pytest
from sklearn.decomposition import KernelPCA as SkKernelPCA
from sklearn.utils.estimator_checks import parametrize_with_checks

import rfx
from rfx._lib import as_rows, check, cmat, ffi, lib
from rfx._model import _load_buffer, _model_bytes
from rfx.projection import ProjectedRegressor


@parametrize_with_checks([rfx.KernelPCA(n_components=2),
                          rfx.KernelPCA(n_components=2, method="random_features",
                                        n_features=256, random_state=0),
                          ProjectedRegressor(n_particles=3, iterations=2),
                          ProjectedRegressor(2, surrogate="pce", n_particles=2, iterations=1,
                                             gamma=0.1)])
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


# ---------------------------------------------------------------------------
# ProjectedRegressor
# ---------------------------------------------------------------------------

def _sparse_problem(n, d, seed):
    """Three active inputs of d: sin(2 x0) + 2 x1^2 + x2 on U(-1, 1)^d."""
    X = np.random.RandomState(seed).uniform(-1, 1, size=(n, d))
    return X, np.sin(2 * X[:, 0]) + 2 * X[:, 1] ** 2 + X[:, 2]


@pytest.fixture(scope="module")
def sparse_data():
    X, y = _sparse_problem(120, 12, 0)
    Xt, yt = _sparse_problem(300, 12, 1)
    return X, y, Xt, yt


def _c_fit(X, y, seed, particles, iterations, n_features):
    """rfx_projected_fit called by hand as rfx fit --method projected does."""
    p = ffi.new("rfx_projected_params *", lib.rfx_projected_params_default())
    p.seed = seed
    p.n_particles = particles
    p.iterations = iterations
    fp = ffi.new("rfx_fit_params *", lib.rfx_fit_params_default())
    fp.features.n_features = n_features
    sp = ffi.new("rfx_srfe_params *", lib.rfx_srfe_params_default())
    sp.features.n_features = n_features
    sp.widen_rounds = 0
    p.fit = fp
    p.srfe = sp
    out = ffi.new("rfx_model **")
    Y = np.ascontiguousarray(y, dtype=np.float64).reshape(-1, 1)
    check(lib.rfx_projected_fit(p, cmat(as_rows(X)), cmat(Y), out, ffi.NULL))
    return ffi.gc(out[0], lib.rfx_model_free)


def test_equals_the_c_api_and_the_cli(cli, sparse_data, tmp_path):
    X, y, Xt, _ = sparse_data
    reg = ProjectedRegressor(n_particles=4, iterations=3, surrogate_components=100,
                             random_state=7).fit(X, y)
    # the C API, the same settings (and the training box rfx fit and the
    # estimators record): the same model file, byte for byte
    c_model = _c_fit(X, y, 7, 4, 3, 100)
    lo, hi = np.ascontiguousarray(X.min(axis=0)), np.ascontiguousarray(X.max(axis=0))
    check(lib.rfx_model_set_input_box(c_model, ffi.from_buffer("double[]", lo),
                                      ffi.from_buffer("double[]", hi)))
    assert _model_bytes(c_model) == reg.to_bytes()
    # the command line
    np.save(str(tmp_path / "train.npy"), np.column_stack([X, y]))
    np.save(str(tmp_path / "test.npy"), Xt)
    model = tmp_path / "m.rfx"
    for args in (["fit", tmp_path / "train.npy", "--method", "projected", "--particles", 4,
                  "--iterations", 3, "-D", 100, "--seed", 7, "--threads", 2, "-o", model],
                 ["predict", model, tmp_path / "test.npy", "-o", tmp_path / "p.npy"]):
        r = subprocess.run([cli] + [str(a) for a in args], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    assert model.read_bytes() == reg.to_bytes()
    assert np.array_equal(np.load(str(tmp_path / "p.npy")).ravel(), reg.predict(Xt))


def test_learns_the_active_inputs(sparse_data):
    X, y, Xt, yt = sparse_data
    reg = ProjectedRegressor(random_state=0).fit(X, y)
    # the nine inactive inputs end with (nearly) no weight, the three active
    # ones with much more
    assert reg.theta_[3:].max() < 0.05 < reg.theta_[:3].min()
    assert 1 <= reg.n_components_ <= 8 and reg.gamma_ in 10.0 ** np.arange(-2.5, 0.1, 0.5)
    err = np.linalg.norm(reg.predict(Xt) - yt) / np.linalg.norm(yt - yt.mean())
    raw = rfx.RFFRegressor(n_components=1000, random_state=0).fit(X, y).predict(Xt)
    err_raw = np.linalg.norm(raw - yt) / np.linalg.norm(yt - yt.mean())
    assert err < 0.25 * err_raw
    # the history: the best loss never rises, ends at the search loss, starts
    # at or below the screened start's loss; the default surrogate is the
    # candidate of least own score, and that score is the model's loss
    h = reg.loss_history_
    assert len(h) == reg.n_iterations_ + 1 and np.all(np.diff(h) <= 0)
    assert h[-1] == reg.search_loss_ and 4 <= reg.n_finalists_ <= 24
    scores, logs = reg.surrogate_scores_, reg.surrogate_log_scores_
    assert set(scores) == set(logs) == {"ridge", "srfe", "pce"}
    chosen = (logs if reg.surrogate_transform_ == "log" else scores)[reg.surrogate_]
    assert reg.loss_ == np.nanmin(list(scores.values()) + list(logs.values())) == chosen
    assert h[0] <= reg.theta0_loss_
    assert reg.n_evaluations_ == 10 * (reg.n_iterations_ + 1)


def test_finalists_choose_by_the_surrogates_own_score(sparse_data):
    X, y, Xt, yt = sparse_data
    reg = ProjectedRegressor(surrogate="pce", n_particles=3, iterations=2,
                             random_state=1).fit(X, y)
    assert 4 <= reg.n_finalists_ <= 24
    assert reg.search_loss_ == reg.loss_history_[-1]
    # the chosen candidate refitted with its theta, gamma and k given: the
    # same corrected leave-one-out error, and no candidate of the same theta
    # scores lower
    again = ProjectedRegressor(reg.n_components_, surrogate="pce", theta=reg.theta_,
                               gamma=reg.gamma_).fit(X, y)
    assert again.loss_ == pytest.approx(reg.loss_, rel=1e-12)
    assert np.array_equal(again.predict(Xt), reg.predict(Xt))
    for gamma in (10 ** -2.5, 10 ** -1.5, 10 ** -0.5):
        other = ProjectedRegressor(reg.n_components_, surrogate="pce", theta=reg.theta_,
                                   gamma=gamma).fit(X, y)
        assert other.loss_ >= reg.loss_ * (1 - 1e-9)


def test_auto_surrogate_of_log_y(tmp_path):
    # y = exp(x0 + x1 / 2) > 0: the candidates fitted to log y compete; the
    # least of the six estimates wins, a log one here, and the model
    # predicts exp of its fit, also after pickling
    rs = np.random.RandomState(3)
    X = rs.uniform(-1, 1, size=(80, 4))
    y = np.exp(X[:, 0] + 0.5 * X[:, 1])
    Xt = rs.uniform(-1, 1, size=(200, 4))
    yt = np.exp(Xt[:, 0] + 0.5 * Xt[:, 1])
    reg = ProjectedRegressor(2, theta=[0.9, 0.6, 0.1, 0.3]).fit(X, y)
    scores, logs = reg.surrogate_scores_, reg.surrogate_log_scores_
    assert reg.surrogate_transform_ == "log"
    assert reg.loss_ == min(logs.values()) == logs[reg.surrogate_] < min(scores.values())
    p = reg.predict(Xt)
    assert np.all(p > 0)
    assert np.array_equal(pickle.loads(pickle.dumps(reg)).predict(Xt), p)
    # one y <= 0: no log candidate
    y0 = y.copy()
    y0[5] = 0.0
    reg0 = ProjectedRegressor(2, theta=[0.9, 0.6, 0.1, 0.3]).fit(X, y0)
    assert reg0.surrogate_transform_ == "none"
    assert all(np.isnan(v) for v in reg0.surrogate_log_scores_.values())


def test_thread_count_and_pickles(sparse_data, tmp_path):
    X, y, Xt, _ = sparse_data
    a = ProjectedRegressor(n_particles=5, iterations=2, random_state=3, n_jobs=1).fit(X, y)
    b = ProjectedRegressor(n_particles=5, iterations=2, random_state=3, n_jobs=2).fit(X, y)
    assert a.to_bytes() == b.to_bytes()
    assert np.array_equal(a.loss_history_, b.loss_history_)
    again = pickle.loads(pickle.dumps(a))
    assert again.to_bytes() == a.to_bytes()
    assert np.array_equal(again.predict(Xt), a.predict(Xt))
    assert np.array_equal(again.theta_, a.theta_) and again.loss_ == a.loss_
    path = str(tmp_path / "p.rfx")
    a.save(path)
    with open(path, "rb") as f:
        assert f.read() == a.to_bytes()
    # a model file back as an estimator: theta fixed, the same predictions
    loaded = rfx.load_model(path)
    assert isinstance(loaded, rfx.ProjectedRegressor)
    assert np.array_equal(loaded.predict(Xt), a.predict(Xt))
    assert np.array_equal(loaded.theta_, a.theta_) and loaded.loss_ == a.loss_
    c = ProjectedRegressor._from_model(_load_buffer(a.to_bytes()))
    assert np.array_equal(c.predict(Xt), a.predict(Xt))
    assert c.n_components == a.n_components_ and c.gamma == a.gamma_
    assert np.array_equal(c.theta, a.theta_)


def test_given_theta_surrogates_and_errors(sparse_data):
    X, y, Xt, _ = sparse_data
    theta = np.zeros(12)
    theta[:3] = [1.0, 0.8, 0.6]
    reg = ProjectedRegressor(3, theta=theta, gamma=0.01, surrogate="bayes",
                             surrogate_components=200, random_state=0).fit(X, y)
    assert np.array_equal(reg.theta_, theta) and reg.n_iterations_ == 0
    assert len(reg.loss_history_) == 0 and np.isnan(reg.theta0_loss_)
    mean, std = reg.predict(Xt, return_std=True)
    assert np.array_equal(mean, reg.predict(Xt)) and np.all(std > 0)
    # inputs with weight 0 do not matter at all
    Xn = Xt.copy()
    Xn[:, 3:] = 17.0
    assert np.array_equal(reg.predict(Xn), reg.predict(Xt))
    for surrogate in ("srfe", "pce"):
        r = ProjectedRegressor(3, theta=theta, gamma=0.01, surrogate=surrogate,
                               random_state=0).fit(X, y)
        assert r.score(Xt, np.sin(2 * Xt[:, 0]) + 2 * Xt[:, 1] ** 2 + Xt[:, 2]) > 0.9
        with pytest.raises(ValueError, match="return_std"):
            r.predict(Xt, return_std=True)
    with pytest.raises(ValueError, match="surrogate"):
        ProjectedRegressor(surrogate="harfe").fit(X, y)
    with pytest.raises(ValueError, match="theta"):
        ProjectedRegressor(theta=[1.0, 0.5]).fit(X, y)
    with pytest.raises(ValueError, match="theta"):
        ProjectedRegressor(theta=np.full(12, 2.0)).fit(X, y)
    with pytest.raises(ValueError, match="n_components"):
        ProjectedRegressor(200).fit(X, y)
    with pytest.raises(ValueError, match="gamma"):
        ProjectedRegressor(gamma=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="n_folds"):
        ProjectedRegressor(n_folds=1).fit(X, y)
    with pytest.raises(ValueError, match="surrogate_components"):
        ProjectedRegressor(surrogate="pce", surrogate_components=10).fit(X, y)
    with pytest.raises(ValueError, match="n_samples=2"):
        ProjectedRegressor().fit(X[:2], y[:2])
    # a constant input matrix: no kernel scale gives a loss
    with pytest.raises(RuntimeError, match="kernel scale"):
        ProjectedRegressor(n_particles=2, iterations=1).fit(np.ones((20, 3)), y[:20])


def test_docstring_examples():
    import doctest
    import warnings

    import rfx.projection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        failed, tried = doctest.testmod(rfx.projection, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failed == 0
