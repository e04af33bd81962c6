/* SPDX-License-Identifier: BSD-3-Clause */
/* sketch_internal.h - the layout of rfx_sketch (src/features/sketch.c),
 * shared with its test, which compares the FFT and direct convolutions of
 * Tensor Sketch on one map. The maps are described in include/rfx/sketch.h. */
#ifndef RFX_SKETCH_INTERNAL_H
#define RFX_SKETCH_INTERNAL_H

#include "internal.h"
#include "rfx/sketch.h"

struct rfx_sketch {
    rfx_sketch_params p;  /* sample_interval resolved                       */
    size_t d;             /* input columns                                  */
    size_t D;             /* output columns                                 */
    /* TENSOR: u = [sqrt(gamma) x, sqrt(coef0)] of dp entries               */
    size_t dp;
    size_t *hash;         /* degree x dp buckets h_t(j) in [0, D)           */
    double *sign;         /* degree x dp signs s_t(j)                       */
    int use_fft;          /* 1: D a power of two >= RFX__SKETCH_FFT_MIN     */
    double *twiddle;      /* D/2 pairs (cos, sin) of -2 pi k / D            */
    size_t *bitrev;       /* D: the bit-reversal permutation                */
    /* MACLAURIN: feature j multiplies order[j] dot products with the rows
       first[j] .. first[j] + order[j] - 1 of w (rows of d signs)          */
    int *order;           /* D                                              */
    size_t *first;        /* D                                              */
    double *w;            /* (sum of the orders kept) x d                   */
    double *coef;         /* D: sqrt(a_N p^(N+1) / D), 0 when a_N = 0       */
    /* SKEWED_CHI2                                                          */
    double *W;            /* D x d                                          */
    double *b;            /* D                                              */
};

/* The smallest D (a power of two) convolved by FFT. */
#define RFX__SKETCH_FFT_MIN 256

#endif
