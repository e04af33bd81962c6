# SPDX-License-Identifier: BSD-3-Clause
"""n_jobs as scikit-learn reads it (joblib's effective_n_jobs): None is one
thread unless a joblib context sets n_jobs, -1 all cores, -2 all but one;
and the count that reaches the C library (the map's n_threads)."""
import joblib
import numpy as np
import pytest

import rfx
from rfx import _common
from rfx._lib import lib

from conftest import make_data


def _context(n_jobs):
    """joblib.parallel_config (joblib >= 1.3) or parallel_backend (older)."""
    if hasattr(joblib, "parallel_config"):
        return joblib.parallel_config(backend="threading", n_jobs=n_jobs)
    return joblib.parallel_backend("threading", n_jobs=n_jobs)


def test_mapping_follows_joblib():
    cpus = joblib.cpu_count()
    assert _common.resolve_threads(None) == 1 == joblib.effective_n_jobs(None)
    assert _common.resolve_threads(-1) == cpus == joblib.effective_n_jobs(-1)
    assert _common.resolve_threads(-2) == max(1, cpus - 1)
    assert _common.resolve_threads(-2) == joblib.effective_n_jobs(-2)
    assert _common.resolve_threads(-cpus - 5) == 1  # never below one
    assert [_common.resolve_threads(k) for k in (1, 2, 3)] == [1, 2, 3]
    with _context(3):
        assert _common.resolve_threads(None) == 3 == joblib.effective_n_jobs(None)
        assert _common.resolve_threads(2) == 2  # an explicit n_jobs wins
    with _context(-1):
        assert _common.resolve_threads(None) == cpus
    assert _common.resolve_threads(None) == 1  # the context is gone
    with pytest.raises(ValueError, match="n_jobs == 0"):
        _common.resolve_threads(0)
    with pytest.raises(TypeError, match="n_jobs"):
        _common.resolve_threads(2.0)


def _map_threads(features):
    return int(lib.rfx_features_get_params(features).n_threads)


def test_threads_reach_the_c_library():
    X, y = make_data(60, 3)
    t = rfx.RandomFourierFeatures(16, random_state=0).fit(X)
    assert _map_threads(t._features) == 1
    with _context(3):
        t3 = rfx.RandomFourierFeatures(16, random_state=0).fit(X)
    assert _map_threads(t3._features) == 3
    t2 = rfx.RandomFourierFeatures(16, random_state=0, n_jobs=2).fit(X)
    assert _map_threads(t2._features) == 2
    tall = rfx.RandomFourierFeatures(16, random_state=0, n_jobs=-1).fit(X)
    assert _map_threads(tall._features) == joblib.cpu_count()
    np.testing.assert_array_equal(t.transform(X), t3.transform(X))  # same bits
    np.testing.assert_array_equal(t.transform(X), tall.transform(X))

    for n_jobs, want in ((None, 1), (2, 2), (-1, joblib.cpu_count())):
        reg = rfx.RFFRegressor(16, alpha=1e-3, random_state=0, n_jobs=n_jobs).fit(X, y)
        assert _map_threads(lib.rfx_model_features(reg._model)) == want
