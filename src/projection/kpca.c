/* SPDX-License-Identifier: BSD-3-Clause */
/* Kernel PCA with the anisotropic Gaussian kernel
 * k(x, y) = exp(-gamma sum_i theta_i (x_i - y_i)^2), exact (m x m Gram
 * matrix) or through random Fourier features (D x D covariance). The math,
 * the references and the costs are in include/rfx/projection.h.
 *
 * The object is built for many fits on the same rows: create copies the
 * rows and allocates everything; a fit writes its results into a second
 * set of arrays ("next") and swaps it with the current one only when it has
 * succeeded, so a failed fit leaves the previous one in place and a fit
 * allocates nothing.
 *
 * Thread-count independence: every Gram entry and every kernel value of a
 * transform is one fixed-order sum over the inputs, wherever it is
 * computed; row means are sums in column order; products with the
 * component matrices run in fixed tiles of rows, each a single-threaded
 * DGEMM; the eigensolver runs on one thread. */
#include "internal.h"
#include "rfx/projection.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* LAPACK (Fortran, shipped by OpenBLAS): selected eigenpairs of a
 * symmetric matrix. */
void dsyevr_(const char *jobz, const char *range, const char *uplo, const int *n, double *a,
             const int *lda, const double *vl, const double *vu, const int *il, const int *iu,
             const double *abstol, int *m, double *w, double *z, const int *ldz, int *isuppz,
             double *work, const int *lwork, int *iwork, const int *liwork, int *info, size_t,
             size_t, size_t);

/* Rows per tile of transforms and of the score products. */
#define KPCA_TILE 64
/* Rows per block of the feature Gram matrix Zc Zc^T (dual form). */
#define KPCA_GRAM_TILE 256

/* One fit's results (two of them live in the object: current and next). */
typedef struct kpca_state {
    double *theta;   /* d                                                     */
    double *scale;   /* d: sqrt(gamma theta_i) (EXACT), sqrt(2 gamma theta_i)
                        (RANDOM_FEATURES)                                     */
    size_t *active;  /* EXACT: the q inputs with theta_i > 0                  */
    size_t q;
    double *UT;      /* EXACT: q x m scaled training inputs, transposed       */
    double *mean;    /* EXACT: m row means r_i of K; RF: D feature means mu  */
    double grand;    /* EXACT: the grand mean g of K                          */
    double *proj;    /* EXACT: alpha (m x k); RF: eigenvectors V (D x k)      */
    double *emb;     /* m x k training scores                                 */
    double *eig;     /* k eigenvalues, descending, >= 0                       */
    double *ratio;   /* k explained variance ratios                          */
    double trace;    /* trace(Kc) or trace(C)                                 */
    size_t n_null;
} kpca_state;

struct rfx_kpca {
    rfx_kpca_params params;
    size_t m, d, k, D;
    int nt;
    double *X;               /* m x d training rows (standardised if asked)  */
    double *x_mean, *x_scale; /* d each when standardising, else NULL        */
    kpca_state cur, next;
    int fitted;
    /* scratch, reused by every fit */
    double *A;               /* EXACT: m x m Gram matrix, then Kc            */
    size_t n_eig;            /* the order of the eigenproblem (m or D)       */
    double *w;               /* n_eig eigenvalues (ascending)                */
    double *V;               /* n_eig x k eigenvectors (column-major)        */
    int *isuppz;             /* 2 k                                          */
    double *work;
    int *iwork;
    int lwork, liwork;
    /* RANDOM_FEATURES */
    int dual;                /* m < D: eigenpairs of Zc Zc^T (m x m, in A)
                                instead of C = Zc^T Zc (D x D)               */
    rfx_features *features;  /* unit length scale, drawn once                */
    rfx_stats *stats;        /* primal: the centred Z^T Z accumulator (its
                                ztz becomes C)                               */
    double *U;               /* m x d scaled training rows                   */
    double *Zb;              /* chunk x D feature block (dual: all m rows)   */
    double *shift;           /* primal: D, the accumulation shift            */
    double *tmp;             /* dual: m x k                                  */
    size_t chunk;            /* rows per feature block                       */
    int transform_only;      /* built by rfx__kpca_from_arrays: no fit
                                workspace                                    */
};

/* ------------------------------------------------------------------------ */
/* Parameters                                                                */
/* ------------------------------------------------------------------------ */

rfx_kpca_params rfx_kpca_params_default(void)
{
    rfx_kpca_params p;
    memset(&p, 0, sizeof p);
    p.n_components = 2;
    p.method = RFX_KPCA_METHOD_EXACT;
    p.gamma = 1.0;
    p.standardize = 0;
    p.null_tol = 1e-12;
    p.n_features = 1024;
    p.form = RFX_FORM_COS_SIN;
    p.seed = 0;
    p.n_threads = 0;
    return p;
}

