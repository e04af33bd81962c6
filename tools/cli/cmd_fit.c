/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_fit.c - rfx fit: its options and help, the values of its own options
 * (methods, losses, class weights, theta, ...), and the fits: bayes and
 * ridge on random Fourier features, srfe, lasso and harfe, polynomial chaos,
 * the projected surrogate and the classifier, each reporting on stderr what
 * it used and chose.
 */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmd_fit(const command *c, int argc, char **argv);

static const opt_spec FIT_OPTS[] = {
    OPT_TARGET(""),
    { O_OUTPUT, 'o', "output", "MODEL", "write the model to MODEL (required)" },
    { O_TASK, 0, "task", "T",
      "regression (default) or classify: a classifier of the target's labels (any numbers, "
      "at least two distinct); the method is then classify, or sinks when given" },
    { O_METHOD, 0, "method", "M",
      "bayes (default; Bayesian regression on random Fourier features, with predictive std), "
      "ridge, srfe (sparse random features: basis pursuit denoising with --eta, else the "
      "lasso), lasso, harfe (sparse random features, hard thresholding), pce (polynomial "
      "chaos), projected (a surrogate on a learned kernel PCA of the inputs), auto (the "
      "methods and target transforms compared by cross-validation, the best refitted), sinks "
      "(random kitchen sinks in a box), greedy (the greedy baseline) or classify (the same "
      "as --task classify)" },
    { O_TRANSFORM, 0, "transform", "T",
      "regression: fit the target through a transform and predict it back: none (default), "
      "log or boxcox (Box-Cox, lambda by maximum likelihood; both need every target > 0); "
      "auto: chosen among those by cross-validation of the method with its defaults; "
      "auto method: the transforms to compare, a comma list (default: all that apply)" },
    { O_BUDGET, 0, "budget", "SECONDS",
      "auto: stop starting candidate fits when the time would pass SECONDS > 0 (the choice "
      "then depends on the machine's speed; default: no budget)" },
    { O_CANDIDATES, 0, "candidates", "M1,M2,..",
      "auto: the methods to compare, from bayes, ridge, srfe, harfe, pce, projected "
      "(default bayes,srfe,harfe,pce, and with 9 or more inputs projected on the target as "
      "it is)" },
    { O_LOSS, 0, "loss", "L",
      "classify: auto (default: least squares, lambda by exact leave-one-out, then up to 3 "
      "Newton steps of the squared hinge where a held-out fifth of the rows shows a "
      "significant gain; probabilities by a fitted temperature), squared (least squares alone, "
      "the ridge classifier), logistic (with probabilities), hinge (the SVM) or squared-hinge; "
      "sinks with --task classify: logistic (default) or squared-hinge" },
    { O_MULTICLASS, 0, "multiclass", "S",
      "classify, more than two classes: ovr (one-vs-rest, default) or softmax (multinomial "
      "logistic regression; logistic loss)" },
    { O_OPTIMIZER, 0, "optimizer", "O",
      "classify: auto (default: closed form for the squared loss without class weights, "
      "lbfgs, or dual-cd for the hinge loss), lbfgs, dual-cd (hinge losses) or sgd (averaged "
      "SGD)" },
    { O_CLASS_WEIGHT, 0, "class-weight", "W",
      "classify: balanced (class k weighs n / (C n_k)) or LABEL:W,... (W >= 0, other classes 1)" },
    { O_KERNEL, 0, "kernel", "K",
      "ridge, bayes, classify, sinks, greedy: gaussian (default), laplacian, cauchy or "
      "matern; or a sum A+B+.. or a product A*B*.. of them, each term NAME[:L[:W]] with its "
      "length scale L relative to the map's (default 1) and, in a sum, its weight W >= 0 "
      "(default 1): the features of the weighted mean of the terms (frequencies from the "
      "mixture of their spectral densities) or of their product (the sum of one draw of "
      "each); matern terms take --nu" },
    { O_FREQUENCIES, 0, "frequencies", "FILE",
      "ridge, bayes, classify, sinks: the frequencies drawn from your own spectral density, "
      "one per row of FILE (CSV or .npy, one column per input, at unit length scale: the "
      "map divides them by its length scale; at least D rows, D / 2 with --form cos-sin); "
      "the kernel is then E cos(w.(x - y)) of that density" },
    { O_NU, 0, "nu", "NU",
      "ridge, bayes, classify, sinks, greedy: Matern smoothness 0.5, 1.5 (default) or 2.5" },
    { O_FORM, 0, "form", "F",
      "ridge, bayes, classify, sinks: feature form cos-bias (default) or cos-sin (D even); "
      "sinks, greedy, srfe, lasso, harfe with an --activation other than cos: phase-free, "
      "phi(w.x) with no phase (default: phi(w.x + b), b ~ U(0, 2 pi))" },
    { O_STRUCTURE, 0, "structure", "S",
      "ridge, bayes, classify, sinks: how the frequencies are drawn: iid (default), "
      "orthogonal, sorf, fastfood or halton (rfx_structure in rfx.h)" },
    { O_FEATURES, 'D', "features", "N",
      "number of random features D >= 1 (default 1024; srfe, lasso, harfe: from the number of "
      "rows, as rfx/srfe.h documents; projected: of a ridge, bayes or srfe surrogate (auto: its "
      "ridge and srfe candidates), default "
      "1000, 4000 for srfe)" },
    { O_SEED, 0, "seed", "S",
      "random seed of the features (default 0); projected: of the swarm and of the features "
      "of its fast score" },
    { O_LENGTH_SCALE, 0, "length-scale", "L",
      "ridge, bayes, classify: kernel length scale > 0, in standardised units unless "
      "--no-standardize (default: chosen automatically); sinks, greedy: the same (default "
      "sqrt(d), not chosen)" },
    { O_GAMMA, 0, "gamma", "G",
      "ridge, bayes, classify: scikit-learn's gamma > 0 instead of a length scale: "
      "l = 1/sqrt(2 G) "
      "(gaussian), l = 1/G (laplacian); projected: the kernel PCA's scale G > 0 in "
      "exp(-G sum theta_i (x_i - y_i)^2) (default: chosen with k from 10^-2.5 .. 1)" },
    { O_LENGTH_SCALES, 0, "length-scales", "learn",
      "ridge, bayes: learn one length scale per input (ARD) by a particle swarm on the "
      "evidence (bayes) or GCV (ridge), starting from the isotropic one (chosen, or "
      "--length-scale / --gamma); a large scale switches an input off" },
    { O_LEARN_ITERATIONS, 0, "learn-iterations", "N",
      "with --length-scales learn: particle swarm iterations >= 1 (default 30)" },
    { O_LAMBDA, 0, "lambda", "X",
      "ridge: penalty >= 0 (default: chosen by GCV); srfe, lasso: the lasso penalty > 0 "
      "(default: chosen along the lasso path, see --folds); classify: penalty lambda/2 |W|^2 "
      "> 0 of the mean loss (default: chosen with the length scale, by leave-one-out for the "
      "squared loss, else on held-out rows)" },
    { O_NOISE_VAR, 0, "noise-var", "V",
      "bayes: noise variance > 0 (default: fitted by maximising the evidence)" },
    { O_PRIOR_VAR, 0, "prior-var", "V",
      "bayes: prior variance of the weights > 0 (default: fitted)" },
    { O_SPARSITY, 0, "sparsity", "Q",
      "srfe, lasso, harfe: inputs per feature, 1 <= Q <= d (default: chosen from 1, 2, 3); "
      "sinks, greedy: nonzero frequencies per feature (default d)" },
    { O_ACTIVATION, 0, "activation", "A",
      "srfe, lasso, harfe: sin (default), cos, tanh, sigmoid, relu or sign; sinks, greedy: "
      "the same, default cos" },
    { O_WEIGHTS, 0, "weights", "W",
      "srfe, lasso, harfe: distribution of the nonzero frequencies, normal (default) or "
      "uniform; sinks, greedy: the same instead of the kernel's spectral density (--kernel, "
      "the default)" },
    { O_WEIGHT_SCALE, 0, "weight-scale", "S",
      "srfe, lasso, harfe: their scale s > 0, N(0, s^2) or U(-s, s) (default: chosen from "
      "0.5, 1, 2, widened past an end that scores best, see --folds); sinks, greedy with --weights: the scale (default 1)" },
    { O_BOX, 0, "box", "C",
      "sinks: the box |alpha_k| <= C / K on the weights of the K unscaled nonlinearities, so "
      "that the fit minus its intercept is at most C in magnitude: C > 0 in the target's "
      "units, or inf (no box); default: chosen by 5-fold cross-validation (rows in a random "
      "order of --seed) from 1, 4, 16, 64 and 256 times the target's range (2 for classes), "
      "and inf, by the held-out squared error (with --task classify: the loss)" },
    { O_DRAWS, 0, "draws", "M",
      "greedy: random candidates drawn per term, M >= 1 (default 64)" },
    { O_REFINE_STEPS, 0, "refine-steps", "N",
      "greedy: Gauss-Newton steps refining each chosen term, N >= 0 (default 5)" },
    { O_UPDATE, 0, "update", "U",
      "greedy: how a term joins the fit: orthogonal (default: every coefficient refitted by "
      "least squares) or relaxed (the convex update (1 - a) f + g phi of Jones and Barron)" },
    { O_ETA, 0, "eta", "E",
      "srfe: basis pursuit denoising (SRFE-S), the least |c|_1 with a training RMS residual "
      "<= E > 0 (default: the lasso, and the equivalent E is reported)" },
    { O_TERMS, 0, "terms", "S",
      "harfe: nonzero coefficients s >= 1 (default min(rows / 2, N) / 2); greedy: the terms "
      "K >= 1 (default 32)" },
    { O_FOLDS, 0, "folds", "K",
      "srfe, lasso, harfe: choose the weight scale and lambda by K-fold cross-validation "
      "(rows i mod K), 2 <= K <= rows, instead of generalised cross-validation (GCV, the "
      "default); projected: the swarm's loss is the surrogate's K-fold error instead of "
      "the fast score (slower); classify: choose the length scale and lambda by K-fold cross-validation "
      "instead of one holdout of a quarter of the rows; auto: the folds of the comparison "
      "(default 5; rows in a random order of --seed)" },
    { O_K, 0, "k", "K",
      "projected: kernel PCA components k >= 1, at most rows - 1 (default: chosen with "
      "--gamma from 1 .. 8 by the fast score)" },
    { O_SURROGATE, 0, "surrogate", "S",
      "projected: the model on the k scores, auto (default: ridge, srfe or pce, fitted to y "
      "and, when every y > 0, to log y, the one of least own error estimate on the scores of "
      "the finalists (ranked by srfe) or of the swarm's choice), ridge, bayes, srfe or pce" },
    { O_ITERATIONS, 0, "iterations", "N",
      "projected: particle swarm iterations >= 1 (default 20)" },
    { O_PARTICLES, 0, "particles", "P", "projected: swarm size >= 1 (default 10)" },
    { O_PATIENCE, 0, "patience", "N",
      "projected: stop after N iterations without a better loss, 0 = never (default 5)" },
    { O_THETA, 0, "theta", "T1,..,TD",
      "projected: fixed input weights in [0, 1], one per input, not all zero: no swarm" },
    { O_PLOT, 0, "plot", "OUT.png",
      "projected: also plot the best loss against the iteration (needs gnuplot)" },
    { O_DEGREE, 0, "degree", "P",
      "pce: the largest total degree P >= 1 (default: the largest P <= 10 whose total-degree "
      "basis C(d + P, P) has at most 10000 terms, or up to 20 while it has at most 2 n terms, "
      "a degree above 10 kept only when it halves the corrected leave-one-out error of the "
      "best below it, and the sweep up to 10 stopped after two degrees in a row whose error "
      "is above twice the best; with d >= 3 also terms of at most two inputs "
      "to a higher degree, within 4 n terms; when that sweep kept a degree below its cap, "
      "also the hyperbolic basis of q-norm 0.5 of the largest degree <= 10 within 4 n terms; "
      "the fit of lower corrected leave-one-out error is kept; then the same choice on the "
      "inputs whose total Sobol index there is at least a tenth of its relative corrected "
      "leave-one-out error, kept when its error is lower)" },
    { O_DEGREE_MIN, 0, "degree-min", "M",
      "pce: every degree M..P is fitted and the one of least corrected leave-one-out error "
      "kept (default 1; M = P fits degree P only)" },
    { O_Q_NORM, 0, "q-norm", "Q",
      "pce: hyperbolic truncation, terms with (sum a_i^Q)^(1/Q) <= P, 0 < Q <= 1 (default 1: "
      "the total-degree basis)" },
    { O_MAX_INTERACTION, 0, "max-interaction", "K",
      "pce: at most K >= 1 inputs per term (default: no limit)" },
    { O_PCE_METHOD, 0, "pce-method", "M",
      "pce: lars (default; sparse, by least-angle regression and the corrected leave-one-out "
      "error) or lsq (least squares on every candidate term)" },
    { O_UNIFORM, 0, "uniform", "[NAME=]A,B",
      "pce: input NAME (a column's name or 0-based index) uniform on [A, B]; without NAME=, "
      "every input not named; repeatable (default for an input not given one: uniform on "
      "its column's [min, max] in the training data, [x - 1/2, x + 1/2] if constant; with "
      "no input given one, a normal or lognormal fitted to a column where it is likelier by "
      "more than log n and not skewed there (3 standard errors) and the fit with those "
      "families has the lower corrected leave-one-out error, continued linearly beyond the "
      "training range)" },
    { O_NORMAL, 0, "normal", "[NAME=]MU,SD",
      "pce: input NAME (or every input not named) normal N(MU, SD^2), SD > 0; repeatable" },
    { O_LOGNORMAL, 0, "lognormal", "[NAME=]MU,SIGMA",
      "pce: input NAME (or every input not named) lognormal, log x ~ N(MU, SIGMA^2), SIGMA > "
      "0 (Hermite polynomials in log x); repeatable" },
    { O_NO_STANDARDIZE, 0, "no-standardize", NULL,
      "ridge, bayes, srfe, lasso, harfe, projected, classify, sinks, greedy: use the inputs as "
      "they are instead of (x - mean) / std per column" },
    { O_NO_INTERCEPT, 0, "no-intercept", NULL,
      "ridge, bayes, classify, sinks, greedy: fit no intercept" },
    { O_THREADS, 0, "threads", "T",
      "threads, 0 to 4096 (default 0: the OpenMP default, OMP_NUM_THREADS or all cores)" },
    { O_SAMPLE_WEIGHT, 0, "sample-weight", "COL",
      "ridge, bayes, classify: the column of DATA (a header name or 0-based index among the "
      "inputs) that holds each row's weight, finite and >= 0; it is not an input" },
    { O_DISTRIBUTED, 0, "distributed", NULL,
      "ridge, bayes, classify: one fit by every process of an MPI job (mpirun -np K rfx fit "
      "...): each rank reads its byte range of DATA, or its own file when DATA holds %d (the "
      "rank); rank 0 writes the model. classify: the least-squares classifier from summed "
      "statistics, the other losses by L-BFGS on summed gradients; --class-weight balanced, "
      "not LABEL:W" },
    { O_DETERMINISTIC, 0, "deterministic", NULL,
      "--distributed: the same model, bit for bit, for any number of ranks and threads "
      "(rows in whole chunks added in a fixed tree; a counting pass first); ridge, bayes and "
      "the least-squares classifier, not the losses fitted by L-BFGS" },
    { O_CHUNK_ROWS, 0, "chunk-rows", "N",
      "--deterministic: rows per chunk (default 65536); part of the result" },
    { O_MEMORY_LIMIT, 0, "memory-limit", "SIZE",
      "the most DATA's numbers may take in memory for the methods that keep every row (all "
      "but ridge, bayes and classify, which read DATA in blocks of rows); beyond it the fit "
      "stops before reading DATA whole; classify caches its features only within half of it. "
      "SIZE in bytes, or with K, M, G or T; none for no limit "
      "(default: 3/4 of the physical memory)" },
    OPT_PROGRESS,
    OPT_QUIET,
    OPT_DELIMITER,
    OPT_NO_HEADER,
    { O_END, 0, NULL, NULL, NULL }
};

