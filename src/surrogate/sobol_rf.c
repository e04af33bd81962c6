/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Exact moments and Sobol indices of random-feature models (cos / sin
 * features) under independent uniform or normal inputs: closed forms from
 * the characteristic functions of the inputs, no sampling. The formulas are
 * written out in include/rfx/surrogate.h (rfx_sobol_model_exact).
 *
 * In short: with the scaler folded into the frequencies and the inputs
 * centred, y = x - mu, the model is f = c0 + Re sum_j a_j exp(i v_j . y),
 * and every input y_k has a real, even characteristic function rho_k. Each
 * exp(i v.y) = prod_k (rho_k(v_k) + [exp(i v_k y_k) - rho_k(v_k)]) is its
 * own ANOVA (Hoeffding-Sobol) decomposition, so every ANOVA variance is a
 * double sum over pairs of features of products of one-dimensional
 * quantities: rho_k(s) rho_k(t), rho_k(s + t) and the covariance
 * C_k(s, t) = rho_k(s + t) - rho_k(s) rho_k(t). A pair contributes only
 * through the inputs its two frequency vectors share.
 */
#include "internal.h"
#include "rfx/surrogate.h"

#include <math.h>
#include <string.h>

/* One nonzero frequency of a term: the input k and, of its scaled
 * frequency u = v_k h_k (h_k the half-width of a uniform input, the
 * standard deviation of a normal one), the values the pair kernels need
 * (computed once here, so that the O(n^2) pair loop of a uniform input
 * calls no libm function): sin u, cos u, sin(u/2), cos(u/2), rho(u) and,
 * uniform only, 1 - sinc(u). */
typedef struct rf_entry {
    size_t k;
    double u, sn, cs, sh, ch, p, om;
} rf_entry;

/* The features of a model as complex exponentials of the centred inputs,
 * terms with zero weight left out: term j has amplitude ar[j] + i ai[j]
 * and the entries e[off[j]] .. e[off[j+1]-1], by ascending input. */
typedef struct rf_terms {
    size_t n;
    double *ar, *ai;
    size_t *off;
    rf_entry *e;
} rf_terms;

static void terms_free(rf_terms *t)
{
    free(t->ar);
    free(t->ai);
    free(t->off);
    free(t->e);
}

/* sin(x) / x near 0 (|x| < 1/2): its Taylor polynomial through x^14
 * (the next term is below 1e-19). */
static double sinc_small(double x)
{
    double z = x * x;
    return 1.0 + z * (-1.0 / 6 + z * (1.0 / 120 + z * (-1.0 / 5040 + z * (1.0 / 362880 +
           z * (-1.0 / 39916800 + z * (1.0 / 6227020800.0 + z * (-1.0 / 1307674368000.0)))))));
}

static double sinc(double x)
{
    return fabs(x) < 0.5 ? sinc_small(x) : sin(x) / x;
}

/* 1 - sinc(x) without cancellation: the Taylor series x^2/3! - x^4/5! + ...
 * below 1/2 (ten terms leave < 1e-20 relative), directly above. */
static double one_minus_sinc(double x)
{
    if (fabs(x) >= 0.5) return 1.0 - sin(x) / x;
    double x2 = x * x, term = x2 / 6.0, s = 0.0;
    for (int k = 1; k <= 10; k++) {
        s += term;
        term *= -x2 / ((2.0 * k + 2.0) * (2.0 * k + 3.0));
    }
    return s;
}

/* The covariance of exp(i x U) and exp(i y U), U ~ U(-1, 1), that is
 * sinc(x + y) - sinc(x) sinc(y), where the difference a - b of the two
 * computed terms cancels (the caller's test). With |x| <= |y|:
 *  - |y| < 0.1: the double series through degree 10, -xy/3 + xy(3x^2 +
 *    2xy + 3y^2)/90 - ... (truncation below 1e-16 relative);
 *  - |x| <= |y|/2: sinc(y + x) - sinc(y) + (1 - sinc x) sinc y, the first
 *    difference as [2 y cos(y + x/2) sin(x/2) - x sin y] / (y (y + x))
 *    (relative error about 3 eps / y^2);
 *  - otherwise a - b: no small argument is left to cancel. x and y come
 *    as entries (a negated frequency flips u, sin u and sin(u/2)). */
