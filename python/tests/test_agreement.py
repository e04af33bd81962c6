# SPDX-License-Identifier: BSD-3-Clause
"""The package against independent computations of the same numbers: the C
API in a C program, the rfx command line, numpy formulas, and scikit-learn
peers (RBFSampler, Ridge, RidgeClassifier, BayesianRidge, rbf_kernel)."""
import os
import subprocess

import numpy as np
import pytest
from sklearn.kernel_approximation import RBFSampler
from sklearn.linear_model import BayesianRidge, Ridge, RidgeClassifier
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel

import rfx
from conftest import make_data

HERE = os.path.dirname(os.path.abspath(__file__))


# ---------------------------------------------------------------------------
# features: bitwise against the C API, and against the formula
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def features_ref(c_compiler, tmp_path_factory):
    """The C reference program, linked against the library under test."""
    cc, include = c_compiler
    d = tmp_path_factory.mktemp("cref")
    libdir = str(d)
    os.symlink(os.path.realpath(rfx.library_path), os.path.join(libdir, "librfx.so.0"))
    os.symlink(os.path.realpath(rfx.library_path), os.path.join(libdir, "librfx.so"))
    exe = str(d / "features_ref")
    subprocess.run([cc, "-std=c11", "-O1", "-I", include, os.path.join(HERE, "features_ref.c"),
                    "-o", exe, "-L", libdir, "-Wl,-rpath," + libdir, "-lrfx", "-lm"],
                   check=True)
    return exe, d


@pytest.mark.parametrize("kernel,form,dtype", [
    ("gaussian", "cos_bias", np.float64), ("matern", "cos_sin", np.float64),
    ("laplacian", "cos_bias", np.float32), ("cauchy", "cos_sin", np.float32)])
def test_features_bitwise_equal_to_c_api(features_ref, kernel, form, dtype):
    exe, d = features_ref
    n, dim, D, seed, ls = 301, 5, 130, 12345, 0.7
    X = np.random.RandomState(1).normal(size=(n, dim)).astype(dtype)
    X.tofile(str(d / "x.bin"))
    mode = "f32" if dtype == np.float32 else "f64"
    subprocess.run([exe, mode, str(d / "x.bin"), str(d / "z.bin"), str(n), str(dim), str(D),
                    str(seed), kernel, form.replace("_", "-"), repr(ls)], check=True)
    Zc = np.fromfile(str(d / "z.bin"), dtype=dtype).reshape(n, D)
    t = rfx.RandomFourierFeatures(D, kernel=kernel, form=form, length_scale=ls,
                                  random_state=seed).fit(X)
    Z = t.transform(X)
    assert Z.dtype == dtype
    assert np.array_equal(Z, Zc)  # bit for bit
    # also through a row-strided view (no copy) and a Fortran-ordered copy
    wide = np.zeros((n, dim + 3), dtype=dtype)
    wide[:, 1:dim + 1] = X
    assert np.array_equal(t.transform(wide[:, 1:dim + 1]), Zc)
    assert np.array_equal(t.transform(np.asfortranarray(X)), Zc)


def test_features_match_the_formula():
    X, _ = make_data(200, 4)
    for form in ("cos_bias", "cos_sin"):
        t = rfx.RandomFourierFeatures(256, gamma=0.3, form=form, random_state=7).fit(X)
        P = X @ t.random_weights_ + t.random_offset_
        if form == "cos_bias":
            ref = np.sqrt(2.0 / 256) * np.cos(P)
        else:
            ref = np.sqrt(2.0 / 256) * np.hstack([np.cos(P), np.sin(P)])
        assert np.abs(t.transform(X) - ref).max() < 1e-13


