/* SPDX-License-Identifier: BSD-3-Clause */
/* Kernel PCA with the anisotropic Gaussian kernel (rfx/projection.h):
 *  - exact: eigenvalues, explained variance ratios, training scores and
 *    scores of new points against an eigendecomposition (LAPACK dsyev,
 *    called here) of the centred Gram matrix built entry by entry in the
 *    test, to 1e-10; transform(X_train) equals the training scores;
 *    components oriented as documented; null components;
 *  - theta_i = 0: the scores do not change at all when input i is replaced
 *    by noise (exact and random features);
 *  - standardize: the scores of affinely rescaled inputs are the scores of
 *    the standardised ones;
 *  - random features: eigenvalues, ratios and the principal subspace
 *    approach the exact ones as D grows (D = 256, 1024, 4096);
 *  - repeated fits on one object, a failed fit keeping the previous one,
 *    bitwise identical results for 1 and 2 threads, every error path. */
#include "internal.h"
#include "rfx/projection.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
            double *w, double *work, const int *lwork, int *info, size_t, size_t);

/* ---- the reference, built independently --------------------------------- */

typedef struct ref {
    size_t m, d;
    double *X, *theta, gamma;
    double *K;        /* m x m uncentred Gram matrix                        */
    double *Kc;       /* m x m centred                                      */
    double *w;        /* m eigenvalues of Kc, descending                     */
    double *V;        /* m x m: column j = the eigenvector of w[j]          */
    double trace;
} ref;

static double kern(const double *x, const double *y, const double *theta, double gamma, size_t d)
{
    double s = 0;
    for (size_t l = 0; l < d; l++) s += theta[l] * (x[l] - y[l]) * (x[l] - y[l]);
    return exp(-gamma * s);
}

/* K, H K H with H = I - 1 1^T / m by explicit products, all eigenpairs by
 * dsyev. */
static void ref_build(ref *r, const double *X, size_t m, size_t d, const double *theta,
                      double gamma)
{
    r->m = m;
    r->d = d;
    r->X = (double *)X;
    r->theta = (double *)theta;
    r->gamma = gamma;
    r->K = malloc(m * m * sizeof(double));
    r->Kc = malloc(m * m * sizeof(double));
    r->w = malloc(m * sizeof(double));
    r->V = malloc(m * m * sizeof(double));
    double *H = malloc(m * m * sizeof(double)), *HK = malloc(m * m * sizeof(double));
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < m; j++) {
            r->K[i * m + j] = kern(X + i * d, X + j * d, theta, gamma, d);
            H[i * m + j] = (i == j) - 1.0 / (double)m;
        }
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < m; j++) {
            double s = 0;
            for (size_t l = 0; l < m; l++) s += H[i * m + l] * r->K[l * m + j];
            HK[i * m + j] = s;
        }
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < m; j++) {
            double s = 0;
            for (size_t l = 0; l < m; l++) s += HK[i * m + l] * H[l * m + j];
            r->Kc[i * m + j] = s;
        }
    r->trace = 0;
    for (size_t i = 0; i < m; i++) r->trace += r->Kc[i * m + i];
    /* dsyev on a copy (column-major = row-major for a symmetric matrix) */
    double *A = malloc(m * m * sizeof(double)), *w = malloc(m * sizeof(double)), q;
    memcpy(A, r->Kc, m * m * sizeof(double));
    int n = (int)m, lwork = -1, info = 0;
    dsyev_("V", "U", &n, A, &n, w, &q, &lwork, &info, 1, 1);
    lwork = (int)q;
    double *work = malloc((size_t)lwork * sizeof(double));
    RFX__SERIAL(dsyev_("V", "U", &n, A, &n, w, work, &lwork, &info, 1, 1))
    CHECK(info == 0);
    /* eigenvector c (ascending) is A[c * m .. c * m + m - 1]; store descending */
    for (size_t j = 0; j < m; j++) {
        size_t c = m - 1 - j;
        r->w[j] = w[c];
        for (size_t i = 0; i < m; i++) r->V[i * m + j] = A[c * m + i];
    }
    free(A);
    free(w);
    free(work);
    free(H);
    free(HK);
}

static void ref_free(ref *r)
{
    free(r->K);
    free(r->Kc);
    free(r->w);
    free(r->V);
}

/* Reference scores of new rows Y (n x d) on component j (unit eigenvector
 * times 1 / sqrt(lambda), centred test kernel by the textbook formula
 * Kt - 1_n K / m - Kt 1_m / m + 1 K 1 / m^2). */
static double *ref_transform(const ref *r, const double *Y, size_t n, size_t k)
{
    const size_t m = r->m;
    double *T = calloc(n * k, sizeof(double)), *kt = malloc(m * sizeof(double));
    double colmean_sum = 0;
    double *colmean = malloc(m * sizeof(double));
    for (size_t j = 0; j < m; j++) {
        double s = 0;
        for (size_t i = 0; i < m; i++) s += r->K[i * m + j];
        colmean[j] = s / (double)m;
        colmean_sum += colmean[j];
    }
    double grand = colmean_sum / (double)m;
    for (size_t a = 0; a < n; a++) {
        double kbar = 0;
        for (size_t i = 0; i < m; i++) {
            kt[i] = kern(Y + a * r->d, r->X + i * r->d, r->theta, r->gamma, r->d);
            kbar += kt[i] / (double)m;
        }
        for (size_t j = 0; j < k; j++) {
            double s = 0;
            for (size_t i = 0; i < m; i++)
                s += (kt[i] - colmean[i] - kbar + grand) * r->V[i * m + j];
            T[a * k + j] = s / sqrt(r->w[j]);
        }
    }
    free(kt);
    free(colmean);
    return T;
}

