# SPDX-License-Identifier: BSD-3-Clause
"""Surrogates and sensitivity: SparseRFERegressor (rfx_srfe_fit),
PCERegressor (rfx/pce.h) and rfx.sobol_indices (rfx/surrogate.h)."""
import functools
import pickle
import subprocess

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import rfx
from rfx._lib import as_rows, check, cmat, ffi, lib, mat, mat_none

ESTIMATORS = [
    rfx.SparseRFERegressor(n_components=64, n_folds=3),
    rfx.SparseRFERegressor(n_components=64, method="htp", weight_scale=1.0),
    rfx.PCERegressor(degree=2),
    rfx.PCERegressor(degree=2, method="lsq", q_norm=0.5),
]


def _check_name(check):
    while isinstance(check, functools.partial):
        check = check.func
    return check.__name__


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    # The sample-weight checks fit 16 rows of 4 distinct points whose second
    # column takes 2 values: a least-squares PCE with a degree-2 term in it
    # cannot be identified (LARS simply leaves such a term out), so it is
    # refused, with weights or without.
    try:
        check(estimator)
    except RuntimeError as e:
        if (_check_name(check).startswith("check_sample_weights") and "rank deficient" in str(e)
                and isinstance(estimator, rfx.PCERegressor) and estimator.method == "lsq"):
            pytest.xfail("least squares on 2 distinct values of an input at degree 2")
        raise


def _ishigami(X, a=7.0, b=0.1):
    return np.sin(X[:, 0]) + a * np.sin(X[:, 1]) ** 2 + b * X[:, 2] ** 4 * np.sin(X[:, 0])


ISHIGAMI_FIRST = np.array([0.3139, 0.4424, 0.0])
ISHIGAMI_TOTAL = np.array([0.5576, 0.4424, 0.2437])


@pytest.fixture(scope="module")
def srfe_data():
    rs = np.random.RandomState(1)
    X = rs.uniform(-1, 1, size=(120, 4))
    y = np.exp(-X[:, 0] ** 2) / (1 + X[:, 1] ** 2) + 0.5 * X[:, 2] * X[:, 3]
    Xt = rs.uniform(-1, 1, size=(50, 4))
    return X, y, Xt


def _direct_srfe(X, y, seed, N):
    """rfx_srfe_fit called by hand with the defaults of rfx fit --method srfe."""
    p = ffi.new("rfx_srfe_params *", lib.rfx_srfe_params_default())
    p.features.seed = seed
    p.features.n_features = N
    X = as_rows(X)
    Y = np.ascontiguousarray(y, dtype=np.float64).reshape(-1, 1)
    out = ffi.new("rfx_model **")
    check(lib.rfx_srfe_fit(p, cmat(X), cmat(Y), out, ffi.NULL))
    return ffi.gc(out[0], lib.rfx_model_free)


def test_srfe_equals_the_c_fit_and_pickles_bitwise(srfe_data):
    X, y, Xt = srfe_data
    reg = rfx.SparseRFERegressor(n_components=200, random_state=5).fit(X, y)
    assert reg.score(X, y) > 0.95
    assert reg.n_components_ == 200 and 0 < reg.n_nonzero_ <= 200
    assert reg.weight_scale_ in (0.5, 1.0, 2.0) and reg.alpha_ > 0
    m = _direct_srfe(X, y, 5, 200)
    Yc = np.empty((len(Xt), 1))
    check(lib.rfx_model_predict(m, cmat(as_rows(Xt)), mat(Yc), mat_none()))
    assert np.array_equal(reg.predict(Xt), Yc[:, 0])
    again = pickle.loads(pickle.dumps(reg))
    assert np.array_equal(again.predict(Xt), reg.predict(Xt))
    assert again.alpha_ == reg.alpha_ and again.n_nonzero_ == reg.n_nonzero_


