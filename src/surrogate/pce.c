/* SPDX-License-Identifier: BSD-3-Clause */
/* Polynomial chaos expansions: orthonormal Legendre / Hermite bases,
 * total-degree and hyperbolic multi-index sets, least squares by Householder
 * QR, sparse selection by hybrid LARS with the corrected leave-one-out error,
 * and the moments and Sobol indices of the coefficients. The math and the
 * references are in include/rfx/pce.h.
 *
 * Matrices here are column-major (each basis function's n values
 * contiguous): that is LAPACK's layout for the QR, and the LARS kernel reads
 * one candidate column at a time. */
#include "internal.h"
#include "rfx/pce.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* LAPACK (Fortran, shipped by OpenBLAS); dtrtrs_ is declared in internal.h. */
void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau, double *work,
             const int *lwork, int *info);
void dormqr_(const char *side, const char *trans, const int *m, const int *n, const int *k,
             const double *a, const int *lda, const double *tau, double *c, const int *ldc,
             double *work, const int *lwork, int *info, size_t, size_t);
void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda,
             const double *tau, double *work, const int *lwork, int *info);
void dtrtri_(const char *uplo, const char *diag, const int *n, double *a, const int *lda,
             int *info, size_t, size_t);

/* Terms in sparse form: term k has the (var[j], deg[j]) pairs with deg > 0
 * for j in off[k] .. off[k+1]-1. */
typedef struct pce_sparse {
    size_t *off;  /* P + 1 */
    size_t *var;  /* nnz   */
    unsigned *deg; /* nnz  */
} pce_sparse;

struct rfx_pce {
    size_t d;
    rfx_marginal *marginals; /* d                                           */
    size_t n_terms;
    unsigned *alpha;         /* n_terms x d multi-indices, row-major          */
    double *coef;            /* n_terms                                     */
    unsigned pmax;           /* the largest single entry of alpha            */
    size_t degree;           /* truncation degree (fit) or max total degree  */
    pce_sparse sp;           /* derived from alpha                           */
    /* fit report */
    rfx_pce_method method;
    size_t n_train, n_candidates;
    double loo_mse, loo_relative, loo_corrected;
    size_t degree_min, degree_max, max_interaction; /* the fit's basis     */
    double q_norm;
    int n_threads;
    double *span; /* 2d: the training range, lo (d) then hi (d), beyond which
                     a normal or lognormal input is continued; or NULL     */
    size_t screened; /* fit: inputs left out of the final basis          */
};

/* ------------------------------------------------------------------------ */
/* Parameters                                                                */
/* ------------------------------------------------------------------------ */

rfx_pce_params rfx_pce_params_default(void)
{
    rfx_pce_params p;
    memset(&p, 0, sizeof p);
    p.marginals = NULL;
    p.degree = 3;
    p.degree_min = 0;
    p.q_norm = 1.0;
    p.max_interaction = 0;
    p.basis = NULL;
    p.basis_terms = 0;
    p.method = RFX_PCE_METHOD_LSQ;
    p.max_candidates = 50000;
    p.lars_error_factor = 2.0;
    p.lars_max_terms = 0;
    p.n_threads = 0;
    return p;
}

static rfx_status check_marginals(const rfx_marginal *m, size_t d, const char *what)
{
    if (!m) return rfx__error(RFX_EINVAL, "%s: NULL (%zu marginals are needed)", what, d);
    for (size_t i = 0; i < d; i++) {
        double a = m[i].a, b = m[i].b;
        switch ((int)m[i].kind) {
        case RFX_MARGINAL_UNIFORM:
            if (!isfinite(a) || !isfinite(b) || !(a < b) || !isfinite(b - a))
                return rfx__error(RFX_EINVAL,
                                  "%s[%zu]: a uniform marginal needs finite a < b, got [%g, %g]",
                                  what, i, a, b);
            break;
        case RFX_MARGINAL_NORMAL:
        case RFX_MARGINAL_LOGNORMAL: {
            const int ln = m[i].kind == RFX_MARGINAL_LOGNORMAL;
            if (!isfinite(a) || !isfinite(b) || !(b > 0))
                return rfx__error(RFX_EINVAL,
                                  "%s[%zu]: a %s marginal needs a finite mean and a finite "
                                  "standard deviation b > 0%s, got N(%g, %g^2)",
                                  what, i, ln ? "lognormal" : "normal", ln ? " of log x" : "",
                                  a, b);
            break;
        }
        default:
            return rfx__error(RFX_EINVAL,
                              "%s[%zu].kind: %d is not a marginal PCE supports (uniform %d, "
                              "normal %d, lognormal %d)",
                              what, i, (int)m[i].kind, RFX_MARGINAL_UNIFORM, RFX_MARGINAL_NORMAL,
                              RFX_MARGINAL_LOGNORMAL);
        }
    }
    return RFX_OK;
}

/* The fields that need no data; automatic: the degree is chosen by the
 * fit (auto_basis), at least degree_min, so only degree_min is read. */
static rfx_status check_fields(const rfx_pce_params *p, int automatic)
{
    if (p->method != RFX_PCE_METHOD_LSQ && p->method != RFX_PCE_METHOD_LARS)
        return rfx__error(RFX_EINVAL, "pce.method: %d is not an rfx_pce_method", (int)p->method);
    if (p->max_candidates == 0) return rfx__error(RFX_EINVAL, "pce.max_candidates: must be >= 1");
    if (!(p->lars_error_factor >= 1))
        return rfx__error(RFX_EINVAL, "pce.lars_error_factor: must be >= 1, got %g",
                          p->lars_error_factor);
    if (p->n_threads < 0)
        return rfx__error(RFX_EINVAL, "pce.n_threads: must be >= 0, got %d", p->n_threads);
    if (p->basis) {
        if (p->basis_terms == 0)
            return rfx__error(RFX_EINVAL, "pce.basis_terms: 0 with a basis given");
        if (p->basis_terms > p->max_candidates)
            return rfx__error(RFX_EINVAL, "pce.basis_terms: %zu exceeds pce.max_candidates = %zu",
                              p->basis_terms, p->max_candidates);
        return RFX_OK; /* the entries are checked when copied */
    }
    if (p->basis_terms != 0)
        return rfx__error(RFX_EINVAL, "pce.basis_terms: %zu without a basis (pce.basis is NULL)",
                          p->basis_terms);
    if (automatic) {
        if (p->degree_min > RFX_PCE_MAX_DEGREE)
            return rfx__error(RFX_EINVAL, "pce.degree_min: %zu exceeds RFX_PCE_MAX_DEGREE = %u",
                              p->degree_min, RFX_PCE_MAX_DEGREE);
    } else {
        if (p->degree == 0)
            return rfx__error(RFX_EINVAL, "pce.degree: must be >= 1 (degree 0 is the constant)");
        if (p->degree > RFX_PCE_MAX_DEGREE)
            return rfx__error(RFX_EINVAL, "pce.degree: %zu exceeds RFX_PCE_MAX_DEGREE = %u",
                              p->degree, RFX_PCE_MAX_DEGREE);
        if (p->degree_min > p->degree)
            return rfx__error(RFX_EINVAL, "pce.degree_min: %zu exceeds pce.degree = %zu",
                              p->degree_min, p->degree);
    }
    if (!(p->q_norm > 0 && p->q_norm <= 1))
        return rfx__error(RFX_EINVAL, "pce.q_norm: must be in (0, 1], got %g", p->q_norm);
    return RFX_OK;
}

rfx_status rfx_pce_params_check(const rfx_pce_params *p)
{
    if (!p) return rfx__error(RFX_EINVAL, "pce: params is NULL");
    if (!p->marginals && !p->marginals_from_data)
        return rfx__error(RFX_EINVAL, "pce.marginals: NULL (one marginal per input is needed, or "
                                      "marginals_from_data = 1)");
    return check_fields(p, p->auto_basis && !p->basis);
}

/* The parameters of one fit on d inputs: marginals set, degree given. */
static rfx_status check_params(const rfx_pce_params *p, size_t d)
{
    if (!p) return rfx__error(RFX_EINVAL, "pce: params is NULL");
    RFX__TRY(check_marginals(p->marginals, d, "pce.marginals"));
    RFX__TRY(check_fields(p, 0));
    if (!p->basis && p->max_interaction > d)
        return rfx__error(RFX_EINVAL, "pce.max_interaction: %zu exceeds the %zu inputs",
                          p->max_interaction, d);
    return RFX_OK;
}

/* ------------------------------------------------------------------------ */
/* Univariate orthonormal polynomials                                        */
/* ------------------------------------------------------------------------ */

/* Both families satisfy t psi_k = b_{k+1} psi_{k+1} + b_k psi_{k-1}
 * (psi_0 = 1, b_0 = 0) with the Jacobi coefficients
 *   Legendre on U(-1, 1):  b_k = k / sqrt(4 k^2 - 1)
 *   Hermite on N(0, 1):    b_k = sqrt(k)
 * (Gautschi, "Orthogonal Polynomials", 2004, table 1.1 normalised). The
 * orthonormal recurrence never forms factorials, so it neither overflows
 * nor loses accuracy at high degree. */
static double jacobi_b(int hermite, size_t k)
{
    double x = (double)k;
    return hermite ? sqrt(x) : x / sqrt(4.0 * x * x - 1.0);
}

/* Whether marginal kind k has the Hermite family: normal inputs, and
 * lognormal ones through t = (log x - mu) / sigma. */
static int hermite(rfx_marginal_kind k)
{
    return k != RFX_MARGINAL_UNIFORM;
}

/* The standard variable t of x under marginal m. */
static double standardize(const rfx_marginal *m, double x)
{
    if (m->kind == RFX_MARGINAL_NORMAL) return (x - m->a) / m->b;
    if (m->kind == RFX_MARGINAL_LOGNORMAL) return (log(x) - m->a) / m->b;
    return (2.0 * x - m->a - m->b) / (m->b - m->a);
}

/* Every value of a lognormal input in X is > 0 (its support). */
static rfx_status check_support(const rfx_marginal *mg, rfx_cmat X, const char *what)
{
    for (size_t j = 0; j < X.cols; j++)
        if (mg[j].kind == RFX_MARGINAL_LOGNORMAL)
            for (size_t i = 0; i < X.rows; i++)
                if (!(X.data[i * X.stride + j] > 0))
                    return rfx__error(RFX_EPARSE,
                                      "%s: X row %zu, column %zu: %g is outside the support of "
                                      "the input's lognormal marginal (x > 0)",
                                      what, i, j, X.data[i * X.stride + j]);
    return RFX_OK;
}

/* Recurrence coefficients 1 / b_k and b_k for k = 1..p of both families:
 * rec[kind][2k] = b_k, rec[kind][2k+1] = 1 / b_{k+1}. */
typedef struct pce_rec {
    double *c[2]; /* per kind: 2 (p + 1) values */
    size_t p;
} pce_rec;

static rfx_status rec_init(pce_rec *r, size_t p)
{
    r->p = p;
    r->c[0] = r->c[1] = NULL;
    for (int kind = 0; kind < 2; kind++) {
        rfx_status st = rfx__alloc(2 * (p + 1), sizeof(double), (void **)&r->c[kind], "pce");
        if (st) {
            free(r->c[0]);
            return st;
        }
        for (size_t k = 0; k <= p; k++) {
            r->c[kind][2 * k] = k == 0 ? 0.0 : jacobi_b(kind, k);
            r->c[kind][2 * k + 1] = 1.0 / jacobi_b(kind, k + 1);
        }
    }
    return RFX_OK;
}

static void rec_free(pce_rec *r)
{
    free(r->c[0]);
    free(r->c[1]);
}

/* out[k * stride] = psi_k(t), k = 0..p. */
static void eval_1d(const double *c, double t, size_t p, double *out, size_t stride)
{
    double prev = 0.0, cur = 1.0;
    out[0] = 1.0;
    for (size_t k = 0; k < p; k++) {
        double next = (t * cur - c[2 * k] * prev) * c[2 * k + 1];
        prev = cur;
        cur = next;
        out[(k + 1) * stride] = cur;
    }
}

