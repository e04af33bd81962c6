/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Vector cos / sincos for the feature maps, written once with GCC vector
 * extensions and compiled per instruction set (vmath_generic.c: 2 doubles,
 * the baseline of the target, SSE2 on x86-64, no FMA; vmath_avx2.c: 4
 * doubles; vmath_avx512.c: 8 doubles). Included, not compiled on its own;
 * the includer defines VB (vector bytes) and SUFFIX (the function suffix).
 *
 * Method (Cody & Waite, "Software Manual for the Elementary Functions",
 * 1980): k = round(x 2/pi) by adding and subtracting 1.5 2^52, whose low
 * mantissa bits are then k itself, so the quadrant k mod 4 costs one AND;
 * r = x - k pi/2 with pi/2 split in three parts and fused multiply-adds
 * (exact enough for |x| < 2^20 pi/2); then the minimax polynomials of
 * fdlibm's __kernel_sin / __kernel_cos on [-pi/4, pi/4] and a quadrant
 * select. About 30 vector operations for both sin and cos, against ~10x
 * that for a general libm. Random-feature arguments w.x + b are far below
 * the limit; a block holding any |x| >= LIMIT goes to SLEEF instead.
 * Error: a few ulp (tested against libm in tests/test_vmath.c).
 */
#if VB >= 32
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sleef.h>

#define NL (VB / 8)  /* doubles per vector */
#define NLF (VB / 4) /* floats per vector  */

typedef double vd __attribute__((vector_size(VB), aligned(8)));
typedef int64_t vi __attribute__((vector_size(VB), aligned(8)));
typedef float vf __attribute__((vector_size(VB), aligned(4)));
typedef int32_t vif __attribute__((vector_size(VB), aligned(4)));

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

#define LIMIT 1.0e5
#define LIMIT_F 1.0e4f

/* cos(x[i]) and sin(x[i]) of n vectors in lockstep (see cos_vn below). */
#define COS_MAXN 32
__attribute__((always_inline)) static inline void sincos_vn(const vd *x, vd *c_out, vd *s_out,
                                                            int n)
{
    const vd two_over_pi = (vd){0} + 0.63661977236758134308;
    const vd shifter = (vd){0} + 0x1.8p52;
    vd r[COS_MAXN], z[COS_MAXN], ps[COS_MAXN], pc[COS_MAXN];
    vi q[COS_MAXN];
#pragma GCC unroll 32
    for (int i = 0; i < n; i++) {
        vd t = x[i] * two_over_pi + shifter;
        vd k = t - shifter;
        q[i] = (vi)t; /* the low bits of the mantissa hold k (two's complement) */
        /* r = x - k pi/2 in three parts (fdlibm's pio2_1, pio2_1t split) */
        r[i] = x[i] - k * 1.57079632673412561417e+00; /* pio2_1: 33 bits, k pio2_1 exact */
        r[i] = r[i] - k * 6.07710050630396597660e-11; /* pio2_2: the next 33 bits      */
        r[i] = r[i] - k * 2.02226624879595063154e-21; /* pio2_2t: the rest              */
        z[i] = r[i] * r[i];
        ps[i] = (vd){0} + 1.58969099521155010221e-10;
        pc[i] = (vd){0} - 1.13596475577881948265e-11;
    }
    /* fdlibm's __kernel_sin and __kernel_cos polynomials, by Horner */
    static const double sc[5] = {-2.50507602534068634195e-08, 2.75573137070700676789e-06,
                                 -1.98412698298579493134e-04, 8.33333333332248946124e-03,
                                 -1.66666666666666324348e-01};
    static const double cc[5] = {2.08757232129817482790e-09, -2.75573143513906633035e-07,
                                 2.48015872894767294178e-05, -1.38888888888741095749e-03,
                                 4.16666666666666019037e-02};
#pragma GCC unroll 5
    for (int m = 0; m < 5; m++)
#pragma GCC unroll 32
        for (int i = 0; i < n; i++) {
            ps[i] = sc[m] + z[i] * ps[i];
            pc[i] = cc[m] + z[i] * pc[i];
        }
#pragma GCC unroll 32
    for (int i = 0; i < n; i++) {
        vd s = r[i] + r[i] * z[i] * ps[i];
        vd c = 1.0 - 0.5 * z[i] + z[i] * z[i] * pc[i];
        vi odd = -(q[i] & 1); /* all ones where k is odd */
        vi ci = (vi)c, si = (vi)s;
        vi cos_bits = (si & odd) | (ci & ~odd);
        vi sin_bits = (ci & odd) | (si & ~odd);
        cos_bits ^= ((q[i] + 1) & 2) << 62; /* negative for k mod 4 in {1, 2} */
        sin_bits ^= (q[i] & 2) << 62;       /* negative for k mod 4 in {2, 3} */
        c_out[i] = (vd)cos_bits;
        s_out[i] = (vd)sin_bits;
    }
}

