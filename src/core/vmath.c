/* Vectorised cos / sincos with run-time dispatch on the instruction set. */
#include "internal.h"
#include "vmath_isa.h"

#include <math.h>

enum { ISA_GENERIC, ISA_AVX2, ISA_AVX512 };

static int isa(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    if (__builtin_cpu_supports("avx512f")) return ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return ISA_AVX2;
#endif
    return ISA_GENERIC;
}

const char *rfx__vmath_isa(void)
{
    switch (isa()) {
    case ISA_AVX512: return "avx512f";
    case ISA_AVX2: return "avx2";
    default: return "generic";
    }
}

void rfx__vcos_bias(double *x, const double *b, double s, size_t n)
{
    switch (isa()) {
    case ISA_AVX512: rfx__vcos_bias_avx512(x, b, s, n); return;
    case ISA_AVX2: rfx__vcos_bias_avx2(x, b, s, n); return;
    default:
        for (size_t i = 0; i < n; i++) x[i] = s * cos(x[i] + (b ? b[i] : 0.0));
    }
}

void rfx__vsincos(const double *x, double *c, double *so, double s, size_t n)
{
    switch (isa()) {
    case ISA_AVX512: rfx__vsincos_avx512(x, c, so, s, n); return;
    case ISA_AVX2: rfx__vsincos_avx2(x, c, so, s, n); return;
    default:
        for (size_t i = 0; i < n; i++) {
            double v = x[i];
            so[i] = s * sin(v);
            c[i] = s * cos(v);
        }
    }
}

void rfx__vcos_bias_f32(float *x, const float *b, float s, size_t n)
{
    switch (isa()) {
    case ISA_AVX512: rfx__vcos_bias_f32_avx512(x, b, s, n); return;
    case ISA_AVX2: rfx__vcos_bias_f32_avx2(x, b, s, n); return;
    default:
        for (size_t i = 0; i < n; i++) x[i] = s * cosf(x[i] + (b ? b[i] : 0.0f));
    }
}

void rfx__vsincos_f32(const float *x, float *c, float *so, float s, size_t n)
{
    switch (isa()) {
    case ISA_AVX512: rfx__vsincos_f32_avx512(x, c, so, s, n); return;
    case ISA_AVX2: rfx__vsincos_f32_avx2(x, c, so, s, n); return;
    default:
        for (size_t i = 0; i < n; i++) {
            float v = x[i];
            so[i] = s * sinf(v);
            c[i] = s * cosf(v);
        }
    }
}

int rfx__fused_features(const double *X, size_t ldx, size_t rows, size_t d, const double *WT,
                        size_t ldw, const double *b, size_t F, double s, int paired, double *Z,
                        size_t ldz)
{
    switch (isa()) {
    case ISA_AVX512:
        rfx__fused_features_avx512(X, ldx, rows, d, WT, ldw, b, F, s, paired, Z, ldz);
        return 1;
    case ISA_AVX2:
        rfx__fused_features_avx2(X, ldx, rows, d, WT, ldw, b, F, s, paired, Z, ldz);
        return 1;
    default:
        return 0;
    }
}
