/* SPDX-License-Identifier: BSD-3-Clause */
/* The phase-free form z_j(x) = phi(w_j.x): the frequencies of the cos-bias
 * map bit for bit, the features by definition, exact oddness, the exact
 * kernels of relu (arc-cosine, order 1), sign (1 - 2 theta / pi) and 1-D
 * tanh (quadrature), model files, and the consumers that take or refuse
 * the form. */
#include "internal.h"
#include "core/records.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double PI = 3.141592653589793238463;

/* A sampler of d standard normals: the gaussian kernel's frequencies. */
static rfx_status normal_sampler(void *user, rfx_rng *rng, size_t j, size_t d, double *w)
{
    (void)user, (void)j;
    for (size_t i = 0; i < d; i++) w[i] = rfx_rng_normal(rng);
    return RFX_OK;
}

/* The phase-free map has the W of the cos-bias map of the same parameters
 * and seed, bit for bit, and b = 0; for i.i.d. dense and sparse maps, every
 * kernel, the custom kernel, every structure. */
static void test_frequencies(void)
{
    typedef struct wcase {
        const char *what;
        rfx_kernel kernel;
        rfx_weights weights;
        size_t sparsity;
        rfx_structure structure;
        size_t d;
    } wcase;
    const wcase cases[] = {
        {"iid gaussian", RFX_KERNEL_GAUSSIAN, RFX_WEIGHTS_KERNEL, 0, RFX_STRUCTURE_IID, 5},
        {"iid matern", RFX_KERNEL_MATERN, RFX_WEIGHTS_KERNEL, 0, RFX_STRUCTURE_IID, 5},
        {"iid laplacian", RFX_KERNEL_LAPLACIAN, RFX_WEIGHTS_KERNEL, 0, RFX_STRUCTURE_IID, 5},
        {"sparse enumerated", RFX_KERNEL_GAUSSIAN, RFX_WEIGHTS_NORMAL, 2, RFX_STRUCTURE_IID, 6},
        {"sparse drawn", RFX_KERNEL_GAUSSIAN, RFX_WEIGHTS_UNIFORM, 3, RFX_STRUCTURE_IID, 12},
        {"custom", RFX_KERNEL_CUSTOM, RFX_WEIGHTS_KERNEL, 0, RFX_STRUCTURE_IID, 5},
        {"orthogonal", RFX_KERNEL_GAUSSIAN, RFX_WEIGHTS_KERNEL, 0, RFX_STRUCTURE_ORTHOGONAL, 5},
        {"sorf", RFX_KERNEL_GAUSSIAN, RFX_WEIGHTS_KERNEL, 0, RFX_STRUCTURE_SORF, 40},
        {"fastfood", RFX_KERNEL_MATERN, RFX_WEIGHTS_KERNEL, 0, RFX_STRUCTURE_FASTFOOD, 40},
        {"halton", RFX_KERNEL_GAUSSIAN, RFX_WEIGHTS_KERNEL, 0, RFX_STRUCTURE_HALTON, 5},
        {"halton matern", RFX_KERNEL_MATERN, RFX_WEIGHTS_KERNEL, 0, RFX_STRUCTURE_HALTON, 5},
    };
    const rfx_activation acts[] = {RFX_ACTIVATION_TANH, RFX_ACTIVATION_RELU};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        for (size_t a = 0; a < 2; a++) {
            rfx_features_params p = rfx_features_params_default();
            p.kernel = cases[c].kernel;
            p.nu = 2.5;
            p.weights = cases[c].weights;
            p.weight_scale = 0.8;
            p.sparsity = cases[c].sparsity;
            p.structure = cases[c].structure;
            p.activation = acts[a];
            p.n_features = 150;
            p.seed = 17;
            p.length_scale = 1.3;
            p.n_threads = 1;
            if (p.kernel == RFX_KERNEL_CUSTOM) p.spectral = normal_sampler;
            rfx_features *fb = NULL, *fp = NULL;
            CHECK_OK(rfx_features_create(&p, cases[c].d, &fb));
            p.form = RFX_FORM_PHASE_FREE;
            CHECK_OK(rfx_features_create(&p, cases[c].d, &fp));
            if (!fb || !fp) {
                rfx_features_free(fb);
                rfx_features_free(fp);
                continue;
            }
            CHECK(rfx_features_output_dim(fp) == 150);
            rfx_cmat Wb = rfx_features_frequencies(fb), Wp = rfx_features_frequencies(fp);
            CHECK(Wb.rows == 150 && Wp.rows == 150);
            CHECK_MSG(memcmp(Wb.data, Wp.data, 150 * cases[c].d * sizeof(double)) == 0,
                      "%s: the frequencies differ from the cos-bias map's", cases[c].what);
            const double *bb = rfx_features_phases(fb), *bp = rfx_features_phases(fp);
            size_t zero = 0, nonzero = 0;
            for (size_t j = 0; j < 150; j++) {
                zero += bp[j] == 0.0;
                nonzero += bb[j] > 0.0 && bb[j] < 2 * PI;
            }
            CHECK_MSG(zero == 150, "%s: %zu of 150 phases are 0", cases[c].what, zero);
            CHECK(nonzero == 150);
            CHECK(rfx_features_get_params(fp).form == RFX_FORM_PHASE_FREE);
            rfx_features_free(fb);
            rfx_features_free(fp);
        }
    }
}

