/* SPDX-License-Identifier: BSD-3-Clause */
/* The vector cos / sincos kernels against libm: absolute error over the
 * argument ranges random features produce, the tails, the large-argument
 * fallback, and the fused feature kernel against a plain loop. */
#include "core/vmath_isa.h"
#include "internal.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*cos_fn)(double *, const double *, double, size_t);
typedef void (*sincos_fn)(const double *, double *, double *, double, size_t);
typedef void (*cosf_fn)(float *, const float *, float, size_t);
typedef void (*sincosf_fn)(const float *, float *, float *, float, size_t);

static int have(const char *isa)
{
    rfx_isa want;
    return rfx_isa_from_name(isa, &want) == RFX_OK && want <= rfx_isa_native();
}

/* max |kernel(x) - cos(x)| over n arguments of magnitude up to amp, against
 * x87 extended precision (cosl, sinl: 64-bit mantissas, correctly reduced),
 * so that the reference's own error (~1e-19) is not in the figure and the
 * bound does not depend on which libm the machine has. */
static void check_double(const char *isa, cos_fn vc, sincos_fn vsc, double amp, double tol)
{
    rfx_test_rng r = {amp > 1 ? (unsigned long long)amp : 3};
    const size_t n = 100003; /* odd: exercises the tail */
    double *x = malloc(n * sizeof *x), *b = malloc(n * sizeof *b), *y = malloc(n * sizeof *y);
    double *c = malloc(n * sizeof *c), *s = malloc(n * sizeof *s);
    for (size_t i = 0; i < n; i++) {
        x[i] = amp * (2 * rfx_test_uniform(&r) - 1);
        b[i] = 6.283185307179586 * rfx_test_uniform(&r);
    }
    memcpy(y, x, n * sizeof *y);
    vc(y, b, 1.0, n);
    vsc(x, c, s, 1.0, n);
    double ec = 0, es = 0, eb = 0;
    for (size_t i = 0; i < n; i++) {
        /* the kernels see the rounded sum x + b, as libm would */
        eb = fmax(eb, (double)fabsl(y[i] - cosl((long double)(x[i] + b[i]))));
        ec = fmax(ec, (double)fabsl(c[i] - cosl((long double)x[i])));
        es = fmax(es, (double)fabsl(s[i] - sinl((long double)x[i])));
    }
    printf("%-7s |x| < %-8g cos(x + b) %.2e  cos %.2e  sin %.2e\n", isa, amp, eb, ec, es);
    CHECK_MSG(eb <= tol && ec <= tol && es <= tol, "%s amp %g: errors %.3g %.3g %.3g > %.3g",
              isa, amp, eb, ec, es, tol);
    /* the scale factor multiplies */
    memcpy(y, x, 16 * sizeof *y);
    vc(y, NULL, 0.5, 16);
    for (size_t i = 0; i < 16; i++) CHECK_NEAR(y[i], 0.5 * cos(x[i]), tol);
    free(x);
    free(b);
    free(y);
    free(c);
    free(s);
}

static void check_float(const char *isa, cosf_fn vc, sincosf_fn vsc, float amp, double tol)
{
    rfx_test_rng r = {17};
    const size_t n = 50001;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *c = malloc(n * sizeof *c),
          *s = malloc(n * sizeof *s);
    for (size_t i = 0; i < n; i++) x[i] = (float)(amp * (2 * rfx_test_uniform(&r) - 1));
    memcpy(y, x, n * sizeof *y);
    vc(y, NULL, 1.0f, n);
    vsc(x, c, s, 1.0f, n);
    double ec = 0, es = 0, ey = 0;
    for (size_t i = 0; i < n; i++) {
        ey = fmax(ey, (double)fabsl(y[i] - cosl((long double)x[i])));
        ec = fmax(ec, (double)fabsl(c[i] - cosl((long double)x[i])));
        es = fmax(es, (double)fabsl(s[i] - sinl((long double)x[i])));
    }
    printf("%-7s |x| < %-8g float: cos %.2e  cos %.2e  sin %.2e\n", isa, (double)amp, ey, ec, es);
    CHECK_MSG(ey <= tol && ec <= tol && es <= tol, "%s float amp %g: %.3g %.3g %.3g", isa,
              (double)amp, ey, ec, es);
    free(x);
    free(y);
    free(c);
    free(s);
}