rfx_status rfx_pce_basis_1d(const rfx_marginal *m, size_t degree, double x, double *psi)
{
    if (!psi) return rfx__error(RFX_EINVAL, "pce_basis_1d: psi is NULL");
    RFX__TRY(check_marginals(m, 1, "pce_basis_1d: marginal"));
    if (degree > RFX_PCE_MAX_DEGREE)
        return rfx__error(RFX_EINVAL, "pce_basis_1d: degree %zu exceeds RFX_PCE_MAX_DEGREE = %u",
                          degree, RFX_PCE_MAX_DEGREE);
    if (m->kind == RFX_MARGINAL_LOGNORMAL && !(x > 0))
        return rfx__error(RFX_EINVAL, "pce_basis_1d: x = %g is outside the support of the "
                          "lognormal marginal (x > 0)", x);
    double t = standardize(m, x), prev = 0.0, cur = 1.0;
    psi[0] = 1.0;
    for (size_t k = 0; k < degree; k++) {
        double bk = k == 0 ? 0.0 : jacobi_b(hermite(m->kind), k);
        double next = (t * cur - bk * prev) / jacobi_b(hermite(m->kind), k + 1);
        prev = cur;
        cur = next;
        psi[k + 1] = cur;
    }
    return RFX_OK;
}

/* Vt[(v (p + 1) + k) ld + r] = psi^(v)_k(x_{r, v}) for rows r < rows of X
 * (row stride ldx): the univariate table of a block of rows, laid out so
 * that a product over a term's variables runs along contiguous rows. Cost
 * rows d p flops. */
static void univariate_table(const rfx_marginal *mg, size_t d, const pce_rec *rec,
                             const double *X, size_t ldx, size_t rows, double *Vt, size_t ld)
{
    size_t p = rec->p;
    for (size_t v = 0; v < d; v++) {
        const double *c = rec->c[hermite(mg[v].kind)];
        double *base = Vt + v * (p + 1) * ld;
        for (size_t r = 0; r < rows; r++)
            eval_1d(c, standardize(&mg[v], X[r * ldx + v]), p, base + r, ld);
    }
}

/* ------------------------------------------------------------------------ */
/* Multi-index sets                                                          */
/* ------------------------------------------------------------------------ */

/* All a in N^d with sum_i a_i^q <= p^q and at most maxint nonzero entries,
 * by total degree k = 0..p, and within one k lexicographically from the
 * largest a_1 (OpenTURNS' LinearEnumerateFunction order). A branch is cut
 * when even putting the rest of k into one variable breaks the q-norm
 * (sum x_i^q >= (sum x_i)^q for q <= 1) or the interaction limit. */
typedef struct enum_ctx {
    size_t d, maxint;
    double bound;        /* p^q, with a relative slack of 1e-9             */
    const double *powq;  /* powq[v] = v^q, v = 0..p                         */
    size_t cap, count;   /* stop once count > cap                          */
    unsigned *out;       /* NULL: count only                               */
    unsigned *alpha;     /* d scratch                                      */
} enum_ctx;

static void enum_emit(enum_ctx *c)
{
    if (c->out && c->count < c->cap) memcpy(c->out + c->count * c->d, c->alpha, c->d * sizeof *c->alpha);
    c->count++;
}

static void enum_rec(enum_ctx *c, size_t pos, size_t rem, double qsum, size_t nnz)
{
    if (c->count > c->cap) return;
    if (rem == 0) {
        for (size_t i = pos; i < c->d; i++) c->alpha[i] = 0;
        enum_emit(c);
        return;
    }
    if (pos == c->d - 1) {
        c->alpha[pos] = (unsigned)rem; /* the checks below were made by the caller */
        enum_emit(c);
        return;
    }
    for (size_t v = rem + 1; v-- > 0;) {
        size_t r = rem - v, nz = nnz + (v > 0);
        double qs = qsum + c->powq[v];
        if (nz + (r > 0) > c->maxint || qs + c->powq[r] > c->bound) continue;
        c->alpha[pos] = (unsigned)v;
        enum_rec(c, pos + 1, r, qs, nz);
        if (c->count > c->cap) return;
    }
}

/* C(d + p, p), or RFX_EOVERFLOW. */
static rfx_status binom_count(size_t d, size_t p, size_t *out)
{
    size_t c = 1; /* C(d + i, i) after step i: exact, since i! divides the product */
    for (size_t i = 1; i <= p; i++) {
        size_t g = 0;
        if (rfx__mul(c, d + i, &g, "pce") != RFX_OK)
            return rfx__error(RFX_EOVERFLOW,
                              "pce.degree: the C(d + p, p) terms of degree p = %zu in d = %zu "
                              "inputs overflow size_t",
                              p, d);
        c = g / i;
    }
    *out = c;
    return RFX_OK;
}

/* The candidate basis of the parameters: *alpha (P x d, malloc'd). */
static rfx_status enumerate_basis(const rfx_pce_params *p, size_t d, unsigned **alpha,
                                  size_t *P_out)
{
    size_t deg = p->degree, maxint = p->max_interaction ? p->max_interaction : d;
    double q = p->q_norm;
    if (q == 1.0 && maxint == d) {
        size_t P = 0;
        RFX__TRY(binom_count(d, deg, &P));
        if (P > p->max_candidates)
            return rfx__error(RFX_EINVAL,
                              "pce.degree: degree %zu in %zu inputs has %zu candidate terms, more "
                              "than pce.max_candidates = %zu (lower the degree or q_norm)",
                              deg, d, P, p->max_candidates);
    }
    double *powq = NULL;
    unsigned *scratch = NULL;
    RFX__TRY(rfx__alloc(deg + 1, sizeof *powq, (void **)&powq, "pce: multi-indices"));
    rfx_status st = rfx__alloc(d, sizeof *scratch, (void **)&scratch, "pce: multi-indices");
    if (st) {
        free(powq);
        return st;
    }
    for (size_t v = 0; v <= deg; v++) powq[v] = pow((double)v, q);
    enum_ctx c = {d, maxint, pow((double)deg, q) * (1 + 1e-9), powq, p->max_candidates, 0, NULL,
                  scratch};
    for (size_t k = 0; k <= deg && c.count <= c.cap; k++) enum_rec(&c, 0, k, 0.0, 0);
    if (c.count > c.cap) {
        st = rfx__error(RFX_EINVAL,
                        "pce.degree: degree %zu (q_norm %g) in %zu inputs has more than "
                        "pce.max_candidates = %zu candidate terms",
                        deg, q, d, p->max_candidates);
        goto done;
    }
    size_t P = c.count;
    st = rfx__alloc(P * d, sizeof **alpha, (void **)alpha, "pce: multi-indices");
    if (st) goto done;
    c.out = *alpha;
    c.count = 0;
    c.cap = P;
    for (size_t k = 0; k <= deg; k++) enum_rec(&c, 0, k, 0.0, 0);
    *P_out = P;
done:
    free(powq);
    free(scratch);
    return st;
}

/* qsort over rows of a multi-index array: each element carries its d. */
typedef struct row_ref {
    const unsigned *row;
    size_t d, index;
} row_ref;

static int row_cmp(const void *pa, const void *pb)
{
    const row_ref *a = pa, *b = pb;
    for (size_t i = 0; i < a->d; i++)
        if (a->row[i] != b->row[i]) return a->row[i] < b->row[i] ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Write "(a_1,...,a_d)" into buf, shortened with "..." when long. */
static const char *alpha_str(const unsigned *a, size_t d, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < d; i++) {
        int w = snprintf(buf + used, size - used, "%s%u", i ? "," : "(", a[i]);
        if (w < 0 || (size_t)w >= size - used - 5) {
            snprintf(buf + (used < size - 5 ? used : size - 5), 5, "...");
            return buf;
        }
        used += (size_t)w;
    }
    snprintf(buf + used, size - used, ")");
    return buf;
}

/* Check a user-given multi-index array: entries <= RFX_PCE_MAX_DEGREE and
 * no row repeated. */
static rfx_status check_alpha(const unsigned *alpha, size_t P, size_t d, const char *what)
{
    if (!alpha && P > 0) return rfx__error(RFX_EINVAL, "%s: NULL for %zu terms", what, P);
    for (size_t k = 0; k < P; k++)
        for (size_t i = 0; i < d; i++)
            if (alpha[k * d + i] > RFX_PCE_MAX_DEGREE)
                return rfx__error(RFX_EINVAL, "%s[%zu][%zu]: degree %u exceeds RFX_PCE_MAX_DEGREE = %u",
                                  what, k, i, alpha[k * d + i], RFX_PCE_MAX_DEGREE);
    if (P < 2) return RFX_OK;
    row_ref *refs;
    RFX__TRY(rfx__alloc(P, sizeof *refs, (void **)&refs, what));
    for (size_t k = 0; k < P; k++) {
        refs[k].row = alpha + k * d;
        refs[k].d = d;
        refs[k].index = k;
    }
    qsort(refs, P, sizeof *refs, row_cmp);
    rfx_status st = RFX_OK;
    for (size_t k = 1; k < P; k++)
        if (memcmp(refs[k].row, refs[k - 1].row, d * sizeof *alpha) == 0) {
            char buf[96];
            st = rfx__error(RFX_EINVAL, "%s: terms %zu and %zu repeat the multi-index %s", what,
                            refs[k - 1].index, refs[k].index, alpha_str(refs[k].row, d, buf, sizeof buf));
            break;
        }
    free(refs);
    return st;
}

static void sparse_free(pce_sparse *s)
{
    free(s->off);
    free(s->var);
    free(s->deg);
    s->off = NULL;
    s->var = NULL;
    s->deg = NULL;
}

static rfx_status sparse_build(const unsigned *alpha, size_t P, size_t d, pce_sparse *s,
                               unsigned *pmax)
{
    size_t nnz = 0;
    unsigned mx = 0;
    for (size_t k = 0; k < P * d; k++) {
        nnz += alpha[k] > 0;
        if (alpha[k] > mx) mx = alpha[k];
    }
    s->off = NULL;
    s->var = NULL;
    s->deg = NULL;
    rfx_status st = rfx__alloc(P + 1, sizeof *s->off, (void **)&s->off, "pce: terms");
    if (!st) st = rfx__alloc(nnz, sizeof *s->var, (void **)&s->var, "pce: terms");
    if (!st) st = rfx__alloc(nnz, sizeof *s->deg, (void **)&s->deg, "pce: terms");
    if (st) {
        sparse_free(s);
        return st;
    }
    size_t j = 0;
    for (size_t k = 0; k < P; k++) {
        s->off[k] = j;
        for (size_t i = 0; i < d; i++)
            if (alpha[k * d + i]) {
                s->var[j] = i;
                s->deg[j] = alpha[k * d + i];
                j++;
            }
    }
    s->off[P] = j;
    *pmax = mx;
    return RFX_OK;
}

/* col[r] = prod over the term's pairs of Vt[(var (p + 1) + deg) ld + r]
 * for r < rows: one term's values on a block of rows. */
static void term_values(const pce_sparse *s, size_t k, const double *Vt, size_t p, size_t ld,
                        size_t rows, double *col)
{
    size_t j0 = s->off[k], j1 = s->off[k + 1];
    if (j0 == j1) {
        for (size_t r = 0; r < rows; r++) col[r] = 1.0;
        return;
    }
    const double *v0 = Vt + (s->var[j0] * (p + 1) + s->deg[j0]) * ld;
    for (size_t r = 0; r < rows; r++) col[r] = v0[r];
    for (size_t j = j0 + 1; j < j1; j++) {
        const double *vj = Vt + (s->var[j] * (p + 1) + s->deg[j]) * ld;
        for (size_t r = 0; r < rows; r++) col[r] *= vj[r];
    }
}

/* ------------------------------------------------------------------------ */
/* Least squares by QR, with the leave-one-out error                         */
/* ------------------------------------------------------------------------ */

typedef struct pce_loo {
    double mse, relative, corrected;
} pce_loo;

/* LOO errors from residuals r, hat diagonal h (n each), P terms, the trace
 * of (Psi^T Psi)^-1 and the sample variance of y (header comment). */
static pce_loo loo_errors(const double *r, const double *h, size_t n, size_t P, double trinv,
                          double yvar)
{
    pce_loo e;
    double s = 0.0;
    for (size_t i = 0; i < n; i++) {
        double den = 1.0 - h[i];
        if (!(den > 64 * DBL_EPSILON)) {
            s = INFINITY;
            break;
        }
        double ei = r[i] / den;
        s += ei * ei;
    }
    if (n <= P) s = INFINITY;
    e.mse = s / (double)n;
    e.relative = yvar > 0 ? e.mse / yvar : (e.mse == 0 ? 0.0 : INFINITY);
    e.corrected = n > P ? e.relative * (double)n / (double)(n - P) * (1.0 + trinv) : INFINITY;
    if (isnan(e.corrected)) e.corrected = INFINITY; /* 0 * inf */
    return e;
}

