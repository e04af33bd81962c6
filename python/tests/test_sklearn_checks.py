# SPDX-License-Identifier: BSD-3-Clause
"""scikit-learn's own estimator checks (check_estimator), one test per check
and estimator. Small D keeps the whole run to seconds; the checks that look
at defaults (construction, get_params, clone) use the defaults anyway. The
estimators' fits run with the progress callback installed (the main thread
always has it, for Ctrl-C), so the checks cover that path too."""
from sklearn.utils.estimator_checks import parametrize_with_checks

import rfx

ESTIMATORS = [
    rfx.RandomFourierFeatures(n_components=64),
    rfx.RandomFourierFeatures(n_components=64, kernel="matern", nu=2.5, length_scale=2.0),
    rfx.RandomFourierFeatures(n_components=64, kernel="laplacian", gamma="scale"),
    rfx.RFFRegressor(n_components=64),
    rfx.RFFRegressor(n_components=64, gamma=0.02, alpha=1e-3, standardize=False),
    rfx.BayesianRFFRegressor(n_components=64),
    rfx.RFFClassifier(n_components=64),
    # one length scale per input, learned by a short particle swarm search
    rfx.RFFRegressor(n_components=32, length_scale="learn", learn_iterations=2),
    rfx.BayesianRFFRegressor(n_components=32, length_scale="learn", learn_iterations=2,
                             learn_particles=4),
    # the automatic surrogate, with two quick candidates and two folds
    rfx.SurrogateRegressor(candidates=["ridge", "pce"], n_folds=2),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)