static double cov_sinc(const rf_entry *ex, double sx, const rf_entry *ey, double sy, double a,
                       double b)
{
    if (fabs(ex->u) > fabs(ey->u)) {
        const rf_entry *te = ex;
        double ts = sx;
        ex = ey;
        sx = sy;
        ey = te;
        sy = ts;
    }
    const double x = sx * ex->u, y = sy * ey->u;
    if (fabs(y) < 0.1) {
        double x2 = x * x, y2 = y * y, xy = x * y;
        double c4 = (3 * x2 + 2 * xy + 3 * y2) / 90.0;
        double c6 = (3 * x2 * x2 + 4 * x2 * xy + 10 * x2 * y2 + 4 * xy * y2 + 3 * y2 * y2) /
                    2520.0;
        double c8 = (5 * x2 * x2 * x2 + 10 * x2 * x2 * xy + 35 * x2 * x2 * y2 +
                     28 * x2 * xy * y2 + 35 * x2 * y2 * y2 + 10 * xy * y2 * y2 +
                     5 * y2 * y2 * y2) /
                    226800.0;
        double c10 = (15 * x2 * x2 * x2 * x2 + 40 * x2 * x2 * x2 * xy + 180 * x2 * x2 * x2 * y2 +
                      216 * x2 * x2 * xy * y2 + 378 * x2 * x2 * y2 * y2 +
                      216 * x2 * xy * y2 * y2 + 180 * x2 * y2 * y2 * y2 +
                      40 * xy * y2 * y2 * y2 + 15 * y2 * y2 * y2 * y2) /
                     59875200.0;
        return xy * (-1.0 / 3.0 + c4 - c6 + c8 - c10);
    }
    if (fabs(x) <= 0.5 * fabs(y)) {
        double sy_ = sy * ey->sn, shx = sx * ex->sh;
        double cmid = ey->cs * ex->ch - sy_ * shx; /* cos(y + x/2) */
        double diff = (2.0 * y * cmid * shx - x * sy_) / (y * (y + x));
        return diff + ex->om * ey->p;
    }
    return a - b;
}

/* One input shared by a pair of terms, both channels: with scaled
 * frequencies s (term j) and t (term l), rho = sinc (uniform) or
 * exp(-t^2/2) (normal), and B = rho(s) rho(t):
 *   A+ = rho(s + t), C+ = A+ - B   (the pair a_j a_l)
 *   A- = rho(s - t), C- = A- - B   (the pair a_j conj(a_l)).
 * Uniform: sin(s +- t) by the addition formula when |s +- t| >= 1/2, the
 * Taylor polynomial below; C by cov_sinc where A and B agree to 6 bits.
 * Normal: C = B expm1(-+ s t) for |s t| < 1/2, else from the exponents. */
typedef struct pair_coord {
    double ap, cp, am, cm, b;
} pair_coord;

static void pair_uniform(const rf_entry *es, const rf_entry *et, pair_coord *o)
{
    const double s = es->u, t = et->u, b = es->p * et->p;
    double z = s + t;
    o->b = b;
    o->ap = fabs(z) >= 0.5 ? (es->sn * et->cs + es->cs * et->sn) / z : sinc_small(z);
    o->cp = o->ap - b;
    if (64.0 * fabs(o->cp) < fabs(o->ap) + fabs(b)) o->cp = cov_sinc(es, 1.0, et, 1.0, o->ap, b);
    z = s - t;
    o->am = fabs(z) >= 0.5 ? (es->sn * et->cs - es->cs * et->sn) / z : sinc_small(z);
    o->cm = o->am - b;
    if (64.0 * fabs(o->cm) < fabs(o->am) + fabs(b)) o->cm = cov_sinc(es, 1.0, et, -1.0, o->am, b);
}

static void pair_normal(const rf_entry *es, const rf_entry *et, pair_coord *o)
{
    const double s = es->u, t = et->u, b = es->p * et->p, st = s * t;
    o->b = b;
    if (fabs(st) < 0.5) {
        o->cp = b * expm1(-st);
        o->cm = b * expm1(st);
        o->ap = b + o->cp;
        o->am = b + o->cm;
    } else {
        o->ap = exp(-0.5 * (s + t) * (s + t));
        o->am = exp(-0.5 * (s - t) * (s - t));
        o->cp = o->ap - b;
        o->cm = o->am - b;
    }
}

