# SPDX-License-Identifier: BSD-3-Clause
"""The UQ interface of the Sobol functions: SALib-style problems, a fitted
model's training box as its default distribution, input names in the
results, tables (to_frame / to_dict) and bar charts (plot)."""
import math
import os
import sys
import types

import matplotlib
import numpy as np
import pytest

import rfx

HERE = os.path.dirname(os.path.abspath(__file__))

matplotlib.use("Agg")

# Ishigami (a = 7, b = 0.1, x_i ~ U(-pi, pi)): Sobol indices in closed form
A, B = 7.0, 0.1
_V1 = 0.5 * (1 + B * np.pi ** 4 / 5) ** 2
_V2 = A ** 2 / 8
_V13 = B ** 2 * np.pi ** 8 * (1 / 18 - 1 / 50)
_V = _V1 + _V2 + _V13
ISHIGAMI_S1 = np.array([_V1, _V2, 0.0]) / _V
ISHIGAMI_ST = np.array([_V1 + _V13, _V2, _V13]) / _V
PROBLEM = {"num_vars": 3, "names": ["x1", "x2", "x3"],
           "bounds": [[-np.pi, np.pi]] * 3, "dists": ["unif"] * 3}


def ishigami(X):
    """The Ishigami function with each sine taken alone by libm (math.sin)
    and only products and sums in numpy: a point gets the same bits in every
    call, whatever batch and memory layout it comes in, so that two
    estimates over the same design can be compared bit for bit. numpy's
    vector kernels do not promise that: with its AVX-512 kernels the
    one-expression form np.sin(x1) + A np.sin(x2)^2 + B x3^4 np.sin(x1)
    rounds some points differently when the same rows sit at another
    address or in a batch of another length."""
    s0 = np.array([math.sin(v) for v in X[:, 0]])
    s1 = np.array([math.sin(v) for v in X[:, 1]])
    x2 = X[:, 2] * X[:, 2]
    return s0 + A * (s1 * s1) + B * (x2 * x2) * s0


def test_closed_form_constants():
    # the values the issue quotes, to the digits quoted
    np.testing.assert_allclose(ISHIGAMI_S1, [0.3139, 0.4424, 0.0], atol=5e-5)
    np.testing.assert_allclose(ISHIGAMI_ST, [0.5576, 0.4424, 0.2437], atol=5e-5)


def test_ishigami_through_a_salib_problem():
    res = rfx.sobol_indices(ishigami, PROBLEM, n=20000, seed=0, n_bootstrap=200)
    assert res.names == ["x1", "x2", "x3"]
    assert res.n_evaluations == 20000 * (3 + 2)
    # the estimator's own error: the 95% bootstrap half-widths, small enough to mean
    # something; the closed form within two of them (about four standard errors)
    half_first = (res.first_hi - res.first_lo) / 2
    half_total = (res.total_hi - res.total_lo) / 2
    assert np.all(half_first < 0.03) and np.all(half_total < 0.03)
    assert np.all(np.abs(res.first - ISHIGAMI_S1) <= 2 * half_first + 1e-3)
    assert np.all(np.abs(res.total - ISHIGAMI_ST) <= 2 * half_total + 1e-3)
    # the same design as the list of marginals, bit for bit
    same = rfx.sobol_indices(ishigami, [("uniform", -np.pi, np.pi)] * 3, n=20000, seed=0,
                             n_bootstrap=200)
    np.testing.assert_array_equal(same.first, res.first)
    np.testing.assert_array_equal(same.total_hi, res.total_hi)
    assert same.names == ["x1", "x2", "x3"]  # the default names


def test_problem_conversion():
    margs, names = rfx.marginals_from_problem({
        "names": ["a", "b", "c"], "bounds": [[0, 2], [1.5, 0.3], [0.1, 0.4]],
        "dists": ["unif", "norm", "lognorm"]})
    assert names == ["a", "b", "c"]
    assert margs == [("uniform", 0.0, 2.0), ("normal", 1.5, 0.3), ("lognormal", 0.1, 0.4)]
    assert rfx.marginals_from_problem({"names": ["u"], "bounds": [[-1, 1]]})[0] == [
        ("uniform", -1.0, 1.0)]  # dists default to "unif", num_vars is optional
    bad = [({"names": ["a"]}, "'bounds' is missing"),
           ({"names": ["a", "b"], "bounds": [[0, 1]]}, "1 bounds for 2 names"),
           ({"num_vars": 3, "names": ["a"], "bounds": [[0, 1]]}, "num_vars=3 but 1 names"),
           ({"names": ["a"], "bounds": [[0, 1]], "dists": ["triang"]}, "dist 'triang'"),
           ({"names": ["a"], "bounds": [[0, 1, 2]]}, "two bounds"),
           ({"names": ["a", "a"], "bounds": [[0, 1]] * 2}, "not distinct"),
           ({"names": ["a"], "bounds": [[0, 1]], "groups": ["g"]}, "groups"),
           ({"names": ["a"], "bounds": [[0, 1]], "bound": 1}, "unknown keys")]
    for problem, message in bad:
        with pytest.raises(ValueError, match=message):
            rfx.marginals_from_problem(problem)
    with pytest.raises(ValueError, match="uniform bounds need a < b"):  # the C check
        rfx.sobol_indices(ishigami, {"names": ["a"], "bounds": [[1, 0]]}, n=100)


