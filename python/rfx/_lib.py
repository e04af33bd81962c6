# SPDX-License-Identifier: BSD-3-Clause
"""The boundary between Python and librfx: loading, declarations, errors,
and numpy arrays as rfx matrix views.

cffi in ABI mode (no compiler needed at install time): the declarations
below are copied from include/rfx.h and the parts it includes
(include/rfx/*.h), without comments and RFX_API, and only those the package
calls; #define lines only for integer constants (cffi takes no
function-like macro: RFX_AUTO_METHOD(m) is 1 << m in Python).
python/tests/test_lowlevel.py checks that each of them
still appears, word for word, in the header, so that a change to the C API
cannot silently break the struct layouts cffi assumes. cffi releases the GIL
around every C call.

Every fallible call goes through check(): non-zero status -> a Python
exception carrying rfx_last_error(), the thread-local message of the C
library (the same thread made the call, so the message is the right one).
Long fits go through call_with_progress(): their rfx_progress_fn reports
reach the estimators' verbose printer and progress_callback() contexts, and
a KeyboardInterrupt or an exception in a callback becomes RFX_ECANCELLED in
C and is raised again once the C call has returned. Outputs that the C
library fills are allocated by empty_rows(), aligned for its vector stores.
"""
import contextlib
import contextvars
import ctypes
import ctypes.util
import glob
import numbers
import os
import sys
import threading
import time

import numpy as np
from cffi import FFI