static rfx_status check_params(const rfx_kpca_params *p, size_t m)
{
    if (!p) return rfx__error(RFX_EINVAL, "kpca: params is NULL");
    if (p->method != RFX_KPCA_METHOD_EXACT && p->method != RFX_KPCA_METHOD_RANDOM_FEATURES)
        return rfx__error(RFX_EINVAL, "kpca.method: %d is not an rfx_kpca_method", (int)p->method);
    if (!(p->gamma > 0 && isfinite(p->gamma)))
        return rfx__error(RFX_EINVAL, "kpca.gamma: must be > 0 and finite, got %g", p->gamma);
    if (p->standardize != 0 && p->standardize != 1)
        return rfx__error(RFX_EINVAL, "kpca.standardize: must be 0 or 1, got %d", p->standardize);
    if (!(p->null_tol >= 0 && p->null_tol < 1))
        return rfx__error(RFX_EINVAL, "kpca.null_tol: must be in [0, 1), got %g", p->null_tol);
    if (p->n_threads < 0)
        return rfx__error(RFX_EINVAL, "kpca.n_threads: must be >= 0, got %d", p->n_threads);
    size_t kmax = m;
    if (p->method == RFX_KPCA_METHOD_RANDOM_FEATURES) {
        if (p->form == RFX_FORM_PHASE_FREE)
            return rfx__error(RFX_EINVAL, "kpca.form: the phase-free form is for activations "
                                          "other than cos; the kernel's cosine features are "
                                          "cos-bias or cos-sin");
        if (p->form != RFX_FORM_COS_BIAS && p->form != RFX_FORM_COS_SIN)
            return rfx__error(RFX_EINVAL, "kpca.form: %d is not an rfx_form", (int)p->form);
        if (p->n_features == 0)
            return rfx__error(RFX_EINVAL, "kpca.n_features: must be >= 1, got 0");
        if (p->form == RFX_FORM_COS_SIN && p->n_features % 2)
            return rfx__error(RFX_EINVAL, "kpca.n_features: the cos-sin form needs an even count, "
                                          "got %zu", p->n_features);
        if (p->n_features > 2147483647u)
            return rfx__error(RFX_EOVERFLOW, "kpca.n_features: %zu exceeds the LAPACK range",
                              p->n_features);
        if (p->n_features < kmax) kmax = p->n_features;
    }
    if (p->n_components == 0 || p->n_components > kmax)
        return rfx__error(RFX_EINVAL, "kpca.n_components: must be in 1..%zu (%s), got %zu", kmax,
                          kmax == m ? "the training rows" : "n_features", p->n_components);
    return RFX_OK;
}

/* ------------------------------------------------------------------------ */
/* Object                                                                    */
/* ------------------------------------------------------------------------ */

static void state_free(kpca_state *s)
{
    free(s->theta);
    free(s->scale);
    free(s->active);
    free(s->UT);
    free(s->mean);
    free(s->proj);
    free(s->emb);
    free(s->eig);
    free(s->ratio);
}

static rfx_status state_alloc(kpca_state *s, const rfx_kpca *kp)
{
    const size_t m = kp->m, d = kp->d, k = kp->k;
    const int exact = kp->params.method == RFX_KPCA_METHOD_EXACT;
    const size_t nmean = exact ? m : kp->D;
    size_t nproj;
    memset(s, 0, sizeof *s);
    RFX__TRY(rfx__mul(nmean, k, &nproj, "kpca: components"));
    rfx_status st = rfx__alloc(d, sizeof(double), (void **)&s->theta, "kpca: theta");
    if (!st) st = rfx__alloc(d, sizeof(double), (void **)&s->scale, "kpca: scales");
    if (!st) st = rfx__alloc(d, sizeof(size_t), (void **)&s->active, "kpca: inputs");
    if (!st && exact) st = rfx__alloc(m * d, sizeof(double), (void **)&s->UT, "kpca: inputs");
    if (!st) st = rfx__alloc(nmean, sizeof(double), (void **)&s->mean, "kpca: means");
    if (!st) st = rfx__alloc(nproj, sizeof(double), (void **)&s->proj, "kpca: components");
    if (!st) st = rfx__alloc(m * k, sizeof(double), (void **)&s->emb, "kpca: scores");
    if (!st) st = rfx__alloc(k, sizeof(double), (void **)&s->eig, "kpca: eigenvalues");
    if (!st) st = rfx__alloc(k, sizeof(double), (void **)&s->ratio, "kpca: ratios");
    if (st) {
        state_free(s);
        memset(s, 0, sizeof *s);
    }
    return st;
}

void rfx_kpca_free(rfx_kpca *kp)
{
    if (!kp) return;
    free(kp->X);
    free(kp->x_mean);
    free(kp->x_scale);
    state_free(&kp->cur);
    state_free(&kp->next);
    free(kp->A);
    free(kp->w);
    free(kp->V);
    free(kp->isuppz);
    free(kp->work);
    free(kp->iwork);
    rfx_features_free(kp->features);
    rfx_stats_free(kp->stats);
    free(kp->U);
    free(kp->Zb);
    free(kp->shift);
    free(kp->tmp);
    free(kp);
}

/* The training rows, standardised with divisor m when asked (a constant
 * column keeps scale 1: it is only centred). */
static rfx_status copy_rows(rfx_kpca *kp, rfx_cmat X)
{
    const size_t m = kp->m, d = kp->d;
    RFX__TRY(rfx__alloc(m * d, sizeof(double), (void **)&kp->X, "kpca: training rows"));
    for (size_t i = 0; i < m; i++) memcpy(kp->X + i * d, X.data + i * X.stride, d * sizeof(double));
    if (!kp->params.standardize) return RFX_OK;
    RFX__TRY(rfx__calloc(d, sizeof(double), (void **)&kp->x_mean, "kpca: scaler"));
    RFX__TRY(rfx__calloc(d, sizeof(double), (void **)&kp->x_scale, "kpca: scaler"));
    rfx__standardize(rfx_cmat_of(kp->X, m, d), kp->x_mean, kp->x_scale, kp->X, d);
    return RFX_OK;
}

/* Workspace of dsyevr for the top k eigenpairs of an n x n matrix. */
static rfx_status eig_alloc(rfx_kpca *kp, size_t n)
{
    int nn, il, iu, found = 0, info = 0, lwork = -1, liwork = -1, iq = 0;
    double q = 0, vl = 0, vu = 0, abstol = 0, dummy = 0;
    RFX__TRY(rfx__lapack_int(n, &nn, "kpca: eigenproblem"));
    il = nn - (int)kp->k + 1;
    iu = nn;
    kp->n_eig = n;
    int idummy[2] = {0, 0};
    dsyevr_("V", "I", "L", &nn, &dummy, &nn, &vl, &vu, &il, &iu, &abstol, &found, &dummy, &dummy,
            &nn, idummy, &q, &lwork, &iq, &liwork, &info, 1, 1, 1);
    if (info != 0)
        return rfx__error(RFX_EINTERNAL, "kpca: dsyevr workspace query failed (%d)", info);
    kp->lwork = (int)q;
    kp->liwork = iq;
    RFX__TRY(rfx__alloc((size_t)kp->lwork, sizeof(double), (void **)&kp->work,
                        "kpca: eigensolver"));
    RFX__TRY(rfx__alloc((size_t)kp->liwork, sizeof(int), (void **)&kp->iwork, "kpca: eigensolver"));
    RFX__TRY(rfx__alloc(n, sizeof(double), (void **)&kp->w, "kpca: eigenvalues"));
    RFX__TRY(rfx__alloc(n * kp->k, sizeof(double), (void **)&kp->V, "kpca: eigenvectors"));
    RFX__TRY(rfx__alloc(2 * kp->k, sizeof(int), (void **)&kp->isuppz, "kpca: eigensolver"));
    return RFX_OK;
}

