# SPDX-License-Identifier: BSD-3-Clause
"""rfx: random feature expansions, with scikit-learn estimators.

A Python package over the rfx C library (librfx): random Fourier features
of shift-invariant kernels and the linear models fitted on them.

- :class:`RandomFourierFeatures`: a transformer, a drop-in for
  ``sklearn.kernel_approximation.RBFSampler`` with more kernels and forms.
- :class:`RFFRegressor`: ridge regression on the features (multi-output).
- :class:`BayesianRFFRegressor`: Bayesian regression with predictive
  standard deviations, ``predict(X, return_std=True)``.
- :class:`RFFClassifier`: logistic, softmax, hinge and least-squares
  classifiers on the features.
- :class:`SparseRFERegressor`: sparse random feature expansions (SRFE,
  HARFE) for surrogates from few samples.
- :class:`PCERegressor`: polynomial chaos expansions, with Sobol indices
  and moments from the coefficients.
- :class:`SurrogateRegressor`: the automatic surrogate, the regression
  methods and target transforms (log, Box-Cox) compared by k-fold
  cross-validation and the best refitted.
- :class:`KitchenSinksRegressor`: random kitchen sinks, only the weights of
  random nonlinearities fitted inside the box |alpha|_inf <= C/K
  (:class:`KitchenSinksClassifier`: the logistic or squared hinge loss);
  :class:`GreedyRegressor`: the greedy baseline, one refined term at a time.
- :class:`KernelPCA`: anisotropic kernel PCA (exact, or by random
  features), the projection of the self-supervised surrogates.
- :class:`ProjectedRegressor`: a surrogate fitted on the kernel PCA
  projection, its per-dimension weights tuned by particle swarm.
- :class:`Kernel`: exact kernels (RBF, Laplacian, Matern, Cauchy,
  polynomial, sigmoid, linear, delta) and their algebra; Gram matrices.
- :class:`KernelRidge`, :class:`GaussianProcessRegressor`: the exact kernel
  machines random features approximate; :class:`Nystroem` features of any
  of them.
- :class:`KernelSGDClassifier`: stochastic gradient descent with a kernel,
  in the four strategies of the kernel trick (features or kernel values,
  on the fly or cached).
- :class:`SoftmaxFeatures`: positive random features of the softmax kernel
  and linear-time attention; :func:`exact_attention` to compare with.
- :class:`PolynomialCountSketch`, :class:`RandomMaclaurinFeatures`,
  :class:`AdditiveChi2Sampler`, :class:`SkewedChi2Sampler`: feature maps of
  the polynomial, exponential dot-product and chi2 kernels, as scikit-learn's.
- :func:`sobol_indices`: Monte Carlo Sobol indices of an rfx model or any
  Python function; :func:`exact_sobol_indices`: closed-form indices of sine
  and cosine feature models. Inputs as marginals, a SALib problem dict
  (:func:`marginals_from_problem`), or a model's training box; results as
  tables (``to_frame``) and bar charts (``plot``).
- :func:`pso_minimize`: particle swarm optimisation of a Python function
  over a box (the search behind ``length_scale="learn"``).
- :func:`merge` and :class:`Statistics`: the statistics of ``partial_fit``
  fits (``est.statistics_``) add, pickle and solve, to fit rows spread over
  processes or machines.
- :func:`load_model`: read a model file written by the ``rfx`` command line
  or the C API.
- :func:`isa`, :func:`native_isa`, :func:`set_isa`: the instruction-set
  path of the C kernels (generic, avx2, avx512); the environment variable
  RFX_ISA sets it too.
- :func:`progress_callback`: a context in which long fits report their
  progress to a function, which can stop them (:class:`CancelledError`);
  the estimators' ``verbose`` prints it, and Ctrl-C stops a fit cleanly.

The library is found through, in order: the environment variable
RFX_LIBRARY; a librfx.so shipped in this package (pip install, CMake
install); build/librfx.so of a source checkout; the system library path.
C errors become Python exceptions carrying the C library's message
(ValueError for invalid arguments, data and model files; MemoryError;
OSError for I/O; RuntimeError for numerical failures).
"""
from ._lib import (CancelledError, isa, library_path, native_isa, progress_callback, set_isa,
                   version as library_version)
from .auto import SurrogateRegressor
from .blr import BayesianLinearRegression
from .attention import SoftmaxFeatures, exact_attention
from .kernel_approximation import KernelCombination, RandomFourierFeatures
from .kernels import GaussianProcessRegressor, Kernel, KernelRidge, Nystroem
from .kernel_sgd import KernelSGDClassifier
from .models import BayesianRFFRegressor, RFFClassifier, RFFRegressor
from .projection import KernelPCA, ProjectedRegressor
from .sinks import GreedyRegressor, KitchenSinksClassifier, KitchenSinksRegressor
from .surrogate import (ExactSobolResult, PCERegressor, SobolResult, SparseRFERegressor,
                        exact_sobol_indices, sobol_indices)
from .design import design
from .sensitivity import marginals_from_problem
from .sketch import (AdditiveChi2Sampler, PolynomialCountSketch, RandomMaclaurinFeatures,
                     SkewedChi2Sampler)
from ._load import load_model
from .optimize import PSOResult, pso_minimize
from ._model import Statistics, merge

__version__ = "0.2.0"

__all__ = [
    "RandomFourierFeatures",
    "KernelCombination",
    "RFFRegressor",
    "BayesianRFFRegressor",
    "BayesianLinearRegression",
    "RFFClassifier",
    "SparseRFERegressor",
    "PCERegressor",
    "SurrogateRegressor",
    "KitchenSinksClassifier",
    "KitchenSinksRegressor",
    "GreedyRegressor",
    "KernelPCA",
    "ProjectedRegressor",
    "Kernel",
    "KernelRidge",
    "GaussianProcessRegressor",
    "Nystroem",
    "KernelSGDClassifier",
    "SoftmaxFeatures",
    "exact_attention",
    "sobol_indices",
    "exact_sobol_indices",
    "design",
    "PolynomialCountSketch",
    "RandomMaclaurinFeatures",
    "AdditiveChi2Sampler",
    "SkewedChi2Sampler",
    "ExactSobolResult",
    "SobolResult",
    "marginals_from_problem",
    "load_model",
    "pso_minimize",
    "PSOResult",
    "merge",
    "Statistics",
    "library_version",
    "library_path",
    "CancelledError",
    "progress_callback",
    "isa",
    "native_isa",
    "set_isa",
]
