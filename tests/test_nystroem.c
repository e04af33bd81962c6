/* SPDX-License-Identifier: BSD-3-Clause */
/* Nystroem features (rfx/nystroem.h):
 *  - on the landmarks Z Z^T reproduces K_LL (1e-10), kernel values written
 *    out here entry by entry;
 *  - on other points z(x).z(y) equals k(x, L) K_LL^-1 k(L, y), solved here
 *    by a Cholesky factorisation (LAPACK dpotrf/dpotrs), to 1e-10;
 *  - duplicated landmarks: the rank drops by the duplicates and the map
 *    equals the one of the distinct landmarks (the pseudo-inverse);
 *  - scikit-learn's Nystroem fitted on the same landmarks (RBF and
 *    Laplacian kernels): the same Z Z^T (1e-10) and, columns matched
 *    through its component_indices_, the same Z;
 *  - the kernel approximation error |K - Z Z^T|_F / |K|_F falls as
 *    n_components grows;
 *  - the landmark draw: distinct rows, seeded, uniform inclusion
 *    frequencies;
 *  - bitwise identical transforms for 1 and 2 threads; every error path. */
#include "internal.h"
#include "kernels/kern_internal.h"
#include "rfx/nystroem.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define CHECK_ERR(call, status, needle)                                                    \
    do {                                                                                   \
        CHECK_STATUS(call, status);                                                        \
        CHECK_MSG(strstr(rfx_last_error(), needle) != NULL, "message '%s' lacks '%s'",    \
                  rfx_last_error(), needle);                                               \
    } while (0)

/* exp(-gamma |x - y|^2) or exp(-gamma |x - y|_1), written out */
static double kref(int laplacian, double gamma, const double *x, const double *y, size_t d)
{
    double s = 0;
    for (size_t c = 0; c < d; c++) s += laplacian ? fabs(x[c] - y[c]) : (x[c] - y[c]) * (x[c] - y[c]);
    return exp(-gamma * s);
}

static double *kref_matrix(int lap, double gamma, const double *A, size_t na, const double *B,
                           size_t nb, size_t d)
{
    double *K = malloc(na * nb * sizeof *K);
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++) K[i * nb + j] = kref(lap, gamma, A + i * d, B + j * d, d);
    return K;
}

/* G = A B^T for row-major A (na x m), B (nb x m) */
static double *abt(const double *A, size_t na, const double *B, size_t nb, size_t m)
{
    double *G = malloc(na * nb * sizeof *G);
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++) {
            double s = 0;
            for (size_t c = 0; c < m; c++) s += A[i * m + c] * B[j * m + c];
            G[i * nb + j] = s;
        }
    return G;
}

