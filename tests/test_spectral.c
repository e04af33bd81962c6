/* SPDX-License-Identifier: BSD-3-Clause */
/* A user's spectral density (RFX_KERNEL_CUSTOM, rfx_features_params.spectral):
 * a sampler of normals gives bitwise the GAUSSIAN map; a Cauchy sampler
 * (by another method than rfx's) approximates the Laplacian kernel, its
 * Monte Carlo mean within a CLT bound; the sampler's errors come back as
 * its status and message; every parameter that does not fit is refused;
 * the exact kernels refuse the custom kernel; model files keep its W. */
#include "core/records.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- samplers ----------------------------------------------------------- */

/* w ~ N(0, I): d normals from the stream, as the GAUSSIAN kernel draws. */
static rfx_status normal_sampler(void *user, rfx_rng *rng, size_t j, size_t d, double *w)
{
    (void)j;
    if (user) ++*(size_t *)user; /* counts the calls */
    rfx_rng_fill_normal(rng, w, d);
    return RFX_OK;
}

/* w_i ~ Cauchy(0, 1) as the ratio of two normals (not rfx's inversion): the
 * Laplacian kernel exp(-|t|_1). */
static rfx_status cauchy_sampler(void *user, rfx_rng *rng, size_t j, size_t d, double *w)
{
    (void)user, (void)j;
    for (size_t i = 0; i < d; i++) {
        double a = rfx_rng_normal(rng), b = rfx_rng_normal(rng);
        w[i] = a / b;
    }
    return RFX_OK;
}

/* Fails at frequency user->at with user->status (and a message unless
 * user->quiet); user->bad_value instead writes it into coordinate 1;
 * user->skip leaves coordinate 2 unset. */
typedef struct failing {
    size_t at;
    rfx_status status;
    int quiet;
    double bad_value;
    int use_bad, skip;
} failing;

static rfx_status failing_sampler(void *user, rfx_rng *rng, size_t j, size_t d, double *w)
{
    failing *u = user;
    for (size_t i = 0; i < d; i++)
        if (!(u->skip && j == u->at && i == 2)) w[i] = rfx_rng_normal(rng);
    if (j != u->at) return RFX_OK;
    if (u->use_bad) {
        w[1] = u->bad_value;
        return RFX_OK;
    }
    if (u->skip) return RFX_OK;
    if (u->quiet) return u->status;
    return rfx_set_error(u->status, "my density cannot draw here");
}

static rfx_features *make_custom(rfx_spectral_fn fn, void *user, size_t d, size_t D, rfx_form form,
                                 const double *ls, double l, uint64_t seed)
{
    rfx_features_params p = rfx_features_params_default();
    p.kernel = RFX_KERNEL_CUSTOM;
    p.spectral = fn;
    p.spectral_user = user;
    p.n_features = D;
    p.form = form;
    p.length_scale = l;
    p.length_scales = ls;
    p.seed = seed;
    rfx_features *f = NULL;
    CHECK_OK(rfx_features_create(&p, d, &f));
    return f;
}

/* ---- the Gaussian density: bitwise the built-in map ---------------------- */

/* A sampler of d normals from the stream gives the GAUSSIAN map's W and b
 * bit for bit (both forms, isotropic and per-input length scales), so the
 * same features; it is called once per frequency. The map reports the
 * custom kernel and its sampler; the W of F frequencies is the first F
 * rows of the W of more. */
