# SPDX-License-Identifier: BSD-3-Clause
"""BayesianLinearRegression against scikit-learn's BayesianRidge (the same
evidence fixed point with its hyper-priors at zero), against the closed
form of the posterior mean with a general prior, the intercept, weights,
pickling, and bad input."""
import inspect
import pickle

import numpy as np
import pytest
from sklearn.linear_model import BayesianRidge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures

import rfx


def _data(n=60, seed=0, noise=0.1):
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1, 1, size=(n, 1))
    y = np.sin(3 * x[:, 0]) + 0.5 * x[:, 0] ** 2 + noise * rng.normal(size=n)
    return x, y


def _bayesian_ridge(**kw):
    """BayesianRidge with no hyper-prior and a tight fixed point (its
    iteration count is n_iter before scikit-learn 1.3, max_iter after)."""
    it = "max_iter" if "max_iter" in inspect.signature(BayesianRidge).parameters else "n_iter"
    kw.setdefault(it, 100000)
    return BayesianRidge(alpha_1=0, alpha_2=0, lambda_1=0, lambda_2=0, tol=1e-14, **kw)


@pytest.mark.parametrize("n", [60, 8])
def test_matches_bayesian_ridge(n):
    """On a polynomial basis with a ones column and no separate intercept
    (BayesianRidge counts n degrees of freedom, as rfx does without one):
    the same variances, weights and predictive mean for n > N and n < N,
    and the same std for n > N."""
    x, y = _data(n)
    P = PolynomialFeatures(9).fit_transform(x)  # 10 columns, the first ones
    ours = rfx.BayesianLinearRegression(fit_intercept=False, tol=1e-14, max_iter=100000).fit(P, y)
    ref = _bayesian_ridge(fit_intercept=False).fit(P, y)
    assert ours.alpha_ == pytest.approx(ref.alpha_, rel=1e-6)
    assert ours.lambda_ == pytest.approx(ref.lambda_, rel=1e-6)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-6, atol=1e-8 * np.abs(ref.coef_).max())
    xt = np.linspace(-1.2, 1.2, 13)[:, None]
    Pt = PolynomialFeatures(9).fit_transform(xt)
    m1, s1 = ours.predict(Pt, return_std=True)
    m2, s2 = ref.predict(Pt, return_std=True)
    np.testing.assert_allclose(m1, m2, rtol=1e-6, atol=1e-8)
    if n > P.shape[1]:
        np.testing.assert_allclose(s1, s2, rtol=1e-6)
    else:
        # BayesianRidge's covariance for n < N keeps only the row space of P
        # (its thin SVD), so it omits the prior variance of the weights that
        # the data leave undetermined; the closed form keeps it
        A = ours.alpha_ * P.T @ P + ours.lambda_ * np.eye(P.shape[1])
        var = np.einsum("ij,ij->i", Pt @ np.linalg.inv(A), Pt) + 1.0 / ours.alpha_
        np.testing.assert_allclose(s1 ** 2, var, rtol=1e-8)
        assert np.all(s1 >= s2 * (1 - 1e-9))


def test_general_prior_closed_form():
    """Fixed variances: the posterior mean solves (P^T P + s2n / s2p S^-1) w
    = P^T y, and the latent variance is p^T (P^T P / s2n + S^-1 / s2p)^-1 p."""
    x, y = _data(50, seed=3)
    P = PolynomialFeatures(6).fit_transform(x)
    N = P.shape[1]
    S = np.exp(-np.abs(np.subtract.outer(np.arange(N), np.arange(N))) / 2.0) + 0.3 * np.eye(N)
    s2n, s2p = 0.02, 1.5
    m = rfx.BayesianLinearRegression(noise_var=s2n, prior_var=s2p, prior_cov=S,
                                     fit_intercept=False).fit(P, y)
    Si = np.linalg.inv(S)
    A = P.T @ P / s2n + Si / s2p
    w = np.linalg.solve(A, P.T @ y / s2n)
    np.testing.assert_allclose(m.coef_, w, rtol=1e-9, atol=1e-11)
    Pt = PolynomialFeatures(6).fit_transform(np.linspace(-1.5, 1.5, 9)[:, None])
    mean, std = m.predict(Pt, return_std=True, latent=True)
    var = np.einsum("ij,ij->i", Pt @ np.linalg.inv(A), Pt)
    np.testing.assert_allclose(mean, Pt @ w, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(std ** 2, var, rtol=1e-8)
    assert m.noise_var_ == s2n and m.prior_var_ == s2p


def test_pipeline_intercept_and_weights():
    """In a pipeline on raw x, the noise is recovered; integer weights at
    fixed variances are repeated rows; a weight of 0 is a row left out."""
    x, y = _data(80, seed=5, noise=0.05)
    m = make_pipeline(PolynomialFeatures(7, include_bias=False),
                      rfx.BayesianLinearRegression()).fit(x + 2.0, y + 10.0)
    assert np.sqrt(m[-1].noise_var_) == pytest.approx(0.05, rel=0.3)
    assert m.score(x + 2.0, y + 10.0) > 0.99
    P = PolynomialFeatures(5, include_bias=False).fit_transform(x)
    w = np.arange(80) % 3 + 1.0
    a = rfx.BayesianLinearRegression(noise_var=0.1, prior_var=2.0).fit(P, y, sample_weight=w)
    rep = np.repeat(np.arange(80), w.astype(int))
    b = rfx.BayesianLinearRegression(noise_var=0.1, prior_var=2.0).fit(P[rep], y[rep])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9)
    np.testing.assert_allclose(a.predict(P, return_std=True), b.predict(P, return_std=True),
                               rtol=1e-9)
    w0 = np.where(np.arange(80) % 5 == 0, 0.0, 1.0)
    c = rfx.BayesianLinearRegression().fit(P, y, sample_weight=w0)
    d = rfx.BayesianLinearRegression().fit(P[w0 > 0], y[w0 > 0])
    np.testing.assert_allclose(c.coef_, d.coef_, rtol=1e-8)
    assert c.log_evidence_ == pytest.approx(d.log_evidence_, rel=1e-10)


