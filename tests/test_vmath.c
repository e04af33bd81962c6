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
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    if (strcmp(isa, "avx512") == 0) return __builtin_cpu_supports("avx512f");
    if (strcmp(isa, "avx2") == 0) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
    (void)isa;
    return strcmp(isa, "generic") == 0;
}

/* max |kernel(x) - libm(x)| over n arguments of magnitude up to amp */
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
        eb = fmax(eb, fabs(y[i] - cos(x[i] + b[i])));
        ec = fmax(ec, fabs(c[i] - cos(x[i])));
        es = fmax(es, fabs(s[i] - sin(x[i])));
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
        ey = fmax(ey, fabs(y[i] - cos((double)x[i])));
        ec = fmax(ec, fabs(c[i] - cos((double)x[i])));
        es = fmax(es, fabs(s[i] - sin((double)x[i])));
    }
    printf("%-7s |x| < %-8g float: cos %.2e  cos %.2e  sin %.2e\n", isa, (double)amp, ey, ec, es);
    CHECK_MSG(ey <= tol && ec <= tol && es <= tol, "%s float amp %g: %.3g %.3g %.3g", isa,
              (double)amp, ey, ec, es);
    free(x);
    free(y);
    free(c);
    free(s);
}

/* The fused kernel equals s cos(b + sum_k x_k w_k) evaluated plainly. */
static void check_fused(void)
{
    rfx_test_rng r = {21};
    const size_t n = 37, d = 5, F = 45, ldw = 48;
    double *X = rfx_test_matrix(&r, n, d, -3, 3), *WT = calloc(d * ldw, sizeof *WT);
    double *b = calloc(ldw, sizeof *b), *Z = malloc(n * 2 * F * sizeof *Z);
    for (size_t k = 0; k < d; k++)
        for (size_t j = 0; j < F; j++) WT[k * ldw + j] = 2 * rfx_test_normal(&r);
    for (size_t j = 0; j < F; j++) b[j] = 6.283185307179586 * rfx_test_uniform(&r);
    /* one argument beyond the fast range: the exact path for its block */
    X[3 * d] = 4e5;
    for (int paired = 0; paired < 2; paired++) {
        if (!rfx__fused_features(X, d, n, d, WT, ldw, paired ? NULL : b, F, 0.25, paired, Z,
                                 2 * F)) {
            printf("fused kernel: no vector instruction set, skipped\n");
            break;
        }
        double err = 0;
        for (size_t i = 0; i < n; i++) {
            for (size_t j = 0; j < F; j++) {
                double t = paired ? 0 : b[j];
                for (size_t k = 0; k < d; k++) t += X[i * d + k] * WT[k * ldw + j];
                err = fmax(err, fabs(Z[i * 2 * F + j] - 0.25 * cos(t)));
                if (paired) err = fmax(err, fabs(Z[i * 2 * F + F + j] - 0.25 * sin(t)));
            }
        }
        printf("fused kernel (paired %d): max error %.2e\n", paired, err);
        /* the argument itself differs from the plain sum by rounding of
         * |t| <= 1e6: allow 1e-9 there, machine precision elsewhere */
        CHECK(err < 1e-9);
    }
    free(X);
    free(WT);
    free(b);
    free(Z);
}

int main(void)
{
    struct {
        const char *isa;
        cos_fn c;
        sincos_fn sc;
        cosf_fn cf;
        sincosf_fn scf;
    } isas[] = {
        {"avx2", rfx__vcos_bias_avx2, rfx__vsincos_avx2, rfx__vcos_bias_f32_avx2,
         rfx__vsincos_f32_avx2},
        {"avx512", rfx__vcos_bias_avx512, rfx__vsincos_avx512, rfx__vcos_bias_f32_avx512,
         rfx__vsincos_f32_avx512},
        {"generic", rfx__vcos_bias, rfx__vsincos, rfx__vcos_bias_f32, rfx__vsincos_f32},
    };
    printf("dispatch: %s\n", rfx__vmath_isa());
    for (size_t i = 0; i < sizeof isas / sizeof *isas; i++) {
        if (!have(isas[i].isa) && strcmp(isas[i].isa, "generic") != 0) {
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
    check_fused();
    return rfx_test_finish("test_vmath");
}
