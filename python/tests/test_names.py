# SPDX-License-Identifier: BSD-3-Clause
"""Input names (feature_names_in_) go with the model: through save and
load_model, to_bytes, pickling, and to the command line, which then
matches a CSV file's columns by name; and names from a file fitted by the
command line come back as feature_names_in_."""
import os
import pickle
import subprocess

import numpy as np
import pytest

import rfx
from conftest import make_data


class _Frame(np.ndarray):
    """An array with column names, as scikit-learn reads a DataFrame's
    (``X.columns``); pandas is not needed for the test."""


def _frame(X, names):
    f = np.asarray(X, dtype=np.float64).view(_Frame)
    f.columns = np.asarray(names, dtype=object)
    return f


NAMES = ["pressure", "temp\u00e9rature", "flow rate"]


def _named(est):
    X, y = make_data(120, 3)
    est.fit(_frame(X, NAMES), y)
    if not hasattr(est, "feature_names_in_"):
        pytest.skip("this scikit-learn does not read .columns of an array")
    return X, y, est


ESTIMATORS = [
    lambda: rfx.RFFRegressor(64, random_state=0),
    lambda: rfx.BayesianRFFRegressor(64, random_state=1),
    lambda: rfx.PCERegressor(degree=3),
    lambda: rfx.SparseRFERegressor(200, random_state=2),
]


@pytest.mark.parametrize("make", ESTIMATORS)
def test_names_survive_save_load_and_pickle(tmp_path, make):
    X, _, est = _named(make())
    assert list(est.feature_names_in_) == NAMES
    path = str(tmp_path / "m.rfx")
    est.save(path)
    back = rfx.load_model(path)
    assert list(back.feature_names_in_) == NAMES
    assert np.array_equal(back.predict(_frame(X, NAMES)), est.predict(_frame(X, NAMES)))
    again = pickle.loads(pickle.dumps(est))
    assert list(again.feature_names_in_) == NAMES
    # the bytes of the pickle's model hold the names too
    assert list(rfx.load_model(path).feature_names_in_) == NAMES
    with open(path, "rb") as f:
        assert f.read() == est.to_bytes()


def test_model_without_names_loads_without_them(tmp_path):
    X, y = make_data(80, 3)
    est = rfx.RFFRegressor(32, random_state=0).fit(X, y)
    path = str(tmp_path / "m.rfx")
    est.save(path)
    with open(path, "rb") as f:
        head = f.read(12)
    assert int.from_bytes(head[8:12], "little") == 2  # version 2: the training box
    assert not hasattr(rfx.load_model(path), "feature_names_in_")


def test_repeated_names_are_left_out_with_a_warning(tmp_path):
    X, y = make_data(80, 3)
    est = rfx.RFFRegressor(32, random_state=0).fit(_frame(X, ["a", "b", "a"]), y)
    if not hasattr(est, "feature_names_in_"):
        pytest.skip("this scikit-learn does not read .columns of an array")
    path = str(tmp_path / "m.rfx")
    with pytest.warns(UserWarning, match="both named 'a'"):
        est.save(path)
    assert not hasattr(rfx.load_model(path), "feature_names_in_")


def test_command_line_matches_the_saved_names(tmp_path, cli):
    X, y, est = _named(rfx.RFFRegressor(64, random_state=0))
    path = str(tmp_path / "m.rfx")
    est.save(path)
    # the columns in another order, with the names of the fit
    order = [2, 0, 1]
    csv = tmp_path / "t.csv"
    with open(csv, "w", encoding="utf-8") as f:
        f.write(",".join(NAMES[k] for k in order) + "\n")
        for row in X[:, order]:
            f.write(",".join(repr(float(v)) for v in row) + "\n")
    out = subprocess.run([cli, "predict", path, str(csv)], capture_output=True, text=True,
                         check=True).stdout.split()
    got = np.array([float(v) for v in out[1:]])
    np.testing.assert_allclose(got, est.predict(_frame(X, NAMES)), rtol=1e-15, atol=1e-15)
    # a renamed column is refused, naming it
    csv2 = tmp_path / "r.csv"
    csv2.write_text(csv.read_text(encoding="utf-8").replace("pressure", "Pressure", 1),
                    encoding="utf-8")
    r = subprocess.run([cli, "predict", path, str(csv2)], capture_output=True, text=True)
    assert r.returncode == 2
    assert "the model's input 'pressure' is not a column" in r.stderr


def test_names_from_the_command_line_come_back(tmp_path, cli):
    X, y = make_data(100, 3)
    csv = tmp_path / "train.csv"
    with open(csv, "w") as f:
        f.write("u,v,w,target\n")
        for row, t in zip(X, y):
            f.write(",".join(repr(float(v)) for v in row) + ",%r\n" % float(t))
    path = str(tmp_path / "m.rfx")
    subprocess.run([cli, "fit", str(csv), "-o", path, "--method", "ridge", "-D", "32"],
                   capture_output=True, check=True)
    est = rfx.load_model(path)
    assert list(est.feature_names_in_) == ["u", "v", "w"]
    assert os.path.getsize(path) > 0


def test_training_box_survives_save_and_load(tmp_path):
    """The training box (the default input distribution of sobol_indices)
    goes into the model file: a loaded model gives the same indices without
    marginals, and the command line takes it as its default too."""
    X, y = make_data(150, 3)
    est = rfx.RFFRegressor(64, random_state=0).fit(X, y)
    path = str(tmp_path / "m.rfx")
    est.save(path)
    back = rfx.load_model(path)
    lo, hi = back._input_box
    assert np.array_equal(lo, X.min(axis=0)) and np.array_equal(hi, X.max(axis=0))
    a = rfx.sobol_indices(est, n=2000, seed=1)
    b = rfx.sobol_indices(back, n=2000, seed=1)
    assert np.array_equal(a.first, b.first) and np.array_equal(a.total, b.total)


def test_command_line_sobol_defaults_to_the_saved_box(tmp_path, cli):
    X, y = make_data(150, 3)
    est = rfx.RFFRegressor(64, random_state=0).fit(X, y)
    path = str(tmp_path / "m.rfx")
    est.save(path)
    box = ",".join("%r,%r" % (float(l), float(h)) for l, h in zip(X.min(axis=0), X.max(axis=0)))
    args = [cli, "sobol", path, "-n", "500", "--format", "json"]
    default = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    given = args + sum([["--uniform", "%d=%r,%r" % (j, float(X[:, j].min()), float(X[:, j].max()))]
                        for j in range(3)], [])
    explicit = subprocess.run(given, capture_output=True, text=True, check=True).stdout
    assert box and default == explicit
