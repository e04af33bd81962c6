# SPDX-License-Identifier: BSD-3-Clause
"""Shared fixtures: where the rfx command-line tool and the C header are.

ctest runs these tests with RFX_LIBRARY (the build's librfx.so) and RFX_CLI
(the build's rfx tool) set; run by hand, they look in the source checkout's
build/ directory. Tests that need a missing tool are skipped, not failed.
"""
import glob
import os
import shutil

import numpy as np
import pytest

import rfx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _cli_path():
    env = os.environ.get("RFX_CLI")
    if env:
        return env
    for cand in (os.path.join(os.path.dirname(rfx.library_path), "rfx"),
                 os.path.join(ROOT, "build", "rfx")):
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


@pytest.fixture(autouse=True)
def _fixed_global_seed():
    """Estimators with random_state=None draw their seed from numpy's global
    RandomState, as scikit-learn's do (scikit-learn's estimator checks leave
    it so in some checks): seeded before each test, so that a test runs the
    same fits every time."""
    np.random.seed(0)


@pytest.fixture(scope="session")
def cli():
    path = _cli_path()
    if not path or not os.path.isfile(path):
        pytest.skip("the rfx command-line tool was not found (set RFX_CLI)")
    return path


@pytest.fixture(scope="session")
def c_compiler():
    header = os.path.join(ROOT, "include", "rfx.h")
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc or not os.path.isfile(header):
        pytest.skip("no C compiler or include/rfx.h: cannot build the C reference")
    return cc, os.path.dirname(header)


@pytest.fixture(scope="session")
def header_text():
    path = os.path.join(ROOT, "include", "rfx.h")
    if not os.path.isfile(path):
        pytest.skip("include/rfx.h not found (an installed package without sources)")
    texts = []
    # rfx.h and the parts it includes (rfx/surrogate.h, rfx/pce.h, ...)
    for p in [path] + sorted(glob.glob(os.path.join(ROOT, "include", "rfx", "*.h"))):
        with open(p) as f:
            texts.append(f.read())
    return "\n".join(texts)


def make_data(n, d, seed=0, noise=0.1):
    """A smooth regression problem: X ~ N(0, 1), y = sin(x0) + x1^2 / 2 + noise."""
    rs = np.random.RandomState(seed)
    X = rs.normal(size=(n, d))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1 % d] ** 2 + noise * rs.normal(size=n)
    return X, y
