/* SPDX-License-Identifier: BSD-3-Clause */
/* Exact kernels and Gram matrices (rfx/kernels.h):
 *  - every positive semi-definite kernel (Gaussian, RBF, Laplacian, Cauchy,
 *    Matern nu = 0.5, 1.5, 2.5, 0.8, 3.7, isotropic and ARD, polynomial,
 *    linear, delta, a feature map's kernel, and algebra: sums, products,
 *    scalings, exp, warps, exp(linear)) has a Gram matrix whose smallest
 *    eigenvalue (LAPACK dsyevd) is >= -1e-10 |K|_F; the sigmoid kernel,
 *    not PSD in general, has its closed-form values (a negative diagonal);
 *  - Gram matrices (several tiles, partial tiles, strided views) equal
 *    loops of rfx_kern_eval to 1e-12; gram_sym is exactly symmetric with
 *    exactly unit diagonals for the shift-invariant kernels; rows that
 *    differ in the last bit, or sit far from the origin, never give
 *    negative squared distances (k <= 1) and match the direct differences;
 *  - 1 and 2 threads give bitwise identical matrices;
 *  - scikit-learn's rbf, laplacian, polynomial, sigmoid and linear kernels
 *    and its Matern(nu) kernel (scipy's K_nu) to 1e-12 relative;
 *  - the shift kernels equal rfx_features_exact_kernel, the feature kernel
 *    equals Z Z^T of rfx_features_transform;
 *  - K_nu against its closed forms at half-integer orders, and the general
 *    Matern path against the closed forms at nearby nu;
 *  - algebra identities: gram(a + b) = gram(a) + gram(b), products,
 *    scalings, exp elementwise, warp = D K D;
 *  - every error path. */
#include "internal.h"
#include "kernels/kern_internal.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define PEER RFX_TEST_DATA "/../peer/kernels_sklearn.py"

/* ---- helpers -------------------------------------------------------------- */

static double frob(const double *K, size_t n, size_t m)
{
    double s = 0;
    for (size_t i = 0; i < n * m; i++) s += K[i] * K[i];
    return sqrt(s);
}

/* The smallest eigenvalue of a symmetric n x n matrix (LAPACK dsyevd). */
static double min_eig(const double *K, size_t n)
{
    double *A = malloc(n * n * sizeof *A), *w = malloc(n * sizeof *w);
    memcpy(A, K, n * n * sizeof *A);
    double v = NAN;
    if (rfx__eig_sym(A, n, w, 1, "test") == RFX_OK) v = w[0];
    free(A);
    free(w);
    return v;
}

/* K by rfx_kern_eval loops (the reference for the tiled Gram matrices). */
static void gram_eval(const rfx_kern *k, const double *X, size_t n, const double *Y, size_t m,
                      size_t d, double *K)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < m; j++) K[i * m + j] = rfx_kern_eval(k, X + i * d, Y + j * d, d);
}

static double max_rel_diff(const double *A, const double *B, size_t len)
{
    double w = 0;
    for (size_t i = 0; i < len; i++) {
        double e = fabs(A[i] - B[i]) / fmax(1.0, fabs(B[i]));
        if (!(e <= w)) w = e; /* NaN propagates */
    }
    return w;
}

static void write_array(FILE *f, const char *name, const double *A, size_t rows, size_t cols)
{
    fprintf(f, "%s %zu %zu\n", name, rows, cols);
    for (size_t i = 0; i < rows; i++) {
        for (size_t j = 0; j < cols; j++) fprintf(f, "%s%.17g", j ? " " : "", A[i * cols + j]);
        fputc('\n', f);
    }
}

/* Run the peer script; read exactly len numbers. Returns 1 on success. */
static int run_peer(const char *args, double *out, size_t len)
{
    char cmd[8192 + 512];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s", PEER, args);
    FILE *p = popen(cmd, "r");
    if (!p) return 0;
    size_t got = 0;
    while (got < len && fscanf(p, "%lf", &out[got]) == 1) got++;
    double extra;
    int more = fscanf(p, "%lf", &extra) == 1;
    int rc = pclose(p);
    if (rc != 0 || got != len || more) {
        fprintf(stderr, "peer '%s': status %d, %zu of %zu numbers\n", cmd, rc, got, len);
        return 0;
    }
    return 1;
}

static double weight_fn(void *user, const double *x, size_t d)
{
    double s = *(const double *)user;
    for (size_t i = 0; i < d; i++) s += 0.3 * x[i];
    return 1.0 + 0.5 * sin(s);
}

static double nan_weight(void *user, const double *x, size_t d)
{
    (void)user;
    return x[0] > 0.5 && d > 0 ? NAN : 1.0;
}

/* The kernels the property tests run over. */
#define NK 29
typedef struct kset {
    rfx_kern *k[NK];
    const char *name[NK];
    int shift[NK]; /* shift-invariant: k(x, x) = 1 exactly              */
    size_t n;
    rfx_features *f;
    double warp_phase;
} kset;

static void kset_add(kset *s, rfx_kern *k, const char *name, int shift)
{
    s->k[s->n] = k;
    s->name[s->n] = name;
    s->shift[s->n] = shift;
    s->n++;
}

