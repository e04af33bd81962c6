/* SPDX-License-Identifier: BSD-3-Clause */
/* Tensor Sketch, random Maclaurin, additive and skewed chi2 maps
 * (include/rfx/sketch.h): kernel errors that fall like 1/sqrt(D),
 * unbiasedness over seeds, the closed form of the additive chi2 map, FFT
 * against direct convolution, thread-count independence, every error. */
#include "features/sketch_internal.h"
#include "testlib.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static rfx_sketch *make(rfx_sketch_params p, size_t d)
{
    rfx_sketch *s = NULL;
    CHECK_OK(rfx_sketch_create(&p, d, &s));
    return s;
}

/* Z of X (n x d) by the map, malloc'd */
static double *features(const rfx_sketch *s, const double *X, size_t n)
{
    size_t D = rfx_sketch_n_features(s);
    double *Z = malloc(n * D * sizeof *Z);
    CHECK_OK(rfx_sketch_transform(s, rfx_cmat_of(X, n, s->d), rfx_mat_of(Z, n, D)));
    return Z;
}

/* z(x_a).z(x_b): row a of Z (n x D) times row b */
static double zz(const double *Z, size_t D, size_t a, size_t b)
{
    double v = 0;
    for (size_t k = 0; k < D; k++) v += Z[a * D + k] * Z[b * D + k];
    return v;
}

/* K = k(X, X) by the map's exact kernel, malloc'd (n x n) */
static double *exact_gram(const rfx_sketch *s, const double *X, size_t n)
{
    double *K = malloc(n * n * sizeof *K);
    CHECK_OK(rfx_sketch_exact_kernel(s, rfx_cmat_of(X, n, s->d), rfx_cmat_of(X, n, s->d),
                                     rfx_mat_of(K, n, n)));
    return K;
}

/* |K - Z Z^T|_F / |K|_F for the map of p with seed */
static double kernel_error(rfx_sketch_params p, uint64_t seed, const double *X, size_t n,
                           size_t d)
{
    p.seed = seed;
    rfx_sketch *s = make(p, d);
    size_t D = rfx_sketch_n_features(s);
    double *Z = features(s, X, n), *K = exact_gram(s, X, n);
    double num = 0, den = 0;
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < n; b++) {
            double e = K[a * n + b] - zz(Z, D, a, b);
            num += e * e;
            den += K[a * n + b] * K[a * n + b];
        }
    free(Z);
    free(K);
    rfx_sketch_free(s);
    return sqrt(num / den);
}

/* n rows of d entries in [lo, hi), each scaled to unit norm when unit */
static double *data(size_t n, size_t d, double lo, double hi, int unit, unsigned long long seed)
{
    rfx_test_rng r = {seed};
    double *X = rfx_test_matrix(&r, n, d, lo, hi);
    if (unit)
        for (size_t i = 0; i < n; i++) {
            double s = 0;
            for (size_t j = 0; j < d; j++) s += X[i * d + j] * X[i * d + j];
            for (size_t j = 0; j < d; j++) X[i * d + j] /= sqrt(s);
        }
    return X;
}

/* The root mean square error over R seeds at D and at 16 D. Every entry of
 * Z Z^T is unbiased with a variance of order 1/D, so E[err^2] falls like
 * 1/D and the ratio of the RMS errors is 4. The rare hash collisions of
 * Tensor Sketch make err^2 heavy-tailed, so the standard error of the
 * ratio is estimated from the same R draws (delta method) and the test
 * asks |ratio - 4| <= 3 se + 0.25 (0.25 for the higher-order terms of the
 * variance), with se below 0.4 for the test to mean something. */