typedef void (*fused_fn)(const double *, size_t, size_t, size_t, const double *, size_t,
                         const double *, size_t, double, int, double *, size_t);

/* The fused kernel of one instruction set equals s cos(b + sum_k x_k w_k)
 * (and s sin) to the rounding of the sum: |error| <= s (2 gamma_{d+1}
 * (|b| + sum_k |x_k w_k|) + 8 ulp(1)), element by element, for row counts
 * that leave every remainder of the register block, partial vectors of
 * frequencies, and one argument beyond the fast range (the exact path for
 * its block). A row computed alone has the bits it has in the batch. */
static void check_fused(const char *isa, fused_fn fused)
{
    /* 37 .. 42 rows: every remainder of blocks of 4 and of 6 rows */
    const size_t ns[6] = {37, 38, 39, 40, 41, 42}, Fs[3] = {45, 7, 64}, d = 5, ldw = 64;
    const double u = 0x1p-53, gd = (d + 1) * u / (1 - (d + 1) * u);
    for (size_t a = 0; a < 6; a++)
        for (size_t c = 0; c < 3; c++) {
            const size_t n = ns[a], F = Fs[c];
            rfx_test_rng r = {21 + a + 6 * c};
            /* WT and b as the feature map keeps them: 64-byte aligned */
            double *X = rfx_test_matrix(&r, n, d, -3, 3);
            double *WT = aligned_alloc(64, d * ldw * sizeof *WT), *b = aligned_alloc(64, ldw * sizeof *b);
            double *Z = malloc(n * 2 * F * sizeof *Z);
            memset(WT, 0, d * ldw * sizeof *WT);
            memset(b, 0, ldw * sizeof *b);
            double *Z1 = malloc(2 * F * sizeof *Z1);
            for (size_t k = 0; k < d; k++)
                for (size_t j = 0; j < F; j++) WT[k * ldw + j] = 2 * rfx_test_normal(&r);
            for (size_t j = 0; j < F; j++) b[j] = 6.283185307179586 * rfx_test_uniform(&r);
            X[3 * d] = 4e5;
            for (int paired = 0; paired < 2; paired++) {
                const size_t ldz = paired ? 2 * F : F;
                fused(X, d, n, d, WT, ldw, paired ? NULL : b, F, 0.25, paired, Z, ldz);
                double err = 0, excess = -1;
                for (size_t i = 0; i < n; i++) {
                    for (size_t j = 0; j < F; j++) {
                        long double t = paired ? 0 : b[j];
                        double m = paired ? 0 : b[j];
                        for (size_t k = 0; k < d; k++) {
                            t += (long double)X[i * d + k] * WT[k * ldw + j];
                            m += fabs(X[i * d + k] * WT[k * ldw + j]);
                        }
                        double tol = 0.25 * (2 * gd * m + 8 * u);
                        double e = (double)fabsl(Z[i * ldz + j] - 0.25L * cosl(t));
                        if (paired) e = fmax(e, (double)fabsl(Z[i * ldz + F + j] - 0.25L * sinl(t)));
                        err = fmax(err, e);
                        excess = fmax(excess, e - tol);
                    }
                }
                CHECK_MSG(excess <= 0, "%s fused n %zu F %zu paired %d: error %.3g above its bound",
                          isa, n, F, paired, err);
                for (size_t i = 0; i < n; i += 7) {
                    fused(X + i * d, d, 1, d, WT, ldw, paired ? NULL : b, F, 0.25, paired, Z1, ldz);
                    CHECK_MSG(memcmp(Z1, Z + i * ldz, ldz * sizeof *Z1) == 0,
                              "%s fused: row %zu alone differs", isa, i);
                }
                if (a == 0 && c == 0)
                    printf("%-7s fused kernel (paired %d): max error %.2e\n", isa, paired, err);
            }
            free(X);
            free(WT);
            free(b);
            free(Z);
            free(Z1);
        }
}