/* Accumulator layout (per block of rows): [0] V, [1 + i] V_i, [1 + d + i]
 * E[Var(f | x_~i)], then (second-order only) V_ik for i < k packed by rows
 * of the upper triangle. */
static size_t packed_ik(size_t i, size_t k, size_t d)
{
    return i * d - i * (i + 1) / 2 + (k - i - 1);
}

/* Per-thread workspace for one pair: the shared inputs and their values,
 * and prefix / suffix products (d + 1 each). */
typedef struct pair_ws {
    size_t *ci;
    pair_coord *pc;
    double *pre_ap, *suf_ap, *pre_am, *suf_am, *pre_b, *suf_b;
} pair_ws;

/* Add pair (j, l), j <= l, to acc. For the shared inputs o = 0..no-1 (the
 * others give the factor Q = prod rho(s) or rho(t), equal in both
 * channels), with kappa+- = w Q Re(a_j a_l), w Q Re(a_j conj a_l) and
 * w = 1 (j < l: the pair and its mirror) or 1/2 (j = l):
 *   V    += kappa (prod_o A_o - prod_o B_o)
 *         = kappa sum_o C_o prod_{o' < o} A_o' prod_{o' > o} B_o'
 *   V_i  += kappa C_i prod_{o != i} B_o
 *   T_i  += kappa C_i prod_{o != i} A_o
 *   V_ik += kappa C_i C_k prod_{o != i, k} B_o
 * summed over both channels. The telescoped difference never subtracts
 * the two products, so V keeps its accuracy when they nearly agree.
 * Cost: a merge of the two supports, then O(no) (O(no^2) with second). */
static void pair_add(const rf_terms *t, const rfx_marginal *mg, size_t d, int second,
                     size_t j, size_t l, pair_ws *ws, double *acc)
{
    size_t a = t->off[j], ae = t->off[j + 1], b = t->off[l], be = t->off[l + 1], no = 0;
    double Q = 1.0;
    const rf_entry *e = t->e;
    while (a < ae || b < be) {
        if (b == be || (a < ae && e[a].k < e[b].k)) {
            Q *= e[a++].p;
        } else if (a == ae || e[b].k < e[a].k) {
            Q *= e[b++].p;
        } else {
            size_t k = e[a].k;
            ws->ci[no] = k;
            if (mg[k].kind == RFX_MARGINAL_NORMAL)
                pair_normal(&e[a], &e[b], &ws->pc[no]);
            else
                pair_uniform(&e[a], &e[b], &ws->pc[no]);
            no++;
            a++;
            b++;
        }
    }
    if (no == 0 || Q == 0.0) return;
    const double w = j == l ? 0.5 : 1.0;
    const double rr = t->ar[j] * t->ar[l], ii = t->ai[j] * t->ai[l];
    const double kp = w * Q * (rr - ii), km = w * Q * (rr + ii);
    const pair_coord *pc = ws->pc;
    double *pap = ws->pre_ap, *sap = ws->suf_ap, *pam = ws->pre_am, *sam = ws->suf_am;
    double *pb = ws->pre_b, *sb = ws->suf_b;
    pap[0] = pam[0] = pb[0] = 1.0;
    for (size_t o = 0; o < no; o++) {
        pap[o + 1] = pap[o] * pc[o].ap;
        pam[o + 1] = pam[o] * pc[o].am;
        pb[o + 1] = pb[o] * pc[o].b;
    }
    sap[no] = sam[no] = sb[no] = 1.0;
    for (size_t o = no; o-- > 0;) {
        sap[o] = sap[o + 1] * pc[o].ap;
        sam[o] = sam[o + 1] * pc[o].am;
        sb[o] = sb[o + 1] * pc[o].b;
    }
    double tp = 0.0, tm = 0.0;
    double *first = acc + 1, *total = acc + 1 + d;
    for (size_t o = 0; o < no; o++) {
        size_t i = ws->ci[o];
        double xp = kp * pc[o].cp, xm = km * pc[o].cm;
        tp += pc[o].cp * pap[o] * sb[o + 1];
        tm += pc[o].cm * pam[o] * sb[o + 1];
        first[i] += (xp + xm) * (pb[o] * sb[o + 1]);
        total[i] += xp * (pap[o] * sap[o + 1]) + xm * (pam[o] * sam[o + 1]);
    }
    acc[0] += kp * tp + km * tm;
    if (!second) return;
    double *v2 = acc + 1 + 2 * d;
    for (size_t o = 0; o + 1 < no; o++) {
        size_t i = ws->ci[o];
        double xp = kp * pc[o].cp, xm = km * pc[o].cm, mid = pb[o];
        for (size_t o2 = o + 1; o2 < no; o2++) {
            v2[packed_ik(i, ws->ci[o2], d)] +=
                (xp * pc[o2].cp + xm * pc[o2].cm) * (mid * sb[o2 + 1]);
            mid *= pc[o2].b;
        }
    }
}