static double activation(rfx_activation a, double t)
{
    switch (a) {
    case RFX_ACTIVATION_SIN: return sin(t);
    case RFX_ACTIVATION_TANH: return tanh(t);
    case RFX_ACTIVATION_SIGMOID: return 1 / (1 + exp(-t));
    case RFX_ACTIVATION_RELU: return t > 0 ? t : 0;
    case RFX_ACTIVATION_SIGN: return t > 0 ? 1 : t < 0 ? -1 : 0;
    case RFX_ACTIVATION_COS: break;
    }
    return cos(t);
}

/* z_j(x) = phi(w_j.x), scale 1, in double and float, on the fused-size
 * (d = 5), GEMM (d = 80) and fast Walsh-Hadamard (SORF, d = 40) paths;
 * z(-x) = -z(x) bit for bit for the odd activations. */
static void test_transform(void)
{
    const rfx_activation acts[] = {RFX_ACTIVATION_SIN, RFX_ACTIVATION_TANH,
                                   RFX_ACTIVATION_SIGMOID, RFX_ACTIVATION_RELU,
                                   RFX_ACTIVATION_SIGN};
    const size_t dims[] = {5, 80, 40};
    const size_t n = 70, D = 96;
    rfx_test_rng r = {31};
    for (size_t k = 0; k < 3; k++) {
        const size_t d = dims[k];
        double *X = rfx_test_matrix(&r, n, d, -1.5, 1.5), *Xn = malloc(n * d * sizeof *Xn);
        double *Z = malloc(n * D * sizeof *Z), *Zn = malloc(n * D * sizeof *Zn);
        float *X32 = malloc(n * d * sizeof *X32), *Xn32 = malloc(n * d * sizeof *Xn32);
        float *Z32 = malloc(n * D * sizeof *Z32), *Zn32 = malloc(n * D * sizeof *Zn32);
        for (size_t i = 0; i < n * d; i++) {
            Xn[i] = -X[i];
            X32[i] = (float)X[i];
            Xn32[i] = -X32[i];
        }
        for (size_t a = 0; a < sizeof acts / sizeof *acts; a++) {
            rfx_features_params p = rfx_features_params_default();
            p.form = RFX_FORM_PHASE_FREE;
            p.activation = acts[a];
            p.n_features = D;
            p.seed = 5;
            p.length_scale = 2.0;
            p.n_threads = 1;
            if (k == 2) p.structure = RFX_STRUCTURE_SORF;
            rfx_features *f = NULL;
            CHECK_OK(rfx_features_create(&p, d, &f));
            if (!f) continue;
            CHECK_OK(rfx_features_transform(f, rfx_cmat_of(X, n, d), rfx_mat_of(Z, n, D)));
            CHECK_OK(rfx_features_transform(f, rfx_cmat_of(Xn, n, d), rfx_mat_of(Zn, n, D)));
            CHECK_OK(rfx_features_transform_f32(f, rfx_cmatf_of(X32, n, d),
                                                rfx_matf_of(Z32, n, D)));
            CHECK_OK(rfx_features_transform_f32(f, rfx_cmatf_of(Xn32, n, d),
                                                rfx_matf_of(Zn32, n, D)));
            rfx_cmat W = rfx_features_frequencies(f);
            double err = 0, err32 = 0;
            size_t odd_fail = 0, odd32_fail = 0, nonzero = 0;
            for (size_t i = 0; i < n; i++) {
                for (size_t j = 0; j < D; j++) {
                    double t = 0;
                    for (size_t c = 0; c < d; c++) t += W.data[j * d + c] * X[i * d + c];
                    double v = activation(acts[a], t);
                    /* sign flips only where t is within rounding of 0 */
                    if (acts[a] != RFX_ACTIVATION_SIGN || fabs(t) > 1e-12) {
                        err = fmax(err, fabs(Z[i * D + j] - v));
                        err32 = fmax(err32, fabs(Z32[i * D + j] - v) / (1 + fabs(t)));
                    }
                    odd_fail += Zn[i * D + j] != -Z[i * D + j];
                    odd32_fail += Zn32[i * D + j] != -Z32[i * D + j];
                    nonzero += Z[i * D + j] != 0;
                }
            }
            const char *name = rfx_activation_name(acts[a]);
            CHECK_MSG(err < 1e-12, "%s, d = %zu: |z - phi(w.x)| = %.3g", name, d, err);
            CHECK_MSG(err32 < 1e-5, "%s, d = %zu (float): %.3g", name, d, err32);
            CHECK(nonzero > n * D / 3);
            if (acts[a] == RFX_ACTIVATION_SIN || acts[a] == RFX_ACTIVATION_TANH ||
                acts[a] == RFX_ACTIVATION_SIGN) {
                CHECK_MSG(odd_fail == 0, "%s, d = %zu: z(-x) != -z(x) in %zu of %zu", name, d,
                          odd_fail, n * D);
                CHECK_MSG(odd32_fail == 0, "%s, d = %zu (float): z(-x) != -z(x) in %zu", name,
                          d, odd32_fail);
            }
            if (k == 0) printf("  %-8s |z - phi(w.x)| = %.2g (float %.2g)\n", name, err, err32);
            rfx_features_free(f);
        }
        free(X);
        free(Xn);
        free(Z);
        free(Zn);
        free(X32);
        free(Xn32);
        free(Z32);
        free(Zn32);
    }
}