typedef void (*fused_f32_fn)(const float *, size_t, size_t, size_t, const float *, size_t,
                             const float *, size_t, float, int, float *, size_t);

/* The single-precision fused kernel against cosl of the float sum, bounded
 * as above with float's unit roundoff; and a row alone has its batch bits. */
static void check_fused_f32(const char *isa, fused_f32_fn fused)
{
    const size_t ns[3] = {37, 40, 41}, Fs[3] = {45, 7, 128}, d = 6, ldw = 128;
    const double u = 0x1p-24, gd = (d + 1) * u / (1 - (d + 1) * u);
    double worst_rel = 0;
    for (size_t a = 0; a < 3; a++)
        for (size_t c = 0; c < 3; c++) {
            const size_t n = ns[a], F = Fs[c];
            rfx_test_rng r = {61 + a + 3 * c};
            float *X = malloc(n * d * sizeof *X), *Z = malloc(n * 2 * F * sizeof *Z);
            float *WT = aligned_alloc(64, d * ldw * sizeof *WT), *b = aligned_alloc(64, ldw * sizeof *b);
            float *Z1 = malloc(2 * F * sizeof *Z1);
            memset(WT, 0, d * ldw * sizeof *WT);
            memset(b, 0, ldw * sizeof *b);
            for (size_t i = 0; i < n * d; i++) X[i] = (float)(6 * rfx_test_uniform(&r) - 3);
            for (size_t k = 0; k < d; k++)
                for (size_t j = 0; j < F; j++) WT[k * ldw + j] = (float)(2 * rfx_test_normal(&r));
            for (size_t j = 0; j < F; j++) b[j] = (float)(6.283185307179586 * rfx_test_uniform(&r));
            X[3 * d] = 4e4f; /* beyond the fast range (1e4) */
            for (int paired = 0; paired < 2; paired++) {
                const size_t ldz = paired ? 2 * F : F;
                fused(X, d, n, d, WT, ldw, paired ? NULL : b, F, 0.25f, paired, Z, ldz);
                double err = 0, excess = -1;
                for (size_t i = 0; i < n; i++)
                    for (size_t j = 0; j < F; j++) {
                        long double t = paired ? 0 : b[j];
                        double m = paired ? 0 : b[j];
                        for (size_t k = 0; k < d; k++) {
                            t += (long double)X[i * d + k] * WT[k * ldw + j];
                            m += fabs((double)X[i * d + k] * WT[k * ldw + j]);
                        }
                        double tol = 0.25 * (2 * gd * m + 8 * u);
                        double e = (double)fabsl(Z[i * ldz + j] - 0.25L * cosl(t));
                        if (paired) e = fmax(e, (double)fabsl(Z[i * ldz + F + j] - 0.25L * sinl(t)));
                        err = fmax(err, e);
                        excess = fmax(excess, e - tol);
                        if (i != 3) worst_rel = fmax(worst_rel, e / (0.25 * (m + 1)));
                    }
                CHECK_MSG(excess <= 0, "%s fused f32 n %zu F %zu paired %d: error %.3g above its bound",
                          isa, n, F, paired, err);
                for (size_t i = 0; i < n; i += 5) {
                    fused(X + i * d, d, 1, d, WT, ldw, paired ? NULL : b, F, 0.25f, paired, Z1, ldz);
                    CHECK_MSG(memcmp(Z1, Z + i * ldz, ldz * sizeof *Z1) == 0,
                              "%s fused f32: row %zu alone differs", isa, i);
                }
            }
            free(X);
            free(WT);
            free(b);
            free(Z);
            free(Z1);
        }
    /* in ulps of float, relative to the size of the sum: a few */
    printf("%-7s fused f32 kernel: worst error %.2f ulp of (1 + sum |x w|)\n", isa, worst_rel / u);
    CHECK_MSG(worst_rel <= 8 * u, "%s fused f32: %.3g ulp", isa, worst_rel / u);
}