static double max_diff(const double *a, const double *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

static double *transform(const rfx_nystroem *ny, const double *X, size_t n, size_t d)
{
    size_t m = rfx_nystroem_output_dim(ny);
    double *Z = malloc(n * m * sizeof *Z + 8);
    CHECK_OK(rfx_nystroem_transform(ny, rfx_cmat_of(X, n, d), rfx_mat_of(Z, n, m)));
    return Z;
}

/* k(X, L) K_LL^-1 k(L, Y) by Cholesky */
static double *nystroem_ref(int lap, double gamma, const double *L, size_t m, const double *X,
                            size_t nx, const double *Y, size_t ny, size_t d)
{
    double *K = kref_matrix(lap, gamma, L, m, L, m, d);
    double *KXL = kref_matrix(lap, gamma, X, nx, L, m, d);
    double *KYL = kref_matrix(lap, gamma, Y, ny, L, m, d);
    int mm = (int)m, nn = (int)ny, info = 0;
    dpotrf_("L", &mm, K, &mm, &info, 1);
    CHECK(info == 0);
    /* column-major m x ny right-hand side: column s = k(L, y_s) = row s of KYL */
    dpotrs_("L", &mm, &nn, K, &mm, KYL, &mm, &info, 1);
    CHECK(info == 0);
    double *R = abt(KXL, nx, KYL, ny, m);
    free(K);
    free(KXL);
    free(KYL);
    return R;
}

/* ---- exactness on the landmarks and the closed form off them --------------- */

static void test_closed_form(void)
{
    const size_t n = 300, d = 3, m = 40, nt = 50;
    const double gamma = 10.0;
    rfx_test_rng rng = {1};
    double *X = rfx_test_matrix(&rng, n, d, 0, 1), *Xt = rfx_test_matrix(&rng, nt, d, 0, 1);
    rfx_kern *k = NULL;
    CHECK_OK(rfx_kern_rbf(gamma, &k));
    rfx_nystroem *ny = NULL;
    CHECK_OK(rfx_nystroem_fit(k, rfx_cmat_of(X, n, d), m, 42, 2, &ny));
    if (!ny) return;
    CHECK(rfx_nystroem_n_components(ny) == m && rfx_nystroem_output_dim(ny) == m);
    CHECK(rfx_nystroem_input_dim(ny) == d && rfx_nystroem_rank(ny) == m);
    rfx_cmat L = rfx_nystroem_landmarks(ny);
    CHECK(L.rows == m && L.cols == d && L.stride == d);
    const double *lam = rfx_nystroem_eigenvalues(ny);
    printf("  K_LL eigenvalues %.3g .. %.3g\n", lam[0], lam[m - 1]);
    /* on the landmarks */
    double *ZL = transform(ny, L.data, m, d);
    double *G = abt(ZL, m, ZL, m, m), *K = kref_matrix(0, gamma, L.data, m, L.data, m, d);
    double e_land = max_diff(G, K, m * m);
    CHECK_MSG(e_land <= 1e-10, "landmarks: |Z Z^T - K_LL| = %.3g", e_land);
    /* off them: training rows against test rows */
    double *ZX = transform(ny, X, n, d), *ZT = transform(ny, Xt, nt, d);
    double *A = abt(ZX, n, ZT, nt, m);
    double *R = nystroem_ref(0, gamma, L.data, m, X, n, Xt, nt, d);
    double e_off = max_diff(A, R, n * nt);
    CHECK_MSG(e_off <= 1e-10, "other points: |Z Z^T - K_XL K_LL^-1 K_LY| = %.3g", e_off);
    /* N is symmetric, and N K_LL N = I (full rank) */
    rfx_cmat N = rfx_nystroem_normalization(ny);
    CHECK(N.rows == m && N.cols == m);
    double asym = 0;
    for (size_t a = 0; a < m; a++)
        for (size_t b = 0; b < m; b++) asym = fmax(asym, fabs(N.data[a * m + b] - N.data[b * m + a]));
    CHECK(asym == 0);
    printf("  landmarks %.2e, other points %.2e (max abs error)\n", e_land, e_off);
    free(ZL);
    free(G);
    free(K);
    free(ZX);
    free(ZT);
    free(A);
    free(R);
    rfx_nystroem_free(ny);
    rfx_kern_free(k);
    free(X);
    free(Xt);
}

/* ---- duplicated landmarks: the pseudo-inverse --------------------------------- */

static void test_duplicates(void)
{
    const size_t d = 2, mu = 9, m = 12, nt = 30;
    const double gamma = 8.0;
    rfx_test_rng rng = {3};
    double *U = rfx_test_matrix(&rng, mu, d, 0, 1), *Xt = rfx_test_matrix(&rng, nt, d, 0, 1);
    double L[24];
    memcpy(L, U, mu * d * sizeof(double));
    for (size_t a = 0; a < 3; a++) memcpy(L + (mu + a) * d, U + (2 * a) * d, d * sizeof(double));
    rfx_kern *k = NULL;
    CHECK_OK(rfx_kern_rbf(gamma, &k));
    rfx_nystroem *ny = NULL;
    CHECK_OK(rfx_nystroem_fit_landmarks(k, rfx_cmat_of(L, m, d), 1, &ny));
    if (!ny) return;
    CHECK_MSG(rfx_nystroem_rank(ny) == mu, "rank %zu, expected %zu", rfx_nystroem_rank(ny), mu);
    CHECK(rfx_nystroem_landmark_indices(ny) == NULL);
    double *ZL = transform(ny, L, m, d);
    double *G = abt(ZL, m, ZL, m, m), *K = kref_matrix(0, gamma, L, m, L, m, d);
    double e_land = max_diff(G, K, m * m);
    CHECK_MSG(e_land <= 1e-10, "duplicated landmarks: |Z Z^T - K_LL| = %.3g", e_land);
    double *ZT = transform(ny, Xt, nt, d), *A = abt(ZT, nt, ZT, nt, m);
    double *R = nystroem_ref(0, gamma, U, mu, Xt, nt, Xt, nt, d);
    double e_off = max_diff(A, R, nt * nt);
    CHECK_MSG(e_off <= 1e-10, "duplicated landmarks, other points: %.3g", e_off);
    printf("  12 landmarks with 3 duplicates: rank %zu, errors %.2e / %.2e\n",
           rfx_nystroem_rank(ny), e_land, e_off);
    free(ZL);
    free(G);
    free(K);
    free(ZT);
    free(A);
    free(R);
    rfx_nystroem_free(ny);
    rfx_kern_free(k);
    free(U);
    free(Xt);
}

/* ---- scikit-learn ------------------------------------------------------------- */

static int write_matrix(FILE *fp, const double *A, size_t r, size_t c)
{
    fprintf(fp, "%zu %zu\n", r, c);
    for (size_t i = 0; i < r * c; i++) fprintf(fp, "%.17g\n", A[i]);
    return 0;
}

static const char *SKLEARN_SCRIPT =
    "import sys, numpy as np\n"
    "try:\n"
    "    from sklearn.kernel_approximation import Nystroem\n"
    "except ImportError:\n"
    "    sys.exit(77)\n"
    "def read(f):\n"
    "    r, c = map(int, f.readline().split())\n"
    "    return np.array([float(f.readline()) for _ in range(r * c)]).reshape(r, c)\n"
    "with open(sys.argv[1]) as f:\n"
    "    kern, gamma = f.readline().split()\n"
    "    L = read(f); X = read(f)\n"
    "ny = Nystroem(kernel=kern, gamma=float(gamma), n_components=L.shape[0], random_state=0)\n"
    "Z = ny.fit(L).transform(X)\n"
    "with open(sys.argv[2], 'w') as f:\n"
    "    for i in ny.component_indices_: f.write('%d\\n' % i)\n"
    "    for v in Z.ravel(): f.write('%.17g\\n' % v)\n";

static void compare_sklearn(int lap, double gamma)
{
    const size_t d = 3, m = 25, n = 60;
    rfx_test_rng rng = {17};
    double *L = rfx_test_matrix(&rng, m, d, -1, 1), *X = rfx_test_matrix(&rng, n, d, -1, 1);
    rfx_kern *k = NULL;
    if (lap) CHECK_OK(rfx_kern_laplacian(gamma, &k));
    else CHECK_OK(rfx_kern_rbf(gamma, &k));
    rfx_nystroem *ny = NULL;
    CHECK_OK(rfx_nystroem_fit_landmarks(k, rfx_cmat_of(L, m, d), 0, &ny));
    if (!ny) return;
    double *Z = transform(ny, X, n, d);
    char in[4096], outp[4096], py[4096], cmd[3 * 4096 + 64];
    snprintf(in, sizeof in, "%s", rfx_test_tmp(lap ? "nys_lap_in.txt" : "nys_rbf_in.txt"));
    snprintf(outp, sizeof outp, "%s", rfx_test_tmp(lap ? "nys_lap_out.txt" : "nys_rbf_out.txt"));
    snprintf(py, sizeof py, "%s", rfx_test_tmp("nys_sklearn.py"));
    FILE *fp = fopen(in, "w");
    FILE *fs = fopen(py, "w");
    CHECK(fp && fs);
    if (!fp || !fs) return;
    fprintf(fp, "%s %.17g\n", lap ? "laplacian" : "rbf", gamma);
    write_matrix(fp, L, m, d);
    write_matrix(fp, X, n, d);
    fclose(fp);
    fputs(SKLEARN_SCRIPT, fs);
    fclose(fs);
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s %s", py, in, outp);
    int rc = system(cmd);
    if (rc != 0 && WEXITSTATUS(rc) == 77) {
        printf("  scikit-learn is not installed: comparison not run\n");
    } else {
        CHECK_MSG(rc == 0, "python3 failed (%d)", rc);
        FILE *fr = fopen(outp, "r");
        CHECK(fr != NULL);
        size_t idx[25];
        double *Zs = malloc(n * m * sizeof *Zs);
        int ok = fr != NULL;
        for (size_t a = 0; ok && a < m; a++) ok = fscanf(fr, "%zu", &idx[a]) == 1 && idx[a] < m;
        for (size_t i = 0; ok && i < n * m; i++) ok = fscanf(fr, "%lg", &Zs[i]) == 1;
        CHECK(ok);
        if (fr) fclose(fr);
        if (ok) {
            double *G = abt(Z, n, Z, n, m), *Gs = abt(Zs, n, Zs, n, m);
            double eg = max_diff(G, Gs, n * n);
            /* column c of scikit-learn's Z belongs to landmark idx[c] */
            double ez = 0;
            for (size_t i = 0; i < n; i++)
                for (size_t c = 0; c < m; c++)
                    ez = fmax(ez, fabs(Zs[i * m + c] - Z[i * m + idx[c]]));
            CHECK_MSG(eg <= 1e-10, "Z Z^T differs from scikit-learn's by %.3g", eg);
            CHECK_MSG(ez <= 1e-8, "Z differs from scikit-learn's by %.3g", ez);
            printf("  scikit-learn Nystroem(%s, gamma %g): Z Z^T to %.2e, Z to %.2e (smallest "
                   "eigenvalue %.3g)\n",
                   lap ? "laplacian" : "rbf", gamma, eg, ez, rfx_nystroem_eigenvalues(ny)[0]);
            free(G);
            free(Gs);
        }
        free(Zs);
    }
    remove(in);
    remove(outp);
    remove(py);
    free(Z);
    rfx_nystroem_free(ny);
    rfx_kern_free(k);
    free(L);
    free(X);
}

static void test_sklearn(void)
{
    compare_sklearn(0, 1.5);
    compare_sklearn(1, 0.7);
}

/* ---- the approximation improves with n_components ------------------------------ */

static void test_error_falls(void)
{
    const size_t n = 400, d = 2;
    const double gamma = 3.0;
    rfx_test_rng rng = {5};
    double *X = rfx_test_matrix(&rng, n, d, 0, 1);
    double *K = kref_matrix(0, gamma, X, n, X, n, d);
    double normK = 0;
    for (size_t i = 0; i < n * n; i++) normK += K[i] * K[i];
    normK = sqrt(normK);
    rfx_kern *k = NULL;
    CHECK_OK(rfx_kern_rbf(gamma, &k));
    const size_t ms[4] = {5, 10, 20, 40};
    double err[4];
    for (int r = 0; r < 4; r++) {
        rfx_nystroem *ny = NULL;
        CHECK_OK(rfx_nystroem_fit(k, rfx_cmat_of(X, n, d), ms[r], 7, 0, &ny));
        if (!ny) return;
        double *Z = transform(ny, X, n, d), *G = abt(Z, n, Z, n, ms[r]);
        double e = 0;
        for (size_t i = 0; i < n * n; i++) e += (K[i] - G[i]) * (K[i] - G[i]);
        err[r] = sqrt(e) / normK;
        free(Z);
        free(G);
        rfx_nystroem_free(ny);
    }
    printf("  |K - Z Z^T|_F / |K|_F: %.2e %.2e %.2e %.2e for m = 5, 10, 20, 40\n", err[0], err[1],
           err[2], err[3]);
    for (int r = 1; r < 4; r++) CHECK(err[r] < err[r - 1]);
    CHECK(err[3] < 0.01);
    rfx_kern_free(k);
    free(K);
    free(X);
}

/* ---- landmark strategies ---------------------------------------------------------- */

/* |K - Z Z^T|_F / |K|_F of a fitted map on X. */
static double kernel_error(const rfx_nystroem *ny, const double *K, const double *X, size_t n,
                           size_t d)
{
    size_t m = rfx_nystroem_output_dim(ny);
    double *Z = transform(ny, X, n, d), *G = abt(Z, n, Z, n, m), e = 0, nk = 0;
    for (size_t i = 0; i < n * n; i++) {
        e += (K[i] - G[i]) * (K[i] - G[i]);
        nk += K[i] * K[i];
    }
    free(Z);
    free(G);
    return sqrt(e / nk);
}

/* Imbalanced data: a dense blob of 570 rows and 30 rows spread far out.
 * Uniform landmarks mostly land in the blob; leverage scores and k-means
 * also cover the spread rows. Mean error over 5 seeds. */
static void test_landmark_strategies(void)
{
    const size_t n = 600, d = 2, m = 30;
    const double gamma = 2.0;
    rfx_test_rng rng = {21};
    double *X = malloc(n * d * sizeof *X);
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < d; c++)
            X[i * d + c] = i < 570 ? 0.15 * rfx_test_normal(&rng) : 6.0 * rfx_test_uniform(&rng) - 3.0;
    double *K = kref_matrix(0, gamma, X, n, X, n, d);
    rfx_kern *k = NULL;
    CHECK_OK(rfx_kern_rbf(gamma, &k));
    double mean_err[3] = {0, 0, 0};
    for (uint64_t seed = 0; seed < 5; seed++)
        for (int strat = 0; strat < 3; strat++) {
            rfx_nystroem_params p = rfx_nystroem_params_default();
            p.n_components = m;
            p.seed = seed;
            p.landmarks = (rfx_landmarks)strat;
            rfx_nystroem *ny = NULL;
            CHECK_OK(rfx_nystroem_fit_params(k, rfx_cmat_of(X, n, d), &p, &ny));
            if (!ny) continue;
            CHECK(rfx_nystroem_n_components(ny) == m);
            CHECK((rfx_nystroem_landmark_indices(ny) == NULL) == (strat == RFX_LANDMARKS_KMEANS));
            mean_err[strat] += kernel_error(ny, K, X, n, d) / 5.0;
            rfx_nystroem_free(ny);
        }
    printf("  imbalanced data, m = %zu: |K - Z Z^T|_F / |K|_F uniform %.3f, k-means %.3f, "
           "leverage %.3f (mean of 5 seeds)\n", m, mean_err[0], mean_err[1], mean_err[2]);
    CHECK(mean_err[1] < 0.7 * mean_err[0]);
    CHECK(mean_err[2] < 0.7 * mean_err[0]);

    /* uniform through the params is rfx_nystroem_fit, bit for bit */
    rfx_nystroem_params p = rfx_nystroem_params_default();
    p.n_components = m;
    p.seed = 3;
    rfx_nystroem *a = NULL, *b = NULL;
    CHECK_OK(rfx_nystroem_fit_params(k, rfx_cmat_of(X, n, d), &p, &a));
    CHECK_OK(rfx_nystroem_fit(k, rfx_cmat_of(X, n, d), m, 3, 0, &b));
    if (a && b) CHECK(memcmp(rfx_nystroem_landmarks(a).data, rfx_nystroem_landmarks(b).data,
                             m * d * sizeof(double)) == 0);
    rfx_nystroem_free(a);
    rfx_nystroem_free(b);

    /* the same bits for any thread count (k-means and leverage) */
    for (int strat = 1; strat < 3; strat++) {
        p.landmarks = (rfx_landmarks)strat;
        p.n_threads = 1;
        CHECK_OK(rfx_nystroem_fit_params(k, rfx_cmat_of(X, n, d), &p, &a));
        p.n_threads = 2;
        CHECK_OK(rfx_nystroem_fit_params(k, rfx_cmat_of(X, n, d), &p, &b));
        if (a && b) CHECK(memcmp(rfx_nystroem_normalization(a).data, rfx_nystroem_normalization(b).data,
                                 m * m * sizeof(double)) == 0);
        rfx_nystroem_free(a);
        rfx_nystroem_free(b);
        a = b = NULL;
    }
    rfx_kern_free(k);
    free(K);
    free(X);
}