static rfx_status kpca_build(rfx_kpca *kp, rfx_cmat X)
{
    const size_t m = kp->m, d = kp->d;
    size_t md;
    RFX__TRY(rfx__mul(m, d, &md, "kpca: X"));
    RFX__TRY(copy_rows(kp, X));
    RFX__TRY(state_alloc(&kp->cur, kp));
    RFX__TRY(state_alloc(&kp->next, kp));
    if (kp->params.method == RFX_KPCA_METHOD_EXACT) {
        size_t mm;
        RFX__TRY(rfx__mul(m, m, &mm, "kpca: Gram matrix (m x m)"));
        RFX__TRY(rfx__alloc(mm, sizeof(double), (void **)&kp->A, "kpca: Gram matrix"));
        return eig_alloc(kp, m);
    }
    rfx_features_params fp = rfx_features_params_default();
    fp.kernel = RFX_KERNEL_GAUSSIAN;
    fp.length_scale = 1.0;
    fp.n_features = kp->D;
    fp.form = kp->params.form;
    fp.seed = kp->params.seed;
    fp.n_threads = kp->params.n_threads;
    rfx_status st = rfx_features_create(&fp, d, &kp->features);
    if (st) {
        rfx__error_prefix("kpca");
        return st;
    }
    RFX__TRY(rfx__alloc(md, sizeof(double), (void **)&kp->U, "kpca: scaled rows"));
    if (kp->dual) {
        size_t mm;
        kp->chunk = m;
        RFX__TRY(rfx__mul(m, m, &mm, "kpca: feature Gram matrix (m x m)"));
        RFX__TRY(rfx__alloc(mm, sizeof(double), (void **)&kp->A, "kpca: feature Gram matrix"));
        RFX__TRY(rfx__alloc(m * kp->k, sizeof(double), (void **)&kp->tmp, "kpca: components"));
    } else {
        RFX__TRY(rfx_stats_create(kp->D, 0, &kp->stats));
        kp->chunk = rfx__chunk_rows(kp->D);
        if (kp->chunk > m) kp->chunk = m;
        RFX__TRY(rfx__alloc(kp->D, sizeof(double), (void **)&kp->shift, "kpca: shift"));
    }
    RFX__TRY(rfx__mul(kp->chunk, kp->D, &md, "kpca: feature block"));
    RFX__TRY(rfx__alloc(md, sizeof(double), (void **)&kp->Zb, "kpca: feature block"));
    return eig_alloc(kp, kp->dual ? m : kp->D);
}

rfx_status rfx_kpca_create(const rfx_kpca_params *params, rfx_cmat X, rfx_kpca **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "kpca: out is NULL");
    RFX__TRY(rfx__check_cmat(X, "kpca: X"));
    if (X.rows < 2 || X.cols == 0)
        return rfx__error(RFX_EDIM, "kpca: X is %zu x %zu; it needs at least 2 rows and 1 column",
                          X.rows, X.cols);
    RFX__TRY(check_params(params, X.rows));
    size_t r, c;
    if (!rfx__all_finite(X, &r, &c))
        return rfx__error(RFX_EPARSE, "kpca: X row %zu, column %zu: %g is not finite", r, c,
                          X.data[r * X.stride + c]);
    int tmp;
    RFX__TRY(rfx__lapack_int(X.rows, &tmp, "kpca: X rows"));
    rfx_kpca *kp = calloc(1, sizeof *kp);
    if (!kp) return rfx__error(RFX_ENOMEM, "kpca: cannot allocate");
    kp->params = *params;
    kp->m = X.rows;
    kp->d = X.cols;
    kp->k = params->n_components;
    kp->D = params->method == RFX_KPCA_METHOD_RANDOM_FEATURES ? params->n_features : 0;
    kp->dual = kp->D > kp->m;
    kp->nt = rfx__threads(params->n_threads);
    rfx_status st = kpca_build(kp, X);
    if (st) {
        rfx_kpca_free(kp);
        return st;
    }
    *out = kp;
    return RFX_OK;
}

/* ------------------------------------------------------------------------ */
/* Kernels                                                                   */
/* ------------------------------------------------------------------------ */

/* out[j] = exp(-sum_l (UT[l][j] - u_l)^2) for j in [j0, j1): kernel values
 * of one scaled point u (u_l = u[l * us], q values) against the training
 * columns of UT (q x m, row stride m). The squared differences are added
 * in l order for every j, so a pair gets the same bits wherever it is
 * computed ((a - b)^2 == (b - a)^2 exactly), distances are never negative
 * and the diagonal is exactly 1. Cost 3 q (j1 - j0) flops + (j1 - j0) exp. */
static void kernel_row(const double *u, size_t us, const double *UT, size_t m, size_t q,
                       size_t j0, size_t j1, double *out)
{
    for (size_t j = j0; j < j1; j++) out[j] = 0.0;
    for (size_t l = 0; l < q; l++) {
        const double ul = u[l * us], *t = UT + l * m;
        for (size_t j = j0; j < j1; j++) {
            double e = t[j] - ul;
            out[j] += e * e;
        }
    }
    for (size_t j = j0; j < j1; j++) out[j] = exp(-out[j]);
}

/* Sum of n values in index order (the row means of the fit and of a
 * transform must add in the same order). */
static double sum_ordered(const double *a, size_t n)
{
    double s = 0;
    for (size_t j = 0; j < n; j++) s += a[j];
    return s;
}