/* max_i |a_ij - s b_ij| over column j of two n x k arrays (strides la, lb),
 * with the sign s in {-1, 1} that fits best. */
static double col_diff_signed(const double *a, size_t la, const double *b, size_t lb, size_t n,
                              size_t j, double *sign)
{
    double dp = 0, dm = 0;
    for (size_t i = 0; i < n; i++) {
        dp = fmax(dp, fabs(a[i * la + j] - b[i * lb + j]));
        dm = fmax(dm, fabs(a[i * la + j] + b[i * lb + j]));
    }
    if (sign) *sign = dp <= dm ? 1.0 : -1.0;
    return fmin(dp, dm);
}

/* ---- exact kernel PCA against the reference ----------------------------- */

static void test_exact_reference(void)
{
    const size_t m = 60, d = 4, k = 5, n = 17;
    rfx_test_rng rng = {2024};
    double *X = rfx_test_matrix(&rng, m, d, 0, 1);
    double *Y = rfx_test_matrix(&rng, n, d, -0.2, 1.2);
    const double theta[4] = {0.9, 0.3, 0.6, 0.05};
    const double gamma = 3.0;
    ref r;
    ref_build(&r, X, m, d, theta, gamma);

    rfx_kpca_params p = rfx_kpca_params_default();
    p.n_components = k;
    p.gamma = gamma;
    rfx_kpca *kp = NULL;
    CHECK_OK(rfx_kpca_create(&p, rfx_cmat_of(X, m, d), &kp));
    CHECK_OK(rfx_kpca_fit(kp, theta));
    double eig[5], ratio[5];
    CHECK_OK(rfx_kpca_eigenvalues(kp, eig, ratio));
    rfx_kpca_info info;
    CHECK_OK(rfx_kpca_get_info(kp, &info));
    CHECK(info.fitted == 1 && info.n_train == m && info.dim == d && info.n_components == k);
    CHECK(info.method == RFX_KPCA_METHOD_EXACT && info.n_features == 0 && info.n_null == 0);
    CHECK_NEAR(info.total_variance, r.trace, 1e-10);
    double worst_eig = 0, worst_ratio = 0, worst_emb = 0, worst_new = 0, worst_self = 0;
    for (size_t j = 0; j < k; j++) {
        worst_eig = fmax(worst_eig, fabs(eig[j] - r.w[j]));
        worst_ratio = fmax(worst_ratio, fabs(ratio[j] - r.w[j] / r.trace));
    }
    /* the spectrum is separated (so the eigenvectors are well defined) */
    for (size_t j = 0; j < k; j++) CHECK(r.w[j] - r.w[j + 1] > 0.1 * r.w[j]);
    /* training scores v sqrt(lambda), up to sign */
    rfx_cmat E = rfx_kpca_embedding(kp);
    CHECK(E.rows == m && E.cols == k && E.data != NULL);
    double *Eref = malloc(m * k * sizeof(double));
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < k; j++) Eref[i * k + j] = r.V[i * m + j] * sqrt(r.w[j]);
    double sign[5];
    for (size_t j = 0; j < k; j++)
        worst_emb = fmax(worst_emb, col_diff_signed(E.data, E.stride, Eref, k, m, j, &sign[j]));
    /* orientation: the score of largest magnitude is positive */
    for (size_t j = 0; j < k; j++) {
        size_t b = 0;
        for (size_t i = 1; i < m; i++)
            if (fabs(E.data[i * k + j]) > fabs(E.data[b * k + j])) b = i;
        CHECK(E.data[b * k + j] > 0);
    }
    /* new points, and the training points through transform */
    double *T = malloc(n * k * sizeof(double)), *Tx = malloc(m * k * sizeof(double));
    double *Tref = ref_transform(&r, Y, n, k);
    CHECK_OK(rfx_kpca_transform(kp, rfx_cmat_of(Y, n, d), rfx_mat_of(T, n, k)));
    for (size_t a = 0; a < n; a++)
        for (size_t j = 0; j < k; j++)
            worst_new = fmax(worst_new, fabs(T[a * k + j] - sign[j] * Tref[a * k + j]));
    CHECK_OK(rfx_kpca_transform(kp, rfx_cmat_of(X, m, d), rfx_mat_of(Tx, m, k)));
    for (size_t i = 0; i < m * k; i++) worst_self = fmax(worst_self, fabs(Tx[i] - E.data[i]));
    printf("  exact vs dsyev (m=%zu, d=%zu, k=%zu): eigenvalues %.2g, ratios %.2g, scores %.2g, "
           "new points %.2g, transform(X) - scores %.2g (lambda_1 = %.4g)\n",
           m, d, k, worst_eig, worst_ratio, worst_emb, worst_new, worst_self, r.w[0]);
    CHECK(worst_eig <= 1e-10);
    CHECK(worst_ratio <= 1e-10);
    CHECK(worst_emb <= 1e-10);
    CHECK(worst_new <= 1e-10);
    CHECK(worst_self <= 1e-10);

    /* strided views in and out give the same numbers */
    double *Xs = malloc(m * 7 * sizeof(double)), *Ts = malloc(m * 9 * sizeof(double));
    for (size_t i = 0; i < m; i++) memcpy(Xs + i * 7, X + i * d, d * sizeof(double));
    CHECK_OK(rfx_kpca_transform(kp, (rfx_cmat){Xs, m, d, 7}, (rfx_mat){Ts, m, k, 9}));
    for (size_t i = 0; i < m; i++) CHECK(memcmp(Ts + i * 9, Tx + i * k, k * sizeof(double)) == 0);

    /* a second fit on the same object with another theta matches its own
     * reference; fitting the first theta again reproduces the first fit */
    const double theta2[4] = {0.2, 1.0, 0.0, 0.7};
    ref r2;
    ref_build(&r2, X, m, d, theta2, gamma);
    double *E1 = malloc(m * k * sizeof(double));
    memcpy(E1, E.data, m * k * sizeof(double));
    CHECK_OK(rfx_kpca_fit(kp, theta2));
    CHECK_OK(rfx_kpca_eigenvalues(kp, eig, NULL));
    double w2 = 0;
    for (size_t j = 0; j < k; j++) w2 = fmax(w2, fabs(eig[j] - r2.w[j]));
    CHECK(w2 <= 1e-10);
    double th[4];
    CHECK_OK(rfx_kpca_theta(kp, th));
    CHECK(memcmp(th, theta2, sizeof th) == 0);
    CHECK_OK(rfx_kpca_fit(kp, theta));
    E = rfx_kpca_embedding(kp);
    CHECK(memcmp(E.data, E1, m * k * sizeof(double)) == 0);

    rfx_kpca_free(kp);
    ref_free(&r);
    ref_free(&r2);
    free(X);
    free(Y);
    free(Eref);
    free(T);
    free(Tx);
    free(Tref);
    free(Xs);
    free(Ts);
    free(E1);
}