static void test_gaussian_sampler(void)
{
    const size_t d = 5, D = 100, n = 37;
    const double ls[5] = {0.5, 1.0, 2.0, 3.0, 0.7};
    rfx_test_rng r = {3};
    double *X = rfx_test_matrix(&r, n, d, -2.0, 2.0);
    double *Z1 = malloc(n * D * sizeof *Z1), *Z2 = malloc(n * D * sizeof *Z2);
    for (int form = 0; form < 2; form++) {
        for (int ard = 0; ard < 2; ard++) {
            size_t calls = 0;
            rfx_features *f = make_custom(normal_sampler, &calls, d, D, (rfx_form)form,
                                          ard ? ls : NULL, 1.3, 42);
            rfx_features_params p = rfx_features_params_default();
            p.n_features = D;
            p.form = (rfx_form)form;
            p.length_scale = 1.3;
            p.length_scales = ard ? ls : NULL;
            p.seed = 42;
            rfx_features *g = NULL;
            CHECK_OK(rfx_features_create(&p, d, &g));
            if (!f || !g) continue;
            CHECK(calls == f->F);
            CHECK(memcmp(f->W, g->W, f->F * d * sizeof *f->W) == 0);
            CHECK(memcmp(f->b, g->b, f->F * sizeof *f->b) == 0);
            CHECK_OK(rfx_features_transform(f, rfx_cmat_of(X, n, d), rfx_mat_of(Z1, n, D)));
            CHECK_OK(rfx_features_transform(g, rfx_cmat_of(X, n, d), rfx_mat_of(Z2, n, D)));
            CHECK(memcmp(Z1, Z2, n * D * sizeof *Z1) == 0);
            rfx_features_params q = rfx_features_get_params(f);
            CHECK(q.kernel == RFX_KERNEL_CUSTOM && q.spectral == normal_sampler &&
                  q.spectral_user == &calls);
            CHECK(strcmp(rfx_kernel_name(q.kernel), "custom") == 0);
            rfx_features *h = make_custom(normal_sampler, NULL, d, 2 * D, (rfx_form)form,
                                          ard ? ls : NULL, 1.3, 42);
            if (h) CHECK(memcmp(f->W, h->W, f->F * d * sizeof *f->W) == 0);
            rfx_features_free(h);
            rfx_features_free(f);
            rfx_features_free(g);
        }
    }
    rfx_kernel k;
    CHECK_OK(rfx_kernel_from_name("custom", &k));
    CHECK(k == RFX_KERNEL_CUSTOM);
    free(X);
    free(Z1);
    free(Z2);
}

/* ---- the Cauchy density: the Laplacian kernel ----------------------------- */

/* The mean over S seeds of z(x).z(y) for pairs at L1 distances t = 0.5, 1,
 * 2 (in units of l) is exp(-t) within 4.5 standard errors, in both forms;
 * and on 80 points the Gram error of the custom map is within [0.8, 1.25]
 * of the built-in Laplacian map's (the median ratio over 10 seeds, D =
 * 1024): the same law, drawn otherwise. */
