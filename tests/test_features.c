/* SPDX-License-Identifier: BSD-3-Clause */
/* Random Fourier features: kernel approximation against the exact kernels,
 * the 1/sqrt(D) rate, conventions, reproducibility and parameter errors. */
#include "internal.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct kcase {
    rfx_kernel kernel;
    double nu;
    const char *name;
} kcase;

static const kcase CASES[] = {
    {RFX_KERNEL_GAUSSIAN, 0, "gaussian"},     {RFX_KERNEL_LAPLACIAN, 0, "laplacian"},
    {RFX_KERNEL_CAUCHY, 0, "cauchy"},         {RFX_KERNEL_MATERN, 0.5, "matern-1/2"},
    {RFX_KERNEL_MATERN, 1.5, "matern-3/2"},   {RFX_KERNEL_MATERN, 2.5, "matern-5/2"},
};
#define NCASES (sizeof CASES / sizeof *CASES)

/* Errors of Z Z^T against the exact K on the pairs i < j of X (n x d):
 * mean |error|, max |error| and mean signed error. */
static void approx_errors(const rfx_features_params *p, const double *X, size_t n, size_t d,
                          double *mean_abs, double *max_abs, double *mean_err)
{
    rfx_features *f = NULL;
    CHECK_OK(rfx_features_create(p, d, &f));
    if (!f) return;
    size_t D = p->n_features;
    double *Z = malloc(n * D * sizeof *Z), *K = malloc(n * n * sizeof *K);
    CHECK_OK(rfx_features_transform(f, rfx_cmat_of(X, n, d), rfx_mat_of(Z, n, D)));
    CHECK_OK(rfx_features_exact_kernel(f, rfx_cmat_of(X, n, d), rfx_cmat_of(X, n, d),
                                       rfx_mat_of(K, n, n)));
    double sa = 0, mx = 0, se = 0;
    size_t cnt = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = i + 1; j < n; j++) {
            double dot = 0;
            for (size_t k = 0; k < D; k++) dot += Z[i * D + k] * Z[j * D + k];
            double e = dot - K[i * n + j];
            sa += fabs(e);
            se += e;
            if (fabs(e) > mx) mx = fabs(e);
            cnt++;
        }
    }
    *mean_abs = sa / (double)cnt;
    *max_abs = mx;
    *mean_err = se / (double)cnt;
    free(Z);
    free(K);
    rfx_features_free(f);
}

/* Mean |z(x).z(y) - k(x, y)| falls like D^(-1/2): the least-squares slope of
 * log error on log D over D = 250 .. 16000 is -0.5 +- 0.1, for every kernel
 * and both forms. Errors are averaged over 3 seeds. */
static void test_rate(void)
{
    rfx_test_rng r = {11};
    const size_t n = 40, d = 4;
    double *X = rfx_test_matrix(&r, n, d, -1.0, 1.0);
    const size_t Ds[] = {250, 500, 1000, 2000, 4000, 8000, 16000};
    const size_t nD = sizeof Ds / sizeof *Ds;
    for (size_t c = 0; c < NCASES; c++) {
        for (int form = 0; form < 2; form++) {
            double lx[7], ly[7];
            for (size_t t = 0; t < nD; t++) {
                double acc = 0;
                for (uint64_t seed = 1; seed <= 3; seed++) {
                    rfx_features_params p = rfx_features_params_default();
                    p.kernel = CASES[c].kernel;
                    p.nu = CASES[c].nu;
                    p.form = (rfx_form)form;
                    p.n_features = Ds[t];
                    p.length_scale = 1.0;
                    p.seed = seed * 1000 + t;
                    double ma = 0, mx = 0, me = 0;
                    approx_errors(&p, X, n, d, &ma, &mx, &me);
                    acc += ma;
                }
                lx[t] = log((double)Ds[t]);
                ly[t] = log(acc / 3.0);
            }
            double mx = 0, my = 0, sxy = 0, sxx = 0;
            for (size_t t = 0; t < nD; t++) {
                mx += lx[t] / (double)nD;
                my += ly[t] / (double)nD;
            }
            for (size_t t = 0; t < nD; t++) {
                sxy += (lx[t] - mx) * (ly[t] - my);
                sxx += (lx[t] - mx) * (lx[t] - mx);
            }
            double slope = sxy / sxx;
            printf("rate %-11s %-8s slope %.3f  error(D=250) %.4f  error(D=16000) %.5f\n",
                   CASES[c].name, form ? "cos-sin" : "cos-bias", slope, exp(ly[0]),
                   exp(ly[nD - 1]));
            CHECK_MSG(slope > -0.6 && slope < -0.4, "%s %d: slope %.3f outside -0.5 +- 0.1",
                      CASES[c].name, form, slope);
        }
    }
    free(X);
}