/* rfx fit: its synopsis, help text and options (main.c lists it). */
const command cli_fit_command = {
    "fit", "rfx fit DATA [--target COL] -o MODEL [--method M] [options]\n"
           "       rfx fit DATA [--target COL] -o MODEL --task classify [--loss L] [options]",
    "fit a model to a CSV or .npy file",
    "Fit a regression model (with --task classify, a classifier) to the columns of\n"
    "DATA (a CSV file, with or without a header, or a .npy file) other than the\n"
    "target, by one of the methods:\n"
    "  bayes  Bayesian regression on random Fourier features, with predictive std\n"
    "  ridge  ridge regression on random Fourier features\n"
    "  srfe   sparse random features (each a function of q inputs) and sparse\n"
    "         coefficients: basis pursuit denoising with --eta (SRFE-S), else the\n"
    "         lasso\n"
    "  lasso  the same features, coefficients by the lasso\n"
    "  harfe  the same features, coefficients by hard thresholding pursuit\n"
    "  pce    a polynomial chaos expansion: polynomials orthonormal under the\n"
    "         input distribution (Legendre for uniform, Hermite for normal inputs)\n"
    "  projected  a surrogate (ridge, srfe or pce, of y or of log y when y > 0, by\n"
    "         their own error estimates, or --surrogate ridge, bayes, srfe or pce) on the k\n"
    "         scores of a kernel PCA of the inputs whose per-input weights theta\n"
    "         in [0, 1] a particle swarm chooses to minimise a relative\n"
    "         validation error (GCV of a ridge on random features of the\n"
    "         scores, or the surrogate's own with --folds K), starting from a\n"
    "         screening of each input alone; k and gamma are chosen first\n"
    "         unless given; the loss history and theta are printed\n"
    "  auto   the methods bayes, srfe, harfe and pce (--candidates), each on the\n"
    "         target as it is and under the log and Box-Cox transforms (when every\n"
    "         target is > 0), and projected with 9 or more inputs, compared by\n"
    "         K-fold cross-validation with racing (a candidate far behind the\n"
    "         best after a fold stops); the best is\n"
    "         refitted on all rows and a table of the candidates is printed\n"
    "  sinks  random kitchen sinks: K random nonlinearities (-D; random Fourier\n"
    "         features of --kernel, or --activation with --weights), only their\n"
    "         weights fitted, by least squares within the box |alpha_k| <= C / K\n"
    "         (--box); with --task classify a classifier (logistic or squared\n"
    "         hinge loss, one-vs-rest for more than two classes)\n"
    "  greedy the greedy baseline: --terms terms added one at a time, each the\n"
    "         best of --draws random candidates refined by Gauss-Newton, all\n"
    "         coefficients refitted after each (or the relaxed --update)\n"
    "  classify  (--task classify) a classifier on random Fourier features: the\n"
    "         target's distinct values are the classes; squared (default: the\n"
    "         least-squares or ridge classifier), logistic (kernel logistic\n"
    "         regression), hinge or squared-hinge loss (kernel SVMs); one-vs-rest\n"
    "         or softmax (logistic) for more than two classes\n"
    "\n"
    "With no options the fit is automatic. bayes and ridge: inputs are\n"
    "standardised, the length scale is chosen by the Bayesian evidence (GCV for\n"
    "ridge), and the noise and prior variances (the ridge penalty) are fitted\n"
    "too. srfe, lasso, harfe: the weight scale and the lasso penalty are chosen\n"
    "by generalised cross-validation (k-fold with --folds). classify: inputs are\n"
    "standardised; with the squared loss (no class weights) lambda is chosen by\n"
    "the exact leave-one-out error of every lambda at once and the length scale\n"
    "by doublings, then bisection, on that error; other losses choose both from\n"
    "a grid (each scale's lambdas one warm-started path, extended by a decade\n"
    "while the best lambda is on its edge) by the held-out log-loss (logistic)\n"
    "or error rate (hinge losses) on a quarter of the rows (k-fold with\n"
    "--folds). pce: the degree (1..P) by the corrected leave-one-out error, the\n"
    "terms by least-angle regression. What was chosen is printed on stderr; a\n"
    "progress line is shown when stderr is a terminal (--progress: also in a log;\n"
    "--quiet: neither the summary nor progress). An option that does not apply to\n"
    "the method is a usage error.\n",
    FIT_OPTS, cmd_fit,
    "\n"
    "DATA may be '-' (standard input) and gzip-compressed (told by its content).\n"
    "bayes, ridge and classify read DATA in blocks of rows, in passes (the column\n"
    "means, the classes and the selection rows; the scales; the statistics),\n"
    "holding the D x D statistics, a block and a bounded set of rows, never all\n"
    "rows: a file larger than memory fits, and standard input is copied to a\n"
    "temporary file in TMPDIR for the passes (unless --sample-weight,\n"
    "--transform or --class-weight LABEL:W needs every row in memory). The\n"
    "least-squares classifier keeps the 20000 rows that score its leave-one-out\n"
    "errors; the other losses read DATA once per L-BFGS evaluation or SGD epoch\n"
    "unless their features fit in the cache. The progress shows the rows read,\n"
    "their rate and the time left. The other methods keep every row in memory,\n"
    "up to --memory-limit. With --distributed under mpirun, every rank fits its\n"
    "share of the rows (see the option).\n"
};

/* The methods of rfx fit: the library's rfx_method ones, and the lasso (an
 * srfe model whose coefficients come from the lasso). */
enum fit_method {
    FM_BAYES, FM_RIDGE, FM_SRFE, FM_LASSO, FM_HARFE, FM_PCE, FM_PROJECTED, FM_CLASSIFY, FM_AUTO,
    FM_SINKS, FM_GREEDY, FM_COUNT
};

static const char *const FIT_METHODS[FM_COUNT] = {
    "bayes", "ridge", "srfe", "lasso", "harfe", "pce", "projected", "classify", "auto", "sinks",
    "greedy"
};

#define FM(m) (1u << (m))
#define FM_RFF (FM(FM_BAYES) | FM(FM_RIDGE))
#define FM_KERNEL (FM_RFF | FM(FM_CLASSIFY)) /* a kernel's random Fourier features */
#define FM_SPARSE (FM(FM_SRFE) | FM(FM_LASSO) | FM(FM_HARFE))
#define FM_SINKS_GREEDY (FM(FM_SINKS) | FM(FM_GREEDY))

/* The methods each option of rfx fit applies to (options not listed apply
 * to all); giving one to another method is a usage error. */
static const struct fit_opt_methods {
    int id;
    unsigned methods;
} FIT_OPT_METHODS[] = {
    { O_KERNEL, FM_KERNEL | FM_SINKS_GREEDY }, { O_NU, FM_KERNEL | FM_SINKS_GREEDY },
    { O_FORM, FM_KERNEL | FM_SPARSE | FM_SINKS_GREEDY }, { O_STRUCTURE, FM_KERNEL | FM(FM_SINKS) },
    { O_LENGTH_SCALE, FM_KERNEL | FM_SINKS_GREEDY },
    { O_GAMMA, FM_KERNEL | FM(FM_PROJECTED) | FM_SINKS_GREEDY },
    { O_NO_INTERCEPT, FM_KERNEL | FM_SINKS_GREEDY },
    { O_LENGTH_SCALES, FM_RFF }, { O_LEARN_ITERATIONS, FM_RFF },
    { O_NOISE_VAR, FM(FM_BAYES) }, { O_PRIOR_VAR, FM(FM_BAYES) },
    { O_FEATURES, FM_KERNEL | FM_SPARSE | FM(FM_PROJECTED) | FM(FM_SINKS) },
    { O_SEED, FM_KERNEL | FM_SPARSE | FM(FM_PROJECTED) | FM(FM_AUTO) | FM_SINKS_GREEDY },
    { O_NO_STANDARDIZE, FM_KERNEL | FM_SPARSE | FM(FM_PROJECTED) | FM_SINKS_GREEDY },
    { O_LAMBDA, FM(FM_RIDGE) | FM(FM_SRFE) | FM(FM_LASSO) | FM(FM_CLASSIFY) },
    { O_SPARSITY, FM_SPARSE | FM_SINKS_GREEDY }, { O_ACTIVATION, FM_SPARSE | FM_SINKS_GREEDY },
    { O_WEIGHTS, FM_SPARSE | FM_SINKS_GREEDY }, { O_WEIGHT_SCALE, FM_SPARSE | FM_SINKS_GREEDY },
    { O_BOX, FM(FM_SINKS) }, { O_DRAWS, FM(FM_GREEDY) }, { O_REFINE_STEPS, FM(FM_GREEDY) },
    { O_UPDATE, FM(FM_GREEDY) }, { O_FREQUENCIES, FM_KERNEL | FM(FM_SINKS) },
    { O_FOLDS, FM_SPARSE | FM(FM_PROJECTED) | FM(FM_CLASSIFY) | FM(FM_AUTO) },
    { O_TRANSFORM, ~FM(FM_CLASSIFY) }, { O_BUDGET, FM(FM_AUTO) }, { O_CANDIDATES, FM(FM_AUTO) },
    { O_SAMPLE_WEIGHT, FM(FM_RIDGE) | FM(FM_BAYES) | FM(FM_CLASSIFY) },
    { O_DISTRIBUTED, FM_KERNEL }, { O_DETERMINISTIC, FM_KERNEL }, { O_CHUNK_ROWS, FM_KERNEL },
    { O_LOSS, FM(FM_CLASSIFY) | FM(FM_SINKS) }, { O_MULTICLASS, FM(FM_CLASSIFY) },
    { O_OPTIMIZER, FM(FM_CLASSIFY) }, { O_CLASS_WEIGHT, FM(FM_CLASSIFY) },
    { O_ETA, FM(FM_SRFE) }, { O_TERMS, FM(FM_HARFE) | FM(FM_GREEDY) },
    { O_DEGREE, FM(FM_PCE) }, { O_DEGREE_MIN, FM(FM_PCE) }, { O_Q_NORM, FM(FM_PCE) },
    { O_MAX_INTERACTION, FM(FM_PCE) }, { O_PCE_METHOD, FM(FM_PCE) }, { O_UNIFORM, FM(FM_PCE) },
    { O_NORMAL, FM(FM_PCE) }, { O_LOGNORMAL, FM(FM_PCE) },
    { O_K, FM(FM_PROJECTED) }, { O_SURROGATE, FM(FM_PROJECTED) },
    { O_ITERATIONS, FM(FM_PROJECTED) }, { O_PARTICLES, FM(FM_PROJECTED) },
    { O_PATIENCE, FM(FM_PROJECTED) }, { O_THETA, FM(FM_PROJECTED) },
    { O_PLOT, FM(FM_PROJECTED) },
};

/* ------------------------------------------------------------------------ */
/* Values of the options of rfx fit                                          */
/* ------------------------------------------------------------------------ */

static int parse_fit_method(const opt_iter *it, const char *s, int *out)
{
    for (int m = 0; m < FM_COUNT; m++) {
        if (strcmp(s, FIT_METHODS[m]) == 0) {
            *out = m;
            return 0;
        }
    }
    return cli_value_error(it, "unknown method '%s' (bayes, ridge, srfe, lasso, harfe, pce, "
                               "projected, auto, sinks, greedy or classify)", s);
}

static int parse_loss(const opt_iter *it, const char *s, rfx_loss *out)
{
    if (rfx_loss_from_name(s, out) == RFX_OK) return 0;
    rfx_clear_error();
    return cli_value_error(it, "unknown loss '%s' (auto, squared, logistic, hinge or "
                               "squared-hinge)", s);
}

static int parse_multiclass(const opt_iter *it, const char *s, rfx_multiclass *out)
{
    if (rfx_multiclass_from_name(s, out) == RFX_OK) return 0;
    rfx_clear_error();
    return cli_value_error(it, "unknown multi-class scheme '%s' (ovr or softmax)", s);
}

static int parse_optimizer(const opt_iter *it, const char *s, rfx_optimizer *out)
{
    if (rfx_optimizer_from_name(s, out) == RFX_OK) return 0;
    rfx_clear_error();
    return cli_value_error(it, "unknown optimizer '%s' (auto, lbfgs, dual-cd or sgd)", s);
}

/* --class-weight: "balanced", or "LABEL:W,..." with finite labels and
 * weights W >= 0 (rfx_class_weights_map checks the rest against the
 * classes). The pairs are counted into *n and, unless labels / weights are
 * NULL, stored there. */
static int parse_class_weights(const opt_iter *it, const char *s, double *labels, double *weights,
                               size_t *n)
{
    const char *p = s;
    size_t k = 0;
    if (strcmp(s, "balanced") == 0) {
        *n = 0;
        return 0;
    }
    for (;;) {
        char *end;
        double l, w;
        errno = 0;
        l = strtod(p, &end);
        if (end == p || *end != ':' || isspace((unsigned char)*p))
            return cli_value_error(it, "expected 'balanced' or LABEL:W,... (e.g. 0:1,1:5), "
                                       "got '%s'", s);
        p = end + 1;
        w = strtod(p, &end);
        if (end == p || (*end != ',' && *end != '\0') || isspace((unsigned char)*p))
            return cli_value_error(it, "expected 'balanced' or LABEL:W,... (e.g. 0:1,1:5), "
                                       "got '%s'", s);
        if (errno == ERANGE || !isfinite(l) || !isfinite(w) || w < 0)
            return cli_value_error(it, "pair %zu: the label must be finite and the weight a finite "
                                   "number >= 0", k + 1);
        if (labels) {
            labels[k] = l;
            weights[k] = w;
        }
        k++;
        if (*end == '\0') break;
        p = end + 1;
    }
    *n = k;
    return 0;
}

static int parse_activation(const opt_iter *it, const char *s, rfx_activation *out)
{
    if (rfx_activation_from_name(s, out) == RFX_OK) return 0;
    rfx_clear_error();
    return cli_value_error(it, "unknown activation '%s' (sin, cos, tanh, sigmoid, relu or sign)",
                           s);
}

/* The distributions of sparse feature weights (not the kernel's). */
static int parse_weight_dist(const opt_iter *it, const char *s, rfx_weights *out)
{
    if ((strcmp(s, "normal") == 0 || strcmp(s, "uniform") == 0) &&
        rfx_weights_from_name(s, out) == RFX_OK)
        return 0;
    return cli_value_error(it, "unknown weight distribution '%s' (normal or uniform)", s);
}