def test_pickle_and_errors():
    x, y = _data(30)
    P = PolynomialFeatures(4).fit_transform(x)
    m = rfx.BayesianLinearRegression().fit(P, y)
    back = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(back.predict(P, return_std=True), m.predict(P, return_std=True))
    with pytest.raises(ValueError, match="not positive definite"):
        rfx.BayesianLinearRegression(prior_cov=-np.eye(5)).fit(P, y)
    with pytest.raises(ValueError, match="prior_cov must be 5 x 5"):
        rfx.BayesianLinearRegression(prior_cov=np.eye(4)).fit(P, y)
    with pytest.raises(ValueError, match="noise_var"):
        rfx.BayesianLinearRegression(noise_var=-1.0).fit(P, y)
    with pytest.raises(ValueError):
        m.predict(P[:, :4])


def test_command_line_blr_equals_the_estimator(cli, tmp_path):
    """rfx blr --basis poly:3 fits the monomials in PolynomialFeatures'
    order: its variances, weights, predictive mean and std equal
    BayesianLinearRegression's on that basis, and each weight's std is the
    square root of the diagonal of the posterior covariance (closed form:
    (beta Phic^T Phic + alpha I)^-1 on the centred design)."""
    import json
    import subprocess
    rng = np.random.RandomState(7)
    X = rng.uniform(-1, 1, size=(70, 2))
    y = 1 + 2 * X[:, 0] - X[:, 1] ** 2 + 0.5 * X[:, 0] * X[:, 1] + 0.1 * rng.normal(size=70)
    Xt = rng.uniform(-1, 1, size=(9, 2))
    np.savetxt(tmp_path / "train.csv", np.column_stack([X, y]), delimiter=",",
               header="a,b,y", comments="", fmt="%.17g")
    np.savetxt(tmp_path / "test.csv", Xt, delimiter=",", header="a,b", comments="", fmt="%.17g")
    r = subprocess.run([cli, "blr", str(tmp_path / "train.csv"), "--basis", "poly:3",
                        "--format", "json", "--threads", "1"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    pf = PolynomialFeatures(3, include_bias=False).fit(X)
    terms = [t.replace(" ", "*") for t in pf.get_feature_names_out(["a", "b"])]
    assert [w["term"] for w in rep["weights"]] == terms
    P, Pt = pf.transform(X), pf.transform(Xt)
    est = rfx.BayesianLinearRegression().fit(P, y)
    assert rep["noise_var"] == pytest.approx(est.noise_var_, rel=1e-10)
    assert rep["prior_var"] == pytest.approx(est.prior_var_, rel=1e-10)
    assert np.allclose([w["mean"] for w in rep["weights"]], est.coef_, rtol=0, atol=1e-10)
    assert rep["intercept"] == pytest.approx(est.intercept_, abs=1e-10)
    Pc = P - P.mean(axis=0)
    cov = np.linalg.inv(Pc.T @ Pc / est.noise_var_ + np.eye(P.shape[1]) / est.prior_var_)
    assert np.allclose([w["std"] for w in rep["weights"]], np.sqrt(np.diag(cov)), rtol=1e-7,
                       atol=0)
    for latent in (False, True):
        out = tmp_path / ("p%d.csv" % latent)
        args = [cli, "blr", str(tmp_path / "train.csv"), "--basis", "poly:3", "-q",
                "--predict", str(tmp_path / "test.csv"), "-o", str(out)]
        r = subprocess.run(args + (["--latent"] if latent else []), capture_output=True,
                           text=True)
        assert r.returncode == 0, r.stderr
        got = np.loadtxt(out, delimiter=",", skiprows=1)
        mean, std = est.predict(Pt, return_std=True, latent=latent)
        assert np.allclose(got[:, 0], mean, rtol=0, atol=1e-10)
        assert np.allclose(got[:, 1], std, rtol=1e-9, atol=0)
