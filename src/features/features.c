/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Random Fourier features (Rahimi & Recht, "Random Features for Large-Scale
 * Kernel Machines", NIPS 2007): by Bochner's theorem a continuous shift-
 * invariant kernel with k(0) = 1 is the Fourier transform of a probability
 * density p(w), so k(x - y) = E_w[cos(w.(x - y))], estimated by D samples.
 */
#include "internal.h"

#include <math.h>
#include <string.h>

static const double TWO_PI = 6.283185307179586476925;
static const double PI = 3.141592653589793238463;

rfx_features_params rfx_features_params_default(void)
{
    rfx_features_params p;
    memset(&p, 0, sizeof p);
    p.kernel = RFX_KERNEL_GAUSSIAN;
    p.nu = 1.5;
    p.form = RFX_FORM_COS_BIAS;
    p.n_features = 1024;
    p.seed = 0;
    p.length_scale = 1.0;
    p.length_scales = NULL;
    p.gamma = 0.0;
    p.n_threads = 0;
    p.activation = RFX_ACTIVATION_COS;
    p.sparsity = 0;
    p.weights = RFX_WEIGHTS_KERNEL;
    p.weight_scale = 1.0;
    p.structure = RFX_STRUCTURE_IID;
    p.structure_version = 0;
    p.spectral = NULL;
    p.spectral_user = NULL;
    return p;
}

rfx_status rfx__features_check_fields(const rfx_features_params *p)
{
    if (!p) return rfx__error(RFX_EINVAL, "features: params is NULL");
    if ((unsigned)p->kernel > RFX_KERNEL_CUSTOM)
        return rfx__error(RFX_EINVAL, "features.kernel: %d is not an rfx_kernel", (int)p->kernel);
    if (p->kernel == RFX_KERNEL_CUSTOM && !p->spectral)
        return rfx__error(RFX_EINVAL, "features.spectral: the custom kernel draws its frequencies "
                                      "from a sampler, and none is given");
    if (p->kernel != RFX_KERNEL_CUSTOM && p->spectral)
        return rfx__error(RFX_EINVAL, "features.spectral: a sampler is given with the %s kernel; "
                                      "set features.kernel to custom to use it",
                          rfx_kernel_name(p->kernel));
    if ((unsigned)p->form > RFX_FORM_PHASE_FREE)
        return rfx__error(RFX_EINVAL, "features.form: %d is not an rfx_form", (int)p->form);
    if (p->n_features == 0)
        return rfx__error(RFX_EINVAL, "features.n_features: must be >= 1");
    if (p->form == RFX_FORM_COS_SIN && p->n_features % 2 != 0)
        return rfx__error(RFX_EINVAL,
                          "features.n_features: the cos-sin form needs an even count, got %zu",
                          p->n_features);
    if (p->kernel == RFX_KERNEL_MATERN && !(p->nu > 0 && isfinite(p->nu)))
        return rfx__error(RFX_EINVAL, "features.nu: Matern smoothness must be > 0, got %g", p->nu);
    if (!(p->gamma >= 0 && isfinite(p->gamma)))
        return rfx__error(RFX_EINVAL, "features.gamma: must be >= 0 and finite, got %g", p->gamma);
    if (p->gamma > 0 && p->kernel != RFX_KERNEL_GAUSSIAN && p->kernel != RFX_KERNEL_LAPLACIAN)
        return rfx__error(RFX_EINVAL,
                          "features.gamma: defined for the gaussian and laplacian kernels only; "
                          "use length_scale for the %s kernel", rfx_kernel_name(p->kernel));
    if (p->gamma > 0 && p->length_scales)
        return rfx__error(RFX_EINVAL, "features: give gamma or length_scales, not both");
    if (!p->length_scales && p->gamma == 0 && !(p->length_scale > 0 && isfinite(p->length_scale)))
        return rfx__error(RFX_EINVAL, "features.length_scale: must be > 0 and finite, got %g",
                          p->length_scale);
    if (p->n_threads < 0)
        return rfx__error(RFX_EINVAL, "features.n_threads: must be >= 0, got %d", p->n_threads);
    if ((unsigned)p->activation > RFX_ACTIVATION_SIGN)
        return rfx__error(RFX_EINVAL, "features.activation: %d is not an rfx_activation",
                          (int)p->activation);
    if (p->form == RFX_FORM_COS_SIN && p->activation != RFX_ACTIVATION_COS)
        return rfx__error(RFX_EINVAL, "features.form: the cos-sin form is for the cos activation "
                                      "(got %s)", rfx_activation_name(p->activation));
    /* E cos(w.x) cos(w.y) = (k(x - y) + k(x + y)) / 2: not a kernel of x - y */
    if (p->form == RFX_FORM_PHASE_FREE && p->activation == RFX_ACTIVATION_COS)
        return rfx__error(RFX_EINVAL, "features.form: the phase-free form is for the activations "
                                      "other than cos (cos(w.x) alone is not shift-invariant); "
                                      "use cos-bias or cos-sin");
    if ((unsigned)p->weights > RFX_WEIGHTS_UNIFORM)
        return rfx__error(RFX_EINVAL, "features.weights: %d is not an rfx_weights",
                          (int)p->weights);
    if (!(p->weight_scale > 0 && isfinite(p->weight_scale)))
        return rfx__error(RFX_EINVAL, "features.weight_scale: must be > 0 and finite, got %g",
                          p->weight_scale);
    if (p->kernel == RFX_KERNEL_CUSTOM && p->weights != RFX_WEIGHTS_KERNEL)
        return rfx__error(RFX_EINVAL, "features.weights: the custom kernel draws its weights from "
                                      "features.spectral (weights 'kernel'), got '%s'",
                          rfx_weights_name(p->weights));
    return RFX_OK;
}

rfx_status rfx__features_check(const rfx_features_params *p, size_t d)
{
    if (!p) return rfx__error(RFX_EINVAL, "features: params is NULL");
    if (d == 0) return rfx__error(RFX_EINVAL, "features: input dimension d must be >= 1");
    RFX__TRY(rfx__features_check_fields(p));
    if (p->length_scales) {
        for (size_t i = 0; i < d; i++) {
            if (!(p->length_scales[i] > 0 && isfinite(p->length_scales[i])))
                return rfx__error(RFX_EINVAL,
                                  "features.length_scales[%zu]: must be > 0 and finite, got %g", i,
                                  p->length_scales[i]);
        }
    }
    if (p->sparsity > d)
        return rfx__error(RFX_EINVAL, "features.sparsity: q = %zu exceeds the %zu inputs",
                          p->sparsity, d);
    if (p->kernel == RFX_KERNEL_CUSTOM && p->sparsity != 0 && p->sparsity != d)
        return rfx__error(RFX_EINVAL, "features.sparsity: the custom kernel's sampler draws dense "
                                      "frequencies (sparsity 0), got q = %zu of %zu inputs",
                          p->sparsity, d);
    size_t cells;
    RFX__TRY(rfx__mul(p->n_features, d, &cells, "features: n_features x d"));
    return rfx__structure_check(p, d);
}

/* The isotropic length scale that gamma stands for (scikit-learn meaning). */
static double length_from_gamma(rfx_kernel kernel, double gamma)
{
    return kernel == RFX_KERNEL_GAUSSIAN ? 1.0 / sqrt(2.0 * gamma) : 1.0 / gamma;
}

static rfx_status features_alloc(const rfx_features_params *p, size_t d, rfx_features **out)
{
    rfx_features *f = calloc(1, sizeof *f);
    if (!f) return rfx__error(RFX_ENOMEM, "features: cannot allocate");
    f->params = *p;
    f->params.structure_version = rfx__structure_version(p);
    f->d = d;
    f->D = p->n_features;
    f->F = p->form == RFX_FORM_COS_SIN ? p->n_features / 2 : p->n_features;
    f->scale = p->activation == RFX_ACTIVATION_COS ? sqrt(2.0 / (double)f->D) : 1.0;
    rfx_status st = rfx__alloc(d, sizeof(double), (void **)&f->ls, "features: length scales");
    if (!st) st = rfx__alloc(f->F * d, sizeof(double), (void **)&f->W, "features: frequencies");
    if (!st) st = rfx__alloc(f->F, sizeof(double), (void **)&f->b, "features: phases");
    if (!st) st = rfx__alloc(f->F * d, sizeof(float), (void **)&f->W32, "features: frequencies");
    if (!st) st = rfx__alloc(f->F, sizeof(float), (void **)&f->b32, "features: phases");
    f->ldw = (f->F + 63) / 64 * 64; /* whole register blocks of the fused kernels */
    if (!st) st = rfx__calloc(f->ldw * d, sizeof(double), (void **)&f->WT, "features: frequencies");
    if (!st) st = rfx__calloc(f->ldw, sizeof(double), (void **)&f->bp, "features: phases");
    if (!st) st = rfx__calloc(f->ldw * d, sizeof(float), (void **)&f->WT32, "features: frequencies");
    if (!st) st = rfx__calloc(f->ldw, sizeof(float), (void **)&f->bp32, "features: phases");
    if (st) {
        rfx_features_free(f);
        return st;
    }
    *out = f;
    return RFX_OK;
}

#define RFX__HALF_PI 1.57079632679489661923

static void features_finish(rfx_features *f)
{
    for (size_t i = 0; i < f->F * f->d; i++) f->W32[i] = (float)f->W[i];
    for (size_t j = 0; j < f->F; j++) f->b32[j] = (float)f->b[j];
    for (size_t j = 0; j < f->F; j++) {
        for (size_t k = 0; k < f->d; k++) f->WT[k * f->ldw + j] = f->W[j * f->d + k];
        /* sin(t + b) = cos(t + b - pi/2): sine features take the cosine
         * kernels (vectorised, fused) with shifted phases */
        f->bp[j] = f->params.activation == RFX_ACTIVATION_SIN ? f->b[j] - RFX__HALF_PI : f->b[j];
        for (size_t k = 0; k < f->d; k++) f->WT32[k * f->ldw + j] = f->W32[j * f->d + k];
        f->bp32[j] = (float)f->bp[j];
    }
    f->params.length_scales = f->ard ? f->ls : NULL;
    f->params.length_scale = f->ard ? 0.0 : f->ls[0];
    f->params.gamma = 0.0;
}

/* The number of q-subsets of d, or SIZE_MAX when it exceeds limit. */
static size_t choose_capped(size_t d, size_t q, size_t limit)
{
    double c = 1;
    for (size_t i = 0; i < q; i++) {
        c = c * (double)(d - i) / (double)(i + 1);
        if (c > (double)limit) return SIZE_MAX;
    }
    return (size_t)(c + 0.5);
}

/* The idx-th q-subset of {0..d-1} in lexicographic order (combinatorial
 * unranking): ascending indices into sup. */
static void unrank_subset(size_t d, size_t q, size_t idx, size_t *sup)
{
    size_t x = 0;
    for (size_t k = 0; k < q; k++) {
        for (;; x++) {
            size_t rest = choose_capped(d - x - 1, q - k - 1, SIZE_MAX - 1);
            if (idx < rest) break;
            idx -= rest;
        }
        sup[k] = x++;
    }
}

/* One weight draw for a coordinate (independent kernels and the explicit
 * distributions); Matern is handled by the caller (one chi2 per row). */
static double draw_weight(const rfx_features *f, rfx__rng *r)
{
    switch (f->params.weights) {
    case RFX_WEIGHTS_NORMAL: return f->params.weight_scale * rfx__rng_normal(r);
    case RFX_WEIGHTS_UNIFORM: return f->params.weight_scale * (2.0 * rfx__rng_uniform(r) - 1.0);
    case RFX_WEIGHTS_KERNEL: break;
    }
    switch (f->params.kernel) {
    case RFX_KERNEL_LAPLACIAN: /* Cauchy(0, 1) by inversion: tan(pi (u - 1/2)) */
        return tan(PI * (rfx__rng_uniform(r) - 0.5));
    case RFX_KERNEL_CAUCHY: { /* Laplace(0, 1) by inversion */
        double v = rfx__rng_uniform(r) - 0.5;
        return v < 0 ? log(1.0 + 2.0 * v) : -log(1.0 - 2.0 * v);
    }
    default: /* GAUSSIAN, and MATERN's normal part */
        return rfx__rng_normal(r);
    }
}

/* Draw frequency j: the phase first, then the support (q-sparse maps), then
 * the weights, all from the stream (seed, 0, j), so row j is the same
 * whatever F, the thread count or the block. The forms without a phase draw
 * it too and set b = 0, so that their frequencies are the cos-bias map's.
 * ws: d indices. */
static void sample_row(const rfx_features *f, size_t j, size_t q, size_t n_supports, double *w,
                       double *b, size_t *ws)
{
    const size_t d = f->d;
    rfx__rng r;
    rfx__rng_init(&r, f->params.seed, 0, (uint64_t)j);
    *b = TWO_PI * rfx__rng_uniform(&r);
    if (f->params.form != RFX_FORM_COS_BIAS) *b = 0.0;
    size_t *sup = ws;
    if (q == d) {
        for (size_t i = 0; i < d; i++) sup[i] = i;
    } else if (n_supports != SIZE_MAX) {
        unrank_subset(d, q, j % n_supports, sup);
    } else { /* a uniform q-subset: partial Fisher-Yates, then sorted */
        for (size_t i = 0; i < d; i++) ws[i] = i;
        for (size_t k = 0; k < q; k++) {
            size_t t = k + (size_t)(rfx__rng_uniform(&r) * (double)(d - k));
            if (t >= d) t = d - 1;
            size_t tmp = ws[k];
            ws[k] = ws[t];
            ws[t] = tmp;
        }
        for (size_t k = 1; k < q; k++) /* insertion sort: q is small */
            for (size_t m = k; m > 0 && ws[m - 1] > ws[m]; m--) {
                size_t tmp = ws[m];
                ws[m] = ws[m - 1];
                ws[m - 1] = tmp;
            }
    }
    for (size_t i = 0; i < d; i++) w[i] = 0.0;
    double t_scale = 1.0;
    if (f->params.weights == RFX_WEIGHTS_KERNEL && f->params.kernel == RFX_KERNEL_MATERN) {
        /* multivariate t with 2 nu degrees of freedom over the support:
         * g sqrt(2 nu / chi2), chi2(2 nu) = 2 Gamma(nu, 1); one per row */
        double chi2 = 2.0 * rfx__rng_gamma(&r, f->params.nu);
        t_scale = sqrt(2.0 * f->params.nu / chi2);
    }
    for (size_t k = 0; k < q; k++) {
        size_t i = sup[k];
        w[i] = t_scale * draw_weight(f, &r) / f->ls[i];
    }
}

/* The frequencies of a user's density (RFX_KERNEL_CUSTOM): frequency j
 * from the stream (seed, 0, j) after its phase, as sample_row draws an
 * i.i.d. row, so that a sampler of d normals gives the GAUSSIAN map bit
 * for bit. Coordinates start as NaN: one the sampler leaves unset is
 * caught as not finite. */
static rfx_status sample_custom(rfx_features *f)
{
    const size_t d = f->d;
    const rfx_features_params *p = &f->params;
    rfx_rng rng;
    for (size_t j = 0; j < f->F; j++) {
        double *w = f->W + j * d;
        rfx__rng_init(&rng.state, p->seed, 0, (uint64_t)j);
        f->b[j] = TWO_PI * rfx__rng_uniform(&rng.state);
        if (p->form != RFX_FORM_COS_BIAS) f->b[j] = 0.0;
        for (size_t i = 0; i < d; i++) w[i] = NAN;
        rfx_clear_error();
        rfx_status st = p->spectral(p->spectral_user, &rng, j, d, w);
        if (st != RFX_OK) {
            if ((unsigned)st > RFX_EINTERNAL)
                return rfx__error(RFX_EINVAL, "features.spectral: frequency %zu: the sampler "
                                  "returned %d, not an rfx_status", j, (int)st);
            if (!rfx_last_error()[0]) rfx_set_error(st, "the sampler failed");
            rfx__error_prefix("features.spectral: frequency %zu", j);
            return st;
        }
        for (size_t i = 0; i < d; i++) {
            if (!isfinite(w[i]))
                return rfx__error(RFX_ENUMERIC, "features.spectral: frequency %zu, coordinate "
                                  "%zu: the sampler gave %g (or left it unset)", j, i, w[i]);
            w[i] /= f->ls[i];
        }
    }
    return RFX_OK;
}

rfx_status rfx_features_create(const rfx_features_params *params, size_t d, rfx_features **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "rfx_features_create: out is NULL");
    RFX__TRY(rfx__features_check(params, d));
    rfx_features *f;
    RFX__TRY(features_alloc(params, d, &f));
    f->ard = params->length_scales != NULL;
    for (size_t i = 0; i < d; i++) {
        if (params->length_scales) f->ls[i] = params->length_scales[i];
        else if (params->gamma > 0) f->ls[i] = length_from_gamma(params->kernel, params->gamma);
        else f->ls[i] = params->length_scale;
    }
    if (params->structure != RFX_STRUCTURE_IID) {
        rfx_status st = rfx__structured_sample(f);
        if (st) {
            rfx_features_free(f);
            return st;
        }
        features_finish(f);
        *out = f;
        return RFX_OK;
    }
    if (params->kernel == RFX_KERNEL_CUSTOM) {
        rfx_status st = sample_custom(f);
        if (st) {
            rfx_features_free(f);
            return st;
        }
        features_finish(f);
        *out = f;
        return RFX_OK;
    }
    const size_t q = params->sparsity == 0 ? d : params->sparsity;
    const size_t n_supports = q < d ? choose_capped(d, q, f->F) : 1;
    size_t *ws = malloc(d * sizeof *ws);
    if (!ws) {
        rfx_features_free(f);
        return rfx__error(RFX_ENOMEM, "features: workspace");
    }
    for (size_t j = 0; j < f->F; j++) sample_row(f, j, q, n_supports, f->W + j * d, f->b + j, ws);
    free(ws);
    features_finish(f);
    *out = f;
    return RFX_OK;
}