/* Mean exact kernel value over the pairs of X for the map p (any D). */
static double mean_kernel(const rfx_features_params *p, const double *X, size_t n, size_t d)
{
    rfx_features_params q = *p;
    q.n_features = 2;
    rfx_features *f = NULL;
    double *K = malloc(n * n * sizeof *K), s = 0;
    CHECK_OK(rfx_features_create(&q, d, &f));
    CHECK_OK(rfx_features_exact_kernel(f, rfx_cmat_of(X, n, d), rfx_cmat_of(X, n, d),
                                       rfx_mat_of(K, n, n)));
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) s += K[i * n + j] / (double)(n * (n - 1) / 2);
    rfx_features_free(f);
    free(K);
    return s;
}

/* scikit-learn's RBFSampler test, reproduced: 300 points in d = 50, rows
 * normalised to sum 1, gamma = 10 (kernel values 0.75..0.95), D = 1000:
 * max |error| <= 0.1 and mean |error| <= 0.05. The other kernels on the same
 * points with the length scale that gives the same mean kernel value. One
 * draw's errors are correlated across pairs (the cos-bias form carries a
 * common term of standard deviation sqrt(1/(2D)) = 0.022), so the bounds
 * hold for the median of 16 draws, the worst draw is held to 0.15, and
 * unbiasedness is checked over the 16 draws: |mean signed error| <= 0.015
 * (about 3 standard errors). */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_sklearn_bounds(void)
{
    rfx_test_rng r = {42};
    const size_t n = 300, d = 50;
    double *X = rfx_test_matrix(&r, n, d, 0.0, 1.0);
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (size_t j = 0; j < d; j++) s += X[i * d + j];
        for (size_t j = 0; j < d; j++) X[i * d + j] /= s;
    }
    rfx_features_params g = rfx_features_params_default();
    g.gamma = 10.0;
    const double target = mean_kernel(&g, X, n, d);
    for (size_t c = 0; c < NCASES; c++) {
        rfx_features_params p = rfx_features_params_default();
        p.kernel = CASES[c].kernel;
        p.nu = CASES[c].nu;
        if (p.kernel == RFX_KERNEL_GAUSSIAN) {
            p.gamma = 10.0;
        } else { /* bisection on log l: the mean kernel value grows with l */
            double lo = log(1e-3), hi = log(1e3);
            for (int it = 0; it < 40; it++) {
                p.length_scale = exp(0.5 * (lo + hi));
                if (mean_kernel(&p, X, n, d) < target) lo = 0.5 * (lo + hi);
                else hi = 0.5 * (lo + hi);
            }
        }
        for (int form = 0; form < 2; form++) {
            p.form = (rfx_form)form;
            p.n_features = 1000;
            double mxs[16], mas[16], bias = 0;
            for (uint64_t seed = 1; seed <= 16; seed++) {
                double me = 0;
                mxs[seed - 1] = mas[seed - 1] = 0;
                p.seed = seed;
                approx_errors(&p, X, n, d, &mas[seed - 1], &mxs[seed - 1], &me);
                bias += me / 16.0;
            }
            qsort(mxs, 16, sizeof *mxs, cmp_double);
            qsort(mas, 16, sizeof *mas, cmp_double);
            double med_max = 0.5 * (mxs[7] + mxs[8]), med_mean = 0.5 * (mas[7] + mas[8]);
            printf("D=1000 %-11s %-8s max |err| %.4f (worst %.4f)  mean |err| %.4f  "
                   "bias %+.5f  (16 draws)\n", CASES[c].name, form ? "cos-sin" : "cos-bias",
                   med_max, mxs[15], med_mean, bias);
            CHECK_MSG(med_max <= 0.1, "%s: max error %.4f > 0.1", CASES[c].name, med_max);
            CHECK_MSG(mxs[15] <= 0.15, "%s: worst max error %.4f > 0.15", CASES[c].name, mxs[15]);
            CHECK_MSG(med_mean <= 0.05, "%s: mean |error| %.4f > 0.05", CASES[c].name, med_mean);
            CHECK_MSG(fabs(bias) <= 0.015, "%s: bias %.4f", CASES[c].name, bias);
        }
    }
    free(X);
}