/* Least squares min |A c - y| for A (n x P column-major, n >= P; destroyed)
 * by Householder QR (dgeqrf), Q^T y (dormqr), R c = (Q^T y)_1..P (dtrtrs).
 * Leave-one-out: residuals r = Q (0, (Q^T y)_P+1..n) (dormqr), hat diagonal
 * h_i = |row i of Q|^2 (dorgqr), tr((A^T A)^-1) = |R^-1|_F^2 (dtrtri).
 * A diagonal |R_jj| <= max(n, P) eps max_i |R_ii| means column j is a
 * combination of the columns before it on these points: RFX_ENUMERIC with
 * *bad = j and no message (the caller names the term). Cost 2 n P^2 +
 * P^3 / 3 flops. */
static rfx_status lsq_qr(double *A, size_t n, size_t P, const double *y, double yvar,
                         double *coef, pce_loo *loo, size_t *bad)
{
    int nn, pp, one = 1, info = 0, lwork = -1;
    RFX__TRY(rfx__lapack_int(n, &nn, "pce: least squares rows"));
    RFX__TRY(rfx__lapack_int(P, &pp, "pce: least squares terms"));
    double q1 = 0, q2 = 0, q3 = 0;
    dgeqrf_(&nn, &pp, A, &nn, NULL, &q1, &lwork, &info);
    dormqr_("L", "T", &nn, &one, &pp, A, &nn, NULL, NULL, &nn, &q2, &lwork, &info, 1, 1);
    dorgqr_(&nn, &pp, &pp, A, &nn, NULL, &q3, &lwork, &info);
    lwork = (int)fmax(fmax(q1, q2), fmax(q3, 1.0));

    double *tau = NULL, *work = NULL, *qty = NULL, *r = NULL, *Rinv = NULL;
    size_t PP = 0;
    rfx_status st = rfx__mul(P, P, &PP, "pce: least squares");
    if (!st) st = rfx__alloc(P, sizeof *tau, (void **)&tau, "pce: least squares");
    if (!st) st = rfx__alloc((size_t)lwork, sizeof *work, (void **)&work, "pce: least squares");
    if (!st) st = rfx__alloc(n, sizeof *qty, (void **)&qty, "pce: least squares");
    if (!st) st = rfx__alloc(n, sizeof *r, (void **)&r, "pce: least squares");
    if (!st) st = rfx__alloc(PP, sizeof *Rinv, (void **)&Rinv, "pce: least squares");
    if (st) goto done;

    RFX__SERIAL(dgeqrf_(&nn, &pp, A, &nn, tau, work, &lwork, &info))
    if (info != 0) {
        st = rfx__error(RFX_EINTERNAL, "pce: dgeqrf failed (info %d)", info);
        goto done;
    }
    double rmax = 0.0;
    for (size_t j = 0; j < P; j++) rmax = fmax(rmax, fabs(A[j * n + j]));
    double tol = (double)(n > P ? n : P) * DBL_EPSILON * rmax;
    for (size_t j = 0; j < P; j++)
        if (!(fabs(A[j * n + j]) > tol)) {
            *bad = j;
            st = RFX_ENUMERIC;
            goto done;
        }
    /* R and its inverse */
    for (size_t j = 0; j < P; j++)
        for (size_t i = 0; i < P; i++) Rinv[j * P + i] = i <= j ? A[j * n + i] : 0.0;
    RFX__SERIAL(dtrtri_("U", "N", &pp, Rinv, &pp, &info, 1, 1))
    if (info != 0) {
        st = rfx__error(RFX_EINTERNAL, "pce: dtrtri failed (info %d)", info);
        goto done;
    }
    double trinv = 0.0;
    for (size_t k = 0; k < PP; k++) trinv += Rinv[k] * Rinv[k];

    memcpy(qty, y, n * sizeof *qty);
    RFX__SERIAL(dormqr_("L", "T", &nn, &one, &pp, A, &nn, tau, qty, &nn, work, &lwork, &info, 1, 1))
    if (info != 0) {
        st = rfx__error(RFX_EINTERNAL, "pce: dormqr failed (info %d)", info);
        goto done;
    }
    memcpy(coef, qty, P * sizeof *coef);
    RFX__SERIAL(dtrtrs_("U", "N", "N", &pp, &one, A, &nn, coef, &pp, &info, 1, 1, 1))
    if (info != 0) {
        st = rfx__error(RFX_EINTERNAL, "pce: dtrtrs failed (info %d)", info);
        goto done;
    }
    /* residuals: the part of Q^T y outside the column space, mapped back */
    for (size_t i = 0; i < n; i++) r[i] = i < P ? 0.0 : qty[i];
    RFX__SERIAL(dormqr_("L", "N", &nn, &one, &pp, A, &nn, tau, r, &nn, work, &lwork, &info, 1, 1))
    if (info != 0) {
        st = rfx__error(RFX_EINTERNAL, "pce: dormqr failed (info %d)", info);
        goto done;
    }
    RFX__SERIAL(dorgqr_(&nn, &pp, &pp, A, &nn, tau, work, &lwork, &info))
    if (info != 0) {
        st = rfx__error(RFX_EINTERNAL, "pce: dorgqr failed (info %d)", info);
        goto done;
    }
    /* h in qty (no longer needed) */
    for (size_t i = 0; i < n; i++) qty[i] = 0.0;
    for (size_t j = 0; j < P; j++) {
        const double *q = A + j * n;
        for (size_t i = 0; i < n; i++) qty[i] += q[i] * q[i];
    }
    *loo = loo_errors(r, qty, n, P, trinv, yvar);
done:
    free(tau);
    free(work);
    free(qty);
    free(r);
    free(Rinv);
    return st;
}

/* ------------------------------------------------------------------------ */
/* LARS                                                                      */
/* ------------------------------------------------------------------------ */

/* Candidate states during the path. */
enum { LARS_FREE = 0, LARS_ACTIVE = 1, LARS_OUT = 2 };

/* A column enters the hybrid least squares only if at least this fraction
 * of its norm lies outside the span of the active ones (a condition number
 * of 1e8 for the refit); one that does not is dropped for good. */
#define PCE_LARS_COLLINEAR 1e-8
/* A LARS pass over the candidates (n m multiply-adds, once per step) is
 * shared among the threads only above this much work: a parallel region
 * per step costs a fork and a barrier, and on a machine busy with other
 * work each barrier can wait a time slice for a descheduled thread. */
#define LARS_PAR_WORK 262144
/* the automatic sweep up to the sure degree ends after SWEEP_PATIENCE
 * degrees in a row whose corrected LOO error exceeds SWEEP_RISE times the
 * best (see fit_basis) */
#define SWEEP_PATIENCE 2
#define SWEEP_RISE 2.0

/* Double the columns of Q (n x kc) and of the upper triangle R^-1 (kc x kc,
 * column l at l kc), at most to kmax. */
static rfx_status lars_grow(double **Q, double **Rinv, size_t n, size_t *kc, size_t kmax)
{
    size_t k2 = *kc * 2 < kmax ? *kc * 2 : kmax, nq = 0, nr = 0;
    double *Q2 = NULL, *R2 = NULL;
    RFX__TRY(rfx__mul(n, k2, &nq, "pce: LARS"));
    RFX__TRY(rfx__mul(k2, k2, &nr, "pce: LARS"));
    RFX__TRY(rfx__alloc(nq, sizeof *Q2, (void **)&Q2, "pce: LARS"));
    rfx_status st = rfx__calloc(nr, sizeof *R2, (void **)&R2, "pce: LARS");
    if (st) {
        free(Q2);
        return st;
    }
    memcpy(Q2, *Q, n * *kc * sizeof *Q2);
    for (size_t l = 0; l < *kc; l++) memcpy(R2 + l * k2, *Rinv + l * *kc, (l + 1) * sizeof *R2);
    free(*Q);
    free(*Rinv);
    *Q = Q2;
    *Rinv = R2;
    *kc = k2;
    return RFX_OK;
}

/* Least-angle regression (Efron, Hastie, Johnstone & Tibshirani, "Least
 * angle regression", Ann. Statist. 32, 2004, section 2, the LAR variant)
 * over the m candidate columns cols[0..m-1] of Psi (n x M column-major),
 * with the constant column cols[c0] always in: the other columns are
 * centred and scaled to unit norm, x_j = (psi_j - mean_j) / s_j, and y
 * centred. At each step the active set A moves along the equiangular
 * direction u = X_A w until an inactive correlation c_j = x_j^T (y - mu)
 * catches up with the active ones.
 *
 * The active columns (with the constant first) are kept orthonormalised in
 * Q (n x (k + 1)) with the triangle R^-1 of [1, Psi_A] = Q R, which give
 *   - the hybrid refit on [1, Psi_A]: residual and hat diagonal updated
 *     by one column per step, tr((Psi^T Psi)^-1) = |R^-1|_F^2, so the
 *     corrected LOO error of every model on the path costs O(n k);
 *   - the LAR direction without a Gram matrix: X_A = Q_1 R_11 D^-1
 *     (D = diag(s)), so with t = R_11^-T D sign(c_A), u = Q_1 t / |t| and
 *     the equiangular constant A_A = 1 / |t|.
 * The path stops at lmax terms (constant included), when every candidate
 * is in or out, when the correlations vanish, or once the corrected error
 * exceeds factor times the best (OpenTURNS' LeastSquaresMetaModelSelection
 * rule). On return sel[0..*nsel-1] are the positions in cols of the best
 * model's terms (the constant first) and *best its corrected LOO error.
 * Cost per step: 2 n m flops for a = X^T u (OpenMP over candidates) plus
 * O(n k + k^2). */