/* k-means landmarks of three well-separated clusters are their centres. */
static void test_kmeans_centres(void)
{
    const size_t n = 300, d = 2;
    const double centre[3][2] = {{-4, 0}, {4, 1}, {0, 5}};
    rfx_test_rng rng = {8};
    double *X = malloc(n * d * sizeof *X);
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < d; c++) X[i * d + c] = centre[i % 3][c] + 0.1 * rfx_test_normal(&rng);
    rfx_kern *k = NULL;
    CHECK_OK(rfx_kern_rbf(0.5, &k));
    rfx_nystroem_params p = rfx_nystroem_params_default();
    p.n_components = 3;
    p.landmarks = RFX_LANDMARKS_KMEANS;
    rfx_nystroem *ny = NULL;
    CHECK_OK(rfx_nystroem_fit_params(k, rfx_cmat_of(X, n, d), &p, &ny));
    if (ny) {
        rfx_cmat L = rfx_nystroem_landmarks(ny);
        for (int c = 0; c < 3; c++) {
            double best = INFINITY;
            for (size_t a = 0; a < 3; a++)
                best = fmin(best, hypot(L.data[a * d] - centre[c][0], L.data[a * d + 1] - centre[c][1]));
            CHECK_MSG(best < 0.05, "cluster %d: nearest landmark at %.3f", c, best);
        }
    }
    rfx_nystroem_free(ny);
    rfx_kern_free(k);
    free(X);
}