static void test_cauchy_sampler(void)
{
    const size_t d = 3, D = 64;
    const double l = 1.5, ts[3] = {0.5, 1.0, 2.0};
    const int S = 600;
    for (int form = 0; form < 2; form++) {
        double sum[3] = {0}, sum2[3] = {0};
        for (int s = 0; s < S; s++) {
            rfx_features *f = make_custom(cauchy_sampler, NULL, d, D, (rfx_form)form, NULL, l,
                                          100 + (uint64_t)s);
            if (!f) return;
            for (int t = 0; t < 3; t++) {
                /* y - x along (1, -2, 1) / 4 scaled to L1 length ts[t] l */
                double X[6] = {0.3, -0.1, 0.2, 0, 0, 0}, Z[2 * 64];
                const double u[3] = {0.25, -0.5, 0.25};
                for (size_t c = 0; c < d; c++) X[3 + c] = X[c] + ts[t] * l * u[c];
                CHECK_OK(rfx_features_transform(f, rfx_cmat_of(X, 2, d), rfx_mat_of(Z, 2, D)));
                double dot = 0;
                for (size_t k = 0; k < D; k++) dot += Z[k] * Z[D + k];
                sum[t] += dot;
                sum2[t] += dot * dot;
            }
            rfx_features_free(f);
        }
        for (int t = 0; t < 3; t++) {
            double m = sum[t] / S, se = sqrt((sum2[t] / S - m * m) / (S - 1)), k = exp(-ts[t]);
            printf("cauchy sampler %-8s t=%.1f: mean %.5f, laplacian kernel %.5f (%+.1f se)\n",
                   rfx_form_name((rfx_form)form), ts[t], m, k, (m - k) / se);
            CHECK_MSG(fabs(m - k) < 4.5 * se, "t = %.1f: mean %.5f, kernel %.5f, se %.5f", ts[t],
                      m, k, se);
        }
    }
    /* against the built-in Laplacian map and the exact kernel */
    const size_t n = 80, DD = 1024;
    rfx_test_rng r = {9};
    double *X = rfx_test_matrix(&r, n, d, -1.0, 1.0), *K = malloc(n * n * sizeof *K);
    double *Z = malloc(n * DD * sizeof *Z), ratio[10];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double s = 0;
            for (size_t c = 0; c < d; c++) s += fabs(X[i * d + c] - X[j * d + c]);
            K[i * n + j] = exp(-s / l);
        }
    for (int s = 0; s < 10; s++) {
        double e[2];
        for (int builtin = 0; builtin < 2; builtin++) {
            rfx_features *f;
            if (builtin) {
                rfx_features_params p = rfx_features_params_default();
                p.kernel = RFX_KERNEL_LAPLACIAN;
                p.n_features = DD;
                p.length_scale = l;
                p.seed = (uint64_t)s;
                f = NULL;
                CHECK_OK(rfx_features_create(&p, d, &f));
            } else {
                f = make_custom(cauchy_sampler, NULL, d, DD, RFX_FORM_COS_BIAS, NULL, l,
                                (uint64_t)s);
            }
            if (!f) return;
            CHECK_OK(rfx_features_transform(f, rfx_cmat_of(X, n, d), rfx_mat_of(Z, n, DD)));
            double num = 0, den = 0;
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++) {
                    double g = 0;
                    for (size_t k = 0; k < DD; k++) g += Z[i * DD + k] * Z[j * DD + k];
                    num += (g - K[i * n + j]) * (g - K[i * n + j]);
                    den += K[i * n + j] * K[i * n + j];
                }
            e[builtin] = sqrt(num / den);
            rfx_features_free(f);
        }
        ratio[s] = e[0] / e[1];
    }
    for (int a = 1; a < 10; a++) /* insertion sort */
        for (int b = a; b > 0 && ratio[b - 1] > ratio[b]; b--) {
            double tmp = ratio[b];
            ratio[b] = ratio[b - 1];
            ratio[b - 1] = tmp;
        }
    double med = 0.5 * (ratio[4] + ratio[5]);
    printf("cauchy sampler against the laplacian map: median error ratio %.3f\n", med);
    CHECK_MSG(med > 0.8 && med < 1.25, "median error ratio %.3f", med);
    free(X);
    free(K);
    free(Z);
}

/* ---- errors --------------------------------------------------------------- */

static void expect_create_fails(const rfx_features_params *p, size_t d, rfx_status want,
                                const char *needle)
{
    rfx_features *f = (rfx_features *)&f;
    rfx_features *const sentinel = f;
    CHECK_STATUS(rfx_features_create(p, d, &f), want);
    CHECK_MSG(strstr(rfx_last_error(), needle) != NULL, "message '%s' lacks '%s'",
              rfx_last_error(), needle);
    CHECK(f == sentinel);
}

/* The sampler's status comes back with its message after "features.
 * spectral: frequency j: "; without a message, "the sampler failed"; a
 * status that is not an rfx_status is RFX_EINVAL; values that are not
 * finite, or left unset, are RFX_ENUMERIC naming j and the coordinate. */