def test_normal_inputs_of_a_linear_function():
    # y = 2 x1 + x2, x1 ~ N(1, 0.5^2), x2 ~ U(0, 3): V1 = 1, V2 = 0.75
    problem = {"names": ["load", "gap"], "bounds": [[1.0, 0.5], [0.0, 3.0]],
               "dists": ["norm", "unif"]}
    res = rfx.sobol_indices(lambda Z: 2 * Z[:, 0] + Z[:, 1], problem, n=20000, seed=1)
    assert res.names == ["load", "gap"]
    np.testing.assert_allclose(res.first, [1 / 1.75, 0.75 / 1.75], atol=0.02)
    np.testing.assert_allclose(res.total, [1 / 1.75, 0.75 / 1.75], atol=0.02)
    np.testing.assert_allclose(res.mean, 2 * 1.0 + 1.5, atol=0.02)
    np.testing.assert_allclose(res.variance, 1.75, rtol=0.03)


def _ishigami_data(n, seed=0):
    X = np.random.RandomState(seed).uniform(-np.pi, np.pi, size=(n, 3))
    return X, ishigami(X)


def test_models_default_to_their_training_box():
    X, y = _ishigami_data(400)
    box = [("uniform", lo, hi) for lo, hi in zip(X.min(axis=0), X.max(axis=0))]
    srfe = rfx.SparseRFERegressor(2000, sparsity=2, random_state=0).fit(X, y)
    rff = rfx.RFFRegressor(256, random_state=0).fit(X, y)
    for est in (srfe, rff):
        a = rfx.sobol_indices(est, n=2000, n_bootstrap=0)
        b = rfx.sobol_indices(est, box, n=2000, n_bootstrap=0)
        np.testing.assert_array_equal(a.first, b.first)
        np.testing.assert_array_equal(a.total, b.total)
        e = rfx.exact_sobol_indices(est)
        np.testing.assert_array_equal(e.total, rfx.exact_sobol_indices(est, box).total)
    # the fitted SRFE knows Ishigami: closed form of the model against the function's
    e = rfx.exact_sobol_indices(srfe)
    np.testing.assert_allclose(e.first, ISHIGAMI_S1, atol=0.05)
    np.testing.assert_allclose(e.total, ISHIGAMI_ST, atol=0.05)
    # PCE: its own marginals_ (here the training box), MC against the coefficients
    pce = rfx.PCERegressor(degree=8).fit(X, y)
    mc = rfx.sobol_indices(pce, n=20000, n_bootstrap=100)
    first, total = pce.sobol_indices()
    assert np.all(np.abs(mc.first - first) <= (mc.first_hi - mc.first_lo) + 1e-3)
    assert np.all(np.abs(mc.total - total) <= (mc.total_hi - mc.total_lo) + 1e-3)
    # a constant column: [x - 1/2, x + 1/2], as PCERegressor's default
    X2 = np.column_stack([X[:, :2], np.full(len(X), 2.0)])
    rff2 = rfx.RFFRegressor(64, random_state=0).fit(X2, y)
    np.testing.assert_array_equal(rfx.exact_sobol_indices(rff2).first, rfx.exact_sobol_indices(
        rff2, box[:2] + [("uniform", 1.5, 2.5)]).first)


def test_model_without_a_box(tmp_path):
    X, y = _ishigami_data(100)
    reg = rfx.RFFRegressor(32, random_state=0).fit(X, y)
    # a model file written before files kept the training box
    old = os.path.join(os.path.dirname(HERE), "..", "tests", "data", "model_v1_bayes.rfx")
    with pytest.raises(ValueError, match="give the input distribution"):
        rfx.sobol_indices(rfx.load_model(old))
    with pytest.raises(ValueError, match="give the input distribution"):
        rfx.sobol_indices(ishigami)
    reg.save(str(tmp_path / "m.rfx"))  # a file records the training box now
    loaded = rfx.load_model(str(tmp_path / "m.rfx"))
    np.testing.assert_array_equal(rfx.exact_sobol_indices(loaded).first,
                                  rfx.exact_sobol_indices(reg).first)
    import pickle
    back = pickle.loads(pickle.dumps(reg))  # a pickle does
    np.testing.assert_array_equal(rfx.exact_sobol_indices(back).first,
                                  rfx.exact_sobol_indices(reg).first)