/* Stands in for the sampler of a custom map built from its frequencies
 * (whose sampler is not known), for the checks; never called. */
static rfx_status given_frequencies(void *user, rfx_rng *rng, size_t j, size_t d, double *w)
{
    (void)user, (void)rng, (void)j, (void)d, (void)w;
    return rfx__error(RFX_EINTERNAL, "features: a map of given frequencies has no sampler");
}

rfx_status rfx__features_from_arrays(const rfx_features_params *params, size_t d,
                                     const double *ls, int ard, const double *W,
                                     const double *b, rfx_features **out)
{
    rfx_features_params p = *params;
    p.length_scales = NULL;
    p.gamma = 0.0;
    p.length_scale = ls[0];
    if (p.kernel == RFX_KERNEL_CUSTOM && !p.spectral) p.spectral = given_frequencies;
    RFX__TRY(rfx__features_check(&p, d));
    if (p.spectral == given_frequencies) p.spectral = NULL;
    rfx_features *f;
    RFX__TRY(features_alloc(&p, d, &f));
    f->ard = ard != 0;
    memcpy(f->ls, ls, d * sizeof *ls);
    if (p.structure == RFX_STRUCTURE_SORF || p.structure == RFX_STRUCTURE_FASTFOOD) {
        /* the fast transform is rebuilt from the seed; it must be the map
         * whose frequencies were given, or the transforms would differ */
        rfx_status st = rfx__structured_fast_init(f);
        if (!st && memcmp(f->W, W, f->F * d * sizeof *W) != 0)
            st = rfx__error(RFX_EINVAL,
                            "features.structure: the frequencies do not match the structured "
                            "map of the seed (%s, seed %llu, d = %zu, D = %zu)",
                            rfx_structure_name(p.structure), (unsigned long long)p.seed, d,
                            f->D);
        if (st) {
            rfx_features_free(f);
            return st;
        }
    } else {
        memcpy(f->W, W, f->F * d * sizeof *W);
    }
    memcpy(f->b, b, f->F * sizeof *b);
    features_finish(f);
    *out = f;
    return RFX_OK;
}