/* Mean and standard error over the D features of c z_j(x) z_j(y). */
static void feature_mean(const rfx_features *f, const double *x, const double *y, size_t d,
                         double c, double *mean, double *se)
{
    const size_t D = rfx_features_output_dim(f);
    double *Z = malloc(2 * D * sizeof *Z), xy[2 * 64];
    memcpy(xy, x, d * sizeof *x);
    memcpy(xy + d, y, d * sizeof *y);
    CHECK_OK(rfx_features_transform(f, rfx_cmat_of(xy, 2, d), rfx_mat_of(Z, 2, D)));
    double s = 0, s2 = 0;
    for (size_t j = 0; j < D; j++) s += c * Z[j] * Z[D + j];
    *mean = s / (double)D;
    for (size_t j = 0; j < D; j++) {
        double e = c * Z[j] * Z[D + j] - *mean;
        s2 += e * e;
    }
    *se = sqrt(s2 / (double)(D - 1) / (double)D);
    free(Z);
}

/* relu features with N(0, s^2 I) weights: (2 / D) E[z(x).z(y)] is the
 * arc-cosine kernel of order 1 and bias 0 (Cho & Saul 2009), since
 * E relu(u) relu(v) = s^2 |x| |y| J_1(theta) / (2 pi). sign features:
 * E sign(w.x) sign(w.y) = 1 - 2 theta / pi (Grothendieck's identity). The
 * Monte Carlo means over D = 200000 features are within 4 standard errors. */
static void test_arccos(void)
{
    const size_t d = 3, D = 200000;
    const double s = 0.7;
    const double pts[3][2][3] = {{{0.5, -1.0, 0.8}, {1.2, 0.3, -0.4}},
                                 {{0.9, 0.2, 0.1}, {0.9, 0.2, 0.1}},
                                 {{-0.3, 0.7, 1.5}, {0.2, 0.6, 1.1}}};
    rfx_kern *k1 = NULL;
    CHECK_OK(rfx_kern_arccos(1, s, 0, &k1));
    for (int act = 0; act < 2; act++) {
        rfx_features_params p = rfx_features_params_default();
        p.form = RFX_FORM_PHASE_FREE;
        p.activation = act ? RFX_ACTIVATION_SIGN : RFX_ACTIVATION_RELU;
        p.weights = RFX_WEIGHTS_NORMAL;
        p.weight_scale = s;
        p.n_features = D;
        p.seed = 2026;
        p.n_threads = 1;
        rfx_features *f = NULL;
        CHECK_OK(rfx_features_create(&p, d, &f));
        if (!f) continue;
        for (size_t c = 0; c < 3; c++) {
            const double *x = pts[c][0], *y = pts[c][1];
            double mean, se, exact;
            if (act == 0) {
                feature_mean(f, x, y, d, 2.0, &mean, &se);
                exact = rfx_kern_eval(k1, x, y, d);
            } else {
                feature_mean(f, x, y, d, 1.0, &mean, &se);
                double xy = 0, xx = 0, yy = 0;
                for (size_t i = 0; i < d; i++) {
                    xy += x[i] * y[i];
                    xx += x[i] * x[i];
                    yy += y[i] * y[i];
                }
                double cth = fmin(1.0, fmax(-1.0, xy / sqrt(xx * yy)));
                exact = 1 - 2 * acos(cth) / PI;
            }
            printf("  %s pair %zu: Monte Carlo %.6f, exact %.6f, error %.2g = %.2f se "
                   "(se %.2g)\n", act ? "sign" : "relu", c, mean, exact, mean - exact,
                   se > 0 ? (mean - exact) / se : 0.0, se);
            if (se > 0) CHECK_MSG(fabs(mean - exact) < 4 * se, "pair %zu: %g vs %g, se %g",
                                  c, mean, exact, se);
            else CHECK(mean == exact); /* sign features of x = y: all 1 */
        }
        rfx_features_free(f);
    }
    rfx_kern_free(k1);
}