class _FakeFrame:
    def __init__(self, data, index, columns):
        self.data, self.index, self.columns = data, index, columns


def test_to_frame_and_to_dict(monkeypatch):
    res = rfx.sobol_indices(ishigami, PROBLEM, n=1000, n_bootstrap=50)
    table = res.to_dict()
    assert list(table) == ["name", "S1", "S1_lo", "S1_hi", "ST", "ST_lo", "ST_hi"]
    assert table["name"] == ["x1", "x2", "x3"]
    assert table["S1"] == res.first.tolist() and table["ST_hi"] == res.total_hi.tolist()
    # without pandas (Debian's python3 here has none): a clear ImportError
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="to_frame\\(\\) needs pandas.*to_dict"):
        res.to_frame()
    # with pandas: a DataFrame indexed by the names, one column per statistic
    fake = types.ModuleType("pandas")
    fake.DataFrame = _FakeFrame
    fake.Index = lambda values, name: (list(values), name)
    monkeypatch.setitem(sys.modules, "pandas", fake)
    frame = res.to_frame()
    assert frame.columns == ["S1", "S1_lo", "S1_hi", "ST", "ST_lo", "ST_hi"]
    assert frame.index == (["x1", "x2", "x3"], "input")
    assert frame.data["ST"] == res.total.tolist()


def test_plot_bars():
    import matplotlib.pyplot as plt
    from matplotlib.container import BarContainer
    res = rfx.sobol_indices(ishigami, PROBLEM, n=1000, n_bootstrap=50)
    ax = res.plot()
    assert isinstance(ax, matplotlib.axes.Axes)
    heights = [p.get_height() for p in ax.patches]
    assert len(heights) == 6  # first and total for each of 3 inputs
    np.testing.assert_allclose(heights, np.concatenate([res.first, res.total]))
    assert [t.get_text() for t in ax.get_xticklabels()] == ["x1", "x2", "x3"]
    bars = [c for c in ax.containers if isinstance(c, BarContainer)]
    assert len(bars) == 2 and all(c.errorbar is not None for c in bars)
    plt.close(ax.figure)
    # onto a given Axes; no intervals (n_bootstrap=0, or closed form): no error bars
    fig, given = plt.subplots()
    res0 = rfx.sobol_indices(ishigami, PROBLEM, n=1000, n_bootstrap=0)
    assert res0.plot(ax=given) is given
    bars = [c for c in given.containers if isinstance(c, BarContainer)]
    assert len(given.patches) == 6 and len(bars) == 2 and all(c.errorbar is None for c in bars)
    plt.close(fig)


# Second order: x2 enters alone and x3 only through x1, so S_12 = S_23 = 0 and
# S_13 = V13 / V (E[f | x1, x3] = a/2 + sin x1 (1 + b x3^4) has variance
# V1 + V13, V13 = b^2 pi^8 (1/18 - 1/50))
ISHIGAMI_S2 = np.diag(ISHIGAMI_S1)
ISHIGAMI_S2[0, 2] = ISHIGAMI_S2[2, 0] = _V13 / _V


def test_second_order_ishigami():
    res = rfx.sobol_indices(ishigami, PROBLEM, n=50000, seed=3, n_bootstrap=200,
                            confidence=0.99, second_order=True)
    assert res.n_evaluations == 50000 * (2 * 3 + 2)
    np.testing.assert_array_equal(res.second, res.second.T)
    np.testing.assert_array_equal(np.diag(res.second), res.first)
    np.testing.assert_array_equal(np.diag(res.second_lo), res.first_lo)
    # the standard error from the 99% interval's half-width (measured 0.004 to
    # 0.006); the exact value within four of them (measured 1.0, 2.1 and 0.9),
    # and inside the interval
    iu = np.triu_indices(3, k=1)
    se = (res.second_hi - res.second_lo)[iu] / (2 * 2.5758)
    err = np.abs(res.second - ISHIGAMI_S2)[iu]
    assert np.all(se < 0.01)
    assert np.all(err <= 4 * se), (err, se)
    assert np.all((res.second_lo <= ISHIGAMI_S2)[iu] & (ISHIGAMI_S2 <= res.second_hi)[iu])
    # first order and total as without second order, bit for bit (the
    # function gives the same bits for a point in either design's batches)
    plain = rfx.sobol_indices(ishigami, PROBLEM, n=50000, seed=3, n_bootstrap=200,
                              confidence=0.99)
    assert plain.second is None and plain.n_evaluations == 50000 * 5
    for k in ("first", "total", "first_lo", "first_hi", "total_lo", "total_hi"):
        np.testing.assert_array_equal(getattr(plain, k), getattr(res, k))
    with pytest.raises(ValueError, match="second_order=True"):
        plain.second_order_dict()
    with pytest.raises(TypeError, match="second_order"):
        rfx.sobol_indices(ishigami, PROBLEM, n=100, second_order=1)