/* k = m: the centred Gram matrix has rank m - 1 at most, so the last
 * components are null (eigenvalue <= null_tol trace): zero scores. */
static void test_null_components(void)
{
    const size_t m = 12, d = 2, k = 12;
    rfx_test_rng rng = {7};
    double *X = rfx_test_matrix(&rng, m, d, 0, 1);
    const double theta[2] = {1.0, 0.5};
    ref r;
    ref_build(&r, X, m, d, theta, 1.0);
    rfx_kpca_params p = rfx_kpca_params_default();
    p.n_components = k;
    rfx_kpca *kp = NULL;
    CHECK_OK(rfx_kpca_create(&p, rfx_cmat_of(X, m, d), &kp));
    CHECK_OK(rfx_kpca_fit(kp, theta));
    double eig[12], ratio[12];
    CHECK_OK(rfx_kpca_eigenvalues(kp, eig, ratio));
    rfx_kpca_info info;
    CHECK_OK(rfx_kpca_get_info(kp, &info));
    size_t expect_null = 0;
    for (size_t j = 0; j < k; j++) expect_null += !(eig[j] > p.null_tol * info.total_variance);
    CHECK(info.n_null == expect_null && info.n_null >= 1);
    rfx_cmat E = rfx_kpca_embedding(kp);
    double sum_ratio = 0;
    for (size_t j = 0; j < k; j++) {
        const int nul = !(eig[j] > p.null_tol * info.total_variance);
        double cmax = 0;
        for (size_t i = 0; i < m; i++) cmax = fmax(cmax, fabs(E.data[i * k + j]));
        CHECK(nul ? cmax == 0 : cmax > 0);
        CHECK(eig[j] >= 0);
        if (j) CHECK(eig[j] <= eig[j - 1]);
        sum_ratio += ratio[j];
        if (!nul) CHECK_NEAR(eig[j], r.w[j], 1e-12);
    }
    CHECK_NEAR(sum_ratio, 1.0, 1e-12); /* all m eigenvalues: the whole trace */
    ref_free(&r);
    rfx_kpca_free(kp);
    free(X);
}

/* theta_i = 0 removes input i exactly: replace it with noise, nothing moves.
 * Same for the random-feature variant. */
