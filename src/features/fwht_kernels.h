/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fast structured projection, written once and compiled per instruction
 * set (structured.c includes it twice: generic, and under a target pragma
 * for AVX2). The includer defines FWHT_SFX (the function suffix) and the
 * type vd, a vector of RFX__FAST_ROWS = 4 doubles.
 *
 * Layout: the 4 rows of a group are interleaved, element i of the block's
 * vector of row r at v[i][r], so every butterfly of every stage is one
 * vector add and one vector subtract over the 4 rows, with no shuffles even
 * for the first stages, and the same operations on every lane: a row's
 * result does not depend on the group it is in.
 *
 * The Walsh-Hadamard transform of size n (a power of two) is the product of
 * log2 n butterfly stages (a, b) -> (a + b, a - b) at distances 1, 2, 4, ..,
 * run in that order, three at a time (radix 8: eight loads and stores per
 * 24 operations instead of 24 and 24; grouping does not change a single
 * operation, so the bits do not depend on it), and the first pass reads its
 * input through a diagonal (and for Fastfood a permutation), so no pass
 * exists only to scale. The result is in the natural (Sylvester) order:
 * H[i][j] = (-1)^popcount(i & j), unnormalised. At d' = 1024 a row costs
 * about 7 us for SORF's 12 transforms of D = 4096 (one core, AVX2), a third
 * of it the stores of Z.
 */

#define FWHT_CAT_(a, b) a##b
#define FWHT_CAT(a, b) FWHT_CAT_(a, b)
#define FWHT_FN(name) FWHT_CAT(name, FWHT_SFX)

/* 4 x 4 transpose: rows a, b, c, e (4 doubles each) into columns. */
static inline void FWHT_FN(transpose4_)(vd *a, vd *b, vd *c, vd *e)
{
#if defined(__clang__) /* the fuzz build (make fuzz): clang's spelling, constant indices */
    vd t0 = __builtin_shufflevector(*a, *b, 0, 4, 2, 6), t1 = __builtin_shufflevector(*a, *b, 1, 5, 3, 7);
    vd t2 = __builtin_shufflevector(*c, *e, 0, 4, 2, 6), t3 = __builtin_shufflevector(*c, *e, 1, 5, 3, 7);
    *a = __builtin_shufflevector(t0, t2, 0, 1, 4, 5);
    *b = __builtin_shufflevector(t1, t3, 0, 1, 4, 5);
    *c = __builtin_shufflevector(t0, t2, 2, 3, 6, 7);
    *e = __builtin_shufflevector(t1, t3, 2, 3, 6, 7);
#else
    const vdi lo = {0, 4, 2, 6}, hi = {1, 5, 3, 7}, first = {0, 1, 4, 5}, last = {2, 3, 6, 7};
    vd t0 = __builtin_shuffle(*a, *b, lo), t1 = __builtin_shuffle(*a, *b, hi);
    vd t2 = __builtin_shuffle(*c, *e, lo), t3 = __builtin_shuffle(*c, *e, hi);
    *a = __builtin_shuffle(t0, t2, first);
    *b = __builtin_shuffle(t1, t3, first);
    *c = __builtin_shuffle(t0, t2, last);
    *e = __builtin_shuffle(t1, t3, last);
#endif
}

/* Three butterfly stages (distances h, 2h, 4h) on the 8 values x[0..7]
 * taken at distance h: in registers, the same operations in the same order
 * as three radix-2 passes. */
#define FWHT_RADIX8(x)                                                        \
    do {                                                                     \
        vd t0 = x[0] + x[1], t1 = x[0] - x[1], t2 = x[2] + x[3], t3 = x[2] - x[3]; \
        vd t4 = x[4] + x[5], t5 = x[4] - x[5], t6 = x[6] + x[7], t7 = x[6] - x[7]; \
        vd u0 = t0 + t2, u2 = t0 - t2, u1 = t1 + t3, u3 = t1 - t3;           \
        vd u4 = t4 + t6, u6 = t4 - t6, u5 = t5 + t7, u7 = t5 - t7;           \
        x[0] = u0 + u4;                                                      \
        x[4] = u0 - u4;                                                      \
        x[1] = u1 + u5;                                                      \
        x[5] = u1 - u5;                                                      \
        x[2] = u2 + u6;                                                      \
        x[6] = u2 - u6;                                                      \
        x[3] = u3 + u7;                                                      \
        x[7] = u3 - u7;                                                      \
    } while (0)