static int parse_pce_method(const opt_iter *it, const char *s, rfx_pce_method *out)
{
    if (strcmp(s, "lars") == 0) {
        *out = RFX_PCE_METHOD_LARS;
        return 0;
    }
    if (strcmp(s, "lsq") == 0) {
        *out = RFX_PCE_METHOD_LSQ;
        return 0;
    }
    return cli_value_error(it, "unknown PCE method '%s' (lars or lsq)", s);
}

static int parse_surrogate(const opt_iter *it, const char *s, rfx_method *out)
{
    static const struct { const char *name; rfx_method method; } S[] = {
        { "ridge", RFX_METHOD_RIDGE }, { "bayes", RFX_METHOD_BAYES },
        { "srfe", RFX_METHOD_SRFE }, { "pce", RFX_METHOD_PCE }, { "auto", RFX_PROJECTED_AUTO },
    };
    for (size_t i = 0; i < sizeof S / sizeof *S; i++) {
        if (strcmp(s, S[i].name) == 0) {
            *out = S[i].method;
            return 0;
        }
    }
    return cli_value_error(it, "unknown surrogate '%s' (auto, ridge, bayes, srfe or pce)", s);
}

/* A comma list of names into a bit mask (1u << value): each name read by
 * from_name (which sets the message), every bit within allowed. */
static int parse_name_list(const opt_iter *it, const char *s, const char *what, unsigned allowed,
                           rfx_status (*from_name)(const char *, int *), unsigned *mask)
{
    char buf[256];
    if (strlen(s) >= sizeof buf) return cli_value_error(it, "'%.40s...' is too long", s);
    snprintf(buf, sizeof buf, "%s", s);
    *mask = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int v = 0;
        if (from_name(tok, &v) != RFX_OK || v < 0 || v > 31 || !(allowed & (1u << v))) {
            rfx_clear_error();
            return cli_value_error(it, "'%s' is not %s", tok, what);
        }
        *mask |= 1u << v;
    }
    if (*mask == 0) return cli_value_error(it, "expected a comma list of %s", what);
    return 0;
}

static rfx_status transform_from_name(const char *s, int *out)
{
    rfx_target_transform t;
    rfx_status st = rfx_target_transform_from_name(s, &t);
    if (st == RFX_OK) *out = (int)t;
    return st;
}

static rfx_status method_from_name(const char *s, int *out)
{
    rfx_method m;
    rfx_status st = rfx_method_from_name(s, &m);
    if (st == RFX_OK) *out = (int)m;
    return st;
}

/* --transform: none, log, boxcox, auto, or (--method auto) a comma list of
 * the first three. */
static int parse_transform(const opt_iter *it, const char *s, unsigned *mask, int *choose)
{
    *choose = strcmp(s, "auto") == 0;
    if (*choose) {
        *mask = 0;
        return 0;
    }
    return parse_name_list(it, s, "a target transform (none, log, boxcox or auto)",
                           (1u << (RFX_TARGET_BOXCOX + 1)) - 1, transform_from_name, mask);
}

/* --candidates: regression methods */
static int parse_candidates(const opt_iter *it, const char *s, unsigned *mask)
{
    const unsigned allowed = RFX_AUTO_METHOD(RFX_METHOD_RIDGE) |
                             RFX_AUTO_METHOD(RFX_METHOD_BAYES) | RFX_AUTO_METHOD(RFX_METHOD_SRFE) |
                             RFX_AUTO_METHOD(RFX_METHOD_HARFE) | RFX_AUTO_METHOD(RFX_METHOD_PCE) |
                             RFX_AUTO_METHOD(RFX_METHOD_PROJECTED);
    return parse_name_list(it, s, "a method to compare (bayes, ridge, srfe, harfe, pce or "
                                  "projected)",
                           allowed, method_from_name, mask);
}

/* "T1,..,TD": numbers in [0, 1], not all zero. *n receives their count and
 * vals, when not NULL, the values (room for as many as the list has). */
static int parse_theta(const opt_iter *it, const char *s, double *vals, size_t *n)
{
    const char *p = s;
    size_t k = 0;
    int any = 0;
    for (;;) {
        char *end;
        if (*p == '\0' || isspace((unsigned char)*p))
            return cli_value_error(it, "'%s' is not a comma-separated list of numbers", s);
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || (*end != ',' && *end != '\0'))
            return cli_value_error(it, "'%s' is not a comma-separated list of numbers", s);
        if (errno == ERANGE || !(v >= 0 && v <= 1))
            return cli_value_error(it, "value %zu is %.*s; every weight must be in [0, 1]", k + 1,
                                   (int)(end - p), p);
        if (vals) vals[k] = v;
        any |= v > 0;
        k++;
        if (*end == '\0') break;
        p = end + 1;
    }
    if (!any) return cli_value_error(it, "every weight is zero; at least one must be > 0");
    *n = k;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* rfx fit                                                                   */
/* ------------------------------------------------------------------------ */

/* What rfx fit read from its options. The settings of the other methods
 * stay unused; the library's defaults hold for whatever was not given. */
typedef struct fit_opts {
    int method;                   /* enum fit_method, default FM_BAYES        */
    unsigned char given[O_COUNT]; /* the options that were given              */
    rfx_fit_params fit;           /* bayes, ridge; and D, seed, threads,
                                     lambda, standardisation for all          */
    kernel_opts ko;
    /* srfe, lasso, harfe */
    size_t sparsity, terms, folds;
    rfx_activation activation;
    rfx_weights weights;
    double weight_scale, eta;
    /* sinks, greedy */
    double box;                   /* --box C (0: chosen)                       */
    /* --kernel A+B.. or A*B..: the combination's terms */
    rfx_spectral_term kterms[16];
    rfx_spectral_combination combo;
    int sinks_classify;           /* sinks with --task classify               */
    size_t draws, refine_steps;   /* greedy                                   */
    rfx_greedy_update update;
    /* pce */
    size_t degree, degree_min, max_interaction;
    double q_norm;
    cli_dist dists[CLI_MAX_DISTS]; /* --uniform [NAME=]A,B, --normal [NAME=]MU,SD */
    size_t n_dists;
    rfx_pce_method pce_method;
    /* projected */
    rfx_projected_params proj;    /* k, surrogate, iterations, particles,
                                     patience; the rest set at the fit      */
    const char *theta;            /* --theta, checked: n_theta values in
                                     [0, 1], not all zero                    */
    size_t n_theta;
    const char *plot_path;        /* --plot                                  */
    const char *sample_weight_col; /* --sample-weight COL                     */
    size_t memory_limit;          /* --memory-limit, bytes (0: none)          */
    size_t chunk_rows;            /* --chunk-rows (0: the library's default)  */
    /* classify */
    rfx_classify_params cls;      /* loss, multi-class scheme, optimizer      */
    const char *class_weight;     /* --class-weight, syntax checked           */
    /* the target transform (every regression method) */
    unsigned transforms;          /* --transform: the mask of those named     */
    int transform_auto;           /* --transform auto                          */
    rfx_target_transform transform; /* the one applied (not auto)             */
    double transform_lambda;      /* its Box-Cox lambda                        */
    rfx_cmat Y;                   /* the target the fit sees: z = T(y)         */
    /* auto */
    rfx_auto_params autop;        /* candidates, folds, budget; seed, threads
                                     set at the fit                           */
} fit_opts;

/* --quiet: no progress and no summary on stderr. */
static int quiet(const fit_opts *o) { return o->given[O_QUIET]; }

/* Progress for a fit: on a terminal, or everywhere with --progress (then
 * as lines when stderr is not a terminal); never with --quiet. Sets up p
 * and returns whether to report. */
static int want_progress(const fit_opts *o, progress_state *p)
{
    memset(p, 0, sizeof *p);
    if (quiet(o)) return 0;
    const int tty = isatty(STDERR_FILENO);
    p->lines = !tty;
    return tty || o->given[O_PROGRESS];
}

/* "--name" (or "-x") of option id of c. */
static const char *option_name(const command *c, int id, char *buf, size_t size)
{
    for (const opt_spec *o = c->opts; o->id != O_END; ++o) {
        if (o->id != id) continue;
        if (o->long_name)
            snprintf(buf, size, "--%s", o->long_name);
        else
            snprintf(buf, size, "-%c", o->short_name);
        return buf;
    }
    snprintf(buf, size, "option %d", id);
    return buf;
}

/* An option given for a method it does not apply to: a usage error. */
static int fit_check_methods(const command *c, const fit_opts *o)
{
    for (size_t i = 0; i < sizeof FIT_OPT_METHODS / sizeof *FIT_OPT_METHODS; i++) {
        const struct fit_opt_methods *r = &FIT_OPT_METHODS[i];
        char list[96] = "", name[48];
        int total = 0, k = 0;
        if (!o->given[r->id] || (r->methods & FM(o->method))) continue;
        for (int m = 0; m < FM_COUNT; m++) total += (r->methods & FM(m)) != 0;
        for (int m = 0; m < FM_COUNT; m++) {
            if (!(r->methods & FM(m))) continue;
            size_t used = strlen(list);
            snprintf(list + used, sizeof list - used, "%s%s",
                     k == 0 ? "" : k == total - 1 ? " or " : ", ", FIT_METHODS[m]);
            k++;
        }
        return cli_usage_error(c, "%s applies to --method %s, not %s",
                               option_name(c, r->id, name, sizeof name), list,
                               FIT_METHODS[o->method]);
    }
    return 0;
}

/* The summary's last line: where the model went. */
static void print_model_line(FILE *e, const char *path)
{
    char q[1024];
    fprintf(e, "%-16s %s\n", "model", cli_escape(path, q, sizeof q));
}

/* The summary's "data" line: rows, inputs and the target's name. */
static void print_table_line(FILE *e, uint64_t rows, size_t cols, const char *target)
{
    char q[1024];
    fprintf(e, "%-16s %llu rows x %zu inputs, target '%s'\n", "data", (unsigned long long)rows,
            cols, cli_escape(target, q, sizeof q));
}

static void print_data_line(FILE *e, rfx_cmat X, const rfx_data *data)
{
    print_table_line(e, X.rows, X.cols, rfx_data_name(data, SIZE_MAX));
}

/* What a ridge or Bayesian fit chose, on stderr: the settings a user may
 * want to reuse. */
static void print_fit_report(const rfx_model *m, const rfx_fit_report *r, const rfx_fit_params *p,
                             int length_scale_given, uint64_t rows, const char *target,
                             double seconds, const char *path)
{
    rfx_model_info info;
    if (rfx_model_get_info(m, &info) != RFX_OK) return;
    FILE *e = stderr;
    fprintf(e, "%-16s %s\n", "method", rfx_method_name(info.method));
    fprintf(e, "%-16s %s", "kernel", rfx_kernel_name(info.features.kernel));
    if (info.features.kernel == RFX_KERNEL_MATERN) fprintf(e, " (nu = %g)", info.features.nu);
    fprintf(e, ", %s features, D = %zu, seed %llu\n", rfx_form_name(info.features.form),
            info.features.n_features, (unsigned long long)info.features.seed);
    print_table_line(e, rows, info.n_inputs, target);
    fprintf(e, "%-16s %.6g (%s%s)\n", "length scale", r->length_scale,
            length_scale_given ? "given" : "chosen",
            info.standardized ? ", standardised units" : "");
    if (!length_scale_given && r->n_candidates > 0)
        fprintf(e, "%-16s %zu length scales tried\n", "", r->n_candidates);
    if (p->learn_length_scales && info.features.length_scales) {
        fprintf(e, "%-16s", "length scales");
        for (size_t j = 0; j < info.n_inputs; ++j)
            fprintf(e, " %.4g", info.features.length_scales[j]);
        fprintf(e, " (learned, one per input)\n");
        fprintf(e, "%-16s %zu candidates; %s %.6g -> %.6g on the selection rows\n", "",
                r->learn_evaluations,
                info.method == RFX_METHOD_BAYES ? "log evidence per row" : "GCV score",
                r->learn_score_before, r->learn_score_after);
    }
    if (info.method == RFX_METHOD_BAYES) {
        fprintf(e, "%-16s %.6g (%s)\n", "noise variance", r->noise_var,
                p->noise_var > 0 ? "given" : "fitted");
        fprintf(e, "%-16s %.6g (%s)\n", "prior variance", r->prior_var,
                p->prior_var > 0 ? "given" : "fitted");
        fprintf(e, "%-16s %.6g (noise / prior variance)\n", "lambda", r->lambda);
        if (isfinite(r->score)) fprintf(e, "%-16s %.6g per row\n", "log evidence", r->score);
    } else {
        fprintf(e, "%-16s %.6g (%s)\n", "lambda", r->lambda,
                p->lambda >= 0 ? "given" : "chosen by GCV");
        /* GCV is only computed when it chose something */
        if (isfinite(r->score) && !(length_scale_given && p->lambda >= 0))
            fprintf(e, "%-16s %.6g\n", "GCV score", r->score);
    }
    fprintf(e, "%-16s %.3f s\n", "time", seconds);
    print_model_line(e, path);
}

/* The names of data's columns as the model's schema, when the file had a
 * header. Names the model cannot take (two inputs of one name) are left
 * out with a warning: the model then matches columns by position. */
static rfx_status name_inputs_from(rfx_model *model, size_t d,
                                   const char *(*name)(const void *table, size_t j),
                                   const void *table)
{
    const char **names = malloc(d * sizeof *names);
    if (!names) return rfx_model_set_names(model, NULL, NULL); /* nothing to lose but names */
    for (size_t j = 0; j < d; j++) names[j] = name(table, j);
    rfx_status st = rfx_model_set_names(model, names, name(table, SIZE_MAX));
    free(names);
    if (st == RFX_EINVAL) {
        cli_say("warning: %s; the model keeps no column names, and predict and eval will take "
                "its inputs by position", rfx_last_error());
        st = RFX_OK;
    }
    return st;
}

static const char *data_column(const void *table, size_t j) { return rfx_data_name(table, j); }
static const char *reader_column(const void *table, size_t j)
{
    return rfx_reader_name(table, j);
}

static rfx_status name_inputs(rfx_model *model, const rfx_data *data)
{
    if (!rfx_data_has_names(data)) return RFX_OK;
    return name_inputs_from(model, rfx_data_x(data).cols, data_column, data);
}

/* The smallest and largest value of each column of X (n >= 1 rows). */
static void column_ranges(rfx_cmat X, double *lo, double *hi)
{
    for (size_t j = 0; j < X.cols; j++) lo[j] = hi[j] = X.data[j];
    for (size_t i = 1; i < X.rows; i++)
        for (size_t j = 0; j < X.cols; j++) {
            const double v = X.data[i * X.stride + j];
            lo[j] = v < lo[j] ? v : lo[j];
            hi[j] = v > hi[j] ? v : hi[j];
        }
}

/* The range of each input over the training rows: the default input
 * distribution of rfx sobol for this model. */
static rfx_status set_input_box(rfx_model *model, rfx_cmat X)
{
    double *lo = malloc(2 * X.cols * sizeof *lo);
    if (!lo) return RFX_OK; /* the box is a convenience; the model stands without it */
    double *hi = lo + X.cols;
    column_ranges(X, lo, hi);
    rfx_status st = rfx_model_set_input_box(model, lo, hi);
    free(lo);
    return st;
}

/* Save a fitted model (with the target transform it was fitted through,
 * the names of the data's columns and the training box), or report why it
 * was not fitted or saved. */
