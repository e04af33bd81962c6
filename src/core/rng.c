/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counter-based random numbers: Philox4x64-10 (Salmon, Moraes, Dror & Shaw,
 * "Parallel random numbers: as easy as 1, 2, 3", SC'11) from Random123.
 * A stream is keyed by (seed, stream) and counts (substream, i): the j-th
 * feature's numbers depend only on (seed, j), never on thread or block order.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <Random123/philox.h>

void rfx__rng_init(rfx__rng *r, uint64_t seed, uint64_t stream, uint64_t substream)
{
    r->key[0] = seed;
    r->key[1] = stream;
    r->ctr[0] = substream;
    r->ctr[1] = 0;
    r->ctr[2] = 0;
    r->ctr[3] = 0;
    r->pos = 4;
    r->have_normal = 0;
    r->normal = 0.0;
}

uint64_t rfx__rng_u64(rfx__rng *r)
{
    if (r->pos == 4) {
        philox4x64_ctr_t c = {{r->ctr[0], r->ctr[1], r->ctr[2], r->ctr[3]}};
        philox4x64_key_t k = {{r->key[0], r->key[1]}};
        philox4x64_ctr_t out = philox4x64(c, k);
        for (int i = 0; i < 4; i++) r->buf[i] = out.v[i];
        r->ctr[1]++;
        r->pos = 0;
    }
    return r->buf[r->pos++];
}

double rfx__rng_uniform(rfx__rng *r)
{
    /* the top 53 bits, offset by half a step: in (0, 1), never 0 or 1 */
    return ((double)(rfx__rng_u64(r) >> 11) + 0.5) * 0x1.0p-53;
}

double rfx__rng_normal(rfx__rng *r)
{
    if (r->have_normal) {
        r->have_normal = 0;
        return r->normal;
    }
    double u1 = rfx__rng_uniform(r), u2 = rfx__rng_uniform(r);
    double rad = sqrt(-2.0 * log(u1));
    double t = 6.283185307179586476925 * u2;
    r->normal = rad * sin(t);
    r->have_normal = 1;
    return rad * cos(t);
}

/* Marsaglia & Tsang, "A simple method for generating gamma variables",
 * ACM TOMS 26(3), 2000; shape < 1 by the boost Gamma(a) = Gamma(a+1) U^(1/a). */
double rfx__rng_gamma(rfx__rng *r, double shape)
{
    if (shape < 1.0) {
        double g = rfx__rng_gamma(r, shape + 1.0);
        return g * pow(rfx__rng_uniform(r), 1.0 / shape);
    }
    double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x, v;
        do {
            x = rfx__rng_normal(r);
            v = 1.0 + c * x;
        } while (v <= 0.0);
        v = v * v * v;
        double u = rfx__rng_uniform(r);
        if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
        if (log(u) < 0.5 * x * x + d * (1.0 - v + log(v))) return d * v;
    }
}

void rfx__rng_shuffle(rfx__rng *r, size_t *perm, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t t = (size_t)(rfx__rng_uniform(r) * (double)i);
        if (t >= i) t = i - 1;
        size_t tmp = perm[i - 1];
        perm[i - 1] = perm[t];
        perm[t] = tmp;
    }
}

/* ---- row orders that depend on the rows' contents ----------------------- */

/* The finaliser of SplitMix64 (Steele, Lea & Flood, OOPSLA 2014): a
 * bijection of 64-bit words whose output bits each depend on every input
 * bit. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t word_of(double v)
{
    uint64_t u;
    v += 0.0; /* -0 and +0 are one value */
    memcpy(&u, &v, sizeof u);
    return u;
}

typedef struct row_key {
    uint64_t key;
    size_t row;
} row_key;

static int key_cmp(const void *a, const void *b)
{
    const row_key *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row; /* put in content order below */
}

uint64_t rfx__row_key(uint64_t seed, uint64_t stream, const double *x, size_t d, const double *y,
                      size_t ny, size_t y_stride)
{
    uint64_t h = mix64(seed ^ mix64(stream + 0x9e3779b97f4a7c15ULL));
    for (size_t c = 0; c < d; c++) h = mix64(h ^ word_of(x[c]));
    for (size_t c = 0; c < ny; c++) h = mix64(h ^ word_of(y[c * y_stride]));
    return h; /* the weights only break ties (a common factor changes nothing) */
}

