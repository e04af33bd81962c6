# SPDX-License-Identifier: BSD-3-Clause
"""Particle swarm optimisation of a Python function (rfx_pso_minimize):
:func:`pso_minimize` and its :class:`PSOResult`."""
import dataclasses
import numbers

import numpy as np

from . import _common
from ._lib import CancelledError, call_with_progress, ffi, lib

_TOPOLOGIES = {"global": 0, "ring": 1}  # RFX_PSO_TOPOLOGY_GLOBAL, _RING
_STOPS = {0: "max_iter", 1: "stagnation"}  # rfx_pso_stop


@dataclasses.dataclass
class PSOResult:
    """What :func:`pso_minimize` found.

    x : ndarray of shape (d,)
        The best point.
    value : float
        fn(x), the best value found.
    history : ndarray of shape (iterations + 1,)
        The best value after the initial evaluation and after each
        iteration: non-increasing, ending at ``value``.
    iterations : int
        Iterations done (max_iter, or fewer when stopped by ``patience``).
    evaluations : int
        Calls of fn: ``n_particles * (iterations + 1)``.
    n_particles : int
        The swarm size used.
    stop : str
        Why the search stopped: "max_iter" or "stagnation".
    """
    x: np.ndarray
    value: float
    history: np.ndarray
    iterations: int
    evaluations: int
    n_particles: int
    stop: str


def _bounds(v, name):
    a = np.array(v, dtype=np.float64, ndmin=1)
    if a.ndim != 1 or a.size == 0:
        raise ValueError("%s must be a number or a 1-D array of one bound per dimension, "
                         "got shape %s" % (name, a.shape))
    return np.ascontiguousarray(a)


def _real(v, name):
    if not isinstance(v, numbers.Real) or isinstance(v, bool):
        raise TypeError("%s must be a number, got %r" % (name, v))
    return float(v)


