/*
 * rfx - the command-line tool: fit random feature models (regression and
 * classification), polynomial chaos expansions and surrogates on a learned
 * kernel PCA projection to CSV or .npy files, predict (with standard
 * deviations or class probabilities),
 * evaluate, describe model files, compute Sobol indices, and measure how well
 * random features approximate a kernel matrix.
 *
 * It uses only the public API of include/rfx.h, as LIBLINEAR's train.c uses
 * linear.h. Each subcommand is one cmd_* function; options are described
 * once, in a table per subcommand that serves both the parser and --help.
 *
 * Exit codes (also printed by --help):
 *   0  success
 *   1  usage error: unknown option, missing argument, bad option value
 *   2  input data error: CSV/.npy parse error, NaN/Inf, wrong dimensions
 *   3  model file error: corrupt, truncated, or written by a newer rfx
 *   4  numerical failure
 *   5  I/O error: a file cannot be opened, read or written
 *   6  out of memory, or an internal error
 * Every error is one line on stderr, "rfx: <message>", where the message is
 * rfx_last_error() for library failures.
 */
#include "rfx.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__GNUC__)
#define PRINTF_LIKE(a, b) __attribute__((format(printf, a, b)))
#else
#define PRINTF_LIKE(a, b)
#endif

static const double PI = 3.14159265358979323846;

/* ------------------------------------------------------------------------ */
/* Exit codes and messages                                                   */
/* ------------------------------------------------------------------------ */

enum exit_code {
    RC_OK = 0,
    RC_USAGE = 1,
    RC_DATA = 2,
    RC_MODEL = 3,
    RC_NUMERIC = 4,
    RC_IO = 5,
    RC_INTERNAL = 6
};

static const char EXIT_CODES_HELP[] =
    "Exit codes:\n"
    "  0  success\n"
    "  1  usage error: unknown option, missing argument, bad option value\n"
    "  2  input data error: CSV/.npy parse error, NaN/Inf, wrong dimensions\n"
    "  3  model file error: corrupt, truncated, or written by a newer rfx\n"
    "  4  numerical failure\n"
    "  5  I/O error: a file cannot be opened, read or written\n"
    "  6  out of memory, or an internal error\n";

/* The one place where library statuses become exit codes. */
static int exit_code_of(rfx_status st)
{
    switch (st) {
    case RFX_OK: return RC_OK;
    case RFX_EINVAL: return RC_USAGE; /* a parameter from an option is bad */
    case RFX_EDIM:
    case RFX_EPARSE: return RC_DATA;
    case RFX_EFORMAT:
    case RFX_EVERSION: return RC_MODEL;
    case RFX_ENUMERIC: return RC_NUMERIC;
    case RFX_EIO: return RC_IO;
    case RFX_ENOMEM:
    case RFX_EOVERFLOW:
    case RFX_ECANCELLED:
    case RFX_EINTERNAL: return RC_INTERNAL;
    }
    return RC_INTERNAL;
}

