# SPDX-License-Identifier: BSD-3-Clause
"""The one place where rfx meets the scikit-learn API that changed between
versions: input validation and estimator tags.

- scikit-learn 1.2 to 1.5 validate inputs with the estimator method
  ``self._validate_data(...)`` and collect tags from ``_more_tags()``
  dictionaries;
- scikit-learn 1.6 added the function
  ``sklearn.utils.validation.validate_data(estimator, ...)`` and the
  ``__sklearn_tags__()`` method returning a ``Tags`` object, deprecated the
  old pair, and 1.7 removed it.

:func:`validate_data` calls the new function where it exists and the method
otherwise (looked up at each call, not at import). :class:`TagsMixin` gives
an estimator both ``_more_tags`` and ``__sklearn_tags__`` from one class
attribute ``_rfx_tags`` written in the old keys; each version of
scikit-learn reads the one it knows.
"""
import numpy as np
import sklearn.utils.validation as _validation


def validate_data(estimator, X="no_validation", y="no_validation", reset=True, **check_params):
    """scikit-learn's input validation of an estimator's X (and y): sets
    ``n_features_in_`` and ``feature_names_in_`` when ``reset``, checks them
    otherwise; returns X, or (X, y) when y is given. ``check_params`` go to
    ``check_array`` / ``check_X_y`` (dtype, multi_output, y_numeric, ...)."""
    fn = getattr(_validation, "validate_data", None)
    if fn is not None:  # scikit-learn >= 1.6
        return fn(estimator, X=X, y=y, reset=reset, **check_params)
    return estimator._validate_data(X=X, y=y, reset=reset, **check_params)


def _set_new_tag(tags, key, value):
    """Write one old-style tag (a _more_tags key) into a Tags object."""
    if key == "multioutput":
        tags.target_tags.multi_output = bool(value)
    elif key == "preserves_dtype":
        tags.transformer_tags.preserves_dtype = [np.dtype(t).name for t in value]
    elif key == "binary_only":
        tags.classifier_tags.multi_class = not value
    elif key == "stateless":
        tags.requires_fit = not value
    elif key == "requires_positive_X":
        tags.input_tags.positive_only = bool(value)
    else:
        raise KeyError("rfx: no scikit-learn >= 1.6 tag for the old tag %r" % (key,))


class TagsMixin:
    """Estimator tags for every scikit-learn version. A subclass sets
    ``_rfx_tags`` (a dict in ``_more_tags`` keys: "multioutput",
    "preserves_dtype", "binary_only", "stateless", "requires_positive_X");
    put this mixin before
    ``BaseEstimator`` in the bases."""

    _rfx_tags = {}

    def _more_tags(self):  # scikit-learn < 1.6
        return dict(self._rfx_tags)

    def __sklearn_tags__(self):  # scikit-learn >= 1.6
        tags = super().__sklearn_tags__()
        for key, value in self._rfx_tags.items():
            _set_new_tag(tags, key, value)
        return tags