/* T (rows x k, row stride ldt) = A (rows x n, row stride lda) B (n x k), by
 * fixed tiles of KPCA_TILE rows, each a single-threaded DGEMM.
 * Cost 2 rows n k flops. */
static void gemm_rows(const double *A, size_t lda, size_t rows, size_t n, const double *B,
                      size_t k, double *T, size_t ldt, int nt)
{
    const size_t tiles = (rows + KPCA_TILE - 1) / KPCA_TILE;
#pragma omp parallel num_threads(nt) if (tiles > 1)
    {
        RFX__SERIAL_BLAS();
#pragma omp for schedule(static)
        for (size_t t = 0; t < tiles; t++) {
            size_t r0 = t * KPCA_TILE, nr = rows - r0 < KPCA_TILE ? rows - r0 : KPCA_TILE;
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nr, (int)k, (int)n, 1.0,
                        A + r0 * lda, (int)lda, B, (int)k, 0.0, T + r0 * ldt, (int)ldt);
        }
    }
}

/* The top k eigenpairs of the symmetric n x n matrix A (row-major, upper
 * triangle read, destroyed) into kp->w (ascending, k values) and kp->V
 * (column c = eigenvector of w[c]). */
static rfx_status top_eigen(rfx_kpca *kp, double *A)
{
    int n = (int)kp->n_eig, il = n - (int)kp->k + 1, iu = n, found = 0, info = 0;
    double vl = 0, vu = 0, abstol = 2 * DBL_MIN; /* LAPACK's advice for accurate bisection */
    RFX__SERIAL(dsyevr_("V", "I", "L", &n, A, &n, &vl, &vu, &il, &iu, &abstol, &found, kp->w,
                        kp->V, &n, kp->isuppz, kp->work, &kp->lwork, kp->iwork, &kp->liwork,
                        &info, 1, 1, 1))
    if (info < 0) return rfx__error(RFX_EINTERNAL, "kpca: dsyevr argument %d invalid", -info);
    if (info > 0 || found != (int)kp->k)
        return rfx__error(RFX_ENUMERIC, "kpca: the eigensolver failed (info %d, %d of %zu "
                                        "eigenpairs)", info, found, kp->k);
    return RFX_OK;
}

/* Descending eigenvalues, clipped at 0, ratios and the null components of
 * the solution in kp->w / kp->V. */
static void spectrum(rfx_kpca *kp, kpca_state *s)
{
    const size_t k = kp->k;
    s->n_null = 0;
    for (size_t j = 0; j < k; j++) {
        double lam = kp->w[k - 1 - j];
        if (!(lam > 0)) lam = 0;
        s->eig[j] = lam;
        s->ratio[j] = lam / s->trace;
        if (!(lam > kp->params.null_tol * s->trace)) s->n_null++;
    }
}

static int is_null(const rfx_kpca *kp, const kpca_state *s, size_t j)
{
    return !(s->eig[j] > kp->params.null_tol * s->trace);
}

/* Orient component j of the scores (and of its coefficients, P rows of
 * length k) so that its score of largest magnitude (first on ties) is
 * positive. */
static void orient(double *emb, size_t m, double *P, size_t np, size_t k, size_t j)
{
    size_t best = 0;
    for (size_t i = 1; i < m; i++)
        if (fabs(emb[i * k + j]) > fabs(emb[best * k + j])) best = i;
    if (!(emb[best * k + j] < 0)) return;
    for (size_t i = 0; i < m; i++) emb[i * k + j] = -emb[i * k + j];
    for (size_t i = 0; i < np; i++) P[i * k + j] = -P[i * k + j];
}

/* theta: d values in [0, 1], not all zero. */
static rfx_status check_theta(const double *theta, size_t d)
{
    if (!theta) return rfx__error(RFX_EINVAL, "kpca fit: theta is NULL");
    int any = 0;
    for (size_t i = 0; i < d; i++) {
        if (!(theta[i] >= 0 && theta[i] <= 1))
            return rfx__error(RFX_EINVAL, "kpca fit: theta[%zu]: must be in [0, 1], got %g", i,
                              theta[i]);
        any |= theta[i] > 0;
    }
    if (!any)
        return rfx__error(RFX_EINVAL, "kpca fit: theta: all %zu entries are zero, so the kernel "
                                      "is constant and has no components", d);
    return RFX_OK;
}

/* The centred kernel is zero up to rounding: its trace is at most the
 * rounding level of the uncentred trace m (k(x, x) = 1, |z(x)|^2 ~ 1). */
static rfx_status check_trace(const rfx_kpca *kp, double trace)
{
    if (trace > (double)kp->m * DBL_EPSILON) return RFX_OK;
    return rfx__error(RFX_ENUMERIC, "kpca fit: the centred kernel matrix is zero (trace %g): the "
                                    "training rows agree on every input with theta > 0", trace);
}

/* ------------------------------------------------------------------------ */
/* Exact kernel PCA                                                          */
/* ------------------------------------------------------------------------ */

/* The scaled active inputs of s->theta, transposed:
 * UT[l][i] = x_i,a(l) sqrt(gamma theta_a(l)). */
static void exact_inputs(const rfx_kpca *kp, kpca_state *s)
{
    const size_t m = kp->m, d = kp->d;
    s->q = 0;
    for (size_t j = 0; j < d; j++) {
        s->scale[j] = sqrt(kp->params.gamma * s->theta[j]);
        if (s->theta[j] > 0) s->active[s->q++] = j;
    }
    for (size_t l = 0; l < s->q; l++) {
        const size_t j = s->active[l];
        for (size_t i = 0; i < m; i++) s->UT[l * m + i] = kp->X[i * d + j] * s->scale[j];
    }
}

