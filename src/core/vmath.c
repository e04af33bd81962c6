/* Vectorised cos / sincos and the fused transform, dispatched at run time
 * on the instruction-set path. */
#include "internal.h"
#include "vmath_isa.h"


/* The path in force (rfx_isa_active: the CPU's best, or what RFX_ISA or
 * rfx_isa_set asked for). */
enum { ISA_GENERIC = RFX_ISA_GENERIC, ISA_AVX2 = RFX_ISA_AVX2, ISA_AVX512 = RFX_ISA_AVX512 };

static int isa(void) { return (int)rfx_isa_active(); }

void rfx__vcos_bias(double *x, const double *b, double s, size_t n)
{
    switch (isa()) {
    case ISA_AVX512: rfx__vcos_bias_avx512(x, b, s, n); return;
    case ISA_AVX2: rfx__vcos_bias_avx2(x, b, s, n); return;
    default: rfx__vcos_bias_generic(x, b, s, n);
    }
}

void rfx__vsincos(const double *x, double *c, double *so, double s, size_t n)
{
    switch (isa()) {
    case ISA_AVX512: rfx__vsincos_avx512(x, c, so, s, n); return;
    case ISA_AVX2: rfx__vsincos_avx2(x, c, so, s, n); return;
    default: rfx__vsincos_generic(x, c, so, s, n);
    }
}

void rfx__vcos_bias_f32(float *x, const float *b, float s, size_t n)
{
    switch (isa()) {
    case ISA_AVX512: rfx__vcos_bias_f32_avx512(x, b, s, n); return;
    case ISA_AVX2: rfx__vcos_bias_f32_avx2(x, b, s, n); return;
    default: rfx__vcos_bias_f32_generic(x, b, s, n);
    }
}

void rfx__vsincos_f32(const float *x, float *c, float *so, float s, size_t n)
{
    switch (isa()) {
    case ISA_AVX512: rfx__vsincos_f32_avx512(x, c, so, s, n); return;
    case ISA_AVX2: rfx__vsincos_f32_avx2(x, c, so, s, n); return;
    default: rfx__vsincos_f32_generic(x, c, so, s, n);
    }
}

void rfx__fused_features(const double *X, size_t ldx, size_t rows, size_t d, const double *WT,
                        size_t ldw, const double *b, size_t F, double s, int paired, double *Z,
                        size_t ldz)
{
    switch (isa()) {
    case ISA_AVX512:
        rfx__fused_features_avx512(X, ldx, rows, d, WT, ldw, b, F, s, paired, Z, ldz);
        return;
    case ISA_AVX2:
        rfx__fused_features_avx2(X, ldx, rows, d, WT, ldw, b, F, s, paired, Z, ldz);
        return;
    default:
        rfx__fused_features_generic(X, ldx, rows, d, WT, ldw, b, F, s, paired, Z, ldz);
    }
}

void rfx__fused_features_f32(const float *X, size_t ldx, size_t rows, size_t d, const float *WT,
                            size_t ldw, const float *b, size_t F, float s, int paired, float *Z,
                            size_t ldz)
{
    switch (isa()) {
    case ISA_AVX512:
        rfx__fused_features_f32_avx512(X, ldx, rows, d, WT, ldw, b, F, s, paired, Z, ldz);
        return;
    case ISA_AVX2:
        rfx__fused_features_f32_avx2(X, ldx, rows, d, WT, ldw, b, F, s, paired, Z, ldz);
        return;
    default:
        rfx__fused_features_f32_generic(X, ldx, rows, d, WT, ldw, b, F, s, paired, Z, ldz);
    }
}