static void kset_make(kset *s, size_t d)
{
    memset(s, 0, sizeof *s);
    double ls[8];
    for (size_t i = 0; i < d; i++) ls[i] = 0.6 + 0.25 * (double)i;
    rfx_kern *k;
    CHECK_OK(rfx_kern_rbf(0.7, &k));
    kset_add(s, k, "rbf", 1);
    CHECK_OK(rfx_kern_laplacian(0.5, &k));
    kset_add(s, k, "laplacian(gamma)", 1);
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_GAUSSIAN, 0, 0.8, NULL, 0, &k));
    kset_add(s, k, "gaussian", 1);
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_GAUSSIAN, 0, 0, ls, d, &k));
    kset_add(s, k, "gaussian ard", 1);
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_LAPLACIAN, 0, 0, ls, d, &k));
    kset_add(s, k, "laplacian ard", 1);
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_CAUCHY, 0, 0.9, NULL, 0, &k));
    kset_add(s, k, "cauchy", 1);
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_CAUCHY, 0, 0, ls, d, &k));
    kset_add(s, k, "cauchy ard", 1);
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_MATERN, 0.5, 0.7, NULL, 0, &k));
    kset_add(s, k, "matern 0.5", 1);
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_MATERN, 1.5, 0.7, NULL, 0, &k));
    kset_add(s, k, "matern 1.5", 1);
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_MATERN, 2.5, 0.7, NULL, 0, &k));
    kset_add(s, k, "matern 2.5", 1);
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_MATERN, 0.8, 0.7, NULL, 0, &k));
    kset_add(s, k, "matern 0.8", 1);
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_MATERN, 3.7, 0, ls, d, &k));
    kset_add(s, k, "matern 3.7 ard", 1);
    CHECK_OK(rfx_kern_polynomial(0.5, 1.0, 3, &k));
    kset_add(s, k, "polynomial", 0);
    CHECK_OK(rfx_kern_linear(&k));
    kset_add(s, k, "linear", 0);
    CHECK_OK(rfx_kern_delta(&k));
    kset_add(s, k, "delta", 1);
    rfx_features_params fp = rfx_features_params_default();
    fp.n_features = 96;
    fp.seed = 7;
    fp.length_scale = 0.9;
    CHECK_OK(rfx_features_create(&fp, d, &s->f));
    CHECK_OK(rfx_kern_features(s->f, &k));
    kset_add(s, k, "features", 0);
    /* algebra */
    rfx_kern *a, *b, *c;
    CHECK_OK(rfx_kern_rbf(0.3, &a));
    CHECK_OK(rfx_kern_linear(&b));
    CHECK_OK(rfx_kern_sum(a, b, &k));
    kset_add(s, k, "rbf + linear", 0);
    CHECK_OK(rfx_kern_product(a, b, &k));
    kset_add(s, k, "rbf * linear", 0);
    CHECK_OK(rfx_kern_scale(2.5, a, &k));
    kset_add(s, k, "2.5 rbf", 0);
    CHECK_OK(rfx_kern_exp(b, &k));
    kset_add(s, k, "exp(linear)", 0);
    CHECK_OK(rfx_kern_exp(a, &k));
    kset_add(s, k, "exp(rbf)", 0);
    s->warp_phase = 0.4;
    CHECK_OK(rfx_kern_warp(a, weight_fn, &s->warp_phase, &k));
    kset_add(s, k, "warp(rbf)", 0);
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_MATERN, 3.7, 0.9, NULL, 0, &c));
    rfx_kern *t1, *t2;
    CHECK_OK(rfx_kern_product(c, s->k[4], &t1)); /* matern * laplacian ard */
    CHECK_OK(rfx_kern_scale(0.5, t1, &t2));
    CHECK_OK(rfx_kern_sum(t2, s->k[15], &k));    /* + features           */
    kset_add(s, k, "0.5 matern*lap + features", 0);
    rfx_kern_free(t1);
    rfx_kern_free(t2);
    CHECK_OK(rfx_kern_delta(&t1));
    CHECK_OK(rfx_kern_sum(c, t1, &k));
    kset_add(s, k, "matern + delta", 0); /* diagonal 2 */
    rfx_kern_free(t1);
    rfx_kern_free(c);
    CHECK_OK(rfx_kern_polynomial(1.0, 0.0, 0, &k));
    kset_add(s, k, "constant (degree 0)", 0);
    CHECK_OK(rfx_kern_arccos(0, 1.3, 0.0, &k));
    kset_add(s, k, "arccos 0", 0);
    CHECK_OK(rfx_kern_arccos(1, 0.8, 0.5, &k));
    kset_add(s, k, "arccos 1 with bias", 0);
    CHECK_OK(rfx_kern_arccos(2, 1.1, 0.3, &k));
    kset_add(s, k, "arccos 2 with bias", 0);
    {
        /* A = B B^T: positive semi-definite, of rank d - 1 */
        double *A = malloc(d * d * sizeof *A);
        for (size_t i = 0; i < d; i++)
            for (size_t j = 0; j < d; j++) {
                double a = 0;
                for (size_t m = 0; m + 1 < d; m++)
                    a += sin(1.0 + (double)(i * d + m)) * sin(1.0 + (double)(j * d + m));
                A[i * d + j] = a;
            }
        CHECK_OK(rfx_kern_bilinear(A, d, &k));
        kset_add(s, k, "bilinear", 0);
        free(A);
    }
    /* operands may go: the combinations hold them */
    rfx_kern_free(a);
    rfx_kern_free(b);
    CHECK(s->n == NK);
}

static void kset_free(kset *s)
{
    for (size_t i = 0; i < s->n; i++) rfx_kern_free(s->k[i]);
    rfx_features_free(s->f);
}

/* ---- tests ----------------------------------------------------------------- */