/* "rfx: <message>" on stderr. */
static void say(const char *fmt, ...) PRINTF_LIKE(1, 2);
static void say(const char *fmt, ...)
{
    va_list ap;
    fputs("rfx: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* Report a library failure and return its exit code. */
static int fail(rfx_status st)
{
    const char *m = rfx_last_error();
    say("%s", (m && m[0]) ? m : rfx_strerror(st));
    return exit_code_of(st);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* ------------------------------------------------------------------------ */
/* Commands and option tables                                                */
/* ------------------------------------------------------------------------ */

enum opt_id {
    O_END = 0,
    O_TARGET, O_OUTPUT, O_METHOD, O_KERNEL, O_NU, O_FORM, O_FEATURES, O_SEED,
    O_LENGTH_SCALE, O_GAMMA, O_LAMBDA, O_NOISE_VAR, O_PRIOR_VAR, O_NO_STANDARDIZE,
    O_NO_INTERCEPT, O_THREADS, O_DELIMITER, O_NO_HEADER, O_STD, O_CLASSES, O_PRED,
    O_TRUTH, O_PLOT, O_POINTS, O_DIM, O_LIST, O_LIKE, O_UNIFORM, O_BOOTSTRAP,
    O_SPARSITY, O_ACTIVATION, O_WEIGHTS, O_WEIGHT_SCALE, O_ETA, O_TERMS, O_FOLDS,
    O_DEGREE, O_DEGREE_MIN, O_Q_NORM, O_MAX_INTERACTION, O_PCE_METHOD, O_NORMAL,
    O_LENGTH_SCALES, O_LEARN_ITERATIONS, O_K, O_SURROGATE, O_ITERATIONS, O_PARTICLES,
    O_PATIENCE, O_THETA, O_TASK, O_LOSS, O_MULTICLASS, O_OPTIMIZER, O_CLASS_WEIGHT,
    O_PROBA, O_STRUCTURE,
    O_COUNT
};

typedef struct opt_spec {
    int id;                /* enum opt_id; O_END ends a table            */
    char short_name;       /* 'o' for -o, or 0                           */
    const char *long_name; /* "target" for --target, or NULL             */
    const char *arg;       /* the value's placeholder, NULL for a flag   */
    const char *help;
} opt_spec;

typedef struct command command;
struct command {
    const char *name;
    const char *usage;   /* the synopsis lines after "Usage: "         */
    const char *summary; /* one line, for rfx --help                   */
    const char *details; /* preformatted paragraphs, or NULL           */
    const opt_spec *opts;
    int (*run)(const command *c, int argc, char **argv);
};

#define OPT_DELIMITER \
    { O_DELIMITER, 0, "delimiter", "C", \
      "CSV field separator: one character, or 'tab' (default ',')" }
#define OPT_NO_HEADER \
    { O_NO_HEADER, 0, "no-header", NULL, \
      "the CSV file has no header line " \
      "(default: detected; a first line with a non-number is a header)" }
#define OPT_TARGET(what) \
    { O_TARGET, 0, "target", "COL", \
      "target column" what ": a header name, a 0-based index, " \
      "or -1 for the last column (default -1)" }

static const opt_spec FIT_OPTS[] = {
    OPT_TARGET(""),
    { O_OUTPUT, 'o', "output", "MODEL", "write the model to MODEL (required)" },
    { O_TASK, 0, "task", "T",
      "regression (default) or classify: a classifier of the target's labels (any numbers, "
      "at least two distinct); the method is then classify" },
    { O_METHOD, 0, "method", "M",
      "bayes (default; Bayesian regression on random Fourier features, with predictive std), "
      "ridge, srfe (sparse random features: basis pursuit denoising with --eta, else the "
      "lasso), lasso, harfe (sparse random features, hard thresholding), pce (polynomial "
      "chaos), projected (a surrogate on a learned kernel PCA of the inputs) or classify "
      "(the same as --task classify)" },
    { O_LOSS, 0, "loss", "L",
      "classify: logistic (default; with class probabilities), hinge (the SVM) or "
      "squared-hinge" },
    { O_MULTICLASS, 0, "multiclass", "S",
      "classify, more than two classes: ovr (one-vs-rest, default) or softmax (multinomial "
      "logistic regression; logistic loss)" },
    { O_OPTIMIZER, 0, "optimizer", "O",
      "classify: auto (default: lbfgs, or dual-cd for the hinge loss), lbfgs, dual-cd (hinge "
      "losses) or sgd (averaged SGD)" },
    { O_CLASS_WEIGHT, 0, "class-weight", "W",
      "classify: balanced (class k weighs n / (C n_k)) or LABEL:W,... (W >= 0, other classes 1)" },
    { O_KERNEL, 0, "kernel", "K",
      "ridge, bayes, classify: gaussian (default), laplacian, cauchy or matern" },
    { O_NU, 0, "nu", "NU", "ridge, bayes, classify: Matern smoothness 0.5, 1.5 (default) or 2.5" },
    { O_FORM, 0, "form", "F",
      "ridge, bayes, classify: feature form cos-bias (default) or cos-sin (D even)" },
    { O_STRUCTURE, 0, "structure", "S",
      "ridge, bayes, classify: how the frequencies are drawn: iid (default), orthogonal, sorf, "
      "fastfood or halton (rfx_structure in rfx.h)" },
    { O_FEATURES, 'D', "features", "N",
      "number of random features D >= 1 (default 1024; srfe, lasso, harfe: from the number of "
      "rows, as rfx/srfe.h documents; projected: of a ridge, bayes or srfe surrogate, default "
      "1000, 4000 for srfe)" },
    { O_SEED, 0, "seed", "S",
      "random seed of the features (default 0); projected: of the swarm and of the features "
      "of its fast score" },
    { O_LENGTH_SCALE, 0, "length-scale", "L",
      "ridge, bayes, classify: kernel length scale > 0, in standardised units unless "
      "--no-standardize (default: chosen automatically)" },
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
      "> 0 of the mean loss (default: chosen with the length scale on held-out rows)" },
    { O_NOISE_VAR, 0, "noise-var", "V",
      "bayes: noise variance > 0 (default: fitted by maximising the evidence)" },
    { O_PRIOR_VAR, 0, "prior-var", "V",
      "bayes: prior variance of the weights > 0 (default: fitted)" },
    { O_SPARSITY, 0, "sparsity", "Q",
      "srfe, lasso, harfe: inputs per feature, 1 <= Q <= d (default: chosen from 1, 2, 3)" },
    { O_ACTIVATION, 0, "activation", "A",
      "srfe, lasso, harfe: sin (default), cos, tanh, sigmoid, relu or sign" },
    { O_WEIGHTS, 0, "weights", "W",
      "srfe, lasso, harfe: distribution of the nonzero frequencies, normal (default) or "
      "uniform" },
    { O_WEIGHT_SCALE, 0, "weight-scale", "S",
      "srfe, lasso, harfe: their scale s > 0, N(0, s^2) or U(-s, s) (default: chosen from "
      "0.5, 1, 2, see --folds)" },
    { O_ETA, 0, "eta", "E",
      "srfe: basis pursuit denoising (SRFE-S), the least |c|_1 with a training RMS residual "
      "<= E > 0 (default: the lasso, and the equivalent E is reported)" },
    { O_TERMS, 0, "terms", "S",
      "harfe: nonzero coefficients s >= 1 (default min(rows / 2, N) / 2)" },
    { O_FOLDS, 0, "folds", "K",
      "srfe, lasso, harfe: choose the weight scale and lambda by K-fold cross-validation "
      "(rows i mod K), 2 <= K <= rows, instead of generalised cross-validation (GCV, the "
      "default); projected: the swarm's loss is the surrogate's K-fold error instead of "
      "the fast score (slower); classify: choose the length scale and lambda by K-fold cross-validation "
      "instead of one holdout of a quarter of the rows" },
    { O_K, 0, "k", "K",
      "projected: kernel PCA components k >= 1, at most rows - 1 (default: chosen with "
      "--gamma from 1 .. 8 by the fast score)" },
    { O_SURROGATE, 0, "surrogate", "S",
      "projected: the model on the k scores, ridge (default), bayes, srfe or pce" },
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
      "basis C(d + P, P) has at most 10000 terms; with d >= 3 also terms of at most two inputs "
      "to a higher degree, within 4 n terms, and the fit of lower corrected leave-one-out "
      "error is kept)" },
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
    { O_UNIFORM, 0, "uniform", "A,B",
      "pce: every input uniform on [A, B] (default: uniform on each column's [min, max] in "
      "the training data, [x - 1/2, x + 1/2] for a constant column)" },
    { O_NORMAL, 0, "normal", "MU,SD", "pce: every input normal N(MU, SD^2), SD > 0" },
    { O_NO_STANDARDIZE, 0, "no-standardize", NULL,
      "ridge, bayes, srfe, lasso, harfe, projected, classify: use the inputs as they are "
      "instead of (x - mean) / std per column" },
    { O_NO_INTERCEPT, 0, "no-intercept", NULL, "ridge, bayes, classify: fit no intercept" },
    { O_THREADS, 0, "threads", "T",
      "threads, >= 0 (default 0: the OpenMP default, OMP_NUM_THREADS or all cores)" },
    OPT_DELIMITER,
    OPT_NO_HEADER,
    { O_END, 0, NULL, NULL, NULL }
};

/* The methods of rfx fit: the library's rfx_method ones, and the lasso (an
 * srfe model whose coefficients come from the lasso). */
enum fit_method {
    FM_BAYES, FM_RIDGE, FM_SRFE, FM_LASSO, FM_HARFE, FM_PCE, FM_PROJECTED, FM_CLASSIFY, FM_COUNT
};

static const char *const FIT_METHODS[FM_COUNT] = {
    "bayes", "ridge", "srfe", "lasso", "harfe", "pce", "projected", "classify"
};

#define FM(m) (1u << (m))
#define FM_RFF (FM(FM_BAYES) | FM(FM_RIDGE))
#define FM_KERNEL (FM_RFF | FM(FM_CLASSIFY)) /* a kernel's random Fourier features */
#define FM_SPARSE (FM(FM_SRFE) | FM(FM_LASSO) | FM(FM_HARFE))

/* The methods each option of rfx fit applies to (options not listed apply
 * to all); giving one to another method is a usage error. */
static const struct fit_opt_methods {
    int id;
    unsigned methods;
} FIT_OPT_METHODS[] = {
    { O_KERNEL, FM_KERNEL }, { O_NU, FM_KERNEL }, { O_FORM, FM_KERNEL },
    { O_STRUCTURE, FM_KERNEL },
    { O_LENGTH_SCALE, FM_KERNEL }, { O_GAMMA, FM_KERNEL | FM(FM_PROJECTED) },
    { O_NO_INTERCEPT, FM_KERNEL },
    { O_LENGTH_SCALES, FM_RFF }, { O_LEARN_ITERATIONS, FM_RFF },
    { O_NOISE_VAR, FM(FM_BAYES) }, { O_PRIOR_VAR, FM(FM_BAYES) },
    { O_FEATURES, FM_KERNEL | FM_SPARSE | FM(FM_PROJECTED) },
    { O_SEED, FM_KERNEL | FM_SPARSE | FM(FM_PROJECTED) },
    { O_NO_STANDARDIZE, FM_KERNEL | FM_SPARSE | FM(FM_PROJECTED) },
    { O_LAMBDA, FM(FM_RIDGE) | FM(FM_SRFE) | FM(FM_LASSO) | FM(FM_CLASSIFY) },
    { O_SPARSITY, FM_SPARSE }, { O_ACTIVATION, FM_SPARSE }, { O_WEIGHTS, FM_SPARSE },
    { O_WEIGHT_SCALE, FM_SPARSE }, { O_FOLDS, FM_SPARSE | FM(FM_PROJECTED) | FM(FM_CLASSIFY) },
    { O_LOSS, FM(FM_CLASSIFY) }, { O_MULTICLASS, FM(FM_CLASSIFY) },
    { O_OPTIMIZER, FM(FM_CLASSIFY) }, { O_CLASS_WEIGHT, FM(FM_CLASSIFY) },
    { O_ETA, FM(FM_SRFE) }, { O_TERMS, FM(FM_HARFE) },
    { O_DEGREE, FM(FM_PCE) }, { O_DEGREE_MIN, FM(FM_PCE) }, { O_Q_NORM, FM(FM_PCE) },
    { O_MAX_INTERACTION, FM(FM_PCE) }, { O_PCE_METHOD, FM(FM_PCE) }, { O_UNIFORM, FM(FM_PCE) },
    { O_NORMAL, FM(FM_PCE) },
    { O_K, FM(FM_PROJECTED) }, { O_SURROGATE, FM(FM_PROJECTED) },
    { O_ITERATIONS, FM(FM_PROJECTED) }, { O_PARTICLES, FM(FM_PROJECTED) },
    { O_PATIENCE, FM(FM_PROJECTED) }, { O_THETA, FM(FM_PROJECTED) },
    { O_PLOT, FM(FM_PROJECTED) },
};

static const opt_spec PREDICT_OPTS[] = {
    { O_OUTPUT, 'o', "output", "OUT",
      "write the predictions to OUT (.csv, or .npy by extension); '-' or absent: stdout" },
    { O_STD, 0, "std", NULL,
      "add a column 'std', the predictive standard deviation (Bayesian models)" },
    { O_PROBA, 0, "proba", NULL,
      "classifiers with the logistic loss: after the column 'label', one column of "
      "probabilities per class, named by its label" },
    OPT_TARGET(" dropped from DATA when DATA has one column more than the model's inputs"),
    OPT_DELIMITER,
    OPT_NO_HEADER,
    { O_END, 0, NULL, NULL, NULL }
};

static const opt_spec EVAL_OPTS[] = {
    OPT_TARGET(" of DATA"),
    { O_CLASSES, 0, "classes", NULL,
      "targets are integer class labels: also print the accuracy of the predictions "
      "rounded to the nearest label" },
    { O_PRED, 0, "pred", "PRED.csv",
      "compare the first column of PRED.csv (from rfx predict) instead of a model's predictions" },
    { O_TRUTH, 0, "truth", "DATA", "with --pred: the file holding the true targets" },
    OPT_DELIMITER,
    OPT_NO_HEADER,
    { O_END, 0, NULL, NULL, NULL }
};

static const opt_spec INFO_OPTS[] = {
    { O_END, 0, NULL, NULL, NULL }
};

static const opt_spec KAPPROX_OPTS[] = {
    { O_KERNEL, 0, "kernel", "K", "gaussian (default), laplacian, cauchy or matern" },
    { O_NU, 0, "nu", "NU", "Matern smoothness: 0.5, 1.5 (default) or 2.5" },
    { O_GAMMA, 0, "gamma", "G",
      "scikit-learn's gamma > 0 (gaussian and laplacian; default 0.5, i.e. length scale 1)" },
    { O_LENGTH_SCALE, 0, "length-scale", "L", "kernel length scale > 0 (default 1)" },
    { O_FEATURES, 'D', "features", "LIST",
      "comma-separated numbers of features, each >= 1 (default 10,100,1000,10000)" },
    { O_FORM, 0, "form", "F", "feature form: cos-bias (default) or cos-sin (every D even)" },
    { O_STRUCTURE, 0, "structure", "S",
      "frequencies: iid (default), orthogonal, sorf, fastfood or halton" },
    { O_SEED, 0, "seed", "S", "random seed of the features (default 0)" },
    { O_POINTS, 'n', "points", "N",
      "number of points, >= 1 (default 1000; with DATA, its first N rows)" },
    { O_PLOT, 0, "plot", "OUT.png",
      "also plot the error against D on log-log axes with a 1/sqrt(D) line (needs gnuplot)" },
    { O_THREADS, 0, "threads", "T",
      "threads for the feature transforms (default 0: OpenMP default)" },
    OPT_DELIMITER,
    OPT_NO_HEADER,
    { O_END, 0, NULL, NULL, NULL }
};

static int cmd_fit(const command *c, int argc, char **argv);
static int cmd_predict(const command *c, int argc, char **argv);
static int cmd_eval(const command *c, int argc, char **argv);
static int cmd_info(const command *c, int argc, char **argv);
static int cmd_kernel_approx(const command *c, int argc, char **argv);
static int cmd_sample(const command *c, int argc, char **argv);

static const opt_spec SAMPLE_OPTS[] = {
    { O_POINTS, 'n', "rows", "N", "number of rows to draw, >= 1 (required)" },
    { O_DIM, 'd', "dim", "D",
      "number of inputs (default: the function's, see --list; ishigami has 3 and "
      "borehole 8)" },
    { O_SEED, 0, "seed", "S", "random seed of the inputs (default 0)" },
    { O_OUTPUT, 'o', "output", "OUT",
      "write the sample to OUT (.csv, or .npy by extension); '-' or absent: stdout" },
    { O_LIST, 0, "list", NULL, "list the functions with their inputs and exit" },
    { O_END, 0, NULL, NULL, NULL }
};

static int cmd_sobol(const command *c, int argc, char **argv);

static const opt_spec SOBOL_OPTS[] = {
    { O_LIKE, 0, "like", "FUNCTION",
      "inputs distributed as those of a benchmark function (rfx sample --list), whose "
      "exact indices are printed beside the estimates" },
    { O_UNIFORM, 0, "uniform", "A,B", "every input uniform on [A, B]" },
    { O_POINTS, 'n', "samples", "N", "base samples N >= 2 (default 10000; N (d + 2) predictions)" },
    { O_SEED, 0, "seed", "S", "random seed of the design (default 0)" },
    { O_BOOTSTRAP, 0, "bootstrap", "B", "bootstrap resamples for the intervals (default 200)" },
    { O_END, 0, NULL, NULL, NULL }
};

static const command COMMANDS[] = {
    { "fit", "rfx fit DATA [--target COL] -o MODEL [--method M] [options]\n"
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
      "  projected  a surrogate (--surrogate ridge, bayes, srfe or pce) on the k\n"
      "         scores of a kernel PCA of the inputs whose per-input weights theta\n"
      "         in [0, 1] a particle swarm chooses to minimise a relative\n"
      "         validation error (GCV of a ridge on random features of the\n"
      "         scores, or the surrogate's own with --folds K), starting from a\n"
      "         screening of each input alone; k and gamma are chosen first\n"
      "         unless given; the loss history and theta are printed\n"
      "  classify  (--task classify) a classifier on random Fourier features: the\n"
      "         target's distinct values are the classes; logistic (kernel logistic\n"
      "         regression, with probabilities), hinge or squared-hinge loss (kernel\n"
      "         SVMs); one-vs-rest or softmax for more than two classes\n"
      "\n"
      "With no options the fit is automatic. bayes and ridge: inputs are\n"
      "standardised, the length scale is chosen by the Bayesian evidence (GCV for\n"
      "ridge), and the noise and prior variances (the ridge penalty) are fitted\n"
      "too. srfe, lasso, harfe: the weight scale and the lasso penalty are chosen\n"
      "by generalised cross-validation (k-fold with --folds). classify: inputs are\n"
      "standardised and the length scale and lambda chosen from a small grid by\n"
      "the held-out log-loss (logistic) or error rate (hinge losses) on a quarter of\n"
      "the rows (k-fold with --folds). pce: the degree\n"
      "(1..P) by the corrected leave-one-out error, the terms by least-angle\n"
      "regression. What was chosen is printed on stderr; a progress line is shown\n"
      "when stderr is a terminal. An option that does not apply to the method is a\n"
      "usage error.\n",
      FIT_OPTS, cmd_fit },
    { "predict", "rfx predict MODEL DATA [-o OUT.csv] [--std | --proba] [--target COL]",
      "predict with a model",
      "Predict the target for every row of DATA. The output has a header line and\n"
      "one column 'prediction' (and 'std' with --std). DATA holds the model's input\n"
      "columns, or those and the target column, which is then dropped. A classifier\n"
      "writes the column 'label', the predicted class, and with --proba (logistic\n"
      "loss) one column of probabilities per class, headed by the class label.\n",
      PREDICT_OPTS, cmd_predict },
    { "eval", "rfx eval MODEL DATA [--target COL] [--classes]\n"
              "       rfx eval --pred PRED.csv --truth DATA [--target COL] [--classes]",
      "score predictions against known targets",
      "Print the RMSE, the MAE, R^2 and the relative L2 error\n"
      "|f - y|_2 / |y - mean(y)|_2 of the predictions f against the targets y, one\n"
      "'name value' pair per line. For a classifier: the rows, the accuracy and the\n"
      "number of classes as such pairs, then a table of each class's precision,\n"
      "recall and support, and the confusion matrix (rows: true class, columns:\n"
      "predicted class), headed by the class labels.\n",
      EVAL_OPTS, cmd_eval },
    { "info", "rfx info MODEL", "describe a model file",
      "Print what a model file holds: method, kernel, dimensions, length scale(s),\n"
      "regularisation, evidence, and the file size. For a polynomial chaos model:\n"
      "the input marginals, degree, terms kept of the candidates, leave-one-out\n"
      "errors, mean and variance, the largest terms with their multi-indices, and\n"
      "the first-order and total Sobol indices from the coefficients. For a projected\n"
      "model: the kernel PCA (k, gamma, standardisation), theta, the loss, and the\n"
      "surrogate on the k scores as its own method is described. For a classifier\n"
      "also: the loss, the multi-class scheme, the classes and the score columns.\n",
      INFO_OPTS, cmd_info },
    { "kernel-approx",
      "rfx kernel-approx [DATA] [--kernel K] [--gamma G | --length-scale L]\n"
      "                         [-D 10,100,1000,10000] [--form F] [--seed S] [-n N]\n"
      "                         [--plot OUT.png]",
      "measure how well Z Z^T approximates the kernel matrix",
      "For each number of features D, compute the features Z (n x D) of n points and\n"
      "the relative Frobenius error |K - Z Z^T|_F / |K|_F against the exact kernel\n"
      "matrix K (n x n). It falls like 1/sqrt(D) (Rahimi & Recht 2007). Without\n"
      "DATA the points are scikit-learn's S-curve (make_s_curve: 1000 points in 3-D,\n"
      "from a fixed seed, so that --seed varies only the features).\n",
      KAPPROX_OPTS, cmd_kernel_approx },
    { "sobol", "rfx sobol MODEL (--like FUNCTION | --uniform A,B) [-n N] [--seed S]\n"
               "                 [--bootstrap B]\n"
               "       rfx sobol PCE_MODEL",
      "Sobol sensitivity indices of a model",
      "Estimate the first-order and total Sobol indices of the model's prediction by\n"
      "Monte Carlo (Saltelli 2010 first order, Jansen 1999 total) with 95% bootstrap\n"
      "intervals, for independent inputs distributed as given. One line per input:\n"
      "index, first order [interval], total [interval], and with --like the exact\n"
      "indices of that function when it has them.\n"
      "\n"
      "A polynomial chaos model (rfx fit --method pce) has exact indices of its own,\n"
      "from its coefficients under its input marginals (Sudret 2008): without\n"
      "--like or --uniform they are printed alone (input, first, total); with them,\n"
      "as the columns pce_first and pce_total beside the Monte Carlo estimates.\n",
      SOBOL_OPTS, cmd_sobol },
    { "sample", "rfx sample FUNCTION -n N [-d D] [--seed S] [-o OUT.csv]\n"
                "       rfx sample --list",
      "draw a sample of a benchmark function (G-function, Ishigami, ...)",
      "Draw N rows of inputs from the input distribution of a benchmark function of\n"
      "surrogate modelling and evaluate it: gfunction, ishigami, friedman1, borehole\n"
      "or srfe (rfx sample --list describes them; rfx/surrogate.h has the formulas).\n"
      "The output has a header line and the columns x0 .. x<d-1>, y. Row i depends\n"
      "only on the seed and i, so the first k rows of a larger sample are the\n"
      "sample of k rows.\n",
      SAMPLE_OPTS, cmd_sample },
};

#define N_COMMANDS (sizeof COMMANDS / sizeof COMMANDS[0])

static const command *command_find(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; ++i)
        if (strcmp(COMMANDS[i].name, name) == 0) return &COMMANDS[i];
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Help                                                                      */
/* ------------------------------------------------------------------------ */

enum { HELP_INDENT = 28, HELP_WIDTH = 79 };

/* Print text word-wrapped, continuing from column col, wrapping to indent. */
static void print_wrapped(FILE *out, const char *text, size_t col)
{
    const char *p = text;
    while (*p) {
        size_t len = strcspn(p, " ");
        if (col > HELP_INDENT && col + 1 + len > HELP_WIDTH) {
            fprintf(out, "\n%*s", HELP_INDENT, "");
            col = HELP_INDENT;
        } else if (col > HELP_INDENT) {
            fputc(' ', out);
            col++;
        }
        fwrite(p, 1, len, out);
        col += len;
        p += len;
        while (*p == ' ') p++;
    }
    fputc('\n', out);
}

static void print_option(FILE *out, const opt_spec *o)
{
    char left[80];
    int n;
    if (o->short_name && o->long_name)
        n = snprintf(left, sizeof left, "  -%c, --%s", o->short_name, o->long_name);
    else if (o->long_name)
        n = snprintf(left, sizeof left, "  --%s", o->long_name);
    else
        n = snprintf(left, sizeof left, "  -%c", o->short_name);
    if (o->arg && n > 0 && (size_t)n < sizeof left)
        snprintf(left + n, sizeof left - (size_t)n, " %s", o->arg);
    fputs(left, out);
    size_t col = strlen(left);
    if (col + 2 > HELP_INDENT) {
        fputc('\n', out);
        col = 0;
    }
    fprintf(out, "%*s", (int)(HELP_INDENT - col), "");
    print_wrapped(out, o->help, HELP_INDENT);
}

static int print_command_help(const command *c)
{
    printf("Usage: %s\n", c->usage);
    if (c->details) printf("\n%s", c->details);
    printf("\nOptions:\n");
    for (const opt_spec *o = c->opts; o->id != O_END; ++o) print_option(stdout, o);
    opt_spec help = { O_END, 'h', "help", NULL, "print this help and exit" };
    print_option(stdout, &help);
    printf("\n%s", EXIT_CODES_HELP);
    return RC_OK;
}

static void print_main_usage(FILE *out)
{
    fprintf(out,
            "Usage: rfx COMMAND [options] [arguments]\n"
            "       rfx --help | --version | help COMMAND\n");
}

static int print_main_help(void)
{
    print_main_usage(stdout);
    printf("\nRandom feature expansions: kernel regression with random Fourier features,\n"
           "with predictive uncertainty, for surrogate models and large data; sparse\n"
           "random feature expansions and polynomial chaos for surrogates from few\n"
           "samples.\n\nCommands:\n");
    for (size_t i = 0; i < N_COMMANDS; ++i)
        printf("  %-15s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
    printf("\nRun 'rfx help COMMAND' or 'rfx COMMAND --help' for its options.\n"
           "Example:\n"
           "  rfx fit train.csv --target y -o model.rfx\n"
           "  rfx predict model.rfx test.csv --std -o pred.csv\n"
           "  rfx eval model.rfx test.csv --target y\n\n"
           "Environment:\n"
           "  OMP_NUM_THREADS  threads, where --threads is 0 (the default)\n"
           "  RFX_ISA          the instruction-set path of the kernels: generic, avx2 or\n"
           "                   avx512 (default: the best this CPU has; a path above it is\n"
           "                   capped). rfx --version shows the path in use.\n\n%s",
           EXIT_CODES_HELP);
    return RC_OK;
}

/* "rfx: <message>" and a pointer to the help; returns RC_USAGE. */
static int usage_error(const command *c, const char *fmt, ...) PRINTF_LIKE(2, 3);
static int usage_error(const command *c, const char *fmt, ...)
{
    va_list ap;
    fputs("rfx: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (c)
        fprintf(stderr, "\nTry 'rfx %s --help'.\n", c->name);
    else
        fputs("\nTry 'rfx --help'.\n", stderr);
    return RC_USAGE;
}

/* ------------------------------------------------------------------------ */
/* Option parsing                                                            */
/* ------------------------------------------------------------------------ */

/* Special results of opt_next besides option ids. */
enum { OPT_DONE = -1, OPT_ERROR = -2, OPT_POSITIONAL = -3, OPT_HELP = -4 };

/* Walks argv: "--name value", "--name=value", "-x value", "-xvalue", flags,
 * "--" (the rest are positional), and "-" (a positional). */
typedef struct opt_iter {
    const command *cmd;
    int argc;
    char **argv;
    int next;
    int only_positional;
    char name[48]; /* the spelling of the last option, for messages */
} opt_iter;

static opt_iter opt_begin(const command *c, int argc, char **argv)
{
    opt_iter it;
    memset(&it, 0, sizeof it);
    it.cmd = c;
    it.argc = argc;
    it.argv = argv;
    return it;
}

static const opt_spec *opt_find_long(const opt_spec *specs, const char *name, size_t len)
{
    for (const opt_spec *o = specs; o->id != O_END; ++o)
        if (o->long_name && strlen(o->long_name) == len && strncmp(o->long_name, name, len) == 0)
            return o;
    return NULL;
}

static const opt_spec *opt_find_short(const opt_spec *specs, char ch)
{
    for (const opt_spec *o = specs; o->id != O_END; ++o)
        if (o->short_name == ch) return o;
    return NULL;
}

/* The next option id (its value in *value), OPT_POSITIONAL (the argument in
 * *value), OPT_HELP, OPT_DONE, or OPT_ERROR after printing a message. */
static int opt_next(opt_iter *it, const char **value)
{
    while (it->next < it->argc) {
        const char *a = it->argv[it->next++];
        const opt_spec *o;
        const char *inline_value = NULL;
        *value = NULL;
        if (it->only_positional || a[0] != '-' || a[1] == '\0') {
            *value = a;
            return OPT_POSITIONAL;
        }
        if (strcmp(a, "--") == 0) {
            it->only_positional = 1;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) return OPT_HELP;
        if (a[1] == '-') {
            const char *name = a + 2, *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            o = opt_find_long(it->cmd->opts, name, len);
            if (eq) inline_value = eq + 1;
        } else {
            o = opt_find_short(it->cmd->opts, a[1]);
            if (a[2] != '\0') inline_value = a + 2;
        }
        if (!o || (inline_value && !o->arg && a[1] != '-')) {
            usage_error(it->cmd, "unknown option '%s'", a);
            return OPT_ERROR;
        }
        if (o->long_name)
            snprintf(it->name, sizeof it->name, "--%s", o->long_name);
        else
            snprintf(it->name, sizeof it->name, "-%c", o->short_name);
        if (!o->arg) {
            if (inline_value) {
                usage_error(it->cmd, "option %s takes no value", it->name);
                return OPT_ERROR;
            }
            return o->id;
        }
        if (inline_value) {
            *value = inline_value;
        } else if (it->next < it->argc) {
            *value = it->argv[it->next++];
        } else {
            usage_error(it->cmd, "option %s needs a value (%s)", it->name, o->arg);
            return OPT_ERROR;
        }
        return o->id;
    }
    return OPT_DONE;
}

/* "rfx: <option>: <message>" and the help pointer; returns RC_USAGE. */
static int value_error(const opt_iter *it, const char *fmt, ...) PRINTF_LIKE(2, 3);
static int value_error(const opt_iter *it, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "rfx: %s: ", it->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'rfx %s --help'.\n", it->cmd->name);
    return RC_USAGE;
}

/* The value parsers return 0, or RC_USAGE after printing why. */

static int parse_double(const opt_iter *it, const char *s, double *out)
{
    char *end;
    double v = 0.0;
    if (s[0] == '\0' || isspace((unsigned char)s[0]))
        return value_error(it, "'%s' is not a number", s);
    errno = 0;
    v = strtod(s, &end);
    if (end == s || *end != '\0') return value_error(it, "'%s' is not a number", s);
    if (errno == ERANGE || !isfinite(v))
        return value_error(it, "'%s' is not a finite number in range", s);
    *out = v;
    return 0;
}

static int parse_positive(const opt_iter *it, const char *s, double *out)
{
    double v = 0.0;
    if (parse_double(it, s, &v)) return RC_USAGE;
    if (!(v > 0)) return value_error(it, "must be > 0, got %s", s);
    *out = v;
    return 0;
}

static int parse_nonnegative(const opt_iter *it, const char *s, double *out)
{
    double v = 0.0;
    if (parse_double(it, s, &v)) return RC_USAGE;
    if (!(v >= 0)) return value_error(it, "must be >= 0, got %s", s);
    *out = v;
    return 0;
}

/* A whole number in [min, max] from the digits at *p; *p moves past them. */
static int parse_whole(const opt_iter *it, const char *s, const char **p, unsigned long long min,
                       unsigned long long max, unsigned long long *out)
{
    char *end;
    unsigned long long v;
    if (!isdigit((unsigned char)**p)) return value_error(it, "'%s' is not a whole number", s);
    errno = 0;
    v = strtoull(*p, &end, 10);
    if (errno == ERANGE || v > max)
        return value_error(it, "%.*s is too large (at most %llu)", (int)(end - *p), *p, max);
    if (v < min) return value_error(it, "must be >= %llu, got %llu", min, v);
    *p = end;
    *out = v;
    return 0;
}

static int parse_size(const opt_iter *it, const char *s, size_t min, size_t *out)
{
    const char *p = s;
    unsigned long long v = 0;
    if (parse_whole(it, s, &p, min, SIZE_MAX, &v)) return RC_USAGE;
    if (*p != '\0') return value_error(it, "'%s' is not a whole number", s);
    *out = (size_t)v;
    return 0;
}

static int parse_seed(const opt_iter *it, const char *s, uint64_t *out)
{
    const char *p = s;
    unsigned long long v = 0;
    if (parse_whole(it, s, &p, 0, UINT64_MAX, &v)) return RC_USAGE;
    if (*p != '\0') return value_error(it, "'%s' is not a whole number", s);
    *out = (uint64_t)v;
    return 0;
}

static int parse_threads(const opt_iter *it, const char *s, int *out)
{
    const char *p = s;
    unsigned long long v;
    if (parse_whole(it, s, &p, 0, INT_MAX, &v)) return RC_USAGE;
    if (*p != '\0') return value_error(it, "'%s' is not a whole number >= 0", s);
    *out = (int)v;
    return 0;
}

/* "10,100,1000": up to cap values, each >= min. */
static int parse_size_list(const opt_iter *it, const char *s, size_t min, size_t *vals, size_t cap,
                           size_t *n)
{
    const char *p = s;
    size_t k = 0;
    for (;;) {
        unsigned long long v;
        if (parse_whole(it, s, &p, min, SIZE_MAX, &v)) return RC_USAGE;
        if (k == cap) return value_error(it, "more than %zu values", cap);
        vals[k++] = (size_t)v;
        if (*p == '\0') break;
        if (*p != ',' || !isdigit((unsigned char)p[1]))
            return value_error(it, "'%s' is not a comma-separated list of whole numbers", s);
        p++;
    }
    *n = k;
    return 0;
}

static int parse_kernel(const opt_iter *it, const char *s, rfx_kernel *out)
{
    if (rfx_kernel_from_name(s, out) == RFX_OK) return 0;
    rfx_clear_error();
    return value_error(it, "unknown kernel '%s' (gaussian, laplacian, cauchy or matern)", s);
}

static int parse_form(const opt_iter *it, const char *s, rfx_form *out)
{
    if (rfx_form_from_name(s, out) == RFX_OK) return 0;
    rfx_clear_error();
    return value_error(it, "unknown feature form '%s' (cos-bias or cos-sin)", s);
}

static int parse_structure(const opt_iter *it, const char *s, rfx_structure *out)
{
    if (rfx_structure_from_name(s, out) == RFX_OK) return 0;
    rfx_clear_error();
    return value_error(it, "unknown structure '%s' (iid, orthogonal, sorf, fastfood or halton)",
                       s);
}

static int parse_fit_method(const opt_iter *it, const char *s, int *out)
{
    for (int m = 0; m < FM_COUNT; m++) {
        if (strcmp(s, FIT_METHODS[m]) == 0) {
            *out = m;
            return 0;
        }
    }
    return value_error(it, "unknown method '%s' (bayes, ridge, srfe, lasso, harfe, pce, "
                           "projected or classify)", s);
}

static int parse_loss(const opt_iter *it, const char *s, rfx_loss *out)
{
    if (rfx_loss_from_name(s, out) == RFX_OK) return 0;
    rfx_clear_error();
    return value_error(it, "unknown loss '%s' (logistic, hinge or squared-hinge)", s);
}

static int parse_multiclass(const opt_iter *it, const char *s, rfx_multiclass *out)
{
    if (rfx_multiclass_from_name(s, out) == RFX_OK) return 0;
    rfx_clear_error();
    return value_error(it, "unknown multi-class scheme '%s' (ovr or softmax)", s);
}

static int parse_optimizer(const opt_iter *it, const char *s, rfx_optimizer *out)
{
    if (rfx_optimizer_from_name(s, out) == RFX_OK) return 0;
    rfx_clear_error();
    return value_error(it, "unknown optimizer '%s' (auto, lbfgs, dual-cd or sgd)", s);
}

/* --class-weight: "balanced", or "LABEL:W,..." with finite labels, distinct,
 * and weights W >= 0. With labels / weights NULL only the syntax is checked
 * and the pairs counted into *n; else they receive the pairs. */
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
            return value_error(it, "expected 'balanced' or LABEL:W,... (e.g. 0:1,1:5), got '%s'",
                               s);
        p = end + 1;
        w = strtod(p, &end);
        if (end == p || (*end != ',' && *end != '\0') || isspace((unsigned char)*p))
            return value_error(it, "expected 'balanced' or LABEL:W,... (e.g. 0:1,1:5), got '%s'",
                               s);
        if (errno == ERANGE || !isfinite(l) || !isfinite(w) || w < 0)
            return value_error(it, "pair %zu: the label must be finite and the weight a finite "
                               "number >= 0", k + 1);
        if (labels) {
            for (size_t j = 0; j < k; j++)
                if (labels[j] == l) return value_error(it, "label %.17g is given twice", l);
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
    return value_error(it, "unknown activation '%s' (sin, cos, tanh, sigmoid, relu or sign)", s);
}

/* The distributions of sparse feature weights (not the kernel's). */
static int parse_weight_dist(const opt_iter *it, const char *s, rfx_weights *out)
{
    if ((strcmp(s, "normal") == 0 || strcmp(s, "uniform") == 0) &&
        rfx_weights_from_name(s, out) == RFX_OK)
        return 0;
    return value_error(it, "unknown weight distribution '%s' (normal or uniform)", s);
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
    return value_error(it, "unknown PCE method '%s' (lars or lsq)", s);
}

static int parse_surrogate(const opt_iter *it, const char *s, rfx_method *out)
{
    static const struct { const char *name; rfx_method method; } S[] = {
        { "ridge", RFX_METHOD_RIDGE }, { "bayes", RFX_METHOD_BAYES },
        { "srfe", RFX_METHOD_SRFE }, { "pce", RFX_METHOD_PCE },
    };
    for (size_t i = 0; i < sizeof S / sizeof *S; i++) {
        if (strcmp(s, S[i].name) == 0) {
            *out = S[i].method;
            return 0;
        }
    }
    return value_error(it, "unknown surrogate '%s' (ridge, bayes, srfe or pce)", s);
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
            return value_error(it, "'%s' is not a comma-separated list of numbers", s);
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || (*end != ',' && *end != '\0'))
            return value_error(it, "'%s' is not a comma-separated list of numbers", s);
        if (errno == ERANGE || !(v >= 0 && v <= 1))
            return value_error(it, "value %zu is %.*s; every weight must be in [0, 1]", k + 1,
                               (int)(end - p), p);
        if (vals) vals[k] = v;
        any |= v > 0;
        k++;
        if (*end == '\0') break;
        p = end + 1;
    }
    if (!any) return value_error(it, "every weight is zero; at least one must be > 0");
    *n = k;
    return 0;
}

/* "A,B": two finite numbers. */
static int parse_pair(const opt_iter *it, const char *s, double *a, double *b)
{
    char *end = NULL;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end != ',' || isspace((unsigned char)s[0]))
        return value_error(it, "expected two numbers A,B, got '%s'", s);
    const char *t = end + 1;
    double y = strtod(t, &end);
    if (end == t || *end != '\0' || isspace((unsigned char)t[0]))
        return value_error(it, "expected two numbers A,B, got '%s'", s);
    if (errno == ERANGE || !isfinite(x) || !isfinite(y))
        return value_error(it, "'%s': the numbers must be finite and in range", s);
    *a = x;
    *b = y;
    return 0;
}