static int save_fitted(const fit_opts *o, const rfx_data *data, rfx_status st, rfx_model *model,
                       const char *path)
{
    if (st == RFX_OK && o->transform != RFX_TARGET_NONE)
        st = rfx_model_set_target_transform(model, o->transform, o->transform_lambda);
    if (st == RFX_OK) st = name_inputs(model, data);
    if (st == RFX_OK) st = set_input_box(model, rfx_data_x(data));
    if (st == RFX_OK) st = rfx_model_save(model, path);
    return st == RFX_OK ? RC_OK : cli_fail(st);
}

/* bayes, ridge: rfx_model_fit. */
static int fit_rff(fit_opts *o, const rfx_data *data, const char *path)
{
    rfx_model *model = NULL;
    rfx_fit_report report;
    progress_state progress;
    memset(&report, 0, sizeof report);
    if (want_progress(o, &progress)) {
        o->fit.progress = cli_progress_show;
        o->fit.progress_user = &progress;
    }
    double t0 = cli_now_seconds();
    rfx_status st = rfx_model_fit(&o->fit, rfx_data_x(data), o->Y, &model, &report);
    double seconds = cli_now_seconds() - t0;
    cli_progress_end(&progress);
    int rc = save_fitted(o, data, st, model, path);
    if (rc == RC_OK && !quiet(o))
        print_fit_report(model, &report, &o->fit, o->ko.have_gamma || o->ko.have_length_scale,
                         rfx_data_x(data).rows, rfx_data_name(data, SIZE_MAX), seconds, path);
    rfx_model_free(model);
    return rc;
}

static void print_classify_report(const fit_opts *o, const rfx_model *m, const rfx_fit_report *r,
                                  uint64_t rows, const char *target, double seconds,
                                  const char *path);

/* The report of a fit from blocks: a classifier's or a regression's. */
static void print_any_report(const fit_opts *o, const rfx_model *m, const rfx_fit_report *r,
                             uint64_t rows, const char *target, double seconds, const char *path)
{
    if (o->method == FM_CLASSIFY)
        print_classify_report(o, m, r, rows, target, seconds, path);
    else
        print_fit_report(m, r, &o->fit, o->ko.have_gamma || o->ko.have_length_scale, rows,
                         target, seconds, path);
}

/* bayes, ridge, classify from DATA read in row blocks
 * (rfx_model_fit_source): memory D^2, a block and the selection rows,
 * whatever the rows; standard input is spooled to a temporary file for the
 * passes. */
static int fit_rff_stream(fit_opts *o, const char *data_path, const rfx_read_params *rp,
                          const char *path)
{
    progress_state unused;
    cli_stream *s = NULL;
    int rc = cli_stream_open(data_path, rp, NULL, 1, want_progress(o, &unused), &s);
    if (rc != RC_OK) return rc;
    rfx_reader *r = cli_stream_reader(s);
    o->fit.progress = cli_stream_fit_progress;
    o->fit.progress_user = s;
    rfx_model *model = NULL;
    rfx_fit_report report;
    memset(&report, 0, sizeof report);
    const double t0 = cli_now_seconds();
    rfx_status st = rfx_model_fit_source(&o->fit, cli_stream_source(s), &model, &report);
    const double seconds = cli_now_seconds() - t0;
    cli_stream_end(s);
    if (st == RFX_OK && rfx_reader_has_names(r))
        st = name_inputs_from(model, rfx_reader_inputs(r), reader_column, r);
    const double *lo, *hi;
    if (st == RFX_OK && cli_stream_box(s, &lo, &hi)) st = rfx_model_set_input_box(model, lo, hi);
    if (st == RFX_OK) st = rfx_model_save(model, path);
    rc = st == RFX_OK ? RC_OK : cli_fail(st);
    if (rc == RC_OK && !quiet(o))
        print_any_report(o, model, &report, cli_stream_rows(s), rfx_reader_name(r, SIZE_MAX),
                         seconds, path);
    rfx_model_free(model);
    cli_stream_free(s);
    return rc;
}

/* bayes, ridge over the ranks of an MPI job (--distributed): dist.c. */
static int fit_distributed(fit_opts *o, const char *data_path, const rfx_read_params *rp,
                           const char *path)
{
#ifdef RFX_HAVE_MPI
    progress_state unused;
    cli_mpi *c = NULL;
    cli_stream *s = NULL;
    rfx_model *model = NULL;
    rfx_fit_report report;
    memset(&report, 0, sizeof report);
    int rc = cli_mpi_begin(o->given[O_DETERMINISTIC], o->chunk_rows, 0, &c);
    if (rc != RC_OK) return rc;
    const int rank0 = cli_mpi_rank(c) == 0;
    rc = cli_mpi_open(c, data_path, rp, want_progress(o, &unused), &s);
    const double t0 = cli_now_seconds();
    if (rc == RC_OK) {
        o->fit.progress = cli_stream_fit_progress;
        o->fit.progress_user = s;
        rc = cli_mpi_fit(c, &o->fit, s, &model, &report);
        cli_stream_end(s);
    }
    const double seconds = cli_now_seconds() - t0;
    rfx_reader *r = s ? cli_stream_reader(s) : NULL;
    rfx_status st = RFX_OK;
    if (rc == RC_OK && rank0 && rfx_reader_has_names(r))
        st = name_inputs_from(model, rfx_reader_inputs(r), reader_column, r);
    if (rc == RC_OK && rank0 && st == RFX_OK) st = rfx_model_save(model, path);
    if (rc == RC_OK && st != RFX_OK) rc = cli_fail(st);
    if (rc == RC_OK && rank0 && !quiet(o))
        print_any_report(o, model, &report, cli_mpi_rows(c), rfx_reader_name(r, SIZE_MAX),
                         seconds, path);
    rfx_model_free(model);
    cli_stream_free(s);
    return cli_mpi_end(c, rc);
#else
    (void)o;
    (void)data_path;
    (void)rp;
    (void)path;
    cli_say("--distributed: this rfx was built without MPI (install Open MPI and rebuild)");
    return RC_USAGE;
#endif
}

/* srfe, lasso, harfe: what was used and chosen, on stderr. */
static void print_sparse_report(const fit_opts *o, const rfx_srfe_params *sp,
                                const rfx_srfe_report *r, const rfx_data *data, double seconds,
                                const char *path)
{
    FILE *e = stderr;
    rfx_cmat X = rfx_data_x(data);
    const int bpdn = sp->method == RFX_L1_METHOD_BPDN, htp = sp->method == RFX_L1_METHOD_HTP;
    const int kfold = sp->select == RFX_SELECT_KFOLD;
    char cv[64];
    if (kfold)
        snprintf(cv, sizeof cv, "chosen by %zu-fold cross-validation", sp->n_folds);
    else
        snprintf(cv, sizeof cv, "chosen by generalised cross-validation");
    fprintf(e, "%-16s %s (%s)\n", "method", FIT_METHODS[o->method],
            htp ? "hard thresholding pursuit" : bpdn ? "basis pursuit denoising" : "lasso");
    print_data_line(e, X, data);
    fprintf(e, "%-16s N = %zu, q = %zu inputs per feature, %s, %zu of %zu terms nonzero\n",
            "sparse features", r->n_features, r->sparsity,
            rfx_activation_name(sp->features.activation), r->n_nonzero, r->n_features);
    fprintf(e, "%-16s %s, scale %.6g (%s)\n", "weights", rfx_weights_name(sp->features.weights),
            r->weight_scale, sp->features.weight_scale > 0 ? "given" : cv);
    fprintf(e, "%-16s seed %llu, %s\n", "", (unsigned long long)sp->features.seed,
            sp->standardize ? "standardised inputs" : "inputs as they are");
    if (!htp)
        fprintf(e, "%-16s %.6g (%s)\n", "lambda", r->lambda,
                bpdn ? "the lasso penalty of the solution" : sp->lambda > 0 ? "given" : cv);
    if (o->method == FM_SRFE)
        fprintf(e, "%-16s %.6g (%s)\n", "eta", bpdn ? sp->eta : r->eta,
                bpdn ? "given" : "the equivalent: the lasso fit's training RMS residual");
    fprintf(e, "%-16s %.6g\n", "RMS residual", r->eta);
    if (isfinite(r->cv_mse)) fprintf(e, "%-16s %.6g\n", kfold ? "CV MSE" : "GCV score", r->cv_mse);
    fprintf(e, "%-16s %.3f s\n", "time", seconds);
    print_model_line(e, path);
}

/* srfe, lasso, harfe: rfx_srfe_params from its defaults and what was given. */
static rfx_srfe_params sparse_params(const fit_opts *o)
{
    rfx_srfe_params sp = rfx_srfe_params_default();
    if (o->method == FM_HARFE)
        sp.method = RFX_L1_METHOD_HTP;
    else
        sp.method = o->given[O_ETA] ? RFX_L1_METHOD_BPDN : RFX_L1_METHOD_LASSO;
    if (o->given[O_ETA]) sp.eta = o->eta;
    if (o->given[O_LAMBDA]) sp.lambda = o->fit.lambda;
    if (o->given[O_TERMS]) sp.sparsity = o->terms;
    if (o->given[O_FOLDS]) {
        sp.select = RFX_SELECT_KFOLD;
        sp.n_folds = o->folds;
    }
    if (o->given[O_NO_STANDARDIZE]) sp.standardize = 0;
    if (o->given[O_FEATURES]) sp.features.n_features = o->fit.features.n_features;
    if (o->given[O_SEED]) sp.features.seed = o->fit.features.seed;
    if (o->given[O_THREADS]) sp.features.n_threads = o->fit.features.n_threads;
    if (o->given[O_ACTIVATION]) sp.features.activation = o->activation;
    if (o->given[O_FORM]) sp.features.form = o->fit.features.form;
    if (o->given[O_WEIGHTS]) sp.features.weights = o->weights;
    if (o->given[O_WEIGHT_SCALE]) sp.features.weight_scale = o->weight_scale;
    if (o->given[O_SPARSITY]) sp.features.sparsity = o->sparsity;
    return sp;
}

/* srfe, lasso, harfe: rfx_srfe_fit. */
static int fit_sparse(const fit_opts *o, const rfx_data *data, const char *path)
{
    rfx_srfe_params sp = sparse_params(o);
    rfx_srfe_report report;
    rfx_model *model = NULL;
    progress_state progress;
    rfx_cmat X = rfx_data_x(data);
    memset(&report, 0, sizeof report);
    if (want_progress(o, &progress)) {
        sp.progress = cli_progress_show;
        sp.progress_user = &progress;
    }
    double t0 = cli_now_seconds();
    rfx_status st = rfx_srfe_fit(&sp, X, o->Y, &model, &report);
    double seconds = cli_now_seconds() - t0;
    cli_progress_end(&progress);
    int rc = save_fitted(o, data, st, model, path);
    if (rc == RC_OK && !quiet(o)) print_sparse_report(o, &sp, &report, data, seconds, path);
    rfx_model_free(model);
    return rc;
}

/* pce: the fit, on stderr. */
static void print_pce_report(const fit_opts *o, const rfx_pce_params *p, const rfx_pce *pce,
                             const rfx_data *data, double seconds, const char *path)
{
    FILE *e = stderr;
    rfx_cmat X = rfx_data_x(data);
    rfx_pce_info in;
    if (rfx_pce_get_info(pce, &in) != RFX_OK) return;
    const int lars = p->method == RFX_PCE_METHOD_LARS;
    fprintf(e, "%-16s pce (%s)\n", "method",
            lars ? "least-angle regression, corrected leave-one-out error" : "least squares");
    print_data_line(e, X, data);
    const rfx_marginal *mg = rfx_pce_marginals(pce);
    int fitted = 0; /* families fitted to the data (marginals_from_data) */
    for (size_t j = 0; j < X.cols && o->n_dists == 0; j++)
        fitted |= mg[j].kind != RFX_MARGINAL_UNIFORM;
    if (o->n_dists == 0 && !fitted) {
        fprintf(e, "%-16s uniform on each column's training [min, max]\n", "marginals");
    } else {
        if (fitted)
            fprintf(e, "%-16s fitted to the data (a lower corrected leave-one-out error than "
                    "uniform on the ranges):\n", "marginals");
        char lab[256];
        for (size_t j = 0; j < X.cols; j++) {
            cli_input_label(NULL, j, lab, sizeof lab);
            if (rfx_data_has_names(data))
                cli_escape(rfx_data_name(data, j), lab, sizeof lab);
            const char *head = j || fitted ? "" : "marginals";
            if (mg[j].kind == RFX_MARGINAL_NORMAL)
                fprintf(e, "%-16s %s normal N(%.6g, %.6g^2)\n", head, lab, mg[j].a, mg[j].b);
            else if (mg[j].kind == RFX_MARGINAL_LOGNORMAL)
                fprintf(e, "%-16s %s lognormal, log x ~ N(%.6g, %.6g^2)\n", head, lab, mg[j].a,
                        mg[j].b);
            else
                fprintf(e, "%-16s %s uniform [%.6g, %.6g]\n", head, lab, mg[j].a, mg[j].b);
        }
    }
    if (in.degree_min > 0 && in.degree_min < in.degree_max)
        fprintf(e, "%-16s %zu (chosen by the corrected leave-one-out error from %zu..%zu)\n",
                "degree", in.degree, in.degree_min, in.degree_max);
    else
        fprintf(e, "%-16s %zu\n", "degree", in.degree);
    if (in.q_norm < 1 || in.max_interaction > 0)
        fprintf(e, "%-16s q-norm %g, at most %zu inputs per term\n", "truncation", in.q_norm,
                in.max_interaction ? in.max_interaction : X.cols);
    if (in.n_screened > 0)
        fprintf(e, "%-16s %zu of %zu inputs left out (total Sobol index below a tenth of the "
                "first fit's relative corrected leave-one-out error); the basis on the other "
                "%zu\n", "screening", in.n_screened, X.cols, X.cols - in.n_screened);
    fprintf(e, "%-16s %zu of %zu candidates\n", "terms", in.n_terms, in.n_candidates);
    fprintf(e, "%-16s %.6g (relative %.6g, corrected %.6g)\n", "LOO error", in.loo_mse,
            in.loo_relative, in.loo_corrected);
    fprintf(e, "%-16s %.6g\n", "mean", in.mean);
    fprintf(e, "%-16s %.6g\n", "variance", in.variance);
    fprintf(e, "%-16s %.3f s\n", "time", seconds);
    print_model_line(e, path);
}

/* pce: rfx_pce_params from what was given: the marginals mg (one per
 * input) with --uniform or --normal, else (the library's choice) uniform
 * ones over the training range of each column; the basis given, or the
 * library's automatic one. */
static rfx_pce_params pce_params(const fit_opts *o, const rfx_marginal *mg)
{
    rfx_pce_params p = rfx_pce_params_default();
    if (o->n_dists > 0)
        p.marginals = mg;
    else
        p.marginals_from_data = 1;
    p.method = o->pce_method;
    p.degree_min = o->given[O_DEGREE_MIN] ? o->degree_min : 1;
    if (o->given[O_DEGREE])
        p.degree = o->degree;
    else
        p.auto_basis = 1;
    if (o->given[O_Q_NORM]) p.q_norm = o->q_norm;
    if (o->given[O_MAX_INTERACTION]) p.max_interaction = o->max_interaction;
    if (o->given[O_THREADS]) p.n_threads = o->fit.features.n_threads;
    return p;
}