CDEF = r"""
const char *rfx_version(void);

typedef enum rfx_status {
    RFX_OK = 0,
    RFX_EINVAL = 1,
    RFX_ENOMEM = 2,
    RFX_EOVERFLOW = 3,
    RFX_EDIM = 4,
    RFX_EIO = 5,
    RFX_EPARSE = 6,
    RFX_EFORMAT = 7,
    RFX_EVERSION = 8,
    RFX_ENUMERIC = 9,
    RFX_ECANCELLED = 10,
    RFX_EINTERNAL = 11
} rfx_status;

const char *rfx_strerror(rfx_status status);
const char *rfx_last_error(void);
void rfx_clear_error(void);
rfx_status rfx_set_error(rfx_status status, const char *message);

typedef enum rfx_isa {
    RFX_ISA_GENERIC = 0,
    RFX_ISA_AVX2 = 1,
    RFX_ISA_AVX512 = 2
} rfx_isa;
rfx_isa rfx_isa_active(void);
rfx_isa rfx_isa_native(void);
rfx_status rfx_isa_set(rfx_isa isa);
const char *rfx_isa_name(rfx_isa isa);
rfx_status rfx_isa_from_name(const char *name, rfx_isa *out);

typedef struct rfx_mat {
    double *data;
    size_t rows, cols, stride;
} rfx_mat;

typedef struct rfx_cmat {
    const double *data;
    size_t rows, cols, stride;
} rfx_cmat;

typedef struct rfx_matf {
    float *data;
    size_t rows, cols, stride;
} rfx_matf;

typedef struct rfx_cmatf {
    const float *data;
    size_t rows, cols, stride;
} rfx_cmatf;

typedef int (*rfx_progress_fn)(void *user, const char *stage, double fraction);

typedef enum rfx_kernel {
    RFX_KERNEL_GAUSSIAN = 0,
    RFX_KERNEL_LAPLACIAN = 1,
    RFX_KERNEL_CAUCHY = 2,
    RFX_KERNEL_MATERN = 3,
    RFX_KERNEL_CUSTOM = 4
} rfx_kernel;

typedef enum rfx_form {
    RFX_FORM_COS_BIAS = 0,
    RFX_FORM_COS_SIN = 1,
    RFX_FORM_PHASE_FREE = 2
} rfx_form;

const char *rfx_kernel_name(rfx_kernel kernel);
const char *rfx_form_name(rfx_form form);
rfx_status rfx_kernel_from_name(const char *name, rfx_kernel *out);
rfx_status rfx_form_from_name(const char *name, rfx_form *out);

typedef enum rfx_activation {
    RFX_ACTIVATION_COS = 0,
    RFX_ACTIVATION_SIN = 1,
    RFX_ACTIVATION_TANH = 2,
    RFX_ACTIVATION_SIGMOID = 3,
    RFX_ACTIVATION_RELU = 4,
    RFX_ACTIVATION_SIGN = 5
} rfx_activation;

typedef enum rfx_weights {
    RFX_WEIGHTS_KERNEL = 0,
    RFX_WEIGHTS_NORMAL = 1,
    RFX_WEIGHTS_UNIFORM = 2
} rfx_weights;

typedef enum rfx_structure {
    RFX_STRUCTURE_IID = 0,
    RFX_STRUCTURE_ORTHOGONAL = 1,
    RFX_STRUCTURE_SORF = 2,
    RFX_STRUCTURE_FASTFOOD = 3,
    RFX_STRUCTURE_HALTON = 4
} rfx_structure;

const char *rfx_structure_name(rfx_structure s);
rfx_status rfx_structure_from_name(const char *name, rfx_structure *out);

typedef struct rfx_rng rfx_rng;
typedef rfx_status (*rfx_spectral_fn)(void *user, rfx_rng *rng, size_t j, size_t d, double *w);

uint64_t rfx_rng_u64(rfx_rng *rng);
double rfx_rng_uniform(rfx_rng *rng);
double rfx_rng_normal(rfx_rng *rng);
double rfx_rng_gamma(rfx_rng *rng, double shape);
void rfx_rng_fill_uniform(rfx_rng *rng, double *out, size_t n);
void rfx_rng_fill_normal(rfx_rng *rng, double *out, size_t n);

rfx_status rfx_spectral_draw(rfx_kernel kernel, double nu, rfx_rng *rng, size_t d,
                             double *w);

typedef struct rfx_spectral_term {
    rfx_kernel kernel;
    double nu;
    double length_scale;
    double weight;
} rfx_spectral_term;

typedef struct rfx_spectral_combination {
    int product;
    size_t n_terms;
    const rfx_spectral_term *terms;
} rfx_spectral_combination;

rfx_status rfx_spectral_combination_check(const rfx_spectral_combination *c);
rfx_status rfx_spectral_combined(void *user, rfx_rng *rng, size_t j, size_t d, double *w);

const char *rfx_activation_name(rfx_activation a);
rfx_status rfx_activation_from_name(const char *name, rfx_activation *out);
const char *rfx_weights_name(rfx_weights w);
rfx_status rfx_weights_from_name(const char *name, rfx_weights *out);

typedef struct rfx_features_params {
    rfx_kernel kernel;
    double nu;
    rfx_form form;
    size_t n_features;
    uint64_t seed;
    double length_scale;
    const double *length_scales;
    double gamma;
    int n_threads;
    rfx_activation activation;
    size_t sparsity;
    rfx_weights weights;
    double weight_scale;
    rfx_structure structure;
    unsigned structure_version;
    rfx_spectral_fn spectral;
    void *spectral_user;
} rfx_features_params;

rfx_features_params rfx_features_params_default(void);

typedef struct rfx_features rfx_features;

rfx_status rfx_features_create(const rfx_features_params *params, size_t d,
                                       rfx_features **out);
void rfx_features_free(rfx_features *f);
rfx_features_params rfx_features_get_params(const rfx_features *f);
size_t rfx_features_input_dim(const rfx_features *f);
size_t rfx_features_output_dim(const rfx_features *f);
rfx_cmat rfx_features_frequencies(const rfx_features *f);
const double *rfx_features_phases(const rfx_features *f);
void rfx_features_set_threads(rfx_features *f, int n_threads);
rfx_status rfx_features_transform(const rfx_features *f, rfx_cmat X, rfx_mat Z);
rfx_status rfx_features_transform_f32(const rfx_features *f, rfx_cmatf X, rfx_matf Z);
rfx_status rfx_features_exact_kernel(const rfx_features *f, rfx_cmat X, rfx_cmat Y,
                                             rfx_mat K);

typedef struct rfx_model rfx_model;

typedef enum rfx_method {
    RFX_METHOD_RIDGE = 0,
    RFX_METHOD_BAYES = 1,
    RFX_METHOD_SRFE = 2,
    RFX_METHOD_HARFE = 3,
    RFX_METHOD_PCE = 4,
    RFX_METHOD_PROJECTED = 5,
    RFX_METHOD_CLASSIFY = 6,
    RFX_METHOD_SINKS = 7,
    RFX_METHOD_GREEDY = 8
} rfx_method;

const char *rfx_method_name(rfx_method method);
rfx_status rfx_method_from_name(const char *name, rfx_method *out);

typedef struct rfx_fit_params {
    rfx_method method;
    rfx_features_params features;
    int standardize;
    double lambda;
    double noise_var, prior_var;
    int fit_intercept;
    size_t select_rows;
    rfx_progress_fn progress;
    void *progress_user;
    int learn_length_scales;
    size_t learn_iterations;
    size_t learn_particles;
    const struct rfx_classify_params *classify;
    size_t classify_folds;
    const double *sample_weight;
} rfx_fit_params;

rfx_fit_params rfx_fit_params_default(void);

typedef struct rfx_fit_report {
    double length_scale;
    double lambda;
    double noise_var, prior_var;
    double score;
    size_t n_candidates;
    double learn_score_before;
    double learn_score_after;
    size_t learn_evaluations;
    size_t refine_holdout;
    size_t refine_steps;
    size_t refine_gained, refine_lost;
} rfx_fit_report;

rfx_status rfx_model_fit(const rfx_fit_params *params, rfx_cmat X, rfx_cmat Y,
                                 rfx_model **out, rfx_fit_report *report);
void rfx_model_free(rfx_model *m);
rfx_status rfx_model_predict(const rfx_model *m, rfx_cmat X, rfx_mat Yhat, rfx_mat Ystd);
rfx_status rfx_model_predict_latent(const rfx_model *m, rfx_cmat X, rfx_mat Yhat,
                                            rfx_mat Fstd);

typedef struct rfx_model_info {
    rfx_method method;
    rfx_features_params features;
    size_t n_inputs;
    size_t n_targets;
    size_t n_train;
    int standardized;
    int fit_intercept;
    int has_std;
    double lambda;
    double noise_var, prior_var;
    double log_evidence;
    int target_transform;
    double target_lambda;
} rfx_model_info;

rfx_status rfx_model_get_info(const rfx_model *m, rfx_model_info *info);

typedef enum rfx_target_transform {
    RFX_TARGET_NONE = 0,
    RFX_TARGET_LOG = 1,
    RFX_TARGET_BOXCOX = 2
} rfx_target_transform;

const char *rfx_target_transform_name(rfx_target_transform t);
rfx_status rfx_target_transform_from_name(const char *name, rfx_target_transform *out);
rfx_status rfx_target_boxcox_lambda(const double *y, size_t n, double *lambda);
rfx_status rfx_target_boxcox_lambda_weighted(const double *y, const double *w, size_t n,
                                                     double *lambda);
rfx_status rfx_target_forward(rfx_target_transform t, double lambda, const double *y,
                              size_t n, double *z);
rfx_status rfx_target_inverse(rfx_target_transform t, double lambda, const double *z,
                              size_t n, double *y);
rfx_status rfx_model_set_target_transform(rfx_model *m, rfx_target_transform t,
                                          double lambda);
rfx_status rfx_model_set_names(rfx_model *m, const char *const *input_names,
                               const char *target_name);
const char *rfx_model_input_name(const rfx_model *m, size_t j);
const char *rfx_model_target_name(const rfx_model *m);
rfx_status rfx_model_set_input_box(rfx_model *m, const double *lo, const double *hi);
int rfx_model_input_box(const rfx_model *m, const double **lo, const double **hi);
const rfx_features *rfx_model_features(const rfx_model *m);
rfx_cmat rfx_model_weights(const rfx_model *m);
const double *rfx_model_intercepts(const rfx_model *m);
rfx_status rfx_model_save(const rfx_model *m, const char *path);
rfx_status rfx_model_load(const char *path, rfx_model **out);
rfx_status rfx_model_save_buffer(const rfx_model *m, void **buf, size_t *len);
rfx_status rfx_model_load_buffer(const void *buf, size_t len, rfx_model **out);
void rfx_buffer_free(void *buf);

typedef enum rfx_marginal_kind {
    RFX_MARGINAL_UNIFORM = 0,
    RFX_MARGINAL_NORMAL = 1,
    RFX_MARGINAL_LOGNORMAL = 2
} rfx_marginal_kind;

typedef struct rfx_marginal {
    rfx_marginal_kind kind;
    double a, b;
} rfx_marginal;

rfx_status rfx_marginals_check(const rfx_marginal *marginals, size_t d);

typedef enum rfx_design_kind {
    RFX_DESIGN_RANDOM = 0,
    RFX_DESIGN_LHS = 1,
    RFX_DESIGN_SOBOL = 2,
    RFX_DESIGN_HALTON = 3
} rfx_design_kind;

const char *rfx_design_name(rfx_design_kind kind);
rfx_status rfx_design_from_name(const char *name, rfx_design_kind *out);
rfx_status rfx_design_sample(rfx_design_kind kind, uint64_t seed, int scramble, rfx_mat U);
rfx_status rfx_marginals_quantile(const rfx_marginal *marginals, size_t d, rfx_cmat U,
                                          rfx_mat X);

typedef rfx_status (*rfx_function_fn)(void *user, rfx_cmat X, double *y);

typedef struct rfx_sobol_params {
    size_t n;
    uint64_t seed;
    size_t n_bootstrap;
    double confidence;
    size_t batch_rows;
    int n_threads;
    rfx_progress_fn progress;
    void *progress_user;
    int second_order;
} rfx_sobol_params;

rfx_sobol_params rfx_sobol_params_default(void);

typedef struct rfx_sobol_result {
    double *first, *total;
    double *first_lo, *first_hi;
    double *total_lo, *total_hi;
    double mean, variance;
    size_t n_evaluations;
    double *second;
    double *second_lo, *second_hi;
} rfx_sobol_result;

rfx_status rfx_sobol_estimate(rfx_function_fn fn, void *user,
                                      const rfx_marginal *marginals, size_t d,
                                      const rfx_sobol_params *params, rfx_sobol_result *out);
rfx_status rfx_sobol_model(const rfx_model *m, size_t target,
                                   const rfx_marginal *marginals, size_t d,
                                   const rfx_sobol_params *params, rfx_sobol_result *out);
rfx_status rfx_sobol_model_exact(const rfx_model *model, const rfx_marginal *marginals,
                                         size_t d, double *mean, double *variance,
                                         double *first, double *total, double *second);

typedef enum rfx_l1_method {
    RFX_L1_METHOD_LASSO = 0,
    RFX_L1_METHOD_BPDN = 1,
    RFX_L1_METHOD_HTP = 2
} rfx_l1_method;

rfx_status rfx_l1_method_from_name(const char *name, rfx_l1_method *out);

typedef enum rfx_pce_method {
    RFX_PCE_METHOD_LSQ = 0,
    RFX_PCE_METHOD_LARS = 1
} rfx_pce_method;

typedef struct rfx_pce_params {
    const rfx_marginal *marginals;
    size_t degree;
    size_t degree_min;
    double q_norm;
    size_t max_interaction;
    const unsigned *basis;
    size_t basis_terms;
    rfx_pce_method method;
    size_t max_candidates;
    double lars_error_factor;
    size_t lars_max_terms;
    int n_threads;
    int auto_basis;
    int marginals_from_data;
    const double *sample_weight;
} rfx_pce_params;

rfx_pce_params rfx_pce_params_default(void);

typedef struct rfx_pce rfx_pce;

rfx_status rfx_pce_fit(const rfx_pce_params *params, rfx_cmat X, const double *y,
                               rfx_pce **out);
rfx_status rfx_pce_create(size_t d, const rfx_marginal *marginals, size_t n_terms,
                                  const unsigned *alpha, const double *coef, rfx_pce **out);
void rfx_pce_free(rfx_pce *pce);
rfx_status rfx_pce_predict(const rfx_pce *pce, rfx_cmat X, double *y);

typedef struct rfx_pce_info {
    size_t dim;
    size_t degree;
    size_t n_terms;
    size_t n_candidates;
    size_t n_train;
    rfx_pce_method method;
    double loo_mse;
    double loo_relative;
    double loo_corrected;
    double mean, variance;
    size_t degree_min, degree_max;
    double q_norm;
    size_t max_interaction;
    size_t n_screened;
} rfx_pce_info;

rfx_status rfx_pce_get_info(const rfx_pce *pce, rfx_pce_info *info);
size_t rfx_pce_n_terms(const rfx_pce *pce);
rfx_status rfx_pce_term(const rfx_pce *pce, size_t k, double *coef, unsigned *alpha);
rfx_status rfx_pce_moments(const rfx_pce *pce, double *mean, double *variance);
rfx_status rfx_pce_sobol(const rfx_pce *pce, double *first, double *total);
rfx_status rfx_pce_sobol_second(const rfx_pce *pce, double *second);
const rfx_marginal *rfx_pce_marginals(const rfx_pce *pce);
rfx_status rfx_model_from_pce(const rfx_pce *pce, rfx_model **out);
const rfx_pce *rfx_model_pce(const rfx_model *m);

typedef enum rfx_select {
    RFX_SELECT_NONE = 0,
    RFX_SELECT_GCV = 1,
    RFX_SELECT_KFOLD = 2
} rfx_select;

typedef struct rfx_stats rfx_stats;

rfx_status rfx_stats_create(size_t n_features, size_t n_targets, rfx_stats **out);
void rfx_stats_free(rfx_stats *s);
size_t rfx_stats_rows(const rfx_stats *s);
rfx_status rfx_stats_add(rfx_stats *s, const rfx_features *f, rfx_cmat X, rfx_cmat Y);
rfx_status rfx_stats_add_weighted(rfx_stats *s, const rfx_features *f, rfx_cmat X,
                                          rfx_cmat Y, const double *w);
rfx_status rfx_stats_merge(rfx_stats *into, const rfx_stats *other);
rfx_status rfx_stats_copy(const rfx_stats *s, rfx_stats **out);
size_t rfx_stats_n_features(const rfx_stats *s);
size_t rfx_stats_n_targets(const rfx_stats *s);
int rfx_stats_shift(const rfx_stats *s, double *shift);
size_t rfx_stats_packed_size(const rfx_stats *s);
rfx_status rfx_stats_pack(const rfx_stats *s, const double *shift, double *buf);
rfx_status rfx_stats_unpack(rfx_stats *s, const double *buf, const double *shift);

typedef enum rfx_solver {
    RFX_SOLVER_AUTO = 0,
    RFX_SOLVER_PRIMAL = 1,
    RFX_SOLVER_DUAL = 2
} rfx_solver;

typedef struct rfx_ridge_params {
    double lambda;
    int fit_intercept;
    rfx_select select;
    size_t n_folds;
    const double *lambdas;
    size_t n_lambdas;
    rfx_solver solver;
    int n_threads;
    const double *sample_weight;
} rfx_ridge_params;

rfx_ridge_params rfx_ridge_params_default(void);
rfx_status rfx_ridge_solve(const rfx_features *f, const rfx_stats *s,
                                   const rfx_ridge_params *params, rfx_model **out);

typedef struct rfx_bayes_params {
    double noise_var;
    double prior_var;
    int fit_intercept;
    size_t max_iter;
    double tol;
    int n_threads;
    const double *sample_weight;
} rfx_bayes_params;

rfx_bayes_params rfx_bayes_params_default(void);
rfx_status rfx_bayes_solve(const rfx_features *f, const rfx_stats *s,
                                   const rfx_bayes_params *params, rfx_model **out);

typedef struct rfx_srfe_params {
    rfx_features_params features;
    rfx_l1_method method;
    double lambda;
    double eta;
    size_t sparsity;
    int standardize;
    rfx_select select;
    size_t n_folds;
    size_t n_lambdas;
    double lambda_min_ratio;
    rfx_progress_fn progress;
    void *progress_user;
    const double *sample_weight;
    size_t widen_rounds;
} rfx_srfe_params;

rfx_srfe_params rfx_srfe_params_default(void);

typedef struct rfx_srfe_report {
    size_t n_features;
    double weight_scale;
    double lambda;
    double eta;
    double cv_mse;
    size_t n_nonzero;
    size_t n_candidates;
    size_t sparsity;
} rfx_srfe_report;

rfx_status rfx_srfe_fit(const rfx_srfe_params *params, rfx_cmat X, rfx_cmat Y,
                                rfx_model **out, rfx_srfe_report *report);

typedef rfx_status (*rfx_pso_objective)(void *user, const double *x, size_t d, double *value);

typedef enum rfx_pso_topology {
    RFX_PSO_TOPOLOGY_GLOBAL = 0,
    RFX_PSO_TOPOLOGY_RING = 1
} rfx_pso_topology;

typedef enum rfx_pso_stop {
    RFX_PSO_STOP_MAX_ITER = 0,
    RFX_PSO_STOP_STAGNATION = 1
} rfx_pso_stop;

typedef struct rfx_pso_params {
    size_t n_particles;
    size_t max_iter;
    double inertia;
    double c1;
    double c2;
    const double *lower;
    const double *upper;
    double v_max;
    const double *x0;
    uint64_t seed;
    rfx_pso_topology topology;
    size_t patience;
    double tol;
    int thread_safe;
    int n_threads;
    rfx_progress_fn progress;
    void *progress_user;
} rfx_pso_params;

rfx_pso_params rfx_pso_params_default(void);

typedef struct rfx_pso_report {
    double value;
    size_t iterations;
    size_t evaluations;
    size_t n_particles;
    rfx_pso_stop stop;
} rfx_pso_report;

rfx_status rfx_pso_minimize(const rfx_pso_params *params, size_t d,
                                    rfx_pso_objective objective, void *user, double *x_best,
                                    double *history, rfx_pso_report *report);

typedef enum rfx_kpca_method {
    RFX_KPCA_METHOD_EXACT = 0,
    RFX_KPCA_METHOD_RANDOM_FEATURES = 1
} rfx_kpca_method;

typedef struct rfx_kpca_params {
    size_t n_components;
    rfx_kpca_method method;
    double gamma;
    int standardize;
    double null_tol;
    size_t n_features;
    rfx_form form;
    uint64_t seed;
    int n_threads;
} rfx_kpca_params;

rfx_kpca_params rfx_kpca_params_default(void);

typedef struct rfx_kpca rfx_kpca;

rfx_status rfx_kpca_create(const rfx_kpca_params *params, rfx_cmat X, rfx_kpca **out);
void rfx_kpca_free(rfx_kpca *kp);
rfx_status rfx_kpca_fit(rfx_kpca *kp, const double *theta);
rfx_status rfx_kpca_transform(const rfx_kpca *kp, rfx_cmat X, rfx_mat T);
rfx_cmat rfx_kpca_embedding(const rfx_kpca *kp);
rfx_status rfx_kpca_eigenvalues(const rfx_kpca *kp, double *eigenvalues,
                                        double *ratios);

typedef struct rfx_kpca_info {
    rfx_kpca_method method;
    size_t n_train;
    size_t dim;
    size_t n_components;
    size_t n_features;
    int fitted;
    size_t n_null;
    double total_variance;
} rfx_kpca_info;

rfx_status rfx_kpca_get_info(const rfx_kpca *kp, rfx_kpca_info *info);
rfx_status rfx_kpca_theta(const rfx_kpca *kp, double *theta);

typedef struct rfx_projected_params {
    size_t n_components;
    rfx_method surrogate;
    const rfx_fit_params *fit;
    const rfx_srfe_params *srfe;
    const rfx_pce_params *pce;
    const double *theta;
    size_t n_particles;
    size_t iterations;
    size_t patience;
    size_t n_folds;
    double gamma;
    int standardize;
    uint64_t seed;
    int n_threads;
    rfx_progress_fn progress;
    void *progress_user;
    const double *sample_weight;
} rfx_projected_params;

rfx_projected_params rfx_projected_params_default(void);

typedef struct rfx_projected_report {
    double *theta;
    double *history;
    size_t n_iterations;
    size_t evaluations;
    double loss;
    double theta0_loss;
    double search_loss;
    size_t finalists;
    double surrogate_scores[3];
    double surrogate_log_scores[3];
} rfx_projected_report;

rfx_status rfx_projected_fit(const rfx_projected_params *params, rfx_cmat X,
                                     rfx_cmat Y, rfx_model **out, rfx_projected_report *report);

typedef struct rfx_projected_info {
    size_t n_components;
    size_t n_inputs;
    size_t n_train;
    double gamma;
    int standardized;
    double loss;
    const double *theta;
    const rfx_model *surrogate;
} rfx_projected_info;

rfx_status rfx_model_projected_info(const rfx_model *m, rfx_projected_info *info);

typedef enum rfx_loss {
    RFX_LOSS_LOGISTIC = 0,
    RFX_LOSS_HINGE = 1,
    RFX_LOSS_SQUARED_HINGE = 2,
    RFX_LOSS_SQUARED = 3,
    RFX_LOSS_AUTO = 4
} rfx_loss;

typedef enum rfx_multiclass {
    RFX_MULTICLASS_OVR = 0,
    RFX_MULTICLASS_SOFTMAX = 1
} rfx_multiclass;

typedef enum rfx_optimizer {
    RFX_OPTIMIZER_AUTO = 0,
    RFX_OPTIMIZER_LBFGS = 1,
    RFX_OPTIMIZER_DUAL_CD = 2,
    RFX_OPTIMIZER_SGD = 3
} rfx_optimizer;

const char *rfx_loss_name(rfx_loss loss);
rfx_status rfx_loss_from_name(const char *name, rfx_loss *out);
const char *rfx_multiclass_name(rfx_multiclass mc);
rfx_status rfx_multiclass_from_name(const char *name, rfx_multiclass *out);
const char *rfx_optimizer_name(rfx_optimizer opt);
rfx_status rfx_optimizer_from_name(const char *name, rfx_optimizer *out);

typedef struct rfx_classify_params {
    rfx_loss loss;
    rfx_multiclass multiclass;
    rfx_optimizer optimizer;
    double lambda;
    int fit_intercept;
    const double *class_weights;
    size_t n_class_weights;
    int balanced;
    size_t max_iter;
    double tol;
    size_t epochs;
    size_t batch_size;
    double learning_rate;
    uint64_t seed;
    size_t cache_bytes;
    int n_threads;
    rfx_progress_fn progress;
    void *progress_user;
    const double *sample_weight;
} rfx_classify_params;

rfx_classify_params rfx_classify_params_default(void);

typedef struct rfx_classify_report {
    rfx_optimizer optimizer;
    size_t n_classes;
    size_t iterations;
    size_t passes;
    double objective;
    double grad_norm;
    int converged;
    int cached;
} rfx_classify_report;

rfx_status rfx_classify_fit(const rfx_features *f, rfx_cmat X, const double *labels,
                                    const rfx_classify_params *params, rfx_model **out,
                                    rfx_classify_report *report);

rfx_status rfx_model_classes(const rfx_model *m, const double **classes, size_t *n);

typedef struct rfx_classifier_info {
    rfx_loss loss;
    rfx_multiclass multiclass;
    size_t n_classes;
    size_t n_columns;
    double lambda;
    double temperature;
    int probabilities;
} rfx_classifier_info;

rfx_status rfx_model_classifier_info(const rfx_model *m, rfx_classifier_info *info);

rfx_status rfx_model_decision(const rfx_model *m, rfx_cmat X, rfx_mat scores);

rfx_status rfx_model_predict_proba(const rfx_model *m, rfx_cmat X, rfx_mat P);


typedef struct rfx_kern rfx_kern;

rfx_status rfx_kern_shift(rfx_kernel kernel, double nu, double length_scale,
                                  const double *length_scales, size_t d, rfx_kern **out);

rfx_status rfx_kern_rbf(double gamma, rfx_kern **out);

rfx_status rfx_kern_laplacian(double gamma, rfx_kern **out);

rfx_status rfx_kern_polynomial(double gamma, double coef0, unsigned degree,
                                       rfx_kern **out);

rfx_status rfx_kern_sigmoid(double gamma, double coef0, rfx_kern **out);

rfx_status rfx_kern_linear(rfx_kern **out);

rfx_status rfx_kern_delta(rfx_kern **out);
rfx_status rfx_kern_arccos(unsigned order, double sigma, double bias, rfx_kern **out);
rfx_status rfx_kern_bilinear(const double *A, size_t d, rfx_kern **out);

rfx_status rfx_kern_features(const rfx_features *f, rfx_kern **out);

rfx_status rfx_kern_sum(const rfx_kern *a, const rfx_kern *b, rfx_kern **out);
rfx_status rfx_kern_product(const rfx_kern *a, const rfx_kern *b, rfx_kern **out);
rfx_status rfx_kern_scale(double c, const rfx_kern *a, rfx_kern **out);
rfx_status rfx_kern_exp(const rfx_kern *a, rfx_kern **out);
typedef double (*rfx_kern_weight_fn)(void *user, const double *x, size_t d);
rfx_status rfx_kern_warp(const rfx_kern *a, rfx_kern_weight_fn f, void *user,
                                 rfx_kern **out);

void rfx_kern_free(rfx_kern *k);

size_t rfx_kern_input_dim(const rfx_kern *k);

double rfx_kern_eval(const rfx_kern *k, const double *x, const double *y, size_t d);

rfx_status rfx_kern_gram(const rfx_kern *k, rfx_cmat X, rfx_cmat Y, rfx_mat K,
                                 int n_threads);

rfx_status rfx_kern_gram_sym(const rfx_kern *k, rfx_cmat X, rfx_mat K, int n_threads);

rfx_status rfx_kern_diag(const rfx_kern *k, rfx_cmat X, double *diag);

typedef struct rfx_krr rfx_krr;

rfx_status rfx_krr_fit(const rfx_kern *k, rfx_cmat X, rfx_cmat Y, double lambda,
                               int n_threads, rfx_krr **out);
rfx_status rfx_krr_fit_weighted(const rfx_kern *k, rfx_cmat X, rfx_cmat Y, double lambda,
                                        const double *w, int n_threads, rfx_krr **out);

rfx_status rfx_krr_predict(const rfx_krr *m, rfx_cmat X, rfx_mat Yhat);

rfx_cmat rfx_krr_dual_coef(const rfx_krr *m);

void rfx_krr_free(rfx_krr *m);

typedef struct rfx_gp rfx_gp;

typedef struct rfx_gp_params {
    double noise_var;
    double amplitude;
    int noise_free;
    int normalize_y;
    double ratio_min;
    double ratio_max;
    double jitter_initial;
    double jitter_factor;
    double jitter_max;
    int n_threads;
} rfx_gp_params;

rfx_gp_params rfx_gp_params_default(void);

rfx_status rfx_gp_fit(const rfx_kern *k, rfx_cmat X, const double *y,
                              const rfx_gp_params *params, rfx_gp **out);

rfx_status rfx_gp_predict(const rfx_gp *gp, rfx_cmat X, double *mean,
                                  double *std_latent, double *std_noisy);

double rfx_gp_log_marginal_likelihood(const rfx_gp *gp);

typedef struct rfx_gp_info {
    double noise_var;
    double amplitude;
    double jitter;
    double log_marginal_likelihood;
    double y_mean, y_std;
    size_t n_train;
} rfx_gp_info;

rfx_status rfx_gp_get_info(const rfx_gp *gp, rfx_gp_info *info);

rfx_status rfx_gp_fit_length_scale(rfx_kernel kernel, double nu, const double *grid,
                                           size_t n_grid, rfx_cmat X, const double *y,
                                           const rfx_gp_params *params, rfx_gp **out,
                                           double *length_scale);

void rfx_gp_free(rfx_gp *gp);

typedef struct rfx_nystroem rfx_nystroem;

rfx_status rfx_nystroem_fit(const rfx_kern *k, rfx_cmat X, size_t n_components,
                                    uint64_t seed, int n_threads, rfx_nystroem **out);

typedef enum rfx_landmarks {
    RFX_LANDMARKS_UNIFORM = 0,
    RFX_LANDMARKS_KMEANS = 1,
    RFX_LANDMARKS_LEVERAGE = 2
} rfx_landmarks;

typedef struct rfx_nystroem_params {
    size_t n_components;
    rfx_landmarks landmarks;
    uint64_t seed;
    int n_threads;
    double lambda;
    size_t kmeans_iterations;
} rfx_nystroem_params;

rfx_nystroem_params rfx_nystroem_params_default(void);
rfx_status rfx_nystroem_params_check(const rfx_nystroem_params *p);
rfx_status rfx_nystroem_fit_params(const rfx_kern *k, rfx_cmat X,
                                           const rfx_nystroem_params *p, rfx_nystroem **out);

rfx_status rfx_nystroem_fit_landmarks(const rfx_kern *k, rfx_cmat L, int n_threads,
                                              rfx_nystroem **out);

void rfx_nystroem_free(rfx_nystroem *ny);

rfx_status rfx_nystroem_transform(const rfx_nystroem *ny, rfx_cmat X, rfx_mat Z);

rfx_cmat rfx_nystroem_landmarks(const rfx_nystroem *ny);

const size_t *rfx_nystroem_landmark_indices(const rfx_nystroem *ny);

size_t rfx_nystroem_n_components(const rfx_nystroem *ny);

size_t rfx_nystroem_output_dim(const rfx_nystroem *ny);

size_t rfx_nystroem_input_dim(const rfx_nystroem *ny);

size_t rfx_nystroem_rank(const rfx_nystroem *ny);

rfx_cmat rfx_nystroem_normalization(const rfx_nystroem *ny);

const double *rfx_nystroem_eigenvalues(const rfx_nystroem *ny);

typedef struct rfx_softmax_features rfx_softmax_features;

rfx_status rfx_softmax_features_create(size_t d, size_t D, uint64_t seed, int orthogonal,
                                               rfx_softmax_features **out);

rfx_status rfx_softmax_features_create_hyperbolic(size_t d, size_t D, uint64_t seed,
                                                          int orthogonal,
                                                          rfx_softmax_features **out);

rfx_status rfx_softmax_features_create_trig(size_t d, size_t D, uint64_t seed,
                                            int orthogonal, rfx_softmax_features **out);

void rfx_softmax_features_free(rfx_softmax_features *sf);

size_t rfx_softmax_features_input_dim(const rfx_softmax_features *sf);
size_t rfx_softmax_features_output_dim(const rfx_softmax_features *sf);

rfx_cmat rfx_softmax_features_frequencies(const rfx_softmax_features *sf);

void rfx_softmax_features_set_threads(rfx_softmax_features *sf, int n_threads);

rfx_status rfx_softmax_features_transform(const rfx_softmax_features *sf, rfx_cmat X,
                                                  rfx_mat Phi, double *log_scale);

rfx_status rfx_attention_linear(const rfx_softmax_features *sf, rfx_cmat Q, rfx_cmat K,
                                        rfx_cmat V, rfx_mat Out, int causal, int n_threads);

rfx_status rfx_attention_gated(const rfx_softmax_features *sf, rfx_cmat Q, rfx_cmat K,
                               rfx_cmat V, const double *gates, rfx_mat Out, int n_threads);

rfx_status rfx_attention_exact(rfx_cmat Q, rfx_cmat K, rfx_cmat V, rfx_mat Out,
                                       int causal, int n_threads);


typedef enum rfx_sinks_loss {
    RFX_SINKS_LOSS_SQUARED = 0,
    RFX_SINKS_LOSS_LOGISTIC = 1,
    RFX_SINKS_LOSS_SQUARED_HINGE = 2
} rfx_sinks_loss;

#define RFX_SINKS_CV_FOLDS 5
#define RFX_SINKS_CV_GRID 6

typedef struct rfx_sinks_params {
    rfx_sinks_loss loss;
    double C;
    int fit_intercept;
    size_t max_iter;
    double tol;
    int n_threads;
} rfx_sinks_params;

rfx_sinks_params rfx_sinks_params_default(void);

typedef struct rfx_sinks_report {
    size_t iterations;
    size_t restarts;
    double objective;
    double kkt;
    double lipschitz;
    size_t n_at_bound;
    int converged;
    size_t newton_steps;
    double C;
    size_t n_cv;
    double cv_C[RFX_SINKS_CV_GRID];
    double cv_loss[RFX_SINKS_CV_GRID];
} rfx_sinks_report;

rfx_status rfx_sinks_fit(const rfx_features *f, rfx_cmat X, const double *y,
                                 const rfx_sinks_params *params, rfx_model **out,
                                 rfx_sinks_report *report);

rfx_status rfx_sinks_classify(const rfx_features *f, rfx_cmat X, const double *labels,
                                      const rfx_sinks_params *params, rfx_model **out,
                                      rfx_sinks_report *report);

typedef enum rfx_greedy_update {
    RFX_GREEDY_ORTHOGONAL = 0,
    RFX_GREEDY_RELAXED = 1
} rfx_greedy_update;

typedef struct rfx_greedy_params {
    rfx_features_params features;
    size_t n_terms;
    size_t n_candidates;
    size_t refine_steps;
    int fit_intercept;
    int n_threads;
    rfx_greedy_update update;
} rfx_greedy_params;

rfx_greedy_params rfx_greedy_params_default(void);

typedef struct rfx_greedy_report {
    size_t n_terms;
    size_t n_dependent;
    double train_mse;
} rfx_greedy_report;

rfx_status rfx_greedy_fit(rfx_cmat X, const double *y, const rfx_greedy_params *params,
                                  rfx_model **out, rfx_greedy_report *report, double *mse_path);

typedef enum rfx_sgd_strategy {
    RFX_SGD_FEATURES_ON_THE_FLY = 0,
    RFX_SGD_FEATURES_CACHED = 1,
    RFX_SGD_KERNEL_ON_THE_FLY = 2,
    RFX_SGD_GRAM_CACHED = 3
} rfx_sgd_strategy;

const char *rfx_sgd_strategy_name(rfx_sgd_strategy s);
rfx_status rfx_sgd_strategy_from_name(const char *name, rfx_sgd_strategy *out);

typedef struct rfx_kernel_sgd_params {
    rfx_sgd_strategy strategy;
    rfx_loss loss;
    double alpha;
    double t0;
    double lambda;
    size_t n_iter;
    uint64_t seed;
    int n_threads;
    size_t cache_limit;
    rfx_progress_fn progress;
    void *progress_user;
} rfx_kernel_sgd_params;

rfx_kernel_sgd_params rfx_kernel_sgd_params_default(void);

rfx_status rfx_kernel_sgd_indices(uint64_t seed, size_t n, size_t T, size_t *idx);

typedef struct rfx_kernel_sgd rfx_kernel_sgd;

rfx_status rfx_kernel_sgd_fit(const rfx_kern *k, const rfx_features *f, rfx_cmat X,
                                      const double *y, const rfx_kernel_sgd_params *params,
                                      rfx_kernel_sgd **out);

void rfx_kernel_sgd_free(rfx_kernel_sgd *m);

rfx_status rfx_kernel_sgd_decision(const rfx_kernel_sgd *m, rfx_cmat X, double *out);

rfx_status rfx_kernel_sgd_predict(const rfx_kernel_sgd *m, rfx_cmat X, double *labels);

const double *rfx_kernel_sgd_weights(const rfx_kernel_sgd *m, size_t *dim);

const double *rfx_kernel_sgd_dual(const rfx_kernel_sgd *m, size_t *n);

typedef struct rfx_kernel_sgd_info {
    rfx_sgd_strategy strategy;
    rfx_loss loss;
    size_t n_train;
    size_t n_inputs;
    size_t n_features;
    size_t n_iter;
    size_t n_support;
    size_t feature_evals;
    size_t kernel_evals;
    double flops;
    size_t cache_bytes;
    size_t state_bytes;
} rfx_kernel_sgd_info;

rfx_status rfx_kernel_sgd_get_info(const rfx_kernel_sgd *m, rfx_kernel_sgd_info *info);

rfx_status rfx_kernel_sgd_cost(const rfx_kernel_sgd *m, double *flops, size_t *bytes);



typedef struct rfx_auto_params {
    unsigned methods;
    unsigned transforms;
    size_t n_folds;
    double race_factor;
    double budget;
    uint64_t seed;
    const size_t *folds;
    int n_threads;
    rfx_progress_fn progress;
    void *progress_user;
    const double *sample_weight;
} rfx_auto_params;

rfx_auto_params rfx_auto_params_default(void);
rfx_status rfx_auto_params_check(const rfx_auto_params *p);

#define RFX_AUTO_MAX_CANDIDATES 18

typedef enum rfx_auto_outcome {
    RFX_AUTO_RAN_ALL = 0,
    RFX_AUTO_RACED = 1,
    RFX_AUTO_BUDGET = 2,
    RFX_AUTO_FAILED = 3,
    RFX_AUTO_ALONE = 4,
    RFX_AUTO_NOT_NEEDED = 5
} rfx_auto_outcome;

typedef struct rfx_auto_candidate {
    rfx_method method;
    rfx_target_transform transform;
    double lambda;
    size_t folds;
    double cv_error;
    double seconds;
    rfx_auto_outcome outcome;
    rfx_status status;
} rfx_auto_candidate;

typedef struct rfx_auto_report {
    size_t n_candidates;
    rfx_auto_candidate candidates[RFX_AUTO_MAX_CANDIDATES];
    size_t chosen;
    size_t compared_folds;
    double seconds_cv;
    double seconds_final;
} rfx_auto_report;

rfx_status rfx_auto_fit(const rfx_auto_params *params, rfx_cmat X, const double *y,
                        rfx_model **out, rfx_auto_report *report);


typedef struct rfx_blr_params {
    double noise_var;
    double prior_var;
    const double *prior_cov;
    int fit_intercept;
    size_t max_iter;
    double tol;
    int n_threads;
    const double *sample_weight;
} rfx_blr_params;

rfx_blr_params rfx_blr_params_default(void);
rfx_status rfx_blr_params_check(const rfx_blr_params *p);

typedef struct rfx_blr rfx_blr;

rfx_status rfx_blr_fit(const rfx_blr_params *params, rfx_cmat Phi, const double *y,
                       rfx_blr **out);
void rfx_blr_free(rfx_blr *m);
rfx_status rfx_blr_predict(const rfx_blr *m, rfx_cmat Phi, double *mean, double *std,
                           int with_noise);

typedef struct rfx_blr_info {
    size_t n_features;
    size_t n_train;
    int fit_intercept;
    size_t rank;
    size_t iterations;
    double noise_var;
    double prior_var;
    double log_evidence;
    double effective_params;
    double intercept;
} rfx_blr_info;

rfx_status rfx_blr_get_info(const rfx_blr *m, rfx_blr_info *info);
const double *rfx_blr_coef(const rfx_blr *m);


typedef enum rfx_sketch_kind {
    RFX_SKETCH_TENSOR = 0,
    RFX_SKETCH_MACLAURIN = 1,
    RFX_SKETCH_ADDITIVE_CHI2 = 2,
    RFX_SKETCH_SKEWED_CHI2 = 3
} rfx_sketch_kind;

typedef enum rfx_dot_kernel {
    RFX_DOT_KERNEL_POLYNOMIAL = 0,
    RFX_DOT_KERNEL_EXPONENTIAL = 1
} rfx_dot_kernel;

typedef struct rfx_sketch_params {
    rfx_sketch_kind kind;
    size_t n_components;
    double gamma;
    double coef0;
    int degree;
    rfx_dot_kernel dot_kernel;
    double skewedness;
    int sample_steps;
    double sample_interval;
    uint64_t seed;
    int n_threads;
} rfx_sketch_params;

rfx_sketch_params rfx_sketch_params_default(void);
rfx_status rfx_dot_kernel_from_name(const char *name, rfx_dot_kernel *out);
typedef struct rfx_sketch rfx_sketch;
rfx_status rfx_sketch_create(const rfx_sketch_params *p, size_t d, rfx_sketch **out);
void rfx_sketch_free(rfx_sketch *s);
rfx_status rfx_sketch_transform(const rfx_sketch *s, rfx_cmat X, rfx_mat Z);
size_t rfx_sketch_n_features(const rfx_sketch *s);
size_t rfx_sketch_input_dim(const rfx_sketch *s);
rfx_sketch_params rfx_sketch_get_params(const rfx_sketch *s);
rfx_status rfx_sketch_exact_kernel(const rfx_sketch *s, rfx_cmat X, rfx_cmat Y,
                                           rfx_mat K);

"""

