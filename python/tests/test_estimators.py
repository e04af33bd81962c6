# SPDX-License-Identifier: BSD-3-Clause
"""Behaviour of the estimators beyond scikit-learn's checks: pickling, seeds,
float32, shapes, classes, model files, the docstring examples."""
import copy
import doctest
import json
import os
import pickle
import re
import signal
import subprocess
import sys
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import DataConversionWarning, NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import rfx
import rfx._lib
import rfx._load
import rfx.kernel_approximation
import rfx.models
from conftest import make_data


def _fitted():
    X, y = make_data(150, 3)
    return X, [
        rfx.RandomFourierFeatures(64, kernel="matern", length_scale=[0.5, 1, 2],
                                  random_state=3).fit(X),
        rfx.RandomFourierFeatures(64, activation="relu", sparsity=2, weights="uniform",
                                  random_state=4).fit(X),
        rfx.RFFRegressor(64, random_state=0).fit(X, np.column_stack([y, -y])),
        rfx.BayesianRFFRegressor(64, kernel="laplacian", form="cos_sin", random_state=1).fit(X, y),
        rfx.RFFClassifier(64, random_state=2).fit(X, np.digitize(y, [0, 1])),
    ]


def _outputs(est, X):
    if isinstance(est, rfx.RandomFourierFeatures):
        return [est.transform(X), est.random_weights_]
    if isinstance(est, rfx.BayesianRFFRegressor):
        return list(est.predict(X, return_std=True))
    if isinstance(est, rfx.RFFClassifier):
        return [est.decision_function(X), est.predict(X)]
    return [est.predict(X), est.coef_]


def test_pickle_and_deepcopy_are_bitwise():
    X, ests = _fitted()
    for est in ests:
        for again in (pickle.loads(pickle.dumps(est)), copy.deepcopy(est)):
            assert again.get_params() == est.get_params() or isinstance(
                est.length_scale, list)
            for a, b in zip(_outputs(est, X), _outputs(again, X)):
                assert np.array_equal(a, b)
        # the original still works after pickling
        _outputs(est, X)


def test_pickles_of_models_are_the_model_format():
    X, ests = _fitted()
    reg = ests[2]
    state = reg.__getstate__()
    assert "_model" not in state and state["_model_bytes"][:8] == b"RFXMODL\x1a"
    assert hasattr(reg, "_model")


def test_clone_is_unfitted_with_the_same_params():
    X, ests = _fitted()
    for est in ests:
        c = clone(est)
        assert not hasattr(c, "n_features_in_")
        with pytest.raises(NotFittedError):
            _outputs(c, X)


def test_random_state_conventions():
    X, y = make_data(50, 2)
    a = rfx.RandomFourierFeatures(20, random_state=7).fit(X)
    assert a.seed_ == 7
    np.random.seed(0)
    b = rfx.RandomFourierFeatures(20).fit(X)
    np.random.seed(0)
    c = rfx.RandomFourierFeatures(20).fit(X)
    assert b.seed_ == c.seed_ and np.array_equal(b.transform(X), c.transform(X))
    d = rfx.RandomFourierFeatures(20).fit(X)
    assert d.seed_ != b.seed_
    e = rfx.RandomFourierFeatures(20, random_state=np.random.RandomState(1)).fit(X)
    f = rfx.RandomFourierFeatures(20, random_state=np.random.RandomState(1)).fit(X)
    assert e.seed_ == f.seed_
    big = rfx.RandomFourierFeatures(20, random_state=2 ** 64 - 1).fit(X)
    assert big.seed_ == 2 ** 64 - 1


def test_float32_in_float32_out():
    X, _ = make_data(500, 4)
    t = rfx.RandomFourierFeatures(256, gamma=0.5, random_state=0).fit(X)
    Z64 = t.transform(X)
    Z32 = t.transform(X.astype(np.float32))
    assert Z32.dtype == np.float32 and Z64.dtype == np.float64
    assert np.abs(Z32 - Z64).max() < 1e-5
    # fitted on float32: the same map (only the shape of X matters)
    t32 = rfx.RandomFourierFeatures(256, gamma=0.5, random_state=0).fit(X.astype(np.float32))
    assert np.array_equal(t32.random_weights_, t.random_weights_)
    # other dtypes become float64
    Zi = t.transform(np.round(X).astype(np.int32))
    assert Zi.dtype == np.float64
    # the regressors compute in float64 whatever comes in
    reg = rfx.RFFRegressor(64, alpha=1e-2, random_state=0)
    y = X[:, 0]
    p64 = reg.fit(X, y).predict(X)
    p32 = reg.fit(X.astype(np.float32), y.astype(np.float32)).predict(X.astype(np.float32))
    assert p32.dtype == np.float64 and np.abs(p32 - p64).max() < 1e-4