/* 1-D tanh features with w ~ N(0, s^2): E tanh(w x) tanh(w y) by the
 * trapezoid rule on the normal density over [-12, 12], step 1e-3 (the
 * integrand is smooth and its tails below 1e-31: the rule converges
 * geometrically), against the Monte Carlo mean of D = 200000 features. */
static void test_tanh_quadrature(void)
{
    const size_t D = 200000;
    const double s = 1.3;
    const double pts[3][2] = {{0.8, -0.5}, {1.1, 1.1}, {0.3, 2.0}};
    rfx_features_params p = rfx_features_params_default();
    p.form = RFX_FORM_PHASE_FREE;
    p.activation = RFX_ACTIVATION_TANH;
    p.weights = RFX_WEIGHTS_NORMAL;
    p.weight_scale = s;
    p.n_features = D;
    p.seed = 99;
    p.n_threads = 1;
    rfx_features *f = NULL;
    CHECK_OK(rfx_features_create(&p, 1, &f));
    if (!f) return;
    for (size_t c = 0; c < 3; c++) {
        const double x = pts[c][0], y = pts[c][1], h = 1e-3;
        double q = 0;
        for (long i = -12000; i <= 12000; i++) {
            double t = (double)i * h, wgt = (i == -12000 || i == 12000) ? 0.5 : 1.0;
            q += wgt * tanh(s * t * x) * tanh(s * t * y) * exp(-0.5 * t * t);
        }
        q *= h / sqrt(2 * PI);
        double mean, se;
        feature_mean(f, &x, &y, 1, 1.0, &mean, &se);
        printf("  tanh (%.1f, %.1f): Monte Carlo %.6f, quadrature %.6f, error %.2g = %.2f se "
               "(se %.2g)\n", x, y, mean, q, mean - q, (mean - q) / se, se);
        CHECK_MSG(fabs(mean - q) < 4 * se, "(%g, %g): %g vs %g, se %g", x, y, mean, q, se);
    }
    rfx_features_free(f);
}

/* The names, and the form refused with cos (by the map, kernel PCA and the
 * exact kernel). */
static void test_refusals(void)
{
    rfx_form fo = RFX_FORM_COS_BIAS;
    CHECK_OK(rfx_form_from_name("phase-free", &fo));
    CHECK(fo == RFX_FORM_PHASE_FREE);
    CHECK(strcmp(rfx_form_name(RFX_FORM_PHASE_FREE), "phase-free") == 0);
    CHECK_STATUS(rfx_form_from_name("phasefree", &fo), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "cos-bias, cos-sin or phase-free") != NULL);
    rfx_features_params p = rfx_features_params_default();
    p.form = RFX_FORM_PHASE_FREE;
    rfx_features *f = NULL;
    CHECK_STATUS(rfx_features_create(&p, 3, &f), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "features.form") != NULL);
    CHECK(strstr(rfx_last_error(), "shift-invariant") != NULL);
    CHECK(f == NULL);
    p.form = (rfx_form)3;
    CHECK_STATUS(rfx_features_create(&p, 3, &f), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "not an rfx_form") != NULL);
    /* an odd D is fine: one frequency per column */
    p.form = RFX_FORM_PHASE_FREE;
    p.activation = RFX_ACTIVATION_TANH;
    p.n_features = 7;
    CHECK_OK(rfx_features_create(&p, 3, &f));
    double x[3] = {0.1, 0.2, 0.3}, k;
    CHECK_STATUS(rfx_features_exact_kernel(f, rfx_cmat_of(x, 1, 3), rfx_cmat_of(x, 1, 3),
                                           rfx_mat_of(&k, 1, 1)),
                 RFX_EINVAL);
    rfx_features_free(f);
    rfx_kpca_params kp = rfx_kpca_params_default();
    kp.method = RFX_KPCA_METHOD_RANDOM_FEATURES;
    kp.form = RFX_FORM_PHASE_FREE;
    kp.n_features = 64;
    rfx_test_rng r = {3};
    double *X = rfx_test_matrix(&r, 20, 3, -1, 1);
    rfx_kpca *kpca = NULL;
    CHECK_STATUS(rfx_kpca_create(&kp, rfx_cmat_of(X, 20, 3), &kpca), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "kpca.form") != NULL);
    CHECK(kpca == NULL);
    free(X);
}

