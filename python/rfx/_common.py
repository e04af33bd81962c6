# SPDX-License-Identifier: BSD-3-Clause
"""Parameter handling shared by the estimators: seeds, thread counts, kernel
length scales, and the rfx_features_params struct they fill."""
import functools
import numbers
import os
import warnings

import numpy as np
from sklearn.utils import check_random_state

from ._lib import c_string, check, ffi, lib

# The largest seed drawn from a RandomState (as scikit-learn draws them).
_SEED_DRAW_MAX = np.iinfo(np.int32).max


def resolve_seed(random_state):
    """The uint64 seed of the C library for a scikit-learn random_state:
    an int is the seed itself (0 <= seed < 2**64); None (numpy's global
    RandomState) or a RandomState draws one, as scikit-learn estimators do,
    so that fit with random_state=None is random and with an int is
    reproducible. The seed drawn is kept as the fitted attribute seed_."""
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        seed = int(random_state)
        if not 0 <= seed < 2 ** 64:
            raise ValueError("random_state: an int seed must be in [0, 2**64), got %d" % seed)
        return seed
    rs = check_random_state(random_state)  # ValueError for anything else
    return int(rs.randint(_SEED_DRAW_MAX))


def _usable_cpus():
    """The cores this process may run on: joblib's count when joblib is there
    (affinity and cgroup quotas, as scikit-learn's n_jobs=-1 uses), else the
    affinity mask."""
    try:
        import joblib
        return max(1, int(joblib.cpu_count()))
    except ImportError:
        pass
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _context_n_jobs():
    """n_jobs of an enclosing ``joblib.parallel_config`` /
    ``parallel_backend`` context, or None outside one (or without joblib)."""
    try:
        from joblib.parallel import get_active_backend
        _, n_jobs = get_active_backend()
    except (ImportError, AttributeError):
        return None
    return n_jobs if isinstance(n_jobs, numbers.Integral) and n_jobs != 0 else None


def resolve_threads(n_jobs):
    """n_jobs -> the C n_threads, as scikit-learn reads n_jobs (joblib's
    ``effective_n_jobs``): None is 1 thread, unless an enclosing
    ``joblib.parallel_config(n_jobs=k)`` (or ``parallel_backend``) sets k;
    k > 0 is k; -1 all usable cores; -k all but k - 1. Results never depend
    on it."""
    if n_jobs is None:
        n_jobs = _context_n_jobs() or 1
    if not isinstance(n_jobs, numbers.Integral) or isinstance(n_jobs, bool):
        raise TypeError("n_jobs must be an int or None, got %r" % (n_jobs,))
    n_jobs = int(n_jobs)
    if n_jobs == 0:
        raise ValueError("n_jobs == 0 has no meaning; use None, a positive count or -1")
    if n_jobs < 0:
        n_jobs = max(1, _usable_cpus() + 1 + n_jobs)
    return min(n_jobs, 4096)


def _name_to_enum(name, what, fn, ctype):
    if not isinstance(name, str):
        raise TypeError("%s must be a string, got %r" % (what, name))
    out = ffi.new(ctype + " *")
    check(fn(name.encode("utf-8"), out))  # the C message lists the choices
    return out[0]


def kernel_enum(name):
    return _name_to_enum(name, "kernel", lib.rfx_kernel_from_name, "rfx_kernel")


def option_name(value, what):
    """An option string in the Python API's one spelling, scikit-learn's
    underscores ("cos_bias", "squared_hinge", "dual_cd"). The hyphenated
    spelling of the C library and the command line ("cos-bias") is still
    accepted, with a FutureWarning. Anything else is returned as it is, for
    the caller's own check."""
    if isinstance(value, str) and "-" in value:
        new = value.replace("-", "_")
        warnings.warn("%s=%r: the Python API spells it %r; the hyphenated spelling is "
                      "deprecated and will stop working in a future release"
                      % (what, value, new), FutureWarning, stacklevel=3)
        return new
    return value


def c_option_name(value):
    """The C library's name (hyphens) of an option spelled for Python."""
    return value.replace("_", "-")


def python_option_name(c_name):
    """The Python spelling of a name from the C library's tables."""
    return c_name.replace("-", "_")


def form_enum(name):
    name = option_name(name, "form")
    if not isinstance(name, str):
        raise TypeError("form must be a string, got %r" % (name,))
    return _name_to_enum(c_option_name(name), "form", lib.rfx_form_from_name, "rfx_form")


def activation_enum(name):
    return _name_to_enum(name, "activation", lib.rfx_activation_from_name, "rfx_activation")