static rfx_status lars_path(const double *Psi, size_t n, const size_t *cols, size_t m, size_t c0,
                            const double *y, const double *sv, double yvar, size_t lmax,
                            double factor, int nt, size_t *sel, size_t *nsel, double *best)
{
    size_t kmax = lmax; /* terms, constant included                      */
    size_t kc = kmax < 64 ? kmax : 64; /* columns of Q and R^-1 allocated: the
                                          path usually stops long before kmax,
                                          so they grow by doubling           */
    size_t nq = 0, nr = 0;
    RFX__TRY(rfx__mul(n, kc, &nq, "pce: LARS"));
    RFX__TRY(rfx__mul(kc, kc, &nr, "pce: LARS"));
    double *Q = NULL, *Rinv = NULL, *mean = NULL, *sc = NULL, *c = NULL, *a = NULL, *rh = NULL,
           *h = NULL, *v = NULL, *u = NULL, *w = NULL, *t = NULL;
    unsigned char *state = NULL;
    size_t *act = NULL;
    rfx_status st = rfx__alloc(nq, sizeof *Q, (void **)&Q, "pce: LARS");
    if (!st) st = rfx__calloc(nr, sizeof *Rinv, (void **)&Rinv, "pce: LARS");
    if (!st) st = rfx__alloc(m, sizeof *mean, (void **)&mean, "pce: LARS");
    if (!st) st = rfx__alloc(m, sizeof *sc, (void **)&sc, "pce: LARS");
    if (!st) st = rfx__alloc(m, sizeof *c, (void **)&c, "pce: LARS");
    if (!st) st = rfx__alloc(m, sizeof *a, (void **)&a, "pce: LARS");
    if (!st) st = rfx__alloc(m, sizeof *state, (void **)&state, "pce: LARS");
    if (!st) st = rfx__alloc(kmax, sizeof *act, (void **)&act, "pce: LARS");
    if (!st) st = rfx__alloc(n, sizeof *rh, (void **)&rh, "pce: LARS");
    if (!st) st = rfx__alloc(n, sizeof *h, (void **)&h, "pce: LARS");
    if (!st) st = rfx__alloc(n, sizeof *v, (void **)&v, "pce: LARS");
    if (!st) st = rfx__alloc(n, sizeof *u, (void **)&u, "pce: LARS");
    if (!st) st = rfx__alloc(kmax, sizeof *w, (void **)&w, "pce: LARS");
    if (!st) st = rfx__alloc(kmax, sizeof *t, (void **)&t, "pce: LARS");
    if (st) goto done;

    /* the constant model; with row scales sv (weighted rows, Psi and y
     * scaled by sv) the constant column is sv itself */
    double sumv = (double)n;
    if (sv) {
        sumv = 0.0;
        for (size_t i = 0; i < n; i++) sumv += sv[i] * sv[i];
    }
    double sqn = sqrt(sumv), ybar = 0.0;
    for (size_t i = 0; i < n; i++) ybar += sv ? sv[i] * y[i] : y[i];
    ybar /= sumv;
    for (size_t i = 0; i < n; i++) {
        const double s1 = sv ? sv[i] : 1.0;
        Q[i] = s1 / sqn;
        rh[i] = y[i] - ybar * s1;
        h[i] = sv ? s1 * s1 / sumv : 1.0 / (double)n;
    }
    Rinv[0] = 1.0 / sqn;
    double trinv = 1.0 / sumv;
    size_t k = 0; /* active non-constant columns */
    act[0] = c0;
    size_t kbest = 0;
    *best = loo_errors(rh, h, n, 1, trinv, yvar).corrected;

    /* column statistics and the first correlations, c_j = x_j^T (y - ybar) */
    int nfree = 0;
#pragma omp parallel for schedule(static) num_threads(nt) if (m * n > LARS_PAR_WORK) reduction(+ : nfree)
    for (size_t j = 0; j < m; j++) {
        const double *col = Psi + cols[j] * n;
        double s = 0.0, ss = 0.0, raw = 0.0;
        for (size_t i = 0; i < n; i++) s += sv ? sv[i] * col[i] : col[i];
        s /= sumv;
        for (size_t i = 0; i < n; i++) {
            const double e = col[i] - (sv ? s * sv[i] : s); /* the part off the constant */
            ss += e * e;
            raw += col[i] * col[i];
        }
        mean[j] = s;
        sc[j] = sqrt(ss);
        state[j] = LARS_FREE;
        if (j == c0 || !(sc[j] > PCE_LARS_COLLINEAR * sqrt(raw))) {
            state[j] = LARS_OUT;
            c[j] = 0.0;
        } else {
            c[j] = rfx__dot(col, rh, n) / sc[j];
            nfree++;
        }
    }
    double C = 0.0;
    size_t jnext = m;
    for (size_t j = 0; j < m; j++)
        if (state[j] == LARS_FREE && fabs(c[j]) > C) {
            C = fabs(c[j]);
            jnext = j;
        }
    double C0 = C;

    /* (correlations below 1e-13 of the first are rounding noise: y is then
     * fitted exactly by the active columns) */
    while (k + 1 < kmax && jnext < m && C > 1e-13 * C0) {
        /* bring column jnext into Q (modified Gram-Schmidt, twice: "twice is
         * enough" for orthogonality to working precision, Giraud et al.,
         * Numer. Math. 101, 2005) */
        size_t j = jnext;
        const double *col = Psi + cols[j] * n;
        double norm0 = sqrt(rfx__dot(col, col, n));
        memcpy(v, col, n * sizeof *v);
        for (size_t l = 0; l <= k; l++) w[l] = 0.0;
        for (int pass = 0; pass < 2; pass++)
            for (size_t l = 0; l <= k; l++) {
                const double *ql = Q + l * n;
                double g = rfx__dot(ql, v, n);
                w[l] += g;
                for (size_t i = 0; i < n; i++) v[i] -= g * ql[i];
            }
        double rho = sqrt(rfx__dot(v, v, n));
        state[j] = LARS_OUT;
        nfree--;
        if (rho > PCE_LARS_COLLINEAR * norm0) {
            if (k + 2 > kc) {
                st = lars_grow(&Q, &Rinv, n, &kc, kmax);
                if (st) goto done;
            }
            double *qn = Q + (k + 1) * n, *rn = Rinv + (k + 1) * kc;
            for (size_t i = 0; i < n; i++) qn[i] = v[i] / rho;
            /* R^-1 gains the column (-R^-1 w / rho; 1 / rho) */
            double add = 0.0;
            for (size_t i = 0; i <= k; i++) {
                double s = 0.0;
                for (size_t l = i; l <= k; l++) s += Rinv[l * kc + i] * w[l];
                rn[i] = -s / rho;
                add += rn[i] * rn[i];
            }
            rn[k + 1] = 1.0 / rho;
            trinv += add + rn[k + 1] * rn[k + 1];
            /* hybrid least squares on the k + 2 columns */
            double z = rfx__dot(qn, y, n);
            for (size_t i = 0; i < n; i++) {
                rh[i] -= z * qn[i];
                h[i] += qn[i] * qn[i];
            }
            state[j] = LARS_ACTIVE;
            k++;
            act[k] = j;
            double err = loo_errors(rh, h, n, k + 1, trinv, yvar).corrected;
            if (err < *best) {
                *best = err;
                kbest = k;
            } else if (!(err <= factor * *best)) {
                break;
            }
        }
        if (k == 0) { /* the first pick was collinear with the constant */
            C = 0.0;
            jnext = m;
            for (size_t i = 0; i < m; i++)
                if (state[i] == LARS_FREE && fabs(c[i]) > C) {
                    C = fabs(c[i]);
                    jnext = i;
                }
            continue;
        }
        if (nfree == 0) break;

        /* the equiangular direction: t = R_11^-T D sign(c_A), u = Q_1 t / |t| */
        double tt = 0.0;
        for (size_t l = 1; l <= k; l++) {
            double s = 0.0;
            for (size_t i = 1; i <= l; i++) {
                size_t ji = act[i];
                s += Rinv[l * kc + i] * sc[ji] * (c[ji] >= 0 ? 1.0 : -1.0);
            }
            t[l] = s;
            tt += s * s;
        }
        double AA = 1.0 / sqrt(tt);
        for (size_t i = 0; i < n; i++) u[i] = 0.0;
        for (size_t l = 1; l <= k; l++) {
            const double *ql = Q + l * n;
            double g = AA * t[l];
            for (size_t i = 0; i < n; i++) u[i] += g * ql[i];
        }
        /* a_j = x_j^T u (u is orthogonal to the constant, so the mean drops
         * out), then the step gamma to the next entering column */
#pragma omp parallel for schedule(static) num_threads(nt) if (m * n > LARS_PAR_WORK)
        for (size_t i = 0; i < m; i++)
            if (state[i] == LARS_FREE) a[i] = rfx__dot(Psi + cols[i] * n, u, n) / sc[i];
        double gamma = INFINITY;
        jnext = m;
        for (size_t i = 0; i < m; i++) {
            if (state[i] != LARS_FREE) continue;
            double g1 = AA - a[i] > 0 ? (C - c[i]) / (AA - a[i]) : INFINITY;
            double g2 = AA + a[i] > 0 ? (C + c[i]) / (AA + a[i]) : INFINITY;
            double g = fmin(g1 > 0 ? g1 : INFINITY, g2 > 0 ? g2 : INFINITY);
            if (g < gamma) {
                gamma = g;
                jnext = i;
            }
        }
        if (jnext == m) break; /* no candidate can catch up: the path ends */
        for (size_t i = 0; i < m; i++)
            if (state[i] == LARS_FREE) c[i] -= gamma * a[i];
        C -= gamma * AA;
        for (size_t l = 1; l <= k; l++) c[act[l]] = c[act[l]] >= 0 ? C : -C;
    }
    for (size_t l = 0; l <= kbest; l++) sel[l] = act[l];
    *nsel = kbest + 1;
done:
    free(Q);
    free(Rinv);
    free(mean);
    free(sc);
    free(c);
    free(a);
    free(state);
    free(act);
    free(rh);
    free(h);
    free(v);
    free(u);
    free(w);
    free(t);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Fitting                                                                   */
/* ------------------------------------------------------------------------ */

/* One fitted model on a subset of the candidates. */
typedef struct pce_sol {
    size_t P;       /* terms                                                */
    size_t *cols;   /* their candidate indices, ascending                   */
    double *coef;
    pce_loo loo;
    size_t degree, n_candidates;
} pce_sol;

static void sol_free(pce_sol *s)
{
    free(s->cols);
    free(s->coef);
    s->cols = NULL;
    s->coef = NULL;
}

static int size_cmp(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    return a < b ? -1 : a > b;
}

/* Least squares on the candidate columns cols[0..P-1] (ascending) of Psi;
 * takes ownership of cols. */
static rfx_status fit_columns(const double *Psi, size_t n, size_t *cols, size_t P,
                              const unsigned *alpha, size_t d, const double *y, double yvar,
                              pce_sol *out)
{
    out->cols = cols;
    out->P = P;
    out->coef = NULL;
    double *A = NULL;
    size_t nP = 0;
    rfx_status st = rfx__mul(n, P, &nP, "pce: design matrix");
    if (!st) st = rfx__alloc(nP, sizeof *A, (void **)&A, "pce: design matrix");
    if (!st) st = rfx__alloc(P, sizeof *out->coef, (void **)&out->coef, "pce: coefficients");
    if (st) goto fail;
    for (size_t j = 0; j < P; j++) memcpy(A + j * n, Psi + cols[j] * n, n * sizeof *A);
    size_t bad = 0;
    st = lsq_qr(A, n, P, y, yvar, out->coef, &out->loo, &bad);
    if (st == RFX_ENUMERIC) {
        char buf[96];
        st = rfx__error(RFX_ENUMERIC,
                        "pce: the design matrix is rank deficient: term %zu, multi-index %s, is "
                        "(nearly) a combination of the terms before it on these %zu points "
                        "(repeated points, or too few distinct values in a variable?)",
                        bad, alpha_str(alpha + cols[bad] * d, d, buf, sizeof buf), n);
    }
    free(A);
    if (st) goto fail;
    return RFX_OK;
fail:
    sol_free(out);
    return st;
}

/* Copy an explicit basis, checking it. */
static rfx_status copy_basis(const rfx_pce_params *p, size_t d, unsigned **alpha, size_t *P)
{
    size_t Pd = 0; /* basis_terms <= max_candidates: check_params */
    RFX__TRY(rfx__mul(p->basis_terms, d, &Pd, "pce.basis"));
    RFX__TRY(check_alpha(p->basis, p->basis_terms, d, "pce.basis"));
    RFX__TRY(rfx__alloc(Pd, sizeof **alpha, (void **)alpha, "pce.basis"));
    memcpy(*alpha, p->basis, Pd * sizeof **alpha);
    *P = p->basis_terms;
    return RFX_OK;
}

static rfx_status pce_alloc(size_t d, const rfx_marginal *marginals, size_t P,
                            const unsigned *alpha, const double *coef, rfx_pce **out)
{
    rfx_pce *m = calloc(1, sizeof *m);
    if (!m) return rfx__error(RFX_ENOMEM, "pce: cannot allocate the expansion");
    size_t Pd = 0;
    rfx_status st = rfx__mul(P, d, &Pd, "pce: terms");
    if (!st) st = rfx__alloc(d, sizeof *m->marginals, (void **)&m->marginals, "pce: marginals");
    if (!st) st = rfx__alloc(Pd, sizeof *m->alpha, (void **)&m->alpha, "pce: terms");
    if (!st) st = rfx__alloc(P, sizeof *m->coef, (void **)&m->coef, "pce: coefficients");
    if (st) {
        rfx_pce_free(m);
        return st;
    }
    memcpy(m->marginals, marginals, d * sizeof *marginals);
    if (Pd) memcpy(m->alpha, alpha, Pd * sizeof *alpha);
    if (P) memcpy(m->coef, coef, P * sizeof *coef);
    m->d = d;
    m->n_terms = P;
    st = sparse_build(m->alpha, P, d, &m->sp, &m->pmax);
    if (st) {
        rfx_pce_free(m);
        return st;
    }
    size_t deg = 0;
    for (size_t k = 0; k < P; k++) {
        size_t s = 0;
        for (size_t i = 0; i < d; i++) s += m->alpha[k * d + i];
        if (s > deg) deg = s;
    }
    m->degree = deg;
    m->method = RFX_PCE_METHOD_LSQ;
    m->loo_mse = m->loo_relative = m->loo_corrected = NAN;
    *out = m;
    return RFX_OK;
}

/* Fit params' basis (the degree sweep, or the given basis). Degrees above
 * sure_degree are taken only when their corrected LOO error is below half
 * the best so far, and the sweep stops after two of them in a row are not:
 * data without noise from a smooth function keep gaining by orders of
 * magnitude there, noisy data gain nothing, and the argmin of a flat
 * curve over many degrees would pick noise. With patience > 0 (the
 * automatic basis: SWEEP_PATIENCE), up to sure_degree the sweep stops
 * after that many degrees in a row whose error is above SWEEP_RISE times
 * the best: once the basis outgrows the rows the error grows fast with the
 * degree (OTL, borehole: 1.9 to 50 times the best two degrees later), and
 * the last degrees, whose candidates are the most (C(d + p, p)), cost the
 * most. A degree without gain but not that far above the best does not
 * count: the error is flat over the degrees that a function does not use
 * (every other degree for an even or odd function; degrees 2 to 5 for a
 * Legendre polynomial of degree 6, orthogonal to all lower ones), and
 * the gain comes later. The design matrix's columns are computed as the
 * sweep first needs them. */
static rfx_status fit_basis(const rfx_pce_params *params, rfx_cmat X, const double *y,
                            size_t sure_degree, size_t patience, rfx_pce **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "pce_fit: out is NULL");
    if (!y && X.rows > 0) return rfx__error(RFX_EINVAL, "pce_fit: y is NULL");
    RFX__TRY(rfx__check_cmat(X, "pce_fit: X"));
    size_t n = X.rows, d = X.cols;
    if (d == 0) return rfx__error(RFX_EDIM, "pce_fit: X has no columns");
    RFX__TRY(check_params(params, d));
    const rfx_pce_params *p = params;
    if (n < 2) return rfx__error(RFX_EDIM, "pce_fit: %zu rows; at least 2 are needed", n);
    size_t bi = 0, bj = 0;
    if (!rfx__all_finite(X, &bi, &bj))
        return rfx__error(RFX_EPARSE, "pce_fit: X row %zu, column %zu: value is not finite", bi, bj);
    RFX__TRY(check_support(params->marginals, X, "pce_fit"));
    for (size_t i = 0; i < n; i++)
        if (!isfinite(y[i]))
            return rfx__error(RFX_EPARSE, "pce_fit: y[%zu]: value is not finite", i);

    /* candidates, the degree sweep */
    unsigned *alpha = NULL;
    size_t M = 0;
    if (p->basis)
        RFX__TRY(copy_basis(p, d, &alpha, &M));
    else
        RFX__TRY(enumerate_basis(p, d, &alpha, &M));
    size_t deg_hi = p->basis ? 0 : p->degree;
    size_t deg_lo = p->basis ? 0 : (p->degree_min ? p->degree_min : p->degree);
    double q = p->basis ? 1.0 : p->q_norm;
    size_t c0 = M; /* the constant's candidate index */
    for (size_t k = 0; k < M && c0 == M; k++) {
        size_t i = 0;
        while (i < d && alpha[k * d + i] == 0) i++;
        if (i == d) c0 = k;
    }

    pce_sparse sp = {NULL, NULL, NULL};
    pce_rec rec = {{NULL, NULL}, 0};
    double *Vt = NULL, *Psi = NULL, *qsum = NULL, *sv = NULL, *ys = NULL;
    size_t *cand = NULL, *sel = NULL, *todo = NULL;
    unsigned char *filled = NULL;
    pce_sol bestsol = {0, NULL, NULL, {INFINITY, INFINITY, INFINITY}, 0, 0};
    unsigned pmax = 0;
    size_t nM = 0, nV = 0;
    int nt = rfx__threads(p->n_threads);
    rfx_status st = RFX_OK;
    if (p->method == RFX_PCE_METHOD_LARS && c0 == M) {
        st = rfx__error(RFX_EINVAL, "pce.basis: LARS needs the constant (the zero multi-index) "
                                    "among the candidate terms");
        goto done;
    }
    st = sparse_build(alpha, M, d, &sp, &pmax);
    if (!st) st = rec_init(&rec, pmax);
    if (!st) st = rfx__mul3(n, d, (size_t)pmax + 1, &nV, "pce: univariate table");
    if (!st) st = rfx__alloc(nV, sizeof *Vt, (void **)&Vt, "pce: univariate table");
    if (!st) st = rfx__mul(n, M, &nM, "pce: design matrix");
    if (!st) st = rfx__alloc(nM, sizeof *Psi, (void **)&Psi, "pce: design matrix");
    if (!st) st = rfx__alloc(M, sizeof *qsum, (void **)&qsum, "pce");
    if (!st) st = rfx__alloc(M, sizeof *cand, (void **)&cand, "pce");
    if (!st) st = rfx__alloc(M, sizeof *sel, (void **)&sel, "pce");
    if (!st) st = rfx__alloc(M, sizeof *todo, (void **)&todo, "pce");
    if (!st) st = rfx__calloc(M, sizeof *filled, (void **)&filled, "pce");
    if (!st && p->sample_weight) st = rfx__alloc(n, sizeof *sv, (void **)&sv, "pce: weights");
    if (!st && p->sample_weight) st = rfx__alloc(n, sizeof *ys, (void **)&ys, "pce: weights");
    if (st) goto done;

    /* Psi (n x M, column-major): the candidates at the points, each column
     * filled when a degree first needs it */
    univariate_table(p->marginals, d, &rec, X.data, X.stride, n, Vt, n);
    for (size_t k = 0; k < M; k++) {
        double s = 0.0;
        for (size_t i = 0; i < d; i++) s += pow((double)alpha[k * d + i], q);
        qsum[k] = s;
    }

    double ybar = 0.0, yvar = 0.0;
    if (sv) {
        /* weighted rows (rfx_pce_fit passes positive, unequal weights): the
         * least squares of the rows and targets scaled by sqrt(v_i), v_i = n
         * w_i / sum w, whose hat matrix has the weighted leverages; y's
         * variance the weighted one */
        double W = 0.0;
        for (size_t i = 0; i < n; i++) W += p->sample_weight[i];
        for (size_t i = 0; i < n; i++) {
            const double v = (double)n * p->sample_weight[i] / W;
            sv[i] = sqrt(v);
            ybar += v * y[i];
        }
        ybar /= (double)n;
        for (size_t i = 0; i < n; i++) {
            yvar += sv[i] * sv[i] * (y[i] - ybar) * (y[i] - ybar);
            ys[i] = sv[i] * y[i];
        }
        y = ys;
    } else {
        for (size_t i = 0; i < n; i++) ybar += y[i];
        ybar /= (double)n;
        for (size_t i = 0; i < n; i++) yvar += (y[i] - ybar) * (y[i] - ybar);
    }
    yvar /= (double)(n - 1);

    size_t misses = 0; /* degrees above sure_degree in a row not taken */
    size_t stall = 0;  /* degrees up to sure_degree in a row far above the best */
    for (size_t deg = deg_lo; deg <= deg_hi; deg++) {
        /* the candidates of this degree: |a|_q <= deg */
        size_t m = 0, mc0 = M, nt_do = 0;
        double bound = pow((double)deg, q) * (1 + 1e-9);
        for (size_t k = 0; k < M; k++)
            if (p->basis || qsum[k] <= bound) {
                if (k == c0) mc0 = m;
                cand[m++] = k;
                if (!filled[k]) {
                    filled[k] = 1;
                    todo[nt_do++] = k;
                }
            }
#pragma omp parallel for schedule(static) num_threads(nt) if (nt_do > 16)
        for (size_t t = 0; t < nt_do; t++) {
            double *col = Psi + todo[t] * n;
            term_values(&sp, todo[t], Vt, pmax, n, n, col);
            if (sv)
                for (size_t i = 0; i < n; i++) col[i] *= sv[i];
        }
        pce_sol sol = {0, NULL, NULL, {INFINITY, INFINITY, INFINITY}, deg, m};
        size_t *cols = NULL, P = 0;
        if (p->method == RFX_PCE_METHOD_LSQ) {
            if (m > n) {
                if (deg > deg_lo) break; /* more terms at every higher degree */
                st = rfx__error(RFX_EINVAL,
                                "pce_fit: %zu rows are fewer than the %zu terms of the %s "
                                "(least squares needs n >= terms; use more points, a lower "
                                "pce.degree or pce.method = RFX_PCE_METHOD_LARS)",
                                n, m, p->basis ? "given basis" : "candidate basis");
                goto done;
            }
            st = rfx__alloc(m, sizeof *cols, (void **)&cols, "pce");
            if (st) goto done;
            memcpy(cols, cand, m * sizeof *cols);
            P = m;
        } else {
            size_t lmax = n - 1;
            if (p->lars_max_terms && p->lars_max_terms < lmax) lmax = p->lars_max_terms;
            if (m < lmax) lmax = m;
            size_t nsel = 0;
            double err = 0;
            st = lars_path(Psi, n, cand, m, mc0, y, sv, yvar, lmax, p->lars_error_factor, nt,
                           sel, &nsel, &err);
            if (st) goto done;
            st = rfx__alloc(nsel, sizeof *cols, (void **)&cols, "pce");
            if (st) goto done;
            for (size_t l = 0; l < nsel; l++) cols[l] = cand[sel[l]];
            qsort(cols, nsel, sizeof *cols, size_cmp);
            P = nsel;
        }
        st = fit_columns(Psi, n, cols, P, alpha, d, y, yvar, &sol);
        if (st == RFX_ENUMERIC && deg > deg_lo) {
            st = RFX_OK; /* the points cannot resolve this degree: keep the best so far */
            break;
        }
        if (st) goto done;
        sol.degree = deg;
        sol.n_candidates = m;
        const int high = bestsol.cols != NULL && deg > sure_degree;
        if (bestsol.cols == NULL ||
            sol.loo.corrected < (high ? 0.5 * bestsol.loo.corrected : bestsol.loo.corrected)) {
            sol_free(&bestsol);
            bestsol = sol;
            misses = 0;
            stall = 0;
        } else {
            const int far = sol.loo.corrected > SWEEP_RISE * bestsol.loo.corrected;
            sol_free(&sol);
            if (high && ++misses == 2) break;
            stall = far ? stall + 1 : 0;
            if (!high && patience && stall == patience) break;
        }
    }

    {
        unsigned *ta = NULL;
        size_t Pd = 0;
        st = rfx__mul(bestsol.P, d, &Pd, "pce: terms");
        if (!st) st = rfx__alloc(Pd, sizeof *ta, (void **)&ta, "pce: terms");
        if (st) goto done;
        for (size_t k = 0; k < bestsol.P; k++)
            memcpy(ta + k * d, alpha + bestsol.cols[k] * d, d * sizeof *ta);
        rfx_pce *m = NULL;
        st = pce_alloc(d, p->marginals, bestsol.P, ta, bestsol.coef, &m);
        free(ta);
        if (st) goto done;
        if (!p->basis) m->degree = bestsol.degree;
        m->method = p->method;
        m->n_train = n;
        m->n_candidates = bestsol.n_candidates;
        m->loo_mse = bestsol.loo.mse;
        m->loo_relative = bestsol.loo.relative;
        m->loo_corrected = bestsol.loo.corrected;
        m->n_threads = p->n_threads;
        *out = m;
    }
done:
    sol_free(&bestsol);
    sparse_free(&sp);
    rec_free(&rec);
    free(alpha);
    free(Vt);
    free(Psi);
    free(qsum);
    free(cand);
    free(sel);
    free(todo);
    free(filled);
    free(sv);
    free(ys);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Assembled expansions, accessors                                           */
/* ------------------------------------------------------------------------ */

rfx_status rfx_pce_create(size_t d, const rfx_marginal *marginals, size_t n_terms,
                          const unsigned *alpha, const double *coef, rfx_pce **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "pce_create: out is NULL");
    if (d == 0) return rfx__error(RFX_EINVAL, "pce_create: d is 0");
    RFX__TRY(check_marginals(marginals, d, "pce_create: marginals"));
    size_t Pd = 0;
    RFX__TRY(rfx__mul(n_terms, d, &Pd, "pce_create: alpha"));
    RFX__TRY(check_alpha(alpha, n_terms, d, "pce_create: alpha"));
    if (!coef && n_terms > 0) return rfx__error(RFX_EINVAL, "pce_create: coef is NULL");
    for (size_t k = 0; k < n_terms; k++)
        if (!isfinite(coef[k]))
            return rfx__error(RFX_EINVAL, "pce_create: coef[%zu] is not finite", k);
    return pce_alloc(d, marginals, n_terms, alpha, coef, out);
}

