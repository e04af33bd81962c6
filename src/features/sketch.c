/* SPDX-License-Identifier: BSD-3-Clause */
/* Feature maps of dot-product and chi2 kernels: Tensor Sketch, random
 * Maclaurin features, the additive chi2 map and the skewed chi2 random
 * Fourier features. The maps, their kernels, sources and costs are in
 * include/rfx/sketch.h.
 *
 * Thread-count independence: each row is transformed alone, by the same
 * operations in the same order whatever the thread that runs it. */
#include "features/sketch_internal.h"

#include <math.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* The Philox streams of the samplers ("tsk", "mcl", "sk2"): substream t
 * (the sketch) or j (the feature). */
#define STREAM_TENSOR 0x74736bull
#define STREAM_MACLAURIN 0x6d636cull
#define STREAM_SKEWED 0x736b32ull

/* Transforms of less work than this (rows x D x (d + 1)) stay on one
 * thread: a parallel region costs more than it saves. */
#define SKETCH_PAR_MIN ((size_t)1 << 16)

/* Maclaurin orders are drawn with P(N = n) = 2^-(n+1), N capped here. */
#define MACLAURIN_MAX_ORDER 62

rfx_sketch_params rfx_sketch_params_default(void)
{
    rfx_sketch_params p;
    memset(&p, 0, sizeof p);
    p.kind = RFX_SKETCH_TENSOR;
    p.n_components = 100;
    p.gamma = 1.0;
    p.coef0 = 0.0;
    p.degree = 2;
    p.dot_kernel = RFX_DOT_KERNEL_POLYNOMIAL;
    p.skewedness = 1.0;
    p.sample_steps = 2;
    p.sample_interval = 0.0;
    p.seed = 0;
    p.n_threads = 0;
    return p;
}

void rfx_sketch_free(rfx_sketch *s)
{
    if (!s) return;
    free(s->hash);
    free(s->sign);
    free(s->twiddle);
    free(s->bitrev);
    free(s->order);
    free(s->first);
    free(s->w);
    free(s->coef);
    free(s->W);
    free(s->b);
    free(s);
}

size_t rfx_sketch_n_features(const rfx_sketch *s) { return s ? s->D : 0; }
size_t rfx_sketch_input_dim(const rfx_sketch *s) { return s ? s->d : 0; }

rfx_sketch_params rfx_sketch_get_params(const rfx_sketch *s)
{
    return s ? s->p : rfx_sketch_params_default();
}

/* ---- parameters ---------------------------------------------------------- */

static rfx_status check_params(rfx_sketch_params *p)
{
    const char *who = "sketch params";
    if ((int)p->kind < 0 || p->kind > RFX_SKETCH_SKEWED_CHI2)
        return rfx__error(RFX_EINVAL, "%s: kind %d is not a rfx_sketch_kind", who, (int)p->kind);
    if (p->n_threads < 0)
        return rfx__error(RFX_EINVAL, "%s: n_threads must be >= 0, got %d", who, p->n_threads);
    int dot = p->kind == RFX_SKETCH_TENSOR || p->kind == RFX_SKETCH_MACLAURIN;
    int poly = p->kind == RFX_SKETCH_TENSOR || p->dot_kernel == RFX_DOT_KERNEL_POLYNOMIAL;
    if (p->kind != RFX_SKETCH_ADDITIVE_CHI2 && p->n_components == 0)
        return rfx__error(RFX_EINVAL, "%s: n_components must be >= 1, got 0", who);
    if (p->kind == RFX_SKETCH_MACLAURIN && ((int)p->dot_kernel < 0 ||
                                            p->dot_kernel > RFX_DOT_KERNEL_EXPONENTIAL))
        return rfx__error(RFX_EINVAL, "%s: dot_kernel %d is not a rfx_dot_kernel", who,
                          (int)p->dot_kernel);
    if (dot && !(p->gamma > 0 && isfinite(p->gamma)))
        return rfx__error(RFX_EINVAL, "%s: gamma must be finite and > 0, got %g", who, p->gamma);
    if (dot && poly) {
        if (!(p->coef0 >= 0 && isfinite(p->coef0)))
            return rfx__error(RFX_EINVAL, "%s: coef0 must be finite and >= 0, got %g", who,
                              p->coef0);
        if (p->degree < 1)
            return rfx__error(RFX_EINVAL, "%s: degree must be >= 1, got %d", who, p->degree);
    }
    if (p->kind == RFX_SKETCH_SKEWED_CHI2 && !(p->skewedness > 0 && isfinite(p->skewedness)))
        return rfx__error(RFX_EINVAL, "%s: skewedness must be finite and > 0, got %g", who,
                          p->skewedness);
    if (p->kind == RFX_SKETCH_ADDITIVE_CHI2) {
        if (p->sample_steps < 1)
            return rfx__error(RFX_EINVAL, "%s: sample_steps must be >= 1, got %d", who,
                              p->sample_steps);
        if (!(p->sample_interval >= 0 && isfinite(p->sample_interval)))
            return rfx__error(RFX_EINVAL, "%s: sample_interval must be finite and > 0 (or 0 "
                              "for the default), got %g", who, p->sample_interval);
        if (p->sample_interval == 0) {
            static const double dflt[3] = {0.8, 0.5, 0.4};
            if (p->sample_steps > 3)
                return rfx__error(RFX_EINVAL, "%s: sample_interval has no default for "
                                  "sample_steps = %d (> 3): give one", who, p->sample_steps);
            p->sample_interval = dflt[p->sample_steps - 1];
        }
    }
    return RFX_OK;
}