/* The approximate ridge leverage scores against the exact ones,
 * diag(K (K + n lam I)^-1) by LAPACK, on a problem where the uniform map
 * holds every row (s = n: exact up to the pseudo-inverse cutoff) and one
 * where it holds a fifth; the size rule m = ceil(d_eff ln n). */
static void test_leverage_scores(void)
{
    const size_t n = 200, d = 3;
    const double gamma = 1.5, lambda = 1e-3;
    rfx_test_rng rng = {13};
    double *X = rfx_test_matrix(&rng, n, d, -1, 1);
    double *K = kref_matrix(0, gamma, X, n, X, n, d);
    /* exact: H = K (K + n lam I)^-1 = I - n lam (K + n lam I)^-1 */
    double *A = malloc(n * n * sizeof *A), *E = malloc(n * n * sizeof *E);
    const double nlam = (double)n * lambda; /* mean k(x, x) = 1 */
    memcpy(A, K, n * n * sizeof *A);
    for (size_t i = 0; i < n; i++) A[i * n + i] += nlam;
    CHECK_OK(rfx__chol(A, n, 1, "test"));
    memset(E, 0, n * n * sizeof *E);
    for (size_t i = 0; i < n; i++) E[i * n + i] = 1.0;
    CHECK_OK(rfx__chol_solve(A, n, E, n));
    double deff = 0;
    double *exact = malloc(n * sizeof *exact), *approx = malloc(n * sizeof *approx);
    for (size_t i = 0; i < n; i++) {
        exact[i] = 1.0 - nlam * E[i * n + i];
        deff += exact[i];
    }
    rfx_kern *k = NULL;
    CHECK_OK(rfx_kern_rbf(gamma, &k));
    CHECK_OK(rfx__nystroem_leverage(k, rfx_cmat_of(X, n, d), lambda, n, 0, 0, approx));
    double worst = 0;
    for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs(approx[i] - exact[i]));
    printf("  leverage scores with s = n: worst |error| %.2e (d_eff %.2f)\n", worst, deff);
    CHECK(worst < 1e-6);
    /* with s = 40 rows the scores are upper bounds (leverage is subadditive
     * over K = Z Z^T + R, and that of R is at most R_ii / (n lam)) */
    CHECK_OK(rfx__nystroem_leverage(k, rfx_cmat_of(X, n, d), lambda, 40, 0, 0, approx));
    double sum = 0, below = 0;
    for (size_t i = 0; i < n; i++) {
        sum += approx[i];
        below = fmax(below, exact[i] - approx[i]);
    }
    printf("  leverage scores with s = 40: sum %.2f >= d_eff %.2f, most below %.2e\n", sum, deff,
           below);
    CHECK(below < 1e-9);
    /* the size rule */
    rfx_nystroem_params p = rfx_nystroem_params_default();
    p.n_components = 0;
    p.landmarks = RFX_LANDMARKS_LEVERAGE;
    rfx_nystroem *ny = NULL;
    CHECK_OK(rfx_nystroem_fit_params(k, rfx_cmat_of(X, n, d), &p, &ny));
    if (ny) {
        size_t m = rfx_nystroem_n_components(ny);
        printf("  size rule: m = %zu for d_eff %.2f, n = %zu\n", m, deff, n);
        CHECK((double)m >= 0.75 * deff * log((double)n) && (double)m <= 1.25 * deff * log((double)n) + 1);
    }
    rfx_nystroem_free(ny);
    /* parameter errors name the field */
    p.lambda = 0;
    CHECK_STATUS(rfx_nystroem_fit_params(k, rfx_cmat_of(X, n, d), &p, &ny), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "lambda") != NULL);
    p = rfx_nystroem_params_default();
    p.landmarks = (rfx_landmarks)7;
    CHECK_STATUS(rfx_nystroem_params_check(&p), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "landmarks") != NULL);
    p = rfx_nystroem_params_default();
    p.n_components = n + 1;
    CHECK_STATUS(rfx_nystroem_fit_params(k, rfx_cmat_of(X, n, d), &p, &ny), RFX_EINVAL);
    rfx_kern_free(k);
    free(exact);
    free(approx);
    free(A);
    free(E);
    free(K);
    free(X);
}

