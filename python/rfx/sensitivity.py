# SPDX-License-Identifier: BSD-3-Clause
"""The uncertainty-quantification side of the Sobol functions: input
distributions given as a SALib problem, the default distribution of a
fitted model (its training box), and the tables and bar charts of the
results. The numerical work stays in the C library (rfx/surrogate.h);
nothing here imports SALib, pandas or matplotlib until it is used.

A SALib problem (Herman & Usher 2017, ``SALib.sample``'s convention)::

    problem = {
        "num_vars": 3,                      # optional; must match
        "names": ["x1", "x2", "x3"],
        "bounds": [[-3.14, 3.14], [0, 1], [0, 1]],
        "dists": ["unif", "norm", "lognorm"],  # optional; default "unif"
    }

"unif" bounds are [a, b]; "norm" [mean, standard deviation]; "lognorm"
[mean, standard deviation] of log x (SALib's ln-space parameters). These
are rfx's three marginals; SALib's other distributions ("triang",
"truncnorm", "logunif") and groups have none here and raise ValueError.
"""
import numbers

import numpy as np

# SALib's distribution names -> rfx's marginal names (rfx_marginal_kind)
_SALIB_DISTS = {"unif": "uniform", "norm": "normal", "lognorm": "lognormal"}


def marginals_from_problem(problem):
    """The rfx marginals (a list of ``(kind, a, b)``) and input names of a
    SALib problem dict (see the module's documentation)."""
    if not isinstance(problem, dict):
        raise TypeError("problem must be a dict with 'names' and 'bounds', got %r" % (problem,))
    for key in ("names", "bounds"):
        if key not in problem:
            raise ValueError("problem: the key %r is missing (SALib's problem needs 'names' "
                             "and 'bounds')" % key)
    if problem.get("groups") is not None:
        raise ValueError("problem: 'groups' (grouped Sobol indices) are not supported")
    unknown = set(problem) - {"num_vars", "names", "bounds", "dists", "groups", "outputs"}
    if unknown:
        raise ValueError("problem: unknown keys %s" % ", ".join(sorted(map(repr, unknown))))
    names = [str(v) for v in problem["names"]]
    bounds = [list(b) for b in problem["bounds"]]
    d = len(names)
    if d == 0:
        raise ValueError("problem: at least one input is needed")
    num_vars = problem.get("num_vars", d)
    if not isinstance(num_vars, numbers.Integral) or num_vars != d:
        raise ValueError("problem: num_vars=%r but %d names" % (num_vars, d))
    if len(set(names)) != d:
        raise ValueError("problem: the names are not distinct: %r" % (names,))
    if len(bounds) != d:
        raise ValueError("problem: %d bounds for %d names" % (len(bounds), d))
    dists = problem.get("dists")
    dists = ["unif"] * d if dists is None else list(dists)
    if len(dists) != d:
        raise ValueError("problem: %d dists for %d names" % (len(dists), d))
    margs = []
    for name, b, dist in zip(names, bounds, dists):
        if dist not in _SALIB_DISTS:
            raise ValueError("problem: input %r has dist %r; rfx supports %s"
                             % (name, dist, ", ".join(map(repr, _SALIB_DISTS))))
        if len(b) != 2:
            raise ValueError("problem: input %r needs two bounds, got %r" % (name, b))
        margs.append((_SALIB_DISTS[dist], float(b[0]), float(b[1])))
    return margs, names


def box_marginals(lo, hi):
    """Uniform marginals on [lo_j, hi_j], a constant column (lo == hi) on
    [x - 1/2, x + 1/2]: the training box, as rfx_pce_params'
    marginals_from_data makes it."""
    margs = []
    for a, b in zip(np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)):
        if not b > a:
            a, b = a - 0.5, a + 0.5
        margs.append(("uniform", float(a), float(b)))
    return margs


def default_names(d):
    """x1 .. xd."""
    return ["x%d" % (j + 1) for j in range(d)]