/* ---- sampling ------------------------------------------------------------ */

/* Tensor Sketch: the hashes and signs of sketch t from (seed, t); and, for
 * a power-of-two D >= RFX__SKETCH_FFT_MIN, the FFT tables. */
static rfx_status sample_tensor(rfx_sketch *s)
{
    size_t deg = (size_t)s->p.degree, D = s->D, n;
    s->dp = s->d + (s->p.coef0 != 0);
    RFX__TRY(rfx__mul(deg, s->dp, &n, "tensor sketch: hashes"));
    RFX__TRY(rfx__alloc(n, sizeof(size_t), (void **)&s->hash, "tensor sketch: hashes"));
    RFX__TRY(rfx__alloc(n, sizeof(double), (void **)&s->sign, "tensor sketch: signs"));
    for (size_t t = 0; t < deg; t++) {
        rfx__rng r;
        rfx__rng_init(&r, s->p.seed, STREAM_TENSOR, t);
        for (size_t j = 0; j < s->dp; j++) {
            uint64_t u = rfx__rng_u64(&r);
            s->hash[t * s->dp + j] = (size_t)((u >> 1) % D);
            s->sign[t * s->dp + j] = (u & 1) ? 1.0 : -1.0;
        }
    }
    s->use_fft = D >= RFX__SKETCH_FFT_MIN && (D & (D - 1)) == 0;
    if (!s->use_fft) return RFX_OK;
    RFX__TRY(rfx__alloc(D, sizeof(double), (void **)&s->twiddle, "tensor sketch: twiddles"));
    RFX__TRY(rfx__alloc(D, sizeof(size_t), (void **)&s->bitrev, "tensor sketch: permutation"));
    for (size_t k = 0; k < D / 2; k++) {
        double a = -2.0 * M_PI * (double)k / (double)D;
        s->twiddle[2 * k] = cos(a);
        s->twiddle[2 * k + 1] = sin(a);
    }
    unsigned bits = 0;
    while (((size_t)1 << bits) < D) bits++;
    for (size_t k = 0; k < D; k++) {
        size_t r = 0;
        for (unsigned b = 0; b < bits; b++) r |= ((k >> b) & 1) << (bits - 1 - b);
        s->bitrev[k] = r;
    }
    return RFX_OK;
}

/* a_n of the Maclaurin series of the dot-product kernel. */
static double maclaurin_coef(const rfx_sketch_params *p, int n)
{
    double a = 1.0;
    if (p->dot_kernel == RFX_DOT_KERNEL_EXPONENTIAL) {
        for (int i = 1; i <= n; i++) a *= p->gamma / i;
        return a;
    }
    if (n > p->degree) return 0.0;
    for (int i = 1; i <= n; i++) a *= p->gamma * (double)(p->degree - n + i) / i;
    return a * pow(p->coef0, (double)(p->degree - n));
}