/* The exact kernels against their closed forms at a few points. */
static void test_exact_kernels(void)
{
    const double x[2] = {0.3, -0.2}, y[2] = {1.1, 0.4};
    const double t0 = (0.3 - 1.1) / 2.0, t1 = (-0.2 - 0.4) / 2.0; /* l = 2 */
    const double r = sqrt(t0 * t0 + t1 * t1);
    struct { rfx_kernel k; double nu, expect; } cases[] = {
        {RFX_KERNEL_GAUSSIAN, 0, exp(-0.5 * r * r)},
        {RFX_KERNEL_LAPLACIAN, 0, exp(-(fabs(t0) + fabs(t1)))},
        {RFX_KERNEL_CAUCHY, 0, 1.0 / ((1 + t0 * t0) * (1 + t1 * t1))},
        {RFX_KERNEL_MATERN, 0.5, exp(-r)},
        {RFX_KERNEL_MATERN, 1.5, (1 + sqrt(3.0) * r) * exp(-sqrt(3.0) * r)},
        {RFX_KERNEL_MATERN, 2.5, (1 + sqrt(5.0) * r + 5 * r * r / 3) * exp(-sqrt(5.0) * r)},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        rfx_features_params p = rfx_features_params_default();
        p.kernel = cases[c].k;
        p.nu = cases[c].nu;
        p.length_scale = 2.0;
        p.n_features = 8;
        rfx_features *f = NULL;
        CHECK_OK(rfx_features_create(&p, 2, &f));
        double k = -1;
        CHECK_OK(rfx_features_exact_kernel(f, rfx_cmat_of(x, 1, 2), rfx_cmat_of(y, 1, 2),
                                           rfx_mat_of(&k, 1, 1)));
        CHECK_NEAR(k, cases[c].expect, 1e-15);
        rfx_features_free(f);
    }
    /* Matern with a nu that has no closed form here: a clear error */
    rfx_features_params p = rfx_features_params_default();
    p.kernel = RFX_KERNEL_MATERN;
    p.nu = 1.0;
    rfx_features *f = NULL;
    CHECK_OK(rfx_features_create(&p, 2, &f));
    double k;
    CHECK_STATUS(rfx_features_exact_kernel(f, rfx_cmat_of(x, 1, 2), rfx_cmat_of(y, 1, 2),
                                           rfx_mat_of(&k, 1, 1)),
                 RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "nu") != NULL);
    rfx_features_free(f);
}

/* gamma in scikit-learn's meaning, ARD length scales, the sampled
 * distributions' scale, and feature j depending only on (seed, j). */