static void test_zero_theta(void)
{
    const size_t m = 60, d = 4, k = 3, n = 9;
    rfx_test_rng rng = {31};
    double *X = rfx_test_matrix(&rng, m, d, 0, 1);
    double *X2 = malloc(m * d * sizeof(double));
    memcpy(X2, X, m * d * sizeof(double));
    for (size_t i = 0; i < m; i++) X2[i * d + 1] = 1e3 * rfx_test_normal(&rng);
    double *Y = rfx_test_matrix(&rng, n, d, 0, 1);
    double *Y2 = malloc(n * d * sizeof(double));
    memcpy(Y2, Y, n * d * sizeof(double));
    for (size_t i = 0; i < n; i++) Y2[i * d + 1] = -7.5 + i;
    const double theta[4] = {0.8, 0.0, 0.5, 0.3};
    for (int method = 0; method < 2; method++) {
        rfx_kpca_params p = rfx_kpca_params_default();
        p.n_components = k;
        p.method = (rfx_kpca_method)method;
        p.n_features = 512;
        rfx_kpca *a = NULL, *b = NULL;
        CHECK_OK(rfx_kpca_create(&p, rfx_cmat_of(X, m, d), &a));
        CHECK_OK(rfx_kpca_create(&p, rfx_cmat_of(X2, m, d), &b));
        CHECK_OK(rfx_kpca_fit(a, theta));
        CHECK_OK(rfx_kpca_fit(b, theta));
        rfx_cmat Ea = rfx_kpca_embedding(a), Eb = rfx_kpca_embedding(b);
        double diff = 0;
        for (size_t i = 0; i < m * k; i++) diff = fmax(diff, fabs(Ea.data[i] - Eb.data[i]));
        double T1[27], T2[27], ea[3], eb[3];
        CHECK_OK(rfx_kpca_transform(a, rfx_cmat_of(Y, n, d), rfx_mat_of(T1, n, k)));
        CHECK_OK(rfx_kpca_transform(b, rfx_cmat_of(Y2, n, d), rfx_mat_of(T2, n, k)));
        for (size_t i = 0; i < n * k; i++) diff = fmax(diff, fabs(T1[i] - T2[i]));
        CHECK_OK(rfx_kpca_eigenvalues(a, ea, NULL));
        CHECK_OK(rfx_kpca_eigenvalues(b, eb, NULL));
        for (size_t j = 0; j < k; j++) diff = fmax(diff, fabs(ea[j] - eb[j]));
        printf("  %s: input 1 replaced by noise with theta_1 = 0: max change %.3g\n",
               method ? "random features" : "exact", diff);
        CHECK(diff <= 1e-12);
        /* and the noisy input matters once theta_1 > 0 */
        const double theta1[4] = {0.8, 1e-3, 0.5, 0.3};
        CHECK_OK(rfx_kpca_fit(b, theta1));
        Eb = rfx_kpca_embedding(b);
        diff = 0;
        for (size_t i = 0; i < m * k; i++) diff = fmax(diff, fabs(Ea.data[i] - Eb.data[i]));
        CHECK(diff > 1e-3);
        rfx_kpca_free(a);
        rfx_kpca_free(b);
    }
    free(X);
    free(X2);
    free(Y);
    free(Y2);
}

/* standardize = 1 on affinely rescaled columns = the reference on the
 * standardised columns (divisor m). */
static void test_standardize(void)
{
    const size_t m = 40, d = 3, k = 3, n = 5;
    rfx_test_rng rng = {55};
    double *X = rfx_test_matrix(&rng, m, d, 0, 1);
    double *Y = rfx_test_matrix(&rng, n, d, 0, 1);
    const double a[3] = {100.0, 0.01, -3.0}, b[3] = {5e3, -2.0, 0.5};
    double *Xa = malloc(m * d * sizeof(double)), *Ya = malloc(n * d * sizeof(double));
    double *Xs = malloc(m * d * sizeof(double)), *Ys = malloc(n * d * sizeof(double));
    double mean[3] = {0, 0, 0}, sd[3] = {0, 0, 0};
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < d; j++) {
            Xa[i * d + j] = a[j] * X[i * d + j] + b[j];
            mean[j] += Xa[i * d + j] / (double)m;
        }
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < d; j++)
            sd[j] += (Xa[i * d + j] - mean[j]) * (Xa[i * d + j] - mean[j]) / (double)m;
    for (size_t j = 0; j < d; j++) sd[j] = sqrt(sd[j]);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < d; j++) Xs[i * d + j] = (Xa[i * d + j] - mean[j]) / sd[j];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++) {
            Ya[i * d + j] = a[j] * Y[i * d + j] + b[j];
            Ys[i * d + j] = (Ya[i * d + j] - mean[j]) / sd[j];
        }
    const double theta[3] = {0.5, 0.25, 1.0};
    ref r;
    ref_build(&r, Xs, m, d, theta, 0.5);
    rfx_kpca_params p = rfx_kpca_params_default();
    p.n_components = k;
    p.gamma = 0.5;
    p.standardize = 1;
    rfx_kpca *kp = NULL;
    CHECK_OK(rfx_kpca_create(&p, rfx_cmat_of(Xa, m, d), &kp));
    CHECK_OK(rfx_kpca_fit(kp, theta));
    double eig[3], T[15], worst = 0, sign[3];
    CHECK_OK(rfx_kpca_eigenvalues(kp, eig, NULL));
    for (size_t j = 0; j < k; j++) worst = fmax(worst, fabs(eig[j] - r.w[j]));
    rfx_cmat E = rfx_kpca_embedding(kp);
    double *Eref = malloc(m * k * sizeof(double));
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < k; j++) Eref[i * k + j] = r.V[i * m + j] * sqrt(r.w[j]);
    for (size_t j = 0; j < k; j++)
        worst = fmax(worst, col_diff_signed(E.data, k, Eref, k, m, j, &sign[j]));
    double *Tref = ref_transform(&r, Ys, n, k);
    CHECK_OK(rfx_kpca_transform(kp, rfx_cmat_of(Ya, n, d), rfx_mat_of(T, n, k)));
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < k; j++)
            worst = fmax(worst, fabs(T[i * k + j] - sign[j] * Tref[i * k + j]));
    CHECK_MSG(worst <= 1e-10, "standardised inputs: max difference %g", worst);
    /* a constant column is only centred: with theta = 1 on it nothing changes */
    for (size_t i = 0; i < m; i++) Xa[i * d + 1] = 42.0;
    rfx_kpca_free(kp);
    CHECK_OK(rfx_kpca_create(&p, rfx_cmat_of(Xa, m, d), &kp));
    const double theta_c[3] = {0.5, 1.0, 1.0};
    CHECK_OK(rfx_kpca_fit(kp, theta_c));
    ref_free(&r);
    free(Eref);
    free(Tref);
    rfx_kpca_free(kp);
    free(X);
    free(Y);
    free(Xa);
    free(Ya);
    free(Xs);
    free(Ys);
}