/* The Matern smoothness values with closed-form kernels. */
static int parse_nu(const opt_iter *it, const char *s, double *out)
{
    double v = 0.0;
    if (parse_double(it, s, &v)) return RC_USAGE;
    if (v != 0.5 && v != 1.5 && v != 2.5)
        return value_error(it, "must be 0.5, 1.5 or 2.5, got %s", s);
    *out = v;
    return 0;
}

static int parse_delimiter(const opt_iter *it, const char *s, char *out)
{
    if (strcmp(s, "tab") == 0 || strcmp(s, "\\t") == 0 || strcmp(s, "\t") == 0) {
        *out = '\t';
        return 0;
    }
    if (s[0] == '\0' || s[1] != '\0')
        return value_error(it, "must be one character or 'tab', got '%s'", s);
    if (strchr("\"\r\n.+-eE", s[0]) || isdigit((unsigned char)s[0]))
        return value_error(it, "'%c' cannot separate numbers", s[0]);
    *out = s[0];
    return 0;
}

/* The options shared by commands that read data files. */
static int parse_read_option(const opt_iter *it, int id, const char *v, rfx_read_params *rp)
{
    if (id == O_DELIMITER) return parse_delimiter(it, v, &rp->delimiter);
    rp->has_header = 0; /* O_NO_HEADER */
    return 0;
}

/* Settings of the kernel shared by fit and kernel-approx, checked together
 * once all options are read. */
typedef struct kernel_opts {
    int have_nu, have_gamma, have_length_scale;
    double gamma;
} kernel_opts;

/* Check the kernel options against each other and fold --gamma into the
 * length scale (scikit-learn's meaning; see rfx_kernel in rfx.h). */
static int kernel_opts_apply(const command *c, const kernel_opts *k, rfx_features_params *fp)
{
    if (k->have_nu && fp->kernel != RFX_KERNEL_MATERN)
        return usage_error(c, "--nu applies to --kernel matern only");
    if (k->have_gamma && k->have_length_scale)
        return usage_error(c, "give --gamma or --length-scale, not both");
    if (k->have_gamma) {
        if (fp->kernel == RFX_KERNEL_GAUSSIAN)
            fp->length_scale = 1.0 / sqrt(2.0 * k->gamma);
        else if (fp->kernel == RFX_KERNEL_LAPLACIAN)
            fp->length_scale = 1.0 / k->gamma;
        else
            return usage_error(c, "--gamma applies to the gaussian and laplacian kernels; "
                                  "use --length-scale");
        fp->gamma = 0.0;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Progress on a terminal                                                    */
/* ------------------------------------------------------------------------ */

typedef struct progress_state {
    char stage[64];
    int percent;
    int shown;
} progress_state;

/* rfx_progress_fn: "\r<stage> NN%" on stderr when something changed. */
static int progress_show(void *user, const char *stage, double fraction)
{
    progress_state *p = user;
    int pct = fraction <= 0 ? 0 : fraction >= 1 ? 100 : (int)(100.0 * fraction);
    if (!stage) stage = "";
    if (p->shown && pct == p->percent && strncmp(p->stage, stage, sizeof p->stage - 1) == 0)
        return 0;
    snprintf(p->stage, sizeof p->stage, "%s", stage);
    p->percent = pct;
    p->shown = 1;
    fprintf(stderr, "\r%-28s %3d%%", p->stage, pct);
    fflush(stderr);
    return 0;
}

static void progress_end(const progress_state *p)
{
    if (p->shown) fputc('\n', stderr);
}

/* ------------------------------------------------------------------------ */
/* Output helpers                                                            */
/* ------------------------------------------------------------------------ */

/* Column names "prediction" (and "std"), or "prediction_j" (and "std_j") for
 * several targets: one malloc block (pointers, then the strings). */
static char **output_names(size_t ny, int with_std)
{
    enum { NAME_MAX_LEN = 40 };
    size_t w = with_std ? 2 * ny : ny;
    if (ny == 0 || ny > SIZE_MAX / 2 / (sizeof(char *) + NAME_MAX_LEN)) return NULL;
    char **names = malloc(w * (sizeof(char *) + NAME_MAX_LEN));
    if (!names) return NULL;
    char *text = (char *)(names + w);
    for (size_t j = 0; j < w; ++j) {
        const char *base = j < ny ? "prediction" : "std";
        names[j] = text + j * NAME_MAX_LEN;
        if (ny == 1)
            snprintf(names[j], NAME_MAX_LEN, "%s", base);
        else
            snprintf(names[j], NAME_MAX_LEN, "%s_%zu", base, j % ny);
    }
    return names;
}

/* M as CSV on stdout, 17 significant digits (what rfx_csv_write writes). */
static int write_csv_stdout(rfx_cmat M, const char *const *names)
{
    for (size_t j = 0; j < M.cols; ++j) printf(j ? ",%s" : "%s", names[j]);
    putchar('\n');
    for (size_t i = 0; i < M.rows; ++i) {
        const double *row = M.data + i * M.stride;
        for (size_t j = 0; j < M.cols; ++j) printf(j ? ",%.17g" : "%.17g", row[j]);
        putchar('\n');
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        say("cannot write to standard output: %s", strerror(errno));
        return RC_IO;
    }
    return RC_OK;
}

static const char *yes_no(int v) { return v ? "yes" : "no"; }

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
    /* pce */
    size_t degree, degree_min, max_interaction;
    double q_norm, dist_a, dist_b; /* --uniform A,B or --normal MU,SD */
    rfx_pce_method pce_method;
    /* projected */
    rfx_projected_params proj;    /* k, surrogate, iterations, particles,
                                     patience; the rest set at the fit      */
    const char *theta;            /* --theta, checked: n_theta values in
                                     [0, 1], not all zero                    */
    size_t n_theta;
    const char *plot_path;        /* --plot                                  */
    /* classify */
    rfx_classify_params cls;      /* loss, multi-class scheme, optimizer      */
    const char *class_weight;     /* --class-weight, syntax checked           */
} fit_opts;

/* The largest degree rfx fit --method pce tries by default: the largest
 * p <= PCE_DEFAULT_DEGREE whose total-degree basis, C(d + p, p) terms, has
 * at most PCE_DEFAULT_TERMS of them (1 when even p = 1 has more). */
enum { PCE_DEFAULT_DEGREE = 10, PCE_DEFAULT_TERMS = 10000 };

static size_t pce_default_degree(size_t d)
{
    size_t p = 1;
    double terms = (double)d + 1.0; /* C(d + 1, 1) */
    for (size_t k = 2; k <= PCE_DEFAULT_DEGREE; k++) {
        terms = terms * (double)(d + k) / (double)k; /* C(d + k, k), exact below 2^53 */
        if (terms > PCE_DEFAULT_TERMS) break;
        p = k;
    }
    return p;
}

/* The default's second candidate basis: terms of at most two inputs, to
 * the largest degree P <= PCE_DEFAULT_DEGREE whose 1 + d P + C(d, 2) C(P, 2)
 * terms are at most min(4 n, PCE_DEFAULT_TERMS) (pairwise interactions of
 * high degree suit many engineering functions of several inputs; the
 * corrected LOO error decides). 0 when not even degree 2 fits. */
static size_t pce_pairwise_degree(size_t d, size_t n)
{
    double budget = 4.0 * (double)n < PCE_DEFAULT_TERMS ? 4.0 * (double)n : PCE_DEFAULT_TERMS;
    double pairs = (double)d * (double)(d - 1) / 2.0;
    size_t best = 0;
    for (size_t k = 2; k <= PCE_DEFAULT_DEGREE; k++) {
        double terms = 1.0 + (double)d * (double)k + pairs * (double)k * (double)(k - 1) / 2.0;
        if (terms > budget) break;
        best = k;
    }
    return best;
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
        return usage_error(c, "%s applies to --method %s, not %s",
                           option_name(c, r->id, name, sizeof name), list,
                           FIT_METHODS[o->method]);
    }
    return 0;
}

/* What a ridge or Bayesian fit chose, on stderr: the settings a user may
 * want to reuse. */
static void print_fit_report(const rfx_model *m, const rfx_fit_report *r, const rfx_fit_params *p,
                             int length_scale_given, const rfx_data *data, double seconds,
                             const char *path)
{
    rfx_model_info info;
    rfx_cmat X = rfx_data_x(data);
    if (rfx_model_get_info(m, &info) != RFX_OK) return;
    FILE *e = stderr;
    fprintf(e, "%-16s %s\n", "method", rfx_method_name(info.method));
    fprintf(e, "%-16s %s", "kernel", rfx_kernel_name(info.features.kernel));
    if (info.features.kernel == RFX_KERNEL_MATERN) fprintf(e, " (nu = %g)", info.features.nu);
    fprintf(e, ", %s features, D = %zu, seed %llu\n", rfx_form_name(info.features.form),
            info.features.n_features, (unsigned long long)info.features.seed);
    fprintf(e, "%-16s %zu rows x %zu inputs, target '%s'\n", "data", X.rows, X.cols,
            rfx_data_name(data, SIZE_MAX));
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
    fprintf(e, "%-16s %s\n", "model", path);
}

/* Save a fitted model, or report why it was not fitted or saved. */
static int save_fitted(rfx_status st, const rfx_model *model, const char *path)
{
    if (st == RFX_OK) st = rfx_model_save(model, path);
    return st == RFX_OK ? RC_OK : fail(st);
}

/* bayes, ridge: rfx_model_fit. */
static int fit_rff(fit_opts *o, const rfx_data *data, const char *path)
{
    rfx_model *model = NULL;
    rfx_fit_report report;
    progress_state progress;
    memset(&report, 0, sizeof report);
    memset(&progress, 0, sizeof progress);
    o->fit.method = o->method == FM_RIDGE ? RFX_METHOD_RIDGE : RFX_METHOD_BAYES;
    if (isatty(STDERR_FILENO)) {
        o->fit.progress = progress_show;
        o->fit.progress_user = &progress;
    }
    double t0 = now_seconds();
    rfx_status st = rfx_model_fit(&o->fit, rfx_data_x(data), rfx_data_y(data), &model, &report);
    double seconds = now_seconds() - t0;
    progress_end(&progress);
    int rc = save_fitted(st, model, path);
    if (rc == RC_OK)
        print_fit_report(model, &report, &o->fit, o->ko.have_gamma || o->ko.have_length_scale,
                         data, seconds, path);
    rfx_model_free(model);
    return rc;
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
    fprintf(e, "%-16s %zu rows x %zu inputs, target '%s'\n", "data", X.rows, X.cols,
            rfx_data_name(data, SIZE_MAX));
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
    fprintf(e, "%-16s %s\n", "model", path);
}