static void test_conventions(void)
{
    rfx_features_params p = rfx_features_params_default();
    rfx_features *a = NULL, *b = NULL;
    p.gamma = 0.5; /* exp(-0.5 |x - y|^2) is l = 1 */
    CHECK_OK(rfx_features_create(&p, 3, &a));
    CHECK_NEAR(rfx_features_get_params(a).length_scale, 1.0, 1e-15);
    rfx_features_free(a);
    p.kernel = RFX_KERNEL_LAPLACIAN;
    p.gamma = 4.0; /* exp(-4 |x - y|_1) is l = 1/4 */
    CHECK_OK(rfx_features_create(&p, 3, &a));
    CHECK_NEAR(rfx_features_get_params(a).length_scale, 0.25, 1e-15);
    rfx_features_free(a);

    /* feature j of D = 100 equals feature j of D = 300 (same seed) */
    p = rfx_features_params_default();
    p.seed = 7;
    p.n_features = 100;
    CHECK_OK(rfx_features_create(&p, 5, &a));
    p.n_features = 300;
    CHECK_OK(rfx_features_create(&p, 5, &b));
    CHECK(memcmp(rfx_features_frequencies(a).data, rfx_features_frequencies(b).data,
                 100 * 5 * sizeof(double)) == 0);
    CHECK(memcmp(rfx_features_phases(a), rfx_features_phases(b), 100 * sizeof(double)) == 0);
    rfx_features_free(a);
    rfx_features_free(b);

    /* Gaussian frequencies: column i has variance 1 / l_i^2 (ARD) */
    const double ls[3] = {0.5, 1.0, 4.0};
    p = rfx_features_params_default();
    p.length_scales = ls;
    p.n_features = 20000;
    CHECK_OK(rfx_features_create(&p, 3, &a));
    rfx_cmat W = rfx_features_frequencies(a);
    for (size_t i = 0; i < 3; i++) {
        double s2 = 0, m = 0;
        for (size_t j = 0; j < W.rows; j++) m += W.data[j * 3 + i] / (double)W.rows;
        for (size_t j = 0; j < W.rows; j++) s2 += pow(W.data[j * 3 + i] - m, 2) / (double)W.rows;
        /* sd of the sample variance ~ sqrt(2/n) relative: 1% at n = 20000 */
        CHECK_NEAR(s2 * ls[i] * ls[i], 1.0, 0.04);
        CHECK_NEAR(m * ls[i], 0.0, 0.03);
    }
    const double *ph = rfx_features_phases(a);
    double pm = 0;
    for (size_t j = 0; j < W.rows; j++) {
        CHECK(ph[j] >= 0 && ph[j] < 6.2831853071795865);
        pm += ph[j] / (double)W.rows;
    }
    CHECK_NEAR(pm, 3.14159265358979, 0.05);
    rfx_features_free(a);
    a = NULL;

    /* ARD: the approximation matches the ARD exact kernel */
    rfx_test_rng r = {5};
    double *X = rfx_test_matrix(&r, 30, 3, -1, 1);
    const double ls2[3] = {0.3, 1.0, 3.0};
    p = rfx_features_params_default();
    p.length_scales = ls2;
    p.n_features = 4000;
    p.form = RFX_FORM_COS_SIN;
    double ma = 0, mx = 0, me = 0;
    approx_errors(&p, X, 30, 3, &ma, &mx, &me);
    CHECK(mx < 0.1);
    free(X);
}

/* The transform: blocks, strides, float32, the paired form's layout. */
static void test_transform(void)
{
    rfx_test_rng r = {3};
    const size_t n = 203, d = 7, D = 130; /* not multiples of the tile sizes */
    double *X = rfx_test_matrix(&r, n, d + 3, -2, 2); /* stride d + 3 */
    rfx_features_params p = rfx_features_params_default();
    p.n_features = D;
    p.seed = 9;
    for (int form = 0; form < 2; form++) {
        p.form = (rfx_form)form;
        rfx_features *f = NULL;
        CHECK_OK(rfx_features_create(&p, d, &f));
        double *Z = malloc(n * (D + 5) * sizeof *Z);
        rfx_cmat Xv = {X, n, d, d + 3};
        rfx_mat Zv = {Z, n, D, D + 5};
        CHECK_OK(rfx_features_transform(f, Xv, Zv));
        /* against the definition, row by row */
        rfx_cmat W = rfx_features_frequencies(f);
        const double *b = rfx_features_phases(f);
        double maxdiff = 0, s = sqrt(2.0 / (double)D);
        for (size_t i = 0; i < n; i++) {
            for (size_t j = 0; j < W.rows; j++) {
                double t = 0;
                for (size_t k = 0; k < d; k++) t += W.data[j * d + k] * X[i * (d + 3) + k];
                if (form == 0) {
                    maxdiff = fmax(maxdiff, fabs(Z[i * (D + 5) + j] - s * cos(t + b[j])));
                } else {
                    maxdiff = fmax(maxdiff, fabs(Z[i * (D + 5) + j] - s * cos(t)));
                    maxdiff = fmax(maxdiff, fabs(Z[i * (D + 5) + W.rows + j] - s * sin(t)));
                }
            }
        }
        CHECK_MSG(maxdiff < 1e-14, "form %d: max difference from the definition %.3g", form,
                  maxdiff);
        /* float32: the same within single-precision argument rounding */
        float *Xf = malloc(n * d * sizeof *Xf), *Zf = malloc(n * D * sizeof *Zf);
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < d; k++) Xf[i * d + k] = (float)X[i * (d + 3) + k];
        CHECK_OK(rfx_features_transform_f32(f, rfx_cmatf_of(Xf, n, d), rfx_matf_of(Zf, n, D)));
        double fd = 0;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < D; j++) fd = fmax(fd, fabs(Zf[i * D + j] - Z[i * (D + 5) + j]));
        CHECK_MSG(fd < 1e-4 * s * 100, "float32 max difference %.3g", fd);
        /* wrong shapes */
        CHECK_STATUS(rfx_features_transform(f, (rfx_cmat){X, n, d - 1, d + 3}, Zv), RFX_EDIM);
        CHECK(strstr(rfx_last_error(), "columns") != NULL);
        CHECK_STATUS(rfx_features_transform(f, Xv, (rfx_mat){Z, n - 1, D, D + 5}), RFX_EDIM);
        CHECK_STATUS(rfx_features_transform(f, (rfx_cmat){X, n, d, d - 1}, Zv), RFX_EINVAL);
        CHECK_STATUS(rfx_features_transform(f, (rfx_cmat){NULL, n, d, d}, Zv), RFX_EINVAL);
        free(Xf);
        free(Zf);
        free(Z);
        rfx_features_free(f);
    }
    free(X);
}