def test_gamma_means_what_it_means_in_sklearn():
    X, _ = make_data(40, 3)
    g = rfx.RandomFourierFeatures(gamma=0.3).fit(X).exact_kernel(X)
    assert np.abs(g - rbf_kernel(X, gamma=0.3)).max() < 1e-12
    la = rfx.RandomFourierFeatures(kernel="laplacian", gamma=0.3).fit(X).exact_kernel(X)
    assert np.abs(la - laplacian_kernel(X, gamma=0.3)).max() < 1e-12
    # RBFSampler's "scale"
    t = rfx.RandomFourierFeatures(gamma="scale").fit(X)
    g = 1.0 / (X.shape[1] * X.var())
    assert np.abs(t.exact_kernel(X) - rbf_kernel(X, gamma=g)).max() < 1e-12


def test_kernel_approximation_as_good_as_rbfsampler():
    """Z Z^T against the exact rbf_kernel at D = 1000: the entry-wise RMS
    error within the Monte Carlo bound sqrt(1.5 / D) of the cos-bias form,
    the largest error (over 90,000 entries) as RBFSampler's, and the
    cos-sin form better still."""
    X = np.random.RandomState(0).uniform(-1, 1, size=(300, 5))
    K = rbf_kernel(X, gamma=0.5)
    worst, rms, sk, cs = [], [], [], []
    for seed in range(5):
        Z = rfx.RandomFourierFeatures(1000, gamma=0.5, random_state=seed).fit_transform(X)
        worst.append(np.abs(Z @ Z.T - K).max())
        rms.append(np.sqrt(np.mean((Z @ Z.T - K) ** 2)))
        S = RBFSampler(gamma=0.5, n_components=1000, random_state=seed).fit_transform(X)
        sk.append(np.abs(S @ S.T - K).max())
        C = rfx.RandomFourierFeatures(1000, gamma=0.5, form="cos_sin",
                                      random_state=seed).fit_transform(X)
        cs.append(np.sqrt(np.mean((C @ C.T - K) ** 2)))
    assert np.mean(rms) < np.sqrt(1.5 / 1000)
    assert np.mean(worst) < 0.15 and np.mean(worst) < 1.25 * np.mean(sk)
    assert np.mean(cs) < np.mean(rms)


# ---------------------------------------------------------------------------
# models: bitwise against the command line
# ---------------------------------------------------------------------------