/* srfe, lasso, harfe: rfx_srfe_fit from its defaults and what was given. */
static int fit_sparse(const fit_opts *o, const rfx_data *data, const char *path)
{
    rfx_srfe_params sp = rfx_srfe_params_default();
    rfx_srfe_report report;
    rfx_model *model = NULL;
    progress_state progress;
    rfx_cmat X = rfx_data_x(data);
    memset(&report, 0, sizeof report);
    memset(&progress, 0, sizeof progress);
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
    if (o->given[O_WEIGHTS]) sp.features.weights = o->weights;
    if (o->given[O_WEIGHT_SCALE]) sp.features.weight_scale = o->weight_scale;
    if (o->given[O_SPARSITY]) sp.features.sparsity = o->sparsity;
    if (isatty(STDERR_FILENO)) {
        sp.progress = progress_show;
        sp.progress_user = &progress;
    }
    double t0 = now_seconds();
    rfx_status st = rfx_srfe_fit(&sp, X, rfx_data_y(data), &model, &report);
    double seconds = now_seconds() - t0;
    progress_end(&progress);
    int rc = save_fitted(st, model, path);
    if (rc == RC_OK) print_sparse_report(o, &sp, &report, data, seconds, path);
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
    fprintf(e, "%-16s %zu rows x %zu inputs, target '%s'\n", "data", X.rows, X.cols,
            rfx_data_name(data, SIZE_MAX));
    if (o->given[O_UNIFORM])
        fprintf(e, "%-16s uniform [%.6g, %.6g], every input\n", "marginals", o->dist_a, o->dist_b);
    else if (o->given[O_NORMAL])
        fprintf(e, "%-16s normal N(%.6g, %.6g^2), every input\n", "marginals", o->dist_a,
                o->dist_b);
    else
        fprintf(e, "%-16s uniform on each column's training [min, max]\n", "marginals");
    if (p->degree_min > 0 && p->degree_min < p->degree)
        fprintf(e, "%-16s %zu (chosen by the corrected leave-one-out error from %zu..%zu)\n",
                "degree", in.degree, p->degree_min, p->degree);
    else
        fprintf(e, "%-16s %zu\n", "degree", in.degree);
    if (p->q_norm < 1 || p->max_interaction > 0)
        fprintf(e, "%-16s q-norm %g, at most %zu inputs per term\n", "truncation", p->q_norm,
                p->max_interaction ? p->max_interaction : X.cols);
    fprintf(e, "%-16s %zu of %zu candidates\n", "terms", in.n_terms, in.n_candidates);
    fprintf(e, "%-16s %.6g (relative %.6g, corrected %.6g)\n", "LOO error", in.loo_mse,
            in.loo_relative, in.loo_corrected);
    fprintf(e, "%-16s %.6g\n", "mean", in.mean);
    fprintf(e, "%-16s %.6g\n", "variance", in.variance);
    fprintf(e, "%-16s %.3f s\n", "time", seconds);
    fprintf(e, "%-16s %s\n", "model", path);
}

/* pce: rfx_pce_fit on the marginals given, or uniform ones over the
 * training range of each column, then a model of the expansion. */
static int fit_pce(const fit_opts *o, const rfx_data *data, const char *path)
{
    rfx_cmat X = rfx_data_x(data), Y = rfx_data_y(data);
    const size_t n = X.rows, d = X.cols;
    rfx_pce_params p = rfx_pce_params_default();
    rfx_marginal *mg = malloc((d ? d : 1) * sizeof *mg);
    double *y = malloc((n ? n : 1) * sizeof *y);
    rfx_pce *pce = NULL;
    rfx_model *model = NULL;
    int rc;
    if (!mg || !y) {
        free(mg);
        free(y);
        say("out of memory for %zu rows", n);
        return RC_INTERNAL;
    }
    for (size_t j = 0; j < d; j++) {
        if (o->given[O_UNIFORM]) {
            mg[j] = rfx_marginal_uniform(o->dist_a, o->dist_b);
        } else if (o->given[O_NORMAL]) {
            mg[j] = rfx_marginal_normal(o->dist_a, o->dist_b);
        } else {
            double lo = X.data[j], hi = X.data[j];
            for (size_t i = 1; i < n; i++) {
                double v = X.data[i * X.stride + j];
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
            if (!(hi > lo)) { /* a constant column */
                lo -= 0.5;
                hi += 0.5;
            }
            mg[j] = rfx_marginal_uniform(lo, hi);
        }
    }
    for (size_t i = 0; i < n; i++) y[i] = Y.data[i * Y.stride];
    p.marginals = mg;
    p.method = o->pce_method;
    p.degree_min = o->given[O_DEGREE_MIN] ? o->degree_min : 1;
    if (o->given[O_DEGREE]) {
        p.degree = o->degree;
    } else {
        p.degree = pce_default_degree(d);
        if (p.degree < p.degree_min) p.degree = p.degree_min;
    }
    if (o->given[O_Q_NORM]) p.q_norm = o->q_norm;
    if (o->given[O_MAX_INTERACTION]) p.max_interaction = o->max_interaction;
    if (o->given[O_THREADS]) p.n_threads = o->fit.features.n_threads;
    double t0 = now_seconds();
    rfx_status st = rfx_pce_fit(&p, X, y, &pce);
    /* no basis given: also the pairwise basis of a higher degree, and keep
       the fit of lower corrected leave-one-out error */
    const size_t p2 = pce_pairwise_degree(d, n);
    if (st == RFX_OK && d >= 3 && !o->given[O_DEGREE] && !o->given[O_Q_NORM] &&
        !o->given[O_MAX_INTERACTION] && p2 > p.degree) {
        rfx_pce_params q = p;
        rfx_pce *pce2 = NULL;
        rfx_pce_info a, b;
        q.max_interaction = 2;
        q.degree = p2;
        st = rfx_pce_fit(&q, X, y, &pce2);
        if (st == RFX_OK) st = rfx_pce_get_info(pce, &a);
        if (st == RFX_OK) st = rfx_pce_get_info(pce2, &b);
        if (st == RFX_OK && b.loo_corrected < a.loo_corrected) {
            rfx_pce_free(pce);
            pce = pce2;
            pce2 = NULL;
            p = q;
        }
        rfx_pce_free(pce2);
    }
    double seconds = now_seconds() - t0;
    if (st == RFX_OK) st = rfx_model_from_pce(pce, &model);
    rc = save_fitted(st, model, path);
    if (rc == RC_OK) print_pce_report(o, &p, pce, data, seconds, path);
    rfx_model_free(model);
    rfx_pce_free(pce);
    free(mg);
    free(y);
    return rc;
}

static int program_in_path(const char *name);
static int plot_history(const char *path, const double *history, size_t n, const char *title);

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
                now_seconds() - p->t0);
    else
        fprintf(stderr, "%s: iteration %zu of at most %zu (%.1f s)\n", stage ? stage : "", t,
                p->iterations, now_seconds() - p->t0);
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
    else if (p->surrogate == RFX_METHOD_RIDGE)
        snprintf(buf, size, "the ridge surrogate's GCV score");
    else if (p->surrogate == RFX_METHOD_SRFE)
        snprintf(buf, size, "the srfe surrogate's GCV score");
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
    fprintf(e, "%-16s projected (a %s surrogate on k = %zu kernel PCA scores)\n", "method",
            rfx_method_name(p->surrogate), in.n_components);
    fprintf(e, "%-16s %zu rows x %zu inputs, target '%s'\n", "data", X.rows, X.cols,
            rfx_data_name(data, SIZE_MAX));
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
    for (size_t j = 0; j < in.n_inputs; j++)
        fprintf(e, "%-16s %s %.6g\n", "theta", rfx_data_name(data, j), in.theta[j]);
    if (!p->theta) fprintf(e, "%-16s %.6g\n", "search loss", r->search_loss);
    if (r->finalists > 0)
        fprintf(e, "%-16s %zu candidates (theta, gamma, k) by the %s surrogate's own %s\n",
                "finalists", r->finalists, rfx_method_name(p->surrogate),
                p->surrogate == RFX_METHOD_PCE ? "corrected leave-one-out error" : "GCV score");
    fprintf(e, "%-16s %.6g\n", "final loss", r->loss);
    fprintf(e, "%-16s %zu in %zu iterations\n", "evaluations", r->evaluations, r->n_iterations);
    fprintf(e, "%-16s %.3f s\n", "time", seconds);
    fprintf(e, "%-16s %s\n", "model", path);
}

/* projected: rfx_projected_fit from its defaults and what was given. */
static int fit_projected(const fit_opts *o, const rfx_data *data, const char *path)
{
    rfx_cmat X = rfx_data_x(data);
    const size_t d = X.cols;
    rfx_projected_params p = o->proj;
    rfx_projected_report report;
    rfx_fit_params fp = rfx_fit_params_default();
    rfx_srfe_params sp = rfx_srfe_params_default();
    rfx_model *model = NULL;
    pso_progress progress;
    int rc;
    if (o->theta && o->n_theta != d) {
        say("--theta: %zu values for %zu inputs; give one weight per input", o->n_theta, d);
        return RC_USAGE;
    }
    double *theta = malloc((d ? d : 1) * sizeof *theta);
    double *hist = malloc((p.iterations + 1) * sizeof *hist);
    double *given = o->theta ? malloc((d ? d : 1) * sizeof *given) : NULL;
    if (!theta || !hist || (o->theta && !given)) {
        free(theta);
        free(hist);
        free(given);
        say("out of memory for %zu inputs", d);
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
    if (o->given[O_FOLDS]) p.n_folds = o->folds;
    if (o->given[O_SEED]) p.seed = o->fit.features.seed;
    if (o->given[O_GAMMA]) p.gamma = o->ko.gamma;
    if (o->given[O_NO_STANDARDIZE]) p.standardize = 0;
    p.n_threads = o->fit.features.n_threads;
    if (o->given[O_FEATURES]) {
        fp.features.n_features = o->fit.features.n_features;
        sp.features.n_features = o->fit.features.n_features;
        p.fit = &fp;
        p.srfe = &sp;
    }
    memset(&progress, 0, sizeof progress);
    progress.iterations = p.iterations;
    if (isatty(STDERR_FILENO)) {
        p.progress = pso_progress_show;
        p.progress_user = &progress;
    }
    memset(&report, 0, sizeof report);
    report.theta = theta;
    report.history = hist;
    double t0 = now_seconds();
    progress.t0 = t0;
    rfx_status st = rfx_projected_fit(&p, X, rfx_data_y(data), &model, &report);
    double seconds = now_seconds() - t0;
    rc = save_fitted(st, model, path);
    if (rc == RC_OK) print_projected_report(&p, &report, model, data, seconds, path);
    if (rc == RC_OK && o->plot_path) {
        char title[128];
        rfx_projected_info in;
        size_t k = rfx_model_projected_info(model, &in) == RFX_OK ? in.n_components
                                                                   : p.n_components;
        snprintf(title, sizeof title, "projected surrogate (%s, k = %zu): best loss",
                 rfx_method_name(p.surrogate), k);
        rc = plot_history(o->plot_path, hist, report.n_iterations, title);
        if (rc == RC_OK) fprintf(stderr, "%-16s %s\n", "plot", o->plot_path);
    }
    rfx_model_free(model);
    free(theta);
    free(hist);
    free(given);
    return rc;
}

/* A class label as text: the shortest of %.15g, %.16g, %.17g that reads
 * back as the same number. */
static void format_label(double v, char *buf, size_t size)
{
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, size, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) return;
    }
}

static int compare_doubles(const void *a, const void *b);

/* The sorted distinct values of y (n, stride ys) into a malloc'd array. */
static double *distinct_labels(const double *y, size_t ys, size_t n, size_t *count)
{
    double *v = malloc((n ? n : 1) * sizeof *v);
    size_t k = 0;
    if (!v) return NULL;
    for (size_t i = 0; i < n; i++) v[i] = y[i * ys];
    qsort(v, n, sizeof *v, compare_doubles);
    for (size_t i = 0; i < n; i++)
        if (k == 0 || v[i] != v[k - 1]) v[k++] = v[i];
    *count = k;
    return v;
}

/* At most max labels of a list, then "... (N in all)". */
static void print_label_list(FILE *out, const double *v, size_t n, size_t max)
{
    char b[40];
    for (size_t k = 0; k < n && k < max; k++) {
        format_label(v[k], b, sizeof b);
        fprintf(out, "%s%s", k ? " " : "", b);
    }
    if (n > max) fprintf(out, " ... (%zu in all)", n);
}

/* classify: what was used and chosen, on stderr. */
static void print_classify_report(const fit_opts *o, const rfx_model *m, const rfx_fit_report *r,
                                  const rfx_data *data, double seconds, const char *path)
{
    FILE *e = stderr;
    rfx_model_info info;
    rfx_classifier_info ci;
    const double *classes;
    size_t C;
    rfx_cmat X = rfx_data_x(data);
    if (rfx_model_get_info(m, &info) || rfx_model_classifier_info(m, &ci) ||
        rfx_model_classes(m, &classes, &C))
        return;
    const int lchosen = !(o->ko.have_gamma || o->ko.have_length_scale);
    const int lambda_chosen = !o->given[O_LAMBDA];
    char how[64];
    if (o->given[O_FOLDS]) snprintf(how, sizeof how, "chosen by %zu-fold cross-validation", o->folds);
    else snprintf(how, sizeof how, "chosen on a holdout of a quarter of the rows");
    fprintf(e, "%-16s classify (%s loss", "method", rfx_loss_name(ci.loss));
    if (C > 2) fprintf(e, ", %s", ci.multiclass == RFX_MULTICLASS_SOFTMAX ? "softmax" : "one-vs-rest");
    fprintf(e, ", optimizer %s)\n", rfx_optimizer_name(o->cls.optimizer));
    fprintf(e, "%-16s %s", "kernel", rfx_kernel_name(info.features.kernel));
    if (info.features.kernel == RFX_KERNEL_MATERN) fprintf(e, " (nu = %g)", info.features.nu);
    fprintf(e, ", %s features, D = %zu, seed %llu\n", rfx_form_name(info.features.form),
            info.features.n_features, (unsigned long long)info.features.seed);
    fprintf(e, "%-16s %zu rows x %zu inputs, target '%s'\n", "data", X.rows, X.cols,
            rfx_data_name(data, SIZE_MAX));
    fprintf(e, "%-16s %zu: ", "classes", C);
    print_label_list(e, classes, C, 20);
    fputc('\n', e);
    if (o->class_weight) fprintf(e, "%-16s %s\n", "class weights", o->class_weight);
    fprintf(e, "%-16s %.6g (%s%s)\n", "length scale", r->length_scale, lchosen ? how : "given",
            info.standardized ? ", standardised units" : "");
    fprintf(e, "%-16s %.6g (%s)\n", "lambda", r->lambda, lambda_chosen ? how : "given");
    if (r->n_candidates > 0) {
        fprintf(e, "%-16s %zu candidates\n", "", r->n_candidates);
        fprintf(e, "%-16s %.6g (%s)\n", "validation", r->score,
                ci.loss == RFX_LOSS_LOGISTIC ? "mean log-loss" : "error rate");
    }
    fprintf(e, "%-16s %.3f s\n", "time", seconds);
    fprintf(e, "%-16s %s\n", "model", path);
}

/* classify: rfx_model_fit with RFX_METHOD_CLASSIFY; --class-weight LABEL:W
 * pairs are placed on the sorted labels of the data. */
static int fit_classify(fit_opts *o, const rfx_data *data, const char *path)
{
    rfx_model *model = NULL;
    rfx_fit_report report;
    progress_state progress;
    rfx_cmat Y = rfx_data_y(data);
    double *classes = NULL, *cw = NULL, *pl = NULL, *pw = NULL;
    size_t C = 0, np = 0;
    int rc = RC_OK;
    memset(&report, 0, sizeof report);
    memset(&progress, 0, sizeof progress);
    classes = distinct_labels(Y.data, Y.stride, Y.rows, &C);
    if (!classes) {
        say("out of memory for %zu labels", Y.rows);
        return RC_INTERNAL;
    }
    if (C < 2) {
        char b[40];
        format_label(Y.rows ? Y.data[0] : 0, b, sizeof b);
        say("%s: every row of the target '%s' has the label %s; a classifier needs at least 2 "
            "classes", "fit", rfx_data_name(data, SIZE_MAX), b);
        free(classes);
        return RC_DATA;
    }
    if (o->class_weight && strcmp(o->class_weight, "balanced") == 0) {
        o->cls.balanced = 1;
    } else if (o->class_weight) {
        opt_iter it = opt_begin(command_find("fit"), 0, NULL);
        snprintf(it.name, sizeof it.name, "--class-weight");
        parse_class_weights(&it, o->class_weight, NULL, NULL, &np); /* checked: counts */
        cw = malloc(C * sizeof *cw);
        pl = malloc(np * sizeof *pl);
        pw = malloc(np * sizeof *pw);
        if (!cw || !pl || !pw) {
            say("out of memory for %zu class weights", C);
            rc = RC_INTERNAL;
            goto done;
        }
        if (parse_class_weights(&it, o->class_weight, pl, pw, &np)) {
            rc = RC_USAGE;
            goto done;
        }
        for (size_t k = 0; k < C; k++) cw[k] = 1.0;
        for (size_t j = 0; j < np; j++) {
            size_t k = 0;
            while (k < C && classes[k] != pl[j]) k++;
            if (k == C) {
                char b[40];
                format_label(pl[j], b, sizeof b);
                fprintf(stderr, "rfx: --class-weight: %s is not a label of the target '%s' "
                        "(its classes: ", b, rfx_data_name(data, SIZE_MAX));
                print_label_list(stderr, classes, C, 20);
                fputs(")\nTry 'rfx fit --help'.\n", stderr);
                rc = RC_USAGE;
                goto done;
            }
            cw[k] = pw[j];
        }
        o->cls.class_weights = cw;
        o->cls.n_class_weights = C;
    }
    o->fit.method = RFX_METHOD_CLASSIFY;
    o->fit.classify = &o->cls;
    if (o->given[O_FOLDS]) o->fit.classify_folds = o->folds;
    if (isatty(STDERR_FILENO)) {
        o->fit.progress = progress_show;
        o->fit.progress_user = &progress;
    }
    double t0 = now_seconds();
    rfx_status st = rfx_model_fit(&o->fit, rfx_data_x(data), Y, &model, &report);
    double seconds = now_seconds() - t0;
    progress_end(&progress);
    rc = save_fitted(st, model, path);
    if (rc == RC_OK) print_classify_report(o, model, &report, data, seconds, path);
done:
    rfx_model_free(model);
    free(classes);
    free(cw);
    free(pl);
    free(pw);
    return rc;
}