/* The stages at distances h, 2h, .. n/2 in place over n vectors: radix-8
 * passes (eight loads and stores per 24 operations), then one radix-4 or
 * radix-2 pass for the stages left. */
static void FWHT_FN(fwht_rest_)(vd *v, size_t n, size_t h)
{
    for (; 8 * h <= n; h *= 8) {
        for (size_t i = 0; i < n; i += 8 * h) {
            vd *p = v + i;
            for (size_t j = 0; j < h; j++) {
                vd x[8];
                for (int k = 0; k < 8; k++) x[k] = p[j + (size_t)k * h];
                FWHT_RADIX8(x);
                for (int k = 0; k < 8; k++) p[j + (size_t)k * h] = x[k];
            }
        }
    }
    if (4 * h <= n) {
        vd *a = v, *b = a + h, *c = b + h, *e = c + h;
        for (size_t j = 0; j < h; j++) {
            vd s0 = a[j] + b[j], s1 = a[j] - b[j];
            vd s2 = c[j] + e[j], s3 = c[j] - e[j];
            a[j] = s0 + s2;
            b[j] = s1 + s3;
            c[j] = s0 - s2;
            e[j] = s1 - s3;
        }
    } else if (2 * h <= n) {
        vd *a = v, *b = v + h;
        for (size_t j = 0; j < h; j++) {
            vd s = a[j] + b[j], t = a[j] - b[j];
            a[j] = s;
            b[j] = t;
        }
    }
}

/* dst = H (diag(g) src) or, with perm, dst = H (diag(g) P src), (P src)_i =
 * src_perm[i], for n = 2^m vectors: the first three stages (or all, for
 * n < 8) read their inputs scaled, the rest follow in place. dst may equal
 * src without perm: each group reads its elements before writing them. */
static void FWHT_FN(fwht_load_)(vd *dst, const vd *src, const double *g, const uint32_t *perm,
                                size_t n, unsigned m)
{
    if (m < 3) {
        for (size_t i = 0; i < n; i++) dst[i] = src[perm ? perm[i] : i] * g[i];
        FWHT_FN(fwht_rest_)(dst, n, 1);
        return;
    }
    if (perm) {
        for (size_t j = 0; j < n; j += 8) {
            vd x[8];
            for (int k = 0; k < 8; k++) x[k] = src[perm[j + k]] * g[j + k];
            FWHT_RADIX8(x);
            for (int k = 0; k < 8; k++) dst[j + k] = x[k];
        }
    } else {
        for (size_t j = 0; j < n; j += 8) {
            vd x[8];
            for (int k = 0; k < 8; k++) x[k] = src[j + k] * g[j + k];
            FWHT_RADIX8(x);
            for (int k = 0; k < 8; k++) dst[j + k] = x[k];
        }
    }
    FWHT_FN(fwht_rest_)(dst, n, 8);
}

/* Z[r][0 .. F-1] = W x_r for the nr <= 4 rows x_r of X (row stride ldx),
 * through the blocks' fast transforms (SORF: S H D1 H D2 H D3', S = I in
 * version 1; Fastfood: S H G P H B'; the primes hold 1 / l and for SORF
 * 1 / d'). ws: 3 d' vd.
 * Cost per row: (3 or 2) d' log2 d' additions per block of d' frequencies. */