/* cos(x) and sin(x) of one vector. */
static inline void sincos_v(vd x, vd *c_out, vd *s_out)
{
    sincos_vn(&x, c_out, s_out, 1);
}

/* cos of n vectors in lockstep (n a compile-time constant after
 * inlining): each step runs over all n before the next, so the n
 * dependency chains of the polynomial overlap instead of queueing. The
 * same operations in the same order as for one vector: the same bits. */
__attribute__((always_inline)) static inline void cos_vn(vd *x, int n)
{
    const vd one_over_pi = (vd){0} + 0.31830988618379067154;
    const vd shifter = (vd){0} + 0x1.8p52;
    vd r[COS_MAXN], z[COS_MAXN], c[COS_MAXN];
    vi q[COS_MAXN];
#pragma GCC unroll 32
    for (int i = 0; i < n; i++) {
        vd t = x[i] * one_over_pi + shifter;
        vd k = t - shifter;
        q[i] = (vi)t;
        r[i] = x[i] - k * 3.14159265346825122834e+00;
        r[i] = r[i] - k * 1.21542010126079319532e-10;
        r[i] = r[i] - k * 4.04453249759190126308e-21;
        z[i] = r[i] * r[i];
        c[i] = (vd){0} - 1.0 / 1124000727777607680000.0;
    }
    /* (-1)^n / (2n)!, n = 11 .. 1, by Horner */
    static const double coef[11] = {1.0 / 2432902008176640000.0, -1.0 / 6402373705728000.0,
                                    1.0 / 20922789888000.0,      -1.0 / 87178291200.0,
                                    1.0 / 479001600.0,           -1.0 / 3628800.0,
                                    1.0 / 40320.0,               -1.0 / 720.0,
                                    1.0 / 24.0,                  -0.5,
                                    1.0};
#pragma GCC unroll 11
    for (int m = 0; m < 11; m++)
#pragma GCC unroll 32
        for (int i = 0; i < n; i++) c[i] = c[i] * z[i] + coef[m];
#pragma GCC unroll 32
    for (int i = 0; i < n; i++) x[i] = (vd)((vi)c[i] ^ ((q[i] & 1) << 63));
}

/* cos(x) alone: k = round(x / pi), r = x - k pi in [-pi/2, pi/2] (pi in the
 * same three parts, doubled: still exact products), cos x = (-1)^k cos r,
 * and cos r by its Taylor series to z^11 (z = r^2 <= 2.47: the first term
 * left out is below 1e-19). One polynomial and one sign flip instead of two
 * polynomials and a quadrant select: the cos-bias form's kernel. */
static inline vd cos_v(vd x)
{
    cos_vn(&x, 1);
    return x;
}

static inline vd loadu(const double *p)
{
#if VB == 64
    return (vd)_mm512_loadu_pd(p);
#elif VB == 32
    return (vd)_mm256_loadu_pd(p);
#else
    vd v;
    memcpy(&v, p, sizeof v);
    return v;
#endif
}

/* One unaligned vector store (vmovupd): a memcpy of the vector type may go
 * through the stack in two halves. */
static inline void storeu(double *p, vd v)
{
#if VB == 64
    _mm512_storeu_pd(p, (__m512d)v);
#elif VB == 32
    _mm256_storeu_pd(p, (__m256d)v);
#else
    memcpy(p, &v, sizeof v);
#endif
}

/* 1 when some |x[i] (+ b[i])| >= LIMIT. */
static int too_large(const double *x, const double *b, size_t n)
{
    int big = 0;
    for (size_t i = 0; i < n; i++) big |= fabs(x[i] + (b ? b[i] : 0.0)) >= LIMIT;
    return big;
}