static void test_psd(void)
{
    const size_t n = 90, d = 4;
    rfx_test_rng r = {11};
    double *X = rfx_test_matrix(&r, n, d, -1, 1);
    /* duplicated rows: the delta kernel's Gram matrix gets off-diagonal 1s */
    memcpy(X + 10 * d, X + 3 * d, d * sizeof *X);
    memcpy(X + 50 * d, X + 3 * d, d * sizeof *X);
    double *K = malloc(n * n * sizeof *K);
    kset s;
    kset_make(&s, d);
    double worst = 0;
    for (size_t q = 0; q < s.n; q++) {
        CHECK_OK(rfx_kern_gram_sym(s.k[q], rfx_cmat_of(X, n, d), rfx_mat_of(K, n, n), 0));
        double e = min_eig(K, n), f = frob(K, n, n);
        CHECK_MSG(e >= -1e-10 * f, "%s: smallest eigenvalue %.3g, |K|_F %.3g", s.name[q], e, f);
        if (-e / f > worst) worst = -e / f;
    }
    printf("psd: %zu kernels, worst smallest eigenvalue / |K|_F = %.3g\n", s.n, -worst);
    /* the delta kernel: the duplicates see each other, nothing else */
    CHECK_OK(rfx_kern_gram_sym(s.k[14], rfx_cmat_of(X, n, d), rfx_mat_of(K, n, n), 0));
    double off = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) off += K[i * n + j];
    CHECK(off == (double)n + 6.0);
    CHECK(K[3 * n + 10] == 1.0 && K[50 * n + 10] == 1.0 && K[3 * n + 4] == 0.0);
    kset_free(&s);

    /* sigmoid: tanh(gamma x.y + coef0); with coef0 < 0 the diagonal entry of
     * x = 0 is tanh(coef0) < 0, so it is not PSD */
    rfx_kern *sg;
    CHECK_OK(rfx_kern_sigmoid(0.4, -0.5, &sg));
    for (size_t i = 0; i < d; i++) X[i] = 0;
    CHECK_OK(rfx_kern_gram_sym(sg, rfx_cmat_of(X, 20, d), rfx_mat_of(K, 20, 20), 0));
    CHECK(K[0] == tanh(-0.5) && K[0] < 0);
    double w = 0;
    for (size_t i = 0; i < 20; i++)
        for (size_t j = 0; j < 20; j++) {
            double dot = 0;
            for (size_t c = 0; c < d; c++) dot += X[i * d + c] * X[j * d + c];
            w = fmax(w, fabs(K[i * 20 + j] - tanh(0.4 * dot - 0.5)));
        }
    CHECK_NEAR(w, 0, 1e-15);
    CHECK(min_eig(K, 20) < 0);
    rfx_kern_free(sg);
    free(K);
    free(X);
}

static void test_gram_vs_eval(void)
{
    const size_t n = 150, m = 70, d = 3, ldx = 5, ldk = 160;
    rfx_test_rng r = {12};
    double *X = rfx_test_matrix(&r, n, ldx, -1.5, 1.5), *Y = rfx_test_matrix(&r, m, d, -1.5, 1.5);
    double *Xc = malloc(n * d * sizeof *Xc);
    for (size_t i = 0; i < n; i++) memcpy(Xc + i * d, X + i * ldx, d * sizeof *X);
    double *K = malloc(n * ldk * sizeof *K), *R = malloc(n * n * sizeof *R);
    double *G = malloc(n * n * sizeof *G);
    kset s;
    kset_make(&s, d);
    double worst = 0, worst_sym = 0;
    for (size_t q = 0; q < s.n; q++) {
        rfx_cmat Xv = {X, n, d, ldx};
        rfx_mat Kv = {K, n, m, ldk};
        CHECK_OK(rfx_kern_gram(s.k[q], Xv, rfx_cmat_of(Y, m, d), Kv, 2));
        gram_eval(s.k[q], Xc, n, Y, m, d, R);
        for (size_t i = 0; i < n; i++) memcpy(G + i * m, K + i * ldk, m * sizeof *K);
        double e = max_rel_diff(G, R, n * m);
        CHECK_MSG(e <= 1e-12, "%s: gram vs eval %.3g", s.name[q], e);
        worst = fmax(worst, e);
        /* gram_sym, strided output */
        rfx_mat Ks = {K, n, n, ldk};
        CHECK_OK(rfx_kern_gram_sym(s.k[q], Xv, Ks, 2));
        gram_eval(s.k[q], Xc, n, Xc, n, d, R);
        for (size_t i = 0; i < n; i++) memcpy(G + i * n, K + i * ldk, n * sizeof *K);
        e = max_rel_diff(G, R, n * n);
        CHECK_MSG(e <= 1e-12, "%s: gram_sym vs eval %.3g", s.name[q], e);
        worst_sym = fmax(worst_sym, e);
        /* diag */
        double dg[150];
        CHECK_OK(rfx_kern_diag(s.k[q], Xv, dg));
        double ed = 0;
        for (size_t i = 0; i < n; i++)
            ed = fmax(ed, fabs(dg[i] - R[i * n + i]) / fmax(1, fabs(R[i * n + i])));
        CHECK_MSG(ed <= 1e-12, "%s: diag %.3g", s.name[q], ed);
    }
    printf("gram vs eval: worst relative difference %.3g (gram), %.3g (gram_sym)\n", worst,
           worst_sym);
    kset_free(&s);
    free(X);
    free(Xc);
    free(Y);
    free(K);
    free(R);
    free(G);
}

static void test_symmetry_and_diagonal(void)
{
    const size_t n = 200, d = 5;
    rfx_test_rng r = {13};
    double *X = rfx_test_matrix(&r, n, d, -2, 2);
    double *K = malloc(n * n * sizeof *K);
    kset s;
    kset_make(&s, d);
    for (size_t q = 0; q < s.n; q++) {
        CHECK_OK(rfx_kern_gram_sym(s.k[q], rfx_cmat_of(X, n, d), rfx_mat_of(K, n, n), 0));
        size_t asym = 0, badiag = 0;
        for (size_t i = 0; i < n; i++) {
            for (size_t j = 0; j < i; j++) asym += K[i * n + j] != K[j * n + i];
            badiag += s.shift[q] && K[i * n + i] != 1.0;
        }
        CHECK_MSG(asym == 0, "%s: %zu asymmetric entries", s.name[q], asym);
        CHECK_MSG(badiag == 0, "%s: %zu diagonal entries differ from 1", s.name[q], badiag);
    }
    kset_free(&s);
    free(K);
    free(X);
}