static void FWHT_FN(project_group_)(const rfx_features *f, const double *X, size_t ldx,
                                    size_t nr, double *Z, size_t ldz, double *ws)
{
    const size_t dp = f->dp, d = f->d, F = f->F;
    const unsigned lg = f->dp_log2;
    const int sorf = f->params.structure == RFX_STRUCTURE_SORF;
    vd *xt = (vd *)ws, *b1 = xt + dp, *b2 = b1 + dp;
    /* gather the rows, interleaved; zero padding (lanes nr.. and i >= d) */
    if (nr == RFX__FAST_ROWS) {
        const double *x0 = X, *x1 = X + ldx, *x2 = X + 2 * ldx, *x3 = X + 3 * ldx;
        size_t i = 0;
        for (; i + 4 <= d; i += 4) { /* 4 x 4 blocks: vector loads, transposed */
            vd a, b, c, e;
            memcpy(&a, x0 + i, sizeof a);
            memcpy(&b, x1 + i, sizeof b);
            memcpy(&c, x2 + i, sizeof c);
            memcpy(&e, x3 + i, sizeof e);
            FWHT_FN(transpose4_)(&a, &b, &c, &e);
            xt[i] = a;
            xt[i + 1] = b;
            xt[i + 2] = c;
            xt[i + 3] = e;
        }
        for (; i < d; i++) {
            vd v = {x0[i], x1[i], x2[i], x3[i]};
            xt[i] = v;
        }
    } else {
        for (size_t i = 0; i < d; i++) {
            vd v = {0, 0, 0, 0};
            for (size_t r = 0; r < nr; r++) v[r] = X[r * ldx + i];
            xt[i] = v;
        }
    }
    for (size_t i = d; i < dp; i++) {
        vd z = {0, 0, 0, 0};
        xt[i] = z;
    }
    for (size_t k = 0; k < f->n_blocks; k++) {
        const double *g = f->fdiag + k * RFX__FAST_SLOTS * dp;
        const size_t c0 = k * dp, nc = F - c0 < dp ? F - c0 : dp;
        const vd *out;
        const double *s = NULL;
        if (sorf) {
            FWHT_FN(fwht_load_)(b1, xt, g, NULL, dp, lg);
            FWHT_FN(fwht_load_)(b1, b1, g + dp, NULL, dp, lg);
            FWHT_FN(fwht_load_)(b1, b1, g + 2 * dp, NULL, dp, lg);
            out = b1;
            if (f->sorf_radial) s = g + 3 * dp;
        } else {
            FWHT_FN(fwht_load_)(b1, xt, g, NULL, dp, lg);
            FWHT_FN(fwht_load_)(b2, b1, g + dp, f->fperm + k * dp, dp, lg);
            out = b2;
            s = g + 2 * dp;
        }
        /* scatter back to the rows (times S) */
        if (nr == RFX__FAST_ROWS) {
            double *z0 = Z + c0, *z1 = z0 + ldz, *z2 = z1 + ldz, *z3 = z2 + ldz;
            size_t i = 0;
            for (; i + 4 <= nc; i += 4) { /* transposed back in 4 x 4 blocks */
                vd a = out[i], b = out[i + 1], c = out[i + 2], e = out[i + 3];
                if (s) {
                    a *= s[i];
                    b *= s[i + 1];
                    c *= s[i + 2];
                    e *= s[i + 3];
                }
                FWHT_FN(transpose4_)(&a, &b, &c, &e);
                memcpy(z0 + i, &a, sizeof a);
                memcpy(z1 + i, &b, sizeof b);
                memcpy(z2 + i, &c, sizeof c);
                memcpy(z3 + i, &e, sizeof e);
            }
            for (; i < nc; i++) {
                vd v = s ? out[i] * s[i] : out[i];
                z0[i] = v[0];
                z1[i] = v[1];
                z2[i] = v[2];
                z3[i] = v[3];
            }
        } else {
            for (size_t i = 0; i < nc; i++) {
                vd v = s ? out[i] * s[i] : out[i];
                for (size_t r = 0; r < nr; r++) Z[r * ldz + c0 + i] = v[r];
            }
        }
    }
}

#undef FWHT_RADIX8
#undef FWHT_FN
#undef FWHT_CAT
#undef FWHT_CAT_