void rfx_features_free(rfx_features *f)
{
    if (!f) return;
    free(f->ls);
    free(f->W);
    free(f->b);
    free(f->W32);
    free(f->b32);
    free(f->WT);
    free(f->bp);
    free(f->WT32);
    free(f->bp32);
    free(f->fdiag);
    free(f->fperm);
    free(f);
}

rfx_features_params rfx_features_get_params(const rfx_features *f) { return f->params; }
size_t rfx_features_input_dim(const rfx_features *f) { return f->d; }
size_t rfx_features_output_dim(const rfx_features *f) { return f->D; }

rfx_cmat rfx_features_frequencies(const rfx_features *f)
{
    return rfx_cmat_of(f->W, f->F, f->d);
}

const double *rfx_features_phases(const rfx_features *f) { return f->b; }

void rfx_features_set_threads(rfx_features *f, int n_threads)
{
    if (f && n_threads >= 0) f->params.n_threads = n_threads;
}

/* ---- the exact kernels, for verification ------------------------------- */

/* k at scaled difference t = (x - y) / l (d values). */
static double kernel_at(const rfx_features *f, const double *t)
{
    size_t d = f->d;
    switch (f->params.kernel) {
    case RFX_KERNEL_GAUSSIAN: {
        double r2 = 0;
        for (size_t i = 0; i < d; i++) r2 += t[i] * t[i];
        return exp(-0.5 * r2);
    }
    case RFX_KERNEL_LAPLACIAN: {
        double r1 = 0;
        for (size_t i = 0; i < d; i++) r1 += fabs(t[i]);
        return exp(-r1);
    }
    case RFX_KERNEL_CAUCHY: {
        double k = 1;
        for (size_t i = 0; i < d; i++) k /= 1.0 + t[i] * t[i];
        return k;
    }
    case RFX_KERNEL_MATERN: {
        double r2 = 0;
        for (size_t i = 0; i < d; i++) r2 += t[i] * t[i];
        double r = sqrt(r2), nu = f->params.nu;
        if (nu == 0.5) return exp(-r);
        if (nu == 1.5) {
            double a = sqrt(3.0) * r;
            return (1.0 + a) * exp(-a);
        }
        /* nu == 2.5, checked by the caller */
        double a = sqrt(5.0) * r;
        return (1.0 + a + a * a / 3.0) * exp(-a);
    }
    case RFX_KERNEL_CUSTOM: break; /* refused by the caller */
    }
    return NAN;
}