class IndicesTable:
    """Tables and bar charts of first-order and total Sobol indices, for the
    result classes: ``first``, ``total`` and ``names``, and optionally the
    interval bounds ``first_lo``, ``first_hi``, ``total_lo``,
    ``total_hi`` (NaN when not estimated), and the second-order ``second``
    (d x d) with ``second_lo``, ``second_hi``."""

    _COLUMNS = ("S1", "S1_lo", "S1_hi", "ST", "ST_lo", "ST_hi")

    def _interval(self, name, index):
        v = getattr(self, name, None)
        return np.full(len(index), np.nan) if v is None else np.asarray(v, dtype=float)

    def to_dict(self):
        """The indices as a dict of lists, one entry per input: "name",
        "S1", "S1_lo", "S1_hi" (first order with its interval), "ST",
        "ST_lo", "ST_hi" (total). Intervals are NaN when not estimated."""
        cols = dict(zip(self._COLUMNS, (
            self.first, self._interval("first_lo", self.first),
            self._interval("first_hi", self.first), self.total,
            self._interval("total_lo", self.total), self._interval("total_hi", self.total))))
        out = {"name": list(self.names)}
        out.update({k: [float(x) for x in v] for k, v in cols.items()})
        return out

    def to_frame(self):
        """The indices as a pandas DataFrame indexed by input name, with the
        columns of :meth:`to_dict` (S1, S1_lo, S1_hi, ST, ST_lo, ST_hi).
        Needs pandas; without it, :meth:`to_dict` gives the same table."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_frame() needs pandas, which is not installed; to_dict() "
                              "gives the same table as a dict of lists") from None
        table = self.to_dict()
        index = table.pop("name")
        return pd.DataFrame(table, index=pd.Index(index, name="input"),
                            columns=list(self._COLUMNS))

    def second_order_dict(self):
        """The second-order indices as a dict of lists, one entry per pair
        of inputs i < j: "name_i", "name_j", "S2", "S2_lo", "S2_hi" (NaN
        when not estimated). ValueError when the result has none (Monte
        Carlo without ``second_order=True``)."""
        second = getattr(self, "second", None)
        if second is None:
            raise ValueError("no second-order indices: ask sobol_indices for them with "
                             "second_order=True")
        second = np.asarray(second, dtype=float)
        lo, hi = (np.full(second.shape, np.nan) if getattr(self, k, None) is None
                  else np.asarray(getattr(self, k), dtype=float)
                  for k in ("second_lo", "second_hi"))
        i, j = np.triu_indices(len(self.names), k=1)
        return {"name_i": [self.names[k] for k in i], "name_j": [self.names[k] for k in j],
                "S2": [float(v) for v in second[i, j]], "S2_lo": [float(v) for v in lo[i, j]],
                "S2_hi": [float(v) for v in hi[i, j]]}

    def second_order_frame(self):
        """:meth:`second_order_dict` as a pandas DataFrame indexed by the
        pairs (input_i, input_j), with the columns S2, S2_lo, S2_hi."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("second_order_frame() needs pandas, which is not installed; "
                              "second_order_dict() gives the same table") from None
        table = self.second_order_dict()
        index = pd.MultiIndex.from_arrays([table.pop("name_i"), table.pop("name_j")],
                                          names=["input_i", "input_j"])
        return pd.DataFrame(table, index=index, columns=["S2", "S2_lo", "S2_hi"])

    def plot(self, ax=None):
        """Bars of the first-order and total index of each input, with
        their intervals as error bars when estimated, on ``ax`` (a
        matplotlib Axes; None: a new figure's). Returns the Axes."""
        if ax is None:
            import matplotlib.pyplot as plt
            _, ax = plt.subplots(figsize=(1.2 + 0.9 * len(self.names), 3.2))
        t = self.to_dict()
        x = np.arange(len(self.names))
        width = 0.38
        for shift, key, label in ((-width / 2, "S1", "first order"),
                                  (width / 2, "ST", "total")):
            value = np.array(t[key])
            lo, hi = np.array(t[key + "_lo"]), np.array(t[key + "_hi"])
            err = None
            if np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)):
                err = np.vstack([np.maximum(value - lo, 0), np.maximum(hi - value, 0)])
            ax.bar(x + shift, value, width, yerr=err, capsize=3, label=label)
        ax.set_xticks(x)
        ax.set_xticklabels(self.names)
        ax.set_ylabel("Sobol index")
        ax.set_ylim(bottom=min(0.0, ax.get_ylim()[0]))
        ax.legend()
        return ax