def test_second_order_against_explicit_computation():
    # one block of the design in one call (n (2 d + 2) <= batch_rows): the rows
    # come as A, B, AB_0..AB_2, BA_0..BA_2, n each; the estimator recomputed
    # here from them (outputs centred at the mean of f(A) and f(B), SALib's
    # form) agrees to rounding, as do the first-order indices
    n, d = 400, 3
    seen = []

    def f(X):
        seen.append(X.copy())
        return ishigami(X)

    res = rfx.sobol_indices(f, PROBLEM, n=n, seed=5, n_bootstrap=0, second_order=True)
    assert len(seen) == 1 and seen[0].shape == (n * (2 * d + 2), d)
    X = seen[0].reshape(2 * d + 2, n, d)
    A, Bm = X[0], X[1]
    for i in range(d):
        AB, BA = X[2 + i], X[2 + d + i]
        others = [k for k in range(d) if k != i]
        np.testing.assert_array_equal(AB[:, others], A[:, others])
        np.testing.assert_array_equal(AB[:, i], Bm[:, i])
        np.testing.assert_array_equal(BA[:, others], Bm[:, others])
        np.testing.assert_array_equal(BA[:, i], A[:, i])
    y = ishigami(X.reshape(-1, d)).reshape(2 * d + 2, n)
    c = np.mean(np.r_[y[0], y[1]])
    y = y - c
    fA, fB, fAB, fBA = y[0], y[1], y[2:2 + d], y[2 + d:]
    V = np.mean(np.r_[fA, fB] ** 2) - np.mean(np.r_[fA, fB]) ** 2
    S1 = np.array([np.mean(fB * (fAB[i] - fA)) / V for i in range(d)])
    np.testing.assert_allclose(res.first, S1, rtol=0, atol=1e-12)
    S2 = np.diag(S1)
    for i in range(d):
        for k in range(i + 1, d):
            S2[i, k] = S2[k, i] = np.mean(fBA[i] * fAB[k] - fA * fB) / V - S1[i] - S1[k]
    np.testing.assert_allclose(res.second, S2, rtol=0, atol=1e-12)
    assert np.all(np.isnan(res.second_lo)) and np.all(np.isnan(res.second_hi))


def test_second_order_of_a_pce():
    X, y = _ishigami_data(1500, seed=7)
    pce = rfx.PCERegressor([("uniform", -np.pi, np.pi)] * 3, degree=12).fit(X, y)
    second = pce.second_order_indices()
    first, _ = pce.sobol_indices()
    np.testing.assert_array_equal(np.diag(second), first)
    # the definition, from the coefficients: the terms in exactly inputs i and j
    coef, alpha = pce.coef_, pce.multi_indices_
    var = np.sum(coef[alpha.sum(axis=1) > 0] ** 2)
    explicit = np.zeros((3, 3))
    for c, a in zip(coef, alpha):
        support = np.flatnonzero(a)
        if len(support) == 2:
            explicit[support[0], support[1]] += c * c / var
            explicit[support[1], support[0]] += c * c / var
        elif len(support) == 1:
            explicit[support[0], support[0]] += c * c / var
    np.testing.assert_allclose(second, explicit, rtol=0, atol=1e-14)
    # against the closed form: the degree-12 truncation error (measured 2.4e-6)
    np.testing.assert_allclose(second, ISHIGAMI_S2, rtol=0, atol=1e-5)


def test_second_order_tables():
    res = rfx.sobol_indices(ishigami, PROBLEM, n=1000, n_bootstrap=20, second_order=True)
    table = res.second_order_dict()
    assert list(table) == ["name_i", "name_j", "S2", "S2_lo", "S2_hi"]
    assert table["name_i"] == ["x1", "x1", "x2"] and table["name_j"] == ["x2", "x3", "x3"]
    assert table["S2"] == [res.second[0, 1], res.second[0, 2], res.second[1, 2]]
    assert table["S2_hi"][1] == res.second_hi[0, 2]
    # closed form (an RFF model): no intervals
    Xd, yd = _ishigami_data(200)
    exact = rfx.exact_sobol_indices(rfx.RFFRegressor(64, random_state=0).fit(Xd, yd))
    t = exact.second_order_dict()
    assert t["S2"][2] == exact.second[1, 2] and np.isnan(t["S2_lo"]).all()