void CAT(rfx__vcos_bias_, SUFFIX)(double *x, const double *b, double s, size_t n)
{
    if (too_large(x, b, n)) {
        for (size_t i = 0; i < n; i++) x[i] = s * Sleef_cos_u10(x[i] + (b ? b[i] : 0.0));
        return;
    }
    size_t i = 0;
    for (; i + 4 * NL <= n; i += 4 * NL) { /* 4 vectors in lockstep */
        vd v[4];
        for (int u = 0; u < 4; u++) {
            v[u] = loadu(x + i + (size_t)u * NL);
            if (b) v[u] += loadu(b + i + (size_t)u * NL);
        }
        cos_vn(v, 4);
        for (int u = 0; u < 4; u++) storeu(x + i + (size_t)u * NL, s * v[u]);
    }
    for (; i + NL <= n; i += NL) {
        vd v = loadu(x + i);
        if (b) v += loadu(b + i);
        storeu(x + i, s * cos_v(v));
    }
    if (i < n) { /* the tail through one padded vector: same bits as a full one */
        double t[NL] = {0}, u[NL] = {0};
        memcpy(t, x + i, (n - i) * sizeof *t);
        if (b) memcpy(u, b + i, (n - i) * sizeof *u);
        storeu(t, s * cos_v(loadu(t) + loadu(u)));
        memcpy(x + i, t, (n - i) * sizeof *t);
    }
}

void CAT(rfx__vsincos_, SUFFIX)(const double *x, double *co, double *so, double s, size_t n)
{
    if (too_large(x, NULL, n)) {
        for (size_t i = 0; i < n; i++) {
            Sleef_double2 r = Sleef_sincos_u10(x[i]);
            so[i] = s * r.x;
            co[i] = s * r.y;
        }
        return;
    }
    size_t i = 0;
    for (; i + 4 * NL <= n; i += 4 * NL) { /* 4 vectors in lockstep */
        vd v[4], c[4], sn[4];
        for (int u = 0; u < 4; u++) v[u] = loadu(x + i + (size_t)u * NL);
        sincos_vn(v, c, sn, 4);
        for (int u = 0; u < 4; u++) {
            storeu(co + i + (size_t)u * NL, s * c[u]);
            storeu(so + i + (size_t)u * NL, s * sn[u]);
        }
    }
    for (; i + NL <= n; i += NL) {
        vd c, sn;
        sincos_v(loadu(x + i), &c, &sn);
        storeu(co + i, s * c);
        storeu(so + i, s * sn);
    }
    if (i < n) {
        double t[NL] = {0}, tc[NL], ts[NL];
        memcpy(t, x + i, (n - i) * sizeof *t);
        vd c, sn;
        sincos_v(loadu(t), &c, &sn);
        storeu(tc, s * c);
        storeu(ts, s * sn);
        memcpy(co + i, tc, (n - i) * sizeof *tc);
        memcpy(so + i, ts, (n - i) * sizeof *ts);
    }
}

/* Single precision: the same scheme with float parts of pi/2 (Cephes'
 * DP1..DP3 doubled) and shorter polynomials (coefficients of fdlibm's
 * __kernel_sindf / __kernel_cosdf). Exact enough for |x| < 1e4. */
static inline void sincos_vf(vf x, vf *c_out, vf *s_out)
{
    const vf shifter = (vf){0} + 0x1.8p23f;
    vf t = x * 0.636619772367581343f + shifter;
    vf k = t - shifter;
    vif q = (vif)t;
    vf r = x - k * 1.5703125f;
    r = r - k * 4.837512969970703125e-4f;
    r = r - k * 7.549789948768648e-8f;
    vf z = r * r;
    vf s = r + r * z * (-0.166666666416265235595f +
                        z * (0.0083333293858894631756f +
                             z * (-0.000198393348360966317347f + z * 0.0000027183114939898219064f)));
    vf c = 1.0f - 0.5f * z +
           z * z * (0.0416666233237390631894f +
                    z * (-0.00138867637746099294692f + z * 0.0000243904487962774090654f));
    vif odd = -(q & 1);
    vif ci = (vif)c, si = (vif)s;
    vif cos_bits = (si & odd) | (ci & ~odd);
    vif sin_bits = (ci & odd) | (si & ~odd);
    cos_bits ^= ((q + 1) & 2) << 30;
    sin_bits ^= (q & 2) << 30;
    *c_out = (vf)cos_bits;
    *s_out = (vf)sin_bits;
}