static rfx_status fit_exact(rfx_kpca *kp, kpca_state *s)
{
    const size_t m = kp->m, k = kp->k;
    const int nt = kp->nt;
    double *K = kp->A;
    exact_inputs(kp, s);
    /* upper triangle of K row by row (rows shrink: dynamic schedule) */
#pragma omp parallel num_threads(nt) if (m > KPCA_TILE)
    {
        RFX__SERIAL_BLAS();
#pragma omp for schedule(dynamic, 16)
        for (size_t i = 0; i < m; i++) kernel_row(s->UT + i, m, s->UT, m, s->q, i, m, K + i * m);
    }
    /* mirror and row means r_i */
#pragma omp parallel num_threads(nt) if (m > KPCA_TILE)
    {
        RFX__SERIAL_BLAS();
#pragma omp for schedule(static)
        for (size_t i = 0; i < m; i++) {
            for (size_t j = 0; j < i; j++) K[i * m + j] = K[j * m + i];
            s->mean[i] = sum_ordered(K + i * m, m) / (double)m;
        }
    }
    s->grand = sum_ordered(s->mean, m) / (double)m;
    /* Kc_ij = K_ij - ((r_i + r_j) - g), upper triangle (all dsyevr reads);
     * the grouping makes it exactly symmetric */
    const double g = s->grand;
#pragma omp parallel num_threads(nt) if (m > KPCA_TILE)
    {
        RFX__SERIAL_BLAS();
#pragma omp for schedule(dynamic, 16)
        for (size_t i = 0; i < m; i++)
            for (size_t j = i; j < m; j++) K[i * m + j] -= (s->mean[i] + s->mean[j]) - g;
    }
    double trace = 0;
    for (size_t i = 0; i < m; i++) trace += K[i * m + i];
    RFX__TRY(check_trace(kp, trace));
    s->trace = trace;
    RFX__TRY(top_eigen(kp, K));
    spectrum(kp, s);
    /* scores v sqrt(lambda), coefficients alpha = v / sqrt(lambda) */
    for (size_t j = 0; j < k; j++) {
        const double *v = kp->V + (k - 1 - j) * m;
        const int nul = is_null(kp, s, j);
        const double r = sqrt(s->eig[j]);
        for (size_t i = 0; i < m; i++) {
            s->emb[i * k + j] = nul ? 0.0 : v[i] * r;
            s->proj[i * k + j] = nul ? 0.0 : v[i] / r;
        }
        orient(s->emb, m, s->proj, m, k, j);
    }
    return RFX_OK;
}

/* Scores of rows X (n x d) into T by the exact kernel: fixed tiles of
 * KPCA_TILE rows; per tile the scaled rows, their kernel rows against the
 * training inputs, the centring and one DGEMM with alpha. */
static rfx_status transform_exact(const rfx_kpca *kp, rfx_cmat X, rfx_mat T)
{
    const kpca_state *s = &kp->cur;
    const size_t m = kp->m, k = kp->k, q = s->q, n = X.rows;
    const size_t tiles = (n + KPCA_TILE - 1) / KPCA_TILE;
    int nt = kp->nt;
    if ((size_t)nt > tiles) nt = (int)(tiles ? tiles : 1);
    const size_t per = KPCA_TILE * (m + (q ? q : 1));
    double *buf;
    RFX__TRY(rfx__alloc((size_t)nt, per * sizeof(double), (void **)&buf, "kpca: transform"));
    const double g = s->grand;
#pragma omp parallel num_threads(nt) if (tiles > 1)
    {
        RFX__SERIAL_BLAS();
#ifdef _OPENMP
        double *kt = buf + (size_t)omp_get_thread_num() * per;
#else
        double *kt = buf;
#endif
        double *u = kt + KPCA_TILE * m;
#pragma omp for schedule(static)
        for (size_t t = 0; t < tiles; t++) {
            const size_t r0 = t * KPCA_TILE, nr = n - r0 < KPCA_TILE ? n - r0 : KPCA_TILE;
            for (size_t a = 0; a < nr; a++) {
                const double *x = X.data + (r0 + a) * X.stride;
                for (size_t l = 0; l < q; l++) {
                    const size_t j = s->active[l];
                    double v = x[j];
                    if (kp->x_mean) v = rfx__standardized(v, kp->x_mean[j], kp->x_scale[j]);
                    u[a * q + l] = v * s->scale[j];
                }
                double *row = kt + a * m;
                kernel_row(u + a * q, 1, s->UT, m, q, 0, m, row);
                const double kbar = sum_ordered(row, m) / (double)m;
                for (size_t i = 0; i < m; i++) row[i] -= (kbar + s->mean[i]) - g;
            }
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nr, (int)k, (int)m, 1.0,
                        kt, (int)m, s->proj, (int)k, 0.0, T.data + r0 * T.stride, (int)T.stride);
        }
    }
    free(buf);
    return RFX_OK;
}

/* ------------------------------------------------------------------------ */
/* Kernel PCA through random Fourier features                                */
/* ------------------------------------------------------------------------ */

/* Featurise the scaled rows U (rows x d) into kp->Zb (rows x D) and
 * subtract c (D values) from each. */
static rfx_status features_centred(rfx_kpca *kp, const double *U, size_t rows, const double *c)
{
    const size_t D = kp->D;
    RFX__TRY(rfx_features_transform(kp->features, rfx_cmat_of(U, rows, kp->d),
                                    rfx_mat_of(kp->Zb, rows, D)));
    for (size_t i = 0; i < rows; i++)
        for (size_t l = 0; l < D; l++) kp->Zb[i * D + l] -= c[l];
    return RFX_OK;
}

/* The primal form (D <= m): C = sum_i (z_i - mu)(z_i - mu)^T, D x D,
 * accumulated over row chunks; the scores need a second featurisation. */