def test_other_feature_maps():
    X, _ = make_data(100, 4)
    t = rfx.RandomFourierFeatures(50, activation="relu", sparsity=2, weights="normal",
                                  weight_scale=0.5, random_state=0).fit(X)
    W, b = t.random_weights_, t.random_offset_
    assert W.shape == (4, 50) and np.all((W != 0).sum(axis=0) == 2)
    assert np.abs(t.transform(X) - np.maximum(X @ W + b, 0)).max() < 1e-12
    s = rfx.RandomFourierFeatures(50, activation="sigmoid", random_state=0).fit(X)
    P = X @ s.random_weights_ + s.random_offset_
    assert np.abs(s.transform(X) - 1 / (1 + np.exp(-P))).max() < 1e-12
    with pytest.raises(ValueError, match="sparsity"):
        rfx.RandomFourierFeatures(10, sparsity=9).fit(X)
    with pytest.raises(ValueError, match="unknown activation|activation"):
        rfx.RandomFourierFeatures(10, activation="gelu").fit(X)
    with pytest.raises(ValueError, match="cos-sin form is for the cos activation"):
        rfx.RandomFourierFeatures(10, activation="tanh", form="cos_sin").fit(X)
    # a regressor on sparse features, saved and read back with its parameters
    X, y = make_data(200, 4)
    reg = rfx.RFFRegressor(128, sparsity=2, activation="tanh", random_state=0).fit(X, y)
    assert reg.score(X, y) > 0.8


def test_shapes_of_regressor_outputs():
    X, y = make_data(80, 3)
    reg = rfx.RFFRegressor(32, alpha=0.1, random_state=0)
    assert reg.fit(X, y).predict(X).shape == (80,)
    assert np.ndim(reg.intercept_) == 0 and reg.coef_.shape == (32,)
    assert reg.fit(X, y[:, None]).predict(X).shape == (80, 1)
    assert reg.fit(X, np.column_stack([y, y])).predict(X).shape == (80, 2)
    gp = rfx.BayesianRFFRegressor(32, random_state=0)
    with pytest.warns(DataConversionWarning):
        gp.fit(X, y[:, None])
    mean, std = gp.predict(X, return_std=True)
    assert mean.shape == std.shape == (80,) and np.all(std > 0)
    _, fstd = gp.predict(X, return_std=True, latent=True)
    assert np.all(fstd < std)
    with pytest.raises(ValueError):
        gp.fit(X, np.column_stack([y, y]))


def test_ard_length_scales_and_auto():
    X, y = make_data(200, 3)
    reg = rfx.RFFRegressor(64, length_scale=[1.0, 2.0, 50.0], alpha=1e-3,
                           random_state=0).fit(X, y)
    assert np.array_equal(reg.length_scale_, [1.0, 2.0, 50.0])
    auto = rfx.BayesianRFFRegressor(64, random_state=0).fit(X, y)
    assert np.ndim(auto.length_scale_) == 0 and auto.length_scale_ > 0
    assert auto.noise_var_ > 0 and auto.prior_var_ > 0 and np.isfinite(auto.log_evidence_)
    gam = rfx.RFFRegressor(64, gamma=0.5, alpha=1e-3, standardize=False, random_state=0).fit(X, y)
    assert gam.length_scale_ == 1.0  # 1 / sqrt(2 gamma)


def test_classifier_labels_and_decisions():
    X, y = make_data(200, 2)
    yb = np.where(y > np.median(y), "high", "low")
    clf = rfx.RFFClassifier(64, random_state=0).fit(X, yb)
    assert list(clf.classes_) == ["high", "low"]
    d = clf.decision_function(X)
    assert d.shape == (200,)
    assert np.array_equal(clf.predict(X), np.where(d > 0, "low", "high"))
    y3 = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3])) + 10
    clf3 = rfx.RFFClassifier(64, random_state=0).fit(X, y3)
    assert clf3.decision_function(X).shape == (200, 3) and clf3.score(X, y3) > 0.8
    with pytest.raises(ValueError, match="at least 2 classes"):
        rfx.RFFClassifier(16).fit(X, np.zeros(200))
    with pytest.raises(ValueError, match="Unknown label type"):
        rfx.RFFClassifier(16).fit(X, y)