int rfx__row_compare(const double *xa, const double *ya, double wa, const double *xb,
                     const double *yb, double wb, size_t d, size_t ny, size_t y_stride)
{
    for (size_t c = 0; c < d; c++) {
        double a = xa[c] + 0.0, b = xb[c] + 0.0;
        if (a != b) return a < b ? -1 : 1;
    }
    for (size_t c = 0; c < ny; c++) {
        double a = ya[c * y_stride] + 0.0, b = yb[c * y_stride] + 0.0;
        if (a != b) return a < b ? -1 : 1;
    }
    if (wa != wb) return wa < wb ? -1 : 1;
    return 0;
}

/* -1, 0, 1 as row i's values compare with row j's (X, then Y, then w). */
static int row_cmp(rfx_cmat X, rfx_cmat Y, const double *w, size_t i, size_t j)
{
    const double *yi = Y.cols ? Y.data + i * Y.stride : NULL;
    const double *yj = Y.cols ? Y.data + j * Y.stride : NULL;
    return rfx__row_compare(X.data + i * X.stride, yi, w ? w[i] : 1.0, X.data + j * X.stride, yj,
                            w ? w[j] : 1.0, X.cols, Y.cols, 1);
}

rfx_status rfx__rows_order(rfx_cmat X, rfx_cmat Y, const double *w, uint64_t seed,
                           uint64_t stream, size_t *order)
{
    const size_t n = X.rows;
    row_key *keys = NULL;
    RFX__TRY(rfx__alloc(n, sizeof *keys, (void **)&keys, "row order"));
    for (size_t i = 0; i < n; i++) {
        keys[i].key = rfx__row_key(seed, stream, X.data + i * X.stride, X.cols,
                                   Y.cols ? Y.data + i * Y.stride : NULL, Y.cols, 1);
        keys[i].row = i;
    }
    qsort(keys, n, sizeof *keys, key_cmp);
    for (size_t i = 0; i < n; i++) order[i] = keys[i].row;
    /* runs of one key (identical rows, or a collision): in content order, by
     * insertion (identical rows compare equal at once) */
    for (size_t a = 0; a < n;) {
        size_t b = a + 1;
        while (b < n && keys[b].key == keys[a].key) b++;
        for (size_t i = a + 1; i < b; i++) {
            size_t t = order[i], j = i;
            while (j > a && row_cmp(X, Y, w, order[j - 1], t) > 0) {
                order[j] = order[j - 1];
                j--;
            }
            order[j] = t;
        }
        a = b;
    }
    free(keys);
    return RFX_OK;
}

/* ---- the public stream (a user's spectral sampler, rfx/features.h) ------ */

uint64_t rfx_rng_u64(rfx_rng *rng) { return rfx__rng_u64(&rng->state); }
double rfx_rng_uniform(rfx_rng *rng) { return rfx__rng_uniform(&rng->state); }
double rfx_rng_normal(rfx_rng *rng) { return rfx__rng_normal(&rng->state); }

double rfx_rng_gamma(rfx_rng *rng, double shape)
{
    if (!(shape > 0 && isfinite(shape))) return NAN;
    return rfx__rng_gamma(&rng->state, shape);
}

void rfx_rng_fill_uniform(rfx_rng *rng, double *out, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = rfx__rng_uniform(&rng->state);
}

void rfx_rng_fill_normal(rfx_rng *rng, double *out, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = rfx__rng_normal(&rng->state);
}

/* ---- spectral densities of the built-in kernels, and their sums and
 * products (rfx/features.h) ---------------------------------------------- */

rfx_status rfx_spectral_draw(rfx_kernel kernel, double nu, rfx_rng *rng, size_t d, double *w)
{
    if (!rng || (!w && d > 0)) return rfx__error(RFX_EINVAL, "spectral draw: NULL argument");
    switch (kernel) {
    case RFX_KERNEL_GAUSSIAN:
        for (size_t i = 0; i < d; i++) w[i] = rfx__rng_normal(&rng->state);
        return RFX_OK;
    case RFX_KERNEL_LAPLACIAN: /* Cauchy(0, 1) per coordinate, by inversion */
        for (size_t i = 0; i < d; i++)
            w[i] = tan(3.14159265358979323846 * (rfx__rng_uniform(&rng->state) - 0.5));
        return RFX_OK;
    case RFX_KERNEL_CAUCHY: /* Laplace(0, 1) per coordinate, by inversion */
        for (size_t i = 0; i < d; i++) {
            double v = rfx__rng_uniform(&rng->state) - 0.5;
            w[i] = v < 0 ? log(1.0 + 2.0 * v) : -log(1.0 - 2.0 * v);
        }
        return RFX_OK;
    case RFX_KERNEL_MATERN: { /* multivariate t, 2 nu degrees of freedom */
        if (!(nu > 0 && isfinite(nu)))
            return rfx__error(RFX_EINVAL, "spectral draw: the Matern nu must be > 0, got %g", nu);
        double chi2 = 2.0 * rfx__rng_gamma(&rng->state, nu), t = sqrt(2.0 * nu / chi2);
        for (size_t i = 0; i < d; i++) w[i] = t * rfx__rng_normal(&rng->state);
        return RFX_OK;
    }
    default:
        return rfx__error(RFX_EINVAL, "spectral draw: kernel %d has no built-in spectral density "
                                      "(gaussian, laplacian, cauchy or matern)", (int)kernel);
    }
}