ffi = FFI()
ffi.cdef(CDEF)

_HERE = os.path.dirname(os.path.abspath(__file__))

try:
    from . import _install  # generated by python/CMakeLists.txt on install
except ImportError:  # a source checkout or a pip install
    _install = None


def _candidates():
    """Where librfx is looked for, in order, as (description, path) pairs."""
    env = os.environ.get("RFX_LIBRARY")
    if env:
        yield "RFX_LIBRARY", env
        return  # an explicit choice is never second-guessed
    # shipped inside the package (pip install ./python, or the CMake install)
    for p in sorted(glob.glob(os.path.join(_HERE, "librfx.so*")), key=len):
        yield "the package directory", p
    # written by the CMake install: the library directory it installed to
    if _install is not None:
        yield "the install prefix", os.path.join(_install.LIBDIR,
                                                 "librfx.so." + _install.SOVERSION)
    # a source checkout: python/rfx/ -> the project root -> build/librfx.so
    d = _HERE
    for _ in range(4):
        d = os.path.dirname(d)
        yield "the build tree", os.path.join(d, "build", "librfx.so")
    found = ctypes.util.find_library("rfx")
    if found:
        yield "the system library path", found


def _load():
    tried = []
    for where, path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append("%s (%s: not found)" % (path, where))
            continue
        try:
            return ffi.dlopen(path), path
        except OSError as e:
            tried.append("%s (%s: %s)" % (path, where, e))
    raise ImportError(
        "rfx: cannot load the C library librfx.so. Build it (make), or set "
        "RFX_LIBRARY to its path. Tried: " + ("; ".join(tried) or "nothing") +
        "; and ctypes.util.find_library('rfx') found nothing.")