/* ---- random features approach the exact solution ------------------------ */

/* cosines of the principal angles between span(A) and span(B) (m x k each,
 * columns orthogonal): the singular values of Qa^T Qb, from the
 * eigenvalues of M^T M (k x k) by dsyev. Returns the smallest cosine. */
static double min_cos_angle(const double *A, const double *B, size_t m, size_t k)
{
    double *Qa = malloc(m * k * sizeof(double)), *Qb = malloc(m * k * sizeof(double));
    for (size_t j = 0; j < k; j++) {
        double na = 0, nb = 0;
        for (size_t i = 0; i < m; i++) {
            na += A[i * k + j] * A[i * k + j];
            nb += B[i * k + j] * B[i * k + j];
        }
        for (size_t i = 0; i < m; i++) {
            Qa[i * k + j] = A[i * k + j] / sqrt(na);
            Qb[i * k + j] = B[i * k + j] / sqrt(nb);
        }
    }
    double M[64], MtM[64], w[8], work[256];
    for (size_t a = 0; a < k; a++)
        for (size_t b = 0; b < k; b++) {
            double s = 0;
            for (size_t i = 0; i < m; i++) s += Qa[i * k + a] * Qb[i * k + b];
            M[a * k + b] = s;
        }
    for (size_t a = 0; a < k; a++)
        for (size_t b = 0; b < k; b++) {
            double s = 0;
            for (size_t i = 0; i < k; i++) s += M[i * k + a] * M[i * k + b];
            MtM[a * k + b] = s;
        }
    int n = (int)k, lwork = 256, info = 0;
    dsyev_("N", "U", &n, MtM, &n, w, work, &lwork, &info, 1, 1);
    CHECK(info == 0);
    free(Qa);
    free(Qb);
    return sqrt(fmax(w[0], 0.0));
}

/* Errors of the random-feature fit against the exact one, averaged over
 * seeds: eigenvalues (relative), ratios (absolute), 1 - the smallest cosine
 * of the principal angles between the score subspaces, scores of new
 * points (relative to sqrt(lambda_j)). */
typedef struct rf_err {
    double eig, ratio, angle, score;
} rf_err;

static void test_random_features(void)
{
    const size_t m = 300, d = 4, k = 3, n = 20, n_seeds = 4;
    rfx_test_rng rng = {99};
    double *X = rfx_test_matrix(&rng, m, d, 0, 1);
    double *Y = rfx_test_matrix(&rng, n, d, 0, 1);
    const double theta[4] = {1.0, 0.4, 0.7, 0.0};
    const double gamma = 2.0;
    ref r;
    ref_build(&r, X, m, d, theta, gamma);
    for (size_t j = 0; j < k; j++) CHECK(r.w[j] - r.w[j + 1] > 0.1 * r.w[j]);
    rfx_kpca_params p = rfx_kpca_params_default();
    p.n_components = k;
    p.gamma = gamma;
    rfx_kpca *ex = NULL;
    CHECK_OK(rfx_kpca_create(&p, rfx_cmat_of(X, m, d), &ex));
    CHECK_OK(rfx_kpca_fit(ex, theta));
    rfx_cmat Eex = rfx_kpca_embedding(ex);
    double Tex[60];
    CHECK_OK(rfx_kpca_transform(ex, rfx_cmat_of(Y, n, d), rfx_mat_of(Tex, n, k)));
    /* D = 256 <= m: the primal (D x D) form; 1024 and 4096: the dual */
    const size_t Ds[3] = {256, 1024, 4096};
    rf_err e[3];
    double *Tx = malloc(m * k * sizeof(double));
    p.method = RFX_KPCA_METHOD_RANDOM_FEATURES;
    for (int t = 0; t < 3; t++) {
        memset(&e[t], 0, sizeof e[t]);
        p.n_features = Ds[t];
        for (size_t seed = 0; seed < n_seeds; seed++) {
            p.seed = 1000 + seed;
            rfx_kpca *rf = NULL;
            CHECK_OK(rfx_kpca_create(&p, rfx_cmat_of(X, m, d), &rf));
            CHECK_OK(rfx_kpca_fit(rf, theta));
            double eig[3], ratio[3], T[60];
            CHECK_OK(rfx_kpca_eigenvalues(rf, eig, ratio));
            for (size_t j = 0; j < k; j++) {
                e[t].eig += fabs(eig[j] - r.w[j]) / r.w[j] / (double)(k * n_seeds);
                e[t].ratio += fabs(ratio[j] - r.w[j] / r.trace) / (double)(k * n_seeds);
            }
            rfx_cmat E = rfx_kpca_embedding(rf);
            e[t].angle += (1 - min_cos_angle(Eex.data, E.data, m, k)) / (double)n_seeds;
            /* transform(X_train) = training scores */
            CHECK_OK(rfx_kpca_transform(rf, rfx_cmat_of(X, m, d), rfx_mat_of(Tx, m, k)));
            double self = 0;
            for (size_t i = 0; i < m * k; i++) self = fmax(self, fabs(Tx[i] - E.data[i]));
            CHECK_MSG(self <= 1e-10, "D = %zu: transform(X) - scores = %g", Ds[t], self);
            CHECK_OK(rfx_kpca_transform(rf, rfx_cmat_of(Y, n, d), rfx_mat_of(T, n, k)));
            for (size_t j = 0; j < k; j++)
                e[t].score += col_diff_signed(T, k, Tex, k, n, j, NULL) / sqrt(r.w[j]) /
                              (double)(k * n_seeds);
            rfx_kpca_info info;
            CHECK_OK(rfx_kpca_get_info(rf, &info));
            CHECK(info.n_features == Ds[t] && info.method == RFX_KPCA_METHOD_RANDOM_FEATURES);
            rfx_kpca_free(rf);
        }
        printf("  random features D=%4zu (m=%zu, k=%zu, mean of %zu seeds): rel. eigenvalue error "
               "%.3g, ratio error %.3g, 1 - cos(largest principal angle) %.3g, new-point score "
               "error %.3g\n",
               Ds[t], m, k, n_seeds, e[t].eig, e[t].ratio, e[t].angle, e[t].score);
    }
    /* errors fall like 1 / sqrt(D) (a factor 4 from 256 to 4096; asked: 2),
     * the subspace error 1 - cos like 1 / D (asked: 4) */
    CHECK(e[1].eig < e[0].eig && e[2].eig < e[0].eig / 2 && e[2].eig < 0.03);
    CHECK(e[1].ratio < e[0].ratio && e[2].ratio < e[0].ratio / 2 && e[2].ratio < 0.005);
    CHECK(e[1].angle < e[0].angle && e[2].angle < e[0].angle / 4 && e[2].angle < 1e-3);
    CHECK(e[1].score < e[0].score && e[2].score < e[0].score / 2 && e[2].score < 0.05);
    free(Tx);
    ref_free(&r);
    rfx_kpca_free(ex);
    free(X);
    free(Y);
}