def structure_enum(name):
    return _name_to_enum(name, "structure", lib.rfx_structure_from_name, "rfx_structure")


def weights_enum(name):
    return _name_to_enum(name, "weights", lib.rfx_weights_from_name, "rfx_weights")


def _is_auto(v):
    return isinstance(v, str) and v == "auto"


def is_learn(v):
    """length_scale="learn": one length scale per input, tuned by the fit."""
    return isinstance(v, str) and v == "learn"


def resolve_scale(est, X, d, allow_auto, allow_learn=False):
    """The kernel scale of est's gamma / length_scale for d inputs, as
    (length_scale, length_scales array or None, gamma, auto):

    - length_scale a number: isotropic; array-like of d numbers: one per
      input (ARD); giving gamma as well is an error;
    - length_scale "learn" (estimators that allow it): the starting point of
      the learned scales is gamma when given, else chosen as for "auto";
    - otherwise gamma: a number (scikit-learn's meaning, gaussian and
      laplacian kernels) or "scale", 1 / (d X.var()) as RBFSampler;
    - otherwise, for estimators that allow it, "auto" (chosen by the fit),
      else the kernel's default: gamma = 1 (gaussian, laplacian, as
      RBFSampler), length scale 1 (cauchy, matern).
    """
    ls, gamma = est.length_scale, est.gamma
    if is_learn(ls):
        if not allow_learn:
            raise ValueError('length_scale="learn" is for RFFRegressor and '
                             "BayesianRFFRegressor; give a number, an array%s or None"
                             % (', "auto"' if allow_auto else ""))
        ls = "auto"
    given_ls = ls is not None and not _is_auto(ls)
    if isinstance(ls, str) and not _is_auto(ls):
        raise ValueError("length_scale must be a positive number, an array of one per "
                         "feature%s or None, got %r" % (
                             (', "auto", "learn"' if allow_learn else ', "auto"')
                             if allow_auto else "", ls))
    if _is_auto(ls) and not allow_auto:
        raise ValueError('length_scale="auto" is for the regressors and the classifier; '
                         "give a number, an array, or None")
    if given_ls and gamma is not None:
        raise ValueError("give gamma or length_scale, not both (gamma=%r, length_scale=%r)"
                         % (gamma, ls))
    if given_ls:
        if isinstance(ls, numbers.Real):
            return float(ls), None, 0.0, False
        arr = np.ascontiguousarray(ls, dtype=np.float64)
        if arr.ndim != 1 or arr.shape[0] != d:
            raise ValueError("length_scale: an array must hold one length scale per input "
                             "feature (%d), got shape %s" % (d, arr.shape))
        return 0.0, arr, 0.0, False
    if gamma is not None:
        if isinstance(gamma, str):
            if gamma != "scale":
                raise ValueError("gamma must be a positive number or 'scale', got %r" % gamma)
            var = float(np.var(X)) if X is not None else 0.0
            return 0.0, None, (1.0 / (d * var) if var > 0 else 1.0), False
        if not isinstance(gamma, numbers.Real):
            raise TypeError("gamma must be a number or 'scale', got %r" % (gamma,))
        return 0.0, None, float(gamma), False
    if allow_auto and (ls is None or _is_auto(ls)):
        return 0.0, None, 0.0, True
    if kernel_enum(est.kernel) in (lib.RFX_KERNEL_GAUSSIAN, lib.RFX_KERNEL_LAPLACIAN):
        return 0.0, None, 1.0, False
    return 1.0, None, 0.0, False


def check_n_components(n):
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError("n_components must be an int, got %r" % (n,))
    if n < 1:
        raise ValueError("n_components must be >= 1, got %d" % n)
    return int(n)