lib, library_path = _load()


# ---------------------------------------------------------------------------
# OpenBLAS threads
# ---------------------------------------------------------------------------

class _SerialBlas:
    """librfx parallelises with OpenMP and wants every BLAS/LAPACK call it
    makes to run on the calling thread: with the OpenMP build of OpenBLAS
    (what it links) that holds by itself. In Python, numpy has usually
    loaded OpenBLAS first, and on Debian that is the pthreads build, with
    the same soname, so librfx shares it: each of rfx's OpenMP threads then
    starts OpenBLAS threads of its own (nested, about 1.8x slower fits), and
    the multi-threaded LAPACK steps change the last bits of the results.
    This context sets that OpenBLAS to one thread while rfx calls run and
    restores it after the last one ends (threads count active calls). It
    does nothing when librfx's OpenBLAS is the OpenMP or serial build.
    While an rfx call runs, numpy's BLAS calls in other threads are serial
    too (as inside threadpoolctl's threadpool_limits)."""

    def __init__(self, library_path):
        self._get = self._set = None
        self._lock = threading.Lock()
        self._depth = 0
        self._saved = 1
        self.blas_path = None
        try:
            ob = self._openblas_of(library_path)
        except (OSError, AttributeError, ValueError):
            return
        if ob is None:
            return
        parallel = getattr(ob, "openblas_get_parallel", None)
        if parallel is None:
            return
        parallel.restype = ctypes.c_int
        if parallel() != 1:  # 0 serial, 1 pthreads, 2 OpenMP
            return
        self._get = ob.openblas_get_num_threads
        self._get.restype = ctypes.c_int
        self._set = ob.openblas_set_num_threads
        self._set.argtypes = [ctypes.c_int]

    def _openblas_of(self, library_path):
        """The OpenBLAS librfx is bound to: where its cblas_dgemm resolves
        (dlsym on librfx's handle searches it and its dependencies)."""
        rfx = ctypes.CDLL(library_path)
        addr = ctypes.cast(rfx.cblas_dgemm, ctypes.c_void_p).value

        class DlInfo(ctypes.Structure):
            _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                        ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]

        libc = ctypes.CDLL(None)
        info = DlInfo()
        if not libc.dladdr(ctypes.c_void_p(addr), ctypes.byref(info)) or not info.dli_fname:
            return None
        self.blas_path = os.fsdecode(info.dli_fname)
        return ctypes.CDLL(self.blas_path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)

    @property
    def active(self):
        return self._set is not None

    def __enter__(self):
        if self._set is not None:
            with self._lock:
                if self._depth == 0:
                    self._saved = self._get()
                    self._set(1)
                self._depth += 1
        return self

    def __exit__(self, *exc):
        if self._set is not None:
            with self._lock:
                self._depth -= 1
                if self._depth == 0:
                    self._set(self._saved)
        return False


