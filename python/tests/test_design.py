# SPDX-License-Identifier: BSD-3-Clause
"""rfx.design against scipy.stats.qmc: the plain Sobol and Halton sequences
point for point, and the quantile map against scipy.stats."""
import numpy as np
import pytest
from scipy import stats
from scipy.stats import qmc

import rfx


def test_plain_sobol_is_scipys():
    U = rfx.design(256, 40, "sobol", scramble=False)
    S = qmc.Sobol(40, scramble=False).random(256)  # 30 bits
    # rfx keeps 32 bits and the cell's midpoint: the same leading 30 bits
    np.testing.assert_array_equal(np.floor(U * 2.0**30), S * 2.0**30)


def test_plain_halton_is_scipys():
    U = rfx.design(300, 8, "halton", scramble=False)
    H = qmc.Halton(8, scramble=False).random(301)[1:]  # scipy starts at the point 0
    np.testing.assert_allclose(U, H, rtol=0, atol=1e-15)


@pytest.mark.parametrize("kind", ["lhs", "sobol", "halton", "random"])
def test_points_in_the_open_cube_and_seeded(kind):
    U = rfx.design(128, 5, kind, seed=3)
    assert U.shape == (128, 5) and np.all((U > 0) & (U < 1))
    np.testing.assert_array_equal(U, rfx.design(128, 5, kind, seed=3))
    assert not np.array_equal(U, rfx.design(128, 5, kind, seed=4))


def test_scrambled_sobol_beats_random_in_discrepancy():
    # centred L2 discrepancy (scipy's), median over seeds
    ds = [qmc.discrepancy(rfx.design(512, 4, "sobol", seed=s)) for s in range(5)]
    dr = [qmc.discrepancy(rfx.design(512, 4, "random", seed=s)) for s in range(5)]
    assert np.median(ds) < np.median(dr) / 10


def test_marginals_are_quantiles():
    m = [("uniform", -1.0, 3.0), ("normal", 2.0, 0.5), ("lognormal", 0.0, 1.0)]
    U = rfx.design(64, 3, "lhs", seed=1)
    X = rfx.design(64, 3, "lhs", seed=1, marginals=m)
    np.testing.assert_allclose(X[:, 0], -1.0 + 4.0 * U[:, 0], rtol=1e-15)
    np.testing.assert_allclose(X[:, 1], stats.norm.ppf(U[:, 1], 2.0, 0.5), rtol=1e-12)
    np.testing.assert_allclose(X[:, 2], stats.lognorm.ppf(U[:, 2], 1.0), rtol=1e-12)


def test_bad_arguments():
    with pytest.raises(ValueError, match="kind must be one of"):
        rfx.design(4, 2, "grid")
    with pytest.raises(ValueError, match="n must be an int >= 1"):
        rfx.design(0, 2)
    with pytest.raises(ValueError, match="1024"):
        rfx.design(4, 1025, "sobol")
    with pytest.raises(ValueError, match="marginals"):
        rfx.design(4, 2, marginals=[("uniform", 0, 1)])