def test_load_model_round_trip_and_refit(tmp_path):
    X, y = make_data(120, 3)
    for est in (rfx.RFFRegressor(48, kernel="cauchy", length_scale=1.5, alpha=1e-2,
                                 random_state=9),
                rfx.BayesianRFFRegressor(48, length_scale=0.8, noise_var=0.01, prior_var=1.0,
                                         activation="sin", sparsity=2, random_state=9)):
        est.fit(X, y)
        path = str(tmp_path / "m.rfx")
        est.save(path)
        loaded = rfx.load_model(path)
        assert type(loaded) is type(est)
        assert loaded.get_params() == est.get_params()
        assert np.array_equal(loaded.predict(X), est.predict(X))
        # the parameters read from the file re-create the model
        assert np.array_equal(clone(loaded).fit(X, y).predict(X), est.predict(X))


def test_pipelines_and_grid_search():
    X, y = make_data(150, 3)
    pipe = make_pipeline(StandardScaler(), rfx.RandomFourierFeatures(64, random_state=0),
                         rfx.RFFRegressor(16, alpha=1.0, random_state=0))
    assert pipe.fit(X, y).predict(X).shape == (150,)
    gs = GridSearchCV(rfx.RFFRegressor(32, random_state=0),
                      {"alpha": [1e-3, 1.0], "kernel": ["gaussian", "matern"]}, cv=3)
    gs.fit(X, y)
    assert gs.best_score_ > 0.5
    names = rfx.RandomFourierFeatures(3).fit(X).get_feature_names_out()
    assert list(names) == ["randomfourierfeatures0", "randomfourierfeatures1",
                           "randomfourierfeatures2"]


def test_n_jobs_values():
    X, y = make_data(100, 3)
    ref = rfx.RandomFourierFeatures(32, random_state=0).fit(X).transform(X)
    for n_jobs in (None, 1, 2, -1, -2):
        t = rfx.RandomFourierFeatures(32, random_state=0, n_jobs=n_jobs).fit(X)
        assert np.array_equal(t.transform(X), ref)
    with pytest.raises(ValueError, match="n_jobs == 0"):
        rfx.RandomFourierFeatures(32, n_jobs=0).fit(X)


@pytest.mark.parametrize("module", [rfx.kernel_approximation, rfx.models, rfx.kernels, rfx._lib,
                                    rfx._load, rfx.sinks, rfx.kernel_sgd, rfx.optimize, rfx.blr])
def test_docstring_examples(module):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        failed, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failed == 0


# ---------------------------------------------------------------------------
# learned length scales (length_scale="learn")
# ---------------------------------------------------------------------------