static void error_rate(const char *name, rfx_sketch_params p, size_t D, const double *X, size_t n,
                       size_t d, double bound16)
{
    enum { R = 96 };
    double m[2] = {0, 0}, q[2] = {0, 0};
    for (uint64_t sd = 1; sd <= R; sd++)
        for (int h = 0; h < 2; h++) {
            p.n_components = h ? 16 * D : D;
            double e = kernel_error(p, 100 * h + sd, X, n, d);
            m[h] += e * e / R;
            q[h] += e * e * e * e / R;
        }
    double ratio = sqrt(m[0] / m[1]), rel = 0;
    for (int h = 0; h < 2; h++) rel += (q[h] - m[h] * m[h]) / (R * m[h] * m[h]);
    double se = 0.5 * ratio * sqrt(fmax(rel, 0));
    printf("  %-24s RMS error D = %4zu: %.4f  D = %5zu: %.4f (bound %.4f)  ratio %.2f +- %.2f\n",
           name, D, sqrt(m[0]), 16 * D, sqrt(m[1]), bound16, ratio, se);
    CHECK_MSG(se < 0.4, "%s: the ratio's standard error %.2f is too large", name, se);
    CHECK_MSG(fabs(ratio - 4) <= 3 * se + 0.25, "%s: error ratio %.3f +- %.3f", name, ratio, se);
    CHECK_MSG(sqrt(m[1]) < bound16, "%s: RMS error %.4f at D = %zu above %.4f", name,
              sqrt(m[1]), 16 * D, bound16);
}

/* Bounds on the RMS relative error sqrt(E|K - Z Z^T|_F^2) / |K|_F from the
 * variance of one entry: Tensor Sketch Var <= (3^p - 1) |u_x|^2p |u_y|^2p / D
 * (Pham & Pagh 2013; Avron, Nguyen & Woodruff 2014, Lemma 2), u = [sqrt(gamma)
 * x, sqrt(coef0)]; cos-bias random Fourier features Var <= 1.5 / D (the
 * product 2 cos(a) cos(b) of two features has second moment <= 1.5). */
static double error_bound(rfx_sketch_params p, size_t D, const double *X, size_t n, size_t d)
{
    p.n_components = D;
    rfx_sketch *s = make(p, d);
    double *K = exact_gram(s, X, n), kf = 0, var = 0, un = 0;
    for (size_t e = 0; e < n * n; e++) kf += K[e] * K[e];
    for (size_t a = 0; a < n; a++) {
        double u2 = p.coef0;
        for (size_t j = 0; j < d; j++) u2 += p.gamma * X[a * d + j] * X[a * d + j];
        un += pow(u2, p.degree);
    }
    if (p.kind == RFX_SKETCH_TENSOR) var = (pow(3, p.degree) - 1) / (double)D * un * un;
    else var = 1.5 / (double)D * (double)(n * n);
    free(K);
    rfx_sketch_free(s);
    return sqrt(var / kf);
}

static void test_error_falls_like_one_over_sqrt_D(void)
{
    size_t n = 40, d = 16;
    double *X = data(n, d, -1, 1, 1, 11), *H = data(n, d, 0.05, 1, 0, 12);
    rfx_sketch_params p = rfx_sketch_params_default();
    /* D = 64 convolves directly, D = 1024 by FFT */
    error_rate("tensor degree 2", p, 64, X, n, d, error_bound(p, 1024, X, n, d));
    p.coef0 = 1.0;
    p.degree = 3;
    error_rate("tensor degree 3 coef0 1", p, 64, X, n, d, error_bound(p, 1024, X, n, d));
    /* no closed variance bound: 1.25 x the RMS errors measured over 96
       seeds (0.0594, 0.0388), whose standard errors are below 3% */
    p = rfx_sketch_params_default();
    p.kind = RFX_SKETCH_MACLAURIN;
    p.coef0 = 1.0;
    error_rate("maclaurin polynomial", p, 256, X, n, d, 0.075);
    p.dot_kernel = RFX_DOT_KERNEL_EXPONENTIAL;
    error_rate("maclaurin exponential", p, 256, X, n, d, 0.05);
    p = rfx_sketch_params_default();
    p.kind = RFX_SKETCH_SKEWED_CHI2;
    error_rate("skewed chi2", p, 64, H, n, d, error_bound(p, 1024, H, n, d));
    free(X);
    free(H);
}

/* The mean of z(x).z(y) over S seeds is k(x, y): every entry within 5
 * standard errors (estimated from the same S draws). */