/* Random Maclaurin: feature j's order and Rademacher vectors from
 * (seed, j); vectors stored only for the features with a_N > 0. */
static rfx_status sample_maclaurin(rfx_sketch *s)
{
    size_t D = s->D, d = s->d, rows = 0, n;
    RFX__TRY(rfx__alloc(D, sizeof(int), (void **)&s->order, "maclaurin: orders"));
    RFX__TRY(rfx__alloc(D, sizeof(size_t), (void **)&s->first, "maclaurin: offsets"));
    RFX__TRY(rfx__alloc(D, sizeof(double), (void **)&s->coef, "maclaurin: scales"));
    for (size_t j = 0; j < D; j++) {
        rfx__rng r;
        rfx__rng_init(&r, s->p.seed, STREAM_MACLAURIN, j);
        uint64_t u = rfx__rng_u64(&r) | ((uint64_t)1 << MACLAURIN_MAX_ORDER);
        int N = 0;
        while (!((u >> N) & 1)) N++;
        double a = maclaurin_coef(&s->p, N);
        s->order[j] = a > 0 ? N : 0;
        s->coef[j] = a > 0 ? sqrt(a * ldexp(1.0, N + 1) / (double)D) : 0.0;
        s->first[j] = rows;
        rows += (size_t)s->order[j];
    }
    RFX__TRY(rfx__mul(rows ? rows : 1, d, &n, "maclaurin: vectors"));
    RFX__TRY(rfx__alloc(n, sizeof(double), (void **)&s->w, "maclaurin: vectors"));
    for (size_t j = 0; j < D; j++) {
        rfx__rng r;
        rfx__rng_init(&r, s->p.seed, STREAM_MACLAURIN, j);
        (void)rfx__rng_u64(&r); /* the order */
        double *w = s->w + s->first[j] * d;
        uint64_t bits = 0;
        for (size_t k = 0; k < (size_t)s->order[j] * d; k++) {
            if (k % 64 == 0) bits = rfx__rng_u64(&r);
            w[k] = ((bits >> (k % 64)) & 1) ? 1.0 : -1.0;
        }
    }
    return RFX_OK;
}

/* Skewed chi2: row j of W (d values) and b_j from (seed, j). */
static rfx_status sample_skewed(rfx_sketch *s)
{
    size_t n;
    RFX__TRY(rfx__mul(s->D, s->d, &n, "skewed chi2: weights"));
    RFX__TRY(rfx__alloc(n, sizeof(double), (void **)&s->W, "skewed chi2: weights"));
    RFX__TRY(rfx__alloc(s->D, sizeof(double), (void **)&s->b, "skewed chi2: phases"));
    for (size_t j = 0; j < s->D; j++) {
        rfx__rng r;
        rfx__rng_init(&r, s->p.seed, STREAM_SKEWED, j);
        for (size_t i = 0; i < s->d; i++)
            s->W[j * s->d + i] = log(tan(M_PI / 2.0 * rfx__rng_uniform(&r))) / M_PI;
        s->b[j] = 2.0 * M_PI * rfx__rng_uniform(&r);
    }
    return RFX_OK;
}

rfx_status rfx_sketch_create(const rfx_sketch_params *params, size_t d, rfx_sketch **out)
{
    if (!params || !out) return rfx__error(RFX_EINVAL, "sketch: params or out is NULL");
    rfx_sketch_params p = *params;
    RFX__TRY(check_params(&p));
    if (d == 0) return rfx__error(RFX_EDIM, "sketch: the input dimension d must be >= 1");
    rfx_sketch *s = NULL;
    RFX__TRY(rfx__calloc(1, sizeof *s, (void **)&s, "sketch"));
    s->p = p;
    s->d = d;
    rfx_status st = RFX_OK;
    switch (p.kind) {
    case RFX_SKETCH_TENSOR:
        s->D = p.n_components;
        st = sample_tensor(s);
        break;
    case RFX_SKETCH_MACLAURIN:
        s->D = p.n_components;
        st = sample_maclaurin(s);
        break;
    case RFX_SKETCH_ADDITIVE_CHI2:
        st = rfx__mul(d, 2 * (size_t)p.sample_steps - 1, &s->D, "additive chi2: output width");
        break;
    case RFX_SKETCH_SKEWED_CHI2:
        s->D = p.n_components;
        st = sample_skewed(s);
        break;
    }
    if (st) {
        rfx_sketch_free(s);
        return st;
    }
    *out = s;
    return RFX_OK;
}