/* cos(x) alone in single precision, as cos_v: k = round(x / pi), r = x -
 * k pi (float parts of pi: Cephes' DP1..DP3 doubled, k DP1 exact for
 * |k| < 2^16), cos x = (-1)^k cos r, and cos r by its Taylor series to
 * z^6 (z = r^2 <= 2.47: the first term left out is below 6.5e-9, a tenth
 * of an ulp of 1). */
__attribute__((always_inline)) static inline void cos_vfn(vf *x, int n)
{
    const vf shifter = (vf){0} + 0x1.8p23f;
    vf r[COS_MAXN], z[COS_MAXN], c[COS_MAXN];
    vif q[COS_MAXN];
#pragma GCC unroll 32
    for (int i = 0; i < n; i++) {
        vf t = x[i] * 0.318309886183790671538f + shifter;
        vf k = t - shifter;
        q[i] = (vif)t;
        r[i] = x[i] - k * 3.140625f;
        r[i] = r[i] - k * 9.67502593994140625e-4f;
        r[i] = r[i] - k * 1.509957990978376432e-7f;
        z[i] = r[i] * r[i];
        c[i] = (vf){0} + 1.0f / 479001600.0f;
    }
    static const float coef[6] = {-1.0f / 3628800.0f, 1.0f / 40320.0f, -1.0f / 720.0f,
                                  1.0f / 24.0f,       -0.5f,           1.0f};
#pragma GCC unroll 6
    for (int m = 0; m < 6; m++)
#pragma GCC unroll 32
        for (int i = 0; i < n; i++) c[i] = c[i] * z[i] + coef[m];
#pragma GCC unroll 32
    for (int i = 0; i < n; i++) x[i] = (vf)((vif)c[i] ^ ((q[i] & 1) << 31));
}

static inline vf cos_vf(vf x)
{
    cos_vfn(&x, 1);
    return x;
}

static inline vf loaduf(const float *p)
{
#if VB == 64
    return (vf)_mm512_loadu_ps(p);
#elif VB == 32
    return (vf)_mm256_loadu_ps(p);
#else
    vf v;
    memcpy(&v, p, sizeof v);
    return v;
#endif
}

static inline void storeuf(float *p, vf v)
{
#if VB == 64
    _mm512_storeu_ps(p, (__m512)v);
#elif VB == 32
    _mm256_storeu_ps(p, (__m256)v);
#else
    memcpy(p, &v, sizeof v);
#endif
}

static int too_large_f(const float *x, const float *b, size_t n)
{
    int big = 0;
    for (size_t i = 0; i < n; i++) big |= fabsf(x[i] + (b ? b[i] : 0.0f)) >= LIMIT_F;
    return big;
}

void CAT(rfx__vcos_bias_f32_, SUFFIX)(float *x, const float *b, float s, size_t n)
{
    if (too_large_f(x, b, n)) {
        for (size_t i = 0; i < n; i++) x[i] = s * Sleef_cosf_u10(x[i] + (b ? b[i] : 0.0f));
        return;
    }
    size_t i = 0;
    for (; i + NLF <= n; i += NLF) {
        vf v = loaduf(x + i), c, sn;
        if (b) v += loaduf(b + i);
        sincos_vf(v, &c, &sn);
        storeuf(x + i, s * c);
    }
    if (i < n) {
        float t[NLF] = {0}, u[NLF] = {0};
        memcpy(t, x + i, (n - i) * sizeof *t);
        if (b) memcpy(u, b + i, (n - i) * sizeof *u);
        vf c, sn;
        sincos_vf(loaduf(t) + loaduf(u), &c, &sn);
        storeuf(t, s * c);
        memcpy(x + i, t, (n - i) * sizeof *t);
    }
}

void CAT(rfx__vsincos_f32_, SUFFIX)(const float *x, float *co, float *so, float s, size_t n)
{
    if (too_large_f(x, NULL, n)) {
        for (size_t i = 0; i < n; i++) {
            Sleef_float2 r = Sleef_sincosf_u10(x[i]);
            so[i] = s * r.x;
            co[i] = s * r.y;
        }
        return;
    }
    size_t i = 0;
    for (; i + NLF <= n; i += NLF) {
        vf c, sn;
        sincos_vf(loaduf(x + i), &c, &sn);
        storeuf(co + i, s * c);
        storeuf(so + i, s * sn);
    }
    if (i < n) {
        float t[NLF] = {0}, tc[NLF], ts[NLF];
        memcpy(t, x + i, (n - i) * sizeof *t);
        vf c, sn;
        sincos_vf(loaduf(t), &c, &sn);
        storeuf(tc, s * c);
        storeuf(ts, s * sn);
        memcpy(co + i, tc, (n - i) * sizeof *tc);
        memcpy(so + i, ts, (n - i) * sizeof *ts);
    }
}