rfx_status rfx_features_exact_kernel(const rfx_features *f, rfx_cmat X, rfx_cmat Y, rfx_mat K)
{
    if (!f) return rfx__error(RFX_EINVAL, "exact kernel: features is NULL");
    RFX__TRY(rfx__check_cmat(X, "exact kernel: X"));
    RFX__TRY(rfx__check_cmat(Y, "exact kernel: Y"));
    RFX__TRY(rfx__check_mat(K, "exact kernel: K"));
    if (X.cols != f->d || Y.cols != f->d)
        return rfx__error(RFX_EDIM, "exact kernel: X has %zu and Y %zu columns, features expect %zu",
                          X.cols, Y.cols, f->d);
    if (K.rows != X.rows || K.cols != Y.rows)
        return rfx__error(RFX_EDIM, "exact kernel: K is %zu x %zu, expected %zu x %zu", K.rows,
                          K.cols, X.rows, Y.rows);
    if (f->params.kernel == RFX_KERNEL_CUSTOM)
        return rfx__error(RFX_EINVAL, "exact kernel: the custom kernel is known only through its "
                                      "sampler (features.spectral); rfx has no exact form of it");
    if (f->params.activation != RFX_ACTIVATION_COS || f->params.weights != RFX_WEIGHTS_KERNEL ||
        (f->params.sparsity != 0 && f->params.sparsity != f->d))
        return rfx__error(RFX_EINVAL, "exact kernel: defined for dense cosine features of a "
                                      "kernel's spectral density only");
    if (f->params.kernel == RFX_KERNEL_MATERN && f->params.nu != 0.5 && f->params.nu != 1.5 &&
        f->params.nu != 2.5)
        return rfx__error(RFX_EINVAL,
                          "exact kernel: the Matern kernel has a closed form here for nu = 0.5, "
                          "1.5, 2.5 only (nu = %g)", f->params.nu);
    size_t d = f->d;
    double *t;
    int nt = rfx__threads(f->params.n_threads);
    RFX__TRY(rfx__alloc((size_t)nt, d * sizeof(double), (void **)&t, "exact kernel: workspace"));
#pragma omp parallel for schedule(static) num_threads(nt)
    for (size_t i = 0; i < X.rows; i++) {
#ifdef _OPENMP
        double *ti = t + (size_t)omp_get_thread_num() * d;
#else
        double *ti = t;
#endif
        const double *x = X.data + i * X.stride;
        for (size_t j = 0; j < Y.rows; j++) {
            const double *y = Y.data + j * Y.stride;
            for (size_t c = 0; c < d; c++) ti[c] = (x[c] - y[c]) / f->ls[c];
            K.data[i * K.stride + j] = kernel_at(f, ti);
        }
    }
    free(t);
    return RFX_OK;
}