static void unbiased(const char *name, rfx_sketch_params p, const double *X, size_t n, size_t d)
{
    enum { S = 600 };
    double *sum = calloc(n * n, sizeof *sum), *sq = calloc(n * n, sizeof *sq);
    double *K = NULL;
    rfx_sketch *s = NULL;
    for (uint64_t sd = 0; sd < S; sd++) {
        p.seed = 1000 + sd;
        s = make(p, d);
        size_t D = rfx_sketch_n_features(s);
        double *Z = features(s, X, n);
        for (size_t a = 0; a < n; a++)
            for (size_t b = 0; b < n; b++) {
                double v = zz(Z, D, a, b);
                sum[a * n + b] += v;
                sq[a * n + b] += v * v;
            }
        free(Z);
        if (sd + 1 < S) rfx_sketch_free(s);
    }
    K = exact_gram(s, X, n);
    rfx_sketch_free(s);
    double worst = 0;
    for (size_t e = 0; e < n * n; e++) {
        double m = sum[e] / S, se = sqrt(fmax(sq[e] / S - m * m, 0) / S);
        double z = fabs(m - K[e]) / fmax(se, 1e-15);
        if (z > worst) worst = z;
        CHECK_MSG(fabs(m - K[e]) <= 5 * se + 1e-12, "%s: entry %zu mean %.6f, kernel %.6f, "
                  "standard error %.2g", name, e, m, K[e], se);
    }
    printf("  %-28s largest |mean - k| / se = %.2f\n", name, worst);
    free(sum);
    free(sq);
    free(K);
}

static void test_unbiased_over_seeds(void)
{
    size_t n = 4, d = 5;
    double *X = data(n, d, -1, 1, 1, 21), *H = data(n, d, 0.05, 1, 0, 22);
    static const struct {
        const char *name;
        rfx_sketch_kind kind;
        rfx_dot_kernel dot;
        size_t D;
        int degree;
        double gamma, coef0, skewedness;
    } cases[] = {
        {"tensor (direct, D = 8)", RFX_SKETCH_TENSOR, RFX_DOT_KERNEL_POLYNOMIAL, 8, 2, 2.0, 0.5, 1},
        {"tensor (FFT, D = 256)", RFX_SKETCH_TENSOR, RFX_DOT_KERNEL_POLYNOMIAL, 256, 3, 2.0, 0.5, 1},
        {"maclaurin polynomial", RFX_SKETCH_MACLAURIN, RFX_DOT_KERNEL_POLYNOMIAL, 16, 2, 1.0, 1.0, 1},
        {"maclaurin exponential", RFX_SKETCH_MACLAURIN, RFX_DOT_KERNEL_EXPONENTIAL, 16, 2, 1.5, 1.0,
         1},
        {"skewed chi2", RFX_SKETCH_SKEWED_CHI2, RFX_DOT_KERNEL_POLYNOMIAL, 8, 2, 1.0, 0.0, 0.5},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        rfx_sketch_params p = rfx_sketch_params_default();
        p.kind = cases[c].kind;
        p.dot_kernel = cases[c].dot;
        p.n_components = cases[c].D;
        p.degree = cases[c].degree;
        p.gamma = cases[c].gamma;
        p.coef0 = cases[c].coef0;
        p.skewedness = cases[c].skewedness;
        unbiased(cases[c].name, p, p.kind == RFX_SKETCH_SKEWED_CHI2 ? H : X, n, d);
    }
    free(X);
    free(H);
}

/* Tensor Sketch without coef0 at degree 1 is a count sketch: entry k of
 * z(x) is sum_{h(j) = k} s(j) sqrt(gamma) x_j; and the FFT and direct
 * convolutions of one map agree to rounding. */