void rfx_pce_free(rfx_pce *pce)
{
    if (!pce) return;
    free(pce->marginals);
    free(pce->alpha);
    free(pce->coef);
    free(pce->span);
    sparse_free(&pce->sp);
    free(pce);
}

/* The edges lo[i] < hi[i], in the standard variable t, beyond which the
 * expansion is continued linearly: -+(1 + 1 / (2 p_i^2)) for a uniform
 * input whose largest degree in the expansion is p_i >= 1, where a
 * polynomial of degree p_i is still at most cosh(1) ~ 1.54 times its
 * largest value on [-1, 1] (the Chebyshev bound |P(t)| <= |T_p(t)| max |P|,
 * T_p(1 + 1/(2 p^2)) ~ cosh 1); the training range in t of a normal or
 * lognormal input of degree >= 1 when the expansion has a span; -+INFINITY
 * for the other inputs. */
static void trust_edges(const rfx_pce *pce, double *lo, double *hi)
{
    const size_t d = pce->d;
    for (size_t i = 0; i < d; i++) hi[i] = 0.0;
    for (size_t k = 0; k < pce->n_terms; k++)
        for (size_t i = 0; i < d; i++) hi[i] = fmax(hi[i], (double)pce->alpha[k * d + i]);
    for (size_t i = 0; i < d; i++) {
        const rfx_marginal *m = &pce->marginals[i];
        const double p = hi[i];
        lo[i] = -INFINITY;
        hi[i] = INFINITY;
        if (p > 0 && m->kind == RFX_MARGINAL_UNIFORM) {
            hi[i] = 1.0 + 0.5 / (p * p);
            lo[i] = -hi[i];
        } else if (p > 0 && pce->span) {
            lo[i] = standardize(m, pce->span[i]);
            hi[i] = standardize(m, pce->span[d + i]);
        }
    }
}