/* The same seed gives bitwise-identical features for 1 and 2 threads. */
static void test_threads(void)
{
    rfx_test_rng r = {8};
    const size_t n = 1000, d = 6, D = 600;
    double *X = rfx_test_matrix(&r, n, d, -1, 1);
    double *Z1 = malloc(n * D * sizeof *Z1), *Z2 = malloc(n * D * sizeof *Z2);
    rfx_features_params p = rfx_features_params_default();
    p.n_features = D;
    p.kernel = RFX_KERNEL_MATERN;
    p.seed = 123;
    p.n_threads = 1;
    rfx_features *f1 = NULL, *f2 = NULL;
    CHECK_OK(rfx_features_create(&p, d, &f1));
    p.n_threads = 2;
    CHECK_OK(rfx_features_create(&p, d, &f2));
    CHECK(memcmp(rfx_features_frequencies(f1).data, rfx_features_frequencies(f2).data,
                 D * d * sizeof(double)) == 0);
    CHECK_OK(rfx_features_transform(f1, rfx_cmat_of(X, n, d), rfx_mat_of(Z1, n, D)));
    CHECK_OK(rfx_features_transform(f2, rfx_cmat_of(X, n, d), rfx_mat_of(Z2, n, D)));
    CHECK(memcmp(Z1, Z2, n * D * sizeof *Z1) == 0);
    rfx_features_free(f1);
    rfx_features_free(f2);
    free(X);
    free(Z1);
    free(Z2);
}

/* q-sparse maps: exactly q nonzeros per frequency, every support once when
 * they fit; activations equal their definitions; explicit distributions. */