static void test_tensor_convolutions(void)
{
    size_t n = 6, d = 7;
    double *X = data(n, d, -1, 1, 0, 31);
    rfx_sketch_params p = rfx_sketch_params_default();
    p.degree = 1;
    p.gamma = 4.0;
    p.n_components = 5;
    rfx_sketch *s = make(p, d);
    double *Z = features(s, X, n);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < 5; k++) {
            double v = 0;
            for (size_t j = 0; j < d; j++)
                if (s->hash[j] == k) v += s->sign[j] * 2.0 * X[i * d + j];
            CHECK_NEAR(Z[i * 5 + k], v, 1e-15);
        }
    free(Z);
    rfx_sketch_free(s);

    p.degree = 4;
    p.coef0 = 0.7;
    p.n_components = 512;
    s = make(p, d);
    CHECK(s->use_fft);
    double *Zf = features(s, X, n);
    s->use_fft = 0;
    double *Zd = features(s, X, n), worst = 0;
    for (size_t e = 0; e < n * 512; e++) worst = fmax(worst, fabs(Zf[e] - Zd[e]));
    CHECK_MSG(worst < 1e-12, "FFT and direct convolutions differ by %.3g", worst);
    free(Zf);
    free(Zd);
    rfx_sketch_free(s);
    free(X);
}

/* Each row's features are bitwise the same for any thread count and alone. */
static void test_threads_and_rows(void)
{
    size_t n = 400, d = 6; /* enough work for the threads to start */
    double *X = data(n, d, 0.01, 1, 0, 41);
    for (int kind = 0; kind < 4; kind++) {
        rfx_sketch_params p = rfx_sketch_params_default();
        p.kind = (rfx_sketch_kind)kind;
        p.n_components = kind == 0 ? 256 : 50;
        p.coef0 = 1.0;
        p.n_threads = 1;
        rfx_sketch *s1 = make(p, d);
        p.n_threads = 3;
        rfx_sketch *s3 = make(p, d);
        size_t D = rfx_sketch_n_features(s1);
        double *Z1 = features(s1, X, n), *Z3 = features(s3, X, n), *z = malloc(D * sizeof *z);
        CHECK_MSG(memcmp(Z1, Z3, n * D * sizeof *Z1) == 0, "kind %d: threads change bits", kind);
        CHECK_OK(rfx_sketch_transform(s3, rfx_cmat_of(X + 5 * d, 1, d), rfx_mat_of(z, 1, D)));
        CHECK_MSG(memcmp(z, Z1 + 5 * D, D * sizeof *z) == 0, "kind %d: a row alone differs", kind);
        free(Z1);
        free(Z3);
        free(z);
        rfx_sketch_free(s1);
        rfx_sketch_free(s3);
    }
    free(X);
}

/* The additive chi2 map is deterministic: z(x).z(y) is the rectangle rule
 * sum_i sqrt(x_i y_i) L [1 + 2 sum_{0<j<n} sech(pi j L) cos(j L log(x_i /
 * y_i))] (to rounding), and it differs from the kernel by at most
 * e(n, L) sum_i sqrt(x_i y_i), e = max over |t| <= 3.1 of |L [1 + 2 sum
 * sech(pi j L) cos(j L t)] - sech(t / 2)|: 0.394, 0.1034, 0.0500 for the
 * defaults of n = 1, 2, 3 (inputs in [0.05, 1]: |log(x / y)| <= 3.0). */