/* Whether row x leaves the trusted range of an input. */
static int outside_support(const rfx_pce *pce, const double *lo, const double *hi,
                           const double *x)
{
    for (size_t i = 0; i < pce->d; i++) {
        double t = standardize(&pce->marginals[i], x[i]);
        if (t < lo[i] || t > hi[i]) return 1;
    }
    return 0;
}

/* psi_k(t) and psi_k'(t), k = 0..p: the recurrence of eval_1d and its
 * derivative, psi'_{k+1} = (psi_k + t psi'_k - b_k psi'_{k-1}) / b_{k+1}. */
static void eval_1d_slope(const double *c, double t, size_t p, double *out, double *dout)
{
    double prev = 0.0, cur = 1.0, dprev = 0.0, dcur = 0.0;
    out[0] = 1.0;
    dout[0] = 0.0;
    for (size_t k = 0; k < p; k++) {
        double next = (t * cur - c[2 * k] * prev) * c[2 * k + 1];
        double dnext = (cur + t * dcur - c[2 * k] * dprev) * c[2 * k + 1];
        prev = cur;
        cur = next;
        dprev = dcur;
        dcur = dnext;
        out[k + 1] = cur;
        dout[k + 1] = dcur;
    }
}

/* The expansion continued linearly beyond the trusted range of its inputs
 * (rfx_pce_predict): with c the point x clamped to it,
 *     f(c) + sum_i (u_i - c_i) df/du_i(c)
 * over the coordinates outside, u_i = x_i for a uniform or normal input and
 * log x_i for a lognormal one (the expansion is linear in t, and so in u).
 * ws: 2 d (pmax + 2) values. */
static double continued(const rfx_pce *pce, const pce_rec *rec, const double *lo,
                        const double *hi, const double *x, double *ws)
{
    const size_t d = pce->d, P = (size_t)pce->pmax + 1;
    double *psi = ws, *dpsi = psi + d * P, *delta = dpsi + d * P, *side = delta + d;
    for (size_t i = 0; i < d; i++) {
        const rfx_marginal *m = &pce->marginals[i];
        const double *c = rec->c[hermite(m->kind)];
        double t = standardize(m, x[i]);
        side[i] = 0.0;
        delta[i] = 0.0;
        if (t < lo[i] || t > hi[i]) {
            side[i] = t < lo[i] ? -1.0 : 1.0;
            const double te = t < lo[i] ? lo[i] : hi[i];
            eval_1d_slope(c, te, P - 1, psi + i * P, dpsi + i * P);
            if (m->kind == RFX_MARGINAL_UNIFORM) {
                delta[i] = x[i] - (0.5 * (m->a + m->b) + 0.5 * (m->b - m->a) * te);
                for (size_t n = 0; n < P; n++) dpsi[i * P + n] *= 2.0 / (m->b - m->a);
            } else {
                delta[i] = t - te; /* in t: df/dt (t - te) */
            }
        } else {
            eval_1d(c, t, P - 1, psi + i * P, 1);
        }
    }
    double f = 0.0;
    for (size_t k = 0; k < pce->n_terms; k++) {
        const unsigned *a = pce->alpha + k * d;
        double v = pce->coef[k];
        for (size_t i = 0; i < d; i++) v *= psi[i * P + a[i]];
        f += v;
        for (size_t i = 0; i < d; i++) {
            if (side[i] == 0.0 || a[i] == 0) continue;
            double g = pce->coef[k] * dpsi[i * P + a[i]];
            for (size_t j = 0; j < d; j++)
                if (j != i) g *= psi[j * P + a[j]];
            f += g * delta[i];
        }
    }
    return f;
}

rfx_status rfx_pce_predict(const rfx_pce *pce, rfx_cmat X, double *y)
{
    if (!pce) return rfx__error(RFX_EINVAL, "pce_predict: pce is NULL");
    if (!y && X.rows > 0) return rfx__error(RFX_EINVAL, "pce_predict: y is NULL");
    RFX__TRY(rfx__check_cmat(X, "pce_predict: X"));
    if (X.cols != pce->d)
        return rfx__error(RFX_EDIM, "pce_predict: X has %zu columns, the expansion %zu inputs",
                          X.cols, pce->d);
    if (X.rows == 0) return RFX_OK;
    RFX__TRY(check_support(pce->marginals, X, "pce_predict"));
    enum { TILE = RFX__ROW_TILE };
    int nt = rfx__threads(pce->n_threads);
    size_t ntiles = (X.rows + TILE - 1) / TILE;
    if ((size_t)nt > ntiles) nt = (int)ntiles;
    size_t per = 0, total = 0;
    pce_rec rec;
    RFX__TRY(rfx__mul3(pce->d, (size_t)pce->pmax + 1, TILE, &per, "pce_predict: workspace"));
    RFX__TRY(rfx__add(per, 2 * TILE, &per, "pce_predict: workspace"));
    size_t extra = 0; /* the linear continuation's, before col and acc */
    RFX__TRY(rfx__mul(2 * pce->d, (size_t)pce->pmax + 2, &extra, "pce_predict: workspace"));
    RFX__TRY(rfx__add(per, extra, &per, "pce_predict: workspace"));
    RFX__TRY(rfx__mul(per, (size_t)nt, &total, "pce_predict: workspace"));
    double *edge = NULL;
    RFX__TRY(rfx__alloc(2 * pce->d, sizeof *edge, (void **)&edge, "pce_predict: workspace"));
    trust_edges(pce, edge, edge + pce->d);
    rfx_status st = rec_init(&rec, pce->pmax);
    if (st) {
        free(edge);
        return st;
    }
    double *ws = NULL;
    st = rfx__alloc(total, sizeof *ws, (void **)&ws, "pce_predict: workspace");
    if (st) {
        rec_free(&rec);
        free(edge);
        return st;
    }
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
#ifdef _OPENMP
        double *Vt = ws + per * (size_t)omp_get_thread_num();
#else
        double *Vt = ws;
#endif
        double *col = Vt + per - 2 * TILE, *acc = col + TILE, *cw = col - extra;
#pragma omp for schedule(static)
        for (size_t tile = 0; tile < ntiles; tile++) {
            size_t r0 = tile * TILE, rows = X.rows - r0 < TILE ? X.rows - r0 : TILE;
            univariate_table(pce->marginals, pce->d, &rec, X.data + r0 * X.stride, X.stride,
                             rows, Vt, TILE);
            for (size_t r = 0; r < rows; r++) acc[r] = 0.0;
            for (size_t k = 0; k < pce->n_terms; k++) {
                double ck = pce->coef[k];
                term_values(&pce->sp, k, Vt, pce->pmax, TILE, rows, col);
                for (size_t r = 0; r < rows; r++) acc[r] += ck * col[r];
            }
            for (size_t r = 0; r < rows; r++) {
                const double *x = X.data + (r0 + r) * X.stride;
                y[r0 + r] = outside_support(pce, edge, edge + pce->d, x)
                                  ? continued(pce, &rec, edge, edge + pce->d, x, cw)
                                                          : acc[r];
            }
        }
    }
    free(ws);
    free(edge);
    rec_free(&rec);
    return RFX_OK;
}

size_t rfx_pce_n_terms(const rfx_pce *pce) { return pce ? pce->n_terms : 0; }

rfx_status rfx_pce_term(const rfx_pce *pce, size_t k, double *coef, unsigned *alpha)
{
    if (!pce) return rfx__error(RFX_EINVAL, "pce_term: pce is NULL");
    if (k >= pce->n_terms)
        return rfx__error(RFX_EINVAL, "pce_term: term %zu of an expansion with %zu terms", k,
                          pce->n_terms);
    if (coef) *coef = pce->coef[k];
    if (alpha) memcpy(alpha, pce->alpha + k * pce->d, pce->d * sizeof *alpha);
    return RFX_OK;
}

const rfx_marginal *rfx_pce_marginals(const rfx_pce *pce) { return pce ? pce->marginals : NULL; }

/* mean c_0 and variance sum_{a != 0} c_a^2 (orthonormality) */
static void moments(const rfx_pce *pce, double *mean, double *var)
{
    double m = 0.0, v = 0.0;
    for (size_t k = 0; k < pce->n_terms; k++) {
        if (pce->sp.off[k] == pce->sp.off[k + 1])
            m += pce->coef[k];
        else
            v += pce->coef[k] * pce->coef[k];
    }
    *mean = m;
    *var = v;
}

rfx_status rfx_pce_moments(const rfx_pce *pce, double *mean, double *variance)
{
    if (!pce) return rfx__error(RFX_EINVAL, "pce_moments: pce is NULL");
    double m, v;
    moments(pce, &m, &v);
    if (mean) *mean = m;
    if (variance) *variance = v;
    return RFX_OK;
}

/* Sudret 2008, eq. 43-44: the variance of the terms of each variable. */
rfx_status rfx_pce_sobol(const rfx_pce *pce, double *first, double *total)
{
    if (!pce) return rfx__error(RFX_EINVAL, "pce_sobol: pce is NULL");
    size_t d = pce->d;
    double m, v;
    moments(pce, &m, &v);
    if (first)
        for (size_t i = 0; i < d; i++) first[i] = 0.0;
    if (total)
        for (size_t i = 0; i < d; i++) total[i] = 0.0;
    if (!(v > 0)) return RFX_OK;
    for (size_t k = 0; k < pce->n_terms; k++) {
        size_t j0 = pce->sp.off[k], j1 = pce->sp.off[k + 1];
        double share = pce->coef[k] * pce->coef[k] / v;
        if (j1 == j0) continue;
        if (first && j1 == j0 + 1) first[pce->sp.var[j0]] += share;
        if (total)
            for (size_t j = j0; j < j1; j++) total[pce->sp.var[j]] += share;
    }
    return RFX_OK;
}

/* Sudret 2008, as rfx_pce_sobol: the variance of the terms in exactly the inputs
 * {i, j}, written to both (i, j) and (j, i); the terms of one input give
 * the diagonal, S_i, as rfx_sobol_model_exact's second does. */