/* ---- input checks -------------------------------------------------------- */

/* X (rows x d) finite and in the kernel's domain: x >= 0 (additive chi2),
 * x > -c (skewed chi2). The message names the row and column. */
static rfx_status check_rows(const rfx_sketch *s, rfx_cmat X, const char *what)
{
    RFX__TRY(rfx__check_cmat(X, what));
    if (X.cols != s->d)
        return rfx__error(RFX_EDIM, "%s has %zu columns, the map expects %zu", what, X.cols, s->d);
    size_t r, c;
    if (!rfx__all_finite(X, &r, &c))
        return rfx__error(RFX_EPARSE, "%s: row %zu, column %zu is not finite", what, r, c);
    double lo = s->p.kind == RFX_SKETCH_ADDITIVE_CHI2 ? 0.0
                : s->p.kind == RFX_SKETCH_SKEWED_CHI2 ? -s->p.skewedness : -INFINITY;
    int strict = s->p.kind == RFX_SKETCH_SKEWED_CHI2;
    for (r = 0; r < X.rows; r++)
        for (c = 0; c < X.cols; c++) {
            double x = X.data[r * X.stride + c];
            if (x < lo || (strict && x == lo))
                return rfx__error(RFX_EPARSE, "%s: row %zu, column %zu is %g; the %s kernel "
                                  "needs x %s %g", what, r, c, x, rfx_sketch_kind_name(s->p.kind),
                                  strict ? ">" : ">=", lo);
        }
    return RFX_OK;
}

/* ---- the transforms of one row ------------------------------------------ */

/* In-place radix-2 FFT of D complex values (re, im interleaved; D a power
 * of two): sign -1 forward, +1 inverse (unscaled). 5 D log2 D flops. */
static void fft(const rfx_sketch *s, double *x, double sign)
{
    size_t D = s->D;
    for (size_t k = 0; k < D; k++) {
        size_t r = s->bitrev[k];
        if (r > k) {
            double t0 = x[2 * k], t1 = x[2 * k + 1];
            x[2 * k] = x[2 * r];
            x[2 * k + 1] = x[2 * r + 1];
            x[2 * r] = t0;
            x[2 * r + 1] = t1;
        }
    }
    for (size_t len = 2; len <= D; len <<= 1) {
        size_t half = len / 2, step = D / len;
        for (size_t i = 0; i < D; i += len)
            for (size_t k = 0; k < half; k++) {
                double wr = s->twiddle[2 * k * step], wi = -sign * s->twiddle[2 * k * step + 1];
                double *a = x + 2 * (i + k), *b = x + 2 * (i + k + half);
                double br = b[0] * wr - b[1] * wi, bi = b[0] * wi + b[1] * wr;
                b[0] = a[0] - br;
                b[1] = a[1] - bi;
                a[0] += br;
                a[1] += bi;
            }
    }
}