def features_params(est, seed, scale, threads):
    """A filled rfx_features_params (a cdata pointer) for est, and the
    objects it points into (keep them alive while the struct is used)."""
    length_scale, length_scales, gamma, _ = scale
    p = ffi.new("rfx_features_params *", lib.rfx_features_params_default())
    p.kernel = kernel_enum(est.kernel)
    if not isinstance(est.nu, numbers.Real):
        raise TypeError("nu must be a number, got %r" % (est.nu,))
    p.nu = float(est.nu)
    p.form = form_enum(est.form)
    p.n_features = check_n_components(est.n_components)
    p.seed = seed
    p.length_scale = length_scale
    keep = [p]
    if length_scales is not None:
        keep.append(length_scales)
        p.length_scales = ffi.cast("const double *", length_scales.ctypes.data)
    p.gamma = gamma
    p.n_threads = threads
    p.activation = activation_enum(est.activation)
    p.weights = weights_enum(est.weights)
    q = est.sparsity
    if q is not None and (not isinstance(q, numbers.Integral) or isinstance(q, bool)):
        raise TypeError("sparsity must be an int or None, got %r" % (q,))
    if q is not None and q < 1:
        raise ValueError("sparsity must be >= 1 or None (all inputs), got %d" % q)
    p.sparsity = 0 if q is None else int(q)
    if not isinstance(est.weight_scale, numbers.Real):
        raise TypeError("weight_scale must be a number, got %r" % (est.weight_scale,))
    p.weight_scale = float(est.weight_scale)
    p.structure = structure_enum(getattr(est, "structure", "iid"))
    sampler = getattr(est, "spectral_sampler", None)
    if sampler is not None and p.kernel != lib.RFX_KERNEL_CUSTOM:
        raise ValueError("spectral_sampler is given with kernel=%r: set kernel='custom' to draw "
                         "the frequencies from it" % (est.kernel,))
    if p.kernel == lib.RFX_KERNEL_CUSTOM:
        if sampler is None:
            raise ValueError("kernel='custom' draws the frequencies from spectral_sampler, "
                             "a callable sampler(rng, d) -> d values; none is given"
                             + ("" if hasattr(est, "spectral_sampler") else
                                " (%s takes none)" % type(est).__name__))
        if not callable(sampler):
            raise TypeError("spectral_sampler must be callable, got %r" % (sampler,))
        sp = SpectralSampler(sampler)
        p.spectral = sp.callback
        keep.append(sp)
    return p, keep


class SpectralRng:
    """The random stream a spectral sampler draws frequency j from (the C
    library's rfx_rng): Philox4x64-10 keyed by (seed, j), so that a sampler
    that draws only from it gives the same frequencies for the same seed,
    whatever else changes. Valid only during the call to the sampler."""

    __slots__ = ("_rng",)

    def __init__(self):
        self._rng = ffi.NULL

    def _fill(self, fill, size):
        if size is None:
            out = np.empty(1)
            fill(self._rng, ffi.cast("double *", out.ctypes.data), 1)
            return float(out[0])
        shape = (size,) if isinstance(size, numbers.Integral) else tuple(size)
        out = np.empty(shape)
        fill(self._rng, ffi.cast("double *", out.ctypes.data), out.size)
        return out

    def uniform(self, size=None):
        """Uniforms in (0, 1), never 0 or 1: a float, or an array of shape size."""
        return self._fill(lib.rfx_rng_fill_uniform, size)

    def normal(self, size=None):
        """Standard normals: a float, or an array of shape size (the d normals
        of rfx's gaussian kernel are ``normal(d)``)."""
        return self._fill(lib.rfx_rng_fill_normal, size)

    def gamma(self, shape, size=None):
        """Gamma(shape, 1) draws, shape > 0."""
        if not (isinstance(shape, numbers.Real) and shape > 0 and np.isfinite(shape)):
            raise ValueError("gamma: shape must be > 0 and finite, got %r" % (shape,))
        if size is None:
            return float(lib.rfx_rng_gamma(self._rng, float(shape)))
        out = np.empty((size,) if isinstance(size, numbers.Integral) else tuple(size))
        flat = out.reshape(-1)
        for i in range(flat.size):
            flat[i] = lib.rfx_rng_gamma(self._rng, float(shape))
        return out

    def bits(self):
        """64 random bits, as a Python int (to seed another generator)."""
        return int(lib.rfx_rng_u64(self._rng))


class SpectralSampler:
    """The C sampler (rfx_spectral_fn) around a Python callable
    ``sampler(rng, d)`` that returns one frequency (d values, unit length
    scale) drawn from rng, a :class:`SpectralRng`. An exception in the
    callable stops the map's creation: the C call returns RFX_EINVAL
    (RFX_ECANCELLED for a KeyboardInterrupt) with the exception's text, and
    :meth:`reraise` raises the exception itself."""

    def __init__(self, sampler):
        self.sampler = sampler
        self.error = None
        self._rng = SpectralRng()
        self.callback = ffi.callback(
            "rfx_status(void *, rfx_rng *, size_t, size_t, double *)", self._call,
            error=lib.RFX_EINTERNAL)

    def _call(self, user, rng, j, d, w):
        self._rng._rng = rng
        try:
            v = np.ascontiguousarray(self.sampler(self._rng, int(d)), dtype=np.float64)
            if v.shape != (d,):
                raise ValueError("spectral_sampler(rng, %d) must return %d values (one "
                                 "frequency), got shape %s" % (d, d, v.shape))
            ffi.memmove(w, ffi.from_buffer(v), 8 * d)
            return lib.RFX_OK
        except BaseException as e:  # noqa: B902 - reported through the C status
            if self.error is None:
                self.error = e
            status = lib.RFX_ECANCELLED if isinstance(e, KeyboardInterrupt) else lib.RFX_EINVAL
            text = "%s: %s" % (type(e).__name__, e)
            return lib.rfx_set_error(status, text.encode("utf-8", "replace"))
        finally:
            self._rng._rng = ffi.NULL

    def reraise(self, err):
        """Raise the sampler's exception (from err, the C error) if it raised one."""
        if self.error is not None:
            e, self.error = self.error, None
            raise e from err


