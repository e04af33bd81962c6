# SPDX-License-Identifier: BSD-3-Clause
"""The UQ interface of the Sobol functions: SALib-style problems, a fitted
model's training box as its default distribution, input names in the
results, tables (to_frame / to_dict) and bar charts (plot)."""
import sys
import types

import matplotlib
import numpy as np
import pytest

import rfx

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
    return np.sin(X[:, 0]) + A * np.sin(X[:, 1]) ** 2 + B * X[:, 2] ** 4 * np.sin(X[:, 0])


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
    reg.save(str(tmp_path / "m.rfx"))
    loaded = rfx.load_model(str(tmp_path / "m.rfx"))  # a file records no training box
    with pytest.raises(ValueError, match="give the input distribution"):
        rfx.sobol_indices(loaded)
    with pytest.raises(ValueError, match="give the input distribution"):
        rfx.sobol_indices(ishigami)
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