static void test_sparse_activations(void)
{
    const size_t d = 6, q = 2, F = 40; /* C(6, 2) = 15 supports <= 40 */
    rfx_features_params p = rfx_features_params_default();
    p.sparsity = q;
    p.n_features = F;
    p.activation = RFX_ACTIVATION_SIN;
    p.weights = RFX_WEIGHTS_NORMAL;
    p.weight_scale = 2.0;
    p.seed = 3;
    rfx_features *f = NULL;
    CHECK_OK(rfx_features_create(&p, d, &f));
    if (!f) return;
    rfx_cmat W = rfx_features_frequencies(f);
    int seen[6][6] = {{0}};
    for (size_t j = 0; j < F; j++) {
        size_t nz = 0, first = d, second = d;
        for (size_t i = 0; i < d; i++) {
            if (W.data[j * d + i] != 0) {
                if (first == d) first = i;
                else second = i;
                nz++;
            }
        }
        CHECK_MSG(nz == q, "frequency %zu has %zu nonzeros", j, nz);
        if (nz == q) seen[first][second]++;
        if (j < 15) CHECK(seen[first][second] == 1); /* the first 15: all distinct */
    }
    size_t covered = 0;
    for (size_t a = 0; a < d; a++)
        for (size_t b = a + 1; b < d; b++) covered += seen[a][b] > 0;
    CHECK(covered == 15);
    /* sin(w.x + b) with scale 1, by definition */
    rfx_test_rng r = {4};
    double *X = rfx_test_matrix(&r, 9, d, -1, 1), Z[9 * 40];
    const rfx_activation acts[] = {RFX_ACTIVATION_SIN, RFX_ACTIVATION_TANH,
                                   RFX_ACTIVATION_SIGMOID, RFX_ACTIVATION_RELU};
    for (size_t a = 0; a < 4; a++) {
        rfx_features *g = NULL;
        p.activation = acts[a];
        CHECK_OK(rfx_features_create(&p, d, &g));
        CHECK_OK(rfx_features_transform(g, rfx_cmat_of(X, 9, d), rfx_mat_of(Z, 9, F)));
        rfx_cmat Wg = rfx_features_frequencies(g);
        const double *bg = rfx_features_phases(g);
        double err = 0;
        for (size_t i = 0; i < 9; i++) {
            for (size_t j = 0; j < F; j++) {
                double t = bg[j], v;
                for (size_t k = 0; k < d; k++) t += Wg.data[j * d + k] * X[i * d + k];
                switch (acts[a]) {
                case RFX_ACTIVATION_SIN: v = sin(t); break;
                case RFX_ACTIVATION_TANH: v = tanh(t); break;
                case RFX_ACTIVATION_SIGMOID: v = 1 / (1 + exp(-t)); break;
                default: v = t > 0 ? t : 0; break;
                }
                err = fmax(err, fabs(Z[i * F + j] - v));
            }
        }
        CHECK_MSG(err < 1e-14, "%s: error %.3g", rfx_activation_name(acts[a]), err);
        /* no exact kernel for these maps */
        double k;
        CHECK_STATUS(rfx_features_exact_kernel(g, rfx_cmat_of(X, 1, d), rfx_cmat_of(X, 1, d),
                                               rfx_mat_of(&k, 1, 1)),
                     RFX_EINVAL);
        rfx_features_free(g);
    }
    /* uniform weights lie in [-s, s]; drawn supports when C(d, q) > F */
    rfx_features_free(f);
    f = NULL;
    p.activation = RFX_ACTIVATION_COS;
    p.weights = RFX_WEIGHTS_UNIFORM;
    p.sparsity = 3;
    p.n_features = 10; /* C(6, 3) = 20 > 10 */
    CHECK_OK(rfx_features_create(&p, d, &f));
    W = rfx_features_frequencies(f);
    for (size_t j = 0; j < 10; j++) {
        size_t nz = 0;
        for (size_t i = 0; i < d; i++) {
            double w = W.data[j * d + i];
            nz += w != 0;
            CHECK(w >= -2.0 && w <= 2.0);
        }
        CHECK(nz == 3);
    }
    rfx_features_free(f);
    /* invalid combinations */
    p = rfx_features_params_default();
    p.sparsity = 7;
    CHECK_STATUS(rfx_features_create(&p, d, &f), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "sparsity") != NULL);
    p = rfx_features_params_default();
    p.form = RFX_FORM_COS_SIN;
    p.activation = RFX_ACTIVATION_TANH;
    CHECK_STATUS(rfx_features_create(&p, d, &f), RFX_EINVAL);
    p = rfx_features_params_default();
    p.weight_scale = 0;
    CHECK_STATUS(rfx_features_create(&p, d, &f), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "weight_scale") != NULL);
    rfx_activation act;
    CHECK_OK(rfx_activation_from_name("relu", &act));
    CHECK(act == RFX_ACTIVATION_RELU);
    CHECK_STATUS(rfx_activation_from_name("gelu", &act), RFX_EINVAL);
    free(X);
}