static void test_near_identical(void)
{
    /* rows far from the origin, pairs differing in the last bit of one
     * coordinate, and exact duplicates; in gram (not only gram_sym) */
    const size_t n = 40, d = 6;
    rfx_test_rng r = {14};
    double *X = rfx_test_matrix(&r, n, d, -1, 1);
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < d; c++) X[i * d + c] += 1000.0 * (double)(c + 1);
    for (size_t i = 1; i < n; i += 2) {
        memcpy(X + i * d, X + (i - 1) * d, d * sizeof *X);
        if (i % 4 == 1) X[i * d + i % d] = nextafter(X[i * d + i % d], INFINITY);
    }
    double *K = malloc(n * n * sizeof *K), *R = malloc(n * n * sizeof *R);
    rfx_kern *ks[4];
    CHECK_OK(rfx_kern_rbf(2.0, &ks[0]));
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_GAUSSIAN, 0, 1e-3, NULL, 0, &ks[1]));
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_MATERN, 0.8, 1e-4, NULL, 0, &ks[2]));
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_MATERN, 1.5, 1e-9, NULL, 0, &ks[3]));
    for (int q = 0; q < 4; q++) {
        CHECK_OK(rfx_kern_gram(ks[q], rfx_cmat_of(X, n, d), rfx_cmat_of(X, n, d),
                               rfx_mat_of(K, n, n), 0));
        gram_eval(ks[q], X, n, X, n, d, R);
        size_t above = 0, notone = 0;
        for (size_t i = 0; i < n; i++) {
            for (size_t j = 0; j < n; j++) above += K[i * n + j] > 1.0;
            notone += K[i * n + i] != 1.0;
        }
        CHECK(above == 0);
        CHECK(notone == 0);
        /* duplicates: exactly 1; last-bit neighbours: as the direct
         * difference says */
        for (size_t i = 1; i < n; i += 2) {
            if (i % 4 == 1)
                CHECK_NEAR(K[i * n + i - 1], R[i * n + i - 1], 1e-12);
            else
                CHECK(K[i * n + i - 1] == 1.0);
        }
        CHECK(max_rel_diff(K, R, n * n) <= 1e-12);
    }
    printf("near-identical rows: matern 1.5 (l = 1e-9) at a last-bit neighbour %.17g\n",
           K[1 * n + 0]);
    for (int q = 0; q < 4; q++) rfx_kern_free(ks[q]);
    free(K);
    free(R);
    free(X);
}

static void test_threads(void)
{
    const size_t n = 300, m = 130, d = 7;
    rfx_test_rng r = {15};
    double *X = rfx_test_matrix(&r, n, d, -1, 1), *Y = rfx_test_matrix(&r, m, d, -1, 1);
    double *K1 = malloc(n * n * sizeof *K1), *K2 = malloc(n * n * sizeof *K2);
    kset s;
    kset_make(&s, d);
    for (size_t q = 0; q < s.n; q++) {
        CHECK_OK(rfx_kern_gram(s.k[q], rfx_cmat_of(X, n, d), rfx_cmat_of(Y, m, d),
                               rfx_mat_of(K1, n, m), 1));
        CHECK_OK(rfx_kern_gram(s.k[q], rfx_cmat_of(X, n, d), rfx_cmat_of(Y, m, d),
                               rfx_mat_of(K2, n, m), 2));
        CHECK_MSG(memcmp(K1, K2, n * m * sizeof *K1) == 0, "%s: gram differs by threads",
                  s.name[q]);
        CHECK_OK(rfx_kern_gram_sym(s.k[q], rfx_cmat_of(X, n, d), rfx_mat_of(K1, n, n), 1));
        CHECK_OK(rfx_kern_gram_sym(s.k[q], rfx_cmat_of(X, n, d), rfx_mat_of(K2, n, n), 2));
        CHECK_MSG(memcmp(K1, K2, n * n * sizeof *K1) == 0, "%s: gram_sym differs by threads",
                  s.name[q]);
    }
    kset_free(&s);
    free(X);
    free(Y);
    free(K1);
    free(K2);
}

static void test_sklearn(void)
{
    const size_t n = 37, m = 29, d = 4;
    rfx_test_rng r = {16};
    double *X = rfx_test_matrix(&r, n, d, -1, 1), *Y = rfx_test_matrix(&r, m, d, -1, 1);
    char path[4096];
    snprintf(path, sizeof path, "%s", rfx_test_tmp("kernels_sklearn.txt"));
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    write_array(f, "X", X, n, d);
    write_array(f, "Y", Y, m, d);
    fclose(f);
    struct {
        const char *args;
        rfx_kern *k;
        int positive; /* entrywise relative comparison */
    } c[9];
    CHECK_OK(rfx_kern_rbf(0.7, &c[0].k));
    c[0].args = "rbf:0.7";
    CHECK_OK(rfx_kern_laplacian(0.45, &c[1].k));
    c[1].args = "laplacian:0.45";
    CHECK_OK(rfx_kern_polynomial(0.6, 1.3, 3, &c[2].k));
    c[2].args = "poly:0.6:1.3:3";
    CHECK_OK(rfx_kern_sigmoid(0.35, 0.2, &c[3].k));
    c[3].args = "sigmoid:0.35:0.2";
    CHECK_OK(rfx_kern_linear(&c[4].k));
    c[4].args = "linear";
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_MATERN, 0.8, 0.9, NULL, 0, &c[5].k));
    c[5].args = "matern:0.8:0.9";
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_MATERN, 3.7, 0.6, NULL, 0, &c[6].k));
    c[6].args = "matern:3.7:0.6";
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_MATERN, 1.5, 1.1, NULL, 0, &c[7].k));
    c[7].args = "matern:1.5:1.1";
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_MATERN, 0.3, 0.5, NULL, 0, &c[8].k));
    c[8].args = "matern:0.3:0.5";
    /* the positive kernels entry by entry, the others against max |K| */
    for (int q = 0; q < 9; q++) c[q].positive = q != 2 && q != 3 && q != 4;
    /* one run of the peer for all nine */
    char args[8192];
    int len = snprintf(args, sizeof args, "gram %s", path);
    for (int q = 0; q < 9; q++)
        len += snprintf(args + len, sizeof args - (size_t)len, " %s", c[q].args);
    double *K = malloc(n * m * sizeof *K), *S = malloc(9 * n * m * sizeof *S);
    int ok = run_peer(args, S, 9 * n * m);
    CHECK_MSG(ok, "scikit-learn run failed: %s", args);
    for (int q = 0; q < 9 && ok; q++) {
        CHECK_OK(rfx_kern_gram(c[q].k, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, m, d),
                               rfx_mat_of(K, n, m), 0));
        const double *Sq = S + (size_t)q * n * m;
        double scale = 0, w = 0;
        for (size_t i = 0; i < n * m; i++) scale = fmax(scale, fabs(Sq[i]));
        for (size_t i = 0; i < n * m; i++) {
            double ref = c[q].positive ? fabs(Sq[i]) : scale;
            w = fmax(w, fabs(K[i] - Sq[i]) / ref);
        }
        CHECK_MSG(w <= 1e-12, "%s: relative difference to scikit-learn %.3g", c[q].args, w);
        printf("scikit-learn %-16s relative difference %.3g\n", c[q].args, w);
    }
    for (int q = 0; q < 9; q++) rfx_kern_free(c[q].k);
    free(K);
    free(S);
    free(X);
    free(Y);
    remove(path);
}