/* The path API: names round-trip, unknown names and values are refused,
 * a request is capped at the CPU's best, and the path set is restored. */
static void check_isa_api(void)
{
    const rfx_isa was = rfx_isa_active();
    for (int i = RFX_ISA_GENERIC; i <= RFX_ISA_AVX512; i++) {
        rfx_isa back = RFX_ISA_GENERIC;
        CHECK_OK(rfx_isa_from_name(rfx_isa_name((rfx_isa)i), &back));
        CHECK(back == (rfx_isa)i);
        CHECK_OK(rfx_isa_set((rfx_isa)i));
        CHECK(rfx_isa_active() == ((rfx_isa)i < rfx_isa_native() ? (rfx_isa)i : rfx_isa_native()));
    }
    rfx_isa out = RFX_ISA_AVX2;
    CHECK_STATUS(rfx_isa_from_name("sse4", &out), RFX_EINVAL);
    CHECK(strstr(rfx_last_error(), "'sse4'") != NULL);
    CHECK_STATUS(rfx_isa_from_name(NULL, &out), RFX_EINVAL);
    CHECK(out == RFX_ISA_AVX2);
    CHECK_STATUS(rfx_isa_set((rfx_isa)3), RFX_EINVAL);
    CHECK_OK(rfx_isa_set(was));
    CHECK(rfx_isa_active() == was);
}

int main(void)
{
    check_isa_api();
    struct {
        const char *isa;
        cos_fn c;
        sincos_fn sc;
        cosf_fn cf;
        sincosf_fn scf;
    } isas[] = {
        {"generic", rfx__vcos_bias_generic, rfx__vsincos_generic, rfx__vcos_bias_f32_generic,
         rfx__vsincos_f32_generic},
        {"avx2", rfx__vcos_bias_avx2, rfx__vsincos_avx2, rfx__vcos_bias_f32_avx2,
         rfx__vsincos_f32_avx2},
        {"avx512", rfx__vcos_bias_avx512, rfx__vsincos_avx512, rfx__vcos_bias_f32_avx512,
         rfx__vsincos_f32_avx512},
        {"active", rfx__vcos_bias, rfx__vsincos, rfx__vcos_bias_f32, rfx__vsincos_f32},
    };
    printf("dispatch: %s (this CPU: %s)\n", rfx_isa_name(rfx_isa_active()),
           rfx_isa_name(rfx_isa_native()));
    for (size_t i = 0; i < sizeof isas / sizeof *isas; i++) {
        if (strcmp(isas[i].isa, "active") != 0 && !have(isas[i].isa)) {
            printf("%s: not supported by this processor, skipped\n", isas[i].isa);
            continue;
        }
        /* a few ulp of 1 in the fast range; beyond it (1e5) the SLEEF path */
        check_double(isas[i].isa, isas[i].c, isas[i].sc, 1.0, 4e-16);
        check_double(isas[i].isa, isas[i].c, isas[i].sc, 100.0, 4e-16);
        check_double(isas[i].isa, isas[i].c, isas[i].sc, 9e4, 4e-16);
        check_double(isas[i].isa, isas[i].c, isas[i].sc, 1e9, 4e-16);
        check_float(isas[i].isa, isas[i].cf, isas[i].scf, 100.0f, 4e-7);
        check_float(isas[i].isa, isas[i].cf, isas[i].scf, 5e5f, 4e-7);
    }
    check_fused("generic", rfx__fused_features_generic);
    if (have("avx2")) check_fused("avx2", rfx__fused_features_avx2);
    if (have("avx512")) check_fused("avx512", rfx__fused_features_avx512);
    check_fused_f32("generic", rfx__fused_features_f32_generic);
    if (have("avx2")) check_fused_f32("avx2", rfx__fused_features_f32_avx2);
    if (have("avx512")) check_fused_f32("avx512", rfx__fused_features_f32_avx512);
    return rfx_test_finish("test_vmath");
}