/* ---- the landmark draw ------------------------------------------------------------ */

static void test_sampling(void)
{
    const size_t n = 50, d = 2, m = 20;
    rfx_test_rng rng = {6};
    double *X = rfx_test_matrix(&rng, n, d, 0, 1);
    rfx_kern *k = NULL;
    CHECK_OK(rfx_kern_rbf(2.0, &k));
    rfx_nystroem *a = NULL, *b = NULL, *c = NULL, *full = NULL;
    CHECK_OK(rfx_nystroem_fit(k, rfx_cmat_of(X, n, d), m, 1, 1, &a));
    CHECK_OK(rfx_nystroem_fit(k, rfx_cmat_of(X, n, d), m, 1, 1, &b));
    CHECK_OK(rfx_nystroem_fit(k, rfx_cmat_of(X, n, d), m, 2, 1, &c));
    CHECK_OK(rfx_nystroem_fit(k, rfx_cmat_of(X, n, d), n, 1, 1, &full));
    const size_t *ia = rfx_nystroem_landmark_indices(a), *ib = rfx_nystroem_landmark_indices(b);
    const size_t *ic = rfx_nystroem_landmark_indices(c), *ifull = rfx_nystroem_landmark_indices(full);
    CHECK(memcmp(ia, ib, m * sizeof *ia) == 0 && memcmp(ia, ic, m * sizeof *ia) != 0);
    unsigned char seen[50] = {0};
    int distinct = 1, rows_match = 1;
    rfx_cmat L = rfx_nystroem_landmarks(a);
    for (size_t j = 0; j < m; j++) {
        if (ia[j] >= n || seen[ia[j]]) distinct = 0;
        else seen[ia[j]] = 1;
        if (memcmp(L.data + j * d, X + ia[j] * d, d * sizeof(double)) != 0) rows_match = 0;
    }
    CHECK(distinct && rows_match);
    memset(seen, 0, sizeof seen);
    for (size_t j = 0; j < n; j++) seen[ifull[j] < n ? ifull[j] : 0]++;
    int perm = 1;
    for (size_t j = 0; j < n; j++) perm &= seen[j] == 1;
    CHECK(perm);
    rfx_nystroem_free(a);
    rfx_nystroem_free(b);
    rfx_nystroem_free(c);
    rfx_nystroem_free(full);
    /* inclusion frequencies: each of 10 rows is a landmark with probability
       3 / 10 over 2000 seeds (mean 600, sd 20.5) */
    size_t count[10] = {0};
    for (uint64_t s = 0; s < 2000; s++) {
        rfx_nystroem *ny = NULL;
        CHECK_OK(rfx_nystroem_fit(k, rfx_cmat_of(X, 10, d), 3, s, 1, &ny));
        if (!ny) return;
        for (size_t j = 0; j < 3; j++) count[rfx_nystroem_landmark_indices(ny)[j]]++;
        rfx_nystroem_free(ny);
    }
    for (size_t i = 0; i < 10; i++)
        CHECK_MSG(fabs((double)count[i] - 600.0) < 5 * 20.5, "row %zu chosen %zu times", i,
                  count[i]);
    rfx_kern_free(k);
    free(X);
}