static void test_features_agree(void)
{
    const size_t n = 45, m = 33, d = 3;
    rfx_test_rng r = {17};
    double *X = rfx_test_matrix(&r, n, d, -1, 1), *Y = rfx_test_matrix(&r, m, d, -1, 1);
    double *K = malloc(n * m * sizeof *K), *R = malloc(n * m * sizeof *R);
    double ls[3] = {0.5, 1.2, 2.0};
    rfx_kernel kinds[6] = {RFX_KERNEL_GAUSSIAN, RFX_KERNEL_LAPLACIAN, RFX_KERNEL_CAUCHY,
                           RFX_KERNEL_MATERN,   RFX_KERNEL_MATERN,   RFX_KERNEL_MATERN};
    double nus[6] = {0, 0, 0, 0.5, 1.5, 2.5};
    double worst = 0;
    for (int ard = 0; ard < 2; ard++)
        for (int q = 0; q < 6; q++) {
            rfx_features_params fp = rfx_features_params_default();
            fp.kernel = kinds[q];
            fp.nu = nus[q] > 0 ? nus[q] : 1.5;
            fp.n_features = 16;
            fp.length_scale = 0.7;
            fp.length_scales = ard ? ls : NULL;
            rfx_features *f;
            CHECK_OK(rfx_features_create(&fp, d, &f));
            CHECK_OK(rfx_features_exact_kernel(f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, m, d),
                                               rfx_mat_of(R, n, m)));
            rfx_kern *k;
            CHECK_OK(rfx_kern_shift(kinds[q], fp.nu, 0.7, ard ? ls : NULL, ard ? d : 0, &k));
            CHECK_OK(rfx_kern_gram(k, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, m, d),
                                   rfx_mat_of(K, n, m), 0));
            double e = max_rel_diff(K, R, n * m);
            CHECK_MSG(e <= 1e-12, "kernel %d ard %d: %.3g", q, ard, e);
            worst = fmax(worst, e);
            rfx_kern_free(k);
            rfx_features_free(f);
        }
    printf("shift kernels vs rfx_features_exact_kernel: worst %.3g\n", worst);
    /* the feature kernel is Z_X Z_Y^T */
    rfx_features_params fp = rfx_features_params_default();
    fp.n_features = 300;
    fp.form = RFX_FORM_COS_SIN;
    fp.seed = 3;
    rfx_features *f;
    CHECK_OK(rfx_features_create(&fp, d, &f));
    double *ZX = malloc(n * 300 * sizeof *ZX), *ZY = malloc(m * 300 * sizeof *ZY);
    CHECK_OK(rfx_features_transform(f, rfx_cmat_of(X, n, d), rfx_mat_of(ZX, n, 300)));
    CHECK_OK(rfx_features_transform(f, rfx_cmat_of(Y, m, d), rfx_mat_of(ZY, m, 300)));
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < m; j++) {
            double s = 0;
            for (size_t c = 0; c < 300; c++) s += ZX[i * 300 + c] * ZY[j * 300 + c];
            R[i * m + j] = s;
        }
    rfx_kern *k;
    CHECK_OK(rfx_kern_features(f, &k));
    rfx_features_free(f); /* copied */
    CHECK(rfx_kern_input_dim(k) == d);
    CHECK_OK(rfx_kern_gram(k, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, m, d), rfx_mat_of(K, n, m), 0));
    double e = max_rel_diff(K, R, n * m);
    CHECK(e <= 1e-13);
    printf("feature kernel vs Z Z^T: %.3g\n", e);
    rfx_kern_free(k);
    free(ZX);
    free(ZY);
    free(K);
    free(R);
    free(X);
    free(Y);
}

static void test_bessel(void)
{
    /* K_nu at half-integer orders in closed form:
     * K_1/2 = sqrt(pi/2x) e^-x, K_3/2 = K_1/2 (1 + 1/x),
     * K_5/2 = K_1/2 (1 + 3/x + 3/x^2), K_7/2 = K_1/2 (1 + 6/x + 15/x^2 + 15/x^3) */
    double worst = 0;
    for (double x = 0.01; x < 80; x *= 1.37) {
        double l0 = 0.5 * log(M_PI / (2 * x)) - x;
        double ref[4] = {l0, l0 + log1p(1 / x), l0 + log(1 + 3 / x + 3 / (x * x)),
                         l0 + log(1 + 6 / x + 15 / (x * x) + 15 / (x * x * x))};
        for (int q = 0; q < 4; q++) {
            double v = rfx__bessel_k_log(0.5 + q, x);
            double e = fabs(v - ref[q]) / fmax(1.0, fabs(ref[q]));
            worst = fmax(worst, e);
        }
    }
    CHECK(worst <= 1e-14);
    printf("log K_nu at half-integer orders: worst relative error %.3g\n", worst);
    /* the general path near the closed forms' orders (continuity in nu:
     * dk/dnu is O(1), so a shift of 1e-9 moves k by about 1e-9) */
    worst = 0;
    for (double r = 0.001; r < 6; r *= 1.5)
        for (int q = 0; q < 3; q++) {
            double nu = 0.5 + q;
            worst = fmax(worst, fabs(rfx__matern(nu + 1e-10, r) - rfx__matern(nu, r)));
            worst = fmax(worst, fabs(rfx__matern(nu - 1e-10, r) - rfx__matern(nu, r)));
        }
    CHECK(worst <= 1e-8);
    printf("matern general path vs closed forms at nu +- 1e-10: %.3g\n", worst);
    /* Matern limits: 1 at 0, 0 at infinity, monotone in r */
    CHECK(rfx__matern(3.7, 0) == 1.0 && rfx__matern(0.8, INFINITY) == 0.0);
    for (int q = 0; q < 3; q++) {
        double nu = q == 0 ? 0.3 : q == 1 ? 0.8 : 3.7, prev = 1;
        int mono = 1;
        for (double r = 1e-12; r < 40; r *= 1.3) {
            double v = rfx__matern(nu, r);
            mono &= v <= 1.0 && v >= 0 && v <= prev * (1 + 1e-14);
            prev = v;
        }
        CHECK_MSG(mono, "matern %g: not in [0, 1] or not decreasing (within 1e-14)", nu);
    }
}