def _run_cli(cli, *args):
    r = subprocess.run([cli] + [str(a) for a in args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r


@pytest.fixture(scope="module")
def learn_files(tmp_path_factory):
    """y = sin(x0) + x1^2 / 2 + noise: the third input is irrelevant."""
    d = tmp_path_factory.mktemp("learn")
    X, y = make_data(300, 3, seed=4)
    np.save(str(d / "train.npy"), np.column_stack([X, y]))
    Xt, _ = make_data(50, 3, seed=5)
    np.save(str(d / "test.npy"), Xt)
    return d, X, y, Xt


@pytest.mark.parametrize("method", ["bayes", "ridge"])
def test_learned_length_scales_equal_the_cli(cli, learn_files, method):
    """rfx fit --length-scales learn and length_scale="learn" with the same
    seed, D and iterations: the same scales and predictions, bit for bit;
    the irrelevant input gets a scale many times the others'."""
    d, X, y, Xt = learn_files
    m = d / ("%s.rfx" % method)
    _run_cli(cli, "fit", d / "train.npy", "--method", method, "--length-scales", "learn",
             "--learn-iterations", 4, "-D", 64, "--seed", 3, "-o", m)
    cls = rfx.BayesianRFFRegressor if method == "bayes" else rfx.RFFRegressor
    est = cls(64, length_scale="learn", learn_iterations=4, random_state=3).fit(X, y)
    if method == "bayes":
        _run_cli(cli, "predict", m, d / "test.npy", "--std", "-o", d / "p.npy")
        p_cli = np.load(str(d / "p.npy"))
        mean, std = est.predict(Xt, return_std=True)
        assert np.array_equal(mean, p_cli[:, 0]) and np.array_equal(std, p_cli[:, 1])
    else:
        _run_cli(cli, "predict", m, d / "test.npy", "-o", d / "p.npy")
        assert np.array_equal(est.predict(Xt), np.load(str(d / "p.npy")).ravel())
    loaded = rfx.load_model(str(m))
    ls = est.length_scale_
    assert ls.shape == (3,) and np.array_equal(loaded.length_scale_, ls)
    assert ls[2] > 5 * max(ls[0], ls[1]), ls
    before, after = est.learn_score_
    # log evidence per row (higher is better) or the GCV error (lower is better)
    assert (after >= before) if method == "bayes" else (after <= before)
    # what the command line prints: "log evidence per row B -> A", "N candidates"
    info = _run_cli(cli, "fit", d / "train.npy", "--method", method, "--length-scales",
                    "learn", "--learn-iterations", 4, "-D", 64, "--seed", 3, "-o",
                    d / "again.rfx").stderr
    assert "%d candidates" % est.learn_evaluations_ in info


def test_learned_length_scales_equal_the_c_api(learn_files):
    """The estimator against rfx_model_fit called directly with
    learn_length_scales, from a given gamma, without standardisation, with
    a swarm size of 5: the same weights and scales bit for bit, and the
    report's scores."""
    from rfx._lib import cmat, ffi, lib
    _, X, y, _ = learn_files
    p = ffi.new("rfx_fit_params *", lib.rfx_fit_params_default())
    p.method = lib.RFX_METHOD_RIDGE
    p.features.n_features = 48
    p.features.seed = 11
    p.features.gamma = 0.3
    p.standardize = 0
    p.learn_length_scales = 1
    p.learn_iterations = 3
    p.learn_particles = 5
    Xc = np.ascontiguousarray(X)
    Yc = np.ascontiguousarray(y.reshape(-1, 1))
    out = ffi.new("rfx_model **")
    rep = ffi.new("rfx_fit_report *")
    assert lib.rfx_model_fit(p, cmat(Xc), cmat(Yc), out, rep) == 0
    model = ffi.gc(out[0], lib.rfx_model_free)
    est = rfx.RFFRegressor(48, gamma=0.3, length_scale="learn", learn_iterations=3,
                           learn_particles=5, standardize=False, random_state=11).fit(X, y)
    ref = rfx._load._estimator_from_model(model)
    assert np.array_equal(est.length_scale_, ref.length_scale_)
    assert np.array_equal(est.coef_, ref.coef_) and est.intercept_ == ref.intercept_
    assert est.learn_score_ == (rep.learn_score_before, rep.learn_score_after)
    assert est.learn_evaluations_ == rep.learn_evaluations == 5 * (3 + 1) + 1
    # the start is gamma's scale, 1 / sqrt(2 gamma), in every input
    start = rfx.RFFRegressor(48, gamma=0.3, standardize=False, random_state=11).fit(X, y)
    assert start.length_scale_ == pytest.approx(1 / np.sqrt(0.6), rel=1e-15)


def test_learn_parameters_are_checked(learn_files):
    _, X, y, _ = learn_files
    with pytest.raises(ValueError, match="learn_iterations must be >= 1, got 0"):
        rfx.RFFRegressor(16, length_scale="learn", learn_iterations=0).fit(X, y)
    with pytest.raises(TypeError, match="learn_iterations must be an int"):
        rfx.BayesianRFFRegressor(16, length_scale="learn", learn_iterations=2.5).fit(X, y)
    with pytest.raises(ValueError, match="learn_particles must be >= 1 or None, got 0"):
        rfx.RFFRegressor(16, length_scale="learn", learn_particles=0).fit(X, y)
    with pytest.raises(ValueError, match='length_scale="learn" is for RFFRegressor and '
                                         "BayesianRFFRegressor"):
        rfx.RFFClassifier(16, length_scale="learn").fit(X, y > 0)
    with pytest.raises(ValueError, match='length_scale="learn" is for'):
        rfx.RandomFourierFeatures(16, length_scale="learn").fit(X)
    with pytest.raises(ValueError, match='"auto", "learn" or None, got \'ard\''):
        rfx.RFFRegressor(16, length_scale="ard").fit(X, y)
    # without learning, the learning parameters are not used, and a refit
    # forgets the learned scores of an earlier fit
    reg = rfx.RFFRegressor(16, length_scale="learn", learn_iterations=1, random_state=0)
    reg.fit(X, y)
    assert hasattr(reg, "learn_score_") and hasattr(reg, "learn_evaluations_")
    reg.set_params(length_scale="auto", learn_iterations=0).fit(X, y)
    assert not hasattr(reg, "learn_score_") and not hasattr(reg, "learn_evaluations_")
    assert np.ndim(reg.length_scale_) == 0


# ---------------------------------------------------------------------------
# progress, verbose and cancellation
# ---------------------------------------------------------------------------

def test_verbose_prints_the_stages(capsys):
    X, y = make_data(200, 3)
    rfx.BayesianRFFRegressor(32, random_state=0).fit(X, y)
    assert capsys.readouterr().err == ""
    calls = []
    with rfx.progress_callback(lambda stage, fraction: calls.append((stage, fraction))):
        rfx.BayesianRFFRegressor(32, length_scale="learn", learn_iterations=2, random_state=0,
                                 verbose=1).fit(X, y)
    err = capsys.readouterr().err.splitlines()
    lines = [re.fullmatch(r"\[BayesianRFFRegressor\] (.*\S) +(\d+)%", line) for line in err[:-1]]
    assert all(lines), err
    shown = [(m.group(1), int(m.group(2))) for m in lines]
    assert shown[0][0] == "choose length scale" and shown[-2:] == [("fit", 0), ("fit", 100)]
    assert ("learn length scales", 100) in shown
    assert re.fullmatch(r"\[BayesianRFFRegressor\] done in \d+\.\d\d s", err[-1])
    # verbose=1: the reports that start a stage or a new tenth of it
    tenths = [(s, int(10 * f)) for s, f in calls]
    firsts = [(s, int(100 * f)) for i, (s, f) in enumerate(calls)
              if i == 0 or tenths[i - 1] != tenths[i]]
    assert shown == firsts and len(shown) < len(calls)
    # verbose=2: every report
    calls.clear()
    with rfx.progress_callback(lambda stage, fraction: calls.append((stage, fraction))):
        rfx.RFFRegressor(32, random_state=0, verbose=2).fit(X, y)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == len(calls) + 1
    rfx.SparseRFERegressor(300, sparsity=1, random_state=0, verbose=True).fit(X, y)
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("[SparseRFERegressor] srfe candidates")
    assert err[-1].startswith("[SparseRFERegressor] done in")
    for bad, exc in ((-1, ValueError), ("yes", TypeError), (0.5, TypeError)):
        with pytest.raises(exc, match="verbose"):
            rfx.RFFRegressor(16, verbose=bad).fit(X, y)


def test_progress_callback_reports_and_changes_nothing():
    X, y = make_data(200, 3)
    calls, ccalls = [], []
    with rfx.progress_callback(lambda stage, fraction: calls.append((stage, fraction))):
        reg = rfx.RFFRegressor(32, random_state=0).fit(X, y)
    with rfx.progress_callback(lambda stage, fraction: ccalls.append((stage, fraction))):
        clf = rfx.RFFClassifier(32, random_state=0).fit(X, y > 0)
    ref = rfx.RFFRegressor(32, random_state=0).fit(X, y)
    assert np.array_equal(reg.coef_, ref.coef_) and reg.alpha_ == ref.alpha_
    assert np.array_equal(clf.coef_, rfx.RFFClassifier(32, random_state=0).fit(X, y > 0).coef_)
    for c in (calls, ccalls):
        stages = [s for s, _ in c]
        assert stages[0] == "choose length scale" and stages[-2:] == ["fit", "fit"]
        for stage in set(stages):
            fr = [f for s, f in c if s == stage]
            assert all(0 <= f <= 1 for f in fr) and fr == sorted(fr) and fr[-1] == 1.0
    # outside the block nothing is reported; nested blocks call every callback
    n = len(calls)
    rfx.RFFRegressor(32, random_state=0).fit(X, y)
    assert len(calls) == n
    inner = []
    with rfx.progress_callback(lambda s, f: calls.append((s, f))):
        with rfx.progress_callback(lambda s, f: inner.append((s, f))):
            rfx.RFFRegressor(32, alpha=0.1, length_scale=1.0, random_state=0).fit(X, y)
    assert inner == [("fit", 0.0), ("fit", 1.0)] and calls[n:] == inner
    with pytest.raises(TypeError, match="fn must be callable"):
        with rfx.progress_callback("print"):
            pass


class _Stop(Exception):
    pass


def _cancelled_fits():
    X, y = make_data(150, 3)
    return X, y, [
        (rfx.RFFRegressor(32, random_state=0), y, "choose length scale"),
        (rfx.BayesianRFFRegressor(32, length_scale="learn", learn_iterations=3,
                                  random_state=0), y, "learn length scales"),
        (rfx.RFFClassifier(32, random_state=0), y > 0, "fit"),
        (rfx.SparseRFERegressor(200, sparsity=1, random_state=0), y, "srfe candidates"),
    ]


def _outputs_of(est, X):
    out = [est.predict(X)]
    if hasattr(est, "coef_"):
        out.append(est.coef_)
    return out


def test_a_raising_callback_cancels_and_leaves_no_half_fitted_state():
    X, y, fits = _cancelled_fits()
    for est, target, stage in fits:
        def boom(s, f, stage=stage):
            if s == stage and f > 0.3:
                raise _Stop("enough of %s" % s)
        with rfx.progress_callback(boom):
            with pytest.raises(rfx.CancelledError, match=r"cancelled by the progress callback.* "
                                                         r"\(the progress callback raised "
                                                         "_Stop: enough of") as info:
                est.fit(X, target)
        assert isinstance(info.value.__cause__, _Stop)
        # no attribute of the fit was left behind
        assert not [k for k in vars(est) if k.endswith("_") or k.startswith("_")], vars(est)
        with pytest.raises(NotFittedError):
            est.predict(X)
        # a fitted estimator keeps its earlier fit when a refit is cancelled
        est.fit(X, target)
        before = dict(vars(est))
        outputs = _outputs_of(est, X)
        with rfx.progress_callback(lambda s, f: True):  # a true value stops too
            with pytest.raises(rfx.CancelledError, match="cancelled by the progress callback"):
                est.fit(X[:100], target[:100])
        assert vars(est) == before
        for a, b in zip(outputs, _outputs_of(est, X)):
            assert np.array_equal(a, b)


_INTERRUPTED_CHILD = r"""
import json, os, signal, sys, threading
import numpy as np
import rfx
X = np.random.RandomState(0).normal(size=(200, 3))
y = np.sin(X[:, 0]) + X[:, 1] ** 2 / 2
mode = sys.argv[1]
est = rfx.BayesianRFFRegressor(32, length_scale="learn", learn_iterations=10 ** 7,
                               random_state=0, verbose=int(mode == "external"))
state = {}
def cb(stage, fraction):
    if stage == "learn length scales" and "sent" not in state:
        state["sent"] = True
        if mode == "self":
            os.kill(os.getpid(), signal.SIGINT)  # delivered at the next report
        else:
            print("learning", flush=True)  # the parent sends SIGINT now
try:
    with rfx.progress_callback(cb):
        est.fit(X, y)
    result = "finished"
except KeyboardInterrupt:
    result = "KeyboardInterrupt"
except BaseException as e:
    result = type(e).__name__
fitted = sorted(k for k in vars(est) if k.endswith("_") or k.startswith("_"))
again = rfx.BayesianRFFRegressor(32, random_state=0).fit(X, y).predict(X[:2]).tolist()
print(json.dumps({"result": result, "fitted": fitted, "again": again}), flush=True)
"""


@pytest.mark.parametrize("mode", ["self", "external"])
def test_ctrl_c_stops_a_fit_cleanly(tmp_path, mode):
    """SIGINT during a fit that would run for hours: the C library stops at
    its next report (RFX_ECANCELLED), the fit raises KeyboardInterrupt,
    the estimator is left unfitted, and the library works on. "external"
    is Ctrl-C from outside while the C code runs, "self" a signal the
    process sends itself from the callback."""
    script = tmp_path / "child.py"
    script.write_text(_INTERRUPTED_CHILD)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(rfx.__file__)), os.environ.get("PYTHONPATH", "")]),
        RFX_LIBRARY=rfx.library_path, OMP_NUM_THREADS="1")
    proc = subprocess.Popen([sys.executable, str(script), mode], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        if mode == "external":
            assert proc.stdout.readline() == "learning\n"
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    res = json.loads(out.strip().splitlines()[-1])
    assert res["result"] == "KeyboardInterrupt" and res["fitted"] == []
    # the child's fit after the interrupt is the ordinary one
    X = np.random.RandomState(0).normal(size=(200, 3))
    y = np.sin(X[:, 0]) + X[:, 1] ** 2 / 2
    ref = rfx.BayesianRFFRegressor(32, random_state=0).fit(X, y).predict(X[:2])
    assert res["again"] == ref.tolist()
    if mode == "external":
        assert "[BayesianRFFRegressor] learn length scales" in err


def test_sparse_input_is_refused_clearly():
    """Sparse X is refused by every estimator with scikit-learn's TypeError,
    which says what to do (X.toarray()); nothing is fitted."""
    sp = pytest.importorskip("scipy.sparse")
    X, y = make_data(40, 3)
    Xs = sp.csr_matrix(X)
    for est in (rfx.RFFRegressor(16), rfx.BayesianRFFRegressor(16), rfx.RFFClassifier(16),
                rfx.RandomFourierFeatures(16), rfx.PCERegressor(), rfx.SparseRFERegressor(40),
                rfx.ProjectedRegressor(), rfx.SurrogateRegressor()):
        with pytest.raises(TypeError, match="sparse matrix was passed, but dense data is "
                                            "required.*toarray"):
            if isinstance(est, rfx.RFFClassifier):
                est.fit(Xs, (y > 0).astype(int))
            else:
                est.fit(Xs, y)
        assert not hasattr(est, "n_features_in_")


def test_cli_sinks_and_greedy_match_python(cli, learn_files):
    """rfx fit --method sinks / greedy standardise the inputs and fit what
    KitchenSinksRegressor and GreedyRegressor fit on the standardised inputs
    (the scaler stored in the model file); predictions agree to rounding."""
    d, X, y, Xt = learn_files
    mu, sd = X.mean(axis=0), X.std(axis=0)
    ls = np.sqrt(X.shape[1])
    _run_cli(cli, "fit", d / "train.npy", "--method", "sinks", "-D", 64, "--box", 5, "--seed", 3,
             "--threads", 1, "-o", d / "sinks.rfx")
    _run_cli(cli, "predict", d / "sinks.rfx", d / "test.npy", "-o", d / "ps.csv")
    ref = rfx.KitchenSinksRegressor(n_components=64, length_scale=ls, C=5.0,
                                    random_state=3).fit((X - mu) / sd, y)
    got = np.loadtxt(str(d / "ps.csv"), delimiter=",", skiprows=1)
    np.testing.assert_allclose(got, ref.predict((Xt - mu) / sd), rtol=1e-8, atol=1e-10)
    _run_cli(cli, "fit", d / "train.npy", "--method", "greedy", "--terms", 8, "--seed", 3,
             "--threads", 1, "-o", d / "greedy.rfx")
    _run_cli(cli, "predict", d / "greedy.rfx", d / "test.npy", "-o", d / "pg.csv")
    ref = rfx.GreedyRegressor(n_terms=8, length_scale=ls, random_state=3).fit((X - mu) / sd, y)
    got = np.loadtxt(str(d / "pg.csv"), delimiter=",", skiprows=1)
    np.testing.assert_allclose(got, ref.predict((Xt - mu) / sd), rtol=1e-8, atol=1e-10)


def test_greedy_relaxed_update():
    """GreedyRegressor(update="relaxed"): the convex update's training error
    never rises, the model predicts the fit the path reports, and one term
    is the orthogonal fit's term."""
    X, y = make_data(300, 3, seed=8)
    r = rfx.GreedyRegressor(n_terms=24, update="relaxed", length_scale=0.8, random_state=2).fit(X, y)
    assert np.all(np.diff(r.mse_path_) <= 1e-12 * r.mse_path_[:-1])
    assert np.mean((r.predict(X) - y) ** 2) == pytest.approx(r.mse_path_[-1], rel=1e-9)
    one_r = rfx.GreedyRegressor(n_terms=1, update="relaxed", random_state=2).fit(X, y)
    one_o = rfx.GreedyRegressor(n_terms=1, random_state=2).fit(X, y)
    np.testing.assert_allclose(one_r.predict(X), one_o.predict(X), rtol=1e-9, atol=1e-11)
    with pytest.raises(ValueError, match="update"):
        rfx.GreedyRegressor(update="convex").fit(X, y)


@pytest.mark.parametrize("loss", ["squared", "auto", None])
def test_squared_classifier_is_the_cli_default(cli, tmp_path, loss):
    """RFFClassifier() (loss="auto", the default) is `rfx fit --task
    classify` with no options, and loss="squared" is the same with --loss
    squared (the
    least-squares classifier, lambda and the length scale by exact
    leave-one-out errors, the probabilities' temperature on the LOO scores;
    auto then refines it where held-out rows gain): the same lambda,
    refinement, labels and probabilities, bit for bit."""
    from sklearn.datasets import load_digits
    X, y = load_digits(return_X_y=True)
    Xtr, ytr, Xte = X[:400], y[:400], X[400:600]
    kw = {} if loss is None else {"loss": loss}
    clf = rfx.RFFClassifier(256, random_state=3, **kw).fit(Xtr, ytr)
    head = ",".join(["x%d" % i for i in range(64)])
    tr, te = str(tmp_path / "tr.csv"), str(tmp_path / "te.csv")
    np.savetxt(tr, np.column_stack([Xtr, ytr]), delimiter=",", fmt="%.17g", header=head + ",y",
               comments="")
    np.savetxt(te, Xte, delimiter=",", fmt="%.17g", header=head, comments="")
    model, pred = str(tmp_path / "m.rfx"), str(tmp_path / "p.csv")
    extra = ["--loss", "squared"] if loss == "squared" else []
    r = subprocess.run([cli, "fit", tr, "--target", "y", "--task", "classify", "-D", "256",
                        "--seed", "3", "-o", model] + extra, capture_output=True, text=True,
                       check=True)
    lam = float(re.search(r"^lambda +(\S+)", r.stderr, re.M).group(1))
    subprocess.run([cli, "predict", model, te, "--proba", "-o", pred], check=True,
                   capture_output=True)
    q = np.genfromtxt(pred, delimiter=",", skip_header=1)
    assert clf.alpha_ == pytest.approx(lam, rel=1e-5)  # the CLI prints 6 digits
    line = re.search(r"^refinement +(.*)$", r.stderr, re.M)
    if loss == "squared":
        assert line is None and clf.refine_steps_ == 0 and clf.refine_holdout_ == 0
    else:
        assert clf.refine_holdout_ == 80
        steps = 0 if line.group(1).startswith("none") else int(line.group(1).split()[0])
        assert clf.refine_steps_ == steps
    assert np.array_equal(q[:, 0], clf.predict(Xte))
    assert np.array_equal(q[:, 1:], clf.predict_proba(Xte))
    # the probabilities: a softmax of the scores over one temperature
    S = clf.decision_function(Xte)
    P = clf.predict_proba(Xte)
    T = np.median((S[:, 0] - S[:, 1]) / (np.log(P[:, 0]) - np.log(P[:, 1])))
    E = np.exp((S - S.max(axis=1, keepdims=True)) / T)
    assert np.allclose(P, E / E.sum(axis=1, keepdims=True), rtol=1e-9, atol=1e-12)


def test_auto_classifier_refines_where_held_out_rows_gain():
    """loss="auto" on five rings, where least squares masks the middle
    rings: Newton steps of the squared hinge are kept, the model has the
    squared-hinge loss, beats loss="squared" on fresh rows, and keeps
    probabilities (a softmax over the held-out temperature) through a
    pickle; on two rings nothing gains and it is loss="squared" bit for
    bit."""
    def rings(seed, n, C):
        r = np.random.RandomState(seed)
        k = r.randint(0, C, n)
        rad, a = k + r.uniform(size=n), r.uniform(0, 2 * np.pi, n)
        return np.column_stack([rad * np.cos(a), rad * np.sin(a)]), k
    X, y = rings(0, 1000, 5)
    Xf, yf = rings(1, 4000, 5)
    auto = rfx.RFFClassifier(48, loss="auto", random_state=1).fit(X, y)
    sq = rfx.RFFClassifier(48, loss="squared", random_state=1).fit(X, y)
    assert auto.refine_holdout_ == 200 and auto.refine_steps_ >= 1
    assert auto.alpha_ == sq.alpha_
    assert auto.score(Xf, yf) > sq.score(Xf, yf)
    P = auto.predict_proba(Xf[:50])
    assert np.allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.array_equal(P.argmax(axis=1), auto.predict(Xf[:50]))
    back = pickle.loads(pickle.dumps(auto))
    assert np.array_equal(back.predict_proba(Xf[:50]), P)
    X2, y2 = rings(2, 1000, 2)
    a2 = rfx.RFFClassifier(48, loss="auto", random_state=1).fit(X2, y2)
    s2 = rfx.RFFClassifier(48, loss="squared", random_state=1).fit(X2, y2)
    assert a2.refine_steps_ == 0 and a2.refine_holdout_ == 200
    assert np.array_equal(a2.coef_, s2.coef_)
    assert np.array_equal(a2.predict_proba(X2[:20]), s2.predict_proba(X2[:20]))
