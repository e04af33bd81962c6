/*
 * Vector cos / sincos for the feature maps, written once with GCC vector
 * extensions and compiled per instruction set (vmath_avx2.c: 4 doubles,
 * vmath_avx512.c: 8 doubles). Included, not compiled on its own; the
 * includer defines VB (vector bytes) and SUFFIX (the function suffix).
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
#include <immintrin.h>
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

/* cos(x) and sin(x) of one vector. */
static inline void sincos_v(vd x, vd *c_out, vd *s_out)
{
    const vd two_over_pi = x * 0 + 0.63661977236758134308;
    const vd shifter = x * 0 + 0x1.8p52;
    vd t = x * two_over_pi + shifter;
    vd k = t - shifter;
    vi q = (vi)t; /* the low bits of the mantissa hold k (two's complement) */
    /* r = x - k pi/2 in three parts (fdlibm's pio2_1, pio2_1t split) */
    vd r = x - k * 1.57079632673412561417e+00; /* pio2_1: 33 bits, k pio2_1 exact */
    r = r - k * 6.07710050630396597660e-11;    /* pio2_2: the next 33 bits      */
    r = r - k * 2.02226624879595063154e-21;    /* pio2_2t: the rest              */
    vd z = r * r;
    vd ps = -1.66666666666666324348e-01 +
            z * (8.33333333332248946124e-03 +
                 z * (-1.98412698298579493134e-04 +
                      z * (2.75573137070700676789e-06 +
                           z * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10))));
    vd s = r + r * z * ps;
    vd pc = 4.16666666666666019037e-02 +
            z * (-1.38888888888741095749e-03 +
                 z * (2.48015872894767294178e-05 +
                      z * (-2.75573143513906633035e-07 +
                           z * (2.08757232129817482790e-09 + z * -1.13596475577881948265e-11))));
    vd c = 1.0 - 0.5 * z + z * z * pc;
    vi odd = -(q & 1); /* all ones where k is odd */
    vi ci = (vi)c, si = (vi)s;
    vi cos_bits = (si & odd) | (ci & ~odd);
    vi sin_bits = (ci & odd) | (si & ~odd);
    cos_bits ^= ((q + 1) & 2) << 62; /* negative for k mod 4 in {1, 2} */
    sin_bits ^= (q & 2) << 62;       /* negative for k mod 4 in {2, 3} */
    *c_out = (vd)cos_bits;
    *s_out = (vd)sin_bits;
}

/* cos(x) alone: k = round(x / pi), r = x - k pi in [-pi/2, pi/2] (pi in the
 * same three parts, doubled: still exact products), cos x = (-1)^k cos r,
 * and cos r by its Taylor series to z^11 (z = r^2 <= 2.47: the first term
 * left out is below 1e-19). One polynomial and one sign flip instead of two
 * polynomials and a quadrant select: the cos-bias form's kernel. */
static inline vd cos_v(vd x)
{
    const vd one_over_pi = x * 0 + 0.31830988618379067154;
    const vd shifter = x * 0 + 0x1.8p52;
    vd t = x * one_over_pi + shifter;
    vd k = t - shifter;
    vi q = (vi)t;
    vd r = x - k * 3.14159265346825122834e+00;
    r = r - k * 1.21542010126079319532e-10;
    r = r - k * 4.04453249759190126308e-21;
    vd z = r * r;
    /* (-1)^n / (2n)!, n = 11 .. 1, by Horner */
    vd c = z * 0 - 1.0 / 1124000727777607680000.0;
    c = c * z + 1.0 / 2432902008176640000.0;
    c = c * z - 1.0 / 6402373705728000.0;
    c = c * z + 1.0 / 20922789888000.0;
    c = c * z - 1.0 / 87178291200.0;
    c = c * z + 1.0 / 479001600.0;
    c = c * z - 1.0 / 3628800.0;
    c = c * z + 1.0 / 40320.0;
    c = c * z - 1.0 / 720.0;
    c = c * z + 1.0 / 24.0;
    c = c * z - 0.5;
    c = c * z + 1.0;
    return (vd)((vi)c ^ ((q & 1) << 63));
}