static int cmd_fit(const command *c, int argc, char **argv)
{
    fit_opts o;
    rfx_read_params rp = rfx_read_params_default();
    const char *data_path = NULL, *model_path = NULL;
    opt_iter it = opt_begin(c, argc, argv);
    const char *v;
    int id;

    memset(&o, 0, sizeof o);
    o.method = FM_BAYES;
    o.fit = rfx_fit_params_default();
    o.q_norm = 1.0;
    o.pce_method = RFX_PCE_METHOD_LARS;
    o.proj = rfx_projected_params_default();
    o.cls = rfx_classify_params_default();
    rp.target = "-1";
    int task_classify = 0;
    while ((id = opt_next(&it, &v)) != OPT_DONE) {
        int bad = 0;
        switch (id) {
        case OPT_ERROR: return RC_USAGE;
        case OPT_HELP: return print_command_help(c);
        case OPT_POSITIONAL:
            if (data_path) return usage_error(c, "unexpected argument '%s' (one DATA file)", v);
            data_path = v;
            break;
        case O_TARGET: rp.target = v; break;
        case O_OUTPUT: model_path = v; break;
        case O_METHOD: bad = parse_fit_method(&it, v, &o.method); break;
        case O_TASK:
            if (strcmp(v, "classify") == 0) task_classify = 1;
            else if (strcmp(v, "regression") == 0) task_classify = 0;
            else bad = value_error(&it, "unknown task '%s' (regression or classify)", v);
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
        case O_KERNEL: bad = parse_kernel(&it, v, &o.fit.features.kernel); break;
        case O_NU: bad = parse_nu(&it, v, &o.fit.features.nu); o.ko.have_nu = 1; break;
        case O_FORM: bad = parse_form(&it, v, &o.fit.features.form); break;
        case O_STRUCTURE: bad = parse_structure(&it, v, &o.fit.features.structure); break;
        case O_FEATURES: bad = parse_size(&it, v, 1, &o.fit.features.n_features); break;
        case O_SEED: bad = parse_seed(&it, v, &o.fit.features.seed); break;
        case O_LENGTH_SCALE:
            bad = parse_positive(&it, v, &o.fit.features.length_scale);
            o.ko.have_length_scale = 1;
            break;
        case O_GAMMA: bad = parse_positive(&it, v, &o.ko.gamma); o.ko.have_gamma = 1; break;
        case O_LENGTH_SCALES:
            if (strcmp(v, "learn") == 0) o.fit.learn_length_scales = 1;
            else bad = value_error(&it, "expected 'learn', got '%s'", v);
            break;
        case O_LEARN_ITERATIONS: bad = parse_size(&it, v, 1, &o.fit.learn_iterations); break;
        case O_LAMBDA: bad = parse_nonnegative(&it, v, &o.fit.lambda); break;
        case O_NOISE_VAR: bad = parse_positive(&it, v, &o.fit.noise_var); break;
        case O_PRIOR_VAR: bad = parse_positive(&it, v, &o.fit.prior_var); break;
        case O_NO_STANDARDIZE: o.fit.standardize = 0; break;
        case O_NO_INTERCEPT: o.fit.fit_intercept = 0; break;
        case O_THREADS: bad = parse_threads(&it, v, &o.fit.features.n_threads); break;
        case O_SPARSITY: bad = parse_size(&it, v, 1, &o.sparsity); break;
        case O_ACTIVATION: bad = parse_activation(&it, v, &o.activation); break;
        case O_WEIGHTS: bad = parse_weight_dist(&it, v, &o.weights); break;
        case O_WEIGHT_SCALE: bad = parse_positive(&it, v, &o.weight_scale); break;
        case O_ETA: bad = parse_positive(&it, v, &o.eta); break;
        case O_TERMS: bad = parse_size(&it, v, 1, &o.terms); break;
        case O_FOLDS: bad = parse_size(&it, v, 2, &o.folds); break;
        case O_DEGREE: bad = parse_size(&it, v, 1, &o.degree); break;
        case O_DEGREE_MIN: bad = parse_size(&it, v, 1, &o.degree_min); break;
        case O_Q_NORM:
            bad = parse_positive(&it, v, &o.q_norm);
            if (!bad && o.q_norm > 1) bad = value_error(&it, "must be in (0, 1], got %s", v);
            break;
        case O_MAX_INTERACTION: bad = parse_size(&it, v, 1, &o.max_interaction); break;
        case O_PCE_METHOD: bad = parse_pce_method(&it, v, &o.pce_method); break;
        case O_K: bad = parse_size(&it, v, 1, &o.proj.n_components); break;
        case O_SURROGATE: bad = parse_surrogate(&it, v, &o.proj.surrogate); break;
        case O_ITERATIONS: bad = parse_size(&it, v, 1, &o.proj.iterations); break;
        case O_PARTICLES: bad = parse_size(&it, v, 1, &o.proj.n_particles); break;
        case O_PATIENCE: bad = parse_size(&it, v, 0, &o.proj.patience); break;
        case O_THETA: bad = parse_theta(&it, v, NULL, &o.n_theta); o.theta = v; break;
        case O_PLOT: o.plot_path = v; break;
        case O_UNIFORM:
            bad = parse_pair(&it, v, &o.dist_a, &o.dist_b);
            if (!bad && !(o.dist_a < o.dist_b))
                bad = value_error(&it, "expected A < B, got '%s'", v);
            break;
        case O_NORMAL:
            bad = parse_pair(&it, v, &o.dist_a, &o.dist_b);
            if (!bad && !(o.dist_b > 0)) bad = value_error(&it, "expected SD > 0, got '%s'", v);
            break;
        case O_DELIMITER:
        case O_NO_HEADER: bad = parse_read_option(&it, id, v, &rp); break;
        default: return usage_error(c, "internal: unhandled option %s", it.name);
        }
        if (bad) return RC_USAGE;
        if (id > 0 && id < O_COUNT) o.given[id] = 1;
    }
    if (!data_path) return usage_error(c, "missing DATA, the CSV or .npy file to fit");
    if (!model_path) return usage_error(c, "missing -o MODEL, where to write the model");
    if (task_classify && o.given[O_METHOD] && o.method != FM_CLASSIFY)
        return usage_error(c, "--task classify fits --method classify, not %s",
                           FIT_METHODS[o.method]);
    if (o.given[O_TASK] && !task_classify && o.method == FM_CLASSIFY)
        return usage_error(c, "--method classify is not a regression (--task regression)");
    if (task_classify) o.method = FM_CLASSIFY;
    if (fit_check_methods(c, &o)) return RC_USAGE;
    if (o.given[O_LEARN_ITERATIONS] && !o.fit.learn_length_scales)
        return usage_error(c, "--learn-iterations needs --length-scales learn");
    const int sparse = (FM(o.method) & FM_SPARSE) != 0;
    if (o.method == FM_BAYES || o.method == FM_RIDGE || o.method == FM_CLASSIFY) {
        if (kernel_opts_apply(c, &o.ko, &o.fit.features)) return RC_USAGE;
        if (o.fit.features.form == RFX_FORM_COS_SIN && o.fit.features.n_features % 2 != 0)
            return usage_error(c, "-D must be even with --form cos-sin, got %zu",
                               o.fit.features.n_features);
    }
    if (o.method == FM_CLASSIFY && o.given[O_LAMBDA] && !(o.fit.lambda > 0))
        return usage_error(c, "--lambda must be > 0 for --task classify (leave it out to choose "
                              "it)");
    if (o.method == FM_CLASSIFY && o.cls.multiclass == RFX_MULTICLASS_SOFTMAX &&
        o.cls.loss != RFX_LOSS_LOGISTIC)
        return usage_error(c, "--multiclass softmax takes --loss logistic, not %s",
                           rfx_loss_name(o.cls.loss));
    if (o.method == FM_CLASSIFY && o.cls.optimizer == RFX_OPTIMIZER_LBFGS &&
        o.cls.loss == RFX_LOSS_HINGE)
        return usage_error(c, "--optimizer lbfgs needs a differentiable loss; --loss hinge "
                              "takes dual-cd or sgd");
    if (o.method == FM_CLASSIFY && o.cls.optimizer == RFX_OPTIMIZER_DUAL_CD &&
        o.cls.loss == RFX_LOSS_LOGISTIC)
        return usage_error(c, "--optimizer dual-cd is for --loss hinge or squared-hinge");
    if (sparse && o.given[O_LAMBDA] && !(o.fit.lambda > 0))
        return usage_error(c, "--lambda must be > 0 for --method %s (leave it out to choose it "
                              "by cross-validation)", FIT_METHODS[o.method]);
    if (o.given[O_ETA] && o.given[O_LAMBDA])
        return usage_error(c, "give --eta (basis pursuit denoising) or --lambda (the lasso), "
                              "not both");
    if (o.given[O_UNIFORM] && o.given[O_NORMAL])
        return usage_error(c, "give --uniform or --normal, not both");
    if (o.given[O_DEGREE] && o.given[O_DEGREE_MIN] && o.degree_min > o.degree)
        return usage_error(c, "--degree-min %zu exceeds --degree %zu", o.degree_min, o.degree);
    if (o.theta) {
        static const int SWARM[] = { O_ITERATIONS, O_PARTICLES, O_PATIENCE, O_PLOT };
        for (size_t i = 0; i < sizeof SWARM / sizeof *SWARM; i++) {
            char name[48];
            if (o.given[SWARM[i]])
                return usage_error(c, "%s sets the particle swarm, which --theta replaces",
                                   option_name(c, SWARM[i], name, sizeof name));
        }
    }
    if (o.method == FM_PROJECTED && o.given[O_FEATURES] && o.proj.surrogate == RFX_METHOD_PCE)
        return usage_error(c, "-D applies to --surrogate ridge, bayes or srfe, not pce");
    if (o.plot_path && !program_in_path("gnuplot")) {
        say("--plot: gnuplot is not installed (not found in PATH); install it or leave out --plot");
        return RC_IO;
    }

    rfx_data *data = NULL;
    int rc;
    rfx_status st = rfx_data_read(data_path, &rp, &data);
    if (st != RFX_OK) return fail(st);
    if (o.method == FM_PCE)
        rc = fit_pce(&o, data, model_path);
    else if (o.method == FM_PROJECTED)
        rc = fit_projected(&o, data, model_path);
    else if (sparse)
        rc = fit_sparse(&o, data, model_path);
    else if (o.method == FM_CLASSIFY)
        rc = fit_classify(&o, data, model_path);
    else
        rc = fit_rff(&o, data, model_path);
    rfx_data_free(data);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* rfx predict                                                               */
/* ------------------------------------------------------------------------ */

/* Read the inputs of a model with d inputs from path: all columns, or all
 * but the target column when there is one column more than d. Any other
 * width is left for rfx_model_predict to reject with its message. */
static rfx_status read_inputs(const char *path, rfx_read_params rp, const char *target, size_t d,
                              rfx_data **out)
{
    rfx_data *data = NULL;
    rfx_status st;
    rp.target = NULL;
    st = rfx_data_read(path, &rp, &data);
    if (st != RFX_OK) return st;
    if (rfx_data_x(data).cols == d + 1) {
        rfx_data_free(data);
        data = NULL;
        rp.target = target;
        st = rfx_data_read(path, &rp, &data);
        if (st != RFX_OK) return st;
    }
    *out = data;
    return RFX_OK;
}

/* Write M (with a header of names) to out_path: CSV, .npy, or stdout. */
static int write_output(const char *out_path, rfx_cmat M, const char *const *names)
{
    rfx_status st;
    if (!out_path || strcmp(out_path, "-") == 0) return write_csv_stdout(M, names);
    if (ends_with(out_path, ".npy")) st = rfx_npy_write(out_path, M);
    else st = rfx_csv_write(out_path, M, names);
    return st == RFX_OK ? RC_OK : fail(st);
}

/* rfx predict with a classifier: the column 'label' and, with --proba, one
 * column of probabilities per class named by its label. */
static int predict_classes(const command *c, const rfx_model *model, const char *data_path,
                           rfx_read_params rp, const char *target, size_t d, int want_proba,
                           const char *out_path)
{
    rfx_classifier_info ci;
    const double *classes;
    size_t C = 0;
    rfx_data *data = NULL;
    double *out = NULL;
    char **names = NULL, *text = NULL;
    int rc = RC_OK;
    rfx_status st = rfx_model_classifier_info(model, &ci);
    if (st == RFX_OK) st = rfx_model_classes(model, &classes, &C);
    if (st != RFX_OK) return fail(st);
    if (want_proba && ci.loss != RFX_LOSS_LOGISTIC)
        return usage_error(c, "--proba: this classifier has the %s loss, which gives no "
                              "probabilities (fit with --loss logistic)", rfx_loss_name(ci.loss));
    st = read_inputs(data_path, rp, target, d, &data);
    if (st != RFX_OK) return fail(st);
    rfx_cmat X = rfx_data_x(data);
    const size_t w = want_proba ? C + 1 : 1;
    out = calloc(X.rows ? X.rows : 1, w * sizeof *out);
    names = malloc(w * sizeof *names);
    text = malloc(w * 40);
    if (!out || !names || !text) {
        say("out of memory for %zu x %zu predictions", X.rows, w);
        rc = RC_INTERNAL;
        goto done;
    }
    names[0] = text;
    snprintf(text, 40, "label");
    for (size_t k = 0; k + 1 < w; k++) {
        names[k + 1] = text + 40 * (k + 1);
        format_label(classes[k], names[k + 1], 40);
    }
    st = rfx_model_predict(model, X, (rfx_mat){ out, X.rows, 1, w }, rfx_mat_none());
    if (st == RFX_OK && want_proba)
        st = rfx_model_predict_proba(model, X, (rfx_mat){ out + 1, X.rows, C, w });
    if (st != RFX_OK) {
        rc = fail(st);
        goto done;
    }
    rc = write_output(out_path, (rfx_cmat){ out, X.rows, w, w }, (const char *const *)names);
done:
    free(out);
    free(names);
    free(text);
    rfx_data_free(data);
    return rc;
}

static int cmd_predict(const command *c, int argc, char **argv)
{
    rfx_read_params rp = rfx_read_params_default();
    const char *pos[2] = { NULL, NULL }, *out_path = NULL, *target = "-1";
    int want_std = 0, want_proba = 0, n_pos = 0;
    opt_iter it = opt_begin(c, argc, argv);
    const char *v;
    int id;

    while ((id = opt_next(&it, &v)) != OPT_DONE) {
        int bad = 0;
        switch (id) {
        case OPT_ERROR: return RC_USAGE;
        case OPT_HELP: return print_command_help(c);
        case OPT_POSITIONAL:
            if (n_pos == 2) return usage_error(c, "unexpected argument '%s'", v);
            pos[n_pos++] = v;
            break;
        case O_OUTPUT: out_path = v; break;
        case O_STD: want_std = 1; break;
        case O_PROBA: want_proba = 1; break;
        case O_TARGET: target = v; break;
        case O_DELIMITER:
        case O_NO_HEADER: bad = parse_read_option(&it, id, v, &rp); break;
        default: return usage_error(c, "internal: unhandled option %s", it.name);
        }
        if (bad) return RC_USAGE;
    }
    if (n_pos < 2) return usage_error(c, n_pos ? "missing DATA" : "missing MODEL and DATA");

    rfx_model *model = NULL;
    rfx_data *data = NULL;
    double *out = NULL;
    char **names = NULL;
    rfx_model_info info;
    rfx_status st;
    int rc = RC_OK;

    st = rfx_model_load(pos[0], &model);
    if (st == RFX_OK) st = rfx_model_get_info(model, &info);
    if (st != RFX_OK) {
        rc = fail(st);
        goto done;
    }
    if (want_std && info.method == RFX_METHOD_CLASSIFY) {
        rc = usage_error(c, "--std: a classifier has no predictive standard deviation (--proba "
                            "gives class probabilities)");
        goto done;
    }
    if (want_std && !info.has_std) {
        rc = usage_error(c, "--std: this %s model has no predictive standard deviation "
                            "(fit with --method bayes)", rfx_method_name(info.method));
        goto done;
    }
    if (want_proba && info.method != RFX_METHOD_CLASSIFY) {
        rc = usage_error(c, "--proba: this %s model is not a classifier (fit with --task "
                            "classify)", rfx_method_name(info.method));
        goto done;
    }
    if (info.method == RFX_METHOD_CLASSIFY) {
        rc = predict_classes(c, model, pos[1], rp, target, info.n_inputs, want_proba, out_path);
        goto done;
    }
    st = read_inputs(pos[1], rp, target, info.n_inputs, &data);
    if (st != RFX_OK) {
        rc = fail(st);
        goto done;
    }
    rfx_cmat X = rfx_data_x(data);
    size_t ny = info.n_targets, w = want_std ? 2 * ny : ny;
    out = calloc(X.rows ? X.rows : 1, w * sizeof(double));
    names = output_names(ny, want_std);
    if (!out || !names) {
        say("out of memory for %zu x %zu predictions", X.rows, w);
        rc = RC_INTERNAL;
        goto done;
    }
    rfx_mat yhat = { out, X.rows, ny, w };
    rfx_mat ystd = { out + ny, X.rows, ny, w };
    st = rfx_model_predict(model, X, yhat, want_std ? ystd : rfx_mat_none());
    if (st != RFX_OK) {
        rc = fail(st);
        goto done;
    }
    rfx_cmat M = { out, X.rows, w, w };
    if (!out_path || strcmp(out_path, "-") == 0)
        rc = write_csv_stdout(M, (const char *const *)names);
    else if (ends_with(out_path, ".npy") && (st = rfx_npy_write(out_path, M)) != RFX_OK)
        rc = fail(st);
    else if (!ends_with(out_path, ".npy") &&
             (st = rfx_csv_write(out_path, M, (const char *const *)names)) != RFX_OK)
        rc = fail(st);
done:
    free(names);
    free(out);
    rfx_data_free(data);
    rfx_model_free(model);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* rfx eval                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct metrics {
    double rmse, mae, r2, rel_l2;
} metrics;

/* Errors of predictions f (n, stride fs) against targets y (n, stride ys). */
static metrics metrics_compute(const double *f, size_t fs, const double *y, size_t ys, size_t n)
{
    double mean = 0, sse = 0, sae = 0, sst = 0;
    metrics m;
    for (size_t i = 0; i < n; ++i) mean += y[i * ys];
    mean /= (double)n;
    for (size_t i = 0; i < n; ++i) {
        double r = f[i * fs] - y[i * ys], t = y[i * ys] - mean;
        sse += r * r;
        sae += fabs(r);
        sst += t * t;
    }
    m.rmse = sqrt(sse / (double)n);
    m.mae = sae / (double)n;
    m.r2 = sst > 0 ? 1.0 - sse / sst : NAN;
    m.rel_l2 = sst > 0 ? sqrt(sse / sst) : NAN;
    return m;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Accuracy of f rounded to the nearest of the labels found in y. */
static int class_accuracy(const double *f, size_t fs, const double *y, size_t ys, size_t n,
                          double *accuracy, size_t *n_classes)
{
    double *labels = malloc(n * sizeof *labels);
    size_t k = 0, correct = 0;
    if (!labels) {
        say("out of memory for %zu labels", n);
        return RC_INTERNAL;
    }
    for (size_t i = 0; i < n; ++i) {
        double t = y[i * ys];
        if (t != floor(t)) {
            say("--classes: the target %.17g in row %zu is not an integer class label", t, i + 1);
            free(labels);
            return RC_DATA;
        }
        labels[i] = t;
    }
    qsort(labels, n, sizeof *labels, compare_doubles);
    for (size_t i = 0; i < n; ++i)
        if (k == 0 || labels[i] != labels[k - 1]) labels[k++] = labels[i];
    for (size_t i = 0; i < n; ++i) {
        /* the first label >= f, then the nearer of it and its predecessor */
        size_t lo = 0, hi = k;
        double p = f[i * fs];
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (labels[mid] < p) lo = mid + 1; else hi = mid;
        }
        size_t best = lo == k ? k - 1 : lo;
        if (lo > 0 && lo < k && p - labels[lo - 1] <= labels[lo] - p) best = lo - 1;
        correct += labels[best] == y[i * ys];
    }
    *accuracy = (double)correct / (double)n;
    *n_classes = k;
    free(labels);
    return RC_OK;
}

static int print_eval(const double *f, size_t fs, const double *y, size_t ys, size_t n, int classes)
{
    metrics m = metrics_compute(f, fs, y, ys, n);
    printf("%-9s %zu\n", "rows", n);
    printf("%-9s %.6g\n", "RMSE", m.rmse);
    printf("%-9s %.6g\n", "MAE", m.mae);
    printf("%-9s %.6g\n", "R^2", m.r2);
    printf("%-9s %.6g\n", "rel_L2", m.rel_l2);
    if (classes) {
        double acc;
        size_t k;
        int rc = class_accuracy(f, fs, y, ys, n, &acc, &k);
        if (rc != RC_OK) return rc;
        printf("%-9s %zu\n", "classes", k);
        printf("%-9s %.6g\n", "accuracy", acc);
    }
    return RC_OK;
}

/* Predictions of the model at model_path for the inputs of truth; for a
 * classifier *classes (malloc'd) and *n_classes receive its classes
 * (NULL and 0 otherwise). */
static int eval_predict(const char *model_path, const rfx_data *truth, double **out,
                        double **classes, size_t *n_classes)
{
    rfx_model *model = NULL;
    rfx_model_info info;
    rfx_cmat X = rfx_data_x(truth);
    rfx_status st = rfx_model_load(model_path, &model);
    if (st == RFX_OK) st = rfx_model_get_info(model, &info);
    if (st != RFX_OK) {
        rfx_model_free(model);
        return fail(st);
    }
    if (info.n_targets != 1) {
        say("%s: the model predicts %zu targets; eval compares one", model_path, info.n_targets);
        rfx_model_free(model);
        return RC_DATA;
    }
    double *f = malloc((X.rows ? X.rows : 1) * sizeof *f);
    if (!f) {
        rfx_model_free(model);
        say("out of memory for %zu predictions", X.rows);
        return RC_INTERNAL;
    }
    st = rfx_model_predict(model, X, rfx_mat_of(f, X.rows, 1), rfx_mat_none());
    *classes = NULL;
    *n_classes = 0;
    if (st == RFX_OK && info.method == RFX_METHOD_CLASSIFY) {
        const double *c;
        size_t C = 0;
        st = rfx_model_classes(model, &c, &C);
        if (st == RFX_OK && !(*classes = malloc(C * sizeof **classes))) {
            rfx_model_free(model);
            free(f);
            say("out of memory for %zu classes", C);
            return RC_INTERNAL;
        }
        if (st == RFX_OK) {
            memcpy(*classes, c, C * sizeof *c);
            *n_classes = C;
        }
    }
    rfx_model_free(model);
    if (st != RFX_OK) {
        free(f);
        return fail(st);
    }
    *out = f;
    return RC_OK;
}

/* A classifier's predicted labels f against the true labels y (n rows):
 * the accuracy, per class precision, recall and support, and the confusion
 * matrix (rows true, columns predicted) over the model's classes and any
 * other label found in y (never predicted). */
static int print_classification(const double *f, const double *y, size_t ys, size_t n,
                                 const double *mclasses, size_t mC)
{
    size_t K = 0, *cm = NULL;
    double *labels = malloc((n + mC ? n + mC : 1) * sizeof *labels);
    if (!labels) {
        say("out of memory for %zu labels", n + mC);
        return RC_INTERNAL;
    }
    for (size_t k = 0; k < mC; k++) labels[K++] = mclasses[k];
    for (size_t i = 0; i < n; i++) labels[K++] = y[i * ys];
    qsort(labels, K, sizeof *labels, compare_doubles);
    size_t u = 0;
    for (size_t i = 0; i < K; i++)
        if (u == 0 || labels[i] != labels[u - 1]) labels[u++] = labels[i];
    K = u;
    if (K > 1000) {
        say("%zu distinct labels: too many for a confusion matrix (is the target a class "
            "label?)", K);
        free(labels);
        return RC_DATA;
    }
    cm = calloc(K * K, sizeof *cm);
    if (!cm) {
        free(labels);
        say("out of memory for a %zu x %zu confusion matrix", K, K);
        return RC_INTERNAL;
    }
    size_t correct = 0;
    for (size_t i = 0; i < n; i++) {
        double t = y[i * ys];
        size_t a = (size_t)((const double *)bsearch(&t, labels, K, sizeof t, compare_doubles) -
                            labels);
        size_t b = (size_t)((const double *)bsearch(&f[i], labels, K, sizeof t,
                                                    compare_doubles) - labels);
        cm[a * K + b]++;
        correct += a == b;
    }
    char lab[40];
    int w = 10;
    for (size_t k = 0; k < K; k++) {
        format_label(labels[k], lab, sizeof lab);
        if ((int)strlen(lab) + 1 > w) w = (int)strlen(lab) + 1;
    }
    printf("%-9s %zu\n", "rows", n);
    printf("%-9s %.6g\n", "accuracy", n ? (double)correct / (double)n : NAN);
    printf("%-9s %zu\n", "classes", K);
    printf("\n%-*s %-10s %-10s %s\n", w, "class", "precision", "recall", "support");
    for (size_t k = 0; k < K; k++) {
        size_t pred = 0, sup = 0;
        for (size_t j = 0; j < K; j++) {
            pred += cm[j * K + k];
            sup += cm[k * K + j];
        }
        format_label(labels[k], lab, sizeof lab);
        printf("%-*s ", w, lab);
        if (pred) printf("%-10.6g ", (double)cm[k * K + k] / (double)pred);
        else printf("%-10s ", "-");
        if (sup) printf("%-10.6g ", (double)cm[k * K + k] / (double)sup);
        else printf("%-10s ", "-");
        printf("%zu\n", sup);
    }
    printf("\nconfusion (rows: true class, columns: predicted class)\n%-*s", w, "true\\pred");
    for (size_t k = 0; k < K; k++) {
        format_label(labels[k], lab, sizeof lab);
        printf(" %-*s", w, lab);
    }
    putchar('\n');
    for (size_t a = 0; a < K; a++) {
        format_label(labels[a], lab, sizeof lab);
        printf("%-*s", w, lab);
        for (size_t b = 0; b < K; b++) printf(" %-*zu", w, cm[a * K + b]);
        putchar('\n');
    }
    free(cm);
    free(labels);
    return RC_OK;
}

static int cmd_eval(const command *c, int argc, char **argv)
{
    rfx_read_params rp = rfx_read_params_default();
    const char *pos[2] = { NULL, NULL }, *pred_path = NULL, *truth_path = NULL;
    int classes = 0, n_pos = 0;
    opt_iter it = opt_begin(c, argc, argv);
    const char *v;
    int id;

    rp.target = "-1";
    while ((id = opt_next(&it, &v)) != OPT_DONE) {
        int bad = 0;
        switch (id) {
        case OPT_ERROR: return RC_USAGE;
        case OPT_HELP: return print_command_help(c);
        case OPT_POSITIONAL:
            if (n_pos == 2) return usage_error(c, "unexpected argument '%s'", v);
            pos[n_pos++] = v;
            break;
        case O_TARGET: rp.target = v; break;
        case O_CLASSES: classes = 1; break;
        case O_PRED: pred_path = v; break;
        case O_TRUTH: truth_path = v; break;
        case O_DELIMITER:
        case O_NO_HEADER: bad = parse_read_option(&it, id, v, &rp); break;
        default: return usage_error(c, "internal: unhandled option %s", it.name);
        }
        if (bad) return RC_USAGE;
    }
    int compare_files = pred_path || truth_path;
    if (compare_files && (!pred_path || !truth_path))
        return usage_error(c, "--pred and --truth go together");
    if (compare_files && n_pos > 0)
        return usage_error(c, "with --pred and --truth, no MODEL or DATA ('%s')", pos[0]);
    if (!compare_files && n_pos < 2)
        return usage_error(c, n_pos ? "missing DATA" : "missing MODEL and DATA");

    rfx_data *truth = NULL, *pred = NULL;
    double *f = NULL, *mclasses = NULL;
    size_t mC = 0;
    const double *fp;
    size_t fs = 1;
    int rc;
    rfx_status st = rfx_data_read(compare_files ? truth_path : pos[1], &rp, &truth);
    if (st != RFX_OK) return fail(st);
    rfx_cmat Y = rfx_data_y(truth);
    if (compare_files) {
        rfx_read_params pp = rfx_read_params_default(); /* as rfx predict writes it */
        st = rfx_data_read(pred_path, &pp, &pred);
        if (st != RFX_OK) {
            rc = fail(st);
            goto done;
        }
        rfx_cmat P = rfx_data_x(pred);
        if (P.rows != Y.rows) {
            say("%s has %zu rows but %s has %zu", pred_path, P.rows, truth_path, Y.rows);
            rc = RC_DATA;
            goto done;
        }
        fp = P.data;
        fs = P.stride;
    } else {
        rc = eval_predict(pos[0], truth, &f, &mclasses, &mC);
        if (rc != RC_OK) goto done;
        fp = f;
    }
    if (mC > 0)
        rc = print_classification(fp, Y.data, Y.stride, Y.rows, mclasses, mC);
    else
        rc = print_eval(fp, fs, Y.data, Y.stride, Y.rows, classes);
done:
    free(f);
    free(mclasses);
    rfx_data_free(pred);
    rfx_data_free(truth);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* rfx info                                                                  */
/* ------------------------------------------------------------------------ */

/* path NULL: without the file lines (the surrogate of a projected model). */
static void print_model_info(const char *path, const rfx_model_info *in, long long file_size)
{
    const rfx_features_params *f = &in->features;
    if (path) {
        printf("%-16s %s\n", "file", path);
        printf("%-16s %lld bytes\n", "file size", file_size);
    }
    printf("%-16s %s\n", "method", rfx_method_name(in->method));
    printf("%-16s %s\n", "kernel", rfx_kernel_name(f->kernel));
    if (f->kernel == RFX_KERNEL_MATERN) printf("%-16s %g\n", "nu", f->nu);
    printf("%-16s %s\n", "form", rfx_form_name(f->form));
    if (f->structure != RFX_STRUCTURE_IID)
        printf("%-16s %s\n", "structure", rfx_structure_name(f->structure));
    printf("%-16s %s\n", "activation", rfx_activation_name(f->activation));
    if (f->sparsity > 0) printf("%-16s q = %zu inputs per feature\n", "sparsity", f->sparsity);
    if (f->weights != RFX_WEIGHTS_KERNEL)
        printf("%-16s %s, scale %g\n", "weights", rfx_weights_name(f->weights), f->weight_scale);
    printf("%-16s %zu\n", "inputs d", in->n_inputs);
    printf("%-16s %zu\n", "features D", f->n_features);
    printf("%-16s %zu\n", "targets", in->n_targets);
    printf("%-16s %zu\n", "rows trained", in->n_train);
    printf("%-16s %llu\n", "seed", (unsigned long long)f->seed);
    if (f->length_scales) {
        printf("%-16s", "length scales");
        for (size_t j = 0; j < in->n_inputs; ++j) printf(" %.6g", f->length_scales[j]);
        putchar('\n');
    } else {
        printf("%-16s %.6g\n", "length scale", f->length_scale);
    }
    printf("%-16s %.6g\n", "lambda", in->lambda);
    if (in->method == RFX_METHOD_BAYES) {
        printf("%-16s %.6g\n", "noise variance", in->noise_var);
        printf("%-16s %.6g\n", "prior variance", in->prior_var);
        printf("%-16s %.6g\n", "log evidence", in->log_evidence);
    }
    printf("%-16s %s\n", "standardized", yes_no(in->standardized));
    printf("%-16s %s\n", "intercept", yes_no(in->fit_intercept));
    printf("%-16s %s\n", "predictive std", yes_no(in->has_std));
}

/* rfx info of a classifier, after the feature model's lines: the loss, the
 * multi-class scheme, the classes and the score columns. */
static int print_classifier_info(const rfx_model *m)
{
    rfx_classifier_info ci;
    const double *classes;
    size_t C = 0;
    rfx_status st = rfx_model_classifier_info(m, &ci);
    if (st == RFX_OK) st = rfx_model_classes(m, &classes, &C);
    if (st != RFX_OK) return fail(st);
    printf("%-16s %s\n", "loss", rfx_loss_name(ci.loss));
    if (C > 2)
        printf("%-16s %s\n", "multiclass",
               ci.multiclass == RFX_MULTICLASS_SOFTMAX ? "softmax" : "ovr (one-vs-rest)");
    printf("%-16s %zu: ", "classes", C);
    print_label_list(stdout, classes, C, 50);
    putchar('\n');
    printf("%-16s %zu\n", "score columns", ci.n_columns);
    printf("%-16s %s\n", "probabilities", yes_no(ci.loss == RFX_LOSS_LOGISTIC));
    return RC_OK;
}

/* A multi-index as "(a_0,...,a_d-1)", or for many inputs its nonzero
 * entries "{i:a_i, ...}" ("{}" for the constant). */
static void print_multi_index(const unsigned *a, size_t d)
{
    enum { FULL_MAX_INPUTS = 16 };
    if (d <= FULL_MAX_INPUTS) {
        for (size_t i = 0; i < d; i++) printf("%s%u", i ? "," : "(", a[i]);
        putchar(')');
        return;
    }
    int first = 1;
    putchar('{');
    for (size_t i = 0; i < d; i++) {
        if (!a[i]) continue;
        printf("%sx%zu:%u", first ? "" : ", ", i, a[i]);
        first = 0;
    }
    putchar('}');
}

/* A term and its |coefficient|, sorted by decreasing magnitude (ties in
 * term order). */
typedef struct term_ref {
    double magnitude;
    size_t k;
} term_ref;

static int by_magnitude(const void *pa, const void *pb)
{
    const term_ref *a = pa, *b = pb;
    if (a->magnitude != b->magnitude) return a->magnitude < b->magnitude ? 1 : -1;
    return (a->k > b->k) - (a->k < b->k);
}

/* rfx info of a PCE model: the expansion, its fit, its largest terms, and
 * its moments and Sobol indices from the coefficients. path NULL: without
 * the file lines (the surrogate of a projected model). */
static int print_pce_info(const char *path, const rfx_model *m, long long file_size)
{
    enum { SHOW_TERMS = 10 };
    const rfx_pce *pce = rfx_model_pce(m);
    rfx_pce_info in;
    rfx_status st = rfx_pce_get_info(pce, &in);
    if (st != RFX_OK) return fail(st);
    const size_t d = in.dim, T = in.n_terms;
    const rfx_marginal *mg = rfx_pce_marginals(pce);
    if (T > 0 && d > SIZE_MAX / sizeof(unsigned) / T) {
        say("%s: %zu terms of %zu inputs do not fit in memory", path, T, d);
        return RC_INTERNAL;
    }
    double *coef = malloc((T ? T : 1) * sizeof *coef), *sob = malloc(2 * d * sizeof *sob);
    unsigned *alpha = malloc((T ? T : 1) * d * sizeof *alpha);
    term_ref *order = malloc((T ? T : 1) * sizeof *order);
    if (!coef || !sob || !alpha || !order) {
        free(coef);
        free(sob);
        free(alpha);
        free(order);
        say("out of memory for %zu terms", T);
        return RC_INTERNAL;
    }
    for (size_t k = 0; k < T && st == RFX_OK; k++) {
        st = rfx_pce_term(pce, k, &coef[k], alpha + k * d);
        order[k].magnitude = fabs(coef[k]);
        order[k].k = k;
    }
    if (st == RFX_OK) st = rfx_pce_sobol(pce, sob, sob + d);
    if (st != RFX_OK) {
        free(coef);
        free(sob);
        free(alpha);
        free(order);
        return fail(st);
    }
    if (path) {
        printf("%-16s %s\n", "file", path);
        printf("%-16s %lld bytes\n", "file size", file_size);
    }
    printf("%-16s %s\n", "method", "pce");
    printf("%-16s %zu\n", "inputs d", d);
    printf("%-16s %d\n", "targets", 1);
    printf("%-16s %zu\n", "rows trained", in.n_train);
    int same = 1;
    for (size_t j = 1; j < d; j++)
        same = same && mg[j].kind == mg[0].kind && mg[j].a == mg[0].a && mg[j].b == mg[0].b;
    for (size_t j = 0; j < (same ? 1 : d); j++) {
        char who[32];
        if (same)
            snprintf(who, sizeof who, "every input");
        else
            snprintf(who, sizeof who, "x%zu", j);
        if (mg[j].kind == RFX_MARGINAL_NORMAL)
            printf("%-16s normal N(%.6g, %.6g^2), %s (Hermite)\n", j ? "" : "marginals",
                   mg[j].a, mg[j].b, who);
        else
            printf("%-16s uniform [%.6g, %.6g], %s (Legendre)\n", j ? "" : "marginals",
                   mg[j].a, mg[j].b, who);
    }
    printf("%-16s %zu\n", "degree", in.degree);
    const char *fitted_by = in.method == RFX_PCE_METHOD_LARS ? "lars" : "lsq";
    printf("%-16s %s\n", "pce method", in.n_train == 0 ? "none (assembled)" : fitted_by);
    printf("%-16s %zu of %zu candidates\n", "terms", T, in.n_candidates);
    printf("%-16s %.6g\n", "LOO mse", in.loo_mse);
    printf("%-16s %.6g\n", "LOO relative", in.loo_relative);
    printf("%-16s %.6g\n", "LOO corrected", in.loo_corrected);
    printf("%-16s %.6g\n", "mean", in.mean);
    printf("%-16s %.6g\n", "variance", in.variance);
    qsort(order, T, sizeof *order, by_magnitude);
    size_t show = T < SHOW_TERMS ? T : SHOW_TERMS;
    printf("%-16s %zu of %zu, by |coefficient|: coefficient multi-index\n", "largest terms",
           show, T);
    for (size_t r = 0; r < show; r++) {
        printf("%-16s %13.6g  ", "", coef[order[r].k]);
        print_multi_index(alpha + order[r].k * d, d);
        putchar('\n');
    }
    printf("%-16s from the coefficients, inputs x0..x%zu%s\n", "Sobol indices", d - 1,
           path ? "" : " (the scores)");
    for (int t = 0; t < 2; t++) {
        printf("%-16s", t ? "Sobol total" : "Sobol first");
        for (size_t j = 0; j < d; j++) printf(" %.4f", sob[t * d + j]);
        putchar('\n');
    }
    free(coef);
    free(sob);
    free(alpha);
    free(order);
    return RC_OK;
}

/* rfx info of a projected model: the kernel PCA, theta, the loss, then the
 * surrogate on the scores as rfx info describes a model of its method. */
static int print_projected_info(const char *path, const rfx_model *m, long long file_size)
{
    rfx_projected_info in;
    rfx_model_info sin;
    rfx_status st = rfx_model_projected_info(m, &in);
    if (st == RFX_OK) st = rfx_model_get_info(in.surrogate, &sin);
    if (st != RFX_OK) return fail(st);
    printf("%-16s %s\n", "file", path);
    printf("%-16s %lld bytes\n", "file size", file_size);
    printf("%-16s %s\n", "method", "projected");
    printf("%-16s %zu\n", "inputs d", in.n_inputs);
    printf("%-16s %d\n", "targets", 1);
    printf("%-16s %zu\n", "rows trained", in.n_train);
    printf("%-16s %zu\n", "components k", in.n_components);
    printf("%-16s %.6g\n", "gamma", in.gamma);
    printf("%-16s %s\n", "standardized", yes_no(in.standardized));
    printf("%-16s", "theta");
    for (size_t j = 0; j < in.n_inputs; j++) printf(" %.6g", in.theta[j]);
    putchar('\n');
    printf("%-16s %.6g\n", "loss", in.loss);
    printf("%-16s %s, on the %zu scores:\n", "surrogate", rfx_method_name(sin.method),
           in.n_components);
    if (rfx_model_pce(in.surrogate)) return print_pce_info(NULL, in.surrogate, file_size);
    print_model_info(NULL, &sin, file_size);
    return RC_OK;
}

static int cmd_info(const command *c, int argc, char **argv)
{
    const char *path = NULL, *v;
    opt_iter it = opt_begin(c, argc, argv);
    int id;

    while ((id = opt_next(&it, &v)) != OPT_DONE) {
        switch (id) {
        case OPT_ERROR: return RC_USAGE;
        case OPT_HELP: return print_command_help(c);
        case OPT_POSITIONAL:
            if (path) return usage_error(c, "unexpected argument '%s' (one MODEL)", v);
            path = v;
            break;
        default: return usage_error(c, "internal: unhandled option %s", it.name);
        }
    }
    if (!path) return usage_error(c, "missing MODEL");

    rfx_model *model = NULL;
    rfx_model_info info;
    struct stat sb;
    int rc = RC_OK;
    rfx_status st = rfx_model_load(path, &model);
    if (st == RFX_OK) st = rfx_model_get_info(model, &info);
    if (st != RFX_OK) {
        rfx_model_free(model);
        return fail(st);
    }
    long long size = stat(path, &sb) == 0 ? (long long)sb.st_size : -1LL;
    if (rfx_model_pce(model))
        rc = print_pce_info(path, model, size);
    else if (info.method == RFX_METHOD_PROJECTED)
        rc = print_projected_info(path, model, size);
    else
        print_model_info(path, &info, size);
    if (rc == RC_OK && info.method == RFX_METHOD_CLASSIFY) rc = print_classifier_info(model);
    rfx_model_free(model);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* rfx kernel-approx                                                         */
/* ------------------------------------------------------------------------ */

/* splitmix64 (Steele, Lea & Flood, OOPSLA 2014): a small seeded generator
 * for the built-in data set, independent of the library's generator. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform on [0, 1) with 53 random bits. */
static double uniform01(uint64_t *state)
{
    return (double)(splitmix64(state) >> 11) * 0x1.0p-53;
}

/* scikit-learn's make_s_curve, X (n x 3): t = 3 pi (u - 1/2), u ~ U(0, 1);
 * x = sin t, y = 2 v with v ~ U(0, 1), z = sign(t) (cos t - 1). */
static void s_curve(double *X, size_t n, uint64_t seed)
{
    uint64_t s = seed;
    for (size_t i = 0; i < n; ++i) {
        double t = 3.0 * PI * (uniform01(&s) - 0.5);
        double v = uniform01(&s);
        double sign = (double)((t > 0) - (t < 0));
        X[3 * i + 0] = sin(t);
        X[3 * i + 1] = 2.0 * v;
        X[3 * i + 2] = sign * (cos(t) - 1.0);
    }
}

/* C(i..i+mi, j..j+mj) += A-rows(i..) . B-rows(j..) over columns k0..k0+kn:
 * the dot products of up to 4 rows of Z with up to 4 others, 16
 * accumulators held in registers (2 flops per load). */
static void gram_block(const double *Z, size_t ldz, size_t i, size_t mi, size_t j, size_t mj,
                       size_t k0, size_t kn, double *C, size_t ldc)
{
    if (mi == 4 && mj == 4) {
        const double *a0 = Z + i * ldz + k0, *a1 = a0 + ldz, *a2 = a1 + ldz, *a3 = a2 + ldz;
        const double *b0 = Z + j * ldz + k0, *b1 = b0 + ldz, *b2 = b1 + ldz, *b3 = b2 + ldz;
        double s00 = 0, s01 = 0, s02 = 0, s03 = 0, s10 = 0, s11 = 0, s12 = 0, s13 = 0;
        double s20 = 0, s21 = 0, s22 = 0, s23 = 0, s30 = 0, s31 = 0, s32 = 0, s33 = 0;
        for (size_t k = 0; k < kn; ++k) {
            double x0 = a0[k], x1 = a1[k], x2 = a2[k], x3 = a3[k];
            double y0 = b0[k], y1 = b1[k], y2 = b2[k], y3 = b3[k];
            s00 += x0 * y0; s01 += x0 * y1; s02 += x0 * y2; s03 += x0 * y3;
            s10 += x1 * y0; s11 += x1 * y1; s12 += x1 * y2; s13 += x1 * y3;
            s20 += x2 * y0; s21 += x2 * y1; s22 += x2 * y2; s23 += x2 * y3;
            s30 += x3 * y0; s31 += x3 * y1; s32 += x3 * y2; s33 += x3 * y3;
        }
        double *c0 = C + i * ldc + j, *c1 = c0 + ldc, *c2 = c1 + ldc, *c3 = c2 + ldc;
        c0[0] += s00; c0[1] += s01; c0[2] += s02; c0[3] += s03;
        c1[0] += s10; c1[1] += s11; c1[2] += s12; c1[3] += s13;
        c2[0] += s20; c2[1] += s21; c2[2] += s22; c2[3] += s23;
        c3[0] += s30; c3[1] += s31; c3[2] += s32; c3[3] += s33;
        return;
    }
    for (size_t a = 0; a < mi; ++a)
        for (size_t b = 0; b < mj; ++b) {
            const double *x = Z + (i + a) * ldz + k0, *y = Z + (j + b) * ldz + k0;
            double s = 0;
            for (size_t k = 0; k < kn; ++k) s += x[k] * y[k];
            C[(i + a) * ldc + j + b] += s;
        }
}

/* C = Z Z^T for Z (n x D, contiguous rows), C n x n: the upper triangle
 * and the diagonal (and some entries below it) are computed. n^2 D flops,
 * by panels of GRAM_PANEL columns so that the panel (n x GRAM_PANEL) stays
 * in cache while every 4 x 4 block of C is accumulated. */
static void gram_upper(const double *Z, size_t n, size_t D, double *C)
{
    enum { GRAM_PANEL = 256 };
    memset(C, 0, n * n * sizeof *C);
    for (size_t k0 = 0; k0 < D; k0 += GRAM_PANEL) {
        size_t kn = D - k0 < GRAM_PANEL ? D - k0 : GRAM_PANEL;
        for (size_t i = 0; i < n; i += 4) {
            size_t mi = n - i < 4 ? n - i : 4;
            for (size_t j = i; j < n; j += 4)
                gram_block(Z, D, i, mi, j, n - j < 4 ? n - j : 4, k0, kn, C, n);
        }
    }
}

/* |K - C|_F / |K|_F for symmetric n x n K and C, from their upper triangles. */
static double relative_frobenius_error(const double *K, const double *C, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; ++i)
        for (size_t j = i; j < n; ++j) {
            double w = i == j ? 1.0 : 2.0, k = K[i * n + j], d = k - C[i * n + j];
            num += w * d * d;
            den += w * k * k;
        }
    return den > 0 ? sqrt(num / den) : NAN;
}

/* Least-squares slope of log err against log D (-1/2 for Monte Carlo). */
static double loglog_slope(const size_t *Ds, const double *err, size_t m)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t i = 0; i < m; ++i) {
        double x = log((double)Ds[i]), y = log(err[i]);
        sx += x; sy += y; sxx += x * x; sxy += x * y;
    }
    double den = (double)m * sxx - sx * sx;
    return den > 0 ? ((double)m * sxy - sx * sy) / den : NAN;
}

/* 1 when an executable called name is in $PATH. */
static int program_in_path(const char *name)
{
    const char *path = getenv("PATH");
    char buf[4096];
    if (!path) path = "/usr/bin:/bin";
    while (*path) {
        size_t len = strcspn(path, ":");
        if (len > 0 && len + strlen(name) + 2 <= sizeof buf) {
            memcpy(buf, path, len);
            buf[len] = '/';
            strcpy(buf + len + 1, name);
            if (access(buf, X_OK) == 0) return 1;
        }
        path += len;
        if (*path == ':') path++;
    }
    return 0;
}

/* A gnuplot single-quoted string: quotes are doubled. */
static void gnuplot_quote(FILE *gp, const char *s)
{
    fputc('\'', gp);
    for (; *s; ++s) {
        if (*s == '\'') fputc('\'', gp);
        fputc(*s, gp);
    }
    fputc('\'', gp);
}

/* Start a PNG plot of path: gnuplot reading from the returned pipe, its
 * terminal set and its output a temporary file beside path (*tmp, to pass
 * to plot_finish). NULL after saying why, with *rc the exit code. */
static FILE *plot_start(const char *path, char **tmp, int *rc)
{
    size_t len = strlen(path);
    char *t = malloc(len + 8);
    int fd;
    FILE *gp;
    *tmp = NULL;
    if (!t) {
        say("out of memory");
        *rc = RC_INTERNAL;
        return NULL;
    }
    memcpy(t, path, len);
    memcpy(t + len, ".XXXXXX", 8);
    fd = mkstemp(t);
    if (fd < 0) {
        say("%s: cannot create a temporary file beside it: %s", path, strerror(errno));
        free(t);
        *rc = RC_IO;
        return NULL;
    }
    fchmod(fd, 0644);
    close(fd);
    signal(SIGPIPE, SIG_IGN); /* a gnuplot that dies early must not kill us */
    gp = popen("gnuplot", "w");
    if (!gp) {
        say("--plot: cannot run gnuplot: %s", strerror(errno));
        unlink(t);
        free(t);
        *rc = RC_IO;
        return NULL;
    }
    fputs("if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
          "  set terminal pngcairo size 900,600 enhanced\n"
          "} else {\n"
          "  set terminal png size 900,600\n"
          "}\n"
          "set output ", gp);
    gnuplot_quote(gp, t);
    fputc('\n', gp);
    *tmp = t;
    return gp;
}

/* Close the plot of plot_start and rename its file over path; the exit
 * code. */
static int plot_finish(const char *path, char *tmp, FILE *gp)
{
    struct stat sb;
    int rc = RC_OK;
    fputs("unset output\n", gp);
    int status = pclose(gp);
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        say("--plot: gnuplot failed (status %d)", status);
        rc = RC_IO;
    } else if (stat(tmp, &sb) != 0 || sb.st_size == 0) {
        say("--plot: gnuplot wrote nothing to %s", tmp);
        rc = RC_IO;
    } else if (rename(tmp, path) != 0) {
        say("%s: %s", path, strerror(errno));
        rc = RC_IO;
    }
    if (rc != RC_OK) unlink(tmp);
    free(tmp);
    return rc;
}