rfx_status rfx_spectral_combination_check(const rfx_spectral_combination *c)
{
    if (!c) return rfx__error(RFX_EINVAL, "spectral combination: NULL");
    if (c->n_terms == 0 || !c->terms)
        return rfx__error(RFX_EINVAL, "spectral combination: no terms");
    double total = 0;
    for (size_t i = 0; i < c->n_terms; i++) {
        const rfx_spectral_term *t = &c->terms[i];
        if (t->kernel != RFX_KERNEL_GAUSSIAN && t->kernel != RFX_KERNEL_LAPLACIAN &&
            t->kernel != RFX_KERNEL_CAUCHY && t->kernel != RFX_KERNEL_MATERN)
            return rfx__error(RFX_EINVAL, "spectral combination: terms[%zu].kernel: gaussian, "
                                          "laplacian, cauchy or matern, got %d", i, (int)t->kernel);
        if (t->kernel == RFX_KERNEL_MATERN && !(t->nu > 0 && isfinite(t->nu)))
            return rfx__error(RFX_EINVAL, "spectral combination: terms[%zu].nu: must be > 0, got %g",
                              i, t->nu);
        if (!(t->length_scale > 0 && isfinite(t->length_scale)))
            return rfx__error(RFX_EINVAL, "spectral combination: terms[%zu].length_scale: must be "
                                          "> 0 and finite, got %g", i, t->length_scale);
        if (!c->product && !(t->weight >= 0 && isfinite(t->weight)))
            return rfx__error(RFX_EINVAL, "spectral combination: terms[%zu].weight: must be >= 0 "
                                          "and finite, got %g", i, t->weight);
        if (!c->product) total += t->weight;
    }
    if (!c->product && !(total > 0))
        return rfx__error(RFX_EINVAL, "spectral combination: every weight is 0");
    return RFX_OK;
}

rfx_status rfx_spectral_combined(void *user, rfx_rng *rng, size_t j, size_t d, double *w)
{
    (void)j;
    const rfx_spectral_combination *c = user;
    RFX__TRY(rfx_spectral_combination_check(c));
    if (!c->product) { /* the mixture: term i with probability weight_i / sum */
        double total = 0;
        for (size_t i = 0; i < c->n_terms; i++) total += c->terms[i].weight;
        double u = rfx__rng_uniform(&rng->state) * total, acc = 0;
        size_t k = c->n_terms - 1;
        for (size_t i = 0; i < c->n_terms; i++) {
            acc += c->terms[i].weight;
            if (u < acc && c->terms[i].weight > 0) {
                k = i;
                break;
            }
        }
        while (c->terms[k].weight == 0) k--; /* the last term of positive weight */
        const rfx_spectral_term *t = &c->terms[k];
        RFX__TRY(rfx_spectral_draw(t->kernel, t->nu, rng, d, w));
        for (size_t i = 0; i < d; i++) w[i] /= t->length_scale;
        return RFX_OK;
    }
    /* the product: the sum of independent draws (the convolution of the
     * densities is the transform of the product of the kernels) */
    double *tmp = malloc((d ? d : 1) * sizeof *tmp);
    if (!tmp) return rfx__error(RFX_ENOMEM, "spectral combination: cannot allocate %zu values", d);
    for (size_t i = 0; i < d; i++) w[i] = 0;
    for (size_t k = 0; k < c->n_terms; k++) {
        const rfx_spectral_term *t = &c->terms[k];
        rfx_status st = rfx_spectral_draw(t->kernel, t->nu, rng, d, tmp);
        if (st) {
            free(tmp);
            return st;
        }
        for (size_t i = 0; i < d; i++) w[i] += tmp[i] / t->length_scale;
    }
    free(tmp);
    return RFX_OK;
}