def create_features(p, keep, d):
    """rfx_features_create(p, d) -> an owned cdata pointer; a sampler's own
    exception (kept in keep) is raised as it is, from the C error."""
    out = ffi.new("rfx_features **")
    try:
        check(lib.rfx_features_create(p, d, out))
    except Exception as err:
        reraise_sampler_error(keep, err)
        raise
    return ffi.gc(out[0], lib.rfx_features_free)


def reraise_sampler_error(keep, err):
    """Raise the exception of a spectral sampler among keep (from
    features_params), if it raised one, from err, the C call's error."""
    for k in keep:
        if isinstance(k, SpectralSampler):
            k.reraise(err)


def features_info(fp, d):
    """The estimator parameters of the map a C rfx_features_params describes
    (for models read from files)."""
    return dict(kernel=c_string(lib.rfx_kernel_name(fp.kernel)), nu=float(fp.nu),
                form=python_option_name(c_string(lib.rfx_form_name(fp.form))),
                n_components=int(fp.n_features),
                random_state=int(fp.seed), gamma=None, length_scale=length_scale_of(fp, d),
                activation=c_string(lib.rfx_activation_name(fp.activation)),
                sparsity=int(fp.sparsity) or None,
                weights=c_string(lib.rfx_weights_name(fp.weights)),
                weight_scale=float(fp.weight_scale),
                structure=c_string(lib.rfx_structure_name(fp.structure)))


def params_state(fp, d):
    """Every field of an rfx_features_params as plain Python values (the
    length scales copied), to re-create the map bitwise after pickling."""
    state = {}
    for name, _ in ffi.typeof("rfx_features_params").fields:
        if name in ("spectral", "spectral_user"):
            continue  # a custom kernel's sampler is the estimator's spectral_sampler
        if name == "length_scales":
            ls = fp.length_scales
            state[name] = None if ls == ffi.NULL else np.frombuffer(
                ffi.buffer(ls, 8 * d), dtype=np.float64).copy()
        else:
            state[name] = getattr(fp, name)
    return state


def params_from_state(state):
    """An rfx_features_params pointer from params_state, and what it points into.
    A state pickled by rfx 0.2 has no structure_version: its SORF map was
    the first construction, which version 1 rebuilds."""
    p = ffi.new("rfx_features_params *", lib.rfx_features_params_default())
    keep = [p]
    if "structure_version" not in state and state.get("structure") == lib.RFX_STRUCTURE_SORF:
        p.structure_version = 1
    for name, value in state.items():
        if name == "length_scales":
            if value is not None:
                arr = np.ascontiguousarray(value, dtype=np.float64)
                keep.append(arr)
                p.length_scales = ffi.cast("const double *", arr.ctypes.data)
        else:
            setattr(p, name, value)
    return p, keep


def length_scale_of(fp, d):
    if fp.length_scales != ffi.NULL:
        return np.frombuffer(ffi.buffer(fp.length_scales, 8 * d), dtype=np.float64).copy()
    return float(fp.length_scale)


def keeps_state_on_error(fit):
    """Wrap a fit method so that an exception anywhere in it (invalid
    input, a C error, a cancelled fit, a KeyboardInterrupt) leaves the
    estimator's attributes exactly as they were before the call: unfitted
    if it was, else the previous fit, never half of a new one."""
    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        saved = dict(self.__dict__)
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise
    return wrapper


def check_count(v, name, minimum, allow_none=False):
    """An int >= minimum (or None when allowed), with the errors naming it."""
    if v is None and allow_none:
        return None
    if not isinstance(v, numbers.Integral) or isinstance(v, bool):
        raise TypeError("%s must be an int%s, got %r" % (name, " or None" if allow_none else "",
                                                          v))
    if v < minimum:
        raise ValueError("%s must be >= %d%s, got %d" % (name, minimum,
                                                         " or None" if allow_none else "", v))
    return int(v)