serial_blas = _SerialBlas(library_path)


class CancelledError(RuntimeError):
    """A progress callback asked the C library to stop (RFX_ECANCELLED)."""


_EXCEPTIONS = {
    lib.RFX_EINVAL: ValueError,
    lib.RFX_EDIM: ValueError,
    lib.RFX_EPARSE: ValueError,
    lib.RFX_EFORMAT: ValueError,
    lib.RFX_EVERSION: ValueError,
    lib.RFX_EOVERFLOW: OverflowError,
    lib.RFX_ENOMEM: MemoryError,
    lib.RFX_EIO: OSError,
    lib.RFX_ENUMERIC: RuntimeError,
    lib.RFX_ECANCELLED: CancelledError,
    lib.RFX_EINTERNAL: RuntimeError,
}


def check(status):
    """Raise the exception for a non-zero rfx_status, with the C message."""
    if status == 0:
        return
    msg = ffi.string(lib.rfx_last_error()).decode("utf-8", "replace")
    if not msg:
        msg = ffi.string(lib.rfx_strerror(status)).decode()
    raise _EXCEPTIONS.get(status, RuntimeError)(msg)


def c_string(p):
    return ffi.string(p).decode("utf-8", "replace")


# ---------------------------------------------------------------------------
# Progress and cancellation
# ---------------------------------------------------------------------------