/* ---- threads, failed fits ----------------------------------------------- */

static void test_threads(void)
{
    const size_t m = 300, d = 5, k = 4, n = 130;
    rfx_test_rng rng = {12};
    double *X = rfx_test_matrix(&rng, m, d, 0, 1);
    double *Y = rfx_test_matrix(&rng, n, d, 0, 1);
    const double theta[5] = {0.3, 0.9, 0.1, 0.5, 0.7};
    /* exact, random features primal (D = 200 <= m) and dual (D = 600) */
    for (int method = 0; method < 3; method++) {
        double *E[2], *T[2];
        for (int t = 0; t < 2; t++) {
            rfx_kpca_params p = rfx_kpca_params_default();
            p.n_components = k;
            p.method = method ? RFX_KPCA_METHOD_RANDOM_FEATURES : RFX_KPCA_METHOD_EXACT;
            p.n_features = method == 1 ? 200 : 600;
            p.n_threads = t + 1;
            rfx_kpca *kp = NULL;
            CHECK_OK(rfx_kpca_create(&p, rfx_cmat_of(X, m, d), &kp));
            CHECK_OK(rfx_kpca_fit(kp, theta));
            E[t] = malloc(m * k * sizeof(double));
            T[t] = malloc(n * k * sizeof(double));
            memcpy(E[t], rfx_kpca_embedding(kp).data, m * k * sizeof(double));
            CHECK_OK(rfx_kpca_transform(kp, rfx_cmat_of(Y, n, d), rfx_mat_of(T[t], n, k)));
            rfx_kpca_free(kp);
        }
        CHECK_MSG(memcmp(E[0], E[1], m * k * sizeof(double)) == 0,
                  "method %d: scores differ between 1 and 2 threads", method);
        CHECK_MSG(memcmp(T[0], T[1], n * k * sizeof(double)) == 0,
                  "method %d: transforms differ between 1 and 2 threads", method);
        for (int t = 0; t < 2; t++) {
            free(E[t]);
            free(T[t]);
        }
    }
    free(X);
    free(Y);
}

#define CHECK_ERR(call, status, needle)                                                    \
    do {                                                                                   \
        CHECK_STATUS(call, status);                                                        \
        CHECK_MSG(strstr(rfx_last_error(), needle) != NULL, "message '%s' lacks '%s'",    \
                  rfx_last_error(), needle);                                               \
    } while (0)

#define CREATE_ERR(setup, status, needle)                                                  \
    do {                                                                                   \
        rfx_kpca_params p = rfx_kpca_params_default();                                     \
        rfx_kpca *kp_ = (rfx_kpca *)&sentinel;                                             \
        setup;                                                                             \
        CHECK_ERR(rfx_kpca_create(&p, Xv, &kp_), status, needle);                          \
        CHECK(kp_ == (rfx_kpca *)&sentinel);                                               \
    } while (0)