rfx_status rfx_pce_sobol_second(const rfx_pce *pce, double *second)
{
    if (!pce) return rfx__error(RFX_EINVAL, "pce_sobol_second: pce is NULL");
    if (!second)
        return rfx__error(RFX_EINVAL, "pce_sobol_second: second is NULL (d x d values needed)");
    size_t d = pce->d;
    double m, v;
    moments(pce, &m, &v);
    for (size_t i = 0; i < d * d; i++) second[i] = 0.0;
    if (!(v > 0)) return RFX_OK;
    for (size_t k = 0; k < pce->n_terms; k++) {
        size_t j0 = pce->sp.off[k], j1 = pce->sp.off[k + 1];
        double share = pce->coef[k] * pce->coef[k] / v;
        if (j1 == j0 + 1) {
            size_t i = pce->sp.var[j0];
            second[i * d + i] += share;
        } else if (j1 == j0 + 2) {
            size_t i = pce->sp.var[j0], j = pce->sp.var[j0 + 1];
            second[i * d + j] += share;
            second[j * d + i] += share;
        }
    }
    return RFX_OK;
}

rfx_status rfx_pce_get_info(const rfx_pce *pce, rfx_pce_info *info)
{
    if (!pce || !info) return rfx__error(RFX_EINVAL, "pce_get_info: NULL argument");
    rfx_pce_info r;
    memset(&r, 0, sizeof r);
    r.dim = pce->d;
    r.degree = pce->degree;
    r.n_terms = pce->n_terms;
    r.n_candidates = pce->n_candidates;
    r.n_train = pce->n_train;
    r.method = pce->method;
    r.loo_mse = pce->loo_mse;
    r.loo_relative = pce->loo_relative;
    r.loo_corrected = pce->loo_corrected;
    r.degree_min = pce->degree_min;
    r.degree_max = pce->degree_max ? pce->degree_max : pce->degree;
    r.q_norm = pce->q_norm > 0 ? pce->q_norm : 1.0;
    r.max_interaction = pce->max_interaction;
    r.n_screened = pce->screened;
    moments(pce, &r.mean, &r.variance);
    *info = r;
    return RFX_OK;
}

/* ------------------------------------------------------------------------ */
/* Internals for PCE models (pce_model.c, model/modelio.c)                    */
/* ------------------------------------------------------------------------ */

/* The fit's report and settings of from into to (not the terms, the
 * marginals or the span). */
static void copy_report(rfx_pce *to, const rfx_pce *from)
{
    to->degree = from->degree;
    to->method = from->method;
    to->n_train = from->n_train;
    to->n_candidates = from->n_candidates;
    to->loo_mse = from->loo_mse;
    to->loo_relative = from->loo_relative;
    to->loo_corrected = from->loo_corrected;
    to->degree_min = from->degree_min;
    to->degree_max = from->degree_max;
    to->q_norm = from->q_norm;
    to->max_interaction = from->max_interaction;
    to->screened = from->screened;
    to->n_threads = from->n_threads;
}

rfx_status rfx__pce_copy(const rfx_pce *pce, rfx_pce **out)
{
    rfx_pce *c = NULL;
    RFX__TRY(pce_alloc(pce->d, pce->marginals, pce->n_terms, pce->alpha, pce->coef, &c));
    copy_report(c, pce);
    if (pce->span) {
        rfx_status st = rfx__pce_set_span(c, pce->span);
        if (st) {
            rfx_pce_free(c);
            return st;
        }
    }
    *out = c;
    return RFX_OK;
}

rfx_status rfx__pce_set_span(rfx_pce *pce, const double *span)
{
    if (!pce->span)
        RFX__TRY(rfx__alloc(2 * pce->d, sizeof(double), (void **)&pce->span, "pce: span"));
    memcpy(pce->span, span, 2 * pce->d * sizeof(double));
    return RFX_OK;
}

const double *rfx__pce_span(const rfx_pce *pce)
{
    return pce->span;
}

void rfx__pce_set_report(rfx_pce *pce, const rfx_pce_info *info)
{
    pce->degree = info->degree;
    pce->method = info->method;
    pce->n_train = info->n_train;
    pce->n_candidates = info->n_candidates;
    pce->loo_mse = info->loo_mse;
    pce->loo_relative = info->loo_relative;
    pce->loo_corrected = info->loo_corrected;
}

void rfx__pce_arrays(const rfx_pce *pce, const unsigned **alpha, const double **coef)
{
    *alpha = pce->alpha;
    *coef = pce->coef;
}

/* ---- the automatic basis and marginals ---------------------------------- */

enum { AUTO_MAX_DEGREE = 10, AUTO_MAX_TERMS = 10000, AUTO_HIGH_DEGREE = 20 };

/* The screening threshold: the first fit's relative corrected LOO error
 * over this (see fit_given). */
#define SCREEN_DIVISOR 10.0

/* The largest p whose total-degree basis, C(d + p, p) terms, has at most
 * AUTO_MAX_TERMS of them, up to AUTO_MAX_DEGREE, and beyond that up to
 * AUTO_HIGH_DEGREE while it has at most 2 n terms (1 when even p = 1 has
 * more than AUTO_MAX_TERMS). Only a few inputs reach past degree 10: with
 * n = 500 rows, d = 3 goes to 16 (969 terms) and d = 4 stays at 10. A
 * smooth function of few inputs, such as Ishigami's (three sines), needs
 * the high degrees, and the corrected LOO error decides between them. */
static size_t auto_degree(size_t d, size_t n)
{
    size_t p = 1;
    double terms = (double)d + 1.0; /* C(d + 1, 1) */
    for (size_t k = 2; k <= AUTO_HIGH_DEGREE; k++) {
        terms = terms * (double)(d + k) / (double)k; /* C(d + k, k), exact below 2^53 */
        if (terms > AUTO_MAX_TERMS || (k > AUTO_MAX_DEGREE && terms > 2.0 * (double)n)) break;
        p = k;
    }
    return p;
}

/* The terms the pairwise and hyperbolic bases may have: min(4 n,
 * AUTO_MAX_TERMS). */
static double auto_term_budget(size_t n)
{
    return 4.0 * (double)n < AUTO_MAX_TERMS ? 4.0 * (double)n : AUTO_MAX_TERMS;
}

/* The pairwise basis's degree: the largest P <= AUTO_MAX_DEGREE whose 1 +
 * d P + C(d, 2) C(P, 2) terms are at most min(4 n, AUTO_MAX_TERMS)
 * (pairwise interactions of high degree suit many engineering functions of
 * several inputs; the corrected LOO error decides); 0 when not even degree
 * 2 fits. */
static size_t auto_pairwise_degree(size_t d, size_t n)
{
    const double budget = auto_term_budget(n);
    double pairs = (double)d * (double)(d - 1) / 2.0;
    size_t best = 0;
    for (size_t k = 2; k <= AUTO_MAX_DEGREE; k++) {
        double terms = 1.0 + (double)d * (double)k + pairs * (double)k * (double)(k - 1) / 2.0;
        if (terms > budget) break;
        best = k;
    }
    return best;
}

/* The hyperbolic basis of the automatic choice: q = HYPERBOLIC_Q (Blatman &
 * Sudret 2011), the terms with sum_i a_i^(1/2) <= P^(1/2), which keeps
 * every degree of each input alone and few interactions. On the OTL
 * circuit (d = 6, m = 200, 10 training seeds) it reached a median
 * validation error of 6.6e-4 at degree 10 (231 candidates) where the
 * total-degree and pairwise bases reached 1.2e-3. Swept to the
 * total-degree cap, its corrected LOO error was the lower on all 10 seeds
 * there, and the higher on every seed of the borehole, wing weight,
 * Ishigami, Friedman #1 and G-function samples (10 each), where it did
 * worse. */
#define HYPERBOLIC_Q 0.5

/* The number of k-tuples (a_1, .., a_k) of positive integers with
 * sum a_i^q <= r. */
static double positive_tuples(size_t k, double q, double r)
{
    if (k == 0) return 1.0;
    double n = 0;
    for (size_t a = 1; pow((double)a, q) <= r; a++)
        n += positive_tuples(k - 1, q, r - pow((double)a, q));
    return n;
}

/* The terms of the q-hyperbolic basis of degree p in d inputs: the sum over
 * k of C(d, k) times the k-tuples of positive entries within the budget
 * (a term has at most p^q nonzero entries, each adding at least 1). */
static double hyperbolic_terms(size_t d, size_t p, double q)
{
    const double r = pow((double)p, q) * (1 + 1e-9);
    double total = 0, choose = 1; /* C(d, k) */
    for (size_t k = 0; k <= d && (double)k <= r; k++) {
        if (k > 0) choose = choose * (double)(d - k + 1) / (double)k;
        total += choose * positive_tuples(k, q, r);
    }
    return total;
}

/* The hyperbolic basis's degree: the largest P <= AUTO_MAX_DEGREE whose
 * terms are at most min(4 n, AUTO_MAX_TERMS), as for the pairwise basis; 0
 * when not even degree 2 fits. */
static size_t auto_hyperbolic_degree(size_t d, size_t n)
{
    const double budget = auto_term_budget(n);
    size_t best = 0;
    for (size_t k = 2; k <= AUTO_MAX_DEGREE; k++) {
        if (hyperbolic_terms(d, k, HYPERBOLIC_Q) > budget) break;
        best = k;
    }
    return best;
}

/* The smallest and largest value of column j of X (X.rows >= 1). */
static void column_range(rfx_cmat X, size_t j, double *lo, double *hi)
{
    double a = X.data[j], b = X.data[j];
    for (size_t i = 1; i < X.rows; i++) {
        double v = X.data[i * X.stride + j];
        a = v < a ? v : a;
        b = v > b ? v : b;
    }
    *lo = a;
    *hi = b;
}

void rfx__range_marginals(rfx_cmat X, rfx_marginal *mg)
{
    for (size_t j = 0; j < X.cols; j++) {
        double lo, hi;
        column_range(X, j, &lo, &hi);
        if (!(hi > lo)) { /* a constant column */
            lo -= 0.5;
            hi += 0.5;
        }
        mg[j] = rfx_marginal_uniform(lo, hi);
    }
}

/* The log-likelihood per row of a column's values v (n finite, not all
 * equal) under its fitted normal (log = 0) or lognormal (log = 1, every v
 * > 0) marginal, at the maximum-likelihood mean and standard deviation;
 * *a, *b receive them; -INFINITY when the family does not fit the column's
 * skewness. */
static double family_loglik(rfx_cmat X, size_t j, int log_scale, double *a, double *b)
{
    const size_t n = X.rows;
    double mean = 0, ss = 0, jac = 0;
    for (size_t i = 0; i < n; i++) {
        double v = X.data[i * X.stride + j], t = log_scale ? log(v) : v;
        mean += t;
        jac += log_scale ? t : 0.0;
    }
    mean /= (double)n;
    double s3 = 0;
    for (size_t i = 0; i < n; i++) {
        double v = X.data[i * X.stride + j], t = (log_scale ? log(v) : v) - mean;
        ss += t * t;
        s3 += t * t * t;
    }
    double sd = sqrt(ss / (double)n);
    *a = mean;
    *b = sd;
    if (!(sd > 0) || !isfinite(sd)) return -INFINITY;
    /* a skewness more than 3 standard errors (sqrt(6 / n)) from the
     * family's 0 rules it out: an exponential column is neither normal nor
     * lognormal (log x of it has skewness -1.14), whatever the likelihoods */
    const double skew = s3 / (double)n / (sd * sd * sd);
    if (!(fabs(skew) <= 3.0 * sqrt(6.0 / (double)n))) return -INFINITY;
    /* -1/2 (log(2 pi sd^2) + 1), less the mean of log v for the density
     * of v itself under the lognormal */
    return -0.5 * (log(2.0 * 3.14159265358979323846 * sd * sd) + 1.0) - jac / (double)n;
}

void rfx__data_marginals(rfx_cmat X, rfx_marginal *mg)
{
    rfx__range_marginals(X, mg);
    for (size_t j = 0; j < X.cols; j++) {
        const double lo = mg[j].a, hi = mg[j].b;
        int constant = 1, positive = 1;
        for (size_t i = 0; i < X.rows; i++) {
            double v = X.data[i * X.stride + j];
            constant &= v == X.data[j];
            positive &= v > 0;
        }
        if (constant || X.rows < 3) continue;
        /* a family replaces the one before only when its log-likelihood
         * is larger by more than log n in all (per row: log n / n), so
         * that a near tie keeps the simpler map of the input */
        const double margin = log((double)X.rows) / (double)X.rows;
        double best = -log(hi - lo), a, b;
        double ll = family_loglik(X, j, 0, &a, &b);
        if (ll > best + margin) {
            best = ll;
            mg[j] = rfx_marginal_normal(a, b);
        }
        if (positive) {
            ll = family_loglik(X, j, 1, &a, &b);
            if (ll > best + margin) mg[j] = rfx_marginal_lognormal(a, b);
        }
    }
}