/* Tensor Sketch of one row x into z (D values); ws: tensor_ws(s) doubles. */
static void tensor_row(const rfx_sketch *s, const double *x, double *z, double *ws)
{
    size_t D = s->D, dp = s->dp, deg = (size_t)s->p.degree;
    double *u = ws, *c = u + dp, *acc = c + 2 * D;
    double g = sqrt(s->p.gamma);
    for (size_t j = 0; j < s->d; j++) u[j] = g * x[j];
    if (dp > s->d) u[s->d] = sqrt(s->p.coef0);
    if (s->use_fft) {
        for (size_t t = 0; t < deg; t++) {
            const size_t *h = s->hash + t * dp;
            const double *sg = s->sign + t * dp;
            memset(c, 0, 2 * D * sizeof(double));
            for (size_t j = 0; j < dp; j++) c[2 * h[j]] += sg[j] * u[j];
            fft(s, c, -1.0);
            if (t == 0) {
                memcpy(acc, c, 2 * D * sizeof(double));
                continue;
            }
            for (size_t k = 0; k < D; k++) {
                double ar = acc[2 * k], ai = acc[2 * k + 1];
                acc[2 * k] = ar * c[2 * k] - ai * c[2 * k + 1];
                acc[2 * k + 1] = ar * c[2 * k + 1] + ai * c[2 * k];
            }
        }
        fft(s, acc, 1.0);
        for (size_t k = 0; k < D; k++) z[k] = acc[2 * k] / (double)D;
        return;
    }
    /* direct: r = C_1(u), then r <- r * C_t(u) one nonzero of C_t at a time */
    double *r = c, *nxt = c + D;
    memset(r, 0, D * sizeof(double));
    for (size_t j = 0; j < dp; j++) r[s->hash[j]] += s->sign[j] * u[j];
    for (size_t t = 1; t < deg; t++) {
        const size_t *h = s->hash + t * dp;
        const double *sg = s->sign + t * dp;
        memset(nxt, 0, D * sizeof(double));
        for (size_t j = 0; j < dp; j++) {
            double v = sg[j] * u[j];
            if (v == 0) continue;
            size_t sh = h[j];
            for (size_t k = 0; k + sh < D; k++) nxt[k + sh] += v * r[k];
            for (size_t k = D - sh; k < D; k++) nxt[k + sh - D] += v * r[k];
        }
        double *tmp = r;
        r = nxt;
        nxt = tmp;
    }
    memcpy(z, r, D * sizeof(double));
}

static size_t tensor_ws(const rfx_sketch *s) { return s->dp + 4 * s->D; }

static void maclaurin_row(const rfx_sketch *s, const double *x, double *z)
{
    for (size_t j = 0; j < s->D; j++) {
        double v = s->coef[j];
        const double *w = s->w + s->first[j] * s->d;
        for (int i = 0; i < s->order[j]; i++, w += s->d) v *= rfx__dot(w, x, s->d);
        z[j] = v;
    }
}

/* scikit-learn's AdditiveChi2Sampler._transform_dense, entry by entry. */
static void additive_row(const rfx_sketch *s, const double *x, double *z)
{
    size_t d = s->d;
    double L = s->p.sample_interval;
    for (size_t i = 0; i < d; i++) {
        double xi = x[i];
        z[i] = xi != 0 ? sqrt(xi * L) : 0.0;
        double lg = L * log(xi), step = 2 * xi * L;
        for (int j = 1; j < s->p.sample_steps; j++) {
            double *zc = z + (size_t)(2 * j - 1) * d, *zs = zc + d;
            if (xi == 0) {
                zc[i] = zs[i] = 0.0;
                continue;
            }
            double f = sqrt(step / cosh(M_PI * j * L));
            zc[i] = f * cos(j * lg);
            zs[i] = f * sin(j * lg);
        }
    }
}

/* ws: d doubles */
static void skewed_row(const rfx_sketch *s, const double *x, double *z, double *ws)
{
    for (size_t i = 0; i < s->d; i++) ws[i] = log(x[i] + s->p.skewedness);
    for (size_t j = 0; j < s->D; j++) z[j] = rfx__dot(s->W + j * s->d, ws, s->d);
    rfx__vcos_bias(z, s->b, sqrt(2.0 / (double)s->D), s->D);
}

static size_t row_ws(const rfx_sketch *s)
{
    switch (s->p.kind) {
    case RFX_SKETCH_TENSOR: return tensor_ws(s);
    case RFX_SKETCH_SKEWED_CHI2: return s->d;
    default: return 1;
    }
}