static void test_sampler_errors(void)
{
    rfx_features_params p = rfx_features_params_default();
    p.kernel = RFX_KERNEL_CUSTOM;
    p.spectral = failing_sampler;
    p.n_features = 20;
    failing u = {7, RFX_EINVAL, 0, 0, 0, 0};
    p.spectral_user = &u;
    expect_create_fails(&p, 4, RFX_EINVAL, "features.spectral: frequency 7: my density cannot "
                                           "draw here");
    u.status = RFX_ENOMEM;
    expect_create_fails(&p, 4, RFX_ENOMEM, "my density cannot draw here");
    u.quiet = 1;
    u.status = RFX_ENUMERIC;
    expect_create_fails(&p, 4, RFX_ENUMERIC, "features.spectral: frequency 7: the sampler failed");
    u.status = (rfx_status)99;
    expect_create_fails(&p, 4, RFX_EINVAL, "returned 99, not an rfx_status");
    u.quiet = 0;
    u.use_bad = 1;
    u.bad_value = NAN;
    expect_create_fails(&p, 4, RFX_ENUMERIC, "frequency 7, coordinate 1");
    u.bad_value = INFINITY;
    expect_create_fails(&p, 4, RFX_ENUMERIC, "frequency 7, coordinate 1");
    u.use_bad = 0;
    u.skip = 1;
    expect_create_fails(&p, 4, RFX_ENUMERIC, "frequency 7, coordinate 2");
    u.at = 1000; /* never reached: a valid map */
    rfx_features *f = NULL;
    CHECK_OK(rfx_features_create(&p, 4, &f));
    rfx_features_free(f);
}

/* The fields that do not fit a custom kernel, each named; and the exact
 * kernels, which rfx does not know for it. */
static void test_parameter_errors(void)
{
    rfx_features_params p = rfx_features_params_default();
    p.kernel = RFX_KERNEL_CUSTOM;
    expect_create_fails(&p, 4, RFX_EINVAL, "features.spectral: the custom kernel");
    p.kernel = RFX_KERNEL_GAUSSIAN;
    p.spectral = normal_sampler;
    expect_create_fails(&p, 4, RFX_EINVAL, "features.spectral: a sampler is given with the "
                                           "gaussian kernel");
    p.kernel = RFX_KERNEL_CUSTOM;
    p.weights = RFX_WEIGHTS_NORMAL;
    expect_create_fails(&p, 4, RFX_EINVAL, "features.weights: the custom kernel");
    p.weights = RFX_WEIGHTS_KERNEL;
    p.sparsity = 2;
    expect_create_fails(&p, 4, RFX_EINVAL, "features.sparsity: the custom kernel");
    p.sparsity = 0;
    const rfx_structure others[4] = {RFX_STRUCTURE_ORTHOGONAL, RFX_STRUCTURE_SORF,
                                     RFX_STRUCTURE_FASTFOOD, RFX_STRUCTURE_HALTON};
    for (int s = 0; s < 4; s++) {
        p.structure = others[s];
        expect_create_fails(&p, 4, RFX_EINVAL, "features.structure: the custom kernel");
    }
    p.structure = RFX_STRUCTURE_IID;
    p.gamma = 0.5;
    expect_create_fails(&p, 4, RFX_EINVAL, "features.gamma");
    p.gamma = 0;
    p.kernel = (rfx_kernel)5;
    expect_create_fails(&p, 4, RFX_EINVAL, "features.kernel: 5 is not an rfx_kernel");
    p.kernel = RFX_KERNEL_CUSTOM;

    rfx_features *f = NULL;
    CHECK_OK(rfx_features_create(&p, 4, &f));
    if (f) {
        double x[4] = {0}, k = -1;
        CHECK_STATUS(rfx_features_exact_kernel(f, rfx_cmat_of(x, 1, 4), rfx_cmat_of(x, 1, 4),
                                               rfx_mat_of(&k, 1, 1)), RFX_EINVAL);
        CHECK(strstr(rfx_last_error(), "custom kernel"));
        CHECK(k == -1);
    }
    rfx_features_free(f);
    rfx_kern *kern = NULL;
    CHECK_STATUS(rfx_kern_shift(RFX_KERNEL_CUSTOM, 1.5, 1.0, NULL, 0, &kern), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "custom kernel"));
    CHECK(kern == NULL);
    /* the streams' own checks */
    rfx_rng rng;
    rfx__rng_init(&rng.state, 1, 0, 0);
    CHECK(isnan(rfx_rng_gamma(&rng, 0.0)) && isnan(rfx_rng_gamma(&rng, -1.0)));
    CHECK(isnan(rfx_rng_gamma(&rng, INFINITY)) && isnan(rfx_rng_gamma(&rng, NAN)));
    double g = rfx_rng_gamma(&rng, 2.0), uu = rfx_rng_uniform(&rng);
    CHECK(g > 0 && uu > 0 && uu < 1);
}