/* Plot err against D (log-log) with a 1/sqrt(D) line through the first
 * point, as a PNG written beside path and renamed over it. */
static int plot_errors(const char *path, const size_t *Ds, const double *err, size_t m,
                       const char *title)
{
    char *tmp;
    int rc;
    FILE *gp = plot_start(path, &tmp, &rc);
    if (!gp) return rc;
    fputs("set title ", gp);
    gnuplot_quote(gp, title);
    fputs("\nset logscale xy\nset grid\nset key top right\n"
          "set xlabel 'D (number of random features)'\n"
          "set ylabel '|K - Z Z^T|_F / |K|_F'\n"
          "$err << EOD\n", gp);
    for (size_t i = 0; i < m; ++i) fprintf(gp, "%zu %.17g\n", Ds[i], err[i]);
    fprintf(gp, "EOD\nc = %.17g\n", err[0] * sqrt((double)Ds[0]));
    fputs("plot $err using 1:2 with linespoints lw 2 pt 7 title 'relative error', \\\n"
          "     c / sqrt(x) with lines dt 2 lw 2 title 'c / sqrt(D)'\n", gp);
    return plot_finish(path, tmp, gp);
}

/* Plot the best loss of a projected fit against the swarm iteration
 * (history[0..n], iteration 0 the initial swarm) as a PNG, as plot_errors
 * does. A log scale when every loss is positive. */
