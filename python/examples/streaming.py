# SPDX-License-Identifier: BSD-3-Clause
"""Streaming: a ridge model on random Fourier features fitted from batches
that never sit in memory together, and the same fit split over workers and
merged.

    PYTHONPATH=python python3 python/examples/streaming.py

A generator yields 40 batches of 5000 rows (200000 in all) of
y = sin(x0) cos(x1) + x2^2 / 4 + noise (sd 0.1). ``partial_fit`` adds each
batch to the model's sufficient statistics, whose size is D^2 whatever the
number of rows, and re-solves. The example checks that

* the streamed model equals one ``fit`` on all the rows (to rounding), with
  the length scale and penalty fixed so that both see the same problem;
* four "workers", each given every fourth batch, merged with ``rfx.merge``,
  give the same model again: the map-reduce a Dask or multiprocessing user
  would run;
* the test error is at the noise level.
"""
import numpy as np

import rfx

N_BATCHES, BATCH, D = 40, 5000, 256


def truth(X):
    return np.sin(X[:, 0]) * np.cos(X[:, 1]) + X[:, 2] ** 2 / 4


def batches(seed=0):
    """The data, one batch at a time (as from a file or a queue)."""
    rng = np.random.RandomState(seed)
    for _ in range(N_BATCHES):
        X = rng.uniform(-2, 2, size=(BATCH, 3))
        yield X, truth(X) + 0.1 * rng.normal(size=BATCH)


def model():
    # a fixed kernel scale and penalty: the first batch then fixes nothing
    # that a fit on all rows would choose differently
    return rfx.RFFRegressor(n_components=D, length_scale=1.0, alpha=1e-3, standardize=False,
                            random_state=7)


def main():
    streamed = model()
    for X, y in batches():
        streamed.partial_fit(X, y)

    workers = [model() for _ in range(4)]
    for k, (X, y) in enumerate(batches()):
        workers[k % 4].partial_fit(X, y)
    merged = rfx.merge(*workers)

    X_all = np.vstack([X for X, _ in batches()])  # only to compare with one fit
    y_all = np.concatenate([y for _, y in batches()])
    whole = model().fit(X_all, y_all)

    rng = np.random.RandomState(99)
    Xt = rng.uniform(-2, 2, size=(20000, 3))
    p_stream, p_merged, p_whole = (m.predict(Xt) for m in (streamed, merged, whole))
    rmse = np.sqrt(np.mean((p_stream - truth(Xt)) ** 2))
    scale = np.max(np.abs(p_whole))
    print("rows %d in %d batches, D = %d" % (len(y_all), N_BATCHES, D))
    print("streamed vs one fit: max |difference| %.2e" % np.max(np.abs(p_stream - p_whole)))
    print("merged vs one fit:   max |difference| %.2e" % np.max(np.abs(p_merged - p_whole)))
    print("test RMSE against the noise-free function: %.4f" % rmse)

    assert np.max(np.abs(p_stream - p_whole)) <= 1e-8 * scale
    assert np.max(np.abs(p_merged - p_whole)) <= 1e-8 * scale
    assert rmse < 0.02


if __name__ == "__main__":
    main()