static rfx_status fit_primal(rfx_kpca *kp, kpca_state *s)
{
    const size_t m = kp->m, d = kp->d, k = kp->k, D = kp->D, B = kp->chunk;
    rfx_stats *st = kp->stats;
    /* pass 1: sum (z - shift)(z - shift)^T and sum (z - shift), the shift
     * being the mean of the first block, so that the centring below
     * subtracts only a small correction (no cancellation) */
    memset(st->ztz, 0, D * D * sizeof(double));
    memset(st->zsum, 0, D * sizeof(double));
    st->n = 0;
    st->wsum = 0;
    for (size_t r0 = 0; r0 < m; r0 += B) {
        const size_t rows = m - r0 < B ? m - r0 : B;
        if (r0 == 0) {
            RFX__TRY(rfx_features_transform(kp->features, rfx_cmat_of(kp->U, rows, d),
                                            rfx_mat_of(kp->Zb, rows, D)));
            for (size_t l = 0; l < D; l++) {
                double a = 0;
                for (size_t i = 0; i < rows; i++) a += kp->Zb[i * D + l];
                kp->shift[l] = a / (double)rows;
            }
            for (size_t i = 0; i < rows; i++)
                for (size_t l = 0; l < D; l++) kp->Zb[i * D + l] -= kp->shift[l];
        } else {
            RFX__TRY(features_centred(kp, kp->U + r0 * d, rows, kp->shift));
        }
        RFX__TRY(rfx__stats_add_z(st, kp->Zb, D, rows, NULL, 0, kp->nt));
    }
    /* C = S - t t^T / m (upper triangle), mu = shift + t / m */
    double *C = st->ztz;
    const double *t = st->zsum;
    for (size_t i = 0; i < D; i++)
        for (size_t j = i; j < D; j++) C[i * D + j] -= t[i] * t[j] / (double)m;
    for (size_t l = 0; l < D; l++) s->mean[l] = kp->shift[l] + t[l] / (double)m;
    double trace = 0;
    for (size_t i = 0; i < D; i++) trace += C[i * D + i];
    RFX__TRY(check_trace(kp, trace));
    s->trace = trace;
    RFX__TRY(top_eigen(kp, C));
    spectrum(kp, s);
    for (size_t j = 0; j < k; j++) {
        const double *v = kp->V + (k - 1 - j) * D;
        const int nul = is_null(kp, s, j);
        for (size_t l = 0; l < D; l++) s->proj[l * k + j] = nul ? 0.0 : v[l];
    }
    /* pass 2: the training scores (z_i - mu) . V_j */
    for (size_t r0 = 0; r0 < m; r0 += B) {
        const size_t rows = m - r0 < B ? m - r0 : B;
        RFX__TRY(features_centred(kp, kp->U + r0 * d, rows, s->mean));
        gemm_rows(kp->Zb, D, rows, D, s->proj, k, s->emb + r0 * k, k, kp->nt);
    }
    for (size_t j = 0; j < k; j++) orient(s->emb, m, s->proj, D, k, j);
    return RFX_OK;
}

/* G (m x m, upper triangle, row stride m) = Z Z^T for Z (m x D): fixed
 * blocks of KPCA_GRAM_TILE rows, one single-threaded DSYRK or DGEMM per
 * block pair. Cost m^2 D flops. */
static void gram_rows(const double *Z, size_t m, size_t D, double *G, int nt)
{
    const size_t T = (m + KPCA_GRAM_TILE - 1) / KPCA_GRAM_TILE;
#pragma omp parallel num_threads(nt) if (T > 1)
    {
        RFX__SERIAL_BLAS();
#pragma omp for schedule(dynamic, 1)
        for (size_t p = 0; p < T * T; p++) {
            const size_t bi = p / T, bj = p % T;
            if (bj < bi) continue;
            const size_t i0 = bi * KPCA_GRAM_TILE, j0 = bj * KPCA_GRAM_TILE;
            const size_t ni = m - i0 < KPCA_GRAM_TILE ? m - i0 : KPCA_GRAM_TILE;
            const size_t nj = m - j0 < KPCA_GRAM_TILE ? m - j0 : KPCA_GRAM_TILE;
            if (bi == bj)
                cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, (int)ni, (int)D, 1.0,
                            Z + i0 * D, (int)D, 0.0, G + i0 * m + i0, (int)m);
            else
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)ni, (int)nj, (int)D,
                            1.0, Z + i0 * D, (int)D, Z + j0 * D, (int)D, 0.0, G + i0 * m + j0,
                            (int)m);
        }
    }
}

/* The dual form (m < D): the eigenpairs (lambda_j, u_j) of G = Zc Zc^T
 * (m x m) are those of C with V_j = Zc^T u_j / sqrt(lambda_j); the training
 * scores are u_j sqrt(lambda_j). One featurisation of all m rows. */
static rfx_status fit_dual(rfx_kpca *kp, kpca_state *s)
{
    const size_t m = kp->m, d = kp->d, k = kp->k, D = kp->D;
    double *Z = kp->Zb, *G = kp->A;
    RFX__TRY(rfx_features_transform(kp->features, rfx_cmat_of(kp->U, m, d),
                                    rfx_mat_of(Z, m, D)));
    for (size_t l = 0; l < D; l++) s->mean[l] = 0;
    for (size_t i = 0; i < m; i++)
        for (size_t l = 0; l < D; l++) s->mean[l] += Z[i * D + l];
    for (size_t l = 0; l < D; l++) s->mean[l] /= (double)m;
    for (size_t i = 0; i < m; i++)
        for (size_t l = 0; l < D; l++) Z[i * D + l] -= s->mean[l];
    gram_rows(Z, m, D, G, kp->nt);
    double trace = 0;
    for (size_t i = 0; i < m; i++) trace += G[i * m + i];
    RFX__TRY(check_trace(kp, trace));
    s->trace = trace;
    RFX__TRY(top_eigen(kp, G));
    spectrum(kp, s);
    /* scores u sqrt(lambda); V = Zc^T (u / sqrt(lambda)) */
    for (size_t j = 0; j < k; j++) {
        const double *u = kp->V + (k - 1 - j) * m;
        const int nul = is_null(kp, s, j);
        const double r = sqrt(s->eig[j]);
        for (size_t i = 0; i < m; i++) {
            s->emb[i * k + j] = nul ? 0.0 : u[i] * r;
            kp->tmp[i * k + j] = nul ? 0.0 : u[i] / r;
        }
    }
    RFX__SERIAL(cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)D, (int)k, (int)m, 1.0,
                            Z, (int)D, kp->tmp, (int)k, 0.0, s->proj, (int)k))
    for (size_t j = 0; j < k; j++) orient(s->emb, m, s->proj, D, k, j);
    return RFX_OK;
}