/* The fit's basis, for rfx_pce_info. */
static void note_basis(rfx_pce *pce, const rfx_pce_params *p)
{
    pce->degree_min = p->basis ? 0 : p->degree_min;
    pce->degree_max = p->basis ? pce->degree : p->degree;
    pce->q_norm = p->basis ? 1.0 : p->q_norm;
    pce->max_interaction = p->basis ? 0 : p->max_interaction;
}

rfx_status rfx__pce_set_span_rows(rfx_pce *pce, rfx_cmat X)
{
    const size_t d = X.cols;
    if (!pce->span)
        RFX__TRY(rfx__alloc(2 * d, sizeof(double), (void **)&pce->span, "pce: span"));
    for (size_t j = 0; j < d; j++) column_range(X, j, &pce->span[j], &pce->span[d + j]);
    return RFX_OK;
}

/* *best becomes the one of *best and *other of lower corrected LOO error
 * (a tie: *best), *other the other. */
static void keep_lower(rfx_pce **best, rfx_pce **other)
{
    if ((*other)->loo_corrected < (*best)->loo_corrected) {
        rfx_pce *t = *best;
        *best = *other;
        *other = t;
    }
}

/* The automatic basis (the degree sweep, then the pairwise basis when it
 * is larger and the hyperbolic one when the sweep stopped below its cap,
 * the one of lower corrected LOO error kept) or the basis asked. */
static rfx_status fit_bases(rfx_pce_params p, rfx_cmat X, const double *y, rfx_pce **out)
{
    rfx_pce *pce = NULL, *pce2 = NULL;
    const int automatic = p.auto_basis && !p.basis;
    if (automatic) {
        p.degree = auto_degree(X.cols, X.rows);
        if (p.degree < p.degree_min) p.degree = p.degree_min;
    }
    rfx_status st = fit_basis(&p, X, y, automatic ? AUTO_MAX_DEGREE : SIZE_MAX,
                              automatic ? SWEEP_PATIENCE : 0, &pce);
    if (!st) note_basis(pce, &p);
    const int below_cap = !st && pce->degree < p.degree;
    const size_t d = X.cols, p2 = automatic && d >= 3 ? auto_pairwise_degree(d, X.rows) : 0;
    if (!st && p.q_norm == 1.0 && p.max_interaction == 0 && p2 > p.degree) {
        rfx_pce_params q = p;
        q.max_interaction = 2;
        q.degree = p2;
        st = fit_basis(&q, X, y, SIZE_MAX, SWEEP_PATIENCE, &pce2);
        if (!st) note_basis(pce2, &q);
        if (!st) keep_lower(&pce, &pce2);
        rfx_pce_free(pce2);
        pce2 = NULL;
    }
    const int hyperbolic = automatic && below_cap && d >= 2 && p.method == RFX_PCE_METHOD_LARS &&
                           p.q_norm == 1.0 && p.max_interaction == 0;
    const size_t ph = !st && hyperbolic ? auto_hyperbolic_degree(d, X.rows) : 0;
    if (ph > 0) {
        rfx_pce_params q = p;
        q.q_norm = HYPERBOLIC_Q;
        q.degree = ph;
        st = fit_basis(&q, X, y, AUTO_MAX_DEGREE, SWEEP_PATIENCE, &pce2);
        if (!st) note_basis(pce2, &q);
        if (!st) keep_lower(&pce, &pce2);
    }
    rfx_pce_free(pce2);
    if (st) {
        rfx_pce_free(pce);
        return st;
    }
    *out = pce;
    return RFX_OK;
}

/* The expansion sub (fitted on the inputs keep[0..k-1] of d) as one in all
 * d inputs, with the marginals mg: its terms are zero in the others. */
static rfx_status embed(const rfx_pce *sub, const size_t *keep, size_t d, const rfx_marginal *mg,
                        rfx_pce **out)
{
    const size_t k = sub->d, P = sub->n_terms;
    unsigned *alpha = NULL;
    size_t Pd = 0;
    RFX__TRY(rfx__mul(P, d, &Pd, "pce: terms"));
    RFX__TRY(rfx__calloc(Pd ? Pd : 1, sizeof *alpha, (void **)&alpha, "pce: terms"));
    for (size_t t = 0; t < P; t++)
        for (size_t j = 0; j < k; j++) alpha[t * d + keep[j]] = sub->alpha[t * k + j];
    rfx_pce *m = NULL;
    rfx_status st = pce_alloc(d, mg, P, alpha, sub->coef, &m);
    free(alpha);
    if (st) return st;
    copy_report(m, sub);
    m->screened = d - k;
    *out = m;
    return RFX_OK;
}

/* The automatic basis again on the inputs whose total Sobol index in the
 * expansion from is at least tau, as an expansion in all d inputs (*out
 * NULL when that keeps every input or none, or when it would not reach a
 * higher degree than the d inputs do). */
static rfx_status fit_screened(const rfx_pce_params *p, rfx_cmat X, const double *y,
                               const rfx_pce *from, double tau, rfx_pce **out)
{
    const size_t n = X.rows, d = X.cols;
    double *total = NULL, *Xk = NULL;
    size_t *keep = NULL, k = 0;
    rfx_marginal *mk = NULL;
    rfx_pce *sub = NULL;
    *out = NULL;
    rfx_status st = rfx__alloc(d, sizeof *total, (void **)&total, "pce: screening");
    if (!st) st = rfx__alloc(d, sizeof *keep, (void **)&keep, "pce: screening");
    if (!st) st = rfx_pce_sobol(from, NULL, total);
    if (st) goto done;
    for (size_t j = 0; j < d; j++)
        if (total[j] >= tau) keep[k++] = j;
    if (k == 0 || k == d) goto done;
    if (auto_degree(k, n) <= auto_degree(d, n) &&
        (k < 3 || auto_pairwise_degree(k, n) <= auto_pairwise_degree(d, n)))
        goto done;
    st = rfx__alloc(n * k, sizeof *Xk, (void **)&Xk, "pce: screening");
    if (!st) st = rfx__alloc(k, sizeof *mk, (void **)&mk, "pce: screening");
    if (st) goto done;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < k; j++) Xk[i * k + j] = X.data[i * X.stride + keep[j]];
    for (size_t j = 0; j < k; j++) mk[j] = p->marginals[keep[j]];
    rfx_pce_params q = *p;
    q.marginals = mk;
    st = fit_bases(q, rfx_cmat_of(Xk, n, k), y, &sub);
    if (!st) st = embed(sub, keep, d, p->marginals, out);
done:
    rfx_pce_free(sub);
    free(total);
    free(keep);
    free(Xk);
    free(mk);
    return st;
}

/* The fit of rfx_pce_fit once the rows and the marginals are settled:
 * fit_bases, and with the automatic basis the screened fit too, when it
 * has the lower corrected LOO error. Its inputs are those whose total
 * Sobol index in the first fit is at least a tenth of that fit's relative
 * corrected LOO error: an input whose whole share of the variance is well
 * below the share the fit leaves unexplained cannot be told from the
 * overfitting that spreads over every input of a wide basis (on Friedman
 * #1 in d = 100 the 95 inert inputs reach totals of 0.003 at an error of
 * 0.05; the five others, 0.07 and more). With fewer inputs the automatic
 * degree is higher: the basis grows where the function lives. */
static rfx_status fit_given(const rfx_pce_params *p, rfx_cmat X, const double *y, rfx_pce **out)
{
    rfx_pce *best = NULL, *cand = NULL;
    RFX__TRY(fit_bases(*p, X, y, &best));
    const double tau = best->loo_corrected / SCREEN_DIVISOR;
    if (p->auto_basis && !p->basis && tau > 0 && isfinite(tau)) {
        rfx_status st = fit_screened(p, X, y, best, tau, &cand);
        if (st) {
            rfx_pce_free(best);
            return st;
        }
        if (cand) keep_lower(&best, &cand);
        rfx_pce_free(cand);
    }
    *out = best;
    return RFX_OK;
}

rfx_status rfx_pce_fit(const rfx_pce_params *params, rfx_cmat X, const double *y, rfx_pce **out)
{
    if (!out) return rfx__error(RFX_EINVAL, "pce_fit: out is NULL");
    RFX__TRY(rfx_pce_params_check(params));
    rfx_pce_params p = *params;
    rfx_marginal *mg = NULL;
    rfx_pce *pce = NULL, *pce2 = NULL;
    double *Xp = NULL, *yp = NULL, *wp = NULL;
    if (p.sample_weight) {
        /* the rows of positive weight alone; equal weights are no weights */
        RFX__TRY(rfx__check_cmat(X, "pce_fit: X"));
        if (!y && X.rows > 0) return rfx__error(RFX_EINVAL, "pce_fit: y is NULL");
        if (X.cols == 0) return rfx__error(RFX_EDIM, "pce_fit: X has no columns");
        RFX__TRY(rfx__check_weights(p.sample_weight, X.rows, "pce.sample_weight"));
        const double *w = p.sample_weight;
        size_t m = 0;
        int equal = 1;
        double first = -1;
        for (size_t i = 0; i < X.rows; i++)
            if (w[i] > 0) {
                if (first < 0) first = w[i];
                equal &= w[i] == first;
                m++;
            }
        p.sample_weight = NULL;
        if (m < X.rows) {
            const size_t d = X.cols;
            rfx_status st = rfx__alloc(m * (d ? d : 1), sizeof *Xp, (void **)&Xp, "pce: rows");
            if (!st) st = rfx__alloc(m, sizeof *yp, (void **)&yp, "pce: rows");
            if (!st) st = rfx__alloc(m, sizeof *wp, (void **)&wp, "pce: rows");
            if (st) {
                free(Xp);
                free(yp);
                return st;
            }
            for (size_t i = 0, k = 0; i < X.rows; i++)
                if (w[i] > 0) {
                    memcpy(Xp + k * d, X.data + i * X.stride, d * sizeof *Xp);
                    yp[k] = y[i];
                    wp[k++] = w[i];
                }
            X = rfx_cmat_of(Xp, m, d);
            y = yp;
            w = wp;
        }
        if (!equal) p.sample_weight = w;
    }
    rfx_status st = RFX_OK;
    if (p.marginals_from_data && !p.marginals) {
        size_t bi = 0, bj = 0;
        RFX__TRY(rfx__check_cmat(X, "pce_fit: X"));
        if (X.cols == 0) return rfx__error(RFX_EDIM, "pce_fit: X has no columns");
        if (X.rows < 2)
            st = rfx__error(RFX_EDIM, "pce_fit: %zu rows; at least 2 are needed", X.rows);
        else if (!rfx__all_finite(X, &bi, &bj))
            st = rfx__error(RFX_EPARSE, "pce_fit: X row %zu, column %zu: value is not finite",
                            bi, bj);
        if (!st) st = rfx__alloc(2 * X.cols, sizeof *mg, (void **)&mg, "pce: marginals");
        if (!st) {
            /* uniform on the ranges, then the families of greatest
             * likelihood when some input is not uniform: the fit of lower
             * corrected LOO error is kept (ties: uniform) */
            rfx_marginal *fitted = mg + X.cols;
            int other = 0;
            rfx__range_marginals(X, mg);
            rfx__data_marginals(X, fitted);
            for (size_t j = 0; j < X.cols; j++) other |= fitted[j].kind != RFX_MARGINAL_UNIFORM;
            p.marginals = mg;
            st = fit_given(&p, X, y, &pce);
            if (!st && other) {
                p.marginals = fitted;
                st = fit_given(&p, X, y, &pce2);
                if (!st) /* the families' polynomials are trusted on the rows' range */
                    st = rfx__pce_set_span_rows(pce2, X);
                if (!st) keep_lower(&pce, &pce2);
            }
        }
    } else {
        st = fit_given(&p, X, y, &pce);
    }
    free(mg);
    free(Xp);
    free(yp);
    free(wp);
    rfx_pce_free(pce2);
    if (st) {
        rfx_pce_free(pce);
        return st;
    }
    *out = pce;
    return RFX_OK;
}