static void test_additive_chi2(void)
{
    size_t n = 12, d = 5;
    double *X = data(n, d, 0.05, 1, 0, 51);
    X[3 * d + 2] = 0.0; /* zeros map to zero features */
    X[7 * d + 2] = 0.0;
    const double bound[3] = {0.395, 0.1035, 0.0501}, dflt[3] = {0.8, 0.5, 0.4};
    for (int steps = 1; steps <= 3; steps++) {
        rfx_sketch_params p = rfx_sketch_params_default();
        p.kind = RFX_SKETCH_ADDITIVE_CHI2;
        p.sample_steps = steps;
        rfx_sketch *s = make(p, d);
        double L = rfx_sketch_get_params(s).sample_interval;
        CHECK_NEAR(L, dflt[steps - 1], 0);
        size_t D = rfx_sketch_n_features(s);
        CHECK(D == d * (size_t)(2 * steps - 1));
        double *Z = features(s, X, n), *K = exact_gram(s, X, n);
        double worst_form = 0, worst_k = 0;
        for (size_t a = 0; a < n; a++)
            for (size_t b = 0; b < n; b++) {
                double v = zz(Z, D, a, b), form = 0, mass = 0;
                for (size_t i = 0; i < d; i++) {
                    double x = X[a * d + i], y = X[b * d + i];
                    if (x == 0 || y == 0) continue;
                    double r = 1;
                    for (int j = 1; j < steps; j++)
                        r += 2 / cosh(M_PI * j * L) * cos(j * L * log(x / y));
                    form += sqrt(x * y) * L * r;
                    mass += sqrt(x * y);
                }
                worst_form = fmax(worst_form, fabs(v - form));
                worst_k = fmax(worst_k, fabs(v - K[a * n + b]) / fmax(mass, 1e-300));
            }
        CHECK_MSG(worst_form < 1e-12, "steps %d: map and closed form differ by %.3g", steps,
                  worst_form);
        CHECK_MSG(worst_k <= bound[steps - 1], "steps %d: kernel error %.4f per unit mass", steps,
                  worst_k);
        printf("  additive chi2 n = %d, L = %.1f: |ZZ^T - K| / sum sqrt(xy) <= %.4f\n", steps, L,
               worst_k);
        CHECK(Z[3 * D + 2] == 0.0);
        free(Z);
        free(K);
        rfx_sketch_free(s);
    }
    free(X);
}

static int names_field(const char *field)
{
    return strstr(rfx_last_error(), field) != NULL;
}

static void bad_param(rfx_sketch_params p, size_t d, rfx_status want, const char *field)
{
    rfx_sketch *s = (rfx_sketch *)&p; /* left untouched on error */
    CHECK_STATUS(rfx_sketch_create(&p, d, &s), want);
    CHECK(s == (rfx_sketch *)&p);
    CHECK_MSG(names_field(field), "message '%s' does not name %s", rfx_last_error(), field);
}