/* The target column as a contiguous array (malloc'd), or NULL after
 * saying that memory ran out. */
static double *target_copy(rfx_cmat Y)
{
    double *y = malloc((Y.rows ? Y.rows : 1) * sizeof *y);
    if (!y) {
        cli_say("out of memory for %zu rows", Y.rows);
        return NULL;
    }
    for (size_t i = 0; i < Y.rows; i++) y[i] = Y.data[i * Y.stride];
    return y;
}

/* pce: the marginals of --uniform, --normal and --lognormal (mg, one per
 * column of data), an input not given one uniform on its column's training
 * range. */
static int pce_marginals(const fit_opts *o, const rfx_data *data, rfx_marginal *mg)
{
    rfx_cmat X = rfx_data_x(data);
    const size_t d = X.cols;
    rfx_marginal *range = malloc((d ? d : 1) * sizeof *range);
    const char **names = malloc((d ? d : 1) * sizeof *names);
    double *lo = malloc((d ? 2 * d : 1) * sizeof *lo);
    if (!range || !names || !lo) {
        free(range);
        free(names);
        free(lo);
        cli_say("out of memory for %zu inputs", d);
        return RC_INTERNAL;
    }
    column_ranges(X, lo, lo + d);
    cli_box_marginals(lo, lo + d, d, range);
    for (size_t j = 0; j < d; j++) names[j] = rfx_data_name(data, j);
    int rc = cli_resolve_dists(&cli_fit_command, rfx_data_has_names(data) ? names : NULL, d,
                               o->dists, o->n_dists, range, mg);
    free(range);
    free(names);
    free(lo);
    return rc;
}

/* pce: rfx_pce_fit, then a model of the expansion. */
static int fit_pce(const fit_opts *o, const rfx_data *data, const char *path)
{
    rfx_cmat X = rfx_data_x(data), Y = o->Y;
    const size_t n = X.rows, d = X.cols;
    rfx_marginal *mg = malloc((d ? d : 1) * sizeof *mg);
    double *y = mg ? target_copy(Y) : NULL;
    rfx_pce *pce = NULL;
    rfx_model *model = NULL;
    int rc;
    if (!y) {
        if (!mg) cli_say("out of memory for %zu rows", n);
        free(mg);
        return RC_INTERNAL;
    }
    if (o->n_dists > 0 && (rc = pce_marginals(o, data, mg)) != RC_OK) {
        free(mg);
        free(y);
        return rc;
    }
    rfx_pce_params p = pce_params(o, mg);
    double t0 = cli_now_seconds();
    rfx_status st = rfx_pce_fit(&p, X, y, &pce);
    double seconds = cli_now_seconds() - t0;
    if (st == RFX_OK) st = rfx_model_from_pce(pce, &model);
    rc = save_fitted(o, data, st, model, path);
    if (rc == RC_OK && !quiet(o)) print_pce_report(o, &p, pce, data, seconds, path);
    rfx_model_free(model);
    rfx_pce_free(pce);
    free(mg);
    free(y);
    return rc;
}

typedef struct pso_progress {
    size_t iterations; /* the swarm's maximum */
    double t0;         /* when the fit started */
} pso_progress;

/* rfx_progress_fn of a projected fit, on a terminal: one line per swarm
 * iteration (the library calls it after the initial swarm and after each
 * iteration with iteration / iterations). */
static int pso_progress_show(void *user, const char *stage, double fraction)
{
    const pso_progress *p = user;
    size_t t = (size_t)(fraction * (double)p->iterations + 0.5);
    if (t == 0)
        fprintf(stderr, "%s: initial swarm evaluated (%.1f s)\n", stage ? stage : "",
                cli_now_seconds() - p->t0);
    else
        fprintf(stderr, "%s: iteration %zu of at most %zu (%.1f s)\n", stage ? stage : "", t,
                p->iterations, cli_now_seconds() - p->t0);
    fflush(stderr);
    return 0;
}

/* What the loss of a projected fit measures. */
static const char *projected_loss_name(const rfx_projected_params *p, char *buf, size_t size)
{
    if (p->n_folds >= 2)
        snprintf(buf, size, "%zu-fold cross-validation of the surrogate", p->n_folds);
    else if (!p->theta)
        snprintf(buf, size, "the fast score (GCV of a ridge on 128 random features of the "
                            "scores)");
    else if (p->surrogate == RFX_PROJECTED_AUTO)
        snprintf(buf, size, "the chosen surrogate's own estimate");
    else if (p->surrogate == RFX_METHOD_RIDGE)
        snprintf(buf, size, "5-fold cross-validation of the ridge surrogate at its chosen "
                            "length scale and penalty");
    else if (p->surrogate == RFX_METHOD_SRFE)
        snprintf(buf, size, "5-fold cross-validation of the srfe surrogate at its chosen "
                            "weight scale, q, N and lambda");
    else if (p->surrogate == RFX_METHOD_PCE)
        snprintf(buf, size, "the pce surrogate's corrected leave-one-out error");
    else
        snprintf(buf, size, "5-fold cross-validation (bayes has no score of its own)");
    return buf;
}

/* projected: the fit, on stderr. */
static void print_projected_report(const rfx_projected_params *p, const rfx_projected_report *r,
                                   const rfx_model *model, const rfx_data *data, double seconds,
                                   const char *path)
{
    FILE *e = stderr;
    rfx_cmat X = rfx_data_x(data);
    rfx_projected_info in;
    char what[96];
    if (rfx_model_projected_info(model, &in) != RFX_OK) return;
    rfx_model_info si;
    const int have_si = rfx_model_get_info(in.surrogate, &si) == RFX_OK;
    fprintf(e, "%-16s projected (a %s surrogate%s on k = %zu kernel PCA scores)\n", "method",
            have_si ? rfx_method_name(si.method) : "?",
            have_si && si.target_transform == RFX_TARGET_LOG ? " of log y" : "", in.n_components);
    print_data_line(e, X, data);
    fprintf(e, "%-16s gamma %.6g (%s), %s\n", "kernel PCA", in.gamma,
            p->gamma > 0 ? "given" : "chosen", in.standardized ? "standardised inputs"
                                                            : "inputs as they are");
    fprintf(e, "%-16s relative MSE: %s\n", "loss", projected_loss_name(p, what, sizeof what));
    if (p->theta) {
        fprintf(e, "%-16s none: theta given\n", "swarm");
    } else {
        fprintf(e, "%-16s %zu particles, at most %zu iterations, patience %zu, seed %llu\n",
                "swarm", p->n_particles, p->iterations, p->patience,
                (unsigned long long)p->seed);
        fprintf(e, "%-16s %.6g\n", "theta_0 loss", r->theta0_loss);
        for (size_t t = 0; t <= r->n_iterations; t++)
            fprintf(e, "%-16s %zu %.6g\n", "iteration", t, r->history[t]);
    }
    char q[1024];
    for (size_t j = 0; j < in.n_inputs; j++)
        fprintf(e, "%-16s %s %.6g\n", "theta", cli_escape(rfx_data_name(data, j), q, sizeof q),
                in.theta[j]);
    if (!p->theta) fprintf(e, "%-16s %.6g\n", "search loss", r->search_loss);
    if (r->finalists > 0)
        fprintf(e, "%-16s %zu candidates (theta, gamma, k) by the %s surrogate's own %s\n",
                "finalists", r->finalists,
                rfx_method_name(p->surrogate == RFX_PROJECTED_AUTO ? RFX_METHOD_SRFE : p->surrogate),
                p->surrogate == RFX_METHOD_PCE ? "corrected leave-one-out error" : "GCV score");
    if (p->surrogate == RFX_PROJECTED_AUTO)
        fprintf(e, "%-16s ridge %.6g, srfe %.6g, pce %.6g (own relative error estimates on the "
                   "chosen projection's scores; the least chosen)\n",
                "surrogates", r->surrogate_scores[0], r->surrogate_scores[1],
                r->surrogate_scores[2]);
    if (p->surrogate == RFX_PROJECTED_AUTO &&
        !(isnan(r->surrogate_log_scores[0]) && isnan(r->surrogate_log_scores[1]) &&
          isnan(r->surrogate_log_scores[2])))
        fprintf(e, "%-16s ridge %.6g, srfe %.6g, pce %.6g (the same fitted to log y, predicting "
                   "exp of the fit: 5-fold CV of y)\n",
                "of log y", r->surrogate_log_scores[0], r->surrogate_log_scores[1],
                r->surrogate_log_scores[2]);
    fprintf(e, "%-16s %.6g\n", "final loss", r->loss);
    fprintf(e, "%-16s %zu in %zu iterations\n", "evaluations", r->evaluations, r->n_iterations);
    fprintf(e, "%-16s %.3f s\n", "time", seconds);
    print_model_line(e, path);
}

/* projected: rfx_projected_params from its defaults and what was given
 * (but --theta); with -D its surrogate's parameters fp and sp, the
 * projected fit's defaults with that many features (srfe without the
 * widening of its scale grid). */
static rfx_projected_params projected_params(const fit_opts *o, rfx_fit_params *fp,
                                             rfx_srfe_params *sp)
{
    rfx_projected_params p = o->proj;
    *fp = rfx_fit_params_default();
    *sp = rfx_srfe_params_default();
    if (o->given[O_FOLDS]) p.n_folds = o->folds;
    if (o->given[O_SEED]) p.seed = o->fit.features.seed;
    if (o->given[O_GAMMA]) p.gamma = o->ko.gamma;
    if (o->given[O_NO_STANDARDIZE]) p.standardize = 0;
    p.n_threads = o->fit.features.n_threads;
    if (o->given[O_FEATURES]) {
        fp->features.n_features = o->fit.features.n_features;
        sp->features.n_features = o->fit.features.n_features;
        sp->widen_rounds = 0;
        p.fit = fp;
        p.srfe = sp;
    }
    return p;
}

/* projected: rfx_projected_fit. */
static int fit_projected(const fit_opts *o, const rfx_data *data, const char *path)
{
    rfx_cmat X = rfx_data_x(data);
    const size_t d = X.cols;
    rfx_fit_params fp;
    rfx_srfe_params sp;
    rfx_projected_params p = projected_params(o, &fp, &sp);
    rfx_projected_report report;
    rfx_model *model = NULL;
    pso_progress progress;
    int rc;
    if (o->theta && o->n_theta != d) {
        cli_say("--theta: %zu values for %zu inputs; give one weight per input", o->n_theta, d);
        return RC_USAGE;
    }
    double *theta = malloc((d ? d : 1) * sizeof *theta);
    double *hist = malloc((p.iterations + 1) * sizeof *hist);
    double *given = o->theta ? malloc((d ? d : 1) * sizeof *given) : NULL;
    if (!theta || !hist || (o->theta && !given)) {
        free(theta);
        free(hist);
        free(given);
        cli_say("out of memory for %zu inputs", d);
        return RC_INTERNAL;
    }
    if (o->theta) { /* checked by parse_theta: d numbers separated by commas */
        const char *q = o->theta;
        for (size_t j = 0; j < d; j++) {
            char *end;
            given[j] = strtod(q, &end);
            q = *end ? end + 1 : end;
        }
        p.theta = given;
    }
    progress_state unused;
    memset(&progress, 0, sizeof progress);
    progress.iterations = p.iterations;
    if (want_progress(o, &unused)) { /* one line per iteration: terminal or not */
        p.progress = pso_progress_show;
        p.progress_user = &progress;
    }
    memset(&report, 0, sizeof report);
    report.theta = theta;
    report.history = hist;
    double t0 = cli_now_seconds();
    progress.t0 = t0;
    rfx_status st = rfx_projected_fit(&p, X, o->Y, &model, &report);
    double seconds = cli_now_seconds() - t0;
    rc = save_fitted(o, data, st, model, path);
    if (rc == RC_OK && !quiet(o)) print_projected_report(&p, &report, model, data, seconds, path);
    if (rc == RC_OK && o->plot_path) {
        char title[128];
        rfx_projected_info in;
        size_t k = rfx_model_projected_info(model, &in) == RFX_OK ? in.n_components
                                                                   : p.n_components;
        snprintf(title, sizeof title, "projected surrogate (%s, k = %zu): best loss",
                 rfx_method_name(p.surrogate), k);
        rc = cli_plot_history(o->plot_path, hist, report.n_iterations, title);
        char q[1024];
        if (rc == RC_OK && !quiet(o))
            fprintf(stderr, "%-16s %s\n", "plot", cli_escape(o->plot_path, q, sizeof q));
    }
    rfx_model_free(model);
    free(theta);
    free(hist);
    free(given);
    return rc;
}

/* classify: what was used and chosen, on stderr. */
static void print_classify_report(const fit_opts *o, const rfx_model *m, const rfx_fit_report *r,
                                  uint64_t rows, const char *target, double seconds,
                                  const char *path)
{
    FILE *e = stderr;
    rfx_model_info info;
    rfx_classifier_info ci;
    const double *classes;
    size_t C;
    if (rfx_model_get_info(m, &info) || rfx_model_classifier_info(m, &ci) ||
        rfx_model_classes(m, &classes, &C))
        return;
    const int lchosen = !(o->ko.have_gamma || o->ko.have_length_scale);
    const int lambda_chosen = !o->given[O_LAMBDA];
    char how[64];
    const int loo = (o->cls.loss == RFX_LOSS_SQUARED || o->cls.loss == RFX_LOSS_AUTO) &&
                    !o->class_weight;
    if (loo) snprintf(how, sizeof how, "chosen by the leave-one-out error");
    else if (o->given[O_FOLDS]) snprintf(how, sizeof how, "chosen by %zu-fold cross-validation", o->folds);
    else snprintf(how, sizeof how, "chosen on a holdout of a quarter of the rows");
    fprintf(e, "%-16s classify (%s loss", "method", rfx_loss_name(ci.loss));
    if (C > 2) fprintf(e, ", %s", ci.multiclass == RFX_MULTICLASS_SOFTMAX ? "softmax" : "one-vs-rest");
    fprintf(e, ", optimizer %s)\n", rfx_optimizer_name(o->cls.optimizer));
    fprintf(e, "%-16s %s", "kernel", rfx_kernel_name(info.features.kernel));
    if (info.features.kernel == RFX_KERNEL_MATERN) fprintf(e, " (nu = %g)", info.features.nu);
    fprintf(e, ", %s features, D = %zu, seed %llu\n", rfx_form_name(info.features.form),
            info.features.n_features, (unsigned long long)info.features.seed);
    print_table_line(e, rows, info.n_inputs, target);
    fprintf(e, "%-16s %zu: ", "classes", C);
    cli_print_label_list(e, classes, C, 20);
    fputc('\n', e);
    if (o->class_weight) fprintf(e, "%-16s %s\n", "class weights", o->class_weight);
    fprintf(e, "%-16s %.6g (%s%s)\n", "length scale", r->length_scale, lchosen ? how : "given",
            info.standardized ? ", standardised units" : "");
    fprintf(e, "%-16s %.6g (%s)\n", "lambda", r->lambda, lambda_chosen ? how : "given");
    if (r->n_candidates > 0) {
        fprintf(e, "%-16s %zu candidates\n", "", r->n_candidates);
        fprintf(e, "%-16s %.6g (%s)\n", "validation", r->score,
                ci.loss == RFX_LOSS_LOGISTIC ? "mean log-loss"
                : loo ? "leave-one-out error rate" : "error rate");
    }
    if (r->refine_holdout > 0 && r->refine_steps > 0)
        fprintf(e, "%-16s %zu Newton step%s of the squared hinge (on %zu held-out rows: %zu "
                "gained, %zu lost against least squares)\n", "refinement", r->refine_steps,
                r->refine_steps == 1 ? "" : "s", r->refine_holdout, r->refine_gained,
                r->refine_lost);
    else if (r->refine_holdout > 0)
        fprintf(e, "%-16s none (no gain on %zu held-out rows passed McNemar's test)\n",
                "refinement", r->refine_holdout);
    fprintf(e, "%-16s %.3f s\n", "time", seconds);
    print_model_line(e, path);
}