rfx_status rfx__features_copy(const rfx_features *f, rfx_features **out)
{
    rfx_features *g;
    RFX__TRY(features_alloc(&f->params, f->d, &g));
    g->ard = f->ard;
    memcpy(g->ls, f->ls, f->d * sizeof *f->ls);
    memcpy(g->W, f->W, f->F * f->d * sizeof *f->W);
    memcpy(g->b, f->b, f->F * sizeof *f->b);
    if (f->fdiag) { /* the fast transform's state, as it is */
        size_t cells = f->n_blocks * RFX__FAST_SLOTS * f->dp;
        rfx_status st = rfx__alloc(cells, sizeof(double), (void **)&g->fdiag, "features: copy");
        if (!st && f->fperm)
            st = rfx__alloc(f->n_blocks * f->dp, sizeof(uint32_t), (void **)&g->fperm,
                            "features: copy");
        if (st) {
            rfx_features_free(g);
            return st;
        }
        memcpy(g->fdiag, f->fdiag, cells * sizeof(double));
        if (f->fperm) memcpy(g->fperm, f->fperm, f->n_blocks * f->dp * sizeof(uint32_t));
        g->dp = f->dp;
        g->dp_log2 = f->dp_log2;
        g->n_blocks = f->n_blocks;
        g->fast = f->fast;
        g->sorf_radial = f->sorf_radial;
    }
    features_finish(g);
    *out = g;
    return RFX_OK;
}