static void transform_row(const rfx_sketch *s, const double *x, double *z, double *ws)
{
    switch (s->p.kind) {
    case RFX_SKETCH_TENSOR: tensor_row(s, x, z, ws); break;
    case RFX_SKETCH_MACLAURIN: maclaurin_row(s, x, z); break;
    case RFX_SKETCH_ADDITIVE_CHI2: additive_row(s, x, z); break;
    case RFX_SKETCH_SKEWED_CHI2: skewed_row(s, x, z, ws); break;
    }
}

rfx_status rfx_sketch_transform(const rfx_sketch *s, rfx_cmat X, rfx_mat Z)
{
    if (!s) return rfx__error(RFX_EINVAL, "sketch transform: the map is NULL");
    RFX__TRY(check_rows(s, X, "X"));
    RFX__TRY(rfx__check_mat(Z, "Z"));
    if (Z.rows != X.rows || Z.cols != s->D)
        return rfx__error(RFX_EDIM, "Z is %zu x %zu, expected %zu x %zu", Z.rows, Z.cols, X.rows,
                          s->D);
    if (X.rows == 0) return RFX_OK;
    int nt = rfx__threads(s->p.n_threads);
    if ((size_t)nt > X.rows) nt = (int)X.rows;
    size_t per = row_ws(s);
    double *ws = NULL;
    RFX__TRY(rfx__alloc(per * (size_t)nt, sizeof(double), (void **)&ws, "sketch: workspace"));
    size_t work = X.rows * s->D * (s->d + 1); /* a size estimate: may wrap, harmless */
#pragma omp parallel num_threads(nt) if (work >= SKETCH_PAR_MIN)
    {
#ifdef _OPENMP
        double *tw = ws + (size_t)omp_get_thread_num() * per;
#else
        double *tw = ws;
#endif
#pragma omp for schedule(static)
        for (size_t i = 0; i < X.rows; i++)
            transform_row(s, X.data + i * X.stride, Z.data + i * Z.stride, tw);
    }
    free(ws);
    return RFX_OK;
}

/* ---- exact kernels ------------------------------------------------------- */

static double exact(const rfx_sketch *s, const double *x, const double *y)
{
    const rfx_sketch_params *p = &s->p;
    size_t d = s->d;
    double k;
    switch (p->kind) {
    case RFX_SKETCH_ADDITIVE_CHI2:
        k = 0.0;
        for (size_t i = 0; i < d; i++)
            if (x[i] + y[i] > 0) k += 2.0 * x[i] * y[i] / (x[i] + y[i]);
        return k;
    case RFX_SKETCH_SKEWED_CHI2:
        k = 1.0;
        for (size_t i = 0; i < d; i++) {
            double a = x[i] + p->skewedness, b = y[i] + p->skewedness;
            k *= 2.0 * sqrt(a) * sqrt(b) / (a + b);
        }
        return k;
    default: {
        double t = p->gamma * rfx__dot(x, y, d);
        if (p->kind == RFX_SKETCH_MACLAURIN && p->dot_kernel == RFX_DOT_KERNEL_EXPONENTIAL)
            return exp(t);
        return pow(t + p->coef0, (double)p->degree);
    }
    }
}

rfx_status rfx_sketch_exact_kernel(const rfx_sketch *s, rfx_cmat X, rfx_cmat Y, rfx_mat K)
{
    if (!s) return rfx__error(RFX_EINVAL, "sketch exact kernel: the map is NULL");
    RFX__TRY(check_rows(s, X, "X"));
    RFX__TRY(check_rows(s, Y, "Y"));
    RFX__TRY(rfx__check_mat(K, "K"));
    if (K.rows != X.rows || K.cols != Y.rows)
        return rfx__error(RFX_EDIM, "K is %zu x %zu, expected %zu x %zu", K.rows, K.cols, X.rows,
                          Y.rows);
    int nt = rfx__threads(s->p.n_threads);
    size_t work = X.rows * Y.rows * (s->d + 1);
#pragma omp parallel for num_threads(nt) schedule(static) if (work >= SKETCH_PAR_MIN)
    for (size_t a = 0; a < X.rows; a++)
        for (size_t b = 0; b < Y.rows; b++)
            K.data[a * K.stride + b] = exact(s, X.data + a * X.stride, Y.data + b * Y.stride);
    return RFX_OK;
}