/* The terms of model m under the marginals (checked): amplitudes with the
 * phase theta_j = b_j + w_j . (mu - x_mean) / x_scale, frequencies
 * v_jk = w_jk / x_scale_k scaled by h_k. Frequencies with zero weight are
 * left out. */
static rfx_status terms_build(const rfx_model *m, const rfx_marginal *mg, rf_terms *t)
{
    const rfx_features *f = m->features;
    const size_t d = f->d, F = f->F;
    const int paired = f->params.form == RFX_FORM_COS_SIN;
    const int is_sin = f->params.activation == RFX_ACTIVATION_SIN;
    size_t n = 0, nnz = 0;
    memset(t, 0, sizeof *t);
    for (size_t j = 0; j < F; j++) {
        double c = m->W[j], c2 = paired ? m->W[F + j] : 0.0;
        if (c == 0.0 && c2 == 0.0) continue;
        n++;
        for (size_t k = 0; k < d; k++) nnz += f->W[j * d + k] != 0.0;
    }
    const size_t n1 = n ? n : 1, z1 = nnz ? nnz : 1;
    rfx_status st = rfx__alloc(n1, sizeof(double), (void **)&t->ar, "exact sobol: terms");
    if (!st) st = rfx__alloc(n1, sizeof(double), (void **)&t->ai, "exact sobol: terms");
    if (!st) st = rfx__alloc(n + 1, sizeof(size_t), (void **)&t->off, "exact sobol: terms");
    if (!st) st = rfx__alloc(z1, sizeof(rf_entry), (void **)&t->e, "exact sobol: terms");
    size_t q = 0, e = 0;
    if (!st) t->off[0] = 0;
    for (size_t j = 0; !st && j < F; j++) {
        double c = m->W[j], c2 = paired ? m->W[F + j] : 0.0;
        if (c == 0.0 && c2 == 0.0) continue;
        double theta = f->b[j];
        for (size_t k = 0; k < d; k++) {
            double w = f->W[j * d + k];
            if (w == 0.0) continue;
            double xm = m->x_mean ? m->x_mean[k] : 0.0, xs = m->x_scale ? m->x_scale[k] : 1.0;
            int normal = mg[k].kind == RFX_MARGINAL_NORMAL;
            double mu = normal ? mg[k].a : 0.5 * mg[k].a + 0.5 * mg[k].b;
            double h = normal ? mg[k].b : 0.5 * mg[k].b - 0.5 * mg[k].a;
            double u = w / xs * h;
            theta += w * ((mu - xm) / xs);
            if (!isfinite(u)) {
                st = rfx__error(RFX_ENUMERIC,
                                "exact sobol: frequency %zu, input %zu: the scaled frequency "
                                "w / x_scale * h is %g", j, k, u);
                break;
            }
            if (u == 0.0) continue; /* underflow: a constant factor */
            rf_entry *en = &t->e[e++];
            en->k = k;
            en->u = u;
            en->sn = sin(u);
            en->cs = cos(u);
            en->sh = sin(0.5 * u);
            en->ch = cos(0.5 * u);
            en->p = normal ? exp(-0.5 * u * u) : sinc(u);
            en->om = normal ? 0.0 : one_minus_sinc(u);
        }
        if (!st && !(isfinite(theta) && isfinite(c) && isfinite(c2)))
            st = rfx__error(RFX_ENUMERIC,
                            "exact sobol: feature %zu: the weight (%g) or the phase (%g) is not "
                            "finite", j, c, theta);
        if (st) break;
        /* c cos(theta + ..) = Re(c e^{i theta} ..), c sin(..) = Re(-i c e^{i theta} ..), the
         * cos-sin pair c cos + c2 sin = Re((c - i c2) e^{i theta} ..) */
        double s = f->scale, ct = cos(theta), stt = sin(theta);
        if (is_sin) {
            t->ar[q] = s * c * stt;
            t->ai[q] = -s * c * ct;
        } else {
            t->ar[q] = s * (c * ct + c2 * stt);
            t->ai[q] = s * (c * stt - c2 * ct);
        }
        q++;
        t->off[q] = e;
    }
    if (st) {
        terms_free(t);
        return st;
    }
    t->n = q;
    return RFX_OK;
}

