/* AVX-512F kernels over SLEEF's 3.5-ulp cos / sincos (Shibata & Petrogalli,
 * "SLEEF: a portable vectorized library of C standard mathematical functions",
 * IEEE TPDS 2020). Tails are padded into one vector so that a value's result
 * never depends on its position. Cost: n cosines, one read and one write. */
#include "vmath_isa.h"

#include <immintrin.h>
#include <string.h>
#include <sleef.h>

#define VD 8
#define VF 16

void rfx__vcos_bias_avx512(double *x, const double *b, double s, size_t n)
{
    const __m512d vs = _mm512_set1_pd(s);
    size_t i = 0;
    for (; i + VD <= n; i += VD) {
        __m512d v = _mm512_loadu_pd(x + i);
        if (b) v = _mm512_add_pd(v, _mm512_loadu_pd(b + i));
        _mm512_storeu_pd(x + i, _mm512_mul_pd(vs, Sleef_cosd8_u35avx512f(v)));
    }
    if (i < n) {
        double t[VD] = {0}, u[VD] = {0};
        memcpy(t, x + i, (n - i) * sizeof *t);
        if (b) memcpy(u, b + i, (n - i) * sizeof *u);
        __m512d v = _mm512_add_pd(_mm512_loadu_pd(t), _mm512_loadu_pd(u));
        _mm512_storeu_pd(t, _mm512_mul_pd(vs, Sleef_cosd8_u35avx512f(v)));
        memcpy(x + i, t, (n - i) * sizeof *t);
    }
}

void rfx__vsincos_avx512(const double *x, double *c, double *so, double s, size_t n)
{
    const __m512d vs = _mm512_set1_pd(s);
    size_t i = 0;
    for (; i + VD <= n; i += VD) {
        Sleef___m512d_2 r = Sleef_sincosd8_u35avx512f(_mm512_loadu_pd(x + i));
        _mm512_storeu_pd(so + i, _mm512_mul_pd(vs, r.x));
        _mm512_storeu_pd(c + i, _mm512_mul_pd(vs, r.y));
    }
    if (i < n) {
        double t[VD] = {0}, tc[VD], ts[VD];
        memcpy(t, x + i, (n - i) * sizeof *t);
        Sleef___m512d_2 r = Sleef_sincosd8_u35avx512f(_mm512_loadu_pd(t));
        _mm512_storeu_pd(ts, _mm512_mul_pd(vs, r.x));
        _mm512_storeu_pd(tc, _mm512_mul_pd(vs, r.y));
        memcpy(so + i, ts, (n - i) * sizeof *ts);
        memcpy(c + i, tc, (n - i) * sizeof *tc);
    }
}

void rfx__vcos_bias_f32_avx512(float *x, const float *b, float s, size_t n)
{
    const __m512 vs = _mm512_set1_ps(s);
    size_t i = 0;
    for (; i + VF <= n; i += VF) {
        __m512 v = _mm512_loadu_ps(x + i);
        if (b) v = _mm512_add_ps(v, _mm512_loadu_ps(b + i));
        _mm512_storeu_ps(x + i, _mm512_mul_ps(vs, Sleef_cosf16_u35avx512f(v)));
    }
    if (i < n) {
        float t[VF] = {0}, u[VF] = {0};
        memcpy(t, x + i, (n - i) * sizeof *t);
        if (b) memcpy(u, b + i, (n - i) * sizeof *u);
        __m512 v = _mm512_add_ps(_mm512_loadu_ps(t), _mm512_loadu_ps(u));
        _mm512_storeu_ps(t, _mm512_mul_ps(vs, Sleef_cosf16_u35avx512f(v)));
        memcpy(x + i, t, (n - i) * sizeof *t);
    }
}

void rfx__vsincos_f32_avx512(const float *x, float *c, float *so, float s, size_t n)
{
    const __m512 vs = _mm512_set1_ps(s);
    size_t i = 0;
    for (; i + VF <= n; i += VF) {
        Sleef___m512_2 r = Sleef_sincosf16_u35avx512f(_mm512_loadu_ps(x + i));
        _mm512_storeu_ps(so + i, _mm512_mul_ps(vs, r.x));
        _mm512_storeu_ps(c + i, _mm512_mul_ps(vs, r.y));
    }
    if (i < n) {
        float t[VF] = {0}, tc[VF], ts[VF];
        memcpy(t, x + i, (n - i) * sizeof *t);
        Sleef___m512_2 r = Sleef_sincosf16_u35avx512f(_mm512_loadu_ps(t));
        _mm512_storeu_ps(ts, _mm512_mul_ps(vs, r.x));
        _mm512_storeu_ps(tc, _mm512_mul_ps(vs, r.y));
        memcpy(so + i, ts, (n - i) * sizeof *ts);
        memcpy(c + i, tc, (n - i) * sizeof *tc);
    }
}