# The callbacks of rfx.progress_callback(fn) contexts, innermost last.
_user_progress = contextvars.ContextVar("rfx_progress_callbacks", default=())


@contextlib.contextmanager
def progress_callback(fn):
    """Within the ``with`` block, every long fit of this thread (or asyncio
    task) reports its progress to ``fn(stage, fraction)``.

    ``stage`` names the step the C library is in ("choose length scale",
    "learn length scales", "fit", "srfe candidates", ...) and ``fraction``
    is the part of that step done, in [0, 1], or None when the step cannot
    tell. ``fn`` returning a true value, or raising, stops the fit: the C
    library returns RFX_ECANCELLED, frees what it allocated, and the fit
    raises :class:`rfx.CancelledError` (chained to the exception ``fn``
    raised, if any; a KeyboardInterrupt or SystemExit is raised as itself).
    The estimator is then left as it was before the fit. Callbacks of
    nested blocks are all called, outermost first.

    Fits that report progress: RFFRegressor, BayesianRFFRegressor and
    RFFClassifier (rfx_model_fit) and SparseRFERegressor (rfx_srfe_fit),
    between their steps (not inside the final solve). ``fn`` is called on
    the thread that called ``fit``, with the GIL held. The estimators'
    ``verbose`` parameter prints the same reports to stderr.

    Examples
    --------
    >>> import numpy as np, rfx
    >>> X = np.random.RandomState(0).normal(size=(200, 3))
    >>> stages = []
    >>> with rfx.progress_callback(lambda stage, fraction: stages.append(stage)):
    ...     reg = rfx.RFFRegressor(64, random_state=0).fit(X, X[:, 0])
    >>> stages[0], stages[-1]
    ('choose length scale', 'fit')
    >>> def stop(stage, fraction):
    ...     return stage == "fit"  # stop before the final fit
    >>> with rfx.progress_callback(stop):
    ...     rfx.RFFRegressor(64, random_state=0).fit(X, X[:, 0])
    Traceback (most recent call last):
    ...
    rfx._lib.CancelledError: fit: cancelled by the progress callback
    """
    if not callable(fn):
        raise TypeError("progress_callback: fn must be callable as fn(stage, fraction), got %r"
                        % (fn,))
    token = _user_progress.set(_user_progress.get() + (fn,))
    try:
        yield fn
    finally:
        _user_progress.reset(token)