/* classify: rfx_model_fit with RFX_METHOD_CLASSIFY; --class-weight LABEL:W
 * pairs are placed on the sorted labels of the data. */
static int fit_classify(fit_opts *o, const rfx_data *data, const char *path)
{
    rfx_model *model = NULL;
    rfx_fit_report report;
    progress_state progress;
    rfx_cmat Y = o->Y;
    double *classes = NULL, *cw = NULL, *pl = NULL, *pw = NULL;
    size_t C = 0, np = 0;
    int rc = RC_OK;
    memset(&report, 0, sizeof report);
    memset(&progress, 0, sizeof progress);
    if (rfx_classes_find(Y.data, Y.rows, Y.stride, &classes, &C)) {
        cli_say("%s", rfx_last_error());
        return RC_INTERNAL;
    }
    if (C < 2) {
        char b[40];
        cli_format_label(Y.rows ? Y.data[0] : 0, b, sizeof b);
        cli_say("%s: every row of the target '%s' has the label %s; a classifier needs at least 2 "
                "classes", "fit", rfx_data_name(data, SIZE_MAX), b);
        rfx_buffer_free(classes);
        return RC_DATA;
    }
    if (o->class_weight && !o->cls.balanced) {
        opt_iter it = cli_opt_begin(&cli_fit_command, 0, NULL);
        snprintf(it.name, sizeof it.name, "--class-weight");
        parse_class_weights(&it, o->class_weight, NULL, NULL, &np); /* checked: counts */
        cw = malloc(C * sizeof *cw);
        pl = malloc(np * sizeof *pl);
        pw = malloc(np * sizeof *pw);
        if (!cw || !pl || !pw) {
            cli_say("out of memory for %zu class weights", C);
            rc = RC_INTERNAL;
            goto done;
        }
        parse_class_weights(&it, o->class_weight, pl, pw, &np); /* checked: the pairs */
        if (rfx_class_weights_map(classes, C, pl, pw, np, rfx_data_name(data, SIZE_MAX), cw)) {
            rc = cli_value_error(&it, "%s", rfx_last_error());
            goto done;
        }
        o->cls.class_weights = cw;
        o->cls.n_class_weights = C;
    }
    if (want_progress(o, &progress)) {
        o->fit.progress = cli_progress_show;
        o->fit.progress_user = &progress;
    }
    double t0 = cli_now_seconds();
    rfx_status st = rfx_model_fit(&o->fit, rfx_data_x(data), Y, &model, &report);
    double seconds = cli_now_seconds() - t0;
    cli_progress_end(&progress);
    rc = save_fitted(o, data, st, model, path);
    if (rc == RC_OK && !quiet(o))
        print_classify_report(o, model, &report, rfx_data_x(data).rows,
                              rfx_data_name(data, SIZE_MAX), seconds, path);
done:
    rfx_model_free(model);
    rfx_buffer_free(classes);
    free(cw);
    free(pl);
    free(pw);
    return rc;
}

/* auto: rfx_auto_fit, and the table of its candidates on stderr. */
static int fit_auto(fit_opts *o, const rfx_data *data, const char *path)
{
    rfx_cmat X = rfx_data_x(data);
    double *y = target_copy(rfx_data_y(data));
    if (!y) return RC_INTERNAL;
    rfx_model *model = NULL;
    rfx_auto_report r;
    progress_state progress;
    memset(&r, 0, sizeof r);
    if (want_progress(o, &progress)) {
        o->autop.progress = cli_progress_show;
        o->autop.progress_user = &progress;
    }
    const double t0 = cli_now_seconds();
    rfx_status st = rfx_auto_fit(&o->autop, X, y, &model, &r);
    const double seconds = cli_now_seconds() - t0;
    cli_progress_end(&progress);
    free(y);
    int rc = save_fitted(o, data, st, model, path);
    rfx_model_free(model);
    if (rc != RC_OK || quiet(o)) return rc;
    static const char *const OUTCOME[] = {"all folds", "raced out", "budget", "failed",
                                           "alone after racing", "not needed"};
    FILE *e = stderr;
    fprintf(e, "%-16s auto (%zu candidates, %zu-fold cross-validation, rows in a random order "
               "of seed %llu)\n",
            "method", r.n_candidates, o->autop.n_folds, (unsigned long long)o->autop.seed);
    fprintf(e, "  %-10s %-9s %7s %6s %12s %9s  %s\n", "method", "transform", "lambda", "folds",
            "cv rel. err", "seconds", "");
    for (size_t j = 0; j < r.n_candidates; j++) {
        const rfx_auto_candidate *a = &r.candidates[j];
        char lam[16] = "-";
        if (a->transform == RFX_TARGET_BOXCOX) snprintf(lam, sizeof lam, "%.3f", a->lambda);
        fprintf(e, "  %-10s %-9s %7s %6zu %12.5g %9.2f  %s%s\n", rfx_method_name(a->method),
                rfx_target_transform_name(a->transform), lam, a->folds, a->cv_error, a->seconds,
                OUTCOME[a->outcome], j == r.chosen ? "  <- chosen" : "");
    }
    const rfx_auto_candidate *w = &r.candidates[r.chosen];
    fprintf(e, "%-16s %s on the %s target (compared over %zu fold%s)\n", "chosen",
            rfx_method_name(w->method), rfx_target_transform_name(w->transform),
            r.compared_folds, r.compared_folds == 1 ? "" : "s");
    fprintf(e, "%-16s %.3f s (cross-validation %.3f s, final fit %.3f s)\n", "time", seconds,
            r.seconds_cv, r.seconds_final);
    print_model_line(e, path);
    return RC_OK;
}

/* The target the fit sees: y, or z = T(y) for --transform T (auto: T
 * chosen by rfx_auto_fit over the method alone). z is allocated into *buf. */
static int apply_transform(fit_opts *o, const rfx_data *data, const char *data_path,
                           double **buf)
{
    rfx_cmat X = rfx_data_x(data), Y = rfx_data_y(data);
    o->Y = Y;
    if (o->method == FM_CLASSIFY || o->method == FM_AUTO || o->sinks_classify) return RC_OK;
    if (!o->transform_auto && !(o->transforms & ~RFX_AUTO_TRANSFORM(RFX_TARGET_NONE)))
        return RC_OK;
    const size_t n = Y.rows;
    double *z = target_copy(Y);
    if (!z) return RC_INTERNAL;
    *buf = z;
    const int named = o->transforms & ~RFX_AUTO_TRANSFORM(RFX_TARGET_NONE);
    for (size_t i = 0; named && i < n; i++)
        if (!(z[i] > 0)) {
            cli_say("%s: the target of data row %zu (the first is 1) is %g; --transform %s needs every target "
                    "> 0",
                    data_path, i + 1, z[i],
                    rfx_target_transform_name((o->transforms & RFX_AUTO_TRANSFORM(RFX_TARGET_LOG))
                                                  ? RFX_TARGET_LOG
                                                  : RFX_TARGET_BOXCOX));
            return RC_DATA;
        }
    rfx_status st = RFX_OK;
    if (o->transform_auto) {
        /* the method's cross-validation over the transforms, then T */
        static const rfx_method M[FM_COUNT] = {
            [FM_BAYES] = RFX_METHOD_BAYES, [FM_RIDGE] = RFX_METHOD_RIDGE,
            [FM_SRFE] = RFX_METHOD_SRFE,   [FM_LASSO] = RFX_METHOD_SRFE,
            [FM_HARFE] = RFX_METHOD_HARFE, [FM_PCE] = RFX_METHOD_PCE,
            [FM_PROJECTED] = RFX_METHOD_PROJECTED,
        };
        rfx_auto_params ap = o->autop;
        ap.methods = RFX_AUTO_METHOD(M[o->method]);
        ap.race_factor = INFINITY;
        rfx_auto_report r;
        st = rfx_auto_fit(&ap, X, z, NULL, &r); /* the choice only: the method fits below */
        if (st == RFX_OK) {
            const rfx_auto_candidate *w = &r.candidates[r.chosen];
            o->transform = w->transform;
        }
        if (st == RFX_OK && !quiet(o)) {
            const rfx_auto_candidate *w = &r.candidates[r.chosen];
            fprintf(stderr, "%-16s %s (chosen by %zu-fold cross-validation of %s:", "transform",
                    rfx_target_transform_name(w->transform), ap.n_folds,
                    rfx_method_name(w->method));
            for (size_t j = 0; j < r.n_candidates; j++)
                fprintf(stderr, " %s %.4g%s", rfx_target_transform_name(r.candidates[j].transform),
                        r.candidates[j].cv_error, j + 1 < r.n_candidates ? "," : ")\n");
        }
    } else {
        o->transform = (o->transforms & RFX_AUTO_TRANSFORM(RFX_TARGET_LOG)) ? RFX_TARGET_LOG
                                                                            : RFX_TARGET_BOXCOX;
    }
    if (st == RFX_OK && o->transform == RFX_TARGET_BOXCOX)
        st = rfx_target_boxcox_lambda(z, n, &o->transform_lambda);
    if (st == RFX_OK) st = rfx_target_forward(o->transform, o->transform_lambda, z, n, z);
    if (st != RFX_OK) return cli_fail(st);
    if (o->transform != RFX_TARGET_NONE && o->method != FM_AUTO && !quiet(o)) {
        char lam[32] = "";
        if (o->transform == RFX_TARGET_BOXCOX)
            snprintf(lam, sizeof lam, ", lambda %.4g", o->transform_lambda);
        fprintf(stderr, "%-16s the model is fitted to %s(y)%s and predicts y\n", "target",
                rfx_target_transform_name(o->transform), lam);
    }
    o->Y = rfx_cmat_of(z, n, 1);
    return RC_OK;
}

/* sinks, greedy: the feature distribution of the options, for inputs of
 * dimension d (standardised unless --no-standardize). */
static rfx_features_params sinks_features(const fit_opts *o, size_t d)
{
    rfx_features_params fp = o->fit.features;
    fp.activation = o->given[O_ACTIVATION] ? o->activation : RFX_ACTIVATION_COS;
    if (o->given[O_WEIGHTS]) {
        fp.weights = o->weights;
        fp.weight_scale = o->given[O_WEIGHT_SCALE] ? o->weight_scale : 1.0;
        fp.length_scale = 1.0; /* not read: the weights are the activation's */
    } else if (!(fp.length_scale > 0)) {
        fp.length_scale = sqrt((double)d); /* a kitchen sink's distribution is not chosen */
    }
    if (o->given[O_SPARSITY]) fp.sparsity = o->sparsity;
    return fp;
}

/* sinks, greedy: rfx_sinks_fit (squared loss), rfx_sinks_classify (with
 * --task classify) or rfx_greedy_fit on the standardised inputs, the
 * scaler then stored in the model. */