/* ---- model files ---------------------------------------------------------- */

/* A ridge model on a custom map: the file (format version 3) keeps W; the
 * loaded map has the custom kernel, no sampler, and the same predictions
 * bit for bit. The same file with a version 2 header is corrupt. */
static void test_model_file(void)
{
    const size_t d = 3, n = 60, D = 48;
    rfx_test_rng r = {5};
    double *X = rfx_test_matrix(&r, n, d, -1.0, 1.0), y[60], p1[60], p2[60];
    for (size_t i = 0; i < n; i++) y[i] = sin(3 * X[i * d]) + X[i * d + 2];
    rfx_features *f = make_custom(cauchy_sampler, NULL, d, D, RFX_FORM_COS_SIN, NULL, 0.8, 3);
    if (!f) return;
    rfx_ridge_params rp = rfx_ridge_params_default();
    rfx_model *m = NULL, *m2 = NULL;
    CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(y, n, 1), &rp, &m));
    rfx_features_free(f);
    if (!m) return;
    void *buf = NULL;
    size_t len = 0;
    CHECK_OK(rfx_model_save_buffer(m, &buf, &len));
    if (buf) {
        unsigned char *b = buf;
        CHECK(b[8] == 3 && b[9] == 0);
        CHECK_OK(rfx_model_load_buffer(buf, len, &m2));
    }
    if (m2) {
        const rfx_features *g = rfx_model_features(m2);
        rfx_features_params q = rfx_features_get_params(g);
        CHECK(q.kernel == RFX_KERNEL_CUSTOM && q.spectral == NULL && q.spectral_user == NULL);
        CHECK_OK(rfx_model_predict(m, rfx_cmat_of(X, n, d), rfx_mat_of(p1, n, 1), rfx_mat_none()));
        CHECK_OK(rfx_model_predict(m2, rfx_cmat_of(X, n, d), rfx_mat_of(p2, n, 1),
                                   rfx_mat_none()));
        CHECK(memcmp(p1, p2, sizeof p1) == 0);
        /* the loaded map cannot make a new one: it has no sampler */
        rfx_features *h = (rfx_features *)&r;
        CHECK_STATUS(rfx_features_create(&q, d, &h), RFX_EINVAL);
        CHECK(strstr(rfx_last_error(), "features.spectral"));
        CHECK(h == (rfx_features *)&r);
    }
    rfx_model_free(m2);
    if (buf) {
        /* version 2 header: its CRC over bytes 0..27 recomputed */
        unsigned char *b = malloc(len);
        memcpy(b, buf, len);
        b[8] = 2;
        uint32_t crc = rfx__crc_of(b, 28);
        for (int k = 0; k < 4; k++) b[28 + k] = (unsigned char)(crc >> (8 * k));
        rfx_model *m3 = NULL;
        CHECK_STATUS(rfx_model_load_buffer(b, len, &m3), RFX_EFORMAT);
        CHECK(strstr(rfx_last_error(), "the custom kernel in a version 2 file"));
        CHECK(m3 == NULL);
        free(b);
    }
    rfx_buffer_free(buf);
    rfx_model_free(m);
    free(X);
}