class _Progress:
    """What one C call reports to: the verbose printer, the callbacks of
    progress_callback contexts, and the first exception they raised."""

    def __init__(self, label, verbose):
        self.label = label
        self.verbose = verbose
        self.fns = _user_progress.get()
        self.exc = None
        self.shown = None  # (stage, tenths) of the last line printed
        self.t0 = time.perf_counter()

    def wanted(self):
        # on the main thread always: Ctrl-C then stops the C call at its next report
        return bool(self.verbose or self.fns or
                    threading.current_thread() is threading.main_thread())

    def report(self, stage, fraction):
        if self.exc is not None:
            return 1
        frac = min(float(fraction), 1.0) if fraction >= 0 else None
        if self.verbose:
            self._print(stage, frac)
        stop = 0
        for fn in self.fns:
            if fn(stage, frac):
                stop = 1
        return stop

    def _print(self, stage, frac):
        tenths = -1 if frac is None else int(10 * frac)
        if self.verbose < 2 and self.shown == (stage, tenths):
            return
        self.shown = (stage, tenths)
        text = stage if frac is None else "%s %3d%%" % (stage, int(100 * frac))
        print("[%s] %s" % (self.label, text), file=sys.stderr, flush=True)

    def finish(self, status):
        """Raise what the call ended with; print the time when verbose."""
        exc, self.exc = self.exc, None
        if exc is not None and not isinstance(exc, Exception):
            raise exc  # KeyboardInterrupt, SystemExit: as themselves
        if exc is not None:
            msg = c_string(lib.rfx_last_error()) if status == lib.RFX_ECANCELLED else ""
            raise CancelledError("%s (the progress callback raised %s: %s)" % (
                msg or "cancelled", type(exc).__name__, exc)) from exc
        check(status)
        if self.verbose:
            print("[%s] done in %.2f s" % (self.label, time.perf_counter() - self.t0),
                  file=sys.stderr, flush=True)


_orphans = threading.local()  # exceptions of reports whose _Progress was not found