/* Every invalid parameter is refused with a message naming the field. */
static void test_errors(void)
{
    rfx_features *f = NULL;
    rfx_features_params p;
    struct { const char *field; void (*set)(rfx_features_params *); } bad[8];
    (void)bad;
#define BAD(stmt, field)                                                    \
    do {                                                                    \
        p = rfx_features_params_default();                                  \
        stmt;                                                               \
        CHECK_STATUS(rfx_features_create(&p, 3, &f), RFX_EINVAL);           \
        CHECK_MSG(strstr(rfx_last_error(), field) != NULL, "message '%s' lacks '%s'", \
                  rfx_last_error(), field);                                 \
    } while (0)
    BAD(p.n_features = 0, "n_features");
    BAD((p.form = RFX_FORM_COS_SIN, p.n_features = 7), "n_features");
    BAD((p.kernel = RFX_KERNEL_MATERN, p.nu = -1), "nu");
    BAD(p.length_scale = 0, "length_scale");
    BAD(p.length_scale = NAN, "length_scale");
    BAD(p.gamma = -1, "gamma");
    BAD((p.kernel = RFX_KERNEL_CAUCHY, p.gamma = 1), "gamma");
    BAD(p.kernel = (rfx_kernel)9, "kernel");
    BAD(p.form = (rfx_form)5, "form");
    const double bad_ls[3] = {1, -2, 1};
    BAD(p.length_scales = bad_ls, "length_scales[1]");
#undef BAD
    p = rfx_features_params_default();
    CHECK_STATUS(rfx_features_create(&p, 0, &f), RFX_EINVAL);
    p.n_features = SIZE_MAX / 2;
    CHECK_STATUS(rfx_features_create(&p, 4, &f), RFX_EOVERFLOW);
    CHECK(f == NULL);
    rfx_kernel k;
    rfx_form fo;
    CHECK_OK(rfx_kernel_from_name("matern", &k));
    CHECK(k == RFX_KERNEL_MATERN);
    CHECK_STATUS(rfx_kernel_from_name("poly", &k), RFX_EINVAL);
    CHECK_OK(rfx_form_from_name("cos-sin", &fo));
    CHECK(fo == RFX_FORM_COS_SIN);
    CHECK_STATUS(rfx_form_from_name("sin", &fo), RFX_EINVAL);
    rfx_features_free(NULL); /* a no-op */
    CHECK(strcmp(rfx_strerror(RFX_EDIM), "dimension mismatch") == 0);
}

/* The one table of enum names (src/core/names.c): every value of each enum
 * round-trips, an unknown name gets the one message form, NULL is refused. */
static void test_names(void)
{
#define ROUND_TRIP(type, prefix, last)                                        \
    for (int v = 0; v <= (int)(last); v++) {                                 \
        type back = (type)0;                                                 \
        CHECK_OK(prefix##_from_name(prefix##_name((type)v), &back));         \
        CHECK(back == (type)v);                                              \
    }                                                                        \
    CHECK(strcmp(prefix##_name((type)((int)(last) + 1)), "unknown") == 0)
    ROUND_TRIP(rfx_kernel, rfx_kernel, RFX_KERNEL_CUSTOM);
    ROUND_TRIP(rfx_form, rfx_form, RFX_FORM_PHASE_FREE);
    ROUND_TRIP(rfx_activation, rfx_activation, RFX_ACTIVATION_SIGN);
    ROUND_TRIP(rfx_structure, rfx_structure, RFX_STRUCTURE_HALTON);
    ROUND_TRIP(rfx_weights, rfx_weights, RFX_WEIGHTS_UNIFORM);
    ROUND_TRIP(rfx_method, rfx_method, RFX_METHOD_GREEDY);
    ROUND_TRIP(rfx_loss, rfx_loss, RFX_LOSS_AUTO);
    ROUND_TRIP(rfx_multiclass, rfx_multiclass, RFX_MULTICLASS_SOFTMAX);
    ROUND_TRIP(rfx_optimizer, rfx_optimizer, RFX_OPTIMIZER_SGD);
    ROUND_TRIP(rfx_sgd_strategy, rfx_sgd_strategy, RFX_SGD_GRAM_CACHED);
    ROUND_TRIP(rfx_isa, rfx_isa, RFX_ISA_AVX512);
#undef ROUND_TRIP
    rfx_kernel k = RFX_KERNEL_CAUCHY;
    CHECK_OK(rfx_kernel_from_name("rbf", &k)); /* scikit-learn's name */
    CHECK(k == RFX_KERNEL_GAUSSIAN);
    rfx_loss l = RFX_LOSS_HINGE;
    CHECK_STATUS(rfx_loss_from_name("huber", &l), RFX_EINVAL);
    CHECK_MSG(strcmp(rfx_last_error(),
                     "unknown loss 'huber' (expected logistic, hinge, squared-hinge, squared "
                     "or auto)") == 0,
              "%s", rfx_last_error());
    CHECK(l == RFX_LOSS_HINGE);
    CHECK_STATUS(rfx_structure_from_name(NULL, NULL), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "structure name: NULL argument") != NULL);
}

int main(void)
{
    test_names();
    printf("vector math: %s\n", rfx_isa_name(rfx_isa_active()));
    test_exact_kernels();
    test_conventions();
    test_transform();
    test_threads();
    test_errors();
    test_sparse_activations();
    test_sklearn_bounds();
    test_rate();
    return rfx_test_finish("test_features");
}