static inline vd loadu(const double *p)
{
    vd v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void storeu(double *p, vd v) { memcpy(p, &v, sizeof v); }

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
    const vf shifter = x * 0 + 0x1.8p23f;
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

static inline vf loaduf(const float *p)
{
    vf v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void storeuf(float *p, vf v) { memcpy(p, &v, sizeof v); }

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
 * The fused feature kernel: Z[i, j] = s cos(b_j + sum_k X[i, k] WT[k, j]),
 * or the pair s cos(t), s sin(t) into columns j and F + j. The sum runs in
 * the same order (k = 0 .. d-1, fused multiply-adds) for every element,
 * whatever the blocking, so a row's features do not depend on the block
 * it came in. Register block: 4 rows x 2 vectors of frequencies; per k two
 * loads of WT, four broadcasts, eight FMAs. Each output is written once,
 * straight from registers: no GEMM output pass, no separate cos pass.
 * Cost per element: d FMAs + one sincos; memory: one store. For large d
 * (WT rows no longer cached across the block) the GEMM path is faster; the
 * caller decides. WT is d x ldw and b has ldw entries, zero-padded past F,
 * ldw a multiple of the vector length.
 */
/* One vbroadcastsd (a generic 0 + v costs a scalar add; a lane loop goes
 * through the stack). */
static inline vd bcast(double v)
{
#if VB == 64
    return (vd)_mm512_set1_pd(v);
#else
    return (vd)_mm256_set1_pd(v);
#endif
}

static inline void store_part(double *p, vd v, size_t m)
{
    if (m >= NL) storeu(p, v);
    else {
        double t[NL];
        storeu(t, v);
        memcpy(p, t, m * sizeof *t);
    }
}

/* Accumulate t for rows r0 .. r0+nr-1 (nr <= 4) and frequency vectors
 * j, j + NL: acc[r][c]. */
#define FUSED_ACC(NR)                                                              \
    for (int r_ = 0; r_ < (NR); r_++) {                                            \
        acc[r_][0] = b ? loadu(b + j) : (vd){0};                                   \
        acc[r_][1] = b ? loadu(b + j + NL) : (vd){0};                              \
    }                                                                              \
    for (size_t k = 0; k < d; k++) {                                               \
        vd w0 = loadu(WT + k * ldw + j), w1 = loadu(WT + k * ldw + j + NL);        \
        for (int r_ = 0; r_ < (NR); r_++) {                                        \
            vd xv = bcast(X[(i + (size_t)r_) * ldx + k]);                          \
            acc[r_][0] = acc[r_][0] + xv * w0;                                     \
            acc[r_][1] = acc[r_][1] + xv * w1;                                     \
        }                                                                          \
    }

/* Rows i .. i+nr-1 (nr <= 4), all frequencies, by the fast sincos; no calls
 * in the loop, so the accumulators stay in registers. Returns 1 when some
 * |t| reached LIMIT: the caller then redoes the rows with fused_rows_exact
 * (the sums are recomputed identically). */
static int fused_rows(const double *X, size_t ldx, size_t i, int nr, size_t d, const double *WT,
                      size_t ldw, const double *b, size_t F, double s, int paired, double *Z,
                      size_t ldz)
{
    vd acc[4][2];
    const vi absmask = (vi){0} + INT64_MAX;
    vi big = (vi){0};
    for (size_t j = 0; j < F; j += 2 * NL) {
        if (nr == 4) {
            FUSED_ACC(4)
        } else {
            FUSED_ACC(nr)
        }
        for (int r = 0; r < nr; r++) {
            double *z = Z + (i + (size_t)r) * ldz;
            for (int c = 0; c < 2; c++) {
                size_t jj = j + (size_t)c * NL;
                if (jj >= F) break;
                big |= (vd)((vi)acc[r][c] & absmask) >= LIMIT;
                if (paired) {
                    vd co, si;
                    sincos_v(acc[r][c], &co, &si);
                    store_part(z + jj, s * co, F - jj);
                    store_part(z + F + jj, s * si, F - jj);
                } else {
                    store_part(z + jj, s * cos_v(acc[r][c]), F - jj);
                }
            }
        }
    }
    int64_t lanes[NL];
    memcpy(lanes, &big, sizeof lanes);
    int any = 0;
    for (int l = 0; l < NL; l++) any |= lanes[l] != 0;
    return any;
}

/* The same rows through SLEEF's exact sincos (rare: huge arguments). */
__attribute__((noinline)) static void fused_rows_exact(const double *X, size_t ldx, size_t i,
                                                       int nr, size_t d, const double *WT,
                                                       size_t ldw, const double *b, size_t F,
                                                       double s, int paired, double *Z,
                                                       size_t ldz)
{
    vd acc[4][2];
    for (size_t j = 0; j < F; j += 2 * NL) {
        FUSED_ACC(nr)
        for (int r = 0; r < nr; r++) {
            double *z = Z + (i + (size_t)r) * ldz;
            for (int c = 0; c < 2; c++) {
                size_t jj = j + (size_t)c * NL;
                if (jj >= F) break;
                double t[NL], tc[NL], ts[NL];
                storeu(t, acc[r][c]);
                for (int l = 0; l < NL; l++) {
                    Sleef_double2 q = Sleef_sincos_u10(t[l]);
                    ts[l] = s * q.x;
                    tc[l] = s * q.y;
                }
                store_part(z + jj, loadu(tc), F - jj);
                if (paired) store_part(z + F + jj, loadu(ts), F - jj);
            }
        }
    }
}

void CAT(rfx__fused_features_, SUFFIX)(const double *X, size_t ldx, size_t rows, size_t d,
                                       const double *WT, size_t ldw, const double *b, size_t F,
                                       double s, int paired, double *Z, size_t ldz)
{
    for (size_t i = 0; i < rows; i += 4) {
        int nr = rows - i < 4 ? (int)(rows - i) : 4;
        if (fused_rows(X, ldx, i, nr, d, WT, ldw, b, F, s, paired, Z, ldz))
            fused_rows_exact(X, ldx, i, nr, d, WT, ldw, b, F, s, paired, Z, ldz);
    }
}