/* The record of tag in a model file's payload (after the 32-byte header),
 * or NULL. */
static unsigned char *find_record(unsigned char *file, size_t len, uint32_t tag)
{
    size_t at = 32;
    while (at + 16 <= len) {
        uint32_t t = rfx__get_le32(file + at), type = rfx__get_le32(file + at + 4);
        uint64_t count = rfx__get_le64(file + at + 8);
        size_t bytes = type == 4 || type == 6 ? (size_t)count : (size_t)count * 8;
        if (type == 5) bytes = (size_t)count * 4;
        if (t == tag) return file + at;
        at += 16 + (bytes + 7) / 8 * 8;
    }
    return NULL;
}

static void reseal(unsigned char *file, size_t len)
{
    rfx__put_le32(file + 24, rfx__crc_of(file + 32, len - 32));
    rfx__put_le32(file + 28, rfx__crc_of(file, 28));
}

/* A ridge model on phase-free tanh features: written as format version 4,
 * read back with the form and zero phases, predicting bit for bit; the
 * form in a version 3 file and a nonzero phase are corrupt. Structured
 * phase-free maps read back too. */
static void test_model_file(void)
{
    const size_t n = 200, d = 3, D = 60;
    rfx_test_rng r = {8};
    double *X = rfx_test_matrix(&r, n, d, -1, 1), *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) y[i] = tanh(X[i * d]) - 0.5 * X[i * d + 1] * X[i * d + 2];
    rfx_features_params p = rfx_features_params_default();
    p.form = RFX_FORM_PHASE_FREE;
    p.activation = RFX_ACTIVATION_TANH;
    p.weights = RFX_WEIGHTS_NORMAL;
    p.n_features = D;
    p.seed = 4;
    p.n_threads = 1;
    rfx_features *f = NULL;
    rfx_model *m = NULL, *back = NULL;
    CHECK_OK(rfx_features_create(&p, d, &f));
    rfx_ridge_params rp = rfx_ridge_params_default();
    rp.n_threads = 1;
    CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(y, n, 1), &rp, &m));
    void *buf = NULL;
    size_t len = 0;
    CHECK_OK(rfx_model_save_buffer(m, &buf, &len));
    if (!buf) goto done;
    unsigned char *b = buf;
    CHECK(rfx__get_le32(b + 8) == 4);
    CHECK_OK(rfx_model_load_buffer(buf, len, &back));
    if (back) {
        rfx_model_info info;
        CHECK_OK(rfx_model_get_info(back, &info));
        CHECK(info.features.form == RFX_FORM_PHASE_FREE);
        CHECK(info.features.activation == RFX_ACTIVATION_TANH);
        double p1[200], p2[200];
        CHECK_OK(rfx_model_predict(m, rfx_cmat_of(X, n, d), rfx_mat_of(p1, n, 1),
                                   rfx_mat_none()));
        CHECK_OK(rfx_model_predict(back, rfx_cmat_of(X, n, d), rfx_mat_of(p2, n, 1),
                                   rfx_mat_none()));
        CHECK(memcmp(p1, p2, sizeof p1) == 0);
        rfx_model_free(back);
        back = NULL;
    }
    /* the same bytes as version 3: the form is corrupt there */
    unsigned char *v3 = malloc(len);
    memcpy(v3, buf, len);
    rfx__put_le32(v3 + 8, 3);
    reseal(v3, len);
    CHECK_STATUS(rfx_model_load_buffer(v3, len, &back), RFX_EFORMAT);
    CHECK_MSG(strstr(rfx_last_error(), "phase-free form in a version 3 file") != NULL, "%s",
              rfx_last_error());
    /* a phase that is not 0 */
    memcpy(v3, buf, len);
    unsigned char *rec = find_record(v3, len, RFX__TAG_PHASES);
    CHECK(rec != NULL);
    if (rec) {
        rfx__put_le64(rec + 16 + 8 * 5, rfx__f64_bits(0.25));
        reseal(v3, len);
        CHECK_STATUS(rfx_model_load_buffer(v3, len, &back), RFX_EFORMAT);
        CHECK_MSG(strstr(rfx_last_error(), "'phases'[5] = 0.25 in the phase-free form") != NULL,
                  "%s", rfx_last_error());
    }
    CHECK(back == NULL);
    free(v3);
    rfx_buffer_free(buf);
    buf = NULL;
    /* structured maps: SORF is rebuilt from its seed when read */
    const rfx_structure structures[] = {RFX_STRUCTURE_ORTHOGONAL, RFX_STRUCTURE_SORF,
                                        RFX_STRUCTURE_FASTFOOD, RFX_STRUCTURE_HALTON};
    for (size_t k = 0; k < 4; k++) {
        rfx_features_params q = p;
        q.weights = RFX_WEIGHTS_KERNEL;
        q.structure = structures[k];
        rfx_features *g = NULL;
        rfx_model *a = NULL, *c = NULL;
        CHECK_OK(rfx_features_create(&q, d, &g));
        CHECK_OK(rfx_ridge_fit(g, rfx_cmat_of(X, n, d), rfx_cmat_of(y, n, 1), &rp, &a));
        if (a) CHECK_OK(rfx_model_save_buffer(a, &buf, &len));
        if (buf) CHECK_OK(rfx_model_load_buffer(buf, len, &c));
        if (c) {
            double p1[200], p2[200];
            CHECK_OK(rfx_model_predict(a, rfx_cmat_of(X, n, d), rfx_mat_of(p1, n, 1),
                                       rfx_mat_none()));
            CHECK_OK(rfx_model_predict(c, rfx_cmat_of(X, n, d), rfx_mat_of(p2, n, 1),
                                       rfx_mat_none()));
            CHECK_MSG(memcmp(p1, p2, sizeof p1) == 0, "%s: predictions differ after reading",
                      rfx_structure_name(structures[k]));
            CHECK(c->features->params.structure == structures[k]);
            CHECK(c->features->params.form == RFX_FORM_PHASE_FREE);
        }
        rfx_buffer_free(buf);
        buf = NULL;
        rfx_model_free(a);
        rfx_model_free(c);
        rfx_features_free(g);
    }