static void test_errors(void)
{
    rfx_sketch_params p0 = rfx_sketch_params_default(), p;
    rfx_sketch *s = NULL;
    CHECK_STATUS(rfx_sketch_create(NULL, 3, &s), RFX_EINVAL);
    CHECK_STATUS(rfx_sketch_create(&p0, 3, NULL), RFX_EINVAL);
    bad_param(p0, 0, RFX_EDIM, "dimension");
    p = p0; p.kind = (rfx_sketch_kind)9; bad_param(p, 3, RFX_EINVAL, "kind");
    p = p0; p.n_components = 0; bad_param(p, 3, RFX_EINVAL, "n_components");
    p = p0; p.gamma = 0; bad_param(p, 3, RFX_EINVAL, "gamma");
    p = p0; p.gamma = NAN; bad_param(p, 3, RFX_EINVAL, "gamma");
    p = p0; p.coef0 = -1; bad_param(p, 3, RFX_EINVAL, "coef0");
    p = p0; p.degree = 0; bad_param(p, 3, RFX_EINVAL, "degree");
    p = p0; p.n_threads = -1; bad_param(p, 3, RFX_EINVAL, "n_threads");
    p = p0; p.kind = RFX_SKETCH_MACLAURIN; p.dot_kernel = (rfx_dot_kernel)7;
    bad_param(p, 3, RFX_EINVAL, "dot_kernel");
    p = p0; p.kind = RFX_SKETCH_SKEWED_CHI2; p.skewedness = 0;
    bad_param(p, 3, RFX_EINVAL, "skewedness");
    p = p0; p.kind = RFX_SKETCH_ADDITIVE_CHI2; p.sample_steps = 0;
    bad_param(p, 3, RFX_EINVAL, "sample_steps");
    p.sample_steps = 4;
    bad_param(p, 3, RFX_EINVAL, "sample_interval");
    p.sample_interval = -0.5;
    bad_param(p, 3, RFX_EINVAL, "sample_interval");
    p.sample_interval = 0.3; /* n > 3 with an interval is fine */
    s = make(p, 3);
    CHECK(rfx_sketch_n_features(s) == 21);
    CHECK(rfx_sketch_input_dim(s) == 3);
    /* inputs: negative (additive), at or below -c (skewed), non-finite, shapes */
    double X[6] = {0.1, 0.2, 0.3, 0.4, -1e-3, 0.6}, Z[42], K[4];
    CHECK_STATUS(rfx_sketch_transform(s, rfx_cmat_of(X, 2, 3), rfx_mat_of(Z, 2, 21)), RFX_EPARSE);
    CHECK_MSG(names_field("row 1, column 1"), "%s", rfx_last_error());
    CHECK_STATUS(rfx_sketch_exact_kernel(s, rfx_cmat_of(X, 1, 3), rfx_cmat_of(X, 2, 3),
                                         rfx_mat_of(K, 1, 2)), RFX_EPARSE);
    CHECK_MSG(names_field("Y: row 1, column 1"), "%s", rfx_last_error());
    X[4] = 0.5;
    CHECK_STATUS(rfx_sketch_transform(s, rfx_cmat_of(X, 2, 3), rfx_mat_of(Z, 2, 20)), RFX_EDIM);
    CHECK_STATUS(rfx_sketch_transform(s, rfx_cmat_of(X, 3, 2), rfx_mat_of(Z, 3, 21)), RFX_EDIM);
    CHECK_STATUS(rfx_sketch_exact_kernel(s, rfx_cmat_of(X, 2, 3), rfx_cmat_of(X, 2, 3),
                                         rfx_mat_of(K, 1, 2)), RFX_EDIM);
    CHECK_STATUS(rfx_sketch_transform(NULL, rfx_cmat_of(X, 2, 3), rfx_mat_of(Z, 2, 21)),
                 RFX_EINVAL);
    rfx_sketch_free(s);
    p = p0; p.kind = RFX_SKETCH_SKEWED_CHI2; p.skewedness = 0.5; p.n_components = 7;
    s = make(p, 3);
    X[2] = -0.5;
    CHECK_STATUS(rfx_sketch_transform(s, rfx_cmat_of(X, 2, 3), rfx_mat_of(Z, 2, 7)), RFX_EPARSE);
    CHECK_MSG(names_field("row 0, column 2"), "%s", rfx_last_error());
    X[2] = -0.49;
    CHECK_OK(rfx_sketch_transform(s, rfx_cmat_of(X, 2, 3), rfx_mat_of(Z, 2, 7)));
    X[3] = INFINITY;
    CHECK_STATUS(rfx_sketch_transform(s, rfx_cmat_of(X, 2, 3), rfx_mat_of(Z, 2, 7)), RFX_EPARSE);
    CHECK_MSG(names_field("row 1, column 0"), "%s", rfx_last_error());
    rfx_sketch_free(s);
    rfx_sketch_free(NULL);
    /* names */
    rfx_sketch_kind k;
    rfx_dot_kernel dk;
    CHECK_OK(rfx_sketch_kind_from_name("skewed-chi2", &k));
    CHECK(k == RFX_SKETCH_SKEWED_CHI2);
    CHECK(strcmp(rfx_sketch_kind_name(RFX_SKETCH_ADDITIVE_CHI2), "additive-chi2") == 0);
    CHECK_OK(rfx_dot_kernel_from_name("exponential", &dk));
    CHECK(dk == RFX_DOT_KERNEL_EXPONENTIAL);
    CHECK_STATUS(rfx_dot_kernel_from_name("cosine", &dk), RFX_EINVAL);
    CHECK_STATUS(rfx_sketch_kind_from_name("fourier", &k), RFX_EINVAL);
}

int main(void)
{
    RFX_TEST_RUN(test_errors);
    RFX_TEST_RUN(test_tensor_convolutions);
    RFX_TEST_RUN(test_threads_and_rows);
    RFX_TEST_RUN(test_additive_chi2);
    RFX_TEST_RUN(test_unbiased_over_seeds);
    RFX_TEST_RUN(test_error_falls_like_one_over_sqrt_D);
    return rfx_test_finish("sketch");
}