static int fit_sinks_greedy(const fit_opts *o, const rfx_data *data, const char *path)
{
    const rfx_cmat X = rfx_data_x(data);
    const size_t n = X.rows, d = X.cols;
    const int greedy = o->method == FM_GREEDY, standardize = o->fit.standardize;
    double *Xs = NULL, *mean = NULL, *scale = NULL, *y = target_copy(o->Y);
    rfx_features *f = NULL;
    rfx_model *model = NULL;
    rfx_status st = RFX_OK;
    if (!y) {
        cli_say("out of memory for %zu targets", n);
        return RC_INTERNAL;
    }
    rfx_cmat Xf = X;
    if (standardize) {
        Xs = malloc((n ? n : 1) * d * sizeof *Xs);
        mean = calloc(d, sizeof *mean);
        scale = calloc(d, sizeof *scale);
        if (!Xs || !mean || !scale) {
            cli_say("out of memory for the standardised inputs (%zu x %zu)", n, d);
            free(Xs);
            free(mean);
            free(scale);
            free(y);
            return RC_INTERNAL;
        }
        for (size_t j = 0; j < d; j++) {
            double m = 0, v = 0;
            for (size_t i = 0; i < n; i++) m += X.data[i * X.stride + j];
            m /= (double)n;
            for (size_t i = 0; i < n; i++) {
                double t = X.data[i * X.stride + j] - m;
                v += t * t;
            }
            double sd = sqrt(v / (double)n);
            mean[j] = m;
            scale[j] = sd > 0 && isfinite(sd) ? sd : 1.0; /* a constant column stays as it is */
            for (size_t i = 0; i < n; i++)
                Xs[i * d + j] = (X.data[i * X.stride + j] - m) / scale[j];
        }
        Xf = rfx_cmat_of(Xs, n, d);
    }
    rfx_features_params fp = sinks_features(o, d);
    rfx_sinks_report sr;
    rfx_greedy_report gr;
    memset(&sr, 0, sizeof sr);
    memset(&gr, 0, sizeof gr);
    double t0 = cli_now_seconds();
    if (greedy) {
        rfx_greedy_params gp = rfx_greedy_params_default();
        gp.features = fp;
        gp.features.form = o->given[O_FORM] ? o->fit.features.form : RFX_FORM_COS_BIAS;
        if (o->given[O_TERMS]) gp.n_terms = o->terms;
        gp.n_candidates = o->draws;
        gp.refine_steps = o->refine_steps;
        gp.update = o->update;
        gp.fit_intercept = o->fit.fit_intercept;
        gp.n_threads = o->fit.features.n_threads;
        st = rfx_greedy_fit(Xf, y, &gp, &model, &gr, NULL);
    } else {
        rfx_sinks_params sp = rfx_sinks_params_default();
        sp.C = o->box; /* 0: chosen by cross-validation */
        sp.fit_intercept = o->fit.fit_intercept;
        sp.n_threads = o->fit.features.n_threads;
        if (o->sinks_classify)
            sp.loss = o->cls.loss == RFX_LOSS_LOGISTIC ? RFX_SINKS_LOSS_LOGISTIC
                                                       : RFX_SINKS_LOSS_SQUARED_HINGE;
        st = rfx_features_create(&fp, d, &f);
        if (!st && !(o->box > 0) && n < 2 * RFX_SINKS_CV_FOLDS) {
            char msg[160];
            snprintf(msg, sizeof msg, "sinks: choosing the box by %d-fold cross-validation "
                                      "needs at least %d rows, got %zu (give --box)",
                     RFX_SINKS_CV_FOLDS, 2 * RFX_SINKS_CV_FOLDS, n);
            st = rfx_set_error(RFX_EDIM, msg);
        }
        if (!st)
            st = o->sinks_classify ? rfx_sinks_classify(f, Xf, y, &sp, &model, &sr)
                                   : rfx_sinks_fit(f, Xf, y, &sp, &model, &sr);
    }
    double seconds = cli_now_seconds() - t0;
    if (!st && standardize) st = rfx_model_set_scaler(model, mean, scale);
    int rc = save_fitted(o, data, st, model, path);
    if (rc == RC_OK && !quiet(o)) {
        FILE *e = stderr;
        const rfx_features *mf = rfx_model_features(model);
        rfx_features_params used = rfx_features_get_params(mf);
        fprintf(e, "method           %s\n",
                greedy ? (o->update == RFX_GREEDY_RELAXED ? "greedy (relaxed greedy fit)"
                                                          : "greedy (orthogonal greedy fit)")
                : o->sinks_classify ? "sinks (random kitchen sinks classifier)"
                                    : "sinks (random kitchen sinks)");
        print_data_line(e, X, data);
        const char *phase = used.form == RFX_FORM_PHASE_FREE ? " (phase-free)" : "";
        if (o->given[O_WEIGHTS])
            fprintf(e, "features         K = %zu, %s%s of %s frequencies, scale %g, seed %llu\n",
                    rfx_features_output_dim(mf), rfx_activation_name(used.activation), phase,
                    rfx_weights_name(used.weights), used.weight_scale,
                    (unsigned long long)used.seed);
        else
            fprintf(e, "features         K = %zu, %s%s of the %s kernel's frequencies, length "
                       "scale %g, seed %llu\n", rfx_features_output_dim(mf),
                    rfx_activation_name(used.activation), phase, rfx_kernel_name(used.kernel),
                    fp.length_scale, (unsigned long long)used.seed);
        fprintf(e, "inputs           %s\n", standardize ? "standardised" : "as they are");
        if (greedy) {
            fprintf(e, "terms            %zu (%zu in the span of the others, weight 0), %zu "
                       "candidates each, %zu refining steps\n", gr.n_terms, gr.n_dependent,
                    o->draws, o->refine_steps);
            fprintf(e, "training MSE     %g\n", gr.train_mse);
        } else {
            rfx_classifier_info ci;
            memset(&ci, 0, sizeof ci);
            if (o->sinks_classify && rfx_model_classifier_info(model, &ci)) ci.n_columns = 1;
            const size_t cols = o->sinks_classify ? ci.n_columns : 1;
            if (o->sinks_classify)
                fprintf(e, "classes          %zu (%s loss, %s)\n", ci.n_classes,
                        rfx_loss_name(ci.loss), cols > 1 ? "one-vs-rest" : "one column");
            fprintf(e, "box              C = %g: |alpha_k| <= C / K; %zu of %zu weights at the "
                       "bound\n", sr.C, sr.n_at_bound, cols * rfx_features_output_dim(mf));
            if (sr.n_cv) {
                fprintf(e, "                 chosen by %d-fold cross-validation, held-out %s:",
                        RFX_SINKS_CV_FOLDS, o->sinks_classify ? "loss" : "MSE");
                for (size_t g = 0; g < sr.n_cv; g++)
                    fprintf(e, " %g (C = %g)%s", sr.cv_loss[g], sr.cv_C[g],
                            g + 1 < sr.n_cv ? "," : "\n");
            }
            fprintf(e, "solver           %zu accelerated gradient iterations, %zu Newton "
                       "steps, KKT residual %.3g (%s)\n", sr.iterations, sr.newton_steps,
                    sr.kkt, sr.converged ? "converged" : "not converged within the budget");
            if (o->sinks_classify)
                fprintf(e, "objective        %g (the mean training loss%s)\n", sr.objective,
                        cols > 1 ? " of a column" : "");
            else
                fprintf(e, "objective        %g (half the training MSE)\n", sr.objective);
        }
        fprintf(e, "time             %.3f s\n", seconds);
        print_model_line(e, path);
    }
    rfx_model_free(model);
    rfx_features_free(f);
    free(Xs);
    free(mean);
    free(scale);
    free(y);
    return rc;
}

/* --frequencies FILE: the rows, read once; row j is frequency j. */
static rfx_data *freq_table;
static char freq_path[1100];

static rfx_status table_sampler(void *user, rfx_rng *rng, size_t j, size_t d, double *w)
{
    (void)user;
    (void)rng;
    const rfx_cmat W = rfx_data_x(freq_table);
    char msg[1200];
    if (W.cols != d) {
        snprintf(msg, sizeof msg, "%s has %zu columns, the data %zu inputs", freq_path, W.cols, d);
        return rfx_set_error(RFX_EDIM, msg);
    }
    if (j >= W.rows) {
        snprintf(msg, sizeof msg, "%s has %zu rows, too few for frequency %zu (one row per "
                                  "frequency: give a smaller -D)", freq_path, W.rows, j + 1);
        return rfx_set_error(RFX_EDIM, msg);
    }
    memcpy(w, W.data + j * W.stride, d * sizeof *w);
    return RFX_OK;
}

/* --kernel TERM+TERM.. or TERM*TERM..: TERM = NAME[:L[:W]] (W in sums only). */
static int parse_combination(const opt_iter *it, const char *s, fit_opts *o)
{
    const size_t cap = sizeof o->kterms / sizeof *o->kterms;
    const int plus = strchr(s, '+') != NULL, times = strchr(s, '*') != NULL;
    if (plus && times)
        return cli_value_error(it, "'%s' mixes + and *: a kernel is a sum or a product of terms",
                               s);
    char buf[512];
    if (strlen(s) >= sizeof buf) return cli_value_error(it, "the kernel '%.40s..' is too long", s);
    memcpy(buf, s, strlen(s) + 1);
    size_t k = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, "+*", &save); t; t = strtok_r(NULL, "+*", &save)) {
        if (k == cap) return cli_value_error(it, "at most %zu terms in a kernel", cap);
        rfx_spectral_term *term = &o->kterms[k++];
        memset(term, 0, sizeof *term);
        term->length_scale = 1.0;
        term->weight = 1.0;
        char *ls = strchr(t, ':'), *wt = NULL;
        if (ls) {
            *ls++ = 0;
            if ((wt = strchr(ls, ':'))) *wt++ = 0;
        }
        if (rfx_kernel_from_name(t, &term->kernel) != RFX_OK ||
            term->kernel == RFX_KERNEL_CUSTOM) {
            rfx_clear_error();
            return cli_value_error(it, "unknown kernel '%s' in '%s' (a term is gaussian, "
                                   "laplacian, cauchy or matern)", t, s);
        }
        char *end;
        if (ls && (term->length_scale = strtod(ls, &end), *end || !*ls ||
                   !(term->length_scale > 0) || !isfinite(term->length_scale)))
            return cli_value_error(it, "the length scale '%s' of term %zu in '%s' is not a "
                                   "number > 0", ls, k, s);
        if (wt && times)
            return cli_value_error(it, "term %zu of '%s' has a weight; a product's terms take "
                                   "none", k, s);
        if (wt && (term->weight = strtod(wt, &end), *end || !*wt || !(term->weight >= 0) ||
                   !isfinite(term->weight)))
            return cli_value_error(it, "the weight '%s' of term %zu in '%s' is not a number "
                                   ">= 0", wt, k, s);
    }
    if (k == 0) return cli_value_error(it, "no kernel in '%s'", s);
    o->combo.product = times;
    o->combo.n_terms = k;
    o->combo.terms = o->kterms;
    o->fit.features.kernel = RFX_KERNEL_CUSTOM;
    o->fit.features.spectral = rfx_spectral_combined;
    o->fit.features.spectral_user = &o->combo;
    return 0;
}

static int cmd_fit_main(const command *c, int argc, char **argv);

static int cmd_fit(const command *c, int argc, char **argv)
{
    int rc = cmd_fit_main(c, argc, argv);
    rfx_data_free(freq_table);
    freq_table = NULL;
    return rc;
}

