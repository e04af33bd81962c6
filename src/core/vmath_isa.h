/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-instruction-set kernels of vmath.c, compiled with their own flags. */
#ifndef RFX_VMATH_ISA_H
#define RFX_VMATH_ISA_H
#include <stddef.h>
#define RFX__VMATH_DECLARE(isa)                                                          \
    void rfx__vcos_bias_##isa(double *x, const double *b, double s, size_t n);           \
    void rfx__vsincos_##isa(const double *x, double *c, double *so, double s, size_t n); \
    void rfx__vcos_bias_f32_##isa(float *x, const float *b, float s, size_t n);          \
    void rfx__vsincos_f32_##isa(const float *x, float *c, float *so, float s, size_t n);     \
    void rfx__fused_features_##isa(const double *X, size_t ldx, size_t rows, size_t d,      \
                                   const double *WT, size_t ldw, const double *b, size_t F, \
                                   double s, int paired, double *Z, size_t ldz);            \
    void rfx__fused_features_f32_##isa(const float *X, size_t ldx, size_t rows, size_t d,       \
                                       const float *WT, size_t ldw, const float *b, size_t F,   \
                                       float s, int paired, float *Z, size_t ldz);
RFX__VMATH_DECLARE(generic)
RFX__VMATH_DECLARE(avx2)
RFX__VMATH_DECLARE(avx512)
#endif