static rfx_status exact_check(const rfx_model *m, const rfx_marginal *mg, size_t d)
{
    if (!m) return rfx__error(RFX_EINVAL, "rfx_sobol_model_exact: model is NULL");
    RFX__TRY(rfx_marginals_check(mg, d));
    if (d != m->d)
        return rfx__error(RFX_EDIM,
                          "exact sobol: the marginals describe %zu inputs, the model has %zu", d,
                          m->d);
    for (size_t k = 0; k < d; k++)
        if (mg[k].kind == RFX_MARGINAL_LOGNORMAL)
            return rfx__error(RFX_EINVAL,
                              "marginals[%zu]: lognormal inputs are not supported by the exact "
                              "indices (no closed-form characteristic function); use "
                              "rfx_sobol_model",
                              k);
    if (m->target != RFX_TARGET_NONE)
        return rfx__error(RFX_EINVAL,
                          "exact sobol: the model predicts through a %s target transform; the "
                          "indices of its predictions need rfx_sobol_model",
                          rfx_target_transform_name((rfx_target_transform)m->target));
    const rfx_features *f = m->features;
    if (!f)
        return rfx__error(RFX_EINVAL,
                          "exact sobol: the model has no feature map (method %s); exact indices "
                          "are for random-feature models (rfx_pce_sobol has those of a "
                          "polynomial chaos expansion)",
                          rfx_method_name(m->method));
    if (m->ny != 1)
        return rfx__error(RFX_EINVAL,
                          "exact sobol: the model has %zu targets; exact indices need one "
                          "(use rfx_sobol_model for a target of several)",
                          m->ny);
    if (f->params.activation != RFX_ACTIVATION_COS && f->params.activation != RFX_ACTIVATION_SIN)
        return rfx__error(RFX_EINVAL,
                          "features.activation: exact indices need cos or sin features, the "
                          "model has %s; use rfx_sobol_model",
                          rfx_activation_name(f->params.activation));
    if ((unsigned)f->params.form > RFX_FORM_PHASE_FREE)
        return rfx__error(RFX_EINVAL, "features.form: %d is not an rfx_form",
                          (int)f->params.form);
    if (f->params.form == RFX_FORM_COS_SIN && f->params.activation != RFX_ACTIVATION_COS)
        return rfx__error(RFX_EINVAL, "features.form: the cos-sin form with %s features",
                          rfx_activation_name(f->params.activation));
    return RFX_OK;
}

/* Pair rows are split into fixed blocks (a count that depends only on the
 * number of terms and d), each summed in order into its own accumulator by
 * one thread, and the blocks are added in order: the bits do not depend on
 * the thread count or the schedule. */
#define MAX_BLOCKS 256
#define MAX_ACC_DOUBLES ((size_t)1 << 22)