/* ---- threads ------------------------------------------------------------------- */

static void test_threads(void)
{
    const size_t n = 333, d = 4, m = 70;
    rfx_test_rng rng = {12};
    double *X = rfx_test_matrix(&rng, n, d, 0, 1);
    rfx_kern *k = NULL;
    CHECK_OK(rfx_kern_rbf(1.0, &k));
    rfx_nystroem *a = NULL, *b = NULL;
    CHECK_OK(rfx_nystroem_fit(k, rfx_cmat_of(X, n, d), m, 3, 1, &a));
    CHECK_OK(rfx_nystroem_fit(k, rfx_cmat_of(X, n, d), m, 3, 2, &b));
    if (!a || !b) return;
    double *Za = transform(a, X, n, d), *Zb = transform(b, X, n, d);
    CHECK(memcmp(Za, Zb, n * m * sizeof(double)) == 0);
    CHECK(memcmp(rfx_nystroem_normalization(a).data, rfx_nystroem_normalization(b).data,
                 m * m * sizeof(double)) == 0);
    /* a strided output view */
    double *Zs = malloc(n * (m + 3) * sizeof *Zs);
    CHECK_OK(rfx_nystroem_transform(b, rfx_cmat_of(X, n, d), (rfx_mat){Zs, n, m, m + 3}));
    int same = 1;
    for (size_t i = 0; i < n; i++) same &= memcmp(Zs + i * (m + 3), Za + i * m, m * sizeof(double)) == 0;
    CHECK(same);
    free(Zs);
    free(Za);
    free(Zb);
    rfx_nystroem_free(a);
    rfx_nystroem_free(b);
    rfx_kern_free(k);
    free(X);
}