done:
    rfx_model_free(m);
    rfx_features_free(f);
    free(X);
    free(y);
}

/* The greedy fit with phase-free tanh candidates. One term of the model
 * family, y = 0.8 tanh(1.2 x1 - 0.5 x2) + 0.1, is recovered by the
 * Gauss-Newton refinement of w (b stays 0) to rounding, up to the sign
 * of (w, beta). On an odd target
 * with 6 terms every term keeps b = 0, the training error does not
 * increase, without refinement the first term is one of step 0's
 * candidates bit for bit, and the fitted function minus its intercept is
 * odd. The cos-sin form is refused. */
static void test_greedy(void)
{
    const size_t n = 300, d = 2, M = 32;
    rfx_test_rng r = {12};
    double *X = rfx_test_matrix(&r, n, d, -1.5, 1.5), *y = malloc(n * sizeof *y);
    double *Xn = malloc(n * d * sizeof *Xn);
    for (size_t i = 0; i < n * d; i++) Xn[i] = -X[i];
    rfx_greedy_params gp = rfx_greedy_params_default();
    gp.features.form = RFX_FORM_PHASE_FREE;
    gp.features.activation = RFX_ACTIVATION_TANH;
    gp.features.weights = RFX_WEIGHTS_NORMAL;
    gp.features.seed = 21;
    gp.n_candidates = M;
    gp.n_threads = 1;

    for (size_t i = 0; i < n; i++) y[i] = 0.8 * tanh(1.2 * X[i * d] - 0.5 * X[i * d + 1]) + 0.1;
    gp.n_terms = 1;
    gp.refine_steps = 10;
    rfx_model *m = NULL;
    double path[6];
    CHECK_OK(rfx_greedy_fit(rfx_cmat_of(X, n, d), y, &gp, &m, NULL, path));
    if (m) {
        const rfx_features *f = m->features;
        printf("  one term: w = (%.12f, %.12f), b = %g, beta = %.12f, c = %.12f, mse %.2g\n",
               f->W[0], f->W[1], f->b[0], m->W[0] * f->scale, m->intercept[0], path[0]);
        CHECK(f->b[0] == 0.0);
        const double sg = f->W[0] < 0 ? -1.0 : 1.0; /* (-w, -beta) is the same term */
        CHECK_NEAR(sg * f->W[0], 1.2, 1e-9);
        CHECK_NEAR(sg * f->W[1], -0.5, 1e-9);
        CHECK_NEAR(sg * m->W[0] * f->scale, 0.8, 1e-9);
        CHECK_NEAR(m->intercept[0], 0.1, 1e-9);
        CHECK(path[0] < 1e-18);
        rfx_model_free(m);
        m = NULL;
    }

    for (size_t i = 0; i < n; i++) {
        const double *x = X + i * d;
        y[i] = tanh(1.5 * x[0] - 0.7 * x[1]) + 0.5 * tanh(0.3 * x[0] + x[1]);
    }
    gp.n_terms = 6;
    for (int refine = 0; refine < 2; refine++) {
        gp.refine_steps = refine ? 5 : 0;
        CHECK_OK(rfx_greedy_fit(rfx_cmat_of(X, n, d), y, &gp, &m, NULL, path));
        if (!m) continue;
        const rfx_features *f = m->features;
        CHECK(f->params.form == RFX_FORM_PHASE_FREE);
        for (size_t k = 0; k < 6; k++) CHECK(f->b[k] == 0.0);
        for (size_t k = 1; k < 6; k++) CHECK(path[k] <= path[k - 1]);
        /* the first term against the candidates of step 0 */
        rfx_features_params cp = gp.features;
        cp.n_features = M;
        rfx_features *cand = NULL;
        CHECK_OK(rfx_features_create(&cp, d, &cand));
        size_t same = 0;
        for (size_t j = 0; cand && j < M; j++)
            same += memcmp(cand->W + j * d, f->W, d * sizeof(double)) == 0;
        CHECK_MSG(same == (refine ? 0u : 1u), "refine %d: the first term equals %zu candidates",
                  refine, same);
        rfx_features_free(cand);
        double *p1 = malloc(n * sizeof *p1), *p2 = malloc(n * sizeof *p2), odd = 0;
        CHECK_OK(rfx_model_predict(m, rfx_cmat_of(X, n, d), rfx_mat_of(p1, n, 1),
                                   rfx_mat_none()));
        CHECK_OK(rfx_model_predict(m, rfx_cmat_of(Xn, n, d), rfx_mat_of(p2, n, 1),
                                   rfx_mat_none()));
        for (size_t i = 0; i < n; i++)
            odd = fmax(odd, fabs(p1[i] + p2[i] - 2 * m->intercept[0]));
        CHECK_MSG(odd < 1e-12, "f(x) + f(-x) - 2 c = %.3g", odd);
        printf("  refine_steps %zu: training mse after 1 and 6 terms %.3g, %.3g\n",
               gp.refine_steps, path[0], path[5]);
        free(p1);
        free(p2);
        rfx_model_free(m);
        m = NULL;
    }
    gp.features.form = RFX_FORM_COS_SIN;
    CHECK_STATUS(rfx_greedy_fit(rfx_cmat_of(X, n, d), y, &gp, &m, NULL, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "features.form") != NULL);
    free(X);
    free(Xn);
    free(y);
}