def _progress_error(exc_type, exc_value, tb):
    """cffi's onerror of the trampoline: an exception raised before its body
    ran (a KeyboardInterrupt delivered on entry). Finds the call it belongs
    to through the trampoline's frame (its argument user) and stops it."""
    tracker = None
    while tb is not None and tracker is None:
        user = tb.tb_frame.f_locals.get("user")
        if isinstance(user, ffi.CData):
            try:
                tracker = ffi.from_handle(user)
            except Exception:  # pragma: no cover - not a handle
                tracker = None
        tb = tb.tb_next
    if isinstance(tracker, _Progress):
        if tracker.exc is None:
            tracker.exc = exc_value
    else:  # pragma: no cover - no frame to find it in
        _orphans.exc = exc_value
    return 1


@ffi.callback("int(void *, const char *, double)", error=1, onerror=_progress_error)
def _progress_trampoline(user, stage, fraction):
    tracker = ffi.from_handle(user)
    try:
        return tracker.report(c_string(stage) if stage != ffi.NULL else "", fraction)
    except BaseException as e:  # stop the C call; finish() re-raises it
        if tracker.exc is None:
            tracker.exc = e
        return 1


def call_with_progress(cfn, params, *args, label, verbose=0, out=None):
    """cfn(params, *args) for a C fit whose params struct has progress and
    progress_user fields, with progress sent to the estimator's verbose
    printer and the progress_callback contexts, Ctrl-C turned into
    RFX_ECANCELLED, and OpenBLAS serial. Raises as check() does, or the
    callback's exception (see progress_callback); out, the fit's
    rfx_model ** output, is then freed if the C call had filled it."""
    tracker = _Progress(label, verbose)
    handle = None
    if tracker.wanted():
        handle = ffi.new_handle(tracker)
        params.progress = _progress_trampoline
        params.progress_user = handle
    try:
        with serial_blas:
            status = cfn(params, *args)
    finally:
        params.progress = ffi.NULL
        params.progress_user = ffi.NULL
    orphan = getattr(_orphans, "exc", None)
    if orphan is not None:  # pragma: no cover - see _progress_error
        _orphans.exc = None
        if tracker.exc is None:
            tracker.exc = orphan
    del handle
    if status == 0 and tracker.exc is not None and out is not None:
        lib.rfx_model_free(out[0])  # finished before it saw the stop: not returned
        out[0] = ffi.NULL
    tracker.finish(status)


def check_verbose(verbose):
    """verbose as an int >= 0 (bools are accepted as 0 and 1)."""
    if not isinstance(verbose, numbers.Integral):
        raise TypeError("verbose must be an int >= 0 or a bool, got %r" % (verbose,))
    if verbose < 0:
        raise ValueError("verbose must be >= 0, got %d" % verbose)
    return int(verbose)


# ---------------------------------------------------------------------------
# numpy arrays as matrix views
# ---------------------------------------------------------------------------

def _strided_ok(a, itemsize):
    """True when a 2-D array is a row-major view rfx can read in place:
    contiguous rows (element stride = itemsize), a non-negative row stride
    that is a whole number of elements, aligned data."""
    if a.ndim != 2 or not a.flags.aligned:
        return False
    if a.shape[1] > 1 and a.strides[1] != itemsize:
        return False
    if a.shape[0] > 1 and (a.strides[0] < 0 or a.strides[0] % itemsize
                           or a.strides[0] // itemsize < a.shape[1]):
        return False
    return True


def as_rows(a, dtype=np.float64):
    """a as a 2-D array of dtype that rfx can read without a copy: the array
    itself when it already is one (C-contiguous, or rows of a larger C array),
    otherwise a C-contiguous copy."""
    a = np.asarray(a)
    if a.dtype != dtype or not _strided_ok(a, np.dtype(dtype).itemsize):
        a = np.ascontiguousarray(a, dtype=dtype)
    return a


# Outputs of this many bytes or more start on a 2 MiB boundary, smaller
# ones on a 64-byte one (see empty_rows).
_HUGE_PAGE = 1 << 21
_HUGE_OUTPUT = 1 << 22


def empty_rows(rows, cols, dtype=np.float64):
    """An uninitialised C-contiguous (rows, cols) array for the C library to
    write, its data aligned to 64 bytes, and to 2 MiB when it takes 4 MiB or
    more. numpy's own arrays start where malloc puts them, 16 bytes past a
    page boundary: every 64-byte vector store of the fused transform then
    straddles two cache lines (11% more CPU time for a float32 output of
    100000 x 2048, 2.5% for float64: bench/results/python.md), and the
    first 2 MiB of the array, which numpy advises
    for transparent huge pages from 4 MiB on, fault in as 4 KiB pages. The
    array is a view of a slightly larger buffer (at most 64 bytes or 2 MiB
    more, never touched, so never backed by memory)."""
    dtype = np.dtype(dtype)
    nbytes = rows * cols * dtype.itemsize
    if nbytes == 0:
        return np.empty((rows, cols), dtype=dtype)
    align = _HUGE_PAGE if nbytes >= _HUGE_OUTPUT else 64
    buf = np.empty(nbytes + align, dtype=np.uint8)
    off = -buf.ctypes.data % align
    return buf[off:off + nbytes].view(dtype).reshape(rows, cols)


def _view(a, ctype, struct):
    rows, cols = a.shape
    stride = a.strides[0] // a.itemsize if rows > 1 else cols
    return ffi.new(struct + " *", (ffi.cast(ctype, a.ctypes.data), rows, cols, stride))[0]


def cmat(a):
    """An rfx_cmat view of a float64 2-D array from as_rows (keep a alive)."""
    return _view(a, "const double *", "rfx_cmat")


def mat(a):
    """An rfx_mat view of a writable float64 2-D array."""
    return _view(a, "double *", "rfx_mat")


def cmatf(a):
    return _view(a, "const float *", "rfx_cmatf")


def matf(a):
    return _view(a, "float *", "rfx_matf")


def mat_none():
    return ffi.new("rfx_mat *")[0]


def cmat_to_array(m):
    """A numpy copy of an rfx_cmat owned by the library."""
    if m.rows == 0 or m.cols == 0:
        return np.empty((m.rows, m.cols), dtype=np.float64)
    flat = np.frombuffer(ffi.buffer(m.data, 8 * ((m.rows - 1) * m.stride + m.cols)),
                         dtype=np.float64)
    return np.lib.stride_tricks.as_strided(flat, shape=(m.rows, m.cols),
                                           strides=(8 * m.stride, 8)).copy()


def double_array(p, n):
    """A numpy copy of n doubles at p."""
    if n == 0:
        return np.empty(0)
    return np.frombuffer(ffi.buffer(p, 8 * n), dtype=np.float64).copy()


def version():
    """The version of the loaded C library ("MAJOR.MINOR.PATCH")."""
    return c_string(lib.rfx_version())


def isa():
    """The instruction-set path the C kernels run: "generic", "avx2" or
    "avx512" (the CPU's best, unless RFX_ISA or set_isa asked for less)."""
    return c_string(lib.rfx_isa_name(lib.rfx_isa_active()))


def native_isa():
    """The best instruction-set path this CPU supports."""
    return c_string(lib.rfx_isa_name(lib.rfx_isa_native()))


def set_isa(name):
    """Run the C kernels on the path `name` ("generic", "avx2", "avx512"),
    capped at what the CPU has; returns the path now in force. Process-wide:
    call it before starting work. Results agree across paths to rounding,
    bitwise within one (see include/rfx.h)."""
    out = ffi.new("rfx_isa *")
    check(lib.rfx_isa_from_name(str(name).encode(), out))
    check(lib.rfx_isa_set(out[0]))
    return isa()


def _check_isa_environment():
    """Refuse an RFX_ISA value the library does not know (the library
    itself would ignore it and run the CPU's best)."""
    env = os.environ.get("RFX_ISA")
    if env:
        out = ffi.new("rfx_isa *")
        if lib.rfx_isa_from_name(env.encode(), out) != 0:
            raise ValueError("RFX_ISA: " + c_string(lib.rfx_last_error()))


_check_isa_environment()