/* ---- errors -------------------------------------------------------------------- */

static void test_errors(void)
{
    const size_t n = 20, d = 2;
    rfx_test_rng rng = {8};
    double *X = rfx_test_matrix(&rng, n, d, 0, 1);
    rfx_kern *k = NULL, *k3 = NULL, *zero = NULL;
    CHECK_OK(rfx_kern_rbf(1.0, &k));
    double ls[3] = {1, 1, 1};
    CHECK_OK(rfx_kern_shift(RFX_KERNEL_GAUSSIAN, 0, 1, ls, 3, &k3));
    CHECK_OK(rfx_kern_scale(0.0, k, &zero));
    rfx_cmat Xv = rfx_cmat_of(X, n, d);
    rfx_nystroem *sentinel = (rfx_nystroem *)&rng, *ny = sentinel;

    CHECK_ERR(rfx_nystroem_fit(k, Xv, 5, 0, 0, NULL), RFX_EINVAL, "out");
    CHECK_ERR(rfx_nystroem_fit(NULL, Xv, 5, 0, 0, &ny), RFX_EINVAL, "kernel");
    CHECK_ERR(rfx_nystroem_fit(k, Xv, 0, 0, 0, &ny), RFX_EINVAL, "n_components");
    CHECK_ERR(rfx_nystroem_fit(k, Xv, n + 1, 0, 0, &ny), RFX_EINVAL, "n_components");
    CHECK_ERR(rfx_nystroem_fit(k, Xv, 5, 0, -1, &ny), RFX_EINVAL, "n_threads");
    CHECK_ERR(rfx_nystroem_fit(k, rfx_cmat_of(X, 0, d), 1, 0, 0, &ny), RFX_EDIM, "0 x 2");
    CHECK_ERR(rfx_nystroem_fit(k, rfx_cmat_of(X, n, 0), 1, 0, 0, &ny), RFX_EDIM, "20 x 0");
    CHECK_ERR(rfx_nystroem_fit(k3, Xv, 5, 0, 0, &ny), RFX_EDIM, "kernel expects 3");
    rfx_cmat bad = {X, n, d, 1};
    CHECK_ERR(rfx_nystroem_fit(k, bad, 5, 0, 0, &ny), RFX_EINVAL, "X");
    double Xb[40];
    memcpy(Xb, X, sizeof Xb);
    Xb[9] = NAN;
    CHECK_ERR(rfx_nystroem_fit(k, rfx_cmat_of(Xb, n, d), 5, 0, 0, &ny), RFX_EPARSE,
              "row 4, column 1");
    rfx_cmat huge = {X, (size_t)1 << 32, 1, 1};
    CHECK_ERR(rfx_nystroem_fit(k, huge, (size_t)1 << 31, 0, 0, &ny), RFX_EOVERFLOW, "n_components");
    CHECK_ERR(rfx_nystroem_fit(zero, Xv, 5, 0, 0, &ny), RFX_ENUMERIC, "no eigenvalue");
    {
        rfx_kern *lin = NULL, *big = NULL, *over = NULL;
        CHECK_OK(rfx_kern_linear(&lin));
        CHECK_OK(rfx_kern_scale(1000.0, lin, &big));
        CHECK_OK(rfx_kern_exp(big, &over));
        CHECK_ERR(rfx_nystroem_fit(over, Xv, 5, 0, 0, &ny), RFX_ENUMERIC, "not finite");
        rfx_kern_free(lin);
        rfx_kern_free(big);
        rfx_kern_free(over);
    }

    CHECK_ERR(rfx_nystroem_fit_landmarks(k, Xv, 0, NULL), RFX_EINVAL, "out");
    CHECK_ERR(rfx_nystroem_fit_landmarks(NULL, Xv, 0, &ny), RFX_EINVAL, "kernel");
    CHECK_ERR(rfx_nystroem_fit_landmarks(k, Xv, -2, &ny), RFX_EINVAL, "n_threads");
    CHECK_ERR(rfx_nystroem_fit_landmarks(k, rfx_cmat_of(X, 0, d), 0, &ny), RFX_EDIM, "L is 0 x 2");
    CHECK_ERR(rfx_nystroem_fit_landmarks(k3, Xv, 0, &ny), RFX_EDIM, "kernel expects 3");
    CHECK_ERR(rfx_nystroem_fit_landmarks(k, rfx_cmat_of(Xb, n, d), 0, &ny), RFX_EPARSE, "L row 4");
    CHECK_ERR(rfx_nystroem_fit_landmarks(k, huge, 0, &ny), RFX_EOVERFLOW, "n_components");
    CHECK_ERR(rfx_nystroem_fit_landmarks(zero, Xv, 0, &ny), RFX_ENUMERIC, "no eigenvalue");
    CHECK(ny == sentinel);

    CHECK_OK(rfx_nystroem_fit(k, Xv, 5, 0, 0, &ny));
    double Z[200];
    CHECK_ERR(rfx_nystroem_transform(NULL, Xv, rfx_mat_of(Z, n, 5)), RFX_EINVAL, "ny is NULL");
    CHECK_ERR(rfx_nystroem_transform(ny, rfx_cmat_of(X, 10, 4), rfx_mat_of(Z, 10, 5)), RFX_EDIM,
              "4 columns");
    CHECK_ERR(rfx_nystroem_transform(ny, Xv, rfx_mat_of(Z, n, 4)), RFX_EDIM, "Z is 20 x 4");
    CHECK_ERR(rfx_nystroem_transform(ny, Xv, rfx_mat_of(Z, n - 1, 5)), RFX_EDIM, "Z is 19 x 5");
    CHECK_ERR(rfx_nystroem_transform(ny, bad, rfx_mat_of(Z, n, 5)), RFX_EINVAL, "X");
    CHECK_ERR(rfx_nystroem_transform(ny, Xv, (rfx_mat){Z, n, 5, 2}), RFX_EINVAL, "Z");
    CHECK_ERR(rfx_nystroem_transform(ny, Xv, (rfx_mat){Z, n, 5, (size_t)1 << 31}), RFX_EOVERFLOW,
              "stride of Z");
    CHECK_ERR(rfx_nystroem_transform(ny, rfx_cmat_of(Xb, n, d), rfx_mat_of(Z, n, 5)), RFX_EPARSE,
              "row 4");
    CHECK_OK(rfx_nystroem_transform(ny, rfx_cmat_of(X, 0, d), rfx_mat_of(Z, 0, 5)));
    rfx_nystroem_free(ny);
    rfx_nystroem_free(NULL);
    CHECK(rfx_nystroem_landmarks(NULL).data == NULL && rfx_nystroem_normalization(NULL).data == NULL);
    CHECK(rfx_nystroem_landmark_indices(NULL) == NULL && rfx_nystroem_eigenvalues(NULL) == NULL);
    CHECK(rfx_nystroem_n_components(NULL) == 0 && rfx_nystroem_output_dim(NULL) == 0);
    CHECK(rfx_nystroem_input_dim(NULL) == 0 && rfx_nystroem_rank(NULL) == 0);
    rfx_kern_free(k);
    rfx_kern_free(k3);
    rfx_kern_free(zero);
    free(X);
}

int main(void)
{
    RFX_TEST_RUN(test_closed_form);
    RFX_TEST_RUN(test_duplicates);
    RFX_TEST_RUN(test_sklearn);
    RFX_TEST_RUN(test_error_falls);
    RFX_TEST_RUN(test_sampling);
    RFX_TEST_RUN(test_landmark_strategies);
    RFX_TEST_RUN(test_kmeans_centres);
    RFX_TEST_RUN(test_leverage_scores);
    RFX_TEST_RUN(test_threads);
    RFX_TEST_RUN(test_errors);
    return rfx_test_finish("test_nystroem");
}