static void test_algebra(void)
{
    const size_t n = 70, d = 3;
    rfx_test_rng r = {18};
    double *X = rfx_test_matrix(&r, n, d, -1, 1);
    double *A = malloc(n * n * sizeof *A), *B = malloc(n * n * sizeof *B),
           *C = malloc(n * n * sizeof *C);
    rfx_kern *a, *b, *k;
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_MATERN, 0.8, 0.7, NULL, 0, &a));
    CHECK_OK(rfx_kern_polynomial(0.4, 0.5, 2, &b));
    rfx_cmat Xv = rfx_cmat_of(X, n, d);
    CHECK_OK(rfx_kern_gram_sym(a, Xv, rfx_mat_of(A, n, n), 0));
    CHECK_OK(rfx_kern_gram_sym(b, Xv, rfx_mat_of(B, n, n), 0));
    double w[5] = {0};
    CHECK_OK(rfx_kern_sum(a, b, &k));
    CHECK_OK(rfx_kern_gram_sym(k, Xv, rfx_mat_of(C, n, n), 0));
    for (size_t i = 0; i < n * n; i++) w[0] = fmax(w[0], fabs(C[i] - (A[i] + B[i])));
    rfx_kern_free(k);
    CHECK_OK(rfx_kern_product(a, b, &k));
    CHECK_OK(rfx_kern_gram_sym(k, Xv, rfx_mat_of(C, n, n), 0));
    for (size_t i = 0; i < n * n; i++) w[1] = fmax(w[1], fabs(C[i] - A[i] * B[i]));
    rfx_kern_free(k);
    CHECK_OK(rfx_kern_scale(3.25, b, &k));
    CHECK_OK(rfx_kern_gram_sym(k, Xv, rfx_mat_of(C, n, n), 0));
    for (size_t i = 0; i < n * n; i++) w[2] = fmax(w[2], fabs(C[i] - 3.25 * B[i]));
    rfx_kern_free(k);
    CHECK_OK(rfx_kern_exp(b, &k));
    CHECK_OK(rfx_kern_gram_sym(k, Xv, rfx_mat_of(C, n, n), 0));
    for (size_t i = 0; i < n * n; i++) w[3] = fmax(w[3], fabs(C[i] - exp(B[i])));
    rfx_kern_free(k);
    double phase = -0.2;
    CHECK_OK(rfx_kern_warp(a, weight_fn, &phase, &k));
    CHECK_OK(rfx_kern_gram_sym(k, Xv, rfx_mat_of(C, n, n), 0));
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double fi = weight_fn(&phase, X + i * d, d), fj = weight_fn(&phase, X + j * d, d);
            w[4] = fmax(w[4], fabs(C[i * n + j] - fi * A[i * n + j] * fj));
        }
    rfx_kern_free(k);
    for (int q = 0; q < 5; q++) CHECK_MSG(w[q] <= 1e-15 * 8, "identity %d: %.3g", q, w[q]);
    printf("algebra identities (sum, product, scale, exp, warp): %.2g %.2g %.2g %.2g %.2g\n",
           w[0], w[1], w[2], w[3], w[4]);
    /* exp(linear) is PSD (checked in test_psd); a sum of copies of itself */
    CHECK_OK(rfx_kern_sum(a, a, &k));
    CHECK_OK(rfx_kern_gram_sym(k, Xv, rfx_mat_of(C, n, n), 0));
    size_t bad = 0;
    for (size_t i = 0; i < n * n; i++) bad += C[i] != 2 * A[i];
    CHECK(bad == 0);
    rfx_kern_free(k);
    /* input dimensions through the algebra */
    double ls[3] = {1, 2, 3};
    rfx_kern *ard;
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_GAUSSIAN, 0, 0, ls, 3, &ard));
    CHECK_OK(rfx_kern_product(a, ard, &k));
    CHECK(rfx_kern_input_dim(a) == 0 && rfx_kern_input_dim(k) == 3);
    CHECK(isnan(rfx_kern_eval(k, X, X, 2)));
    CHECK(rfx_kern_eval(k, X, X, 3) == 1.0);
    rfx_kern_free(k);
    rfx_kern_free(ard);
    rfx_kern_free(a);
    rfx_kern_free(b);
    free(A);
    free(B);
    free(C);
    free(X);
}

/* The arc-cosine kernel is the mean of 2 step(u) u^n step(v) v^n over
 * u = w.x + b, v = w.y + b, w ~ N(0, sigma^2 I), b ~ N(0, bias^2) (the ReLU
 * features of order 1): agreement within 5 standard errors of the Monte Carlo
 * mean, and the closed forms at x = y (|x'|^(2n) (2n - 1)!!). */