static int cmd_fit_main(const command *c, int argc, char **argv)
{
    fit_opts o;
    rfx_read_params rp = rfx_read_params_default();
    const char *data_path = NULL, *model_path = NULL;
    opt_iter it = cli_opt_begin(c, argc, argv);
    const char *v;
    int id;

    memset(&o, 0, sizeof o);
    o.method = FM_BAYES;
    o.fit = rfx_fit_params_default();
    o.q_norm = 1.0;
    o.pce_method = RFX_PCE_METHOD_LARS;
    o.proj = rfx_projected_params_default();
    o.cls = rfx_classify_params_default();
    o.cls.loss = RFX_LOSS_AUTO; /* the tool's default: least squares, refined */
    o.autop = rfx_auto_params_default();
    o.box = 0; /* chosen */
    o.draws = rfx_greedy_params_default().n_candidates;
    o.update = rfx_greedy_params_default().update;
    o.refine_steps = rfx_greedy_params_default().refine_steps;
    rp.target = "-1";
    {
        const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        if (pages > 0 && page > 0 && (double)pages * (double)page < (double)SIZE_MAX)
            o.memory_limit = (size_t)pages / 4 * 3 * (size_t)page;
    }
    int task_classify = 0;
    while ((id = cli_opt_next(&it, &v)) != OPT_DONE) {
        int bad = 0;
        switch (id) {
        case OPT_ERROR: return RC_USAGE;
        case OPT_HELP: return cli_print_command_help(c);
        case OPT_POSITIONAL:
            if (data_path) return cli_usage_error(c, "unexpected argument '%s' (one DATA file)", v);
            data_path = v;
            break;
        case O_TARGET: rp.target = v; break;
        case O_OUTPUT: model_path = v; break;
        case O_METHOD: bad = parse_fit_method(&it, v, &o.method); break;
        case O_TASK:
            if (strcmp(v, "classify") == 0) task_classify = 1;
            else if (strcmp(v, "regression") == 0) task_classify = 0;
            else bad = cli_value_error(&it, "unknown task '%s' (regression or classify)", v);
            break;
        case O_LOSS: bad = parse_loss(&it, v, &o.cls.loss); break;
        case O_MULTICLASS: bad = parse_multiclass(&it, v, &o.cls.multiclass); break;
        case O_OPTIMIZER: bad = parse_optimizer(&it, v, &o.cls.optimizer); break;
        case O_CLASS_WEIGHT: {
            size_t k = 0;
            bad = parse_class_weights(&it, v, NULL, NULL, &k);
            o.class_weight = v;
            break;
        }
        case O_KERNEL:
            bad = strpbrk(v, "+*:") ? parse_combination(&it, v, &o)
                                    : cli_parse_kernel(&it, v, &o.fit.features.kernel);
            break;
        case O_FREQUENCIES: {
            char q[1024];
            cli_escape(v, q, sizeof q);
            snprintf(freq_path, sizeof freq_path, "--frequencies %s", q);
            rfx_read_params fr = rfx_read_params_default();
            fr.target = NULL;
            rfx_data_free(freq_table);
            freq_table = NULL;
            rfx_status fst = rfx_data_read(v, &fr, &freq_table);
            if (fst != RFX_OK) return cli_fail(fst);
            o.fit.features.kernel = RFX_KERNEL_CUSTOM;
            o.fit.features.spectral = table_sampler;
            o.fit.features.spectral_user = NULL;
            break;
        }
        case O_NU: bad = cli_parse_nu(&it, v, &o.fit.features.nu); o.ko.have_nu = 1; break;
        case O_FORM: bad = cli_parse_form(&it, v, &o.fit.features.form); break;
        case O_STRUCTURE: bad = cli_parse_structure(&it, v, &o.fit.features.structure); break;
        case O_FEATURES: bad = cli_parse_size(&it, v, 1, &o.fit.features.n_features); break;
        case O_SEED: bad = cli_parse_seed(&it, v, &o.fit.features.seed); break;
        case O_LENGTH_SCALE:
            bad = cli_parse_positive(&it, v, &o.fit.features.length_scale);
            o.ko.have_length_scale = 1;
            break;
        case O_GAMMA: bad = cli_parse_positive(&it, v, &o.ko.gamma); o.ko.have_gamma = 1; break;
        case O_LENGTH_SCALES:
            if (strcmp(v, "learn") == 0) o.fit.learn_length_scales = 1;
            else bad = cli_value_error(&it, "expected 'learn', got '%s'", v);
            break;
        case O_LEARN_ITERATIONS: bad = cli_parse_size(&it, v, 1, &o.fit.learn_iterations); break;
        case O_LAMBDA: bad = cli_parse_nonnegative(&it, v, &o.fit.lambda); break;
        case O_NOISE_VAR: bad = cli_parse_positive(&it, v, &o.fit.noise_var); break;
        case O_PRIOR_VAR: bad = cli_parse_positive(&it, v, &o.fit.prior_var); break;
        case O_NO_STANDARDIZE: o.fit.standardize = 0; break;
        case O_NO_INTERCEPT: o.fit.fit_intercept = 0; break;
        case O_THREADS: bad = cli_parse_threads(&it, v, &o.fit.features.n_threads); break;
        case O_SPARSITY: bad = cli_parse_size(&it, v, 1, &o.sparsity); break;
        case O_ACTIVATION: bad = parse_activation(&it, v, &o.activation); break;
        case O_WEIGHTS: bad = parse_weight_dist(&it, v, &o.weights); break;
        case O_WEIGHT_SCALE: bad = cli_parse_positive(&it, v, &o.weight_scale); break;
        case O_ETA: bad = cli_parse_positive(&it, v, &o.eta); break;
        case O_TERMS: bad = cli_parse_size(&it, v, 1, &o.terms); break;
        case O_FOLDS: bad = cli_parse_size(&it, v, 2, &o.folds); break;
        case O_DEGREE: bad = cli_parse_size(&it, v, 1, &o.degree); break;
        case O_DEGREE_MIN: bad = cli_parse_size(&it, v, 1, &o.degree_min); break;
        case O_Q_NORM:
            bad = cli_parse_positive(&it, v, &o.q_norm);
            if (!bad && o.q_norm > 1) bad = cli_value_error(&it, "must be in (0, 1], got %s", v);
            break;
        case O_MAX_INTERACTION: bad = cli_parse_size(&it, v, 1, &o.max_interaction); break;
        case O_PCE_METHOD: bad = parse_pce_method(&it, v, &o.pce_method); break;
        case O_K: bad = cli_parse_size(&it, v, 1, &o.proj.n_components); break;
        case O_SURROGATE: bad = parse_surrogate(&it, v, &o.proj.surrogate); break;
        case O_ITERATIONS: bad = cli_parse_size(&it, v, 1, &o.proj.iterations); break;
        case O_PARTICLES: bad = cli_parse_size(&it, v, 1, &o.proj.n_particles); break;
        case O_PATIENCE: bad = cli_parse_size(&it, v, 0, &o.proj.patience); break;
        case O_THETA: bad = parse_theta(&it, v, NULL, &o.n_theta); o.theta = v; break;
        case O_PLOT: o.plot_path = v; break;
        case O_TRANSFORM: bad = parse_transform(&it, v, &o.transforms, &o.transform_auto); break;
        case O_BUDGET: bad = cli_parse_positive(&it, v, &o.autop.budget); break;
        case O_CANDIDATES: bad = parse_candidates(&it, v, &o.autop.methods); break;
        case O_UNIFORM:
        case O_NORMAL:
        case O_LOGNORMAL:
            if (o.n_dists == CLI_MAX_DISTS)
                return cli_usage_error(c, "more than %d --uniform and --normal", CLI_MAX_DISTS);
            bad = cli_parse_dist(&it, v, cli_dist_kind(id), &o.dists[o.n_dists++]);
            break;
        case O_DELIMITER:
        case O_NO_HEADER: bad = cli_parse_read_option(&it, id, v, &rp); break;
        case O_PROGRESS:
        case O_QUIET: break; /* read from given[] */
        case O_SAMPLE_WEIGHT: o.sample_weight_col = v; break;
        case O_MEMORY_LIMIT: bad = cli_parse_bytes(&it, v, &o.memory_limit); break;
        case O_DISTRIBUTED:
        case O_DETERMINISTIC: break;
        case O_CHUNK_ROWS: bad = cli_parse_size(&it, v, 1, &o.chunk_rows); break;
        case O_BOX:
            if (strcmp(v, "inf") == 0) o.box = INFINITY;
            else bad = cli_parse_positive(&it, v, &o.box);
            break;
        case O_DRAWS: bad = cli_parse_size(&it, v, 1, &o.draws); break;
        case O_REFINE_STEPS: bad = cli_parse_size(&it, v, 0, &o.refine_steps); break;
        case O_UPDATE:
            if (strcmp(v, "orthogonal") == 0) o.update = RFX_GREEDY_ORTHOGONAL;
            else if (strcmp(v, "relaxed") == 0) o.update = RFX_GREEDY_RELAXED;
            else bad = cli_value_error(&it, "unknown update '%s' (orthogonal or relaxed)", v);
            break;
        default: return cli_usage_error(c, "internal: unhandled option %s", it.name);
        }
        if (bad) return RC_USAGE;
        if (id > 0 && id < O_COUNT) o.given[id] = 1;
    }
    if (o.given[O_SAMPLE_WEIGHT] && o.transform_auto)
        return cli_usage_error(c, "--sample-weight with --transform auto: the comparison of the "
                                  "transforms takes no weights (give the transform)");
    if (o.given[O_PROGRESS] && o.given[O_QUIET])
        return cli_usage_error(c, "--progress and --quiet contradict each other: give one");
    if (!data_path) return cli_usage_error(c, "missing DATA, the CSV or .npy file to fit");
    if (!model_path) return cli_usage_error(c, "missing -o MODEL, where to write the model");
    if (task_classify && o.given[O_METHOD] && o.method != FM_CLASSIFY && o.method != FM_SINKS)
        return cli_usage_error(c, "--task classify fits --method classify or sinks, not %s",
                               FIT_METHODS[o.method]);
    if (o.given[O_TASK] && !task_classify && o.method == FM_CLASSIFY)
        return cli_usage_error(c, "--method classify is not a regression (--task regression)");
    if (task_classify && o.method == FM_SINKS) {
        o.sinks_classify = 1;
        if (!o.given[O_LOSS]) o.cls.loss = RFX_LOSS_LOGISTIC;
        if (o.cls.loss != RFX_LOSS_LOGISTIC && o.cls.loss != RFX_LOSS_SQUARED_HINGE)
            return cli_usage_error(c, "--method sinks --task classify takes --loss logistic or "
                                      "squared-hinge, not %s", rfx_loss_name(o.cls.loss));
        if (o.given[O_TRANSFORM])
            return cli_usage_error(c, "--transform applies to regression, not --task classify");
    } else if (task_classify) {
        o.method = FM_CLASSIFY;
    } else if (o.method == FM_SINKS && o.given[O_LOSS]) {
        return cli_usage_error(c, "--loss applies to --method sinks with --task classify (a "
                                  "regression takes the squared loss)");
    }
    if (fit_check_methods(c, &o)) return RC_USAGE;
    if (o.given[O_LEARN_ITERATIONS] && !o.fit.learn_length_scales)
        return cli_usage_error(c, "--learn-iterations needs --length-scales learn");
    const int sparse = (FM(o.method) & FM_SPARSE) != 0;
    if (o.given[O_FREQUENCIES] && o.given[O_KERNEL])
        return cli_usage_error(c, "--frequencies replaces the kernel: give it or --kernel, not "
                                  "both");
    if (o.combo.n_terms) { /* --nu goes to the matern terms */
        int matern = 0;
        for (size_t i = 0; i < o.combo.n_terms; i++)
            if (o.kterms[i].kernel == RFX_KERNEL_MATERN) {
                o.kterms[i].nu = o.fit.features.nu;
                matern = 1;
            }
        if (o.ko.have_nu && !matern)
            return cli_usage_error(c, "--nu applies to a kernel with a matern term");
        o.ko.have_nu = 0;
    }
    if (o.method == FM_BAYES || o.method == FM_RIDGE || o.method == FM_CLASSIFY ||
        o.method == FM_SINKS || o.method == FM_GREEDY) {
        if (cli_kernel_opts_apply(c, &o.ko, &o.fit.features)) return RC_USAGE;
        if (o.fit.features.form == RFX_FORM_COS_SIN && o.fit.features.n_features % 2 != 0)
            return cli_usage_error(c, "-D must be even with --form cos-sin, got %zu",
                                   o.fit.features.n_features);
    }
    if (o.cls.multiclass == RFX_MULTICLASS_SOFTMAX && !o.given[O_LOSS])
        o.cls.loss = RFX_LOSS_LOGISTIC; /* softmax is multinomial logistic regression */
    if (o.method == FM_CLASSIFY && o.cls.multiclass == RFX_MULTICLASS_SOFTMAX &&
        o.cls.loss != RFX_LOSS_LOGISTIC)
        return cli_usage_error(c, "--multiclass softmax takes --loss logistic, not %s",
                               rfx_loss_name(o.cls.loss));
    if (sparse && o.given[O_LAMBDA] && !(o.fit.lambda > 0))
        return cli_usage_error(c, "--lambda must be > 0 for --method %s (leave it out to choose it "
                                  "by cross-validation)", FIT_METHODS[o.method]);
    if (o.given[O_ETA] && o.given[O_LAMBDA])
        return cli_usage_error(c, "give --eta (basis pursuit denoising) or --lambda (the lasso), "
                                  "not both");
    if (o.given[O_DEGREE] && o.given[O_DEGREE_MIN] && o.degree_min > o.degree)
        return cli_usage_error(c, "--degree-min %zu exceeds --degree %zu", o.degree_min, o.degree);
    if (o.theta) {
        static const int SWARM[] = { O_ITERATIONS, O_PARTICLES, O_PATIENCE, O_PLOT };
        for (size_t i = 0; i < sizeof SWARM / sizeof *SWARM; i++) {
            char name[48];
            if (o.given[SWARM[i]])
                return cli_usage_error(c, "%s sets the particle swarm, which --theta replaces",
                                       option_name(c, SWARM[i], name, sizeof name));
        }
    }
    if (o.method == FM_PROJECTED && o.given[O_FEATURES] && o.proj.surrogate == RFX_METHOD_PCE)
        return cli_usage_error(c, "-D applies to --surrogate ridge, bayes, srfe or auto (its ridge "
                                  "and srfe candidates), not pce");
    /* the method's parameters, checked by the library before any data is read */
    if (o.method == FM_BAYES || o.method == FM_RIDGE || o.method == FM_CLASSIFY) {
        o.fit.method = o.method == FM_CLASSIFY ? RFX_METHOD_CLASSIFY
                       : o.method == FM_RIDGE  ? RFX_METHOD_RIDGE
                                               : RFX_METHOD_BAYES;
        if (o.method == FM_CLASSIFY) {
            o.cls.balanced = o.class_weight && strcmp(o.class_weight, "balanced") == 0;
            o.fit.classify = &o.cls;
            if (o.given[O_FOLDS]) o.fit.classify_folds = o.folds;
            /* the features' cache within half the memory limit */
            if (o.memory_limit && o.cls.cache_bytes > o.memory_limit / 2)
                o.cls.cache_bytes = o.memory_limit / 2;
        }
        if (rfx_fit_params_check(&o.fit)) return cli_usage_error(c, "%s", rfx_last_error());
    } else if (sparse) {
        rfx_srfe_params sp = sparse_params(&o);
        if (rfx_srfe_params_check(&sp)) return cli_usage_error(c, "%s", rfx_last_error());
    } else if (o.method == FM_PCE) {
        rfx_marginal one = rfx_marginal_uniform(0, 1);
        rfx_pce_params pp = pce_params(&o, &one); /* the check reads no marginal */
        if (rfx_pce_params_check(&pp)) return cli_usage_error(c, "%s", rfx_last_error());
    } else if (o.method == FM_PROJECTED) {
        rfx_fit_params fp;
        rfx_srfe_params sp;
        rfx_projected_params pp = projected_params(&o, &fp, &sp);
        if (rfx_projected_params_check(&pp)) return cli_usage_error(c, "%s", rfx_last_error());
    } else if (o.method == FM_SINKS || o.method == FM_GREEDY) {
        if ((o.given[O_KERNEL] || o.given[O_LENGTH_SCALE] || o.given[O_GAMMA] || o.given[O_NU]) &&
            o.given[O_WEIGHTS])
            return cli_usage_error(c, "--weights replaces the kernel's frequencies: give it or "
                                      "--kernel / --length-scale / --gamma, not both");
        if (o.given[O_WEIGHT_SCALE] && !o.given[O_WEIGHTS])
            return cli_usage_error(c, "--weight-scale goes with --weights normal or uniform");
    }
    if (o.given[O_TRANSFORM] && o.method != FM_AUTO && !o.transform_auto &&
        (o.transforms & (o.transforms - 1)))
        return cli_usage_error(c, "--transform takes one of none, log, boxcox or auto for --method "
                                  "%s (a list only for --method auto)",
                               FIT_METHODS[o.method]);
    if (o.transform_auto && o.method == FM_AUTO) o.transforms = 0; /* auto: all that apply */
    if (o.method == FM_AUTO || o.transform_auto) {
        o.autop.transforms = o.transforms;
        o.autop.seed = o.fit.features.seed;
        o.autop.n_threads = o.fit.features.n_threads;
        if (o.given[O_FOLDS]) o.autop.n_folds = o.folds;
        if (rfx_auto_params_check(&o.autop)) return cli_usage_error(c, "%s", rfx_last_error());
    }
    if (o.transform_auto && o.method != FM_AUTO) {
        /* the comparison fits each transform with the method's defaults */
        for (int id2 = 1; id2 < O_COUNT; id2++) {
            char name[48];
            if (o.given[id2] && id2 != O_TRANSFORM && id2 != O_TARGET && id2 != O_OUTPUT &&
                id2 != O_METHOD && id2 != O_SEED && id2 != O_THREADS && id2 != O_DELIMITER &&
                id2 != O_NO_HEADER && id2 != O_TASK)
                return cli_usage_error(c, "--transform auto compares the transforms with the "
                                          "method's defaults; leave out %s or give the transform",
                                       option_name(c, id2, name, sizeof name));
        }
    }
    if (o.plot_path && !cli_program_in_path("gnuplot")) {
        cli_say("--plot: gnuplot is not installed (not found in PATH); install it or leave out "
                "--plot");
        return RC_IO;
    }

    const char *inputs[1] = {data_path};
    int rc = cli_check_output(c, model_path, inputs, 1);
    if (rc == RC_OK) rc = cli_check_output(c, o.plot_path, inputs, 1);
    if (rc != RC_OK) return rc;
    /* ridge and bayes stream the rows, unless a weight column or a target
     * transform needs them all */
    if (o.given[O_DETERMINISTIC] && !o.given[O_DISTRIBUTED])
        return cli_usage_error(c, "--deterministic goes with --distributed");
    if (o.given[O_CHUNK_ROWS] && !o.given[O_DETERMINISTIC])
        return cli_usage_error(c, "--chunk-rows goes with --distributed --deterministic");
    /* --class-weight LABEL:W pairs are placed on the classes, which a fit
     * in blocks finds as it reads */
    const int weight_pairs = o.method == FM_CLASSIFY && o.class_weight && !o.cls.balanced;
    if (o.given[O_DISTRIBUTED]) {
        if (o.sample_weight_col || o.transform_auto ||
            (o.transforms & ~RFX_AUTO_TRANSFORM(RFX_TARGET_NONE)))
            return cli_usage_error(c, "--distributed takes neither --sample-weight nor "
                                      "--transform");
        if (weight_pairs)
            return cli_usage_error(c, "--distributed takes --class-weight balanced, not "
                                      "LABEL:W pairs");
        return fit_distributed(&o, data_path, &rp, model_path);
    }
    if ((o.method == FM_BAYES || o.method == FM_RIDGE || o.method == FM_CLASSIFY) &&
        !weight_pairs && !o.sample_weight_col && !o.transform_auto &&
        !(o.transforms & ~RFX_AUTO_TRANSFORM(RFX_TARGET_NONE)))
        return fit_rff_stream(&o, data_path, &rp, model_path);
    rfx_data *data = NULL;
    rp.max_bytes = o.memory_limit;
    rfx_status st = rfx_data_read(data_path, &rp, &data);
    if (st == RFX_ENOMEM && o.memory_limit) {
        cli_say("%s; --method %s keeps every row in memory (--memory-limit sets the limit; "
                "--method ridge, bayes and classify read the rows in blocks)", rfx_last_error(),
                FIT_METHODS[o.method]);
        return RC_INTERNAL;
    }
    if (st != RFX_OK) return cli_fail(st);
    double *z = NULL, *w = NULL;
    if (o.sample_weight_col) {
        const size_t n = rfx_data_x(data).rows;
        char q[1024];
        if (!(w = malloc((n ? n : 1) * sizeof *w))) {
            cli_say("out of memory for %zu weights", n);
            rfx_data_free(data);
            return RC_INTERNAL;
        }
        if ((st = rfx_data_take_column(data, o.sample_weight_col, w)) != RFX_OK) {
            cli_say("%s: --sample-weight: %s", cli_escape(data_path, q, sizeof q),
                    rfx_last_error());
            free(w);
            rfx_data_free(data);
            return cli_exit_code(st);
        }
        size_t positive = 0;
        for (size_t i = 0; i < n; i++) {
            positive += w[i] > 0;
            if (w[i] >= 0) continue;
            cli_say("%s: --sample-weight: data row %zu has the weight %.17g; weights are >= 0",
                    cli_escape(data_path, q, sizeof q), i + 1, w[i]);
            free(w);
            rfx_data_free(data);
            return RC_DATA;
        }
        if (positive == 0) {
            cli_say("%s: --sample-weight: every weight is 0", cli_escape(data_path, q, sizeof q));
            free(w);
            rfx_data_free(data);
            return RC_DATA;
        }
        o.fit.sample_weight = w;
    }
    rc = apply_transform(&o, data, data_path, &z);
    if (rc != RC_OK)
        ;
    else if (o.method == FM_AUTO)
        rc = fit_auto(&o, data, model_path);
    else if (o.method == FM_PCE)
        rc = fit_pce(&o, data, model_path);
    else if (o.method == FM_PROJECTED)
        rc = fit_projected(&o, data, model_path);
    else if (sparse)
        rc = fit_sparse(&o, data, model_path);
    else if (o.method == FM_CLASSIFY)
        rc = fit_classify(&o, data, model_path);
    else if (o.method == FM_SINKS || o.method == FM_GREEDY)
        rc = fit_sinks_greedy(&o, data, model_path);
    else
        rc = fit_rff(&o, data, model_path);
    free(z);
    free(w);
    rfx_data_free(data);
    return rc;
}
