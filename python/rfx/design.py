# SPDX-License-Identifier: BSD-3-Clause
"""Space-filling designs: where to run an expensive simulation.

``design(n, d, "sobol")`` gives n points of the unit cube (0, 1)^d; with
``marginals`` the points are mapped to those input distributions by their
quantiles. The kinds (rfx/surrogate.h has the details and references):

- ``"random"``: independent uniforms;
- ``"lhs"``: a Latin hypercube, one point in each of the n strata of every
  input;
- ``"sobol"``: the Sobol sequence (Joe & Kuo direction numbers, up to 1024
  inputs), scrambled by a random linear matrix scramble and digital shift;
  best with n a power of 2;
- ``"halton"``: the Halton sequence, scrambled by random digit permutations.

With ``scramble=False`` the Sobol and Halton sequences are the plain ones
(scipy.stats.qmc's ``scramble=False`` points, at the midpoints of their
2^-32 cells for Sobol, so that none is 0).
"""
import numbers

import numpy as np

from ._lib import check, cmat, ffi, lib, mat
from .surrogate import _marginals

__all__ = ["design"]

_KINDS = ("random", "lhs", "sobol", "halton")


def design(n, d, kind="sobol", *, seed=0, scramble=True, marginals=None):
    """An (n, d) float64 array of design points.

    Parameters
    ----------
    n, d : int
        Points and inputs, both >= 1.
    kind : {"sobol", "lhs", "halton", "random"}
    seed : int
        Seed of the randomisation (scramble, permutation or draws).
    scramble : bool
        Randomise the Sobol and Halton sequences (ignored by "random" and
        "lhs", random by nature).
    marginals : list of (kind, a, b) tuples, optional
        d input distributions ("uniform", lo, hi), ("normal", mean, sd) or
        ("lognormal", mu, sigma): the points become their quantiles.
    """
    for v, name in ((n, "n"), (d, "d")):
        if not isinstance(v, numbers.Integral) or isinstance(v, bool) or v < 1:
            raise ValueError("%s must be an int >= 1, got %r" % (name, v))
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool) or seed < 0:
        raise ValueError("seed must be an int >= 0, got %r" % (seed,))
    if kind not in _KINDS:
        raise ValueError("kind must be one of %s, got %r" % (", ".join(_KINDS), kind))
    out = ffi.new("rfx_design_kind *")
    check(lib.rfx_design_from_name(kind.encode(), out))
    U = np.empty((int(n), int(d)), dtype=np.float64)
    check(lib.rfx_design_sample(out[0], int(seed), 1 if scramble else 0, mat(U)))
    if marginals is not None:
        m = _marginals(marginals, int(d))
        check(lib.rfx_marginals_quantile(m, int(d), cmat(U), mat(U)))
    return U