static int plot_history(const char *path, const double *history, size_t n, const char *title)
{
    char *tmp;
    int rc, positive = 1;
    FILE *gp = plot_start(path, &tmp, &rc);
    if (!gp) return rc;
    for (size_t t = 0; t <= n; ++t) positive = positive && history[t] > 0 && isfinite(history[t]);
    fputs("set title ", gp);
    gnuplot_quote(gp, title);
    fprintf(gp, "\n%sset grid\nset key top right\n"
                "set xlabel 'particle swarm iteration (0: the initial swarm)'\n"
                "set ylabel 'best loss (relative MSE)'\n"
                "$loss << EOD\n", positive ? "set logscale y\n" : "");
    for (size_t t = 0; t <= n; ++t)
        if (isfinite(history[t])) fprintf(gp, "%zu %.17g\n", t, history[t]);
    fputs("EOD\n"
          "plot $loss using 1:2 with linespoints lw 2 pt 7 title 'best loss'\n", gp);
    return plot_finish(path, tmp, gp);
}

/* The points of the experiment: the first n rows of DATA, or the S-curve.
 * *owned is what to free; *X views the points. */
static int kernel_approx_points(const char *data_path, const rfx_read_params *rp, size_t n,
                                rfx_data **data, double **owned, rfx_cmat *X)
{
    if (data_path) {
        rfx_status st = rfx_data_read(data_path, rp, data);
        if (st != RFX_OK) return fail(st);
        *X = rfx_data_x(*data);
        if (X->rows > n) X->rows = n;
        return RC_OK;
    }
    if (n > SIZE_MAX / 3 / sizeof(double) || !(*owned = malloc(3 * n * sizeof(double)))) {
        say("out of memory for %zu points", n);
        return RC_INTERNAL;
    }
    s_curve(*owned, n, 0);
    *X = rfx_cmat_of(*owned, n, 3);
    return RC_OK;
}

