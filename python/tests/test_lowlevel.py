# SPDX-License-Identifier: BSD-3-Clause
"""The boundary: declarations against the header, struct layouts, library
lookup, errors, array views, OpenBLAS threads, the GIL."""
import os
import re
import subprocess
import sys
import threading

import numpy as np
import pytest

import rfx
from rfx import _lib
from rfx._lib import as_rows, check, cmat, ffi, lib, mat


def _normalise(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = text.replace("RFX_API", " ")
    text = re.sub(r"\s+", " ", text)
    return re.sub(r"\s*([(){};,*=])\s*", r"\1", text).strip()


def _declarations(cdef):
    """Top-level declarations of a cdef: split at ';' outside braces; a
    #define line (an integer constant) is one declaration of its own."""
    out, depth, cur = [], 0, ""
    lines = cdef.splitlines(keepends=True)
    out += [line for line in lines if line.lstrip().startswith("#")]
    for ch in "".join(line for line in lines if not line.lstrip().startswith("#")):
        cur += ch
        depth += ch == "{"
        depth -= ch == "}"
        if ch == ";" and depth == 0:
            out.append(cur)
            cur = ""
    return [d for d in (x.strip() for x in out) if d]


def test_every_declaration_is_in_the_header(header_text):
    """The cdef is copied from rfx.h: each declaration must still be there
    word for word, or cffi would assume a stale struct layout or call."""
    header = _normalise(header_text)
    decls = _declarations(_lib.CDEF)
    assert len(decls) > 40
    missing = [d for d in decls if _normalise(d) not in header]
    assert not missing, "declarations no longer in rfx.h:\n" + "\n".join(missing)


def test_struct_layouts_round_trip_the_documented_defaults():
    """Structs returned by value come back with the defaults rfx.h documents
    (a wrong layout would scramble them)."""
    fp = lib.rfx_features_params_default()
    assert (fp.kernel, fp.nu, fp.form, fp.n_features, fp.seed) == (0, 1.5, 0, 1024, 0)
    assert (fp.length_scale, fp.length_scales, fp.gamma, fp.n_threads) == (1.0, ffi.NULL, 0, 0)
    p = lib.rfx_fit_params_default()
    assert p.method == lib.RFX_METHOD_BAYES and p.standardize == 1
    assert getattr(p, "lambda") == -1.0 and (p.noise_var, p.prior_var) == (0, 0)
    assert p.fit_intercept == 1 and p.select_rows == 4000 and p.progress == ffi.NULL
    assert p.features.n_features == 1024 and p.features.length_scale == 0.0
    assert rfx.library_version() == "%d.%d.%d" % tuple(int(v) for v in rfx.__version__.split("."))


def test_instruction_set_paths():
    """The path API: the active path is the CPU's best unless asked lower,
    names round-trip, an unknown one is refused, and features on each path
    the CPU has agree with the others to rounding."""
    paths = ["generic", "avx2", "avx512"]
    native = rfx.native_isa()
    assert native in paths
    start = rfx.isa()
    X = np.random.RandomState(3).uniform(-2, 2, size=(50, 6))
    t = rfx.RandomFourierFeatures(256, gamma=0.3, random_state=1).fit(X)
    Z = {}
    try:
        for name in paths:
            got = rfx.set_isa(name)
            assert got == paths[min(paths.index(name), paths.index(native))]
            assert rfx.isa() == got
            Z[got] = t.transform(X)
        with pytest.raises(ValueError, match="unknown instruction set 'sse9'"):
            rfx.set_isa("sse9")
    finally:
        rfx.set_isa(start)
    for name, z in Z.items():
        np.testing.assert_allclose(z, Z["generic"], rtol=0, atol=1e-13)
    env = dict(os.environ, RFX_ISA="sse9")
    r = subprocess.run([sys.executable, "-c", "import rfx"], env=env, capture_output=True,
                       text=True)
    assert r.returncode != 0 and "RFX_ISA: unknown instruction set 'sse9'" in r.stderr
    env = dict(os.environ, RFX_ISA="generic")
    r = subprocess.run([sys.executable, "-c", "import rfx; print(rfx.isa())"], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "generic", r.stderr


def test_errors_carry_the_c_message():
    with pytest.raises(ValueError, match=r"unknown kernel 'wavelet' \(expected gaussian"):
        rfx.RandomFourierFeatures(kernel="wavelet").fit(np.ones((3, 2)))
    with pytest.raises(ValueError, match="features.nu: Matern smoothness must be > 0"):
        rfx.RandomFourierFeatures(kernel="matern", nu=-1.0).fit(np.ones((3, 2)))
    with pytest.raises(ValueError, match="cos-sin form needs an even count, got 7"):
        rfx.RandomFourierFeatures(7, form="cos_sin").fit(np.ones((3, 2)))
    with pytest.raises(ValueError, match="features.gamma: defined for the gaussian and laplacian"):
        rfx.RFFRegressor(kernel="cauchy", gamma=1.0).fit(np.eye(3), [1, 2, 3])
    # a C-level shape error: the C message names the columns
    t = rfx.RandomFourierFeatures(8).fit(np.ones((2, 3)))
    X = np.ones((4, 2))
    Z = np.empty((4, 8))
    with pytest.raises(ValueError, match="transform: X has 2 columns, the features expect 3"):
        check(lib.rfx_features_transform(t._features, cmat(X), mat(Z)))
    # the estimators check the number of features first (scikit-learn's message)
    with pytest.raises(ValueError, match="X has 2 features, but RandomFourierFeatures is "
                                         "expecting 3 features"):
        t.transform(X)


def test_status_codes_map_to_exceptions():
    with pytest.raises(ValueError):
        check(lib.RFX_EFORMAT)
    with pytest.raises(MemoryError):
        check(lib.RFX_ENOMEM)
    with pytest.raises(OSError):
        check(lib.RFX_EIO)
    with pytest.raises(RuntimeError):
        check(lib.RFX_ENUMERIC)
    with pytest.raises(rfx.CancelledError):
        check(lib.RFX_ECANCELLED)


def test_model_file_errors(tmp_path):
    with pytest.raises(OSError, match="nope.rfx"):
        rfx.load_model(str(tmp_path / "nope.rfx"))
    X = np.random.RandomState(0).normal(size=(30, 2))
    reg = rfx.RFFRegressor(16, alpha=0.1, random_state=0).fit(X, X[:, 0])
    data = bytearray(reg.to_bytes())
    data[-3] ^= 0xFF  # payload damaged: the CRC catches it
    (tmp_path / "bad.rfx").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="bad.rfx"):
        rfx.load_model(str(tmp_path / "bad.rfx"))
    (tmp_path / "short.rfx").write_bytes(reg.to_bytes()[:20])
    with pytest.raises(ValueError):
        rfx.load_model(str(tmp_path / "short.rfx"))


def test_wrong_types_are_type_errors():
    X = np.ones((3, 2))
    with pytest.raises(TypeError, match="kernel must be a string"):
        rfx.RandomFourierFeatures(kernel=3).fit(X)
    with pytest.raises(TypeError, match="n_components must be an int"):
        rfx.RandomFourierFeatures(n_components=2.5).fit(X)
    with pytest.raises(TypeError, match="alpha must be a number"):
        rfx.RFFRegressor(alpha="big").fit(X, [1, 2, 3])
    with pytest.raises(TypeError, match="n_jobs"):
        rfx.RandomFourierFeatures(n_jobs=1.5).fit(X)
    with pytest.raises(ValueError, match="give gamma or length_scale, not both"):
        rfx.RandomFourierFeatures(gamma=1.0, length_scale=2.0).fit(X)
    with pytest.raises(ValueError, match="random_state"):
        rfx.RandomFourierFeatures(random_state=-1).fit(X)


def test_views_are_zero_copy_for_row_major_float64():
    a = np.arange(60.0).reshape(6, 10)
    assert as_rows(a) is a
    rows = a[:, 2:7]  # rows of a larger C array: a stride, no copy
    assert as_rows(rows) is rows and cmat(rows).stride == 10
    assert as_rows(a[::2]) is not None and cmat(as_rows(a[::2])).stride == 20
    f = np.asfortranarray(a)
    assert as_rows(f) is not f and as_rows(f).flags.c_contiguous
    assert as_rows(a.astype(np.float32)).dtype == np.float64
    assert as_rows(a[:, ::-1]).flags.c_contiguous  # negative strides are copied
    x32 = a.astype(np.float32)
    assert as_rows(x32, np.float32) is x32


def test_library_lookup_names_where_it_looked(tmp_path):
    env = dict(os.environ, RFX_LIBRARY=str(tmp_path / "librfx.so"))
    r = subprocess.run([sys.executable, "-c", "import rfx"], env=env, capture_output=True,
                       text=True)
    assert r.returncode != 0
    assert "ImportError: rfx: cannot load the C library librfx.so" in r.stderr
    assert str(tmp_path / "librfx.so") in r.stderr and "RFX_LIBRARY" in r.stderr


def test_results_are_bitwise_independent_of_threads():
    X = np.random.RandomState(0).normal(size=(3000, 6))
    y = np.sin(X).sum(axis=1)
    out = []
    for n_jobs in (1, 2):
        t = rfx.RandomFourierFeatures(300, gamma=0.2, random_state=1, n_jobs=n_jobs).fit(X)
        r = rfx.RFFRegressor(300, gamma=0.2, alpha=1e-4, standardize=False, random_state=1,
                             n_jobs=n_jobs).fit(X, y)
        g = rfx.BayesianRFFRegressor(200, random_state=1, n_jobs=n_jobs).fit(X[:500], y[:500])
        out.append((t.transform(X), r.predict(X), r.coef_, g.predict(X, return_std=True)[1]))
    for a, b in zip(*out):
        assert np.array_equal(a, b)


def test_openblas_threads_are_restored():
    guard = _lib.serial_blas
    if not guard.active:
        pytest.skip("librfx's OpenBLAS is not the pthreads build: nothing to guard")
    before = guard._get()
    X = np.random.RandomState(0).normal(size=(200, 3))
    rfx.RFFRegressor(64, alpha=0.1, random_state=0).fit(X, X[:, 0])
    assert guard._get() == before
    with guard:
        assert guard._get() == 1
        with guard:
            assert guard._get() == 1
        assert guard._get() == 1
    assert guard._get() == before


def test_the_gil_is_released_during_c_calls():
    """While a transform runs in another thread, this thread keeps running.
    It spins without sleeping between the worker's "entering" and "left"
    marks. With the switch interval at 0.1 ms, a transform that held the
    GIL would leave this loop only the few intervals around the call
    (thousands of steps); one that lets go of it leaves it the whole call
    (40000 x 1024 features on one thread: millions of steps). No clock is
    read."""
    X = np.random.RandomState(0).normal(size=(40000, 20))
    t = rfx.RandomFourierFeatures(1024, random_state=0, n_jobs=1).fit(X)
    entering, left = threading.Event(), threading.Event()

    def work():
        entering.set()
        t.transform(X)
        left.set()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    try:
        th = threading.Thread(target=work)
        th.start()
        entering.wait()
        steps = 0
        while not left.is_set():
            steps += 1
        th.join()
    finally:
        sys.setswitchinterval(interval)
    assert steps > 100000, steps


def test_concurrent_calls_from_threads_agree():
    X = np.random.RandomState(0).normal(size=(2000, 5))
    y = np.sin(X).sum(axis=1)
    reg = rfx.RFFRegressor(128, gamma=0.3, alpha=1e-3, standardize=False, random_state=0)
    ref = reg.fit(X, y).predict(X)
    results, errors = [], []

    def work(i):
        try:
            if i % 2:
                results.append(reg.predict(X))
            else:
                results.append(rfx.RFFRegressor(128, gamma=0.3, alpha=1e-3, standardize=False,
                                                random_state=0).fit(X, y).predict(X))
            with pytest.raises(ValueError, match="unknown kernel"):
                rfx.RandomFourierFeatures(kernel="k%d" % i).fit(X)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert all(np.array_equal(r, ref) for r in results)


def test_outputs_are_aligned_for_vector_stores():
    """empty_rows: 64-byte aligned data, 2 MiB aligned from 4 MiB on (as
    the C benchmark's buffers), C-contiguous, writable, the right shape."""
    for rows, cols, dtype, align in ((3, 5, np.float64, 64), (1000, 7, np.float32, 64),
                                     (1024, 1024, np.float32, 1 << 21),
                                     (600, 1000, np.float64, 1 << 21), (0, 4, np.float64, 1)):
        Z = _lib.empty_rows(rows, cols, dtype)
        assert Z.shape == (rows, cols) and Z.dtype == dtype
        assert Z.flags.c_contiguous and Z.flags.writeable
        assert Z.ctypes.data % align == 0
        Z[...] = 1.5  # the whole view is usable
        assert _lib.as_rows(Z, dtype) is Z
    X = np.random.RandomState(0).normal(size=(50, 4))
    t = rfx.RandomFourierFeatures(96, random_state=0).fit(X)
    for x in (X, X.astype(np.float32)):
        Z = t.transform(x)
        assert Z.ctypes.data % 64 == 0 and Z.flags.c_contiguous
    # the same numbers as into numpy's own array
    Z = np.empty((50, 96))
    check(lib.rfx_features_transform(t._features, cmat(X), mat(Z)))
    assert np.array_equal(t.transform(X), Z)


def test_an_exception_on_entry_of_the_progress_trampoline_stops_the_call():
    """A KeyboardInterrupt can arrive before the trampoline's body runs;
    cffi then calls _progress_error, which finds the call's _Progress
    through the trampoline's frame (its local 'user') and asks to stop."""
    tracker = _lib._Progress("X", 0)
    handle = ffi.new_handle(tracker)

    def entry(user):
        raise KeyboardInterrupt

    try:
        entry(handle)
    except KeyboardInterrupt as e:
        assert _lib._progress_error(type(e), e, e.__traceback__) == 1
        caught = e
    assert tracker.exc is caught
    with pytest.raises(KeyboardInterrupt):
        tracker.finish(lib.RFX_ECANCELLED)
    # a report after a stop is refused at once
    tracker.exc = ValueError("x")
    assert tracker.report("fit", 0.5) == 1
    with pytest.raises(rfx.CancelledError, match=r"\(the progress callback raised ValueError: "
                                                 r"x\)") as info:
        tracker.finish(lib.RFX_ECANCELLED)
    assert isinstance(info.value.__cause__, ValueError)
    # unknown fractions (negative in C) arrive as None
    seen = []
    with rfx.progress_callback(lambda s, f: seen.append((s, f))):
        t = _lib._Progress("X", 0)
    assert t.report("accumulate", -1.0) == 0 and t.report("fit", 1.5) == 0
    assert seen == [("accumulate", None), ("fit", 1.0)]


def test_progress_calls_are_skipped_off_the_main_thread_when_nobody_listens():
    out = []

    def work():
        out.append(_lib._Progress("X", 0).wanted())
        with rfx.progress_callback(lambda s, f: None):
            out.append(_lib._Progress("X", 0).wanted())
        out.append(_lib._Progress("X", 1).wanted())

    th = threading.Thread(target=work)
    th.start()
    th.join()
    assert out == [False, True, True]
    assert _lib._Progress("X", 0).wanted()  # the main thread: for Ctrl-C


def test_the_package_imports_form_no_cycle():
    """The modules of python/rfx import each other only at module level and
    without a cycle (the estimator modules sit on _lib, _common and _model;
    _load's table sits above them)."""
    import ast
    pkg = os.path.dirname(rfx.__file__)
    edges = {}
    for name in sorted(os.listdir(pkg)):
        if not name.endswith(".py"):
            continue
        mod = name[:-3]
        with open(os.path.join(pkg, name)) as f:
            tree = ast.parse(f.read())
        inner = set()  # nodes inside a function or class body
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                inner.update(id(n) for n in ast.walk(node) if n is not node)
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                names = [node.module] if node.module else [a.name for a in node.names]
                assert id(node) not in inner, "%s imports .%s inside a function" % (mod, names)
                deps.update(names)
        edges[mod] = deps
    state = {}

    def visit(m, path):
        if state.get(m) == "done":
            return
        assert state.get(m) != "open", "import cycle: " + " -> ".join(path + [m])
        state[m] = "open"
        for n in sorted(edges.get(m, ())):
            visit(n, path + [m])
        state[m] = "done"

    for m in sorted(edges):
        visit(m, [])