static void test_arccos(void)
{
    const size_t d = 3, M = 400000;
    const double sigma = 0.9, bias = 0.6;
    const double x[3] = {0.7, -0.4, 1.1}, y[3] = {-0.2, 0.5, 0.9};
    for (unsigned n = 0; n <= 2; n++) {
        rfx_kern *k;
        CHECK_OK(rfx_kern_arccos(n, sigma, bias, &k));
        rfx_test_rng st = {1234 + n};
        double sum = 0, sum2 = 0;
        for (size_t m = 0; m < M; m++) {
            double u = bias * rfx_test_normal(&st), v = u;
            for (size_t i = 0; i < d; i++) {
                double w = sigma * rfx_test_normal(&st);
                u += w * x[i];
                v += w * y[i];
            }
            double f = (u > 0 && v > 0) ? 2.0 * pow(u * v, (double)n) : 0.0;
            sum += f;
            sum2 += f * f;
        }
        double mean = sum / (double)M, se = sqrt((sum2 / (double)M - mean * mean) / (double)M);
        double kv = rfx_kern_eval(k, x, y, d);
        printf("arccos %u: kernel %.6f, Monte Carlo %.6f +- %.6f\n", n, kv, mean, se);
        CHECK_NEAR(kv, mean, 5.0 * se);
        double xx = bias * bias;
        for (size_t i = 0; i < d; i++) xx += sigma * sigma * x[i] * x[i];
        double dfact = n == 0 ? 1.0 : n == 1 ? 1.0 : 3.0;
        CHECK_NEAR(rfx_kern_eval(k, x, x, d), pow(xx, (double)n) * dfact, 1e-13 * pow(xx, (double)n));
        rfx_kern_free(k);
    }
    /* the bilinear kernel: x^T A y, and A that is not PSD or not symmetric */
    const double A[9] = {2, 1, 0, 1, 2, 0, 0, 0, 0.5};
    rfx_kern *b;
    CHECK_OK(rfx_kern_bilinear(A, 3, &b));
    double want = 0;
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 3; j++) want += x[i] * A[i * 3 + j] * y[j];
    CHECK_NEAR(rfx_kern_eval(b, x, y, 3), want, 1e-15);
    rfx_kern_free(b);
    const double notpsd[4] = {1, 2, 2, 1}, notsym[4] = {1, 0.5, 0.2, 1};
    CHECK_STATUS(rfx_kern_bilinear(notpsd, 2, &b), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "least eigenvalue is -1") != NULL);
    CHECK_STATUS(rfx_kern_bilinear(notsym, 2, &b), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "not symmetric") != NULL);
    /* polynomial with coef0 < 0 (as scikit-learn): accepted, not PSD */
    rfx_kern *p;
    CHECK_OK(rfx_kern_polynomial(1.0, -0.5, 1, &p));
    const double z[3] = {0, 0, 0};
    CHECK_NEAR(rfx_kern_eval(p, z, z, 3), -0.5, 0.0);
    rfx_kern_free(p);
}