static int cmd_kernel_approx(const command *c, int argc, char **argv)
{
    enum { MAX_DS = 64 };
    rfx_features_params fp = rfx_features_params_default();
    rfx_read_params rp = rfx_read_params_default();
    kernel_opts ko = { 0, 0, 0, 0.0 };
    size_t Ds[MAX_DS] = { 10, 100, 1000, 10000 }, nD = 4, n = 1000;
    const char *data_path = NULL, *plot_path = NULL;
    opt_iter it = opt_begin(c, argc, argv);
    const char *v;
    int id;

    fp.length_scale = 1.0; /* gamma = 1/2 for the gaussian kernel */
    while ((id = opt_next(&it, &v)) != OPT_DONE) {
        int bad = 0;
        switch (id) {
        case OPT_ERROR: return RC_USAGE;
        case OPT_HELP: return print_command_help(c);
        case OPT_POSITIONAL:
            if (data_path) return usage_error(c, "unexpected argument '%s' (one DATA file)", v);
            data_path = v;
            break;
        case O_KERNEL: bad = parse_kernel(&it, v, &fp.kernel); break;
        case O_NU: bad = parse_nu(&it, v, &fp.nu); ko.have_nu = 1; break;
        case O_GAMMA: bad = parse_positive(&it, v, &ko.gamma); ko.have_gamma = 1; break;
        case O_LENGTH_SCALE:
            bad = parse_positive(&it, v, &fp.length_scale);
            ko.have_length_scale = 1;
            break;
        case O_FEATURES: bad = parse_size_list(&it, v, 1, Ds, MAX_DS, &nD); break;
        case O_FORM: bad = parse_form(&it, v, &fp.form); break;
        case O_STRUCTURE: bad = parse_structure(&it, v, &fp.structure); break;
        case O_SEED: bad = parse_seed(&it, v, &fp.seed); break;
        case O_POINTS: bad = parse_size(&it, v, 1, &n); break;
        case O_PLOT: plot_path = v; break;
        case O_THREADS: bad = parse_threads(&it, v, &fp.n_threads); break;
        case O_DELIMITER:
        case O_NO_HEADER: bad = parse_read_option(&it, id, v, &rp); break;
        default: return usage_error(c, "internal: unhandled option %s", it.name);
        }
        if (bad) return RC_USAGE;
    }
    if (kernel_opts_apply(c, &ko, &fp)) return RC_USAGE;
    size_t maxD = 0;
    for (size_t i = 0; i < nD; ++i) {
        if (fp.form == RFX_FORM_COS_SIN && Ds[i] % 2 != 0)
            return usage_error(c, "-D: every value must be even with --form cos-sin, got %zu",
                               Ds[i]);
        if (Ds[i] > maxD) maxD = Ds[i];
    }
    if (plot_path && !program_in_path("gnuplot")) {
        say("--plot: gnuplot is not installed (not found in PATH); install it or leave out --plot");
        return RC_IO;
    }

    rfx_data *data = NULL;
    rfx_features *f = NULL;
    double *points = NULL, *K = NULL, *C = NULL, *Z = NULL, err[MAX_DS];
    rfx_cmat X;
    rfx_status st = RFX_OK;
    int rc = kernel_approx_points(data_path, &rp, n, &data, &points, &X);
    if (rc != RC_OK) goto done;
    n = X.rows;
    if (n > SIZE_MAX / sizeof(double) / n || maxD > SIZE_MAX / sizeof(double) / n ||
        !(K = malloc(n * n * sizeof *K)) || !(C = malloc(n * n * sizeof *C)) ||
        !(Z = malloc(n * maxD * sizeof *Z))) {
        say("out of memory for %zu points and D = %zu (%zu x %zu kernel matrices)", n, maxD, n, n);
        rc = RC_INTERNAL;
        goto done;
    }
    fp.n_features = Ds[0];
    st = rfx_features_create(&fp, X.cols, &f);
    if (st == RFX_OK) st = rfx_features_exact_kernel(f, X, X, rfx_mat_of(K, n, n));
    rfx_features_free(f);
    f = NULL;
    if (st != RFX_OK) {
        rc = fail(st);
        goto done;
    }

    char title[160];
    snprintf(title, sizeof title, "%s kernel, length scale %g, %s features, n = %zu%s",
             rfx_kernel_name(fp.kernel), fp.length_scale, rfx_form_name(fp.form), n,
             data_path ? "" : " (S-curve)");
    printf("# %s, seed %llu\n", title, (unsigned long long)fp.seed);
    printf("# relative Frobenius error |K - Z Z^T|_F / |K|_F\n");
    printf("%10s  %12s  %9s\n", "D", "rel_error", "seconds");
    fflush(stdout);
    for (size_t i = 0; i < nD; ++i) {
        double t0 = now_seconds();
        fp.n_features = Ds[i];
        st = rfx_features_create(&fp, X.cols, &f);
        if (st == RFX_OK) st = rfx_features_transform(f, X, rfx_mat_of(Z, n, Ds[i]));
        rfx_features_free(f);
        f = NULL;
        if (st != RFX_OK) {
            rc = fail(st);
            goto done;
        }
        gram_upper(Z, n, Ds[i], C);
        err[i] = relative_frobenius_error(K, C, n);
        printf("%10zu  %12.5g  %9.3f\n", Ds[i], err[i], now_seconds() - t0);
        fflush(stdout);
    }
    if (nD >= 2)
        printf("# log-log slope %.3f (Monte Carlo rate 1/sqrt(D): -0.5)\n",
               loglog_slope(Ds, err, nD));
    if (plot_path) {
        rc = plot_errors(plot_path, Ds, err, nD, title);
        if (rc == RC_OK) printf("# plot written to %s\n", plot_path);
    }
done:
    free(Z);
    free(C);
    free(K);
    free(points);
    rfx_data_free(data);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* rfx sample                                                                */
/* ------------------------------------------------------------------------ */

/* One line per test function: name, default inputs, description. */
static int print_testfn_list(void)
{
    for (int k = 0; rfx_testfn_name((rfx_testfn_kind)k); ++k) {
        rfx_testfn *f = NULL;
        rfx_status st = rfx_testfn_create((rfx_testfn_kind)k, NULL, &f);
        if (st != RFX_OK) return fail(st);
        printf("%-10s d = %-3zu %s\n", rfx_testfn_name((rfx_testfn_kind)k), rfx_testfn_dim(f),
               rfx_testfn_description((rfx_testfn_kind)k));
        rfx_testfn_free(f);
    }
    return RC_OK;
}

/* Column names x0 .. x<d-1>, y: one malloc block (pointers, then text). */
static char **sample_names(size_t d)
{
    enum { NAME_LEN = 24 };
    size_t w = d + 1;
    if (w == 0 || w > SIZE_MAX / (sizeof(char *) + NAME_LEN)) return NULL;
    char **names = malloc(w * (sizeof(char *) + NAME_LEN));
    if (!names) return NULL;
    char *text = (char *)(names + w);
    for (size_t j = 0; j < w; ++j) {
        names[j] = text + j * NAME_LEN;
        if (j < d)
            snprintf(names[j], NAME_LEN, "x%zu", j);
        else
            snprintf(names[j], NAME_LEN, "y");
    }
    return names;
}

static int cmd_sample(const command *c, int argc, char **argv)
{
    rfx_testfn_params tp = rfx_testfn_params_default();
    const char *name = NULL, *out_path = NULL;
    size_t n = 0;
    uint64_t seed = 0;
    int list = 0;
    opt_iter it = opt_begin(c, argc, argv);
    const char *v;
    int id;

    while ((id = opt_next(&it, &v)) != OPT_DONE) {
        int bad = 0;
        switch (id) {
        case OPT_ERROR: return RC_USAGE;
        case OPT_HELP: return print_command_help(c);
        case OPT_POSITIONAL:
            if (name) return usage_error(c, "unexpected argument '%s' (one FUNCTION)", v);
            name = v;
            break;
        case O_POINTS: bad = parse_size(&it, v, 1, &n); break;
        case O_DIM: bad = parse_size(&it, v, 1, &tp.d); break;
        case O_SEED: bad = parse_seed(&it, v, &seed); break;
        case O_OUTPUT: out_path = v; break;
        case O_LIST: list = 1; break;
        default: return usage_error(c, "internal: unhandled option %s", it.name);
        }
        if (bad) return RC_USAGE;
    }
    if (list) return print_testfn_list();
    if (!name) return usage_error(c, "missing FUNCTION (rfx sample --list shows them)");
    rfx_testfn_kind kind;
    if (rfx_testfn_from_name(name, &kind) != RFX_OK)
        return usage_error(c, "%s", rfx_last_error());
    if (n == 0) return usage_error(c, "missing -n N, the number of rows");

    rfx_testfn *f = NULL;
    double *M = NULL, *y = NULL;
    char **names = NULL;
    int rc = RC_OK;
    rfx_status st = rfx_testfn_create(kind, &tp, &f);
    if (st != RFX_OK) return fail(st);
    size_t d = rfx_testfn_dim(f), w = d + 1;
    if (n > SIZE_MAX / sizeof(double) / w || !(M = malloc(n * w * sizeof *M)) ||
        !(y = malloc(n * sizeof *y)) || !(names = sample_names(d))) {
        say("out of memory for %zu x %zu values", n, w);
        rc = RC_INTERNAL;
        goto done;
    }
    rfx_mat X = { M, n, d, w };
    st = rfx_testfn_sample(f, seed, X, y);
    if (st != RFX_OK) {
        rc = fail(st);
        goto done;
    }
    for (size_t i = 0; i < n; ++i) M[i * w + d] = y[i];
    rfx_cmat out = rfx_cmat_of(M, n, w);
    if (!out_path || strcmp(out_path, "-") == 0)
        rc = write_csv_stdout(out, (const char *const *)names);
    else if (ends_with(out_path, ".npy") && (st = rfx_npy_write(out_path, out)) != RFX_OK)
        rc = fail(st);
    else if (!ends_with(out_path, ".npy") &&
             (st = rfx_csv_write(out_path, out, (const char *const *)names)) != RFX_OK)
        rc = fail(st);
done:
    free(names);
    free(y);
    free(M);
    rfx_testfn_free(f);
    return rc;
}

static int cmd_sobol(const command *c, int argc, char **argv)
{
    const char *model_path = NULL, *like = NULL;
    double lo = 0, hi = 0;
    int have_uniform = 0, mc_options = 0;
    rfx_sobol_params sp = rfx_sobol_params_default();
    opt_iter it = opt_begin(c, argc, argv);
    const char *v;
    int id;

    while ((id = opt_next(&it, &v)) != OPT_DONE) {
        int bad = 0;
        switch (id) {
        case OPT_ERROR: return RC_USAGE;
        case OPT_HELP: return print_command_help(c);
        case OPT_POSITIONAL:
            if (model_path) return usage_error(c, "unexpected argument '%s' (one MODEL)", v);
            model_path = v;
            break;
        case O_LIKE: like = v; break;
        case O_UNIFORM:
            bad = parse_pair(&it, v, &lo, &hi);
            if (!bad && !(lo < hi)) bad = value_error(&it, "expected finite A < B, got '%s'", v);
            have_uniform = 1;
            break;
        case O_POINTS: bad = parse_size(&it, v, 2, &sp.n); mc_options = 1; break;
        case O_SEED: bad = parse_seed(&it, v, &sp.seed); mc_options = 1; break;
        case O_BOOTSTRAP: bad = parse_size(&it, v, 0, &sp.n_bootstrap); mc_options = 1; break;
        default: return usage_error(c, "internal: unhandled option %s", it.name);
        }
        if (bad) return RC_USAGE;
    }
    if (!model_path) return usage_error(c, "missing MODEL");
    if (like && have_uniform)
        return usage_error(c, "give the input distribution once: --like FUNCTION or "
                              "--uniform A,B");

    rfx_model *m = NULL;
    rfx_testfn *fn = NULL;
    rfx_marginal *marg = NULL;
    double *buf = NULL, *exact = NULL, *pce_idx = NULL;
    int rc = RC_OK, have_exact = 0;
    rfx_status st = rfx_model_load(model_path, &m);
    if (st != RFX_OK) return fail(st);
    rfx_model_info info;
    rfx_model_get_info(m, &info);
    const size_t d = info.n_inputs;
    const rfx_pce *pce = rfx_model_pce(m);
    const int mc = like || have_uniform; /* Monte Carlo, under a given distribution */
    if (!mc && !pce) {
        rc = usage_error(c, "give the input distribution: --like FUNCTION or --uniform A,B");
        goto done;
    }
    if (!mc && mc_options) {
        rc = usage_error(c, "-n, --seed and --bootstrap set the Monte Carlo estimate: give "
                            "--like FUNCTION or --uniform A,B too");
        goto done;
    }
    if (like) {
        rfx_testfn_kind kind;
        rfx_testfn_params tp = rfx_testfn_params_default();
        tp.d = d;
        if (rfx_testfn_from_name(like, &kind) != RFX_OK) {
            rc = usage_error(c, "%s", rfx_last_error());
            goto done;
        }
        if ((st = rfx_testfn_create(kind, &tp, &fn)) != RFX_OK) {
            /* a function that cannot take the model's inputs: a data mismatch */
            say("the model has %zu inputs: %s", d, rfx_last_error());
            rc = st == RFX_EINVAL ? RC_DATA : fail(st);
            goto done;
        }
        if (rfx_testfn_dim(fn) != d) {
            say("%s has %zu inputs, the model %zu", like, rfx_testfn_dim(fn), d);
            rc = RC_DATA;
            goto done;
        }
    }
    if (!(marg = malloc(d * sizeof *marg)) || !(buf = malloc(8 * d * sizeof *buf)) ||
        !(exact = malloc(2 * d * sizeof *exact)) || !(pce_idx = malloc(2 * d * sizeof *pce_idx))) {
        say("out of memory");
        rc = RC_INTERNAL;
        goto done;
    }
    if (fn) have_exact = rfx_testfn_sobol(fn, exact, exact + d) == RFX_OK;
    if (pce && (st = rfx_pce_sobol(pce, pce_idx, pce_idx + d)) != RFX_OK) {
        rc = fail(st);
        goto done;
    }
    if (!mc) { /* the expansion's own indices only */
        double mean = 0, var = 0;
        rfx_pce_moments(pce, &mean, &var);
        printf("# Sobol indices of %s from its polynomial chaos coefficients (exact for the "
               "expansion under its input marginals): output mean %.6g, variance %.6g\n",
               model_path, mean, var);
        printf("%-6s %9s %9s\n", "input", "first", "total");
        for (size_t j = 0; j < d; j++)
            printf("x%-5zu %9.4f %9.4f\n", j, pce_idx[j], pce_idx[d + j]);
        goto done;
    }
    for (size_t j = 0; j < d; j++)
        marg[j] = fn ? rfx_testfn_marginals(fn)[j] : rfx_marginal_uniform(lo, hi);
    rfx_sobol_result res = { buf, buf + d, buf + 2 * d, buf + 3 * d, buf + 4 * d, buf + 5 * d,
                             0, 0, 0 };
    if ((st = rfx_sobol_model(m, 0, marg, d, &sp, &res)) != RFX_OK) {
        rc = fail(st);
        goto done;
    }
    /* sine / cosine feature models also have closed-form indices */
    double *rf = buf + 6 * d, rf_mean = 0, rf_var = 0;
    const int have_rf =
        !pce && rfx_sobol_model_exact(m, marg, d, &rf_mean, &rf_var, rf, rf + d, NULL) == RFX_OK;
    printf("# Sobol indices of %s: %zu model evaluations, output mean %.6g, variance %.6g\n",
           model_path, res.n_evaluations, res.mean, res.variance);
    if (have_rf)
        printf("# model_first, model_total: the model's indices in closed form (its mean %.6g, "
               "variance %.6g); the Monte Carlo columns estimate the same numbers\n",
               rf_mean, rf_var);
    printf("# intervals: %g%% bootstrap percentile (lo, hi)\n", 100 * sp.confidence);
    if (pce)
        printf("# pce_first, pce_total: from the polynomial chaos coefficients, under the "
               "model's own input marginals\n");
    printf("%-6s %9s %9s %9s %9s %9s %9s%s%s%s\n", "input", "first", "lo", "hi", "total", "lo",
           "hi", pce ? "  pce_first  pce_total" : "",
           have_rf ? "  model_first  model_total" : "",
           have_exact ? "  exact_first  exact_total" : "");
    for (size_t j = 0; j < d; j++) {
        printf("x%-5zu %9.4f %9.4f %9.4f %9.4f %9.4f %9.4f", j, res.first[j], res.first_lo[j],
               res.first_hi[j], res.total[j], res.total_lo[j], res.total_hi[j]);
        if (pce) printf("  %9.4f  %9.4f", pce_idx[j], pce_idx[d + j]);
        if (have_rf) printf("  %11.4f  %11.4f", rf[j], rf[d + j]);
        if (have_exact) printf("  %11.4f  %11.4f", exact[j], exact[d + j]);
        putchar('\n');
    }
done:
    free(marg);
    free(buf);
    free(exact);
    free(pce_idx);
    rfx_testfn_free(fn);
    rfx_model_free(m);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* main                                                                      */
/* ------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    const command *c;
    if (argc < 2) {
        say("missing COMMAND");
        print_main_usage(stderr);
        fputs("Try 'rfx --help'.\n", stderr);
        return RC_USAGE;
    }
    const char *isa_env = getenv("RFX_ISA");
    rfx_isa isa;
    if (isa_env && isa_env[0] && rfx_isa_from_name(isa_env, &isa) != RFX_OK)
        return usage_error(NULL, "RFX_ISA: %s", rfx_last_error());
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) return print_main_help();
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        printf("rfx %s\n", rfx_version());
        printf("instruction set %s (this CPU: %s)\n", rfx_isa_name(rfx_isa_active()),
               rfx_isa_name(rfx_isa_native()));
        return RC_OK;
    }
    if (strcmp(argv[1], "help") == 0) {
        if (argc < 3) return print_main_help();
        if (argc > 3) return usage_error(NULL, "help takes one COMMAND");
        c = command_find(argv[2]);
        if (!c) return usage_error(NULL, "unknown command '%s'", argv[2]);
        return print_command_help(c);
    }
    c = command_find(argv[1]);
    if (!c) {
        if (argv[1][0] == '-') return usage_error(NULL, "unknown option '%s'", argv[1]);
        return usage_error(NULL, "unknown command '%s'", argv[1]);
    }
    return c->run(c, argc - 2, argv + 2);
}