def test_srfe_agrees_with_the_cli(cli, srfe_data, tmp_path):
    X, y, Xt = srfe_data
    np.save(str(tmp_path / "train.npy"), np.column_stack([X, y]))
    np.save(str(tmp_path / "test.npy"), Xt)
    model = tmp_path / "m.rfx"
    for args in (["fit", tmp_path / "train.npy", "--method", "srfe", "-D", 200, "--seed", 5,
                  "-o", model],
                 ["predict", model, tmp_path / "test.npy", "-o", tmp_path / "p.npy"]):
        r = subprocess.run([cli] + [str(a) for a in args], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    p_cli = np.load(str(tmp_path / "p.npy")).ravel()
    reg = rfx.SparseRFERegressor(n_components=200, random_state=5).fit(X, y)
    assert np.array_equal(reg.predict(Xt), p_cli)
    loaded = rfx.load_model(str(model))
    assert isinstance(loaded, rfx.SparseRFERegressor)
    assert np.array_equal(loaded.predict(Xt), p_cli)


def test_srfe_methods_and_errors(srfe_data):
    X, y, Xt = srfe_data
    htp = rfx.SparseRFERegressor(n_components=200, method="htp", n_nonzero=10,
                                 weight_scale=1.0, random_state=0).fit(X, y)
    assert htp.n_nonzero_ <= 10 and np.isnan(htp.alpha_)
    bpdn = rfx.SparseRFERegressor(n_components=200, method="bpdn", eta=0.05,
                                  weight_scale=1.0, random_state=0).fit(X, y)
    assert bpdn.eta_ == pytest.approx(0.05, rel=1e-2)
    with pytest.raises(ValueError, match="lasso"):
        rfx.SparseRFERegressor(method="omp").fit(X, y)
    # k-fold selection: its score is the held-out MSE, GCV's the training
    # residual inflated by (1 - df / m)^-2; both estimate the same error
    gcv = rfx.SparseRFERegressor(n_components=300, weight_scale=1.0, random_state=0).fit(X, y)
    kf = rfx.SparseRFERegressor(n_components=300, weight_scale=1.0, selection="kfold",
                                random_state=0).fit(X, y)
    resid = np.mean((gcv.predict(X) - y) ** 2)
    slack = 1 - (gcv.n_nonzero_ + 1) / len(y)
    assert gcv.cv_mse_ == pytest.approx(resid / slack ** 2, rel=1e-8)
    assert 0.2 < kf.cv_mse_ / gcv.cv_mse_ < 5
    with pytest.raises(ValueError, match="selection"):
        rfx.SparseRFERegressor(selection="loo").fit(X, y)


def test_pce_ishigami_sobol_and_pickle():
    rs = np.random.RandomState(0)
    X = rs.uniform(-np.pi, np.pi, size=(800, 3))
    y = _ishigami(X)
    margs = [("uniform", -np.pi, np.pi)] * 3
    pce = rfx.PCERegressor(margs, degree=10, method="lars").fit(X, y)
    first, total = pce.sobol_indices()
    assert np.allclose(first, ISHIGAMI_FIRST, atol=1e-2)
    assert np.allclose(total, ISHIGAMI_TOTAL, atol=1e-2)
    mean, var = pce.moments()
    assert mean == pytest.approx(3.5, abs=1e-2)
    assert var == pytest.approx(13.8446, rel=1e-2)
    Xt = rs.uniform(-np.pi, np.pi, size=(200, 3))
    again = pickle.loads(pickle.dumps(pce))
    assert np.array_equal(again.predict(Xt), pce.predict(Xt))
    assert np.array_equal(again.coef_, pce.coef_)
    assert np.array_equal(again.multi_indices_, pce.multi_indices_)
    assert all(np.array_equal(a, b) for a, b in zip(again.sobol_indices(), (first, total)))
    assert again.loo_corrected_ == pce.loo_corrected_


def test_pce_default_marginals_and_normal_inputs():
    rs = np.random.RandomState(2)
    X = rs.normal(1.0, 2.0, size=(200, 2))
    y = 3 * X[:, 0] + X[:, 1] ** 2
    pce = rfx.PCERegressor([("normal", 1.0, 2.0)] * 2, degree=2, method="lsq").fit(X, y)
    assert pce.score(X, y) == pytest.approx(1.0, abs=1e-10)
    # exact: Var(3 x0) = 36, Var(x1^2) = 4 mu^2 s^2 + 2 s^4 = 16 + 32 = 48
    first, total = pce.sobol_indices()
    assert np.allclose(first, [36 / 84, 48 / 84]) and np.allclose(total, first)
    # marginals from the data: uniform on the ranges, or the normal
    # families at the columns' mean and (population) standard deviation
    # when that fit has the lower corrected LOO error
    yn = y + np.sin(X[:, 0])
    default = rfx.PCERegressor(degree=2).fit(X, yn)
    box = [("uniform", X[:, j].min(), X[:, j].max()) for j in range(2)]
    fam = [("normal", X[:, j].mean(), X[:, j].std()) for j in range(2)]
    on_box = rfx.PCERegressor(box, degree=2).fit(X, yn)
    on_fam = rfx.PCERegressor([("normal", float(a), float(b)) for _, a, b in default.marginals_]
                              if default.marginals_[0][0] == "normal" else fam,
                              degree=2).fit(X, yn)
    for (kind, a, b), (_, ea, eb) in zip(on_fam.marginals_, fam):
        assert kind == "normal" and a == pytest.approx(ea, rel=1e-12) and b == pytest.approx(eb, rel=1e-12)
    best = min((on_box, on_fam), key=lambda m: m.loo_corrected_)
    assert default.loo_corrected_ == best.loo_corrected_
    assert default.marginals_ == best.marginals_
    assert np.array_equal(default.predict(X), best.predict(X))  # inside the training range
    uni = rs.uniform(-1, 3, size=(200, 2))  # uniform columns stay uniform on their range
    assert rfx.PCERegressor(degree=2).fit(uni, uni[:, 0]).marginals_ == [
        ("uniform", uni[:, j].min(), uni[:, j].max()) for j in range(2)]
    with pytest.raises(ValueError, match="marginals"):
        rfx.PCERegressor([("uniform", 0, 1)], degree=2).fit(X, y)
    with pytest.raises(ValueError, match="marginals"):
        rfx.PCERegressor([("beta", 0, 1)] * 2).fit(X, y)


def test_pce_screens_inert_inputs():
    # y lives on x0..x2 of 12 inputs: the automatic basis refits on those
    # three (n_screened_ = 9) and equals the automatic fit on those columns
    rs = np.random.RandomState(11)
    X = rs.uniform(size=(300, 12))
    y = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2
    full = rfx.PCERegressor().fit(X, y)
    sub = rfx.PCERegressor().fit(X[:, :3], y)
    assert full.n_screened_ == 9 and sub.n_screened_ == 0
    assert full.loo_corrected_ == sub.loo_corrected_
    assert np.array_equal(full.coef_, sub.coef_)
    assert np.array_equal(full.multi_indices_[:, :3], sub.multi_indices_)
    assert not full.multi_indices_[:, 3:].any()
    Xt = rs.uniform(0.05, 0.95, size=(1000, 12))
    yt = 10 * np.sin(np.pi * Xt[:, 0] * Xt[:, 1]) + 20 * (Xt[:, 2] - 0.5) ** 2
    assert full.score(Xt, yt) > 1 - 1e-6
    assert rfx.PCERegressor(degree=3, degree_min=1).fit(X, y).n_screened_ == 0


def test_sobol_indices_of_a_callable_within_intervals():
    # f = x0 + 2 x1 (+ 0 x2) on U[0, 1]^3: S = ST = (1, 4, 0) / 5
    exact = np.array([0.2, 0.8, 0.0])
    res = rfx.sobol_indices(lambda Z: Z[:, 0] + 2 * Z[:, 1], [("uniform", 0, 1)] * 3,
                            n=4000, seed=3, n_bootstrap=100)
    assert np.all(res.first_lo <= exact) and np.all(exact <= res.first_hi)
    assert np.all(res.total_lo <= exact) and np.all(exact <= res.total_hi)
    assert np.allclose(res.first, exact, atol=0.05) and np.allclose(res.total, exact, atol=0.05)
    assert res.mean == pytest.approx(1.5, abs=0.05)
    assert res.variance == pytest.approx(5 / 12, rel=0.05)
    assert res.n_evaluations == 4000 * 5
    # the same seed, the same numbers, whatever the batch size
    again = rfx.sobol_indices(lambda Z: Z[:, 0] + 2 * Z[:, 1], [("uniform", 0, 1)] * 3,
                              n=4000, seed=3, n_bootstrap=100, batch_rows=777)
    assert np.array_equal(again.first, res.first) and np.array_equal(again.total_hi,
                                                                     res.total_hi)


def test_sobol_indices_callback_errors_propagate():
    def bad(Z):
        raise KeyError("boom")
    with pytest.raises(KeyError, match="boom"):
        rfx.sobol_indices(bad, [("uniform", 0, 1)] * 2, n=100)
    with pytest.raises(ValueError, match="returned 1 values"):
        rfx.sobol_indices(lambda Z: np.zeros(1), [("uniform", 0, 1)] * 2, n=100)
    with pytest.raises(RuntimeError):  # constant output: RFX_ENUMERIC from C
        rfx.sobol_indices(lambda Z: np.ones(len(Z)), [("uniform", 0, 1)] * 2, n=100)


def test_sobol_indices_of_models():
    rs = np.random.RandomState(4)
    X = rs.uniform(-np.pi, np.pi, size=(400, 3))
    y = _ishigami(X)
    margs = [("uniform", -np.pi, np.pi)] * 3
    reg = rfx.SparseRFERegressor(n_components=600, random_state=0).fit(X, y)
    res = rfx.sobol_indices(reg, margs, n=3000, n_bootstrap=0)  # the C model path
    assert np.all(np.isnan(res.first_lo))
    ref = rfx.sobol_indices(reg.predict, margs, n=3000, n_bootstrap=0)  # the callback path
    assert np.allclose(res.first, ref.first, atol=1e-12)
    assert np.allclose(res.total, ISHIGAMI_TOTAL, atol=0.1)
    pce = rfx.PCERegressor(margs, degree=8).fit(X, y)
    via_mc = rfx.sobol_indices(pce, margs, n=3000, n_bootstrap=0)  # via predict
    assert np.allclose(via_mc.total, pce.sobol_indices()[1], atol=0.05)


def _legendre_pce(X, margs, coef, alpha):
    """sum_k c_k prod_i sqrt(2 a_ki + 1) P_{a_ki}(t_i), t the inputs mapped
    from [a, b] to [-1, 1]: the orthonormal Legendre expansion, by numpy;
    beyond [a, b] widened by (b - a) / (4 p_i^2) (p_i the input's largest
    degree) continued linearly, f(c) + sum_i (x_i - c_i) df/dx_i(c) with c
    the inputs clamped there (as rfx_pce_predict documents)."""
    lo = np.array([m[1] for m in margs], dtype=float)
    hi = np.array([m[2] for m in margs], dtype=float)
    p = np.asarray(alpha).max(axis=0).astype(float)
    margin = np.where(p > 0, (hi - lo) / 2 * 0.5 / np.maximum(p, 1) ** 2, np.inf)
    C = np.clip(X, lo - margin, hi + margin)
    T = (2 * C - lo - hi) / (hi - lo)
    out = np.zeros(len(X))
    for c, a in zip(coef, alpha):
        vals, slopes = [], []
        for i, n in enumerate(a):
            e = np.zeros(n + 1)
            e[n] = 1.0
            vals.append(np.sqrt(2 * n + 1) * np.polynomial.legendre.legval(T[:, i], e))
            de = np.polynomial.legendre.legder(e) if n else np.zeros(1)
            slopes.append(np.sqrt(2 * n + 1) * np.polynomial.legendre.legval(T[:, i], de)
                          * 2 / (hi[i] - lo[i]))
        term = c * np.prod(vals, axis=0)
        for i in range(len(a)):
            rest = np.prod([v for j, v in enumerate(vals) if j != i], axis=0)
            term = term + c * slopes[i] * rest * (X[:, i] - C[:, i])
        out += term
    return out


def test_pce_pickles_saves_and_loads_as_a_model_file(tmp_path):
    rs = np.random.RandomState(3)
    X = rs.uniform(-1, 2, size=(150, 3))
    y = np.exp(0.5 * X[:, 0]) * X[:, 1] + X[:, 2] ** 3
    Xt = rs.uniform(-1, 2, size=(60, 3))
    pce = rfx.PCERegressor(degree=5, degree_min=1).fit(X, y)
    state = pce.__getstate__()
    assert "_model" not in state and state["_model_bytes"][:8] == b"RFXMODL\x1a"
    again = pickle.loads(pickle.dumps(pce))
    assert np.array_equal(again.predict(Xt), pce.predict(Xt))
    assert (again.degree_, again.n_candidates_) == (pce.degree_, pce.n_candidates_)
    assert again.loo_corrected_ == pce.loo_corrected_ and again.loo_mse_ == pce.loo_mse_
    assert again.to_bytes() == pce.to_bytes()

    path = tmp_path / "pce.rfx"
    pce.save(str(path))
    assert path.read_bytes() == pce.to_bytes()
    loaded = rfx.load_model(str(path))
    assert isinstance(loaded, rfx.PCERegressor)
    assert loaded.marginals_ == pce.marginals_ and loaded.degree_ == pce.degree_
    assert np.array_equal(loaded.coef_, pce.coef_)
    assert np.array_equal(loaded.multi_indices_, pce.multi_indices_)
    assert all(np.array_equal(a, b) for a, b in zip(loaded.sobol_indices(), pce.sobol_indices()))
    # the loaded file is the polynomial: numpy's Legendre series agrees
    ref = _legendre_pce(Xt, loaded.marginals_, loaded.coef_, loaded.multi_indices_)
    assert np.allclose(loaded.predict(Xt), ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())
    # the generic C model API predicts the same bits, without a std
    Yc = np.empty((len(Xt), 1))
    check(lib.rfx_model_predict(loaded._model, cmat(as_rows(Xt)), mat(Yc), mat_none()))
    assert np.array_equal(Yc[:, 0], pce.predict(Xt))
    with pytest.raises(ValueError, match="standard deviation"):
        check(lib.rfx_model_predict(loaded._model, cmat(as_rows(Xt)), mat(Yc),
                                    mat(np.empty((len(Xt), 1)))))
    # a pickle of an earlier version (the terms) still loads
    old = {k: v for k, v in state.items() if k != "_model_bytes"}
    old["_pce_terms"] = pce._terms()
    legacy = rfx.PCERegressor.__new__(rfx.PCERegressor)
    legacy.__setstate__(old)
    assert np.array_equal(legacy.predict(Xt), pce.predict(Xt))


def test_pce_agrees_with_the_cli(cli, tmp_path):
    rs = np.random.RandomState(5)
    X = rs.uniform(0, 1, size=(120, 2))
    y = np.sin(3 * X[:, 0]) + X[:, 0] * X[:, 1] ** 2
    Xt = rs.uniform(0, 1, size=(40, 2))
    np.save(str(tmp_path / "train.npy"), np.column_stack([X, y]))
    np.save(str(tmp_path / "test.npy"), Xt)
    model = tmp_path / "pce.rfx"
    for args in (["fit", tmp_path / "train.npy", "--method", "pce", "--degree", 6,
                  "--degree-min", 6, "-o", model],
                 ["predict", model, tmp_path / "test.npy", "-o", tmp_path / "p.npy"]):
        r = subprocess.run([cli] + [str(a) for a in args], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    p_cli = np.load(str(tmp_path / "p.npy")).ravel()
    reg = rfx.PCERegressor(degree=6).fit(X, y)  # the same defaults: LARS, columns' ranges
    assert np.array_equal(reg.predict(Xt), p_cli)
    loaded = rfx.load_model(str(model))
    assert isinstance(loaded, rfx.PCERegressor)
    assert loaded.marginals_ == reg.marginals_ and loaded.method == "lars"
    assert np.array_equal(loaded.predict(Xt), p_cli)
    assert loaded.to_bytes() == model.read_bytes()


@pytest.mark.parametrize("args,kwargs", [
    (["--method", "srfe", "--eta", "0.2", "--weight-scale", "1"],
     dict(method="bpdn", eta=0.2, weight_scale=1.0)),
    (["--method", "lasso", "--lambda", "0.01", "--activation", "cos"],
     dict(method="lasso", alpha=0.01, activation="cos")),
    (["--method", "harfe", "--terms", "15", "--sparsity", "3", "--no-standardize"],
     dict(method="htp", n_nonzero=15, sparsity=3, standardize=False)),
])
def test_sparse_cli_options_agree_with_the_estimator(cli, srfe_data, tmp_path, args, kwargs):
    """rfx fit --method srfe|lasso|harfe and SparseRFERegressor both start
    from rfx_srfe_params_default(): the same options give the same bits."""
    X, y, Xt = srfe_data
    np.save(str(tmp_path / "train.npy"), np.column_stack([X, y]))
    np.save(str(tmp_path / "test.npy"), Xt)
    model = tmp_path / "m.rfx"
    for cmd in (["fit", tmp_path / "train.npy", "-D", 200, "--seed", 4, "-o", model] + args,
                ["predict", model, tmp_path / "test.npy", "-o", tmp_path / "p.npy"]):
        r = subprocess.run([cli] + [str(a) for a in cmd], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    reg = rfx.SparseRFERegressor(n_components=200, random_state=4, **kwargs).fit(X, y)
    assert np.array_equal(reg.predict(Xt), np.load(str(tmp_path / "p.npy")).ravel())


def test_exact_sobol_indices_equal_quadrature_of_the_model():
    # a fitted 2-input sparse sine model under U[-1, 2] x U[0, 3]: its
    # indices by tensor Gauss-Legendre quadrature of its own predictions
    rs = np.random.RandomState(5)
    lo, hi = np.array([-1.0, 0.0]), np.array([2.0, 3.0])
    X = lo + (hi - lo) * rs.uniform(size=(150, 2))
    y = np.sin(X[:, 0]) * np.cos(0.5 * X[:, 1]) + 0.3 * X[:, 1] ** 2
    reg = rfx.SparseRFERegressor(n_components=300, random_state=1).fit(X, y)
    res = rfx.exact_sobol_indices(reg, [("uniform", lo[0], hi[0]), ("uniform", lo[1], hi[1])])
    t, w = np.polynomial.legendre.leggauss(80)
    g = [lo[i] + (hi[i] - lo[i]) * (t + 1) / 2 for i in range(2)]
    w = w / 2  # weights of the uniform density
    G0, G1 = np.meshgrid(g[0], g[1], indexing="ij")
    F = reg.predict(np.column_stack([G0.ravel(), G1.ravel()])).reshape(80, 80)
    mean = w @ F @ w
    var = w @ (F - mean) ** 2 @ w
    v0 = w @ (F @ w - mean) ** 2  # Var E[f | x0]
    v1 = w @ (w @ F - mean) ** 2  # Var E[f | x1]
    assert res.mean == pytest.approx(mean, rel=1e-10)
    assert res.variance == pytest.approx(var, rel=1e-9)
    assert np.allclose(res.first, [v0 / var, v1 / var], atol=1e-9)
    # two inputs: T_0 = 1 - S_1, T_1 = 1 - S_0, S_01 = 1 - S_0 - S_1
    assert np.allclose(res.total, [1 - v1 / var, 1 - v0 / var], atol=1e-9)
    assert res.second[0, 1] == pytest.approx(1 - (v0 + v1) / var, abs=1e-9)
    assert np.allclose(np.diag(res.second), res.first)
    with pytest.raises(ValueError):  # relu features have no closed form
        relu = rfx.SparseRFERegressor(n_components=200, activation="relu",
                                      random_state=1).fit(X, y)
        rfx.exact_sobol_indices(relu, [("uniform", 0, 1)] * 2)
    with pytest.raises(TypeError):
        rfx.exact_sobol_indices(lambda Z: Z, [("uniform", 0, 1)] * 2)
