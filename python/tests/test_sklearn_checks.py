"""scikit-learn's own estimator checks (check_estimator), one test per check
and estimator. Small D keeps the whole run to seconds; the checks that look
at defaults (construction, get_params, clone) use the defaults anyway."""
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
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)