def _cli(cli, *args):
    r = subprocess.run([cli] + [str(a) for a in args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r


@pytest.fixture(scope="module")
def data_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    X, y = make_data(300, 3, seed=4)
    np.save(str(d / "train.npy"), np.column_stack([X, y]))
    Xt, _ = make_data(50, 3, seed=5)
    np.save(str(d / "test.npy"), Xt)
    return d, X, y, Xt


def test_ridge_agrees_with_the_cli(cli, data_files):
    d, X, y, Xt = data_files
    m = d / "ridge.rfx"
    _cli(cli, "fit", d / "train.npy", "--method", "ridge", "--lambda", "1e-3", "-D", 64,
         "--seed", 5, "--length-scale", 0.7, "--no-standardize", "-o", m)
    _cli(cli, "predict", m, d / "test.npy", "-o", d / "p.npy")
    p_cli = np.load(str(d / "p.npy")).ravel()
    reg = rfx.RFFRegressor(64, length_scale=0.7, alpha=1e-3, standardize=False,
                           random_state=5).fit(X, y)
    assert np.abs(reg.predict(Xt) - p_cli).max() <= 1e-12
    assert np.array_equal(reg.predict(Xt), p_cli)  # the same C path: the same bits
    loaded = rfx.load_model(str(m))
    assert isinstance(loaded, rfx.RFFRegressor)
    assert np.array_equal(loaded.predict(Xt), p_cli)
    assert loaded.get_params()["n_components"] == 64
    assert loaded.get_params()["random_state"] == 5 and loaded.alpha_ == 1e-3
    assert loaded.n_features_in_ == 3 and loaded.length_scale_ == 0.7
    assert np.array_equal(loaded.coef_, reg.coef_)


def test_automatic_bayes_agrees_with_the_cli(cli, data_files):
    """`rfx fit` with no options and BayesianRFFRegressor() with the same
    seed and D: standardised inputs, length scale and variances chosen."""
    d, X, y, Xt = data_files
    m = d / "bayes.rfx"
    _cli(cli, "fit", d / "train.npy", "-D", 128, "--seed", 3, "-o", m)
    _cli(cli, "predict", m, d / "test.npy", "--std", "-o", d / "p.npy")
    p_cli = np.load(str(d / "p.npy"))
    gp = rfx.BayesianRFFRegressor(128, random_state=3).fit(X, y)
    mean, std = gp.predict(Xt, return_std=True)
    assert np.array_equal(mean, p_cli[:, 0]) and np.array_equal(std, p_cli[:, 1])
    loaded = rfx.load_model(str(m))
    assert isinstance(loaded, rfx.BayesianRFFRegressor)
    assert loaded.length_scale_ == gp.length_scale_ and loaded.noise_var_ == gp.noise_var_
    m2, s2 = loaded.predict(Xt, return_std=True)
    assert np.array_equal(m2, mean) and np.array_equal(s2, std)


def test_automatic_pce_is_the_clis(cli, tmp_path):
    """PCERegressor(degree="auto", degree_min=1) with marginals from the data
    and `rfx fit --method pce` with no basis options: the library makes the
    one choice of basis and marginals for both, so the model files agree
    byte for byte (d = 4: the pairwise basis of degree 10 is tried beside the
    total degree 10)."""
    rng = np.random.RandomState(6)
    X = rng.uniform(-1, 2, size=(200, 4))
    y = np.sin(2 * X[:, 0]) * X[:, 1] + 0.5 * X[:, 2] ** 3 + 0.1 * X[:, 3]
    np.save(str(tmp_path / "train.npy"), np.column_stack([X, y]))
    m = tmp_path / "pce.rfx"
    _cli(cli, "fit", tmp_path / "train.npy", "--method", "pce", "-o", m)
    reg = rfx.PCERegressor(degree="auto", degree_min=1).fit(X, y)
    assert reg.to_bytes() == m.read_bytes()
    assert reg.marginals_ == [("uniform", X[:, j].min(), X[:, j].max()) for j in range(4)]
    with pytest.raises(ValueError, match="degree must be an int >= 1 or 'auto'"):
        rfx.PCERegressor(degree="many").fit(X, y)


def test_python_models_are_read_by_the_cli(cli, data_files):
    d, X, y, Xt = data_files
    reg = rfx.RFFRegressor(96, kernel="matern", nu=2.5, form="cos_sin", random_state=1).fit(X, y)
    reg.save(str(d / "py.rfx"))
    _cli(cli, "predict", d / "py.rfx", d / "test.npy", "-o", d / "p.npy")
    assert np.array_equal(np.load(str(d / "p.npy")).ravel(), reg.predict(Xt))
    info = _cli(cli, "info", d / "py.rfx").stdout
    assert "matern" in info and "cos-sin" in info


def test_frequencies_depend_only_on_the_seed(data_files):
    """The map inside a fitted model is the transformer's map (same seed,
    kernel, length scale): the same bits."""
    _, X, y, _ = data_files
    reg = rfx.RFFRegressor(64, length_scale=0.7, alpha=1e-3, standardize=False,
                           random_state=5).fit(X, y)
    t = rfx.RandomFourierFeatures(64, length_scale=0.7, random_state=5).fit(X)
    Z = t.transform(X)
    ridge = Ridge(alpha=1e-3).fit(Z, y)  # scikit-learn's ridge on rfx's features
    assert np.abs(ridge.coef_ - reg.coef_).max() < 1e-6 * np.abs(ridge.coef_).max()
    assert np.abs(ridge.predict(Z) - reg.predict(X)).max() < 1e-9


# ---------------------------------------------------------------------------
# models: against scikit-learn on the same features
# ---------------------------------------------------------------------------

def test_multi_output_ridge_is_one_ridge_per_column():
    X, y = make_data(120, 3)
    Y = np.column_stack([y, -2 * y + 1, np.cos(X[:, 2])])
    kw = dict(n_components=100, gamma=0.2, alpha=1e-2, standardize=False, random_state=0)
    P = rfx.RFFRegressor(**kw).fit(X, Y).predict(X)
    assert P.shape == (120, 3)
    for k in range(3):
        p = rfx.RFFRegressor(**kw).fit(X, Y[:, k]).predict(X)
        assert np.abs(P[:, k] - p).max() < 1e-10
    coef = rfx.RFFRegressor(**kw).fit(X, Y).coef_
    assert coef.shape == (3, 100)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_is_ridge_classifier_on_the_features(n_classes):
    rs = np.random.RandomState(0)
    X = rs.normal(size=(150, 2))
    y = np.digitize(X[:, 0] * X[:, 1], [-0.3, 0.3])[:] % n_classes
    labels = np.array(["a", "b", "c"])[y]
    kw = dict(n_components=80, gamma=0.5, random_state=2)
    clf = rfx.RFFClassifier(alpha=0.1, loss="least_squares", standardize=False,
                            **kw).fit(X, labels)
    Z = rfx.RandomFourierFeatures(**kw).fit_transform(X)
    peer = RidgeClassifier(alpha=0.1).fit(Z, labels)
    assert list(clf.classes_) == list(peer.classes_)
    assert np.abs(clf.decision_function(X) - peer.decision_function(Z)).max() < 1e-9
    assert np.array_equal(clf.predict(X), peer.predict(Z))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_logistic_and_svm_classifiers_equal_scikit_learn_on_the_features(n_classes):
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC
    rs = np.random.RandomState(1)
    X = rs.normal(size=(200, 2))
    y = np.digitize(X[:, 0] * X[:, 1], [-0.3, 0.3]) % n_classes
    labels = np.array(["a", "b", "c"])[y]
    kw = dict(n_components=60, gamma=0.5, random_state=4)
    Z = rfx.RandomFourierFeatures(**kw).fit_transform(X)
    n, alpha = len(X), 0.01
    multi = ["ovr", "softmax"] if n_classes > 2 else ["ovr"]
    for mc in multi:
        clf = rfx.RFFClassifier(alpha=alpha, loss="logistic", multi_class=mc, standardize=False,
                                tol=1e-12, **kw).fit(X, labels)
        # Newton solvers: scikit-learn's lbfgs stops 1e-5 short here
        peer = LogisticRegression(C=1 / (n * alpha), tol=1e-10, max_iter=1000,
                                  multi_class="multinomial" if mc == "softmax" else "ovr",
                                  solver="newton-cg" if mc == "softmax" else "newton-cholesky"
                                  ).fit(Z, labels)
        assert list(clf.classes_) == list(peer.classes_)
        if mc == "softmax":  # the softmax scores are defined up to a common shift
            P, R = clf.predict_proba(X), peer.predict_proba(Z)
            assert np.abs(P - R).max() < 1e-6
        else:
            assert np.abs(clf.coef_ - peer.coef_).max() < 1e-6
            assert np.abs(clf.predict_proba(X) - peer.predict_proba(Z)).max() < 1e-6
        assert np.array_equal(clf.predict(X), peer.predict(Z))
    # LinearSVC penalises its intercept: compare without one
    for loss in ("squared_hinge", "hinge"):
        svm = rfx.RFFClassifier(alpha=alpha, loss=loss, standardize=False, tol=1e-12,
                                fit_intercept=False, **kw).fit(X, labels)
        peer = LinearSVC(C=1 / (n * alpha), loss=loss, tol=1e-12, max_iter=1000000,
                         fit_intercept=False, random_state=0).fit(Z, labels)
        ys = np.where(labels == svm.classes_[1], 1.0, -1.0)

        def objective(w):
            h = np.maximum(0.0, 1.0 - ys * (Z @ w))
            return np.mean(h ** 2 if loss == "squared_hinge" else h) + alpha / 2 * w @ w

        j, jp = objective(svm.coef_[0]), objective(peer.coef_[0])
        # rfx's optimum is at least as good; liblinear may stop short (it
        # warns about convergence on the hinge loss here)
        assert j <= jp * (1 + 1e-9) and jp - j <= 1e-4 * j
    with pytest.raises(AttributeError):
        svm.predict_proba(X)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_bayes_with_given_variances_is_the_closed_form(fit_intercept):
    """Posterior mean and predictive std against numpy: with an intercept,
    the features gain a column of ones with a flat prior (precision 0)."""
    X, y = make_data(100, 2)
    y = y + 3.0
    s2, p2 = 0.05, 2.0
    gp = rfx.BayesianRFFRegressor(60, gamma=0.5, noise_var=s2, prior_var=p2,
                                  fit_intercept=fit_intercept, standardize=False,
                                  random_state=0).fit(X, y)
    Z = rfx.RandomFourierFeatures(60, gamma=0.5, random_state=0).fit_transform(X)
    prior_prec = np.full(60, 1 / p2)
    if fit_intercept:
        Z = np.column_stack([Z, np.ones(len(Z))])
        prior_prec = np.append(prior_prec, 0.0)
    A = Z.T @ Z / s2 + np.diag(prior_prec)
    w = np.linalg.solve(A, Z.T @ y / s2)
    var = np.einsum("ij,ji->i", Z, np.linalg.solve(A, Z.T))
    mean, std = gp.predict(X, return_std=True)
    assert np.abs(mean - Z @ w).max() < 1e-9
    assert np.abs(std - np.sqrt(var + s2)).max() < 1e-9
    _, fstd = gp.predict(X, return_std=True, latent=True)
    assert np.abs(fstd - np.sqrt(var)).max() < 1e-9


def test_bayes_evidence_agrees_with_bayesian_ridge():
    """Variances fitted by the evidence, as BayesianRidge (no hyperpriors)
    fits them on the same features. Without an intercept: with one,
    BayesianRidge counts n degrees of freedom where the flat intercept
    prior leaves n - 1, and its std ignores the centring."""
    X, y = make_data(200, 2, noise=0.2)
    gp = rfx.BayesianRFFRegressor(50, gamma=0.5, standardize=False, fit_intercept=False,
                                  random_state=0).fit(X, y)
    Z = rfx.RandomFourierFeatures(50, gamma=0.5, random_state=0).fit_transform(X)
    br = BayesianRidge(n_iter=3000, tol=1e-12, alpha_1=0, alpha_2=0, lambda_1=0,
                       lambda_2=0, fit_intercept=False).fit(Z, y)
    assert abs(gp.noise_var_ * br.alpha_ - 1) < 1e-6
    assert abs(gp.prior_var_ * br.lambda_ - 1) < 1e-6
    m1, s1 = gp.predict(X, return_std=True)
    m2, s2 = br.predict(Z, return_std=True)
    assert np.abs(m1 - m2).max() < 1e-7 and np.abs(s1 - s2).max() < 1e-7


def test_classifier_files_load_as_classifiers(tmp_path):
    rs = np.random.RandomState(3)
    X = rs.normal(size=(120, 3))
    y = np.array(["x", "y", "z"])[np.digitize(X[:, 0], [-0.4, 0.4])]
    clf = rfx.RFFClassifier(64, loss="logistic", multi_class="softmax", alpha=1e-3,
                            random_state=0).fit(X, y)
    path = str(tmp_path / "c.rfx")
    clf.save(path)
    again = rfx.load_model(path)
    assert isinstance(again, rfx.RFFClassifier)
    assert list(again.classes_) == [0.0, 1.0, 2.0]  # the C model's class numbers
    assert np.array_equal(clf.classes_[again.predict(X).astype(int)], clf.predict(X))
    assert np.array_equal(again.predict_proba(X), clf.predict_proba(X))
    assert again.multi_class == "softmax" and again.alpha == clf.alpha_
