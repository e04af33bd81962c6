/* SPDX-License-Identifier: BSD-3-Clause */
/* Vectorised cos / sincos and the fused transform, dispatched at run time
 * on the instruction-set path in force (rfx_isa_active: the CPU's best, or
 * what RFX_ISA or rfx_isa_set asked for). */
#include "internal.h"
#include "vmath_isa.h"

/* Call fn_avx512, fn_avx2 or fn_generic with the arguments that follow. */
#define DISPATCH(fn, ...)                                                    \
    do {                                                                     \
        switch (rfx_isa_active()) {                                          \
        case RFX_ISA_AVX512: fn##_avx512(__VA_ARGS__); return;               \
        case RFX_ISA_AVX2: fn##_avx2(__VA_ARGS__); return;                   \
        case RFX_ISA_GENERIC: break;                                         \
        }                                                                    \
        fn##_generic(__VA_ARGS__);                                           \
    } while (0)

void rfx__vcos_bias(double *x, const double *b, double s, size_t n)
{
    DISPATCH(rfx__vcos_bias, x, b, s, n);
}

void rfx__vsincos(const double *x, double *c, double *so, double s, size_t n)
{
    DISPATCH(rfx__vsincos, x, c, so, s, n);
}

void rfx__vcos_bias_f32(float *x, const float *b, float s, size_t n)
{
    DISPATCH(rfx__vcos_bias_f32, x, b, s, n);
}

void rfx__vsincos_f32(const float *x, float *c, float *so, float s, size_t n)
{
    DISPATCH(rfx__vsincos_f32, x, c, so, s, n);
}

void rfx__fused_features(const double *X, size_t ldx, size_t rows, size_t d, const double *WT,
                         size_t ldw, const double *b, size_t F, double s, int paired, double *Z,
                         size_t ldz)
{
    DISPATCH(rfx__fused_features, X, ldx, rows, d, WT, ldw, b, F, s, paired, Z, ldz);
}

void rfx__fused_features_f32(const float *X, size_t ldx, size_t rows, size_t d, const float *WT,
                             size_t ldw, const float *b, size_t F, float s, int paired, float *Z,
                             size_t ldz)
{
    DISPATCH(rfx__fused_features_f32, X, ldx, rows, d, WT, ldw, b, F, s, paired, Z, ldz);
}