rfx_status rfx_sobol_model_exact(const rfx_model *model, const rfx_marginal *marginals, size_t d,
                                 double *mean, double *variance, double *first, double *total,
                                 double *second)
{
    RFX__TRY(exact_check(model, marginals, d));
    rf_terms t;
    RFX__TRY(terms_build(model, marginals, &t));
    const size_t n = t.n;
    const int want2 = second != NULL;
    size_t nacc = 1 + 2 * d, npk = 0;
    rfx_status st = RFX_OK;
    if (want2) {
        st = rfx__mul(d, d - 1, &npk, "exact sobol: second-order indices");
        npk /= 2;
        if (!st) st = rfx__add(nacc, npk, &nacc, "exact sobol: accumulators");
    }
    size_t nb = n < MAX_BLOCKS ? n : MAX_BLOCKS;
    if (nb > MAX_ACC_DOUBLES / nacc) nb = MAX_ACC_DOUBLES / nacc;
    if (nb == 0) nb = 1;
    const size_t rows_per = n > 0 ? (n + nb - 1) / nb : 1;
    int nt = rfx__threads(0);
    /* about d flops per pair and input: a team is not worth it below ~1e6 */
    if ((double)n * (double)n * (double)(d + 1) < 2e6) nt = 1;
    if ((size_t)nt > nb) nt = (int)nb;
    double *acc = NULL, *wsd = NULL;
    size_t *wsi = NULL;
    pair_coord *wsc = NULL;
    size_t nall = 0, nwsd = 0;
    if (!st) st = rfx__mul(nb, nacc, &nall, "exact sobol: accumulators");
    if (!st) st = rfx__calloc(nall, sizeof *acc, (void **)&acc, "exact sobol: accumulators");
    if (!st) st = rfx__mul3((size_t)nt, 6, d + 1, &nwsd, "exact sobol: workspace");
    if (!st) st = rfx__alloc(nwsd, sizeof *wsd, (void **)&wsd, "exact sobol: workspace");
    if (!st) st = rfx__alloc((size_t)nt * d, sizeof *wsi, (void **)&wsi, "exact sobol: workspace");
    if (!st) st = rfx__alloc((size_t)nt * d, sizeof *wsc, (void **)&wsc, "exact sobol: workspace");
    if (st) goto done;

#pragma omp parallel num_threads(nt) if (nt > 1)
    {
#ifdef _OPENMP
        const size_t tid = (size_t)omp_get_thread_num();
#else
        const size_t tid = 0;
#endif
        pair_ws ws;
        double *base = wsd + tid * 6 * (d + 1);
        ws.ci = wsi + tid * d;
        ws.pc = wsc + tid * d;
        ws.pre_ap = base;
        ws.suf_ap = base + (d + 1);
        ws.pre_am = base + 2 * (d + 1);
        ws.suf_am = base + 3 * (d + 1);
        ws.pre_b = base + 4 * (d + 1);
        ws.suf_b = base + 5 * (d + 1);
#pragma omp for schedule(dynamic, 1)
        for (long long blk = 0; blk < (long long)nb; blk++) {
            double *a = acc + (size_t)blk * nacc;
            size_t j0 = (size_t)blk * rows_per, j1 = j0 + rows_per < n ? j0 + rows_per : n;
            for (size_t j = j0; j < j1; j++)
                for (size_t l = j; l < n; l++) pair_add(&t, marginals, d, want2, j, l, &ws, a);
        }
    }

    for (size_t blk = 1; blk < nb; blk++)
        for (size_t e = 0; e < nacc; e++) acc[e] += acc[blk * nacc + e];
    {
        double m0 = model->intercept[0], V = acc[0];
        for (size_t j = 0; j < n; j++) {
            double P = 1.0;
            for (size_t e = t.off[j]; e < t.off[j + 1]; e++) P *= t.e[e].p;
            m0 += t.ar[j] * P;
        }
        if (!isfinite(m0) || !isfinite(V)) {
            st = rfx__error(RFX_ENUMERIC, "exact sobol: the mean (%g) or variance (%g) of the "
                                          "model is not finite", m0, V);
            goto done;
        }
        /* a constant model (V = 0; also a rounding residue <= 0) has no
         * variance to apportion: its indices are 0 */
        const double inv = V > 0 ? 1.0 / V : 0.0;
        if (mean) *mean = m0;
        if (variance) *variance = V > 0 ? V : 0.0;
        if (first)
            for (size_t i = 0; i < d; i++) first[i] = acc[1 + i] * inv;
        if (total)
            for (size_t i = 0; i < d; i++) total[i] = acc[1 + d + i] * inv;
        if (second) {
            for (size_t i = 0; i < d; i++) {
                second[i * d + i] = acc[1 + i] * inv;
                for (size_t k = i + 1; k < d; k++) {
                    double s = acc[1 + 2 * d + packed_ik(i, k, d)] * inv;
                    second[i * d + k] = s;
                    second[k * d + i] = s;
                }
            }
        }
    }

done:
    free(acc);
    free(wsd);
    free(wsi);
    free(wsc);
    terms_free(&t);
    return st;
}