static rfx_status fit_features(rfx_kpca *kp, kpca_state *s)
{
    const size_t m = kp->m, d = kp->d;
    for (size_t j = 0; j < d; j++) s->scale[j] = sqrt(2.0 * kp->params.gamma * s->theta[j]);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < d; j++) kp->U[i * d + j] = kp->X[i * d + j] * s->scale[j];
    return kp->dual ? fit_dual(kp, s) : fit_primal(kp, s);
}

static rfx_status transform_features(const rfx_kpca *kp, rfx_cmat X, rfx_mat T)
{
    const kpca_state *s = &kp->cur;
    const size_t n = X.rows, d = kp->d, D = kp->D, k = kp->k;
    size_t B = rfx__chunk_rows(D);
    if (B > n) B = n;
    double *U = NULL, *Z = NULL;
    RFX__TRY(rfx__alloc(B * d, sizeof(double), (void **)&U, "kpca: transform"));
    rfx_status st = rfx__alloc(B * D, sizeof(double), (void **)&Z, "kpca: transform");
    for (size_t r0 = 0; r0 < n && !st; r0 += B) {
        const size_t rows = n - r0 < B ? n - r0 : B;
        for (size_t i = 0; i < rows; i++) {
            const double *x = X.data + (r0 + i) * X.stride;
            for (size_t j = 0; j < d; j++) {
                double v = x[j];
                if (kp->x_mean) v = rfx__standardized(v, kp->x_mean[j], kp->x_scale[j]);
                U[i * d + j] = v * s->scale[j];
            }
        }
        st = rfx_features_transform(kp->features, rfx_cmat_of(U, rows, d), rfx_mat_of(Z, rows, D));
        if (st) break;
        for (size_t i = 0; i < rows; i++)
            for (size_t l = 0; l < D; l++) Z[i * D + l] -= s->mean[l];
        gemm_rows(Z, D, rows, D, s->proj, k, T.data + r0 * T.stride, T.stride, kp->nt);
    }
    free(U);
    free(Z);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Public calls                                                              */
/* ------------------------------------------------------------------------ */

rfx_status rfx_kpca_fit(rfx_kpca *kp, const double *theta)
{
    if (!kp) return rfx__error(RFX_EINVAL, "kpca fit: kpca is NULL");
    if (kp->transform_only)
        return rfx__error(RFX_EINVAL, "kpca fit: this kernel PCA was restored from a model and "
                                      "only transforms");
    RFX__TRY(check_theta(theta, kp->d));
    kpca_state *s = &kp->next;
    memcpy(s->theta, theta, kp->d * sizeof(double));
    rfx_status st = kp->params.method == RFX_KPCA_METHOD_EXACT ? fit_exact(kp, s)
                                                               : fit_features(kp, s);
    if (st) return st;
    kpca_state t = kp->cur;
    kp->cur = kp->next;
    kp->next = t;
    kp->fitted = 1;
    return RFX_OK;
}

static rfx_status check_fitted(const rfx_kpca *kp, const char *what)
{
    if (!kp) return rfx__error(RFX_EINVAL, "kpca %s: kpca is NULL", what);
    if (!kp->fitted)
        return rfx__error(RFX_EINVAL, "kpca %s: not fitted (call rfx_kpca_fit first)", what);
    return RFX_OK;
}

rfx_status rfx_kpca_transform(const rfx_kpca *kp, rfx_cmat X, rfx_mat T)
{
    RFX__TRY(check_fitted(kp, "transform"));
    RFX__TRY(rfx__check_cmat(X, "kpca transform: X"));
    RFX__TRY(rfx__check_mat(T, "kpca transform: T"));
    if (X.cols != kp->d)
        return rfx__error(RFX_EDIM, "kpca transform: X has %zu columns, the training rows %zu",
                          X.cols, kp->d);
    if (T.rows != X.rows || T.cols != kp->k)
        return rfx__error(RFX_EDIM, "kpca transform: T is %zu x %zu, expected %zu x %zu", T.rows,
                          T.cols, X.rows, kp->k);
    if (T.stride > 2147483647u)
        return rfx__error(RFX_EOVERFLOW, "kpca transform: T's stride exceeds the BLAS range");
    size_t r, c;
    if (!rfx__all_finite(X, &r, &c))
        return rfx__error(RFX_EPARSE, "kpca transform: X row %zu, column %zu: %g is not finite", r,
                          c, X.data[r * X.stride + c]);
    if (X.rows == 0) return RFX_OK;
    return kp->params.method == RFX_KPCA_METHOD_EXACT ? transform_exact(kp, X, T)
                                                      : transform_features(kp, X, T);
}

rfx_cmat rfx_kpca_embedding(const rfx_kpca *kp)
{
    if (!kp || !kp->fitted) return rfx_cmat_none();
    return rfx_cmat_of(kp->cur.emb, kp->m, kp->k);
}

rfx_status rfx_kpca_eigenvalues(const rfx_kpca *kp, double *eigenvalues, double *ratios)
{
    RFX__TRY(check_fitted(kp, "eigenvalues"));
    if (eigenvalues) memcpy(eigenvalues, kp->cur.eig, kp->k * sizeof(double));
    if (ratios) memcpy(ratios, kp->cur.ratio, kp->k * sizeof(double));
    return RFX_OK;
}

rfx_status rfx_kpca_get_info(const rfx_kpca *kp, rfx_kpca_info *info)
{
    if (!kp) return rfx__error(RFX_EINVAL, "kpca info: kpca is NULL");
    if (!info) return rfx__error(RFX_EINVAL, "kpca info: info is NULL");
    rfx_kpca_info v;
    memset(&v, 0, sizeof v);
    v.method = kp->params.method;
    v.n_train = kp->m;
    v.dim = kp->d;
    v.n_components = kp->k;
    v.n_features = kp->D;
    v.fitted = kp->fitted;
    v.n_null = kp->fitted ? kp->cur.n_null : 0;
    v.total_variance = kp->fitted ? kp->cur.trace : 0.0;
    *info = v;
    return RFX_OK;
}

rfx_status rfx_kpca_theta(const rfx_kpca *kp, double *theta)
{
    RFX__TRY(check_fitted(kp, "theta"));
    if (!theta) return rfx__error(RFX_EINVAL, "kpca theta: theta is NULL");
    memcpy(theta, kp->cur.theta, kp->d * sizeof(double));
    return RFX_OK;
}

/* ------------------------------------------------------------------------ */
/* Internal: the arrays of an exact fit, for projected models               */
/* ------------------------------------------------------------------------ */

rfx_status rfx__kpca_get_arrays(const rfx_kpca *kp, rfx__kpca_arrays *a)
{
    RFX__TRY(check_fitted(kp, "arrays"));
    if (kp->params.method != RFX_KPCA_METHOD_EXACT)
        return rfx__error(RFX_EINVAL, "kpca arrays: only an exact kernel PCA has them");
    a->m = kp->m;
    a->d = kp->d;
    a->k = kp->k;
    a->gamma = kp->params.gamma;
    a->X = kp->X;
    a->x_mean = kp->x_mean;
    a->x_scale = kp->x_scale;
    a->theta = kp->cur.theta;
    a->row_mean = kp->cur.mean;
    a->grand = kp->cur.grand;
    a->alpha = kp->cur.proj;
    return RFX_OK;
}

/* Every value a transform reads: finite, scales > 0, theta a valid weight
 * vector. The message names the array and the entry. */
static rfx_status check_arrays(const rfx__kpca_arrays *a)
{
    if (a->m < 2 || a->d < 1 || a->k < 1 || a->k > a->m)
        return rfx__error(RFX_EINVAL, "kpca arrays: sizes m = %zu, d = %zu, k = %zu out of range",
                          a->m, a->d, a->k);
    if (!(a->gamma > 0 && isfinite(a->gamma)))
        return rfx__error(RFX_EINVAL, "kpca arrays: gamma = %g, expected > 0 and finite",
                          a->gamma);
    if (!a->X || !a->theta || !a->row_mean || !a->alpha || (!a->x_mean) != (!a->x_scale))
        return rfx__error(RFX_EINVAL, "kpca arrays: a required array is NULL");
    RFX__TRY(check_theta(a->theta, a->d));
    if (!isfinite(a->grand))
        return rfx__error(RFX_EINVAL, "kpca arrays: grand mean = %g is not finite", a->grand);
    const struct {
        const double *v;
        size_t n;
        const char *name;
        int positive;
    } arr[] = {{a->X, a->m * a->d, "training rows", 0},
               {a->row_mean, a->m, "row means", 0},
               {a->alpha, a->m * a->k, "alpha", 0},
               {a->x_mean, a->x_mean ? a->d : 0, "x_mean", 0},
               {a->x_scale, a->x_scale ? a->d : 0, "x_scale", 1}};
    for (size_t t = 0; t < sizeof arr / sizeof *arr; t++)
        for (size_t i = 0; i < arr[t].n; i++)
            if (!isfinite(arr[t].v[i]) || (arr[t].positive && !(arr[t].v[i] > 0)))
                return rfx__error(RFX_EINVAL, "kpca arrays: %s[%zu] = %g, expected a %s number",
                                  arr[t].name, i, arr[t].v[i],
                                  arr[t].positive ? "positive finite" : "finite");
    return RFX_OK;
}

rfx_status rfx__kpca_from_arrays(const rfx__kpca_arrays *a, int n_threads, rfx_kpca **out)
{
    size_t md, mk;
    if (!a || !out) return rfx__error(RFX_EINVAL, "kpca from arrays: NULL argument");
    RFX__TRY(rfx__mul(a->m, a->d, &md, "kpca: training rows m x d"));
    RFX__TRY(rfx__mul(a->m, a->k, &mk, "kpca: alpha m x k"));
    RFX__TRY(check_arrays(a));
    int tmp;
    RFX__TRY(rfx__lapack_int(a->m, &tmp, "kpca: training rows"));
    rfx_kpca *kp = calloc(1, sizeof *kp);
    if (!kp) return rfx__error(RFX_ENOMEM, "kpca: cannot allocate");
    kp->params = rfx_kpca_params_default();
    kp->params.n_components = a->k;
    kp->params.gamma = a->gamma;
    kp->params.standardize = a->x_mean != NULL;
    kp->params.n_threads = n_threads;
    kp->m = a->m;
    kp->d = a->d;
    kp->k = a->k;
    kp->nt = rfx__threads(n_threads);
    kp->transform_only = 1;
    rfx_status st = rfx__alloc(md, sizeof(double), (void **)&kp->X, "kpca: training rows");
    if (!st && a->x_mean)
        st = rfx__alloc(a->d, sizeof(double), (void **)&kp->x_mean, "kpca: scaler");
    if (!st && a->x_mean)
        st = rfx__alloc(a->d, sizeof(double), (void **)&kp->x_scale, "kpca: scaler");
    if (!st) st = state_alloc(&kp->cur, kp);
    if (st) {
        rfx_kpca_free(kp);
        return st;
    }
    memcpy(kp->X, a->X, md * sizeof(double));
    if (a->x_mean) {
        memcpy(kp->x_mean, a->x_mean, a->d * sizeof(double));
        memcpy(kp->x_scale, a->x_scale, a->d * sizeof(double));
    }
    kpca_state *s = &kp->cur;
    memcpy(s->theta, a->theta, a->d * sizeof(double));
    exact_inputs(kp, s);
    memcpy(s->mean, a->row_mean, a->m * sizeof(double));
    s->grand = a->grand;
    memcpy(s->proj, a->alpha, mk * sizeof(double));
    memset(s->emb, 0, mk * sizeof(double)); /* not stored: the scores are the surrogate's */
    memset(s->eig, 0, a->k * sizeof(double));
    memset(s->ratio, 0, a->k * sizeof(double));
    kp->fitted = 1;
    *out = kp;
    return RFX_OK;
}
