/* AVX2 + FMA kernels over SLEEF's 3.5-ulp cos / sincos (Shibata & Petrogalli,
 * "SLEEF: a portable vectorized library of C standard mathematical functions",
 * IEEE TPDS 2020). Tails are padded into one vector so that a value's result
 * never depends on its position. Cost: n cosines, one read and one write. */
#include "vmath_isa.h"

#include <immintrin.h>
#include <string.h>
#include <sleef.h>

#define VD 4
#define VF 8

void rfx__vcos_bias_avx2(double *x, const double *b, double s, size_t n)
{
    const __m256d vs = _mm256_set1_pd(s);
    size_t i = 0;
    for (; i + VD <= n; i += VD) {
        __m256d v = _mm256_loadu_pd(x + i);
        if (b) v = _mm256_add_pd(v, _mm256_loadu_pd(b + i));
        _mm256_storeu_pd(x + i, _mm256_mul_pd(vs, Sleef_cosd4_u35avx2(v)));
    }
    if (i < n) {
        double t[VD] = {0}, u[VD] = {0};
        memcpy(t, x + i, (n - i) * sizeof *t);
        if (b) memcpy(u, b + i, (n - i) * sizeof *u);
        __m256d v = _mm256_add_pd(_mm256_loadu_pd(t), _mm256_loadu_pd(u));
        _mm256_storeu_pd(t, _mm256_mul_pd(vs, Sleef_cosd4_u35avx2(v)));
        memcpy(x + i, t, (n - i) * sizeof *t);
    }
}

void rfx__vsincos_avx2(const double *x, double *c, double *so, double s, size_t n)
{
    const __m256d vs = _mm256_set1_pd(s);
    size_t i = 0;
    for (; i + VD <= n; i += VD) {
        Sleef___m256d_2 r = Sleef_sincosd4_u35avx2(_mm256_loadu_pd(x + i));
        _mm256_storeu_pd(so + i, _mm256_mul_pd(vs, r.x));
        _mm256_storeu_pd(c + i, _mm256_mul_pd(vs, r.y));
    }
    if (i < n) {
        double t[VD] = {0}, tc[VD], ts[VD];
        memcpy(t, x + i, (n - i) * sizeof *t);
        Sleef___m256d_2 r = Sleef_sincosd4_u35avx2(_mm256_loadu_pd(t));
        _mm256_storeu_pd(ts, _mm256_mul_pd(vs, r.x));
        _mm256_storeu_pd(tc, _mm256_mul_pd(vs, r.y));
        memcpy(so + i, ts, (n - i) * sizeof *ts);
        memcpy(c + i, tc, (n - i) * sizeof *tc);
    }
}

void rfx__vcos_bias_f32_avx2(float *x, const float *b, float s, size_t n)
{
    const __m256 vs = _mm256_set1_ps(s);
    size_t i = 0;
    for (; i + VF <= n; i += VF) {
        __m256 v = _mm256_loadu_ps(x + i);
        if (b) v = _mm256_add_ps(v, _mm256_loadu_ps(b + i));
        _mm256_storeu_ps(x + i, _mm256_mul_ps(vs, Sleef_cosf8_u35avx2(v)));
    }
    if (i < n) {
        float t[VF] = {0}, u[VF] = {0};
        memcpy(t, x + i, (n - i) * sizeof *t);
        if (b) memcpy(u, b + i, (n - i) * sizeof *u);
        __m256 v = _mm256_add_ps(_mm256_loadu_ps(t), _mm256_loadu_ps(u));
        _mm256_storeu_ps(t, _mm256_mul_ps(vs, Sleef_cosf8_u35avx2(v)));
        memcpy(x + i, t, (n - i) * sizeof *t);
    }
}

void rfx__vsincos_f32_avx2(const float *x, float *c, float *so, float s, size_t n)
{
    const __m256 vs = _mm256_set1_ps(s);
    size_t i = 0;
    for (; i + VF <= n; i += VF) {
        Sleef___m256_2 r = Sleef_sincosf8_u35avx2(_mm256_loadu_ps(x + i));
        _mm256_storeu_ps(so + i, _mm256_mul_ps(vs, r.x));
        _mm256_storeu_ps(c + i, _mm256_mul_ps(vs, r.y));
    }
    if (i < n) {
        float t[VF] = {0}, tc[VF], ts[VF];
        memcpy(t, x + i, (n - i) * sizeof *t);
        Sleef___m256_2 r = Sleef_sincosf8_u35avx2(_mm256_loadu_ps(t));
        _mm256_storeu_ps(ts, _mm256_mul_ps(vs, r.x));
        _mm256_storeu_ps(tc, _mm256_mul_ps(vs, r.y));
        memcpy(so + i, ts, (n - i) * sizeof *ts);
        memcpy(c + i, tc, (n - i) * sizeof *tc);
    }
}