def pso_minimize(fn, lower, upper, n_particles=None, max_iter=200, seed=0, *, inertia=0.7298,
                 c1=1.49618, c2=1.49618, v_max=0.5, x0=None, topology="global", patience=0,
                 tol=0.0):
    """Minimise ``fn(x)`` over the box ``lower <= x <= upper`` by particle
    swarm optimisation (Kennedy & Eberhart 1995, the inertia form of Shi &
    Eberhart 1998 with Clerc & Kennedy's constriction constants), by the rfx
    C library (rfx_pso_minimize in rfx/projection.h).

    Each particle moves by ``v <- w v + c1 r1 (p - x) + c2 r2 (g - x)``,
    clamped to ``v_max`` times the box width per coordinate, and every point
    evaluated lies in the box (a coordinate that leaves it stops on the
    bound). The random numbers depend on (seed, particle, iteration) alone:
    the same seed gives the same search, bit for bit.

    Parameters
    ----------
    fn : callable
        ``fn(x)`` with x a float64 array of shape (d,) (a copy: keeping or
        changing it is harmless) returns a number. NaN counts as +infinity.
        An exception raised by fn stops the search and is raised again by
        pso_minimize, as itself.
    lower, upper : float or array-like of shape (d,)
        The box: finite, ``lower < upper`` in every coordinate; a number is
        broadcast to the other's length (d = 1 when both are numbers).
    n_particles : int >= 1 or None, default=None
        The swarm size; None is ``10 + floor(2 sqrt(d))`` (SPSO 2007).
    max_iter : int >= 1, default=200
        Iterations after the initial evaluation.
    seed : int, default=0
    inertia, c1, c2 : float, defaults 0.7298, 1.49618, 1.49618
        w in [0, 1], and the cognitive and social weights (>= 0, c1 + c2 > 0).
    v_max : float in (0, 1], default=0.5
    x0 : array-like of shape (d,) or None, default=None
        A point in the box where particle 0 starts.
    topology : {"global", "ring"}, default="global"
        The attractor g: the best of the whole swarm, or of the particle and
        its two ring neighbours (slower, less prone to early convergence).
    patience : int >= 0, default=0
        Stop after this many iterations in which the best value did not drop
        by more than ``tol``; 0 never stops early.
    tol : float >= 0, default=0.0

    Returns
    -------
    PSOResult
        ``x``, ``value``, ``history``, ``iterations``, ``evaluations``,
        ``n_particles``, ``stop``.

    Calls of fn run on the calling thread, one at a time. A
    :func:`rfx.progress_callback` context receives the stage "pso" after
    each iteration, and can stop the search (:class:`rfx.CancelledError`).

    Examples
    --------
    >>> import numpy as np, rfx
    >>> res = rfx.pso_minimize(lambda x: float(np.sum((x - [0.3, -1.2]) ** 2)),
    ...                        lower=[-5, -5], upper=[5, 5], seed=1)
    >>> bool(np.allclose(res.x, [0.3, -1.2], atol=1e-6)), res.n_particles
    (True, 12)
    >>> bool(np.all(np.diff(res.history) <= 0)) and res.history[-1] == res.value
    True
    """
    if not callable(fn):
        raise TypeError("fn must be callable as fn(x), got %r" % (fn,))
    lo, hi = _bounds(lower, "lower"), _bounds(upper, "upper")
    if lo.size == 1 and hi.size > 1:
        lo = np.full(hi.size, lo[0])
    if hi.size == 1 and lo.size > 1:
        hi = np.full(lo.size, hi[0])
    if lo.size != hi.size:
        raise ValueError("lower has %d bounds and upper %d" % (lo.size, hi.size))
    d = lo.size
    p = ffi.new("rfx_pso_params *", lib.rfx_pso_params_default())
    p.n_particles = _common.check_count(n_particles, "n_particles", 1, allow_none=True) or 0
    p.max_iter = _common.check_count(max_iter, "max_iter", 1)
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool) or not 0 <= seed < 2 ** 64:
        raise ValueError("seed must be an int in [0, 2**64), got %r" % (seed,))
    p.seed = int(seed)
    p.inertia = _real(inertia, "inertia")
    p.c1 = _real(c1, "c1")
    p.c2 = _real(c2, "c2")
    p.v_max = _real(v_max, "v_max")
    if topology not in _TOPOLOGIES:
        raise ValueError("topology must be 'global' or 'ring', got %r" % (topology,))
    p.topology = _TOPOLOGIES[topology]
    p.patience = _common.check_count(patience, "patience", 0)
    p.tol = _real(tol, "tol")
    p.thread_safe = 0  # fn holds the GIL: one call at a time
    p.lower = ffi.cast("const double *", lo.ctypes.data)
    p.upper = ffi.cast("const double *", hi.ctypes.data)
    start = None
    if x0 is not None:
        start = np.ascontiguousarray(x0, dtype=np.float64).reshape(-1)
        if start.size != d:
            raise ValueError("x0 must hold %d values, got %d" % (d, start.size))
        p.x0 = ffi.cast("const double *", start.ctypes.data)

    failure = []

    def objective(user, x, n, value):
        try:
            point = np.frombuffer(ffi.buffer(x, 8 * n), dtype=np.float64).copy()
            v = fn(point)
            try:
                value[0] = float(np.asarray(v, dtype=np.float64).reshape(()))
            except (TypeError, ValueError):
                raise TypeError("pso_minimize: fn must return a number, got %r" % (v,)) from None
            return lib.RFX_OK
        except BaseException as e:  # noqa: B902 - raised again after the C call
            failure.append(e)
            return lib.RFX_ECANCELLED

    cb = ffi.callback("rfx_pso_objective", objective, error=lib.RFX_EINTERNAL)
    x_best = np.empty(d)
    history = np.empty(p.max_iter + 1)
    report = ffi.new("rfx_pso_report *")
    try:
        call_with_progress(lib.rfx_pso_minimize, p, d, cb, ffi.NULL,
                           ffi.cast("double *", x_best.ctypes.data),
                           ffi.cast("double *", history.ctypes.data), report,
                           label="pso_minimize")
    except CancelledError:
        if failure:
            raise failure[0] from None
        raise
    if failure:  # pragma: no cover - the C call returned the status it was given
        raise failure[0]
    it = int(report.iterations)
    return PSOResult(x=x_best, value=float(report.value), history=history[:it + 1].copy(),
                     iterations=it, evaluations=int(report.evaluations),
                     n_particles=int(report.n_particles), stop=_STOPS.get(int(report.stop),
                                                                          str(report.stop)))