/* ---- the built-in densities, and sums and products of kernels ----------- */

typedef struct builtin {
    rfx_kernel kernel;
    double nu;
} builtin;

static rfx_status builtin_sampler(void *user, rfx_rng *rng, size_t j, size_t d, double *w)
{
    (void)j;
    const builtin *b = user;
    return rfx_spectral_draw(b->kernel, b->nu, rng, d, w);
}

/* rfx_spectral_draw is the density rfx_features_create samples: a sampler
 * of it gives each built-in map's W and b bit for bit. */
static void test_builtin_draws(void)
{
    const size_t d = 5, D = 64;
    const rfx_kernel K[4] = {RFX_KERNEL_GAUSSIAN, RFX_KERNEL_LAPLACIAN, RFX_KERNEL_CAUCHY,
                             RFX_KERNEL_MATERN};
    for (int k = 0; k < 4; k++) {
        builtin b = {K[k], 2.5};
        rfx_features *c = make_custom(builtin_sampler, &b, d, D, RFX_FORM_COS_BIAS, NULL, 0.7, 9);
        rfx_features_params p = rfx_features_params_default();
        p.kernel = K[k];
        p.nu = 2.5;
        p.n_features = D;
        p.length_scale = 0.7;
        p.seed = 9;
        rfx_features *f = NULL;
        CHECK_OK(rfx_features_create(&p, d, &f));
        rfx_cmat A = rfx_features_frequencies(c), B = rfx_features_frequencies(f);
        CHECK_MSG(A.rows == B.rows && memcmp(A.data, B.data, A.rows * d * sizeof(double)) == 0,
                  "kernel %s: the sampler's W differs from the built-in map's",
                  rfx_kernel_name(K[k]));
        CHECK(memcmp(rfx_features_phases(c), rfx_features_phases(f), A.rows * sizeof(double)) == 0);
        rfx_features_free(c);
        rfx_features_free(f);
    }
    double w[3];
    CHECK_STATUS(rfx_spectral_draw(RFX_KERNEL_CUSTOM, 1.5, NULL, 3, w), RFX_EINVAL);
}

/* The relative Frobenius error of Z Z^T against the exact Gram matrix. */
static double gram_error(const rfx_features *f, const rfx_kern *k, const double *X, size_t n,
                         size_t d)
{
    const size_t D = rfx_features_output_dim(f);
    double *Z = malloc(n * D * sizeof *Z), *G = malloc(n * n * sizeof *G);
    CHECK_OK(rfx_features_transform(f, rfx_cmat_of(X, n, d), rfx_mat_of(Z, n, D)));
    CHECK_OK(rfx_kern_gram_sym(k, rfx_cmat_of(X, n, d), rfx_mat_of(G, n, n), 1));
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double z = 0;
            for (size_t c = 0; c < D; c++) z += Z[i * D + c] * Z[j * D + c];
            num += (z - G[i * n + j]) * (z - G[i * n + j]);
            den += G[i * n + j] * G[i * n + j];
        }
    free(Z);
    free(G);
    return sqrt(num / den);
}

/* Sums and products of kernels through rfx_spectral_combined: the map's Z
 * Z^T approaches the exact weighted mean (sum) or product of the terms'
 * kernels (rfx_kern_shift, _sum, _scale, _product), at the Monte Carlo rate:
 * 16 times the features, about a quarter of the error. Bad terms are
 * refused by name. */