/*
 * The fused feature kernels (fused_kernel.h), in double and in single
 * precision: Z = s cos(X W^T + b), or the cos / sin pair, computed in
 * registers and written once.
 */
#if VB == 64
#define NV 4 /* frequency vectors per register block */
#else
#define NV 2
#endif
/* Rows per register block: 16 registers (AVX2, SSE2) hold 6 x 2
 * accumulators, 2 W vectors and a broadcast or product temporary (6 rows:
 * 8-11% fewer cycles than 4 on one core, bench_core --threads 1; SSE2 fits
 * 6 rows only with the inputs broadcast beforehand, F_XB_MAX_D, so that a
 * product reads its broadcast from memory); for AVX-512 (32 registers)
 * 4 x 4, measured on an AVX-512 AMD EPYC against 6 x 4 and 8 x 2 (one
 * thread, d = 20, D = 2048, five runs each: 2.2-2.7 time-stamp cycles per
 * feature against 2.9-3.5 and 2.3-2.9). NV FL must divide the row stride
 * of WT (64), so 3 vectors are not an option. tests/check_kernel_asm.py
 * checks that no path spills. */
#if VB <= 32
#define MR 6
#else
#define MR 4
#endif

static inline vd bcast(double v)
{
#if VB == 64
    return (vd)_mm512_set1_pd(v);
#elif VB == 32
    return (vd)_mm256_set1_pd(v);
#elif defined(__SSE2__)
    return (vd)_mm_set1_pd(v); /* not (vd){0} + v: an add that -0.0 keeps */
#else
    vd r;
    for (int l = 0; l < NL; l++) r[l] = v;
    return r;
#endif
}

static inline vf bcastf(float v)
{
#if VB == 64
    return (vf)_mm512_set1_ps(v);
#elif VB == 32
    return (vf)_mm256_set1_ps(v);
#elif defined(__SSE2__)
    return (vf)_mm_set1_ps(v);
#else
    vf r;
    for (int l = 0; l < NLF; l++) r[l] = v;
    return r;
#endif
}

typedef double vda __attribute__((vector_size(VB), aligned(VB)));
typedef float vfa __attribute__((vector_size(VB), aligned(VB)));
static inline vd loada(const double *p) { return *(const vda *)p; }
static inline vf loadaf(const float *p) { return *(const vfa *)p; }

static inline void sleef_sincos(double t, double *c, double *s)
{
    Sleef_double2 q = Sleef_sincos_u10(t);
    *s = q.x;
    *c = q.y;
}

static inline void sleef_sincosf(float t, float *c, float *s)
{
    Sleef_float2 q = Sleef_sincosf_u10(t);
    *s = q.x;
    *c = q.y;
}

#define FT double
#define FV vd
#define FVI vi
#define FL NL
/* Up to this input dimension the fused kernel broadcasts a register
 * block's inputs once (0: broadcast from memory in the k loop, one load). */
#if VB == 16
#define F_XB_MAX_D 64
#else
#define F_XB_MAX_D 0
#endif
#define F_LIMIT LIMIT
#define F_BCAST bcast
#define F_LOADA loada
#define F_LOADU loadu
#define F_STOREU storeu
#define F_COSN cos_vn
#define F_SINCOS sincos_v
#define F_EXACT sleef_sincos
#define F_SIGNMASK INT64_MAX
#define F_IT int64_t
#define F_NAME(x) x##_f64
#define F_ENTRY CAT(rfx__fused_features_, SUFFIX)
#include "fused_kernel.h"

#define FT float
#define FV vf
#define FVI vif
#define FL NLF
#define F_LIMIT LIMIT_F
#define F_BCAST bcastf
#define F_LOADA loadaf
#define F_LOADU loaduf
#define F_STOREU storeuf
#define F_COSN cos_vfn
#define F_SINCOS sincos_vf
#define F_EXACT sleef_sincosf
#define F_SIGNMASK INT32_MAX
#define F_IT int32_t
#define F_NAME(x) x##_f32
#define F_ENTRY CAT(rfx__fused_features_f32_, SUFFIX)
#include "fused_kernel.h"