static void test_errors(void)
{
    const size_t m = 20, d = 3;
    rfx_test_rng rng = {77};
    double *X = rfx_test_matrix(&rng, m, d, 0, 1);
    rfx_cmat Xv = rfx_cmat_of(X, m, d);
    int sentinel = 0;
    rfx_kpca *kp = NULL;

    /* create */
    CHECK_ERR(rfx_kpca_create(NULL, Xv, &kp), RFX_EINVAL, "params");
    rfx_kpca_params p0 = rfx_kpca_params_default();
    CHECK_ERR(rfx_kpca_create(&p0, Xv, NULL), RFX_EINVAL, "out");
    CHECK(p0.n_components == 2 && p0.method == RFX_KPCA_METHOD_EXACT && p0.gamma == 1.0 &&
          p0.standardize == 0 && p0.null_tol == 1e-12 && p0.n_features == 1024 &&
          p0.form == RFX_FORM_COS_SIN && p0.seed == 0 && p0.n_threads == 0);
    CREATE_ERR(p.n_components = 0, RFX_EINVAL, "kpca.n_components");
    CREATE_ERR(p.n_components = m + 1, RFX_EINVAL, "kpca.n_components: must be in 1..20");
    CREATE_ERR(p.method = (rfx_kpca_method)4, RFX_EINVAL, "kpca.method");
    CREATE_ERR(p.gamma = 0, RFX_EINVAL, "kpca.gamma");
    CREATE_ERR(p.gamma = -1, RFX_EINVAL, "kpca.gamma");
    CREATE_ERR(p.gamma = INFINITY, RFX_EINVAL, "kpca.gamma");
    CREATE_ERR(p.gamma = NAN, RFX_EINVAL, "kpca.gamma");
    CREATE_ERR(p.standardize = 2, RFX_EINVAL, "kpca.standardize");
    CREATE_ERR(p.null_tol = -1e-3, RFX_EINVAL, "kpca.null_tol");
    CREATE_ERR(p.null_tol = 1, RFX_EINVAL, "kpca.null_tol");
    CREATE_ERR(p.n_threads = -3, RFX_EINVAL, "kpca.n_threads");
    CREATE_ERR((p.method = RFX_KPCA_METHOD_RANDOM_FEATURES, p.n_features = 0), RFX_EINVAL,
               "kpca.n_features");
    CREATE_ERR((p.method = RFX_KPCA_METHOD_RANDOM_FEATURES, p.n_features = 15), RFX_EINVAL,
               "kpca.n_features: the cos-sin form needs an even count");
    CREATE_ERR((p.method = RFX_KPCA_METHOD_RANDOM_FEATURES, p.form = (rfx_form)9), RFX_EINVAL,
               "kpca.form");
    CREATE_ERR((p.method = RFX_KPCA_METHOD_RANDOM_FEATURES, p.n_features = 4,
                p.n_components = 5), RFX_EINVAL, "(n_features)");
    /* the odd D is fine for cos-bias, n_features only checked for random features */
    {
        rfx_kpca_params p = rfx_kpca_params_default();
        p.method = RFX_KPCA_METHOD_RANDOM_FEATURES;
        p.form = RFX_FORM_COS_BIAS;
        p.n_features = 15;
        CHECK_OK(rfx_kpca_create(&p, Xv, &kp));
        rfx_kpca_free(kp);
        p = rfx_kpca_params_default();
        p.n_features = 0;
        CHECK_OK(rfx_kpca_create(&p, Xv, &kp));
        rfx_kpca_free(kp);
    }
    CREATE_ERR(Xv = rfx_cmat_of(X, 1, d), RFX_EDIM, "at least 2 rows");
    Xv = rfx_cmat_of(X, m, d);
    CREATE_ERR(Xv = rfx_cmat_of(X, m, 0), RFX_EDIM, "1 column");
    Xv = rfx_cmat_of(X, m, d);
    CREATE_ERR(Xv = rfx_cmat_of(NULL, m, d), RFX_EINVAL, "data is NULL");
    Xv = rfx_cmat_of(X, m, d);
    CREATE_ERR(Xv.stride = 2, RFX_EINVAL, "stride");
    Xv = rfx_cmat_of(X, m, d);
    double keep = X[3 * d + 2];
    X[3 * d + 2] = NAN;
    CREATE_ERR((void)0, RFX_EPARSE, "row 3, column 2");
    X[3 * d + 2] = INFINITY;
    CREATE_ERR((void)0, RFX_EPARSE, "row 3, column 2");
    X[3 * d + 2] = keep;

    /* before the first fit */
    rfx_kpca_params p = rfx_kpca_params_default();
    p.n_components = 2;
    CHECK_OK(rfx_kpca_create(&p, Xv, &kp));
    double T[40], eig[2], th[3];
    rfx_cmat E = rfx_kpca_embedding(kp);
    CHECK(E.data == NULL && E.rows == 0);
    CHECK(rfx_kpca_embedding(NULL).data == NULL);
    CHECK_ERR(rfx_kpca_transform(kp, Xv, rfx_mat_of(T, m, 2)), RFX_EINVAL, "not fitted");
    CHECK_ERR(rfx_kpca_eigenvalues(kp, eig, NULL), RFX_EINVAL, "not fitted");
    CHECK_ERR(rfx_kpca_theta(kp, th), RFX_EINVAL, "not fitted");
    rfx_kpca_info info;
    CHECK_OK(rfx_kpca_get_info(kp, &info));
    CHECK(info.fitted == 0 && info.n_null == 0 && info.total_variance == 0);
    CHECK_ERR(rfx_kpca_get_info(kp, NULL), RFX_EINVAL, "info");
    CHECK_ERR(rfx_kpca_get_info(NULL, &info), RFX_EINVAL, "kpca is NULL");

    /* theta */
    const double theta_ok[3] = {0.5, 0.5, 0.5};
    double theta_bad[3] = {0.5, 0.5, -0.1};
    CHECK_ERR(rfx_kpca_fit(NULL, theta_ok), RFX_EINVAL, "kpca is NULL");
    CHECK_ERR(rfx_kpca_fit(kp, NULL), RFX_EINVAL, "theta is NULL");
    CHECK_ERR(rfx_kpca_fit(kp, theta_bad), RFX_EINVAL, "theta[2]: must be in [0, 1], got -0.1");
    theta_bad[2] = 1.5;
    CHECK_ERR(rfx_kpca_fit(kp, theta_bad), RFX_EINVAL, "theta[2]");
    theta_bad[2] = NAN;
    CHECK_ERR(rfx_kpca_fit(kp, theta_bad), RFX_EINVAL, "theta[2]");
    const double theta_zero[3] = {0, 0, 0};
    CHECK_ERR(rfx_kpca_fit(kp, theta_zero), RFX_EINVAL, "all 3 entries are zero");
    CHECK(rfx_kpca_get_info(kp, &info) == RFX_OK && info.fitted == 0);

    /* a good fit, then failures keep it */
    CHECK_OK(rfx_kpca_fit(kp, theta_ok));
    double *E0 = malloc(m * 2 * sizeof(double));
    memcpy(E0, rfx_kpca_embedding(kp).data, m * 2 * sizeof(double));
    CHECK_ERR(rfx_kpca_fit(kp, theta_zero), RFX_EINVAL, "zero");
    CHECK(memcmp(rfx_kpca_embedding(kp).data, E0, m * 2 * sizeof(double)) == 0);

    /* transform shapes and values */
    CHECK_ERR(rfx_kpca_transform(kp, rfx_cmat_of(X, m, 2), rfx_mat_of(T, m, 2)), RFX_EDIM,
              "X has 2 columns");
    CHECK_ERR(rfx_kpca_transform(kp, Xv, rfx_mat_of(T, m, 3)), RFX_EDIM, "T is 20 x 3");
    CHECK_ERR(rfx_kpca_transform(kp, Xv, rfx_mat_of(T, m - 1, 2)), RFX_EDIM, "expected 20 x 2");
    CHECK_ERR(rfx_kpca_transform(kp, Xv, rfx_mat_of(NULL, m, 2)), RFX_EINVAL, "T");
    CHECK_ERR(rfx_kpca_transform(NULL, Xv, rfx_mat_of(T, m, 2)), RFX_EINVAL, "kpca is NULL");
    for (int i = 0; i < 40; i++) T[i] = -99.0;
    X[5 * d + 1] = NAN;
    CHECK_ERR(rfx_kpca_transform(kp, Xv, rfx_mat_of(T, m, 2)), RFX_EPARSE, "row 5, column 1");
    X[5 * d + 1] = keep;
    for (int i = 0; i < 40; i++) CHECK(T[i] == -99.0);
    CHECK_OK(rfx_kpca_transform(kp, rfx_cmat_of(X, 0, d), rfx_mat_of(T, 0, 2)));
    CHECK_ERR(rfx_kpca_eigenvalues(NULL, eig, NULL), RFX_EINVAL, "kpca is NULL");
    CHECK_ERR(rfx_kpca_theta(kp, NULL), RFX_EINVAL, "theta is NULL");
    CHECK_OK(rfx_kpca_eigenvalues(kp, NULL, NULL));
    rfx_kpca_free(kp);
    rfx_kpca_free(NULL);

    /* rows that agree on every weighted input: the centred kernel is zero */
    for (int method = 0; method < 2; method++) {
        double *C = malloc(m * d * sizeof(double));
        for (size_t i = 0; i < m; i++) {
            C[i * d + 0] = 0.25;
            C[i * d + 1] = (double)i;
            C[i * d + 2] = -1.5;
        }
        p = rfx_kpca_params_default();
        p.method = (rfx_kpca_method)method;
        p.n_features = 64;
        CHECK_OK(rfx_kpca_create(&p, rfx_cmat_of(C, m, d), &kp));
        const double theta_c[3] = {1.0, 0.0, 0.5};
        CHECK_ERR(rfx_kpca_fit(kp, theta_c), RFX_ENUMERIC, "centred kernel matrix is zero");
        CHECK(rfx_kpca_get_info(kp, &info) == RFX_OK && info.fitted == 0);
        const double theta_v[3] = {0.0, 0.01, 0.0};
        CHECK_OK(rfx_kpca_fit(kp, theta_v));
        CHECK_ERR(rfx_kpca_fit(kp, theta_c), RFX_ENUMERIC, "zero");
        CHECK_OK(rfx_kpca_theta(kp, th));
        CHECK(th[1] == 0.01 && th[0] == 0.0);
        rfx_kpca_free(kp);
        free(C);
    }
    free(E0);
    free(X);
}

int main(void)
{
    RFX_TEST_RUN(test_exact_reference);
    RFX_TEST_RUN(test_null_components);
    RFX_TEST_RUN(test_zero_theta);
    RFX_TEST_RUN(test_standardize);
    RFX_TEST_RUN(test_random_features);
    RFX_TEST_RUN(test_threads);
    RFX_TEST_RUN(test_errors);
    return rfx_test_finish("test_kpca");
}