static void test_combinations(void)
{
    const size_t n = 60, d = 3;
    double X[180];
    unsigned long long s = 12345;
    for (size_t i = 0; i < n * d; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        X[i] = 2.0 * ((double)(s >> 11) / 9007199254740992.0) - 1.0;
    }
    const rfx_spectral_term terms[3] = {
        {RFX_KERNEL_GAUSSIAN, 0, 0.5, 1.0},
        {RFX_KERNEL_LAPLACIAN, 0, 2.0, 3.0},
        {RFX_KERNEL_MATERN, 1.5, 1.0, 0.5},
    };
    for (int product = 0; product < 2; product++) {
        rfx_spectral_combination c = {product, 3, terms};
        CHECK_OK(rfx_spectral_combination_check(&c));
        /* the exact kernel */
        rfx_kern *k = NULL, *acc = NULL;
        double total = 0;
        for (int i = 0; i < 3; i++) {
            rfx_kern *t = NULL, *st = NULL, *nx = NULL;
            CHECK_OK(rfx_kern_shift(terms[i].kernel, terms[i].nu, terms[i].length_scale, NULL, d, &t));
            if (product) {
                if (acc) CHECK_OK(rfx_kern_product(acc, t, &nx));
            } else {
                CHECK_OK(rfx_kern_scale(terms[i].weight, t, &st));
                total += terms[i].weight;
                if (acc) CHECK_OK(rfx_kern_sum(acc, st, &nx));
            }
            rfx_kern *keep = acc ? nx : (product ? t : st);
            if (acc) rfx_kern_free(acc);
            if (keep != t) rfx_kern_free(t);
            if (keep != st) rfx_kern_free(st);
            acc = keep;
        }
        if (product) {
            k = acc;
        } else {
            CHECK_OK(rfx_kern_scale(1.0 / total, acc, &k));
            rfx_kern_free(acc);
        }
        double err[2];
        const size_t Ds[2] = {512, 8192};
        for (int q = 0; q < 2; q++) {
            double e = 0;
            for (uint64_t seed = 0; seed < 4; seed++) {
                rfx_features *f = make_custom(rfx_spectral_combined, &c, d, Ds[q],
                                              RFX_FORM_COS_SIN, NULL, 1.0, seed);
                e += gram_error(f, k, X, n, d) / 4;
                rfx_features_free(f);
            }
            err[q] = e;
        }
        printf("  %s of gaussian, laplacian and matern: Gram error %.4f at D = 512, %.4f at "
               "D = 8192 (ratio %.2f)\n", product ? "product" : "weighted sum", err[0], err[1],
               err[0] / err[1]);
        CHECK(err[1] < (product ? 0.1 : 0.04));
        CHECK(err[0] / err[1] > 2.5 && err[0] / err[1] < 6.5);
        rfx_kern_free(k);
    }
    rfx_spectral_term bad[2] = {{RFX_KERNEL_GAUSSIAN, 0, 1.0, 1.0}, {RFX_KERNEL_CUSTOM, 0, 1.0, 1.0}};
    rfx_spectral_combination c = {0, 2, bad};
    CHECK_STATUS(rfx_spectral_combination_check(&c), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "terms[1].kernel") != NULL);
    bad[1].kernel = RFX_KERNEL_LAPLACIAN;
    bad[1].length_scale = 0;
    CHECK_STATUS(rfx_spectral_combination_check(&c), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "terms[1].length_scale") != NULL);
    bad[1].length_scale = 1;
    bad[0].weight = bad[1].weight = 0;
    CHECK_STATUS(rfx_spectral_combination_check(&c), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "every weight is 0") != NULL);
    c.product = 1; /* weights do not matter for a product */
    CHECK_OK(rfx_spectral_combination_check(&c));
    c.n_terms = 0;
    CHECK_STATUS(rfx_spectral_combination_check(&c), RFX_EINVAL);
}

int main(void)
{
    RFX_TEST_RUN(test_gaussian_sampler);
    RFX_TEST_RUN(test_cauchy_sampler);
    RFX_TEST_RUN(test_sampler_errors);
    RFX_TEST_RUN(test_parameter_errors);
    RFX_TEST_RUN(test_model_file);
    RFX_TEST_RUN(test_builtin_draws);
    RFX_TEST_RUN(test_combinations);
    return rfx_test_finish("test_spectral");
}