/* Phase-free sin models: the exact Sobol indices take them (b = 0): under
 * inputs uniform on [-1, 1]^2 the mean is the intercept (the features are
 * odd) and the variance and first-order indices match Simpson's rule on a
 * 401 x 401 grid of the model's predictions. SRFE fits them, with b = 0
 * and odd predictions about the intercept, and refuses cos-sin. */
static void test_surrogates(void)
{
    const size_t n = 150, d = 2, D = 40, G = 401;
    rfx_test_rng r = {77};
    double *X = rfx_test_matrix(&r, n, d, -1, 1), *y = malloc(n * sizeof *y);
    double *Xn = malloc(n * d * sizeof *Xn);
    for (size_t i = 0; i < n; i++)
        y[i] = sin(2 * X[i * d]) + 0.3 * X[i * d + 1] + 0.5 * X[i * d] * X[i * d + 1] + 1.0;
    for (size_t i = 0; i < n * d; i++) Xn[i] = -X[i];
    rfx_features_params p = rfx_features_params_default();
    p.form = RFX_FORM_PHASE_FREE;
    p.activation = RFX_ACTIVATION_SIN;
    p.weights = RFX_WEIGHTS_NORMAL;
    p.weight_scale = 1.5;
    p.n_features = D;
    p.seed = 6;
    p.n_threads = 1;
    rfx_features *f = NULL;
    rfx_model *m = NULL;
    CHECK_OK(rfx_features_create(&p, d, &f));
    rfx_ridge_params rp = rfx_ridge_params_default();
    rp.n_threads = 1;
    CHECK_OK(rfx_ridge_fit(f, rfx_cmat_of(X, n, d), rfx_cmat_of(y, n, 1), &rp, &m));
    if (m) {
        const rfx_marginal mg[2] = {rfx_marginal_uniform(-1, 1), rfx_marginal_uniform(-1, 1)};
        double mean = NAN, var = NAN, first[2], total[2];
        CHECK_OK(rfx_sobol_model_exact(m, mg, d, &mean, &var, first, total, NULL));
        double *grid = malloc(G * G * d * sizeof *grid), *fv = malloc(G * G * sizeof *fv);
        double *wt = malloc(G * sizeof *wt), h = 2.0 / (double)(G - 1);
        for (size_t i = 0; i < G; i++) {
            wt[i] = (i == 0 || i == G - 1 ? 1.0 : i % 2 ? 4.0 : 2.0) * h / 3.0 / 2.0;
            for (size_t k = 0; k < G; k++) {
                grid[(i * G + k) * d] = -1 + (double)i * h;
                grid[(i * G + k) * d + 1] = -1 + (double)k * h;
            }
        }
        CHECK_OK(rfx_model_predict(m, rfx_cmat_of(grid, G * G, d), rfx_mat_of(fv, G * G, 1),
                                   rfx_mat_none()));
        double qm = 0, qv = 0, v1 = 0, v2 = 0;
        for (size_t i = 0; i < G; i++)
            for (size_t k = 0; k < G; k++) qm += wt[i] * wt[k] * fv[i * G + k];
        for (size_t i = 0; i < G; i++) {
            double c1 = 0, c2 = 0; /* E[f | x1 = t_i], E[f | x2 = t_i] */
            for (size_t k = 0; k < G; k++) {
                double e = fv[i * G + k] - qm;
                qv += wt[i] * wt[k] * e * e;
                c1 += wt[k] * fv[i * G + k];
                c2 += wt[k] * fv[k * G + i];
            }
            v1 += wt[i] * (c1 - qm) * (c1 - qm);
            v2 += wt[i] * (c2 - qm) * (c2 - qm);
        }
        printf("  exact sobol: mean %.15g (intercept %.15g, Simpson %.15g), variance %.12g "
               "(Simpson %.12g), S = (%.9f, %.9f) (Simpson %.9f, %.9f)\n", mean,
               m->intercept[0], qm, var, qv, first[0], first[1], v1 / qv, v2 / qv);
        CHECK_NEAR(mean, m->intercept[0], 1e-12 * fabs(m->intercept[0]));
        CHECK_NEAR(qm, mean, 1e-9);
        CHECK_NEAR(var, qv, 1e-8 * qv);
        CHECK_NEAR(first[0], v1 / qv, 1e-8);
        CHECK_NEAR(first[1], v2 / qv, 1e-8);
        free(grid);
        free(fv);
        free(wt);
    }
    rfx_model_free(m);
    rfx_features_free(f);
    m = NULL;

    rfx_srfe_params sp = rfx_srfe_params_default();
    sp.features.form = RFX_FORM_PHASE_FREE;
    sp.features.n_features = 300;
    sp.features.weight_scale = 1.0;
    sp.features.sparsity = 2;
    sp.features.seed = 3;
    sp.features.n_threads = 1;
    sp.standardize = 0;
    CHECK_OK(rfx_srfe_params_check(&sp));
    CHECK_OK(rfx_srfe_fit(&sp, rfx_cmat_of(X, n, d), rfx_cmat_of(y, n, 1), &m, NULL));
    if (m) {
        CHECK(m->features->params.form == RFX_FORM_PHASE_FREE);
        size_t zero = 0;
        for (size_t j = 0; j < m->features->F; j++) zero += m->features->b[j] == 0.0;
        CHECK(zero == m->features->F);
        double p1[150], p2[150], odd = 0;
        CHECK_OK(rfx_model_predict(m, rfx_cmat_of(X, n, d), rfx_mat_of(p1, n, 1),
                                   rfx_mat_none()));
        CHECK_OK(rfx_model_predict(m, rfx_cmat_of(Xn, n, d), rfx_mat_of(p2, n, 1),
                                   rfx_mat_none()));
        for (size_t i = 0; i < n; i++)
            odd = fmax(odd, fabs(p1[i] + p2[i] - 2 * m->intercept[0]));
        CHECK_MSG(odd < 1e-12, "srfe: f(x) + f(-x) - 2 c = %.3g", odd);
        rfx_model_free(m);
    }
    sp.features.form = RFX_FORM_COS_SIN;
    sp.features.activation = RFX_ACTIVATION_COS;
    CHECK_STATUS(rfx_srfe_params_check(&sp), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "srfe.features.form") != NULL);
    free(X);
    free(Xn);
    free(y);
}

int main(void)
{
    RFX_TEST_RUN(test_refusals);
    RFX_TEST_RUN(test_frequencies);
    RFX_TEST_RUN(test_transform);
    RFX_TEST_RUN(test_arccos);
    RFX_TEST_RUN(test_tanh_quadrature);
    RFX_TEST_RUN(test_model_file);
    RFX_TEST_RUN(test_greedy);
    RFX_TEST_RUN(test_surrogates);
    return rfx_test_finish("test_phase_free");
}
