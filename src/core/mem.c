/* SPDX-License-Identifier: BSD-3-Clause */
/* Checked size arithmetic, aligned allocation, view validation, threads. */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* madvise(MADV_HUGEPAGE), a Linux extension */
#endif
#include "internal.h"

#include <math.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

rfx_status rfx__mul(size_t a, size_t b, size_t *out, const char *what)
{
    if (a != 0 && b > SIZE_MAX / a)
        return rfx__error(RFX_EOVERFLOW, "%s: %zu x %zu overflows size_t", what, a, b);
    *out = a * b;
    return RFX_OK;
}

rfx_status rfx__mul3(size_t a, size_t b, size_t c, size_t *out, const char *what)
{
    size_t ab = 0;
    RFX__TRY(rfx__mul(a, b, &ab, what));
    if (ab != 0 && c > SIZE_MAX / ab)
        return rfx__error(RFX_EOVERFLOW, "%s: %zu x %zu x %zu overflows size_t", what, a, b, c);
    *out = ab * c;
    return RFX_OK;
}

rfx_status rfx__add(size_t a, size_t b, size_t *out, const char *what)
{
    if (b > SIZE_MAX - a)
        return rfx__error(RFX_EOVERFLOW, "%s: %zu + %zu overflows size_t", what, a, b);
    *out = a + b;
    return RFX_OK;
}

rfx_status rfx__alloc(size_t n, size_t size, void **out, const char *what)
{
    size_t bytes = 0;
    void *p = NULL;
    RFX__TRY(rfx__mul(n, size, &bytes, what));
    if (bytes == 0) bytes = 64;
    /* round up to the alignment, as aligned_alloc requires */
    if (bytes > SIZE_MAX - 63)
        return rfx__error(RFX_EOVERFLOW, "%s: %zu bytes overflows size_t", what, bytes);
    bytes = (bytes + 63) & ~(size_t)63;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    /* A buffer of 4 MiB or more (feature blocks, n x D matrices, D x D
     * statistics, LAPACK workspaces) is placed on 2 MiB boundaries and
     * advised for transparent huge pages: its first touch then faults once
     * per 2 MiB rather than per 4 KiB, which on some kernels costs more
     * than filling the buffer (a fresh 6 MiB buffer: 19 ms against 0.6 ms
     * on one such kernel). At most half more address space; the advice is
     * only a hint. */
    const size_t huge = (size_t)2 << 20;
    if (bytes >= 2 * huge && bytes <= SIZE_MAX - huge) {
        size_t rounded = (bytes + huge - 1) & ~(huge - 1);
        p = aligned_alloc(huge, rounded);
        if (p) {
            (void)madvise(p, rounded, MADV_HUGEPAGE);
            *out = p;
            return RFX_OK;
        }
    }
#endif
    p = aligned_alloc(64, bytes);
    if (!p) return rfx__error(RFX_ENOMEM, "%s: cannot allocate %zu bytes", what, bytes);
    *out = p;
    return RFX_OK;
}

rfx_status rfx__calloc(size_t n, size_t size, void **out, const char *what)
{
    void *p = NULL;
    RFX__TRY(rfx__alloc(n, size, &p, what));
    memset(p, 0, n * size);
    *out = p;
    return RFX_OK;
}

rfx_status rfx__check_cmat(rfx_cmat m, const char *what)
{
    if (m.stride < m.cols)
        return rfx__error(RFX_EINVAL, "%s: stride %zu is smaller than the %zu columns", what,
                          m.stride, m.cols);
    if (!m.data && m.rows > 0 && m.cols > 0)
        return rfx__error(RFX_EINVAL, "%s: data is NULL for a %zu x %zu matrix", what, m.rows,
                          m.cols);
    if (m.rows > 0) {
        size_t span = 0;
        RFX__TRY(rfx__mul(m.rows - 1, m.stride, &span, what));
        RFX__TRY(rfx__add(span, m.cols, &span, what));
    }
    return RFX_OK;
}

rfx_status rfx__check_mat(rfx_mat m, const char *what)
{
    return rfx__check_cmat(rfx_cmat_from(m), what);
}

int rfx__all_finite(rfx_cmat m, size_t *row, size_t *col)
{
    for (size_t i = 0; i < m.rows; i++) {
        const double *r = m.data + i * m.stride;
        for (size_t j = 0; j < m.cols; j++) {
            if (!isfinite(r[j])) {
                *row = i;
                *col = j;
                return 0;
            }
        }
    }
    return 1;
}

int rfx__threads(int requested)
{
#ifdef _OPENMP
    if (requested > 0) return requested;
    return omp_get_max_threads();
#else
    (void)requested;
    return 1;
#endif
}

rfx_status rfx__lapack_int(size_t n, int *out, const char *what)
{
    if (n > (size_t)2147483647)
        return rfx__error(RFX_EOVERFLOW, "%s: %zu exceeds the LAPACK integer range", what, n);
    *out = (int)n;
    return RFX_OK;
}

void rfx_buffer_free(void *buf) { free(buf); }

/* Rows per chunk when featurising into a workspace: 2^23 / D rows (64 MiB
 * of doubles), within [64, 4096]; a function of D alone, so chunking never
 * depends on the thread count. */
size_t rfx__chunk_rows(size_t D)
{
    size_t r = ((size_t)1 << 23) / (D ? D : 1);
    if (r < 64) r = 64;
    if (r > 4096) r = 4096;
    return r;
}