static void test_errors(void)
{
    rfx_kern *k = NULL, *a, *b;
    double ls[2] = {1, 2}, bad_ls[2] = {1, 0};
    CHECK_STATUS(rfx_kern_rbf(0.0, &k), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_rbf(NAN, &k), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_rbf(1.0, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_laplacian(-1.0, &k), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_polynomial(1.0, NAN, 2, &k), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_arccos(3, 1.0, 0.0, &k), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_arccos(1, 0.0, 0.0, &k), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_arccos(1, 1.0, -1.0, &k), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_bilinear(NULL, 2, &k), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_polynomial(0.0, 0.5, 2, &k), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_polynomial(1.0, 0.5, 2, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_sigmoid(1.0, INFINITY, &k), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_sigmoid(-1.0, 0.0, &k), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_sigmoid(1.0, 0.0, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_linear(NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_delta(NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_features(NULL, &k), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_features(NULL, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_shift((rfx_kernel)9, 1.5, 1.0, NULL, 0, &k), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "kernel") != NULL);
    CHECK_STATUS(rfx_kern_shift(RFX_KERNEL_MATERN, 0.0, 1.0, NULL, 0, &k), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "nu") != NULL);
    CHECK_STATUS(rfx_kern_shift(RFX_KERNEL_MATERN, NAN, 1.0, NULL, 0, &k), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_shift(RFX_KERNEL_GAUSSIAN, 0, 0.0, NULL, 0, &k), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "length_scale") != NULL);
    CHECK_STATUS(rfx_kern_shift(RFX_KERNEL_GAUSSIAN, 0, 1.0, bad_ls, 2, &k), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "length_scales[1]") != NULL);
    CHECK_STATUS(rfx_kern_shift(RFX_KERNEL_GAUSSIAN, 0, 1.0, ls, 0, &k), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_shift(RFX_KERNEL_GAUSSIAN, 0, 1.0, NULL, 0, NULL), RFX_EINVAL);
    CHECK(k == NULL);

    /* algebra */
    double ls3[3] = {1, 1, 1};
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_GAUSSIAN, 0, 0, ls, 2, &a));
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_CAUCHY, 0, 0, ls3, 3, &b));
    CHECK_STATUS(rfx_kern_sum(a, b, &k), RFX_EDIM);
    CHECK_STATUS(rfx_kern_product(a, b, &k), RFX_EDIM);
    CHECK(strstr(rfx_last_error(), "2 and 3") != NULL);
    CHECK_STATUS(rfx_kern_sum(a, NULL, &k), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_product(NULL, b, &k), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_sum(a, a, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_scale(-1.0, a, &k), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_scale(INFINITY, a, &k), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_scale(1.0, NULL, &k), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_exp(NULL, &k), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_exp(a, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_warp(a, NULL, NULL, &k), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_warp(NULL, weight_fn, NULL, &k), RFX_EINVAL);
    CHECK(k == NULL);
    rfx_kern_free(NULL);
    CHECK(rfx_kern_input_dim(NULL) == 0);

    /* eval */
    double x[3] = {0.1, 0.2, 0.3}, y[3] = {0.3, 0.2, 0.1};
    CHECK(isnan(rfx_kern_eval(NULL, x, y, 2)));
    CHECK(isnan(rfx_kern_eval(a, NULL, y, 2)));
    CHECK(isnan(rfx_kern_eval(a, x, NULL, 2)));
    CHECK(isnan(rfx_kern_eval(a, x, y, 3)));
    CHECK(isnan(rfx_kern_eval(a, x, y, 0)));
    CHECK(isfinite(rfx_kern_eval(a, x, y, 2)));

    /* gram */
    double X[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, K[16];
    rfx_kern *rbf;
    CHECK_OK(rfx_kern_rbf(0.1, &rbf));
    rfx_cmat X4x3 = rfx_cmat_of(X, 4, 3), X6x2 = rfx_cmat_of(X, 6, 2);
    CHECK_STATUS(rfx_kern_gram(NULL, X4x3, X4x3, rfx_mat_of(K, 4, 4), 0), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_gram(rbf, X4x3, X4x3, rfx_mat_of(K, 4, 4), -1), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_gram(rbf, X4x3, X6x2, rfx_mat_of(K, 4, 6), 0), RFX_EDIM);
    CHECK_STATUS(rfx_kern_gram(rbf, X4x3, X4x3, rfx_mat_of(K, 4, 3), 0), RFX_EDIM);
    CHECK_STATUS(rfx_kern_gram(rbf, X4x3, X4x3, rfx_mat_of(K, 3, 4), 0), RFX_EDIM);
    CHECK_STATUS(rfx_kern_gram(rbf, X4x3, X4x3, rfx_mat_of(NULL, 4, 4), 0), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_gram(rbf, rfx_cmat_of(NULL, 4, 3), X4x3, rfx_mat_of(K, 4, 4), 0),
                 RFX_EINVAL);
    rfx_cmat bad_stride = {X, 4, 3, 2};
    CHECK_STATUS(rfx_kern_gram(rbf, bad_stride, X4x3, rfx_mat_of(K, 4, 4), 0), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_gram(rbf, rfx_cmat_of(X, 4, 0), rfx_cmat_of(X, 4, 0),
                               rfx_mat_of(K, 4, 4), 0), RFX_EDIM);
    CHECK_STATUS(rfx_kern_gram(a, X4x3, X4x3, rfx_mat_of(K, 4, 4), 0), RFX_EDIM);
    CHECK(strstr(rfx_last_error(), "d = 2") != NULL);
    CHECK_STATUS(rfx_kern_gram_sym(a, X4x3, rfx_mat_of(K, 4, 4), 0), RFX_EDIM);
    CHECK_STATUS(rfx_kern_gram_sym(NULL, X4x3, rfx_mat_of(K, 4, 4), 0), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_gram_sym(rbf, X4x3, rfx_mat_of(K, 4, 4), -2), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_gram_sym(rbf, X4x3, rfx_mat_of(K, 4, 3), 0), RFX_EDIM);
    CHECK_STATUS(rfx_kern_gram_sym(rbf, X4x3, rfx_mat_of(NULL, 4, 4), 0), RFX_EINVAL);
    double Xn[12];
    memcpy(Xn, X, sizeof Xn);
    Xn[7] = NAN;
    for (int q = 0; q < 16; q++) K[q] = -7;
    CHECK_STATUS(rfx_kern_gram(rbf, X4x3, rfx_cmat_of(Xn, 4, 3), rfx_mat_of(K, 4, 4), 0),
                 RFX_EPARSE);
    CHECK(strstr(rfx_last_error(), "row 2, column 1") != NULL);
    CHECK_STATUS(rfx_kern_gram(rbf, rfx_cmat_of(Xn, 4, 3), X4x3, rfx_mat_of(K, 4, 4), 0),
                 RFX_EPARSE);
    Xn[7] = INFINITY;
    CHECK_STATUS(rfx_kern_gram_sym(rbf, rfx_cmat_of(Xn, 4, 3), rfx_mat_of(K, 4, 4), 0),
                 RFX_EPARSE);
    CHECK(K[0] == -7); /* nothing written on error */
    /* zero rows: fine, nothing written */
    CHECK_OK(rfx_kern_gram(rbf, rfx_cmat_of(X, 0, 3), X4x3, rfx_mat_of(K, 0, 4), 0));
    CHECK_OK(rfx_kern_gram_sym(rbf, rfx_cmat_of(X, 0, 3), rfx_mat_of(K, 0, 0), 0));
    /* a warp whose weight is not finite */
    rfx_kern *wk;
    CHECK_OK(rfx_kern_warp(rbf, nan_weight, NULL, &wk));
    double Xw[6] = {0.1, 0.2, 0.9, 0.1, 0.2, 0.3};
    CHECK_STATUS(rfx_kern_gram_sym(wk, rfx_cmat_of(Xw, 3, 2), rfx_mat_of(K, 3, 3), 0),
                 RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "row 1") != NULL);
    CHECK_STATUS(rfx_kern_gram(wk, rfx_cmat_of(Xw, 1, 2), rfx_cmat_of(Xw, 3, 2),
                               rfx_mat_of(K, 1, 3), 0), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "Y row 1") != NULL);
    double dg[4] = {-7, -7, -7, -7};
    CHECK_STATUS(rfx_kern_diag(wk, rfx_cmat_of(Xw, 3, 2), dg), RFX_EINVAL);
    CHECK(dg[0] == -7);
    rfx_kern_free(wk);
    /* diag */
    CHECK_STATUS(rfx_kern_diag(NULL, X4x3, dg), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_diag(rbf, X4x3, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_kern_diag(a, X4x3, dg), RFX_EDIM);
    CHECK_STATUS(rfx_kern_diag(rbf, rfx_cmat_of(Xn, 4, 3), dg), RFX_EPARSE);
    CHECK_OK(rfx_kern_diag(rbf, X4x3, dg));
    CHECK(dg[0] == 1 && dg[3] == 1);
    /* a feature kernel is tied to its map's d */
    rfx_features_params fp = rfx_features_params_default();
    fp.n_features = 8;
    rfx_features *f;
    CHECK_OK(rfx_features_create(&fp, 2, &f));
    CHECK_OK(rfx_kern_features(f, &k));
    CHECK_STATUS(rfx_kern_gram(k, X4x3, X4x3, rfx_mat_of(K, 4, 4), 0), RFX_EDIM);
    CHECK_STATUS(rfx_kern_sum(k, b, &wk), RFX_EDIM);
    rfx_kern_free(k);
    rfx_features_free(f);
    rfx_kern_free(rbf);
    rfx_kern_free(a);
    rfx_kern_free(b);
}

int main(void)
{
    RFX_TEST_RUN(test_psd);
    RFX_TEST_RUN(test_gram_vs_eval);
    RFX_TEST_RUN(test_symmetry_and_diagonal);
    RFX_TEST_RUN(test_near_identical);
    RFX_TEST_RUN(test_threads);
    RFX_TEST_RUN(test_sklearn);
    RFX_TEST_RUN(test_features_agree);
    RFX_TEST_RUN(test_bessel);
    RFX_TEST_RUN(test_algebra);
    RFX_TEST_RUN(test_arccos);
    RFX_TEST_RUN(test_errors);
    return rfx_test_finish("test_kernels");
}
